// CSR checks and the FP64 reference product.
#include "csr.hpp"

namespace pspmv
{

namespace
{
std::string range(int64_t lo, int64_t hi)
{
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + ")";
}
} // namespace

void check_fits_int32(int64_t rows, int64_t cols, int64_t nnz)
{
  if (rows <= INT32_MAX && cols <= INT32_MAX && nnz <= INT32_MAX) return;
  throw FormatError("a block of " + std::to_string(rows) + " rows, " + std::to_string(cols) + " columns and " + std::to_string(nnz) +
                    " nonzeros is too large: petscspmv indexes each process's block with 32-bit "
                    "integers (rows, columns and nonzeros at most " +
                    std::to_string(INT32_MAX) + " each); distribute the matrix over more MPI processes");
}

CsrDefect csr_row_columns_defect(int64_t row, const int32_t *col, int64_t n, int64_t cols)
{
  using K = CsrDefect::Kind;
  for (int64_t k = 0; k < n; ++k) {
    if (col[k] < 0 || col[k] >= cols) return {K::ColumnOutOfRange, row, col[k], 0};
    if (k > 0 && col[k] <= col[k - 1]) return {K::ColumnsNotIncreasing, row, col[k - 1], col[k]};
  }
  return {};
}

CsrDefect csr_defect(const CsrView &A)
{
  using K = CsrDefect::Kind;
  if (A.rows < 0 || A.cols < 0) return {K::NegativeSize, -1, A.rows, A.cols};
  if (A.rows == 0) return {};
  if (!A.rowptr) return {K::MissingRowptr, -1, 0, 0};
  if (A.rowptr[0] != 0) return {K::RowptrStart, -1, A.rowptr[0], 0};
  for (int32_t r = 0; r < A.rows; ++r)
    if (A.rowptr[r + 1] < A.rowptr[r]) return {K::RowptrDecreases, r, A.rowptr[r], A.rowptr[r + 1]};
  if (A.nnz() > 0 && (!A.colidx || !A.values)) return {K::MissingArrays, -1, A.nnz(), 0};
  for (int32_t r = 0; r < A.rows; ++r) {
    const CsrDefect d = csr_row_columns_defect(r, A.colidx + A.rowptr[r], A.row_length(r), A.cols);
    if (d.kind != K::None) return d;
  }
  return {};
}

std::string csr_defect_message(const CsrDefect &d, int64_t cols)
{
  using K               = CsrDefect::Kind;
  const std::string row = "row " + std::to_string(d.row) + ": ";
  switch (d.kind) {
  case K::None:
    return "";
  case K::NegativeSize:
    return "matrix sizes must be non-negative, got " + std::to_string(d.a) + " x " + std::to_string(d.b);
  case K::MissingRowptr:
    return "row pointer array is missing for a matrix with rows";
  case K::RowptrStart:
    return "row pointers must start at 0, got " + std::to_string(d.a);
  case K::RowptrDecreases:
    return row + "row pointer decreases from " + std::to_string(d.a) + " to " + std::to_string(d.b);
  case K::MissingArrays:
    return "column or value array is missing for a matrix with " + std::to_string(d.a) + " nonzeros";
  case K::ColumnOutOfRange:
    return row + "column " + std::to_string(d.a) + " is out of range " + range(0, cols);
  case K::ColumnsNotIncreasing:
    return row + "columns are not strictly increasing (" + std::to_string(d.a) + " then " + std::to_string(d.b) + "); sort the columns and merge duplicates";
  case K::RowptrEnd:
    return "row pointers end at " + std::to_string(d.a) + " but the matrix holds " + std::to_string(d.b) + " nonzeros";
  }
  return "invalid CSR";
}

void check_csr(const CsrView &A)
{
  const CsrDefect d = csr_defect(A);
  if (d.kind != CsrDefect::Kind::None) throw FormatError(csr_defect_message(d, A.cols));
}

void csr_spmv(const CsrView &A, const double *x, double *y, bool add)
{
  for (int32_t r = 0; r < A.rows; ++r) {
    double sum = 0.0;
    for (int32_t k = A.rowptr[r]; k < A.rowptr[r + 1]; ++k) sum += A.values[k] * x[A.colidx[k]];
    y[r] = add ? y[r] + sum : sum;
  }
}

} // namespace pspmv
