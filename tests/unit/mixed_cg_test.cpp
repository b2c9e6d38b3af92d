// Mixed-precision CG with reliable updates, host twin (src/mixed/mixed_cg.hpp): iterations close
// to FP64 CG + Jacobi on a 3-D Laplacian and on structural matrices, convergence judged on the
// FP64 true residual, the count of reliable updates against delta, the guard raising the
// operator's precision where the copy is too coarse (and FP64 CG as the last step), an
// indefinite matrix refused, the guard's verdicts.
#include "mixed/mixed_cg.hpp"
#include "mixed/scaling.hpp"
#include "matrix_market.hpp"
#include "mixed_systems.hpp"
#include "random_matrix.hpp"
#include <cmath>
#include <cstdio>
#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace pspmv;
using namespace pspmv::mixed;
using namespace pspmv_test;

namespace
{

// FP64 CG + Jacobi (PETSc's KSPCG with PCJACOBI and the unpreconditioned norm: the recurred
// residual ||r|| <= rtol ||b||, x_0 = 0); returns the iterations.
int64_t fp64_pcg(const CsrMatrix &A, const std::vector<double> &b, double rtol, int64_t max_it)
{
  const size_t        n = size_t(A.rows);
  std::vector<double> x(n, 0.0), r = b, z(n), p(n), w(n), d(n);
  for (int32_t i = 0; i < A.rows; ++i)
    for (int32_t k = A.rowptr[size_t(i)]; k < A.rowptr[size_t(i) + 1]; ++k)
      if (A.colidx[size_t(k)] == i) d[size_t(i)] = A.values[size_t(k)];
  const double nb = norm2(b);
  for (size_t i = 0; i < n; ++i) p[i] = z[i] = r[i] / d[i];
  double rz = 0;
  for (size_t i = 0; i < n; ++i) rz += r[i] * z[i];
  for (int64_t it = 0; it < max_it; ++it) {
    if (norm2(r) <= rtol * nb) return it;
    csr_spmv(A.view(), p.data(), w.data(), false);
    double pw = 0;
    for (size_t i = 0; i < n; ++i) pw += p[i] * w[i];
    const double alpha = rz / pw;
    for (size_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * w[i];
      z[i] = r[i] / d[i];
    }
    double rz2 = 0;
    for (size_t i = 0; i < n; ++i) rz2 += r[i] * z[i];
    for (size_t i = 0; i < n; ++i) p[i] = z[i] + (rz2 / rz) * p[i];
    rz = rz2;
  }
  return max_it + 1;
}

// A solve of A x = b from x = 0 with the scaled copies of the formats in `ladder` (the first is
// the start, each raise takes the next; past the last: FP64).
struct Solve {
  MixedCgResult       res;
  std::vector<double> x;
  double              true_rel     = 0; // ||b - A x|| / ||b|| recomputed here
  int                 formats_used = 1;
};

// The copy KSPMIXEDCG builds: dithered rounding (CopyDither) unless asked otherwise.
ScaledCopy copy_of(const CsrMatrix &A, const std::string &format, bool dither)
{
  PackSellOptions o;
  o.value_format = ValueFormat::parse(format);
  return build_scaled_copy(A.view(), o, CopyDither{dither, 0});
}

struct CopyFlags {
  bool compensate = true, dither = true;
};

Solve solve(const CsrMatrix &A, const std::vector<double> &b, const std::vector<std::string> &ladder, MixedCgParams p, CopyFlags flags = CopyFlags{})
{
  const bool                compensate = flags.compensate;
  Solve                     out;
  size_t                    level = 0;
  ScaledCopy                c     = copy_of(A, ladder[0], flags.dither);
  const std::vector<double> s     = c.s;
  std::vector<float>        comp  = compensate ? copy_compensation(A, c) : std::vector<float>(s.size(), 0.0f);
  MixedCgOperators          ops;
  ops.lowp_product = [&](const float *x, float *y) {
    packsell_spmv_f32(c.op, x, y);
    for (size_t i = 0; i < comp.size(); ++i) y[i] = std::fma(comp[i], x[i], y[i]);
  };
  ops.exact_product   = [&](const double *x, double *y) { csr_spmv(A.view(), x, y, false); };
  ops.raise_precision = [&]() {
    if (level + 1 >= ladder.size()) return false;
    c = copy_of(A, ladder[++level], flags.dither);
    if (compensate) comp = copy_compensation(A, c);
    ++out.formats_used;
    return true;
  };
  out.x.assign(size_t(A.rows), 0.0);
  out.res      = mixed_cg(size_t(A.rows), s.data(), b.data(), out.x.data(), p, ops);
  out.true_rel = residual_norm(A, b.data(), out.x.data()) / norm2(b);
  return out;
}

void report(const char *what, const Solve &s, int64_t fp64)
{
  std::printf("%s: %lld its (FP64 CG + Jacobi %lld, %.3fx), %lld low precision, %lld reliable updates, %d raises, fp64 %d, true residual %.3e\n", what, (long long)s.res.its, (long long)fp64, double(s.res.its) / double(fp64), (long long)s.res.lowp_its,
              (long long)s.res.reliable_updates, s.res.raises, int(s.res.fp64), s.true_rel);
}

CsrMatrix shared_matrix(const std::string &file)
{
  return read_matrix_market(std::string(PETSCSPMV_MATRIX_DIR) + "/" + file);
}

// The scaled value a_ij s_i s_j of entry (i, j) of A (0 when not stored).
double scaling_value(const CsrMatrix &A, const std::vector<double> &s, int32_t i, int32_t j)
{
  for (int32_t k = A.rowptr[size_t(i)]; k < A.rowptr[size_t(i) + 1]; ++k)
    if (A.colidx[size_t(k)] == j) return scaled_value(A.values[size_t(k)], s[size_t(i)], s[size_t(j)]);
  return 0.0;
}

} // namespace

