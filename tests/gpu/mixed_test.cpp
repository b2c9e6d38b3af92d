// The device side of the mixed-precision preconditioner's inner CG: the PackSELL products with
// FP32 and FP16 vectors (packsell_device_lowp.hpp) against the host packsell_spmv_f32, and the
// device inner CG (inner_cg_device.hpp) against its host twin apply_inner_cg (inner_cg.hpp):
// z, step counts, residual history, counters, breakdown, Jacobi fallback, r = 0, rtol exit,
// value updates, determinism; the solver created from the copy built on the device
// (scaled_copy_device.hpp) gives bit for bit the z of the one created from the uploaded host
// copy. Suites MixedSmall* (sanitizer subset) and MixedLarge*.
#include "device_compare.hpp"
#include "formats/packsell/packsell_device_lowp.hpp"
#include "formats/packsell/packsell_lowp_tail.hpp"
#include "gpu_test_util.hpp"
#include "mixed/inner_cg.hpp"
#include "mixed/inner_cg_device.hpp"
#include "mixed/scaled_copy.hpp"
#include "mixed_systems.hpp"
#include "random_matrix.hpp"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace gputest;
using namespace pspmv;
using pspmv_test::RowEntry;

namespace
{

constexpr double kEpsF32 = 0x1.0p-24; // FP32 unit roundoff

HostCsr from_maps(int32_t n, const std::vector<std::map<int32_t, double>> &m)
{
  std::vector<std::vector<RowEntry>> rows(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i)
    for (const auto &e : m[size_t(i)]) rows[size_t(i)].push_back({e.first, e.second});
  return pspmv_test::csr_from_rows(n, rows);
}

// 3-D 7-point Laplacian on a k^3 grid (6 on the diagonal, -1 off it): A_hat's -1/6 is not
// exact in any value format.
HostCsr laplacian7(int32_t k)
{
  const int32_t                      n = k * k * k;
  std::vector<std::vector<RowEntry>> rows(static_cast<size_t>(n));
  for (int32_t z = 0; z < k; ++z)
    for (int32_t y = 0; y < k; ++y)
      for (int32_t x = 0; x < k; ++x) {
        const int32_t i = (z * k + y) * k + x;
        auto         &r = rows[size_t(i)];
        if (z > 0) r.push_back({i - k * k, -1.0});
        if (y > 0) r.push_back({i - k, -1.0});
        if (x > 0) r.push_back({i - 1, -1.0});
        r.push_back({i, 6.0});
        if (x < k - 1) r.push_back({i + 1, -1.0});
        if (y < k - 1) r.push_back({i + k, -1.0});
        if (z < k - 1) r.push_back({i + k * k, -1.0});
      }
  return pspmv_test::csr_from_rows(n, rows);
}

// Symmetric, strictly diagonally dominant with a positive diagonal (SPD, well conditioned),
// then symmetrically scaled by random powers-of-ten-ish factors so that s is not trivial:
// about per_row random off-diagonal pairs per row, plus the rows `long_rows` coupled to every
// step-th column (long rows: a COO tail under hybrid auto / fixed widths).
HostCsr random_spd_long_rows(int32_t n, int32_t per_row, const std::vector<int32_t> &long_rows, int32_t step, uint64_t seed)
{
  pspmv_test::Rng                        rng(seed);
  std::vector<std::map<int32_t, double>> m(static_cast<size_t>(n));
  auto                                   add_pair = [&](int32_t i, int32_t j) {
    if (i == j) return;
    const double v = (rng.uniform() < 0.5 ? -1.0 : 1.0) * (0.1 + rng.uniform());
    m[size_t(i)][j] += v;
    m[size_t(j)][i] += v;
  };
  for (int32_t i = 0; i < n; ++i)
    for (int32_t k = 0; k < per_row; ++k) add_pair(i, int32_t(rng.below(uint64_t(n))));
  for (size_t l = 0; l < long_rows.size(); ++l)
    for (int32_t j = int32_t(l % size_t(step)); j < n; j += step) add_pair(long_rows[l], j);
  std::vector<double> d(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) d[size_t(i)] = std::exp2(4.0 * rng.uniform() - 2.0);
  for (int32_t i = 0; i < n; ++i) {
    double off = 0.0;
    for (const auto &e : m[size_t(i)]) off += std::fabs(e.second);
    m[size_t(i)][i] = 1.05 * off + 0.05 + 0.1 * rng.uniform();
  }
  for (int32_t i = 0; i < n; ++i)
    for (auto &e : m[size_t(i)]) e.second *= d[size_t(i)] * d[size_t(e.first)];
  return from_maps(n, m);
}

// random_spd_long_rows with `long_rows` long rows spread over the matrix, coupled to every 7th column.
HostCsr random_spd(int32_t n, int32_t per_row, int32_t long_rows, uint64_t seed)
{
  std::vector<int32_t> rows;
  for (int32_t l = 0; l < long_rows && n > 0; ++l) rows.push_back(int32_t((int64_t(l) * 7919) % n));
  return random_spd_long_rows(n, per_row, rows, 7, seed);
}

// Tridiagonal, 1 on the diagonal, c off it: indefinite for c > 1/2 (eigenvalues 1 + 2c cos).
HostCsr tridiagonal(int32_t n, double c)
{
  std::vector<std::vector<RowEntry>> rows(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    if (i > 0) rows[size_t(i)].push_back({i - 1, c});
    rows[size_t(i)].push_back({i, 1.0});
    if (i < n - 1) rows[size_t(i)].push_back({i + 1, c});
  }
  return pspmv_test::csr_from_rows(n, rows);
}

// 2 x 2 blocks [[1, 3], [3, 1]] (eigenvalues 4 and -2) on the diagonal (n even).
HostCsr indefinite_blocks(int32_t n)
{
  std::vector<std::vector<RowEntry>> rows(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; i += 2) {
    rows[size_t(i)]     = {{i, 1.0}, {i + 1, 3.0}};
    rows[size_t(i) + 1] = {{i, 3.0}, {i + 1, 1.0}};
  }
  return pspmv_test::csr_from_rows(n, rows);
}

PackSellOptions options(ValueFormat f, HybridOption h, int32_t C = 32, int32_t sigma = 1)
{
  PackSellOptions o;
  o.slice_height = C;
  o.sigma        = sigma;
  o.value_format = f;
  o.hybrid       = h;
  return o;
}

HybridOption hybrid_none()
{
  HybridOption h;
  h.mode = HybridOption::Mode::None;
  return h;
}
HybridOption hybrid_fixed(int32_t K)
{
  HybridOption h;
  h.mode  = HybridOption::Mode::Fixed;
  h.width = K;
  return h;
}

std::vector<ValueFormat> formats()
{
  return {ValueFormat::e8m(14), ValueFormat::fp16(), ValueFormat::bf16(), ValueFormat::exact()};
}

std::string tag(const ValueFormat &f, const PackSellOptions &o, const std::string &what)
{
  return what + " " + f.name() + " C=" + std::to_string(o.slice_height) + " sigma=" + std::to_string(o.sigma) + " hybrid=" + o.hybrid.name();
}

// sum_j |a_hat_ij| |x_j| per row (a_hat_ij = a_ij s_i s_j before rounding).
std::vector<double> row_abs(const HostCsr &A, const std::vector<double> &s, const std::vector<float> &x)
{
  std::vector<double> out(static_cast<size_t>(A.rows), 0.0);
  for (int32_t i = 0; i < A.rows; ++i)
    for (int32_t k = A.rowptr[size_t(i)]; k < A.rowptr[size_t(i) + 1]; ++k) {
      const int32_t j = A.colidx[size_t(k)];
      out[size_t(i)] += std::fabs(A.values[size_t(k)] * s[size_t(i)] * s[size_t(j)] * double(x[size_t(j)]));
    }
  return out;
}

std::vector<float> random_floats(size_t n, uint64_t seed)
{
  const std::vector<double> v = random_vector(n, seed);
  return std::vector<float>(v.begin(), v.end());
}

// spmv_f32 and spmv_f16 of the scaled copy of A against packsell_spmv_f32.
void check_lowp_products(const HostCsr &A, const PackSellOptions &o, const std::string &label)
{
  const std::string       what = tag(o.value_format, o, label);
  const mixed::ScaledCopy c    = mixed::build_scaled_copy(A.view(), o);
  cuda::DevicePackSell    dA;
  ASSERT_CUDA(cuda::upload(c.op, &dA));
  const size_t n = size_t(A.rows);

  // FP32 vectors
  const std::vector<float> x = random_floats(n, 3);
  std::vector<float>       ref(n);
  packsell_spmv_f32(c.op, x.data(), ref.data());
  const std::vector<double> bound = row_abs(A, c.s, x);
  DeviceArray<float>        dx(n), dy(n);
  dx.upload(x);
  dy.poison();
  ASSERT_CUDA(cuda::spmv_f32(dA, dx.get(), dy.get(), test_stream()));
  ASSERT_CUDA(cudaStreamSynchronize(test_stream()));
  const std::vector<float> y   = dy.download();
  int                      bad = 0;
  for (size_t i = 0; i < n && bad < 5; ++i) {
    const double tol = 4.0 * kEpsF32 * bound[i];
    if (!(std::fabs(double(y[i]) - double(ref[i])) <= tol)) {
      ADD_FAILURE() << what << " spmv_f32 row " << i << ": device " << y[i] << " host " << ref[i] << " tolerance " << tol;
      ++bad;
    }
  }

  // FP16 vectors: the host product of the FP16 x in FP32, rounded to FP16 once.
  std::vector<__half> xh(n);
  std::vector<float>  xf(n);
  for (size_t i = 0; i < n; ++i) {
    xh[i] = __float2half_rn(x[i]);
    xf[i] = __half2float(xh[i]);
  }
  packsell_spmv_f32(c.op, xf.data(), ref.data());
  const std::vector<double> bound_h = row_abs(A, c.s, xf);
  DeviceArray<__half>       dxh(n), dyh(n);
  dxh.upload(xh);
  dyh.poison();
  ASSERT_CUDA(cuda::spmv_f16(dA, dxh.get(), dyh.get(), test_stream()));
  ASSERT_CUDA(cudaStreamSynchronize(test_stream()));
  const std::vector<__half> yh = dyh.download();
  for (size_t i = 0; i < n && bad < 10; ++i) {
    const double tol = 0x1.0p-11 * std::fabs(double(ref[i])) + 4.0 * kEpsF32 * bound_h[i] + 0x1.0p-25;
    const double dev = double(__half2float(yh[i]));
    if (!(std::fabs(dev - double(ref[i])) <= tol)) {
      ADD_FAILURE() << what << " spmv_f16 row " << i << ": device " << dev << " host " << ref[i] << " tolerance " << tol;
      ++bad;
    }
  }
  ASSERT_CUDA(cuda::release(&dA));
}

struct Outcome {
  std::vector<double> z;
  mixed::InnerStats   stats;
  std::vector<double> residuals;
};

// The device inner solve of r (one application on a fresh DeviceInnerCg unless d is given).
Outcome device_apply(mixed::cuda::DeviceInnerCg *d, const mixed::InnerCgParams &p, const std::vector<double> &r)
{
  Outcome             out;
  DeviceArray<double> dr(r.size()), dz(r.size());
  dr.upload(r);
  dz.poison();
  EXPECT_CUDA(mixed::cuda::apply(d, p, dr.get(), dz.get(), test_stream()));
  EXPECT_CUDA(mixed::cuda::read_stats(d, &out.stats, &out.residuals, test_stream()));
  out.z = dz.download();
  return out;
}

Outcome host_apply(const mixed::ScaledCopy &c, const mixed::InnerCgParams &p, const std::vector<double> &r)
{
  Outcome out;
  out.z.resize(r.size());
  mixed::apply_inner_cg(c, p, r.data(), out.z.data(), &out.stats, &out.residuals);
  return out;
}

void expect_same_stats(const mixed::InnerStats &a, const mixed::InnerStats &b, const std::string &what)
{
  EXPECT_EQ(a.applications, b.applications) << what;
  EXPECT_EQ(a.inner_its, b.inner_its) << what;
  EXPECT_EQ(a.breakdowns, b.breakdowns) << what;
  EXPECT_EQ(a.early_exits, b.early_exits) << what;
  EXPECT_EQ(a.jacobi_fallbacks, b.jacobi_fallbacks) << what;
  EXPECT_EQ(a.zero_rhs, b.zero_rhs) << what;
}

double rel_diff(const std::vector<double> &a, const std::vector<double> &b)
{
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return den > 0.0 ? std::sqrt(num / den) : std::sqrt(num);
}

// Device and host outcomes agree: z within rel_tol (relative 2-norm), the same counters, the
// residual histories of the same length and within rel_tol of the host's first residual.
void expect_same(const Outcome &dev, const Outcome &host, double rel_tol, const std::string &what)
{
  expect_same_stats(dev.stats, host.stats, what);
  ASSERT_EQ(dev.z.size(), host.z.size()) << what;
  for (size_t i = 0; i < dev.z.size(); ++i) ASSERT_TRUE(std::isfinite(dev.z[i])) << what << ": z[" << i << "] = " << dev.z[i] << " (unwritten or not finite)";
  EXPECT_LE(rel_diff(dev.z, host.z), rel_tol) << what;
  ASSERT_EQ(dev.residuals.size(), host.residuals.size()) << what;
  for (size_t k = 0; k < dev.residuals.size(); ++k) EXPECT_NEAR(dev.residuals[k], host.residuals[k], rel_tol * host.residuals[0]) << what << ": residual " << k;
}

// The device inner CG on the copy built on the device from dA (null on failure).
mixed::cuda::DeviceInnerCg *device_built_cg(const DevCsr &dA, const PackSellOptions &o, int32_t max_it)
{
  mixed::cuda::DeviceScaledCopy dc;
  mixed::cuda::DeviceInnerCg   *d = nullptr;
  EXPECT_CUDA(mixed::cuda::build_scaled_copy_on_device(dA.v, o, test_stream(), &dc));
  EXPECT_CUDA(mixed::cuda::create(&dc, max_it, &d));
  EXPECT_EQ(dc.s, nullptr) << "create takes the copy";
  return d;
}

// The same outcome bit for bit (z, counters, residual history).
void expect_identical(const Outcome &a, const Outcome &b, const std::string &what)
{
  expect_same_stats(a.stats, b.stats, what);
  EXPECT_EQ(a.z, b.z) << what << ": z differs";
  EXPECT_EQ(a.residuals, b.residuals) << what << ": residuals differ";
}

// One application on every format (and the given hybrid options), device against host, and
// the solver on the device-built copy against the one on the uploaded host copy.
void check_inner_cg(const HostCsr &A, const std::vector<PackSellOptions> &opts, const mixed::InnerCgParams &p, double rel_tol, const std::string &label, uint64_t seed = 5)
{
  const std::vector<double> r = random_vector(size_t(A.rows), seed);
  for (const PackSellOptions &o : opts) {
    const std::string           what = tag(o.value_format, o, label);
    const mixed::ScaledCopy     c    = mixed::build_scaled_copy(A.view(), o);
    mixed::cuda::DeviceInnerCg *d    = nullptr;
    ASSERT_CUDA(mixed::cuda::create(c, p.max_it, &d));
    const Outcome host = host_apply(c, p, r);
    const Outcome dev  = device_apply(d, p, r);
    expect_same(dev, host, rel_tol, what);
    EXPECT_EQ(host.stats.inner_its, p.max_it) << what << ": the test expects every step to be made";
    // A second application: the state is reset, the result the same bit for bit.
    const Outcome again = device_apply(d, p, r);
    EXPECT_EQ(again.z, dev.z) << what << ": not deterministic";
    expect_same_stats(again.stats, dev.stats, what + " (second application)");
    EXPECT_CUDA(mixed::cuda::destroy(d));
    const DevCsr                dA(A);
    mixed::cuda::DeviceInnerCg *built = device_built_cg(dA, o, p.max_it);
    ASSERT_NE(built, nullptr) << what;
    expect_identical(device_apply(built, p, r), dev, what + " (copy built on the device)");
    EXPECT_CUDA(mixed::cuda::destroy(built));
  }
}

std::vector<PackSellOptions> every_format(HybridOption h, int32_t C = 32, int32_t sigma = 1)
{
  std::vector<PackSellOptions> v;
  for (const ValueFormat &f : formats()) v.push_back(options(f, h, C, sigma));
  return v;
}

} // namespace

