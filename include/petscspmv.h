/* petscspmv: GPU sparse-matrix formats for fast SpMV as PETSc Mat types.
   Public C API: type names, registration, format options, storage statistics, the
   mixed-precision preconditioner. The declarations only, one line of comment each: the man page
   of each function stands before its definition in src/petsc/ (rendered to docs/manual by
   scripts/manpages.py). */
#pragma once
#include <petscmat.h>
#include <petscspmvversion.h> /* PETSCSPMV_VERSION_MAJOR/MINOR/SUBMINOR, PETSCSPMV_VERSION_GE() */

/* Row-grouped CSR (host reference backend and CUDA backend). The umbrella names resolve to
   the seq or mpi variant by communicator size, like MATAIJ. The seq and mpi names extend
   "seqaij"/"mpiaij": the types are AIJ subclasses (like MATSEQAIJSELL and MATSEQAIJCUSPARSE),
   so MatSetType() on an assembled AIJ matrix converts it in place and PETSc's AIJ code
   (MatMPIAIJGetSeqAIJ(), MatGetFactor(), products, views) accepts them. */
#define MATRGCSR        "rgcsr"
#define MATSEQRGCSR     "seqaijrgcsr"
#define MATMPIRGCSR     "mpiaijrgcsr"
#define MATRGCSRCUDA    "rgcsrcuda"
#define MATSEQRGCSRCUDA "seqaijrgcsrcuda"
#define MATMPIRGCSRCUDA "mpiaijrgcsrcuda"

/* PackSELL: SELL-C-sigma with column deltas and reduced-precision values in 32-bit words. */
#define MATPACKSELL        "packsell"
#define MATSEQPACKSELL     "seqaijpacksell"
#define MATMPIPACKSELL     "mpiaijpacksell"
#define MATPACKSELLCUDA    "packsellcuda"
#define MATSEQPACKSELLCUDA "seqaijpacksellcuda"
#define MATMPIPACKSELLCUDA "mpiaijpacksellcuda"

/* Package registration */
/* Registers the Mat types, their conversions, options, log events and PCMIXEDKRYLOV (register.cpp) */
PETSC_EXTERN PetscErrorCode PetscSpMVInitializePackage(void);
/* Marks the package as not initialized; PetscFinalize() calls it */
PETSC_EXTERN PetscErrorCode PetscSpMVFinalizePackage(void);
/* The version of the library the program runs ("petscspmv 0.1.0, PETSc 3.22.5, CUDA") (register.cpp) */
PETSC_EXTERN PetscErrorCode PetscSpMVGetVersion(char version[], size_t len);
/* The entry point of -dll_append libpetscspmv.so: calls PetscSpMVInitializePackage() */
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_petscspmv(void);

/* Format options (interface.cpp). A setter may be called before or after assembly (after: the
   layout is rebuilt at once, the previous value and layout kept if that fails) and is ignored
   by other types; a getter raises PETSC_ERR_SUP for them. On an MPI matrix a value applies to
   the diagonal and off-diagonal blocks of every rank. */
