// Hybrid option parsing, the cost rule that picks K (against brute force), and the COO tail.
#include "core/hybrid.hpp"
#include "formats/packsell/packsell.hpp"
#include "formats/rgcsr/rgcsr.hpp"
#include "csr_matrix.hpp"
#include "random_matrix.hpp"
#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>

using namespace pspmv;
using namespace pspmv_test;

namespace
{

// The documented cost of width K, computed directly.
double cost_of(const std::vector<int32_t> &len, int32_t block, HybridCost c, int32_t K)
{
  double slots = 0, tail = 0, tail_rows = 0;
  for (size_t b0 = 0; b0 < len.size(); b0 += size_t(block)) {
    int32_t m = 0;
    for (size_t i = b0; i < std::min(len.size(), b0 + size_t(block)); ++i) m = std::max(m, len[i]);
    slots += double(block) * std::min(K, m);
  }
  for (int32_t l : len) {
    tail += std::max(0, l - K);
    tail_rows += l > K ? 1 : 0;
  }
  return c.slot_bytes * slots + c.tail_bytes * tail + c.tail_row_bytes * tail_rows + (tail > 0 ? c.tail_fixed_bytes : 0.0);
}

} // namespace

TEST(HybridOption, ParsesAutoNoneAndPositiveWidths)
{
  EXPECT_EQ(HybridOption::parse("auto").mode, HybridOption::Mode::Auto);
  EXPECT_EQ(HybridOption::parse("none").mode, HybridOption::Mode::None);
  const HybridOption k = HybridOption::parse("17");
  EXPECT_EQ(k.mode, HybridOption::Mode::Fixed);
  EXPECT_EQ(k.width, 17);
  for (const char *s : {"auto", "none", "1", "17", "2147483647"}) EXPECT_EQ(HybridOption::parse(s).name(), s);
  EXPECT_EQ(HybridOption().mode, HybridOption::Mode::Auto) << "the default is auto";
}

TEST(HybridOption, RefusesEverythingElse)
{
  for (const char *s : {"", "0", "-3", "+3", "03", "3x", "Auto", "2147483648", "99999999999"}) {
    try {
      HybridOption::parse(s);
      ADD_FAILURE() << "'" << s << "' was accepted";
    } catch (const FormatError &e) {
      EXPECT_NE(std::string(e.what()).find("auto, none"), std::string::npos) << e.what();
    }
  }
}

TEST(ChooseHybridWidth, HandCases)
{
  const HybridCost rg{12, 16};
  EXPECT_EQ(choose_hybrid_width({}, 32, rg), 0);
  EXPECT_EQ(choose_hybrid_width({0, 0, 0}, 32, rg), 0);
  EXPECT_EQ(choose_hybrid_width(std::vector<int32_t>(64, 5), 32, rg), 5) << "equal rows: no tail";
  // One row of 1000 among 63 rows of 2 (block 32): K=2 costs 12*128 + 16*998 = 17504,
  // K=1 17760, K=3 17872, K=1000 384768.
  std::vector<int32_t> len(64, 2);
  len[5] = 1000;
  EXPECT_EQ(choose_hybrid_width(len, 32, rg), 2);
  // Tie (block 1, costs 1/1, one row of 2): K=2 and K=1 both cost 2; the larger K wins.
  EXPECT_EQ(choose_hybrid_width({2}, 1, {1, 1}), 2);
  // K = 0 is never chosen, even when the tail alone would be cheaper.
  EXPECT_EQ(choose_hybrid_width({3}, 1, {100, 1}), 1);
  EXPECT_THROW(choose_hybrid_width({1, -1}, 32, rg), FormatError);
  EXPECT_THROW(choose_hybrid_width({1}, 0, rg), FormatError);
}

TEST(ChooseHybridWidth, FixedTailCostKeepsSmallSavingsRegular)
{
  // One row of 30 among 63 rows of 2 (block 32, cap 32): K=30 stores 1024 slots (12288 B);
  // K=2 stores 128 slots + a 28-entry tail (1536 + 448 B), saving 10304 B. Without a fixed
  // cost the tail wins; with a fixed cost above the saving (PackSELL uses
  // kTailFixedBytes = 4 MiB) K stays 30.
  std::vector<int32_t> len(64, 2);
  len[5] = 30;
  EXPECT_EQ(choose_hybrid_width(len, 32, {12, 16}), 2);
  EXPECT_EQ(choose_hybrid_width(len, 32, {12, 16, 20000}), 30);
  EXPECT_EQ(choose_hybrid_width(len, 32, {12, 16, 10000}), 2) << "a saving above the fixed cost still splits";
  EXPECT_EQ(choose_hybrid_width(len, 32, {4, 16, kTailFixedBytes}), 30);
  EXPECT_EQ(choose_hybrid_width(len, 32, kRgCsrHybridCost), 2) << "RgCSR has no fixed tail cost";
  // The latency cap still forces a tail when the longest row is above it (cap 32 here).
  len[5] = 1000;
  // (mean 17.6, cap 71): every K <= 71 pays the fixed cost, so the storage minimum K = 2 stays.
  EXPECT_EQ(choose_hybrid_width(len, 32, {12, 16, 1e12}), 2) << "forced tail: every K pays the fixed cost";
}

