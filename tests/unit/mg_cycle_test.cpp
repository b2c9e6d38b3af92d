// The FP32 multigrid V-cycle on PackSELL copies (src/mixed/mg_cycle.hpp) on hierarchies
// for a 2-D variable-coefficient 5-point Laplacian (tests/support/mg_hierarchies.hpp): a 2-level one (64^2, piecewise-constant 2x2
// aggregates) and a 4-level one (127^2, bilinear interpolation), coarse operators P^T A P in FP64.
// The cycle is symmetric and positive; with the value format exact it is an FP64 reference
// V-cycle written here on the UNscaled system (Chebyshev/Jacobi, P, P^T, a Cholesky coarse solve)
// up to FP32 rounding, which checks the scaling algebra; as the mixed CG's FP32 preconditioner
// (MixedCgOperators::precondition_lowp) with e8m14 copies it needs at most 1.2x the iterations of
// FP64 PCG with the reference cycle; update_values() equals a fresh build; info(); errors; a
// null space removed from each result (set_null_space()).
#include "mixed/mg_cycle.hpp"
#include "mixed/mixed_cg.hpp"
#include "mixed/scaling.hpp"
#include "mg_hierarchies.hpp"
#include "mixed_systems.hpp"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <gtest/gtest.h>
#include <limits>
#include <map>
#include <memory>
#include <vector>

using namespace pspmv;
using namespace pspmv::mixed;
using namespace pspmv_test;

namespace
{

// The FP64 reference V-cycle on the UNscaled system: PCMG's V(m, m) with KSPCHEBYSHEV + PCJACOBI
// smoothing over [eig_lo emax_l, eig_hi emax_l] (PETSc's recurrence), R = P^T, Cholesky at level 0.
class RefCycle {
public:
  RefCycle(const Hierarchy &h, std::vector<double> emax, const MgCycleOptions &o) : h_(h), emax_(std::move(emax)), o_(o), chol_(h.A[0])
  {
    for (const CsrMatrix &A : h.A) {
      std::vector<double> d(size_t(A.rows));
      for (int32_t i = 0; i < A.rows; ++i)
        for (int32_t k = A.rowptr[size_t(i)]; k < A.rowptr[size_t(i) + 1]; ++k)
          if (A.colidx[size_t(k)] == i) d[size_t(i)] = A.values[size_t(k)];
      dinv_.push_back(std::vector<double>(d.size()));
      for (size_t i = 0; i < d.size(); ++i) dinv_.back()[i] = 1.0 / d[i];
    }
  }
  // x = V_l(b) (level l's rows)
  void vcycle(int l, const double *b, double *x) const
  {
    const CsrMatrix &A = h_.A[size_t(l)];
    const size_t     n = size_t(A.rows);
    if (l == 0) {
      chol_.solve(b, x);
      return;
    }
    smooth(l, b, x, true);
    std::vector<double> r(n), rc(size_t(h_.A[size_t(l) - 1].rows)), ec(rc.size()), t(n);
    csr_spmv(A.view(), x, r.data(), false);
    for (size_t i = 0; i < n; ++i) r[i] = b[i] - r[i];
    const CsrMatrix &P = h_.P[size_t(l)];
    std::fill(rc.begin(), rc.end(), 0.0);
    for (int32_t i = 0; i < P.rows; ++i)
      for (int32_t k = P.rowptr[size_t(i)]; k < P.rowptr[size_t(i) + 1]; ++k) rc[size_t(P.colidx[size_t(k)])] += P.values[size_t(k)] * r[size_t(i)];
    vcycle(l - 1, rc.data(), ec.data());
    csr_spmv(P.view(), ec.data(), t.data(), false);
    for (size_t i = 0; i < n; ++i) x[i] += t[i];
    smooth(l, b, x, false);
  }
  void apply(const double *b, double *x) const { vcycle(int(h_.A.size()) - 1, b, x); }
  // z_hat = S^-1 M^-1 S^-1 r_hat of the finest level (its s)
  std::vector<double> apply_scaled(const std::vector<double> &s, const float *r) const
  {
    std::vector<double> v(s.size()), u(s.size());
    for (size_t i = 0; i < s.size(); ++i) v[i] = double(r[i]) / s[i];
    apply(v.data(), u.data());
    for (size_t i = 0; i < s.size(); ++i) u[i] /= s[i];
    return u;
  }

private:
  void smooth(int l, const double *b, double *x, bool zero) const
  {
    const CsrMatrix    &A  = h_.A[size_t(l)];
    const size_t        n  = size_t(A.rows);
    const double        lo = o_.eig_lo * emax_[size_t(l)], hi = o_.eig_hi * emax_[size_t(l)];
    const double        scale = 2.0 / (hi + lo), alpha = 1.0 - scale * lo, mu = 1.0 / alpha, omegaprod = 2.0 / alpha;
    double              c[3] = {1.0, mu, 0.0};
    std::vector<double> p0(x, x + n), p1(n), p2(n), r(n);
    if (zero) std::fill(p0.begin(), p0.end(), 0.0);
    csr_spmv(A.view(), p0.data(), r.data(), false);
    for (size_t i = 0; i < n; ++i) p1[i] = p0[i] + scale * dinv_[size_t(l)][i] * (b[i] - r[i]);
    for (int k = 1; k < o_.smooth_steps; ++k) {
      c[2]               = 2.0 * mu * c[1] - c[0];
      const double omega = omegaprod * c[1] / c[2];
      csr_spmv(A.view(), p1.data(), r.data(), false);
      for (size_t i = 0; i < n; ++i) p2[i] = (1.0 - omega) * p0[i] + omega * p1[i] + omega * scale * dinv_[size_t(l)][i] * (b[i] - r[i]);
      p0.swap(p1);
      p1.swap(p2);
      c[0] = c[1];
      c[1] = c[2];
    }
    std::copy(p1.begin(), p1.end(), x);
  }

