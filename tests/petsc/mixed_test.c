static const char help[] = "PCMIXEDKRYLOV: solves to the true residual, value updates, rebuilds, reuse, breakdowns and refused inputs.\n\
  -mat_type <type>   the Pmat/Amat type (aij, rgcsr, packsell, aijcusparse, rgcsrcuda, packsellcuda)\n\
  -n <16>            grid size of the 2-D variable-coefficient test matrix (n^2 rows)\n\
  -rank0_empty       rank 0 owns no rows\n\
  -bind_cpu          every test matrix bound to the CPU after assembly (MatBindToCPU)\n\
  -mode <all|warn|outer|subpc|scale>  all: solves, value updates, breakdowns, refusals and retries;\n\
                     warn: one solve with the outer KSP of -mk_ksp_type (default cg; its warning or error\n\
                     is checked by CTest); outer: which outer KSPs are refused and which solve to the true\n\
                     residual; subpc: PCBJACOBI and PCASM blocks that refuse their data; scale: the\n\
                     preconditioner's result under power-of-two scalings of r and of the Pmat\n";

#define _GNU_SOURCE /* fmemopen */
#include <stdio.h>
#include <petscksp.h>
#include "spmv_test_util.h"

#define CHECK(cond, ...) PetscCheck(cond, PETSC_COMM_SELF, PETSC_ERR_PLIB, __VA_ARGS__)

static PetscBool rank0_empty = PETSC_FALSE, bind_cpu = PETSC_FALSE;

/* A 2-D 5-point operator on an n x n grid with couplings -k(midpoint), k = 1.2 + sin(...) in
   [0.2, 2.2], the diagonal their sum plus `shift` (SPD for shift >= 0); then diag_row (if >= 0)
   gets diagonal value diag_value (a bad diagonal) and, with tiny != 0, row N-3 a coupling of
   tiny times its diagonal to column N-1 and its mirror (symmetric; inside the last rank's
   diagonal block). */