TEST(MixedCgGuard, LossySegmentVerdicts)
{
  EXPECT_FALSE(lossy_segment(0.1, 0.1, 1e-3, 1.5, 0.05)); // the true residual followed the iterated one
  EXPECT_FALSE(lossy_segment(0.1, 0.2, 1e-3, 1.5, 0.05)); // log 0.1 / log 0.2 = 1.43 times the iterations per decade
  EXPECT_TRUE(lossy_segment(0.1, 0.3, 1e-3, 1.5, 0.05));  // 1.91 times
  EXPECT_TRUE(lossy_segment(0.1, 1.2, 1e-3, 1.5, 0.05));  // the true residual grew
  EXPECT_TRUE(lossy_segment(0.1, std::nan(""), 1e-3, 1.5, 0.05));
  EXPECT_TRUE(lossy_segment(0.1, 0.1, 0.2, 1.5, 0.05)); // departed from the iterated one
  EXPECT_TRUE(lossy_segment(0.1, 0.1, std::nan(""), 1.5, 0.05));
  EXPECT_FALSE(lossy_segment(0.1, 0.1, 0.2, 1.5, 0.0));   // departure test off
  EXPECT_FALSE(lossy_segment(1.0, 2.0, 1e-3, 1.5, 0.05)); // no iterated progress: nothing to judge
  EXPECT_FALSE(lossy_segment(0.1, 0.5, 1e-3, 0.0, 0.05)); // rate test off
  EXPECT_TRUE(lossy_segment(0.1, 1.5, 1e-3, 0.0, 0.0));   // growth always counts

  // segments too short to judge (f_iter above judge_below = min(sqrt(delta), 1/2)): the growth and
  // rate tests are noise there, the departure test still applies
  const double jb = guard_judge_below(0.1);
  EXPECT_NEAR(jb, std::sqrt(0.1), 1e-15);
  EXPECT_EQ(guard_judge_below(0.5), 0.5);
  EXPECT_TRUE(lossy_segment(0.3, 1.01, 1e-3, 1.5, 0.05, jb));  // long enough: growth counts
  EXPECT_FALSE(lossy_segment(0.9, 1.01, 1e-3, 1.5, 0.05, jb)); // one step near the target: not judged
  EXPECT_FALSE(lossy_segment(0.9, 0.97, 1e-3, 1.5, 0.05, jb)); // rate 3.5, noise
  EXPECT_TRUE(lossy_segment(0.9, 0.9, 0.2, 1.5, 0.05, jb));    // a departure is judged at any length
  {
    PrecisionGuard s;
    s.judge_below = jb;
    bool l        = false;
    EXPECT_FALSE(s.update(0.1, 0.5, 0.0, &l)); // one rate strike
    EXPECT_TRUE(l);
    EXPECT_FALSE(s.update(0.95, 1.2, 0.0, &l)); // short: no verdict, the strike count kept
    EXPECT_FALSE(l);
    EXPECT_EQ(s.in_row, 1);
    EXPECT_TRUE(s.update(0.1, 0.5, 0.0, &l)); // the second strike in a row
  }

  PrecisionGuard g;
  g.ratio     = 1.5;
  g.departure = 0.05;
  g.strikes   = 2;
  bool lossy  = false;
  EXPECT_FALSE(g.update(0.1, 0.5, 0.0, &lossy));
  EXPECT_TRUE(lossy);
  EXPECT_FALSE(g.update(0.1, 0.1, 0.0, &lossy)); // a good segment resets the count
  EXPECT_FALSE(lossy);
  EXPECT_FALSE(g.update(0.1, 0.5, 0.0, &lossy));
  EXPECT_TRUE(g.update(0.1, 0.5, 0.0, &lossy));  // two lossy segments in a row
  EXPECT_FALSE(g.update(0.1, 0.5, 0.0, &lossy)); // counted afresh after a raise
  EXPECT_TRUE(g.update(0.1, 1.1, 0.0, &lossy));  // growth raises at once
  EXPECT_TRUE(g.update(0.1, 0.1, 0.3, &lossy));  // and so does a departure
}

