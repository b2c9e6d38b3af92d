// KSPMIXEDCG's FP32 V-cycle: a PCMG or PCGAMG preconditioner whose hierarchy (each level's
// operator and interpolation, PETSc's own setup with the user's options) is copied into
// reduced-precision PackSELL copies (src/mixed/mg_cycle.hpp) and applied in FP32 in the
// low-precision steps; the FP64 phase, the reliable updates' checks and the FP64 fallback keep
// PETSc's PCApply(). Host backend on one rank; elsewhere the PC runs in FP64 and -ksp_view says why.
#pragma once
#include <petscksp.h>

#include "formats/packsell/packsell.hpp"
#include "mixed/mg_cycle.hpp"

#include <memory>
#include <string>

namespace pspmv
{
namespace glue
{

class MgFp32 {
public:
  ~MgFp32();
  /* Whether the PC of ksp (set up) can run as an FP32 V-cycle here: *why is "" when it can, else
     the reason in words ("the smoother of level 2 is KSPRICHARDSON + PCSOR, not Chebyshev +
     Jacobi"). pc of type PCMG or PCGAMG, multiplicative V-cycles with one cycle per apply, every
     level above the coarsest smoothed by KSPCHEBYSHEV + PCJACOBI on the diagonal, the same KSP
     before and after the coarse correction; one rank; host vectors. */
  static PetscErrorCode Check(KSP ksp, PC pc, std::string *why);
  /* Builds the copies from pc's hierarchy (Check() passed) with opt's layout and value format;
     *refused_why: a level's data the copies refuse (a range or diagonal error, in words): the
     PC then runs in FP64. Collective on ksp. */
  static PetscErrorCode Create(KSP ksp, PC pc, const PackSellOptions &opt, std::unique_ptr<MgFp32> *out, std::string *refused_why);
  /* z = M_hat^-1 r, one V-cycle in FP32 in the scaled units of KSPMIXEDCG's vectors (rows floats);
     the coarse solve is pc's coarse KSP in FP64. Throws PetscFailure on a PETSc error. */
  void Apply(const float *r, float *z) const;
  /* The levels for -ksp_view (rows, value format, bytes per nonzero, the coarse level in FP64). */
  PetscErrorCode View(PetscViewer viewer) const;

private:
  MgFp32() = default;
  mixed::MgCycle cycle_;
  KSP            coarse_ = nullptr;
  Vec            cb_ = nullptr, cx_ = nullptr; /* the coarse solve's vectors (arrays placed) */
};

} // namespace glue
} // namespace pspmv
