// One configuration of a format, built, uploaded and checked (see format_checks.hpp).
#include "format_checks.hpp"
#include "core/threads_per_row.hpp"
#include "formats/device_formats.hpp"
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>
#include <vector>

namespace gputest
{

using namespace pspmv;

HybridOption hybrid_none()
{
  HybridOption h;
  h.mode = HybridOption::Mode::None;
  return h;
}
HybridOption hybrid_auto()
{
  return HybridOption{};
}
HybridOption hybrid_fixed(int32_t K)
{
  HybridOption h;
  h.mode  = HybridOption::Mode::Fixed;
  h.width = K;
  return h;
}

std::string RgConfig::name() const
{
  return "RgCSR G=" + std::to_string(group_size) + " hybrid=" + hybrid.name() + (threads_per_row ? " T=" + std::to_string(threads_per_row) : "");
}

std::string PsConfig::name() const
{
  return "PackSELL C=" + std::to_string(slice_height) + " sigma=" + std::to_string(sigma) + " " + format.name() + (scaling == PackSellScaling::Auto ? " scaling=auto" : "") + " hybrid=" + hybrid.name() + (threads_per_row ? " T=" + std::to_string(threads_per_row) : "");
}

RgCsrOptions RgConfig::options() const
{
  RgCsrOptions o;
  o.group_size = group_size;
  o.hybrid     = hybrid;
  return o;
}

PackSellOptions PsConfig::options() const
{
  PackSellOptions o;
  o.slice_height = slice_height;
  o.sigma        = sigma;
  o.value_format = format;
  o.scaling      = scaling;
  o.hybrid       = hybrid;
  return o;
}

std::vector<RgConfig> rgcsr_configs()
{
  std::vector<RgConfig> v;
  for (int32_t G : {32, 64, 128})
    for (const HybridOption &h : {hybrid_none(), hybrid_auto(), hybrid_fixed(2)}) v.push_back({G, h, 0});
  for (int32_t T : {1, 2, 4, 8}) {
    v.push_back({32, hybrid_none(), T});
    v.push_back({64, hybrid_fixed(5), T});
  }
  return v;
}

std::vector<PsConfig> packsell_configs(PackSellScaling scaling)
{
  std::vector<PsConfig> v;
  const ValueFormat     formats[] = {ValueFormat::exact(), ValueFormat::fp16(), ValueFormat::bf16(), ValueFormat::e8m(14), ValueFormat::e8m(22)};
  for (const ValueFormat &f : formats)
    for (int32_t sigma : {1, 1024})
      for (const HybridOption &h : {hybrid_none(), hybrid_auto(), hybrid_fixed(2)}) v.push_back({32, sigma, f, f.lossy() ? scaling : PackSellScaling::None, h});
  v.push_back({64, 1024, ValueFormat::exact(), PackSellScaling::None, hybrid_auto()});
  v.push_back({128, 1024, ValueFormat::fp16(), scaling, hybrid_auto()});
  v.push_back({256, 256, ValueFormat::e8m(10), scaling, hybrid_none()});
  for (int32_t T : {1, 2, 4, 8}) {
    v.push_back({32, 1, ValueFormat::bf16(), scaling, hybrid_none(), T});
    v.push_back({64, 1024, ValueFormat::exact(), PackSellScaling::None, hybrid_none(), T});
    v.push_back({32, 1, ValueFormat::fp16(), scaling, hybrid_auto(), T});
  }
  return v;
}

namespace
{

// SMs x max threads per SM of the current device, as upload computes it.
int64_t resident_threads()
{
  int dev = 0, sms = 0, per_sm = 0;
  EXPECT_CUDA(cudaGetDevice(&dev));
  EXPECT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  EXPECT_CUDA(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
  return int64_t(sms) * per_sm;
}

// Releases a device matrix when a failed assertion leaves the check early.
template <class D>
struct ReleaseGuard {
  D *d;
  ~ReleaseGuard() { cuda::release(d); }
};

void check_diagonal(const std::vector<double> &host, const double *device, const std::string &what)
{
  if (host.empty()) {
    EXPECT_EQ(device, nullptr) << what << ": no diagonal expected";
    return;
  }
  ASSERT_NE(device, nullptr) << what << ": diagonal missing";
  std::vector<double> d(host.size());
  ASSERT_CUDA(cudaMemcpy(d.data(), device, d.size() * sizeof(double), cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < d.size(); ++i)
    if (!(d[i] == host[i] || (d[i] != d[i] && host[i] != host[i]))) {
      ADD_FAILURE() << what << ": diagonal entry " << i << " is " << d[i] << " on the device, " << host[i] << " on the host";
      return;
    }
}

// The fused tail's counters are back to zero after every product (the next one waits on them).
void check_tail_counters(const cuda::DeviceCooTail &t, const std::string &what)
{
  if (t.nnz == 0) {
    EXPECT_EQ(t.sync, nullptr) << what << ": no counters without a tail";
    return;
  }
  ASSERT_NE(t.sync, nullptr) << what;
  unsigned int c[2] = {7, 7};
  ASSERT_CUDA(cudaStreamSynchronize(test_stream()));
  ASSERT_CUDA(cudaMemcpy(c, t.sync, sizeof(c), cudaMemcpyDeviceToHost));
  EXPECT_EQ(c[0], 0u) << what << ": regular-blocks counter not reset";
  EXPECT_EQ(c[1], 0u) << what << ": tail-blocks counter not reset";
}

// Tail paths a product is checked with: fused into the regular kernel where the plan allows
// it (DeviceCooTail::allow_fused) and, when there is a tail, its own kernel (the default).
std::vector<bool> tail_paths(const cuda::DeviceCooTail &t)
{
  if (t.nnz == 0) return {true};
  return {true, false};
}

} // namespace

namespace
{

// What check_rgcsr and check_packsell check alike on an uploaded layout d of M: the forced
// threads per row (0: upload's), the tail's size, stored_bytes and the diagonal against the
// host's, the product on every tail path against the host product `spmv` (both add modes,
// the tail counters reset after each), then the release.
template <class Host, class Device, class HostSpmv, class HostDiagonal>
void check_uploaded(const HostCsr &A, const Host &M, Device &d, int32_t forced_threads_per_row, const std::string &what, HostSpmv spmv, HostDiagonal diagonal, LossyBound bound, uint64_t seed)
{
  EXPECT_EQ(d.rows, A.rows);
  EXPECT_EQ(d.cols, A.cols);
  if (forced_threads_per_row != 0) d.threads_per_row = forced_threads_per_row;
  EXPECT_EQ(d.tail.nnz, M.tail.nnz());
  EXPECT_EQ(cuda::stored_bytes(d), M.stats().stored_bytes);
  std::vector<double> diag(size_t(std::min(A.rows, A.cols)));
  if (!diag.empty()) diagonal(M, diag.data());
  check_diagonal(diag, d.diagonal, what);
  for (const bool fused : tail_paths(d.tail)) {
    d.tail.allow_fused = fused;
    check_product(
      A, what + (fused ? "" : " separate tail"), [&M, &spmv](const double *x, double *y, bool add) { spmv(M, x, y, add); }, [&d](const double *x, double *y, bool add, cudaStream_t s) { return cuda::spmv(d, x, y, add, s); }, bound, seed);
    check_tail_counters(d.tail, what);
  }
  EXPECT_CUDA(cuda::release(&d));
}

} // namespace

void check_rgcsr(const HostCsr &A, const RgConfig &c, const std::string &label, uint64_t seed)
{
  const std::string what = label + " " + c.name();
  SCOPED_TRACE(what);
  const RgCsrMatrix               M = build_rgcsr(A.view(), c.options());
  cuda::DeviceRgCsr               d;
  ReleaseGuard<cuda::DeviceRgCsr> guard{&d};
  ASSERT_CUDA(cuda::upload(M, &d));
  EXPECT_EQ(d.threads_per_row, threads_per_row(M.rows, rgcsr_regular_nnz(M), resident_threads())) << "upload's choice of T";
  EXPECT_EQ(d.num_slots, M.group_pointers.back());
  check_uploaded(
    A, M, d, c.threads_per_row, what, [](const RgCsrMatrix &H, const double *x, double *y, bool add) { rgcsr_spmv(H, x, y, add); }, [](const RgCsrMatrix &H, double *dg) { rgcsr_diagonal(H, dg); }, LossyBound{}, seed);
  EXPECT_EQ(d.values, nullptr);
}

bool packsell_values_fit(const HostCsr &A, const ValueFormat &f, PackSellScaling scaling)
{
  if (!f.lossy()) return true;
  const auto holds = [&f](double v, int32_t s) { // encodes without overflow, a nonzero stays one
    const double x = std::ldexp(v, s);
    if (std::isfinite(v) && !std::isfinite(x)) return false;
    EncodeStatus   st;
    const uint32_t bits = encode_value(f, x, &st);
    return st == EncodeStatus::Ok && (v == 0.0 || !std::isfinite(v) || decode_value(f, bits) != 0.0);
  };
  int32_t s = 0;
  if (scaling == PackSellScaling::Auto) {
    double m = 0.0;
    for (double v : A.values)
      if (std::isfinite(v)) m = std::max(m, std::fabs(v));
    if (m > 0.0)
      for (s = kMaxScaleExponent; !holds(m, s);) --s; // the largest s <= 1022 that holds max|a|
  }
  for (double v : A.values)
    if (!holds(v, s)) return false;
  return true;
}

void check_packsell(const HostCsr &A, const PsConfig &c, const std::string &label, uint64_t seed)
{
  const std::string what = label + " " + c.name();
  SCOPED_TRACE(what);
  // A lossy format never drops a value: a matrix it cannot hold (with scaling auto: one whose
  // magnitudes span more than the format's range) is refused on the host, nothing to upload.
  const bool     fit = packsell_values_fit(A, c.format, c.scaling);
  PackSellMatrix M;
  try {
    M = build_packsell(A.view(), c.options());
  } catch (const ValueRangeError &e) {
    EXPECT_FALSE(fit) << "refused although every value fits: " << e.what();
    return;
  }
  EXPECT_TRUE(fit) << "accepted although a value overflows or would be stored as zero";
  EXPECT_LE(std::abs(M.scale_exponent), kMaxScaleExponent);
  cuda::DevicePackSell               d;
  ReleaseGuard<cuda::DevicePackSell> guard{&d};
  ASSERT_CUDA(cuda::upload(M, &d));
  EXPECT_EQ(d.num_words, M.slice_pointers.back());
  EXPECT_EQ(d.delta_bits, M.delta_bits);
  EXPECT_EQ(d.threads_per_row, threads_per_row(M.rows, d.num_words, resident_threads())) << "upload's choice of T";
  EXPECT_EQ(d.exact_values != nullptr, !c.format.lossy() && d.num_words > 0);
  check_uploaded(
    A, M, d, c.threads_per_row, what, [](const PackSellMatrix &H, const double *x, double *y, bool add) { packsell_spmv(H, x, y, add); }, [](const PackSellMatrix &H, double *dg) { packsell_diagonal(H, dg); }, lossy_bound(c.format, M.scale_exponent), seed);
  EXPECT_EQ(d.words, nullptr);
}

} // namespace gputest
