// The F3R inner solver on the device (PETSc-free; implemented in f3r_device.cu). The same
// steps, entry and exit as the host twin (f3r.hpp, inner_solver.hpp; docs/mixed-f3r.md):
// FGMRES(m2) and FGMRES(m3) on FP32 vectors with the FP32 PackSELL product, Richardson(m4) on
// FP16 vectors with the FP16-vector product (packsell_device_lowp.hpp). Dot products and norms
// are FP64 sums reduced in a fixed order (partial sums per block, then one block per sum:
// deterministic, no atomics); the Hessenberg columns, Givens rotations, least-squares solves,
// the Richardson weights and the flags of a stopped level stay in device memory. apply()
// launches kernels on the given stream and never synchronises with the host: the host decides
// only what does not depend on device data (the period slots, from its own slot counter); a
// level that stops (see f3r.hpp) sets a device flag that turns its remaining kernels, and
// those of the levels beneath, into no-ops (the products are still launched, on vectors
// nobody reads afterwards).
// Every function returns the first CUDA error it met (cudaSuccess otherwise).
#pragma once
#include "f3r.hpp"
#include "inner_solver.hpp"
#include "scaled_copy.hpp"
#include <cuda_runtime.h>

namespace pspmv {
namespace mixed {
namespace cuda {

// The most steps m2 and m3 the device levels take (their least-squares solve's arrays).
constexpr int32_t kMaxDeviceLevelSteps = 64;

struct DeviceF3R; // opaque: the uploaded copy, s, FP32/FP16 work vectors, device scalars, counters

// Uploads c (the PackSELL copy with pspmv::cuda::upload, s) and allocates the work vectors for
// the levels of p (p is kept: every apply uses it). The weights start as f3r_reset's.
// cudaErrorInvalidValue for m2, m3, m4 or weight_period < 1, m2 or m3 > kMaxDeviceLevelSteps, or a
// non-square copy. *out is null
// on error.
cudaError_t create(const ScaledCopy &c, const F3RParams &p, DeviceF3R **out);
// Same layout, new values (update_scaled_copy done on the host): copies the values and s and
// resets the weights and the slot counter (a new setup, as f3r_reset). Synchronous.
cudaError_t update_values(const ScaledCopy &c, DeviceF3R *d);
// z = M(r) on stream (r, z: device arrays of rows doubles), entry and exit as inner_solver.hpp.
cudaError_t apply(DeviceF3R *d, const double *r, double *z, cudaStream_t stream);
// Adds the counters since the last call to *stats (applications, inner_its, zero_rhs,
// jacobi_fallbacks) and resets them. Synchronises the stream.
cudaError_t read_stats(DeviceF3R *d, InnerStats *stats, cudaStream_t stream);
// The weight state as the host twin's F3RState (for tests). Synchronises the stream.
cudaError_t read_state(DeviceF3R *d, F3RState *st, cudaStream_t stream);
// Frees everything (d may be null).
cudaError_t destroy(DeviceF3R *d);

} // namespace cuda
} // namespace mixed
} // namespace pspmv
