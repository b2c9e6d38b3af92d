// Edge cases of the device formats (suites SmallEdge and, typed over the formats,
// SmallEdgeByFormat: part of the compute-sanitizer subset *Small*):
// zero sizes, value updates, layout mismatches, release, 64-bit slot offsets, non-finite values.
#include "formats/device_formats.hpp"
#include "cuda/device_memory.cuh"
#include "format_checks.hpp"
#include "format_traits.hpp"
#include "random_matrices.hpp"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

using namespace gputest;
using namespace pspmv;

namespace
{

HostCsr small_random(int32_t rows, int32_t cols, int32_t maxlen, uint64_t seed)
{
  RandomSpec s;
  s.rows   = rows;
  s.cols   = cols;
  s.length = [maxlen](int32_t, uint64_t rnd) { return int32_t(rnd % uint64_t(maxlen + 1)); };
  s.seed   = seed;
  return random_csr(s);
}

HostCsr empty_matrix(int32_t rows, int32_t cols)
{
  HostCsr A;
  A.rows = rows;
  A.cols = cols;
  A.rowptr.assign(size_t(rows) + 1, 0);
  return A;
}

void every_config(const HostCsr &A, const std::string &label)
{
  for (const RgConfig &c : rgcsr_configs()) check_rgcsr(A, c, label);
  for (const PsConfig &c : packsell_configs(PackSellScaling::None)) check_packsell(A, c, label);
}

// Address arithmetic modulo 2^64 (never dereferenced on the host).
template <class T>
T *shifted(T *p, int64_t elements)
{
  return reinterpret_cast<T *>(reinterpret_cast<uintptr_t>(p) + uintptr_t(elements) * sizeof(T));
}

// Well past 2^32 and odd, so a kernel that keeps slot offsets in 32 bits reads wrong places.
constexpr int64_t kOffset = (int64_t(3) << 31) + 12345;

} // namespace

namespace gputest
{

// What the typed edge cases need beyond format_traits.hpp: their configurations, the arrays a
// value update must keep, and the slot arrays the offset test shifts. (In gputest, not in the
// anonymous namespace: the type names the ctest names, SmallEdgeByFormat.ValueUpdate<gputest::RgCsrEdge>.)
struct RgCsrEdge : RgCsrFormat {
  static std::vector<RgConfig> value_update_configs() { return {RgConfig{32, hybrid_fixed(3)}, RgConfig{64, hybrid_auto()}}; }
  static int32_t               scale_exponent(const Host &) { return 0; }
  static void                  expect_same_arrays(const Device &d, const Device &before, const Host &)
  {
    EXPECT_EQ(d.values, before.values);
    EXPECT_EQ(d.columns, before.columns);
    EXPECT_EQ(d.tail.val, before.tail.val);
    EXPECT_EQ(d.diagonal, before.diagonal);
  }
  static std::vector<RgCsrOptions> offset_options()
  {
    RgCsrOptions opt;
    opt.group_size = 64;
    opt.hybrid     = hybrid_fixed(8);
    return {opt};
  }
  static std::string options_name(const Host &M) { return "G=" + std::to_string(M.group_size); }
  // d with its group pointers replaced and its slot arrays moved by `elements`.
  static Device shifted_by(const Device &d, int64_t *group_pointers, int64_t elements)
  {
    Device s         = d;
    s.group_pointers = group_pointers;
    s.columns        = shifted(d.columns, elements);
    s.values         = shifted(d.values, elements);
    return s;
  }
};

struct PackSellEdge : PackSellFormat {
  static std::vector<PsConfig> value_update_configs()
  {
    return {
      {32, 1, ValueFormat::exact(), PackSellScaling::None, hybrid_fixed(3)},
      {32, 1024, ValueFormat::bf16(), PackSellScaling::None, hybrid_auto()},
      // Values 1e6 then 1e9 (FP16 max 65504): scaling auto picks one exponent at the build and
      // a new one at the update (a non-zero exponent tells the update that auto was asked for).
      {64, 1024, ValueFormat::fp16(), PackSellScaling::Auto, hybrid_fixed(4)},
    };
  }
  static int32_t scale_exponent(const Host &M) { return M.scale_exponent; }
  static void    expect_same_arrays(const Device &d, const Device &before, const Host &M)
  {
    EXPECT_EQ(d.words, before.words);
    EXPECT_EQ(d.exact_values, before.exact_values);
    EXPECT_EQ(d.tail.val, before.tail.val);
    EXPECT_EQ(d.diagonal, before.diagonal);
    EXPECT_EQ(d.inv_scale, std::ldexp(1.0, -M.scale_exponent));
  }
  static std::vector<PackSellOptions> offset_options()
  {
    std::vector<PackSellOptions> v;
    for (const ValueFormat &f : {ValueFormat::exact(), ValueFormat::fp16()}) {
      PackSellOptions opt;
      opt.slice_height = 64;
      opt.sigma        = 128;
      opt.value_format = f;
      opt.hybrid       = hybrid_fixed(8);
      v.push_back(opt);
    }
    return v;
  }
  static std::string options_name(const Host &M) { return M.value_format.name(); }
  static Device      shifted_by(const Device &d, int64_t *slice_pointers, int64_t elements)
  {
    Device s         = d;
    s.slice_pointers = slice_pointers;
    s.words          = shifted(d.words, elements);
    if (d.exact_values) s.exact_values = shifted(d.exact_values, elements);
    return s;
  }
};

} // namespace gputest

