// The scaled copy built on the device (mixed/scaled_copy_device.hpp) against the host's
// build_scaled_copy + upload: s, every layout array, the statistics bit for bit; value updates
// against the host update and a fresh device build; every error (invalid CSR, non-square,
// diagonal missing / zero / negative / not finite, non-finite entry, value out of range) with
// the host's exception type, row, column, value and message, and the copy untouched by a
// refused update. Suites DeviceScaledCopySmall* (sanitizer subset), DeviceScaledCopyRandom and
// DeviceScaledCopyFiles / SmallDeviceScaledCopyFiles over the shared matrices.
#include "core_errors.hpp"
#include "device_compare.hpp"
#include "matrix_market.hpp"
#include "mixed/scaled_copy_device.hpp"
#include "mixed_systems.hpp"
#include "shared_matrices.hpp"
#include <cmath>
#include <functional>
#include <limits>

using namespace gputest;
using namespace pspmv;
using pspmv_test::RowEntry;
namespace mc = pspmv::mixed::cuda;

namespace
{

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

void expect_same_copy(const mc::DeviceScaledCopy &ref, const mc::DeviceScaledCopy &d, const std::string &w)
{
  expect_bits(dl(ref.s, ref.op.rows), dl(d.s, d.op.rows), w + ": s");
  EXPECT_EQ(ref.nnz, d.nnz) << w;
  expect_same(ref.op, d.op, w);
  expect_stats(ref.stats, d.stats, w + " (stats)");
}

// A's values changed, its pattern kept: the diagonal times 1.5 + (i mod 3), the others times
// 0.3 + (k mod 5) / 4 (so s and A_hat both change; a positive diagonal stays positive).
HostCsr new_values(const HostCsr &A)
{
  HostCsr B = A;
  for (int32_t i = 0; i < B.rows; ++i)
    for (int32_t k = B.rowptr[size_t(i)]; k < B.rowptr[size_t(i) + 1]; ++k) B.values[size_t(k)] *= B.colidx[size_t(k)] == i ? 1.5 + i % 3 : 0.3 + (k % 5) * 0.25;
  return B;
}

// Host build + upload against the device build (or the host's error against the device's), then
// the value update with B against the host update and against a fresh device build of B.
void check_copy(const HostCsr &A, const PackSellOptions &o, const std::string &w)
{
  cudaStream_t         s = test_stream();
  DevCsr               dA(A);
  mixed::ScaledCopy    host;
  const Thrown         herr = catch_core([&] { host = mixed::build_scaled_copy(A.view(), o); });
  mc::DeviceScaledCopy dev;
  cudaError_t          cerr = cudaSuccess;
  const Thrown         derr = catch_core([&] { cerr = mc::build_scaled_copy_on_device(dA.v, o, s, &dev); });
  ASSERT_CUDA(cerr);
  if (!herr.kind.empty()) {
    expect_same_error(herr, derr, w + " (build)");
    EXPECT_EQ(dev.s, nullptr) << w << ": a refused build keeps nothing";
    EXPECT_EQ(dev.op.words, nullptr) << w;
    EXPECT_CUDA(mc::release(&dev));
    return;
  }
  ASSERT_TRUE(derr.kind.empty()) << w << ": the device refused what the host accepts: " << derr.what;
  mc::DeviceScaledCopy ref;
  ASSERT_CUDA(mc::upload(host, &ref));
  expect_same_copy(ref, dev, w + " (build)");

  const HostCsr B   = new_values(A);
  const Thrown  hup = catch_core([&] { mixed::update_scaled_copy(B.view(), host); });
  dA.values.upload(B.values);
  bool         changed = true;
  const Thrown dup     = catch_core([&] { cerr = mc::update_scaled_copy_on_device(dA.v, s, &dev, &changed); });
  ASSERT_CUDA(cerr);
  if (!hup.kind.empty()) {
    expect_same_error(hup, dup, w + " (update)");
  } else {
    ASSERT_TRUE(dup.kind.empty()) << w << ": " << dup.what;
    EXPECT_FALSE(changed) << w;
    ASSERT_CUDA(mc::upload(host, &ref));
    expect_same_copy(ref, dev, w + " (update against the host update)");
    mc::DeviceScaledCopy fresh;
    ASSERT_CUDA(mc::build_scaled_copy_on_device(dA.v, o, s, &fresh));
    expect_same_copy(fresh, dev, w + " (update against a fresh build)");
    EXPECT_CUDA(mc::release(&fresh));
  }
  EXPECT_CUDA(mc::release(&ref));
  EXPECT_CUDA(mc::release(&dev));
}

PackSellOptions options(const ValueFormat &f, const char *hybrid, int32_t sigma, PackSellScaling sc = PackSellScaling::None)
{
  PackSellOptions o;
  o.value_format = f;
  o.hybrid       = HybridOption::parse(hybrid);
  o.sigma        = sigma;
  o.scaling      = f.lossy() ? sc : PackSellScaling::None;
  return o;
}

std::string name(const PackSellOptions &o)
{
  return o.value_format.name() + " hybrid " + o.hybrid.name() + " sigma " + (o.sigma == kPackSellSigmaAuto ? "auto" : std::to_string(o.sigma)) + (o.scaling == PackSellScaling::Auto ? " scaling auto" : "");
}

// e8m14 (the PC's default), fp16, bf16, exact; hybrid auto and none; sigma 1 and auto (full),
// or e8m14 and fp16 with hybrid auto, sigma auto.
std::vector<PackSellOptions> copy_options(bool full)
{
  std::vector<PackSellOptions> v;
  if (!full) {
    for (const ValueFormat &f : {ValueFormat::e8m(14), ValueFormat::fp16()}) v.push_back(options(f, "auto", kPackSellSigmaAuto));
    return v;
  }
  for (const ValueFormat &f : {ValueFormat::e8m(14), ValueFormat::fp16(), ValueFormat::bf16(), ValueFormat::exact()})
    for (const char *h : {"auto", "none"})
      for (int32_t sigma : {1, kPackSellSigmaAuto}) v.push_back(options(f, h, sigma));
  v.push_back(options(ValueFormat::fp16(), "auto", 1, PackSellScaling::Auto));
  return v;
}

void all_options(const HostCsr &A, const std::string &label, bool full = true)
{
  for (const PackSellOptions &o : copy_options(full)) check_copy(A, o, label + " " + name(o));
}

// A refused update leaves every array of the copy as it was.
void expect_refused_update(const HostCsr &A, const HostCsr &B, const PackSellOptions &o, const std::string &w)
{
  cudaStream_t         s = test_stream();
  DevCsr               dA(A);
  mc::DeviceScaledCopy dev, before;
  ASSERT_CUDA(mc::build_scaled_copy_on_device(dA.v, o, s, &dev));
  ASSERT_CUDA(mc::build_scaled_copy_on_device(dA.v, o, s, &before));
  mixed::ScaledCopy host = mixed::build_scaled_copy(A.view(), o);
  const Thrown      herr = catch_core([&] { mixed::update_scaled_copy(B.view(), host); });
  ASSERT_FALSE(herr.kind.empty()) << w << ": the host accepts the update, the test checks nothing";
  dA.values.upload(B.values);
  bool         changed = false;
  cudaError_t  cerr    = cudaSuccess;
  const Thrown derr    = catch_core([&] { cerr = mc::update_scaled_copy_on_device(dA.v, s, &dev, &changed); });
  ASSERT_CUDA(cerr);
  expect_same_error(herr, derr, w);
  expect_same_copy(before, dev, w + ": the copy after a refused update");
  EXPECT_CUDA(mc::release(&dev));
  EXPECT_CUDA(mc::release(&before));
}

HostCsr tridiagonal(int32_t n)
{
  std::vector<std::vector<RowEntry>> rows(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    if (i > 0) rows[size_t(i)].push_back({i - 1, -1.0 - 0.01 * (i % 7)});
    rows[size_t(i)].push_back({i, 4.0 + 0.37 * (i % 11)});
    if (i + 1 < n) rows[size_t(i)].push_back({i + 1, -1.0 - 0.01 * ((i + 1) % 7)});
  }
  return pspmv_test::csr_from_rows(n, rows);
}

} // namespace