// ------------------------------------------------------------------ products

TEST(MixedSmallSpmv, RandomSpdEveryFormatAndTail)
{
  const HostCsr A = random_spd(1000, 3, 2, 21);
  for (const ValueFormat &f : formats())
    for (const HybridOption &h : {hybrid_none(), HybridOption{}, hybrid_fixed(2)}) {
      const PackSellOptions o = options(f, h);
      if (h.mode == HybridOption::Mode::Fixed) {
        const mixed::ScaledCopy c = mixed::build_scaled_copy(A.view(), o);
        ASSERT_GT(c.op.tail.nnz(), 0) << "the fixed width must leave a COO tail";
      }
      check_lowp_products(A, o, "random_spd");
    }
}

TEST(MixedSmallSpmv, SortedAndWideSlices)
{
  const HostCsr A = random_spd(3001, 4, 1, 22);
  for (const ValueFormat &f : formats()) {
    check_lowp_products(A, options(f, hybrid_fixed(3), 64, 256), "sorted C=64");
    check_lowp_products(A, options(f, HybridOption{}, 128, 1), "C=128");
  }
}

// Tails longer than kLowpLongTail are summed by the row's whole warp: several in one warp (rows
// 3..8), next to short tails, and one in the last warp, whose other lanes are past the end.
TEST(MixedSmallSpmv, LongTailsSharingAWarpAndInTheLastWarp)
{
  const int32_t n = 1029; // the last warp holds rows 1024..1028
  const HostCsr A = random_spd_long_rows(n, 3, {3, 4, 5, 6, 7, 8, n - 2}, 3, 23);
  for (const ValueFormat &f : formats()) {
    const PackSellOptions   o       = options(f, hybrid_fixed(4));
    const mixed::ScaledCopy c       = mixed::build_scaled_copy(A.view(), o);
    int64_t                 longest = 0;
    for (int64_t b = 0, e; b < c.op.tail.nnz(); b = e) {
      for (e = b + 1; e < c.op.tail.nnz() && c.op.tail.row[size_t(e)] == c.op.tail.row[size_t(b)]; ++e) { }
      longest = std::max(longest, e - b);
    }
    ASSERT_GT(longest, 8 * packsell::kLowpLongTail) << "the test needs long tails";
    check_lowp_products(A, o, "long tails");
    // the same operations in the same order as the host twin (packsell_lowp_tail.hpp): bit for bit
    cuda::DevicePackSell dA;
    ASSERT_CUDA(cuda::upload(c.op, &dA));
    const std::vector<float> x = random_floats(size_t(n), 5);
    std::vector<float>       ref(static_cast<size_t>(n));
    packsell_spmv_f32(c.op, x.data(), ref.data());
    DeviceArray<float> dx(static_cast<size_t>(n)), dy(static_cast<size_t>(n));
    dx.upload(x);
    dy.poison();
    ASSERT_CUDA(cuda::spmv_f32(dA, dx.get(), dy.get(), test_stream()));
    ASSERT_CUDA(cudaStreamSynchronize(test_stream()));
    const std::vector<float> y   = dy.download();
    int                      bad = 0;
    for (int32_t i = 0; i < n && bad < 5; ++i)
      if (std::memcmp(&y[size_t(i)], &ref[size_t(i)], sizeof(float)) != 0) {
        ADD_FAILURE() << tag(f, o, "long tails") << " row " << i << ": device " << y[size_t(i)] << " host " << ref[size_t(i)] << " (bit for bit)";
        ++bad;
      }
    ASSERT_CUDA(cuda::release(&dA));
  }
  mixed::InnerCgParams p;
  p.max_it = 12;
  check_inner_cg(A, every_format(hybrid_fixed(4)), p, 1e-4, "long tails");
}

