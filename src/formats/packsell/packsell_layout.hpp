// PackSELL layout: the 32-bit word and where each word lives. The one definition that the
// host builder, the value update, the host kernels and the CUDA kernels use.
//
// Word (W = 32 bits):  [ value : V bits | delta : D bits | flag : 1 bit ],  V + D + 1 = 32,
// V = ValueFormat::value_bits() (16 for FP16/BF16, 9+m for E8Mm). Exact mode has no value
// bits (its FP64 values are a separate array, one per word) and D = 30.
//   flag 1: a nonzero; its column is the row's previous column plus delta (the first nonzero
//           of a row counts from column 0).
//   flag 0: a dummy; the upper 31 bits are a column jump that did not fit in D bits, and the
//           real nonzero follows with delta 0. Padding words are 0: a dummy with jump 0.
// Slices of C sorted rows (C a multiple of 32 in [32, 1024]) are stored column-major: word k
// of sorted row s*C + lane is at slice_pointers[s] + lane + k*C; every slice, the last one
// too, is C rows wide and as long as its longest row in words.
//
// Column gaps (optional, chosen per matrix by the build): a table of one 32-bit gap g[s][k] per
// word position k of slice s, at gap_slot(slice_pointers[s], C, k) (slice_pointers.back() / C
// entries). With gaps, a nonzero's column is the previous column plus g[s][k] plus its delta,
// and a dummy's upper 31 bits are a signed jump (two's complement, |jump| < 2^30) that adds no
// gap. g[s][k] is the smallest column step of the k-th nonzero among the slice's rows, so a
// stencil's long steps (+-n^2 on a 7-point grid), which all rows of a slice share, cost the
// table one entry per slice instead of a dummy word per row. encode_row_columns() is the one
// encoding of a row, for the host and the device builders.
#pragma once
#include "core/host_device.hpp"
#include <cstdint>

