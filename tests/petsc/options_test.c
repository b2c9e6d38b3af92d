static const char help[] = "Options, setters/getters and errors of the petscspmv types.\n\
  -types <t1,t2,...>  families (rgcsr, packsell, rgcsrcuda, packsellcuda) for the API checks\n\
  -mode api           (default) setters, getters, bad values, overflow, recovery; every error is\n\
                      caught and its class and message checked, then the matrix is checked intact\n\
  -mode fromoptions   builds one matrix with MatSetFromOptions() (use -mat_type ...) and lets\n\
                      any error through: the tests check PETSc's error output\n\
  -big <v>            (fromoptions) put v on the diagonal of row 0\n";

#include "spmv_test_util.h"

#include <string.h>

#define MAXTYPES 8

/* A small tridiagonal-like matrix with an empty row, as AIJ or as `type` (MatSetFromOptions
   when type is NULL). big goes to entry (0, 0). */
static PetscErrorCode BuildMatrix(MPI_Comm comm, MatType type, PetscInt n, PetscScalar big, Mat *A)
{
  PetscInt rs, re;

  PetscFunctionBegin;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  if (type) PetscCall(MatSetType(*A, type));
  else PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSetUp(*A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    if (i == n / 3) continue; /* empty row */
    for (PetscInt j = PetscMax(0, i - 2); j <= PetscMin(n - 1, i + 3); j++) {
      PetscScalar v = (i == j) ? 4.0 + 0.1 * (i % 7) : -1.0 / (1 + (i + j) % 5);
      if (i == 0 && j == 0 && big != 0.0) v = big;
      PetscCall(MatSetValue(*A, i, j, v, INSERT_VALUES));
    }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rows of very different lengths: every 64th row has 40 nonzeros, the others 2, so unsorted
   slices are padded to the long rows and the automatic sigma must sort. */
static PetscErrorCode BuildIrregular(MPI_Comm comm, PetscInt n, Mat *A)
{
  PetscInt rs, re;

  PetscFunctionBegin;
  PetscCall(MatCreateAIJ(comm, PETSC_DECIDE, PETSC_DECIDE, n, n, 40, NULL, 40, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt len = i % 64 ? 2 : 40;
    for (PetscInt k = 0; k < len; k++) PetscCall(MatSetValue(*A, i, (i + k) % n, 1.0 + 0.25 * k, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* True if msg contains one of the '|'-separated alternatives of text. */
static PetscBool Mentions(const char *msg, const char *text)
{
  char buf[256], *save = NULL, *tok;
  if (!msg) return PETSC_FALSE;
  if (PetscStrncpy(buf, text, sizeof(buf))) return PETSC_FALSE;
  for (tok = strtok_r(buf, "|", &save); tok; tok = strtok_r(NULL, "|", &save))
    if (strstr(msg, tok)) return PETSC_TRUE;
  return PETSC_FALSE;
}

/* Checks that ierr is the PETSc error `code` and that its message contains `text` (or one of
   its '|'-separated alternatives). */
static PetscErrorCode ExpectError(MPI_Comm comm, PetscErrorCode ierr, PetscErrorCode code, const char *text, const char *what)
{
  const char        *cls;
  PetscSpMVErrorText msg = NULL;

  PetscFunctionBegin;
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr != PETSC_SUCCESS, comm, PETSC_ERR_PLIB, "%s: expected an error, the call succeeded", what);
  PetscCall(PetscErrorMessage(ierr, &cls, &msg));
  PetscCheck(ierr == code, comm, PETSC_ERR_PLIB, "%s: error class %d (%s), expected %d; message: %s", what, (int)ierr, cls, (int)code, msg ? msg : "");
  PetscCheck(Mentions(msg, text), comm, PETSC_ERR_PLIB, "%s: message \"%s\" does not mention \"%s\"", what, msg ? msg : "", text);
  PetscCall(PetscPrintf(comm, "  expected error (%s): %s\n", what, msg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Runs `call` with errors returned quietly, then checks the error. */
#define EXPECT_ERROR(comm, call, code, text) \
  do { \
    PetscErrorCode ierr_; \
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL)); \
    ierr_ = (call); \
    PetscCall(ExpectError(comm, ierr_, code, text, #call)); \
  } while (0)

static PetscErrorCode CheckString(const char *got, const char *expect, const char *what)
{
  PetscFunctionBegin;
  PetscCheck(!strcmp(got, expect), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: got \"%s\", expected \"%s\"", what, got, expect);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckInt(PetscInt got, PetscInt expect, const char *what)
{
  PetscFunctionBegin;
  PetscCheck(got == expect, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: got %" PetscInt_FMT ", expected %" PetscInt_FMT, what, got, expect);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RunRgCSR(MPI_Comm comm, const char *family, Mat A)
{
  Mat          B;
  PetscInt     iv;
  const char  *sv;
  MatSpMVStats st;

  PetscFunctionBegin;
  PetscCall(MatConvert(A, family, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatRgCSRGetGroupSize(B, &iv));
  PetscCall(CheckInt(iv, 32, "default group size"));
  PetscCall(MatRgCSRGetHybrid(B, &sv));
  PetscCall(CheckString(sv, "auto", "default hybrid"));

  /* bad values: errors with the class of the option; nothing changes */
  EXPECT_ERROR(comm, MatRgCSRSetGroupSize(B, 33), PETSC_ERR_ARG_OUTOFRANGE, "group size 33 is not valid");
  EXPECT_ERROR(comm, MatRgCSRSetGroupSize(B, 0), PETSC_ERR_ARG_OUTOFRANGE, "multiple of 32");
  EXPECT_ERROR(comm, MatRgCSRSetHybrid(B, "-3"), PETSC_ERR_ARG_WRONG, "'-3' is not valid");
  EXPECT_ERROR(comm, MatRgCSRSetHybrid(B, "often"), PETSC_ERR_ARG_WRONG, "use auto, none, or a positive integer");
  PetscCall(MatRgCSRGetGroupSize(B, &iv));
  PetscCall(CheckInt(iv, 32, "group size after refused values"));
  PetscCall(TestCompareProducts(A, B, "rgcsr after refused values"));

  /* after assembly: the layout is rebuilt with the new values */
  PetscCall(MatRgCSRSetGroupSize(B, 128));
  PetscCall(MatRgCSRSetHybrid(B, "2"));
  PetscCall(MatSpMVGetStats(B, &st));
  PetscCheck(st.stored_slots % 128 == 0 && st.hybrid_width <= 2 && st.tail_nnz > 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "not rebuilt: %" PetscInt64_FMT " slots, K %" PetscInt_FMT, st.stored_slots, st.hybrid_width);
  PetscCall(TestCompareProducts(A, B, "rgcsr rebuilt with group size 128, K = 2"));
  PetscCall(MatRgCSRGetHybrid(B, &sv));
  PetscCall(CheckString(sv, "2", "hybrid"));

  /* PackSELL setters are ignored by RgCSR matrices; PackSELL getters are refused */
  PetscCall(MatPackSELLSetSliceHeight(B, 33));
  EXPECT_ERROR(comm, MatPackSELLGetSliceHeight(B, &iv), PETSC_ERR_SUP, "MatPackSELLGetSliceHeight() needs a PackSELL matrix");
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* sigma: 1 by default; PETSC_DECIDE is resolved at assembly; the getter reports the option before
   assembly and the window of the built layout (this rank's diagonal block) after it. */
static PetscErrorCode RunSigma(MPI_Comm comm, const char *family)
{
  Mat          A, B;
  PetscInt     iv, chosen;
  PetscMPIInt  size;
  MatSpMVStats st, one;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(MatCreate(comm, &B));
  PetscCall(MatSetSizes(B, PETSC_DECIDE, PETSC_DECIDE, 64, 64));
  PetscCall(MatSetType(B, family));
  PetscCall(MatPackSELLGetSigma(B, &iv));
  PetscCall(CheckInt(iv, 1, "default sigma before assembly"));
  PetscCall(MatPackSELLSetSigma(B, 64));
  PetscCall(MatPackSELLGetSigma(B, &iv));
  PetscCall(CheckInt(iv, 64, "sigma set before assembly"));
  PetscCall(MatPackSELLSetSigma(B, PETSC_DECIDE));
  PetscCall(MatPackSELLGetSigma(B, &iv));
  PetscCall(CheckInt(iv, PETSC_DECIDE, "sigma set to PETSC_DECIDE before assembly"));
  PetscCall(MatDestroy(&B));

  /* irregular rows: the automatic window sorts and stores fewer bytes than sigma 1 (fp16 words,
     the byte counts this check was made for; exact's 12-byte slots weigh tails differently) */
  PetscCall(BuildIrregular(comm, 2048, &A));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_packsell_value_format", "fp16"));
  PetscCall(MatConvert(A, family, MAT_INITIAL_MATRIX, &B));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_packsell_value_format"));
  PetscCall(MatPackSELLGetSigma(B, &iv));
  PetscCall(CheckInt(iv, 1, "default sigma after assembly"));
  PetscCall(MatPackSELLSetSigma(B, PETSC_DECIDE));
  PetscCall(MatPackSELLGetSigma(B, &chosen));
  PetscCheck(chosen > 1 && chosen % 32 == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "irregular rows: built sigma %" PetscInt_FMT ", expected a multiple of 32", chosen);
  PetscCall(MatSpMVGetStats(B, &st));
  PetscCall(TestCompareProducts(A, B, "packsell with the automatic sigma"));
  PetscCall(MatPackSELLSetSigma(B, 1));
  PetscCall(MatPackSELLGetSigma(B, &iv));
  PetscCall(CheckInt(iv, 1, "sigma 1 after assembly"));
  PetscCall(MatSpMVGetStats(B, &one));
  PetscCheck(st.stored_bytes < one.stored_bytes, PETSC_COMM_SELF, PETSC_ERR_PLIB, "automatic sigma %" PetscInt_FMT ": %" PetscInt64_FMT " bytes, not fewer than sigma 1's %" PetscInt64_FMT, chosen, st.stored_bytes, one.stored_bytes);
  if (size == 1) { /* one layout: the reported window rebuilds the same layout */
    PetscCall(MatPackSELLSetSigma(B, chosen));
    PetscCall(MatSpMVGetStats(B, &one));
    PetscCheck(one.stored_bytes == st.stored_bytes && one.tail_nnz == st.tail_nnz, PETSC_COMM_SELF, PETSC_ERR_PLIB, "sigma %" PetscInt_FMT " set explicitly differs from the automatic layout", chosen);
  }
  PetscCall(MatPackSELLSetSigma(B, PETSC_DECIDE));
  PetscCall(MatPackSELLGetSigma(B, &iv));
  PetscCall(CheckInt(iv, chosen, "sigma after going back to PETSC_DECIDE"));
  PetscCall(TestCompareProducts(A, B, "packsell back to the automatic sigma"));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RunPackSELL(MPI_Comm comm, const char *family, Mat A)
{
  Mat         B, D, Abig;
  PetscInt    iv;
  const char *sv;
  PetscBool   eq;
  MatType     type;

  PetscFunctionBegin;
  PetscCall(MatConvert(A, family, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatPackSELLGetSliceHeight(B, &iv));
  PetscCall(CheckInt(iv, 32, "default slice height"));
  PetscCall(MatPackSELLGetSigma(B, &iv)); /* default 1; assembled, so the built window */
  PetscCall(CheckInt(iv, 1, "default sigma"));
  PetscCall(MatPackSELLGetValueFormat(B, &sv));
  PetscCall(CheckString(sv, "exact", "default value format")); /* lossless unless asked */
  PetscCall(MatPackSELLGetScaling(B, &sv));
  PetscCall(CheckString(sv, "none", "default scaling"));
  PetscCall(MatPackSELLGetHybrid(B, &sv));
  PetscCall(CheckString(sv, "auto", "default hybrid"));

  EXPECT_ERROR(comm, MatPackSELLSetSliceHeight(B, 48), PETSC_ERR_ARG_OUTOFRANGE, "slice height 48 is not valid");
  EXPECT_ERROR(comm, MatPackSELLSetSliceHeight(B, 2048), PETSC_ERR_ARG_OUTOFRANGE, "[32, 1024]");
  EXPECT_ERROR(comm, MatPackSELLSetSigma(B, 40), PETSC_ERR_ARG_OUTOFRANGE, "sigma 40 is not valid");
  EXPECT_ERROR(comm, MatPackSELLSetSigma(B, 0), PETSC_ERR_ARG_OUTOFRANGE, "sigma 0 is not valid: use PETSC_DECIDE");
  EXPECT_ERROR(comm, MatPackSELLSetSigma(B, -2), PETSC_ERR_ARG_OUTOFRANGE, "sigma -2 is not valid");
  EXPECT_ERROR(comm, MatPackSELLSetValueFormat(B, "fp8"), PETSC_ERR_ARG_WRONG, "unknown value format 'fp8'");
  EXPECT_ERROR(comm, MatPackSELLSetValueFormat(B, "e8m30"), PETSC_ERR_ARG_WRONG, "e8m30");
  EXPECT_ERROR(comm, MatPackSELLSetScaling(B, "sometimes"), PETSC_ERR_ARG_WRONG, "scaling 'sometimes' is not valid");
  EXPECT_ERROR(comm, MatPackSELLSetHybrid(B, "0"), PETSC_ERR_ARG_WRONG, "hybrid option '0'");
  PetscCall(MatPackSELLGetValueFormat(B, &sv));
  PetscCall(CheckString(sv, "exact", "value format after refused values"));
  PetscCall(TestCompareProducts(A, B, "packsell after refused values"));

  /* a valid combination set one at a time, after assembly: rebuilt */
  PetscCall(MatPackSELLSetSliceHeight(B, 64));
  PetscCall(MatPackSELLSetSigma(B, 128));
  PetscCall(MatPackSELLSetValueFormat(B, "e8m14"));
  PetscCall(MatPackSELLGetValueFormat(B, &sv));
  PetscCall(CheckString(sv, "e8m14", "value format"));
  PetscCall(TestCompareProducts(A, B, "packsell 64/128/e8m14"));
  PetscCall(MatRgCSRSetGroupSize(B, 33)); /* ignored: not an RgCSR matrix */
  PetscCall(MatDestroy(&B));

  PetscCall(RunSigma(comm, family));

  /* a value that overflows fp16 (asked for): conversion refused, the source untouched */
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &Abig));
  PetscCall(MatSetValue(Abig, 0, 0, 1.0e6, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(Abig, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Abig, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_packsell_value_format", "fp16"));
  EXPECT_ERROR(comm, MatConvert(Abig, family, MAT_INITIAL_MATRIX, &B), PETSC_ERR_ARG_OUTOFRANGE, "overflows the PackSELL value format fp16|another rank");
  PetscCall(MatDuplicate(Abig, MAT_COPY_VALUES, &D));
  EXPECT_ERROR(comm, MatConvert(D, family, MAT_INPLACE_MATRIX, &D), PETSC_ERR_ARG_OUTOFRANGE, "scaling auto|another rank");
  PetscCall(MatGetType(D, &type));
  PetscCheck(strstr(type, "aij"), comm, PETSC_ERR_PLIB, "a refused in-place conversion left a %s matrix", type);
  PetscCall(MatEqual(D, Abig, &eq));
  PetscCheck(eq, comm, PETSC_ERR_PLIB, "a refused in-place conversion changed the matrix");
  PetscCall(MatDestroy(&D));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_packsell_value_format"));
  /* a matrix with its own options prefix: the remedy is named with it */
  PetscCall(MatDuplicate(Abig, MAT_COPY_VALUES, &D));
  PetscCall(MatSetOptionsPrefix(D, "sub_"));
  PetscCall(PetscOptionsSetValue(NULL, "-sub_mat_packsell_value_format", "fp16"));
  EXPECT_ERROR(comm, MatConvert(D, family, MAT_INPLACE_MATRIX, &D), PETSC_ERR_ARG_OUTOFRANGE, "or -sub_mat_packsell_scaling auto|another rank");
  PetscCall(PetscOptionsClearValue(NULL, "-sub_mat_packsell_value_format"));
  PetscCall(MatDestroy(&D));
  /* the default (exact) holds it */
  PetscCall(MatConvert(Abig, family, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatPackSELLGetValueFormat(B, &sv));
  PetscCall(CheckString(sv, "exact", "default value format of a converted matrix"));
  PetscCall(TestCompareProducts(Abig, B, "packsell default holds 1e6"));
  PetscCall(MatDestroy(&B));

  /* exact values hold it; switching to fp16 afterwards is refused and changes nothing */
  PetscCall(PetscOptionsSetValue(NULL, "-mat_packsell_value_format", "exact"));
  PetscCall(MatConvert(Abig, family, MAT_INITIAL_MATRIX, &B));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_packsell_value_format"));
  EXPECT_ERROR(comm, MatPackSELLSetValueFormat(B, "fp16"), PETSC_ERR_ARG_OUTOFRANGE, "1000000|another rank");
  PetscCall(MatPackSELLGetValueFormat(B, &sv));
  PetscCall(CheckString(sv, "exact", "value format after a refused rebuild"));
  PetscCall(TestCompareProducts(Abig, B, "packsell exact after a refused rebuild"));
  /* with scaling auto it fits */
  PetscCall(MatPackSELLSetScaling(B, "auto"));
  PetscCall(MatPackSELLSetValueFormat(B, "fp16"));
  PetscCall(TestCompareProducts(Abig, B, "packsell fp16 scaling auto"));
  PetscCall(MatDestroy(&B));

  /* overflow at a re-assembly: refused (never a stale layout); fixed by an option and a new assembly */
  PetscCall(MatConvert(A, family, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatPackSELLSetValueFormat(B, "fp16"));
  PetscCall(MatSetValue(B, 0, 0, 1.0e6, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  /* (on one rank the value overflows; the others are told so) */
  EXPECT_ERROR(comm, MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY), PETSC_ERR_ARG_OUTOFRANGE, "overflows|another rank");
  PetscCall(MatPackSELLSetScaling(B, "auto"));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscCall(TestCompareProducts(Abig, B, "packsell re-assembled after an overflow"));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&Abig));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char        *types[MAXTYPES], mode[64] = "api";
  PetscInt     ntypes = MAXTYPES;
  PetscBool    flg;
  PetscScalar  big = 0.0;
  MPI_Comm     comm;
  Mat          A, B;
  MatSpMVStats st;
  PetscInt     iv;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscSpMVInitializePackage());
  comm = PETSC_COMM_WORLD;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mode", mode, sizeof(mode), NULL));
  PetscCall(PetscOptionsGetScalar(NULL, NULL, "-big", &big, NULL));

  if (!strcmp(mode, "fromoptions")) {
    Vec x, y;
    PetscCall(BuildMatrix(comm, NULL, 100, big, &B));
    PetscCall(MatCreateVecs(B, &x, &y));
    PetscCall(VecSet(x, 1.0));
    PetscCall(MatMult(B, x, y));
    PetscCall(MatViewFromOptions(B, NULL, "-view_mat"));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(MatDestroy(&B));
    PetscCall(PetscPrintf(comm, "PASS\n"));
    PetscCall(PetscFinalize());
    return 0;
  }

  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", types, &ntypes, &flg));
  PetscCheck(flg && ntypes > 0, comm, PETSC_ERR_USER_INPUT, "give the families with -types rgcsr,packsell,...");
  PetscCall(BuildMatrix(comm, MATAIJ, 300, 0.0, &A));

  /* AIJ ignores the setters and refuses the getters and the statistics */
  PetscCall(MatRgCSRSetGroupSize(A, 33));
  PetscCall(MatPackSELLSetValueFormat(A, "nonsense"));
  EXPECT_ERROR(comm, MatRgCSRGetGroupSize(A, &iv), PETSC_ERR_SUP, "MatRgCSRGetGroupSize() needs a RgCSR matrix");
  EXPECT_ERROR(comm, MatSpMVGetStats(A, &st), PETSC_ERR_SUP, "MatSpMVGetStats() needs a matrix of a petscspmv type");

  for (PetscInt t = 0; t < ntypes; t++) {
    PetscCall(PetscPrintf(comm, "%s\n", types[t]));
    if (strstr(types[t], "rgcsr")) PetscCall(RunRgCSR(comm, types[t], A));
    else PetscCall(RunPackSELL(comm, types[t], A));
  }
  PetscCall(PetscPrintf(comm, "PASS\n"));
  for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
