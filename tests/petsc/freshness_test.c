static const char help[] = "When the petscspmv layouts follow the AIJ arrays, at 1-3 ranks: after each PETSc operation that\n\
changes values through AIJ's code (MatSetValues + assembly, flush assemblies, MatScale, MatShift,\n\
MatDiagonalSet, MatZeroEntries, MatAXPY, MatCopy, MatConvert with MAT_REUSE_MATRIX, MatRetrieveValues,\n\
MatSeqAIJGetArray on the blocks) MatMult equals AIJ's, and one more product neither builds nor\n\
updates a layout; the first product after a final assembly does neither; a new pattern (also a new\n\
off-diagonal column on one rank: MPIAIJ recreates the off-diagonal blocks inside its assembly)\n\
rebuilds with the matrix's options, not the options database's; a value out of the PackSELL\n\
format's range given through MatSetValues is an error of MatAssemblyEnd on every rank.\n\
  -types <t1,t2,...>  families: rgcsr, packsell, rgcsrcuda, packsellcuda (the range errors: the\n\
                      PackSELL one among them)\n";

#include "spmv_test_util.h"

#include <string.h>

#define MAXTYPES 8

/* n x n AIJ matrix: tridiagonal, plus (i, (i + n/2) % n) so that every rank has off-diagonal
   columns; preallocated with room for a few new nonzeros per row. */
