// The scaled copy built and value-updated on the device (scaled_copy_device.hpp): the steps of
// scaled_copy.cpp on a device CSR, then the device PackSELL builder. The errors are the host's
// (scaled_copy.hpp's detail:: constructors), located by CUB min-reductions.
#include "cuda/device_build.cuh"
#include "device_checks.cuh"
#include "formats/packsell/packsell_device_build.hpp"
#include "scaled_copy_device.hpp"
#include "scaling.hpp"
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <climits>

namespace pspmv
{
namespace mixed
{
namespace cuda
{

namespace
{

using pspmv::cuda::DeviceCsr;
namespace pd = pspmv::cuda::detail;
using pd::kBuildThreads;
using pd::Scratch;
using checks::BadEntryPosition;
using checks::code_or_raise;
using checks::min_of;

// r when row r has no diagonal entry or one that is not positive and finite
// (inverse_sqrt_diagonal's test), INT32_MAX otherwise.
struct BadDiagonalRow {
  DeviceCsr          A;
  __device__ int32_t operator()(int32_t r) const
  {
    const int32_t k = pd::diagonal_position(A, r);
    if (k < 0) return r;
    const double d = A.values[k];
    return (!(d > 0.0) || !isfinite(d)) ? r : INT32_MAX;
  }
};

// s[r] = 1 / sqrt(a_rr) for every row (after BadDiagonalRow found every a_rr present).
__global__ void inverse_sqrt_kernel(DeviceCsr A, double *__restrict__ s)
{
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < A.rows) s[r] = 1.0 / sqrt(A.values[pd::diagonal_position(A, static_cast<int32_t>(r))]);
}

// v[k] = scaled_value(a_ij, s_i, s_j), one warp per row (scaled_values).
__global__ void scaled_values_kernel(DeviceCsr A, const double *__restrict__ s, double *__restrict__ v)
{
  const int64_t r    = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int     lane = threadIdx.x % 32;
  if (r >= A.rows) return;
  const double sr = s[r];
  for (int64_t k = int64_t(A.rowptr[r]) + lane; k < A.rowptr[r + 1]; k += 32) v[k] = scaled_value(A.values[k], sr, s[A.colidx[k]]);
}

// v[k] = dithered_value(v[k], row0 + r, row0 + c) (build_scaled_copy's dither), one warp per row.
__global__ void dither_kernel(DeviceCsr A, int64_t row0, int m, int emin, double *__restrict__ v)
{
  const int64_t r    = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int     lane = threadIdx.x % 32;
  if (r >= A.rows) return;
  for (int64_t k = int64_t(A.rowptr[r]) + lane; k < A.rowptr[r + 1]; k += 32) v[k] = dithered_value(v[k], row0 + r, row0 + A.colidx[k], m, emin);
}

// check_square of scaled_copy.cpp.
cudaError_t check_square(const DeviceCsr &A, cudaStream_t st)
{
  PSPMV_CUDA_TRY(code_or_raise(pd::check_csr_on_device(A, st)));
  if (A.rows != A.cols) throw detail::not_square_error(A.rows, A.cols);
  return cudaSuccess;
}

// s[r] = 1 / sqrt(a_rr) (inverse_sqrt_diagonal); throws DiagonalError for the first offending row.
cudaError_t inverse_sqrt_diagonal(const DeviceCsr &A, double *s, cudaStream_t st)
{
  const int32_t n = A.rows;
  if (n == 0) return cudaSuccess;
  int32_t bad  = INT32_MAX;
  auto    rows = thrust::make_transform_iterator(thrust::make_counting_iterator<int32_t>(0), BadDiagonalRow{A});
  PSPMV_CUDA_TRY(min_of(rows, n, int32_t(INT32_MAX), &bad, st));
  if (bad != INT32_MAX) {
    int32_t k = -1;
    double  d = 0.0;
    PSPMV_CUDA_TRY(pd::fetch_diagonal_position(A, bad, &k, st));
    if (k >= 0) PSPMV_CUDA_TRY(pd::fetch(A.values + k, &d, st));
    throw detail::diagonal_error(bad, k >= 0, d);
  }
  inverse_sqrt_kernel<<<pd::grid_for(n), kBuildThreads, 0, st>>>(A, s);
  return cudaGetLastError();
}

// The scaled values of A into *v (scaled_values); throws ValueRangeError for the first entry
// in CSR order that is not finite or whose scaled value does not fit double (the host's tests,
// in the host's order: the first offending entry, whichever its kind).
cudaError_t scaled_values(const DeviceCsr &A, const double *s, Scratch<double> *v, cudaStream_t st)
{
  PSPMV_CUDA_TRY(v->allocate(size_t(A.nnz), st));
  if (A.rows > 0) {
    scaled_values_kernel<<<pd::warp_grid_for(A.rows), kBuildThreads, 0, st>>>(A, s, v->get());
    PSPMV_CUDA_TRY(cudaGetLastError());
  }
  int64_t bad       = INT64_MAX;
  auto    positions = thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0), BadEntryPosition{A.values, v->get()});
  PSPMV_CUDA_TRY(min_of(positions, A.nnz, int64_t(INT64_MAX), &bad, st));
  if (bad != INT64_MAX) {
    int32_t row = 0, col = 0;
    double  a = 0.0, vk = 0.0, si = 0.0, sj = 0.0;
    PSPMV_CUDA_TRY(pd::row_of_position(A, bad, &row, st));
    PSPMV_CUDA_TRY(pd::fetch(A.colidx + bad, &col, st));
    PSPMV_CUDA_TRY(pd::fetch(A.values + bad, &a, st));
    if (!finite_value(a)) throw detail::non_finite_error(row, col, a);
    PSPMV_CUDA_TRY(pd::fetch(v->get() + bad, &vk, st));
    PSPMV_CUDA_TRY(pd::fetch(s + row, &si, st));
    PSPMV_CUDA_TRY(pd::fetch(s + col, &sj, st));
    throw detail::scaled_range_error(row, col, a, vk, si, sj);
  }
  return cudaSuccess;
}

// After check_square: the remaining checks of build_scaled_copy / update_scaled_copy in the
// host's order, s into s (rows entries) and the scaled CSR *Ah (A's pattern, values in *v).
cudaError_t scale(const DeviceCsr &A, double *s, Scratch<double> *v, DeviceCsr *Ah, cudaStream_t st)
{
  PSPMV_CUDA_TRY(inverse_sqrt_diagonal(A, s, st));
  PSPMV_CUDA_TRY(scaled_values(A, s, v, st));
  *Ah        = A;
  Ah->values = v->get();
  return cudaSuccess;
}

cudaError_t build(const DeviceCsr &A, const PackSellOptions &opt, cudaStream_t st, DeviceScaledCopy *c, const CopyDither &dither)
{
  PSPMV_CUDA_TRY(check_square(A, st));
  PSPMV_CUDA_TRY(pd::alloc(size_t(A.rows), &c->s));
  Scratch<double> v;
  DeviceCsr       Ah;
  PSPMV_CUDA_TRY(scale(A, c->s, &v, &Ah, st));
  if (dither.on && A.rows > 0) {
    int m = 0, emin = 0;
    dither_bits(opt.value_format, &m, &emin);
    dither_kernel<<<pd::warp_grid_for(A.rows), kBuildThreads, 0, st>>>(A, dither.row0, m, emin, v.get());
    PSPMV_CUDA_TRY(cudaGetLastError());
  }
  pspmv::cuda::DeviceBuildInfo info;
  PSPMV_CUDA_TRY(code_or_raise(pspmv::cuda::build_on_device(Ah, opt, st, &c->op, &info)));
  c->nnz   = A.nnz;
  c->stats = info.stats;
  return cudaSuccess;
}

} // namespace

