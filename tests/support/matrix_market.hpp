// The one Matrix Market reader of the tests and bench/: coordinate real/integer/pattern,
// general/symmetric/skew-symmetric, plain or compressed (.gz through zlib, .xz and .bz2
// through xz/bzip2 -dc). Our own rather than a library's: Eigen's loadMarket reads neither
// .gz nor pattern values nor expands symmetric storage, CHOLMOD's reader would need
// libsuitesparse-dev, and the GPU machine builds with no Debian package beyond CUDA.
#pragma once
#include "csr_matrix.hpp"
#include <string>

namespace pspmv_test
{

// Deterministic pseudo-random nonzero value for entry (row, col): mixed signs, magnitudes
// from 1e-2 to 2e2.
double pattern_value(int32_t row, int32_t col);

struct MatrixMarketOptions {
  // Value of the stored entry (row, col) (0-based) of a pattern file; the mirrored entry of a
  // symmetric file gets the same value, of a skew-symmetric one its negative.
  double (*pattern)(int32_t row, int32_t col) = pattern_value;
  bool integer_as_pattern                     = true; // integer files get pattern(row, col) too, else their values
};

struct MatrixMarketHeader {
  std::string field, symmetry; // as the banner says (lower case): "real", "symmetric", ...
};

// Reads path into CSR: symmetric storage expanded, duplicates summed (in file order),
// columns sorted, explicitly stored zeros kept. Throws std::runtime_error naming the file
// and line. header, when given, gets the banner's field and symmetry.
CsrMatrix read_matrix_market(const std::string &path, const MatrixMarketOptions &options = {}, MatrixMarketHeader *header = nullptr);

} // namespace pspmv_test
