// What the device builders of the mixed solvers' copies share (PETSc-free): the format layer's
// errors in their channels, the first offending entry of a scaled CSR, a CUB min-reduction.
#pragma once
#include "core/build_error.hpp"
#include "cuda/device_build.cuh"
#include "scaling.hpp"
#include <cub/device/device_reduce.cuh>

namespace pspmv
{
namespace mixed
{
namespace cuda
{
namespace checks
{

// A BuildError of the format layer in the channels of the copies' device builders: a Device error
// returned as its CUDA error, the others thrown as the host's exceptions.
inline cudaError_t code_or_raise(const BuildError &e)
{
  if (e.kind == BuildError::Kind::Device) return static_cast<cudaError_t>(e.device_code);
  e.raise();
  return cudaSuccess;
}

// k when entry k is not finite or its scaled value v[k] does not fit double (scaled_values'
// tests), INT64_MAX otherwise.
struct BadEntryPosition {
  const double               *values, *v;
  __host__ __device__ int64_t operator()(int64_t k) const
  {
    const double a = values[k];
    return (finite_value(a) && scaled_value_fits(a, v[k])) ? INT64_MAX : k;
  }
};

// *out = the smallest of in[0..n) (init for n == 0).
template <class It, class T>
cudaError_t min_of(It in, int64_t n, T init, T *out, cudaStream_t st)
{
  *out = init;
  if (n <= 0) return cudaSuccess;
  pspmv::cuda::detail::Scratch<T> o(1, st);
  PSPMV_CUDA_TRY(o.status());
  PSPMV_CUDA_TRY(pspmv::cuda::detail::cub_run(st, [&](void *t, size_t &b) { return cub::DeviceReduce::Reduce(t, b, in, o.get(), n, pspmv::cuda::detail::MinOp{}, init, st); }));
  return pspmv::cuda::detail::fetch(o.get(), out, st);
}

} // namespace checks
} // namespace cuda
} // namespace mixed
} // namespace pspmv
