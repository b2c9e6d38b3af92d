// Gather and scatter through a permutation on the device (an ordered layout's product,
// src/petsc/ordered_shadow.cpp): one kernel each, on the caller's stream. No PETSc.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace pspmv
{
namespace cuda
{

// xp[i] = x[perm[i]] for i < n.
cudaError_t gather_permuted(const int32_t *perm, const double *x, double *xp, int64_t n, cudaStream_t stream);
// y[perm[i]] = yp[i] (add: y[perm[i]] += yp[i]) for i < n; perm is a permutation, so no two
// threads write one entry.
cudaError_t scatter_permuted(const int32_t *perm, const double *yp, double *y, int64_t n, bool add, cudaStream_t stream);

} // namespace cuda
} // namespace pspmv
