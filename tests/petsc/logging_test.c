static const char help[] = "What the petscspmv types log for -log_view, checked against AIJ and AIJCUSPARSE and against the\n\
copies the code makes: the flops of MatMult (2 nnz - nonzero rows) and MatMultAdd (2 nnz) are AIJ's, host and CUDA\n\
(for the CUDA types as GPU flops; MatMult's also against AIJCUSPARSE's); for the CUDA types at 2+ ranks: as many\n\
host<->device copies per MatMult and MatMultAdd as MPIAIJCUSPARSE, however the matrix was made; the CUDA types\n\
are AIJCUSPARSE underneath: a build uploads the CSR as AIJCUSPARSE's first use does (the same copies), an in-place\n\
MatConvert of an aijcusparse matrix whose device copy is current copies no CSR, a value update after MatScale (on\n\
the device) copies nothing, one after MatSetValues the values only; with -mat_spmv_free_device_csr a build copies\n\
the CSR once into a temporary buffer; on one rank no copy per product with CUDA vectors, and the staging copies of\n\
host vectors (x in; y in for MatMultAdd; y out) and of a host diagonal.\n\
  -types <t1,t2,...>  families: rgcsr, packsell, rgcsrcuda, packsellcuda\n\
  -n <n>              rows (default 300)\n";

#include "spmv_test_util.h"

#include <string.h>

#define MAXTYPES 8
#define NPROD    3 /* products per stage */

