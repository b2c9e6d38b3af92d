// Compares a format's product with the FP64 CSR reference, row by row.
#pragma once
#include "csr_matrix.hpp"
#include <functional>
#include <gtest/gtest.h>

namespace pspmv_test
{

// Error model of a layout. Bound checked for every row i (P = pattern of A):
//   |y - yref|_i <= 1.01 * (u (|A||x|)_i + eta (|P||x|)_i) + 1e-13 (|A||x|)_i
//                   [+ 2^-51 (|y0_i| + (|A||x|)_i) when add = true] + 1e-300
// u: unit roundoff of the value format (one rounding per stored value, |d| <= u |a|);
// eta: largest absolute error of a value rounded into the subnormal range (half the smallest
// subnormal, times 2^-s for a scaled layout). The factor 1.01 and the 1e-13 term absorb the
// FP64 accumulation error of both products (order of summation differs). Lossless layouts
// have u = eta = 0, i.e. 1e-13 (|A||x|)_i. With add = true a layout adds its row sum to y0
// in at most two steps (regular part, then tail), each rounded at the size of y0 + (Ax)_i:
// with the reference's one rounding, at most 3 half-ulps, below 2^-51 (|y0_i| + (|A||x|)_i).
struct ErrorModel {
  double u   = 0.0;
  double eta = 0.0;
};

using Product = std::function<void(const double *x, double *y, bool add)>;

// Runs y = A x (y filled with NaN first, so unwritten rows show) and y = y0 + A x (random
// y0) and checks both against csr_spmv. x random in [-1, 1] from seed, or the given x.
::testing::AssertionResult check_product(const CsrMatrix &A, const Product &f, const ErrorModel &m, uint64_t seed);
::testing::AssertionResult check_product_with(const CsrMatrix &A, const Product &f, const ErrorModel &m, const std::vector<double> &x, uint64_t seed);

} // namespace pspmv_test
