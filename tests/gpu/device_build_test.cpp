// Device builders (rgcsr_device_build.hpp, packsell_device_build.hpp) against the host builders:
// every device array downloaded and compared bit for bit with upload(build_*(A)), the
// statistics and scale exponent with the host layout's, value updates with the host update,
// errors (returned as BuildError) with the host's exceptions (kind, row, column, message). Suites: DeviceBuildSmall*
// (DeviceBuildSmallByFormat typed over the two formats) and
// DeviceBuildRandom (sanitizer subset *Small*:*Random*), DeviceBuildFiles/SmallDeviceBuildFiles
// over the shared matrices.
#include "formats/device_formats.hpp"
#include "device_compare.hpp"
#include "format_checks.hpp"
#include "format_traits.hpp"
#include "mixed_systems.hpp"
#include "matrix_market.hpp"
#include "shared_matrices.hpp"
#include "random_matrices.hpp"
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <set>

using namespace gputest;
using namespace pspmv;
namespace fs = std::filesystem;

namespace
{

int32_t scale_of(const RgCsrMatrix &)
{
  return 0;
}
int32_t scale_of(const PackSellMatrix &M)
{
  return M.scale_exponent;
}

// Host build + upload (the reference) against the device build, then a value update of both.
template <class Opt, class HostBuild, class HostUpdate>
void check_format(const HostCsr &A, const Opt &opt, const std::string &w, HostBuild hbuild, HostUpdate hupdate)
{
  using Host     = decltype(hbuild(A.view(), opt));
  using Dev      = typename cuda::DeviceLayoutOf<Host>::type;
  cudaStream_t s = test_stream();
  DevCsr       dA(A);
  Host         H;
  std::string  host_error;
  int64_t      host_row = -1, host_col = -1;
  try {
    H = hbuild(A.view(), opt);
  } catch (const ValueRangeError &e) {
    host_error = e.what();
    host_row   = e.row;
    host_col   = e.col;
  }
  Dev                   D{};
  cuda::DeviceBuildInfo info;
  if (!host_error.empty()) {
    const BuildError e = cuda::build_on_device(dA.v, opt, s, &D, &info);
    if (e.kind != BuildError::Kind::ValueRange) {
      ADD_FAILURE() << w << ": the device build did not refuse the values the host refuses: " << host_error << " (device: '" << e.what() << "')";
    } else {
      EXPECT_EQ(e.what(), host_error) << w;
      EXPECT_EQ(e.row, host_row) << w;
      EXPECT_EQ(e.col, host_col) << w;
    }
    EXPECT_EQ(D.rows, 0) << w << ": a refused build leaves the layout empty";
    EXPECT_CUDA(cuda::release(&D));
    return;
  }
  Dev ref{};
  ASSERT_CUDA(cuda::upload(H, &ref));
  ASSERT_BUILT(cuda::build_on_device(dA.v, opt, s, &D, &info));
  expect_same(ref, D, w + " (build)");
  expect_stats(H.stats(), info.stats, w + " (stats)");
  EXPECT_EQ(info.scale_exponent, scale_of(H)) << w;

  // value update: new values of another magnitude (scaling auto picks another exponent)
  const HostCsr B       = with_new_values(A, 3.0e-3, 99);
  bool          host_ok = true;
  try {
    hupdate(B.view(), H);
  } catch (const ValueRangeError &) {
    host_ok = false;
  }
  if (host_ok) {
    ASSERT_CUDA(cuda::upload_values(H, &ref));
    dA.values.upload(B.values);
    bool    changed = true;
    int32_t scale   = -12345;
    ASSERT_BUILT(cuda::update_values_on_device(dA.v, s, &D, &changed, &scale));
    EXPECT_FALSE(changed) << w;
    EXPECT_EQ(scale, scale_of(H)) << w;
    expect_same(ref, D, w + " (update)");
  }
  EXPECT_CUDA(cuda::release(&ref));
  EXPECT_CUDA(cuda::release(&D));
}

} // namespace

