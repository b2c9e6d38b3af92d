static const char help[] = "The preconditioners users run, with our types as the matrix, against the base type in the same\n\
run: each KSP/PC combination solves a 3-D variable-coefficient Laplacian to rtol 1e-8 with the base type\n\
(aijcusparse for the CUDA families, aij for the host ones) and with each family; ours must take the same\n\
iterations (within 2%, at least 1), reach the same true residual order (exact matrix, within 10x) and,\n\
for the CUDA families, copy no more often between host and device in PCSetUp and KSPSolve together than\n\
the base type. Then COO assembly from device values (CUDA families): no device-to-host copy, AIJ's products.\n\
  -types <t1,t2,...>  families (rgcsr, packsell, rgcsrcuda, packsellcuda)\n\
  -n <n>              grid points per direction (default 20)\n\
  -cases <c1,...>     a subset of the cases (names as printed)\n";

#include "spmv_test_util.h"

#include <petscksp.h>
#include <string.h>

#define MAXTYPES 8

/* 7-point Laplacian on n^3 with coefficients varying over [1, 10] (symmetric positive definite). */
static PetscErrorCode Generate(MPI_Comm comm, PetscInt n, Mat *A)
{
  PetscInt N = n * n * n, rs, re;

  PetscFunctionBegin;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, N, N));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSeqAIJSetPreallocation(*A, 7, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 7, NULL, 4, NULL));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt row = rs; row < re; row++) {
    const PetscInt i = row % n, j = (row / n) % n, k = row / (n * n);
    const PetscInt off[6][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
    PetscScalar    diag      = 0;
    for (int q = 0; q < 6; q++) {
      const PetscInt ii = i + off[q][0], jj = j + off[q][1], kk = k + off[q][2];
      /* face coefficient: symmetric in the two cells */
      const PetscScalar c = 1.0 + 9.0 * (((2 * i + off[q][0]) * 7 + (2 * j + off[q][1]) * 13 + (2 * k + off[q][2]) * 5 + 1000) % 17) / 16.0;
      diag += c;
      if (ii < 0 || ii >= n || jj < 0 || jj >= n || kk < 0 || kk >= n) continue;
      PetscCall(MatSetValue(*A, row, ii + n * (jj + n * kk), -c, INSERT_VALUES));
    }
    PetscCall(MatSetValue(*A, row, row, diag, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(*A, MAT_SPD, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  const char *name, *ksp, *pc, *sub; /* sub: the block solver of bjacobi/asm, NULL for the default */
  PetscBool   sor_symmetric;
  int         ranks; /* 0: any, 1: one rank only, 2: two or more ranks only */
} Case;

static const Case kCases[] = {
  {"cg_jacobi", KSPCG, PCJACOBI, NULL, PETSC_FALSE, 0},        {"cg_ilu", KSPCG, PCILU, NULL, PETSC_FALSE, 1},           {"cg_icc", KSPCG, PCICC, NULL, PETSC_FALSE, 1},   {"cg_bjacobi_ilu", KSPCG, PCBJACOBI, PCILU, PETSC_FALSE, 0},
  {"cg_bjacobi_icc", KSPCG, PCBJACOBI, PCICC, PETSC_FALSE, 2}, {"gmres_asm", KSPGMRES, PCASM, NULL, PETSC_FALSE, 0},     {"cg_gamg", KSPCG, PCGAMG, NULL, PETSC_FALSE, 0}, {"cg_ssor", KSPCG, PCSOR, NULL, PETSC_TRUE, 0},
  {"gmres_jacobi", KSPGMRES, PCJACOBI, NULL, PETSC_FALSE, 0},  {"bicg_jacobi", KSPBICG, PCJACOBI, NULL, PETSC_FALSE, 0},
};

typedef struct {
  PetscInt           its;
  PetscReal          true_residual;
  KSPConvergedReason reason;
  PetscEventPerfInfo solve, setup;
} Result;

static PetscErrorCode EventInfo(PetscLogStage stage, const char *event, PetscEventPerfInfo *info)
{
  PetscLogEvent id;

  PetscFunctionBegin;
  PetscCall(PetscLogEventGetId(event, &id));
  PetscCall(PetscLogEventGetPerfInfo(stage, id, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Solves B x = b (b = A ones, x0 = 0) with case c in a log stage of its own; the true residual
   ||b - A x|| / ||b|| with the exact AIJ matrix A. */
static PetscErrorCode Solve(Mat A, Mat B, const Case *c, const char *family, Result *r)
{
  KSP           ksp;
  PC            pc;
  Vec           x, b, xa, ba, ra;
  PetscLogStage stage;
  PetscReal     nb;
  char          name[128];

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(A, &xa, &ba));
  PetscCall(VecDuplicate(ba, &ra));
  PetscCall(VecSet(xa, 1.0));
  PetscCall(MatMult(A, xa, ba));
  PetscCall(MatCreateVecs(B, &x, &b));
  PetscCall(TestCopyValues(ba, b));
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), &ksp));
  PetscCall(KSPSetOperators(ksp, B, B));
  PetscCall(KSPSetType(ksp, c->ksp));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 2000));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  if (!strcmp(c->ksp, KSPBICG)) PetscCall(KSPSetNormType(ksp, KSP_NORM_PRECONDITIONED));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, c->pc));
  if (c->sor_symmetric) PetscCall(PCSORSetSymmetric(pc, SOR_LOCAL_SYMMETRIC_SWEEP));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s %s", c->name, family));
  PetscCall(PetscLogStageRegister(name, &stage));
  PetscCall(PetscLogStagePush(stage));
  PetscCall(KSPSetUp(ksp));
  if (c->sub) {
    KSP      *sub;
    PetscInt  nlocal;
    PetscBool isbj;
    PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCBJACOBI, &isbj));
    if (isbj) PetscCall(PCBJacobiGetSubKSP(pc, &nlocal, NULL, &sub));
    else PetscCall(PCASMGetSubKSP(pc, &nlocal, NULL, &sub));
    for (PetscInt i = 0; i < nlocal; i++) {
      PC spc;
      PetscCall(KSPGetPC(sub[i], &spc));
      PetscCall(PCSetType(spc, c->sub));
    }
  }
  PetscCall(PCSetUp(pc));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(PetscLogStagePop());
  PetscCall(EventInfo(stage, "KSPSolve", &r->solve));
  PetscCall(EventInfo(stage, "PCSetUp", &r->setup));
  PetscCall(KSPGetIterationNumber(ksp, &r->its));
  PetscCall(KSPGetConvergedReason(ksp, &r->reason));
  PetscCall(TestCopyValues(x, xa));
  PetscCall(MatMult(A, xa, ra));
  PetscCall(VecAYPX(ra, -1.0, ba));
  PetscCall(VecNorm(ra, NORM_2, &r->true_residual));
  PetscCall(VecNorm(ba, NORM_2, &nb));
  r->true_residual /= nb;
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&ba));
  PetscCall(VecDestroy(&ra));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckCase(Mat A, const Case *c, const char *base, char *types[], PetscInt ntypes, PetscBool cuda, int *failures)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)A);
  Mat      Bb;
  Result   rb;

  PetscFunctionBegin;
  PetscCall(MatConvert(A, base, MAT_INITIAL_MATRIX, &Bb));
  PetscCall(Solve(A, Bb, c, base, &rb));
  PetscCall(MatDestroy(&Bb));
  PetscCall(PetscPrintf(comm, "%-16s %-14s its %4" PetscInt_FMT " true residual %.2e copies solve %g/%g setup %g/%g (host->device/device->host)\n", c->name, base, rb.its, (double)rb.true_residual, (double)rb.solve.CpuToGpuCount, (double)rb.solve.GpuToCpuCount,
                        (double)rb.setup.CpuToGpuCount, (double)rb.setup.GpuToCpuCount));
  PetscCheck(rb.reason > 0, comm, PETSC_ERR_PLIB, "%s with %s did not converge (reason %d): the case is not a test", c->name, base, (int)rb.reason);
  for (PetscInt t = 0; t < ntypes; t++) {
    Mat         B;
    Result      r;
    PetscInt    tol = PetscMax(1, (PetscInt)(0.02 * rb.its));
    PetscMPIInt ok  = 1, all;
    PetscCall(MatConvert(A, types[t], MAT_INITIAL_MATRIX, &B));
    PetscCall(Solve(A, B, c, types[t], &r));
    PetscCall(MatDestroy(&B));
    PetscCall(PetscPrintf(comm, "%-16s %-14s its %4" PetscInt_FMT " true residual %.2e copies solve %g/%g setup %g/%g", c->name, types[t], r.its, (double)r.true_residual, (double)r.solve.CpuToGpuCount, (double)r.solve.GpuToCpuCount, (double)r.setup.CpuToGpuCount,
                          (double)r.setup.GpuToCpuCount));
    if (r.reason <= 0 || PetscAbsInt(r.its - rb.its) > tol || r.true_residual > 10 * PetscMax(rb.true_residual, 1e-12)) ok = 0;
    /* copies are counted on each rank: no rank may copy more often than with the base type, over
       the setup and the solve (a layout built from a subdomain matrix in PCSetUp uploads there what
       the base type uploads at its first use in KSPSolve) */
    if (cuda && r.solve.CpuToGpuCount + r.solve.GpuToCpuCount + r.setup.CpuToGpuCount + r.setup.GpuToCpuCount > rb.solve.CpuToGpuCount + rb.solve.GpuToCpuCount + rb.setup.CpuToGpuCount + rb.setup.GpuToCpuCount) ok = 0;
    PetscCallMPI(MPIU_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm));
    PetscCall(PetscPrintf(comm, "  %s\n", all ? "ok" : "FAIL"));
    if (!all) (*failures)++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* COO assembly with the values in device memory: no device-to-host copy of them, and the
   products of the result are AIJ's. */
