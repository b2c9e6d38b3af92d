static const char help[] = "Assembly paths of the petscspmv types against AIJ on generated matrices:\n\
preallocated MatSetValues with off-process entries, MatSetUp without preallocation (hash),\n\
COO (twice), new nonzeros after assembly (MPI disassembly), options set before preallocation\n\
and through MatSetFromOptions with a prefix. The matrices have empty rows, a dense row,\n\
explicit zeros; they may be rectangular and rank 0 may own no rows.\n\
  -types <t1,t2,...>  families: rgcsr, packsell, rgcsrcuda, packsellcuda\n\
  -M <rows> -N <cols> global size (default 600 x 450)\n\
  -rank0_empty        rank 0 owns no rows and no columns\n";

#include "spmv_test_util.h"

#include <string.h>

#define MAXTYPES 8
#define MAXROW   4096

typedef struct {
  PetscInt M, N, m, n; /* global and local sizes */
  PetscInt rstart, rend, cstart, cend;
} Layout;

/* Row i of the generated matrix: empty rows, one dense row, explicit zeros, irregular lengths. */
static PetscInt RowEntries(const Layout *L, PetscInt i, PetscInt cols[], PetscScalar vals[])
{
  PetscInt n = 0;
  if (i % 7 == 3) return 0;
  if (i == L->M / 2) {
    for (PetscInt j = 0; j < L->N; j++, n++) {
      cols[n] = j;
      vals[n] = (j % 3 == 0) ? 0.0 : 1.0 + (PetscReal)((i + j) % 11) / 7.0;
    }
    return n;
  }
  {
    const PetscInt len = PetscMin(L->N, 1 + (i * 37) % 23);
    for (PetscInt k = 0; k < len; k++) {
      PetscInt c = (i * 13 + k * k * 7 + k * 97) % L->N, dup = 0;
      for (PetscInt q = 0; q < n; q++) dup |= (cols[q] == c);
      if (dup) continue;
      cols[n] = c;
      vals[n] = ((i + c) % 17 == 0) ? 0.0 : PetscSinReal((PetscReal)(i + 3 * c)) * 2.5;
      n++;
    }
  }
  return n;
}

