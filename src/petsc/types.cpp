// The type table: one row per family (a format of the registry with the host or the CUDA
// backend), and the PETSc-style named constructors and converters (MatCreate_SeqAIJRgCSR,
// MatConvert_SeqAIJ_SeqAIJRgCSR, ...) that MatRegister() and MatConvert() see.
// The man pages of the four types (/*MC ... M*/, rendered to docs/manual by scripts/manpages.py)
// stand before the definitions of their constructors.
#include "spmvimpl.hpp"

using namespace pspmv::glue;

/* Declares the five named functions of one family. */
#define PSPMV_DECLARE_FAMILY(Name) \
  PETSC_EXTERN PetscErrorCode MatCreate_##Name(Mat); \
  PETSC_EXTERN PetscErrorCode MatCreate_SeqAIJ##Name(Mat); \
  PETSC_EXTERN PetscErrorCode MatCreate_MPIAIJ##Name(Mat); \
  PETSC_EXTERN PetscErrorCode MatConvert_SeqAIJ_SeqAIJ##Name(Mat, MatType, MatReuse, Mat *); \
  PETSC_EXTERN PetscErrorCode MatConvert_MPIAIJ_MPIAIJ##Name(Mat, MatType, MatReuse, Mat *);

/* Defines them on top of the shared seq/mpi implementation, for the table row `info`. */
#define PSPMV_DEFINE_FAMILY(Name, info) \
  PetscErrorCode MatCreate_##Name(Mat A) \
  { \
    PetscFunctionBegin; \
    PetscCall(RootCreate(A, &(info))); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  } \
  PetscErrorCode MatCreate_SeqAIJ##Name(Mat A) \
  { \
    PetscFunctionBegin; \
    PetscCall(SeqCreate(A, &(info))); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  } \
  PetscErrorCode MatCreate_MPIAIJ##Name(Mat A) \
  { \
    PetscFunctionBegin; \
    PetscCall(MPICreate(A, &(info))); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  } \
  PetscErrorCode MatConvert_SeqAIJ_SeqAIJ##Name(Mat A, MatType, MatReuse reuse, Mat *B) \
  { \
    PetscFunctionBegin; \
    PetscCall(SeqConvertFromBase(A, &(info), nullptr, reuse, B)); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  } \
  PetscErrorCode MatConvert_MPIAIJ_MPIAIJ##Name(Mat A, MatType, MatReuse reuse, Mat *B) \
  { \
    PetscFunctionBegin; \
    PetscCall(MPIConvertFromBase(A, &(info), nullptr, reuse, B)); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  }

#define PSPMV_ROW(Name, Module, cuda, root, seq, mpi, Base, backend) \
  { \
    FormatOf<pspmv::Module>(), cuda, root, seq, mpi, MATSEQ##Base, MATMPI##Base, MatCreate_Seq##Base, MatCreate_MPI##Base, backend, MatCreate_##Name, MatCreate_SeqAIJ##Name, MatCreate_MPIAIJ##Name, MatConvert_SeqAIJ_SeqAIJ##Name, MatConvert_MPIAIJ_MPIAIJ##Name \
  }

PSPMV_DECLARE_FAMILY(RgCSR)
PSPMV_DECLARE_FAMILY(PackSELL)
#if defined(PETSCSPMV_HAVE_CUDA)
PSPMV_DECLARE_FAMILY(RgCSRCUDA)
PSPMV_DECLARE_FAMILY(PackSELLCUDA)
#endif