static PetscErrorCode Generate(PetscInt n, Mat *A)
{
  PetscInt rs, re;

  PetscFunctionBegin;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n, n, 6, NULL, 6, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    for (PetscInt j = PetscMax(0, i - 1); j <= PetscMin(n - 1, i + 1); j++) PetscCall(MatSetValue(*A, i, j, i == j ? 4.0 + (i % 3) : -1.0 - 0.125 * (j % 5), INSERT_VALUES));
    PetscCall(MatSetValue(*A, i, (i + n / 2) % n, 0.5 + 0.25 * (i % 4), INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Layout builds and value updates so far on this rank. */
static PetscErrorCode Syncs(PetscInt *builds, PetscInt *updates)
{
  PetscFunctionBegin;
  PetscCall(TestEventCount("SpMVBuild", builds));
  PetscCall(TestEventCount("SpMVValues", updates));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One MatMult of B that neither builds nor updates a layout (on any rank). */
static PetscErrorCode ProductWithoutSync(Mat B, const char *what)
{
  PetscInt b0, v0, b1, v1;
  Vec      x, y;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(B, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(Syncs(&b0, &v0));
  PetscCall(MatMult(B, x, y));
  PetscCall(Syncs(&b1, &v1));
  PetscCheck(b1 == b0 && v1 == v0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: a product of a synced matrix built %" PetscInt_FMT " and updated %" PetscInt_FMT " layouts", what, b1 - b0, v1 - v0);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After the same change to A (AIJ) and B (ours): B's products equal A's, then stay synced. */
static PetscErrorCode Fresh(Mat A, Mat B, const char *what)
{
  PetscFunctionBegin;
  PetscCall(TestCompareMult(A, B, what));
  PetscCall(ProductWithoutSync(B, what));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a final assembly of both: the layout is synced at the assembly (no sync at the first
   product), and equal to the AIJ arrays. */
static PetscErrorCode FreshAfterAssembly(Mat A, Mat B, const char *what)
{
  PetscFunctionBegin;
  PetscCall(ProductWithoutSync(B, what));
  PetscCall(TestCompareMult(A, B, what));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Assemble(Mat A, MatAssemblyType type)
{
  PetscFunctionBegin;
  PetscCall(MatAssemblyBegin(A, type));
  PetscCall(MatAssemblyEnd(A, type));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* New values of existing entries: this rank's rows and the first row of the next rank (stashed). */
static PetscErrorCode SetExisting(Mat A, PetscScalar factor, InsertMode mode)
{
  PetscInt rs, re, n;

  PetscFunctionBegin;
  PetscCall(MatGetSize(A, &n, NULL));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt i = rs; i < re; i += 3) PetscCall(MatSetValue(A, i, i, factor * (1.0 + i % 7), mode));
  if (re < n) PetscCall(MatSetValue(A, re, (re + n / 2) % n, factor, mode));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* values[k] *= factor through MatSeqAIJGetArray() on the blocks of A (A itself if seq). */
static PetscErrorCode ScaleArrays(Mat A, PetscScalar factor)
{
  Mat blocks[2];

  PetscFunctionBegin;
  PetscCall(TestSeqBlocks(A, blocks));
  for (int k = 0; k < 2; k++) {
    PetscScalar *a;
    MatInfo      info;
    if (!blocks[k]) continue;
    PetscCall(MatGetInfo(blocks[k], MAT_LOCAL, &info));
    PetscCall(MatSeqAIJGetArray(blocks[k], &a));
    for (PetscInt i = 0; i < (PetscInt)info.nz_used; i++) a[i] *= factor * (1.0 + 0.01 * (i % 3));
    PetscCall(MatSeqAIJRestoreArray(blocks[k], &a));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* On the last rank: a new diagonal-block entry and a new off-diagonal column (value v). */
static PetscErrorCode SetNewNonzeros(Mat A, PetscScalar v)
{
  PetscMPIInt rank, size;
  PetscInt    rs, re, cs, ce, n;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(MatGetSize(A, &n, NULL));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(MatGetOwnershipRangeColumn(A, &cs, &ce));
  if (rank == size - 1 && re > rs) {
    PetscCall(MatSetValue(A, re - 1, PetscMax(cs, re - 4), 0.75, INSERT_VALUES)); /* diagonal block */
    PetscCall(MatSetValue(A, re - 1, 3, v, INSERT_VALUES));                       /* at 2-3 ranks a new off-diagonal column */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RunFamily(PetscInt n, const char *family)
{
  Mat         A, B, X;
  Vec         d;
  char        what[256];
  const char *ops[] = {"MatSetValues INSERT + assembly", "MatSetValues ADD + flush + assembly"};

  PetscFunctionBegin;
  PetscCall(Generate(n, &A));
  PetscCall(MatConvert(A, family, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  /* (MatConvert() increases the object state after the converter returns: a seq matrix updates
     its layout's values once more at its first use) */
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s after MatConvert", family));
  PetscCall(Fresh(A, B, what));

  /* values through MatSetValues(): the object state changes only at MatAssemblyEnd() */
  PetscCall(SetExisting(A, 2.5, INSERT_VALUES));
  PetscCall(SetExisting(B, 2.5, INSERT_VALUES));
  PetscCall(Assemble(A, MAT_FINAL_ASSEMBLY));
  PetscCall(Assemble(B, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s %s", family, ops[0]));
  PetscCall(FreshAfterAssembly(A, B, what));
  PetscCall(SetExisting(A, 0.5, ADD_VALUES));
  PetscCall(SetExisting(B, 0.5, ADD_VALUES));
  PetscCall(Assemble(A, MAT_FLUSH_ASSEMBLY));
  PetscCall(Assemble(B, MAT_FLUSH_ASSEMBLY));
  PetscCall(SetExisting(A, -0.25, ADD_VALUES));
  PetscCall(SetExisting(B, -0.25, ADD_VALUES));
  PetscCall(Assemble(A, MAT_FINAL_ASSEMBLY));
  PetscCall(Assemble(B, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s %s", family, ops[1]));
  PetscCall(FreshAfterAssembly(A, B, what));
  /* an assembly without new values: still synced at the first product */
  PetscCall(Assemble(B, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s assembly without changes", family));
  PetscCall(FreshAfterAssembly(A, B, what));

  /* operations of AIJ that change values and increase the object state */
  PetscCall(MatScale(A, -1.5));
  PetscCall(MatScale(B, -1.5));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatScale", family));
  PetscCall(Fresh(A, B, what));
  PetscCall(MatShift(A, 0.75));
  PetscCall(MatShift(B, 0.75));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatShift", family));
  PetscCall(Fresh(A, B, what));
  PetscCall(MatCreateVecs(A, NULL, &d));
  PetscCall(TestRandomVec(d, 7));
  PetscCall(MatDiagonalSet(A, d, INSERT_VALUES));
  PetscCall(MatDiagonalSet(B, d, INSERT_VALUES)); /* (an AIJ vector: MatDiagonalSet takes any) */
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatDiagonalSet INSERT_VALUES", family));
  PetscCall(Fresh(A, B, what));
  PetscCall(MatDiagonalSet(A, d, ADD_VALUES));
  PetscCall(MatDiagonalSet(B, d, ADD_VALUES));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatDiagonalSet ADD_VALUES", family));
  PetscCall(Fresh(A, B, what));
  PetscCall(VecDestroy(&d));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &X));
  PetscCall(MatScale(X, 0.3));
  PetscCall(MatAXPY(A, 2.0, X, SAME_NONZERO_PATTERN));
  PetscCall(MatAXPY(B, 2.0, X, SAME_NONZERO_PATTERN));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatAXPY SAME_NONZERO_PATTERN", family));
  PetscCall(Fresh(A, B, what));
  PetscCall(MatScale(X, -2.0));
  PetscCall(MatCopy(X, A, SAME_NONZERO_PATTERN));
  PetscCall(MatCopy(X, B, SAME_NONZERO_PATTERN));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatCopy", family));
  PetscCall(Fresh(A, B, what));
  PetscCall(MatScale(X, 0.5));
  PetscCall(MatCopy(X, A, SAME_NONZERO_PATTERN));
  PetscCall(MatConvert(X, family, MAT_REUSE_MATRIX, &B));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatConvert MAT_REUSE_MATRIX", family));
  PetscCall(Fresh(A, B, what));
  PetscCall(MatDestroy(&X));
  PetscCall(ScaleArrays(A, -0.5));
  PetscCall(ScaleArrays(B, -0.5));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatSeqAIJGetArray on the blocks", family));
  PetscCall(Fresh(A, B, what));
  PetscCall(MatZeroEntries(A));
  PetscCall(MatZeroEntries(B));
  PetscCall(TestCheckZeroMult(B, "MatZeroEntries"));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatZeroEntries", family));
  PetscCall(Fresh(A, B, what));
  PetscCall(SetExisting(A, 1.0, INSERT_VALUES));
  PetscCall(SetExisting(B, 1.0, INSERT_VALUES));
  PetscCall(Assemble(A, MAT_FINAL_ASSEMBLY));
  PetscCall(Assemble(B, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s refilled after MatZeroEntries", family));
  PetscCall(FreshAfterAssembly(A, B, what));

  /* MatRetrieveValues() copies the stored values back (SeqAIJ leaves the object state) */
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
  PetscCall(MatStoreValues(A));
  PetscCall(MatStoreValues(B));
  PetscCall(MatScale(A, 3.0));
  PetscCall(MatScale(B, 3.0));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatScale after MatStoreValues", family));
  PetscCall(Fresh(A, B, what));
  PetscCall(MatRetrieveValues(A));
  PetscCall(MatRetrieveValues(B));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatRetrieveValues", family));
  PetscCall(Fresh(A, B, what));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_LOCATIONS, PETSC_TRUE));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_LOCATIONS, PETSC_TRUE));

  /* a new pattern: rebuilt at the assembly (on the last rank at least) */
  {
    PetscInt    b0, v0, b1, v1;
    PetscMPIInt rank, size;
    PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCall(SetNewNonzeros(A, 1.25));
    PetscCall(Assemble(A, MAT_FINAL_ASSEMBLY));
    PetscCall(Syncs(&b0, &v0));
    PetscCall(SetNewNonzeros(B, 1.25));
    PetscCall(Assemble(B, MAT_FINAL_ASSEMBLY));
    PetscCall(Syncs(&b1, &v1));
    PetscCheck(rank != size - 1 || b1 > b0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: new nonzeros, no layout rebuilt at the assembly", family);
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s new nonzeros", family));
    PetscCall(FreshAfterAssembly(A, B, what));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: fresh after every change\n", family));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* TRY(call, &ierr, msg): spmv_test_util.h */

/* The matrix keeps its options (exact, holding 1e6) against -mat_packsell_value_format fp16 in
   the options database when new off-diagonal columns make MPIAIJ recreate the off-diagonal blocks
   (on the last rank in MatSetValues(), on the others inside its assembly). */
static PetscErrorCode NewColumnsKeepOptions(PetscInt n, const char *family)
{
  Mat         A, B;
  const char *vf;

  PetscFunctionBegin;
  PetscCall(Generate(n, &A));
  PetscCall(MatScale(A, 1e6));
  PetscCall(MatConvert(A, family, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_packsell_value_format", "fp16"));
  PetscCall(SetNewNonzeros(A, 2e6));
  PetscCall(SetNewNonzeros(B, 2e6));
  PetscCall(Assemble(A, MAT_FINAL_ASSEMBLY));
  PetscCall(Assemble(B, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_packsell_value_format"));
  PetscCall(MatPackSELLGetValueFormat(B, &vf));
  PetscCheck(!strcmp(vf, "exact"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "value format %s after new columns, expected exact", vf);
  PetscCall(FreshAfterAssembly(A, B, "new off-diagonal columns against the options database"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: new columns keep the matrix's options\n", family));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* fp16 PackSELL; the last rank gives 1e6 (beyond fp16) at global (bi, bj) through MatSetValues(),
   an existing entry or (newcol) a new off-diagonal column: MatAssemblyEnd() fails on every rank,
   the owner naming the entry, the others pointing at another rank. Leaves PETSc's MatAssemblyEnd()
   after an error (run last). */
static PetscErrorCode RangeErrorAtAssembly(PetscInt n, const char *family, PetscBool newcol)
{
  Mat            A, B;
  PetscErrorCode ierr;
  char           msg[1024], expect[64];
  PetscMPIInt    rank, size;
  PetscInt       rs, re, bi, bj;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(Generate(n, &A));
  PetscCall(MatConvert(A, family, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatPackSELLSetValueFormat(B, "fp16"));
  PetscCall(MatGetOwnershipRange(B, &rs, &re));
  bi = n - 1;
  bj = newcol ? 3 : (bi + n / 2) % n;
  if (rank == size - 1) PetscCall(MatSetValue(B, bi, bj, 1e6, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  TRY(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY), &ierr, msg);
  PetscCheck(ierr == PETSC_ERR_ARG_OUTOFRANGE, PETSC_COMM_SELF, PETSC_ERR_PLIB, "1e6 in fp16 at (%" PetscInt_FMT ", %" PetscInt_FMT ")%s: MatAssemblyEnd error %d, expected %d (%s)", bi, bj, newcol ? " in a new column" : "", (int)ierr, (int)PETSC_ERR_ARG_OUTOFRANGE, msg);
  PetscCall(PetscSNPrintf(expect, sizeof(expect), "row %" PetscInt_FMT ", column %" PetscInt_FMT ":", bi, bj));
  if (bi >= rs && bi < re) PetscCheck(strstr(msg, expect) && strstr(msg, "overflows"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "the owning rank's message does not name %s: %s", expect, msg);
  else PetscCheck(strstr(msg, "another rank"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "a rank without the entry should point to another rank: %s", msg);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: range error at MatAssemblyEnd%s on every rank: ok\n", family, newcol ? " (new column)" : ""));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char       *types[MAXTYPES];
  const char *packsell = NULL;
  PetscInt    ntypes   = MAXTYPES, n;
  PetscMPIInt size;
  PetscBool   flg;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscSpMVInitializePackage());
  PetscCall(PetscLogDefaultBegin());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  n = 40 * size;
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", types, &ntypes, &flg));
  PetscCheck(flg && ntypes > 0, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "give the families with -types rgcsr,packsell,...");
  for (PetscInt t = 0; t < ntypes; t++) {
    PetscCall(RunFamily(n, types[t]));
    if (!packsell && strstr(types[t], "packsell")) packsell = types[t];
  }
  if (packsell) {
    PetscCall(NewColumnsKeepOptions(n, packsell));
    PetscCall(RangeErrorAtAssembly(n, packsell, PETSC_FALSE));
    PetscCall(RangeErrorAtAssembly(n, packsell, PETSC_TRUE));
  }
  for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS\n"));
  PetscCall(PetscFinalize());
  return 0;
}
