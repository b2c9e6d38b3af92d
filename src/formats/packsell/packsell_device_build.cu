// PackSELL on the device (packsell_device_build.hpp): the device executor of the build driver
// (packsell_plan.hpp: every decision is the driver's, the same code as the host build), the
// fill of the words, the tail and the diagonal from the plan, and the device value update. The
// word addressing is packsell_layout.hpp's, the value codec core/value_codec_hd.hpp's.
#include "core/threads_per_row.hpp"
#include "core/value_codec_hd.hpp"
#include "cuda/device_build.cuh"
#include "cuda/segment_reduce.cuh"
#include "formats/packsell/packsell_device_build.hpp"
#include "formats/packsell/packsell_layout.hpp"
#include "formats/packsell/packsell_plan.hpp"
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/permutation_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <algorithm>
#include <climits>
#include <cmath>

namespace pspmv
{
namespace cuda
{

namespace
{

using detail::kBuildThreads;
using detail::Scratch;

// The value format and exponent the values are encoded with.
struct Codec {
  int     E = 0, M = 0;
  int32_t s     = 0;
  bool    lossy = false;
  // bits of value a scaled by 2^s (encode_scaled in packsell_build.cpp)
  __device__ __forceinline__ uint32_t encode(double a) const
  {
    bool overflow;
    return codec::encode_bits(E, M, ldexp(a, s), &overflow);
  }
  // the tail's value: rounded through the format at 2^s, back in unscaled units (round_tail)
  __device__ __forceinline__ double tail_value(double a) const { return lossy ? ldexp(codec::decode_bits(E, M, encode(a)), -s) : a; }
};

Codec codec_of(const ValueFormat &f, int32_t s)
{
  Codec c;
  c.lossy = f.lossy();
  c.E     = f.exponent_bits;
  c.M     = f.mantissa_bits;
  c.s     = c.lossy ? s : 0;
  return c;
}

struct TailValue {
  Codec             c;
  __device__ double operator()(double v) const { return c.tail_value(v); }
};

struct AbsFinite {
  __host__ __device__ double operator()(double v) const { return isfinite(v) ? fabs(v) : 0.0; }
};
struct SliceWords {
  const int32_t              *width;
  int32_t                     C;
  __host__ __device__ int64_t operator()(int32_t s) const { return packsell::word_stride(width[s], C); }
};

// first = smallest CSR position whose value the format cannot hold at 2^s (codec::unencodable).
__global__ void range_check_kernel(int64_t nnz, const double *__restrict__ values, Codec c, unsigned long long *first)
{
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < nnz; k += static_cast<int64_t>(gridDim.x) * blockDim.x)
    if (codec::unencodable(c.E, c.M, values[k], c.s)) atomicMin(first, static_cast<unsigned long long>(k));
}

// Words of the first n nonzeros of a row with columns col (a dummy before every delta beyond md).
__device__ int64_t words_of(const int32_t *__restrict__ col, int32_t n, uint32_t md)
{
  int64_t w = n;
  for (int32_t k = 0; k < n; ++k) w += packsell::needs_dummy(col[k], k ? col[k - 1] : 0, md) ? 1 : 0;
  return w;
}

// words[r] = words of the first min(len, K) nonzeros of row r, at most INT32_MAX; *long_row:
// the smallest row that needs more.
__global__ void row_words_kernel(DeviceCsr A, const int32_t *__restrict__ len, int32_t K, uint32_t md, int32_t *__restrict__ words, unsigned long long *long_row)
{
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= A.rows) return;
  const int32_t r = static_cast<int32_t>(t);
  const int64_t w = words_of(A.colidx + A.rowptr[r], len[r] < K ? len[r] : K, md);
  if (w > INT32_MAX) atomicMin(long_row, static_cast<unsigned long long>(r));
  words[r] = static_cast<int32_t>(w > INT32_MAX ? INT32_MAX : w);
}

__global__ void one_row_words_kernel(DeviceCsr A, int32_t r, int32_t K, uint32_t md, int64_t *words)
{
  const int32_t len = A.rowptr[r + 1] - A.rowptr[r];
  *words            = words_of(A.colidx + A.rowptr[r], len < K ? len : K, md);
}

// Sort keys: window of row i, then its words descending: a stable ascending radix sort by
// (i / sigma, ~words) is std::stable_sort by descending words inside each window (sort_rows).
__global__ void sort_keys_kernel(int32_t rows, const int32_t *__restrict__ words, int64_t sigma, unsigned long long *__restrict__ keys, int32_t *__restrict__ iota)
{
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  keys[i] = (static_cast<unsigned long long>(i / sigma) << 32) | (0xFFFFFFFFull - static_cast<uint32_t>(words[i]));
  iota[i] = static_cast<int32_t>(i);
}

__global__ void iota_kernel(int32_t n, int32_t *__restrict__ a)
{
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) a[i] = static_cast<int32_t>(i);
}

