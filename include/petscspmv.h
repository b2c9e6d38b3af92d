/* petscspmv: GPU sparse-matrix formats for fast SpMV as PETSc Mat types.
   Public C API: type names, registration, format options, storage statistics. */
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

/*@C
  PetscSpMVInitializePackage - Registers the petscspmv Mat types (the 12 names above; the CUDA
  ones only in a build with CUDA), their MatConvert() functions, options and log events.

  Not Collective

  Notes:
  Idempotent: later calls return at once. Call it after PetscInitialize() in programs linked
  with the library; programs that load it with -dll_append get it called by
  PetscDLLibraryRegister_petscspmv(). PetscFinalize() undoes it (PetscSpMVFinalizePackage()).

  Errors:
  `PETSC_ERR_LIB` when the program runs a PETSc of another major.minor version than the one the
  library was built against (the message names both); whatever MatRegister() or
  PetscLogEventRegister() raise (out of memory).

  Reference:
  Formats: Oberhuber, Suzuki, Vacata, "New Row-grouped CSR format for storing the sparse
  matrices on GPU with implementation in CUDA" (RgCSR); the PackSELL paper (SELL-C-sigma with
  packed delta/value words); Anzt, Cojean, Flegar et al., Ginkgo's load-balancing SpMV (hybrid
  split). See docs/design.md.

.seealso: `PetscSpMVFinalizePackage()`, `PetscDLLibraryRegister_petscspmv()`
@*/
PETSC_EXTERN PetscErrorCode PetscSpMVInitializePackage(void);
/*@C
  PetscSpMVFinalizePackage - Marks the package as not initialized (registered by
  PetscSpMVInitializePackage() with PetscRegisterFinalize(), so PetscFinalize() calls it).

  Not Collective

.seealso: `PetscSpMVInitializePackage()`
@*/
PETSC_EXTERN PetscErrorCode PetscSpMVFinalizePackage(void);
/*@C
  PetscDLLibraryRegister_petscspmv - Entry point PETSc calls when the library is loaded with
  -dll_append <path>/libpetscspmv.so (or -dll_prepend): calls PetscSpMVInitializePackage(), so
  unmodified PETSc programs accept -mat_type rgcsr, packsell, rgcsrcuda and packsellcuda.

  Not Collective

.seealso: `PetscSpMVInitializePackage()`
@*/
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_petscspmv(void);

/*
  Format options. Every setter may be called before or after assembly: before, the value is
  used when the layout is built at MatAssemblyEnd(); after, the layout is rebuilt at once
  (and if that fails, the previous value and layout are kept). Setters are ignored for matrices
  of other types (PETSc convention); getters raise an error for them. On an MPI matrix the
  value applies to the diagonal and off-diagonal blocks of every rank (collective).
*/

/*@
  MatRgCSRSetGroupSize - Sets G, the number of consecutive rows stored together (column-major)
  in one group of the row-grouped CSR layout.

  Logically Collective

  Input Parameters:
+ A - a `MATRGCSR` or `MATRGCSRCUDA` matrix (seq or mpi)
- G - rows per group: a multiple of 32 from 32 to 1024 (default 32)

  Options Database Key:
. -mat_rgcsr_group_size <G> - rows per group

  Errors:
  `PETSC_ERR_ARG_OUTOFRANGE` when G is not a multiple of 32 in [32, 1024].

  Reference:
  Oberhuber, Suzuki, Vacata, "New Row-grouped CSR format for storing the sparse matrices on GPU
  with implementation in CUDA", Acta Technica 56 (2011).

  Level: intermediate

.seealso: `MatRgCSRGetGroupSize()`, `MatRgCSRSetHybrid()`, `MATRGCSR`
@*/
PETSC_EXTERN PetscErrorCode MatRgCSRSetGroupSize(Mat A, PetscInt G);
/*@
  MatRgCSRGetGroupSize - Gets the rows per group G of an RgCSR matrix.

  Not Collective

  Input Parameter:
. A - a `MATRGCSR` or `MATRGCSRCUDA` matrix

  Output Parameter:
. G - rows per group

  Errors:
  `PETSC_ERR_SUP` when A is not an RgCSR matrix.

  Level: intermediate

.seealso: `MatRgCSRSetGroupSize()`
@*/
PETSC_EXTERN PetscErrorCode MatRgCSRGetGroupSize(Mat A, PetscInt *G);

