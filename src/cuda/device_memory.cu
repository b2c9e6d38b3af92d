// Device helpers shared by the format uploads and launches.
#include "device_memory.cuh"
#include <atomic>

namespace pspmv
{
namespace cuda
{
namespace detail
{

cudaError_t multiprocessor_count(int *count)
{
  static std::atomic<int> cache[64] = {};
  int                     dev       = 0;
  PSPMV_CUDA_TRY(cudaGetDevice(&dev));
  if (dev >= 0 && dev < 64) {
    const int c = cache[dev].load(std::memory_order_relaxed);
    if (c > 0) {
      *count = c;
      return cudaSuccess;
    }
  }
  int c = 0;
  PSPMV_CUDA_TRY(cudaDeviceGetAttribute(&c, cudaDevAttrMultiProcessorCount, dev));
  if (c < 1) c = 1;
  if (dev >= 0 && dev < 64) cache[dev].store(c, std::memory_order_relaxed);
  *count = c;
  return cudaSuccess;
}

cudaError_t resident_threads(int64_t *n)
{
  int dev = 0, sms = 0, per_sm = 0;
  PSPMV_CUDA_TRY(cudaGetDevice(&dev));
  PSPMV_CUDA_TRY(multiprocessor_count(&sms));
  PSPMV_CUDA_TRY(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
  *n = static_cast<int64_t>(sms) * per_sm;
  return cudaSuccess;
}

} // namespace detail
} // namespace cuda
} // namespace pspmv
