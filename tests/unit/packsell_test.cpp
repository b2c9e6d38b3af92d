// PackSELL: hand-checked words and dummies, sorting, bad options, overflow messages,
// scaling, explicit zeros, stats and updates. What PackSELL shares with RgCSR (stats without
// padding, updates of another shape, padding never multiplied): host_format_test.cpp.
#include "formats/packsell/packsell.hpp"
#include "formats/packsell/packsell_lowp_tail.hpp"
#include "csr_matrix.hpp"
#include "format_check.hpp"
#include "random_matrix.hpp"
#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>

using namespace pspmv;
using namespace pspmv_test;

namespace
{

PackSellOptions opts(int32_t C, int32_t sigma, const std::string &value, const std::string &hybrid, PackSellScaling scaling = PackSellScaling::None)
{
  PackSellOptions o;
  o.slice_height = C;
  o.sigma        = sigma;
  o.value_format = ValueFormat::parse(value);
  o.hybrid       = HybridOption::parse(hybrid);
  o.scaling      = scaling;
  return o;
}

// The ValueRangeError message of building A (empty, with a test failure, if none is thrown).
std::string range_error(const CsrMatrix &A, const PackSellOptions &o)
{
  try {
    build_packsell(A.view(), o);
  } catch (const ValueRangeError &e) {
    return e.what();
  }
  ADD_FAILURE() << "no ValueRangeError";
  return "";
}

// Words of sorted row i in order (slice-local stride C), up to the slice width.
std::vector<uint32_t> row_words(const PackSellMatrix &M, int32_t i)
{
  const int32_t         C = M.slice_height, s = i / C;
  std::vector<uint32_t> w;
  for (int64_t p = M.slice_pointers[size_t(s)] + i % C; p < M.slice_pointers[size_t(s) + 1]; p += C) w.push_back(M.words[size_t(p)]);
  return w;
}

} // namespace

TEST(PackSell, HandCheckedWordsAndDummiesFp16)
{
  // One row, columns 0, 40000, 40001, 100000. FP16: V = 16, D = 15, largest delta 32767.
  // Without column gaps (HandCheckedColumnGapsFp16 has them).
  PackSellOptions o      = opts(32, 1, "fp16", "none");
  o.column_gaps          = false;
  const CsrMatrix      A = csr_from_rows(100001, {{{0, 1.0}, {40000, 2.0}, {40001, -0.5}, {100000, 3.0}}});
  const PackSellMatrix M = build_packsell(A.view(), o);
  EXPECT_EQ(M.delta_bits, 15);
  EXPECT_EQ(M.slice_pointers, (std::vector<int64_t>{0, 6 * 32}));
  EXPECT_EQ(row_words(M, 0), (std::vector<uint32_t>{
                               0x3c000001u, // 1.0, delta 0 (from column 0), flag 1
                               40000u << 1, // dummy: jump 40000 does not fit 15 bits
                               0x40000001u, // 2.0, delta 0 after the dummy
                               0xb8000003u, // -0.5, delta 1
                               59999u << 1, // dummy: jump 59999
                               0x42000001u, // 3.0, delta 0
                             }));
  for (size_t p = 1; p < 32; ++p) EXPECT_EQ(M.words[p], 0u) << "lanes without a row are padding";
  const FormatStats st = M.stats();
  EXPECT_EQ(st.dummy_words, 2);
  EXPECT_EQ(st.nnz, 4);
  EXPECT_EQ(st.padding_slots, 6 * 31);
  EXPECT_EQ(st.stored_bytes, 6 * 32 * 4 + 2 * 8 + 1 * 4);
  // A jump of exactly 32767 still fits.
  const CsrMatrix B = csr_from_rows(70000, {{{32767, 1.0}, {32767 + 32767, 1.0}}});
  EXPECT_EQ(build_packsell(B.view(), o).stats().dummy_words, 0);
  const CsrMatrix B2 = csr_from_rows(40000, {{{32768, 1.0}}});
  EXPECT_EQ(build_packsell(B2.view(), o).stats().dummy_words, 1);
}

TEST(PackSell, HandCheckedColumnGapsFp16)
{
  // Two rows that take the same long steps: row 0's columns 0, 40000, 40001, 100000 (steps 0,
  // 40000, 1, 59999), row 1's 1, 40001, 40003, 100001 (steps 1, 40000, 2, 59998). The gaps are
  // the smaller step of each position, 0 40000 1 59998: every delta fits, no dummy (without
  // gaps each row needs two).
  const CsrMatrix      A = csr_from_rows(100002, {{{0, 1.0}, {40000, 2.0}, {40001, -0.5}, {100000, 3.0}}, {{1, 1.0}, {40001, 1.0}, {40003, 1.0}, {100001, 1.0}}});
  const PackSellMatrix M = build_packsell(A.view(), opts(32, 1, "fp16", "none"));
  EXPECT_EQ(M.slice_pointers, (std::vector<int64_t>{0, 4 * 32}));
  EXPECT_EQ(M.gaps, (std::vector<uint32_t>{0, 40000, 1, 59998}));
  EXPECT_EQ(row_words(M, 0), (std::vector<uint32_t>{0x3c000001u, 0x40000001u, 0xb8000001u, 0x42000003u})); // deltas 0 0 0 1
  EXPECT_EQ(row_words(M, 1), (std::vector<uint32_t>{0x3c000003u, 0x3c000001u, 0x3c000003u, 0x3c000001u})); // deltas 1 0 1 0
  const FormatStats st = M.stats();
  EXPECT_EQ(st.dummy_words, 0);
  EXPECT_EQ(st.gap_entries, 4);
  EXPECT_EQ(st.stored_bytes, 4 * 32 * 4 + 4 * 4 + 2 * 8 + 2 * 4);
  std::vector<double> x(size_t(A.cols)), y(2);
  for (size_t c = 0; c < x.size(); ++c) x[c] = double(c % 7) - 3.0;
  packsell_spmv(M, x.data(), y.data(), false);
  EXPECT_EQ(y[0], 1.0 * x[0] + 2.0 * x[40000] - 0.5 * x[40001] + 3.0 * x[100000]);
  EXPECT_EQ(y[1], x[1] + x[40001] + x[40003] + x[100001]);
  // Turned off, or on rows without dummies to save: none.
  PackSellOptions off = opts(32, 1, "fp16", "none");
  off.column_gaps     = false;
  EXPECT_TRUE(build_packsell(A.view(), off).gaps.empty());
  const CsrMatrix near = csr_from_rows(100, {{{0, 1.0}, {5, 1.0}}, {{1, 1.0}, {7, 1.0}}});
  EXPECT_TRUE(build_packsell(near.view(), opts(32, 1, "fp16", "none")).gaps.empty()) << "no dummies to save";
}