namespace
{
/* the host families are AIJ underneath, the CUDA ones AIJCUSPARSE */
const TypeInfo kRgCSR    = PSPMV_ROW(RgCSR, RgCsrModule, PETSC_FALSE, MATRGCSR, MATSEQRGCSR, MATMPIRGCSR, AIJ, CreateHostShadow);
const TypeInfo kPackSELL = PSPMV_ROW(PackSELL, PackSellModule, PETSC_FALSE, MATPACKSELL, MATSEQPACKSELL, MATMPIPACKSELL, AIJ, CreateHostShadow);
#if defined(PETSCSPMV_HAVE_CUDA)
const TypeInfo kRgCSRCUDA    = PSPMV_ROW(RgCSRCUDA, RgCsrModule, PETSC_TRUE, MATRGCSRCUDA, MATSEQRGCSRCUDA, MATMPIRGCSRCUDA, AIJCUSPARSE, CreateCudaShadow);
const TypeInfo kPackSELLCUDA = PSPMV_ROW(PackSELLCUDA, PackSellModule, PETSC_TRUE, MATPACKSELLCUDA, MATSEQPACKSELLCUDA, MATMPIPACKSELLCUDA, AIJCUSPARSE, CreateCudaShadow);
#endif

const TypeInfo *const kTypes[] = {
  &kRgCSR,
  &kPackSELL,
#if defined(PETSCSPMV_HAVE_CUDA)
  &kRgCSRCUDA,
  &kPackSELLCUDA,
#endif
};
} // namespace

/*MC
  MATRGCSR - "rgcsr": row-grouped CSR with host kernels. Groups of G consecutive rows are
  stored column-major (the k-th nonzero of a row next to that of the following row, so that
  the threads of a warp read neighbouring slots), each row with its true length, so padding is
  never multiplied; 12 bytes per stored nonzero (FP64 value and 32-bit column), lossless. A
  hybrid split keeps the first K nonzeros of every row in the groups and puts the rest in a
  COO tail, so that a few long rows do not widen their whole group.

  The type resolves to `MATSEQRGCSR` ("seqaijrgcsr") on a one-process communicator and to
  `MATMPIRGCSR` ("mpiaijrgcsr") otherwise, like `MATAIJ`; these are subclasses of `MATSEQAIJ`
  and `MATMPIAIJ` (the base types): an AIJ matrix with the RgCSR layout beside it, built at
  `MatAssemblyEnd()`. An MPI matrix has a layout for the diagonal block and one for the
  off-diagonal block of each rank, and MPIAIJ's halo exchange.

  Options Database Keys:
+ -mat_rgcsr_group_size <32> - G, the rows per group (a multiple of 32 in [32, 1024];
    `MatRgCSRSetGroupSize()`)
. -mat_rgcsr_hybrid <auto> - the hybrid split: auto (K chosen from a cost model at assembly),
    none (every nonzero in the groups) or a number K, the width of the regular part
    (`MatRgCSRSetHybrid()`)
- -mat_rgcsr_ordering <natural> - natural, or rcm: the layout stores the rows and columns of
    the square matrix (each rank's diagonal block) in reverse Cuthill-McKee order, the product
    gathering x and scattering y (`MatRgCSRSetOrdering()`)

  Level: beginner

  Notes:
  The host kernels are a reference backend: correct, but slower than AIJ on the host; the
  same layout runs on the GPU as `MATRGCSRCUDA`. `MatMult()`, `MatMultAdd()` and
  `MatGetDiagonal()` use the layout; every other operation (assembly, factorizations,
  `MatMultTranspose()`, matrix products, views, ...) is AIJ's own, so every KSP and PC works
  as with AIJ. A value update with the same pattern rewrites the layout's values in place; a
  new pattern rebuilds it. `-mat_view ::ascii_info` prints the layout's statistics (bytes per
  nonzero, padding, tail, K), and `MatSpMVGetStats()` returns them.

  The options are read under the matrix's prefix when the type is set (`MatSetType()`,
  `MatConvert()`) and by `MatSetFromOptions()`, which lists them with `-help`; their setters may
  be called before or after assembly (after: the layout is rebuilt at once). On an MPI matrix
  a value applies to the diagonal and off-diagonal blocks of every rank.

  The type exists once the library is registered: `PetscSpMVInitializePackage()` in a program
  linked with libpetscspmv, or `-dll_append` with the path of libpetscspmv.so on the command line
  of any PETSc program. A matrix gets it from `-mat_type` (`MatSetFromOptions()`) or
  `-dm_mat_type`, `MatSetType()` (an assembled AIJ matrix is converted in place) or
  `MatConvert()` from AIJ in every reuse mode; `MatConvert()` to `MATAIJ` gives a plain AIJ
  matrix back.

  References:
  Oberhuber, Suzuki, Vacata, New Row-grouped CSR format for storing the sparse matrices on GPU
  with implementation in CUDA; docs/user-guide.md and docs/design.md.

.seealso: `MATRGCSRCUDA`, `MATPACKSELL`, `MATAIJ`, `MatRgCSRSetGroupSize()`, `MatRgCSRSetHybrid()`, `MatSpMVGetStats()`, `PetscSpMVInitializePackage()`
M*/
PSPMV_DEFINE_FAMILY(RgCSR, kRgCSR)