static PetscErrorCode Build(MatType type, PetscInt n, PetscReal shift, PetscInt diag_row, PetscScalar diag_value, PetscReal tiny, Mat *A)
{
  PetscInt    N = n * n, lo, hi, nloc = PETSC_DECIDE;
  PetscMPIInt rank, size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (rank0_empty && size > 1) nloc = rank == 0 ? 0 : N / (size - 1) + (rank - 1 < N % (size - 1) ? 1 : 0);
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, nloc, nloc, N, N));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSetUp(*A));
  PetscCall(MatGetOwnershipRange(*A, &lo, &hi));
  for (PetscInt r = lo; r < hi; r++) {
    const PetscInt i = r % n, j = r / n, di[4] = {-1, 1, 0, 0}, dj[4] = {0, 0, -1, 1};
    PetscScalar    d = shift;
    for (int q = 0; q < 4; q++) {
      const PetscReal k = 1.2 + PetscSinReal(3.0 * (i + 0.5 * di[q]) + 0.7) * PetscCosReal(2.0 * (j + 0.5 * dj[q]));
      d += k;
      if (i + di[q] < 0 || i + di[q] >= n || j + dj[q] < 0 || j + dj[q] >= n) continue;
      PetscCall(MatSetValue(*A, r, r + di[q] + dj[q] * n, -k, INSERT_VALUES));
    }
    PetscCall(MatSetValue(*A, r, r, r == diag_row ? diag_value : d, INSERT_VALUES));
    if (tiny != 0 && r == N - 3) PetscCall(MatSetValue(*A, N - 3, N - 1, tiny * d, INSERT_VALUES));
    if (tiny != 0 && r == N - 1) PetscCall(MatSetValue(*A, N - 1, N - 3, tiny * d, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  if (bind_cpu) PetscCall(MatBindToCPU(*A, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A flexible outer KSP with PCMIXEDKRYLOV (options prefix "mk_": -mk_pc_mixedkrylov_*). */
static PetscErrorCode MixedKSP(Mat A, KSPType kt, KSP *ksp)
{
  PC pc;

  PetscFunctionBegin;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, ksp));
  PetscCall(KSPSetOperators(*ksp, A, A));
  PetscCall(KSPSetType(*ksp, kt));
  PetscCall(KSPSetNormType(*ksp, KSP_NORM_UNPRECONDITIONED));
  PetscCall(KSPSetTolerances(*ksp, 1e-10, PETSC_CURRENT, PETSC_CURRENT, 500));
  PetscCall(KSPGetPC(*ksp, &pc));
  PetscCall(PCSetType(pc, PCMIXEDKRYLOV));
  PetscCall(KSPSetOptionsPrefix(*ksp, "mk_"));
  PetscCall(KSPSetFromOptions(*ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Solves A x = A xe from x = 0; *trueres = ||A xe - A x|| / ||A xe|| with A itself (lossless). */
static PetscErrorCode Solve(KSP ksp, Mat A, PetscReal *trueres, PetscInt *its)
{
  Vec                x, b;
  KSPConvergedReason reason;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(TestRandomVec(x, 7));
  PetscCall(MatMult(A, x, b));
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(TestTrueResidual(A, b, x, trueres));
  CHECK(reason > 0, "KSP did not converge: %s after %" PetscInt_FMT " iterations", KSPConvergedReasons[reason], *its);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Stats(KSP ksp, PCMixedKrylovStats *st)
{
  PC pc;

  PetscFunctionBegin;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCMixedKrylovGetStats(pc, st));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Converges to the true residual with both inner methods, in far fewer outer iterations than
   CG + Jacobi; a value update re-encodes (no rebuild), a new pattern rebuilds, and a reused
   preconditioner is neither. */
static PetscErrorCode Solves(MatType type, PetscInt n)
{
  Mat                A, A2;
  KSP                ksp, cg;
  PC                 pc;
  PetscReal          res;
  PetscInt           its, cgits;
  PCMixedKrylovStats st;

  PetscFunctionBegin;
  PetscCall(Build(type, n, 0.0, -1, 0, 0, &A));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &cg));
  PetscCall(KSPSetOperators(cg, A, A));
  PetscCall(KSPSetType(cg, KSPCG));
  PetscCall(KSPGetPC(cg, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetNormType(cg, KSP_NORM_UNPRECONDITIONED));
  PetscCall(KSPSetTolerances(cg, 1e-10, PETSC_CURRENT, PETSC_CURRENT, 5000));
  PetscCall(Solve(cg, A, &res, &cgits));

  for (int m = 0; m < 2; m++) {
    PetscCall(PetscOptionsSetValue(NULL, "-mk_pc_mixedkrylov_inner", m ? "f3r" : "cg"));
    PetscCall(MixedKSP(A, m ? KSPFGMRES : KSPFCG, &ksp));
    PetscCall(Solve(ksp, A, &res, &its));
    PetscCall(Stats(ksp, &st));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s inner %s: %" PetscInt_FMT " outer iterations (CG + Jacobi %" PetscInt_FMT "), true residual %.3e, %" PetscInt_FMT " inner steps in %" PetscInt_FMT " applications\n", type, m ? "f3r" : "cg", its, cgits, (double)res, st.inner_its, st.applications));
    CHECK(res <= 1e-9, "inner %s: true residual %g above 10 x rtol", m ? "f3r" : "cg", (double)res);
    CHECK(2 * its < cgits, "inner %s: %" PetscInt_FMT " outer iterations is not far below CG + Jacobi's %" PetscInt_FMT, m ? "f3r" : "cg", its, cgits);
    CHECK(st.builds == 1 && st.value_updates == 0 && st.applications >= its, "inner %s: counts builds %" PetscInt_FMT " updates %" PetscInt_FMT " applications %" PetscInt_FMT, m ? "f3r" : "cg", st.builds, st.value_updates, st.applications);
    if (m == 0) {
      /* far more inner steps than the block needs: the residual floor ends them (no Inf from an
         underflowing recurrence) */
      KSP       big;
      PetscReal bres;
      PetscInt  bits;
      PetscCall(PetscOptionsSetValue(NULL, "-mk_pc_mixedkrylov_max_it", "3000"));
      PetscCall(MixedKSP(A, KSPFCG, &big));
      PetscCall(Solve(big, A, &bres, &bits));
      PetscCall(Stats(big, &st));
      {
        PetscInt exits; /* summed: a rank owning no rows makes no step */
        PetscCallMPI(MPIU_Allreduce(&st.early_exits, &exits, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
        CHECK(bres <= 1e-9 && exits > 0 && st.inner_its < 3000 * st.applications, "max_it 3000: true residual %g, %" PetscInt_FMT " early exits on all ranks, %" PetscInt_FMT " inner steps in %" PetscInt_FMT " applications here", (double)bres, exits, st.inner_its, st.applications);
      }
      PetscCall(KSPDestroy(&big));
      PetscCall(PetscOptionsClearValue(NULL, "-mk_pc_mixedkrylov_max_it"));
    }
    if (m == 0) {
      /* same pattern, new values: re-encoded, and the solve is still right */
      PetscCall(MatScale(A, 3.0));
      PetscCall(MatShift(A, 0.5));
      PetscCall(Solve(ksp, A, &res, &its));
      PetscCall(Stats(ksp, &st));
      /* (with a rank owning no rows PETSc rebuilds instead: MatShift re-preallocates the empty
         MPIAIJ block, a new nonzero state of the whole matrix) */
      CHECK(rank0_empty || (st.builds == 1 && st.value_updates == 1), "after MatScale: builds %" PetscInt_FMT " (want 1), value updates %" PetscInt_FMT " (want 1)", st.builds, st.value_updates);
      CHECK(res <= 1e-9, "after a value update: true residual %g", (double)res);
      /* reuse: no setup at all */
      PetscCall(KSPSetReusePreconditioner(ksp, PETSC_TRUE));
      PetscCall(MatScale(A, 2.0));
      PetscCall(Solve(ksp, A, &res, &its));
      PetscCall(Stats(ksp, &st));
      CHECK(rank0_empty || (st.builds == 1 && st.value_updates == 1), "-ksp_reuse_preconditioner: builds %" PetscInt_FMT " updates %" PetscInt_FMT " (want 1, 1)", st.builds, st.value_updates);
      CHECK(res <= 1e-9, "with a reused preconditioner: true residual %g", (double)res);
      PetscCall(KSPSetReusePreconditioner(ksp, PETSC_FALSE));
      /* another pattern: rebuilt */
      PetscCall(Build(type, n, 0.0, -1, 0, 1e-3, &A2));
      PetscCall(KSPSetOperators(ksp, A2, A2));
      PetscCall(Solve(ksp, A2, &res, &its));
      PetscCall(Stats(ksp, &st));
      CHECK(rank0_empty || (st.builds == 2 && st.value_updates == 1 && st.applications > 0) && st.applications <= its + 1, "after a new pattern: builds %" PetscInt_FMT " (want 2), updates %" PetscInt_FMT " (want 1), applications %" PetscInt_FMT " (counted afresh)", st.builds, st.value_updates, st.applications);
      CHECK(res <= 1e-9, "after a rebuild: true residual %g", (double)res);
      PetscCall(MatDestroy(&A2));
      PetscCall(MatScale(A, 1.0 / 6.0));
    }
    PetscCall(KSPDestroy(&ksp));
  }
  PetscCall(PetscOptionsClearValue(NULL, "-mk_pc_mixedkrylov_inner"));
  PetscCall(KSPDestroy(&cg));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* An indefinite symmetric matrix with a positive diagonal: the inner CG breaks down (counted),
   the PC never aborts. */
static PetscErrorCode Breakdown(MatType type, PetscInt n)
{
  Mat                A;
  KSP                ksp;
  Vec                x, b;
  PCMixedKrylovStats st;

  PetscFunctionBegin;
  PetscCall(Build(type, n, 0.0, -1, 0, 0, &A));
  {
    /* every diagonal entry 0.5 against couplings of up to 2.2: positive, strongly indefinite */
    PetscInt lo, hi;
    PetscCall(MatGetOwnershipRange(A, &lo, &hi));
    for (PetscInt r = lo; r < hi; r++) PetscCall(MatSetValue(A, r, r, 0.5, INSERT_VALUES));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  }
  PetscCall(PetscOptionsSetValue(NULL, "-mk_pc_mixedkrylov_inner", "cg"));
  PetscCall(MixedKSP(A, KSPFGMRES, &ksp));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_CURRENT, PETSC_CURRENT, 5));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(TestRandomVec(b, 3));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(Stats(ksp, &st));
  {
    PetscInt sum;
    PetscCallMPI(MPIU_Allreduce(&st.breakdowns, &sum, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
    CHECK(sum > 0, "an indefinite matrix gave no inner breakdown (%" PetscInt_FMT " applications)", st.applications);
  }
  PetscCall(PetscOptionsClearValue(NULL, "-mk_pc_mixedkrylov_inner"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSPSetUp() on A fails with `code` on every rank, and the message contains `expect`. */
static PetscErrorCode ExpectSetUpError(Mat A, PetscErrorCode code, const char *expect, const char *what)
{
  KSP            ksp;
  PetscErrorCode ierr;
  char           msg[2048];

  PetscFunctionBegin;
  PetscCall(MixedKSP(A, KSPFCG, &ksp));
  TRY(KSPSetUp(ksp), &ierr, msg);
  CHECK(ierr == code, "%s: KSPSetUp gave error %d, want %d (%s)", what, (int)ierr, (int)code, msg);
  {
    char *at = NULL;
    PetscCall(PetscStrstr(msg, expect, &at));
    PetscMPIInt mine = at ? 1 : 0, any = 0;
    PetscCallMPI(MPIU_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD));
    CHECK(any, "%s: no rank's message contains \"%s\" (this rank: %s)", what, expect, msg);
  }
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PCView(pc) into buf (an ASCII viewer on a memory stream, on pc's communicator: rank 0 of a
   parallel PC writes, the other ranks get ""). */
static PetscErrorCode ViewText(PC pc, char *buf, size_t len)
{
  FILE       *fp = fmemopen(buf, len, "w");
  PetscViewer v;

  PetscFunctionBegin;
  CHECK(fp, "fmemopen failed");
  PetscCall(PetscViewerASCIIOpenWithFILE(PetscObjectComm((PetscObject)pc), fp, &v));
  PetscCall(PCView(pc, v));
  PetscCall(PetscViewerFlush(v));
  PetscCall(PetscViewerDestroy(&v));
  CHECK(!fclose(fp), "fclose of the memory stream failed");
  buf[len - 1] = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the PCView text of pc on its communicator's rank 0 contains `expect` (the answer on
   every rank of comm, a communicator containing pc's). */
static PetscErrorCode ViewContains(PC pc, MPI_Comm comm, const char *expect, PetscBool *found)
{
  static char buf[16384];
  char       *at = NULL;
  PetscMPIInt mine, any;

  PetscFunctionBegin;
  PetscCall(ViewText(pc, buf, sizeof(buf)));
  PetscCall(PetscStrstr(buf, expect, &at));
  mine = at ? 1 : 0;
  PetscCallMPI(MPIU_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm));
  *found = any ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A refusal of the data follows PETSc's convention (what PCLU does on a zero pivot): KSPSolve()
   raises no error, it stops at once on every rank with KSP_DIVERGED_PC_FAILED, the PC's failed
   reason is PC_SETUP_ERROR on every rank, and -ksp_view (PCView) says why (`expect`); with
   KSPSetErrorIfNotConverged() KSPSetUp() raises `code` on every rank, every rank's message
   containing `expect`. */
static PetscErrorCode ExpectRefused(Mat A, PetscErrorCode code, const char *expect, const char *what)
{
  KSP                ksp;
  PC                 pc;
  Vec                x, b;
  KSPConvergedReason reason;
  PCFailedReason     pcr;
  PetscInt           its;
  PetscBool          found;
  PetscErrorCode     ierr;
  char               msg[2048], *at = NULL;

  PetscFunctionBegin;
  PetscCall(MixedKSP(A, KSPFGMRES, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(PCGetFailedReason(pc, &pcr));
  CHECK(reason == KSP_DIVERGED_PC_FAILED && its == 0, "%s: KSPSolve gave %s after %" PetscInt_FMT " iterations, want DIVERGED_PC_FAILED after 0", what, KSPConvergedReasons[reason], its);
  CHECK(pcr == PC_SETUP_ERROR, "%s: the PC's failed reason is %d, want PC_SETUP_ERROR", what, (int)pcr);
  PetscCall(ViewContains(pc, PETSC_COMM_WORLD, expect, &found));
  CHECK(found, "%s: PCView does not say \"%s\"", what, expect);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(MixedKSP(A, KSPFGMRES, &ksp));
  PetscCall(KSPSetErrorIfNotConverged(ksp, PETSC_TRUE));
  TRY(KSPSetUp(ksp), &ierr, msg);
  PetscCall(PetscStrstr(msg, expect, &at));
  CHECK(ierr == code && at, "%s, -ksp_error_if_not_converged: KSPSetUp gave error %d, want %d with \"%s\" on every rank (this rank: %s)", what, (int)ierr, (int)code, expect, msg);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSPSolve() before KSPSetOperators() and after KSPReset(): a PETSc error on every rank, as
   PCJACOBI gives (PCMIXEDKRYLOV read the type name of the empty Pmat PETSc creates: SEGV). A
   fresh KSP for each: PETSc's KSPSetUp() makes the KSP's work vectors from that empty Pmat before
   the PC's setup, and keeps them after a later KSPSetOperators() (with PCJACOBI too). */
static PetscErrorCode NoOperators(MatType type, PetscInt n)
{
  Mat            A;
  Vec            x, b;
  PetscErrorCode ierr;
  char           msg[2048];

  PetscFunctionBegin;
  PetscCall(Build(type, n, 0.0, -1, 0, 0, &A));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecSet(b, 1.0));
  for (int k = 0; k < 2; k++) {
    const char *when = k == 0 ? "KSPSolve() before KSPSetOperators()" : "KSPSolve() after KSPReset()";
    KSP         ksp;
    PC          pc;
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetType(ksp, KSPFGMRES)); /* (KSPDestroy() of an FCG whose first setup failed: VecDestroyVecs() of an unset count, PETSc 3.22) */
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCMIXEDKRYLOV));
    if (k == 1) { /* solves with operators, then loses them */
      PetscCall(KSPSetOperators(ksp, A, A));
      PetscCall(KSPSolve(ksp, b, x));
      PetscCall(KSPReset(ksp));
    }
    TRY(KSPSolve(ksp, b, x), &ierr, msg);
    CHECK(ierr == PETSC_ERR_ARG_WRONGSTATE && strstr(msg, "PCMIXEDKRYLOV has no operators: call KSPSetOperators()"), "%s: error %d (%s), want PETSC_ERR_ARG_WRONGSTATE naming KSPSetOperators()", when, (int)ierr, msg);
    PetscCall(KSPDestroy(&ksp));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Refusals(MatType type, PetscInt n)
{
  Mat      A;
  PetscInt N = n * n;
  char     expect[256];

  PetscFunctionBegin;
  /* a zero and a negative diagonal entry on the last row (the last rank's) */
  PetscCall(Build(type, n, 0.0, N - 1, 0.0, 0, &A));
  PetscCall(PetscSNPrintf(expect, sizeof(expect), "Pmat row %" PetscInt_FMT " has the diagonal entry 0", N - 1));
  PetscCall(ExpectRefused(A, PETSC_ERR_ARG_WRONG, expect, "zero diagonal"));
  PetscCall(MatDestroy(&A));
  PetscCall(Build(type, n, 0.0, N - 1, -2.0, 0, &A));
  PetscCall(PetscSNPrintf(expect, sizeof(expect), "Pmat row %" PetscInt_FMT " has the diagonal entry -2", N - 1));
  PetscCall(ExpectRefused(A, PETSC_ERR_ARG_WRONG, expect, "negative diagonal"));
  PetscCall(MatDestroy(&A));
  /* a scaled coupling of 1e-9 underflows fp16 (smallest subnormal 6e-8) */
  PetscCall(PetscOptionsSetValue(NULL, "-mk_pc_mixedkrylov_mat_packsell_value_format", "fp16"));
  PetscCall(Build(type, n, 0.0, -1, 0, 1e-9, &A));
  PetscCall(ExpectRefused(A, PETSC_ERR_ARG_OUTOFRANGE, "-mk_pc_mixedkrylov_mat_packsell_scaling auto", "fp16 underflow"));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscOptionsClearValue(NULL, "-mk_pc_mixedkrylov_mat_packsell_value_format"));
  /* a NaN off the diagonal: refused at setup, naming its row */
  PetscCall(Build(type, n, 0.0, -1, 0, 0, &A));
  PetscCall(MatSetValue(A, N - 1, N - 2, NAN, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscSNPrintf(expect, sizeof(expect), "Pmat row %" PetscInt_FMT ", column %" PetscInt_FMT ": the entry is nan", N - 1, N - 2));
  PetscCall(ExpectRefused(A, PETSC_ERR_ARG_OUTOFRANGE, expect, "NaN entry"));
  PetscCall(MatDestroy(&A));
  /* diagonal entries of 1e-310 on the coupled rows N-2 and N-1: their coupling scaled by
     1/sqrt(a_ii a_jj) is about 1e310, beyond double (a copy of Inf before) */
  PetscCall(Build(type, n, 0.0, -1, 0, 0, &A));
  {
    PetscInt lo, hi;
    PetscCall(MatGetOwnershipRange(A, &lo, &hi));
    for (PetscInt r = PetscMax(lo, N - 2); r < hi; r++) PetscCall(MatSetValue(A, r, r, 1e-310, INSERT_VALUES));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  }
  PetscCall(PetscSNPrintf(expect, sizeof(expect), "Pmat row %" PetscInt_FMT ", column %" PetscInt_FMT ": the entry", N - 2, N - 1));
  PetscCall(ExpectRefused(A, PETSC_ERR_ARG_OUTOFRANGE, expect, "scaled coupling beyond double"));
  PetscCall(ExpectRefused(A, PETSC_ERR_ARG_OUTOFRANGE, "exceeds the largest double", "scaled coupling beyond double"));
  PetscCall(MatDestroy(&A));
  /* a matrix-free Pmat has no entries to copy: an error (misuse), not a refusal */
  {
    PetscInt nloc;
    PetscCall(Build(type, n, 0.0, -1, 0, 0, &A));
    PetscCall(MatGetLocalSize(A, &nloc, NULL));
    Mat S;
    PetscCall(MatCreateShell(PETSC_COMM_WORLD, nloc, nloc, N, N, NULL, &S));
    PetscCall(ExpectSetUpError(S, PETSC_ERR_SUP, "a shell matrix has none", "MATSHELL Pmat"));
    PetscCall(MatDestroy(&S));
    PetscCall(MatDestroy(&A));
  }
  /* not square: an error */
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, N, N + 3, 1, NULL, 1, NULL, &A));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(ExpectSetUpError(A, PETSC_ERR_ARG_SIZ, "square", "non-square Pmat"));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Sets the diagonal entry of the last row to d (*old gets the previous one on its owner) and, with coupling,
   adds a new symmetric nonzero between rows N-1 and N-3 (a new pattern); then assembles. */
static PetscErrorCode SetLastDiagonal(Mat A, PetscInt N, PetscScalar d, PetscScalar *old, PetscBool coupling)
{
  PetscInt lo, hi;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &lo, &hi));
  if (N - 1 >= lo && N - 1 < hi) {
    if (old) PetscCall(MatGetValue(A, N - 1, N - 1, old));
    PetscCall(MatSetValue(A, N - 1, N - 1, d, INSERT_VALUES));
    if (coupling) PetscCall(MatSetValue(A, N - 1, N - 3, -1e-3, INSERT_VALUES));
  }
  if (coupling && N - 3 >= lo && N - 3 < hi) PetscCall(MatSetValue(A, N - 3, N - 1, -1e-3, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSPSolve(ksp, b, x) raises no error and stops with KSP_DIVERGED_PC_FAILED, and pc's failed
   reason is PC_SETUP_ERROR. */
static PetscErrorCode ExpectFailedSolve(KSP ksp, Vec b, Vec x, const char *what, int attempt)
{
  PC                 pc;
  KSPConvergedReason reason;
  PCFailedReason     pcr;

  PetscFunctionBegin;
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCGetFailedReason(pc, &pcr));
  CHECK(reason == KSP_DIVERGED_PC_FAILED && pcr == PC_SETUP_ERROR, "%s: KSPSolve %d gave %s with PC failed reason %d, want DIVERGED_PC_FAILED and PC_SETUP_ERROR", what, attempt, KSPConvergedReasons[reason], (int)pcr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a refused setup (a zero diagonal entry) inside KSPSolve(), the next KSPSolve()s and
   PCSetUp()s on the same matrix fail again without an error (never a success that would apply
   the previous copy or none): for a refused value update (same pattern) and a refused rebuild
   (a new nonzero too); the same KSP then solves the repaired matrix to the true residual, and
   the failed reason is cleared; a reused PC whose copy a refused rebuild dropped keeps failing;
   with -ksp_error_if_not_converged every refused attempt is an error on every rank instead,
   and the KSP still solves once the matrix is repaired. */
static PetscErrorCode Retry(MatType type, PetscInt n)
{
  PetscInt       N = n * n, its;
  PetscReal      res;
  PetscErrorCode ierr;
  char           msg[2048];

  PetscFunctionBegin;
  for (int pass = 0; pass < 4; pass++) {
    const char    *what = pass == 3 ? "a refused value update with -ksp_error_if_not_converged" : pass ? "a refused rebuild" : "a refused value update";
    Mat            A;
    KSP            ksp;
    PC             pc;
    Vec            x, b;
    PetscScalar    d = 0;
    PCFailedReason pcr;
    PetscCall(Build(type, n, 0.0, -1, 0, 0, &A));
    PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    PetscCall(MixedKSP(A, KSPFGMRES, &ksp));
    PetscCall(KSPGetPC(ksp, &pc));
    if (pass == 3) PetscCall(KSPSetErrorIfNotConverged(ksp, PETSC_TRUE)); /* the PC errors on failures from the KSP's setup on */
    PetscCall(Solve(ksp, A, &res, &its));
    PetscCall(MatCreateVecs(A, &x, &b));
    PetscCall(VecSet(b, 1.0));
    PetscCall(SetLastDiagonal(A, N, 0.0, &d, pass == 1 || pass == 2 ? PETSC_TRUE : PETSC_FALSE));
    for (int attempt = 1; attempt <= 3; attempt++) { /* PETSc's KSP refuses a third PCPreSolve() left open */
      if (pass < 3) PetscCall(ExpectFailedSolve(ksp, b, x, what, attempt));
      else {
        TRY(KSPSolve(ksp, b, x), &ierr, msg);
        CHECK(ierr == PETSC_ERR_ARG_WRONG, "%s: KSPSolve %d on the same matrix gave error %d, want %d: %s", what, attempt, (int)ierr, (int)PETSC_ERR_ARG_WRONG, msg);
      }
    }
    if (pass < 3) {
      PetscCall(PCSetUp(pc));
      PetscCall(PCGetFailedReason(pc, &pcr));
      CHECK(pcr == PC_SETUP_ERROR, "%s: PCSetUp again on the same matrix left the failed reason %d, want PC_SETUP_ERROR", what, (int)pcr);
    } else {
      TRY(PCSetUp(pc), &ierr, msg);
      CHECK(ierr == PETSC_ERR_ARG_WRONG, "%s: PCSetUp again on the same matrix gave error %d, want %d (refused again): %s", what, (int)ierr, (int)PETSC_ERR_ARG_WRONG, msg);
      PetscCall(KSPSetErrorIfNotConverged(ksp, PETSC_FALSE));
    }
    if (pass == 2) { /* the refusing rank has no copy: reusing the PC fails on every rank (no hang) */
      PetscCall(KSPSetReusePreconditioner(ksp, PETSC_TRUE));
      PetscCall(ExpectFailedSolve(ksp, b, x, "a refused rebuild, then -ksp_reuse_preconditioner", 1));
    } else {
      PetscCall(SetLastDiagonal(A, N, d, NULL, PETSC_FALSE));
      PetscCall(Solve(ksp, A, &res, &its));
      PetscCall(PCGetFailedReason(pc, &pcr));
      CHECK(res <= 1e-8 && pcr == PC_NOERROR, "after %s and a repaired matrix: true residual %g, PC failed reason %d", what, (double)res, (int)pcr);
    }
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A dense Pmat (converted to AIJ for the copy) whose zero moves: PETSc reports
   SAME_NONZERO_PATTERN, but a converted block is always built afresh (builds == 2: the host
   conversion drops the moved zero, so its pattern changed; the CUDA one keeps explicit zeros),
   never updated through the old pattern; the solve reaches the true residual. */
static PetscErrorCode DenseMovedZero(MatType type)
{
  const PetscInt     n = 12;
  Mat                A;
  KSP                ksp;
  PC                 pc;
  PetscReal          res;
  PetscInt           its, lo, hi;
  PCMixedKrylovStats st;
  char              *cuda = NULL, *cusparse = NULL;

  PetscFunctionBegin;
  PetscCall(PetscStrstr(type, "cuda", &cuda));         /* rgcsrcuda, packsellcuda */
  PetscCall(PetscStrstr(type, "cusparse", &cusparse)); /* aijcusparse */
  PetscCall(MatCreateDense(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n, n, NULL, &A));
  if (cuda || cusparse) PetscCall(MatConvert(A, MATDENSECUDA, MAT_INPLACE_MATRIX, &A));
  PetscCall(MatGetOwnershipRange(A, &lo, &hi));
  for (int pass = 0; pass < 2; pass++) {
    const PetscInt moved = pass ? 3 : 1; /* row 0's coupling: column 1, then column 3 */
    PetscCall(MatZeroEntries(A));
    for (PetscInt i = lo; i < hi; i++) {
      PetscCall(MatSetValue(A, i, i, 4.0, INSERT_VALUES));
      if (i > 1 && i - 1 != moved) PetscCall(MatSetValue(A, i, i - 1, -1.0, INSERT_VALUES));
      if (i > 0 && i + 1 < n && i + 1 != moved) PetscCall(MatSetValue(A, i, i + 1, -1.0, INSERT_VALUES));
    }
    if (lo == 0) PetscCall(MatSetValue(A, 0, moved, -1.0, INSERT_VALUES));
    if (moved >= lo && moved < hi) PetscCall(MatSetValue(A, moved, 0, -1.0, INSERT_VALUES));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    if (!pass) {
      PetscCall(MixedKSP(A, KSPFGMRES, &ksp));
      PetscCall(KSPGetPC(ksp, &pc));
    }
    PetscCall(Solve(ksp, A, &res, &its));
    CHECK(res <= 1e-8, "dense Pmat, pass %d: true residual %g", pass, (double)res);
  }
  PetscCall(PCMixedKrylovGetStats(pc, &st));
  CHECK(st.builds == 2 && st.value_updates == 0, "dense Pmat whose zero moved: %" PetscInt_FMT " builds and %" PetscInt_FMT " value updates, want 2 and 0 (a converted block is built afresh)", st.builds, st.value_updates);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PCMIXEDKRYLOV as the block solver of PCBJACOBI and PCASM (-mk_sub_pc_type mixedkrylov), the
   last rank's block with a zero diagonal entry (global row N-1): KSPSolve() raises no error on
   any rank and stops on every rank with KSP_DIVERGED_PC_FAILED (a rank that raised alone left
   the others in the outer reductions: a hang); that block's PC has PC_SETUP_ERROR, the other
   ranks' none, and its view names the row in the block's numbering and the rank; the repaired
   matrix then solves (with PCASM: PETSc keeps PC_SUBPC_ERROR, so a new KSP). */
static PetscErrorCode SubPC(MatType type, PetscInt n)
{
  const PCType pts[2] = {PCBJACOBI, PCASM};
  PetscInt     N      = n * n;

  PetscFunctionBegin;
  PetscCall(PetscOptionsSetValue(NULL, "-mk_sub_pc_type", PCMIXEDKRYLOV));
  for (int t = 0; t < 2; t++) {
    Mat                A;
    KSP                ksp, *sub;
    PC                 pc, subpc;
    Vec                x, b;
    PetscScalar        d = 0;
    PetscInt           nsub, first, lo, hi, its;
    PetscReal          res;
    KSPConvergedReason reason;
    PCFailedReason     pcr;
    PetscBool          found;
    char               expect[256];

    PetscCall(Build(type, n, 0.0, -1, 0, 0, &A));
    PetscCall(MatGetOwnershipRange(A, &lo, &hi));
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, KSPFGMRES));
    PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_CURRENT, PETSC_CURRENT, 500));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, pts[t]));
    PetscCall(KSPSetOptionsPrefix(ksp, "mk_"));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(Solve(ksp, A, &res, &its));
    CHECK(res <= 1e-9, "%s + PCMIXEDKRYLOV blocks: true residual %g", pts[t], (double)res);
    PetscCall(SetLastDiagonal(A, N, 0.0, &d, PETSC_FALSE));
    PetscCall(MatCreateVecs(A, &x, &b));
    PetscCall(VecSet(b, 1.0));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    CHECK(reason == KSP_DIVERGED_PC_FAILED, "%s, a zero diagonal in the last rank's block: KSPSolve gave %s, want DIVERGED_PC_FAILED", pts[t], KSPConvergedReasons[reason]);
    if (t == 0) PetscCall(PCBJacobiGetSubKSP(pc, &nsub, &first, &sub));
    else PetscCall(PCASMGetSubKSP(pc, &nsub, &first, &sub));
    CHECK(nsub == 1, "%s: %" PetscInt_FMT " blocks on this rank, want 1", pts[t], nsub);
    PetscCall(KSPGetPC(sub[0], &subpc));
    PetscCall(PCGetFailedReason(subpc, &pcr));
    CHECK(pcr == ((N - 1 >= lo && N - 1 < hi) ? PC_SETUP_ERROR : PC_NOERROR), "%s: rows [%" PetscInt_FMT ", %" PetscInt_FMT "): the block's failed reason is %d", pts[t], lo, hi, (int)pcr);
    if (N - 1 >= lo && N - 1 < hi) {
      PetscMPIInt rank;
      PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
      PetscBool   aij;
      PetscMPIInt size;
      PetscCall(PetscStrbeginswith(type, "aij", &aij));
      PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
      /* PCBJACOBI's block of an MPI matrix of ours knows its rows in the user's matrix */
      if (t == 0 && !aij && size > 1) PetscCall(PetscSNPrintf(expect, sizeof(expect), "row %" PetscInt_FMT " of the user's matrix has the diagonal entry 0", N - 1));
      else if (t == 0) PetscCall(PetscSNPrintf(expect, sizeof(expect), "row %" PetscInt_FMT " of its block has the diagonal entry 0", N - 1 - lo));
      else PetscCall(PetscStrncpy(expect, "of its block has the diagonal entry 0", sizeof(expect)));
      PetscCall(ViewContains(subpc, PETSC_COMM_SELF, expect, &found));
      CHECK(found, "%s: the view of the refusing block does not say \"%s\"", pts[t], expect);
      PetscCall(PetscSNPrintf(expect, sizeof(expect), "a block solver on rank %d", (int)rank));
      PetscCall(ViewContains(subpc, PETSC_COMM_SELF, expect, &found));
      CHECK(found, "%s: the view of the refusing block does not say \"%s\"", pts[t], expect);
    }
    /* the repaired matrix: the same KSP where PETSc clears the outer PC's failed reason */
    PetscCall(SetLastDiagonal(A, N, d, NULL, PETSC_FALSE));
    PetscCall(PCSetFailedReason(pc, PC_NOERROR)); /* PCBJACOBI and PCASM never clear PC_SUBPC_ERROR themselves */
    PetscCall(Solve(ksp, A, &res, &its));
    PetscCall(PCGetFailedReason(subpc, &pcr));
    CHECK(res <= 1e-9 && pcr == PC_NOERROR, "%s, the repaired matrix: true residual %g, the block's failed reason %d", pts[t], (double)res, (int)pcr);
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(MatDestroy(&A));
  }
  PetscCall(PetscOptionsClearValue(NULL, "-mk_sub_pc_type"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The outer KSPs: the flexible ones (with the unpreconditioned norm where they offer another)
   solve to the true residual; every other method, and a flexible one testing another norm, is
   refused with PETSC_ERR_ARG_INCOMP naming the method, the remedy and the option that allows it. */
static PetscErrorCode OuterKSPs(MatType type, PetscInt n)
{
  static const struct {
    const char *type, *norm, *expect; /* expect: NULL for a method that must solve */
  } cases[] = {
    {KSPFGMRES, NULL, NULL},
    {KSPPIPEFGMRES, NULL, NULL},
    {KSPGCR, NULL, NULL},
    {KSPFBCGS, NULL, NULL},
    {KSPFCG, "unpreconditioned", NULL},
    {KSPPIPEFCG, "unpreconditioned", NULL},
    {KSPPIPEGCR, "unpreconditioned", NULL},
    {KSPFBCGSR, NULL, NULL}, /* right preconditioning, unpreconditioned norm by default */
    {KSPRICHARDSON, "unpreconditioned", NULL},
    {KSPCG, NULL, "the outer KSP cg is not flexible"},
    {KSPGMRES, NULL, "the outer KSP gmres is not flexible"},
    {KSPLGMRES, NULL, "the outer KSP lgmres is not flexible"},
    {KSPDGMRES, NULL, "the outer KSP dgmres is not flexible"},
    {KSPCR, NULL, "the outer KSP cr is not flexible"},
    {KSPTCQMR, NULL, "the outer KSP tcqmr is not flexible"},
    {KSPBCGS, NULL, "the outer KSP bcgs is not flexible"},
    {KSPBCGSL, NULL, "the outer KSP bcgsl is not flexible"},
    {KSPCHEBYSHEV, NULL, "the outer KSP chebyshev is not flexible"},
    {KSPPIPEGCR, NULL, "the outer KSP pipegcr tests the natural residual norm"},
    {KSPFCG, "preconditioned", "the outer KSP fcg tests the preconditioned residual norm"},
    {KSPFCG, "natural", "the outer KSP fcg tests the natural residual norm"},
    {KSPPIPEFCG, "natural", "the outer KSP pipefcg tests the natural residual norm"},
    {KSPFBCGSR, "preconditioned", "the outer KSP fbcgsr tests the preconditioned residual norm"}, /* with -ok_ksp_pc_side left */
    {KSPRICHARDSON, "preconditioned", "the outer KSP richardson tests the preconditioned residual norm"},
  };
  Mat     A;
  VecType vt;
  char   *cuda = NULL;

  PetscFunctionBegin;
  PetscCall(Build(type, n, 0.0, -1, 0, 0, &A));
  PetscCall(MatGetVecType(A, &vt));
  PetscCall(PetscStrstr(vt, "cuda", &cuda));
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    KSP       ksp;
    PC        pc;
    PetscReal res;
    PetscInt  its;
    char      what[128];

    PetscCall(PetscSNPrintf(what, sizeof(what), "outer KSP %s, norm %s", cases[c].type, cases[c].norm ? cases[c].norm : "(default)"));
    if (cuda && !cases[c].expect && !strcmp(cases[c].type, KSPFBCGSR)) { /* PETSc's FBCGSR keeps host pointers of its work vectors: it breaks down at once on CUDA vectors, whatever the PC */
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: skipped on %s vectors\n", what, vt));
      continue;
    }
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_CURRENT, PETSC_CURRENT, 2000));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCMIXEDKRYLOV));
    PetscCall(KSPSetOptionsPrefix(ksp, "ok_"));
    PetscCall(PetscOptionsSetValue(NULL, "-ok_ksp_type", cases[c].type));
    if (cases[c].norm) PetscCall(PetscOptionsSetValue(NULL, "-ok_ksp_norm_type", cases[c].norm));
    if (cases[c].norm && !strcmp(cases[c].norm, "preconditioned")) PetscCall(PetscOptionsSetValue(NULL, "-ok_ksp_pc_side", "left"));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(PetscOptionsClearValue(NULL, "-ok_ksp_type"));
    PetscCall(PetscOptionsClearValue(NULL, "-ok_ksp_norm_type"));
    PetscCall(PetscOptionsClearValue(NULL, "-ok_ksp_pc_side"));
    if (!cases[c].expect) {
      PetscCall(Solve(ksp, A, &res, &its));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %" PetscInt_FMT " iterations, true residual %.3e\n", what, its, (double)res));
      CHECK(res <= 1e-9, "%s: true residual %g above 10 x rtol", what, (double)res);
    } else {
      Vec            x, b;
      PetscErrorCode ierr;
      char           msg[2048], *at[3] = {NULL, NULL, NULL};
      PetscCall(MatCreateVecs(A, &x, &b));
      PetscCall(VecSet(b, 1.0));
      TRY(KSPSolve(ksp, b, x), &ierr, msg);
      PetscCall(PetscStrstr(msg, cases[c].expect, &at[0]));
      PetscCall(PetscStrstr(msg, cases[c].norm || !strcmp(cases[c].type, KSPPIPEGCR) ? "use -ok_ksp_norm_type unpreconditioned" : "use -ok_ksp_type fgmres", &at[1]));
      PetscCall(PetscStrstr(msg, "-ok_pc_mixedkrylov_allow_nonflexible", &at[2]));
      CHECK(ierr == PETSC_ERR_ARG_INCOMP && at[0] && at[1] && at[2], "%s: KSPSolve gave error %d (want %d) with the message: %s", what, (int)ierr, (int)PETSC_ERR_ARG_INCOMP, msg);
      PetscCall(VecDestroy(&x));
      PetscCall(VecDestroy(&b));
    }
    PetscCall(KSPDestroy(&ksp));
  }
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The test operator of Build() with couplings k rounded to multiples of 2^-20 (and a diagonal
   their sum), every entry times 2^e: exact for e down to -1040 (subnormal entries keep their 24
   significant bits). */
static PetscErrorCode BuildScaled(MatType type, PetscInt n, int e, Mat *A)
{
  PetscInt lo, hi;

  PetscFunctionBegin;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n * n, n * n));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSetUp(*A));
  PetscCall(MatGetOwnershipRange(*A, &lo, &hi));
  for (PetscInt r = lo; r < hi; r++) {
    const PetscInt i = r % n, j = r / n, di[4] = {-1, 1, 0, 0}, dj[4] = {0, 0, -1, 1};
    PetscReal      d = 0;
    for (int q = 0; q < 4; q++) {
      const PetscReal k = round(0x1p20 * (1.2 + PetscSinReal(3.0 * (i + 0.5 * di[q]) + 0.7) * PetscCosReal(2.0 * (j + 0.5 * dj[q])))) / 0x1p20;
      d += k;
      if (i + di[q] < 0 || i + di[q] >= n || j + dj[q] < 0 || j + dj[q] >= n) continue;
      PetscCall(MatSetValue(*A, r, r + di[q] + dj[q] * n, ldexp(-k, e), INSERT_VALUES));
    }
    PetscCall(MatSetValue(*A, r, r, ldexp(d, e), INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  if (bind_cpu) PetscCall(MatBindToCPU(*A, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* z = M(2^k r) of pc on A (a PCMIXEDKRYLOV with the options of prefix "mk_"). */
static PetscErrorCode ApplyScaled(PC pc, Vec r0, int k, Vec z)
{
  Vec r;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(r0, &r));
  PetscCall(VecCopy(r0, r));
  PetscCall(VecScale(r, ldexp(1.0, k)));
  PetscCall(PCApply(pc, r, z));
  PetscCall(VecDestroy(&r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* z equals 2^k z0 entry by entry (bit for bit; one unit of the last place where 2^k z0 is
   subnormal: a second rounding there), and z0 is not zero. */
static PetscErrorCode ExpectScaled(Vec z, Vec z0, int k, const char *what)
{
  const PetscScalar *za, *z0a;
  PetscInt           m, bad = -1, nonzero = 0;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(z, &m));
  PetscCall(VecGetArrayRead(z, &za));
  PetscCall(VecGetArrayRead(z0, &z0a));
  for (PetscInt i = 0; i < m && bad < 0; i++) {
    const PetscReal want = ldexp(PetscRealPart(z0a[i]), k), got = PetscRealPart(za[i]);
    if (z0a[i] != 0) nonzero++;
    if (!(got == want || (PetscAbsReal(want) < 0x1p-1022 && PetscAbsReal(got - want) <= 0x1p-1074))) bad = i;
  }
  if (bad >= 0) CHECK(PETSC_FALSE, "%s: local entry %" PetscInt_FMT " is %.17g, want 2^%d x %.17g = %.17g", what, bad, (double)PetscRealPart(za[bad]), k, (double)PetscRealPart(z0a[bad]), ldexp(PetscRealPart(z0a[bad]), k));
  CHECK(m == 0 || nonzero > m / 2, "%s: the reference result has only %" PetscInt_FMT " nonzeros of %" PetscInt_FMT, what, nonzero, m);
  PetscCall(VecRestoreArrayRead(z0, &z0a));
  PetscCall(VecRestoreArrayRead(z, &za));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MixedPC(Mat A, PC *pc)
{
  PetscFunctionBegin;
  PetscCall(PCCreate(PETSC_COMM_WORLD, pc));
  PetscCall(PCSetOperators(*pc, A, A));
  PetscCall(PCSetType(*pc, PCMIXEDKRYLOV));
  PetscCall(PCSetOptionsPrefix(*pc, "mk_"));
  PetscCall(PCSetFromOptions(*pc));
  PetscCall(PCSetUp(*pc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Power-of-two scalings, with both inner methods: M(2^k r) = 2^k M(r) bit for bit for k = +-600
   and +-960 (the entry norm ||D^-1/2 r|| from 1e-290 to 1e290: its plain sum of squares
   underflowed below 1e-162, z = 0, and overflowed above 1e154, a silent Jacobi step), and the PC
   of 2^e A applied to 2^e r equals the PC of A applied to r bit for bit for e = -1030 (every
   entry of A subnormal, near 1e-310: s_i s_j overflowed and the copy held Inf) and e = 1000.
   Each result is the first application of a freshly set up PC (F3R's weights change with the
   calls). */
static PetscErrorCode ScaleInvariance(MatType type, PetscInt n)
{
  const int ks[4] = {-960, -600, 600, 960}, es[2] = {-1030, 1000};

  PetscFunctionBegin;
  for (int m = 0; m < 2; m++) {
    Mat            A;
    PC             pc;
    Vec            r0, z0, z;
    PCFailedReason pcr;
    char           what[128];

    PetscCall(PetscOptionsSetValue(NULL, "-mk_pc_mixedkrylov_inner", m ? "f3r" : "cg"));
    PetscCall(BuildScaled(type, n, 0, &A));
    PetscCall(MatCreateVecs(A, &r0, &z0));
    PetscCall(VecDuplicate(z0, &z));
    PetscCall(TestRandomVec(r0, 5));
    {
      PetscScalar *ra;
      PetscInt     nl;
      PetscCall(VecGetLocalSize(r0, &nl));
      PetscCall(VecGetArray(r0, &ra));
      for (PetscInt i = 0; i < nl; i++) ra[i] = round(0x1p20 * PetscRealPart(ra[i])) / 0x1p20; /* exact at 2^-1030 */
      PetscCall(VecRestoreArray(r0, &ra));
    }
    PetscCall(MixedPC(A, &pc));
    PetscCall(ApplyScaled(pc, r0, 0, z0));
    PetscCall(PCDestroy(&pc));
    for (int q = 0; q < 4; q++) {
      PetscCall(PetscSNPrintf(what, sizeof(what), "inner %s, M(2^%d r)", m ? "f3r" : "cg", ks[q]));
      PetscCall(MixedPC(A, &pc));
      PetscCall(ApplyScaled(pc, r0, ks[q], z));
      PetscCall(ExpectScaled(z, z0, ks[q], what));
      PetscCall(PCDestroy(&pc));
    }
    PetscCall(MatDestroy(&A));
    for (int q = 0; q < 2; q++) {
      PetscCall(PetscSNPrintf(what, sizeof(what), "inner %s, the PC of 2^%d A on 2^%d r", m ? "f3r" : "cg", es[q], es[q]));
      PetscCall(BuildScaled(type, n, es[q], &A));
      PetscCall(MixedPC(A, &pc));
      PetscCall(PCGetFailedReason(pc, &pcr));
      CHECK(pcr == PC_NOERROR, "%s: the setup failed (%d)", what, (int)pcr);
      PetscCall(ApplyScaled(pc, r0, es[q], z));
      PetscCall(ExpectScaled(z, z0, 0, what));
      PetscCall(PCDestroy(&pc));
      PetscCall(MatDestroy(&A));
    }
    PetscCall(VecDestroy(&r0));
    PetscCall(VecDestroy(&z0));
    PetscCall(VecDestroy(&z));
  }
  PetscCall(PetscOptionsClearValue(NULL, "-mk_pc_mixedkrylov_inner"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char     type[64] = MATAIJ, mode[16] = "all";
  PetscInt n = 16;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscSpMVInitializePackage());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_type", type, sizeof(type), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-rank0_empty", &rank0_empty, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-bind_cpu", &bind_cpu, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mode", mode, sizeof(mode), NULL));
  if (!strcmp(mode, "warn")) {
    Mat       A;
    KSP       ksp;
    PetscReal res;
    PetscInt  its;
    PetscCall(Build(type, n, 0.0, -1, 0, 0, &A));
    PetscCall(MixedKSP(A, KSPCG, &ksp));
    PetscCall(Solve(ksp, A, &res, &its));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(MatDestroy(&A));
  } else if (!strcmp(mode, "outer")) PetscCall(OuterKSPs(type, n));
  else if (!strcmp(mode, "subpc")) PetscCall(SubPC(type, n));
  else if (!strcmp(mode, "scale")) PetscCall(ScaleInvariance(type, n));
  else {
    PetscCheck(!strcmp(mode, "all"), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-mode %s: use all, warn, outer, subpc or scale", mode);
    PetscCall(Solves(type, n));
    PetscCall(Breakdown(type, n));
    PetscCall(Refusals(type, n));
    PetscCall(NoOperators(type, n));
    PetscCall(Retry(type, n));
    PetscCall(DenseMovedZero(type));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "spmv_mixed %s: all checks passed\n", type));
  PetscCall(PetscFinalize());
  return 0;
}
