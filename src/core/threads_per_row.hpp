// Threads per row of the device SpMV kernels (RgCSR and PackSELL), chosen at upload.
// PETSc-free.
#pragma once
#include <cstdint>

namespace pspmv {

// The largest T the kernels implement.
constexpr int32_t kMaxThreadsPerRow = 8;

// Threads per row T in {1, 2, 4, 8} for a kernel whose threads walk `work` slots in total
// over `rows` rows (RgCSR: the regular nonzeros; PackSELL: the stored words, padding and
// dummies included). `resident_threads` is what the GPU holds at once (SMs x max threads per
// SM; 270336 on an H200). Rule (measured, docs/benchmarks.md runs 2 and 6):
//   T = 1 if rows <= 0 or rows >= 2 * resident_threads (the rows alone fill the GPU: the large
//         matrices keep one thread per row, the bandwidth-bound mapping);
//   otherwise the largest T <= kMaxThreadsPerRow with work >= 4 * T * rows, i.e. every thread
//   gets at least one group of 4 slots (the kernels load 4 slots before the first multiply).
// A row's T threads add their partial sums with a shuffle reduction, so T only trades
// latency (a thread's serial chain of slots) against that reduction.
int32_t threads_per_row(int64_t rows, int64_t work, int64_t resident_threads);

} // namespace pspmv