  const Hierarchy                 &h_;
  std::vector<double>              emax_;
  MgCycleOptions                   o_;
  Cholesky                         chol_;
  std::vector<std::vector<double>> dinv_;
};

double dot(const std::vector<float> &a, const std::vector<float> &b)
{
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += double(a[i]) * double(b[i]);
  return s;
}

using Coarse = std::function<void(const double *, double *)>;

std::vector<float> apply(const MgCycle &c, const std::vector<float> &r, const Coarse &coarse)
{
  std::vector<float> z(r.size());
  c.apply(r.data(), z.data(), coarse);
  return z;
}

// (y, M^-1 x) against (x, M^-1 y), relative to sqrt((x, M^-1 x) (y, M^-1 y)), and (x, M^-1 x) > 0.
void check_symmetric_positive(const MgCycle &c, const Coarse &coarse, size_t n)
{
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const std::vector<float> x = random_vector(n, seed), y = random_vector(n, seed + 100);
    const std::vector<float> Mx = apply(c, x, coarse), My = apply(c, y, coarse);
    const double             xMx = dot(x, Mx), yMy = dot(y, My), yMx = dot(y, Mx), xMy = dot(x, My);
    EXPECT_GT(xMx, 0.0);
    EXPECT_GT(yMy, 0.0);
    const double rel = std::fabs(yMx - xMy) / std::sqrt(xMx * yMy);
    std::printf("  seed %d: (x, Mx) %.6e, (y, Mx) %.9e, (x, My) %.9e, asymmetry %.2e\n", int(seed), xMx, yMx, xMy, rel);
    EXPECT_LT(rel, 1e-5);
  }
}

// ||z - z_ref|| / ||z_ref|| of the cycle with the value format exact against the FP64 reference.
double reference_error(const Hierarchy &h, const MgCycle &c, const RefCycle &ref, const Coarse &coarse, uint64_t seed)
{
  const size_t              n  = size_t(h.A.back().rows);
  const std::vector<float>  r  = random_vector(n, seed);
  const std::vector<float>  z  = apply(c, r, coarse);
  const std::vector<double> zr = ref.apply_scaled(c.scaling(c.num_levels() - 1), r.data());
  double                    e = 0.0, nz = 0.0;
  for (size_t i = 0; i < n; ++i) {
    e += (double(z[i]) - zr[i]) * (double(z[i]) - zr[i]);
    nz += zr[i] * zr[i];
  }
  return std::sqrt(e / nz);
}

