// One row of the PackSELL product with FP32 or FP16 vectors, on the device (PETSc-free): the
// device routine that packsell_device_lowp.cu (spmv_f32, spmv_f16) and the inner CG's fused
// product-and-dot kernel (src/mixed/inner_cg_device.cu) share.
//
// Row y_r of sorted row sr (r = perm[sr]), one thread per sorted row:
//   sum  = sum over the row's words in word order of fmaf(v_k, x[col_k], sum)  (FP32)
//          v_k = the word's value decoded to FP32: E8Mm/BF16 __uint_as_float(w & value_mask)
//          (exact: the value field is an FP32 cut below its mantissa), FP16 -> FP32 (exact),
//          Exact: the FP64 value rounded to FP32 (round to nearest);
//   y_r  = float(double(sum) * inv_scale)  (inv_scale = 2^-s: the host's sum * float(2^-s),
//          one rounding, for every s with float(2^-s) exact, -127 <= s <= 149; beyond that
//          range the host's factor is 0 or Inf and this stays the correctly rounded product);
//   then row r's COO tail entries (r, c, v), float(v) * x[c], summed into y_r in the order of
//   packsell_lowp_tail.hpp (tail values carry no scale: packsell.hpp).
// Operation for operation the host twin packsell_spmv_f32 (packsell_spmv.cpp: std::fma in word
// order, the same decode), so the two agree bit for bit.
// The words are walked by the walk PackSellRows uses (walk_row, packsell_decode.cuh), values
// decoded by the same decode_word (to FP32 here): groups of 4 words loaded
// before their columns are resolved and before the previous group's gathers (software
// pipelining), x gathered for nonzeros only (a predicated load: dummies and padding issue no
// request and never reach the sum).
// The tail is added inside the row's warp, so y_r is rounded once (FP16 y) and the product is
// deterministic without atomics: when the tail is not empty each thread finds its row's first
// tail entry by a binary search of tail.row (sorted by row; about log2(tail nnz) dependent
// loads, L2-resident); a short tail (at most kLowpLongTail entries) the thread walks serially,
// a long one the whole warp sums (32 interleaved partial sums, a butterfly), one long row after
// the other. So every lane of a warp calls lowp_row(), rows past the end with active = false.
// A matrix without tail (the usual inner operator: equal row lengths) skips this (a uniform
// branch).
#pragma once
#include "formats/packsell/packsell_decode.cuh"
#include "formats/packsell/packsell_device.hpp"
#include "formats/packsell/packsell_layout.hpp"
#include "formats/packsell/packsell_lowp_tail.hpp"
#include <cuda_fp16.h>
#include <cstdint>

