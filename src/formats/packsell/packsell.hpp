// PackSELL (seed: "PackSELL"): SELL-C-sigma whose column deltas and reduced-precision values
// are packed into one 32-bit word. PETSc-free.
//
// Word layout (W = 32):  [ value : V bits | delta : D bits | flag : 1 bit ],  V + D + 1 = 32,
// V = ValueFormat::value_bits() (16 for FP16/BF16, 9+m for E8Mm). Exact mode uses D = 30 and
// an empty value field; the FP64 value of each slot is then in exact_values.
// flag 1: a nonzero; its column is the previous column of the row plus delta (the first
//         nonzero of a row counts from column 0).
// flag 0: a dummy; the upper 31 bits hold a column jump that did not fit in D bits. The real
//         nonzero follows with delta 0. Padding words are 0: a dummy with jump 0.
// Column gaps (chosen per matrix: when they make the layout smaller): a per-slice table of
// column steps that every row of the slice takes at a word position, added to the deltas
// (packsell_layout.hpp), so the long steps of wide stencils need no dummy words.
// Rows are sorted by word count (longest first, stable) inside windows of sigma rows;
// perm[i] is the original row of sorted row i; with kPackSellSigmaAuto the builder chooses
// sigma, see build_packsell (the default is 1: docs/design.md says why). Slices of C sorted rows are stored column-major: word k
// of sorted row s*C+i is at slice_pointers[s] + k*C + i.
// The default value format is exact (FP64 values: products as exact as CSR's); the lossy
// formats (fp16, bf16, e8m<m>) are used only when asked for, and never drop a value silently:
// a value that overflows or a nonzero that would round to zero is a ValueRangeError.
// Values are scaled by 2^scale_exponent before encoding (0 unless asked for); a product
// multiplies the accumulated FP64 sum by 2^-scale_exponent, |scale_exponent| <=
// kMaxScaleExponent so that this factor is a normal double (exact unless the result is
// subnormal, then one rounding).
#pragma once
#include "core/csr.hpp"
#include "core/format_stats.hpp"
#include "core/hybrid.hpp"
#include "core/layout_ordering.hpp"
#include "core/value_codec.hpp"
#include <cstdint>
#include <string>
#include <vector>

namespace pspmv
{

enum class PackSellScaling : int {
  None = 0,
  Auto = 1
};

// Hybrid cost model of PackSELL for a matrix of `rows` rows: a slot is one 32-bit word (plus
// its FP64 value in Exact mode), a tail entry row + column + value, a fixed cost for having a
// tail, on small matrices a cap on a K that leaves a tail (kLatencyBoundRows), and a cost per
// row with tail entries (kTailRowBytes).
inline HybridCost packsell_hybrid_cost(const ValueFormat &f, int64_t rows)
{
  return HybridCost{f.lossy() ? 4.0 : 12.0, 16.0, kTailFixedBytes, rows <= kLatencyBoundRows ? kLatencyBoundTailWidth : 0, kTailRowBytes};
}

// PackSellOptions::sigma asking the builder to choose the window (PETSC_DECIDE in PETSc).
constexpr int32_t kPackSellSigmaAuto = 0;

// Bound of |PackSellMatrix::scale_exponent|: 2^-s stays a normal double (2^-1022 is the
// smallest), so products and diagonals multiply by a nonzero power of two on host and device.
constexpr int32_t kMaxScaleExponent = 1022;

struct PackSellOptions {
  int32_t         slice_height = 32;                   // C: multiple of 32 in [32, 1024]
  int32_t         sigma        = 1;                    // sort window in rows: 1 (no sort, the default), kPackSellSigmaAuto or a multiple of C
  ValueFormat     value_format = ValueFormat::exact(); // lossless; lossy formats only when asked
  PackSellScaling scaling      = PackSellScaling::None;
  HybridOption    hybrid; // default auto
  // Column gaps (packsell_layout.hpp): true stores them where they make the layout smaller,
  // false never.
  bool column_gaps = true;
  // The order the layout stores rows and columns in (format_module.hpp; applied by the glue).
  LayoutOrdering ordering = LayoutOrdering::Natural;
  // How the user asks for the scaling, named by range errors' remedies: the PETSc glue sets it
  // with the options prefix of the matrix or solver ("-sub_mat_packsell_scaling").
  std::string scaling_option = "-mat_packsell_scaling";
};

struct PackSellMatrix {
  int32_t               rows = 0, cols = 0;
  int32_t               slice_height = 32;
  int32_t               sigma        = 1; // window of this layout (auto resolved): 1 or a multiple of C
  ValueFormat           value_format;
  int32_t               delta_bits     = 30;                      // D (30: Exact, the default value_format)
  int32_t               scale_exponent = 0;                       // values stored as a * 2^scale_exponent, |.| <= kMaxScaleExponent
  PackSellScaling       scaling        = PackSellScaling::None;   // as asked at build time (value updates)
  std::string           scaling_option = "-mat_packsell_scaling"; // PackSellOptions::scaling_option of the build
  int32_t               hybrid_width   = 0;                       // K in nonzeros (longest row when the tail is empty)
  std::vector<int64_t>  slice_pointers;                           // nslices+1 word offsets
  std::vector<int32_t>  perm;                                     // rows: original row of each sorted row
  std::vector<uint32_t> words;                                    // slice_pointers.back() words
  std::vector<double>   exact_values;                             // words.size() values in Exact mode, else empty
  std::vector<uint32_t> gaps;                                     // column gaps (packsell_layout.hpp): words.size() / C entries, or empty: none
  CooTail               tail;                                     // values rounded through value_format, unscaled
                                                                  // (2^-scale_exponent already applied): no inv_scale

