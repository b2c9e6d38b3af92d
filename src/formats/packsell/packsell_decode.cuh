// Branch-free decoding of one PackSELL word on the device and the walk of a row's words
// (PETSc-free): the one definition that the FP64 kernels (packsell_device.cu) and the FP32 ones
// (packsell_lowp_rows.cuh) share.
//
// Word (W = 32): [ value : V bits | delta : D bits | flag : 1 bit ], V + D + 1 = 32
// (packsell_layout.hpp).
// The value format is a template parameter, so the SpMV inner loop has no format branch.
//   E8M  (E8Mm, m in [7, 22]; BF16 is E8M7): the value field is an FP32 whose low 23-m
//        mantissa bits were cut off. The FP32 is (w >> (D+1)) << (23-m); since V = 9+m gives
//        D+1 = 23-m, that equals w with its low D+1 bits cleared: one AND with
//        value_mask = ~0u << (D+1). Exact: FP32 -> FP64 keeps subnormals, Inf and NaN (no -ftz).
//   FP16: the 16 value bits are an IEEE binary16, converted exactly to FP64 (cvt.f64.f16).
//   Exact: the word has no value bits; the FP64 value is exact_values[slot].
// Dummies and padding (flag 0) never contribute: fma_gather_if guards the gather and the FMA
// by the flag (Exact at T > 1: loads x for every word and selects the FMA's result); never a
// multiply by the flag, so whatever bits a dummy's value field holds (NaN included) and a
// non-finite x cannot leak.
#pragma once
#include "core/value_codec.hpp"
#include "formats/packsell/packsell_layout.hpp"
#include <cuda_fp16.h>
#include <cstdint>
#include <type_traits>

