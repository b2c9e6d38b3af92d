// The host Permuter (permuter.hpp): loops on host arrays; the CUDA one falls back to it for host
// vectors.
#include "permuter.hpp"

namespace pspmv
{
namespace glue
{

namespace
{

class HostPermuter final : public Permuter {
public:
  explicit HostPermuter(const std::vector<int32_t> &perm) : perm_(perm) { }

  PetscErrorCode Gather(Vec x, Vec xp) override
  {
    const PetscScalar *xa;
    PetscScalar       *pa;

    PetscFunctionBegin;
    PetscCall(VecGetArrayRead(x, &xa));
    PetscCall(VecGetArrayWrite(xp, &pa));
    for (size_t i = 0; i < perm_.size(); i++) pa[i] = xa[perm_[i]];
    PetscCall(VecRestoreArrayWrite(xp, &pa));
    PetscCall(VecRestoreArrayRead(x, &xa));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Scatter(Vec yp, Vec y, PetscBool add) override
  {
    const PetscScalar *pa;
    PetscScalar       *ya;

    PetscFunctionBegin;
    PetscCall(VecGetArrayRead(yp, &pa));
    if (add) {
      PetscCall(VecGetArray(y, &ya));
      for (size_t i = 0; i < perm_.size(); i++) ya[perm_[i]] += pa[i];
      PetscCall(VecRestoreArray(y, &ya));
    } else {
      PetscCall(VecGetArrayWrite(y, &ya));
      for (size_t i = 0; i < perm_.size(); i++) ya[perm_[i]] = pa[i];
      PetscCall(VecRestoreArrayWrite(y, &ya));
    }
    PetscCall(VecRestoreArrayRead(yp, &pa));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Release() override { return PETSC_SUCCESS; }
  PetscInt64     DeviceBytes() const override { return 0; }

private:
  const std::vector<int32_t> &perm_; /* the caller's (permuter.hpp) */
};

} // namespace

std::unique_ptr<Permuter> CreateHostPermuter(const std::vector<int32_t> &perm)
{
  return std::make_unique<HostPermuter>(perm);
}

} // namespace glue
} // namespace pspmv
