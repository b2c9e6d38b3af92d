// Host backend: the core's reference kernels on PETSc's host arrays. A product logs
// PetscLogFlops() of AIJ's convention (ProductFlops).
#include "block_csr.hpp"
#include "core_error.hpp"
#include "shadow.hpp"

#include <algorithm>
#include <functional>

namespace pspmv
{
namespace glue
{

namespace
{

/* Calls f with the CSR src builds from: src.csr, else A's arrays. */
PetscErrorCode WithSourceCsr(const BuildSource &src, const std::function<PetscErrorCode(const CsrView &)> &f)
{
  PetscFunctionBegin;
  if (src.csr) PetscCall(f(*src.csr));
  else PetscCall(WithCsr(src.A, f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <class M>
class HostShadow final : public Shadow {
public:
  PetscErrorCode Build(const BuildSource &src, const FormatOptions &opts) override
  {
    PetscFunctionBegin;
    PetscCall(WithSourceCsr(src, [&](const CsrView &A) -> PetscErrorCode {
      PetscFunctionBegin;
      PetscCallCoreAt(src.global, PETSC_ERR_ARG_WRONG, M_ = M::build(A, opts.Of<M>()));
      PetscFunctionReturn(PETSC_SUCCESS);
    }));
    PetscCall(CountProductFlops(src.A, &flops_));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode UpdateValues(const BuildSource &src, PetscBool *pattern_changed) override
  {
    bool changed = false;

    PetscFunctionBegin;
    /* a FormatError means the pattern differs (the core refused before changing anything);
       a ValueRangeError (a value that does not fit the value format) is an error */
    PetscCall(WithSourceCsr(src, [&](const CsrView &A) -> PetscErrorCode {
      PetscFunctionBegin;
      PetscCallCoreAt(
        src.global, PETSC_ERR_LIB, try { M::update(A, M_); } catch (const FormatError &) { changed = true; });
      PetscFunctionReturn(PETSC_SUCCESS);
    }));
    *pattern_changed = changed ? PETSC_TRUE : PETSC_FALSE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Mult(Vec x, Vec y, PetscBool add) override
  {
    const PetscScalar *xa;
    PetscScalar       *ya;

    PetscFunctionBegin;
    PetscCall(VecGetArrayRead(x, &xa));
    if (add) PetscCall(VecGetArray(y, &ya));
    else PetscCall(VecGetArrayWrite(y, &ya));
    PetscCallCore(PETSC_ERR_LIB, M::spmv(M_, xa, ya, add));
    if (add) PetscCall(VecRestoreArray(y, &ya));
    else PetscCall(VecRestoreArrayWrite(y, &ya));
    PetscCall(VecRestoreArrayRead(x, &xa));
    PetscCall(PetscLogFlops(add ? flops_.multadd : flops_.mult));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode GetDiagonal(Vec d) override
  {
    PetscScalar *da;
    PetscInt     n;

    PetscFunctionBegin;
    PetscCall(VecGetLocalSize(d, &n));
    PetscCheck(n == M_.rows, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "diagonal vector has %" PetscInt_FMT " local entries, the matrix %d rows", n, (int)M_.rows);
    PetscCall(VecGetArrayWrite(d, &da));
    std::fill(da, da + n, 0.0);
    PetscCallCore(PETSC_ERR_LIB, M::diagonal(M_, da));
    PetscCall(VecRestoreArrayWrite(d, &da));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Release() override { return PETSC_SUCCESS; }
  FormatStats    Stats() const override { return M_.stats(); }
  PetscInt64     DeviceBytes() const override { return 0; }
  PetscInt       ScaleExponent() const override { return M::scale_exponent(M_); }
  std::string    Backend() const override { return "host kernels"; }

private:
  typename M::Host M_;
  ProductFlops     flops_;
};

} // namespace

std::unique_ptr<Shadow> CreateHostShadow(Format f)
{
  return WithModule(f, [](auto m) -> std::unique_ptr<Shadow> { return std::make_unique<HostShadow<decltype(m)>>(); });
}

} // namespace glue
} // namespace pspmv