__global__ void slice_of_rows_kernel(int32_t rows, const int32_t *__restrict__ order, int32_t C, int32_t *__restrict__ slice)
{
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < rows) slice[order[i]] = packsell::slice_of(static_cast<int32_t>(i), C);
}

// widest[k * ns + s] = max over the rows of slice s of the words of their first k + 1 nonzeros
// (k < min(len, top)); auto_width's table, K-major.
__global__ void widest_kernel(DeviceCsr A, const int32_t *__restrict__ len, const int32_t *__restrict__ slice, int32_t top, uint32_t md, int64_t ns, int32_t *__restrict__ widest)
{
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= A.rows) return;
  const int32_t  r    = static_cast<int32_t>(t);
  const int32_t  n    = len[r] < top ? len[r] : top;
  const int32_t *col  = A.colidx + A.rowptr[r];
  const int64_t  sl   = slice[r];
  int32_t        prev = 0, words = 0;
  for (int32_t k = 0; k < n; ++k) {
    words += packsell::needs_dummy(col[k], prev, md) ? 2 : 1;
    prev = col[k];
    atomicMax(&widest[int64_t(k) * ns + sl], words);
  }
}

// A row shorter than K keeps its whole-row words: prefix maxima along k.
__global__ void prefix_max_kernel(int64_t ns, int32_t top, int32_t *__restrict__ widest)
{
  const int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= ns) return;
  int32_t m = widest[s];
  for (int32_t k = 1; k < top; ++k) {
    int32_t &w = widest[int64_t(k) * ns + s];
    m          = w > m ? w : m;
    w          = m;
  }
}

// The stored nonzeros of a row: at most K.
struct StoredLength {
  const int32_t              *len;
  int32_t                     K;
  __host__ __device__ int32_t operator()(int32_t r) const { return len[r] < K ? len[r] : K; }
};

// min[off[s] + k] = the smallest step of the k-th stored nonzero over slice s's rows
// (packsell::SliceGapMins; min filled with UINT32_MAX before): one thread per sorted row.
__global__ void gap_min_kernel(DeviceCsr A, const int32_t *__restrict__ perm, int32_t K, int32_t C, const int64_t *__restrict__ off, uint32_t *__restrict__ min)
{
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= A.rows) return;
  const int32_t i = static_cast<int32_t>(t), r = perm[i];
  const int32_t start = A.rowptr[r], len = A.rowptr[r + 1] - start, n = len < K ? len : K;
  uint32_t     *m    = min + off[packsell::slice_of(i, C)];
  uint32_t      prev = 0;
  for (int32_t k = 0; k < n; ++k) {
    const uint32_t c = uint32_t(A.colidx[start + k]);
    atomicMin(m + k, c - prev);
    prev = c;
  }
}

// words[perm[i]] = the words of sorted row i with gaps g (gapped_row_words on the host).
__global__ void gapped_words_kernel(DeviceCsr A, const int32_t *__restrict__ perm, int32_t K, int32_t C, int32_t D, packsell::SliceGapMins g, int32_t *__restrict__ words)
{
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= A.rows) return;
  const int32_t i = static_cast<int32_t>(t), r = perm[i], s = packsell::slice_of(i, C);
  const int32_t start = A.rowptr[r], len = A.rowptr[r + 1] - start;
  words[r] = packsell::encode_row_columns(
    A.colidx + start, len < K ? len : K, D, true, [&](int32_t k) { return g.at(s, k); }, [](int32_t, uint32_t, int32_t) {});
}

// The gap table from g (zeroed before): one thread per slice.
__global__ void gap_table_kernel(int64_t ns, const int64_t *__restrict__ sp, int32_t C, packsell::SliceGapMins g, uint32_t *__restrict__ gaps)
{
  const int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= ns) return;
  for (int64_t k = 0; k < g.off[s + 1] - g.off[s]; ++k) gaps[packsell::gap_slot(sp[s], C, k)] = g.at(s, k);
}