// A long tail of 2^24 and then ones: summed serially every 1 is lost to rounding, in the warp's
// 32 lanes most count. The device must give the host twin's value, far from the serial one.
TEST(MixedSmallSpmv, LongTailOrderIsTheWarpsNotSerial)
{
  const int32_t                      n = 200, L = 150;
  std::vector<std::vector<RowEntry>> rows(static_cast<size_t>(n));
  rows[5].push_back({5, 0.5});
  for (int32_t j = 0; j < L; ++j) rows[5].push_back({6 + j, j == 0 ? 16777216.0 : 1.0});
  for (int32_t r = 0; r < n; ++r)
    if (r != 5) rows[size_t(r)].push_back({r, 1.0});
  const HostCsr  A = pspmv_test::csr_from_rows(n, rows);
  PackSellMatrix M = build_packsell(A.view(), options(ValueFormat::exact(), hybrid_fixed(1)));
  ASSERT_EQ(M.tail.nnz(), L);
  cuda::DevicePackSell dA;
  ASSERT_CUDA(cuda::upload(M, &dA));
  const std::vector<float> x(static_cast<size_t>(n), 1.0f);
  std::vector<float>       ref(static_cast<size_t>(n));
  packsell_spmv_f32(M, x.data(), ref.data());
  ASSERT_GT(ref[5], 16777216.0f + 64.0f);
  DeviceArray<float> dx(static_cast<size_t>(n)), dy(static_cast<size_t>(n));
  dx.upload(x);
  dy.poison();
  ASSERT_CUDA(cuda::spmv_f32(dA, dx.get(), dy.get(), test_stream()));
  ASSERT_CUDA(cudaStreamSynchronize(test_stream()));
  const std::vector<float> y = dy.download();
  EXPECT_EQ(y[5], ref[5]) << "serially the row would be exactly 2^24";
  for (int32_t r = 0; r < n; ++r)
    if (r != 5) EXPECT_EQ(y[size_t(r)], 1.0f) << "row " << r;
  ASSERT_CUDA(cuda::release(&dA));
}

