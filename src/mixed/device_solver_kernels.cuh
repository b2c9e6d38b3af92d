// What the CG device solvers (inner_cg_device.cu, mixed_cg_device.cu) share in their kernels: one
// block size for the grid reductions (device_reduce.cuh) and the PackSELL low-precision row
// products (formats/packsell/packsell_lowp_rows.cuh), whose kernels run in the same grids.
#pragma once
#include "device_reduce.cuh"
#include "formats/packsell/packsell_lowp_rows.cuh"
#include "cuda/device_memory.cuh"
#include <algorithm>
#include <cstdint>

namespace pspmv
{
namespace mixed
{
namespace cuda
{
namespace detail
{

using pspmv::cuda::detail::LowpArgs;
constexpr int kSolverThreads = kReduceThreads;
static_assert(kSolverThreads == pspmv::cuda::detail::kLowpThreads, "one block size for every kernel");

// The grid of a kernel over rows rows, a thread a row in a grid-stride loop: at most
// blocks_per_sm blocks per multiprocessor (the vector kernels: 8, 2048 resident threads; the
// products: their occupancy), at least one block.
inline cudaError_t solver_grid(int32_t rows, int blocks_per_sm, unsigned int *grid)
{
  int               sms = 1;
  const cudaError_t e   = pspmv::cuda::detail::multiprocessor_count(&sms);
  if (e != cudaSuccess) return e;
  const int64_t need = (static_cast<int64_t>(rows) + kSolverThreads - 1) / kSolverThreads;
  *grid              = static_cast<unsigned int>(std::max<int64_t>(1, std::min<int64_t>(need, int64_t(sms) * std::max(blocks_per_sm, 1))));
  return cudaSuccess;
}
constexpr int kVectorBlocksPerSM = 8;

} // namespace detail

// The names the solvers' kernels use: the product's arguments and the block size.
using detail::LowpArgs;
constexpr int kThreads = detail::kSolverThreads;
} // namespace cuda
} // namespace mixed
} // namespace pspmv
