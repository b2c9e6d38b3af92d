// KSPMIXEDCG's FP32 V-cycle: a PCMG or PCGAMG preconditioner whose hierarchy (each level's
// operator and interpolation, PETSc's own setup with the user's options) is copied into
// reduced-precision PackSELL copies (src/mixed/mg_cycle.hpp; on the CUDA backend its device twin
// src/mixed/mg_cycle_device.hpp, the copies built on the device from the levels' device CSR) and
// applied in FP32 in the low-precision steps; the FP64 phase, the reliable updates' checks and
// the FP64 fallback keep PETSc's PCApply(). One rank; elsewhere the PC runs in FP64 and -ksp_view
// says why.
#pragma once
#include <petscksp.h>

#include "core_error.hpp"
#include "formats/packsell/packsell.hpp"
#include "mixed/mg_cycle.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace pspmv
{
namespace glue
{

/* A hierarchy's matrices, level 0 the coarsest: A[l] the level's operator, P[l] the
   interpolation from level l - 1 (P[0] null). */
struct MgLevels {
  std::vector<Mat> A, P;
};

/* What the cycle's build threw: a refusal of the levels' data (a diagonal entry, a value out of
   range, an eigenvalue estimate that is not positive) into *why, so that the PC runs in FP64,
   which is always valid; a PETSc or memory error raised. */
PetscErrorCode RefuseOrRaise(const CoreFailure &e, std::string *why);

/* f() with a CSR view of every matrix of levels held at once (A_0, P_0, A_1, P_1, ...; P_0 is
   null): with(M, g) calls g with M's view for its span (a null M: an empty view), store(l, is_P,
   view) keeps it for f. Host views (WithCsr) or device views (the CUDA backend's). */
template <class View>
PetscErrorCode WithLevelViews(const MgLevels &levels, const std::function<PetscErrorCode(Mat, const std::function<PetscErrorCode(const View &)> &)> &with, const std::function<void(size_t, bool, const View &)> &store, const std::function<PetscErrorCode()> &f, size_t k = 0)
{
  if (k == 2 * levels.A.size()) return f();
  const size_t l = k / 2;
  const bool   p = k % 2 == 1;
  return with(p ? levels.P[l] : levels.A[l], [&](const View &v) -> PetscErrorCode {
    store(l, p, v);
    return WithLevelViews<View>(levels, with, store, f, k + 1);
  });
}

#if defined(PETSCSPMV_HAVE_CUDA)
/* The device cycle of the CUDA backend (cuda/ksp_mixedcg_mg_cuda.cpp). */
class MgDeviceCycle {
public:
  virtual ~MgDeviceCycle() = default;
  /* z = M_hat^-1 r on device arrays (launched on PETSc's current stream); coarse(b, x) on device
     arrays. Throws PetscFailure or the coarse solve's exception. */
  virtual void                            Apply(const float *r, float *z, const std::function<void(const double *b, double *x)> &coarse) const = 0;
  virtual std::vector<mixed::MgLevelInfo> Info() const                                                                                         = 0;
  /* mixed::cuda::set_null_space() on PETSc's current stream. Throws PetscFailure (a CUDA error)
     or its FormatError. */
  virtual void SetNullSpace(const std::vector<std::vector<double>> &basis) = 0;
};
/* Builds the device cycle from the levels' device CSR (AIJCUSPARSE's arrays in place, any other
   SeqAIJ level uploaded for the build) on PETSc's current stream; inverse: the dense inverse of
   level dense_level (null: none); *refused_why as MgFp32::Create(). */
PetscErrorCode CreateMgDeviceCycle(const MgLevels &levels, const mixed::MgCycleOptions &o, PetscInt dense_level, const double *inverse, std::unique_ptr<MgDeviceCycle> *out, std::string *refused_why);
#endif

/* The null space of pc's Amat (KSP_PCApply() removes it from every PCApply() result), or null. */
PetscErrorCode PcNullSpace(PC pc, MatNullSpace *ns);

class MgFp32 {
public:
  ~MgFp32();
  /* Whether the PC of ksp (set up) can run as an FP32 V-cycle here: *why is "" when it can, else
     the reason in words ("the smoother of level 2 is KSPRICHARDSON + PCSOR, not Chebyshev +
     Jacobi"). pc of type PCMG or PCGAMG, multiplicative V-cycles with one cycle per apply, every
     level above the coarsest smoothed by KSPCHEBYSHEV + PCJACOBI on the diagonal, the same KSP
     before and after the coarse correction, SeqAIJ-based levels; one rank; a null space of the
     PC's Amat (KSP removes it from every PCApply() result; the cycle then removes it from its
     own, Create()) without a removal function of its own. */
  static PetscErrorCode Check(KSP ksp, PC pc, std::string *why);
  /* Builds the copies from pc's hierarchy (Check() passed) with opt's layout and value format, on
     the host or (device) on the GPU. The highest level with at most dense_coarse_rows rows (and
     every level below it) is solved exactly by its dense inverse (PETSc's LU of a host copy,
     KSPMatSolve() with the identity), one FP64 product per cycle in place of the levels'
     smoothing and the PC's coarse KSP (none so small, or dense_coarse_rows 0: the PC's coarse
     KSP). With a null space on the PC's Amat (of dimension k) the dense level is solved by its
     pseudo-inverse instead (the k null eigenvalues of a symmetric eigendecomposition dropped) and
     the null space is given to the cycle (MgCycle::set_null_space()), which removes it from each
     result as KSP_PCApply() does. Refused (the PC in FP64), because the PC's coarse LU of a
     singular level amplifies the FP32 restriction's rounding beyond FP32's digits (the cycle
     stagnated): a dense level whose LU fails or misses A X = I by more than 1e-6, whose
     pseudo-inverse fails its check, or a null space without a dense level.
     *refused_why: those refusals and a level's data the copies refuse (a range or diagonal
     error), in words: the PC then runs in FP64. Collective on ksp. */
  static PetscErrorCode Create(KSP ksp, PC pc, const PackSellOptions &opt, bool device, PetscInt dense_coarse_rows, std::unique_ptr<MgFp32> *out, std::string *refused_why);
  /* What a cycle copies from pc besides the levels' matrices, as text: the PC's type, the number
     of levels, its Amat's null space (the object) and each level's smoothers (their KSP and PC
     types, their steps). A cycle built under another key
     is stale (a smoother changed after the build, e.g. -mg_levels_ksp_max_it). pc: PCMG-based. */
  static PetscErrorCode Key(PC pc, std::string *key);
  /* z = M_hat^-1 r, one V-cycle in FP32 in the scaled units of KSPMIXEDCG's vectors (rows floats:
     host arrays, device arrays for a cycle built for the device); the coarse solve is pc's coarse
     KSP in FP64. Logs the cycle's flops (and its GPU time outside the coarse solve's own events).
     Throws PetscFailure on a PETSc error. */
  void Apply(const float *r, float *z) const;
  /* The levels for -ksp_view (rows, value format, bytes per nonzero, the coarse level in FP64). */
  PetscErrorCode View(PetscViewer viewer) const;

private:
  MgFp32() = default;
  /* x = A_c^-1 b by the PC's coarse KSP on placed arrays (host, or device for a device cycle) */
  void Coarse(const double *b, double *x) const;

  bool                            device_ = false;
  mixed::MgCycle                  cycle_; /* the host cycle */
  std::vector<mixed::MgLevelInfo> info_;
  PetscLogDouble                  flops_        = 0; /* of one cycle's products */
  PetscInt                        null_vectors_ = 0; /* the null space's basis vectors removed by each apply */
  PetscInt                        steps_        = 0; /* the Chebyshev degree */
#if defined(PETSCSPMV_HAVE_CUDA)
  std::unique_ptr<MgDeviceCycle> dcycle_;
#endif
  KSP coarse_ = nullptr;
  Vec cb_ = nullptr, cx_ = nullptr; /* the coarse solve's vectors (arrays placed) */
};

} // namespace glue
} // namespace pspmv
