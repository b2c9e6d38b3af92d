// Helpers of the GPU kernel tests: exact-size device arrays, owned CSR matrices, random
// data, and the comparison of a device product with host references.
#pragma once
#include "core/build_error.hpp"
#include "csr_matrix.hpp"
#include "core/csr.hpp"
#include "core/value_codec.hpp"
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gputest
{

#define ASSERT_CUDA(call) ASSERT_EQ((call), cudaSuccess) << cudaGetErrorString(call) << " in " #call
// A device build or update that must succeed (BuildError::Kind::None).
#define ASSERT_BUILT(call) \
  do { \
    const pspmv::BuildError e_ = (call); \
    ASSERT_FALSE(e_) << e_.what() << " in " #call; \
  } while (0)
#define EXPECT_CUDA(call) \
  do { \
    const cudaError_t e_ = (call); \
    EXPECT_EQ(e_, cudaSuccess) << cudaGetErrorString(e_) << " in " #call; \
  } while (0)

// A CSR matrix that owns its arrays (the unit tests' type, shared with their reader).
using HostCsr = pspmv_test::CsrMatrix;

// Device array of exactly n elements (no allocation for n == 0: the pointer is null).
template <class T>
class DeviceArray {
public:
  explicit DeviceArray(size_t n) : n_(n)
  {
    if (n_ > 0 && cudaMalloc(reinterpret_cast<void **>(&p_), n_ * sizeof(T)) != cudaSuccess) {
      p_ = nullptr;
      ADD_FAILURE() << "cudaMalloc of " << n_ * sizeof(T) << " bytes failed";
    }
  }
  ~DeviceArray()
  {
    if (p_) cudaFree(p_);
  }
  DeviceArray(const DeviceArray &)            = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;
  T           *get() const { return p_; }
  size_t       size() const { return n_; }
  void         upload(const std::vector<T> &h)
  {
    ASSERT_EQ(h.size(), n_);
    if (n_) ASSERT_CUDA(cudaMemcpy(p_, h.data(), n_ * sizeof(T), cudaMemcpyHostToDevice));
    // cudaMemcpy from pageable memory may return before the DMA lands, and the legacy stream
    // does not order against the tests' non-blocking stream: wait for it.
    ASSERT_CUDA(cudaDeviceSynchronize());
  }
  std::vector<T> download() const
  {
    std::vector<T> h(n_);
    if (n_) EXPECT_CUDA(cudaMemcpy(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
  // All bytes 0xFF: a NaN for double, so an unwritten entry shows.
  void poison()
  {
    if (n_) ASSERT_CUDA(cudaMemset(p_, 0xFF, n_ * sizeof(T)));
    ASSERT_CUDA(cudaDeviceSynchronize()); // cudaMemset is asynchronous (see upload)
  }

private:
  T     *p_ = nullptr;
  size_t n_ = 0;
};

// Deterministic values in +-[0.5, 1.5) (never zero).
std::vector<double> random_vector(size_t n, uint64_t seed);

// How far a lossy value format may move a product: per stored value |a' - a| <= u|a| + h,
// h = half the smallest subnormal of the format times 2^-scale_exponent. u = h = 0: exact.
struct LossyBound {
  double u = 0.0;
  double h = 0.0;
};
LossyBound lossy_bound(const pspmv::ValueFormat &f, int32_t scale_exponent);

// Runs the device product y = A x / y = y + A x (device pointers) on the stream.
using DeviceProduct = std::function<cudaError_t(const double *x, double *y, bool add, cudaStream_t s)>;
// Runs the host reference of the same format.
using HostProduct = std::function<void(const double *x, double *y, bool add)>;

// For add == false and add == true: poisons y (NaN) or fills it with random values, runs the
// device product, and compares it (1) with the host reference of the same format,
// rowwise |dev - ref| <= 1e-13 (|A||x| + |y0|), and (2) with csr_spmv of A, within the same
// tolerance for exact layouts and within sum_j (u|a_j| + h)|x_j| more for lossy ones.
// `what` names the configuration in failure messages.
void check_product(const HostCsr &A, const std::string &what, const HostProduct &host, const DeviceProduct &device, LossyBound bound, uint64_t seed = 1);

// A stream the tests run products on (non-blocking: nothing may rely on the legacy stream).
cudaStream_t test_stream();

} // namespace gputest