TEST(PackSell, DeltaBitsPerFormatAndE8m22NeedsADummyPerJump)
{
  EXPECT_EQ(build_packsell(CsrView{}, opts(32, 1, "exact", "none")).delta_bits, 30);
  EXPECT_EQ(build_packsell(CsrView{}, opts(32, 1, "bf16", "none")).delta_bits, 15);
  EXPECT_EQ(build_packsell(CsrView{}, opts(32, 1, "e8m14", "none")).delta_bits, 8);
  EXPECT_EQ(build_packsell(CsrView{}, opts(32, 1, "e8m22", "none")).delta_bits, 0);
  // D = 0: only delta 0 fits, so every column after the first (and a first column > 0)
  // needs a dummy.
  const CsrMatrix      A = csr_from_rows(5, {{{0, 1.0}, {1, 2.0}, {4, 3.0}}, {{2, 1.0}}});
  const PackSellMatrix M = build_packsell(A.view(), opts(32, 1, "e8m22", "none"));
  // E8M22 words are the FP32 bits of the value with the flag in bit 0 (1.0f = 0x3f800000).
  EXPECT_EQ(row_words(M, 0), (std::vector<uint32_t>{0x3f800001u, 1u << 1, 0x40000001u, 3u << 1, 0x40400001u}));
  EXPECT_EQ(row_words(M, 1), (std::vector<uint32_t>{2u << 1, 0x3f800001u, 0, 0, 0}));
  EXPECT_EQ(M.stats().dummy_words, 3);
}

TEST(PackSell, ExactModeKeepsValuesBesideEmptyValueFields)
{
  // D = 30: a jump of 2^30 - 1 columns fits, 2^30 needs a dummy.
  const int32_t        big = int32_t(1) << 30;
  const CsrMatrix      A   = csr_from_rows(big + 4, {{{3, 0.1}, {big + 3, -1e-300}}, {{0, 1.0}, {big - 1, 2.0}}});
  const PackSellMatrix M   = build_packsell(A.view(), opts(32, 1, "exact", "none"));
  EXPECT_EQ(M.delta_bits, 30);
  EXPECT_EQ(row_words(M, 0), (std::vector<uint32_t>{(3u << 1) | 1u, uint32_t(big) << 1, 1u}));
  EXPECT_EQ(row_words(M, 1), (std::vector<uint32_t>{1u, (uint32_t(big - 1) << 1) | 1u, 0u}));
  ASSERT_EQ(M.exact_values.size(), M.words.size());
  EXPECT_EQ(M.exact_values[0], 0.1);
  EXPECT_EQ(M.exact_values[32], 0.0) << "dummy";
  EXPECT_EQ(M.exact_values[64], -1e-300);
  EXPECT_EQ(M.stats().stored_bytes, 3 * 32 * (4 + 8) + 2 * 8 + 2 * 4);
}

// A stored zero is a nonzero of the pattern: flag 1, never taken for padding.
TEST(PackSell, ExplicitZerosAreNotPadding)
{
  const CsrMatrix A = csr_from_rows(4, {{{0, 0.0}}, {{0, -0.0}, {2, 0.0}}});
  for (const char *v : {"exact", "fp16", "e8m22"}) {
    const PackSellMatrix M = build_packsell(A.view(), opts(32, 1, v, "none"));
    EXPECT_EQ(M.stats().nnz, 3) << v;
    EXPECT_EQ(row_words(M, 0)[0], 1u) << "value 0, delta 0, flag 1: " << v;
    double d[2] = {NAN, NAN};
    packsell_diagonal(M, d);
    EXPECT_EQ(d[0], 0.0);
    EXPECT_EQ(d[1], 0.0) << "row 1 has no diagonal entry";
    check_format(A, packsell_config(32, 1, v, "none", PackSellScaling::None, true), 4);
  }
  const RgCsrMatrix R = build_rgcsr(A.view(), RgCsrOptions{});
  EXPECT_EQ(R.stats().nnz, 3);
}

