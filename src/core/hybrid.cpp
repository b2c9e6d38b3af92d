// Hybrid split: option parsing, the cost rule that picks K, and the COO tail.
#include "hybrid.hpp"
#include "layout_util.hpp"
#include <algorithm>
#include <functional>
#include <limits>

namespace pspmv
{

HybridOption HybridOption::parse(const std::string &s)
{
  HybridOption o;
  if (s == "auto") {
    o.mode = Mode::Auto;
    return o;
  }
  if (s == "none") {
    o.mode = Mode::None;
    return o;
  }
  bool    digits = !s.empty() && s.size() <= 10 && s[0] != '0';
  int64_t k      = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') {
      digits = false;
      break;
    }
    k = 10 * k + (ch - '0');
  }
  if (!digits || k < 1 || k > INT32_MAX) throw FormatError("hybrid option '" + s + "' is not valid: use auto, none, or a positive integer width K");
  o.mode  = Mode::Fixed;
  o.width = static_cast<int32_t>(k);
  return o;
}

std::string HybridOption::name() const
{
  switch (mode) {
  case Mode::None:
    return "none";
  case Mode::Auto:
    return "auto";
  case Mode::Fixed:
    return std::to_string(width);
  }
  return "unknown";
}

int32_t hybrid_width_cap(int64_t n, int64_t sum)
{
  if (n <= 0) return kHybridMinCap;
  const int64_t cap = (kHybridMeanFactor * sum + n - 1) / n; // ceil(4 * mean), no rounding
  return int32_t(std::max<int64_t>(kHybridMinCap, std::min<int64_t>(cap, INT32_MAX)));
}

int32_t hybrid_width_cap(const std::vector<int32_t> &len)
{
  int64_t sum = 0;
  for (int32_t l : len) sum += l;
  return hybrid_width_cap(int64_t(len.size()), sum);
}

namespace
{
// hist[l] = rows of length l (size longest row + 1); FormatError for a negative length.
std::vector<int64_t> length_histogram(const std::vector<int32_t> &len)
{
  int32_t maxlen = 0;
  for (int32_t l : len) {
    if (l < 0) throw FormatError("hybrid width: row lengths must be non-negative");
    maxlen = std::max(maxlen, l);
  }
  std::vector<int64_t> hist(size_t(maxlen) + 1, 0);
  for (int32_t l : len) hist[size_t(l)] += 1;
  return hist;
}
} // namespace

int32_t choose_hybrid_width(const std::vector<int32_t> &len, int32_t block, HybridCost cost)
{
  if (block < 1) throw FormatError("hybrid width: block size must be positive");
  const std::vector<int64_t> hist = length_histogram(len);
  std::vector<int64_t>       block_max_hist(hist.size(), 0);
  const size_t               n = len.size();
  for (size_t b0 = 0; b0 < n; b0 += size_t(block)) {
    int32_t m = 0;
    for (size_t i = b0; i < std::min(n, b0 + size_t(block)); ++i) m = std::max(m, len[i]);
    block_max_hist[size_t(m)] += 1;
  }
  return choose_hybrid_width_from_counts(hist, block_max_hist, block, cost);
}

int32_t choose_hybrid_width_from_counts(const std::vector<int64_t> &hist, const std::vector<int64_t> &block_max_hist, int32_t block, HybridCost cost)
{
  if (block < 1) throw FormatError("hybrid width: block size must be positive");
  if (block_max_hist.size() != hist.size()) throw FormatError("hybrid width: the block maxima histogram must be as long as the row length histogram");
  const int32_t maxlen = hist.empty() ? 0 : int32_t(hist.size()) - 1;
  // slots_at[K] = sum_blocks block * min(K, maxlen_block): blocks_reaching[k] (blocks whose
  // longest row >= k) is the difference between consecutive K, so all K cost O(rows + maxlen).
  std::vector<int64_t> blocks_reaching(size_t(maxlen) + 2, 0), slots_at(size_t(maxlen) + 1, 0);
  for (size_t m = 0; m < block_max_hist.size(); ++m) blocks_reaching[m] += block_max_hist[m];
  for (int32_t k = maxlen - 1; k >= 0; --k) blocks_reaching[size_t(k)] += blocks_reaching[size_t(k) + 1];
  for (int32_t k = 1; k <= maxlen; ++k) slots_at[size_t(k)] = slots_at[size_t(k) - 1] + int64_t(block) * blocks_reaching[size_t(k)];
  return choose_hybrid_width_from_counts(hist, cost, [&slots_at](int32_t K) { return slots_at[size_t(K)]; });
}

int32_t choose_hybrid_width(const std::vector<int32_t> &len, HybridCost cost, const std::function<int64_t(int32_t)> &regular_slots)
{
  return choose_hybrid_width_from_counts(length_histogram(len), cost, regular_slots);
}