namespace
{

struct RgBuild {
  RgCsrMatrix operator()(const CsrView &A, const RgCsrOptions &o) const { return build_rgcsr(A, o); }
};
struct PsBuild {
  PackSellMatrix operator()(const CsrView &A, const PackSellOptions &o) const { return build_packsell(A, o); }
};

void check_rg(const HostCsr &A, const RgCsrOptions &o, const std::string &w)
{
  check_format(A, o, w, RgBuild{}, [](const CsrView &B, RgCsrMatrix &M) { update_rgcsr_values(B, M); });
}
void check_ps(const HostCsr &A, const PackSellOptions &o, const std::string &w)
{
  check_format(A, o, w, PsBuild{}, [](const CsrView &B, PackSellMatrix &M) { update_packsell_values(B, M); });
}

HybridOption hyb(const char *s)
{
  return HybridOption::parse(s);
}

std::vector<RgCsrOptions> rg_options(bool full)
{
  std::vector<RgCsrOptions> v;
  for (int32_t G : full ? std::vector<int32_t>{32, 64, 128} : std::vector<int32_t>{32})
    for (const char *h : {"none", "auto", "2"}) {
      RgCsrOptions o;
      o.group_size = G;
      o.hybrid     = hyb(h);
      v.push_back(o);
    }
  return v;
}

std::vector<PackSellOptions> ps_options(bool full)
{
  std::vector<PackSellOptions> v;
  const std::vector<ValueFormat> formats = full ? std::vector<ValueFormat>{ValueFormat::exact(), ValueFormat::fp16(), ValueFormat::bf16(), ValueFormat::e8m(10), ValueFormat::e8m(22)} : std::vector<ValueFormat>{ValueFormat::exact(), ValueFormat::bf16()};
  for (int32_t C : full ? std::vector<int32_t>{32, 64} : std::vector<int32_t>{32})
    for (int32_t sigma : full ? std::vector<int32_t>{1, kPackSellSigmaAuto, 2 * C, 1024} : std::vector<int32_t>{1, kPackSellSigmaAuto})
      for (const ValueFormat &f : formats)
        for (PackSellScaling sc : {PackSellScaling::None, PackSellScaling::Auto}) {
          if (!f.lossy() && sc == PackSellScaling::Auto) continue;
          if (!full && f.lossy() && sc == PackSellScaling::None) continue;
          for (const char *h : full ? std::vector<const char *>{"none", "auto", "3"} : std::vector<const char *>{"auto", "none"}) {
            PackSellOptions o;
            o.slice_height = C;
            o.sigma        = sigma;
            o.value_format = f;
            o.scaling      = sc;
            o.hybrid       = hyb(h);
            v.push_back(o);
          }
        }
  return v;
}

std::string rg_name(const RgCsrOptions &o)
{
  return "rgcsr G=" + std::to_string(o.group_size) + " hybrid " + o.hybrid.name();
}
std::string ps_name(const PackSellOptions &o)
{
  return "packsell C=" + std::to_string(o.slice_height) + " sigma " + (o.sigma == kPackSellSigmaAuto ? "auto" : std::to_string(o.sigma)) + " " + o.value_format.name() + " scaling " + (o.scaling == PackSellScaling::Auto ? "auto" : "none") + " hybrid " +
         o.hybrid.name();
}

void all_formats(const HostCsr &A, const std::string &label, bool full)
{
  for (const RgCsrOptions &o : rg_options(full)) check_rg(A, o, label + " " + rg_name(o));
  for (const PackSellOptions &o : ps_options(full)) check_ps(A, o, label + " " + ps_name(o));
}

} // namespace

// ---- edge cases (small: part of the sanitizer subset) ----

