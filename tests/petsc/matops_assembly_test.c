/* spmv_matops, assembly: values set through MatSetValues (insert, add through a flush assembly,
   new nonzeros, stashed rows), MatSetOption, MatResetPreallocation, COO assembly,
   MatSetValuesLocal through MatGetLocalSubMatrix and MatBindToCPU during a hash assembly; after
   each, the entries equal AIJ's and the products follow them. */
#include "matops_util.h"

static PetscErrorCode Assemble2(Mat A, Mat B, MatAssemblyType t)
{
  PetscFunctionBegin;
  PetscCall(MatAssemblyBegin(A, t));
  PetscCall(MatAssemblyEnd(A, t));
  PetscCall(MatAssemblyBegin(B, t));
  PetscCall(MatAssemblyEnd(B, t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatSetValues(Ctx *c)
{
  Mat      A, B;
  PetscInt rs, re, n = c->n;

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  /* INSERT at existing locations */
  for (PetscInt i = rs; i < re; i += 3) {
    if (i == n / 4) continue;
    for (Mat M = A; M; M = (M == A ? B : NULL)) PetscCall(MatSetValue(M, i, PetscMax(i - 1, 0), 1.5 + i, INSERT_VALUES));
  }
  PetscCall(Assemble2(A, B, MAT_FINAL_ASSEMBLY));
  PetscCall(Post(c, A, B, "INSERT_VALUES"));
  /* ADD, through a flush assembly */
  for (PetscInt i = rs; i < re; i += 2) {
    if (i == n / 4) continue;
    for (Mat M = A; M; M = (M == A ? B : NULL)) PetscCall(MatSetValue(M, i, PetscMin(i + 1, n - 1), -2.25, ADD_VALUES));
  }
  PetscCall(Assemble2(A, B, MAT_FLUSH_ASSEMBLY));
  for (PetscInt i = rs; i < re; i += 5) {
    if (i == n / 4) continue;
    for (Mat M = A; M; M = (M == A ? B : NULL)) PetscCall(MatSetValue(M, i, i > 3 ? i - 3 : i + 3, 0.125, ADD_VALUES));
  }
  PetscCall(Assemble2(A, B, MAT_FINAL_ASSEMBLY));
  PetscCall(Post(c, A, B, "ADD_VALUES"));
  /* new locations (one in the empty row, one off-process column, one in the long row) */
  if (rs <= n / 4 && n / 4 < re)
    for (Mat M = A; M; M = (M == A ? B : NULL)) PetscCall(MatSetValue(M, n / 4, n - 1, 3.0, ADD_VALUES));
  if (rs < re)
    for (Mat M = A; M; M = (M == A ? B : NULL)) PetscCall(MatSetValue(M, rs, (rs + n / 2) % n, -4.0, ADD_VALUES));
  /* off-process row (stashed) */
  for (Mat M = A; M; M = (M == A ? B : NULL)) PetscCall(MatSetValue(M, (rs + n / 3) % n, 1, 0.75, ADD_VALUES));
  PetscCall(Assemble2(A, B, MAT_FINAL_ASSEMBLY));
  PetscCall(Post(c, A, B, "new nonzeros"));
  PetscCall(CheckStillOurs(c, B, "after new nonzeros"));
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatSetOption(Ctx *c)
{
  Mat       A, B;
  PetscBool set, flg;
  PetscInt  rs, re, n = c->n;

  PetscFunctionBegin;
  PetscCall(Pair(c, KS, &A, &B));
  PetscCall(MatSetOption(B, MAT_SYMMETRIC, PETSC_TRUE));
  PetscCall(MatSetOption(B, MAT_SPD, PETSC_TRUE));
  PetscCall(MatSetOption(B, MAT_SYMMETRY_ETERNAL, PETSC_TRUE));
  PetscCall(MatIsSymmetricKnown(B, &set, &flg));
  CHK(c, set && flg, "MAT_SYMMETRIC not known after MatSetOption");
  CMP(c, TestCompareProducts(A, B, "after MAT_SYMMETRIC"));
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  /* MAT_NEW_NONZERO_LOCATIONS false: a new location is ignored by both */
  PetscCall(Pair(c, KN, &A, &B));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt i = rs; i < re; i += 4) {
    PetscCall(MatSetValue(A, i, (i + n / 2) % n, 5.0, ADD_VALUES));
    PetscCall(MatSetValue(B, i, (i + n / 2) % n, 5.0, ADD_VALUES));
    if (i != n / 4 && i % 37 != 5) {
      PetscCall(MatSetValue(A, i, i, -1.0, ADD_VALUES));
      PetscCall(MatSetValue(B, i, i, -1.0, ADD_VALUES));
    }
  }
  PetscCall(Assemble2(A, B, MAT_FINAL_ASSEMBLY));
  PetscCall(Post(c, A, B, "MAT_NEW_NONZERO_LOCATIONS false"));
  /* MAT_IGNORE_ZERO_ENTRIES + MAT_KEEP_NONZERO_PATTERN with MatZeroRows */
  PetscCall(MatSetOption(A, MAT_KEEP_NONZERO_PATTERN, PETSC_TRUE));
  PetscCall(MatSetOption(B, MAT_KEEP_NONZERO_PATTERN, PETSC_TRUE));
  if (rs < re) {
    PetscCall(MatZeroRows(A, 1, &rs, 0.0, NULL, NULL));
    PetscCall(MatZeroRows(B, 1, &rs, 0.0, NULL, NULL));
  } else {
    PetscCall(MatZeroRows(A, 0, NULL, 0.0, NULL, NULL));
    PetscCall(MatZeroRows(B, 0, NULL, 0.0, NULL, NULL));
  }
  PetscCall(Post(c, A, B, "MAT_KEEP_NONZERO_PATTERN + MatZeroRows"));
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatResetPreallocation(Ctx *c)
{
  Mat      A, B;
  PetscInt rs, re;

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  if (!c->viaset) {
    /* MatConvert() duplicates: a duplicate has never been assembled by MatAssemblyEnd() (num_ass
       0), and MatResetPreallocation() leaves such a matrix as it is, AIJ included. The reference
       is a duplicate of A as well, so both get the same treatment. */
    Mat Adup;
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &Adup));
    PetscCall(MatDestroy(&A));
    A = Adup;
  }
  PetscCall(MatResetPreallocation(A));
  PetscCall(MatResetPreallocation(B));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt i = rs; i < re; i++)
    for (Mat M = A; M; M = (M == A ? B : NULL)) PetscCall(MatSetValue(M, i, i, 2.0 + i, INSERT_VALUES));
  PetscCall(Assemble2(A, B, MAT_FINAL_ASSEMBLY));
  PetscCall(Post(c, A, B, "after MatResetPreallocation"));
  PetscCall(CheckStillOurs(c, B, "MatResetPreallocation"));
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatSetValuesCOO(Ctx *c)
{
  Mat          A, B, M[2];
  PetscInt     rs, re, n = c->n, nz = 0, *ci, *cj;
  PetscScalar *v;
  PetscCount   cap;

  PetscFunctionBegin;
  PetscCall(MatCreate(c->comm, &A));
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(A, MATAIJ));
  PetscCall(MatCreate(c->comm, &B));
  PetscCall(MatSetSizes(B, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(B, c->family));
  PetscCall(ApplyOpts(c, B));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  cap = 8 * (re - rs) + 8;
  PetscCall(PetscMalloc3(cap, &ci, cap, &cj, cap, &v));
  for (PetscInt i = rs; i < re; i++) {
    if (i == n / 4) continue;
    for (PetscInt j = PetscMax(0, i - 2); j <= PetscMin(n - 1, i + 2); j++) {
      if (i == j && i % 37 == 5) continue;
      ci[nz]  = i;
      cj[nz]  = j;
      v[nz++] = i == j ? 6.0 : -1.0 / (1 + i % 5 + j % 3);
    }
  }
  /* a repeated entry, an ignored (negative) one and an off-process row */
  if (rs < re) {
    ci[nz]  = rs;
    cj[nz]  = rs;
    v[nz++] = 0.5;
    ci[nz]  = -1;
    cj[nz]  = rs;
    v[nz++] = 100.0;
  }
  ci[nz]  = (re + 3) % n;
  cj[nz]  = (re + 20) % n;
  v[nz++] = 0.25;
  M[0]    = A;
  M[1]    = B;
  for (int s = 0; s < 2; s++) {
    PetscInt *ti, *tj;
    PetscCall(PetscMalloc2(nz, &ti, nz, &tj));
    PetscCall(PetscArraycpy(ti, ci, nz));
    PetscCall(PetscArraycpy(tj, cj, nz));
    PetscCall(MatSetPreallocationCOO(M[s], nz, ti, tj));
    PetscCall(PetscFree2(ti, tj));
    PetscCall(MatSetValuesCOO(M[s], v, INSERT_VALUES));
  }
  PetscCall(Post(c, A, B, "MatSetValuesCOO"));
  PetscCall(CheckStillOurs(c, B, "MatSetPreallocationCOO"));
  for (PetscInt k = 0; k < nz; k++) v[k] = 2.0 * v[k] + 0.125;
  for (int s = 0; s < 2; s++) PetscCall(MatSetValuesCOO(M[s], v, INSERT_VALUES));
  PetscCall(Post(c, A, B, "MatSetValuesCOO value update (INSERT)"));
  for (int s = 0; s < 2; s++) PetscCall(MatSetValuesCOO(M[s], v, ADD_VALUES));
  PetscCall(Post(c, A, B, "MatSetValuesCOO value update (ADD)"));
  /* COO on a matrix that was assembled with MatSetValues before */
  {
    Mat A2, B2;
    PetscCall(Pair(c, KN, &A2, &B2));
    M[0] = A2;
    M[1] = B2;
    for (int s = 0; s < 2; s++) {
      PetscInt *ti, *tj;
      PetscCall(PetscMalloc2(nz, &ti, nz, &tj));
      PetscCall(PetscArraycpy(ti, ci, nz));
      PetscCall(PetscArraycpy(tj, cj, nz));
      PetscCall(MatSetPreallocationCOO(M[s], nz, ti, tj));
      PetscCall(PetscFree2(ti, tj));
      PetscCall(MatSetValuesCOO(M[s], v, INSERT_VALUES));
    }
    PetscCall(Post(c, A2, B2, "MatSetPreallocationCOO on an assembled matrix"));
    PetscCall(CheckStillOurs(c, B2, "MatSetPreallocationCOO on an assembled matrix"));
    PetscCall(Destroy4(&A2, &B2, NULL, NULL));
  }
  PetscCall(PetscFree3(ci, cj, v));
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatGetLocalSubMatrix(Ctx *c)
{
  Mat                    A, B, M[2];
  PetscInt               rs, re, cs, ce, nl, *g;
  ISLocalToGlobalMapping rmap, cmap;
  IS                     isr;

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(MatGetOwnershipRangeColumn(A, &cs, &ce));
  nl = re - rs;
  PetscCall(PetscMalloc1(nl, &g));
  for (PetscInt i = 0; i < nl; i++) g[i] = rs + i;
  PetscCall(ISLocalToGlobalMappingCreate(c->comm, 1, nl, g, PETSC_COPY_VALUES, &rmap));
  for (PetscInt i = 0; i < nl; i++) g[i] = cs + i;
  PetscCall(ISLocalToGlobalMappingCreate(c->comm, 1, nl, g, PETSC_OWN_POINTER, &cmap));
  PetscCall(ISCreateStride(c->comm, nl, 0, 1, &isr));
  M[0] = A;
  M[1] = B;
  for (int s = 0; s < 2; s++) {
    Mat L;
    PetscCall(MatSetLocalToGlobalMapping(M[s], rmap, cmap));
    PetscCall(MatGetLocalSubMatrix(M[s], isr, isr, &L));
    for (PetscInt i = 0; i + 1 < nl; i += 2) {
      if (rs + i == c->n / 4) continue;
      PetscCall(MatSetValueLocal(L, i, i + 1, 0.5 * i, ADD_VALUES));
    }
    PetscCall(MatRestoreLocalSubMatrix(M[s], isr, isr, &L));
    PetscCall(MatAssemblyBegin(M[s], MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(M[s], MAT_FINAL_ASSEMBLY));
  }
  PetscCall(Post(c, A, B, "MatSetValuesLocal through MatGetLocalSubMatrix"));
  PetscCall(ISDestroy(&isr));
  PetscCall(ISLocalToGlobalMappingDestroy(&rmap));
  PetscCall(ISLocalToGlobalMappingDestroy(&cmap));
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatBindToCPU() while PETSc's hash assembly is active (MatSetUp() without preallocation): bound
   and unbound before the values are set; bound, then destroyed unassembled (a leak fails under
   -malloc_dump); bound through the assembly, with and without a preallocation call (which ends
   the hash), used while bound, then unbound. Each assembled matrix against AIJ. At several ranks
   PETSc binds the blocks of the MPI matrix during the hash (MatBindToCPU_MPIAIJ), before they
   are ours, and a block's hash puts back its unbound operations: the use while bound fails where
   a CUDA block kept them (AIJCUSPARSE's device operations refuse a bound matrix). */
static PetscErrorCode OpMatBindToCPUDuringHash(Ctx *c)
{
  Mat A, M;

  PetscFunctionBegin;
  PetscCall(Generate(c, KN, NULL, &A));
  PetscCall(CreateUnpreallocated(c, A, &M));
  PetscCall(MatBindToCPU(M, PETSC_TRUE));
  PetscCall(MatBindToCPU(M, PETSC_FALSE));
  PetscCall(SetRowsOf(A, M));
  PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
  PetscCall(Post(c, A, M, "bound and unbound during the hash assembly"));
  PetscCall(CheckStillOurs(c, M, "MatBindToCPU during the hash assembly"));
  PetscCall(MatDestroy(&M));

  PetscCall(CreateUnpreallocated(c, A, &M));
  PetscCall(MatBindToCPU(M, PETSC_TRUE));
  PetscCall(MatDestroy(&M));

  for (int prealloc = 0; prealloc < 2; prealloc++) {
    PetscCall(CreateUnpreallocated(c, A, &M));
    PetscCall(MatBindToCPU(M, PETSC_TRUE));
    if (prealloc) {
      PetscCall(MatSeqAIJSetPreallocation(M, 8, NULL));
      PetscCall(MatMPIAIJSetPreallocation(M, 8, NULL, 8, NULL));
      PetscCall(MatSetOption(M, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    }
    PetscCall(SetRowsOf(A, M));
    PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
    PetscCall(Post(c, A, M, prealloc ? "bound during the hash assembly, preallocated, assembled" : "bound during the hash assembly, assembled"));
    PetscCall(MatBindToCPU(M, PETSC_FALSE));
    PetscCall(Post(c, A, M, prealloc ? "bound during the hash assembly, preallocated, assembled, unbound" : "bound during the hash assembly, assembled, unbound"));
    PetscCall(CheckStillOurs(c, M, "MatBindToCPU during the hash assembly, then unbound"));
    PetscCall(MatDestroy(&M));
  }
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

const Op kOpsAssembly[] = {
  {"MatSetValues", OpMatSetValues},
  {"MatSetOption", OpMatSetOption},
  {"MatResetPreallocation", OpMatResetPreallocation},
  {"MatSetValuesCOO", OpMatSetValuesCOO},
  {"MatGetLocalSubMatrix", OpMatGetLocalSubMatrix},
  {"MatBindToCPUDuringHash", OpMatBindToCPUDuringHash},
  {NULL, NULL},
};
