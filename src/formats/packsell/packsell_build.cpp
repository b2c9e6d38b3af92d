// PackSELL on the host: the host executor of the build driver (packsell_plan.hpp), the fill of
// the words and the tail from the plan, and value-only updates.
#include "core/layout_util.hpp"
#include "core/value_codec_hd.hpp"
#include "packsell_plan.hpp"
#include "packsell_rows.hpp"
#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>

namespace pspmv
{

namespace
{

// The stored bits of value a scaled by 2^s (the driver checked that it fits).
uint32_t encode_scaled(const ValueFormat &f, double a, int32_t s)
{
  EncodeStatus st;
  return encode_value(f, std::ldexp(a, s), &st);
}

// Tail values get the same rounding as the words, expressed back in unscaled units, so the
// tail kernel needs no scale factor.
void round_tail(CooTail &t, const ValueFormat &f, int32_t s)
{
  if (!f.lossy()) return;
  for (double &v : t.val) v = std::ldexp(decode_value(f, encode_scaled(f, v, s)), -s);
}

// Slice pointers (word offsets, nslices + 1) of a layout whose rows, in stored order
// `order`, have these word counts: every slice is C rows of its longest row's words (the last
// one too); back() is the regular part's words.
std::vector<int64_t> slice_pointers_of(const std::vector<int32_t> &words, const std::vector<int32_t> &order, int32_t C)
{
  std::vector<int64_t> ptr(1, 0);
  for (size_t s0 = 0; s0 < order.size(); s0 += size_t(C)) {
    int32_t width = 0;
    for (size_t i = s0; i < std::min(order.size(), s0 + size_t(C)); ++i) width = std::max(width, words[size_t(order[i])]);
    ptr.push_back(ptr.back() + packsell::word_stride(width, C));
  }
  return ptr;
}

// The driver's executor over a host CSR (checked): its measurements in plain loops.
class HostExecutor {
public:
  explicit HostExecutor(const CsrView &A) : A_(A) { }
  int32_t               rows() const { return A_.rows; }
  int64_t               nnz() const { return A_.nnz(); }
  std::vector<int32_t> &array(PackSellRows a) { return arrays_[int(a)]; }