// The words of sorted row i (fill_words): one thread per sorted row; gaps from g when gapped.
__global__ void fill_kernel(DeviceCsr A, const int32_t *__restrict__ perm, const int64_t *__restrict__ sp, int32_t C, int32_t D, int32_t K, bool gapped, packsell::SliceGapMins g, Codec c, uint32_t *__restrict__ words, double *__restrict__ exact_values, int32_t *__restrict__ source)
{
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= A.rows) return;
  const int32_t i = static_cast<int32_t>(t), r = perm[i], s = packsell::slice_of(i, C);
  const int64_t p     = packsell::row_first_word(sp, i, C);
  const int32_t start = A.rowptr[r], len = A.rowptr[r + 1] - start;
  packsell::encode_row_columns(
    A.colidx + start, len < K ? len : K, D, gapped, [&](int32_t k) { return g.at(s, k); },
    [&](int32_t k, uint32_t word, int32_t j) {
      const int64_t at = p + packsell::word_stride(k, C);
      if (j >= 0) {
        const double v = A.values[start + j];
        if (c.lossy) word = packsell::with_value_bits(word, c.encode(v), D);
        else exact_values[at] = v;
        source[at] = start + j;
      }
      words[at] = word;
    });
}

// Value update through the index map: the value field of every nonzero word, or its exact value.
__global__ void update_words_kernel(int64_t nwords, const int32_t *__restrict__ source, const double *__restrict__ values, int32_t D, Codec c, uint32_t *__restrict__ words, double *__restrict__ exact_values)
{
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < nwords; p += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int32_t k = source[p];
    if (k < 0) continue;
    if (c.lossy) words[p] = packsell::with_value_bits(words[p], c.encode(values[k]), D);
    else exact_values[p] = values[k];
  }
}

// d[r] = decoded A(r, r) (packsell_diagonal): the word's value times 2^-s in the regular part,
// the rounded tail value in the tail, 0 without a diagonal entry.
__global__ void diagonal_kernel(DeviceCsr A, int32_t n, int32_t K, Codec c, double inv_scale, double *__restrict__ d)
{
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const int32_t k = detail::diagonal_position(A, static_cast<int32_t>(t));
  double        v = 0.0;
  if (k >= 0) {
    const double a = A.values[k];
    if (k - A.rowptr[t] >= K) v = c.tail_value(a);
    else v = (c.lossy ? codec::decode_bits(c.E, c.M, c.encode(a)) : a) * inv_scale;
  }
  d[t] = v;
}

unsigned int stride_grid(int64_t n)
{
  const int64_t b = (n + kBuildThreads - 1) / kBuildThreads;
  return static_cast<unsigned int>(std::min<int64_t>(b, 65535 * 16));
}

// The driver's executor over a device CSR (valid): kernels and CUB calls on one stream; only
// scalars, counts per row length and per-K sums come back to the host.
class DeviceExecutor {
public:
  DeviceExecutor(const DeviceCsr &A, cudaStream_t s) : A_(A), s_(s) { }
  int32_t        rows() const { return A_.rows; }
  int64_t        nnz() const { return A_.nnz; }
  const int32_t *lengths() const { return len_.get(); }
  int32_t       *array(PackSellRows a) { return external_[int(a)] ? external_[int(a)] : arrays_[int(a)].get(); }
  // Makes `a` the caller's array (the layout's perm) instead of scratch.
  void use(PackSellRows a, int32_t *p) { external_[int(a)] = p; }

