#include "csr_matrix.hpp"

namespace pspmv_test
{

CsrMatrix csr_from_rows(int32_t cols, const std::vector<std::vector<RowEntry>> &rows)
{
  CsrMatrix A;
  A.rows = int32_t(rows.size());
  A.cols = cols;
  for (const auto &row : rows) {
    for (const RowEntry &e : row) {
      A.colidx.push_back(e.col);
      A.values.push_back(e.val);
    }
    A.rowptr.push_back(int32_t(A.colidx.size()));
  }
  return A;
}

} // namespace pspmv_test
