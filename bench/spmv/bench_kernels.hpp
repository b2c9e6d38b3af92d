// Helper kernels of spmv_bench (bench_kernels.cu). Buffers are device pointers aligned to 16
// bytes; bytes is rounded down to a multiple of 16.
#pragma once
#include <cstddef>
#include <cuda_runtime.h>

// dst = src (a read and a write of `bytes` each).
cudaError_t bench_copy(const void *src, void *dst, size_t bytes, cudaStream_t stream);
// Reads `bytes` of finite doubles from src (evicts L2 with clean lines; measures read bandwidth).
cudaError_t bench_read(const void *src, size_t bytes, double *sink, cudaStream_t stream);
// One empty kernel (one block of 32 threads): the launch floor of a product between events.
cudaError_t bench_empty(cudaStream_t stream);
