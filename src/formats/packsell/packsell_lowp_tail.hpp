// The summation order of a row's COO tail in the PackSELL products with FP32 and FP16 vectors
// (the mixed-precision inner operators): one definition for the host twin (packsell_spmv_f32,
// packsell_spmv.cpp) and the device rows (packsell_lowp_rows.cuh), so the two agree bit for bit.
//
// Row r's tail entries e_0 .. e_{L-1} (CSR order), values rounded to FP32, y_r the regular part:
//   L <= kLowpLongTail:  y_r = fmaf(v_j, x[c_j], y_r) for j = 0 .. L-1 (one thread, serially);
//   L >  kLowpLongTail:  lane l < kLowpTailLanes sums s_l = fmaf(v_j, x[c_j], s_l) over
//                        j = l, l + 32, l + 64, ... (from 0); then the butterfly: for
//                        o = 16, 8, 4, 2, 1, s_l = s_l + s_(l xor o) (every lane ends with the
//                        same value, FP32 addition being commutative); y_r = y_r + s_0.
// The long case is a whole warp's work on the device, so a product's time is not bounded below by
// one thread walking the longest row's tail (power-law rows: docs/mixed.md).
#pragma once
#include <cstdint>

namespace pspmv
{
namespace packsell
{

constexpr int32_t kLowpTailLanes = 32; // the lanes of a long tail's sum (one warp)
constexpr int64_t kLowpLongTail  = 32; // longer tails are summed by kLowpTailLanes lanes

} // namespace packsell
} // namespace pspmv
