// The FP32 multigrid V-cycle on PackSELL copies, host twin (mg_cycle.hpp).
#include "mg_cycle.hpp"
#include "scaling.hpp"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace pspmv
{
namespace mixed
{

namespace
{

// The largest eigenvalue of the symmetric tridiagonal matrix with diagonal a (k entries) and
// off-diagonal b (k - 1 entries): bisection on the Sturm count (the eigenvalues below x are the
// negative pivots of T - x I = L D L^T) inside the Gershgorin interval. NaN for a non-finite entry.
double tridiagonal_max_eigenvalue(const std::vector<double> &a, const std::vector<double> &b)
{
  const size_t k  = a.size();
  double       lo = 0.0, hi = 0.0;
  for (size_t i = 0; i < k; ++i) {
    const double r = (i > 0 ? std::fabs(b[i - 1]) : 0.0) + (i + 1 < k ? std::fabs(b[i]) : 0.0);
    if (!std::isfinite(a[i]) || !std::isfinite(r)) return NAN;
    lo = i == 0 ? a[i] - r : std::min(lo, a[i] - r);
    hi = i == 0 ? a[i] + r : std::max(hi, a[i] + r);
  }
  if (k == 0) return NAN;
  auto below = [&](double x) { // eigenvalues < x
    size_t n = 0;
    double d = 1.0;
    for (size_t i = 0; i < k; ++i) {
      d = a[i] - x - (i > 0 ? b[i - 1] * b[i - 1] / d : 0.0);
      if (d == 0.0) d = -1e-300; // x is an eigenvalue of the leading block: count it below
      if (d < 0.0) ++n;
    }
    return n;
  };
  for (int it = 0; it < 200 && hi - lo > 1e-15 * std::max(std::fabs(lo), std::fabs(hi)); ++it) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    if (below(mid) == k) hi = mid;
    else lo = mid;
  }
  return hi;
}

// The CSR of P^T (rows = P's columns) with the values v of P's entries: rows in increasing
// column order, as the builders need.
struct Transposed {
  std::vector<int32_t> rowptr, colidx;
  std::vector<double>  values;
  CsrView              view(int32_t rows, int32_t cols) const
  {
    CsrView t;
    t.rows   = rows;
    t.cols   = cols;
    t.rowptr = rowptr.data();
    t.colidx = colidx.data();
    t.values = values.data();
    return t;
  }
};
Transposed transpose(const CsrView &P, const std::vector<double> &v)
{
  Transposed    t;
  const int64_t nnz = P.nnz();
  t.rowptr.assign(size_t(P.cols) + 1, 0);
  t.colidx.resize(size_t(nnz));
  t.values.resize(size_t(nnz));
  for (int64_t k = 0; k < nnz; ++k) ++t.rowptr[size_t(P.colidx[k]) + 1];
  for (int32_t c = 0; c < P.cols; ++c) t.rowptr[size_t(c) + 1] += t.rowptr[size_t(c)];
  std::vector<int32_t> next(t.rowptr.begin(), t.rowptr.end() - 1);
  for (int32_t r = 0; r < P.rows; ++r)
    for (int32_t k = P.rowptr[r]; k < P.rowptr[r + 1]; ++k) {
      const int32_t q     = next[size_t(P.colidx[k])]++;
      t.colidx[size_t(q)] = r;
      t.values[size_t(q)] = v[size_t(k)];
    }
  return t;
}

} // namespace

namespace detail
{

NullSpaceWeights null_space_weights(const std::vector<std::vector<double>> &basis, const std::vector<double> &s)
{
  NullSpaceWeights o;
  const size_t     n = s.size();
  for (size_t k = 0; k < basis.size(); ++k) {
    if (basis[k].size() != n) throw FormatError("the multigrid cycle's null space vector " + std::to_string(k) + " has " + std::to_string(basis[k].size()) + " entries, the finest level " + std::to_string(n) + " rows");
    for (size_t i = 0; i < n; ++i) {
      const double v = basis[k][i];
      if (!std::isfinite(v)) throw FormatError("the multigrid cycle's null space vector " + std::to_string(k) + " has a non-finite entry at row " + std::to_string(i));
      o.w.push_back(s[i] * v);
    }
    for (size_t i = 0; i < n; ++i) o.q.push_back(basis[k][i] / s[i]);
  }
  o.k = int(basis.size());
  return o;
}

std::string mg_where(int l, size_t L, const char *what)
{
  return " (multigrid level " + std::to_string(l) + " of " + std::to_string(L) + ", 0 the coarsest: " + what + ")";
}

static void check_options(const MgCycleOptions &o)
{
  if (o.smooth_steps < 1) throw FormatError("the multigrid cycle needs smooth_steps >= 1 (the Chebyshev degree; it is " + std::to_string(o.smooth_steps) + ")");
  if (!(o.eig_lo > 0.0) || !(o.eig_hi > o.eig_lo) || !std::isfinite(o.eig_hi)) {
    char b[160];
    std::snprintf(b, sizeof(b), "the multigrid cycle needs 0 < eig_lo < eig_hi, both finite (the Chebyshev interval's multiples of emax; they are %g and %g)", o.eig_lo, o.eig_hi);
    throw FormatError(b);
  }
  if (o.eig_steps < 1) throw FormatError("the multigrid cycle needs eig_steps >= 1 (the Lanczos steps of the emax estimate; it is " + std::to_string(o.eig_steps) + ")");
  if (o.fp32_min_rows < 0) throw FormatError("the multigrid cycle needs fp32_min_rows >= 0 (it is " + std::to_string(o.fp32_min_rows) + ")");
}

void check_given_emax(double emax, int l, size_t L)
{
  if (emax >= 0.0 && std::isfinite(emax)) return;
  char b[120];
  std::snprintf(b, sizeof(b), "the given emax is %g: it must be positive (or 0: estimated)", emax);
  throw FormatError(b + mg_where(l, L, "its operator A_l"));
}

int check_levels(const std::vector<int64_t> &rows, const std::vector<double> &emax, const MgCycleOptions &opt)
{
  check_options(opt);
  pspmv::detail::check_packsell_options(opt.level_options);
  if (rows.empty()) throw FormatError("the multigrid cycle needs at least one level");
  int coarse = 0;
  for (size_t l = 0; l < rows.size(); ++l) {
    if (rows[l] <= 0) throw FormatError("the multigrid cycle's level has no rows" + mg_where(int(l), rows.size(), "its operator A_l"));
    check_given_emax(emax[l], int(l), rows.size());
    if (rows[l] < opt.fp32_min_rows) coarse = int(l);
  }
  return coarse;
}

// The copies of P_hat: the level options, with scaling auto where the value format has FP16's
// exponent range (P_hat's entries are not bounded by 1 as A_hat's are). Formats of FP32's range
// keep the caller's scaling: with auto they would store the values at the format's top binade,
// where the FP32 product's sums overflow.
PackSellOptions interpolation_options(const PackSellOptions &o)
{
  PackSellOptions p = o;
  if (o.value_format.lossy() && o.value_format.exponent_bits < 8) p.scaling = PackSellScaling::Auto;
  return p;
}

void interpolation_shape_check(int64_t p_rows, int64_t p_cols, int64_t rows, int64_t rows_below, int l, size_t L)
{
  if (p_rows != rows || p_cols != rows_below)
    throw FormatError("the interpolation P_l is " + std::to_string(p_rows) + " x " + std::to_string(p_cols) + " but the levels need " + std::to_string(rows) + " x " + std::to_string(rows_below) + " (A_l's rows x A_{l-1}'s rows)" + mg_where(l, L, "the interpolation P_l"));
}

ValueRangeError interpolation_value_error(int32_t r, int32_t c, double p, double v, double factor, int l, size_t L)
{
  char b[200];
  if (!std::isfinite(p)) std::snprintf(b, sizeof(b), "the interpolation's entry is %g: the multigrid cycle needs finite values", p);
  else std::snprintf(b, sizeof(b), "the interpolation's entry %.6g scaled by sqrt(a_rr / a^c_cc) = %.6g %s", p, factor, v != 0.0 ? "exceeds the largest double" : "is below the smallest double and would be stored as 0");
  return ValueRangeError(r, c, b + mg_where(l, L, "the interpolation P_l"));
}

Chebyshev chebyshev_coefficients(double emax, const MgCycleOptions &o)
{
  const double lo = o.eig_lo * emax, hi = o.eig_hi * emax;
  const double scale = 2.0 / (hi + lo), alpha = 1.0 - scale * lo, mu = 1.0 / alpha, omegaprod = 2.0 / alpha;
  double       ckm1 = 1.0, ck = mu;
  Chebyshev    c;
  c.scale = float(scale);
  for (int k = 1; k < o.smooth_steps; ++k) {
    const double ckp1 = 2.0 * mu * ck - ckm1, omega = omegaprod * ck / ckp1;
    c.ca.push_back(float(1.0 - omega));
    c.cb.push_back(float(omega));
    c.cc.push_back(float(omega * scale));
    ckm1 = ck;
    ck   = ckp1;
  }
  return c;
}

double lanczos_emax(int steps, const LanczosSteps &s)
{
  std::vector<double> alpha, beta;
  s.start();
  double b = 0.0, tmax = 0.0;
  for (int j = 0; j < steps; ++j) {
    const double a = s.product_dot();
    alpha.push_back(a);
    tmax = std::max(tmax, std::max(std::fabs(a), b));
    if (j + 1 == steps) break;
    const double nw = s.orthogonalise(float(a), float(b));
    if (!(nw > 1e-6 * tmax)) break; // an invariant subspace (or NaN: the estimate is then NaN)
    beta.push_back(nw);
    s.advance(nw);
    b = nw;
  }
  return tridiagonal_max_eigenvalue(alpha, beta);
}

void check_emax(double emax, int l, size_t L)
{
  if (emax > 0.0 && std::isfinite(emax)) return;
  char b[200];
  std::snprintf(b, sizeof(b), "the Lanczos estimate of the largest eigenvalue of D^-1 A is %g: the level's copy is not positive definite", emax);
  throw FormatError(b + mg_where(l, L, "its operator A_l"));
}

MgLevelInfo level_info(int64_t rows, int64_t nnz, bool lowp, double emax, bool dense_inverse, const ValueFormat &vf, int64_t a_bytes, int64_t p_nnz, int64_t p_bytes)
{
  MgLevelInfo o;
  o.rows          = rows;
  o.nnz           = nnz;
  o.lowp          = lowp;
  o.emax          = emax;
  o.dense_inverse = dense_inverse;
  o.value_format  = lowp ? vf.name() : "fp64";
  if (!lowp) return o;
  o.bytes_per_nnz   = nnz > 0 ? double(a_bytes) / double(nnz) : 0.0;
  o.p_nnz           = p_nnz;
  o.p_bytes_per_nnz = p_nnz > 0 ? double(p_bytes) / double(p_nnz) : 0.0;
  return o;
}

std::vector<double> scaled_inverse(const double *inv, const std::vector<double> &s, int l, size_t L)
{
  const size_t        n = s.size();
  std::vector<double> B(n * n);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      const double v = 0.5 * (inv[i * n + j] + inv[j * n + i]) / (s[i] * s[j]);
      if (!std::isfinite(v))
        throw FormatError("the coarse level's inverse has the entry " + std::to_string(inv[i * n + j]) + " at (" + std::to_string(i) + ", " + std::to_string(j) + "), or its scaled value is not finite" + mg_where(l, L, "its operator A_l's inverse"));
      B[i * n + j] = v;
    }
  return B;
}

} // namespace detail

