// KSPMIXEDCG's CUDA backend's solver: the device driver (src/mixed/mixed_cg_device.hpp) on the
// KSP's CUDA vectors and PETSc's current stream, holding the copy the CUDA copy backend builds
// (scaled_copy_backend.hpp: the diagonal block's copy on the device, on several ranks the scaled
// off-diagonal block uploaded beside it); the exact products through the hooks with the Amat on the same vectors
// (VecCUDAPlaceArray), and on several ranks the halo (PetscSF on device memory) and the
// reductions over the ranks through the hooks too.
#include "../ksp_mixedcg_backend.hpp"

#include "cuda/current_stream.hpp"
#include "mixed/mixed_cg_device.hpp"

#include <petscdevice_cuda.h>
#include <string>

namespace pspmv
{
namespace glue
{

namespace
{

class CudaMixedCg final : public MixedCgDevice {
public:
  ~CudaMixedCg() override { (void)mixed::cuda::destroy(d_); }

  /* DeviceCopyHolder */
  cudaError_t Take(mixed::cuda::DeviceScaledCopy *c) override { return d_ ? mixed::cuda::replace_copy(d_, c) : mixed::cuda::create(c, &d_); }
  cudaError_t UpdateValues(const cuda::DeviceCsr &, cudaStream_t, bool *pattern_changed) override
  {
    *pattern_changed = true; /* KSPMIXEDCG builds its copy afresh for new values */
    return cudaSuccess;
  }
  const mixed::cuda::DeviceScaledCopy &HeldCopy() const override { return mixed::cuda::copy_of(d_); }
  cudaError_t                          SetOffDiag(cuda::DevicePackSell *o) override { return mixed::cuda::set_offdiag(d_, o); }
  cudaError_t                          Compensate(const std::function<void(const double *s, double *As)> &product, cudaStream_t stream) override { return mixed::cuda::compensate(d_, product, stream); }

  PetscErrorCode Solve(KSP ksp, const mixed::MixedCgParams &p, const MixedCgHooks &h, PetscInt check_every, const CopyInfo &info, mixed::MixedCgResult *res) override
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
      VecType   vt;
      PetscCall(PetscObjectTypeCompareAny((PetscObject)x, &cx, VECSEQCUDA, VECMPICUDA, ""));
      PetscCall(PetscObjectTypeCompareAny((PetscObject)b, &cb, VECSEQCUDA, VECMPICUDA, ""));
      PetscCall(VecGetType(cx ? b : x, &vt));
      PetscCheck(cx && cb, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "KSPMIXEDCG runs on the GPU (-ksp_mixedcg_backend cuda, or its Pmat has CUDA vectors) but was given %s vectors: use CUDA vectors (-vec_type cuda, MatCreateVecs()) or -ksp_mixedcg_backend host", vt);
    }
    PetscCall(CurrentCudaStream(&stream));
    mixed::cuda::DeviceMixedCgHooks dh;
    dh.exact_product     = h.exact_product_device;
    dh.precondition      = h.precondition_device;
    dh.precondition_lowp = h.precondition_lowp_device;
    dh.raise_precision   = h.raise_precision;
    dh.converged         = h.converged;
    dh.monitor           = h.monitor;
    dh.target            = h.target;
    /* several ranks (the glue sets these there only): the sums and maxima over the ranks, the
       FP32 halo of the direction on device arrays */
    dh.allreduce_sum = h.allreduce_sum;
    dh.allreduce_max = h.allreduce_max;
    dh.halo_begin    = h.halo_begin_device;
    dh.halo_end      = h.halo_end_device;
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
    PetscCall(PetscLogGpuFlops((PetscLogDouble)res->lowp_its * (2.0 * (PetscLogDouble)info.nnz + 12.0 * (PetscLogDouble)info.rows)));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

private:
  mixed::cuda::DeviceMixedCg *d_ = nullptr;
};

} // namespace

PetscErrorCode CreateMixedCgDevice(std::unique_ptr<MixedCgDevice> *out)
{
  PetscFunctionBegin;
  PetscCallCXX(*out = std::make_unique<CudaMixedCg>());
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