// Typed edge cases (SmallEdgeByFormat/0.*: RgCSR, SmallEdgeByFormat/1.*: PackSELL): one test body
// for both formats where they were copies.
template <class F>
class SmallEdgeByFormat : public testing::Test {
};
using EdgeFormats = testing::Types<RgCsrEdge, PackSellEdge>;
TYPED_TEST_SUITE(SmallEdgeByFormat, EdgeFormats);

TEST(SmallEdge, ZeroRowsZeroCols)
{
  every_config(empty_matrix(0, 0), "0x0");
}
TEST(SmallEdge, ZeroRows)
{
  every_config(empty_matrix(0, 10), "0x10");
}
TEST(SmallEdge, ZeroCols)
{
  every_config(empty_matrix(10, 0), "10x0");
}
TEST(SmallEdge, NoNonzeros)
{
  every_config(empty_matrix(100, 100), "100x100 empty");
}
TEST(SmallEdge, SingleEntry)
{
  HostCsr A = empty_matrix(1, 1);
  A.rowptr  = {0, 1};
  A.colidx  = {0};
  A.values  = {-2.5};
  every_config(A, "1x1");
}
TEST(SmallEdge, OneColumn)
{
  every_config(small_random(100, 1, 1, 3), "100x1");
}
TEST(SmallEdge, ExplicitZerosOnly)
{
  HostCsr A = small_random(70, 70, 5, 4);
  for (double &v : A.values) v = 0.0;
  every_config(A, "explicit zeros");
}

// Inf and NaN entries propagate like in the CSR product (and never through padding).
TEST(SmallEdge, NonFiniteValues)
{
  HostCsr A = small_random(200, 200, 6, 5);
  ASSERT_GT(A.nnz(), 3);
  A.values[0]                   = std::numeric_limits<double>::infinity();
  A.values[size_t(A.nnz() / 2)] = std::numeric_limits<double>::quiet_NaN();
  every_config(A, "non-finite");
}

TEST(SmallEdge, SpmvOnEmptyDeviceMatrixIsNoOp)
{
  cuda::DeviceRgCsr    r;
  cuda::DevicePackSell p;
  EXPECT_EQ(cuda::spmv(r, nullptr, nullptr, false, test_stream()), cudaSuccess);
  EXPECT_EQ(cuda::spmv(p, nullptr, nullptr, true, test_stream()), cudaSuccess);
  EXPECT_EQ(cuda::stored_bytes(r), 0);
  EXPECT_EQ(cuda::stored_bytes(p), 0);
  EXPECT_EQ(cuda::release(&r), cudaSuccess);
  EXPECT_EQ(cuda::release(&p), cudaSuccess);
}