// PETSc's ksp tutorial ex45 on a 32^3 grid: Dirichlet rows kept in the matrix (a boundary row
// holds only its diagonal 6h, while the interior rows next to it keep their -h couplings to the
// boundary columns), so A and A_hat are not symmetric; b as ex45 (6h on the boundary, h^3 inside).
// CG's (r', r) is then not 0 and Polak-Ribiere's beta (r', r' - r) / (r, r) is not
// Fletcher-Reeves' (r', r') / (r, r), the beta of FP64 CG + Jacobi (PETSc's KSPCG): with it the
// mixed solve took 133 steps against CG's 104 (1.28x; 64^3: 232 against 188), with FP64 vectors
// and the exact matrix as well. Fletcher-Reeves' beta: CG's steps.
TEST(MixedCg, DirichletRowsKeptCloseToFp64)
{
  const int32_t m = 32, n = m * m * m;
  const double  h = 1.0 / double(m - 1);
  CsrMatrix     A;
  A.rows = A.cols = n;
  std::vector<double> b(static_cast<size_t>(n), 0.0);
  auto                at = [m](int32_t i, int32_t j, int32_t k) { return i + m * (j + m * k); };
  for (int32_t k = 0; k < m; ++k)
    for (int32_t j = 0; j < m; ++j)
      for (int32_t i = 0; i < m; ++i) {
        const int32_t r   = at(i, j, k);
        auto          add = [&](int32_t c, double v) {
          A.colidx.push_back(c);
          A.values.push_back(v);
        };
        if (i == 0 || j == 0 || k == 0 || i == m - 1 || j == m - 1 || k == m - 1) {
          add(r, 6.0 * h);
          b[size_t(r)] = 6.0 * h;
        } else {
          add(at(i, j, k - 1), -h);
          add(at(i, j - 1, k), -h);
          add(at(i - 1, j, k), -h);
          add(r, 6.0 * h);
          add(at(i + 1, j, k), -h);
          add(at(i, j + 1, k), -h);
          add(at(i, j, k + 1), -h);
          b[size_t(r)] = h * h * h;
        }
        A.rowptr.push_back(int32_t(A.colidx.size()));
      }
  MixedCgParams p;
  p.rtol            = 1e-8;
  const int64_t ref = fp64_pcg(A, b, 1e-8, 10000);
  for (const char *f : {"e8m14", "e8m22"}) {
    const Solve s = solve(A, b, {f, "e8m22"}, p);
    report((std::string("ex45 32^3 ") + f).c_str(), s, ref);
    EXPECT_EQ(s.res.reason, MixedCgReason::ConvergedRtol) << f;
    EXPECT_LE(s.true_rel, 1e-8) << f;
    EXPECT_LE(double(s.res.its), 1.05 * double(ref)) << f;
    EXPECT_EQ(s.res.raises, 0) << f;
  }
}

// 7-point Laplacian 32^3 with varying row scales (a scaled copy of the constant-coefficient
// Laplacian / 6: the value -1/6, which no format holds, in every off-diagonal entry): e8m14 and
// e8m22 copies as KSPMIXEDCG builds them (dithered rounding, row-sum compensation) within 1.05x
// of FP64 CG + Jacobi's iterations (the brief's bound is 1.15x), a true residual below 1e-8, at
// most 14 reliable updates for 8 decades at delta = 0.1, no raise. Rounded to nearest and
// uncompensated, e8m14 takes more (measured 1.31x, 1.13x compensated): each equal value has the
// same error, so the copy is a scaled matrix on the interior, and each reliable update injects
// that scaling's error into the residual's smooth modes again; the guard sees no departure there.
// Those two variants are checked for what they must do (converge on the true residual) and
// bounded from above; their step counts are printed, not pinned.
TEST(MixedCg, Laplacian3dCloseToFp64)
{
  const CsrMatrix           A = laplace3d(32, 32, 32);
  const std::vector<double> b = sin_rhs(A);
  MixedCgParams             p;
  p.rtol            = 1e-8;
  const int64_t ref = fp64_pcg(A, b, 1e-8, 10000);
  for (const char *f : {"e8m22", "e8m14", "e8m12"}) {
    const Solve s = solve(A, b, {f, "e8m22"}, p);
    report((std::string("lap7 32^3 ") + f).c_str(), s, ref);
    EXPECT_EQ(s.res.reason, MixedCgReason::ConvergedRtol) << f;
    EXPECT_LE(s.true_rel, 1e-8) << f;
    EXPECT_NEAR(s.res.rnorm / norm2(b), s.true_rel, 1e-3 * s.true_rel) << f; // the reported residual is the true one
    EXPECT_LE(double(s.res.its), 1.05 * double(ref)) << f;
    EXPECT_LE(s.res.reliable_updates, 14) << f;
    EXPECT_EQ(s.res.raises, 0) << f;
    EXPECT_FALSE(s.res.fp64) << f;
    EXPECT_EQ(s.res.lowp_its, s.res.its) << f;
    ASSERT_EQ(s.res.updates.size(), size_t(s.res.reliable_updates)) << f;
    for (size_t k = 1; k < s.res.updates.size(); ++k) EXPECT_GT(s.res.updates[k].its, s.res.updates[k - 1].its);
  }
  const Solve plain = solve(A, b, {"e8m14", "e8m22"}, p, CopyFlags{false, false});
  report("lap7 32^3 e8m14 rounded to nearest, uncompensated", plain, ref);
  EXPECT_EQ(plain.res.reason, MixedCgReason::ConvergedRtol);
  EXPECT_LE(plain.true_rel, 1e-8);
  EXPECT_LE(double(plain.res.its), 1.6 * double(ref));
  const Solve comp = solve(A, b, {"e8m14", "e8m22"}, p, CopyFlags{true, false});
  report("lap7 32^3 e8m14 rounded to nearest, compensated", comp, ref);
  EXPECT_EQ(comp.res.reason, MixedCgReason::ConvergedRtol);
  EXPECT_LE(comp.true_rel, 1e-8);
  EXPECT_LE(double(comp.res.its), 1.4 * double(ref));
}

