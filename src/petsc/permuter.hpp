// The gather and scatter of an ordered layout's product (ordered_shadow.cpp): vectors moved
// between the user's numbering and the layout's (perm: the layout's index -> the user's), on the
// backend's memory. A permuter refers to the caller's perm (the ordered layout's PermutedCsr),
// which must outlive it and not change.
#pragma once
#include <petscvec.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace pspmv
{
namespace glue
{

class Permuter {
public:
  virtual ~Permuter() = default;
  // xp[i] = x[perm[i]]
  virtual PetscErrorCode Gather(Vec x, Vec xp) = 0;
  // y[perm[i]] = yp[i], or += with add
  virtual PetscErrorCode Scatter(Vec yp, Vec y, PetscBool add) = 0;
  // Frees device memory.
  virtual PetscErrorCode Release() = 0;
  // Bytes of device memory held (the permutation).
  virtual PetscInt64 DeviceBytes() const = 0;
};

// Host loops on the vectors' host arrays.
std::unique_ptr<Permuter> CreateHostPermuter(const std::vector<int32_t> &perm);
#if defined(PETSCSPMV_HAVE_CUDA)
// One kernel each on PETSc's current stream when both vectors are on the device (the host loops
// otherwise); the permutation is copied to the device.
PetscErrorCode CreateCudaPermuter(const std::vector<int32_t> &perm, std::unique_ptr<Permuter> *out);
#endif

} // namespace glue
} // namespace pspmv