// ---- small cases (sanitizer subset) ----

TEST(DeviceScaledCopySmall, Empty)
{
  HostCsr A;
  all_options(A, "0 x 0");
}

TEST(DeviceScaledCopySmall, OneRow)
{
  all_options(pspmv_test::csr_from_rows(1, {{{0, 2.25}}}), "1 x 1");
}

TEST(DeviceScaledCopySmall, Tridiagonal)
{
  all_options(tridiagonal(77), "tridiagonal 77");
}

TEST(DeviceScaledCopySmall, Laplace2D)
{
  all_options(pspmv_test::laplace2d(23, 17), "laplace2d 23x17");
}

TEST(DeviceScaledCopySmall, RandomSpd)
{
  all_options(pspmv_test::random_spd(1500, 6, 0.05, 41), "random spd 1500");
}

// Non-square and invalid CSRs: the host's FormatError messages.
TEST(DeviceScaledCopySmall, NotSquareOrInvalid)
{
  all_options(pspmv_test::csr_from_rows(5, {{{0, 1.0}}, {{1, 1.0}}}), "2 x 5");
  HostCsr A = tridiagonal(10);
  std::swap(A.colidx[3], A.colidx[4]); // columns not increasing in row 1
  all_options(A, "invalid csr");
}

// The first offending row in row order, whatever the kind of its offence, and before any
// non-finite off-diagonal entry of an earlier row.
TEST(DeviceScaledCopySmall, DiagonalErrors)
{
  struct Case {
    const char                    *what;
    std::function<void(HostCsr &)> spoil;
  };
  const std::vector<Case> cases = {
    {"zero diagonal", [](HostCsr &A) { A.values[size_t(A.rowptr[40] + 1)] = 0.0; }},
    {"negative diagonal", [](HostCsr &A) { A.values[size_t(A.rowptr[40] + 1)] = -3.5; }},
    {"NaN diagonal", [](HostCsr &A) { A.values[size_t(A.rowptr[40] + 1)] = kNaN; }},
    {"Inf diagonal", [](HostCsr &A) { A.values[size_t(A.rowptr[40] + 1)] = kInf; }},
    {"tiny diagonal (scaled values out of range)", [](HostCsr &A) { A.values[size_t(A.rowptr[40] + 1)] = 1e-300; }},
    {"two offending rows: the first",
     [](HostCsr &A) {
       A.values[size_t(A.rowptr[60] + 1)] = 0.0;
       A.values[size_t(A.rowptr[13] + 1)] = -1.0;
     }},
    {"NaN entry in an earlier row than a zero diagonal",
     [](HostCsr &A) {
       A.values[size_t(A.rowptr[5])]      = kNaN;
       A.values[size_t(A.rowptr[50] + 1)] = 0.0;
     }},
  };
  for (const Case &c : cases) {
    HostCsr A = tridiagonal(100);
    c.spoil(A);
    all_options(A, c.what, false);
  }
  // missing diagonals: row 30 without its entry, then rows 7 and 30
  for (const std::vector<int32_t> &drop : {std::vector<int32_t>{30}, std::vector<int32_t>{30, 7}}) {
    std::vector<std::vector<RowEntry>> rows(100);
    for (int32_t i = 0; i < 100; ++i) {
      if (i > 0) rows[size_t(i)].push_back({i - 1, -1.0});
      if (std::find(drop.begin(), drop.end(), i) == drop.end()) rows[size_t(i)].push_back({i, 4.0});
      if (i < 99) rows[size_t(i)].push_back({i + 1, -1.0});
    }
    all_options(pspmv_test::csr_from_rows(100, rows), "missing diagonal x" + std::to_string(drop.size()), false);
  }
  // an empty row has no diagonal either
  all_options(pspmv_test::csr_from_rows(3, {{{0, 1.0}}, {}, {{2, 1.0}}}), "empty row", false);
}

