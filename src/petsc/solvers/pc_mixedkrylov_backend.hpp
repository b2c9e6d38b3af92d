// The scaled copy and inner solve of PCMIXEDKRYLOV on one backend (host or CUDA): what the PC
// glue (pc_mixedkrylov.cpp) calls. A backend owns the scaled copy of the diagonal block on the
// mixed solvers' shared copy backend (scaled_copy_backend.hpp: built on the host, or on the
// device from the block's device CSR) and runs its inner solver on it: the host twins of the
// inner solvers (the host versions that the device solvers follow step for step) or the device
// solvers. The core's exceptions reach the PC through the CopyRunner it passes (its RunCore: a
// refusal of the data kept for PCSetFailedReason(), other exceptions PETSc errors).
#pragma once
#include <petscmat.h>

#include "mixed/inner_solver.hpp"
#include "scaled_copy_backend.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace pspmv
{
namespace glue
{

enum class InnerMethod : int {
  CG  = 0,
  F3R = 1
};

/* The inner solver's parameters as the options set them. */
struct MixedParams {
  InnerMethod          method = InnerMethod::F3R; /* never slower than FP64 CG + Jacobi on the shared SPD set (docs/mixed.md) */
  mixed::InnerCgParams cg;
  mixed::F3RParams     f3r;
  PetscBool            monitor = PETSC_FALSE; /* keep the last application's inner residuals */
};

class MixedBackend {
public:
  virtual ~MixedBackend() = default;
  /* z = M(r) on the local rows (r, z: vectors whose local parts have the copy's rows). */
  virtual PetscErrorCode Apply(const MixedParams &p, Vec r, Vec z) = 0;
  /* The Pmat block's values changed: Ad (the block, SeqAIJ-based) has the copy's pattern and new
     values (the caller asks only for an AIJ block that PETSc reports SAME_NONZERO_PATTERN for:
     PETSc's nonzero state tracks its pattern). *pattern_changed (nothing changed) when the
     backend sees another pattern (the host one compares every column, the CUDA one the shape
     and the nonzero count) or cannot update from this block: the caller builds a new backend.
     *refused: run refused the new values (the copy keeps the old ones). Errors of the core come
     through run, before anything changed. */
  virtual PetscErrorCode UpdateValues(Mat Ad, const CopyRunner &run, bool *pattern_changed, bool *refused) = 0; /* ScaledCopyBackend::UpdateValues() */
  /* Adds the counts since the last call to *stats; residuals: the last application's inner
     residual norms (monitor only; may be empty). */
  virtual PetscErrorCode ReadStats(mixed::InnerStats *stats, std::vector<double> *residuals) = 0;
  /* ||s .* r|| over the local rows (r: a vector whose local part has the copy's rows). */
  virtual PetscErrorCode           ScaledNorm(Vec r, PetscReal *norm) = 0;
  virtual const ScaledCopyBackend &Copy() const                       = 0; /* its OnDevice(): the CUDA backend (else the host one) */
};

/* Builds the copy of Ad (the Pmat's diagonal block on this rank, SeqAIJ-based, with the options
   opt) and the inner solver of p. Errors of the core come through run; on any error, and when
   run refused the data (*refused set), *out stays empty. */
/* The host twins of the inner solvers (src/mixed/inner_cg.hpp, f3r.hpp) on the scaled copy
   built on the host. */
PetscErrorCode CreateHostMixedBackend(Mat Ad, const PackSellOptions &opt, const MixedParams &p, const CopyRunner &run, std::unique_ptr<MixedBackend> *out, bool *refused);
#if defined(PETSCSPMV_HAVE_CUDA)
/* The device solvers (src/mixed/inner_cg_device.hpp, f3r_device.hpp) on the scaled copy built
   on the device from the source AIJCUSPARSE CSR when Ad is an aijcusparse block not bound to the
   CPU (read in place), else from one upload of Ad's host CSR. */
PetscErrorCode CreateCudaMixedBackend(Mat Ad, const PackSellOptions &opt, const MixedParams &p, const CopyRunner &run, std::unique_ptr<MixedBackend> *out, bool *refused);
#endif

} // namespace glue
} // namespace pspmv
