// AIJCUSPARSE's own device CSR, read in place (no copy of ours): for the device builders when the
// source of a layout or of PCMIXEDKRYLOV's copy is an aijcusparse matrix whose data already lives
// on the GPU. PETSc uploads values newer on the host first (and logs that copy itself).
#pragma once
#include <petscdevice_cuda.h>
#include <petscmat.h>

#include "../block_csr.hpp"
#include "cuda/device_csr.hpp"

#include <functional>

namespace pspmv {
namespace glue {

/* Calls f with A's device CSR (A: AIJCusparseOnDevice()): MatSeqAIJCUSPARSEGetIJ() with full row
   offsets and MatSeqAIJCUSPARSEGetArrayRead(). The device is synchronised before f, so what PETSc
   queued on its stream has landed, and stream after f, also when f failed, before PETSc may change
   the arrays; every array is restored on every path. */
inline PetscErrorCode WithAIJCusparseCsr(Mat A, cudaStream_t stream, const std::function<PetscErrorCode(const cuda::DeviceCsr &)> &f)
{
  const int         *i = nullptr, *j = nullptr;
  const PetscScalar *a = nullptr;
  PetscInt           m, n;
  MatInfo            info;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(A, &m, &n));
  PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
  PetscCall(MatSeqAIJCUSPARSEGetIJ(A, PETSC_FALSE, &i, &j));
  {
    const PetscErrorCode gerr = MatSeqAIJCUSPARSEGetArrayRead(A, &a);
    if (gerr) PetscCall(MatSeqAIJCUSPARSERestoreIJ(A, PETSC_FALSE, &i, &j));
    PetscCall(gerr);
  }
  cuda::DeviceCsr d;
  d.rows   = (int32_t)m;
  d.cols   = (int32_t)n;
  d.nnz    = (int64_t)info.nz_used;
  d.rowptr = i;
  d.colidx = j;
  d.values = a;
  cudaError_t          cerr = cudaDeviceSynchronize();
  const PetscErrorCode ierr = cerr == cudaSuccess ? f(d) : PETSC_SUCCESS;
  if (cerr == cudaSuccess) cerr = cudaStreamSynchronize(stream); /* after f's errors too: nothing of f may still read the arrays */
  PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(A, &a));
  PetscCall(MatSeqAIJCUSPARSERestoreIJ(A, PETSC_FALSE, &i, &j));
  PetscCallCUDA(cerr);
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
