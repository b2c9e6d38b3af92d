// The build drivers (packsell_plan.hpp, rgcsr_plan.hpp) run over a test executor that measures
// naively and sorts every window from scratch, as the device executor does (the host executor
// merges windows up): the plans must be the host builder's. Also the decisions one by one on
// synthetic rows (sort windows, K, the tail split, the automatic sigma's candidates), the range
// checks at the value formats' boundaries, and the error channel (BuildError, CsrDefect).
#include "core/build_error.hpp"
#include "core/value_codec_hd.hpp"
#include "formats/packsell/packsell_plan.hpp"
#include "formats/rgcsr/rgcsr_plan.hpp"
#include "random_matrix.hpp"
#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace pspmv;
using namespace pspmv_test;

namespace
{

// The executor of both drivers over a host CSR, written from the contracts in the plan headers.
class TestExecutor {
public:
  explicit TestExecutor(const CsrView &A) : A_(A) { }
  int32_t               rows() const { return A_.rows; }
  int64_t               nnz() const { return A_.nnz(); }
  std::vector<int32_t> &array(PackSellRows a) { return arrays_[int(a)]; }
  int                   sorts = 0; // sort_rows calls

  BuildError max_abs_finite(double *m) const
  {
    *m = 0.0;
    for (int64_t k = 0; k < nnz(); ++k)
      if (std::isfinite(A_.values[k])) *m = std::max(*m, std::fabs(A_.values[k]));
    return {};
  }
  BuildError first_unencodable(const ValueFormat &f, int32_t s, int64_t *k) const
  {
    for (*k = 0; *k < nnz(); ++*k)
      if (codec::unencodable(f.exponent_bits, f.mantissa_bits, A_.values[*k], s)) return {};
    *k = -1;
    return {};
  }
  BuildError entry(int64_t k, int32_t *row, int32_t *col, double *v) const
  {
    for (*row = 0; A_.rowptr[*row + 1] <= k; ++*row) { }
    *col = A_.colidx[k];
    *v   = A_.values[k];
    return {};
  }
  BuildError length_histogram(std::vector<int64_t> *hist) const
  {
    int32_t m = 0;
    for (int32_t r = 0; r < A_.rows; ++r) m = std::max(m, A_.row_length(r));
    hist->assign(size_t(m) + 1, 0);
    for (int32_t r = 0; r < A_.rows; ++r) ++(*hist)[size_t(A_.row_length(r))];
    return {};
  }
  int32_t words(int32_t r, int32_t K, int32_t D) const
  {
    const int32_t n = std::min(A_.row_length(r), K);
    int32_t       w = n, prev = 0;
    for (int32_t k = A_.rowptr[r]; k < A_.rowptr[r] + n; ++k) {
      if (int64_t(A_.colidx[k]) - prev > int64_t(packsell::delta_mask(D))) ++w;
      prev = A_.colidx[k];
    }
    return w;
  }
  BuildError row_words(int32_t K, int32_t D, PackSellRows out, int64_t *long_row, int64_t *)
  {
    array(out).resize(size_t(A_.rows));
    for (int32_t r = 0; r < A_.rows; ++r) array(out)[size_t(r)] = words(r, K, D);
    *long_row = -1;
    return {};
  }
  BuildError sort_rows(PackSellRows w, int32_t sigma, int32_t, PackSellRows o)
  { // from scratch
    ++sorts;
    const std::vector<int32_t> &words = array(w);
    std::vector<int32_t>       &order = array(o);
    order.resize(words.size());
    std::iota(order.begin(), order.end(), 0);
    for (size_t w0 = 0; w0 < order.size(); w0 += size_t(sigma)) std::stable_sort(order.begin() + w0, order.begin() + std::min(order.size(), w0 + size_t(sigma)), [&words](int32_t a, int32_t b) { return words[size_t(a)] > words[size_t(b)]; });
    return {};
  }
  BuildError regular_words(PackSellRows w, PackSellRows o, int32_t C, int64_t *total)
  {
    *total = 0;
    for (size_t s0 = 0; s0 < array(o).size(); s0 += size_t(C)) {
      int32_t m = 0;
      for (size_t i = s0; i < std::min(array(o).size(), s0 + size_t(C)); ++i) m = std::max(m, array(w)[size_t(array(o)[i])]);
      *total += int64_t(C) * m;
    }
    return {};
  }
  BuildError widest_sums(PackSellRows o, int32_t C, int32_t D, int32_t top, std::vector<int64_t> *sums)
  {
    sums->assign(size_t(top), 0);
    for (int32_t k = 1; k <= top; ++k)
      for (size_t s0 = 0; s0 < array(o).size(); s0 += size_t(C)) {
        int32_t m = 0;
        for (size_t i = s0; i < std::min(array(o).size(), s0 + size_t(C)); ++i) m = std::max(m, words(array(o)[i], k, D));
        (*sums)[size_t(k) - 1] += m;
      }
    return {};
  }
  // RgCSR's
  BuildError max_row_length(int32_t *m) const
  {
    *m = 0;
    for (int32_t r = 0; r < A_.rows; ++r) *m = std::max(*m, A_.row_length(r));
    return {};
  }
  BuildError length_histograms(int32_t G, int32_t maxlen, std::vector<int64_t> *hist, std::vector<int64_t> *ghist) const
  {
    hist->assign(size_t(maxlen) + 1, 0);
    ghist->assign(size_t(maxlen) + 1, 0);
    for (int32_t r0 = 0; r0 < A_.rows; r0 += G) {
      int32_t m = 0;
      for (int32_t r = r0; r < std::min(A_.rows, r0 + G); ++r) {
        ++(*hist)[size_t(A_.row_length(r))];
        m = std::max(m, A_.row_length(r));
      }
      ++(*ghist)[size_t(m)];
    }
    return {};
  }

private:
  const CsrView       &A_;
  std::vector<int32_t> arrays_[kPackSellRowArrays];
};

CsrMatrix irregular(uint64_t seed, int32_t rows = 700)
{
  RandomSpec s;
  s.rows           = rows;
  s.cols           = 2000;
  s.max_len        = 12;
  s.long_fraction  = 0.05;
  s.long_len       = 150;
  s.empty_fraction = 0.1;
  s.seed           = seed;
  return random_csr(s);
}

// A matrix with the given row lengths (columns 0, 1, ...; values 1).
CsrMatrix with_lengths(const std::vector<int32_t> &len, int32_t cols)
{
  CsrMatrix A;
  A.rows = int32_t(len.size());
  A.cols = cols; // rowptr starts as {0}
  for (int32_t l : len) {
    for (int32_t k = 0; k < l; ++k) {
      A.colidx.push_back(k);
      A.values.push_back(1.0);
    }
    A.rowptr.push_back(int32_t(A.colidx.size()));
  }
  return A;
}

} // namespace