/* Nonsymmetric band matrix with empty rows, an explicit zero and a long row (a hybrid tail). */
static PetscErrorCode Generate(MPI_Comm comm, PetscInt n, Mat *A)
{
  PetscInt rs, re;

  PetscFunctionBegin;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSetUp(*A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    if (i % 7 == 3) continue; /* empty rows: MatMult's flops are 2 nnz - nonzero rows */
    for (PetscInt j = PetscMax(0, i - 2); j <= PetscMin(n - 1, i + 3); j++) {
      PetscScalar v = (i == j) ? 6.0 + (i % 3) : -0.5 / (1 + (i + 2 * j) % 4);
      if (i == n / 3 && j == i + 1) v = 0.0; /* an explicit zero counts as a stored entry */
      PetscCall(MatSetValue(*A, i, j, v, INSERT_VALUES));
    }
    if (i == n / 2 + 1)
      for (PetscInt j = 0; j < n; j += 2)
        if (PetscAbsInt(i - j) > 3) PetscCall(MatSetValue(*A, i, j, 0.01 * (j % 5), INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode EventInfo(PetscLogStage stage, const char *event, PetscEventPerfInfo *info)
{
  PetscLogEvent id;

  PetscFunctionBegin;
  PetscCall(PetscLogEventGetId(event, &id));
  PetscCall(PetscLogEventGetPerfInfo(stage, id, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* *B = MatConvert(A, family) in a -log_view stage of its own, stagename; *build: that stage's
   SpMVBuild event, which must have counted at least one build. */
static PetscErrorCode ConvertInStage(Mat A, const char *family, const char *stagename, Mat *B, PetscEventPerfInfo *build)
{
  PetscLogStage stage;

  PetscFunctionBegin;
  PetscCall(PetscLogStageRegister(stagename, &stage));
  PetscCall(PetscLogStagePush(stage));
  PetscCall(MatConvert(A, family, MAT_INITIAL_MATRIX, B));
  PetscCall(PetscLogStagePop());
  PetscCall(EventInfo(stage, "SpMVBuild", build));
  PetscCheck(build->count >= 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: no SpMVBuild event logged by MatConvert()", stagename);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckEqual(PetscLogDouble got, PetscLogDouble want, const char *what, const char *label)
{
  PetscFunctionBegin;
  PetscCheck(got == want, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: %s is %.17g, expected %.17g", label, what, (double)got, (double)want);
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  PetscEventPerfInfo mult, multadd;
} Products;

/* NPROD MatMult(B, x, y) and NPROD MatMultAdd(B, x, y, z) in a stage of their own, after one of
   each outside it (the layout is synced and the vectors' data are where the products leave
   them). */
static PetscErrorCode RunProducts(Mat B, Vec x, Vec y, Vec z, const char *stagename, Products *p)
{
  PetscLogStage stage;

  PetscFunctionBegin;
  PetscCall(VecSet(x, 1.0));
  PetscCall(VecSet(y, 0.5));
  PetscCall(MatMult(B, x, y));
  PetscCall(MatMultAdd(B, x, y, z));
  PetscCall(PetscLogStageRegister(stagename, &stage));
  PetscCall(PetscLogStagePush(stage));
  for (int k = 0; k < NPROD; k++) {
    PetscCall(MatMult(B, x, y));
    PetscCall(MatMultAdd(B, x, y, z));
  }
  PetscCall(PetscLogStagePop());
  PetscCall(EventInfo(stage, "MatMult", &p->mult));
  PetscCall(EventInfo(stage, "MatMultAdd", &p->multadd));
  PetscCheck(p->mult.count == NPROD && p->multadd.count == NPROD, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: %d MatMult and %d MatMultAdd events logged, expected %d each", stagename, p->mult.count, p->multadd.count, NPROD);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The flops of AIJ's convention for this rank's rows of the seq matrix A (one rank). */
static PetscErrorCode ExpectedFlops(Mat A, PetscLogDouble *mult, PetscLogDouble *multadd)
{
  PetscInt rs, re, nz = 0, nonzero_rows = 0;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt ncols;
    PetscCall(MatGetRow(A, i, &ncols, NULL, NULL));
    nz += ncols;
    nonzero_rows += ncols > 0;
    PetscCall(MatRestoreRow(A, i, &ncols, NULL, NULL));
  }
  *mult    = 2.0 * nz - nonzero_rows;
  *multadd = 2.0 * nz;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The host<->device copies of the products of B equal those of MPIAIJCUSPARSE (cus). */
static PetscErrorCode CheckCopiesAsCusparse(const Products *ours, const Products *cus, const char *label)
{
  PetscFunctionBegin;
  PetscCall(CheckEqual(ours->mult.CpuToGpuCount, cus->mult.CpuToGpuCount, "the host-to-device copies of MatMult (against MPIAIJCUSPARSE's)", label));
  PetscCall(CheckEqual(ours->mult.GpuToCpuCount, cus->mult.GpuToCpuCount, "the device-to-host copies of MatMult (against MPIAIJCUSPARSE's)", label));
  PetscCall(CheckEqual(ours->multadd.CpuToGpuCount, cus->multadd.CpuToGpuCount, "the host-to-device copies of MatMultAdd (against MPIAIJCUSPARSE's)", label));
  PetscCall(CheckEqual(ours->multadd.GpuToCpuCount, cus->multadd.GpuToCpuCount, "the device-to-host copies of MatMultAdd (against MPIAIJCUSPARSE's)", label));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The products of an MPI matrix of CUDA type full (same values as the MATMPIAIJ A) made through
   path k: 0 MatSetType() on an assembled duplicate of A (converted in place), 1 created as ours
   and filled with MatSetValues(), 2 COO. */
static PetscErrorCode MakeByPath(Mat A, const char *full, int k, Mat *B)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)A);
  PetscInt m, n, rs, re;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(A, &m, &n));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  if (k == 0) {
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, B));
    PetscCall(MatSetType(*B, full));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatCreate(comm, B));
  PetscCall(MatSetSizes(*B, m, n, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(*B, full));
  if (k == 1) {
    PetscCall(MatSetUp(*B));
    for (PetscInt i = rs; i < re; i++) {
      const PetscInt    *cols;
      const PetscScalar *vals;
      PetscInt           nc;
      PetscCall(MatGetRow(A, i, &nc, &cols, &vals));
      PetscCall(MatSetValues(*B, 1, &i, nc, cols, vals, INSERT_VALUES));
      PetscCall(MatRestoreRow(A, i, &nc, &cols, &vals));
    }
    PetscCall(MatAssemblyBegin(*B, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(*B, MAT_FINAL_ASSEMBLY));
  } else {
    PetscInt    *ci, *cj, nz = 0;
    PetscScalar *cv;
    for (PetscInt i = rs; i < re; i++) {
      PetscInt nc;
      PetscCall(MatGetRow(A, i, &nc, NULL, NULL));
      nz += nc;
      PetscCall(MatRestoreRow(A, i, &nc, NULL, NULL));
    }
    PetscCall(PetscMalloc3(nz, &ci, nz, &cj, nz, &cv));
    nz = 0;
    for (PetscInt i = rs; i < re; i++) {
      const PetscInt    *cols;
      const PetscScalar *vals;
      PetscInt           nc;
      PetscCall(MatGetRow(A, i, &nc, &cols, &vals));
      for (PetscInt q = 0; q < nc; q++, nz++) {
        ci[nz] = i;
        cj[nz] = cols[q];
        cv[nz] = vals[q];
      }
      PetscCall(MatRestoreRow(A, i, &nc, &cols, &vals));
    }
    PetscCall(MatSetPreallocationCOO(*B, nz, ci, cj));
    PetscCall(MatSetValuesCOO(*B, cv, INSERT_VALUES));
    PetscCall(PetscFree3(ci, cj, cv));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A build that only read a device CSR: no copy but PETSc's upload of the full row offsets of a
   compressed-row block (at most one per block; PETSc logs it as (m + 1) PetscInts, 8 bytes each
   with 64-bit indices, although the device array holds 32-bit offsets) and nothing back to the
   host. */
static PetscErrorCode CheckNoCsrCopy(const PetscEventPerfInfo *build, PetscInt m, const char *name)
{
  PetscFunctionBegin;
  PetscCheck(build->CpuToGpuCount <= 2 && build->CpuToGpuSize == (PetscLogDouble)sizeof(PetscInt) * (m + 1) * build->CpuToGpuCount, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the build copied %g bytes to the device in %g copies, not only row offsets of %" PetscInt_FMT " rows", name,
             (double)build->CpuToGpuSize, (double)build->CpuToGpuCount, m);
  PetscCall(CheckEqual(build->GpuToCpuCount, 0, "the device-to-host copies of a build from a device CSR", name));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatConvert(D, family, MAT_INPLACE_MATRIX) of a duplicate D of Acu given a local-to-global
   mapping, after a MatMult of D (its device CSR current): the build reads that CSR (no copy of it,
   CheckNoCsrCopy), D keeps the mapping, its products are AIJ's (A), and a value at a new location
   can be inserted and assembled afterwards (the layout is rebuilt), as after a conversion from AIJ. */
static PetscErrorCode FromAIJCusparseInPlace(Mat Acu, Mat A, const char *family)
{
  Mat                    D, R;
  ISLocalToGlobalMapping map, rmap, cmap;
  PetscInt               rstart, rend, N, row, col;
  char                   label[256];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(label, sizeof(label), "%s from aijcusparse in place", family));
  PetscCall(MatDuplicate(Acu, MAT_COPY_VALUES, &D));
  PetscCall(MatGetOwnershipRange(D, &rstart, &rend));
  PetscCall(MatGetSize(D, &N, NULL));
  {
    PetscInt *idx;
    PetscCall(PetscMalloc1(rend - rstart, &idx));
    for (PetscInt i = 0; i < rend - rstart; i++) idx[i] = rstart + i;
    PetscCall(ISLocalToGlobalMappingCreate(PetscObjectComm((PetscObject)D), 1, rend - rstart, idx, PETSC_OWN_POINTER, &map));
  }
  PetscCall(MatSetLocalToGlobalMapping(D, map, map));
  {
    Vec                x, y;
    PetscLogStage      stage;
    PetscEventPerfInfo build;
    PetscInt           m;
    PetscCall(MatCreateVecs(D, &x, &y));
    PetscCall(VecSet(x, 1.0));
    PetscCall(MatMult(D, x, y)); /* the device copy is current */
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(PetscLogStageRegister(label, &stage));
    PetscCall(PetscLogStagePush(stage));
    PetscCall(MatConvert(D, family, MAT_INPLACE_MATRIX, &D));
    PetscCall(PetscLogStagePop());
    PetscCall(EventInfo(stage, "SpMVBuild", &build));
    PetscCall(MatGetLocalSize(D, &m, NULL));
    PetscCall(CheckNoCsrCopy(&build, m, label));
  }
  PetscCall(TestCheckType(D, family));
  PetscCall(MatGetLocalToGlobalMapping(D, &rmap, &cmap));
  PetscCheck(rmap == map && cmap == map, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the local-to-global mapping was lost", label);
  PetscCall(TestCompareMult(A, D, label));
  /* a new nonzero: row rstart, the column half the matrix away (outside the band) */
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &R));
  row = rstart;
  col = (rstart + N / 2) % N;
  PetscCall(MatSetOption(R, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetOption(D, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  if (rend > rstart) {
    PetscCall(MatSetValue(R, row, col, 0.125, INSERT_VALUES));
    PetscCall(MatSetValue(D, row, col, 0.125, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(R, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(R, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(D, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(D, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscStrlcat(label, ", after a new nonzero", sizeof(label)));
  PetscCall(TestCompareMult(R, D, label));
  PetscCall(ISLocalToGlobalMappingDestroy(&map));
  PetscCall(MatDestroy(&R));
  PetscCall(MatDestroy(&D));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The host-to-device copies AIJCUSPARSE itself makes for the first MatMult of a fresh matrix
   with A's entries (its CSR upload). */
static PetscErrorCode AIJCusparseUpload(Mat A, const char *family, PetscEventPerfInfo *upload)
{
  Mat           Acu;
  Vec           x, y;
  PetscLogStage stage;
  char          name[128];

  PetscFunctionBegin;
  PetscCall(MatConvert(A, MATAIJCUSPARSE, MAT_INITIAL_MATRIX, &Acu));
  PetscCall(MatCreateVecs(Acu, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s: aijcusparse upload", family));
  PetscCall(PetscLogStageRegister(name, &stage));
  PetscCall(PetscLogStagePush(stage));
  PetscCall(MatMult(Acu, x, y));
  PetscCall(PetscLogStagePop());
  PetscCall(EventInfo(stage, "MatMult", upload));
  PetscCheck(upload->CpuToGpuCount >= 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "aijcusparse's first MatMult copied nothing to the device");
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&Acu));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatConvert() from the assembled aijcusparse Acu to family: a new matrix (a duplicate, whose CSR
   is uploaded by the build as for a new aijcusparse matrix; nothing copied back in the build)
   with AIJ's products (A) to rounding; again after a MatScale() of Acu by 2 on the GPU (the
   duplicate takes the scaled values): 2 A. Acu is scaled back. Then FromAIJCusparseInPlace(). */
static PetscErrorCode FromAIJCusparse(Mat Acu, Mat A, const char *family)
{
  PetscFunctionBegin;
  for (int pass = 0; pass < 2; pass++) {
    Mat                C;
    PetscEventPerfInfo build;
    char               name[256];

    if (pass == 1) PetscCall(MatScale(Acu, 2.0));
    PetscCall(PetscSNPrintf(name, sizeof(name), "%s from aijcusparse%s", family, pass ? " scaled on the GPU" : ""));
    PetscCall(ConvertInStage(Acu, family, name, &C, &build));
    PetscCall(CheckEqual(build.GpuToCpuCount, 0, "the device-to-host copies of a build", name));
    if (pass == 0) PetscCall(TestCompareMult(A, C, name));
    else {
      Mat A2; /* 2 A: exact, a power of two */
      PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &A2));
      PetscCall(MatScale(A2, 2.0));
      PetscCall(TestCompareMult(A2, C, name));
      PetscCall(MatDestroy(&A2));
    }
    PetscCall(MatDestroy(&C));
  }
  PetscCall(MatScale(Acu, 0.5));
  PetscCall(FromAIJCusparseInPlace(Acu, A, family));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* At 2+ ranks (-use_gpu_aware_mpi 0) the products of the MPI CUDA types copy between host and
   device as often as MPIAIJCUSPARSE's (cus), however the matrix was made: their halo vector is a
   CUDA vector (a host one costs a device-to-host and a host-to-device copy per product). ours: the
   products of the matrix MatConvert() made from the assembled MATMPIAIJ A. Host families (cus
   NULL): the matrices of each path have AIJ's products. */
static PetscErrorCode HaloCopies(Mat A, const char *family, const Products *ours, const Products *cus)
{
  const char *paths[] = {"MatSetType on an assembled MPIAIJ", "MatSetValues", "COO"};
  char        full[64], label[256];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(label, sizeof(label), "%s made by MatConvert of an assembled MPIAIJ", family));
  if (cus) PetscCall(CheckCopiesAsCusparse(ours, cus, label));
  PetscCall(PetscSNPrintf(full, sizeof(full), "mpiaij%s", family));
  for (int k = 0; k < 3; k++) {
    Mat      B;
    Vec      x, y, z;
    Products p;
    PetscCall(MakeByPath(A, full, k, &B));
    PetscCall(TestCheckType(B, family));
    PetscCall(PetscSNPrintf(label, sizeof(label), "%s made by %s", family, paths[k]));
    PetscCall(TestCompareMult(A, B, label));
    PetscCall(MatCreateVecs(B, &x, &y));
    PetscCall(VecDuplicate(y, &z));
    PetscCall(RunProducts(B, x, y, z, label, &p));
    if (cus) PetscCall(CheckCopiesAsCusparse(&p, cus, label));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(VecDestroy(&z));
    PetscCall(MatDestroy(&B));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RunFamily(Mat A, const char *family, PetscLogEvent ev_diag)
{
  MPI_Comm           comm = PetscObjectComm((PetscObject)A);
  PetscMPIInt        size;
  PetscBool          cuda = strstr(family, "cuda") ? PETSC_TRUE : PETSC_FALSE;
  Mat                B;
  Vec                x, y, z, xa, ya, za;
  Products           ref, ours;
  PetscEventPerfInfo build;
  PetscLogStage      stage;
  PetscInt           m, n;
  char               name[256];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(MatGetLocalSize(A, &m, &n));

  /* the build: on one rank one layout, uploaded in one logged copy of its bytes */
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s build", family));
  PetscCall(ConvertInStage(A, family, name, &B, &build));
  if (size == 1) PetscCall(CheckEqual(build.count, 1, "the number of builds", family));
  if (!cuda) {
    PetscCall(CheckEqual(build.CpuToGpuCount + build.GpuToCpuCount, 0, "the host<->device copies of a host layout's build", family));
  } else if (size == 1) {
    PetscEventPerfInfo upload, freebuild;
    MatSpMVStats       st;
    Mat                F;
    /* the layout is built from AIJCUSPARSE's device CSR, uploaded as for aijcusparse itself */
    PetscCall(AIJCusparseUpload(A, family, &upload));
    PetscCall(CheckEqual(build.CpuToGpuCount, upload.CpuToGpuCount, "the host-to-device copies of a build (against aijcusparse's upload)", family));
    PetscCall(CheckEqual(build.CpuToGpuSize, upload.CpuToGpuSize, "the bytes copied to the device by a build (against aijcusparse's upload)", family));
    PetscCall(CheckEqual(build.GpuToCpuCount, 0, "the device-to-host copies of a build", family));
    /* -mat_spmv_free_device_csr: one temporary upload of the CSR (rowptr, colidx, values) */
    PetscCall(PetscOptionsSetValue(NULL, "-mat_spmv_free_device_csr", "1"));
    PetscCall(PetscSNPrintf(name, sizeof(name), "%s build free", family));
    PetscCall(ConvertInStage(A, family, name, &F, &freebuild));
    PetscCall(PetscOptionsClearValue(NULL, "-mat_spmv_free_device_csr"));
    PetscCall(MatSpMVGetStats(F, &st));
    PetscCall(CheckEqual(freebuild.CpuToGpuCount, 1, "the host-to-device copies of a build with -mat_spmv_free_device_csr", family));
    PetscCall(CheckEqual(freebuild.CpuToGpuSize, (PetscLogDouble)(4 * (m + 1) + 12 * st.nnz), "the bytes copied by a build with -mat_spmv_free_device_csr (the CSR)", family));
    PetscCall(TestCompareMult(A, F, name));
    PetscCall(MatDestroy(&F));
  }

  /* the flops of the products: AIJ's, on every rank */
  PetscCall(MatCreateVecs(A, &xa, &ya));
  PetscCall(VecDuplicate(ya, &za));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s aij", family));
  PetscCall(RunProducts(A, xa, ya, za, name, &ref));
  PetscCall(MatCreateVecs(B, &x, &y));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s products", family));
  PetscCall(RunProducts(B, x, y, z, name, &ours));
  PetscCall(CheckEqual(ours.mult.flops, ref.mult.flops, "the flops of MatMult (against AIJ)", family));
  PetscCall(CheckEqual(ours.multadd.flops, ref.multadd.flops, "the flops of MatMultAdd (against AIJ)", family));
  if (size == 1) {
    PetscLogDouble fm, fa;
    PetscCall(ExpectedFlops(A, &fm, &fa));
    PetscCall(CheckEqual(ours.mult.flops, NPROD * fm, "the flops of MatMult (2 nnz - nonzero rows)", family));
    PetscCall(CheckEqual(ours.multadd.flops, NPROD * fa, "the flops of MatMultAdd (2 nnz)", family));
  }
  if (!cuda) {
    PetscCall(CheckEqual(ours.mult.GpuFlops + ours.multadd.GpuFlops, 0, "the GPU flops of the host kernels", family));
    if (size > 1) PetscCall(HaloCopies(A, family, &ours, NULL));
  } else {
    Mat                Acu;
    Vec                xc, yc, zc;
    Products           cus;
    PetscEventPerfInfo values, diag;
    Vec                d;

    /* every flop of ours is a GPU flop, and AIJCUSPARSE logs the same */
    PetscCall(CheckEqual(ours.mult.GpuFlops, ours.mult.flops, "the GPU flops of MatMult", family));
    PetscCall(CheckEqual(ours.multadd.GpuFlops, ours.multadd.flops, "the GPU flops of MatMultAdd", family));
    PetscCall(MatConvert(A, MATAIJCUSPARSE, MAT_INITIAL_MATRIX, &Acu));
    PetscCall(MatCreateVecs(Acu, &xc, &yc));
    PetscCall(VecDuplicate(yc, &zc));
    PetscCall(PetscSNPrintf(name, sizeof(name), "%s aijcusparse", family));
    PetscCall(RunProducts(Acu, xc, yc, zc, name, &cus));
    PetscCall(CheckEqual(ours.mult.GpuFlops, cus.mult.GpuFlops, "the GPU flops of MatMult (against AIJCUSPARSE)", family));
    /* (AIJCUSPARSE's MatMultAdd event holds its kernel's 2 nnz plus the flops of the VecAXPY
       that adds y when z != y: ours adds y in the kernel, so only the kernel's are compared) */
    PetscCall(CheckEqual(ours.multadd.GpuFlops, ref.multadd.flops, "the GPU flops of MatMultAdd (against AIJ's 2 nnz)", family));
    if (size > 1) PetscCall(HaloCopies(A, family, &ours, &cus));
    PetscCall(FromAIJCusparse(Acu, A, family));
    PetscCall(VecDestroy(&xc));
    PetscCall(VecDestroy(&yc));
    PetscCall(VecDestroy(&zc));
    PetscCall(MatDestroy(&Acu));

    if (size == 1) {
      Vec          xh, yh, zh;
      Products     host;
      MatSpMVStats st;

      /* CUDA vectors: a product copies nothing between host and device */
      PetscCall(CheckEqual(ours.mult.CpuToGpuCount + ours.mult.GpuToCpuCount, 0, "the host<->device copies of MatMult with CUDA vectors", family));
      PetscCall(CheckEqual(ours.multadd.CpuToGpuCount + ours.multadd.GpuToCpuCount, 0, "the host<->device copies of MatMultAdd with CUDA vectors", family));

      /* host vectors: staged through device buffers, one logged copy per staged vector */
      PetscCall(VecCreateSeq(PETSC_COMM_SELF, n, &xh));
      PetscCall(VecCreateSeq(PETSC_COMM_SELF, m, &yh));
      PetscCall(VecDuplicate(yh, &zh));
      PetscCall(PetscSNPrintf(name, sizeof(name), "%s host vectors", family));
      PetscCall(RunProducts(B, xh, yh, zh, name, &host));
      PetscCall(CheckEqual(host.mult.CpuToGpuCount, NPROD, "the host-to-device copies of MatMult with host vectors (x)", family));
      PetscCall(CheckEqual(host.mult.CpuToGpuSize, NPROD * 8.0 * n, "the bytes copied to the device by MatMult with host vectors", family));
      PetscCall(CheckEqual(host.mult.GpuToCpuCount, NPROD, "the device-to-host copies of MatMult with host vectors (y)", family));
      PetscCall(CheckEqual(host.mult.GpuToCpuSize, NPROD * 8.0 * m, "the bytes copied to the host by MatMult with host vectors", family));
      PetscCall(CheckEqual(host.multadd.CpuToGpuCount, 2 * NPROD, "the host-to-device copies of MatMultAdd with host vectors (x, y)", family));
      PetscCall(CheckEqual(host.multadd.CpuToGpuSize, NPROD * 8.0 * (n + m), "the bytes copied to the device by MatMultAdd with host vectors", family));
      PetscCall(CheckEqual(host.multadd.GpuToCpuCount, NPROD, "the device-to-host copies of MatMultAdd with host vectors (y)", family));
      PetscCall(CheckEqual(host.multadd.GpuToCpuSize, NPROD * 8.0 * m, "the bytes copied to the host by MatMultAdd with host vectors", family));
      PetscCall(CheckEqual(host.mult.GpuFlops, ours.mult.GpuFlops, "the GPU flops of MatMult with host vectors", family));

      /* a value update after MatScale(), which AIJCUSPARSE does on the device: nothing copied */
      PetscCall(MatSpMVGetStats(B, &st));
      PetscCall(PetscSNPrintf(name, sizeof(name), "%s values", family));
      PetscCall(PetscLogStageRegister(name, &stage));
      PetscCall(PetscLogStagePush(stage));
      PetscCall(MatScale(B, 2.0));
      PetscCall(MatMult(B, x, y));
      PetscCall(PetscLogStagePop());
      PetscCall(EventInfo(stage, "SpMVValues", &values));
      PetscCall(CheckEqual(values.count, 1, "the number of value updates", family));
      PetscCall(CheckEqual(values.CpuToGpuCount + values.GpuToCpuCount, 0, "the host<->device copies of a value update after MatScale (device values)", family));
      /* after MatSetValues() (host values newer): AIJCUSPARSE uploads the values only */
      PetscCall(PetscSNPrintf(name, sizeof(name), "%s host values", family));
      PetscCall(PetscLogStageRegister(name, &stage));
      PetscCall(PetscLogStagePush(stage));
      PetscCall(MatSetValue(B, 0, 0, 8.0, INSERT_VALUES));
      PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
      PetscCall(MatMult(B, x, y));
      PetscCall(PetscLogStagePop());
      PetscCall(EventInfo(stage, "SpMVValues", &values));
      PetscCall(CheckEqual(values.count, 1, "the number of value updates after MatSetValues", family));
      PetscCall(CheckEqual(values.CpuToGpuCount, 1, "the host-to-device copies of a value update after MatSetValues", family));
      PetscCall(CheckEqual(values.CpuToGpuSize, (PetscLogDouble)(8 * st.nnz), "the bytes copied to the device by a value update (the CSR values)", family));
      PetscCall(CheckEqual(values.GpuToCpuCount, 0, "the device-to-host copies of a value update after MatSetValues", family));

      /* the diagonal: copied to a host vector, not to a CUDA one */
      PetscCall(PetscSNPrintf(name, sizeof(name), "%s diagonal", family));
      PetscCall(PetscLogStageRegister(name, &stage));
      PetscCall(PetscLogStagePush(stage));
      PetscCall(MatCreateVecs(B, NULL, &d));
      PetscCall(PetscLogEventBegin(ev_diag, B, 0, 0, 0));
      PetscCall(MatGetDiagonal(B, d));
      PetscCall(PetscLogEventEnd(ev_diag, B, 0, 0, 0));
      PetscCall(EventInfo(stage, "TestDiagonal", &diag));
      PetscCall(CheckEqual(diag.CpuToGpuCount + diag.GpuToCpuCount, 0, "the host<->device copies of MatGetDiagonal into a CUDA vector", family));
      PetscCall(PetscLogEventBegin(ev_diag, B, 0, 0, 0));
      PetscCall(MatGetDiagonal(B, yh));
      PetscCall(PetscLogEventEnd(ev_diag, B, 0, 0, 0));
      PetscCall(PetscLogStagePop());
      PetscCall(EventInfo(stage, "TestDiagonal", &diag));
      PetscCall(CheckEqual(diag.GpuToCpuCount, 1, "the device-to-host copies of MatGetDiagonal into a host vector", family));
      PetscCall(CheckEqual(diag.GpuToCpuSize, 8.0 * PetscMin(m, n), "the bytes copied to the host by MatGetDiagonal", family));
      PetscCall(CheckEqual(diag.CpuToGpuCount, 0, "the host-to-device copies of MatGetDiagonal", family));
      PetscCall(VecDestroy(&d));
      PetscCall(VecDestroy(&xh));
      PetscCall(VecDestroy(&yh));
      PetscCall(VecDestroy(&zh));
    }
  }
  PetscCall(PetscPrintf(comm, "%s: MatMult %g flops, MatMultAdd %g flops per product on rank 0 (AIJ's)\n", family, ours.mult.flops / NPROD, ours.multadd.flops / NPROD));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&za));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char         *types[MAXTYPES];
  PetscInt      ntypes = MAXTYPES, n = 300;
  PetscBool     flg;
  Mat           A;
  PetscLogEvent ev_diag;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscSpMVInitializePackage());
  PetscCall(PetscLogDefaultBegin());
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", types, &ntypes, &flg));
  PetscCheck(flg && ntypes > 0, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "give the families with -types rgcsr,packsell,...");
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscLogEventRegister("TestDiagonal", MAT_CLASSID, &ev_diag));
  PetscCall(Generate(PETSC_COMM_WORLD, n, &A));
  for (PetscInt t = 0; t < ntypes; t++) {
    PetscCall(RunFamily(A, types[t], ev_diag));
    PetscCall(PetscFree(types[t]));
  }
  PetscCall(MatDestroy(&A));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS\n"));
  PetscCall(PetscFinalize());
  return 0;
}
