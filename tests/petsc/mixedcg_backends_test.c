/* KSPMIXEDCG's backend under test (-backend <cuda>: the CUDA one, or host) on every rank of
   PETSC_COMM_WORLD, against the host backend on the same ranks and against the backend under test
   on one rank (each rank solves the whole system on PETSC_COMM_SELF): every solve converged
   (KSP_CONVERGED_RTOL) with a true residual ||b - A x|| / ||b|| (the exact FP64 matrix, an AIJ
   copy) at most 10 rtol, the backend under test within 5% of the iterations of both references,
   and its -ksp_view naming it ("backend CUDA" or "backend host"; on several ranks "MPI: the whole
   matrix") with low-precision steps taken (KSPMixedCGGetStats()). Prints "all checks passed".
   Options: -f <file> a PETSc binary matrix, or -lap7 <n> (default 24) a variable-coefficient
   7-point Laplacian on an n^3 grid; -mat_type <aij> the solves' matrix type (aijcusparse with
   -vec_type cuda: the CUDA backend's auto choice); -backend <cuda|host>; -rtol <1e-8>;
   -rank0_empty: the matrices on PETSC_COMM_WORLD redistributed so that rank 0 owns no rows. */
#include <petscksp.h>
#include <petscspmv.h>
#include "laplacian3d.h"
#include "spmv_test_util.h"

#define CHECK(cond, ...) \
  do { \
    if (!(cond)) { \
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAILED: " __VA_ARGS__)); \
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "\n")); \
      failures++; \
    } \
  } while (0)

static PetscInt failures = 0;

typedef struct {
  PetscInt           its;
  KSPConvergedReason reason;
  PetscReal          rel;
  KSPMixedCGStats    st;
  char               view[8192];
} Outcome;

/* The matrix on comm: type mattype (NULL: AIJ, the exact copy) from the file or the Laplacian */
static PetscErrorCode Build(MPI_Comm comm, const char *file, PetscInt n, const char *mattype, Mat *A)
{
  PetscFunctionBeginUser;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetType(*A, mattype ? mattype : MATAIJ));
  if (file[0]) {
    PetscViewer v;
    PetscCall(PetscViewerBinaryOpen(comm, file, FILE_MODE_READ, &v));
    PetscCall(MatLoad(*A, v));
    PetscCall(PetscViewerDestroy(&v));
  } else PetscCall(Laplacian(n, PETSC_FALSE, PETSC_TRUE, *A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* *A redistributed (MatCreateSubMatrix) so that rank 0 owns no rows and the others share them
   evenly; the same layout for rows and columns */
static PetscErrorCode Rank0Empty(Mat *A)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)*A);
  PetscMPIInt rank, size;
  PetscInt    N, n = 0, first = 0;
  IS          is;
  Mat         B;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(MatGetSize(*A, &N, NULL));
  if (size > 1 && rank > 0) {
    const PetscInt q = N / (size - 1), r = N % (size - 1), k = rank - 1;
    n     = q + (k < r ? 1 : 0);
    first = k * q + PetscMin(k, r);
  }
  PetscCall(ISCreateStride(comm, n, first, 1, &is));
  PetscCall(MatCreateSubMatrix(*A, is, is, MAT_INITIAL_MATRIX, &B));
  PetscCall(ISDestroy(&is));
  PetscCall(MatDestroy(A));
  *A = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSPMIXEDCG with the given backend on A's communicator from x = 0, b = Aexact xe (xe_i = 1 +
   sin(i), i the global row): its iterations, reason, true residual, stats and -ksp_view text */
static PetscErrorCode Solve(Mat A, Mat Aexact, const char *backend, PetscReal rtol, Outcome *o)
{
  MPI_Comm     comm = PetscObjectComm((PetscObject)A);
  KSP          ksp;
  Vec          x, b, xe;
  PetscInt     lo, hi;
  PetscScalar *xa;
  PetscMPIInt  rank;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(b, &xe));
  PetscCall(VecGetOwnershipRange(xe, &lo, &hi));
  PetscCall(VecGetArrayWrite(xe, &xa));
  for (PetscInt i = lo; i < hi; i++) xa[i - lo] = 1.0 + PetscSinReal((PetscReal)i);
  PetscCall(VecRestoreArrayWrite(xe, &xa));
  PetscCall(MatMult(Aexact, xe, b));
  PetscCall(PetscOptionsSetValue(NULL, "-bt_ksp_mixedcg_backend", backend));
  PetscCall(KSPCreate(comm, &ksp));
  PetscCall(KSPSetOptionsPrefix(ksp, "bt_"));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPMIXEDCG));
  PetscCall(KSPSetTolerances(ksp, rtol, PETSC_CURRENT, PETSC_CURRENT, 100000));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, &o->its));
  PetscCall(KSPGetConvergedReason(ksp, &o->reason));
  PetscCall(KSPMixedCGGetStats(ksp, &o->st));
  PetscCall(TestTrueResidual(Aexact, b, x, &o->rel));
  { /* the ASCII view (the first rank writes it) through a temporary file, sent to every rank */
    PetscViewer v;
    FILE       *f   = tmpfile();
    size_t      got = 0;
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "tmpfile() failed");
    PetscCall(PetscViewerASCIIOpenWithFILE(comm, f, &v));
    PetscCall(KSPView(ksp, v));
    PetscCall(PetscViewerFlush(v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    rewind(f);
    if (rank == 0) got = fread(o->view, 1, sizeof(o->view) - 1, f);
    o->view[got] = 0;
    fclose(f);
    PetscCallMPI(MPI_Bcast(o->view, (PetscMPIInt)sizeof(o->view), MPI_CHAR, 0, comm));
  }
  PetscCall(PetscOptionsClearValue(NULL, "-bt_ksp_mixedcg_backend"));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&xe));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool Has(const char *text, const char *what)
{
  return strstr(text, what) ? PETSC_TRUE : PETSC_FALSE;
}

