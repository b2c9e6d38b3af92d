static const char help[] = "CG + Jacobi with the petscspmv types against AIJ on one SPD matrix file.\n\
Lossless layouts (rgcsr, packsell with exact values) must take exactly AIJ's number of\n\
iterations; lossy PackSELL value formats must converge.\n\
  -f <file>              PETSc binary SPD matrix\n\
  -types <t1,t2,...>     families: rgcsr, packsell, rgcsrcuda, packsellcuda\n\
  -value_formats <f,...> PackSELL value formats (default exact,fp16,bf16; lossy ones with scaling auto)\n\
  -rtol <r>              relative residual (default 1e-8)\n\
  -scale <s>             multiply the matrix by s first (e.g. 0.3: values no longer fp16-exact)\n";

#include "spmv_test_util.h"

#include <petscksp.h>
#include <string.h>

#define MAXTYPES 8

/* Solves A x = b with CG + Jacobi from x = 0; b is copied into A's vector type. */
static PetscErrorCode Solve(Mat A, Vec b_ref, PetscReal rtol, PetscInt *its, KSPConvergedReason *reason, PetscReal *err)
{
  KSP       ksp;
  PC        pc;
  Vec       x, b, r;
  PetscReal bn, rn;
  Mat       Aaij;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(TestCopyValues(b_ref, b));
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, rtol, PETSC_CURRENT, PETSC_CURRENT, 20000));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetConvergedReason(ksp, reason));
  /* true residual with the exact (AIJ) operator */
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &Aaij));
  PetscCall(VecDuplicate(b_ref, &r));
  {
    Vec xh;
    PetscCall(VecDuplicate(b_ref, &xh));
    PetscCall(TestCopyValues(x, xh));
    PetscCall(MatMult(Aaij, xh, r));
    PetscCall(VecAYPX(r, -1.0, b_ref));
    PetscCall(VecDestroy(&xh));
  }
  PetscCall(VecNorm(r, NORM_2, &rn));
  PetscCall(VecNorm(b_ref, NORM_2, &bn));
  *err = rn / bn;
  PetscCall(MatDestroy(&Aaij));
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char               file[PETSC_MAX_PATH_LEN], *types[MAXTYPES], *formats[MAXTYPES];
  PetscInt           ntypes = MAXTYPES, nformats = MAXTYPES, its_ref, its;
  PetscReal          rtol = 1e-8, res_ref, res, scale = 1.0;
  KSPConvergedReason reason;
  Mat                A, B;
  Vec                b;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscSpMVInitializePackage());
  PetscCall(TestGetFileAndFamilies(file, sizeof(file), types, &ntypes, formats, &nformats));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-rtol", &rtol, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-scale", &scale, NULL));

  PetscCall(TestLoadAIJ(file, &A));
  /* AIJ's inode kernel sums two products at a time; the plain CSR kernel sums in row order like
     the layouts do, so lossless layouts give bit-identical products and iterations */
  PetscCall(MatSetOption(A, MAT_USE_INODES, PETSC_FALSE));
  if (scale != 1.0) PetscCall(MatScale(A, scale));
  PetscCall(MatCreateVecs(A, NULL, &b));
  PetscCall(TestRandomVec(b, 21));

  PetscCall(Solve(A, b, rtol, &its_ref, &reason, &res_ref));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "aij: %" PetscInt_FMT " iterations, %s, residual %.3e\n", its_ref, KSPConvergedReasons[reason], (double)res_ref));
  PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "CG with AIJ did not converge: pick an SPD matrix");

  for (PetscInt t = 0; t < ntypes; t++) {
    PetscBool packsell = strstr(types[t], "packsell") ? PETSC_TRUE : PETSC_FALSE;
    for (PetscInt f = 0; f < (packsell ? nformats : 1); f++) {
      PetscBool lossy = packsell && strcmp(formats[f], "exact") ? PETSC_TRUE : PETSC_FALSE;
      if (packsell) {
        PetscCall(PetscOptionsSetValue(NULL, "-mat_packsell_value_format", formats[f]));
        PetscCall(PetscOptionsSetValue(NULL, "-mat_packsell_scaling", lossy ? "auto" : "none"));
      }
      if (lossy) { /* a matrix spanning more magnitudes than the format is refused, even scaled */
        PetscBool holds;
        char      label[256];
        PetscCall(TestFormatHoldsValues(A, formats[f], PETSC_TRUE, &holds));
        if (!holds) {
          PetscCall(PetscSNPrintf(label, sizeof(label), "%s/%s", types[t], formats[f]));
          PetscCall(TestExpectRefused(A, types[t], label));
          PetscCall(PetscOptionsClearValue(NULL, "-mat_packsell_value_format"));
          PetscCall(PetscOptionsClearValue(NULL, "-mat_packsell_scaling"));
          continue;
        }
      }
      PetscCall(MatConvert(A, types[t], MAT_INITIAL_MATRIX, &B));
      PetscCall(TestCheckType(B, types[t]));
      PetscCall(Solve(B, b, rtol, &its, &reason, &res));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s%s%s: %" PetscInt_FMT " iterations, %s, residual %.3e\n", types[t], packsell ? "/" : "", packsell ? formats[f] : "", its, KSPConvergedReasons[reason], (double)res));
      PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: CG did not converge (%s)", types[t], KSPConvergedReasons[reason]);
      if (!lossy) PetscCheck(its == its_ref, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: %" PetscInt_FMT " iterations, AIJ took %" PetscInt_FMT ": a lossless layout must match exactly", types[t], its, its_ref);
      PetscCall(MatDestroy(&B));
      if (packsell) {
        PetscCall(PetscOptionsClearValue(NULL, "-mat_packsell_value_format"));
        PetscCall(PetscOptionsClearValue(NULL, "-mat_packsell_scaling"));
      }
    }
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS %s\n", file));
  for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
  for (PetscInt f = 0; f < nformats; f++) PetscCall(PetscFree(formats[f]));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
