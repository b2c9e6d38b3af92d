static const char help[] = "Global indices past 2^31 with a PETSc built --with-64-bit-indices.\n\
  -types <t1,t2,...>  families (rgcsr, packsell, rgcsrcuda, packsellcuda)\n\
The layouts index each process's blocks with 32-bit integers. Checked here:\n\
  1. a matrix of 2^31 + 4 columns whose process blocks stay below 2^31 (two or more processes)\n\
     converts to every family with the same rows (MatGetRow) and layouts of the same sizes\n\
     (MatSpMVGetStats), converts back to AIJ equal (MatEqual), reads back from MatView() to a\n\
     binary file with MatLoad(), and a PackSELL FP16 value out of range is named by its global\n\
     row and column past 2^31 (both blocks: the off-diagonal one through garray, the diagonal\n\
     one by its first column);\n\
  2. a process block of 2^31 - 1 columns converts exactly; one of 2^31 columns is refused by\n\
     MatConvert, MAT_INITIAL_MATRIX and MAT_INPLACE_MATRIX, with PETSC_ERR_ARG_OUTOFRANGE on\n\
     every process, and the AIJ matrix is left as it was.\n\
No products: vectors of 2^31 entries would take 16 GiB.\n";

#include "spmv_test_util.h"

#include <string.h>

#define MAXTYPES 8

/* An AIJ matrix of 3 rows per process and the given local column count, whose k-th local row
   (global row i) holds columns i, cstart + (i + 1) % nloc (the process's own block) and N - 1 - k
   (the last process's), values 1 + i + j / 4 for the j-th (columns that coincide hold the last
   value); *N gets the global column count. */