static PetscErrorCode CheckDeviceCOO(Mat A, const char *family, int *failures)
{
  MPI_Comm           comm = PetscObjectComm((PetscObject)A);
  Mat                B;
  Vec                v;
  PetscInt           rs, re, nz = 0, *ci, *cj, m, n;
  const PetscScalar *dv;
  PetscLogStage      stage;
  PetscEventPerfInfo info;
  PetscMPIInt        ok, all;
  char               name[128];

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(MatGetLocalSize(A, &m, &n));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt nc;
    PetscCall(MatGetRow(A, i, &nc, NULL, NULL));
    nz += nc;
    PetscCall(MatRestoreRow(A, i, &nc, NULL, NULL));
  }
  PetscCall(PetscMalloc2(nz, &ci, nz, &cj));
  PetscCall(VecCreateSeqCUDA(PETSC_COMM_SELF, nz, &v));
  nz = 0;
  for (PetscInt i = rs; i < re; i++) {
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscInt           nc;
    PetscCall(MatGetRow(A, i, &nc, &cols, &vals));
    for (PetscInt q = 0; q < nc; q++, nz++) {
      ci[nz] = i;
      cj[nz] = cols[q];
      PetscCall(VecSetValue(v, nz, vals[q], INSERT_VALUES));
    }
    PetscCall(MatRestoreRow(A, i, &nc, &cols, &vals));
  }
  PetscCall(VecAssemblyBegin(v));
  PetscCall(VecAssemblyEnd(v));
  PetscCall(VecCUDAGetArrayRead(v, &dv)); /* the values on the device */
  PetscCall(MatCreate(comm, &B));
  PetscCall(MatSetSizes(B, m, n, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(B, family));
  PetscCall(MatSetPreallocationCOO(B, nz, ci, cj));
  PetscCall(PetscSNPrintf(name, sizeof(name), "COO device values %s", family));
  PetscCall(PetscLogStageRegister(name, &stage));
  PetscCall(PetscLogStagePush(stage));
  PetscCall(MatSetValuesCOO(B, dv, INSERT_VALUES));
  PetscCall(PetscLogStagePop());
  PetscCall(VecCUDARestoreArrayRead(v, &dv));
  PetscCall(EventInfo(stage, "MatSetValuesCOO", &info));
  ok = info.GpuToCpuCount == 0 && info.count == 1;
  PetscCallMPI(MPIU_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm));
  PetscCall(PetscPrintf(comm, "%-16s %-14s device-to-host copies %g  %s\n", "coo_device", family, (double)info.GpuToCpuCount, all ? "ok" : "FAIL"));
  if (!all) (*failures)++;
  PetscCall(TestCheckType(B, family));
  PetscCall(TestCompareMult(A, B, name));
  PetscCall(MatDestroy(&B));
  PetscCall(VecDestroy(&v));
  PetscCall(PetscFree2(ci, cj));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char       *types[MAXTYPES], *cases[32];
  PetscInt    ntypes = MAXTYPES, ncases = 32, n = 20;
  PetscBool   flg, cuda = PETSC_FALSE, hascases;
  PetscMPIInt size;
  Mat         A;
  int         failures = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscSpMVInitializePackage());
  PetscCall(PetscLogDefaultBegin());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", types, &ntypes, &flg));
  PetscCheck(flg && ntypes > 0, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "give the families with -types rgcsr,packsell,...");
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-cases", cases, &ncases, &hascases));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  for (PetscInt t = 0; t < ntypes; t++) cuda = (PetscBool)(cuda || strstr(types[t], "cuda"));
  PetscCall(Generate(PETSC_COMM_WORLD, n, &A));
  for (size_t k = 0; k < sizeof(kCases) / sizeof(kCases[0]); k++) {
    const Case *c    = &kCases[k];
    PetscBool   want = PETSC_TRUE;
    if ((c->ranks == 1 && size > 1) || (c->ranks == 2 && size == 1)) continue;
    if (hascases) {
      want = PETSC_FALSE;
      for (PetscInt i = 0; i < ncases; i++) want = (PetscBool)(want || !strcmp(cases[i], c->name));
    }
    if (want) PetscCall(CheckCase(A, c, cuda ? MATAIJCUSPARSE : MATAIJ, types, ntypes, cuda, &failures));
  }
#if defined(PETSC_HAVE_CUDA)
  if (cuda)
    for (PetscInt t = 0; t < ntypes; t++) PetscCall(CheckDeviceCOO(A, types[t], &failures));
#endif
  for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
  if (hascases)
    for (PetscInt i = 0; i < ncases; i++) PetscCall(PetscFree(cases[i]));
  PetscCall(MatDestroy(&A));
  PetscCheck(!failures, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%d case(s) FAILED (lines above)", failures);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS\n"));
  PetscCall(PetscFinalize());
  return 0;
}
