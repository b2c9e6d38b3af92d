static const char help[] = "PCMIXEDKRYLOV: solves to the true residual, value updates, rebuilds, reuse, breakdowns and refused inputs.\n\
  -mat_type <type>   the Pmat/Amat type (aij, rgcsr, packsell, aijcusparse, rgcsrcuda, packsellcuda)\n\
  -n <16>            grid size of the 2-D variable-coefficient test matrix (n^2 rows)\n\
  -rank0_empty       rank 0 owns no rows\n\
  -bind_cpu          every test matrix bound to the CPU after assembly (MatBindToCPU)\n\
  -mode <all|warn>   warn: only the non-flexible outer KSP (its warning is checked by CTest)\n";

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
  Vec                x, b, r;
  PetscReal          bn, rn;
  KSPConvergedReason reason;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(TestRandomVec(x, 7));
  PetscCall(MatMult(A, x, b));
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &rn));
  PetscCall(VecNorm(b, NORM_2, &bn));
  *trueres = rn / bn;
  CHECK(reason > 0, "KSP did not converge: %s after %" PetscInt_FMT " iterations", KSPConvergedReasons[reason], *its);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&r));
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
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s inner %s: %" PetscInt_FMT " outer iterations (CG + Jacobi %" PetscInt_FMT "), true residual %.3e, %" PetscInt_FMT " inner steps in %" PetscInt_FMT " applications\n", type, m ? "f3r" : "cg",
                          its, cgits, (double)res, st.inner_its, st.applications));
    CHECK(res <= 1e-9, "inner %s: true residual %g above 10 x rtol", m ? "f3r" : "cg", (double)res);
    CHECK(2 * its < cgits, "inner %s: %" PetscInt_FMT " outer iterations is not far below CG + Jacobi's %" PetscInt_FMT, m ? "f3r" : "cg", its, cgits);
    CHECK(st.builds == 1 && st.value_updates == 0 && st.applications >= its, "inner %s: counts builds %" PetscInt_FMT " updates %" PetscInt_FMT " applications %" PetscInt_FMT, m ? "f3r" : "cg", st.builds, st.value_updates,
          st.applications);
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
        CHECK(bres <= 1e-9 && exits > 0 && st.inner_its < 3000 * st.applications, "max_it 3000: true residual %g, %" PetscInt_FMT " early exits on all ranks, %" PetscInt_FMT " inner steps in %" PetscInt_FMT " applications here", (double)bres,
              exits, st.inner_its, st.applications);
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

