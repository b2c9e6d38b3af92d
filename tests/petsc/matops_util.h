/* What the sources of spmv_matops share: the driver (matops_test.c) runs the operations of the
   groups (matops_<group>_test.c), each operation applied to an AIJ matrix and to the same matrix
   of ours. Here: the context of a run, the checks that count a FAIL, the test matrices, the
   comparisons and the operation tables. */
#pragma once
#include "spmv_test_util.h"

#include <petscksp.h>
#include <string.h>

#define TEST_FAIL ((PetscErrorCode)1000) /* a comparison failed (not a PETSc error) */

typedef enum {
  KN, /* square nonsymmetric: empty row, long row (with explicit zeros), missing diagonal entries */
  KS, /* SPD band */
  KG, /* square nonsymmetric, nonsingular (full diagonal), long row */
  KR  /* rectangular (3n/4 x n), long row */
} Kind;

typedef struct {
  MPI_Comm    comm;
  PetscMPIInt size, rank;
  PetscInt    n;
  const char *family; /* rgcsr, packsell, ... (umbrella name) */
  const char *config; /* g64, exact, e8m14 */
  PetscBool   packsell, rgcsr, lossy, viaset;
  PetscReal   tol_shadow;               /* relative (inf-norm) tolerance of products computed by our layouts */
  char        seqname[64], mpiname[64]; /* type names of the family's seq and mpi matrices */
  char        failmsg[1024];
  char        note[512];
  PetscBool   traceback; /* -traceback: PETSc's traceback of an operation's error on stderr */
} Ctx;

/* One operation: its name as printed (and given to -ops), the function that runs it. */
typedef struct {
  const char *name;
  PetscErrorCode (*fn)(Ctx *);
} Op;

/* The operations of each group, in the order they run; each table ends with {NULL, NULL}. */
extern const Op kOpsProducts[];  /* matops_products_test.c */
extern const Op kOpsQueries[];   /* matops_queries_test.c */
extern const Op kOpsAssembly[];  /* matops_assembly_test.c */
extern const Op kOpsValues[];    /* matops_values_test.c */
extern const Op kOpsStructure[]; /* matops_structure_test.c */
extern const Op kOpsFactor[];    /* matops_factor_test.c */
extern const Op kOpsView[];      /* matops_view_test.c */

/* ------------------------------------------------------------------------------ checks */
#define CHK(c, cond, ...) \
  do { \
    int ok_ = (cond) ? 1 : 0, all_ = 0; \
    PetscCallMPI(MPIU_Allreduce(&ok_, &all_, 1, MPI_INT, MPI_MIN, (c)->comm)); \
    if (!all_) { \
      if (!ok_) PetscCall(PetscSNPrintf((c)->failmsg, sizeof((c)->failmsg), __VA_ARGS__)); \
      PetscFunctionReturn(TEST_FAIL); \
    } \
  } while (0)

/* A check from spmv_test_util (which raises PETSC_ERR_PLIB on a mismatch) counted as a FAIL. */
#define CMP(c, expr) \
  do { \
    PetscErrorCode e_ = (expr); \
    if (e_) { \
      PetscSpMVErrorText s_ = NULL; \
      PetscCall(PetscErrorMessage(e_, NULL, &s_)); \
      PetscCall(PetscSNPrintf((c)->failmsg, sizeof((c)->failmsg), "%s", s_ ? s_ : "comparison failed")); \
      PetscFunctionReturn(TEST_FAIL); \
    } \
  } while (0)

/* AIJ first: when AIJ refuses the operation, ours must refuse it too; the op is then done, after
   `cleanup` has freed what it made (the tests run under -malloc_dump). */
#define AIJFIRST(c, aijexpr, oursexpr, cleanup) \
  do { \
    PetscErrorCode ea_ = (aijexpr); \
    if (ea_) { \
      PetscErrorCode eo_ = (oursexpr); \
      CHK(c, eo_ != 0, "AIJ refuses (error %d) but ours succeeds", (int)ea_); \
      PetscCall(Note(c, "refused by AIJ too")); \
      cleanup; \
      PetscFunctionReturn(PETSC_SUCCESS); \
    } \
  } while (0)

/* Adds s (once) to the note printed after "ok". */
PetscErrorCode Note(Ctx *c, const char *s);

/* Sets the context's format option on M (RgCSR group size 64, PackSELL value format). */
PetscErrorCode ApplyOpts(Ctx *c, Mat M);

/* A matrix created by an operation from one of ours: either ours (seq/mpi name of the family)
   with the source's option, or AIJ (or dense when `dense_ok`). The result type goes to the note. */
PetscErrorCode CheckResult(Ctx *c, Mat M, const char *what, PetscBool dense_ok);

/* The source itself must still be ours with its option (operations that replace the header). */
PetscErrorCode CheckStillOurs(Ctx *c, Mat B, const char *what);

/* ||ref - got||_inf <= tol ||ref||_inf; got may be of another vector type (same layout). */
PetscErrorCode CmpVec(Ctx *c, Vec ref, Vec got, PetscReal tol, const char *what);

/* ||X - Y||_F <= tol ||Y||_F after conversion of both to AIJ (any types). */
PetscErrorCode CmpMat(Ctx *c, Mat X, Mat Y, PetscReal tol, const char *what);

/* After a value change: B's MatMult equals Aref's (bound of the layout), B's MatMult equals the
   MatMult of B's own AIJ arrays (a stale layout fails here), and B's entries equal Aref's. */
PetscErrorCode Post(Ctx *c, Mat Aref, Mat B, const char *what);

/* ------------------------------------------------------------------------------ matrices */
/* The test matrix of a kind, of the given type (with the context's option) or AIJ (NULL). */
PetscErrorCode Generate(Ctx *c, Kind kind, const char *type, Mat *A);

/* The AIJ matrix and the same matrix of ours (built as the context says). */
PetscErrorCode Pair(Ctx *c, Kind kind, Mat *A, Mat *B);

/* A matrix of the context's family with A's local sizes, set up without preallocation (PETSc's
   hash assembly), nothing set yet. */
PetscErrorCode CreateUnpreallocated(Ctx *c, Mat A, Mat *M);

/* Sets A's entries into M, row by row (INSERT_VALUES; no assembly). */
PetscErrorCode SetRowsOf(Mat A, Mat M);

/* Random vectors of A's (right: column, else row) layout, and a copy of B's type. */
PetscErrorCode RVec(Mat A, Mat B, PetscBool right, unsigned long seed, Vec *va, Vec *vb);

/* Destroys those given (NULL: none). */
PetscErrorCode Destroy4(Mat *a, Mat *b, Vec *x, Vec *y);
