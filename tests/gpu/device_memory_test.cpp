// Device memory of the device builders, value updates and the scaled copy: a layout holds what
// device_bytes() says and nothing more stays with the process after a build or an update, even
// with the device's default memory pool keeping what it frees (PETSc sets its release threshold
// to the maximum; this test does the same). Measured with cudaMemGetInfo(), which counts every
// process on the device: ctest runs this executable alone (RUN_SERIAL, tests/gpu/CMakeLists.txt).
#include "device_compare.hpp"
#include "formats/device_formats.hpp"
#include "mixed/scaled_copy_device.hpp"
#include "mixed_systems.hpp"
#include <cstdint>

using namespace gputest;
using namespace pspmv;

namespace {

constexpr int64_t kSlack = int64_t(2) << 20; // allocation granularity: 2 MiB per array at most
constexpr int kArrays = 10;                  // more than either layout allocates

// Free device memory once the test stream is idle, with the default pool set as PETSc sets it.
int64_t free_bytes() {
  int dev = 0;
  cudaMemPool_t pool;
  EXPECT_CUDA(cudaGetDevice(&dev));
  EXPECT_CUDA(cudaDeviceGetDefaultMemPool(&pool, dev));
  uint64_t keep = UINT64_MAX;
  EXPECT_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  EXPECT_CUDA(cudaStreamSynchronize(test_stream()));
  EXPECT_CUDA(cudaDeviceSynchronize());
  size_t fr = 0, total = 0;
  EXPECT_CUDA(cudaMemGetInfo(&fr, &total));
  return int64_t(fr);
}

// Builds D from dA, updates its values, releases it: the build takes device_bytes() (within the
// granularity), the update takes nothing, release() gives everything back.
template <class Dev, class Opt>
void check_device_bytes(const DevCsr &dA, const Opt &opt, const char *w) {
  const int64_t before = free_bytes();
  Dev D{};
  cuda::DeviceBuildInfo info;
  ASSERT_BUILT(cuda::build_on_device(dA.v, opt, test_stream(), &D, &info));
  const int64_t built = free_bytes();
  const int64_t held = cuda::device_bytes(D);
  EXPECT_GE(held, info.stats.stored_bytes) << w << ": device_bytes() counts less than the layout's stored bytes";
  EXPECT_GE(before - built, held - kSlack) << w << ": device_bytes() " << held << " above what the build took, " << before - built;
  EXPECT_LE(before - built, held + kArrays * kSlack) << w << ": the build took " << before - built << " bytes, device_bytes() says " << held;
  bool changed = true;
  int32_t scale = 0;
  ASSERT_BUILT(cuda::update_values_on_device(dA.v, test_stream(), &D, &changed, &scale));
  EXPECT_FALSE(changed) << w;
  const int64_t updated = free_bytes();
  EXPECT_LE(built - updated, kSlack) << w << ": a value update kept " << built - updated << " bytes";
  EXPECT_CUDA(cuda::release(&D));
  const int64_t after = free_bytes();
  EXPECT_LE(before - after, kSlack) << w << ": release() left " << before - after << " bytes";
}

// Every kernel the checks launch, once on a small matrix of the same family: CUDA loads a kernel's
// code into device memory at its first launch, which the checks must not count.
void warm_up(const HostCsr &A) {
  DevCsr dA(A);
  cuda::DeviceRgCsr R{};
  cuda::DevicePackSell P{}, H{};
  mixed::cuda::DeviceScaledCopy c{};
  cuda::DeviceBuildInfo info;
  PackSellOptions fp16;
  fp16.value_format = ValueFormat::fp16();
  bool changed = false;
  int32_t scale = 0;
  ASSERT_BUILT(cuda::build_on_device(dA.v, RgCsrOptions{}, test_stream(), &R, &info));
  ASSERT_BUILT(cuda::build_on_device(dA.v, PackSellOptions{}, test_stream(), &P, &info));
  ASSERT_BUILT(cuda::build_on_device(dA.v, fp16, test_stream(), &H, &info));
  ASSERT_BUILT(cuda::update_values_on_device(dA.v, test_stream(), &R, &changed, &scale));
  ASSERT_BUILT(cuda::update_values_on_device(dA.v, test_stream(), &P, &changed, &scale));
  ASSERT_BUILT(cuda::update_values_on_device(dA.v, test_stream(), &H, &changed, &scale));
  ASSERT_CUDA(mixed::cuda::build_scaled_copy_on_device(dA.v, fp16, test_stream(), &c));
  ASSERT_CUDA(mixed::cuda::update_scaled_copy_on_device(dA.v, test_stream(), &c, &changed));
  EXPECT_CUDA(cuda::release(&R));
  EXPECT_CUDA(cuda::release(&P));
  EXPECT_CUDA(cuda::release(&H));
  EXPECT_CUDA(mixed::cuda::release(&c));
}

} // namespace

TEST(DeviceBuildMemory, DeviceBytesIsWhatTheLayoutHolds) {
  warm_up(pspmv_test::laplace3d(8, 8, 8));
  const HostCsr A = pspmv_test::laplace3d(96, 96, 96); // 884736 rows, 6.1M nonzeros: 70-100 MB per layout
  DevCsr dA(A);
  check_device_bytes<cuda::DeviceRgCsr>(dA, RgCsrOptions{}, "rgcsr");
  check_device_bytes<cuda::DevicePackSell>(dA, PackSellOptions{}, "packsell exact");
  PackSellOptions fp16;
  fp16.value_format = ValueFormat::fp16();
  check_device_bytes<cuda::DevicePackSell>(dA, fp16, "packsell fp16");
}

// The mixed-precision scaled copy (its own scratch: the scaling, the scaled values) leaves
// nothing behind once released, after a build and after a value update.
TEST(DeviceBuildMemory, ScaledCopyLeavesNothing) {
  warm_up(pspmv_test::laplace3d(8, 8, 8));
  const HostCsr A = pspmv_test::laplace3d(96, 96, 96);
  DevCsr dA(A);
  PackSellOptions fp16;
  fp16.value_format = ValueFormat::fp16();
  const int64_t before = free_bytes();
  mixed::cuda::DeviceScaledCopy c{};
  ASSERT_CUDA(mixed::cuda::build_scaled_copy_on_device(dA.v, fp16, test_stream(), &c));
  const int64_t built = free_bytes();
  const int64_t held = cuda::device_bytes(c.op) + int64_t(sizeof(double)) * A.rows;
  EXPECT_LE(before - built, held + kArrays * kSlack) << "the scaled copy's build took " << before - built << " bytes, it holds " << held;
  bool changed = true;
  ASSERT_CUDA(mixed::cuda::update_scaled_copy_on_device(dA.v, test_stream(), &c, &changed));
  EXPECT_FALSE(changed);
  EXPECT_LE(built - free_bytes(), kSlack) << "a value update of the scaled copy kept memory";
  EXPECT_CUDA(mixed::cuda::release(&c));
  EXPECT_LE(before - free_bytes(), kSlack) << "release() left memory";
}