TEST(SmallEdge, ReuploadAndReleaseTwice)
{
  const HostCsr        A = small_random(300, 300, 9, 6), B = small_random(100, 400, 20, 7);
  RgCsrOptions         ro;
  PackSellOptions      po;
  cuda::DeviceRgCsr    r;
  cuda::DevicePackSell p;
  ASSERT_CUDA(cuda::upload(build_rgcsr(A.view(), ro), &r));
  ASSERT_CUDA(cuda::upload(build_packsell(A.view(), po), &p));
  const RgCsrMatrix    rb = build_rgcsr(B.view(), ro);
  const PackSellMatrix pb = build_packsell(B.view(), po);
  ASSERT_CUDA(cuda::upload(rb, &r)); // frees A's arrays first
  ASSERT_CUDA(cuda::upload(pb, &p));
  check_product(
    B, "re-uploaded RgCSR", [&](const double *x, double *y, bool add) { rgcsr_spmv(rb, x, y, add); }, [&](const double *x, double *y, bool add, cudaStream_t s) { return cuda::spmv(r, x, y, add, s); }, {});
  check_product(
    B, "re-uploaded PackSELL", [&](const double *x, double *y, bool add) { packsell_spmv(pb, x, y, add); }, [&](const double *x, double *y, bool add, cudaStream_t s) { return cuda::spmv(p, x, y, add, s); }, lossy_bound(pb.value_format, pb.scale_exponent));
  EXPECT_CUDA(cuda::release(&r));
  EXPECT_CUDA(cuda::release(&r));
  EXPECT_CUDA(cuda::release(&p));
  EXPECT_CUDA(cuda::release(&p));
  EXPECT_EQ(r.values, nullptr);
  EXPECT_EQ(r.rows, 0);
  EXPECT_EQ(p.words, nullptr);
  EXPECT_EQ(p.rows, 0);
}

// The tail's own kernel is planned once, at upload (entries per warp, a multiple of 32, for
// at most 64 warps per multiprocessor); a product refuses a tail that was never planned
// instead of reading a chunk of 0, and release clears the plan.
TEST(SmallEdge, TailPlannedAtUpload)
{
  int sms = 0;
  ASSERT_CUDA(cuda::detail::multiprocessor_count(&sms));
  const int64_t warps_max = int64_t(sms) * 64;
  // the last size: a tail of about 4.2 entries per row (lengths 0..12, K = 2) over more than
  // 64 warps per multiprocessor of 32 entries, so chunks of several batches (the prefetching loop)
  const int32_t many = int32_t(std::min<int64_t>(int64_t(3) * warps_max * 32 / 4, int64_t(1) << 24));
  for (const int32_t rows : {int32_t(1), int32_t(700), int32_t(40000), many}) {
    const HostCsr A = small_random(rows, 300, 12, 11);
    RgCsrOptions  ro;
    ro.hybrid.mode      = HybridOption::Mode::Fixed;
    ro.hybrid.width     = 2;
    const RgCsrMatrix h = build_rgcsr(A.view(), ro);
    cuda::DeviceRgCsr r;
    ASSERT_CUDA(cuda::upload(h, &r));
    const std::string w = std::to_string(rows) + " rows, tail " + std::to_string(r.tail.nnz);
    if (r.tail.nnz == 0) {
      EXPECT_EQ(r.tail.chunk, 0) << w;
    } else {
      ASSERT_GT(r.tail.chunk, 0) << w;
      EXPECT_EQ(r.tail.chunk % 32, 0) << w;
      const int64_t warps = (r.tail.nnz + r.tail.chunk - 1) / r.tail.chunk;
      EXPECT_LE(warps, warps_max) << w;
      EXPECT_LE(r.tail.chunk - 32, (r.tail.nnz + warps_max - 1) / warps_max) << w << ": chunk larger than needed";
      DeviceArray<double> x(300), y{size_t(rows)};
      x.upload(std::vector<double>(300, 1.0));
      if (rows == many) EXPECT_GT(r.tail.chunk, 32) << w << ": several batches per warp";
      const std::vector<double> sentinel(size_t(rows), 7.0);
      y.upload(sentinel);
      cuda::DeviceRgCsr unplanned = r; // shares r's arrays; only r is released
      unplanned.tail.chunk        = 0;
      EXPECT_EQ(cuda::spmv(unplanned, x.get(), y.get(), false, test_stream()), cudaErrorInvalidValue) << w;
      ASSERT_CUDA(cudaStreamSynchronize(test_stream()));
      EXPECT_EQ(y.download(), sentinel) << w << ": a refused product wrote y";
    }
    EXPECT_CUDA(cuda::release(&r));
    EXPECT_EQ(r.tail.chunk, 0) << w;
  }
}