  // Row lengths and scratch arrays (Order and Cut only for the automatic sigma); before any
  // other call.
  BuildError prepare(bool auto_sigma)
  {
    if (A_.rows <= 0) return BuildError{};
    PSPMV_DEVICE_TRY(len_.allocate(size_t(A_.rows), s_), kWhat);
    for (int a = 0; a < kPackSellRowArrays; ++a) {
      const bool candidate = a == int(PackSellRows::Order) || a == int(PackSellRows::Cut);
      if (!external_[a] && (auto_sigma || !candidate)) PSPMV_DEVICE_TRY(arrays_[a].allocate(size_t(A_.rows), s_), kWhat);
    }
    PSPMV_DEVICE_TRY(detail::row_lengths(A_, len_.get(), s_), kWhat);
    return BuildError{};
  }
  BuildError max_abs_finite(double *m)
  {
    *m = 0.0;
    if (A_.nnz <= 0) return BuildError{};
    Scratch<double> out(1, s_);
    PSPMV_DEVICE_TRY(out.status(), kWhat);
    auto in = thrust::make_transform_iterator(A_.values, AbsFinite{});
    PSPMV_DEVICE_TRY(detail::cub_run(s_, [&](void *t, size_t &b) { return cub::DeviceReduce::Reduce(t, b, in, out.get(), A_.nnz, detail::MaxOp{}, 0.0, s_); }), kWhat);
    PSPMV_DEVICE_TRY(detail::fetch(out.get(), m, s_), kWhat);
    return BuildError{};
  }
  BuildError first_unencodable(const ValueFormat &f, int32_t s, int64_t *k)
  {
    *k = -1;
    if (A_.nnz <= 0) return BuildError{};
    Scratch<unsigned long long> first(1, s_);
    PSPMV_DEVICE_TRY(first.status(), kWhat);
    PSPMV_DEVICE_TRY(cudaMemsetAsync(first.get(), 0xFF, sizeof(unsigned long long), s_), kWhat);
    range_check_kernel<<<stride_grid(A_.nnz), kBuildThreads, 0, s_>>>(A_.nnz, A_.values, codec_of(f, s), first.get());
    PSPMV_DEVICE_TRY(cudaGetLastError(), kWhat);
    unsigned long long h = 0;
    PSPMV_DEVICE_TRY(detail::fetch(first.get(), &h, s_), kWhat);
    if (h != ~0ull) *k = int64_t(h);
    return BuildError{};
  }
  BuildError entry(int64_t k, int32_t *row, int32_t *col, double *v)
  {
    PSPMV_DEVICE_TRY(detail::row_of_position(A_, k, row, s_), kWhat);
    PSPMV_DEVICE_TRY(detail::fetch(A_.colidx + k, col, s_), kWhat);
    PSPMV_DEVICE_TRY(detail::fetch(A_.values + k, v, s_), kWhat);
    return BuildError{};
  }
  BuildError length_histogram(std::vector<int64_t> *hist)
  {
    int32_t maxlen = 0;
    PSPMV_DEVICE_TRY(detail::max_of(len_.get(), A_.rows, &maxlen, s_), kWhat);
    PSPMV_DEVICE_TRY(detail::histogram(len_.get(), A_.rows, maxlen, hist, s_), kWhat);
    return BuildError{};
  }
  BuildError row_words(int32_t K, int32_t D, PackSellRows out, int64_t *long_row, int64_t *long_words)
  {
    *long_row = -1;
    if (A_.rows <= 0) return BuildError{};
    const uint32_t              md = packsell::delta_mask(D);
    Scratch<unsigned long long> first(1, s_);
    PSPMV_DEVICE_TRY(first.status(), kWhat);
    PSPMV_DEVICE_TRY(cudaMemsetAsync(first.get(), 0xFF, sizeof(unsigned long long), s_), kWhat);
    row_words_kernel<<<detail::grid_for(A_.rows), kBuildThreads, 0, s_>>>(A_, len_.get(), K, md, array(out), first.get());
    PSPMV_DEVICE_TRY(cudaGetLastError(), kWhat);
    unsigned long long h = 0;
    PSPMV_DEVICE_TRY(detail::fetch(first.get(), &h, s_), kWhat);
    if (h == ~0ull) return BuildError{};
    *long_row = int64_t(h);
    Scratch<int64_t> w(1, s_);
    PSPMV_DEVICE_TRY(w.status(), kWhat);
    one_row_words_kernel<<<1, 1, 0, s_>>>(A_, int32_t(h), K, md, w.get());
    PSPMV_DEVICE_TRY(cudaGetLastError(), kWhat);
    PSPMV_DEVICE_TRY(detail::fetch(w.get(), long_words, s_), kWhat);
    return BuildError{};
  }
  // One stable radix sort of (window, ~words) keys: std::stable_sort by descending words inside
  // each window (`sorted` is not used: a sort from scratch costs no more).
  BuildError sort_rows(PackSellRows w, int32_t sigma, int32_t /*sorted*/, PackSellRows o)
  {
    const int32_t rows = A_.rows;
    if (rows <= 0) return BuildError{};
    if (sigma == 1) {
      iota_kernel<<<detail::grid_for(rows), kBuildThreads, 0, s_>>>(rows, array(o));
      PSPMV_DEVICE_TRY(cudaGetLastError(), kWhat);
      return BuildError{};
    }
    Scratch<unsigned long long> keys(size_t(rows), s_), sorted(size_t(rows), s_);
    Scratch<int32_t>            iota(size_t(rows), s_);
    PSPMV_DEVICE_TRY(keys.status(), kWhat);
    PSPMV_DEVICE_TRY(sorted.status(), kWhat);
    PSPMV_DEVICE_TRY(iota.status(), kWhat);
    sort_keys_kernel<<<detail::grid_for(rows), kBuildThreads, 0, s_>>>(rows, array(w), sigma, keys.get(), iota.get());
    PSPMV_DEVICE_TRY(cudaGetLastError(), kWhat);
    const int64_t last_window = (int64_t(rows) - 1) / sigma;
    int           end_bit     = 32;
    while (end_bit < 64 && (last_window >> (end_bit - 32)) != 0) ++end_bit;
    int32_t *out = array(o);
    PSPMV_DEVICE_TRY(detail::cub_run(s_, [&](void *t, size_t &b) { return cub::DeviceRadixSort::SortPairs(t, b, keys.get(), sorted.get(), iota.get(), out, rows, 0, end_bit, s_); }), kWhat);
    return BuildError{};
  }
  BuildError regular_words(PackSellRows w, PackSellRows o, int32_t C, int64_t *total)
  {
    Scratch<int64_t> sp(size_t(packsell::num_slices(A_.rows, C)) + 1, s_);
    PSPMV_DEVICE_TRY(sp.status(), kWhat);
    PSPMV_DEVICE_TRY(slice_pointers(array(w), array(o), C, sp.get(), total), kWhat);
    return BuildError{};
  }
  BuildError widest_sums(PackSellRows o, int32_t C, int32_t D, int32_t top, std::vector<int64_t> *sums)
  {
    const int32_t    rows = A_.rows;
    const int64_t    ns   = packsell::num_slices(rows, C);
    Scratch<int32_t> slice(size_t(rows), s_), widest(size_t(ns) * size_t(top), s_);
    Scratch<int64_t> d_sums(size_t(top), s_);
    PSPMV_DEVICE_TRY(slice.status(), kWhat);
    PSPMV_DEVICE_TRY(widest.status(), kWhat);
    PSPMV_DEVICE_TRY(d_sums.status(), kWhat);
    slice_of_rows_kernel<<<detail::grid_for(rows), kBuildThreads, 0, s_>>>(rows, array(o), C, slice.get());
    PSPMV_DEVICE_TRY(cudaGetLastError(), kWhat);
    PSPMV_DEVICE_TRY(cudaMemsetAsync(widest.get(), 0, widest.size() * sizeof(int32_t), s_), kWhat);
    const uint32_t md = packsell::delta_mask(D);
    widest_kernel<<<detail::grid_for(rows), kBuildThreads, 0, s_>>>(A_, len_.get(), slice.get(), top, md, ns, widest.get());
    PSPMV_DEVICE_TRY(cudaGetLastError(), kWhat);
    prefix_max_kernel<<<detail::grid_for(ns), kBuildThreads, 0, s_>>>(ns, top, widest.get());
    PSPMV_DEVICE_TRY(cudaGetLastError(), kWhat);
    auto in = thrust::make_transform_iterator(widest.get(), detail::ToInt64{});
    PSPMV_DEVICE_TRY(detail::reduce_segments(in, top, ns, ns * top, d_sums.get(), detail::SumOp{}, int64_t(0), s_), kWhat);
    sums->assign(size_t(top), 0);
    PSPMV_DEVICE_TRY(cudaMemcpyAsync(sums->data(), d_sums.get(), sizeof(int64_t) * size_t(top), cudaMemcpyDeviceToHost, s_), kWhat);
    PSPMV_DEVICE_TRY(cudaStreamSynchronize(s_), kWhat);
    return BuildError{};
  }