// Dithered rounding: a symmetric copy (the value of (i, j) is that of (j, i)), every value one of
// the two format neighbours of the scaled value, the errors of the equal values unbiased (their
// mean far below their mean magnitude), and the diagonal not dithered.
TEST(MixedCg, DitheredCopy)
{
  const CsrMatrix A = laplace3d(12, 12, 12);
  for (const char *f : {"e8m14", "e8m10", "bf16", "fp16"}) {
    const ScaledCopy  c  = copy_of(A, f, true);
    const ValueFormat vf = ValueFormat::parse(f);
    // decode the copy column by column: the copy's product with unit vectors would be slow, so
    // rebuild the dense values from the CSR with the same dithering instead and check them
    const ScaledCopy    nearest = copy_of(A, f, false);
    std::vector<double> e(size_t(A.rows)), y(size_t(A.rows)), yn(size_t(A.rows));
    double              sum = 0, sum_abs = 0;
    int64_t             count = 0;
    for (int32_t j = 0; j < A.rows; j += 37) { // a sample of columns
      std::fill(e.begin(), e.end(), 0.0);
      e[size_t(j)] = 1.0;
      packsell_spmv(c.op, e.data(), y.data(), false);
      packsell_spmv(nearest.op, e.data(), yn.data(), false);
      for (int32_t k = A.rowptr[size_t(j)]; k < A.rowptr[size_t(j) + 1]; ++k) {
        const int32_t i = A.colidx[size_t(k)];
        const double  v = scaling_value(A, c.s, i, j), ulp = std::ldexp(1.0, std::ilogb(v) - vf.mantissa_bits);
        if (i == j) {
          EXPECT_EQ(y[size_t(i)], yn[size_t(i)]) << f << ": the diagonal is rounded to nearest";
          continue;
        }
        EXPECT_LT(std::fabs(y[size_t(i)] - v), ulp) << f << " (" << i << ", " << j << ")";
        sum += (y[size_t(i)] - v) / ulp;
        sum_abs += std::fabs(y[size_t(i)] - v) / ulp;
        ++count;
        // symmetry: the entry (j, i) through the product with e_i
        std::vector<double> ei(size_t(A.rows), 0.0), yi(size_t(A.rows));
        ei[size_t(i)] = 1.0;
        packsell_spmv(c.op, ei.data(), yi.data(), false);
        EXPECT_EQ(yi[size_t(j)], y[size_t(i)]) << f << ": (" << i << ", " << j << ") and its transpose";
      }
    }
    ASSERT_GT(count, 100);
    EXPECT_LT(std::fabs(sum) / double(count), 0.1 * sum_abs / double(count)) << f << ": a biased rounding";
  }
}

// The compensation: c = A_hat 1 - A_lp 1 exactly where the copy is exact (an identity-like
// matrix whose values every format holds: c = 0), and makes the compensated row sums those of
// A_hat to FP32's precision.
TEST(MixedCg, RowSumCompensation)
{
  const CsrMatrix          A    = laplace3d(8, 8, 8);
  const ScaledCopy         c    = copy_of(A, "e8m10", false);
  const std::vector<float> comp = copy_compensation(A, c);
  std::vector<double>      ones(size_t(A.rows), 1.0), lp(size_t(A.rows)), As(size_t(A.rows));
  packsell_spmv(c.op, ones.data(), lp.data(), false);
  csr_spmv(A.view(), c.s.data(), As.data(), false);
  double worst = 0, before = 0;
  for (int32_t i = 0; i < A.rows; ++i) {
    const double exact = c.s[size_t(i)] * As[size_t(i)];
    worst              = std::max(worst, std::fabs(lp[size_t(i)] + double(comp[size_t(i)]) - exact));
    before             = std::max(before, std::fabs(lp[size_t(i)] - exact));
  }
  EXPECT_GT(before, 1e-5); // e8m10 rounds -1/6
  EXPECT_LT(worst, 1e-9);  // compensated to FP32's precision of c
  std::vector<std::vector<RowEntry>> rows{size_t(4)};
  for (int32_t i = 0; i < 4; ++i) rows[size_t(i)].push_back({i, 4.0});
  const CsrMatrix D = csr_from_rows(4, rows);
  for (float v : copy_compensation(D, copy_of(D, "e8m10", true))) EXPECT_EQ(v, 0.0f);
}