namespace gputest
{

// What the typed device-build cases need beyond format_traits.hpp: options the builders refuse,
// and the layout's main array (null when nothing was built). In gputest, not the anonymous
// namespace: the ctest names carry the type (DeviceBuildSmallByFormat.Case<gputest::DeviceBuildRgCsr>).
struct DeviceBuildRgCsr : RgCsrFormat {
  static RgCsrOptions bad_options()
  {
    RgCsrOptions r;
    r.group_size = 48;
    return r;
  }
  static const void *slot_array(const Device &d) { return d.values; }
};

struct DeviceBuildPackSell : PackSellFormat {
  static PackSellOptions bad_options()
  {
    PackSellOptions p;
    p.sigma = 48;
    return p;
  }
  static const void *slot_array(const Device &d) { return d.words; }
};

} // namespace gputest

TEST(DeviceBuildSmall, ZeroRows)
{
  HostCsr A;
  A.rows = 0;
  A.cols = 5;
  all_formats(A, "zero rows", true);
}

TEST(DeviceBuildSmall, ZeroRowsZeroCols)
{
  HostCsr A;
  all_formats(A, "0 x 0", true);
}

TEST(DeviceBuildSmall, AllRowsEmpty)
{
  HostCsr A;
  A.rows = 70;
  A.cols = 40;
  A.rowptr.assign(71, 0);
  all_formats(A, "all rows empty", true);
}

TEST(DeviceBuildSmall, OneRow)
{
  all_formats(pspmv_test::csr_from_rows(100000, {{{0, 1.5}, {3, -2.0}, {40000, 3.25}, {99999, 0.0}}}), "one row", true);
}

TEST(DeviceBuildSmall, RowsFewerThanSliceHeight)
{
  RandomSpec s;
  s.rows   = 7;
  s.cols   = 50;
  s.length = [](int32_t, uint64_t rnd) { return int32_t(rnd % 12); };
  s.seed   = 3;
  all_formats(random_csr(s), "7 rows", true);
}

TEST(DeviceBuildSmall, EmptyRowsAndOneLongRow)
{
  RandomSpec s;
  s.rows   = 300;
  s.cols   = 5000;
  s.length = [](int32_t r, uint64_t rnd) { return r == 123 ? 4000 : rnd % 4 == 0 ? 0 : int32_t(1 + rnd % 6); };
  s.seed   = 4;
  all_formats(random_csr(s), "one long row", true);
}

TEST(DeviceBuildSmall, HugeColumnJumps)
{
  RandomSpec s;
  s.rows   = 200;
  s.cols   = 2000000000;
  s.length = [](int32_t, uint64_t rnd) { return int32_t(rnd % 6); };
  s.spread = ColumnSpread::Extremes;
  s.seed   = 5;
  all_formats(random_csr(s), "huge jumps", true);
}

// 7-point stencils, whose long steps (+-n, +-n^2) every row of a slice shares: the layouts take
// column gaps (e8m14 on 20^3, fp16 and bf16 on 182^2 x 8 where n^2 = 33124 exceeds 15 bits), the
// device build agrees bit for bit (gap table included) and so do value updates; the products
// match CSR at every threads-per-row count (format_checks.cpp).
TEST(DeviceBuildSmall, StencilColumnGaps)
{
  const HostCsr cube = pspmv_test::laplace3d(20, 20, 20), slab = pspmv_test::laplace3d(182, 182, 8);
  for (const char *f : {"e8m14", "fp16", "bf16", "exact"})
    for (int32_t sigma : {1, kPackSellSigmaAuto}) {
      PackSellOptions o;
      o.value_format        = ValueFormat::parse(f);
      o.sigma               = sigma;
      const HostCsr    &A   = std::string(f) == "e8m14" ? cube : slab;
      const std::string w   = std::string("stencil ") + f + " sigma " + std::to_string(sigma);
      const bool        pay = std::string(f) != "exact"; // exact's 30-bit deltas hold every step
      EXPECT_EQ(build_packsell(A.view(), o).gaps.empty(), !pay) << w;
      check_ps(A, o, w);
      for (int32_t T : {0, 1, 2, 4, 8}) {
        gputest::PsConfig c;
        c.format          = o.value_format;
        c.sigma           = sigma == kPackSellSigmaAuto ? 1024 : 1;
        c.threads_per_row = T;
        gputest::check_packsell(A, c, w + " T " + std::to_string(T));
      }
    }
}