PackSellOptions mg_default_level_options()
{
  PackSellOptions o;
  o.value_format = ValueFormat::e8m(14);
  return o;
}

std::vector<double> MgCycle::scaled_interpolation(const CsrView &P, const std::vector<double> &sf, const std::vector<double> &sc, int l) const
{
  std::vector<double> v(size_t(P.nnz()));
  for (int32_t r = 0; r < P.rows; ++r)
    for (int32_t k = P.rowptr[r]; k < P.rowptr[r + 1]; ++k) {
      const double  p = P.values[k];
      const int32_t c = P.colidx[k];
      // p_rc sqrt(a_rr) / sqrt(a^{l-1}_cc) = p_rc (1 / s_r) s^{l-1}_c
      v[size_t(k)] = scaled_value(p, 1.0 / sf[size_t(r)], sc[size_t(c)]);
      if (!finite_value(p) || !scaled_value_fits(p, v[size_t(k)])) throw detail::interpolation_value_error(r, c, p, v[size_t(k)], (1.0 / sf[size_t(r)]) * sc[size_t(c)], l, levels_.size());
    }
  return v;
}

double MgCycle::estimate_emax(const Level &L) const
{
  const size_t         n = size_t(L.rows);
  std::vector<float>   v(n), vp(n), w(n);
  detail::LanczosSteps s;
  s.start = [&] {
    std::vector<double> u(n);
    double              nu = 0.0;
    for (size_t i = 0; i < n; ++i) {
      u[i] = pair_hash01(int64_t(i), detail::kLanczosSeed) - 0.5;
      nu += u[i] * u[i];
    }
    nu = std::sqrt(nu);
    for (size_t i = 0; i < n; ++i) v[i] = float(u[i] / nu);
    std::fill(vp.begin(), vp.end(), 0.0f);
  };
  s.product_dot = [&] {
    packsell_spmv_f32(L.A.op, v.data(), w.data());
    double a = 0.0;
    for (size_t i = 0; i < n; ++i) a += double(w[i]) * double(v[i]);
    return a;
  };
  s.orthogonalise = [&](float fa, float fb) {
    double nw = 0.0;
    for (size_t i = 0; i < n; ++i) {
      w[i] = std::fma(-fa, v[i], std::fma(-fb, vp[i], w[i]));
      nw += double(w[i]) * double(w[i]);
    }
    return std::sqrt(nw);
  };
  s.advance = [&](double nw) {
    for (size_t i = 0; i < n; ++i) {
      vp[i] = v[i];
      v[i]  = float(double(w[i]) / nw);
    }
  };
  return detail::lanczos_emax(opt_.eig_steps, s);
}