// upload_values keeps every array (same pointers) and the product follows the new values,
// the tail and the diagonal included.
TYPED_TEST(SmallEdgeByFormat, ValueUpdate)
{
  using F         = TypeParam;
  const HostCsr A = small_random(700, 600, 30, uint64_t(8 + F::kIndex));
  for (const typename F::Config &c : F::value_update_configs()) {
    SCOPED_TRACE(c.name());
    const typename F::Options opt       = c.options();
    const bool                scaled    = F::scaled(c);
    const HostCsr             A1        = scaled ? with_new_values(A, 1e6, 5) : A;
    typename F::Host          M         = F::build(A1.view(), opt);
    const int32_t             old_scale = F::scale_exponent(M);
    typename F::Device        d;
    ASSERT_CUDA(cuda::upload(M, &d));
    const typename F::Device before = d;
    const HostCsr            B      = with_new_values(A, scaled ? 1e9 : 3.0, uint64_t(99 - F::kIndex));
    F::update(B.view(), M);
    if (scaled) EXPECT_NE(F::scale_exponent(M), old_scale);
    ASSERT_CUDA(cuda::upload_values(M, &d));
    F::expect_same_arrays(d, before, M);
    std::vector<double> diag(600), ddiag(600);
    F::diagonal(M, diag.data());
    ASSERT_CUDA(cudaMemcpy(ddiag.data(), d.diagonal, 600 * sizeof(double), cudaMemcpyDeviceToHost));
    EXPECT_EQ(diag, ddiag);
    check_product(
      B, "updated " + c.name(), [&](const double *x, double *y, bool add) { F::spmv(M, x, y, add); }, [&](const double *x, double *y, bool add, cudaStream_t s) { return cuda::spmv(d, x, y, add, s); }, F::bound(M));
    EXPECT_CUDA(cuda::release(&d));
  }
}

TEST(SmallEdge, UploadValuesRejectsAnotherLayout)
{
  const HostCsr        A = small_random(300, 300, 9, 10), B = small_random(300, 300, 12, 11);
  cuda::DeviceRgCsr    r;
  cuda::DevicePackSell p;
  ASSERT_CUDA(cuda::upload(build_rgcsr(A.view(), RgCsrOptions{}), &r));
  ASSERT_CUDA(cuda::upload(build_packsell(A.view(), PackSellOptions{}), &p));
  EXPECT_EQ(cuda::upload_values(build_rgcsr(B.view(), RgCsrOptions{}), &r), cudaErrorInvalidValue);
  EXPECT_EQ(cuda::upload_values(build_packsell(B.view(), PackSellOptions{}), &p), cudaErrorInvalidValue);
  PackSellOptions other;
  other.value_format = ValueFormat::bf16();
  EXPECT_EQ(cuda::upload_values(build_packsell(A.view(), other), &p), cudaErrorInvalidValue);
  EXPECT_CUDA(cuda::release(&r));
  EXPECT_CUDA(cuda::release(&p));
}

// 64-bit slot offsets without a 25 GB matrix: the group/slice pointers are raised by kOffset
// and the array pointers lowered by as much, so the addresses are unchanged only if the
// kernel computes pointer + (offset + k*G + lane) in 64 bits.
TYPED_TEST(SmallEdgeByFormat, SlotOffsetsBeyond32Bits)
{
  using F         = TypeParam;
  const HostCsr A = small_random(500, 800, 40, uint64_t(12 + F::kIndex));
  for (const typename F::Options &opt : F::offset_options()) {
    const typename F::Host M = F::build(A.view(), opt);
    SCOPED_TRACE(F::options_name(M));
    typename F::Device d;
    ASSERT_CUDA(cuda::upload(M, &d));
    std::vector<int64_t> sp = F::slot_pointers(M); // group or slice pointers
    for (int64_t &g : sp) g += kOffset;
    DeviceArray<int64_t> dsp(sp.size());
    dsp.upload(sp);
    typename F::Device s = F::shifted_by(d, dsp.get(), -kOffset);
    for (const int32_t T : {1, 2, 4, 8}) { // every kernel; large matrices run T = 1
      s.threads_per_row = T;
      check_product(
        A, std::string(F::kLabel) + " shifted by 2^32+, T=" + std::to_string(T), [&](const double *x, double *y, bool add) { F::spmv(M, x, y, add); }, [&](const double *x, double *y, bool add, cudaStream_t st) { return cuda::spmv(s, x, y, add, st); }, F::bound(M));
    }
    EXPECT_CUDA(cuda::release(&d));
  }
}

