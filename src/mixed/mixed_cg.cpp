// Mixed-precision CG with reliable updates, host twin (mixed_cg.hpp).
#include "mixed_cg.hpp"
#include "scaling.hpp"
#include <algorithm>
#include <cmath>
#include <type_traits>

namespace pspmv
{
namespace mixed
{

double guard_judge_below(double delta)
{
  return std::min(std::sqrt(delta), 0.5);
}

bool lossy_segment(double f_iter, double f_true, double dev, double ratio, double departure, double judge_below)
{
  if (!(f_iter < 1.0)) return false; // no iterated progress to judge against
  if (departure > 0.0 && !(dev <= departure)) return true;
  if (!segment_judged(f_iter, judge_below)) return false; // too short: f_true / f_iter is noise
  if (!(f_true < 1.0)) return true;                       // the true residual did not decrease (or is NaN)
  if (!(ratio > 0.0) || f_iter <= 0.0) return false;
  return std::log(f_iter) / std::log(f_true) > ratio;
}

bool PrecisionGuard::update(double f_iter, double f_true, double dev, bool *lossy)
{
  *lossy = lossy_segment(f_iter, f_true, dev, ratio, departure, judge_below);
  if (*lossy) ++in_row;
  else if (f_iter < 1.0 && segment_judged(f_iter, judge_below)) in_row = 0; // a short segment: no verdict
  // growth and departure are the copy's error itself: at once; the rate test needs strikes
  const bool departed = departure > 0.0 && !(dev <= departure);
  const bool at_once  = *lossy && f_iter < 1.0 && (departed || !(f_true < 1.0));
  if (*lossy && (at_once || in_row >= std::max(strikes, 1))) {
    in_row = 0;
    return true;
  }
  return false;
}

MixedCgDecisions::MixedCgDecisions(const MixedCgParams &p, std::function<MixedCgReason(int64_t, double)> converged, std::function<void(int64_t, double)> monitor, std::function<double(double)> target) :
  p_(p), converged_(std::move(converged)), monitor_(std::move(monitor)), target_(std::move(target))
{
  guard_.ratio       = p.guard_ratio;
  guard_.strikes     = p.guard_strikes;
  guard_.departure   = p.guard_departure;
  guard_.judge_below = guard_judge_below(p.delta);
}

MixedCgReason MixedCgDecisions::test(int64_t its, double r) const
{
  if (converged_) return converged_(its, r);
  if (!std::isfinite(r)) return MixedCgReason::DivergedNanOrInf;
  if (r <= ttol) return r < p_.atol ? MixedCgReason::ConvergedAtol : MixedCgReason::ConvergedRtol;
  if (its > 0 && p_.dtol > 0 && r > p_.dtol * res.rnorm0) return MixedCgReason::DivergedDtol;
  return MixedCgReason::Iterating;
}

bool MixedCgDecisions::start(double rn0)
{
  rn = res.rnorm0 = res.rnorm = rn0;
  ttol                        = std::max(p_.rtol * rn0, p_.atol);
  if (monitor_) monitor_(0, rn0);
  res.reason = test(0, rn0);
  if (target_) ttol = target_(rn0); // the test's own target (set by its call at step 0)
  if (res.reason == MixedCgReason::Iterating && p_.max_it <= 0) res.reason = MixedCgReason::DivergedIts;
  restart = true; // p = r at the start
  return res.reason == MixedCgReason::Iterating;
}

void MixedCgDecisions::record(double r)
{
  rn = res.rnorm = r;
  ++res.reliable_updates;
  if (monitor_) monitor_(res.its, r);
  res.reason = test(res.its, r);
}

bool MixedCgDecisions::finish_update(bool judge, double sigma_new, double dev, bool *raise)
{
  const double f_true = seg.sigma > 0 ? sigma_new / seg.sigma : 1.0;
  const double f_iter = seg.rho_start > 0 ? std::sqrt(seg.rho / seg.rho_start) : 1.0;
  bool         lossy  = false;
  *raise              = false;
  if (judge && p_.guard) *raise = guard_.update(f_iter, f_true, dev, &lossy);
  res.updates.push_back({res.its, res.rnorm, f_iter, f_true, dev, lossy});
  if (res.reason == MixedCgReason::Iterating && res.its >= p_.max_it) res.reason = MixedCgReason::DivergedIts;
  return res.reason != MixedCgReason::Iterating;
}

bool MixedCgDecisions::restart_coefficients(double sigma_new, double rho_true, double rz_true, double rp, double *coef, double *beta)
{
  const double sig = sigma_new > 0 ? sigma_new : 1.0;
  const bool   r   = restart || !(seg.rz_prev > 0) || !(seg.sigma > 0);
  // CG's beta = (r', z') / (r, z) of the step that ended the segment (r its residual before the
  // step: p is still that step's direction), with the change of units; coef makes (r_T, p) = 0
  *coef     = r ? 0.0 : rp / rz_true;
  *beta     = r ? 0.0 : (sig * rz_true) / (seg.sigma * seg.rz_prev);
  restart   = false;
  seg.sigma = sig;
  seg.rz    = rz_true;
  seg.rho = seg.rho_start = rho_true;
  seg.maxrr               = std::sqrt(rho_true);
  seg.tau                 = rn > 0 ? seg.maxrr * (ttol / rn) : 0.0;
  return r;
}

std::vector<float> rowsum_compensation(size_t n, const double *s, const double *As, const double *lowp_rowsums)
{
  std::vector<float> c(n);
  for (size_t i = 0; i < n; ++i) {
    const double d = s[i] * As[i] - lowp_rowsums[i];
    c[i]           = std::isfinite(d) ? float(d) : 0.0f;
  }
  return c;
}

PackSellMatrix build_scaled_offdiag(const CsrView &Ao, const double *s, const double *t, const PackSellOptions &opt, const CopyDither &dither, const int64_t *gcols)
{
  check_csr(Ao);
  std::vector<double> v(size_t(Ao.nnz()));
  for (int32_t r = 0; r < Ao.rows; ++r)
    for (int32_t k = Ao.rowptr[r]; k < Ao.rowptr[r + 1]; ++k) {
      const double a = Ao.values[k], sr = s[r], sc = t[Ao.colidx[k]];
      if (!std::isfinite(a)) throw detail::non_finite_error(r, Ao.colidx[k], a);
      v[size_t(k)] = scaled_value(a, sr, sc);
      if (!scaled_value_fits(a, v[size_t(k)])) throw detail::scaled_range_error(r, Ao.colidx[k], a, v[size_t(k)], sr, sc);
    }
  if (dither.on && gcols) {
    int m = 0, emin = 0;
    dither_bits(opt.value_format, &m, &emin);
    for (int32_t r = 0; r < Ao.rows; ++r)
      for (int32_t k = Ao.rowptr[r]; k < Ao.rowptr[r + 1]; ++k) v[size_t(k)] = dithered_value(v[size_t(k)], dither.row0 + r, gcols[Ao.colidx[k]], m, emin);
  }
  CsrView S = Ao;
  S.values  = v.data();
  return build_packsell(S, opt);
}

namespace
{

// One solve's state; the low-precision phase runs on float vectors, the FP64 fallback on double.
class Run {
public:
  Run(size_t n, const double *s, const double *b, double *x, const MixedCgParams &p, const MixedCgOperators &ops) :
    n_(n),
    s_(s),
    b_(b),
    x_(x),
    p_(p),
    ops_(ops),
    pc_(static_cast<bool>(ops.precondition)),
    pc_lowp_(pc_ && static_cast<bool>(ops.precondition_lowp)),
    r_(n),
    t_(n),
    dy_(n, 0.0),
    pc_v_(pc_ ? n : 0),
    pc_u_(pc_ ? n : 0),
    dc_(p, ops.converged, ops.monitor, ops.target)
  {
  }

