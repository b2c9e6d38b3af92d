// PackSELL's checks and the non-template parts of its build driver (packsell_plan.hpp): the
// option checks, the automatic scale exponent, the range errors with their remedies, the
// automatic sigma's candidates and pick. Host code, shared by the host and device builds.
#include "packsell_plan.hpp"
#include "core/layout_util.hpp"
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>

namespace pspmv
{

namespace
{
void check_options(const PackSellOptions &opt)
{
  const int32_t C = opt.slice_height;
  if (!packsell::valid_slice_height(C)) throw FormatError("PackSELL slice height " + std::to_string(C) + " is not valid: use a multiple of 32 in [32, 1024]");
  if (opt.sigma != kPackSellSigmaAuto && opt.sigma != 1 && (opt.sigma < C || opt.sigma % C != 0))
    throw FormatError("PackSELL sigma " + std::to_string(opt.sigma) + " is not valid: use 1 (no sorting), a positive multiple of the slice height " + std::to_string(C) + ", or the automatic choice (PETSC_DECIDE; 0 in the core)");
  if (opt.scaling != PackSellScaling::None && opt.scaling != PackSellScaling::Auto) throw FormatError("PackSELL scaling has an unknown value: use none or auto");
  const ValueFormat &f  = opt.value_format;
  bool               ok = false;
  switch (f.kind) {
  case ValueKind::Exact:
    ok = true;
    break;
  case ValueKind::FP16:
    ok = f.exponent_bits == 5 && f.mantissa_bits == 10;
    break;
  case ValueKind::BF16:
    ok = f.exponent_bits == 8 && f.mantissa_bits == 7;
    break;
  case ValueKind::E8M:
    ok = f.exponent_bits == 8 && f.mantissa_bits >= 7 && f.mantissa_bits <= 22;
    break;
  }
  if (!ok)
    throw FormatError("PackSELL value format is inconsistent: build it with ValueFormat::parse "
                      "(exact, fp16, bf16 or e8m<m> with 7 <= m <= 22)");
  detail::check_hybrid_option(opt.hybrid);
}

std::string format_double(double v)
{
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// The exponent -mat_packsell_scaling auto stores values with, for largest finite magnitude
// m: the s (positive or negative) that puts m * 2^s in the binade of the largest finite value,
// one lower if rounding carries over the top, so the whole range of the format is used; and
// at most kMaxScaleExponent, so that the factor 2^-s of the products (host and device) is a
// normal double and multiplying by it is exact or one rounding, as ldexp (an all-tiny matrix,
// max|a| < 2^-1000, would otherwise need 2^-s < 2^-1074: 0, every product 0). s >= -1009
// always (m <= DBL_MAX, and every format reaches 2^15). 0 when m is 0.
int32_t auto_scale(const ValueFormat &f, double m)
{
  if (!f.lossy() || m == 0.0) return 0;
  int32_t      s = std::ilogb(f.max_finite()) - std::ilogb(m); // same binade as max_finite
  EncodeStatus st;
  encode_value(f, std::ldexp(m, s), &st);
  if (st != EncodeStatus::Ok) --s;       // rounding carried over the top
  return std::min(s, kMaxScaleExponent); // a smaller s: m still fits
}

// The formats of r that hold the matrix ("a wider value format such as bf16 or e8m14"), else
// the value format exact, which holds any matrix.
std::string wider_formats(const detail::PackSellRangeRemedies &r)
{
  if (r.formats.empty()) return "the value format exact";
  std::string fit = r.formats[0];
  for (size_t i = 1; i < r.formats.size(); ++i) fit += " or " + r.formats[i];
  return "a wider value format such as " + fit;
}

ValueRangeError overflow_error(const ValueFormat &f, int32_t row, int32_t col, double v, const detail::PackSellRangeRemedies &r)
{
  return ValueRangeError(row, col, "value " + format_double(v) + " overflows the PackSELL value format " + f.name() + " (largest finite magnitude " + format_double(f.max_finite()) + "); use " + wider_formats(r) + (r.auto_scaling ? ", or " + r.scaling_option + " auto" : ""));
}

ValueRangeError underflow_error(const ValueFormat &f, int32_t row, int32_t col, double v, PackSellScaling scaling, int32_t s, double m, const detail::PackSellRangeRemedies &r)
{
  if (scaling == PackSellScaling::None)
    return ValueRangeError(row, col, "value " + format_double(v) + " underflows the PackSELL value format " + f.name() + " to zero; use " + (r.auto_scaling ? r.scaling_option + " auto or " : "") + wider_formats(r));
  return ValueRangeError(row, col, "value " + format_double(v) + " underflows the PackSELL value format " + f.name() + " to zero with " + r.scaling_option + " auto (values stored times 2^" + std::to_string(s) + " so that the largest magnitude " + format_double(m) + " fits: the matrix spans more magnitudes than " + f.name() + " holds); use " + wider_formats(r));
}

// A larger window scatters the y writes and loses x locality, so the smallest window within 2%
// of the cheapest one wins: regular matrices keep 1.
constexpr double kSigmaTolerance = 1.02;

} // namespace

namespace detail
{

void check_packsell_options(const PackSellOptions &opt)
{
  check_options(opt);
}
int32_t packsell_auto_scale(const ValueFormat &f, double m)
{
  return auto_scale(f, m);
}

std::vector<ValueFormat> packsell_remedy_candidates(const ValueFormat &f)
{
  std::vector<ValueFormat> c;
  for (const ValueFormat &g : {ValueFormat::bf16(), ValueFormat::e8m(14), ValueFormat::e8m(22)})
    if (g.name() != f.name() && !(g.exponent_bits == f.exponent_bits && g.mantissa_bits <= f.mantissa_bits)) c.push_back(g);
  return c;
}

ValueRangeError packsell_value_range_error(const ValueFormat &f, PackSellScaling scaling, int32_t row, int32_t col, double v, int32_t s, double m, const PackSellRangeRemedies &r)
{
  EncodeStatus st;
  encode_value(f, std::ldexp(v, s), &st);
  return st != EncodeStatus::Ok ? overflow_error(f, row, col, v, r) : underflow_error(f, row, col, v, scaling, s, m, r);
}

size_t packsell_pick_sigma(const std::vector<double> &cost)
{
  const double best = *std::min_element(cost.begin(), cost.end());
  size_t       i    = 0;
  while (cost[i] > kSigmaTolerance * best) ++i;
  return i;
}

std::vector<int32_t> packsell_sigma_candidates(int32_t rows, int32_t C)
{
  std::vector<int32_t> v{1};
  for (int64_t sigma = C;; sigma *= 2) {
    v.push_back(int32_t(sigma));
    if (sigma >= int64_t(rows) || 2 * sigma > INT32_MAX) break;
  }
  return v;
}

BuildError packsell_row_words_error(int64_t row, int64_t words, int32_t D)
{
  return BuildError::format("PackSELL row " + std::to_string(row) + " needs " + std::to_string(words) + " words (its nonzeros and a dummy before every column jump beyond " + std::to_string(packsell::delta_mask(D)) + "), more than a slice holds (" + std::to_string(INT32_MAX) + "); use a value format with more delta bits (fp16, bf16: 15; exact: 30)");
}

bool packsell_gaps_pay(int64_t plain_words, int64_t gapped_words, int32_t C, bool exact)
{
  const int64_t per_word = int64_t(sizeof(uint32_t)) + (exact ? int64_t(sizeof(double)) : 0);
  const double  gapped   = double(gapped_words * per_word + packsell::gap_entries(gapped_words, C) * int64_t(sizeof(uint32_t)));
  return gapped <= kPackSellGapsMaxBytesRatio * double(plain_words * per_word);
}

} // namespace detail

} // namespace pspmv