/*@
  MatRgCSRSetHybrid - Chooses the hybrid split of an RgCSR matrix: the first K nonzeros of every
  row stay in the grouped layout, the rest go to a COO tail processed by a load-balanced kernel.

  Logically Collective

  Input Parameters:
+ A      - a `MATRGCSR` or `MATRGCSRCUDA` matrix
- hybrid - "auto" (K chosen from the row-length distribution by a byte-count model, the
           default), "none" (no tail: K is the longest row) or a positive integer K

  Options Database Key:
. -mat_rgcsr_hybrid <auto|none|K> - the hybrid split

  Errors:
  `PETSC_ERR_ARG_WRONG` when the string is none of the above.

  Reference:
  Anzt, Cojean, Flegar, Goebel, Gruetzmacher, Nayak, Ribizel, Tsai, Quintana-Orti, "Ginkgo: A
  Modern Linear Operator Algebra Framework for High Performance Computing", ACM TOMS 48 (2022)
  (hybrid format; load-balancing SpMV kernels).

  Level: intermediate

.seealso: `MatRgCSRGetHybrid()`, `MatPackSELLSetHybrid()`
@*/
PETSC_EXTERN PetscErrorCode MatRgCSRSetHybrid(Mat A, const char hybrid[]);
/*@
  MatRgCSRGetHybrid - Gets the hybrid option of an RgCSR matrix as its canonical string
  ("auto", "none" or the width K).

  Not Collective

  Input Parameter:
. A - a `MATRGCSR` or `MATRGCSRCUDA` matrix

  Output Parameter:
. hybrid - the option (owned by the matrix; valid until the next call of this getter or a setter)

  Level: intermediate

.seealso: `MatRgCSRSetHybrid()`
@*/
PETSC_EXTERN PetscErrorCode MatRgCSRGetHybrid(Mat A, const char *hybrid[]);

/*@
  MatPackSELLSetSliceHeight - Sets C, the number of (sorted) rows of one PackSELL slice.

  Logically Collective

  Input Parameters:
+ A - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix
- C - slice height: a multiple of 32 in [32, 1024] (default 32)

  Options Database Key:
. -mat_packsell_slice_height <C> - slice height

  Errors:
  `PETSC_ERR_ARG_OUTOFRANGE` for any other value, or when the current sigma is neither
  `PETSC_DECIDE`, 1 nor a multiple of C.

  Reference:
  Kreutzer, Hager, Wellein, Fehske, Bishop, "A unified sparse matrix data format for efficient
  general sparse matrix-vector multiplication on modern processors with wide SIMD units",
  SIAM J. Sci. Comput. 36 (2014) (SELL-C-sigma); the PackSELL paper for the packed words.

  Level: intermediate

.seealso: `MatPackSELLSetSigma()`, `MatPackSELLGetSliceHeight()`
@*/
PETSC_EXTERN PetscErrorCode MatPackSELLSetSliceHeight(Mat A, PetscInt C);
/*@
  MatPackSELLGetSliceHeight - Gets the slice height C of a PackSELL matrix.

  Not Collective

  Input Parameter:
. A - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix

  Output Parameter:
. C - slice height

  Level: intermediate

.seealso: `MatPackSELLSetSliceHeight()`
@*/
PETSC_EXTERN PetscErrorCode MatPackSELLGetSliceHeight(Mat A, PetscInt *C);

