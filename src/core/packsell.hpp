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
// Rows are sorted by word count (longest first, stable) inside windows of sigma rows;
// perm[i] is the original row of sorted row i; with kPackSellSigmaAuto the builder chooses
// sigma, see build_packsell (the default is 1: docs/design.md says why). Slices of C sorted rows are stored column-major: word k
// of sorted row s*C+i is at slice_pointers[s] + k*C + i.
// Values are scaled by 2^scale_exponent before encoding (0 unless asked for); a product
// multiplies the accumulated FP64 sum by 2^-scale_exponent.
#pragma once
#include "csr.hpp"
#include "format_stats.hpp"
#include "hybrid.hpp"
#include "value_codec.hpp"
#include <cstdint>
#include <vector>

namespace pspmv {

enum class PackSellScaling : int { None = 0, Auto = 1 };

// Hybrid cost model of PackSELL for a matrix of `rows` rows: a slot is one 32-bit word (plus
// its FP64 value in Exact mode), a tail entry row + column + value, a fixed cost for having a
// tail, on small matrices a cap on a K that leaves a tail (kLatencyBoundRows), and a cost per
// row with tail entries (kTailRowBytes).
inline HybridCost packsell_hybrid_cost(const ValueFormat &f, int64_t rows) {
  return HybridCost{f.lossy() ? 4.0 : 12.0, 16.0, kTailFixedBytes,
                    rows <= kLatencyBoundRows ? kLatencyBoundTailWidth : 0, kTailRowBytes};
}

// PackSellOptions::sigma asking the builder to choose the window (PETSC_DECIDE in PETSc).
constexpr int32_t kPackSellSigmaAuto = 0;

struct PackSellOptions {
  int32_t slice_height = 32;   // C: multiple of 32 in [32, 1024]
  int32_t sigma = 1; // sort window in rows: 1 (no sort, the default), kPackSellSigmaAuto or a multiple of C
  ValueFormat value_format = ValueFormat::fp16();
  PackSellScaling scaling = PackSellScaling::None;
  HybridOption hybrid;         // default auto
};

struct PackSellMatrix {
  int32_t rows = 0, cols = 0;
  int32_t slice_height = 32;
  int32_t sigma = 1;                   // window of this layout (auto resolved): 1 or a multiple of C
  ValueFormat value_format;
  int32_t delta_bits = 30;             // D (30: Exact, the default value_format)
  int32_t scale_exponent = 0;          // values stored as a * 2^scale_exponent
  PackSellScaling scaling = PackSellScaling::None; // as asked at build time (value updates)
  int32_t hybrid_width = 0;            // K in nonzeros (longest row when the tail is empty)
  std::vector<int64_t> slice_pointers; // nslices+1 word offsets
  std::vector<int32_t> perm;           // rows: original row of each sorted row
  std::vector<uint32_t> words;         // slice_pointers.back() words
  std::vector<double> exact_values;    // words.size() values in Exact mode, else empty
  CooTail tail;                        // values rounded through value_format, unscaled
                                       // (2^-scale_exponent already applied): no inv_scale

  int32_t num_slices() const { return static_cast<int32_t>(slice_pointers.size()) - 1; }
  FormatStats stats() const;
};

// Builds the layout. With sigma kPackSellSigmaAuto the window is chosen from the row word
// counts (rule in docs/design.md): among 1, C, 2C, 4C, ... up to the first power-of-two
// multiple of C >= rows, the smallest whose modelled bytes (regular words with the hybrid
// width K the build would choose for it, plus tail entries) are within 2% of the cheapest;
// O(nnz + rows log(rows/C)) once, and again for each further K the candidates need (rows cut
// at K). The result is in PackSellMatrix::sigma. Throws FormatError for a slice height that
// is not a multiple of 32 in [32, 1024], a sigma that is neither auto, 1 nor a positive
// multiple of the slice height, or a bad hybrid width; ValueRangeError (naming row, column
// and value, and the remedy: a wider format or scaling auto) when a finite value overflows
// the value format.
PackSellMatrix build_packsell(const CsrView &A, const PackSellOptions &opt);
// Same pattern, new values: re-encodes values only, keeping perm, sigma and K (never
// re-chosen). Same errors for overflow; with scaling auto the exponent is chosen afresh from
// the new values. Throws FormatError if the shape, nnz or pattern differs.
void update_packsell_values(const CsrView &A, PackSellMatrix &M);
// y = A x or y = y + A x with values decoded to FP64 and accumulated in FP64.
void packsell_spmv(const PackSellMatrix &M, const double *x, double *y, bool add);
// d[r] = decoded A(r,r) for r < min(rows, cols) (0 where the pattern has no diagonal).
void packsell_diagonal(const PackSellMatrix &M, double *d);

} // namespace pspmv
