// Test systems of the mixed-precision inner solvers (host and GPU tests): SPD matrices with
// varying diagonals (so that the symmetric scaling matters), and their scaled copies.
#pragma once
#include "csr_matrix.hpp"
#include "mixed/mixed_cg.hpp"
#include "mixed/scaled_copy.hpp"
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace pspmv_test
{

// 5-point Laplacian on an nx x ny grid (Dirichlet), row i scaled by d_i and column j by d_j
// with d = 1 + (i mod 7) (the matrix stays SPD; its scaled copy is the plain Laplacian / 4).
CsrMatrix laplace2d(int32_t nx, int32_t ny);
// 7-point Laplacian on nx x ny x nz, the same diagonal variation.
CsrMatrix laplace3d(int32_t nx, int32_t ny, int32_t nz);
// Random symmetric matrix with about `per_row` off-diagonal entries per row in [-1, 1] and a
// diagonal of (sum of |off-diagonals|) * (1 + margin) * (1 + u_i), u_i in [0, 3): SPD
// (diagonally dominant); condition number grows as margin -> 0.
CsrMatrix random_spd(int32_t n, int32_t per_row, double margin, uint64_t seed);

// mixed::build_scaled_copy of A with PackSELL's default options and value format `value`
// ("e8m14", the PC's default, ...).
pspmv::mixed::ScaledCopy test_scaled_copy(const CsrMatrix &A, const std::string &value = "e8m14");

// A split as one rank's blocks of an MPI matrix would be: the diagonal block Ad (the couplings
// with |i - j| < plane; all columns of A) and the off-diagonal block Ao (the others, its column c
// being A's column gcols[c], numbered in order of first appearance as a halo's ghost vector).
// With plane = nx * ny of a 3-D grid, Ao holds the z-couplings.
struct SplitBlocks {
  CsrMatrix            Ad, Ao;
  std::vector<int64_t> gcols;
};
SplitBlocks split_by_distance(const CsrMatrix &A, int32_t plane);
// The scaled off-diagonal block of the split for the diagonal block's scaling s (D^-1/2 of all
// of A's rows; the ghost columns' scaling gathered at gcols): mixed::build_scaled_offdiag().
pspmv::PackSellMatrix split_offdiag(const SplitBlocks &sp, const std::vector<double> &s, const pspmv::PackSellOptions &opt, const pspmv::mixed::CopyDither &dither = pspmv::mixed::CopyDither{});
// The row-sum compensation (mixed::rowsum_compensation()) of a copy of A with the scaling s:
// the row sums of the diagonal copy op and, on a split, of its off-diagonal block off (ghost
// columns of ones); off null: op is the whole copy.
std::vector<float> copy_compensation(const CsrMatrix &A, const std::vector<double> &s, const pspmv::PackSellMatrix &op, const pspmv::PackSellMatrix *off);
// The same of a whole (unsplit) scaled copy c of A.
inline std::vector<float> copy_compensation(const CsrMatrix &A, const pspmv::mixed::ScaledCopy &c)
{
  return copy_compensation(A, c.s, c.op, nullptr);
}

// b = A xe with xe_i = 1 + sin(i), as tutorials/ex2: the right-hand side of the CG tests.
std::vector<double> sin_rhs(const CsrMatrix &A);

// ||b - A x||_2 in FP64 with the CSR matrix.
double residual_norm(const CsrMatrix &A, const double *b, const double *x);
double norm2(const std::vector<double> &v);
// The diagonal of A (0 where an entry is missing).
std::vector<double> diagonal_of(const CsrMatrix &A);
// A preconditioner u = M^-1 v of A's rows; Jacobi: u = D^-1 v.
using Precond = std::function<void(const double *v, double *u)>;
Precond jacobi_pc(const CsrMatrix &A);
// Symmetric Gauss-Seidel (SSOR with omega 1): M = (D + L) D^-1 (D + U), SPD for a symmetric A
// with a positive diagonal: a forward sweep (D + L) y = v, then the backward (D + U) u = D y.
// A must outlive the preconditioner.
Precond sgs_pc(const CsrMatrix &A);
// Broken preconditioners of n rows: u = -v (negative definite), and u = v with a NaN in the middle.
Precond negated_pc(size_t n);
Precond nan_pc(size_t n);
// FP64 PCG with M^-1 = pc, the reference of the mixed solvers' tests (PETSc's KSPCG with the
// unpreconditioned norm: the recurred residual ||r|| <= rtol ||b||, x_0 = 0); returns the
// iterations (max_it + 1: not converged), the solution in *x when given.
int64_t fp64_pcg(const CsrMatrix &A, const std::vector<double> &b, const Precond &pc, double rtol, int64_t max_it, std::vector<double> *x = nullptr);

} // namespace pspmv_test
