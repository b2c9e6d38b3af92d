// Shared pieces of the device builders (src/formats/*/*_device_build.cu; PETSc-free): CUB calls
// with their temporary storage (scratch memory: scratch_memory.cuh), row lengths, histograms of
// small integers (for the hybrid width rule run on the host), CSR checks, the COO tail of the
// hybrid split and the positions of the diagonal entries. Everything runs on the stream it is
// given; functions that return a host value synchronize that stream.
#pragma once
#include "core/build_error.hpp"
#include "core/hybrid.hpp"
#include "cuda/device_coo_tail.hpp"
#include "cuda/device_csr.hpp"
#include "cuda/device_memory.cuh"
#include "cuda/scratch_memory.cuh"
#include <cuda_runtime.h>
#include <cstdint>
#include <vector>

namespace pspmv
{
namespace cuda
{
namespace detail
{

constexpr int kBuildThreads = 256;

// A failed CUDA call as the builders' error (BuildError::Kind::Device): "<what>: <CUDA's name
// and description of e>".
BuildError device_error(cudaError_t e, const char *what);
// Returns device_error(call's error, what) from the enclosing function when the call failed.
#define PSPMV_DEVICE_TRY(call, what) \
  do { \
    const cudaError_t pspmv_device_error_ = (call); \
    if (pspmv_device_error_ != cudaSuccess) return ::pspmv::cuda::detail::device_error(pspmv_device_error_, what); \
  } while (0)

// Runs a CUB device algorithm: f(void *temp, size_t &bytes) is called once to size the
// temporary storage (temp null) and once to run (temp at least 1 byte, so CUB never mistakes
// the run for a size query).
template <class F>
cudaError_t cub_run(cudaStream_t s, F &&f)
{
  size_t bytes = 0;
  PSPMV_CUDA_TRY(f(static_cast<void *>(nullptr), bytes));
  Scratch<unsigned char> temp(bytes > 0 ? bytes : 1, s);
  PSPMV_CUDA_TRY(temp.status());
  return f(static_cast<void *>(temp.get()), bytes);
}

// Copies one value from the device and waits for it.
template <class T>
cudaError_t fetch(const T *d, T *h, cudaStream_t s)
{
  PSPMV_CUDA_TRY(cudaMemcpyAsync(h, d, sizeof(T), cudaMemcpyDeviceToHost, s));
  return cudaStreamSynchronize(s);
}

// Exact-size allocation for a layout array (cudaMalloc: the layout is freed by release()).
template <class T>
cudaError_t alloc(size_t n, T **p)
{
  *p = nullptr;
  if (n == 0) return cudaSuccess;
  return cudaMalloc(reinterpret_cast<void **>(p), n * sizeof(T));
}

// Reduction operators (CUB's own names moved between CCCL versions).
struct MaxOp {
  template <class T>
  __host__ __device__ __forceinline__ T operator()(const T &a, const T &b) const
  {
    return a < b ? b : a;
  }
};
struct MinOp {
  template <class T>
  __host__ __device__ __forceinline__ T operator()(const T &a, const T &b) const
  {
    return b < a ? b : a;
  }
};
struct SumOp {
  template <class T>
  __host__ __device__ __forceinline__ T operator()(const T &a, const T &b) const
  {
    return a + b;
  }
};

// Blocks of kBuildThreads threads for n items (n > 0), and of warps for n warp items.
inline unsigned int grid_for(int64_t n)
{
  return blocks_for(n, kBuildThreads);
}
inline unsigned int warp_grid_for(int64_t n)
{
  return blocks_for(n, kBuildThreads / 32);
}

// len[r] = rowptr[r+1] - rowptr[r] for the A.rows rows (A.rows > 0).
cudaError_t row_lengths(const DeviceCsr &A, int32_t *len, cudaStream_t s);
// Largest of a[0..n) (0 for n == 0), as int32.
cudaError_t max_of(const int32_t *a, int64_t n, int32_t *result, cudaStream_t s);
// Sum of a[0..n) in int64 (0 for n == 0).
cudaError_t sum_of(const int32_t *a, int64_t n, int64_t *result, cudaStream_t s);
// hist[v] = entries of a[0..n) equal to v, for 0 <= v <= maxval (hist resized to maxval + 1;
// every a[i] must lie in [0, maxval]). Radix sort and run-length encoding on the device; only
// the distinct values and their counts come back.
cudaError_t histogram(const int32_t *a, int64_t n, int32_t maxval, std::vector<int64_t> *hist, cudaStream_t s);
// out[b] = max of len over rows [b*block, min(rows, (b+1)*block)) for b < ceil(rows/block).
cudaError_t block_max(const int32_t *len, int32_t rows, int32_t block, int32_t *out, cudaStream_t s);
// check_csr() of A on the device, with its message (csr_defect_message), and the conditions of
// a device CSR: rowptr[rows] = nnz, nnz below 2^31. Only the offending row's columns come to
// the host, to be named. A CUDA failure: BuildError::Kind::Device.
BuildError check_csr_on_device(const DeviceCsr &A, cudaStream_t s);
// The COO tail for width K (every nonzero at position >= K of its row, in CSR order): allocates
// t->row, t->col, t->source (CSR position of each entry: value updates gather through it),
// t->val (values left to the caller: fill_tail_values) and the fused-launch counters, as
// upload_tail does; t->nnz = entries, t->chunk planned (plan_separate_tail). len: the row lengths.
cudaError_t build_tail(const DeviceCsr &A, const int32_t *len, int32_t K, DeviceCooTail *t, cudaStream_t s);
// CSR position of A(r, r), or -1 where row r's pattern has none (0 <= r < min(rows, cols); a
// valid CSR: columns strictly increasing within a row, so a binary search).
__device__ inline int32_t diagonal_position(const DeviceCsr &A, int32_t r)
{
  int32_t lo = A.rowptr[r], hi = A.rowptr[r + 1];
  while (lo < hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    const int32_t c   = A.colidx[mid];
    if (c == r) return mid;
    if (c < r) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}
// *k = diagonal_position(A, r), computed on the device (0 <= r < min(rows, cols)).
cudaError_t fetch_diagonal_position(const DeviceCsr &A, int32_t r, int32_t *k, cudaStream_t s);
// Row of CSR position k (0 <= k < nnz): the r with rowptr[r] <= k < rowptr[r+1].
cudaError_t row_of_position(const DeviceCsr &A, int64_t k, int32_t *row, cudaStream_t s);

// t.val[i] = op(values[t.source[i]]) for every tail entry (op: __device__ double(double)).
template <class Op>
__global__ void tail_values_kernel(int64_t n, const int32_t *__restrict__ source, const double *__restrict__ values, double *__restrict__ val, Op op)
{
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) val[i] = op(values[source[i]]);
}
template <class Op>
cudaError_t fill_tail_values(const DeviceCooTail &t, const double *values, Op op, cudaStream_t s)
{
  if (t.nnz <= 0) return cudaSuccess;
  tail_values_kernel<<<grid_for(t.nnz), kBuildThreads, 0, s>>>(t.nnz, t.source, values, t.val, op);
  return cudaGetLastError();
}

// build_on_device() of a format: waits for the products on stream that may still read *d,
// releases *d, runs build() and, when it fails, leaves *d released (empty); the builders'
// scratch memory is given back at the end (ScratchRelease).
template <class Device, class Build>
BuildError rebuild_on_device(Device *d, cudaStream_t stream, const char *what, Build &&build)
{
  ScratchRelease release_scratch(stream);
  PSPMV_DEVICE_TRY(cudaStreamSynchronize(stream), what); // a product may still read what *d holds
  PSPMV_DEVICE_TRY(release(d), what);
  const BuildError e = build();
  if (e) {
    (void)cudaStreamSynchronize(stream);
    (void)release(d);
  }
  return e;
}

} // namespace detail
} // namespace cuda
} // namespace pspmv
