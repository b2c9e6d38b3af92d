// Where the time of the device inner CG goes (PETSc-free): for a generated 3-D Laplacian
// (7- or 27-point), builds the PCMIXEDKRYLOV scaled copy on the host, then times on the device,
// with CUDA events (median of the repeats):
//   spmv_f32      one FP32 PackSELL product (the kernel F3R uses; runs at bandwidth there)
//   apply m=1     one inner application with one CG step (entry + 1 step + exit)
//   apply m=K     one inner application with K steps
// so (apply K - apply 1) / (K - 1) is the time of one CG step (product_dot + update + direction)
// against one spmv_f32. Usage:
//   inner_cg_bench [-lap7 n | -lap27 n] [-format e8m14] [-steps 20] [-repeat 10]
// One line per measurement: "inner_cg_bench matrix=... what=... time_us=...".
#include "formats/packsell/packsell_device_lowp.hpp"
#include "mixed/inner_cg_device.hpp"
#include "mixed/scaled_copy.hpp"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace pspmv;

namespace
{

#define CHECK_CUDA(call) \
  do { \
    const cudaError_t e_ = (call); \
    if (e_ != cudaSuccess) { \
      std::fprintf(stderr, "inner_cg_bench: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
      std::exit(1); \
    } \
  } while (0)

struct Csr {
  std::vector<int32_t> rowptr, colidx;
  std::vector<double>  values;
  CsrView              view(int32_t n) const { return CsrView{n, n, rowptr.data(), colidx.data(), values.data()}; }
};

// The Laplacian of tutorials/laplacian3d.h with constant coefficients (diagonal = number of
// stencil neighbours, Dirichlet).
Csr laplacian(int32_t n, bool box)
{
  Csr           A;
  const int64_t N = int64_t(n) * n * n;
  A.rowptr.assign(size_t(N) + 1, 0);
  for (int64_t r = 0; r < N; ++r) {
    const int32_t i = int32_t(r % n), j = int32_t((r / n) % n), k = int32_t(r / (int64_t(n) * n));
    const double  diag = box ? 26.0 : 6.0;
    for (int dk = -1; dk <= 1; ++dk)
      for (int dj = -1; dj <= 1; ++dj)
        for (int di = -1; di <= 1; ++di) {
          const int dist = std::abs(di) + std::abs(dj) + std::abs(dk);
          if (!box && dist > 1) continue;
          if (i + di < 0 || i + di >= n || j + dj < 0 || j + dj >= n || k + dk < 0 || k + dk >= n) continue;
          A.colidx.push_back(int32_t(r + di + int64_t(dj) * n + int64_t(dk) * n * n));
          A.values.push_back(dist == 0 ? diag : -1.0);
        }
    A.rowptr[size_t(r) + 1] = int32_t(A.colidx.size());
  }
  return A;
}

template <class F>
double median_us(int repeat, cudaStream_t s, F &&f)
{
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  f(); // warm-up
  std::vector<double> t;
  for (int k = 0; k < repeat; ++k) {
    CHECK_CUDA(cudaEventRecord(a, s));
    f();
    CHECK_CUDA(cudaEventRecord(b, s));
    CHECK_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
    t.push_back(1e3 * ms);
  }
  std::sort(t.begin(), t.end());
  CHECK_CUDA(cudaEventDestroy(a));
  CHECK_CUDA(cudaEventDestroy(b));
  return t[t.size() / 2];
}

} // namespace

int main(int argc, char **argv)
{
  int32_t     n = 128, steps = 20, repeat = 10;
  bool        box    = true;
  std::string format = "e8m14";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "-lap7")) n = std::atoi(argv[i + 1]), box = false;
    else if (!std::strcmp(argv[i], "-lap27")) n = std::atoi(argv[i + 1]), box = true;
    else if (!std::strcmp(argv[i], "-format")) format = argv[i + 1];
    else if (!std::strcmp(argv[i], "-steps")) steps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "-repeat")) repeat = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "inner_cg_bench: unknown option %s (use -lap7 n, -lap27 n, -format f, -steps K, -repeat R)\n", argv[i]);
      return 2;
    }
  }
  if (n < 2 || steps < 2 || repeat < 1) {
    std::fprintf(stderr, "inner_cg_bench: need n >= 2, steps >= 2, repeat >= 1\n");
    return 2;
  }
  const Csr       A = laplacian(n, box);
  const int32_t   N = n * n * n;
  PackSellOptions o;
  o.value_format               = ValueFormat::parse(format);
  const mixed::ScaledCopy c    = mixed::build_scaled_copy(A.view(N), o);
  const std::string       name = std::string(box ? "lap27_" : "lap7_") + std::to_string(n);
  std::printf("inner_cg_bench matrix=%s rows=%d nnz=%lld words=%zu tail=%lld format=%s\n", name.c_str(), N, (long long)c.nnz, c.op.words.size(), (long long)c.op.tail.nnz(), format.c_str());

  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cuda::DevicePackSell D;
  CHECK_CUDA(cuda::upload(c.op, &D));
  float  *x32, *y32;
  double *r, *z;
  CHECK_CUDA(cudaMalloc(&x32, sizeof(float) * N));
  CHECK_CUDA(cudaMalloc(&y32, sizeof(float) * N));
  CHECK_CUDA(cudaMalloc(&r, sizeof(double) * N));
  CHECK_CUDA(cudaMalloc(&z, sizeof(double) * N));
  const std::vector<float>  ones(size_t(N), 1.0f);
  const std::vector<double> rh(size_t(N), 1.0);
  CHECK_CUDA(cudaMemcpy(x32, ones.data(), sizeof(float) * N, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(r, rh.data(), sizeof(double) * N, cudaMemcpyHostToDevice));

  const double                spmv = median_us(repeat, s, [&] { CHECK_CUDA(cuda::spmv_f32(D, x32, y32, s)); });
  mixed::cuda::DeviceInnerCg *cg   = nullptr;
  CHECK_CUDA(mixed::cuda::create(c, steps, &cg));
  mixed::InnerCgParams one, many;
  one.max_it           = 1;
  many.max_it          = steps;
  const double      a1 = median_us(repeat, s, [&] { CHECK_CUDA(mixed::cuda::apply(cg, one, r, z, s)); });
  const double      ak = median_us(repeat, s, [&] { CHECK_CUDA(mixed::cuda::apply(cg, many, r, z, s)); });
  mixed::InnerStats st;
  CHECK_CUDA(mixed::cuda::read_stats(cg, &st, nullptr, s));
  const double step = (ak - a1) / double(steps - 1);
  std::printf("inner_cg_bench matrix=%s what=spmv_f32 time_us=%.2f\n", name.c_str(), spmv);
  std::printf("inner_cg_bench matrix=%s what=apply_1 time_us=%.2f\n", name.c_str(), a1);
  std::printf("inner_cg_bench matrix=%s what=apply_%d time_us=%.2f\n", name.c_str(), steps, ak);
  std::printf("inner_cg_bench matrix=%s what=cg_step time_us=%.2f (%.2f spmv_f32; applications %lld, steps %lld, breakdowns %lld, early exits %lld)\n", name.c_str(), step, step / spmv, (long long)st.applications, (long long)st.inner_its,
              (long long)st.breakdowns, (long long)st.early_exits);
  CHECK_CUDA(mixed::cuda::destroy(cg));
  CHECK_CUDA(cuda::release(&D));
  CHECK_CUDA(cudaFree(x32));
  CHECK_CUDA(cudaFree(y32));
  CHECK_CUDA(cudaFree(r));
  CHECK_CUDA(cudaFree(z));
  CHECK_CUDA(cudaStreamDestroy(s));
  return 0;
}
