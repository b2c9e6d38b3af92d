static const char help[] = "KSPMIXEDCG where users type -ksp_type mixedcg, at 1-3 ranks:\n\
a program that set its operators before KSPSetFromOptions() (PETSc's default PC given way to\n\
Jacobi), a PC the user chose applied in FP64 (ILU, ICC, SOR, Jacobi on row sums, GAMG, block\n\
Jacobi, ASM: iterations and true residual against FP64 CG with that PC), KSP_NORM_NONE with a fixed\n\
number of steps (a PCMG coarse solver), a block solver of PCBJACOBI that refuses its block ending\n\
as KSP_DIVERGED_PC_FAILED on every rank and naming the user's row, the right-hand side usable\n\
after a refused solve, and the remedies a range refusal names working on that matrix.\n\
  -mat_type <aij>   the Pmat's type (aij, rgcsr, packsell, aijcusparse, rgcsrcuda, packsellcuda)\n";

#include <petscksp.h>
#include <petscspmv.h>
#include <string.h>
#include <unistd.h>
#include "spmv_test_util.h"

#define CHECK(cond, ...) PetscCheck(cond, PETSC_COMM_SELF, PETSC_ERR_PLIB, __VA_ARGS__)

static char mattype[64] = MATAIJ;

/* tridiag(-1, 2, -1) of size N in mattype; diagonal entry dval at row drow (drow >= 0); the
   symmetric pair -tiny at (1, N - 2) and (N - 2, 1) (tiny != 0). */
