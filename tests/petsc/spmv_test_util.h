/* Helpers shared by the PETSc-level tests: products of a petscspmv matrix checked against the
   same products of the AIJ matrix it came from, with poisoned outputs and explicit bounds. */
#pragma once
#include <petscspmv.h>
#include "petsc_compat.h" /* src/petsc: the PETSc version differences */

/* Error bound of the products of a matrix of our types, entry by entry:
     |y_i - y_ref_i| <= rel * (|A| |x|)_i + abs * (pattern(A) |x|)_i
   rel = 1e-13 for lossless layouts; for PackSELL with a lossy value format rel = 2^-(M+1) +
   1e-13 (one rounding of each value to M mantissa bits, accumulation in double) and abs is
   half the spacing of the format's subnormals, times 2^-s when values are scaled by 2^s. A CUDA
   matrix bound to the CPU multiplies with its base type's host AIJ kernels: rel = 1e-13. */
typedef struct {
  PetscReal rel, abs;
  PetscBool lossy;
} TestBound;

/* The bound for B (a matrix of our types made from Aref). */
PetscErrorCode TestGetBound(Mat Aref, Mat B, TestBound *bound);

/* Compares MatMult, MatMultAdd (y != z and y == z), MatMultTranspose, MatMultTransposeAdd and
   MatGetDiagonal of B with those of Aref (AIJ) for a random x; every output is filled with NaN
   first. Collective; fails with a PETSc error naming the product, the row and both values. */
PetscErrorCode TestCompareProducts(Mat Aref, Mat B, const char *what);

/* Only MatMult (cheaper; used after each modification). */
PetscErrorCode TestCompareMult(Mat Aref, Mat B, const char *what);

/* Checks that B's products are exactly zero (after MatZeroEntries). */
PetscErrorCode TestCheckZeroMult(Mat B, const char *what);

/* The SeqAIJ blocks of an AIJ-based matrix: blocks[0] = A itself (seq) or its diagonal block,
   blocks[1] = NULL (seq) or its off-diagonal block (mpi). */
PetscErrorCode TestSeqBlocks(Mat A, Mat blocks[2]);

/* Checks the type name of B: `family` with the seqaij or mpiaij prefix of B's communicator. */
PetscErrorCode TestCheckType(Mat B, const char *family);

/* Number of times a log event ran so far on this rank (PetscLogDefaultBegin() must be on). */
PetscErrorCode TestEventCount(const char *event, PetscInt *count);

/* Copies values between vectors of possibly different types (host arrays), same local size. */
PetscErrorCode TestCopyValues(Vec src, Vec dst);
/* Fills v with reproducible random values in [-1, 1]. */
PetscErrorCode TestRandomVec(Vec v, unsigned long seed);
/* *rel = ||b - A x|| / ||b|| (||b - A x|| when b = 0): a solve's true residual with A the exact
   matrix. Collective. */
PetscErrorCode TestTrueResidual(Mat A, Vec b, Vec x, PetscReal *rel);

/* The arguments the matrix-file tests share: -f <file> (required), -types <families>
   (required, at most *ntypes), -value_formats <formats> (default exact,fp16,bf16; at most
   *nformats). The strings are the caller's to PetscFree(). */
PetscErrorCode TestGetFileAndFamilies(char file[], size_t len, char *types[], PetscInt *ntypes, char *formats[], PetscInt *nformats);
/* Whether PackSELL with value format fmt (and scaling auto or none) holds every value of A:
   no overflow, and no nonzero that would be stored as zero (with scaling auto: the matrix does
   not span more magnitudes than the format). Where it does not, building the layout is an
   error (PETSC_ERR_ARG_OUTOFRANGE): a lossy format never drops a value silently. Collective. */
PetscErrorCode TestFormatHoldsValues(Mat A, const char *fmt, PetscBool scaling_auto, PetscBool *holds);
/* Checks that MatConvert(A, family) fails with PETSC_ERR_ARG_OUTOFRANGE (the value format set
   in the options database does not hold A's values). Collective. */
PetscErrorCode TestExpectRefused(Mat A, const char *family, const char *label);
/* Loads the PETSc binary matrix in file as MATAIJ. */
PetscErrorCode TestLoadAIJ(const char file[], Mat *A);

/* Runs call with errors returned; *ierr gets the code, msg (a char array) the message (empty on success). */
#define TRY(call, ierr, msg) \
  do { \
    const char *m_ = NULL; \
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL)); \
    *(ierr) = (call); \
    PetscCall(PetscPopErrorHandler()); \
    (msg)[0] = 0; \
    if (*(ierr)) { \
      PetscSpMVErrorText s_ = NULL; \
      PetscCall(PetscErrorMessage(*(ierr), &m_, &s_)); \
      PetscCall(PetscStrncpy((msg), s_ ? s_ : "", sizeof(msg))); \
    } \
  } while (0)
