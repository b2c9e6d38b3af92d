static const char help[] = "Compares FP64 CG + Jacobi with the mixed-precision preconditioner PCMIXEDKRYLOV on one matrix.\n\
Every solve starts from x = 0 with b = A xe and is judged by its true residual ||b - A x|| / ||b||, computed\n\
after the solve with the exact matrix (an AIJ copy of it), whatever the solver did inside.\n\
Matrix (one of):\n\
  -f <file>          PETSc binary matrix (scripts/mtx2petsc.py makes one from Matrix Market)\n\
  -lap7 <n>          3-D 7-point Laplacian on an n^3 grid (Dirichlet)\n\
  -lap27 <n>         3-D 27-point Laplacian on an n^3 grid (Dirichlet)\n\
  -var_coeff         with -lap7/-lap27: coefficients k(midpoint of each coupling) = 1 + 0.5 sin(..) cos(..) sin(..),\n\
                     values that no reduced-precision format represents exactly\n\
  -mat_type <type>   the type of the solves' matrix (aij, aijcusparse, rgcsrcuda, packsellcuda ...; lossless ones)\n\
Solvers (-solvers <list>, default cg_jacobi,mixedkrylov_cg,mixedkrylov_f3r; also mixedcg, gamg, mixedcg_gamg, cg_ilu,\n\
mixedcg_ilu): each has an options\n\
prefix, so its KSP and PC can be tuned from the command line:\n\
  cg_jacobi        CG + Jacobi, FP64                                   prefix -cg_jacobi_\n\
  mixedkrylov_cg   FGMRES(100) + PCMIXEDKRYLOV inner cg               prefix -mixedkrylov_cg_\n\
  mixedkrylov_f3r  FGMRES(100) + PCMIXEDKRYLOV inner f3r              prefix -mixedkrylov_f3r_\n\
  mixedcg          KSPMIXEDCG: FP32 CG with reliable updates          prefix -mixedcg_\n\
  gamg             CG + GAMG                                           prefix -gamg_\n\
  mixedcg_gamg     KSPMIXEDCG + GAMG (the V-cycle in FP32 at one rank)  prefix -mixedcg_gamg_\n\
  cg_ilu           CG + ILU(0) (block Jacobi + ILU(0) on several ranks) prefix -cg_ilu_\n\
  mixedcg_ilu      KSPMIXEDCG + the same ILU in FP64                   prefix -mixedcg_ilu_\n\
  -rtol <1e-8>       relative tolerance of every solve (unpreconditioned residual norm)\n\
  -repeat <1>        timed solves per solver after one untimed warm-up solve; the median is reported\n\
  -check_true_residual <tol>  exit with code 1 if a solver's true residual exceeds tol or its KSP diverged\n\
  -report_devices    print per rank its host and the CUDA device (id, PCI bus id) PETSc bound it to\n\
  -time_update <k>   after each solver's solves, k pairs of value updates of the same pattern (A scaled by 2,\n\
                     then by 1/2: exact, A is restored) each followed by a timed PCSetUp; one line per solver:\n\
                     update solver=<name> update_s=<median PCSetUp after a value change> updates=<2k>;\n\
                     -<solver>_time_update <k> for one solver (e.g. -mixedkrylov_cg_time_update 2)\n\
  -residual_history <file>  append solver,iteration,time_s,relative_residual of the last timed solve of each solver\n\
                     (the residual norm the KSP tests: unpreconditioned, the true residual up to rounding)\n\
One line per solver:\n\
  solver=<name> setup_s=<PCSetUp> solve_s=<median KSPSolve> outer_its=<k> inner_its=<per application>\n\
  (mixedcg: outer_its = CG steps, inner_its = its reliable updates)\n\
  true_residual=<||b - A x|| / ||b||> reason=<KSPConvergedReason>\n\n";

#include <petscksp.h>
#include <petscspmv.h>
#include <petsctime.h>
#include "laplacian3d.h"
#include "report_devices.h"

#define MAX_SOLVERS 8

/* Residual history of one solve: the time since its start at every outer iteration. */
typedef struct {
  PetscLogDouble  t0;
  PetscInt        n, cap;
  PetscReal      *res;
  PetscLogDouble *time;
} History;

