// PCMIXEDKRYLOV's host backend: the host twins of the inner solvers on PETSc host vectors.
#include "mixed_backend.hpp"

#include "core_error.hpp"
#include "mixed/f3r.hpp"
#include "mixed/inner_cg.hpp"

namespace pspmv {
namespace glue {

namespace {

class HostMixedBackend final : public MixedBackend {
public:
  explicit HostMixedBackend(const mixed::ScaledCopy &c) : c_(c) {}

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

  /* the copy is read in place; F3R's weights start afresh, as after a build (and on the device) */
  PetscErrorCode UpdateValues(const mixed::ScaledCopy &) override
  {
    f3r_ = mixed::F3RState{};
    return PETSC_SUCCESS;
  }

  PetscErrorCode ReadStats(mixed::InnerStats *stats, std::vector<double> *residuals) override
  {
    *stats += stats_;
    stats_ = mixed::InnerStats{};
    if (residuals) *residuals = residuals_;
    return PETSC_SUCCESS;
  }

  bool        OnDevice() const override { return false; }

private:
  const mixed::ScaledCopy &c_;
  mixed::InnerStats        stats_;
  mixed::F3RState          f3r_;
  std::vector<double>      residuals_;
};

} // namespace

PetscErrorCode CreateHostMixedBackend(const mixed::ScaledCopy &c, const MixedParams &, std::unique_ptr<MixedBackend> *out)
{
  PetscFunctionBegin;
  PetscCallCore(PETSC_ERR_MEM, *out = std::make_unique<HostMixedBackend>(c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
