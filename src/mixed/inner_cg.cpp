// Host twin of the inner-outer CG inner solver (inner_cg.hpp).
#include "inner_cg.hpp"
#include "scaling.hpp"
#include <cmath>

namespace pspmv
{
namespace mixed
{

namespace
{

double dot(const std::vector<float> &a, const std::vector<float> &b)
{
  double d = 0.0;
  for (size_t i = 0; i < a.size(); ++i) d += double(a[i]) * double(b[i]);
  return d;
}

} // namespace

InnerCgResult inner_cg(const PackSellMatrix &A, const float *b, float *x, const InnerCgParams &p, std::vector<double> *residuals)
{
  const size_t       n = size_t(A.rows);
  std::vector<float> r(b, b + n), q(b, b + n), w(n);
  std::fill(x, x + n, 0.0f);
  InnerCgResult res;
  double        rho  = dot(r, r);
  const double  rho0 = rho;
  if (residuals) residuals->assign(1, std::sqrt(rho));
  if (rho == 0.0) return res;
  for (int32_t k = 0; k < p.max_it; ++k) {
    packsell_spmv_f32(A, q.data(), w.data());
    const double pw = dot(q, w);
    if (!(pw > 0.0) || !std::isfinite(pw)) {
      res.breakdown = true;
      break;
    }
    const float alpha = float(rho / pw);
    for (size_t i = 0; i < n; ++i) {
      x[i] = std::fma(alpha, q[i], x[i]);
      r[i] = std::fma(-alpha, w[i], r[i]);
    }
    const double rho_new = dot(r, r);
    res.its              = k + 1;
    if (residuals) residuals->push_back(std::sqrt(rho_new));
    if ((p.rtol > 0.0 && rho_new <= p.rtol * p.rtol * rho0) || rho_new <= kCgResidualFloor2 * rho0) {
      res.converged = true;
      break;
    }
    const float beta = float(rho_new / rho);
    for (size_t i = 0; i < n; ++i) q[i] = std::fma(beta, q[i], r[i]);
    rho = rho_new;
  }
  return res;
}

void apply_inner_cg(const ScaledCopy &c, const InnerCgParams &p, const double *r, double *z, InnerStats *stats, std::vector<double> *residuals)
{
  const size_t        n = c.s.size();
  std::vector<double> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = c.s[i] * r[i];
  const double sigma = entry_norm(c.s.data(), r, n);
  ++stats->applications;
  if (residuals) residuals->clear();
  if (sigma == 0.0) {
    std::fill(z, z + n, 0.0);
    ++stats->zero_rhs;
    return;
  }
  std::vector<float> b(n), x(n);
  for (size_t i = 0; i < n; ++i) b[i] = float(t[i] / sigma);
  const InnerCgResult res = inner_cg(c.op, b.data(), x.data(), p, residuals);
  stats->inner_its += res.its;
  if (res.breakdown) ++stats->breakdowns;
  if (res.converged) ++stats->early_exits;
  if (res.its == 0) { // no step made: the Jacobi step D^-1 r
    ++stats->jacobi_fallbacks;
    for (size_t i = 0; i < n; ++i) z[i] = c.s[i] * t[i];
    if (residuals) residuals->clear();
    return;
  }
  for (size_t i = 0; i < n; ++i) z[i] = sigma * (c.s[i] * double(x[i]));
}

} // namespace mixed
} // namespace pspmv
