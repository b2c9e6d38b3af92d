// RgCSR layout: where each regular nonzero lives. The one definition of the addressing that
// the host builder, the value update, the host kernels and the CUDA kernels use.
//
// Rows are cut into groups of G consecutive rows (G a multiple of 32 in [32, 1024]). Group g
// starts at slot group_pointers[g]; nonzero k of row r = g*G + lane is at
//   group_pointers[g] + lane + k*G
// (column-major inside the group: a warp's 32 rows read 32 consecutive slots per k). Every
// group, the last one too, is G rows wide and as long as its longest row (regular part only,
// at most K nonzeros); row_length[r] holds the true length, so padding is never read.
// Padding slots hold value 0 and column 0.
#pragma once
#include "core/host_device.hpp"
#include <cstdint>

namespace pspmv
{
namespace rgcsr
{

constexpr int32_t kMinGroupSize = 32;   // a warp: G is a multiple of it
constexpr int32_t kMaxGroupSize = 1024; // a kernel block holds at most 1024 threads

PSPMV_HD bool valid_group_size(int32_t G)
{
  return G >= kMinGroupSize && G <= kMaxGroupSize && G % kMinGroupSize == 0;
}
PSPMV_HD int32_t num_groups(int64_t rows, int32_t G)
{
  return static_cast<int32_t>((rows + G - 1) / G);
}
PSPMV_HD int32_t group_of(int32_t r, int32_t G)
{
  return r / G;
}
// Position of row r inside its group g = group_of(r, G).
PSPMV_HD int32_t lane_in_group(int32_t r, int32_t g, int32_t G)
{
  return r - g * G;
}
// Slot of the row's nonzero 0, given its group's first slot (group_pointers[g]).
PSPMV_HD int64_t first_slot(int64_t group_start, int32_t lane)
{
  return group_start + lane;
}
// Slots from nonzero k of a row to nonzero k + step: one group width G per nonzero.
PSPMV_HD int64_t slot_stride(int64_t step, int32_t G)
{
  return step * G;
}
// Slot of nonzero k of a row whose nonzero 0 is at `first`.
PSPMV_HD int64_t slot(int64_t first, int64_t k, int32_t G)
{
  return first + slot_stride(k, G);
}
// Slot of nonzero 0 of row r (host code; the kernels load the group pointer themselves).
PSPMV_HD int64_t row_first_slot(const int64_t *group_pointers, int32_t r, int32_t G)
{
  const int32_t g = group_of(r, G);
  return first_slot(group_pointers[g], lane_in_group(r, g, G));
}
// Slots a group of rows of at most `width` regular nonzeros takes (padding included).
PSPMV_HD int64_t group_slots(int32_t width, int32_t G)
{
  return static_cast<int64_t>(width) * G;
}

} // namespace rgcsr
} // namespace pspmv
