// The host backend of the mixed solvers' scaled copy (scaled_copy_backend.hpp): the core's host
// builders (src/mixed/scaled_copy.hpp, mixed_cg.hpp) and the FP32 PackSELL products.
#include "scaled_copy_backend.hpp"

#include "block_csr.hpp"
#include "mixed/mixed_cg.hpp"

#include <cmath>

namespace pspmv
{
namespace glue
{

PetscErrorCode HostScaledCopy::Build(Mat Ad, const PackSellOptions &opt, const mixed::CopyDither &dither, const CopyRunner &run, bool *refused)
{
  mixed::ScaledCopy c;

  PetscFunctionBegin;
  *refused = false;
  PetscCall(WithCsr(Ad, [&](const CsrView &A) { return run([&] { c = mixed::build_scaled_copy(A, opt, dither); }, refused); }));
  if (*refused) PetscFunctionReturn(PETSC_SUCCESS);
  diag_    = std::move(c);
  off_     = PackSellMatrix{};
  has_off_ = false;
  ghost_.clear();
  tmp_.clear();
  comp_.clear();
  info_.rows  = diag_.op.rows;
  info_.nnz   = diag_.nnz;
  info_.stats = diag_.op.stats();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode HostScaledCopy::UpdateValues(Mat Ad, const CopyRunner &run, bool *pattern_changed, bool *refused)
{
  PetscFunctionBegin;
  *pattern_changed = false;
  *refused         = false;
  PetscCall(WithCsr(Ad, [&](const CsrView &A) {
    return run(
      [&] {
        try {
          mixed::update_scaled_copy(A, diag_);
        } catch (const mixed::DiagonalError &) {
          throw;
        } catch (const FormatError &) {
          *pattern_changed = true; /* e.g. the diagonal block's pattern moved: rebuild */
        }
      },
      refused);
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode HostScaledCopy::SetOffDiag(const PackSellMatrix &off)
{
  PetscFunctionBegin;
  PetscCallCXX(off_ = off);
  has_off_ = true;
  PetscCallCXX(ghost_.assign((size_t)off.cols, 0.0f));
  PetscCallCXX(tmp_.assign(diag_.s.size(), 0.0f));
  comp_.clear();
  info_.nnz = diag_.nnz + off.stats().nnz;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode HostScaledCopy::Scaling(std::vector<double> *s) const
{
  PetscFunctionBegin;
  PetscCallCXX(*s = diag_.s);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* c = s .* (P s) - (A_lp 1): P s with the Pmat in FP64, the copies' row sums decoded in FP64 */
PetscErrorCode HostScaledCopy::Compensate(const std::function<void(const double *s, double *As)> &product)
{
  const size_t n = diag_.s.size();

  PetscFunctionBegin;
  PetscCall(CallCatching("the row-sum compensation of the scaled copy", [&]() {
    std::vector<double> As(n), lp(n), ones(n, 1.0), tl(n);
    product(diag_.s.data(), As.data());
    packsell_spmv(diag_.op, ones.data(), lp.data(), false);
    if (has_off_) {
      std::vector<double> og((size_t)off_.cols, 1.0);
      packsell_spmv(off_, og.data(), tl.data(), false);
      for (size_t i = 0; i < n; ++i) lp[i] += tl[i];
    }
    comp_ = mixed::rowsum_compensation(n, diag_.s.data(), As.data(), lp.data());
    return PETSC_SUCCESS;
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

void HostScaledCopy::Product(const float *p, float *w, const std::function<void(const float *p, float *ghost)> &halo_begin, const std::function<void(const float *p, float *ghost)> &halo_end)
{
  if (halo_begin) halo_begin(p, ghost_.data());
  packsell_spmv_f32(diag_.op, p, w);
  if (halo_end) {
    halo_end(p, ghost_.data());
    if (has_off_) {
      packsell_spmv_f32(off_, ghost_.data(), tmp_.data());
      for (size_t i = 0; i < tmp_.size(); ++i) w[i] += tmp_[i];
    }
  }
  for (size_t i = 0; i < comp_.size(); ++i) w[i] = std::fma(comp_[i], p[i], w[i]);
}

} // namespace glue
} // namespace pspmv
