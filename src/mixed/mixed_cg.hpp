// Mixed-precision CG with reliable updates (PETSc-free host twin; the KSP type KSPMIXEDCG runs
// it on the host and its device driver mixed_cg_device.hpp runs the same steps on the GPU).
//
// CG on the symmetrically scaled system A_hat y = s .* b, A_hat = D^-1/2 A D^-1/2, s = D^-1/2,
// x = s .* y: Jacobi-preconditioned CG (with the caller's preconditioner M: PCG with M, below).
// The iteration runs on FP32 vectors with a low-precision operator (the PackSELL scaled copy,
// e8m14 by default); the solution is
// accumulated in FP64; every reliable update (Sleijpen & van der Vorst 1996; Clark et al. 2010;
// QUDA's CG) recomputes the true residual r = b - A x in FP64 with the exact matrix, restarts
// the recurrence from it and keeps the search direction, re-orthogonalised against the new
// residual. Convergence is judged on the FP64 true residual ||b - A x||_2 only.
//
// Units: between two reliable updates the FP32 vectors are normalised by sigma = ||s .* r||_2 of
// the last update (r_32 = float(s .* r / sigma)), so that neither a large nor a tiny residual
// leaves FP32's range; the FP64 increment dy (of y) is kept in absolute units.
//
// One step (the order the device driver follows; QUDA's CG with its fused kernels; z = r and
// rz = rho without a preconditioner, below):
//   w = A_lp p (with the row-sum compensation of rowsum_compensation(), when the caller uses it);  pw = (p, w);  pw <= 0 or not finite (or rz, step_breakdown()): a breakdown (below)
//   alpha = float(rz / pw)
//   r = fma(-alpha, w, r);  rho' = (r, r);  rw = (r, w)                        [one kernel]
//   with a preconditioner: z = float((M^-1 (r ./ s)) ./ s);  rz' = (r, z)     [to_pc, the caller's M^-1, from_pc]
//   trigger = sqrt(rho') < delta * max sqrt(rho) since the update, or sqrt(rho') <= tau
//   dy += (sigma * alpha) * p;  unless trigger: p = fma(beta, p, z)             [one kernel]
//     beta = float(rz' / rz)  (Fletcher-Reeves', as PETSc's KSPCG, so that the steps follow FP64
//     CG's also on a Pmat that is not symmetric, e.g. with Dirichlet rows kept as PETSc's ksp
//     ex45 keeps them; Polak-Ribiere's (r', r' - r) / rho = -alpha rw / rho, QUDA's axpyCGNorm,
//     agrees with it only where (r', r) = 0: docs/mixed.md. rw is reduced with rho' in one
//     pass and not used by beta)
// tau = the iterated residual at which the true one would reach the convergence test's target
// (MixedCgOperators::target: the KSP's own, e.g. KSPConvergedDefault's max(rtol ||b||, atol) with
// a nonzero initial guess; absent: max(rtol ||r_0||, atol), the params' test): ||s .* r|| / ||r||
// of the last update times the target, in units of sigma.
//
// A reliable update: x += s .* dy, dy = 0; r = b - A x (exact, FP64); monitor and convergence
// test on ||r||; sigma' = ||s .* r||; the guard (below); r_32 = float(s .* r / sigma');
// p = p - ((r_32, p) / (r_32, r_32)) r_32 (QUDA: "explicitly restore the orthogonality");
// p = r_32 + beta p with beta = (sigma' rho_true) / (sigma rho_iterated) (the true residual's
// square over the iterated one's, the change of units included).
//
// A preconditioner (MixedCgOperators::precondition: u = M^-1 v, M an SPD approximation of A
// applied by the caller in FP64 on the unscaled system, e.g. PETSc's PCApply): PCG in the scaled
// space with M_hat^-1 = S^-1 M^-1 S^-1 (S = diag(s)). z = M_hat^-1 r is v = r ./ s (FP64),
// u = M^-1 v, z = u ./ s rounded to the vectors' precision (FP32 in the low-precision phase,
// FP64 in the FP64 phase). M^-1 is linear: z is in r's units (sigma) and nothing of the units
// changes. rho = (r, r) judges the residuals as above (the trigger, tau, maxrr, the guard's
// f_iter); rz = (r, z) drives the recurrence: alpha = rz / pw, beta = rz' / rz, p = z + beta p.
// At a reliable update: z_T = M_hat^-1 r_T (r_T = r_32 above), rz_true = (r_T, z_T),
// p = p - ((r_T, p) / rz_true) z_T (then (r_T, p) = 0), p = z_T + beta p with beta =
// (sigma' rz_true) / (sigma rz_iterated); a restart: p = z_T. With MixedCgOperators::
// precondition_lowp as well, the low-precision phase forms every z (the steps' and z_T) with it
// instead, z = M_hat_lp^-1 r on the FP32 vectors themselves (e.g. mg_cycle.hpp's FP32 V-cycle, an
// approximation of M_hat^-1 in the same units); the FP64 phase and the breakdown check's rz of the
// true residual keep precondition. Without the hook z = r and
// rz = rho: the method above bit for bit (Jacobi by the scaling alone). A step whose rz (the
// last step's rz', or rz_true after an update) is not positive or not finite breaks down
// (Breakdown::PcIndefinite, PcNonFinite: M is not SPD, or NaN), found with the curvature when
// alpha is formed, before the step changes a vector (step_breakdown()).
//
// The guard keeps the operator's precision up to the matrix. At every reliable update it judges
// the segment since the last one: the iterated residual fell by f_iter = sqrt(rho_end /
// rho_start), at CG's rate on A_lp, which is FP64 CG's as long as the copy is accurate enough;
// the true residual by f_true = sigma' / sigma. The segment is lossy when
//   - the true residual did not decrease (f_true >= 1), or
//   - it departs from the iterated one: dev = ||s .* r_true - sigma r_iter|| / ||s .* r_true||
//     > guard_departure (the copy's error, injected into the new residual), or
//   - the segment needed more than guard_ratio times the iterations per decade of the true
//     residual that the iterated rate predicts: log(f_iter) / log(f_true) > guard_ratio.
// Segments too short to judge: the growth and rate tests need a segment whose iterated residual
// fell by at least min(sqrt(delta), 1/2) (half a full segment's reduction in log, and at least a
// factor 2; segment_judged()): a segment ended early by the target (tau), max_it or a breakdown
// has f_iter near 1, and then f_true / f_iter is the rounding of the last few steps (noise), not
// the copy's rate. Such a segment is judged only by the departure test (an absolute measure of
// the copy's error) and otherwise leaves the count of lossy segments in a row as it was.
// After guard_strikes segments in a row lossy by the rate (at once when the true residual grew
// or departed) the
// precision is raised: raise_precision() (the next value format, e.g. e8m14 -> e8m22), and when
// there is none wider, FP64 CG from the current x (FP64 vectors, the exact matrix as operator,
// the same reliable updates). A breakdown of the low-precision iteration is checked with the
// exact matrix: a direction with p^T A_hat p <= 0 in FP64 ends the solve (Indefinite); otherwise
// the copy is what failed, the precision is
// raised and the iteration restarts from the true residual. A preconditioner's breakdown of the
// low-precision iteration is checked the same way, with rz = (r, M^-1 r) of the FP64 true
// residual: rz <= 0 ends the solve (Indefinite: M is not positive definite), a non-finite rz ends
// it with NanOrInf (M^-1 of a finite r is not finite: no precision of the copy helps), otherwise
// (FP32's rounding of z failed) the precision is raised as above. A breakdown of the FP64 phase
// ends the solve: DivergedIndefinite for p^T A_hat p <= 0 or rz <= 0, DivergedNanOrInf for a
// non-finite p^T A_hat p, (r', r') or rz (fp64_breakdown_reason(), the same on host and device).
//
// The guard covers a reduced-precision preconditioner (precondition_lowp) too: its rounding does
// not make the iterated residual depart from the true one, it slows both. A segment of the
// low-precision phase that reaches guard_pc_steps steps without a trigger (a V-cycle reduces the
// residual about tenfold per step, so 20 steps are a stall) ends with a reliable update (the
// direction kept, as at any update), then the preconditioner is checked on the new residual
// r_T: z_lp = precondition_lowp(r_T) against z = M_hat^-1 r_T in FP64; ||z_lp - z|| / ||z||
// beyond guard_pc_departure (or not finite) raises the precision at once, as above (the
// caller's raise rebuilds its reduced-precision preconditioner with the operator; when none is
// left, FP64 CG with precondition; guard_pc_departure 0 or guard_pc_steps 0: no check, no
// forced update). Within it, the slowness is the preconditioner's own, which FP64 shares: the
// iteration goes on. The threshold is four times the operator's guard_departure by default:
// z is the caller's FP64 preconditioner, and where precondition_lowp differs from it by design
// (KSPMIXEDCG's exact dense coarse solve where PCGAMG's coarse levels smooth: 0.01-0.035 on 3-D
// Laplacians) the check measures that difference too; a broken cycle differs by 0.8-1.
#pragma once
#include "core/host_device.hpp"
#include "scaled_copy.hpp"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

