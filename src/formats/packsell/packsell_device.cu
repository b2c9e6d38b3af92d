// PackSELL on the device: upload, value update, release, SpMV (PETSc-free).
//
// Kernel mapping: one thread per sorted row. Slice s holds sorted rows s*C .. s*C+C-1 and
// stores word k of row s*C+i at slice_pointers[s] + i + k*C (packsell_layout.hpp), so the 32 lanes of a warp (C is
// a multiple of 32, so a warp never straddles two slices) read 32 consecutive words (128 B)
// per k: coalesced for every C. For C > 32 this is exactly "C/32 warps per slice"; the other
// candidate, a warp cooperating on one row, would read words C apart (one 4-byte word per
// 32-byte sector) and need a reduction. All lanes of a warp loop over the same slice width
// (no divergence in the trip count); each word is decoded branch-free:
//   flag = w & 1; jump = flag ? gap + ((w >> 1) & dmask) : (w >> 1); col += jump;
//   (gap: the slice's column gap of the word's position, 0 without gaps; with gaps a dummy's
//   jump is signed: packsell::word_advance; gaps are a template parameter of the kernels)
//   v = decode(w) (template on the value format: no format branch in the loop);
//   if (flag) sum = fma(v, x[col], sum)        (PTX predicated ld and fma: never a branch,
//                                               never a multiply by the flag)
// x[col] is loaded for nonzeros only (packsell_decode.cuh, fma_gather_if: a lane with flag 0
// issues no request). Loading it for every word was simpler (col is always in range) but a
// scattered warp gather costs one L1 wavefront per distinct line even on hits, so dummies
// and padding cost as much as real gathers (docs/kernels.md).
// A dummy's or padding's value never reaches the sum, so even an Inf/NaN in x cannot leak
// into a row through padding. Words go in
// groups of 4 whose loads are issued before their columns are resolved, and before the
// previous group's gathers (software-pipelined); the column chain is integer adds. Sum in
// FP64 in word order (the host reference's order), times inv_scale once, written to
// y[perm[row]]. Word offsets are 64-bit; the loop runs on the offset itself (no 64-bit
// division for the slice width). The COO tail of the hybrid split runs in its own kernel after
// this one, under programmatic dependent launch (coo_tail.cuh).
// Exact with T > 1 loads x for every word and selects the FMA instead (PackSellRowsMulti).
// Register counts and spills of every kernel: docs/kernels.md.
//
// T threads per row (T = 2, 4, 8; DevicePackSell::threads_per_row, chosen at upload for
// matrices with few rows, core/threads_per_row.hpp: there one thread walking a row's words
// serially is a chain of dependent latencies).
// T consecutive threads share a sorted row and walk it in rounds of 4T words: thread t takes
// words k0 + 4t .. k0 + 4t + 3 of round k0 (a warp's 32/T >= 4 rows per word are consecutive
// words: every sector is shared by at most two warps). The delta chain crosses threads: each
// thread adds its 4 jumps, an exclusive prefix sum over the T threads (log2 T shuffles of
// width T) gives each thread the column before its first word, and the round's total moves
// the row's column on. Words past the slice width in the last round are not read but set to 0
// (padding: flag 0; an Exact value load goes to a clamped address). Pipelined like T = 1 (the
// next round's words are loaded before this round's gathers). The T partial sums of a row are added
// by a shuffle reduction; the sum order differs from the host reference's word order by
// rounding only. Every lane of a warp runs the same rounds (32/T divides C: a warp's rows
// lie in one slice), so the shuffles use the full mask.
#include "cuda/coo_tail.cuh"
#include "packsell_device.hpp"
#include "packsell_layout.hpp"
#include "cuda/device_memory.cuh"
#include "core/threads_per_row.hpp"
#include "packsell_decode.cuh"
#include <algorithm>
#include <cmath>
#include <vector>