// Exact mode (D = 30) needs a dummy only for a jump of 2^30 columns or more. Every row here
// has its nonzeros in a window of 64 columns starting at 2^30, so its first word is a dummy
// (the jump from column 0). x is the whole vector (8 GiB on the device: the Exact kernel at
// T > 1 loads x[0] for padding rows), zero but for the window; the reference is the CSR
// product over the window. Every T, with and without a tail (hybrid none, K = 3).
TEST(Edge, ExactDummiesBeyondTwoTo30)
{
  constexpr int32_t         base = int32_t(1) << 30, window = 64, rows = 300;
  HostCsr                   A   = empty_matrix(rows, base + window);
  const std::vector<double> rnd = random_vector(size_t(rows) * window, 91);
  for (int32_t r = 0; r < rows; ++r) {
    for (int32_t j = 0; j < window; ++j)
      if (rnd[size_t(r) * window + j] > 0.6 || j == r % window) { // >= 1 nonzero a row
        A.colidx.push_back(base + j);
        A.values.push_back(rnd[size_t(r) * window + j] - 0.1 * j);
      }
    A.rowptr[size_t(r) + 1] = int32_t(A.colidx.size());
  }
  const std::vector<double> xw = random_vector(window, 92);
  std::vector<double>       ref(rows, 0.0), absax(rows, 0.0);
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t k = A.rowptr[r]; k < A.rowptr[r + 1]; ++k) {
      ref[r] += A.values[k] * xw[A.colidx[k] - base];
      absax[r] += std::fabs(A.values[k] * xw[A.colidx[k] - base]);
    }
  DeviceArray<double> dx(size_t(base) + window), dy(rows);
  ASSERT_CUDA(cudaMemset(dx.get(), 0, sizeof(double) * (size_t(base) + window)));
  ASSERT_CUDA(cudaMemcpy(dx.get() + base, xw.data(), sizeof(double) * window, cudaMemcpyHostToDevice));
  for (const char *hybrid : {"none", "3"}) {
    PackSellOptions opt;
    opt.value_format       = ValueFormat::exact();
    opt.hybrid             = HybridOption::parse(hybrid);
    const PackSellMatrix M = build_packsell(A.view(), opt);
    ASSERT_EQ(M.delta_bits, 30);
    ASSERT_EQ(M.stats().dummy_words, rows) << "one dummy a row: the jump from column 0 to 2^30 + j";
    cuda::DevicePackSell d;
    ASSERT_CUDA(cuda::upload(M, &d));
    for (const int32_t T : {1, 2, 4, 8}) {
      d.threads_per_row = T;
      dy.poison();
      ASSERT_CUDA(cuda::spmv(d, dx.get(), dy.get(), false, test_stream()));
      ASSERT_CUDA(cudaStreamSynchronize(test_stream()));
      const std::vector<double> got = dy.download();
      for (int32_t r = 0; r < rows; ++r) ASSERT_NEAR(got[r], ref[r], 1e-13 * absax[r]) << "hybrid " << hybrid << ", T = " << T << ", row " << r;
    }
    EXPECT_CUDA(cuda::release(&d));
  }
}