namespace pspmv
{
namespace mixed
{

struct MixedCgParams {
  double  delta              = 0.1;  // reliable update at ||r_iter|| < delta * max ||r_iter|| since the last one
  double  rtol               = 1e-8; // the default test (MixedCgOperators::converged absent): ||r|| <= max(rtol ||r_0||, atol)
  double  atol               = 0.0;
  double  dtol               = 1e5;   //   diverged at ||r|| > dtol ||r_0||
  int64_t max_it             = 10000; // CG steps (low precision and FP64 together)
  bool    guard              = true;  // false: the operator's precision is never raised by the guard
  double  guard_ratio        = 1.5;   // a segment is lossy above this ratio (above); 0: not this test
  double  guard_departure    = 0.05;  // ... or when the true residual departs from the iterated one by more; 0: not this test
  int     guard_strikes      = 2;     // lossy segments in a row that raise the precision
  int64_t guard_pc_steps     = 20;    // a reduced-precision preconditioner: a segment this long is checked against the FP64 one (0: never)
  double  guard_pc_departure = 0.2;   // ... and raises the precision when the two differ by more (0: no check)
  bool    start_fp64         = false; // FP64 CG from the start (a matrix that needed it before)
};

// Why a solve stopped (the PETSc glue maps these to KSPConvergedReason).
enum class MixedCgReason : int {
  Iterating          = 0,
  ConvergedRtol      = 2,
  ConvergedAtol      = 3,
  DivergedIts        = -3,
  DivergedDtol       = -4,
  DivergedNanOrInf   = -9,
  DivergedIndefinite = -10, // p^T A p <= 0 with the exact matrix: A is not SPD
};

struct MixedCgResult {
  MixedCgReason reason               = MixedCgReason::Iterating;
  int64_t       its                  = 0;     // CG steps, low precision and FP64
  int64_t       lowp_its             = 0;     // of which with the low-precision operator
  int64_t       reliable_updates     = 0;     // true residuals computed after the first
  int           raises               = 0;     // precision raises (guard or breakdown), FP64 fallback included
  bool          fp64                 = false; // the solve ended in the FP64 phase
  int64_t       lowp_breakdowns      = 0;     // breakdowns of the low-precision iteration (p^T A_lp p <= 0, or the preconditioner's rz)
  int64_t       pc_applications      = 0;     // calls of the preconditioner's hooks (MixedCgOperators::precondition and precondition_lowp)
  int64_t       pc_lowp_applications = 0;     // of which of precondition_lowp
  int64_t       pc_checks            = 0;     // segments of guard_pc_steps steps ended to check precondition_lowp against precondition
  double        pc_departure         = 0;     // the last check's ||z_lp - z|| / ||z||
  double        rnorm0               = 0;     // ||b - A x_0||
  double        rnorm                = 0;     // the last true residual ||b - A x||
  // per reliable update (not the start): CG steps so far, true residual, iterated/true reduction
  struct Update {
    int64_t its;
    double  rnorm, f_iter, f_true;
    double  departure; // ||s .* r_true - sigma r_iter|| / ||s .* r_true|| (0 after a breakdown)
    bool    lossy;
  };
  std::vector<Update> updates;
};

// What the solver needs from its caller. Vectors are the local rows (n of them); on several
// ranks the products exchange their halo themselves and the reductions sum over the ranks.
struct MixedCgOperators {
  // w = A_lp p: the low-precision operator (the scaled copy), FP32 vectors.
  std::function<void(const float *p, float *w)> lowp_product;
  // y = A x in FP64 with the exact matrix.
  std::function<void(const double *x, double *y)> exact_product;
  // v[0 .. k) summed / maximised over the ranks (absent: one rank).
  std::function<void(double *v, int k)> allreduce_sum, allreduce_max;
  // Raises the precision of lowp_product; false when there is no wider low-precision format
  // (the solve continues in FP64). Absent: straight to FP64.
  std::function<bool()> raise_precision;
  // The convergence test on the FP64 true residual (its: CG steps so far); absent: the
  // params' rtol, atol, dtol relative to ||r_0||.
  std::function<MixedCgReason(int64_t its, double rnorm)> converged;
  // The true residual norm at which that test converges, asked once after its test at step 0
  // (rnorm0: ||r_0||); the reliable-update trigger aims the iterated residual at it (tau).
  // Absent: max(rtol ||r_0||, atol), the params' test.
  std::function<double(double rnorm0)> target;
  // Called with the true residual at the start and at every reliable update.
  std::function<void(int64_t its, double rnorm)> monitor;
  // u = M^-1 v in FP64 on the user's (unscaled) system, n local rows: the preconditioner M (SPD);
  // on several ranks collective (called on every rank at the same points). Absent: the method's
  // own Jacobi scaling only (the method without a preconditioner, unchanged).
  std::function<void(const double *v, double *u)> precondition;
  // z = M_hat^-1 r in the scaled units of the FP32 vectors (n local rows floats, M_hat^-1 =
  // S^-1 M^-1 S^-1 as above, of an SPD M; r must not be written): the preconditioner of the
  // low-precision phase, in place of precondition's widening, FP64 M^-1 and narrowing; linear, so
  // the units of r (sigma) carry over to z. Used only with precondition, which the FP64 phase and
  // the rz check of a breakdown keep using: both should apply (approximately) the same M. On
  // several ranks collective. Host twin only (the device driver has no such hook).
  std::function<void(const float *r, float *z)> precondition_lowp;
};

// Solves A x = b from the initial guess in x (n local rows; s = D^-1/2 on them).
MixedCgResult mixed_cg(size_t n, const double *s, const double *b, double *x, const MixedCgParams &p, const MixedCgOperators &ops);

// The reliable-update trigger of a step (host and device): the iterated residual rn fell below
// delta times its largest value maxrr since the last update, or below tau.
PSPMV_HD bool reliable_trigger(double rn, double maxrr, double delta, double tau)
{
  return rn < delta * maxrr || rn <= tau;
}

// Whether a segment whose iterated residual fell by f_iter is long enough for the growth and
// rate tests: f_iter <= judge_below, judge_below = guard_judge_below(delta) = min(sqrt(delta),
// 1/2) (the rule above).
double      guard_judge_below(double delta);
inline bool segment_judged(double f_iter, double judge_below)
{
  return f_iter <= judge_below;
}

// The guard's verdict on a segment: lossy when it departs from the iterated one, dev =
// ||s .* r_true - sigma r_iter|| / ||s .* r_true|| > departure (departure > 0), and, when it is
// long enough to judge (segment_judged(f_iter, judge_below)), when the true residual did not
// decrease or when log(f_iter) / log(f_true) > ratio (ratio > 0). f_iter >= 1 (a segment ended
// by max_it or a breakdown before any progress) is never judged lossy. judge_below = 1: every
// segment with progress is judged by all three tests.
bool lossy_segment(double f_iter, double f_true, double dev, double ratio, double departure, double judge_below = 1.0);

// The guard's state over a solve: lossy segments in a row, and whether to raise the precision.
struct PrecisionGuard {
  double ratio       = 1.5;
  double departure   = 0.05;
  int    strikes     = 2;
  double judge_below = 1.0; // guard_judge_below(delta) in a solve
  int    in_row      = 0;
  // After a reliable update: true when the precision should be raised now (counts reset). A
  // segment too short to judge that is not lossy leaves in_row as it is.
  bool update(double f_iter, double f_true, double dev, bool *lossy);
};

// A step's breakdown (host and device): none, a curvature p^T A p <= 0 or a step alpha that is 0
// (finite numbers: the operator is not positive definite on p), or a non-finite p^T A p or
// (r', r') (NaN or Inf in the iteration); with a preconditioner, rz = (r, z) <= 0 (PcIndefinite:
// M^-1 is not positive definite on r) or not finite (PcNonFinite).
enum class Breakdown : int {
  None         = 0,
  Curvature    = 1,
  NonFinite    = 2,
  PcIndefinite = 3,
  PcNonFinite  = 4
};
PSPMV_HD Breakdown curvature_breakdown(double pw)
{
  if (pw != pw || pw - pw != 0.0) return Breakdown::NonFinite; // NaN or Inf
  return pw > 0.0 ? Breakdown::None : Breakdown::Curvature;
}
PSPMV_HD Breakdown pc_breakdown(double rz)
{
  if (rz != rz || rz - rz != 0.0) return Breakdown::PcNonFinite; // NaN or Inf
  return rz > 0.0 ? Breakdown::None : Breakdown::PcIndefinite;
}
PSPMV_HD bool is_pc_breakdown(Breakdown b)
{
  return b == Breakdown::PcIndefinite || b == Breakdown::PcNonFinite;
}
// The breakdown of a step when its alpha = rz / pw is formed (host and device): with a
// preconditioner (pc) rz first, then the curvature pw; without one only pw (rz is rho then).
PSPMV_HD Breakdown step_breakdown(double pw, double rz, bool pc)
{
  if (pc) {
    const Breakdown b = pc_breakdown(rz);
    if (b != Breakdown::None) return b;
  }
  return curvature_breakdown(pw);
}
// sqrt(e2 / z2), the relative departure ||e|| / ||z|| from the squared norms (summed over the
// ranks): 0 for e2 = z2 = 0, infinite for e2 > 0 = z2, NaN stays NaN (judged lossy).
PSPMV_HD double relative_departure(double e2, double z2)
{
  return z2 > 0 ? sqrt(e2 / z2) : (e2 > 0 ? INFINITY : (e2 == 0 ? 0.0 : NAN));
}
// How a breakdown of the FP64 phase (the exact matrix as operator) ends the solve:
// DivergedIndefinite for a curvature or rz <= 0, DivergedNanOrInf for non-finite numbers.
PSPMV_HD MixedCgReason fp64_breakdown_reason(Breakdown b)
{
  return b == Breakdown::NonFinite || b == Breakdown::PcNonFinite ? MixedCgReason::DivergedNanOrInf : MixedCgReason::DivergedIndefinite;
}

// The end of a step (host and device) from rho_new = (r', r') (finite) and rz_new = (r', z')
// (rho_new without a preconditioner): the largest iterated residual maxrr since the update, the
// reliable-update trigger (reliable_trigger() on sqrt(rho_new), or its >= end_at: its counts this
// step, end_at is MixedCgDecisions::segment_end(), the maximum iterations or the preconditioner
// check's bound), Fletcher-Reeves' beta = rz_new / rz in double (the caller rounds it to its
// vectors' precision), then rho = rho_new, rz_prev = rz, rz = rz_new. Returns the trigger. rz_new
// is judged by the next step (step_breakdown()).
PSPMV_HD bool end_step(double rho_new, double rz_new, int64_t its, int64_t end_at, double delta, double tau, double &maxrr, double &rho, double &rz, double &rz_prev, double *beta)
{
  const double rn    = sqrt(rho_new);
  maxrr              = fmax(maxrr, rn);
  const bool trigger = reliable_trigger(rn, maxrr, delta, tau) || its >= end_at;
  *beta              = rz_new / rz;
  rho                = rho_new;
  rz_prev            = rz;
  rz                 = rz_new;
  return trigger;
}

// The scalars of the recurrence since the last reliable update (the device driver mirrors them in
// its device state): rho = (r, r) of the iterated residual, rz = (r, z) (rho without a
// preconditioner), rz_prev the rz before the last step.
struct MixedCgSegment {
  double sigma = 0, rho = 0, rho_start = 0, maxrr = 0, tau = 0, rz = 0, rz_prev = 0;
};

// What a phase does after a step's breakdown or trigger (MixedCgDecisions::after_breakdown(),
// after_trigger()): restart the direction from the true residual and go on, end the solve, or go
// on in FP64 (no wider low-precision operator left).
enum class PhaseNext {
  Continue,
  End,
  Fp64
};

// The decisions of a solve, written once for the host twin and the device driver (which do the
// vector work and call these, host code): the convergence test, the start, the record of each
// true residual, the guard, the restart of the direction, the breakdown and trigger handling.
// The caller's test, monitor and target are MixedCgOperators' (absent: the params'); the device
// driver passes them wrapped so that its timer stops around them.
class MixedCgDecisions {
public:
  MixedCgDecisions(const MixedCgParams &p, std::function<MixedCgReason(int64_t, double)> converged, std::function<void(int64_t, double)> monitor, std::function<double(double)> target);

