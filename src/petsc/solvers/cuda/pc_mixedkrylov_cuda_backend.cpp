// PCMIXEDKRYLOV's CUDA backend: the scaled copy built on the device (mixed/scaled_copy_device.hpp)
// from the Pmat block's CSR and the device inner solvers (src/mixed/*_device.hpp) on PETSc's CUDA
// vectors and its current stream. The CSR of an aijcusparse block is the source AIJCUSPARSE CSR,
// AIJCUSPARSE's device arrays read in place (nothing copied); any other block's comes from one
// upload of its host arrays (a value update uploads the values only). The scaled copy has no
// host version. An application launches kernels only: no host synchronisation (the counts are read when
// asked for, by -ksp_view, the monitor or PCMixedKrylovGetStats()).
// Logging: the CSR upload is the only host-to-device copy (PetscLogCpuToGpu in
// DeviceCsrUpload; reading AIJCUSPARSE's arrays uploads nothing of ours: PETSc logs its own copy
// of values newer on the host); the device build and update run between
// PetscLogGpuTimeBegin()/End() (inside the PC's setup event).
#include "../pc_mixedkrylov_backend.hpp"

#include "block_csr.hpp"
#include "petsc/cuda/aijcusparse_csr.hpp"
#include "petsc/cuda/current_stream.hpp"
#include "petsc/cuda/device_csr_upload.hpp"
#include "mixed/f3r_device.hpp"
#include "mixed/inner_cg_device.hpp"

namespace pspmv {
namespace glue {

namespace {

class CudaMixedBackend final : public MixedBackend {
public:
  ~CudaMixedBackend() override
  {
    (void)mixed::cuda::destroy(cg_);
    (void)mixed::cuda::destroy(f3r_);
  }