// The mixed CG with the FP32 cycle (e8m14) as precondition_lowp and the FP64 reference cycle (the
// same intervals) as precondition, against FP64 PCG with the reference cycle.
void check_mixed_cg(const Hierarchy &h, const char *name)
{
  const MgCycleOptions      o     = options("e8m14");
  const MgCycle             cycle = MgCycle::build(inputs(h), o);
  const RefCycle            ref(h, emax_of(cycle), o);
  const Cholesky            chol(h.A[0]);
  const Coarse              coarse = [&](const double *b, double *x) { chol.solve(b, x); };
  const CsrMatrix          &A      = h.A.back();
  const size_t              n      = size_t(A.rows);
  const std::vector<double> b      = sin_rhs(A);

  std::vector<double> xp;
  const int64_t       pcg_its = fp64_pcg(
          A, b, [&](const double *v, double *u) { ref.apply(v, u); }, 1e-8, 1000, &xp);
  const double pcg_rel = residual_norm(A, b.data(), xp.data()) / norm2(b);

  const ScaledCopy op = test_scaled_copy(A, "e8m14");
  ASSERT_EQ(op.s, cycle.scaling(cycle.num_levels() - 1)); // the cycle's finest s is the mixed CG's
  int64_t          fp64_calls = 0;
  MixedCgOperators ops;
  ops.lowp_product  = [&](const float *p, float *w) { packsell_spmv_f32(op.op, p, w); };
  ops.exact_product = [&](const double *x, double *y) { csr_spmv(A.view(), x, y, false); };
  ops.precondition  = [&](const double *v, double *u) {
    ++fp64_calls;
    ref.apply(v, u);
  };
  ops.precondition_lowp = [&](const float *r, float *z) { cycle.apply(r, z, coarse); };
  std::vector<double> x(n, 0.0);
  const MixedCgResult res      = mixed_cg(n, op.s.data(), b.data(), x.data(), MixedCgParams{}, ops);
  const double        true_rel = residual_norm(A, b.data(), x.data()) / norm2(b);
  std::printf("%s: mixed CG + FP32 V-cycle (e8m14) %lld its (%lld low precision, %lld reliable updates, %d raises, fp64 %d, %lld FP32 / %lld FP64 cycles), true residual %.3e; FP64 PCG + FP64 V-cycle %lld its (%.3e); ratio %.3f\n", name,
              (long long)res.its, (long long)res.lowp_its, (long long)res.reliable_updates, res.raises, int(res.fp64), (long long)res.pc_lowp_applications, (long long)fp64_calls, true_rel, (long long)pcg_its, pcg_rel, double(res.its) / double(pcg_its));
  for (const MgLevelInfo &i : cycle.info())
    std::printf("  level: %lld rows, %lld nnz, %s, %.2f B/nnz, emax %.4f, P %lld nnz %.2f B/nnz\n", (long long)i.rows, (long long)i.nnz, i.value_format.c_str(), i.bytes_per_nnz, i.emax, (long long)i.p_nnz, i.p_bytes_per_nnz);
  EXPECT_EQ(res.reason, MixedCgReason::ConvergedRtol);
  EXPECT_LE(true_rel, 1e-8);
  EXPECT_FALSE(res.fp64);
  EXPECT_GT(res.pc_lowp_applications, 0);
  EXPECT_EQ(res.pc_applications, res.pc_lowp_applications + fp64_calls);
  EXPECT_LE(double(res.its), 1.2 * double(pcg_its));
}

} // namespace