TEST(PackSell, SortsByWordCountInsideSigmaWindowsStably)
{
  // Word counts (fp16): row 0: 1, row 1: 3, row 2: 2, row 3: 3, row 4: 0, row 5: 2 nonzeros
  // but 2 dummies = 4 words, then 26 empty rows, then a second window.
  std::vector<std::vector<RowEntry>> rows(40);
  rows[0]                = {{0, 1}};
  rows[1]                = {{0, 1}, {1, 1}, {2, 1}};
  rows[2]                = {{5, 1}, {6, 1}};
  rows[3]                = {{1, 1}, {2, 1}, {3, 1}};
  rows[5]                = {{40000, 1}, {80000, 1}};
  rows[33]               = {{1, 1}};
  rows[35]               = {{1, 1}, {2, 1}};
  const CsrMatrix      A = csr_from_rows(90000, rows);
  const PackSellMatrix M = build_packsell(A.view(), opts(32, 32, "fp16", "none"));
  EXPECT_EQ(std::vector<int32_t>(M.perm.begin(), M.perm.begin() + 6), (std::vector<int32_t>{5, 1, 3, 2, 0, 4}));
  EXPECT_EQ(M.perm[6], 6);
  EXPECT_EQ(std::vector<int32_t>(M.perm.begin() + 32, M.perm.begin() + 35), (std::vector<int32_t>{35, 33, 32}));
  EXPECT_EQ(M.slice_pointers, (std::vector<int64_t>{0, 4 * 32, 4 * 32 + 2 * 32}));
  const PackSellMatrix N = build_packsell(A.view(), opts(32, 1, "fp16", "none"));
  for (int32_t i = 0; i < A.rows; ++i) EXPECT_EQ(N.perm[size_t(i)], i) << "sigma 1 does not sort";
  check_format(A, packsell_config(32, 32, "fp16", "auto", PackSellScaling::None, true), 2);
  check_format(A, packsell_config(32, 64, "e8m14", "1", PackSellScaling::None, true), 3);
}

TEST(PackSell, RefusesBadSliceHeightSigmaWidthAndFormat)
{
  const CsrMatrix A = csr_from_rows(3, {{{0, 1}}, {{2, 1}}});
  for (int32_t C : {0, -32, 16, 48, 33, 1056, 2048}) {
    try {
      build_packsell(A.view(), opts(C, 1, "fp16", "auto"));
      ADD_FAILURE() << "slice height " << C << " accepted";
    } catch (const FormatError &e) {
      EXPECT_NE(std::string(e.what()).find("multiple of 32 in [32, 1024]"), std::string::npos) << e.what();
    }
  }
  for (int32_t C : {32, 64, 1024}) EXPECT_NO_THROW(build_packsell(A.view(), opts(C, 1, "fp16", "auto")));
  for (int32_t sigma : {-1, -32, 2, 16, 48, 100}) {
    try {
      build_packsell(A.view(), opts(32, sigma, "fp16", "auto"));
      ADD_FAILURE() << "sigma " << sigma << " accepted";
    } catch (const FormatError &e) {
      EXPECT_NE(std::string(e.what()).find("sigma"), std::string::npos) << e.what();
    }
  }
  for (int32_t sigma : {kPackSellSigmaAuto, 1, 64, 128, 1 << 20}) EXPECT_NO_THROW(build_packsell(A.view(), opts(64, sigma, "bf16", "auto")));
  PackSellOptions o = opts(32, 1, "fp16", "auto");
  o.hybrid.mode     = HybridOption::Mode::Fixed;
  o.hybrid.width    = 0;
  EXPECT_THROW(build_packsell(A.view(), o), FormatError);
  o                            = opts(32, 1, "fp16", "auto");
  o.value_format.mantissa_bits = 7; // FP16 with a BF16 mantissa: inconsistent
  EXPECT_THROW(build_packsell(A.view(), o), FormatError);
  const CsrMatrix unsorted = csr_from_rows(3, {{{2, 1}, {1, 1}}});
  EXPECT_THROW(build_packsell(unsorted.view(), opts(32, 1, "fp16", "auto")), FormatError);
  const CsrMatrix out_of_range = csr_from_rows(3, {{{0, 1}, {7, 1}}});
  EXPECT_THROW(build_packsell(out_of_range.view(), opts(32, 1, "fp16", "auto")), FormatError);
}

TEST(PackSell, OverflowIsAClearErrorNamingRowColumnValueAndRemedy)
{
  const CsrMatrix A = csr_from_rows(8, {{{1, 1.0}}, {}, {{0, 2.0}, {5, 1e6}, {7, -3e6}}});
  EXPECT_EQ(range_error(A, opts(32, 1, "fp16", "none")), "row 2, column 5: value 1000000 overflows the PackSELL value format fp16 "
                                                         "(largest finite magnitude 65504); use a wider value format such as "
                                                         "bf16 or e8m14, or -mat_packsell_scaling auto");
  // Also when the value would go to the tail.
  EXPECT_THROW(build_packsell(A.view(), opts(32, 1, "fp16", "1")), ValueRangeError);
  // An FP64 value beyond E8Mm's range too.
  const CsrMatrix   huge     = csr_from_rows(2, {{{1, -1e39}}});
  const std::string huge_msg = range_error(huge, opts(32, 1, "e8m14", "none"));
  EXPECT_NE(huge_msg.find("overflows the PackSELL value format e8m14 (largest finite magnitude"), std::string::npos) << huge_msg;
  EXPECT_NE(huge_msg.find("use the value format exact, or -mat_packsell_scaling auto"), std::string::npos) << huge_msg << ": E8Mm has FP32's range, only exact is wider";
  EXPECT_NO_THROW(build_packsell(A.view(), opts(32, 1, "e8m14", "none")));
  EXPECT_NO_THROW(build_packsell(huge.view(), opts(32, 1, "exact", "none")));
}

