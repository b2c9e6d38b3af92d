// Hybrid split (load-balancing seed, Ginkgo's "hybrid" format): the first K nonzeros of every
// row go to the regular (grouped/sliced) part, the rest to a COO tail processed by a
// load-balanced kernel. PETSc-free.
#pragma once
#include "csr.hpp"
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace pspmv
{

// What the user asked for: -mat_<fmt>_hybrid auto|none|<K>.
struct HybridOption {
  enum class Mode : int {
    None  = 0,
    Auto  = 1,
    Fixed = 2
  } mode        = Mode::Auto;
  int32_t width = 0; // K when mode == Fixed (>= 1)
  // Parses "auto", "none" or a positive integer; throws FormatError otherwise.
  static HybridOption parse(const std::string &s);
  std::string         name() const;
};

// Cost model for choosing K: bytes a product moves per regular slot and per tail entry.
struct HybridCost {
  double slot_bytes; // one stored slot of the regular part (value + index, padding included)
  double tail_bytes; // one COO tail entry (row + column + value)
  // What having a tail at all costs a product, in bytes of equal time: the tail's warps run
  // after (or wait for) the regular part, and a large tail needs a launch of its own.
  double tail_fixed_bytes = 0;
  // When > 0: a K that leaves a tail is at most this (K = longest row, no tail, stays
  // allowed up to the latency cap). Used by PackSELL on small matrices, see
  // kLatencyBoundRows.
  int32_t tail_width_cap = 0;
  // What each row with tail entries costs besides them, in bytes of equal time: the tail
  // kernel's segmented sum ends the row's run in an atomicAdd on y (a read-modify-write at
  // the L2) and a batch with many short runs does many of them.
  double tail_row_bytes = 0;

  // Modelled bytes of one product with `slots` regular slots and `tail` tail entries in
  // `tail_rows` rows, without the fixed cost of having a tail.
  double variable_bytes(int64_t slots, int64_t tail, int64_t tail_rows) const { return slot_bytes * double(slots) + tail_bytes * double(tail) + tail_row_bytes * double(tail_rows); }
};

// Small matrices (rows <= kLatencyBoundRows, where the kernels run 2-8 threads per row and a
// product is one latency-bound wave) cap a PackSELL K that leaves a tail anyway at
// kLatencyBoundTailWidth: a row's threads walk its slice in rounds of 4T words, each round a
// dependent memory latency, while the byte model only sees the tail's 16 B per entry.
// Matrices whose rows all fit keep K = longest row (no tail). Measurements: docs/design.md,
// "Measured constants".
constexpr int64_t kLatencyBoundRows      = 65536;
constexpr int32_t kLatencyBoundTailWidth = 32;

// The fixed cost of having a tail, used by PackSELL, in bytes of equal time (4 MiB: about a
// microsecond of device bandwidth): on a small matrix a tail of a few entries saves kilobytes
// of padding but costs a launch. Fitted before the tail's own kernel started under
// programmatic dependent launch (docs/design.md, "Measured constants").
constexpr double kTailFixedBytes = 4.0 * 1024 * 1024;

// The cost of a row with tail entries besides its entries' 16 B, used by PackSELL: 32 B (a
// tail row costs an atomic and a segment boundary that the byte model does not see; fitted on
// a tail of millions of one-entry rows; docs/design.md, "Measured constants").
constexpr double kTailRowBytes = 32.0;

// Chooses K for row lengths len[0..rows) whose regular part is padded per block of `block`
// consecutive rows (group size G for RgCSR; PackSELL counts its regular part in words and
// uses the overload below). Rule (documented in docs/design.md):
// K minimises  slot_bytes * sum_blocks block * min(K, maxlen_block)
//            + tail_bytes * sum_rows max(0, len - K) + tail_row_bytes * #(rows with len > K)
//            + (tail_fixed_bytes if any row > K),
// the modelled bytes of one SpMV, over 1 <= K <= min(longest row, hybrid_width_cap(len)),
// and, with cost.tail_width_cap > 0, over K <= tail_width_cap or K = longest row (no tail);
// ties go to the larger K (smaller tail); K >= 1 (0 only when every row is empty). Evaluated
// for every candidate K in O(rows + longest row). Returns min(longest row, cap) when no
// smaller K is cheaper. Throws FormatError for block < 1 or a negative length.
int32_t choose_hybrid_width(const std::vector<int32_t> &len, int32_t block, HybridCost cost);

// The same rule for a regular part whose slots are not simply K per row (PackSELL: a row's
// first K nonzeros take K words plus their dummies): regular_slots(K) gives
// sum_blocks block * (slots of the block's widest row), called for each candidate
// 1 <= K <= min(longest row, hybrid_width_cap(len)); it must not decrease with K. len are the
// row lengths in nonzeros (the tail is counted in nonzeros). Throws FormatError for a negative
// length.
int32_t choose_hybrid_width(const std::vector<int32_t> &len, HybridCost cost, const std::function<int64_t(int32_t)> &regular_slots);

// The same rules from counts instead of row lengths (the device builders compute the counts on
// the GPU and copy only these small arrays back; the vector overloads above call these, so
// both give the same K by construction).
// hist[l]: rows of length l, for 0 <= l <= longest row (hist.size() = longest row + 1; empty
// or {rows} when every row is empty). block_max_hist[m]: blocks whose longest row is m (same
// size as hist). The first form is choose_hybrid_width(len, block, cost), the second
// choose_hybrid_width(len, cost, regular_slots). Throws FormatError for block < 1.
int32_t choose_hybrid_width_from_counts(const std::vector<int64_t> &hist, const std::vector<int64_t> &block_max_hist, int32_t block, HybridCost cost);
int32_t choose_hybrid_width_from_counts(const std::vector<int64_t> &hist, HybridCost cost, const std::function<int64_t(int32_t)> &regular_slots);
// hybrid_width_cap for `rows` rows of `nnz` nonzeros in all (kHybridMinCap for no rows).
int32_t hybrid_width_cap(int64_t rows, int64_t nnz);

// Latency cap of the automatic width: a device thread walks the K slots of its row serially,
// so the critical path grows with K while the storage model does not see it (bundle1: K=1600
// for a mean of 73). Cap = max(kHybridMinCap, ceil(kHybridMeanFactor * mean length)), the mean
// over all len entries (empty rows included); kHybridMinCap for no rows.
constexpr int32_t kHybridMinCap     = 32;
constexpr int64_t kHybridMeanFactor = 4;
int32_t           hybrid_width_cap(const std::vector<int32_t> &len);

// The COO tail: entries sorted by row, then by column (CSR order), FP64 values.
struct CooTail {
  std::vector<int32_t> row;
  std::vector<int32_t> col;
  std::vector<double>  val;
  int64_t              nnz() const { return static_cast<int64_t>(row.size()); }
};

// Tail of A for width K: every nonzero at position >= K inside its row. Shapes checked.
CooTail build_coo_tail(const CsrView &A, int32_t K);
// Rewrites tail.val from A's values (same pattern, same K): value-only re-assembly.
void update_coo_tail_values(const CsrView &A, int32_t K, CooTail &tail);
// y += tail * x (host reference of the load-balanced kernel).
void coo_tail_spmv_add(const CooTail &tail, const double *x, double *y);
// d[r] = the tail's entry (r, r) for r < n, where the tail has one (d[0..n) otherwise untouched).
void coo_tail_diagonal(const CooTail &tail, int32_t n, double *d);

} // namespace pspmv
