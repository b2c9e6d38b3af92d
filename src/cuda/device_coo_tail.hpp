// The COO tail of the hybrid split on the device (PETSc-free): the arrays the tail kernels read
// (src/cuda/coo_tail.cuh) and that every format's device copy holds.
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

namespace pspmv
{
namespace cuda
{

// COO tail on the device, sorted by row (CSR order).
struct DeviceCooTail {
  int64_t  nnz = 0;
  int32_t *row = nullptr;
  int32_t *col = nullptr;
  double  *val = nullptr;
  // CSR position of each entry (device builds only, null after a host upload): value updates
  // on the device gather the new values through it.
  int32_t *source = nullptr;
  // Two counters of the fused launch (src/cuda/coo_tail.cuh), zero between products.
  unsigned int *sync = nullptr;
  // Entries per warp of the tail's own kernel (a multiple of 32; 0 without a tail): planned
  // once, when the tail is uploaded or built (plan_separate_tail), from nnz and the device's
  // multiprocessors, so a product makes no device query.
  int64_t chunk = 0;
  // true: a small tail runs as extra blocks of the regular kernel (kernel_bench's comparison
  // variant, and the tests). Off by default: the tail's own kernel, launched as a programmatic
  // dependent of the regular one, is faster on every fused layout of the shared matrices
  // (docs/kernels.md).
  bool allow_fused = false;
};

} // namespace cuda
} // namespace pspmv