TEST(MixedSmallSpmv, Laplacian)
{
  const HostCsr A = laplacian7(12);
  for (const ValueFormat &f : formats()) check_lowp_products(A, options(f, hybrid_none()), "lap7 12^3");
}

TEST(MixedSmallSpmv, FewRows)
{
  for (int32_t n : {1, 7, 33}) {
    const HostCsr A = random_spd(n, 2, 0, 30 + uint64_t(n));
    for (const ValueFormat &f : formats()) check_lowp_products(A, options(f, hybrid_none()), "rows=" + std::to_string(n));
  }
}

TEST(MixedLargeSpmv, Laplacian)
{
  const HostCsr A = laplacian7(64);
  for (const ValueFormat &f : formats()) check_lowp_products(A, options(f, hybrid_none()), "lap7 64^3");
}

// ------------------------------------------------------------------ inner CG

TEST(MixedSmallInnerCg, RandomSpd20Steps)
{
  mixed::InnerCgParams p;
  p.max_it = 20;
  check_inner_cg(random_spd(2000, 4, 0, 41), every_format(hybrid_none()), p, 1e-4, "random_spd");
}

TEST(MixedSmallInnerCg, RandomSpdWithTail)
{
  const HostCsr           A = random_spd(2000, 3, 3, 42);
  const mixed::ScaledCopy c = mixed::build_scaled_copy(A.view(), options(ValueFormat::e8m(14), hybrid_fixed(2)));
  ASSERT_GT(c.op.tail.nnz(), 0);
  mixed::InnerCgParams p;
  p.max_it = 15;
  check_inner_cg(A, every_format(hybrid_fixed(2)), p, 1e-4, "random_spd tail");
  check_inner_cg(A, every_format(HybridOption{}, 64, 128), p, 1e-4, "random_spd sorted auto");
}