TEST(PackSellPlan, SigmaCandidates)
{
  EXPECT_EQ(detail::packsell_sigma_candidates(100, 32), (std::vector<int32_t>{1, 32, 64, 128}));
  EXPECT_EQ(detail::packsell_sigma_candidates(64, 32), (std::vector<int32_t>{1, 32, 64}));
  EXPECT_EQ(detail::packsell_sigma_candidates(0, 64), (std::vector<int32_t>{1, 64}));
  const std::vector<int32_t> big = detail::packsell_sigma_candidates(INT32_MAX, 1024);
  EXPECT_EQ(big.back(), 1 << 30); // the last power-of-two multiple of C that fits 32 bits
}

TEST(PackSellPlan, SortWindowsAreStableAndDescending)
{
  // lengths 1..8 repeating: with sigma 64 every window of 64 rows is sorted, ties in row order
  std::vector<int32_t> len(200);
  for (size_t r = 0; r < len.size(); ++r) len[r] = int32_t(1 + (r * 5) % 8);
  const CsrMatrix A = with_lengths(len, 16);
  const CsrView   v = A.view();
  TestExecutor    x(v);
  PackSellOptions o;
  o.sigma  = 64;
  o.hybrid = HybridOption::parse("none");
  PackSellPlan p;
  ASSERT_FALSE(plan_packsell(x, o, &p));
  EXPECT_EQ(p.sigma, 64);
  EXPECT_EQ(p.hybrid_width, 8);
  const std::vector<int32_t> &perm = x.array(PackSellRows::Perm);
  ASSERT_EQ(perm.size(), len.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    EXPECT_EQ(size_t(perm[i]) / 64, i / 64) << "row " << perm[i] << " left its window";
    if (i % 64 != 0) {
      const int32_t a = perm[i - 1], b = perm[i];
      EXPECT_TRUE(len[size_t(a)] > len[size_t(b)] || (len[size_t(a)] == len[size_t(b)] && a < b)) << i;
    }
  }
}