/*@
  MatPackSELLSetSigma - Sets sigma, the window of rows inside which PackSELL sorts rows by
  length (longest first) before cutting slices, or lets it be chosen at assembly.

  Logically Collective

  Input Parameters:
+ A     - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix
- sigma - 1 (no sorting, the default), `PETSC_DECIDE` (chosen from the row lengths when the
          layout is built) or a positive multiple of the slice height

  Options Database Key:
. -mat_packsell_sigma <sigma> - sorting window (`PETSC_DECIDE` or `DECIDE` for the automatic choice)

  Notes:
  Sorting packs rows of similar length into the same slice, so slices carry less padding, but it
  scatters the writes of y and the rows of a slice no longer read neighbouring parts of x. With
  `PETSC_DECIDE` each layout (on an MPI matrix: each diagonal and off-diagonal block) takes the
  smallest of 1, C, 2C, 4C, ... (up to the first power-of-two multiple of the slice height C that
  covers all rows) whose stored bytes, regular words plus hybrid tail, are within 2% of the
  smallest; so matrices whose slices hold rows of nearly equal length keep 1. The choice depends
  on the nonzero pattern only; value-only re-assemblies keep it.

  Errors:
  `PETSC_ERR_ARG_OUTOFRANGE` for 0, a negative value other than `PETSC_DECIDE`, or a value that
  is not 1 and not a positive multiple of the slice height.

  Reference:
  Kreutzer, Hager, Wellein, Fehske, Bishop, "A unified sparse matrix data format for efficient
  general sparse matrix-vector multiplication on modern processors with wide SIMD units",
  SIAM J. Sci. Comput. 36 (2014) (SELL-C-sigma).

  Level: intermediate

.seealso: `MatPackSELLSetSliceHeight()`, `MatPackSELLGetSigma()`
@*/
PETSC_EXTERN PetscErrorCode MatPackSELLSetSigma(Mat A, PetscInt sigma);
/*@
  MatPackSELLGetSigma - Gets the sorting window sigma of a PackSELL matrix.

  Not Collective

  Input Parameter:
. A - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix

  Output Parameter:
. sigma - once A is assembled, the window of the layout actually built (1 or a multiple of the
          slice height; `PETSC_DECIDE` resolved); before assembly, the option as set
          (1 by default)

  Notes:
  For an MPI matrix the value after assembly is the one of this rank's diagonal block; other
  blocks and ranks may have chosen other windows (`MatView()` with `PETSC_VIEWER_ASCII_INFO`
  shows the largest). The layout is brought up to date first, as in `MatSpMVGetStats()`.

  Errors:
  `PETSC_ERR_SUP` when A is not a PackSELL matrix; after assembly, the errors of bringing the
  layout up to date (a value that overflows the value format).

  Level: intermediate

.seealso: `MatPackSELLSetSigma()`
@*/
PETSC_EXTERN PetscErrorCode MatPackSELLGetSigma(Mat A, PetscInt *sigma);

/*@
  MatPackSELLSetValueFormat - Sets the reduced-precision format of the values packed with the
  column deltas into each 32-bit PackSELL word.

  Logically Collective

  Input Parameters:
+ A      - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix
- format - "exact" (the default: FP64 values stored beside the words, lossless), "fp16"
           (IEEE binary16), "bf16" (bfloat16) or "e8m<m>" (sign, 8-bit exponent, m-bit
           mantissa, 7 <= m <= 22)

  Options Database Key:
. -mat_packsell_value_format <exact|fp16|bf16|e8m<m>> - value format

  Notes:
  Products accumulate in double precision. The lossy formats round every value (relative
  error up to 2^-11 for fp16, 2^-8 for bf16, 2^-(m+1) for e8m<m>), so use them only where
  that accuracy is enough (e.g. the inner operator of a mixed-precision solver); the default
  gives the same products as AIJ. A finite value that overflows the format is an error
  (`PETSC_ERR_ARG_OUTOFRANGE`, naming row, column and value) unless `MatPackSELLSetScaling()`
  is "auto"; a nonzero that would be stored as zero is always an error.

  Errors:
  `PETSC_ERR_ARG_WRONG` for an unknown format name.

  Reference:
  The PackSELL paper (SELL-C-sigma with delta-encoded column indices and reduced-precision
  values packed in one word, used as the inner operator of mixed-precision Krylov solvers).

  Level: intermediate

.seealso: `MatPackSELLGetValueFormat()`, `MatPackSELLSetScaling()`
@*/
PETSC_EXTERN PetscErrorCode MatPackSELLSetValueFormat(Mat A, const char format[]);
/*@
  MatPackSELLGetValueFormat - Gets the value format name of a PackSELL matrix.

  Not Collective

  Input Parameter:
. A - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix

  Output Parameter:
. format - "fp16", "bf16", "e8m<m>" or "exact" (owned by the matrix; valid until the next call of this getter or a setter)

  Level: intermediate

.seealso: `MatPackSELLSetValueFormat()`
@*/
PETSC_EXTERN PetscErrorCode MatPackSELLGetValueFormat(Mat A, const char *format[]);