// A value that rounds to zero is refused with a remedy that holds it: FP16 -> the E8Mm
// formats; beyond what they hold (FP32's exponent range) -> exact.
TEST(PackSell, UnderflowIsAClearErrorWithARemedyThatFits)
{
  const CsrMatrix A = csr_from_rows(4, {{{0, 1.0}}, {{3, 1e-9}}});
  EXPECT_EQ(range_error(A, opts(32, 1, "fp16", "none")), "row 1, column 3: value 1e-09 underflows the PackSELL value format fp16 to "
                                                         "zero; use -mat_packsell_scaling auto or a wider value format such as bf16 or e8m14");
  EXPECT_NO_THROW(build_packsell(A.view(), opts(32, 1, "bf16", "none")));
  // Below bf16's subnormals (2^-133) but inside e8m14's (2^-140): e8m14 and e8m22 hold it.
  const CsrMatrix   sub133     = csr_from_rows(4, {{{3, 1e-41}}});
  const std::string sub133_msg = range_error(sub133, opts(32, 1, "bf16", "none"));
  EXPECT_NE(sub133_msg.find("such as e8m14 or e8m22"), std::string::npos) << sub133_msg;
  // FP16 with a value beyond FP32's range: only exact holds it.
  const std::string fp64_msg = range_error(csr_from_rows(4, {{{3, 1e-300}}}), opts(32, 1, "fp16", "none"));
  EXPECT_NE(fp64_msg.find("or the value format exact"), std::string::npos) << fp64_msg;
  const CsrMatrix tiny = csr_from_rows(4, {{{0, 1.0}}, {{3, -8e-63}}});
  EXPECT_EQ(range_error(tiny, opts(32, 1, "bf16", "none")), "row 1, column 3: value -8e-63 underflows the PackSELL value format bf16 to zero; use "
                                                            "-mat_packsell_scaling auto or the value format exact");
}

TEST(PackSell, InfAndNanValuesAreKeptNotReportedAsOverflow)
{
  const CsrMatrix      A = csr_from_rows(3, {{{0, INFINITY}}, {{1, std::nan("")}}, {{2, -INFINITY}}});
  const PackSellMatrix M = build_packsell(A.view(), opts(32, 1, "fp16", "none"));
  double               d[3];
  packsell_diagonal(M, d);
  EXPECT_EQ(d[0], INFINITY);
  EXPECT_TRUE(std::isnan(d[1]));
  EXPECT_EQ(d[2], -INFINITY);
}

TEST(PackSell, AutoScalingStoresTooLargeValuesWithAPowerOfTwo)
{
  RandomSpec s;
  s.rows            = 300;
  s.cols            = 250;
  s.max_len         = 12;
  s.min_magnitude   = 1e2;
  s.max_magnitude   = 1e9; // beyond FP16
  const CsrMatrix A = random_csr(s);
  ASSERT_FALSE(values_fit(A, ValueFormat::fp16()));
  PackSellMatrix M = build_packsell(A.view(), opts(32, 64, "fp16", "auto", PackSellScaling::Auto));
  EXPECT_LT(M.scale_exponent, 0);
  EXPECT_EQ(M.scaling, PackSellScaling::Auto);
  check_format(A, packsell_config(32, 64, "fp16", "auto", PackSellScaling::Auto, true), 5);
  check_format(A, packsell_config(64, 1, "fp16", "3", PackSellScaling::Auto, true), 6);
  check_format(A, packsell_config(32, 1, "fp16", "none", PackSellScaling::None), 7); // expects the error
  // Small values are scaled up: max|a| goes to the top binade (999.x * 2^6 < 65504 < 2^16).
  const CsrMatrix small = with_new_values(A, 3, 1e-1, 1e3);
  double          mx    = 0.0;
  for (double v : small.values) mx = std::max(mx, std::fabs(v));
  ASSERT_TRUE(mx >= 512.0 && mx < 1024.0) << mx;
  EXPECT_EQ(build_packsell(small.view(), opts(32, 64, "fp16", "auto", PackSellScaling::Auto)).scale_exponent, 6);

  // Update: every update chooses the exponent afresh, up for smaller values ...
  const int32_t s0 = M.scale_exponent;
  update_packsell_values(small.view(), M);
  EXPECT_EQ(M.scale_exponent, 6) << "a kept exponent would flush values that shrank to zero";
  expect_packsell_layout(small, M, false);
  // ... larger ones get a new exponent, and the words are re-encoded with it.
  const CsrMatrix larger = with_new_values(A, 4, 1e10, 1e14);
  update_packsell_values(larger.view(), M);
  EXPECT_LT(M.scale_exponent, s0);
  expect_packsell_layout(larger, M, true);
  EXPECT_TRUE(check_product(
    larger, [&M](const double *x, double *y, bool add) { packsell_spmv(M, x, y, add); }, packsell_error_model(M), 8));
}

TEST(PackSell, AutoScalingAppliesWhenTheExponentStartedAtZero)
{
  const CsrMatrix A = csr_from_rows(3, {{{0, 1.0}, {2, 2.0}}, {{1, 3.0}}});
  PackSellMatrix  M = build_packsell(A.view(), opts(32, 1, "fp16", "auto", PackSellScaling::Auto));
  EXPECT_EQ(M.scale_exponent, 14) << "max 3 = 1.5 * 2^1 goes to FP16's top binade 2^15";
  const CsrMatrix big = csr_from_rows(3, {{{0, 1e5}, {2, 2.0}}, {{1, 3.0}}});
  update_packsell_values(big.view(), M);
  EXPECT_EQ(M.scale_exponent, -1) << "1e5 fits FP16 after one halving";
  double d[2];
  packsell_diagonal(M, d);
  EXPECT_EQ(d[0], 1e5 - 32) << "1e5 / 2 rounds to 49984 in FP16";
  EXPECT_EQ(d[1], 3.0);
}

