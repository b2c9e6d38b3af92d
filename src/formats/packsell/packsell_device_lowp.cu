// PackSELL products with FP32 and FP16 vectors on the device (PETSc-free): spmv_f32 and
// spmv_f16 of packsell_device_lowp.hpp.
//
// One kernel launch per product, one thread per sorted row (DevicePackSell::threads_per_row
// is not used: the inner operators of PCMIXEDKRYLOV are large). The row's thread computes the
// regular part in FP32 and adds its COO tail entries (a long tail with its warp's help:
// packsell_lowp_rows.cuh), so y is written once per row, FP16 y is rounded once, and no atomics
// are needed: the result is the same on every run. Template on the value kind: no format branch
// in the inner loop.
#include "packsell_device_lowp.hpp"
#include "packsell_lowp_rows.cuh"
#include "cuda/device_memory.cuh"

namespace pspmv
{
namespace cuda
{

namespace
{

__device__ __forceinline__ void store_y(float *y, float v)
{
  *y = v;
}
__device__ __forceinline__ void store_y(__half *y, float v)
{
  *y = __float2half_rn(v);
}

// y[perm[sr]] = row sr of A x for the sorted rows sr of this block.
template <ValueKind K, bool Gapped, class X>
__global__ void __launch_bounds__(detail::kLowpThreads) lowp_spmv_kernel(detail::LowpArgs a, const X *__restrict__ x, X *__restrict__ y)
{
  const int64_t t = static_cast<int64_t>(blockIdx.x) * detail::kLowpThreads + threadIdx.x;
  if (t - (threadIdx.x & 31u) >= a.rows) return; // whole warps only: a long tail takes the warp
  int32_t     r;
  const float v = detail::lowp_row<K, Gapped>(a, x, t, t < a.rows, &r);
  if (t < a.rows) store_y(y + r, v);
}

template <class X>
cudaError_t lowp_spmv(const DevicePackSell &A, const X *x, X *y, cudaStream_t stream)
{
  if (A.rows <= 0) return cudaSuccess;
  detail::LowpArgs a;
  if (!detail::lowp_args(A, &a)) return cudaErrorInvalidValue;
  const unsigned int blocks = detail::blocks_for(A.rows, detail::kLowpThreads);
  detail::with_decode(A.value_format.kind, a.gaps != nullptr, [&](auto kind, auto gapped) { lowp_spmv_kernel<decltype(kind)::value, decltype(gapped)::value, X><<<blocks, detail::kLowpThreads, 0, stream>>>(a, x, y); });
  return cudaGetLastError();
}

} // namespace

cudaError_t spmv_f32(const DevicePackSell &A, const float *x, float *y, cudaStream_t stream)
{
  return lowp_spmv(A, x, y, stream);
}

cudaError_t spmv_f16(const DevicePackSell &A, const __half *x, __half *y, cudaStream_t stream)
{
  return lowp_spmv(A, x, y, stream);
}

} // namespace cuda
} // namespace pspmv
