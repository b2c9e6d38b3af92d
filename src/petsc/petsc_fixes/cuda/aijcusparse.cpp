// PETSc's AIJCUSPARSE: its transpose products and the phases of its products with sparse or host
// operands.
#include <petscdevice_cuda.h>

#include "petsc_fixes/petsc_fixes.hpp"
#include "petsc_fixes/private_fields.hpp"

namespace pspmv
{
namespace glue
{
namespace petsc_fixes
{

/* PETSc 3.22.5 to 3.25.4 (MatMultTransposeAdd_SeqAIJCUSPARSE). Test: gpu_petsc_matops_np1
   (-ops MatMultTranspose: MatMultTransposeAdd with z != y). Reproducer (aijcusparse): VecSet(z,
   1); MatMultTransposeAdd(A, x, y, z): z = A^T x + y + 1 instead of A^T x + y. */
PetscErrorCode MultTransposeAdd(PetscErrorCode (*base)(Mat, Vec, Vec, Vec), Mat A, Vec x, Vec y, Vec z)
{
  PetscFunctionBegin;
  if (y != z) PetscCall(VecCopy(y, z));
  PetscCall(base(A, x, z, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

namespace
{

/* Brings X's explicit transpose (AIJCUSPARSE's device copy of X^T) up to date with X's values:
   AIJCUSPARSE's numeric phase with a dense operand re-forms a transpose marked stale in place
   (the same device arrays, which the sparse product's cuSPARSE descriptors keep pointing to), so
   one such product with a one-column dense matrix does it. X: a matrix carrying
   MATSEQAIJCUSPARSE's or MATMPIAIJCUSPARSE's name; for the MPI type its blocks. */
PetscErrorCode RefreshExplicitTranspose(Mat X)
{
  PetscBool cu = PETSC_FALSE;
  Mat       D = nullptr, W = nullptr;

  PetscFunctionBegin;
  if (!X) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)X, MATMPIAIJCUSPARSE, &cu));
  if (cu) { /* MPIAIJCUSPARSE's products multiply the blocks' transposes */
    PetscCall(ForEachSeqPart(X, RefreshExplicitTranspose));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)X, MATSEQAIJCUSPARSE, &cu));
  if (!cu || X->boundtocpu || X->transupdated || !X->assembled || !X->rmap->n || !X->cmap->n) PetscFunctionReturn(PETSC_SUCCESS);
  const PetscBool form = private_fields::SwapFormExplicitTranspose(X, PETSC_TRUE);
  PetscErrorCode  ierr = MatCreateDenseCUDA(PETSC_COMM_SELF, X->rmap->n, 1, X->rmap->n, 1, nullptr, &D);
  if (!ierr) ierr = MatZeroEntries(D);
  if (!ierr) ierr = MatTransposeMatMult(X, D, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &W);
  (void)private_fields::SwapFormExplicitTranspose(X, form);
  PetscCall(MatDestroy(&W));
  PetscCall(MatDestroy(&D));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

/* PETSc 3.22.5 to 3.25.4 (MatProductNumeric_SeqAIJCUSPARSE_SeqAIJCUSPARSE() takes matTranspose
   without re-forming it when the operand's values changed). The operand whose transpose the
   numeric phase reads when both operands are sparse AIJCUSPARSE matrices: A of AtB, B of ABt and
   (MatProductSymbolic_ABC_Basic() runs them as P^T (A P) and (R A) R^T) P of PtAP, R of RARt.
   Test: gpu_petsc_matops_np1 (-ops MatTransposeMatMult, MatMatTransposeMult, MatPtAP, MatRARt:
   MAT_REUSE_MATRIX after MatScale of the operands). Reproducer (aijcusparse A, B):
   MatTransposeMatMult(A, B, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C); MatScale(A, 2);
   MatTransposeMatMult(A, B, MAT_REUSE_MATRIX, PETSC_DETERMINE, &C): C is the old A^T B. */
PetscErrorCode RefreshTransposeForNumeric(const Mat_Product *p)
{
  PetscBool a = PETSC_FALSE, b = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)p->A, &a, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, ""));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)p->B, &b, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, ""));
  if (!a || !b) PetscFunctionReturn(PETSC_SUCCESS); /* with a dense operand the numeric phase re-forms it */
  switch (p->type) {
  case MATPRODUCT_AtB:
    PetscCall(RefreshExplicitTranspose(p->A));
    break;
  case MATPRODUCT_ABt:
  case MATPRODUCT_PtAP:
  case MATPRODUCT_RARt:
    PetscCall(RefreshExplicitTranspose(p->B));
    break;
  default:
    break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

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

namespace
{
PetscErrorCode HostValuesCurrent(Mat b)
{
  const PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJGetArrayRead(b, &a));
  PetscCall(MatSeqAIJRestoreArrayRead(b, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}
} // namespace

/* PETSc 3.22.5 to 3.25.4 (e.g. MatMatTransposeMultNumeric_SeqAIJ_SeqAIJ reads the operands' a->a
   directly). Test: gpu_petsc_matops_np1 (-ops MatMatTransposeMult: ours, AIJ). Reproducer
   (aijcusparse A with device values newer, MatScale(A, 2) on the GPU; seqaij B):
   MatMatTransposeMult(A, B, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C): C from A's old host values. */
PetscErrorCode HostValuesForHostProducts(const Mat_Product *p)
{
  PetscBool host;
  Mat       ours[3];

  PetscFunctionBegin;
  PetscCall(HasHostOperand(p, &host));
  if (!host) PetscFunctionReturn(PETSC_SUCCESS);
  const int n = ProductOperandsOfOurs(p, ours);
  for (int i = 0; i < n; i++) PetscCall(ForEachSeqPart(ours[i], HostValuesCurrent));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc 3.22.5 to 3.25.4 (the host numeric phase writes C's a->a without marking the device copy
   stale). Test: gpu_petsc_matops_np1 (-ops MatMatTransposeMult: ours, AIJ, MAT_REUSE_MATRIX).
   Reproducer (aijcusparse A, seqaij B): MatMatTransposeMult(A, B, MAT_INITIAL_MATRIX, ..., &C);
   MatMult(C, x, y); MatScale(A, 2); MatMatTransposeMult(A, B, MAT_REUSE_MATRIX, ..., &C);
   MatMult(C, x, y2): y2 == y. */
PetscErrorCode HostResultNewer(Mat C, PetscBool host)
{
  PetscBool cu = PETSC_FALSE;

  PetscFunctionBegin;
  if (!host || C->boundtocpu) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompareAny((PetscObject)C, &cu, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, ""));
  if (cu) PetscCall(ForEachSeqPart(C, MarkHostNewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace petsc_fixes
} // namespace glue
} // namespace pspmv