// delta sets how often the true residual is computed: fewer updates with 0.01 than with 0.5,
// every solve converging, the counts bounded from above by about log(1e-8) / log(delta) (the
// trigger cannot fire before the iterated residual fell by delta from its largest value).
TEST(MixedCg, ReliableUpdateCountFollowsDelta)
{
  const CsrMatrix           A = laplace3d(20, 20, 20);
  const std::vector<double> b = sin_rhs(A);
  int64_t                   count[3];
  const double              deltas[3] = {0.01, 0.1, 0.5};
  for (int k = 0; k < 3; ++k) {
    MixedCgParams p;
    p.delta       = deltas[k];
    const Solve s = solve(A, b, {"e8m14"}, p);
    EXPECT_EQ(s.res.reason, MixedCgReason::ConvergedRtol) << "delta " << deltas[k];
    EXPECT_LE(s.true_rel, 1e-8) << "delta " << deltas[k];
    count[k] = s.res.reliable_updates;
  }
  EXPECT_LT(count[0], count[2]);
  EXPECT_LE(count[0], 6);  // about log(1e-8) / log(0.01) = 4
  EXPECT_LE(count[1], 12); // about 8
  EXPECT_LE(count[2], 40); // about log(1e-8) / log(0.5) = 27
}

// bcsstk14 and bcsstk16 (structural): e8m14 converges to 1e-8 close to FP64 CG's iterations.
TEST(MixedCg, StructuralMatricesCloseToFp64)
{
  for (const char *file : {"bcsstk14.mtx", "bcsstk16.mtx.gz"}) {
    const CsrMatrix           A   = shared_matrix(file);
    const std::vector<double> b   = sin_rhs(A);
    const int64_t             ref = fp64_pcg(A, b, 1e-8, 20000);
    MixedCgParams             p;
    const Solve               s = solve(A, b, {"e8m14", "e8m22"}, p);
    report(file, s, ref);
    EXPECT_EQ(s.res.reason, MixedCgReason::ConvergedRtol) << file;
    EXPECT_LE(s.true_rel, 1e-8) << file;
    EXPECT_LE(double(s.res.its), 1.15 * double(ref)) << file;
  }
}

// A copy too coarse for the matrix (e8m10, 11 significant bits, dithered, on bcsstk14): the
// true residual departs from the iterated one by 37% at the fourth update; the guard raises the
// precision there (e8m10 -> e8m22, the direction restarted) and the solve ends within 1.15x of
// FP64 CG's iterations; without a wider format it falls back to FP64 CG, and converges all the
// same. Without the guard (measured: no convergence in 10x FP64 CG's steps, the true residual
// stuck at 2.6e-2) the run is printed, not asserted: the guarded solves are what is checked.
TEST(MixedCg, GuardRaisesPrecision)
{
  const CsrMatrix           A   = shared_matrix("bcsstk14.mtx");
  const std::vector<double> b   = sin_rhs(A);
  const int64_t             ref = fp64_pcg(A, b, 1e-8, 20000);
  MixedCgParams             p;
  p.guard         = false;
  p.max_it        = 10 * ref;
  const Solve off = solve(A, b, {"e8m10", "e8m22"}, p);
  report("bcsstk14 e8m10, no guard", off, ref);
  EXPECT_EQ(off.res.raises, 0);                                             // the guard off: never raised
  EXPECT_NEAR(off.res.rnorm / norm2(b), off.true_rel, 1e-3 * off.true_rel); // the reported residual is the true one
  p.max_it = 10000;

  p.guard          = true;
  const Solve wide = solve(A, b, {"e8m10", "e8m22"}, p);
  report("bcsstk14 e8m10 -> e8m22", wide, ref);
  for (const auto &u : wide.res.updates) std::printf("  update at %lld: f_iter %.3g f_true %.3g departure %.3g%s\n", (long long)u.its, u.f_iter, u.f_true, u.departure, u.lossy ? " lossy" : "");
  EXPECT_TRUE(wide.res.updates.size() > 3 && wide.res.updates[3].lossy && wide.res.updates[3].departure > 0.05);
  EXPECT_EQ(wide.res.reason, MixedCgReason::ConvergedRtol);
  EXPECT_LE(wide.true_rel, 1e-8);
  EXPECT_EQ(wide.res.raises, 1);
  EXPECT_EQ(wide.formats_used, 2);
  EXPECT_FALSE(wide.res.fp64);
  EXPECT_LE(double(wide.res.its), 1.15 * double(ref));
  int lossy = 0;
  for (const auto &u : wide.res.updates) lossy += u.lossy;
  EXPECT_EQ(lossy, 1); // the departure: at once

  const Solve fp64 = solve(A, b, {"e8m10"}, p);
  report("bcsstk14 e8m10 -> FP64", fp64, ref);
  EXPECT_EQ(fp64.res.reason, MixedCgReason::ConvergedRtol);
  EXPECT_LE(fp64.true_rel, 1e-8);
  EXPECT_TRUE(fp64.res.fp64);
  EXPECT_EQ(fp64.res.raises, 1);
  EXPECT_LT(fp64.res.lowp_its, fp64.res.its);
  EXPECT_LE(double(fp64.res.its), 1.15 * double(ref));

  // bf16 (8 significant bits): its copy breaks down (p^T A_lp p <= 0 where A is SPD): the
  // precision is raised and the solve converges
  const Solve bf = solve(A, b, {"bf16", "e8m22"}, p);
  report("bcsstk14 bf16 -> e8m22", bf, ref);
  EXPECT_EQ(bf.res.reason, MixedCgReason::ConvergedRtol);
  EXPECT_LE(bf.true_rel, 1e-8);
  EXPECT_GE(bf.res.raises, 1);
}

