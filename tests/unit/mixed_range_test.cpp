// The mixed-precision preconditioner's host twins across the whole double range (only the
// public functions of scaled_copy.hpp, inner_cg.hpp and f3r.hpp): the copy of 2^e A is the copy
// of A (e = -1030: every entry subnormal, near 1e-310), a scaled value beyond double is refused,
// and M(2^k r) = 2^k M(r) bit for bit for both inner methods.
#include "mixed/f3r.hpp"
#include "mixed/inner_cg.hpp"
#include "mixed_systems.hpp"
#include "random_matrix.hpp"
#include <cmath>
#include <gtest/gtest.h>
#include <string>

using namespace pspmv;
using namespace pspmv::mixed;
using namespace pspmv_test;

namespace
{

CsrMatrix scaled(const CsrMatrix &A, int e)
{
  CsrMatrix B = A;
  for (double &v : B.values) v = std::ldexp(v, e);
  return B;
}

// The products of two copies with the same x, bit for bit (the copies hold the same values).
void expect_same_operator(const ScaledCopy &a, const ScaledCopy &b, const std::string &what)
{
  ASSERT_EQ(a.op.rows, b.op.rows) << what;
  const std::vector<double> x = random_vector(a.op.rows, 3);
  std::vector<double>       ya(size_t(a.op.rows)), yb(size_t(a.op.rows));
  packsell_spmv(a.op, x.data(), ya.data(), false);
  packsell_spmv(b.op, x.data(), yb.data(), false);
  for (size_t i = 0; i < ya.size(); ++i) {
    ASSERT_TRUE(std::isfinite(yb[i])) << what << ": row " << i;
    ASSERT_EQ(ya[i], yb[i]) << what << ": row " << i;
  }
}

// r in [-1, 1] rounded to multiples of 2^-20 (exact when scaled into the subnormal range).
std::vector<double> dyadic_vector(int32_t n, uint64_t seed)
{
  std::vector<double> r = random_vector(n, seed);
  for (double &v : r) v = std::round(v * 0x1p20) / 0x1p20;
  return r;
}

std::vector<double> apply(const ScaledCopy &c, bool f3r, const std::vector<double> &r)
{
  std::vector<double> z(r.size());
  InnerStats          stats;
  if (f3r) {
    F3RState st; // a fresh state: the weights change with the calls
    apply_inner_f3r(c, F3RParams{}, r.data(), z.data(), &st, &stats);
  } else apply_inner_cg(c, InnerCgParams{}, r.data(), z.data(), &stats);
  EXPECT_EQ(stats.jacobi_fallbacks + stats.zero_rhs, 0);
  return z;
}

} // namespace

// The 2-D Laplacian with row and column scalings d = 1 + (i mod 7): small integers, exact at any
// power-of-two scale; its copy at 2^-1030 (a_ii s_i s_j overflowed there: the copy held Inf) and
// at 2^1000 is its copy at 1, and s scales by 2^515 and 2^-500.
TEST(MixedRange, CopyOfAPowerOfTwoScaledMatrixIsTheSame)
{
  const CsrMatrix  A = laplace2d(20, 17);
  const ScaledCopy c = test_scaled_copy(A);
  for (int e : {-1030, 1000}) {
    const ScaledCopy ce = test_scaled_copy(scaled(A, e));
    expect_same_operator(c, ce, "2^" + std::to_string(e) + " A");
    for (size_t i = 0; i < c.s.size(); ++i) ASSERT_EQ(ce.s[i], std::ldexp(c.s[i], -e / 2)) << "s, 2^" << e << " A, row " << i;
  }
}

// Scaled values beyond double: refused (ValueRangeError with A's row and column), not stored as
// Inf or as 0.
TEST(MixedRange, ScaledValueBeyondDoubleIsRefused)
{
  const CsrMatrix big = csr_from_rows(3, {{{0, 4.0}, {1, -1.0}}, {{0, -1.0}, {1, 1e-310}, {2, -1.0}}, {{1, -1.0}, {2, 1e-310}}});
  try {
    test_scaled_copy(big, "exact");
    FAIL() << "a scaled value of about 1e310 was not refused";
  } catch (const ValueRangeError &e) {
    EXPECT_EQ(e.row, 1);
    EXPECT_EQ(e.col, 2);
    EXPECT_NE(e.message().find("exceeds the largest double"), std::string::npos) << e.message();
  }
  const CsrMatrix small = csr_from_rows(2, {{{0, 1e300}, {1, -1e-30}}, {{0, -1e-30}, {1, 1e300}}});
  try {
    test_scaled_copy(small, "exact");
    FAIL() << "a scaled value of about 1e-330 was stored as 0";
  } catch (const ValueRangeError &e) {
    EXPECT_EQ(e.row, 0);
    EXPECT_EQ(e.col, 1);
    EXPECT_NE(e.message().find("below the smallest double"), std::string::npos) << e.message();
  }
}

// M(2^k r) = 2^k M(r) for ||D^-1/2 r|| from about 1e-270 to 1e270 (the plain sum of squares
// underflowed below 1e-162: z = 0, and overflowed above 1e154: a Jacobi step), and the PC of
// 2^e A on 2^e r is the PC of A on r.
TEST(MixedRange, ApplicationScalesExactly)
{
  const CsrMatrix           A = laplace2d(24, 19);
  const ScaledCopy          c = test_scaled_copy(A);
  const std::vector<double> r = dyadic_vector(A.rows, 5);
  for (bool f3r : {false, true}) {
    const char               *m  = f3r ? "f3r" : "cg";
    const std::vector<double> z0 = apply(c, f3r, r);
    for (int k : {-900, -600, 600, 900}) {
      std::vector<double> rk(r);
      for (double &v : rk) v = std::ldexp(v, k);
      const std::vector<double> z = apply(c, f3r, rk);
      for (size_t i = 0; i < z.size(); ++i) ASSERT_EQ(z[i], std::ldexp(z0[i], k)) << m << ", M(2^" << k << " r), entry " << i;
    }
    for (int e : {-1030, 1000}) {
      std::vector<double> re(r);
      for (double &v : re) v = std::ldexp(v, e);
      const std::vector<double> z = apply(test_scaled_copy(scaled(A, e)), f3r, re);
      for (size_t i = 0; i < z.size(); ++i) ASSERT_EQ(z[i], z0[i]) << m << ", the PC of 2^" << e << " A on 2^" << e << " r, entry " << i;
    }
  }
}