void MgCycle::setup_level(Level &L, int l, const std::vector<MgLevelInput> &in, const Level *below, bool fresh)
{
  const MgLevelInput &I = in[size_t(l)];
  const size_t        n = in.size();
  if (!below) { // the coarse level: its scaling (and its scaled inverse, when given) only
    detail::at_level(l, n, "its operator A_l", [&] { L.s = pspmv::mixed::detail::diagonal_scaling(I.A); });
    L.B.clear();
    if (I.inverse) L.B = detail::scaled_inverse(I.inverse, L.s, l, n);
    L.lowp = false;
    L.emax = I.emax;
    L.b.assign(size_t(L.rows), 0.0f);
    L.x.assign(size_t(L.rows), 0.0f);
    return;
  }
  L.lowp = true;
  detail::at_level(l, n, "its operator A_l", [&] {
    if (fresh) L.A = build_scaled_copy(I.A, opt_.level_options);
    else update_scaled_copy(I.A, L.A);
  });
  const CsrView &P = I.P;
  detail::interpolation_shape_check(P.rows, P.cols, I.A.rows, below->rows, l, n);
  detail::at_level(l, n, "the interpolation P_l", [&] { check_csr(P); });
  const std::vector<double> &sc = below->lowp ? below->A.s : below->s;
  const std::vector<double>  v  = scaled_interpolation(P, L.A.s, sc, l);
  CsrView                    Ph = P;
  Ph.values                     = v.data();
  const Transposed      T       = transpose(P, v);
  const CsrView         Rh      = T.view(P.cols, P.rows);
  const PackSellOptions po      = detail::interpolation_options(opt_.level_options);
  detail::at_level(l, n, "the interpolation P_l (its copy)", [&] {
    if (fresh) L.P = build_packsell(Ph, po);
    else update_packsell_values(Ph, L.P);
  });
  detail::at_level(l, n, "the transpose of the interpolation P_l (its copy)", [&] {
    if (fresh) L.R = build_packsell(Rh, po);
    else update_packsell_values(Rh, L.R);
  });
  L.p_nnz = P.nnz();
  L.emax  = I.emax > 0.0 ? I.emax : estimate_emax(L);
  detail::check_emax(L.emax, l, n);
  L.cheb = detail::chebyshev_coefficients(L.emax, opt_);
  for (auto *w : {&L.b, &L.x, &L.y1, &L.y2, &L.t}) w->assign(size_t(L.rows), 0.0f);
}

