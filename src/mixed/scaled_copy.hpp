// The inner operator of the mixed-precision preconditioner (PETSc-free): the symmetrically
// scaled matrix A_hat = D^-1/2 A D^-1/2 (D = diag(A)) stored in PackSELL with a reduced-precision
// value format. A_hat has a unit diagonal, so its values fit FP16/BF16/E8Mm ranges without a
// scale exponent on most matrices, and its rounding keeps a symmetric A symmetric: each value is
// a_ij * (s_i * s_j) with s = D^-1/2, and s_i * s_j == s_j * s_i exactly.
// Design and performance model: ../shared/MIXED.md, docs/mixed.md.
#pragma once
#include "core/csr.hpp"
#include "formats/packsell/packsell.hpp"
#include <cstdint>
#include <string>
#include <vector>

namespace pspmv
{
namespace mixed
{

// A row whose diagonal entry is missing, zero, negative or not finite: no symmetric scaling.
// row is the CSR row (local: the PETSc glue adds its offset), value the entry (0 when missing).
// A diagonal entry the scaling cannot take: what() is "row <row> " + problem (the row in the
// CSR's own numbering); the glue names the row in the user's numbering before the problem.
struct DiagonalError : FormatError {
  DiagonalError(int64_t row_, double value_, const std::string &problem_) : FormatError("row " + std::to_string(row_) + " " + problem_), row(row_), value(value_), problem(problem_) { }
  int64_t     row;
  double      value;
  std::string problem; // "has the diagonal entry 0: ..."
};

struct ScaledCopy {
  std::vector<double> s;  // rows entries: 1 / sqrt(a_ii)
  PackSellMatrix      op; // A_hat in PackSELL (its value format as asked)
  int64_t             nnz = 0;
};

// Dithered rounding of a copy's off-diagonal values (dithered_value of scaling.hpp), with the
// global indices row0 + r and row0 + c of the square block's entry (r, c); off by default (the
// preconditioner's copies). The value updates below do not dither.
struct CopyDither {
  bool    on   = false;
  int64_t row0 = 0;
};
// The mantissa bits and smallest normal binade that dithered_value() takes for format f (m = 0:
// the exact format, nothing to dither).
void dither_bits(const ValueFormat &f, int *m, int *emin);

// Builds the scaled copy of a square A with a positive diagonal. Throws FormatError for a
// non-square A, DiagonalError (its first offending row) for a diagonal entry that is missing or
// not positive and finite, ValueRangeError (A's row and column) for an entry that is not finite
// or whose scaled value a_ij / sqrt(a_ii a_jj) is beyond double's range (Inf, or 0 for a
// nonzero: scaled_range_error), and build_packsell's errors (ValueRangeError with A's row and column) when a scaled value does
// not fit opt.value_format. O(nnz) plus the PackSELL build.
ScaledCopy build_scaled_copy(const CsrView &A, const PackSellOptions &opt, const CopyDither &dither = CopyDither{});

// Same pattern, new values: recomputes s and re-encodes A_hat's values (update_packsell_values).
// Throws as build_scaled_copy (c unchanged then), and FormatError when the pattern differs.
void update_scaled_copy(const CsrView &A, ScaledCopy &c);

// The errors of the checks above, one definition for the host build and the device build
// (scaled_copy_device.hpp): the same types and messages. row and col are CSR indices.
namespace detail
{
FormatError not_square_error(int32_t rows, int32_t cols);
// found: the row has a diagonal entry (of value d); without one d is 0 in the error.
DiagonalError   diagonal_error(int64_t row, bool found, double d);
ValueRangeError non_finite_error(int64_t row, int64_t col, double value);
// The scaled value v = scaled_value(a, si, sj) of entry (row, col) does not fit double: Inf, or
// 0 for a nonzero a (scaled_value_fits of scaling.hpp).
ValueRangeError scaled_range_error(int64_t row, int64_t col, double a, double v, double si, double sj);
// s = D^-1/2 of a square A, s_r = 1 / sqrt(a_rr): build_scaled_copy()'s s, bit for bit. Throws
// as build_scaled_copy() for a CSR defect, a non-square A or a diagonal entry that is missing or
// not positive and finite (the first such row); reads only the diagonal. O(nnz).
std::vector<double> diagonal_scaling(const CsrView &A);
} // namespace detail

} // namespace mixed
} // namespace pspmv
