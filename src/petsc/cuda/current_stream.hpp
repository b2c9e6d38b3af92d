// The stream of PETSc's current device context: the one its CUDA vector operations use.
#pragma once
#include <petscdevice_cuda.h>

namespace pspmv
{
namespace glue
{

inline PetscErrorCode CurrentCudaStream(cudaStream_t *stream)
{
  PetscDeviceContext dctx;
  cudaStream_t      *handle = nullptr;

  PetscFunctionBegin;
  *stream = nullptr;
  PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
  PetscCall(PetscDeviceContextGetStreamHandle(dctx, (void **)&handle));
  *stream = handle ? *handle : nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
