// The scaled copy and inner solve of PCMIXEDKRYLOV on one backend (host or CUDA): what the PC
// glue (pc_mixedkrylov.cpp) calls. A backend builds and owns the scaled copy (the PackSELL copy
// of the scaled diagonal block): the host one with the core's host builder
// (src/mixed/scaled_copy.hpp) and the host twins of the inner solvers (the host versions that
// the device solvers follow step for step), the CUDA one on the device
// (src/mixed/scaled_copy_device.hpp) from the source AIJCUSPARSE CSR (an aijcusparse block's own
// device arrays, read in place) or from one upload of the block's host CSR (every other block).
// The core's exceptions reach the PC through the CoreRunner it passes (its RunCore: a refusal of
// the data kept for PCSetFailedReason(), other exceptions PETSc errors).
#pragma once
#include <petscmat.h>

#include "core/csr.hpp"
#include "core/format_stats.hpp"
#include "formats/packsell/packsell.hpp"
#include "mixed/inner_solver.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace pspmv {
namespace glue {

enum class InnerMethod : int { CG = 0, F3R = 1 };

/* The inner solver's parameters as the options set them. */
struct MixedParams {
  InnerMethod          method = InnerMethod::F3R; /* never slower than FP64 CG + Jacobi on the shared SPD set (docs/mixed.md) */
  mixed::InnerCgParams cg;
  mixed::F3RParams     f3r;
  PetscBool            monitor = PETSC_FALSE; /* keep the last application's inner residuals */
};

/* What the PC shows of the copy (-ksp_view). */
struct CopyInfo {
  int32_t     rows = 0;
  int64_t     nnz  = 0;
  FormatStats stats;
};

/* Runs f (the PC's RunCore). A core function that throws has changed nothing. An exception that
   refuses the data (a missing, zero, negative or non-finite diagonal entry, a non-finite entry, a
   scaled value outside double's range or the value format's) sets *refused and returns
   PETSC_SUCCESS: no PETSc error, the PC keeps the message and reports the refusal through
   PCSetFailedReason(); the caller stops and returns PETSC_SUCCESS with its own *refused set. Any
   other exception is a PETSc error. */
using CoreRunner = std::function<PetscErrorCode(const std::function<void()> &f, bool *refused)>;

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
  virtual PetscErrorCode UpdateValues(Mat Ad, const CoreRunner &run, bool *pattern_changed, bool *refused) = 0;
  /* Adds the counts since the last call to *stats; residuals: the last application's inner
     residual norms (monitor only; may be empty). */
  virtual PetscErrorCode ReadStats(mixed::InnerStats *stats, std::vector<double> *residuals) = 0;
  /* ||s .* r|| over the local rows (r: a vector whose local part has the copy's rows). */
  virtual PetscErrorCode ScaledNorm(Vec r, PetscReal *norm) = 0;
  virtual const CopyInfo &Copy() const    = 0;
  virtual bool            OnDevice() const = 0; /* the CUDA backend (else the host one) */
};

/* Builds the copy of Ad (the Pmat's diagonal block on this rank, SeqAIJ-based, with the options
   opt) and the inner solver of p. Errors of the core come through run; on any error, and when
   run refused the data (*refused set), *out stays empty. */
/* The host twins of the inner solvers (src/mixed/inner_cg.hpp, f3r.hpp) on the scaled copy
   built on the host. */
PetscErrorCode CreateHostMixedBackend(Mat Ad, const PackSellOptions &opt, const MixedParams &p, const CoreRunner &run, std::unique_ptr<MixedBackend> *out, bool *refused);
#if defined(PETSCSPMV_HAVE_CUDA)
/* The device solvers (src/mixed/inner_cg_device.hpp, f3r_device.hpp) on the scaled copy built
   on the device from the source AIJCUSPARSE CSR when Ad is an aijcusparse block not bound to the
   CPU (read in place), else from one upload of Ad's host CSR. */
PetscErrorCode CreateCudaMixedBackend(Mat Ad, const PackSellOptions &opt, const MixedParams &p, const CoreRunner &run, std::unique_ptr<MixedBackend> *out, bool *refused);
#endif

} // namespace glue
} // namespace pspmv
