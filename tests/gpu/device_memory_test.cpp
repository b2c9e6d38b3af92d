// Device memory of the device builders, value updates and the scaled copy: after a build, a value
// update or a release the builders' scratch pool holds nothing and the device's default pool no
// more than before (PETSc sets that pool's release threshold to the maximum, as this test does,
// so scratch taken from it would stay with the process); a value update of an exact layout takes
// no scratch at all (none to map and unmap at every update); a layout takes from the device what
// device_bytes() says. The pools' reservations are exact and per process; the device's free
// memory (cudaMemGetInfo()) counts every process on the device: ctest runs this executable alone
// (RUN_SERIAL, tests/gpu/CMakeLists.txt).
#include "cuda/scratch_memory.cuh"
#include "device_compare.hpp"
#include "formats/device_formats.hpp"
#include "mixed/scaled_copy_device.hpp"
#include "mixed_systems.hpp"
#include <cstdint>

using namespace gputest;
using namespace pspmv;

namespace
{

constexpr int64_t kSlack  = int64_t(2) << 20; // allocation granularity: 2 MiB per array at most
constexpr int     kArrays = 12;               // more than any layout or scaled copy allocates
// A few small scratch arrays (flags, CUB's storage), each counted at most at the allocation
// granularity: far below one integer per row of the measured matrix (16 MiB).
constexpr uint64_t kSmallScratch = 4 * uint64_t(kSlack);

// What the device and the two pools hold, once the test stream is idle.
struct Memory {
  int64_t  free             = 0; // the device's free memory
  uint64_t scratch_reserved = 0; // the builders' scratch pool (0 before its first use)
  uint64_t default_reserved = 0; // the device's default pool
};

// Waits for the test stream; *dev = the current device, *scratch = its builders' scratch pool if
// one was created (true), else false.
bool idle_device(int *dev, cudaMemPool_t *scratch)
{
  EXPECT_CUDA(cudaStreamSynchronize(test_stream()));
  EXPECT_CUDA(cudaGetDevice(dev));
  return cuda::detail::existing_scratch_pool(*dev, scratch);
}

Memory memory()
{
  Memory        m;
  int           dev = 0;
  cudaMemPool_t scratch, pool;
  size_t        fr = 0, total = 0;
  if (idle_device(&dev, &scratch)) EXPECT_CUDA(cudaMemPoolGetAttribute(scratch, cudaMemPoolAttrReservedMemCurrent, &m.scratch_reserved));
  EXPECT_CUDA(cudaDeviceGetDefaultMemPool(&pool, dev));
  EXPECT_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &m.default_reserved));
  EXPECT_CUDA(cudaMemGetInfo(&fr, &total));
  m.free = int64_t(fr);
  return m;
}

// Nothing kept by the pools since `before`.
void expect_pools_empty(const Memory &before, const Memory &now, const std::string &w)
{
  EXPECT_EQ(now.scratch_reserved, 0u) << w << ": the builders' scratch pool keeps " << now.scratch_reserved << " bytes";
  EXPECT_LE(now.default_reserved, before.default_reserved) << w << ": the default pool grew from " << before.default_reserved << " to " << now.default_reserved << " bytes";
}

// What a build, a value update and a release leave, for an object that holds `held` bytes: after
// each the pools keep nothing; measure: also the device's free memory, the build taking `held`
// (within the granularity), the update and the release nothing.
struct Phases {
  Memory before, built, updated, after;
};

void expect_phases(const Phases &p, int64_t held, const std::string &w, bool measure)
{
  expect_pools_empty(p.before, p.built, w + ", after the build");
  expect_pools_empty(p.before, p.updated, w + ", after a value update");
  expect_pools_empty(p.before, p.after, w + ", after the release");
  if (!measure) return;
  const int64_t took = p.before.free - p.built.free;
  EXPECT_GE(took, held - kSlack) << w << ": it holds " << held << " bytes, above what the build took, " << took;
  EXPECT_LE(took, held + kArrays * kSlack) << w << ": the build took " << took << " bytes, it holds " << held;
  EXPECT_LE(p.built.free - p.updated.free, kSlack) << w << ": a value update kept " << p.built.free - p.updated.free << " bytes";
  EXPECT_LE(p.before.free - p.after.free, kSlack) << w << ": release() left " << p.before.free - p.after.free << " bytes";
}

// The most the builders' scratch pool has had in use at once since the previous call (its
// high-water mark, reset here), once the test stream is idle; 0 before the pool exists.
uint64_t scratch_peak()
{
  int           dev = 0;
  cudaMemPool_t pool;
  uint64_t      high = 0, zero = 0;
  if (!idle_device(&dev, &pool)) return 0;
  EXPECT_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high));
  EXPECT_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
  return high;
}

bool lossy(const RgCsrOptions &)
{
  return false;
}
bool lossy(const PackSellOptions &o)
{
  return o.value_format.lossy();
}

// The default pool keeps what it frees, as PETSc's CUDA device context sets it.
void keep_default_pool()
{
  int           dev = 0;
  cudaMemPool_t pool;
  uint64_t      keep = UINT64_MAX;
  ASSERT_CUDA(cudaGetDevice(&dev));
  ASSERT_CUDA(cudaDeviceGetDefaultMemPool(&pool, dev));
  ASSERT_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
}