int32_t choose_hybrid_width_from_counts(const std::vector<int64_t> &hist, HybridCost cost, const std::function<int64_t(int32_t)> &regular_slots)
{
  int32_t maxlen = 0;
  int64_t rows = 0, sum = 0;
  for (size_t l = 0; l < hist.size(); ++l) {
    if (hist[l] != 0) maxlen = int32_t(l);
    rows += hist[l];
    sum += int64_t(l) * hist[l];
  }
  if (maxlen == 0) return 0;
  // rows_longer[k] = rows with len > k: the tail grows by it from K = k + 1 to K = k.
  std::vector<int64_t> rows_longer(size_t(maxlen) + 1, 0);
  for (int32_t k = maxlen - 1; k >= 0; --k) rows_longer[size_t(k)] = rows_longer[size_t(k) + 1] + hist[size_t(k) + 1];

  // Latency cap: one thread walks up to K slots of its row serially, so K may not exceed
  // max(32, ceil(4 * mean length)) (mean over all rows, empty ones included).
  const int32_t top  = std::min(maxlen, hybrid_width_cap(rows, sum));
  int64_t       tail = 0; // entries past K = top
  for (int32_t K = maxlen - 1; K >= top; --K) tail += rows_longer[size_t(K)];
  const auto cost_of = [&](int32_t K) { return cost.variable_bytes(regular_slots(K), tail, rows_longer[size_t(K)]) + (tail > 0 ? cost.tail_fixed_bytes : 0.0); };
  // With a tail width cap, a K that leaves a tail must be <= the cap.
  const auto allowed = [&](int32_t K) { return cost.tail_width_cap <= 0 || K == maxlen || K <= cost.tail_width_cap; };
  // Costs of every K from top down; keep a smaller K only if strictly cheaper, so ties go to
  // the larger K. K >= 1: the regular format stays the main one.
  double  best_cost = allowed(top) ? cost_of(top) : std::numeric_limits<double>::infinity();
  int32_t best      = top;
  for (int32_t K = top - 1; K >= 1; --K) {
    tail += rows_longer[size_t(K)];
    if (!allowed(K)) continue;
    const double c = cost_of(K);
    if (c < best_cost) {
      best_cost = c;
      best      = K;
    }
  }
  return best;
}

namespace
{
int64_t tail_count(const CsrView &A, int32_t K)
{
  int64_t n = 0;
  for (int32_t r = 0; r < A.rows; ++r) n += std::max(0, A.row_length(r) - K);
  return n;
}
} // namespace

CooTail build_coo_tail(const CsrView &A, int32_t K)
{
  check_csr(A);
  if (K < 0) throw FormatError("hybrid width must be non-negative, got " + std::to_string(K));
  return detail::coo_tail_of(A, K);
}

CooTail detail::coo_tail_of(const CsrView &A, int32_t K)
{
  CooTail       t;
  const int64_t n = tail_count(A, K);
  t.row.reserve(size_t(n));
  t.col.reserve(size_t(n));
  t.val.reserve(size_t(n));
  for (int32_t r = 0; r < A.rows; ++r)
    for (int32_t k = A.rowptr[r] + K; k < A.rowptr[r + 1]; ++k) {
      t.row.push_back(r);
      t.col.push_back(A.colidx[k]);
      t.val.push_back(A.values[k]);
    }
  return t;
}

void update_coo_tail_values(const CsrView &A, int32_t K, CooTail &tail)
{
  if (K < 0) throw FormatError("hybrid width must be non-negative, got " + std::to_string(K));
  if (tail_count(A, K) != tail.nnz())
    throw FormatError("value update: the matrix has " + std::to_string(tail_count(A, K)) + " tail entries for width " + std::to_string(K) + " but the tail holds " + std::to_string(tail.nnz()) + "; the nonzero pattern changed, rebuild");
  // Check the whole pattern before writing, so a refused update leaves the tail intact.
  size_t t = 0;
  for (int32_t r = 0; r < A.rows; ++r)
    for (int32_t k = A.rowptr[r] + K; k < A.rowptr[r + 1]; ++k, ++t)
      if (tail.row[t] != r || tail.col[t] != A.colidx[k]) throw FormatError("value update: row " + std::to_string(r) + ": the nonzero pattern changed, rebuild the layout");
  t = 0;
  for (int32_t r = 0; r < A.rows; ++r)
    for (int32_t k = A.rowptr[r] + K; k < A.rowptr[r + 1]; ++k, ++t) tail.val[t] = A.values[k];
}

void coo_tail_spmv_add(const CooTail &tail, const double *x, double *y)
{
  // Segmented sum: each row's run is summed first and added to y once, as the device
  // kernel does at segment ends, so y's magnitude does not round every tail entry.
  const size_t n = tail.row.size();
  for (size_t t = 0; t < n;) {
    const int32_t r   = tail.row[t];
    double        sum = 0.0;
    for (; t < n && tail.row[t] == r; ++t) sum += tail.val[t] * x[tail.col[t]];
    y[r] += sum;
  }
}

void coo_tail_diagonal(const CooTail &tail, int32_t n, double *d)
{
  for (size_t t = 0; t < tail.row.size(); ++t)
    if (tail.row[t] == tail.col[t] && tail.row[t] < n) d[tail.row[t]] = tail.val[t];
}

} // namespace pspmv