// Range errors: the same row, column and message as the host, for the FIRST offending entry in
// CSR order (an underflow in row 1 comes before an overflow in row 2).
TEST(DeviceBuildSmall, RangeErrorsLikeHost)
{
  const HostCsr A = pspmv_test::csr_from_rows(10, {{{0, 1.0}, {2, 2.0}}, {{1, 1.0}, {7, 1e-30}}, {{3, 1e6}, {9, 1.0}}, {}});
  for (const ValueFormat &f : {ValueFormat::fp16(), ValueFormat::bf16(), ValueFormat::e8m(10)})
    for (PackSellScaling sc : {PackSellScaling::None, PackSellScaling::Auto}) {
      PackSellOptions o;
      o.value_format = f;
      o.scaling      = sc;
      // the host must refuse at least fp16 / none: otherwise this test checks nothing
      if (f.name() == "fp16" && sc == PackSellScaling::None) EXPECT_THROW(build_packsell(A.view(), o), ValueRangeError);
      check_ps(A, o, "range " + ps_name(o));
    }
  // overflow only
  const HostCsr   B = pspmv_test::csr_from_rows(4, {{{0, 1.0}}, {{1, -7e4}, {3, 1e5}}});
  PackSellOptions o;
  o.value_format = ValueFormat::fp16();
  EXPECT_THROW(build_packsell(B.view(), o), ValueRangeError);
  check_ps(B, o, "overflow fp16");
  // Inf and NaN are stored, not refused
  const HostCsr C = pspmv_test::csr_from_rows(4, {{{0, 1.0}, {1, std::numeric_limits<double>::infinity()}}, {{2, std::numeric_limits<double>::quiet_NaN()}}});
  check_ps(C, o, "inf nan fp16");
}

// A value update whose values do not fit: refused like the host, the layout unchanged.
TEST(DeviceBuildSmall, UpdateRangeError)
{
  const HostCsr A = pspmv_test::csr_from_rows(6, {{{0, 1.0}, {2, 2.0}}, {{1, 1.0}, {5, 3.0}}});
  HostCsr       B = A;
  B.values[3]     = 1e9;
  PackSellOptions o;
  o.value_format = ValueFormat::fp16();
  DevCsr                dA(A);
  cuda::DevicePackSell  D{};
  cuda::DeviceBuildInfo info;
  ASSERT_BUILT(cuda::build_on_device(dA.v, o, test_stream(), &D, &info));
  const std::vector<uint32_t> before = dl(D.words, D.num_words);
  PackSellMatrix              H      = build_packsell(A.view(), o);
  std::string                 host_error;
  try {
    update_packsell_values(B.view(), H);
  } catch (const ValueRangeError &e) {
    host_error = e.what();
  }
  ASSERT_FALSE(host_error.empty());
  dA.values.upload(B.values);
  bool             changed = false;
  int32_t          scale   = 0;
  const BuildError e       = cuda::update_values_on_device(dA.v, test_stream(), &D, &changed, &scale);
  EXPECT_EQ(e.kind, BuildError::Kind::ValueRange) << "the device update did not refuse 1e9 in fp16: '" << e.what() << "'";
  EXPECT_EQ(e.what(), host_error);
  expect_bits(before, dl(D.words, D.num_words), "words after a refused update");
  EXPECT_CUDA(cuda::release(&D));
}

