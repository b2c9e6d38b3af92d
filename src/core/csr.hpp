// CSR view: the input every format builder reads (PETSc-free).
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace pspmv
{

// Errors of the core layer. The PETSc glue catches these and raises a PETSc error
// with the same message, so every message is a full sentence for the user.
struct FormatError : std::invalid_argument { // bad input or bad option
  using std::invalid_argument::invalid_argument;
};
// A value that does not fit the chosen value format. row and col locate the offending entry
// as indices of the CSR given to the builder (local indices: the PETSc glue adds its row and
// column offsets and re-issues message() with global numbers); what() is the full sentence
// "row <row>, column <col>: <message()>".
struct ValueRangeError : std::range_error {
  ValueRangeError(int64_t row_, int64_t col_, const std::string &message_) :
    std::range_error("row " + std::to_string(row_) + ", column " + std::to_string(col_) + ": " + message_), row(row_), col(col_), msg(std::make_shared<const std::string>(message_))
  {
  }
  // The message without the coordinates ("value 1e+06 overflows ...; use ...").
  const std::string &message() const noexcept { return *msg; }

  int64_t row; // CSR row of the offending entry
  int64_t col; // its column

private:
  std::shared_ptr<const std::string> msg; // shared: copying an exception must not throw
};

// Non-owning CSR matrix with 32-bit indices and FP64 values (PETSc's AIJ arrays as they are).
// rowptr has rows+1 entries starting at 0; colidx and values have rowptr[rows] entries.
// Columns inside a row must be strictly increasing (AIJ guarantees it after assembly).
struct CsrView {
  int32_t        rows   = 0;
  int32_t        cols   = 0;
  const int32_t *rowptr = nullptr;
  const int32_t *colidx = nullptr;
  const double  *values = nullptr;

  int64_t nnz() const { return rows > 0 ? rowptr[rows] : 0; }
  int32_t row_length(int32_t r) const { return rowptr[r + 1] - rowptr[r]; }
};

// Checks that a matrix of rows x cols with nnz stored entries can be indexed with the 32-bit
// integers of CsrView and of every layout (each below 2^31). Throws FormatError naming the sizes
// and the limit. (A PETSc built with 64-bit indices passes its process blocks through here.)
void check_fits_int32(int64_t rows, int64_t cols, int64_t nnz);

// Checks shapes and indices: non-negative sizes, rowptr monotone from 0, columns in
// [0, cols) and strictly increasing inside each row. Throws FormatError naming the first
// offending row (csr_defect_message of csr_defect). O(nnz).
void check_csr(const CsrView &A);

// The first defect of a CSR in check_csr's order, as data: its kind, its row and the two
// numbers the message names (a, b). The device check (src/cuda/device_build) finds the same
// defect on the device and reports it with the same message.
struct CsrDefect {
  enum class Kind : int {
    None = 0,
    NegativeSize, // a = rows, b = cols
    MissingRowptr,
    RowptrStart,          // a = rowptr[0]
    RowptrDecreases,      // row, a = rowptr[row], b = rowptr[row + 1]
    MissingArrays,        // a = nnz
    ColumnOutOfRange,     // row, a = the column
    ColumnsNotIncreasing, // row, a then b
    RowptrEnd             // a = rowptr[rows], b = the nonzeros the arrays hold (device CSR only)
  };
  Kind    kind = Kind::None;
  int64_t row = -1, a = 0, b = 0;
};
CsrDefect csr_defect(const CsrView &A);
// The first defect among the n columns col[0..n) of row `row` of a matrix of `cols` columns.
CsrDefect csr_row_columns_defect(int64_t row, const int32_t *col, int64_t n, int64_t cols);
// check_csr's sentence for defect d of a matrix of `cols` columns.
std::string csr_defect_message(const CsrDefect &d, int64_t cols);

// y = A x (add == false) or y = y + A x (add == true), plain FP64 CSR: the reference
// every format is tested against. x has cols entries, y has rows entries.
void csr_spmv(const CsrView &A, const double *x, double *y, bool add);

} // namespace pspmv
