// The scaled PackSELL copy of the mixed-precision preconditioner built on the device (PETSc-free;
// implemented in scaled_copy_device.cu): s = D^-1/2 and A_hat = D^-1/2 A D^-1/2 from a device
// CSR, bit for bit what build_scaled_copy() (scaled_copy.hpp) computes on the host and
// pspmv::cuda::upload() copies, with the host's checks, error types and messages.
// Every function returns the first CUDA error it met (cudaSuccess otherwise).
#pragma once
#include "cuda/device_csr.hpp"
#include "formats/packsell/packsell_device.hpp"
#include "scaled_copy.hpp"
#include <cuda_runtime.h>
#include <new>

namespace pspmv
{
namespace mixed
{
namespace cuda
{

// The copy in device memory. Owns its arrays (release()); a plain struct: moving it means
// copying the struct and leaving the source empty (take()).
struct DeviceScaledCopy {
  pspmv::cuda::DevicePackSell op;            // A_hat
  double                     *s   = nullptr; // op.rows entries: 1 / sqrt(a_ii)
  int64_t                     nnz = 0;       // nonzeros of A
  FormatStats                 stats;         // op's statistics, as the host copy's op.stats()
};

/* build_scaled_copy_on_device - the scaled copy of a square device CSR A with a positive diagonal.

   Input: A (rows x cols, nnz entries, device arrays as DeviceCsr says), opt (the PackSELL
   options of build_scaled_copy()), stream (every kernel, CUB call and copy; synchronised
   before returning).
   Output: *c (released first): s (rows doubles), op (build_on_device() of the CSR with the
   scaled values), nnz, stats.
   Algorithm (scaled_copy.cpp, step by step on the device): check_csr (on the device; the
   message from the host check); the diagonal position of every row by binary search; the
   first row whose diagonal is missing, not positive or not finite by a CUB min-reduction;
   s_r = 1 / sqrt(a_rr) (IEEE division and square root, as the host's); scaled_value(a_ij, s_i,
   s_j) of scaling.hpp (one warp per row) into scratch; the first entry in CSR order that is not
   finite or whose scaled value does not fit double by a CUB min-reduction; build_on_device()
   of the scaled CSR.
   Errors (thrown, the host's types and messages, in the host's order): FormatError for an
   invalid CSR or a non-square A; mixed::DiagonalError for the first offending row;
   ValueRangeError (row, column) for the first entry that is not finite or whose scaled value
   is Inf or 0 for a nonzero (scaled_range_error); build_on_device()'s errors
   (bad options, a scaled value the value format cannot hold). On any error *c is left empty.
   dither: the host's dithered rounding (after the checks, before the build), bit for bit. */
cudaError_t build_scaled_copy_on_device(const pspmv::cuda::DeviceCsr &A, const PackSellOptions &opt, cudaStream_t stream, DeviceScaledCopy *c, const CopyDither &dither = CopyDither{});

/* update_scaled_copy_on_device - same pattern, new values: s and A_hat's values recomputed.

   A must have the pattern c was built from (build_scaled_copy_on_device()); the values are
   checked and scaled as at the build, then re-encoded by update_values_on_device().
   *pattern_changed is set, and c left as it was, when A's shape or nonzero count differs from
   c's or c was not built on the device (an upload keeps no index map). Errors: as the build
   (thrown before anything of c changes: c keeps its old values). Synchronises stream only:
   no kernel on another stream may be reading c (the callers synchronise the device first). */
cudaError_t update_scaled_copy_on_device(const pspmv::cuda::DeviceCsr &A, cudaStream_t stream, DeviceScaledCopy *c, bool *pattern_changed);

/* diagonal_scaling_on_device - s = D^-1/2 of a square device CSR A with a positive diagonal
   (scaled_copy.hpp's detail::diagonal_scaling on the device): s, A.rows doubles of device
   memory. Errors (thrown, the host's): FormatError for an invalid CSR or a non-square A,
   mixed::DiagonalError for the first row whose diagonal is missing, not positive or not finite.
   Synchronises stream. */
cudaError_t diagonal_scaling_on_device(const pspmv::cuda::DeviceCsr &A, double *s, cudaStream_t stream);

// Copies a host copy into *d (released first): the layout by pspmv::cuda::upload, s, nnz,
// stats; cudaErrorInvalidValue when h.s does not have h.op.rows entries. A copy made this way
// cannot take update_scaled_copy_on_device() (pattern_changed).
cudaError_t upload(const ScaledCopy &h, DeviceScaledCopy *d);

// Frees every array of *c and resets it to empty.
cudaError_t release(DeviceScaledCopy *c);

// Returns *c and leaves *c empty: the ownership moves to the result.
DeviceScaledCopy take(DeviceScaledCopy *c);

// The start of every device solver's create() (the solvers take the copies they run on): *c is
// taken (left empty whatever happens) into a new D's member copy, *out. cudaErrorInvalidValue
// (the copy freed, *out null) for a null c or out, parameters the solver found invalid (valid
// false) or a copy that is not square or has no s; cudaErrorMemoryAllocation when D cannot be
// allocated. The caller allocates the rest and destroys *out on its errors.
template <class D>
cudaError_t new_solver_on_copy(DeviceScaledCopy *c, bool valid, D **out)
{
  if (c == nullptr) return cudaErrorInvalidValue;
  DeviceScaledCopy own = take(c);
  if (out != nullptr) *out = nullptr;
  const int32_t rows = own.op.rows;
  if (out == nullptr || !valid || rows != own.op.cols || rows < 0 || (rows > 0 && own.s == nullptr)) {
    (void)release(&own);
    return cudaErrorInvalidValue;
  }
  D *d = new (std::nothrow) D;
  if (d == nullptr) {
    (void)release(&own);
    return cudaErrorMemoryAllocation;
  }
  d->copy = take(&own);
  *out    = d;
  return cudaSuccess;
}

} // namespace cuda
} // namespace mixed
} // namespace pspmv