namespace pspmv
{
namespace cuda
{

namespace
{

constexpr int kPsThreads = detail::kTailThreads; // one block size for the fused kernel
using detail::kGroupWords;                       // words a thread loads together (a group)
using detail::value_slot;
using detail::word_format;

// The arrays and constants a product reads.
struct PackSellArgs {
  int32_t            rows, C, num_slices;
  detail::WordFormat f;
  double             inv_scale;
  const int64_t     *slice_pointers;
  const int32_t     *perm;
  const uint32_t    *words;
  const uint32_t    *gaps; // column gaps or null
  const double      *exact, *x;
  double            *y;
};

// One thread per sorted row: sorted rows [block*256, block*256 + 256), their words walked by
// detail::walk_row (packsell_decode.cuh: software-pipelined groups of 4 words).
template <ValueKind K, bool Add, bool Gapped>
struct PackSellRows {
  PackSellArgs                    a;
  __device__ __forceinline__ void operator()(unsigned int block) const
  {
    const int64_t t = static_cast<int64_t>(block) * kPsThreads + threadIdx.x;
    if (t >= a.rows) return; // rows of the last slice beyond `rows` hold padding only
    const int32_t sr  = static_cast<int32_t>(t);
    double        sum = 0.0;
    detail::walk_row<Gapped>(a.words, a.slice_pointers, a.gaps, a.C, a.f.delta_mask, sr, [&](uint32_t w, uint32_t flag, uint32_t col, int64_t vslot) { // see the note at the top
      detail::fma_gather_if<true>(flag, detail::decode_word<K>(w, a.f, a.exact, vslot), a.x + col, sum);
    });
    const int32_t r = __ldcs(a.perm + sr);
    detail::write_row<Add>(a.y + r, sum * a.inv_scale);
  }
};

// T threads per row: sorted rows [block*256/T, (block+1)*256/T); see the note at the top.
template <ValueKind K, bool Add, int T, bool Gapped>
struct PackSellRowsMulti {
  static_assert(T == 2 || T == 4 || T == 8, "T threads per row: 2, 4 or 8 (T = 1 is PackSellRows)");
  static constexpr int kWords = kGroupWords; // words per thread and round
  // Exact with T > 1 (few-row matrices only) keeps the unpredicated gather and select: its
  // predicated variants were slower (ptxas gave them fewer registers, with a spill or none;
  // docs/kernels.md).
  static constexpr bool kPredicated = K != ValueKind::Exact;
  static_assert(kPredicated || !Gapped, "Exact layouts have no column gaps (packsell::gaps_possible): the unpredicated gather reads x at every word's column");
  PackSellArgs a;

  // This thread's words of a round (0 past the slice end: padding), their value slots and their
  // column gaps (gap slots gslot, gslot + 1, ...; 0 without gaps); each word's slot and load
  // together, the order the Exact kernels were measured with.
  __device__ __forceinline__ void load(int64_t slot, int64_t gslot, int64_t end, uint32_t (&w)[kWords], int64_t (&at)[kWords], uint32_t (&g)[kWords]) const
  {
#pragma unroll
    for (int u = 0; u < kWords; ++u) {
      const int64_t su = slot + packsell::word_stride(u, a.C);
      at[u]            = value_slot(su, end);
      w[u]             = su < end ? __ldcs(a.words + su) : 0u;
      if constexpr (Gapped) g[u] = su < end ? __ldg(a.gaps + gslot + u) : 0u;
      else g[u] = 0u;
    }
  }

