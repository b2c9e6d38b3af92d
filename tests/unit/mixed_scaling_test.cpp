// The range-safe scalings of the mixed-precision preconditioner (src/mixed/scaling.hpp): the entry
// norm and the scaled copy's values equal the plain formulas bit for bit where those stay in
// the normal range, and stay right where the plain ones overflow or underflow.
#include "mixed/scaling.hpp"
#include "random_matrix.hpp"
#include <cfloat>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <vector>

using namespace pspmv::mixed;
using pspmv_test::Rng;

namespace
{

double plain_norm(const std::vector<double> &s, const std::vector<double> &r)
{
  double sum = 0.0;
  for (size_t i = 0; i < s.size(); ++i) sum += (s[i] * r[i]) * (s[i] * r[i]);
  return std::sqrt(sum);
}

// n entries: s in [0.5, 2), r in [-1, 1].
void random_entry(size_t n, uint64_t seed, std::vector<double> *s, std::vector<double> *r)
{
  Rng rng(seed);
  s->resize(n);
  r->resize(n);
  for (size_t i = 0; i < n; ++i) {
    (*s)[i] = 0.5 + 1.5 * rng.uniform();
    (*r)[i] = 2.0 * rng.uniform() - 1.0;
  }
}

} // namespace

TEST(MixedScaling, EntryNormIsThePlainNormInTheNormalRange)
{
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::vector<double> s, r;
    random_entry(size_t(1 + 97 * seed), seed, &s, &r);
    EXPECT_EQ(entry_norm(s.data(), r.data(), s.size()), plain_norm(s, r)) << "seed " << seed;
  }
}

// ||t|| from 2^-1000 to 2^1000: exactly 2^k times the norm at k = 0, where the plain sum of
// squares gives 0 (below about 1e-162) or Inf (above about 1e154).
TEST(MixedScaling, EntryNormScalesExactlyAcrossTheDoubleRange)
{
  std::vector<double> s, r;
  random_entry(1000, 7, &s, &r);
  const double ref = entry_norm(s.data(), r.data(), s.size());
  for (int k : {-1000, -600, -200, 200, 600, 1000}) {
    std::vector<double> rk(r);
    for (double &v : rk) v = std::ldexp(v, k);
    EXPECT_EQ(entry_norm(s.data(), rk.data(), s.size()), std::ldexp(ref, k)) << "2^" << k;
  }
  std::vector<double> tiny(r), huge(r);
  for (double &v : tiny) v = std::ldexp(v, -600);
  for (double &v : huge) v = std::ldexp(v, 600);
  EXPECT_EQ(plain_norm(s, tiny), 0.0); // what the plain sum gave: the test is not vacuous
  EXPECT_TRUE(std::isinf(plain_norm(s, huge)));
}

TEST(MixedScaling, EntryNormOfZeroInfAndNaN)
{
  std::vector<double> s(50, 1.5), r(50, 0.0);
  EXPECT_EQ(entry_norm(s.data(), r.data(), r.size()), 0.0);
  EXPECT_EQ(entry_norm(s.data(), r.data(), 0), 0.0);
  r[17] = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(std::isinf(entry_norm(s.data(), r.data(), r.size())));
  r[3] = std::nan("");
  EXPECT_TRUE(std::isnan(entry_norm(s.data(), r.data(), r.size())));
  r[17] = 1.0; // NaN alone, before and after larger values
  EXPECT_TRUE(std::isnan(entry_norm(s.data(), r.data(), r.size())));
}

