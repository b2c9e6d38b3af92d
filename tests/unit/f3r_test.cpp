// F3R inner solver, host twin (src/mixed/f3r.hpp): one solve reduces the residual of
// A_hat x = b, the Richardson weights are the running means F3R computes, r = 0 and the Jacobi
// fallback, and F3R as the preconditioner of a small FP64 FGMRES.
#include "mixed/f3r.hpp"
#include "mixed_systems.hpp"
#include "random_matrix.hpp"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <gtest/gtest.h>

using namespace pspmv;
using namespace pspmv::mixed;
using namespace pspmv_test;

namespace
{

float fp16(double x)
{
  const ValueFormat f = ValueFormat::fp16();
  EncodeStatus      st;
  return float(decode_value(f, encode_value(f, x, &st)));
}

// ||b - A_hat x|| / ||b|| after one f3r_solve on a random unit b (FP64 product with A_hat).
double one_solve_reduction(const ScaledCopy &c, const F3RParams &p, F3RState *st, uint64_t seed)
{
  const int32_t       n  = c.op.rows;
  std::vector<double> bd = random_vector(n, seed);
  const double        nb = norm2(bd);
  std::vector<float>  b(static_cast<size_t>(n)), x(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) b[size_t(i)] = float(bd[size_t(i)] / nb);
  const F3RResult res = f3r_solve(c.op, b.data(), x.data(), p, st);
  EXPECT_EQ(res.level2_steps, p.m2);
  EXPECT_EQ(res.richardson_steps, int64_t(p.m2) * p.m3 * p.m4);
  std::vector<double> xd(x.begin(), x.end()), y(static_cast<size_t>(n)), bb(b.begin(), b.end());
  packsell_spmv(c.op, xd.data(), y.data(), false);
  double s = 0.0;
  for (int32_t i = 0; i < n; ++i) s += (bb[size_t(i)] - y[size_t(i)]) * (bb[size_t(i)] - y[size_t(i)]);
  return std::sqrt(s) / norm2(bb);
}

// Right-preconditioned restarted FGMRES(restart) in FP64 on A x = b from x = 0 (the outer solver
// of F3R, here only to test the preconditioner); returns the iterations to ||r|| <= rtol ||b||
// (max_it + 1 if not reached). prec(v, z): z = M(v).
int fgmres64(const CsrMatrix &A, const std::vector<double> &b, std::vector<double> &x, double rtol, int restart, int max_it, const std::function<void(const double *, double *)> &prec)
{
  const size_t n = size_t(A.rows);
  x.assign(n, 0.0);
  const double        nb = norm2(b);
  int                 it = 0;
  std::vector<double> r(n), w(n);
  while (it < max_it) {
    pspmv::csr_spmv(A.view(), x.data(), w.data(), false);
    for (size_t i = 0; i < n; ++i) r[i] = b[i] - w[i];
    const double beta = norm2(r);
    if (beta <= rtol * nb) return it;
    std::vector<std::vector<double>> V(1, r), Z;
    for (double &e : V[0]) e /= beta;
    std::vector<std::vector<double>> H;
    std::vector<double>              cs, sn, g{beta};
    int                              j = 0;
    for (; j < restart && it < max_it; ++j, ++it) {
      Z.emplace_back(n);
      prec(V[size_t(j)].data(), Z.back().data());
      pspmv::csr_spmv(A.view(), Z.back().data(), w.data(), false);
      std::vector<double> h(size_t(j) + 2);
      for (int k = 0; k <= j; ++k) { // modified Gram-Schmidt
        double d = 0.0;
        for (size_t i = 0; i < n; ++i) d += w[i] * V[size_t(k)][i];
        h[size_t(k)] = d;
        for (size_t i = 0; i < n; ++i) w[i] -= d * V[size_t(k)][i];
      }
      h[size_t(j) + 1] = norm2(w);
      for (int k = 0; k < j; ++k) {
        const double a   = h[size_t(k)];
        h[size_t(k)]     = cs[size_t(k)] * a + sn[size_t(k)] * h[size_t(k) + 1];
        h[size_t(k) + 1] = -sn[size_t(k)] * a + cs[size_t(k)] * h[size_t(k) + 1];
      }
      const double den = std::hypot(h[size_t(j)], h[size_t(j) + 1]);
      cs.push_back(h[size_t(j)] / den);
      sn.push_back(h[size_t(j) + 1] / den);
      h[size_t(j)] = den;
      g.push_back(-sn.back() * g[size_t(j)]);
      g[size_t(j)] *= cs.back();
      const double hn = h[size_t(j) + 1];
      H.push_back(h);
      V.emplace_back(w);
      for (double &e : V.back()) e /= hn;
      if (std::fabs(g.back()) <= rtol * nb) {
        ++j, ++it;
        break;
      }
    }
    std::vector<double> y(static_cast<size_t>(j));
    for (int i = j - 1; i >= 0; --i) {
      double s = g[size_t(i)];
      for (int k = i + 1; k < j; ++k) s -= H[size_t(k)][size_t(i)] * y[size_t(k)];
      y[size_t(i)] = s / H[size_t(i)][size_t(i)];
    }
    for (int k = 0; k < j; ++k)
      for (size_t i = 0; i < n; ++i) x[i] += y[size_t(k)] * Z[size_t(k)][i];
  }
  pspmv::csr_spmv(A.view(), x.data(), w.data(), false);
  for (size_t i = 0; i < n; ++i) r[i] = b[i] - w[i];
  return norm2(r) <= rtol * nb ? it : max_it + 1;
}

} // namespace

