// The MPI types: MATMPIAIJ whose diagonal block A and off-diagonal block B are seq matrices of
// the same family. MatMult_MPIAIJ then overlaps the halo scatter with A x for free; the blocks
// are converted after every (re)creation by MPIAIJ (preallocation, COO, assembly).
#include "spmvimpl.hpp"

#include <petscdevice.h>

#include <petscversion.h>

#include <functional>
#include <string>

namespace pspmv {
namespace glue {

namespace {

MPIState *State(Mat A) { return static_cast<MPIState *>(A->spptr); }

/* The blocks (NULL before preallocation). */
PetscErrorCode GetBlocks(Mat A, Mat *Ad, Mat *Ao)
{
  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, Ad, Ao, nullptr));
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

/* An MPI matrix of ours inside MPIAIJ's assemblyend (innermost first): MPIAssemblesBlock() tells
   its blocks, also an off-diagonal block that MPIAIJ recreates there (MatDisAssemble_MPIAIJ()),
   that it builds their layouts after MPIAIJ's assembly returns. */
class AssemblyScope {
public:
  explicit AssemblyScope(Mat A) : A_(A), outer_(innermost_) { innermost_ = this; }
  ~AssemblyScope() { innermost_ = outer_; }
  AssemblyScope(const AssemblyScope &)            = delete;
  AssemblyScope &operator=(const AssemblyScope &) = delete;

