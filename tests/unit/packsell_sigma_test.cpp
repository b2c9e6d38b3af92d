// PackSELL's automatic sort window (sigma auto, PETSC_DECIDE): regular matrices keep sigma 1,
// irregular ones get a sorted window that cuts the stored bytes; the choice follows the rule
// re-derived from explicit builds; products and value updates on the chosen layout.
#include "formats/packsell/packsell.hpp"
#include "format_check.hpp"
#include "matrix_market.hpp"
#include "random_matrix.hpp"
#include <gtest/gtest.h>

using namespace pspmv;
using namespace pspmv_test;

namespace
{

// 3-D 7-point Laplacian on an n^3 grid (6 on the diagonal, -1 off it), natural ordering.
CsrMatrix laplacian7(int32_t n)
{
  CsrMatrix A;
  A.rows = A.cols = n * n * n;
  for (int32_t z = 0; z < n; ++z)
    for (int32_t y = 0; y < n; ++y)
      for (int32_t x = 0; x < n; ++x) {
        const int32_t r   = (z * n + y) * n + x;
        const auto    add = [&A](int32_t c, double v) {
          A.colidx.push_back(c);
          A.values.push_back(v);
        };
        if (z > 0) add(r - n * n, -1.0);
        if (y > 0) add(r - n, -1.0);
        if (x > 0) add(r - 1, -1.0);
        add(r, 6.0);
        if (x < n - 1) add(r + 1, -1.0);
        if (y < n - 1) add(r + n, -1.0);
        if (z < n - 1) add(r + n * n, -1.0);
        A.rowptr.push_back(int32_t(A.colidx.size()));
      }
  return A;
}

CsrMatrix shared_matrix(const std::string &file)
{
  return read_matrix_market(std::string(PETSCSPMV_MATRIX_DIR) + "/" + file);
}

PackSellOptions with_sigma(int32_t sigma)
{
  PackSellOptions o;
  o.sigma   = sigma;
  o.scaling = PackSellScaling::Auto; // the shared matrices' values need not fit FP16
  return o;
}

} // namespace

TEST(PackSellSigma, DefaultIsNoSortAndAutoHandlesNoRows)
{
  EXPECT_EQ(PackSellOptions{}.sigma, 1) << "measured faster on the small shared matrices (docs/design.md)";
  const PackSellMatrix M = build_packsell(CsrView{}, with_sigma(kPackSellSigmaAuto));
  EXPECT_EQ(M.sigma, 1) << "no rows: nothing to sort";
}

// All rows of a slice have nearly the same length: sorting cannot pay 2%.
TEST(PackSellSigma, RegularStencilKeepsOne)
{
  const CsrMatrix A = laplacian7(48);
  for (const char *value : {"fp16", "exact"}) {
    SCOPED_TRACE(value);
    PackSellOptions o      = with_sigma(kPackSellSigmaAuto);
    o.value_format         = ValueFormat::parse(value);
    const PackSellMatrix M = build_packsell(A.view(), o);
    EXPECT_EQ(M.sigma, 1);
    EXPECT_EQ(M.stats().sigma, 1);
    for (int32_t i = 0; i < A.rows; ++i) ASSERT_EQ(M.perm[size_t(i)], i) << "sigma 1 does not sort";
    expect_auto_sigma(A, o, M);
  }
}

TEST(PackSellSigma, IrregularMatricesGetASortedWindowAndFarLessPadding)
{
  // Whole rows in the slices (hybrid none; with hybrid auto these 21k- and 37k-row matrices
  // get K <= 32, kLatencyBoundRows, which already cuts most padding): sorting is what
  // removes it. sigma 1 -> auto (measured): Maragal_6 3163520 -> 644192 words (2625826 ->
  // 106498 padding, sigma 32768), email-Enron 2100896 -> 403552 (1731464 -> 34120, 8192).
  for (const char *file : {"Maragal_6.mtx.gz", "email-Enron.mtx.gz"}) {
    SCOPED_TRACE(file);
    const CsrMatrix A  = shared_matrix(file);
    PackSellOptions o1 = with_sigma(1), oa = with_sigma(kPackSellSigmaAuto);
    o1.hybrid.mode = oa.hybrid.mode = HybridOption::Mode::None;
    const PackSellMatrix one        = build_packsell(A.view(), o1);
    const PackSellMatrix M          = build_packsell(A.view(), oa);
    EXPECT_GT(M.sigma, 1);
    EXPECT_EQ(M.sigma % M.slice_height, 0) << M.sigma;
    EXPECT_EQ(M.stats().sigma, M.sigma);
    EXPECT_LT(M.stats().padding_slots, one.stats().padding_slots / 10);
    EXPECT_LT(packsell_model_bytes(M), 0.75 * packsell_model_bytes(one));
    if (std::string(file) == "Maragal_6.mtx.gz") EXPECT_LT(M.words.size(), one.words.size() / 2);
    expect_auto_sigma(A, oa, M);
    // layout entry by entry, products against CSR, value update against a fresh build
    check_format(A, packsell_config(32, kPackSellSigmaAuto, "fp16", "auto", PackSellScaling::Auto, true), 11);
    check_format(A, packsell_config(64, kPackSellSigmaAuto, "exact", "none", PackSellScaling::None), 12);
  }
}

TEST(PackSellSigma, ChosenWindowIsValidForEverySliceHeightAndHybridOption)
{
  RandomSpec s;
  s.rows            = 5000;
  s.cols            = 200000;
  s.max_len         = 4;
  s.long_fraction   = 0.05;
  s.long_len        = 150;
  s.min_gap         = 100; // dummies for e8m14
  const CsrMatrix A = random_csr(s);
  for (int32_t C : {32, 96, 1024})
    for (const char *hybrid : {"auto", "none", "3"})
      for (const char *value : {"bf16", "e8m14"}) {
        const FormatConfig cfg = packsell_config(C, kPackSellSigmaAuto, value, hybrid, PackSellScaling::Auto);
        SCOPED_TRACE(cfg.name());
        const PackSellMatrix M = build_packsell(A.view(), cfg.packsell_options());
        EXPECT_TRUE(M.sigma == 1 || (M.sigma > 0 && M.sigma % C == 0)) << M.sigma;
        expect_auto_sigma(A, cfg.packsell_options(), M);
      }
  check_format(A, packsell_config(96, kPackSellSigmaAuto, "e8m14", "auto", PackSellScaling::Auto, true), 13);
}

// A value update re-encodes values in place: the chosen window and row order stay.
TEST(PackSellSigma, ValueUpdateKeepsTheChosenLayout)
{
  const CsrMatrix A = shared_matrix("Maragal_6.mtx.gz");
  PackSellMatrix  M = build_packsell(A.view(), with_sigma(kPackSellSigmaAuto));
  ASSERT_GT(M.sigma, 1);
  const PackSellMatrix before = M;
  const CsrMatrix      B      = with_new_values(A, 21, 1e-3, 1e5);
  update_packsell_values(B.view(), M);
  EXPECT_EQ(M.sigma, before.sigma);
  EXPECT_TRUE(M.perm == before.perm) << "the update re-sorted the rows";
  EXPECT_TRUE(M.slice_pointers == before.slice_pointers);
  EXPECT_EQ(M.hybrid_width, before.hybrid_width);
  expect_packsell_layout(B, M, false);
  EXPECT_TRUE(check_product(
    B, [&M](const double *x, double *y, bool add) { packsell_spmv(M, x, y, add); }, packsell_error_model(M), 22));
}
