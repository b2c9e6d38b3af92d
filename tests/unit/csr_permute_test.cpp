// PermutedCsr: B = P A P^T entry by entry, sorted rows, value updates by gather, refused inputs.
#include "core/csr_permute.hpp"
#include "random_matrix.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>

using namespace pspmv;
using namespace pspmv_test;

namespace
{

std::vector<int32_t> random_permutation(int32_t n, uint64_t seed)
{
  std::vector<int32_t> p(n);
  std::iota(p.begin(), p.end(), 0);
  Rng rng(seed);
  for (int32_t i = n - 1; i > 0; --i) std::swap(p[i], p[rng.below(uint64_t(i) + 1)]);
  return p;
}

// A(r, c), 0 where A stores nothing (at most one entry per position: check_csr).
double entry(const CsrView &A, int32_t r, int32_t c)
{
  for (int64_t k = A.rowptr[r]; k < A.rowptr[r + 1]; ++k)
    if (A.colidx[k] == c) return A.values[k];
  return 0.0;
}

void expect_permuted(const CsrMatrix &A, const PermutedCsr &B, const std::vector<int32_t> &p)
{
  const CsrView b = B.view(), a = A.view();
  ASSERT_EQ(b.rows, a.rows);
  ASSERT_EQ(B.nnz(), A.nnz());
  EXPECT_NO_THROW(check_csr(b)); // sorted, in range
  for (int32_t i = 0; i < b.rows; ++i) {
    ASSERT_EQ(b.row_length(i), a.row_length(p[i])) << "row " << i;
    for (int64_t k = b.rowptr[i]; k < b.rowptr[i + 1]; ++k) EXPECT_EQ(b.values[k], entry(a, p[i], p[b.colidx[k]])) << "B(" << i << ", " << b.colidx[k] << ")";
  }
}

} // namespace

TEST(PermutedCsr, HoldsPAPtWithSortedRows)
{
  for (uint64_t seed : {1, 2, 3}) {
    RandomSpec s;
    s.rows = s.cols   = 200;
    s.max_len         = 12;
    s.empty_fraction  = 0.1;
    s.dense_rows      = 1;
    s.zero_fraction   = 0.05;
    s.seed            = seed;
    const CsrMatrix A = random_csr(s);
    const auto      p = random_permutation(s.rows, seed + 10);
    expect_permuted(A, PermutedCsr(A.view(), p), p);
  }
}

TEST(PermutedCsr, IdentityKeepsTheMatrixAndUpdatesGather)
{
  RandomSpec s;
  s.rows = s.cols        = 50;
  const CsrMatrix      A = random_csr(s);
  std::vector<int32_t> id(50);
  std::iota(id.begin(), id.end(), 0);
  PermutedCsr B(A.view(), id);
  EXPECT_TRUE(std::equal(A.colidx.begin(), A.colidx.end(), B.view().colidx));
  const auto      p = random_permutation(50, 7);
  PermutedCsr     C(A.view(), p);
  const CsrMatrix A2 = with_new_values(A, 9, 1e-3, 1e3);
  C.update_values(A2.values.data());
  expect_permuted(A2, C, p);
}

TEST(PermutedCsr, KnowsItsSourcePattern)
{
  RandomSpec s;
  s.rows = s.cols   = 80;
  const CsrMatrix A = random_csr(s);
  PermutedCsr     B(A.view(), random_permutation(80, 3));
  EXPECT_TRUE(B.same_source_pattern(A.view()));
  EXPECT_TRUE(B.same_source_pattern(with_new_values(A, 4, 1.0, 2.0).view()));
  // one column moved inside a row (same count of nonzeros): another pattern
  CsrMatrix C = A;
  for (int32_t r = 0; r < C.rows; ++r)
    if (C.row_length(r) > 0 && C.colidx[C.rowptr[r + 1] - 1] < C.cols - 1) {
      C.colidx[C.rowptr[r + 1] - 1] += 1;
      if (C.row_length(r) == 1 || C.colidx[C.rowptr[r + 1] - 1] != C.colidx[C.rowptr[r + 1] - 2]) break;
      C.colidx[C.rowptr[r + 1] - 1] -= 1;
    }
  ASSERT_NE(C.colidx, A.colidx);
  EXPECT_FALSE(B.same_source_pattern(C.view()));
}

TEST(PermutedCsr, EmptyMatrix)
{
  CsrMatrix   A; // 0 x 0
  PermutedCsr B(A.view(), {});
  EXPECT_EQ(B.view().rows, 0);
  EXPECT_EQ(B.nnz(), 0);
}

TEST(PermutedCsr, RefusesNonSquareMatricesAndBadPermutations)
{
  RandomSpec s;
  s.rows            = 10;
  s.cols            = 12;
  const CsrMatrix R = random_csr(s);
  EXPECT_THROW(PermutedCsr(R.view(), random_permutation(10, 1)), FormatError);
  s.cols            = 10;
  const CsrMatrix A = random_csr(s);
  EXPECT_THROW(PermutedCsr(A.view(), random_permutation(9, 1)), FormatError);
  auto p = random_permutation(10, 1);
  p[3]   = p[4];
  try {
    PermutedCsr B(A.view(), p);
    ADD_FAILURE() << "a repeated entry was accepted";
  } catch (const FormatError &e) {
    EXPECT_NE(std::string(e.what()).find("entry 4 of the permutation"), std::string::npos) << e.what();
  }
  p[3] = -1;
  EXPECT_THROW(PermutedCsr(A.view(), p), FormatError);
}