TEST(MgCycle, SymmetricPositiveTwoLevel)
{
  const Hierarchy h     = two_level();
  const MgCycle   cycle = MgCycle::build(inputs(h), options("e8m14"));
  const Cholesky  chol(h.A[0]);
  check_symmetric_positive(
    cycle, [&](const double *b, double *x) { chol.solve(b, x); }, size_t(h.A.back().rows));
}

TEST(MgCycle, SymmetricPositiveFourLevel)
{
  const Hierarchy h     = four_level();
  const MgCycle   cycle = MgCycle::build(inputs(h), options("e8m14"));
  const Cholesky  chol(h.A[0]);
  check_symmetric_positive(
    cycle, [&](const double *b, double *x) { chol.solve(b, x); }, size_t(h.A.back().rows));
}

// With the value format exact (values rounded to FP32 in the product) the scaled FP32 cycle is the
// unscaled FP64 reference cycle: z_hat = S^-1 M^-1 S^-1 r_hat.
TEST(MgCycle, ExactFormatMatchesFp64ReferenceTwoLevel)
{
  const Hierarchy      h     = two_level();
  const MgCycleOptions o     = options("exact");
  const MgCycle        cycle = MgCycle::build(inputs(h), o);
  const RefCycle       ref(h, emax_of(cycle), o);
  const Cholesky       chol(h.A[0]);
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    const double e = reference_error(
      h, cycle, ref, [&](const double *b, double *x) { chol.solve(b, x); }, seed);
    std::printf("  2 levels, seed %d: relative difference to the FP64 reference %.2e\n", int(seed), e);
    EXPECT_LT(e, 1e-5);
  }
}

TEST(MgCycle, ExactFormatMatchesFp64ReferenceFourLevel)
{
  const Hierarchy      h     = four_level();
  const MgCycleOptions o     = options("exact");
  const MgCycle        cycle = MgCycle::build(inputs(h), o);
  const RefCycle       ref(h, emax_of(cycle), o);
  const Cholesky       chol(h.A[0]);
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    const double e = reference_error(
      h, cycle, ref, [&](const double *b, double *x) { chol.solve(b, x); }, seed);
    std::printf("  4 levels, seed %d: relative difference to the FP64 reference %.2e\n", int(seed), e);
    EXPECT_LT(e, 1e-5);
  }
  // degree 3 and a given emax (no estimate): the same
  MgCycleOptions o3   = o;
  o3.smooth_steps     = 3;
  const auto     emax = emax_of(cycle);
  const MgCycle  c3   = MgCycle::build(inputs(h, emax), o3);
  const RefCycle ref3(h, emax, o3);
  EXPECT_EQ(emax_of(c3), emax);
  const double e = reference_error(
    h, c3, ref3, [&](const double *b, double *x) { chol.solve(b, x); }, 7);
  std::printf("  4 levels, degree 3: %.2e\n", e);
  EXPECT_LT(e, 1e-5);
}

// fp32_min_rows hands level 1 (961 rows) to the coarse solve: the caller's FP64 V-cycle of levels
// 0-1 there, and the whole is the FP64 reference cycle.
TEST(MgCycle, Fp32MinRowsHandsLevelsToTheCoarseSolve)
{
  const Hierarchy h   = four_level();
  MgCycleOptions  o   = options("exact");
  o.fp32_min_rows     = 1000;
  const MgCycle full  = MgCycle::build(inputs(h), options("exact"));
  const auto    emax  = emax_of(full);
  const MgCycle cycle = MgCycle::build(inputs(h, emax), o);
  EXPECT_EQ(cycle.coarse_level(), 1);
  const std::vector<MgLevelInfo> info = cycle.info();
  EXPECT_FALSE(info[0].lowp);
  EXPECT_FALSE(info[1].lowp);
  EXPECT_TRUE(info[2].lowp);
  EXPECT_EQ(info[1].value_format, "fp64");
  EXPECT_TRUE(cycle.scaling(0).empty());
  EXPECT_EQ(cycle.scaling(1), pspmv::mixed::detail::diagonal_scaling(h.A[1].view()));
  const RefCycle ref(h, emax, o);
  const double   e = reference_error(
      h, cycle, ref, [&](const double *b, double *x) { ref.vcycle(1, b, x); }, 3);
  std::printf("  coarse level 1: relative difference to the FP64 reference %.2e\n", e);
  EXPECT_LT(e, 1e-5);
  check_symmetric_positive(
    cycle, [&](const double *b, double *x) { ref.vcycle(1, b, x); }, size_t(h.A.back().rows));
  // every level below the limit: the cycle is the coarse solve of the finest level, scaled
  o.fp32_min_rows   = 1 << 30;
  const MgCycle all = MgCycle::build(inputs(h, emax), o);
  EXPECT_EQ(all.coarse_level(), 3);
  const double e_all = reference_error(
    h, all, ref, [&](const double *b, double *x) { ref.apply(b, x); }, 4);
  EXPECT_LT(e_all, 1e-6);
}