MgCycle MgCycle::build(const std::vector<MgLevelInput> &levels, const MgCycleOptions &opt)
{
  std::vector<int64_t> rows;
  std::vector<double>  emax;
  for (const MgLevelInput &I : levels) {
    rows.push_back(I.A.rows);
    emax.push_back(I.emax);
  }
  MgCycle m;
  m.coarse_ = detail::check_levels(rows, emax, opt);
  m.opt_    = opt;
  m.levels_.resize(levels.size());
  for (size_t l = 0; l < levels.size(); ++l) {
    m.levels_[l].rows = levels[l].A.rows;
    m.levels_[l].nnz  = levels[l].A.nnz();
    m.levels_[l].emax = levels[l].emax; // below the FP32 levels: the input's
  }
  for (int l = m.coarse_; l < int(levels.size()); ++l) m.setup_level(m.levels_[size_t(l)], l, levels, l > m.coarse_ ? &m.levels_[size_t(l) - 1] : nullptr, true);
  m.cb_.assign(size_t(m.levels_[size_t(m.coarse_)].rows), 0.0);
  m.cx_.assign(m.cb_.size(), 0.0);
  return m;
}

void MgCycle::update_values(const std::vector<MgLevelInput> &levels)
{
  if (levels.size() != levels_.size()) throw FormatError("update_values got " + std::to_string(levels.size()) + " levels for a cycle of " + std::to_string(levels_.size()));
  for (size_t l = 0; l < levels.size(); ++l) {
    const MgLevelInput &I = levels[l];
    if (int64_t(I.A.rows) != levels_[l].rows) throw FormatError("update_values got " + std::to_string(I.A.rows) + " rows for a level of " + std::to_string(levels_[l].rows) + detail::mg_where(int(l), levels.size(), "its operator A_l"));
    detail::check_given_emax(I.emax, int(l), levels.size());
  }
  std::vector<Level> saved = levels_; // the cycle as it was, restored if a level throws
  try {
    for (size_t l = 0; l < levels.size(); ++l) {
      levels_[l].nnz  = levels[l].A.nnz();
      levels_[l].emax = levels[l].emax;
    }
    for (int l = coarse_; l < int(levels.size()); ++l) setup_level(levels_[size_t(l)], l, levels, l > coarse_ ? &levels_[size_t(l) - 1] : nullptr, false);
    if (null_.k) null_ = detail::null_space_weights(null_basis_, scaling(num_levels() - 1)); // the new s
  } catch (...) {
    levels_ = std::move(saved);
    throw;
  }
}

