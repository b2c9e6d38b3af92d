// Mixed-precision CG with reliable updates on the device (PETSc-free; mixed_cg_device.cu): the
// steps, reliable updates and guard of the host twin (mixed_cg.hpp) on one GPU.
//
// A step is three kernels, as QUDA's CG: the product fused with (p, w) and alpha; the residual
// update fused with both of its dot products, (r', r') and (r', w), and the trigger test; the
// solution increment fused with the direction update (dy += sigma alpha p; p = r + beta p).
// Scalars stay in device memory; the host launches check_every steps and then reads the
// device's state once (a trigger or a breakdown turns the remaining kernels of the batch into
// no-ops): that read and the reliable updates are the loop's only host synchronisations. The
// reliable update (x += s .* dy; the exact product through the hook; the norms; the restart of
// r and p) and the guard's decision run as on the host (the same PrecisionGuard), with device
// reductions in a fixed order. The FP64 fallback runs the same steps on FP64 vectors with the
// exact product (s .* A (s .* p)) through the hook, one step per read of the state.
//
// A preconditioner (the hook precondition; mixed_cg.hpp): after the residual update, to_pc
// (v = r ./ s, FP64), the hook (u = M^-1 v), from_pc (z = u ./ s rounded to the vectors'
// precision, fused with rz' = (r', z) in the fixed-order grid reduction, which ends the step:
// the trigger and beta = rz' / rz), then the solution and direction update on z (p = z + beta p).
// With precondition_lowp too, the low-precision phase calls it on the FP32 r and z instead of
// to_pc, the hook and the narrowing; from_pc then forms rz' only.
// The host launches one step per read of the state then (it cannot turn the caller's
// application of M into a no-op inside a batch; check_every does not apply). The reliable
// update's z_T and (r_T, z_T) take the same kernels. z (FP32) and the two FP64 buffers of the
// hook are allocated at the first solve with the hook (kept until destroy()); without the hook
// none of this runs and the kernels are those above.
//
// Several ranks (the hooks allreduce_sum/allreduce_max set): the operator is the rank's rows of
// the whole matrix, the scaled diagonal block (the copy) plus the scaled off-diagonal block
// (set_offdiag()) on a ghost buffer that the halo hooks fill with the FP32 direction of the other
// ranks (started before the diagonal block's product, ended before the off-diagonal one's). Each
// step's dot products are then the rank's partial sums: the kernels leave them in the device
// state, the loop copies them to pinned host memory, sums them over the ranks through the hook
// and copies them back before a one-thread kernel forms alpha (beta, the trigger) from them, as
// the one-rank kernels do; the reliable update's norms and dot products, read on the host anyway,
// go through the same hooks, so every rank takes the same decisions (the host twin's rule). The
// host reads the state after every step there (check_every does not apply: each step already
// waits for its reductions). One rank (hooks unset): none of this runs, the loop is unchanged.
#pragma once
#include "mixed_cg.hpp"
#include "scaled_copy_device.hpp"
#include <cuda_runtime.h>
#include <functional>