TEST(MgCycle, MixedCgTwoLevel)
{
  check_mixed_cg(two_level(), "2 levels (64^2, 2x2 aggregates)");
}

TEST(MgCycle, MixedCgFourLevel)
{
  check_mixed_cg(four_level(), "4 levels (127^2, bilinear)");
}

// update_values() with new values of the same patterns gives the fresh build's cycle bit for
// bit (emax re-estimated); a different pattern is refused and leaves the cycle as it was.
TEST(MgCycle, UpdateValuesEqualsFreshBuild)
{
  for (int levels : {2, 4}) {
    const Hierarchy          h1      = levels == 2 ? two_level() : four_level();
    const Hierarchy          h2      = levels == 2 ? two_level(coefficient2) : four_level(coefficient2);
    MgCycle                  updated = MgCycle::build(inputs(h1), options("e8m14"));
    const MgCycle            fresh   = MgCycle::build(inputs(h2), options("e8m14"));
    const Cholesky           chol(h2.A[0]);
    const Coarse             coarse   = [&](const double *b, double *x) { chol.solve(b, x); };
    const std::vector<float> r        = random_vector(size_t(h2.A.back().rows), 11);
    const std::vector<float> z_before = apply(updated, r, coarse);
    updated.update_values(inputs(h2));
    EXPECT_EQ(emax_of(updated), emax_of(fresh));
    EXPECT_NE(emax_of(updated), emax_of(MgCycle::build(inputs(h1), options("e8m14"))));
    for (int l = 0; l < levels; ++l) EXPECT_EQ(updated.scaling(l), fresh.scaling(l));
    const std::vector<float> zu = apply(updated, r, coarse), zf = apply(fresh, r, coarse);
    EXPECT_EQ(0, std::memcmp(zu.data(), zf.data(), zu.size() * sizeof(float))) << levels << " levels";
    EXPECT_NE(0, std::memcmp(zu.data(), z_before.data(), zu.size() * sizeof(float)));
    // a given emax is kept
    std::vector<double> e = emax_of(fresh);
    for (double &v : e) v *= 1.05;
    updated.update_values(inputs(h2, e));
    EXPECT_EQ(emax_of(updated), e);
    updated.update_values(inputs(h2));
    // another pattern: refused, the cycle unchanged
    Hierarchy bad = h2;
    bad.A.back()  = multiply(bad.A.back(), bad.A.back()); // A^2: more nonzeros per row
    EXPECT_THROW(updated.update_values(inputs(bad)), FormatError);
    const std::vector<float> za = apply(updated, r, coarse);
    EXPECT_EQ(0, std::memcmp(za.data(), zf.data(), za.size() * sizeof(float)));
  }
}

