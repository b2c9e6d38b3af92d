static const char help[] = "Solves A x = b for a matrix in a PETSc binary file with any Mat type, KSP and PC,\n\
and judges the solution with the user's exact matrix.\n\
The matrix type of the solve comes from -mat_type (e.g. rgcsr, packsell, rgcsrcuda, packsellcuda, aij).\n\
The file is also loaded as plain AIJ (the exact matrix, same row layout): b = A_exact * xe and the\n\
true residual ||b - A_exact x|| / ||b|| use it, so a lossy operator (PackSELL fp16/bf16/e8m<m>)\n\
cannot hide its error.\n\
  -f <file>                    PETSc binary matrix (make one from Matrix Market with scripts/mtx2petsc.py)\n\
  -rhs <file>                  optional PETSc binary right-hand side; default b = A_exact * xe, xe(i) = 1 + sin(i)\n\
  -check_true_residual <tol>   exit with code 1 when the true residual exceeds tol or the KSP diverged\n\
  -report_devices              print per rank its host and the CUDA device (id, PCI bus id) PETSc bound it to\n\
The last line printed is machine-readable:\n\
  type=<mattype> rows=<m> nnz=<nnz> iterations=<k> residual=<||b-A_op x||/||b||> true_residual=<||b-A_exact x||/||b||>\n\
  error=<||x-xe||/||xe||, nan with -rhs> solve_time=<s>\n\n";

#include <petscksp.h>
#include <petscspmv.h>
#include <petsctime.h>
#include "report_devices.h"

/* Describes the solve matrix's values: lossy is true when they are not the exact matrix's
   (PackSELL with a reduced-precision value format; "exact" is lossless, the other types are). */