TEST(PackSellPlan, WidthIsTheHybridRuleOverSliceWidths)
{
  // 31 rows of 4 and one of 100 per slice: K auto cuts the long rows (the tail takes them: the
  // padding saved outweighs the fixed cost of a tail)
  std::vector<int32_t> len(8192, 4);
  for (size_t r = 0; r < len.size(); r += 32) len[r] = 100;
  const CsrMatrix A = with_lengths(len, 200);
  const CsrView   v = A.view();
  for (const char *h : {"auto", "none", "7", "1000"}) {
    TestExecutor    x(v);
    PackSellOptions o;
    o.hybrid = HybridOption::parse(h);
    PackSellPlan p;
    ASSERT_FALSE(plan_packsell(x, o, &p));
    int32_t want = 100;
    if (std::string(h) == "7") want = 7;
    if (std::string(h) == "auto") // exact words = nonzeros here (no dummies): the RgCSR-shaped rule
      want = choose_hybrid_width(len, packsell_hybrid_cost(o.value_format, A.rows), [&](int32_t K) {
        int64_t s = 0;
        for (size_t s0 = 0; s0 < len.size(); s0 += 32) s += 32 * std::min(K, *std::max_element(len.begin() + s0, len.begin() + s0 + 32));
        return s;
      });
    EXPECT_EQ(p.hybrid_width, want) << h;
    EXPECT_EQ(p.max_row_length, 100);
    if (std::string(h) == "auto") EXPECT_LT(p.hybrid_width, 100) << "the long rows go to the tail";
    // words per row of the layout: cut at K
    for (size_t r = 0; r < len.size(); ++r) EXPECT_EQ(x.array(PackSellRows::Words)[r], std::min(len[r], p.hybrid_width));
  }
}

// The device-style executor (every window sorted from scratch) plans what the host builder
// (merging windows up) builds: sigma, K, scale exponent.
TEST(PackSellPlan, FromScratchSortsPlanAsTheHostBuilder)
{
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const CsrMatrix A = irregular(seed, seed % 2 ? 700 : 2100);
    const CsrView   v = A.view();
    for (int32_t sigma : {kPackSellSigmaAuto, 1, 64})
      for (const char *h : {"auto", "none", "5"})
        for (const char *f : {"exact", "bf16"}) {
          PackSellOptions o;
          o.sigma        = sigma;
          o.hybrid       = HybridOption::parse(h);
          o.value_format = ValueFormat::parse(f);
          o.scaling      = PackSellScaling::Auto;
          TestExecutor x(v);
          PackSellPlan p;
          ASSERT_FALSE(plan_packsell(x, o, &p));
          const PackSellMatrix M = build_packsell(v, o);
          EXPECT_EQ(p.sigma, M.sigma) << seed << " " << sigma << " " << h << " " << f;
          EXPECT_EQ(p.hybrid_width, M.hybrid_width) << seed << " " << sigma << " " << h << " " << f;
          EXPECT_EQ(p.scale_exponent, M.scale_exponent) << seed << " " << sigma << " " << h << " " << f;
          EXPECT_EQ(x.array(PackSellRows::Perm), M.perm) << seed << " " << sigma << " " << h << " " << f;
        }
  }
}

TEST(PackSellPlan, AutoSigmaKeepsOneForEqualRowsAndSortsAlternatingOnes)
{
  {
    const CsrMatrix A = with_lengths(std::vector<int32_t>(500, 7), 50);
    const CsrView   v = A.view();
    TestExecutor    x(v);
    PackSellOptions o;
    o.sigma = kPackSellSigmaAuto;
    PackSellPlan p;
    ASSERT_FALSE(plan_packsell(x, o, &p));
    EXPECT_EQ(p.sigma, 1);
  }
  {
    std::vector<int32_t> len(4096);
    for (size_t r = 0; r < len.size(); ++r) len[r] = r % 2 ? 2 : 40; // every slice as wide as 40
    const CsrMatrix A = with_lengths(len, 64);
    const CsrView   v = A.view();
    TestExecutor    x(v);
    PackSellOptions o;
    o.sigma  = kPackSellSigmaAuto;
    o.hybrid = HybridOption::parse("none");
    PackSellPlan p;
    ASSERT_FALSE(plan_packsell(x, o, &p));
    EXPECT_GE(p.sigma, 32) << "sorting halves the padding";
  }
}

