// A host CSR (the AIJ arrays) copied to the device once, as the device builders read it
// (cuda::DeviceCsr); kept for value updates, which copy the values only. Used by the CUDA
// shadow and by PCMIXEDKRYLOV's CUDA backend. One PetscLogCpuToGpu() per upload; a copy from
// another device CSR (CopyFromDevice: AIJCUSPARSE's arrays) stays on the device and logs none.
#pragma once
#include <petscdevice_cuda.h>

#include "block_csr.hpp"
#include "core/csr.hpp"
#include "cuda/device_csr.hpp"

#include <functional>

namespace pspmv
{
namespace glue
{

class DeviceCsrUpload {
public:
  DeviceCsrUpload()                                   = default;
  DeviceCsrUpload(const DeviceCsrUpload &)            = delete;
  DeviceCsrUpload &operator=(const DeviceCsrUpload &) = delete;
  ~DeviceCsrUpload() { (void)Free(); }

  /* Copies A's arrays on the stream (all = false: the values only, into arrays of A's size,
     which the last full copy must have had). */
  PetscErrorCode Upload(const CsrView &A, cudaStream_t stream, PetscBool all)
  {
    const size_t nr = (size_t)A.rows + 1, nz = (size_t)A.nnz();

    PetscFunctionBegin;
    if (all) {
      PetscCall(Allocate(nr, nz));
      PetscCallCUDA(cudaMemcpyAsync(rowptr_, A.rowptr, sizeof(int32_t) * nr, cudaMemcpyHostToDevice, stream));
      if (nz) PetscCallCUDA(cudaMemcpyAsync(colidx_, A.colidx, sizeof(int32_t) * nz, cudaMemcpyHostToDevice, stream));
    }
    PetscCheck((int64_t)nz == nnz_, PETSC_COMM_SELF, PETSC_ERR_PLIB, "value upload of %" PetscInt64_FMT " entries into a device CSR of %" PetscInt64_FMT, (PetscInt64)nz, (PetscInt64)nnz_);
    if (nz) PetscCallCUDA(cudaMemcpyAsync(values_, A.values, sizeof(double) * nz, cudaMemcpyHostToDevice, stream));
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)(sizeof(double) * nz + (all ? sizeof(int32_t) * (nr + nz) : 0))));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* Copies the device CSR src (rows + 1 offsets, nnz columns and values) into arrays of its own on
     the stream, device to device. */
  PetscErrorCode CopyFromDevice(const cuda::DeviceCsr &src, cudaStream_t stream)
  {
    const size_t nr = (size_t)src.rows + 1, nz = (size_t)src.nnz;

    PetscFunctionBegin;
    PetscCall(Allocate(nr, nz));
    PetscCallCUDA(cudaMemcpyAsync(rowptr_, src.rowptr, sizeof(int32_t) * nr, cudaMemcpyDeviceToDevice, stream));
    if (nz) PetscCallCUDA(cudaMemcpyAsync(colidx_, src.colidx, sizeof(int32_t) * nz, cudaMemcpyDeviceToDevice, stream));
    if (nz) PetscCallCUDA(cudaMemcpyAsync(values_, src.values, sizeof(double) * nz, cudaMemcpyDeviceToDevice, stream));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* The device view of the uploaded arrays (A gives the shape). */
  cuda::DeviceCsr View(const CsrView &A) const
  {
    cuda::DeviceCsr d;
    d.rows   = A.rows;
    d.cols   = A.cols;
    d.nnz    = A.nnz();
    d.rowptr = rowptr_;
    d.colidx = colidx_;
    d.values = values_;
    return d;
  }

  int64_t Nnz() const { return nnz_; }

  PetscErrorCode Free()
  {
    PetscFunctionBegin;
    if (rowptr_) PetscCallCUDA(cudaFree(rowptr_));
    if (colidx_) PetscCallCUDA(cudaFree(colidx_));
    if (values_) PetscCallCUDA(cudaFree(values_));
    rowptr_ = colidx_ = nullptr;
    values_           = nullptr;
    nnz_              = 0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }

private:
  /* fresh arrays for nr row offsets and nz entries (the old ones freed) */
  PetscErrorCode Allocate(size_t nr, size_t nz)
  {
    PetscFunctionBegin;
    PetscCall(Free());
    PetscCallCUDA(cudaMalloc((void **)&rowptr_, sizeof(int32_t) * nr));
    if (nz) PetscCallCUDA(cudaMalloc((void **)&colidx_, sizeof(int32_t) * nz));
    if (nz) PetscCallCUDA(cudaMalloc((void **)&values_, sizeof(double) * nz));
    nnz_ = (int64_t)nz;
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  int32_t *rowptr_ = nullptr, *colidx_ = nullptr;
  double  *values_ = nullptr;
  int64_t  nnz_    = 0;
};

/* Calls f with the host CSR h uploaded to a temporary device CSR on stream; the stream is
   synchronised after f (also when f fails) and the copy freed. */
inline PetscErrorCode WithUploadedCsr(const CsrView &h, cudaStream_t stream, const std::function<PetscErrorCode(const cuda::DeviceCsr &)> &f)
{
  DeviceCsrUpload tmp;

  PetscFunctionBegin;
  PetscCall(tmp.Upload(h, stream, PETSC_TRUE));
  const PetscErrorCode ferr = f(tmp.View(h));
  PetscCallCUDA(cudaStreamSynchronize(stream)); /* nothing may read the buffer once it is freed */
  PetscCall(tmp.Free());
  PetscCall(ferr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The same with A's host CSR (WithCsr()). */
inline PetscErrorCode WithUploadedCsr(Mat A, cudaStream_t stream, const std::function<PetscErrorCode(const cuda::DeviceCsr &)> &f)
{
  PetscFunctionBegin;
  PetscCall(WithCsr(A, [&](const CsrView &h) -> PetscErrorCode { return WithUploadedCsr(h, stream, f); }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
