// RgCSR: hand-checked layout, bad options, zero sizes. What RgCSR shares with PackSELL (stats
// without padding, updates of another shape, padding never multiplied): host_format_test.cpp.
#include "formats/rgcsr/rgcsr.hpp"
#include "csr_matrix.hpp"
#include "format_check.hpp"
#include "random_matrix.hpp"
#include <cmath>
#include <gtest/gtest.h>
#include <limits>

using namespace pspmv;
using namespace pspmv_test;

namespace
{
RgCsrOptions opts(int32_t G, const std::string &hybrid)
{
  RgCsrOptions o;
  o.group_size = G;
  o.hybrid     = HybridOption::parse(hybrid);
  return o;
}
} // namespace

TEST(RgCsr, HandCheckedLayout)
{
  // 3 x 6: rows of 2, 0 and 3 nonzeros; G = 32, one group of width 3 (padded to 32 rows).
  const CsrMatrix   A = csr_from_rows(6, {{{1, 1.5}, {4, 2.5}}, {}, {{0, -1}, {2, -2}, {5, -3}}});
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

TEST(RgCsr, RefusesBadGroupSizesAndWidths)
{
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
  bad.hybrid.mode  = HybridOption::Mode::Fixed;
  bad.hybrid.width = 0;
  EXPECT_THROW(build_rgcsr(A.view(), bad), FormatError);
  CsrMatrix unsorted = csr_from_rows(3, {{{2, 1}, {0, 1}}});
  EXPECT_THROW(build_rgcsr(unsorted.view(), opts(32, "none")), FormatError);
  CsrMatrix out_of_range = csr_from_rows(3, {{{0, 1}, {3, 1}}});
  EXPECT_THROW(build_rgcsr(out_of_range.view(), opts(32, "none")), FormatError);
}

TEST(RgCsr, ZeroSizedMatrices)
{
  for (auto [rows, cols] : {std::pair<int32_t, int32_t>{0, 0}, {0, 7}, {5, 0}}) {
    RandomSpec s;
    s.rows            = rows;
    s.cols            = cols;
    const CsrMatrix A = random_csr(s);
    for (const char *h : {"none", "auto", "3"}) check_format(A, rgcsr_config(32, h, true), 1);
  }
}
