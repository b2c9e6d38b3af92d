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
#define MATRGCSR            "rgcsr"
#define MATSEQRGCSR         "seqaijrgcsr"
#define MATMPIRGCSR         "mpiaijrgcsr"
#define MATRGCSRCUDA        "rgcsrcuda"
#define MATSEQRGCSRCUDA     "seqaijrgcsrcuda"
#define MATMPIRGCSRCUDA     "mpiaijrgcsrcuda"

/* PackSELL: SELL-C-sigma with column deltas and reduced-precision values in 32-bit words. */
#define MATPACKSELL         "packsell"
#define MATSEQPACKSELL      "seqaijpacksell"
#define MATMPIPACKSELL      "mpiaijpacksell"
#define MATPACKSELLCUDA     "packsellcuda"
#define MATSEQPACKSELLCUDA  "seqaijpacksellcuda"
#define MATMPIPACKSELLCUDA  "mpiaijpacksellcuda"

/* Package registration */
/* Registers the Mat types, their conversions, options, log events and PCMIXEDKRYLOV (register.cpp) */
PETSC_EXTERN PetscErrorCode PetscSpMVInitializePackage(void);
/* Marks the package as not initialized; PetscFinalize() calls it */
PETSC_EXTERN PetscErrorCode PetscSpMVFinalizePackage(void);
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
/* Chooses PackSELL's hybrid split: "auto" (default), "none" or the width K */
PETSC_EXTERN PetscErrorCode MatPackSELLSetHybrid(Mat A, const char hybrid[]);
/* Gets PackSELL's hybrid option as its canonical string */
PETSC_EXTERN PetscErrorCode MatPackSELLGetHybrid(Mat A, const char *hybrid[]);