  MixedCgResult solve()
  {
    if (!dc_.start(true_residual())) return dc_.res;
    sigma_new_ = scaled_residual_norm();
    std::vector<float> p32;
    if (!p_.start_fp64 && phase<float>(p32)) return dc_.res;
    // the FP64 fallback from the current x (the direction restarts after a raise)
    dc_.res.fp64 = true;
    std::vector<double> p64(p32.begin(), p32.end());
    phase<double>(p64);
    return dc_.res;
  }

private:
  double sum1(double v) const
  {
    if (ops_.allreduce_sum) ops_.allreduce_sum(&v, 1);
    return v;
  }
  void sum(double *v, int k) const
  {
    if (ops_.allreduce_sum) ops_.allreduce_sum(v, k);
  }
  void   sum2(double *v) const { sum(v, 2); }
  double max1(double v) const
  {
    if (ops_.allreduce_max) ops_.allreduce_max(&v, 1);
    return v;
  }

  // ||v||_2 over the ranks, v = w .* u (w null: 1), as entry_norm of scaling.hpp: a sum of
  // squares scaled by a power of two, right over the whole double range.
  double global_norm(const double *w, const double *u) const
  {
    double amax = 0.0;
    for (size_t i = 0; i < n_; ++i) amax = nan_max(amax, std::fabs(w ? w[i] * u[i] : u[i]));
    amax               = max1(amax);
    const double scale = norm_scale(amax);
    double       sum   = 0.0;
    for (size_t i = 0; i < n_; ++i) {
      const double e = (w ? w[i] * u[i] : u[i]) * scale;
      sum += e * e;
    }
    return std::sqrt(sum1(sum)) / scale;
  }