/*@
  MatPackSELLSetScaling - Chooses whether PackSELL may scale all values by a power of two so
  that they fit the value format.

  Logically Collective

  Input Parameters:
+ A       - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix
- scaling - "none" (the default: a value that overflows, or a nonzero that would round to
            zero, is an error) or "auto" (values are stored times 2^s, s of either sign chosen
            afresh at every assembly so the largest one sits in the format's top binade,
            |s| <= 1022; products multiply by 2^-s, exactly; a nonzero that would still
            round to zero, because the matrix spans more magnitudes than the format holds,
            is an error naming it and a wider format)

  Options Database Key:
. -mat_packsell_scaling <none|auto> - value scaling

  Errors:
  `PETSC_ERR_ARG_WRONG` for any other string.

  Level: intermediate

.seealso: `MatPackSELLSetValueFormat()`, `MatPackSELLGetScaling()`
@*/
PETSC_EXTERN PetscErrorCode MatPackSELLSetScaling(Mat A, const char scaling[]);
/*@
  MatPackSELLGetScaling - Gets the scaling option ("none" or "auto") of a PackSELL matrix.

  Not Collective

  Input Parameter:
. A - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix

  Output Parameter:
. scaling - "none" or "auto" (owned by the matrix; valid until the next call of this getter or a setter)

  Level: intermediate

.seealso: `MatPackSELLSetScaling()`
@*/
PETSC_EXTERN PetscErrorCode MatPackSELLGetScaling(Mat A, const char *scaling[]);

/*@
  MatPackSELLSetHybrid - Chooses the hybrid split of a PackSELL matrix (see
  `MatRgCSRSetHybrid()`): "auto" (default), "none" or a positive width K.

  Logically Collective

  Input Parameters:
+ A      - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix
- hybrid - "auto", "none" or a positive integer K

  Options Database Key:
. -mat_packsell_hybrid <auto|none|K> - the hybrid split

  Errors:
  `PETSC_ERR_ARG_WRONG` when the string is none of the above.

  Level: intermediate

.seealso: `MatPackSELLGetHybrid()`, `MatRgCSRSetHybrid()`
@*/
PETSC_EXTERN PetscErrorCode MatPackSELLSetHybrid(Mat A, const char hybrid[]);
/*@
  MatPackSELLGetHybrid - Gets the hybrid option of a PackSELL matrix ("auto", "none" or K).

  Not Collective

  Input Parameter:
. A - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix

  Output Parameter:
. hybrid - the option (owned by the matrix; valid until the next call of this getter or a setter)

  Level: intermediate

.seealso: `MatPackSELLSetHybrid()`
@*/
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

/*@
  MatSpMVGetStats - Gets the storage statistics of the layouts held by this rank (for an MPI
  matrix: its diagonal and off-diagonal blocks, summed).

  Not Collective

  Input Parameter:
. A - an assembled matrix of one of the petscspmv types

  Output Parameter:
. stats - the statistics; the layout is brought up to date first

  Errors:
  `PETSC_ERR_SUP` when A is not a petscspmv type, `PETSC_ERR_ARG_WRONGSTATE` when it is not
  assembled.

  Level: advanced

.seealso: `MatView()` with `PETSC_VIEWER_ASCII_INFO`
@*/
PETSC_EXTERN PetscErrorCode MatSpMVGetStats(Mat A, MatSpMVStats *stats);

