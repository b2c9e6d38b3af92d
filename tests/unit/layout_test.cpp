// The layout headers' arithmetic at the edges: slots and word positions beyond 2^31 (64-bit
// throughout), the PackSELL word at every D, the V + D + 1 = 32 rule.
#include "formats/packsell/packsell_layout.hpp"
#include "formats/rgcsr/rgcsr_layout.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <vector>

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

namespace
{
// Columns of the words a row was encoded into, decoded as the kernels do (word_advance).
std::vector<int64_t> decode_columns(const std::vector<uint32_t> &words, const std::vector<uint32_t> &gap, int32_t D, bool gapped)
{
  std::vector<int64_t> cols;
  uint32_t             col = 0;
  for (size_t k = 0; k < words.size(); ++k) {
    const uint32_t flag = packsell::word_flag(words[k]);
    col += packsell::word_advance(words[k], flag, packsell::delta_mask(D), k < gap.size() ? gap[k] : 0u, gapped);
    if (flag) cols.push_back(col);
  }
  return cols;
}

std::vector<uint32_t> encode(const std::vector<int32_t> &cols, const std::vector<uint32_t> &gap, int32_t D, bool gapped)
{
  std::vector<uint32_t> w;
  const int32_t         n = packsell::encode_row_columns(
            cols.data(), int32_t(cols.size()), D, gapped, [&](int32_t k) { return size_t(k) < gap.size() ? gap[size_t(k)] : 0u; },
            [&](int32_t k, uint32_t word, int32_t) {
      EXPECT_EQ(size_t(k), w.size());
      w.push_back(word);
    });
  EXPECT_EQ(size_t(n), w.size());
  return w;
}
} // namespace

TEST(PackSellLayout, ColumnGapsByHand)
{
  // D = 15. Gaps 0 5 7: column 3 (delta 3), 8 (step 5 = the gap: delta 0), 100000 (step 99992
  // less gap 7 does not fit: a dummy of jump 99992 - gap(3) = 99992, then delta 0).
  std::vector<uint32_t> w = encode({3, 8, 100000}, {0, 5, 7}, 15, true);
  EXPECT_EQ(w, (std::vector<uint32_t>{packsell::real_word(0, 3, 15), packsell::real_word(0, 0, 15), packsell::dummy_word(99992), packsell::real_word(0, 0, 15)}));
  EXPECT_EQ(decode_columns(w, {0, 5, 7}, 15, true), (std::vector<int64_t>{3, 8, 100000}));
  // A step below the gap (4 < 10) needs a dummy; one that would jump 0 (4 - gap(1) = 0) jumps
  // -1 instead and the nonzero takes delta 1: never a zero word, which reads as padding.
  w = encode({4}, {10, 4}, 15, true);
  EXPECT_EQ(w, (std::vector<uint32_t>{packsell::dummy_word(~0u), packsell::real_word(0, 1, 15)}));
  EXPECT_EQ(int32_t(w[0]) >> 1, -1);
  EXPECT_EQ(decode_columns(w, {10, 4}, 15, true), (std::vector<int64_t>{4}));
  // Without gaps: the unsigned jumps of the plain layout, up to 2^31 - 1.
  w = encode({0, INT32_MAX}, {}, 15, false);
  EXPECT_EQ(w, (std::vector<uint32_t>{packsell::real_word(0, 0, 15), packsell::dummy_word(uint32_t(INT32_MAX)), packsell::real_word(0, 0, 15)}));
  EXPECT_EQ(decode_columns(w, {}, 15, false), (std::vector<int64_t>{0, INT32_MAX}));
  EXPECT_TRUE(packsell::gaps_possible(1, packsell::kMaxGappedColumns));
  EXPECT_FALSE(packsell::gaps_possible(0, 10));
  EXPECT_FALSE(packsell::gaps_possible(8, packsell::kMaxGappedColumns + 1));
  EXPECT_FALSE(packsell::gaps_possible(packsell::kExactDeltaBits, 10)); // Exact: no gaps
  EXPECT_EQ(packsell::gap_entries(7 * 64, 64), 7);
}

TEST(PackSellLayout, ColumnGapsRoundTripAnyGaps)
{
  // Whatever the gaps (the build's are minima, but the encoding must not rely on it): every
  // row decodes to its columns, in at most 2 words per nonzero, none of them zero.
  uint64_t seed = 12345;
  auto     next = [&seed](uint64_t m) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % m;
  };
  for (int trial = 0; trial < 2000; ++trial) {
    const int32_t        D = 1 + int32_t(next(30)), n = int32_t(next(12));
    const int64_t        span = trial % 3 == 0 ? 100 : packsell::kMaxGappedColumns;
    std::vector<int32_t> cols;
    int64_t              c = int64_t(next(uint64_t(span / 4 + 1)));
    for (int32_t j = 0; j < n && c < span; ++j, c += 1 + int64_t(next(uint64_t(span / 16 + 1)))) cols.push_back(int32_t(c));
    std::vector<uint32_t> gap(size_t(next(2 * uint64_t(n) + 2)));
    for (uint32_t &g : gap) g = uint32_t(next(trial % 2 ? 64 : uint64_t(span / 8 + 1)));
    const std::vector<uint32_t> w = encode(cols, gap, D, true);
    ASSERT_LE(w.size(), 2 * cols.size()) << "trial " << trial;
    for (uint32_t x : w) ASSERT_NE(x, 0u) << "trial " << trial;
    ASSERT_EQ(decode_columns(w, gap, D, true), std::vector<int64_t>(cols.begin(), cols.end())) << "trial " << trial << " D " << D;
  }
}
