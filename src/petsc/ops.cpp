// The base type's operations that our types wrap, one body for the seq and the MPI types:
// operations that create matrices from ours run on the matrix presented as its base type and
// adopt their results with the source's options (a result that replaced the source's header is
// adopted back into it); operations that change values sync a lossy layout right away, so a value
// the format cannot hold is an error of that operation, not of a later product. While a matrix
// carries its base type's name (inside another wrapped operation) these pass straight through.
#include "spmvimpl.hpp"
#include "petsc_fixes/petsc_fixes.hpp"
#include "petsc_fixes/private_fields.hpp"

namespace pspmv
{
namespace glue
{

namespace
{

/* Kinds: the state, the base type's name, the value check and what follows a MatHeaderMerge()
   that gave A new data (seq: nothing, the layout's stamp holds the data it was built from; MPI:
   the new blocks adopted). */
struct SeqKind {
  using State = SeqState;
  static State         *Get(Mat A) { return SeqGetState(A); }
  static const char    *Base(const TypeInfo *t) { return t->base_seq; }
  static PetscErrorCode Check(Mat A) { return SeqCheckValues(A); }
  static PetscErrorCode NewData(Mat) { return PETSC_SUCCESS; }
  static bool           Block(const State &s) { return s.block; } /* its MPI matrix checks it */
};

struct MPIKind {
  using State = MPIState;
  static State         *Get(Mat A) { return MPIGetState(A); }
  static const char    *Base(const TypeInfo *t) { return t->base_mpi; }
  static PetscErrorCode Check(Mat A) { return MPICheckValues(A); }
  static PetscErrorCode NewData(Mat A) { return MPIAdoptBlocks(A); }
  static bool           Block(const State &) { return false; }
};

/* Whether A (of ours) currently carries its base type's name. */
template <class K>
bool Presented(Mat A, const typename K::State &st)
{
  PetscBool same = PETSC_FALSE;
  return !PetscStrcmp(((PetscObject)A)->type_name, K::Base(st.type), &same) && same;
}

/* What a wrapper needs after the operation, when A's state may be gone with A's header. */
struct Source {
  const TypeInfo *type;
  FormatOptions   opts;
};

/* Runs op on A presented as its base type, then names A ours again or, when the operation
   replaced A's header with a plain base-type matrix, adopts it back with A's options; when it
   merged another matrix's data into A (MatHeaderMerge() keeps A's operations and state), the
   kind follows the new data. */
template <class K, class Op>
PetscErrorCode OnBase(Mat A, const Source &src, Op &&op)
{
  const void *data = A->data;
  BaseNames   bn;

  PetscFunctionBegin;
  PetscCall(PresentAsBase(A, &bn));
  const PetscErrorCode ierr = op();
  PetscCall(RestoreTypeNames(A, bn));
  PetscCall(ierr);
  if (!K::Get(A)) PetscCall(AdoptAs(A, src.type, src.opts));
  else if (A->data != data) PetscCall(K::NewData(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A result of the base type (not a plain matrix of another type) becomes one of src's family. */
PetscErrorCode AdoptResult(Mat R, const Source &src)
{
  PetscBool seq = PETSC_FALSE, mpi = PETSC_FALSE;

  PetscFunctionBegin;
  if (!R || SeqGetState(R) || MPIGetState(R)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)R, src.type->base_seq, &seq));
  PetscCall(PetscObjectTypeCompare((PetscObject)R, src.type->base_mpi, &mpi));
  if (seq || mpi) PetscCall(AdoptAs(R, src.type, src.opts));
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <class K>
Source SourceOf(Mat A)
{
  const typename K::State *st = K::Get(A);
  return Source{st->type, st->opts};
}

template <class K>
struct Wrap {
  static PetscErrorCode Duplicate(Mat A, MatDuplicateOption op, Mat *B)
  {
    typename K::State *st = K::Get(A);

    PetscFunctionBegin;
    if (Presented<K>(A, *st)) {
      PetscCall(st->baseops.duplicate(A, op, B));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    const Source src = SourceOf<K>(A);
    PetscCall(OnBase<K>(A, src, [&] { return st->baseops.duplicate(A, op, B); }));
    PetscCall(AdoptResult(*B, src));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  static PetscErrorCode Transpose(Mat A, MatReuse reuse, Mat *B)
  {
    typename K::State *st = K::Get(A);

    PetscFunctionBegin;
    if (Presented<K>(A, *st)) {
      PetscCall(st->baseops.transpose(A, reuse, B));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    const Source src = SourceOf<K>(A);
    PetscCall(OnBase<K>(A, src, [&] { return st->baseops.transpose(A, reuse, B); }));
    if (reuse == MAT_INITIAL_MATRIX) PetscCall(AdoptResult(*B, src));
    if (reuse == MAT_REUSE_MATRIX && !MPIGetState(*B)) PetscCall(petsc_fixes::MarkHostNewer(*B)); /* SeqAIJ writes its host array */
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  static PetscErrorCode CreateSubMatrix(Mat A, IS isrow, IS iscol, MatReuse reuse, Mat *B)
  {
    typename K::State *st = K::Get(A);

    PetscFunctionBegin;
    if (Presented<K>(A, *st)) {
      PetscCall(st->baseops.createsubmatrix(A, isrow, iscol, reuse, B));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    const Source src = SourceOf<K>(A);
    PetscCall(OnBase<K>(A, src, [&] { return st->baseops.createsubmatrix(A, isrow, iscol, reuse, B); }));
    if (reuse == MAT_INITIAL_MATRIX) PetscCall(AdoptResult(*B, src));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  static PetscErrorCode CreateSubMatrices(Mat A, PetscInt n, const IS irow[], const IS icol[], MatReuse reuse, Mat *B[])
  {
    typename K::State *st = K::Get(A);

    PetscFunctionBegin;
    if (Presented<K>(A, *st)) {
      PetscCall(st->baseops.createsubmatrices(A, n, irow, icol, reuse, B));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    const Source src = SourceOf<K>(A);
    /* reused: the base type writes the submatrices' host arrays directly and may assemble them
       (MPIAIJ's), so their host values are marked the newer ones before (for the assembly's
       build) and after (for the next use) */
    if (reuse == MAT_REUSE_MATRIX)
      for (PetscInt i = 0; i < n; i++) PetscCall(petsc_fixes::MarkHostNewer((*B)[i]));
    PetscCall(OnBase<K>(A, src, [&] { return st->baseops.createsubmatrices(A, n, irow, icol, reuse, B); }));
    for (PetscInt i = 0; i < n; i++) PetscCall(reuse == MAT_INITIAL_MATRIX ? AdoptResult((*B)[i], src) : petsc_fixes::MarkHostNewer((*B)[i]));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* Y += a X: a new pattern replaces Y's header (adopted back); X of ours is presented too, so
     the base type sees two matrices of its own. */
  static PetscErrorCode AXPY(Mat Y, PetscScalar a, Mat X, MatStructure str)
  {
    typename K::State *st = K::Get(Y);

    PetscFunctionBegin;
    if (Presented<K>(Y, *st)) {
      PetscCall(st->baseops.axpy(Y, a, X, str));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    const Source src = SourceOf<K>(Y);
    BaseNames    bx;
    if (X != Y) PetscCall(PresentAsBase(X, &bx));
    const PetscErrorCode ierr = OnBase<K>(Y, src, [&] { return st->baseops.axpy(Y, a, X, str); });
    if (X != Y) PetscCall(RestoreTypeNames(X, bx));
    PetscCall(ierr);
    PetscCall(K::Check(Y));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
};

/* The diagonal of A (ours) read from the base type's arrays, without a layout (a matrix whose
   values a lossy layout refuses has one too), in *d; NULL where a diagonal set would not put it
   back: a non-square A or rows and columns split differently (MatShift() shifts the entries
   (r, r), a block's diagonal is (r, c) with c in the column layout). */
PetscErrorCode SaveDiagonal(Mat A, Vec *d)
{
  Mat       parts[2];
  PetscBool congruent;

  PetscFunctionBegin;
  *d = nullptr;
  PetscCall(MatHasCongruentLayouts(A, &congruent));
  if (!congruent) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SeqParts(A, parts)); /* the diagonal block of an MPI matrix writes d's local part */
  const SeqState *sp = SeqGetState(parts[0]);
  PetscCheck(sp && sp->baseops.getdiagonal, PETSC_COMM_SELF, PETSC_ERR_PLIB, "no base MatGetDiagonal");
  PetscCall(MatCreateVecs(A, nullptr, d));
  const PetscErrorCode ierr = sp->baseops.getdiagonal(parts[0], *d);
  if (ierr) PetscCall(VecDestroy(d));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ops->op of a matrix of ours that changes values: the base type's, then the values checked.
   The check of the assemblies the base operation makes (MatShift() and MatDiagonalSet() of a
   missing diagonal entry: MatSetValues() and a final assembly) waits for the operation's end: a
   refusal raised inside MatAssemblyEnd() would leave A unassembled, in PETSc's middle of an
   assembly, refusing every later call. A refused MatShift() or MatDiagonalSet() (Diagonal: they
   change the diagonal only) puts the diagonal's values back, unchecked (they were A's; a
   missing diagonal entry comes back as an explicit zero), and the next product syncs them.
   Other refused operations leave the new values, which the products refuse until an operation
   repairs them (MatScale() and MatDiagonalScale() by the inverse factors). */
template <class K, bool Diagonal, class F, F _MatOps::*M>
struct Checking;
template <class K, bool Diagonal, class... Args, PetscErrorCode (*_MatOps::*M)(Mat, Args...)>
struct Checking<K, Diagonal, PetscErrorCode (*)(Mat, Args...), M> {
  static PetscErrorCode Call(Mat A, Args... args)
  {
    typename K::State *st = K::Get(A);
    Vec                d  = nullptr;

    PetscFunctionBegin;
    if (Presented<K>(A, *st) || !st->opts.Lossy() || !A->assembled) {
      PetscCall((st->baseops.*M)(A, args...));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    if (Diagonal && !st->restoring_diagonal && !K::Block(*st)) PetscCall(SaveDiagonal(A, &d));
    st->defer_value_check++;
    PetscErrorCode ierr = (st->baseops.*M)(A, args...);
    st->defer_value_check--;
    if (!ierr && !st->restoring_diagonal) {
      ierr = K::Check(A);
      if (ierr && d) {
        PetscCall(PetscInfo(A, "the refused operation's diagonal is put back\n"));
        st->restoring_diagonal    = PETSC_TRUE;
        const PetscErrorCode rerr = MatDiagonalSet(A, d, INSERT_VALUES);
        st->restoring_diagonal    = PETSC_FALSE;
        if (rerr) ierr = rerr;
      }
    }
    PetscCall(VecDestroy(&d));
    PetscCall(ierr);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
};
/* Diagonal: the operation changes only the diagonal (put back when refused) */
#define PSPMV_CHECKING(K, op, Diagonal) Checking<K, Diagonal, decltype(_MatOps::op), &_MatOps::op>::Call

template <class K>
void InstallWrapped(Mat A, const struct _MatOps &base, PetscBool ours)
{
  /* NULL stays NULL: PETSc then takes another path (e.g. MatCreateSubMatrix() through
     createsubmatrices) */
#define PSPMV_SET(op, fn) A->ops->op = ours && base.op ? (fn) : base.op
  PSPMV_SET(duplicate, Wrap<K>::Duplicate);
  PSPMV_SET(transpose, Wrap<K>::Transpose);
  PSPMV_SET(createsubmatrix, Wrap<K>::CreateSubMatrix);
  PSPMV_SET(createsubmatrices, Wrap<K>::CreateSubMatrices);
  PSPMV_SET(axpy, Wrap<K>::AXPY);
  PSPMV_SET(scale, PSPMV_CHECKING(K, scale, false));
  PSPMV_SET(shift, PSPMV_CHECKING(K, shift, true));
  PSPMV_SET(diagonalscale, PSPMV_CHECKING(K, diagonalscale, false));
  PSPMV_SET(diagonalset, PSPMV_CHECKING(K, diagonalset, true));
  PSPMV_SET(zerorows, PSPMV_CHECKING(K, zerorows, false));
  PSPMV_SET(zerorowscolumns, PSPMV_CHECKING(K, zerorowscolumns, false));
#undef PSPMV_SET
}

} // namespace

void InstallSeqWrapped(Mat A, const struct _MatOps &base, PetscBool ours)
{
  InstallWrapped<SeqKind>(A, base, ours);
}
void InstallMPIWrapped(Mat A, const struct _MatOps &base, PetscBool ours)
{
  InstallWrapped<MPIKind>(A, base, ours);
}

namespace
{
/* The type name A has as ours, NULL when A is not ours. */
const char *OurName(Mat A)
{
  if (SeqState *sp = SeqGetState(A)) return sp->type->seq;
  if (MPIState *mp = MPIGetState(A)) return mp->type->mpi;
  return nullptr;
}

const char *BaseName(Mat A)
{
  if (SeqState *sp = SeqGetState(A)) return sp->type->base_seq;
  if (MPIState *mp = MPIGetState(A)) return mp->type->base_mpi;
  return nullptr;
}

/* Names X (ours, carrying its own name) as its base type and records it; the string of its own
   name is kept aside, not freed. */
PetscErrorCode Rename(Mat X, BaseNames *bn)
{
  PetscBool ours = PETSC_FALSE;
  char     *presented;

  PetscFunctionBegin;
  if (!X || !OurName(X)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)X, OurName(X), &ours));
  if (!ours) PetscFunctionReturn(PETSC_SUCCESS); /* presented already, by an enclosing presentation */
  PetscCheck(bn->n < 3, PETSC_COMM_SELF, PETSC_ERR_PLIB, "too many matrices presented as the base type");
  PetscCall(PetscStrallocpy(BaseName(X), &presented));
  bn->renamed[bn->n]   = X;
  bn->own[bn->n]       = private_fields::SwapTypeNameString(X, presented);
  bn->presented[bn->n] = presented;
  bn->n++;
  PetscFunctionReturn(PETSC_SUCCESS);
}
} // namespace

PetscErrorCode WithBlocks(Mat A, Mat mats[3])
{
  PetscFunctionBegin;
  mats[0] = A;
  PetscCall(SeqParts(A, &mats[1]));
  if (mats[1] == A) mats[1] = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SeqParts(Mat A, Mat parts[2])
{
  PetscBool mpiaij = PETSC_FALSE;

  PetscFunctionBegin;
  parts[0] = A;
  parts[1] = nullptr;
  if (MPIGetState(A)) mpiaij = PETSC_TRUE;
  else PetscCall(PetscStrbeginswith(((PetscObject)A)->type_name, MATMPIAIJ, &mpiaij));
  if (mpiaij) PetscCall(MatMPIAIJGetSeqAIJ(A, &parts[0], &parts[1], nullptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PresentAsBase(Mat A, BaseNames *bn)
{
  Mat mats[3];

  PetscFunctionBegin;
  *bn = BaseNames();
  PetscCall(WithBlocks(A, mats));
  for (Mat X : mats) PetscCall(Rename(X, bn));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode RestoreTypeNames(Mat A, BaseNames &bn)
{
  Mat mats[3];

  PetscFunctionBegin;
  if (!bn.n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(WithBlocks(A, mats));
  for (int i = 0; i < bn.n; i++) {
    Mat X = nullptr;
    for (Mat M : mats)
      if (M && M == bn.renamed[i] && private_fields::TypeNameString(M) == bn.presented[i] && OurName(M)) X = M;
    if (X) { /* still carries the presented name: its own back */
      char *presented = private_fields::SwapTypeNameString(X, bn.own[i]);
      PetscCall(PetscFree(presented));
    } else PetscCall(PetscFree(bn.own[i])); /* renamed, replaced or destroyed meanwhile: no longer referenced */
    bn.own[i] = nullptr;
  }
  bn.n = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode AdoptAs(Mat B, const TypeInfo *t, const FormatOptions &o)
{
  PetscBool mpi;

  PetscFunctionBegin;
  const PetscBool build = (PetscBool)o.Lossy();
  PetscCall(PetscObjectTypeCompare((PetscObject)B, t->base_mpi, &mpi));
  if (mpi) PetscCall(MPIConvertFromBase(B, t, &o, MAT_INPLACE_MATRIX, &B, build));
  else PetscCall(SeqConvertFromBase(B, t, &o, MAT_INPLACE_MATRIX, &B, build));
  PetscFunctionReturn(PETSC_SUCCESS);
}

namespace
{
/* MatCreate_<type> of family t: a matrix of the base type (seq or MPI: mpi) made ours. */
PetscErrorCode CreateOf(Mat A, const TypeInfo *t, PetscBool mpi)
{
  PetscFunctionBegin;
#if defined(PETSCSPMV_HAVE_CUDA)
  if (t->cuda) PetscCall(CheckCudaUsable(mpi ? t->mpi : t->seq));
#endif
  PetscCall(mpi ? t->create_base_mpi(A) : t->create_base_seq(A));
  PetscCall(mpi ? MPIConvertFromBase(A, t, nullptr, MAT_INPLACE_MATRIX, &A) : SeqConvertFromBase(A, t, nullptr, MAT_INPLACE_MATRIX, &A));
  PetscFunctionReturn(PETSC_SUCCESS);
}
} // namespace

PetscErrorCode SeqCreate(Mat A, const TypeInfo *t)
{
  PetscFunctionBegin;
  PetscCall(CreateOf(A, t, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MPICreate(Mat A, const TypeInfo *t)
{
  PetscFunctionBegin;
  PetscCall(CreateOf(A, t, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode BeginConversion(Mat A, const TypeInfo *t, PetscBool mpi, const FormatOptions *opts, MatReuse reuse, Mat *newmat, FormatOptions *o, Mat *B, PetscBool *fromaij)
{
  PetscFunctionBegin;
  *fromaij = PETSC_FALSE;
#if defined(PETSCSPMV_HAVE_CUDA)
  if (t->cuda) PetscCall(CheckCudaUsable(mpi ? t->mpi : t->seq)); /* before anything changes */
#endif
  if (opts) *o = *opts;
  else PetscCall(InitialOptions(A, t, o)); /* bad options: error before anything changes */
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  *B = *newmat;
  if (t->cuda) {
    /* a CUDA family from AIJ: AIJCUSPARSE first (PETSc's converter) */
    PetscCall(PetscObjectTypeCompare((PetscObject)*B, mpi ? MATMPIAIJ : MATSEQAIJ, fromaij));
    if (*fromaij) PetscCall(MatConvert(*B, mpi ? t->base_mpi : t->base_seq, MAT_INPLACE_MATRIX, B));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode UndoConversion(Mat B, PetscBool mpi, MatReuse reuse, Mat *newmat, PetscBool fromaij, PetscErrorCode (*strip)(Mat), PetscErrorCode ierr)
{
  PetscFunctionBegin;
  if (!ierr) PetscFunctionReturn(PETSC_SUCCESS);
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDestroy(newmat));
  else {
    PetscCall(strip(B));
    if (fromaij) PetscCall(MatConvert(B, mpi ? MATMPIAIJ : MATSEQAIJ, MAT_INPLACE_MATRIX, &B));
  }
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CollectiveError(MPI_Comm comm, const char *what, PetscErrorCode ierr)
{
  PetscMPIInt code = (PetscMPIInt)ierr, mx = 0;

  PetscFunctionBegin;
  PetscCallMPI(MPIU_Allreduce(&code, &mx, 1, MPI_INT, MPI_MAX, comm));
  PetscCall(ierr);
  PetscCheck(!mx, PETSC_COMM_SELF, (PetscErrorCode)mx, "%s failed on another rank (see the error reported there)", what);
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