/*@
  MatSpMVSetFreeDeviceCSR - Sets whether the layout of a CUDA matrix (`MATRGCSRCUDA`,
  `MATPACKSELLCUDA`) is built and updated without keeping AIJCUSPARSE's device CSR.

  Logically Collective

  Input Parameters:
+ A   - the matrix (other types ignore the call)
- flg - `PETSC_TRUE`: when AIJCUSPARSE's device copy of the CSR is not current, builds and value
        updates upload the host CSR into a temporary device buffer and free it (device memory:
        the layout alone); `PETSC_FALSE` (default): they read AIJCUSPARSE's device CSR, which
        PETSc uploads where the host is newer (the values only when the pattern is unchanged)
        and which stays on the device as AIJCUSPARSE keeps it

  Options Database Key:
. -mat_spmv_free_device_csr <bool> - the same

  Notes:
  The CUDA types are AIJCUSPARSE matrices underneath: operations other than `MatMult()`,
  `MatMultAdd()` and `MatGetDiagonal()` (factorizations, `MatMultTranspose()`, products,
  `MatScale()`, ...) are AIJCUSPARSE's and allocate its device CSR when they need it, whatever
  this flag says. The flag applies to the builds and value updates that follow.

  Level: advanced

.seealso: `MatView()` with `PETSC_VIEWER_ASCII_INFO` (it reports the device bytes of both)
@*/
PETSC_EXTERN PetscErrorCode MatSpMVSetFreeDeviceCSR(Mat A, PetscBool flg);

/* ------------------------------------------------------------------ mixed-precision Krylov */
#include <petscpc.h>