namespace pspmv
{
namespace packsell
{

constexpr int32_t kWordBits = 32;
// Exact mode's D: the most the kernels' word constants take; a dummy then only precedes a
// column jump of 2^30 or more.
constexpr int32_t kExactDeltaBits = 30;
constexpr int32_t kMinSliceHeight = 32;
constexpr int32_t kMaxSliceHeight = 1024;

// D for a value field of V bits (V = 0: Exact): the rule V + D + 1 = W.
PSPMV_HD int32_t delta_bits_for(int32_t value_bits)
{
  return value_bits > 0 ? kWordBits - 1 - value_bits : kExactDeltaBits;
}
PSPMV_HD uint32_t delta_mask(int32_t D)
{
  return (uint32_t(1) << D) - 1u;
} // the largest delta
PSPMV_HD uint32_t value_shift(int32_t D)
{
  return static_cast<uint32_t>(D + 1);
} // the value field's lowest bit
PSPMV_HD uint32_t value_field_mask(int32_t D)
{
  return ~0u << (D + 1);
} // the value field in place

// A nonzero: value bits above the delta, flag 1.
PSPMV_HD uint32_t real_word(uint32_t value_bits, uint32_t delta, int32_t D)
{
  return (value_bits << (D + 1)) | (delta << 1) | 1u;
}
// A dummy: the whole column jump in the upper 31 bits, flag 0. Jump 0 is padding.
PSPMV_HD uint32_t dummy_word(uint32_t jump)
{
  return jump << 1;
}
PSPMV_HD uint32_t word_flag(uint32_t w)
{
  return w & 1u;
}
// Column jump of word w with flag = word_flag(w): the D-bit delta of a nonzero, the 31-bit
// jump of a dummy.
PSPMV_HD uint32_t word_jump(uint32_t w, uint32_t flag, uint32_t dmask)
{
  const uint32_t upper = w >> 1;
  return flag ? (upper & dmask) : upper;
}
PSPMV_HD uint32_t word_value_bits(uint32_t w, int32_t D)
{
  return w >> (D + 1);
}
// Word w with its value field replaced (a value update: delta and flag kept).
PSPMV_HD uint32_t with_value_bits(uint32_t w, uint32_t value_bits, int32_t D)
{
  return (value_bits << (D + 1)) | (w & ~value_field_mask(D));
}

// Whether the nonzero at column col, after one at column prev of its row (0 for the first),
// needs a dummy word before it: its delta does not fit in D bits (dmask = delta_mask(D)).
PSPMV_HD bool needs_dummy(int32_t col, int32_t prev, uint32_t dmask)
{
  return uint32_t(col - prev) > dmask;
}

// Column advance of word w (flag = word_flag(w)) in a layout with gaps (gapped; gap: the
// slice's g for the word's position): a nonzero's gap + delta, a dummy's signed jump (as
// uint32_t: columns advance modulo 2^32), 0 for padding. Without gaps word_jump(w, flag, dmask).
PSPMV_HD uint32_t word_advance(uint32_t w, uint32_t flag, uint32_t dmask, uint32_t gap, bool gapped)
{
  const uint32_t jump = gapped ? uint32_t(int32_t(w) >> 1) : (w >> 1);
  return flag ? gap + ((w >> 1) & dmask) : jump;
}

// Entries of the gap table of a layout of `words` words: one per word position of each slice.
PSPMV_HD int64_t gap_entries(int64_t words, int32_t C)
{
  return words / C;
}

// Gap table entry of word position k of the slice that starts at slice_start (a multiple of C).
PSPMV_HD int64_t gap_slot(int64_t slice_start, int32_t C, int64_t k)
{
  return slice_start / C + k;
}

// Largest column count of a layout with gaps: its dummies' signed jumps then stay within
// +-2^30 (column differences and gaps below 2^29 each).
constexpr int64_t kMaxGappedColumns = int64_t(1) << 29;

// Whether a layout of D delta bits and `cols` columns may have gaps: a dummy that would jump 0
// becomes a jump of -1 and a nonzero of delta 1, so D >= 1 (a zero word is padding); and not
// Exact's D = 30, whose dummies only precede jumps of 2^30 columns, more than a layout with gaps
// has (so the kernels need no Exact variant with gaps).
PSPMV_HD bool gaps_possible(int32_t D, int64_t cols)
{
  return D >= 1 && D < kExactDeltaBits && cols <= kMaxGappedColumns;
}

// The column gaps of a build before they are placed in the table: for slice s, the gap of
// word position k at min[off[s] + k] for k < off[s + 1] - off[s] (the most nonzeros a row of
// the slice stores), 0 beyond, and 0 everywhere without arrays (a layout without gaps).
// min[off[s] + k] is the smallest step (column less the previous column, the first from
// column 0) of the k-th stored nonzero over the slice's rows.
struct SliceGapMins {
  const int64_t    *off = nullptr;
  const uint32_t   *min = nullptr;
  PSPMV_HD uint32_t at(int64_t s, int64_t k) const { return off && k < off[s + 1] - off[s] ? min[off[s] + k] : 0u; }
};

// The words of one row whose stored nonzeros have the ascending columns col[0..n), at word
// positions 0, 1, ...: calls emit(k, word, j) for each, word without value bits (a nonzero's
// value goes in with with_value_bits) and j the nonzero's index (-1 for a dummy); returns the
// row's word count. gap(k): the slice's g for position k (0 without gaps; gapped as in
// word_advance). A nonzero is one word when its step minus the gap fits in D bits, else a dummy
// that lands gap(k + 1) short of it and then the nonzero with delta 0 (with gaps, a dummy that
// would jump 0 jumps -1 and the nonzero has delta 1). Never more than 2 words per nonzero.
template <class Gap, class Emit>
PSPMV_HD int32_t encode_row_columns(const int32_t *col, int32_t n, int32_t D, bool gapped, Gap &&gap, Emit &&emit)
{
  const uint32_t dmask = delta_mask(D);
  uint32_t       prev  = 0; // the previous nonzero's column (the first counts from column 0)
  int32_t        k     = 0;
  for (int32_t j = 0; j < n; ++j) {
    const uint32_t c     = uint32_t(col[j]);
    uint32_t       delta = c - prev - gap(k); // wraps when the step is below the gap
    if (delta > dmask) {
      uint32_t jump = c - prev - gap(k + 1);
      delta         = 0;
      if (gapped && jump == 0) { // a zero word would read as padding
        jump  = ~0u;             // -1
        delta = 1;
      }
      emit(k, dummy_word(jump), -1);
      ++k;
    }
    emit(k, real_word(0u, delta, D), j);
    ++k;
    prev = c;
  }
  return k;
}

// Bytes of every array a product reads: the words and, exact, their FP64 values; the gap table
// (gap_entries, 0 without gaps); the slices' int64 pointers; the rows' permutation; the COO tail
// (row, column, FP64 value per entry). The host layout's and the device build's statistics.
inline int64_t stored_bytes(int64_t words, bool exact, int64_t gap_entries, int64_t slices, int64_t rows, int64_t tail_nnz)
{
  return words * int64_t(sizeof(uint32_t) + (exact ? sizeof(double) : 0)) + gap_entries * int64_t(sizeof(uint32_t)) + (slices + 1) * int64_t(sizeof(int64_t)) + rows * int64_t(sizeof(int32_t)) + tail_nnz * int64_t(2 * sizeof(int32_t) + sizeof(double));
}

PSPMV_HD bool valid_slice_height(int32_t C)
{
  return C >= kMinSliceHeight && C <= kMaxSliceHeight && C % kMinSliceHeight == 0;
}
PSPMV_HD int32_t num_slices(int64_t rows, int32_t C)
{
  return static_cast<int32_t>((rows + C - 1) / C);
}
// Slice of a sorted row (I: int32_t or int64_t, the kernels' thread index type).
template <class I>
PSPMV_HD I slice_of(I sorted_row, int32_t C)
{
  return sorted_row / C;
}
// Position of a sorted row inside its slice s = slice_of(sorted_row, C).
template <class I>
PSPMV_HD int32_t lane_in_slice(I sorted_row, I s, int32_t C)
{
  return static_cast<int32_t>(sorted_row - s * C);
}
// Positions from word k of a sorted row to word k + step: one slice height C per word.
PSPMV_HD int64_t word_stride(int64_t step, int32_t C)
{
  return step * C;
}
// Word k of the sorted row at `lane` of a slice that starts at slice_start.
PSPMV_HD int64_t word_slot(int64_t slice_start, int32_t lane, int64_t k, int32_t C)
{
  return slice_start + lane + word_stride(k, C);
}
// Word 0 of sorted row i (host code; the kernels load the slice pointer themselves).
PSPMV_HD int64_t row_first_word(const int64_t *slice_pointers, int32_t i, int32_t C)
{
  const int32_t s = slice_of(i, C);
  return word_slot(slice_pointers[s], lane_in_slice(i, s, C), 0, C);
}

} // namespace packsell
} // namespace pspmv