  // r = b - A x (FP64, exact); returns ||r||.
  double true_residual()
  {
    ops_.exact_product(x_, t_.data());
    for (size_t i = 0; i < n_; ++i) r_[i] = b_[i] - t_[i];
    return global_norm(nullptr, r_.data());
  }
  double scaled_residual_norm() const { return global_norm(s_, r_.data()); }

  // x += s .* dy, dy = 0
  void flush()
  {
    for (size_t i = 0; i < n_; ++i) {
      x_[i] += s_[i] * dy_[i];
      dy_[i] = 0.0;
    }
  }

  // The true residual after a segment (or a breakdown): flush, r, monitor, test, sigma'; the
  // guard's verdict in *raise (low-precision phase only). Returns true when the solve ends.
  template <class T>
  bool true_update(bool judge, bool *raise, const std::vector<T> *rit = nullptr)
  {
    flush();
    dc_.record(true_residual());
    sigma_new_ = scaled_residual_norm();
    // departure: ||s .* r_true - sigma r_iter|| / ||s .* r_true||
    double dev = 0.0;
    if (rit && rit->size() == n_ && sigma_new_ > 0) {
      double dd[2] = {0.0, 0.0};
      for (size_t i = 0; i < n_; ++i) {
        const double t = s_[i] * r_[i] / dc_.seg.sigma, e = t - double((*rit)[i]);
        dd[0] += e * e;
        dd[1] += t * t;
      }
      sum2(dd);
      dev = dd[1] > 0 ? std::sqrt(dd[0] / dd[1]) : 0.0;
    }
    return dc_.finish_update(judge && std::is_same<T, float>::value, sigma_new_, dev, raise);
  }

  // z = T((M^-1 (r ./ s)) ./ s) of the iterated residual r (T vectors): the scaled
  // preconditioner M_hat^-1 = S^-1 M^-1 S^-1; on FP32 vectors with precondition_lowp: z =
  // M_hat^-1 r by that hook. Returns this rank's part of (r, z).
  template <class T>
  double precondition(const std::vector<T> &rv, std::vector<T> &zv)
  {
    zv.resize(n_);
    if constexpr (std::is_same<T, float>::value) {
      if (pc_lowp_) {
        ops_.precondition_lowp(rv.data(), zv.data());
        ++dc_.res.pc_applications;
        ++dc_.res.pc_lowp_applications;
        double rz = 0.0;
        for (size_t i = 0; i < n_; ++i) rz += double(rv[i]) * double(zv[i]);
        return rz;
      }
    }
    for (size_t i = 0; i < n_; ++i) pc_v_[i] = double(rv[i]) / s_[i];
    ops_.precondition(pc_v_.data(), pc_u_.data());
    ++dc_.res.pc_applications;
    double rz = 0.0;
    for (size_t i = 0; i < n_; ++i) {
      const T zi = T(pc_u_[i] / s_[i]);
      zv[i]      = zi;
      rz += double(rv[i]) * double(zi);
    }
    return rz;
  }

  // (r, M^-1 r) of the FP64 true residual r (a preconditioner's breakdown is checked with it).
  double true_rz()
  {
    ops_.precondition(r_.data(), pc_u_.data());
    ++dc_.res.pc_applications;
    double c = 0.0;
    for (size_t i = 0; i < n_; ++i) c += r_[i] * pc_u_[i];
    return sum1(c);
  }

