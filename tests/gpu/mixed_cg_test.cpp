// The device mixed-precision CG with reliable updates (mixed_cg_device.hpp) against its host twin
// (mixed_cg.hpp): the same reason, CG steps within 2, the same reliable updates within 1, the
// same precision raises and FP64 fallback, a true residual (recomputed here in FP64) below the
// tolerance; on a 3-D Laplacian, bcsstk14 with e8m10 (the guard raising to e8m22), the guard
// straight to FP64, an indefinite matrix, and check_every 1 and 8 giving the same answer; the
// several-rank path (off-diagonal block, halo and reduction hooks) on a split Laplacian; with a
// preconditioner hook (symmetric Gauss-Seidel written here, applied on the host through copies):
// the same steps as the host twin's, the FP64 phase, the split path, an indefinite or NaN
// preconditioner refused.
// Suites MixedCgSmall* (sanitizer subset) and MixedCgLarge*.
#include "gpu_test_util.hpp"
#include "device_hierarchy.hpp"
#include "matrix_market.hpp"
#include "mixed/mixed_cg.hpp"
#include "mixed/mg_cycle.hpp"
#include "mixed/mixed_cg_device.hpp"
#include "mixed_systems.hpp"
#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <stdexcept>
#include <cstdio>
#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace pspmv;
using namespace pspmv::mixed;
using pspmv_test::CsrMatrix;
using pspmv_test::Precond;
using pspmv_test::sgs_pc;
namespace mcuda = pspmv::mixed::cuda;

namespace
{

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess)

struct Outcome {
  MixedCgResult res;
  double        true_rel = 0;
};

// The device hook of a host preconditioner: v copied to the host, pc, u copied back (on the
// solve's stream, then synchronised). *calls counts the applications; *running, when given, is
// the caller's timer (it must be stopped around the hook).
std::function<void(const double *, double *)> device_pc(const Precond &pc, size_t n, cudaStream_t stream, int64_t *calls, const bool *running = nullptr)
{
  auto hv = std::make_shared<std::vector<double>>(n), hu = std::make_shared<std::vector<double>>(n);
  return [=](const double *v, double *u) {
    if (running) EXPECT_FALSE(*running) << "the timer runs in the preconditioner's hook";
    ++*calls;
    if (cudaMemcpyAsync(hv->data(), v, n * sizeof(double), cudaMemcpyDeviceToHost, stream) != cudaSuccess || cudaStreamSynchronize(stream) != cudaSuccess) throw std::runtime_error("copy v");
    pc(hv->data(), hu->data());
    if (cudaMemcpyAsync(u, hu->data(), n * sizeof(double), cudaMemcpyHostToDevice, stream) != cudaSuccess || cudaStreamSynchronize(stream) != cudaSuccess) throw std::runtime_error("copy u");
  };
}

using LowpPrecond = std::function<void(const float *r, float *z)>;

// The host twin with the ladder of formats (a raise takes the next; past the last: FP64); pc_lowp:
// the low-precision phase's preconditioner (MixedCgOperators::precondition_lowp).
Outcome host_solve(const CsrMatrix &A, const std::vector<double> &b, const std::vector<std::string> &ladder, const MixedCgParams &p, bool comp = false, const Precond &pc = Precond{}, const LowpPrecond &pc_lowp = LowpPrecond{})
{
  size_t                    level = 0;
  ScaledCopy                c     = pspmv_test::test_scaled_copy(A, ladder[0]);
  const std::vector<double> s     = c.s;
  std::vector<float>        cv    = comp ? pspmv_test::copy_compensation(A, c) : std::vector<float>();
  MixedCgOperators          ops;
  ops.lowp_product = [&](const float *x, float *y) {
    packsell_spmv_f32(c.op, x, y);
    for (size_t i = 0; i < cv.size(); ++i) y[i] = std::fma(cv[i], x[i], y[i]);
  };
  ops.exact_product   = [&](const double *x, double *y) { csr_spmv(A.view(), x, y, false); };
  ops.raise_precision = [&]() {
    if (level + 1 >= ladder.size()) return false;
    c = pspmv_test::test_scaled_copy(A, ladder[++level]);
    if (comp) cv = pspmv_test::copy_compensation(A, c);
    return true;
  };
  ops.precondition      = pc;
  ops.precondition_lowp = pc_lowp;
  std::vector<double> x(size_t(A.rows), 0.0);
  Outcome             o;
  o.res      = mixed_cg(size_t(A.rows), s.data(), b.data(), x.data(), p, ops);
  o.true_rel = pspmv_test::residual_norm(A, b.data(), x.data()) / pspmv_test::norm2(b);
  return o;
}

