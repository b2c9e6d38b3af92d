// Small helpers shared by the format builders (private to src/core).
#pragma once
#include "csr.hpp"
#include "hybrid.hpp"
#include <algorithm>
#include <string>

namespace pspmv
{
namespace detail
{

inline int32_t max_row_length(const CsrView &A)
{
  int32_t m = 0;
  for (int32_t r = 0; r < A.rows; ++r) m = std::max(m, A.row_length(r));
  return m;
}

// Throws for a hybrid option that a builder cannot use (fixed width < 1, unknown mode).
inline void check_hybrid_option(const HybridOption &h)
{
  if (h.mode != HybridOption::Mode::None && h.mode != HybridOption::Mode::Auto && h.mode != HybridOption::Mode::Fixed) throw FormatError("hybrid option has an unknown mode: use auto, none, or a width K >= 1");
  if (h.mode == HybridOption::Mode::Fixed && h.width < 1) throw FormatError("hybrid width K must be >= 1, got " + std::to_string(h.width) + ": use auto, none, or a positive integer");
}

// Shape and nonzero count checks of a value-only update.
inline void check_same_shape(const CsrView &A, int32_t rows, int32_t cols, int64_t nnz)
{
  if (A.rows != rows || A.cols != cols || A.nnz() != nnz)
    throw FormatError("value update: the matrix is " + std::to_string(A.rows) + " x " + std::to_string(A.cols) + " with " + std::to_string(A.nnz()) + " nonzeros but the layout was built for " + std::to_string(rows) + " x " + std::to_string(cols) + " with " + std::to_string(nnz) + "; the nonzero pattern changed, rebuild the layout");
}

// build_coo_tail without the O(nnz) check_csr (the builders have checked A already).
CooTail coo_tail_of(const CsrView &A, int32_t K);

inline FormatError pattern_changed(int32_t row)
{
  return FormatError("value update: row " + std::to_string(row) +
                     ": the nonzero pattern differs from the one the layout was built from; "
                     "rebuild the layout");
}

} // namespace detail
} // namespace pspmv
