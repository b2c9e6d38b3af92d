// RgCSR on the device (rgcsr_device_build.hpp): the device executor of the build driver
// (rgcsr_plan.hpp: K is decided there, the same code as the host build), the fill of the groups,
// the tail and the diagonal from the plan, and the device value update. The addressing is
// rgcsr_layout.hpp's.
#include "core/threads_per_row.hpp"
#include "cuda/device_build.cuh"
#include "formats/rgcsr/rgcsr_device_build.hpp"
#include "formats/rgcsr/rgcsr_layout.hpp"
#include "formats/rgcsr/rgcsr_plan.hpp"
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/transform_iterator.h>
#include <algorithm>

namespace pspmv
{
namespace cuda
{

namespace
{

using detail::kBuildThreads;
using detail::Scratch;

struct GroupSlots {
  const int32_t              *gmax;
  int32_t                     K, G;
  __host__ __device__ int64_t operator()(int32_t g) const { return rgcsr::group_slots(gmax[g] < K ? gmax[g] : K, G); }
};

// row_length[r] = min(len, K); the row's first K nonzeros into its slots (one thread per row).
__global__ void fill_kernel(DeviceCsr A, const int32_t *__restrict__ len, int32_t K, int32_t G, const int64_t *__restrict__ gp, int32_t *__restrict__ row_length, int32_t *__restrict__ columns, double *__restrict__ values)
{
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= A.rows) return;
  const int32_t r     = static_cast<int32_t>(t);
  const int32_t n     = len[r] < K ? len[r] : K;
  row_length[r]       = n;
  const int64_t first = rgcsr::row_first_slot(gp, r, G);
  const int32_t start = A.rowptr[r];
  for (int32_t k = 0; k < n; ++k) {
    const int64_t s = rgcsr::slot(first, k, G);
    columns[s]      = A.colidx[start + k];
    values[s]       = A.values[start + k];
  }
}

__global__ void values_kernel(int32_t rows, const int32_t *__restrict__ rowptr, const double *__restrict__ csr_values, int32_t G, const int64_t *__restrict__ gp, const int32_t *__restrict__ row_length, double *__restrict__ values)
{
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= rows) return;
  const int32_t r     = static_cast<int32_t>(t);
  const int64_t first = rgcsr::row_first_slot(gp, r, G);
  const int32_t start = rowptr[r];
  for (int32_t k = 0; k < row_length[r]; ++k) values[rgcsr::slot(first, k, G)] = csr_values[start + k];
}

// d[r] = A(r, r) (CSR value: RgCSR stores values as they are, regular part or tail), 0 where the
// pattern has none; r < n = min(rows, cols).
__global__ void diagonal_kernel(DeviceCsr A, int32_t n, double *__restrict__ d)
{
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const int32_t k = detail::diagonal_position(A, static_cast<int32_t>(t));
  d[t]            = k >= 0 ? A.values[k] : 0.0;
}

struct Identity {
  __device__ double operator()(double v) const { return v; }
};

cudaError_t fill_diagonal(const DeviceCsr &A, double *diag, cudaStream_t s)
{
  const int32_t n = std::min(A.rows, A.cols);
  if (n <= 0) return cudaSuccess;
  diagonal_kernel<<<detail::grid_for(n), kBuildThreads, 0, s>>>(A, n, diag);
  return cudaGetLastError();
}

constexpr const char *kWhat = "RgCSR device build";

// The driver's executor over a device CSR (valid): the row lengths and the groups' longest rows
// on the device; the longest row and their histograms come back.
class DeviceExecutor {
public:
  DeviceExecutor(const DeviceCsr &A, cudaStream_t s) : A_(A), s_(s) { }
  int32_t        rows() const { return A_.rows; }
  const int32_t *lengths() const { return len_.get(); }
  const int32_t *group_max() const { return gmax_.get(); }