TEST(MixedSmallInnerCg, Laplacian)
{
  mixed::InnerCgParams p;
  p.max_it = 20;
  check_inner_cg(laplacian7(16), every_format(hybrid_none()), p, 1e-4, "lap7 16^3");
}

TEST(MixedSmallInnerCg, FewRows)
{
  mixed::InnerCgParams p;
  p.max_it = 3; // fewer steps than distinct eigenvalues: no exact convergence, every step made
  for (int32_t n : {7, 40}) check_inner_cg(random_spd(n, 2, 0, 50 + uint64_t(n)), every_format(hybrid_none()), p, 1e-4, "rows=" + std::to_string(n));
}

TEST(MixedLargeInnerCg, Laplacian)
{
  // 72^3 = 373248 rows: more than the fixed grid's threads (grid-stride loops, many blocks).
  mixed::InnerCgParams p;
  p.max_it = 20;
  check_inner_cg(laplacian7(72), every_format(hybrid_none()), p, 1e-4, "lap7 72^3");
}

// An indefinite operator: p^T A p < 0 at step 2 (Rayleigh quotient about -0.03, far from the
// rounding): both stop there, the step is not applied, no Jacobi fallback.
TEST(MixedSmallInnerCg, BreakdownIndefinite)
{
  const HostCsr        A = tridiagonal(1000, 0.6);
  mixed::InnerCgParams p;
  p.max_it                    = 20;
  const std::vector<double> r = random_vector(1000, 61);
  for (const ValueFormat &f : formats()) {
    const PackSellOptions   o    = options(f, hybrid_none());
    const std::string       what = tag(f, o, "tridiagonal 0.6");
    const mixed::ScaledCopy c    = mixed::build_scaled_copy(A.view(), o);
    const Outcome           host = host_apply(c, p, r);
    ASSERT_EQ(host.stats.breakdowns, 1) << what << ": the host twin should break down";
    ASSERT_GE(host.stats.inner_its, 1) << what;
    ASSERT_LT(host.stats.inner_its, p.max_it) << what;
    mixed::cuda::DeviceInnerCg *d = nullptr;
    ASSERT_CUDA(mixed::cuda::create(c, p.max_it, &d));
    expect_same(device_apply(d, p, r), host, 1e-4, what);
    EXPECT_CUDA(mixed::cuda::destroy(d));
  }
}

