// The inner-outer CG inner solver on the device (PETSc-free; implemented in inner_cg_device.cu).
// The same steps, entry and exit as the host twin (inner_cg.hpp, inner_solver.hpp): FP32
// vectors, the FP32 PackSELL product (packsell_device_lowp.hpp), FP64 dot products reduced on
// the device in a fixed order (deterministic), scalars kept in device memory: apply() launches
// kernels on the given stream and never synchronises with the host. A breakdown or an rtol exit
// sets a device flag that turns the remaining steps' kernels into no-ops.
// Every function returns the first CUDA error it met (cudaSuccess otherwise).
#pragma once
#include "inner_solver.hpp"
#include "scaled_copy_device.hpp"
#include <cuda_runtime.h>
#include <vector>

namespace pspmv
{
namespace mixed
{
namespace cuda
{

struct DeviceInnerCg; // opaque: the copy, FP32 work vectors, device scalars, counters

/* create - the device inner CG on a device copy, with work vectors for at most max_it steps.

   c: a scaled copy (build_scaled_copy_on_device() or upload()); the solver takes it: *c is left
   empty whether or not create succeeds (on an error its arrays are freed). max_it >= 0 bounds
   apply()'s p.max_it (the residual history of the last application). *out is null on error:
   cudaErrorInvalidValue for a negative max_it or a copy that is not square or has no s. */
cudaError_t create(DeviceScaledCopy *c, int32_t max_it, DeviceInnerCg **out);
// The same from a host copy: upload(c) then the create above (tests compare the two).
cudaError_t create(const ScaledCopy &c, int32_t max_it, DeviceInnerCg **out);
/* update_values - same pattern, new values: update_scaled_copy_on_device() of the solver's copy
   from the device CSR A (its errors thrown, the copy unchanged then; *pattern_changed set and
   nothing changed for another pattern). Waits for the device first (applications in flight
   read the copy); runs on stream. */
cudaError_t update_values(const pspmv::cuda::DeviceCsr &A, cudaStream_t stream, DeviceInnerCg *d, bool *pattern_changed);
// The solver's copy (A_hat, s, its statistics; update_values changes its values in place), valid until destroy.
const DeviceScaledCopy &copy_of(const DeviceInnerCg *d);
// z = M(r) on stream (r, z: device arrays of rows doubles; p.max_it <= the create() bound).
cudaError_t apply(DeviceInnerCg *d, const InnerCgParams &p, const double *r, double *z, cudaStream_t stream);
// Adds the device counters to *stats and resets them; residuals (optional) gets the last
// application's ||r_k||, k = 0 .. its. Synchronises the stream.
cudaError_t read_stats(DeviceInnerCg *d, InnerStats *stats, std::vector<double> *residuals, cudaStream_t stream);
// Frees everything (d may be null).
cudaError_t destroy(DeviceInnerCg *d);

} // namespace cuda
} // namespace mixed
} // namespace pspmv