static PetscErrorCode MakeLayout(MPI_Comm comm, PetscInt M, PetscInt N, PetscBool rank0_empty, Layout *L)
{
  PetscMPIInt size, rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  L->M = M;
  L->N = N;
  if (rank0_empty && size > 1) {
    L->m = rank ? M / (size - 1) + ((rank - 1) < M % (size - 1)) : 0;
    L->n = rank ? N / (size - 1) + ((rank - 1) < N % (size - 1)) : 0;
  } else {
    L->m = PETSC_DECIDE;
    L->n = PETSC_DECIDE;
    PetscCall(PetscSplitOwnership(comm, &L->m, &L->M));
    PetscCall(PetscSplitOwnership(comm, &L->n, &L->N));
  }
  PetscCallMPI(MPI_Scan(&L->m, &L->rend, 1, MPIU_INT, MPI_SUM, comm));
  PetscCallMPI(MPI_Scan(&L->n, &L->cend, 1, MPIU_INT, MPI_SUM, comm));
  L->rstart = L->rend - L->m;
  L->cstart = L->cend - L->n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Inserts every entry with ADD_VALUES; rows i % 5 == 0 get half of each value from the next
   rank (off-process entries through the stash). */
static PetscErrorCode Insert(Mat A, const Layout *L, PetscScalar factor)
{
  PetscMPIInt size, rank;
  PetscInt    cols[MAXROW], ncols, rows[2];
  PetscScalar vals[MAXROW];
  MPI_Comm    comm = PetscObjectComm((PetscObject)A);
  PetscInt    prev_rstart, prev_rend;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  /* rows of the previous rank: this rank adds their second halves */
  rows[0] = L->rstart;
  rows[1] = L->rend;
  {
    PetscInt all[2 * 64];
    PetscCheck(size <= 64, comm, PETSC_ERR_SUP, "at most 64 ranks");
    PetscCallMPI(MPI_Allgather(rows, 2, MPIU_INT, all, 2, MPIU_INT, comm));
    prev_rstart = all[2 * ((rank + size - 1) % size)];
    prev_rend   = all[2 * ((rank + size - 1) % size) + 1];
  }
  for (PetscInt i = L->rstart; i < L->rend; i++) {
    ncols = RowEntries(L, i, cols, vals);
    for (PetscInt k = 0; k < ncols; k++) vals[k] *= (i % 5 == 0 && size > 1) ? 0.5 * factor : factor;
    PetscCall(MatSetValues(A, 1, &i, ncols, cols, vals, ADD_VALUES));
  }
  if (size > 1) {
    for (PetscInt i = prev_rstart; i < prev_rend; i++) {
      if (i % 5) continue;
      ncols = RowEntries(L, i, cols, vals);
      for (PetscInt k = 0; k < ncols; k++) vals[k] *= 0.5 * factor;
      PetscCall(MatSetValues(A, 1, &i, ncols, cols, vals, ADD_VALUES));
    }
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Preallocate(Mat A, const Layout *L)
{
  PetscInt   *dnnz, *onnz, cols[MAXROW];
  PetscScalar vals[MAXROW];

  PetscFunctionBegin;
  PetscCall(PetscCalloc2(L->m + 1, &dnnz, L->m + 1, &onnz));
  for (PetscInt i = L->rstart; i < L->rend; i++) {
    const PetscInt ncols = RowEntries(L, i, cols, vals);
    for (PetscInt k = 0; k < ncols; k++) {
      if (cols[k] >= L->cstart && cols[k] < L->cend) dnnz[i - L->rstart]++;
      else onnz[i - L->rstart]++;
    }
  }
  PetscCall(MatXAIJSetPreallocation(A, 1, dnnz, onnz, NULL, NULL));
  PetscCall(PetscFree2(dnnz, onnz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* COO triplets of the local rows, each entry split in two duplicates; plus, for rows i % 5 == 0
   of the next rank, entries this rank contributes (remote). The arrays are fresh each call. */
static PetscErrorCode COOEntries(const Layout *L, MPI_Comm comm, PetscScalar factor, PetscCount *n, PetscInt **ci, PetscInt **cj, PetscScalar **cv)
{
  PetscInt    cols[MAXROW], cnt = 0, next_rstart, next_rend;
  PetscScalar vals[MAXROW];
  PetscMPIInt size, rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  {
    PetscInt rows[2] = {L->rstart, L->rend}, all[2 * 64];
    PetscCallMPI(MPI_Allgather(rows, 2, MPIU_INT, all, 2, MPIU_INT, comm));
    next_rstart = all[2 * ((rank + 1) % size)];
    next_rend   = all[2 * ((rank + 1) % size) + 1];
  }
  for (int pass = 0; pass < 2; pass++) {
    if (pass) PetscCall(PetscMalloc3(cnt, ci, cnt, cj, cnt, cv));
    cnt = 0;
    for (PetscInt i = L->rstart; i < L->rend; i++) {
      const PetscInt ncols = RowEntries(L, i, cols, vals);
      for (PetscInt k = 0; k < ncols; k++)
        for (int d = 0; d < 2; d++, cnt++)
          if (pass) {
            (*ci)[cnt] = i;
            (*cj)[cnt] = cols[k];
            (*cv)[cnt] = 0.5 * factor * vals[k] * (size > 1 && i % 5 == 0 ? (d ? 0.0 : 1.0) : 1.0);
          }
    }
    if (size > 1)
      for (PetscInt i = next_rstart; i < next_rend; i++) {
        if (i % 5) continue;
        const PetscInt ncols = RowEntries(L, i, cols, vals);
        for (PetscInt k = 0; k < ncols; k++, cnt++)
          if (pass) {
            (*ci)[cnt] = i;
            (*cj)[cnt] = cols[k];
            (*cv)[cnt] = 0.5 * factor * vals[k];
          }
      }
  }
  *n = cnt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef enum {
  PATH_PREALLOC,
  PATH_HASH,
  PATH_COO
} Path;
static const char *PathNames[] = {"preallocated", "hash", "COO"};

static PetscErrorCode Build(MPI_Comm comm, const Layout *L, MatType type, Path path, PetscScalar factor, Mat *A)
{
  PetscFunctionBegin;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, L->m, L->n, L->M, L->N));
  PetscCall(MatSetType(*A, type));
  if (path == PATH_PREALLOC) {
    PetscCall(Preallocate(*A, L));
    PetscCall(Insert(*A, L, factor));
  } else if (path == PATH_HASH) {
    PetscCall(MatSetUp(*A));
    PetscCall(Insert(*A, L, factor));
  } else {
    PetscCount   n;
    PetscInt    *ci, *cj;
    PetscScalar *cv;
    PetscCall(COOEntries(L, comm, factor, &n, &ci, &cj, &cv));
    PetscCall(MatSetPreallocationCOO(*A, n, ci, cj));
    PetscCall(MatSetValuesCOO(*A, cv, ADD_VALUES));
    PetscCall(PetscFree3(ci, cj, cv));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* New nonzeros after assembly, some of them in columns no rank used before (disassembly). */
static PetscErrorCode AddNewNonzeros(Mat A, const Layout *L)
{
  PetscFunctionBegin;
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  for (PetscInt i = L->rstart; i < L->rend; i++) {
    if (i % 3) continue;
    PetscInt    c = (i * 31 + 5) % L->N;
    PetscScalar v = 0.5;
    PetscCall(MatSetValues(A, 1, &i, 1, &c, &v, ADD_VALUES));
    c = L->N - 1 - (i % 4);
    PetscCall(MatSetValues(A, 1, &i, 1, &c, &v, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RunPaths(MPI_Comm comm, const Layout *L, const char *family)
{
  char what[256];

  PetscFunctionBegin;
  for (int p = PATH_PREALLOC; p <= PATH_COO; p++) {
    Mat A, B;
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s %s", family, PathNames[p]));
    PetscCall(Build(comm, L, MATAIJ, (Path)p, 1.0, &A));
    PetscCall(Build(comm, L, family, (Path)p, 1.0, &B));
    PetscCall(TestCheckType(B, family));
    PetscCall(TestCompareProducts(A, B, what));
    if (p == PATH_COO) { /* new values through the COO path: no assembly, the layout follows lazily */
      PetscCount   n;
      PetscInt    *ci, *cj;
      PetscScalar *cv;
      PetscCall(COOEntries(L, comm, -3.0, &n, &ci, &cj, &cv));
      PetscCall(MatSetValuesCOO(A, cv, INSERT_VALUES));
      PetscCall(MatSetValuesCOO(B, cv, INSERT_VALUES));
      PetscCall(PetscFree3(ci, cj, cv));
      PetscCall(PetscSNPrintf(what, sizeof(what), "%s COO new values", family));
      PetscCall(TestCompareProducts(A, B, what));
    }
    PetscCall(AddNewNonzeros(A, L));
    PetscCall(AddNewNonzeros(B, L));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s %s + new nonzeros", family, PathNames[p]));
    PetscCall(TestCompareProducts(A, B, what));
    PetscCall(MatDestroy(&A));
    PetscCall(MatDestroy(&B));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Options set with the setters between MatSetType() and preallocation are used by the build. */
static PetscErrorCode RunOptionsBeforeAssembly(MPI_Comm comm, const Layout *L, const char *family)
{
  Mat          A, B;
  PetscBool    rg = strstr(family, "rgcsr") ? PETSC_TRUE : PETSC_FALSE;
  MatSpMVStats st;
  PetscInt     iv;
  const char  *sv;
  char         what[256];

  PetscFunctionBegin;
  PetscCall(Build(comm, L, MATAIJ, PATH_PREALLOC, 1.0, &A));
  PetscCall(MatCreate(comm, &B));
  PetscCall(MatSetSizes(B, L->m, L->n, L->M, L->N));
  PetscCall(MatSetType(B, family));
  if (rg) {
    PetscCall(MatRgCSRSetGroupSize(B, 64));
    PetscCall(MatRgCSRSetHybrid(B, "none"));
  } else {
    PetscCall(MatPackSELLSetSliceHeight(B, 64));
    PetscCall(MatPackSELLSetSigma(B, 128));
    PetscCall(MatPackSELLSetValueFormat(B, "exact"));
    PetscCall(MatPackSELLSetHybrid(B, "2"));
  }
  PetscCall(Preallocate(B, L));
  PetscCall(Insert(B, L, 1.0));
  PetscCall(MatSpMVGetStats(B, &st));
  if (rg) {
    PetscCall(MatRgCSRGetGroupSize(B, &iv));
    PetscCall(MatRgCSRGetHybrid(B, &sv));
    PetscCheck(iv == 64 && !strcmp(sv, "none"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "getters: group size %" PetscInt_FMT ", hybrid %s", iv, sv);
    PetscCheck(st.stored_slots % 64 == 0 && st.tail_nnz == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "group size 64, no tail expected: %" PetscInt64_FMT " slots, %" PetscInt64_FMT " in the tail", st.stored_slots, st.tail_nnz);
  } else {
    PetscCall(MatPackSELLGetSliceHeight(B, &iv));
    PetscCheck(iv == 64, PETSC_COMM_SELF, PETSC_ERR_PLIB, "slice height %" PetscInt_FMT, iv);
    PetscCall(MatPackSELLGetValueFormat(B, &sv));
    PetscCheck(!strcmp(sv, "exact"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "value format %s", sv);
    PetscCheck(st.stored_slots % 64 == 0 && st.hybrid_width <= 2 && (st.nnz == 0 || st.tail_nnz > 0), PETSC_COMM_SELF, PETSC_ERR_PLIB, "slice height 64 and K = 2 expected: %" PetscInt64_FMT " slots, K %" PetscInt_FMT ", tail %" PetscInt64_FMT, st.stored_slots, st.hybrid_width, st.tail_nnz);
  }
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s options before assembly", family));
  PetscCall(TestCompareProducts(A, B, what)); /* exact: lossless bound */
  PetscCall(MatDestroy(&B));

  /* -<prefix>mat_type and a format option through MatSetFromOptions */
  PetscCall(PetscOptionsSetValue(NULL, "-lay_mat_type", family));
  PetscCall(PetscOptionsSetValue(NULL, rg ? "-lay_mat_rgcsr_group_size" : "-lay_mat_packsell_slice_height", "96"));
  PetscCall(MatCreate(comm, &B));
  PetscCall(MatSetSizes(B, L->m, L->n, L->M, L->N));
  PetscCall(MatSetOptionsPrefix(B, "lay_"));
  PetscCall(MatSetFromOptions(B));
  PetscCall(PetscOptionsClearValue(NULL, "-lay_mat_type"));
  PetscCall(PetscOptionsClearValue(NULL, rg ? "-lay_mat_rgcsr_group_size" : "-lay_mat_packsell_slice_height"));
  PetscCall(TestCheckType(B, family));
  if (rg) PetscCall(MatRgCSRGetGroupSize(B, &iv));
  else PetscCall(MatPackSELLGetSliceHeight(B, &iv));
  PetscCheck(iv == 96, PETSC_COMM_SELF, PETSC_ERR_PLIB, "option from the database not applied: %" PetscInt_FMT, iv);
  PetscCall(MatSetUp(B));
  PetscCall(Insert(B, L, 1.0));
  PetscCall(MatSpMVGetStats(B, &st));
  PetscCheck(st.stored_slots % 96 == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%" PetscInt64_FMT " slots: not built with 96 rows per group/slice", st.stored_slots);
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s options from the database", family));
  PetscCall(TestCompareProducts(A, B, what));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char     *types[MAXTYPES];
  PetscInt  ntypes = MAXTYPES, M = 600, N = 450;
  PetscBool flg, rank0_empty = PETSC_FALSE;
  Layout    rect, square;
  MPI_Comm  comm;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscSpMVInitializePackage());
  comm = PETSC_COMM_WORLD;
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", types, &ntypes, &flg));
  PetscCheck(flg && ntypes > 0, comm, PETSC_ERR_USER_INPUT, "give the families with -types rgcsr,packsell,...");
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-M", &M, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-N", &N, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-rank0_empty", &rank0_empty, NULL));
  PetscCheck(N <= MAXROW, comm, PETSC_ERR_SUP, "at most %d columns", MAXROW);
  PetscCall(MakeLayout(comm, M, N, rank0_empty, &rect));
  PetscCall(MakeLayout(comm, M, M, rank0_empty, &square));

  for (PetscInt t = 0; t < ntypes; t++) {
    /* exact values for PackSELL: every path must reproduce AIJ to rounding */
    PetscCall(PetscOptionsSetValue(NULL, "-mat_packsell_value_format", "exact"));
    PetscCall(PetscPrintf(comm, "%s: %" PetscInt_FMT " x %" PetscInt_FMT "\n", types[t], M, N));
    PetscCall(RunPaths(comm, &rect, types[t]));
    PetscCall(PetscPrintf(comm, "%s: %" PetscInt_FMT " x %" PetscInt_FMT "\n", types[t], M, M));
    PetscCall(RunPaths(comm, &square, types[t]));
    /* lossy values through the same paths (fp16, asked for: the default is exact) */
    PetscCall(PetscOptionsSetValue(NULL, "-mat_packsell_value_format", "fp16"));
    if (strstr(types[t], "packsell")) PetscCall(RunPaths(comm, &square, types[t]));
    PetscCall(PetscOptionsClearValue(NULL, "-mat_packsell_value_format"));
    PetscCall(RunOptionsBeforeAssembly(comm, &square, types[t]));
  }
  PetscCall(PetscPrintf(comm, "PASS\n"));
  for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
  PetscCall(PetscFinalize());
  return 0;
}