static PetscErrorCode HistoryMonitor(KSP ksp, PetscInt it, PetscReal rnorm, void *ctx)
{
  History       *h = (History *)ctx;
  PetscLogDouble t;

  PetscFunctionBeginUser;
  (void)ksp;
  if (it == 0) h->n = 0;
  if (h->n == h->cap) {
    h->cap = h->cap ? 2 * h->cap : 256;
    PetscCall(PetscRealloc(sizeof(PetscReal) * (size_t)h->cap, &h->res));
    PetscCall(PetscRealloc(sizeof(PetscLogDouble) * (size_t)h->cap, &h->time));
  }
  PetscCall(PetscTime(&t));
  h->res[h->n]  = rnorm;
  h->time[h->n] = t - h->t0;
  h->n++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static int CompareDouble(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The cost of a value update of the preconditioner: 2 k times A's values change with the same
   nonzero pattern (scaled by 2, then by 1/2: exact in binary floating point, so A ends as it
   began) and PCSetUp() runs again (PETSc sees the new Mat state: SAME_NONZERO_PATTERN); prints
   the median time of those PCSetUp() calls. */
static PetscErrorCode TimeValueUpdates(KSP ksp, Mat A, const char *name, PetscInt k)
{
  PC              pc;
  PetscLogDouble *t, t0, t1;
  PetscInt        n = 2 * k;
  PetscBool       mixed;
  char            how[128] = "";

  PetscFunctionBeginUser;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscMalloc1(n, &t));
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(MatScale(A, i % 2 ? 0.5 : 2.0));
    PetscCall(PetscBarrier((PetscObject)ksp));
    PetscCall(PetscTime(&t0));
    PetscCall(PCSetUp(pc));
    PetscCall(PetscBarrier((PetscObject)ksp));
    PetscCall(PetscTime(&t1));
    t[i] = t1 - t0;
  }
  qsort(t, (size_t)n, sizeof(PetscLogDouble), CompareDouble);
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCMIXEDKRYLOV, &mixed));
  if (mixed) { /* that each PCSetUp() re-encoded the values and did not rebuild */
    PCMixedKrylovStats st;
    PetscCall(PCMixedKrylovGetStats(pc, &st));
    PetscCall(PetscSNPrintf(how, sizeof(how), " (PCMIXEDKRYLOV: %" PetscInt_FMT " builds, %" PetscInt_FMT " value updates)", st.builds, st.value_updates));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "update solver=%s update_s=%.6f updates=%" PetscInt_FMT "%s\n", name, (double)t[n / 2], n, how));
  PetscCall(PetscFree(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -time_update k for one solver: -<name>_time_update, else the global count. */
static PetscErrorCode UpdateCount(const char *name, PetscInt global, PetscInt *k)
{
  char prefix[64];

  PetscFunctionBeginUser;
  *k = global;
  PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "%s_", name));
  PetscCall(PetscOptionsGetInt(NULL, prefix, "-time_update", k, NULL));
  PetscCheck(*k >= 0 && *k <= PETSC_INT_MAX / 2, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-%stime_update must be between 0 and %" PetscInt_FMT " (got %" PetscInt_FMT ")", prefix, (PetscInt)(PETSC_INT_MAX / 2), *k);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The -solvers list before anything is built: at most MAX_SOLVERS known names, each with a valid
   -<name>_time_update. */
static PetscErrorCode CheckSolvers(PetscInt n, char **names)
{
  const char *known[] = {"cg_jacobi", "mixedkrylov_cg", "mixedkrylov_f3r", "mixedcg", "gamg", "mixedcg_gamg", "cg_ilu", "mixedcg_ilu"};

  PetscFunctionBeginUser;
  PetscCheck(n <= MAX_SOLVERS, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-solvers takes at most %d names", MAX_SOLVERS);
  for (PetscInt i = 0; i < n; i++) {
    PetscBool is = PETSC_FALSE;
    PetscInt  k;
    for (size_t j = 0; j < sizeof(known) / sizeof(known[0]) && !is; j++) PetscCall(PetscStrcmp(names[i], known[j], &is));
    PetscCheck(is, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "Unknown solver '%s' in -solvers: use cg_jacobi, mixedkrylov_cg, mixedkrylov_f3r, mixedcg, gamg, mixedcg_gamg, cg_ilu or mixedcg_ilu", names[i]);
    PetscCall(UpdateCount(names[i], 0, &k));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Sets up the KSP of solver `name` on A; PETSC_FALSE in *known for an unknown name. */
static PetscErrorCode ConfigureSolver(KSP ksp, const char *name, PetscReal rtol, PetscBool *known)
{
  PC        pc;
  PetscBool is;
  char      prefix[64];

  PetscFunctionBeginUser;
  *known = PETSC_TRUE;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(KSPSetTolerances(ksp, rtol, PETSC_CURRENT, PETSC_CURRENT, 100000));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  PetscCall(PetscStrcmp(name, "cg_jacobi", &is));
  if (is) {
    PetscCall(KSPSetType(ksp, KSPCG));
    PetscCall(PCSetType(pc, PCJACOBI));
  } else if ((PetscStrcmp(name, "mixedkrylov_cg", &is), is) || (PetscStrcmp(name, "mixedkrylov_f3r", &is), is)) {
    /* FGMRES, not FCG: FCG's VecMTDot runs on the host for CUDA vectors (docs/mixed.md); the
       inner method named by the solver unless its options name one */
    char      opt[64];
    PetscBool given;

    PetscCall(KSPSetType(ksp, KSPFGMRES));
    PetscCall(KSPGMRESSetRestart(ksp, 100));
    PetscCall(PCSetType(pc, PCMIXEDKRYLOV));
    PetscCall(PetscSNPrintf(opt, sizeof(opt), "-%s_pc_mixedkrylov_inner", name));
    PetscCall(PetscOptionsHasName(NULL, NULL, opt, &given));
    if (!given) PetscCall(PetscOptionsSetValue(NULL, opt, strstr(name, "f3r") ? "f3r" : "cg"));
  } else if (PetscStrcmp(name, "mixedcg", &is), is) {
    /* its own Jacobi scaling: no PC */
    PetscCall(KSPSetType(ksp, KSPMIXEDCG));
    PetscCall(PCSetType(pc, PCNONE));
  } else if ((PetscStrcmp(name, "gamg", &is), is) || (PetscStrcmp(name, "mixedcg_gamg", &is), is)) {
    PetscCall(KSPSetType(ksp, strstr(name, "mixedcg") ? KSPMIXEDCG : KSPCG));
    PetscCall(PCSetType(pc, PCGAMG));
  } else if ((PetscStrcmp(name, "cg_ilu", &is), is) || (PetscStrcmp(name, "mixedcg_ilu", &is), is)) {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &size));
    PetscCall(KSPSetType(ksp, strstr(name, "mixedcg") ? KSPMIXEDCG : KSPCG));
    PetscCall(PCSetType(pc, size > 1 ? PCBJACOBI : PCILU)); /* PCBJACOBI's blocks: ILU(0) by default */
    if (strstr(name, "mixedcg")) {
      /* KSPMIXEDCG takes PETSc's default PCs (ILU, block Jacobi) set without -pc_type for the
         default, which gives way to its own Jacobi scaling: the option says they are chosen */
      PetscBool given;
      PetscCall(PetscOptionsHasName(NULL, NULL, "-mixedcg_ilu_pc_type", &given));
      if (!given) PetscCall(PetscOptionsSetValue(NULL, "-mixedcg_ilu_pc_type", size > 1 ? PCBJACOBI : PCILU));
    }
  } else *known = PETSC_FALSE;
  PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "%s_", name));
  PetscCall(KSPSetOptionsPrefix(ksp, prefix));
  PetscCall(KSPSetFromOptions(ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char      file[PETSC_MAX_PATH_LEN] = "", histfile[PETSC_MAX_PATH_LEN] = "", *solvers[MAX_SOLVERS + 1];
  PetscInt  nsolvers = MAX_SOLVERS + 1, n = 0, repeat = 1, nupdate = 0;
  PetscBool hasfile, lap7, lap27, var = PETSC_FALSE, check, failed = PETSC_FALSE, hashist, report = PETSC_FALSE;
  FILE     *hist = NULL;
  PetscReal rtol = 1e-8, tol = 0;
  Mat       A, Aexact;
  Vec       x, b, r, xe;
  PetscReal bnorm, rnorm;
  PetscInt  m;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscSpMVInitializePackage());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), &hasfile));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-lap7", &n, &lap7));
  if (!lap7) PetscCall(PetscOptionsGetInt(NULL, NULL, "-lap27", &n, &lap27));
  else lap27 = PETSC_FALSE;
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-var_coeff", &var, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-rtol", &rtol, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-repeat", &repeat, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-check_true_residual", &tol, &check));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-residual_history", histfile, sizeof(histfile), &hashist));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-report_devices", &report, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-time_update", &nupdate, NULL));
  if (hashist) PetscCall(PetscFOpen(PETSC_COMM_WORLD, histfile, "a", &hist));
  PetscCheck(hasfile + lap7 + lap27 == 1, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "Give exactly one matrix: -f <file>, -lap7 <n> or -lap27 <n>");
  PetscCheck(hasfile || n >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "The grid size n must be at least 1 (got %" PetscInt_FMT ")", n);
  PetscCheck(repeat >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-repeat must be at least 1");
  PetscCheck(nupdate >= 0 && nupdate <= PETSC_INT_MAX / 2, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-time_update must be between 0 and %" PetscInt_FMT " (got %" PetscInt_FMT ")", (PetscInt)(PETSC_INT_MAX / 2), nupdate);
  {
    PetscBool given;
    PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-solvers", solvers, &nsolvers, &given));
    if (!given) {
      const char *def[] = {"cg_jacobi", "mixedkrylov_cg", "mixedkrylov_f3r"};
      nsolvers          = 3;
      for (PetscInt i = 0; i < nsolvers; i++) PetscCall(PetscStrallocpy(def[i], &solvers[i]));
    }
  }
  PetscCall(CheckSolvers(nsolvers, solvers));

  /* the solves' matrix (-mat_type), and the exact AIJ matrix for the true residual, made from
     the same source (not converted from A: it does not depend on A's type, and MatConvert from
     a GPU type to AIJ goes entry by entry) */
  for (PetscInt k = 0; k < 2; k++) {
    Mat M;
    PetscCall(MatCreate(PETSC_COMM_WORLD, &M));
    if (k == 0) PetscCall(MatSetFromOptions(M));
    else PetscCall(MatSetType(M, MATAIJ));
    if (hasfile) {
      PetscViewer viewer;
      PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, file, FILE_MODE_READ, &viewer));
      PetscCall(MatLoad(M, viewer));
      PetscCall(PetscViewerDestroy(&viewer));
    } else PetscCall(Laplacian(n, lap27, var, M));
    if (k == 0) A = M;
    else Aexact = M;
  }
  PetscCall(MatGetSize(A, &m, NULL));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(VecDuplicate(x, &xe));
  if (report) PetscCall(ReportDevices(x)); /* after PETSc initialised the device for the CUDA vectors */
  {
    PetscScalar *xa;
    PetscInt     lo, hi;
    PetscCall(VecGetOwnershipRange(xe, &lo, &hi));
    PetscCall(VecGetArrayWrite(xe, &xa));
    for (PetscInt i = lo; i < hi; i++) xa[i - lo] = 1.0 + PetscSinReal((PetscReal)i);
    PetscCall(VecRestoreArrayWrite(xe, &xa));
  }
  PetscCall(MatMult(A, xe, b));
  PetscCall(VecNorm(b, NORM_2, &bnorm));
  {
    MatType mt;
    PetscCall(MatGetType(A, &mt));
    if (hasfile) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "matrix %s: %" PetscInt_FMT " rows, type %s, rtol %g\n", file, m, mt, (double)rtol));
    else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "matrix %s %" PetscInt_FMT "^3%s: %" PetscInt_FMT " rows, type %s, rtol %g\n", lap7 ? "lap7" : "lap27", n, var ? " (variable coefficients)" : "", m, mt, (double)rtol));
  }

  for (PetscInt s = 0; s < nsolvers; s++) {
    KSP                ksp;
    PC                 pc;
    PetscBool          known, mixed, mixedcg;
    PetscInt           its;
    KSPConvergedReason reason;
    PetscLogDouble     t0, t1, setup, *times;
    PetscReal          trueres;
    double             inner = 0;
    History            h     = {0, 0, 0, NULL, NULL};

    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(ConfigureSolver(ksp, solvers[s], rtol, &known));
    if (hist) PetscCall(KSPMonitorSet(ksp, HistoryMonitor, &h, NULL));
    PetscCheck(known, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Solver %s passed CheckSolvers() but ConfigureSolver() does not set it up", solvers[s]);
    PetscCall(PetscTime(&t0));
    PetscCall(KSPSetUp(ksp));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetUp(pc));
    PetscCall(PetscTime(&t1));
    setup = t1 - t0;
    PetscCall(PetscMalloc1(repeat, &times));
    for (PetscInt k = 0; k <= repeat; k++) { /* k = 0: warm-up */
      PetscCall(VecSet(x, 0.0));
      PetscCall(PetscBarrier((PetscObject)ksp));
      PetscCall(PetscTime(&t0));
      h.t0 = t0;
      PetscCall(KSPSolve(ksp, b, x));
      PetscCall(VecNorm(x, NORM_2, &rnorm)); /* waits for the device */
      PetscCall(PetscTime(&t1));
      if (k) times[k - 1] = t1 - t0;
    }
    qsort(times, (size_t)repeat, sizeof(PetscLogDouble), CompareDouble);
    PetscCall(KSPGetIterationNumber(ksp, &its));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCMIXEDKRYLOV, &mixed));
    PetscCall(PetscObjectTypeCompare((PetscObject)ksp, KSPMIXEDCG, &mixedcg));
    if (mixedcg) {
      KSPMixedCGStats st;
      PetscCall(KSPMixedCGGetStats(ksp, &st));
      inner = (double)st.reliable_updates;
    }
    if (mixed) {
      PCMixedKrylovStats st;
      PetscCall(PCMixedKrylovGetStats(pc, &st));
      inner = st.applications ? (double)st.inner_its / (double)st.applications : 0.0;
    }
    PetscCall(MatMult(Aexact, x, r));
    PetscCall(VecAYPX(r, -1.0, b));
    PetscCall(VecNorm(r, NORM_2, &rnorm));
    trueres = bnorm > 0 ? rnorm / bnorm : rnorm;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "solver=%s setup_s=%.6f solve_s=%.6f outer_its=%" PetscInt_FMT " inner_its=%.2f true_residual=%.3e reason=%s\n", solvers[s], (double)setup, (double)times[repeat / 2], its, inner, (double)trueres, KSPConvergedReasons[reason]));
    if (check && (!(trueres <= tol) || reason < 0)) {
      PetscCall(PetscFPrintf(PETSC_COMM_WORLD, PETSC_STDERR, "ex2: -check_true_residual FAILED: %s: KSP %s, true residual %.3e (tolerance %.1e)\n", solvers[s], KSPConvergedReasons[reason], (double)trueres, (double)tol));
      failed = PETSC_TRUE;
    }
    {
      PetscInt nu; /* -time_update, or -<solver>_time_update for this solver */
      PetscCall(UpdateCount(solvers[s], nupdate, &nu));
      if (nu > 0) PetscCall(TimeValueUpdates(ksp, A, solvers[s], nu));
    }
    for (PetscInt k = 0; hist && k < h.n; k++) PetscCall(PetscFPrintf(PETSC_COMM_WORLD, hist, "%s,%" PetscInt_FMT ",%.6e,%.6e\n", solvers[s], k, (double)h.time[k], (double)(bnorm > 0 ? h.res[k] / bnorm : h.res[k])));
    PetscCall(PetscFree(h.res));
    PetscCall(PetscFree(h.time));
    PetscCall(PetscFree(times));
    PetscCall(KSPDestroy(&ksp));
  }

  if (hist) PetscCall(PetscFClose(PETSC_COMM_WORLD, hist));
  for (PetscInt s = 0; s < nsolvers; s++) PetscCall(PetscFree(solvers[s]));
  PetscCall(VecDestroy(&xe));
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(MatDestroy(&Aexact));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return failed ? 1 : 0;
}
