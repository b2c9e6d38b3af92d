// KSPMIXEDCG: mixed-precision CG with reliable updates (src/mixed/mixed_cg.hpp, docs/mixed.md).
// CG on D^-1/2 A D^-1/2 (Jacobi-preconditioned CG) whose iteration runs on FP32 vectors with a
// low-precision PackSELL copy of the scaled Pmat; reliable updates recompute r = b - A x in FP64
// with the exact Amat, and only that residual is given to the convergence test and the monitor.
// The guard raises the copy's precision (the start format, then -ksp_mixedcg_guard_value_format,
// then FP64 CG) when the true residual stops following the iterated one; with the FP32 V-cycle of
// a PCMG/PCGAMG PC its levels' copies are raised with it (then the PC in FP64), and a segment that
// stalls checks the V-cycle against the PC in FP64 (mixed_cg.hpp).
//
// MPI: the low-precision operator is the whole matrix: the scaled diagonal block and the scaled
// off-diagonal block (columns numbered as MPIAIJ's halo, garray), with the halo of the FP32
// direction exchanged through a PetscSF over the Pmat's column layout (MPI_FLOAT units); the
// ghost entries of s = D^-1/2 come through the same SF. Dot products are summed over the ranks,
// so every rank takes the same decisions. Both backends: the host one on host arrays, the CUDA
// one with the off-diagonal block (built here by the same builder) uploaded beside its device
// copy, the halo exchanged on device memory (PetscSFBcastWithMemTypeBegin) and each step's
// partial sums reduced over the ranks through the hooks.
//
// Errors: bad options, a Pmat whose diagonal is not positive and finite, a non-finite entry or a
// scaled value outside double or the value format are PETSc errors (raised on every rank); a
// direction with p^T A p <= 0 in FP64 ends the solve with KSP_DIVERGED_INDEFINITE_MAT.
#include <petsc/private/kspimpl.h>
#include <petsc/private/pcimpl.h>
#include <petscsf.h>

#include "block_csr.hpp"
#include "core_error.hpp"
#include "ksp_mixedcg_backend.hpp"
#include "ksp_mixedcg_mg.hpp"
#include "mixed/mixed_cg.hpp"
#include "mixed/scaled_copy.hpp"
#include "solver_common.hpp"
#include "spmvimpl.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>

