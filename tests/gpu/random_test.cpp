// Random matrices through every configuration of both device formats: typed suite Random
// (Random/0.*: RgCSR, Random/1.*: PackSELL) and RandomPackSell for PackSELL's scaling, part of the
// compute-sanitizer subset --gtest_filter=*Small*:*Random*, so sizes stay small; each case
// targets one way a kernel can go wrong.
#include "format_checks.hpp"
#include "format_traits.hpp"
#include "random_matrices.hpp"
#include "formats/device_formats.hpp"

using namespace gputest;

namespace
{

int32_t uniform_len(uint64_t rnd, int32_t lo, int32_t hi)
{
  return lo + int32_t(rnd % uint64_t(hi - lo + 1));
}

// 1000 x 1000 (not a multiple of 32 rows): 10% empty rows, others 1..24 nonzeros.
HostCsr square_empty_rows()
{
  RandomSpec s;
  s.rows = s.cols = 1000;
  s.length        = [](int32_t, uint64_t rnd) { return rnd % 10 == 0 ? 0 : uniform_len(rnd >> 8, 1, 24); };
  s.seed          = 11;
  return random_csr(s);
}
// 300 x 5000 and 5000 x 300.
HostCsr rectangular_wide()
{
  RandomSpec s;
  s.rows   = 300;
  s.cols   = 5000;
  s.length = [](int32_t, uint64_t rnd) { return uniform_len(rnd, 0, 60); };
  s.seed   = 12;
  return random_csr(s);
}
HostCsr rectangular_tall()
{
  RandomSpec s;
  s.rows   = 5000;
  s.cols   = 300;
  s.length = [](int32_t, uint64_t rnd) { return uniform_len(rnd, 0, 8); };
  s.seed   = 13;
  return random_csr(s);
}
// One full row (2000 nonzeros), one half row, the rest 0..10: the hybrid tail takes them.
HostCsr dense_row()
{
  RandomSpec s;
  s.rows = s.cols = 2000;
  s.length        = [](int32_t r, uint64_t rnd) { return r == 777 ? 2000 : r == 0 ? 1000 : uniform_len(rnd, 0, 10); };
  s.seed          = 14;
  return random_csr(s);
}
// Columns spread over 4M: almost every delta needs a PackSELL dummy (FP16/BF16 D = 15,
// e8m14 8, e8m22 0; Exact, D = 30, needs none: see Edge.ExactDummiesBeyondTwoTo30).
HostCsr huge_column_gaps()
{
  RandomSpec s;
  s.rows   = 2000;
  s.cols   = 4000000;
  s.length = [](int32_t, uint64_t rnd) { return uniform_len(rnd, 0, 8); };
  s.seed   = 15;
  return random_csr(s);
}
// Half the row at the first columns, half at the last: one jump of ~2^23 per row (x stays
// 64 MB; the jump path is the same shift for any size up to 2^31).
HostCsr extreme_columns()
{
  RandomSpec s;
  s.rows   = 500;
  s.cols   = 1 << 23;
  s.length = [](int32_t, uint64_t rnd) { return uniform_len(rnd, 1, 6); };
  s.spread = ColumnSpread::Extremes;
  s.seed   = 16;
  return random_csr(s);
}
// 3000 rows of 50..400 nonzeros in clustered columns: with hybrid K = 2 a tail of ~650k
// entries, so tail warps get chunks of many batches (the pipelined tail kernel) and rows span
// batches and chunks.
HostCsr long_rows()
{
  RandomSpec s;
  s.rows = s.cols = 3000;
  s.length        = [](int32_t, uint64_t rnd) { return uniform_len(rnd, 50, 400); };
  s.spread        = ColumnSpread::Clustered;
  s.seed          = 17;
  return random_csr(s);
}
// 20000 rows of 2..5 nonzeros: with K = 2 the tail has many short segments per batch.
HostCsr short_rows()
{
  RandomSpec s;
  s.rows = s.cols = 20000;
  s.length        = [](int32_t, uint64_t rnd) { return uniform_len(rnd, 2, 5); };
  s.seed          = 18;
  return random_csr(s);
}
// 700 rows (not a multiple of 32) of 16..64 nonzeros, 5% empty: few rows, so upload picks
// T = 8 threads per row.
HostCsr medium_rows()
{
  RandomSpec s;
  s.rows = s.cols = 700;
  s.length        = [](int32_t, uint64_t rnd) { return rnd % 20 == 0 ? 0 : uniform_len(rnd >> 8, 16, 64); };
  s.seed          = 19;
  return random_csr(s);
}
// Tiny row counts around the warp size.
HostCsr tiny(int32_t rows, uint64_t seed)
{
  RandomSpec s;
  s.rows   = rows;
  s.cols   = 50;
  s.length = [](int32_t, uint64_t rnd) { return uniform_len(rnd, 0, 12); };
  s.seed   = seed;
  return random_csr(s);
}

// Upload's choice of threads per row for a host layout (0 if the upload failed).
template <class Device, class Host>
int32_t uploaded_threads_per_row(const Host &M)
{
  Device            d;
  const cudaError_t err = pspmv::cuda::upload(M, &d);
  EXPECT_CUDA(err);
  const int32_t T = err == cudaSuccess ? d.threads_per_row : 0;
  EXPECT_CUDA(pspmv::cuda::release(&d));
  return T;
}

} // namespace