// The device driver with the same ladder; the exact product on the host (copies), as a test.
// With a preconditioner (device_pc()) the caller's timer hooks are set too, and the hook is
// checked to run with the timer stopped; *pc_calls counts its calls. pc_lowp_device: the
// low-precision phase's preconditioner on device arrays (DeviceMixedCgHooks::precondition_lowp).
void device_solve(const CsrMatrix &A, const std::vector<double> &b, const std::vector<std::string> &ladder, const MixedCgParams &p, int every, Outcome *o, bool comp = false, const Precond &pc = Precond{}, int64_t *pc_calls = nullptr, const LowpPrecond &pc_lowp_device = LowpPrecond{})
{
  const size_t            n     = size_t(A.rows);
  size_t                  level = 0;
  mcuda::DeviceScaledCopy dc;
  CUDA_OK(mcuda::upload(pspmv_test::test_scaled_copy(A, ladder[0]), &dc));
  mcuda::DeviceMixedCg *d = nullptr;
  CUDA_OK(mcuda::create(&dc, &d));
  double *db = nullptr, *dx = nullptr;
  CUDA_OK(cudaMalloc(&db, n * sizeof(double)));
  CUDA_OK(cudaMalloc(&dx, n * sizeof(double)));
  CUDA_OK(cudaMemcpy(db, b.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(dx, 0, n * sizeof(double)));
  std::vector<double>       hx(n), hy(n);
  mcuda::DeviceMixedCgHooks h;
  h.exact_product = [&](const double *x, double *y) {
    if (cudaMemcpy(hx.data(), x, n * sizeof(double), cudaMemcpyDeviceToHost) != cudaSuccess) throw std::runtime_error("copy");
    csr_spmv(A.view(), hx.data(), hy.data(), false);
    if (cudaMemcpy(y, hy.data(), n * sizeof(double), cudaMemcpyHostToDevice) != cudaSuccess) throw std::runtime_error("copy");
  };
  h.raise_precision = [&]() {
    if (level + 1 >= ladder.size()) return false;
    mcuda::DeviceScaledCopy c2;
    if (mcuda::upload(pspmv_test::test_scaled_copy(A, ladder[++level]), &c2) != cudaSuccess) throw std::runtime_error("upload");
    if (mcuda::replace_copy(d, &c2) != cudaSuccess) throw std::runtime_error("replace_copy");
    if (comp && mcuda::compensate(d, h.exact_product, nullptr) != cudaSuccess) throw std::runtime_error("compensate");
    return true;
  };
  if (comp) CUDA_OK(mcuda::compensate(d, h.exact_product, nullptr));
  bool    running = false;
  int64_t calls   = 0;
  if (pc) {
    h.precondition = device_pc(pc, n, nullptr, &calls, &running);
    if (pc_lowp_device)
      h.precondition_lowp = [&](const float *r, float *z) {
        EXPECT_FALSE(running) << "the timer runs in the low-precision preconditioner's hook";
        ++calls;
        pc_lowp_device(r, z);
      };
    h.timer_start = [&]() { running = true; };
    h.timer_stop  = [&]() { running = false; };
  }
  CUDA_OK(mcuda::solve(d, db, dx, p, every, h, nullptr, &o->res));
  EXPECT_FALSE(running);
  EXPECT_EQ(o->res.pc_applications, calls);
  if (pc_calls) *pc_calls = calls;
  std::vector<double> x(n);
  CUDA_OK(cudaMemcpy(x.data(), dx, n * sizeof(double), cudaMemcpyDeviceToHost));
  o->true_rel = pspmv_test::residual_norm(A, b.data(), x.data()) / pspmv_test::norm2(b);
  CUDA_OK(cudaFree(db));
  CUDA_OK(cudaFree(dx));
  CUDA_OK(mcuda::destroy(d));
}

void compare(const char *what, const Outcome &h, const Outcome &d, double tol)
{
  std::printf("%s: host %lld its, %lld updates, %d raises, fp64 %d, true %.3e; device %lld its, %lld updates, %d raises, fp64 %d, true %.3e\n", what, (long long)h.res.its, (long long)h.res.reliable_updates, h.res.raises, int(h.res.fp64), h.true_rel,
              (long long)d.res.its, (long long)d.res.reliable_updates, d.res.raises, int(d.res.fp64), d.true_rel);
  EXPECT_EQ(int(d.res.reason), int(h.res.reason)) << what;
  EXPECT_LE(std::llabs((long long)(d.res.its - h.res.its)), 2) << what;
  EXPECT_LE(std::llabs((long long)(d.res.reliable_updates - h.res.reliable_updates)), 1) << what;
  EXPECT_EQ(d.res.raises, h.res.raises) << what;
  EXPECT_EQ(d.res.fp64, h.res.fp64) << what;
  if (h.res.reason == MixedCgReason::ConvergedRtol) {
    EXPECT_LE(d.true_rel, tol) << what;
    EXPECT_NEAR(d.res.rnorm / d.res.rnorm0, d.true_rel, 1e-3 * d.true_rel) << what;
  }
}

} // namespace

TEST(MixedCgSmall, Laplacian)
{
  const CsrMatrix           A = pspmv_test::laplace3d(12, 12, 12);
  const std::vector<double> b = pspmv_test::sin_rhs(A);
  MixedCgParams             p;
  const Outcome             h = host_solve(A, b, {"e8m14", "e8m22"}, p);
  for (int every : {1, 8}) {
    Outcome d;
    device_solve(A, b, {"e8m14", "e8m22"}, p, every, &d);
    compare(every == 1 ? "lap 12^3 check_every 1" : "lap 12^3 check_every 8", h, d, 1e-8);
  }
}

// with the row-sum compensation on both sides
TEST(MixedCgSmall, LaplacianCompensated)
{
  const CsrMatrix           A = pspmv_test::laplace3d(14, 14, 14);
  const std::vector<double> b = pspmv_test::sin_rhs(A);
  MixedCgParams             p;
  const Outcome             h = host_solve(A, b, {"e8m14", "e8m22"}, p, true);
  Outcome                   d;
  device_solve(A, b, {"e8m14", "e8m22"}, p, 8, &d, true);
  compare("lap 14^3 compensated", h, d, 1e-8);
}

TEST(MixedCgSmall, GuardToFp64)
{
  const CsrMatrix           A = pspmv_test::laplace3d(10, 10, 10);
  const std::vector<double> b = pspmv_test::sin_rhs(A);
  MixedCgParams             p;
  p.guard_departure = 1e-300; // every segment departs: FP64 from the first update on
  const Outcome h   = host_solve(A, b, {"e8m14"}, p);
  Outcome       d;
  device_solve(A, b, {"e8m14"}, p, 4, &d);
  compare("lap 10^3 -> FP64", h, d, 1e-8);
  EXPECT_TRUE(d.res.fp64);
}

