// MatConvert between our families, AIJ and AIJCUSPARSE. PETSc's MatConvert() looks for
// "MatConvert_<from>_<to>_C" on the input matrix, then on a new matrix of the target type; so
// every matrix of ours carries the functions for both directions. Conversions go through the
// target's base type: between the CUDA families and AIJCUSPARSE nothing leaves the device.
#include "spmvimpl.hpp"

#include "block_csr.hpp"

namespace pspmv
{
namespace glue
{

namespace
{

/* The MATMPIAIJ T's CSR set to the MPI matrix A's host CSR (WithAIJArrays(): values newer on the
   GPU come back first; PetscInt indices, no 32-bit limit) by MatMPIAIJSetPreallocationCSR(), each
   row in global column order: the off-diagonal block's columns left of the diagonal block, the
   diagonal block's, the off-diagonal ones right of it (garray is increasing). */
PetscErrorCode SetMPICsrOf(Mat A, Mat T)
{
  PetscFunctionBegin;
  Mat             Ad, Ao;
  const PetscInt *garray;
  PetscInt        cstart;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
  PetscCall(MatGetOwnershipRangeColumn(A, &cstart, nullptr));
  PetscCall(WithAIJArrays(Ad, [&](const AIJArrays &d) -> PetscErrorCode {
    PetscFunctionBegin;
    PetscCall(WithAIJArrays(Ao, [&](const AIJArrays &o) -> PetscErrorCode {
      const PetscInt m = d.n, nz = d.ia[d.n] + o.ia[o.n];
      PetscInt      *ii, *jj;
      PetscScalar   *vv;

      PetscFunctionBegin;
      PetscCall(PetscMalloc3(m + 1, &ii, nz, &jj, nz, &vv));
      ii[0] = 0;
      for (PetscInt r = 0; r < m; r++) {
        PetscInt k = ii[r], q = o.ia[r];
        for (; q < o.ia[r + 1] && garray[o.ja[q]] < cstart; q++, k++) {
          jj[k] = garray[o.ja[q]];
          vv[k] = o.aa[q];
        }
        for (PetscInt p = d.ia[r]; p < d.ia[r + 1]; p++, k++) {
          jj[k] = cstart + d.ja[p];
          vv[k] = d.aa[p];
        }
        for (; q < o.ia[r + 1]; q++, k++) {
          jj[k] = garray[o.ja[q]];
          vv[k] = o.aa[q];
        }
        ii[r + 1] = k;
      }
      const PetscErrorCode perr = MatMPIAIJSetPreallocationCSR(T, ii, jj, vv);
      PetscCall(PetscFree3(ii, jj, vv));
      PetscCall(perr);
      PetscFunctionReturn(PETSC_SUCCESS);
    }));
    PetscFunctionReturn(PETSC_SUCCESS);
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* *T = a MATAIJ copy of the aijcusparse matrix A (seq or mpi), with the same stored entries
   (explicit zeros included) in the same order, its block sizes and local-to-global mappings, new
   nonzeros allowed (as MatConvert's entry-by-entry copy leaves them), from A's host CSR: seq, a
   duplicate of a MATSEQAIJ made on A's arrays (one memcpy per array); mpi, SetMPICsrOf().
   (MatConvert(A, MATAIJ) has no converter for the CUDA types and goes entry by entry:
   docs/benchmarks.md.) On error *T is NULL. */
PetscErrorCode CopyAIJCusparseToAIJ(Mat A, PetscBool mpi, Mat *T)
{
  PetscInt       m, n, M, N;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(A, &m, &n));
  PetscCall(MatGetSize(A, &M, &N));
  *T   = nullptr;
  ierr = [&]() -> PetscErrorCode {
    PetscFunctionBegin;
    if (mpi) {
      PetscCall(MatCreate(PetscObjectComm((PetscObject)A), T));
      PetscCall(MatSetSizes(*T, m, n, M, N));
      PetscCall(MatSetBlockSizesFromMats(*T, A, A));
      PetscCall(MatSetType(*T, MATMPIAIJ));
      PetscCall(SetMPICsrOf(A, *T));
    } else {
      /* a MATSEQAIJ on A's host arrays (not freed; its assembly rewrites the row offsets with the
         values they hold) duplicated: one copy of each array */
      PetscCall(WithAIJArrays(A, [&](const AIJArrays &a) -> PetscErrorCode {
        Mat W = nullptr;

        PetscFunctionBegin;
        PetscErrorCode werr = MatCreateSeqAIJWithArrays(PetscObjectComm((PetscObject)A), m, n, const_cast<PetscInt *>(a.ia), const_cast<PetscInt *>(a.ja), const_cast<PetscScalar *>(a.aa), &W);
        if (!werr) werr = MatDuplicate(W, MAT_COPY_VALUES, T);
        if (W) PetscCall(MatDestroy(&W));
        PetscCall(werr);
        PetscFunctionReturn(PETSC_SUCCESS);
      }));
      PetscCall(MatSetBlockSizesFromMats(*T, A, A));
    }
    PetscCall(MatSetOption(*T, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_FALSE)); /* both ways forbid new nonzeros: allow them */
    if (A->rmap->mapping && A->cmap->mapping) PetscCall(MatSetLocalToGlobalMapping(*T, A->rmap->mapping, A->cmap->mapping));
    PetscFunctionReturn(PETSC_SUCCESS);
  }();
  if (ierr) PetscCall(MatDestroy(T));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The TypeInfo of our family of A, NULL for other types. */
const TypeInfo *FamilyOf(Mat A)
{
  if (SeqState *sp = SeqGetState(A)) return sp->type;
  if (MPIState *mp = MPIGetState(A)) return mp->type;
  return nullptr;
}

const FormatOptions &OptionsOf(Mat A)
{
  if (SeqState *sp = SeqGetState(A)) return sp->opts;
  return MPIGetState(A)->opts;
}

/* A plain matrix of the base type of A's family (ours) with A's entries: a new one (INITIAL: the
   base type's duplicate on A presented as the base type) or A itself, stripped (INPLACE). */
PetscErrorCode ToBase(Mat A, MatReuse reuse, Mat *B)
{
  PetscBool mpi = (PetscBool)(MPIGetState(A) != nullptr);

  PetscFunctionBegin;
  if (reuse == MAT_INPLACE_MATRIX) {
    PetscCall(mpi ? MPIStrip(A) : SeqStrip(A));
    *B = A;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  BaseNames bn;
  PetscCall(PresentAsBase(A, &bn));
  const PetscErrorCode ierr = MatDuplicate(A, MAT_COPY_VALUES, B);
  PetscCall(RestoreTypeNames(A, bn));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A MATSEQAIJ/MATMPIAIJ matrix with the entries of A (ours; new, or A itself in place). A CUDA
   family's matrix is copied from its host CSR (PETSc has no AIJCUSPARSE -> AIJ converter and goes
   entry by entry otherwise). */
PetscErrorCode ToAIJ(Mat A, MatReuse reuse, Mat *B)
{
  const TypeInfo *t = FamilyOf(A);
  Mat             T;

  PetscFunctionBegin;
  if (!t->cuda) {
    PetscCall(ToBase(A, reuse, B));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(CopyAIJCusparseToAIJ(A, (PetscBool)(MPIGetState(A) != nullptr), &T));
  if (reuse == MAT_INPLACE_MATRIX) {
    PetscCall(MatHeaderReplace(A, &T));
    *B = A;
  } else *B = T;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A MATSEQAIJCUSPARSE/MATMPIAIJCUSPARSE matrix with the entries of A (ours). */
PetscErrorCode ToAIJCusparse(Mat A, MatReuse reuse, Mat *B)
{
  const TypeInfo *t   = FamilyOf(A);
  const PetscBool mpi = (PetscBool)(MPIGetState(A) != nullptr);

  PetscFunctionBegin;
  PetscCall(ToBase(A, reuse, B));
  if (!t->cuda) PetscCall(MatConvert(*B, mpi ? MATMPIAIJCUSPARSE : MATSEQAIJCUSPARSE, MAT_INPLACE_MATRIX, B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Ours -> another type (AIJ, AIJCUSPARSE, another family of ours): through the target's base type
   (no host copy between CUDA families). Between our families of one format the result keeps A's
   options; from another format it reads them with A's prefix, as a conversion from AIJ does. */
PetscErrorCode MatConvert_SpMV_Out(Mat A, MatType newtype, MatReuse reuse, Mat *newmat)
{
  const TypeInfo        *from = FamilyOf(A), *to = nullptr;
  PetscInt               n;
  const TypeInfo *const *types = Types(&n);
  PetscBool              flg;
  Mat                    T;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    /* *newmat came from A's pattern: copy the values (MatCopy picks its fastest path); a lossy
       layout of ours checks them here (on every rank) */
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    if (SeqGetState(*newmat)) PetscCall(SeqCheckValues(*newmat));
    else if (MPIGetState(*newmat)) PetscCall(MPICheckValues(*newmat));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (PetscInt i = 0; i < n && !to; i++) {
    for (const char *name : {types[i]->root, types[i]->seq, types[i]->mpi}) {
      PetscCall(PetscStrcmp(newtype, name, &flg));
      if (flg) to = types[i];
    }
  }
  if (!to) {
    PetscBool cu;
    PetscCall(PetscStrbeginswith(newtype, "seqaijcusparse", &cu));
    if (!cu) PetscCall(PetscStrbeginswith(newtype, "mpiaijcusparse", &cu));
    if (!cu) PetscCall(PetscStrbeginswith(newtype, "aijcusparse", &cu));
    PetscCall((cu ? ToAIJCusparse : ToAIJ)(A, reuse, newmat));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  {
    const PetscBool mpi = (PetscBool)(MPIGetState(A) != nullptr);
    FormatOptions   o(to->format);
    if (to->format == from->format) o = OptionsOf(A);
    else PetscCall(ReadOptions(A, nullptr, &o)); /* A's prefix */
    PetscCall((to->cuda ? ToAIJCusparse : ToAIJ)(A, MAT_INITIAL_MATRIX, &T));
    const PetscErrorCode ierr = mpi ? MPIConvertFromBase(T, to, &o, MAT_INPLACE_MATRIX, &T) : SeqConvertFromBase(T, to, &o, MAT_INPLACE_MATRIX, &T);
    if (ierr) PetscCall(MatDestroy(&T)); /* e.g. a value the new format cannot hold */
    PetscCall(ierr);
  }
  if (reuse == MAT_INPLACE_MATRIX) PetscCall(MatHeaderReplace(A, &T));
  else *newmat = T;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* AIJCUSPARSE -> a family of ours (found on the new matrix of the target type): a CUDA family
   adopts a duplicate (or A itself in place); a host family a host copy of its CSR. */
template <PetscBool MPI>
PetscErrorCode MatConvert_AIJCusparse_SpMV(Mat A, MatType newtype, MatReuse reuse, Mat *newmat)
{
  PetscInt               n;
  const TypeInfo *const *types = Types(&n);
  const TypeInfo        *to    = nullptr;
  PetscBool              flg;
  Mat                    T;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < n && !to; i++) {
    for (const char *name : {types[i]->root, types[i]->seq, types[i]->mpi}) {
      PetscCall(PetscStrcmp(newtype, name, &flg));
      if (flg) to = types[i];
    }
  }
  PetscCheck(to, PetscObjectComm((PetscObject)A), PETSC_ERR_PLIB, "no petscspmv type %s", newtype);
  if (to->cuda || reuse == MAT_REUSE_MATRIX) {
    PetscCall(MPI ? MPIConvertFromBase(A, to, nullptr, reuse, newmat) : SeqConvertFromBase(A, to, nullptr, reuse, newmat));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  {
    FormatOptions o(to->format);
    PetscCall(InitialOptions(A, to, &o)); /* A's prefix */
    PetscCall(CopyAIJCusparseToAIJ(A, MPI, &T));
    const PetscErrorCode ierr = MPI ? MPIConvertFromBase(T, to, &o, MAT_INPLACE_MATRIX, &T) : SeqConvertFromBase(T, to, &o, MAT_INPLACE_MATRIX, &T);
    if (ierr) PetscCall(MatDestroy(&T));
    PetscCall(ierr);
  }
  if (reuse == MAT_INPLACE_MATRIX) PetscCall(MatHeaderReplace(A, &T));
  else *newmat = T;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatConvert() to A's own family by its root name: what PETSc does for the type's own name. */
PetscErrorCode MatConvert_SpMV_SameType(Mat A, MatType, MatReuse reuse, Mat *newmat)
{
  PetscFunctionBegin;
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  else if (reuse == MAT_REUSE_MATRIX) PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Compose(Mat A, const char *from, const char *to, PetscErrorCode (*f)(Mat, MatType, MatReuse, Mat *))
{
  char name[256];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_%s_%s_C", from, to));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, name, f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

PetscErrorCode ComposeConverters(Mat A, const TypeInfo *t, PetscBool mpi, PetscBool on)
{
  const char            *self = mpi ? t->mpi : t->seq;
  const char            *aij  = mpi ? MATMPIAIJ : MATSEQAIJ;
  PetscInt               n;
  const TypeInfo *const *types = Types(&n);

  PetscFunctionBegin;
  /* MatConvert() looks for "MatConvert_<from>_<to>_C" with <to> the requested name as given
     (a root name such as "packsell") or with the "seq"/"mpi" prefix (e.g. "seqaijcusparse");
     A's own names are both targets (MatConvert() finds them on a new matrix of the type) */
  for (const char *to : {self, t->root}) {
    PetscCall(Compose(A, aij, to, on ? (mpi ? t->convert_mpi : t->convert_seq) : nullptr));
#if defined(PETSC_HAVE_CUDA)
    PetscCall(Compose(A, mpi ? MATMPIAIJCUSPARSE : MATSEQAIJCUSPARSE, to, on ? (mpi ? MatConvert_AIJCusparse_SpMV<PETSC_TRUE> : MatConvert_AIJCusparse_SpMV<PETSC_FALSE>) : nullptr));
#endif
  }
  PetscCall(Compose(A, self, aij, on ? MatConvert_SpMV_Out : nullptr));
#if defined(PETSC_HAVE_CUDA)
  PetscCall(Compose(A, self, mpi ? MATMPIAIJCUSPARSE : MATSEQAIJCUSPARSE, on ? MatConvert_SpMV_Out : nullptr));
#endif
  for (PetscInt i = 0; i < n; i++) {
    if (types[i] == t) {
      PetscCall(Compose(A, self, t->root, on ? MatConvert_SpMV_SameType : nullptr));
      continue;
    }
    PetscCall(Compose(A, self, mpi ? types[i]->mpi : types[i]->seq, on ? MatConvert_SpMV_Out : nullptr));
    PetscCall(Compose(A, self, types[i]->root, on ? MatConvert_SpMV_Out : nullptr));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
