// CSR checks and the FP64 reference product.
#include "csr.hpp"

namespace pspmv {

namespace {
std::string range(int64_t lo, int64_t hi) {
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + ")";
}
} // namespace

void check_fits_int32(int64_t rows, int64_t cols, int64_t nnz) {
  if (rows <= INT32_MAX && cols <= INT32_MAX && nnz <= INT32_MAX) return;
  throw FormatError("a block of " + std::to_string(rows) + " rows, " + std::to_string(cols) +
                    " columns and " + std::to_string(nnz) +
                    " nonzeros is too large: petscspmv indexes each process's block with 32-bit "
                    "integers (rows, columns and nonzeros at most " + std::to_string(INT32_MAX) +
                    " each); distribute the matrix over more MPI processes");
}

void check_csr(const CsrView &A) {
  if (A.rows < 0 || A.cols < 0)
    throw FormatError("matrix sizes must be non-negative, got " + std::to_string(A.rows) + " x " +
                      std::to_string(A.cols));
  if (A.rows == 0) return;
  if (!A.rowptr) throw FormatError("row pointer array is missing for a matrix with rows");
  if (A.rowptr[0] != 0)
    throw FormatError("row pointers must start at 0, got " + std::to_string(A.rowptr[0]));
  for (int32_t r = 0; r < A.rows; ++r)
    if (A.rowptr[r + 1] < A.rowptr[r])
      throw FormatError("row " + std::to_string(r) + ": row pointer decreases from " +
                        std::to_string(A.rowptr[r]) + " to " + std::to_string(A.rowptr[r + 1]));
  if (A.nnz() > 0 && (!A.colidx || !A.values))
    throw FormatError("column or value array is missing for a matrix with " +
                      std::to_string(A.nnz()) + " nonzeros");
  for (int32_t r = 0; r < A.rows; ++r) {
    for (int32_t k = A.rowptr[r]; k < A.rowptr[r + 1]; ++k) {
      const int32_t c = A.colidx[k];
      if (c < 0 || c >= A.cols)
        throw FormatError("row " + std::to_string(r) + ": column " + std::to_string(c) +
                          " is out of range " + range(0, A.cols));
      if (k > A.rowptr[r] && c <= A.colidx[k - 1])
        throw FormatError("row " + std::to_string(r) + ": columns are not strictly increasing (" +
                          std::to_string(A.colidx[k - 1]) + " then " + std::to_string(c) +
                          "); sort the columns and merge duplicates");
    }
  }
}

void csr_spmv(const CsrView &A, const double *x, double *y, bool add) {
  for (int32_t r = 0; r < A.rows; ++r) {
    double sum = 0.0;
    for (int32_t k = A.rowptr[r]; k < A.rowptr[r + 1]; ++k) sum += A.values[k] * x[A.colidx[k]];
    y[r] = add ? y[r] + sum : sum;
  }
}

} // namespace pspmv