// A random SPD matrix (diagonally dominant by a margin of 1e-6, irregular rows): as FP64 CG.
TEST(MixedCg, RandomSpd)
{
  const CsrMatrix           A   = random_spd(3000, 8, 1e-6, 7);
  const std::vector<double> b   = sin_rhs(A);
  const int64_t             ref = fp64_pcg(A, b, 1e-8, 50000);
  ASSERT_LE(ref, 50000);
  MixedCgParams p;
  p.max_it      = 50000;
  const Solve s = solve(A, b, {"e8m14", "e8m22"}, p);
  report("random_spd margin 1e-6", s, ref);
  EXPECT_EQ(s.res.reason, MixedCgReason::ConvergedRtol);
  EXPECT_LE(s.true_rel, 1e-8);
  EXPECT_LE(double(s.res.its), 1.15 * double(ref) + 1);
}

// A symmetric matrix with a positive diagonal that is not positive definite: the solve stops with
// DivergedIndefinite (checked with the exact matrix), never with a converged answer.
TEST(MixedCg, IndefiniteRefused)
{
  const int32_t                      n = 200;
  std::vector<std::vector<RowEntry>> rows{size_t(n)};
  for (int32_t i = 0; i < n; ++i) {
    if (i > 0) rows[size_t(i)].push_back({i - 1, 0.9});
    rows[size_t(i)].push_back({i, 1.0});
    if (i + 1 < n) rows[size_t(i)].push_back({i + 1, 0.9});
  }
  const CsrMatrix           A = csr_from_rows(n, rows);
  const std::vector<double> b = random_vector(n, 3);
  MixedCgParams             p;
  const Solve               s = solve(A, b, {"e8m14", "e8m22"}, p);
  EXPECT_EQ(s.res.reason, MixedCgReason::DivergedIndefinite);
}

// A zero right-hand side converges at once with x = 0; a solution given as the initial guess too.
TEST(MixedCg, TrivialSolves)
{
  const CsrMatrix     A = laplace3d(6, 6, 6);
  std::vector<double> b(size_t(A.rows), 0.0);
  const Solve         z = solve(A, b, {"e8m14"}, MixedCgParams{});
  EXPECT_EQ(z.res.its, 0);
  EXPECT_NE(z.res.reason, MixedCgReason::Iterating);
  EXPECT_GT(int(z.res.reason), 0);
  for (double v : z.x) EXPECT_EQ(v, 0.0);
}

// The maximum iteration count stops with DivergedIts and the true residual of the x returned.
TEST(MixedCg, MaxIterations)
{
  const CsrMatrix           A = laplace3d(16, 16, 16);
  const std::vector<double> b = sin_rhs(A);
  MixedCgParams             p;
  p.max_it      = 7;
  const Solve s = solve(A, b, {"e8m14"}, p);
  EXPECT_EQ(s.res.reason, MixedCgReason::DivergedIts);
  EXPECT_EQ(s.res.its, 7);
  EXPECT_NEAR(s.res.rnorm / norm2(b), s.true_rel, 1e-6 * s.true_rel);
}

// The trigger aims at the convergence test's own target (MixedCgOperators::target): with an
// initial guess close to the solution (||r_0|| = 1e-2 ||b||), a test at rtol ||b|| and reliable
// updates only every 6 decades (delta 1e-6), the update that converges comes when the iterated
// residual reaches rtol ||b||: the true residual ends just below it, in about FP64 CG's steps
// for the 2 decades, where aiming at rtol ||r_0|| would run 2 decades further.
TEST(MixedCg, TriggerAimsAtTheTestsTarget)
{
  const CsrMatrix           A  = laplace3d(16, 16, 16);
  const std::vector<double> b  = sin_rhs(A);
  const double              nb = norm2(b), rtol = 1e-6;
  std::vector<double>       x0(size_t(A.rows));
  for (int32_t i = 0; i < A.rows; ++i) x0[size_t(i)] = (1.0 + std::sin(double(i))) * (1.0 + 1e-2 * std::sin(0.1 * double(i)));
  const double             r0   = residual_norm(A, b.data(), x0.data());
  ScaledCopy               c    = copy_of(A, "e8m14", true);
  const std::vector<float> comp = copy_compensation(A, c);
  MixedCgOperators         ops;
  ops.lowp_product = [&](const float *x, float *y) {
    packsell_spmv_f32(c.op, x, y);
    for (size_t i = 0; i < comp.size(); ++i) y[i] = std::fma(comp[i], x[i], y[i]);
  };
  ops.exact_product = [&](const double *x, double *y) { csr_spmv(A.view(), x, y, false); };
  ops.converged     = [&](int64_t, double rn) { return rn <= rtol * nb ? MixedCgReason::ConvergedRtol : MixedCgReason::Iterating; };
  ops.target        = [&](double) { return rtol * nb; };
  MixedCgParams p;
  p.delta                 = 1e-6;
  std::vector<double> x   = x0;
  const MixedCgResult res = mixed_cg(size_t(A.rows), c.s.data(), b.data(), x.data(), p, ops);
  const double        rel = residual_norm(A, b.data(), x.data()) / nb;
  std::printf("||r0|| / ||b|| %.3e: %lld its, %lld reliable updates, true residual / ||b|| %.3e\n", r0 / nb, (long long)res.its, (long long)res.reliable_updates, rel);
  EXPECT_EQ(res.reason, MixedCgReason::ConvergedRtol);
  EXPECT_LE(rel, rtol);
  EXPECT_GT(rel, 0.1 * rtol); // not run past the target
  EXPECT_LE(res.reliable_updates, 2);
}

