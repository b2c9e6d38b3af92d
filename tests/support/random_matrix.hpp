// Random sparse matrices for the tests: the shapes that break formats (empty rows, one
// dense row, rectangular, 1 row, 1 column, 0 rows, far-apart columns, equal rows).
#pragma once
#include "csr_matrix.hpp"
#include <cstdint>

namespace pspmv_test
{

// Small deterministic generator (splitmix64), the same on every platform.
struct Rng {
  uint64_t state;
  explicit Rng(uint64_t seed) : state(seed * 0x2545f4914f6cdd1dULL + 1) { }
  uint64_t next();
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }       // [0, n)
  double   uniform() { return double(next() >> 11) * 0x1.0p-53; } // [0, 1)
};

struct RandomSpec {
  int32_t  rows = 100, cols = 100;
  int32_t  min_len = 0, max_len = 10; // row lengths uniform in [min_len, max_len], at most cols
  double   empty_fraction = 0.0;      // share of rows forced empty
  int32_t  dense_rows     = 0;        // rows (spread evenly) holding every column
  double   long_fraction  = 0.0;      // share of rows of length long_len (power-law-like tails)
  int32_t  long_len       = 0;
  int32_t  min_gap        = 1;                        // columns of a row differ by >= min_gap (dummies)
  double   min_magnitude = 1e-2, max_magnitude = 1e2; // |values| log-uniform in this range
  double   zero_fraction = 0.0;                       // share of explicitly stored zeros (+0 and -0)
  uint64_t seed          = 1;
};

CsrMatrix random_csr(const RandomSpec &spec);

// Same pattern, new values (log-uniform magnitudes in [lo, hi], random signs).
CsrMatrix with_new_values(const CsrMatrix &A, uint64_t seed, double lo, double hi);

// Random vector with entries in [-1, 1].
std::vector<double> random_vector(int64_t n, uint64_t seed);

} // namespace pspmv_test
