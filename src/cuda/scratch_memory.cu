// The builders' scratch pool (scratch_memory.cuh). PETSc-free.
#include "cuda/scratch_memory.cuh"
#include <cstdint>
#include <map>
#include <mutex>

namespace pspmv {
namespace cuda {
namespace detail {

cudaError_t scratch_pool(cudaMemPool_t *pool) {
  static std::mutex lock;
  static std::map<int, cudaMemPool_t> pools;
  int dev = 0;
  const cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  std::lock_guard<std::mutex> hold(lock);
  const auto it = pools.find(dev);
  if (it != pools.end()) {
    *pool = it->second;
    return cudaSuccess;
  }
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = dev;
  cudaMemPool_t p;
  cudaError_t err = cudaMemPoolCreate(&p, &props);
  if (err != cudaSuccess) return err;
  uint64_t keep = UINT64_MAX;
  err = cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep);
  if (err != cudaSuccess) {
    (void)cudaMemPoolDestroy(p);
    return err;
  }
  pools[dev] = p;
  *pool = p;
  return cudaSuccess;
}

ScratchRelease::~ScratchRelease() {
  cudaMemPool_t pool;
  if (cudaStreamSynchronize(stream_) != cudaSuccess || scratch_pool(&pool) != cudaSuccess) return;
  (void)cudaMemPoolTrimTo(pool, 0);
}

} // namespace detail
} // namespace cuda
} // namespace pspmv
