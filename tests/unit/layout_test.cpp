// The layout headers' arithmetic at the edges: slots and word positions beyond 2^31 (64-bit
// throughout), the PackSELL word at every D, the V + D + 1 = 32 rule.
#include "formats/packsell/packsell_layout.hpp"
#include "formats/rgcsr/rgcsr_layout.hpp"

#include <gtest/gtest.h>

#include <cstdint>

using namespace pspmv;

TEST(RgCsrLayout, SlotsBeyond32BitsAndTheGroupOfEveryLane)
{
  const int32_t G     = 1024;
  const int64_t first = rgcsr::first_slot(int64_t(3) << 32, 1023);
  EXPECT_EQ(first, (int64_t(3) << 32) + 1023);
  EXPECT_EQ(rgcsr::slot(first, int64_t(1) << 27, G), first + (int64_t(1) << 37)); // k * G > 2^31
  EXPECT_EQ(rgcsr::slot_stride(8, G), 8 * 1024);
  EXPECT_EQ(rgcsr::group_slots(INT32_MAX, G), int64_t(INT32_MAX) * G);
  EXPECT_EQ(rgcsr::num_groups(0, 32), 0);
  EXPECT_EQ(rgcsr::num_groups(33, 32), 2);
  EXPECT_EQ(rgcsr::num_groups(INT32_MAX, 32), (int64_t(INT32_MAX) + 31) / 32);
  for (int32_t r : {0, 31, 32, 1000, INT32_MAX}) {
    const int32_t g = rgcsr::group_of(r, 32), lane = rgcsr::lane_in_group(r, g, 32);
    EXPECT_EQ(int64_t(g) * 32 + lane, r);
    EXPECT_TRUE(lane >= 0 && lane < 32);
  }
  EXPECT_TRUE(rgcsr::valid_group_size(32) && rgcsr::valid_group_size(1024));
  EXPECT_FALSE(rgcsr::valid_group_size(16) || rgcsr::valid_group_size(48) || rgcsr::valid_group_size(2048));
  const int64_t gp[] = {0, 64, 64 + 96};
  EXPECT_EQ(rgcsr::row_first_slot(gp, 33, 32), 64 + 1);
}

TEST(PackSellLayout, WordsAtEveryDeltaWidth)
{
  EXPECT_EQ(packsell::delta_bits_for(0), packsell::kExactDeltaBits); // Exact
  EXPECT_EQ(packsell::delta_bits_for(16), 15);                       // FP16, BF16
  EXPECT_EQ(packsell::delta_bits_for(31), 0);                        // e8m22: no delta bits
  for (int32_t D = 0; D <= packsell::kExactDeltaBits; ++D) {
    const uint32_t dmask = packsell::delta_mask(D);
    EXPECT_EQ(dmask, D == 0 ? 0u : (uint32_t(1) << D) - 1u) << D;
    const uint32_t vbits = D == packsell::kExactDeltaBits ? 0u : (~0u >> (D + 1)); // the widest value field
    const uint32_t w     = packsell::real_word(vbits, dmask, D);
    EXPECT_EQ(packsell::word_flag(w), 1u);
    EXPECT_EQ(packsell::word_jump(w, 1u, dmask), dmask) << D;
    EXPECT_EQ(packsell::word_value_bits(w, D), vbits) << D;
    EXPECT_EQ(w & packsell::value_field_mask(D), vbits << packsell::value_shift(D)) << D;
    // a value update keeps delta and flag
    const uint32_t u = packsell::with_value_bits(w, 0u, D);
    EXPECT_EQ(packsell::word_value_bits(u, D), 0u);
    EXPECT_EQ(packsell::word_jump(u, packsell::word_flag(u), dmask), dmask) << D;
    EXPECT_EQ(packsell::word_flag(u), 1u);
  }
  // a dummy carries a 31-bit jump whatever D is; padding is the zero word
  const uint32_t d = packsell::dummy_word(0x7fffffffu);
  EXPECT_EQ(packsell::word_flag(d), 0u);
  EXPECT_EQ(packsell::word_jump(d, 0u, packsell::delta_mask(15)), 0x7fffffffu);
  EXPECT_EQ(packsell::dummy_word(0), 0u);
}

TEST(PackSellLayout, WordPositionsBeyond32Bits)
{
  const int32_t C = 1024;
  EXPECT_EQ(packsell::word_slot(int64_t(5) << 32, 7, int64_t(1) << 27, C), (int64_t(5) << 32) + 7 + (int64_t(1) << 37));
  EXPECT_EQ(packsell::word_stride(4 * 8, C), 32 * 1024);
  EXPECT_EQ(packsell::num_slices(0, 32), 0);
  EXPECT_EQ(packsell::num_slices(65, 32), 3);
  const int64_t sr = (int64_t(1) << 40) + 5; // the kernels' 64-bit thread index
  const int64_t s  = packsell::slice_of(sr, 32);
  EXPECT_EQ(s * 32 + packsell::lane_in_slice(sr, s, 32), sr);
  const int64_t sp[] = {0, 128, 256};
  EXPECT_EQ(packsell::row_first_word(sp, 40, 32), 128 + 8);
  EXPECT_TRUE(packsell::valid_slice_height(64));
  EXPECT_FALSE(packsell::valid_slice_height(0) || packsell::valid_slice_height(1056));
}