  MixedCgResult  res;
  MixedCgSegment seg;
  double         rn = 0, ttol = 0; // the last true residual; the test's target
  bool           restart = true;   // the direction restarts (p = z) at the next restart_coefficients()

  // The test on the true residual rn at step its: the caller's, else max(rtol ||r_0||, atol) and
  // dtol relative to ||r_0||.
  MixedCgReason test(int64_t its, double rn) const;
  // The start from the true residual rn0 = ||b - A x_0||: the monitor and test at step 0, the
  // target. Returns whether the solve iterates (not converged, max_it > 0).
  bool start(double rn0);
  // A reliable update's true residual rn: counted, monitored, tested (res.reason).
  void record(double rn);
  // The end of a reliable update: the segment's reductions f_true = sigma_new / seg.sigma and
  // f_iter = sqrt(seg.rho / seg.rho_start), the guard's verdict when judge (the low-precision
  // phase after a trigger), the record in res.updates, and DivergedIts at max_it when the test
  // left the solve iterating. Returns whether the solve ends; *raise: the guard asks for a wider
  // operator.
  bool finish_update(bool judge, double sigma_new, double dev, bool *raise);
  // The new segment from the true residual (sigma_new = ||s .* r||, units of the FP32 vectors;
  // rho_true = (r_T, r_T), rz_true = (r_T, z_T) (rho_true without a preconditioner), rp =
  // (r_T, p) of r_T = s .* r / sigma', z_T = M_hat^-1 r_T): p = z_T + beta (p - coef z_T),
  // re-orthogonalised and in the new units, or p = z_T (*coef = *beta = 0) after a restart;
  // the segment's scalars set. Returns whether the direction restarts.
  bool restart_coefficients(double sigma_new, double rho_true, double rz_true, double rp, double *coef, double *beta);

