// The seq types: the family's base type (MATSEQAIJ, or MATSEQAIJCUSPARSE for the CUDA families)
// plus a layout (RgCSR or PackSELL, host or CUDA backend). The base type stays the matrix
// (assembly, preallocation, COO, MatLoad, factorizations, products, every operation we do not
// replace); the layout serves MatMult, MatMultAdd and MatGetDiagonal.
#include "spmvimpl.hpp"

#include "block_csr.hpp"
#include "petsc_fixes/petsc_fixes.hpp"
#include "petsc_fixes/private_fields.hpp"

namespace pspmv
{
namespace glue
{

namespace
{

const char kStateKey[] = "PetscSpMVSeqState";

SeqState *State(Mat A)
{
  return SeqGetState(A);
}

/* A CUDA matrix bound to the CPU runs the base type's host kernels. */
bool OnHostBase(Mat A, const SeqState *sp)
{
  return sp->type->cuda && A->boundtocpu;
}

BuildSource SourceOf(Mat A, const SeqState *sp)
{
  BuildSource src;
  src.A               = A;
  src.global          = sp->global;
  src.free_device_csr = sp->free_device_csr;
  return src;
}

PetscErrorCode Build(Mat A, SeqState *sp, const FormatOptions &opts, std::unique_ptr<Shadow> *out)
{
  std::unique_ptr<Shadow> fresh;
  MatInfo                 info;

  PetscFunctionBegin;
  /* the layouts' 32-bit indices (a PETSc with 64-bit indices can hold larger blocks) */
  PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
  PetscCallCoreAt(sp->global, PETSC_ERR_ARG_OUTOFRANGE, check_fits_int32(A->rmap->n, A->cmap->n, (int64_t)info.nz_used));
  PetscCallCXX(fresh = sp->type->create_shadow(sp->type->format));
  /* an ordered layout: a square matrix or an MPI diagonal block; an off-diagonal block and a
     rectangular matrix (GAMG's interpolations inherit the operator's type and options) keep the
     matrix's order */
  if (opts.Ordering() != LayoutOrdering::Natural && !sp->global.off_diagonal) {
    if (A->rmap->n == A->cmap->n) PetscCallCXX(fresh = CreateOrderedShadow(std::move(fresh), opts.Ordering(), sp->type->cuda ? true : false));
    else PetscCall(PetscInfo(A, "ordering %s: the %" PetscInt_FMT " x %" PetscInt_FMT " matrix is not square and keeps its order\n", layout_ordering_name(opts.Ordering()).c_str(), A->rmap->n, A->cmap->n));
  }
  PetscCall(PetscLogEventBegin(EventBuild, A, 0, 0, 0));
  const PetscErrorCode ierr = fresh->Build(SourceOf(A, sp), opts); /* a refusal: the event ended too */
  PetscCall(PetscLogEventEnd(EventBuild, A, 0, 0, 0));
  PetscCall(ierr);
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
  s.data    = A->data;
  return s;
}

/* Replaces the layout (the old one's device memory is freed) and stamps it with A's stamp. */
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
   transposes). Values that live on the GPU exist. */
PetscErrorCode BuildsLazily(Mat A, PetscBool *lazy)
{
  const PetscScalar *aa;
  MatInfo            info;

  PetscFunctionBegin;
  *lazy = (PetscBool)(A->product != nullptr);
  if (*lazy || A->offloadmask == PETSC_OFFLOAD_GPU || A->offloadmask == PETSC_OFFLOAD_BOTH) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
  if (info.nz_used == 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatSeqAIJGetArrayRead(A, &aa)); /* host values: current on the host here, no copy */
  *lazy = (PetscBool)!aa;
  PetscCall(MatSeqAIJRestoreArrayRead(A, &aa));
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

PetscErrorCode MatBindToCPU_SeqSpMV(Mat A, PetscBool flg);

/* A MatBindToCPU() owed (one that came during PETSc's hash assembly, MatBindToCPU_SeqSpMV(), or
   the adoption of a bound matrix during it, Adopt()), applied once the hash is done: the
   operations a hash puts back are those of MatSetUp()'s time, the base type's unbound ones (with
   ours over them, or not: SeqSetUpBlock()). */
PetscErrorCode ApplyBindAfterHash(Mat A, SeqState *sp)
{
  PetscFunctionBegin;
  if (sp->bind_after_hash && !A->hash_active) {
    sp->bind_after_hash       = PETSC_FALSE;
    const PetscErrorCode ierr = MatBindToCPU_SeqSpMV(A, A->boundtocpu);
    if (ierr) sp->bind_after_hash = PETSC_TRUE; /* still owed */
    PetscCall(ierr);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatAssemblyEnd_SeqSpMV(Mat A, MatAssemblyType mode)
{
  SeqState *sp = State(A);
  PetscBool lazy;

  PetscFunctionBegin;
  PetscCall(ApplyBindAfterHash(A, sp));
  PetscCall(sp->baseops.assemblyend(A, mode));
  /* a block's MPI matrix brings it up to date once its own assembly is done */
  if (mode == MAT_FLUSH_ASSEMBLY || sp->block) PetscFunctionReturn(PETSC_SUCCESS);
  if (OnHostBase(A, sp) || sp->defer_value_check) { /* bound to the CPU: rebuilt at the first use on the GPU;
                                                        inside a value-changing operation: synced at its end */
    PetscCall(Invalidate(sp));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
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

PetscErrorCode Product(Mat A, SeqState *sp, Vec x, Vec y, PetscBool add)
{
  PetscFunctionBegin;
  if (!sp->block) PetscCall(WarnLossyOperator(A, sp->opts, &sp->warned_lossy)); /* an MPI matrix warns for its blocks */
  PetscCall(SeqSync(A, PETSC_FALSE));
  PetscCall(sp->shadow->Mult(x, y, add));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatMult_SeqSpMV(Mat A, Vec x, Vec y)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  if (OnHostBase(A, sp)) PetscCall(sp->baseops.mult(A, x, y));
  else PetscCall(Product(A, sp, x, y, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatMultAdd_SeqSpMV(Mat A, Vec x, Vec y, Vec z)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  if (OnHostBase(A, sp)) {
    PetscCall(sp->baseops.multadd(A, x, y, z));
  } else {
    if (y != z) PetscCall(VecCopy(y, z));
    PetscCall(Product(A, sp, x, z, PETSC_TRUE));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The host families' transpose products are SeqAIJ's (reported once under -info); the CUDA
   families keep AIJCUSPARSE's. */
PetscErrorCode InfoTranspose(Mat A, SeqState *sp)
{
  PetscFunctionBegin;
  if (!sp->info_transpose) {
    PetscCall(PetscInfo(A, "%s has no transpose kernel: MatMultTranspose() uses the SeqAIJ host kernel\n", sp->type->seq));
    sp->info_transpose = PETSC_TRUE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatMultTranspose_SeqSpMV(Mat A, Vec x, Vec y)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  PetscCall(InfoTranspose(A, sp));
  PetscCall(sp->baseops.multtranspose(A, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatMultTransposeAdd_SeqSpMV(Mat A, Vec x, Vec y, Vec z)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  PetscCall(InfoTranspose(A, sp));
  PetscCall(sp->baseops.multtransposeadd(A, x, y, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The CUDA families' transpose products: AIJCUSPARSE's, corrected for z != y
   (petsc_fixes::MultTransposeAdd()), and the Hermitian ones as the transpose ones (real scalars;
   cuSPARSE refuses the conjugate transpose of real matrices). */
PetscErrorCode MatMultTransposeAdd_SeqSpMVCUDA(Mat A, Vec x, Vec y, Vec z)
{
  PetscFunctionBegin;
  PetscCall(petsc_fixes::MultTransposeAdd(State(A)->baseops.multtransposeadd, A, x, y, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatMultHermitianTranspose_SeqSpMVCUDA(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(A->ops->multtranspose(A, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatMultHermitianTransposeAdd_SeqSpMVCUDA(Mat A, Vec x, Vec y, Vec z)
{
  PetscFunctionBegin;
  PetscCall(A->ops->multtransposeadd(A, x, y, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatEliminateZeros(): SeqAIJ's compacts the host arrays and, when it removed entries, assembles
   A (our MatAssemblyEnd builds the layout from the device CSR then):
   petsc_fixes::BeforeHostCompaction() first. */
PetscErrorCode MatEliminateZeros_SeqSpMVCUDA(Mat A, PetscBool keep)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  PetscCall(petsc_fixes::BeforeHostCompaction(A));
  PetscCall(sp->baseops.eliminatezeros(A, keep));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGetDiagonal_SeqSpMV(Mat A, Vec d)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  if (OnHostBase(A, sp)) {
    PetscCall(sp->baseops.getdiagonal(A, d));
  } else {
    PetscCall(SeqSync(A, PETSC_FALSE));
    PetscCall(sp->shadow->GetDiagonal(d));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatStoreValues() / MatRetrieveValues(): the base type's retrieve, corrected
   (petsc_fixes::AfterRetrieveValues()): the layout follows the values by the object state. */
PetscErrorCode MatRetrieveValues_SeqSpMV(Mat A)
{
  PetscFunctionBegin;
  PetscCall(State(A)->base_retrieve(A));
  PetscCall(petsc_fixes::AfterRetrieveValues(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCopy() from a matrix of ours: the base type's, corrected (petsc_fixes::AfterCopy()). (A copy
   into ours from another type takes PETSc's MatCopy_Basic(), our copy operation being another.) */
PetscErrorCode MatCopy_SeqSpMV(Mat A, Mat B, MatStructure str)
{
  const PetscBool fast = (PetscBool)(str == SAME_NONZERO_PATTERN && A->ops->copy == B->ops->copy);

  PetscFunctionBegin;
  PetscCall(State(A)->baseops.copy(A, B, str));
  PetscCall(petsc_fixes::AfterCopy(B, fast));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatView_SeqSpMV(Mat A, PetscViewer viewer)
{
  SeqState *sp = State(A);
  PetscBool info, has = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(ViewWantsFormatInfo(viewer, &info));
  if (info && A->assembled) {
    PetscCall(SeqHasLayout(A, &has));
    if (!has) PetscCall(ViewNoLayout(A, viewer, sp->type));
  }
  if (has) {
    FormatStats stats;
    PetscInt    scale[2];
    PetscInt64  device[2];
    PetscCall(SeqGetStats(A, &stats, &scale[0]));
    scale[1] = scale[0];
    PetscCall(SeqDeviceBytes(A, &device[0], &device[1]));
    PetscCall(ViewFormat(A, viewer, sp->type, sp->opts, stats, scale, device, sp->free_device_csr, "this matrix"));
  }
  PetscCall(ViewLossyNote(viewer, sp->opts));
  PetscCall(sp->baseops.view(A, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Local(Mat, PetscErrorCode ierr)
{
  return ierr;
}

PetscErrorCode SetFree(Mat A, PetscBool flg)
{
  PetscFunctionBegin;
  State(A)->free_device_csr = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

using Options = OptionOps<SeqState, SeqGetState, SeqSetOptions, SeqLayoutStats, Local, SetFree>;

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

template <int Cuda>
PetscErrorCode MatDestroy_SeqSpMV(Mat A);

/* The operations our seq types replace (ours) or the base type's (restore). */
void InstallOps(Mat A, const SeqState &sp, PetscBool ours)
{
  const struct _MatOps &base = sp.baseops;
  const bool            cuda = sp.type->cuda;

  A->ops->assemblyend = ours ? MatAssemblyEnd_SeqSpMV : base.assemblyend;
  A->ops->mult        = ours ? MatMult_SeqSpMV : base.mult;
  A->ops->multadd     = ours ? MatMultAdd_SeqSpMV : base.multadd;
  A->ops->getdiagonal = ours ? MatGetDiagonal_SeqSpMV : base.getdiagonal;
  if (!cuda) {
    A->ops->multtranspose    = ours ? MatMultTranspose_SeqSpMV : base.multtranspose;
    A->ops->multtransposeadd = ours ? MatMultTransposeAdd_SeqSpMV : base.multtransposeadd;
  }
  A->ops->view           = ours ? MatView_SeqSpMV : base.view;
  A->ops->setfromoptions = ours ? Options::SetFromOptions : base.setfromoptions;
  A->ops->destroy        = ours ? (cuda ? MatDestroy_SeqSpMV<1> : MatDestroy_SeqSpMV<0>) : base.destroy;
#if defined(PETSCSPMV_HAVE_CUDA)
  if (cuda) {
    A->ops->bindtocpu      = ours ? MatBindToCPU_SeqSpMV : base.bindtocpu;
    A->ops->copy           = ours && base.copy ? MatCopy_SeqSpMV : base.copy;
    A->ops->eliminatezeros = ours && base.eliminatezeros ? MatEliminateZeros_SeqSpMVCUDA : base.eliminatezeros;
    /* (bound to the CPU these are SeqAIJ's host kernels: kept) */
    A->ops->multtransposeadd          = ours && base.multtransposeadd && !A->boundtocpu ? MatMultTransposeAdd_SeqSpMVCUDA : base.multtransposeadd;
    A->ops->multhermitiantranspose    = ours && base.multtranspose && !A->boundtocpu ? MatMultHermitianTranspose_SeqSpMVCUDA : base.multhermitiantranspose;
    A->ops->multhermitiantransposeadd = ours && base.multtransposeadd && !A->boundtocpu ? MatMultHermitianTransposeAdd_SeqSpMVCUDA : base.multhermitiantransposeadd;
    A->ops->productsetfromoptions     = ours && base.productsetfromoptions ? MatProductSetFromOptions_SpMVCUDA : base.productsetfromoptions;
  }
#endif
  InstallSeqWrapped(A, base, ours);
}

/* The composed function that wraps the base type's (ours) or the base type's own. */
PetscErrorCode ComposeWrappers(Mat A, const SeqState &sp, PetscBool ours)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatRetrieveValues_C", ours ? MatRetrieveValues_SeqSpMV : sp.base_retrieve));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The base type's MatRetrieveValues_C, from a new matrix of the base type t->base_seq (no sizes,
   no data). */
PetscErrorCode BaseRetrieveOfType(const TypeInfo *t, PetscErrorCode (**fn)(Mat))
{
  Mat T;

  PetscFunctionBegin;
  PetscCall(MatCreate(PETSC_COMM_SELF, &T));
  PetscErrorCode ierr = MatSetType(T, t->base_seq);
  if (!ierr) ierr = PetscObjectQueryFunction((PetscObject)T, "MatRetrieveValues_C", fn);
  PetscCall(MatDestroy(&T));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The base type's operations and composed functions as they are now on A. A matrix that PETSc's
   duplicate made from one of ours (MatDuplicate(), MatConvert() to the same type) carries the
   source's composed functions (PetscFunctionListDuplicate()), our wrapper among them: the base
   type's retrieve is then taken from the base type itself (a wrapper calling itself would recurse
   until the stack overflows). */
PetscErrorCode SnapshotBase(Mat A, SeqState *sp)
{
  PetscFunctionBegin;
  sp->baseops = *A->ops;
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatRetrieveValues_C", &sp->base_retrieve));
  if (sp->base_retrieve == MatRetrieveValues_SeqSpMV) PetscCall(BaseRetrieveOfType(sp->type, &sp->base_retrieve));
  PetscCheck(sp->base_retrieve && sp->base_retrieve != MatRetrieveValues_SeqSpMV, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s without MatRetrieveValues_C", sp->type->base_seq);
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(PETSCSPMV_HAVE_CUDA)
/* MatBindToCPU(): AIJCUSPARSE switches its operations between its device and SeqAIJ's host code;
   ours are installed on top of whichever it chose (bound: the base type's products). During
   PETSc's hash assembly (MatSetUp() without preallocation) A's operations are the hash's; the
   hash ends at MatAssemblyEnd() (or a preallocation call), which puts back the ones A had at
   MatSetUp(): the switch waits for the next MatAssemblyEnd() (ApplyBindAfterHash()). */
PetscErrorCode MatBindToCPU_SeqSpMV(Mat A, PetscBool flg)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  if (A->hash_active) {
    private_fields::SetBoundToCPUFlag(A, flg);
    sp->bind_after_hash = PETSC_TRUE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  InstallOps(A, *sp, PETSC_FALSE);
  PetscCall(ComposeWrappers(A, *sp, PETSC_FALSE));
  const PetscErrorCode ierr = sp->baseops.bindtocpu(A, flg);
  PetscCall(SnapshotBase(A, sp));
  InstallOps(A, *sp, PETSC_TRUE);
  PetscCall(ComposeWrappers(A, *sp, PETSC_TRUE));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}
#else
PetscErrorCode MatBindToCPU_SeqSpMV(Mat, PetscBool)
{
  return PETSC_SUCCESS;
}
#endif

PetscErrorCode ComposeAll(Mat A, const TypeInfo *t, PetscBool on)
{
  PetscFunctionBegin;
  if (on) PetscCall(ComposeOptionFunctions(A, t, Options::Set, Options::GetOpt, GetStats_Seq, t->cuda ? SetFree : nullptr));
  else PetscCall(ComposeOptionFunctions(A, t, nullptr, nullptr, nullptr, nullptr));
  PetscCall(ComposeConverters(A, t, PETSC_FALSE, on));
#if defined(PETSCSPMV_HAVE_CUDA)
  if (t->cuda) PetscCall(ComposeProductFunctions(A, t, on));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Removes our state; destroying: only removals (MatHeaderMerge() destroys A after freeing its
   function list: a new entry would leak). */
PetscErrorCode Detach(Mat A, SeqState *sp, PetscBool destroying)
{
  const TypeInfo *t = sp->type;

  PetscFunctionBegin;
  if (sp->shadow) PetscCall(sp->shadow->Release());
  InstallOps(A, *sp, PETSC_FALSE);
  if (!destroying) PetscCall(ComposeWrappers(A, *sp, PETSC_FALSE));
  else PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatRetrieveValues_C", nullptr));
  PetscCall(ComposeAll(A, t, PETSC_FALSE));
  PetscCall(PetscObjectCompose((PetscObject)A, kStateKey, nullptr)); /* deletes sp */
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <int Cuda>
PetscErrorCode MatDestroy_SeqSpMV(Mat A)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  if (!sp) { /* inside MatHeaderMerge(): the layout stays with the state, its stamp with the old data */
    PetscErrorCode (*destroy)(Mat);
    PetscCall(petsc_fixes::BaseDestroyInHeaderMerge(Cuda ? MATSEQAIJCUSPARSE : MATSEQAIJ, &destroy));
    PetscCall((*destroy)(A));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscErrorCode (*destroy)(Mat) = sp->baseops.destroy;
  PetscCall(Detach(A, sp, PETSC_TRUE));
  PetscCall((*destroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Makes B, a matrix of t's base type, one of family t (B unchanged on error). */
PetscErrorCode Adopt(Mat B, const TypeInfo *t, const FormatOptions &opts, PetscBool block)
{
  SeqState *sp = nullptr;
  PetscBool isbase;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)B, t->base_seq, &isbase));
  PetscCheck(isbase, PETSC_COMM_SELF, PETSC_ERR_SUP, "cannot convert a %s matrix to %s in place: only %s is", ((PetscObject)B)->type_name, t->seq, t->base_seq);
  PetscCheck(!SeqGetState(B), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s matrix that is already of a petscspmv type", t->base_seq);
  /* B flagged bound to the CPU: the base's bind runs again before ours go on top (after the hash
     assembly, when one is under way). B's operations may be the unbound ones: PETSc binds an MPI
     matrix's blocks during its hash assembly, each block's hash then puts back the operations of
     MatSetUp()'s time, and MatBindToCPU() of a block already flagged returns at once. */
  const PetscBool rebind = (PetscBool)(t->cuda && B->boundtocpu);
  if (rebind && !B->hash_active && B->ops->bindtocpu) PetscCall((*B->ops->bindtocpu)(B, PETSC_TRUE));
  PetscCallCXX(sp = new SeqState);
  sp->type            = t;
  sp->opts            = opts;
  sp->block           = block;
  sp->bind_after_hash = (PetscBool)(rebind && B->hash_active);
  {
    PetscErrorCode ierr = SnapshotBase(B, sp);
    if (!ierr && t->cuda) ierr = ReadFreeDeviceCsr(B, nullptr, &sp->free_device_csr);
    if (ierr) delete sp;
    PetscCall(ierr);
  }
  PetscCall(PetscObjectContainerCompose((PetscObject)B, kStateKey, sp, DeleteComposed<SeqState>));
  InstallOps(B, *sp, PETSC_TRUE);
  PetscCall(ComposeWrappers(B, *sp, PETSC_TRUE));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, t->seq));
  PetscCall(ComposeAll(B, t, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

SeqState *SeqGetState(Mat A)
{
  return ComposedState<SeqState>(A, kStateKey);
}

PetscErrorCode SeqSync(Mat A, PetscBool force)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  if (!force && sp->shadow && StampOf(A) == sp->synced) PetscFunctionReturn(PETSC_SUCCESS);
  /* bound to the CPU, a CUDA matrix runs the base type's host kernels (its device CSR cannot be
     read): the layout follows at its first use on the GPU */
  if (OnHostBase(A, sp)) PetscFunctionReturn(PETSC_SUCCESS);
  if (sp->shadow && A->nonzerostate == sp->synced.nzstate && A->data == sp->synced.data) {
    PetscBool pattern_changed;

    PetscCall(PetscLogEventBegin(EventValues, A, 0, 0, 0));
    const PetscErrorCode ierr = sp->shadow->UpdateValues(SourceOf(A, sp), &pattern_changed);
    PetscCall(PetscLogEventEnd(EventValues, A, 0, 0, 0));
    PetscCall(ierr);
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

PetscErrorCode SeqCheckValues(Mat A)
{
  SeqState *sp = State(A);

  PetscFunctionBegin;
  if (!sp || sp->block || !A->assembled || !sp->opts.Lossy() || OnHostBase(A, sp)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SeqSync(A, PETSC_TRUE));
  /* the interface that called the operation increases A's state once it returns */
  sp->synced.state++;
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
  } else PetscCall(Invalidate(sp)); /* the next final assembly or use builds with the new options */
  sp->opts = o;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SeqGetStats(Mat A, FormatStats *s, PetscInt *scale_exponent)
{
  PetscBool has;

  PetscFunctionBegin;
  PetscCheck(A->assembled, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "the layout of a %s matrix exists once the matrix is assembled", ((PetscObject)A)->type_name);
  PetscCall(SeqHasLayout(A, &has));
  PetscCheck(has, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "the %s matrix is bound to the CPU and its layout not built yet (it is built at the first use on the GPU, after MatBindToCPU(A, PETSC_FALSE))", ((PetscObject)A)->type_name);
  *s = State(A)->shadow->Stats();
  if (scale_exponent) *scale_exponent = State(A)->shadow->ScaleExponent();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SeqHasLayout(Mat A, PetscBool *has)
{
  PetscFunctionBegin;
  PetscCall(SeqSync(A, PETSC_FALSE));
  *has = State(A)->shadow ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SeqLayoutStats(Mat A, FormatStats *s)
{
  PetscFunctionBegin;
  PetscCall(SeqGetStats(A, s, nullptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SeqDeviceBytes(Mat A, PetscInt64 *layout, PetscInt64 *csr)
{
  SeqState *sp = State(A);
  MatInfo   info;

  PetscFunctionBegin;
  *layout = *csr = 0;
  if (!sp->type->cuda) PetscFunctionReturn(PETSC_SUCCESS);
  if (sp->shadow) *layout = sp->shadow->DeviceBytes();
  /* AIJCUSPARSE's CSR: 32-bit row offsets and columns, FP64 values, when its device copy is
     current or our builds keep it (an ordered layout is built from the host CSR) */
  if (A->offloadmask == PETSC_OFFLOAD_GPU || A->offloadmask == PETSC_OFFLOAD_BOTH || (sp->shadow && !sp->free_device_csr && sp->shadow->Stats().ordered_rows == 0)) {
    PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
    *csr = 4 * (PetscInt64)(A->rmap->n + 1) + 12 * (PetscInt64)info.nz_used;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

namespace
{
/* MAT_REUSE_MATRIX: B's values := A's (A of B's pattern, PETSc's check: the same sizes and number
   of nonzeros), straight into B's arrays (device to device when both are on the GPU). MatCopy()
   would take MatCopy_Basic() between different copy operations (AIJ into our CUDA types), whose
   assembly with a value a lossy layout cannot hold fails in MatAssemblyEnd() and leaves B
   unassembled; here B stays assembled and the value check that follows refuses it. */
PetscErrorCode CopyValuesSamePattern(Mat A, Mat B)
{
  MatInfo ia, ib;

  PetscFunctionBegin;
  PetscCall(MatGetInfo(A, MAT_LOCAL, &ia));
  PetscCall(MatGetInfo(B, MAT_LOCAL, &ib));
  PetscCheck(A->rmap->n == B->rmap->n && A->cmap->n == B->cmap->n && ia.nz_used == ib.nz_used, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "MAT_REUSE_MATRIX: the target (%" PetscInt_FMT " x %" PetscInt_FMT ", %.0f nonzeros) does not have the source's pattern (%" PetscInt_FMT " x %" PetscInt_FMT ", %.0f nonzeros)",
             B->rmap->n, B->cmap->n, (double)ib.nz_used, A->rmap->n, A->cmap->n, (double)ia.nz_used);
  const PetscInt nz = (PetscInt)ia.nz_used;
#if defined(PETSCSPMV_HAVE_CUDA)
  PetscBool adev, bdev;
  PetscCall(AIJCusparseOnDevice(A, &adev));
  PetscCall(AIJCusparseOnDevice(B, &bdev));
  if (adev && bdev && A->offloadmask != PETSC_OFFLOAD_CPU) {
    PetscCall(CopyAIJCusparseValues(A, B, nz));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  const PetscScalar *a;
  PetscScalar       *b;
  PetscCall(MatSeqAIJGetArrayRead(A, &a));
  PetscCall(MatSeqAIJGetArrayWrite(B, &b)); /* an AIJCUSPARSE-based B: host marked newer */
  PetscCall(PetscArraycpy(b, a, nz));
  PetscCall(MatSeqAIJRestoreArrayWrite(B, &b));
  PetscCall(MatSeqAIJRestoreArrayRead(A, &a));
  PetscCall(PetscObjectStateIncrease((PetscObject)B));
  PetscFunctionReturn(PETSC_SUCCESS);
}
} // namespace

PetscErrorCode SeqConvertFromBase(Mat A, const TypeInfo *t, const FormatOptions *opts, MatReuse reuse, Mat *newmat, PetscBool build)
{
  FormatOptions o(t->format);
  Mat           B;
  PetscBool     lazy = PETSC_FALSE, fromaij = PETSC_FALSE;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    /* *newmat came from the same pattern: copy the values, the layout follows them */
    PetscCheck(SeqGetState(*newmat), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "MAT_REUSE_MATRIX: the target is a %s matrix, not %s", ((PetscObject)*newmat)->type_name, t->seq);
    PetscCall(CopyValuesSamePattern(A, *newmat));
    PetscCall(SeqCheckValues(*newmat)); /* a lossy layout: a value out of range is an error here */
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(BeginConversion(A, t, PETSC_FALSE, opts, reuse, newmat, &o, &B, &fromaij));
  PetscCall(Adopt(B, t, o, PETSC_FALSE));
  if (B->assembled) PetscCall(BuildsLazily(B, &lazy));
  /* a layout that cannot be built (a value overflows the value format, ...): B is left as it was */
  if (B->assembled && !lazy && build) PetscCall(UndoConversion(B, PETSC_FALSE, reuse, newmat, fromaij, SeqStrip, SeqSync(B, PETSC_FALSE)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SeqSetUpBlock(Mat B, const TypeInfo *t, const FormatOptions &o, const GlobalIndices &g)
{
  SeqState *sp      = SeqGetState(B);
  PetscBool dropped = PETSC_FALSE;

  PetscFunctionBegin;
  if (sp) PetscCall(petsc_fixes::HashAssemblyDroppedOurOps(B, MatAssemblyEnd_SeqSpMV, MatMult_SeqSpMV, &dropped));
  if (!sp) {
    PetscBool aij = PETSC_FALSE;
    /* PETSc builds some MPIAIJCUSPARSE results from MATSEQAIJ blocks (MatCreateSubMatrix) */
    if (t->cuda) PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQAIJ, &aij));
    if (aij) PetscCall(MatConvert(B, t->base_seq, MAT_INPLACE_MATRIX, &B));
    PetscCall(Adopt(B, t, o, PETSC_TRUE));
    sp = SeqGetState(B);
  } else if (dropped) {
    /* the hash assembly put back the base type's operations (petsc_fixes::HashAssemblyDroppedOurOps()):
       they are the base's again, ours go on top */
    sp->baseops = *B->ops;
    InstallOps(B, *sp, PETSC_TRUE);
    PetscCall(ApplyBindAfterHash(B, sp));
  }
  sp->block  = PETSC_TRUE;
  sp->global = g;
  PetscCall(SeqSetOptions(B, o));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SeqStrip(Mat A)
{
  SeqState       *sp = State(A);
  const TypeInfo *t  = sp->type;

  PetscFunctionBegin;
  PetscCall(Detach(A, sp, PETSC_FALSE));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, t->base_seq));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
