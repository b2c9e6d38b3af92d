static const char help[] = "The ordering option (-mat_<format>_ordering rcm) at 1-3 ranks, on a 3-D 7-point Laplacian\n\
numbered in a random order and on an irregular square matrix with empty rows: every product\n\
(MatMult, MatMultAdd, the transposes, MatGetDiagonal) equals AIJ's; the getter returns the option\n\
and -mat_view ::ascii_info counts the rows stored in the other order (ordered_rows) on every\n\
rank's diagonal block, none of an off-diagonal block; value updates of the same pattern (MatScale,\n\
MatSetValues) and a new pattern keep the products equal; back to natural, no row is ordered; a\n\
lossy PackSELL layout (fp16) keeps its bound; a bad string is PETSC_ERR_ARG_WRONG with the matrix\n\
unchanged; rcm on a rectangular matrix is PETSC_ERR_ARG_SIZ when its layout is built.\n\
  -types <t1,t2,...>  families: rgcsr, packsell, rgcsrcuda, packsellcuda\n";

#include "spmv_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#define MAXTYPES 8

/* The same pseudo-random permutation of [0, n) on every rank (Fisher-Yates with an LCG). */
static PetscErrorCode RandomPermutation(PetscInt n, PetscInt **p)
{
  unsigned long long s = 12345;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(n, p));
  for (PetscInt i = 0; i < n; i++) (*p)[i] = i;
  for (PetscInt i = n - 1; i > 0; i--) {
    s                = s * 6364136223846793005ULL + 1442695040888963407ULL;
    const PetscInt j = (PetscInt)((s >> 33) % (unsigned long long)(i + 1));
    const PetscInt t = (*p)[i];
    (*p)[i]          = (*p)[j];
    (*p)[j]          = t;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The 7-point Laplacian of a k^3 grid (variable diagonal) with row and column i the grid point
   q[i], q a random permutation: a matrix in poor order. */
static PetscErrorCode RandomOrderLaplacian(PetscInt k, Mat *A)
{
  const PetscInt N = k * k * k;
  PetscInt      *q, *qi, rs, re;

  PetscFunctionBegin;
  PetscCall(RandomPermutation(N, &q));
  PetscCall(PetscMalloc1(N, &qi));
  for (PetscInt i = 0; i < N; i++) qi[q[i]] = i;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, N, N, 7, NULL, 7, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    const PetscInt g = q[i], x = g % k, y = (g / k) % k, z = g / (k * k);
    PetscInt       cols[7], n = 0;
    PetscScalar    vals[7];
    cols[n]   = i;
    vals[n++] = 6.0 + (PetscReal)(g % 5) / 4.0;
    if (x > 0) cols[n] = qi[g - 1], vals[n++] = -1.0;
    if (x < k - 1) cols[n] = qi[g + 1], vals[n++] = -1.0;
    if (y > 0) cols[n] = qi[g - k], vals[n++] = -1.0;
    if (y < k - 1) cols[n] = qi[g + k], vals[n++] = -1.0;
    if (z > 0) cols[n] = qi[g - k * k], vals[n++] = -1.0;
    if (z < k - 1) cols[n] = qi[g + k * k], vals[n++] = -1.0;
    PetscCall(MatSetValues(*A, 1, &i, n, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree(q));
  PetscCall(PetscFree(qi));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* An m x n matrix with empty rows (every 5th), irregular rows, explicit zeros and no diagonal
   in some rows. */
static PetscErrorCode Irregular(PetscInt m, PetscInt n, Mat *A)
{
  PetscInt rs, re;

  PetscFunctionBegin;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, m, n, 12, NULL, 12, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    if (i % 5 == 2) continue;
    for (PetscInt k = 0; k < 1 + (i * 7) % 11; k++) {
      const PetscInt    c = (i * 31 + k * k * 17 + k * 5) % n;
      const PetscScalar v = (c % 13 == 0) ? 0.0 : 1.0 + (PetscReal)((i + c) % 9);
      PetscCall(MatSetValue(*A, i, c, v, INSERT_VALUES));
    }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SetOrdering(Mat B, const char *family, const char *ordering)
{
  PetscFunctionBegin;
  if (strstr(family, "rgcsr")) PetscCall(MatRgCSRSetOrdering(B, ordering));
  else PetscCall(MatPackSELLSetOrdering(B, ordering));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ExpectOrdering(Mat B, const char *family, const char *want)
{
  const char *got;
  PetscBool   same;

  PetscFunctionBegin;
  if (strstr(family, "rgcsr")) PetscCall(MatRgCSRGetOrdering(B, &got));
  else PetscCall(MatPackSELLGetOrdering(B, &got));
  PetscCall(PetscStrcmp(got, want, &same));
  PetscCheck(same, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the getter returns ordering %s, not %s", family, got, want);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The ordered_rows line of B's -mat_view ::ascii_info (0 when absent), through a file rank 0 reads. */
static PetscErrorCode OrderedRows(Mat B, PetscInt64 *rows)
{
  PetscViewer viewer;
  char        name[PETSC_MAX_PATH_LEN], line[512];
  PetscMPIInt rank;
  long long   v = 0;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscSNPrintf(name, sizeof(name), "ordering_view_%d.txt", (int)getpid()));
  PetscCallMPI(MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, PETSC_COMM_WORLD));
  PetscCall(PetscViewerASCIIOpen(PETSC_COMM_WORLD, name, &viewer));
  PetscCall(PetscViewerPushFormat(viewer, PETSC_VIEWER_ASCII_INFO));
  PetscCall(MatView(B, viewer));
  PetscCall(PetscViewerPopFormat(viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  if (rank == 0) {
    FILE *f = fopen(name, "r");
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot read %s", name);
    while (fgets(line, sizeof(line), f)) {
      const char *s = strstr(line, "ordered_rows: ");
      if (s) v = atoll(s + strlen("ordered_rows: "));
    }
    fclose(f);
    remove(name);
  }
  PetscCallMPI(MPI_Bcast(&v, 1, MPI_LONG_LONG, 0, PETSC_COMM_WORLD));
  *rows = (PetscInt64)v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every product of B (ordering rcm) against Aref's, through the option's lifetime. */
static PetscErrorCode CheckSquare(Mat Aref, const char *family, const char *what)
{
  Mat        B;
  PetscInt   M, rs, re;
  PetscInt64 ordered;

  PetscFunctionBegin;
  PetscCall(MatGetSize(Aref, &M, NULL));
  PetscCall(MatConvert(Aref, family, MAT_INITIAL_MATRIX, &B));
  PetscCall(SetOrdering(B, family, "rcm"));
  PetscCall(ExpectOrdering(B, family, "rcm"));
  PetscCall(TestCompareProducts(Aref, B, what));
  PetscCall(OrderedRows(B, &ordered));
  PetscCheck(ordered == M, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s %s: ordered_rows %" PetscInt64_FMT ", not the %" PetscInt_FMT " rows of the diagonal blocks", family, what, ordered, M);
  /* value updates of the same pattern, on both matrices */
  PetscCall(MatScale(Aref, -0.5));
  PetscCall(MatScale(B, -0.5));
  PetscCall(TestCompareMult(Aref, B, "after MatScale"));
  PetscCall(MatGetOwnershipRange(Aref, &rs, &re));
  { /* each third row's first stored entry: the same pattern */
    PetscInt *first;
    PetscCall(PetscMalloc1(re - rs + 1, &first));
    for (PetscInt i = rs; i < re; i++) {
      const PetscInt *cols;
      PetscInt        nc;
      PetscCall(MatGetRow(Aref, i, &nc, &cols, NULL));
      first[i - rs] = nc ? cols[0] : -1;
      PetscCall(MatRestoreRow(Aref, i, &nc, &cols, NULL));
    }
    for (PetscInt i = rs; i < re; i += 3) {
      if (first[i - rs] < 0) continue;
      PetscCall(MatSetValue(Aref, i, first[i - rs], 10.0 + (PetscReal)(i % 7), INSERT_VALUES));
      PetscCall(MatSetValue(B, i, first[i - rs], 10.0 + (PetscReal)(i % 7), INSERT_VALUES));
    }
    PetscCall(PetscFree(first));
  }
  PetscCall(MatAssemblyBegin(Aref, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Aref, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscCall(TestCompareProducts(Aref, B, "after MatSetValues"));
  /* a new nonzero on each rank: a new pattern, a new ordering */
  PetscCall(MatSetOption(Aref, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  if (re > rs) {
    PetscCall(MatSetValue(Aref, rs, (rs + M / 2) % M, 0.25, ADD_VALUES));
    PetscCall(MatSetValue(B, rs, (rs + M / 2) % M, 0.25, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(Aref, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Aref, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscCall(TestCompareProducts(Aref, B, "after a new nonzero"));
  PetscCall(OrderedRows(B, &ordered));
  PetscCheck(ordered == M, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s %s: ordered_rows %" PetscInt64_FMT " after a new nonzero", family, what, ordered);
  /* a bad string: an error, the matrix unchanged */
  {
    PetscErrorCode ierr;
    char           msg[512];
    TRY(SetOrdering(B, family, "metis"), &ierr, msg);
    PetscCheck(ierr == PETSC_ERR_ARG_WRONG, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: ordering metis gave error %d (%s), not PETSC_ERR_ARG_WRONG", family, (int)ierr, msg);
    PetscCheck(strstr(msg, "ordering 'metis' is not valid: use natural or rcm"), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the message does not name the choices: %s", family, msg);
    PetscCall(ExpectOrdering(B, family, "rcm"));
    PetscCall(TestCompareMult(Aref, B, "after a refused ordering"));
  }
  /* back to the matrix's order */
  PetscCall(SetOrdering(B, family, "natural"));
  PetscCall(TestCompareMult(Aref, B, "natural again"));
  PetscCall(OrderedRows(B, &ordered));
  PetscCheck(ordered == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s %s: ordered_rows %" PetscInt64_FMT " after ordering natural", family, what, ordered);
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A lossy PackSELL layout in RCM order keeps its bound (TestCompareProducts' lossy bound). */
static PetscErrorCode CheckLossy(Mat Aref, const char *family)
{
  Mat B;

  PetscFunctionBegin;
  PetscCall(MatConvert(Aref, family, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatPackSELLSetValueFormat(B, "fp16"));
  PetscCall(MatPackSELLSetOrdering(B, "rcm"));
  PetscCall(TestCompareProducts(Aref, B, "fp16, rcm"));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* rcm on a rectangular matrix: accepted, the layout keeps the matrix's order. */
static PetscErrorCode CheckRectangular(const char *family)
{
  Mat        A, B;
  PetscInt64 ordered;

  PetscFunctionBegin;
  PetscCall(Irregular(60, 45, &A));
  PetscCall(MatConvert(A, family, MAT_INITIAL_MATRIX, &B));
  PetscCall(SetOrdering(B, family, "rcm"));
  PetscCall(ExpectOrdering(B, family, "rcm"));
  PetscCall(TestCompareProducts(A, B, "rectangular, rcm"));
  PetscCall(OrderedRows(B, &ordered));
  PetscCheck(ordered == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: a 60 x 45 matrix has %" PetscInt64_FMT " ordered rows", family, ordered);
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A diagonal matrix: no rank has off-diagonal columns (an empty off-diagonal block). */
static PetscErrorCode CheckDiagonal(const char *family)
{
  Mat        A, B;
  PetscInt   rs, re, M = 50;
  PetscInt64 ordered;

  PetscFunctionBegin;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, M, M, 1, NULL, 0, NULL, &A));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) PetscCall(MatSetValue(A, i, i, 1.0 + (PetscReal)i, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatConvert(A, family, MAT_INITIAL_MATRIX, &B));
  PetscCall(SetOrdering(B, family, "rcm"));
  PetscCall(TestCompareProducts(A, B, "diagonal, rcm"));
  PetscCall(OrderedRows(B, &ordered));
  PetscCheck(ordered == M, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: a diagonal matrix has %" PetscInt64_FMT " ordered rows, not %" PetscInt_FMT, family, ordered, M);
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The option in the options database (every matrix of the family takes it, GAMG's rectangular
   interpolations too): CG + GAMG on the random-order Laplacian converges in AIJ's iterations, to
   the same true residual bound. */
static PetscErrorCode CheckGamg(Mat Aref, const char *family)
{
  Mat       B;
  KSP       ksp;
  Vec       x, b;
  PetscInt  its[2];
  PetscReal rel;
  char      opt[64];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(opt, sizeof(opt), "-mat_%s_ordering", strstr(family, "rgcsr") ? "rgcsr" : "packsell"));
  PetscCall(MatCreateVecs(Aref, &x, &b));
  PetscCall(TestRandomVec(b, 7));
  for (int k = 0; k < 2; k++) {
    Mat op = Aref;
    if (k == 1) {
      PetscCall(PetscOptionsSetValue(NULL, opt, "rcm"));
      PetscCall(MatConvert(Aref, family, MAT_INITIAL_MATRIX, &B));
      PetscCall(MatSetFromOptions(B));
      PetscCall(ExpectOrdering(B, family, "rcm"));
      op = B;
    }
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, op, op));
    PetscCall(KSPSetType(ksp, KSPCG));
    PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_CURRENT, PETSC_CURRENT, 200));
    {
      PC pc;
      PetscCall(KSPGetPC(ksp, &pc));
      PetscCall(PCSetType(pc, PCGAMG));
    }
    PetscCall(VecSet(x, 0.0));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(KSPGetIterationNumber(ksp, &its[k]));
    PetscCall(TestTrueResidual(Aref, b, x, &rel));
    PetscCheck(rel < 1e-9, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: CG + GAMG (%s) true residual %g", family, k ? "rcm" : "AIJ", (double)rel);
    PetscCall(KSPDestroy(&ksp));
  }
  PetscCheck(PetscAbsInt(its[1] - its[0]) <= 1, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: CG + GAMG took %" PetscInt_FMT " iterations with rcm, %" PetscInt_FMT " with AIJ", family, its[1], its[0]);
  PetscCall(PetscOptionsClearValue(NULL, opt));
  PetscCall(MatDestroy(&B));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char     *types[MAXTYPES];
  PetscInt  ntypes = MAXTYPES;
  PetscBool flg;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscSpMVInitializePackage());
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", types, &ntypes, &flg));
  PetscCheck(flg && ntypes > 0, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "give the families with -types rgcsr,packsell,...");
  for (PetscInt t = 0; t < ntypes; t++) {
    Mat A;
    PetscCall(RandomOrderLaplacian(12, &A));
    PetscCall(CheckSquare(A, types[t], "random-order Laplacian"));
    PetscCall(MatDestroy(&A));
    PetscCall(RandomOrderLaplacian(12, &A));
    PetscCall(CheckGamg(A, types[t]));
    PetscCall(MatDestroy(&A));
    PetscCall(Irregular(300, 300, &A));
    PetscCall(CheckSquare(A, types[t], "irregular"));
    if (strstr(types[t], "packsell")) PetscCall(CheckLossy(A, types[t]));
    PetscCall(MatDestroy(&A));
    PetscCall(CheckRectangular(types[t]));
    PetscCall(CheckDiagonal(types[t]));
  }
  for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS\n"));
  PetscCall(PetscFinalize());
  return 0;
}
