// Reductions over equal segments of an array on the device (PETSc-free): the group and slice
// maxima and sums of the device builders (device_build.cu, packsell_device_build.cu).
#pragma once
#include "cuda/device_build.cuh"
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cstdint>

namespace pspmv
{
namespace cuda
{
namespace detail
{

// An int32_t widened to int64_t (sums of int32_t arrays in int64_t).
struct ToInt64 {
  __host__ __device__ int64_t operator()(int32_t v) const { return v; }
};
// The first item of segment b: b * size.
struct SegmentBegin {
  int64_t                     size;
  __host__ __device__ int64_t operator()(int64_t b) const { return b * size; }
};
// The end of segment b of n items: (b + 1) * size, n for the last one.
struct SegmentEnd {
  int64_t                     size, n;
  __host__ __device__ int64_t operator()(int64_t b) const { return (b + 1) * size < n ? (b + 1) * size : n; }
};

// out[b] = op-reduction, from init, of in[b * size .. min((b + 1) * size, n)) for b < segments
// (CUB's segmented reduce), on stream s.
template <class In, class Out, class Op, class T>
cudaError_t reduce_segments(In in, int64_t segments, int64_t size, int64_t n, Out out, Op op, T init, cudaStream_t s)
{
  auto begin = thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0), SegmentBegin{size});
  auto end   = thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0), SegmentEnd{size, n});
  return cub_run(s, [&](void *t, size_t &b) { return cub::DeviceSegmentedReduce::Reduce(t, b, in, out, segments, begin, end, op, init, s); });
}

} // namespace detail
} // namespace cuda
} // namespace pspmv
