// Branch-free decoding of one PackSELL word on the device (PETSc-free).
//
// Word (W = 32): [ value : V bits | delta : D bits | flag : 1 bit ], V + D + 1 = 32.
// The value format is a template parameter, so the SpMV inner loop has no format branch.
//   E8M  (E8Mm, m in [7, 22]; BF16 is E8M7): the value field is an FP32 whose low 23-m
//        mantissa bits were cut off. The FP32 is (w >> (D+1)) << (23-m); since V = 9+m gives
//        D+1 = 23-m, that equals w with its low D+1 bits cleared: one AND with
//        value_mask = ~0u << (D+1). Exact: FP32 -> FP64 keeps subnormals, Inf and NaN (no -ftz).
//   FP16: the 16 value bits are an IEEE binary16, converted exactly to FP64 (cvt.f64.f16).
//   Exact: the word has no value bits; the FP64 value is exact_values[slot] (loaded for
//          nonzeros only).
// Dummies and padding (flag 0) never contribute: word_fma guards the loads and the FMA by the
// flag (never a multiply by it), so whatever bits a dummy's value field holds (NaN included)
// cannot leak.
#pragma once
#include "../core/value_codec.hpp"
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

// The value of word w for the lossy formats (E8M, BF16, FP16); Exact's values are loaded in
// word_fma.
template <ValueKind K>
__device__ __forceinline__ double decode_word(uint32_t w, const WordFormat &f) {
  static_assert(K != ValueKind::Exact, "Exact values are not in the word");
  if constexpr (K == ValueKind::FP16) {
    // Straight FP16 -> FP64 (exact, subnormals and NaN/Inf kept), one conversion instead of
    // __half2float's FP16 -> FP32 followed by FP32 -> FP64.
    const unsigned short h = static_cast<unsigned short>(w >> f.value_shift);
    double v;
    asm("cvt.f64.f16 %0, %1;" : "=d"(v) : "h"(h));
    return v;
  } else { // E8M and BF16 (= E8M7)
    return static_cast<double>(__uint_as_float(w & f.value_mask));
  }
}

// sum += value(w) * x[col] for a nonzero (flag 1); nothing at all for a dummy or padding
// (flag 0). One predicate guards the loads and the FMA (PTX @p ld, @p fma; no branch, no
// select, never a multiply by the flag), so a dummy's value bits (NaN included) and whatever x
// holds never reach sum. xp = x + col; exact + slot: the word's FP64 value (Exact only).
// Why predicated loads (a lane whose predicate is off issues no memory request): a warp's
// gather of x with scattered columns costs one L1 wavefront per distinct line even when every
// line hits, so loading x for dummies and padding too (they repeat a column of the row) cost
// as much L1 throughput as the real gathers; on a power-law matrix with 4M rows that was most
// of the regular part's time (docs/benchmarks.md, run 8). The loaded registers are zeroed
// first: a register written only under a predicate is otherwise live from the kernel's start
// (ptxas then took 48 registers instead of 40 for T > 1).
template <ValueKind K>
__device__ __forceinline__ void word_fma(uint32_t w, const WordFormat &f, const double *__restrict__ exact,
                                         int64_t slot, const double *xp, double &sum) {
  if constexpr (K == ValueKind::Exact) {
    (void)f;
    asm("{\n\t.reg .pred p;\n\t.reg .f64 v, xv;\n\tsetp.ne.u32 p, %1, 0;\n\tmov.f64 v, 0d0000000000000000;\n\t"
        "mov.f64 xv, 0d0000000000000000;\n\t@p ld.global.cs.f64 v, [%2];\n\t@p ld.global.nc.f64 xv, [%3];\n\t"
        "@p fma.rn.f64 %0, v, xv, %0;\n\t}"
        : "+d"(sum)
        : "r"(w & 1u), "l"(exact + slot), "l"(xp));
  } else {
    (void)exact;
    (void)slot;
    asm("{\n\t.reg .pred p;\n\t.reg .f64 xv;\n\tsetp.ne.u32 p, %1, 0;\n\tmov.f64 xv, 0d0000000000000000;\n\t"
        "@p ld.global.nc.f64 xv, [%2];\n\t@p fma.rn.f64 %0, %3, xv, %0;\n\t}"
        : "+d"(sum)
        : "r"(w & 1u), "l"(xp), "d"(decode_word<K>(w, f)));
  }
}

// Column jump carried by word w: the D-bit delta of a nonzero, or the 31-bit jump of a dummy.
__device__ __forceinline__ uint32_t word_jump(uint32_t w, uint32_t flag, const WordFormat &f) {
  const uint32_t upper = w >> 1;
  return flag ? (upper & f.delta_mask) : upper;
}

} // namespace detail
} // namespace cuda
} // namespace pspmv
