// RgCSR on the device (PETSc-free; host-callable API, implemented in rgcsr_device.cu).
// Every function returns the first CUDA error it met (cudaSuccess otherwise); the PETSc glue
// wraps calls in PetscCallCUDA. Arrays are allocated at their exact size (no over-allocation,
// so memcheck sees overruns).
#pragma once
#include "cuda/device_coo_tail.hpp"
#include "cuda/device_layout_of.hpp"
#include "formats/rgcsr/rgcsr.hpp"
#include <cuda_runtime.h>
#include <cstdint>

namespace pspmv
{
namespace cuda
{

struct DeviceRgCsr {
  int32_t rows = 0, cols = 0, group_size = 32, num_groups = 0;
  int64_t num_slots = 0;
  // T threads per row of the kernel (1, 2, 4 or 8): set by upload (threads_per_row with the
  // device's resident threads); may be overwritten before spmv (tests force each T).
  int32_t       threads_per_row = 1;
  int32_t       hybrid_width    = 0;       // K of the layout
  int64_t       nnz             = 0;       // nonzeros of the CSR it was built from (regular + tail)
  int64_t      *group_pointers  = nullptr; // num_groups+1
  int32_t      *row_length      = nullptr; // rows
  int32_t      *columns         = nullptr; // num_slots
  double       *values          = nullptr; // num_slots
  double       *diagonal        = nullptr; // min(rows, cols): filled at upload (MatGetDiagonal)
  DeviceCooTail tail;
};

// Allocates and copies the whole layout (frees what *d held first).
cudaError_t upload(const RgCsrMatrix &h, DeviceRgCsr *d);
// Same layout, new values: copies values, tail values and the diagonal only.
cudaError_t upload_values(const RgCsrMatrix &h, DeviceRgCsr *d);
// Frees every device array and resets *d to empty.
cudaError_t release(DeviceRgCsr *d);
// y = A x (add == false) or y = y + A x (add == true); x has cols entries, y rows entries,
// both device pointers; runs on stream. Accumulation in FP64. Regular part, then the COO tail
// (load-balanced: equal nonzeros per warp, segmented reduction, atomics at segment ends).
cudaError_t spmv(const DeviceRgCsr &A, const double *x, double *y, bool add, cudaStream_t stream);
// Bytes a product reads from the matrix arrays (for GB/s figures).
int64_t stored_bytes(const DeviceRgCsr &A);
// Bytes upload() copied from the host into A (every array, the diagonal included) and bytes
// upload_values() copies into it: what the glue logs as host-to-device traffic (-log_view).
int64_t upload_bytes(const DeviceRgCsr &A);
int64_t value_upload_bytes(const DeviceRgCsr &A);
// Bytes of device memory A holds: every array, the diagonal and the device builds' tail sources
// included (stored_bytes() counts only what a product reads).
int64_t device_bytes(const DeviceRgCsr &A);

template <>
struct DeviceLayoutOf<RgCsrMatrix> {
  using type = DeviceRgCsr;
};

} // namespace cuda
} // namespace pspmv
