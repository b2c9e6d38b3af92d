// Every format configuration against CSR on random matrices of the shapes that break
// layouts: empty rows, dense rows, rectangular, 1 row, 1 column, 0 rows/columns, far-apart
// columns (dummies), equal rows, long-row tails, tiny/huge values, explicit zeros.
#include "format_check.hpp"
#include "random_matrix.hpp"
#include <gtest/gtest.h>

using namespace pspmv_test;
using pspmv::PackSellScaling;

namespace
{

struct Family {
  std::string name;
  RandomSpec  spec;
};

// gtest prints the family by name instead of its bytes.
void PrintTo(const Family &f, std::ostream *os)
{
  *os << f.name;
}

Family family(const std::string &name, int32_t rows, int32_t cols, int32_t min_len, int32_t max_len)
{
  Family f{name, RandomSpec{}};
  f.spec.rows    = rows;
  f.spec.cols    = cols;
  f.spec.min_len = min_len;
  f.spec.max_len = max_len;
  uint64_t h     = 1469598103934665603ULL; // FNV-1a: a seed per family, the same everywhere
  for (char c : name) h = (h ^ uint8_t(c)) * 1099511628211ULL;
  f.spec.seed = h % 100000 + 1;
  return f;
}

std::vector<Family> families()
{
  std::vector<Family> v;
  v.push_back(family("square_mixed", 500, 500, 0, 15));
  v.push_back(family("empty_rows", 300, 200, 0, 8));
  v.back().spec.empty_fraction = 0.4;
  v.push_back(family("one_dense_row", 400, 400, 0, 6));
  v.back().spec.dense_rows = 1;
  v.push_back(family("three_dense_rows", 1000, 300, 1, 4));
  v.back().spec.dense_rows = 3;
  v.push_back(family("wide", 40, 3000, 0, 60));
  v.push_back(family("tall", 2000, 30, 0, 10));
  v.push_back(family("one_row", 1, 700, 100, 300));
  v.push_back(family("one_column", 500, 1, 0, 1));
  v.push_back(family("zero_rows", 0, 50, 0, 3));
  v.push_back(family("zero_columns", 60, 0, 0, 3));
  v.push_back(family("zero_by_zero", 0, 0, 0, 0));
  v.push_back(family("far_columns", 200, 3000000, 1, 6));
  v.back().spec.min_gap = 40000; // beyond 15 delta bits: dummies in every format
  v.push_back(family("far_columns_tail", 3000, 3000000, 0, 5));
  v.back().spec.min_gap       = 40000; // every nonzero needs a dummy, and long rows make a tail: the
  v.back().spec.long_fraction = 0.02;  // auto width must count the dummies of the first K nonzeros
  v.back().spec.long_len      = 60;
  v.push_back(family("medium_gaps", 300, 100000, 0, 20));
  v.back().spec.min_gap = 200; // dummies for E8M14 (8 delta bits) only
  v.push_back(family("equal_rows", 256, 500, 9, 9));
  v.push_back(family("equal_rows_ragged_count", 100, 100, 5, 5));
  v.push_back(family("long_row_tail", 3000, 3000, 0, 5));
  v.back().spec.long_fraction = 0.01;
  v.back().spec.long_len      = 400;
  v.push_back(family("tiny_values", 300, 300, 0, 10)); // FP16 subnormals and underflow
  v.back().spec.min_magnitude = 1e-12;
  v.back().spec.max_magnitude = 1e-3;
  v.push_back(family("huge_values", 300, 300, 0, 10)); // FP16 needs scaling
  v.back().spec.min_magnitude = 1e3;
  v.back().spec.max_magnitude = 1e30;
  v.push_back(family("wide_value_range", 300, 300, 0, 10));
  v.back().spec.min_magnitude = 1e-30;
  v.back().spec.max_magnitude = 1e30;
  v.push_back(family("explicit_zeros", 300, 300, 0, 10));
  v.back().spec.zero_fraction = 0.3;
  return v;
}

std::vector<FormatConfig> grid()
{
  std::vector<FormatConfig> g;
  for (int32_t G : {32, 96})
    for (const char *h : {"none", "auto", "1", "3"}) g.push_back(rgcsr_config(G, h, true));
  for (const char *v : {"exact", "fp16", "bf16", "e8m14", "e8m22"})
    for (auto [C, sigma] : {std::pair<int32_t, int32_t>{32, 1}, {64, 256}, {32, 32}, {32, pspmv::kPackSellSigmaAuto}})
      for (const char *h : {"none", "auto", "2"}) g.push_back(packsell_config(C, sigma, v, h, PackSellScaling::Auto, true));
  g.push_back(packsell_config(32, 1, "fp16", "auto", PackSellScaling::None, true));
  g.push_back(rgcsr_config(1024, "auto", true)); // the largest blocks: one group/slice per matrix here
  g.push_back(packsell_config(1024, 2048, "bf16", "auto", PackSellScaling::Auto, true));
  g.push_back(packsell_config(32, 32, "e8m14", "none", PackSellScaling::None, true));
  return g;
}

class RandomMatrix : public ::testing::TestWithParam<Family> { };

} // namespace

TEST_P(RandomMatrix, EveryFormatMatchesCsr)
{
  const CsrMatrix A    = random_csr(GetParam().spec);
  uint64_t        seed = GetParam().spec.seed;
  for (const FormatConfig &c : grid()) check_format(A, c, ++seed);
}

INSTANTIATE_TEST_SUITE_P(Families, RandomMatrix, ::testing::ValuesIn(families()), [](const ::testing::TestParamInfo<Family> &i) { return i.param.name; });
