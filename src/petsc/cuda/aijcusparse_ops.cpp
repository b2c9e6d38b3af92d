// What makes AIJCUSPARSE's device code work for our CUDA types (AIJCUSPARSE underneath) where
// PETSc dispatches by type name: matrix products (MatProductSetFromOptions and the functions it
// looks up by the operands' type names; AIJCUSPARSE's product code checks exact type names, so our
// operands are presented as the base type through the setup, symbolic and numeric phases: the
// results are AIJCUSPARSE or dense CUDA matrices, as with aijcusparse operands) and the
// factorizations (MATSOLVERCUSPARSE registered for our seq type names; the factor's phases see
// our matrix presented as the base type, which PETSc's debugging builds check).
#include <petscdevice_cuda.h>

#include "spmvimpl.hpp"
#include "petsc_fixes/petsc_fixes.hpp"
#include "petsc_fixes/private_fields.hpp"

namespace pspmv
{
namespace glue
{

int ProductOperandsOfOurs(const Mat_Product *p, Mat ours[3])
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

namespace
{

/* Runs f with the product's operands of ours presented as the base type. */
template <class F>
PetscErrorCode WithOperandsOnBase(const Mat_Product *p, F &&f)
{
  Mat       ours[3];
  BaseNames bn[3];
  const int n = ProductOperandsOfOurs(p, ours);

  PetscFunctionBegin;
  for (int i = 0; i < n; i++) PetscCall(PresentAsBase(ours[i], &bn[i]));
  const PetscErrorCode ierr = f();
  for (int i = 0; i < n; i++) PetscCall(RestoreTypeNames(ours[i], bn[i]));
  PetscCall(ierr);
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

/* Our record of one product with operands of ours: the base type's symbolic and numeric phases
   and what the PETSc fixes remember between phases. From the setup to the symbolic phase it waits
   composed on the result and on operand A (PETSc refuses MatProductSymbolic() on a product with
   data, and MatProductSymbolic_ABC_Basic() runs an inner product's phase on the outer result with
   the inner product swapped in: the result at the setup is another matrix); from the symbolic
   phase on it is the product's data, in front of the base type's (base), which is put back on the
   product around each phase and its viewer. It goes with the product (MatProductClear(),
   MatProductReplaceMats(), MatProductSetType() destroy it through the product's destroy). */
/* The numeric functions of a result's ops, (Mat, Mat, Mat), that PETSc calls directly rather than
   through the product's numeric phase: MatProductNumeric_ABC_Unsafe() (PtAP, RARt alike) runs the
   AB product it set up on the same product with (*C->ops->matmultnumeric)(A, BC, C). */
constexpr int kDirectNumeric = 5;
using DirectNumericFn        = PetscErrorCode (*)(Mat, Mat, Mat);
DirectNumericFn *DirectNumericOp(Mat C, int k)
{
  switch (k) {
  case 0:
    return &C->ops->matmultnumeric;
  case 1:
    return &C->ops->mattransposemultnumeric;
  case 2:
    return &C->ops->transposematmultnumeric;
  case 3:
    return &C->ops->ptapnumeric;
  default:
    return &C->ops->rartnumeric;
  }
}

struct ProductRecord {
  const Mat_Product *product      = nullptr;
  PetscErrorCode (*symbolic)(Mat) = nullptr, (*numeric)(Mat) = nullptr;
  /* the base type's numeric functions of C's ops that PETSc's *_Unsafe products call directly
     (DirectNumeric) */
  PetscErrorCode (*direct[kDirectNumeric])(Mat, Mat, Mat) = {};
  petsc_fixes::ProductStamps  stamps;
  private_fields::ProductData base;
};
const char kPendingKey[] = "PetscSpMVProductSetUp";

/* The product's destroy while our record is its data (3.22: the data; from 3.23 on its address). */
#if PETSC_VERSION_LT(3, 23, 0)
PetscErrorCode DestroyRecord(void *ctx)
{
  ProductRecord *rec = static_cast<ProductRecord *>(ctx);
#else
PetscErrorCode DestroyRecord(PetscSpMVCtxRt ctx)
{
  ProductRecord *rec                          = *static_cast<ProductRecord **>((void *)ctx);
  *static_cast<ProductRecord **>((void *)ctx) = nullptr;
#endif

  PetscFunctionBegin;
  if (!rec) PetscFunctionReturn(PETSC_SUCCESS);
  const PetscErrorCode ierr = private_fields::DestroyProductData(&rec->base);
  delete rec;
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Our record when it is p's data, else NULL. */
ProductRecord *RecordOf(const Mat_Product *p)
{
  if (!p || p->destroy != (private_fields::ProductDestroyFn)DestroyRecord) return nullptr;
  return static_cast<ProductRecord *>(p->data);
}

PetscErrorCode ViewRecord(Mat C, PetscViewer viewer);

/* rec (taken off) in front of p's data as the base type left them. */
void Attach(Mat_Product *p, ProductRecord *rec)
{
  private_fields::ProductData ours;

  rec->base    = private_fields::TakeProductData(p);
  ours.data    = rec;
  ours.destroy = (private_fields::ProductDestroyFn)DestroyRecord;
  ours.view    = rec->base.view ? ViewRecord : nullptr;
  private_fields::PutProductData(p, ours);
}

/* p's record taken off p (NULL when p has none), the base type's data put back on p. */
ProductRecord *Detach(Mat_Product *p)
{
  ProductRecord *rec = RecordOf(p);

  if (rec) {
    (void)private_fields::TakeProductData(p);
    private_fields::PutProductData(p, rec->base);
    rec->base = private_fields::ProductData();
  }
  return rec;
}

/* The base type's viewer of the product (MPIAIJ's PtAP reads its data). */
PetscErrorCode ViewRecord(Mat C, PetscViewer viewer)
{
  Mat_Product   *p   = C->product;
  ProductRecord *rec = Detach(p);

  PetscFunctionBegin;
  const PetscErrorCode ierr = p->view ? (*p->view)(C, viewer) : PETSC_SUCCESS;
  if (rec) Attach(p, rec);
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* At the setup: rec waits on C and on A for the symbolic phase (C holds it). */
PetscErrorCode ComposePending(Mat C, ProductRecord *rec)
{
  PetscObject container;

  PetscFunctionBegin;
  PetscCall(PetscObjectContainerCompose((PetscObject)C, kPendingKey, rec, DeleteComposed<ProductRecord>));
  PetscCall(PetscObjectQuery((PetscObject)C, kPendingKey, &container));
  if (rec->product->A && rec->product->A != C) PetscCall(PetscObjectCompose((PetscObject)rec->product->A, kPendingKey, container));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* At the symbolic phase: a copy of the record set up for C's product (waiting on C or on an
   operand), removed from where it waited. */
PetscErrorCode TakePending(Mat C, ProductRecord **rec)
{
  const Mat_Product *p       = C->product;
  ProductRecord     *pending = nullptr;
  const Mat          where[] = {C, p->A, p->B};

  PetscFunctionBegin;
  *rec = nullptr;
  for (Mat X : where) {
    ProductRecord *r = nullptr;
    if (!X || pending) continue;
    PetscCall(PetscObjectContainerQuery((PetscObject)X, kPendingKey, (void **)&r));
    if (r && r->product == p) pending = r;
  }
  PetscCheck(pending, PETSC_COMM_SELF, PETSC_ERR_PLIB, "product without its symbolic phase");
  PetscCallCXX(*rec = new ProductRecord(*pending));
  for (Mat X : where) {
    ProductRecord *r = nullptr;
    if (!X) continue;
    PetscCall(PetscObjectContainerQuery((PetscObject)X, kPendingKey, (void **)&r));
    if (r == pending) PetscCall(PetscObjectCompose((PetscObject)X, kPendingKey, nullptr));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Runs a phase f of C's product as the base type's code expects it: P replaced by its host copy
   where petsc_fixes::HostCopyOfP() gives one, our operands presented as the base type. f may free
   C's product and set up another on C (MPIAIJ's MatMatTransposeMult reused): after f, p is
   written back only where P was replaced (a PtAP, whose phases keep their product). */
template <class F>
PetscErrorCode OnBasePhase(Mat C, petsc_fixes::ProductStamps *stamps, F &&f)
{
  Mat_Product *p = C->product;
  Mat          Ph, P = p->B;

  PetscFunctionBegin;
  PetscCall(petsc_fixes::HostCopyOfP(C, stamps, &Ph));
  if (Ph) (void)private_fields::SwapProductB(p, Ph);
  const PetscErrorCode ierr = WithOperandsOnBase(p, f);
  if (Ph) (void)private_fields::SwapProductB(p, P);
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ProductNumericOnBase(Mat C);

template <int K>
PetscErrorCode            DirectNumericOnBase(Mat A, Mat B, Mat C);
constexpr DirectNumericFn kOurDirect[kDirectNumeric] = {DirectNumericOnBase<0>, DirectNumericOnBase<1>, DirectNumericOnBase<2>, DirectNumericOnBase<3>, DirectNumericOnBase<4>};

/* While rec is p's data: the directly called numeric functions that p's symbolic phase installed
   in C's ops are ours, the base type's kept in rec (WrapDirectNumeric()); while a base phase runs
   they are the base type's again (UnwrapDirectNumeric()), which call each other through C's ops.
   Functions the phase did not install (a device product installs only its numeric phase: the type's
   defaults) and those of an enclosing product's record are left alone. */
void WrapDirectNumeric(Mat C, ProductRecord *rec)
{
  for (int k = 0; k < kDirectNumeric; k++) {
    DirectNumericFn *op = DirectNumericOp(C, k);
    if (rec->direct[k] && *op == rec->direct[k]) *op = kOurDirect[k];
  }
}
void UnwrapDirectNumeric(Mat C, const ProductRecord *rec)
{
  for (int k = 0; k < kDirectNumeric; k++) {
    DirectNumericFn *op = DirectNumericOp(C, k);
    if (rec->direct[k] && *op == kOurDirect[k]) *op = rec->direct[k];
  }
}
/* After p's symbolic phase: the functions it installed (changed from before[], or the ones rec
   kept from its previous symbolic phase, set again) kept in rec. */
void KeepInstalledDirectNumeric(Mat C, ProductRecord *rec, const DirectNumericFn before[kDirectNumeric])
{
  for (int k = 0; k < kDirectNumeric; k++) {
    const DirectNumericFn now = *DirectNumericOp(C, k);
    rec->direct[k]            = now && now != kOurDirect[k] && (now != before[k] || now == rec->direct[k]) ? now : nullptr;
  }
}

/* C->ops' numeric function K called directly (kDirectNumeric), outside a phase of ours: the base
   type's with C's product data and ops the base type's while it runs. */
template <int K>
PetscErrorCode DirectNumericOnBase(Mat A, Mat B, Mat C)
{
  Mat_Product   *p   = C->product;
  ProductRecord *rec = RecordOf(p);

  PetscFunctionBegin;
  PetscCheck(rec && rec->direct[K], PETSC_COMM_SELF, PETSC_ERR_PLIB, "product without its numeric function");
  (void)Detach(p);
  UnwrapDirectNumeric(C, rec);
  const PetscErrorCode ierr = rec->direct[K](A, B, C);
  if (C->product == p && !RecordOf(p)) {
    WrapDirectNumeric(C, rec);
    Attach(p, rec);
  } else delete rec;
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One phase (symbolic or numeric) of C's product with rec taken off it (p's data are the base
   type's): the base type's phase with the PETSc fixes around it; then rec becomes p's data again
   (deleted when the phase freed p or set up another product with its own record there). */
PetscErrorCode RunPhase(Mat C, ProductRecord *rec, PetscBool symbolic)
{
  Mat_Product *p           = C->product;
  PetscErrorCode (*f)(Mat) = symbolic ? rec->symbolic : rec->numeric;

  PetscFunctionBegin;
  DirectNumericFn before[kDirectNumeric];
  UnwrapDirectNumeric(C, rec);
  for (int k = 0; k < kDirectNumeric; k++) before[k] = *DirectNumericOp(C, k);
  PetscErrorCode ierr = OnBasePhase(C, &rec->stamps, [&]() -> PetscErrorCode {
    PetscBool host;

    PetscFunctionBegin;
    if (!symbolic) PetscCall(petsc_fixes::RefreshTransposeForNumeric(p));
    PetscCall(petsc_fixes::HostValuesForHostProducts(p));
    PetscCall(petsc_fixes::HasHostOperand(p, &host));
    PetscCall(f(C)); /* p is not read after this: f may free it */
    if (!symbolic) PetscCall(petsc_fixes::HostResultNewer(C, host));
    PetscFunctionReturn(PETSC_SUCCESS);
  });
  if (C->product != p) {
    delete rec;
    PetscCall(ierr);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (RecordOf(p)) {
    delete rec;
    PetscCall(ierr);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* a symbolic phase installs the numeric one; a numeric phase may install another
     (MatProductNumeric_ABC_Basic() puts itself back) */
  if (!ierr && C->ops->productnumeric && C->ops->productnumeric != ProductNumericOnBase) {
    rec->numeric           = C->ops->productnumeric;
    C->ops->productnumeric = ProductNumericOnBase;
  }
  if (!ierr && symbolic) KeepInstalledDirectNumeric(C, rec, before);
  if (!ierr) WrapDirectNumeric(C, rec);
  if (!ierr) ierr = petsc_fixes::RecordMergedOperand(C, &rec->stamps);
  Attach(p, rec);
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ProductSymbolicOnBase(Mat C)
{
  ProductRecord *rec;

  PetscFunctionBegin;
  PetscCall(TakePending(C, &rec));
  PetscCall(RunPhase(C, rec, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ProductNumericOnBase(Mat C)
{
  Mat_Product   *p   = C->product;
  ProductRecord *rec = RecordOf(p);
  PetscBool      redo;

  PetscFunctionBegin;
  PetscCheck(rec && rec->numeric, PETSC_COMM_SELF, PETSC_ERR_PLIB, "product without its numeric phase");
  PetscCall(petsc_fixes::SymbolicRedoNeeded(C, &rec->stamps, &redo));
  if (redo) { /* the intermediate data freed first, as MatProductReplaceMats() does */
    const char *what = p->type == MATPRODUCT_PtAP ? "MatPtAP" : "MatTransposeMatMult(P, P)";
    PetscCall(PetscInfo(C, "P changed since the last phase of this %s: symbolic phase run again\n", what));
    (void)Detach(p);
    private_fields::ProductData base = private_fields::TakeProductData(p);
    const PetscErrorCode        ierr = private_fields::DestroyProductData(&base);
    if (ierr) Attach(p, rec);
    PetscCall(ierr);
    PetscCall(RunPhase(C, rec, PETSC_TRUE));
    rec = RecordOf(p);
    PetscCheck(C->product == p && rec && rec->numeric, PETSC_COMM_SELF, PETSC_ERR_PLIB, "product without its numeric phase after its symbolic phase");
  }
  (void)Detach(p);
  PetscCall(RunPhase(C, rec, PETSC_FALSE));
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
    ProductRecord *rec;
    PetscCallCXX(rec = new ProductRecord);
    rec->product  = p;
    rec->symbolic = C->ops->productsymbolic;
    PetscCall(ComposePending(C, rec));
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
  PetscBool   mpi          = (PetscBool)(MPIGetState(A) != nullptr);
  const char *self         = mpi ? t->mpi : t->seq;
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

namespace
{

/* MATSOLVERCUSPARSE's factor constructor for MATSEQAIJCUSPARSE of factor type ftype (NULL when it
   has none), asked from PETSc's solver registry at each use. */
PetscErrorCode CusparseFactor(MatFactorType ftype, PetscErrorCode (**create)(Mat, MatFactorType, Mat *))
{
  PetscBool found, foundmtype;

  PetscFunctionBegin;
  *create = nullptr;
  PetscCall(MatSolverTypeGet(MATSOLVERCUSPARSE, MATSEQAIJCUSPARSE, ftype, &found, &foundmtype, create));
  PetscFunctionReturn(PETSC_SUCCESS);
}

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
  PetscErrorCode (*create)(Mat, MatFactorType, Mat *);

  PetscFunctionBegin;
  PetscCall(CusparseFactor(ftype, &create));
  PetscCheck(create, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "MATSOLVERCUSPARSE has no %s factorization", MatFactorTypes[ftype]);
  BaseNames bn;
  PetscCall(PresentAsBase(A, &bn));
  const PetscErrorCode ierr = create(A, ftype, F);
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
    PetscErrorCode (*create)(Mat, MatFactorType, Mat *);
    PetscCall(CusparseFactor(ft, &create));
    if (create) PetscCall(MatSolverTypeRegister(MATSOLVERCUSPARSE, t->seq, ft, GetFactor_SpMVCUDA));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CheckCudaUsable(const char *type)
{
  int         count = 0;
  cudaError_t cerr  = cudaGetDeviceCount(&count);

  PetscFunctionBegin;
  if (cerr != cudaSuccess) (void)cudaGetLastError(); /* not sticky: clear it */
  PetscCheck(cerr == cudaSuccess && count > 0, PETSC_COMM_SELF, PETSC_ERR_SUP_SYS, "the CUDA types of petscspmv (here %s) need an NVIDIA GPU, and CUDA finds none (%s: %s); on a machine without one use the host types rgcsr or packsell (the same layouts with host kernels)", type, cerr == cudaSuccess ? "no device" : cudaGetErrorName(cerr), cerr == cudaSuccess ? "0 devices" : cudaGetErrorString(cerr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