  // Row lengths and group maxima for groups of G rows; before any other call.
  BuildError prepare(int32_t G)
  {
    ngroups_ = rgcsr::num_groups(A_.rows, G);
    PSPMV_DEVICE_TRY(len_.allocate(size_t(std::max(A_.rows, 0)), s_), kWhat);
    PSPMV_DEVICE_TRY(gmax_.allocate(size_t(ngroups_), s_), kWhat);
    PSPMV_DEVICE_TRY(detail::row_lengths(A_, len_.get(), s_), kWhat);
    PSPMV_DEVICE_TRY(detail::block_max(len_.get(), A_.rows, G, gmax_.get(), s_), kWhat);
    return BuildError{};
  }
  BuildError max_row_length(int32_t *maxlen)
  {
    PSPMV_DEVICE_TRY(detail::max_of(gmax_.get(), ngroups_, maxlen, s_), kWhat);
    return BuildError{};
  }
  BuildError length_histograms(int32_t /*G: prepare's*/, int32_t maxlen, std::vector<int64_t> *hist, std::vector<int64_t> *group_hist)
  {
    PSPMV_DEVICE_TRY(detail::histogram(len_.get(), A_.rows, maxlen, hist, s_), kWhat);
    PSPMV_DEVICE_TRY(detail::histogram(gmax_.get(), ngroups_, maxlen, group_hist, s_), kWhat);
    return BuildError{};
  }

private:
  const DeviceCsr &A_;
  cudaStream_t     s_;
  int32_t          ngroups_ = 0;
  Scratch<int32_t> len_, gmax_;
};

// The layout from the plan: group pointers, row lengths and slots, the tail, the diagonal, the
// threads per row and the statistics.
cudaError_t fill(const DeviceCsr &A, const RgCsrPlan &p, const DeviceExecutor &x, DeviceRgCsr *d, DeviceBuildInfo *info, cudaStream_t s)
{
  const int32_t G = p.group_size, K = p.hybrid_width, rows = A.rows, ngroups = p.num_groups;
  d->rows         = rows;
  d->cols         = A.cols;
  d->group_size   = G;
  d->num_groups   = ngroups;
  d->hybrid_width = K;
  d->nnz          = A.nnz;
  // group pointers: gp[0] = 0, gp[g + 1] = gp[g] + G * min(group maximum, K)
  PSPMV_CUDA_TRY(detail::alloc(size_t(ngroups) + 1, &d->group_pointers));
  PSPMV_CUDA_TRY(cudaMemsetAsync(d->group_pointers, 0, sizeof(int64_t), s));
  if (ngroups > 0) {
    auto slots = thrust::make_transform_iterator(thrust::make_counting_iterator<int32_t>(0), GroupSlots{x.group_max(), K, G});
    PSPMV_CUDA_TRY(detail::cub_run(s, [&](void *t, size_t &b) { return cub::DeviceScan::InclusiveSum(t, b, slots, d->group_pointers + 1, ngroups, s); }));
    PSPMV_CUDA_TRY(detail::fetch(d->group_pointers + ngroups, &d->num_slots, s));
  }
  const size_t nslots = size_t(d->num_slots);
  PSPMV_CUDA_TRY(detail::alloc(size_t(rows), &d->row_length));
  PSPMV_CUDA_TRY(detail::alloc(nslots, &d->columns));
  PSPMV_CUDA_TRY(detail::alloc(nslots, &d->values));
  if (nslots) { // padding: value 0, column 0
    PSPMV_CUDA_TRY(cudaMemsetAsync(d->columns, 0, nslots * sizeof(int32_t), s));
    PSPMV_CUDA_TRY(cudaMemsetAsync(d->values, 0, nslots * sizeof(double), s));
  }
  if (rows > 0) {
    fill_kernel<<<detail::grid_for(rows), kBuildThreads, 0, s>>>(A, x.lengths(), K, G, d->group_pointers, d->row_length, d->columns, d->values);
    PSPMV_CUDA_TRY(cudaGetLastError());
  }
  PSPMV_CUDA_TRY(detail::build_tail(A, x.lengths(), K, &d->tail, s));
  PSPMV_CUDA_TRY(detail::fill_tail_values(d->tail, A.values, Identity{}, s));
  const int32_t nd = std::min(rows, A.cols);
  PSPMV_CUDA_TRY(detail::alloc(size_t(std::max(nd, 0)), &d->diagonal));
  PSPMV_CUDA_TRY(fill_diagonal(A, d->diagonal, s));

  const int64_t regular  = A.nnz - d->tail.nnz;
  int64_t       resident = 0;
  PSPMV_CUDA_TRY(detail::resident_threads(&resident));
  d->threads_per_row = threads_per_row(rows, regular, resident);

  FormatStats &st      = info->stats; // as RgCsrMatrix::stats()
  st                   = FormatStats{};
  st.rows              = rows;
  st.cols              = A.cols;
  st.tail_nnz          = d->tail.nnz;
  st.nnz               = regular + st.tail_nnz;
  st.stored_slots      = d->num_slots;
  st.padding_slots     = st.stored_slots - regular;
  st.dummy_words       = 0;
  st.hybrid_width      = K;
  st.stored_bytes      = d->num_slots * int64_t(sizeof(double) + sizeof(int32_t)) + (int64_t(ngroups) + 1) * int64_t(sizeof(int64_t)) + int64_t(rows) * int64_t(sizeof(int32_t)) + st.tail_nnz * int64_t(sizeof(int32_t) * 2 + sizeof(double));
  info->scale_exponent = 0;
  return cudaStreamSynchronize(s);
}

BuildError build(const DeviceCsr &A, const RgCsrOptions &opt, cudaStream_t s, DeviceRgCsr *d, DeviceBuildInfo *info)
{
  PSPMV_BUILD_TRY(catch_build_error([&] { ::pspmv::detail::check_rgcsr_options(opt); }));
  PSPMV_BUILD_TRY(detail::check_csr_on_device(A, s));
  DeviceExecutor x(A, s);
  PSPMV_BUILD_TRY(x.prepare(opt.group_size));
  RgCsrPlan p;
  PSPMV_BUILD_TRY(plan_rgcsr(x, opt, &p));
  PSPMV_DEVICE_TRY(fill(A, p, x, d, info, s), kWhat);
  return BuildError{};
}

} // namespace