void MgCycle::smooth(const Level &L, const float *b, float *x, bool zero) const
{
  const size_t n    = size_t(L.rows);
  float       *y[3] = {x, L.y1.data(), L.y2.data()}, *r = L.t.data();
  int          km1 = 0, k = 1, kp1 = 2;
  if (zero) {
    std::fill(x, x + n, 0.0f);
    for (size_t i = 0; i < n; ++i) y[k][i] = L.cheb.scale * b[i];
  } else {
    packsell_spmv_f32(L.A.op, x, r);
    for (size_t i = 0; i < n; ++i) y[k][i] = std::fma(L.cheb.scale, b[i] - r[i], x[i]);
  }
  for (size_t j = 0; j < L.cheb.ca.size(); ++j) {
    packsell_spmv_f32(L.A.op, y[k], r);
    const float ca = L.cheb.ca[j], cb = L.cheb.cb[j], cc = L.cheb.cc[j];
    for (size_t i = 0; i < n; ++i) y[kp1][i] = std::fma(ca, y[km1][i], std::fma(cb, y[k][i], cc * (b[i] - r[i])));
    const int t = km1;
    km1         = k;
    k           = kp1;
    kp1         = t;
  }
  if (y[k] != x) std::copy(y[k], y[k] + n, x);
}