// A breakdown at the first step (r in the eigenspace of -2): z = s .* (s .* r) (s = 1 here: z = r).
TEST(MixedSmallInnerCg, JacobiFallback)
{
  const int32_t       n = 600;
  const HostCsr       A = indefinite_blocks(n);
  std::vector<double> r(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; i += 2) {
    r[size_t(i)]     = 1.0 + double(i) / n;
    r[size_t(i) + 1] = -r[size_t(i)];
  }
  mixed::InnerCgParams p;
  p.max_it = 10;
  for (const ValueFormat &f : formats()) {
    const PackSellOptions   o    = options(f, hybrid_none());
    const std::string       what = tag(f, o, "indefinite blocks");
    const mixed::ScaledCopy c    = mixed::build_scaled_copy(A.view(), o);
    const Outcome           host = host_apply(c, p, r);
    ASSERT_EQ(host.stats.jacobi_fallbacks, 1) << what;
    mixed::cuda::DeviceInnerCg *d = nullptr;
    ASSERT_CUDA(mixed::cuda::create(c, p.max_it, &d));
    const Outcome dev = device_apply(d, p, r);
    expect_same(dev, host, 0.0, what);
    EXPECT_EQ(dev.z, r) << what;
    EXPECT_EQ(dev.stats.breakdowns, 1) << what;
    EXPECT_TRUE(dev.residuals.empty()) << what;
    EXPECT_CUDA(mixed::cuda::destroy(d));
  }
}

// Right-hand sides across the double range: the device's M(2^k r) is 2^k times its M(r) bit for
// bit (||D^-1/2 r|| from about 1e-270 to 1e270: the plain sum of squares underflowed to z = 0
// below 1e-162 and overflowed to a Jacobi step above 1e154), and the host twin's within the
// usual tolerance; the device PC of 2^-1030 A (subnormal entries) on 2^-1030 r is its PC of A on r.
TEST(MixedSmallInnerCg, ScalesAcrossTheDoubleRange)
{
  const HostCsr        A = pspmv_test::laplace2d(26, 27); // small integers: exact at 2^-1030
  mixed::InnerCgParams p;
  p.max_it              = 12;
  std::vector<double> r = random_vector(size_t(A.rows), 92);
  for (double &v : r) v = std::round(v * 0x1p20) / 0x1p20; // exact at 2^-1030
  const mixed::ScaledCopy     c = mixed::build_scaled_copy(A.view(), options(ValueFormat::e8m(14), hybrid_none()));
  mixed::cuda::DeviceInnerCg *d = nullptr;
  ASSERT_CUDA(mixed::cuda::create(c, p.max_it, &d));
  const Outcome ref = device_apply(d, p, r);
  for (int k : {-900, -600, 600, 900}) {
    std::vector<double> rk(r);
    for (double &v : rk) v = std::ldexp(v, k);
    const Outcome     dev = device_apply(d, p, rk), host = host_apply(c, p, rk);
    const std::string what = "M(2^" + std::to_string(k) + " r)";
    EXPECT_EQ(dev.stats.jacobi_fallbacks + dev.stats.zero_rhs, 0) << what;
    for (size_t i = 0; i < r.size(); ++i) ASSERT_EQ(dev.z[i], std::ldexp(ref.z[i], k)) << what << ", entry " << i;
    Outcome dev1 = dev, host1 = host; // compared at scale 1 (expect_same's bounds are absolute in places)
    for (double &v : dev1.z) v = std::ldexp(v, -k);
    for (double &v : host1.z) v = std::ldexp(v, -k);
    expect_same(dev1, host1, 1e-4, what);
  }
  EXPECT_CUDA(mixed::cuda::destroy(d));
  HostCsr At = A;
  for (double &v : At.values) v = std::ldexp(v, -1030);
  std::vector<double> rt(r);
  for (double &v : rt) v = std::ldexp(v, -1030);
  const DevCsr                dAt(At);
  mixed::cuda::DeviceInnerCg *dt = device_built_cg(dAt, options(ValueFormat::e8m(14), hybrid_none()), p.max_it);
  ASSERT_NE(dt, nullptr);
  const Outcome tiny = device_apply(dt, p, rt);
  for (size_t i = 0; i < r.size(); ++i) ASSERT_EQ(tiny.z[i], ref.z[i]) << "the PC of 2^-1030 A on 2^-1030 r, entry " << i;
  EXPECT_CUDA(mixed::cuda::destroy(dt));
}