// fp16 copies: P_hat is stored with a scale exponent (scaling auto), A_hat as it is; on this
// hierarchy every value lies in fp16's normal range, so the cycle is e8m10's (the same 10-bit
// mantissa) bit for bit. bf16 copies: symmetric and positive.
TEST(MgCycle, Fp16CopiesAsE8m10)
{
  const Hierarchy          h = four_level();
  const Cholesky           chol(h.A[0]);
  const Coarse             coarse = [&](const double *b, double *x) { chol.solve(b, x); };
  const MgCycle            c16 = MgCycle::build(inputs(h), options("fp16")), c10 = MgCycle::build(inputs(h), options("e8m10"));
  const std::vector<float> r   = random_vector(size_t(h.A.back().rows), 5);
  const std::vector<float> z16 = apply(c16, r, coarse), z10 = apply(c10, r, coarse);
  EXPECT_EQ(0, std::memcmp(z16.data(), z10.data(), z16.size() * sizeof(float)));
  EXPECT_EQ(c16.info()[3].value_format, "fp16");
  check_symmetric_positive(MgCycle::build(inputs(h), options("bf16")), coarse, size_t(h.A.back().rows));
}

TEST(MgCycle, Info)
{
  const Hierarchy                h = four_level();
  const MgCycleOptions           o; // the default: e8m14 copies
  const MgCycle                  cycle = MgCycle::build(inputs(h), o);
  const std::vector<MgLevelInfo> info  = cycle.info();
  EXPECT_EQ(o.level_options.value_format.name(), "e8m14");
  ASSERT_EQ(info.size(), 4u);
  EXPECT_EQ(cycle.coarse_level(), 0);
  for (size_t l = 0; l < info.size(); ++l) {
    EXPECT_EQ(info[l].rows, h.A[l].rows);
    EXPECT_EQ(info[l].nnz, h.A[l].nnz());
    if (l == 0) {
      EXPECT_FALSE(info[l].lowp);
      EXPECT_EQ(info[l].value_format, "fp64");
      EXPECT_EQ(info[l].bytes_per_nnz, 0.0);
      continue;
    }
    EXPECT_TRUE(info[l].lowp);
    EXPECT_GT(info[l].emax, 1.0); // D^-1 A of these levels: emax in (1, 2]
    EXPECT_LE(info[l].emax, 2.0);
    EXPECT_EQ(info[l].value_format, "e8m14");
    const ScaledCopy c = build_scaled_copy(h.A[l].view(), o.level_options);
    EXPECT_EQ(info[l].bytes_per_nnz, double(c.op.stats().stored_bytes) / double(h.A[l].nnz()));
    EXPECT_GE(info[l].bytes_per_nnz, 4.0); // a 32-bit word per nonzero, and the layout's overhead
    EXPECT_LT(info[l].bytes_per_nnz, 8.0);
    EXPECT_EQ(info[l].p_nnz, h.P[l].nnz());
    EXPECT_GE(info[l].p_bytes_per_nnz, 8.0); // P_hat and its transpose
    EXPECT_LT(info[l].p_bytes_per_nnz, 16.0);
  }
  EXPECT_EQ(cycle.scaling(3), build_scaled_copy(h.A[3].view(), o.level_options).s);
  EXPECT_THROW(cycle.scaling(4), std::out_of_range);
  // the value format exact: an FP64 value per word
  const std::vector<MgLevelInfo> ex = MgCycle::build(inputs(h), options("exact")).info();
  EXPECT_EQ(ex[3].value_format, "exact");
  EXPECT_GE(ex[3].bytes_per_nnz, 12.0);
}