TEST(PackSell, UpdateWithoutScalingRefusesOverflowAndLeavesTheLayout)
{
  const CsrMatrix             A     = csr_from_rows(3, {{{0, 1.0}, {2, 2.0}}, {{1, 3.0}}});
  PackSellMatrix              M     = build_packsell(A.view(), opts(32, 1, "fp16", "1"));
  const std::vector<uint32_t> words = M.words;
  const std::vector<double>   tail  = M.tail.val;
  const CsrMatrix             big   = csr_from_rows(3, {{{0, 1.0}, {2, 7e4}}, {{1, 3.0}}}); // the tail entry overflows
  try {
    update_packsell_values(big.view(), M);
    ADD_FAILURE() << "no error";
  } catch (const ValueRangeError &e) {
    EXPECT_NE(std::string(e.what()).find("row 0, column 2: value 70000"), std::string::npos) << e.what();
  }
  EXPECT_EQ(M.words, words);
  EXPECT_EQ(M.tail.val, tail);
  // Another shape: HostFormat.UpdateRefusesAnotherShape (host_format_test.cpp).
}

TEST(PackSell, HybridTailValuesAreRoundedLikeTheWords)
{
  const CsrMatrix      A = csr_from_rows(4, {{{0, 0.1}, {1, 0.2}, {2, 0.3}, {3, 1e5}}});
  const PackSellMatrix M = build_packsell(A.view(), opts(32, 1, "fp16", "2", PackSellScaling::Auto));
  EXPECT_EQ(M.scale_exponent, -1);
  ASSERT_EQ(M.tail.nnz(), 2);
  const ValueFormat f = ValueFormat::fp16();
  EncodeStatus      st;
  EXPECT_EQ(M.tail.val[0], 2 * decode_value(f, encode_value(f, 0.15, &st)));
  EXPECT_EQ(M.tail.val[1], 2 * decode_value(f, encode_value(f, 5e4, &st)));
  EXPECT_NE(M.tail.val[0], 0.3) << "0.3 is not an FP16 value: the tail must be rounded";
}

// packsell_spmv_f32 (the mixed-precision inner operators' host twin) sums a tail of at most
// kLowpLongTail entries serially into y_r and a longer one in kLowpTailLanes interleaved partial
// sums with a butterfly (packsell_lowp_tail.hpp), as the device's warps do. Each tail is 2^24
// followed by ones: serially every 1 is lost to rounding, in lanes most are not. Tails of 10, 32
// (the longest serial one), 33 (the shortest in lanes) and 100 entries, the long ones not first
// in the tail arrays (the lanes count from the row's first tail entry).
TEST(PackSell, Fp32ProductSumsLongTailsInLanesShortOnesSerially)
{
  const std::vector<int32_t>         L   = {10, 32, 33, 100}; // tail length of rows 0..3
  const int32_t                      n   = 101;
  const double                       big = 16777216.0; // 2^24
  std::vector<std::vector<RowEntry>> rows(static_cast<size_t>(n));
  for (size_t r = 0; r < L.size(); ++r) {
    rows[r].push_back({0, 0.5}); // the regular part (width 1)
    for (int32_t j = 0; j < L[r]; ++j) rows[r].push_back({1 + j, j == 0 ? big : 1.0});
  }
  for (int32_t r = int32_t(L.size()); r < n; ++r) rows[size_t(r)].push_back({r, 1.0});
  const CsrMatrix      A = csr_from_rows(n, rows);
  const PackSellMatrix M = build_packsell(A.view(), opts(32, 1, "exact", "1"));
  ASSERT_EQ(M.tail.nnz(), 10 + 32 + 33 + 100);
  ASSERT_EQ(packsell::kLowpLongTail, 32) << "the lengths above straddle kLowpLongTail";
  const std::vector<float> x(size_t(n), 1.0f);
  std::vector<float>       y(size_t(n), -1.0f);
  packsell_spmv_f32(M, x.data(), y.data());

  for (size_t r = 0; r < L.size(); ++r) {
    if (L[r] <= packsell::kLowpLongTail) {
      EXPECT_EQ(y[r], float(big)) << "row " << r << ": serially 0.5 + 2^24 + 1 + ... rounds back to 2^24 each time";
      continue;
    }
    // the contract spelled out: lane l sums entries l, l + 32, ...; butterfly 16, 8, 4, 2, 1
    std::vector<float> lane(size_t(packsell::kLowpTailLanes), 0.0f);
    for (int32_t j = 0; j < L[r]; ++j) lane[size_t(j % packsell::kLowpTailLanes)] += j == 0 ? float(big) : 1.0f;
    for (int32_t o = packsell::kLowpTailLanes / 2; o > 0; o /= 2) {
      std::vector<float> next(lane.size());
      for (size_t l = 0; l < lane.size(); ++l) next[l] = lane[l] + lane[l ^ size_t(o)];
      lane = next;
    }
    EXPECT_EQ(y[r], 0.5f + lane[0]) << "row " << r;
    EXPECT_GT(y[r], float(big) + float(L[r]) / 2) << "row " << r << ": in lanes most of the ones count";
  }
  for (int32_t r = int32_t(L.size()); r < n; ++r) EXPECT_EQ(y[size_t(r)], 1.0f);
}