// A non-finite number in the FP64 phase (the exact product returns NaN once) ends the solve with
// DivergedNanOrInf, not DivergedIndefinite (the same reason as the device driver's).
TEST(MixedCg, Fp64PhaseNanIsNanOrInf)
{
  const CsrMatrix           A     = laplace3d(8, 8, 8);
  const std::vector<double> b     = sin_rhs(A);
  ScaledCopy                c     = copy_of(A, "e8m14", true);
  int                       calls = 0;
  MixedCgOperators          ops;
  ops.lowp_product  = [&](const float *x, float *y) { packsell_spmv_f32(c.op, x, y); };
  ops.exact_product = [&](const double *x, double *y) {
    csr_spmv(A.view(), x, y, false);
    if (++calls == 4) y[3] = std::nan("");
  };
  MixedCgParams p;
  p.start_fp64 = true;
  std::vector<double> x(size_t(A.rows), 0.0);
  const MixedCgResult res = mixed_cg(size_t(A.rows), c.s.data(), b.data(), x.data(), p, ops);
  EXPECT_EQ(res.reason, MixedCgReason::DivergedNanOrInf);
  EXPECT_TRUE(res.fp64);
}

// Near convergence the last segments can be a step or two long (ended by the target); their
// f_true / f_iter is noise, and the guard must not raise on them: over many tolerances (each
// putting the target at a different place in a segment) no solve of a Laplacian raises. (A
// regression check of the whole loop: the rule itself is checked in LossySegmentVerdicts; on
// this matrix the e8m14 copy's noise stays below the old rule's thresholds too.)
TEST(MixedCg, NoRaiseOnShortSegments)
{
  const CsrMatrix           A      = laplace3d(16, 16, 16);
  const std::vector<double> b      = sin_rhs(A);
  int                       raised = 0, solves = 0;
  for (double rtol = 1e-5; rtol > 1e-10; rtol *= 0.83) {
    MixedCgParams p;
    p.rtol        = rtol;
    const Solve s = solve(A, b, {"e8m14", "e8m22"}, p);
    EXPECT_EQ(s.res.reason, MixedCgReason::ConvergedRtol) << rtol;
    EXPECT_LE(s.true_rel, rtol * 1.0001) << rtol;
    if (s.res.raises) {
      ++raised;
      std::printf("rtol %.3g: %d raises\n", rtol, s.res.raises);
      for (const auto &u : s.res.updates) std::printf("  update at %lld: f_iter %.3g f_true %.3g departure %.3g%s\n", (long long)u.its, u.f_iter, u.f_true, u.departure, u.lossy ? " lossy" : "");
    }
    ++solves;
  }
  std::printf("%d solves, %d with a raise\n", solves, raised);
  EXPECT_EQ(raised, 0);
}

// The off-diagonal block of a rank (build_scaled_offdiag(), the builder both KSPMIXEDCG backends
// use on several ranks): a Laplacian split as a rank's blocks would be, the diagonal block A_d
// (every coupling but the z ones) and A_o (the z couplings, columns numbered as a ghost vector
// with global numbers gcols). Its scaled values are the whole copy's: with the dither on both
// (global rows and columns), the split product A_d x + A_o x[gcols] equals the whole copy's
// product up to the summation order, so a solve on the split takes the whole copy's steps; a
// non-finite entry is reported at its row and halo column.
namespace
{

using SplitZ = pspmv_test::SplitBlocks;

} // namespace

