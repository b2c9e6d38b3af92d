#include "spmv_check.hpp"
#include "random_matrix.hpp"
#include <cmath>
#include <limits>
#include <sstream>

namespace pspmv_test
{

::testing::AssertionResult check_product_with(const CsrMatrix &A, const Product &f, const ErrorModel &m, const std::vector<double> &x, uint64_t seed)
{
  const size_t rows = size_t(A.rows);
  // |A||x| and |P||x| only over the entries of x the row touches (x may hold NaN elsewhere).
  std::vector<double> abs_ax(rows, 0.0), pat_x(rows, 0.0);
  for (size_t r = 0; r < rows; ++r)
    for (int32_t k = A.rowptr[r]; k < A.rowptr[r + 1]; ++k) {
      const double ax = std::fabs(x[size_t(A.colidx[size_t(k)])]);
      abs_ax[r] += std::fabs(A.values[size_t(k)]) * ax;
      pat_x[r] += ax;
    }
  const std::vector<double> y0 = random_vector(A.rows, seed ^ 0x5eed);

  for (int add = 0; add <= 1; ++add) {
    std::vector<double> y(rows, std::numeric_limits<double>::quiet_NaN()), yref(rows, 0.0);
    if (add) y = y0, yref = y0;
    f(x.data(), y.data(), add != 0);
    pspmv::csr_spmv(A.view(), x.data(), yref.data(), add != 0);
    int                failures = 0;
    std::ostringstream msg;
    msg.precision(17);
    for (size_t r = 0; r < rows; ++r) {
      double bound = 1.01 * (m.u * abs_ax[r] + m.eta * pat_x[r]) + 1e-13 * abs_ax[r] + 1e-300;
      if (add) bound += 0x1.0p-51 * (std::fabs(y0[r]) + abs_ax[r]);
      const double err = std::fabs(y[r] - yref[r]);
      if (!(err <= bound)) { // also catches NaN
        if (failures < 5) msg << "\n  row " << r << (add ? " (add)" : "") << ": y = " << y[r] << ", reference " << yref[r] << ", error " << err << " > bound " << bound;
        ++failures;
      }
    }
    if (failures) return ::testing::AssertionFailure() << failures << " of " << rows << " rows out of bound" << msg.str();
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult check_product(const CsrMatrix &A, const Product &f, const ErrorModel &m, uint64_t seed)
{
  return check_product_with(A, f, m, random_vector(A.cols, seed), seed);
}

} // namespace pspmv_test
