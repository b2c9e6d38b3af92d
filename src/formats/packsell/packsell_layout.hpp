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
