/* spmv_matops, queries: the operations that read the matrix without changing it (diagonal,
   norms, rows, values, equality, symmetry, row reductions, column norms, trace, info, ownership,
   missing diagonal entries), each giving AIJ's answer. */
#include "matops_util.h"

static PetscErrorCode OpMatGetDiagonal(Ctx *c)
{
  Kind kinds[] = {KN, KR};
  Mat  A, B;

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    Vec da, db;
    PetscCall(Pair(c, kinds[k], &A, &B));
    PetscCall(MatCreateVecs(A, NULL, &da));
    PetscCall(MatCreateVecs(B, NULL, &db));
    PetscCall(VecSet(db, NAN));
    AIJFIRST(c, MatGetDiagonal(A, da), MatGetDiagonal(B, db), PetscCall(Destroy4(&A, &B, &da, &db))); /* MPIAIJ: square only */
    PetscCall(MatGetDiagonal(B, db));
    PetscCall(CmpVec(c, da, db, c->tol_shadow, kinds[k] == KR ? "rectangular" : "square"));
    PetscCall(Destroy4(&A, &B, &da, &db));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatNorm(Ctx *c)
{
  Kind     kinds[] = {KN, KR};
  NormType norms[] = {NORM_1, NORM_FROBENIUS, NORM_INFINITY};
  Mat      A, B;

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    PetscCall(Pair(c, kinds[k], &A, &B));
    for (int t = 0; t < 3; t++) {
      PetscReal na, nb;
      PetscCall(MatNorm(A, norms[t], &na));
      PetscCall(MatNorm(B, norms[t], &nb));
      CHK(c, PetscAbsReal(na - nb) <= 1e-14 * na, "norm %s: %.17g, AIJ %.17g", NormTypes[norms[t]], (double)nb, (double)na);
    }
    PetscCall(Destroy4(&A, &B, NULL, NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatGetRow(Ctx *c)
{
  Kind kinds[] = {KN, KR};
  Mat  A, B;

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    PetscInt rs, re, bad = -1;
    PetscCall(Pair(c, kinds[k], &A, &B));
    PetscCall(MatGetOwnershipRange(A, &rs, &re));
    for (PetscInt i = rs; i < re; i++) {
      const PetscInt    *ca, *cb;
      const PetscScalar *va, *vb;
      PetscInt           nca, ncb;
      PetscCall(MatGetRow(A, i, &nca, &ca, &va));
      PetscCall(MatGetRow(B, i, &ncb, &cb, &vb));
      if (nca != ncb && bad < 0) bad = i;
      for (PetscInt q = 0; q < PetscMin(nca, ncb); q++)
        if ((ca[q] != cb[q] || va[q] != vb[q]) && bad < 0) bad = i;
      PetscCall(MatRestoreRow(B, i, &ncb, &cb, &vb));
      PetscCall(MatRestoreRow(A, i, &nca, &ca, &va));
    }
    CHK(c, bad < 0, "row %" PetscInt_FMT " differs from AIJ's", bad);
    PetscCall(Destroy4(&A, &B, NULL, NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatGetValues(Ctx *c)
{
  Mat         A, B;
  PetscInt    rs, re, rows[4], cols[6], nr = 0, n = c->n;
  PetscScalar va[24], vb[24];
  int         same = 1;

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt i = rs; i < re && nr < 4; i += PetscMax(1, (re - rs) / 4)) rows[nr++] = i;
  cols[0] = 0;
  cols[1] = n / 4;
  cols[2] = n / 2;
  cols[3] = PetscMin(rs + 1, n - 1);
  cols[4] = n - 1;
  cols[5] = PetscMax(rs - 2, 0);
  PetscCall(MatGetValues(A, nr, rows, 6, cols, va));
  PetscCall(MatGetValues(B, nr, rows, 6, cols, vb));
  for (PetscInt k = 0; k < nr * 6; k++) same = same && va[k] == vb[k];
  CHK(c, same, "MatGetValues differs from AIJ's");
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatEqual(Ctx *c)
{
  Mat       A, B, A2, B2;
  PetscBool eq;

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &B2));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &A2));
  PetscCall(MatEqual(B, B2, &eq));
  CHK(c, eq, "ours vs its duplicate: not equal");
  PetscCall(MatEqual(B, A, &eq));
  CHK(c, eq, "ours vs AIJ: not equal");
  PetscCall(MatEqual(A, B, &eq));
  CHK(c, eq, "AIJ vs ours: not equal");
  PetscCall(MatScale(B2, 1.0 + 1e-9));
  PetscCall(MatEqual(B, B2, &eq));
  CHK(c, !eq, "ours vs a scaled duplicate: equal");
  PetscCall(MatScale(A2, 1.0 + 1e-9));
  PetscCall(MatEqual(B, A2, &eq));
  CHK(c, !eq, "ours vs scaled AIJ: equal");
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscCall(Destroy4(&A2, &B2, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatIsSymmetric(Ctx *c)
{
  Kind kinds[] = {KS, KN};
  Mat  A, B;

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    PetscBool sa, sb, ta, tb;
    PetscCall(Pair(c, kinds[k], &A, &B));
    PetscCall(MatIsSymmetric(A, 0.0, &sa));
    PetscCall(MatIsSymmetric(B, 0.0, &sb));
    CHK(c, sa == sb && sa == (kinds[k] == KS), "MatIsSymmetric: %d, AIJ %d", (int)sb, (int)sa);
    AIJFIRST(c, MatIsStructurallySymmetric(A, &ta), MatIsStructurallySymmetric(B, &tb), PetscCall(Destroy4(&A, &B, NULL, NULL)));
    PetscCall(MatIsStructurallySymmetric(B, &tb));
    CHK(c, ta == tb, "MatIsStructurallySymmetric: %d, AIJ %d", (int)tb, (int)ta);
    PetscCall(MatIsHermitian(B, 0.0, &sb));
    CHK(c, sa == sb, "MatIsHermitian: %d, MatIsSymmetric of AIJ %d", (int)sb, (int)sa);
    PetscCall(Destroy4(&A, &B, NULL, NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef enum {
  R_MAXABS,
  R_MAX,
  R_MIN,
  R_SUM,
  R_MINABS
} RowOp;
static PetscErrorCode RowReduce(Ctx *c, RowOp op)
{
  Kind kinds[] = {KN, KR};
  Mat  A, B;

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    Vec      va, vb;
    PetscInt m, *ia, *ib;
    int      same = 1;
    PetscCall(Pair(c, kinds[k], &A, &B));
    PetscCall(MatCreateVecs(A, NULL, &va));
    PetscCall(MatCreateVecs(B, NULL, &vb));
    PetscCall(VecGetLocalSize(va, &m));
    PetscCall(PetscCalloc2(m + 1, &ia, m + 1, &ib));
    switch (op) {
    case R_MAXABS:
      PetscCall(MatGetRowMaxAbs(A, va, ia));
      PetscCall(MatGetRowMaxAbs(B, vb, ib));
      break;
    case R_MAX:
      PetscCall(MatGetRowMax(A, va, ia));
      PetscCall(MatGetRowMax(B, vb, ib));
      break;
    case R_MIN:
      PetscCall(MatGetRowMin(A, va, ia));
      PetscCall(MatGetRowMin(B, vb, ib));
      break;
    case R_MINABS:
      PetscCall(MatGetRowMinAbs(A, va, ia));
      PetscCall(MatGetRowMinAbs(B, vb, ib));
      break;
    case R_SUM:
      PetscCall(MatGetRowSum(A, va));
      PetscCall(MatGetRowSum(B, vb));
      break;
    }
    for (PetscInt i = 0; i < m; i++) same = same && ia[i] == ib[i];
    CHK(c, same, "column indices differ from AIJ's");
    PetscCall(CmpVec(c, va, vb, op == R_SUM ? c->tol_shadow : 0.0, "values")); /* MatGetRowSum is a MatMult */
    PetscCall(PetscFree2(ia, ib));
    PetscCall(Destroy4(&A, &B, &va, &vb));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
static PetscErrorCode OpMatGetRowMaxAbs(Ctx *c)
{
  return RowReduce(c, R_MAXABS);
}
static PetscErrorCode OpMatGetRowMax(Ctx *c)
{
  return RowReduce(c, R_MAX);
}
static PetscErrorCode OpMatGetRowMin(Ctx *c)
{
  return RowReduce(c, R_MIN);
}
static PetscErrorCode OpMatGetRowMinAbs(Ctx *c)
{
  return RowReduce(c, R_MINABS);
}
static PetscErrorCode OpMatGetRowSum(Ctx *c)
{
  return RowReduce(c, R_SUM);
}

static PetscErrorCode OpMatGetColumnNorms(Ctx *c)
{
  Mat        A, B;
  PetscInt   N;
  PetscReal *na, *nb;
  NormType   norms[] = {NORM_1, NORM_2, NORM_INFINITY};
  int        same    = 1;

  PetscFunctionBegin;
  PetscCall(Pair(c, KR, &A, &B));
  PetscCall(MatGetSize(A, NULL, &N));
  PetscCall(PetscMalloc2(N, &na, N, &nb));
  for (int t = 0; t < 3; t++) {
    PetscCall(MatGetColumnNorms(A, norms[t], na));
    PetscCall(MatGetColumnNorms(B, norms[t], nb));
    for (PetscInt j = 0; j < N; j++) same = same && PetscAbsReal(na[j] - nb[j]) <= 1e-14 * na[j];
  }
  CHK(c, same, "column norms differ from AIJ's");
  PetscCall(PetscFree2(na, nb));
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatGetTrace(Ctx *c)
{
  Mat         A, B;
  PetscScalar ta, tb;

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  PetscCall(MatGetTrace(A, &ta));
  PetscCall(MatGetTrace(B, &tb));
  CHK(c, PetscAbsScalar(ta - tb) <= 1e-14 * PetscAbsScalar(ta), "trace %g, AIJ %g", (double)PetscRealPart(tb), (double)PetscRealPart(ta));
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatGetInfo(Ctx *c)
{
  Mat         A, B;
  MatInfoType types[] = {MAT_LOCAL, MAT_GLOBAL_SUM, MAT_GLOBAL_MAX};

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  for (int k = 0; k < 3; k++) {
    MatInfo ia, ib;
    PetscCall(MatGetInfo(A, types[k], &ia));
    PetscCall(MatGetInfo(B, types[k], &ib));
    CHK(c, ia.nz_used == ib.nz_used && ia.block_size == ib.block_size, "MatGetInfo type %d: nz_used %g, AIJ %g", k, ib.nz_used, ia.nz_used);
  }
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatGetOwnershipRange(Ctx *c)
{
  Mat             A, B;
  PetscInt        a0, a1, b0, b1, c0, c1, d0, d1;
  const PetscInt *ra, *rb;
  int             same = 1;

  PetscFunctionBegin;
  PetscCall(Pair(c, KR, &A, &B));
  PetscCall(MatGetOwnershipRange(A, &a0, &a1));
  PetscCall(MatGetOwnershipRange(B, &b0, &b1));
  PetscCall(MatGetOwnershipRangeColumn(A, &c0, &c1));
  PetscCall(MatGetOwnershipRangeColumn(B, &d0, &d1));
  PetscCall(MatGetOwnershipRanges(A, &ra));
  PetscCall(MatGetOwnershipRanges(B, &rb));
  for (PetscMPIInt r = 0; r <= c->size; r++) same = same && ra[r] == rb[r];
  CHK(c, same && a0 == b0 && a1 == b1 && c0 == d0 && c1 == d1, "ownership ranges differ from AIJ's");
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if PETSC_VERSION_LT(3, 25, 0) /* PETSc 3.25 removed MatMissingDiagonal() (docs/petsc-versions.md) */
static PetscErrorCode OpMatMissingDiagonal(Ctx *c)
{
  Kind kinds[] = {KN, KS};
  Mat  A, B;

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    PetscBool ma, mb;
    PetscInt  da = -1, db = -1;
    PetscCall(Pair(c, kinds[k], &A, &B));
    AIJFIRST(c, MatMissingDiagonal(A, &ma, &da), MatMissingDiagonal(B, &mb, &db), PetscCall(Destroy4(&A, &B, NULL, NULL)));
    PetscCall(MatMissingDiagonal(B, &mb, &db));
    CHK(c, ma == mb && (!ma || da == db), "missing %d at %" PetscInt_FMT ", AIJ %d at %" PetscInt_FMT, (int)mb, db, (int)ma, da);
    PetscCall(Destroy4(&A, &B, NULL, NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

const Op kOpsQueries[] = {
  {"MatGetDiagonal", OpMatGetDiagonal},
  {"MatNorm", OpMatNorm},
  {"MatGetRow", OpMatGetRow},
  {"MatGetValues", OpMatGetValues},
  {"MatEqual", OpMatEqual},
  {"MatIsSymmetric", OpMatIsSymmetric},
  {"MatGetRowMaxAbs", OpMatGetRowMaxAbs},
  {"MatGetRowMax", OpMatGetRowMax},
  {"MatGetRowMin", OpMatGetRowMin},
  {"MatGetRowMinAbs", OpMatGetRowMinAbs},
  {"MatGetRowSum", OpMatGetRowSum},
  {"MatGetColumnNorms", OpMatGetColumnNorms},
  {"MatGetTrace", OpMatGetTrace},
  {"MatGetInfo", OpMatGetInfo},
  {"MatGetOwnershipRange", OpMatGetOwnershipRange},
#if PETSC_VERSION_LT(3, 25, 0)
  {"MatMissingDiagonal", OpMatMissingDiagonal},
#endif
  {NULL, NULL},
};
