// CUDA backend: the host layout is built by the core (and kept for value updates), uploaded with
// src/cuda/device_formats.hpp, and multiplied on PETSc's current device stream.
// Logging (-log_view; docs/logging.md), one logged copy per transfer as AIJCUSPARSE logs: one
// PetscLogCpuToGpu() per layout upload and per value update that copies anything (its bytes:
// upload_bytes(), value_upload_bytes() of the device copy), one PetscLogCpuToGpu() or
// PetscLogGpuToCpu() per staging copy of a host vector and per copy of the diagonal into a host
// vector. The kernels run between PetscLogGpuTimeBegin()/End() and log PetscLogGpuFlops() of
// AIJ's convention (ProductFlops).
#include <petscdevice_cuda.h>

#include "core_error.hpp"
#include "cuda/device_formats.hpp"
#include "shadow.hpp"

#include <algorithm>
#include <string>

namespace pspmv {
namespace glue {

namespace {

/* The stream of PETSc's current device context: the one its CUDA vector operations use. */
PetscErrorCode CurrentStream(cudaStream_t *stream)
{
  PetscDeviceContext dctx;
  cudaStream_t      *handle = nullptr;

  PetscFunctionBegin;
  PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
  PetscCall(PetscDeviceContextGetStreamHandle(dctx, (void **)&handle));
  *stream = handle ? *handle : nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

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

  PetscErrorCode Build(const CsrView &A, const FormatOptions &opts) override
  {
    PetscFunctionBegin;
    PetscCallCore(PETSC_ERR_ARG_WRONG, H_ = M::build(A, opts.Of<M>()));
    rows_  = A.rows;
    cols_  = A.cols;
    flops_ = CountProductFlops(A);
    /* kernels of a previous product may still read device memory the upload replaces */
    PetscCallCUDA(cudaDeviceSynchronize());
    PetscCallCUDA(cuda::upload(H_, &D_));
    PetscCallCUDA(cudaDeviceSynchronize());
    PetscCall(LogUpload(cuda::upload_bytes(D_)));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode UpdateValues(const CsrView &A, PetscBool *pattern_changed) override
  {
    bool changed = false;

    PetscFunctionBegin;
    PetscCallCore(PETSC_ERR_LIB, try { M::update(A, H_); } catch (const FormatError &) { changed = true; });
    *pattern_changed = changed ? PETSC_TRUE : PETSC_FALSE;
    if (!changed) {
      PetscCallCUDA(cudaDeviceSynchronize());
      PetscCallCUDA(cuda::upload_values(H_, &D_));
      PetscCallCUDA(cudaDeviceSynchronize());
      PetscCall(LogUpload(cuda::value_upload_bytes(D_)));
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Mult(Vec x, Vec y, PetscBool add) override
  {
    const PetscScalar *xa;
    PetscScalar       *ya;
    PetscMemType       xm, ym;
    cudaStream_t       stream;

    PetscFunctionBegin;
    PetscCall(CurrentStream(&stream));
    PetscCall(VecGetArrayReadAndMemType(x, &xa, &xm));
    if (add) PetscCall(VecGetArrayAndMemType(y, &ya, &ym));
    else PetscCall(VecGetArrayWriteAndMemType(y, &ya, &ym));
    const double *dx = xa;
    double       *dy = ya;
    /* host vectors (for instance the halo vector of an MPI matrix converted after assembly) go
       through device staging buffers */
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
    cudaStream_t stream;
    const size_t nd = (size_t)std::min(rows_, cols_);

    PetscFunctionBegin;
    PetscCall(VecGetLocalSize(d, &n));
    PetscCheck(n == rows_, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "diagonal vector has %" PetscInt_FMT " local entries, the matrix %" PetscInt_FMT " rows", n, (PetscInt)rows_);
    PetscCall(CurrentStream(&stream));
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

  FormatStats Stats() const override { return H_.stats(); }
  PetscInt    ScaleExponent() const override { return M::scale_exponent(H_); }
  std::string Backend() const override
  {
    const int t = (int)D_.threads_per_row;
    return "CUDA kernels, " + std::to_string(t) + (t == 1 ? " thread" : " threads") + " per row";
  }

private:
  static PetscErrorCode LogUpload(int64_t bytes)
  {
    PetscFunctionBegin;
    if (bytes > 0) PetscCall(PetscLogCpuToGpu((PetscLogDouble)bytes));
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

  typename M::Host H_;
  D                D_{};
  PetscInt64       rows_ = 0, cols_ = 0;
  ProductFlops     flops_;
  double          *stage_x_ = nullptr, *stage_y_ = nullptr;
  PetscInt64       cap_x_ = 0, cap_y_ = 0;
};

} // namespace

std::unique_ptr<Shadow> CreateCudaShadow(Format f)
{
  return WithModule(f, [](auto m) -> std::unique_ptr<Shadow> { return std::make_unique<CudaShadow<decltype(m)>>(); });
}

} // namespace glue
} // namespace pspmv
