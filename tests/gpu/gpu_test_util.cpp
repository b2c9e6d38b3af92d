// Helpers of the GPU kernel tests (see gpu_test_util.hpp).
#include "gpu_test_util.hpp"
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

namespace gputest
{

std::vector<double> random_vector(size_t n, uint64_t seed)
{
  std::mt19937_64                        rng(seed);
  std::uniform_real_distribution<double> mag(0.5, 1.5);
  std::vector<double>                    v(n);
  for (double &x : v) x = (rng() & 1u) ? mag(rng) : -mag(rng);
  return v;
}

LossyBound lossy_bound(const pspmv::ValueFormat &f, int32_t scale_exponent)
{
  LossyBound b;
  if (!f.lossy()) return b;
  b.u            = f.unit_roundoff();
  const int bias = (1 << (f.exponent_bits - 1)) - 1;
  // Smallest subnormal 2^(1 - bias - M); rounding to it errs by at most half of it.
  b.h = std::ldexp(1.0, -bias - f.mantissa_bits - scale_exponent);
  return b;
}

cudaStream_t test_stream()
{
  static cudaStream_t s = [] {
    cudaStream_t t = nullptr;
    if (cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking) != cudaSuccess) t = nullptr;
    return t;
  }();
  return s;
}

namespace
{

bool same_nan_or_inf(double a, double b)
{
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return false;
}

// Counts rows where |got - ref| > tol[r]; reports the first few.
void compare(const std::string &what, const char *against, const std::vector<double> &got, const std::vector<double> &ref, const std::vector<double> &tol)
{
  int64_t            bad = 0;
  std::ostringstream msg;
  for (size_t r = 0; r < ref.size(); ++r) {
    const double g = got[r], f = ref[r];
    bool         ok;
    if (!std::isfinite(g) || !std::isfinite(f)) ok = same_nan_or_inf(g, f);
    else ok = std::fabs(g - f) <= tol[r];
    if (!ok) {
      if (bad < 5) msg << "\n  row " << r << ": device " << g << ", " << against << " " << f << ", |diff| " << std::fabs(g - f) << " > tol " << tol[r];
      ++bad;
    }
  }
  if (bad) ADD_FAILURE() << what << ": " << bad << " of " << ref.size() << " rows differ from the " << against << msg.str();
}

} // namespace

void check_product(const HostCsr &A, const std::string &what, const HostProduct &host, const DeviceProduct &device, LossyBound bound, uint64_t seed)
{
  const pspmv::CsrView      V    = A.view();
  const size_t              rows = size_t(A.rows), cols = size_t(A.cols);
  const std::vector<double> x  = random_vector(cols, seed);
  const std::vector<double> y0 = random_vector(rows, seed + 7);
  // |A||x| and sum_j |x_j| per row.
  std::vector<double> absAx(rows, 0.0), absx(rows, 0.0);
  for (int32_t r = 0; r < A.rows; ++r)
    for (int32_t k = A.rowptr[r]; k < A.rowptr[r + 1]; ++k) {
      absAx[r] += std::fabs(A.values[k] * x[A.colidx[k]]);
      absx[r] += std::fabs(x[A.colidx[k]]);
    }

  DeviceArray<double> dx(cols), dy(rows);
  dx.upload(x);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (bool add : {false, true}) {
    const std::string   tag = what + (add ? " [y += A x]" : " [y = A x]");
    std::vector<double> ref = add ? y0 : std::vector<double>(rows, nan);
    host(x.data(), ref.data(), add);
    std::vector<double> csr = add ? y0 : std::vector<double>(rows, nan);
    pspmv::csr_spmv(V, x.data(), csr.data(), add);

    if (add) dy.upload(y0);
    else dy.poison();
    const cudaError_t err = device(dx.get(), dy.get(), add, test_stream());
    ASSERT_EQ(err, cudaSuccess) << tag << ": " << cudaGetErrorString(err);
    ASSERT_EQ(cudaStreamSynchronize(test_stream()), cudaSuccess) << tag;
    ASSERT_EQ(cudaGetLastError(), cudaSuccess) << tag;
    const std::vector<double> got = dy.download();

    std::vector<double> tol(rows), tol_csr(rows);
    for (size_t r = 0; r < rows; ++r) {
      const double scale = absAx[r] + (add ? std::fabs(y0[r]) : 0.0);
      tol[r]             = 1e-13 * scale;
      tol_csr[r]         = 1e-13 * scale + 1.0000001 * (bound.u * absAx[r] + bound.h * absx[r]);
    }
    compare(tag, "host reference of the format", got, ref, tol);
    compare(tag, "FP64 CSR product", got, csr, tol_csr);
  }

  // Back to back on the stream with no host synchronisation in between, as a Krylov solver
  // runs them: y = A x, y += A x, then (square A) z = A y. A product's COO tail runs under
  // programmatic dependent launch; the next product must see its atomics (and, for z, read
  // them as its x).
  const std::string   tag = what + " [chained: y = A x; y += A x; z = A y]";
  std::vector<double> ref(rows, nan);
  host(x.data(), ref.data(), false);
  host(x.data(), ref.data(), true);
  dy.poison();
  DeviceArray<double> dz(A.rows == A.cols ? rows : 0);
  dz.poison();
  ASSERT_EQ(device(dx.get(), dy.get(), false, test_stream()), cudaSuccess) << tag;
  ASSERT_EQ(device(dx.get(), dy.get(), true, test_stream()), cudaSuccess) << tag;
  if (A.rows == A.cols) ASSERT_EQ(device(dy.get(), dz.get(), false, test_stream()), cudaSuccess) << tag;
  ASSERT_EQ(cudaStreamSynchronize(test_stream()), cudaSuccess) << tag;
  const std::vector<double> y = dy.download();
  std::vector<double>       tol(rows);
  for (size_t r = 0; r < rows; ++r) tol[r] = 2e-13 * absAx[r];
  compare(tag, "host reference of the format (y = 2 A x)", y, ref, tol);
  if (A.rows != A.cols) return;
  // z against the host reference applied to the device's y (no error propagation to bound).
  std::vector<double> zref(rows, nan), absAy(rows, 0.0);
  host(y.data(), zref.data(), false);
  for (int32_t r = 0; r < A.rows; ++r)
    for (int32_t k = A.rowptr[r]; k < A.rowptr[r + 1]; ++k) absAy[r] += std::fabs(A.values[k] * y[A.colidx[k]]);
  for (size_t r = 0; r < rows; ++r) tol[r] = 1e-13 * absAy[r];
  compare(tag, "host reference of the format (z = A y)", dz.download(), zref, tol);
}

} // namespace gputest