  // After a step's breakdown (kind) in the low-precision (lowp) or FP64 phase. true_update(judge,
  // &raise) makes the reliable update (true: the solve ends), curvature() is p^T A_hat p with the
  // exact matrix, true_rz() is (r, M^-1 r) of the FP64 true residual r (asked for a
  // preconditioner's breakdown only), raise() the caller's raise of the precision (false: none
  // wider).
  template <class TrueUpdate, class Curvature, class TrueRz, class Raise>
  PhaseNext after_breakdown(bool lowp, Breakdown kind, TrueUpdate &&true_update, Curvature &&curvature, TrueRz &&true_rz, Raise &&raise)
  {
    bool r = false;
    if (!lowp) { // FP64 with the exact matrix: A or M is not SPD (or the numbers broke)
      if (!true_update(false, &r)) res.reason = fp64_breakdown_reason(kind);
      return PhaseNext::End;
    }
    ++res.lowp_breakdowns;
    if (true_update(false, &r)) return PhaseNext::End;
    if (is_pc_breakdown(kind)) {
      const double c = true_rz();
      if (!std::isfinite(c)) { // M^-1 of the finite true residual is not finite: no copy helps
        res.reason = MixedCgReason::DivergedNanOrInf;
        return PhaseNext::End;
      }
      if (!(c > 0.0)) { // (r, M^-1 r) <= 0 in FP64: M is indefinite
        res.reason = MixedCgReason::DivergedIndefinite;
        return PhaseNext::End;
      }
    } else {
      const double c = curvature();
      if (std::isfinite(c) && !(c > 0.0)) {
        res.reason = MixedCgReason::DivergedIndefinite;
        return PhaseNext::End;
      }
    }
    // the copy (or FP32's z) failed where A and M did not: a wider format, or FP64; the direction restarts
    ++res.raises;
    restart = true;
    return raise() ? PhaseNext::Continue : PhaseNext::Fp64;
  }
  // The step at which a segment that started at step seg_start ends without a trigger of the
  // residual (end_step()'s end_at): the maximum iterations, and with a reduced-precision
  // preconditioner in the low-precision phase (pc_lowp) seg_start + guard_pc_steps (the header's
  // guard).
  int64_t segment_end(bool pc_lowp, int64_t seg_start) const { return pc_lowp && p_.guard && p_.guard_pc_steps > 0 && p_.guard_pc_departure > 0.0 ? std::min(p_.max_it, seg_start + p_.guard_pc_steps) : p_.max_it; }
  // Whether the trigger at step its of a segment that started at seg_start was segment_end()'s
  // preconditioner bound, not the residual's (reliable_trigger() on the segment's scalars after
  // end_step()) nor the maximum iterations.
  bool stalled(bool pc_lowp, int64_t seg_start, int64_t its) const { return its < p_.max_it && its >= segment_end(pc_lowp, seg_start) && !reliable_trigger(std::sqrt(seg.rho), seg.maxrr, p_.delta, seg.tau); }
  // After a low-precision segment that reached segment_end()'s preconditioner bound (stalled()):
  // the reliable update (judged as after a trigger; the direction kept), then, unless that raised
  // or ended the solve, pc_departure() = ||z_lp - z|| / ||z|| of the new residual judged against
  // guard_pc_departure: beyond it the precision is raised (the direction restarts).
  template <class TrueUpdate, class PcDeparture, class Raise>
  PhaseNext after_stall(TrueUpdate &&true_update, PcDeparture &&pc_departure, Raise &&raise)
  {
    bool r = false;
    if (true_update(true, &r)) return PhaseNext::End;
    if (!r) {
      ++res.pc_checks;
      res.pc_departure = pc_departure();
      r                = !(res.pc_departure <= p_.guard_pc_departure);
    }
    if (!r) return PhaseNext::Continue;
    ++res.raises;
    restart = true;
    return raise() ? PhaseNext::Continue : PhaseNext::Fp64;
  }
  // After a step that triggered a reliable update (the low-precision phase judges its segment).
  template <class TrueUpdate, class Raise>
  PhaseNext after_trigger(TrueUpdate &&true_update, Raise &&raise)
  {
    bool r = false;
    if (true_update(true, &r)) return PhaseNext::End;
    if (!r) return PhaseNext::Continue;
    ++res.raises;
    restart = true; // the direction was built with the copy judged lossy: p = r
    return raise() ? PhaseNext::Continue : PhaseNext::Fp64;
  }

private:
  const MixedCgParams                          &p_;
  std::function<MixedCgReason(int64_t, double)> converged_;
  std::function<void(int64_t, double)>          monitor_;
  std::function<double(double)>                 target_;
  PrecisionGuard                                guard_;
};

// The row-sum compensation of a low-precision copy: c_i = (A_hat 1)_i - (A_lp 1)_i, the rounding
// of row i's values summed, kept in FP32 and added to the copy's product as a diagonal:
// w = A_lp p + c .* p. Then (A_lp + diag(c)) 1 = A_hat 1 up to FP32: the copy's error no longer
// acts on the constant vector, which is where the smooth, slowly converging modes of PDE
// matrices live (each reliable update injects the copy's error on them back into the residual,
// and CG must resolve them again: on a 7-point Laplacian 48^3 with e8m14, 161 steps without and
// 127 with it, FP64 CG 126). The matrix stays symmetric.
// s: D^-1/2; As: (A s)_i in FP64 with the exact matrix (so s_i (A s)_i = (A_hat 1)_i);
// lowp_rowsums: (A_lp 1)_i, the copy's decoded values summed in FP64 (packsell_spmv with ones).
std::vector<float> rowsum_compensation(size_t n, const double *s, const double *As, const double *lowp_rowsums);

// The scaled off-diagonal block of an MPI matrix: Ao's values a_ij * (s_i * t_j) (s: the rows'
// D^-1/2, t: the ghost columns'), in PackSELL with opt (Ao: rows x ghost columns, the columns
// numbered as the halo vector). Throws ValueRangeError (row, halo column) for a non-finite
// entry or a scaled value beyond double or the value format, as build_scaled_copy(). With
// dither.on the values are dithered with the global row dither.row0 + r and column gcols[c].
PackSellMatrix build_scaled_offdiag(const CsrView &Ao, const double *s, const double *t, const PackSellOptions &opt, const CopyDither &dither = CopyDither{}, const int64_t *gcols = nullptr);

} // namespace mixed
} // namespace pspmv
