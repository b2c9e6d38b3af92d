// PackSELL: the device builder and the device value update (packsell_device_build.hpp). Every
// step mirrors build_packsell() / update_packsell_values() in packsell_build.cpp: the word
// addressing is packsell_layout.hpp's, the value codec core/value_codec_hd.hpp's, the K rule
// core/hybrid's and the sigma pick packsell_pick_sigma(), all the host builder's own code.
#include "core/threads_per_row.hpp"
#include "core/value_codec_hd.hpp"
#include "cuda/device_build.cuh"
#include "formats/packsell/packsell_device_build.hpp"
#include "formats/packsell/packsell_layout.hpp"
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/permutation_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <algorithm>
#include <climits>
#include <cmath>
#include <map>

namespace pspmv {
namespace cuda {

namespace {

using detail::kBuildThreads;
using detail::Scratch;

// The value format and exponent the values are encoded with.
struct Codec {
  int E = 0, M = 0;
  int32_t s = 0;
  bool lossy = false;
  // bits of value a scaled by 2^s (encode_scaled in packsell_build.cpp)
  __device__ __forceinline__ uint32_t encode(double a) const {
    bool overflow;
    return codec::encode_bits(E, M, ldexp(a, s), &overflow);
  }
  // the tail's value: rounded through the format at 2^s, back in unscaled units (round_tail)
  __device__ __forceinline__ double tail_value(double a) const {
    return lossy ? ldexp(codec::decode_bits(E, M, encode(a)), -s) : a;
  }
};

Codec codec_of(const ValueFormat &f, int32_t s) {
  Codec c;
  c.lossy = f.lossy();
  c.E = f.exponent_bits;
  c.M = f.mantissa_bits;
  c.s = c.lossy ? s : 0;
  return c;
}

struct TailValue {
  Codec c;
  __device__ double operator()(double v) const { return c.tail_value(v); }
};

struct AbsFinite {
  __host__ __device__ double operator()(double v) const { return isfinite(v) ? fabs(v) : 0.0; }
};
struct ToInt64 {
  __host__ __device__ int64_t operator()(int32_t v) const { return v; }
};
struct TimesN {
  int64_t n;
  __host__ __device__ int64_t operator()(int64_t i) const { return i * n; }
};
struct SegEnd {
  int64_t n, total;
  __host__ __device__ int64_t operator()(int64_t i) const { return (i + 1) * n < total ? (i + 1) * n : total; }
};
struct SliceWords {
  const int32_t *width;
  int32_t C;
  __host__ __device__ int64_t operator()(int32_t s) const { return packsell::word_stride(width[s], C); }
};

// first = smallest CSR position whose value the format cannot hold at 2^s (choose_scale).
__global__ void range_check_kernel(int64_t nnz, const double *__restrict__ values, Codec c, uint32_t magnitude,
                                   unsigned long long *first) {
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < nnz;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double v = values[k];
    if (!isfinite(v)) continue; // Inf and NaN are stored as such
    bool overflow;
    const uint32_t bits = codec::encode_bits(c.E, c.M, ldexp(v, c.s), &overflow);
    if (overflow || (v != 0.0 && (bits & magnitude) == 0)) atomicMin(first, static_cast<unsigned long long>(k));
  }
}

// words[r] = words of the first min(len, K) nonzeros of row r (row_words); *too_many when a row
// needs more than INT32_MAX.
__global__ void row_words_kernel(DeviceCsr A, const int32_t *__restrict__ len, int32_t K, uint32_t md,
                                 int32_t *__restrict__ words, int *too_many) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= A.rows) return;
  const int32_t r = static_cast<int32_t>(t);
  const int32_t n = len[r] < K ? len[r] : K;
  const int32_t *col = A.colidx + A.rowptr[r];
  int32_t prev = 0;
  int64_t w = n;
  for (int32_t k = 0; k < n; ++k) {
    if (uint32_t(col[k] - prev) > md) ++w;
    prev = col[k];
  }
  if (w > INT32_MAX) {
    atomicExch(too_many, 1);
    w = INT32_MAX;
  }
  words[r] = static_cast<int32_t>(w);
}