// The automatic width counts the words of a row's first K nonzeros: a jump of exactly the
// largest delta (2^D - 1) needs no dummy, one more does. 70000 rows of 10 such nonzeros
// (enough bytes to outweigh the fixed cost of a tail), every 16th slice of 32 rows 40 long
// with a dummy before each nonzero; check_format compares K with its brute force
// (expected_width). (Exact mode, D = 30, cannot have 40 jumps of 2^30 in 2^31 columns; its
// limit is hand-checked in ExactModeKeepsValuesBesideEmptyValueFields.)
TEST(PackSell, AutoWidthCountsDummiesAtTheDeltaLimit)
{
  for (const char *value : {"e8m14", "fp16"}) {
    const ValueFormat f  = ValueFormat::parse(value);
    const int32_t     md = (1 << (31 - f.value_bits())) - 1;
    CsrMatrix         A;
    A.rows = 70000;
    A.cols = 40 * (md + 1) + 1;
    for (int32_t r = 0; r < A.rows; ++r) {
      const bool    long_row = (r / 32) % 16 == 5;
      const int32_t len = long_row ? 40 : 10, jump = long_row ? md + 1 : md;
      for (int32_t k = 1; k <= len; ++k) {
        A.colidx.push_back(k * jump);
        A.values.push_back(1.0 + 0.25 * k);
      }
      A.rowptr.push_back(int32_t(A.colidx.size()));
    }
    check_format(A, packsell_config(32, 1, value, "auto", PackSellScaling::None), 11);
  }
}

// ---------------------------------------------------------------------------------------------
// Scaling auto at the ends of FP64's range, and what it refuses.

namespace
{

// n x n, every row its diagonal and up to 6 other columns; magnitudes log-uniform in
// [lo, hi] with random signs.
CsrMatrix matrix_with_diagonal(int32_t n, double lo, double hi, uint64_t seed)
{
  Rng                                rng(seed);
  std::vector<std::vector<RowEntry>> rows(static_cast<size_t>(n));
  for (int32_t r = 0; r < n; ++r) {
    std::vector<int32_t> cols{r};
    for (int k = 0; k < 6; ++k) cols.push_back(int32_t(rng.below(uint64_t(n))));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (int32_t c : cols) {
      const double mag = lo * std::pow(hi / lo, rng.uniform());
      rows[size_t(r)].push_back({c, (rng.next() & 1) ? -mag : mag});
    }
  }
  return csr_from_rows(n, rows);
}

// The diagonal and the product of M (built from A with value format f) equal FP64's within
// f's unit roundoff, relative, per row: |d - a| <= u |a| and |y - yref|_i <= u (|A||x|)_i,
// with only FP64's own rounding on top (1e-13 relative, and 2^-1074 per term where the
// results are FP64 subnormals). No absolute floor: a zero product would fail.
void expect_relative_accuracy(const CsrMatrix &A, const PackSellMatrix &M, const std::string &what)
{
  SCOPED_TRACE(what);
  const double        u = M.value_format.unit_roundoff(), sub = std::ldexp(1.0, -1074);
  const int32_t       n = std::min(A.rows, A.cols);
  std::vector<double> d(size_t(n), NAN);
  packsell_diagonal(M, d.data());
  int bad = 0;
  for (int32_t r = 0; r < n; ++r)
    for (int32_t k = A.rowptr[size_t(r)]; k < A.rowptr[size_t(r) + 1]; ++k)
      if (A.colidx[size_t(k)] == r) {
        const double a = A.values[size_t(k)];
        if (!(std::fabs(d[size_t(r)] - a) <= u * std::fabs(a) + sub) && bad++ < 5) ADD_FAILURE() << "diagonal " << r << ": " << d[size_t(r)] << ", FP64 " << a;
      }
  Rng                 rng(77);
  std::vector<double> x(size_t(A.cols)), y(size_t(A.rows), NAN), ref(size_t(A.rows));
  for (double &v : x) v = (rng.next() & 1 ? -1.0 : 1.0) * (0.5 + rng.uniform());
  packsell_spmv(M, x.data(), y.data(), false);
  csr_spmv(A.view(), x.data(), ref.data(), false);
  for (int32_t r = 0; r < A.rows; ++r) {
    double        absrow = 0.0;
    const int32_t len    = A.row_length(r);
    for (int32_t k = A.rowptr[size_t(r)]; k < A.rowptr[size_t(r) + 1]; ++k) absrow += std::fabs(A.values[size_t(k)] * x[size_t(A.colidx[size_t(k)])]);
    const double tol = (1.01 * u + 1e-13) * absrow + 4.0 * len * sub;
    if (!(std::fabs(y[size_t(r)] - ref[size_t(r)]) <= tol) && bad++ < 5) ADD_FAILURE() << "row " << r << ": " << y[size_t(r)] << ", FP64 " << ref[size_t(r)] << ", tol " << tol;
    if (len > 0 && y[size_t(r)] == 0.0 && ref[size_t(r)] != 0.0 && bad++ < 5) ADD_FAILURE() << "row " << r << " is 0";
  }
}

// The ValueRangeError of building A with o (a failure if none is thrown).
ValueRangeError build_error(const CsrMatrix &A, const PackSellOptions &o)
{
  try {
    build_packsell(A.view(), o);
  } catch (const ValueRangeError &e) {
    return e;
  }
  ADD_FAILURE() << "no ValueRangeError";
  return ValueRangeError(-1, -1, "none");
}

} // namespace

