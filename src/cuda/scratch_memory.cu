// The builders' scratch pool (scratch_memory.cuh). PETSc-free.
#include "cuda/scratch_memory.cuh"
#include <cstdint>
#include <map>
#include <mutex>

namespace pspmv
{
namespace cuda
{
namespace detail
{

namespace
{

// The pools created so far, by device ordinal.
struct Pools {
  std::mutex                   lock;
  std::map<int, cudaMemPool_t> by_device;
};

Pools &pools()
{
  static Pools p;
  return p;
}

// The pool of `device` if created (*pool set, true); the caller holds ps.lock.
bool find_locked(Pools &ps, int device, cudaMemPool_t *pool)
{
  const auto it = ps.by_device.find(device);
  if (it == ps.by_device.end()) return false;
  *pool = it->second;
  return true;
}

} // namespace

cudaError_t scratch_pool(cudaMemPool_t *pool)
{
  int               dev = 0;
  const cudaError_t e   = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  Pools                      &ps = pools();
  std::lock_guard<std::mutex> hold(ps.lock);
  if (find_locked(ps, dev, pool)) return cudaSuccess;
  cudaMemPoolProps props{};
  props.allocType     = cudaMemAllocationTypePinned;
  props.handleTypes   = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id   = dev;
  cudaMemPool_t p;
  cudaError_t   err = cudaMemPoolCreate(&p, &props);
  if (err != cudaSuccess) return err;
  uint64_t keep = UINT64_MAX;
  err           = cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep);
  if (err != cudaSuccess) {
    (void)cudaMemPoolDestroy(p);
    return err;
  }
  ps.by_device[dev] = p;
  *pool             = p;
  return cudaSuccess;
}

bool existing_scratch_pool(int device, cudaMemPool_t *pool)
{
  Pools                      &ps = pools();
  std::lock_guard<std::mutex> hold(ps.lock);
  return find_locked(ps, device, pool);
}

ScratchRelease::ScratchRelease(cudaStream_t stream) : stream_(stream)
{
  if (cudaGetDevice(&device_) != cudaSuccess) device_ = -1;
}

ScratchRelease::~ScratchRelease()
{
  cudaMemPool_t pool;
  uint64_t      reserved = 0;
  if (device_ < 0 || !existing_scratch_pool(device_, &pool)) return;
  if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) != cudaSuccess || reserved == 0) return;
  if (cudaStreamSynchronize(stream_) != cudaSuccess) return;
  (void)cudaMemPoolTrimTo(pool, 0);
}

} // namespace detail
} // namespace cuda
} // namespace pspmv