// Sort keys: window of row i, then its words descending: a stable ascending radix sort by
// (i / sigma, ~words) is std::stable_sort by descending words inside each window (sort_rows).
__global__ void sort_keys_kernel(int32_t rows, const int32_t *__restrict__ words, int64_t sigma,
                                 unsigned long long *__restrict__ keys, int32_t *__restrict__ iota) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  keys[i] = (static_cast<unsigned long long>(i / sigma) << 32) | (0xFFFFFFFFull - static_cast<uint32_t>(words[i]));
  iota[i] = static_cast<int32_t>(i);
}

__global__ void iota_kernel(int32_t n, int32_t *__restrict__ a) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) a[i] = static_cast<int32_t>(i);
}

__global__ void slice_of_rows_kernel(int32_t rows, const int32_t *__restrict__ order, int32_t C, int32_t *__restrict__ slice) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < rows) slice[order[i]] = packsell::slice_of(static_cast<int32_t>(i), C);
}

// widest[k * ns + s] = max over the rows of slice s of the words of their first k + 1 nonzeros
// (k < min(len, top)); auto_width's table, K-major.
__global__ void widest_kernel(DeviceCsr A, const int32_t *__restrict__ len, const int32_t *__restrict__ slice,
                              int32_t top, uint32_t md, int64_t ns, int32_t *__restrict__ widest) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= A.rows) return;
  const int32_t r = static_cast<int32_t>(t);
  const int32_t n = len[r] < top ? len[r] : top;
  const int32_t *col = A.colidx + A.rowptr[r];
  const int64_t sl = slice[r];
  int32_t prev = 0, words = 0;
  for (int32_t k = 0; k < n; ++k) {
    words += uint32_t(col[k] - prev) > md ? 2 : 1;
    prev = col[k];
    atomicMax(&widest[int64_t(k) * ns + sl], words);
  }
}

// A row shorter than K keeps its whole-row words: prefix maxima along k.
__global__ void prefix_max_kernel(int64_t ns, int32_t top, int32_t *__restrict__ widest) {
  const int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= ns) return;
  int32_t m = widest[s];
  for (int32_t k = 1; k < top; ++k) {
    int32_t &w = widest[int64_t(k) * ns + s];
    m = w > m ? w : m;
    w = m;
  }
}

// The words of sorted row i (fill_words): one thread per sorted row.
__global__ void fill_kernel(DeviceCsr A, const int32_t *__restrict__ perm, const int64_t *__restrict__ sp, int32_t C,
                            int32_t D, int32_t K, Codec c, uint32_t *__restrict__ words, double *__restrict__ exact_values,
                            int32_t *__restrict__ source) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= A.rows) return;
  const int32_t i = static_cast<int32_t>(t);
  const int32_t r = perm[i];
  const uint32_t md = packsell::delta_mask(D);
  int64_t p = packsell::row_first_word(sp, i, C);
  const int32_t start = A.rowptr[r], len = A.rowptr[r + 1] - start;
  const int32_t n = len < K ? len : K;
  int32_t prev = 0;
  for (int32_t k = start; k < start + n; ++k) {
    const int32_t col = A.colidx[k];
    uint32_t delta = uint32_t(col - prev);
    if (delta > md) {
      words[p] = packsell::dummy_word(delta);
      p += packsell::word_stride(1, C);
      delta = 0;
    }
    const double v = A.values[k];
    words[p] = packsell::real_word(c.lossy ? c.encode(v) : 0u, delta, D);
    if (!c.lossy) exact_values[p] = v;
    source[p] = k;
    p += packsell::word_stride(1, C);
    prev = col;
  }
}

