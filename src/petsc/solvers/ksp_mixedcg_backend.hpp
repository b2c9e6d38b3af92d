// KSPMIXEDCG's pieces shared by its glue (ksp_mixedcg.cpp) and its CUDA backend
// (cuda/ksp_mixedcg_cuda.cpp): the hooks into PETSc that the solvers call, and the device
// solver's interface. The copy lives on the mixed solvers' copy backend (scaled_copy_backend.hpp);
// the host backend's solver is the host twin (src/mixed/mixed_cg.hpp) called from the glue on the
// host copy's FP32 product.
#pragma once
#include <petscksp.h>

#include "core/format_stats.hpp"
#include "core_error.hpp"
#include "mixed/mixed_cg.hpp"
#include "scaled_copy_backend.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace pspmv
{
namespace glue
{

/* What the solvers need from PETSc, the host twin's operators (mixed::MixedCgOperators: the
   exact product y = A x with the Amat on host arrays, the sums and maxima over the ranks (several
   ranks only: unset on one), the guard's raise (true: a wider low-precision format was built;
   false: FP64 next), the KSP's convergence test, its target and monitor on the FP64 true
   residual; lowp_product unset: the backend's) and the device driver's: the exact product on
   device arrays (the solution's layout) and the FP32 halo of the direction on device arrays
   (several ranks only). Each throws PetscFailure on a PETSc error (PetscCallThrow()). */
struct MixedCgHooks : mixed::MixedCgOperators {
  std::function<void(const double *x, double *y)>   exact_product_device, precondition_device;
  std::function<void(const float *r, float *z)>     precondition_lowp_device; /* the FP32 V-cycle on device arrays */
  std::function<void(const float *p, float *ghost)> halo_begin_device, halo_end_device;
};

#if defined(PETSCSPMV_HAVE_CUDA)
/* The CUDA backend's solver: the device driver of the solver (src/mixed/mixed_cg_device.hpp) on
   the KSP's CUDA vectors, holding the copy that the CUDA copy backend (CreateCudaScaledCopy())
   builds on the device from the Pmat's CSR, with, on several ranks, the scaled off-diagonal block
   beside it. */
class MixedCgDevice : public DeviceCopyHolder {
public:
  /* Solves with ksp's vec_rhs and vec_sol (CUDA vectors); p as the host twin's, check_every:
     steps launched between two reads of the device's state; info: the copy's (flops logged). */
  virtual PetscErrorCode Solve(KSP ksp, const mixed::MixedCgParams &p, const MixedCgHooks &h, PetscInt check_every, const CopyInfo &info, mixed::MixedCgResult *res) = 0;
};

/* The device solver, holding no copy yet. */
PetscErrorCode CreateMixedCgDevice(std::unique_ptr<MixedCgDevice> *out);
#endif

} // namespace glue
} // namespace pspmv
