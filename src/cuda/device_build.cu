// Shared pieces of the device builders (device_build.cuh). PETSc-free.
#include "cuda/device_build.cuh"
#include "cuda/coo_tail.cuh"
#include "cuda/segment_reduce.cuh"
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <algorithm>
#include <string>

namespace pspmv
{
namespace cuda
{
namespace detail
{

namespace
{

__global__ void row_lengths_kernel(const int32_t *__restrict__ rowptr, int32_t rows, int32_t *__restrict__ len)
{
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < rows) len[r] = rowptr[r + 1] - rowptr[r];
}

// *first = the smallest row r whose row pointer decreases (rowptr[r + 1] < rowptr[r]).
__global__ void rowptr_decrease_kernel(const int32_t *__restrict__ rowptr, int32_t rows, unsigned long long *first)
{
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < rows && rowptr[r + 1] < rowptr[r]) atomicMin(first, static_cast<unsigned long long>(r));
}

// *first = the smallest row with a column out of [0, cols) or not above the one before it (one
// warp per row).
__global__ void bad_columns_kernel(DeviceCsr A, unsigned long long *first)
{
  const int64_t r    = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int     lane = threadIdx.x % 32;
  if (r >= A.rows) return;
  const int64_t b = A.rowptr[r], e = A.rowptr[r + 1];
  for (int64_t k = b + lane; k < e; k += 32) {
    const int32_t c = A.colidx[k];
    if (c < 0 || c >= A.cols || (k > b && A.colidx[k - 1] >= c)) {
      atomicMin(first, static_cast<unsigned long long>(r));
      return;
    }
  }
}

// One warp per row: the row's entries at positions >= K go to tail entries off[r] ...
__global__ void tail_fill_kernel(DeviceCsr A, int32_t K, const int64_t *__restrict__ off, int32_t *__restrict__ row, int32_t *__restrict__ col, int32_t *__restrict__ source)
{
  const int64_t r    = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int     lane = threadIdx.x % 32;
  if (r >= A.rows) return;
  const int64_t start = static_cast<int64_t>(A.rowptr[r]) + K, end = A.rowptr[r + 1];
  const int64_t base = r == 0 ? 0 : off[r - 1];
  for (int64_t k = start + lane; k < end; k += 32) {
    const int64_t t = base + (k - start);
    row[t]          = static_cast<int32_t>(r);
    col[t]          = A.colidx[k];
    source[t]       = static_cast<int32_t>(k);
  }
}

struct TailCount {
  const int32_t              *len;
  int32_t                     K;
  __host__ __device__ int64_t operator()(int64_t r) const { return len[r] > K ? int64_t(len[r]) - K : 0; }
};

__global__ void diagonal_position_kernel(DeviceCsr A, int32_t r, int32_t *k)
{
  *k = diagonal_position(A, r);
}

__global__ void row_of_position_kernel(const int32_t *__restrict__ rowptr, int32_t rows, int64_t k, int32_t *row)
{
  // largest r in [0, rows) with rowptr[r] <= k (k < nnz = rowptr[rows], so rowptr[r+1] > k)
  int32_t lo = 0, hi = rows; // invariant: rowptr[lo] <= k, answer in [lo, hi)
  while (hi - lo > 1) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (rowptr[mid] <= k) lo = mid;
    else hi = mid;
  }
  *row = lo;
}

} // namespace

BuildError device_error(cudaError_t e, const char *what)
{
  return BuildError::device(int(e), std::string(what) + ": CUDA error " + std::to_string(int(e)) + " (" + cudaGetErrorName(e) + ": " + cudaGetErrorString(e) + ")");
}

cudaError_t row_lengths(const DeviceCsr &A, int32_t *len, cudaStream_t s)
{
  if (A.rows <= 0) return cudaSuccess;
  row_lengths_kernel<<<grid_for(A.rows), kBuildThreads, 0, s>>>(A.rowptr, A.rows, len);
  return cudaGetLastError();
}

cudaError_t max_of(const int32_t *a, int64_t n, int32_t *result, cudaStream_t s)
{
  *result = 0;
  if (n <= 0) return cudaSuccess;
  Scratch<int32_t> out(1, s);
  PSPMV_CUDA_TRY(out.status());
  PSPMV_CUDA_TRY(cub_run(s, [&](void *t, size_t &b) { return cub::DeviceReduce::Reduce(t, b, a, out.get(), n, MaxOp{}, int32_t(0), s); }));
  return fetch(out.get(), result, s);
}

cudaError_t sum_of(const int32_t *a, int64_t n, int64_t *result, cudaStream_t s)
{
  *result = 0;
  if (n <= 0) return cudaSuccess;
  Scratch<int64_t> out(1, s);
  PSPMV_CUDA_TRY(out.status());
  auto in = thrust::make_transform_iterator(a, ToInt64{});
  PSPMV_CUDA_TRY(cub_run(s, [&](void *t, size_t &b) { return cub::DeviceReduce::Reduce(t, b, in, out.get(), n, SumOp{}, int64_t(0), s); }));
  return fetch(out.get(), result, s);
}

