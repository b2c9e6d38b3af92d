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
#include "scaled_copy_device.hpp"
#include <cuda_runtime.h>

namespace pspmv
{
namespace mixed
{
namespace cuda
{

// The most steps m2 and m3 the device levels take (their least-squares solve's arrays).
constexpr int32_t kMaxDeviceLevelSteps = 64;

struct DeviceF3R; // opaque: the copy, FP32/FP16 work vectors, device scalars, counters

/* create - the device F3R on a device copy, with work vectors for the levels of p (p is kept:
   every apply uses it). The weights start as f3r_reset's.

   c: a scaled copy (build_scaled_copy_on_device() or upload()); the solver takes it: *c is left
   empty whether or not create succeeds (on an error its arrays are freed). *out is null on
   error: cudaErrorInvalidValue for m2, m3, m4 or weight_period < 1, m2 or m3 >
   kMaxDeviceLevelSteps, or a copy that is not square or has no s. */
cudaError_t create(DeviceScaledCopy *c, const F3RParams &p, DeviceF3R **out);
// The same from a host copy: upload(c) then the create above (tests compare the two).
cudaError_t create(const ScaledCopy &c, const F3RParams &p, DeviceF3R **out);
/* update_values - same pattern, new values: update_scaled_copy_on_device() of the solver's copy
   from the device CSR A (its errors thrown, the copy unchanged then; *pattern_changed set and
   nothing changed for another pattern), then the weights and the slot counter reset (a new
   setup, as f3r_reset). Waits for the device first; runs on stream; synchronous. */
cudaError_t update_values(const ::pspmv::cuda::DeviceCsr &A, cudaStream_t stream, DeviceF3R *d, bool *pattern_changed);
// The solver's copy (A_hat, s, its statistics; update_values changes its values in place), valid until destroy.
const DeviceScaledCopy &copy_of(const DeviceF3R *d);
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
