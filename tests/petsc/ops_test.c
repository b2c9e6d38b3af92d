static const char help[] = "Checks petscspmv Mat types against AIJ on one matrix file: MatMult, MatMultAdd,\n\
MatMultTranspose(Add), MatGetDiagonal, MatConvert in the three reuse modes (and back),\n\
MatDuplicate, MatCopy, MatScale, MatShift, MatDiagonalSet, MatZeroEntries, value-only re-assembly.\n\
  -f <file>              PETSc binary matrix (scripts/mtx2petsc.py)\n\
  -types <t1,t2,...>     families to test: rgcsr, packsell, rgcsrcuda, packsellcuda\n\
  -value_formats <f,...> PackSELL value formats to test (default exact,fp16,bf16; the lossy\n\
                         ones are built with -mat_packsell_scaling auto)\n\
  -rank0_empty           redistribute the matrix so that rank 0 owns no rows and no columns\n\
  -view                  MatView() each converted matrix with PETSC_VIEWER_ASCII_INFO\n";

#include "spmv_test_util.h"

#include <string.h>

#define MAXTYPES 8

/* Same matrix, rank 0 owning no rows and no columns (needs 2 ranks or more). */
static PetscErrorCode Rank0Empty(Mat *A)
{
  PetscMPIInt size, rank;
  PetscInt    M, N, m, n, rs, cs;
  IS          isrow, iscol;
  Mat         B;
  MPI_Comm    comm = PetscObjectComm((PetscObject)*A);

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (size < 2) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetSize(*A, &M, &N));
  m  = rank ? M / (size - 1) + ((rank - 1) < M % (size - 1)) : 0;
  n  = rank ? N / (size - 1) + ((rank - 1) < N % (size - 1)) : 0;
  rs = 0;
  cs = 0;
  PetscCallMPI(MPI_Exscan(&m, &rs, 1, MPIU_INT, MPI_SUM, comm));
  PetscCallMPI(MPI_Exscan(&n, &cs, 1, MPIU_INT, MPI_SUM, comm));
  if (!rank) rs = cs = 0;
  PetscCall(ISCreateStride(comm, m, rs, 1, &isrow));
  PetscCall(ISCreateStride(comm, n, cs, 1, &iscol));
  PetscCall(MatCreateSubMatrix(*A, isrow, iscol, MAT_INITIAL_MATRIX, &B));
  PetscCall(ISDestroy(&isrow));
  PetscCall(ISDestroy(&iscol));
  PetscCall(MatDestroy(A));
  *A = B;
  PetscCall(MatGetLocalSize(*A, &m, &n));
  PetscCheck(rank || (m == 0 && n == 0), PETSC_COMM_SELF, PETSC_ERR_PLIB, "rank 0 still owns %" PetscInt_FMT " rows", m);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The other family with the same backend (rgcsr <-> packsell, rgcsrcuda <-> packsellcuda). */
static const char *OtherFamily(const char *family)
{
  PetscBool cuda = strstr(family, "cuda") ? PETSC_TRUE : PETSC_FALSE;
  if (strstr(family, "rgcsr")) return cuda ? MATPACKSELLCUDA : MATPACKSELL;
  return cuda ? MATRGCSRCUDA : MATRGCSR;
}