// The typed cases of the device builders (DeviceBuildSmallByFormat/0.*: RgCSR,
// DeviceBuildSmallByFormat/1.*: PackSELL), where a test did the same for each format in turn.
template <class F>
class DeviceBuildSmallByFormat : public testing::Test {
};
using DeviceBuildFormats = testing::Types<DeviceBuildRgCsr, DeviceBuildPackSell>;
TYPED_TEST_SUITE(DeviceBuildSmallByFormat, DeviceBuildFormats);

// A different nonzero count is reported as a changed pattern, nothing written.
TYPED_TEST(DeviceBuildSmallByFormat, UpdatePatternChanged)
{
  using F                 = TypeParam;
  const HostCsr         A = pspmv_test::csr_from_rows(6, {{{0, 1.0}, {2, 2.0}}, {{1, 1.0}}});
  const HostCsr         B = pspmv_test::csr_from_rows(6, {{{0, 1.0}, {2, 2.0}}, {{1, 1.0}, {4, 1.0}}});
  DevCsr                dA(A), dB(B);
  typename F::Device    D{};
  cuda::DeviceBuildInfo info;
  ASSERT_BUILT(cuda::build_on_device(dA.v, typename F::Options{}, test_stream(), &D, &info));
  bool    changed = false;
  int32_t scale   = 0;
  ASSERT_BUILT(cuda::update_values_on_device(dB.v, test_stream(), &D, &changed, &scale));
  EXPECT_TRUE(changed);
  EXPECT_CUDA(cuda::release(&D));
}

// Bad options (RgCSR: G = 48, PackSELL: sigma 48): the host's FormatError messages.
TYPED_TEST(DeviceBuildSmallByFormat, BadOptionsLikeHost)
{
  using F                     = TypeParam;
  const HostCsr             A = pspmv_test::csr_from_rows(6, {{{0, 1.0}}});
  DevCsr                    dA(A);
  const typename F::Options o = F::bad_options();
  typename F::Device        D{};
  cuda::DeviceBuildInfo     info;
  std::string               host, dev;
  try {
    F::build(A.view(), o);
  } catch (const FormatError &e) {
    host = e.what();
  }
  BuildError e = cuda::build_on_device(dA.v, o, test_stream(), &D, &info);
  EXPECT_EQ(e.kind, BuildError::Kind::Format);
  dev = e.what();
  EXPECT_FALSE(host.empty());
  EXPECT_EQ(host, dev);
}

// An invalid CSR: the host's check_csr message, found on the device (no host copy of the CSR),
// for both formats: columns not increasing, a column out of range, a decreasing row pointer.
TYPED_TEST(DeviceBuildSmallByFormat, InvalidCsrLikeHost)
{
  using F                                           = TypeParam;
  const HostCsr                                good = pspmv_test::csr_from_rows(6, {{{0, 1.0}, {2, 2.0}}, {{1, 1.0}, {4, 1.0}}, {}, {{0, 1.0}, {5, 2.0}}});
  std::vector<std::pair<std::string, HostCsr>> cases;
  HostCsr                                      A = good;
  std::swap(A.colidx[2], A.colidx[3]);
  cases.push_back({"columns not increasing", A});
  A           = good;
  A.colidx[5] = 6;
  cases.push_back({"column out of range", A});
  A           = good;
  A.rowptr[2] = 5; // row 1 ends after row 2 starts: rowptr decreases from 5 to 4 at row 2
  cases.push_back({"row pointer decreases", A});
  for (const auto &c : cases) {
    DevCsr      dA(c.second);
    std::string host;
    try {
      check_csr(c.second.view());
    } catch (const FormatError &e) {
      host = e.what();
    }
    ASSERT_FALSE(host.empty()) << c.first;
    typename F::Device    D{};
    cuda::DeviceBuildInfo info;
    const BuildError      e = cuda::build_on_device(dA.v, typename F::Options{}, test_stream(), &D, &info);
    EXPECT_EQ(e.kind, BuildError::Kind::Format) << c.first;
    EXPECT_EQ(e.what(), host) << c.first;
    EXPECT_EQ(F::slot_array(D), nullptr) << c.first << ": nothing allocated";
  }
}

