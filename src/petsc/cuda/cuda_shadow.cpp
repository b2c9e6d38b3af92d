// CUDA backend: the layout is built on the device from AIJCUSPARSE's device CSR (our CUDA types
// are AIJCUSPARSE underneath; build_on_device() of src/formats/device_formats.hpp: bit for bit the
// host builder's layout), on PETSc's current device stream; a value update re-encodes the values
// of that CSR on the device (update_values_on_device()). PETSc's own offload logic uploads what is
// newer on the host (the values only when the pattern is unchanged) and logs it; that CSR stays
// on the device as AIJCUSPARSE keeps it. With free_device_csr the build never makes AIJCUSPARSE
// allocate it: when its device copy is not current the host CSR goes through a temporary buffer,
// freed at once. No host copy of the layout is kept: the statistics come with the device build
// (DeviceBuildInfo).
// Logging (-log_view; docs/logging.md): PETSc logs its CSR uploads; a temporary upload logs one
// PetscLogCpuToGpu(); the device build and update run between PetscLogGpuTimeBegin()/End()
// (inside the SpMVBuild / SpMVValues events of seqspmv.cpp), one PetscLogCpuToGpu() or
// PetscLogGpuToCpu() per staging copy of a host vector and per copy of the diagonal into a host
// vector. The kernels run between PetscLogGpuTimeBegin()/End() and log PetscLogGpuFlops() of
// AIJ's convention (ProductFlops).
#include <petscdevice_cuda.h>

#include "core_error.hpp"
#include "formats/device_formats.hpp"
#include "shadow.hpp"
#include "aijcusparse_csr.hpp"
#include "current_stream.hpp"
#include "device_csr_upload.hpp"

#include <algorithm>
#include <functional>
#include <string>

namespace pspmv
{
namespace glue
{

namespace
{

template <class M>
class CudaShadow final : public Shadow {
  using D = typename cuda::DeviceLayoutOf<typename M::Host>::type;

public:
  ~CudaShadow() override
  {
    /* best effort: Release() is the checked path, this only covers error unwinding */
    (void)cuda::release(&D_);
    if (stage_x_) (void)cudaFree(stage_x_);
    if (stage_y_) (void)cudaFree(stage_y_);
  }