// Builds D from dA, updates its values, releases it (expect_phases, held = device_bytes()): the
// build takes scratch, a value update of an exact layout none, one of a lossy layout a few bytes
// (the range check's flag; with automatic scaling also CUB's storage for the largest magnitude:
// below kSmallScratch). Without measure, a warm-up of the free-memory checks: CUDA loads a
// kernel's code into device memory at its first launch, and CUB picks its kernels by size, so the
// measured matrix runs once before.
template <class Dev, class Opt>
void build_update_release(const DevCsr &dA, const Opt &opt, const std::string &w, bool measure)
{
  Phases p;
  p.before = memory();
  (void)scratch_peak();
  Dev                   D{};
  cuda::DeviceBuildInfo info;
  ASSERT_BUILT(cuda::build_on_device(dA.v, opt, test_stream(), &D, &info));
  const uint64_t build_scratch = scratch_peak();
  p.built                      = memory();
  const int64_t held           = cuda::device_bytes(D);
  bool          changed        = true;
  int32_t       scale          = 0;
  ASSERT_BUILT(cuda::update_values_on_device(dA.v, test_stream(), &D, &changed, &scale));
  EXPECT_FALSE(changed) << w;
  const uint64_t update_scratch = scratch_peak();
  p.updated                     = memory();
  EXPECT_GT(build_scratch, 0u) << w << ": the build took no scratch (or the pool's high-water mark is not read)";
  if (!lossy(opt)) EXPECT_EQ(update_scratch, 0u) << w << ": a value update of an exact layout took " << update_scratch << " bytes of scratch";
  else EXPECT_LT(update_scratch, kSmallScratch) << w << ": a value update of a lossy layout took " << update_scratch << " bytes of scratch";
  EXPECT_CUDA(cuda::release(&D));
  p.after = memory();
  if (measure) EXPECT_GE(held, info.stats.stored_bytes) << w << ": device_bytes() counts less than the layout's stored bytes";
  expect_phases(p, held, w, measure);
}

// The same for the mixed-precision scaled copy (held: its layout and its scaling): its value
// update takes as scratch the scaling and the scaled values (rows + nnz doubles) and, beyond them,
// no more than a lossy layout's update.
void scaled_copy_build_update_release(const DevCsr &dA, const PackSellOptions &opt, bool measure)
{
  const int64_t rows = dA.v.rows;
  Phases        p;
  p.before = memory();
  mixed::cuda::DeviceScaledCopy c{};
  ASSERT_CUDA(mixed::cuda::build_scaled_copy_on_device(dA.v, opt, test_stream(), &c));
  p.built               = memory();
  const int64_t held    = cuda::device_bytes(c.op) + int64_t(sizeof(double)) * rows;
  bool          changed = true;
  (void)scratch_peak();
  ASSERT_CUDA(mixed::cuda::update_scaled_copy_on_device(dA.v, test_stream(), &c, &changed));
  EXPECT_FALSE(changed);
  const uint64_t update_scratch = scratch_peak();
  const uint64_t scaled         = sizeof(double) * uint64_t(rows + dA.v.nnz);
  EXPECT_LT(update_scratch, scaled + kSmallScratch) << "a value update of the scaled copy took " << update_scratch << " bytes of scratch, the scaling and scaled values are " << scaled;
  p.updated = memory();
  EXPECT_CUDA(mixed::cuda::release(&c));
  p.after = memory();
  expect_phases(p, held, "scaled copy", measure);
}

PackSellOptions fp16_options()
{
  PackSellOptions o;
  o.value_format = ValueFormat::fp16();
  return o;
}

} // namespace

TEST(DeviceBuildMemory, DeviceBytesIsWhatTheLayoutHolds)
{
  ASSERT_NO_FATAL_FAILURE(keep_default_pool());
  const HostCsr A = pspmv_test::laplace3d(160, 160, 160); // 4096000 rows, 28.5M nonzeros: 330-450 MB per layout
  DevCsr        dA(A);
  for (bool measure : {false, true}) {
    ASSERT_NO_FATAL_FAILURE(build_update_release<cuda::DeviceRgCsr>(dA, RgCsrOptions{}, "rgcsr", measure));
    ASSERT_NO_FATAL_FAILURE(build_update_release<cuda::DevicePackSell>(dA, PackSellOptions{}, "packsell exact", measure));
    ASSERT_NO_FATAL_FAILURE(build_update_release<cuda::DevicePackSell>(dA, fp16_options(), "packsell fp16", measure));
  }
}

TEST(DeviceBuildMemory, ScaledCopyLeavesNothing)
{
  ASSERT_NO_FATAL_FAILURE(keep_default_pool());
  const HostCsr A = pspmv_test::laplace3d(160, 160, 160);
  DevCsr        dA(A);
  for (bool measure : {false, true}) ASSERT_NO_FATAL_FAILURE(scaled_copy_build_update_release(dA, fp16_options(), measure));
}