  // sp[0..ns] = slice pointers of rows in order `perm` with these words (every slice C rows of
  // its widest row); *total = sp[ns].
  cudaError_t slice_pointers(const int32_t *words, const int32_t *perm, int32_t C, int64_t *sp, int64_t *total)
  {
    const int32_t rows = A_.rows;
    const int64_t ns   = packsell::num_slices(rows, C);
    PSPMV_CUDA_TRY(cudaMemsetAsync(sp, 0, sizeof(int64_t), s_));
    *total = 0;
    if (ns == 0) return cudaSuccess;
    Scratch<int32_t> width(size_t(ns), s_);
    PSPMV_CUDA_TRY(width.status());
    auto in = thrust::make_permutation_iterator(words, perm);
    PSPMV_CUDA_TRY(detail::reduce_segments(in, ns, C, rows, width.get(), detail::MaxOp{}, int32_t(0), s_));
    auto slots = thrust::make_transform_iterator(thrust::make_counting_iterator<int32_t>(0), SliceWords{width.get(), C});
    PSPMV_CUDA_TRY(detail::cub_run(s_, [&](void *t, size_t &b) { return cub::DeviceScan::InclusiveSum(t, b, slots, sp + 1, ns, s_); }));
    return detail::fetch(sp + ns, total, s_);
  }

