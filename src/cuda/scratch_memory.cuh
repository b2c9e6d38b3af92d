// Scratch memory of the device builders and value updates (PETSc-free): stream-ordered
// allocations from a memory pool of their own, released to the device when a build or an update
// ends. The pool is separate from the device's default pool because PETSc sets the default
// pool's release threshold to the maximum (its DeviceContext keeps what it frees reserved): a
// build's scratch there would stay reserved by the process after the build, on top of the layout.
#pragma once
#include <cuda_runtime.h>
#include <cstddef>

namespace pspmv
{
namespace cuda
{
namespace detail
{

// The current device's scratch pool, created at the first call (per device, for the life of the
// process; thread-safe). Its release threshold is the maximum, so the allocations and frees
// within one build reuse memory; ScratchRelease gives it back at the end.
cudaError_t scratch_pool(cudaMemPool_t *pool);

// The scratch pool of device `device` if one was created (*pool set, true), else false.
bool existing_scratch_pool(int device, cudaMemPool_t *pool);

// Stream-ordered scratch array of n elements (from scratch_pool(); nothing for n == 0), freed on
// the same stream when it goes out of scope. status() is the allocation's error.
template <class T>
class Scratch {
public:
  Scratch() = default;
  Scratch(size_t n, cudaStream_t s) { allocate(n, s); }
  ~Scratch() { reset(); }
  Scratch(const Scratch &)               = delete;
  Scratch    &operator=(const Scratch &) = delete;
  cudaError_t allocate(size_t n, cudaStream_t s)
  {
    reset();
    stream_ = s;
    n_      = n;
    if (n == 0) return status_ = cudaSuccess;
    cudaMemPool_t pool;
    status_ = scratch_pool(&pool);
    if (status_ == cudaSuccess) status_ = cudaMallocFromPoolAsync(reinterpret_cast<void **>(&p_), n * sizeof(T), pool, s);
    if (status_ != cudaSuccess) {
      p_ = nullptr;
      n_ = 0;
    }
    return status_;
  }
  void reset()
  {
    if (p_) (void)cudaFreeAsync(p_, stream_);
    p_ = nullptr;
    n_ = 0;
  }
  T          *get() const { return p_; }
  size_t      size() const { return n_; }
  cudaError_t status() const { return status_; }

private:
  T           *p_      = nullptr;
  size_t       n_      = 0;
  cudaStream_t stream_ = nullptr;
  cudaError_t  status_ = cudaSuccess;
};

// Declared first in a function that builds or updates on `stream`, a stream of the current
// device (so destroyed after every Scratch of it): at scope exit, if the current device's scratch
// pool holds memory, waits for the stream and trims the pool to nothing. A trim releases only
// memory that is free and whose frees have completed, so what an enclosing build (a nested guard)
// or another stream still holds stays. Errors are ignored: the functions it guards synchronize and
// report the stream's errors themselves.
class ScratchRelease {
public:
  explicit ScratchRelease(cudaStream_t stream);
  ~ScratchRelease();
  ScratchRelease(const ScratchRelease &)            = delete;
  ScratchRelease &operator=(const ScratchRelease &) = delete;

private:
  cudaStream_t stream_;
  int          device_ = -1;
};

} // namespace detail
} // namespace cuda
} // namespace pspmv
