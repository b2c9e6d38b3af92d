// Public setters and getters of petscspmv.h, each with its man page (scripts/manpages.py renders
// them to docs/manual): each dispatches to the function its matrix type composed (PetscTryMethod
// for setters: other types ignore them; getters need a matrix of the format).
#include "spmvimpl.hpp"

using pspmv::glue::Format;
using pspmv::glue::FormatName;
using pspmv::glue::FormatOf;
using pspmv::glue::FormatTitle;
using pspmv::glue::GetOptionFn;
using pspmv::glue::GetOptionName;
using pspmv::glue::SetOptionName;

namespace
{

PetscErrorCode SetInt(Mat A, Format f, const char key[], PetscInt v)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveInt(A, v, 2);
  const auto name = SetOptionName(f);
  PetscTryMethod(A, name.s, (Mat, const char[], PetscInt, const char[]), (A, key, v, nullptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SetString(Mat A, Format f, const char key[], const char v[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(v, 2);
  const auto name = SetOptionName(f);
  PetscTryMethod(A, name.s, (Mat, const char[], PetscInt, const char[]), (A, key, 0, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* "rgcsr, rgcsrcuda": the root names of the families of format f (every family when f is null). */
PetscErrorCode RootNames(const Format *f, char names[], size_t len)
{
  PetscInt                            n;
  const pspmv::glue::TypeInfo *const *types = pspmv::glue::Types(&n);

  PetscFunctionBegin;
  names[0] = 0;
  for (PetscInt i = 0; i < n; i++) {
    if (f && types[i]->format != *f) continue;
    if (names[0]) PetscCall(PetscStrlcat(names, ", ", len));
    PetscCall(PetscStrlcat(names, types[i]->root, len));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Getters need a matrix of the format: anything else is an error that says so. */
PetscErrorCode GetOptionFunction(Mat A, Format f, const char caller[], GetOptionFn *fn)
{
  MatType type;
  char    names[256];

  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)A, GetOptionName(f).s, fn));
  PetscCall(MatGetType(A, &type));
  PetscCall(RootNames(&f, names, sizeof(names)));
  PetscCheck(*fn, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "%s() needs a %s matrix (types %s, seq or mpi); this one is %s", caller, FormatTitle(f), names, type ? type : "untyped");
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GetInt(Mat A, Format f, const char key[], PetscInt *v, const char caller[])
{
  GetOptionFn fn;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(v, 2);
  PetscCall(GetOptionFunction(A, f, caller, &fn));
  PetscCall((*fn)(A, key, v, nullptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GetString(Mat A, Format f, const char key[], const char *v[], const char caller[])
{
  GetOptionFn fn;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(v, 2);
  PetscCall(GetOptionFunction(A, f, caller, &fn));
  PetscCall((*fn)(A, key, nullptr, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

/* The format of Module and its option key, the key checked at compile time against the module's
   options: the arguments f and key of the helpers above. */
#define PSPMV_OPTION(Module, key) FormatOf<pspmv::Module>(), ([] { static_assert(pspmv::HasOption<pspmv::Module>(key), #Module " has no option " key); }(), key)

/*@
  MatRgCSRSetGroupSize - Sets G, the number of consecutive rows stored together (column-major)
  in one group of the row-grouped CSR layout.

  Logically Collective

  Input Parameters:
+ A - a `MATRGCSR` or `MATRGCSRCUDA` matrix (seq or mpi)
- G - rows per group: a multiple of 32 from 32 to 1024 (default 32)

  Options Database Key:
. -mat_rgcsr_group_size <G> - rows per group

  Level: intermediate

  Notes:
  Like every format setter, it may be called before or after assembly: before, G is used when
  the layout is built at `MatAssemblyEnd()`; after, the layout is rebuilt at once (if that fails,
  the previous G and layout are kept). Matrices of other types ignore it (PETSc's convention). On
  an MPI matrix G applies to the diagonal and off-diagonal blocks of every rank.

  Errors:
  `PETSC_ERR_ARG_OUTOFRANGE` when G is not a multiple of 32 in [32, 1024].

  References:
  Oberhuber, Suzuki, Vacata, "New Row-grouped CSR format for storing the sparse matrices on GPU
  with implementation in CUDA", Acta Technica 56 (2011).

.seealso: `MatRgCSRGetGroupSize()`, `MatRgCSRSetHybrid()`, `MATRGCSR`
@*/
PetscErrorCode MatRgCSRSetGroupSize(Mat A, PetscInt G)
{
  PetscFunctionBegin;
  PetscCall(SetInt(A, PSPMV_OPTION(RgCsrModule, "group_size"), G));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatRgCSRGetGroupSize - Gets the rows per group G of an RgCSR matrix.

  Not Collective

  Input Parameter:
. A - a `MATRGCSR` or `MATRGCSRCUDA` matrix

  Output Parameter:
. G - rows per group

  Level: intermediate

  Errors:
  `PETSC_ERR_SUP` when A is not an RgCSR matrix (the message names the RgCSR types and A's type).

.seealso: `MatRgCSRSetGroupSize()`
@*/
PetscErrorCode MatRgCSRGetGroupSize(Mat A, PetscInt *G)
{
  PetscFunctionBegin;
  PetscCall(GetInt(A, PSPMV_OPTION(RgCsrModule, "group_size"), G, __func__));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatRgCSRSetOrdering - Chooses the order an RgCSR layout stores its rows and columns in: the
  matrix's own ("natural", the default) or reverse Cuthill-McKee ("rcm"), for matrices whose
  numbering scatters each row's columns (meshes from unstructured generators, graphs).

  Logically Collective

  Input Parameters:
+ A        - a `MATRGCSR` or `MATRGCSRCUDA` matrix
- ordering - "natural" or "rcm"

  Options Database Key:
. -mat_rgcsr_ordering <natural|rcm> - the layout's ordering

  Level: advanced

  Notes:
  With "rcm" the layout is built from P A P^T, P the reverse Cuthill-McKee ordering of
  `MatGetOrdering()` (`MATORDERINGRCM`, on the structure of A + A^T), computed on the host at each
  build of the layout (a new nonzero pattern). A product gathers x into that order and scatters y
  back (on the GPU one kernel each, on the product's stream): the product's reads of x regain their locality for
  the price of those two passes over n entries. The matrix keeps its numbering for every other
  operation, and the product equals that of "natural" up to the order of the additions. A value
  update of the same pattern gathers the host values into the permuted copy (AIJCUSPARSE's values
  are copied to the host first where the device holds newer ones) and updates the layout from it.
  Only square matrices and the square diagonal blocks of MPI matrices are reordered: an
  off-diagonal block, a rectangular matrix (GAMG's interpolations take the operator's type and
  options) or a rank whose diagonal block is not square keeps the matrix's order (`-info` says
  so). `-mat_view ::ascii_info` counts the rows stored in the other order (`ordered_rows`), and the
  `-info` line of each build names the order.

  It may be called before or after assembly (after: the layout is rebuilt at once); other types
  ignore it.

  Errors:
  `PETSC_ERR_ARG_WRONG` for any other string.

  References:
  E. Cuthill and J. McKee, "Reducing the bandwidth of sparse symmetric matrices", Proc. 24th ACM
  National Conference (1969); A. George and J. W. H. Liu, "Computer Solution of Large Sparse
  Positive Definite Systems", Prentice-Hall (1981) (the reversed ordering).

.seealso: `MatRgCSRGetOrdering()`, `MatPackSELLSetOrdering()`
@*/
PetscErrorCode MatRgCSRSetOrdering(Mat A, const char ordering[])
{
  PetscFunctionBegin;
  PetscCall(SetString(A, PSPMV_OPTION(RgCsrModule, "ordering"), ordering));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatRgCSRGetOrdering - Gets the ordering option ("natural" or "rcm") of an RgCSR matrix.

  Not Collective

  Input Parameter:
. A - a `MATRGCSR` or `MATRGCSRCUDA` matrix

  Output Parameter:
. ordering - "natural" or "rcm" (owned by the matrix; valid until the next call of this getter or a setter)

  Level: advanced

  Errors:
  `PETSC_ERR_SUP` when A is not an RgCSR matrix.

.seealso: `MatRgCSRSetOrdering()`
@*/
PetscErrorCode MatRgCSRGetOrdering(Mat A, const char *ordering[])
{
  PetscFunctionBegin;
  PetscCall(GetString(A, PSPMV_OPTION(RgCsrModule, "ordering"), ordering, __func__));
  PetscFunctionReturn(PETSC_SUCCESS);
}

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

  Level: intermediate

  Notes:
  It may be called before or after assembly (after: the layout is rebuilt at once, and kept with
  the previous option if that fails); other types ignore it; on an MPI matrix it applies to the
  diagonal and off-diagonal blocks of every rank.

  Errors:
  `PETSC_ERR_ARG_WRONG` when the string is none of the above.

  References:
  Anzt, Cojean, Flegar, Goebel, Gruetzmacher, Nayak, Ribizel, Tsai, Quintana-Orti, "Ginkgo: A
  Modern Linear Operator Algebra Framework for High Performance Computing", ACM TOMS 48 (2022)
  (hybrid format; load-balancing SpMV kernels).

.seealso: `MatRgCSRGetHybrid()`, `MatPackSELLSetHybrid()`
@*/
PetscErrorCode MatRgCSRSetHybrid(Mat A, const char hybrid[])
{
  PetscFunctionBegin;
  PetscCall(SetString(A, PSPMV_OPTION(RgCsrModule, "hybrid"), hybrid));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatRgCSRGetHybrid - Gets the hybrid option of an RgCSR matrix as its canonical string
  ("auto", "none" or the width K).

  Not Collective

  Input Parameter:
. A - a `MATRGCSR` or `MATRGCSRCUDA` matrix

  Output Parameter:
. hybrid - the option (owned by the matrix; valid until the next call of this getter or a setter)

  Level: intermediate

  Errors:
  `PETSC_ERR_SUP` when A is not an RgCSR matrix.

.seealso: `MatRgCSRSetHybrid()`
@*/
PetscErrorCode MatRgCSRGetHybrid(Mat A, const char *hybrid[])
{
  PetscFunctionBegin;
  PetscCall(GetString(A, PSPMV_OPTION(RgCsrModule, "hybrid"), hybrid, __func__));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatPackSELLSetSliceHeight - Sets C, the number of (sorted) rows of one PackSELL slice.

  Logically Collective

  Input Parameters:
+ A - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix
- C - slice height: a multiple of 32 in [32, 1024] (default 32)

  Options Database Key:
. -mat_packsell_slice_height <C> - slice height

  Level: intermediate

  Notes:
  It may be called before or after assembly (after: the layout is rebuilt at once, and kept with
  the previous C if that fails); other types ignore it; on an MPI matrix it applies to the
  diagonal and off-diagonal blocks of every rank.

  Errors:
  `PETSC_ERR_ARG_OUTOFRANGE` for any other value, or when the current sigma is neither
  `PETSC_DECIDE`, 1 nor a multiple of C.

  References:
  Kreutzer, Hager, Wellein, Fehske, Bishop, "A unified sparse matrix data format for efficient
  general sparse matrix-vector multiplication on modern processors with wide SIMD units",
  SIAM J. Sci. Comput. 36 (2014) (SELL-C-sigma); the PackSELL paper for the packed words.

.seealso: `MatPackSELLSetSigma()`, `MatPackSELLGetSliceHeight()`
@*/
PetscErrorCode MatPackSELLSetSliceHeight(Mat A, PetscInt C)
{
  PetscFunctionBegin;
  PetscCall(SetInt(A, PSPMV_OPTION(PackSellModule, "slice_height"), C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatPackSELLGetSliceHeight - Gets the slice height C of a PackSELL matrix.

  Not Collective

  Input Parameter:
. A - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix

  Output Parameter:
. C - slice height

  Level: intermediate

  Errors:
  `PETSC_ERR_SUP` when A is not a PackSELL matrix.

.seealso: `MatPackSELLSetSliceHeight()`
@*/
PetscErrorCode MatPackSELLGetSliceHeight(Mat A, PetscInt *C)
{
  PetscFunctionBegin;
  PetscCall(GetInt(A, PSPMV_OPTION(PackSellModule, "slice_height"), C, __func__));
  PetscFunctionReturn(PETSC_SUCCESS);
}

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

  Level: intermediate

  Notes:
  Sorting packs rows of similar length into the same slice, so slices carry less padding, but it
  scatters the writes of y and the rows of a slice no longer read neighbouring parts of x. With
  `PETSC_DECIDE` each layout (on an MPI matrix: each diagonal and off-diagonal block) takes the
  smallest of 1, C, 2C, 4C, ... (up to the first power-of-two multiple of the slice height C that
  covers all rows) whose stored bytes, regular words plus hybrid tail, are within 2% of the
  smallest; so matrices whose slices hold rows of nearly equal length keep 1. The choice depends
  on the nonzero pattern only; value-only re-assemblies keep it.

  It may be called before or after assembly (after: the layout is rebuilt at once, and kept with
  the previous sigma if that fails); other types ignore it; on an MPI matrix it applies to the
  diagonal and off-diagonal blocks of every rank.

  Errors:
  `PETSC_ERR_ARG_OUTOFRANGE` for 0, a negative value other than `PETSC_DECIDE`, or a value that
  is not 1 and not a positive multiple of the slice height.

  References:
  Kreutzer, Hager, Wellein, Fehske, Bishop, "A unified sparse matrix data format for efficient
  general sparse matrix-vector multiplication on modern processors with wide SIMD units",
  SIAM J. Sci. Comput. 36 (2014) (SELL-C-sigma).

.seealso: `MatPackSELLSetSliceHeight()`, `MatPackSELLGetSigma()`
@*/
PetscErrorCode MatPackSELLSetSigma(Mat A, PetscInt sigma)
{
  PetscFunctionBegin;
  PetscCall(SetInt(A, PSPMV_OPTION(PackSellModule, "sigma"), sigma));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatPackSELLGetSigma - Gets the sorting window sigma of a PackSELL matrix.

  Not Collective

  Input Parameter:
. A - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix

  Output Parameter:
. sigma - once A is assembled, the window of the layout actually built (1 or a multiple of the
          slice height; `PETSC_DECIDE` resolved); before assembly, the option as set
          (1 by default)

  Level: intermediate

  Notes:
  For an MPI matrix the value after assembly is the one of this rank's diagonal block; other
  blocks and ranks may have chosen other windows (`MatView()` with `PETSC_VIEWER_ASCII_INFO`
  shows the largest). The layout is brought up to date first, as in `MatSpMVGetStats()`.

  Errors:
  `PETSC_ERR_SUP` when A is not a PackSELL matrix; after assembly, the errors of bringing the
  layout up to date (a value that overflows the value format).

.seealso: `MatPackSELLSetSigma()`
@*/
PetscErrorCode MatPackSELLGetSigma(Mat A, PetscInt *sigma)
{
  PetscFunctionBegin;
  PetscCall(GetInt(A, PSPMV_OPTION(PackSellModule, "sigma"), sigma, __func__));
  PetscFunctionReturn(PETSC_SUCCESS);
}

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

  Level: intermediate

  Notes:
  Products accumulate in double precision. The lossy formats round every value (relative
  error up to 2^-11 for fp16, 2^-8 for bf16, 2^-(m+1) for e8m<m>), so use them only where
  that accuracy is enough (e.g. the inner operator of a mixed-precision solver); the default
  gives the same products as AIJ. A finite value that overflows the format is an error
  (`PETSC_ERR_ARG_OUTOFRANGE`, naming row, column and value) unless `MatPackSELLSetScaling()`
  is "auto"; a nonzero that would be stored as zero is always an error.

  It may be called before or after assembly (after: the layout is rebuilt at once, and kept with
  the previous format if that fails); other types ignore it; on an MPI matrix it applies to the
  diagonal and off-diagonal blocks of every rank.

  Errors:
  `PETSC_ERR_ARG_WRONG` for an unknown format name.

  References:
  The PackSELL paper (SELL-C-sigma with delta-encoded column indices and reduced-precision
  values packed in one word, used as the inner operator of mixed-precision Krylov solvers):
  K. Suzuki, T. Iwashita, "PackSELL: A Sparse Matrix Format for Precision-Agnostic
  High-Performance SpMV", arXiv:2604.13433 (2026).

.seealso: `MatPackSELLGetValueFormat()`, `MatPackSELLSetScaling()`
@*/
PetscErrorCode MatPackSELLSetValueFormat(Mat A, const char format[])
{
  PetscFunctionBegin;
  PetscCall(SetString(A, PSPMV_OPTION(PackSellModule, "value_format"), format));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatPackSELLGetValueFormat - Gets the value format name of a PackSELL matrix.

  Not Collective

  Input Parameter:
. A - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix

  Output Parameter:
. format - "fp16", "bf16", "e8m<m>" or "exact" (owned by the matrix; valid until the next call of this getter or a setter)

  Level: intermediate

  Errors:
  `PETSC_ERR_SUP` when A is not a PackSELL matrix.

.seealso: `MatPackSELLSetValueFormat()`
@*/
PetscErrorCode MatPackSELLGetValueFormat(Mat A, const char *format[])
{
  PetscFunctionBegin;
  PetscCall(GetString(A, PSPMV_OPTION(PackSellModule, "value_format"), format, __func__));
  PetscFunctionReturn(PETSC_SUCCESS);
}

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

  Level: intermediate

  Notes:
  It may be called before or after assembly (after: the layout is rebuilt at once, and kept with
  the previous option if that fails); other types ignore it; on an MPI matrix it applies to the
  diagonal and off-diagonal blocks of every rank.

  Errors:
  `PETSC_ERR_ARG_WRONG` for any other string.

.seealso: `MatPackSELLSetValueFormat()`, `MatPackSELLGetScaling()`
@*/
PetscErrorCode MatPackSELLSetScaling(Mat A, const char scaling[])
{
  PetscFunctionBegin;
  PetscCall(SetString(A, PSPMV_OPTION(PackSellModule, "scaling"), scaling));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatPackSELLGetScaling - Gets the scaling option ("none" or "auto") of a PackSELL matrix.

  Not Collective

  Input Parameter:
. A - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix

  Output Parameter:
. scaling - "none" or "auto" (owned by the matrix; valid until the next call of this getter or a setter)

  Level: intermediate

  Errors:
  `PETSC_ERR_SUP` when A is not a PackSELL matrix.

.seealso: `MatPackSELLSetScaling()`
@*/
PetscErrorCode MatPackSELLGetScaling(Mat A, const char *scaling[])
{
  PetscFunctionBegin;
  PetscCall(GetString(A, PSPMV_OPTION(PackSellModule, "scaling"), scaling, __func__));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatPackSELLSetColumnGaps - Chooses whether a PackSELL layout may store column gaps: a table
  of one 32-bit column step per word position of each slice, which every row of the slice takes
  before its own delta.

  Logically Collective

  Input Parameters:
+ A    - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix
- gaps - "auto" (the default: gaps where the layout, words and table together, is at least
         15% smaller with them than without; below that the table's loads cost more than the
         bytes save) or "off" (never)

  Options Database Key:
. -mat_packsell_column_gaps <auto|off> - column gaps

  Level: advanced

  Notes:
  A word's delta has D bits (8 for e8m14, 15 for fp16 and bf16, 30 for exact); a column step
  beyond them costs a dummy word. On a 7-point stencil of an n^3 grid, the steps +-n^2 (and +-n
  for e8m14) are such, two dummies per row, which the rows of a slice share: with gaps the slice
  stores each shared step once and the rows none (`-mat_view ::ascii_info` shows
  `column_gap_entries` and `dummy_words`). The products are the same either way; "off" is for
  comparisons. Rules and measurements: docs/design.md and docs/benchmarks.md.

  It may be called before or after assembly (after: the layout is rebuilt at once); other types
  ignore it; on an MPI matrix it applies to the diagonal and off-diagonal blocks of every rank.

  Errors:
  `PETSC_ERR_ARG_WRONG` for any other string.

.seealso: `MatPackSELLGetColumnGaps()`, `MatPackSELLSetValueFormat()`
@*/
PetscErrorCode MatPackSELLSetColumnGaps(Mat A, const char gaps[])
{
  PetscFunctionBegin;
  PetscCall(SetString(A, PSPMV_OPTION(PackSellModule, "column_gaps"), gaps));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatPackSELLGetColumnGaps - Gets the column gaps option ("auto" or "off") of a PackSELL matrix.

  Not Collective

  Input Parameter:
. A - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix

  Output Parameter:
. gaps - "auto" or "off" (owned by the matrix; valid until the next call of this getter or a setter)

  Level: advanced

  Notes:
  Whether the layout took gaps under "auto" shows in `-mat_view ::ascii_info` (`column_gap_entries`).

  Errors:
  `PETSC_ERR_SUP` when A is not a PackSELL matrix.

.seealso: `MatPackSELLSetColumnGaps()`
@*/
PetscErrorCode MatPackSELLGetColumnGaps(Mat A, const char *gaps[])
{
  PetscFunctionBegin;
  PetscCall(GetString(A, PSPMV_OPTION(PackSellModule, "column_gaps"), gaps, __func__));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatPackSELLSetOrdering - Chooses the order a PackSELL layout stores its rows and columns in
  (see `MatRgCSRSetOrdering()`): "natural" (default) or "rcm" (reverse Cuthill-McKee).

  Logically Collective

  Input Parameters:
+ A        - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix
- ordering - "natural" or "rcm"

  Options Database Key:
. -mat_packsell_ordering <natural|rcm> - the layout's ordering

  Level: advanced

  Errors:
  `PETSC_ERR_ARG_WRONG` for any other string.

.seealso: `MatPackSELLGetOrdering()`, `MatRgCSRSetOrdering()`
@*/
PetscErrorCode MatPackSELLSetOrdering(Mat A, const char ordering[])
{
  PetscFunctionBegin;
  PetscCall(SetString(A, PSPMV_OPTION(PackSellModule, "ordering"), ordering));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatPackSELLGetOrdering - Gets the ordering option ("natural" or "rcm") of a PackSELL matrix.

  Not Collective

  Input Parameter:
. A - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix

  Output Parameter:
. ordering - "natural" or "rcm" (owned by the matrix; valid until the next call of this getter or a setter)

  Level: advanced

  Errors:
  `PETSC_ERR_SUP` when A is not a PackSELL matrix.

.seealso: `MatPackSELLSetOrdering()`
@*/
PetscErrorCode MatPackSELLGetOrdering(Mat A, const char *ordering[])
{
  PetscFunctionBegin;
  PetscCall(GetString(A, PSPMV_OPTION(PackSellModule, "ordering"), ordering, __func__));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatPackSELLSetHybrid - Chooses the hybrid split of a PackSELL matrix (see
  `MatRgCSRSetHybrid()`): "auto" (default), "none" or a positive width K.

  Logically Collective

  Input Parameters:
+ A      - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix
- hybrid - "auto", "none" or a positive integer K

  Options Database Key:
. -mat_packsell_hybrid <auto|none|K> - the hybrid split

  Level: intermediate

  Notes:
  It may be called before or after assembly (after: the layout is rebuilt at once, and kept with
  the previous option if that fails); other types ignore it; on an MPI matrix it applies to the
  diagonal and off-diagonal blocks of every rank.

  Errors:
  `PETSC_ERR_ARG_WRONG` when the string is none of the above.

.seealso: `MatPackSELLGetHybrid()`, `MatRgCSRSetHybrid()`
@*/
PetscErrorCode MatPackSELLSetHybrid(Mat A, const char hybrid[])
{
  PetscFunctionBegin;
  PetscCall(SetString(A, PSPMV_OPTION(PackSellModule, "hybrid"), hybrid));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatPackSELLGetHybrid - Gets the hybrid option of a PackSELL matrix ("auto", "none" or K).

  Not Collective

  Input Parameter:
. A - a `MATPACKSELL` or `MATPACKSELLCUDA` matrix

  Output Parameter:
. hybrid - the option (owned by the matrix; valid until the next call of this getter or a setter)

  Level: intermediate

  Errors:
  `PETSC_ERR_SUP` when A is not a PackSELL matrix.

.seealso: `MatPackSELLSetHybrid()`
@*/
PetscErrorCode MatPackSELLGetHybrid(Mat A, const char *hybrid[])
{
  PetscFunctionBegin;
  PetscCall(GetString(A, PSPMV_OPTION(PackSellModule, "hybrid"), hybrid, __func__));
  PetscFunctionReturn(PETSC_SUCCESS);
}

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

  Level: advanced

  Notes:
  The CUDA types are AIJCUSPARSE matrices underneath: operations other than `MatMult()`,
  `MatMultAdd()` and `MatGetDiagonal()` (factorizations, `MatMultTranspose()`, products,
  `MatScale()`, ...) are AIJCUSPARSE's and allocate its device CSR when they need it, whatever
  this flag says. The flag applies to the builds and value updates that follow.

.seealso: `MatView()` with `PETSC_VIEWER_ASCII_INFO` (it reports the device bytes of both)
@*/
PetscErrorCode MatSpMVSetFreeDeviceCSR(Mat A, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveBool(A, flg, 2);
  PetscTryMethod(A, "MatSpMVSetFreeDeviceCSR_C", (Mat, PetscBool), (A, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatSpMVGetStats - Gets the storage statistics of the layouts held by this rank (for an MPI
  matrix: its diagonal and off-diagonal blocks, summed).

  Not Collective

  Input Parameter:
. A - an assembled matrix of one of the petscspmv types

  Output Parameter:
. stats - the statistics (`MatSpMVStats`: rows, columns, nonzeros, stored and padding slots,
          dummy words, tail nonzeros, stored bytes, hybrid width, scale exponents); the layout
          is brought up to date first

  Level: advanced

  Errors:
  `PETSC_ERR_SUP` when A is not a petscspmv type; `PETSC_ERR_ARG_WRONGSTATE` when it is not
  assembled, or when it is a CUDA matrix bound to the CPU whose layout is not built yet (it is
  built at its first use on the GPU); the errors of bringing the layout up to date (a value
  that overflows a lossy value format).

.seealso: `MatView()` with `PETSC_VIEWER_ASCII_INFO`
@*/
PetscErrorCode MatSpMVGetStats(Mat A, MatSpMVStats *stats)
{
  pspmv::glue::GetStatsFn fn;
  MatType                 type;
  char                    names[256];

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(stats, 2);
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatSpMVGetStats_C", &fn));
  PetscCall(MatGetType(A, &type));
  PetscCall(RootNames(nullptr, names, sizeof(names)));
  PetscCheck(fn, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "MatSpMVGetStats() needs a matrix of a petscspmv type (%s); this one is %s", names, type ? type : "untyped");
  PetscCall((*fn)(A, stats));
  PetscFunctionReturn(PETSC_SUCCESS);
}
