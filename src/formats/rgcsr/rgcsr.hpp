// Row-grouped CSR (RgCSR; seed: "Row-grouped CSR", Oberhuber et al.). PETSc-free.
//
// Rows are cut into groups of G consecutive rows (G a multiple of 32). Inside group g the
// k-th nonzero of row r0+i is stored at groupPointers[g] + k*G + i (column-major inside the
// group), padded to the longest row of the group; the last group is padded to G rows too.
// rowLength[r] holds the true number of regular nonzeros of row r, so a product never
// multiplies padding. Padding slots hold value 0 and column 0 (an in-range column).
// With a hybrid split of width K, only the first K nonzeros of a row are in the groups; the
// rest are in the COO tail.
#pragma once
#include "core/csr.hpp"
#include "core/format_stats.hpp"
#include "core/hybrid.hpp"
#include "core/layout_ordering.hpp"
#include <cstdint>
#include <vector>

namespace pspmv
{

// Hybrid cost model of RgCSR: a slot is an FP64 value + an int32 column (padding included),
// a tail entry row + column + value. No fixed tail cost: the RgCSR loop pays two dependent
// memory latencies per 4 slots, so on small matrices a tail that takes the long rows beats
// walking them (docs/design.md, "Measured constants").
constexpr HybridCost kRgCsrHybridCost{12.0, 16.0, 0.0};

struct RgCsrOptions {
  int32_t        group_size = 32;                    // G: multiple of 32 in [32, 1024]
  HybridOption   hybrid;                             // default auto
  LayoutOrdering ordering = LayoutOrdering::Natural; // format_module.hpp; applied by the glue
};

struct RgCsrMatrix {
  int32_t              rows = 0, cols = 0;
  int32_t              group_size   = 32;
  int32_t              hybrid_width = 0; // K (longest row length when the tail is empty)
  std::vector<int64_t> group_pointers;   // ngroups+1 slot offsets
  std::vector<int32_t> row_length;       // rows: regular nonzeros of each row (<= K)
  std::vector<int32_t> columns;          // group_pointers.back() slots
  std::vector<double>  values;           // group_pointers.back() slots
  CooTail              tail;

  int32_t     num_groups() const { return static_cast<int32_t>(group_pointers.size()) - 1; }
  FormatStats stats() const;
};

// Builds the layout from A (checked with check_csr). Throws FormatError for a group size
// that is not a positive multiple of 32 or a fixed hybrid width < 1.
RgCsrMatrix build_rgcsr(const CsrView &A, const RgCsrOptions &opt);
// Same pattern, new values: rewrites values in place (and the tail), no layout rebuild.
// Throws FormatError if A's shape or nnz differs from the one M was built from.
void update_rgcsr_values(const CsrView &A, RgCsrMatrix &M);
// y = A x or y = y + A x (host reference kernel; never touches padding).
void rgcsr_spmv(const RgCsrMatrix &M, const double *x, double *y, bool add);
// d[r] = A(r,r) for r < min(rows, cols) (0 where the pattern has no diagonal entry).
void rgcsr_diagonal(const RgCsrMatrix &M, double *d);
// Nonzeros of the regular part (sum of row_length; the tail holds the rest).
int64_t rgcsr_regular_nnz(const RgCsrMatrix &M);

namespace detail
{
// The option checks of build_rgcsr (FormatError with its messages), shared with the device
// build (rgcsr_device_build.cu).
void check_rgcsr_options(const RgCsrOptions &opt);
} // namespace detail

} // namespace pspmv