// Value update through the index map: the value field of every nonzero word, or its exact value.
__global__ void update_words_kernel(int64_t nwords, const int32_t *__restrict__ source, const double *__restrict__ values,
                                    int32_t D, Codec c, uint32_t *__restrict__ words, double *__restrict__ exact_values) {
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < nwords;
       p += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int32_t k = source[p];
    if (k < 0) continue;
    if (c.lossy) words[p] = packsell::with_value_bits(words[p], c.encode(values[k]), D);
    else exact_values[p] = values[k];
  }
}

// d[r] = decoded A(r, r) (packsell_diagonal): the word's value times 2^-s in the regular part,
// the rounded tail value in the tail, 0 without a diagonal entry.
__global__ void diagonal_kernel(int32_t n, const int32_t *__restrict__ pos, const int32_t *__restrict__ rowptr,
                                const double *__restrict__ values, int32_t K, Codec c, double inv_scale,
                                double *__restrict__ d) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const int32_t k = pos[t];
  double v = 0.0;
  if (k >= 0) {
    const double a = values[k];
    if (k - rowptr[t] >= K) v = c.tail_value(a);
    else v = (c.lossy ? codec::decode_bits(c.E, c.M, c.encode(a)) : a) * inv_scale;
  }
  d[t] = v;
}

unsigned int stride_grid(int64_t n) {
  const int64_t b = (n + kBuildThreads - 1) / kBuildThreads;
  return static_cast<unsigned int>(std::min<int64_t>(b, 65535 * 16));
}

// The working state of one build.
struct Builder {
  const DeviceCsr &A;
  const PackSellOptions &opt;
  cudaStream_t s;
  int32_t rows = 0, C = 32, D = 30, maxlen = 0;
  int64_t ns = 0; // slices
  uint32_t md = 0;
  Scratch<int32_t> len;
  std::vector<int64_t> hist; // row length histogram, size maxlen + 1

  Builder(const DeviceCsr &A_, const PackSellOptions &o, cudaStream_t st) : A(A_), opt(o), s(st) {}

  cudaError_t row_words(int32_t K, int32_t *words, bool *too_many) {
    Scratch<int> flag(1, s);
    PSPMV_CUDA_TRY(flag.status());
    PSPMV_CUDA_TRY(cudaMemsetAsync(flag.get(), 0, sizeof(int), s));
    row_words_kernel<<<detail::grid_for(rows), kBuildThreads, 0, s>>>(A, len.get(), K, md, words, flag.get());
    PSPMV_CUDA_TRY(cudaGetLastError());
    int h = 0;
    PSPMV_CUDA_TRY(detail::fetch(flag.get(), &h, s));
    *too_many = h != 0;
    return cudaSuccess;
  }

  // perm = rows sorted by descending words (stable) inside windows of sigma rows (sort_rows).
  cudaError_t sort_rows(const int32_t *words, int32_t sigma, int32_t *perm) {
    if (sigma == 1) {
      iota_kernel<<<detail::grid_for(rows), kBuildThreads, 0, s>>>(rows, perm);
      return cudaGetLastError();
    }
    Scratch<unsigned long long> keys(size_t(rows), s), sorted(size_t(rows), s);
    Scratch<int32_t> iota(size_t(rows), s);
    PSPMV_CUDA_TRY(keys.status());
    PSPMV_CUDA_TRY(sorted.status());
    PSPMV_CUDA_TRY(iota.status());
    sort_keys_kernel<<<detail::grid_for(rows), kBuildThreads, 0, s>>>(rows, words, sigma, keys.get(), iota.get());
    PSPMV_CUDA_TRY(cudaGetLastError());
    const int64_t last_window = (int64_t(rows) - 1) / sigma;
    int end_bit = 32;
    while (end_bit < 64 && (last_window >> (end_bit - 32)) != 0) ++end_bit;
    return detail::cub_run(s, [&](void *t, size_t &b) {
      return cub::DeviceRadixSort::SortPairs(t, b, keys.get(), sorted.get(), iota.get(), perm, rows, 0, end_bit, s);
    });
  }

