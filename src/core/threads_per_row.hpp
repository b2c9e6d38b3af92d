// Threads per row of the device SpMV kernels (RgCSR and PackSELL), chosen at upload.
// PETSc-free.
#pragma once
#include <cstdint>

namespace pspmv {

// The largest T the kernels implement.
constexpr int32_t kMaxThreadsPerRow = 8;

// Threads per row T in {1, 2, 4, 8} of a kernel over `rows` rows; `resident_threads` is what
// the GPU holds at once (SMs x max threads per SM; 270336 on an H200). Rule: the largest T with
// rows * T <= resident_threads / 2 (1 for rows <= 0 or rows > resident_threads / 4).
// Why (docs/benchmarks.md, run 6: every T timed on the 41 shared matrices and the large
// ones, both formats): a matrix with few rows is latency-bound, and T threads per row cut a
// thread's serial chain of slots by T (T independent loads in flight per row); once the
// threads fill about half the GPU, more threads only add shuffle reductions and idle lanes.
// The row lengths hardly matter: with 8 threads even rows of 3-6 nonzeros ran faster than
// with one when the matrix had few thousand rows.
int32_t threads_per_row(int64_t rows, int64_t resident_threads);

} // namespace pspmv
