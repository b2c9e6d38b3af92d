// The scaled PackSELL copy of the mixed-precision preconditioner: s = D^-1/2 and A_hat.
#include "scaled_copy.hpp"
#include "scaling.hpp"
#include <cmath>
#include <cstdio>

namespace pspmv
{
namespace mixed
{

namespace
{

// s[r] = 1 / sqrt(a_rr); throws DiagonalError at the first row without a positive, finite
// diagonal entry.
std::vector<double> inverse_sqrt_diagonal(const CsrView &A)
{
  std::vector<double> s(size_t(A.rows));
  for (int32_t r = 0; r < A.rows; ++r) {
    double d     = 0.0;
    bool   found = false;
    for (int32_t k = A.rowptr[r]; k < A.rowptr[r + 1]; ++k)
      if (A.colidx[k] == r) {
        d     = A.values[k];
        found = true;
        break;
      }
    if (!found || !(d > 0.0) || !std::isfinite(d)) throw detail::diagonal_error(r, found, d);
    s[size_t(r)] = 1.0 / std::sqrt(d);
  }
  return s;
}

// a_ij * (s_i * s_j) (scaled_value of scaling.hpp: right over the whole double range): the
// product s_i * s_j is symmetric in i and j, so a symmetric A gives a symmetric A_hat before
// and after rounding to the value format.
// Throws ValueRangeError at the first entry (in CSR order) that is not finite, or whose scaled
// value is not (Inf) or is 0 for a nonzero entry (beyond double's range).
std::vector<double> scaled_values(const CsrView &A, const std::vector<double> &s)
{
  std::vector<double> v(size_t(A.nnz()));
  for (int32_t r = 0; r < A.rows; ++r)
    for (int32_t k = A.rowptr[r]; k < A.rowptr[r + 1]; ++k) {
      const double a = A.values[k], sr = s[size_t(r)], sc = s[size_t(A.colidx[k])];
      if (!std::isfinite(a)) throw detail::non_finite_error(r, A.colidx[k], a);
      v[size_t(k)] = scaled_value(a, sr, sc);
      if (!scaled_value_fits(a, v[size_t(k)])) throw detail::scaled_range_error(r, A.colidx[k], a, v[size_t(k)], sr, sc);
    }
  return v;
}

void check_square(const CsrView &A)
{
  check_csr(A);
  if (A.rows != A.cols) throw detail::not_square_error(A.rows, A.cols);
}

} // namespace

namespace detail
{

FormatError not_square_error(int32_t rows, int32_t cols)
{
  return FormatError("the scaled copy needs a square matrix (this one is " + std::to_string(rows) + " x " + std::to_string(cols) + ")");
}

DiagonalError diagonal_error(int64_t row, bool found, double d)
{
  if (!found) return DiagonalError(row, 0.0, "has no diagonal entry: the scaled copy D^-1/2 A D^-1/2 needs a positive diagonal");
  char v[32];
  std::snprintf(v, sizeof(v), "%.17g", d);
  return DiagonalError(row, d, std::string("has the diagonal entry ") + v + ": the scaled copy D^-1/2 A D^-1/2 needs it positive and finite (an SPD matrix)");
}

ValueRangeError non_finite_error(int64_t row, int64_t col, double value)
{
  char b[32];
  std::snprintf(b, sizeof(b), "%g", value);
  return ValueRangeError(row, col, std::string("the entry is ") + b + ": the scaled copy needs finite values");
}

ValueRangeError scaled_range_error(int64_t row, int64_t col, double a, double v, double si, double sj)
{
  char b[160];
  // the diagonal entries 1 / s^2, in long double: s^2 may leave double's range
  const long double dii = 1.0L / ((long double)si * si), djj = 1.0L / ((long double)sj * sj);
  std::snprintf(b, sizeof(b), "the entry %.6g scaled by 1/sqrt(a_ii a_jj) (diagonal entries %.6Lg and %.6Lg)", a, dii, djj);
  if (v != 0.0) return ValueRangeError(row, col, std::string(b) + " exceeds the largest double: no diagonal scaling makes this matrix fit the scaled copy (is it SPD?)");
  return ValueRangeError(row, col, std::string(b) + " is below the smallest double and would be stored as 0: drop the entry or rescale the matrix's rows and columns");
}

std::vector<double> diagonal_scaling(const CsrView &A)
{
  check_square(A);
  return inverse_sqrt_diagonal(A);
}

} // namespace detail

void dither_bits(const ValueFormat &f, int *m, int *emin)
{
  *m    = f.lossy() ? f.mantissa_bits : 0;
  *emin = f.kind == ValueKind::FP16 ? -14 : -126;
}

ScaledCopy build_scaled_copy(const CsrView &A, const PackSellOptions &opt, const CopyDither &dither)
{
  check_square(A);
  ScaledCopy c;
  c.s                   = inverse_sqrt_diagonal(A);
  std::vector<double> v = scaled_values(A, c.s);
  if (dither.on) {
    int m = 0, emin = 0;
    dither_bits(opt.value_format, &m, &emin);
    for (int32_t r = 0; r < A.rows; ++r)
      for (int32_t k = A.rowptr[r]; k < A.rowptr[r + 1]; ++k) v[size_t(k)] = dithered_value(v[size_t(k)], dither.row0 + r, dither.row0 + A.colidx[k], m, emin);
  }
  CsrView Ah = A;
  Ah.values  = v.data();
  c.op       = build_packsell(Ah, opt);
  c.nnz      = A.nnz();
  return c;
}

void update_scaled_copy(const CsrView &A, ScaledCopy &c)
{
  check_square(A);
  std::vector<double>       s  = inverse_sqrt_diagonal(A);
  const std::vector<double> v  = scaled_values(A, s);
  CsrView                   Ah = A;
  Ah.values                    = v.data();
  update_packsell_values(Ah, c.op); // c.op unchanged if this throws
  c.s.swap(s);
}

} // namespace mixed
} // namespace pspmv
