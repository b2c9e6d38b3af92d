// The seq types: MATSEQAIJ plus a shadow layout (RgCSR or PackSELL, host or CUDA backend).
// AIJ stays the matrix (assembly, preallocation, COO, MatLoad, every operation we do not
// replace); the shadow serves MatMult, MatMultAdd and MatGetDiagonal.
#include "spmvimpl.hpp"

#include "block_csr.hpp"

#include <petscdevice.h>

#include <algorithm>

namespace pspmv {
namespace glue {

namespace {

SeqState *State(Mat A) { return static_cast<SeqState *>(A->spptr); }

/* CSR view of the (assembled) AIJ arrays, without copying. */
PetscErrorCode GetCsr(Mat A, CsrView *v)
{
  static const PetscInt zero = 0;
  const PetscInt       *ai = nullptr, *aj = nullptr;
  PetscScalar          *aa = nullptr;
  PetscMemType          mtype;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, &mtype));
  PetscCheck(mtype == PETSC_MEMTYPE_HOST, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the AIJ arrays of a petscspmv matrix must be host arrays");
  v->rows   = A->rmap->n;
  v->cols   = A->cmap->n;
  v->rowptr = ai ? ai : &zero;
  v->colidx = aj;
  v->values = aa;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The device twin a CUDA layout of A is built from: the seq aijcusparse matrix of the innermost
   DeviceTwinScope when A's AIJ arrays are its copy (same local sizes and entries, at least one)
   and its device copy is current and usable (not bound to the CPU), else NULL. */
PetscErrorCode DeviceTwin(Mat A, SeqState *sp, Mat *twin)
{
  Mat       t = DeviceTwinScope::Current();
  PetscBool seq = PETSC_FALSE;

  PetscFunctionBegin;
  *twin = nullptr;
  if (!t || !sp->type->cuda) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(AIJCusparseOnDevice(t, &seq));
  /* a block whose device copy is older than its host arrays is uploaded */
  if (seq && t->offloadmask != PETSC_OFFLOAD_GPU && t->offloadmask != PETSC_OFFLOAD_BOTH) seq = PETSC_FALSE;
  if (seq) {
    PetscInt m, n, tm, tn;
    MatInfo  ia, it;
    PetscCall(MatGetLocalSize(A, &m, &n));
    PetscCall(MatGetLocalSize(t, &tm, &tn));
    PetscCall(MatGetInfo(A, MAT_LOCAL, &ia));
    PetscCall(MatGetInfo(t, MAT_LOCAL, &it));
    /* an empty block is uploaded (nothing to copy; AIJCUSPARSE may hold no arrays for it) */
    if (m == tm && n == tn && ia.nz_used == it.nz_used && ia.nz_used > 0) *twin = t;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Build(Mat A, SeqState *sp, const FormatOptions &opts, std::unique_ptr<Shadow> *out)
{
  CsrView                 csr;
  std::unique_ptr<Shadow> fresh;
  Mat                     twin = nullptr;

  PetscFunctionBegin;
  PetscCall(GetCsr(A, &csr));
  PetscCall(DeviceTwin(A, sp, &twin));
  PetscCallCXX(fresh = sp->type->create_shadow(sp->type->format));
  PetscCall(PetscLogEventBegin(EventBuild, A, 0, 0, 0));
  {
    GlobalIndexScope names(sp->global);
    PetscCall(fresh->Build(csr, opts, twin));
  }
  PetscCall(PetscLogEventEnd(EventBuild, A, 0, 0, 0));
  PetscCall(InfoLayout(A, sp->type, opts, *fresh));
  *out = std::move(fresh);
  PetscFunctionReturn(PETSC_SUCCESS);
}

Stamp StampOf(Mat A)
{
  Stamp s;
  s.state   = ((PetscObject)A)->state;
  s.nzstate = A->nonzerostate;
  s.num_ass = A->num_ass;
  return s;
}

/* Replaces the shadow (the old one's device memory is freed) and stamps it with A's stamp. */
PetscErrorCode Install(Mat A, SeqState *sp, std::unique_ptr<Shadow> fresh)
{
  PetscFunctionBegin;
  if (sp->shadow) PetscCall(sp->shadow->Release());
  sp->shadow = std::move(fresh);
  sp->synced = StampOf(A);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A matrix whose layout is built at its first use rather than at assembly: a product result
   (the symbolic phase assembles placeholder values) or a pattern without values (symbolic
   transposes). */
PetscErrorCode BuildsLazily(Mat A, PetscBool *lazy)
{
  const PetscInt *ai, *aj;
  PetscScalar    *aa;
  PetscMemType    mtype;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, &mtype));
  *lazy = (PetscBool)(A->product || (!aa && ai && ai[A->rmap->n] > 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Drops the layout: the next use builds it anew. */
PetscErrorCode Invalidate(SeqState *sp)
{
  PetscFunctionBegin;
  if (sp->shadow) PetscCall(sp->shadow->Release());
  sp->shadow.reset();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatAssemblyEnd_SeqSpMV(Mat A, MatAssemblyType mode)
{
  SeqState *sp = State(A);
  PetscBool lazy;

  PetscFunctionBegin;
  PetscCall(sp->aijops.assemblyend(A, mode));
  if (mode == MAT_FLUSH_ASSEMBLY || MPIAssemblesBlock(A)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(BuildsLazily(A, &lazy));
  if (lazy) {
    PetscCall(Invalidate(sp));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* values may have changed through MatSetValues(), which does not touch the object state */
  PetscCall(SeqSync(A, PETSC_TRUE));
  /* the stamp A has when MatAssemblyEnd() returns: it increases the object state and the count
     of final assemblies once after this returns (a call of this operation outside
     MatAssemblyEnd() leaves A's count behind the stamp: the next use syncs again) */
  sp->synced.state++;
  sp->synced.num_ass++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Product(Mat A, Vec x, Vec y, PetscBool add)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  PetscCall(SeqSync(A, PETSC_FALSE));
  PetscCall(sp->shadow->Mult(x, y, add));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatMult_SeqSpMV(Mat A, Vec x, Vec y)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  if (sp->type->cuda && A->boundtocpu) PetscCall(sp->aijops.mult(A, x, y));
  else PetscCall(Product(A, x, y, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatMultAdd_SeqSpMV(Mat A, Vec x, Vec y, Vec z)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  if (sp->type->cuda && A->boundtocpu) {
    PetscCall(sp->aijops.multadd(A, x, y, z));
  } else {
    if (y != z) PetscCall(VecCopy(y, z));
    PetscCall(Product(A, x, z, PETSC_TRUE));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode InfoTranspose(Mat A)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  if (!sp->info_transpose) {
    PetscCall(PetscInfo(A, "%s has no transpose kernel: MatMultTranspose() uses the SeqAIJ host kernel on the AIJ arrays\n", sp->type->seq));
    sp->info_transpose = PETSC_TRUE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatMultTranspose_SeqSpMV(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(InfoTranspose(A));
  PetscCall(State(A)->aijops.multtranspose(A, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatMultTransposeAdd_SeqSpMV(Mat A, Vec x, Vec y, Vec z)
{
  PetscFunctionBegin;
  PetscCall(InfoTranspose(A));
  PetscCall(State(A)->aijops.multtransposeadd(A, x, y, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGetDiagonal_SeqSpMV(Mat A, Vec d)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  if (sp->type->cuda && A->boundtocpu) {
    PetscCall(sp->aijops.getdiagonal(A, d));
  } else {
    PetscCall(SeqSync(A, PETSC_FALSE));
    PetscCall(sp->shadow->GetDiagonal(d));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatStoreValues() / MatRetrieveValues(): SeqAIJ's retrieve copies the saved values back
   without changing the object state; the layout must follow them. */
PetscErrorCode MatRetrieveValues_SeqSpMV(Mat A)
{
  PetscFunctionBegin;
  PetscCall(State(A)->aij_retrieve(A));
  PetscCall(PetscObjectStateIncrease((PetscObject)A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatView_SeqSpMV(Mat A, PetscViewer viewer)
{
  SeqState *sp = State(A);
  PetscBool info;

  PetscFunctionBegin;
  PetscCall(ViewWantsFormatInfo(viewer, &info));
  if (info && A->assembled) {
    FormatStats stats;
    PetscInt    scale[2];
    PetscCall(SeqGetStats(A, &stats, &scale[0]));
    scale[1] = scale[0];
    PetscCall(ViewFormat(A, viewer, sp->type, sp->opts, stats, scale, "this matrix"));
  }
  PetscCall(sp->aijops.view(A, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Local(Mat, PetscErrorCode ierr) { return ierr; }

using Options = OptionOps<SeqState, SeqSetOptions, SeqLayoutStats, Local>;

PetscErrorCode GetStats_Seq(Mat A, MatSpMVStats *out)
{
  FormatStats s;
  PetscInt    scale[2];

  PetscFunctionBegin;
  PetscCall(SeqGetStats(A, &s, &scale[0]));
  scale[1] = scale[0];
  ToPublicStats(s, scale, out);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatDestroy_SeqSpMV(Mat A);

/* The operations our seq types replace; everything else stays SeqAIJ's. */
void SwitchOps(Mat A, const struct _MatOps &aij, PetscBool ours)
{
  A->ops->assemblyend      = ours ? MatAssemblyEnd_SeqSpMV : aij.assemblyend;
  A->ops->mult             = ours ? MatMult_SeqSpMV : aij.mult;
  A->ops->multadd          = ours ? MatMultAdd_SeqSpMV : aij.multadd;
  A->ops->multtranspose    = ours ? MatMultTranspose_SeqSpMV : aij.multtranspose;
  A->ops->multtransposeadd = ours ? MatMultTransposeAdd_SeqSpMV : aij.multtransposeadd;
  A->ops->getdiagonal      = ours ? MatGetDiagonal_SeqSpMV : aij.getdiagonal;
  /* operations whose results PETSc makes of A's type take A's options (NULL stays NULL:
     PETSc then takes another path, e.g. MatCreateSubMatrix() through createsubmatrices) */
  A->ops->duplicate          = ours && aij.duplicate ? PSPMV_INHERITING(SeqState, duplicate) : aij.duplicate;
  A->ops->transpose          = ours && aij.transpose ? PSPMV_INHERITING(SeqState, transpose) : aij.transpose;
  A->ops->axpy               = ours && aij.axpy ? PSPMV_INHERITING(SeqState, axpy) : aij.axpy;
  A->ops->createsubmatrix    = ours && aij.createsubmatrix ? PSPMV_INHERITING(SeqState, createsubmatrix) : aij.createsubmatrix;
  A->ops->createsubmatrices  = ours && aij.createsubmatrices ? PSPMV_INHERITING(SeqState, createsubmatrices) : aij.createsubmatrices;
  A->ops->view             = ours ? MatView_SeqSpMV : aij.view;
  A->ops->setfromoptions   = ours ? Options::SetFromOptions : aij.setfromoptions;
  A->ops->destroy          = ours ? MatDestroy_SeqSpMV : aij.destroy;
}


/* Removes everything of ours from A (which becomes a plain MATSEQAIJ); frees the layout.
   destroying: A is being destroyed (its function list may be freed already: only removals). */
PetscErrorCode Strip(Mat A, PetscBool destroying)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  if (sp->shadow) PetscCall(sp->shadow->Release());
  SwitchOps(A, sp->aijops, PETSC_FALSE);
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatRetrieveValues_C", destroying ? nullptr : sp->aij_retrieve));
  PetscCall(ComposeOptionFunctions(A, sp->type->format, nullptr, nullptr, nullptr));
  PetscCall(ComposeConverters(A, sp->type, PETSC_FALSE, PETSC_FALSE));
  if (sp->type->cuda) PetscCall(SetDefaultVecType(A, VECSTANDARD));
  A->boundtocpu = sp->aij_boundtocpu;
  PetscCallCXX(delete sp);
  A->spptr = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatDestroy_SeqSpMV(Mat A)
{
  PetscErrorCode (*destroy)(Mat) = State(A)->aijops.destroy;

  PetscFunctionBegin;
  PetscCall(Strip(A, PETSC_TRUE));
  PetscCall((*destroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Makes the seqaij matrix B one of family t (B unchanged on error). */
PetscErrorCode Adopt(Mat B, const TypeInfo *t, const FormatOptions &opts)
{
  SeqState *sp = nullptr;
  PetscBool isaij;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQAIJ, &isaij));
  PetscCheck(isaij, PETSC_COMM_SELF, PETSC_ERR_SUP, "cannot convert a %s matrix to %s: only MATSEQAIJ is converted in place", ((PetscObject)B)->type_name, t->seq);
  PetscCheck(!B->spptr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAIJ matrix with an spptr cannot become %s", t->seq);
  if (t->cuda) PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
  PetscCallCXX(sp = new SeqState);
  sp->type   = t;
  sp->opts   = opts;
  sp->aijops = *B->ops;
  PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatRetrieveValues_C", &sp->aij_retrieve));
  PetscCheck(sp->aij_retrieve, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAIJ without MatRetrieveValues_C");
  B->spptr = sp;
  SwitchOps(B, sp->aijops, PETSC_TRUE);
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatRetrieveValues_C", MatRetrieveValues_SeqSpMV));
  if (t->cuda) PetscCall(SetDefaultVecType(B, VECCUDA));
  /* MatCreate() leaves a matrix bound to the CPU on device builds; ours run on the GPU unless
     MatBindToCPU() asks otherwise (as MatConvert_SeqAIJ_SeqAIJCUSPARSE does) */
  sp->aij_boundtocpu = B->boundtocpu;
  if (t->cuda) B->boundtocpu = PETSC_FALSE;
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, t->seq));
  PetscCall(ComposeOptionFunctions(B, t->format, Options::Set, Options::Get, GetStats_Seq));
  PetscCall(ComposeConverters(B, t, PETSC_FALSE, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

PetscErrorCode SetDefaultVecType(Mat A, VecType type)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(A->defaultvectype));
  PetscCall(PetscStrallocpy(type, &A->defaultvectype));
  PetscFunctionReturn(PETSC_SUCCESS);
}

SeqState *SeqGetState(Mat A) { return A->ops->mult == MatMult_SeqSpMV ? State(A) : nullptr; }

PetscErrorCode SeqSync(Mat A, PetscBool force)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  if (!force && sp->shadow && StampOf(A) == sp->synced) PetscFunctionReturn(PETSC_SUCCESS);
  if (sp->shadow && A->nonzerostate == sp->synced.nzstate) {
    CsrView   csr;
    PetscBool pattern_changed;

    PetscCall(GetCsr(A, &csr));
    PetscCall(PetscLogEventBegin(EventValues, A, 0, 0, 0));
    {
      GlobalIndexScope names(sp->global);
      PetscCall(sp->shadow->UpdateValues(csr, &pattern_changed));
    }
    PetscCall(PetscLogEventEnd(EventValues, A, 0, 0, 0));
    if (!pattern_changed) {
      sp->synced = StampOf(A);
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(PetscInfo(A, "nonzero pattern changed without a new nonzero state: rebuilding the %s layout\n", FormatTitle(sp->type->format)));
  }
  {
    std::unique_ptr<Shadow> fresh;
    PetscCall(Build(A, sp, sp->opts, &fresh));
    PetscCall(Install(A, sp, std::move(fresh)));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SeqSetOptions(Mat A, const FormatOptions &o)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  if (o == sp->opts) PetscFunctionReturn(PETSC_SUCCESS);
  if (sp->shadow && A->assembled) {
    std::unique_ptr<Shadow> fresh;
    PetscCall(Build(A, sp, o, &fresh)); /* on error the old options and layout stay */
    PetscCall(Install(A, sp, std::move(fresh)));
  } else if (sp->shadow) {
    /* values are being inserted: the next final assembly builds with the new options */
    PetscCall(sp->shadow->Release());
    sp->shadow.reset();
  }
  sp->opts = o;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SeqGetStats(Mat A, FormatStats *s, PetscInt *scale_exponent)
{
  PetscFunctionBegin;
  PetscCheck(A->assembled, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "the layout of a %s matrix exists once the matrix is assembled", ((PetscObject)A)->type_name);
  PetscCall(SeqSync(A, PETSC_FALSE));
  *s = State(A)->shadow->Stats();
  if (scale_exponent) *scale_exponent = State(A)->shadow->ScaleExponent();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SeqLayoutStats(Mat A, FormatStats *s)
{
  PetscFunctionBegin;
  PetscCall(SeqGetStats(A, s, nullptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SeqConvertFromAIJ(Mat A, const TypeInfo *t, const FormatOptions *opts, MatReuse reuse, Mat *newmat)
{
  FormatOptions o(t->format);
  Mat           B;
  PetscBool     lazy = PETSC_FALSE;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    /* *newmat came from the same pattern: copy the values, the layout follows them */
    PetscCheck(SeqGetState(*newmat), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "MAT_REUSE_MATRIX: the target is a %s matrix, not %s", ((PetscObject)*newmat)->type_name, t->seq);
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    PetscCall(SeqSync(*newmat, PETSC_FALSE));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (opts) o = *opts;
  else PetscCall(InitialOptions(A, t, &o)); /* bad options: error before anything changes */
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  B = *newmat;
  PetscCall(Adopt(B, t, o));
  if (B->assembled) PetscCall(BuildsLazily(B, &lazy));
  if (B->assembled && !lazy) {
    PetscErrorCode ierr = SeqSync(B, PETSC_FALSE);
    if (ierr) {
      /* the layout cannot be built (a value overflows the value format, ...): B stays AIJ */
      if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDestroy(newmat));
      else {
        PetscCall(Strip(B, PETSC_FALSE));
        PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATSEQAIJ));
      }
    }
    PetscCall(ierr);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SeqConvertToAIJ(Mat A, MatType, MatReuse reuse, Mat *newmat)
{
  Mat B;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat)); /* no layout built */
  B = *newmat;
  PetscCall(Strip(B, PETSC_FALSE));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATSEQAIJ));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SeqCreate(Mat A, const TypeInfo *t)
{
  PetscFunctionBegin;
  PetscCall(MatCreate_SeqAIJ(A));
  PetscCall(SeqConvertFromAIJ(A, t, nullptr, MAT_INPLACE_MATRIX, &A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