// One typed suite over both formats (Random/0.*: RgCSR, Random/1.*: PackSELL): every configuration
// of the format on each matrix.
template <class F>
class Random : public testing::Test {
};
TYPED_TEST_SUITE(Random, DeviceFormats);

TYPED_TEST(Random, SquareEmptyRows)
{
  check_all_configs<TypeParam>(square_empty_rows(), "square_empty_rows");
}
TYPED_TEST(Random, RectangularWide)
{
  check_all_configs<TypeParam>(rectangular_wide(), "rectangular_wide");
}
TYPED_TEST(Random, RectangularTall)
{
  check_all_configs<TypeParam>(rectangular_tall(), "rectangular_tall");
}
TYPED_TEST(Random, DenseRow)
{
  check_all_configs<TypeParam>(dense_row(), "dense_row");
}
TYPED_TEST(Random, HugeColumnGaps)
{
  check_all_configs<TypeParam>(huge_column_gaps(), "huge_column_gaps");
}
// Was PackSELL's only; RgCSR's kernels take the same 2^23-column jumps now.
TYPED_TEST(Random, ExtremeColumns)
{
  check_all_configs<TypeParam>(extreme_columns(), "extreme_columns");
}
TYPED_TEST(Random, LongRowsTail)
{
  check_all_configs<TypeParam>(long_rows(), "long_rows");
}
TYPED_TEST(Random, ShortRowsTail)
{
  check_all_configs<TypeParam>(short_rows(), "short_rows");
}
// Threads per row: upload's choice on 700 rows is T = 8 for both formats (the configs also
// force 1, 2, 4, 8; long_rows runs T > 1 over rows of 50..400 regular slots).
TYPED_TEST(Random, MediumRowsThreadsPerRow)
{
  using F               = TypeParam;
  const HostCsr       A = medium_rows();
  typename F::Options opt;
  opt.hybrid = hybrid_none();
  EXPECT_EQ(uploaded_threads_per_row<typename F::Device>(F::build(A.view(), opt)), 8);
  check_all_configs<F>(A, "medium_rows");
}
// Seeds 100 + rows (RgCSR) and 200 + rows (PackSELL), the matrices of the former per-format suites.
TYPED_TEST(Random, TinyRowCounts)
{
  for (int32_t rows : {1, 31, 32, 33, 97}) check_all_configs<TypeParam>(tiny(rows, uint64_t(100 + 100 * TypeParam::kIndex + rows)), "tiny" + std::to_string(rows));
}

// Values around 1e7 overflow FP16: scaling auto stores them times 2^-s, the device
// multiplies each row sum by inv_scale.
TEST(RandomPackSell, LargeValuesScaled)
{
  RandomSpec s;
  s.rows = s.cols = 1500;
  s.length        = [](int32_t, uint64_t rnd) { return uniform_len(rnd, 0, 20); };
  s.magnitude     = 1e7;
  s.seed          = 19;
  check_all_configs<PackSellFormat>(random_csr(s), "large_values", pspmv::PackSellScaling::Auto);
}