TEST(ChooseHybridWidth, LatencyCapBoundsTheStorageMinimalWidth)
{
  // Block 1 pads nothing, so without the cap K = longest row is storage-minimal (cost
  // sum of lengths). Under a cap c the cost is c + 16 (L - c) + rest, falling in K: K = c.
  const HybridCost cheap{1, 16};
  // {1000, 10 x 9}: mean 109, cap 436.
  std::vector<int32_t> len(10, 10);
  len[0] = 1000;
  EXPECT_EQ(hybrid_width_cap(len), 436);
  EXPECT_EQ(choose_hybrid_width(len, 1, cheap), 436);
  // {1001, 0 x 9}: 4 * mean = 400.4, rounded up to 401.
  std::vector<int32_t> up(10, 0);
  up[0] = 1001;
  EXPECT_EQ(hybrid_width_cap(up), 401);
  EXPECT_EQ(choose_hybrid_width(up, 1, cheap), 401);
  // {100, 0 x 99}: 4 * mean = 4, the floor 32 applies.
  std::vector<int32_t> low(100, 0);
  low[0] = 100;
  EXPECT_EQ(hybrid_width_cap(low), 32);
  EXPECT_EQ(choose_hybrid_width(low, 1, cheap), 32);
  // Rows no longer than the cap: the cap changes nothing ({40, 0, 0}: cap 54 > 40).
  EXPECT_EQ(hybrid_width_cap({40, 0, 0}), 54);
  EXPECT_EQ(choose_hybrid_width({40, 0, 0}, 1, cheap), 40);
  EXPECT_EQ(hybrid_width_cap({}), 32);
  // The cap bounds the search; below it the cheapest K still wins (one row of 1000 among
  // 63 rows of 2, block 32: K = 2, as in HandCases).
  std::vector<int32_t> one(64, 2);
  one[5] = 1000;
  EXPECT_EQ(hybrid_width_cap(one), 71); // 4 * 1126 / 64 = 70.375
  EXPECT_EQ(choose_hybrid_width(one, 32, HybridCost{12, 16}), 2);
}

TEST(ChooseHybridWidth, TailWidthCapBoundsOnlyAWidthThatLeavesATail)
{
  // One row of 1000 among 63 rows of 100 (block 1, no padding): every K < 1000 leaves a tail.
  std::vector<int32_t> len(64, 100);
  len[7] = 1000;
  const HybridCost words{4, 16, kTailFixedBytes};
  HybridCost       capped = words;
  capped.tail_width_cap   = 32;
  EXPECT_EQ(hybrid_width_cap(len), 457);
  EXPECT_EQ(choose_hybrid_width(len, 1, words), 457) << "storage-minimal K is the latency cap";
  EXPECT_EQ(choose_hybrid_width(len, 1, capped), 32);
  // Rows that all fit under the latency cap: no tail, the tail width cap changes nothing.
  const std::vector<int32_t> fits(64, 81);
  EXPECT_EQ(choose_hybrid_width(fits, 32, capped), 81);
  // PackSELL's model sets the cap on small matrices only.
  EXPECT_EQ(packsell_hybrid_cost(ValueFormat::bf16(), kLatencyBoundRows).tail_width_cap, kLatencyBoundTailWidth);
  EXPECT_EQ(packsell_hybrid_cost(ValueFormat::bf16(), kLatencyBoundRows + 1).tail_width_cap, 0);
}

// Half of the rows are 8 long, the others 6, in blocks of 32. Bytes alone: K = 6 stores
// 384 slots (4608 B) and a tail of 64 entries (1024 B), cheaper than K = 8 (512 slots, 6144 B).
// With 32 B for each of the 32 rows with tail entries K = 6 costs 6656 B and K = 8 wins.
TEST(ChooseHybridWidth, CountsEveryRowWithTailEntries)
{
  std::vector<int32_t> len(64, 6);
  for (size_t i = 0; i < len.size(); i += 2) len[i] = 8; // every block has an 8-long row
  EXPECT_EQ(choose_hybrid_width(len, 32, HybridCost{12, 16}), 6) << "bytes alone: 32 rows x 2 in the tail";
  EXPECT_EQ(choose_hybrid_width(len, 32, HybridCost{12, 16, 0, 0, 32}), 8) << "32 B per tail row";
  EXPECT_EQ(packsell_hybrid_cost(ValueFormat::exact(), 1000).tail_row_bytes, kTailRowBytes);
}

