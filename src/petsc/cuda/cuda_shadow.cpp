// CUDA backend: the AIJ CSR is uploaded once (copied on the device from a device twin: the
// aijcusparse matrix a MatConvert() starts from) and the layout built on the device
// (build_on_device() of src/cuda/device_formats.hpp: bit for bit the host builder's layout), on
// PETSc's current device stream; a value update uploads the values only and re-encodes them on
// the device (update_values_on_device()). No host copy of the layout is kept: the statistics
// come with the device build (DeviceBuildInfo). The device CSR (rowptr, colidx, values) stays
// for value updates and their range errors.
// Logging (-log_view; docs/logging.md), one logged copy per transfer as AIJCUSPARSE logs: one
// PetscLogCpuToGpu() per CSR upload (rowptr + colidx + values at a build, none at a build from a
// device twin, values at a value update), the device build and update between PetscLogGpuTimeBegin()/End() (inside the
// SpMVBuild / SpMVValues events of seqspmv.cpp), one PetscLogCpuToGpu() or
// PetscLogGpuToCpu() per staging copy of a host vector and per copy of the diagonal into a host
// vector. The kernels run between PetscLogGpuTimeBegin()/End() and log PetscLogGpuFlops() of
// AIJ's convention (ProductFlops).
#include <petscdevice_cuda.h>

#include "core_error.hpp"
#include "cuda/device_formats.hpp"
#include "shadow.hpp"
#include "aijcusparse_csr.hpp"
#include "current_stream.hpp"
#include "device_csr_upload.hpp"

#include <algorithm>
#include <string>

namespace pspmv {
namespace glue {

namespace {

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

  PetscErrorCode Build(const CsrView &A, const FormatOptions &opts, Mat device_twin) override
  {
    cudaStream_t stream = nullptr;
    cudaError_t  cerr = cudaSuccess;

    PetscFunctionBegin;
    PetscCall(CurrentCudaStream(&stream));
    rows_  = A.rows;
    cols_  = A.cols;
    flops_ = CountProductFlops(A);
    /* kernels of a previous product may still read device memory the build replaces */
    PetscCallCUDA(cudaDeviceSynchronize());
    if (device_twin) {
      /* the twin's CSR is A's: copied on the device, nothing uploaded */
      PetscCall(WithAIJCusparseCsr(device_twin, stream, [&](const cuda::DeviceCsr &d) -> PetscErrorCode {
        PetscFunctionBegin;
        PetscCheck(d.rows == A.rows && d.cols == A.cols && d.nnz == (int64_t)A.nnz(), PETSC_COMM_SELF, PETSC_ERR_PLIB, "the device twin of a build is %d x %d with %" PetscInt64_FMT " entries, the matrix %d x %d with %" PetscInt64_FMT, (int)d.rows, (int)d.cols, (PetscInt64)d.nnz, (int)A.rows, (int)A.cols, (PetscInt64)A.nnz());
        PetscCall(csr_.CopyFromDevice(d, stream));
        PetscFunctionReturn(PETSC_SUCCESS);
      }));
    } else PetscCall(csr_.Upload(A, stream, PETSC_TRUE));
    PetscCall(PetscLogGpuTimeBegin());
    const PetscErrorCode ierr = [&]() -> PetscErrorCode {
      PetscFunctionBegin;
      PetscCallCore(PETSC_ERR_ARG_WRONG, cerr = cuda::build_on_device(csr_.View(A), opts.Of<M>(), stream, &D_, &info_));
      PetscCallCUDA(cerr);
      PetscFunctionReturn(PETSC_SUCCESS);
    }();
    PetscCall(PetscLogGpuTimeEnd()); /* closed before an error returns */
    PetscCall(ierr);
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode UpdateValues(const CsrView &A, PetscBool *pattern_changed) override
  {
    cudaStream_t stream = nullptr;
    cudaError_t  cerr    = cudaSuccess;
    bool         changed = false;
    int32_t      scale   = 0;

    PetscFunctionBegin;
    *pattern_changed = PETSC_TRUE;
    /* the glue detects a changed pattern by the nonzero state; a different shape or count here
       also asks for a rebuild */
    if (A.rows != rows_ || A.cols != cols_ || (int64_t)A.nnz() != csr_.Nnz()) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(CurrentCudaStream(&stream));
    PetscCallCUDA(cudaDeviceSynchronize());
    PetscCall(csr_.Upload(A, stream, PETSC_FALSE));
    PetscCall(PetscLogGpuTimeBegin());
    const PetscErrorCode ierr = [&]() -> PetscErrorCode {
      PetscFunctionBegin;
      PetscCallCore(PETSC_ERR_LIB, cerr = cuda::update_values_on_device(csr_.View(A), stream, &D_, &changed, &scale));
      PetscCallCUDA(cerr);
      PetscFunctionReturn(PETSC_SUCCESS);
    }();
    PetscCall(PetscLogGpuTimeEnd()); /* closed before an error returns */
    PetscCall(ierr);
    info_.scale_exponent = scale;
    *pattern_changed     = changed ? PETSC_TRUE : PETSC_FALSE;
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
    const size_t nd = (size_t)std::min(rows_, cols_);

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
    PetscCall(csr_.Free());
    if (stage_x_) PetscCallCUDA(cudaFree(stage_x_));
    if (stage_y_) PetscCallCUDA(cudaFree(stage_y_));
    stage_x_ = stage_y_ = nullptr;
    cap_x_ = cap_y_ = 0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  FormatStats Stats() const override { return info_.stats; }
  PetscInt    ScaleExponent() const override { return info_.scale_exponent; }
  std::string Backend() const override
  {
    const int t = (int)D_.threads_per_row;
    return "CUDA kernels, " + std::to_string(t) + (t == 1 ? " thread" : " threads") + " per row";
  }

private:
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
  DeviceCsrUpload       csr_; /* kept for value updates and their range errors */
  PetscInt64            rows_ = 0, cols_ = 0;
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
