// block_csr.hpp: the host CSR of a SeqAIJ-based block.
#include "block_csr.hpp"

#include "spmvimpl.hpp"

#include <vector>

namespace pspmv
{
namespace glue
{

PetscErrorCode WithAIJArrays(Mat Ad, const std::function<PetscErrorCode(const AIJArrays &)> &f)
{
  AIJArrays a;
  PetscBool done;
  PetscInt  zero = 0; /* the row offsets of no rows (writable: MatCreateSeqAIJWithArrays() may store into them) */

  PetscFunctionBegin;
  PetscCall(MatSeqAIJGetArrayRead(Ad, &a.aa)); /* host values (copied from the GPU if they are newer there) */
  PetscCall(MatGetRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &a.n, &a.ia, &a.ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "the CSR arrays of the %s matrix are not available", ((PetscObject)Ad)->type_name);
  const PetscInt *ia = a.ia;
  if (!a.ia) a.ia = &zero; /* no rows */
  const PetscErrorCode ierr = f(a);
  PetscCall(MatRestoreRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &a.n, &ia, &a.ja, &done));
  PetscCall(MatSeqAIJRestoreArrayRead(Ad, &a.aa));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode WithCsr(Mat Ad, const std::function<PetscErrorCode(const CsrView &)> &f)
{
  PetscInt m, nc;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(Ad, &m, &nc));
  PetscCall(WithAIJArrays(Ad, [&](const AIJArrays &a) -> PetscErrorCode {
    const PetscInt n = a.n;
    CsrView        v;

    PetscFunctionBegin;
    PetscCallCore(PETSC_ERR_ARG_OUTOFRANGE, check_fits_int32(n, nc, a.ia[n]));
    v.rows   = (int32_t)n;
    v.cols   = (int32_t)nc;
    v.values = a.aa;
#if defined(PETSC_USE_64BIT_INDICES)
    /* 32-bit copies of the row offsets and columns (the sizes checked above) */
    std::vector<int32_t> rowptr, colidx;
    PetscCallCXX(rowptr.assign(a.ia, a.ia + n + 1));
    PetscCallCXX(colidx.assign(a.ja, a.ja + a.ia[n]));
    v.rowptr = rowptr.data();
    v.colidx = colidx.data();
#else
    v.rowptr = a.ia;
    v.colidx = a.ja;
#endif
    PetscCall(f(v));
    PetscFunctionReturn(PETSC_SUCCESS);
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CountProductFlops(Mat A, ProductFlops *f)
{
  const PetscInt *ia, *ja;
  PetscInt        n;
  PetscBool       done;
  PetscInt64      nonzero_rows = 0;

  PetscFunctionBegin;
  /* the pattern (host arrays of every SeqAIJ-based type, current also when the values live on
     the GPU) */
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "the row offsets of the %s matrix are not available", ((PetscObject)A)->type_name);
  for (PetscInt r = 0; r < n; ++r) nonzero_rows += ia[r + 1] > ia[r];
  f->multadd = 2.0 * (PetscLogDouble)(n ? ia[n] : 0);
  f->mult    = f->multadd - (PetscLogDouble)nonzero_rows;
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode AIJCusparseOnDevice(Mat A, PetscBool *dev)
{
  SeqState *sp = SeqGetState(A);

  PetscFunctionBegin;
  if (sp) *dev = sp->type->cuda; /* our CUDA types are AIJCUSPARSE underneath */
  else PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJCUSPARSE, dev));
  if (*dev) {
    PetscBool bound;
    PetscCall(MatBoundToCPU(A, &bound));
    if (bound) *dev = PETSC_FALSE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
