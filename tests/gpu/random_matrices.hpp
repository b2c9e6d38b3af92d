// Random CSR matrices with the shapes that break SpMV kernels: empty rows, a dense row,
// rectangular, zero-size, huge column gaps (PackSELL dummies), long rows (COO tails).
#pragma once
#include "gpu_test_util.hpp"
#include <functional>

namespace gputest
{

enum class ColumnSpread {
  Uniform,   // distinct columns uniform in [0, cols)
  Clustered, // a run of consecutive columns from a random start (small deltas)
  Extremes,  // half near column 0, half near cols-1 (one huge jump per row)
};

struct RandomSpec {
  int32_t                                           rows = 0, cols = 0;
  std::function<int32_t(int32_t row, uint64_t rnd)> length; // nonzeros of a row (clamped to cols)
  ColumnSpread                                      spread              = ColumnSpread::Uniform;
  double                                            explicit_zero_share = 0.02; // stored zeros: nonzeros of the pattern
  double                                            magnitude           = 1.0;  // values are +-[0.5, 1.5) * magnitude
  uint64_t                                          seed                = 1;
};

HostCsr random_csr(const RandomSpec &spec);

// Same pattern, new values (for value-update tests).
HostCsr with_new_values(const HostCsr &A, double magnitude, uint64_t seed);

} // namespace gputest
