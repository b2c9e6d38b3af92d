// The MPI types: MATMPIAIJ whose diagonal block A and off-diagonal block B are seq matrices of
// the same family. MatMult_MPIAIJ then overlaps the halo scatter with A x for free; the blocks
// are converted after every (re)creation by MPIAIJ (preallocation, COO, assembly).
#include "spmvimpl.hpp"

#include <petscdevice.h>

namespace pspmv {
namespace glue {

namespace {

MPIState *State(Mat A) { return static_cast<MPIState *>(A->spptr); }

/* The blocks (NULL before preallocation). MatMPIAIJGetSeqAIJ() accepts only type names that
   start with "mpiaij", so it is called under that name. */
PetscErrorCode GetBlocks(Mat A, Mat *Ad, Mat *Ao)
{
  char          *name = nullptr;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(PetscStrallocpy(((PetscObject)A)->type_name, &name));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATMPIAIJ));
  ierr = MatMPIAIJGetSeqAIJ(A, Ad, Ao, nullptr);
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, name));
  PetscCall(PetscFree(name));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Errors of the layouts are data dependent (a value that overflows the value format lives on
   one rank): every rank returns an error when one rank has one, so a collective operation
   never leaves the ranks in different states. MaxError() agrees on the worst error code,
   RaiseError() returns this rank's error or a sentence pointing at the other rank's. */