  // sp[0..ns] = slice pointers of rows in order `perm` with these words (slice_pointers_of);
  // *total = sp[ns].
  cudaError_t slice_pointers(const int32_t *words, const int32_t *perm, int64_t *sp, int64_t *total) {
    Scratch<int32_t> width(size_t(ns), s);
    PSPMV_CUDA_TRY(width.status());
    auto in = thrust::make_permutation_iterator(words, perm);
    auto begin = thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0), TimesN{C});
    auto end = thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0), SegEnd{C, rows});
    PSPMV_CUDA_TRY(detail::cub_run(s, [&](void *t, size_t &b) {
      return cub::DeviceSegmentedReduce::Reduce(t, b, in, width.get(), ns, begin, end, detail::MaxOp{}, int32_t(0), s);
    }));
    PSPMV_CUDA_TRY(cudaMemsetAsync(sp, 0, sizeof(int64_t), s));
    auto slots = thrust::make_transform_iterator(thrust::make_counting_iterator<int32_t>(0), SliceWords{width.get(), C});
    PSPMV_CUDA_TRY(detail::cub_run(s, [&](void *t, size_t &b) {
      return cub::DeviceScan::InclusiveSum(t, b, slots, sp + 1, ns, s);
    }));
    return detail::fetch(sp + ns, total, s);
  }

  cudaError_t regular_words(const int32_t *words, const int32_t *perm, int64_t *total) {
    Scratch<int64_t> sp(size_t(ns) + 1, s);
    PSPMV_CUDA_TRY(sp.status());
    return slice_pointers(words, perm, sp.get(), total);
  }

  // K of the automatic width for rows in layout order `order` (auto_width).
  cudaError_t auto_width(const int32_t *order, int32_t *K) {
    *K = 0;
    if (maxlen == 0) return cudaSuccess;
    const int32_t top = std::min(maxlen, hybrid_width_cap(int64_t(rows), A.nnz));
    Scratch<int32_t> slice(size_t(rows), s), widest(size_t(ns) * size_t(top), s);
    Scratch<int64_t> sums(size_t(top), s);
    PSPMV_CUDA_TRY(slice.status());
    PSPMV_CUDA_TRY(widest.status());
    PSPMV_CUDA_TRY(sums.status());
    slice_of_rows_kernel<<<detail::grid_for(rows), kBuildThreads, 0, s>>>(rows, order, C, slice.get());
    PSPMV_CUDA_TRY(cudaGetLastError());
    PSPMV_CUDA_TRY(cudaMemsetAsync(widest.get(), 0, widest.size() * sizeof(int32_t), s));
    widest_kernel<<<detail::grid_for(rows), kBuildThreads, 0, s>>>(A, len.get(), slice.get(), top, md, ns, widest.get());
    PSPMV_CUDA_TRY(cudaGetLastError());
    prefix_max_kernel<<<detail::grid_for(ns), kBuildThreads, 0, s>>>(ns, top, widest.get());
    PSPMV_CUDA_TRY(cudaGetLastError());
    auto in = thrust::make_transform_iterator(widest.get(), ToInt64{});
    auto begin = thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0), TimesN{ns});
    auto end = thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0), SegEnd{ns, ns * top});
    PSPMV_CUDA_TRY(detail::cub_run(s, [&](void *t, size_t &b) {
      return cub::DeviceSegmentedReduce::Reduce(t, b, in, sums.get(), top, begin, end, detail::SumOp{}, int64_t(0), s);
    }));
    std::vector<int64_t> h(static_cast<size_t>(top));
    PSPMV_CUDA_TRY(cudaMemcpyAsync(h.data(), sums.get(), sizeof(int64_t) * size_t(top), cudaMemcpyDeviceToHost, s));
    PSPMV_CUDA_TRY(cudaStreamSynchronize(s));
    const int32_t Cw = C;
    *K = choose_hybrid_width_from_counts(hist, packsell_hybrid_cost(opt.value_format, rows),
                                         [&h, Cw](int32_t k) { return int64_t(Cw) * h[size_t(k) - 1]; });
    return cudaSuccess;
  }

  // width_for in packsell_build.cpp
  cudaError_t width_for(const int32_t *order, int32_t *K) {
    switch (opt.hybrid.mode) {
    case HybridOption::Mode::None: *K = maxlen; return cudaSuccess;
    case HybridOption::Mode::Fixed: *K = std::min(opt.hybrid.width, maxlen); return cudaSuccess;
    case HybridOption::Mode::Auto: break;
    }
    return auto_width(order, K);
  }

  // choose_sigma in packsell_build.cpp; wfull: whole-row words.
  cudaError_t choose_sigma(const int32_t *wfull, int32_t *sigma_out) {
    struct Candidate {
      int32_t sigma, K;
      int64_t regular;
    };
    std::vector<Candidate> cand;
    Scratch<int32_t> order(size_t(rows), s);
    PSPMV_CUDA_TRY(order.status());
    std::vector<int32_t> sigmas{1};
    for (int64_t sigma = C;; sigma *= 2) { // for_each_sigma_order's candidates
      sigmas.push_back(int32_t(sigma));
      if (sigma >= int64_t(rows) || 2 * sigma > INT32_MAX) break;
    }
    for (int32_t sigma : sigmas) {
      PSPMV_CUDA_TRY(sort_rows(wfull, sigma, order.get()));
      Candidate c{sigma, 0, -1};
      PSPMV_CUDA_TRY(width_for(order.get(), &c.K));
      if (c.K >= maxlen) PSPMV_CUDA_TRY(regular_words(wfull, order.get(), &c.regular)); // no row cut: same words
      cand.push_back(c);
    }
    // rows cut at K, sorted by their truncated word counts
    Scratch<int32_t> cut(size_t(rows), s);
    PSPMV_CUDA_TRY(cut.status());
    int32_t cut_K = -1;
    for (Candidate &c : cand) {
      if (c.regular >= 0) continue;
      if (c.K != cut_K) {
        bool too_many = false;
        PSPMV_CUDA_TRY(row_words(c.K, cut.get(), &too_many));
        cut_K = c.K; // too_many cannot happen for a cut row that the whole row did not hit
      }
      PSPMV_CUDA_TRY(sort_rows(cut.get(), c.sigma, order.get()));
      PSPMV_CUDA_TRY(regular_words(cut.get(), order.get(), &c.regular));
    }
    const HybridCost slot_cost = packsell_hybrid_cost(opt.value_format, rows);
    std::vector<double> cost;
    for (const Candidate &c : cand) {
      int64_t tail = 0, tail_rows = 0; // from the histogram: exact integers, as the host's row loop
      for (size_t l = size_t(std::max(c.K, 0)) + 1; l < hist.size(); ++l) {
        tail += int64_t(l - size_t(c.K)) * hist[l];
        tail_rows += hist[l];
      }
      cost.push_back(slot_cost.variable_bytes(c.regular, tail, tail_rows));
    }
    *sigma_out = cand[::pspmv::detail::packsell_pick_sigma(cost)].sigma;
    return cudaSuccess;
  }
};

