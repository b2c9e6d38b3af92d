// Helper kernels of spmv_bench: the device copy and read bandwidth it compares every format
// against, and the read pass that evicts L2 between timed products. PETSc-free.
#include "bench_kernels.hpp"

#include <cstdint>

namespace
{

__global__ void copy_kernel(const double2 *__restrict__ src, double2 *__restrict__ dst, size_t n)
{
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = src[i];
}

// Reads every element once; the sum is written only when it equals a value it never takes for
// the data the caller passes (finite values), so the loads cannot be optimised away.
__global__ void read_kernel(const double2 *__restrict__ src, size_t n, double *sink)
{
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  double       s      = 0.0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double2 v = src[i];
    s += v.x + v.y;
  }
  if (s == -1.2345e300) *sink = s;
}

int grid_for(size_t n, int threads)
{
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  if (sms <= 0) sms = 132;
  const size_t want = (n + threads - 1) / threads;
  const size_t cap  = size_t(sms) * 16;
  return int(want < cap ? (want ? want : 1) : cap);
}

} // namespace

__global__ void empty_kernel() { }

cudaError_t bench_empty(cudaStream_t stream)
{
  empty_kernel<<<1, 32, 0, stream>>>();
  return cudaGetLastError();
}

cudaError_t bench_copy(const void *src, void *dst, size_t bytes, cudaStream_t stream)
{
  const size_t n = bytes / sizeof(double2);
  copy_kernel<<<grid_for(n, 256), 256, 0, stream>>>(static_cast<const double2 *>(src), static_cast<double2 *>(dst), n);
  return cudaGetLastError();
}

cudaError_t bench_read(const void *src, size_t bytes, double *sink, cudaStream_t stream)
{
  const size_t n = bytes / sizeof(double2);
  read_kernel<<<grid_for(n, 256), 256, 0, stream>>>(static_cast<const double2 *>(src), n, sink);
  return cudaGetLastError();
}
