// Host twin of the inner-outer CG inner solver (PETSc-free): FP32 vectors, FP32 PackSELL
// products (packsell_spmv_f32), FP64 dot products: the algorithm the device solver
// (inner_cg_device.hpp) runs, so CI tests it without a GPU and the GPU tests compare with it.
#pragma once
#include "inner_solver.hpp"
#include "scaled_copy.hpp"
#include <vector>

namespace pspmv
{
namespace mixed
{

// Outcome of one inner solve.
struct InnerCgResult {
  int32_t its       = 0;     // steps applied
  bool    breakdown = false; // stopped at p^T A p <= 0
  bool    converged = false; // stopped by rtol or the residual floor
};

// x ~= A^-1 b by the steps of InnerCgParams (b, x: A.rows floats; x is overwritten). residuals,
// if given, receives ||r_k|| for k = 0 .. its (its + 1 values). A is square.
InnerCgResult inner_cg(const PackSellMatrix &A, const float *b, float *x, const InnerCgParams &p, std::vector<double> *residuals = nullptr);

// The preconditioner's host inner solve: z = M(r) for the scaled copy c (r, z: c.s.size()
// doubles), entry and exit as inner_solver.hpp says; counts go to *stats. residuals as above
// (left empty for r = 0 and for the Jacobi fallback's empty history).
void apply_inner_cg(const ScaledCopy &c, const InnerCgParams &p, const double *r, double *z, InnerStats *stats, std::vector<double> *residuals = nullptr);

} // namespace mixed
} // namespace pspmv
