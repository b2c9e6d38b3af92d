// Behaviours both formats share, one typed test over RgCSR and PackSELL each
// (HostFormat/0.*: RgCSR, HostFormat/1.*: PackSELL): stats of a layout without padding, value
// updates refusing another shape, padding never multiplied. Format-specific layouts and
// options: rgcsr_test.cpp, packsell_test.cpp.
#include "csr_matrix.hpp"
#include "format_check.hpp"
#include "host_formats.hpp"
#include "random_matrix.hpp"
#include <cmath>
#include <gtest/gtest.h>
#include <limits>

using namespace pspmv;
using namespace pspmv_test;

namespace
{

// The per-format data of these tests: options, sizes and the error model of a product.
template <class F>
struct Case;

template <>
struct Case<RgCsrHost> {
  static RgCsrOptions options(int32_t G, const std::string &hybrid)
  {
    RgCsrOptions o;
    o.group_size = G;
    o.hybrid     = HybridOption::parse(hybrid);
    return o;
  }
  // Equal rows: 128 x 90, 7 nonzeros each, G = 64; a slot is a value and a column (12 bytes).
  static constexpr int32_t kEqualRows = 128, kEqualCols = 90, kEqualLength = 7, kSlotBytes = 12;
  static RgCsrOptions      equal_rows_options(const std::string &hybrid) { return options(64, hybrid); }
  // A layout of the exact values with a tail of K = 1.
  static RgCsrOptions              exact_with_tail() { return options(32, "1"); }
  static std::vector<RgCsrOptions> padding_options() { return {options(32, "none"), options(32, "auto"), options(32, "2")}; }
  static ErrorModel                error_model(const RgCsrMatrix &) { return ErrorModel{}; }
  static std::string               name(const RgCsrOptions &o) { return "G=" + std::to_string(o.group_size) + " hybrid " + o.hybrid.name(); }
};

template <>
struct Case<PackSellHost> {
  static PackSellOptions options(int32_t C, int32_t sigma, const std::string &value, const std::string &hybrid)
  {
    PackSellOptions o;
    o.slice_height = C;
    o.sigma        = sigma;
    o.value_format = ValueFormat::parse(value);
    o.hybrid       = HybridOption::parse(hybrid);
    o.scaling      = PackSellScaling::None;
    return o;
  }
  // Equal rows: 256 x 5000 (no jump needs a dummy), 6 nonzeros each, C = 64, sigma 128, BF16
  // words (4 bytes a slot).
  static constexpr int32_t            kEqualRows = 256, kEqualCols = 5000, kEqualLength = 6, kSlotBytes = 4;
  static PackSellOptions              equal_rows_options(const std::string &hybrid) { return options(64, 128, "bf16", hybrid); }
  static PackSellOptions              exact_with_tail() { return options(32, 1, "exact", "1"); }
  static std::vector<PackSellOptions> padding_options()
  {
    std::vector<PackSellOptions> v;
    for (const char *value : {"exact", "bf16"})
      for (const char *h : {"none", "auto", "2"}) v.push_back(options(32, 1, value, h));
    return v;
  }
  static ErrorModel  error_model(const PackSellMatrix &M) { return packsell_error_model(M); }
  static std::string name(const PackSellOptions &o) { return o.value_format.name() + " hybrid " + o.hybrid.name(); }
};

} // namespace

template <class F>
class HostFormat : public testing::Test {
};
TYPED_TEST_SUITE(HostFormat, HostFormats);

// Rows of equal length filling whole groups/slices: no padding, no dummy, no tail, and the
// bytes are the slots, the group/slice pointers and a 4-byte entry per row (RgCSR's row
// lengths, PackSELL's permutation). With 100 rows the last group/slice is padded to 64 rows.
// (Formerly RgCsr.NoPaddingWhenRowsAreEqualAndFillWholeGroups and
// PackSell.NoPaddingNoDummiesWhenRowsAreEqual.)
TYPED_TEST(HostFormat, NoPaddingNoDummiesWhenRowsAreEqual)
{
  using F = TypeParam;
  using C = Case<F>;
  RandomSpec s;
  s.rows    = C::kEqualRows;
  s.cols    = C::kEqualCols;
  s.min_len = s.max_len = C::kEqualLength;
  const int64_t     nnz = int64_t(C::kEqualRows) * C::kEqualLength;
  const CsrMatrix   A   = random_csr(s);
  const FormatStats st  = F::build(A.view(), C::equal_rows_options("auto")).stats();
  EXPECT_EQ(st.padding_slots, 0);
  EXPECT_EQ(st.dummy_words, 0);
  EXPECT_EQ(st.stored_slots, nnz);
  EXPECT_EQ(st.padding_ratio(), 1.0);
  EXPECT_EQ(st.tail_nnz, 0);
  EXPECT_EQ(st.tail_share(), 0.0);
  EXPECT_EQ(st.hybrid_width, C::kEqualLength);
  EXPECT_EQ(st.stored_bytes, nnz * C::kSlotBytes + (C::kEqualRows / 64 + 1) * 8 + C::kEqualRows * 4);
  EXPECT_DOUBLE_EQ(st.bytes_per_nnz(), double(st.stored_bytes) / double(nnz));
  const std::string text = st.to_string();
  for (const std::string line : {"nnz: " + std::to_string(nnz) + "\n", std::string("padding_slots: 0\n"), std::string("dummy_words: 0\n"), "hybrid_width: " + std::to_string(C::kEqualLength) + "\n", std::string("padding_ratio: 1.0000\n")})
    EXPECT_NE(text.find(line), std::string::npos) << text;

  s.rows                = 100; // last group padded to 64 rows
  const FormatStats st2 = F::build(random_csr(s).view(), C::equal_rows_options("none")).stats();
  EXPECT_EQ(st2.padding_slots, 28 * C::kEqualLength);
}

