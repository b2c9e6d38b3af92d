#include "format_check.hpp"
#include "random_matrix.hpp"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

namespace pspmv_test
{

using pspmv::PackSellScaling;

namespace
{

bool same_bits(double a, double b)
{
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// Stored bits of a at exponent s.
uint32_t encoded(const pspmv::ValueFormat &f, double a, int32_t s)
{
  pspmv::EncodeStatus st;
  return pspmv::encode_value(f, std::ldexp(a, s), &st);
}

// The value a PackSELL layout with exponent s represents for a (what a product multiplies).
double rounded(const pspmv::ValueFormat &f, double a, int32_t s)
{
  if (!f.lossy()) return a;
  return std::ldexp(pspmv::decode_value(f, encoded(f, a, s)), -s);
}

bool fits_at(const pspmv::ValueFormat &f, double a, int32_t s)
{
  pspmv::EncodeStatus st;
  pspmv::encode_value(f, std::ldexp(a, s), &st);
  return st == pspmv::EncodeStatus::Ok;
}

double max_abs(const CsrMatrix &A)
{
  double m = 0.0;
  for (double v : A.values) m = std::max(m, std::fabs(v));
  return m;
}

// Words the first n nonzeros of row r need with D delta bits (dummy before each long jump).
int32_t words_of(const CsrMatrix &A, int32_t r, int32_t n, int32_t D)
{
  const int64_t md   = (int64_t(1) << D) - 1;
  int32_t       w    = n;
  int64_t       prev = 0;
  for (int32_t j = 0; j < n; ++j) {
    const int64_t c = A.colidx[size_t(A.rowptr[size_t(r)] + j)];
    if (c - prev > md) ++w;
    prev = c;
  }
  return w;
}

void expect_tail(const CsrMatrix &A, const pspmv::CooTail &t, int32_t K, const pspmv::ValueFormat &f, int32_t s)
{
  size_t i  = 0;
  bool   ok = true;
  for (int32_t r = 0; r < A.rows && ok; ++r)
    for (int32_t k = A.rowptr[size_t(r)] + K; k < A.rowptr[size_t(r) + 1] && ok; ++k, ++i) {
      ok = i < t.row.size() && t.row[i] == r && t.col[i] == A.colidx[size_t(k)] && same_bits(t.val[i], rounded(f, A.values[size_t(k)], s));
      EXPECT_TRUE(ok) << "tail entry " << i << " (row " << r << ", CSR position " << k << ") is wrong";
    }
  EXPECT_EQ(t.row.size(), i);
  EXPECT_EQ(t.col.size(), t.row.size());
  EXPECT_EQ(t.val.size(), t.row.size());
}

// A copy of A with the same nonzero count but one column moved (nullopt-like: rows == -1).
CsrMatrix moved_pattern(const CsrMatrix &A)
{
  CsrMatrix B = A;
  for (int32_t r = 0; r < A.rows; ++r) {
    const int32_t e = A.rowptr[size_t(r) + 1];
    if (e > A.rowptr[size_t(r)] && A.colidx[size_t(e - 1)] + 1 < A.cols) {
      B.colidx[size_t(e - 1)] += 1;
      return B;
    }
  }
  B.rows = -1;
  return B;
}

void check_rgcsr(const CsrMatrix &A, const FormatConfig &cfg, uint64_t seed)
{
  pspmv::RgCsrMatrix M = pspmv::build_rgcsr(A.view(), cfg.rgcsr_options());
  expect_rgcsr_layout(A, M, expected_width(A, cfg));

  const int32_t       n = std::min(A.rows, A.cols);
  std::vector<double> d(size_t(n), std::numeric_limits<double>::quiet_NaN());
  pspmv::rgcsr_diagonal(M, d.data());
  for (int32_t r = 0; r < n; ++r) {
    double ref = 0.0;
    for (int32_t k = A.rowptr[size_t(r)]; k < A.rowptr[size_t(r) + 1]; ++k)
      if (A.colidx[size_t(k)] == r) ref = A.values[size_t(k)];
    ASSERT_EQ(d[size_t(r)], ref) << "diagonal of row " << r;
  }
  auto product = [&M](const double *x, double *y, bool add) { pspmv::rgcsr_spmv(M, x, y, add); };
  EXPECT_TRUE(check_product(A, product, ErrorModel{}, seed));
  if (!cfg.check_update) return;

  const double    hi = std::max(max_abs(A), 1e-300);
  const CsrMatrix B  = with_new_values(A, seed + 7, hi * 1e-3, hi);
  pspmv::update_rgcsr_values(B.view(), M);
  expect_rgcsr_layout(B, M, expected_width(A, cfg));
  EXPECT_TRUE(check_product(B, product, ErrorModel{}, seed + 1));
  const pspmv::RgCsrMatrix fresh = pspmv::build_rgcsr(B.view(), cfg.rgcsr_options());
  EXPECT_TRUE(fresh.values == M.values && fresh.tail.val == M.tail.val) << "an update differs from a fresh build";

  const CsrMatrix moved = moved_pattern(A);
  if (moved.rows >= 0) {
    const std::vector<double> before = M.values;
    EXPECT_THROW(pspmv::update_rgcsr_values(moved.view(), M), pspmv::FormatError);
    EXPECT_TRUE(before == M.values) << "a refused update changed the layout";
  }
}

// The ValueRangeError of a build of A that must fail: its row and column name an entry of A
// that does not fit at the exponent the build uses, what() is "row r, column c: " + message().
void expect_range_error(const CsrMatrix &A, const pspmv::PackSellOptions &opt, const pspmv::ValueRangeError &e)
{
  const std::string what = e.what();
  EXPECT_EQ(what, "row " + std::to_string(e.row) + ", column " + std::to_string(e.col) + ": " + e.message());
  EXPECT_EQ(e.message().find("row "), std::string::npos) << "message() without the coordinates: " << e.message();
  const bool                autos = opt.scaling == PackSellScaling::Auto;
  std::vector<const char *> parts{"value ", "use "};
  if (autos) parts.push_back("underflows the PackSELL value format " /* auto never overflows */);
  for (const char *part : parts) EXPECT_NE(what.find(part), std::string::npos) << "message lacks '" << part << "': " << what;
  // every remedy the message names builds A: scaling auto, the formats "such as X or Y", exact
  const std::string                   remedy = what.substr(std::min(what.size(), what.rfind("use ")));
  std::vector<pspmv::PackSellOptions> remedies;
  if (remedy.find("-mat_packsell_scaling auto") != std::string::npos) {
    EXPECT_FALSE(autos) << what;
    remedies.push_back(opt);
    remedies.back().scaling = PackSellScaling::Auto;
  }
  for (const char *f : {"bf16", "e8m14", "e8m22"})
    if (remedy.find(std::string(" ") + f) != std::string::npos) {
      remedies.push_back(opt);
      remedies.back().value_format = pspmv::ValueFormat::parse(f);
    }
  EXPECT_FALSE(remedies.empty() && remedy.find("the value format exact") == std::string::npos) << "no remedy: " << what;
  for (const pspmv::PackSellOptions &r : remedies) EXPECT_NO_THROW((void)pspmv::build_packsell(A.view(), r)) << "a remedy the message names fails (" << r.value_format.name() << "): " << what;
  ASSERT_TRUE(e.row >= 0 && e.row < A.rows && e.col >= 0 && e.col < A.cols) << what;
  const int32_t s     = autos ? expected_auto_exponent(A, opt.value_format) : 0;
  bool          found = false;
  for (int32_t k = A.rowptr[size_t(e.row)]; k < A.rowptr[size_t(e.row) + 1]; ++k)
    if (A.colidx[size_t(k)] == e.col) {
      found          = true;
      const double v = A.values[size_t(k)];
      EXPECT_FALSE(fits_at(opt.value_format, v, s) && (v == 0.0 || !std::isfinite(v) || rounded(opt.value_format, v, s) != 0.0)) << "entry (" << e.row << ", " << e.col << ") = " << v << " fits: " << what;
    }
  EXPECT_TRUE(found) << "no entry at row " << e.row << ", column " << e.col << ": " << what;
}

void check_packsell(const CsrMatrix &A, const FormatConfig &cfg, uint64_t seed)
{
  const pspmv::PackSellOptions opt = cfg.packsell_options();
  if (!values_fit(A, opt.value_format, cfg.scaling)) {
    try {
      (void)pspmv::build_packsell(A.view(), opt);
      ADD_FAILURE() << "a value overflows " << cfg.value << " or underflows it to zero, but the build did not throw";
    } catch (const pspmv::ValueRangeError &e) {
      expect_range_error(A, opt, e);
    }
    return;
  }
  pspmv::PackSellMatrix M     = pspmv::build_packsell(A.view(), opt);
  FormatConfig          built = cfg; // the window actually built (auto resolved)
  if (cfg.sigma == pspmv::kPackSellSigmaAuto) {
    expect_auto_sigma(A, opt, M);
    built.sigma = M.sigma;
  }
  EXPECT_EQ(M.hybrid_width, expected_width(A, built));
  expect_packsell_layout(A, M, true);

  const int32_t       n = std::min(A.rows, A.cols);
  std::vector<double> d(size_t(n), std::numeric_limits<double>::quiet_NaN());
  pspmv::packsell_diagonal(M, d.data());
  for (int32_t r = 0; r < n; ++r) {
    double ref = 0.0;
    for (int32_t k = A.rowptr[size_t(r)]; k < A.rowptr[size_t(r) + 1]; ++k)
      if (A.colidx[size_t(k)] == r) ref = rounded(M.value_format, A.values[size_t(k)], M.scale_exponent);
    ASSERT_EQ(d[size_t(r)], ref) << "diagonal of row " << r;
  }
  auto product = [&M](const double *x, double *y, bool add) { pspmv::packsell_spmv(M, x, y, add); };
  EXPECT_TRUE(check_product(A, product, packsell_error_model(M), seed));
  if (!cfg.check_update) return;

  // New values inside A's range (which may still underflow a format without scaling: then
  // the update must refuse them and leave the layout as it was).
  const double    hi = std::max(max_abs(A), 1e-300);
  const CsrMatrix B  = with_new_values(A, seed + 7, hi * 1e-3, hi);
  if (!values_fit(B, opt.value_format, cfg.scaling)) {
    const std::vector<uint32_t> before = M.words;
    EXPECT_THROW(pspmv::update_packsell_values(B.view(), M), pspmv::ValueRangeError);
    EXPECT_TRUE(before == M.words) << "a refused update changed the layout";
    return;
  }
  const std::vector<int32_t> perm = M.perm;
  pspmv::update_packsell_values(B.view(), M);
  EXPECT_TRUE(M.perm == perm && M.sigma == built.sigma) << "an update changed the row order";
  expect_packsell_layout(B, M, false);
  EXPECT_TRUE(check_product(B, product, packsell_error_model(M), seed + 1));
  const pspmv::PackSellMatrix fresh = pspmv::build_packsell(B.view(), opt);
  {
    EXPECT_EQ(fresh.scale_exponent, M.scale_exponent) << "an update chooses the exponent a fresh build chooses";
    EXPECT_TRUE(fresh.words == M.words && fresh.gaps == M.gaps && fresh.exact_values == M.exact_values && fresh.tail.val == M.tail.val) << "an update differs from a fresh build";
  }

  const CsrMatrix moved = moved_pattern(A);
  if (moved.rows >= 0) {
    const std::vector<uint32_t> before = M.words;
    EXPECT_THROW(pspmv::update_packsell_values(moved.view(), M), pspmv::FormatError);
    EXPECT_TRUE(before == M.words) << "a refused update changed the layout";
  }
}

} // namespace

std::string FormatConfig::name() const
{
  if (kind == Kind::RgCsr) return "rgcsr G=" + std::to_string(block) + " hybrid=" + hybrid;
  const std::string s = sigma == pspmv::kPackSellSigmaAuto ? "auto" : std::to_string(sigma);
  return "packsell C=" + std::to_string(block) + " sigma=" + s + " " + value + " hybrid=" + hybrid + " scaling=" + (scaling == PackSellScaling::Auto ? "auto" : "none");
}

pspmv::RgCsrOptions FormatConfig::rgcsr_options() const
{
  pspmv::RgCsrOptions o;
  o.group_size = block;
  o.hybrid     = pspmv::HybridOption::parse(hybrid);
  return o;
}

pspmv::PackSellOptions FormatConfig::packsell_options() const
{
  pspmv::PackSellOptions o;
  o.slice_height = block;
  o.sigma        = sigma;
  o.value_format = pspmv::ValueFormat::parse(value);
  o.scaling      = scaling;
  o.hybrid       = pspmv::HybridOption::parse(hybrid);
  return o;
}

FormatConfig rgcsr_config(int32_t G, const std::string &hybrid, bool update)
{
  FormatConfig c;
  c.kind         = FormatConfig::Kind::RgCsr;
  c.block        = G;
  c.hybrid       = hybrid;
  c.check_update = update;
  return c;
}

FormatConfig packsell_config(int32_t C, int32_t sigma, const std::string &value, const std::string &hybrid, PackSellScaling scaling, bool update)
{
  FormatConfig c;
  c.kind         = FormatConfig::Kind::PackSell;
  c.block        = C;
  c.sigma        = sigma;
  c.value        = value;
  c.hybrid       = hybrid;
  c.scaling      = scaling;
  c.check_update = update;
  return c;
}

bool values_fit(const CsrMatrix &A, const pspmv::ValueFormat &f)
{
  return values_fit(A, f, PackSellScaling::None);
}

int32_t expected_auto_exponent(const CsrMatrix &A, const pspmv::ValueFormat &f)
{
  if (!f.lossy()) return 0;
  double m = 0.0;
  for (double v : A.values)
    if (std::isfinite(v)) m = std::max(m, std::fabs(v));
  if (m == 0.0) return 0;
  // Search from the top: the largest s <= 1022 (2^-s a normal double) at which m fits.
  int32_t s = pspmv::kMaxScaleExponent;
  while (!(std::isfinite(std::ldexp(m, s)) && fits_at(f, m, s))) --s; // ldexp may overflow to Inf
  return s;
}

bool values_fit(const CsrMatrix &A, const pspmv::ValueFormat &f, PackSellScaling scaling)
{
  if (!f.lossy()) return true;
  const int32_t s = scaling == PackSellScaling::Auto ? expected_auto_exponent(A, f) : 0;
  for (double v : A.values) {
    if (!fits_at(f, v, s)) return false;                                       // overflows
    if (v != 0.0 && std::isfinite(v) && rounded(f, v, s) == 0.0) return false; // a nonzero that would be stored as zero
  }
  return true;
}

ErrorModel packsell_error_model(const pspmv::PackSellMatrix &M)
{
  const pspmv::ValueFormat &f = M.value_format;
  if (!f.lossy()) return ErrorModel{};
  const int  emin = 2 - (1 << (f.exponent_bits - 1));
  ErrorModel m;
  m.u   = f.unit_roundoff();
  m.eta = std::ldexp(1.0, emin - f.mantissa_bits - 1 - M.scale_exponent);
  return m;
}

int32_t expected_width(const CsrMatrix &A, const FormatConfig &cfg)
{
  const int32_t             maxlen = A.max_row_length();
  const pspmv::HybridOption h      = pspmv::HybridOption::parse(cfg.hybrid);
  if (h.mode == pspmv::HybridOption::Mode::None) return maxlen;
  if (h.mode == pspmv::HybridOption::Mode::Fixed) return std::min(h.width, maxlen);
  std::vector<int32_t> len(size_t(A.rows));
  if (cfg.kind == FormatConfig::Kind::RgCsr) {
    for (int32_t r = 0; r < A.rows; ++r) len[size_t(r)] = A.row_length(r);
    return std::min(pspmv::choose_hybrid_width(len, cfg.block, pspmv::kRgCsrHybridCost), maxlen);
  }
  // PackSELL, brute force over every K (in nonzeros): rows in the order of
  // their whole-row word counts sorted inside sigma windows keep their first K
  // nonzeros and the dummies these need, every slice is as wide as its widest
  // row; the rest of a row is tail.
  const pspmv::ValueFormat f = pspmv::ValueFormat::parse(cfg.value);
  const int32_t            D = f.lossy() ? 31 - f.value_bits() : 30; // the spec (docs/design.md), not the library's constant
  std::vector<int32_t>     order(size_t(A.rows)), whole(size_t(A.rows));
  for (int32_t r = 0; r < A.rows; ++r) {
    order[size_t(r)] = r;
    len[size_t(r)]   = A.row_length(r);
    whole[size_t(r)] = words_of(A, r, A.row_length(r), D);
  }
  if (cfg.sigma > 1)
    for (size_t w0 = 0; w0 < order.size(); w0 += size_t(cfg.sigma)) std::stable_sort(order.begin() + w0, order.begin() + std::min(order.size(), w0 + size_t(cfg.sigma)), [&](int32_t a, int32_t b) { return whole[size_t(a)] > whole[size_t(b)]; });
  if (maxlen == 0) return 0;
  const pspmv::HybridCost cost      = pspmv::packsell_hybrid_cost(f, A.rows);
  const int32_t           top       = std::min(maxlen, pspmv::hybrid_width_cap(len));
  double                  best_cost = INFINITY;
  int32_t                 best      = top;
  for (int32_t K = top; K >= 1; --K) {
    if (cost.tail_width_cap > 0 && K != maxlen && K > cost.tail_width_cap) continue;
    int64_t words = 0, tail = 0, tail_rows = 0;
    for (size_t s0 = 0; s0 < order.size(); s0 += size_t(cfg.block)) {
      int32_t width = 0;
      for (size_t i = s0; i < std::min(order.size(), s0 + size_t(cfg.block)); ++i) width = std::max(width, words_of(A, order[i], std::min(A.row_length(order[i]), K), D));
      words += int64_t(cfg.block) * width;
    }
    for (int32_t r = 0; r < A.rows; ++r) {
      tail += std::max(0, A.row_length(r) - K);
      tail_rows += A.row_length(r) > K ? 1 : 0;
    }
    const double c = cost.slot_bytes * double(words) + cost.tail_bytes * double(tail) + cost.tail_row_bytes * double(tail_rows) + (tail > 0 ? cost.tail_fixed_bytes : 0.0);
    if (c < best_cost) { // strictly cheaper: ties go to the larger K
      best_cost = c;
      best      = K;
    }
  }
  return best;
}

void expect_rgcsr_layout(const CsrMatrix &A, const pspmv::RgCsrMatrix &M, int32_t K)
{
  const int32_t G = M.group_size;
  ASSERT_EQ(M.rows, A.rows);
  ASSERT_EQ(M.cols, A.cols);
  ASSERT_EQ(M.hybrid_width, K);
  const int32_t ngroups = (A.rows + G - 1) / G;
  ASSERT_EQ(M.group_pointers.size(), size_t(ngroups) + 1);
  ASSERT_EQ(M.group_pointers[0], 0);
  ASSERT_EQ(M.row_length.size(), size_t(A.rows));
  ASSERT_EQ(M.columns.size(), size_t(M.group_pointers.back()));
  ASSERT_EQ(M.values.size(), size_t(M.group_pointers.back()));
  std::vector<char> used(M.values.size(), 0);
  int64_t           regular = 0;
  for (int32_t g = 0; g < ngroups; ++g) {
    int32_t width = 0;
    for (int32_t r = g * G; r < std::min(A.rows, g * G + G); ++r) {
      const int32_t n = std::min(A.row_length(r), K);
      ASSERT_EQ(M.row_length[size_t(r)], n) << "row_length of row " << r;
      width = std::max(width, n);
      for (int32_t k = 0; k < n; ++k) {
        const size_t p = size_t(M.group_pointers[size_t(g)] + int64_t(k) * G + r % G);
        const size_t q = size_t(A.rowptr[size_t(r)] + k);
        ASSERT_TRUE(M.columns[p] == A.colidx[q] && same_bits(M.values[p], A.values[q])) << "slot " << k << " of row " << r;
        used[p] = 1;
      }
      regular += n;
    }
    ASSERT_EQ(M.group_pointers[size_t(g) + 1] - M.group_pointers[size_t(g)], int64_t(width) * G) << "group " << g << " is not padded to its longest row times G";
  }
  for (size_t p = 0; p < used.size(); ++p)
    if (!used[p]) {
      ASSERT_TRUE(M.columns[p] == 0 && same_bits(M.values[p], 0.0)) << "padding slot " << p;
    }
  expect_tail(A, M.tail, K, pspmv::ValueFormat::exact(), 0);

  const pspmv::FormatStats s = M.stats();
  EXPECT_EQ(s.rows, A.rows);
  EXPECT_EQ(s.cols, A.cols);
  EXPECT_EQ(s.nnz, A.nnz());
  EXPECT_EQ(s.tail_nnz, A.nnz() - regular);
  EXPECT_EQ(s.stored_slots, M.group_pointers.back());
  EXPECT_EQ(s.padding_slots, s.stored_slots - regular);
  EXPECT_EQ(s.dummy_words, 0);
  EXPECT_EQ(s.hybrid_width, K);
  EXPECT_EQ(s.stored_bytes, 12 * s.stored_slots + 8 * int64_t(ngroups + 1) + 4 * int64_t(A.rows) + 16 * s.tail_nnz);
}

void expect_packsell_layout(const CsrMatrix &A, const pspmv::PackSellMatrix &M, bool fresh)
{
  const pspmv::ValueFormat &f = M.value_format;
  const int32_t             C = M.slice_height, K = M.hybrid_width, s = M.scale_exponent;
  const int32_t             D  = f.lossy() ? 31 - f.value_bits() : 30; // the spec (docs/design.md), not the library's constant
  const int64_t             md = (int64_t(1) << D) - 1;
  ASSERT_EQ(M.rows, A.rows);
  ASSERT_EQ(M.cols, A.cols);
  ASSERT_EQ(M.delta_bits, D);
  ASSERT_LE(K, A.max_row_length());

  // Exponent: none -> 0; auto (build or update alike) -> the largest s <= 1022 with
  // max|a| * 2^s representable (positive for small values), 0 for an all-zero matrix.
  (void)fresh;
  if (!f.lossy() || M.scaling == PackSellScaling::None) {
    EXPECT_EQ(s, 0);
  } else {
    const double m = max_abs(A);
    if (m == 0.0) EXPECT_EQ(s, 0);
    else EXPECT_TRUE(fits_at(f, m, s) && (s == pspmv::kMaxScaleExponent || !fits_at(f, m, s + 1))) << "exponent " << s;
    EXPECT_LE(s, pspmv::kMaxScaleExponent) << "2^-s must stay a normal double";
    EXPECT_EQ(s, expected_auto_exponent(A, f));
  }

  // perm: a permutation; identity for sigma 1; rows stay inside their sigma window.
  ASSERT_EQ(M.perm.size(), size_t(A.rows));
  std::vector<char> seen(size_t(A.rows), 0);
  for (int32_t i = 0; i < A.rows; ++i) {
    const int32_t r = M.perm[size_t(i)];
    ASSERT_TRUE(r >= 0 && r < A.rows && !seen[size_t(r)]) << "perm is not a permutation at " << i;
    seen[size_t(r)] = 1;
    if (M.sigma == 1) ASSERT_EQ(r, i);
    else ASSERT_EQ(r / M.sigma, i / M.sigma) << "row " << r << " left its sort window";
  }
  const int32_t nslices = (A.rows + C - 1) / C;
  ASSERT_EQ(M.slice_pointers.size(), size_t(nslices) + 1);
  ASSERT_EQ(M.slice_pointers[0], 0);
  ASSERT_EQ(M.words.size(), size_t(M.slice_pointers.back()));
  ASSERT_EQ(M.exact_values.size(), f.lossy() ? 0 : M.words.size());

  // Walk every lane of every slice, re-deriving the word rules; with column gaps
  // (packsell_layout.hpp) a nonzero's delta is its step less the slice's gap at its word
  // position, and a dummy's jump is signed.
  const bool gapped = !M.gaps.empty();
  if (gapped) ASSERT_EQ(M.gaps.size(), M.words.size() / size_t(C));
  int64_t              real = 0, dummies = 0, padding = 0, plain_words = 0;
  std::vector<int32_t> plain(size_t(A.rows), 0); // words of each sorted row without gaps (the sort key)
  for (int32_t sl = 0; sl < nslices; ++sl) {
    const int64_t span = M.slice_pointers[size_t(sl) + 1] - M.slice_pointers[size_t(sl)];
    ASSERT_EQ(span % C, 0);
    const int64_t        width   = span / C;
    int64_t              longest = 0, plain_width = 0;
    std::vector<int64_t> min_step; // the gaps: each nonzero position's smallest step over the slice's rows
    for (int32_t lane = 0; lane < C; ++lane) {
      const int32_t i = sl * C + lane;
      const int32_t r = i < A.rows ? M.perm[size_t(i)] : -1;
      const int32_t n = r >= 0 ? std::min(A.row_length(r), K) : 0;
      for (int32_t j = 0; j < n; ++j) {
        const int64_t step = A.colidx[size_t(A.rowptr[size_t(r)] + j)] - (j ? A.colidx[size_t(A.rowptr[size_t(r)] + j - 1)] : 0);
        if (size_t(j) >= min_step.size()) min_step.push_back(step);
        min_step[size_t(j)] = std::min(min_step[size_t(j)], step);
      }
      if (r < 0) continue;
      plain[size_t(i)] = words_of(A, r, n, D);
      plain_width      = std::max<int64_t>(plain_width, plain[size_t(i)]);
    }
    plain_words += plain_width * C;
    auto gap = [&](int64_t k) -> int64_t { return gapped ? int64_t(M.gaps[size_t(M.slice_pointers[size_t(sl)] / C + k)]) : 0; };
    for (int64_t k = 0; gapped && k < width; ++k) ASSERT_EQ(gap(k), size_t(k) < min_step.size() ? min_step[size_t(k)] : 0) << "gap " << k << " of slice " << sl;
    for (int32_t lane = 0; lane < C; ++lane) {
      const int32_t i   = sl * C + lane;
      const int32_t r   = i < A.rows ? M.perm[size_t(i)] : -1;
      const int32_t n   = r >= 0 ? std::min(A.row_length(r), K) : 0;
      int32_t       j   = 0;
      int64_t       col = 0, lane_padding = 0;
      bool          after_dummy = false;
      for (int64_t k = 0; k < width; ++k) {
        const size_t   p  = size_t(M.slice_pointers[size_t(sl)] + k * C + lane);
        const uint32_t w  = M.words[p];
        const double   ev = f.lossy() ? 0.0 : M.exact_values[p];
        if (j == n) { // after the row: padding words are 0
          ASSERT_TRUE(w == 0 && same_bits(ev, 0.0)) << "padding word of sorted row " << i << " slot " << k;
          ++padding;
          ++lane_padding;
          continue;
        }
        const size_t  q    = size_t(A.rowptr[size_t(r)] + j);
        const int64_t need = int64_t(A.colidx[q]) - col;
        if (!(w & 1u)) { // dummy: only when the delta does not fit, never twice; it lands gap(k + 1) short (-1 more instead of 0)
          const int64_t jump = gapped ? int64_t(int32_t(w) >> 1) : int64_t(w >> 1);
          const int64_t rest = need - gap(k + 1);
          ASSERT_TRUE(!after_dummy && (need - gap(k) < 0 || need - gap(k) > md) && jump == (gapped && rest == 0 ? -1 : rest) && same_bits(ev, 0.0)) << "dummy word of row " << r << " before nonzero " << j;
          col += jump;
          after_dummy = true;
          ++dummies;
          continue;
        }
        ASSERT_EQ(int64_t((w >> 1) & uint32_t(md)), need - gap(k)) << "delta of row " << r << " nonzero " << j;
        if (f.lossy()) ASSERT_EQ(w >> (D + 1), encoded(f, A.values[q], s)) << "value bits of row " << r << " nonzero " << j;
        else ASSERT_TRUE((w >> (D + 1)) == 0 && same_bits(ev, A.values[q])) << "exact value of row " << r;
        col         = A.colidx[q];
        after_dummy = false;
        ++j;
        ++real;
      }
      ASSERT_EQ(j, n) << "sorted row " << i << " (row " << r << ") does not hold its first K nonzeros";
      const int64_t lane_words = width - lane_padding;
      if (r >= 0 && !gapped) ASSERT_EQ(lane_words, plain[size_t(i)]) << "sorted row " << i;
      longest = std::max(longest, lane_words);
    }
    ASSERT_EQ(width, longest) << "slice " << sl << " is not padded to its longest row";
  }
  // Gaps only where they cut the regular part's bytes by 15% or more.
  const int64_t per_word = f.lossy() ? 4 : 12;
  if (gapped) EXPECT_LE(double(int64_t(M.words.size()) * per_word + 4 * int64_t(M.gaps.size())), 0.85 * double(plain_words * per_word)) << "gaps that do not pay";
  // Sorted by word count without gaps, longest first, stable, inside sigma windows.
  if (M.sigma > 1)
    for (int32_t i = 1; i < A.rows; ++i)
      if (i % M.sigma != 0) {
        ASSERT_GE(plain[size_t(i - 1)], plain[size_t(i)]) << "rows not sorted at " << i;
        if (plain[size_t(i - 1)] == plain[size_t(i)]) {
          ASSERT_LT(M.perm[size_t(i - 1)], M.perm[size_t(i)]) << "sort not stable at " << i;
        }
      }
  expect_tail(A, M.tail, K, f, s);

  const pspmv::FormatStats st = M.stats();
  EXPECT_EQ(st.nnz, A.nnz());
  EXPECT_EQ(st.tail_nnz, A.nnz() - real);
  EXPECT_EQ(st.dummy_words, dummies);
  EXPECT_EQ(st.padding_slots, padding);
  EXPECT_EQ(st.stored_slots, real + dummies + padding);
  EXPECT_EQ(st.hybrid_width, K);
  EXPECT_EQ(st.gap_entries, int64_t(M.gaps.size()));
  EXPECT_EQ(st.stored_bytes, 4 * st.stored_slots + (f.lossy() ? 0 : 8 * st.stored_slots) + 4 * st.gap_entries + 8 * int64_t(nslices + 1) + 4 * int64_t(A.rows) + 16 * st.tail_nnz);
}

std::vector<int32_t> sigma_candidates(int32_t rows, int32_t C)
{
  std::vector<int32_t> v{1};
  for (int64_t s = C;; s *= 2) {
    v.push_back(int32_t(s));
    if (s >= rows) return v;
  }
}

// The bytes the words and the tail occupy, and 32 B per row with tail entries (docs/design.md).
double packsell_model_bytes(const pspmv::PackSellMatrix &M)
{
  const double word      = M.value_format.lossy() ? 4.0 : 12.0;
  int64_t      tail_rows = 0;
  for (size_t t = 0; t < M.tail.row.size(); ++t) tail_rows += t == 0 || M.tail.row[t] != M.tail.row[t - 1] ? 1 : 0;
  return word * double(M.words.size()) + 16.0 * double(M.tail.nnz()) + 32.0 * double(tail_rows);
}

void expect_auto_sigma(const CsrMatrix &A, const pspmv::PackSellOptions &opt, const pspmv::PackSellMatrix &M)
{
  std::vector<double>        bytes;
  const std::vector<int32_t> cand = sigma_candidates(A.rows, opt.slice_height);
  for (int32_t sigma : cand) {
    pspmv::PackSellOptions o      = opt;
    o.sigma                       = sigma;
    o.column_gaps                 = false; // the model is the words without gaps
    const pspmv::PackSellMatrix N = pspmv::build_packsell(A.view(), o);
    bytes.push_back(packsell_model_bytes(N));
    if (sigma != M.sigma) continue;
    o.column_gaps                  = opt.column_gaps;
    const pspmv::PackSellMatrix &E = o.column_gaps ? pspmv::build_packsell(A.view(), o) : N;
    EXPECT_TRUE(E.perm == M.perm && E.words == M.words && E.gaps == M.gaps && E.hybrid_width == M.hybrid_width) << "auto differs from the explicit build with sigma " << sigma;
  }
  const double best = *std::min_element(bytes.begin(), bytes.end());
  size_t       i    = 0;
  while (bytes[i] > 1.02 * best) ++i;
  EXPECT_EQ(M.sigma, cand[i]) << "stored bytes per candidate from sigma 1 up: " << ::testing::PrintToString(bytes);
}

void check_format(const CsrMatrix &A, const FormatConfig &cfg, uint64_t seed)
{
  SCOPED_TRACE(cfg.name());
  if (cfg.kind == FormatConfig::Kind::RgCsr) check_rgcsr(A, cfg, seed);
  else check_packsell(A, cfg, seed);
}

} // namespace pspmv_test