static PetscErrorCode Tridiag(PetscInt N, PetscInt drow, PetscScalar dval, PetscReal tiny, Mat *T)
{
  PetscInt lo, hi;
  Mat      A;

  PetscFunctionBeginUser;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, N, N, 4, NULL, 4, NULL, &A));
  PetscCall(MatGetOwnershipRange(A, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) {
    if (i > 0) PetscCall(MatSetValue(A, i, i - 1, -1.0, INSERT_VALUES));
    PetscCall(MatSetValue(A, i, i, i == drow ? dval : 2.0, INSERT_VALUES));
    if (i + 1 < N) PetscCall(MatSetValue(A, i, i + 1, -1.0, INSERT_VALUES));
    if (tiny != 0 && i == 1) PetscCall(MatSetValue(A, 1, N - 2, -tiny, INSERT_VALUES));
    if (tiny != 0 && i == N - 2) PetscCall(MatSetValue(A, N - 2, 1, -tiny, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatConvert(A, mattype, MAT_INITIAL_MATRIX, T));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A KSP on A with options prefix `prefix` whose options come from the database (set before). */
static PetscErrorCode FromOptions(Mat A, const char *prefix, KSP *ksp)
{
  PetscFunctionBeginUser;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, ksp));
  PetscCall(KSPSetOptionsPrefix(*ksp, prefix));
  PetscCall(KSPSetOperators(*ksp, A, A)); /* before KSPSetFromOptions(), as most programs */
  PetscCall(KSPSetFromOptions(*ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* FromOptions() after putting opts into the database under the prefix. */
static PetscErrorCode FromString(Mat A, const char *prefix, const char *opts, KSP *ksp)
{
  PetscFunctionBeginUser;
  PetscCall(PetscOptionsPrefixPush(NULL, prefix));
  PetscCall(PetscOptionsInsertString(NULL, opts));
  PetscCall(PetscOptionsPrefixPop(NULL));
  PetscCall(FromOptions(A, prefix, ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Solves with ksp from x = 0; reason and the true residual with A. */
static PetscErrorCode SolveTrue(KSP ksp, Mat A, Vec b, KSPConvergedReason *reason, PetscReal *rel)
{
  Vec x;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecSet(x, 0.0));
  {
    const PetscErrorCode ierr = KSPSolve(ksp, b, x);
    if (ierr) PetscCall(VecDestroy(&x)); /* (a refusal tested by the caller) */
    PetscCall(ierr);
  }
  PetscCall(KSPGetConvergedReason(ksp, reason));
  PetscCall(TestTrueResidual(A, b, x, rel));
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A KSP on A from the options string opts under its own prefix ("<tag><k>_": one per solve),
   and its solve from x = 0 (SolveTrue). */
static PetscErrorCode SolveFromString(Mat A, Vec b, const char *tag, int k, const char *opts, KSP *ksp, KSPConvergedReason *reason, PetscReal *rel)
{
  char prefix[32];

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "%s%d_", tag, k));
  PetscCall(FromString(A, prefix, opts, ksp));
  PetscCall(SolveTrue(*ksp, A, b, reason, rel));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc's default PC (ILU/ICC at 1 rank, block Jacobi at more) gives way to Jacobi. */
static PetscErrorCode DefaultPC(Mat A, Vec b)
{
  KSP                ksp;
  PC                 pc;
  KSPConvergedReason reason;
  PetscReal          rel;
  PetscBool          jacobi;
  PCType             pctype;
  KSPMixedCGStats    st;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsSetValue(NULL, "-dp_ksp_type", "mixedcg"));
  PetscCall(PetscOptionsSetValue(NULL, "-dp_ksp_rtol", "1e-8"));
  PetscCall(FromOptions(A, "dp_", &ksp));
  PetscCall(SolveTrue(ksp, A, b, &reason, &rel));
  PetscCall(KSPGetPC(ksp, &pc));
  /* PETSc before 3.25 gave the PC its default before -ksp_type (Jacobi taken instead); 3.25
     sets the KSP type first, which leaves the PC none */
  PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &jacobi, PCJACOBI, PCNONE, ""));
  PetscCall(PCGetType(pc, &pctype));
  PetscCall(KSPMixedCGGetStats(ksp, &st));
  CHECK(reason > 0 && rel <= 1e-8 * 1.01 && jacobi && st.pc_applications == 0, "default PC: reason %s, true residual %g, PC %s (want jacobi or none), %" PetscInt_FMT " PC applications (want 0: the method's own scaling)", KSPConvergedReasons[reason], (double)rel, pctype, st.pc_applications);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(PetscOptionsClearValue(NULL, "-dp_ksp_type"));
  PetscCall(PetscOptionsClearValue(NULL, "-dp_ksp_rtol"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "default PC taken as Jacobi: ok\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A 2-D 5-point operator on an n x n grid with coefficients varying over two decades and anisotropic (0.37 in y), in
   mattype (SPD, not integer-valued: every value format rounds it). */
static PetscErrorCode VarCoef2d(PetscInt n, PetscBool neumann, Mat *T)
{
  PetscInt lo, hi;
  Mat      A;

  PetscFunctionBeginUser;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n * n, n * n, 5, NULL, 4, NULL, &A));
  PetscCall(MatGetOwnershipRange(A, &lo, &hi));
  for (PetscInt r = lo; r < hi; r++) {
    const PetscInt i = r % n, j = r / n;
    PetscScalar    diag = 0;
    for (int e = 0; e < 4; e++) {
      const PetscInt  di = e == 0 ? -1 : e == 1 ? 1 : 0, dj = e == 2 ? -1 : e == 3 ? 1 : 0;
      const PetscReal xm = (i + 0.5 * di) / n, ym = (j + 0.5 * dj) / n;
      const PetscReal k      = PetscPowReal(10.0, 1.0 * PetscSinReal(7.0 * xm) * PetscCosReal(5.0 * ym)) * (di ? 1.0 : 0.37); /* anisotropic too */
      const PetscBool inside = (PetscBool)(i + di >= 0 && i + di < n && j + dj >= 0 && j + dj < n);
      if (inside || !neumann) diag += k; /* Neumann: no coupling to the outside, a singular matrix */
      if (inside) PetscCall(MatSetValue(A, r, r + di + dj * n, -k, INSERT_VALUES));
    }
    PetscCall(MatSetValue(A, r, r, diag, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatConvert(A, mattype, MAT_INITIAL_MATRIX, T));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -ksp_view of ksp (one rank) into buf[size] (KSPMIXEDCG views to ASCII viewers only: through a
   file). */
static PetscErrorCode ViewText(KSP ksp, char *buf, size_t size)
{
  PetscViewer v;
  char        file[64];
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscSNPrintf(file, sizeof(file), "mixedcg_view_%d_%d.txt", (int)getpid(), (int)rank));
  PetscCall(PetscViewerASCIIOpen(PETSC_COMM_SELF, file, &v));
  PetscCall(KSPView(ksp, v));
  PetscCall(PetscViewerDestroy(&v));
  {
    FILE  *f = fopen(file, "r");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    (void)remove(file);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The null space's removal by a function of the user's (MatNullSpaceSetFunction()): the mean. */
static PetscErrorCode RemoveMean(MatNullSpace sp, Vec v, void *ctx)
{
  PetscScalar sum;
  PetscInt    N;

  PetscFunctionBeginUser;
  (void)sp;
  (void)ctx;
  PetscCall(VecSum(v, &sum));
  PetscCall(VecGetSize(v, &N));
  PetscCall(VecShift(v, -sum / (PetscScalar)N));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A singular problem (pure Neumann, the constants its null space, a consistent right-hand side)
   with GAMG. At one rank the V-cycle runs in FP32 with the singular coarse level's dense
   pseudo-inverse (the PC's LU of it amplified the FP32 restriction's rounding: 672 steps) and the
   null space removed from each result as KSP removes it from PCApply()'s: FP32 V-cycles counted,
   -ksp_view names both. In FP64 instead (no FP32 V-cycles): with -ksp_mixedcg_mg_dense_coarse 0
   (no pseudo-inverse: -ksp_view says why), with a removal function of the user's
   (MatNullSpaceSetFunction(), which the cycle cannot apply), and on several ranks. Every solve
   converges as CG + GAMG does, to a true residual of 1e-8, in at most 1.25x its steps + 2. */
static PetscErrorCode SingularCoarse(void)
{
  const char  *mixed[] = {"-ksp_type mixedcg -ksp_rtol 1e-8 -pc_type gamg", "-ksp_type mixedcg -ksp_rtol 1e-8 -pc_type gamg -ksp_mixedcg_mg_dense_coarse 0", "-ksp_type mixedcg -ksp_rtol 1e-8 -pc_type gamg"};
  const char  *what[]  = {"", " without a dense coarse level", " with the user's removal function"};
  const char  *want[]  = {"the operator's null space (1 vector) removed from each cycle's result", "its V-cycle runs in FP64: the operator has a null space and no level", NULL};
  Mat          A;
  Vec          b;
  MatNullSpace ns;
  PetscInt     its[4];
  PetscMPIInt  size;
  char        *buf;
  const size_t bsize = 1 << 18;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscMalloc1(bsize, &buf));
  PetscCall(VarCoef2d(40, PETSC_TRUE, &A));
  PetscCall(MatNullSpaceCreate(PETSC_COMM_WORLD, PETSC_TRUE, 0, NULL, &ns));
  PetscCall(MatSetNullSpace(A, ns));
  PetscCall(MatCreateVecs(A, NULL, &b));
  PetscCall(TestRandomVec(b, 11));
  PetscCall(MatNullSpaceRemove(ns, b));
  for (int k = 0; k < 4; k++) {
    KSP                ksp;
    KSPConvergedReason reason;
    PetscReal          rel;
    if (k == 3) PetscCall(MatNullSpaceSetFunction(ns, RemoveMean, NULL));
    PetscCall(SolveFromString(A, b, "sgc", k, k == 0 ? "-ksp_type cg -ksp_rtol 1e-8 -ksp_norm_type unpreconditioned -pc_type gamg" : mixed[k - 1], &ksp, &reason, &rel));
    PetscCall(KSPGetIterationNumber(ksp, &its[k]));
    CHECK(reason > 0 && rel <= 1.01e-8, "%s + gamg on a singular (Neumann) problem%s: reason %s, true residual %g", k ? "mixedcg" : "cg", k ? what[k - 1] : "", KSPConvergedReasons[reason], (double)rel);
    if (k > 0) {
      KSPMixedCGStats st;
      const PetscBool fp32 = (PetscBool)(size == 1 && k == 1);
      PetscCall(KSPMixedCGGetStats(ksp, &st));
      CHECK(fp32 ? st.fp32_vcycles > 0 : st.fp32_vcycles == 0, "mixedcg + gamg on a singular problem%s: %" PetscInt_FMT " FP32 V-cycles (want %s)", what[k - 1], st.fp32_vcycles, fp32 ? "some" : "none: the PC in FP64");
      CHECK(its[k] <= 1.25 * its[0] + 2, "mixedcg + gamg on a singular problem%s: %" PetscInt_FMT " iterations against CG's %" PetscInt_FMT, what[k - 1], its[k], its[0]);
      if (size == 1 && want[k - 1]) {
        PetscCall(ViewText(ksp, buf, bsize));
        CHECK(strstr(buf, want[k - 1]) != NULL, "mixedcg + gamg on a singular problem%s: -ksp_view lacks '%s':\n%s", what[k - 1], want[k - 1], buf);
        if (k == 1) CHECK(strstr(buf, "pseudo-inverse") != NULL, "mixedcg + gamg on a singular problem: -ksp_view does not name the coarse level's pseudo-inverse:\n%s", buf);
      }
    }
    PetscCall(KSPDestroy(&ksp));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "singular problem with gamg: mixedcg %" PetscInt_FMT " its (%s), without a dense coarse level %" PetscInt_FMT ", with the user's removal function %" PetscInt_FMT " (the PC in FP64), cg %" PetscInt_FMT ": ok\n", its[1], size == 1 ? "the FP32 V-cycle" : "the PC in FP64", its[2], its[3], its[0]));
  PetscCall(PetscFree(buf));
  PetscCall(MatNullSpaceDestroy(&ns));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The guard covers the FP32 V-cycle (one rank): a raise rebuilds the levels' copies at the guard's
   format with the operator's, and the FP64 fallback applies the PC in FP64.
   1. e8m10 with every judged segment lossy (-ksp_mixedcg_guard_departure 1e-300) to rtol 1e-4:
      the first reliable update raises (the second converges, which ends the solve unjudged), and
      -ksp_view shows the operator and every FP32 level at e8m22.
   2. The next solve (same Pmat: the level is kept) at the default guard to 1e-8 runs the e8m22
      cycle: FP32 V-cycles, no raise, converged.
   3. A new KSP whose every segment is lossy to 1e-8: raised twice, the FP64 fallback with the PC in
      FP64 (-ksp_view says so), converged to the true residual.
   4. The V-cycle checked against the PC in FP64 after every step (-ksp_mixedcg_guard_pc_steps 1):
      checks counted and shown, no raise, converged. */
static PetscErrorCode GuardRaisesTheCycle(Mat A, Vec b)
{
  KSP                ksp;
  KSPConvergedReason reason;
  KSPMixedCGStats    st;
  PetscReal          rel;
  char              *buf;
  const size_t       size = 1 << 18;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(size, &buf));
  PetscCall(FromString(A, "grc_", "-ksp_type mixedcg -ksp_rtol 1e-4 -pc_type gamg -ksp_mixedcg_value_format e8m10 -ksp_mixedcg_guard_departure 1e-300", &ksp));
  PetscCall(SolveTrue(ksp, A, b, &reason, &rel));
  PetscCall(KSPMixedCGGetStats(ksp, &st));
  CHECK(reason > 0 && rel <= 1.01e-4 && st.raises == 1 && !st.fp64_fallback && st.fp32_vcycles > 0, "mixedcg + gamg, every segment lossy, rtol 1e-4: reason %s, true residual %g, %" PetscInt_FMT " raises (want 1), FP64 fallback %d, %" PetscInt_FMT " FP32 V-cycles", KSPConvergedReasons[reason], (double)rel, st.raises,
        (int)st.fp64_fallback, st.fp32_vcycles);
  PetscCall(ViewText(ksp, buf, size));
  CHECK(strstr(buf, "operator now: e8m22") && strstr(buf, "LOSSY e8m22") && !strstr(buf, "LOSSY e8m10,"), "mixedcg + gamg after a raise: -ksp_view does not show the operator and the V-cycle's levels at e8m22:\n%s", buf);
  PetscCall(PetscOptionsInsertString(NULL, "-grc_ksp_mixedcg_guard_departure 0.05"));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_CURRENT, PETSC_CURRENT, PETSC_CURRENT));
  PetscCall(SolveTrue(ksp, A, b, &reason, &rel));
  PetscCall(KSPMixedCGGetStats(ksp, &st));
  CHECK(reason > 0 && rel <= 1.01e-8 && st.raises == 0 && st.fp32_vcycles > 0 && st.mantissa_bits == 22, "mixedcg + gamg, the next solve at the level reached: reason %s, true residual %g, %" PetscInt_FMT " raises (want 0), %" PetscInt_FMT " FP32 V-cycles, %" PetscInt_FMT " mantissa bits (want 22)", KSPConvergedReasons[reason], (double)rel, st.raises, st.fp32_vcycles, st.mantissa_bits);
  PetscCall(KSPDestroy(&ksp));

  PetscCall(FromString(A, "grf_", "-ksp_type mixedcg -ksp_rtol 1e-8 -pc_type gamg -ksp_mixedcg_guard_departure 1e-300", &ksp));
  PetscCall(SolveTrue(ksp, A, b, &reason, &rel));
  PetscCall(KSPMixedCGGetStats(ksp, &st));
  CHECK(reason > 0 && rel <= 1.01e-8 && st.raises == 2 && st.fp64_fallback, "mixedcg + gamg, every segment lossy, rtol 1e-8: reason %s, true residual %g, %" PetscInt_FMT " raises (want 2), FP64 fallback %d (want 1)", KSPConvergedReasons[reason], (double)rel, st.raises,
        (int)st.fp64_fallback);
  PetscCall(ViewText(ksp, buf, size));
  CHECK(strstr(buf, "its V-cycle runs in FP64: the guard's FP64 fallback") != NULL, "mixedcg + gamg after the FP64 fallback: -ksp_view does not say the PC runs in FP64:\n%s", buf);
  PetscCall(KSPDestroy(&ksp));

  /* the stall check after every step: the cycle passes it (the dense coarse solve's difference
     from GAMG's is below the threshold), no raise, converged */
  PetscCall(FromString(A, "grs_", "-ksp_type mixedcg -ksp_rtol 1e-8 -pc_type gamg -ksp_mixedcg_guard_pc_steps 1", &ksp));
  PetscCall(SolveTrue(ksp, A, b, &reason, &rel));
  PetscCall(KSPMixedCGGetStats(ksp, &st));
  CHECK(reason > 0 && rel <= 1.01e-8 && st.raises == 0 && st.pc_checks > 0 && st.pc_departure < 0.2, "mixedcg + gamg checked after every step: reason %s, true residual %g, %" PetscInt_FMT " raises (want 0), %" PetscInt_FMT " checks (want some), last departure %g", KSPConvergedReasons[reason], (double)rel, st.raises, st.pc_checks,
        (double)st.pc_departure);
  PetscCall(ViewText(ksp, buf, size));
  CHECK(strstr(buf, "V-cycle checks against the PC in FP64") != NULL && strstr(buf, "guard of the FP32 V-cycle: after 1 steps") != NULL, "mixedcg + gamg checked after every step: -ksp_view does not show the checks:\n%s", buf);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(PetscFree(buf));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "the guard raises the FP32 V-cycle with the operator, then the PC in FP64: ok\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The FP32 V-cycle follows the PC's smoothers: after a solve, the smoothers set to 3 steps
   (KSPSetTolerances() on each level's KSP, no new operator); the next solve's -ksp_view shows a
   cycle of degree 3 (it showed 2), converged. One rank (the FP32 cycle's). */
static PetscErrorCode SmootherChange(Mat A, Vec b)
{
  KSP                ksp;
  PC                 pc;
  PetscInt           levels;
  KSPConvergedReason reason;
  PetscReal          rel;
  char              *buf;
  const size_t       size = 1 << 18;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(size, &buf));
  PetscCall(FromString(A, "smc_", "-ksp_type mixedcg -ksp_rtol 1e-8 -pc_type gamg", &ksp));
  for (int k = 0; k < 2; k++) {
    const char *want = k == 0 ? "smoothing of degree 2" : "smoothing of degree 3";
    PetscCall(SolveTrue(ksp, A, b, &reason, &rel));
    CHECK(reason > 0 && rel <= 1.01e-8, "mixedcg + gamg, smoothers of %d steps: reason %s, true residual %g", k ? 3 : 2, KSPConvergedReasons[reason], (double)rel);
    PetscCall(ViewText(ksp, buf, size));
    CHECK(strstr(buf, want) != NULL, "mixedcg + gamg: -ksp_view lacks '%s'", want);
    if (k == 0) {
      PetscCall(KSPGetPC(ksp, &pc));
      PetscCall(PCMGGetLevels(pc, &levels));
      for (PetscInt l = 1; l < levels; l++) {
        KSP       s;
        PetscReal rtol, atol, dtol;
        PetscInt  maxit;
        PetscCall(PCMGGetSmoother(pc, l, &s));
        PetscCall(KSPGetTolerances(s, &rtol, &atol, &dtol, &maxit));
        PetscCall(KSPSetTolerances(s, rtol, atol, dtol, 3));
      }
    }
  }
  PetscCall(KSPDestroy(&ksp));
  PetscCall(PetscFree(buf));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "smoothers changed after a solve: the FP32 cycle follows (degree 2, then 3): ok\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A PC the user chose is applied in FP64 at every step: for each, KSPMIXEDCG against PETSc's CG
   with the same PC options in the same run, to a true residual of 1e-8: converged, the true
   residual reached, iterations at most 1.25x CG's (+2: on this matrix the method's FP32 vectors
   and e8m14 copy take 1.15-1.23x FP64 CG's steps with every PC, its own Jacobi scaling
   included; a PC applied wrongly, e.g. D^-1/2 M^-1 D^-1/2 for D^1/2 M^-1 D^1/2, takes twice as
   many), one PCApply() per step and per reliable update (none for PCJACOBI, the method's own). */
static PetscErrorCode ChosenPC(void)
{
  const char *one[]  = {"-pc_type jacobi", "-pc_type ilu", "-pc_type icc", "-pc_type sor", "-pc_type jacobi -pc_jacobi_type rowl1", "-pc_type gamg", "-pc_type gamg -ksp_mixedcg_mg_dense_coarse 0", "-pc_type gamg -ksp_mixedcg_mg_fp32 false", NULL};
  const char *many[] = {"-pc_type bjacobi", "-pc_type asm", "-pc_type sor", "-pc_type gamg", NULL};
  PetscMPIInt size;
  Mat         A;
  Vec         b;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(VarCoef2d(48, PETSC_FALSE, &A));
  PetscCall(MatCreateVecs(A, NULL, &b));
  PetscCall(TestRandomVec(b, 7));
  for (const char **pcs = size == 1 ? one : many; *pcs; pcs++) {
    PetscInt  its[2];
    PetscReal rel[2];
    for (int k = 0; k < 2; k++) { /* FP64 CG, then KSPMIXEDCG, with the same PC */
      KSP                ksp;
      KSPConvergedReason reason;
      char               opts[256], tag[16];
      PetscCall(PetscSNPrintf(tag, sizeof(tag), "cp%d", (int)(pcs - (size == 1 ? one : many)))); /* one prefix per solve */
      PetscCall(PetscSNPrintf(opts, sizeof(opts), "-ksp_type %s -ksp_rtol 1e-8 -ksp_norm_type unpreconditioned -ksp_max_it 2000 %s", k == 0 ? "cg" : "mixedcg", *pcs));
      PetscCall(SolveFromString(A, b, tag, k, opts, &ksp, &reason, &rel[k]));
      PetscCall(KSPGetIterationNumber(ksp, &its[k]));
      CHECK(reason > 0 && rel[k] <= 1e-8 * 1.01, "%s with %s: reason %s, true residual %g", k == 0 ? "cg" : "mixedcg", *pcs, KSPConvergedReasons[reason], (double)rel[k]);
      if (k == 1) {
        KSPMixedCGStats st;
        PetscCall(KSPMixedCGGetStats(ksp, &st));
        const PetscBool own  = (PetscBool)!strcmp(*pcs, "-pc_type jacobi"); /* the method's own scaling: no PCApply() */
        PetscBool       fp32 = PETSC_FALSE;
        /* PCGAMG's V-cycle runs in FP32 at one rank, on the host and the CUDA backend (unless turned off); the PC in FP64 elsewhere */
        if (strstr(*pcs, "gamg") && !strstr(*pcs, "mg_fp32 false") && size == 1) fp32 = PETSC_TRUE;
        CHECK(fp32 ? st.fp32_vcycles >= st.its : st.fp32_vcycles == 0, "mixedcg with %s: %" PetscInt_FMT " FP32 V-cycles in %" PetscInt_FMT " steps (want %s)", *pcs, st.fp32_vcycles, st.its, fp32 ? "one per step at least" : "none");
        if (own) CHECK(st.pc_applications == 0, "mixedcg with %s: %" PetscInt_FMT " PC applications (want 0)", *pcs, st.pc_applications);
        else
          CHECK(st.pc_applications >= st.its && st.pc_applications <= st.its + st.reliable_updates + 2 * st.breakdowns + 2 * st.pc_checks + 1, "mixedcg with %s: %" PetscInt_FMT " PC applications for %" PetscInt_FMT " steps and %" PetscInt_FMT " reliable updates", *pcs, st.pc_applications, st.its, st.reliable_updates);
      }
      PetscCall(KSPDestroy(&ksp));
    }
    CHECK(its[1] <= 1.25 * its[0] + 2, "mixedcg with %s: %" PetscInt_FMT " iterations against CG's %" PetscInt_FMT " (want at most 1.25x + 2)", *pcs, its[1], its[0]);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "chosen PC %s: mixedcg %" PetscInt_FMT " its (true residual %.3g), cg %" PetscInt_FMT " its (%.3g): ok\n", *pcs, its[1], (double)rel[1], its[0], (double)rel[0]));
  }
  if (size == 1) {
    PetscCall(SmootherChange(A, b));
    PetscCall(GuardRaisesTheCycle(A, b));
    /* the FP32 V-cycle's default delta (0.01) against the option's 0.1: fewer reliable updates,
       the same answer */
    PetscInt updates[2];
    for (int k = 0; k < 2; k++) {
      KSP                ksp;
      KSPConvergedReason reason;
      KSPMixedCGStats    st;
      PetscReal          rel;
      PetscCall(SolveFromString(A, b, "cpd", k, k == 0 ? "-ksp_type mixedcg -ksp_rtol 1e-8 -pc_type gamg" : "-ksp_type mixedcg -ksp_rtol 1e-8 -pc_type gamg -ksp_mixedcg_delta 0.1", &ksp, &reason, &rel));
      PetscCall(KSPMixedCGGetStats(ksp, &st));
      CHECK(reason > 0 && rel <= 1.01e-8 && st.fp32_vcycles > 0, "mixedcg + gamg, delta %s: reason %s, true residual %g, %" PetscInt_FMT " FP32 V-cycles", k ? "0.1" : "default", KSPConvergedReasons[reason], (double)rel, st.fp32_vcycles);
      updates[k] = st.reliable_updates;
      PetscCall(KSPDestroy(&ksp));
    }
    CHECK(updates[0] < updates[1], "mixedcg + gamg: %" PetscInt_FMT " reliable updates at the FP32 V-cycle's default delta, %" PetscInt_FMT " at 0.1 (want fewer)", updates[0], updates[1]);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "chosen PC gamg: %" PetscInt_FMT " reliable updates at the V-cycle's default delta, %" PetscInt_FMT " at 0.1: ok\n", updates[0], updates[1]));
  }
  if (size == 1 && !strcmp(mattype, MATAIJ)) {
    /* an MPIAIJ Pmat on one rank: GAMG's levels are MPIAIJ, whose CSR the FP32 copies do not
       read: the V-cycle runs in FP64 (and -ksp_view says why) */
    Mat                Ampi;
    KSP                ksp;
    KSPConvergedReason reason;
    KSPMixedCGStats    st;
    PetscReal          rel;
    PetscCall(MatConvert(A, MATMPIAIJ, MAT_INITIAL_MATRIX, &Ampi));
    PetscCall(PetscOptionsInsertString(NULL, "-cpm_ksp_type mixedcg -cpm_ksp_rtol 1e-8 -cpm_pc_type gamg"));
    PetscCall(FromOptions(Ampi, "cpm_", &ksp));
    PetscCall(SolveTrue(ksp, Ampi, b, &reason, &rel));
    PetscCall(KSPMixedCGGetStats(ksp, &st));
    CHECK(reason > 0 && rel <= 1.01e-8 && st.fp32_vcycles == 0 && st.pc_applications >= st.its, "mixedcg + gamg on an MPIAIJ Pmat at one rank: reason %s, true residual %g, %" PetscInt_FMT " FP32 V-cycles (want 0), %" PetscInt_FMT " PC applications", KSPConvergedReasons[reason], (double)rel, st.fp32_vcycles, st.pc_applications);
    PetscCall(KSPDestroy(&ksp));
    PetscCall(MatDestroy(&Ampi));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "chosen PC gamg on an MPIAIJ Pmat at one rank: the V-cycle in FP64: ok\n"));
  }
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSP_NORM_NONE: a fixed number of steps (KSPConvergedSkip), as a smoother; a PCMG coarse solver
   (PCMG sets that norm) inside a solve to the true residual. */
static PetscErrorCode NormNone(Mat A, Vec b)
{
  KSP                ksp, coarse;
  PC                 pc;
  Vec                x;
  PetscInt           its;
  KSPConvergedReason reason;
  PetscReal          rel, rel_cg;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(b, &x));
  for (int k = 0; k < 2; k++) { /* FP64 CG + Jacobi, then KSPMIXEDCG: 7 steps each */
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, k == 0 ? KSPCG : KSPMIXEDCG));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCJACOBI));
    PetscCall(KSPSetNormType(ksp, KSP_NORM_NONE));
    PetscCall(KSPSetConvergenceTest(ksp, KSPConvergedSkip, NULL, NULL));
    PetscCall(KSPSetTolerances(ksp, PETSC_CURRENT, PETSC_CURRENT, PETSC_CURRENT, 7));
    PetscCall(VecSet(x, 0.0));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    PetscCall(KSPGetIterationNumber(ksp, &its));
    PetscCall(TestTrueResidual(A, b, x, k == 0 ? &rel_cg : &rel));
    PetscCall(KSPDestroy(&ksp));
  }
  CHECK(reason == KSP_CONVERGED_ITS && its == 7 && rel <= 1.01 * rel_cg, "KSP_NORM_NONE, 7 steps: reason %s after %" PetscInt_FMT " steps, true residual %g (FP64 CG's after 7 steps %g)", KSPConvergedReasons[reason], its, (double)rel, (double)rel_cg);
  PetscCall(VecDestroy(&x));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPFGMRES));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_CURRENT, PETSC_CURRENT, 200));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCMG));
  PetscCall(PCMGSetLevels(pc, 1, NULL));
  PetscCall(PCMGGetCoarseSolve(pc, &coarse));
  PetscCall(KSPSetType(coarse, KSPMIXEDCG));
  PetscCall(KSPSetTolerances(coarse, PETSC_CURRENT, PETSC_CURRENT, PETSC_CURRENT, 30));
  {
    PC cpc;
    PetscCall(KSPGetPC(coarse, &cpc));
    PetscCall(PCSetType(cpc, PCJACOBI));
  }
  PetscCall(SolveTrue(ksp, A, b, &reason, &rel));
  CHECK(reason > 0 && rel <= 1e-8 * 1.01, "PCMG with a KSPMIXEDCG coarse solver: reason %s, true residual %g", KSPConvergedReasons[reason], (double)rel);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "KSP_NORM_NONE (7 steps; PCMG coarse solver): ok\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A zero diagonal entry at the user's row N - 1 (the last rank's block): as PCBJACOBI's block
   solver KSPMIXEDCG ends with KSP_DIVERGED_PC_FAILED, and the outer solve stops on every rank
   (no error, no hang); a block solver that raises (-ksp_error_if_not_converged) names the row in
   the user's numbering for a matrix of ours, the block's own with the way to the user's for
   others. */