  // *n = the nonzeros the rows store at hybrid width K: the sum of min(length, K).
  cudaError_t stored_nonzeros(int32_t K, int64_t *n)
  {
    *n = 0;
    if (A_.rows <= 0) return cudaSuccess;
    Scratch<int64_t> out(1, s_);
    PSPMV_CUDA_TRY(out.status());
    auto in = thrust::make_transform_iterator(thrust::make_transform_iterator(thrust::make_counting_iterator<int32_t>(0), StoredLength{len_.get(), K}), detail::ToInt64{});
    PSPMV_CUDA_TRY(detail::cub_run(s_, [&](void *t, size_t &b) { return cub::DeviceReduce::Reduce(t, b, in, out.get(), A_.rows, detail::SumOp{}, int64_t(0), s_); }));
    return detail::fetch(out.get(), n, s_);
  }

  // The column gaps of rows in order perm (packsell::SliceGapMins's off and min, allocated
  // here) and the layout with them: words[r] each row's words, sp its slice pointers,
  // *gapped_words its regular part's words.
  cudaError_t slice_gaps(const int32_t *perm, int32_t C, int32_t K, int32_t D, Scratch<int64_t> &off, Scratch<uint32_t> &min, int32_t *words, int64_t *sp, int64_t *gapped_words)
  {
    const int32_t    rows = A_.rows;
    const int64_t    ns   = packsell::num_slices(rows, C);
    Scratch<int32_t> len(size_t(ns), s_);
    PSPMV_CUDA_TRY(len.status());
    auto stored = thrust::make_transform_iterator(perm, StoredLength{len_.get(), K});
    PSPMV_CUDA_TRY(detail::reduce_segments(stored, ns, C, rows, len.get(), detail::MaxOp{}, int32_t(0), s_));
    PSPMV_CUDA_TRY(off.allocate(size_t(ns) + 1, s_));
    PSPMV_CUDA_TRY(cudaMemsetAsync(off.get(), 0, sizeof(int64_t), s_));
    auto len64 = thrust::make_transform_iterator(len.get(), detail::ToInt64{});
    PSPMV_CUDA_TRY(detail::cub_run(s_, [&](void *t, size_t &b) { return cub::DeviceScan::InclusiveSum(t, b, len64, off.get() + 1, ns, s_); }));
    int64_t total = 0;
    PSPMV_CUDA_TRY(detail::fetch(off.get() + ns, &total, s_));
    PSPMV_CUDA_TRY(min.allocate(size_t(total), s_));
    PSPMV_CUDA_TRY(cudaMemsetAsync(min.get(), 0xFF, size_t(total) * sizeof(uint32_t), s_));
    gap_min_kernel<<<detail::grid_for(rows), kBuildThreads, 0, s_>>>(A_, perm, K, C, off.get(), min.get());
    PSPMV_CUDA_TRY(cudaGetLastError());
    gapped_words_kernel<<<detail::grid_for(rows), kBuildThreads, 0, s_>>>(A_, perm, K, C, D, packsell::SliceGapMins{off.get(), min.get()}, words);
    PSPMV_CUDA_TRY(cudaGetLastError());
    return slice_pointers(words, perm, C, sp, gapped_words);
  }

  static constexpr const char *kWhat = "PackSELL device build";

private:
  const DeviceCsr &A_;
  cudaStream_t     s_;
  Scratch<int32_t> len_;
  Scratch<int32_t> arrays_[kPackSellRowArrays];
  int32_t         *external_[kPackSellRowArrays] = {};
};

cudaError_t fill_diagonal(const DeviceCsr &A, int32_t K, const Codec &c, double inv_scale, double *diag, cudaStream_t s)
{
  const int32_t n = std::min(A.rows, A.cols);
  if (n <= 0) return cudaSuccess;
  diagonal_kernel<<<detail::grid_for(n), kBuildThreads, 0, s>>>(A, n, K, c, inv_scale, diag);
  return cudaGetLastError();
}

