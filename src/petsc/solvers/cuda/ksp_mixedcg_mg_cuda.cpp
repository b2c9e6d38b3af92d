// KSPMIXEDCG's FP32 V-cycle on the CUDA backend (ksp_mixedcg_mg.hpp): the device cycle
// (src/mixed/mg_cycle_device.hpp) built on PETSc's current stream from the levels' device CSR:
// AIJCUSPARSE's own arrays where a level is AIJCUSPARSE with a device copy (the usual GAMG
// hierarchy of an aijcusparse Pmat, whose coarse operators PETSc forms on the device), else one
// upload of its host CSR for the build. Logging: the build runs between PetscLogGpuTimeBegin()/End()
// (in the caller's event); uploads log their bytes (WithUploadedCsr()).
#include "../ksp_mixedcg_mg.hpp"

#include "block_csr.hpp"
#include "core_error.hpp"
#include "mixed/mg_cycle_device.hpp"
#include "petsc/cuda/aijcusparse_csr.hpp"
#include "petsc/cuda/current_stream.hpp"
#include "petsc/cuda/device_csr_upload.hpp"

namespace pspmv
{
namespace glue
{

namespace
{

/* A CUDA error as PETSc's error, thrown (PetscFailure). */
void ThrowOnCudaError(cudaError_t cerr)
{
  auto check = [cerr]() -> PetscErrorCode {
    PetscFunctionBegin;
    PetscCallCUDA(cerr);
    PetscFunctionReturn(PETSC_SUCCESS);
  };
  PetscCallThrow(check());
}

class CudaMgCycle final : public MgDeviceCycle {
public:
  ~CudaMgCycle() override { (void)mixed::cuda::destroy(m_); }
  void Apply(const float *r, float *z, const std::function<void(const double *b, double *x)> &coarse) const override
  {
    cudaStream_t stream = nullptr;
    PetscCallThrow(CurrentCudaStream(&stream));
    ThrowOnCudaError(mixed::cuda::apply_mg_cycle(m_, r, z, coarse, stream));
  }
  std::vector<mixed::MgLevelInfo> Info() const override { return mixed::cuda::mg_cycle_info(m_); }
  void                            SetNullSpace(const std::vector<std::vector<double>> &basis) override
  {
    cudaStream_t stream = nullptr;
    PetscCallThrow(CurrentCudaStream(&stream));
    ThrowOnCudaError(mixed::cuda::set_null_space(m_, basis, stream));
  }

  mixed::cuda::DeviceMgCycle *m_ = nullptr;
};

/* f with the device CSR of a level's matrix (null: an empty view) */
PetscErrorCode WithLevelCsr(Mat A, cudaStream_t stream, const std::function<PetscErrorCode(const cuda::DeviceCsr &)> &f)
{
  PetscBool dev;

  PetscFunctionBegin;
  if (!A) {
    PetscCall(f(cuda::DeviceCsr{}));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(AIJCusparseOnDevice(A, &dev));
  if (dev) PetscCall(WithAIJCusparseCsr(A, stream, f));
  else PetscCall(WithUploadedCsr(A, stream, f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

PetscErrorCode CreateMgDeviceCycle(const MgLevels &levels, const mixed::MgCycleOptions &o, PetscInt dense_level, const double *inverse, std::unique_ptr<MgDeviceCycle> *out, std::string *refused_why)
{
  cudaStream_t                                 stream = nullptr;
  std::vector<mixed::cuda::DeviceMgLevelInput> in(levels.A.size());
  std::unique_ptr<CudaMgCycle>                 c(new CudaMgCycle());
  cudaError_t                                  cerr = cudaSuccess;

  PetscFunctionBegin;
  out->reset();
  refused_why->clear();
  PetscCall(CurrentCudaStream(&stream));
  if (inverse) in[(size_t)dense_level].inverse = inverse;
  const auto with  = [stream](Mat M, const std::function<PetscErrorCode(const cuda::DeviceCsr &)> &g) { return WithLevelCsr(M, stream, g); };
  const auto store = [&in](size_t l, bool p, const cuda::DeviceCsr &v) { (p ? in[l].P : in[l].A) = v; };
  PetscCall(WithLevelViews<cuda::DeviceCsr>(levels, with, store, [&]() -> PetscErrorCode {
    PetscFunctionBegin;
    PetscCall(PetscLogGpuTimeBegin());
    const CoreFailure e = CatchCore([&] { cerr = mixed::cuda::build_mg_cycle_on_device(in, o, stream, &c->m_); });
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(RefuseOrRaise(e, refused_why));
    PetscFunctionReturn(PETSC_SUCCESS);
  }));
  if (cerr == cudaErrorMemoryAllocation && refused_why->empty()) { /* the copies do not fit beside the PC: it runs in FP64 */
    (void)cudaGetLastError();
    *refused_why = "the device has no memory left for the levels' copies";
    cerr         = cudaSuccess;
  }
  PetscCallCUDA(cerr);
  if (refused_why->empty()) *out = std::move(c);
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