TEST(MgCycle, Errors)
{
  const Hierarchy h = four_level();
  // a zero diagonal entry on level 2: DiagonalError with its row, the level named
  Hierarchy bad = h;
  for (int32_t k = bad.A[2].rowptr[5]; k < bad.A[2].rowptr[6]; ++k)
    if (bad.A[2].colidx[size_t(k)] == 5) bad.A[2].values[size_t(k)] = 0.0;
  try {
    (void)MgCycle::build(inputs(bad), MgCycleOptions{});
    ADD_FAILURE() << "no DiagonalError";
  } catch (const DiagonalError &e) {
    EXPECT_EQ(e.row, 5);
    EXPECT_NE(std::string(e.what()).find("multigrid level 2 of 4"), std::string::npos) << e.what();
  }
  // an interpolation of the wrong shape
  std::vector<MgLevelInput> in = inputs(h);
  in[2].P                      = h.P[3].view();
  EXPECT_THROW((void)MgCycle::build(in, MgCycleOptions{}), FormatError);
  // a non-finite interpolation entry: ValueRangeError at its row and column
  Hierarchy nan      = h;
  nan.P[1].values[3] = NAN;
  try {
    (void)MgCycle::build(inputs(nan), MgCycleOptions{});
    ADD_FAILURE() << "no ValueRangeError";
  } catch (const ValueRangeError &e) {
    int32_t row = 0;
    while (nan.P[1].rowptr[size_t(row) + 1] <= 3) ++row;
    EXPECT_EQ(e.row, row);
    EXPECT_EQ(e.col, nan.P[1].colidx[3]);
    EXPECT_NE(std::string(e.what()).find("multigrid level 1 of 4"), std::string::npos) << e.what();
  }
  // options and emax
  MgCycleOptions o = MgCycleOptions{};
  o.smooth_steps   = 0;
  EXPECT_THROW((void)MgCycle::build(inputs(h), o), FormatError);
  o        = MgCycleOptions{};
  o.eig_lo = 1.2;
  EXPECT_THROW((void)MgCycle::build(inputs(h), o), FormatError);
  EXPECT_THROW((void)MgCycle::build(inputs(h, {1.0, -1.0, 1.0, 1.0}), MgCycleOptions{}), FormatError);
  EXPECT_THROW((void)MgCycle::build({}, MgCycleOptions{}), FormatError);
  // a negated level: its diagonal is negative
  Hierarchy neg = h;
  for (double &v : neg.A[3].values) v = -v;
  EXPECT_THROW((void)MgCycle::build(inputs(neg), MgCycleOptions{}), DiagonalError);
}

// The coarse level solved by its dense inverse (MgLevelInput::inverse): the same cycle as with the
// coarse hook solving by Cholesky, up to rounding; the hook is not called; info() says so;
// update_values() keeps it; a non-finite inverse is refused.
TEST(MgCycle, DenseCoarseInverse)
{
  const Hierarchy     h = four_level();
  const Cholesky      chol(h.A[0]);
  const size_t        n0 = size_t(h.A[0].rows);
  std::vector<double> inv(n0 * n0), e(n0);
  for (size_t j = 0; j < n0; ++j) { // column j of A_0^-1 (symmetric: row j)
    std::fill(e.begin(), e.end(), 0.0);
    e[j] = 1.0;
    chol.solve(e.data(), inv.data() + j * n0);
  }
  const MgCycleOptions      o    = options("e8m14");
  const MgCycle             hook = MgCycle::build(inputs(h), o);
  std::vector<MgLevelInput> in   = inputs(h, emax_of(hook));
  in[0].inverse                  = inv.data();
  MgCycle dense                  = MgCycle::build(in, o);
  EXPECT_TRUE(dense.info()[0].dense_inverse);
  EXPECT_FALSE(hook.info()[0].dense_inverse);
  const std::vector<float> r  = random_vector(size_t(h.A.back().rows), 21);
  const std::vector<float> zh = apply(hook, r, [&](const double *b, double *x) { chol.solve(b, x); });
  std::vector<float>       zd(r.size());
  dense.apply(r.data(), zd.data()); // no hook
  double num = 0, den = 0;
  for (size_t i = 0; i < zh.size(); ++i) {
    num += double(zh[i] - zd[i]) * double(zh[i] - zd[i]);
    den += double(zh[i]) * double(zh[i]);
  }
  EXPECT_LT(std::sqrt(num / den), 1e-6);
  dense.update_values(in);
  std::vector<float> zu(r.size());
  dense.apply(r.data(), zu.data());
  EXPECT_EQ(0, std::memcmp(zu.data(), zd.data(), zu.size() * sizeof(float)));
  inv[3] = std::numeric_limits<double>::infinity();
  EXPECT_THROW(MgCycle::build(in, o), FormatError);
}

