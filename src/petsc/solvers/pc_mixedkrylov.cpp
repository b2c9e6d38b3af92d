// PCMIXEDKRYLOV: a preconditioner whose application is an inner Krylov solve in reduced precision
// on a PackSELL copy of the symmetrically scaled Pmat (../shared/MIXED.md, docs/mixed.md). The
// outer FP64 Krylov method (flexible: FCG, FGMRES, GCR) keeps the user's exact operator, so its
// residual is the true one. On an MPI Pmat the inner solve works on each rank's diagonal block
// (block Jacobi with an inexact FP32 block solve).
//
// Failures follow PETSc's convention for preconditioners: a setup that refuses the Pmat's data (a
// bad diagonal entry, a non-finite entry, a scaled value out of range) raises no error; every
// rank of the PC records PC_SETUP_ERROR (PCSetFailedReason()), PCApply() fills its output with
// Inf (VecFlag()), and the KSP that applies the PC stops collectively with
// KSP_DIVERGED_PC_FAILED at its next norm (KSPCheckNorm()), also when the PC is a block solver
// of PCBJACOBI or PCASM on one rank only. With PCSetErrorIfFailure() (the KSP's
// -ksp_error_if_not_converged) the refusal is a PETSc error on every rank of the PC instead.
// Misuse (options, a Pmat without entries, a non-square one, an outer KSP whose residual a
// varying preconditioner corrupts) stays a PETSc error, raised collectively.
#include <petsc/private/pcimpl.h>
#include <petscksp.h>

#include "mixed/scaled_copy.hpp"
#include "pc_mixedkrylov_backend.hpp"
#include "solver_common.hpp"
#include "spmvimpl.hpp"

#include <cmath>
#include <cstring>
#include <functional>
#include <string>

