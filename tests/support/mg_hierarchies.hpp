// Multigrid hierarchies for the tests of the FP32 V-cycle (src/mixed/mg_cycle.hpp, its device
// twin): a 2-D variable-coefficient 5-point Laplacian, piecewise-constant (2x2 aggregates) and
// bilinear interpolations, Galerkin coarse operators P^T A P in FP64, a dense Cholesky for the
// coarse solve, and the small helpers the host and device tests share.
#pragma once
#include "csr_matrix.hpp"
#include "mixed/mg_cycle.hpp"
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace pspmv_test
{

// FP64 CSR from per-row maps (column -> value), its transpose, the product A B.
CsrMatrix from_rows(int32_t rows, int32_t cols, const std::vector<std::map<int32_t, double>> &r);
CsrMatrix transpose(const CsrMatrix &A);
CsrMatrix multiply(const CsrMatrix &A, const CsrMatrix &B);

// 5-point -div(k grad u) on the n x n interior points of the unit square (Dirichlet), h = 1/(n+1)
// (h^2 dropped), k at the edge midpoints: row i + n j, a_ii the sum of the four edges' k.
CsrMatrix varcoef_laplace(int32_t n, const std::function<double(double, double)> &k);
// Two coefficients of the same pattern (exp of a smooth field + 0.3; a cosine product, positive).
double coefficient1(double x, double y);
double coefficient2(double x, double y);
// Piecewise-constant aggregates of 2x2 points: n x n (n even) -> n/2 x n/2.
CsrMatrix aggregation_P(int32_t n);
// Bilinear interpolation from nc x nc to n = 2 nc + 1 points per direction (coarse point I at
// fine point 2 I + 1).
CsrMatrix bilinear_P(int32_t nc);

// levels 0 (coarsest) .. L-1; P[l] interpolates from l-1 to l (P[0] empty).
struct Hierarchy {
  std::vector<CsrMatrix> A, P;
};
// The Galerkin hierarchy of fine with the interpolations given finest first.
Hierarchy galerkin(const CsrMatrix &fine, const std::vector<CsrMatrix> &Ps_fine_first);
// 64^2 with 2x2 aggregates (2 levels); 127^2 with three bilinear interpolations (4 levels).
Hierarchy two_level(const std::function<double(double, double)> &k = coefficient1);
Hierarchy four_level(const std::function<double(double, double)> &k = coefficient1);
// The cycle's inputs (views into h), with the levels' emax when given.
std::vector<pspmv::mixed::MgLevelInput> inputs(const Hierarchy &h, const std::vector<double> &emax = {});

// Dense Cholesky of an SPD CSR matrix: the coarse solve.
class Cholesky {
public:
  explicit Cholesky(const CsrMatrix &A);
  void solve(const double *b, double *x) const;

private:
  size_t              n_;
  std::vector<double> L_;
};

// The emax of each level of a cycle (MgLevelInfo::emax).
std::vector<double> emax_of(const pspmv::mixed::MgCycle &c);
// Entries uniform in (-1, 1), deterministic in (i, seed).
std::vector<float> random_vector(size_t n, uint64_t seed);
// The default cycle options with the copies in the named value format.
pspmv::mixed::MgCycleOptions options(const char *format);

} // namespace pspmv_test