/*MC
  MATPACKSELL - "packsell": PackSELL with host kernels. PackSELL is SELL-C-sigma whose column
  deltas and values share one 32-bit word: slices of C rows (rows sorted by length inside
  windows of sigma rows), each word holding the column step from the row's previous nonzero.
  In the default value format exact the FP64 values sit beside the words (12 bytes per word,
  lossless: the same products as AIJ); the lossy formats fp16, bf16 and `e8m<m>` put a rounded
  value inside the word (4 bytes per nonzero). A column jump too large for the word's delta
  field costs an extra "dummy" word. A hybrid split keeps the first K nonzeros of every row in
  the slices and puts the rest in a COO tail, so that a few long rows do not widen their slice.

  The type resolves to `MATSEQPACKSELL` ("seqaijpacksell") on a one-process communicator and to
  `MATMPIPACKSELL` ("mpiaijpacksell") otherwise, like `MATAIJ`; these are subclasses of
  `MATSEQAIJ` and `MATMPIAIJ` (the base types): an AIJ matrix with the PackSELL layout beside
  it, built at `MatAssemblyEnd()`. An MPI matrix has a layout for the diagonal block and one
  for the off-diagonal block of each rank, and MPIAIJ's halo exchange.

  Options Database Keys:
+ -mat_packsell_slice_height <32> - C, the rows per slice (a multiple of 32 in [32, 1024];
    `MatPackSELLSetSliceHeight()`)
. -mat_packsell_sigma <1> - the window of rows sorted by length before slicing: 1 (no sorting),
    `PETSC_DECIDE` (-1: chosen from the row lengths at assembly) or a multiple of C
    (`MatPackSELLSetSigma()`)
. -mat_packsell_value_format <exact> - exact (FP64 values beside the words, lossless), or the
    lossy fp16 (IEEE half), bf16 (bfloat16) or `e8m<m>` (8-bit exponent, m-bit mantissa,
    7 <= m <= 22) values packed in each word (`MatPackSELLSetValueFormat()`)
. -mat_packsell_scaling <none> - none, or auto: the values are stored times a power of two
    (exact on the way back) chosen so that the largest fits the value format
    (`MatPackSELLSetScaling()`)
. -mat_packsell_hybrid <auto> - the hybrid split: auto (K chosen from a cost model at
    assembly), none (every nonzero in the slices) or a number K, the width of the regular part
    (`MatPackSELLSetHybrid()`)
. -mat_packsell_column_gaps <auto> - auto: a per-slice table of the column steps the slice's
    rows share where it cuts the layout's bytes by 15% or more (wide stencils then need no dummy
    words), or off (`MatPackSELLSetColumnGaps()`)
. -mat_packsell_ordering <natural> - natural, or rcm: reverse Cuthill-McKee order of the rows
    and columns, as for RgCSR (`MatPackSELLSetOrdering()`)
- -mat_packsell_lossy_warning <true> - at the first product of a matrix with a lossy value
    format, a warning on stderr that a KSP with it as its operator reports the residuals of the
    rounded matrix, not of the one assembled, and how to keep the exact operator (false: no
    warning)

  Level: beginner

  Notes:
  The host kernels are a reference backend: correct, but slower than AIJ on the host; the
  same layout runs on the GPU as `MATPACKSELLCUDA`. `MatMult()`, `MatMultAdd()` and
  `MatGetDiagonal()` use the layout; every other operation (assembly, factorizations,
  `MatMultTranspose()`, matrix products, views, ...) is AIJ's own, on the exact FP64 values,
  so every KSP and PC works as with AIJ. `-mat_view ::ascii_info` prints the layout's statistics
  (bytes per nonzero, padding, dummies, tail, K, sigma), and `MatSpMVGetStats()` returns them.

  With a lossy value format the products use a rounded copy of the matrix: a Krylov solve with
  it as its operator converges on that copy, and its residuals say nothing about the matrix
  assembled (judge a solve by its true residual with the exact matrix). The lossy formats are
  for the low-precision copies of `PCMIXEDKRYLOV` and `KSPMIXEDCG`, whose FP64 iteration uses
  the exact matrix. The views mark a lossy matrix LOSSY with its unit roundoff. A value outside
  the format's range (fp16: above 65504, or a nonzero that would round to 0) is an error that
  names it, unless `-mat_packsell_scaling auto` makes it fit; a nonzero that would still round
  to 0 is always an error.

  The options are read under the matrix's prefix when the type is set (`MatSetType()`,
  `MatConvert()`) and by `MatSetFromOptions()`, which lists them with `-help`
  (`-mat_packsell_lossy_warning` is read at the first product); their setters may be called
  before or after assembly (after: the layout is rebuilt at once). On an MPI matrix a value
  applies to the diagonal and off-diagonal blocks of every rank.

  The type exists once the library is registered: `PetscSpMVInitializePackage()` in a program
  linked with libpetscspmv, or `-dll_append` with the path of libpetscspmv.so on the command line
  of any PETSc program. A matrix gets it from `-mat_type` (`MatSetFromOptions()`) or
  `-dm_mat_type`, `MatSetType()` (an assembled AIJ matrix is converted in place) or
  `MatConvert()` from AIJ in every reuse mode; `MatConvert()` to `MATAIJ` gives a plain AIJ
  matrix back.

  References:
  K. Suzuki, T. Iwashita, "PackSELL: A Sparse Matrix Format for Precision-Agnostic
  High-Performance SpMV", arXiv:2604.13433 (2026); docs/user-guide.md and docs/design.md.

.seealso: `MATPACKSELLCUDA`, `MATRGCSR`, `MATAIJ`, `MatPackSELLSetSliceHeight()`, `MatPackSELLSetSigma()`, `MatPackSELLSetValueFormat()`, `MatPackSELLSetScaling()`, `MatPackSELLSetHybrid()`, `MatSpMVGetStats()`, `PCMIXEDKRYLOV`, `KSPMIXEDCG`
M*/
PSPMV_DEFINE_FAMILY(PackSELL, kPackSELL)
#if defined(PETSCSPMV_HAVE_CUDA)
/*MC
  MATRGCSRCUDA - "rgcsrcuda": the row-grouped CSR layout of `MATRGCSR` (its page describes the
  format), whose products run on the GPU with PETSc's CUDA vectors; the COO tail of the hybrid
  split runs in a kernel of its own.

  The type resolves to `MATSEQRGCSRCUDA` ("seqaijrgcsrcuda") on a one-process communicator and
  to `MATMPIRGCSRCUDA` ("mpiaijrgcsrcuda") otherwise, like `MATAIJCUSPARSE`; these are
  subclasses of `MATSEQAIJCUSPARSE` and `MATMPIAIJCUSPARSE` (the base types): an AIJCUSPARSE
  matrix with the RgCSR layout beside it in device memory, built on the GPU at
  `MatAssemblyEnd()` from AIJCUSPARSE's device CSR. An MPI matrix has a layout for the
  diagonal block and one for the off-diagonal block of each rank, and MPIAIJCUSPARSE's halo
  exchange.

  Options Database Keys:
+ -mat_rgcsr_group_size <32> - G, the rows per group (a multiple of 32 in [32, 1024];
    `MatRgCSRSetGroupSize()`)
. -mat_rgcsr_hybrid <auto> - the hybrid split: auto (K chosen from a cost model at assembly),
    none (every nonzero in the groups) or a number K, the width of the regular part
    (`MatRgCSRSetHybrid()`)
. -mat_rgcsr_ordering <natural> - natural, or rcm: the layout stores the rows and columns of
    the square matrix (each rank's diagonal block) in reverse Cuthill-McKee order, the product
    gathering x and scattering y (`MatRgCSRSetOrdering()`)
- -mat_spmv_free_device_csr <false> - build and update the layout from a temporary upload of
    the host CSR instead of AIJCUSPARSE's device CSR, so that the device holds the layout alone
    unless an AIJCUSPARSE operation needs its CSR (`MatSpMVSetFreeDeviceCSR()`)

  Level: beginner

  Notes:
  `MatMult()`, `MatMultAdd()` and `MatGetDiagonal()` use the layout on the GPU; every other
  operation is AIJCUSPARSE's own (cuSPARSE's factorizations and `MatMultTranspose()`, device
  matrix products, ...; SeqAIJ's host code where AIJCUSPARSE has none), so every KSP and PC
  works as with aijcusparse. A value update re-encodes the values on the GPU. Without
  CUDA-aware MPI a run on several ranks needs `-use_gpu_aware_mpi 0`; on a machine without an
  NVIDIA GPU the type is an error that says so (a matrix being converted is left as it was).
  `-mat_view ::ascii_info` prints the layout's statistics and the device memory it holds, and
  `MatSpMVGetStats()` returns the statistics. When the options are read and how a matrix gets
  the type: as `MATRGCSR`, and also by `MatConvert()` from AIJCUSPARSE, to which `MatConvert()`
  gives a plain matrix back.

  References:
  Oberhuber, Suzuki, Vacata, New Row-grouped CSR format for storing the sparse matrices on GPU
  with implementation in CUDA; docs/user-guide.md and docs/kernels.md.

.seealso: `MATRGCSR`, `MATPACKSELLCUDA`, `MATAIJCUSPARSE`, `MatRgCSRSetGroupSize()`, `MatRgCSRSetHybrid()`, `MatSpMVSetFreeDeviceCSR()`, `MatSpMVGetStats()`, `PetscSpMVInitializePackage()`
M*/
PSPMV_DEFINE_FAMILY(RgCSRCUDA, kRgCSRCUDA)