namespace pspmv
{
namespace cuda
{
namespace detail
{

constexpr int kLowpThreads = 256; // threads per block of the low-precision product kernels
static_assert(kLowpThreads % 32 == 0, "whole warps: a long tail is summed by its warp");

// The arrays and constants of one low-precision product.
struct LowpArgs {
  int32_t         rows = 0, C = 32;
  WordFormat      f{};
  double          inv_scale      = 1.0;
  const int64_t  *slice_pointers = nullptr;
  const int32_t  *perm           = nullptr;
  const uint32_t *words          = nullptr;
  const uint32_t *gaps           = nullptr;
  const double   *exact          = nullptr;
  int64_t         tail_nnz       = 0;
  const int32_t  *tail_row = nullptr, *tail_col = nullptr;
  const double   *tail_val = nullptr;
};

// The arguments of A's products; false when A's D is not its value format's (packsell_layout.hpp)
// or the value kind is unknown.
inline bool lowp_args(const DevicePackSell &A, LowpArgs *a)
{
  const ValueFormat &vf = A.value_format;
  if (vf.kind != ValueKind::Exact && vf.kind != ValueKind::FP16 && vf.kind != ValueKind::BF16 && vf.kind != ValueKind::E8M) return false;
  if (!word_format(vf, A.delta_bits, &a->f)) return false;
  a->rows           = A.rows;
  a->C              = A.slice_height;
  a->inv_scale      = A.inv_scale;
  a->slice_pointers = A.slice_pointers;
  a->perm           = A.perm;
  a->words          = A.words;
  a->gaps           = A.gaps;
  a->exact          = A.exact_values;
  a->tail_nnz       = A.tail.nnz;
  a->tail_row       = A.tail.row;
  a->tail_col       = A.tail.col;
  a->tail_val       = A.tail.val;
  return true;
}

// sum = fmaf(v, x[col], sum) for a nonzero (flag 1), nothing for a dummy or padding: one
// predicate guards the gather and the FMA (as fma_gather_if in packsell_decode.cuh).
__device__ __forceinline__ void fma_gather_if_f32(uint32_t flag, float v, const float *xp, float &sum)
{
  asm("{\n\t.reg .pred p;\n\t.reg .f32 xv;\n\tsetp.ne.u32 p, %1, 0;\n\tmov.f32 xv, 0f00000000;\n\t"
      "@p ld.global.nc.f32 xv, [%2];\n\t@p fma.rn.f32 %0, %3, xv, %0;\n\t}"
      : "+f"(sum)
      : "r"(flag), "l"(xp), "f"(v));
}
// The same with an FP16 x (converted exactly to FP32).
__device__ __forceinline__ void fma_gather_if_f32(uint32_t flag, float v, const __half *xp, float &sum)
{
  asm("{\n\t.reg .pred p;\n\t.reg .b16 xh;\n\t.reg .f32 xv;\n\tsetp.ne.u32 p, %1, 0;\n\tmov.b16 xh, 0;\n\t"
      "@p ld.global.nc.b16 xh, [%2];\n\tcvt.f32.f16 xv, xh;\n\t@p fma.rn.f32 %0, %3, xv, %0;\n\t}"
      : "+f"(sum)
      : "r"(flag), "l"(xp), "f"(v));
}

__device__ __forceinline__ float to_f32(float v)
{
  return v;
}
__device__ __forceinline__ float to_f32(__half v)
{
  return __half2float(v);
}

// The regular part's FP32 sum of sorted row sr < a.rows, before inv_scale: the words walked as
// PackSellRows walks them (detail::walk_row), each value decoded to FP32 (decode_word<K, float>).
template <ValueKind K, bool Gapped, class X>
__device__ __forceinline__ float regular_row_sum(const LowpArgs &a, const X *__restrict__ x, int32_t sr)
{
  float sum = 0.0f;
  walk_row<Gapped>(a.words, a.slice_pointers, a.gaps, a.C, a.f.delta_mask, sr, [&](uint32_t w, uint32_t flag, uint32_t col, int64_t vslot) { fma_gather_if_f32(flag, decode_word<K, float>(w, a.f, a.exact, vslot), x + col, sum); });
  return sum;
}

// The first tail entry in [lo, a.tail_nnz) whose row is >= r.
__device__ __forceinline__ int64_t tail_lower_bound(const LowpArgs &a, int64_t lo, int32_t r)
{
  int64_t hi = a.tail_nnz;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (__ldg(a.tail_row + mid) < r) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// float(v_k) * x[c_k] accumulated into acc.
template <class X>
__device__ __forceinline__ float tail_term(const LowpArgs &a, const X *__restrict__ x, int64_t k, float acc)
{
  return fmaf(__double2float_rn(__ldg(a.tail_val + k)), to_f32(__ldg(x + __ldg(a.tail_col + k))), acc);
}

// The sum of tail entries [b, e) (a long tail) by the whole warp, in packsell_lowp_tail.hpp's
// order; every lane returns it. Four entries per lane are loaded before they are summed.
template <class X>
__device__ __forceinline__ float warp_tail_sum(const LowpArgs &a, const X *__restrict__ x, int64_t b, int64_t e, int lane)
{
  constexpr int64_t L   = packsell::kLowpTailLanes;
  float             acc = 0.0f;
  int64_t           k   = b + lane;
  for (; k + 3 * L < e; k += 4 * L) {
    int32_t c[4];
    double  v[4];
    float   xv[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      c[u] = __ldg(a.tail_col + k + u * L);
      v[u] = __ldg(a.tail_val + k + u * L);
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) xv[u] = to_f32(__ldg(x + c[u]));
#pragma unroll
    for (int u = 0; u < 4; ++u) acc = fmaf(__double2float_rn(v[u]), xv[u], acc);
  }
  for (; k < e; k += L) acc = tail_term(a, x, k, acc);
#pragma unroll
  for (int o = packsell::kLowpTailLanes / 2; o > 0; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  return acc;
}

// y plus row r's tail (a.tail_nnz > 0); called by every lane of the warp, active or not.
template <class X>
__device__ __forceinline__ float add_tail(const LowpArgs &a, const X *__restrict__ x, bool active, int32_t r, float y)
{
  int64_t b = 0, e = 0;
  bool    is_long = false;
  if (active) {
    b                  = tail_lower_bound(a, 0, r);
    const int64_t past = b + packsell::kLowpLongTail; // the first entry past a short tail
    is_long            = past < a.tail_nnz && __ldg(a.tail_row + past) == r;
    if (is_long) e = tail_lower_bound(a, past, r + 1);
    else
      for (int64_t k = b; k < a.tail_nnz && __ldg(a.tail_row + k) == r; ++k) y = tail_term(a, x, k, y);
  }
  const int lane = static_cast<int>(threadIdx.x & 31u);
  for (unsigned int todo = __ballot_sync(0xffffffffu, is_long); todo; todo &= todo - 1u) {
    const int     owner = __ffs(static_cast<int>(todo)) - 1;
    const int64_t ob = __shfl_sync(0xffffffffu, b, owner), oe = __shfl_sync(0xffffffffu, e, owner);
    const float   s = warp_tail_sum(a, x, ob, oe, lane);
    if (lane == owner) y = y + s;
  }
  return y;
}

// y_r of sorted row sr (see the top), *r = perm[sr]; every lane of the warp calls it, those
// with sr >= a.rows with active = false (then the result and *r mean nothing). K and Gapped:
// the layout's decode (with_decode in packsell_decode.cuh picks them).
template <ValueKind K, bool Gapped, class X>
__device__ __forceinline__ float lowp_row(const LowpArgs &a, const X *__restrict__ x, int64_t sr, bool active, int32_t *r)
{
  int32_t row = 0;
  float   y   = 0.0f;
  if (active) {
    row             = __ldcs(a.perm + sr);
    const float sum = regular_row_sum<K, Gapped>(a, x, static_cast<int32_t>(sr));
    y               = __double2float_rn(static_cast<double>(sum) * a.inv_scale);
  }
  if (a.tail_nnz > 0) y = add_tail(a, x, active, row, y);
  *r = row;
  return y;
}

} // namespace detail
} // namespace cuda
} // namespace pspmv
