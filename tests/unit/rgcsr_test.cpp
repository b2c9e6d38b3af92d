// RgCSR: hand-checked layout, bad options, padding never multiplied, stats, updates.
#include "formats/rgcsr/rgcsr.hpp"
#include "csr_matrix.hpp"
#include "format_check.hpp"
#include "random_matrix.hpp"
#include <cmath>
#include <gtest/gtest.h>
#include <limits>

using namespace pspmv;
using namespace pspmv_test;

namespace {
RgCsrOptions opts(int32_t G, const std::string &hybrid) {
  RgCsrOptions o;
  o.group_size = G;
  o.hybrid = HybridOption::parse(hybrid);
  return o;
}
} // namespace

TEST(RgCsr, HandCheckedLayout) {
  // 3 x 6: rows of 2, 0 and 3 nonzeros; G = 32, one group of width 3 (padded to 32 rows).
  const CsrMatrix A = csr_from_rows(6, {{{1, 1.5}, {4, 2.5}}, {}, {{0, -1}, {2, -2}, {5, -3}}});
  const RgCsrMatrix M = build_rgcsr(A.view(), opts(32, "none"));
  EXPECT_EQ(M.hybrid_width, 3);
  EXPECT_EQ(M.group_pointers, (std::vector<int64_t>{0, 96}));
  EXPECT_EQ(M.row_length, (std::vector<int32_t>{2, 0, 3}));
  ASSERT_EQ(M.values.size(), 96u);
  // slot k of row i at k*32 + i
  EXPECT_EQ(M.columns[0], 1);
  EXPECT_EQ(M.values[0], 1.5);
  EXPECT_EQ(M.columns[32], 4);
  EXPECT_EQ(M.values[32], 2.5);
  EXPECT_EQ(M.columns[2], 0);
  EXPECT_EQ(M.values[2], -1);
  EXPECT_EQ(M.columns[34], 2);
  EXPECT_EQ(M.columns[66], 5);
  EXPECT_EQ(M.values[66], -3);
  EXPECT_EQ(M.values[64], 0.0) << "row 0 has no third nonzero: padding";
  EXPECT_EQ(M.tail.nnz(), 0);

  const RgCsrMatrix H = build_rgcsr(A.view(), opts(32, "1"));
  EXPECT_EQ(H.hybrid_width, 1);
  EXPECT_EQ(H.group_pointers, (std::vector<int64_t>{0, 32}));
  EXPECT_EQ(H.tail.row, (std::vector<int32_t>{0, 2, 2}));
  EXPECT_EQ(H.tail.col, (std::vector<int32_t>{4, 2, 5}));
  EXPECT_EQ(build_rgcsr(A.view(), opts(32, "50")).hybrid_width, 3) << "K beyond the longest row";
}

TEST(RgCsr, RefusesBadGroupSizesAndWidths) {
  const CsrMatrix A = csr_from_rows(3, {{{0, 1}}, {{2, 1}}});
  for (int32_t G : {0, -32, 16, 31, 33, 48, 100, 1056, 1 << 30}) {
    try {
      build_rgcsr(A.view(), opts(G, "auto"));
      ADD_FAILURE() << "group size " << G << " accepted";
    } catch (const FormatError &e) {
      EXPECT_NE(std::string(e.what()).find("multiple of 32"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::to_string(G)), std::string::npos) << e.what();
    }
  }
  for (int32_t G : {32, 64, 96, 1024}) EXPECT_NO_THROW(build_rgcsr(A.view(), opts(G, "auto")));
  RgCsrOptions bad = opts(32, "auto");
  bad.hybrid.mode = HybridOption::Mode::Fixed;
  bad.hybrid.width = 0;
  EXPECT_THROW(build_rgcsr(A.view(), bad), FormatError);
  CsrMatrix unsorted = csr_from_rows(3, {{{2, 1}, {0, 1}}});
  EXPECT_THROW(build_rgcsr(unsorted.view(), opts(32, "none")), FormatError);
  CsrMatrix out_of_range = csr_from_rows(3, {{{0, 1}, {3, 1}}});
  EXPECT_THROW(build_rgcsr(out_of_range.view(), opts(32, "none")), FormatError);
}

