// PCMIXEDKRYLOV's CUDA backend: the device inner solvers (src/mixed/*_device.hpp) on PETSc's CUDA
// vectors and its current stream. An application launches kernels only: no host
// synchronisation (the counts are read when asked for, by -ksp_view, the monitor or
// PCMixedKrylovGetStats()).
#include "../mixed_backend.hpp"

#include "current_stream.hpp"
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

  PetscErrorCode Create(const mixed::ScaledCopy &c, const MixedParams &p)
  {
    PetscFunctionBegin;
    PetscCheck(p.method != InnerMethod::F3R || (p.f3r.m2 <= mixed::cuda::kMaxDeviceLevelSteps && p.f3r.m3 <= mixed::cuda::kMaxDeviceLevelSteps), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
               "-pc_mixedkrylov_f3r_m %d,%d,%d: the CUDA F3R takes at most %d steps at levels 2 and 3", (int)p.f3r.m2, (int)p.f3r.m3, (int)p.f3r.m4, (int)mixed::cuda::kMaxDeviceLevelSteps);
    rows_ = (PetscInt)c.s.size();
    nnz_  = (PetscLogDouble)c.nnz;
    PetscCallCUDA(cudaDeviceSynchronize());
    if (p.method == InnerMethod::CG) PetscCallCUDA(mixed::cuda::create(c, p.cg.max_it, &cg_));
    else PetscCallCUDA(mixed::cuda::create(c, p.f3r, &f3r_));
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)c.op.stats().stored_bytes + sizeof(double) * (PetscLogDouble)rows_));
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
    if (rows_ > 0 && !(PetscMemTypeDevice(rm) && PetscMemTypeDevice(zm))) {
      VecType vt;
      PetscCall(VecGetType(PetscMemTypeDevice(rm) ? z : r, &vt));
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "PCMIXEDKRYLOV runs on the GPU (its Pmat has CUDA vectors) but was applied to %s vectors: use CUDA vectors (-vec_type cuda, MatCreateVecs()) or -pc_mixedkrylov_backend host", vt);
    }
    if (rows_ == 0) empty_applications_++; /* counted as the host twin does: r = 0 */
    if (rows_ > 0) {
      PetscCall(PetscLogGpuTimeBegin());
      if (cg_) PetscCallCUDA(mixed::cuda::apply(cg_, p.cg, ra, za, stream));
      else PetscCallCUDA(mixed::cuda::apply(f3r_, ra, za, stream));
      PetscCall(PetscLogGpuTimeEnd());
      /* counted as if every step ran (the device's step count is read later): per CG step or
         per F3R innermost product, the product and about 10 vector flops per row */
      const PetscLogDouble steps = cg_ ? (PetscLogDouble)p.cg.max_it : (PetscLogDouble)p.f3r.m2 * p.f3r.m3 * (p.f3r.m4 + 1);
      PetscCall(PetscLogGpuFlops(steps * (2.0 * nnz_ + 10.0 * (PetscLogDouble)rows_)));
    }
    PetscCall(VecRestoreArrayWriteAndMemType(z, &za));
    PetscCall(VecRestoreArrayReadAndMemType(r, &ra));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode UpdateValues(const mixed::ScaledCopy &c) override
  {
    PetscFunctionBegin;
    PetscCallCUDA(cudaDeviceSynchronize());
    if (cg_) PetscCallCUDA(mixed::cuda::update_values(c, cg_));
    else PetscCallCUDA(mixed::cuda::update_values(c, f3r_));
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)c.op.words.size() * 4 + (PetscLogDouble)c.op.exact_values.size() * 8 + sizeof(double) * (PetscLogDouble)rows_));
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

  bool        OnDevice() const override { return true; }

private:
  mixed::cuda::DeviceInnerCg *cg_   = nullptr; /* one of the two, by the inner method */
  mixed::cuda::DeviceF3R     *f3r_  = nullptr;
  PetscInt                    rows_ = 0;
  PetscLogDouble              nnz_  = 0;
  int64_t                     empty_applications_ = 0; /* applications on a rank without rows */
};

} // namespace

PetscErrorCode CreateCudaMixedBackend(const mixed::ScaledCopy &c, const MixedParams &p, std::unique_ptr<MixedBackend> *out)
{
  PetscFunctionBegin;
  auto b = std::make_unique<CudaMixedBackend>();
  PetscCall(b->Create(c, p));
  *out = std::move(b);
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