  // The reduced-precision preconditioner against the FP64 one on r_T = float(s .* r / sigma') of
  // the true residual: ||z_lp - z|| / ||z|| over the ranks, z_lp = precondition_lowp(r_T), z =
  // M_hat^-1 r_T in FP64 (after_stall()).
  double pc_departure()
  {
    const double       sig = sigma_new_ > 0 ? sigma_new_ : 1.0;
    std::vector<float> rt(n_), zl(n_);
    for (size_t i = 0; i < n_; ++i) rt[i] = float((s_[i] * r_[i]) / sig);
    ops_.precondition_lowp(rt.data(), zl.data());
    for (size_t i = 0; i < n_; ++i) pc_v_[i] = double(rt[i]) / s_[i];
    ops_.precondition(pc_v_.data(), pc_u_.data());
    dc_.res.pc_applications += 2;
    ++dc_.res.pc_lowp_applications;
    double d[2] = {0.0, 0.0};
    for (size_t i = 0; i < n_; ++i) {
      const double z = pc_u_[i] / s_[i], e = double(zl[i]) - z;
      d[0] += e * e;
      d[1] += z * z;
    }
    sum2(d);
    return relative_departure(d[0], d[1]);
  }

  // From r (FP64, true) and sigma_new_: r_T = T(s .* r / sigma'), z_T = M_hat^-1 r_T (a
  // preconditioner; else z_T = r_T), and p re-orthogonalised against r_T and scaled to the new
  // units (or p = z_T after a restart).
  template <class T>
  void restart_vectors(std::vector<T> &rv, std::vector<T> &zv, std::vector<T> &pv)
  {
    rv.resize(n_);
    pv.resize(n_, T(0));
    const double sig  = sigma_new_ > 0 ? sigma_new_ : 1.0;
    double       d[3] = {0.0, 0.0, 0.0};
    for (size_t i = 0; i < n_; ++i) {
      const T ri = T((s_[i] * r_[i]) / sig);
      rv[i]      = ri;
      d[0] += double(ri) * double(ri);
      d[1] += double(ri) * double(pv[i]);
    }
    if (pc_) {
      d[2] = precondition(rv, zv);
      sum(d, 3);
    } else {
      sum2(d);
      d[2] = d[0];
    }
    const std::vector<T> &z = pc_ ? zv : rv;
    double                coef, beta;
    if (dc_.restart_coefficients(sigma_new_, d[0], d[2], d[1], &coef, &beta)) {
      pv = z;
      return;
    }
    const T c = T(coef), b = T(beta);
    for (size_t i = 0; i < n_; ++i) {
      const T po = std::fma(-c, z[i], pv[i]);
      pv[i]      = std::fma(b, po, z[i]);
    }
  }

  void product(const std::vector<float> &p, std::vector<float> &w) { ops_.lowp_product(p.data(), w.data()); }
  void product(const std::vector<double> &p, std::vector<double> &w)
  {
    for (size_t i = 0; i < n_; ++i) t_[i] = s_[i] * p[i];
    ops_.exact_product(t_.data(), w.data());
    for (size_t i = 0; i < n_; ++i) w[i] *= s_[i];
  }

  // p^T A_hat p in FP64 with the exact matrix (the direction of a low-precision breakdown).
  double exact_curvature(const std::vector<float> &p)
  {
    std::vector<double> v(n_), av(n_);
    for (size_t i = 0; i < n_; ++i) v[i] = s_[i] * double(p[i]);
    ops_.exact_product(v.data(), av.data());
    double c = 0.0;
    for (size_t i = 0; i < n_; ++i) c += v[i] * av[i];
    return sum1(c);
  }