/* Sets G, the rows per group of RgCSR (a multiple of 32 in [32, 1024]; default 32) */
PETSC_EXTERN PetscErrorCode MatRgCSRSetGroupSize(Mat A, PetscInt G);
/* Gets the rows per group G of an RgCSR matrix */
PETSC_EXTERN PetscErrorCode MatRgCSRGetGroupSize(Mat A, PetscInt *G);
/* Chooses RgCSR's hybrid split: "auto" (default), "none" or the width K of the regular part */
PETSC_EXTERN PetscErrorCode MatRgCSRSetHybrid(Mat A, const char hybrid[]);
/* Gets RgCSR's hybrid option as its canonical string */
PETSC_EXTERN PetscErrorCode MatRgCSRGetHybrid(Mat A, const char *hybrid[]);
/* Chooses the order RgCSR's layout stores rows and columns in: "natural" (default) or "rcm" */
PETSC_EXTERN PetscErrorCode MatRgCSRSetOrdering(Mat A, const char ordering[]);
/* Gets RgCSR's ordering option ("natural" or "rcm") */
PETSC_EXTERN PetscErrorCode MatRgCSRGetOrdering(Mat A, const char *ordering[]);
/* Sets C, the rows of one PackSELL slice (a multiple of 32 in [32, 1024]; default 32) */
PETSC_EXTERN PetscErrorCode MatPackSELLSetSliceHeight(Mat A, PetscInt C);
/* Gets the slice height C of a PackSELL matrix */
PETSC_EXTERN PetscErrorCode MatPackSELLGetSliceHeight(Mat A, PetscInt *C);
/* Sets PackSELL's sorting window sigma (1, the default; PETSC_DECIDE; a multiple of C) */
PETSC_EXTERN PetscErrorCode MatPackSELLSetSigma(Mat A, PetscInt sigma);
/* Gets the sorting window of a PackSELL matrix (after assembly: the one its layout uses) */
PETSC_EXTERN PetscErrorCode MatPackSELLGetSigma(Mat A, PetscInt *sigma);
/* Sets PackSELL's value format: "exact" (default, lossless), "fp16", "bf16" or "e8m<m>" */
PETSC_EXTERN PetscErrorCode MatPackSELLSetValueFormat(Mat A, const char format[]);
/* Gets the value format name of a PackSELL matrix */
PETSC_EXTERN PetscErrorCode MatPackSELLGetValueFormat(Mat A, const char *format[]);
/* Chooses whether PackSELL scales the values by a power of two to fit the format ("none", "auto") */
PETSC_EXTERN PetscErrorCode MatPackSELLSetScaling(Mat A, const char scaling[]);
/* Gets the scaling option of a PackSELL matrix */
PETSC_EXTERN PetscErrorCode MatPackSELLGetScaling(Mat A, const char *scaling[]);
/* Chooses PackSELL's column gaps: "auto" (default: where they make the layout smaller) or "off" */
PETSC_EXTERN PetscErrorCode MatPackSELLSetColumnGaps(Mat A, const char gaps[]);
/* Gets PackSELL's column gaps option ("auto" or "off") */
PETSC_EXTERN PetscErrorCode MatPackSELLGetColumnGaps(Mat A, const char *gaps[]);
/* Chooses PackSELL's hybrid split: "auto" (default), "none" or the width K */
PETSC_EXTERN PetscErrorCode MatPackSELLSetHybrid(Mat A, const char hybrid[]);
/* Gets PackSELL's hybrid option as its canonical string */
PETSC_EXTERN PetscErrorCode MatPackSELLGetHybrid(Mat A, const char *hybrid[]);
/* Chooses the order PackSELL's layout stores rows and columns in: "natural" (default) or "rcm" */
PETSC_EXTERN PetscErrorCode MatPackSELLSetOrdering(Mat A, const char ordering[]);
/* Gets PackSELL's ordering option ("natural" or "rcm") */
PETSC_EXTERN PetscErrorCode MatPackSELLGetOrdering(Mat A, const char *ordering[]);

/* Storage statistics of the layouts a rank holds (see MatSpMVGetStats()). */
typedef struct {
  PetscInt64 rows, cols;         /* local rows; columns of the diagonal block plus the off-diagonal block */
  PetscInt64 nnz;                /* nonzeros of the pattern, explicit zeros included */
  PetscInt64 stored_slots;       /* slots of the regular part: nonzeros + padding + dummies */
  PetscInt64 padding_slots;      /* slots holding no nonzero and no dummy */
  PetscInt64 dummy_words;        /* PackSELL words that only carry a long column jump */
  PetscInt64 tail_nnz;           /* nonzeros in the COO tail of the hybrid split */
  PetscInt64 stored_bytes;       /* bytes a product reads from the matrix arrays (x and y excluded) */
  PetscInt   hybrid_width;       /* K of the hybrid split (largest over the blocks) */
  PetscInt   scale_exponent;     /* PackSELL: values are stored times 2^scale_exponent (0 unless
                                -mat_packsell_scaling auto scales). MPI: each block holding
                                nonzeros chooses its own; this is the smallest of this rank's */
  PetscInt   scale_exponent_max; /* the largest of them (equal to scale_exponent on seq) */
} MatSpMVStats;

