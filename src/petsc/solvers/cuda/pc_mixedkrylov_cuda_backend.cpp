// PCMIXEDKRYLOV's CUDA backend: the scaled copy on the mixed solvers' CUDA copy backend
// (scaled_copy_backend.hpp: built on the device from the Pmat block's CSR) held by the device
// inner solver (src/mixed/*_device.hpp) that runs on PETSc's CUDA vectors and its current stream.
// The scaled copy has no host version. An application launches kernels only: no host
// synchronisation (the counts are read when asked for, by -ksp_view, the monitor or
// PCMixedKrylovGetStats()).
#include "../pc_mixedkrylov_backend.hpp"

#include "petsc/cuda/current_stream.hpp"
#include "mixed/f3r_device.hpp"
#include "mixed/inner_cg_device.hpp"

namespace pspmv
{
namespace glue
{

namespace
{

class CudaMixedBackend final : public MixedBackend, public DeviceCopyHolder {
public:
  ~CudaMixedBackend() override
  {
    (void)mixed::cuda::destroy(cg_);
    (void)mixed::cuda::destroy(f3r_);
  }

  PetscErrorCode Create(Mat Ad, const PackSellOptions &opt, const MixedParams &p, const CopyRunner &run, bool *refused)
  {
    PetscFunctionBegin;
    PetscCheck(p.method != InnerMethod::F3R || (p.f3r.m2 <= mixed::cuda::kMaxDeviceLevelSteps && p.f3r.m3 <= mixed::cuda::kMaxDeviceLevelSteps), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-pc_mixedkrylov_f3r_m %d,%d,%d: the CUDA F3R takes at most %d steps at levels 2 and 3",
               (int)p.f3r.m2, (int)p.f3r.m3, (int)p.f3r.m4, (int)mixed::cuda::kMaxDeviceLevelSteps);
    params_ = p;
    PetscCall(CreateCudaScaledCopy(this, &copy_));
    PetscCall(copy_->Build(Ad, opt, mixed::CopyDither{}, run, refused));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* DeviceCopyHolder: the inner solver of the PC's method takes the copy (built once: a new
     pattern builds a new backend) */
  cudaError_t Take(mixed::cuda::DeviceScaledCopy *c) override
  {
    if (cg_ || f3r_) {
      (void)mixed::cuda::release(c);
      return cudaErrorNotSupported;
    }
    return params_.method == InnerMethod::CG ? mixed::cuda::create(c, params_.cg.max_it, &cg_) : mixed::cuda::create(c, params_.f3r, &f3r_);
  }
  cudaError_t UpdateValues(const cuda::DeviceCsr &A, cudaStream_t stream, bool *pattern_changed) override { return cg_ ? mixed::cuda::update_values(A, stream, cg_, pattern_changed) : mixed::cuda::update_values(A, stream, f3r_, pattern_changed); }
  const mixed::cuda::DeviceScaledCopy &HeldCopy() const override { return cg_ ? mixed::cuda::copy_of(cg_) : mixed::cuda::copy_of(f3r_); }
  cudaError_t                          SetOffDiag(cuda::DevicePackSell *o) override
  {
    (void)cuda::release(o);
    return cudaErrorNotSupported; /* a block solver: the diagonal block only */
  }
  cudaError_t Compensate(const std::function<void(const double *, double *)> &, cudaStream_t) override { return cudaErrorNotSupported; }

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
    const CopyInfo &info = copy_->Info();
    if (info.rows > 0 && !(PetscMemTypeDevice(rm) && PetscMemTypeDevice(zm))) {
      VecType vt;
      PetscCall(VecGetType(PetscMemTypeDevice(rm) ? z : r, &vt));
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "PCMIXEDKRYLOV runs on the GPU (its Pmat has CUDA vectors) but was applied to %s vectors: use CUDA vectors (-vec_type cuda, MatCreateVecs()) or -pc_mixedkrylov_backend host", vt);
    }
    if (info.rows == 0) empty_applications_++; /* counted as the host backend counts it: r = 0 */
    if (info.rows > 0) {
      PetscCall(PetscLogGpuTimeBegin());
      const cudaError_t cerr = cg_ ? mixed::cuda::apply(cg_, p.cg, ra, za, stream) : mixed::cuda::apply(f3r_, ra, za, stream);
      PetscCall(PetscLogGpuTimeEnd()); /* closed before an error returns */
      PetscCallCUDA(cerr);
      /* counted as if every step ran (the device's step count is read later): per CG step or
         per F3R innermost product, the product and about 10 vector flops per row */
      const PetscLogDouble steps = cg_ ? (PetscLogDouble)p.cg.max_it : (PetscLogDouble)p.f3r.m2 * p.f3r.m3 * (p.f3r.m4 + 1);
      PetscCall(PetscLogGpuFlops(steps * (2.0 * (PetscLogDouble)info.nnz + 10.0 * (PetscLogDouble)info.rows)));
    }
    PetscCall(VecRestoreArrayWriteAndMemType(z, &za));
    PetscCall(VecRestoreArrayReadAndMemType(r, &ra));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode UpdateValues(Mat Ad, const CopyRunner &run, bool *pattern_changed, bool *refused) override { return copy_->UpdateValues(Ad, run, pattern_changed, refused); }

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
    const double      *s    = HeldCopy().s;
    const CopyInfo    &info = copy_->Info();

    PetscFunctionBegin;
    *norm = 0;
    if (info.rows == 0) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(VecGetArrayReadAndMemType(r, &ra, &rm));
    PetscCheck(PetscMemTypeDevice(rm), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "PCMIXEDKRYLOV runs on the GPU: its monitor needs CUDA vectors");
    PetscCall(VecCreateSeqCUDAWithArray(PETSC_COMM_SELF, 1, (PetscInt)info.rows, ra, &rl));
    PetscCall(VecCreateSeqCUDAWithArray(PETSC_COMM_SELF, 1, (PetscInt)info.rows, s, &sl));
    PetscCall(VecDuplicate(rl, &t));
    PetscCall(VecPointwiseMult(t, rl, sl));
    PetscCall(VecNorm(t, NORM_2, norm));
    PetscCall(VecDestroy(&t));
    PetscCall(VecDestroy(&sl));
    PetscCall(VecDestroy(&rl));
    PetscCall(VecRestoreArrayReadAndMemType(r, &ra));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  const ScaledCopyBackend &Copy() const override { return *copy_; }

private:
  MixedParams                        params_;
  std::unique_ptr<ScaledCopyBackend> copy_;                         /* the copy's backend; the solver below holds the copy */
  mixed::cuda::DeviceInnerCg        *cg_                 = nullptr; /* one of the two, by the inner method; owns the copy */
  mixed::cuda::DeviceF3R            *f3r_                = nullptr;
  int64_t                            empty_applications_ = 0; /* applications on a rank without rows */
};

} // namespace

PetscErrorCode CreateCudaMixedBackend(Mat Ad, const PackSellOptions &opt, const MixedParams &p, const CopyRunner &run, std::unique_ptr<MixedBackend> *out, bool *refused)
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
