// The scaled low-precision copy of a mixed solver's Pmat on one backend, the one design both mixed
// solvers build on (PCMIXEDKRYLOV's inner solves, KSPMIXEDCG's low-precision steps): the PackSELL
// copy of D^-1/2 A D^-1/2 of the Pmat's diagonal block on this rank (src/mixed/scaled_copy.hpp),
// on several ranks the scaled off-diagonal block beside it, the row-sum compensation, value
// updates of the same pattern and rebuilds at another value format (the guard's raises). The
// host backend (HostScaledCopy) builds with the core's host builder and runs the FP32 product
// with its FP32 halo; the CUDA backend (CreateCudaScaledCopy()) builds on the device from the
// block's device CSR (AIJCUSPARSE's own arrays read in place, or one upload of a host CSR) and
// hands the copy to the device solver that runs on it (DeviceCopyHolder): the device solvers fuse
// the product into their own kernels. The core's exceptions reach the solver through the
// CopyRunner it passes (solver_common.hpp's RunCopyBuild()).
#pragma once
#include <petscmat.h>

#include "core/format_stats.hpp"
#include "core_error.hpp"
#include "formats/packsell/packsell.hpp"
#include "mixed/scaled_copy.hpp"

#include <functional>
#include <memory>
#include <vector>

#if defined(PETSCSPMV_HAVE_CUDA)
  #include "mixed/scaled_copy_device.hpp"
  #include <cuda_runtime.h>
#endif

namespace pspmv
{
namespace glue
{

/* Runs build (C++ that may throw the core's refusals and errors): a refusal of the Pmat's data
   sets *refused (and is a PETSc error or not, as the solver decides), anything else is a PETSc
   error. A build that throws has changed nothing. */
using CopyRunner = std::function<PetscErrorCode(const std::function<void()> &build, bool *refused)>;

/* What a solver shows of its copy (-ksp_view): the diagonal block's copy, nnz of both blocks. */
struct CopyInfo {
  int32_t     rows = 0;
  int64_t     nnz  = 0;
  FormatStats stats;
};

class ScaledCopyBackend {
public:
  virtual ~ScaledCopyBackend()  = default;
  virtual bool OnDevice() const = 0;
  /* Builds the copy of Ad (the Pmat's diagonal block on this rank, SeqAIJ-based) with opt, its
     values dithered as dither says; on a backend that has a copy, rebuilds it (another value
     format: the guard's raise), dropping the off-diagonal block and the compensation. Errors of
     the core come through run; a refusal (*refused) or an error leaves the previous copy. */
  virtual PetscErrorCode Build(Mat Ad, const PackSellOptions &opt, const mixed::CopyDither &dither, const CopyRunner &run, bool *refused) = 0;
  /* The Pmat block's values changed: Ad has the copy's pattern (the caller asks only for a block
     that PETSc reports SAME_NONZERO_PATTERN for) and new values, re-encoded without dither.
     *pattern_changed (nothing changed) when the backend sees another pattern (the host one
     compares every column, the CUDA one the shape, the nonzero count and how the CSR is read):
     the caller builds afresh. *refused: run refused the new values (the copy keeps the old). */
  virtual PetscErrorCode UpdateValues(Mat Ad, const CopyRunner &run, bool *pattern_changed, bool *refused) = 0;
  /* Several ranks: the scaled off-diagonal block (mixed::build_scaled_offdiag(), columns numbered
     as the halo's ghost entries) beside the copy; drops the compensation (Compensate() again). */
  virtual PetscErrorCode SetOffDiag(const PackSellMatrix &off) = 0;
  /* s = D^-1/2 of the local rows, on the host. */
  virtual PetscErrorCode Scaling(std::vector<double> *s) const = 0;
  /* The row-sum compensation of the current copy (mixed/mixed_cg.hpp): product(s, As) writes
     As = Pmat s on arrays of the backend's memory; throws PetscFailure on a PETSc error. */
  virtual PetscErrorCode  Compensate(const std::function<void(const double *s, double *As)> &product) = 0;
  virtual const CopyInfo &Info() const                                                                = 0;
};

/* The host backend: the copies built on the host, and their FP32 product. */
class HostScaledCopy final : public ScaledCopyBackend {
public:
  bool            OnDevice() const override { return false; }
  PetscErrorCode  Build(Mat Ad, const PackSellOptions &opt, const mixed::CopyDither &dither, const CopyRunner &run, bool *refused) override;
  PetscErrorCode  UpdateValues(Mat Ad, const CopyRunner &run, bool *pattern_changed, bool *refused) override;
  PetscErrorCode  SetOffDiag(const PackSellMatrix &off) override;
  PetscErrorCode  Scaling(std::vector<double> *s) const override;
  PetscErrorCode  Compensate(const std::function<void(const double *s, double *As)> &product) override;
  const CopyInfo &Info() const override { return info_; }

  /* the diagonal block's copy (the inner solvers' operator) */
  const mixed::ScaledCopy &Copy() const { return diag_; }
  /* w = A_lp p on the local rows: the diagonal block's copy, plus the off-diagonal block's on the
     ghost entries of p that halo_end() received (halo_begin() is called before the diagonal
     block's product, to overlap; both absent on one rank), plus the compensation's c .* p. The
     halo functions throw PetscFailure on a PETSc error. */
  void Product(const float *p, float *w, const std::function<void(const float *p, float *ghost)> &halo_begin, const std::function<void(const float *p, float *ghost)> &halo_end);

private:
  mixed::ScaledCopy  diag_;
  PackSellMatrix     off_;
  bool               has_off_ = false;
  std::vector<float> ghost_, tmp_;
  std::vector<float> comp_; /* the row-sum compensation (empty: off) */
  CopyInfo           info_;
};

#if defined(PETSCSPMV_HAVE_CUDA)
/* The device solver that runs on a CUDA backend's copy: the device solvers take the copies they
   run on (the src/mixed device solvers), so the backend builds a copy and hands it over. */
class DeviceCopyHolder {
public:
  virtual ~DeviceCopyHolder() = default;
  /* Takes c (the first copy, or a rebuilt one replacing it); *c is left empty, also on errors. */
  virtual cudaError_t Take(mixed::cuda::DeviceScaledCopy *c) = 0;
  /* update_scaled_copy_on_device() of the held copy from the device CSR A. */
  virtual cudaError_t                          UpdateValues(const cuda::DeviceCsr &A, cudaStream_t stream, bool *pattern_changed) = 0;
  virtual const mixed::cuda::DeviceScaledCopy &HeldCopy() const                                                                   = 0;
  /* Several ranks: takes the uploaded off-diagonal block *o (freed on errors); cudaErrorNotSupported
     where the solver has none (a block solver). */
  virtual cudaError_t SetOffDiag(cuda::DevicePackSell *o) = 0;
  /* The row-sum compensation of the held copy (product as ScaledCopyBackend::Compensate()). */
  virtual cudaError_t Compensate(const std::function<void(const double *s, double *As)> &product, cudaStream_t stream) = 0;
};

/* The CUDA backend of holder (which must outlive it). */
PetscErrorCode CreateCudaScaledCopy(DeviceCopyHolder *holder, std::unique_ptr<ScaledCopyBackend> *out);
#endif

} // namespace glue
} // namespace pspmv