static PetscErrorCode CheckEqualAIJ(Mat A, Mat C, const char *what)
{
  PetscBool eq;
  MatType   ta, tc;

  PetscFunctionBegin;
  PetscCall(MatGetType(A, &ta));
  PetscCall(MatGetType(C, &tc));
  PetscCheck(!strcmp(ta, tc), PetscObjectComm((PetscObject)A), PETSC_ERR_PLIB, "%s: converted back to %s, expected %s", what, tc, ta);
  PetscCall(MatEqual(A, C, &eq));
  PetscCheck(eq, PetscObjectComm((PetscObject)A), PETSC_ERR_PLIB, "%s: the AIJ matrix differs from the original", what);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Sets A(i, first column of row i) = v for every local row: same pattern, new values. */
static PetscErrorCode SetFirstEntries(Mat A, PetscScalar v)
{
  PetscInt rs, re, *first;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(PetscMalloc1(re - rs + 1, &first));
  for (PetscInt i = rs; i < re; i++) { /* all rows first: MatSetValues() unassembles A */
    const PetscInt *cols;
    PetscInt        ncols;
    PetscCall(MatGetRow(A, i, &ncols, &cols, NULL));
    first[i - rs] = ncols ? cols[0] : -1;
    PetscCall(MatRestoreRow(A, i, &ncols, &cols, NULL));
  }
  for (PetscInt i = rs; i < re; i++)
    if (first[i - rs] >= 0) PetscCall(MatSetValue(A, i, first[i - rs], v + (PetscScalar)(i % 5), INSERT_VALUES));
  PetscCall(PetscFree(first));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* True if every row i < min(M, N) stores A(i, i). */
static PetscErrorCode HasDiagonal(Mat A, PetscBool *has)
{
  PetscInt  rs, re, N;
  PetscBool mine = PETSC_TRUE;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(MatGetSize(A, NULL, &N));
  for (PetscInt i = rs; i < PetscMin(re, N) && mine; i++) {
    const PetscInt *cols;
    PetscInt        ncols;
    PetscBool       found = PETSC_FALSE;
    PetscCall(MatGetRow(A, i, &ncols, &cols, NULL));
    for (PetscInt k = 0; k < ncols; k++) found = (PetscBool)(found || cols[k] == i);
    PetscCall(MatRestoreRow(A, i, &ncols, &cols, NULL));
    mine = found;
  }
  PetscCallMPI(MPIU_Allreduce(&mine, has, 1, PETSCSPMV_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)A)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RunFamily(Mat Aref, const char *family, const char *label, PetscBool view)
{
  Mat       A, B, C, D, E, F;
  PetscInt  M, N, builds0, values0, builds1, values1;
  PetscBool congruent;
  char      what[256];

  PetscFunctionBegin;
  PetscCall(PetscPrintf(PetscObjectComm((PetscObject)Aref), "%s\n", label));
  PetscCall(MatDuplicate(Aref, MAT_COPY_VALUES, &A)); /* the conversions' source AIJ matrix, modified alongside B */
  PetscCall(MatGetSize(A, &M, &N));
  PetscCall(MatHasCongruentLayouts(A, &congruent));

  /* AIJ -> ours, MAT_INITIAL_MATRIX */
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s initial", label));
  PetscCall(MatConvert(A, family, MAT_INITIAL_MATRIX, &B));
  PetscCall(TestCheckType(B, family));
  if (view) {
    PetscCall(PetscViewerPushFormat(PETSC_VIEWER_STDOUT_(PetscObjectComm((PetscObject)B)), PETSC_VIEWER_ASCII_INFO));
    PetscCall(MatView(B, PETSC_VIEWER_STDOUT_(PetscObjectComm((PetscObject)B))));
    PetscCall(PetscViewerPopFormat(PETSC_VIEWER_STDOUT_(PetscObjectComm((PetscObject)B))));
  }
  PetscCall(TestCompareProducts(A, B, what));

  /* ours -> AIJ, initial and reuse: the AIJ data must come back bit for bit */
  PetscCall(MatConvert(B, MATAIJ, MAT_INITIAL_MATRIX, &C));
  PetscCall(CheckEqualAIJ(A, C, "to AIJ, initial"));
  PetscCall(MatScale(A, 2.0));
  PetscCall(MatScale(B, 2.0));
  PetscCall(MatConvert(B, MATAIJ, MAT_REUSE_MATRIX, &C));
  PetscCall(CheckEqualAIJ(A, C, "to AIJ, reuse"));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s after MatScale", label));
  PetscCall(TestCompareMult(A, B, what));

  /* AIJ -> ours, MAT_REUSE_MATRIX */
  PetscCall(MatScale(A, 0.25));
  PetscCall(MatConvert(A, family, MAT_REUSE_MATRIX, &B));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s reuse", label));
  PetscCall(TestCompareProducts(A, B, what));

  /* AIJ -> ours -> AIJ, MAT_INPLACE_MATRIX */
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &D));
  PetscCall(MatConvert(D, family, MAT_INPLACE_MATRIX, &D));
  PetscCall(TestCheckType(D, family));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s in place", label));
  PetscCall(TestCompareMult(A, D, what));
  PetscCall(MatConvert(D, MATAIJ, MAT_INPLACE_MATRIX, &D));
  PetscCall(CheckEqualAIJ(A, D, "to AIJ, in place"));
  PetscCall(MatDestroy(&D));

  /* MatDuplicate (with and without values), MatCopy */
  PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &E));
  PetscCall(TestCheckType(E, family));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s duplicate", label));
  PetscCall(TestCompareProducts(A, E, what));
  PetscCall(MatDuplicate(B, MAT_DO_NOT_COPY_VALUES, &F));
  PetscCall(TestCheckZeroMult(F, "duplicate without values"));
  PetscCall(MatDestroy(&F));
  PetscCall(MatScale(E, 3.0));
  PetscCall(MatCopy(B, E, SAME_NONZERO_PATTERN));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s copy", label));
  PetscCall(TestCompareMult(A, E, what));
  PetscCall(MatDestroy(&E));

  /* MatScale, MatShift, MatDiagonalSet (may add diagonal entries: a new pattern) */
  PetscCall(MatScale(A, -1.5));
  PetscCall(MatScale(B, -1.5));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s scale", label));
  PetscCall(TestCompareMult(A, B, what));
  {
    PetscMPIInt size;
    PetscBool   hasdiag;
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
    PetscCall(HasDiagonal(A, &hasdiag));
    /* MPIAIJ inserts missing diagonal entries one reallocation at a time (quadratic on
       NotreDame_www); the new-pattern path is covered with one rank and by spmv_layouts */
    if (size > 1 && !hasdiag) congruent = PETSC_FALSE;
  }
  if (M == N && congruent) {
    Vec d;
    /* MatLoad'ed MPIAIJ refuses new nonzeros; a missing diagonal entry is one */
    PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    PetscCall(MatShift(A, 2.0));
    PetscCall(MatShift(B, 2.0));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s shift", label));
    PetscCall(TestCompareProducts(A, B, what));
    PetscCall(MatCreateVecs(A, &d, NULL));
    PetscCall(VecSetRandom(d, NULL));
    PetscCall(MatDiagonalSet(A, d, INSERT_VALUES));
    PetscCall(MatDiagonalSet(B, d, INSERT_VALUES));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s diagonal set", label));
    PetscCall(TestCompareProducts(A, B, what));
    PetscCall(MatDiagonalSet(A, d, ADD_VALUES));
    PetscCall(MatDiagonalSet(B, d, ADD_VALUES));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s diagonal add", label));
    PetscCall(TestCompareMult(A, B, what));
    PetscCall(VecDestroy(&d));
  }

  /* value-only re-assembly: the layout is updated, not rebuilt */
  PetscCall(TestCompareMult(A, B, "sync before re-assembly"));
  PetscCall(TestEventCount("SpMVBuild", &builds0));
  PetscCall(TestEventCount("SpMVValues", &values0));
  PetscCall(SetFirstEntries(A, 7.0));
  PetscCall(SetFirstEntries(B, 7.0));
  PetscCall(TestEventCount("SpMVBuild", &builds1));
  PetscCall(TestEventCount("SpMVValues", &values1));
  PetscCheck(builds1 == builds0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "value-only re-assembly rebuilt the layout (%" PetscInt_FMT " builds)", builds1 - builds0);
  PetscCheck(values1 > values0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "value-only re-assembly did not update the values");
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s re-assembled", label));
  PetscCall(TestCompareProducts(A, B, what));

  /* to the other family (through AIJ), lossless options there */
  PetscCall(PetscOptionsSetValue(NULL, "-mat_packsell_value_format", "exact"));
  PetscCall(MatConvert(B, OtherFamily(family), MAT_INITIAL_MATRIX, &F));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_packsell_value_format"));
  PetscCall(TestCheckType(F, OtherFamily(family)));
  PetscCall(MatConvert(F, MATAIJ, MAT_INITIAL_MATRIX, &D));
  PetscCall(CheckEqualAIJ(A, D, "through the other family"));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&F));

  /* MatZeroEntries */
  PetscCall(MatZeroEntries(B));
  PetscCall(TestCheckZeroMult(B, "MatZeroEntries"));
  PetscCall(MatZeroEntries(A));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s zeroed", label));
  PetscCall(TestCompareProducts(A, B, what));

  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char      file[PETSC_MAX_PATH_LEN], *types[MAXTYPES], *formats[MAXTYPES];
  PetscInt  ntypes = MAXTYPES, nformats = MAXTYPES;
  PetscBool rank0_empty = PETSC_FALSE, view = PETSC_FALSE;
  Mat       A;
  PetscInt  M, N;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscSpMVInitializePackage());
  PetscCall(PetscLogDefaultBegin());
  PetscCall(TestGetFileAndFamilies(file, sizeof(file), types, &ntypes, formats, &nformats));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-rank0_empty", &rank0_empty, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-view", &view, NULL));

  PetscCall(TestLoadAIJ(file, &A));
  if (rank0_empty) PetscCall(Rank0Empty(&A));
  PetscCall(MatGetSize(A, &M, &N));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %" PetscInt_FMT " x %" PetscInt_FMT "\n", file, M, N));

  for (PetscInt t = 0; t < ntypes; t++) {
    char label[256];
    if (strstr(types[t], "packsell")) {
      for (PetscInt f = 0; f < nformats; f++) {
        PetscBool lossy = strcmp(formats[f], "exact") ? PETSC_TRUE : PETSC_FALSE;
        /* options set in the database are read when the type is set (MatConvert) */
        PetscCall(PetscOptionsSetValue(NULL, "-mat_packsell_value_format", formats[f]));
        PetscCall(PetscOptionsSetValue(NULL, "-mat_packsell_scaling", lossy ? "auto" : "none"));
        PetscCall(PetscSNPrintf(label, sizeof(label), "%s/%s", types[t], formats[f]));
        if (lossy) { /* a matrix spanning more magnitudes than the format is refused, even scaled */
          PetscBool holds;
          PetscCall(TestFormatHoldsValues(A, formats[f], PETSC_TRUE, &holds));
          if (!holds) {
            PetscCall(TestExpectRefused(A, types[t], label));
            PetscCall(PetscOptionsClearValue(NULL, "-mat_packsell_value_format"));
            PetscCall(PetscOptionsClearValue(NULL, "-mat_packsell_scaling"));
            continue;
          }
        }
        PetscCall(RunFamily(A, types[t], label, view));
        PetscCall(PetscOptionsClearValue(NULL, "-mat_packsell_value_format"));
        PetscCall(PetscOptionsClearValue(NULL, "-mat_packsell_scaling"));
      }
    } else {
      PetscCall(RunFamily(A, types[t], types[t], view));
    }
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS %s\n", file));

  for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
  for (PetscInt f = 0; f < nformats; f++) PetscCall(PetscFree(formats[f]));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