static PetscErrorCode DescribeOperator(Mat A, PetscBool *lossy, char desc[], size_t len)
{
  PetscBool   packsell;
  const char *fmt = NULL;

  PetscFunctionBeginUser;
  *lossy = PETSC_FALSE;
  PetscCall(PetscStrncpy(desc, "lossless", len));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &packsell, MATSEQPACKSELL, MATMPIPACKSELL, MATSEQPACKSELLCUDA, MATMPIPACKSELLCUDA, ""));
  if (packsell) {
    PetscBool exact;
    PetscCall(MatPackSELLGetValueFormat(A, &fmt));
    PetscCall(PetscStrcmp(fmt, "exact", &exact));
    *lossy = exact ? PETSC_FALSE : PETSC_TRUE;
    PetscCall(PetscSNPrintf(desc, len, "value format %s: %s", fmt, exact ? "lossless" : "LOSSY"));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char               file[PETSC_MAX_PATH_LEN] = "", rhsfile[PETSC_MAX_PATH_LEN] = "", desc[128];
  PetscBool          flg, hasrhs, check, lossy, report = PETSC_FALSE;
  PetscViewer        viewer;
  Mat                A, Aexact;
  Vec                x, b, r, xe;
  KSP                ksp;
  PetscInt           m, n, mloc, nloc, its;
  MatInfo            info;
  MatType            mtype;
  char               type[64];
  PetscReal          bnorm, rnorm, tnorm, enorm, xenorm, opres, trueres, err = (PetscReal)NAN, opdiff = (PetscReal)NAN, tol = 0;
  PetscLogDouble     t0, t1;
  KSPConvergedReason reason;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscSpMVInitializePackage());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), &flg));
  PetscCheck(flg, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "Give the matrix file with -f <file> (PETSc binary; convert Matrix Market with scripts/mtx2petsc.py)");
  PetscCall(PetscOptionsGetString(NULL, NULL, "-rhs", rhsfile, sizeof(rhsfile), &hasrhs));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-check_true_residual", &tol, &check));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-report_devices", &report, NULL));

  /* The solve matrix: MatSetFromOptions before MatLoad, -mat_type picks the format and the
     format options (-mat_packsell_value_format, ...) apply, the usual PETSc pattern */
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, file, FILE_MODE_READ, &viewer));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatLoad(A, viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  PetscCall(MatGetSize(A, &m, &n));
  PetscCheck(m == n, PETSC_COMM_WORLD, PETSC_ERR_ARG_SIZ, "The matrix in %s is %" PetscInt_FMT " x %" PetscInt_FMT ": a linear solve needs a square matrix", file, m, n);
  PetscCall(MatGetType(A, &mtype));
  PetscCall(PetscStrncpy(type, mtype, sizeof(type))); /* kept past MatDestroy() for the check */
  PetscCall(DescribeOperator(A, &lossy, desc, sizeof(desc)));

  /* The exact matrix: the same file as plain AIJ (no options), with the solve matrix's layout */
  PetscCall(MatGetLocalSize(A, &mloc, &nloc));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, file, FILE_MODE_READ, &viewer));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &Aexact));
  PetscCall(MatSetType(Aexact, MATAIJ));
  PetscCall(MatSetSizes(Aexact, mloc, nloc, m, n));
  PetscCall(MatLoad(Aexact, viewer));
  PetscCall(PetscViewerDestroy(&viewer));

  /* vectors of the solve matrix's own vector type: CUDA vectors for the CUDA formats (MatMult of
     the host AIJ matrix with them works; PETSc copies) */
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(VecDuplicate(x, &xe));
  if (report) PetscCall(ReportDevices(x)); /* after PETSc initialised the device for the CUDA vectors */
  {                                        /* a non-constant exact solution: A * ones is 0 for graph Laplacians */
    PetscScalar *xa;
    PetscInt     lo, hi;
    PetscCall(VecGetOwnershipRange(xe, &lo, &hi));
    PetscCall(VecGetArrayWrite(xe, &xa));
    for (PetscInt i = lo; i < hi; i++) xa[i - lo] = 1.0 + PetscSinReal((PetscReal)i);
    PetscCall(VecRestoreArrayWrite(xe, &xa));
  }
  PetscCall(VecNorm(xe, NORM_2, &xenorm));
  PetscCall(MatMult(Aexact, xe, b));
  PetscCall(VecNorm(b, NORM_2, &tnorm));
  /* how far the solve operator is from the exact matrix, on xe: 0 up to rounding for lossless types */
  PetscCall(MatMult(A, xe, r));
  PetscCall(VecAXPY(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &rnorm));
  opdiff = tnorm > 0 ? rnorm / tnorm : rnorm;
  if (hasrhs) {
    PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, rhsfile, FILE_MODE_READ, &viewer));
    PetscCall(VecLoad(b, viewer));
    PetscCall(PetscViewerDestroy(&viewer));
  }
  PetscCall(VecSet(x, 0.0));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetUp(ksp));
  PetscCall(PetscTime(&t0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(PetscTime(&t1));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));

  PetscCall(VecNorm(b, NORM_2, &bnorm));
  /* operator residual: with the matrix the KSP saw (lossy for PackSELL fp16/bf16/e8m<m>) */
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &rnorm));
  opres = bnorm > 0 ? rnorm / bnorm : rnorm;
  /* true residual: with the exact AIJ matrix, the one that counts */
  PetscCall(MatMult(Aexact, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &rnorm));
  trueres = bnorm > 0 ? rnorm / bnorm : rnorm;
  if (!hasrhs) { /* the error is known only for b = A_exact xe */
    PetscCall(VecWAXPY(r, -1.0, xe, x));
    PetscCall(VecNorm(r, NORM_2, &enorm));
    err = xenorm > 0 ? enorm / xenorm : enorm;
  }
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));

  /* the reason first: a lossy operator that lost definiteness still prints a residual line */
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "KSP %s after %" PetscInt_FMT " iterations\n", KSPConvergedReasons[reason], its));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "operator %s (%s): ||(A_op - A) xe|| / ||A xe|| = %.3e\n", type, desc, (double)opdiff));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "operator residual   ||b - A_op x|| / ||b|| = %.3e (the matrix the KSP used)\n", (double)opres));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "true residual (exact AIJ matrix) ||b - A x|| / ||b|| = %.3e\n", (double)trueres));
  if (!hasrhs) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "relative error      ||x - xe|| / ||xe||    = %.3e\n", (double)err));
  if (lossy) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "note: the %s operator is lossy (%s): it solved a perturbed system; judge it by the true residual, not by the operator residual\n", type, desc));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "type=%s rows=%" PetscInt_FMT " nnz=%.0f iterations=%" PetscInt_FMT " residual=%.3e true_residual=%.3e error=%.3e solve_time=%.6f\n", type, m, info.nz_used, its, (double)opres, (double)trueres, (double)err, (double)(t1 - t0)));

  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&xe));
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(MatDestroy(&Aexact));
  PetscCall(MatDestroy(&A));
  if (check && (!(trueres <= tol) || reason < 0)) { /* !(<=) catches NaN */
    if (reason < 0)
      PetscCall(PetscFPrintf(PETSC_COMM_WORLD, PETSC_STDERR, "ex1: -check_true_residual FAILED: type %s (%s): KSP %s after %" PetscInt_FMT " iterations, true residual %.3e (tolerance %.1e)\n", type, desc, KSPConvergedReasons[reason], its, (double)trueres, (double)tol));
    else
      PetscCall(PetscFPrintf(PETSC_COMM_WORLD, PETSC_STDERR, "ex1: -check_true_residual FAILED: type %s (%s): true residual %.3e > tolerance %.1e (%.3g times over)\n", type, desc, (double)trueres, (double)tol, (double)(tol > 0 ? trueres / tol : (PetscReal)INFINITY)));
    PetscCall(PetscFinalize());
    return 1;
  }
  PetscCall(PetscFinalize());
  return 0;
}
