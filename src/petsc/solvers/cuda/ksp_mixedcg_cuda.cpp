// KSPMIXEDCG's CUDA backend: the scaled copy of the diagonal block built on the device from the
// Pmat's CSR (AIJCUSPARSE's own device arrays, or one upload of a host CSR), on several ranks the
// scaled off-diagonal block (built by the glue with the host backend's builder) uploaded beside
// it, the device driver (src/mixed/mixed_cg_device.hpp) on the KSP's CUDA vectors and PETSc's
// current stream; the exact products through the hooks with the Amat on the same vectors
// (VecCUDAPlaceArray), and on several ranks the halo (PetscSF on device memory) and the
// reductions over the ranks through the hooks too.
#include "../ksp_mixedcg_backend.hpp"

#include "block_csr.hpp"
#include "cuda/aijcusparse_csr.hpp"
#include "cuda/current_stream.hpp"
#include "cuda/device_csr_upload.hpp"
#include "mixed/mixed_cg_device.hpp"

#include <petscdevice_cuda.h>
#include <string>

namespace pspmv {
namespace glue {

namespace {

class CudaMixedCg final : public MixedCgDevice {
public:
  ~CudaMixedCg() override { (void)mixed::cuda::destroy(d_); }

  PetscErrorCode Build(Mat Ad, const PackSellOptions &opt, PetscInt row0, mixed::cuda::DeviceScaledCopy *c)
  {
    cudaStream_t stream = nullptr;
    PetscBool    dev;

    PetscFunctionBegin;
    PetscCall(CurrentCudaStream(&stream));
    PetscCall(AIJCusparseOnDevice(Ad, &dev));
    auto build = [&](const cuda::DeviceCsr &A) -> PetscErrorCode {
      cudaError_t cerr = cudaSuccess;

      PetscFunctionBegin;
      PetscCall(run_([&] { cerr = mixed::cuda::build_scaled_copy_on_device(A, opt, stream, c, mixed::CopyDither{dither_ == PETSC_TRUE, (int64_t)row0}); }));
      PetscCallCUDA(cerr);
      PetscFunctionReturn(PETSC_SUCCESS);
    };
    if (dev) PetscCall(WithAIJCusparseCsr(Ad, stream, build));
    else
      PetscCall(WithCsr(Ad, [&](const CsrView &A) -> PetscErrorCode {
        PetscFunctionBegin;
        PetscCall(csr_.Upload(A, stream, PETSC_TRUE));
        PetscCall(build(csr_.View(A)));
        PetscFunctionReturn(PETSC_SUCCESS);
      }));
    row0_ = row0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Create(Mat Ad, const PackSellOptions &opt, PetscInt row0, PetscBool dither, const CopyRunner &run)
  {
    mixed::cuda::DeviceScaledCopy c;

    PetscFunctionBegin;
    dither_ = dither;
    run_    = run;
    PetscCall(Build(Ad, opt, row0, &c));
    nnz_   = c.nnz;
    stats_ = c.stats;
    PetscCallCUDA(mixed::cuda::create(&c, &d_));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Rebuild(Mat Ad, const PackSellOptions &opt) override
  {
    mixed::cuda::DeviceScaledCopy c;

    PetscFunctionBegin;
    PetscCall(Build(Ad, opt, row0_, &c));
    stats_ = c.stats;
    PetscCallCUDA(mixed::cuda::replace_copy(d_, &c));
    off_nnz_ = 0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode SetOffDiag(const PackSellMatrix &off) override
  {
    pspmv::cuda::DevicePackSell o;
    cudaError_t                 cerr;

    PetscFunctionBegin;
    cerr = pspmv::cuda::upload(off, &o);
    if (cerr != cudaSuccess) (void)pspmv::cuda::release(&o);
    PetscCallCUDA(cerr);
    const PetscLogDouble bytes = (PetscLogDouble)pspmv::cuda::upload_bytes(o);
    PetscCallCUDA(mixed::cuda::set_offdiag(d_, &o)); /* takes o, also on errors */
    PetscCall(PetscLogCpuToGpu(bytes));
    off_nnz_ = off.stats().nnz;
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Scaling(std::vector<double> *s) const override
  {
    const mixed::cuda::DeviceScaledCopy &c = mixed::cuda::copy_of(d_);

    PetscFunctionBegin;
    s->assign((size_t)c.op.rows, 0.0);
    if (c.op.rows > 0) PetscCallCUDA(cudaMemcpy(s->data(), c.s, s->size() * sizeof(double), cudaMemcpyDeviceToHost));
    PetscCall(PetscLogGpuToCpu((PetscLogDouble)(s->size() * sizeof(double))));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Solve(KSP ksp, const mixed::MixedCgParams &p, const MixedCgHooks &h, PetscInt check_every, mixed::MixedCgResult *res) override
  {
    const PetscScalar *ba;
    PetscScalar       *xa;
    cudaStream_t       stream = nullptr;
    cudaError_t        cerr   = cudaSuccess;
    PetscErrorCode     ierr   = PETSC_SUCCESS;
    Vec                x, b;

    PetscFunctionBegin;
    PetscCall(KSPGetSolution(ksp, &x));
    PetscCall(KSPGetRhs(ksp, &b));
    {
      PetscBool cx, cb;
      PetscCall(PetscObjectTypeCompareAny((PetscObject)x, &cx, VECSEQCUDA, VECMPICUDA, ""));
      PetscCall(PetscObjectTypeCompareAny((PetscObject)b, &cb, VECSEQCUDA, VECMPICUDA, ""));
      PetscCheck(cx && cb, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "KSPMIXEDCG runs on the GPU (-ksp_mixedcg_backend cuda, or its Pmat has CUDA vectors) but was given %s vectors: use CUDA vectors (-vec_type cuda, MatCreateVecs()) or -ksp_mixedcg_backend host",
                 ((PetscObject)(cx ? b : x))->type_name);
    }
    PetscCall(CurrentCudaStream(&stream));
    mixed::cuda::DeviceMixedCgHooks dh;
    dh.exact_product   = h.exact_product_device;
    dh.raise_precision = h.raise_precision;
    dh.converged       = h.converged;
    dh.monitor         = h.monitor;
    dh.target          = h.target;
    /* several ranks (the glue sets these there only): the sums and maxima over the ranks, the
       FP32 halo of the direction on device arrays */
    dh.allreduce_sum   = h.allreduce_sum;
    dh.allreduce_max   = h.allreduce_max;
    dh.halo_begin      = h.halo_begin_device;
    dh.halo_end        = h.halo_end_device;
    /* The GPU time logged (to KSPSolve's event, beside the low-precision steps' flops below) is the
       device loop's own work only: the driver stops the timer around every hook, whose work is
       logged by its own events (the exact product's MatMult times itself: a timer around it
       would count that time twice and nest PETSc's GPU timer) */
    dh.timer_start = []() { PetscCallThrow(PetscLogGpuTimeBegin()); };
    dh.timer_stop  = []() { PetscCallThrow(PetscLogGpuTimeEnd()); };
    PetscCall(VecCUDAGetArrayRead(b, &ba));
    ierr = VecCUDAGetArray(x, &xa);
    if (ierr) (void)VecCUDARestoreArrayRead(b, &ba);
    PetscCall(ierr);
    ierr = CallCatching("KSPMIXEDCG", [&]() {
      cerr = mixed::cuda::solve(d_, ba, xa, p, (int)check_every, dh, stream, res);
      return PETSC_SUCCESS;
    });
    PetscCall(VecCUDARestoreArray(x, &xa));
    PetscCall(VecCUDARestoreArrayRead(b, &ba));
    PetscCall(ierr);
    PetscCallCUDA(cerr);
    PetscCall(PetscLogGpuFlops((PetscLogDouble)res->lowp_its * (2.0 * (PetscLogDouble)Nnz() + 12.0 * (PetscLogDouble)stats_.rows)));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Compensate(const std::function<void(const double *s, double *As)> &product) override
  {
    cudaStream_t stream = nullptr;
    cudaError_t  cerr   = cudaSuccess;

    PetscFunctionBegin;
    PetscCall(CurrentCudaStream(&stream));
    PetscCall(CallCatching("KSPMIXEDCG", [&]() {
      cerr = mixed::cuda::compensate(d_, product, stream);
      return PETSC_SUCCESS;
    }));
    PetscCallCUDA(cerr);
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  int64_t     Nnz() const override { return nnz_ + off_nnz_; }
  FormatStats Stats() const override { return stats_; }

private:
  DeviceCsrUpload             csr_;
  mixed::cuda::DeviceMixedCg *d_   = nullptr;
  int64_t                     nnz_ = 0, off_nnz_ = 0; /* of the diagonal block's copy, of the off-diagonal one's */
  FormatStats                 stats_;
  PetscInt                    row0_ = 0;
  PetscBool                   dither_ = PETSC_FALSE;
  CopyRunner                  run_;
};

} // namespace

PetscErrorCode CreateMixedCgDevice(Mat Ad, const PackSellOptions &opt, PetscInt row0, PetscBool dither, const CopyRunner &run, std::unique_ptr<MixedCgDevice> *out)
{
  PetscFunctionBegin;
  auto b = std::make_unique<CudaMixedCg>();
  PetscCall(b->Create(Ad, opt, row0, dither, run));
  *out = std::move(b);
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