static PetscErrorCode BlockRefusal(PetscInt N, Vec b)
{
  Mat                A, Ad;
  KSP                ksp;
  KSPConvergedReason reason;
  PetscErrorCode     ierr;
  PetscReal          rel;
  char               msg[2048], want[256];
  PetscInt           lo, hi;
  PetscBool          ours;

  PetscFunctionBeginUser;
  PetscCall(Tridiag(N, N - 1, 0.0, 0, &A));
  PetscCall(PetscOptionsSetValue(NULL, "-bj_ksp_type", "fgmres"));
  PetscCall(PetscOptionsSetValue(NULL, "-bj_pc_type", "bjacobi"));
  PetscCall(PetscOptionsSetValue(NULL, "-bj_sub_ksp_type", "mixedcg"));
  PetscCall(PetscOptionsSetValue(NULL, "-bj_sub_pc_type", "none"));
  PetscCall(FromOptions(A, "bj_", &ksp));
  TRY(SolveTrue(ksp, A, b, &reason, &rel), &ierr, msg);
  CHECK(ierr == 0 && reason == KSP_DIVERGED_PC_FAILED, "PCBJACOBI + KSPMIXEDCG on a zero diagonal: error %d (%s), reason %s, want KSP_DIVERGED_PC_FAILED on every rank", (int)ierr, msg, ierr ? "-" : KSPConvergedReasons[reason]);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(PetscOptionsClearValue(NULL, "-bj_ksp_type"));
  PetscCall(PetscOptionsClearValue(NULL, "-bj_pc_type"));
  PetscCall(PetscOptionsClearValue(NULL, "-bj_sub_ksp_type"));
  PetscCall(PetscOptionsClearValue(NULL, "-bj_sub_pc_type"));

  /* each rank's block solved alone (no collective), raising */
  PetscCall(MatGetOwnershipRange(A, &lo, &hi));
  PetscCall(MatGetDiagonalBlock(A, &Ad));
  PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
  PetscCall(KSPSetOptionsPrefix(ksp, "sub_"));
  PetscCall(KSPSetOperators(ksp, Ad, Ad));
  PetscCall(KSPSetType(ksp, KSPMIXEDCG));
  PetscCall(KSPSetErrorIfNotConverged(ksp, PETSC_TRUE));
  {
    Vec bl, xl;
    PetscCall(MatCreateVecs(Ad, &xl, &bl));
    PetscCall(VecSet(bl, 1.0));
    TRY(KSPSolve(ksp, bl, xl), &ierr, msg);
    PetscCall(VecDestroy(&bl));
    PetscCall(VecDestroy(&xl));
  }
  PetscCall(PetscStrbeginswith(mattype, "aij", &ours));
  ours = (PetscBool)(!ours && lo + N > hi); /* a block of an MPI matrix of ours (several ranks) */
  if (ours) PetscCall(PetscSNPrintf(want, sizeof(want), "row %" PetscInt_FMT " of the user's matrix has the diagonal entry 0", N - 1));
  else PetscCall(PetscSNPrintf(want, sizeof(want), "row %" PetscInt_FMT " of its block has the diagonal entry 0", N - 1 - lo));
  if (hi == N && lo < hi) CHECK(ierr == PETSC_ERR_ARG_WRONG && strstr(msg, want), "the block solver with the zero diagonal: error %d (%s), want \"%s\"", (int)ierr, msg, want);
  else CHECK(ierr == 0, "a block solver without the zero diagonal: error %d (%s)", (int)ierr, msg);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "block solver refusal: KSP_DIVERGED_PC_FAILED everywhere, the user's row named: ok\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a solve, new values with a zero diagonal: refused with a PETSc error on every rank, the
   right-hand side not left locked (VecSet() works), the next solve with repaired values fine. */
static PetscErrorCode RefusedSolveReleasesRhs(PetscInt N, Vec b)
{
  Mat                A;
  KSP                ksp;
  KSPConvergedReason reason;
  PetscErrorCode     ierr;
  PetscReal          rel;
  char               msg[2048];
  PetscInt           lo, hi;

  PetscFunctionBeginUser;
  PetscCall(Tridiag(N, -1, 0, 0, &A));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPMIXEDCG));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_CURRENT, PETSC_CURRENT, 1000));
  PetscCall(SolveTrue(ksp, A, b, &reason, &rel));
  CHECK(reason > 0 && rel <= 1e-8 * 1.01, "first solve: reason %s, true residual %g", KSPConvergedReasons[reason], (double)rel);
  PetscCall(MatGetOwnershipRange(A, &lo, &hi));
  for (int k = 0; k < 2; k++) {
    if (N / 2 >= lo && N / 2 < hi) PetscCall(MatSetValue(A, N / 2, N / 2, k == 0 ? 0.0 : 2.0, INSERT_VALUES));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    if (k == 0) {
      TRY(SolveTrue(ksp, A, b, &reason, &rel), &ierr, msg);
      CHECK(ierr == PETSC_ERR_ARG_WRONG, "zero diagonal: error %d (%s), want PETSC_ERR_ARG_WRONG on every rank", (int)ierr, msg);
      TRY(VecSet(b, 1.0), &ierr, msg);
      CHECK(ierr == 0, "VecSet(b) after the refused solve: error %d (%s)", (int)ierr, msg);
    } else {
      PetscCall(SolveTrue(ksp, A, b, &reason, &rel));
      CHECK(reason > 0 && rel <= 1e-8 * 1.01, "solve after the repair: reason %s, true residual %g", KSPConvergedReasons[reason], (double)rel);
    }
  }
  PetscCall(KSPDestroy(&ksp));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "refused solve: the right-hand side released, the next solve fine: ok\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A scaled entry no low-precision format holds (-1e-300 against a unit diagonal): the refusal
   names the scaled value itself, and every remedy it names solves; a NaN names KSPMIXEDCG's copy,
   not a preconditioner. */