namespace pspmv
{
namespace cuda
{
namespace detail
{

// Calls f(std::integral_constant<ValueKind, K>{}, std::bool_constant<Gapped>{}) with the decode
// K of value kind k (Exact, FP16, else E8M: BF16 is E8M7) and Gapped = gapped (a layout with
// column gaps; never Exact: packsell::gaps_possible): the one dispatch from a layout to the
// products' templates; returns f's result. The caller checks that k is a PackSELL value kind.
template <class F>
decltype(auto) with_decode(ValueKind k, bool gapped, F &&f)
{
  auto g = [&](auto kind) { return gapped ? f(kind, std::true_type{}) : f(kind, std::false_type{}); };
  switch (k) {
  case ValueKind::Exact:
    return f(std::integral_constant<ValueKind, ValueKind::Exact>{}, std::false_type{});
  case ValueKind::FP16:
    return g(std::integral_constant<ValueKind, ValueKind::FP16>{});
  default:
    return g(std::integral_constant<ValueKind, ValueKind::E8M>{});
  }
}

// Per-launch constants of the word format.
struct WordFormat {
  uint32_t delta_mask;  // (1 << D) - 1 (0 when D == 0)
  uint32_t value_shift; // D + 1
  uint32_t value_mask;  // ~0u << (D + 1): the value field in place (E8M)
};

// The word constants of a format; false if D is not the value format's (packsell_layout.hpp).
// (For E8Mm, V = 9 + m gives D + 1 = 23 - m: the value field is an FP32 cut below its
// mantissa's m bits, which decode_word relies on.)
inline bool word_format(const ValueFormat &vf, int32_t D, WordFormat *f)
{
  if (D < 0 || D > packsell::kExactDeltaBits || D != packsell::delta_bits_for(vf.value_bits())) return false;
  f->delta_mask  = packsell::delta_mask(D);
  f->value_shift = packsell::value_shift(D);
  f->value_mask  = packsell::value_field_mask(D);
  return true;
}

// The value of word w as Real: double for the FP64 products, float for the FP32 ones
// (packsell_lowp_rows.cuh). E8M, BF16, FP16: from its value bits (exact in either type); Exact:
// exact_values[slot] (rounded to nearest for float), loaded for every word, so the load can issue
// as early as the word's own: `slot` must be inside the array even for padding.
template <ValueKind K, class Real = double>
__device__ __forceinline__ Real decode_word(uint32_t w, const WordFormat &f, const double *__restrict__ exact, int64_t slot)
{
  static_assert(std::is_same<Real, double>::value || std::is_same<Real, float>::value, "Real: double or float");
  constexpr bool kF64 = std::is_same<Real, double>::value;
  if constexpr (K == ValueKind::Exact) {
    (void)w;
    (void)f;
    const double v = __ldcs(exact + slot);
    if constexpr (kF64) return v;
    else return __double2float_rn(v);
  } else if constexpr (K == ValueKind::FP16) {
    (void)exact;
    (void)slot;
    const unsigned short h = static_cast<unsigned short>(w >> f.value_shift);
    if constexpr (kF64) {
      // Straight FP16 -> FP64 (exact, subnormals and NaN/Inf kept), one conversion instead of
      // __half2float's FP16 -> FP32 followed by FP32 -> FP64.
      double v;
      asm("cvt.f64.f16 %0, %1;" : "=d"(v) : "h"(h));
      return v;
    } else {
      return __half2float(__ushort_as_half(h));
    }
  } else { // E8M and BF16 (= E8M7)
    (void)exact;
    (void)slot;
    return static_cast<Real>(__uint_as_float(w & f.value_mask));
  }
}

// sum += v * x[col] for a nonzero (flag 1); nothing at all for a dummy or padding (flag 0).
// One predicate guards the gather and the FMA (PTX @p ld, @p fma; no branch, no select, never
// a multiply by the flag), so a dummy's value bits (NaN included) and whatever x holds never
// reach sum. xp = x + col.
// Why a predicated gather (a lane whose predicate is off issues no memory request): a warp's
// gather of x with scattered columns costs one L1 wavefront per distinct line even when every
// line hits, so loading x for dummies and padding too (they repeat a column of the row) cost
// as much L1 throughput as the real gathers (on power-law rows most of the regular part's
// time; docs/kernels.md). The loaded register is zeroed first: a register written only under
// a predicate is otherwise live from the kernel's start (ptxas then allocates more registers
// for T > 1). Exact values stay outside the predicate (decode_word): loading them inside it,
// with the gather, was slower (docs/kernels.md).
// predicated == false: x is loaded for every word and the FMA's result selected (PTX selp,
// which the compiler cannot turn back into a branch); xp must then be a valid address for
// dummies and padding too: the callers pass column 0 for them (a layout with words has
// cols >= 1; a dummy of a layout with column gaps may land outside [0, cols)).
template <bool predicated>
__device__ __forceinline__ void fma_gather_if(uint32_t flag, double v, const double *xp, double &sum)
{
  if constexpr (!predicated) {
    const double a = fma(v, __ldg(xp), sum);
    double       r;
    asm("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\tselp.f64 %0, %2, %3, p;\n\t}" : "=d"(r) : "r"(flag), "d"(a), "d"(sum));
    sum = r;
  } else {
    asm("{\n\t.reg .pred p;\n\t.reg .f64 xv;\n\tsetp.ne.u32 p, %1, 0;\n\tmov.f64 xv, 0d0000000000000000;\n\t"
        "@p ld.global.nc.f64 xv, [%2];\n\t@p fma.rn.f64 %0, %3, xv, %0;\n\t}"
        : "+d"(sum)
        : "r"(flag), "l"(xp), "d"(v));
  }
}

// The word walk of one thread per sorted row (PackSellRows in packsell_device.cu and the FP32
// rows of packsell_lowp_rows.cuh): groups of kGroupWords words, each group's loads issued before
// the previous group's visits (software pipelining: every thread keeps word loads in flight
// behind its gathers; the plain loop, a group's 4 loads and then its 4 steps, lets ptxas
// interleave the loads with the previous words' gathers: up to four dependent memory latencies
// per 4 words). A slice width that is not a multiple of 4 ends in a partial group (its missing
// words are padding) inside the pipeline, not in a remainder loop (one dependent
// load-then-gather latency per word). Measurements of both: docs/kernels.md.
constexpr int kGroupWords = 4; // words a thread loads together (a group)

// Words slot, slot + stride, ..., slot + 3 stride of a row and, for a layout with column gaps
// (Gapped), their gaps (gap slots gslot, gslot + 1, ...; 0 otherwise). Masked: a word at or past
// the slice end is 0 (padding: flag 0, no jump); unmasked: the caller knows all four are inside
// the slice. A gap is the same for every lane of the slice: one broadcast load per warp.
// Gapped is a template parameter so that the kernels of layouts without gaps keep their
// registers (40 instead of 32 per thread when the gaps were a run-time choice).
template <bool Masked, bool Gapped>
__device__ __forceinline__ void load_group(const uint32_t *__restrict__ words, const uint32_t *__restrict__ gaps, int64_t slot, int64_t gslot, int64_t end, int64_t stride, uint32_t (&w)[kGroupWords], uint32_t (&g)[kGroupWords])
{
#pragma unroll
  for (int u = 0; u < kGroupWords; ++u) {
    const int64_t su = slot + u * stride;
    const bool    in = !Masked || su < end;
    w[u]             = in ? __ldcs(words + su) : 0u;
    if constexpr (Gapped) g[u] = in ? __ldg(gaps + gslot + u) : 0u;
    else g[u] = 0u;
  }
}

// A word's slot for its Exact value load: past the slice end (padding of a partial group)
// the last slot of the slice, so that the load stays inside the array.
__device__ __forceinline__ int64_t value_slot(int64_t slot, int64_t end)
{
  return slot < end ? slot : end - 1;
}

// Calls visit(w, flag, col, value_slot) for every word of sorted row sr < rows in word order
// (padding of the last group included: w = 0, flag 0), col the word's column after its advance
// (packsell::word_advance: the row's first nonzero counts from column 0; in a layout with column
// gaps, Gapped and gaps its table, a nonzero also advances by its position's gap).
template <bool Gapped, class Visit>
__device__ __forceinline__ void walk_row(const uint32_t *__restrict__ words, const int64_t *slice_pointers, const uint32_t *__restrict__ gaps, int32_t C, uint32_t delta_mask, int32_t sr, Visit &&visit)
{
  const int32_t s      = packsell::slice_of(sr, C);
  const int32_t i      = packsell::lane_in_slice(sr, s, C);
  const int64_t stride = packsell::word_stride(1, C);
  const int64_t start  = slice_pointers[s];
  const int64_t end    = slice_pointers[s + 1];
  int64_t       slot   = packsell::word_slot(start, i, 0, C);
  int64_t       gslot  = Gapped ? packsell::gap_slot(start, C, 0) : 0;
  uint32_t      col    = 0; // the first nonzero of a row counts from column 0
  if (slot < end) {
    uint32_t w[kGroupWords], n[kGroupWords], g[kGroupWords], ng[kGroupWords];
    // Full groups load unmasked (masking every group is measurably slower, docs/kernels.md);
    // the branches are warp-uniform (a warp's rows lie in one slice: C is a multiple of 32).
    if (slot + (kGroupWords - 1) * stride < end) load_group<false, Gapped>(words, gaps, slot, gslot, end, stride, w, g);
    else load_group<true, Gapped>(words, gaps, slot, gslot, end, stride, w, g);
    while (true) {
      const int64_t next  = slot + kGroupWords * stride;
      const int64_t gnext = gslot + kGroupWords;
      const bool    more  = next < end; // the same for every lane of the warp
      if (next + (kGroupWords - 1) * stride < end) load_group<false, Gapped>(words, gaps, next, gnext, end, stride, n, ng);
      else // a partial group; past the slice end (no next one) every word is masked: no load
        load_group<true, Gapped>(words, gaps, next, gnext, end, stride, n, ng);
#pragma unroll
      for (int u = 0; u < kGroupWords; ++u) {
        const int64_t  vslot = value_slot(slot + u * stride, end);
        const uint32_t flag  = packsell::word_flag(w[u]);
        col += packsell::word_advance(w[u], flag, delta_mask, g[u], Gapped);
        visit(w[u], flag, col, vslot);
      }
      slot  = next;
      gslot = gnext;
      if (!more) break;
#pragma unroll
      for (int u = 0; u < kGroupWords; ++u) {
        w[u] = n[u];
        g[u] = ng[u];
      }
    }
  }
}

} // namespace detail
} // namespace cuda
} // namespace pspmv
