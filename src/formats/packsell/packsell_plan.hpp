// PackSELL's build driver: every decision of a build taken once, here, for both backends (the
// pattern of Ginkgo's executors: the algorithm in one place, small backend kernels). The
// decisions: the scale exponent and the range check of the values, sigma (automatic: every
// candidate window costed), the hybrid width K (core/hybrid's rule), the row order. An executor
// only measures and moves data: the host one in packsell_build.cpp (over a CsrView), the device
// one in packsell_device_build.cu (over a device CSR, with CUB); each then fills the words and
// the tail from the plan. What comes back to the driver from the device is small: counts per
// row length, per-K sums (at most the latency cap of K), a few scalars; the arrays of one
// entry per row (words per row, row orders) stay with the executor, named by PackSellRows.
//
// The executor X provides (every function returns a BuildError; None on success):
//   int32_t rows() const; int64_t nnz() const;
//   max_abs_finite(double *m)            largest finite |a| (0 without nonzeros)
//   first_unencodable(f, s, int64_t *k)  first CSR position k whose value codec::unencodable()
//                                        at 2^s, -1 when none
//   entry(k, int32_t *row, int32_t *col, double *v)   the entry at CSR position k
//   length_histogram(std::vector<int64_t> *hist)      hist[l] = rows of length l, size
//                                                     longest row + 1
//   row_words(K, D, PackSellRows out, int64_t *long_row, int64_t *long_words)
//                                        out[r] = words of the first min(len, K) nonzeros of row
//                                        r (packsell_row_words); long_row: the first row of more
//                                        than INT32_MAX words (-1 when none), long_words its count
//   sort_rows(PackSellRows words, sigma, sorted, PackSellRows order)
//                                        order = rows sorted by descending words, stable, inside
//                                        windows of sigma rows; `sorted` > 0: order already holds
//                                        these words sorted in windows of `sorted` (a power-of-two
//                                        fraction of sigma: the host merges up from it; the device
//                                        may ignore it), 0: nothing known
//   regular_words(PackSellRows words, PackSellRows order, C, int64_t *total)
//                                        words of the regular part: sum over slices of C rows (in
//                                        `order`) of C x the slice's widest row
//   widest_sums(PackSellRows order, C, D, top, std::vector<int64_t> *sums)
//                                        sums[k - 1], 1 <= k <= top: sum over slices (rows in
//                                        `order`) of the words of the slice's widest row when
//                                        rows keep min(len, k) nonzeros
#pragma once
#include "core/build_error.hpp"
#include "core/hybrid.hpp"
#include "packsell.hpp"
#include "packsell_layout.hpp"
#include <algorithm>
#include <cstdint>
#include <vector>