static PetscErrorCode BuildWide(MPI_Comm comm, PetscInt nloc, Mat *A, PetscInt *N)
{
  PetscInt cstart, rstart, rend;

  PetscFunctionBegin;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, 3, nloc, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSeqAIJSetPreallocation(*A, 3, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 3, NULL, 3, NULL));
  PetscCall(MatGetSize(*A, NULL, N));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  PetscCall(MatGetOwnershipRangeColumn(*A, &cstart, NULL));
  for (PetscInt i = rstart; i < rend; i++) {
    const PetscInt cols[3] = {i, cstart + (i + 1) % nloc, *N - 1 - (i - rstart)};
    for (PetscInt j = 0; j < 3; j++) PetscCall(MatSetValue(*A, i, cols[j], 1.0 + i + 0.25 * j, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The layout of B (made from A) holds what A's blocks hold: MatSpMVGetStats()'s local rows,
   columns (diagonal block plus the off-diagonal block's compressed ones) and nonzeros, read from
   the layouts, equal A's. */
static PetscErrorCode CheckLayoutSizes(Mat A, Mat B, const char *what)
{
  MatSpMVStats st;
  MatInfo      info;
  PetscInt     m, n, noff = 0;
  PetscMPIInt  size;

  PetscFunctionBegin;
  PetscCall(MatSpMVGetStats(B, &st));
  PetscCall(MatGetLocalSize(A, &m, &n));
  PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size > 1) {
    Mat Ao;
    PetscCall(MatMPIAIJGetSeqAIJ(A, NULL, &Ao, NULL));
    PetscCall(MatGetLocalSize(Ao, NULL, &noff));
  }
  PetscCheck(st.rows == m && st.cols == n + noff && st.nnz == (PetscInt64)info.nz_used, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the layouts hold %" PetscInt64_FMT " rows, %" PetscInt64_FMT " columns, %" PetscInt64_FMT " nonzeros; the AIJ blocks %" PetscInt_FMT ", %" PetscInt_FMT ", %" PetscInt64_FMT, what, st.rows, st.cols, st.nnz, m, n + noff,
             (PetscInt64)info.nz_used);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every local row of B equals A's: the same global columns and the same values. */
static PetscErrorCode CheckSameRows(Mat A, Mat B, const char *what)
{
  PetscInt rstart, rend;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt           na, nb;
    const PetscInt    *ca, *cb;
    const PetscScalar *va, *vb;
    PetscBool          same;

    PetscCall(MatGetRow(A, i, &na, &ca, &va));
    PetscCall(MatGetRow(B, i, &nb, &cb, &vb));
    same = (PetscBool)(na == nb);
    for (PetscInt k = 0; same && k < na; k++) same = (PetscBool)(ca[k] == cb[k] && va[k] == vb[k]);
    PetscCall(MatRestoreRow(B, i, &nb, &cb, &vb));
    PetscCall(MatRestoreRow(A, i, &na, &ca, &va));
    PetscCheck(same, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: row %" PetscInt_FMT " differs from the AIJ matrix's", what, i);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* B (of `family`, made from A) written with MatView() to a PETSc binary file and read back with
   MatLoad() into a new matrix of `family` with A's row and column layout: its rows equal A's. */
static PetscErrorCode CheckViewLoad(Mat A, Mat B, const char *family)
{
  PetscViewer v;
  Mat         L;
  PetscInt    m, n;
  char        file[PETSC_MAX_PATH_LEN];
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscSNPrintf(file, sizeof(file), "spmv_bigindex_%s.bin", family));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, file, FILE_MODE_WRITE, &v));
  PetscCall(PetscViewerBinarySetSkipInfo(v, PETSC_TRUE));
  PetscCall(MatView(B, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(MatGetLocalSize(A, &m, &n));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &L));
  PetscCall(MatSetSizes(L, m, n, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(L, family));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, file, FILE_MODE_READ, &v));
  PetscCall(MatLoad(L, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(TestCheckType(L, family));
  PetscCall(CheckSameRows(A, L, "MatView + MatLoad"));
  PetscCall(MatDestroy(&L));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  if (rank == 0) PetscCheck(remove(file) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "cannot remove %s", file);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatConvert(A, family) with an FP16 PackSELL and the value at (row, col) set to 1e6 must fail
   with PETSC_ERR_ARG_OUTOFRANGE on every process, naming "row <row>, column <col>" on the process
   that holds the entry (the others say that another process failed). */
static PetscErrorCode CheckRangeErrorNamesGlobal(Mat A, const char *family, PetscInt row, PetscInt col)
{
  Mat            C, B = NULL;
  PetscErrorCode ierr;
  char           msg[1024], want[128];
  PetscInt       rstart, rend;
  PetscBool      named, mine;

  PetscFunctionBegin;
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &C));
  PetscCall(MatGetOwnershipRange(C, &rstart, &rend));
  if (row >= rstart && row < rend) PetscCall(MatSetValue(C, row, col, 1e6, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(C, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(C, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_packsell_value_format", "fp16"));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_packsell_scaling", "none"));
  TRY(MatConvert(C, family, MAT_INITIAL_MATRIX, &B), &ierr, msg);
  PetscCall(PetscOptionsClearValue(NULL, "-mat_packsell_value_format"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_packsell_scaling"));
  PetscCall(PetscSNPrintf(want, sizeof(want), "row %" PetscInt_FMT ", column %" PetscInt_FMT ":", row, col));
  PetscCheck(ierr == PETSC_ERR_ARG_OUTOFRANGE, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s FP16 with 1e6 at (%" PetscInt_FMT ", %" PetscInt_FMT "): error %d \"%s\", expected PETSC_ERR_ARG_OUTOFRANGE", family, row, col, (int)ierr, msg);
  named = (PetscBool)(strstr(msg, want) != NULL);
  mine  = (PetscBool)(row >= rstart && row < rend);
  PetscCheck(named == mine, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s FP16 with 1e6 at (%" PetscInt_FMT ", %" PetscInt_FMT "): \"%s\" %s \"%s\"", family, row, col, msg, named ? "names" : "does not name", want);
  PetscCall(MatDestroy(&C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GlobalPast2To31(char *types[], PetscInt ntypes)
{
  PetscMPIInt    size, rank;
  const PetscInt total = ((PetscInt)1 << 31) + 4; /* global columns */
  PetscInt       nloc, N, rstart;
  Mat            A;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (size < 2) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "global indices past 2^31: need two processes or more (one process holds every column)\n"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  nloc = total / size + (rank == size - 1 ? total % size : 0);
  PetscCall(BuildWide(PETSC_COMM_WORLD, nloc, &A, &N));
  PetscCheck(N == total && N > ((PetscInt)1 << 31), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%" PetscInt_FMT " columns", N);
  PetscCall(MatGetOwnershipRange(A, &rstart, NULL));
  for (PetscInt t = 0; t < ntypes; t++) {
    Mat       B, C;
    PetscBool eq;

    PetscCall(MatConvert(A, types[t], MAT_INITIAL_MATRIX, &B));
    PetscCall(TestCheckType(B, types[t]));
    PetscCall(CheckLayoutSizes(A, B, types[t]));
    PetscCall(CheckSameRows(A, B, types[t]));
    PetscCall(MatConvert(B, MATAIJ, MAT_INITIAL_MATRIX, &C));
    PetscCall(MatEqual(A, C, &eq));
    PetscCheck(eq, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s converted back to AIJ differs", types[t]);
    PetscCall(MatDestroy(&C));
    PetscCall(CheckViewLoad(A, B, types[t]));
    PetscCall(MatDestroy(&B));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %" PetscInt_FMT " columns: rows, the AIJ round trip and MatView + MatLoad exact\n", types[t], N));
    if (strstr(types[t], "packsell")) {
      /* row 1 of process 0 holds column N - 2, in the last process's diagonal block: process 0's
         off-diagonal block (garray); the last row (the last process's third) holds column N - 3,
         past 2^31, in its own diagonal block */
      PetscInt M;
      PetscCall(MatGetSize(A, &M, NULL));
      PetscCheck(N - 3 > ((PetscInt)1 << 31), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "column N - 3 = %" PetscInt_FMT " is not past 2^31", N - 3);
      PetscCall(CheckRangeErrorNamesGlobal(A, types[t], 1, N - 2));
      PetscCall(CheckRangeErrorNamesGlobal(A, types[t], M - 1, N - 3));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: a value out of the FP16 range named by its global column past 2^31 (both blocks)\n", types[t]));
    }
  }
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A refused conversion: PETSC_ERR_ARG_OUTOFRANGE on every process, the 32-bit limit named by the
   process whose block is too large (the others say that another process failed). */
static PetscErrorCode CheckRefused(const char *family, const char *reuse, PetscErrorCode ierr, const char *msg, PetscBool mine)
{
  PetscFunctionBegin;
  PetscCheck(ierr == PETSC_ERR_ARG_OUTOFRANGE, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s, %s, of a block of 2^31 columns: error %d \"%s\", expected PETSC_ERR_ARG_OUTOFRANGE", family, reuse, (int)ierr, msg);
  PetscCheck(mine == (PetscBool)(strstr(msg, "32-bit") != NULL), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s, %s: \"%s\" %s the 32-bit limit", family, reuse, msg, mine ? "does not name" : "names");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Process 0's diagonal block with 2^31 - 1 columns, the most a block may have: converts, with
   the same rows, and back to AIJ equal. */
static PetscErrorCode BlockAtLimit(char *types[], PetscInt ntypes)
{
  PetscMPIInt rank;
  PetscInt    N;
  Mat         A;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(BuildWide(PETSC_COMM_WORLD, rank ? 2 : ((PetscInt)1 << 31) - 1, &A, &N));
  for (PetscInt t = 0; t < ntypes; t++) {
    Mat       B, C;
    PetscBool eq;

    PetscCall(MatConvert(A, types[t], MAT_INITIAL_MATRIX, &B));
    PetscCall(CheckLayoutSizes(A, B, types[t]));
    PetscCall(CheckSameRows(A, B, types[t]));
    PetscCall(MatConvert(B, MATAIJ, MAT_INITIAL_MATRIX, &C));
    PetscCall(MatEqual(A, C, &eq));
    PetscCheck(eq, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s (a block of 2^31 - 1 columns) converted back to AIJ differs", types[t]);
    PetscCall(MatDestroy(&C));
    PetscCall(MatDestroy(&B));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: a block of 2^31 - 1 columns converts exactly\n", types[t]));
  }
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode BlockTooWide(char *types[], PetscInt ntypes)
{
  PetscMPIInt rank;
  PetscInt    N;
  Mat         A;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  /* process 0's diagonal block: 2^31 columns, one more than a block may have */
  PetscCall(BuildWide(PETSC_COMM_WORLD, rank ? 2 : (PetscInt)1 << 31, &A, &N));
  for (PetscInt t = 0; t < ntypes; t++) {
    Mat            B = NULL, C;
    PetscErrorCode ierr;
    char           msg[1024];
    PetscBool      eq, aij;

    TRY(MatConvert(A, types[t], MAT_INITIAL_MATRIX, &B), &ierr, msg);
    PetscCall(CheckRefused(types[t], "MAT_INITIAL_MATRIX", ierr, msg, rank == 0));
    PetscCheck(!B, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: a refused MatConvert returned a matrix", types[t]);
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &C));
    TRY(MatConvert(C, types[t], MAT_INPLACE_MATRIX, &C), &ierr, msg);
    PetscCall(CheckRefused(types[t], "MAT_INPLACE_MATRIX", ierr, msg, rank == 0));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)C, &aij, MATSEQAIJ, MATMPIAIJ, ""));
    if (!aij) {
      MatType ct;
      PetscCall(MatGetType(C, &ct));
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s in place refused: the matrix became %s", types[t], ct);
    }
    PetscCall(MatEqual(A, C, &eq));
    PetscCheck(eq, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s in place refused: the matrix changed", types[t]);
    PetscCall(MatDestroy(&C));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: a block of 2^31 columns refused (out of range, 32-bit limit), the AIJ matrix unchanged\n", types[t]));
  }
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char     *types[MAXTYPES];
  PetscInt  ntypes = MAXTYPES;
  PetscBool flg;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCheck(sizeof(PetscInt) == 8, PETSC_COMM_WORLD, PETSC_ERR_SUP, "this test needs a PETSc built --with-64-bit-indices");
  PetscCall(PetscSpMVInitializePackage());
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", types, &ntypes, &flg));
  PetscCheck(flg && ntypes > 0, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "give the families with -types rgcsr,packsell,...");
  PetscCall(GlobalPast2To31(types, ntypes));
  PetscCall(BlockAtLimit(types, ntypes));
  PetscCall(BlockTooWide(types, ntypes));
  for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS\n"));
  PetscCall(PetscFinalize());
  return 0;
}
