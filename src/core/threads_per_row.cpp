#include "threads_per_row.hpp"

namespace pspmv {

int32_t threads_per_row(int64_t rows, int64_t work, int64_t resident_threads) {
  if (rows <= 0 || rows >= 2 * resident_threads) return 1;
  int32_t T = 1;
  // work / rows >= 4T  <=>  work >= 4T * rows (no rounding)
  while (T < kMaxThreadsPerRow && work >= 4 * int64_t(2 * T) * rows) T *= 2;
  return T;
}

} // namespace pspmv
