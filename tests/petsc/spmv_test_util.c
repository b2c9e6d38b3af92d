/* Helpers shared by the PETSc-level tests (see spmv_test_util.h). */
#include "spmv_test_util.h"

#include <math.h>
#include <string.h>

PetscErrorCode TestSeqBlocks(Mat A, Mat blocks[2])
{
  PetscBool mpi;

  PetscFunctionBegin;
  blocks[0] = A;
  blocks[1] = NULL;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, MATMPIAIJ, &mpi));
  if (mpi) PetscCall(MatMPIAIJGetSeqAIJ(A, &blocks[0], &blocks[1], NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Replaces the values of an AIJ matrix (seq or mpi) by |a| (abs) or by 1 (pattern). */
static PetscErrorCode MapValues(Mat A, PetscBool pattern)
{
  Mat blocks[2];

  PetscFunctionBegin;
  PetscCall(TestSeqBlocks(A, blocks));
  for (int b = 0; b < 2; b++) {
    PetscScalar *a;
    PetscInt     nz;
    MatInfo      info;
    if (!blocks[b]) continue;
    PetscCall(MatGetInfo(blocks[b], MAT_LOCAL, &info));
    nz = (PetscInt)info.nz_used;
    PetscCall(MatSeqAIJGetArray(blocks[b], &a));
    for (PetscInt k = 0; k < nz; k++) a[k] = pattern ? 1.0 : PetscAbsScalar(a[k]);
    PetscCall(MatSeqAIJRestoreArray(blocks[b], &a));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DerivedMatrix(Mat Aref, PetscBool pattern, Mat *D)
{
  PetscFunctionBegin;
  PetscCall(MatConvert(Aref, MATAIJ, MAT_INITIAL_MATRIX, D));
  PetscCall(MapValues(*D, pattern));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Copies src into dst entry by entry through host arrays (the two may differ in type: host
   vectors of the AIJ reference, CUDA vectors of the CUDA types). */
PetscErrorCode TestCopyValues(Vec src, Vec dst)
{
  const PetscScalar *s;
  PetscScalar       *d;
  PetscInt           n, m;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(src, &n));
  PetscCall(VecGetLocalSize(dst, &m));
  PetscCheck(n == m, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "local sizes differ: %" PetscInt_FMT " and %" PetscInt_FMT, n, m);
  PetscCall(VecGetArrayRead(src, &s));
  PetscCall(VecGetArrayWrite(dst, &d));
  if (n) PetscCall(PetscArraycpy(d, s, n));
  PetscCall(VecRestoreArrayWrite(dst, &d));
  PetscCall(VecRestoreArrayRead(src, &s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode TestTrueResidual(Mat A, Vec b, Vec x, PetscReal *rel)
{
  Vec       r;
  PetscReal rn, bn;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(b, &r));
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &rn));
  PetscCall(VecNorm(b, NORM_2, &bn));
  *rel = bn > 0 ? rn / bn : rn;
  PetscCall(VecDestroy(&r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode TestRandomVec(Vec v, unsigned long seed)
{
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)v), &r));
  PetscCall(PetscRandomSetType(r, PETSCRAND48));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(r, seed));
  PetscCall(PetscRandomSeed(r));
  PetscCall(VecSetRandom(v, r));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* |got - ref| <= rel * w + abs * c entry by entry (NaN fails); collective. */
static PetscErrorCode Compare(Vec ref, Vec got, Vec w, Vec c, TestBound b, const char *what, const char *product)
{
  const PetscScalar *r, *g, *wa, *ca = NULL;
  PetscInt           n, rstart, bad = 0, badrow = -1, nbad;
  PetscReal          worst = 0, badref = 0, badgot = 0, badbound = 0, gworst;
  MPI_Comm           comm = PetscObjectComm((PetscObject)ref);

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(ref, &n));
  PetscCall(VecGetOwnershipRange(ref, &rstart, NULL));
  PetscCall(VecGetArrayRead(ref, &r));
  PetscCall(VecGetArrayRead(got, &g));
  PetscCall(VecGetArrayRead(w, &wa));
  if (c) PetscCall(VecGetArrayRead(c, &ca));
  for (PetscInt i = 0; i < n; i++) {
    const PetscReal bound = b.rel * PetscRealPart(wa[i]) + (ca ? b.abs * PetscRealPart(ca[i]) : 0);
    const PetscReal err   = PetscAbsScalar(g[i] - r[i]);
    if (!(err <= bound)) {
      if (!bad) {
        badrow   = rstart + i;
        badref   = PetscRealPart(r[i]);
        badgot   = PetscRealPart(g[i]);
        badbound = bound;
      }
      bad++;
    } else if (bound > 0) worst = PetscMax(worst, err / bound);
  }
  if (c) PetscCall(VecRestoreArrayRead(c, &ca));
  PetscCall(VecRestoreArrayRead(w, &wa));
  PetscCall(VecRestoreArrayRead(got, &g));
  PetscCall(VecRestoreArrayRead(ref, &r));
  PetscCallMPI(MPIU_Allreduce(&bad, &nbad, 1, MPIU_INT, MPI_SUM, comm));
  PetscCallMPI(MPIU_Allreduce(&worst, &gworst, 1, MPIU_REAL, MPI_MAX, comm));
  if (bad) PetscCall(PetscSynchronizedPrintf(comm, "  %s %s: row %" PetscInt_FMT ": reference %.17g, got %.17g, allowed error %.3g\n", what, product, badrow, (double)badref, (double)badgot, (double)badbound));
  PetscCall(PetscSynchronizedFlush(comm, PETSC_STDOUT));
  PetscCheck(!nbad, comm, PETSC_ERR_PLIB, "%s: %s differs from AIJ in %" PetscInt_FMT " entries beyond the bound (rel %.3g, abs %.3g)", what, product, nbad, (double)b.rel, (double)b.abs);
  PetscCall(PetscInfo(ref, "%s %s: largest error / bound %.3g\n", what, product, (double)gworst));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode TestGetBound(Mat Aref, Mat B, TestBound *bound)
{
  PetscBool   packsell = PETSC_FALSE;
  const char *fmt = NULL, *scaling = NULL;
  MatType     type;

  PetscFunctionBegin;
  bound->rel   = 1e-13;
  bound->abs   = 0;
  bound->lossy = PETSC_FALSE;
  PetscCall(MatGetType(B, &type));
  packsell = strstr(type, "packsell") ? PETSC_TRUE : PETSC_FALSE;
  if (!packsell) PetscFunctionReturn(PETSC_SUCCESS);
  if (strstr(type, "cuda")) { /* bound to the CPU, a CUDA type multiplies with the base's host AIJ kernels: exact */
    PetscBool bound;
    PetscCall(MatBoundToCPU(B, &bound));
    if (bound) PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatPackSELLGetValueFormat(B, &fmt));
  PetscCall(MatPackSELLGetScaling(B, &scaling));
  if (!strcmp(fmt, "exact")) PetscFunctionReturn(PETSC_SUCCESS);
  {
    int          m, e;
    MatSpMVStats st;
    PetscInt     s, smin;
    if (!strcmp(fmt, "fp16")) {
      m = 10;
      e = 5;
    } else if (!strcmp(fmt, "bf16")) {
      m = 7;
      e = 8;
    } else {
      PetscCheck(sscanf(fmt, "e8m%d", &m) == 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "unknown value format %s", fmt);
      e = 8;
    }
    /* subnormal spacing 2^(2 - 2^(e-1) - m); half of it is the largest rounding error there */
    bound->rel   = PetscPowReal(2.0, -(m + 1)) + 1e-13;
    bound->abs   = PetscPowReal(2.0, 2 - PetscPowReal(2.0, e - 1) - m - 1);
    bound->lossy = PETSC_TRUE;
    /* values stored as a * 2^s (scaling auto): the subnormal spacing counts 2^-s times */
    PetscCall(MatSpMVGetStats(B, &st));
    s = st.scale_exponent;
    PetscCallMPI(MPIU_Allreduce(&s, &smin, 1, MPIU_INT, MPI_MIN, PetscObjectComm((PetscObject)B)));
    PetscCheck(smin == 0 || !strcmp(scaling, "auto"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "values scaled by 2^%" PetscInt_FMT " without scaling auto", smin);
    bound->abs *= PetscPowReal(2.0, (PetscReal)-smin);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CompareProducts(Mat Aref, Mat B, const char *what, PetscBool all)
{
  TestBound b, exact = {1e-13, 0, PETSC_FALSE};
  Mat       Aabs, Apat;
  Vec       x, xa, y, yr, w, c, xB, yB, zB, yrB, xt, xta, xtB, t, tB, wt, v, tmp;
  PetscInt  M, N;
  PetscBool congruent;

  PetscFunctionBegin;
  PetscCall(TestGetBound(Aref, B, &b));
  {
    /* -test_bound_scale r shrinks the bounds: a check of the checks (lossy layouts must fail) */
    PetscReal scale = 1.0;
    PetscCall(PetscOptionsGetReal(NULL, NULL, "-test_bound_scale", &scale, NULL));
    b.rel *= scale;
    b.abs *= scale;
  }
  PetscCall(DerivedMatrix(Aref, PETSC_FALSE, &Aabs));
  PetscCall(DerivedMatrix(Aref, PETSC_TRUE, &Apat));
  PetscCall(MatCreateVecs(Aref, &x, &y));
  PetscCall(MatCreateVecs(B, &xB, &yB));
  PetscCall(VecDuplicate(x, &xa));
  PetscCall(VecDuplicate(y, &w));
  PetscCall(VecDuplicate(y, &c));
  PetscCall(VecDuplicate(y, &yr));
  PetscCall(VecDuplicate(y, &tmp));
  PetscCall(VecDuplicate(yB, &zB));
  PetscCall(VecDuplicate(yB, &yrB));
  PetscCall(TestRandomVec(x, 11));
  PetscCall(TestRandomVec(yr, 12));
  PetscCall(TestCopyValues(x, xB));
  PetscCall(TestCopyValues(yr, yrB));
  PetscCall(VecCopy(x, xa));
  PetscCall(VecAbs(xa));
  PetscCall(MatMult(Aabs, xa, w));
  PetscCall(MatMult(Apat, xa, c));

  /* y = A x */
  PetscCall(MatMult(Aref, x, y));
  PetscCall(VecSet(yB, NAN));
  PetscCall(MatMult(B, xB, yB));
  PetscCall(Compare(y, yB, w, c, b, what, "MatMult"));
  if (all) {
    /* z = y + A x, z != y and z == y */
    PetscCall(MatMultAdd(Aref, x, yr, y));
    PetscCall(VecCopy(yr, tmp));
    PetscCall(VecAbs(tmp));
    PetscCall(VecAXPY(w, 1.0, tmp));
    PetscCall(VecSet(zB, NAN));
    PetscCall(MatMultAdd(B, xB, yrB, zB));
    PetscCall(Compare(y, zB, w, c, b, what, "MatMultAdd"));
    PetscCall(TestCopyValues(yr, zB));
    PetscCall(MatMultAdd(B, xB, zB, zB));
    PetscCall(Compare(y, zB, w, c, b, what, "MatMultAdd in place"));

    /* transposes: AIJ's kernel on the same AIJ arrays (so the lossless bound holds) */
    PetscCall(MatCreateVecs(Aref, &t, &xt));
    PetscCall(MatCreateVecs(B, &tB, &xtB));
    PetscCall(VecDuplicate(t, &wt));
    PetscCall(VecDuplicate(t, &v));
    PetscCall(VecDuplicate(xt, &xta));
    PetscCall(TestRandomVec(xt, 13));
    PetscCall(TestRandomVec(v, 14));
    PetscCall(TestCopyValues(xt, xtB));
    PetscCall(VecCopy(xt, xta));
    PetscCall(VecAbs(xta));
    PetscCall(MatMultTranspose(Aabs, xta, wt));
    PetscCall(MatMultTranspose(Aref, xt, t));
    PetscCall(VecSet(tB, NAN));
    PetscCall(MatMultTranspose(B, xtB, tB));
    PetscCall(Compare(t, tB, wt, NULL, exact, what, "MatMultTranspose"));
    PetscCall(MatMultTransposeAdd(Aref, xt, v, t));
    PetscCall(TestCopyValues(v, tB));
    PetscCall(MatMultTransposeAdd(B, xtB, tB, tB));
    PetscCall(VecAbs(v));
    PetscCall(VecAXPY(wt, 1.0, v));
    PetscCall(Compare(t, tB, wt, NULL, exact, what, "MatMultTransposeAdd in place"));
    PetscCall(VecDestroy(&t));
    PetscCall(VecDestroy(&xt));
    PetscCall(VecDestroy(&xta));
    PetscCall(VecDestroy(&v));
    PetscCall(VecDestroy(&tB));
    PetscCall(VecDestroy(&xtB));
    PetscCall(VecDestroy(&wt));

    /* diagonal (square matrices with the same row and column layout) */
    PetscCall(MatGetSize(Aref, &M, &N));
    PetscCall(MatHasCongruentLayouts(Aref, &congruent));
    if (M == N && congruent) {
      PetscCall(MatGetDiagonal(Aref, y));
      PetscCall(VecCopy(y, w));
      PetscCall(VecAbs(w));
      PetscCall(VecSet(c, 1.0));
      PetscCall(VecSet(yB, NAN));
      PetscCall(MatGetDiagonal(B, yB));
      PetscCall(Compare(y, yB, w, c, b, what, "MatGetDiagonal"));
    }
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&yr));
  PetscCall(VecDestroy(&w));
  PetscCall(VecDestroy(&c));
  PetscCall(VecDestroy(&tmp));
  PetscCall(VecDestroy(&xB));
  PetscCall(VecDestroy(&yB));
  PetscCall(VecDestroy(&zB));
  PetscCall(VecDestroy(&yrB));
  PetscCall(MatDestroy(&Aabs));
  PetscCall(MatDestroy(&Apat));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode TestCompareProducts(Mat Aref, Mat B, const char *what)
{
  PetscFunctionBegin;
  PetscCall(CompareProducts(Aref, B, what, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode TestCompareMult(Mat Aref, Mat B, const char *what)
{
  PetscFunctionBegin;
  PetscCall(CompareProducts(Aref, B, what, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode TestCheckZeroMult(Mat B, const char *what)
{
  Vec       x, y;
  PetscReal nrm;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(B, &x, &y));
  PetscCall(TestRandomVec(x, 15));
  PetscCall(VecSet(y, NAN));
  PetscCall(MatMult(B, x, y));
  PetscCall(VecNorm(y, NORM_INFINITY, &nrm));
  PetscCheck(nrm == 0.0, PetscObjectComm((PetscObject)B), PETSC_ERR_PLIB, "%s: the product of a zeroed matrix has norm %g", what, (double)nrm);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode TestCheckType(Mat B, const char *family)
{
  PetscMPIInt size;
  char        expect[64];
  PetscBool   same;
  MatType     type;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)B), &size));
  PetscCall(PetscSNPrintf(expect, sizeof(expect), "%saij%s", size == 1 ? "seq" : "mpi", family));
  PetscCall(PetscObjectTypeCompare((PetscObject)B, expect, &same));
  PetscCall(MatGetType(B, &type));
  PetscCheck(same, PetscObjectComm((PetscObject)B), PETSC_ERR_PLIB, "expected a %s matrix, got %s", expect, type);
  PetscCall(PetscStrendswith(family, "cuda", &same));
  if (same) { /* a CUDA type bound to the CPU would multiply with the host AIJ kernel */
    PetscBool bound;
    PetscCall(MatBoundToCPU(B, &bound));
    PetscCheck(!bound, PetscObjectComm((PetscObject)B), PETSC_ERR_PLIB, "%s matrix is bound to the CPU: its products would not run on the GPU", type);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode TestEventCount(const char *event, PetscInt *count)
{
  PetscLogEvent      id;
  PetscEventPerfInfo info;

  PetscFunctionBegin;
  PetscCall(PetscLogEventGetId(event, &id));
  PetscCall(PetscLogEventGetPerfInfo(PETSC_DETERMINE, id, &info));
  *count = info.count;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode TestGetFileAndFamilies(char file[], size_t len, char *types[], PetscInt *ntypes, char *formats[], PetscInt *nformats)
{
  PetscBool flg, setformats;
  PetscInt  room = *nformats; /* PetscOptionsGetStringArray() sets *nformats to what it found */

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, len, &flg));
  PetscCheck(flg, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "give the matrix with -f <file>");
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", types, ntypes, &flg));
  PetscCheck(flg && *ntypes > 0, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "give the families with -types rgcsr,packsell,...");
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-value_formats", formats, nformats, &setformats));
  if (!setformats) {
    PetscCheck(room >= 3, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "room for 3 value formats needed");
    *nformats = 3;
    PetscCall(PetscStrallocpy("exact", &formats[0]));
    PetscCall(PetscStrallocpy("fp16", &formats[1]));
    PetscCall(PetscStrallocpy("bf16", &formats[2]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode TestLoadAIJ(const char file[], Mat *A)
{
  PetscViewer viewer;

  PetscFunctionBegin;
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, file, FILE_MODE_READ, &viewer));
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatLoad(*A, viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Mantissa and exponent bits of a lossy value format name; PETSC_FALSE for exact. */
static PetscErrorCode FormatBits(const char *fmt, PetscBool *lossy, int *m, int *e)
{
  PetscFunctionBegin;
  *lossy = PETSC_TRUE;
  if (!strcmp(fmt, "exact")) *lossy = PETSC_FALSE;
  else if (!strcmp(fmt, "fp16")) {
    *m = 10;
    *e = 5;
  } else if (!strcmp(fmt, "bf16")) {
    *m = 7;
    *e = 8;
  } else {
    PetscCheck(sscanf(fmt, "e8m%d", m) == 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "unknown value format %s", fmt);
    *e = 8;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode TestFormatHoldsValues(Mat A, const char *fmt, PetscBool scaling_auto, PetscBool *holds)
{
  PetscBool lossy;
  int       m = 0, e = 0, bias, s = 0;
  PetscInt  rs, re;
  double    loc[2] = {0.0, 0.0}, glob[2]; /* max |a|, -min nonzero |a| (finite values) */
  double    maxf, tiny;

  PetscFunctionBegin;
  PetscCall(FormatBits(fmt, &lossy, &m, &e));
  *holds = PETSC_TRUE;
  if (!lossy) PetscFunctionReturn(PETSC_SUCCESS);
  loc[1] = -HUGE_VAL;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt           n;
    const PetscScalar *v;
    PetscCall(MatGetRow(A, i, &n, NULL, &v));
    for (PetscInt k = 0; k < n; k++) {
      double a = fabs((double)PetscRealPart(v[k]));
      if (!isfinite(a) || a == 0.0) continue;
      if (a > loc[0]) loc[0] = a;
      if (-a > loc[1]) loc[1] = -a;
    }
    PetscCall(MatRestoreRow(A, i, &n, NULL, &v));
  }
  PetscCallMPI(MPIU_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_MAX, PetscObjectComm((PetscObject)A)));
  if (glob[0] == 0.0) PetscFunctionReturn(PETSC_SUCCESS);
  bias = (1 << (e - 1)) - 1;
  maxf = ldexp((double)((1L << (m + 1)) - 1), bias - m);
  if (scaling_auto) {
    /* the exponent of scaling auto: max|a| in the top binade, one lower if rounding would
       carry over the largest finite value (half an ulp above it or more), at most 1022 */
    s = ilogb(maxf) - ilogb(glob[0]);
    if (ldexp(glob[0], s) >= maxf + ldexp(1.0, bias - m - 1)) s--;
    if (s > 1022) s = 1022;
  }
  /* overflow: rounds above the largest finite value; underflow: at most half the smallest
     subnormal 2^(1 - bias - m) rounds to zero (ties to even) */
  if (ldexp(glob[0], s) >= maxf + ldexp(1.0, bias - m - 1)) *holds = PETSC_FALSE;
  tiny = ldexp(-glob[1], s);
  if (tiny <= ldexp(1.0, -bias - m)) *holds = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode TestExpectRefused(Mat A, const char *family, const char *label)
{
  Mat            B = NULL;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = MatConvert(A, family, MAT_INITIAL_MATRIX, &B);
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr == PETSC_ERR_ARG_OUTOFRANGE, PetscObjectComm((PetscObject)A), PETSC_ERR_PLIB, "%s: a value does not fit the value format, but MatConvert returned %d instead of PETSC_ERR_ARG_OUTOFRANGE", label, (int)ierr);
  PetscCall(PetscPrintf(PetscObjectComm((PetscObject)A), "%s: refused (a value does not fit the value format), as it must be\n", label));
  PetscFunctionReturn(PETSC_SUCCESS);
}
