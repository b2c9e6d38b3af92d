// The CUDA backend of the mixed solvers' scaled copy (scaled_copy_backend.hpp): the copy built on
// the device (mixed/scaled_copy_device.hpp) from the Pmat block's CSR on PETSc's current stream,
// and handed to the device solver that runs on it. The CSR of an aijcusparse block not bound to
// the CPU is the source AIJCUSPARSE CSR, AIJCUSPARSE's device arrays read in place (nothing
// copied); any other block's comes from one upload of its host arrays (a value update uploads the
// values only). Logging: the CSR upload is the only host-to-device copy of the build
// (PetscLogCpuToGpu in DeviceCsrUpload; reading AIJCUSPARSE's arrays uploads nothing of ours:
// PETSc logs its own copy of values newer on the host); the device build and update run between
// PetscLogGpuTimeBegin()/End().
#include "../scaled_copy_backend.hpp"

#include "block_csr.hpp"
#include "core_error.hpp"
#include "petsc/cuda/aijcusparse_csr.hpp"
#include "petsc/cuda/current_stream.hpp"
#include "petsc/cuda/device_csr_upload.hpp"

#include <petscdevice_cuda.h>

namespace pspmv
{
namespace glue
{

namespace
{

class CudaScaledCopy final : public ScaledCopyBackend {
public:
  explicit CudaScaledCopy(DeviceCopyHolder *holder) : holder_(holder) { }

  bool OnDevice() const override { return true; }

