// Branch-free decoding of one PackSELL word on the device (PETSc-free).
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
#include <cstdint>

namespace pspmv {
namespace cuda {
namespace detail {

// Per-launch constants of the word format.
struct WordFormat {
  uint32_t delta_mask;  // (1 << D) - 1 (0 when D == 0)
  uint32_t value_shift; // D + 1
  uint32_t value_mask;  // ~0u << (D + 1): the value field in place (E8M)
};

// The FP64 value of word w (E8M, BF16, FP16: from its value bits; Exact: exact_values[slot],
// loaded for every word, so the load can issue as early as the word's own: `slot` must be
// inside the array even for padding).
template <ValueKind K>
__device__ __forceinline__ double decode_word(uint32_t w, const WordFormat &f, const double *__restrict__ exact,
                                              int64_t slot) {
  if constexpr (K == ValueKind::Exact) {
    (void)w;
    (void)f;
    return __ldcs(exact + slot);
  } else if constexpr (K == ValueKind::FP16) {
    (void)exact;
    (void)slot;
    // Straight FP16 -> FP64 (exact, subnormals and NaN/Inf kept), one conversion instead of
    // __half2float's FP16 -> FP32 followed by FP32 -> FP64.
    const unsigned short h = static_cast<unsigned short>(w >> f.value_shift);
    double v;
    asm("cvt.f64.f16 %0, %1;" : "=d"(v) : "h"(h));
    return v;
  } else { // E8M and BF16 (= E8M7)
    (void)exact;
    (void)slot;
    return static_cast<double>(__uint_as_float(w & f.value_mask));
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
// dummies and padding too: a column of the row, or column 0 for an empty row (a layout with
// words has cols >= 1).
template <bool predicated>
__device__ __forceinline__ void fma_gather_if(uint32_t flag, double v, const double *xp, double &sum) {
  if constexpr (!predicated) {
    const double a = fma(v, __ldg(xp), sum);
    double r;
    asm("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\tselp.f64 %0, %2, %3, p;\n\t}"
        : "=d"(r)
        : "r"(flag), "d"(a), "d"(sum));
    sum = r;
  } else {
    asm("{\n\t.reg .pred p;\n\t.reg .f64 xv;\n\tsetp.ne.u32 p, %1, 0;\n\tmov.f64 xv, 0d0000000000000000;\n\t"
        "@p ld.global.nc.f64 xv, [%2];\n\t@p fma.rn.f64 %0, %3, xv, %0;\n\t}"
        : "+d"(sum)
        : "r"(flag), "l"(xp), "d"(v));
  }
}

} // namespace detail
} // namespace cuda
} // namespace pspmv
