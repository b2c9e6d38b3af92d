static const char help[] = "Solves A x = b for a matrix in a PETSc binary file with any Mat type, KSP and PC.\n\
The matrix type comes from -mat_type (e.g. rgcsr, packsell, rgcsrcuda, packsellcuda, aij).\n\
  -f <file>      PETSc binary matrix (make one from Matrix Market with scripts/mtx2petsc.py)\n\
  -rhs <file>    optional PETSc binary right-hand side; default b = A * xe, xe(i) = 1 + sin(i)\n\
The last line printed is machine-readable:\n\
  type=<mattype> rows=<m> nnz=<nnz> iterations=<k> residual=<||b-Ax||/||b||> solve_time=<s>\n\n";

#include <petscksp.h>
#include <petscspmv.h>
#include <petsctime.h>

int main(int argc, char **argv)
{
  char           file[PETSC_MAX_PATH_LEN] = "", rhsfile[PETSC_MAX_PATH_LEN] = "";
  PetscBool      flg, hasrhs;
  PetscViewer    viewer;
  Mat            A;
  Vec            x, b, r;
  KSP            ksp;
  PetscInt       m, n, its;
  MatInfo        info;
  MatType        type;
  PetscReal      bnorm, rnorm;
  PetscLogDouble t0, t1;
  KSPConvergedReason reason;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscSpMVInitializePackage());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), &flg));
  PetscCheck(flg, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "Give the matrix file with -f <file> (PETSc binary; convert Matrix Market with scripts/mtx2petsc.py)");
  PetscCall(PetscOptionsGetString(NULL, NULL, "-rhs", rhsfile, sizeof(rhsfile), &hasrhs));

  /* MatSetFromOptions before MatLoad: -mat_type picks the format, the usual PETSc pattern */
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, file, FILE_MODE_READ, &viewer));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatLoad(A, viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  PetscCall(MatGetSize(A, &m, &n));
  PetscCheck(m == n, PETSC_COMM_WORLD, PETSC_ERR_ARG_SIZ, "The matrix in %s is %" PetscInt_FMT " x %" PetscInt_FMT ": a linear solve needs a square matrix", file, m, n);

  /* vectors of the matrix's own vector type: CUDA vectors for the CUDA formats */
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(b, &r));
  if (hasrhs) {
    PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, rhsfile, FILE_MODE_READ, &viewer));
    PetscCall(VecLoad(b, viewer));
    PetscCall(PetscViewerDestroy(&viewer));
  } else { /* a non-constant exact solution: A * ones is 0 for graph Laplacians */
    PetscScalar *xa;
    PetscInt     lo, hi;
    PetscCall(VecGetOwnershipRange(x, &lo, &hi));
    PetscCall(VecGetArrayWrite(x, &xa));
    for (PetscInt i = lo; i < hi; i++) xa[i - lo] = 1.0 + PetscSinReal((PetscReal)i);
    PetscCall(VecRestoreArrayWrite(x, &xa));
    PetscCall(MatMult(A, x, b));
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

  /* true residual, computed with the same operator */
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &rnorm));
  PetscCall(VecNorm(b, NORM_2, &bnorm));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  PetscCall(MatGetType(A, &type));
  /* the reason first: a lossy operator that lost definiteness still prints a residual line */
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "KSP %s after %" PetscInt_FMT " iterations\n", KSPConvergedReasons[reason], its));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "type=%s rows=%" PetscInt_FMT " nnz=%.0f iterations=%" PetscInt_FMT " residual=%.3e solve_time=%.6f\n", type, m, info.nz_used, its, (double)(bnorm > 0 ? rnorm / bnorm : rnorm),
                        (double)(t1 - t0)));

  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
