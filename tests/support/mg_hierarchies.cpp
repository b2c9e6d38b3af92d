// Multigrid hierarchies for the tests of the FP32 V-cycle (mg_hierarchies.hpp).
#include "mg_hierarchies.hpp"
#include "mixed/scaling.hpp"
#include <cmath>

namespace pspmv_test
{

using namespace pspmv;
using namespace pspmv::mixed;

CsrMatrix from_rows(int32_t rows, int32_t cols, const std::vector<std::map<int32_t, double>> &r)
{
  CsrMatrix M;
  M.rows = rows;
  M.cols = cols;
  for (const auto &row : r) {
    for (const auto &e : row) {
      M.colidx.push_back(e.first);
      M.values.push_back(e.second);
    }
    M.rowptr.push_back(int32_t(M.colidx.size()));
  }
  return M;
}

CsrMatrix transpose(const CsrMatrix &A)
{
  std::vector<std::map<int32_t, double>> r(size_t(A.cols));
  for (int32_t i = 0; i < A.rows; ++i)
    for (int32_t k = A.rowptr[size_t(i)]; k < A.rowptr[size_t(i) + 1]; ++k) r[size_t(A.colidx[size_t(k)])][i] = A.values[size_t(k)];
  return from_rows(A.cols, A.rows, r);
}

CsrMatrix multiply(const CsrMatrix &A, const CsrMatrix &B)
{
  std::vector<std::map<int32_t, double>> r(size_t(A.rows));
  for (int32_t i = 0; i < A.rows; ++i)
    for (int32_t k = A.rowptr[size_t(i)]; k < A.rowptr[size_t(i) + 1]; ++k) {
      const int32_t j = A.colidx[size_t(k)];
      for (int32_t q = B.rowptr[size_t(j)]; q < B.rowptr[size_t(j) + 1]; ++q) r[size_t(i)][B.colidx[size_t(q)]] += A.values[size_t(k)] * B.values[size_t(q)];
    }
  return from_rows(A.rows, B.cols, r);
}

// 5-point -div(k grad u) on the n x n interior points of the unit square (Dirichlet), h = 1/(n+1)
// (h^2 dropped), k at the edge midpoints: row i + n j, a_ii the sum of the four edges' k.
CsrMatrix varcoef_laplace(int32_t n, const std::function<double(double, double)> &k)
{
  const double                           h = 1.0 / (n + 1);
  std::vector<std::map<int32_t, double>> r(size_t(n) * size_t(n));
  for (int32_t j = 0; j < n; ++j)
    for (int32_t i = 0; i < n; ++i) {
      const int32_t row = i + n * j;
      const double  x = (i + 1) * h, y = (j + 1) * h;
      const double  kw = k(x - h / 2, y), ke = k(x + h / 2, y), ks = k(x, y - h / 2), kn = k(x, y + h / 2);
      auto         &R = r[size_t(row)];
      R[row]          = kw + ke + ks + kn;
      if (i > 0) R[row - 1] = -kw;
      if (i + 1 < n) R[row + 1] = -ke;
      if (j > 0) R[row - n] = -ks;
      if (j + 1 < n) R[row + n] = -kn;
    }
  return from_rows(n * n, n * n, r);
}

double coefficient1(double x, double y)
{
  return std::exp(1.2 * std::sin(2 * M_PI * x) * std::cos(3 * M_PI * y)) + 0.3;
}
double coefficient2(double x, double y)
{
  return 3.0 * (1.0 + 0.8 * std::cos(5 * x + 2 * y) * std::sin(7 * y)); // the same pattern, other values
}

// Piecewise-constant aggregates of 2x2 points: n x n (n even) -> n/2 x n/2.
CsrMatrix aggregation_P(int32_t n)
{
  const int32_t                          nc = n / 2;
  std::vector<std::map<int32_t, double>> r(size_t(n) * size_t(n));
  for (int32_t j = 0; j < n; ++j)
    for (int32_t i = 0; i < n; ++i) r[size_t(i + n * j)][(i / 2) + nc * (j / 2)] = 1.0;
  return from_rows(n * n, nc * nc, r);
}

// Bilinear interpolation from nc x nc to n = 2 nc + 1 points per direction (coarse point I at
// fine point 2 I + 1).
CsrMatrix bilinear_P(int32_t nc)
{
  const int32_t n  = 2 * nc + 1;
  auto          w1 = [&](int32_t i) { // (coarse index, weight) of fine index i
    std::vector<std::pair<int32_t, double>> w;
    if (i % 2 == 1) w.push_back({(i - 1) / 2, 1.0});
    else {
               if (i / 2 - 1 >= 0) w.push_back({i / 2 - 1, 0.5});
      if (i / 2 < nc) w.push_back({i / 2, 0.5});
    }
             return w;
  };
  std::vector<std::map<int32_t, double>> r(size_t(n) * size_t(n));
  for (int32_t j = 0; j < n; ++j)
    for (int32_t i = 0; i < n; ++i)
      for (auto a : w1(i))
        for (auto b : w1(j)) r[size_t(i + n * j)][a.first + nc * b.first] = a.second * b.second;
  return from_rows(n * n, nc * nc, r);
}

Hierarchy galerkin(const CsrMatrix &fine, const std::vector<CsrMatrix> &Ps_fine_first)
{
  std::vector<CsrMatrix> A{fine}, P;
  for (const CsrMatrix &p : Ps_fine_first) {
    A.push_back(multiply(transpose(p), multiply(A.back(), p)));
    P.push_back(p);
  }
  Hierarchy h;
  h.A.assign(A.rbegin(), A.rend());
  h.P.push_back(CsrMatrix{});
  for (auto it = P.rbegin(); it != P.rend(); ++it) h.P.push_back(*it);
  return h;
}

Hierarchy two_level(const std::function<double(double, double)> &k)
{
  return galerkin(varcoef_laplace(64, k), {aggregation_P(64)});
}
Hierarchy four_level(const std::function<double(double, double)> &k)
{
  return galerkin(varcoef_laplace(127, k), {bilinear_P(63), bilinear_P(31), bilinear_P(15)});
}

std::vector<MgLevelInput> inputs(const Hierarchy &h, const std::vector<double> &emax)
{
  std::vector<MgLevelInput> in(h.A.size());
  for (size_t l = 0; l < h.A.size(); ++l) {
    in[l].A = h.A[l].view();
    if (l > 0) in[l].P = h.P[l].view();
    if (!emax.empty()) in[l].emax = emax[l];
  }
  return in;
}

Cholesky::Cholesky(const CsrMatrix &A) : n_(size_t(A.rows)), L_(n_ * n_, 0.0)
{
  for (int32_t i = 0; i < A.rows; ++i)
    for (int32_t k = A.rowptr[size_t(i)]; k < A.rowptr[size_t(i) + 1]; ++k) L_[size_t(i) * n_ + size_t(A.colidx[size_t(k)])] = A.values[size_t(k)];
  for (size_t j = 0; j < n_; ++j) {
    double d = L_[j * n_ + j];
    for (size_t k = 0; k < j; ++k) d -= L_[j * n_ + k] * L_[j * n_ + k];
    d              = std::sqrt(d);
    L_[j * n_ + j] = d;
    for (size_t i = j + 1; i < n_; ++i) {
      double v = L_[i * n_ + j];
      for (size_t k = 0; k < j; ++k) v -= L_[i * n_ + k] * L_[j * n_ + k];
      L_[i * n_ + j] = v / d;
    }
  }
}

void Cholesky::solve(const double *b, double *x) const
{
  std::vector<double> y(b, b + n_);
  for (size_t i = 0; i < n_; ++i) {
    for (size_t k = 0; k < i; ++k) y[i] -= L_[i * n_ + k] * y[k];
    y[i] /= L_[i * n_ + i];
  }
  for (size_t i = n_; i-- > 0;) {
    for (size_t k = i + 1; k < n_; ++k) y[i] -= L_[k * n_ + i] * y[k];
    y[i] /= L_[i * n_ + i];
  }
  std::copy(y.begin(), y.end(), x);
}

std::vector<double> emax_of(const MgCycle &c)
{
  std::vector<double> e;
  for (const MgLevelInfo &i : c.info()) e.push_back(i.emax);
  return e;
}

std::vector<float> random_vector(size_t n, uint64_t seed)
{
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(2.0 * pair_hash01(int64_t(i), int64_t(seed) + (int64_t(1) << 50)) - 1.0);
  return v;
}

MgCycleOptions options(const char *format)
{
  MgCycleOptions o;
  o.level_options.value_format = ValueFormat::parse(format);
  return o;
}

} // namespace pspmv_test