  BuildError max_abs_finite(double *m) const
  {
    *m = 0.0;
    for (int64_t k = 0; k < nnz(); ++k)
      if (std::isfinite(A_.values[k])) *m = std::max(*m, std::fabs(A_.values[k]));
    return BuildError{};
  }
  BuildError first_unencodable(const ValueFormat &f, int32_t s, int64_t *k) const
  {
    *k = -1;
    for (int64_t i = 0; i < nnz() && *k < 0; ++i)
      if (codec::unencodable(f.exponent_bits, f.mantissa_bits, A_.values[i], s)) *k = i;
    return BuildError{};
  }
  BuildError entry(int64_t k, int32_t *row, int32_t *col, double *v) const
  {
    *row = int32_t(std::upper_bound(A_.rowptr, A_.rowptr + A_.rows + 1, int32_t(k)) - A_.rowptr) - 1;
    *col = A_.colidx[k];
    *v   = A_.values[k];
    return BuildError{};
  }
  BuildError length_histogram(std::vector<int64_t> *hist) const
  {
    hist->assign(size_t(detail::max_row_length(A_)) + 1, 0);
    for (int32_t r = 0; r < A_.rows; ++r) (*hist)[size_t(A_.row_length(r))] += 1;
    return BuildError{};
  }
  BuildError row_words(int32_t K, int32_t D, PackSellRows out, int64_t *long_row, int64_t *long_words)
  {
    const uint32_t        md = packsell::delta_mask(D);
    std::vector<int32_t> &w  = array(out);
    w.resize(size_t(A_.rows));
    *long_row = -1;
    for (int32_t r = 0; r < A_.rows; ++r) {
      const int32_t *col   = A_.colidx + A_.rowptr[r];
      const int32_t  n     = std::min(A_.row_length(r), K);
      int64_t        words = n;
      for (int32_t k = 0; k < n; ++k) words += packsell::needs_dummy(col[k], k ? col[k - 1] : 0, md) ? 1 : 0;
      if (words > INT32_MAX && *long_row < 0) {
        *long_row   = r;
        *long_words = words;
      }
      w[size_t(r)] = int32_t(std::min<int64_t>(words, INT32_MAX));
    }
    return BuildError{};
  }
  // A window that is a power-of-two multiple of the one `order` is sorted in is the stable
  // merge of pairs of its windows: O(rows) per doubling instead of a sort.
  BuildError sort_rows(PackSellRows w, int32_t sigma, int32_t sorted, PackSellRows o)
  {
    const std::vector<int32_t> &words  = array(w);
    std::vector<int32_t>       &order  = array(o);
    const size_t                n      = words.size();
    const auto                  longer = [&words](int32_t a, int32_t b) { return words[size_t(a)] > words[size_t(b)]; };
    int64_t                     from   = sorted > 1 && sigma % sorted == 0 && order.size() == n ? sorted : 0;
    while (from > 0 && from < sigma) from *= 2;
    if (from != sigma) { // not a doubling of `sorted`: sort the windows
      order.resize(n);
      std::iota(order.begin(), order.end(), 0);
      if (sigma > 1)
        for (size_t w0 = 0; w0 < n; w0 += size_t(sigma)) std::stable_sort(order.begin() + w0, order.begin() + std::min(n, w0 + size_t(sigma)), longer);
      return BuildError{};
    }
    std::vector<int32_t> merged(n);
    for (int64_t cur = sorted; cur < sigma; cur *= 2) {
      for (size_t w0 = 0; w0 < n; w0 += 2 * size_t(cur)) {
        const size_t mid = std::min(n, w0 + size_t(cur)), end = std::min(n, w0 + 2 * size_t(cur));
        std::merge(order.begin() + w0, order.begin() + mid, order.begin() + mid, order.begin() + end, merged.begin() + w0, longer);
      }
      order.swap(merged);
    }
    return BuildError{};
  }
  BuildError regular_words(PackSellRows w, PackSellRows o, int32_t C, int64_t *total)
  {
    *total = slice_pointers_of(array(w), array(o), C).back();
    return BuildError{};
  }
  // One walk of the first min(length, top) nonzeros of every row (in CSR order: the column
  // indices stream; only the table of slices x top is accessed by slice).
  BuildError widest_sums(PackSellRows o, int32_t C, int32_t D, int32_t top, std::vector<int64_t> *sums)
  {
    const std::vector<int32_t> &order = array(o);
    std::vector<int32_t>        slice(size_t(A_.rows));
    for (size_t i = 0; i < order.size(); ++i) slice[size_t(order[i])] = packsell::slice_of(int32_t(i), C);
    const size_t nslices = size_t(packsell::num_slices(A_.rows, C)), t = size_t(top);
    // widest[s * top + k - 1]: words of the widest row of slice s when rows keep k nonzeros
    std::vector<int32_t> widest(nslices * t, 0);
    const uint32_t       md = packsell::delta_mask(D);
    for (int32_t r = 0; r < A_.rows; ++r) {
      int32_t       *wr    = &widest[size_t(slice[size_t(r)]) * t];
      const int32_t *col   = A_.colidx + A_.rowptr[r];
      const size_t   n     = std::min(size_t(A_.row_length(r)), t);
      int32_t        words = 0;
      for (size_t k = 0; k < n; ++k) {
        words += packsell::needs_dummy(col[k], k ? col[k - 1] : 0, md) ? 2 : 1;
        wr[k] = std::max(wr[k], words);
      }
    }
    sums->assign(t, 0);
    for (size_t s = 0; s < nslices; ++s) { // a row shorter than k keeps its whole-row words
      int32_t m = 0;
      for (size_t k = 0; k < t; ++k) {
        m = std::max(m, widest[s * t + k]);
        (*sums)[k] += m;
      }
    }
    return BuildError{};
  }

private:
  const CsrView       &A_;
  std::vector<int32_t> arrays_[kPackSellRowArrays];
};

// Whether rows of these word counts (the layout without gaps) hold dummies: only then may gaps
// pay (without dummies a row needs as many words as it stores nonzeros either way).
bool has_dummies(const CsrView &A, const std::vector<int32_t> &words, int32_t K)
{
  int64_t w = 0, stored = 0;
  for (int32_t r = 0; r < A.rows; ++r) {
    w += words[size_t(r)];
    stored += std::min(A.row_length(r), K);
  }
  return w > stored;
}

// The column gaps of a layout before they are placed (packsell::SliceGapMins's arrays).
struct SliceGaps {
  std::vector<int64_t>   off;
  std::vector<uint32_t>  min;
  packsell::SliceGapMins view() const { return {off.data(), min.data()}; }
};

SliceGaps slice_gaps(const CsrView &A, const std::vector<int32_t> &perm, int32_t C, int32_t K)
{
  const int32_t ns = packsell::num_slices(A.rows, C);
  SliceGaps     g;
  g.off.assign(size_t(ns) + 1, 0);
  for (int32_t i = 0; i < A.rows; ++i) {
    int64_t &len = g.off[size_t(packsell::slice_of(i, C)) + 1];
    len          = std::max<int64_t>(len, std::min(A.row_length(perm[size_t(i)]), K));
  }
  std::partial_sum(g.off.begin(), g.off.end(), g.off.begin());
  g.min.assign(size_t(g.off.back()), UINT32_MAX);
  for (int32_t i = 0; i < A.rows; ++i) {
    const int32_t  r = perm[size_t(i)], n = std::min(A.row_length(r), K);
    const int32_t *col  = A.colidx + A.rowptr[r];
    uint32_t      *m    = &g.min[size_t(g.off[size_t(packsell::slice_of(i, C))])];
    uint32_t       prev = 0;
    for (int32_t k = 0; k < n; ++k) {
      m[k] = std::min(m[k], uint32_t(col[k]) - prev);
      prev = uint32_t(col[k]);
    }
  }
  return g;
}

// Words of every row (by original row, as the plan's Words array) when the layout has gaps g.
std::vector<int32_t> gapped_row_words(const CsrView &A, const std::vector<int32_t> &perm, int32_t C, int32_t K, int32_t D, const SliceGaps &g)
{
  const packsell::SliceGapMins gv = g.view();
  std::vector<int32_t>         w(size_t(A.rows));
  for (int32_t i = 0; i < A.rows; ++i) {
    const int32_t r = perm[size_t(i)], s = packsell::slice_of(i, C);
    w[size_t(r)] = packsell::encode_row_columns(
      A.colidx + A.rowptr[r], std::min(A.row_length(r), K), D, true, [&](int32_t k) { return gv.at(s, k); }, [](int32_t, uint32_t, int32_t) {});
  }
  return w;
}

// Writes the words (and exact values) of the regular part of every row, with M.gaps (empty:
// none) taken from g.
void fill_words(const CsrView &A, const SliceGaps *gaps, PackSellMatrix &M)
{
  const int32_t                C = M.slice_height, D = M.delta_bits, K = M.hybrid_width;
  const bool                   exact = !M.value_format.lossy();
  const packsell::SliceGapMins g     = gaps ? gaps->view() : packsell::SliceGapMins{};
  for (int32_t i = 0; i < M.rows; ++i) {
    const int32_t r = M.perm[size_t(i)], s = packsell::slice_of(i, C);
    const int64_t p = packsell::row_first_word(M.slice_pointers.data(), i, C);
    const double *v = A.values + A.rowptr[r];
    packsell::encode_row_columns(
      A.colidx + A.rowptr[r], std::min(A.row_length(r), K), D, gaps != nullptr, [&](int32_t k) { return g.at(s, k); },
      [&](int32_t k, uint32_t word, int32_t j) {
        const size_t at = size_t(p + packsell::word_stride(k, C));
        if (j >= 0 && !exact) word = packsell::with_value_bits(word, encode_scaled(M.value_format, v[j], M.scale_exponent), D);
        if (j >= 0 && exact) M.exact_values[at] = v[j];
        M.words[at] = word;
      });
  }
  if (!gaps) return;
  M.gaps.assign(size_t(packsell::gap_entries(int64_t(M.words.size()), C)), 0u);
  for (int32_t s = 0; s < M.num_slices(); ++s)
    for (int64_t k = 0; k < gaps->off[size_t(s) + 1] - gaps->off[size_t(s)]; ++k) M.gaps[size_t(packsell::gap_slot(M.slice_pointers[size_t(s)], C, k))] = g.at(s, k);
}

} // namespace

PackSellMatrix build_packsell(const CsrView &A, const PackSellOptions &opt)
{
  detail::check_packsell_options(opt);
  check_csr(A);
  HostExecutor x(A);
  PackSellPlan p;
  plan_packsell(x, opt, &p).raise();

  PackSellMatrix M;
  M.rows           = A.rows;
  M.cols           = A.cols;
  M.slice_height   = opt.slice_height;
  M.value_format   = opt.value_format;
  M.delta_bits     = p.delta_bits;
  M.scaling        = opt.scaling;
  M.scaling_option = opt.scaling_option;
  M.scale_exponent = p.scale_exponent;
  M.sigma          = p.sigma;
  M.hybrid_width   = p.hybrid_width;
  M.perm           = std::move(x.array(PackSellRows::Perm));
  M.slice_pointers = slice_pointers_of(x.array(PackSellRows::Words), M.perm, M.slice_height);
  // Column gaps where they pay (packsell_gaps_pay; packsell_layout.hpp).
  SliceGaps gaps;
  bool      gapped = false;
  if (opt.column_gaps && packsell::gaps_possible(M.delta_bits, A.cols) && has_dummies(A, x.array(PackSellRows::Words), M.hybrid_width)) {
    gaps                             = slice_gaps(A, M.perm, M.slice_height, M.hybrid_width);
    std::vector<int64_t> gapped_ptrs = slice_pointers_of(gapped_row_words(A, M.perm, M.slice_height, M.hybrid_width, M.delta_bits, gaps), M.perm, M.slice_height);
    gapped                           = detail::packsell_gaps_pay(M.slice_pointers.back(), gapped_ptrs.back(), M.slice_height, !opt.value_format.lossy());
    if (gapped) M.slice_pointers = std::move(gapped_ptrs);
  }
  M.words.assign(size_t(M.slice_pointers.back()), 0u); // padding words are 0
  if (!opt.value_format.lossy()) M.exact_values.assign(M.words.size(), 0.0);
  fill_words(A, gapped ? &gaps : nullptr, M);

  M.tail = detail::coo_tail_of(A, M.hybrid_width);
  round_tail(M.tail, M.value_format, M.scale_exponent);
  return M;
}

void update_packsell_values(const CsrView &A, PackSellMatrix &M)
{
  check_csr(A);
  // Pattern check: same shape, and every row of the layout decodes to A's columns.
  int64_t regular = 0;
  if (A.rows == M.rows && A.cols == M.cols) {
    for (int32_t i = 0; i < M.rows; ++i) {
      const int32_t r = M.perm[size_t(i)];
      int32_t       n = 0;
      detail::for_each_row_nonzero(M, i, [&](int64_t, int32_t col) {
        if (n >= A.row_length(r) || A.colidx[A.rowptr[r] + n] != col) throw detail::pattern_changed(r);
        ++n;
      });
      if (n != std::min(A.row_length(r), M.hybrid_width)) throw detail::pattern_changed(r);
      regular += n;
    }
  }
  detail::check_same_shape(A, M.rows, M.cols, regular + M.tail.nnz());

  HostExecutor x(A);
  int32_t      s = 0;
  plan_packsell_scale(x, M.value_format, M.scaling, M.scaling_option, &s).raise();
  CooTail tail = M.tail;
  update_coo_tail_values(A, M.hybrid_width, tail); // checks the tail pattern
  round_tail(tail, M.value_format, s);

  // Everything checked: rewrite the value fields in place, keeping deltas, flags, dummies.
  M.scale_exponent = s;
  const bool exact = !M.value_format.lossy();
  for (int32_t i = 0; i < M.rows; ++i) {
    const int32_t r = M.perm[size_t(i)];
    int32_t       k = A.rowptr[r];
    detail::for_each_row_nonzero(M, i, [&](int64_t p, int32_t) {
      if (exact) {
        M.exact_values[size_t(p)] = A.values[k];
      } else {
        const uint32_t bits = encode_scaled(M.value_format, A.values[k], s);
        M.words[size_t(p)]  = packsell::with_value_bits(M.words[size_t(p)], bits, M.delta_bits);
      }
      ++k;
    });
  }
  M.tail = std::move(tail);
}

} // namespace pspmv
