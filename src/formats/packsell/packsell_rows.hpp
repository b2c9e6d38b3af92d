// PackSELL host helpers shared by the builder, the value update and the host kernels (private
// to the format): the D of a value format and the walk over a stored row. The word layout
// itself is packsell_layout.hpp.
#pragma once
#include "packsell.hpp"
#include "packsell_layout.hpp"
#include <climits>
#include <cstdint>
#include <string>

namespace pspmv
{
namespace detail
{

inline int32_t packsell_delta_bits(const ValueFormat &f)
{
  return packsell::delta_bits_for(f.value_bits());
}

// Calls f(position, column) for every nonzero word of sorted row i, in column order.
// Stops at the first padding word: a real word has flag 1 and a dummy a nonzero jump
// (packsell_layout.hpp's encode_row_columns), so a zero word only follows a row's last nonzero.
template <class F>
void for_each_row_nonzero(const PackSellMatrix &M, int32_t i, F &&f)
{
  const int32_t  C = M.slice_height, s = packsell::slice_of(i, C);
  const int64_t  start = M.slice_pointers[size_t(s)], end = M.slice_pointers[size_t(s) + 1];
  const uint32_t md     = packsell::delta_mask(M.delta_bits);
  const bool     gapped = !M.gaps.empty();
  uint32_t       col    = 0; // columns advance modulo 2^32 (a dummy's jump may be negative)
  int64_t        k      = 0;
  for (int64_t p = packsell::row_first_word(M.slice_pointers.data(), i, C); p < end; p += packsell::word_stride(1, C), ++k) {
    const uint32_t w = M.words[size_t(p)];
    if (w == 0) break;
    const uint32_t flag = packsell::word_flag(w);
    col += packsell::word_advance(w, flag, md, gapped ? M.gaps[size_t(packsell::gap_slot(start, C, k))] : 0u, gapped);
    if (flag) f(p, int32_t(col));
  }
}

} // namespace detail
} // namespace pspmv