// Non-finite off-diagonal entries: the first in CSR order, with its row and column.
TEST(DeviceScaledCopySmall, NonFiniteEntries)
{
  for (double bad : {kNaN, kInf, -kInf}) {
    HostCsr A                          = tridiagonal(100);
    A.values[size_t(A.rowptr[71] + 2)] = bad;
    A.values[size_t(A.rowptr[22])]     = bad;
    all_options(A, "non-finite " + std::to_string(bad), false);
  }
}

// Scaled values outside fp16 (a_ij / sqrt(a_ii a_jj) = 1e6) and below it: build_on_device's
// errors with A's row and column.
TEST(DeviceScaledCopySmall, ValueOutOfRange)
{
  HostCsr A                          = tridiagonal(100);
  A.values[size_t(A.rowptr[33] + 2)] = 1e7;
  A.values[size_t(A.rowptr[34])]     = 1e7;
  HostCsr B                          = tridiagonal(100);
  B.values[size_t(B.rowptr[12] + 2)] = 1e-12;
  for (const HostCsr *M : {&A, &B}) {
    PackSellOptions o = options(ValueFormat::fp16(), "auto", 1);
    EXPECT_THROW(mixed::build_scaled_copy(M->view(), o), ValueRangeError);
    check_copy(*M, o, "fp16 out of range");
    check_copy(*M, options(ValueFormat::bf16(), "none", kPackSellSigmaAuto), "bf16");
  }
}