namespace pspmv
{
namespace glue
{

namespace
{

/* The copy's PackSELL options are -[prefix]pc_mixedkrylov_mat_packsell_* */
constexpr const char kCopyOptions[] = "pc_mixedkrylov_";

struct MixedKrylov {
  MixedParams                   params;
  FormatOptions                 copy_opts{FormatOf<PackSellModule>()};
  PetscInt                      backend_choice = BackendAuto; /* an index of BackendNames */
  std::unique_ptr<MixedBackend> backend;                      /* owns the copy */
  mixed::InnerStats             stats;                        /* since the last full setup */
  std::vector<double>           residuals;                    /* monitor: the last application's */
  PetscLogDouble                setup_time = 0;               /* the last setup or value update, s */
  PetscInt                      builds = 0, value_updates = 0;
  PetscBool                     allow_nonflexible = PETSC_FALSE; /* -pc_mixedkrylov_allow_nonflexible */
  PetscBool                     warned_ksp = PETSC_FALSE, warned_gpu_fcg = PETSC_FALSE, noted_build = PETSC_FALSE;
  PetscViewer                   monitor = nullptr;
  /* The last setup refused the Pmat's data on some rank (every rank of the PC agrees): the
     failed reason stays PC_SETUP_ERROR and PCApply() flags its output until a setup succeeds. */
  PetscBool      failed       = PETSC_FALSE;
  PetscErrorCode failure_code = PETSC_SUCCESS; /* the refusal as a PETSc error code */
  std::string    failure;                      /* why (the first refusing rank's message, on every rank) */
};

/* the values of -pc_mixedkrylov_inner (PetscOptionsEList), in the order of InnerMethod */
const char *const InnerNames[] = {"cg", "f3r"};

MixedKrylov *Data(PC pc)
{
  return static_cast<MixedKrylov *>(pc->data);
}

/* Every rank fails when one does: a setup error on one rank must not leave the others in the
   outer solve's reductions. */
PetscErrorCode Agree(PC pc, PetscErrorCode ierr)
{
  PetscFunctionBegin;
  PetscCall(CollectiveError(PetscObjectComm((PetscObject)pc), "the PCMIXEDKRYLOV setup", ierr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The square diagonal block of the Pmat on this rank as a SeqAIJ-based matrix (*owned: a
   conversion to destroy; NULL when *Ad is the block itself). */
PetscErrorCode LocalBlock(PC pc, Mat *Ad, Mat *owned)
{
  Mat       P = pc->pmat, B, L = nullptr;
  PetscInt  M, N;
  PetscBool isaij, isdense;

  PetscFunctionBegin;
  *owned = nullptr;
  PetscCheck(P && ((PetscObject)P)->type_name, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE, "PCMIXEDKRYLOV has no operators: call KSPSetOperators() (or PCSetOperators()) with an assembled Pmat before KSPSolve() or PCSetUp()");
  {
    PetscBool matfree;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)P, &matfree, MATSHELL, MATMFFD, ""));
    PetscCheck(!matfree, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP, "PCMIXEDKRYLOV builds its copy from the entries of the Pmat, and a %s matrix has none: give an assembled Pmat (KSPSetOperators(ksp, A, P) with P an AIJ, BAIJ, SBAIJ, SELL, dense or petscspmv matrix)",
               ((PetscObject)P)->type_name);
  }
  PetscCheck(P->assembled, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE, "PCMIXEDKRYLOV builds its copy from the Pmat's entries, and this Pmat is not assembled: call MatAssemblyBegin()/MatAssemblyEnd() first");
  PetscCall(MatGetSize(P, &M, &N));
  PetscCheck(M == N, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_SIZ, "PCMIXEDKRYLOV needs a square Pmat (this one is %" PetscInt_FMT " x %" PetscInt_FMT ")", M, N);
  PetscCheck(P->rmap->n == P->cmap->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "PCMIXEDKRYLOV needs the same row and column layout on every rank (this rank owns %" PetscInt_FMT " rows and %" PetscInt_FMT " columns): its inner solve works on the square diagonal block",
             P->rmap->n, P->cmap->n);
  PetscCall(PetscObjectTypeCompareAny((PetscObject)P, &isdense, MATMPIDENSE, MATMPIDENSECUDA, ""));
  if (isdense) { /* the local columns of the rank's rows (MatGetDiagonalBlock refuses mpidensecuda in PETSc 3.22 and 3.25) */
    PetscCall(MatDenseGetLocalMatrix(P, &L));
    PetscCall(MatDenseGetSubMatrix(L, PETSC_DECIDE, PETSC_DECIDE, P->cmap->rstart, P->cmap->rend, &B));
  } else PetscCall(MatGetDiagonalBlock(P, &B));
  /* AIJ and its subclasses (aijcusparse, ours) keep CSR arrays; anything else is converted */
  PetscCall(PetscStrbeginswith(((PetscObject)B)->type_name, MATSEQAIJ, &isaij));
  const PetscErrorCode ierr = isaij ? PETSC_SUCCESS : MatConvert(B, MATSEQAIJ, MAT_INITIAL_MATRIX, owned);
  if (isdense) PetscCall(MatDenseRestoreSubMatrix(L, &B));
  PetscCall(ierr);
  *Ad = isaij ? B : *owned;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The CopyRunner of the backends (RunCopyBuild()): a refusal of the data sets *refused and keeps
   its message, in the user's numbering and naming the PC's options, and its error code in the
   PC (no PETSc error: PCSetUp_MixedKrylov() reports it through PCSetFailedReason()); the core's
   other exceptions are PETSc errors. */
PetscErrorCode RunCore(PC pc, const std::function<void()> &f, bool *refused)
{
  MixedKrylov      *mk = Data(pc);
  const CopySubject s{(PetscObject)pc, pc->kspnestlevel, pc->pmat, "PCMIXEDKRYLOV", "the PCMIXEDKRYLOV copy", nullptr, ""};
  CopyFailure       c;

  PetscFunctionBegin;
  PetscCall(RunCopyBuild(s, f, PETSC_FALSE, &c));
  *refused = c.refusal;
  if (c.refusal) {
    mk->failure      = c.message;
    mk->failure_code = c.code;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode UseCuda(PC pc, PetscBool *cuda)
{
  PetscFunctionBegin;
  PetscCall(UseCudaBackend((PetscObject)pc, pc->pmat, Data(pc)->backend_choice, "-pc_mixedkrylov_backend", cuda));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Builds or updates the copy from the rank's diagonal block Ad. converted: Ad is a conversion
   of a non-AIJ block, whose pattern PETSc's nonzero state does not track (a dense block's zero
   may move with SAME_NONZERO_PATTERN): such a block is always built afresh. *did: 1 built,
   2 values updated (counted by the caller once every rank succeeded). *refused: the core
   refused the data (RunCore kept why); a refused update keeps the old copy, a refused build
   leaves none. */
PetscErrorCode SetUpBlock(PC pc, Mat Ad, bool converted, int *did, bool *refused)
{
  MixedKrylov *mk   = Data(pc);
  PetscBool    cuda = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(UseCuda(pc, &cuda));
  const CopyRunner run = [pc](const std::function<void()> &f, bool *r) -> PetscErrorCode { return RunCore(pc, f, r); };
  /* the same pattern on the same backend: new values only */
  if (pc->setupcalled && pc->flag == SAME_NONZERO_PATTERN && !converted && mk->backend && mk->backend->Copy().OnDevice() == (bool)cuda) {
    bool                 pattern_changed = false;
    const PetscErrorCode ierr            = mk->backend->UpdateValues(Ad, run, &pattern_changed, refused);
    if (ierr) mk->backend.reset(); /* a failure after the copy began to change: build afresh next time */
    PetscCall(ierr);
    if (*refused) PetscFunctionReturn(PETSC_SUCCESS);
    if (!pattern_changed) {
      *did = 2;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  const PackSellOptions &opt = mk->copy_opts.Of<PackSellModule>();
  mk->backend.reset();
#if defined(PETSCSPMV_HAVE_CUDA)
  if (cuda) PetscCall(CreateCudaMixedBackend(Ad, opt, mk->params, run, &mk->backend, refused));
  else
#endif
    PetscCall(CreateHostMixedBackend(Ad, opt, mk->params, run, &mk->backend, refused));
  if (*refused) PetscFunctionReturn(PETSC_SUCCESS);
  mk->stats = mixed::InnerStats{};
  *did      = 1;
  if (mk->noted_build) PetscFunctionReturn(PETSC_SUCCESS); /* the notes below: once per PC */
  mk->noted_build = PETSC_TRUE;
  if (mk->params.method == InnerMethod::CG) {
    PetscBool known = PETSC_FALSE, symmetric = PETSC_TRUE;
    PetscCall(MatIsSymmetricKnown(pc->pmat, &known, &symmetric));
    if (known && !symmetric)
      PetscCall(PetscPrintf(PetscObjectComm((PetscObject)pc), "WARNING: PCMIXEDKRYLOV's inner CG assumes a symmetric positive definite Pmat, and this one is marked non-symmetric: use -pc_mixedkrylov_inner f3r (with -ksp_type fgmres)\n"));
  }
  if (mk->monitor && mk->params.method == InnerMethod::F3R)
    PetscCall(PetscViewerASCIIPrintf(mk->monitor, "  PCMIXEDKRYLOV monitor: F3R's inner levels keep no residual history; -pc_mixedkrylov_monitor prints the inner residuals of -pc_mixedkrylov_inner cg only\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SetUpLocal(PC pc, int *did, bool *refused)
{
  MixedKrylov   *mk = Data(pc);
  Mat            Ad = nullptr, owned = nullptr;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  PetscErrorCode ierr = LocalBlock(pc, &Ad, &owned); /* may fail with *owned already made */
  if (!ierr) ierr = SetUpBlock(pc, Ad, owned != nullptr, did, refused);
  PetscCall(MatDestroy(&owned)); /* on errors too */
  PetscCall(ierr);
  PetscCall(PetscTime(&t1));
  mk->setup_time = t1 - t0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a PETSc error of the setup on some rank (raised on every rank by the caller): PETSc
   recorded the Pmat's state before calling us; forget it, so that the next PCSetUp() runs again
   (rebuilds a dropped copy, or repeats the error) instead of applying a copy that does not match
   the Pmat; and when a rank has no copy left, no rank keeps one. */
PetscErrorCode ForgetSetUp(PC pc)
{
  MixedKrylov *mk   = Data(pc);
  PetscMPIInt  have = mk->backend ? 1 : 0, all = 0;

  PetscFunctionBegin;
  pc->matstate = -1;
  PetscCallMPI(MPIU_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, PetscObjectComm((PetscObject)pc)));
  if (!all) mk->backend.reset();
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A refusal of the data on some rank (refused: on this one, mk->failure says why) is one on
   every rank of the PC: the first refusing rank's message and code reach all of them, the PC
   records PC_SETUP_ERROR, and with PCSetErrorIfFailure() every rank raises the refusal as a
   PETSc error (the next PCSetUp() then runs again, as after an error). */
PetscErrorCode ShareRefusal(PC pc, bool refused)
{
  MixedKrylov *mk   = Data(pc);
  MPI_Comm     comm = PetscObjectComm((PetscObject)pc);
  PetscMPIInt  rank, size, first, len = 0, code = (PetscMPIInt)mk->failure_code;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  {
    PetscMPIInt mine = refused ? rank : size;
    PetscCallMPI(MPIU_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
  }
  mk->failed       = first < size ? PETSC_TRUE : PETSC_FALSE;
  pc->failedreason = mk->failed ? PC_SETUP_ERROR : PC_NOERROR;
  if (!mk->failed) {
    mk->failure.clear();
    mk->failure_code = PETSC_SUCCESS;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (rank == first) len = (PetscMPIInt)mk->failure.size();
  PetscCallMPI(MPI_Bcast(&len, 1, MPI_INT, first, comm));
  PetscCallMPI(MPI_Bcast(&code, 1, MPI_INT, first, comm));
  if (rank != first) PetscCallCXX(mk->failure.assign((size_t)len, ' '));
  if (len) PetscCallMPI(MPI_Bcast(&mk->failure[0], len, MPI_CHAR, first, comm));
  mk->failure_code = (PetscErrorCode)code;
  PetscCall(PetscInfo(pc, "setup refused (PC_SETUP_ERROR; KSPs that apply this PC stop with KSP_DIVERGED_PC_FAILED): %s\n", mk->failure.c_str()));
  if (pc->erroriffailure) {
    pc->matstate = -1;
    SETERRQ(PETSC_COMM_SELF, mk->failure_code, "%s", mk->failure.c_str());
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCSetUp_MixedKrylov(PC pc)
{
  MixedKrylov *mk      = Data(pc);
  int          did     = 0;
  bool         refused = false;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(EventMixedSetUp, pc, 0, 0, 0));
  const PetscErrorCode ierr = Agree(pc, SetUpLocal(pc, &did, &refused));
  if (ierr) PetscCall(ForgetSetUp(pc));
  else if (!refused && did == 1) mk->builds++;
  else if (!refused && did == 2) mk->value_updates++;
  PetscCall(PetscLogEventEnd(EventMixedSetUp, pc, 0, 0, 0));
  PetscCall(ierr);
  PetscCall(ShareRefusal(pc, refused));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSPSolve() calls KSPSetUpOnBlocks() before PCPreSolve() and takes the PC's failed reason from
   it: the setup after a change of the Pmat's values (which KSPSolve() otherwise leaves to the
   first PCApply()) runs here, so that the reason it reads is this Pmat's, not a previous one's
   (a refusal cleared by a repaired Pmat, or a new one). */
PetscErrorCode PCSetUpOnBlocks_MixedKrylov(PC pc)
{
  PetscFunctionBegin;
  PetscCall(PCSetUp(pc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -pc_mixedkrylov_monitor: the inner residuals of this application, relative to the first,
   combined over the ranks (each rank's block solve scaled by its ||D^-1/2 r||). */
PetscErrorCode Monitor(PC pc, Vec x)
{
  MixedKrylov        *mk = Data(pc);
  std::vector<double> res;
  PetscInt            n, nmax;
  PetscReal           sigma, smax;

  PetscFunctionBegin;
  PetscCall(mk->backend->ReadStats(&mk->stats, &res));
  n = (PetscInt)res.size();
  PetscCallMPI(MPIU_Allreduce(&n, &nmax, 1, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)pc)));
  /* sigma_rank = ||D^-1/2 r|| on the rank's rows: res holds the unit-norm inner residuals; the
     squares are summed relative to the largest sigma (no overflow or underflow) */
  PetscCall(mk->backend->ScaledNorm(x, &sigma));
  PetscCallMPI(MPIU_Allreduce(&sigma, &smax, 1, MPIU_REAL, MPI_MAX, PetscObjectComm((PetscObject)pc)));
  if (!(smax > 0) || !std::isfinite(smax)) smax = 1;
  std::vector<PetscReal> sq((size_t)nmax, 0.0), sum((size_t)nmax, 0.0);
  for (PetscInt k = 0; k < nmax; k++) {
    const double rk = n == 0 ? 0.0 : res[(size_t)std::min(k, n - 1)];
    sq[(size_t)k]   = (sigma / smax * rk) * (sigma / smax * rk);
  }
  if (nmax) PetscCallMPI(MPIU_Allreduce(sq.data(), sum.data(), (PetscMPIInt)nmax, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)pc)));
  PetscCall(PetscViewerASCIIAddTab(mk->monitor, ((PetscObject)pc)->tablevel));
  for (PetscInt k = 0; k < nmax; k++)
    PetscCall(PetscViewerASCIIPrintf(mk->monitor, "  %3" PetscInt_FMT " PCMIXEDKRYLOV inner residual norm %14.12e (relative %g)\n", k, (double)(smax * std::sqrt(sum[(size_t)k])), (double)(sum[0] > 0 ? std::sqrt(sum[(size_t)k] / sum[0]) : 0.0)));
  PetscCall(PetscViewerASCIISubtractTab(mk->monitor, ((PetscObject)pc)->tablevel));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a refused setup: y = Inf (VecFlag()) and the failed reason PC_SETUP_ERROR, which the
   KSP applying the PC turns into KSP_DIVERGED_PC_FAILED on every rank at its next norm. */
PetscErrorCode PCApply_MixedKrylov(PC pc, Vec x, Vec y)
{
  MixedKrylov *mk = Data(pc);

  PetscFunctionBegin;
  if (mk->failed) {
    pc->failedreason = PC_SETUP_ERROR;
    PetscCall(VecFlag(y, 1));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(mk->backend, PetscObjectComm((PetscObject)pc), PETSC_ERR_ORDER, "PCMIXEDKRYLOV has no copy of the Pmat: its last PCSetUp() failed");
  PetscCall(mk->backend->Apply(mk->params, x, y));
  if (mk->monitor) PetscCall(Monitor(pc, x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The outer KSPs whose residual stays the true one with a preconditioner that changes from one
   application to the next (a flexible method: its residual recurs with the exact operator, and
   the norm it tests is that residual's), by the norm they test. */
const char *const FlexibleAnyNorm[]    = {KSPFGMRES, KSPPIPEFGMRES, KSPGCR, KSPFBCGS, KSPPREONLY}; /* unpreconditioned or none only */
const char *const FlexibleUnprecNorm[] = {KSPFCG, KSPPIPEFCG, KSPPIPEGCR, KSPFBCGSR, KSPRICHARDSON};
const char *const NormNames[]          = {"none", "preconditioned", "unpreconditioned", "natural"}; /* by KSPNormType */

PetscErrorCode TypeIn(KSP ksp, const char *const *types, size_t n, PetscBool *in)
{
  PetscFunctionBegin;
  *in = PETSC_FALSE;
  for (size_t i = 0; i < n && !*in; i++) PetscCall(PetscObjectTypeCompare((PetscObject)ksp, types[i], in));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The outer KSP must give a true residual with this varying preconditioner (FlexibleAnyNorm, or
   FlexibleUnprecNorm with the unpreconditioned norm or none): otherwise an error naming the
   remedy, or with -pc_mixedkrylov_allow_nonflexible a warning (once per PC). Not checked for a
   KSP that applies the PC inside the solve of another (presolvedone > 1), nor for one nested
   deeper than the KSP the PC belongs to: Chebyshev's eigenvalue estimator (a GMRES or CG KSP)
   applies Chebyshev's PC inside Chebyshev's setup, before Chebyshev's own PCPreSolve(), and
   Chebyshev is the method that solves (it is checked then). */
PetscErrorCode CheckOuterKSP(PC pc, KSP ksp)
{
  MixedKrylov *mk = Data(pc);
  PetscBool    any, unprec;
  PetscInt     level;
  KSPType      kt;
  KSPNormType  nt;
  const char  *kp = nullptr, *pp = ((PetscObject)pc)->prefix;
  char         why[1024], fix[512];

  PetscFunctionBegin;
  PetscCall(KSPGetNestLevel(ksp, &level));
  if (pc->presolvedone > 1 || level > pc->kspnestlevel) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(TypeIn(ksp, FlexibleAnyNorm, sizeof(FlexibleAnyNorm) / sizeof(FlexibleAnyNorm[0]), &any));
  PetscCall(TypeIn(ksp, FlexibleUnprecNorm, sizeof(FlexibleUnprecNorm) / sizeof(FlexibleUnprecNorm[0]), &unprec));
  PetscCall(KSPGetNormType(ksp, &nt));
  if (any || (unprec && (nt == KSP_NORM_UNPRECONDITIONED || nt == KSP_NORM_NONE))) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPGetType(ksp, &kt));
  PetscCall(KSPGetOptionsPrefix(ksp, &kp));
  if (!kp) kp = "";
  if (!pp) pp = "";
  if (unprec) {
    PetscCall(PetscSNPrintf(why, sizeof(why), "the outer KSP %s tests the %s residual norm, which a preconditioner that changes from one application to the next (PCMIXEDKRYLOV's inner Krylov solve) makes differ from the true residual: it may report convergence with a wrong answer", kt, nt >= KSP_NORM_NONE && nt <= KSP_NORM_NATURAL ? NormNames[nt] : "default"));
    PetscCall(PetscSNPrintf(fix, sizeof(fix), "use -%sksp_norm_type unpreconditioned", kp));
  } else {
    PetscCall(PetscSNPrintf(why, sizeof(why), "the outer KSP %s is not flexible: PCMIXEDKRYLOV's inner Krylov solve changes from one application to the next, and with it %s may report convergence with a wrong answer", kt, kt));
    PetscCall(PetscSNPrintf(fix, sizeof(fix), "use -%sksp_type fgmres, or -%sksp_type fcg -%sksp_norm_type unpreconditioned (SPD matrices), or -%sksp_type gcr, or -%sksp_type fbcgs", kp, kp, kp, kp, kp));
  }
  PetscCheck(mk->allow_nonflexible, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_INCOMP, "PCMIXEDKRYLOV: %s; %s (-%spc_mixedkrylov_allow_nonflexible makes this a warning)", why, fix, pp);
  if (!mk->warned_ksp) PetscCall(PetscPrintf(PetscObjectComm((PetscObject)pc), "WARNING: PCMIXEDKRYLOV: %s (solving anyway: -%spc_mixedkrylov_allow_nonflexible); %s\n", why, pp, fix));
  mk->warned_ksp = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Refuses an outer KSP that does not give a true residual (CheckOuterKSP), and warns once when
   FCG is the outer KSP of the GPU backend (slow: below). */
PetscErrorCode PCPreSolve_MixedKrylov(PC pc, KSP ksp, Vec, Vec)
{
  MixedKrylov *mk = Data(pc);

  PetscFunctionBegin;
  {
    /* Set up here, not lazily in the first PCApply() of the outer iteration (where PETSc puts
       the setup after a value change): an error then leaves KSPSolve() before the outer method
       starts, and PCPreSolve()'s count (which PETSc's PCPostSolve() would undo, and which it
       refuses past 2) is undone here, so the KSP stays usable; a refused setup (no error) is
       flagged before the first application. */
    PetscErrorCode ierr = CheckOuterKSP(pc, ksp);
    if (!ierr) ierr = PCSetUp(pc);
    if (ierr) pc->presolvedone--;
    PetscCall(ierr);
  }
  /* PETSc's KSPFCG orthogonalises with VecMTDot, which CUDA vectors compute on the host (PETSc
     3.22.5, -log_view: VecMTDot without GPU flops and a VecCUDACopyFrom per stored direction):
     on the GPU that costs more than the inner solve (docs/mixed.md) */
  if (!mk->warned_gpu_fcg && mk->backend && mk->backend->Copy().OnDevice()) {
    PetscBool fcg;
    PetscCall(PetscObjectTypeCompare((PetscObject)ksp, KSPFCG, &fcg));
    if (fcg)
      PetscCall(PetscPrintf(PetscObjectComm((PetscObject)pc),
                            "WARNING: PCMIXEDKRYLOV runs on the GPU, but the outer KSP fcg computes its VecMTDot on the host for CUDA vectors (a device-to-host copy of every stored direction per iteration): use -ksp_type fgmres for speed\n"));
    mk->warned_gpu_fcg = fcg;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCSetFromOptions_MixedKrylov(PC pc, PetscSpMVOptionItems PetscOptionsObject)
{
  MixedKrylov *mk    = Data(pc);
  PetscInt     inner = (PetscInt)mk->params.method, m[4] = {mk->params.f3r.m2, mk->params.f3r.m3, mk->params.f3r.m4, 0}, nm = 4, maxit = mk->params.cg.max_it, period = mk->params.f3r.weight_period;
  PetscReal    rtol    = mk->params.cg.rtol;
  PetscInt     backend = mk->backend_choice;
  PetscBool    set, mon = mk->monitor ? PETSC_TRUE : PETSC_FALSE;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "PCMIXEDKRYLOV (petscspmv) options");
  PetscCall(PetscOptionsEList("-pc_mixedkrylov_inner", "Inner solver: cg (inner-outer CG in FP32) or f3r (nested FGMRES/FGMRES/Richardson)", "PCMIXEDKRYLOV", InnerNames, 2, InnerNames[inner], &inner, &set));
  /* each inner method's options are read only when it is the one chosen, so that the other's,
     given on the command line, stay unused (-options_left names them) rather than silently
     ignored */
  if (inner == 0) {
    PetscCall(PetscOptionsInt("-pc_mixedkrylov_max_it", "Inner CG steps per application (a fixed count unless -pc_mixedkrylov_rtol > 0)", "PCMIXEDKRYLOV", maxit, &maxit, &set));
    PetscCall(PetscOptionsReal("-pc_mixedkrylov_rtol", "Inner CG early exit: stop once the inner residual is reduced by this factor (0: always max_it steps)", "PCMIXEDKRYLOV", rtol, &rtol, &set));
  } else {
    PetscCall(PetscOptionsIntArray("-pc_mixedkrylov_f3r_m", "F3R steps of levels 2, 3 and 4 (FGMRES FP32, FGMRES FP32, Richardson FP16)", "PCMIXEDKRYLOV", m, &nm, &set));
    /* read into 4 slots: PetscOptionsIntArray() stops at the array's size, so a fourth count shows only this way */
    PetscCheck(!set || nm == 3, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONG, "-pc_mixedkrylov_f3r_m takes three step counts m2,m3,m4 (e.g. 8,4,2); %s given", nm > 3 ? "more" : std::to_string((long long)nm).c_str());
    PetscCall(PetscOptionsInt("-pc_mixedkrylov_f3r_weight_period", "F3R: innermost calls between recomputations of the Richardson weights", "PCMIXEDKRYLOV", period, &period, &set));
  }
  PetscCall(PetscOptionsEList("-pc_mixedkrylov_backend", "Where the inner solve runs: auto (CUDA when the Pmat's vectors are CUDA vectors), host or cuda", "PCMIXEDKRYLOV", BackendNames, 3, BackendNames[backend], &backend, &set));
  PetscCall(PetscOptionsBool("-pc_mixedkrylov_monitor", "Print the inner residual norms of every application", "PCMIXEDKRYLOV", mon, &mon, &set));
  PetscCall(PetscOptionsBool("-pc_mixedkrylov_allow_nonflexible", "Warn instead of refusing an outer KSP whose residual the varying preconditioner makes differ from the true one (not flexible, or a flexible one testing another norm)", "PCMIXEDKRYLOV", mk->allow_nonflexible, &mk->allow_nonflexible, &set));
  PetscOptionsHeadEnd();
  PetscCheck(maxit >= 1 && maxit <= 10000, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "-pc_mixedkrylov_max_it %" PetscInt_FMT " is out of range: use 1 to 10000 inner steps", maxit);
  PetscCheck(rtol >= 0 && rtol < 1, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "-pc_mixedkrylov_rtol %g is out of range: use 0 (a fixed step count) or a reduction factor in (0, 1)", (double)rtol);
  for (int i = 0; i < 3; i++) PetscCheck(m[i] >= 1 && m[i] <= 1000, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "-pc_mixedkrylov_f3r_m: step count %" PetscInt_FMT " of level %d is out of range: use 1 to 1000", m[i], i + 2);
  PetscCheck(period >= 1 && period <= PETSC_INT32_MAX, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "-pc_mixedkrylov_f3r_weight_period %" PetscInt_FMT " is out of range: use 1 to %d calls", period, (int)PETSC_INT32_MAX);
  {
    FormatOptions o = mk->copy_opts;
    PetscCall(ReadFormatOptions((PetscObject)pc, kCopyOptions, PetscOptionsObject, &o));
    const MixedParams before = mk->params;
    mk->params.method        = inner == 0 ? InnerMethod::CG : InnerMethod::F3R;
    mk->params.cg.max_it     = (int32_t)maxit;
    mk->params.cg.rtol       = (double)rtol;
    mk->params.f3r           = mixed::F3RParams{(int32_t)m[0], (int32_t)m[1], (int32_t)m[2], (int32_t)period};
    /* a new layout or another solver's work space: the next PCSetUp() builds afresh */
    const mixed::F3RParams &f = mk->params.f3r, &g = before.f3r;
    if (o != mk->copy_opts || before.method != mk->params.method || before.cg.max_it != mk->params.cg.max_it || f.m2 != g.m2 || f.m3 != g.m3 || f.m4 != g.m4 || f.weight_period != g.weight_period || backend != mk->backend_choice) {
      mk->copy_opts      = o;
      mk->backend_choice = backend;
      mk->backend.reset();
      pc->setupcalled = 0;
    }
  }
  if (mon && !mk->monitor) PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)pc), &mk->monitor));
  if (!mon) mk->monitor = nullptr;
  mk->params.monitor = mk->monitor ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCView_MixedKrylov(PC pc, PetscViewer viewer)
{
  MixedKrylov *mk = Data(pc);
  PetscBool    ascii;
  PetscMPIInt  size;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)pc), &size));
  PetscCall(ViewVersion(viewer));
  const PackSellOptions &po = mk->copy_opts.Of<PackSellModule>();
  if (mk->params.method == InnerMethod::CG) {
    if (mk->params.cg.rtol > 0) PetscCall(PetscViewerASCIIPrintf(viewer, "  inner solver: CG in FP32, at most %d steps per application, early exit at relative residual %g\n", (int)mk->params.cg.max_it, mk->params.cg.rtol));
    else PetscCall(PetscViewerASCIIPrintf(viewer, "  inner solver: CG in FP32, %d steps per application (fixed)\n", (int)mk->params.cg.max_it));
  } else
    PetscCall(PetscViewerASCIIPrintf(viewer, "  inner solver: F3R, FGMRES(%d) FP32 / FGMRES(%d) FP32 / Richardson(%d) FP16 vectors, weights recomputed every %d calls\n", (int)mk->params.f3r.m2, (int)mk->params.f3r.m3, (int)mk->params.f3r.m4,
                                     (int)mk->params.f3r.weight_period));
  if (po.value_format.lossy())
    PetscCall(PetscViewerASCIIPrintf(viewer, "  inner operator: PackSELL copy of D^-1/2 A D^-1/2 (%s), LOSSY value format %s (unit roundoff %.3g)\n", mk->copy_opts.Describe().c_str(), po.value_format.name().c_str(), po.value_format.unit_roundoff()));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "  inner operator: PackSELL copy of D^-1/2 A D^-1/2 (%s), FP64 values rounded to FP32 in the products\n", mk->copy_opts.Describe().c_str()));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  the outer Krylov method multiplies by the exact Pmat/Amat; only the preconditioner uses the copy\n"));
  if (size > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "  MPI: each rank solves with its diagonal block (block Jacobi; the off-rank couplings stay with the outer method)\n"));
  if (mk->allow_nonflexible) PetscCall(PetscViewerASCIIPrintf(viewer, "  outer KSPs that do not give a true residual with it are allowed (-pc_mixedkrylov_allow_nonflexible)\n"));
  if (mk->failed) PetscCall(PetscViewerASCIIPrintf(viewer, "  the last setup was refused (PC_SETUP_ERROR: applications return Inf): %s\n", mk->failure.c_str()));
  if (mk->backend) {
    mixed::InnerStats s = mk->stats;
    PetscCall(mk->backend->ReadStats(&s, nullptr));
    mk->stats             = s;
    const CopyInfo    &c  = mk->backend->Copy().Info();
    const FormatStats &fs = c.stats;
    PetscCall(PetscViewerASCIIPrintf(viewer, "  backend %s; rank 0 block: %d rows, %" PetscInt64_FMT " nonzeros, %" PetscInt64_FMT " words (%.2f bytes per nonzero)\n", mk->backend->Copy().OnDevice() ? "CUDA" : "host", (int)c.rows, (PetscInt64)c.nnz,
                                     (PetscInt64)fs.stored_slots, c.nnz ? (double)fs.stored_bytes / (double)c.nnz : 0.0));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  setups: %" PetscInt_FMT " builds, %" PetscInt_FMT " value updates; last setup %.4g s\n", mk->builds, mk->value_updates, (double)mk->setup_time));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  rank 0 applications %" PetscInt64_FMT ", inner steps %" PetscInt64_FMT " (%.2f per application), breakdowns %" PetscInt64_FMT ", early exits %" PetscInt64_FMT ", Jacobi fallbacks %" PetscInt64_FMT "\n",
                                     (PetscInt64)s.applications, (PetscInt64)s.inner_its, s.applications ? (double)s.inner_its / (double)s.applications : 0.0, (PetscInt64)s.breakdowns, (PetscInt64)s.early_exits, (PetscInt64)s.jacobi_fallbacks));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCReset_MixedKrylov(PC pc)
{
  MixedKrylov *mk = Data(pc);

  PetscFunctionBegin;
  mk->backend.reset();
  mk->failed       = PETSC_FALSE;
  mk->failure_code = PETSC_SUCCESS;
  mk->failure.clear();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCDestroy_MixedKrylov(PC pc)
{
  PetscFunctionBegin;
  PetscCall(PCReset_MixedKrylov(pc));
  delete Data(pc);
  pc->data = nullptr;
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCMixedKrylovGetStats_C", nullptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCMixedKrylovGetStats_MixedKrylov(PC pc, PCMixedKrylovStats *out)
{
  MixedKrylov *mk = Data(pc);

  PetscFunctionBegin;
  if (mk->backend) PetscCall(mk->backend->ReadStats(&mk->stats, nullptr));
  out->applications     = (PetscInt)mk->stats.applications;
  out->inner_its        = (PetscInt)mk->stats.inner_its;
  out->breakdowns       = (PetscInt)mk->stats.breakdowns;
  out->early_exits      = (PetscInt)mk->stats.early_exits;
  out->jacobi_fallbacks = (PetscInt)mk->stats.jacobi_fallbacks;
  out->builds           = mk->builds;
  out->value_updates    = mk->value_updates;
  out->setup_time       = mk->setup_time;
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

PetscLogEvent EventMixedSetUp = 0;

/*MC
  PCMIXEDKRYLOV - "mixedkrylov": a preconditioner whose application is an inner Krylov solve in
  reduced precision on a PackSELL copy of the symmetrically scaled Pmat, D^-1/2 A D^-1/2
  (D = diag(A), kept exactly symmetric), for a flexible outer FP64 Krylov method: the outer
  method multiplies by the exact matrix, so its residual is the true one, and the inner solve
  only has to be a good preconditioner.

  Options Database Keys:
+ -pc_mixedkrylov_inner <f3r,cg> - f3r (default): F3R's nested FGMRES(m2) FP32 / FGMRES(m3)
    FP32 / Richardson(m4) FP16-vector scheme (Suzuki, Iwashita); cg: inner-outer CG, a fixed
    number of FP32 CG steps (the PackSELL paper's mixed PCG; SPD Pmats only)
. -pc_mixedkrylov_max_it <20> - inner CG steps per application (read with inner cg only)
. -pc_mixedkrylov_rtol <0> - inner CG early exit at this residual reduction (0: fixed count; cg only)
. -pc_mixedkrylov_f3r_m <8,4,2> - F3R steps of levels 2, 3, 4 (read with inner f3r only)
. -pc_mixedkrylov_f3r_weight_period <64> - F3R: calls between Richardson weight updates (f3r only)
. -pc_mixedkrylov_backend <auto,host,cuda> - auto: on the GPU when the Pmat's vectors are
    CUDA vectors (aijcusparse, rgcsrcuda, packsellcuda), else the host backend (the host twins
    of the device inner solvers)
. -pc_mixedkrylov_monitor - print the inner residual norms of every application
. -pc_mixedkrylov_allow_nonflexible - warn instead of refusing an outer KSP that does not give
    a true residual with this preconditioner (see Notes)
- -pc_mixedkrylov_mat_packsell_value_format <e8m14> - the copy's value format (fp16, bf16,
    e8m<m>, exact), and the other -pc_mixedkrylov_mat_packsell_* layout options of PackSELL

  Level: advanced

  Notes:
  The inner solve changes from one application to the next, so the KSP that applies the PC
  must be flexible and test the true residual: `KSPFGMRES`, `KSPPIPEFGMRES`, `KSPGCR`,
  `KSPFBCGS`, or `KSPFCG`, `KSPPIPEFCG`, `KSPPIPEGCR`, `KSPFBCGSR`, `KSPRICHARDSON` with
  `-ksp_norm_type unpreconditioned` (or none); `KSPPREONLY` too (a block solver of
  `PCBJACOBI` or `PCASM`: the method around the parent PC is not checked). Any other KSP
  (CG, GMRES, BiCGStab, Chebyshev, ..., or PIPEGCR with its default natural norm) may report
  convergence with a wrong answer: KSPSolve() refuses it with `PETSC_ERR_ARG_INCOMP`, a
  warning instead with `-pc_mixedkrylov_allow_nonflexible`. Use `-ksp_type fgmres` or, on the
  host, `-ksp_type fcg -ksp_norm_type unpreconditioned` (SPD matrices); FCG with the GPU
  backend gets a warning (PETSc's FCG computes its VecMTDot on the host for CUDA vectors: a
  device-to-host copy of its stored directions at every iteration). The Pmat may
  be any square matrix with a positive diagonal whose diagonal block is AIJ or convertible to
  it (AIJ, AIJCUSPARSE, the petscspmv types), seq or mpi; on MPI each rank's inner solve uses
  its diagonal block (block Jacobi). A Pmat with the same nonzero pattern and new values
  re-encodes the copy's values; a new pattern rebuilds it. An inner CG step that finds
  p^T A p <= 0 ends the inner solve (a breakdown, counted); an inner solve that made no step
  returns the Jacobi step D^-1 r. The scaling is exact across the whole double range (the
  entry norm ||D^-1/2 r|| is a scaled sum of squares; D^-1/2 A D^-1/2 is formed from the
  significands and exponents apart where s_i s_j would leave the range): the result scales
  with r and A by powers of two. `-ksp_view` shows the inner method, the value format (LOSSY),
  the counts, the setup time and why the last setup was refused.

  Failures (PETSc's convention, as `PCLU` on a zero pivot): a Pmat whose data the copy cannot
  take (a missing, zero, negative or non-finite diagonal entry; a non-finite entry; a scaled
  value a_ij / sqrt(a_ii a_jj) beyond double or outside the value format) raises no error: the
  PC's failed reason is `PC_SETUP_ERROR` on every rank of the PC (`PCGetFailedReason()`),
  `PCApply()` returns Inf, and the KSP stops on every rank with `KSP_DIVERGED_PC_FAILED` (also
  when the PC is the block solver of one rank of `PCBJACOBI` or `PCASM`); the reason, with the
  row (the global row, or a block's own row for a block solver) and the remedy, is in
  `-ksp_view` and `-info`. A setup on a repaired Pmat clears it. With
  `-ksp_error_if_not_converged` (`PCSetErrorIfFailure()`) the refusal is an error on every rank
  of the PC instead: `PETSC_ERR_ARG_WRONG` for the diagonal, `PETSC_ERR_ARG_OUTOFRANGE` for an
  entry. Misuse stays an error on every rank: `PETSC_ERR_ARG_SIZ` for a non-square Pmat or
  different row and column layouts, `PETSC_ERR_SUP` for a Pmat without entries,
  `PETSC_ERR_ARG_INCOMP` for an outer KSP that does not give a true residual.

  References:
  The PackSELL paper (mixed PCG with an E8Mm PackSELL operator): K. Suzuki, T. Iwashita,
  "PackSELL: A Sparse Matrix Format for Precision-Agnostic High-Performance SpMV",
  arXiv:2604.13433 (2026); Suzuki, Iwashita, F3R (SC'25, github.com/suzuki-hpc/F3R);
  docs/mixed.md, docs/mixed-f3r.md.

.seealso: `PCMixedKrylovGetStats()`, `KSPFCG`, `KSPFGMRES`, `MATPACKSELLCUDA`
M*/
PetscErrorCode PCCreate_MixedKrylov(PC pc)
{
  PetscFunctionBegin;
  pc->data                = new MixedKrylov();
  pc->ops->setup          = PCSetUp_MixedKrylov;
  pc->ops->setuponblocks  = PCSetUpOnBlocks_MixedKrylov;
  pc->ops->apply          = PCApply_MixedKrylov;
  pc->ops->presolve       = PCPreSolve_MixedKrylov;
  pc->ops->setfromoptions = PCSetFromOptions_MixedKrylov;
  pc->ops->view           = PCView_MixedKrylov;
  pc->ops->reset          = PCReset_MixedKrylov;
  pc->ops->destroy        = PCDestroy_MixedKrylov;
  {
    /* the copy's default value format: e8m14 (FP32's exponent range, no underflow surprises) */
    MixedKrylov *mk = Data(pc);
    PetscCallCore(PETSC_ERR_PLIB, mk->copy_opts.Set("value_format", 0, "e8m14", true));
    PetscCall(NameFormatOptions((PetscObject)pc, kCopyOptions, &mk->copy_opts));
  }
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCMixedKrylovGetStats_C", PCMixedKrylovGetStats_MixedKrylov));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv

/*@
  PCMixedKrylovGetStats - Gets the counts of a `PCMIXEDKRYLOV` preconditioner on this rank.

  Not Collective

  Input Parameter:
. pc - the preconditioner

  Output Parameter:
. stats - applications, inner steps, breakdowns, early exits, Jacobi fallbacks, builds, value
  updates and the last setup time in seconds (`PCMixedKrylovStats`: the inner-solve counts
  since the copy was last built, builds and value updates since the PC was created)

  Level: advanced

  Notes:
  With the CUDA backend the counts are read from the device here (a synchronisation of the
  current stream), not during the applications.

  Errors:
  `PETSC_ERR_SUP` when pc is not a `PCMIXEDKRYLOV`.

.seealso: `PCMIXEDKRYLOV`
@*/
PetscErrorCode PCMixedKrylovGetStats(PC pc, PCMixedKrylovStats *stats)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscAssertPointer(stats, 2);
  PetscUseMethod(pc, "PCMixedKrylovGetStats_C", (PC, PCMixedKrylovStats *), (pc, stats));
  PetscFunctionReturn(PETSC_SUCCESS);
}