// The layout from the plan: slice pointers, words (and exact values, the index map), the tail,
// the diagonal, the threads per row and the statistics.
cudaError_t fill(const DeviceCsr &A, const PackSellOptions &opt, const PackSellPlan &p, DeviceExecutor &x, DevicePackSell *d, DeviceBuildInfo *info, cudaStream_t s)
{
  const int32_t C = p.slice_height, K = p.hybrid_width, ns = packsell::num_slices(A.rows, C);
  const bool    exact = !opt.value_format.lossy();
  d->slice_height     = C;
  d->num_slices       = ns;
  d->delta_bits       = p.delta_bits;
  d->value_format     = opt.value_format;
  d->scale_exponent   = p.scale_exponent;
  d->inv_scale        = std::ldexp(1.0, -p.scale_exponent);
  d->scaling          = opt.scaling;
  d->scaling_option   = opt.scaling_option;
  d->hybrid_width     = K;
  PSPMV_CUDA_TRY(detail::alloc(size_t(ns) + 1, &d->slice_pointers));
  int64_t sum_words = 0;
  PSPMV_CUDA_TRY(x.slice_pointers(x.array(PackSellRows::Words), d->perm, C, d->slice_pointers, &d->num_words));
  // Column gaps where they pay (build_packsell's rule and arrays): tried only where the layout
  // without them has dummies (has_dummies there).
  Scratch<int64_t>  gap_off;
  Scratch<uint32_t> gap_min;
  bool              gapped   = false;
  int64_t           stored   = 0;
  const bool        try_gaps = opt.column_gaps && packsell::gaps_possible(p.delta_bits, A.cols);
  PSPMV_CUDA_TRY(detail::sum_of(x.array(PackSellRows::Words), A.rows, &sum_words, s));
  if (try_gaps) PSPMV_CUDA_TRY(x.stored_nonzeros(K, &stored));
  if (try_gaps && sum_words > stored) {
    Scratch<int32_t> words(size_t(A.rows), s);
    Scratch<int64_t> sp(size_t(ns) + 1, s);
    PSPMV_CUDA_TRY(words.status());
    PSPMV_CUDA_TRY(sp.status());
    int64_t gapped_words = 0;
    PSPMV_CUDA_TRY(x.slice_gaps(d->perm, C, K, p.delta_bits, gap_off, gap_min, words.get(), sp.get(), &gapped_words));
    gapped = ::pspmv::detail::packsell_gaps_pay(d->num_words, gapped_words, C, exact);
    if (gapped) {
      PSPMV_CUDA_TRY(cudaMemcpyAsync(d->slice_pointers, sp.get(), (size_t(ns) + 1) * sizeof(int64_t), cudaMemcpyDeviceToDevice, s));
      PSPMV_CUDA_TRY(detail::sum_of(words.get(), A.rows, &sum_words, s));
      d->num_words = gapped_words;
    }
  }
  const packsell::SliceGapMins g = gapped ? packsell::SliceGapMins{gap_off.get(), gap_min.get()} : packsell::SliceGapMins{}; // none: every gap 0

  const size_t nw = size_t(d->num_words);
  PSPMV_CUDA_TRY(detail::alloc(nw, &d->words));
  PSPMV_CUDA_TRY(detail::alloc(nw, &d->word_source));
  if (exact) PSPMV_CUDA_TRY(detail::alloc(nw, &d->exact_values));
  const Codec c = codec_of(opt.value_format, p.scale_exponent);
  if (nw) {
    PSPMV_CUDA_TRY(cudaMemsetAsync(d->words, 0, nw * sizeof(uint32_t), s)); // padding words are 0
    PSPMV_CUDA_TRY(cudaMemsetAsync(d->word_source, 0xFF, nw * sizeof(int32_t), s));
    if (exact) PSPMV_CUDA_TRY(cudaMemsetAsync(d->exact_values, 0, nw * sizeof(double), s));
    fill_kernel<<<detail::grid_for(A.rows), kBuildThreads, 0, s>>>(A, d->perm, d->slice_pointers, C, p.delta_bits, K, gapped, g, c, d->words, d->exact_values, d->word_source);
    PSPMV_CUDA_TRY(cudaGetLastError());
  }
  if (gapped && nw) {
    const size_t entries = size_t(packsell::gap_entries(d->num_words, C));
    PSPMV_CUDA_TRY(detail::alloc(entries, &d->gaps));
    PSPMV_CUDA_TRY(cudaMemsetAsync(d->gaps, 0, entries * sizeof(uint32_t), s));
    gap_table_kernel<<<detail::grid_for(ns), kBuildThreads, 0, s>>>(ns, d->slice_pointers, C, g, d->gaps);
    PSPMV_CUDA_TRY(cudaGetLastError());
  }
  if (A.rows > 0) {
    PSPMV_CUDA_TRY(detail::build_tail(A, x.lengths(), K, &d->tail, s));
    PSPMV_CUDA_TRY(detail::fill_tail_values(d->tail, A.values, TailValue{c}, s));
  }
  const int32_t nd = std::min(A.rows, A.cols);
  PSPMV_CUDA_TRY(detail::alloc(size_t(std::max(nd, 0)), &d->diagonal));
  PSPMV_CUDA_TRY(fill_diagonal(A, K, c, d->inv_scale, d->diagonal, s));

  int64_t resident = 0;
  PSPMV_CUDA_TRY(detail::resident_threads(&resident));
  d->threads_per_row = threads_per_row(A.rows, d->num_words, resident);

  FormatStats &st       = info->stats; // as PackSellMatrix::stats()
  st                    = FormatStats{};
  const int64_t regular = A.nnz - d->tail.nnz;
  st.rows               = A.rows;
  st.cols               = A.cols;
  st.tail_nnz           = d->tail.nnz;
  st.nnz                = regular + st.tail_nnz;
  st.stored_slots       = d->num_words;
  st.padding_slots      = d->num_words - sum_words;
  st.dummy_words        = sum_words - regular;
  st.hybrid_width       = K;
  st.sigma              = p.sigma;
  st.gap_entries        = d->gaps ? packsell::gap_entries(d->num_words, C) : 0;
  st.stored_bytes       = packsell::stored_bytes(d->num_words, exact, st.gap_entries, ns, A.rows, st.tail_nnz);
  info->scale_exponent  = p.scale_exponent;
  return cudaStreamSynchronize(s);
}

