// Small Matrix Market reader for the tests: coordinate real/integer/pattern,
// general/symmetric/skew-symmetric, plain or gzip-compressed (.mtx, .mtx.gz).
#pragma once
#include "csr_matrix.hpp"
#include <string>

namespace pspmv_test {

// Reads path into CSR: symmetric storage expanded, duplicates summed, columns sorted,
// explicitly stored zeros kept. Pattern and integer files get pattern_value(row, col) as
// values so products are meaningful. Throws std::runtime_error naming the file and line.
CsrMatrix read_matrix_market(const std::string &path);

// Deterministic pseudo-random nonzero value for entry (row, col): mixed signs, magnitudes
// from 1e-2 to 2e2.
double pattern_value(int32_t row, int32_t col);

} // namespace pspmv_test