/*MC
  MATPACKSELLCUDA - "packsellcuda": the PackSELL layout of `MATPACKSELL` (its page describes the
  format and its value formats), whose products run on the GPU with PETSc's CUDA vectors; the
  COO tail of the hybrid split runs in a kernel of its own.

  The type resolves to `MATSEQPACKSELLCUDA` ("seqaijpacksellcuda") on a one-process
  communicator and to `MATMPIPACKSELLCUDA` ("mpiaijpacksellcuda") otherwise, like
  `MATAIJCUSPARSE`; these are subclasses of `MATSEQAIJCUSPARSE` and `MATMPIAIJCUSPARSE` (the
  base types): an AIJCUSPARSE matrix with the PackSELL layout beside it in device memory, built
  on the GPU at `MatAssemblyEnd()` from AIJCUSPARSE's device CSR. An MPI matrix has a layout
  for the diagonal block and one for the off-diagonal block of each rank, and
  MPIAIJCUSPARSE's halo exchange.

  Options Database Keys:
+ -mat_packsell_slice_height <32> - C, the rows per slice (a multiple of 32 in [32, 1024];
    `MatPackSELLSetSliceHeight()`)
. -mat_packsell_sigma <1> - the window of rows sorted by length before slicing: 1 (no sorting),
    `PETSC_DECIDE` (-1: chosen from the row lengths at assembly) or a multiple of C
    (`MatPackSELLSetSigma()`)
. -mat_packsell_value_format <exact> - exact (FP64 values beside the words, lossless), or the
    lossy fp16 (IEEE half), bf16 (bfloat16) or `e8m<m>` (8-bit exponent, m-bit mantissa,
    7 <= m <= 22) values packed in each word (`MatPackSELLSetValueFormat()`)
. -mat_packsell_scaling <none> - none, or auto: the values are stored times a power of two
    (exact on the way back) chosen so that the largest fits the value format
    (`MatPackSELLSetScaling()`)
. -mat_packsell_hybrid <auto> - the hybrid split: auto (K chosen from a cost model at
    assembly), none (every nonzero in the slices) or a number K, the width of the regular part
    (`MatPackSELLSetHybrid()`)
. -mat_packsell_column_gaps <auto> - auto: a per-slice table of the column steps the slice's
    rows share where it cuts the layout's bytes by 15% or more (wide stencils then need no dummy
    words), or off (`MatPackSELLSetColumnGaps()`)
. -mat_packsell_ordering <natural> - natural, or rcm: reverse Cuthill-McKee order of the rows
    and columns, as for RgCSR (`MatPackSELLSetOrdering()`)
. -mat_packsell_lossy_warning <true> - at the first product of a matrix with a lossy value
    format, a warning on stderr that a KSP with it as its operator reports the residuals of the
    rounded matrix, not of the one assembled, and how to keep the exact operator (false: no
    warning)
- -mat_spmv_free_device_csr <false> - build and update the layout from a temporary upload of
    the host CSR instead of AIJCUSPARSE's device CSR, so that the device holds the layout alone
    unless an AIJCUSPARSE operation needs its CSR (`MatSpMVSetFreeDeviceCSR()`)

  Level: beginner

  Notes:
  `MatMult()`, `MatMultAdd()` and `MatGetDiagonal()` use the layout on the GPU; every other
  operation is AIJCUSPARSE's own, on the exact FP64 values (cuSPARSE's factorizations and
  `MatMultTranspose()`, device matrix products, ...; SeqAIJ's host code where AIJCUSPARSE has
  none), so every KSP and PC works as with aijcusparse. A value update re-encodes the values on
  the GPU. Without CUDA-aware MPI a run on several ranks needs `-use_gpu_aware_mpi 0`; on a
  machine without an NVIDIA GPU the type is an error that says so (a matrix being converted is
  left as it was). `-mat_view ::ascii_info` prints the layout's statistics and the device memory
  it holds, and `MatSpMVGetStats()` returns the statistics. A lossy value format, the range
  refusals, when the options are read and how a matrix gets the type: as `MATPACKSELL` (a lossy
  matrix's products use its rounded values), and also by `MatConvert()` from AIJCUSPARSE, to
  which `MatConvert()` gives a plain matrix back.

  References:
  K. Suzuki, T. Iwashita, "PackSELL: A Sparse Matrix Format for Precision-Agnostic
  High-Performance SpMV", arXiv:2604.13433 (2026); docs/user-guide.md and docs/kernels.md.

.seealso: `MATPACKSELL`, `MATRGCSRCUDA`, `MATAIJCUSPARSE`, `MatPackSELLSetSliceHeight()`, `MatPackSELLSetSigma()`, `MatPackSELLSetValueFormat()`, `MatPackSELLSetScaling()`, `MatPackSELLSetHybrid()`, `MatSpMVSetFreeDeviceCSR()`, `MatSpMVGetStats()`, `PCMIXEDKRYLOV`, `KSPMIXEDCG`
M*/
PSPMV_DEFINE_FAMILY(PackSELLCUDA, kPackSELLCUDA)
#endif

const TypeInfo *const *pspmv::glue::Types(PetscInt *n)
{
  *n = (PetscInt)(sizeof(kTypes) / sizeof(kTypes[0]));
  return kTypes;
}
