#include "threads_per_row.hpp"

namespace pspmv
{

int32_t threads_per_row(int64_t rows, int64_t work, int64_t resident_threads)
{
  if (rows <= 0) return 1;
  int32_t T = 1;
  while (T < kMaxThreadsPerRow && 4 * rows * (2 * T) <= 3 * resident_threads && work >= rows * (2 * T)) T *= 2;
  return T;
}

} // namespace pspmv
