// KSPMIXEDCG's CUDA backend.
#include "../ksp_mixedcg_backend.hpp"

namespace pspmv {
namespace glue {

PetscErrorCode CreateMixedCgDevice(Mat, const PackSellOptions &, PetscInt, std::unique_ptr<MixedCgDevice> *)
{
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "KSPMIXEDCG: the CUDA backend is not built yet: use -ksp_mixedcg_backend host");
}

} // namespace glue
} // namespace pspmv
