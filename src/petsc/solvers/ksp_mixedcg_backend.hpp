// KSPMIXEDCG's pieces shared by its glue (ksp_mixedcg.cpp) and its CUDA backend
// (cuda/ksp_mixedcg_cuda.cpp): the hooks into PETSc that the solvers call, and the device
// backend's interface. The host backend is the host twin (src/mixed/mixed_cg.hpp) called from
// the glue directly.
#pragma once
#include <petscksp.h>

#include "core/format_stats.hpp"
#include "core_error.hpp"
#include "formats/packsell/packsell.hpp"
#include "mixed/mixed_cg.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace pspmv {
namespace glue {

/* What the solvers need from PETSc: the exact product y = A x with the Amat on host arrays or on
   device arrays (the solution's layout), the sums and maxima over the ranks and the FP32 halo of
   the direction on device arrays (several ranks only: unset on one), the guard's raise (true: a
   wider low-precision format was built; false: FP64 next), the KSP's convergence test and monitor
   on the FP64 true residual. Each throws PetscFailure on a PETSc error (PetscCallThrow()). */
struct MixedCgHooks {
  std::function<void(const double *x, double *y)>                  exact_product, exact_product_device;
  std::function<void(double *v, int k)>                            allreduce_sum, allreduce_max;
  std::function<void(const float *p, float *ghost)>                halo_begin_device, halo_end_device;
  std::function<bool()>                                            raise_precision;
  std::function<mixed::MixedCgReason(int64_t its, double rnorm)> converged;
  std::function<void(int64_t its, double rnorm)>                   monitor;
  std::function<double(double rnorm0)>                             target; /* the test's target after its call at step 0 */
};

/* The CUDA backend: the scaled copy of the diagonal block built on the device from the Pmat's
   CSR (on several ranks with the scaled off-diagonal block beside it, built on the host by the
   host backend's builder and uploaded), the device driver of the solver
   (src/mixed/mixed_cg_device.hpp) on the KSP's CUDA vectors. */
class MixedCgDevice {
public:
  virtual ~MixedCgDevice() = default;
  /* Solves with ksp's vec_rhs and vec_sol (CUDA vectors); p as the host twin's, check_every:
     steps launched between two reads of the device's state. */
  virtual PetscErrorCode Solve(KSP ksp, const mixed::MixedCgParams &p, const MixedCgHooks &h, PetscInt check_every, mixed::MixedCgResult *res) = 0;
  /* The copy at another value format (the guard's raise), from the Pmat's block Ad; the
     off-diagonal block is dropped (SetOffDiag() again, at the same format). */
  virtual PetscErrorCode Rebuild(Mat Ad, const PackSellOptions &opt) = 0;
  /* Several ranks: the scaled off-diagonal block (mixed::build_scaled_offdiag(), columns numbered
     as the halo's ghost entries) uploaded beside the copy; drops the compensation (Compensate()
     again). */
  virtual PetscErrorCode SetOffDiag(const PackSellMatrix &off) = 0;
  /* s = D^-1/2 of the local rows (the copy's), on the host. */
  virtual PetscErrorCode Scaling(std::vector<double> *s) const = 0;
  /* The row-sum compensation of the current copy (mixed/mixed_cg.hpp): product(s, As) writes
     As = Pmat s on device arrays. */
  virtual PetscErrorCode Compensate(const std::function<void(const double *s, double *As)> &product) = 0;
  virtual int64_t        Nnz() const   = 0;
  virtual FormatStats    Stats() const = 0;
};

/* Runs a build of the core's copy (C++ that may throw its refusals) and returns its exceptions as
   the KSP's PETSc errors, in the user's numbering and naming the KSP's options (ksp_mixedcg.cpp). */
using CopyRunner = std::function<PetscErrorCode(const std::function<void()> &build)>;

#if defined(PETSCSPMV_HAVE_CUDA)
/* The device copy of Ad (the Pmat's diagonal block, SeqAIJ-based; its rows start at the Pmat's
   row0) with opt, its values dithered (mixed/scaled_copy.hpp's CopyDither) when dither is set,
   for this and every rebuild; the core's builds run through run. */
PetscErrorCode CreateMixedCgDevice(Mat Ad, const PackSellOptions &opt, PetscInt row0, PetscBool dither, const CopyRunner &run, std::unique_ptr<MixedCgDevice> *out);
#endif

} // namespace glue
} // namespace pspmv