/* |its - ref| within 5% of ref (rounded up, at least one step) */
static PetscBool Within5(PetscInt its, PetscInt ref)
{
  const PetscInt d = its > ref ? its - ref : ref - its;
  return d <= PetscMax(1, (PetscInt)PetscCeilReal(0.05 * (PetscReal)ref)) ? PETSC_TRUE : PETSC_FALSE;
}

static PetscErrorCode Judge(const char *what, const Outcome *o, PetscReal rtol)
{
  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %" PetscInt_FMT " its (%" PetscInt_FMT " low precision), %" PetscInt_FMT " reliable updates, %" PetscInt_FMT " raises, reason %s, true residual %.3e\n", what, o->its, o->st.lowp_its, o->st.reliable_updates,
                        o->st.raises, KSPConvergedReasons[o->reason], (double)o->rel));
  CHECK(o->reason == KSP_CONVERGED_RTOL, "%s: reason %s", what, KSPConvergedReasons[o->reason]);
  CHECK(o->rel <= 10 * rtol, "%s: true residual %g above 10 rtol = %g", what, (double)o->rel, (double)(10 * rtol));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char        file[PETSC_MAX_PATH_LEN] = "", mattype[64] = "aij", backend[16] = "cuda", backend_line[64];
  PetscInt    n           = 24;
  PetscReal   rtol        = 1e-8;
  PetscBool   rank0_empty = PETSC_FALSE;
  PetscMPIInt size;
  Mat         A, Aexact, A1, A1exact;
  Outcome    *o;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscSpMVInitializePackage());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-lap7", &n, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_type", mattype, sizeof(mattype), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-backend", backend, sizeof(backend), NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-rtol", &rtol, NULL));
  PetscCall(PetscMalloc1(3, &o));
  PetscCall(PetscSNPrintf(backend_line, sizeof(backend_line), "backend %s", strcmp(backend, "cuda") ? "host" : "CUDA"));

  PetscCall(Build(PETSC_COMM_WORLD, file, n, mattype, &A));
  PetscCall(Build(PETSC_COMM_WORLD, file, n, NULL, &Aexact));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-rank0_empty", &rank0_empty, NULL));
  if (rank0_empty) {
    PetscCall(Rank0Empty(&A));
    PetscCall(Rank0Empty(&Aexact));
  }
  PetscCall(Build(PETSC_COMM_SELF, file, n, mattype, &A1));
  PetscCall(Build(PETSC_COMM_SELF, file, n, NULL, &A1exact));

  /* the backend under test on every rank; the host backend on the same ranks; the backend under
     test on one rank */
  PetscCall(Solve(A, Aexact, backend, rtol, &o[0]));
  PetscCall(Solve(A, Aexact, "host", rtol, &o[1]));
  PetscCall(Solve(A1, A1exact, backend, rtol, &o[2]));
  {
    char what[3][64];
    PetscCall(PetscSNPrintf(what[0], sizeof(what[0]), "%s backend, %d ranks", backend, (int)size));
    PetscCall(PetscSNPrintf(what[1], sizeof(what[1]), "host backend, %d ranks", (int)size));
    PetscCall(PetscSNPrintf(what[2], sizeof(what[2]), "%s backend, 1 rank", backend));
    for (int k = 0; k < 3; k++) PetscCall(Judge(what[k], &o[k], rtol));
    CHECK(Within5(o[0].its, o[2].its), "%s: %" PetscInt_FMT " iterations, not within 5%% of the %" PetscInt_FMT " of %s", what[0], o[0].its, o[2].its, what[2]);
    CHECK(Within5(o[0].its, o[1].its), "%s: %" PetscInt_FMT " iterations, not within 5%% of the %" PetscInt_FMT " of %s", what[0], o[0].its, o[1].its, what[1]);
    CHECK(Has(o[0].view, backend_line), "%s: -ksp_view lacks \"%s\":\n%s", what[0], backend_line, o[0].view);
    CHECK(Has(o[2].view, backend_line), "%s: -ksp_view lacks \"%s\":\n%s", what[2], backend_line, o[2].view);
    CHECK(Has(o[1].view, "backend host"), "%s: -ksp_view lacks \"backend host\":\n%s", what[1], o[1].view);
    if (size > 1) CHECK(Has(o[0].view, "MPI: the whole matrix"), "%s: -ksp_view lacks the MPI line:\n%s", what[0], o[0].view);
    CHECK(o[0].st.lowp_its > 0 && o[2].st.lowp_its > 0, "no low-precision steps (%" PetscInt_FMT ", %" PetscInt_FMT ")", o[0].st.lowp_its, o[2].st.lowp_its);
  }

  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&Aexact));
  PetscCall(MatDestroy(&A1));
  PetscCall(MatDestroy(&A1exact));
  PetscCall(PetscFree(o));
  /* a check that failed on any rank fails the test (each rank prints its own failures) */
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &failures, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  if (!failures) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "all checks passed\n"));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
