static const char help[] = "A downstream program of an installed petscspmv: converts an AIJ matrix to MATRGCSR and\n\
MATPACKSELL with MatConvert() and checks that MatMult() gives AIJ's product.\n\
Built linked with libpetscspmv (pkg-config or find_package), it calls PetscSpMVInitializePackage()\n\
and the public getters; built with -DPETSCSPMV_DOWNSTREAM_DLL it links PETSc only and gets the types\n\
from -dll_append <prefix>/lib/libpetscspmv.so.\n\
  -n <n>                   rows (default 300)\n\
  -expect_version <x.y.z>  the version petscspmvversion.h must state\n";

#include <petscmat.h>
#include <petscspmv.h>

/* petscspmvversion.h, through petscspmv.h */
#if !defined(PETSCSPMV_VERSION_MAJOR) || !defined(PETSCSPMV_VERSION_MINOR) || !defined(PETSCSPMV_VERSION_SUBMINOR)
  #error "petscspmv.h does not define PETSCSPMV_VERSION_MAJOR/MINOR/SUBMINOR"
#endif
#if !PETSCSPMV_VERSION_GE(0, 1, 0)
  #error "PETSCSPMV_VERSION_GE(0, 1, 0) is false"
#endif
#if !PETSCSPMV_VERSION_GE(PETSCSPMV_VERSION_MAJOR, PETSCSPMV_VERSION_MINOR, PETSCSPMV_VERSION_SUBMINOR) || PETSCSPMV_VERSION_GE(PETSCSPMV_VERSION_MAJOR, PETSCSPMV_VERSION_MINOR, PETSCSPMV_VERSION_SUBMINOR + 1) || PETSCSPMV_VERSION_GE(PETSCSPMV_VERSION_MAJOR, PETSCSPMV_VERSION_MINOR + 1, 0) || PETSCSPMV_VERSION_GE(PETSCSPMV_VERSION_MAJOR + 1, 0, 0) || !PETSCSPMV_VERSION_EQ(PETSCSPMV_VERSION_MAJOR, PETSCSPMV_VERSION_MINOR, PETSCSPMV_VERSION_SUBMINOR)
  #error "PETSCSPMV_VERSION_GE() or PETSCSPMV_VERSION_EQ() is wrong"
#endif

/* Nonsymmetric band matrix with irregular rows: an empty row, a long row, a few off-band entries */
static PetscErrorCode Generate(MPI_Comm comm, PetscInt n, Mat *A)
{
  PetscInt rs, re;

  PetscFunctionBegin;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSetUp(*A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    if (i == n / 3) continue;
    for (PetscInt j = PetscMax(0, i - 2); j <= PetscMin(n - 1, i + 2); j++) PetscCall(MatSetValue(*A, i, j, (i == j) ? 4.0 + (i % 5) : -1.0 / (1 + (i + j) % 7), ADD_VALUES));
    if (i % 11 == 0) PetscCall(MatSetValue(*A, i, (7 * i + 5) % n, 0.25 + (i % 3), ADD_VALUES));
    if (i == n / 2)
      for (PetscInt j = 0; j < n; j += 4) PetscCall(MatSetValue(*A, i, j, 0.01 * (1 + j % 9), ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* B = A converted to `type`; checks the seq/mpi type name and ||B x - A x|| <= 1e-13 ||A x|| */
static PetscErrorCode CheckType(Mat A, MatType type, MatType seq, MatType mpi)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)A);
  Mat       B;
  Vec       x, y, z;
  PetscBool match;
  PetscReal ny, nd;
  MatType   btype;

  PetscFunctionBegin;
  PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatGetType(B, &btype));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)B, &match, seq, mpi, ""));
  PetscCheck(match, comm, PETSC_ERR_PLIB, "MatConvert() to %s gave a matrix of type %s, not %s or %s", type, btype, seq, mpi);
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecSetRandom(x, NULL));
  PetscCall(MatMult(A, x, y));
  PetscCall(MatMult(B, x, z));
  PetscCall(VecNorm(y, NORM_2, &ny));
  PetscCall(VecAXPY(z, -1.0, y));
  PetscCall(VecNorm(z, NORM_2, &nd));
  PetscCheck(ny > 0 && nd <= 1e-13 * ny, comm, PETSC_ERR_PLIB, "%s: ||B x - A x|| = %g, ||A x|| = %g", btype, (double)nd, (double)ny);
#if !defined(PETSCSPMV_DOWNSTREAM_DLL)
  {
    MatSpMVStats stats;
    MatInfo      info;

    PetscCall(MatSpMVGetStats(B, &stats));
    PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
    PetscCheck(stats.nnz == (PetscInt64)info.nz_used, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: MatSpMVGetStats() nnz %" PetscInt64_FMT ", AIJ holds %g", btype, stats.nnz, (double)info.nz_used);
    PetscCall(PetscStrcmp(type, MATRGCSR, &match));
    if (match) {
      PetscInt G;

      PetscCall(MatRgCSRGetGroupSize(B, &G));
      PetscCheck(G == 32, comm, PETSC_ERR_PLIB, "default RgCSR group size %" PetscInt_FMT ", expected 32", G);
    }
  }
#endif
  PetscCall(PetscPrintf(comm, "%s (%s): ||B x - A x|| / ||A x|| = %g\n", type, btype, (double)(nd / ny)));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat       A;
  PetscInt  n           = 300;
  char      version[64] = "", have[64];
  PetscBool flg, same;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
#if !defined(PETSCSPMV_DOWNSTREAM_DLL)
  PetscCall(PetscSpMVInitializePackage());
#endif
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-expect_version", version, sizeof(version), &flg));
  PetscCall(PetscSNPrintf(have, sizeof(have), "%d.%d.%d", PETSCSPMV_VERSION_MAJOR, PETSCSPMV_VERSION_MINOR, PETSCSPMV_VERSION_SUBMINOR));
  PetscCall(PetscStrcmp(have, PETSCSPMV_VERSION_STRING, &same));
  PetscCheck(same, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "PETSCSPMV_VERSION_STRING %s, the numbers say %s", PETSCSPMV_VERSION_STRING, have);
  if (flg) {
    PetscCall(PetscStrcmp(version, have, &same));
    PetscCheck(same, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "petscspmvversion.h states %s, expected %s (-expect_version)", have, version);
  }
#if defined(PETSCSPMV_DOWNSTREAM_DLL)
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "petscspmv %s, linked with PETSc only (the types come from -dll_append)\n", have));
#else
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "petscspmv %s, linked with libpetscspmv\n", have));
  { /* the library it runs says the same version, and the PETSc it was built against */
    char runs[128], want[64];
    PetscCall(PetscSpMVGetVersion(runs, sizeof(runs)));
    PetscCall(PetscSNPrintf(want, sizeof(want), "petscspmv %s (PETSc %d.%d.%d, ", have, PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR));
    PetscCall(PetscStrbeginswith(runs, want, &same));
    PetscCheck(same, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "PetscSpMVGetVersion() says \"%s\", expected it to begin with \"%s\"", runs, want);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PetscSpMVGetVersion(): %s\n", runs));
  }
#endif
  PetscCall(Generate(PETSC_COMM_WORLD, n, &A));
  PetscCall(CheckType(A, MATRGCSR, MATSEQRGCSR, MATMPIRGCSR));
  PetscCall(CheckType(A, MATPACKSELL, MATSEQPACKSELL, MATMPIPACKSELL));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS\n"));
  PetscCall(PetscFinalize());
  return 0;
}