TEST(MixedCgSmall, Indefinite)
{
  const int32_t                                  n = 100;
  std::vector<std::vector<pspmv_test::RowEntry>> rows{size_t(n)};
  for (int32_t i = 0; i < n; ++i) {
    if (i > 0) rows[size_t(i)].push_back({i - 1, 0.9});
    rows[size_t(i)].push_back({i, 1.0});
    if (i + 1 < n) rows[size_t(i)].push_back({i + 1, 0.9});
  }
  const CsrMatrix           A = pspmv_test::csr_from_rows(n, rows);
  const std::vector<double> b = pspmv_test::sin_rhs(A);
  Outcome                   d;
  device_solve(A, b, {"e8m14", "e8m22"}, MixedCgParams{}, 8, &d);
  EXPECT_EQ(d.res.reason, MixedCgReason::DivergedIndefinite);
}

// The caller's timer (timer_start / timer_stop) runs over the loop's own work only: stopped in
// every hook, balanced, and stopped when solve() returns; a NaN from the exact product in the
// FP64 phase ends the solve with DivergedNanOrInf, as the host twin's.
TEST(MixedCgSmall, TimerAndFp64Nan)
{
  const CsrMatrix           A = pspmv_test::laplace3d(8, 8, 8);
  const std::vector<double> b = pspmv_test::sin_rhs(A);
  const size_t              n = size_t(A.rows);
  for (int nan_at : {0, 4}) {
    mcuda::DeviceScaledCopy dc;
    CUDA_OK(mcuda::upload(pspmv_test::test_scaled_copy(A, "e8m14"), &dc));
    mcuda::DeviceMixedCg *d = nullptr;
    CUDA_OK(mcuda::create(&dc, &d));
    double *db = nullptr, *dx = nullptr;
    CUDA_OK(cudaMalloc(&db, n * sizeof(double)));
    CUDA_OK(cudaMalloc(&dx, n * sizeof(double)));
    CUDA_OK(cudaMemcpy(db, b.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(dx, 0, n * sizeof(double)));
    std::vector<double>       hx(n), hy(n);
    bool                      running = false, in_hook_while_running = false;
    int                       starts = 0, stops = 0, calls = 0;
    mcuda::DeviceMixedCgHooks h;
    h.exact_product = [&](const double *x, double *y) {
      in_hook_while_running = in_hook_while_running || running;
      if (cudaMemcpy(hx.data(), x, n * sizeof(double), cudaMemcpyDeviceToHost) != cudaSuccess) throw std::runtime_error("copy");
      csr_spmv(A.view(), hx.data(), hy.data(), false);
      if (++calls == nan_at) hy[3] = std::nan("");
      if (cudaMemcpy(y, hy.data(), n * sizeof(double), cudaMemcpyHostToDevice) != cudaSuccess) throw std::runtime_error("copy");
    };
    h.monitor     = [&](int64_t, double) { in_hook_while_running = in_hook_while_running || running; };
    h.timer_start = [&]() {
      EXPECT_FALSE(running);
      running = true;
      ++starts;
    };
    h.timer_stop = [&]() {
      EXPECT_TRUE(running);
      running = false;
      ++stops;
    };
    MixedCgParams p;
    p.start_fp64 = nan_at > 0;
    MixedCgResult res;
    CUDA_OK(mcuda::solve(d, db, dx, p, 8, h, nullptr, &res));
    EXPECT_FALSE(running);
    EXPECT_EQ(starts, stops);
    EXPECT_GT(starts, 1);
    EXPECT_FALSE(in_hook_while_running);
    if (nan_at) EXPECT_EQ(res.reason, MixedCgReason::DivergedNanOrInf);
    else EXPECT_EQ(res.reason, MixedCgReason::ConvergedRtol);
    CUDA_OK(cudaFree(db));
    CUDA_OK(cudaFree(dx));
    CUDA_OK(mcuda::destroy(d));
  }
}

TEST(MixedCgLarge, Laplacian32)
{
  const CsrMatrix           A = pspmv_test::laplace3d(32, 32, 32);
  const std::vector<double> b = pspmv_test::sin_rhs(A);
  MixedCgParams             p;
  const Outcome             h = host_solve(A, b, {"e8m14", "e8m22"}, p);
  Outcome                   d;
  device_solve(A, b, {"e8m14", "e8m22"}, p, 8, &d);
  compare("lap 32^3", h, d, 1e-8);
}

TEST(MixedCgLarge, Bcsstk14GuardRaises)
{
  const std::string path = std::string(PETSCSPMV_MATRIX_DIR) + "/bcsstk14.mtx";
  if (!std::ifstream(path)) GTEST_SKIP() << path << " is not there (the shared matrices did not travel)";
  const CsrMatrix           A = pspmv_test::read_matrix_market(path);
  const std::vector<double> b = pspmv_test::sin_rhs(A);
  MixedCgParams             p;
  const Outcome             h = host_solve(A, b, {"e8m10", "e8m22"}, p, true);
  Outcome                   d;
  device_solve(A, b, {"e8m10", "e8m22"}, p, 8, &d, true);
  compare("bcsstk14 e8m10 -> e8m22", h, d, 1e-8);
  EXPECT_EQ(d.res.raises, 1);
}

// The several-rank path of the device driver in one process: A (a 3-D Laplacian) split as a rank
// of an MPI matrix would be: the diagonal block A_d (every coupling but the z ones) and an
// off-diagonal block A_o (the z-couplings, columns numbered as a ghost vector that the halo hooks
// gather from p through the host), with the
// reductions' hooks set (one "rank": the identity, counted). The host twin with the same split
// and hooks is the reference (compare()); the halo runs once per low-precision step; with the
// guard at 1e-300 the raise rebuilds both blocks (replace_copy() then set_offdiag()) and the FP64
// phase runs its deferred reductions.
namespace
{

using Split = pspmv_test::SplitBlocks;

struct SplitCopy {
  ScaledCopy         diag;
  PackSellMatrix     off;
  std::vector<float> comp;
};

SplitCopy split_copy(const CsrMatrix &A, const Split &sp, const std::string &format)
{
  SplitCopy c;
  c.diag = pspmv_test::test_scaled_copy(sp.Ad, format);
  PackSellOptions o;
  o.value_format = ValueFormat::parse(format);
  c.off          = pspmv_test::split_offdiag(sp, c.diag.s, o);
  c.comp         = pspmv_test::copy_compensation(A, c.diag.s, c.diag.op, &c.off);
  return c;
}

Outcome host_split_solve(const CsrMatrix &A, const Split &sp, const std::vector<double> &b, const std::vector<std::string> &ladder, const MixedCgParams &p, const Precond &pc = Precond{})
{
  size_t                    level = 0;
  SplitCopy                 c     = split_copy(A, sp, ladder[0]);
  const std::vector<double> s     = c.diag.s;
  std::vector<float>        ghost(sp.gcols.size()), tmp(size_t(A.rows));
  MixedCgOperators          ops;
  ops.lowp_product = [&](const float *x, float *y) {
    packsell_spmv_f32(c.diag.op, x, y);
    for (size_t k = 0; k < ghost.size(); ++k) ghost[k] = x[size_t(sp.gcols[k])];
    packsell_spmv_f32(c.off, ghost.data(), tmp.data());
    for (size_t i = 0; i < tmp.size(); ++i) y[i] += tmp[i];
    for (size_t i = 0; i < tmp.size(); ++i) y[i] = std::fma(c.comp[i], x[i], y[i]);
  };
  ops.exact_product   = [&](const double *x, double *y) { csr_spmv(A.view(), x, y, false); };
  ops.allreduce_sum   = [](double *, int) {};
  ops.allreduce_max   = [](double *, int) {};
  ops.raise_precision = [&]() {
    if (level + 1 >= ladder.size()) return false;
    c = split_copy(A, sp, ladder[++level]);
    return true;
  };
  ops.precondition = pc;
  std::vector<double> x(size_t(A.rows), 0.0);
  Outcome             o;
  o.res      = mixed_cg(size_t(A.rows), s.data(), b.data(), x.data(), p, ops);
  o.true_rel = pspmv_test::residual_norm(A, b.data(), x.data()) / pspmv_test::norm2(b);
  return o;
}

void device_split_solve(const CsrMatrix &A, const Split &sp, const std::vector<double> &b, const std::vector<std::string> &ladder, const MixedCgParams &p, Outcome *o, int *halos, int *sums, const Precond &pc = Precond{}, int *threes = nullptr)
{
  const size_t              n = size_t(A.rows), ng = sp.gcols.size();
  size_t                    level = 0;
  mcuda::DeviceMixedCg     *d     = nullptr;
  std::vector<double>       hx(n), hy(n);
  std::vector<float>        hp(n), hg(ng);
  mcuda::DeviceMixedCgHooks h;
  h.exact_product = [&](const double *x, double *y) {
    if (cudaMemcpy(hx.data(), x, n * sizeof(double), cudaMemcpyDeviceToHost) != cudaSuccess) throw std::runtime_error("copy");
    csr_spmv(A.view(), hx.data(), hy.data(), false);
    if (cudaMemcpy(y, hy.data(), n * sizeof(double), cudaMemcpyHostToDevice) != cudaSuccess) throw std::runtime_error("copy");
  };
  // the split's blocks at a format: the diagonal copy (create or replace_copy), the off-diagonal
  // block, the compensation with both
  auto install = [&](const std::string &format, bool first) {
    const ScaledCopy c = pspmv_test::test_scaled_copy(sp.Ad, format);
    PackSellOptions  opt;
    opt.value_format            = ValueFormat::parse(format);
    const PackSellMatrix    off = pspmv_test::split_offdiag(sp, c.s, opt);
    mcuda::DeviceScaledCopy dc;
    if (mcuda::upload(c, &dc) != cudaSuccess) throw std::runtime_error("upload");
    if ((first ? mcuda::create(&dc, &d) : mcuda::replace_copy(d, &dc)) != cudaSuccess) throw std::runtime_error("create");
    pspmv::cuda::DevicePackSell doff;
    if (pspmv::cuda::upload(off, &doff) != cudaSuccess) throw std::runtime_error("upload off");
    if (mcuda::set_offdiag(d, &doff) != cudaSuccess) throw std::runtime_error("set_offdiag");
    if (mcuda::ghost_count(d) != int32_t(ng)) throw std::runtime_error("ghost_count");
    if (mcuda::compensate(d, h.exact_product, nullptr) != cudaSuccess) throw std::runtime_error("compensate");
  };
  install(ladder[0], true);
  ASSERT_NE(d, nullptr);
  double *db = nullptr, *dx = nullptr;
  CUDA_OK(cudaMalloc(&db, n * sizeof(double)));
  CUDA_OK(cudaMalloc(&dx, n * sizeof(double)));
  CUDA_OK(cudaMemcpy(db, b.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(dx, 0, n * sizeof(double)));
  h.raise_precision = [&]() {
    if (level + 1 >= ladder.size()) return false;
    install(ladder[++level], false);
    return true;
  };
  h.allreduce_sum = [&](double *, int k) {
    EXPECT_GE(k, 1);
    ++*sums;
    if (threes && k == 3) ++*threes;
  };
  int64_t pc_calls = 0;
  if (pc) h.precondition = device_pc(pc, n, nullptr, &pc_calls);
  h.allreduce_max = [](double *, int k) { EXPECT_EQ(k, 2); };
  h.halo_begin    = [&](const float *p, float *) {
    ++*halos;
    if (cudaMemcpy(hp.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) throw std::runtime_error("copy");
  };
  h.halo_end = [&](const float *, float *ghost) {
    for (size_t k = 0; k < ng; ++k) hg[k] = hp[size_t(sp.gcols[k])];
    if (cudaMemcpy(ghost, hg.data(), ng * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess) throw std::runtime_error("copy");
  };
  CUDA_OK(mcuda::solve(d, db, dx, p, 8, h, nullptr, &o->res));
  EXPECT_EQ(o->res.pc_applications, pc_calls);
  std::vector<double> x(n);
  CUDA_OK(cudaMemcpy(x.data(), dx, n * sizeof(double), cudaMemcpyDeviceToHost));
  o->true_rel = pspmv_test::residual_norm(A, b.data(), x.data()) / pspmv_test::norm2(b);
  CUDA_OK(cudaFree(db));
  CUDA_OK(cudaFree(dx));
  CUDA_OK(mcuda::destroy(d));
}

} // namespace

TEST(MixedCgSmall, SplitOperator)
{
  const int32_t   m  = 12;
  const CsrMatrix A  = pspmv_test::laplace3d(m, m, m);
  const Split     sp = pspmv_test::split_by_distance(A, m * m);
  ASSERT_GT(sp.gcols.size(), 0u);
  const std::vector<double> b = pspmv_test::sin_rhs(A);
  {
    MixedCgParams p;
    const Outcome h = host_split_solve(A, sp, b, {"e8m14", "e8m22"}, p);
    Outcome       d;
    int           halos = 0, sums = 0;
    device_split_solve(A, sp, b, {"e8m14", "e8m22"}, p, &d, &halos, &sums);
    compare("lap 12^3 split", h, d, 1e-8);
    EXPECT_EQ(int64_t(halos), d.res.lowp_its); // one halo per low-precision step
    EXPECT_GE(int64_t(sums), 2 * d.res.its);   // (p, w) and (r', r'), (r', w) per step
    // the whole matrix on one rank: the same steps within 2
    Outcome whole;
    device_solve(A, b, {"e8m14", "e8m22"}, p, 8, &whole, true);
    EXPECT_LE(std::llabs((long long)(whole.res.its - d.res.its)), 2);
  }
  {
    MixedCgParams p;
    p.guard_departure = 1e-300; // raise to e8m22 (both blocks rebuilt), then FP64
    const Outcome h   = host_split_solve(A, sp, b, {"e8m14", "e8m22"}, p);
    Outcome       d;
    int           halos = 0, sums = 0;
    device_split_solve(A, sp, b, {"e8m14", "e8m22"}, p, &d, &halos, &sums);
    compare("lap 12^3 split, raise then FP64", h, d, 1e-8);
    EXPECT_EQ(d.res.raises, 2);
    EXPECT_TRUE(d.res.fp64);
  }
}

// A hook set half (allreduce_sum without allreduce_max, halo_begin without halo_end) or an
// off-diagonal block without the halo hooks: cudaErrorInvalidValue, nothing run.
TEST(MixedCgSmall, SplitHooksChecked)
{
  const CsrMatrix     A  = pspmv_test::laplace3d(6, 6, 6);
  const Split         sp = pspmv_test::split_by_distance(A, 36);
  const ScaledCopy    c  = pspmv_test::test_scaled_copy(sp.Ad, "e8m14");
  std::vector<double> t(sp.gcols.size());
  for (size_t k = 0; k < t.size(); ++k) t[k] = c.s[size_t(sp.gcols[k])];
  PackSellOptions opt;
  opt.value_format = ValueFormat::parse("e8m14");
  mcuda::DeviceScaledCopy dc;
  CUDA_OK(mcuda::upload(c, &dc));
  mcuda::DeviceMixedCg *d = nullptr;
  CUDA_OK(mcuda::create(&dc, &d));
  // an off-diagonal block of another value format is refused (and released)
  {
    PackSellOptions o16;
    o16.value_format = ValueFormat::parse("fp16");
    pspmv::cuda::DevicePackSell doff;
    CUDA_OK(pspmv::cuda::upload(build_scaled_offdiag(sp.Ao.view(), c.s.data(), t.data(), o16), &doff));
    EXPECT_EQ(mcuda::set_offdiag(d, &doff), cudaErrorInvalidValue);
    EXPECT_EQ(doff.words, nullptr);
    EXPECT_EQ(mcuda::ghost_count(d), 0);
  }
  pspmv::cuda::DevicePackSell doff;
  CUDA_OK(pspmv::cuda::upload(build_scaled_offdiag(sp.Ao.view(), c.s.data(), t.data(), opt), &doff));
  CUDA_OK(mcuda::set_offdiag(d, &doff));
  EXPECT_EQ(mcuda::ghost_count(d), int32_t(sp.gcols.size()));
  const size_t n  = size_t(A.rows);
  double      *db = nullptr, *dx = nullptr;
  CUDA_OK(cudaMalloc(&db, n * sizeof(double)));
  CUDA_OK(cudaMalloc(&dx, n * sizeof(double)));
  MixedCgResult             res;
  mcuda::DeviceMixedCgHooks h;
  h.exact_product = [](const double *, double *) { FAIL() << "ran"; };
  EXPECT_EQ(mcuda::solve(d, db, dx, MixedCgParams{}, 8, h, nullptr, &res), cudaErrorInvalidValue); // no halo
  h.halo_begin = [](const float *, float *) {};
  EXPECT_EQ(mcuda::solve(d, db, dx, MixedCgParams{}, 8, h, nullptr, &res), cudaErrorInvalidValue); // half the halo
  h.halo_end      = [](const float *, float *) {};
  h.allreduce_sum = [](double *, int) {};
  EXPECT_EQ(mcuda::solve(d, db, dx, MixedCgParams{}, 8, h, nullptr, &res), cudaErrorInvalidValue); // half the reductions
  CUDA_OK(cudaFree(db));
  CUDA_OK(cudaFree(dx));
  CUDA_OK(mcuda::destroy(d));
}

// A preconditioner hook (symmetric Gauss-Seidel on the host through copies): the device driver
// takes the host twin's steps (compare(): within 2, a true residual <= 1e-8), in the
// low-precision phase with the row-sum compensation and in the FP64 phase from the start; the
// hook is applied once per step (one step per read of the state) and per restart, with the
// caller's timer stopped.
TEST(MixedCgSmall, Preconditioned)
{
  const CsrMatrix           A  = pspmv_test::laplace3d(12, 12, 12);
  const std::vector<double> b  = pspmv_test::sin_rhs(A);
  const Precond             pc = sgs_pc(A);
  for (bool fp64 : {false, true}) {
    MixedCgParams p;
    p.start_fp64    = fp64;
    const Outcome h = host_solve(A, b, {"e8m14", "e8m22"}, p, true, pc);
    Outcome       d;
    int64_t       calls = 0;
    const char   *what  = fp64 ? "lap 12^3 SGS, FP64 from the start" : "lap 12^3 SGS";
    device_solve(A, b, {"e8m14", "e8m22"}, p, 8, &d, true, pc, &calls);
    compare(what, h, d, 1e-8);
    std::printf("%s: host %lld PC applications, device %lld\n", what, (long long)h.res.pc_applications, (long long)d.res.pc_applications);
    EXPECT_EQ(d.res.reason, MixedCgReason::ConvergedRtol) << what;
    EXPECT_LE(d.true_rel, 1e-8) << what;
    EXPECT_EQ(d.res.fp64, fp64) << what;
    EXPECT_GE(d.res.pc_applications, d.res.its + 1) << what;
    EXPECT_LE(std::llabs((long long)(d.res.pc_applications - h.res.pc_applications)), 3) << what;
    // SGS is stronger than the scaling alone: fewer steps than without the hook
    Outcome plain;
    device_solve(A, b, {"e8m14", "e8m22"}, p, 8, &plain, true);
    EXPECT_LT(d.res.its, plain.res.its) << what;
    EXPECT_EQ(plain.res.pc_applications, 0) << what;
  }
}

// The FP32 form z = float(E M_hat^-1 E r) of a preconditioner on the host (s the copy's scaling,
// M_hat^-1 = S^-1 M^-1 S^-1), E = I (sound: M_hat^-1 rounded) or a fixed diagonal of entries from
// 1e-3 to 1 (distorted: SPD, far from M_hat^-1); device(): the same on device arrays through
// host copies.
struct LowpForm {
  Precond             pc;
  std::vector<double> s, e;
  LowpForm(const Precond &m, const std::vector<double> &scaling, bool distorted) : pc(m), s(scaling), e(scaling.size(), 1.0)
  {
    uint32_t seed = 12345u;
    for (double &ei : e) {
      seed = seed * 1664525u + 1013904223u;
      if (distorted) ei = std::pow(10.0, -3.0 * double(seed >> 8) / double(1u << 24));
    }
  }
  void apply(const float *r, float *z) const
  {
    std::vector<double> v(s.size()), u(s.size());
    for (size_t i = 0; i < s.size(); ++i) v[i] = e[i] * double(r[i]) / s[i];
    pc(v.data(), u.data());
    for (size_t i = 0; i < s.size(); ++i) z[i] = float(e[i] * u[i] / s[i]);
  }
  LowpPrecond host() const
  {
    return [this](const float *r, float *z) { apply(r, z); };
  }
  LowpPrecond device() const
  {
    return [this](const float *r, float *z) {
      std::vector<float> hr(s.size()), hz(s.size());
      if (cudaMemcpy(hr.data(), r, s.size() * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) throw std::runtime_error("copy r");
      apply(hr.data(), hz.data());
      if (cudaMemcpy(z, hz.data(), s.size() * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess) throw std::runtime_error("copy z");
    };
  }
};

// The guard's check of a reduced-precision preconditioner (mixed_cg.hpp): a segment of
// guard_pc_steps steps without a trigger ends with a reliable update and the FP32 form is
// compared with the FP64 preconditioner on the new residual. The device driver takes the host
// twin's decisions: the sound form (checked every 3 steps) passes every check without a raise,
// the distorted one (checked after 10) raises at its first check, then FP64 PCG; the same steps
// (compare()), checks and raises, a true residual <= 1e-8.
TEST(MixedCgSmall, ReducedPreconditionerChecked)
{
  const CsrMatrix           A  = pspmv_test::laplace3d(12, 12, 12);
  const std::vector<double> b  = pspmv_test::sin_rhs(A);
  const Precond             pc = sgs_pc(A);
  const std::vector<double> s  = pspmv_test::test_scaled_copy(A, "e8m14").s;
  for (bool distorted : {false, true}) {
    const LowpForm f(pc, s, distorted);
    MixedCgParams  p;
    p.guard_pc_steps   = distorted ? 10 : 3;
    const char   *what = distorted ? "lap 12^3 SGS distorted in FP32" : "lap 12^3 SGS in FP32";
    const Outcome h    = host_solve(A, b, {"e8m14"}, p, true, pc, f.host());
    Outcome       d;
    device_solve(A, b, {"e8m14"}, p, 8, &d, true, pc, nullptr, f.device());
    compare(what, h, d, 1e-8);
    std::printf("%s: checks host %lld device %lld, last departure host %.3e device %.3e\n", what, (long long)h.res.pc_checks, (long long)d.res.pc_checks, h.res.pc_departure, d.res.pc_departure);
    EXPECT_EQ(d.res.reason, MixedCgReason::ConvergedRtol) << what;
    EXPECT_GE(d.res.pc_checks, 1) << what;
    EXPECT_LE(std::llabs((long long)(d.res.pc_checks - h.res.pc_checks)), 1) << what;
    EXPECT_EQ(d.res.raises, distorted ? 1 : 0) << what;
    EXPECT_EQ(d.res.fp64, distorted) << what;
    if (distorted) EXPECT_GT(d.res.pc_departure, 0.2) << what;
    else EXPECT_LT(d.res.pc_departure, 1e-5) << what;
    if (!distorted) // no segment longer than the bound, on either driver
      for (const Outcome *o : {&h, static_cast<const Outcome *>(&d)})
        for (size_t u = 0; u < o->res.updates.size(); ++u) EXPECT_LE(o->res.updates[u].its - (u ? o->res.updates[u - 1].its : 0), p.guard_pc_steps) << what << (o == &h ? " host" : " device") << " update " << u;
  }
}

// A "preconditioner" that is not positive definite (u = -v) ends the device solve with
// DivergedIndefinite, in the low-precision and in the FP64 phase; a NaN one with
// DivergedNanOrInf; the same reasons as the host twin's.
TEST(MixedCgSmall, PreconditionerRefused)
{
  const CsrMatrix           A   = pspmv_test::laplace3d(8, 8, 8);
  const std::vector<double> b   = pspmv_test::sin_rhs(A);
  const Precond             neg = pspmv_test::negated_pc(size_t(A.rows)), nan = pspmv_test::nan_pc(size_t(A.rows));
  for (bool fp64 : {false, true}) {
    MixedCgParams p;
    p.start_fp64 = fp64;
    Outcome d;
    device_solve(A, b, {"e8m14", "e8m22"}, p, 8, &d, false, neg);
    EXPECT_EQ(d.res.reason, MixedCgReason::DivergedIndefinite) << "fp64 " << fp64;
    EXPECT_EQ(d.res.reason, host_solve(A, b, {"e8m14", "e8m22"}, p, false, neg).res.reason) << "fp64 " << fp64;
    EXPECT_EQ(d.res.its, 0);
    Outcome e;
    device_solve(A, b, {"e8m14", "e8m22"}, p, 8, &e, false, nan);
    EXPECT_EQ(e.res.reason, MixedCgReason::DivergedNanOrInf) << "fp64 " << fp64;
    EXPECT_EQ(e.res.reason, host_solve(A, b, {"e8m14", "e8m22"}, p, false, nan).res.reason) << "fp64 " << fp64;
  }
}

// The several-rank path with a preconditioner (the split operator of SplitOperator, the
// identity reductions): the host twin's steps; (r', r'), (r', w) and (r', z) of a step summed over
// the ranks in one call; also through the guard's raise and the FP64 phase.
TEST(MixedCgSmall, SplitOperatorPreconditioned)
{
  const int32_t             m  = 12;
  const CsrMatrix           A  = pspmv_test::laplace3d(m, m, m);
  const Split               sp = pspmv_test::split_by_distance(A, m * m);
  const std::vector<double> b  = pspmv_test::sin_rhs(A);
  const Precond             pc = sgs_pc(A);
  for (bool raise : {false, true}) {
    MixedCgParams p;
    if (raise) p.guard_departure = 1e-300; // raise to e8m22, then FP64
    const char   *what = raise ? "lap 12^3 split SGS, raise then FP64" : "lap 12^3 split SGS";
    const Outcome h    = host_split_solve(A, sp, b, {"e8m14", "e8m22"}, p, pc);
    Outcome       d;
    int           halos = 0, sums = 0, threes = 0;
    device_split_solve(A, sp, b, {"e8m14", "e8m22"}, p, &d, &halos, &sums, pc, &threes);
    compare(what, h, d, 1e-8);
    EXPECT_EQ(int64_t(halos), d.res.lowp_its) << what;
    EXPECT_GE(int64_t(threes), d.res.its) << what; // one sum of three per step (and per restart)
    if (raise) {
      EXPECT_EQ(d.res.raises, 2) << what;
      EXPECT_TRUE(d.res.fp64) << what;
    }
  }
}

TEST(MixedCgLarge, PreconditionedLaplacian32)
{
  const CsrMatrix           A  = pspmv_test::laplace3d(32, 32, 32);
  const std::vector<double> b  = pspmv_test::sin_rhs(A);
  const Precond             pc = sgs_pc(A);
  MixedCgParams             p;
  const Outcome             h = host_solve(A, b, {"e8m14", "e8m22"}, p, true, pc);
  Outcome                   d;
  device_solve(A, b, {"e8m14", "e8m22"}, p, 8, &d, true, pc);
  compare("lap 32^3 SGS", h, d, 1e-8);
}

// A solver used with the hook, again with it, then without it: the preconditioner's buffers
// (allocated at the first solve with the hook) are kept and the second solve is the first's
// (the device's reductions are deterministic); the solve without the hook is the plain method's,
// a fresh solver's bit for bit.
TEST(MixedCgSmall, PreconditionerBuffersReused)
{
  const CsrMatrix           A  = pspmv_test::laplace3d(10, 10, 10);
  const std::vector<double> b  = pspmv_test::sin_rhs(A);
  const size_t              n  = size_t(A.rows);
  const Precond             pc = sgs_pc(A);
  mcuda::DeviceScaledCopy   dc;
  CUDA_OK(mcuda::upload(pspmv_test::test_scaled_copy(A, "e8m14"), &dc));
  mcuda::DeviceMixedCg *d = nullptr;
  CUDA_OK(mcuda::create(&dc, &d));
  double *db = nullptr, *dx = nullptr;
  CUDA_OK(cudaMalloc(&db, n * sizeof(double)));
  CUDA_OK(cudaMalloc(&dx, n * sizeof(double)));
  CUDA_OK(cudaMemcpy(db, b.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  std::vector<double>       hx(n), hy(n);
  mcuda::DeviceMixedCgHooks h;
  h.exact_product = [&](const double *x, double *y) {
    if (cudaMemcpy(hx.data(), x, n * sizeof(double), cudaMemcpyDeviceToHost) != cudaSuccess) throw std::runtime_error("copy");
    csr_spmv(A.view(), hx.data(), hy.data(), false);
    if (cudaMemcpy(y, hy.data(), n * sizeof(double), cudaMemcpyHostToDevice) != cudaSuccess) throw std::runtime_error("copy");
  };
  MixedCgResult r[3];
  int64_t       calls = 0;
  for (int k = 0; k < 3; ++k) {
    h.precondition = k < 2 ? device_pc(pc, n, nullptr, &calls) : nullptr;
    CUDA_OK(cudaMemset(dx, 0, n * sizeof(double)));
    CUDA_OK(mcuda::solve(d, db, dx, MixedCgParams{}, 8, h, nullptr, &r[k]));
    EXPECT_EQ(r[k].reason, MixedCgReason::ConvergedRtol) << k;
  }
  EXPECT_EQ(r[1].its, r[0].its);
  EXPECT_EQ(r[1].rnorm, r[0].rnorm);
  EXPECT_EQ(r[0].pc_applications + r[1].pc_applications, calls);
  Outcome plain;
  device_solve(A, b, {"e8m14"}, MixedCgParams{}, 8, &plain);
  EXPECT_EQ(r[2].its, plain.res.its);
  EXPECT_EQ(r[2].rnorm, plain.res.rnorm);
  EXPECT_EQ(r[2].pc_applications, 0);
  EXPECT_LT(r[0].its, r[2].its);
  CUDA_OK(cudaFree(db));
  CUDA_OK(cudaFree(dx));
  CUDA_OK(mcuda::destroy(d));
}

// The FP32 V-cycle as the low-precision phase's preconditioner: the device cycle
// (mg_cycle_device.hpp) in the device driver against the host cycle in the host twin, the levels'
// emax given to both (the cycles then agree bit for bit); the FP64 phase's preconditioner the
// same cycle in the unscaled units (M^-1 v = S M_hat_lp^-1 (S v)). The same steps within 2, the
// low-precision phase's z all from the cycle, the true residual below 1e-8.
TEST(MixedCgSmall, DeviceVcycle)
{
  const pspmv_test::Hierarchy h    = pspmv_test::four_level();
  const CsrMatrix            &A    = h.A.back();
  const size_t                n    = size_t(A.rows);
  const std::vector<double>   b    = pspmv_test::sin_rhs(A);
  const MgCycleOptions        o    = pspmv_test::options("e8m14");
  const std::vector<double>   emax = pspmv_test::emax_of(MgCycle::build(pspmv_test::inputs(h), o));
  const MgCycle               host = MgCycle::build(pspmv_test::inputs(h, emax), o);
  const pspmv_test::Cholesky  chol(h.A[0]);
  const std::vector<double>  &s         = host.scaling(host.num_levels() - 1);
  const auto                  coarse    = [&](const double *bb, double *x) { chol.solve(bb, x); };
  const LowpPrecond           host_lowp = [&](const float *r, float *z) { host.apply(r, z, coarse); };
  const Precond               fp64      = [&](const double *v, double *u) {
    std::vector<float> r(n), z(n);
    for (size_t i = 0; i < n; ++i) r[i] = float(s[i] * v[i]);
    host.apply(r.data(), z.data(), coarse);
    for (size_t i = 0; i < n; ++i) u[i] = s[i] * double(z[i]);
  };
  gputest::DeviceHierarchy dh(h, emax);
  mcuda::DeviceMgCycle    *dev = nullptr;
  CUDA_OK(mcuda::build_mg_cycle_on_device(dh.in, o, nullptr, &dev));
  const auto        dcoarse  = gputest::host_coarse_solve(chol, size_t(h.A[0].rows));
  const LowpPrecond dev_lowp = [&](const float *r, float *z) {
    if (mcuda::apply_mg_cycle(dev, r, z, dcoarse, nullptr) != cudaSuccess) throw std::runtime_error("apply_mg_cycle");
  };
  MixedCgParams p;
  const Outcome hs = host_solve(A, b, {"e8m14", "e8m22"}, p, false, fp64, host_lowp);
  Outcome       d;
  int64_t       calls = 0;
  device_solve(A, b, {"e8m14", "e8m22"}, p, 8, &d, false, fp64, &calls, dev_lowp);
  compare("127^2 4-level V-cycle", hs, d, 1e-8);
  std::printf("127^2 4-level V-cycle: host %lld FP32 cycles of %lld PC applications, device %lld of %lld\n", (long long)hs.res.pc_lowp_applications, (long long)hs.res.pc_applications, (long long)d.res.pc_lowp_applications, (long long)d.res.pc_applications);
  EXPECT_EQ(d.res.reason, MixedCgReason::ConvergedRtol);
  EXPECT_LE(d.true_rel, 1e-8);
  EXPECT_GE(d.res.pc_lowp_applications, d.res.lowp_its);
  EXPECT_LE(std::llabs((long long)(d.res.pc_lowp_applications - hs.res.pc_lowp_applications)), 3);
  EXPECT_LT(d.res.its, 40); // a V-cycle: a few dozen steps at most on this 127^2 problem
  CUDA_OK(mcuda::destroy(dev));
}