// Scaling auto at the ends of FP64's range (host reference: the unit tests). All values tiny
// (1e-300, FP64 subnormals 1e-310): the exponent stops at kMaxScaleExponent so the kernels'
// inv_scale = 2^-s is a normal double, not 0; all values huge (1e300): s < 0. Device products
// match the host reference of the format and the FP64 CSR product within the format's unit
// roundoff (check_product's bound, relative), the diagonal is the host's and nonzero.
// Rectangular (400 x 300), so the chained z = A y of check_product is skipped (1e300^2 = Inf).
namespace
{
void check_extreme_magnitudes(double magnitude, const std::string &label)
{
  HostCsr A = with_new_values(small_random(400, 300, 12, 12), magnitude, 13);
  for (size_t k = 0; k < A.values.size(); k += 17) A.values[k] = 0.0; // explicit zeros stay zeros
  for (const ValueFormat &f : {ValueFormat::fp16(), ValueFormat::bf16(), ValueFormat::e8m(14)})
    for (int32_t sigma : {1, 1024})
      for (const HybridOption &h : {hybrid_none(), hybrid_fixed(2)}) {
        const PsConfig c{32, sigma, f, PackSellScaling::Auto, h};
        ASSERT_TRUE(packsell_values_fit(A, f, PackSellScaling::Auto)) << label << " " << c.name();
        const PackSellMatrix M = build_packsell(A.view(), c.options());
        if (magnitude < 1.0) EXPECT_GT(M.scale_exponent, 900) << label << " " << c.name();
        else EXPECT_LT(M.scale_exponent, -800) << label << " " << c.name();
        std::vector<double> d(300);
        packsell_diagonal(M, d.data());
        for (int32_t r = 0; r < 300; ++r)
          for (int32_t k = A.rowptr[size_t(r)]; k < A.rowptr[size_t(r) + 1]; ++k)
            if (A.colidx[size_t(k)] == r && A.values[size_t(k)] != 0.0) EXPECT_NE(d[size_t(r)], 0.0) << label << " " << c.name() << ": diagonal " << r;
        check_packsell(A, c, label);
        // And through a value update from ordinary values to these (a new exponent).
        PackSellMatrix       U = build_packsell(with_new_values(A, 1.0, 14).view(), c.options());
        cuda::DevicePackSell dev;
        ASSERT_CUDA(cuda::upload(U, &dev));
        update_packsell_values(A.view(), U);
        EXPECT_EQ(U.scale_exponent, M.scale_exponent);
        ASSERT_CUDA(cuda::upload_values(U, &dev));
        EXPECT_EQ(dev.inv_scale, std::ldexp(1.0, -U.scale_exponent));
        EXPECT_NE(dev.inv_scale, 0.0);
        check_product(
          A, label + " updated " + c.name(), [&](const double *x, double *y, bool add) { packsell_spmv(U, x, y, add); }, [&](const double *x, double *y, bool add, cudaStream_t s) { return cuda::spmv(dev, x, y, add, s); }, lossy_bound(f, U.scale_exponent));
        EXPECT_CUDA(cuda::release(&dev));
      }
}
} // namespace

TEST(SmallEdge, AutoScalingTinyOnlyValues)
{
  check_extreme_magnitudes(1e-300, "values ~1e-300");
  check_extreme_magnitudes(1e-310, "values ~1e-310 (FP64 subnormals)");
}

TEST(SmallEdge, AutoScalingHugeOnlyValues)
{
  check_extreme_magnitudes(1e300, "values ~1e300");
}

// One 1e300 among ordinary values: scaling auto would flush them; refused on the host like
// an overflow, for every lossy format (the configurations check_packsell skips).
TEST(SmallEdge, AutoScalingRefusesAnOutlier)
{
  HostCsr A = small_random(200, 200, 8, 15);
  ASSERT_GT(A.nnz(), 10);
  A.values[5] = 1e300;
  for (const ValueFormat &f : {ValueFormat::fp16(), ValueFormat::bf16(), ValueFormat::e8m(14), ValueFormat::e8m(22)}) {
    EXPECT_FALSE(packsell_values_fit(A, f, PackSellScaling::Auto)) << f.name();
    const PsConfig c{32, 1, f, PackSellScaling::Auto, hybrid_auto()};
    EXPECT_THROW(build_packsell(A.view(), c.options()), ValueRangeError) << f.name();
    check_packsell(A, c, "outlier"); // expects the refusal
  }
  check_packsell(A, PsConfig{32, 1, ValueFormat::exact(), PackSellScaling::None, hybrid_auto()}, "outlier exact");
}
