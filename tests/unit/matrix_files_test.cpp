// Every format against CSR on every matrix of the shared folder: one test per file (ctest
// lists them). The largest files run a reduced set of configurations once.
#include "format_check.hpp"
#include "matrix_market.hpp"
#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>

using namespace pspmv_test;
using pspmv::PackSellScaling;

namespace
{

std::vector<std::string> matrix_files()
{
  std::vector<std::string> files;
  std::error_code          ec;
  for (const auto &e : std::filesystem::directory_iterator(PETSCSPMV_MATRIX_DIR, ec)) {
    const std::string name = e.path().filename().string();
    const auto        ends = [&name](const std::string &s) { return name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0; };
    if (ends(".mtx") || ends(".mtx.gz")) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string test_name(const std::string &path)
{
  std::string n = std::filesystem::path(path).filename().string();
  n             = n.substr(0, n.find(".mtx"));
  for (char &c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

std::vector<FormatConfig> standard_configs()
{
  return {
    rgcsr_config(32, "none"),
    rgcsr_config(64, "auto", true),
    rgcsr_config(128, "3"),
    packsell_config(32, 1, "exact", "none", PackSellScaling::None),
    packsell_config(32, 128, "fp16", "auto", PackSellScaling::Auto, true),
    packsell_config(32, 1, "fp16", "none", PackSellScaling::None), // the error when values overflow
    packsell_config(64, 64, "bf16", "5", PackSellScaling::Auto),
    packsell_config(32, 1024, "e8m14", "auto", PackSellScaling::None, true),
    packsell_config(128, 128, "e8m22", "none", PackSellScaling::Auto),
    packsell_config(32, pspmv::kPackSellSigmaAuto, "bf16", "auto", PackSellScaling::Auto, true), // checked against the rule
  };
}

// For matrices of several million nonzeros (G3_circuit): each kind of layout once.
std::vector<FormatConfig> heavy_configs()
{
  return {
    rgcsr_config(32, "auto", true),
    packsell_config(32, 256, "fp16", "auto", PackSellScaling::Auto, true),
    packsell_config(32, 1, "exact", "none", PackSellScaling::None),
    packsell_config(128, 128, "e8m22", "3", PackSellScaling::Auto),
  };
}

class MatrixFile : public ::testing::TestWithParam<std::string> { };

} // namespace

TEST(MatrixFolder, HoldsTheSharedMatrices)
{
  EXPECT_GE(matrix_files().size(), 40u) << "matrices expected in " << PETSCSPMV_MATRIX_DIR;
}

TEST_P(MatrixFile, EveryFormatMatchesCsr)
{
  const CsrMatrix A = read_matrix_market(GetParam());
  ASSERT_NO_THROW(pspmv::check_csr(A.view()));
  ASSERT_GT(A.nnz(), 0);
  const bool heavy = A.nnz() > 3000000;
  uint64_t   seed  = 100;
  for (const FormatConfig &c : heavy ? heavy_configs() : standard_configs()) check_format(A, c, ++seed);
}

INSTANTIATE_TEST_SUITE_P(Shared, MatrixFile, ::testing::ValuesIn(matrix_files()), [](const ::testing::TestParamInfo<std::string> &i) { return test_name(i.param); });