namespace pspmv
{
namespace glue
{

namespace
{

/* The copy's PackSELL options are -[prefix]ksp_mixedcg_mat_packsell_* */
constexpr const char kCopyOptions[] = "ksp_mixedcg_";

struct KspMixedCg {
  mixed::MixedCgParams params;
  FormatOptions        copy_opts{FormatOf<PackSellModule>()}; /* the start format and the layout */
  std::string          guard_format   = "e8m22";              /* the next precision ("none": FP64 next) */
  PetscInt             backend_choice = BackendAuto;
  PetscInt             check_every    = 8;          /* device: steps between two host checks */
  PetscBool            compensate     = PETSC_TRUE; /* the row-sum compensation */
  PetscBool            dither         = PETSC_TRUE; /* dithered rounding of the copy's values */
  /* the operator as built: level 0 the start format, 1 the guard format, 2 FP64 CG */
  int                                level = 0;
  ValueFormat                        current;
  PetscObjectState                   pmat_state = -1;
  PetscObjectId                      pmat_id    = 0;
  PetscInt                           rows       = 0; /* local rows */
  PetscInt                           builds     = 0;
  PetscSF                            halo       = nullptr;
  PetscInt                           nghost     = 0;
  std::unique_ptr<MixedCgDevice>     device;                     /* the CUDA backend's solver, which holds the copy */
  std::unique_ptr<ScaledCopyBackend> copy;                       /* the copy (host, or CUDA with device); reset first */
  Vec                                w1 = nullptr, w2 = nullptr; /* work vectors the exact product places arrays in */
  mixed::MixedCgResult               last;                       /* the last solve */
  PetscInt                           solves = 0;
  /* the last build refused the Pmat's data (a diagonal entry, a non-finite entry, a scaled
     value out of range): why, in the user's numbering; a block solver ends its solve with
     KSP_DIVERGED_PC_FAILED instead of an error (KSPSolve_MixedCG()) */
  PetscBool   refused = PETSC_FALSE;
  std::string refusal;
  PetscBool   fp32_logged = PETSC_FALSE; /* inside -log_view's KSPMixedCGFP32 event */
  /* the PC is applied in FP64 at every step (any PC but PCNONE and PCJACOBI on the diagonal,
     which are the method's own scaling) */
  PetscBool apply_pc = PETSC_FALSE;
  /* a PCMG/PCGAMG PC's FP32 V-cycle (-ksp_mixedcg_mg_fp32), built for the copy of build number
     mg_builds under mg_key (the PC's MgFp32::Key() and the two options); mg_why: why the PC runs
     in FP64 instead ("" when it does not apply) */
  PetscBool               mg_fp32       = PETSC_TRUE;
  PetscInt                mg_dense_rows = 512;         /* -ksp_mixedcg_mg_dense_coarse */
  PetscBool               delta_given   = PETSC_FALSE; /* -ksp_mixedcg_delta given: also with the FP32 V-cycle */
  std::unique_ptr<MgFp32> mg;
  PetscInt                mg_builds = -1;
  std::string             mg_why, mg_key;
};

KspMixedCg *Data(KSP ksp)
{
  return static_cast<KspMixedCg *>(ksp->data);
}

/* -log_view's KSPMixedCGFP32: the solve's time outside the exact Amat's products (PETSc's MatMult)
   and the copy's builds (KSPMixedCGCopy), i.e. its low-precision steps; opened at the start of a
   solve and closed around each of those (idempotent). */
PetscErrorCode Fp32Log(KSP ksp, PetscBool open)
{
  KspMixedCg *mc = Data(ksp);

  PetscFunctionBegin;
  if (open == mc->fp32_logged) PetscFunctionReturn(PETSC_SUCCESS);
  mc->fp32_logged = open;
  if (open) PetscCall(PetscLogEventBegin(EventMixedCGFP32, ksp, 0, 0, 0));
  else PetscCall(PetscLogEventEnd(EventMixedCGFP32, ksp, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* f() outside the KSPMixedCGFP32 event (an exact product or a build inside a solve). */
template <class F>
PetscErrorCode OutsideFp32(KSP ksp, F &&f)
{
  const PetscBool was = Data(ksp)->fp32_logged;

  PetscFunctionBegin;
  PetscCall(Fp32Log(ksp, PETSC_FALSE));
  const PetscErrorCode ierr = f();
  PetscCall(Fp32Log(ksp, was));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The PackSELL options of the copy at the current level. */
PetscErrorCode LevelOptions(KspMixedCg *mc, PackSellOptions *opt)
{
  PetscFunctionBegin;
  *opt = mc->copy_opts.Of<PackSellModule>();
  if (mc->level == 1) PetscCallCore(PETSC_ERR_ARG_WRONG, opt->value_format = ValueFormat::parse(mc->guard_format));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the guard format is a wider step from the start format (else the guard goes to FP64). */
bool HasWiderFormat(const KspMixedCg *mc)
{
  if (mc->guard_format == "none") return false;
  const ValueFormat start = mc->copy_opts.Of<PackSellModule>().value_format;
  ValueFormat       g;
  try {
    g = ValueFormat::parse(mc->guard_format);
  } catch (...) {
    return false;
  }
  if (!start.lossy()) return false;
  return !g.lossy() || g.mantissa_bits > start.mantissa_bits;
}

PetscErrorCode UseCuda(KSP ksp, PetscBool *cuda)
{
  Mat P;

  PetscFunctionBegin;
  PetscCall(KSPGetOperators(ksp, nullptr, &P));
  PetscCall(UseCudaBackend((PetscObject)ksp, P, Data(ksp)->backend_choice, "-ksp_mixedcg_backend", cuda));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every rank fails when one does (the builds run before collective operations). */
PetscErrorCode Agree(KSP ksp, PetscErrorCode ierr)
{
  PetscFunctionBegin;
  PetscCall(CollectiveError(PetscObjectComm((PetscObject)ksp), "KSPMIXEDCG: building the low-precision copy", ierr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every rank must own as many columns as rows (the scaling s of a row is that of its column).
   Collective: the ranks agree on the verdict, so that every rank errors when one layout is not
   square (a rank-local error would leave the others waiting in the setup's collectives); the
   message names the first such rank. */
PetscErrorCode CheckSquareLayout(KSP ksp, Mat P)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)ksp);
  PetscMPIInt rank, size, first;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  {
    PetscMPIInt mine = P->rmap->n != P->cmap->n ? rank : size;
    PetscCallMPI(MPIU_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
  }
  if (first < size) {
    PetscInt mine[2] = {-1, -1}, at[2];
    if (rank == first) {
      mine[0] = P->rmap->n;
      mine[1] = P->cmap->n;
    }
    PetscCallMPI(MPIU_Allreduce(mine, at, 2, MPIU_INT, MPI_MAX, comm));
    SETERRQ(comm, PETSC_ERR_ARG_SIZ, "KSPMIXEDCG needs the same row and column layout on every rank (rank %d owns %" PetscInt_FMT " rows and %" PetscInt_FMT " columns): create the Pmat with equal local row and column sizes", (int)first, at[0], at[1]);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* op(w1, w2) (a product y = A x, the PC's y = M^-1 x) with x and y placed in the work vectors w1
   and w2 (host arrays, or device arrays when device): the arrays are reset on every path, errors
   included, and the first error is returned, so that a failed operation leaves the work vectors
   usable for the next one. */
template <class Op>
PetscErrorCode PlacedApply(Vec w1, Vec w2, const PetscScalar *x, PetscScalar *y, PetscBool device, Op &&op)
{
  PetscErrorCode ierr, ierr2;

  PetscFunctionBegin;
#if defined(PETSCSPMV_HAVE_CUDA)
  auto place = [device](Vec v, const PetscScalar *a) { return device ? VecCUDAPlaceArray(v, a) : VecPlaceArray(v, a); };
  auto reset = [device](Vec v) { return device ? VecCUDAResetArray(v) : VecResetArray(v); };
#else
  PetscCheck(!device, PETSC_COMM_SELF, PETSC_ERR_SUP, "KSPMIXEDCG: this petscspmv was built without CUDA");
  auto place = [](Vec v, const PetscScalar *a) { return VecPlaceArray(v, a); };
  auto reset = [](Vec v) { return VecResetArray(v); };
#endif
  PetscCall(place(w1, x));
  ierr = place(w2, y);
  if (!ierr) {
    ierr  = op(w1, w2);
    ierr2 = reset(w2);
    if (!ierr) ierr = ierr2;
  }
  ierr2 = reset(w1);
  if (!ierr) ierr = ierr2;
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The Pmat as an AIJ-based matrix (*owned: a conversion to destroy) and its blocks: Ad the
   diagonal block, Ao the off-diagonal one with garray (MPI only; NULL on one rank). */
PetscErrorCode PmatBlocks(KSP ksp, Mat *Ad, Mat *Ao, const PetscInt **garray, Mat *owned)
{
  Mat         P;
  PetscBool   mpi, isaij;
  PetscMPIInt size;
  PetscInt    M, N;

  PetscFunctionBegin;
  *owned  = nullptr;
  *Ao     = nullptr;
  *garray = nullptr;
  PetscCall(KSPGetOperators(ksp, nullptr, &P));
  {
    PetscBool matfree;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)P, &matfree, MATSHELL, MATMFFD, ""));
    PetscCheck(!matfree, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "KSPMIXEDCG builds its low-precision copy from the entries of the Pmat, and a %s matrix has none: give an assembled Pmat (KSPSetOperators(ksp, A, P) with P an AIJ-based matrix)",
               ((PetscObject)P)->type_name);
  }
  PetscCall(MatGetSize(P, &M, &N));
  PetscCheck(M == N, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_SIZ, "KSPMIXEDCG needs a square Pmat (this one is %" PetscInt_FMT " x %" PetscInt_FMT ")", M, N);
  PetscCall(CheckSquareLayout(ksp, P));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)P), &size));
  mpi = size > 1 ? PETSC_TRUE : PETSC_FALSE;
  PetscBool mpiaij;
  PetscCall(PetscStrbeginswith(((PetscObject)P)->type_name, MATSEQAIJ, &isaij));
  PetscCall(PetscStrbeginswith(((PetscObject)P)->type_name, MATMPIAIJ, &mpiaij));
  if (!(mpiaij || (!mpi && isaij))) {
    PetscCall(MatConvert(P, MATAIJ, MAT_INITIAL_MATRIX, owned));
    P = *owned;
    PetscCall(PetscStrbeginswith(((PetscObject)P)->type_name, MATMPIAIJ, &mpiaij));
  }
  if (mpiaij) { /* (also an MPIAIJ matrix on one rank: its diagonal block is the matrix) */
    const PetscErrorCode ierr = MatMPIAIJGetSeqAIJ(P, Ad, Ao, garray);
    if (ierr) (void)MatDestroy(owned);
    PetscCall(ierr);
    if (!mpi) {
      *Ao     = nullptr;
      *garray = nullptr;
    }
  } else *Ad = P;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The CopyRunner of the KSP: runs a build of the core's copy (RunCopyBuild()); its exceptions
   become PETSc errors of this rank naming the Pmat's rows in the user's numbering (gcols: the
   off-diagonal block's garray, its columns' global numbers) and the KSP's options. A refusal of
   the Pmat's data is also kept in mc->refused and mc->refusal. */
PetscErrorCode RunBuild(KSP ksp, const std::function<void()> &f, const PetscInt *gcols, bool *refused_out)
{
  KspMixedCg       *mc     = Data(ksp);
  const char       *prefix = ((PetscObject)ksp)->prefix;
  const std::string pre    = prefix ? prefix : "";
  CopySubject       s{(PetscObject)ksp, ksp->nestlevel, nullptr, "KSPMIXEDCG", "KSPMIXEDCG's low-precision copy", gcols, ""};
  CopyFailure       refused;

  PetscFunctionBegin;
  PetscCall(KSPGetOperators(ksp, nullptr, &s.P));
  PetscCallCXX(s.range_remedy = mc->level == 1 ? " (the guard's raise to -" + pre + "ksp_mixedcg_guard_value_format " + mc->guard_format + ": give it a format that holds these values, or none to go to FP64 CG)" : " (the copy's value format: -" + pre + "ksp_mixedcg_value_format)");
  const PetscErrorCode ierr = RunCopyBuild(s, f, PETSC_TRUE, &refused);
  *refused_out              = refused.refusal;
  if (refused.refusal) {
    mc->refused = PETSC_TRUE;
    mc->refusal = refused.message;
  }
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The scaled off-diagonal block of this rank's rows (several ranks; both backends build it here):
   s on the ghost columns (*s_ghost) from the owners' s (the diagonal copy's, this rank's rows)
   through the halo SF, then mixed::build_scaled_offdiag() of Ao (columns numbered as the halo's
   ghost entries, garray their global numbers) with opt and the copy's dither; *has_off false
   where the rank has no ghost columns. Collective: the build's errors are agreed on over the
   ranks. */
PetscErrorCode BuildOffDiag(KSP ksp, Mat Ao, const PetscInt *garray, const PackSellOptions &opt, const double *s, std::vector<double> *s_ghost, PackSellMatrix *off, bool *has_off)
{
  KspMixedCg    *mc   = Data(ksp);
  PetscErrorCode ierr = PETSC_SUCCESS;
  Mat            P;

  PetscFunctionBegin;
  PetscCall(KSPGetOperators(ksp, nullptr, &P));
  const PetscInt          row0 = P->rmap->rstart;
  const mixed::CopyDither dither{mc->dither == PETSC_TRUE, (int64_t)row0};
  *has_off = false;
  s_ghost->assign((size_t)mc->nghost, 0.0);
  PetscCall(PetscSFBcastBegin(mc->halo, MPIU_REAL, s, s_ghost->data(), MPI_REPLACE));
  PetscCall(PetscSFBcastEnd(mc->halo, MPIU_REAL, s, s_ghost->data(), MPI_REPLACE));
  if (Ao && mc->nghost > 0) {
    const std::vector<int64_t> gcols(garray, garray + mc->nghost);
    bool                       refused = false;
    ierr                               = WithCsr(Ao, [&](const CsrView &B) {
      return RunBuild(
                                      ksp, [&] { *off = mixed::build_scaled_offdiag(B, s, s_ghost->data(), opt, dither, gcols.data()); }, garray, &refused);
    });
    *has_off                           = ierr == PETSC_SUCCESS;
  }
  PetscCall(Agree(ksp, ierr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* As = Pmat s on the arrays of the copy's backend (the row-sum compensation). */
std::function<void(const double *, double *)> PmatProduct(KSP ksp, PetscBool device)
{
  KspMixedCg *mc = Data(ksp);
  return [ksp, mc, device](const double *s, double *As) {
    Mat P;
    PetscCallThrow(KSPGetOperators(ksp, nullptr, &P));
    PetscCallThrow(PlacedApply(mc->w1, mc->w2, s, As, device, [P](Vec v1, Vec v2) { return MatMult(P, v1, v2); }));
  };
}

/* BuildCopy()'s stages, each agreed on over the ranks before the next collective one: the
   diagonal block's copy, on several ranks the off-diagonal block beside it (BuildOffDiag()), the
   row-sum compensation of both. */
PetscErrorCode BuildCopyStages(KSP ksp, Mat Ad, Mat Ao, const PetscInt *garray, const PackSellOptions &opt)
{
  KspMixedCg *mc = Data(ksp);
  Mat         P;
  bool        refused = false;

  PetscFunctionBegin;
  PetscCall(KSPGetOperators(ksp, nullptr, &P));
  const CopyRunner        run = [ksp](const std::function<void()> &f, bool *r) { return RunBuild(ksp, f, nullptr, r); };
  const mixed::CopyDither dither{mc->dither == PETSC_TRUE, (int64_t)P->rmap->rstart};
  PetscCall(Agree(ksp, mc->copy->Build(Ad, opt, dither, run, &refused)));
  if (mc->halo) {
    std::vector<double> s, s_ghost;
    PackSellMatrix      off;
    bool                has_off = false;
    PetscCall(Agree(ksp, mc->copy->Scaling(&s)));
    PetscCall(BuildOffDiag(ksp, Ao, garray, opt, s.data(), &s_ghost, &off, &has_off));
    PetscCall(Agree(ksp, has_off ? mc->copy->SetOffDiag(off) : PETSC_SUCCESS));
  }
  if (mc->compensate) PetscCall(Agree(ksp, mc->copy->Compensate(PmatProduct(ksp, (PetscBool)mc->copy->OnDevice()))));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* An empty copy backend (and the CUDA backend's solver holding its copy) for cuda. */
PetscErrorCode CreateCopyBackend(KSP ksp, PetscBool cuda)
{
  KspMixedCg *mc = Data(ksp);

  PetscFunctionBegin;
#if defined(PETSCSPMV_HAVE_CUDA)
  if (cuda) {
    PetscCall(CreateMixedCgDevice(&mc->device));
    PetscCall(CreateCudaScaledCopy(mc->device.get(), &mc->copy));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#else
  (void)cuda;
#endif
  PetscCallCXX(mc->copy = std::make_unique<HostScaledCopy>());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Builds (collectively) the copy at the current level on the backend of cuda: created when there
   is none (a failed creation leaves none), else rebuilt (the guard's raise). */
PetscErrorCode BuildCopy(KSP ksp, Mat Ad, Mat Ao, const PetscInt *garray, PetscBool cuda)
{
  KspMixedCg     *mc     = Data(ksp);
  const PetscBool create = mc->copy ? PETSC_FALSE : PETSC_TRUE;
  PackSellOptions opt;
  PetscErrorCode  ierr;

  PetscFunctionBegin;
  PetscCall(LevelOptions(mc, &opt));
  ierr = Agree(ksp, create ? CreateCopyBackend(ksp, cuda) : PETSC_SUCCESS); /* every rank, when one failed */
  if (!ierr) ierr = BuildCopyStages(ksp, Ad, Ao, garray, opt);
  if (ierr && create) {
    mc->copy.reset();
    mc->device.reset();
  }
  PetscCall(ierr);
  mc->current = opt.value_format;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The work vectors the exact products place arrays in, of the Pmat's layouts: CUDA vectors for
   the CUDA backend (its arrays are device arrays, placed with VecCUDAPlaceArray, whatever the
   Pmat's own vector type: a host Pmat's MatMult then reads them through PETSc's host copy),
   else the Pmat's own vectors. */
PetscErrorCode CreateWorkVecs(KSP ksp, Mat P, PetscBool cuda, Vec *w1, Vec *w2)
{
  PetscFunctionBegin;
#if defined(PETSCSPMV_HAVE_CUDA)
  if (cuda) {
    PetscCall(VecCreate(PetscObjectComm((PetscObject)P), w1));
    PetscCall(VecSetLayout(*w1, P->cmap));
    PetscCall(VecSetType(*w1, VECCUDA));
    PetscCall(VecCreate(PetscObjectComm((PetscObject)P), w2));
    PetscCall(VecSetLayout(*w2, P->rmap));
    PetscCall(VecSetType(*w2, VECCUDA));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#else
  (void)cuda;
#endif
  (void)ksp;
  PetscCall(MatCreateVecs(P, w1, w2));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The halo SF (MPI) and the operator at the current level, from the Pmat P's blocks (owned: P
   converted, else NULL). Collective. */
PetscErrorCode BuildOperator(KSP ksp, Mat P, Mat owned, Mat Ad, Mat Ao, const PetscInt *garray, PetscBool cuda)
{
  KspMixedCg *mc = Data(ksp);
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &size));
  mc->rows   = P->rmap->n;
  mc->nghost = 0;
  if (size > 1) {
    Mat      Pa = owned ? owned : P;
    PetscInt nb;
    PetscCall(MatGetLocalSize(Ao, nullptr, &nb));
    mc->nghost = nb;
    PetscCall(PetscSFCreate(PetscObjectComm((PetscObject)ksp), &mc->halo));
    PetscCall(PetscSFSetGraphLayout(mc->halo, Pa->cmap, nb, nullptr, PETSC_OWN_POINTER, garray));
    PetscCall(PetscSFSetUp(mc->halo));
  }
  PetscCall(BuildCopy(ksp, Ad, Ao, garray, cuda));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Builds or rebuilds what the solve needs when the Pmat changed (or nothing was built). */
PetscErrorCode EnsureOperator(KSP ksp)
{
  KspMixedCg      *mc = Data(ksp);
  Mat              P, Ad, Ao, owned = nullptr;
  const PetscInt  *garray;
  PetscObjectState state;
  PetscObjectId    id;
  PetscBool        cuda = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(KSPGetOperators(ksp, nullptr, &P));
  PetscCall(PetscObjectStateGet((PetscObject)P, &state));
  PetscCall(PetscObjectGetId((PetscObject)P, &id));
  PetscCall(UseCuda(ksp, &cuda));
  const bool have = mc->copy && mc->copy->OnDevice() == (bool)cuda;
  if (have && state == mc->pmat_state && id == mc->pmat_id) PetscFunctionReturn(PETSC_SUCCESS);
  mc->copy.reset();
  mc->device.reset();
  PetscCall(PetscSFDestroy(&mc->halo));
  mc->level = 0;
  PetscCall(VecDestroy(&mc->w1));
  PetscCall(VecDestroy(&mc->w2));
  PetscCall(CreateWorkVecs(ksp, P, cuda, &mc->w1, &mc->w2)); /* the exact products place arrays in these */
  PetscCall(PmatBlocks(ksp, &Ad, &Ao, &garray, &owned));
  PetscCall(PetscLogEventBegin(EventMixedCGCopy, ksp, P, 0, 0));
  {
    const PetscErrorCode ierr = BuildOperator(ksp, P, owned, Ad, Ao, garray, cuda);
    PetscCall(PetscLogEventEnd(EventMixedCGCopy, ksp, P, 0, 0)); /* on every path, */
    PetscCall(MatDestroy(&owned));                               /* as this */
    PetscCall(ierr);
  }
  mc->pmat_state = state;
  mc->pmat_id    = id;
  mc->builds++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The copy rebuilt at the current level (the guard's raise). Collective. */
PetscErrorCode RaiseBuild(KSP ksp)
{
  KspMixedCg     *mc = Data(ksp);
  Mat             Ad, Ao, owned = nullptr;
  const PetscInt *garray;
  PetscErrorCode  ierr = PETSC_SUCCESS;

  PetscFunctionBegin;
  PetscCall(PmatBlocks(ksp, &Ad, &Ao, &garray, &owned));
  PetscCall(PetscLogEventBegin(EventMixedCGCopy, ksp, 0, 0, 0));
  ierr = BuildCopy(ksp, Ad, Ao, garray, (PetscBool)mc->copy->OnDevice());
  PetscCall(PetscLogEventEnd(EventMixedCGCopy, ksp, 0, 0, 0));
  PetscCall(MatDestroy(&owned));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode EnsureMg(KSP ksp);

/* The guard's raise: the copy, and the FP32 V-cycle's level copies with it, at the guard's format;
   when there is none wider, or a V-cycle in use cannot be rebuilt at it (a level's values refused),
   FP64 CG with the PC in FP64 (*lowp false). Collective. */
PetscErrorCode Raise(KSP ksp, bool *lowp)
{
  KspMixedCg *mc = Data(ksp);

  PetscFunctionBegin;
  *lowp = false;
  if (mc->level == 0 && HasWiderFormat(mc)) {
    PetscErrorCode ierr;
    const bool     had_mg = mc->mg != nullptr;
    mc->level             = 1;
    PetscCall(PetscInfo(ksp, "KSPMIXEDCG guard: the copy's precision is raised to %s\n", mc->guard_format.c_str()));
    ierr = RaiseBuild(ksp);
    if (!ierr) ierr = EnsureMg(ksp); /* the levels at the guard's format (the key holds the level) */
    if (ierr) {
      /* the raise failed (on every rank: the builds agree): the solve ends with this error, and the
         operator, possibly half replaced, is rebuilt at the start format by the next KSPSetUp() or
         KSPSolve(), so the KSP stays usable */
      mc->level      = 0;
      mc->pmat_state = -1;
    }
    PetscCall(ierr);
    if (!had_mg || mc->mg) {
      *lowp = true;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(PetscInfo(ksp, "KSPMIXEDCG guard: the V-cycle cannot run at %s (%s)\n", mc->guard_format.c_str(), mc->mg_why.c_str()));
  }
  mc->level = 2;
  PetscCall(EnsureMg(ksp)); /* the V-cycle's copies released: the PC runs in FP64 */
  PetscCall(PetscInfo(ksp, "KSPMIXEDCG guard: FP64 CG from the current x\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* v[0 .. k) summed or maximised over comm in place (PETSc's MPIU_Allreduce, as the rest of the
   library). */
PetscErrorCode AllreduceInPlace(MPI_Comm comm, double *v, int k, MPI_Op op)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (size > 1) PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, v, k, MPI_DOUBLE, op, comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

mixed::MixedCgReason ToCore(KSPConvergedReason r)
{
  if (r == KSP_CONVERGED_ITERATING) return mixed::MixedCgReason::Iterating;
  return r > 0 ? mixed::MixedCgReason::ConvergedRtol : mixed::MixedCgReason::DivergedDtol;
}

/* The hooks the solvers (host twin and device driver) call: the exact product with the Amat on
   arrays of the solution's layout and memory, the convergence test and monitor of the KSP, the
   reductions, the guard's raise. */
MixedCgHooks Hooks(KSP ksp)
{
  KspMixedCg  *mc   = Data(ksp);
  MPI_Comm     comm = PetscObjectComm((PetscObject)ksp);
  MixedCgHooks h;
  PetscMPIInt  size = 1;

  if (MPI_Comm_size(comm, &size) != MPI_SUCCESS) throw PetscFailure{PETSC_ERR_MPI};
  auto exact = [ksp, mc](PetscBool device) {
    return [ksp, mc, device](const double *x, double *y) {
      Mat A;
      PetscCallThrow(KSPGetOperators(ksp, &A, nullptr));
      PetscCallThrow(OutsideFp32(ksp, [&] { return PlacedApply(mc->w1, mc->w2, x, y, device, [ksp, A](Vec v1, Vec v2) { return KSP_MatMult(ksp, A, v1, v2); }); }));
    };
  };
  /* the PC in FP64 on the unscaled system (the core scales and narrows around it); unset for the
     method's own Jacobi scaling */
  auto pc = [ksp, mc](PetscBool device) {
    return [ksp, mc, device](const double *x, double *y) { PetscCallThrow(OutsideFp32(ksp, [&] { return PlacedApply(mc->w1, mc->w2, x, y, device, [ksp](Vec v1, Vec v2) { return KSP_PCApply(ksp, v1, v2); }); })); };
  };
  h.exact_product = exact(PETSC_FALSE);
  if (mc->apply_pc) h.precondition = pc(PETSC_FALSE);
#if defined(PETSCSPMV_HAVE_CUDA)
  h.exact_product_device = exact(PETSC_TRUE);
  if (mc->apply_pc) h.precondition_device = pc(PETSC_TRUE);
#endif
  if (size > 1) { /* one rank: unset (the device loop then adds no host round trip) */
    h.allreduce_sum = [comm](double *v, int k) { PetscCallThrow(AllreduceInPlace(comm, v, k, MPI_SUM)); };
    h.allreduce_max = [comm](double *v, int k) { PetscCallThrow(AllreduceInPlace(comm, v, k, MPI_MAX)); };
  }
#if defined(PETSCSPMV_HAVE_CUDA)
  /* the FP32 halo of the direction on device arrays (the CUDA backend; PETSc stages it through
     the host when MPI is not GPU-aware), on PETSc's stream as MatMult_MPIAIJCUSPARSE's scatter */
  if (mc->halo) {
    h.halo_begin_device = [mc](const float *p, float *ghost) { PetscCallThrow(PetscSFBcastWithMemTypeBegin(mc->halo, MPI_FLOAT, PETSC_MEMTYPE_CUDA, p, PETSC_MEMTYPE_CUDA, ghost, MPI_REPLACE)); };
    h.halo_end_device   = [mc](const float *p, float *ghost) { PetscCallThrow(PetscSFBcastEnd(mc->halo, MPI_FLOAT, p, ghost, MPI_REPLACE)); };
  }
#endif
  h.raise_precision = [ksp]() {
    bool lowp = false;
    PetscCallThrow(OutsideFp32(ksp, [&] { return Raise(ksp, &lowp); }));
    return lowp;
  };
  h.converged = [ksp](int64_t its, double rn) {
    ksp->its   = (PetscInt)its;
    ksp->rnorm = (PetscReal)rn;
    PetscCallThrow((*ksp->converged)(ksp, (PetscInt)its, (PetscReal)rn, &ksp->reason, ksp->cnvP));
    return ToCore(ksp->reason);
  };
  h.monitor = [ksp](int64_t its, double rn) {
    ksp->its   = (PetscInt)its;
    ksp->rnorm = (PetscReal)rn;
    PetscCallThrow(KSPLogResidualHistory(ksp, (PetscReal)rn));
    PetscCallThrow(KSPMonitor(ksp, (PetscInt)its, (PetscReal)rn));
  };
  /* The level at which the KSP's test converges, for the reliable-update trigger: the default
     test's own ttol (max(rtol rnorm0, abstol), its rnorm0 being ||b|| with a nonzero initial guess
     unless KSPConvergedDefaultSetUIRNorm()/SetUMIRNorm() say otherwise), which it sets at step 0;
     another test: max(rtol ||r_0||, abstol). */
  h.target = [ksp](double rn0) {
    if (ksp->converged == KSPConvergedDefault) return (double)ksp->ttol;
    return std::max((double)ksp->rtol * rn0, (double)ksp->abstol);
  };
  return h;
}

/* Whether the PC's type is PETSc's default, which PCSetFromOptions() or PCSetUp() gives a PC
   without a type (ILU or ICC on one rank, block Jacobi on several, PCMAT for a matrix with a
   solve), rather than one the user chose: no -pc_type in the options database under the PC's
   prefix and a type among those defaults. (PETSc records no difference: a program's
   PCSetType(pc, PCILU) without the option reads as the default too.) */
PetscErrorCode PCTypeIsDefault(PC pc, PetscBool *isdefault)
{
  PetscBool set = PETSC_FALSE, deflt = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(PetscOptionsHasName(((PetscObject)pc)->options, ((PetscObject)pc)->prefix, "-pc_type", &set));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &deflt, PCILU, PCICC, PCBJACOBI, PCMAT, ""));
  *isdefault = (PetscBool)(!set && deflt);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The method's own Jacobi scaling is its preconditioner for PCNONE and PCJACOBI on the diagonal
   (-pc_jacobi_abs and -pc_jacobi_fixdiagonal change nothing on the positive diagonal the method
   needs); any other PC (another -pc_jacobi_type too) is applied at every step (mc->apply_pc, set
   from the PC's type at each solve: the PC may change after the setup). */
PetscErrorCode SetApplyPC(KSP ksp)
{
  KspMixedCg *mc = Data(ksp);
  PC          pc;
  PetscBool   own, isjacobi;

  PetscFunctionBegin;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &own, PCNONE, PCJACOBI, ""));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCJACOBI, &isjacobi));
  if (isjacobi) {
    PCJacobiType type;
    PetscCall(PCJacobiGetType(pc, &type));
    own = (PetscBool)(type == PC_JACOBI_DIAGONAL);
  }
  mc->apply_pc = (PetscBool)!own;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* At the setup: a default PC the user did not choose (PETSc's ILU, ICC or block Jacobi, set
   before -ksp_type mixedcg was read) gives way to PCJACOBI, the method's fast path. */
PetscErrorCode CheckPC(KSP ksp)
{
  PC          pc;
  PetscBool   own, isdefault = PETSC_FALSE;
  const char *prefix = ((PetscObject)ksp)->prefix ? ((PetscObject)ksp)->prefix : "";

  PetscFunctionBegin;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &own, PCNONE, PCJACOBI, ""));
  if (!own) PetscCall(PCTypeIsDefault(pc, &isdefault));
  if (isdefault) {
    PetscCall(PetscInfo(ksp, "KSPMIXEDCG: the preconditioner %s is PETSc's default, not one chosen with -%spc_type: PCJACOBI instead (the method's own Jacobi scaling)\n", ((PetscObject)pc)->type_name, prefix));
    PetscCall(PCSetType(pc, PCJACOBI));
  }
  PetscCall(SetApplyPC(ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPSetUp_MixedCG_Body(KSP ksp)
{
  PetscFunctionBegin;
  PetscCall(CheckPC(ksp));
  PetscCall(EnsureOperator(ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Runs body (the setup or the solve). A block solver (PCBJACOBI's, PCASM's: on one rank of a
   parallel solve) does not raise a refusal of its block's data, which would stop this rank
   alone while the others wait: the solve ends with KSP_DIVERGED_PC_FAILED, which PETSc's block
   preconditioners turn into a failed PC on every rank (PETSc's convention for a failed
   preconditioner; -ksp_error_if_not_converged raises it instead). Its other errors are raised
   as they are. */
template <class Body>
PetscErrorCode RunRefusable(KSP ksp, Body &&body)
{
  KspMixedCg *mc    = Data(ksp);
  int         rank  = 0;
  const bool  block = IsBlockSolver((PetscObject)ksp, ksp->nestlevel, &rank) && !ksp->errorifnotconverged;

  PetscFunctionBegin;
  mc->refused = PETSC_FALSE;
  if (!block) {
    PetscCall(CallCatching("KSPMIXEDCG", body));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, nullptr)); /* nothing printed for a refusal */
  const PetscErrorCode ierr = CallCatching("KSPMIXEDCG", body);
  PetscCall(PetscPopErrorHandler());
  if (ierr && mc->refused) {
    ksp->reason = KSP_DIVERGED_PC_FAILED;
    ksp->its    = 0;
    PetscCall(PetscInfo(ksp, "KSPMIXEDCG refused its block (KSP_DIVERGED_PC_FAILED): %s\n", mc->refusal.c_str()));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (ierr) {
    PetscSpMVErrorText text = nullptr;
    PetscCall(PetscErrorMessage(ierr, nullptr, &text));
    SETERRQ(PETSC_COMM_SELF, ierr, "%s", text ? text : "KSPMIXEDCG failed");
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPSetUp_MixedCG(KSP ksp)
{
  PetscFunctionBegin;
  PetscCall(RunRefusable(ksp, [ksp]() { return KSPSetUp_MixedCG_Body(ksp); }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The reliable updates' delta of a solve: the option's, or, not given, kMgDelta with the FP32
   V-cycle. A V-cycle reduces the residual about tenfold per step: at 0.1 nearly every step would
   be an update, each with an exact product and one more V-cycle. Smaller is bounded by the copy:
   a segment's departure grows as the copy's unit roundoff over the segment's reduction (which
   overshoots delta up to tenfold), and at 0.001 the e8m14 copy's passes the guard's 0.05 (a raise
   on lap7 32^3 -var_coeff); 0.01 stays below it. */
constexpr double kMgDelta = 1e-2;
double           Delta(const KspMixedCg *mc)
{
  return mc->mg && !mc->delta_given ? kMgDelta : mc->params.delta;
}

/* The FP32 V-cycle of a PCMG/PCGAMG PC, (re)built from the PC's hierarchy (set up by
   KSPSetUp() before the solve) for each new copy of the Pmat, on the copy's backend (host or CUDA);
   one rank (elsewhere, or refused by a level's data, the PC runs in FP64 and mc->mg_why says why). */
PetscErrorCode EnsureMg(KSP ksp)
{
  KspMixedCg *mc = Data(ksp);
  PC          pc;
  PetscBool   mg;

  PetscFunctionBegin;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &mg, PCMG, PCGAMG, ""));
  if (!mc->apply_pc || !mg) {
    mc->mg.reset();
    mc->mg_why.clear();
    mc->mg_builds = -1;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  std::string key;
  PetscCall(MgFp32::Key(pc, &key));
  key += " fp32 " + std::to_string((int)mc->mg_fp32) + " dense " + std::to_string((long long)mc->mg_dense_rows) + " level " + std::to_string(mc->level);
  if (mc->mg_builds == mc->builds && mc->mg_key == key) PetscFunctionReturn(PETSC_SUCCESS); /* built, or refused, for this copy, guard level, PC, smoothers and options */
  const std::string refused = mc->mg ? std::string() : mc->mg_why;                          /* why an earlier level had no cycle */
  mc->mg.reset();
  mc->mg_builds = -1;
  mc->mg_why.clear();
  if (!mc->mg_fp32) mc->mg_why = "-ksp_mixedcg_mg_fp32 false";
  else if (mc->level == 2) mc->mg_why = refused.empty() ? "the guard's FP64 fallback (FP64 CG with the PC in FP64)" : refused + "; then the guard's FP64 fallback";
  else PetscCall(MgFp32::Check(ksp, pc, &mc->mg_why));
  if (mc->mg_why.empty()) {
    PackSellOptions opt;
    PetscCall(LevelOptions(mc, &opt));
    PetscCall(PetscLogEventBegin(EventMixedCGCopy, ksp, 0, 0, 0));
    const PetscErrorCode ierr = MgFp32::Create(ksp, pc, opt, mc->copy->OnDevice(), mc->mg_dense_rows, &mc->mg, &mc->mg_why);
    PetscCall(PetscLogEventEnd(EventMixedCGCopy, ksp, 0, 0, 0));
    PetscCall(ierr);
  }
  if (!mc->mg_why.empty()) PetscCall(PetscInfo(ksp, "KSPMIXEDCG: the PC's V-cycle runs in FP64: %s\n", mc->mg_why.c_str()));
  mc->mg_builds = mc->builds; /* (not after an error: the next solve tries again) */
  mc->mg_key    = key;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPSolve_MixedCG_Body(KSP ksp)
{
  KspMixedCg          *mc = Data(ksp);
  Vec                  x = ksp->vec_sol, b = ksp->vec_rhs;
  mixed::MixedCgParams p = mc->params;
  mixed::MixedCgResult res;
  PetscErrorCode       ierr = PETSC_SUCCESS;

  PetscFunctionBegin;
  PetscCall(EnsureOperator(ksp));
  PetscCall(SetApplyPC(ksp));
  PetscCall(EnsureMg(ksp));
  if (ksp->guess_zero) PetscCall(VecSet(x, 0.0));
  ksp->its           = 0;
  ksp->rnorm         = 0;
  ksp->reason        = KSP_CONVERGED_ITERATING;
  p.delta            = Delta(mc);
  p.rtol             = (double)ksp->rtol;
  p.atol             = (double)ksp->abstol;
  p.max_it           = (int64_t)ksp->max_it;
  p.start_fp64       = mc->level == 2;
  MixedCgHooks hooks = Hooks(ksp);
  PetscCall(Fp32Log(ksp, PETSC_TRUE));
  PetscCheck(mc->copy, PETSC_COMM_SELF, PETSC_ERR_PLIB, "KSPMIXEDCG: no operator was built");
  if (mc->copy->OnDevice()) {
#if defined(PETSCSPMV_HAVE_CUDA)
    if (mc->mg) hooks.precondition_lowp_device = [mc](const float *r, float *z) { mc->mg->Apply(r, z); }; /* mc->mg: a raise rebuilds it */
    ierr = mc->device->Solve(ksp, p, hooks, (PetscInt)mc->check_every, mc->copy->Info(), &res);
#endif
  } else {
    const PetscScalar                          *ba;
    PetscScalar                                *xa;
    HostScaledCopy                             &host = static_cast<HostScaledCopy &>(*mc->copy);
    mixed::MixedCgOperators                     ops  = hooks;         /* the hooks, and the host copy's product: */
    std::function<void(const float *, float *)> halo_begin, halo_end; /* the FP32 halo of the direction (several ranks) */
    if (mc->halo) {
      halo_begin = [mc](const float *pp, float *ghost) { PetscCallThrow(PetscSFBcastBegin(mc->halo, MPI_FLOAT, pp, ghost, MPI_REPLACE)); };
      halo_end   = [mc](const float *pp, float *ghost) { PetscCallThrow(PetscSFBcastEnd(mc->halo, MPI_FLOAT, pp, ghost, MPI_REPLACE)); };
    }
    ops.lowp_product = [&host, &halo_begin, &halo_end](const float *pp, float *w) { host.Product(pp, w, halo_begin, halo_end); };
    if (mc->mg) ops.precondition_lowp = [mc](const float *r, float *z) { mc->mg->Apply(r, z); }; /* mc->mg: a raise rebuilds it */
    /* s stays valid through a raise: the copy of the next level has the same s */
    const std::vector<double> s = host.Copy().s;
    PetscCall(VecGetArrayRead(b, &ba));
    ierr = VecGetArray(x, &xa);
    if (ierr) (void)VecRestoreArrayRead(b, &ba);
    PetscCall(ierr);
    ierr = CallCatching("KSPMIXEDCG", [&]() {
      res = mixed::mixed_cg((size_t)mc->rows, s.data(), ba, xa, p, ops);
      return PETSC_SUCCESS;
    });
    PetscCall(VecRestoreArray(x, &xa));
    PetscCall(VecRestoreArrayRead(b, &ba));
    /* the flops of the low-precision steps: the product and about 12 vector flops per row */
    PetscCall(PetscLogFlops((PetscLogDouble)res.lowp_its * (2.0 * (PetscLogDouble)mc->copy->Info().nnz + 12.0 * (PetscLogDouble)mc->rows)));
  }
  PetscCall(Fp32Log(ksp, PETSC_FALSE));
  PetscCall(ierr);
  mc->last = res;
  mc->solves++;
  ksp->its   = (PetscInt)res.its;
  ksp->rnorm = (PetscReal)res.rnorm;
  switch (res.reason) {
  case mixed::MixedCgReason::DivergedIts:
    ksp->reason = KSP_DIVERGED_ITS;
    break;
  case mixed::MixedCgReason::DivergedNanOrInf:
    ksp->reason = KSP_DIVERGED_NANORINF;
    break;
  case mixed::MixedCgReason::DivergedIndefinite:
    ksp->reason = KSP_DIVERGED_INDEFINITE_MAT;
    break;
  default:
    break; /* the KSP's own test set ksp->reason */
  }
  /* later solves with this Pmat start in FP64 (the precision reached is kept: docs/mixed.md) */
  if (res.fp64 && mc->level < 2) mc->level = 2;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSPSolve() locks b for reading before it calls this and unlocks it only when this succeeds:
   on an error the lock is released here, so that the caller's b stays usable (VecSet(b)). */
PetscErrorCode KSPSolve_MixedCG(KSP ksp)
{
  PetscFunctionBegin;
  const PetscErrorCode ierr = RunRefusable(ksp, [ksp]() { return KSPSolve_MixedCG_Body(ksp); });
  PetscCall(Fp32Log(ksp, PETSC_FALSE)); /* (closed already unless the solve stopped early) */
  if (ierr) PetscCall(VecLockReadPop(ksp->vec_rhs));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPSetFromOptions_MixedCG_Body(KSP ksp, PetscSpMVOptionItems PetscOptionsObject)
{
  KspMixedCg   *mc    = Data(ksp);
  PetscReal     delta = mc->params.delta, ratio = mc->params.guard_ratio, departure = mc->params.guard_departure, pc_departure = mc->params.guard_pc_departure;
  PetscInt      strikes = mc->params.guard_strikes, pc_steps = (PetscInt)mc->params.guard_pc_steps, backend = mc->backend_choice, every = mc->check_every, dense_rows = mc->mg_dense_rows;
  char          vf[64], gf[64];
  PetscBool     set, dset, vfset, gfset, comp = mc->compensate, dith = mc->dither, mg_fp32 = mc->mg_fp32;
  FormatOptions o = mc->copy_opts;

  PetscFunctionBegin;
  PetscCall(PetscStrncpy(vf, o.GetString("value_format").c_str(), sizeof(vf)));
  PetscCall(PetscStrncpy(gf, mc->guard_format.c_str(), sizeof(gf)));
  PetscOptionsHeadBegin(PetscOptionsObject, "KSPMIXEDCG (petscspmv) options");
  PetscCall(PetscOptionsReal("-ksp_mixedcg_delta", "Reliable update when the iterated residual falls below delta times its largest value since the last one (not given: 0.1, 0.01 with the FP32 V-cycle)", "KSPMIXEDCG", delta, &delta, &dset));
  PetscCall(PetscOptionsString("-ksp_mixedcg_value_format", "Value format of the low-precision copy: e8m14, fp16, bf16, e8m<m> (7..22) or exact", "KSPMIXEDCG", vf, vf, sizeof(vf), &vfset));
  PetscCall(PetscOptionsString("-ksp_mixedcg_guard_value_format", "The wider value format the guard raises the copy to (none: straight to FP64 CG)", "KSPMIXEDCG", gf, gf, sizeof(gf), &gfset));
  PetscCall(PetscOptionsReal("-ksp_mixedcg_guard_ratio", "A segment is lossy when it needs more than this many times the iterations per decade of true residual that the iterated residual predicts (0: only a growing true residual)", "KSPMIXEDCG", ratio, &ratio, &set));
  PetscCall(PetscOptionsReal("-ksp_mixedcg_guard_departure", "A segment is lossy (and raises at once) when the true residual departs from the iterated one by more than this relative norm (0: not this test)", "KSPMIXEDCG", departure, &departure, &set));
  PetscCall(PetscOptionsInt("-ksp_mixedcg_guard_strikes", "Lossy segments in a row that raise the precision", "KSPMIXEDCG", strikes, &strikes, &set));
  PetscCall(PetscOptionsInt("-ksp_mixedcg_guard_pc_steps", "With the FP32 V-cycle: a segment of this many steps without a reliable update ends with one, and the V-cycle is checked against the PC in FP64 (0: never)", "KSPMIXEDCG", pc_steps, &pc_steps, &set));
  PetscCall(PetscOptionsReal("-ksp_mixedcg_guard_pc_departure", "With the FP32 V-cycle: the check of a stalled segment raises the precision when the V-cycle and the PC in FP64 differ by more than this relative norm (0: no check)", "KSPMIXEDCG", pc_departure, &pc_departure, &set));
  PetscCall(PetscOptionsEList("-ksp_mixedcg_backend", "Where the solve runs: auto (CUDA when the Pmat's vectors are CUDA vectors), host or cuda", "KSPMIXEDCG", BackendNames, 3, BackendNames[backend], &backend, &set));
  PetscCall(PetscOptionsBool("-ksp_mixedcg_dither", "Round the copy's values up or down by a symmetric pseudo-random dither (unbiased) instead of to nearest (whose equal errors on equal values act as a scaling of a constant-coefficient stencil)", "KSPMIXEDCG", dith, &dith, &set));
  PetscCall(PetscOptionsBool("-ksp_mixedcg_rowsum_compensation", "Add the copy's rounding of each row sum back as an FP32 diagonal (the smooth modes of PDE matrices then see no error of the copy)", "KSPMIXEDCG", comp, &comp, &set));
  PetscCall(PetscOptionsBool("-ksp_mixedcg_mg_fp32", "With PCMG or PCGAMG: run the V-cycle in FP32 on reduced-precision copies of the levels in the low-precision steps (false: the PC in FP64)", "KSPMIXEDCG", mg_fp32, &mg_fp32, &set));
  PetscCall(PetscOptionsInt("-ksp_mixedcg_mg_dense_coarse", "With the FP32 V-cycle: the highest level with at most this many rows is solved exactly by its dense FP64 inverse (0: the PC's coarse solver)", "KSPMIXEDCG", dense_rows, &dense_rows, &set));
  PetscCall(PetscOptionsInt("-ksp_mixedcg_check_every", "CUDA backend on one rank: CG steps launched between two host checks of the device's state (several ranks check after every step)", "KSPMIXEDCG", every, &every, &set));
  PetscOptionsHeadEnd();
  PetscCheck(delta > 0 && delta < 1, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "-ksp_mixedcg_delta %g is out of range: use a reduction factor in (0, 1), e.g. 0.1", (double)delta);
  PetscCheck(ratio >= 0 && std::isfinite((double)ratio), PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "-ksp_mixedcg_guard_ratio %g is out of range: use 0 (off) or a ratio > 1, e.g. 1.5", (double)ratio);
  PetscCheck(ratio == 0 || ratio > 1, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "-ksp_mixedcg_guard_ratio %g is out of range: a ratio <= 1 judges every segment lossy; use 0 (off) or a ratio > 1, e.g. 1.5", (double)ratio);
  PetscCheck(departure >= 0 && departure < 1e300, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "-ksp_mixedcg_guard_departure %g is out of range: use 0 (off) or a relative norm > 0, e.g. 0.05", (double)departure);
  PetscCheck(strikes >= 1 && strikes <= 1000, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "-ksp_mixedcg_guard_strikes %" PetscInt_FMT " is out of range: use 1 to 1000", strikes);
  PetscCheck(pc_departure >= 0 && pc_departure < 1e300, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "-ksp_mixedcg_guard_pc_departure %g is out of range: use 0 (no check) or a relative norm > 0, e.g. 0.2", (double)pc_departure);
  PetscCheck(pc_steps >= 0 && pc_steps <= 1000000, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "-ksp_mixedcg_guard_pc_steps %" PetscInt_FMT " is out of range: use 0 (never) or 1 to 1000000 steps", pc_steps);
  PetscCheck(dense_rows >= 0 && dense_rows <= 2048, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "-ksp_mixedcg_mg_dense_coarse %" PetscInt_FMT " is out of range: use 0 (the PC's coarse solver) to 2048 rows (the inverse is dense: 8 n^2 bytes read per V-cycle)", dense_rows);
  PetscCheck(every >= 1 && every <= 10000, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "-ksp_mixedcg_check_every %" PetscInt_FMT " is out of range: use 1 to 10000 steps", every);
  if (vfset) PetscCallCore(PETSC_ERR_ARG_WRONG, o.Set("value_format", 0, vf, false));
  PetscCall(ReadFormatOptions((PetscObject)ksp, kCopyOptions, PetscOptionsObject, &o));
  const ValueFormat start = o.Of<PackSellModule>().value_format; /* the copy's start format, after both options */
  if (vfset) {
    ValueFormat a;
    PetscCallCore(PETSC_ERR_ARG_WRONG, a = ValueFormat::parse(vf));
    PetscCheck(a == start, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_INCOMP, "-ksp_mixedcg_value_format %s and -ksp_mixedcg_mat_packsell_value_format %s name different formats for the copy: give one of them", vf, start.name().c_str());
  }
  if (gfset) {
    PetscBool none;
    PetscCall(PetscStrcmp(gf, "none", &none));
    if (!none) {
      ValueFormat g;
      PetscCallCore(PETSC_ERR_ARG_WRONG, g = ValueFormat::parse(gf));
      PetscCheck(g.lossy(), PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_WRONG, "-ksp_mixedcg_guard_value_format %s: use a lossy format wider than the start format (e.g. e8m22), or none to go straight to FP64 CG", gf);
      PetscCheck(!start.lossy() || g.mantissa_bits > start.mantissa_bits, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_WRONG, "-ksp_mixedcg_guard_value_format %s has no more mantissa bits than the start format %s: use a wider lossy format (e.g. e8m22), or none to go straight to FP64 CG", gf,
                 start.name().c_str());
    }
  }
  if (o != mc->copy_opts || (gfset && mc->guard_format != gf) || backend != mc->backend_choice || comp != mc->compensate || dith != mc->dither) {
    mc->compensate     = comp;
    mc->dither         = dith;
    mc->copy_opts      = o;
    mc->guard_format   = gf;
    mc->backend_choice = backend;
    mc->pmat_state     = -1; /* rebuild at the next setup */
    mc->copy.reset();
    mc->device.reset();
  }
  mc->params.delta = (double)delta;
  if (dset) mc->delta_given = PETSC_TRUE;
  mc->params.guard_ratio        = (double)ratio;
  mc->params.guard_departure    = (double)departure;
  mc->params.guard_strikes      = (int)strikes;
  mc->params.guard_pc_steps     = (int64_t)pc_steps;
  mc->params.guard_pc_departure = (double)pc_departure;
  mc->check_every               = every;
  mc->mg_fp32                   = mg_fp32;
  mc->mg_dense_rows             = dense_rows;
  PetscFunctionReturn(PETSC_SUCCESS);
}

std::string LevelName(const KspMixedCg *mc)
{
  return mc->level == 2 ? std::string("FP64 (the exact matrix)") : mc->current.name();
}

PetscErrorCode KSPView_MixedCG_Body(KSP ksp, PetscViewer viewer)
{
  KspMixedCg *mc = Data(ksp);
  PetscBool   ascii;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &size));
  const ValueFormat start = mc->copy_opts.Of<PackSellModule>().value_format;
  PetscCall(ViewVersion(viewer));
  {
    /* before the first solve the FP32 V-cycle is not built yet: say what delta it will bring */
    PC        pc;
    PetscBool mgpc = PETSC_FALSE;
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &mgpc, PCMG, PCGAMG, ""));
    const char *note = Delta(mc) != mc->params.delta ? " (the FP32 V-cycle's default)" : (!mc->mg && !mc->delta_given && mc->mg_fp32 && mgpc && size == 1 ? " (0.01 once the FP32 V-cycle is built, in the first solve)" : "");
    PetscCall(PetscViewerASCIIPrintf(viewer, "  CG on D^-1/2 A D^-1/2 (Jacobi) with FP32 vectors, FP64 solution; reliable updates at delta %g%s\n", Delta(mc), note));
  }
  if (mc->apply_pc) {
    PC pc;
    PetscCall(KSPGetPC(ksp, &pc));
    if (mc->mg) {
      PetscCall(PetscViewerASCIIPrintf(viewer, "  preconditioner %s: in the low-precision steps its V-cycle in FP32 (in D^-1/2 A D^-1/2's units D^1/2 M^-1 D^1/2)\n", ((PetscObject)pc)->type_name));
      PetscCall(mc->mg->View(viewer));
    } else {
      PetscCall(PetscViewerASCIIPrintf(viewer, "  preconditioner %s applied in FP64 at every step (the FP32 residual widened, M^-1 r narrowed to FP32; in D^-1/2 A D^-1/2's units D^1/2 M^-1 D^1/2)\n", ((PetscObject)pc)->type_name));
      if (!mc->mg_why.empty()) PetscCall(PetscViewerASCIIPrintf(viewer, "  its V-cycle runs in FP64: %s\n", mc->mg_why.c_str()));
    }
  } else PetscCall(PetscViewerASCIIPrintf(viewer, "  preconditioner: the method's own Jacobi scaling (PCNONE and PCJACOBI on the diagonal run the same method)\n"));
  if (start.lossy())
    PetscCall(PetscViewerASCIIPrintf(viewer, "  low-precision operator: PackSELL copy of D^-1/2 Pmat D^-1/2 (%s), LOSSY value format %s (unit roundoff %.3g)\n", mc->copy_opts.Describe().c_str(), start.name().c_str(), start.unit_roundoff()));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "  low-precision operator: PackSELL copy of D^-1/2 Pmat D^-1/2 (%s), FP64 values rounded to FP32 in the products\n", mc->copy_opts.Describe().c_str()));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  rounding of the copy's values: %s; row-sum compensation: %s\n", mc->dither ? "dithered (unbiased, symmetric)" : "to nearest", mc->compensate ? "on (the copy's rounding of each row sum added back as an FP32 diagonal)" : "off"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  LOSSY: only the steps between reliable updates use the copy; the reliable updates, the convergence test and the monitor use the exact Amat in FP64\n"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  guard: departure %g (at once), rate ratio %g (%d segments in a row); raises the copy to %s\n", mc->params.guard_departure, mc->params.guard_ratio, mc->params.guard_strikes,
                                   HasWiderFormat(mc) ? (mc->guard_format + (mc->mg ? " (the FP32 V-cycle's levels with it)" : "") + ", then FP64 CG").c_str() : "FP64 CG"));
  if (mc->mg && mc->params.guard_pc_steps > 0 && mc->params.guard_pc_departure > 0)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  guard of the FP32 V-cycle: after %" PetscInt64_FMT " steps without a reliable update, one, and the V-cycle checked against the PC in FP64 (departure %g raises)\n", (PetscInt64)mc->params.guard_pc_steps,
                                     mc->params.guard_pc_departure));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  backend %s%s\n", mc->copy && mc->copy->OnDevice() ? "CUDA" : "host", size > 1 ? "; MPI: the whole matrix (diagonal and off-diagonal blocks), the halo exchanged in FP32 through PetscSF" : ""));
  if (mc->copy && mc->copy->OnDevice()) {
    if (size > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "  host checks every step (several ranks: each step's dot products are summed over the ranks on the host)\n"));
    else PetscCall(PetscViewerASCIIPrintf(viewer, "  host checks every %" PetscInt_FMT " steps\n", mc->check_every));
  }
  if (mc->copy) PetscCall(PetscViewerASCIIPrintf(viewer, "  operator now: %s; rank 0: %" PetscInt_FMT " rows, %" PetscInt64_FMT " nonzeros; builds %" PetscInt_FMT "\n", LevelName(mc).c_str(), mc->rows, (PetscInt64)mc->copy->Info().nnz, mc->builds));
  if (mc->solves) {
    const mixed::MixedCgResult &r = mc->last;
    PetscCall(PetscViewerASCIIPrintf(viewer, "  last solve: %" PetscInt64_FMT " CG steps (%" PetscInt64_FMT " low precision), reliable updates %" PetscInt64_FMT ", precision raises %d, low-precision breakdowns %" PetscInt64_FMT ", FP64 fallback %s, PC applications %" PetscInt64_FMT " (FP32 V-cycles %" PetscInt64_FMT ")\n",
                                     (PetscInt64)r.its, (PetscInt64)r.lowp_its, (PetscInt64)r.reliable_updates, r.raises, (PetscInt64)r.lowp_breakdowns, r.fp64 ? "taken" : "not taken", (PetscInt64)r.pc_applications, (PetscInt64)r.pc_lowp_applications));
    if (r.pc_checks) PetscCall(PetscViewerASCIIPrintf(viewer, "  V-cycle checks against the PC in FP64: %" PetscInt64_FMT " (the last departed by %.3g)\n", (PetscInt64)r.pc_checks, r.pc_departure));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The C entry points of the options and the view (their std::string work may throw) */
PetscErrorCode KSPSetFromOptions_MixedCG(KSP ksp, PetscSpMVOptionItems PetscOptionsObject)
{
  PetscFunctionBegin;
  PetscCall(CallCatching("KSPMIXEDCG", [&]() { return KSPSetFromOptions_MixedCG_Body(ksp, PetscOptionsObject); }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPView_MixedCG(KSP ksp, PetscViewer viewer)
{
  PetscFunctionBegin;
  PetscCall(CallCatching("KSPMIXEDCG", [&]() { return KSPView_MixedCG_Body(ksp, viewer); }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPReset_MixedCG(KSP ksp)
{
  KspMixedCg *mc = Data(ksp);

  PetscFunctionBegin;
  mc->copy.reset();
  mc->device.reset();
  mc->mg.reset();
  mc->mg_builds = -1;
  PetscCall(PetscSFDestroy(&mc->halo));
  PetscCall(VecDestroy(&mc->w1));
  PetscCall(VecDestroy(&mc->w2));
  mc->pmat_state = -1;
  mc->level      = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPDestroy_MixedCG(KSP ksp)
{
  PetscFunctionBegin;
  PetscCall(KSPReset_MixedCG(ksp));
  delete Data(ksp);
  ksp->data = nullptr;
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPMixedCGGetStats_C", nullptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPMixedCGGetStats_MixedCG(KSP ksp, KSPMixedCGStats *out)
{
  KspMixedCg                 *mc = Data(ksp);
  const mixed::MixedCgResult &r  = mc->last;

  PetscFunctionBegin;
  out->its              = (PetscInt)r.its;
  out->lowp_its         = (PetscInt)r.lowp_its;
  out->reliable_updates = (PetscInt)r.reliable_updates;
  out->raises           = (PetscInt)r.raises;
  out->breakdowns       = (PetscInt)r.lowp_breakdowns;
  out->fp64_fallback    = r.fp64 ? PETSC_TRUE : PETSC_FALSE;
  out->mantissa_bits    = mc->level == 2 ? 52 : (PetscInt)(mc->current.lossy() ? mc->current.mantissa_bits : 23);
  out->builds           = mc->builds;
  out->pc_applications  = (PetscInt)r.pc_applications;
  out->fp32_vcycles     = (PetscInt)r.pc_lowp_applications;
  out->pc_checks        = (PetscInt)r.pc_checks;
  out->pc_departure     = (PetscReal)r.pc_departure;
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

PetscLogEvent EventMixedCGCopy = 0, EventMixedCGFP32 = 0;

/*MC
  KSPMIXEDCG - "mixedcg": CG on the symmetrically scaled system D^-1/2 A D^-1/2 (D = diag(A):
  Jacobi-preconditioned CG) whose iteration runs on FP32 vectors with a low-precision PackSELL
  copy of the scaled Pmat, with reliable updates: whenever the iterated residual has fallen by
  delta since the last update, the true residual r = b - A x is recomputed in FP64 with the exact
  Amat, the iteration continues from it with its search direction kept (re-orthogonalised
  against the new residual), and the solution is accumulated in FP64. Convergence and the
  monitor see only these FP64 true residuals.

  Options Database Keys:
+ -ksp_mixedcg_delta <0.1> - reliable update when the iterated residual falls below delta times
    its largest value since the last update (not given: 0.01 when the PC's V-cycle runs in FP32,
    which reduces the residual about tenfold per step)
. -ksp_mixedcg_value_format <e8m14> - the copy's value format (fp16, bf16, e8m<m> with m in 7..22,
    or exact: FP64 values rounded to FP32 in the products); the other
    -ksp_mixedcg_mat_packsell_* layout options of PackSELL apply to the copy too (a different
    -ksp_mixedcg_mat_packsell_value_format beside it is an error)
. -ksp_mixedcg_dither <true> - round the copy's values up or down by a symmetric pseudo-random
    dither (unbiased) instead of to nearest (equal values, equal errors)
. -ksp_mixedcg_rowsum_compensation <true> - add the copy's rounding of each row sum back as an FP32
    diagonal (the smooth modes of PDE matrices then see no error of the copy)
. -ksp_mixedcg_guard_value_format <e8m22> - the wider format the guard raises the copy to, with
    more mantissa bits than the start format when given (none: straight to FP64 CG)
. -ksp_mixedcg_guard_departure <0.05> - a segment is lossy (and raises at once) when the true
    residual departs from the iterated one by more than this relative norm
. -ksp_mixedcg_guard_ratio <1.5> - a segment between two reliable updates is lossy when it needs
    more than this many times the iterations per decade of true residual that its iterated
    residual predicts (0: only a growing true residual counts)
. -ksp_mixedcg_guard_strikes <2> - lossy segments in a row that raise the precision
. -ksp_mixedcg_guard_pc_steps <20> - with the FP32 V-cycle: a segment of this many steps without a
    reliable update ends with one, and the V-cycle is checked on the new residual against the PC
    in FP64 (0: never)
. -ksp_mixedcg_guard_pc_departure <0.2> - that check raises the precision when the V-cycle and the
    PC in FP64 differ by more than this relative norm (0: no check)
. -ksp_mixedcg_backend <auto,host,cuda> - auto: on the GPU when the Pmat's vectors are CUDA vectors
    (at any number of ranks), else on the host
. -ksp_mixedcg_check_every <8> - CUDA backend on one rank: CG steps launched between two reads of
    the device's state (the only host synchronisations of the loop besides the reliable updates;
    on several ranks the state is read after every step, which waits for its sums over the ranks)
. -ksp_mixedcg_mg_fp32 <true> - with PCMG or PCGAMG (multiplicative V-cycles, Chebyshev + Jacobi
    smoothers): the low-precision steps apply the V-cycle in FP32 on reduced-precision PackSELL
    copies of the PC's levels (the copy's value format), built on the backend (host or GPU) from
    the levels' CSR, on one rank (elsewhere the PC runs in FP64, -ksp_view says why)
- -ksp_mixedcg_mg_dense_coarse <512> - with the FP32 V-cycle: the highest level with at most this
    many rows is solved exactly by its dense FP64 inverse, one product per cycle (0: the PC's own
    coarse solver in FP64); with a null space on the operator by its pseudo-inverse. A level whose
    inverse misses A X = I by more than 1e-6 (a singular one without MatSetNullSpace()), or a
    singular problem without a pseudo-inverse, runs the PC in FP64

  Notes:
  The copy's values are rounded with an unbiased, symmetric dither and its row sums compensated
  by an FP32 diagonal, so that its error stays away from the smooth modes that every reliable
  update would inject it into. The guard keeps the copy's precision up to the matrix: when the
  true residual stops following the iterated one (a true residual that grew or departed from the
  iterated one, or log(f_iter) / log(f_true) above the ratio for the strikes in a row, with f the
  reductions of one segment), the copy is rebuilt at the guard's value format, and when that is
  not enough the solve continues as FP64 CG (FP64 vectors, the exact Amat as operator) from the
  current x; the direction restarts at a raise. A step with p^T A_lp p <= 0 is checked with the
  exact matrix: p^T A p <= 0 ends the solve with `KSP_DIVERGED_INDEFINITE_MAT`; otherwise the
  copy failed where A did not, and the precision is raised. The growth and rate tests judge only
  segments whose iterated residual fell by at least min(sqrt(delta), 1/2): shorter ones (ended by
  the target near convergence) are noise there. With the FP32 V-cycle a raise rebuilds its
  levels' copies at the guard's value format with the operator's, and the FP64 fallback applies
  the PC in FP64; a segment that stalls (-ksp_mixedcg_guard_pc_steps steps without a reliable
  update) ends with one, and the V-cycle is checked against the PC in FP64 on the new residual
  (a departure beyond -ksp_mixedcg_guard_pc_departure raises). The precision reached is kept for later solves
  with the same Pmat (the guard judged the copy too coarse for this matrix); a Pmat with a new
  state, or `KSPReset()`, rebuilds the copy at the start format. A raise whose build fails ends
  the solve with that error; the next setup rebuilds at the start format. The reliable-update
  trigger aims at the KSP's own convergence target (`KSPConvergedDefault()`'s ttol). A breakdown
  of the FP64 phase ends the solve with `KSP_DIVERGED_INDEFINITE_MAT` (p^T A p <= 0) or
  `KSP_DIVERGED_NANORINF` (non-finite numbers).

  The method brings its own Jacobi scaling, which `PCNONE` (the default it sets) and `PCJACOBI`
  on the diagonal select; any other PC (ILU, ICC, SOR, block Jacobi, ASM, GAMG, another
  -pc_jacobi_type, a shell) is applied in FP64 at every step to the widened FP32 residual, the
  result narrowed (PCG with (r, M^-1 r); `KSPMixedCGGetStats()` counts the applications). PETSc's
  default PC of a program that set its operators before `KSPSetFromOptions()` (ILU, ICC, block
  Jacobi: PETSc before 3.25 sets it before reading -ksp_type), when no -pc_type chose it, gives
  way to `PCJACOBI` (a -info line says so). The norm is
  the unpreconditioned one, or `KSP_NORM_NONE` with a fixed number of steps (a PCMG smoother or
  coarse solver); the PC side left (right and symmetric are refused). As a block solver (the
  sub-KSP of `PCBJACOBI` or `PCASM`; any one-rank KSP in a parallel run and any KSP nested in a
  PC counts as one) a refusal of its block's data ends the solve with
  `KSP_DIVERGED_PC_FAILED` instead of an error on one rank, so that the outer solve stops on every
  rank. On several ranks the
  low-precision operator is the whole matrix: the diagonal and off-diagonal blocks are scaled
  and stored in PackSELL, and the halo of the FP32 direction is exchanged through a PetscSF
  (by the CUDA backend on device memory, started before the diagonal block's product and ended
  before the off-diagonal one's; each step's dot products are summed over the ranks on the host). The Pmat must be AIJ-based (others are converted) with a positive diagonal;
  a diagonal that is not positive and finite, a non-finite entry, or a scaled value outside the
  value format are PETSc errors on every rank (`PETSC_ERR_ARG_WRONG`, `PETSC_ERR_ARG_OUTOFRANGE`).
  `-ksp_view` shows the library's version, the value format (LOSSY), delta, the guard, the backend
  and the last solve's CG steps, reliable updates, precision raises and whether the FP64 fallback
  was taken; `-ksp_monitor` prints the true residual at the start and at every reliable update;
  `-log_view` shows the copy's builds (`KSPMixedCGCopy`) and the low-precision steps
  (`KSPMixedCGFP32`: the solve without its exact products and builds).

  Reference:
  Sleijpen, van der Vorst, Reliable updated residuals in hybrid Bi-CG methods (1996); Clark,
  Babich, Barros, Brower, Rebbi, Solving lattice QCD systems of equations using mixed precision
  solvers on GPUs (2010); QUDA's CG; docs/mixed.md.

  Level: advanced

.seealso: `KSPMixedCGGetStats()`, `KSPCG`, `PCMIXEDKRYLOV`, `MATPACKSELLCUDA`
M*/
PetscErrorCode KSPCreate_MixedCG(KSP ksp)
{
  PC pc;

  PetscFunctionBegin;
  ksp->data = new KspMixedCg();
  /* PC_LEFT only: the method's PCG (its own Jacobi scaling, or another PC applied in FP64) is
     left-preconditioned, and PC_RIGHT would make KSPBuildSolution() apply the PC to the
     solution: -ksp_pc_side right and symmetric are refused by KSPSetUp() */
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_UNPRECONDITIONED, PC_LEFT, 3));
  /* a smoother's or a coarse solver's use (PCMG): a fixed number of steps, KSPConvergedSkip()'s */
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_NONE, PC_LEFT, 1));
  ksp->ops->setup          = KSPSetUp_MixedCG;
  ksp->ops->solve          = KSPSolve_MixedCG;
  ksp->ops->setfromoptions = KSPSetFromOptions_MixedCG;
  ksp->ops->view           = KSPView_MixedCG;
  ksp->ops->reset          = KSPReset_MixedCG;
  ksp->ops->destroy        = KSPDestroy_MixedCG;
  ksp->ops->buildsolution  = KSPBuildSolutionDefault;
  ksp->ops->buildresidual  = KSPBuildResidualDefault;
  /* the method applies its own Jacobi scaling: PCNONE unless a PC was set */
  PetscCall(KSPGetPC(ksp, &pc));
  if (!((PetscObject)pc)->type_name) PetscCall(PCSetType(pc, PCNONE));
  {
    KspMixedCg *mc = Data(ksp);
    PetscCallCore(PETSC_ERR_PLIB, mc->copy_opts.Set("value_format", 0, "e8m14", true));
    PetscCall(NameFormatOptions((PetscObject)ksp, kCopyOptions, &mc->copy_opts));
    mc->current = mc->copy_opts.Of<PackSellModule>().value_format;
  }
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPMixedCGGetStats_C", KSPMixedCGGetStats_MixedCG));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv

/*@
  KSPMixedCGGetStats - Gets the counts of the last solve of a `KSPMIXEDCG`.

  Not Collective

  Input Parameter:
. ksp - the Krylov solver

  Output Parameter:
. stats - CG steps (all, low precision), reliable updates, precision raises, low-precision
  breakdowns, whether the FP64 fallback was taken, the operator's mantissa bits, copies built

  Errors:
  `PETSC_ERR_SUP` when ksp is not a `KSPMIXEDCG`.

  Level: advanced

.seealso: `KSPMIXEDCG`
@*/
PetscErrorCode KSPMixedCGGetStats(KSP ksp, KSPMixedCGStats *stats)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscAssertPointer(stats, 2);
  PetscUseMethod(ksp, "KSPMixedCGGetStats_C", (KSP, KSPMixedCGStats *), (ksp, stats));
  PetscFunctionReturn(PETSC_SUCCESS);
}