namespace pspmv
{

// The arrays of one int32 per row an executor keeps for the driver.
enum class PackSellRows : int {
  Words = 0, // words per row: of whole rows, then of their first K nonzeros (the layout's)
  Perm  = 1, // the layout's row order
  Order = 2, // a candidate window's row order (automatic sigma)
  Cut   = 3  // words of the first K nonzeros of a candidate's K (automatic sigma)
};
constexpr int kPackSellRowArrays = 4;

// The decisions of one build, made by plan_packsell(); with the executor's Words and Perm
// arrays they define the layout.
struct PackSellPlan {
  int32_t              rows           = 0;
  int32_t              slice_height   = 32; // C
  int32_t              delta_bits     = 30; // D of the value format
  int32_t              scale_exponent = 0;  // values stored times 2^scale_exponent
  int32_t              max_row_length = 0;
  int32_t              sigma          = 1; // the window (automatic sigma resolved)
  int32_t              hybrid_width   = 0; // K
  std::vector<int64_t> length_histogram;   // rows of each length (size max_row_length + 1)
};

namespace detail
{
// The candidate windows of the automatic sigma: 1, C, 2C, 4C, ... up to the first one >= rows
// (or the last one that fits 32 bits).
std::vector<int32_t> packsell_sigma_candidates(int32_t rows, int32_t C);
// The error of a row whose first nonzeros need more words than a slice width holds.
BuildError packsell_row_words_error(int64_t row, int64_t words, int32_t D);
} // namespace detail

// The scale exponent a build or value update stores values with: 0 with scaling none,
// packsell_auto_scale() of the largest finite magnitude with auto; then every value checked at
// it, and the first one in CSR order that overflows or is a nonzero rounded to zero reported
// (ValueRange: its row and column, the remedies naming scaling_option). Exact: 0, nothing
// checked.
template <class X>
BuildError plan_packsell_scale(X &x, const ValueFormat &f, PackSellScaling scaling, const std::string &scaling_option, int32_t *scale)
{
  *scale = 0;
  if (!f.lossy()) return BuildError{};
  double m = 0.0;
  if (scaling == PackSellScaling::Auto) PSPMV_BUILD_TRY(x.max_abs_finite(&m));
  const int32_t s = scaling == PackSellScaling::Auto ? detail::packsell_auto_scale(f, m) : 0;
  int64_t       k = -1;
  PSPMV_BUILD_TRY(x.first_unencodable(f, s, &k));
  if (k >= 0) {
    int32_t row = 0, col = 0;
    double  v = 0.0;
    PSPMV_BUILD_TRY(x.entry(k, &row, &col, &v));
    // the remedies the message names, each checked on every value (only on this error path)
    detail::PackSellRangeRemedies r;
    r.scaling_option = scaling_option;
    int64_t kr       = -1;
    if (scaling == PackSellScaling::None) {
      double mm = 0.0;
      PSPMV_BUILD_TRY(x.max_abs_finite(&mm));
      PSPMV_BUILD_TRY(x.first_unencodable(f, detail::packsell_auto_scale(f, mm), &kr));
      r.auto_scaling = kr < 0;
    }
    for (const ValueFormat &g : detail::packsell_remedy_candidates(f)) {
      PSPMV_BUILD_TRY(x.first_unencodable(g, scaling == PackSellScaling::Auto ? detail::packsell_auto_scale(g, m) : 0, &kr));
      if (kr < 0 && r.formats.size() < 2) r.formats.push_back(g.name());
    }
    return BuildError::value_range(detail::packsell_value_range_error(f, scaling, row, col, v, s, m, r));
  }
  *scale = s;
  return BuildError{};
}

// K in nonzeros for the hybrid option, rows in the layout order `order` (used by auto only):
// none: the longest row; a fixed K: at most the longest row; auto: choose_hybrid_width's rule
// with the regular part counted in words (a row keeps its first K nonzeros and the dummies
// they need, a slice of C rows is as wide as its widest row) over 1 <= K <= the latency cap.
// (Choosing K on whole-row word counts and then cutting rows at K nonzeros instead kept up to
// twice the modelled words where most nonzeros need a dummy; docs/design.md, "Measured
// constants".)
template <class X>
BuildError plan_packsell_width(X &x, const PackSellOptions &opt, const PackSellPlan &p, PackSellRows order, int32_t *K)
{
  const int32_t maxlen = p.max_row_length;
  switch (opt.hybrid.mode) {
  case HybridOption::Mode::None:
    *K = maxlen;
    return BuildError{};
  case HybridOption::Mode::Fixed:
    *K = std::min(opt.hybrid.width, maxlen);
    return BuildError{};
  case HybridOption::Mode::Auto:
    break;
  }
  *K = 0;
  if (maxlen == 0) return BuildError{};
  const int32_t        top = std::min(maxlen, hybrid_width_cap(int64_t(p.rows), x.nnz())); // the largest candidate K
  std::vector<int64_t> sums;
  PSPMV_BUILD_TRY(x.widest_sums(order, p.slice_height, p.delta_bits, top, &sums));
  const int64_t C = p.slice_height;
  *K              = choose_hybrid_width_from_counts(p.length_histogram, packsell_hybrid_cost(opt.value_format, p.rows), [&sums, C](int32_t k) { return C * sums[size_t(k) - 1]; });
  return BuildError{};
}

// The automatic sigma (docs/design.md). Every candidate window is costed as the build would
// store it: K from the rows sorted by whole-row words in its windows, rows then sorted by the
// words of their first K nonzeros (one pass per distinct K), slices padded to their longest
// row, the rest in the tail; bytes at packsell_hybrid_cost: the stored bytes and the cost of
// each row with tail entries (the terms that picked each candidate's K; the fixed tail cost
// would just dilute the comparison). The smallest window within 2% of the cheapest one wins
// (packsell_pick_sigma): a larger window scatters the y writes and loses x locality.
// Executor's Words: whole-row words on entry, unchanged; Order and Cut are overwritten.
template <class X>
BuildError plan_packsell_sigma(X &x, const PackSellOptions &opt, const PackSellPlan &p, int32_t *sigma)
{
  struct Candidate {
    int32_t sigma, K;
    int64_t regular; // stored words, -1 until known
  };
  const int32_t          C = p.slice_height, maxlen = p.max_row_length;
  std::vector<Candidate> cand;
  int32_t                sorted = 0;
  for (int32_t s : detail::packsell_sigma_candidates(p.rows, C)) {
    PSPMV_BUILD_TRY(x.sort_rows(PackSellRows::Words, s, sorted, PackSellRows::Order));
    sorted = s;
    Candidate c{s, 0, -1};
    PSPMV_BUILD_TRY(plan_packsell_width(x, opt, p, PackSellRows::Order, &c.K));
    if (c.K >= maxlen) PSPMV_BUILD_TRY(x.regular_words(PackSellRows::Words, PackSellRows::Order, C, &c.regular)); // no row cut
    cand.push_back(c);
  }
  for (const Candidate &c : cand) {
    if (c.regular >= 0) continue;
    const int32_t K        = c.K;
    int64_t       long_row = -1, long_words = 0; // a row cut at K needs no more words than the whole row
    PSPMV_BUILD_TRY(x.row_words(K, p.delta_bits, PackSellRows::Cut, &long_row, &long_words));
    sorted = 0;
    for (Candidate &d : cand) { // the candidates of this K, windows increasing
      if (d.K != K || d.regular >= 0) continue;
      PSPMV_BUILD_TRY(x.sort_rows(PackSellRows::Cut, d.sigma, sorted, PackSellRows::Order));
      sorted = d.sigma;
      PSPMV_BUILD_TRY(x.regular_words(PackSellRows::Cut, PackSellRows::Order, C, &d.regular));
    }
  }
  const HybridCost            slot_cost = packsell_hybrid_cost(opt.value_format, p.rows);
  const std::vector<int64_t> &hist      = p.length_histogram;
  std::vector<double>         cost;
  for (const Candidate &c : cand) {
    int64_t tail = 0, tail_rows = 0; // exact integers from the histogram
    for (size_t l = size_t(std::max(c.K, 0)) + 1; l < hist.size(); ++l) {
      tail += int64_t(l - size_t(c.K)) * hist[l];
      tail_rows += hist[l];
    }
    cost.push_back(slot_cost.variable_bytes(c.regular, tail, tail_rows));
  }
  *sigma = cand[detail::packsell_pick_sigma(cost)].sigma;
  return BuildError{};
}

// The plan of a build (options checked by the caller, the CSR valid): the scale exponent and
// the range check, words per row, sigma, the rows sorted by whole-row words in their windows
// (the order the automatic K is costed in), K; with K below the longest row the words of the
// first K nonzeros and the rows sorted again by them. On return the executor's Words holds the
// words per row of the layout and Perm its row order.
template <class X>
BuildError plan_packsell(X &x, const PackSellOptions &opt, PackSellPlan *p)
{
  p->rows         = x.rows();
  p->slice_height = opt.slice_height;
  p->delta_bits   = packsell::delta_bits_for(opt.value_format.value_bits());
  PSPMV_BUILD_TRY(plan_packsell_scale(x, opt.value_format, opt.scaling, opt.scaling_option, &p->scale_exponent));
  PSPMV_BUILD_TRY(x.length_histogram(&p->length_histogram));
  const int32_t maxlen = p->max_row_length = p->length_histogram.empty() ? 0 : int32_t(p->length_histogram.size()) - 1;
  int64_t       long_row = -1, long_words = 0;
  PSPMV_BUILD_TRY(x.row_words(maxlen, p->delta_bits, PackSellRows::Words, &long_row, &long_words)); // whole rows
  if (long_row >= 0) return detail::packsell_row_words_error(long_row, long_words, p->delta_bits);
  // sigma auto without nonzeros: every candidate costs 0, the first (1) wins
  p->sigma = opt.sigma != kPackSellSigmaAuto ? opt.sigma : maxlen == 0 ? 1 : 0;
  if (p->sigma == 0) PSPMV_BUILD_TRY(plan_packsell_sigma(x, opt, *p, &p->sigma));
  PSPMV_BUILD_TRY(x.sort_rows(PackSellRows::Words, p->sigma, 0, PackSellRows::Perm));
  PSPMV_BUILD_TRY(plan_packsell_width(x, opt, *p, PackSellRows::Perm, &p->hybrid_width));
  if (p->hybrid_width < maxlen) {
    PSPMV_BUILD_TRY(x.row_words(p->hybrid_width, p->delta_bits, PackSellRows::Words, &long_row, &long_words));
    PSPMV_BUILD_TRY(x.sort_rows(PackSellRows::Words, p->sigma, 0, PackSellRows::Perm));
  }
  return BuildError{};
}

} // namespace pspmv