namespace pspmv
{
namespace mixed
{
namespace cuda
{

struct DeviceMixedCg; // opaque: the copy, FP32/FP64 work vectors, device state

// What the device solve needs from its caller; every hook runs on the host, may launch work on
// the stream, and reports errors by throwing.
struct DeviceMixedCgHooks {
  // y = A x in FP64 with the exact matrix, x and y device arrays of rows doubles.
  std::function<void(const double *x, double *y)> exact_product;
  // The guard's raise: a wider copy (replace_copy()) and true, or false (FP64 next).
  std::function<bool()>                                   raise_precision;
  std::function<MixedCgReason(int64_t its, double rnorm)> converged; // absent: the params' test
  std::function<void(int64_t its, double rnorm)>          monitor;
  // The test's target after its call at step 0 (MixedCgOperators::target); absent: the params'.
  std::function<double(double rnorm0)> target;
  // Several ranks: v[0 .. k) (host memory) replaced by their sum / maximum over the ranks. Both
  // or neither; absent: one rank (the device's reductions are the whole sums).
  std::function<void(double *v, int k)> allreduce_sum, allreduce_max;
  // Several ranks: the halo of the FP32 direction p (device, rows floats) into ghost (device,
  // ghost_count() floats, null when 0): begin starts the exchange, end completes it (on the
  // stream: the off-diagonal product follows it). Called on every rank at every low-precision
  // step, also where ghost_count() is 0 (the exchange is collective). Both or neither; needed
  // when an off-diagonal block is set. end must leave ghost complete for work launched on the
  // solve's stream after it (PETSc's PetscSF on device memory unpacks on the current device
  // context's stream, which the glue passes as the solve's stream, as MatMult_MPIAIJCUSPARSE
  // relies on). A CUDA error inside a solve returns on its rank only: ranks still in the loop's
  // exchanges wait (as PETSc's own solvers on a device error); what can fail before the loop
  // (allocations) fails in create() and set_offdiag(), which the caller agrees on, except the
  // preconditioner's buffers, allocated at the start of the first solve with the hook (a failure
  // there is such an error inside a solve).
  std::function<void(const float *p, float *ghost)> halo_begin, halo_end;
  // u = M^-1 v in FP64 on the user's (unscaled) system (MixedCgOperators::precondition): v, u
  // device arrays of rows doubles (v must not be written; null on a rank without rows). It may
  // launch work on the solve's stream (u complete for work launched on the stream after it) and
  // may throw; on several ranks it is collective (called on every rank at the same points).
  // Absent: no preconditioner beyond the scaling. Counted in MixedCgResult::pc_applications; the device calls it also in a
  // step that broke down before its residual update (the host twin does not: the counts may
  // differ by the breakdowns).
  std::function<void(const double *v, double *u)> precondition;
  // z = M_hat^-1 r on the FP32 vectors in their scaled units (MixedCgOperators::precondition_lowp;
  // e.g. mg_cycle_device.hpp's V-cycle): r, z device arrays of rows floats (r must not be
  // written); used only with precondition, in the low-precision phase (the steps' z and a
  // reliable update's z_T) in place of to_pc, precondition and from_pc's narrowing; the FP64
  // phase and the rz check of a breakdown keep precondition. The same rules as precondition
  // (launches on the stream, may throw, collective). Counted in pc_applications and
  // pc_lowp_applications.
  std::function<void(const float *r, float *z)> precondition_lowp;
  // The caller's timer of the loop's own device work (e.g. PetscLogGpuTimeBegin/End): started
  // when solve() starts, stopped around every other hook (their work is their own: the exact
  // product is timed by its MatMult) and when solve() returns or throws. Both or neither.
  std::function<void()> timer_start, timer_stop;
};

// Takes the copy (*c left empty, also on errors); cudaErrorInvalidValue for a non-square copy.
cudaError_t create(DeviceScaledCopy *c, DeviceMixedCg **out);
// Another copy of the same matrix (a wider value format): takes *c; s must be the same. Drops
// the off-diagonal block (set_offdiag() again, at the new format).
cudaError_t replace_copy(DeviceMixedCg *d, DeviceScaledCopy *c);
// The scaled off-diagonal block of the rank's rows (several ranks): off (rows x ghost columns,
// the columns numbered as the halo's ghost buffer; mixed_cg.hpp's build_scaled_offdiag() then
// pspmv::cuda::upload()) in the copy's value format. Takes *off (left empty, also on errors);
// allocates the ghost buffer (off->cols floats); drops the row-sum compensation (compensate()
// again: it includes the block's row sums). cudaErrorInvalidValue for other rows or another
// value format than the copy's.
cudaError_t set_offdiag(DeviceMixedCg *d, pspmv::cuda::DevicePackSell *off);
// The ghost entries the halo fills (0 without an off-diagonal block).
int32_t                 ghost_count(const DeviceMixedCg *d);
const DeviceScaledCopy &copy_of(const DeviceMixedCg *d);
// The row-sum compensation of the current copy (rowsum_compensation() of mixed_cg.hpp), added
// to every low-precision product: product(s, As) must write As = A s (FP64, the exact matrix;
// device arrays of rows doubles; it may throw); the copy's row sums come from its FP64 product
// with ones (the off-diagonal block's too, on ones of the ghost columns, as the host twin's
// caller). replace_copy() and set_offdiag() drop it (call compensate() again); off until called.
// product is called once per call on every rank, with null arrays on a rank without rows (on
// several ranks it is the collective MatMult).
cudaError_t compensate(DeviceMixedCg *d, const std::function<void(const double *s, double *As)> &product, cudaStream_t stream);
// Solves A x = b from x's initial values (b, x: device arrays of rows doubles) on stream.
// check_every >= 1: steps launched between two reads of the device's state.
cudaError_t solve(DeviceMixedCg *d, const double *b, double *x, const MixedCgParams &p, int check_every, const DeviceMixedCgHooks &h, cudaStream_t stream, MixedCgResult *res);
cudaError_t destroy(DeviceMixedCg *d);

} // namespace cuda
} // namespace mixed
} // namespace pspmv
