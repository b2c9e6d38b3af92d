// The FP32 multigrid V-cycle on the device (PETSc-free; mg_cycle_device.cu): the host twin's
// cycle (mg_cycle.hpp: the levels, scalings, copies, Chebyshev smoothing and its coefficients,
// the Lanczos estimate) with every copy built on the device from the levels' device CSR and
// apply() as kernels on one stream.
//
// Bit for bit: the copies are the host's (build_scaled_copy_on_device and build_on_device are
// the host builders' twins; P_hat's values by the same scaled_value(), P_hat^T by a stable radix
// sort of P's entries by column, the host's counting transpose in the same order); every vector
// operation is the host's in FP32 with the same fma's; so with the levels' emax given
// (MgLevelInput::emax > 0) apply() returns the host twin's z exactly. An emax estimated on the
// device differs from the host's estimate in its last bits (the Lanczos sums are the device's
// fixed-order grid reductions, not the host's serial loops), and so may the Chebyshev
// coefficients rounded from it.
//
// The products are the FP32 PackSELL rows of packsell_lowp_rows.cuh fused with what the host
// does after each product (the Chebyshev update, the residual, the coarse correction's add): one
// kernel per product, no extra pass over a vector. The smoother's iterates rotate through the
// level's x and two work vectors so that the last lands in x (no copy); the finest level's
// right-hand side is r itself and its solution z itself.
#pragma once
#include "cuda/device_csr.hpp"
#include "mg_cycle.hpp"
#include <cuda_runtime.h>
#include <functional>
#include <vector>

namespace pspmv
{
namespace mixed
{
namespace cuda
{

struct DeviceMgCycle; // opaque: the levels' copies, work vectors and coefficients

// Level l of the hierarchy as MgLevelInput, its matrices device CSRs (DeviceCsr's conditions).
struct DeviceMgLevelInput {
  pspmv::cuda::DeviceCsr A, P;
  double                 emax    = 0;
  const double          *inverse = nullptr; // MgLevelInput::inverse: host memory
};

/* build_mg_cycle_on_device - MgCycle::build() on the device.

   levels: L >= 1 levels as MgCycle::build() takes them (device arrays, valid until the build
   returns); opt: its options; stream: every kernel, CUB call and copy (synchronised before
   returning).
   Output: *out (null on errors), destroyed by destroy().
   Errors: thrown, MgCycle::build()'s types and messages (the level named): FormatError,
   DiagonalError, ValueRangeError; returned, a CUDA error (nothing allocated is kept). */
cudaError_t build_mg_cycle_on_device(const std::vector<DeviceMgLevelInput> &levels, const MgCycleOptions &opt, cudaStream_t stream, DeviceMgCycle **out);

/* apply_mg_cycle - z = M_hat^-1 r, MgCycle::apply() on the device: r, z device arrays of the
   finest level's rows floats (they may be the same array; r is not written otherwise); launched
   on stream, not synchronised. coarse(b, x): x = A_c^-1 b in FP64 on level c's unscaled system,
   b and x device arrays of level c's rows doubles (b must not be written), called once per
   apply on the host; it may launch work on stream (x complete for work launched on stream after
   it) and may throw (apply_mg_cycle then throws it); not called (and may be empty) when the
   coarse level was given its inverse (one kernel then). Returns the first CUDA launch error. One
   apply at a time per cycle (the levels' work vectors are the cycle's). */
cudaError_t apply_mg_cycle(const DeviceMgCycle *m, const float *r, float *z, const std::function<void(const double *b, double *x)> &coarse, cudaStream_t stream);

/* set_null_space - MgCycle::set_null_space() of the device cycle: basis on the host (k vectors of
   the finest level's rows; empty: none); w and q formed on the host from the finest level's s
   (copied from the device) and uploaded, on stream (synchronised). apply_mg_cycle() then ends
   with the projection, its k sums the device's fixed-order grid reductions (z within rounding
   of the host twin's, not bit for bit). Errors: thrown, null_space_weights()'s FormatError (the
   cycle unchanged); returned, a CUDA error (the cycle then has no null space). */
cudaError_t set_null_space(DeviceMgCycle *m, const std::vector<std::vector<double>> &basis, cudaStream_t stream);

// MgCycle::info(), coarse_level() and num_levels() of the device cycle.
std::vector<MgLevelInfo> mg_cycle_info(const DeviceMgCycle *m);
int                      coarse_level(const DeviceMgCycle *m);
int                      num_levels(const DeviceMgCycle *m);

// Frees every array of m and m itself (null: nothing); the first CUDA error.
cudaError_t destroy(DeviceMgCycle *m);

} // namespace cuda
} // namespace mixed
} // namespace pspmv