// A value update refuses another number of rows, of columns or of nonzeros (FormatError), and
// otherwise stores the new values: the regular part, the tail and the diagonal.
// (Formerly RgCsr.UpdateRefusesAnotherShape and the end of
// PackSell.UpdateWithoutScalingRefusesOverflowAndLeavesTheLayout.)
TYPED_TEST(HostFormat, UpdateRefusesAnotherShape)
{
  using F                     = TypeParam;
  const CsrMatrix  A          = csr_from_rows(4, {{{0, 1}, {3, 2}}, {{1, 3}}});
  typename F::Host M          = F::build(A.view(), Case<F>::exact_with_tail());
  const CsrMatrix  more_rows  = csr_from_rows(4, {{{0, 1}, {3, 2}}, {{1, 3}}, {}});
  const CsrMatrix  more_nnz   = csr_from_rows(4, {{{0, 1}, {3, 2}}, {{1, 3}, {2, 1}}});
  const CsrMatrix  more_cols  = csr_from_rows(5, {{{0, 1}, {3, 2}}, {{1, 3}}});
  const CsrMatrix  fewer_cols = csr_from_rows(3, {{{0, 1}, {2, 2}}, {{1, 3}}});
  EXPECT_THROW(F::update(more_rows.view(), M), FormatError);
  EXPECT_THROW(F::update(more_nnz.view(), M), FormatError);
  EXPECT_THROW(F::update(more_cols.view(), M), FormatError);
  EXPECT_THROW(F::update(fewer_cols.view(), M), FormatError);
  const CsrMatrix B = csr_from_rows(4, {{{0, 5}, {3, 6}}, {{1, 7}}});
  F::update(B.view(), M);
  EXPECT_EQ(F::stored_value(M, 0), 5);
  EXPECT_EQ(F::stored_value(M, 1), 7);
  EXPECT_EQ(M.tail.val, (std::vector<double>{6}));
  double d[2] = {NAN, NAN};
  F::diagonal(M, d);
  EXPECT_EQ(d[0], 5);
  EXPECT_EQ(d[1], 7);
}

// x is NaN wherever no nonzero reads it (column 0 included): multiplying a padding slot
// (RgCSR: column 0, value 0; PackSELL: the zero word) would make the row NaN.
// (Formerly RgCsr.PaddingIsNeverMultiplied; PackSELL's exact and BF16 words added.)
TYPED_TEST(HostFormat, PaddingIsNeverMultiplied)
{
  using F = TypeParam;
  RandomSpec s;
  s.rows           = 70;
  s.cols           = 200;
  s.max_len        = 9;
  s.empty_fraction = 0.2;
  CsrMatrix A      = random_csr(s);
  for (int32_t &c : A.colidx) c += 1; // shift right: column 0 is never read
  A.cols += 1;
  std::vector<char> used(size_t(A.cols), 0);
  for (int32_t c : A.colidx) used[size_t(c)] = 1;
  std::vector<double> x = random_vector(A.cols, 9);
  for (int32_t c = 0; c < A.cols; ++c)
    if (!used[size_t(c)]) x[size_t(c)] = std::numeric_limits<double>::quiet_NaN();
  for (const typename F::Options &o : Case<F>::padding_options()) {
    SCOPED_TRACE(Case<F>::name(o));
    const typename F::Host M = F::build(A.view(), o);
    ASSERT_GT(M.stats().padding_slots, 0) << "the test needs padding";
    EXPECT_TRUE(check_product_with(
      A, [&M](const double *xx, double *y, bool add) { F::spmv(M, xx, y, add); }, Case<F>::error_model(M), x, 3));
  }
}
