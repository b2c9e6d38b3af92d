/* spmv_matops, values: the operations that change values (zeroing entries and rows, scaling,
   shifts, diagonal set and scale, MatAXPY and MatAYPX, stored values, copies, real part,
   random values); after each, the entries equal AIJ's and the products follow them. */
#include "matops_util.h"

static PetscErrorCode OpMatZeroEntries(Ctx *c)
{
  Mat A, B;

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  PetscCall(MatZeroEntries(A));
  PetscCall(MatZeroEntries(B));
  CMP(c, TestCheckZeroMult(B, "MatZeroEntries"));
  PetscCall(Post(c, A, B, "MatZeroEntries"));
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ZeroRows(Ctx *c, PetscBool columns)
{
  Kind kinds[] = {KN, KS};
  Mat  A, B;

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    Vec      xa, xb, ba, bb;
    PetscInt rs, re, rows[4], nr = 0, n = c->n;
    PetscCall(Pair(c, kinds[k], &A, &B));
    PetscCall(RVec(A, B, PETSC_TRUE, 51, &xa, &xb));
    PetscCall(RVec(A, B, PETSC_FALSE, 52, &ba, &bb));
    PetscCall(MatGetOwnershipRange(A, &rs, &re));
    if (rs < re) rows[nr++] = rs;
    for (PetscInt i = rs + 1; i < re && nr < 4; i++)
      if (i % 37 == 5 && i != n / 4) {
        rows[nr++] = i; /* a missing diagonal entry */
        break;
      }
    if (rs + 7 < re && rs + 7 != n / 4) rows[nr++] = rs + 7;
    /* the empty row last: PETSc 3.22's MatZeroRows_SeqAIJ inserts its diagonal with
       MatSetValues, which may reallocate the arrays, and then writes the rows after it through
       the stale array (valgrind: invalid writes, plain AIJ alike; docs/mat-operations.md) */
    if (rs <= n / 4 && n / 4 < re && n / 4 != rs) rows[nr++] = n / 4;
    if (columns) {
      AIJFIRST(c, MatZeroRowsColumns(A, nr, rows, 3.0, xa, ba), MatZeroRowsColumns(B, nr, rows, 3.0, xb, bb), {
        PetscCall(Destroy4(&A, &B, &xa, &xb));
        PetscCall(Destroy4(NULL, NULL, &ba, &bb));
      });
      PetscCall(MatZeroRowsColumns(B, nr, rows, 3.0, xb, bb));
    } else {
      AIJFIRST(c, MatZeroRows(A, nr, rows, 3.0, xa, ba), MatZeroRows(B, nr, rows, 3.0, xb, bb), {
        PetscCall(Destroy4(&A, &B, &xa, &xb));
        PetscCall(Destroy4(NULL, NULL, &ba, &bb));
      });
      PetscCall(MatZeroRows(B, nr, rows, 3.0, xb, bb));
    }
    PetscCall(CmpVec(c, ba, bb, 1e-14, "right-hand side"));
    PetscCall(Post(c, A, B, kinds[k] == KN ? "nonsymmetric" : "SPD"));
    PetscCall(CheckStillOurs(c, B, "zeroed matrix"));
    PetscCall(Destroy4(&A, &B, &xa, &xb));
    PetscCall(Destroy4(NULL, NULL, &ba, &bb));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
static PetscErrorCode OpMatZeroRows(Ctx *c)
{
  return ZeroRows(c, PETSC_FALSE);
}
static PetscErrorCode OpMatZeroRowsColumns(Ctx *c)
{
  return ZeroRows(c, PETSC_TRUE);
}

static PetscErrorCode OpMatScale(Ctx *c)
{
  Mat A, B;

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  PetscCall(MatScale(A, -2.5));
  PetscCall(MatScale(B, -2.5));
  PetscCall(Post(c, A, B, "MatScale"));
  PetscCall(MatScale(A, 0.0));
  PetscCall(MatScale(B, 0.0));
  PetscCall(Post(c, A, B, "MatScale by 0"));
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatShift(Ctx *c)
{
  Kind kinds[] = {KS, KN};
  Mat  A, B;

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    PetscCall(Pair(c, kinds[k], &A, &B));
    AIJFIRST(c, MatShift(A, 1.25), MatShift(B, 1.25), PetscCall(Destroy4(&A, &B, NULL, NULL)));
    PetscCall(MatShift(B, 1.25));
    PetscCall(Post(c, A, B, kinds[k] == KN ? "missing diagonal entries" : "full diagonal"));
    PetscCall(CheckStillOurs(c, B, "shifted matrix"));
    PetscCall(Destroy4(&A, &B, NULL, NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatDiagonalSet(Ctx *c)
{
  InsertMode modes[] = {INSERT_VALUES, ADD_VALUES};
  Mat        A, B;

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    Vec da, db;
    PetscCall(Pair(c, KN, &A, &B));
    PetscCall(RVec(A, B, PETSC_FALSE, 61, &da, &db));
    AIJFIRST(c, MatDiagonalSet(A, da, modes[k]), MatDiagonalSet(B, db, modes[k]), PetscCall(Destroy4(&A, &B, &da, &db)));
    PetscCall(MatDiagonalSet(B, db, modes[k]));
    PetscCall(Post(c, A, B, modes[k] == ADD_VALUES ? "ADD_VALUES" : "INSERT_VALUES"));
    PetscCall(CheckStillOurs(c, B, "MatDiagonalSet"));
    PetscCall(Destroy4(&A, &B, &da, &db));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatDiagonalScale(Ctx *c)
{
  Kind kinds[] = {KR, KN};
  Mat  A, B;

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    Vec la, lb, ra, rb;
    PetscCall(Pair(c, kinds[k], &A, &B));
    PetscCall(RVec(A, B, PETSC_FALSE, 71, &la, &lb));
    PetscCall(RVec(A, B, PETSC_TRUE, 72, &ra, &rb));
    PetscCall(MatDiagonalScale(A, la, kinds[k] == KR ? ra : NULL));
    PetscCall(MatDiagonalScale(B, lb, kinds[k] == KR ? rb : NULL));
    PetscCall(Post(c, A, B, kinds[k] == KR ? "left and right" : "left only"));
    PetscCall(MatDiagonalScale(A, NULL, ra));
    PetscCall(MatDiagonalScale(B, NULL, rb));
    PetscCall(Post(c, A, B, "right only"));
    PetscCall(Destroy4(&A, &B, &la, &lb));
    PetscCall(Destroy4(NULL, NULL, &ra, &rb));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatAXPY(Ctx *c)
{
  MatStructure strs[]  = {SAME_NONZERO_PATTERN, SUBSET_NONZERO_PATTERN, DIFFERENT_NONZERO_PATTERN, UNKNOWN_NONZERO_PATTERN};
  const char  *names[] = {"SAME", "SUBSET", "DIFFERENT", "UNKNOWN"};
  Mat          A, B, X, XB;
  char         w[128];

  PetscFunctionBegin;
  for (int k = 0; k < 4; k++) {
    /* Y ours; X AIJ of another pattern (DIFFERENT/UNKNOWN) or of Y's (SAME/SUBSET) */
    PetscCall(Pair(c, KN, &A, &B));
    if (strs[k] == DIFFERENT_NONZERO_PATTERN || strs[k] == UNKNOWN_NONZERO_PATTERN) PetscCall(Generate(c, KS, NULL, &X));
    else {
      PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &X));
      PetscCall(MatScale(X, 0.5));
    }
    PetscCall(MatAXPY(A, -0.75, X, strs[k]));
    PetscCall(MatAXPY(B, -0.75, X, strs[k]));
    PetscCall(PetscSNPrintf(w, sizeof(w), "Y ours, X AIJ, %s_NONZERO_PATTERN", names[k]));
    PetscCall(Post(c, A, B, w));
    PetscCall(CheckStillOurs(c, B, w));
    /* X ours too */
    if (c->viaset) PetscCall(Generate(c, strs[k] == SAME_NONZERO_PATTERN || strs[k] == SUBSET_NONZERO_PATTERN ? KN : KS, c->family, &XB));
    else {
      PetscCall(MatConvert(X, c->family, MAT_INITIAL_MATRIX, &XB));
      PetscCall(ApplyOpts(c, XB));
    }
    if (c->viaset && (strs[k] == SAME_NONZERO_PATTERN || strs[k] == SUBSET_NONZERO_PATTERN)) PetscCall(MatScale(XB, 0.5));
    PetscCall(MatAXPY(A, 2.0, X, strs[k]));
    PetscCall(MatAXPY(B, 2.0, XB, strs[k]));
    PetscCall(PetscSNPrintf(w, sizeof(w), "Y ours, X ours, %s_NONZERO_PATTERN", names[k]));
    PetscCall(Post(c, A, B, w));
    PetscCall(CheckStillOurs(c, B, w));
    /* Y AIJ, X ours */
    {
      Mat A2;
      PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &A2));
      PetscCall(MatAXPY(A, 1.5, X, strs[k]));
      PetscCall(MatAXPY(A2, 1.5, XB, strs[k]));
      PetscCall(PetscSNPrintf(w, sizeof(w), "Y AIJ, X ours, %s_NONZERO_PATTERN", names[k]));
      PetscCall(CmpMat(c, A2, A, 1e-14, w));
      PetscCall(MatDestroy(&A2));
    }
    PetscCall(Destroy4(&A, &B, NULL, NULL));
    PetscCall(Destroy4(&X, &XB, NULL, NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatAYPX(Ctx *c)
{
  MatStructure strs[] = {SAME_NONZERO_PATTERN, DIFFERENT_NONZERO_PATTERN};
  Mat          A, B, X;

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    PetscCall(Pair(c, KN, &A, &B));
    if (strs[k] == DIFFERENT_NONZERO_PATTERN) PetscCall(Generate(c, KS, NULL, &X));
    else PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &X));
    PetscCall(MatAYPX(A, 0.3, X, strs[k]));
    PetscCall(MatAYPX(B, 0.3, X, strs[k]));
    PetscCall(Post(c, A, B, strs[k] == SAME_NONZERO_PATTERN ? "SAME_NONZERO_PATTERN" : "DIFFERENT_NONZERO_PATTERN"));
    PetscCall(CheckStillOurs(c, B, "MatAYPX"));
    PetscCall(Destroy4(&A, &B, NULL, NULL));
    PetscCall(MatDestroy(&X));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatStoreValues(Ctx *c)
{
  Mat A, B, A0;

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &A0));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
  PetscCall(MatStoreValues(A));
  PetscCall(MatStoreValues(B));
  PetscCall(MatScale(A, 3.0));
  PetscCall(MatScale(B, 3.0));
  PetscCall(Post(c, A, B, "scaled after MatStoreValues"));
  PetscCall(MatRetrieveValues(A));
  PetscCall(MatRetrieveValues(B));
  PetscCall(Post(c, A0, B, "after MatRetrieveValues"));
  /* once more, with values set through MatSetValues in between */
  PetscCall(MatStoreValues(B));
  PetscCall(MatZeroEntries(B));
  CMP(c, TestCheckZeroMult(B, "zeroed after MatStoreValues"));
  PetscCall(MatRetrieveValues(B));
  PetscCall(Post(c, A0, B, "after the second MatRetrieveValues"));
  /* the same on matrices of ours made from B by MatDuplicate(), MatConvert() to its own type and
     MatFilter() (the first two carry B's composed functions: a store/retrieve that took ours for
     the base type's recursed until the stack overflowed) */
  for (int k = 0; k < 3; k++) {
    const char *how[] = {"MatDuplicate", "MatConvert to its own type", "MatFilter"};
    Mat         M, M0;
    char        what[128];

    if (k == 0) PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &M));
    else if (k == 1) PetscCall(MatConvert(B, MATSAME, MAT_INITIAL_MATRIX, &M));
    else {
      PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &M));
      PetscCall(MatFilter(M, 0.0, PETSC_FALSE, PETSC_FALSE));
    }
    PetscCall(CheckResult(c, M, how[k], PETSC_FALSE));
    PetscCall(MatDuplicate(M, MAT_COPY_VALUES, &M0));
    PetscCall(MatSetOption(M, MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
    PetscCall(MatStoreValues(M));
    PetscCall(MatScale(M, 3.0));
    PetscCall(MatRetrieveValues(M));
    PetscCall(PetscSNPrintf(what, sizeof(what), "after MatStoreValues, MatScale, MatRetrieveValues of a matrix made by %s", how[k]));
    PetscCall(Post(c, M0, M, what));
    PetscCall(MatDestroy(&M0));
    PetscCall(MatDestroy(&M));
  }
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscCall(MatDestroy(&A0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatCopy(Ctx *c)
{
  Mat A, B, A2, B2, S, BS;

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &A2));
  PetscCall(MatScale(A2, 0.5));
  /* into ours, SAME */
  PetscCall(MatCopy(A2, B, SAME_NONZERO_PATTERN));
  PetscCall(Post(c, A2, B, "AIJ into ours, SAME_NONZERO_PATTERN"));
  /* from ours, SAME */
  PetscCall(MatCopy(A, A2, SAME_NONZERO_PATTERN)); /* A2 = A */
  PetscCall(MatScale(A2, 2.0));
  PetscCall(MatCopy(B, A2, SAME_NONZERO_PATTERN)); /* A2 = A/2 */
  PetscCall(MatScale(A, 0.5));
  PetscCall(CmpMat(c, A2, A, 0, "ours into AIJ, SAME_NONZERO_PATTERN"));
  /* ours into ours, SAME */
  PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &B2));
  PetscCall(MatScale(B2, 4.0));
  PetscCall(MatCopy(B2, B, SAME_NONZERO_PATTERN));
  PetscCall(MatScale(A, 4.0));
  PetscCall(Post(c, A, B, "ours into ours, SAME_NONZERO_PATTERN"));
  /* DIFFERENT: an SPD band into the nonsymmetric matrix, both ways */
  PetscCall(Generate(c, KS, NULL, &S));
  PetscCall(MatCopy(S, B, DIFFERENT_NONZERO_PATTERN));
  PetscCall(Post(c, S, B, "AIJ into ours, DIFFERENT_NONZERO_PATTERN"));
  PetscCall(CheckStillOurs(c, B, "MatCopy DIFFERENT"));
  PetscCall(MatCopy(B2, A2, DIFFERENT_NONZERO_PATTERN));
  PetscCall(CmpMat(c, A2, B2, 0, "ours into AIJ, DIFFERENT_NONZERO_PATTERN"));
  if (c->viaset) PetscCall(Generate(c, KS, c->family, &BS));
  else {
    PetscCall(MatConvert(S, c->family, MAT_INITIAL_MATRIX, &BS));
    PetscCall(ApplyOpts(c, BS));
  }
  PetscCall(MatCopy(B2, BS, DIFFERENT_NONZERO_PATTERN));
  PetscCall(Post(c, A, BS, "ours into ours, DIFFERENT_NONZERO_PATTERN"));
  PetscCall(CheckStillOurs(c, BS, "MatCopy DIFFERENT ours"));
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscCall(Destroy4(&A2, &B2, NULL, NULL));
  PetscCall(Destroy4(&S, &BS, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatRealPart(Ctx *c)
{
  Mat A, B;

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  PetscCall(MatRealPart(A));
  PetscCall(MatRealPart(B));
  PetscCall(Post(c, A, B, "MatRealPart"));
  PetscCall(MatConjugate(A));
  PetscCall(MatConjugate(B));
  PetscCall(Post(c, A, B, "MatConjugate"));
  PetscCall(MatImaginaryPart(A));
  PetscCall(MatImaginaryPart(B));
  PetscCall(Post(c, A, B, "MatImaginaryPart"));
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatSetRandom(Ctx *c)
{
  Mat         A, B;
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  PetscCall(PetscRandomCreate(c->comm, &r));
  PetscCall(PetscRandomSetSeed(r, 7));
  PetscCall(PetscRandomSeed(r));
  PetscCall(MatSetRandom(B, r));
  PetscCall(MatDestroy(&A));
  PetscCall(MatConvert(B, MATAIJ, MAT_INITIAL_MATRIX, &A));
  PetscCall(Post(c, A, B, "MatSetRandom"));
  PetscCall(PetscRandomDestroy(&r));
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

const Op kOpsValues[] = {
  {"MatZeroEntries", OpMatZeroEntries},
  {"MatZeroRows", OpMatZeroRows},
  {"MatZeroRowsColumns", OpMatZeroRowsColumns},
  {"MatScale", OpMatScale},
  {"MatShift", OpMatShift},
  {"MatDiagonalSet", OpMatDiagonalSet},
  {"MatDiagonalScale", OpMatDiagonalScale},
  {"MatAXPY", OpMatAXPY},
  {"MatAYPX", OpMatAYPX},
  {"MatStoreValues", OpMatStoreValues},
  {"MatCopy", OpMatCopy},
  {"MatRealPart", OpMatRealPart},
  {"MatSetRandom", OpMatSetRandom},
  {NULL, NULL},
};
