// What makes AIJCUSPARSE's device code work for our CUDA types (AIJCUSPARSE underneath) where
// PETSc dispatches by type name: matrix products (MatProductSetFromOptions and the functions it
// looks up by the operands' type names; AIJCUSPARSE's product code checks exact type names, so our
// operands are presented as the base type through the setup, symbolic and numeric phases: the
// results are AIJCUSPARSE or dense CUDA matrices, as with aijcusparse operands) and the
// factorizations (MATSOLVERCUSPARSE registered for our seq type names; the factor's phases see
// our matrix presented as the base type, which PETSc's debugging builds check).
#include <petscdevice_cuda.h>

#include "../spmvimpl.hpp"

#include <map>

namespace pspmv {
namespace glue {

namespace {

/* The distinct operands of a product that are matrices of ours. */
int OurOperands(const Mat_Product *p, Mat ours[3])
{
  const Mat operands[3] = {p->A, p->B, p->type == MATPRODUCT_ABC ? p->C : nullptr};
  int       n           = 0;
  for (Mat X : operands) {
    if (!X || !(SeqGetState(X) || MPIGetState(X))) continue;
    bool seen = false;
    for (int i = 0; i < n; i++) seen = seen || ours[i] == X;
    if (!seen) ours[n++] = X;
  }
  return n;
}

/* Runs f with the product's operands of ours presented as the base type. */
template <class F>
PetscErrorCode WithOperandsOnBase(const Mat_Product *p, F &&f)
{
  Mat       ours[3];
  BaseNames bn[3];
  const int n = OurOperands(p, ours);

  PetscFunctionBegin;
  for (int i = 0; i < n; i++) PetscCall(PresentAsBase(ours[i], &bn[i]));
  const PetscErrorCode ierr = f();
  for (int i = 0; i < n; i++) PetscCall(RestoreTypeNames(ours[i], bn[i]));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether an operand of p is a host matrix (AIJ, dense, or bound to the CPU). */
PetscErrorCode HasHostOperand(const Mat_Product *p, PetscBool *host)
{
  const Mat operands[3] = {p->A, p->B, p->type == MATPRODUCT_ABC ? p->C : nullptr};

  PetscFunctionBegin;
  *host = PETSC_FALSE;
  for (Mat X : operands) {
    PetscBool h = PETSC_FALSE;
    if (!X) continue;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)X, &h, MATSEQAIJ, MATMPIAIJ, MATSEQDENSE, MATMPIDENSE, ""));
    *host = (PetscBool)(*host || h || X->boundtocpu);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* With a host operand (AIJ, dense, or bound to the CPU) AIJCUSPARSE hands the product to SeqAIJ's
   or MPIAIJ's host code, some of which reads the host values directly (MatMatTransposeMult of ours
   and AIJ read ours' host array while its device values were newer): the host values of the
   operands of ours are made current first (one device-to-host copy when the device's are newer). */
PetscErrorCode HostValuesForHostProducts(const Mat_Product *p)
{
  PetscBool host;
  Mat       ours[3];

  PetscFunctionBegin;
  PetscCall(HasHostOperand(p, &host));
  if (!host) PetscFunctionReturn(PETSC_SUCCESS);
  const int n = OurOperands(p, ours);
  for (int i = 0; i < n; i++) {
    Mat blocks[2];
    PetscCall(SeqParts(ours[i], blocks));
    for (Mat b : blocks) {
      const PetscScalar *a;
      if (!b) continue;
      PetscCall(MatSeqAIJGetArrayRead(b, &a));
      PetscCall(MatSeqAIJRestoreArrayRead(b, &a));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a numeric phase that ran on the host (a host operand, HasHostOperand() asked before the
   phase, which may free the product): an AIJCUSPARSE result C (for MPI, its blocks) got its values
   in the host arrays, but its device copy from an earlier phase stays marked current
   (MatMatTransposeMult of ours and AIJ reused: C's MatMult multiplied the old values); C's host is
   marked newer. */
PetscErrorCode HostResultNewer(Mat C)
{
  PetscBool cu = PETSC_FALSE, mpicu = PETSC_FALSE;

  PetscFunctionBegin;
  if (C->boundtocpu) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)C, MATSEQAIJCUSPARSE, &cu));
  PetscCall(PetscObjectTypeCompare((PetscObject)C, MATMPIAIJCUSPARSE, &mpicu));
  if (cu || mpicu) {
    Mat parts[2];
    PetscCall(SeqParts(C, parts));
    for (Mat b : parts)
      if (b) PetscCall(MarkHostNewer(b));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The MatProductSetFromOptions a matrix's type provides: the base type's for ours. */
PetscErrorCode (*SetFromOptionsOf(Mat X))(Mat)
{
  if (!X) return nullptr;
  if (SeqState *sp = SeqGetState(X)) return sp->baseops.productsetfromoptions;
  if (MPIState *mp = MPIGetState(X)) return mp->baseops.productsetfromoptions;
  return X->ops->productsetfromoptions;
}

/* Which matrix an operand is and how far its values are: the ids and object states of the matrix
   and of its two blocks (MPI), which any value change of it (through the matrix or a block)
   increases. */
struct OperandStamp {
  PetscObjectId    id[3]    = {};
  PetscObjectState state[3] = {};
  bool             operator==(const OperandStamp &o) const
  {
    for (int i = 0; i < 3; i++)
      if (id[i] != o.id[i] || state[i] != o.state[i]) return false;
    return true;
  }
};

/* The base type's symbolic and numeric phases of the products with operands of ours, by the
   product (Mat_Product, not the result matrix: MatProductSymbolic_ABC_Basic() runs an inner
   product's phase on the outer result with the inner product swapped in). An address freed and
   reused by a later product is overwritten when that product is set up through ours; a product
   a phase sets up on C without ours at the address of the one it freed takes over that entry
   (its numeric phase recorded there, the stamps of the old one kept until its next phase). */
struct Phases {
  PetscErrorCode (*symbolic)(Mat) = nullptr, (*numeric)(Mat) = nullptr;
  OperandStamp merged;    /* MergedOperand() after the last phase */
  OperandStamp host_copy; /* P when its host copy (HostCopyOfP()) was last made or refreshed */
};
std::map<const Mat_Product *, Phases> &PhasesOf()
{
  static std::map<const Mat_Product *, Phases> phases;
  return phases;
}

/* Brings X's explicit transpose (AIJCUSPARSE's device copy of X^T) up to date with X's values.
   AIJCUSPARSE's numeric phase of a sparse product reads that transpose as the symbolic phase
   formed it (PETSc 3.22: MatProductNumeric_SeqAIJCUSPARSE_SeqAIJCUSPARSE() takes matTranspose
   without re-forming it), so a MAT_REUSE_MATRIX product after a value change of X (MatScale,
   MatSetValues, ...) would multiply X's old values. Its numeric phase with a dense operand does
   re-form a transpose marked stale, in place (the same device arrays, which the sparse product's
   cuSPARSE descriptors keep pointing to): one such product with a one-column dense matrix does
   it. X: a matrix carrying MATSEQAIJCUSPARSE's or MATMPIAIJCUSPARSE's name (ours presented, or
   AIJCUSPARSE's own); for the MPI type its diagonal and off-diagonal blocks. */
PetscErrorCode RefreshExplicitTranspose(Mat X)
{
  PetscBool cu = PETSC_FALSE;
  Mat       D = nullptr, W = nullptr;

  PetscFunctionBegin;
  if (!X) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)X, MATMPIAIJCUSPARSE, &cu));
  if (cu) { /* MPIAIJCUSPARSE's products multiply the blocks' transposes */
    Mat blocks[2];
    PetscCall(SeqParts(X, blocks));
    for (Mat b : blocks) PetscCall(RefreshExplicitTranspose(b));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)X, MATSEQAIJCUSPARSE, &cu));
  if (!cu || X->boundtocpu || X->transupdated || !X->assembled || !X->rmap->n || !X->cmap->n) PetscFunctionReturn(PETSC_SUCCESS);
  const PetscBool form = X->form_explicit_transpose;
  X->form_explicit_transpose = PETSC_TRUE; /* (not MatSetOption(): turning it off destroys the transpose) */
  PetscErrorCode ierr = MatCreateDenseCUDA(PETSC_COMM_SELF, X->rmap->n, 1, X->rmap->n, 1, nullptr, &D);
  if (!ierr) ierr = MatZeroEntries(D);
  if (!ierr) ierr = MatTransposeMatMult(X, D, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &W);
  X->form_explicit_transpose = form;
  PetscCall(MatDestroy(&W));
  PetscCall(MatDestroy(&D));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The operand whose explicit transpose p's numeric phase reads when both operands are sparse
   AIJCUSPARSE matrices (MatProductSymbolic_ABC_Basic() runs PtAP as P^T (A P) and RARt as
   (R A) R^T: P and R), NULL when none (with a dense operand the numeric phase re-forms it). */
PetscErrorCode TransposedOperand(const Mat_Product *p, Mat *X)
{
  PetscBool a = PETSC_FALSE, b = PETSC_FALSE;

  PetscFunctionBegin;
  *X = nullptr;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)p->A, &a, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, ""));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)p->B, &b, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, ""));
  if (!a || !b) PetscFunctionReturn(PETSC_SUCCESS);
  switch (p->type) {
  case MATPRODUCT_AtB:
    *X = p->A;
    break;
  case MATPRODUCT_ABt:
  case MATPRODUCT_PtAP:
  case MATPRODUCT_RARt:
    *X = p->B;
    break;
  default:
    break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The operand of an MPI product of sparse CUDA matrices (ours or AIJCUSPARSE) whose local rows
   MPIAIJCUSPARSE's product code (MatProductSymbolic_MPIAIJBACKEND()) merges into one sequential
   copy (MatMPIAIJGetLocalMatMerge()) and multiplies through that copy's explicit transpose: P of
   a PtAP, and P of P^T P (an AtB whose two operands are one matrix, multiplied as the merged copy
   by itself); NULL for any other product. */
Mat MergedOperand(const Mat_Product *p, Mat C)
{
  PetscBool cu = PETSC_FALSE;

  if (!p || C->boundtocpu) return nullptr;
  if (p->type != MATPRODUCT_PtAP && !(p->type == MATPRODUCT_AtB && p->A == p->B)) return nullptr;
  if (PetscObjectTypeCompare((PetscObject)C, MATMPIAIJCUSPARSE, &cu) || !cu) return nullptr;
  for (Mat X : {p->A, p->B}) {
    PetscBool xcu = (PetscBool)(MPIGetState(X) != nullptr);
    if (!xcu && PetscObjectTypeCompare((PetscObject)X, MATMPIAIJCUSPARSE, &xcu)) return nullptr;
    if (!xcu || X->boundtocpu) return nullptr;
  }
  return p->B;
}

PetscErrorCode StampOf(Mat X, OperandStamp *stamp)
{
  Mat parts[3] = {X, nullptr, nullptr};

  PetscFunctionBegin;
  PetscCall(SeqParts(X, parts + 1));
  if (parts[1] == X) parts[1] = nullptr;
  *stamp = OperandStamp();
  for (int i = 0; i < 3; i++) {
    if (!parts[i]) continue;
    PetscCall(PetscObjectGetId((PetscObject)parts[i], &stamp->id[i]));
    PetscCall(PetscObjectStateGet((PetscObject)parts[i], &stamp->state[i]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether X differs from what *last recorded on any rank of C (the phases that follow are
   collective: a value written into one rank's block alone must not make that rank act alone);
   *last becomes X's stamp. */
PetscErrorCode ChangedOnAnyRank(Mat C, Mat X, OperandStamp *last, PetscBool *changed)
{
  OperandStamp now;
  int          mine, any;

  PetscFunctionBegin;
  PetscCall(StampOf(X, &now));
  mine  = !(now == *last);
  *last = now;
  PetscCallMPI(MPIU_Allreduce(&mine, &any, 1, MPI_INT, MPI_LOR, PetscObjectComm((PetscObject)C)));
  *changed = (PetscBool)(any != 0);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode RecordMergedOperandState(Mat C)
{
  const Mat_Product *p = C->product;
  Mat                P = MergedOperand(p, C);

  PetscFunctionBegin;
  if (P) PetscCall(StampOf(P, &PhasesOf()[p].merged));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Frees a product's intermediate data (MatProductReplaceMats() does the same before it re-runs
   a symbolic phase); the destroy function takes the data (3.22) or, from PETSc 3.23 on
   (PetscCtxDestroyFn), its address, as DeleteComposed() does. */
PetscErrorCode DestroyProductData(Mat_Product *p)
{
  PetscFunctionBegin;
#if PETSC_VERSION_LT(3, 23, 0)
  if (p->destroy) PetscCall((*p->destroy)(p->data));
#else
  if (p->destroy) PetscCall((*p->destroy)(&p->data));
#endif
  p->data    = nullptr;
  p->destroy = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ProductSymbolicOnBase(Mat C);

/* MPIAIJ's host PtAP of a host MPIAIJ A with P of ours (PETSc itself has no product of MPIAIJ and
   MPIAIJCUSPARSE) transposes P's blocks with P's own MatTranspose(), AIJCUSPARSE's, whose results
   keep their values on the device, and then reads host arrays of products of them directly:
   non-finite results at 2 ranks. Such a product runs on a host MPIAIJ copy of P instead, composed
   on C, refreshed (MatCopy()) before a phase when P's values changed on any rank and made anew for
   another P (OnBasePhase() puts it in P's place). *Ph: the copy, NULL for any other product. */
const char kHostCopyOfP[] = "PetscSpMVHostCopyOfP";

PetscErrorCode HostCopyOfP(Mat C, Mat *Ph)
{
  const Mat_Product *p     = C->product;
  PetscBool          hostA = PETSC_FALSE, changed;
  OperandStamp       last;

  PetscFunctionBegin;
  *Ph = nullptr;
  if (!p || p->type != MATPRODUCT_PtAP || !MPIGetState(p->B)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)p->A, MATMPIAIJ, &hostA));
  if (!hostA) PetscFunctionReturn(PETSC_SUCCESS);
  last = PhasesOf()[p].host_copy;
  PetscCall(ChangedOnAnyRank(C, p->B, &PhasesOf()[p].host_copy, &changed));
  PetscCall(PetscObjectQuery((PetscObject)C, kHostCopyOfP, (PetscObject *)Ph));
  if (*Ph && changed && last.id[0] == PhasesOf()[p].host_copy.id[0]) PetscCall(MatCopy(p->B, *Ph, SAME_NONZERO_PATTERN));
  else if (!*Ph || changed) { /* none yet, or the copy of another P (a product set up anew on C) */
    Mat h;
    PetscCall(MatConvert(p->B, MATAIJ, MAT_INITIAL_MATRIX, &h));
    PetscCall(PetscObjectCompose((PetscObject)C, kHostCopyOfP, (PetscObject)h));
    *Ph = h;
    PetscCall(MatDestroy(&h)); /* C holds it */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Runs a phase f of C's product as the base type's code expects it: P replaced by its host copy
   where HostCopyOfP() gives one, our operands presented as the base type. f may free C's product
   and set up another on C (MPIAIJ's MatMatTransposeMult reused): after f, p is written back only
   where P was replaced (a PtAP, whose phases keep their product), and read nowhere. */
template <class F>
PetscErrorCode OnBasePhase(Mat C, F &&f)
{
  Mat_Product *p = C->product;
  Mat          Ph, P = p->B;

  PetscFunctionBegin;
  PetscCall(HostCopyOfP(C, &Ph));
  if (Ph) p->B = Ph; /* a PtAP: its phases keep their product */
  const PetscErrorCode ierr = WithOperandsOnBase(p, f);
  if (Ph) p->B = P;
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A MAT_REUSE_MATRIX MPI PtAP or P^T P after a value change of P: MPIAIJCUSPARSE's numeric phase
   rewrites the values of its merged copy of P's local rows but multiplies that copy's explicit
   transpose as the symbolic phase formed it (PETSc 3.22 to 3.25), i.e. the product of the old P.
   The symbolic phase is run again instead (the intermediate data freed first, as
   MatProductReplaceMats() does for an operand of another type): the same result pattern, formed
   anew, so C's nonzero state increases. With P unchanged (GAMG's reused interpolation) nothing is
   redone. */
PetscErrorCode RedoSymbolicIfMergedOperandChanged(Mat C)
{
  Mat_Product *p = C->product;
  Mat          P = MergedOperand(p, C);
  PetscBool    changed;

  PetscFunctionBegin;
  if (!P) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(ChangedOnAnyRank(C, P, &PhasesOf()[p].merged, &changed));
  if (!changed) PetscFunctionReturn(PETSC_SUCCESS);
  const char *what = p->type == MATPRODUCT_PtAP ? "MatPtAP" : "MatTransposeMatMult(P, P)";
  PetscCall(PetscInfo(C, "P changed since the last phase of this %s: symbolic phase run again\n", what));
  PetscCall(DestroyProductData(p));
  PetscCall(ProductSymbolicOnBase(C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ProductNumericOnBase(Mat C)
{
  const Mat_Product *p = C->product;

  PetscFunctionBegin;
  PetscCall(RedoSymbolicIfMergedOperandChanged(C));
  auto it = PhasesOf().find(p);
  PetscCheck(p && it != PhasesOf().end() && it->second.numeric, PETSC_COMM_SELF, PETSC_ERR_PLIB, "product without its numeric phase");
  PetscErrorCode (*f)(Mat) = it->second.numeric;
  PetscCall(OnBasePhase(C, [&]() -> PetscErrorCode {
    Mat       X;
    PetscBool host;

    PetscFunctionBegin;
    PetscCall(TransposedOperand(p, &X));
    PetscCall(RefreshExplicitTranspose(X));
    PetscCall(HostValuesForHostProducts(p));
    PetscCall(HasHostOperand(p, &host));
    PetscCall(f(C)); /* p is not read after this: f may free it */
    if (host) PetscCall(HostResultNewer(C));
    PetscFunctionReturn(PETSC_SUCCESS);
  }));
  /* a phase may install another numeric one (MatProductNumeric_ABC_Basic() puts itself back) */
  if (C->product == p && C->ops->productnumeric && C->ops->productnumeric != ProductNumericOnBase) {
    PhasesOf()[p].numeric  = C->ops->productnumeric;
    C->ops->productnumeric = ProductNumericOnBase;
  }
  if (C->product == p) PetscCall(RecordMergedOperandState(C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ProductSymbolicOnBase(Mat C)
{
  const Mat_Product *p = C->product;
  auto               it = PhasesOf().find(p);

  PetscFunctionBegin;
  PetscCheck(p && it != PhasesOf().end() && it->second.symbolic, PETSC_COMM_SELF, PETSC_ERR_PLIB, "product without its symbolic phase");
  PetscErrorCode (*f)(Mat) = it->second.symbolic;
  PetscCall(OnBasePhase(C, [&]() -> PetscErrorCode {
    PetscFunctionBegin;
    PetscCall(HostValuesForHostProducts(p));
    PetscCall(f(C));
    PetscFunctionReturn(PETSC_SUCCESS);
  }));
  /* the symbolic phase installs the numeric one (C->product may be another product now: the
     one f set up) */
  if (C->product == p && C->ops->productnumeric && C->ops->productnumeric != ProductNumericOnBase) {
    PhasesOf()[p].numeric  = C->ops->productnumeric;
    C->ops->productnumeric = ProductNumericOnBase;
  }
  if (C->product == p) PetscCall(RecordMergedOperandState(C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The MatProductSetFromOptions_<A>_<B>[_<C>]_C function for the type names the operands carry
   now (presented: the base type's), looked up on A, B, C as PETSc does. */
PetscErrorCode ComposedSetFromOptions(const Mat_Product *p, PetscErrorCode (**f)(Mat))
{
  const Mat X[3] = {p->A, p->B, p->type == MATPRODUCT_ABC ? p->C : nullptr};
  char      name[256];

  PetscFunctionBegin;
  *f = nullptr;
  PetscCall(PetscStrncpy(name, "MatProductSetFromOptions_", sizeof(name)));
  for (int i = 0; i < 3 && X[i]; i++) {
    if (i) PetscCall(PetscStrlcat(name, "_", sizeof(name)));
    PetscCall(PetscStrlcat(name, ((PetscObject)X[i])->type_name, sizeof(name)));
  }
  PetscCall(PetscStrlcat(name, "_C", sizeof(name)));
  for (int i = 0; i < 3 && X[i] && !*f; i++) PetscCall(PetscObjectQueryFunction((PetscObject)X[i], name, f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

PetscErrorCode MatProductSetFromOptions_SpMVCUDA(Mat C)
{
  const Mat_Product *p = C->product;

  PetscFunctionBegin;
  /* what PETSc's MatProductSetFromOptions() would choose if our operands were of the base type:
     one function common to all operands, else the one composed for their type names; failing
     those, the first operand's type's and the second's (they fall back to the host code, as
     AIJCUSPARSE with a host AIJ operand does) */
  PetscCall(WithOperandsOnBase(p, [&]() -> PetscErrorCode {
    PetscErrorCode (*fA)(Mat) = SetFromOptionsOf(p->A), (*fB)(Mat) = SetFromOptionsOf(p->B);
    PetscErrorCode (*fC)(Mat) = p->type == MATPRODUCT_ABC ? SetFromOptionsOf(p->C) : fA;
    PetscErrorCode (*f)(Mat)  = nullptr;

    PetscFunctionBegin;
    if (fA && fA == fB && fA == fC) f = fA;
    else PetscCall(ComposedSetFromOptions(p, &f));
    if (f) PetscCall(f(C));
    if (!C->ops->productsymbolic && fA && fA != f) PetscCall(fA(C));
    if (!C->ops->productsymbolic && fB && fB != f && fB != fA) PetscCall(fB(C));
    PetscFunctionReturn(PETSC_SUCCESS);
  }));
  /* PETSc's fallbacks (dense operands, MatProductSymbolic_Unsafe()) follow when nothing was set */
  if (C->ops->productsymbolic && C->ops->productsymbolic != ProductSymbolicOnBase) {
    Phases ph;
    ph.symbolic             = C->ops->productsymbolic;
    PhasesOf()[p]           = ph;
    C->ops->productsymbolic = ProductSymbolicOnBase;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CopyAIJCusparseValues(Mat A, Mat B, PetscInt nz)
{
  BaseNames          ba, bb;
  const PetscScalar *a = nullptr;
  PetscScalar       *b = nullptr;

  PetscFunctionBegin;
  PetscCall(PresentAsBase(A, &ba)); /* (the accessors check the type name in debugging builds) */
  PetscCall(PresentAsBase(B, &bb));
  PetscErrorCode ierr = MatSeqAIJCUSPARSEGetArrayRead(A, &a);
  if (!ierr) ierr = MatSeqAIJCUSPARSEGetArrayWrite(B, &b);
  if (!ierr && nz) ierr = cudaMemcpy(b, a, (size_t)nz * sizeof(PetscScalar), cudaMemcpyDeviceToDevice) == cudaSuccess ? PETSC_SUCCESS : PETSC_ERR_GPU;
  if (b) PetscCall(MatSeqAIJCUSPARSERestoreArrayWrite(B, &b));
  if (a) PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(A, &a));
  PetscCall(RestoreTypeNames(B, bb));
  PetscCall(RestoreTypeNames(A, ba));
  PetscCheck(ierr != PETSC_ERR_GPU, PETSC_COMM_SELF, PETSC_ERR_GPU, "copying %" PetscInt_FMT " values on the device failed", nz);
  PetscCall(ierr);
  PetscCall(PetscObjectStateIncrease((PetscObject)B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ComposeProductFunctions(Mat A, const TypeInfo *t, PetscBool on)
{
  PetscBool   mpi  = (PetscBool)(MPIGetState(A) != nullptr);
  const char *self = mpi ? t->mpi : t->seq;
  const char *others_seq[] = {MATSEQAIJCUSPARSE, MATSEQAIJ, MATSEQDENSECUDA, MATSEQDENSE};
  const char *others_mpi[] = {MATMPIAIJCUSPARSE, MATMPIAIJ, MATMPIDENSECUDA, MATMPIDENSE};
  char        name[256];

  PetscFunctionBegin;
  /* our operands among themselves share MatProductSetFromOptions_SpMVCUDA (A->ops); with another
     type PETSc looks these up */
  for (const char *other : mpi ? others_mpi : others_seq) {
    PetscCall(PetscSNPrintf(name, sizeof(name), "MatProductSetFromOptions_%s_%s_C", self, other));
    PetscCall(PetscObjectComposeFunction((PetscObject)A, name, on ? MatProductSetFromOptions_SpMVCUDA : nullptr));
    PetscCall(PetscSNPrintf(name, sizeof(name), "MatProductSetFromOptions_%s_%s_C", other, self));
    PetscCall(PetscObjectComposeFunction((PetscObject)A, name, on ? MatProductSetFromOptions_SpMVCUDA : nullptr));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

namespace {

/* MATSOLVERCUSPARSE's factor constructor for MATSEQAIJCUSPARSE, by factor type (index
   MatFactorType), as MatSolverTypeGet() returns it. */
PetscErrorCode (*cusparse_factor[MAT_FACTOR_NUM_TYPES])(Mat, MatFactorType, Mat *) = {};

/* The factor's phases on the original matrix presented as the base type. The base type's
   operations of the factor live in a container on it. */
struct FactorOps {
  struct _MatOps base;
};
const char kFactorKey[] = "PetscSpMVFactorOps";

PetscErrorCode Rewrap(Mat F);

template <class Fn, Fn _MatOps::*M>
struct OnBaseFactor;
template <class... Args, PetscErrorCode (*_MatOps::*M)(Mat, Mat, Args...)>
struct OnBaseFactor<PetscErrorCode (*)(Mat, Mat, Args...), M> {
  static PetscErrorCode Call(Mat F, Mat A, Args... args)
  {
    FactorOps *fo = nullptr;

    PetscFunctionBegin;
    PetscCall(PetscObjectContainerQuery((PetscObject)F, kFactorKey, (void **)&fo));
    PetscCheck(fo && fo->base.*M, PETSC_COMM_SELF, PETSC_ERR_PLIB, "factor without its base operation");
    BaseNames bn;
    PetscCall(PresentAsBase(A, &bn));
    const PetscErrorCode ierr = (fo->base.*M)(F, A, args...);
    PetscCall(RestoreTypeNames(A, bn));
    PetscCall(ierr);
    PetscCall(Rewrap(F)); /* a symbolic phase installs the numeric one */
    PetscFunctionReturn(PETSC_SUCCESS);
  }
};
#define PSPMV_FACTOR_OP(op) OnBaseFactor<decltype(_MatOps::op), &_MatOps::op>::Call

/* The factor's phases that take the original matrix, wrapped (once each). */
PetscErrorCode Rewrap(Mat F)
{
  FactorOps *fo = nullptr;

  PetscFunctionBegin;
  PetscCall(PetscObjectContainerQuery((PetscObject)F, kFactorKey, (void **)&fo));
#define PSPMV_REWRAP(op) \
  if (F->ops->op && F->ops->op != PSPMV_FACTOR_OP(op)) { \
    fo->base.op = F->ops->op; \
    F->ops->op  = PSPMV_FACTOR_OP(op); \
  }
  PSPMV_REWRAP(lufactorsymbolic)
  PSPMV_REWRAP(ilufactorsymbolic)
  PSPMV_REWRAP(choleskyfactorsymbolic)
  PSPMV_REWRAP(iccfactorsymbolic)
  PSPMV_REWRAP(lufactornumeric)
  PSPMV_REWRAP(choleskyfactornumeric)
#undef PSPMV_REWRAP
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatGetFactor() of our seq CUDA types with MATSOLVERCUSPARSE: AIJCUSPARSE's factor. */
PetscErrorCode GetFactor_SpMVCUDA(Mat A, MatFactorType ftype, Mat *F)
{
  FactorOps *fo = nullptr;

  PetscFunctionBegin;
  PetscCheck(cusparse_factor[ftype], PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "MATSOLVERCUSPARSE has no %s factorization", MatFactorTypes[ftype]);
  BaseNames bn;
  PetscCall(PresentAsBase(A, &bn));
  const PetscErrorCode ierr = cusparse_factor[ftype](A, ftype, F);
  PetscCall(RestoreTypeNames(A, bn));
  PetscCall(ierr);
  PetscCallCXX(fo = new FactorOps);
  fo->base = *(*F)->ops;
  PetscCall(PetscObjectContainerCompose((PetscObject)*F, kFactorKey, fo, DeleteComposed<FactorOps>));
  PetscCall(Rewrap(*F));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

PetscErrorCode RegisterCusparseFactors(const TypeInfo *t)
{
  const MatFactorType ftypes[] = {MAT_FACTOR_LU, MAT_FACTOR_CHOLESKY, MAT_FACTOR_ILU, MAT_FACTOR_ICC};

  PetscFunctionBegin;
  for (MatFactorType ft : ftypes) {
    PetscBool found, foundmtype;
    PetscCall(MatSolverTypeGet(MATSOLVERCUSPARSE, MATSEQAIJCUSPARSE, ft, &found, &foundmtype, &cusparse_factor[ft]));
    if (cusparse_factor[ft]) PetscCall(MatSolverTypeRegister(MATSOLVERCUSPARSE, t->seq, ft, GetFactor_SpMVCUDA));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CheckCudaUsable(const char *type)
{
  int         count = 0;
  cudaError_t cerr  = cudaGetDeviceCount(&count);

  PetscFunctionBegin;
  if (cerr != cudaSuccess) (void)cudaGetLastError(); /* not sticky: clear it */
  PetscCheck(cerr == cudaSuccess && count > 0, PETSC_COMM_SELF, PETSC_ERR_SUP_SYS,
             "the CUDA types of petscspmv (here %s) need an NVIDIA GPU, and CUDA finds none (%s: %s); on a machine without one use the host types rgcsr or packsell (the same layouts with host kernels)",
             type, cerr == cudaSuccess ? "no device" : cudaGetErrorName(cerr), cerr == cudaSuccess ? "0 devices" : cudaGetErrorString(cerr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
