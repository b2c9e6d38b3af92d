// Every Matrix Market file of the shared test set through both device formats.
// Suites: SmallMatrixFiles/MatrixFileTest.* (a few small files, part of the compute-sanitizer
// subset --gtest_filter=*Small*:*Random*) and MatrixFiles/MatrixFileTest.* (all the others).
// The folder is PETSCSPMV_MATRIX_DIR from the environment, else the one CMake was given.
#include "matrix_market.hpp"
#include "format_checks.hpp"
#include "shared_matrices.hpp"

using namespace gputest;

namespace
{

class MatrixFileTest : public testing::TestWithParam<std::string> { };

} // namespace

TEST_P(MatrixFileTest, AllFormats)
{
  const std::string path  = matrix_dir() + "/" + GetParam();
  const HostCsr     A     = pspmv_test::read_matrix_market(path);
  const std::string label = stem(GetParam());
  // Host cost measured on the largest file (G3_circuit, 7.7M nnz): ~1 s to read, ~8 s to
  // build and run the host references of all 42 configurations.
  for (const RgConfig &c : rgcsr_configs()) check_rgcsr(A, c, label);
  for (const PsConfig &c : packsell_configs(pspmv::PackSellScaling::Auto)) check_packsell(A, c, label);
}

INSTANTIATE_TEST_SUITE_P(SmallMatrixFiles, MatrixFileTest, testing::ValuesIn(files(true)), param_name);
INSTANTIATE_TEST_SUITE_P(MatrixFiles, MatrixFileTest, testing::ValuesIn(files(false)), param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(MatrixFileTest);

// Fails loudly when the folder is missing, instead of silently testing no file.
TEST(MatrixFiles, FolderHasMatrices)
{
  EXPECT_GE(files(false).size() + files(true).size(), 4u) << "no Matrix Market files in " << matrix_dir() << ": set PETSCSPMV_MATRIX_DIR (environment or CMake) to the shared matrices folder";
}