// Entries across the double range: the 2-D Laplacian at 2^-1030 (every entry subnormal, s_i s_j
// overflows) and at 2^1000, bit for bit the host's copy; scaled values beyond double (Inf, or 0
// for a nonzero) refused as on the host (the first offending entry in CSR order, whichever its
// kind, with its row, column and message).
TEST(DeviceScaledCopySmall, ExtremeRange)
{
  for (int e : {-1030, 1000}) {
    HostCsr A = pspmv_test::laplace2d(23, 17);
    for (double &v : A.values) v = std::ldexp(v, e);
    all_options(A, "laplace2d 23x17 times 2^" + std::to_string(e), false);
    check_copy(A, options(ValueFormat::exact(), "auto", 1), "laplace2d 23x17 times 2^" + std::to_string(e) + " exact");
  }
  HostCsr big                                    = tridiagonal(100); // diagonal entries 1e-310 in rows 40, 41: their coupling scales to about 1e310
  big.values[size_t(big.rowptr[40] + 1)]         = 1e-310;
  big.values[size_t(big.rowptr[41] + 1)]         = 1e-310;
  HostCsr small                                  = tridiagonal(100); // diagonal entries 1e300 in rows 60, 61 and a coupling 1e-30: 1e-330
  small.values[size_t(small.rowptr[60] + 1)]     = 1e300;
  small.values[size_t(small.rowptr[61] + 1)]     = 1e300;
  small.values[size_t(small.rowptr[60] + 2)]     = -1e-30;
  small.values[size_t(small.rowptr[61])]         = -1e-30;
  HostCsr both                                   = big; // a NaN in a later row than the overflow, and one in an earlier row
  both.values[size_t(both.rowptr[70])]           = kNaN;
  HostCsr nan_first                              = big;
  nan_first.values[size_t(nan_first.rowptr[20])] = kNaN;
  for (const HostCsr *M : {&big, &small, &both, &nan_first}) {
    const PackSellOptions o = options(ValueFormat::exact(), "auto", 1);
    EXPECT_THROW(mixed::build_scaled_copy(M->view(), o), ValueRangeError);
    check_copy(*M, o, "scaled value beyond double, exact");
    check_copy(*M, options(ValueFormat::e8m(14), "none", kPackSellSigmaAuto), "scaled value beyond double, e8m14");
  }
  expect_refused_update(tridiagonal(100), big, options(ValueFormat::e8m(14), "auto", 1), "update to a scaled value beyond double");
}

// Refused updates: the host's error, the copy unchanged.
TEST(DeviceScaledCopySmall, RefusedUpdates)
{
  const HostCsr         A             = tridiagonal(200);
  const PackSellOptions o             = options(ValueFormat::fp16(), "auto", 1);
  HostCsr               B             = A;
  B.values[size_t(B.rowptr[150] + 1)] = 0.0;
  expect_refused_update(A, B, o, "zero diagonal");
  B                                 = A;
  B.values[size_t(B.rowptr[9] + 1)] = -2.0;
  expect_refused_update(A, B, o, "negative diagonal");
  B                               = A;
  B.values[size_t(B.rowptr[120])] = kNaN;
  expect_refused_update(A, B, o, "NaN entry");
  B                                  = A;
  B.values[size_t(B.rowptr[77] + 2)] = 1e7;
  expect_refused_update(A, B, o, "fp16 overflow");
}

