static const char help[] = "Contracts of the petscspmv types that the other tests do not reach, at 1-3 ranks:\n\
value range errors named by global row and column, values out of range through MatScale,\n\
MatDiagonalScale and MatConvert(MAT_REUSE_MATRIX) refused with every later product on every rank,\n\
MatShift and MatDiagonalSet out of range refused with the matrix left as it was,\n\
the PackSELL scale exponent over the blocks,\n\
format setters given different values on different ranks (an error, not a hang), results of PETSc\n\
operations that keep the source's options against a conflicting options database, and failed\n\
conversions that leave the input intact and free what they made (run with -malloc_dump), and a\n\
matrix filled through MatSetUp() + MatSetValues() (the hash assembly) multiplying with our product on every rank.\n\
  -cuda   test rgcsrcuda and packsellcuda instead of rgcsr and packsell\n\
  -no_gpu only: the CUDA types on a machine without a GPU refused in our words (with a GPU: they work)\n";

#include "spmv_test_util.h"
#include <petsc/private/matimpl.h> /* assembled, insertmode: the state a refused operation must not leave behind */

#include <string.h>

/* The families under test: the host ones, or the CUDA ones with -cuda. */
static const char *PackSELL = MATPACKSELL, *RgCSR = MATRGCSR;

/* Tridiagonal n x n AIJ matrix (diagonal d, off-diagonals o) with v at (bi, bj) when v != 0. */
static PetscErrorCode Build(PetscInt n, PetscScalar d, PetscScalar o, PetscInt bi, PetscInt bj, PetscScalar v, Mat *A)
{
  PetscInt rs, re;

  PetscFunctionBegin;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n, n, 4, NULL, 3, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    for (PetscInt j = PetscMax(0, i - 1); j <= PetscMin(n - 1, i + 1); j++) PetscCall(MatSetValue(*A, i, j, i == j ? d : o, INSERT_VALUES));
    if (v != 0.0 && i == bi) PetscCall(MatSetValue(*A, bi, bj, v, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A value that overflows fp16 at global (bi, bj): the rank owning row bi names exactly that entry,
   every other rank says another rank failed; the matrix keeps its previous format and values. */
static PetscErrorCode RangeErrorNamesGlobalEntry(PetscInt n, PetscInt bi, PetscInt bj)
{
  Mat            A, B;
  PetscErrorCode ierr;
  char           msg[1024], expect[64];
  PetscInt       rs, re;
  const char    *vf;

  PetscFunctionBegin;
  PetscCall(Build(n, 4.0, -1.0, bi, bj, 1e6, &A));
  PetscCall(MatConvert(A, PackSELL, MAT_INITIAL_MATRIX, &B)); /* exact: holds 1e6 */
  TRY(MatPackSELLSetValueFormat(B, "fp16"), &ierr, msg);
  PetscCheck(ierr == PETSC_ERR_ARG_OUTOFRANGE, PETSC_COMM_SELF, PETSC_ERR_PLIB, "fp16 with 1e6 at (%" PetscInt_FMT ", %" PetscInt_FMT "): error %d, expected %d (%s)", bi, bj, (int)ierr, (int)PETSC_ERR_ARG_OUTOFRANGE, msg);
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(PetscSNPrintf(expect, sizeof(expect), "row %" PetscInt_FMT ", column %" PetscInt_FMT ":", bi, bj));
  if (bi >= rs && bi < re) PetscCheck(strstr(msg, expect) && strstr(msg, "overflows"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "the owning rank's message does not name %s: %s", expect, msg);
  else PetscCheck(strstr(msg, "another rank"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "a rank without the entry should point to another rank: %s", msg);
  PetscCall(MatPackSELLGetValueFormat(B, &vf));
  PetscCheck(!strcmp(vf, "exact"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "value format %s after a failed change, expected exact", vf);
  PetscCall(TestCompareProducts(A, B, "after a failed value format change"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "range error at (%" PetscInt_FMT ", %" PetscInt_FMT "): ok\n", bi, bj));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* call must fail with PETSC_ERR_ARG_OUTOFRANGE on every rank (what: the call, for the message). */
static PetscErrorCode ExpectOutOfRange(PetscErrorCode ierr, const char *msg, const char *what)
{
  PetscFunctionBegin;
  PetscCheck(ierr == PETSC_ERR_ARG_OUTOFRANGE, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: error %d, expected PETSC_ERR_ARG_OUTOFRANGE on every rank (%s)", what, (int)ierr, msg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A MatShift() or MatDiagonalSet() whose values the lossy format refuses leaves the matrix as it
   was: assembled, its products AIJ's, open to MatSetValues() and to the same operation with a
   value that fits. Also on a matrix with a missing diagonal entry (PETSc's shift then sets values
   and assembles: a refusal inside that assembly left the matrix unassembled in ADD_VALUES mode). */
static PetscErrorCode DiagonalChangesRefusedKeepMatrix(PetscInt n)
{
  Mat            A, B;
  Vec            d;
  PetscErrorCode ierr;
  char           msg[1024], what[160];
  PetscInt       rs, re;

  PetscFunctionBegin;
  for (int missing = 0; missing < 2; missing++) {
    PetscCall(Build(n, 4.0, -1.0, n - 1, 0, 2.0, &A));
    if (missing) { /* no diagonal entry in row 1 (an explicit zero is an entry: the pattern is rebuilt) */
      Mat      T;
      PetscInt nz, *rows;
      PetscCall(MatGetOwnershipRange(A, &rs, &re));
      nz = (1 >= rs && 1 < re) ? 1 : 0;
      PetscCall(PetscMalloc1(nz, &rows));
      if (nz) rows[0] = 1;
      PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, re - rs, re - rs, n, n, 4, NULL, 3, NULL, &T));
      for (PetscInt i = rs; i < re; i++) {
        PetscInt           ncols;
        const PetscInt    *cols;
        const PetscScalar *vals;
        PetscCall(MatGetRow(A, i, &ncols, &cols, &vals));
        for (PetscInt k = 0; k < ncols; k++)
          if (!(i == 1 && cols[k] == 1)) PetscCall(MatSetValue(T, i, cols[k], vals[k], INSERT_VALUES));
        PetscCall(MatRestoreRow(A, i, &ncols, &cols, &vals));
      }
      PetscCall(MatAssemblyBegin(T, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(T, MAT_FINAL_ASSEMBLY));
      PetscCall(MatDestroy(&A));
      A = T;
      PetscCall(PetscFree(rows));
    }
    PetscCall(MatConvert(A, PackSELL, MAT_INITIAL_MATRIX, &B));
    PetscCall(MatPackSELLSetValueFormat(B, "fp16"));
    PetscCall(MatCreateVecs(B, NULL, &d));
    for (int way = 0; way < 2; way++) {
      const char *op = way == 0 ? "MatShift" : "MatDiagonalSet(ADD_VALUES)";
      if (way == 0) TRY(MatShift(B, 1e300), &ierr, msg);
      else {
        PetscCall(VecSet(d, 1e6));
        TRY(MatDiagonalSet(B, d, ADD_VALUES), &ierr, msg);
      }
      PetscCall(PetscSNPrintf(what, sizeof(what), "%s out of fp16's range%s", op, missing ? ", a diagonal entry missing" : ""));
      PetscCall(ExpectOutOfRange(ierr, msg, what));
      PetscCheck(B->assembled && B->insertmode == NOT_SET_VALUES, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: left unassembled or in a values mode", what);
      PetscCall(PetscStrlcat(what, ": the matrix as it was", sizeof(what)));
      PetscCall(TestCompareProducts(A, B, what));
    }
    /* the same operations with values that fit, and values set afterwards */
    PetscCall(MatShift(B, 1.0));
    PetscCall(MatShift(A, 1.0));
    PetscCall(VecSet(d, 0.5));
    PetscCall(MatDiagonalSet(B, d, ADD_VALUES));
    PetscCall(MatDiagonalSet(A, d, ADD_VALUES));
    PetscCall(MatGetOwnershipRange(A, &rs, &re));
    if (rs < re) {
      PetscCall(MatSetValue(A, rs, rs, 3.0, INSERT_VALUES));
      PetscCall(MatSetValue(B, rs, rs, 3.0, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
    PetscCall(TestCompareProducts(A, B, missing ? "shifted, diagonal set and assembled after the refusals (a diagonal entry missing)" : "shifted, diagonal set and assembled after the refusals"));
    PetscCall(VecDestroy(&d));
    PetscCall(MatDestroy(&B));
    PetscCall(MatDestroy(&A));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatShift and MatDiagonalSet out of range: refused, the matrix as it was and usable: ok\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A value that leaves fp16's range through an operation that changes values in place (MatScale,
   MatDiagonalScale; 1e3 at (n - 1, 0), the last rank's, times 100) or through MatConvert() with
   MAT_REUSE_MATRIX from an AIJ matrix holding 1e5 there is refused by that operation on every
   rank; every product and MatGetDiagonal() are then refused on every rank too (no rank waits in
   the halo exchange of the others, no product with a stale layout) until an operation repairs the
   value, after which the products equal AIJ's. */
static PetscErrorCode ValueChangesRefusedEverywhere(PetscInt n)
{
  Mat            A, B, Abig;
  Vec            x, y, l;
  PetscErrorCode ierr;
  char           msg[1024];
  PetscInt       rs, re;

  PetscFunctionBegin;
  PetscCall(Build(n, 4.0, -1.0, n - 1, 0, 1e3, &A));
  PetscCall(Build(n, 4.0, -1.0, n - 1, 0, 1e5, &Abig));
  PetscCall(MatConvert(A, PackSELL, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatPackSELLSetValueFormat(B, "fp16"));
  PetscCall(MatCreateVecs(B, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatCreateVecs(B, NULL, &l));
  PetscCall(MatGetOwnershipRange(B, &rs, &re));
  for (int way = 0; way < 3; way++) {
    const char *op = way == 0 ? "MatScale" : way == 1 ? "MatDiagonalScale" : "MatConvert(MAT_REUSE_MATRIX)";
    char        what[128];

    if (way == 0) TRY(MatScale(B, 100.0), &ierr, msg);
    else if (way == 1) {
      PetscCall(VecSet(l, 1.0));
      if (n - 1 >= rs && n - 1 < re) PetscCall(VecSetValue(l, n - 1, 100.0, INSERT_VALUES));
      PetscCall(VecAssemblyBegin(l));
      PetscCall(VecAssemblyEnd(l));
      TRY(MatDiagonalScale(B, l, NULL), &ierr, msg);
    } else TRY(MatConvert(Abig, PackSELL, MAT_REUSE_MATRIX, &B), &ierr, msg);
    PetscCall(ExpectOutOfRange(ierr, msg, op));
    for (int k = 0; k < 2; k++) {
      PetscCall(PetscSNPrintf(what, sizeof(what), "MatMult after a refused %s (%d)", op, k));
      TRY(MatMult(B, x, y), &ierr, msg);
      PetscCall(ExpectOutOfRange(ierr, msg, what));
      PetscCall(PetscSNPrintf(what, sizeof(what), "MatMultAdd after a refused %s (%d)", op, k));
      TRY(MatMultAdd(B, x, y, y), &ierr, msg);
      PetscCall(ExpectOutOfRange(ierr, msg, what));
      PetscCall(PetscSNPrintf(what, sizeof(what), "MatGetDiagonal after a refused %s (%d)", op, k));
      TRY(MatGetDiagonal(B, y), &ierr, msg);
      PetscCall(ExpectOutOfRange(ierr, msg, what));
    }
    /* a MatShift() of the refused values is refused as well, its diagonal put back (it put
       the refused diagonal back by a MatDiagonalSet() that refused and put back in turn, until
       the stack overflowed) */
    PetscCall(PetscSNPrintf(what, sizeof(what), "MatShift after a refused %s", op));
    TRY(MatShift(B, 1.0), &ierr, msg);
    PetscCall(ExpectOutOfRange(ierr, msg, what));
    /* repaired by the inverse operation (1e5 / 100 = 1e3 exactly, the others as before) or by a
       conversion from A */
    if (way == 0) PetscCall(MatScale(B, 0.01));
    else if (way == 1) {
      PetscCall(VecReciprocal(l));
      PetscCall(MatDiagonalScale(B, l, NULL));
    } else PetscCall(MatConvert(A, PackSELL, MAT_REUSE_MATRIX, &B));
    PetscCall(PetscSNPrintf(what, sizeof(what), "repaired after a refused %s", op));
    PetscCall(TestCompareProducts(A, B, what));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "values out of range through MatScale, MatDiagonalScale and MatConvert(MAT_REUSE_MATRIX) (one rank): refused, the products refused on every rank until repaired: ok\n"));
  PetscCall(VecDestroy(&l));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&x));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&Abig));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Diagonal 2e-3, off-diagonals -1e-3, fp16 + scaling auto: each block scales its largest
   magnitude into fp16's top binade, 2^24 for the diagonal blocks (2e-3), 2^25 for the
   off-diagonal ones (1e-3). */
static PetscErrorCode ScaleExponent(void)
{
  Mat          A, B;
  MatSpMVStats st;
  PetscMPIInt  size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(Build(90, 2e-3, -1e-3, 0, 0, 0.0, &A));
  PetscCall(MatConvert(A, PackSELL, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatPackSELLSetValueFormat(B, "fp16"));
  PetscCall(MatPackSELLSetScaling(B, "auto"));
  PetscCall(MatSpMVGetStats(B, &st));
  PetscCheck(st.scale_exponent == 24, PETSC_COMM_SELF, PETSC_ERR_PLIB, "scale exponent %" PetscInt_FMT ", expected 24", st.scale_exponent);
  PetscCheck(st.scale_exponent_max == (size > 1 ? 25 : 24), PETSC_COMM_SELF, PETSC_ERR_PLIB, "largest scale exponent %" PetscInt_FMT ", expected %d", st.scale_exponent_max, size > 1 ? 25 : 24);
  PetscCall(TestCompareProducts(A, B, "fp16 scaled"));
  PetscCall(MatViewFromOptions(B, NULL, "-view_scaled"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "scale exponent: ok\n"));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Setters are logically collective: different values on different ranks are an error on every
   rank (not a hang), and the matrix stays as it was. */
static PetscErrorCode RankDependentSetter(void)
{
  Mat            A, B;
  PetscMPIInt    rank, size;
  PetscErrorCode ierr;
  char           msg[1024];
  const char    *vf;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (size == 1) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(Build(50, 4.0, -1.0, 0, 0, 0.0, &A));
  PetscCall(MatConvert(A, PackSELL, MAT_INITIAL_MATRIX, &B));
  TRY(MatPackSELLSetValueFormat(B, rank == 0 ? "e8m14" : "exact"), &ierr, msg);
  PetscCheck(ierr == PETSC_ERR_ARG_WRONG && strstr(msg, "different"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "rank-dependent value format: error %d (%s)", (int)ierr, msg);
  PetscCall(MatPackSELLGetValueFormat(B, &vf));
  PetscCheck(!strcmp(vf, "exact"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "value format %s after the refused setter", vf);
  /* a value refused on the last rank only: every rank gets an error (it hung in the collective
     check of the others before) */
  TRY(MatPackSELLSetValueFormat(B, rank == size - 1 ? "fp8" : "e8m14"), &ierr, msg);
  PetscCheck(ierr != 0 && (rank == size - 1 ? strstr(msg, "fp8") != NULL : strstr(msg, "another rank") != NULL), PETSC_COMM_SELF, PETSC_ERR_PLIB, "value format refused on one rank: error %d (%s)", (int)ierr, msg);
  TRY(MatPackSELLSetSliceHeight(B, rank == 0 ? 48 : 32), &ierr, msg);
  PetscCheck(ierr != 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "slice height refused on rank 0 only: no error on this rank");
  PetscCall(MatPackSELLGetValueFormat(B, &vf));
  PetscCheck(!strcmp(vf, "exact"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "value format %s after the refused setters", vf);
  TRY(MatRgCSRSetGroupSize(B, 64), &ierr, msg); /* ignored for another format, on every rank */
  PetscCheck(!ierr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "setter of another format: %s", msg);
  PetscCall(TestCompareProducts(A, B, "after a refused rank-dependent setter"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "rank-dependent setter: ok\n"));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckExact(Mat X, const char *what)
{
  const char *vf;
  PetscBool   ours;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)X, &ours, MATSEQPACKSELL, MATMPIPACKSELL, MATSEQPACKSELLCUDA, MATMPIPACKSELLCUDA, ""));
  if (!ours) PetscFunctionReturn(PETSC_SUCCESS); /* AIJ results are allowed */
  PetscCall(MatPackSELLGetValueFormat(X, &vf));
  PetscCheck(!strcmp(vf, "exact"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: value format %s, the source's is exact", what, vf);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The options database asks for fp16 while the source matrix was set to exact through the API
   and holds 1e6 (beyond fp16): every result PETSc makes from it keeps exact and succeeds. */
static PetscErrorCode OptionsSurviveOperations(void)
{
  Mat      A, B, C, D, X;
  IS       rows;
  PetscInt rs, re;

  PetscFunctionBegin;
  PetscCall(Build(80, 1e6, -1.0, 0, 0, 0.0, &A));
  PetscCall(MatConvert(A, PackSELL, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatPackSELLSetValueFormat(B, "exact"));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_packsell_value_format", "fp16"));
  PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &C));
  PetscCall(CheckExact(C, "MatDuplicate"));
  PetscCall(TestCompareMult(A, C, "MatDuplicate"));
  PetscCall(MatDestroy(&C));
  PetscCall(MatMatMult(B, B, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C));
  PetscCall(MatMatMult(A, A, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &D));
  PetscCall(CheckExact(C, "MatMatMult"));
  PetscCall(TestCompareMult(D, C, "MatMatMult"));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&D));
  PetscCall(MatTranspose(B, MAT_INITIAL_MATRIX, &C));
  PetscCall(CheckExact(C, "MatTranspose"));
  PetscCall(MatDestroy(&C));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(ISCreateStride(PETSC_COMM_WORLD, re - rs, rs, 1, &rows));
  PetscCall(MatCreateSubMatrix(B, rows, rows, MAT_INITIAL_MATRIX, &C));
  PetscCall(CheckExact(C, "MatCreateSubMatrix"));
  PetscCall(MatDestroy(&C));
  PetscCall(ISDestroy(&rows));
  /* Y = Y + X with a new pattern: Y is replaced by a matrix PETSc makes of Y's type */
  PetscCall(Build(80, 1.0, 0.0, 3, 40, 2.0, &X));
  PetscCall(MatAXPY(B, 1.0, X, DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatAXPY(A, 1.0, X, DIFFERENT_NONZERO_PATTERN));
  PetscCall(CheckExact(B, "MatAXPY"));
  PetscCall(TestCompareProducts(A, B, "MatAXPY"));
  PetscCall(MatConvert(B, PackSELL, MAT_INITIAL_MATRIX, &C));
  PetscCall(CheckExact(C, "MatConvert to its own type"));
  PetscCall(MatDestroy(&C));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_packsell_value_format"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "options kept against the database: ok\n"));
  PetscCall(MatDestroy(&X));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Conversions that fail (1e6 in fp16) leave the input as it was and free what they made. */
static PetscErrorCode FailedConversions(void)
{
  Mat            A, B, C = NULL;
  PetscErrorCode ierr;
  char           msg[1024];
  MatType        type, now;

  PetscFunctionBegin;
  PetscCall(Build(40, 1e6, -1.0, 0, 0, 0.0, &A));
  PetscCall(MatConvert(A, RgCSR, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatGetType(B, &type)); /* held across the operations below (they must not rename B) */
  PetscCall(PetscOptionsSetValue(NULL, "-mat_packsell_value_format", "fp16"));
  TRY(MatConvert(A, PackSELL, MAT_INITIAL_MATRIX, &C), &ierr, msg);
  PetscCheck(ierr == PETSC_ERR_ARG_OUTOFRANGE, PETSC_COMM_SELF, PETSC_ERR_PLIB, "AIJ -> fp16: error %d (%s)", (int)ierr, msg);
  TRY(MatConvert(B, PackSELL, MAT_INITIAL_MATRIX, &C), &ierr, msg);
  PetscCheck(ierr == PETSC_ERR_ARG_OUTOFRANGE, PETSC_COMM_SELF, PETSC_ERR_PLIB, "RgCSR -> fp16: error %d (%s)", (int)ierr, msg);
  TRY(MatConvert(B, PackSELL, MAT_INPLACE_MATRIX, &B), &ierr, msg);
  PetscCheck(ierr == PETSC_ERR_ARG_OUTOFRANGE, PETSC_COMM_SELF, PETSC_ERR_PLIB, "RgCSR -> fp16 in place: error %d (%s)", (int)ierr, msg);
  PetscCall(PetscOptionsClearValue(NULL, "-mat_packsell_value_format"));
  PetscCall(TestCheckType(B, RgCSR));
  PetscCall(MatViewFromOptions(B, NULL, "-view_failed"));
  PetscCall(MatGetType(B, &now));
  PetscCheck(now == type, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the type name string of B was replaced (a pointer from MatGetType() would dangle)");
  PetscCall(TestCompareProducts(A, B, "RgCSR after failed conversions"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "failed conversions: ok\n"));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(PETSC_HAVE_CUDA)
/* The CUDA families from AIJ on a machine without an NVIDIA GPU: MatConvert() (new and in place)
   and MatSetType() refuse with PETSC_ERR_SUP_SYS saying that they need a GPU, and the AIJ matrix is
   left as it was. On a machine with a GPU the conversion must work (products equal AIJ's). Not
   under -malloc_dump: PETSc's MatConvert() looks for a converter on a new matrix of the target
   type, and leaks that matrix when MatSetType() fails on it (PETSc 3.22-3.25, the same for
   aijcusparse without a GPU). */
static PetscErrorCode CudaTypesNeedAGpu(void)
{
  const char *families[2] = {MATRGCSRCUDA, MATPACKSELLCUDA};
  Mat         A;

  PetscFunctionBegin;
  PetscCall(Build(40, 4.0, -1.0, 0, 0, 0.0, &A));
  for (int f = 0; f < 2; f++) {
    Mat            B = NULL, C, D;
    PetscErrorCode ierr;
    char           msg[1024];
    PetscBool      aij, eq;

    TRY(MatConvert(A, families[f], MAT_INITIAL_MATRIX, &B), &ierr, msg);
    if (!ierr) {
      PetscCall(TestCheckType(B, families[f]));
      PetscCall(TestCompareProducts(A, B, "a CUDA family with a GPU"));
      PetscCall(MatDestroy(&B));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: a GPU is present, the conversion works\n", families[f]));
      continue;
    }
    PetscCheck(ierr == PETSC_ERR_SUP_SYS && strstr(msg, "need an NVIDIA GPU"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s without a GPU: error %d \"%s\", expected PETSC_ERR_SUP_SYS saying that a GPU is needed", families[f], (int)ierr, msg);
    PetscCheck(!B, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s without a GPU: a refused MatConvert returned a matrix", families[f]);
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &C));
    TRY(MatConvert(C, families[f], MAT_INPLACE_MATRIX, &C), &ierr, msg);
    PetscCheck(ierr == PETSC_ERR_SUP_SYS && strstr(msg, "need an NVIDIA GPU"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s in place without a GPU: error %d \"%s\"", families[f], (int)ierr, msg);
    PetscCall(PetscObjectTypeCompareAny((PetscObject)C, &aij, MATSEQAIJ, MATMPIAIJ, ""));
    PetscCall(MatEqual(A, C, &eq));
    PetscCheck(aij && eq, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s in place without a GPU: the AIJ matrix changed", families[f]);
    PetscCall(MatDestroy(&C));
    PetscCall(MatCreate(PETSC_COMM_WORLD, &D));
    PetscCall(MatSetSizes(D, PETSC_DECIDE, PETSC_DECIDE, 40, 40));
    TRY(MatSetType(D, families[f]), &ierr, msg);
    PetscCheck(ierr == PETSC_ERR_SUP_SYS && strstr(msg, "need an NVIDIA GPU"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatSetType(%s) without a GPU: error %d \"%s\"", families[f], (int)ierr, msg);
    PetscCall(MatDestroy(&D));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s without a GPU: MatConvert (new, in place) and MatSetType say a GPU is needed, the AIJ matrix intact\n", families[f]));
  }
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/* A matrix filled through MatSetUp() without preallocation (PETSc's hash assembly) and
   MatSetValues(): every rank's product is ours. A diagonal matrix (no off-diagonal block) in
   e8m14, whose values 1/3 + i/1024 the 14-bit mantissa rounds: A x stays within the format's
   bound of AIJ's and differs from it on every rank with rows; no difference on a rank would mean
   that AIJ's product ran there (PETSc 3.25 put back the base type's operations on the blocks at
   such an assembly). */
static PetscErrorCode HashAssemblyUsesOurProduct(PetscInt n)
{
  Mat                A, B;
  Vec                xa, xb, ya, yb;
  PetscInt           rs, re, m;
  PetscReal          diff = 0, mindiff;
  const PetscScalar *d;

  PetscFunctionBegin;
  PetscCall(MatCreate(PETSC_COMM_WORLD, &B));
  PetscCall(MatSetSizes(B, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(B, PackSELL));
  PetscCall(MatPackSELLSetValueFormat(B, "e8m14"));
  PetscCall(MatSetUp(B));
  PetscCall(MatGetOwnershipRange(B, &rs, &re));
  for (PetscInt i = rs; i < re; i++) PetscCall(MatSetValue(B, i, i, 1.0 / 3.0 + i / 1024.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatConvert(B, MATAIJ, MAT_INITIAL_MATRIX, &A));
  PetscCall(TestCompareMult(A, B, "e8m14 after a hash assembly")); /* within the format's rounding */
  PetscCall(MatCreateVecs(A, &xa, &ya));
  PetscCall(MatCreateVecs(B, &xb, &yb));
  PetscCall(VecSet(xa, 1.0));
  PetscCall(VecSet(xb, 1.0));
  PetscCall(MatMult(A, xa, ya));
  PetscCall(MatMult(B, xb, yb));
  PetscCall(TestCopyValues(yb, xa)); /* (ours may live on the device: compared on the host) */
  PetscCall(VecAXPY(xa, -1.0, ya));
  PetscCall(VecGetLocalSize(xa, &m));
  PetscCall(VecGetArrayRead(xa, &d));
  for (PetscInt i = 0; i < m; i++) diff = PetscMax(diff, PetscAbsScalar(d[i]));
  PetscCall(VecRestoreArrayRead(xa, &d));
  if (!m) diff = PETSC_MAX_REAL; /* a rank without rows has nothing to show */
  PetscCallMPI(MPIU_Allreduce(&diff, &mindiff, 1, MPIU_REAL, MPIU_MIN, PETSC_COMM_WORLD));
  PetscCheck(mindiff > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "e8m14 product after a hash assembly equals AIJ's exactly on a rank: that rank's diagonal block multiplied with AIJ's product, not PackSELL's");
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&xb));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&yb));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscMPIInt size;
  PetscInt    n = 60;
  PetscBool   cuda, nogpu;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscSpMVInitializePackage());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-cuda", &cuda));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-no_gpu", &nogpu));
  if (nogpu) {
#if defined(PETSC_HAVE_CUDA)
    PetscCall(CudaTypesNeedAGpu());
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS\n"));
#else
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_SUP, "-no_gpu: PETSc without CUDA has no CUDA types");
#endif
    PetscCall(PetscFinalize());
    return 0;
  }
  if (cuda) {
    PackSELL = MATPACKSELLCUDA;
    RgCSR    = MATRGCSRCUDA;
  }
  PetscCall(RangeErrorNamesGlobalEntry(n, n - 1, 0));     /* last rank, off-diagonal block */
  PetscCall(RangeErrorNamesGlobalEntry(n, n - 2, n - 1)); /* last rank, diagonal block */
  PetscCall(RangeErrorNamesGlobalEntry(n, 1, n - 1));     /* first rank, off-diagonal block */
  PetscCall(ValueChangesRefusedEverywhere(n));
  PetscCall(DiagonalChangesRefusedKeepMatrix(n));
  PetscCall(ScaleExponent());
  PetscCall(RankDependentSetter());
  PetscCall(OptionsSurviveOperations());
  PetscCall(FailedConversions());
  PetscCall(HashAssemblyUsesOurProduct(n));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS\n"));
  PetscCall(PetscFinalize());
  return 0;
}
