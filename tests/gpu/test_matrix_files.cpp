// Every Matrix Market file of the shared test set through both device formats.
// Suites: SmallMatrixFiles/MatrixFileTest.* (a few small files, part of the compute-sanitizer
// subset --gtest_filter=*Small*:*Random*) and MatrixFiles/MatrixFileTest.* (all the others).
// The folder is PETSCSPMV_MATRIX_DIR from the environment, else the one CMake was given.
#include "matrix_market.hpp"
#include "format_checks.hpp"
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

using namespace gputest;
namespace fs = std::filesystem;

namespace {

std::string matrix_dir() {
  if (const char *e = std::getenv("PETSCSPMV_MATRIX_DIR"); e && *e) return e;
#ifdef PETSCSPMV_MATRIX_DIR
  return PETSCSPMV_MATRIX_DIR;
#else
  return "../shared/matrices";
#endif
}

std::string stem(const std::string &file) {
  std::string s = file;
  for (const char *ext : {".gz", ".mtx"})
    if (s.size() > std::strlen(ext) && s.compare(s.size() - std::strlen(ext), std::string::npos, ext) == 0)
      s.resize(s.size() - std::strlen(ext));
  return s;
}

// Small enough for compute-sanitizer (50-100x slower kernels): a chemical process matrix, a
// CFD matrix with a 128-long row, a circuit matrix with a 1310-long row (tail), a graph.
const std::set<std::string> &small_files() {
  static const std::set<std::string> s{"west0479", "watt_2", "adder_dcop_05", "power"};
  return s;
}

std::vector<std::string> matrix_files(bool small) {
  std::vector<std::string> v;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(matrix_dir(), ec)) {
    const std::string name = e.path().filename().string();
    const bool mtx = name.size() > 4 && (name.rfind(".mtx") == name.size() - 4 || name.rfind(".mtx.gz") == name.size() - 7);
    if (mtx && small_files().count(stem(name)) == (small ? 1u : 0u)) v.push_back(name);
  }
  std::sort(v.begin(), v.end());
  return v;
}

std::string param_name(const testing::TestParamInfo<std::string> &info) {
  std::string s = stem(info.param);
  for (char &c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

class MatrixFileTest : public testing::TestWithParam<std::string> {};

} // namespace

TEST_P(MatrixFileTest, AllFormats) {
  const std::string path = matrix_dir() + "/" + GetParam();
  const HostCsr A = pspmv_test::read_matrix_market(path);
  const std::string label = stem(GetParam());
  // Host cost measured on the largest file (G3_circuit, 7.7M nnz): ~1 s to read, ~8 s to
  // build and run the host references of all 42 configurations.
  for (const RgConfig &c : rgcsr_configs()) check_rgcsr(A, c, label);
  for (const PsConfig &c : packsell_configs(pspmv::PackSellScaling::Auto)) check_packsell(A, c, label);
}

INSTANTIATE_TEST_SUITE_P(SmallMatrixFiles, MatrixFileTest, testing::ValuesIn(matrix_files(true)), param_name);
INSTANTIATE_TEST_SUITE_P(MatrixFiles, MatrixFileTest, testing::ValuesIn(matrix_files(false)), param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(MatrixFileTest);

// Fails loudly when the folder is missing, instead of silently testing no file.
TEST(MatrixFiles, FolderHasMatrices) {
  EXPECT_GE(matrix_files(false).size() + matrix_files(true).size(), 4u)
      << "no Matrix Market files in " << matrix_dir()
      << ": set PETSCSPMV_MATRIX_DIR (environment or CMake) to the shared matrices folder";
}