TEST(PackSellPlan, NoRowsAndNoNonzeros)
{
  for (int32_t rows : {0, 70}) {
    const CsrMatrix A = with_lengths(std::vector<int32_t>(size_t(rows), 0), 5);
    const CsrView   v = A.view();
    TestExecutor    x(v);
    PackSellOptions o;
    o.sigma = kPackSellSigmaAuto;
    PackSellPlan p;
    ASSERT_FALSE(plan_packsell(x, o, &p));
    EXPECT_EQ(p.sigma, 1);
    EXPECT_EQ(p.hybrid_width, 0);
    EXPECT_EQ(p.max_row_length, 0);
  }
}

// The range check at fp16's boundaries: the largest finite value and the smallest subnormal
// pass, the next values up / down are refused with their row and column (the first in CSR
// order), Inf and NaN are stored.
TEST(PackSellPlan, RangeCheckAtTheBoundaries)
{
  const double max16 = 65504.0, tiny16 = std::ldexp(1.0, -24);
  struct Case {
    double v;
    bool   ok;
  } cases[] =
    {{max16, true}, {65519.0, true}, {65520.0, false}, {-65520.0, false}, {tiny16, true}, {tiny16 * 0.5, false}, {tiny16 * 0.75, true}, {0.0, true}, {std::numeric_limits<double>::infinity(), true}, {std::numeric_limits<double>::quiet_NaN(), true}};
  for (const Case &c : cases) {
    CsrMatrix A        = with_lengths({2, 3}, 4);
    A.values[3]        = c.v; // row 1, column 1
    const CsrView    v = A.view();
    TestExecutor     x(v);
    int32_t          s = 99;
    const BuildError e = plan_packsell_scale(x, ValueFormat::fp16(), PackSellScaling::None, "-t_mat_packsell_scaling", &s);
    if (c.ok) {
      EXPECT_FALSE(e) << c.v << ": " << e.what();
      EXPECT_EQ(s, 0);
    } else {
      EXPECT_EQ(e.kind, BuildError::Kind::ValueRange) << c.v;
      EXPECT_EQ(e.row, 1);
      EXPECT_EQ(e.col, 1);
      EXPECT_NE(e.what().find("row 1, column 1: value"), std::string::npos) << e.what();
      if (c.v == 65520.0) EXPECT_NE(e.what().find("or -t_mat_packsell_scaling auto"), std::string::npos) << e.what(); // the remedy as the caller spells it
    }
  }
  // scaling auto: the largest magnitude lands in fp16's top binade, exact formats check nothing
  CsrMatrix A     = with_lengths({1, 1}, 2);
  A.values        = {1e6, -3e5};
  const CsrView v = A.view();
  TestExecutor  x(v);
  int32_t       s = 0;
  ASSERT_FALSE(plan_packsell_scale(x, ValueFormat::fp16(), PackSellScaling::Auto, "", &s));
  EXPECT_EQ(std::ilogb(std::ldexp(1e6, s)), 15);
  EXPECT_FALSE(plan_packsell_scale(x, ValueFormat::exact(), PackSellScaling::None, "", &s));
  EXPECT_EQ(s, 0);
}

TEST(PackSellPlan, RowWordsErrorNamesTheRow)
{
  const BuildError e = detail::packsell_row_words_error(17, int64_t(INT32_MAX) + 5, 0);
  EXPECT_EQ(e.kind, BuildError::Kind::Format);
  EXPECT_EQ(e.what().rfind("PackSELL row 17 needs 2147483652 words", 0), 0u) << e.what();
}