BuildError build_on_device(const DeviceCsr &A, const RgCsrOptions &opt, cudaStream_t stream, DeviceRgCsr *d, DeviceBuildInfo *info)
{
  return detail::rebuild_on_device(d, stream, kWhat, [&] { return build(A, opt, stream, d, info); });
}

BuildError update_values_on_device(const DeviceCsr &A, cudaStream_t s, DeviceRgCsr *d, bool *pattern_changed, int32_t *scale_exponent)
{
  detail::ScratchRelease release_scratch(s);
  constexpr const char  *what = "RgCSR device value update";
  *scale_exponent             = 0;
  *pattern_changed            = A.rows != d->rows || A.cols != d->cols || A.nnz != d->nnz || (d->tail.nnz > 0 && !d->tail.source);
  if (*pattern_changed) return BuildError{};
  PSPMV_DEVICE_TRY(cudaStreamSynchronize(s), what); // products on this stream may still read the values
  if (A.rows > 0) {
    values_kernel<<<detail::grid_for(A.rows), kBuildThreads, 0, s>>>(A.rows, A.rowptr, A.values, d->group_size, d->group_pointers, d->row_length, d->values);
    PSPMV_DEVICE_TRY(cudaGetLastError(), what);
  }
  PSPMV_DEVICE_TRY(detail::fill_tail_values(d->tail, A.values, Identity{}, s), what);
  PSPMV_DEVICE_TRY(fill_diagonal(A, d->diagonal, s), what);
  PSPMV_DEVICE_TRY(cudaStreamSynchronize(s), what);
  return BuildError{};
}

} // namespace cuda
} // namespace pspmv