// max_it = 0: no step is made, the Jacobi step is returned (as the host twin does).
TEST(MixedSmallInnerCg, ZeroSteps)
{
  const HostCsr           A = random_spd(300, 3, 0, 71);
  const mixed::ScaledCopy c = mixed::build_scaled_copy(A.view(), options(ValueFormat::e8m(14), hybrid_none()));
  mixed::InnerCgParams    p;
  p.max_it                      = 0;
  const std::vector<double>   r = random_vector(300, 72);
  mixed::cuda::DeviceInnerCg *d = nullptr;
  ASSERT_CUDA(mixed::cuda::create(c, 4, &d));
  const Outcome host = host_apply(c, p, r);
  const Outcome dev  = device_apply(d, p, r);
  expect_same(dev, host, 0.0, "max_it 0");
  EXPECT_EQ(dev.z, host.z);
  EXPECT_EQ(dev.stats.jacobi_fallbacks, 1);
  EXPECT_CUDA(mixed::cuda::destroy(d));
}

TEST(MixedSmallInnerCg, ZeroRhs)
{
  const HostCsr           A = random_spd(500, 3, 0, 81);
  const mixed::ScaledCopy c = mixed::build_scaled_copy(A.view(), options(ValueFormat::fp16(), hybrid_none()));
  mixed::InnerCgParams    p;
  p.max_it = 10;
  const std::vector<double>   r(500, 0.0);
  mixed::cuda::DeviceInnerCg *d = nullptr;
  ASSERT_CUDA(mixed::cuda::create(c, p.max_it, &d));
  const Outcome host = host_apply(c, p, r);
  const Outcome dev  = device_apply(d, p, r);
  expect_same_stats(dev.stats, host.stats, "r = 0");
  EXPECT_EQ(dev.stats.zero_rhs, 1);
  EXPECT_EQ(dev.stats.applications, 1);
  EXPECT_EQ(dev.stats.inner_its, 0);
  EXPECT_EQ(dev.z, std::vector<double>(500, 0.0)) << "z must be written as 0";
  EXPECT_TRUE(dev.residuals.empty());
  EXPECT_CUDA(mixed::cuda::destroy(d));
}

// rtol between two residuals of the host's history (far from both): both stop at the same step.
TEST(MixedSmallInnerCg, RtolEarlyExit)
{
  const HostCsr             A = laplacian7(14);
  const std::vector<double> r = random_vector(size_t(A.rows), 91);
  for (const ValueFormat &f : formats()) {
    const PackSellOptions   o    = options(f, hybrid_none());
    const std::string       what = tag(f, o, "lap7 rtol");
    const mixed::ScaledCopy c    = mixed::build_scaled_copy(A.view(), o);
    mixed::InnerCgParams    full;
    full.max_it      = 30;
    const Outcome h0 = host_apply(c, full, r);
    ASSERT_EQ(h0.residuals.size(), 31u) << what;
    // the first k >= 5 with res[k + 1] <= 0.95 min(res[1..k]); rtol at the geometric mean of
    // the two, so every residual before step k + 1 is above it and res[k + 1] below it by 2.5%
    const std::vector<double> &res      = h0.residuals;
    size_t                     k        = 5;
    auto                       min_upto = [&](size_t j) { return *std::min_element(res.begin() + 1, res.begin() + long(j) + 1); };
    while (k + 1 < res.size() && res[k + 1] > 0.95 * min_upto(k)) ++k;
    ASSERT_LT(k + 1, res.size()) << what;
    mixed::InnerCgParams p = full;
    p.rtol                 = std::sqrt(min_upto(k) * res[k + 1]) / res[0];
    const Outcome host     = host_apply(c, p, r);
    ASSERT_EQ(host.stats.early_exits, 1) << what;
    ASSERT_EQ(host.stats.inner_its, int64_t(k + 1)) << what;
    mixed::cuda::DeviceInnerCg *d = nullptr;
    ASSERT_CUDA(mixed::cuda::create(c, p.max_it, &d));
    expect_same(device_apply(d, p, r), host, 1e-4, what);
    EXPECT_CUDA(mixed::cuda::destroy(d));
  }
}