BuildError build(const DeviceCsr &A, const PackSellOptions &opt, cudaStream_t s, DevicePackSell *d, DeviceBuildInfo *info)
{
  PSPMV_BUILD_TRY(catch_build_error([&] { ::pspmv::detail::check_packsell_options(opt); }));
  PSPMV_BUILD_TRY(detail::check_csr_on_device(A, s));
  d->rows = A.rows;
  d->cols = A.cols;
  d->nnz  = A.nnz;
  PSPMV_DEVICE_TRY(detail::alloc(size_t(std::max(A.rows, 0)), &d->perm), DeviceExecutor::kWhat);
  DeviceExecutor x(A, s);
  x.use(PackSellRows::Perm, d->perm);
  PSPMV_BUILD_TRY(x.prepare(opt.sigma == kPackSellSigmaAuto));
  PackSellPlan p;
  PSPMV_BUILD_TRY(plan_packsell(x, opt, &p));
  PSPMV_DEVICE_TRY(fill(A, opt, p, x, d, info, s), DeviceExecutor::kWhat);
  return BuildError{};
}

} // namespace

BuildError build_on_device(const DeviceCsr &A, const PackSellOptions &opt, cudaStream_t stream, DevicePackSell *d, DeviceBuildInfo *info)
{
  return detail::rebuild_on_device(d, stream, DeviceExecutor::kWhat, [&] { return build(A, opt, stream, d, info); });
}

BuildError update_values_on_device(const DeviceCsr &A, cudaStream_t s, DevicePackSell *d, bool *pattern_changed, int32_t *scale_exponent)
{
  detail::ScratchRelease release_scratch(s);
  constexpr const char  *what = "PackSELL device value update";
  *pattern_changed            = A.rows != d->rows || A.cols != d->cols || A.nnz != d->nnz || (d->num_words > 0 && !d->word_source) || (d->tail.nnz > 0 && !d->tail.source);
  *scale_exponent             = d->scale_exponent;
  if (*pattern_changed) return BuildError{};
  PSPMV_DEVICE_TRY(cudaStreamSynchronize(s), what);
  DeviceExecutor x(A, s);
  int32_t        scale = 0;
  PSPMV_BUILD_TRY(plan_packsell_scale(x, d->value_format, d->scaling, d->scaling_option, &scale)); // refused before anything changes
  const Codec c = codec_of(d->value_format, scale);
  if (d->num_words > 0) {
    update_words_kernel<<<stride_grid(d->num_words), kBuildThreads, 0, s>>>(d->num_words, d->word_source, A.values, d->delta_bits, c, d->words, d->exact_values);
    PSPMV_DEVICE_TRY(cudaGetLastError(), what);
  }
  PSPMV_DEVICE_TRY(detail::fill_tail_values(d->tail, A.values, TailValue{c}, s), what);
  d->scale_exponent = scale;
  d->inv_scale      = std::ldexp(1.0, -scale);
  PSPMV_DEVICE_TRY(fill_diagonal(A, d->hybrid_width, c, d->inv_scale, d->diagonal, s), what);
  *scale_exponent = scale;
  PSPMV_DEVICE_TRY(cudaStreamSynchronize(s), what);
  return BuildError{};
}

} // namespace cuda
} // namespace pspmv
