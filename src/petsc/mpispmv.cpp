// The MPI types: the family's MPI base type (MATMPIAIJ, or MATMPIAIJCUSPARSE for the CUDA
// families) whose diagonal block A and off-diagonal block B are seq matrices of the same family.
// The base type's MatMult then overlaps the halo scatter with A x; the blocks are adopted after
// every (re)creation by the base type (preallocation, COO, assembly) and built by this layer,
// collectively, once the base type's assembly is done.
#include "spmvimpl.hpp"
#include "petsc_fixes/petsc_fixes.hpp"

#include <functional>
#include <string>

namespace pspmv
{
namespace glue
{

namespace
{

const char kStateKey[] = "PetscSpMVMPIState";

MPIState *State(Mat A)
{
  return MPIGetState(A);
}

/* ierr of this rank, an error on every rank of A when some rank has one (CollectiveError()):
   "building the <format> layouts of this <type> matrix[ detail]". */
PetscErrorCode Collective(Mat A, PetscErrorCode ierr, const char *detail = "")
{
  char what[160];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(what, sizeof(what), "building the %s layouts of this %s matrix%s", FormatTitle(State(A)->type->format), State(A)->type->mpi, detail));
  PetscCall(CollectiveError(PetscObjectComm((PetscObject)A), what, ierr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A block of ours (NULL: none, or a block not adopted yet). */
SeqState *Ours(Mat blk)
{
  return SeqGetState(blk);
}

/* Makes both blocks seq matrices of A's family with A's options and their global numbering
   (range errors name global rows and columns: the off-diagonal block's columns are global until
   the base type compresses them at assembly, then garray maps them back); builds nothing. */
PetscErrorCode SetUpBlocks(Mat A)
{
  MPIState       *mp = State(A);
  Mat             blocks[2];
  const PetscInt *garray = nullptr;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &blocks[0], &blocks[1], &garray));
  for (int k = 0; k < 2; k++) {
    GlobalIndices g;
    if (!blocks[k]) continue;
    g.row0         = A->rmap->rstart;
    g.col0         = k == 0 ? A->cmap->rstart : 0;
    g.cols         = k == 1 ? garray : nullptr;
    g.off_diagonal = k == 1;
    PetscCall(SeqSetUpBlock(blocks[k], mp->type, mp->opts, g));
    SeqGetState(blocks[k])->free_device_csr = mp->free_device_csr;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatMPIAIJSetPreallocation_MPISpMV(Mat A, PetscInt d_nz, const PetscInt d_nnz[], PetscInt o_nz, const PetscInt o_nnz[])
{
  PetscFunctionBegin;
  PetscCall(State(A)->preallocate(A, d_nz, d_nnz, o_nz, o_nnz)); /* creates blocks of the base type */
  PetscCall(SetUpBlocks(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatSetPreallocationCOO_MPISpMV(Mat A, PetscCount n, PetscInt i[], PetscInt j[])
{
  PetscFunctionBegin;
  PetscCall(State(A)->preallocate_coo(A, n, i, j)); /* blocks of the root type of A */
  PetscCall(SetUpBlocks(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatAssemblyEnd_MPISpMV(Mat A, MatAssemblyType mode)
{
  MPIState *mp = State(A);

  PetscFunctionBegin;
  /* the blocks (an off-diagonal block MatSetValues() recreated included) are marked as blocks:
     they do not build in their own assemblies. A block the base type recreates inside (when
     another rank disassembled) comes out of the base type's name, plain; adopted below. */
  BaseNames bn;
  PetscCall(SetUpBlocks(A));
  PetscCall(PresentAsBase(A, &bn));
  const PetscErrorCode ierr = mp->baseops.assemblyend(A, mode);
  PetscCall(RestoreTypeNames(A, bn));
  PetscCall(ierr);
  if (mode == MAT_FLUSH_ASSEMBLY) PetscFunctionReturn(PETSC_SUCCESS);
  /* a product result's first assembly (the symbolic phase) holds placeholder values: the blocks
     build at the numeric phase's assembly or at their first use */
  {
    const PetscBool build  = (PetscBool)(!mp->placeholder_values && !mp->defer_value_check); /* deferred: MPICheckValues() at the operation's end */
    mp->placeholder_values = PETSC_FALSE;
    PetscCall(Collective(A, SetUpBlocks(A)));
    if (build) PetscCall(MPISyncBlocks(A, PETSC_TRUE));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Stale blocks are brought up to date before the base type's product starts its halo scatter: an
   error then (a lossy value that changed without an operation that checks it) leaves no message
   in flight, and the matrix usable once the value is repaired. After a refused value check
   (MatScale(), MatShift(), an assembly, ...: every rank knows) the sync is collective, so that the
   product is refused on every rank until the values are repaired; otherwise it is local (a
   value written into a block's arrays directly fails on its rank only). */
PetscErrorCode SyncBlocksForProduct(Mat A)
{
  PetscFunctionBegin;
  if (State(A)->values_refused) {
    PetscCall(MPISyncBlocks(A, PETSC_FALSE));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(ForEachSeqPart(A, [](Mat blk) {
    SeqState *sp = Ours(blk);
    return sp && !(sp->type->cuda && blk->boundtocpu) ? SeqSync(blk, PETSC_FALSE) : PETSC_SUCCESS;
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatMult_MPISpMV(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(WarnLossyOperator(A, State(A)->opts, &State(A)->warned_lossy));
  PetscCall(SyncBlocksForProduct(A));
  PetscCall(State(A)->baseops.mult(A, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The diagonal comes from the diagonal block's layout; after a refused value check every rank
   refuses it, as the products. */
PetscErrorCode MatGetDiagonal_MPISpMV(Mat A, Vec d)
{
  PetscFunctionBegin;
  PetscCall(SyncBlocksForProduct(A));
  PetscCall(State(A)->baseops.getdiagonal(A, d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(PETSCSPMV_HAVE_CUDA)
/* MatEliminateZeros(): MPIAIJ's compacts each block with SeqAIJ's code directly (not through the
   blocks' operations) and assembles a block that lost entries: the blocks are prepared as the seq
   operation prepares a matrix, on every rank. */
PetscErrorCode MatEliminateZeros_MPISpMVCUDA(Mat A, PetscBool keep)
{
  PetscFunctionBegin;
  PetscCall(ForEachSeqPart(A, petsc_fixes::BeforeHostCompaction));
  PetscCall(State(A)->baseops.eliminatezeros(A, keep));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

PetscErrorCode MatMultAdd_MPISpMV(Mat A, Vec x, Vec y, Vec z)
{
  PetscFunctionBegin;
  PetscCall(WarnLossyOperator(A, State(A)->opts, &State(A)->warned_lossy));
  PetscCall(SyncBlocksForProduct(A));
  PetscCall(State(A)->baseops.multadd(A, x, y, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Statistics of this rank's blocks; scale[0..1]: smallest and largest scale exponent of the
   blocks that hold nonzeros (PETSC_INT_MAX, PETSC_INT_MIN when none does): each block chooses its
   own; device[0..1]: device bytes of the layouts and of AIJCUSPARSE's CSR copies. */
PetscErrorCode LocalStats(Mat A, FormatStats *sum, PetscInt scale[2], PetscInt64 device[2])
{
  PetscFunctionBegin;
  PetscCheck(A->assembled, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "the layouts of a %s matrix exist once the matrix is assembled", ((PetscObject)A)->type_name);
  *sum      = FormatStats();
  scale[0]  = PETSC_MAX_INT;
  scale[1]  = PETSC_MIN_INT;
  device[0] = device[1] = 0;
  PetscCall(ForEachSeqPart(A, [&](Mat blk) {
    FormatStats s;
    PetscInt    e;
    PetscInt64  d[2];

    PetscFunctionBegin;
    PetscCall(SeqGetStats(blk, &s, &e));
    PetscCall(SeqDeviceBytes(blk, &d[0], &d[1]));
    device[0] += d[0];
    device[1] += d[1];
    AddStats(sum, s);
    if (s.nnz) {
      scale[0] = PetscMin(scale[0], e);
      scale[1] = PetscMax(scale[1], e);
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }));
  sum->rows = A->rmap->n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether every block of this rank has a layout (SeqHasLayout()). */
PetscErrorCode LocalHasLayouts(Mat A, PetscBool *has)
{
  PetscFunctionBegin;
  *has = PETSC_TRUE;
  PetscCall(ForEachSeqPart(A, [&](Mat blk) {
    PetscBool b;

    PetscFunctionBegin;
    PetscCall(SeqHasLayout(blk, &b));
    if (!b) *has = PETSC_FALSE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatView_MPISpMV(Mat A, PetscViewer viewer)
{
  MPIState *mp = State(A);
  PetscBool info, mine = PETSC_FALSE, has = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(ViewWantsFormatInfo(viewer, &info));
  if (info && A->assembled) {
    /* a lazy layout update inside may fail on one rank only: all ranks raise it, none waits */
    PetscCall(Collective(A, LocalHasLayouts(A, &mine)));
    {
      int m = mine ? 1 : 0, all = 0; /* (MPIU_BOOL is deprecated from PETSc 3.24 on) */
      PetscCallMPI(MPIU_Allreduce(&m, &all, 1, MPI_INT, MPI_LAND, PetscObjectComm((PetscObject)A)));
      has = all ? PETSC_TRUE : PETSC_FALSE;
    }
    if (!has) PetscCall(ViewNoLayout(A, viewer, mp->type));
  }
  if (has) {
    FormatStats local, global;
    PetscInt64  sums[11], tot[11], device[2];
    PetscInt    ints[4], maxints[4], scale[2];

    /* a lazy layout update inside may fail on one rank only: all ranks raise it, none waits */
    PetscCall(Collective(A, LocalStats(A, &local, scale, device)));
    sums[0]  = local.nnz;
    sums[1]  = local.stored_slots;
    sums[2]  = local.padding_slots;
    sums[3]  = local.dummy_words;
    sums[4]  = local.tail_nnz;
    sums[5]  = local.stored_bytes;
    sums[6]  = local.cols;
    sums[7]  = device[0];
    sums[8]  = device[1];
    sums[9]  = local.gap_entries;
    sums[10] = local.ordered_rows;
    PetscCallMPI(MPIU_Allreduce(sums, tot, 11, MPIU_INT64, MPI_SUM, PetscObjectComm((PetscObject)A)));
    ints[0] = local.hybrid_width;
    ints[1] = local.sigma;
    ints[2] = -scale[0]; /* max of -lo: the smallest exponent */
    ints[3] = scale[1];
    PetscCallMPI(MPIU_Allreduce(ints, maxints, 4, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)A)));
    global.rows          = A->rmap->N;
    global.cols          = A->cmap->N;
    global.nnz           = tot[0];
    global.stored_slots  = tot[1];
    global.padding_slots = tot[2];
    global.dummy_words   = tot[3];
    global.gap_entries   = tot[9];
    global.ordered_rows  = tot[10];
    global.tail_nnz      = tot[4];
    global.stored_bytes  = tot[5];
    global.hybrid_width  = maxints[0];
    global.sigma         = maxints[1]; /* largest over the blocks, like the width */
    scale[0]             = -maxints[2];
    scale[1]             = maxints[3];
    device[0]            = tot[7];
    device[1]            = tot[8];
    PetscCall(ViewFormat(A, viewer, mp->type, mp->opts, global, scale, device, mp->free_device_csr, "all ranks, diagonal and off-diagonal blocks"));
  }
  PetscCall(ViewLossyNote(viewer, mp->opts));
  PetscCall(mp->baseops.view(A, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Setters and MatSetFromOptions() are logically collective: every rank must ask for the same
   option set (a rank that sees no change would otherwise skip the collective rebuild). */
PetscErrorCode CheckSameOnAllRanks(Mat A, const FormatOptions &o)
{
  MPIState     *mp = State(A);
  std::string   mine;
  unsigned long h[2], r[2];

  PetscFunctionBegin;
  PetscCallCXX(mine = o.Describe());
  h[0] = (unsigned long)std::hash<std::string>{}(mine);
  h[1] = ~h[0];
  PetscCallMPI(MPIU_Allreduce(h, r, 2, MPI_UNSIGNED_LONG, MPI_MAX, PetscObjectComm((PetscObject)A)));
  PetscCheck(r[0] == h[0] && r[1] == h[1], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "the ranks of this %s matrix were given different %s options (this rank: %s); format options are logically collective: give every rank the same value", mp->type->mpi,
             FormatTitle(mp->type->format), mine.c_str());
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MPISetOptions(Mat A, const FormatOptions &o)
{
  MPIState     *mp  = State(A);
  FormatOptions old = mp->opts;

  PetscFunctionBegin;
  PetscCall(CheckSameOnAllRanks(A, o));
  if (o == old) PetscFunctionReturn(PETSC_SUCCESS);
  {
    const PetscErrorCode ierr = ForEachSeqPart(A, [&](Mat blk) { return Ours(blk) ? SeqSetOptions(blk, o) : PETSC_SUCCESS; });
    const PetscErrorCode cerr = Collective(A, ierr, " with these options");
    /* all or nothing, on every rank: blocks rebuilt with the new options get the old ones back */
    if (cerr) PetscCall(ForEachSeqPart(A, [&](Mat blk) { return Ours(blk) ? SeqSetOptions(blk, old) : PETSC_SUCCESS; }));
    PetscCall(cerr);
  }
  mp->opts = o;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The statistics of this rank's diagonal block's layout. Each block resolves the options the
   builder chooses (PackSELL's PETSC_DECIDE sigma) on its own; the getter reports the diagonal
   block, the one that holds most of the work. */
PetscErrorCode MPILayoutStats(Mat A, FormatStats *s)
{
  Mat blocks[2];

  PetscFunctionBegin;
  PetscCall(SeqParts(A, blocks));
  PetscCall(SeqLayoutStats(blocks[0], s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A setter's value refused on some ranks (optimized PETSc builds do not check that setters are
   logically collective): an error on every rank, not a hang in MPISetOptions' check. */
PetscErrorCode AgreeOnOption(Mat A, PetscErrorCode ierr)
{
  char what[128];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(what, sizeof(what), "setting the %s option (setters are collective: give every rank the same value)", FormatTitle(State(A)->type->format)));
  PetscCall(CollectiveError(PetscObjectComm((PetscObject)A), what, ierr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SetFree(Mat A, PetscBool flg)
{
  PetscFunctionBegin;
  State(A)->free_device_csr = flg;
  PetscCall(ForEachSeqPart(A, [flg](Mat blk) {
    if (SeqState *sp = Ours(blk)) sp->free_device_csr = flg;
    return PETSC_SUCCESS;
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

using Options = OptionOps<MPIState, MPIGetState, MPISetOptions, MPILayoutStats, AgreeOnOption, SetFree>;

PetscErrorCode GetStats_MPI(Mat A, MatSpMVStats *out)
{
  FormatStats s;
  PetscInt    scale[2];
  PetscInt64  device[2];

  PetscFunctionBegin;
  PetscCall(LocalStats(A, &s, scale, device));
  ToPublicStats(s, scale, out);
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <int Cuda>
PetscErrorCode MatDestroy_MPISpMV(Mat A);

void InstallOps(Mat A, const MPIState &mp, PetscBool ours)
{
  const struct _MatOps &base = mp.baseops;

  A->ops->assemblyend    = ours ? MatAssemblyEnd_MPISpMV : base.assemblyend;
  A->ops->mult           = ours ? MatMult_MPISpMV : base.mult;
  A->ops->multadd        = ours ? MatMultAdd_MPISpMV : base.multadd;
  A->ops->getdiagonal    = ours && base.getdiagonal ? MatGetDiagonal_MPISpMV : base.getdiagonal;
  A->ops->view           = ours ? MatView_MPISpMV : base.view;
  A->ops->setfromoptions = ours ? Options::SetFromOptions : base.setfromoptions;
  A->ops->destroy        = ours ? (mp.type->cuda ? MatDestroy_MPISpMV<1> : MatDestroy_MPISpMV<0>) : base.destroy;
#if defined(PETSCSPMV_HAVE_CUDA)
  if (mp.type->cuda) {
    A->ops->productsetfromoptions = ours && base.productsetfromoptions ? MatProductSetFromOptions_SpMVCUDA : base.productsetfromoptions;
    A->ops->eliminatezeros        = ours && base.eliminatezeros ? MatEliminateZeros_MPISpMVCUDA : base.eliminatezeros;
  }
#endif
  InstallMPIWrapped(A, base, ours);
}

PetscErrorCode ComposeAll(Mat A, const MPIState &mp, PetscBool on)
{
  const TypeInfo *t = mp.type;

  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMPIAIJSetPreallocation_C", on ? MatMPIAIJSetPreallocation_MPISpMV : mp.preallocate));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", on ? MatSetPreallocationCOO_MPISpMV : mp.preallocate_coo));
  if (on) PetscCall(ComposeOptionFunctions(A, t, Options::Set, Options::GetOpt, GetStats_MPI, t->cuda ? SetFree : nullptr));
  else PetscCall(ComposeOptionFunctions(A, t, nullptr, nullptr, nullptr, nullptr));
  PetscCall(ComposeConverters(A, t, PETSC_TRUE, on));
#if defined(PETSCSPMV_HAVE_CUDA)
  if (t->cuda) PetscCall(ComposeProductFunctions(A, t, on));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <int Cuda>
PetscErrorCode MatDestroy_MPISpMV(Mat A)
{
  MPIState *mp = State(A);

  PetscFunctionBegin;
  if (!mp) { /* inside MatHeaderMerge(): the state comes back to A with the new data */
    PetscErrorCode (*destroy)(Mat);
    PetscCall(petsc_fixes::BaseDestroyInHeaderMerge(Cuda ? MATMPIAIJCUSPARSE : MATMPIAIJ, &destroy));
    PetscCall((*destroy)(A));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscErrorCode (*destroy)(Mat) = mp->baseops.destroy;
  /* the blocks are destroyed by the base type (they free their own layouts). Only removals here:
     MatHeaderMerge() calls this after freeing A's function list, a new entry would leak. */
  InstallOps(A, *mp, PETSC_FALSE);
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMPIAIJSetPreallocation_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", nullptr));
  PetscCall(ComposeOptionFunctions(A, mp->type, nullptr, nullptr, nullptr, nullptr));
  PetscCall(ComposeConverters(A, mp->type, PETSC_TRUE, PETSC_FALSE));
#if defined(PETSCSPMV_HAVE_CUDA)
  if (mp->type->cuda) PetscCall(ComposeProductFunctions(A, mp->type, PETSC_FALSE));
#endif
  PetscCall(PetscObjectCompose((PetscObject)A, kStateKey, nullptr)); /* deletes mp */
  PetscCall((*destroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Makes B, a matrix of t's MPI base type, one of family t (its blocks are set up by the caller). */
PetscErrorCode Adopt(Mat B, const TypeInfo *t, const FormatOptions &opts)
{
  MPIState *mp = nullptr;
  PetscBool isbase;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)B, t->base_mpi, &isbase));
  PetscCheck(isbase, PetscObjectComm((PetscObject)B), PETSC_ERR_SUP, "cannot convert a %s matrix to %s in place: only %s is", ((PetscObject)B)->type_name, t->mpi, t->base_mpi);
  PetscCheck(!MPIGetState(B), PetscObjectComm((PetscObject)B), PETSC_ERR_PLIB, "%s matrix that is already of a petscspmv type", t->base_mpi);
  PetscCallCXX(mp = new MPIState);
  mp->type               = t;
  mp->opts               = opts;
  mp->baseops            = *B->ops;
  mp->placeholder_values = (PetscBool)(B->product != nullptr);
  {
    PetscErrorCode ierr = PetscObjectQueryFunction((PetscObject)B, "MatMPIAIJSetPreallocation_C", &mp->preallocate);
    if (!ierr) ierr = PetscObjectQueryFunction((PetscObject)B, "MatSetPreallocationCOO_C", &mp->preallocate_coo);
    if (!ierr && !(mp->preallocate && mp->preallocate_coo)) ierr = PETSC_ERR_PLIB;
    if (ierr) delete mp;
    PetscCheck(!ierr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s without its preallocation functions", t->base_mpi);
  }
  if (t->cuda) {
    const PetscErrorCode ierr = ReadFreeDeviceCsr(B, nullptr, &mp->free_device_csr);
    if (ierr) delete mp;
    PetscCall(ierr);
  }
  PetscCall(PetscObjectContainerCompose((PetscObject)B, kStateKey, mp, DeleteComposed<MPIState>));
  InstallOps(B, *mp, PETSC_TRUE);
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, t->mpi));
  PetscCall(ComposeAll(B, *mp, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

MPIState *MPIGetState(Mat A)
{
  return ComposedState<MPIState>(A, kStateKey);
}

PetscErrorCode MPISyncBlocks(Mat A, PetscBool force)
{
  PetscFunctionBegin;
  const PetscErrorCode ierr = ForEachSeqPart(A, [force](Mat blk) { return Ours(blk) ? SeqSync(blk, force) : PETSC_SUCCESS; });
  const PetscErrorCode cerr = Collective(A, ierr); /* nonzero on every rank when one failed */
  State(A)->values_refused  = (PetscBool)(cerr != PETSC_SUCCESS);
  PetscCall(cerr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MPICheckValues(Mat A)
{
  MPIState *mp = State(A);

  PetscFunctionBegin;
  if (!mp || !A->assembled || !mp->opts.Lossy()) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MPISyncBlocks(A, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MPIConvertFromBase(Mat A, const TypeInfo *t, const FormatOptions *opts, MatReuse reuse, Mat *newmat, PetscBool build)
{
  FormatOptions  o(t->format);
  Mat            B;
  PetscBool      fromaij = PETSC_FALSE;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCheck(MPIGetState(*newmat), PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "MAT_REUSE_MATRIX: the target is a %s matrix, not %s", ((PetscObject)*newmat)->type_name, t->mpi);
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN)); /* block by block */
    PetscCall(MPICheckValues(*newmat));                   /* a lossy layout: checked on every rank */
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(BeginConversion(A, t, PETSC_TRUE, opts, reuse, newmat, &o, &B, &fromaij));
  PetscCall(Adopt(B, t, o));
  ierr = SetUpBlocks(B);
  if (!ierr && build && B->assembled && !State(B)->placeholder_values) ierr = ForEachSeqPart(B, [](Mat blk) { return SeqSync(blk, PETSC_FALSE); });
  /* a block that cannot be built (a value overflows the value format, ...), on any rank: B is left
     as it was on every rank */
  PetscCall(UndoConversion(B, PETSC_TRUE, reuse, newmat, fromaij, MPIStrip, Collective(B, ierr)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MPIAdoptBlocks(Mat A)
{
  PetscFunctionBegin;
  PetscCall(Collective(A, SetUpBlocks(A)));
  if (A->assembled) PetscCall(MPISyncBlocks(A, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MPIStrip(Mat A)
{
  MPIState   *mp   = State(A);
  const char *base = mp->type->base_mpi;

  PetscFunctionBegin;
  PetscCall(ForEachSeqPart(A, [](Mat blk) { return Ours(blk) ? SeqStrip(blk) : PETSC_SUCCESS; }));
  InstallOps(A, *mp, PETSC_FALSE);
  PetscCall(ComposeAll(A, *mp, PETSC_FALSE));
  PetscCall(PetscObjectCompose((PetscObject)A, kStateKey, nullptr)); /* deletes mp */
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, base));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode RootCreate(Mat A, const TypeInfo *t)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(MatSetType(A, size == 1 ? t->seq : t->mpi));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
