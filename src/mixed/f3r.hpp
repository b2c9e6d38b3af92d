// Host twin of the F3R inner solver (PETSc-free): the nested FGMRES(m2) FP32 / FGMRES(m3) FP32 /
// Richardson(m4) FP16-vector scheme of F3R (Suzuki, Iwashita, SC'25; github suzuki-hpc/F3R,
// work/src/f3r-gpu.cpp) on the scaled PackSELL copy: the algorithm the device solver
// (f3r_device.hpp) runs. FP16 vectors are emulated on the host by rounding to binary16 after
// each operation that writes them (value_codec's FP16), products accumulate in FP32.
#pragma once
#include "inner_solver.hpp"
#include "scaled_copy.hpp"
#include <vector>

namespace pspmv {
namespace mixed {

// The Richardson weights' running state (F3R's adaptive weight): kept between applications.
struct F3RState {
  std::vector<double> weight_sum;  // m4 entries
  std::vector<double> weight;      // m4 entries: the weights in use
  int64_t             calls = 0;   // innermost calls so far
};

// x ~= A^-1 b by one F3R inner solve (b, x: A.rows floats); st carries the weights.
void f3r_solve(const PackSellMatrix &A, const float *b, float *x, const F3RParams &p, F3RState *st);

// The preconditioner's host inner solve with F3R: z = M(r), entry and exit as inner_solver.hpp.
void apply_inner_f3r(const ScaledCopy &c, const F3RParams &p, const double *r, double *z, F3RState *st,
                     InnerStats *stats);

} // namespace mixed
} // namespace pspmv