static PetscErrorCode Refusals(MatType type, PetscInt n)
{
  Mat      A;
  PetscInt N = n * n;
  char     expect[128];

  PetscFunctionBegin;
  /* a zero and a negative diagonal entry on the last row (the last rank's) */
  PetscCall(Build(type, n, 0.0, N - 1, 0.0, 0, &A));
  PetscCall(PetscSNPrintf(expect, sizeof(expect), "Pmat row %" PetscInt_FMT " has the diagonal entry 0", N - 1));
  PetscCall(ExpectSetUpError(A, PETSC_ERR_ARG_WRONG, expect, "zero diagonal"));
  PetscCall(MatDestroy(&A));
  PetscCall(Build(type, n, 0.0, N - 1, -2.0, 0, &A));
  PetscCall(PetscSNPrintf(expect, sizeof(expect), "Pmat row %" PetscInt_FMT " has the diagonal entry -2", N - 1));
  PetscCall(ExpectSetUpError(A, PETSC_ERR_ARG_WRONG, expect, "negative diagonal"));
  PetscCall(MatDestroy(&A));
  /* a scaled coupling of 1e-9 underflows fp16 (smallest subnormal 6e-8) */
  PetscCall(PetscOptionsSetValue(NULL, "-mk_pc_mixedkrylov_mat_packsell_value_format", "fp16"));
  PetscCall(Build(type, n, 0.0, -1, 0, 1e-9, &A));
  PetscCall(ExpectSetUpError(A, PETSC_ERR_ARG_OUTOFRANGE, "-mk_pc_mixedkrylov_mat_packsell_scaling auto", "fp16 underflow"));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscOptionsClearValue(NULL, "-mk_pc_mixedkrylov_mat_packsell_value_format"));
  /* a NaN off the diagonal: refused at setup, naming its row */
  PetscCall(Build(type, n, 0.0, -1, 0, 0, &A));
  PetscCall(MatSetValue(A, N - 1, N - 2, NAN, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscSNPrintf(expect, sizeof(expect), "Pmat row %" PetscInt_FMT ", column %" PetscInt_FMT ": the entry is nan", N - 1, N - 2));
  PetscCall(ExpectSetUpError(A, PETSC_ERR_ARG_OUTOFRANGE, expect, "NaN entry"));
  PetscCall(MatDestroy(&A));
  /* a matrix-free Pmat has no entries to copy */
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
  /* not square */
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

/* After a refused setup (a zero diagonal entry) inside KSPSolve(), the next KSPSolve() and
   PCSetUp() on the same matrix are refused again (never a success that would apply the
   previous copy or none): for a refused value update (same pattern) and a refused rebuild (a
   new nonzero too); the same KSP then solves the repaired matrix to the true residual; and a
   reused PC whose copy a refused rebuild dropped fails on every rank. */
static PetscErrorCode Retry(MatType type, PetscInt n)
{
  PetscInt       N = n * n, its;
  PetscReal      res;
  PetscErrorCode ierr;
  char           msg[2048];

  PetscFunctionBegin;
  for (int pass = 0; pass < 3; pass++) {
    const char *what = pass ? "a refused rebuild" : "a refused value update";
    Mat         A;
    KSP         ksp;
    PC          pc;
    Vec         x, b;
    PetscScalar d = 0;
    PetscCall(Build(type, n, 0.0, -1, 0, 0, &A));
    PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    PetscCall(MixedKSP(A, KSPFGMRES, &ksp));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(Solve(ksp, A, &res, &its));
    PetscCall(MatCreateVecs(A, &x, &b));
    PetscCall(VecSet(b, 1.0));
    PetscCall(SetLastDiagonal(A, N, 0.0, &d, pass ? PETSC_TRUE : PETSC_FALSE));
    for (int attempt = 1; attempt <= 3; attempt++) { /* PETSc's KSP refuses a third PCPreSolve() left open */
      TRY(KSPSolve(ksp, b, x), &ierr, msg);
      CHECK(ierr == PETSC_ERR_ARG_WRONG, "%s: KSPSolve %d on the same matrix gave error %d, want %d: %s", what, attempt, (int)ierr, (int)PETSC_ERR_ARG_WRONG, msg);
    }
    TRY(PCSetUp(pc), &ierr, msg);
    CHECK(ierr == PETSC_ERR_ARG_WRONG, "%s: PCSetUp again on the same matrix gave error %d, want %d (refused again): %s", what, (int)ierr, (int)PETSC_ERR_ARG_WRONG, msg);
    if (pass == 2) { /* the refusing rank has no copy: reusing the PC fails on every rank (no hang;
                        an error inside KSPSolve's iteration leaves this KSP unusable: PETSc's locks) */
      PetscCall(KSPSetReusePreconditioner(ksp, PETSC_TRUE));
      TRY(KSPSolve(ksp, b, x), &ierr, msg);
      CHECK(ierr == PETSC_ERR_ORDER, "%s, then -ksp_reuse_preconditioner: KSPSolve gave error %d, want %d (no copy): %s", what, (int)ierr, (int)PETSC_ERR_ORDER, msg);
    } else {
      PetscCall(SetLastDiagonal(A, N, d, NULL, PETSC_FALSE));
      PetscCall(Solve(ksp, A, &res, &its));
      CHECK(res <= 1e-8, "after %s and a repaired matrix: true residual %g", what, (double)res);
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
  PetscCall(PetscStrstr(type, "cuda", &cuda)); /* rgcsrcuda, packsellcuda */
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

int main(int argc, char **argv)
{
  char     type[64] = MATAIJ, mode[16] = "all";
  PetscInt n        = 16;

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
  } else {
    PetscCall(Solves(type, n));
    PetscCall(Breakdown(type, n));
    PetscCall(Refusals(type, n));
    PetscCall(Retry(type, n));
    PetscCall(DenseMovedZero(type));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "spmv_mixed %s: all checks passed\n", type));
  PetscCall(PetscFinalize());
  return 0;
}
