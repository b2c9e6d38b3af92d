// The COO tail of the hybrid split on the device (PETSc-free): the arrays the tail kernels read
// (src/cuda/coo_tail.cuh) and that every format's device copy holds.
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

namespace pspmv {
namespace cuda {

// COO tail on the device, sorted by row (CSR order).
struct DeviceCooTail {
  int64_t nnz = 0;
  int32_t *row = nullptr;
  int32_t *col = nullptr;
  double *val = nullptr;
  // Two counters of the fused launch (src/cuda/coo_tail.cuh), zero between products.
  unsigned int *sync = nullptr;
  // true: a small tail runs as extra blocks of the regular kernel (kernel_bench's comparison
  // variant, and the tests). Off by default: the tail's own kernel, launched as a programmatic
  // dependent of the regular one, was faster on all 51 fused layouts of the shared matrices
  // (0.68-0.92x the fused time; H200, docs/benchmarks.md run 10).
  bool allow_fused = false;
};

} // namespace cuda
} // namespace pspmv