  PetscErrorCode Build(Mat Ad, const PackSellOptions &opt, const mixed::CopyDither &dither, const CopyRunner &run, bool *refused) override
  {
    cudaStream_t                  stream = nullptr;
    cudaError_t                   cerr   = cudaSuccess;
    mixed::cuda::DeviceScaledCopy c;
    int32_t                       rows = 0;
    int64_t                       nnz  = 0;

    PetscFunctionBegin;
    *refused = false;
    PetscCall(CurrentCudaStream(&stream));
    const PetscErrorCode rerr = WithDeviceCsr(Ad, stream, PETSC_TRUE, [&](const cuda::DeviceCsr &A) -> PetscErrorCode {
      PetscFunctionBegin;
      PetscCall(PetscLogGpuTimeBegin());
      const PetscErrorCode ierr = run([&] { cerr = mixed::cuda::build_scaled_copy_on_device(A, opt, stream, &c, dither); }, refused);
      PetscCall(PetscLogGpuTimeEnd());
      PetscCall(ierr);
      if (*refused) PetscFunctionReturn(PETSC_SUCCESS); /* nothing built (c left empty) */
      PetscCallCUDA(cerr);
      rows = A.rows;
      nnz  = A.nnz;
      PetscFunctionReturn(PETSC_SUCCESS);
    });
    if (rerr) (void)mixed::cuda::release(&c); /* built, but the read failed after it: no solver takes it */
    PetscCall(rerr);
    if (*refused) PetscFunctionReturn(PETSC_SUCCESS);
    info_.rows  = c.op.rows;
    info_.nnz   = c.nnz;
    info_.stats = c.stats;
    block_rows_ = rows;
    block_nnz_  = nnz;
    PetscCallCUDA(holder_->Take(&c)); /* takes c, also on an error (then it is freed) */
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode UpdateValues(Mat Ad, const CopyRunner &run, bool *pattern_changed, bool *refused) override
  {
    cudaStream_t stream = nullptr;
    cudaError_t  cerr   = cudaSuccess;
    PetscInt     m, n;
    PetscBool    from_device;
    MatInfo      info;

    PetscFunctionBegin;
    *refused = false;
    PetscCall(MatGetLocalSize(Ad, &m, &n));
    PetscCall(MatGetInfo(Ad, MAT_LOCAL, &info));
    PetscCall(AIJCusparseOnDevice(Ad, &from_device));
    /* another shape or nonzero count, or the CSR read another way than at the build: the
       caller builds afresh */
    *pattern_changed = m != block_rows_ || (int64_t)info.nz_used != block_nnz_ || from_device != from_device_;
    if (*pattern_changed) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(CurrentCudaStream(&stream));
    PetscCall(WithDeviceCsr(Ad, stream, PETSC_FALSE, [&](const cuda::DeviceCsr &A) -> PetscErrorCode {
      PetscFunctionBegin;
      PetscCall(PetscLogGpuTimeBegin());
      const PetscErrorCode ierr = run([&] { cerr = holder_->UpdateValues(A, stream, pattern_changed); }, refused);
      PetscCall(PetscLogGpuTimeEnd());
      PetscCall(ierr);
      if (*refused) PetscFunctionReturn(PETSC_SUCCESS); /* the copy keeps its old values */
      PetscCallCUDA(cerr);
      PetscFunctionReturn(PETSC_SUCCESS);
    }));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode SetOffDiag(const PackSellMatrix &off) override
  {
    cuda::DevicePackSell o;
    cudaError_t          cerr;

    PetscFunctionBegin;
    cerr = cuda::upload(off, &o);
    if (cerr != cudaSuccess) (void)cuda::release(&o);
    PetscCallCUDA(cerr);
    const PetscLogDouble bytes = (PetscLogDouble)cuda::upload_bytes(o);
    PetscCallCUDA(holder_->SetOffDiag(&o)); /* takes o, also on errors */
    PetscCall(PetscLogCpuToGpu(bytes));
    info_.nnz = holder_->HeldCopy().nnz + off.stats().nnz;
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Scaling(std::vector<double> *s) const override
  {
    const mixed::cuda::DeviceScaledCopy &c = holder_->HeldCopy();

    PetscFunctionBegin;
    PetscCallCXX(s->assign((size_t)c.op.rows, 0.0));
    if (c.op.rows > 0) PetscCallCUDA(cudaMemcpy(s->data(), c.s, s->size() * sizeof(double), cudaMemcpyDeviceToHost));
    PetscCall(PetscLogGpuToCpu((PetscLogDouble)(s->size() * sizeof(double))));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Compensate(const std::function<void(const double *s, double *As)> &product) override
  {
    cudaStream_t stream = nullptr;
    cudaError_t  cerr   = cudaSuccess;

    PetscFunctionBegin;
    PetscCall(CurrentCudaStream(&stream));
    PetscCall(CallCatching("the row-sum compensation of the scaled copy", [&]() {
      cerr = holder_->Compensate(product, stream);
      return PETSC_SUCCESS;
    }));
    PetscCallCUDA(cerr);
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  const CopyInfo &Info() const override { return info_; }

private:
  /* Calls f with Ad's CSR on the device: the source AIJCUSPARSE CSR (WithAIJCusparseCsr()) or
     csr_ after an upload of the host CSR (all = false: the values only, into csr_'s arrays). Sets
     from_device_ to the way the CSR was read. */
  PetscErrorCode WithDeviceCsr(Mat Ad, cudaStream_t stream, PetscBool all, const std::function<PetscErrorCode(const cuda::DeviceCsr &)> &f)
  {
    PetscBool dev;

    PetscFunctionBegin;
    PetscCall(AIJCusparseOnDevice(Ad, &dev));
    from_device_ = dev;
    if (!dev) {
      PetscCall(WithCsr(Ad, [&](const CsrView &A) -> PetscErrorCode {
        PetscFunctionBegin;
        PetscCallCUDA(cudaDeviceSynchronize()); /* no kernel on any stream may still read the copy (update_values' contract) */
        PetscCall(csr_.Upload(A, stream, all));
        PetscCall(f(csr_.View(A)));
        PetscFunctionReturn(PETSC_SUCCESS);
      }));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(csr_.Free()); /* nothing of an earlier upload is kept */
    PetscCall(WithAIJCusparseCsr(Ad, stream, f));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  DeviceCopyHolder *holder_;
  DeviceCsrUpload   csr_; /* the block's CSR uploaded from the host, kept for value updates */
  PetscBool         from_device_ = PETSC_FALSE;
  PetscInt          block_rows_  = 0;
  int64_t           block_nnz_   = 0;
  CopyInfo          info_;
};

} // namespace

PetscErrorCode CreateCudaScaledCopy(DeviceCopyHolder *holder, std::unique_ptr<ScaledCopyBackend> *out)
{
  PetscFunctionBegin;
  PetscCallCXX(*out = std::make_unique<CudaScaledCopy>(holder));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
