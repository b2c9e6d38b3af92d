// PETSc's Mat header operations: MatHeaderMerge() and the hash assembly's operation tables.
#include "petsc_fixes/petsc_fixes.hpp"

namespace pspmv
{
namespace glue
{
namespace petsc_fixes
{

/* PETSc 3.22.5 to 3.25.4 (MatHeaderMerge() detaches qlist and olist before PetscTryTypeMethod(A,
   destroy)). Not a wrong result of PETSc's own types, a limit for a type that keeps its state
   composed on the matrix: that destroy cannot find it. Test: petsc_matops_np1 (-ops
   MatAXPY with DIFFERENT_NONZERO_PATTERN, MatTransposeInplace: both merge a new header into A).
   Reproducer: compose a container on a SeqAIJ A, replace A->ops->destroy by a function that
   queries it, MatTranspose(A, MAT_INPLACE_MATRIX, &A): the query finds nothing. */
PetscErrorCode BaseDestroyInHeaderMerge(MatType base, PetscErrorCode (**destroy)(Mat))
{
  Mat T;

  PetscFunctionBegin;
  *destroy = nullptr;
  PetscCall(MatCreate(PETSC_COMM_SELF, &T)); /* no sizes, no collective */
  PetscErrorCode ierr = MatSetType(T, base);
  if (!ierr) *destroy = T->ops->destroy;
  PetscCall(MatDestroy(&T));
  PetscCall(ierr);
  PetscCheck(*destroy, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s without a destroy operation", base);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc 3.25 (MatSetUp() without preallocation: MatSetUp_Seq_Hash() saves *A->ops and
   MatAssemblyEnd_Seq_Hash() copies it back; seen at 2 ranks, where an MPI matrix's blocks are
   adopted during the hash); harmless where it does not happen. Test:
   petsc_collective_np2 on PETSc 3.25 (an e8m14 matrix filled by MatSetValues() after MatSetUp()
   shows its rounding on every rank; it fails without the repair: checked). Reproducer: MatSetUp() on an MPIAIJ
   matrix without preallocation, change a block's A->ops->mult during the hash, MatAssemblyEnd():
   the block's mult is the saved one again. */
PetscErrorCode HashAssemblyDroppedOurOps(Mat B, PetscErrorCode (*ours)(Mat, MatAssemblyType), PetscErrorCode (*mult)(Mat, Vec, Vec), PetscBool *dropped)
{
  PetscFunctionBegin;
  *dropped = (PetscBool)(!B->hash_active && B->ops->assemblyend != ours && B->ops->mult != mult);
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace petsc_fixes
} // namespace glue
} // namespace pspmv
