// block_csr.hpp: the host CSR of a SeqAIJ-based block.
#include "block_csr.hpp"

#include <petsc/private/petscimpl.h>

namespace pspmv {
namespace glue {

PetscErrorCode WithCsr(Mat Ad, const std::function<PetscErrorCode(const CsrView &)> &f)
{
  const PetscInt    *ia, *ja;
  const PetscScalar *aa;
  PetscInt           n, m, nc;
  PetscBool          done;
  static const PetscInt zero = 0;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(Ad, &m, &nc));
  PetscCall(MatSeqAIJGetArrayRead(Ad, &aa)); /* host values (copied from the GPU if they are newer there) */
  PetscCall(MatGetRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "the CSR arrays of the %s block are not available", ((PetscObject)Ad)->type_name);
  CsrView v;
  v.rows   = (int32_t)n;
  v.cols   = (int32_t)nc;
  v.rowptr = ia ? ia : &zero;
  v.colidx = ja;
  v.values = aa;
  const PetscErrorCode ierr = f(v);
  PetscCall(MatRestoreRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCall(MatSeqAIJRestoreArrayRead(Ad, &aa));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode AIJCusparseOnDevice(Mat A, PetscBool *dev)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJCUSPARSE, dev));
  if (*dev) {
    PetscBool bound;
    PetscCall(MatBoundToCPU(A, &bound));
    if (bound) *dev = PETSC_FALSE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