// Counters accumulate over applications until read_stats, which resets them.
TEST(MixedSmallInnerCg, CountersAccumulate)
{
  const HostCsr           A = random_spd(800, 3, 0, 101);
  const mixed::ScaledCopy c = mixed::build_scaled_copy(A.view(), options(ValueFormat::e8m(14), hybrid_none()));
  mixed::InnerCgParams    p;
  p.max_it                      = 6;
  mixed::cuda::DeviceInnerCg *d = nullptr;
  ASSERT_CUDA(mixed::cuda::create(c, 8, &d));
  std::vector<std::vector<double>> rs = {random_vector(800, 1), std::vector<double>(800, 0.0), random_vector(800, 2)};
  mixed::InnerStats                host;
  std::vector<double>              z(800), hres;
  DeviceArray<double>              dr(800), dz(800);
  for (const auto &r : rs) {
    mixed::apply_inner_cg(c, p, r.data(), z.data(), &host, &hres);
    ASSERT_CUDA(cudaStreamSynchronize(test_stream())); // the previous application still reads dr
    dr.upload(r);
    ASSERT_CUDA(mixed::cuda::apply(d, p, dr.get(), dz.get(), test_stream()));
  }
  mixed::InnerStats dev;
  dev.applications = 100; // read_stats adds
  std::vector<double> dres;
  ASSERT_CUDA(mixed::cuda::read_stats(d, &dev, &dres, test_stream()));
  host.applications += 100;
  expect_same_stats(dev, host, "three applications");
  EXPECT_EQ(dres.size(), hres.size());
  mixed::InnerStats zero;
  ASSERT_CUDA(mixed::cuda::read_stats(d, &zero, nullptr, test_stream()));
  expect_same_stats(zero, mixed::InnerStats{}, "after the reset");
  // max_it beyond the create() bound is refused
  mixed::InnerCgParams big;
  big.max_it = 9;
  EXPECT_EQ(mixed::cuda::apply(d, big, dr.get(), dz.get(), test_stream()), cudaErrorInvalidValue);
  EXPECT_CUDA(mixed::cuda::destroy(d));
}

// update_values: the same pattern with new values gives the host twin's result on the new copy.
TEST(MixedSmallInnerCg, UpdateValues)
{
  const HostCsr A = random_spd(1500, 3, 2, 111);
  HostCsr       B = random_spd(1500, 3, 2, 111); // same pattern (same generator draws), new values:
  for (double &v : B.values) v *= 3.0;           // a uniform factor changes s, not A_hat...
  for (int32_t i = 0; i < B.rows; ++i)           // ...so also perturb the off-diagonal values
    for (int32_t k = B.rowptr[size_t(i)]; k < B.rowptr[size_t(i) + 1]; ++k)
      if (B.colidx[size_t(k)] != i) B.values[size_t(k)] *= 0.5;
  mixed::InnerCgParams p;
  p.max_it                    = 12;
  const std::vector<double> r = random_vector(1500, 112);
  for (const ValueFormat &f : formats()) {
    const PackSellOptions       o    = options(f, hybrid_fixed(3));
    const std::string           what = tag(f, o, "update_values");
    mixed::ScaledCopy           c    = mixed::build_scaled_copy(A.view(), o);
    DevCsr                      dA(A);
    mixed::cuda::DeviceInnerCg *d = device_built_cg(dA, o, p.max_it);
    ASSERT_NE(d, nullptr) << what;
    mixed::update_scaled_copy(B.view(), c);
    dA.values.upload(B.values);
    bool changed = true;
    ASSERT_CUDA(mixed::cuda::update_values(dA.v, test_stream(), d, &changed));
    EXPECT_FALSE(changed) << what;
    const Outcome updated = device_apply(d, p, r);
    expect_same(updated, host_apply(c, p, r), 1e-4, what);
    mixed::cuda::DeviceInnerCg *fresh = device_built_cg(dA, o, p.max_it); // a build from B
    ASSERT_NE(fresh, nullptr) << what;
    expect_identical(updated, device_apply(fresh, p, r), what + " (update against a fresh build)");
    EXPECT_CUDA(mixed::cuda::destroy(fresh));
    // a refused update (a zero diagonal) throws the host's error and keeps the copy
    HostCsr Z = B;
    for (int32_t k = Z.rowptr[7]; k < Z.rowptr[8]; ++k)
      if (Z.colidx[size_t(k)] == 7) Z.values[size_t(k)] = 0.0;
    dA.values.upload(Z.values);
    EXPECT_THROW((void)mixed::cuda::update_values(dA.v, test_stream(), d, &changed), mixed::DiagonalError) << what;
    expect_identical(device_apply(d, p, r), updated, what + " (after a refused update)");
    EXPECT_CUDA(mixed::cuda::destroy(d));
  }
}

TEST(MixedSmallInnerCg, DestroyNull)
{
  EXPECT_CUDA(mixed::cuda::destroy(nullptr));
}