// Another nonzero count: reported, nothing changed.
TEST(DeviceScaledCopySmall, UpdatePatternChanged)
{
  const HostCsr         A = tridiagonal(50);
  const HostCsr         B = pspmv_test::laplace2d(5, 10);
  cudaStream_t          s = test_stream();
  DevCsr                dA(A), dB(B);
  mc::DeviceScaledCopy  dev, before;
  const PackSellOptions o = options(ValueFormat::e8m(14), "auto", 1);
  ASSERT_CUDA(mc::build_scaled_copy_on_device(dA.v, o, s, &dev));
  ASSERT_CUDA(mc::build_scaled_copy_on_device(dA.v, o, s, &before));
  bool changed = false;
  ASSERT_CUDA(mc::update_scaled_copy_on_device(dB.v, s, &dev, &changed));
  EXPECT_TRUE(changed);
  expect_same_copy(before, dev, "after a changed pattern");
  // an uploaded host copy has no index map: its updates report a changed pattern
  mc::DeviceScaledCopy up;
  ASSERT_CUDA(mc::upload(mixed::build_scaled_copy(A.view(), o), &up));
  changed = false;
  ASSERT_CUDA(mc::update_scaled_copy_on_device(dA.v, s, &up, &changed));
  EXPECT_TRUE(changed);
  EXPECT_CUDA(mc::release(&up));
  EXPECT_CUDA(mc::release(&dev));
  EXPECT_CUDA(mc::release(&before));
}

TEST(DeviceScaledCopySmall, TakeAndRelease)
{
  DevCsr               dA(tridiagonal(40));
  mc::DeviceScaledCopy c;
  ASSERT_CUDA(mc::build_scaled_copy_on_device(dA.v, PackSellOptions{}, test_stream(), &c));
  const double        *s = c.s;
  mc::DeviceScaledCopy t = mc::take(&c);
  EXPECT_EQ(c.s, nullptr);
  EXPECT_EQ(c.op.words, nullptr);
  EXPECT_EQ(t.s, s);
  EXPECT_CUDA(mc::release(&t));
  EXPECT_EQ(t.s, nullptr);
  EXPECT_CUDA(mc::release(&c)); // empty: nothing to free
}

// ---- random and larger systems ----

TEST(DeviceScaledCopyRandom, Systems)
{
  all_options(pspmv_test::random_spd(20000, 12, 0.01, 42), "random spd 20000");
  all_options(pspmv_test::laplace3d(30, 30, 30), "laplace3d 30^3");
}

// ---- the shared matrices (most are not SPD: then the errors are compared) ----

namespace
{
class DeviceScaledCopyFileTest : public testing::TestWithParam<std::string> { };
} // namespace

TEST_P(DeviceScaledCopyFileTest, BitForBit)
{
  const HostCsr A = pspmv_test::read_matrix_market(matrix_dir() + "/" + GetParam());
  all_options(A, stem(GetParam()), is_small(stem(GetParam())));
}

INSTANTIATE_TEST_SUITE_P(SmallDeviceScaledCopyFiles, DeviceScaledCopyFileTest, testing::ValuesIn(files(true)), param_name);
INSTANTIATE_TEST_SUITE_P(DeviceScaledCopyFiles, DeviceScaledCopyFileTest, testing::ValuesIn(files(false)), param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DeviceScaledCopyFileTest);

// Dithered rounding (KSPMIXEDCG's copies): the device build equals the host build bit for bit,
// for each lossy format and with a row offset (the global numbering of an MPI block).
TEST(DeviceScaledCopySmall, Dithered)
{
  cudaStream_t s = test_stream();
  for (const HostCsr &A : {pspmv_test::laplace3d(9, 8, 7), pspmv_test::random_spd(900, 6, 0.05, 43)})
    for (const char *f : {"e8m14", "e8m10", "bf16", "fp16", "e8m22"})
      for (int64_t row0 : {int64_t(0), int64_t(12345)}) {
        const std::string w = std::string(f) + " row0 " + std::to_string(row0) + " rows " + std::to_string(A.rows);
        PackSellOptions   o;
        o.value_format = ValueFormat::parse(f);
        const mixed::CopyDither dither{true, row0};
        mixed::ScaledCopy       host;
        const Thrown            herr = catch_core([&] { host = mixed::build_scaled_copy(A.view(), o, dither); });
        DevCsr                  dA(A);
        mc::DeviceScaledCopy    dev;
        cudaError_t             cerr = cudaSuccess;
        const Thrown            derr = catch_core([&] { cerr = mc::build_scaled_copy_on_device(dA.v, o, s, &dev, dither); });
        ASSERT_CUDA(cerr);
        if (!herr.kind.empty()) {
          expect_same_error(herr, derr, w);
          EXPECT_CUDA(mc::release(&dev));
          continue;
        }
        mc::DeviceScaledCopy ref;
        ASSERT_CUDA(mc::upload(host, &ref));
        expect_same_copy(ref, dev, w);
        EXPECT_CUDA(mc::release(&ref));
        EXPECT_CUDA(mc::release(&dev));
      }
}
