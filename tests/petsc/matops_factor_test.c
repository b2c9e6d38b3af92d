/* spmv_matops, factor: what the preconditioners ask of the matrix (the diagonal block, the overlap
   of index sets, orderings, LU/ILU/Cholesky/ICC factors with their solves, the inverted block
   diagonal), each giving AIJ's answer. */
#include "matops_util.h"

static PetscErrorCode OpMatGetDiagonalBlock(Ctx *c)
{
  Mat A, B, Da, Db;

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  PetscCall(MatGetDiagonalBlock(A, &Da));
  PetscCall(MatGetDiagonalBlock(B, &Db));
  PetscCall(CheckResult(c, Db, "diagonal block", PETSC_FALSE));
  {
    Mat       D;
    PetscReal nd, na;
    PetscCall(MatConvert(Db, MATSEQAIJ, MAT_INITIAL_MATRIX, &D));
    PetscCall(MatAXPY(D, -1.0, Da, DIFFERENT_NONZERO_PATTERN));
    PetscCall(MatNorm(D, NORM_FROBENIUS, &nd));
    PetscCall(MatNorm(Da, NORM_FROBENIUS, &na));
    PetscCall(MatDestroy(&D));
    CHK(c, nd <= 1e-14 * na, "diagonal block differs from AIJ's");
  }
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatIncreaseOverlap(Ctx *c)
{
  Mat       A, B;
  IS        ia, ib;
  PetscInt  rs, re;
  PetscBool eq;

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(ISCreateStride(PETSC_COMM_SELF, (re - rs + 2) / 3, rs, 3, &ia));
  PetscCall(ISDuplicate(ia, &ib));
  PetscCall(ISCopy(ia, ib));
  AIJFIRST(c, MatIncreaseOverlap(A, 1, &ia, 2), MatIncreaseOverlap(B, 1, &ib, 2), {
    PetscCall(Destroy4(&A, &B, NULL, NULL));
    PetscCall(ISDestroy(&ia));
    PetscCall(ISDestroy(&ib));
  });
  PetscCall(MatIncreaseOverlap(B, 1, &ib, 2));
  PetscCall(ISSort(ia));
  PetscCall(ISSort(ib));
  PetscCall(ISEqual(ia, ib, &eq));
  CHK(c, eq, "overlap index sets differ from AIJ's");
  PetscCall(ISDestroy(&ia));
  PetscCall(ISDestroy(&ib));
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatGetOrdering(Ctx *c)
{
  MatOrderingType types[] = {MATORDERINGNATURAL, MATORDERINGND, MATORDERING1WD, MATORDERINGRCM, MATORDERINGQMD};
  Mat             A, B;

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  if (c->size > 1) {
    /* PETSc orders by the diagonal block only for the exact type MATMPIAIJ (MatGetOrdering(),
       sorder.c); every AIJ subclass, PETSc's own MATMPIAIJSELL included, gets the generic
       ordering of the whole matrix. The reference is that subclass. */
    PetscCall(MatConvert(A, MATMPIAIJSELL, MAT_INPLACE_MATRIX, &A));
    PetscCall(Note(c, "reference mpiaijsell (PETSc orders only exact mpiaij by its diagonal block)"));
  }
  for (int k = 0; k < 5; k++) {
    IS        ra, ca, rb, cb;
    PetscBool e1, e2;
    AIJFIRST(c, MatGetOrdering(A, types[k], &ra, &ca), MatGetOrdering(B, types[k], &rb, &cb), PetscCall(Destroy4(&A, &B, NULL, NULL)));
    PetscCall(MatGetOrdering(B, types[k], &rb, &cb));
    PetscCall(ISEqual(ra, rb, &e1));
    PetscCall(ISEqual(ca, cb, &e2));
    CHK(c, e1 && e2, "ordering %s differs from AIJ's", types[k]);
    PetscCall(ISDestroy(&ra));
    PetscCall(ISDestroy(&ca));
    PetscCall(ISDestroy(&rb));
    PetscCall(ISDestroy(&cb));
  }
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* LU, ILU, Cholesky, ICC with PETSc's own solver: solutions compared, then a refactorization
   after a value change. */
static PetscErrorCode OpMatGetFactor(Ctx *c)
{
  MatFactorType ftypes[] = {MAT_FACTOR_LU, MAT_FACTOR_ILU, MAT_FACTOR_CHOLESKY, MAT_FACTOR_ICC};
  const char   *names[]  = {"LU", "ILU", "Cholesky", "ICC"};

  PetscFunctionBegin;
  for (int k = 0; k < 4; k++) {
    Mat           A, B, Fa, Fb;
    IS            r, q;
    MatFactorInfo info;
    Vec           ba, bb, xa, xb;
    char          w[64];
    PetscCall(Pair(c, k < 2 ? KG : KS, &A, &B));
    AIJFIRST(c, MatGetFactor(A, MATSOLVERPETSC, ftypes[k], &Fa), MatGetFactor(B, MATSOLVERPETSC, ftypes[k], &Fb), PetscCall(Destroy4(&A, &B, NULL, NULL)));
    PetscCall(MatGetFactor(B, MATSOLVERPETSC, ftypes[k], &Fb));
    PetscCall(MatFactorInfoInitialize(&info));
    info.fill   = 5.0;
    info.levels = 0;
    PetscCall(MatGetOrdering(A, k < 2 ? MATORDERINGND : MATORDERINGNATURAL, &r, &q));
    for (int pass = 0; pass < 2; pass++) {
      Mat M[2] = {A, B}, F[2] = {Fa, Fb};
      for (int s = 0; s < 2; s++) {
        if (pass == 0) {
          if (k == 0) PetscCall(MatLUFactorSymbolic(F[s], M[s], r, q, &info));
          if (k == 1) PetscCall(MatILUFactorSymbolic(F[s], M[s], r, q, &info));
          if (k == 2) PetscCall(MatCholeskyFactorSymbolic(F[s], M[s], r, &info));
          if (k == 3) PetscCall(MatICCFactorSymbolic(F[s], M[s], r, &info));
        }
        if (k < 2) PetscCall(MatLUFactorNumeric(F[s], M[s], &info));
        else PetscCall(MatCholeskyFactorNumeric(F[s], M[s], &info));
      }
      PetscCall(RVec(A, B, PETSC_FALSE, 101, &ba, &bb));
      PetscCall(MatCreateVecs(A, &xa, NULL));
      PetscCall(MatCreateVecs(B, &xb, NULL));
      PetscCall(MatSolve(Fa, ba, xa));
      PetscCall(MatSolve(Fb, bb, xb));
      PetscCall(PetscSNPrintf(w, sizeof(w), "%s solve%s", names[k], pass ? " after refactorization" : ""));
      PetscCall(CmpVec(c, xa, xb, 1e-12, w));
      PetscCall(Destroy4(NULL, NULL, &ba, &bb));
      PetscCall(Destroy4(NULL, NULL, &xa, &xb));
      PetscCall(MatScale(A, 2.0));
      PetscCall(MatShift(A, 0.5));
      PetscCall(MatScale(B, 2.0));
      PetscCall(MatShift(B, 0.5));
    }
    PetscCall(ISDestroy(&r));
    PetscCall(ISDestroy(&q));
    PetscCall(Destroy4(&Fa, &Fb, NULL, NULL));
    PetscCall(Destroy4(&A, &B, NULL, NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatInvertBlockDiagonal(Ctx *c)
{
  Mat                A, B;
  const PetscScalar *va, *vb;
  PetscInt           m;
  int                same = 1;

  PetscFunctionBegin;
  PetscCall(Pair(c, KS, &A, &B));
  PetscCall(MatGetLocalSize(A, &m, NULL));
  PetscCall(MatInvertBlockDiagonal(A, &va));
  PetscCall(MatInvertBlockDiagonal(B, &vb));
  for (PetscInt i = 0; i < m; i++) same = same && va[i] == vb[i];
  CHK(c, same, "inverted diagonal differs from AIJ's");
  /* after a value change the inverse follows */
  PetscCall(MatScale(A, 4.0));
  PetscCall(MatScale(B, 4.0));
  PetscCall(MatInvertBlockDiagonal(A, &va));
  PetscCall(MatInvertBlockDiagonal(B, &vb));
  for (PetscInt i = 0; i < m; i++) same = same && va[i] == vb[i];
  CHK(c, same, "inverted diagonal differs from AIJ's after MatScale");
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

const Op kOpsFactor[] = {
  {"MatGetDiagonalBlock", OpMatGetDiagonalBlock}, {"MatIncreaseOverlap", OpMatIncreaseOverlap}, {"MatGetOrdering", OpMatGetOrdering}, {"MatGetFactor", OpMatGetFactor}, {"MatInvertBlockDiagonal", OpMatInvertBlockDiagonal}, {NULL, NULL},
};