/* Gets the storage statistics of the layouts this rank holds (interface.cpp) */
PETSC_EXTERN PetscErrorCode MatSpMVGetStats(Mat A, MatSpMVStats *stats);
/* Sets whether a CUDA matrix builds and updates its layout without keeping AIJCUSPARSE's device CSR */
PETSC_EXTERN PetscErrorCode MatSpMVSetFreeDeviceCSR(Mat A, PetscBool flg);

/* ------------------------------------------------------------------ mixed-precision Krylov */
#include <petscpc.h>

/* The preconditioner: an inner reduced-precision Krylov solve on a scaled PackSELL copy of the
   Pmat, for a flexible outer FP64 method (man page: solvers/pc_mixedkrylov.cpp, docs/mixed.md) */
#define PCMIXEDKRYLOV "mixedkrylov"

/* Counts of a PCMIXEDKRYLOV on this rank: the inner-solve counts since the copy was last built,
   builds and value updates since the PC was created. */
typedef struct {
  PetscInt       applications;     /* inner solves (PCApply) */
  PetscInt       inner_its;        /* inner CG steps, or F3R innermost Richardson steps, summed */
  PetscInt       breakdowns;       /* inner solves ended by p^T A p <= 0 */
  PetscInt       early_exits;      /* inner solves ended by -pc_mixedkrylov_rtol, or with the residual 2^-50 below the right-hand side (converged far beyond FP32) */
  PetscInt       jacobi_fallbacks; /* inner solves that made no step (the Jacobi step returned) */
  PetscInt       builds;           /* PackSELL copies built */
  PetscInt       value_updates;    /* value-only re-encodings (same pattern) */
  PetscLogDouble setup_time;       /* seconds of the last setup or value update */
} PCMixedKrylovStats;

/* Gets the counts of a PCMIXEDKRYLOV on this rank (solvers/pc_mixedkrylov.cpp) */
PETSC_EXTERN PetscErrorCode PCMixedKrylovGetStats(PC pc, PCMixedKrylovStats *stats);

/* ------------------------------------------------------------------ mixed-precision CG */
#include <petscksp.h>

/* CG with reliable updates on a scaled low-precision PackSELL copy of the Pmat (man page:
   solvers/ksp_mixedcg.cpp, docs/mixed.md) */
#define KSPMIXEDCG "mixedcg"

/* Counts of the last KSPSolve() of a KSPMIXEDCG (the same on every rank). */
typedef struct {
  PetscInt  its;              /* CG steps, low precision and FP64 */
  PetscInt  lowp_its;         /* of which with the low-precision copy */
  PetscInt  reliable_updates; /* true residuals computed after the first */
  PetscInt  raises;           /* precision raises by the guard or a low-precision breakdown */
  PetscInt  breakdowns;       /* low-precision steps with p^T A_lp p <= 0 (or (r, M^-1 r) <= 0) */
  PetscBool fp64_fallback;    /* the solve ended as FP64 CG */
  PetscInt  mantissa_bits;    /* of the operator now: the copy's value format (23: FP32-rounded exact values), 52 after the FP64 fallback */
  PetscInt  builds;           /* copies built since the KSP was set up (new Pmat states) */
  PetscInt  pc_applications;  /* applications of the PC (0 when the PC is the method's own Jacobi scaling), */
  PetscInt  fp32_vcycles;     /* of which V-cycles in FP32 on reduced-precision copies (PCMG, PCGAMG: -ksp_mixedcg_mg_fp32) */
  PetscInt  pc_checks;        /* segments of -ksp_mixedcg_guard_pc_steps steps ended to check the FP32 V-cycle against the PC in FP64 */
  PetscReal pc_departure;     /* the last such check's ||z_fp32 - z|| / ||z|| (0 when none) */
} KSPMixedCGStats;

/* Gets the counts of the last solve of a KSPMIXEDCG (solvers/ksp_mixedcg.cpp) */
PETSC_EXTERN PetscErrorCode KSPMixedCGGetStats(KSP ksp, KSPMixedCGStats *stats);
