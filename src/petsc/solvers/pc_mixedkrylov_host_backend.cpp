// PCMIXEDKRYLOV's host backend: the scaled copy on the mixed solvers' host copy backend
// (HostScaledCopy) and the host twins of the inner solvers (inner_cg.hpp, f3r.hpp) on PETSc host
// vectors.
#include "pc_mixedkrylov_backend.hpp"

#include "core_error.hpp"
#include "mixed/f3r.hpp"
#include "mixed/inner_cg.hpp"
#include "mixed/scaling.hpp"

#include <cmath>

namespace pspmv
{
namespace glue
{

namespace
{

class HostMixedBackend final : public MixedBackend {
public:
  PetscErrorCode Build(Mat Ad, const PackSellOptions &opt, const CopyRunner &run, bool *refused) { return copy_.Build(Ad, opt, mixed::CopyDither{}, run, refused); }

  PetscErrorCode Apply(const MixedParams &p, Vec r, Vec z) override
  {
    const PetscScalar       *ra;
    PetscScalar             *za;
    const int64_t            before = stats_.inner_its;
    const mixed::ScaledCopy &c      = copy_.Copy();

    PetscFunctionBegin;
    PetscCall(VecGetArrayRead(r, &ra));
    PetscCall(VecGetArrayWrite(z, &za));
    if (p.method == InnerMethod::CG) PetscCallCore(PETSC_ERR_LIB, mixed::apply_inner_cg(c, p.cg, ra, za, &stats_, p.monitor ? &residuals_ : nullptr));
    else PetscCallCore(PETSC_ERR_LIB, mixed::apply_inner_f3r(c, p.f3r, ra, za, &f3r_, &stats_));
    PetscCall(VecRestoreArrayWrite(z, &za));
    PetscCall(VecRestoreArrayRead(r, &ra));
    /* per inner step: the product (2 nnz) and about 10 vector flops per row */
    PetscCall(PetscLogFlops((PetscLogDouble)(stats_.inner_its - before) * (2.0 * (PetscLogDouble)c.nnz + 10.0 * (PetscLogDouble)c.s.size())));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* F3R's weights start afresh, as after a build (and on the device) */
  PetscErrorCode UpdateValues(Mat Ad, const CopyRunner &run, bool *pattern_changed, bool *refused) override
  {
    PetscFunctionBegin;
    PetscCall(copy_.UpdateValues(Ad, run, pattern_changed, refused));
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
    *norm = mixed::entry_norm(copy_.Copy().s.data(), ra, copy_.Copy().s.size());
    PetscCall(VecRestoreArrayRead(r, &ra));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  const ScaledCopyBackend &Copy() const override { return copy_; }

private:
  HostScaledCopy      copy_;
  mixed::InnerStats   stats_;
  mixed::F3RState     f3r_;
  std::vector<double> residuals_;
};

} // namespace

PetscErrorCode CreateHostMixedBackend(Mat Ad, const PackSellOptions &opt, const MixedParams &, const CopyRunner &run, std::unique_ptr<MixedBackend> *out, bool *refused)
{
  std::unique_ptr<HostMixedBackend> b;

  PetscFunctionBegin;
  PetscCallCore(PETSC_ERR_MEM, b = std::make_unique<HostMixedBackend>());
  PetscCall(b->Build(Ad, opt, run, refused));
  if (*refused) PetscFunctionReturn(PETSC_SUCCESS);
  *out = std::move(b);
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