[[noreturn]] void throw_host_error(const DeviceCsr &A, const PackSellOptions &opt, cudaStream_t s) {
  detail::HostCsrCopy h;
  const cudaError_t e = detail::copy_to_host(A, &h, s);
  if (e != cudaSuccess)
    throw FormatError(std::string("PackSELL device build: the CSR could not be checked on the host: ") + cudaGetErrorString(e));
  (void)build_packsell(h.view(), opt); // throws the host builder's error
  throw FormatError("PackSELL device build: the device check refused a CSR the host builder accepts");
}

// choose_scale in packsell_build.cpp: the exponent, and the error of the first value (CSR order)
// the format cannot hold at it. *m: the largest finite magnitude (scaling auto; 0 otherwise).
cudaError_t choose_scale(const DeviceCsr &A, const ValueFormat &f, PackSellScaling scaling, cudaStream_t s, int32_t *scale) {
  *scale = 0;
  if (!f.lossy()) return cudaSuccess;
  double m = 0.0;
  if (scaling == PackSellScaling::Auto && A.nnz > 0) {
    Scratch<double> out(1, s);
    PSPMV_CUDA_TRY(out.status());
    auto in = thrust::make_transform_iterator(A.values, AbsFinite{});
    PSPMV_CUDA_TRY(detail::cub_run(s, [&](void *t, size_t &b) {
      return cub::DeviceReduce::Reduce(t, b, in, out.get(), A.nnz, detail::MaxOp{}, 0.0, s);
    }));
    PSPMV_CUDA_TRY(detail::fetch(out.get(), &m, s));
  }
  const int32_t sc = scaling == PackSellScaling::Auto ? ::pspmv::detail::packsell_auto_scale(f, m) : 0;
  if (A.nnz > 0) {
    Scratch<unsigned long long> first(1, s);
    PSPMV_CUDA_TRY(first.status());
    PSPMV_CUDA_TRY(cudaMemsetAsync(first.get(), 0xFF, sizeof(unsigned long long), s));
    const uint32_t magnitude = (uint32_t(1) << (f.exponent_bits + f.mantissa_bits)) - 1; // all but the sign
    range_check_kernel<<<stride_grid(A.nnz), kBuildThreads, 0, s>>>(A.nnz, A.values, codec_of(f, sc), magnitude, first.get());
    PSPMV_CUDA_TRY(cudaGetLastError());
    unsigned long long k = 0;
    PSPMV_CUDA_TRY(detail::fetch(first.get(), &k, s));
    if (k != ~0ull) {
      int32_t row = 0, col = 0;
      double v = 0.0;
      PSPMV_CUDA_TRY(detail::row_of_position(A, int64_t(k), &row, s));
      PSPMV_CUDA_TRY(detail::fetch(A.colidx + k, &col, s));
      PSPMV_CUDA_TRY(detail::fetch(A.values + k, &v, s));
      throw ::pspmv::detail::packsell_value_range_error(f, scaling, row, col, v, sc, m);
    }
  }
  *scale = sc;
  return cudaSuccess;
}

