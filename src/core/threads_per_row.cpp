#include "threads_per_row.hpp"

namespace pspmv {

int32_t threads_per_row(int64_t rows, int64_t resident_threads) {
  if (rows <= 0) return 1;
  int32_t T = 1;
  while (T < kMaxThreadsPerRow && rows * (2 * T) <= resident_threads / 2) T *= 2;
  return T;
}

} // namespace pspmv
