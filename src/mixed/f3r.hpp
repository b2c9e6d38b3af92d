// Host twin of the F3R inner solver (PETSc-free): the nested FGMRES(m2) FP32 / FGMRES(m3) FP32 /
// Richardson(m4) FP16-vector scheme of F3R (Suzuki, Iwashita, SC'25; github suzuki-hpc/F3R,
// work/src/f3r-gpu.cpp) on the scaled PackSELL copy: the algorithm the device solver
// (f3r_device.hpp) runs. FP16 vectors are emulated on the host by rounding to binary16 after
// each operation that writes them (value_codec's FP16), products accumulate in FP32.
// The exact steps, and where they differ from the authors' code, are in docs/mixed-f3r.md.
//
// Every level multiplies by the same A (the PC's copy A_hat), starts from x = 0 and runs a fixed
// number of steps. FGMRES(m) of levels 2 and 3, on an input b of unit norm (no normalisation,
// as F3R's normalize = false; the entry scaling and the Arnoldi vectors make it unit norm):
//   V_0 = b; g = (1, 0, ..., 0); ncols = 0
//   for j = 0 .. m-1:
//     Z_j = M(V_j)                     (the next level; level 3's M is the Richardson call)
//     w = A Z_j                        (packsell_spmv_f32)
//     h_kj = (w, V_k), k <= j          (classical Gram-Schmidt: all against the same w; FP64 sums)
//     w -= sum_k float(h_kj) V_k       (FP32, k ascending)
//     h_j+1,j = ||w||                  (FP64 sum)
//     the earlier Givens rotations on column j, then a new one (FP64): den = sqrt(a^2 + b^2)
//     column j not finite or den == 0: stop (ncols = j); else ncols = j + 1, g rotated
//     h_j+1,j == 0: stop (exact solution in the span);  V_j+1 = w * float(1 / h_j+1,j)
//   y = R^-1 g (ncols x ncols, FP64); x = sum_k float(y_k) Z_k (FP32, k ascending; 0 if ncols = 0)
// Level 4, Richardson with m4 steps on FP16 vectors and M = I (A_hat has a unit diagonal: its
// Jacobi preconditioner is the identity; F3R's level 4 uses SD-AINV), call slot q:
//   period = (q + 1) % weight_period == 0
//   h = fp16(v); x = 0; for k = 0 .. m4-1:
//     d = (k == 0) ? h : fp16(h - fp16(A x))        (A x: FP32 sums rounded to FP16 once)
//     w_k = period ? (A d, d) / (A d, A d) : weight[k]   (FP64; A d rounded to FP16; a sample
//           that is not finite, or (A d, A d) == 0, uses weight[k] instead)
//     x = fp16(x + float(w_k) * d)                  (FP32 arithmetic, one rounding to FP16)
//   period: samples += 1; weight_sum[k] += w_k; weight[k] = float(weight_sum[k] / (samples + 1))
// The slots are numbered m2*m3 per solve, counted even where a stop above skips them.
#pragma once
#include "inner_solver.hpp"
#include "scaled_copy.hpp"
#include <vector>

namespace pspmv
{
namespace mixed
{

// The Richardson weights' running state (F3R's adaptive weight): kept between applications,
// reset by f3r_reset (a new setup). F3R initialises sum = ome = 1 and counts that initial 1 as
// a sample (its den = calls / period starts at 2 at the first period): hence samples + 1.
struct F3RState {
  std::vector<double> weight_sum;  // m4 entries: 1 + the minimal-residual weights of the periods
  std::vector<float>  weight;      // m4 entries: the weights in use, float(weight_sum / (samples + 1))
  int64_t             calls   = 0; // innermost call slots so far (m2*m3 per solve)
  int64_t             samples = 0; // period calls that ran
};

// Resets st for p: weight_sum = weight = 1 (m4 entries), calls = samples = 0.
void f3r_reset(const F3RParams &p, F3RState *st);

// Outcome of one F3R solve.
struct F3RResult {
  int32_t level2_steps     = 0; // columns FGMRES(m2) kept (0: no step, the Jacobi fallback)
  int64_t richardson_steps = 0; // innermost Richardson steps run (m4 per call that ran)
};

// x ~= A^-1 b by one F3R inner solve as above (b, x: A.rows floats, ||b|| = 1 up to FP32
// rounding; A square; x is overwritten). st carries the weights: an st whose vectors do not
// have p.m4 entries is reset first. Throws FormatError for m2, m3, m4 or weight_period < 1.
F3RResult f3r_solve(const PackSellMatrix &A, const float *b, float *x, const F3RParams &p, F3RState *st);

// The preconditioner's host inner solve with F3R: z = M(r) for the scaled copy c (r, z:
// c.s.size() doubles), entry and exit as inner_solver.hpp says (r = 0: z = 0, counted in
// zero_rhs, the call slots still advance; no FGMRES(m2) step: z = s .* (s .* r), counted in
// jacobi_fallbacks); applications and inner_its (Richardson steps) counted in *stats.
void apply_inner_f3r(const ScaledCopy &c, const F3RParams &p, const double *r, double *z, F3RState *st, InnerStats *stats);

} // namespace mixed
} // namespace pspmv
