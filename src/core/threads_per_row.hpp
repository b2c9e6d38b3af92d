// Threads per row of the device SpMV kernels (RgCSR and PackSELL), chosen at upload.
// PETSc-free.
#pragma once
#include <cstdint>

namespace pspmv
{

// The largest T the kernels implement.
constexpr int32_t kMaxThreadsPerRow = 8;

// Threads per row T in {1, 2, 4, 8} of a kernel over `rows` rows whose threads walk `work`
// slots in total (RgCSR: the regular nonzeros; PackSELL: the stored words); `resident_threads`
// is what the GPU holds at once (SMs x max threads per SM). Rule: the
// largest T with rows * T <= 3/4 of resident_threads and work >= T * rows (no more threads
// than slots per row on average); 1 for rows <= 0.
// Why: a matrix with few rows is latency-bound, and T threads per row cut a thread's serial
// chain of slots by T; once the threads fill most of the GPU, more threads only add shuffle
// reductions and idle lanes (every T timed on the shared matrices: docs/design.md,
// "Measured constants").
int32_t threads_per_row(int64_t rows, int64_t work, int64_t resident_threads);

} // namespace pspmv
