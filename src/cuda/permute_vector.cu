#include "permute_vector.cuh"

namespace pspmv
{
namespace cuda
{

namespace
{
constexpr int kThreads = 256;

__global__ void gather_kernel(const int32_t *__restrict__ perm, const double *__restrict__ x, double *__restrict__ xp, int64_t n)
{
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) xp[i] = x[perm[i]];
}

__global__ void scatter_kernel(const int32_t *__restrict__ perm, const double *__restrict__ yp, double *__restrict__ y, int64_t n, bool add)
{
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const int32_t r = perm[i];
    y[r]            = add ? y[r] + yp[i] : yp[i];
  }
}

unsigned blocks(int64_t n)
{
  return unsigned((n + kThreads - 1) / kThreads);
}
} // namespace

cudaError_t gather_permuted(const int32_t *perm, const double *x, double *xp, int64_t n, cudaStream_t stream)
{
  if (n <= 0) return cudaSuccess;
  gather_kernel<<<blocks(n), kThreads, 0, stream>>>(perm, x, xp, n);
  return cudaGetLastError();
}

cudaError_t scatter_permuted(const int32_t *perm, const double *yp, double *y, int64_t n, bool add, cudaStream_t stream)
{
  if (n <= 0) return cudaSuccess;
  scatter_kernel<<<blocks(n), kThreads, 0, stream>>>(perm, yp, y, n, add);
  return cudaGetLastError();
}

} // namespace cuda
} // namespace pspmv
