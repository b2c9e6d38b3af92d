// The CUDA Permuter (permuter.hpp): src/cuda/permute_vector.cu's kernels on PETSc's current
// stream (the stream of the inner layout's product), between PetscLogGpuTimeBegin()/End().
#include <petscdevice_cuda.h>

#include "cuda/permute_vector.cuh"
#include "current_stream.hpp"
#include "permuter.hpp"

namespace pspmv
{
namespace glue
{

namespace
{

class CudaPermuter final : public Permuter {
public:
  ~CudaPermuter() override { (void)cudaFree(perm_); }

  PetscErrorCode Init(const std::vector<int32_t> &perm)
  {
    PetscFunctionBegin;
    host_ = CreateHostPermuter(perm);
    n_    = (PetscInt64)perm.size();
    if (n_) {
      PetscCallCUDA(cudaMalloc((void **)&perm_, sizeof(int32_t) * perm.size()));
      PetscCallCUDA(cudaMemcpy(perm_, perm.data(), sizeof(int32_t) * perm.size(), cudaMemcpyHostToDevice));
      PetscCall(PetscLogCpuToGpu(sizeof(int32_t) * (PetscLogDouble)perm.size()));
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Gather(Vec x, Vec xp) override
  {
    const PetscScalar *xa;
    PetscScalar       *pa;
    PetscMemType       xm, pm;
    cudaStream_t       stream;

    PetscFunctionBegin;
    PetscCall(VecGetArrayReadAndMemType(x, &xa, &xm));
    PetscCall(VecGetArrayWriteAndMemType(xp, &pa, &pm));
    const bool device = PetscMemTypeDevice(xm) && PetscMemTypeDevice(pm);
    if (device) {
      PetscCall(CurrentCudaStream(&stream));
      PetscCall(PetscLogGpuTimeBegin());
      PetscCallCUDA(cuda::gather_permuted(perm_, xa, pa, n_, stream));
      PetscCall(PetscLogGpuTimeEnd());
    }
    PetscCall(VecRestoreArrayWriteAndMemType(xp, &pa));
    PetscCall(VecRestoreArrayReadAndMemType(x, &xa));
    if (!device) PetscCall(host_->Gather(x, xp));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Scatter(Vec yp, Vec y, PetscBool add) override
  {
    const PetscScalar *pa;
    PetscScalar       *ya;
    PetscMemType       pm, ym;
    cudaStream_t       stream;

    PetscFunctionBegin;
    PetscCall(VecGetArrayReadAndMemType(yp, &pa, &pm));
    if (add) PetscCall(VecGetArrayAndMemType(y, &ya, &ym));
    else PetscCall(VecGetArrayWriteAndMemType(y, &ya, &ym));
    const bool device = PetscMemTypeDevice(pm) && PetscMemTypeDevice(ym);
    if (device) {
      PetscCall(CurrentCudaStream(&stream));
      PetscCall(PetscLogGpuTimeBegin());
      PetscCallCUDA(cuda::scatter_permuted(perm_, pa, ya, n_, add ? true : false, stream));
      PetscCall(PetscLogGpuTimeEnd());
    }
    if (add) PetscCall(VecRestoreArrayAndMemType(y, &ya));
    else PetscCall(VecRestoreArrayWriteAndMemType(y, &ya));
    PetscCall(VecRestoreArrayReadAndMemType(yp, &pa));
    if (!device) PetscCall(host_->Scatter(yp, y, add));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Release() override
  {
    PetscFunctionBegin;
    if (perm_) PetscCallCUDA(cudaFree(perm_));
    perm_ = nullptr;
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscInt64 DeviceBytes() const override { return perm_ ? (PetscInt64)sizeof(int32_t) * n_ : 0; }

private:
  std::unique_ptr<Permuter> host_;
  int32_t                  *perm_ = nullptr;
  PetscInt64                n_    = 0;
};

} // namespace

PetscErrorCode CreateCudaPermuter(const std::vector<int32_t> &perm, std::unique_ptr<Permuter> *out)
{
  auto p = std::make_unique<CudaPermuter>();

  PetscFunctionBegin;
  PetscCall(p->Init(perm));
  *out = std::move(p);
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
