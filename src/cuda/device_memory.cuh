// Exact-size device allocations and copies used by the format uploads (PETSc-free).
// Nothing is allocated for an empty array: its device pointer stays null, so a kernel that
// would read it must never be launched for it (the callers guarantee that).
#pragma once
#include <cuda_runtime.h>
#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <vector>

// Evaluates a CUDA call and returns its error from the enclosing function if it failed.
#define PSPMV_CUDA_TRY(call) \
  do { \
    const cudaError_t pspmv_err_ = (call); \
    if (pspmv_err_ != cudaSuccess) return pspmv_err_; \
  } while (0)

namespace pspmv
{
namespace cuda
{
namespace detail
{

// Allocates exactly n elements (nothing for n == 0) and copies src into them.
template <class T>
cudaError_t alloc_copy(const T *src, size_t n, T **dst)
{
  *dst = nullptr;
  if (n == 0) return cudaSuccess;
  PSPMV_CUDA_TRY(cudaMalloc(reinterpret_cast<void **>(dst), n * sizeof(T)));
  return cudaMemcpy(*dst, src, n * sizeof(T), cudaMemcpyHostToDevice);
}
template <class T>
cudaError_t alloc_copy(const std::vector<T> &src, T **dst)
{
  return alloc_copy(src.data(), src.size(), dst);
}

// Copies n elements into an existing allocation of the same size (value-only updates).
template <class T>
cudaError_t copy_into(const T *src, size_t n, T *dst)
{
  if (n == 0) return cudaSuccess;
  if (dst == nullptr) return cudaErrorInvalidDevicePointer;
  return cudaMemcpy(dst, src, n * sizeof(T), cudaMemcpyHostToDevice);
}
template <class T>
cudaError_t copy_into(const std::vector<T> &src, T *dst)
{
  return copy_into(src.data(), src.size(), dst);
}

// Frees *p (if any), nulls it, and keeps the first error seen in *first.
template <class T>
void free_ptr(T **p, cudaError_t *first)
{
  if (*p != nullptr) {
    const cudaError_t e = cudaFree(*p);
    if (e != cudaSuccess && *first == cudaSuccess) *first = e;
  }
  *p = nullptr;
}

// upload() of a format: releases what *d held, runs upload_all(h, d) and, when it fails,
// leaves *d released (empty); returns the first error.
template <class Host, class Device, class UploadAll>
cudaError_t reupload(const Host &h, Device *d, UploadAll upload_all)
{
  PSPMV_CUDA_TRY(release(d));
  const cudaError_t err = upload_all(h, d);
  if (err != cudaSuccess) release(d); // leave *d empty, report the first error
  return err;
}

// The diagonal of h (min(rows, cols) values, diagonal(h, out) writes them) copied to the device:
// into a new allocation *diag (allocate) or into the existing one (a value update).
template <class Host, class Diagonal>
cudaError_t upload_diagonal(const Host &h, Diagonal diagonal, double **diag, bool allocate)
{
  const size_t n = static_cast<size_t>(std::min(h.rows, h.cols));
  if (n == 0) return cudaSuccess;
  std::vector<double> d(n);
  diagonal(h, d.data());
  return allocate ? alloc_copy(d, diag) : copy_into(d, *diag);
}

// Bytes of a device layout's diagonal, at the size upload_diagonal() allocated.
template <class Device>
int64_t diagonal_bytes(const Device &A)
{
  return A.diagonal ? static_cast<int64_t>(std::min(A.rows, A.cols)) * static_cast<int64_t>(sizeof(double)) : 0;
}

// Number of multiprocessors of the current device (cached per device ordinal).
cudaError_t multiprocessor_count(int *count);

// Threads the current device holds at once (SMs x max threads per SM), for the choice of
// threads per row at upload.
cudaError_t resident_threads(int64_t *n);

// Blocks of `threads` threads that cover n work items (n > 0).
inline unsigned int blocks_for(int64_t n, int threads)
{
  return static_cast<unsigned int>((n + threads - 1) / threads);
}

} // namespace detail
} // namespace cuda
} // namespace pspmv