  static PetscBool Covers(Mat blk)
  {
    for (const AssemblyScope *s = innermost_; s; s = s->outer_) {
      Mat Ad, Ao;
      if (MatMPIAIJGetSeqAIJ(s->A_, &Ad, &Ao, nullptr)) continue; /* (cannot fail on an MPIAIJ matrix) */
      if (blk == Ad || blk == Ao) return PETSC_TRUE;
    }
    return PETSC_FALSE;
  }

private:
  Mat                         A_;
  const AssemblyScope        *outer_;
  static const AssemblyScope *innermost_;
};
const AssemblyScope *AssemblyScope::innermost_ = nullptr;

/* The halo vector of MatMult_MPIAIJ (Mat_MPIAIJ::lvec) lives in a header that PETSc does not
   install (src/mat/impls/aij/mpi/mpiaij.h) and that no function returns. MPIAIJHeader repeats the
   first members of that struct (its MPIAIJHEADER macro) up to lvec; they are the same in PETSc
   3.22.5 and 3.25.4. Other versions: PSPMV_MPIAIJ_HEADER is 0 and the halo vector stays the one
   MPIAIJ made. HaloVector() checks that A, B and garray are where this struct says before it
   reads lvec. */
#if PETSC_VERSION_GE(3, 22, 0) && PETSC_VERSION_LT(3, 26, 0)
  #define PSPMV_MPIAIJ_HEADER 1
#else
  #define PSPMV_MPIAIJ_HEADER 0
#endif
struct MPIAIJHeader {
  Mat          A, B;
  PetscMPIInt  size, rank;
  PetscBool    donotstash;
  MPI_Request *send_waits, *recv_waits;
  PetscInt     nsends, nrecvs;
  MatScalar   *svalues, *rvalues;
  PetscInt     rmax;
  void        *colmap; /* PetscHMapI or PetscInt *, a pointer either way */
  PetscInt    *garray;
  Vec          lvec;
};

/* *lvec: A's halo vector (NULL before MPIAIJ makes it; always NULL when PSPMV_MPIAIJ_HEADER is 0). */
PetscErrorCode HaloVector(Mat A, Vec *lvec)
{
  const MPIAIJHeader *h = static_cast<const MPIAIJHeader *>(A->data);
  Mat                 Ad, Ao;
  const PetscInt     *garray;

  PetscFunctionBegin;
  *lvec = nullptr;
  if (!PSPMV_MPIAIJ_HEADER) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
  PetscCheck(h->A == Ad && h->B == Ao && h->garray == garray && (!h->lvec || ((PetscObject)h->lvec)->classid == VEC_CLASSID), PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "the Mat_MPIAIJ struct of this PETSc does not start as petscspmv expects (src/petsc/mpispmv.cpp, MPIAIJHeader)");
  *lvec = h->lvec;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Gives A's halo vector the memory type of A's family, as MPIAIJCUSPARSE does: a CUDA vector for
   the CUDA types, however the matrix was made (MatConvert() of an assembled MATMPIAIJ duplicates
   MPIAIJ's host vector); type: VECSEQ to undo. The check of HaloVector() runs for every family. */
PetscErrorCode SetHaloType(Mat A, const TypeInfo *t, VecType type)
{
  Vec lvec;

  PetscFunctionBegin;
  PetscCall(HaloVector(A, &lvec));
  if (lvec && t->cuda) PetscCall(VecSetType(lvec, type)); /* scratch: its values need not survive */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Makes both blocks seq matrices of A's family with A's options and the halo vector one of the
   family's memory type; with `assembled` also brings the blocks' layouts up to date (values may
   have changed through MatSetValues()). */
PetscErrorCode SetUpBlocks(Mat A, PetscBool assembled)
{
  MPIState       *mp = State(A);
  Mat             blocks[2];
  const PetscInt *garray = nullptr;
  Mat             twins[2] = {nullptr, nullptr};
  PetscBool       mpitwin  = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(SetHaloType(A, mp->type, VECSEQCUDA));
  PetscCall(MatMPIAIJGetSeqAIJ(A, &blocks[0], &blocks[1], &garray));
  if (Mat twin = DeviceTwinScope::Current()) { /* a MatConvert() from mpiaijcusparse: its blocks are the twins of A's */
    PetscCall(PetscObjectTypeCompare((PetscObject)twin, MATMPIAIJCUSPARSE, &mpitwin));
    if (mpitwin) {
      const PetscInt *tgarray;
      PetscInt        nc = 0, tnc = 0;
      PetscBool       same = PETSC_FALSE;
      PetscCall(MatMPIAIJGetSeqAIJ(twin, &twins[0], &twins[1], &tgarray));
      /* the off-diagonal blocks' columns must mean the same global columns */
      if (blocks[1] && twins[1]) {
        PetscCall(MatGetSize(blocks[1], nullptr, &nc));
        PetscCall(MatGetSize(twins[1], nullptr, &tnc));
        if (nc == tnc) PetscCall(PetscArraycmp(garray, tgarray, nc, &same));
      }
      if (!same) twins[1] = nullptr;
    }
  }
  for (int k = 0; k < 2; k++) {
    Mat blk = blocks[k];
    if (!blk) continue;
    /* range errors name global rows and columns: the off-diagonal block's columns are global
       until MPIAIJ compresses them at assembly, then garray maps them back */
    GlobalIndices g;
    g.row0 = A->rmap->rstart;
    g.col0 = k == 0 ? A->cmap->rstart : 0;
    g.cols = k == 1 ? garray : nullptr;
    if (!SeqGetState(blk)) { /* an assembled block is built as it is converted */
      GlobalIndexScope names(g);
      DeviceTwinScope  twin(twins[k]);
      PetscCall(SeqConvertFromAIJ(blk, mp->type, &mp->opts, MAT_INPLACE_MATRIX, &blk));
      SeqGetState(blk)->global = g;
    } else {
      SeqGetState(blk)->global = g;
      PetscCall(SeqSetOptions(blk, mp->opts));
      if (assembled) PetscCall(SeqSync(blk, PETSC_TRUE));
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
  {
    AssemblyScope scope(A);
    ierr = mp->aijops.assemblyend(A, mode);
  }
  PetscCall(ierr);
  if (mode == MAT_FLUSH_ASSEMBLY) PetscFunctionReturn(PETSC_SUCCESS);
  /* a product result's first assembly (the symbolic phase) holds placeholder values: the blocks
     build at the numeric phase's assembly or at their first use */
  {
    const PetscBool build = (PetscBool)!mp->placeholder_values;
    mp->placeholder_values = PETSC_FALSE;
    PetscCall(Collective(A, SetUpBlocks(A, build)));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Statistics of this rank's blocks; scale[0..1]: smallest and largest scale exponent of the
   blocks that hold nonzeros (PETSC_MAX_INT, PETSC_MIN_INT when none does): each block chooses its
   own. */
PetscErrorCode LocalStats(Mat A, FormatStats *sum, PetscInt scale[2])
{
  Mat blocks[2];

  PetscFunctionBegin;
  PetscCheck(A->assembled, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "the layouts of a %s matrix exist once the matrix is assembled", ((PetscObject)A)->type_name);
  *sum     = FormatStats();
  scale[0] = PETSC_MAX_INT;
  scale[1] = PETSC_MIN_INT;
  PetscCall(GetBlocks(A, &blocks[0], &blocks[1]));
  for (Mat blk : blocks) {
    FormatStats s;
    PetscInt    e;
    if (!blk) continue;
    PetscCall(SeqGetStats(blk, &s, &e));
    AddStats(sum, s);
    if (s.nnz == 0) continue;
    scale[0] = PetscMin(scale[0], e);
    scale[1] = PetscMax(scale[1], e);
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
    PetscInt    ints[4], maxints[4], scale[2];

    /* a lazy layout update inside may fail on one rank only: all ranks raise it, none waits */
    PetscCall(Collective(A, LocalStats(A, &local, scale)));
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
    ints[2] = -scale[0]; /* max of -lo: the smallest exponent */
    ints[3] = scale[1];
    PetscCallMPI(MPIU_Allreduce(ints, maxints, 4, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)A)));
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
    scale[0] = -maxints[2];
    scale[1] = maxints[3];
    PetscCall(ViewFormat(A, viewer, mp->type, mp->opts, global, scale, "all ranks, diagonal and off-diagonal blocks"));
  }
  PetscCall(mp->aijops.view(A, viewer));
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
  PetscCheck(r[0] == h[0] && r[1] == h[1], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG,
             "the ranks of this %s matrix were given different %s options (this rank: %s); format options are logically collective: give every rank the same value",
             mp->type->mpi, FormatTitle(mp->type->format), mine.c_str());
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MPISetOptions(Mat A, const FormatOptions &o)
{
  MPIState     *mp  = State(A);
  FormatOptions old = mp->opts;
  Mat           Ad, Ao;

  PetscFunctionBegin;
  PetscCall(CheckSameOnAllRanks(A, o));
  if (o == old) PetscFunctionReturn(PETSC_SUCCESS);
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

/* The statistics of this rank's diagonal block's layout. Each block resolves the options the
   builder chooses (PackSELL's PETSC_DECIDE sigma) on its own; the getter reports the diagonal
   block, the one that holds most of the work. */
PetscErrorCode MPILayoutStats(Mat A, FormatStats *s)
{
  Mat Ad, Ao;

  PetscFunctionBegin;
  PetscCall(GetBlocks(A, &Ad, &Ao));
  PetscCall(SeqLayoutStats(Ad, s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A setter's value refused on some ranks (optimized PETSc builds do not check that setters are
   logically collective): an error on every rank, not a hang in MPISetOptions' check. */
PetscErrorCode AgreeOnOption(Mat A, PetscErrorCode ierr)
{
  PetscErrorCode maxcode;

  PetscFunctionBegin;
  PetscCall(MaxError(PetscObjectComm((PetscObject)A), ierr, &maxcode));
  PetscCall(ierr);
  PetscCheck(!maxcode, PETSC_COMM_SELF, maxcode, "the %s option value was refused on another rank (see the error reported there); setters are collective: give every rank the same value", FormatTitle(State(A)->type->format));
  PetscFunctionReturn(PETSC_SUCCESS);
}

using Options = OptionOps<MPIState, MPISetOptions, MPILayoutStats, AgreeOnOption>;

PetscErrorCode GetStats_MPI(Mat A, MatSpMVStats *out)
{
  FormatStats s;
  PetscInt    scale[2];

  PetscFunctionBegin;
  PetscCall(LocalStats(A, &s, scale));
  ToPublicStats(s, scale, out);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatDestroy_MPISpMV(Mat A);

void SwitchOps(Mat A, const struct _MatOps &aij, PetscBool ours)
{
  A->ops->assemblyend    = ours ? MatAssemblyEnd_MPISpMV : aij.assemblyend;
  /* operations whose results PETSc makes of A's type take A's options (NULL stays NULL:
     PETSc then takes another path, e.g. MatCreateSubMatrix() through createsubmatrices) */
  A->ops->duplicate         = ours && aij.duplicate ? PSPMV_INHERITING(MPIState, duplicate) : aij.duplicate;
  A->ops->transpose         = ours && aij.transpose ? PSPMV_INHERITING(MPIState, transpose) : aij.transpose;
  A->ops->axpy              = ours && aij.axpy ? PSPMV_INHERITING(MPIState, axpy) : aij.axpy;
  A->ops->createsubmatrix   = ours && aij.createsubmatrix ? PSPMV_INHERITING(MPIState, createsubmatrix) : aij.createsubmatrix;
  A->ops->createsubmatrices = ours && aij.createsubmatrices ? PSPMV_INHERITING(MPIState, createsubmatrices) : aij.createsubmatrices;
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
  PetscCall(SetHaloType(A, mp->type, VECSEQ));
  SwitchOps(A, mp->aijops, PETSC_FALSE);
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMPIAIJSetPreallocation_C", mp->preallocate));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", mp->preallocate_coo));
  PetscCall(ComposeOptionFunctions(A, mp->type->format, nullptr, nullptr, nullptr));
  PetscCall(ComposeConverters(A, mp->type, PETSC_TRUE, PETSC_FALSE));
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
  mp->placeholder_values = (PetscBool)(B->product != nullptr);
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
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool IsMPI(Mat A) { return A->ops->assemblyend == MatAssemblyEnd_MPISpMV ? PETSC_TRUE : PETSC_FALSE; }

} // namespace

MPIState *MPIGetState(Mat A) { return IsMPI(A) ? State(A) : nullptr; }

PetscBool MPIAssemblesBlock(Mat A) { return AssemblyScope::Covers(A); }

PetscErrorCode MPIConvertFromAIJ(Mat A, const TypeInfo *t, MatReuse reuse, Mat *newmat)
{
  FormatOptions  o(t->format);
  Mat            B;
  PetscErrorCode ierr, maxcode;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCheck(IsMPI(*newmat), PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "MAT_REUSE_MATRIX: the target is a %s matrix, not %s", ((PetscObject)*newmat)->type_name, t->mpi);
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN)); /* block by block; layouts follow */
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(InitialOptions(A, t, &o)); /* bad options: error before anything changes */
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
