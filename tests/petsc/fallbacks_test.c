static const char help[] = "Operations the petscspmv types inherit from AIJ, checked against AIJ: norms, rows,\n\
MatDiagonalScale, MatZeroRows, MatAXPY, MatTranspose, MatMatMult (sparse and dense), MatPtAP,\n\
MatCreateSubMatrix, MatGetDiagonalBlock, ASCII MatView, binary MatView/MatLoad, and KSP with SOR, ILU/ICC\n\
(block Jacobi in parallel) and GAMG preconditioners.\n\
  -types <t1,t2,...>  families: rgcsr, packsell, rgcsrcuda, packsellcuda\n\
  -n <n>              rows (default 400)\n";

#include "spmv_test_util.h"

#include <petscksp.h>
#include <string.h>

#define MAXTYPES 8

/* Nonsymmetric band matrix with an empty row and one long row; `sym` makes it SPD. */
static PetscErrorCode Generate(MPI_Comm comm, PetscInt n, PetscBool sym, Mat *A)
{
  PetscInt rs, re;

  PetscFunctionBegin;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSetUp(*A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    if (!sym && i == n / 4) continue; /* empty row */
    for (PetscInt j = PetscMax(0, i - 3); j <= PetscMin(n - 1, i + 3); j++) {
      PetscScalar v = (i == j) ? 8.0 + (i % 3) : (sym ? -1.0 / (1 + PetscAbsInt(i - j)) : -0.5 / (1 + (i + 2 * j) % 4));
      PetscCall(MatSetValue(*A, i, j, v, INSERT_VALUES));
    }
    if (!sym && i == n / 2)
      for (PetscInt j = 0; j < n; j += 3)
        if (PetscAbsInt(i - j) > 3) PetscCall(MatSetValue(*A, i, j, 0.01 * (j % 7), INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ||X - Y||_F <= tol ||Y||_F, X and Y of any types (converted to AIJ). */
static PetscErrorCode CheckClose(Mat X, Mat Y, PetscReal tol, const char *what)
{
  Mat       Xa, Ya;
  PetscReal nd, ny;

  PetscFunctionBegin;
  PetscCall(MatConvert(X, MATAIJ, MAT_INITIAL_MATRIX, &Xa));
  PetscCall(MatConvert(Y, MATAIJ, MAT_INITIAL_MATRIX, &Ya));
  PetscCall(MatNorm(Ya, NORM_FROBENIUS, &ny));
  PetscCall(MatAXPY(Xa, -1.0, Ya, DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatNorm(Xa, NORM_FROBENIUS, &nd));
  PetscCheck(nd <= tol * ny, PetscObjectComm((PetscObject)X), PETSC_ERR_PLIB, "%s: ||X - Y|| = %g, ||Y|| = %g", what, (double)nd, (double)ny);
  PetscCall(MatDestroy(&Xa));
  PetscCall(MatDestroy(&Ya));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The default ASCII MatView of B (of a petscspmv type) prints what AIJ's prints for A (the same
   entries), but for the header line that names the type. Both go to files; rank 0 compares. */
static PetscErrorCode CheckAsciiView(Mat A, Mat B, const char *family)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)A);
  PetscMPIInt rank, size;
  char        fa[PETSC_MAX_PATH_LEN], fb[PETSC_MAX_PATH_LEN];
  PetscViewer v;
  int         same = 1, lines = 0;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscSNPrintf(fa, sizeof(fa), "spmv_fallbacks_%s_np%d_aij.txt", family, (int)size));
  PetscCall(PetscSNPrintf(fb, sizeof(fb), "spmv_fallbacks_%s_np%d.txt", family, (int)size));
  PetscCall(PetscViewerASCIIOpen(comm, fa, &v));
  PetscCall(MatView(A, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(PetscViewerASCIIOpen(comm, fb, &v));
  PetscCall(MatView(B, v));
  PetscCall(PetscViewerDestroy(&v));
  if (rank == 0) {
    FILE *a = fopen(fa, "r"), *b = fopen(fb, "r");
    char  la[4096], lb[4096];
    PetscCheck(a && b, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot read back %s or %s", fa, fb);
    while (same) {
      char *ra = fgets(la, sizeof(la), a), *rb = fgets(lb, sizeof(lb), b);
      if (!ra || !rb) {
        same = !ra && !rb;
        break;
      }
      lines++;
      if (strstr(la, "type:") && strstr(lb, "type:")) continue; /* mpiaij vs mpiaijrgcsr, ... */
      same = !strcmp(la, lb);
    }
    fclose(a);
    fclose(b);
  }
  PetscCallMPI(MPI_Bcast(&same, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(&lines, 1, MPI_INT, 0, comm));
  PetscCheck(same && lines > 2, comm, PETSC_ERR_PLIB, "%s: ASCII MatView differs from AIJ's (%s against %s)", family, fb, fa);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SolveIts(Mat A, KSPType ktype, PCType ptype, PetscInt *its)
{
  KSP                ksp;
  PC                 pc;
  Vec                x, b;
  KSPConvergedReason reason;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, ktype));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, ptype));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_CURRENT, PETSC_CURRENT, 500));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCheck(reason > 0, PetscObjectComm((PetscObject)A), PETSC_ERR_PLIB, "%s + %s did not converge (%s)", ktype, ptype, KSPConvergedReasons[reason]);
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Run(MPI_Comm comm, const char *family, PetscInt n)
{
  Mat         A, B, A2, C, D, S, P;
  Vec         l, r, x, b;
  PetscReal   na, nb;
  PetscInt    rs, re, rows[3], nrows = 0;
  NormType    norms[] = {NORM_1, NORM_INFINITY, NORM_FROBENIUS};
  PetscMPIInt size;
  char        what[256];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(Generate(comm, n, PETSC_FALSE, &A));
  PetscCall(MatConvert(A, family, MAT_INITIAL_MATRIX, &B));

  /* norms and rows read the AIJ arrays */
  for (int k = 0; k < 3; k++) {
    PetscCall(MatNorm(A, norms[k], &na));
    PetscCall(MatNorm(B, norms[k], &nb));
    PetscCheck(na == nb, comm, PETSC_ERR_PLIB, "%s: MatNorm %s %g, AIJ %g", family, NormTypes[norms[k]], (double)nb, (double)na);
  }
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    const PetscInt    *ca, *cb;
    const PetscScalar *va, *vb;
    PetscInt           nca, ncb;
    PetscCall(MatGetRow(A, i, &nca, &ca, &va));
    PetscCall(MatGetRow(B, i, &ncb, &cb, &vb));
    PetscCheck(nca == ncb, PETSC_COMM_SELF, PETSC_ERR_PLIB, "row %" PetscInt_FMT ": %" PetscInt_FMT " entries, AIJ %" PetscInt_FMT, i, ncb, nca);
    for (PetscInt k = 0; k < nca; k++) PetscCheck(ca[k] == cb[k] && va[k] == vb[k], PETSC_COMM_SELF, PETSC_ERR_PLIB, "row %" PetscInt_FMT " differs", i);
    PetscCall(MatRestoreRow(B, i, &ncb, &cb, &vb));
    PetscCall(MatRestoreRow(A, i, &nca, &ca, &va));
  }

  /* value changes made by AIJ code: the layout follows */
  PetscCall(MatCreateVecs(A, &r, &l));
  PetscCall(TestRandomVec(l, 31));
  PetscCall(TestRandomVec(r, 32));
  PetscCall(MatDiagonalScale(A, l, r));
  {
    Vec lb, rb;
    PetscCall(MatCreateVecs(B, &rb, &lb));
    PetscCall(TestCopyValues(l, lb));
    PetscCall(TestCopyValues(r, rb));
    PetscCall(MatDiagonalScale(B, lb, rb));
    PetscCall(VecDestroy(&lb));
    PetscCall(VecDestroy(&rb));
  }
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatDiagonalScale", family));
  PetscCall(TestCompareProducts(A, B, what));
  if (rs < re) rows[nrows++] = rs;
  if (rs + 5 < re) rows[nrows++] = rs + 5;
  PetscCall(MatZeroRows(A, nrows, rows, 2.0, NULL, NULL));
  PetscCall(MatZeroRows(B, nrows, rows, 2.0, NULL, NULL));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatZeroRows", family));
  PetscCall(TestCompareProducts(A, B, what));
  PetscCall(Generate(comm, n, PETSC_TRUE, &A2));
  PetscCall(MatAXPY(A, 0.5, A2, DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatAXPY(B, 0.5, A2, DIFFERENT_NONZERO_PATTERN));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatAXPY", family));
  PetscCall(TestCompareProducts(A, B, what));

  /* new matrices computed by AIJ code from ours */
  PetscCall(MatTranspose(B, MAT_INITIAL_MATRIX, &C));
  PetscCall(MatTranspose(A, MAT_INITIAL_MATRIX, &D));
  PetscCall(CheckClose(C, D, 0, "MatTranspose"));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&D));
  PetscCall(MatMatMult(B, B, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C));
  PetscCall(MatMatMult(A, A, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &D));
  PetscCall(CheckClose(C, D, 1e-14, "MatMatMult"));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&D));
  PetscCall(MatMatMult(B, A2, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C));
  PetscCall(MatMatMult(A, A2, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &D));
  PetscCall(CheckClose(C, D, 1e-14, "MatMatMult with AIJ"));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&D));
  PetscCall(MatConvert(A2, family, MAT_INITIAL_MATRIX, &P));
  PetscCall(MatPtAP(B, P, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C));
  PetscCall(MatPtAP(A, A2, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &D));
  PetscCall(CheckClose(C, D, 1e-13, "MatPtAP"));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&P));
  {
    Mat X, Y, Z;
    PetscCall(MatCreateDense(comm, PETSC_DECIDE, PETSC_DECIDE, n, 3, NULL, &X));
    PetscCall(MatSetRandom(X, NULL));
    PetscCall(MatMatMult(B, X, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &Y));
    PetscCall(MatMatMult(A, X, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &Z));
    PetscCall(MatAXPY(Y, -1.0, Z, SAME_NONZERO_PATTERN));
    PetscCall(MatNorm(Y, NORM_FROBENIUS, &nb));
    PetscCall(MatNorm(Z, NORM_FROBENIUS, &na));
    PetscCheck(nb <= 1e-13 * na, comm, PETSC_ERR_PLIB, "%s: MatMatMult with a dense matrix: error %g", family, (double)nb);
    PetscCall(MatDestroy(&X));
    PetscCall(MatDestroy(&Y));
    PetscCall(MatDestroy(&Z));
  }
  {
    IS is;
    PetscCall(ISCreateStride(comm, (re - rs) / 2, rs, 2, &is));
    PetscCall(MatCreateSubMatrix(B, is, is, MAT_INITIAL_MATRIX, &C));
    PetscCall(MatCreateSubMatrix(A, is, is, MAT_INITIAL_MATRIX, &D));
    PetscCall(CheckClose(C, D, 0, "MatCreateSubMatrix"));
    PetscCall(MatDestroy(&C));
    PetscCall(MatDestroy(&D));
    PetscCall(ISDestroy(&is));
  }
  PetscCall(MatGetDiagonalBlock(B, &S));
  {
    MatType t;
    char    expect[64];
    PetscCall(MatGetType(S, &t));
    PetscCall(PetscSNPrintf(expect, sizeof(expect), "seqaij%s", family));
    PetscCheck(!strcmp(t, expect), PETSC_COMM_SELF, PETSC_ERR_PLIB, "diagonal block of type %s, expected %s", t, expect);
  }

  PetscCall(CheckAsciiView(A, B, family));

  /* binary MatView, MatLoad straight into the type */
  {
    PetscViewer v;
    char        file[PETSC_MAX_PATH_LEN];
    PetscCall(PetscSNPrintf(file, sizeof(file), "spmv_fallbacks_%s_np%d.petsc", family, (int)size));
    PetscCall(PetscViewerBinaryOpen(comm, file, FILE_MODE_WRITE, &v));
    PetscCall(MatView(B, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(MatCreate(comm, &C));
    PetscCall(MatSetType(C, family));
    PetscCall(PetscViewerBinaryOpen(comm, file, FILE_MODE_READ, &v));
    PetscCall(MatLoad(C, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(TestCheckType(C, family));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s MatLoad", family));
    PetscCall(TestCompareProducts(A, C, what));
    PetscCall(MatDestroy(&C));
  }
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));

  /* preconditioners that read the AIJ arrays (SOR, factorizations, GAMG) */
  {
    const char *pcs[] = {PCSOR, size == 1 ? PCILU : PCBJACOBI, size == 1 ? PCICC : PCASM, PCGAMG};
    PetscCall(MatConvert(A2, family, MAT_INITIAL_MATRIX, &B));
    for (int k = 0; k < 4; k++) {
      PetscInt its_aij, its;
      PetscCall(SolveIts(A2, KSPCG, pcs[k], &its_aij));
      PetscCall(SolveIts(B, KSPCG, pcs[k], &its));
      PetscCall(PetscPrintf(comm, "  %s CG + %s: %" PetscInt_FMT " iterations (AIJ %" PetscInt_FMT ")\n", family, pcs[k], its, its_aij));
      PetscCheck(PetscAbsInt(its - its_aij) <= 2, comm, PETSC_ERR_PLIB, "%s: CG + %s took %" PetscInt_FMT " iterations, AIJ %" PetscInt_FMT, family, pcs[k], its, its_aij);
    }
    PetscCall(MatDestroy(&B));
  }
  PetscCall(MatDestroy(&A2));
  PetscCall(VecDestroy(&l));
  PetscCall(VecDestroy(&r));
  (void)x;
  (void)b;
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char     *types[MAXTYPES];
  PetscInt  ntypes = MAXTYPES, n = 400;
  PetscBool flg;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscSpMVInitializePackage());
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", types, &ntypes, &flg));
  PetscCheck(flg && ntypes > 0, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "give the families with -types rgcsr,packsell,...");
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  /* lossless PackSELL here: the point is the AIJ fallbacks, not the value formats */
  PetscCall(PetscOptionsSetValue(NULL, "-mat_packsell_value_format", "exact"));
  for (PetscInt t = 0; t < ntypes; t++) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", types[t]));
    PetscCall(Run(PETSC_COMM_WORLD, types[t], n));
    PetscCall(PetscFree(types[t]));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS\n"));
  PetscCall(PetscFinalize());
  return 0;
}
