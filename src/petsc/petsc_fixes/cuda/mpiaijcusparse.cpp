// PETSc's MPI products with our CUDA operands: MPIAIJCUSPARSE's merged-rows products and MPIAIJ's
// host PtAP.
#include "petsc_fixes/petsc_fixes.hpp"

namespace pspmv
{
namespace glue
{
namespace petsc_fixes
{

namespace
{

PetscErrorCode StampOf(Mat X, OperandStamp *stamp)
{
  Mat mats[3];

  PetscFunctionBegin;
  PetscCall(WithBlocks(X, mats));
  *stamp = OperandStamp();
  for (int i = 0; i < 3; i++) {
    if (!mats[i]) continue;
    PetscCall(PetscObjectGetId((PetscObject)mats[i], &stamp->id[i]));
    PetscCall(PetscObjectStateGet((PetscObject)mats[i], &stamp->state[i]));
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

/* The operand of an MPI product of sparse CUDA matrices (ours or AIJCUSPARSE) whose local rows
   MPIAIJCUSPARSE's product code (MatProductSymbolic_MPIAIJBACKEND()) merges into one sequential
   copy (MatMPIAIJGetLocalMatMerge()) and multiplies through that copy's explicit transpose: P of
   a PtAP, and P of P^T P (an AtB whose two operands are one matrix); NULL for any other product. */
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

} // namespace

/* PETSc 3.22.5 to 3.25.4. Test: gpu_petsc_matops_np2 (-ops MatPtAP and MatTransposeMatMult's
   P^T P: MAT_REUSE_MATRIX after MatScale(P)). Reproducer (2 ranks, mpiaijcusparse A and P):
   MatPtAP(A, P, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C); MatScale(P, 0.5);
   MatPtAP(A, P, MAT_REUSE_MATRIX, PETSC_DETERMINE, &C): C is the old P's product (4x too large)
   instead of a quarter of it. */
PetscErrorCode SymbolicRedoNeeded(Mat C, ProductStamps *s, PetscBool *redo)
{
  Mat P = MergedOperand(C->product, C);

  PetscFunctionBegin;
  *redo = PETSC_FALSE;
  if (P) PetscCall(ChangedOnAnyRank(C, P, &s->merged, redo));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode RecordMergedOperand(Mat C, ProductStamps *s)
{
  Mat P = MergedOperand(C->product, C);

  PetscFunctionBegin;
  if (P) PetscCall(StampOf(P, &s->merged));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc 3.22.5 to 3.25.4. Test: gpu_petsc_fallbacks_np2 and gpu_petsc_matops_np2 (-ops MatPtAP:
   AIJ, ours). Reproducer (2 ranks, mpiaij A, mpiaijcusparse P): MatPtAP(A, P, MAT_INITIAL_MATRIX,
   PETSC_DETERMINE, &C): non-finite entries in C. */
PetscErrorCode HostCopyOfP(Mat C, ProductStamps *s, Mat *Ph)
{
  const char         key[] = "PetscSpMVHostCopyOfP";
  const Mat_Product *p     = C->product;
  PetscBool          hostA = PETSC_FALSE, changed;

  PetscFunctionBegin;
  *Ph = nullptr;
  if (!p || p->type != MATPRODUCT_PtAP || !MPIGetState(p->B)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)p->A, MATMPIAIJ, &hostA));
  if (!hostA) PetscFunctionReturn(PETSC_SUCCESS);
  const OperandStamp last = s->host_copy;
  PetscCall(ChangedOnAnyRank(C, p->B, &s->host_copy, &changed));
  PetscCall(PetscObjectQuery((PetscObject)C, key, (PetscObject *)Ph));
  if (*Ph && changed && last.id[0] == s->host_copy.id[0]) PetscCall(MatCopy(p->B, *Ph, SAME_NONZERO_PATTERN));
  else if (!*Ph || changed) { /* none yet, or the copy of another P (a product set up anew on C) */ Mat h;
    PetscCall(MatConvert(p->B, MATAIJ, MAT_INITIAL_MATRIX, &h));
    PetscCall(PetscObjectCompose((PetscObject)C, key, (PetscObject)h));
    *Ph = h;
    PetscCall(MatDestroy(&h)); /* C holds it */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace petsc_fixes
} // namespace glue
} // namespace pspmv