// All entries tiny (1e-300, FP64 subnormals 1e-310, mixed signs): auto wants 2^-s below the
// smallest double (s up to 1157 for bf16), which made every product and the diagonal 0. The
// exponent stops at 1022 (2^-1022 normal) and products are as accurate as the format allows.
TEST(PackSell, AutoScalingOfTinyOnlyMatricesKeepsProductsAndDiagonal)
{
  for (const double base : {1e-300, 1e-310}) {
    const CsrMatrix A = matrix_with_diagonal(300, 0.5 * base, base, 5);
    for (const char *v : {"fp16", "bf16", "e8m14"})
      for (const char *h : {"none", "2"}) {
        const std::string    what = std::string(v) + " hybrid " + h + " values ~" + std::to_string(std::log10(base));
        const PackSellMatrix M    = build_packsell(A.view(), opts(32, 1, v, h, PackSellScaling::Auto));
        // fp16 at 1e-300 needs s = 1012; every other case would need more than 1022.
        if (base < 1e-305 || std::string(v) != "fp16") EXPECT_EQ(M.scale_exponent, kMaxScaleExponent) << what << ": the largest exponent, still a normal 2^-s";
        EXPECT_EQ(M.scale_exponent, expected_auto_exponent(A, ValueFormat::parse(v))) << what;
        if (std::string(h) == "2") EXPECT_GT(M.tail.nnz(), 0) << what;
        expect_relative_accuracy(A, M, what);
        check_format(A, packsell_config(32, 1, v, h, PackSellScaling::Auto, true), 21);
      }
  }
  // Not so tiny that auto needs the clamp: the exponent is the format's own rule.
  const CsrMatrix      B = matrix_with_diagonal(100, 1e-290, 2e-290, 6);
  const PackSellMatrix M = build_packsell(B.view(), opts(32, 1, "fp16", "none", PackSellScaling::Auto));
  EXPECT_TRUE(M.scale_exponent > 900 && M.scale_exponent < kMaxScaleExponent) << M.scale_exponent;
  EXPECT_EQ(M.scale_exponent, expected_auto_exponent(B, ValueFormat::fp16()));
  expect_relative_accuracy(B, M, "fp16 ~1e-290");
}

// Tinier still: at the largest exponent fp16 cannot hold 1e-320 (2^-1063 * 2^1022 = 2^-41,
// below its subnormals): refused, never stored as 0; bf16 holds it.
TEST(PackSell, AutoScalingRefusesWhatEvenTheLargestExponentFlushes)
{
  const CsrMatrix       A = csr_from_rows(3, {{{0, 1e-320}}, {{1, -2e-320}, {2, 3e-320}}});
  const ValueRangeError e = build_error(A, opts(32, 1, "fp16", "none", PackSellScaling::Auto));
  EXPECT_EQ(e.row, 0);
  EXPECT_EQ(e.col, 0);
  EXPECT_NE(e.message().find("underflows the PackSELL value format fp16 to zero with -mat_packsell_scaling auto"), std::string::npos) << e.what();
  EXPECT_NE(e.message().find("use a wider value format such as bf16 or e8m14"), std::string::npos) << e.what();
  const PackSellMatrix M = build_packsell(A.view(), opts(32, 1, "bf16", "none", PackSellScaling::Auto));
  EXPECT_EQ(M.scale_exponent, kMaxScaleExponent);
  double d[3];
  packsell_diagonal(M, d);
  EXPECT_EQ(d[0], 1e-320) << "FP64 has only 11 bits there: bf16's 8 hold them to 2^-9";
  EXPECT_NEAR(d[1], -2e-320, 2e-320 * 0x1p-8);
  EXPECT_NE(d[2], 0.0);
}

// All entries huge (1e300): auto scales them down (s < 0) and products are accurate.
TEST(PackSell, AutoScalingOfHugeOnlyMatrices)
{
  const CsrMatrix A = matrix_with_diagonal(300, 0.5e300, 1e300, 8);
  for (const char *v : {"fp16", "bf16", "e8m14"}) {
    const PackSellMatrix M = build_packsell(A.view(), opts(32, 1, v, "2", PackSellScaling::Auto));
    EXPECT_LT(M.scale_exponent, -800) << v;
    expect_relative_accuracy(A, M, v);
    check_format(A, packsell_config(32, 1, v, "auto", PackSellScaling::Auto, true), 22);
    EXPECT_THROW(build_packsell(A.view(), opts(32, 1, v, "none")), ValueRangeError) << v << " without scaling";
  }
}

// With scaling auto the largest magnitude sets the exponent; a matrix spanning more than the
// format's range (one 1e300 among ordinary values) would flush its ordinary entries to zero:
// refused exactly as with scaling none, naming the first one and a format that holds the range.
TEST(PackSell, AutoScalingRefusesEntriesItWouldFlushToZero)
{
  const CsrMatrix A = csr_from_rows(4, {{{0, 2.0}, {3, -1.0}}, {{1, 1e300}}, {{2, 0.0}, {3, 4.0}}});
  for (const char *v : {"fp16", "bf16", "e8m14", "e8m22"}) {
    const ValueRangeError e = build_error(A, opts(32, 1, v, "none", PackSellScaling::Auto));
    EXPECT_EQ(e.row, 0) << v;
    EXPECT_EQ(e.col, 0) << v;
    EXPECT_EQ(e.message(), "value 2 underflows the PackSELL value format " + std::string(v) + " to zero with -mat_packsell_scaling auto (values stored times 2^" + std::to_string(std::ilogb(ValueFormat::parse(v).max_finite()) - 996) + " so that the largest magnitude 1e+300 fits: the matrix spans more magnitudes than " + v + " holds); use the value format exact") << e.what();
    EXPECT_EQ(std::string(e.what()), "row 0, column 0: " + e.message());
    // A tail entry too (K = 1: column 3 of row 0 is in the tail; the first entry is fine).
    const CsrMatrix       B = csr_from_rows(4, {{{0, 1e299}, {3, -1.0}}, {{1, 1e300}}});
    const ValueRangeError t = build_error(B, opts(32, 1, v, "1", PackSellScaling::Auto));
    EXPECT_EQ(t.row, 0);
    EXPECT_EQ(t.col, 3);
    EXPECT_NE(t.message().find("value -1 underflows"), std::string::npos) << t.what();
  }
  EXPECT_NO_THROW(build_packsell(A.view(), opts(32, 1, "exact", "none", PackSellScaling::Auto)));
  // A range beyond fp16's (2^40) but inside bf16's: the remedy names formats that hold it
  // at their own auto exponent.
  const CsrMatrix       C = csr_from_rows(3, {{{0, 1e8}}, {{1, 1.0}, {2, -1e-5}}});
  const ValueRangeError e = build_error(C, opts(32, 1, "fp16", "none", PackSellScaling::Auto));
  EXPECT_EQ(e.row, 1);
  EXPECT_EQ(e.col, 2);
  EXPECT_NE(e.message().find("value -1e-05 underflows"), std::string::npos) << e.what();
  EXPECT_NE(e.message().find("use a wider value format such as bf16 or e8m14"), std::string::npos) << e.what();
  EXPECT_NO_THROW(build_packsell(C.view(), opts(32, 1, "bf16", "none", PackSellScaling::Auto)));
}