static PetscErrorCode RangeRemedies(PetscInt N)
{
  Mat                A;
  Vec                b;
  KSP                ksp;
  KSPConvergedReason reason;
  PetscErrorCode     ierr;
  PetscReal          rel;
  char               msg[2048], use[2048];
  int                tried       = 0;
  const char *const  remedy[][2] = {
     {"-ksp_mixedcg_mat_packsell_scaling auto", "-tn_ksp_mixedcg_mat_packsell_scaling"},
     {"bf16", "-tn_ksp_mixedcg_value_format"},
     {"e8m14", "-tn_ksp_mixedcg_value_format"},
     {"e8m22", "-tn_ksp_mixedcg_value_format"},
     {"value format exact", "-tn_ksp_mixedcg_value_format"},
  };
  const char *const value[] = {"auto", "bf16", "e8m14", "e8m22", "exact"};

  PetscFunctionBeginUser;
  PetscCall(Tridiag(N, -1, 0, 1e-300, &A));
  PetscCall(MatCreateVecs(A, NULL, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(FromOptions(A, "tn_", &ksp));
  PetscCall(KSPSetType(ksp, KSPMIXEDCG));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_CURRENT, PETSC_CURRENT, 1000));
  TRY(SolveTrue(ksp, A, b, &reason, &rel), &ierr, msg);
  PetscCall(KSPDestroy(&ksp));
  { /* the owner of row 1 names the entry, the others point to it: its message on every rank */
    PetscMPIInt rank, mine, owner;
    PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    mine = strstr(msg, "another rank") ? -1 : rank;
    PetscCallMPI(MPIU_Allreduce(&mine, &owner, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD));
    CHECK(owner >= 0, "-1e-300 scaled: no rank names the entry (%s)", msg);
    PetscCallMPI(MPI_Bcast(msg, sizeof(msg), MPI_CHAR, owner, PETSC_COMM_WORLD));
  }
  CHECK(ierr == PETSC_ERR_ARG_OUTOFRANGE && strstr(msg, "value -5e-301 underflows"), "-1e-300 scaled: error %d (%s), want PETSC_ERR_ARG_OUTOFRANGE naming the scaled value -5e-301", (int)ierr, msg);
  PetscCall(PetscStrncpy(use, strstr(msg, "; use ") ? strstr(msg, "; use ") : "", sizeof(use))); /* the remedies */
  for (int k = 0; k < 5; k++) {
    if (!strstr(use, remedy[k][0])) continue;
    tried++;
    PetscCall(PetscOptionsSetValue(NULL, remedy[k][1], value[k]));
    PetscCall(FromOptions(A, "tn_", &ksp));
    PetscCall(KSPSetType(ksp, KSPMIXEDCG));
    PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_CURRENT, PETSC_CURRENT, 1000));
    PetscCall(KSPSetFromOptions(ksp));
    TRY(SolveTrue(ksp, A, b, &reason, &rel), &ierr, msg);
    CHECK(ierr == 0 && reason > 0 && rel <= 1e-8 * 1.01, "the remedy %s %s the message names: error %d (%s), reason %s, true residual %g", remedy[k][1], value[k], (int)ierr, msg, ierr ? "-" : KSPConvergedReasons[reason], (double)rel);
    PetscCall(KSPDestroy(&ksp));
    PetscCall(PetscOptionsClearValue(NULL, remedy[k][1]));
  }
  CHECK(tried > 0, "the refusal names no remedy: %s", use);
  PetscCall(MatDestroy(&A));
  /* a NaN */
  PetscCall(Tridiag(N, 2, NAN, 0, &A));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPMIXEDCG));
  TRY(KSPSetUp(ksp), &ierr, msg);
  CHECK(ierr != 0 && !strstr(msg, "preconditioner") && (strstr(msg, "KSPMIXEDCG") || strstr(msg, "another rank")), "a NaN diagonal: error %d (%s), want KSPMIXEDCG's message without a preconditioner", (int)ierr, msg);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(MatDestroy(&A));
  PetscCall(VecDestroy(&b));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "range refusal: the scaled value named, %d named remedies solve: ok\n", tried));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat      A;
  Vec      b;
  PetscInt N = 64;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscSpMVInitializePackage());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_type", mattype, sizeof(mattype), NULL));
  PetscCall(Tridiag(N, -1, 0, 0, &A));
  PetscCall(MatCreateVecs(A, NULL, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(DefaultPC(A, b));
  PetscCall(ChosenPC());
  PetscCall(SingularCoarse());
  PetscCall(NormNone(A, b));
  PetscCall(BlockRefusal(N, b));
  PetscCall(RefusedSolveReleasesRhs(N, b));
  PetscCall(RangeRemedies(N));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS\n"));
  PetscCall(PetscFinalize());
  return 0;
}