TEST(MixedCgOffDiag, SplitProductIsTheWholeCopys)
{
  const int32_t   m  = 8;
  const CsrMatrix A  = laplace3d(m, m, m);
  const SplitZ    sp = pspmv_test::split_by_distance(A, m * m);
  ASSERT_GT(sp.gcols.size(), 0u);
  const size_t n = size_t(A.rows), ng = sp.gcols.size();
  for (const char *fmt : {"exact", "e8m14", "bf16"}) {
    PackSellOptions opt;
    opt.value_format = ValueFormat::parse(fmt);
    const CopyDither dither{true, 0};
    const ScaledCopy whole = build_scaled_copy(A.view(), opt, dither);
    const ScaledCopy diag  = build_scaled_copy(sp.Ad.view(), opt, dither);
    ASSERT_EQ(diag.s, whole.s) << fmt; // the same diagonal
    const PackSellMatrix off = pspmv_test::split_offdiag(sp, diag.s, opt, dither);
    EXPECT_EQ(off.rows, A.rows);
    EXPECT_EQ(off.cols, int32_t(ng));
    EXPECT_EQ(off.stats().nnz, int64_t(sp.Ao.colidx.size()));
    std::vector<double> x(n), xg(ng), yw(n), yd(n), yo(n);
    for (size_t i = 0; i < n; ++i) x[i] = std::sin(0.37 * double(i)) + 0.5;
    for (size_t k = 0; k < ng; ++k) xg[k] = x[size_t(sp.gcols[k])];
    packsell_spmv(whole.op, x.data(), yw.data(), false);
    packsell_spmv(diag.op, x.data(), yd.data(), false);
    packsell_spmv(off, xg.data(), yo.data(), false);
    for (size_t i = 0; i < n; ++i) EXPECT_NEAR(yd[i] + yo[i], yw[i], 1e-13 * (1.0 + std::fabs(yw[i]))) << fmt << " row " << i;
  }
  // a non-finite entry: the row and the halo column
  CsrMatrix bad = sp.Ao;
  bad.values[3] = std::nan("");
  const std::vector<double> ones(n, 1.0), tg(ng, 1.0);
  int32_t                   row3 = 0;
  while (bad.rowptr[size_t(row3) + 1] <= 3) ++row3;
  try {
    (void)build_scaled_offdiag(bad.view(), ones.data(), tg.data(), PackSellOptions{});
    FAIL() << "no error";
  } catch (const ValueRangeError &e) {
    EXPECT_EQ(e.row, row3);
    EXPECT_EQ(e.col, bad.colidx[3]);
  }
}

// The host twin on the split operator (the host backend's product on several ranks: A_d p, the
// halo, A_o ghost, the compensation of both blocks' row sums; the reductions through hooks that
// are the identity here) takes the whole copy's steps within 2.
TEST(MixedCgOffDiag, SplitSolveTakesTheWholeSteps)
{
  const int32_t       m  = 12;
  const CsrMatrix     A  = laplace3d(m, m, m);
  const SplitZ        sp = pspmv_test::split_by_distance(A, m * m);
  const size_t        n = size_t(A.rows), ng = sp.gcols.size();
  std::vector<double> xe(n), b(n);
  for (size_t i = 0; i < n; ++i) xe[i] = 1.0 + std::sin(double(i));
  csr_spmv(A.view(), xe.data(), b.data(), false);
  PackSellOptions opt;
  opt.value_format = ValueFormat::parse("e8m14");
  const CopyDither dither{true, 0};
  MixedCgResult    res[2];
  int              sums = 0;
  for (int split = 0; split < 2; ++split) {
    const ScaledCopy         c    = build_scaled_copy(split ? sp.Ad.view() : A.view(), opt, dither);
    const PackSellMatrix     off  = split ? pspmv_test::split_offdiag(sp, c.s, opt, dither) : PackSellMatrix{};
    const std::vector<float> comp = pspmv_test::copy_compensation(A, c.s, c.op, split ? &off : nullptr);
    std::vector<float>       ghost(ng), tmp(n);
    MixedCgOperators         ops;
    ops.lowp_product = [&](const float *p, float *w) {
      packsell_spmv_f32(c.op, p, w);
      if (split) {
        for (size_t k = 0; k < ng; ++k) ghost[k] = p[size_t(sp.gcols[k])];
        packsell_spmv_f32(off, ghost.data(), tmp.data());
        for (size_t i = 0; i < n; ++i) w[i] += tmp[i];
      }
      for (size_t i = 0; i < n; ++i) w[i] = std::fma(comp[i], p[i], w[i]);
    };
    ops.exact_product = [&](const double *x, double *y) { csr_spmv(A.view(), x, y, false); };
    if (split) {
      ops.allreduce_sum = [&](double *, int) { ++sums; };
      ops.allreduce_max = [](double *, int) {};
    }
    std::vector<double> x(n, 0.0);
    res[split] = mixed_cg(n, c.s.data(), b.data(), x.data(), MixedCgParams{}, ops);
    EXPECT_EQ(res[split].reason, MixedCgReason::ConvergedRtol);
    EXPECT_LE(residual_norm(A, b.data(), x.data()), 1e-8 * norm2(b) * 1.01);
  }
  std::printf("lap %d^3 e8m14: whole copy %lld steps, split %lld steps\n", m, (long long)res[0].its, (long long)res[1].its);
  EXPECT_LE(std::llabs((long long)(res[1].its - res[0].its)), 2);
  EXPECT_GT(sums, 2 * res[1].its);
}
