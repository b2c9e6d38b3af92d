// The test reader itself: symmetry expansion, duplicates, sorting, explicit zeros, pattern
// values, gzip, and errors.
#include "matrix_market.hpp"
#include <cmath>
#include <fstream>
#include <gtest/gtest.h>
#include <zlib.h>

using namespace pspmv_test;

namespace
{

std::string write_file(const std::string &name, const std::string &text)
{
  const std::string path = ::testing::TempDir() + "pspmv_mm_" + name;
  if (name.size() > 3 && name.substr(name.size() - 3) == ".gz") {
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, text.data(), unsigned(text.size()));
    gzclose(f);
  } else {
    std::ofstream(path) << text;
  }
  return path;
}

std::vector<double> dense(const CsrMatrix &A)
{
  std::vector<double> d(size_t(A.rows) * size_t(A.cols), 0.0);
  for (int32_t r = 0; r < A.rows; ++r)
    for (int32_t k = A.rowptr[size_t(r)]; k < A.rowptr[size_t(r) + 1]; ++k) d[size_t(r) * size_t(A.cols) + size_t(A.colidx[size_t(k)])] = A.values[size_t(k)];
  return d;
}

} // namespace

TEST(MatrixMarket, GeneralSumsDuplicatesSortsColumnsKeepsZeros)
{
  const CsrMatrix A = read_matrix_market(write_file("general.mtx", "%%MatrixMarket matrix coordinate real general\n% comment\n\n2 3 5\n"
                                                                   "1 3 1.5\n1 1 -2e-1\n2 2 0.0\n1 3 +2.5\n  2 1 7  \n"));
  EXPECT_EQ(A.rows, 2);
  EXPECT_EQ(A.cols, 3);
  EXPECT_EQ(A.rowptr, (std::vector<int32_t>{0, 2, 4}));
  EXPECT_EQ(A.colidx, (std::vector<int32_t>{0, 2, 0, 1}));
  EXPECT_EQ(A.values, (std::vector<double>{-0.2, 4.0, 7.0, 0.0})) << "duplicates summed, zero kept";
  MatrixMarketHeader h;
  const CsrMatrix    T = read_matrix_market(write_file("tiny.mtx", "%%MatrixMarket matrix coordinate real general\n1 2 2\n1 1 1e-320\n1 2 -1e-400\n"), {}, &h);
  EXPECT_EQ(h.field, "real");
  EXPECT_EQ(h.symmetry, "general");
  EXPECT_EQ(T.values, (std::vector<double>{1e-320, -0.0})) << "subnormal kept, underflow to zero";
}

TEST(MatrixMarket, SymmetricAndSkewAreExpanded)
{
  const std::string body = "3 3 3\n1 1 4\n3 1 2\n3 2 -1\n";
  const CsrMatrix   S    = read_matrix_market(write_file("sym.mtx", "%%MatrixMarket matrix coordinate real symmetric\n" + body));
  EXPECT_EQ(dense(S), (std::vector<double>{4, 0, 2, 0, 0, -1, 2, -1, 0}));
  const CsrMatrix K = read_matrix_market(write_file("skew.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n3 1 2\n3 2 -1\n"));
  EXPECT_EQ(dense(K), (std::vector<double>{0, 0, -2, 0, 0, 1, 2, -1, 0}));
}

TEST(MatrixMarket, PatternAndIntegerGetHashedNonzeroValues)
{
  const CsrMatrix P = read_matrix_market(write_file("pat.mtx.gz", "%%MatrixMarket matrix coordinate pattern symmetric\n4 4 3\n2 1\n4 4\n3 2\n"));
  EXPECT_EQ(P.nnz(), 5);
  EXPECT_EQ(dense(P)[1 * 4 + 0], pattern_value(1, 0));
  EXPECT_EQ(dense(P)[0 * 4 + 1], pattern_value(1, 0)) << "the mirror keeps the symmetry";
  const CsrMatrix I = read_matrix_market(write_file("int.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 5\n2 1 -3\n"));
  EXPECT_EQ(I.values, (std::vector<double>{pattern_value(0, 1), pattern_value(1, 0)}));
  // bench/'s choice: integer values kept, its own rule for pattern values
  MatrixMarketOptions keep;
  keep.pattern            = [](int32_t r, int32_t c) { return 100.0 * r + c; };
  keep.integer_as_pattern = false;
  EXPECT_EQ(read_matrix_market(write_file("int2.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 5\n2 1 -3\n"), keep).values, (std::vector<double>{5, -3}));
  EXPECT_EQ(dense(read_matrix_market(write_file("pat2.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 1\n2 1\n"), keep)), (std::vector<double>{0, 100, 100, 0})) << "the stored entry's value, mirrored";
  // Values: nonzero, both signs, magnitudes over several decades.
  double lo = 1e300, hi = 0;
  int    negative = 0;
  for (int32_t r = 0; r < 100; ++r)
    for (int32_t c = 0; c < 100; ++c) {
      const double v = pattern_value(r, c);
      ASSERT_NE(v, 0.0);
      lo = std::min(lo, std::fabs(v));
      hi = std::max(hi, std::fabs(v));
      negative += v < 0;
    }
  EXPECT_LT(lo, 0.05);
  EXPECT_GT(hi, 100.0);
  EXPECT_GT(negative, 3000);
  EXPECT_LT(negative, 7000);
}

TEST(MatrixMarket, ReadsTheSharedFilesPlainAndGzipped)
{
  const CsrMatrix W = read_matrix_market(std::string(PETSCSPMV_MATRIX_DIR) + "/west0479.mtx");
  EXPECT_EQ(W.rows, 479);
  EXPECT_EQ(W.cols, 479);
  EXPECT_EQ(W.nnz(), 1910);
  const CsrMatrix E = read_matrix_market(std::string(PETSCSPMV_MATRIX_DIR) + "/EX5.mtx.gz");
  EXPECT_EQ(E.rows, 6545);
  EXPECT_EQ(E.nnz(), 295680);
}

TEST(MatrixMarket, RefusesBadFilesNamingTheLine)
{
  auto expect_error = [](const std::string &name, const std::string &text, const std::string &part) {
    try {
      read_matrix_market(write_file(name, text));
      ADD_FAILURE() << name << " accepted";
    } catch (const std::runtime_error &e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error("nobanner.mtx", "2 2 1\n1 1 1\n", "not a Matrix Market");
  expect_error("array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "coordinate");
  expect_error("complex.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", "complex");
  expect_error("range.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n", ":3: entry (3, 1)");
  expect_error("short.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n", "file ends");
  expect_error("junk.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 x\n", "cannot read a value");
  EXPECT_THROW(read_matrix_market(::testing::TempDir() + "does_not_exist.mtx"), std::runtime_error);
}