cudaError_t fill_diagonal(const DeviceCsr &A, int32_t K, const Codec &c, double inv_scale, double *diag, cudaStream_t s) {
  const int32_t n = std::min(A.rows, A.cols);
  if (n <= 0) return cudaSuccess;
  Scratch<int32_t> pos(size_t(n), s);
  PSPMV_CUDA_TRY(pos.status());
  PSPMV_CUDA_TRY(detail::diagonal_positions(A, n, pos.get(), s));
  diagonal_kernel<<<detail::grid_for(n), kBuildThreads, 0, s>>>(n, pos.get(), A.rowptr, A.values, K, c, inv_scale, diag);
  return cudaGetLastError();
}

cudaError_t build(const DeviceCsr &A, const PackSellOptions &opt, cudaStream_t s, DevicePackSell *d, DeviceBuildInfo *info) {
  ::pspmv::detail::check_packsell_options(opt);
  bool ok = true;
  PSPMV_CUDA_TRY(detail::csr_is_valid(A, &ok, s));
  if (!ok) throw_host_error(A, opt, s);

  Builder b(A, opt, s);
  b.rows = A.rows;
  b.C = opt.slice_height;
  b.D = packsell::delta_bits_for(opt.value_format.value_bits());
  b.md = packsell::delta_mask(b.D);
  b.ns = packsell::num_slices(A.rows, b.C);
  const bool exact = !opt.value_format.lossy();

  int32_t scale = 0;
  PSPMV_CUDA_TRY(choose_scale(A, opt.value_format, opt.scaling, s, &scale));

  int32_t sigma = opt.sigma, K = 0;
  Scratch<int32_t> words(size_t(b.rows), s);
  PSPMV_CUDA_TRY(words.status());
  int64_t sum_words = 0;
  if (b.rows > 0) {
    PSPMV_CUDA_TRY(b.len.allocate(size_t(b.rows), s));
    PSPMV_CUDA_TRY(detail::row_lengths(A, b.len.get(), s));
    PSPMV_CUDA_TRY(detail::max_of(b.len.get(), b.rows, &b.maxlen, s));
    PSPMV_CUDA_TRY(detail::histogram(b.len.get(), b.rows, b.maxlen, &b.hist, s));
    bool too_many = false;
    PSPMV_CUDA_TRY(b.row_words(b.maxlen, words.get(), &too_many)); // whole rows
    if (too_many) throw_host_error(A, opt, s);                      // row_words' FormatError
  }
  // sigma auto of a matrix without nonzeros: every candidate costs 0, the first (1) wins
  if (sigma == kPackSellSigmaAuto) {
    if (b.maxlen == 0) sigma = 1;
    else PSPMV_CUDA_TRY(b.choose_sigma(words.get(), &sigma));
  }

  d->rows = A.rows;
  d->cols = A.cols;
  d->slice_height = b.C;
  d->num_slices = int32_t(b.ns);
  d->delta_bits = b.D;
  d->value_format = opt.value_format;
  d->scale_exponent = scale;
  d->inv_scale = std::ldexp(1.0, -scale);
  d->scaling = opt.scaling;
  d->nnz = A.nnz;
  PSPMV_CUDA_TRY(detail::alloc(size_t(b.rows), &d->perm));
  PSPMV_CUDA_TRY(detail::alloc(size_t(b.ns) + 1, &d->slice_pointers));
  if (b.rows > 0) {
    PSPMV_CUDA_TRY(b.sort_rows(words.get(), sigma, d->perm)); // by whole-row words
    PSPMV_CUDA_TRY(b.width_for(d->perm, &K));
    if (K < b.maxlen) {
      bool too_many = false;
      PSPMV_CUDA_TRY(b.row_words(K, words.get(), &too_many));
      PSPMV_CUDA_TRY(b.sort_rows(words.get(), sigma, d->perm));
    }
    PSPMV_CUDA_TRY(b.slice_pointers(words.get(), d->perm, d->slice_pointers, &d->num_words));
    PSPMV_CUDA_TRY(detail::sum_of(words.get(), b.rows, &sum_words, s));
  } else {
    PSPMV_CUDA_TRY(cudaMemsetAsync(d->slice_pointers, 0, sizeof(int64_t), s));
  }
  d->hybrid_width = K;

  const size_t nw = size_t(d->num_words);
  PSPMV_CUDA_TRY(detail::alloc(nw, &d->words));
  PSPMV_CUDA_TRY(detail::alloc(nw, &d->word_source));
  if (exact) PSPMV_CUDA_TRY(detail::alloc(nw, &d->exact_values));
  const Codec c = codec_of(opt.value_format, scale);
  if (nw) {
    PSPMV_CUDA_TRY(cudaMemsetAsync(d->words, 0, nw * sizeof(uint32_t), s)); // padding words are 0
    PSPMV_CUDA_TRY(cudaMemsetAsync(d->word_source, 0xFF, nw * sizeof(int32_t), s));
    if (exact) PSPMV_CUDA_TRY(cudaMemsetAsync(d->exact_values, 0, nw * sizeof(double), s));
    fill_kernel<<<detail::grid_for(b.rows), kBuildThreads, 0, s>>>(A, d->perm, d->slice_pointers, b.C, b.D, K, c, d->words,
                                                                   d->exact_values, d->word_source);
    PSPMV_CUDA_TRY(cudaGetLastError());
  }
  if (b.rows > 0) {
    PSPMV_CUDA_TRY(detail::build_tail(A, b.len.get(), K, &d->tail, s));
    PSPMV_CUDA_TRY(detail::fill_tail_values(d->tail, A.values, TailValue{c}, s));
  }
  const int32_t nd = std::min(A.rows, A.cols);
  PSPMV_CUDA_TRY(detail::alloc(size_t(std::max(nd, 0)), &d->diagonal));
  PSPMV_CUDA_TRY(fill_diagonal(A, K, c, d->inv_scale, d->diagonal, s));

  int64_t resident = 0;
  PSPMV_CUDA_TRY(detail::resident_threads(&resident));
  d->threads_per_row = threads_per_row(A.rows, d->num_words, resident);

  FormatStats &st = info->stats; // as PackSellMatrix::stats()
  st = FormatStats{};
  const int64_t regular = A.nnz - d->tail.nnz;
  st.rows = A.rows;
  st.cols = A.cols;
  st.tail_nnz = d->tail.nnz;
  st.nnz = regular + st.tail_nnz;
  st.stored_slots = d->num_words;
  st.padding_slots = d->num_words - sum_words;
  st.dummy_words = sum_words - regular;
  st.hybrid_width = K;
  st.sigma = sigma;
  st.stored_bytes = d->num_words * int64_t(sizeof(uint32_t)) + (exact ? d->num_words * int64_t(sizeof(double)) : 0) +
                    (b.ns + 1) * int64_t(sizeof(int64_t)) + int64_t(A.rows) * int64_t(sizeof(int32_t)) +
                    st.tail_nnz * int64_t(sizeof(int32_t) * 2 + sizeof(double));
  info->scale_exponent = scale;
  return cudaStreamSynchronize(s);
}

} // namespace

