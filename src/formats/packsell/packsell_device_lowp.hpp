// PackSELL products with reduced-precision vectors on the device (PETSc-free; implemented in
// packsell_device_lowp.cu), for the inner solvers of PCMIXEDKRYLOV: the same layout and
// uploaded arrays as DevicePackSell (packsell_device.hpp), values decoded to FP32 (Exact: the
// FP64 value rounded to FP32), accumulated in FP32 in word order, times 2^-scale_exponent once
// (a power of two), written to y[perm[row]]; then the COO tail (values rounded to FP32)
// added deterministically (no atomics: the same result every run). x has cols entries, y rows,
// device pointers; runs on stream.
#pragma once
#include "packsell_device.hpp"
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace pspmv
{
namespace cuda
{

// y = A x, FP32 vectors.
cudaError_t spmv_f32(const DevicePackSell &A, const float *x, float *y, cudaStream_t stream);
// y = A x, FP16 vectors (FP32 accumulation, y rounded to FP16 once): F3R's innermost level.
cudaError_t spmv_f16(const DevicePackSell &A, const __half *x, __half *y, cudaStream_t stream);

} // namespace cuda
} // namespace pspmv