/* Storage statistics of the layouts a rank holds (see MatSpMVGetStats()). */
typedef struct {
  PetscInt64 rows, cols;     /* local rows; columns of the diagonal block plus the off-diagonal block */
  PetscInt64 nnz;            /* nonzeros of the pattern, explicit zeros included */
  PetscInt64 stored_slots;   /* slots of the regular part: nonzeros + padding + dummies */
  PetscInt64 padding_slots;  /* slots holding no nonzero and no dummy */
  PetscInt64 dummy_words;    /* PackSELL words that only carry a long column jump */
  PetscInt64 tail_nnz;       /* nonzeros in the COO tail of the hybrid split */
  PetscInt64 stored_bytes;   /* bytes a product reads from the matrix arrays (x and y excluded) */
  PetscInt   hybrid_width;   /* K of the hybrid split (largest over the blocks) */
  PetscInt   scale_exponent; /* PackSELL: values are stored times 2^scale_exponent (0 unless
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

/*MC
  KSPMIXEDCG - "mixedcg": CG on the symmetrically scaled system D^-1/2 A D^-1/2 (D = diag(A):
  Jacobi-preconditioned CG) whose iteration runs on FP32 vectors with a low-precision PackSELL
  copy of the scaled Pmat, with reliable updates: whenever the iterated residual has fallen by
  delta since the last update, the true residual r = b - A x is recomputed in FP64 with the exact
  Amat, the iteration continues from it with its search direction kept (re-orthogonalised
  against the new residual), and the solution is accumulated in FP64. Convergence and the
  monitor see only these FP64 true residuals.

  Options Database Keys:
+ -ksp_mixedcg_delta <0.1> - reliable update when the iterated residual falls below delta times
    its largest value since the last update
. -ksp_mixedcg_value_format <e8m14> - the copy's value format (fp16, bf16, e8m<m> with m in 7..22,
    or exact: FP64 values rounded to FP32 in the products); the other
    -ksp_mixedcg_mat_packsell_* layout options of PackSELL apply to the copy too
. -ksp_mixedcg_dither <true> - round the copy's values up or down by a symmetric pseudo-random
    dither (unbiased) instead of to nearest (equal values, equal errors)
. -ksp_mixedcg_rowsum_compensation <true> - add the copy's rounding of each row sum back as an FP32
    diagonal (the smooth modes of PDE matrices then see no error of the copy)
. -ksp_mixedcg_guard_value_format <e8m22> - the wider format the guard raises the copy to (none:
    straight to FP64 CG)
. -ksp_mixedcg_guard_departure <0.05> - a segment is lossy (and raises at once) when the true
    residual departs from the iterated one by more than this relative norm
. -ksp_mixedcg_guard_ratio <1.5> - a segment between two reliable updates is lossy when it needs
    more than this many times the iterations per decade of true residual that its iterated
    residual predicts (0: only a growing true residual counts)
. -ksp_mixedcg_guard_strikes <2> - lossy segments in a row that raise the precision
. -ksp_mixedcg_backend <auto,host,cuda> - auto: on the GPU when the Pmat's vectors are CUDA vectors
    and the KSP runs on one rank, else on the host
- -ksp_mixedcg_check_every <8> - CUDA backend: CG steps launched between two reads of the device's
    state (the only host synchronisations of the loop besides the reliable updates)

  Notes:
  The copy's values are rounded with an unbiased, symmetric dither and its row sums compensated
  by an FP32 diagonal, so that its error stays away from the smooth modes that every reliable
  update would inject it into. The guard keeps the copy's precision up to the matrix: when the
  true residual stops following the iterated one (a true residual that grew or departed from the
  iterated one, or log(f_iter) / log(f_true) above the ratio for the strikes in a row, with f the
  reductions of one segment), the copy is rebuilt at the guard's value format, and when that is
  not enough the solve continues as FP64 CG (FP64 vectors, the exact Amat as operator) from the
  current x; the direction restarts at a raise. A step with p^T A_lp p <= 0 is checked with the
  exact matrix: p^T A p <= 0 ends the solve with `KSP_DIVERGED_INDEFINITE_MAT`; otherwise the
  copy failed where A did not, and the precision is raised. The precision reached is kept for later
  solves with the same Pmat; a Pmat with a new state rebuilds the copy at the start format.

  The method brings its own Jacobi scaling: the PC must be `PCNONE` (the default it sets) or
  `PCJACOBI` (the same method); the norm is the unpreconditioned one. On several ranks the
  low-precision operator is the whole matrix: the diagonal and off-diagonal blocks are scaled
  and stored in PackSELL, and the halo of the FP32 direction is exchanged through a PetscSF
  (the host backend). The Pmat must be AIJ-based (others are converted) with a positive diagonal;
  a diagonal that is not positive and finite, a non-finite entry, or a scaled value outside the
  value format are PETSc errors on every rank (`PETSC_ERR_ARG_WRONG`, `PETSC_ERR_ARG_OUTOFRANGE`).
  `-ksp_view` shows the value format (LOSSY), delta, the guard, the backend and the last solve's
  CG steps, reliable updates, precision raises and whether the FP64 fallback was taken;
  `-ksp_monitor` prints the true residual at the start and at every reliable update.

  Reference:
  Sleijpen, van der Vorst, Reliable updated residuals in hybrid Bi-CG methods (1996); Clark,
  Babich, Barros, Brower, Rebbi, Solving lattice QCD systems of equations using mixed precision
  solvers on GPUs (2010); QUDA's CG; docs/mixed.md.

  Level: advanced

.seealso: `KSPMixedCGGetStats()`, `KSPCG`, `PCMIXEDKRYLOV`, `MATPACKSELLCUDA`
M*/
#define KSPMIXEDCG "mixedcg"

/* Counts of the last KSPSolve() of a KSPMIXEDCG (the same on every rank). */
typedef struct {
  PetscInt  its;              /* CG steps, low precision and FP64 */
  PetscInt  lowp_its;         /* of which with the low-precision copy */
  PetscInt  reliable_updates; /* true residuals computed after the first */
  PetscInt  raises;           /* precision raises by the guard or a low-precision breakdown */
  PetscInt  breakdowns;       /* low-precision steps with p^T A_lp p <= 0 */
  PetscBool fp64_fallback;    /* the solve ended as FP64 CG */
  PetscInt  mantissa_bits;    /* of the operator now: the copy's value format (23: FP32-rounded exact values), 52 after the FP64 fallback */
  PetscInt  builds;           /* copies built since the KSP was set up (new Pmat states) */
} KSPMixedCGStats;

/*@
  KSPMixedCGGetStats - Gets the counts of the last solve of a `KSPMIXEDCG`.

  Not Collective

  Input Parameter:
. ksp - the Krylov solver

  Output Parameter:
. stats - CG steps (all, low precision), reliable updates, precision raises, low-precision
  breakdowns, whether the FP64 fallback was taken, the operator's mantissa bits, copies built

  Errors:
  `PETSC_ERR_SUP` when ksp is not a `KSPMIXEDCG`.

  Level: advanced

.seealso: `KSPMIXEDCG`
@*/
PETSC_EXTERN PetscErrorCode KSPMixedCGGetStats(KSP ksp, KSPMixedCGStats *stats);
