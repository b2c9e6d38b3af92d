// PackSELL on the device (PETSc-free; host-callable API, implemented in packsell_device.cu).
// Every function returns the first CUDA error it met (cudaSuccess otherwise); the PETSc glue
// wraps calls in PetscCallCUDA. Arrays are allocated at their exact size (no over-allocation,
// so memcheck sees overruns).
#pragma once
#include "cuda/device_coo_tail.hpp"
#include "cuda/device_layout_of.hpp"
#include "formats/packsell/packsell.hpp"
#include <cuda_runtime.h>
#include <cstdint>

namespace pspmv
{
namespace cuda
{

struct DevicePackSell {
  int32_t     rows = 0, cols = 0, slice_height = 32, num_slices = 0;
  int32_t     delta_bits = 30; // D (30: Exact, the default value_format)
  ValueFormat value_format;
  double      inv_scale = 1.0; // 2^-scale_exponent, applied to each row sum
  // T threads per row of the kernel (1, 2, 4 or 8): set by upload (threads_per_row);
  // may be overwritten before spmv (tests force each T).
  int32_t         threads_per_row = 1;
  int32_t         scale_exponent  = 0;                       // inv_scale = 2^-scale_exponent
  PackSellScaling scaling         = PackSellScaling::None;   // as asked at build time (value updates)
  std::string     scaling_option  = "-mat_packsell_scaling"; // PackSellOptions::scaling_option of the build
  int32_t         hybrid_width    = 0;                       // K of the layout, in nonzeros
  int64_t         nnz             = 0;                       // nonzeros of the CSR it was built from (regular + tail)
  int64_t         num_words       = 0;
  int64_t        *slice_pointers  = nullptr; // num_slices+1
  int32_t        *perm            = nullptr; // rows
  uint32_t       *words           = nullptr; // num_words
  double         *exact_values    = nullptr; // num_words in Exact mode, else null
  uint32_t       *gaps            = nullptr; // column gaps (packsell_layout.hpp): num_words / slice_height, or null: none
  double         *diagonal        = nullptr; // min(rows, cols), decoded values
  // CSR position of the nonzero each word holds, -1 for dummies and padding (device builds
  // only, null after a host upload): value updates on the device gather through it.
  int32_t      *word_source = nullptr; // num_words
  DeviceCooTail tail;
};

// Allocates and copies the whole layout (frees what *d held first).
cudaError_t upload(const PackSellMatrix &h, DevicePackSell *d);
// Same layout, new values: copies values, tail values and the diagonal only.
cudaError_t upload_values(const PackSellMatrix &h, DevicePackSell *d);
// Frees every device array and resets *d to empty.
cudaError_t release(DevicePackSell *d);
// y = A x (add == false) or y = y + A x (add == true); x has cols entries, y rows entries,
// both device pointers; runs on stream. Accumulation in FP64. Regular part, then the COO tail
// (load-balanced: equal nonzeros per warp, segmented reduction, atomics at segment ends).
cudaError_t spmv(const DevicePackSell &A, const double *x, double *y, bool add, cudaStream_t stream);
// Bytes a product reads from the matrix arrays (for GB/s figures).
int64_t stored_bytes(const DevicePackSell &A);
// Bytes upload() copied from the host into A (every array, the diagonal included) and bytes
// upload_values() copies into it: what the glue logs as host-to-device traffic (-log_view).
int64_t upload_bytes(const DevicePackSell &A);
int64_t value_upload_bytes(const DevicePackSell &A);
// Bytes of device memory A holds: every array, the diagonal and the device builds' word_source
// and tail sources included (stored_bytes() counts only what a product reads).
int64_t device_bytes(const DevicePackSell &A);

template <>
struct DeviceLayoutOf<PackSellMatrix> {
  using type = DevicePackSell;
};

} // namespace cuda
} // namespace pspmv
