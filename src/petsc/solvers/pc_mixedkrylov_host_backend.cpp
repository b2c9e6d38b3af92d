// PCMIXEDKRYLOV's host backend: the scaled copy built on the host (scaled_copy.hpp) and the host
// twins of the inner solvers (inner_cg.hpp, f3r.hpp) on PETSc host vectors.
#include "pc_mixedkrylov_backend.hpp"

#include "block_csr.hpp"
#include "core_error.hpp"
#include "mixed/f3r.hpp"
#include "mixed/inner_cg.hpp"
#include "mixed/scaled_copy.hpp"
#include "mixed/scaling.hpp"

#include <cmath>

namespace pspmv {
namespace glue {

namespace {

class HostMixedBackend final : public MixedBackend {
public:
  PetscErrorCode Build(const CsrView &A, const PackSellOptions &opt, const CoreRunner &run, bool *refused)
  {
    PetscFunctionBegin;
    PetscCall(run([&] { c_ = mixed::build_scaled_copy(A, opt); }, refused));
    if (*refused) PetscFunctionReturn(PETSC_SUCCESS);
    info_.rows  = c_.op.rows;
    info_.nnz   = c_.nnz;
    info_.stats = c_.op.stats();
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Apply(const MixedParams &p, Vec r, Vec z) override
  {
    const PetscScalar *ra;
    PetscScalar       *za;
    const int64_t      before = stats_.inner_its;

    PetscFunctionBegin;
    PetscCall(VecGetArrayRead(r, &ra));
    PetscCall(VecGetArrayWrite(z, &za));
    if (p.method == InnerMethod::CG) PetscCallCore(PETSC_ERR_LIB, mixed::apply_inner_cg(c_, p.cg, ra, za, &stats_, p.monitor ? &residuals_ : nullptr));
    else PetscCallCore(PETSC_ERR_LIB, mixed::apply_inner_f3r(c_, p.f3r, ra, za, &f3r_, &stats_));
    PetscCall(VecRestoreArrayWrite(z, &za));
    PetscCall(VecRestoreArrayRead(r, &ra));
    /* per inner step: the product (2 nnz) and about 10 vector flops per row */
    PetscCall(PetscLogFlops((PetscLogDouble)(stats_.inner_its - before) * (2.0 * (PetscLogDouble)c_.nnz + 10.0 * (PetscLogDouble)c_.s.size())));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* F3R's weights start afresh, as after a build (and on the device) */
  PetscErrorCode UpdateValues(Mat Ad, const CoreRunner &run, bool *pattern_changed, bool *refused) override
  {
    PetscFunctionBegin;
    *pattern_changed = false;
    PetscCall(WithCsr(Ad, [&](const CsrView &A) {
      return run(
        [&] {
          try {
            mixed::update_scaled_copy(A, c_);
          } catch (const mixed::DiagonalError &) {
            throw;
          } catch (const FormatError &) {
            *pattern_changed = true; /* e.g. the diagonal block's pattern moved: rebuild */
          }
        },
        refused);
    }));
    if (!*pattern_changed && !*refused) f3r_ = mixed::F3RState{};
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode ReadStats(mixed::InnerStats *stats, std::vector<double> *residuals) override
  {
    *stats += stats_;
    stats_ = mixed::InnerStats{};
    if (residuals) *residuals = residuals_;
    return PETSC_SUCCESS;
  }

  /* the inner solvers' entry norm (mixed/scaling.hpp: right over the whole double range) */
  PetscErrorCode ScaledNorm(Vec r, PetscReal *norm) override
  {
    const PetscScalar *ra;

    PetscFunctionBegin;
    PetscCall(VecGetArrayRead(r, &ra));
    *norm = mixed::entry_norm(c_.s.data(), ra, c_.s.size());
    PetscCall(VecRestoreArrayRead(r, &ra));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  const CopyInfo &Copy() const override { return info_; }
  bool            OnDevice() const override { return false; }

private:
  mixed::ScaledCopy   c_;
  CopyInfo            info_;
  mixed::InnerStats   stats_;
  mixed::F3RState     f3r_;
  std::vector<double> residuals_;
};

} // namespace

PetscErrorCode CreateHostMixedBackend(Mat Ad, const PackSellOptions &opt, const MixedParams &, const CoreRunner &run, std::unique_ptr<MixedBackend> *out, bool *refused)
{
  std::unique_ptr<HostMixedBackend> b;

  PetscFunctionBegin;
  PetscCallCore(PETSC_ERR_MEM, b = std::make_unique<HostMixedBackend>());
  PetscCall(WithCsr(Ad, [&](const CsrView &A) { return b->Build(A, opt, run, refused); }));
  if (*refused) PetscFunctionReturn(PETSC_SUCCESS);
  *out = std::move(b);
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
