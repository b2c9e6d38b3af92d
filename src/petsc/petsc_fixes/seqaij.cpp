// PETSc's SeqAIJ code on AIJCUSPARSE(-based) matrices: host arrays written or compacted behind
// AIJCUSPARSE's back, and MatRetrieveValues()/MatCopy() that change values without saying so.
#include "petsc_fixes/petsc_fixes.hpp"
#include "petsc_fixes/private_fields.hpp"

namespace pspmv
{
namespace glue
{
namespace petsc_fixes
{

/* PETSc 3.22.5 to 3.25.4. Test: gpu_petsc_matops_np1 (-ops MatTranspose,
   MatCreateSubMatrices: reused results). Reproducer (aijcusparse alike):
     MatCreateSubMatrices(A, 1, &is, &is, MAT_INITIAL_MATRIX, &S); MatMult(S[0], x, y);
     MatScale(A, 2); MatCreateSubMatrices(A, 1, &is, &is, MAT_REUSE_MATRIX, &S);
     MatMult(S[0], x, y2);   y2 == y: the device copy of S[0] was not marked stale. */
PetscErrorCode MarkHostNewer(Mat B)
{
  PetscBool cu = PETSC_FALSE;

  PetscFunctionBegin;
  if (SeqState *sb = SeqGetState(B)) cu = sb->type->cuda;
  else PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQAIJCUSPARSE, &cu));
  if (cu && !B->boundtocpu) {
    PetscScalar *b;
    PetscCall(MatSeqAIJGetArrayWrite(B, &b));
    PetscCall(MatSeqAIJRestoreArrayWrite(B, &b));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc 3.22.5 to 3.25.4. Test: gpu_petsc_matops_np1 (-ops MatFilter, which calls
   MatEliminateZeros). Reproducer (aijcusparse alike): an assembled aijcusparse A with explicit
   zeros, MatMult(A, x, y) (device copy current), MatEliminateZeros(A, PETSC_FALSE),
   MatMult(A, x, y): wrong y or an out-of-bounds read on the device. */
PetscErrorCode BeforeHostCompaction(Mat A)
{
  SeqState          *sp = SeqGetState(A);
  const PetscScalar *a;

  PetscFunctionBegin;
  if (!sp || !sp->type->cuda || A->boundtocpu) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatSeqAIJGetArrayRead(A, &a)); /* host values current first */
  PetscCall(MatSeqAIJRestoreArrayRead(A, &a));
  PetscCall(MarkHostNewer(A));
  private_fields::IncreaseNonzeroState(A); /* the device copy is rebuilt whole, not only its values */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc 3.22.5 to 3.25.4 (MatRetrieveValues_SeqAIJ: a PetscArraycpy() into a->a). Test:
   petsc_matops_np1 and gpu_petsc_matops_np1 (-ops MatStoreValues; without the state increase
   the host types' MatMult after MatRetrieveValues() multiplies the scaled values: checked). Reproducer:
     MatStoreValues(A); PetscObjectStateGet(A, &s0); MatScale(A, 2); MatRetrieveValues(A);
     PetscObjectStateGet(A, &s1);   s1 == s0 + 1 (the scale's increase only): a cache keyed by
     the object state sees the scaled values; with aijcusparse MatMult(A) multiplies them too. */
PetscErrorCode AfterRetrieveValues(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MarkHostNewer(A));
  PetscCall(PetscObjectStateIncrease((PetscObject)A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc 3.22.5 to 3.23 (MatCopy() calls MatCopy_SeqAIJ directly when both copy operations are the
   same; from 3.24 on the values go through MatSeqAIJGetArray...). Test:
   gpu_petsc_matops_np1 (-ops MatCopy). Reproducer (3.22, aijcusparse A and B of one pattern):
   MatMult(B, x, y); MatCopy(A, B, SAME_NONZERO_PATTERN); MatMult(B, x, y2): y2 == y. */
PetscErrorCode AfterCopy(Mat B, PetscBool fast)
{
  PetscFunctionBegin;
#if PETSC_VERSION_LT(3, 24, 0)
  if (fast) PetscCall(MarkHostNewer(B));
#else
  (void)B;
  (void)fast;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace petsc_fixes
} // namespace glue
} // namespace pspmv
