// PackSELL: building the packed SELL-C-sigma layout and value-only updates.
#include "layout_util.hpp"
#include "packsell_word.hpp"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>

namespace pspmv {

namespace {

// Bytes per regular word and per COO tail entry. Dummy words are counted as slots: the
// width passed to the rule is in words, so dummies are approximated by their count.

void check_options(const PackSellOptions &opt) {
  const int32_t C = opt.slice_height;
  if (C < 32 || C > 1024 || C % 32 != 0)
    throw FormatError("PackSELL slice height " + std::to_string(C) +
                      " is not valid: use a multiple of 32 in [32, 1024]");
  if (opt.sigma != kPackSellSigmaAuto && opt.sigma != 1 && (opt.sigma < C || opt.sigma % C != 0))
    throw FormatError("PackSELL sigma " + std::to_string(opt.sigma) +
                      " is not valid: use 1 (no sorting), a positive multiple of the slice height " +
                      std::to_string(C) + ", or the automatic choice (PETSC_DECIDE; 0 in the core)");
  if (opt.scaling != PackSellScaling::None && opt.scaling != PackSellScaling::Auto)
    throw FormatError("PackSELL scaling has an unknown value: use none or auto");
  const ValueFormat &f = opt.value_format;
  bool ok = false;
  switch (f.kind) {
  case ValueKind::Exact: ok = true; break;
  case ValueKind::FP16: ok = f.exponent_bits == 5 && f.mantissa_bits == 10; break;
  case ValueKind::BF16: ok = f.exponent_bits == 8 && f.mantissa_bits == 7; break;
  case ValueKind::E8M:
    ok = f.exponent_bits == 8 && f.mantissa_bits >= 7 && f.mantissa_bits <= 22;
    break;
  }
  if (!ok)
    throw FormatError("PackSELL value format is inconsistent: build it with ValueFormat::parse "
                      "(exact, fp16, bf16 or e8m<m> with 7 <= m <= 22)");
  detail::check_hybrid_option(opt.hybrid);
}

std::string format_double(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

ValueRangeError overflow_error(const ValueFormat &f, int32_t row, int32_t col, double v) {
  return ValueRangeError("row " + std::to_string(row) + ", column " + std::to_string(col) +
                         ": value " + format_double(v) + " overflows the PackSELL value format " +
                         f.name() + " (largest finite magnitude " + format_double(f.max_finite()) +
                         "); use a wider value format such as e8m14, or -mat_packsell_scaling auto");
}

bool fits(const ValueFormat &f, double v, int32_t s) {
  EncodeStatus st;
  encode_value(f, std::ldexp(v, s), &st);
  return st == EncodeStatus::Ok;
}

// Largest finite magnitude of A's values (0 if none).
double max_abs(const CsrView &A) {
  double m = 0.0;
  for (int64_t k = 0; k < A.nnz(); ++k)
    if (std::isfinite(A.values[k])) m = std::max(m, std::fabs(A.values[k]));
  return m;
}

// The stored bits of value a scaled by 2^s (fits() was checked by choose_scale).
uint32_t encode_scaled(const ValueFormat &f, double a, int32_t s) {
  EncodeStatus st;
  return encode_value(f, std::ldexp(a, s), &st);
}

ValueRangeError underflow_error(const ValueFormat &f, int32_t row, int32_t col, double v) {
  return ValueRangeError("row " + std::to_string(row) + ", column " + std::to_string(col) +
                         ": value " + format_double(v) + " underflows the PackSELL value format " +
                         f.name() + " to zero; use -mat_packsell_scaling auto or a wider value format such as bf16 or e8m14");
}

// The exponent the values are stored with, chosen afresh from the values at every build and
// update. Auto: the s (positive or negative) that puts max|a| * 2^s in the binade of the
// largest finite value, one lower if rounding carries over the top, so the whole range of the
// format is used. None: s = 0, and the first value (CSR order) that overflows or that is a
// nonzero rounded to zero is reported: a lossy format never silently drops an entry.
int32_t choose_scale(const CsrView &A, const ValueFormat &f, PackSellScaling scaling) {
  if (!f.lossy()) return 0;
  if (scaling == PackSellScaling::None) {
    for (int32_t r = 0; r < A.rows; ++r)
      for (int32_t k = A.rowptr[r]; k < A.rowptr[r + 1]; ++k) {
        const double v = A.values[k];
        if (!fits(f, v, 0)) throw overflow_error(f, r, A.colidx[k], v);
        if (v != 0.0 && std::isfinite(v) && decode_value(f, encode_scaled(f, v, 0)) == 0.0)
          throw underflow_error(f, r, A.colidx[k], v);
      }
    return 0;
  }
  const double m = max_abs(A);
  if (m == 0.0) return 0;
  int32_t s = std::ilogb(f.max_finite()) - std::ilogb(m); // same binade as max_finite
  if (!fits(f, m, s)) --s;                                 // rounding carried over the top
  return s;
}

// Tail values get the same rounding as the words, expressed back in unscaled units, so the
// tail kernel needs no scale factor.
void round_tail(CooTail &t, const ValueFormat &f, int32_t s) {
  if (!f.lossy()) return;
  for (double &v : t.val) v = std::ldexp(decode_value(f, encode_scaled(f, v, s)), -s);
}

// perm: rows sorted by descending word count (stable) inside windows of sigma rows.
std::vector<int32_t> sort_rows(const std::vector<int32_t> &words, int32_t sigma) {
  std::vector<int32_t> perm(words.size());
  std::iota(perm.begin(), perm.end(), 0);
  if (sigma == 1) return perm;
  for (size_t w0 = 0; w0 < perm.size(); w0 += size_t(sigma)) {
    const size_t w1 = std::min(perm.size(), w0 + size_t(sigma));
    std::stable_sort(perm.begin() + w0, perm.begin() + w1,
                     [&words](int32_t a, int32_t b) { return words[size_t(a)] > words[size_t(b)]; });
  }
  return perm;
}

// Words of the first min(length, K) nonzeros of every row.
std::vector<int32_t> row_word_counts(const CsrView &A, int32_t K, int32_t D) {
  std::vector<int32_t> words(size_t(A.rows));
  for (int32_t r = 0; r < A.rows; ++r) words[size_t(r)] = detail::row_words(A, r, std::min(A.row_length(r), K), D);
  return words;
}

// K in nonzeros. The auto rule sees the word counts of whole rows in the layout's order,
// padded per slice; its width (in words) is then used as K in nonzeros.
int32_t width_for(const std::vector<int32_t> &sorted_words, const HybridOption &h, int32_t C, int32_t maxlen,
                  const ValueFormat &f) {
  switch (h.mode) {
  case HybridOption::Mode::None: return maxlen;
  case HybridOption::Mode::Fixed: return std::min(h.width, maxlen);
  case HybridOption::Mode::Auto: break;
  }
  return std::min(choose_hybrid_width(sorted_words, C, packsell_hybrid_cost(f, int64_t(sorted_words.size()))), maxlen);
}

// Regular words of a layout whose rows, in stored order, have these word counts: every slice
// of C rows is as wide as its longest row.
int64_t slice_words(const std::vector<int32_t> &words, int32_t C) {
  int64_t total = 0;
  for (size_t s0 = 0; s0 < words.size(); s0 += size_t(C))
    total += int64_t(C) * *std::max_element(words.begin() + s0, words.begin() + std::min(words.size(), s0 + size_t(C)));
  return total;
}

// Calls f(sigma, v) for the candidate windows sigma = 1, C, 2C, 4C, ... up to the first one
// >= v.size() (or the last one that fits 32 bits), with v sorted in descending order inside
// windows of sigma entries, until f returns false. Each window is the merge of two windows
// of the previous candidate, so a candidate costs O(n), not a sort.
template <class F> void for_each_sigma_candidate(std::vector<int32_t> v, int32_t C, F &&f) {
  if (!f(1, v)) return;
  const size_t n = v.size();
  for (size_t w0 = 0; w0 < n; w0 += size_t(C))
    std::sort(v.begin() + w0, v.begin() + std::min(n, w0 + size_t(C)), std::greater<int32_t>());
  std::vector<int32_t> merged(n);
  for (int64_t sigma = C;; sigma *= 2) {
    if (!f(int32_t(sigma), v) || sigma >= int64_t(n) || 2 * sigma > INT32_MAX) return;
    for (size_t w0 = 0; w0 < n; w0 += 2 * size_t(sigma)) {
      const size_t mid = std::min(n, w0 + size_t(sigma)), end = std::min(n, w0 + 2 * size_t(sigma));
      std::merge(v.begin() + w0, v.begin() + mid, v.begin() + mid, v.begin() + end, merged.begin() + w0,
                 std::greater<int32_t>());
    }
    v.swap(merged);
  }
}

// The automatic sigma (docs/design.md). Every candidate is costed as the build would store
// it: K from the whole-row word counts sorted in its windows, rows then sorted by the words
// of their first K nonzeros, slices padded to their longest row, the rest in the tail; bytes
// at packsell_hybrid_cost (stored bytes only: its fixed tail cost would just dilute the 2%
// comparison). A larger window scatters the y writes and loses x locality, so the smallest
// window within 2% of the cheapest one wins: regular matrices keep 1.
constexpr double kSigmaTolerance = 1.02;

int32_t choose_sigma(const CsrView &A, const PackSellOptions &opt, const std::vector<int32_t> &words,
                     int32_t maxlen, int32_t D) {
  struct Candidate {
    int32_t sigma, K;
    int64_t regular; // stored words, -1 until known
  };
  const int32_t C = opt.slice_height;
  std::vector<Candidate> cand;
  for_each_sigma_candidate(words, C, [&](int32_t sigma, const std::vector<int32_t> &sorted) {
    const int32_t K = width_for(sorted, opt.hybrid, C, maxlen, opt.value_format);
    cand.push_back({sigma, K, K >= maxlen ? slice_words(sorted, C) : -1}); // no row cut: same words
    return true;
  });
  // Rows cut at K are sorted by their truncated word counts: one pass per distinct K.
  for (const Candidate &c : cand) {
    if (c.regular >= 0) continue;
    const int32_t K = c.K;
    for_each_sigma_candidate(row_word_counts(A, K, D), C, [&](int32_t sigma, const std::vector<int32_t> &sorted) {
      bool pending = false;
      for (Candidate &d : cand) {
        if (d.K == K && d.sigma == sigma) d.regular = slice_words(sorted, C);
        pending = pending || (d.K == K && d.regular < 0);
      }
      return pending;
    });
  }
  const HybridCost slot_cost = packsell_hybrid_cost(opt.value_format, A.rows);
  std::vector<double> cost;
  for (const Candidate &c : cand) {
    int64_t tail = 0;
    for (int32_t r = 0; r < A.rows; ++r) tail += std::max(0, A.row_length(r) - c.K);
    cost.push_back(slot_cost.slot_bytes * double(c.regular) + slot_cost.tail_bytes * double(tail));
  }
  const double best = *std::min_element(cost.begin(), cost.end());
  size_t i = 0;
  while (cost[i] > kSigmaTolerance * best) ++i;
  return cand[i].sigma;
}

// Writes the words (and exact values) of the regular part of every row.
void fill_words(const CsrView &A, PackSellMatrix &M) {
  const int32_t C = M.slice_height, D = M.delta_bits, K = M.hybrid_width;
  const uint32_t md = detail::max_delta(D);
  const bool exact = !M.value_format.lossy();
  for (int32_t i = 0; i < M.rows; ++i) {
    const int32_t r = M.perm[size_t(i)];
    int64_t p = M.slice_pointers[size_t(i / C)] + i % C;
    int32_t prev = 0;
    const int32_t n = std::min(A.row_length(r), K);
    for (int32_t k = A.rowptr[r]; k < A.rowptr[r] + n; ++k) {
      uint32_t delta = uint32_t(A.colidx[k] - prev);
      if (delta > md) {
        M.words[size_t(p)] = detail::dummy_word(delta);
        p += C;
        delta = 0;
      }
      const uint32_t bits = exact ? 0u : encode_scaled(M.value_format, A.values[k], M.scale_exponent);
      M.words[size_t(p)] = detail::real_word(bits, delta, D);
      if (exact) M.exact_values[size_t(p)] = A.values[k];
      p += C;
      prev = A.colidx[k];
    }
  }
}

} // namespace

PackSellMatrix build_packsell(const CsrView &A, const PackSellOptions &opt) {
  check_options(opt);
  check_csr(A);

  PackSellMatrix M;
  M.rows = A.rows;
  M.cols = A.cols;
  M.slice_height = opt.slice_height;
  M.value_format = opt.value_format;
  M.delta_bits = detail::packsell_delta_bits(opt.value_format);
  M.scaling = opt.scaling;
  M.scale_exponent = choose_scale(A, opt.value_format, opt.scaling);

  const int32_t maxlen = detail::max_row_length(A);
  std::vector<int32_t> words = row_word_counts(A, maxlen, M.delta_bits); // whole rows
  M.sigma = opt.sigma == kPackSellSigmaAuto ? choose_sigma(A, opt, words, maxlen, M.delta_bits) : opt.sigma;
  std::vector<int32_t> sorted; // whole-row counts in layout order: only the auto width reads them
  if (opt.hybrid.mode == HybridOption::Mode::Auto)
    for (int32_t r : sort_rows(words, M.sigma)) sorted.push_back(words[size_t(r)]);
  M.hybrid_width = width_for(sorted, opt.hybrid, opt.slice_height, maxlen, opt.value_format);
  if (M.hybrid_width < maxlen) words = row_word_counts(A, M.hybrid_width, M.delta_bits);
  M.perm = sort_rows(words, M.sigma);

  const int32_t C = M.slice_height;
  const int32_t nslices = int32_t((int64_t(A.rows) + C - 1) / C);
  M.slice_pointers.assign(size_t(nslices) + 1, 0);
  for (int32_t s = 0; s < nslices; ++s) {
    int32_t width = 0;
    const int32_t i1 = int32_t(std::min<int64_t>(A.rows, int64_t(s) * C + C));
    for (int32_t i = s * C; i < i1; ++i)
      width = std::max(width, words[size_t(M.perm[size_t(i)])]);
    // Every slice has stride C, the last one too.
    M.slice_pointers[size_t(s) + 1] = M.slice_pointers[size_t(s)] + int64_t(width) * C;
  }
  M.words.assign(size_t(M.slice_pointers.back()), 0u); // padding words are 0
  if (!opt.value_format.lossy()) M.exact_values.assign(M.words.size(), 0.0);
  fill_words(A, M);

  M.tail = detail::coo_tail_of(A, M.hybrid_width);
  round_tail(M.tail, M.value_format, M.scale_exponent);
  return M;
}

void update_packsell_values(const CsrView &A, PackSellMatrix &M) {
  check_csr(A);
  // Pattern check: same shape, and every row of the layout decodes to A's columns.
  int64_t regular = 0;
  if (A.rows == M.rows && A.cols == M.cols) {
    for (int32_t i = 0; i < M.rows; ++i) {
      const int32_t r = M.perm[size_t(i)];
      int32_t n = 0;
      detail::for_each_row_nonzero(M, i, [&](int64_t, int32_t col) {
        if (n >= A.row_length(r) || A.colidx[A.rowptr[r] + n] != col) throw detail::pattern_changed(r);
        ++n;
      });
      if (n != std::min(A.row_length(r), M.hybrid_width)) throw detail::pattern_changed(r);
      regular += n;
    }
  }
  detail::check_same_shape(A, M.rows, M.cols, regular + M.tail.nnz());

  const int32_t s = choose_scale(A, M.value_format, M.scaling);
  CooTail tail = M.tail;
  update_coo_tail_values(A, M.hybrid_width, tail); // checks the tail pattern
  round_tail(tail, M.value_format, s);

  // Everything checked: rewrite the value fields in place, keeping deltas, flags, dummies.
  M.scale_exponent = s;
  const bool exact = !M.value_format.lossy();
  const uint32_t low_mask = (uint32_t(1) << (M.delta_bits + 1)) - 1;
  for (int32_t i = 0; i < M.rows; ++i) {
    const int32_t r = M.perm[size_t(i)];
    int32_t k = A.rowptr[r];
    detail::for_each_row_nonzero(M, i, [&](int64_t p, int32_t) {
      if (exact) {
        M.exact_values[size_t(p)] = A.values[k];
      } else {
        const uint32_t bits = encode_scaled(M.value_format, A.values[k], s);
        M.words[size_t(p)] = (bits << (M.delta_bits + 1)) | (M.words[size_t(p)] & low_mask);
      }
      ++k;
    });
  }
  M.tail = std::move(tail);
}

} // namespace pspmv