// Worst ||b - A_hat x|| / ||b|| over 4 F3R(8,4,2) solves (random unit b each; slot 63 is a
// period call, so solves 3 and 4 run with adapted weights). Measured with g++ 12 -O2:
// laplace2d 32^2 (cond(A_hat) about 400) 1.1e-4 .. 1.7e-4, laplace3d 12^3 1.5e-7 .. 1.9e-7 (the
// FP32 floor), random SPD 2000 rows 7e-8. Bounds 1e-3 / 1e-5 / 1e-5: without the earlier
// Givens rotations on a new column 2e-2 (2-D) and 2e-3 (3-D), a wrong rotation sign of g 0.8,
// a Richardson level that drops x (x = w d) 0.2 .. 0.4, weights 1/w instead of w 0.2 (after the
// period): each fails.
double worst_reduction(const ScaledCopy &c)
{
  F3RState st;
  double   worst = 0.0;
  for (int s = 0; s < 4; ++s) worst = std::max(worst, one_solve_reduction(c, F3RParams{}, &st, 3 + uint64_t(s)));
  EXPECT_EQ(st.samples, 2); // slots 63 and 127
  return worst;
}

TEST(F3RHost, ReducesResidualLaplace2D)
{
  EXPECT_LT(worst_reduction(test_scaled_copy(laplace2d(32, 32))), 1e-3);
}

TEST(F3RHost, ReducesResidualLaplace3D)
{
  EXPECT_LT(worst_reduction(test_scaled_copy(laplace3d(12, 12, 12))), 1e-5);
}

// Non-representable values: e8m14 rounds them.
TEST(F3RHost, ReducesResidualRandomSpd)
{
  EXPECT_LT(worst_reduction(test_scaled_copy(random_spd(2000, 8, 0.05, 11))), 1e-5);
}

// The weights stay 1 until the first period completes (slot weight_period - 1), then are the
// running mean (1 + w_1 + ... + w_s) / (s + 1) of F3R (its sum and ome start at 1).
TEST(F3RHost, WeightsAdaptAfterPeriod)
{
  const ScaledCopy c = test_scaled_copy(laplace2d(32, 32));
  const F3RParams  p; // 32 slots per solve, period 64
  F3RState         st;
  f3r_reset(p, &st);
  one_solve_reduction(c, p, &st, 1);
  EXPECT_EQ(st.calls, 32);
  EXPECT_EQ(st.samples, 0);
  for (int k = 0; k < p.m4; ++k) EXPECT_EQ(st.weight[size_t(k)], 1.0f);
  one_solve_reduction(c, p, &st, 2);
  EXPECT_EQ(st.calls, 64);
  ASSERT_EQ(st.samples, 1);
  for (int k = 0; k < p.m4; ++k) {
    const double sample = st.weight_sum[size_t(k)] - 1.0;
    EXPECT_TRUE(sample > 0.1 && sample < 4.0) << k << ": " << sample;
    EXPECT_GT(std::fabs(sample - 1.0), 1e-3) << k;
    EXPECT_EQ(st.weight[size_t(k)], float(st.weight_sum[size_t(k)] / 2.0));
  }
  for (int s = 0; s < 4; ++s) one_solve_reduction(c, p, &st, 10 + uint64_t(s));
  EXPECT_EQ(st.samples, 3);
  for (int k = 0; k < p.m4; ++k) EXPECT_EQ(st.weight[size_t(k)], float(st.weight_sum[size_t(k)] / 4.0));
}

// With m2 = m3 = m4 = 1 and period 1 every solve is one period call on V_0 = b: its sample is
// (A h, h) / (A h, A h) with h = fp16(b) and A h rounded to FP16, recomputed here.
TEST(F3RHost, WeightSampleIsMinimalResidual)
{
  const ScaledCopy c = test_scaled_copy(random_spd(500, 6, 0.2, 7));
  const F3RParams  p{1, 1, 1, 1};
  F3RState         st;
  const int32_t    n   = c.op.rows;
  double           sum = 1.0;
  for (int s = 0; s < 3; ++s) {
    std::vector<double> bd = random_vector(n, 40 + uint64_t(s));
    const double        nb = norm2(bd);
    std::vector<float>  b(static_cast<size_t>(n)), x(static_cast<size_t>(n));
    std::vector<double> h(static_cast<size_t>(n)), ah(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) {
      b[size_t(i)] = float(bd[size_t(i)] / nb);
      h[size_t(i)] = fp16(b[size_t(i)]);
    }
    packsell_spmv(c.op, h.data(), ah.data(), false);
    double ad = 0.0, aa = 0.0;
    for (int32_t i = 0; i < n; ++i) {
      const double t = fp16(ah[size_t(i)]);
      ad += t * h[size_t(i)];
      aa += t * t;
    }
    sum += ad / aa;
    f3r_solve(c.op, b.data(), x.data(), p, &st);
    EXPECT_EQ(st.samples, s + 1);
    // FP32 vs FP64 sums of A h differ by a few FP32 ulps: a flipped FP16 rounding of one entry
    // moves the ratio by about 1e-3 / sqrt(n) at most.
    EXPECT_NEAR(st.weight_sum[0], sum, 1e-4 * (s + 1)) << s;
    EXPECT_NEAR(st.weight[0], sum / (s + 2), 1e-4) << s;
  }
}

