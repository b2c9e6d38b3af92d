/* spmv_matops, structure: the operations that make a matrix from ours (conversions, transposes,
   submatrices, duplicates) or change its pattern (filters); a new matrix is ours with the
   source's options, or AIJ, and equals AIJ's result. */
#include "matops_util.h"

static PetscErrorCode OpMatConvert(Ctx *c)
{
  Mat         A, B, C, D, E;
  const char *other = c->packsell ? (strstr(c->family, "cuda") ? "rgcsrcuda" : "rgcsr") : (strstr(c->family, "cuda") ? "packsellcuda" : "packsell");

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  /* ours -> AIJ: initial, reuse after a value change, in place */
  PetscCall(MatConvert(B, MATAIJ, MAT_INITIAL_MATRIX, &C));
  PetscCall(CheckResult(c, C, "aij", PETSC_FALSE));
  PetscCall(CmpMat(c, C, A, 0, "to aij"));
  PetscCall(MatScale(A, 2.0));
  PetscCall(MatScale(B, 2.0));
  PetscCall(MatConvert(B, MATAIJ, MAT_REUSE_MATRIX, &C));
  PetscCall(CmpMat(c, C, A, 0, "to aij, MAT_REUSE_MATRIX"));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &C));
  PetscCall(MatConvert(C, MATAIJ, MAT_INPLACE_MATRIX, &C));
  PetscCall(CmpMat(c, C, A, 0, "to aij, MAT_INPLACE_MATRIX"));
  PetscCall(CheckResult(c, C, "aij in place", PETSC_FALSE));
  /* ours -> dense and back */
  PetscCall(MatConvert(B, MATDENSE, MAT_INITIAL_MATRIX, &D));
  PetscCall(CmpMat(c, D, A, 0, "to dense"));
  PetscCall(MatScale(A, 0.5));
  PetscCall(MatScale(B, 0.5));
  PetscCall(MatConvert(B, MATDENSE, MAT_REUSE_MATRIX, &D));
  PetscCall(CmpMat(c, D, A, 0, "to dense, MAT_REUSE_MATRIX"));
  PetscCall(MatConvert(D, c->family, MAT_INITIAL_MATRIX, &E));
  PetscCall(CmpMat(c, E, A, 0, "dense to ours"));
  CMP(c, TestCompareMult(A, E, "dense to ours"));
  PetscCall(MatDestroy(&E));
  PetscCall(MatDestroy(&D));
  /* AIJ -> ours: reuse (the target's layout must follow), in place */
  PetscCall(MatScale(C, -1.0));
  PetscCall(MatConvert(C, c->family, MAT_REUSE_MATRIX, &B));
  PetscCall(Post(c, C, B, "AIJ to ours, MAT_REUSE_MATRIX"));
  PetscCall(CheckStillOurs(c, B, "AIJ to ours, MAT_REUSE_MATRIX"));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDuplicate(C, MAT_COPY_VALUES, &A)); /* the AIJ reference from here on */
  PetscCall(MatConvert(C, c->family, MAT_INPLACE_MATRIX, &C));
  PetscCall(ApplyOpts(c, C));
  PetscCall(Post(c, A, C, "AIJ to ours, MAT_INPLACE_MATRIX"));
  /* ours -> ours (same family: options kept), ours -> the other family */
  PetscCall(MatConvert(B, c->family, MAT_INITIAL_MATRIX, &D));
  PetscCall(CheckResult(c, D, "same family", PETSC_FALSE));
  PetscCall(Post(c, A, D, "to the same family"));
  PetscCall(MatDestroy(&D));
  PetscCall(MatConvert(B, other, MAT_INITIAL_MATRIX, &D));
  PetscCall(Post(c, A, D, "to the other family"));
  PetscCall(MatScale(B, 3.0));
  PetscCall(MatScale(A, 3.0));
  PetscCall(MatConvert(B, other, MAT_REUSE_MATRIX, &D));
  PetscCall(Post(c, A, D, "to the other family, MAT_REUSE_MATRIX"));
  PetscCall(MatDestroy(&D));
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscCall(MatDestroy(&C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Transpose(Ctx *c, PetscBool inplace)
{
  Kind kinds[] = {KN, KR};
  Mat  A, B, At, Bt;

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    PetscCall(Pair(c, kinds[k], &A, &B));
    if (!inplace) {
      PetscCall(MatTranspose(A, MAT_INITIAL_MATRIX, &At));
      PetscCall(MatTranspose(B, MAT_INITIAL_MATRIX, &Bt));
      PetscCall(CheckResult(c, Bt, "initial", PETSC_FALSE));
      PetscCall(Post(c, At, Bt, "MAT_INITIAL_MATRIX"));
      /* reuse after a value change: the result's layout must follow */
      PetscCall(MatScale(A, -3.0));
      PetscCall(MatScale(B, -3.0));
      PetscCall(MatTranspose(A, MAT_REUSE_MATRIX, &At));
      PetscCall(MatTranspose(B, MAT_REUSE_MATRIX, &Bt));
      PetscCall(Post(c, At, Bt, "MAT_REUSE_MATRIX"));
      PetscCall(CheckResult(c, Bt, "reuse", PETSC_FALSE));
      PetscCall(Destroy4(&At, &Bt, NULL, NULL));
    } else {
      PetscCall(MatTranspose(A, MAT_INPLACE_MATRIX, &A));
      PetscCall(MatTranspose(B, MAT_INPLACE_MATRIX, &B));
      PetscCall(CheckResult(c, B, "in place", PETSC_FALSE));
      PetscCall(Post(c, A, B, "MAT_INPLACE_MATRIX"));
    }
    PetscCall(Destroy4(&A, &B, NULL, NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
static PetscErrorCode OpMatTranspose(Ctx *c)
{
  return Transpose(c, PETSC_FALSE);
}
static PetscErrorCode OpMatTransposeInplace(Ctx *c)
{
  return Transpose(c, PETSC_TRUE);
}

static PetscErrorCode SubIS(Ctx *c, Mat A, IS *rows, IS *cols)
{
  PetscInt rs, re, n, N, *idx, k = 0;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(MatGetSize(A, NULL, &N));
  PetscCall(ISCreateStride(c->comm, (re - rs + 1) / 2, rs, 2, rows));
  /* columns: every third global column in this rank's share of columns, plus the long row's area */
  {
    PetscInt cs, ce;
    PetscCall(MatGetOwnershipRangeColumn(A, &cs, &ce));
    n = ce - cs;
    PetscCall(PetscMalloc1(n, &idx));
    for (PetscInt j = cs; j < ce; j++)
      if (j % 3 != 1) idx[k++] = j;
    PetscCall(ISCreateGeneral(c->comm, k, idx, PETSC_OWN_POINTER, cols));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatCreateSubMatrix(Ctx *c)
{
  Mat A, B, Sa, Sb;
  IS  r, q;

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  PetscCall(SubIS(c, A, &r, &q));
  PetscCall(MatCreateSubMatrix(A, r, q, MAT_INITIAL_MATRIX, &Sa));
  PetscCall(MatCreateSubMatrix(B, r, q, MAT_INITIAL_MATRIX, &Sb));
  PetscCall(CheckResult(c, Sb, "submatrix", PETSC_FALSE));
  PetscCall(Post(c, Sa, Sb, "MAT_INITIAL_MATRIX"));
  PetscCall(MatScale(A, 1.75));
  PetscCall(MatScale(B, 1.75));
  PetscCall(MatCreateSubMatrix(A, r, q, MAT_REUSE_MATRIX, &Sa));
  PetscCall(MatCreateSubMatrix(B, r, q, MAT_REUSE_MATRIX, &Sb));
  PetscCall(Post(c, Sa, Sb, "MAT_REUSE_MATRIX"));
  PetscCall(Destroy4(&Sa, &Sb, NULL, NULL));
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscCall(ISDestroy(&r));
  PetscCall(ISDestroy(&q));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatCreateSubMatrices(Ctx *c)
{
  Mat      A, B, *Sa, *Sb;
  IS       r, q;
  PetscInt N, rs, re;

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  PetscCall(MatGetSize(A, &N, NULL));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  /* rows: a window that crosses into the next rank; all columns of every other index */
  PetscCall(ISCreateStride(PETSC_COMM_SELF, PetscMin(N - rs, re - rs + 5) / 2, rs, 2, &r));
  PetscCall(ISCreateStride(PETSC_COMM_SELF, N / 2, 0, 2, &q));
  PetscCall(MatCreateSubMatrices(A, 1, &r, &q, MAT_INITIAL_MATRIX, &Sa));
  PetscCall(MatCreateSubMatrices(B, 1, &r, &q, MAT_INITIAL_MATRIX, &Sb));
  PetscCall(CheckResult(c, Sb[0], "submatrix", PETSC_FALSE));
  {
    /* local comparison (seq matrices) */
    Mat       D;
    PetscReal nd, na;
    int       ok;
    PetscCall(MatConvert(Sb[0], MATSEQAIJ, MAT_INITIAL_MATRIX, &D));
    PetscCall(MatAXPY(D, -1.0, Sa[0], DIFFERENT_NONZERO_PATTERN));
    PetscCall(MatNorm(D, NORM_FROBENIUS, &nd));
    PetscCall(MatNorm(Sa[0], NORM_FROBENIUS, &na));
    PetscCall(MatDestroy(&D));
    ok = nd <= 1e-14 * na;
    CHK(c, ok, "submatrix differs from AIJ's: %g", (double)nd);
  }
  {
    Vec xa, xb, ya, yb;
    PetscCall(RVec(Sa[0], Sb[0], PETSC_TRUE, 91, &xa, &xb));
    PetscCall(MatCreateVecs(Sa[0], NULL, &ya));
    PetscCall(MatCreateVecs(Sb[0], NULL, &yb));
    PetscCall(MatScale(A, 1.5));
    PetscCall(MatScale(B, 1.5));
    PetscCall(MatCreateSubMatrices(A, 1, &r, &q, MAT_REUSE_MATRIX, &Sa));
    PetscCall(MatCreateSubMatrices(B, 1, &r, &q, MAT_REUSE_MATRIX, &Sb));
    PetscCall(MatMult(Sa[0], xa, ya));
    PetscCall(VecSet(yb, NAN));
    PetscCall(MatMult(Sb[0], xb, yb));
    {
      /* seq vectors: compare locally, agree collectively */
      Vec       d;
      PetscReal e, nr;
      PetscCall(VecDuplicate(ya, &d));
      PetscCall(TestCopyValues(yb, d));
      PetscCall(VecAXPY(d, -1.0, ya));
      PetscCall(VecNorm(d, NORM_INFINITY, &e));
      PetscCall(VecNorm(ya, NORM_INFINITY, &nr));
      PetscCall(VecDestroy(&d));
      CHK(c, e <= c->tol_shadow * nr, "MatMult of the MAT_REUSE_MATRIX submatrix: error %g of %g (stale layout?)", (double)e, (double)nr);
    }
    PetscCall(Destroy4(NULL, NULL, &xa, &xb));
    PetscCall(Destroy4(NULL, NULL, &ya, &yb));
  }
  PetscCall(MatDestroySubMatrices(1, &Sa));
  PetscCall(MatDestroySubMatrices(1, &Sb));
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscCall(ISDestroy(&r));
  PetscCall(ISDestroy(&q));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatDuplicate(Ctx *c)
{
  MatDuplicateOption ops[]   = {MAT_DO_NOT_COPY_VALUES, MAT_COPY_VALUES, MAT_SHARE_NONZERO_PATTERN};
  const char        *names[] = {"MAT_DO_NOT_COPY_VALUES", "MAT_COPY_VALUES", "MAT_SHARE_NONZERO_PATTERN"};
  Mat                A, B, D;

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  for (int k = 0; k < 3; k++) {
    PetscCall(MatDuplicate(B, ops[k], &D));
    PetscCall(CheckResult(c, D, names[k], PETSC_FALSE));
    if (ops[k] != MAT_COPY_VALUES) {
      CMP(c, TestCheckZeroMult(D, names[k]));
      PetscCall(MatCopy(B, D, SAME_NONZERO_PATTERN));
    }
    PetscCall(Post(c, A, D, names[k]));
    /* the duplicate is independent of the source */
    PetscCall(MatScale(D, 7.0));
    PetscCall(Post(c, A, B, "source after a change of its duplicate"));
    PetscCall(MatDestroy(&D));
  }
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatFilter(Ctx *c)
{
  Mat A, B;

  PetscFunctionBegin;
  for (int k = 0; k < 3; k++) {
    PetscCall(Pair(c, KN, &A, &B));
    if (k < 2) {
      /* chop below 0.035 (the long row's 0.01..0.03), with and without compression */
      PetscCall(MatFilter(A, 0.035, k ? PETSC_TRUE : PETSC_FALSE, PETSC_FALSE));
      PetscCall(MatFilter(B, 0.035, k ? PETSC_TRUE : PETSC_FALSE, PETSC_FALSE));
      PetscCall(Post(c, A, B, k ? "MatFilter compress" : "MatFilter"));
    } else {
      /* drop the explicit zeros of the long row */
      PetscCall(MatEliminateZeros(A, PETSC_TRUE));
      PetscCall(MatEliminateZeros(B, PETSC_TRUE));
      PetscCall(Post(c, A, B, "MatEliminateZeros"));
    }
    PetscCall(CheckStillOurs(c, B, "filtered"));
    PetscCall(Destroy4(&A, &B, NULL, NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

const Op kOpsStructure[] = {
  {"MatConvert", OpMatConvert},
  {"MatTranspose", OpMatTranspose},
  {"MatTransposeInplace", OpMatTransposeInplace},
  {"MatCreateSubMatrix", OpMatCreateSubMatrix},
  {"MatCreateSubMatrices", OpMatCreateSubMatrices},
  {"MatDuplicate", OpMatDuplicate},
  {"MatFilter", OpMatFilter},
  {NULL, NULL},
};