cudaError_t histogram(const int32_t *a, int64_t n, int32_t maxval, std::vector<int64_t> *hist, cudaStream_t s)
{
  hist->assign(size_t(maxval) + 1, 0);
  if (n <= 0) return cudaSuccess;
  if (n > INT32_MAX) return cudaErrorInvalidValue; // CUB's run-length encoding counts in int
  const int        items = static_cast<int>(n);
  Scratch<int32_t> sorted(size_t(n), s), unique(size_t(n), s), counts(size_t(n), s), runs(1, s);
  PSPMV_CUDA_TRY(sorted.status());
  PSPMV_CUDA_TRY(unique.status());
  PSPMV_CUDA_TRY(counts.status());
  PSPMV_CUDA_TRY(runs.status());
  // values in [0, maxval]: only the bits up to maxval's highest one take part
  int end_bit = 1;
  while (end_bit < 31 && (int64_t(1) << end_bit) <= maxval) ++end_bit;
  PSPMV_CUDA_TRY(cub_run(s, [&](void *t, size_t &b) { return cub::DeviceRadixSort::SortKeys(t, b, a, sorted.get(), items, 0, end_bit, s); }));
  PSPMV_CUDA_TRY(cub_run(s, [&](void *t, size_t &b) { return cub::DeviceRunLengthEncode::Encode(t, b, sorted.get(), unique.get(), counts.get(), runs.get(), items, s); }));
  int32_t nruns = 0;
  PSPMV_CUDA_TRY(fetch(runs.get(), &nruns, s));
  std::vector<int32_t> hu(static_cast<size_t>(nruns)), hc(static_cast<size_t>(nruns));
  PSPMV_CUDA_TRY(cudaMemcpyAsync(hu.data(), unique.get(), sizeof(int32_t) * size_t(nruns), cudaMemcpyDeviceToHost, s));
  PSPMV_CUDA_TRY(cudaMemcpyAsync(hc.data(), counts.get(), sizeof(int32_t) * size_t(nruns), cudaMemcpyDeviceToHost, s));
  PSPMV_CUDA_TRY(cudaStreamSynchronize(s));
  for (int32_t i = 0; i < nruns; ++i) {
    if (hu[size_t(i)] < 0 || hu[size_t(i)] > maxval) return cudaErrorInvalidValue;
    (*hist)[size_t(hu[size_t(i)])] += hc[size_t(i)];
  }
  return cudaSuccess;
}

cudaError_t block_max(const int32_t *len, int32_t rows, int32_t block, int32_t *out, cudaStream_t s)
{
  if (rows <= 0) return cudaSuccess;
  const int64_t nblocks = (int64_t(rows) + block - 1) / block;
  return reduce_segments(len, nblocks, block, rows, out, MaxOp{}, int32_t(0), s);
}

namespace
{

// The smallest row a kernel of `rows` threads (warp_rows: warps) reports through first, or -1.
template <class Launch>
cudaError_t first_row(cudaStream_t s, Launch &&launch, int64_t *row)
{
  Scratch<unsigned long long> first(1, s);
  PSPMV_CUDA_TRY(first.status());
  PSPMV_CUDA_TRY(cudaMemsetAsync(first.get(), 0xFF, sizeof(unsigned long long), s));
  launch(first.get());
  PSPMV_CUDA_TRY(cudaGetLastError());
  unsigned long long h = 0;
  PSPMV_CUDA_TRY(fetch(first.get(), &h, s));
  *row = h == ~0ull ? -1 : int64_t(h);
  return cudaSuccess;
}

// The first defect of A in check_csr's order (csr_defect), found on the device; only the
// offending row comes to the host, to name its columns.
cudaError_t device_csr_defect(const DeviceCsr &A, cudaStream_t s, CsrDefect *d)
{
  using K = CsrDefect::Kind;
  *d      = CsrDefect{};
  if (A.rows < 0 || A.cols < 0) {
    *d = {K::NegativeSize, -1, A.rows, A.cols};
    return cudaSuccess;
  }
  if (A.rows == 0) {
    if (A.nnz != 0) *d = {K::RowptrEnd, -1, 0, A.nnz};
    return cudaSuccess;
  }
  if (!A.rowptr) {
    *d = {K::MissingRowptr, -1, 0, 0};
    return cudaSuccess;
  }
  int32_t start = 0, end = 0;
  PSPMV_CUDA_TRY(fetch(A.rowptr, &start, s));
  if (start != 0) {
    *d = {K::RowptrStart, -1, start, 0};
    return cudaSuccess;
  }
  int64_t row = -1;
  PSPMV_CUDA_TRY(first_row(
    s, [&](unsigned long long *first) { rowptr_decrease_kernel<<<grid_for(A.rows), kBuildThreads, 0, s>>>(A.rowptr, A.rows, first); }, &row));
  if (row >= 0) {
    int32_t p[2] = {0, 0};
    PSPMV_CUDA_TRY(cudaMemcpyAsync(p, A.rowptr + row, sizeof p, cudaMemcpyDeviceToHost, s));
    PSPMV_CUDA_TRY(cudaStreamSynchronize(s));
    *d = {K::RowptrDecreases, row, p[0], p[1]};
    return cudaSuccess;
  }
  PSPMV_CUDA_TRY(fetch(A.rowptr + A.rows, &end, s));
  if (end != A.nnz) {
    *d = {K::RowptrEnd, -1, end, A.nnz};
    return cudaSuccess;
  }
  if (A.nnz > 0 && (!A.colidx || !A.values)) {
    *d = {K::MissingArrays, -1, A.nnz, 0};
    return cudaSuccess;
  }
  if (A.nnz == 0) return cudaSuccess;
  PSPMV_CUDA_TRY(first_row(
    s, [&](unsigned long long *first) { bad_columns_kernel<<<warp_grid_for(A.rows), kBuildThreads, 0, s>>>(A, first); }, &row));
  if (row < 0) return cudaSuccess;
  int32_t p[2] = {0, 0};
  PSPMV_CUDA_TRY(cudaMemcpyAsync(p, A.rowptr + row, sizeof p, cudaMemcpyDeviceToHost, s));
  PSPMV_CUDA_TRY(cudaStreamSynchronize(s));
  std::vector<int32_t> cols(size_t(p[1] - p[0]));
  PSPMV_CUDA_TRY(cudaMemcpyAsync(cols.data(), A.colidx + p[0], sizeof(int32_t) * cols.size(), cudaMemcpyDeviceToHost, s));
  PSPMV_CUDA_TRY(cudaStreamSynchronize(s));
  *d = csr_row_columns_defect(row, cols.data(), int64_t(cols.size()), A.cols);
  return cudaSuccess;
}

} // namespace

