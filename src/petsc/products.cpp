// Sparse matrix products (MatMatMult, MatPtAP, ... as GAMG uses them) with MPI matrices of ours.
// MPIAIJ's product code works on their data but refuses type names that do not start with
// "mpiaij"; every phase (set-up, symbolic, numeric) therefore runs with our operands under the
// MPIAIJ name. The phases MPIAIJ picks are kept in composed functions of the product matrix.
#include "spmvimpl.hpp"

namespace pspmv {
namespace glue {

namespace {

const char *const kSymbolic = "MatProductSymbolic_SpMV_C";
const char *const kNumeric  = "MatProductNumeric_SpMV_C";

struct Renamed {
  Mat   mats[9]  = {};
  char *names[9] = {};
  int   n        = 0;
};

PetscErrorCode Rename(Renamed *r, Mat X, const char *aijname)
{
  PetscFunctionBegin;
  PetscCall(PetscStrallocpy(((PetscObject)X)->type_name, &r->names[r->n]));
  PetscCall(PetscObjectChangeTypeName((PetscObject)X, aijname));
  r->mats[r->n++] = X;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Gives the MPI operands of ours of C's product the MPIAIJ name, and their blocks the SeqAIJ
   name (MPIAIJ's code creates work matrices "of the type of P's diagonal block" after filling
   them, which MatSetType() would empty for a name that does not start with "seqaij"). */
PetscErrorCode RenameOperands(Mat C, Renamed *r)
{
  Mat_Product *p = C->product;
  Mat          ops[3];

  PetscFunctionBegin;
  PetscCheck(p, PETSC_COMM_SELF, PETSC_ERR_PLIB, "matrix without a product");
  ops[0] = p->A;
  ops[1] = p->B;
  ops[2] = p->C;
  for (Mat X : ops) {
    PetscBool seen = PETSC_FALSE;
    if (!X || !MPIGetState(X)) continue;
    for (int k = 0; k < r->n; k++) seen = (PetscBool)(seen || r->mats[k] == X);
    if (seen) continue;
    PetscCall(Rename(r, X, MATMPIAIJ));
    {
      Mat blocks[2];
      PetscCall(MatMPIAIJGetSeqAIJ(X, &blocks[0], &blocks[1], nullptr));
      for (Mat blk : blocks)
        if (blk && SeqGetState(blk)) PetscCall(Rename(r, blk, MATSEQAIJ));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode RestoreNames(Renamed *r)
{
  PetscFunctionBegin;
  for (int k = r->n - 1; k >= 0; k--) {
    PetscCall(PetscObjectChangeTypeName((PetscObject)r->mats[k], r->names[k]));
    PetscCall(PetscFree(r->names[k]));
  }
  r->n = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* fn(C) with the operands renamed; the names come back whatever fn returns. */
PetscErrorCode CallRenamed(Mat C, PetscErrorCode (*fn)(Mat))
{
  Renamed        r;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(RenameOperands(C, &r));
  ierr = fn(C);
  PetscCall(RestoreNames(&r));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ProductNumeric(Mat C)
{
  PetscErrorCode (*fn)(Mat) = nullptr;

  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)C, kNumeric, &fn));
  PetscCheck(fn, PetscObjectComm((PetscObject)C), PETSC_ERR_PLIB, "product without its numeric phase");
  PetscCall(CallRenamed(C, fn));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ProductSymbolic(Mat C)
{
  PetscErrorCode (*fn)(Mat) = nullptr;

  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)C, kSymbolic, &fn));
  PetscCheck(fn, PetscObjectComm((PetscObject)C), PETSC_ERR_PLIB, "product without its symbolic phase");
  PetscCall(CallRenamed(C, fn));
  if (C->ops->productnumeric && C->ops->productnumeric != ProductNumeric) {
    PetscCall(PetscObjectComposeFunction((PetscObject)C, kNumeric, C->ops->productnumeric));
    C->ops->productnumeric = ProductNumeric;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc's choice for C's product (MatProductSetFromOptions_Private()), made as if our MPI
   operands were MPIAIJ: their own AIJ function when every operand has the same one, else the
   function composed for the operands' (renamed) type names, e.g. "..._mpiaij_mpidense_C". */
PetscErrorCode ChooseAsAIJ(Mat C)
{
  Mat_Product *p = C->product;
  Mat          ops[3];
  PetscErrorCode (*f[3])(Mat) = {nullptr, nullptr, nullptr};
  PetscErrorCode (*fn)(Mat)   = nullptr;
  int          n              = p->C && p->type == MATPRODUCT_ABC ? 3 : 2;
  char         name[256];

  PetscFunctionBegin;
  ops[0] = p->A;
  ops[1] = p->B;
  ops[2] = p->C;
  for (int k = 0; k < n; k++) f[k] = MPIGetState(ops[k]) ? MPIGetState(ops[k])->aijops.productsetfromoptions : ops[k]->ops->productsetfromoptions;
  if (f[0] && f[0] == f[1] && (n == 2 || f[0] == f[2])) {
    PetscCall((*f[0])(C));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscStrncpy(name, "MatProductSetFromOptions", sizeof(name)));
  for (int k = 0; k < n; k++) {
    PetscCall(PetscStrlcat(name, "_", sizeof(name)));
    PetscCall(PetscStrlcat(name, ((PetscObject)ops[k])->type_name, sizeof(name)));
  }
  PetscCall(PetscStrlcat(name, "_C", sizeof(name)));
  for (int k = 0; k < n && !fn; k++) PetscCall(PetscObjectQueryFunction((PetscObject)ops[k], name, &fn));
  if (fn) PetscCall((*fn)(C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

PetscErrorCode MatProductSetFromOptions_MPISpMV(Mat C)
{
  PetscFunctionBegin;
  PetscCall(CallRenamed(C, ChooseAsAIJ));
  if (C->ops->productsymbolic && C->ops->productsymbolic != ProductSymbolic) {
    PetscCall(PetscObjectComposeFunction((PetscObject)C, kSymbolic, C->ops->productsymbolic));
    C->ops->productsymbolic = ProductSymbolic;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ComposeProductFunctions(Mat A, const char *self, PetscBool on)
{
  const char *partners[] = {MATMPIAIJ, MATMPIDENSE};
  char        name[256];

  PetscFunctionBegin;
  for (const char *x : partners) {
    PetscCall(PetscSNPrintf(name, sizeof(name), "MatProductSetFromOptions_%s_%s_C", self, x));
    PetscCall(PetscObjectComposeFunction((PetscObject)A, name, on ? MatProductSetFromOptions_MPISpMV : nullptr));
    PetscCall(PetscSNPrintf(name, sizeof(name), "MatProductSetFromOptions_%s_%s_C", x, self));
    PetscCall(PetscObjectComposeFunction((PetscObject)A, name, on ? MatProductSetFromOptions_MPISpMV : nullptr));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