// r = 0: z = 0 without a solve; the call slots still advance (the device cannot see sigma).
TEST(F3RHost, ZeroRhsGivesZero)
{
  const ScaledCopy    c = test_scaled_copy(laplace2d(8, 8));
  F3RState            st;
  InnerStats          stats;
  std::vector<double> r(64, 0.0), z(64, 7.0);
  apply_inner_f3r(c, F3RParams{}, r.data(), z.data(), &st, &stats);
  for (double v : z) EXPECT_EQ(v, 0.0);
  EXPECT_EQ(stats.applications, 1);
  EXPECT_EQ(stats.zero_rhs, 1);
  EXPECT_EQ(stats.inner_its, 0);
  EXPECT_EQ(st.calls, 32);
}

// A_hat = 0 (a zero diagonal in an exact copy): the first FGMRES(m2) column is zero, no step is
// made, and z is the Jacobi step s .* (s .* r).
TEST(F3RHost, JacobiFallbackWhenNoStep)
{
  ScaledCopy                         c;
  const int32_t                      n = 40;
  std::vector<std::vector<RowEntry>> rows(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) rows[size_t(i)].push_back({i, 0.0});
  const CsrMatrix Z = csr_from_rows(n, rows);
  c.op              = build_packsell(Z.view(), PackSellOptions{});
  for (int32_t i = 0; i < n; ++i) c.s.push_back(1.0 / (1.0 + i));
  F3RState                  st;
  InnerStats                stats;
  const std::vector<double> r = random_vector(n, 9);
  std::vector<double>       z(static_cast<size_t>(n));
  apply_inner_f3r(c, F3RParams{}, r.data(), z.data(), &st, &stats);
  for (int32_t i = 0; i < n; ++i) EXPECT_EQ(z[size_t(i)], c.s[size_t(i)] * (c.s[size_t(i)] * r[size_t(i)]));
  EXPECT_EQ(stats.jacobi_fallbacks, 1);
  EXPECT_EQ(stats.zero_rhs, 0);
}

// F3R as the preconditioner of FP64 FGMRES(30) on the unscaled matrices: 1e-10 in a few outer
// steps, against hundreds without a preconditioner. Bounds: measured outer iterations + margin.
struct OuterCase {
  const char                *name;
  std::function<CsrMatrix()> make;
  int                        max_prec_its;
};

TEST(F3RHost, OuterFgmresConverges)
{
  const std::vector<OuterCase> cases = {
    {"laplace2d_48", [] { return laplace2d(48, 48); }, 12},
    {"laplace3d_16", [] { return laplace3d(16, 16, 16); }, 8},
    {"random_spd_3000", [] { return random_spd(3000, 8, 0.02, 13); }, 8},
  };
  for (const OuterCase &k : cases) {
    const CsrMatrix           A = k.make();
    const ScaledCopy          c = test_scaled_copy(A);
    const std::vector<double> b = random_vector(A.rows, 21);
    std::vector<double>       x;
    F3RState                  st;
    InnerStats                stats;
    const F3RParams           p;
    const int                 its   = fgmres64(A, b, x, 1e-10, 30, 200, [&](const double *v, double *z) { apply_inner_f3r(c, p, v, z, &st, &stats); });
    const int                 plain = fgmres64(A, b, x, 1e-10, 30, 3000, [&](const double *v, double *z) {
      for (int32_t i = 0; i < A.rows; ++i) z[i] = v[i];
    });
    EXPECT_LE(its, k.max_prec_its) << k.name;
    EXPECT_GE(plain, 10 * its) << k.name << ": unpreconditioned " << plain << ", F3R " << its;
    EXPECT_EQ(stats.applications, its) << k.name;
    EXPECT_EQ(stats.inner_its, int64_t(its) * p.m2 * p.m3 * p.m4) << k.name;
    EXPECT_EQ(stats.jacobi_fallbacks, 0) << k.name;
    std::printf("[ F3R outer ] %s: %d FGMRES(30) iterations with F3R(8,4,2), %d without; weights %g %g\n", k.name, its, plain, double(st.weight[0]), double(st.weight[1]));
  }
}
