/* The helpers of spmv_matops (declared and described in matops_util.h). */
#include "matops_util.h"

/* ------------------------------------------------------------------------------ checks */
PetscErrorCode Note(Ctx *c, const char *s)
{
  PetscFunctionBegin;
  if (strstr(c->note, s)) PetscFunctionReturn(PETSC_SUCCESS);
  if (c->note[0]) PetscCall(PetscStrlcat(c->note, ", ", sizeof(c->note)));
  PetscCall(PetscStrlcat(c->note, s, sizeof(c->note)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ApplyOpts(Ctx *c, Mat M)
{
  PetscFunctionBegin;
  if (c->rgcsr) PetscCall(MatRgCSRSetGroupSize(M, 64));
  if (c->packsell) PetscCall(MatPackSELLSetValueFormat(M, c->config));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The context's option as M has it: g<group size> (RgCSR) or the value format (PackSELL). */
static PetscErrorCode GetOpt(Ctx *c, Mat M, char *buf, size_t len)
{
  PetscFunctionBegin;
  if (c->rgcsr) {
    PetscInt g;
    PetscCall(MatRgCSRGetGroupSize(M, &g));
    PetscCall(PetscSNPrintf(buf, len, "g%" PetscInt_FMT, g));
  } else {
    const char *f;
    PetscCall(MatPackSELLGetValueFormat(M, &f));
    PetscCall(PetscStrncpy(buf, f, len));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CheckResult(Ctx *c, Mat M, const char *what, PetscBool dense_ok)
{
  MatType     t;
  PetscMPIInt msize;
  char        ours[64], opt[64] = "", note[160];
  int         ok       = 1;
  char        bad[256] = "";

  PetscFunctionBegin;
  PetscCall(MatGetType(M, &t));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)M), &msize));
  PetscCall(PetscStrncpy(ours, msize == 1 ? c->seqname : c->mpiname, sizeof(ours)));
  if (!strcmp(t, ours)) {
    PetscCall(GetOpt(c, M, opt, sizeof(opt)));
    if (strcmp(opt, c->config)) {
      ok = 0;
      PetscCall(PetscSNPrintf(bad, sizeof(bad), "%s: result %s has option %s, the source %s", what, t, opt, c->config));
    }
    if (msize > 1) {
      Mat     D;
      MatType td;
      char    dopt[64] = "";
      PetscCall(MatGetDiagonalBlock(M, &D));
      PetscCall(MatGetType(D, &td));
      if (strcmp(td, c->seqname)) {
        ok = 0;
        PetscCall(PetscSNPrintf(bad, sizeof(bad), "%s: diagonal block of the %s result is %s", what, t, td));
      } else {
        PetscCall(GetOpt(c, D, dopt, sizeof(dopt)));
        if (strcmp(dopt, c->config)) {
          ok = 0;
          PetscCall(PetscSNPrintf(bad, sizeof(bad), "%s: diagonal block of the result has option %s, the source %s", what, dopt, c->config));
        }
      }
    }
  } else if (!strcmp(t, MATSEQAIJ) || !strcmp(t, MATMPIAIJ)) {
  } else if (strstr(c->family, "cuda") && (!strcmp(t, MATSEQAIJCUSPARSE) || !strcmp(t, MATMPIAIJCUSPARSE))) {
    /* the CUDA families are AIJCUSPARSE underneath: products are AIJCUSPARSE's, and so are their results */
  } else if (dense_ok && (!strcmp(t, MATSEQDENSE) || !strcmp(t, MATMPIDENSE) || !strcmp(t, MATSEQDENSECUDA) || !strcmp(t, MATMPIDENSECUDA))) {
  } else {
    ok = 0;
    PetscCall(PetscSNPrintf(bad, sizeof(bad), "%s: result of unexpected type %s", what, t));
  }
  CHK(c, ok, "%s", bad);
  PetscCall(PetscSNPrintf(note, sizeof(note), "%s -> %s", what, t));
  PetscCall(Note(c, note));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CheckStillOurs(Ctx *c, Mat B, const char *what)
{
  MatType t;
  char    ours[64];

  PetscFunctionBegin;
  PetscCall(MatGetType(B, &t));
  PetscCall(PetscStrncpy(ours, c->size == 1 ? c->seqname : c->mpiname, sizeof(ours)));
  CHK(c, !strcmp(t, ours), "%s: the matrix became %s (was %s)", what, t, ours);
  PetscCall(CheckResult(c, B, what, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CmpVec(Ctx *c, Vec ref, Vec got, PetscReal tol, const char *what)
{
  Vec       d;
  PetscReal e, r;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(ref, &d));
  PetscCall(TestCopyValues(got, d));
  PetscCall(VecAXPY(d, -1.0, ref));
  PetscCall(VecNorm(d, NORM_INFINITY, &e));
  PetscCall(VecNorm(ref, NORM_INFINITY, &r));
  PetscCall(VecDestroy(&d));
  CHK(c, e <= tol * r, "%s: ||ref - got||_inf = %g, ||ref||_inf = %g (tol %g)", what, (double)e, (double)r, (double)tol);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CmpMat(Ctx *c, Mat X, Mat Y, PetscReal tol, const char *what)
{
  Mat       Xa, Ya;
  PetscReal nd, ny;
  PetscInt  m1, n1, m2, n2;

  PetscFunctionBegin;
  PetscCall(MatGetSize(X, &m1, &n1));
  PetscCall(MatGetSize(Y, &m2, &n2));
  CHK(c, m1 == m2 && n1 == n2, "%s: sizes %" PetscInt_FMT "x%" PetscInt_FMT ", expected %" PetscInt_FMT "x%" PetscInt_FMT, what, m1, n1, m2, n2);
  PetscCall(MatConvert(X, MATAIJ, MAT_INITIAL_MATRIX, &Xa));
  PetscCall(MatConvert(Y, MATAIJ, MAT_INITIAL_MATRIX, &Ya));
  PetscCall(MatNorm(Ya, NORM_FROBENIUS, &ny));
  PetscCall(MatAXPY(Xa, -1.0, Ya, DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatNorm(Xa, NORM_FROBENIUS, &nd));
  PetscCall(MatDestroy(&Xa));
  PetscCall(MatDestroy(&Ya));
  CHK(c, nd <= tol * ny, "%s: ||X - Y||_F = %g, ||Y||_F = %g", what, (double)nd, (double)ny);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Post(Ctx *c, Mat Aref, Mat B, const char *what)
{
  Mat  Ba;
  char w[256];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(w, sizeof(w), "%s (MatMult against AIJ)", what));
  CMP(c, TestCompareMult(Aref, B, w));
  PetscCall(MatConvert(B, MATAIJ, MAT_INITIAL_MATRIX, &Ba));
  PetscCall(PetscSNPrintf(w, sizeof(w), "%s (MatMult against the matrix's own AIJ values: stale layout)", what));
  CMP(c, TestCompareMult(Ba, B, w));
  PetscCall(MatDestroy(&Ba));
  PetscCall(CmpMat(c, B, Aref, 1e-14, what));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------ matrices */
PetscErrorCode Generate(Ctx *c, Kind kind, const char *type, Mat *A)
{
  PetscInt n = c->n, m = kind == KR ? 3 * c->n / 4 : c->n, rs, re;

  PetscFunctionBegin;
  PetscCall(MatCreate(c->comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, m, n));
  PetscCall(MatSetType(*A, type ? type : MATAIJ));
  if (type) PetscCall(ApplyOpts(c, *A));
  PetscCall(MatSetUp(*A));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    if (kind == KN && i == n / 4) continue; /* empty row */
    for (PetscInt j = PetscMax(0, i - 3); j <= PetscMin(n - 1, i + 3); j++) {
      PetscScalar v;
      if (kind == KN && i == j && i % 37 == 5) continue; /* missing diagonal entry */
      v = (i == j) ? 8.0 + (i % 3) : (kind == KS ? -1.0 / (1 + PetscAbsInt(i - j)) : -0.5 / (1 + (i + 2 * j) % 4));
      PetscCall(MatSetValue(*A, i, j, v, INSERT_VALUES));
    }
    if (kind != KS && i == m / 2) /* long row, explicit zeros included */
      for (PetscInt j = 0; j < n; j += 3)
        if (PetscAbsInt(i - j) > 3) PetscCall(MatSetValue(*A, i, j, 0.01 * (j % 7), INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Pair(Ctx *c, Kind kind, Mat *A, Mat *B)
{
  PetscFunctionBegin;
  PetscCall(Generate(c, kind, NULL, A));
  if (c->viaset) PetscCall(Generate(c, kind, c->family, B));
  else {
    PetscCall(MatConvert(*A, c->family, MAT_INITIAL_MATRIX, B));
    PetscCall(ApplyOpts(c, *B));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode RVec(Mat A, Mat B, PetscBool right, unsigned long seed, Vec *va, Vec *vb)
{
  PetscFunctionBegin;
  if (right) {
    PetscCall(MatCreateVecs(A, va, NULL));
    PetscCall(MatCreateVecs(B, vb, NULL));
  } else {
    PetscCall(MatCreateVecs(A, NULL, va));
    PetscCall(MatCreateVecs(B, NULL, vb));
  }
  PetscCall(TestRandomVec(*va, seed));
  PetscCall(TestCopyValues(*va, *vb));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CreateUnpreallocated(Ctx *c, Mat A, Mat *M)
{
  PetscInt m, n;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(A, &m, &n));
  PetscCall(MatCreate(c->comm, M));
  PetscCall(MatSetSizes(*M, m, n, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(*M, c->family));
  PetscCall(ApplyOpts(c, *M));
  PetscCall(MatSetUp(*M));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SetRowsOf(Mat A, Mat M)
{
  PetscInt rs, re;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscInt           nc;
    PetscCall(MatGetRow(A, i, &nc, &cols, &vals));
    PetscCall(MatSetValues(M, 1, &i, nc, cols, vals, INSERT_VALUES));
    PetscCall(MatRestoreRow(A, i, &nc, &cols, &vals));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Destroy4(Mat *a, Mat *b, Vec *x, Vec *y)
{
  PetscFunctionBegin;
  if (a) PetscCall(MatDestroy(a));
  if (b) PetscCall(MatDestroy(b));
  if (x) PetscCall(VecDestroy(x));
  if (y) PetscCall(VecDestroy(y));
  PetscFunctionReturn(PETSC_SUCCESS);
}
