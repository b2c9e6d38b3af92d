/* KSPMIXEDCG at 1-3 ranks: solves judged by their true residual with the exact matrix (an AIJ
   copy), against FP64 CG + Jacobi's iterations; the -ksp_view lines (value format LOSSY, delta,
   reliable updates, FP64 fallback); the guard's FP64 fallback; later solves with the same Pmat and
   a Pmat with new values; an indefinite matrix stopping with KSP_DIVERGED_INDEFINITE_MAT; PCSOR set by
   the program applied in FP64, and -ksp_pc_side right refused; a rank whose row and column layouts
   differ refused on every rank (no hang); a failed exact product (a shell Amat) and a failed raise
   (the guard's format unable to hold the values) leaving the KSP usable for the next solve; the
   reliable-update trigger aimed at the KSP's own target with a nonzero initial guess
   (KSPConvergedDefault: rtol ||b||). Prints "all checks passed".
   Options: -mat_type <aij> the solves' matrix; -n <12> the grid (variable-coefficient 7-point
   Laplacian, n^3 rows). */
#include <petscksp.h>
#include <stdio.h>
#include <petscspmv.h>
#include "laplacian3d.h"
#include "spmv_test_util.h"

#define CHECK(cond, ...) \
  do { \
    if (!(cond)) { \
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAILED: " __VA_ARGS__)); \
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n")); \
      failures++; \
    } \
  } while (0)

static PetscInt failures = 0;

/* Solves A x = b from 0 with a KSP of `type` (options prefix `prefix`), returns its iterations,
   reason and true residual, and the -ksp_view text in view (when not NULL). */