// Value updates follow the same rules: a new exponent (tiny or huge values), and an update
// that would flush an entry is refused and leaves the layout as it was.
TEST(PackSell, AutoScalingUpdatesChooseANewExponentOrRefuse)
{
  const CsrMatrix A = matrix_with_diagonal(200, 0.1, 10.0, 9);
  for (const char *v : {"fp16", "bf16"}) {
    PackSellMatrix  M    = build_packsell(A.view(), opts(32, 1, v, "3", PackSellScaling::Auto));
    const int32_t   s0   = M.scale_exponent;
    const CsrMatrix tiny = with_new_values(A, 10, 0.5e-310, 1e-310);
    update_packsell_values(tiny.view(), M);
    EXPECT_EQ(M.scale_exponent, kMaxScaleExponent) << v;
    expect_relative_accuracy(tiny, M, std::string(v) + " updated to tiny values");
    const CsrMatrix huge = with_new_values(A, 11, 0.5e300, 1e300);
    update_packsell_values(huge.view(), M);
    EXPECT_LT(M.scale_exponent, -800) << v;
    expect_relative_accuracy(huge, M, std::string(v) + " updated to huge values");
    update_packsell_values(A.view(), M);
    EXPECT_EQ(M.scale_exponent, s0) << v;

    CsrMatrix outlier                 = A;
    outlier.values[5]                 = 1e300; // not the first entry of row 0, which then flushes first
    const std::vector<uint32_t> words = M.words;
    const std::vector<double>   tail  = M.tail.val;
    try {
      update_packsell_values(outlier.view(), M);
      ADD_FAILURE() << v << ": no error";
    } catch (const ValueRangeError &e) {
      EXPECT_EQ(e.row, 0) << e.what(); // the first entry of row 0 flushes
      EXPECT_EQ(e.col, A.colidx[0]) << e.what();
      EXPECT_NE(e.message().find("with -mat_packsell_scaling auto"), std::string::npos) << e.what();
    }
    EXPECT_EQ(M.words, words) << v << ": a refused update changed the layout";
    EXPECT_EQ(M.tail.val, tail) << v;
    EXPECT_EQ(M.scale_exponent, s0) << v;
  }
}

// ValueRangeError carries the row and column (CSR indices) and the message without them, for
// every kind: overflow and underflow without scaling, in the regular part and in the tail.
TEST(PackSell, ValueRangeErrorsCarryRowAndColumn)
{
  const CsrMatrix A = csr_from_rows(8, {{{1, 1.0}}, {}, {{0, 2.0}, {5, 1e6}, {7, -3e6}}});
  ValueRangeError e = build_error(A, opts(32, 1, "fp16", "none"));
  EXPECT_EQ(e.row, 2);
  EXPECT_EQ(e.col, 5);
  EXPECT_EQ(e.message(), "value 1000000 overflows the PackSELL value format fp16 (largest finite magnitude "
                         "65504); use a wider value format such as bf16 or e8m14, or -mat_packsell_scaling auto");
  e = build_error(A, opts(32, 1, "fp16", "1")); // (2, 5) in the tail
  EXPECT_EQ(e.row, 2);
  EXPECT_EQ(e.col, 5);
  const CsrMatrix B = csr_from_rows(6, {{{1, 1.0}}, {{0, 1.0}, {4, 1e-9}}});
  e                 = build_error(B, opts(32, 1, "fp16", "none"));
  EXPECT_EQ(e.row, 1);
  EXPECT_EQ(e.col, 4);
  EXPECT_EQ(std::string(e.what()), "row 1, column 4: " + e.message());
  EXPECT_EQ(e.message().rfind("value 1e-09 underflows", 0), 0u) << e.message();
  // Copies keep everything (the glue rethrows).
  const ValueRangeError copy = e;
  EXPECT_EQ(copy.row, 1);
  EXPECT_EQ(copy.message(), e.message());
  EXPECT_STREQ(copy.what(), e.what());
  // The default is exact: none of these is an error.
  EXPECT_FALSE(PackSellOptions{}.value_format.lossy());
  EXPECT_NO_THROW(build_packsell(A.view(), PackSellOptions{}));
  EXPECT_NO_THROW(build_packsell(B.view(), PackSellOptions{}));
}