TEST(ChooseHybridWidth, MatchesBruteForceOnRandomLengths)
{
  Rng rng(42);
  for (int t = 0; t < 300; ++t) {
    const size_t         n = 1 + rng.below(300);
    std::vector<int32_t> len(n);
    for (auto &l : len) l = rng.uniform() < 0.05 ? int32_t(rng.below(500)) : int32_t(rng.below(12));
    const int32_t    block  = int32_t(1 + rng.below(70));
    const HybridCost c      = t % 5 == 0 ? HybridCost{12, 16}
                            : t % 5 == 1 ? HybridCost{4, 16}
                            : t % 5 == 2 ? HybridCost{4, 16, 2000}
                            : t % 5 == 3 ? HybridCost{4, 16, 2000, int32_t(1 + rng.below(40))}
                                         : HybridCost{4, 16, 2000, int32_t(rng.below(40)), double(rng.below(64))};
    const int32_t    maxlen = *std::max_element(len.begin(), len.end());
    // Latency cap, recomputed in floating point: max(32, ceil(4 * mean)).
    double sum = 0;
    for (int32_t l : len) sum += l;
    const int32_t cap = std::max(32, int32_t(std::ceil(4.0 * sum / double(n))));
    if (maxlen == 0) {
      ASSERT_EQ(choose_hybrid_width(len, block, c), 0) << "trial " << t;
      continue;
    }
    // A K that leaves a tail must also be <= the tail width cap, when there is one.
    const auto    allowed   = [&](int32_t K) { return c.tail_width_cap <= 0 || K == maxlen || K <= c.tail_width_cap; };
    const int32_t top       = std::min(maxlen, cap);
    int32_t       best      = top;
    double        best_cost = std::numeric_limits<double>::infinity();
    for (int32_t K = top; K >= 1; --K)
      if (allowed(K) && cost_of(len, block, c, K) < best_cost) {
        best      = K;
        best_cost = cost_of(len, block, c, K);
      }
    ASSERT_EQ(choose_hybrid_width(len, block, c), best) << "trial " << t;
  }
}

TEST(CooTail, HoldsEverythingBeyondKInCsrOrderAndAddsItsProduct)
{
  const CsrMatrix A = csr_from_rows(5, {{{0, 1}, {1, 2}, {2, 3}, {4, 4}}, {{3, 5}}, {}, {{0, 6}, {4, 7}}});
  const CooTail   t = build_coo_tail(A.view(), 1);
  EXPECT_EQ(t.row, (std::vector<int32_t>{0, 0, 0, 3}));
  EXPECT_EQ(t.col, (std::vector<int32_t>{1, 2, 4, 4}));
  EXPECT_EQ(t.val, (std::vector<double>{2, 3, 4, 7}));
  EXPECT_EQ(build_coo_tail(A.view(), 4).nnz(), 0);
  EXPECT_EQ(build_coo_tail(A.view(), 0).nnz(), A.nnz());
  EXPECT_THROW(build_coo_tail(A.view(), -1), FormatError);

  const double x[5] = {1, 10, 100, 1000, 10000};
  double       y[4] = {1, 1, 1, 1};
  coo_tail_spmv_add(t, x, y);
  EXPECT_EQ(y[0], 1 + 20 + 300 + 40000);
  EXPECT_EQ(y[1], 1);
  EXPECT_EQ(y[3], 1 + 70000);

  CsrMatrix B = A;
  for (double &v : B.values) v *= -2;
  CooTail u = t;
  update_coo_tail_values(B.view(), 1, u);
  EXPECT_EQ(u.val, (std::vector<double>{-4, -6, -8, -14}));
  CsrMatrix moved = A;
  moved.colidx[2] = 3; // row 0: 0 1 3 4 (same count, other pattern)
  EXPECT_THROW(update_coo_tail_values(moved.view(), 1, u), FormatError);
  EXPECT_EQ(u.val, (std::vector<double>{-4, -6, -8, -14})) << "a refused update changed the tail";
  EXPECT_THROW(update_coo_tail_values(A.view(), 2, u), FormatError) << "other K, other count";
}