static PetscErrorCode Solve(Mat A, Mat Aexact, Vec b, const char *prefix, const char *type, const char *pctype, PetscInt *its, KSPConvergedReason *reason, PetscReal *rel, char *view, size_t len, KSPMixedCGStats *st)
{
  KSP ksp;
  PC  pc;
  Vec x;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(b, &x));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOptionsPrefix(ksp, prefix));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, type));
  PetscCall(KSPGetPC(ksp, &pc));
  if (pctype) PetscCall(PCSetType(pc, pctype));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_CURRENT, PETSC_CURRENT, 20000));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetConvergedReason(ksp, reason));
  PetscCall(TestTrueResidual(Aexact, b, x, rel));
  if (st) PetscCall(KSPMixedCGGetStats(ksp, st));
  if (view) { /* the ASCII view (rank 0 writes it) through a temporary file, sent to every rank */
    PetscViewer v;
    FILE       *f   = tmpfile();
    size_t      got = 0;
    PetscMPIInt rank;
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "tmpfile() failed");
    PetscCall(PetscViewerASCIIOpenWithFILE(PETSC_COMM_WORLD, f, &v));
    PetscCall(KSPView(ksp, v));
    PetscCall(PetscViewerFlush(v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    rewind(f);
    if (rank == 0) got = fread(view, 1, len - 1, f);
    view[got] = 0;
    fclose(f);
    PetscCallMPI(MPI_Bcast(view, (PetscMPIInt)len, MPI_CHAR, 0, PETSC_COMM_WORLD));
  }
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Has(const char *text, const char *what)
{
  char *found;

  PetscFunctionBeginUser;
  PetscCall(PetscStrstr(text, what, &found));
  CHECK(found, "-ksp_view lacks \"%s\":\n%s", what, text);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A shell Amat y = A x through an AIJ matrix, failing (PETSC_ERR_USER) at its fail_at-th product
   (0: never): the exact products' error path */
typedef struct {
  Mat      A;
  PetscInt calls, fail_at;
} ShellCtx;

static PetscErrorCode ShellMult(Mat S, Vec x, Vec y)
{
  ShellCtx *c;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(S, &c));
  c->calls++;
  PetscCheck(c->fail_at == 0 || c->calls != c->fail_at, PETSC_COMM_SELF, PETSC_ERR_USER, "the test's shell product fails here (call %" PetscInt_FMT ")", c->calls);
  PetscCall(MatMult(c->A, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* tridiag(-1, 2, -1) of size N (a 1-D Laplacian), with -tiny at (0, 7) and (7, 0) when tiny > 0 */
static PetscErrorCode Tridiag(PetscInt N, PetscReal tiny, Mat *T)
{
  PetscInt lo, hi;

  PetscFunctionBeginUser;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, N, N, 4, NULL, 3, NULL, T));
  PetscCall(MatGetOwnershipRange(*T, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) {
    if (i > 0) PetscCall(MatSetValue(*T, i, i - 1, -1.0, INSERT_VALUES));
    PetscCall(MatSetValue(*T, i, i, 2.0, INSERT_VALUES));
    if (i + 1 < N) PetscCall(MatSetValue(*T, i, i + 1, -1.0, INSERT_VALUES));
    if (tiny > 0 && i == 0) PetscCall(MatSetValue(*T, 0, 7, -tiny, INSERT_VALUES));
    if (tiny > 0 && i == 7) PetscCall(MatSetValue(*T, 7, 0, -tiny, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*T, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*T, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat                A, Aexact;
  Vec                b, xe;
  PetscInt           n = 12, its_cg, its, its2;
  KSPConvergedReason reason;
  PetscReal          rel;
  KSPMixedCGStats    st;
  static char        view[8192];
  PetscMPIInt        size;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscSpMVInitializePackage());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetFromOptions(A));
  PetscCall(Laplacian(n, PETSC_FALSE, PETSC_TRUE, A));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &Aexact));
  PetscCall(MatSetType(Aexact, MATAIJ));
  PetscCall(Laplacian(n, PETSC_FALSE, PETSC_TRUE, Aexact));
  PetscCall(MatCreateVecs(A, &xe, &b));
  {
    PetscScalar *xa;
    PetscInt     lo, hi;
    PetscCall(VecGetOwnershipRange(xe, &lo, &hi));
    PetscCall(VecGetArrayWrite(xe, &xa));
    for (PetscInt i = lo; i < hi; i++) xa[i - lo] = 1.0 + PetscSinReal((PetscReal)i);
    PetscCall(VecRestoreArrayWrite(xe, &xa));
  }
  PetscCall(MatMult(Aexact, xe, b));

  /* FP64 CG + Jacobi, the reference */
  PetscCall(Solve(A, Aexact, b, "ref_", KSPCG, PCJACOBI, &its_cg, &reason, &rel, NULL, 0, NULL));
  CHECK(reason > 0 && rel <= 1e-8 * 1.01, "CG + Jacobi: reason %s, true residual %g", KSPConvergedReasons[reason], (double)rel);

  /* the default mixedcg: converged on the true residual, close to CG's iterations, the view */
  PetscCall(Solve(A, Aexact, b, "mc_", KSPMIXEDCG, NULL, &its, &reason, &rel, view, sizeof(view), &st));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ranks %d: CG + Jacobi %" PetscInt_FMT " its; mixedcg %" PetscInt_FMT " its, %" PetscInt_FMT " reliable updates, true residual %.3e\n", (int)size, its_cg, its, st.reliable_updates, (double)rel));
  CHECK(reason == KSP_CONVERGED_RTOL, "mixedcg: reason %s", KSPConvergedReasons[reason]);
  CHECK(rel <= 1e-8 * 1.01, "mixedcg: true residual %g above the tolerance 1e-8", (double)rel);
  CHECK(its <= (PetscInt)(1.05 * (double)its_cg) + 1, "mixedcg: %" PetscInt_FMT " iterations, more than 1.05 x CG's %" PetscInt_FMT, its, its_cg);
  CHECK(st.reliable_updates >= 5 && st.reliable_updates <= 14, "mixedcg: %" PetscInt_FMT " reliable updates for 8 decades at delta 0.1", st.reliable_updates);
  CHECK(!st.fp64_fallback && st.raises == 0 && st.mantissa_bits == 14, "mixedcg: raised the precision on a Laplacian");
  PetscCall(Has(view, "type: mixedcg"));
  PetscCall(Has(view, "reliable updates at delta 0.1"));
  PetscCall(Has(view, "LOSSY value format e8m14"));
  PetscCall(Has(view, "LOSSY: only the steps between reliable updates use the copy"));
  PetscCall(Has(view, "rounding of the copy's values: dithered"));
  PetscCall(Has(view, "row-sum compensation: on"));
  PetscCall(Has(view, "FP64 fallback not taken"));
  PetscCall(Has(view, "using UNPRECONDITIONED norm type"));
  if (size > 1) PetscCall(Has(view, "MPI: the whole matrix"));

  /* the guard to FP64: every segment judged departed (-fb_ksp_mixedcg_guard_departure 1e-300 set
     below), no wider format: FP64 CG from the first reliable update on */
  PetscCall(PetscOptionsSetValue(NULL, "-fb_ksp_mixedcg_guard_departure", "1e-300"));
  PetscCall(PetscOptionsSetValue(NULL, "-fb_ksp_mixedcg_guard_value_format", "none"));
  PetscCall(Solve(A, Aexact, b, "fb_", KSPMIXEDCG, PCJACOBI, &its2, &reason, &rel, view, sizeof(view), &st));
  CHECK(reason == KSP_CONVERGED_RTOL && rel <= 1e-8 * 1.01, "FP64 fallback: reason %s, true residual %g", KSPConvergedReasons[reason], (double)rel);
  CHECK(st.fp64_fallback && st.raises == 1 && st.lowp_its < st.its && st.mantissa_bits == 52, "FP64 fallback not taken (raises %" PetscInt_FMT ", low precision %" PetscInt_FMT " of %" PetscInt_FMT ")", st.raises, st.lowp_its, st.its);
  CHECK(its2 <= (PetscInt)(1.15 * (double)its_cg) + 1, "FP64 fallback: %" PetscInt_FMT " iterations, CG %" PetscInt_FMT, its2, its_cg);
  PetscCall(Has(view, "FP64 fallback taken"));
  PetscCall(Has(view, "operator now: FP64"));

  /* the guard to e8m22 at once, then FP64: every segment still departs (the departure test is
     1e-300), so the raise to e8m22 is followed by the raise to FP64 */
  PetscCall(PetscOptionsSetValue(NULL, "-wd_ksp_mixedcg_guard_departure", "1e-300"));
  PetscCall(PetscOptionsSetValue(NULL, "-wd_ksp_mixedcg_value_format", "e8m12"));
  PetscCall(Solve(A, Aexact, b, "wd_", KSPMIXEDCG, NULL, &its2, &reason, &rel, NULL, 0, &st));
  CHECK(reason == KSP_CONVERGED_RTOL && rel <= 1e-8 * 1.01, "raise to e8m22: reason %s, true residual %g", KSPConvergedReasons[reason], (double)rel);
  CHECK(st.raises == 2 && st.fp64_fallback, "raise to e8m22 then FP64: raises %" PetscInt_FMT ", fp64 %d", st.raises, (int)st.fp64_fallback);

  /* two solves with one KSP, then new values of the same pattern (a rebuild) */
  {
    KSP ksp;
    Vec x;
    PetscCall(VecDuplicate(b, &x));
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, KSPMIXEDCG));
    PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_CURRENT, PETSC_CURRENT, 20000));
    for (int k = 0; k < 3; k++) {
      if (k == 2) {
        PetscCall(MatScale(A, 2.0));
        PetscCall(MatScale(Aexact, 2.0));
        PetscCall(VecScale(b, 2.0));
      }
      PetscCall(VecSet(x, 0.0));
      PetscCall(KSPSolve(ksp, b, x));
      PetscCall(KSPGetConvergedReason(ksp, &reason));
      PetscCall(TestTrueResidual(Aexact, b, x, &rel));
      PetscCall(KSPMixedCGGetStats(ksp, &st));
      CHECK(reason > 0 && rel <= 1e-8 * 1.01, "solve %d with one KSP: reason %s, true residual %g", k, KSPConvergedReasons[reason], (double)rel);
      CHECK(st.builds == (k == 2 ? 2 : 1), "solve %d: %" PetscInt_FMT " builds", k, st.builds);
    }
    PetscCall(MatScale(A, 0.5));
    PetscCall(MatScale(Aexact, 0.5));
    PetscCall(VecScale(b, 0.5));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&x));
  }

  /* a PC a program sets (PCSOR): applied in FP64 at every step */
  {
    KSP                ksp;
    PC                 pc;
    Vec                x;
    KSPConvergedReason reason;
    KSPMixedCGStats    st;
    PetscReal          rel;
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, KSPMIXEDCG));
    PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_CURRENT, PETSC_CURRENT, PETSC_CURRENT));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCSOR));
    PetscCall(MatCreateVecs(A, &x, NULL));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    PetscCall(KSPMixedCGGetStats(ksp, &st));
    PetscCall(TestTrueResidual(Aexact, b, x, &rel));
    CHECK(reason > 0 && rel <= 1.01e-8 && st.pc_applications >= st.its, "KSPMIXEDCG with PCSOR: reason %s, true residual %g, %" PetscInt_FMT " PC applications in %" PetscInt_FMT " steps", KSPConvergedReasons[reason], (double)rel, st.pc_applications, st.its);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PCSOR: %" PetscInt_FMT " its, true residual %.3e\n", st.its, (double)rel));
    PetscCall(VecDestroy(&x));
    PetscCall(KSPDestroy(&ksp));
  }

  /* -ksp_pc_side right: refused (the method never applies the PC; KSPBuildSolution() would) */
  {
    KSP            ksp;
    PetscErrorCode ierr;
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, KSPMIXEDCG));
    PetscCall(KSPSetPCSide(ksp, PC_RIGHT));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = KSPSetUp(ksp);
    PetscCall(PetscPopErrorHandler());
    CHECK(ierr == PETSC_ERR_SUP, "KSPMIXEDCG with PC_RIGHT: error %d, expected PETSC_ERR_SUP", (int)ierr);
    PetscCall(KSPDestroy(&ksp));
  }

  /* a Pmat whose rows and columns are split differently on some ranks (ranks 0 and 1; on 3
     ranks rank 2's are equal): an error on every rank (PETSC_ERR_ARG_SIZ), not on ranks 0 and 1
     only with rank 2 waiting in the setup's collectives */
  if (size > 1) {
    Mat            U;
    KSP            ksp;
    PetscMPIInt    rank;
    PetscInt       m, lo, hi, N = 4 * size;
    PetscErrorCode ierr;
    PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    m = 4 + (rank == 0 ? -1 : (rank == 1 ? 1 : 0));
    PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, m, 4, N, N, 3, NULL, 3, NULL, &U));
    PetscCall(MatGetOwnershipRange(U, &lo, &hi));
    for (PetscInt i = lo; i < hi; i++) {
      if (i > 0) PetscCall(MatSetValue(U, i, i - 1, -1.0, INSERT_VALUES));
      PetscCall(MatSetValue(U, i, i, 2.0, INSERT_VALUES));
      if (i + 1 < N) PetscCall(MatSetValue(U, i, i + 1, -1.0, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(U, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(U, MAT_FINAL_ASSEMBLY));
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, U, U));
    PetscCall(KSPSetType(ksp, KSPMIXEDCG));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = KSPSetUp(ksp);
    PetscCall(PetscPopErrorHandler());
    CHECK(ierr == PETSC_ERR_ARG_SIZ, "rank %d: a Pmat with rows and columns split differently: error %d, expected PETSC_ERR_ARG_SIZ on every rank", (int)rank, (int)ierr);
    PetscCall(KSPDestroy(&ksp));
    PetscCall(MatDestroy(&U));
  }

  /* a failed exact product (the shell Amat fails at its 5th product, inside the loop): the solve
     returns the error, the work vectors are left without placed arrays, and the next solve with
     the same KSP converges */
  {
    Mat            S;
    KSP            ksp;
    Vec            x;
    ShellCtx       ctx;
    PetscInt       mloc, nloc, M, N;
    PetscErrorCode ierr;
    ctx.A       = Aexact;
    ctx.calls   = 0;
    ctx.fail_at = 5;
    PetscCall(MatGetLocalSize(Aexact, &mloc, &nloc));
    PetscCall(MatGetSize(Aexact, &M, &N));
    PetscCall(MatCreateShell(PETSC_COMM_WORLD, mloc, nloc, M, N, &ctx, &S));
    PetscCall(MatShellSetOperation(S, MATOP_MULT, (void (*)(void))ShellMult));
    PetscCall(VecDuplicate(b, &x));
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, S, Aexact));
    PetscCall(KSPSetType(ksp, KSPMIXEDCG));
    PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_CURRENT, PETSC_CURRENT, 20000));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = KSPSolve(ksp, b, x);
    PetscCall(PetscPopErrorHandler());
    CHECK(ierr == PETSC_ERR_USER, "a failed exact product: error %d, expected PETSC_ERR_USER", (int)ierr);
    ctx.fail_at = 0;
    PetscCall(VecSet(x, 0.0));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = KSPSolve(ksp, b, x);
    PetscCall(PetscPopErrorHandler());
    CHECK(ierr == PETSC_SUCCESS, "the solve after a failed exact product: error %d", (int)ierr);
    if (!ierr) {
      PetscCall(KSPGetConvergedReason(ksp, &reason));
      PetscCall(TestTrueResidual(Aexact, b, x, &rel));
      CHECK(reason > 0 && rel <= 1e-8 * 1.01, "the solve after a failed exact product: reason %s, true residual %g", KSPConvergedReasons[reason], (double)rel);
    }
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&x));
    PetscCall(MatDestroy(&S));
  }

  /* a failed raise: the start format e8m7 (8-bit exponent) holds the scaled entry -1e-9 / 2 of
     a 1-D Laplacian, the guard's fp16 does not: the raise (at the first update: the departure
     test is 1e-300) fails with PETSC_ERR_ARG_OUTOFRANGE on every rank. The KSP stays usable: the
     next solve (the departure and rate tests off: no raise) runs at the start format and
     converges. (PETSc's own KSPSolve() allows one failed solve before the next ones: a failed
     solve leaves its PCPreSolve() without its PCPostSolve().) */
  {
    Mat            T;
    KSP            ksp;
    Vec            x, bt, xt;
    PetscErrorCode ierr;
    PetscCall(Tridiag(64, 1e-9, &T));
    PetscCall(MatCreateVecs(T, &x, &bt));
    PetscCall(VecDuplicate(x, &xt));
    PetscCall(VecSet(xt, 1.0));
    PetscCall(MatMult(T, xt, bt));
    PetscCall(PetscOptionsSetValue(NULL, "-fr_ksp_mixedcg_value_format", "e8m7"));
    PetscCall(PetscOptionsSetValue(NULL, "-fr_ksp_mixedcg_guard_value_format", "fp16"));
    PetscCall(PetscOptionsSetValue(NULL, "-fr_ksp_mixedcg_guard_departure", "1e-300"));
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOptionsPrefix(ksp, "fr_"));
    PetscCall(KSPSetOperators(ksp, T, T));
    PetscCall(KSPSetType(ksp, KSPMIXEDCG));
    PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_CURRENT, PETSC_CURRENT, 20000));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(VecSet(x, 0.0));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = KSPSolve(ksp, bt, x);
    PetscCall(PetscPopErrorHandler());
    CHECK(ierr == PETSC_ERR_ARG_OUTOFRANGE, "failed raise: error %d, expected PETSC_ERR_ARG_OUTOFRANGE", (int)ierr);
    PetscCall(PetscOptionsSetValue(NULL, "-fr_ksp_mixedcg_guard_departure", "0"));
    PetscCall(PetscOptionsSetValue(NULL, "-fr_ksp_mixedcg_guard_ratio", "0"));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(VecSet(x, 0.0));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = KSPSolve(ksp, bt, x);
    PetscCall(PetscPopErrorHandler());
    CHECK(ierr == PETSC_SUCCESS, "the solve after a failed raise: error %d", (int)ierr);
    if (!ierr) {
      PetscCall(KSPGetConvergedReason(ksp, &reason));
      PetscCall(TestTrueResidual(T, bt, x, &rel));
      PetscCall(KSPMixedCGGetStats(ksp, &st));
      CHECK(reason > 0 && rel <= 1e-8 * 1.01, "the solve after a failed raise: reason %s, true residual %g", KSPConvergedReasons[reason], (double)rel);
      CHECK(st.mantissa_bits == 7 && st.raises == 0 && !st.fp64_fallback, "the solve after a failed raise: mantissa bits %" PetscInt_FMT " (the start format's 7), raises %" PetscInt_FMT, st.mantissa_bits, st.raises);
    }
    PetscCall(PetscOptionsClearValue(NULL, "-fr_ksp_mixedcg_guard_ratio"));
    PetscCall(PetscOptionsClearValue(NULL, "-fr_ksp_mixedcg_value_format"));
    PetscCall(PetscOptionsClearValue(NULL, "-fr_ksp_mixedcg_guard_value_format"));
    PetscCall(PetscOptionsClearValue(NULL, "-fr_ksp_mixedcg_guard_departure"));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&xt));
    PetscCall(VecDestroy(&bt));
    PetscCall(MatDestroy(&T));
  }

  /* the trigger's target with a nonzero initial guess: KSPConvergedDefault converges at
     rtol ||b|| (not rtol ||r_0||); with reliable updates only every 6 decades (delta 1e-6) the
     update that converges must come when the iterated residual reaches that target, not at
     rtol ||r_0||, far below it (the true residual then overshoots the target by ||r_0|| / ||b||) */
  {
    KSP       ksp;
    Vec       x0, x;
    PetscReal r0, bn, rtol = 1e-6;
    PetscInt  its_ref;
    PetscCall(VecDuplicate(xe, &x0));
    PetscCall(VecDuplicate(xe, &x));
    {
      PetscScalar *xa;
      PetscInt     lo, hi;
      PetscCall(VecGetOwnershipRange(x0, &lo, &hi));
      PetscCall(VecGetArrayWrite(x0, &xa));
      for (PetscInt i = lo; i < hi; i++) xa[i - lo] = (1.0 + PetscSinReal((PetscReal)i)) * (1.0 + 1e-2 * PetscSinReal(0.1 * (PetscReal)i));
      PetscCall(VecRestoreArrayWrite(x0, &xa));
    }
    PetscCall(TestTrueResidual(Aexact, b, x0, &r0));
    PetscCall(VecNorm(b, NORM_2, &bn));
    for (int k = 0; k < 2; k++) {
      PetscCall(VecCopy(x0, x));
      PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
      PetscCall(KSPSetOptionsPrefix(ksp, "tg_"));
      PetscCall(KSPSetOperators(ksp, A, A));
      PetscCall(KSPSetType(ksp, k == 0 ? KSPCG : KSPMIXEDCG));
      if (k == 0) {
        PC pc;
        PetscCall(KSPGetPC(ksp, &pc));
        PetscCall(PCSetType(pc, PCJACOBI));
        PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
      }
      PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_TRUE));
      PetscCall(KSPSetTolerances(ksp, rtol, PETSC_CURRENT, PETSC_CURRENT, 20000));
      if (k == 1) PetscCall(PetscOptionsSetValue(NULL, "-tg_ksp_mixedcg_delta", "1e-6"));
      PetscCall(KSPSetFromOptions(ksp));
      PetscCall(KSPSolve(ksp, b, x));
      PetscCall(KSPGetConvergedReason(ksp, &reason));
      PetscCall(KSPGetIterationNumber(ksp, k == 0 ? &its_ref : &its));
      PetscCall(TestTrueResidual(Aexact, b, x, &rel));
      PetscCall(KSPDestroy(&ksp));
    }
    PetscCall(PetscOptionsClearValue(NULL, "-tg_ksp_mixedcg_delta"));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "nonzero initial guess, ||r0|| / ||b|| = %.3e, rtol %g: CG + Jacobi %" PetscInt_FMT " its; mixedcg (delta 1e-6) %" PetscInt_FMT " its, true residual / ||b|| %.3e\n", (double)r0, (double)rtol, its_ref, its, (double)rel));
    CHECK(reason > 0 && rel <= rtol * 1.01, "nonzero initial guess: reason %s, true residual %g", KSPConvergedReasons[reason], (double)rel);
    CHECK(rel > 0.1 * rtol, "nonzero initial guess: true residual %g overshoots the target rtol ||b|| = %g ||b|| (the trigger aimed at rtol ||r_0||?)", (double)rel, (double)rtol);
    CHECK(its <= its_ref + 2, "nonzero initial guess: mixedcg %" PetscInt_FMT " its, CG + Jacobi %" PetscInt_FMT, its, its_ref);
    (void)bn;
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&x0));
  }

  /* -cuda_host_pmat (GPU runs only): the CUDA backend asked for with a host (AIJ) Pmat and CUDA
     vectors: its work vectors must be CUDA vectors (the exact products place device arrays) */
  {
    PetscBool host_pmat = PETSC_FALSE;
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-cuda_host_pmat", &host_pmat, NULL));
    if (host_pmat) {
      KSP ksp;
      Vec bc, xc;
      PetscCall(VecCreate(PETSC_COMM_WORLD, &bc));
      PetscCall(VecSetSizes(bc, PETSC_DECIDE, n * n * n));
      PetscCall(VecSetType(bc, VECCUDA));
      PetscCall(VecDuplicate(bc, &xc));
      PetscCall(VecCopy(b, bc));
      PetscCall(PetscOptionsSetValue(NULL, "-hp_ksp_mixedcg_backend", "cuda"));
      PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
      PetscCall(KSPSetOptionsPrefix(ksp, "hp_"));
      PetscCall(KSPSetOperators(ksp, Aexact, Aexact));
      PetscCall(KSPSetType(ksp, KSPMIXEDCG));
      PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_CURRENT, PETSC_CURRENT, 20000));
      PetscCall(KSPSetFromOptions(ksp));
      PetscCall(KSPSolve(ksp, bc, xc));
      PetscCall(KSPGetConvergedReason(ksp, &reason));
      PetscCall(TestTrueResidual(Aexact, bc, xc, &rel));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "CUDA backend, host Pmat: reason %s, true residual %.3e\n", KSPConvergedReasons[reason], (double)rel));
      CHECK(reason > 0 && rel <= 1e-8 * 1.01, "CUDA backend, host Pmat: reason %s, true residual %g", KSPConvergedReasons[reason], (double)rel);
      PetscCall(PetscOptionsClearValue(NULL, "-hp_ksp_mixedcg_backend"));
      PetscCall(KSPDestroy(&ksp));
      PetscCall(VecDestroy(&xc));
      PetscCall(VecDestroy(&bc));
    }
  }

  /* indefinite: tridiag(0.9, 1, 0.9), a positive diagonal */
  {
    Mat      T;
    Vec      bt, xt;
    PetscInt lo, hi, N = 200;
    KSP      ksp;
    PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, N, N, 3, NULL, 2, NULL, &T));
    PetscCall(MatGetOwnershipRange(T, &lo, &hi));
    for (PetscInt i = lo; i < hi; i++) {
      if (i > 0) PetscCall(MatSetValue(T, i, i - 1, 0.9, INSERT_VALUES));
      PetscCall(MatSetValue(T, i, i, 1.0, INSERT_VALUES));
      if (i + 1 < N) PetscCall(MatSetValue(T, i, i + 1, 0.9, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(T, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(T, MAT_FINAL_ASSEMBLY));
    PetscCall(MatCreateVecs(T, &xt, &bt));
    PetscCall(VecSetRandom(bt, NULL));
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, T, T));
    PetscCall(KSPSetType(ksp, KSPMIXEDCG));
    PetscCall(KSPSolve(ksp, bt, xt));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    CHECK(reason == KSP_DIVERGED_INDEFINITE_MAT, "indefinite matrix: reason %s", KSPConvergedReasons[reason]);
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&xt));
    PetscCall(VecDestroy(&bt));
    PetscCall(MatDestroy(&T));
  }

  PetscCall(VecDestroy(&xe));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&Aexact));
  PetscCall(MatDestroy(&A));
  if (!failures) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "all checks passed\n"));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