PetscErrorCode MaxError(MPI_Comm comm, PetscErrorCode ierr, PetscErrorCode *maxcode)
{
  PetscMPIInt code = (PetscMPIInt)ierr, mx = 0;

  PetscFunctionBegin;
  PetscCallMPI(MPIU_Allreduce(&code, &mx, 1, MPI_INT, MPI_MAX, comm));
  *maxcode = (PetscErrorCode)mx;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode RaiseError(const TypeInfo *t, PetscErrorCode ierr, PetscErrorCode maxcode)
{
  PetscFunctionBegin;
  PetscCall(ierr);
  PetscCheck(!maxcode, PETSC_COMM_SELF, maxcode, "the %s layouts of this %s matrix could not be built on another rank (see the error reported there)", FormatTitle(t->format), t->mpi);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Collective(Mat A, PetscErrorCode ierr)
{
  PetscErrorCode maxcode;

  PetscFunctionBegin;
  PetscCall(MaxError(PetscObjectComm((PetscObject)A), ierr, &maxcode));
  PetscCall(RaiseError(State(A)->type, ierr, maxcode));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Makes both blocks seq matrices of A's family with A's options; with `assembled` also brings
   their layouts up to date (values may have changed through MatSetValues()). */
PetscErrorCode SetUpBlocks(Mat A, PetscBool assembled)
{
  MPIState *mp = State(A);
  Mat       blocks[2];

  PetscFunctionBegin;
  PetscCall(GetBlocks(A, &blocks[0], &blocks[1]));
  for (Mat blk : blocks) {
    if (!blk) continue;
    if (SeqGetState(blk)) {
      PetscCall(SeqSetOptions(blk, mp->opts));
      if (assembled) PetscCall(SeqSync(blk, PETSC_TRUE));
    } else {
      PetscCall(SeqConvertFromAIJ(blk, mp->type, &mp->opts, MAT_INPLACE_MATRIX, &blk));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatMPIAIJSetPreallocation_MPISpMV(Mat A, PetscInt d_nz, const PetscInt d_nnz[], PetscInt o_nz, const PetscInt o_nnz[])
{
  PetscFunctionBegin;
  PetscCall(State(A)->preallocate(A, d_nz, d_nnz, o_nz, o_nnz)); /* creates MATSEQAIJ blocks */
  PetscCall(SetUpBlocks(A, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatSetPreallocationCOO_MPISpMV(Mat A, PetscCount n, PetscInt i[], PetscInt j[])
{
  PetscFunctionBegin;
  PetscCall(State(A)->preallocate_coo(A, n, i, j)); /* blocks converted to the root type of A */
  PetscCall(SetUpBlocks(A, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatAssemblyEnd_MPISpMV(Mat A, MatAssemblyType mode)
{
  MPIState      *mp = State(A);
  PetscErrorCode ierr;

  PetscFunctionBegin;
  /* the blocks are assembled (and B possibly recreated with default options) inside: they
     build their layouts once, below, with A's options */
  DeferBlockBuild++;
  ierr = mp->aijops.assemblyend(A, mode);
  DeferBlockBuild--;
  PetscCall(ierr);
  if (mode == MAT_FINAL_ASSEMBLY) PetscCall(Collective(A, SetUpBlocks(A, PETSC_TRUE)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCreateGraph_MPISpMV(Mat A, PetscBool sym, PetscBool scale, PetscReal filter, PetscInt index_size, PetscInt index[], Mat *graph)
{
  PetscFunctionBegin;
  PetscCall(UnderAIJName(A, MATMPIAIJ, State(A)->aijops.creategraph, sym, scale, filter, index_size, index, graph));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool IsMPI(Mat A);

PetscErrorCode MatDuplicate_MPISpMV(Mat A, MatDuplicateOption op, Mat *B)
{
  PetscFunctionBegin;
  PetscCall(State(A)->aijops.duplicate(A, op, B)); /* blocks duplicated by their own type */
  if (IsMPI(*B)) State(*B)->opts = State(A)->opts; /* plain AIJ when A runs under its AIJ name */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode LocalStats(Mat A, FormatStats *sum, PetscInt *scale)
{
  Mat blocks[2];

  PetscFunctionBegin;
  PetscCheck(A->assembled, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "the layouts of a %s matrix exist once the matrix is assembled", ((PetscObject)A)->type_name);
  *sum   = FormatStats();
  *scale = 0;
  PetscCall(GetBlocks(A, &blocks[0], &blocks[1]));
  for (Mat blk : blocks) {
    FormatStats s;
    PetscInt    e;
    if (!blk) continue;
    PetscCall(SeqGetStats(blk, &s, &e));
    AddStats(sum, s);
    *scale = PetscMin(*scale, e);
  }
  sum->rows = A->rmap->n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatView_MPISpMV(Mat A, PetscViewer viewer)
{
  MPIState *mp = State(A);
  PetscBool info;

  PetscFunctionBegin;
  PetscCall(ViewWantsFormatInfo(viewer, &info));
  if (info && A->assembled) {
    FormatStats local, global;
    PetscInt64  sums[7], tot[7];
    PetscInt    ints[2], maxints[2], scale, minscale;

    /* a lazy layout update inside may fail on one rank only: all ranks raise it, none waits */
    PetscCall(Collective(A, LocalStats(A, &local, &scale)));
    PetscCallMPI(MPIU_Allreduce(&scale, &minscale, 1, MPIU_INT, MPI_MIN, PetscObjectComm((PetscObject)A)));
    sums[0] = local.nnz;
    sums[1] = local.stored_slots;
    sums[2] = local.padding_slots;
    sums[3] = local.dummy_words;
    sums[4] = local.tail_nnz;
    sums[5] = local.stored_bytes;
    sums[6] = local.cols;
    PetscCallMPI(MPIU_Allreduce(sums, tot, 7, MPIU_INT64, MPI_SUM, PetscObjectComm((PetscObject)A)));
    ints[0] = local.hybrid_width;
    ints[1] = local.sigma;
    PetscCallMPI(MPIU_Allreduce(ints, maxints, 2, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)A)));
    global.rows          = A->rmap->N;
    global.cols          = A->cmap->N;
    global.nnz           = tot[0];
    global.stored_slots  = tot[1];
    global.padding_slots = tot[2];
    global.dummy_words   = tot[3];
    global.tail_nnz      = tot[4];
    global.stored_bytes  = tot[5];
    global.hybrid_width  = maxints[0];
    global.sigma         = maxints[1]; /* largest over the blocks, like the width */
    PetscCall(ViewFormat(A, viewer, mp->type, mp->opts, global, minscale, "all ranks, diagonal and off-diagonal blocks"));
  }
  /* Under the MPIAIJ name: AIJ's ASCII view gathers the rows into a matrix of A's type name and
     reads it with MatMPIAIJGetSeqAIJ, which refuses any other name. */
  PetscCall(UnderAIJName(A, MATMPIAIJ, mp->aijops.view, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MPISetOptions(Mat A, const FormatOptions &o)
{
  MPIState     *mp  = State(A);
  FormatOptions old = mp->opts;
  Mat           Ad, Ao;

  PetscFunctionBegin;
  if (o.Equals(mp->type->format, old)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GetBlocks(A, &Ad, &Ao));
  {
    PetscErrorCode ierr = PETSC_SUCCESS, maxcode;
    if (Ad && SeqGetState(Ad)) ierr = SeqSetOptions(Ad, o);
    if (!ierr && Ao && SeqGetState(Ao)) ierr = SeqSetOptions(Ao, o);
    PetscCall(MaxError(PetscObjectComm((PetscObject)A), ierr, &maxcode));
    if (maxcode) { /* all or nothing, on every rank: blocks rebuilt with the new options get the old ones back */
      if (Ad && SeqGetState(Ad)) PetscCall(SeqSetOptions(Ad, old));
      if (Ao && SeqGetState(Ao)) PetscCall(SeqSetOptions(Ao, old));
    }
    PetscCall(RaiseError(mp->type, ierr, maxcode));
  }
  mp->opts = o;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Each block chooses its own window; the getter reports this rank's diagonal block, the one
   that holds most of the work. */
PetscErrorCode MPIBuiltSigma(Mat A, PetscInt *sigma)
{
  Mat Ad, Ao;

  PetscFunctionBegin;
  PetscCall(GetBlocks(A, &Ad, &Ao));
  PetscCall(SeqBuiltSigma(Ad, sigma));
  PetscFunctionReturn(PETSC_SUCCESS);
}

using Options = OptionOps<MPIState, MPISetOptions, MPIBuiltSigma>;

PetscErrorCode GetStats_MPI(Mat A, MatSpMVStats *out)
{
  FormatStats s;
  PetscInt    scale = 0;

  PetscFunctionBegin;
  PetscCall(LocalStats(A, &s, &scale));
  ToPublicStats(s, scale, out);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatDestroy_MPISpMV(Mat A);

void SwitchOps(Mat A, const struct _MatOps &aij, PetscBool ours)
{
  A->ops->assemblyend    = ours ? MatAssemblyEnd_MPISpMV : aij.assemblyend;
  A->ops->duplicate      = ours ? MatDuplicate_MPISpMV : aij.duplicate;
  A->ops->creategraph    = ours ? MatCreateGraph_MPISpMV : aij.creategraph;
  A->ops->productsetfromoptions = ours ? MatProductSetFromOptions_MPISpMV : aij.productsetfromoptions;
  A->ops->view           = ours ? MatView_MPISpMV : aij.view;
  A->ops->setfromoptions = ours ? Options::SetFromOptions : aij.setfromoptions;
  A->ops->destroy        = ours ? MatDestroy_MPISpMV : aij.destroy;
}


/* A becomes a plain MATMPIAIJ again (blocks included). */
PetscErrorCode Strip(Mat A)
{
  MPIState *mp = State(A);
  Mat       blocks[2];

  PetscFunctionBegin;
  PetscCall(GetBlocks(A, &blocks[0], &blocks[1]));
  for (Mat blk : blocks)
    if (blk && SeqGetState(blk)) PetscCall(SeqConvertToAIJ(blk, MATSEQAIJ, MAT_INPLACE_MATRIX, &blk));
  SwitchOps(A, mp->aijops, PETSC_FALSE);
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMPIAIJSetPreallocation_C", mp->preallocate));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", mp->preallocate_coo));
  PetscCall(ComposeOptionFunctions(A, mp->type->format, nullptr, nullptr, nullptr));
  PetscCall(ComposeConverters(A, mp->type, PETSC_TRUE, PETSC_FALSE));
  PetscCall(ComposeProductFunctions(A, mp->type->mpi, PETSC_FALSE));
  if (mp->type->cuda) PetscCall(SetDefaultVecType(A, VECSTANDARD));
  A->boundtocpu = mp->aij_boundtocpu;
  PetscCallCXX(delete mp);
  A->spptr = nullptr;
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATMPIAIJ));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatDestroy_MPISpMV(Mat A)
{
  MPIState *mp = State(A);
  PetscErrorCode (*destroy)(Mat) = mp->aijops.destroy;

  PetscFunctionBegin;
  /* the blocks are destroyed by MPIAIJ (they free their own layouts). Only removals here:
     MatHeaderMerge() calls this after freeing A's function list, a new entry would leak. */
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMPIAIJSetPreallocation_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", nullptr));
  PetscCall(ComposeOptionFunctions(A, mp->type->format, nullptr, nullptr, nullptr));
  PetscCall(ComposeConverters(A, mp->type, PETSC_TRUE, PETSC_FALSE));
  PetscCall(ComposeProductFunctions(A, mp->type->mpi, PETSC_FALSE));
  PetscCallCXX(delete mp);
  A->spptr = nullptr;
  PetscCall((*destroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Makes the MATMPIAIJ matrix B one of family t (its blocks are handled by the caller). */
PetscErrorCode Adopt(Mat B, const TypeInfo *t, const FormatOptions &opts)
{
  MPIState *mp = nullptr;
  PetscBool isaij;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATMPIAIJ, &isaij));
  PetscCheck(isaij, PetscObjectComm((PetscObject)B), PETSC_ERR_SUP, "cannot convert a %s matrix to %s: only MATMPIAIJ is converted in place", ((PetscObject)B)->type_name, t->mpi);
  PetscCheck(!B->spptr, PetscObjectComm((PetscObject)B), PETSC_ERR_PLIB, "MATMPIAIJ matrix with an spptr cannot become %s", t->mpi);
  if (t->cuda) PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
  PetscCallCXX(mp = new MPIState);
  mp->type   = t;
  mp->opts   = opts;
  mp->aijops = *B->ops;
  PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatMPIAIJSetPreallocation_C", &mp->preallocate));
  PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatSetPreallocationCOO_C", &mp->preallocate_coo));
  PetscCheck(mp->preallocate && mp->preallocate_coo, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATMPIAIJ without its preallocation functions");
  B->spptr = mp;
  SwitchOps(B, mp->aijops, PETSC_TRUE);
  if (t->cuda) PetscCall(SetDefaultVecType(B, VECCUDA));
  /* MatCreate() leaves a matrix bound to the CPU on device builds; ours run on the GPU unless
     MatBindToCPU() asks otherwise (as MatConvert_SeqAIJ_SeqAIJCUSPARSE does) */
  mp->aij_boundtocpu = B->boundtocpu;
  if (t->cuda) B->boundtocpu = PETSC_FALSE;
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, t->mpi));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatMPIAIJSetPreallocation_C", MatMPIAIJSetPreallocation_MPISpMV));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatSetPreallocationCOO_C", MatSetPreallocationCOO_MPISpMV));
  PetscCall(ComposeOptionFunctions(B, t->format, Options::Set, Options::Get, GetStats_MPI));
  PetscCall(ComposeConverters(B, t, PETSC_TRUE, PETSC_TRUE));
  PetscCall(ComposeProductFunctions(B, t->mpi, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool IsMPI(Mat A) { return A->ops->assemblyend == MatAssemblyEnd_MPISpMV ? PETSC_TRUE : PETSC_FALSE; }

} // namespace

MPIState *MPIGetState(Mat A) { return IsMPI(A) ? State(A) : nullptr; }

PetscErrorCode MPIConvertFromAIJ(Mat A, const TypeInfo *t, MatReuse reuse, Mat *newmat)
{
  FormatOptions  o;
  Mat            B;
  PetscErrorCode ierr, maxcode;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCheck(IsMPI(*newmat), PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "MAT_REUSE_MATRIX: the target is a %s matrix, not %s", ((PetscObject)*newmat)->type_name, t->mpi);
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN)); /* block by block; layouts follow */
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(ReadOptions(A, nullptr, t->format, &o)); /* bad options: error before anything changes */
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  B = *newmat;
  PetscCall(Adopt(B, t, o));
  ierr = SetUpBlocks(B, PETSC_FALSE); /* assembled blocks are built as they are converted */
  PetscCall(MaxError(PetscObjectComm((PetscObject)B), ierr, &maxcode));
  if (maxcode) {
    /* a block could not be built (a value overflows the value format, ...): B stays AIJ */
    if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDestroy(newmat));
    else PetscCall(Strip(B));
  }
  PetscCall(RaiseError(t, ierr, maxcode));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MPIConvertToAIJ(Mat A, MatType, MatReuse reuse, Mat *newmat)
{
  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat)); /* blocks: no layouts built */
  PetscCall(Strip(*newmat));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MPICreate(Mat A, const TypeInfo *t)
{
  PetscFunctionBegin;
  PetscCall(MatCreate_MPIAIJ(A));
  PetscCall(MPIConvertFromAIJ(A, t, MAT_INPLACE_MATRIX, &A));
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