cudaError_t build_on_device(const DeviceCsr &A, const PackSellOptions &opt, cudaStream_t stream, DevicePackSell *d,
                            DeviceBuildInfo *info) {
  PSPMV_CUDA_TRY(cudaStreamSynchronize(stream)); // a product may still read what *d holds
  PSPMV_CUDA_TRY(release(d));
  cudaError_t err;
  try {
    err = build(A, opt, stream, d, info);
  } catch (...) {
    (void)cudaStreamSynchronize(stream);
    (void)release(d);
    throw;
  }
  if (err != cudaSuccess) {
    (void)cudaStreamSynchronize(stream);
    (void)release(d);
  }
  return err;
}

cudaError_t update_values_on_device(const DeviceCsr &A, cudaStream_t s, DevicePackSell *d, bool *pattern_changed,
                                    int32_t *scale_exponent) {
  *pattern_changed = A.rows != d->rows || A.cols != d->cols || A.nnz != d->nnz ||
                     (d->num_words > 0 && !d->word_source) || (d->tail.nnz > 0 && !d->tail.source);
  *scale_exponent = d->scale_exponent;
  if (*pattern_changed) return cudaSuccess;
  PSPMV_CUDA_TRY(cudaStreamSynchronize(s));
  int32_t scale = 0;
  PSPMV_CUDA_TRY(choose_scale(A, d->value_format, d->scaling, s, &scale)); // throws before anything changes
  const Codec c = codec_of(d->value_format, scale);
  if (d->num_words > 0) {
    update_words_kernel<<<stride_grid(d->num_words), kBuildThreads, 0, s>>>(d->num_words, d->word_source, A.values,
                                                                            d->delta_bits, c, d->words, d->exact_values);
    PSPMV_CUDA_TRY(cudaGetLastError());
  }
  PSPMV_CUDA_TRY(detail::fill_tail_values(d->tail, A.values, TailValue{c}, s));
  d->scale_exponent = scale;
  d->inv_scale = std::ldexp(1.0, -scale);
  PSPMV_CUDA_TRY(fill_diagonal(A, d->hybrid_width, c, d->inv_scale, d->diagonal, s));
  *scale_exponent = scale;
  return cudaStreamSynchronize(s);
}

} // namespace cuda
} // namespace pspmv