// ---- random families ----

namespace
{

// One random family: shape, row-length law and column spread (random_matrices.hpp); seeded by its
// position in the list, so every family is reproducible on its own.
struct RandomFamily {
  const char                               *name;
  int32_t                                   rows, cols;
  std::function<int32_t(int32_t, uint64_t)> len;
  ColumnSpread                              spread;
};

const std::vector<RandomFamily> &random_families()
{
  static const std::vector<RandomFamily> fams = {
    {"square_empty_rows", 1000, 1000, [](int32_t, uint64_t r) { return r % 10 == 0 ? 0 : int32_t(1 + (r >> 8) % 24); }, ColumnSpread::Uniform},
    {"rectangular_wide", 300, 5000, [](int32_t, uint64_t r) { return int32_t(r % 61); }, ColumnSpread::Clustered},
    {"rectangular_tall", 5000, 300, [](int32_t, uint64_t r) { return int32_t(r % 9); }, ColumnSpread::Uniform},
    {"dense_row", 2000, 2000, [](int32_t i, uint64_t r) { return i == 777 ? 2000
                                                               : i == 0   ? 1000
                                                                          : int32_t(r % 11); }, ColumnSpread::Uniform},
    {"huge_column_gaps", 2000, 4000000, [](int32_t, uint64_t r) { return int32_t(r % 9); }, ColumnSpread::Uniform},
    {"extremes", 1500, 9000000, [](int32_t, uint64_t r) { return int32_t(r % 14); }, ColumnSpread::Extremes},
    {"power_law", 4000, 4000, [](int32_t, uint64_t r) { return (r % 50 == 0) ? int32_t(200 + r % 800) : int32_t(1 + r % 5); }, ColumnSpread::Uniform},
    {"far_columns_tail", 3000, 3000000, [](int32_t, uint64_t r) { return (r % 50 == 0) ? int32_t(100 + r % 300) : int32_t(r % 7); }, ColumnSpread::Uniform},
  };
  return fams;
}

class DeviceBuildFamilyTest : public testing::TestWithParam<size_t> { };

} // namespace

// Every option combination on each family (one test per family, so sanitizer runs can shard them).
TEST_P(DeviceBuildFamilyTest, BitForBit)
{
  const RandomFamily &f = random_families()[GetParam()];
  RandomSpec          s;
  s.rows      = f.rows;
  s.cols      = f.cols;
  s.length    = f.len;
  s.spread    = f.spread;
  s.seed      = 21 + GetParam();
  s.magnitude = (s.seed + 1) % 2 ? 1.0 : 1e-6;
  all_formats(random_csr(s), f.name, true);
}

INSTANTIATE_TEST_SUITE_P(DeviceBuildRandom, DeviceBuildFamilyTest, testing::Range<size_t>(0, random_families().size()), [](const testing::TestParamInfo<size_t> &info) { return std::string(random_families()[info.param].name); });

// ---- the shared matrices ----

namespace
{

class DeviceBuildFileTest : public testing::TestWithParam<std::string> { };

} // namespace

TEST_P(DeviceBuildFileTest, BitForBit)
{
  const HostCsr A = pspmv_test::read_matrix_market(matrix_dir() + "/" + GetParam());
  // every option combination on the small files; a subset (G/C 32, sigma 1 and auto, exact and
  // bf16 with scaling auto, hybrid auto and none) on the others, which take seconds per host build
  all_formats(A, stem(GetParam()), is_small(stem(GetParam())));
}

INSTANTIATE_TEST_SUITE_P(SmallDeviceBuildFiles, DeviceBuildFileTest, testing::ValuesIn(files(true)), param_name);
INSTANTIATE_TEST_SUITE_P(DeviceBuildFiles, DeviceBuildFileTest, testing::ValuesIn(files(false)), param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DeviceBuildFileTest);
