// AIJCUSPARSE's own device CSR, read in place (no copy of ours): for the CUDA layouts (our CUDA
// types are AIJCUSPARSE underneath) and for PCMIXEDKRYLOV's copy of an AIJCUSPARSE-based block.
// PETSc uploads what is newer on the host first (and logs that copy itself).
#pragma once
#include <petscdevice_cuda.h>
#include <petscmat.h>

#include "../block_csr.hpp"
#include "../spmvimpl.hpp"
#include "cuda/device_csr.hpp"

#include <functional>

namespace pspmv
{
namespace glue
{

namespace detail
{
inline PetscErrorCode ReadAIJCusparseCsr(Mat A, cudaStream_t stream, const std::function<PetscErrorCode(const cuda::DeviceCsr &)> &f)
{
  const int         *i = nullptr, *j = nullptr;
  const PetscScalar *a = nullptr;
  PetscInt           m, n;
  MatInfo            info;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(A, &m, &n));
  PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
  PetscCallCore(PETSC_ERR_ARG_OUTOFRANGE, check_fits_int32(m, n, (int64_t)info.nz_used)); /* DeviceCsr's 32-bit sizes */
  PetscCall(MatSeqAIJCUSPARSEGetIJ(A, PETSC_FALSE, &i, &j));
  {
    const PetscErrorCode gerr = MatSeqAIJCUSPARSEGetArrayRead(A, &a);
    if (gerr) PetscCall(MatSeqAIJCUSPARSERestoreIJ(A, PETSC_FALSE, &i, &j));
    PetscCall(gerr);
  }
  cuda::DeviceCsr d;
  d.rows                    = (int32_t)m;
  d.cols                    = (int32_t)n;
  d.nnz                     = (int64_t)info.nz_used;
  d.rowptr                  = i;
  d.colidx                  = j;
  d.values                  = a;
  cudaError_t          cerr = cudaDeviceSynchronize();
  const PetscErrorCode ferr = cerr == cudaSuccess ? f(d) : PETSC_SUCCESS;
  if (cerr == cudaSuccess) cerr = cudaStreamSynchronize(stream); /* after f's errors too: nothing of f may still read the arrays */
  PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(A, &a));
  PetscCall(MatSeqAIJCUSPARSERestoreIJ(A, PETSC_FALSE, &i, &j));
  PetscCallCUDA(cerr);
  PetscCall(ferr);
  PetscFunctionReturn(PETSC_SUCCESS);
}
} // namespace detail

/* Calls f with A's device CSR (A: AIJCusparseOnDevice()): MatSeqAIJCUSPARSEGetIJ() with full row
   offsets and MatSeqAIJCUSPARSEGetArrayRead(). The device is synchronised before f, so what PETSc
   queued on its stream has landed, and stream after f, also when f failed, before PETSc may change
   the arrays; every array is restored on every path. A matrix of ours is presented as
   MATSEQAIJCUSPARSE meanwhile (those accessors check the type name in PETSc's debugging builds). */
inline PetscErrorCode WithAIJCusparseCsr(Mat A, cudaStream_t stream, const std::function<PetscErrorCode(const cuda::DeviceCsr &)> &f)
{
  BaseNames bn;

  PetscFunctionBegin;
  PetscCall(PresentAsBase(A, &bn));
  const PetscErrorCode ierr = detail::ReadAIJCusparseCsr(A, stream, f);
  PetscCall(RestoreTypeNames(A, bn));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
