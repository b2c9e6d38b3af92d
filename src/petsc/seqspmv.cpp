// The seq types: MATSEQAIJ plus a shadow layout (RgCSR or PackSELL, host or CUDA backend).
// AIJ stays the matrix (assembly, preallocation, COO, MatLoad, every operation we do not
// replace); the shadow serves MatMult, MatMultAdd and MatGetDiagonal.
#include "spmvimpl.hpp"

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

PetscErrorCode Build(Mat A, SeqState *sp, const FormatOptions &opts, std::unique_ptr<Shadow> *out)
{
  CsrView                 csr;
  std::unique_ptr<Shadow> fresh;

  PetscFunctionBegin;
  PetscCall(GetCsr(A, &csr));
  PetscCallCXX(fresh = sp->type->create_shadow(sp->type->format));
  PetscCall(PetscLogEventBegin(EventBuild, A, 0, 0, 0));
  PetscCall(fresh->Build(csr, opts));
  PetscCall(PetscLogEventEnd(EventBuild, A, 0, 0, 0));
  *out = std::move(fresh);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Replaces the shadow (the old one's device memory is freed) and records the states. */
PetscErrorCode Install(Mat A, SeqState *sp, std::unique_ptr<Shadow> fresh)
{
  PetscFunctionBegin;
  if (sp->shadow) PetscCall(sp->shadow->Release());
  sp->shadow         = std::move(fresh);
  sp->synced_state   = ((PetscObject)A)->state;
  sp->synced_nzstate = A->nonzerostate;
  sp->assembly_bump  = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatAssemblyEnd_SeqSpMV(Mat A, MatAssemblyType mode)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  PetscCall(sp->aijops.assemblyend(A, mode));
  if (mode == MAT_FLUSH_ASSEMBLY || DeferBlockBuild > 0) PetscFunctionReturn(PETSC_SUCCESS);
  /* values may have changed through MatSetValues(), which does not touch the object state */
  PetscCall(SeqSync(A, PETSC_TRUE));
  /* MatAssemblyEnd() increases the state once and num_ass once after this returns */
  sp->assembly_bump  = PETSC_TRUE;
  sp->synced_num_ass = A->num_ass;
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

/* SeqAIJ's transpose fills a new SeqAIJ matrix and then calls MatSetType(At, A's type name);
   MatSetType() converts in place only for names that start with "seqaij" and would empty the
   matrix for ours. So it runs under A's AIJ name and its result is converted here. */
PetscErrorCode MatTranspose_SeqSpMV(Mat A, MatReuse reuse, Mat *B)
{
  SeqState       *sp   = State(A);
  const TypeInfo *t    = sp->type;
  FormatOptions   opt  = sp->opts, bopt = sp->opts;
  const TypeInfo *bt   = t;
  char           *name = nullptr;
  PetscBool       ourname;
  PetscErrorCode  ierr;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX && SeqGetState(*B)) {
    bt   = SeqGetState(*B)->type;
    bopt = SeqGetState(*B)->opts;
  }
  PetscCall(PetscStrallocpy(((PetscObject)A)->type_name, &name));
  PetscCall(PetscStrcmp(name, t->seq, &ourname));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATSEQAIJ));
  ierr = sp->aijops.transpose(A, reuse, B);
  if (SeqGetState(A)) PetscCall(PetscObjectChangeTypeName((PetscObject)A, name));
  PetscCall(PetscFree(name));
  PetscCall(ierr);
  /* under an AIJ name (inside an operation that renamed A), the result stays AIJ as asked */
  if (!ourname) PetscFunctionReturn(PETSC_SUCCESS);
  if (reuse == MAT_INPLACE_MATRIX && !SeqGetState(A)) PetscCall(SeqConvertFromAIJ(A, t, &opt, MAT_INPLACE_MATRIX, &A)); /* A was replaced by its transpose */
  else if (reuse != MAT_INPLACE_MATRIX && !SeqGetState(*B)) PetscCall(SeqConvertFromAIJ(*B, bt, &bopt, MAT_INPLACE_MATRIX, B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The graph of A for GAMG and friends (an AIJ matrix). */
PetscErrorCode MatCreateGraph_SeqSpMV(Mat A, PetscBool sym, PetscBool scale, PetscReal filter, PetscInt index_size, PetscInt index[], Mat *graph)
{
  PetscFunctionBegin;
  PetscCall(UnderAIJName(A, MATSEQAIJ, State(A)->aijops.creategraph, sym, scale, filter, index_size, index, graph));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatDuplicate_SeqSpMV(Mat A, MatDuplicateOption op, Mat *B)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  /* SeqAIJ's duplicate creates *B with MatSetType(A's type): a fresh matrix of our type whose
     layout is built at its first product (or assembly) */
  PetscCall(sp->aijops.duplicate(A, op, B));
  if (SeqGetState(*B)) State(*B)->opts = sp->opts; /* plain AIJ when A runs under its AIJ name */
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
    PetscInt    scale = 0;
    PetscCall(SeqGetStats(A, &stats, &scale));
    PetscCall(ViewFormat(A, viewer, sp->type, sp->opts, stats, scale, "this matrix"));
  }
  PetscCall(sp->aijops.view(A, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

using Options = OptionOps<SeqState, SeqSetOptions, SeqBuiltSigma>;

PetscErrorCode GetStats_Seq(Mat A, MatSpMVStats *out)
{
  FormatStats s;
  PetscInt    scale = 0;

  PetscFunctionBegin;
  PetscCall(SeqGetStats(A, &s, &scale));
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
  A->ops->duplicate        = ours ? MatDuplicate_SeqSpMV : aij.duplicate;
  A->ops->transpose        = ours ? MatTranspose_SeqSpMV : aij.transpose;
  A->ops->creategraph      = ours ? MatCreateGraph_SeqSpMV : aij.creategraph;
  A->ops->view             = ours ? MatView_SeqSpMV : aij.view;
  A->ops->setfromoptions   = ours ? Options::SetFromOptions : aij.setfromoptions;
  A->ops->destroy          = ours ? MatDestroy_SeqSpMV : aij.destroy;
}


/* Removes everything of ours from A (which becomes a plain MATSEQAIJ); frees the layout. */
PetscErrorCode Strip(Mat A)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  if (sp->shadow) PetscCall(sp->shadow->Release());
  SwitchOps(A, sp->aijops, PETSC_FALSE);
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
  PetscCall(Strip(A));
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
  B->spptr   = sp;
  SwitchOps(B, sp->aijops, PETSC_TRUE);
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
  SeqState        *sp    = State(A);
  PetscObjectState state = ((PetscObject)A)->state;

  PetscFunctionBegin;
  if (!force && sp->shadow && A->nonzerostate == sp->synced_nzstate) {
    if (state == sp->synced_state) PetscFunctionReturn(PETSC_SUCCESS);
    if (sp->assembly_bump && state == sp->synced_state + 1 && A->num_ass == sp->synced_num_ass + 1) {
      sp->synced_state  = state; /* only MatAssemblyEnd()'s own increase happened since */
      sp->assembly_bump = PETSC_FALSE;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  if (sp->shadow && A->nonzerostate == sp->synced_nzstate) {
    CsrView   csr;
    PetscBool pattern_changed;

    PetscCall(GetCsr(A, &csr));
    PetscCall(PetscLogEventBegin(EventValues, A, 0, 0, 0));
    PetscCall(sp->shadow->UpdateValues(csr, &pattern_changed));
    PetscCall(PetscLogEventEnd(EventValues, A, 0, 0, 0));
    if (!pattern_changed) {
      sp->synced_state  = state;
      sp->assembly_bump = PETSC_FALSE;
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
  if (o.Equals(sp->type->format, sp->opts)) PetscFunctionReturn(PETSC_SUCCESS);
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

PetscErrorCode SeqBuiltSigma(Mat A, PetscInt *sigma)
{
  FormatStats s;

  PetscFunctionBegin;
  PetscCall(SeqGetStats(A, &s, nullptr));
  *sigma = s.sigma;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SeqConvertFromAIJ(Mat A, const TypeInfo *t, const FormatOptions *opts, MatReuse reuse, Mat *newmat)
{
  FormatOptions o;
  Mat           B;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    /* *newmat came from the same pattern: copy the values, the layout follows them */
    PetscCheck(SeqGetState(*newmat), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "MAT_REUSE_MATRIX: the target is a %s matrix, not %s", ((PetscObject)*newmat)->type_name, t->seq);
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    PetscCall(SeqSync(*newmat, PETSC_FALSE));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (opts) o = *opts;
  else PetscCall(ReadOptions(A, nullptr, t->format, &o)); /* bad options: error before anything changes */
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  B = *newmat;
  PetscCall(Adopt(B, t, o));
  if (B->assembled) {
    PetscErrorCode ierr = SeqSync(B, PETSC_FALSE);
    if (ierr) {
      /* the layout cannot be built (a value overflows the value format, ...): B stays AIJ */
      if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDestroy(newmat));
      else {
        PetscCall(Strip(B));
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
  PetscCall(Strip(B));
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