BuildError check_csr_on_device(const DeviceCsr &A, cudaStream_t s)
{
  if (A.nnz > INT32_MAX) return catch_build_error([&] { check_fits_int32(A.rows, A.cols, A.nnz); });
  CsrDefect d;
  PSPMV_DEVICE_TRY(device_csr_defect(A, s, &d), "device CSR check");
  if (d.kind != CsrDefect::Kind::None) return BuildError::format(csr_defect_message(d, A.cols));
  return BuildError{};
}

cudaError_t build_tail(const DeviceCsr &A, const int32_t *len, int32_t K, DeviceCooTail *t, cudaStream_t s)
{
  t->nnz   = 0;
  t->chunk = 0;
  if (A.rows <= 0 || A.nnz <= 0) return cudaSuccess;
  // off[r] = tail entries of rows 0..r (inclusive sum of max(0, len - K))
  Scratch<int64_t> off(size_t(A.rows), s);
  PSPMV_CUDA_TRY(off.status());
  auto counts = thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0), TailCount{len, K});
  PSPMV_CUDA_TRY(cub_run(s, [&](void *tmp, size_t &b) { return cub::DeviceScan::InclusiveSum(tmp, b, counts, off.get(), int64_t(A.rows), s); }));
  int64_t n = 0;
  PSPMV_CUDA_TRY(fetch(off.get() + (A.rows - 1), &n, s));
  t->nnz = n;
  PSPMV_CUDA_TRY(plan_separate_tail(t));
  if (n == 0) return cudaSuccess;
  PSPMV_CUDA_TRY(alloc(size_t(n), &t->row));
  PSPMV_CUDA_TRY(alloc(size_t(n), &t->col));
  PSPMV_CUDA_TRY(alloc(size_t(n), &t->val));
  PSPMV_CUDA_TRY(alloc(size_t(n), &t->source));
  PSPMV_CUDA_TRY(cudaMalloc(reinterpret_cast<void **>(&t->sync), 2 * sizeof(unsigned int)));
  PSPMV_CUDA_TRY(cudaMemsetAsync(t->sync, 0, 2 * sizeof(unsigned int), s));
  tail_fill_kernel<<<warp_grid_for(A.rows), kBuildThreads, 0, s>>>(A, K, off.get(), t->row, t->col, t->source);
  return cudaGetLastError();
}

cudaError_t fetch_diagonal_position(const DeviceCsr &A, int32_t r, int32_t *k, cudaStream_t s)
{
  *k = -1;
  if (r < 0 || r >= A.rows || r >= A.cols) return cudaErrorInvalidValue;
  Scratch<int32_t> d(1, s);
  PSPMV_CUDA_TRY(d.status());
  diagonal_position_kernel<<<1, 1, 0, s>>>(A, r, d.get());
  PSPMV_CUDA_TRY(cudaGetLastError());
  return fetch(d.get(), k, s);
}

cudaError_t row_of_position(const DeviceCsr &A, int64_t k, int32_t *row, cudaStream_t s)
{
  *row = 0;
  if (A.rows <= 0) return cudaErrorInvalidValue;
  Scratch<int32_t> d(1, s);
  PSPMV_CUDA_TRY(d.status());
  row_of_position_kernel<<<1, 1, 0, s>>>(A.rowptr, A.rows, k, d.get());
  PSPMV_CUDA_TRY(cudaGetLastError());
  return fetch(d.get(), row, s);
}

} // namespace detail
} // namespace cuda
} // namespace pspmv
