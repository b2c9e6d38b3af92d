// The inner solve of PCMIXEDKRYLOV on one backend (host twin or CUDA): what the PC glue
// (pc_mixedkrylov.cpp) calls. The scaled copy itself is built on the host by the core
// (src/mixed/scaled_copy.hpp) and owned by the PC; a backend reads it at creation and at value
// updates.
#pragma once
#include <petscvec.h>

#include "mixed/inner_solver.hpp"
#include "mixed/scaled_copy.hpp"

#include <memory>
#include <vector>

namespace pspmv {
namespace glue {

enum class InnerMethod : int { CG = 0, F3R = 1 };

/* The inner solver's parameters as the options set them. */
struct MixedParams {
  InnerMethod          method = InnerMethod::CG;
  mixed::InnerCgParams cg;
  mixed::F3RParams     f3r;
  PetscBool            monitor = PETSC_FALSE; /* keep the last application's inner residuals */
};

class MixedBackend {
public:
  virtual ~MixedBackend() = default;
  /* z = M(r) on the local rows (r, z: vectors whose local parts have the copy's rows). */
  virtual PetscErrorCode Apply(const MixedParams &p, Vec r, Vec z) = 0;
  /* The copy's values changed (same layout): take them. */
  virtual PetscErrorCode UpdateValues(const mixed::ScaledCopy &c) = 0;
  /* Adds the counts since the last call to *stats; residuals: the last application's inner
     residual norms (monitor only; may be empty). */
  virtual PetscErrorCode ReadStats(mixed::InnerStats *stats, std::vector<double> *residuals) = 0;
  virtual bool           OnDevice() const = 0; /* the CUDA backend (else the host one) */
};

/* The host twin (src/mixed/inner_cg.hpp, f3r.hpp); c must outlive the backend. */
PetscErrorCode CreateHostMixedBackend(const mixed::ScaledCopy &c, const MixedParams &p, std::unique_ptr<MixedBackend> *out);
#if defined(PETSCSPMV_HAVE_CUDA)
/* The device solvers (src/mixed/inner_cg_device.hpp, f3r_device.hpp): uploads c. */
PetscErrorCode CreateCudaMixedBackend(const mixed::ScaledCopy &c, const MixedParams &p, std::unique_ptr<MixedBackend> *out);
#endif

} // namespace glue
} // namespace pspmv