TEST(RgCsrPlan, WidthForEachHybridOption)
{
  std::vector<int32_t> len(300, 3);
  len[5]            = 90;
  len[200]          = 60;
  const CsrMatrix A = with_lengths(len, 100);
  const CsrView   v = A.view();
  for (int32_t G : {32, 64})
    for (const char *h : {"none", "auto", "2", "500"}) {
      TestExecutor x(v);
      RgCsrOptions o;
      o.group_size = G;
      o.hybrid     = HybridOption::parse(h);
      RgCsrPlan p;
      ASSERT_FALSE(plan_rgcsr(x, o, &p));
      EXPECT_EQ(p.num_groups, (300 + G - 1) / G);
      EXPECT_EQ(p.max_row_length, 90);
      const std::string s    = h;
      const int32_t     want = s == "none" || s == "500" ? 90 : s == "2" ? 2 : choose_hybrid_width(len, G, kRgCsrHybridCost);
      EXPECT_EQ(p.hybrid_width, want) << G << " " << h;
      EXPECT_EQ(p.hybrid_width, build_rgcsr(v, o).hybrid_width) << G << " " << h;
    }
}

TEST(BuildError, KindsMessagesAndExceptions)
{
  const BuildError none;
  EXPECT_FALSE(none);
  EXPECT_NO_THROW(none.raise());
  const BuildError f = BuildError::format("bad option");
  EXPECT_EQ(f.what(), "bad option");
  EXPECT_THROW(f.raise(), FormatError);
  const BuildError v = BuildError::value_range(3, 9, "value 1e+06 overflows");
  EXPECT_EQ(v.what(), "row 3, column 9: value 1e+06 overflows");
  try {
    v.raise();
    ADD_FAILURE();
  } catch (const ValueRangeError &e) {
    EXPECT_EQ(std::string(e.what()), v.what());
    EXPECT_EQ(e.row, 3);
    EXPECT_EQ(e.col, 9);
  }
  const BuildError d = BuildError::device(2, "PackSELL device build: out of memory");
  EXPECT_EQ(d.device_code, 2);
  EXPECT_THROW(d.raise(), std::runtime_error);
  const BuildError c = catch_build_error([] { throw ValueRangeError(1, 2, "m"); });
  EXPECT_EQ(c.kind, BuildError::Kind::ValueRange);
  EXPECT_EQ(c.what(), "row 1, column 2: m");
  EXPECT_FALSE(catch_build_error([] {}));
}

// check_csr's defects as data: the device check reports the same ones with the same sentence.
TEST(CsrDefect, EveryKindAndItsMessage)
{
  CsrMatrix A = with_lengths({2, 2, 1}, 4);
  EXPECT_EQ(csr_defect(A.view()).kind, CsrDefect::Kind::None);
  CsrMatrix B = A;
  B.rowptr[1] = 5; // 0 5 4 5
  CsrDefect d = csr_defect(B.view());
  EXPECT_EQ(d.kind, CsrDefect::Kind::RowptrDecreases);
  EXPECT_EQ(d.row, 1);
  EXPECT_EQ(csr_defect_message(d, 4), "row 1: row pointer decreases from 5 to 4");
  B           = A;
  B.colidx[3] = 0; // row 1: 0 then 0
  d           = csr_defect(B.view());
  EXPECT_EQ(d.kind, CsrDefect::Kind::ColumnsNotIncreasing);
  EXPECT_EQ(csr_defect_message(d, 4), "row 1: columns are not strictly increasing (0 then 0); sort the columns and merge duplicates");
  B           = A;
  B.colidx[4] = 4;
  d           = csr_defect(B.view());
  EXPECT_EQ(d.kind, CsrDefect::Kind::ColumnOutOfRange);
  EXPECT_EQ(csr_defect_message(d, 4), "row 2: column 4 is out of range [0, 4)");
  B           = A;
  B.rowptr[0] = 1;
  EXPECT_EQ(csr_defect_message(csr_defect(B.view()), 4), "row pointers must start at 0, got 1");
  for (const CsrMatrix &M : {A, B}) { // check_csr throws exactly the defect's message
    const CsrDefect m = csr_defect(M.view());
    if (m.kind == CsrDefect::Kind::None) continue;
    try {
      check_csr(M.view());
      ADD_FAILURE();
    } catch (const FormatError &e) {
      EXPECT_EQ(std::string(e.what()), csr_defect_message(m, M.cols));
    }
  }
  const int32_t cols[] = {1, 3, 3};
  EXPECT_EQ(csr_row_columns_defect(7, cols, 3, 5).row, 7);
  EXPECT_EQ(csr_row_columns_defect(7, cols, 2, 5).kind, CsrDefect::Kind::None);
}
