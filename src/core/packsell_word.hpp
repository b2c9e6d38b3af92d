// PackSELL word packing and the row walker shared by the builder, the update and the host
// kernels (private to src/core). Layout: [ value : V | delta : D | flag : 1 ].
#pragma once
#include "packsell.hpp"
#include <climits>
#include <cstdint>
#include <string>

namespace pspmv {
namespace detail {

// D = 31 - V for a lossy value format. Exact mode has an empty value field and D = 30 (the
// most the kernels' word constants take): a dummy only for a jump of 2^30 columns or more.
// (It had D = 15 until run 9, as FP16: a dummy then cost 12 bytes, its word and an unused
// FP64 value, and the 7-point Laplacian with 200^3 rows stored 10 words per row for 7
// nonzeros; docs/benchmarks.md run 9.)
constexpr int32_t kExactDeltaBits = 30;
inline int32_t packsell_delta_bits(const ValueFormat &f) { return f.lossy() ? 31 - f.value_bits() : kExactDeltaBits; }

inline uint32_t max_delta(int32_t D) { return (uint32_t(1) << D) - 1; }

// A nonzero: value bits above the delta, flag 1.
inline uint32_t real_word(uint32_t value_bits, uint32_t delta, int32_t D) {
  return (value_bits << (D + 1)) | (delta << 1) | 1u;
}
// A dummy: the whole column jump in the upper 31 bits, flag 0. Jump 0 is padding.
inline uint32_t dummy_word(uint32_t jump) { return jump << 1; }

// Words the first n nonzeros of CSR row r need: one each, plus a dummy before every
// nonzero whose column delta does not fit in D bits. Throws FormatError when that is more
// than a slice width holds (INT32_MAX: only a row of more than 2^30 nonzeros with D <= 1).
inline int32_t row_words(const CsrView &A, int32_t r, int32_t n, int32_t D) {
  const uint32_t md = max_delta(D);
  int32_t prev = 0;
  int64_t words = n;
  for (int32_t k = A.rowptr[r]; k < A.rowptr[r] + n; ++k) {
    if (uint32_t(A.colidx[k] - prev) > md) ++words;
    prev = A.colidx[k];
  }
  if (words > INT32_MAX)
    throw FormatError("PackSELL row " + std::to_string(r) + " needs " + std::to_string(words) +
                      " words (its nonzeros and a dummy before every column jump beyond " + std::to_string(md) +
                      "), more than a slice holds (" + std::to_string(INT32_MAX) +
                      "); use a value format with more delta bits (fp16, bf16: 15; exact: 30)");
  return int32_t(words);
}

// Calls f(position, column) for every nonzero word of sorted row i, in column order.
// Stops at the first padding word: a real word has flag 1 and a dummy a jump >= 1, so a
// zero word only appears after the last nonzero of a row.
template <class F> void for_each_row_nonzero(const PackSellMatrix &M, int32_t i, F &&f) {
  const int32_t C = M.slice_height, s = i / C;
  const int64_t begin = M.slice_pointers[size_t(s)] + i % C;
  const int64_t end = M.slice_pointers[size_t(s) + 1];
  const uint32_t md = max_delta(M.delta_bits);
  int64_t col = 0;
  for (int64_t p = begin; p < end; p += C) {
    const uint32_t w = M.words[size_t(p)];
    if (w == 0) break;
    if (w & 1u) {
      col += (w >> 1) & md;
      f(p, int32_t(col));
    } else {
      col += w >> 1;
    }
  }
}

} // namespace detail
} // namespace pspmv