TEST(MixedScaling, NanMaxAndNormScale)
{
  const double nan = std::nan("");
  EXPECT_EQ(nan_max(1.0, 2.0), 2.0);
  EXPECT_EQ(nan_max(2.0, 1.0), 2.0);
  EXPECT_TRUE(std::isnan(nan_max(nan, 2.0)));
  EXPECT_TRUE(std::isnan(nan_max(2.0, nan)));
  EXPECT_EQ(norm_scale(0.0), 1.0);
  EXPECT_EQ(norm_scale(std::numeric_limits<double>::infinity()), 1.0);
  EXPECT_EQ(norm_scale(nan), 1.0);
  for (double a : {1.0, 0.75, 3.0, 1e-300, DBL_MIN, 1e300, 0x1p1020}) {
    const double m = a * norm_scale(a);
    EXPECT_GE(m, 0.5) << a;
    EXPECT_LT(m, 1.0) << a;
  }
  // the ends: the scale stays a normal power of two (2^1022 and 2^-1022)
  EXPECT_EQ(norm_scale(4.9e-324), 0x1p1022);
  EXPECT_EQ(norm_scale(DBL_MIN / 8), 0x1p1022);
  EXPECT_EQ(norm_scale(DBL_MAX), 0x1p-1022);
  std::vector<double> s(3, 1.0), r = {4.9e-324, -2 * 4.9e-324, 0.0}, h = {DBL_MAX, -DBL_MAX / 2, 0.0};
  EXPECT_EQ(entry_norm(s.data(), r.data(), 3), std::sqrt(5.0) * 4.9e-324);
  EXPECT_TRUE(std::isinf(entry_norm(s.data(), h.data(), 2))); // sqrt(1.25) DBL_MAX
  h                      = {DBL_MAX / 2, -DBL_MAX / 4, 0.0};
  std::vector<double> hd = {std::ldexp(DBL_MAX / 2, -1022), std::ldexp(-DBL_MAX / 4, -1022), 0.0};
  EXPECT_EQ(entry_norm(s.data(), h.data(), 3), std::ldexp(plain_norm(s, hd), 1022));
}

// Random a in [-1e3, 1e3], s in [1e-3, 1e3]: the plain a * (si * sj) bit for bit.
TEST(MixedScaling, ScaledValueIsThePlainProductInTheNormalRange)
{
  Rng rng(11);
  for (int i = 0; i < 100000; ++i) {
    const double a  = (2.0 * rng.uniform() - 1.0) * std::pow(10.0, 3.0 * rng.uniform());
    const double si = std::pow(10.0, 6.0 * rng.uniform() - 3.0), sj = std::pow(10.0, 6.0 * rng.uniform() - 3.0);
    ASSERT_EQ(scaled_value(a, si, sj), a * (si * sj)) << a << " " << si << " " << sj;
  }
}

// Diagonal entries 2^-1030 (subnormal, near 1e-310): s = 2^515 and s_i s_j = 2^1030 overflows;
// diagonal entries near DBL_MAX: s_i s_j is subnormal. scaled_value gives the exact result.
TEST(MixedScaling, ScaledValueWhereTheScalingsProductLeavesTheRange)
{
  const double s = std::ldexp(1.0, 515);
  EXPECT_TRUE(std::isinf(-std::ldexp(1.0, -1031) * (s * s))); // the plain product
  EXPECT_EQ(scaled_value(-std::ldexp(1.0, -1031), s, s), -0.5);
  EXPECT_EQ(scaled_value(std::ldexp(3.0, -1033), s, s), 0.375);
  EXPECT_EQ(scaled_value(0.0, s, s), 0.0);
  // t = t1 2^-512 with a full significand: t^2 is subnormal (5 of its 53 bits lost), while the
  // value a t^2 = (a1 t1^2) 2^-4 is about 1: the same as at t1 (normal) times 2^-4, exactly
  const double t1 = 0x1.123456789abcdp-1, t = std::ldexp(t1, -512), a = std::ldexp(-1.75, 1020);
  const double want = std::ldexp(-1.75 * (t1 * t1), -4);
  EXPECT_EQ(scaled_value(a, t, t), want);
  EXPECT_NE(a * (t * t), want); // the plain product lost bits in t * t
}

TEST(MixedScaling, ScaledValueFits)
{
  const double s = std::ldexp(1.0, 515);
  EXPECT_TRUE(scaled_value_fits(1.0, 0.25));
  EXPECT_TRUE(scaled_value_fits(0.0, 0.0));
  EXPECT_TRUE(scaled_value_fits(-0.0, -0.0));
  EXPECT_TRUE(scaled_value_fits(1e-300, 4.9e-324));
  EXPECT_FALSE(scaled_value_fits(1.0, 0.0));
  EXPECT_FALSE(scaled_value_fits(1.0, std::numeric_limits<double>::infinity()));
  EXPECT_FALSE(scaled_value_fits(1.0, std::nan("")));
  EXPECT_FALSE(scaled_value_fits(-1.0, scaled_value(-1.0, s, s)));               // -2^1030
  EXPECT_FALSE(scaled_value_fits(1e-30, scaled_value(1e-30, 1.0 / s, 1.0 / s))); // 1e-30 * 2^-1030
  EXPECT_TRUE(scaled_value_fits(1.0, scaled_value(1.0, std::ldexp(1.0, 500), 1.0)));
}