  int32_t     num_slices() const { return static_cast<int32_t>(slice_pointers.size()) - 1; }
  FormatStats stats() const;
};

// Builds the layout. With sigma kPackSellSigmaAuto the window is chosen from the row word
// counts (rule in docs/design.md): among 1, C, 2C, 4C, ... up to the first power-of-two
// multiple of C >= rows, the smallest whose modelled bytes (regular words with the hybrid
// width K the build would choose for it, plus tail entries) are within 2% of the cheapest;
// O(nnz + rows log(rows/C)) once, and again for each further K the candidates need (rows cut
// at K). The result is in PackSellMatrix::sigma. Throws FormatError for a slice height that
// is not a multiple of 32 in [32, 1024], a sigma that is neither auto, 1 nor a positive
// multiple of the slice height, or a bad hybrid width; ValueRangeError (row and column of A in
// its fields, the value and the remedy in its message: a wider format, or scaling auto) when
// a finite value overflows the value format at the scale exponent, or a nonzero would be
// stored as zero: with scaling none, or with auto when the matrix spans more magnitudes than
// the format holds (auto scales by the largest magnitude; one 1e300 among ordinary values
// flushes them in fp16 and bf16).
PackSellMatrix build_packsell(const CsrView &A, const PackSellOptions &opt);
// Same pattern, new values: re-encodes values only, keeping perm, sigma and K (never
// re-chosen). Same ValueRangeErrors as the build (M is then unchanged); with scaling auto the
// exponent is chosen afresh from the new values. Throws FormatError if the shape, nnz or
// pattern differs.
void update_packsell_values(const CsrView &A, PackSellMatrix &M);
// y = A x or y = y + A x with values decoded to FP64 and accumulated in FP64.
void packsell_spmv(const PackSellMatrix &M, const double *x, double *y, bool add);
// y = A x with FP32 vectors (the host twin of the mixed-precision inner solvers' product):
// values decoded to FP32 (Exact: the FP64 value rounded to FP32), summed in FP32 in word order,
// times 2^-scale_exponent; then the tail's values rounded to FP32 added, each row's in the order
// of packsell_lowp_tail.hpp (CSR order for short tails, 32 interleaved partial sums for long ones).
void packsell_spmv_f32(const PackSellMatrix &M, const float *x, float *y);
// d[r] = decoded A(r,r) for r < min(rows, cols) (0 where the pattern has no diagonal).
void packsell_diagonal(const PackSellMatrix &M, double *d);

// The checks and pieces of the build driver (packsell_plan.hpp) outside its templates, in
// packsell_checks.cpp: the host and the device build use them, so both take the same decisions
// and report the same errors by construction.
namespace detail
{
// The option checks of build_packsell (FormatError with its messages).
void check_packsell_options(const PackSellOptions &opt);
// The exponent scaling auto stores values with when the largest finite magnitude is m.
int32_t packsell_auto_scale(const ValueFormat &f, double m);
// The remedies of a matrix that format f cannot hold, each checked on every value of the matrix
// (packsell_plan.hpp): scaling auto with f (asked only when the scaling is none), and up to two
// of bf16, e8m14, e8m22 (wider than f or of another exponent range) with the same scaling. The
// value format exact always holds the matrix.
struct PackSellRangeRemedies {
  bool                     auto_scaling = false;
  std::vector<std::string> formats;
  std::string              scaling_option; // how the user asks for scaling auto (PackSellOptions)
};
// The candidate formats of PackSellRangeRemedies::formats, in the order they are named.
std::vector<ValueFormat> packsell_remedy_candidates(const ValueFormat &f);
// The ValueRangeError build_packsell throws for value v at (row, col) of A that format f
// cannot hold at exponent s (overflow, or a nonzero rounded to zero; m: the largest finite
// magnitude of A with scaling auto), naming the remedies r (and always the value format exact).
ValueRangeError packsell_value_range_error(const ValueFormat &f, PackSellScaling scaling, int32_t row, int32_t col, double v, int32_t s, double m, const PackSellRangeRemedies &r);
// The automatic sigma's pick among candidates of modelled bytes cost[] (in candidate order
// 1, C, 2C, 4C, ...): the first within 2% of the cheapest.
size_t packsell_pick_sigma(const std::vector<double> &cost);
// The most the regular part's bytes may be, as a share of those without gaps, for the layout
// to take column gaps: the gap table costs a load per word position, so a product with gaps is
// faster only when they save more than about 13% of the bytes (docs/benchmarks.md, "Column
// gaps": H100, lap7 128^3 fp16 8% fewer bytes and 3% slower, lap27 128^3 0.5% and 5% slower,
// lap7 200^3 25% and 14% faster).
constexpr double kPackSellGapsMaxBytesRatio = 0.85;
// Whether the layout takes column gaps: its regular part (words, their exact values in Exact
// mode, the gap table of gapped_words / C entries) is at most kPackSellGapsMaxBytesRatio of its
// bytes without them (plain_words); the build then stores gaps, else none.
bool packsell_gaps_pay(int64_t plain_words, int64_t gapped_words, int32_t C, bool exact);
} // namespace detail

} // namespace pspmv