/*MC
  PCMIXEDKRYLOV - "mixedkrylov": a preconditioner whose application is an inner Krylov solve in
  reduced precision on a PackSELL copy of the symmetrically scaled Pmat, D^-1/2 A D^-1/2
  (D = diag(A), kept exactly symmetric), for a flexible outer FP64 Krylov method: the outer
  method multiplies by the exact matrix, so its residual is the true one, and the inner solve
  only has to be a good preconditioner.

  Options Database Keys:
+ -pc_mixedkrylov_inner <cg,f3r> - cg: inner-outer CG, a fixed number of FP32 CG steps (the
    PackSELL paper's mixed PCG); f3r: F3R's nested FGMRES(m2) FP32 / FGMRES(m3) FP32 /
    Richardson(m4) FP16-vector scheme (Suzuki, Iwashita)
. -pc_mixedkrylov_max_it <20> - inner CG steps per application
. -pc_mixedkrylov_rtol <0> - inner CG early exit at this residual reduction (0: fixed count)
. -pc_mixedkrylov_f3r_m <8,4,2> - F3R steps of levels 2, 3, 4
. -pc_mixedkrylov_f3r_weight_period <64> - F3R: calls between Richardson weight updates
. -pc_mixedkrylov_backend <auto,host,cuda> - auto: on the GPU when the Pmat's vectors are
    CUDA vectors (aijcusparse, rgcsrcuda, packsellcuda), else the host twin
. -pc_mixedkrylov_monitor - print the inner residual norms of every application
. -pc_mixedkrylov_allow_nonflexible - warn instead of refusing an outer KSP that does not give
    a true residual with this preconditioner (see Notes)
- -pc_mixedkrylov_mat_packsell_value_format <e8m14> - the copy's value format (fp16, bf16,
    e8m<m>, exact), and the other -pc_mixedkrylov_mat_packsell_* layout options of PackSELL

  Notes:
  The inner solve changes from one application to the next, so the KSP that applies the PC
  must be flexible and test the true residual: `KSPFGMRES`, `KSPPIPEFGMRES`, `KSPGCR`,
  `KSPFBCGS`, or `KSPFCG`, `KSPPIPEFCG`, `KSPPIPEGCR`, `KSPFBCGSR`, `KSPRICHARDSON` with
  `-ksp_norm_type unpreconditioned` (or none); `KSPPREONLY` too (a block solver of
  `PCBJACOBI` or `PCASM`: the method around the parent PC is not checked). Any other KSP
  (CG, GMRES, BiCGStab, Chebyshev, ..., or PIPEGCR with its default natural norm) may report
  convergence with a wrong answer: KSPSolve() refuses it with `PETSC_ERR_ARG_INCOMP`, a
  warning instead with `-pc_mixedkrylov_allow_nonflexible`. Use `-ksp_type fgmres` or, on the
  host, `-ksp_type fcg -ksp_norm_type unpreconditioned` (SPD matrices); FCG with the GPU
  backend gets a warning (PETSc's FCG computes its VecMTDot on the host for CUDA vectors: a
  device-to-host copy of its stored directions at every iteration). The Pmat may
  be any square matrix with a positive diagonal whose diagonal block is AIJ or convertible to
  it (AIJ, AIJCUSPARSE, the petscspmv types), seq or mpi; on MPI each rank's inner solve uses
  its diagonal block (block Jacobi). A Pmat with the same nonzero pattern and new values
  re-encodes the copy's values; a new pattern rebuilds it. An inner CG step that finds
  p^T A p <= 0 ends the inner solve (a breakdown, counted); an inner solve that made no step
  returns the Jacobi step D^-1 r. The scaling is exact across the whole double range (the
  entry norm ||D^-1/2 r|| is a scaled sum of squares; D^-1/2 A D^-1/2 is formed from the
  significands and exponents apart where s_i s_j would leave the range): the result scales
  with r and A by powers of two. `-ksp_view` shows the inner method, the value format (LOSSY),
  the counts, the setup time and why the last setup was refused.

  Failures (PETSc's convention, as `PCLU` on a zero pivot): a Pmat whose data the copy cannot
  take (a missing, zero, negative or non-finite diagonal entry; a non-finite entry; a scaled
  value a_ij / sqrt(a_ii a_jj) beyond double or outside the value format) raises no error: the
  PC's failed reason is `PC_SETUP_ERROR` on every rank of the PC (`PCGetFailedReason()`),
  `PCApply()` returns Inf, and the KSP stops on every rank with `KSP_DIVERGED_PC_FAILED` (also
  when the PC is the block solver of one rank of `PCBJACOBI` or `PCASM`); the reason, with the
  row (the global row, or a block's own row for a block solver) and the remedy, is in
  `-ksp_view` and `-info`. A setup on a repaired Pmat clears it. With
  `-ksp_error_if_not_converged` (`PCSetErrorIfFailure()`) the refusal is an error on every rank
  of the PC instead: `PETSC_ERR_ARG_WRONG` for the diagonal, `PETSC_ERR_ARG_OUTOFRANGE` for an
  entry. Misuse stays an error on every rank: `PETSC_ERR_ARG_SIZ` for a non-square Pmat or
  different row and column layouts, `PETSC_ERR_SUP` for a Pmat without entries,
  `PETSC_ERR_ARG_INCOMP` for an outer KSP that does not give a true residual.

  Reference:
  The PackSELL paper (mixed PCG with an E8Mm PackSELL operator); Suzuki, Iwashita, F3R (SC'25,
  github.com/suzuki-hpc/F3R); docs/mixed.md.

  Level: advanced

.seealso: `PCMixedKrylovGetStats()`, `KSPFCG`, `KSPFGMRES`, `MATPACKSELLCUDA`
M*/
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

/*@
  PCMixedKrylovGetStats - Gets the counts of a `PCMIXEDKRYLOV` preconditioner on this rank.

  Not Collective

  Input Parameter:
. pc - the preconditioner

  Output Parameter:
. stats - applications, inner steps, breakdowns, early exits, Jacobi fallbacks, builds, value
  updates and the last setup time in seconds

  Errors:
  `PETSC_ERR_SUP` when pc is not a `PCMIXEDKRYLOV`.

  Level: advanced

.seealso: `PCMIXEDKRYLOV`
@*/
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
