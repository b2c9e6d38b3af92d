// Parameters and statistics shared by the inner solvers of PCMIXEDKRYLOV, host and device
// (PETSc-free). The entry and exit of every inner solve (the same on host and device):
//   t = s .* r (FP64), sigma = ||t||_2 (entry_norm of scaling.hpp: a sum of squares scaled by
//                                          a power of two, right over the whole double range);
//                                          sigma == 0 gives z = 0.
//   b_hat = float(t / sigma)                       (unit norm: no FP32/FP16 overflow)
//   x_hat ~= A_hat^-1 b_hat                        (the inner method, FP32 or lower)
//   z = sigma * (s .* double(x_hat))               (s .* x_hat first: no overflow or underflow
//                                                    of sigma * s_i where z is representable)
// So M(2^k r) = 2^k M(r) bit for bit wherever r, t and z stay normal. An inner solve that makes
// no step (a breakdown at its first step) returns the Jacobi step z = s .* (s .* r) instead,
// counted in InnerStats::jacobi_fallbacks.
#pragma once
#include <cstdint>
#include <vector>

namespace pspmv
{
namespace mixed
{

// Inner-outer CG (the PackSELL paper's mixed PCG): at most max_it CG steps in FP32 from
// x_hat = 0 on A_hat, dot products accumulated in FP64. With rtol > 0 it also stops once
// ||r_hat|| <= rtol ||b_hat|| (an early exit; rtol = 0: always max_it steps). A step with
// p^T A_hat p <= 0 (or not finite) ends the solve before that step is applied (a breakdown).
//
// Exact step order (host and device agree on it; CG of Hestenes-Stiefel):
//   x = 0; r = b; p = b; rho = (r, r); rho0 = rho
//   for k = 0 .. max_it-1:
//     w = A p;  pw = (p, w);  if !(pw > 0): breakdown, stop
//     alpha = float(rho / pw);  x += alpha p;  r -= alpha w;  rho' = (r, r)
//     if rtol > 0 and rho' <= rtol^2 rho0, or rho' <= kCgResidualFloor2 rho0: stop (an early exit)
//     beta = float(rho' / rho);  p = r + beta p;  rho = rho'
// The recurred residual's floor: ||r|| <= 2^-50 ||b|| ends the inner CG whatever max_it says. The
// FP32 steps stopped making progress long before (the true residual stalls near FP32's unit
// roundoff, 2^-24), and continued, the recurrence drives r and p into FP32's subnormal range,
// where p^T A p and alpha lose their precision and the solve returns Inf (seen with max_it 3000
// on a 144-row block: r fell to 2e-42, then grew to 1e39).
constexpr double kCgResidualFloor2 = 0x1p-100; // the floor squared, relative to rho0

struct InnerCgParams {
  int32_t max_it = 20;
  double  rtol   = 0.0;
};

// F3R (Suzuki, Iwashita, SC'25; github suzuki-hpc/F3R): FGMRES(m2) in FP32, preconditioned by
// FGMRES(m3) in FP32, preconditioned by m4 Richardson steps in FP16 vectors with an adaptive
// weight (running mean of minimal-residual weights, recomputed every weight_period calls); every
// level multiplies by the same PackSELL copy A_hat. No convergence test inside.
struct F3RParams {
  int32_t m2 = 8, m3 = 4, m4 = 2;
  int32_t weight_period = 64;
};

// Counts since the preconditioner was set up (reset by a new setup).
struct InnerStats {
  int64_t applications     = 0; // inner solves (PCApply calls)
  int64_t inner_its        = 0; // CG steps, or F3R innermost Richardson steps, summed
  int64_t breakdowns       = 0; // inner solves ended by p^T A p <= 0
  int64_t early_exits      = 0; // inner solves ended by rtol or the residual floor (kCgResidualFloor2)
  int64_t jacobi_fallbacks = 0; // inner solves that made no step (z = D^-1 r returned)
  int64_t zero_rhs         = 0; // applications to r = 0 (z = 0)

  InnerStats &operator+=(const InnerStats &o)
  {
    applications += o.applications;
    inner_its += o.inner_its;
    breakdowns += o.breakdowns;
    early_exits += o.early_exits;
    jacobi_fallbacks += o.jacobi_fallbacks;
    zero_rhs += o.zero_rhs;
    return *this;
  }
};

} // namespace mixed
} // namespace pspmv
