// Deterministic FP64 grid reductions for the mixed-precision inner solvers (PETSc-free).
//
// A kernel of a fixed grid of kReduceThreads-thread blocks gives every thread its FP64 partial
// value; grid_reduce() sums them in an order fixed by the grid alone (the same result on every
// run, no floating-point atomics):
//   1. each block sums its threads' values (cub::BlockReduce: a fixed shuffle tree) and its
//      thread 0 stores the block sum in partials[blockIdx.x];
//   2. thread 0 fences and counts the block on an unsigned counter (integer atomic); the block
//      that counts last (threadFenceReduction pattern of the CUDA samples) fences again, sums
//      partials[0 .. gridDim.x) (thread t: entries t, t + kReduceThreads, ... in order, then
//      cub::BlockReduce), resets the counter to 0 for the next reduction, and calls
//      finish(total) on its thread 0.
// Every thread of every block must call grid_reduce (it synchronises the block), and no block
// may wait for another: nothing deadlocks whatever the number of resident blocks.
#pragma once
#include "scaling.hpp"
#include <cub/block/block_reduce.cuh>

namespace pspmv
{
namespace mixed
{
namespace cuda
{
namespace detail
{

constexpr int kReduceThreads = 256;

template <class Finish>
__device__ __forceinline__ void grid_reduce(double v, double *partials, unsigned int *counter, Finish finish)
{
  using BlockReduce = cub::BlockReduce<double, kReduceThreads>;
  __shared__ typename BlockReduce::TempStorage tmp;
  __shared__ bool                              last;
  const double                                 block_sum = BlockReduce(tmp).Sum(v);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block_sum;
    __threadfence();
    last = atomicAdd(counter, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return; // block-uniform
  __threadfence();
  double s = 0.0;
  for (unsigned int b = threadIdx.x; b < gridDim.x; b += kReduceThreads) s += __ldcg(partials + b);
  __syncthreads(); // tmp is reused
  const double total = BlockReduce(tmp).Sum(s);
  if (threadIdx.x == 0) {
    *counter = 0u;
    finish(total);
  }
}

struct NanMaxOp {
  __device__ __forceinline__ double operator()(double a, double b) const { return nan_max(a, b); }
};

// grid_reduce with nan_max (scaling.hpp) in place of the sum: the largest value of the grid,
// NaN when one is NaN, the same whatever the order (a max is exact); finish(max) on thread 0 of
// the last block. The same rules as grid_reduce (every thread calls it; counter reset to 0).
template <class Finish>
__device__ __forceinline__ void grid_reduce_max(double v, double *partials, unsigned int *counter, Finish finish)
{
  using BlockReduce = cub::BlockReduce<double, kReduceThreads>;
  __shared__ typename BlockReduce::TempStorage tmp;
  __shared__ bool                              last;
  const double                                 block_max = BlockReduce(tmp).Reduce(v, NanMaxOp{});
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block_max;
    __threadfence();
    last = atomicAdd(counter, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return; // block-uniform
  __threadfence();
  double m = 0.0;
  for (unsigned int b = threadIdx.x; b < gridDim.x; b += kReduceThreads) m = nan_max(m, __ldcg(partials + b));
  __syncthreads(); // tmp is reused
  const double total = BlockReduce(tmp).Reduce(m, NanMaxOp{});
  if (threadIdx.x == 0) {
    *counter = 0u;
    finish(total);
  }
}

} // namespace detail
} // namespace cuda
} // namespace mixed
} // namespace pspmv
