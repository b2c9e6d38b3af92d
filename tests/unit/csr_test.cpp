// check_csr messages and the FP64 reference product.
#include "core/csr.hpp"
#include "csr_matrix.hpp"
#include <cmath>
#include <gtest/gtest.h>
#include <limits>

using namespace pspmv;
using namespace pspmv_test;

namespace
{

// Expects check_csr to throw a FormatError whose message contains every part.
void expect_csr_error(const CsrView &A, std::initializer_list<const char *> parts)
{
  try {
    check_csr(A);
    ADD_FAILURE() << "check_csr accepted a bad matrix";
  } catch (const FormatError &e) {
    for (const char *p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << "'" << p << "' not in: " << e.what();
  }
}

CsrMatrix small()
{ // 3 x 4
  return csr_from_rows(4, {{{0, 1.0}, {2, 2.0}}, {}, {{1, -3.0}, {3, 4.0}}});
}

} // namespace

TEST(CheckCsr, AcceptsValidMatricesIncludingEmptyOnes)
{
  EXPECT_NO_THROW(check_csr(small().view()));
  CsrView empty; // 0 x 0 without arrays
  EXPECT_NO_THROW(check_csr(empty));
  const CsrMatrix no_cols = csr_from_rows(0, {{}, {}});
  EXPECT_NO_THROW(check_csr(no_cols.view()));
}

TEST(CheckCsr, NamesTheRowAndColumnOutOfRange)
{
  CsrMatrix A = small();
  A.colidx[3] = 4; // row 2, column 4 of a 4-column matrix
  expect_csr_error(A.view(), {"row 2", "column 4", "out of range [0, 4)"});
  A.colidx[3] = -1;
  expect_csr_error(A.view(), {"row 2", "column -1", "out of range"});
}

TEST(CheckCsr, RefusesUnsortedAndDuplicateColumns)
{
  CsrMatrix A = small();
  std::swap(A.colidx[0], A.colidx[1]);
  expect_csr_error(A.view(), {"row 0", "not strictly increasing", "2 then 0"});
  A           = small();
  A.colidx[3] = 1; // duplicate in row 2
  expect_csr_error(A.view(), {"row 2", "not strictly increasing"});
}

TEST(CheckCsr, RefusesBadRowPointersAndSizes)
{
  CsrMatrix A = small();
  A.rowptr[0] = 1;
  expect_csr_error(A.view(), {"start at 0"});
  A           = small();
  A.rowptr[2] = 1; // 2, 1: decreases at row 1
  expect_csr_error(A.view(), {"row 1", "decreases"});
  A      = small();
  A.cols = -1;
  expect_csr_error(A.view(), {"non-negative"});
  CsrView no_ptr;
  no_ptr.rows = 2;
  expect_csr_error(no_ptr, {"row pointer"});
}

// The 32-bit limit of every layout's indices (what a PETSc with 64-bit indices can exceed): each
// of rows, columns and nonzeros up to 2^31 - 1 passes, 2^31 is refused with the sizes and the
// remedy named.
TEST(CheckFitsInt32, TheLimitIsTwoToThe31MinusOne)
{
  const int64_t max = INT32_MAX, over = int64_t(INT32_MAX) + 1;
  EXPECT_NO_THROW(check_fits_int32(0, 0, 0));
  EXPECT_NO_THROW(check_fits_int32(max, max, max));
  for (int which = 0; which < 3; ++which) {
    const int64_t rows = which == 0 ? over : 5, cols = which == 1 ? over : 6, nnz = which == 2 ? over : 7;
    try {
      check_fits_int32(rows, cols, nnz);
      ADD_FAILURE() << "accepted " << rows << " x " << cols << " with " << nnz << " nonzeros";
    } catch (const FormatError &e) {
      const std::string m = e.what();
      for (const std::string &p : {std::to_string(rows) + " rows", std::to_string(cols) + " columns", std::to_string(nnz) + " nonzeros", std::string("32-bit"), std::to_string(max), std::string("more MPI processes")})
        EXPECT_NE(m.find(p), std::string::npos) << "'" << p << "' not in: " << m;
    }
  }
}

TEST(CsrSpmv, HandComputedProductAndAdd)
{
  const CsrMatrix A    = small();
  const double    x[4] = {1.0, 10.0, 100.0, 1000.0};
  double          y[3] = {NAN, NAN, NAN};
  csr_spmv(A.view(), x, y, false);
  EXPECT_EQ(y[0], 201.0);
  EXPECT_EQ(y[1], 0.0); // empty row written, NaN gone
  EXPECT_EQ(y[2], 3970.0);
  csr_spmv(A.view(), x, y, true);
  EXPECT_EQ(y[0], 402.0);
  EXPECT_EQ(y[1], 0.0);
  EXPECT_EQ(y[2], 7940.0);
}
