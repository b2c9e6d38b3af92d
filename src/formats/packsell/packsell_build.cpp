// PackSELL: building the packed SELL-C-sigma layout and value-only updates.
#include "core/layout_util.hpp"
#include "packsell_rows.hpp"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>

namespace pspmv {

namespace {

void check_options(const PackSellOptions &opt) {
  const int32_t C = opt.slice_height;
  if (!packsell::valid_slice_height(C))
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

// The exponent -mat_packsell_scaling auto stores values with, for largest finite magnitude
// m: the s (positive or negative) that puts m * 2^s in the binade of the largest finite value,
// one lower if rounding carries over the top, so the whole range of the format is used; and
// at most kMaxScaleExponent, so that the factor 2^-s of the products (host and device) is a
// normal double and multiplying by it is exact or one rounding, as ldexp (an all-tiny matrix,
// max|a| < 2^-1000, would otherwise need 2^-s < 2^-1074: 0, every product 0). s >= -1009
// always (m <= DBL_MAX, and every format reaches 2^15). 0 when m is 0.
int32_t auto_scale(const ValueFormat &f, double m) {
  if (!f.lossy() || m == 0.0) return 0;
  int32_t s = std::ilogb(f.max_finite()) - std::ilogb(m); // same binade as max_finite
  EncodeStatus st;
  encode_value(f, std::ldexp(m, s), &st);
  if (st != EncodeStatus::Ok) --s; // rounding carried over the top
  return std::min(s, kMaxScaleExponent); // a smaller s: m still fits
}

// Whether format g stores v as a finite nonzero (or v is 0) when the values are scaled by 2^s.
bool holds(const ValueFormat &g, double v, int32_t s) {
  EncodeStatus st;
  const uint32_t bits = encode_value(g, std::ldexp(v, s), &st);
  return st == EncodeStatus::Ok && (v == 0.0 || decode_value(g, bits) != 0.0);
}

// A remedy for value v that f cannot hold: the first two of bf16, e8m14, e8m22 that hold it
// (FP32's exponent range, wider subnormals with more mantissa bits), else exact (FP64 values).
// With scaling auto a candidate is tried at the exponent auto would give it for the largest
// magnitude m of the matrix (a matrix's range, not one value, is what has to fit).
std::string wider_formats(const ValueFormat &f, double v, PackSellScaling scaling, double m) {
  std::string fit;
  int found = 0;
  for (const ValueFormat &g : {ValueFormat::bf16(), ValueFormat::e8m(14), ValueFormat::e8m(22)}) {
    if (found == 2 || g.name() == f.name()) continue;
    if (!holds(g, v, scaling == PackSellScaling::Auto ? auto_scale(g, m) : 0)) continue; // overflow, underflow
    fit += (found++ ? " or " : "") + g.name();
  }
  return found ? "a wider value format such as " + fit : "the value format exact";
}

ValueRangeError overflow_error(const ValueFormat &f, int32_t row, int32_t col, double v) {
  return ValueRangeError(row, col,
                         "value " + format_double(v) + " overflows the PackSELL value format " + f.name() +
                             " (largest finite magnitude " + format_double(f.max_finite()) + "); use " +
                             wider_formats(f, v, PackSellScaling::None, 0.0) + ", or -mat_packsell_scaling auto");
}

ValueRangeError underflow_error(const ValueFormat &f, int32_t row, int32_t col, double v, PackSellScaling scaling,
                                int32_t s, double m) {
  if (scaling == PackSellScaling::None)
    return ValueRangeError(row, col,
                           "value " + format_double(v) + " underflows the PackSELL value format " + f.name() +
                               " to zero; use -mat_packsell_scaling auto or " +
                               wider_formats(f, v, scaling, m));
  return ValueRangeError(row, col,
                         "value " + format_double(v) + " underflows the PackSELL value format " + f.name() +
                             " to zero with -mat_packsell_scaling auto (values stored times 2^" + std::to_string(s) +
                             " so that the largest magnitude " + format_double(m) +
                             " fits: the matrix spans more magnitudes than " + f.name() + " holds); use " +
                             wider_formats(f, v, scaling, m));
}

// The stored bits of value a scaled by 2^s (choose_scale checked that it fits).
uint32_t encode_scaled(const ValueFormat &f, double a, int32_t s) {
  EncodeStatus st;
  return encode_value(f, std::ldexp(a, s), &st);
}

// Largest finite magnitude of A's values (0 if none).
double max_abs(const CsrView &A) {
  double m = 0.0;
  for (int64_t k = 0; k < A.nnz(); ++k)
    if (std::isfinite(A.values[k])) m = std::max(m, std::fabs(A.values[k]));
  return m;
}

// The exponent the values are stored with, chosen afresh from the values at every build and
// update: 0 with scaling none, auto_scale() with auto. Either way the first value (CSR order)
// that overflows, or that is a nonzero rounded to zero at that exponent, is reported (row and
// column of A): a lossy format never silently drops an entry. With auto only a matrix whose
// magnitudes span more than the format's range can have such a value (one 1e300 among
// ordinary values), and the remedy is a format of wider range.
int32_t choose_scale(const CsrView &A, const ValueFormat &f, PackSellScaling scaling) {
  if (!f.lossy()) return 0;
  const double m = scaling == PackSellScaling::Auto ? max_abs(A) : 0.0;
  const int32_t s = scaling == PackSellScaling::Auto ? auto_scale(f, m) : 0;
  const uint32_t magnitude = (uint32_t(1) << (f.exponent_bits + f.mantissa_bits)) - 1; // all but the sign
  for (int32_t r = 0; r < A.rows; ++r)
    for (int32_t k = A.rowptr[r]; k < A.rowptr[r + 1]; ++k) {
      const double v = A.values[k];
      if (!std::isfinite(v)) continue; // Inf and NaN are stored as such
      EncodeStatus st;
      const uint32_t bits = encode_value(f, std::ldexp(v, s), &st);
      if (st != EncodeStatus::Ok || (v != 0.0 && (bits & magnitude) == 0))
        throw detail::packsell_value_range_error(f, scaling, r, A.colidx[k], v, s, m);
    }
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

// K (in nonzeros) of the automatic hybrid width, for rows in the order `order` (sorted by
// whole-row words; with sigma > 1 and K < longest row the build then re-sorts them by the
// words of their first K nonzeros, which this cost does not see: measured < 1% of words):
// choose_hybrid_width's rule with the regular part counted in words: a row keeps its first
// K nonzeros and the dummies they need, and a slice of C rows is as wide as its widest row.
// (Choosing K on whole-row word counts and then cutting rows at K nonzeros instead kept up to
// twice the modelled words where most nonzeros need a dummy; docs/design.md, "Measured
// constants".) Cost: one walk of the first min(length, cap) nonzeros of every row, a table of slices x cap.
int32_t auto_width(const CsrView &A, const std::vector<int32_t> &order, int32_t C, int32_t D, const ValueFormat &f) {
  std::vector<int32_t> len(size_t(A.rows)), slice(size_t(A.rows)); // per CSR row: length, slice
  for (size_t i = 0; i < order.size(); ++i) {
    len[i] = A.row_length(int32_t(i));
    slice[size_t(order[i])] = packsell::slice_of(int32_t(i), C);
  }
  const int32_t maxlen = len.empty() ? 0 : *std::max_element(len.begin(), len.end());
  if (maxlen == 0) return 0;
  const size_t top = size_t(std::min(maxlen, hybrid_width_cap(len))); // largest candidate K
  const size_t nslices = (order.size() + size_t(C) - 1) / size_t(C);
  // widest[s * top + K - 1]: words of the widest row of slice s when rows keep K nonzeros.
  // Rows in CSR order (the column indices stream; only the table is accessed by slice).
  std::vector<int32_t> widest(nslices * top, 0);
  const uint32_t md = packsell::delta_mask(D);
  for (int32_t r = 0; r < A.rows; ++r) {
    int32_t *w = &widest[size_t(slice[size_t(r)]) * top];
    const int32_t *col = A.colidx + A.rowptr[r];
    const size_t n = std::min(size_t(len[size_t(r)]), top);
    int32_t prev = 0, words = 0;
    for (size_t k = 0; k < n; ++k) {
      words += uint32_t(col[k] - prev) > md ? 2 : 1;
      prev = col[k];
      w[k] = std::max(w[k], words);
    }
  }
  for (size_t s = 0; s < nslices; ++s) // a row shorter than K keeps its whole-row words
    for (size_t k = 1; k < top; ++k) widest[s * top + k] = std::max(widest[s * top + k], widest[s * top + k - 1]);
  // choose_hybrid_width asks only for 1 <= K <= top (its candidates: the same cap).
  return choose_hybrid_width(len, packsell_hybrid_cost(f, A.rows), [&](int32_t K) {
    int64_t words = 0;
    for (size_t s = 0; s < nslices; ++s) words += widest[s * top + size_t(K) - 1];
    return int64_t(C) * words;
  });
}

// K in nonzeros for the hybrid option; `order`: the rows in layout order (auto only).
int32_t width_for(const CsrView &A, const std::vector<int32_t> &order, const HybridOption &h, int32_t C, int32_t D,
                  int32_t maxlen, const ValueFormat &f) {
  switch (h.mode) {
  case HybridOption::Mode::None: return maxlen;
  case HybridOption::Mode::Fixed: return std::min(h.width, maxlen);
  case HybridOption::Mode::Auto: break;
  }
  return auto_width(A, order, C, D, f); // <= maxlen
}

// Slice pointers (word offsets, nslices + 1) of a layout whose rows, in stored order
// `order`, have these word counts: every slice is C rows of its longest row's words (the last
// one too); back() is the regular part's words.
std::vector<int64_t> slice_pointers_of(const std::vector<int32_t> &words, const std::vector<int32_t> &order,
                                       int32_t C) {
  std::vector<int64_t> ptr(1, 0);
  for (size_t s0 = 0; s0 < order.size(); s0 += size_t(C)) {
    int32_t width = 0;
    for (size_t i = s0; i < std::min(order.size(), s0 + size_t(C)); ++i)
      width = std::max(width, words[size_t(order[i])]);
    ptr.push_back(ptr.back() + packsell::word_stride(width, C));
  }
  return ptr;
}

// Calls f(sigma, order) for the candidate windows sigma = 1, C, 2C, 4C, ... up to the first
// one >= rows (or the last one that fits 32 bits), with order = sort_rows(words, sigma),
// until f returns false. Each window is the merge of two windows of the previous candidate
// (std::merge is stable, as sort_rows' stable sort), so a candidate costs O(rows), not a sort.
template <class F> void for_each_sigma_order(const std::vector<int32_t> &words, int32_t C, F &&f) {
  std::vector<int32_t> order(words.size());
  std::iota(order.begin(), order.end(), 0);
  if (!f(1, order)) return;
  const size_t n = order.size();
  const auto longer = [&words](int32_t a, int32_t b) { return words[size_t(a)] > words[size_t(b)]; };
  for (size_t w0 = 0; w0 < n; w0 += size_t(C))
    std::stable_sort(order.begin() + w0, order.begin() + std::min(n, w0 + size_t(C)), longer);
  std::vector<int32_t> merged(n);
  for (int64_t sigma = C;; sigma *= 2) {
    if (!f(int32_t(sigma), order) || sigma >= int64_t(n) || 2 * sigma > INT32_MAX) return;
    for (size_t w0 = 0; w0 < n; w0 += 2 * size_t(sigma)) {
      const size_t mid = std::min(n, w0 + size_t(sigma)), end = std::min(n, w0 + 2 * size_t(sigma));
      std::merge(order.begin() + w0, order.begin() + mid, order.begin() + mid, order.begin() + end, merged.begin() + w0,
                 longer);
    }
    order.swap(merged);
  }
}

// The automatic sigma (docs/design.md). Every candidate is costed as the build would store
// it: K from the rows sorted by whole-row words in its windows (auto_width), rows then sorted
// by the words of their first K nonzeros, slices padded to their longest row, the rest in the
// tail; bytes at packsell_hybrid_cost: the stored bytes and the cost of each row with tail
// entries (the terms that picked each candidate's K; the fixed tail cost would just dilute
// the 2% comparison). A larger window scatters the y writes and loses x locality, so
// the smallest window within 2% of the cheapest one wins: regular matrices keep 1.
constexpr double kSigmaTolerance = 1.02;

int32_t choose_sigma(const CsrView &A, const PackSellOptions &opt, const std::vector<int32_t> &words,
                     int32_t maxlen, int32_t D) {
  struct Candidate {
    int32_t sigma, K;
    int64_t regular; // stored words, -1 until known
  };
  const int32_t C = opt.slice_height;
  std::vector<Candidate> cand;
  for_each_sigma_order(words, C, [&](int32_t sigma, const std::vector<int32_t> &order) {
    const int32_t K = width_for(A, order, opt.hybrid, C, D, maxlen, opt.value_format);
    cand.push_back({sigma, K, K >= maxlen ? slice_pointers_of(words, order, C).back() : -1}); // no row cut: same words
    return true;
  });
  // Rows cut at K are sorted by their truncated word counts: one pass per distinct K.
  for (const Candidate &c : cand) {
    if (c.regular >= 0) continue;
    const int32_t K = c.K;
    const std::vector<int32_t> cut = row_word_counts(A, K, D);
    for_each_sigma_order(cut, C, [&](int32_t sigma, const std::vector<int32_t> &order) {
      bool pending = false;
      for (Candidate &d : cand) {
        if (d.K == K && d.sigma == sigma) d.regular = slice_pointers_of(cut, order, C).back();
        pending = pending || (d.K == K && d.regular < 0);
      }
      return pending;
    });
  }
  const HybridCost slot_cost = packsell_hybrid_cost(opt.value_format, A.rows);
  std::vector<double> cost;
  for (const Candidate &c : cand) {
    int64_t tail = 0, tail_rows = 0;
    for (int32_t r = 0; r < A.rows; ++r) {
      tail += std::max(0, A.row_length(r) - c.K);
      tail_rows += A.row_length(r) > c.K ? 1 : 0;
    }
    cost.push_back(slot_cost.variable_bytes(c.regular, tail, tail_rows));
  }
  return cand[detail::packsell_pick_sigma(cost)].sigma;
}

} // namespace

namespace detail {

void check_packsell_options(const PackSellOptions &opt) { check_options(opt); }
int32_t packsell_auto_scale(const ValueFormat &f, double m) { return auto_scale(f, m); }

ValueRangeError packsell_value_range_error(const ValueFormat &f, PackSellScaling scaling, int32_t row, int32_t col,
                                           double v, int32_t s, double m) {
  EncodeStatus st;
  encode_value(f, std::ldexp(v, s), &st);
  return st != EncodeStatus::Ok ? overflow_error(f, row, col, v) : underflow_error(f, row, col, v, scaling, s, m);
}

size_t packsell_pick_sigma(const std::vector<double> &cost) {
  const double best = *std::min_element(cost.begin(), cost.end());
  size_t i = 0;
  while (cost[i] > kSigmaTolerance * best) ++i;
  return i;
}

} // namespace detail

namespace {

// Writes the words (and exact values) of the regular part of every row.
void fill_words(const CsrView &A, PackSellMatrix &M) {
  const int32_t C = M.slice_height, D = M.delta_bits, K = M.hybrid_width;
  const uint32_t md = packsell::delta_mask(D);
  const bool exact = !M.value_format.lossy();
  for (int32_t i = 0; i < M.rows; ++i) {
    const int32_t r = M.perm[size_t(i)];
    int64_t p = packsell::row_first_word(M.slice_pointers.data(), i, C);
    int32_t prev = 0;
    const int32_t n = std::min(A.row_length(r), K);
    for (int32_t k = A.rowptr[r]; k < A.rowptr[r] + n; ++k) {
      uint32_t delta = uint32_t(A.colidx[k] - prev);
      if (delta > md) {
        M.words[size_t(p)] = packsell::dummy_word(delta);
        p += packsell::word_stride(1, C);
        delta = 0;
      }
      const uint32_t bits = exact ? 0u : encode_scaled(M.value_format, A.values[k], M.scale_exponent);
      M.words[size_t(p)] = packsell::real_word(bits, delta, D);
      if (exact) M.exact_values[size_t(p)] = A.values[k];
      p += packsell::word_stride(1, C);
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
  M.perm = sort_rows(words, M.sigma); // by whole-row words: the order the auto width is costed in
  M.hybrid_width = width_for(A, M.perm, opt.hybrid, opt.slice_height, M.delta_bits, maxlen, opt.value_format);
  if (M.hybrid_width < maxlen) {
    words = row_word_counts(A, M.hybrid_width, M.delta_bits);
    M.perm = sort_rows(words, M.sigma);
  }

  M.slice_pointers = slice_pointers_of(words, M.perm, M.slice_height);
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
  for (int32_t i = 0; i < M.rows; ++i) {
    const int32_t r = M.perm[size_t(i)];
    int32_t k = A.rowptr[r];
    detail::for_each_row_nonzero(M, i, [&](int64_t p, int32_t) {
      if (exact) {
        M.exact_values[size_t(p)] = A.values[k];
      } else {
        const uint32_t bits = encode_scaled(M.value_format, A.values[k], s);
        M.words[size_t(p)] = packsell::with_value_bits(M.words[size_t(p)], bits, M.delta_bits);
      }
      ++k;
    });
  }
  M.tail = std::move(tail);
}

} // namespace pspmv