void MgCycle::apply(const float *r, float *z, const std::function<void(const double *b, double *x)> &coarse) const
{
  const int L = int(levels_.size()), c = coarse_;
  std::copy(r, r + levels_.back().rows, levels_.back().b.data());
  for (int l = L - 1; l > c; --l) { // down: pre-smoothing, restriction of the residual
    const Level &V = levels_[size_t(l)];
    const size_t n = size_t(V.rows);
    smooth(V, V.b.data(), V.x.data(), true);
    packsell_spmv_f32(V.A.op, V.x.data(), V.t.data());
    for (size_t i = 0; i < n; ++i) V.t[i] = V.b[i] - V.t[i];
    packsell_spmv_f32(V.R, V.t.data(), levels_[size_t(l) - 1].b.data());
  }
  { // the coarse solve on the unscaled system: b = S^-1 b_hat, x_hat = S^-1 x
    const Level &C  = levels_[size_t(c)];
    const auto  &s  = C.lowp ? C.A.s : C.s;
    const size_t nc = cb_.size();
    if (!C.B.empty())
      for (size_t i = 0; i < nc; ++i) { // B symmetric: column i, j in order (the device's order)
        double v = 0.0;
        for (size_t j = 0; j < nc; ++j) v = std::fma(C.B[j * nc + i], double(C.b[j]), v);
        C.x[i] = float(v);
      }
    else {
      for (size_t i = 0; i < nc; ++i) cb_[i] = double(C.b[i]) / s[i];
      coarse(cb_.data(), cx_.data());
      for (size_t i = 0; i < nc; ++i) C.x[i] = float(cx_[i] / s[i]);
    }
  }
  for (int l = c + 1; l < L; ++l) { // up: coarse-grid correction, post-smoothing
    const Level &V = levels_[size_t(l)];
    const size_t n = size_t(V.rows);
    packsell_spmv_f32(V.P, levels_[size_t(l) - 1].x.data(), V.t.data());
    for (size_t i = 0; i < n; ++i) V.x[i] += V.t[i];
    smooth(V, V.b.data(), V.x.data(), false);
  }
  std::copy(levels_.back().x.begin(), levels_.back().x.end(), z);
  if (null_.k == 0) return;
  const size_t        n = levels_.back().x.size();
  std::vector<double> coef(size_t(null_.k), 0.0);
  for (int k = 0; k < null_.k; ++k)
    for (size_t i = 0; i < n; ++i) coef[size_t(k)] += null_.w[size_t(k) * n + i] * double(z[i]);
  for (size_t i = 0; i < n; ++i) {
    double v = double(z[i]);
    for (int k = 0; k < null_.k; ++k) v -= coef[size_t(k)] * null_.q[size_t(k) * n + i];
    z[i] = float(v);
  }
}

void MgCycle::set_null_space(const std::vector<std::vector<double>> &basis)
{
  null_       = detail::null_space_weights(basis, scaling(num_levels() - 1));
  null_basis_ = basis;
}

std::vector<MgLevelInfo> MgCycle::info() const
{
  std::vector<MgLevelInfo> out;
  for (const Level &V : levels_) out.push_back(detail::level_info(V.rows, V.nnz, V.lowp, V.emax, !V.B.empty(), V.A.op.value_format, V.lowp ? V.A.op.stats().stored_bytes : 0, V.p_nnz, V.lowp ? V.P.stats().stored_bytes + V.R.stats().stored_bytes : 0));
  return out;
}

const std::vector<double> &MgCycle::scaling(int level) const
{
  static const std::vector<double> none;
  if (level < 0 || level >= int(levels_.size())) throw std::out_of_range("multigrid level " + std::to_string(level) + " of " + std::to_string(levels_.size()));
  const Level &V = levels_[size_t(level)];
  if (level < coarse_) return none;
  return V.lowp ? V.A.s : V.s;
}

} // namespace mixed
} // namespace pspmv