TEST(RgCsr, NoPaddingWhenRowsAreEqualAndFillWholeGroups) {
  RandomSpec s;
  s.rows = 128;
  s.cols = 90;
  s.min_len = s.max_len = 7;
  const CsrMatrix A = random_csr(s);
  const FormatStats st = build_rgcsr(A.view(), opts(64, "auto")).stats();
  EXPECT_EQ(st.padding_slots, 0);
  EXPECT_EQ(st.stored_slots, 128 * 7);
  EXPECT_EQ(st.padding_ratio(), 1.0);
  EXPECT_EQ(st.tail_nnz, 0);
  EXPECT_EQ(st.hybrid_width, 7);
  EXPECT_EQ(st.stored_bytes, 128 * 7 * 12 + 3 * 8 + 128 * 4);
  EXPECT_DOUBLE_EQ(st.bytes_per_nnz(), double(st.stored_bytes) / (128 * 7));
  const std::string text = st.to_string();
  for (const char *line : {"nnz: 896\n", "padding_slots: 0\n", "hybrid_width: 7\n", "padding_ratio: 1.0000\n"})
    EXPECT_NE(text.find(line), std::string::npos) << text;

  s.rows = 100; // last group padded to G rows
  const FormatStats st2 = build_rgcsr(random_csr(s).view(), opts(64, "none")).stats();
  EXPECT_EQ(st2.padding_slots, 28 * 7);
}

// x is NaN wherever no nonzero reads it (column 0 included): multiplying a padding slot
// (column 0, value 0) would make the row NaN.
TEST(RgCsr, PaddingIsNeverMultiplied) {
  RandomSpec s;
  s.rows = 70;
  s.cols = 200;
  s.max_len = 9;
  s.empty_fraction = 0.2;
  CsrMatrix A = random_csr(s);
  for (int32_t &c : A.colidx) c += 1; // shift right: column 0 is never read
  A.cols += 1;
  std::vector<char> used(size_t(A.cols), 0);
  for (int32_t c : A.colidx) used[size_t(c)] = 1;
  std::vector<double> x = random_vector(A.cols, 9);
  for (int32_t c = 0; c < A.cols; ++c)
    if (!used[size_t(c)]) x[size_t(c)] = std::numeric_limits<double>::quiet_NaN();
  for (const char *h : {"none", "auto", "2"}) {
    const RgCsrMatrix M = build_rgcsr(A.view(), opts(32, h));
    ASSERT_GT(M.stats().padding_slots, 0) << "the test needs padding";
    EXPECT_TRUE(check_product_with(A, [&M](const double *xx, double *y, bool add) { rgcsr_spmv(M, xx, y, add); },
                                   ErrorModel{}, x, 3));
  }
}

TEST(RgCsr, UpdateRefusesAnotherShape) {
  const CsrMatrix A = csr_from_rows(4, {{{0, 1}, {3, 2}}, {{1, 3}}});
  RgCsrMatrix M = build_rgcsr(A.view(), opts(32, "1"));
  const CsrMatrix more_rows = csr_from_rows(4, {{{0, 1}, {3, 2}}, {{1, 3}}, {}});
  const CsrMatrix more_nnz = csr_from_rows(4, {{{0, 1}, {3, 2}}, {{1, 3}, {2, 1}}});
  EXPECT_THROW(update_rgcsr_values(more_rows.view(), M), FormatError);
  EXPECT_THROW(update_rgcsr_values(more_nnz.view(), M), FormatError);
  const CsrMatrix B = csr_from_rows(4, {{{0, 5}, {3, 6}}, {{1, 7}}});
  update_rgcsr_values(B.view(), M);
  EXPECT_EQ(M.values[0], 5);
  EXPECT_EQ(M.values[1], 7);
  EXPECT_EQ(M.tail.val, (std::vector<double>{6}));
  double d[2] = {NAN, NAN};
  rgcsr_diagonal(M, d);
  EXPECT_EQ(d[0], 5);
  EXPECT_EQ(d[1], 7);
}

TEST(RgCsr, ZeroSizedMatrices) {
  for (auto [rows, cols] : {std::pair<int32_t, int32_t>{0, 0}, {0, 7}, {5, 0}}) {
    RandomSpec s;
    s.rows = rows;
    s.cols = cols;
    const CsrMatrix A = random_csr(s);
    for (const char *h : {"none", "auto", "3"}) check_format(A, rgcsr_config(32, h, true), 1);
  }
}

