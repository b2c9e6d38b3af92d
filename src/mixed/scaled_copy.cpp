// The scaled PackSELL copy of the mixed-precision preconditioner: s = D^-1/2 and A_hat.
#include "scaled_copy.hpp"
#include <cmath>
#include <cstdio>

namespace pspmv {
namespace mixed {

namespace {

// s[r] = 1 / sqrt(a_rr); throws DiagonalError at the first row without a positive, finite
// diagonal entry.
std::vector<double> inverse_sqrt_diagonal(const CsrView &A) {
  std::vector<double> s(size_t(A.rows));
  for (int32_t r = 0; r < A.rows; ++r) {
    double d = 0.0;
    bool found = false;
    for (int32_t k = A.rowptr[r]; k < A.rowptr[r + 1]; ++k)
      if (A.colidx[k] == r) {
        d = A.values[k];
        found = true;
        break;
      }
    if (!found || !(d > 0.0) || !std::isfinite(d)) throw detail::diagonal_error(r, found, d);
    s[size_t(r)] = 1.0 / std::sqrt(d);
  }
  return s;
}

// a_ij * (s_i * s_j): the product s_i * s_j is symmetric in i and j, so a symmetric A gives a
// symmetric A_hat before and after rounding to the value format.
// Throws ValueRangeError at the first entry (in CSR order) that is not finite.
std::vector<double> scaled_values(const CsrView &A, const std::vector<double> &s) {
  std::vector<double> v(size_t(A.nnz()));
  for (int32_t r = 0; r < A.rows; ++r)
    for (int32_t k = A.rowptr[r]; k < A.rowptr[r + 1]; ++k) {
      if (!std::isfinite(A.values[k])) throw detail::non_finite_error(r, A.colidx[k], A.values[k]);
      v[size_t(k)] = A.values[k] * (s[size_t(r)] * s[size_t(A.colidx[k])]);
    }
  return v;
}

void check_square(const CsrView &A) {
  check_csr(A);
  if (A.rows != A.cols) throw detail::not_square_error(A.rows, A.cols);
}

} // namespace

namespace detail {

FormatError not_square_error(int32_t rows, int32_t cols) {
  return FormatError("the mixed-precision preconditioner needs a square matrix (this one is " + std::to_string(rows) + " x " +
                     std::to_string(cols) + ")");
}

DiagonalError diagonal_error(int64_t row, bool found, double d) {
  if (!found)
    return DiagonalError(row, 0.0, "row " + std::to_string(row) +
                                       " has no diagonal entry: the mixed-precision preconditioner scales the matrix by its diagonal (D^-1/2 A D^-1/2) and needs a positive diagonal");
  char v[32];
  std::snprintf(v, sizeof(v), "%.17g", d);
  return DiagonalError(row, d, "row " + std::to_string(row) + " has the diagonal entry " + v +
                                   ": the mixed-precision preconditioner scales the matrix by its diagonal (D^-1/2 A D^-1/2) and needs it positive and finite (an SPD matrix)");
}

ValueRangeError non_finite_error(int64_t row, int64_t col, double value) {
  char b[32];
  std::snprintf(b, sizeof(b), "%g", value);
  return ValueRangeError(row, col, std::string("the entry is ") + b + ": the mixed-precision preconditioner's copy needs finite values");
}

} // namespace detail

ScaledCopy build_scaled_copy(const CsrView &A, const PackSellOptions &opt) {
  check_square(A);
  ScaledCopy c;
  c.s = inverse_sqrt_diagonal(A);
  const std::vector<double> v = scaled_values(A, c.s);
  CsrView Ah = A;
  Ah.values = v.data();
  c.op = build_packsell(Ah, opt);
  c.nnz = A.nnz();
  return c;
}

void update_scaled_copy(const CsrView &A, ScaledCopy &c) {
  check_square(A);
  std::vector<double> s = inverse_sqrt_diagonal(A);
  const std::vector<double> v = scaled_values(A, s);
  CsrView Ah = A;
  Ah.values = v.data();
  update_packsell_values(Ah, c.op); // c.op unchanged if this throws
  c.s.swap(s);
}

} // namespace mixed
} // namespace pspmv