cudaError_t build_scaled_copy_on_device(const DeviceCsr &A, const PackSellOptions &opt, cudaStream_t stream, DeviceScaledCopy *c, const CopyDither &dither)
{
  pd::ScratchRelease release_scratch(stream);
  PSPMV_CUDA_TRY(cudaStreamSynchronize(stream)); // a solve may still read what *c holds
  PSPMV_CUDA_TRY(release(c));
  cudaError_t err;
  try {
    err = build(A, opt, stream, c, dither);
  } catch (...) {
    (void)cudaStreamSynchronize(stream);
    (void)release(c);
    throw;
  }
  if (err != cudaSuccess) {
    (void)cudaStreamSynchronize(stream);
    (void)release(c);
  }
  return err;
}

cudaError_t update_scaled_copy_on_device(const DeviceCsr &A, cudaStream_t stream, DeviceScaledCopy *c, bool *pattern_changed)
{
  pd::ScratchRelease release_scratch(stream);
  *pattern_changed = false;
  PSPMV_CUDA_TRY(check_square(A, stream));
  if (A.rows != c->op.rows || A.cols != c->op.cols || A.nnz != c->nnz) {
    *pattern_changed = true;
    return cudaSuccess;
  }
  Scratch<double> s(size_t(A.rows), stream), v;
  PSPMV_CUDA_TRY(s.status());
  DeviceCsr Ah;
  PSPMV_CUDA_TRY(scale(A, s.get(), &v, &Ah, stream));
  int32_t scale_exponent = 0;
  PSPMV_CUDA_TRY(code_or_raise(pspmv::cuda::update_values_on_device(Ah, stream, &c->op, pattern_changed, &scale_exponent)));
  if (*pattern_changed) return cudaSuccess; // nothing written
  if (A.rows > 0) PSPMV_CUDA_TRY(cudaMemcpyAsync(c->s, s.get(), sizeof(double) * size_t(A.rows), cudaMemcpyDeviceToDevice, stream));
  return cudaStreamSynchronize(stream);
}

cudaError_t diagonal_scaling_on_device(const DeviceCsr &A, double *s, cudaStream_t stream)
{
  pd::ScratchRelease release_scratch(stream);
  PSPMV_CUDA_TRY(check_square(A, stream));
  PSPMV_CUDA_TRY(inverse_sqrt_diagonal(A, s, stream));
  return cudaStreamSynchronize(stream);
}

cudaError_t upload(const ScaledCopy &h, DeviceScaledCopy *d)
{
  PSPMV_CUDA_TRY(release(d));
  if (h.op.rows < 0 || h.s.size() != static_cast<size_t>(h.op.rows)) return cudaErrorInvalidValue;
  cudaError_t err = pspmv::cuda::upload(h.op, &d->op);
  if (err == cudaSuccess) err = pspmv::cuda::detail::alloc_copy(h.s, &d->s);
  if (err != cudaSuccess) {
    (void)release(d);
    return err;
  }
  d->nnz   = h.nnz;
  d->stats = h.op.stats();
  return cudaSuccess;
}

cudaError_t release(DeviceScaledCopy *c)
{
  cudaError_t first = pspmv::cuda::release(&c->op);
  pd::free_ptr(&c->s, &first);
  *c = DeviceScaledCopy{};
  return first;
}

DeviceScaledCopy take(DeviceScaledCopy *c)
{
  const DeviceScaledCopy r = *c;
  *c                       = DeviceScaledCopy{};
  return r;
}

} // namespace cuda
} // namespace mixed
} // namespace pspmv