  PetscErrorCode Build(const BuildSource &src, const FormatOptions &opts) override
  {
    cudaStream_t stream = nullptr;

    PetscFunctionBegin;
    PetscCall(CurrentCudaStream(&stream));
    PetscCall(CountProductFlops(src.A, &flops_));
    rows_ = src.A->rmap->n;
    cols_ = src.A->cmap->n;
    /* kernels of a previous product may still read device memory the build replaces */
    PetscCallCUDA(cudaDeviceSynchronize());
    PetscCall(WithDeviceCsr(src, stream, [&](const cuda::DeviceCsr &d) -> PetscErrorCode {
      PetscFunctionBegin;
      nnz_ = d.nnz;
      PetscCall(PetscLogGpuTimeBegin());
      const PetscErrorCode ierr = [&]() -> PetscErrorCode {
        PetscFunctionBegin;
        PetscCallBuildAt(src.global, PETSC_ERR_ARG_WRONG, cuda::build_on_device(d, opts.Of<M>(), stream, &D_, &info_));
        PetscFunctionReturn(PETSC_SUCCESS);
      }();
      PetscCall(PetscLogGpuTimeEnd()); /* closed before an error returns */
      PetscCall(ierr);
      PetscFunctionReturn(PETSC_SUCCESS);
    }));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode UpdateValues(const BuildSource &src, PetscBool *pattern_changed) override
  {
    cudaStream_t stream = nullptr;
    MatInfo      info;

    PetscFunctionBegin;
    *pattern_changed = PETSC_TRUE;
    /* the glue detects a changed pattern by the nonzero state; a different shape or count here
       also asks for a rebuild */
    PetscCall(MatGetInfo(src.A, MAT_LOCAL, &info));
    if (src.A->rmap->n != rows_ || src.A->cmap->n != cols_ || (int64_t)info.nz_used != nnz_) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(CurrentCudaStream(&stream));
    PetscCallCUDA(cudaDeviceSynchronize());
    PetscCall(WithDeviceCsr(src, stream, [&](const cuda::DeviceCsr &d) -> PetscErrorCode {
      bool    changed = false;
      int32_t scale   = 0;

      PetscFunctionBegin;
      PetscCall(PetscLogGpuTimeBegin());
      const PetscErrorCode ierr = [&]() -> PetscErrorCode {
        PetscFunctionBegin;
        PetscCallBuildAt(src.global, PETSC_ERR_LIB, cuda::update_values_on_device(d, stream, &D_, &changed, &scale));
        PetscFunctionReturn(PETSC_SUCCESS);
      }();
      PetscCall(PetscLogGpuTimeEnd()); /* closed before an error returns */
      PetscCall(ierr);
      info_.scale_exponent = scale;
      *pattern_changed     = changed ? PETSC_TRUE : PETSC_FALSE;
      PetscFunctionReturn(PETSC_SUCCESS);
    }));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Mult(Vec x, Vec y, PetscBool add) override
  {
    const PetscScalar *xa;
    PetscScalar       *ya;
    PetscMemType       xm, ym;
    cudaStream_t       stream = nullptr;

    PetscFunctionBegin;
    PetscCall(CurrentCudaStream(&stream));
    PetscCall(VecGetArrayReadAndMemType(x, &xa, &xm));
    if (add) PetscCall(VecGetArrayAndMemType(y, &ya, &ym));
    else PetscCall(VecGetArrayWriteAndMemType(y, &ya, &ym));
    const double *dx = xa;
    double       *dy = ya;
    /* host vectors (a caller's standard vectors; the MPI types' halo vector is a CUDA vector)
       go through device staging buffers */
    if (!PetscMemTypeDevice(xm) && cols_ > 0) {
      PetscCall(Stage(&stage_x_, &cap_x_, cols_));
      PetscCallCUDA(cudaMemcpyAsync(stage_x_, xa, sizeof(double) * cols_, cudaMemcpyHostToDevice, stream));
      PetscCall(PetscLogCpuToGpu(sizeof(double) * (PetscLogDouble)cols_));
      dx = stage_x_;
    }
    if (!PetscMemTypeDevice(ym) && rows_ > 0) {
      PetscCall(Stage(&stage_y_, &cap_y_, rows_));
      if (add) {
        PetscCallCUDA(cudaMemcpyAsync(stage_y_, ya, sizeof(double) * rows_, cudaMemcpyHostToDevice, stream));
        PetscCall(PetscLogCpuToGpu(sizeof(double) * (PetscLogDouble)rows_));
      }
      dy = stage_y_;
    }
    if (rows_ > 0) {
      PetscCall(PetscLogGpuTimeBegin());
      PetscCallCUDA(cuda::spmv(D_, dx, dy, add ? true : false, stream));
      PetscCall(PetscLogGpuTimeEnd());
      PetscCall(PetscLogGpuFlops(add ? flops_.multadd : flops_.mult));
    }
    if (dy != ya) {
      PetscCallCUDA(cudaMemcpyAsync(ya, dy, sizeof(double) * rows_, cudaMemcpyDeviceToHost, stream));
      PetscCallCUDA(cudaStreamSynchronize(stream));
      PetscCall(PetscLogGpuToCpu(sizeof(double) * (PetscLogDouble)rows_));
    }
    if (add) PetscCall(VecRestoreArrayAndMemType(y, &ya));
    else PetscCall(VecRestoreArrayWriteAndMemType(y, &ya));
    PetscCall(VecRestoreArrayReadAndMemType(x, &xa));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode GetDiagonal(Vec d) override
  {
    PetscScalar *da;
    PetscMemType dm;
    PetscInt     n;
    cudaStream_t stream = nullptr;
    const size_t nd     = (size_t)std::min(rows_, cols_);

    PetscFunctionBegin;
    PetscCall(VecGetLocalSize(d, &n));
    PetscCheck(n == rows_, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "diagonal vector has %" PetscInt_FMT " local entries, the matrix %" PetscInt_FMT " rows", n, (PetscInt)rows_);
    PetscCall(CurrentCudaStream(&stream));
    PetscCall(VecGetArrayWriteAndMemType(d, &da, &dm));
    if (PetscMemTypeDevice(dm)) {
      if (nd) PetscCallCUDA(cudaMemcpyAsync(da, D_.diagonal, sizeof(double) * nd, cudaMemcpyDeviceToDevice, stream));
      if ((size_t)n > nd) PetscCallCUDA(cudaMemsetAsync(da + nd, 0, sizeof(double) * (n - nd), stream));
    } else {
      std::fill(da, da + n, 0.0);
      if (nd) PetscCallCUDA(cudaMemcpyAsync(da, D_.diagonal, sizeof(double) * nd, cudaMemcpyDeviceToHost, stream));
      PetscCallCUDA(cudaStreamSynchronize(stream));
      if (nd) PetscCall(PetscLogGpuToCpu(sizeof(double) * (PetscLogDouble)nd));
    }
    PetscCall(VecRestoreArrayWriteAndMemType(d, &da));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Release() override
  {
    PetscFunctionBegin;
    PetscCallCUDA(cuda::release(&D_));
    if (stage_x_) PetscCallCUDA(cudaFree(stage_x_));
    if (stage_y_) PetscCallCUDA(cudaFree(stage_y_));
    stage_x_ = stage_y_ = nullptr;
    cap_x_ = cap_y_ = 0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  FormatStats Stats() const override { return info_.stats; }
  PetscInt64  DeviceBytes() const override { return (PetscInt64)cuda::device_bytes(D_) + (PetscInt64)sizeof(double) * (PetscInt64)(cap_x_ + cap_y_); }
  PetscInt    ScaleExponent() const override { return info_.scale_exponent; }
  std::string Backend() const override
  {
    const int t = (int)D_.threads_per_row;
    return "CUDA kernels, " + std::to_string(t) + (t == 1 ? " thread" : " threads") + " per row";
  }

private:
  /* Calls f with the CSR src builds from on the device: src.csr in a temporary buffer; else src.A's
     CSR: AIJCUSPARSE's arrays (uploaded by PETSc where the host is newer), or, with
     free_device_csr and no current device copy, the host CSR in a temporary buffer. */
  static PetscErrorCode WithDeviceCsr(const BuildSource &src, cudaStream_t stream, const std::function<PetscErrorCode(const cuda::DeviceCsr &)> &f)
  {
    const PetscOffloadMask mask = src.A->offloadmask;

    PetscFunctionBegin;
    if (src.csr) {
      PetscCall(WithUploadedCsr(*src.csr, stream, f));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    if (!src.free_device_csr || mask == PETSC_OFFLOAD_GPU || mask == PETSC_OFFLOAD_BOTH) {
      PetscCall(WithAIJCusparseCsr(src.A, stream, f));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(WithUploadedCsr(src.A, stream, f));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  static PetscErrorCode Stage(double **buf, PetscInt64 *cap, PetscInt64 n)
  {
    PetscFunctionBegin;
    if (*cap < n) {
      if (*buf) PetscCallCUDA(cudaFree(*buf));
      *buf = nullptr;
      *cap = 0;
      PetscCallCUDA(cudaMalloc((void **)buf, sizeof(double) * n));
      *cap = n;
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  D                     D_{};
  cuda::DeviceBuildInfo info_;
  PetscInt64            rows_ = 0, cols_ = 0, nnz_ = 0;
  ProductFlops          flops_;
  double               *stage_x_ = nullptr, *stage_y_ = nullptr;
  PetscInt64            cap_x_ = 0, cap_y_ = 0;
};

} // namespace

std::unique_ptr<Shadow> CreateCudaShadow(Format f)
{
  return WithModule(f, [](auto m) -> std::unique_ptr<Shadow> { return std::make_unique<CudaShadow<decltype(m)>>(); });
}

} // namespace glue
} // namespace pspmv