// The null space removed from every apply()'s z (set_null_space()), as KSP removes it from
// PCApply()'s: with the constant (1/sqrt(n)) and a second orthonormal vector (a sine), the
// unscaled u = S z is orthogonal to both (|(n_k, u)| <= 1e-6 ||u||, from the FP32 z), and z is
// the plain cycle's z with those components taken out (within FP32's rounding); kept by
// update_values() (with the new s); cleared by an empty basis; a vector of another length or with
// a NaN refused (FormatError), the projection unchanged.
TEST(MgCycle, NullSpaceRemoved)
{
  const Hierarchy     h  = four_level();
  const Hierarchy     h2 = four_level(coefficient2);
  const size_t        n  = size_t(h.A.back().rows);
  const Cholesky      chol(h.A[0]), chol2(h2.A[0]);
  std::vector<double> c(n, 1.0 / std::sqrt(double(n))), v(n);
  double              vv = 0.0, vc = 0.0;
  for (size_t i = 0; i < n; ++i) vc += (v[i] = std::sin(0.37 * double(i)));
  for (size_t i = 0; i < n; ++i) vv += (v[i] -= vc / double(n)) * v[i]; // orthogonal to the constant
  for (double &x : v) x /= std::sqrt(vv);
  const std::vector<std::vector<double>> basis  = {c, v};
  MgCycle                                cycle  = MgCycle::build(inputs(h), options("e8m14"));
  const Coarse                           coarse = [&](const double *b, double *x) { chol.solve(b, x); };
  std::vector<float>                     r      = random_vector(n, 5);
  for (size_t i = 0; i < n; ++i) r[i] += float(1.0 + 0.5 * std::sqrt(double(n)) * v[i]); // components along both
  const std::vector<float> plain = apply(cycle, r, coarse);
  auto                     check = [&](const MgCycle &cy, const std::vector<float> &z, const std::vector<float> &zplain, const char *what) {
    const std::vector<double> &s = cy.scaling(cy.num_levels() - 1);
    std::vector<double>        want(zplain.begin(), zplain.end());
    double                     uu = 0.0, wmax = 0.0;
    for (size_t i = 0; i < n; ++i) uu += (s[i] * z[i]) * (s[i] * z[i]);
    for (const std::vector<double> &b : basis) {
      double d = 0.0, dp = 0.0;
      for (size_t i = 0; i < n; ++i) {
        d += b[i] * s[i] * double(z[i]);
        dp += b[i] * s[i] * double(zplain[i]);
      }
      EXPECT_LE(std::fabs(d), 1e-6 * std::sqrt(uu)) << what;
      EXPECT_GT(std::fabs(dp), 1e-5 * std::sqrt(uu)) << what; // there was something to remove (tenfold the tolerance)
      for (size_t i = 0; i < n; ++i) want[i] -= dp * b[i] / s[i];
    }
    for (double w : want) wmax = std::max(wmax, std::fabs(w));
    for (size_t i = 0; i < n; ++i) EXPECT_NEAR(double(z[i]), want[i], 1e-6 * wmax) << what << " row " << i;
  };
  cycle.set_null_space(basis);
  check(cycle, apply(cycle, r, coarse), plain, "set");
  EXPECT_THROW(cycle.set_null_space({std::vector<double>(n - 1, 0.0)}), FormatError);
  std::vector<double> nan = c;
  nan[7]                  = NAN;
  EXPECT_THROW(cycle.set_null_space({nan}), FormatError);
  check(cycle, apply(cycle, r, coarse), plain, "after refusals");
  cycle.update_values(inputs(h2));
  const Coarse  coarse2 = [&](const double *b, double *x) { chol2.solve(b, x); };
  const MgCycle fresh   = MgCycle::build(inputs(h2), options("e8m14"));
  check(cycle, apply(cycle, r, coarse2), apply(fresh, r, coarse2), "after update_values");
  cycle.set_null_space({});
  const std::vector<float> cleared = apply(cycle, r, coarse2), freshz = apply(fresh, r, coarse2);
  EXPECT_EQ(0, std::memcmp(cleared.data(), freshz.data(), n * sizeof(float)));
}
