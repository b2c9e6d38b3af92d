// Owning CSR matrix for the tests (the core only has a non-owning view).
#pragma once
#include "core/csr.hpp"
#include <cstdint>
#include <vector>

namespace pspmv_test
{

struct CsrMatrix {
  int32_t              rows = 0, cols = 0;
  std::vector<int32_t> rowptr{0};
  std::vector<int32_t> colidx;
  std::vector<double>  values;

  pspmv::CsrView view() const
  {
    pspmv::CsrView v;
    v.rows   = rows;
    v.cols   = cols;
    v.rowptr = rowptr.data();
    v.colidx = colidx.data();
    v.values = values.data();
    return v;
  }
  int64_t nnz() const { return int64_t(colidx.size()); }
  int32_t row_length(int32_t r) const { return rowptr[size_t(r) + 1] - rowptr[size_t(r)]; }
  int32_t max_row_length() const
  {
    int32_t m = 0;
    for (int32_t r = 0; r < rows; ++r) m = row_length(r) > m ? row_length(r) : m;
    return m;
  }
};

// Builds a matrix from rows of (column, value) pairs given in increasing column order.
struct RowEntry {
  int32_t col;
  double  val;
};
CsrMatrix csr_from_rows(int32_t cols, const std::vector<std::vector<RowEntry>> &rows);

} // namespace pspmv_test