  __device__ __forceinline__ void operator()(unsigned int block) const
  {
    const int64_t tid = static_cast<int64_t>(block) * kPsThreads + threadIdx.x;
    const int64_t sr  = tid / T;
    const int     t   = static_cast<int>(tid % T);
    const int64_t s   = packsell::slice_of(sr, a.C);
    if (s >= a.num_slices) return; // the whole warp: its rows lie in one slice
    const int32_t i     = packsell::lane_in_slice(sr, s, a.C);
    const int64_t begin = a.slice_pointers[s], end = a.slice_pointers[s + 1];
    const int64_t round = packsell::word_stride(T * kWords, a.C);                  // slots from one round to the next
    int64_t       lead  = packsell::word_slot(begin, i, 0, a.C);                   // word k0 of the row: lead < end is warp-uniform
    int64_t       slot  = lead + packsell::word_stride(t * kWords, a.C);           // this thread's first word of the round
    int64_t       gslot = Gapped ? packsell::gap_slot(begin, a.C, t * kWords) : 0; // this thread's first gap of the round
    uint32_t      col   = 0;                                                       // the row's column before the round
    double        sum   = 0.0;
    if (lead < end) {
      uint32_t w[kWords], n[kWords], g[kWords], ng[kWords];
      int64_t  at[kWords], nat[kWords];
      load(slot, gslot, end, w, at, g);
      while (true) {
        const bool more = lead + round < end;
        load(more ? slot + round : slot, more && Gapped ? gslot + T * kWords : gslot, end, n, nat, ng); // next round's words before this round's gathers
        uint32_t part[kWords];                                                                          // this thread's column advances, summed in word order
        uint32_t acc = 0;
#pragma unroll
        for (int u = 0; u < kWords; ++u) {
          acc += packsell::word_advance(w[u], packsell::word_flag(w[u]), a.f.delta_mask, g[u], Gapped);
          part[u] = acc;
        }
        uint32_t incl = acc; // inclusive prefix sum of the T threads' jump totals
#pragma unroll
        for (int d = 1; d < T; d *= 2) {
          const uint32_t o = __shfl_up_sync(detail::kFull, incl, d, T);
          if (t >= d) incl += o;
        }
        const uint32_t base = col + incl - acc;
        col += __shfl_sync(detail::kFull, incl, T - 1, T);
#pragma unroll
        for (int u = 0; u < kWords; ++u) {
          const double v = detail::decode_word<K>(w[u], a.f, a.exact, at[u]);
          detail::fma_gather_if<kPredicated>(packsell::word_flag(w[u]), v, a.x + (base + part[u]), sum);
        }
        if (!more) break;
        lead += round;
        slot += round;
        if constexpr (Gapped) gslot += T * kWords;
#pragma unroll
        for (int u = 0; u < kWords; ++u) {
          w[u]  = n[u];
          at[u] = nat[u];
          g[u]  = ng[u];
        }
      }
    }
#pragma unroll
    for (int off = T / 2; off > 0; off /= 2) sum += __shfl_down_sync(detail::kFull, sum, off, T);
    if (t == 0 && sr < a.rows) {
      const int32_t r = __ldcs(a.perm + sr);
      detail::write_row<Add>(a.y + r, sum * a.inv_scale);
    }
  }
};

template <ValueKind K, bool Gapped>
cudaError_t launch(const DevicePackSell &A, const PackSellArgs &a, bool add, cudaStream_t stream)
{
  // Multi-thread kernels cover every row of every slice (a warp's shuffles need all lanes).
  const int          T      = A.threads_per_row;
  const unsigned int blocks = detail::blocks_for(T == 1 ? A.rows : static_cast<int64_t>(A.num_slices) * A.slice_height * T, kPsThreads);
  switch (T * 2 + (add ? 1 : 0)) {
  case 2:
    return detail::launch_hybrid(PackSellRows<K, false, Gapped>{a}, blocks, T, A.tail, a.x, a.y, stream);
  case 3:
    return detail::launch_hybrid(PackSellRows<K, true, Gapped>{a}, blocks, T, A.tail, a.x, a.y, stream);
  case 4:
    return detail::launch_hybrid(PackSellRowsMulti<K, false, 2, Gapped>{a}, blocks, T, A.tail, a.x, a.y, stream);
  case 5:
    return detail::launch_hybrid(PackSellRowsMulti<K, true, 2, Gapped>{a}, blocks, T, A.tail, a.x, a.y, stream);
  case 8:
    return detail::launch_hybrid(PackSellRowsMulti<K, false, 4, Gapped>{a}, blocks, T, A.tail, a.x, a.y, stream);
  case 9:
    return detail::launch_hybrid(PackSellRowsMulti<K, true, 4, Gapped>{a}, blocks, T, A.tail, a.x, a.y, stream);
  case 16:
    return detail::launch_hybrid(PackSellRowsMulti<K, false, 8, Gapped>{a}, blocks, T, A.tail, a.x, a.y, stream);
  case 17:
    return detail::launch_hybrid(PackSellRowsMulti<K, true, 8, Gapped>{a}, blocks, T, A.tail, a.x, a.y, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

cudaError_t upload_all(const PackSellMatrix &h, DevicePackSell *d)
{
  if (!packsell::valid_slice_height(h.slice_height)) return cudaErrorInvalidValue;
  if (h.rows < 0 || h.cols < 0 || h.perm.size() != static_cast<size_t>(h.rows)) return cudaErrorInvalidValue;
  const int64_t nwords = h.slice_pointers.empty() ? 0 : h.slice_pointers.back();
  if (h.words.size() != static_cast<size_t>(nwords)) return cudaErrorInvalidValue;
  const bool exact = h.value_format.kind == ValueKind::Exact;
  if (exact && h.exact_values.size() != h.words.size()) return cudaErrorInvalidValue;
  if (h.rows > 0 && static_cast<int64_t>(h.slice_pointers.size()) - 1 < packsell::num_slices(h.rows, h.slice_height)) return cudaErrorInvalidValue;
  // Every slice is C rows x its width: the kernels' warps rely on it (a warp's rows share one
  // slice width, so its loop and shuffles are uniform).
  for (size_t s = 0; s + 1 < h.slice_pointers.size(); ++s) {
    const int64_t words = h.slice_pointers[s + 1] - h.slice_pointers[s];
    if (words < 0 || words % h.slice_height != 0) return cudaErrorInvalidValue;
  }
  if (!h.slice_pointers.empty() && h.slice_pointers.front() != 0) return cudaErrorInvalidValue;
  if (!h.gaps.empty() && (int64_t(h.gaps.size()) != packsell::gap_entries(nwords, h.slice_height) || !packsell::gaps_possible(h.delta_bits, h.cols))) return cudaErrorInvalidValue;
  // inv_scale = 2^-s must be a normal double, as on the host (the builder keeps |s| within it).
  if (h.scale_exponent > kMaxScaleExponent || h.scale_exponent < -kMaxScaleExponent) return cudaErrorInvalidValue;
  detail::WordFormat f;
  if (!word_format(h.value_format, h.delta_bits, &f)) return cudaErrorInvalidValue;
  d->rows           = h.rows;
  d->cols           = h.cols;
  d->slice_height   = h.slice_height;
  d->num_slices     = h.slice_pointers.empty() ? 0 : h.num_slices();
  d->delta_bits     = h.delta_bits;
  d->value_format   = h.value_format;
  d->inv_scale      = std::ldexp(1.0, -h.scale_exponent);
  d->scale_exponent = h.scale_exponent;
  d->scaling        = h.scaling;
  d->scaling_option = h.scaling_option;
  d->hybrid_width   = h.hybrid_width;
  d->nnz            = h.tail.nnz();
  for (uint32_t w : h.words) d->nnz += packsell::word_flag(w); // the regular nonzeros
  d->num_words     = nwords;
  int64_t resident = 0;
  PSPMV_CUDA_TRY(detail::resident_threads(&resident));
  d->threads_per_row = threads_per_row(h.rows, nwords, resident);
  PSPMV_CUDA_TRY(detail::alloc_copy(h.slice_pointers, &d->slice_pointers));
  PSPMV_CUDA_TRY(detail::alloc_copy(h.perm, &d->perm));
  PSPMV_CUDA_TRY(detail::alloc_copy(h.words, &d->words));
  if (!h.gaps.empty()) PSPMV_CUDA_TRY(detail::alloc_copy(h.gaps, &d->gaps));
  if (exact) PSPMV_CUDA_TRY(detail::alloc_copy(h.exact_values, &d->exact_values));
  PSPMV_CUDA_TRY(detail::upload_diagonal(h, packsell_diagonal, &d->diagonal, true));
  PSPMV_CUDA_TRY(detail::upload_tail(h.tail, &d->tail));
  return cudaDeviceSynchronize(); // see upload(RgCsrMatrix)
}

} // namespace

cudaError_t release(DevicePackSell *d)
{
  cudaError_t first = cudaSuccess;
  detail::free_ptr(&d->slice_pointers, &first);
  detail::free_ptr(&d->perm, &first);
  detail::free_ptr(&d->words, &first);
  detail::free_ptr(&d->gaps, &first);
  detail::free_ptr(&d->exact_values, &first);
  detail::free_ptr(&d->diagonal, &first);
  detail::free_ptr(&d->word_source, &first);
  detail::release_tail(&d->tail, &first);
  *d = DevicePackSell{};
  return first;
}

cudaError_t upload(const PackSellMatrix &h, DevicePackSell *d)
{
  return detail::reupload(h, d, upload_all);
}

cudaError_t upload_values(const PackSellMatrix &h, DevicePackSell *d)
{
  const bool exact = h.value_format.kind == ValueKind::Exact;
  if (h.rows != d->rows || h.cols != d->cols || static_cast<int64_t>(h.words.size()) != d->num_words || h.gaps.empty() != (d->gaps == nullptr) || h.value_format.kind != d->value_format.kind || h.value_format.mantissa_bits != d->value_format.mantissa_bits || h.delta_bits != d->delta_bits ||
      h.tail.nnz() != d->tail.nnz || (exact && static_cast<int64_t>(h.exact_values.size()) != d->num_words) || h.scale_exponent > kMaxScaleExponent || h.scale_exponent < -kMaxScaleExponent)
    return cudaErrorInvalidValue;
  PSPMV_CUDA_TRY(cudaDeviceSynchronize()); // a product on another stream may still read
  // The words carry the values (and, for a new scale exponent, were re-encoded).
  PSPMV_CUDA_TRY(detail::copy_into(h.words, d->words));
  if (exact) PSPMV_CUDA_TRY(detail::copy_into(h.exact_values, d->exact_values));
  PSPMV_CUDA_TRY(detail::upload_tail_values(h.tail, &d->tail));
  PSPMV_CUDA_TRY(detail::upload_diagonal(h, packsell_diagonal, &d->diagonal, false));
  d->inv_scale      = std::ldexp(1.0, -h.scale_exponent);
  d->scale_exponent = h.scale_exponent;
  return cudaDeviceSynchronize();
}

cudaError_t spmv(const DevicePackSell &A, const double *x, double *y, bool add, cudaStream_t stream)
{
  if (A.rows <= 0) return cudaSuccess;
  PackSellArgs a{A.rows, A.slice_height, A.num_slices, {}, A.inv_scale, A.slice_pointers, A.perm, A.words, A.gaps, A.exact_values, x, y};
  if (!word_format(A.value_format, A.delta_bits, &a.f)) return cudaErrorInvalidValue;
  const ValueKind k = A.value_format.kind;
  if (k != ValueKind::Exact && k != ValueKind::FP16 && k != ValueKind::BF16 && k != ValueKind::E8M) return cudaErrorInvalidValue;
  return detail::with_decode(k, A.gaps != nullptr, [&](auto kind, auto gapped) { return launch<decltype(kind)::value, decltype(gapped)::value>(A, a, add, stream); });
}

// The gap table's bytes (0 without gaps).
static int64_t gap_bytes(const DevicePackSell &A)
{
  return A.gaps ? packsell::gap_entries(A.num_words, A.slice_height) * static_cast<int64_t>(sizeof(uint32_t)) : 0;
}

int64_t stored_bytes(const DevicePackSell &A)
{
  const int64_t sp    = A.slice_pointers ? static_cast<int64_t>(A.num_slices + 1) * 8 : 0;
  const int64_t exact = A.value_format.kind == ValueKind::Exact ? A.num_words * 8 : 0;
  return sp + static_cast<int64_t>(A.rows) * 4 + A.num_words * 4 + exact + gap_bytes(A) + detail::tail_bytes(A.tail);
}

// The arrays upload_all() and upload_values() copy, at the sizes they were allocated with.
static int64_t value_array_bytes(const DevicePackSell &A)
{
  const int64_t exact = A.exact_values ? A.num_words * static_cast<int64_t>(sizeof(double)) : 0;
  return A.num_words * static_cast<int64_t>(sizeof(uint32_t)) + exact;
}

int64_t upload_bytes(const DevicePackSell &A)
{
  const int64_t sp = A.slice_pointers ? static_cast<int64_t>(A.num_slices + 1) * static_cast<int64_t>(sizeof(int64_t)) : 0;
  return sp + static_cast<int64_t>(A.rows) * static_cast<int64_t>(sizeof(int32_t)) + value_array_bytes(A) + gap_bytes(A) + detail::diagonal_bytes(A) + detail::tail_bytes(A.tail);
}

int64_t device_bytes(const DevicePackSell &A)
{
  const int64_t source = A.word_source ? A.num_words * static_cast<int64_t>(sizeof(int32_t)) : 0;
  return upload_bytes(A) + detail::tail_map_bytes(A.tail) + source;
}

int64_t value_upload_bytes(const DevicePackSell &A)
{
  // the words carry the values: all of them are copied
  return value_array_bytes(A) + detail::diagonal_bytes(A) + detail::tail_value_bytes(A.tail);
}

} // namespace cuda
} // namespace pspmv
