// The FP32 V-cycle's device twin (src/mixed/mg_cycle_device.hpp) against its host twin
// (mg_cycle.hpp) on the hierarchies of tests/support/mg_hierarchies.hpp: with the levels' emax
// given, z bit for bit for every value format, on 2 and 4 levels, with Chebyshev degrees 1 to 5
// (every rotation of the smoother's iterates), with levels handed to the coarse solve
// (fp32_min_rows), with r and z the same array; the Lanczos estimate close to the host's; info();
// every error with the host's type, fields and message; the null space's projection within
// FP32's rounding of the host's. Suite MgCycleSmall (sanitizer subset).
#include "core_errors.hpp"
#include "device_hierarchy.hpp"
#include "mixed/mg_cycle.hpp"
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

using namespace gputest;
using namespace pspmv;
using namespace pspmv::mixed;
using namespace pspmv_test;
namespace mc = pspmv::mixed::cuda;

namespace
{

// A device cycle destroyed at scope exit.
struct Cycle {
  mc::DeviceMgCycle *m = nullptr;
  ~Cycle() { EXPECT_EQ(mc::destroy(m), cudaSuccess); }
};

std::vector<float> host_apply(const MgCycle &c, const std::vector<float> &r, const Cholesky &chol)
{
  std::vector<float> z(r.size());
  c.apply(r.data(), z.data(), [&](const double *b, double *x) { chol.solve(b, x); });
  return z;
}

// z of the device cycle for r (in_place: r and z the same array).
std::vector<float> device_apply(const mc::DeviceMgCycle *m, const std::vector<float> &r, const Cholesky &chol, size_t coarse_rows, bool in_place = false)
{
  DeviceArray<float> dr(r.size()), dz(r.size());
  dr.upload(r);
  EXPECT_EQ(mc::apply_mg_cycle(m, dr.get(), in_place ? dr.get() : dz.get(), host_coarse_solve(chol, coarse_rows), nullptr), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return in_place ? dr.download() : dz.download();
}

void expect_same_z(const std::vector<float> &h, const std::vector<float> &d, const std::string &w)
{
  ASSERT_EQ(h.size(), d.size()) << w;
  size_t diff = 0, first = h.size();
  for (size_t i = 0; i < h.size(); ++i)
    if (std::memcmp(&h[i], &d[i], sizeof(float)) != 0) {
      if (first == h.size()) first = i;
      ++diff;
    }
  EXPECT_EQ(diff, 0u) << w << ": " << diff << " entries differ, the first at " << first << ": " << (first < h.size() ? h[first] : 0.f) << " vs " << (first < h.size() ? d[first] : 0.f);
}

// The host and device cycles of h with options o and the host's emax given to both: z of both
// for two right-hand sides, bit for bit; the coarse solve a dense Cholesky of the coarse level
// (at most 1024 rows, the 2-level hierarchy's 32^2: its cost is cubic).
void check_bit_for_bit(const Hierarchy &h, MgCycleOptions o, const std::string &w)
{
  const std::vector<double> emax = emax_of(MgCycle::build(inputs(h), o));
  const MgCycle             host = MgCycle::build(inputs(h, emax), o);
  const int                 c    = host.coarse_level();
  ASSERT_LE(h.A[size_t(c)].rows, 1024) << w;
  const Cholesky  chol(h.A[size_t(c)]);
  DeviceHierarchy dh(h, emax);
  Cycle           dev;
  ASSERT_EQ(mc::build_mg_cycle_on_device(dh.in, o, nullptr, &dev.m), cudaSuccess) << w;
  ASSERT_NE(dev.m, nullptr);
  EXPECT_EQ(mc::coarse_level(dev.m), c) << w;
  EXPECT_EQ(mc::num_levels(dev.m), host.num_levels()) << w;
  for (uint64_t seed : {3u, 17u}) {
    const std::vector<float> r = pspmv_test::random_vector(size_t(h.A.back().rows), seed);
    expect_same_z(host_apply(host, r, chol), device_apply(dev.m, r, chol, size_t(h.A[size_t(c)].rows)), w + " seed " + std::to_string(seed));
  }
}

} // namespace

TEST(MgCycleSmall, BitForBitEveryFormat)
{
  for (const char *f : {"e8m14", "e8m7", "bf16", "fp16", "e8m22", "exact"}) {
    check_bit_for_bit(two_level(), options(f), std::string("2 levels ") + f);
    check_bit_for_bit(four_level(), options(f), std::string("4 levels ") + f);
  }
}

TEST(MgCycleSmall, BitForBitEveryChebyshevDegree)
{
  for (int m : {1, 2, 3, 4, 5}) {
    MgCycleOptions o = options("e8m14");
    o.smooth_steps   = m;
    check_bit_for_bit(four_level(), o, "4 levels degree " + std::to_string(m));
  }
}

TEST(MgCycleSmall, BitForBitWithLevelsInTheCoarseSolve)
{
  MgCycleOptions o = options("e8m14");
  o.fp32_min_rows  = 1000; // levels 0 and 1 (225 and 961 rows) are the coarse solve's
  check_bit_for_bit(four_level(), o, "coarse level 1");
  o.fp32_min_rows = 1 << 30; // every level: the cycle is the finest level's coarse solve (24^2, 2 levels)
  check_bit_for_bit(galerkin(varcoef_laplace(24, coefficient1), {aggregation_P(24)}), o, "coarse level 1 of 2");
}

TEST(MgCycleSmall, InPlace)
{
  const Hierarchy          h    = four_level();
  const MgCycle            host = MgCycle::build(inputs(h), options("e8m14"));
  const Cholesky           chol(h.A[0]);
  DeviceHierarchy          dh(h, emax_of(host));
  Cycle                    dev;
  const std::vector<float> r = pspmv_test::random_vector(size_t(h.A.back().rows), 5);
  ASSERT_EQ(mc::build_mg_cycle_on_device(dh.in, options("e8m14"), nullptr, &dev.m), cudaSuccess);
  expect_same_z(device_apply(dev.m, r, chol, size_t(h.A[0].rows)), device_apply(dev.m, r, chol, size_t(h.A[0].rows), true), "r == z");
}

// The Lanczos estimate on the device sums in another order than the host's: emax within 1e-6,
// the cycle within FP32 rounding of the host's; info() as the host's.
TEST(MgCycleSmall, EstimateAndInfo)
{
  const Hierarchy h = four_level();
  for (const char *f : {"e8m14", "fp16"}) {
    const MgCycle   host = MgCycle::build(inputs(h), options(f));
    DeviceHierarchy dh(h);
    Cycle           dev;
    ASSERT_EQ(mc::build_mg_cycle_on_device(dh.in, options(f), nullptr, &dev.m), cudaSuccess);
    const std::vector<MgLevelInfo> hi = host.info(), di = mc::mg_cycle_info(dev.m);
    ASSERT_EQ(hi.size(), di.size());
    for (size_t l = 0; l < hi.size(); ++l) {
      const std::string w = std::string(f) + " level " + std::to_string(l);
      EXPECT_EQ(di[l].rows, hi[l].rows) << w;
      EXPECT_EQ(di[l].nnz, hi[l].nnz) << w;
      EXPECT_EQ(di[l].value_format, hi[l].value_format) << w;
      EXPECT_EQ(di[l].lowp, hi[l].lowp) << w;
      EXPECT_EQ(di[l].bytes_per_nnz, hi[l].bytes_per_nnz) << w;
      EXPECT_EQ(di[l].p_nnz, hi[l].p_nnz) << w;
      EXPECT_EQ(di[l].p_bytes_per_nnz, hi[l].p_bytes_per_nnz) << w;
      if (hi[l].lowp) EXPECT_NEAR(di[l].emax, hi[l].emax, 1e-6 * hi[l].emax) << w;
      std::printf("  %s: emax host %.17g device %.17g\n", w.c_str(), hi[l].emax, di[l].emax);
    }
    const Cholesky           chol(h.A[0]);
    const std::vector<float> r  = pspmv_test::random_vector(size_t(h.A.back().rows), 9);
    const std::vector<float> zh = host_apply(host, r, chol), zd = device_apply(dev.m, r, chol, size_t(h.A[0].rows));
    double                   num = 0, den = 0;
    for (size_t i = 0; i < zh.size(); ++i) {
      num += double(zh[i] - zd[i]) * double(zh[i] - zd[i]);
      den += double(zh[i]) * double(zh[i]);
    }
    EXPECT_LT(std::sqrt(num / den), 1e-5) << f;
  }
}

// Every refusal of the host build, with the host's exception, fields and message; nothing kept.
TEST(MgCycleSmall, Errors)
{
  const Hierarchy base = four_level();
  struct Case {
    const char                                        *what;
    std::function<void(Hierarchy &, MgCycleOptions &)> spoil;
  };
  const Case cases[] = {
    {"smooth_steps 0", [](Hierarchy &, MgCycleOptions &o) { o.smooth_steps = 0; }},
    {"eig_lo >= eig_hi", [](Hierarchy &, MgCycleOptions &o) { o.eig_lo = 2.0; }},
    {"no levels", [](Hierarchy &h, MgCycleOptions &) { h.A.clear(), h.P.clear(); }},
    {"P of the wrong shape", [](Hierarchy &h, MgCycleOptions &) { h.P[2] = h.P[3]; }},
    {"P with NaN", [](Hierarchy &h, MgCycleOptions &) { h.P[2].values[7] = std::numeric_limits<double>::quiet_NaN(); }},
    {"P with Inf", [](Hierarchy &h, MgCycleOptions &) { h.P[3].values[4] = std::numeric_limits<double>::infinity(); }},
    {"P beyond the value format", [](Hierarchy &h, MgCycleOptions &) { h.P[3].values[4] = 1e300; }},
    {"P not a CSR", [](Hierarchy &h, MgCycleOptions &) { h.P[1].colidx[2] = 1 << 20; }},
    {"zero diagonal on an FP32 level",
     [](Hierarchy &h, MgCycleOptions &) {
       for (int32_t k = h.A[2].rowptr[5]; k < h.A[2].rowptr[6]; ++k)
         if (h.A[2].colidx[size_t(k)] == 5) h.A[2].values[size_t(k)] = 0.0;
     }},
    {"negative diagonal on the coarse level",
     [](Hierarchy &h, MgCycleOptions &) {
       for (int32_t k = h.A[0].rowptr[3]; k < h.A[0].rowptr[4]; ++k)
         if (h.A[0].colidx[size_t(k)] == 3) h.A[0].values[size_t(k)] = -1.0;
     }},
    {"NaN in an FP32 level's operator", [](Hierarchy &h, MgCycleOptions &) { h.A[2].values[11] = std::numeric_limits<double>::quiet_NaN(); }},
  };
  for (const Case &c : cases) {
    Hierarchy      h = base;
    MgCycleOptions o = options("e8m14");
    c.spoil(h, o);
    const Thrown host = catch_core([&] { (void)MgCycle::build(inputs(h), o); });
    ASSERT_FALSE(host.kind.empty()) << c.what << ": the host builds it";
    DeviceHierarchy    dh(h);
    mc::DeviceMgCycle *m   = reinterpret_cast<mc::DeviceMgCycle *>(1);
    cudaError_t        err = cudaSuccess;
    const Thrown       dev = catch_core([&] { err = mc::build_mg_cycle_on_device(dh.in, o, nullptr, &m); });
    EXPECT_EQ(err, cudaSuccess) << c.what;
    EXPECT_EQ(m, nullptr) << c.what;
    expect_same_error(host, dev, c.what);
    std::printf("  %s: %s\n", c.what, dev.what.c_str());
  }
}

// The coarse level solved by its dense inverse: the device's column-order FP64 sums are the
// host's, bit for bit; the hook is not called.
TEST(MgCycleSmall, BitForBitDenseCoarse)
{
  const Hierarchy     h = four_level();
  const Cholesky      chol(h.A[0]);
  const size_t        n0 = size_t(h.A[0].rows);
  std::vector<double> inv(n0 * n0), e(n0);
  for (size_t j = 0; j < n0; ++j) {
    std::fill(e.begin(), e.end(), 0.0);
    e[j] = 1.0;
    chol.solve(e.data(), inv.data() + j * n0);
  }
  const MgCycleOptions      o    = options("e8m14");
  const std::vector<double> emax = emax_of(MgCycle::build(inputs(h), o));
  std::vector<MgLevelInput> in   = inputs(h, emax);
  in[0].inverse                  = inv.data();
  const MgCycle   host           = MgCycle::build(in, o);
  DeviceHierarchy dh(h, emax);
  dh.in[0].inverse = inv.data();
  Cycle dev;
  ASSERT_EQ(mc::build_mg_cycle_on_device(dh.in, o, nullptr, &dev.m), cudaSuccess);
  EXPECT_TRUE(mc::mg_cycle_info(dev.m)[0].dense_inverse);
  const std::vector<float> r = pspmv_test::random_vector(size_t(h.A.back().rows), 23);
  std::vector<float>       zh(r.size());
  host.apply(r.data(), zh.data());
  DeviceArray<float> dr(r.size()), dz(r.size());
  dr.upload(r);
  ASSERT_EQ(mc::apply_mg_cycle(dev.m, dr.get(), dz.get(), {}, nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expect_same_z(zh, dz.download(), "dense coarse inverse");
}

// The null space's projection on the device (set_null_space()): the constant and a second
// orthonormal vector removed from z as by the host twin: z within FP32's rounding of the host's
// (the projection's sums are the device's grid reductions; the cycle before it is bit for bit);
// a basis of the wrong length is refused with the host's FormatError and the projection kept; an
// empty basis clears it (bit for bit again).
TEST(MgCycleSmall, NullSpaceRemoved)
{
  const Hierarchy           h    = two_level();
  const MgCycleOptions      o    = MgCycleOptions{};
  const std::vector<double> emax = emax_of(MgCycle::build(inputs(h), o));
  MgCycle                   host = MgCycle::build(inputs(h, emax), o);
  const size_t              n = size_t(h.A.back().rows), nc = size_t(h.A[0].rows);
  std::vector<double>       c(n, 1.0 / std::sqrt(double(n))), v(n);
  double                    vv = 0.0, vc = 0.0;
  for (size_t i = 0; i < n; ++i) vc += (v[i] = std::sin(0.37 * double(i)));
  for (size_t i = 0; i < n; ++i) vv += (v[i] -= vc / double(n)) * v[i];
  for (double &x : v) x /= std::sqrt(vv);
  const std::vector<std::vector<double>> basis = {c, v};
  const Cholesky                         chol(h.A[0]);
  DeviceHierarchy                        dh(h, emax);
  Cycle                                  dev;
  ASSERT_EQ(mc::build_mg_cycle_on_device(dh.in, o, nullptr, &dev.m), cudaSuccess);
  host.set_null_space(basis);
  ASSERT_EQ(mc::set_null_space(dev.m, basis, nullptr), cudaSuccess);
  const std::vector<float> r     = pspmv_test::random_vector(n, 9);
  auto                     close = [&](const std::vector<float> &a, const std::vector<float> &b, const char *w) {
    double m = 0.0;
    for (float x : a) m = std::max(m, std::fabs(double(x)));
    for (size_t i = 0; i < n; ++i) EXPECT_NEAR(double(a[i]), double(b[i]), 1e-6 * m) << w << " row " << i;
  };
  close(host_apply(host, r, chol), device_apply(dev.m, r, chol, nc), "projected");
  EXPECT_THROW((void)mc::set_null_space(dev.m, {std::vector<double>(n - 1, 0.0)}, nullptr), FormatError);
  close(host_apply(host, r, chol), device_apply(dev.m, r, chol, nc), "after a refusal");
  host.set_null_space({});
  ASSERT_EQ(mc::set_null_space(dev.m, {}, nullptr), cudaSuccess);
  expect_same_z(host_apply(host, r, chol), device_apply(dev.m, r, chol, nc), "cleared");
}