  PetscErrorCode Create(Mat Ad, const PackSellOptions &opt, const MixedParams &p, const CoreRunner &run, bool *refused)
  {
    cudaStream_t                  stream = nullptr;
    cudaError_t                   cerr   = cudaSuccess;
    mixed::cuda::DeviceScaledCopy c;

    PetscFunctionBegin;
    PetscCheck(p.method != InnerMethod::F3R || (p.f3r.m2 <= mixed::cuda::kMaxDeviceLevelSteps && p.f3r.m3 <= mixed::cuda::kMaxDeviceLevelSteps), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
               "-pc_mixedkrylov_f3r_m %d,%d,%d: the CUDA F3R takes at most %d steps at levels 2 and 3", (int)p.f3r.m2, (int)p.f3r.m3, (int)p.f3r.m4, (int)mixed::cuda::kMaxDeviceLevelSteps);
    PetscCall(CurrentCudaStream(&stream));
    const PetscErrorCode rerr = WithDeviceCsr(Ad, stream, PETSC_TRUE, [&](const cuda::DeviceCsr &A) -> PetscErrorCode {
      PetscFunctionBegin;
      PetscCall(PetscLogGpuTimeBegin());
      const PetscErrorCode ierr = run([&] { cerr = mixed::cuda::build_scaled_copy_on_device(A, opt, stream, &c); }, refused);
      PetscCall(PetscLogGpuTimeEnd());
      PetscCall(ierr);
      if (*refused) PetscFunctionReturn(PETSC_SUCCESS); /* nothing built (c left empty) */
      PetscCallCUDA(cerr);
      block_rows_ = A.rows;
      block_nnz_  = A.nnz;
      PetscFunctionReturn(PETSC_SUCCESS);
    });
    if (rerr) (void)mixed::cuda::release(&c); /* built, but the read failed after it: no solver takes it */
    PetscCall(rerr);
    if (*refused) PetscFunctionReturn(PETSC_SUCCESS);
    info_.rows  = c.op.rows;
    info_.nnz   = c.nnz;
    info_.stats = c.stats;
    /* the solver takes the copy (also on an error: then it is freed) */
    if (p.method == InnerMethod::CG) PetscCallCUDA(mixed::cuda::create(&c, p.cg.max_it, &cg_));
    else PetscCallCUDA(mixed::cuda::create(&c, p.f3r, &f3r_));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Apply(const MixedParams &p, Vec r, Vec z) override
  {
    const PetscScalar *ra;
    PetscScalar       *za;
    PetscMemType       rm, zm;
    cudaStream_t       stream = nullptr;

    PetscFunctionBegin;
    PetscCall(CurrentCudaStream(&stream));
    PetscCall(VecGetArrayReadAndMemType(r, &ra, &rm));
    PetscCall(VecGetArrayWriteAndMemType(z, &za, &zm));
    if (info_.rows > 0 && !(PetscMemTypeDevice(rm) && PetscMemTypeDevice(zm))) {
      VecType vt;
      PetscCall(VecGetType(PetscMemTypeDevice(rm) ? z : r, &vt));
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "PCMIXEDKRYLOV runs on the GPU (its Pmat has CUDA vectors) but was applied to %s vectors: use CUDA vectors (-vec_type cuda, MatCreateVecs()) or -pc_mixedkrylov_backend host", vt);
    }
    if (info_.rows == 0) empty_applications_++; /* counted as the host backend counts it: r = 0 */
    if (info_.rows > 0) {
      PetscCall(PetscLogGpuTimeBegin());
      const cudaError_t cerr = cg_ ? mixed::cuda::apply(cg_, p.cg, ra, za, stream) : mixed::cuda::apply(f3r_, ra, za, stream);
      PetscCall(PetscLogGpuTimeEnd()); /* closed before an error returns */
      PetscCallCUDA(cerr);
      /* counted as if every step ran (the device's step count is read later): per CG step or
         per F3R innermost product, the product and about 10 vector flops per row */
      const PetscLogDouble steps = cg_ ? (PetscLogDouble)p.cg.max_it : (PetscLogDouble)p.f3r.m2 * p.f3r.m3 * (p.f3r.m4 + 1);
      PetscCall(PetscLogGpuFlops(steps * (2.0 * (PetscLogDouble)info_.nnz + 10.0 * (PetscLogDouble)info_.rows)));
    }
    PetscCall(VecRestoreArrayWriteAndMemType(z, &za));
    PetscCall(VecRestoreArrayReadAndMemType(r, &ra));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode UpdateValues(Mat Ad, const CoreRunner &run, bool *pattern_changed, bool *refused) override
  {
    cudaStream_t stream = nullptr;
    cudaError_t  cerr   = cudaSuccess;
    PetscInt     m, n;
    PetscBool    from_device;
    MatInfo      info;

    PetscFunctionBegin;
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
      const PetscErrorCode ierr = run(
        [&] {
          cerr = cg_ ? mixed::cuda::update_values(A, stream, cg_, pattern_changed) : mixed::cuda::update_values(A, stream, f3r_, pattern_changed);
        },
        refused);
      PetscCall(PetscLogGpuTimeEnd());
      PetscCall(ierr);
      if (*refused) PetscFunctionReturn(PETSC_SUCCESS); /* the copy keeps its old values */
      PetscCallCUDA(cerr);
      PetscFunctionReturn(PETSC_SUCCESS);
    }));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode ReadStats(mixed::InnerStats *stats, std::vector<double> *residuals) override
  {
    cudaStream_t stream = nullptr;

    PetscFunctionBegin;
    PetscCall(CurrentCudaStream(&stream));
    stats->applications += empty_applications_;
    stats->zero_rhs += empty_applications_;
    empty_applications_ = 0;
    if (cg_) PetscCallCUDA(mixed::cuda::read_stats(cg_, stats, residuals, stream));
    else {
      PetscCallCUDA(mixed::cuda::read_stats(f3r_, stats, stream));
      if (residuals) residuals->clear(); /* F3R's levels have no residual history */
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* on the device: PETSc's CUDA vectors over r's local part and the copy's s */
  PetscErrorCode ScaledNorm(Vec r, PetscReal *norm) override
  {
    const PetscScalar *ra;
    PetscMemType       rm;
    Vec                rl, sl, t;
    const double      *s = cg_ ? mixed::cuda::copy_of(cg_).s : mixed::cuda::copy_of(f3r_).s;

    PetscFunctionBegin;
    *norm = 0;
    if (info_.rows == 0) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(VecGetArrayReadAndMemType(r, &ra, &rm));
    PetscCheck(PetscMemTypeDevice(rm), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "PCMIXEDKRYLOV runs on the GPU: its monitor needs CUDA vectors");
    PetscCall(VecCreateSeqCUDAWithArray(PETSC_COMM_SELF, 1, (PetscInt)info_.rows, ra, &rl));
    PetscCall(VecCreateSeqCUDAWithArray(PETSC_COMM_SELF, 1, (PetscInt)info_.rows, s, &sl));
    PetscCall(VecDuplicate(rl, &t));
    PetscCall(VecPointwiseMult(t, rl, sl));
    PetscCall(VecNorm(t, NORM_2, norm));
    PetscCall(VecDestroy(&t));
    PetscCall(VecDestroy(&sl));
    PetscCall(VecDestroy(&rl));
    PetscCall(VecRestoreArrayReadAndMemType(r, &ra));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  const CopyInfo &Copy() const override { return info_; }
  bool            OnDevice() const override { return true; }

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

  DeviceCsrUpload             csr_; /* the block's CSR uploaded from the host, kept for value updates */
  PetscBool                   from_device_ = PETSC_FALSE;
  PetscInt                    block_rows_ = 0;
  int64_t                     block_nnz_  = 0;
  mixed::cuda::DeviceInnerCg *cg_  = nullptr; /* one of the two, by the inner method; owns the copy */
  mixed::cuda::DeviceF3R     *f3r_ = nullptr;
  CopyInfo                    info_;
  int64_t                     empty_applications_ = 0; /* applications on a rank without rows */
};

} // namespace

PetscErrorCode CreateCudaMixedBackend(Mat Ad, const PackSellOptions &opt, const MixedParams &p, const CoreRunner &run, std::unique_ptr<MixedBackend> *out, bool *refused)
{
  PetscFunctionBegin;
  auto b = std::make_unique<CudaMixedBackend>();
  PetscCall(b->Create(Ad, opt, p, run, refused));
  if (*refused) PetscFunctionReturn(PETSC_SUCCESS);
  *out = std::move(b);
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
