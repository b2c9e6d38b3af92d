// Test systems of the mixed-precision inner solvers: see mixed_systems.hpp.
#include "mixed_systems.hpp"
#include "random_matrix.hpp"
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>

namespace pspmv_test
{

namespace
{
double dscale(int32_t i)
{
  return 1.0 + double(i % 7);
}

CsrMatrix grid_laplace(int32_t nx, int32_t ny, int32_t nz)
{
  const int32_t                      n = nx * ny * nz;
  std::vector<std::vector<RowEntry>> rows(static_cast<size_t>(n));
  for (int32_t z = 0; z < nz; ++z)
    for (int32_t y = 0; y < ny; ++y)
      for (int32_t x = 0; x < nx; ++x) {
        const int32_t i      = (z * ny + y) * nx + x;
        const double  center = nz > 1 ? 6.0 : 4.0;
        auto          add    = [&](int32_t j, double v) { rows[size_t(i)].push_back({j, v * dscale(i) * dscale(j)}); };
        if (z > 0) add(i - nx * ny, -1.0);
        if (y > 0) add(i - nx, -1.0);
        if (x > 0) add(i - 1, -1.0);
        add(i, center);
        if (x + 1 < nx) add(i + 1, -1.0);
        if (y + 1 < ny) add(i + nx, -1.0);
        if (z + 1 < nz) add(i + nx * ny, -1.0);
      }
  return csr_from_rows(n, rows);
}
} // namespace

CsrMatrix laplace2d(int32_t nx, int32_t ny)
{
  return grid_laplace(nx, ny, 1);
}
CsrMatrix laplace3d(int32_t nx, int32_t ny, int32_t nz)
{
  return grid_laplace(nx, ny, nz);
}

CsrMatrix random_spd(int32_t n, int32_t per_row, double margin, uint64_t seed)
{
  Rng                                    rng(seed);
  std::vector<std::map<int32_t, double>> m(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i)
    for (int32_t k = 0; k < per_row / 2; ++k) {
      const int32_t j = int32_t(rng.below(uint64_t(n)));
      if (j == i) continue;
      const double v  = 2.0 * rng.uniform() - 1.0;
      m[size_t(i)][j] = v;
      m[size_t(j)][i] = v;
    }
  std::vector<std::vector<RowEntry>> rows(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    double off = 0.0;
    for (const auto &e : m[size_t(i)]) off += std::fabs(e.second);
    m[size_t(i)][i] = std::max(off, 1e-3) * (1.0 + margin) * (1.0 + 3.0 * rng.uniform());
    for (const auto &e : m[size_t(i)]) rows[size_t(i)].push_back({e.first, e.second});
  }
  return csr_from_rows(n, rows);
}

pspmv::mixed::ScaledCopy test_scaled_copy(const CsrMatrix &A, const std::string &value)
{
  pspmv::PackSellOptions o;
  o.value_format = pspmv::ValueFormat::parse(value);
  return pspmv::mixed::build_scaled_copy(A.view(), o);
}

double residual_norm(const CsrMatrix &A, const double *b, const double *x)
{
  std::vector<double> y(size_t(A.rows));
  pspmv::csr_spmv(A.view(), x, y.data(), false);
  double s = 0.0;
  for (int32_t i = 0; i < A.rows; ++i) s += (b[i] - y[size_t(i)]) * (b[i] - y[size_t(i)]);
  return std::sqrt(s);
}

double norm2(const std::vector<double> &v)
{
  double s = 0.0;
  for (double e : v) s += e * e;
  return std::sqrt(s);
}

SplitBlocks split_by_distance(const CsrMatrix &A, int32_t plane)
{
  SplitBlocks                        s;
  std::vector<std::vector<RowEntry>> d(size_t(A.rows)), o(size_t(A.rows));
  std::vector<int32_t>               ghost_of(size_t(A.cols), -1);
  for (int32_t i = 0; i < A.rows; ++i)
    for (int32_t k = A.rowptr[size_t(i)]; k < A.rowptr[size_t(i) + 1]; ++k) {
      const int32_t j = A.colidx[size_t(k)];
      if (std::abs(j - i) >= plane) {
        if (ghost_of[size_t(j)] < 0) {
          ghost_of[size_t(j)] = int32_t(s.gcols.size());
          s.gcols.push_back(j);
        }
        o[size_t(i)].push_back({ghost_of[size_t(j)], A.values[size_t(k)]});
      } else {
        d[size_t(i)].push_back({j, A.values[size_t(k)]});
      }
    }
  s.Ad = csr_from_rows(A.cols, d);
  s.Ao = csr_from_rows(int32_t(s.gcols.size()), o);
  return s;
}

pspmv::PackSellMatrix split_offdiag(const SplitBlocks &sp, const std::vector<double> &s, const pspmv::PackSellOptions &opt, const pspmv::mixed::CopyDither &dither)
{
  std::vector<double> t(sp.gcols.size());
  for (size_t k = 0; k < t.size(); ++k) t[k] = s[size_t(sp.gcols[k])];
  return pspmv::mixed::build_scaled_offdiag(sp.Ao.view(), s.data(), t.data(), opt, dither, sp.gcols.data());
}

std::vector<double> sin_rhs(const CsrMatrix &A)
{
  std::vector<double> xe(size_t(A.rows)), b(size_t(A.rows));
  for (int32_t i = 0; i < A.rows; ++i) xe[size_t(i)] = 1.0 + std::sin(double(i));
  pspmv::csr_spmv(A.view(), xe.data(), b.data(), false);
  return b;
}

std::vector<float> copy_compensation(const CsrMatrix &A, const std::vector<double> &s, const pspmv::PackSellMatrix &op, const pspmv::PackSellMatrix *off)
{
  const size_t        n = size_t(A.rows);
  std::vector<double> As(n), lp(n), ones(n, 1.0);
  pspmv::csr_spmv(A.view(), s.data(), As.data(), false);
  pspmv::packsell_spmv(op, ones.data(), lp.data(), false);
  if (off) {
    const std::vector<double> og(size_t(off->cols), 1.0);
    pspmv::packsell_spmv(*off, og.data(), lp.data(), true);
  }
  return pspmv::mixed::rowsum_compensation(n, s.data(), As.data(), lp.data());
}

std::vector<double> diagonal_of(const CsrMatrix &A)
{
  std::vector<double> d(size_t(A.rows), 0.0);
  for (int32_t i = 0; i < A.rows; ++i)
    for (int32_t k = A.rowptr[size_t(i)]; k < A.rowptr[size_t(i) + 1]; ++k)
      if (A.colidx[size_t(k)] == i) d[size_t(i)] = A.values[size_t(k)];
  return d;
}

Precond jacobi_pc(const CsrMatrix &A)
{
  auto d = std::make_shared<std::vector<double>>(diagonal_of(A));
  return [d](const double *v, double *u) {
    for (size_t i = 0; i < d->size(); ++i) u[i] = v[i] / (*d)[i];
  };
}

Precond sgs_pc(const CsrMatrix &A)
{
  auto d = std::make_shared<std::vector<double>>(diagonal_of(A));
  return [&A, d](const double *v, double *u) {
    const int32_t n = A.rows;
    for (int32_t i = 0; i < n; ++i) {
      double t = v[i];
      for (int32_t k = A.rowptr[size_t(i)]; k < A.rowptr[size_t(i) + 1]; ++k)
        if (A.colidx[size_t(k)] < i) t -= A.values[size_t(k)] * u[A.colidx[size_t(k)]];
      u[i] = t / (*d)[size_t(i)];
    }
    for (int32_t i = n - 1; i >= 0; --i) {
      double t = (*d)[size_t(i)] * u[i];
      for (int32_t k = A.rowptr[size_t(i)]; k < A.rowptr[size_t(i) + 1]; ++k)
        if (A.colidx[size_t(k)] > i) t -= A.values[size_t(k)] * u[A.colidx[size_t(k)]];
      u[i] = t / (*d)[size_t(i)];
    }
  };
}

Precond negated_pc(size_t n)
{
  return [n](const double *v, double *u) {
    for (size_t i = 0; i < n; ++i) u[i] = -v[i];
  };
}

Precond nan_pc(size_t n)
{
  return [n](const double *v, double *u) {
    for (size_t i = 0; i < n; ++i) u[i] = v[i];
    u[n / 2] = std::nan("");
  };
}

int64_t fp64_pcg(const CsrMatrix &A, const std::vector<double> &b, const Precond &pc, double rtol, int64_t max_it, std::vector<double> *xout)
{
  const size_t        n = size_t(A.rows);
  std::vector<double> x(n, 0.0), r = b, z(n), p(n), w(n);
  const double        nb = norm2(b);
  pc(r.data(), z.data());
  p         = z;
  double rz = 0;
  for (size_t i = 0; i < n; ++i) rz += r[i] * z[i];
  int64_t it = 0;
  for (; it < max_it && norm2(r) > rtol * nb; ++it) {
    csr_spmv(A.view(), p.data(), w.data(), false);
    double pw = 0;
    for (size_t i = 0; i < n; ++i) pw += p[i] * w[i];
    const double alpha = rz / pw;
    for (size_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * w[i];
    }
    pc(r.data(), z.data());
    double rz2 = 0;
    for (size_t i = 0; i < n; ++i) rz2 += r[i] * z[i];
    for (size_t i = 0; i < n; ++i) p[i] = z[i] + (rz2 / rz) * p[i];
    rz = rz2;
  }
  if (xout) *xout = x;
  return norm2(r) <= rtol * nb ? it : max_it + 1;
}

} // namespace pspmv_test