  // Runs CG steps on T vectors from the state after a true residual (r_, sigma_new_). Returns
  // true when the solve ended, false when it must continue in FP64 (T = float only; pv then
  // holds the direction in units of sigma_new_ ... restart_vectors() of the FP64 phase
  // re-orthogonalises and rescales it).
  template <class T>
  bool phase(std::vector<T> &pv)
  {
    constexpr bool  lowp = std::is_same<T, float>::value;
    MixedCgResult  &res  = dc_.res;
    MixedCgSegment &seg  = dc_.seg;
    std::vector<T>  rv, zv, w(n_);
    auto            raise = [this] { return ops_.raise_precision && ops_.raise_precision(); };
    restart_vectors<T>(rv, zv, pv);
    const std::vector<T> &z         = pc_ ? zv : rv; // the preconditioned residual (zv is sized once)
    const bool            pc_lowp   = lowp && pc_lowp_;
    int64_t               seg_start = res.its; // the step of the last true residual
    for (;;) {
      product(pv, w);
      double pw = 0.0;
      for (size_t i = 0; i < n_; ++i) pw += double(pv[i]) * double(w[i]);
      pw              = sum1(pw);
      Breakdown broke = step_breakdown(pw, seg.rz, pc_);
      T         alpha = T(0);
      double    d[3]  = {0.0, 0.0, 0.0};
      if (broke == Breakdown::None) {
        alpha = T(seg.rz / pw);
        if (alpha == T(0)) broke = Breakdown::Curvature;
      }
      if (broke == Breakdown::None) {
        for (size_t i = 0; i < n_; ++i) {
          const T ri = std::fma(-alpha, w[i], rv[i]);
          rv[i]      = ri;
          d[0] += double(ri) * double(ri);
          d[1] += double(ri) * double(w[i]);
        }
        if (pc_) { // z and rz' = (r', z), summed over the ranks with (r', r') and (r', w)
          d[2] = precondition(rv, zv);
          sum(d, 3);
        } else {
          sum2(d);
          d[2] = d[0];
        }
        if (!std::isfinite(d[0])) broke = Breakdown::NonFinite;
      }
      PhaseNext next = PhaseNext::Continue;
      if (broke != Breakdown::None) {
        next = dc_.after_breakdown(
          lowp, broke, [&](bool judge, bool *r) { return true_update<T>(judge, r); },
          [&] {
            if constexpr (lowp) return exact_curvature(pv);
            return 0.0;
          },
          [&] { return true_rz(); }, raise);
      } else {
        ++res.its;
        if (lowp) ++res.lowp_its;
        // Fletcher-Reeves, as PETSc's KSPCG (mixed_cg.hpp); d[1] = (r', w) is not part of it
        const double sigma = seg.sigma;
        double       beta_d;
        const bool   trig = end_step(d[0], d[2], res.its, dc_.segment_end(pc_lowp, seg_start), p_.delta, seg.tau, seg.maxrr, seg.rho, seg.rz, seg.rz_prev, &beta_d);
        const T      beta = T(beta_d);
        const double c    = sigma * double(alpha);
        for (size_t i = 0; i < n_; ++i) {
          dy_[i] += c * double(pv[i]);
          if (!trig) pv[i] = std::fma(beta, pv[i], z[i]);
        }
        if (!trig) continue;
        auto update = [&](bool judge, bool *r) { return true_update<T>(judge, r, &rv); };
        if (dc_.stalled(pc_lowp, seg_start, res.its))
          next = dc_.after_stall(
            update, [&] { return pc_departure(); }, raise);
        else next = dc_.after_trigger(update, raise);
      }
      if (next == PhaseNext::End) return true;
      if (next == PhaseNext::Fp64) return false;
      seg_start = res.its;
      restart_vectors<T>(rv, zv, pv);
    }
  }

  size_t                  n_;
  const double           *s_, *b_;
  double                 *x_;
  const MixedCgParams    &p_;
  const MixedCgOperators &ops_;
  bool                    pc_;      // a preconditioner (ops_.precondition set)
  bool                    pc_lowp_; // and its FP32 form for the low-precision phase (ops_.precondition_lowp)
  std::vector<double>     r_, t_, dy_;
  std::vector<double>     pc_v_, pc_u_; // the preconditioner's input and output (pc_ only)
  MixedCgDecisions        dc_;
  double                  sigma_new_ = 0; // ||s .* r|| of the new true residual
};

} // namespace

MixedCgResult mixed_cg(size_t n, const double *s, const double *b, double *x, const MixedCgParams &p, const MixedCgOperators &ops)
{
  Run run(n, s, b, x, p, ops);
  return run.solve();
}

} // namespace mixed
} // namespace pspmv
