// The inner-outer CG inner solver on the device (PETSc-free; implemented in inner_cg_device.cu).
// The same steps, entry and exit as the host twin (inner_cg.hpp, inner_solver.hpp): FP32
// vectors, the FP32 PackSELL product (packsell_device_lowp.hpp), FP64 dot products reduced on
// the device in a fixed order (deterministic), scalars kept in device memory: apply() launches
// kernels on the given stream and never synchronises with the host. A breakdown or an rtol exit
// sets a device flag that turns the remaining steps' kernels into no-ops.
// Every function returns the first CUDA error it met (cudaSuccess otherwise).
#pragma once
#include "inner_solver.hpp"
#include "scaled_copy.hpp"
#include <cuda_runtime.h>
#include <vector>

namespace pspmv {
namespace mixed {
namespace cuda {

struct DeviceInnerCg; // opaque: the uploaded copy, s, FP32 work vectors, device scalars, counters

// Uploads c (the PackSELL copy with cuda::upload, s) and allocates the work vectors for at most
// max_it steps (the residual history of the last application). *out is null on error.
cudaError_t create(const ScaledCopy &c, int32_t max_it, DeviceInnerCg **out);
// Same layout, new values (update_scaled_copy done on the host): copies the values and s.
cudaError_t update_values(const ScaledCopy &c, DeviceInnerCg *d);
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
