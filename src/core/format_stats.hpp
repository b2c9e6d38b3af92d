// Storage statistics every format reports (MatView, benchmarks). PETSc-free.
#pragma once
#include <cstdint>
#include <string>

namespace pspmv
{

struct FormatStats {
  int64_t rows = 0, cols = 0;
  int64_t nnz           = 0; // nonzeros of the pattern (explicit zeros included)
  int64_t stored_slots  = 0; // slots of the regular part (nonzeros + padding + dummies)
  int64_t padding_slots = 0; // slots that hold no nonzero and no dummy
  int64_t dummy_words   = 0; // PackSELL words that only carry a long column jump
  int64_t tail_nnz      = 0; // nonzeros in the COO tail of the hybrid split
  int32_t hybrid_width  = 0; // K of the hybrid split (longest row when there is no tail)
  int32_t sigma         = 0; // PackSELL: sort window of the layout as built (0 for RgCSR)
  int64_t gap_entries   = 0; // PackSELL: entries of the column gap table (0: no gaps)
  int64_t ordered_rows  = 0; // rows stored in another order than the matrix's (the ordering option)
  int64_t stored_bytes  = 0; // every array a product reads or writes besides x and y, in bytes (an
                             // ordered layout: its permutation and work vectors too)

  double bytes_per_nnz() const { return nnz ? double(stored_bytes) / double(nnz) : 0.0; }
  // padding ratio: stored slots per nonzero of the regular part (1.0 = no padding)
  double padding_ratio() const
  {
    const int64_t reg = nnz - tail_nnz;
    return reg ? double(stored_slots) / double(reg) : 1.0;
  }
  double      tail_share() const { return nnz ? double(tail_nnz) / double(nnz) : 0.0; }
  std::string to_string() const; // one line per field, "name: value", for MatView (sigma if > 0)
};

} // namespace pspmv
