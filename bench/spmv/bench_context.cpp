#include "bench_context.hpp"
#include "bench_kernels.hpp"

#include <petscdevice_cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <unistd.h>
#if defined(_OPENMP)
  #include <omp.h>
#endif

namespace bench
{

namespace
{

std::string utc_now()
{
  char        buf[64];
  std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

} // namespace

PetscErrorCode CaptureHandler(MPI_Comm, int line, const char *fun, const char *file, PetscErrorCode n, PetscErrorType p, const char *mess, void *ctx)
{
  auto *c = static_cast<ErrorCapture *>(ctx);
  if (!c->have) { // the first call carries the message; the calls up the stack repeat it
    std::string m = mess ? mess : "";
    while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
    if (m.empty()) {
      const char *text = nullptr;
      PetscErrorMessage(n, &text, nullptr);
      m = text ? text : "unknown PETSc error";
    }
    c->message = m + " [PETSc error " + std::to_string((int)n) + " in " + (fun ? fun : "?") + "() at " + (file ? file : "?") + ":" + std::to_string(line) + "]";
    c->have    = true;
  }
  return n;
}

PetscErrorCode TimeOp(Bench &b, const std::function<PetscErrorCode()> &op, Result &r)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < b.warmup; ++i) PetscCall(op());
  r.us.assign(size_t(b.reps), kNaN);
  if (b.cpu) {
    for (PetscInt i = 0; i < b.reps; ++i) {
      const double t0 = now_s();
      PetscCall(op());
      r.us[size_t(i)] = (now_s() - t0) * 1e6;
    }
    r.wall_us_mean = kNaN;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCallCUDA(cudaDeviceSynchronize());
  for (PetscInt i = 0; i < b.reps; ++i) {
    if (b.flush && b.flushbuf) PetscCallCUDA(bench_read(b.flushbuf, b.flushbytes, b.sink, b.stream));
    PetscCallCUDA(cudaEventRecord(b.ev[size_t(2 * i)], b.stream));
    PetscCall(op());
    PetscCallCUDA(cudaEventRecord(b.ev[size_t(2 * i + 1)], b.stream));
  }
  PetscCallCUDA(cudaDeviceSynchronize());
  for (PetscInt i = 0; i < b.reps; ++i) {
    float ms = 0;
    PetscCallCUDA(cudaEventElapsedTime(&ms, b.ev[size_t(2 * i)], b.ev[size_t(2 * i + 1)]));
    r.us[size_t(i)] = double(ms) * 1e3;
  }
  const double t0 = now_s();
  for (PetscInt i = 0; i < b.reps; ++i) PetscCall(op());
  PetscCallCUDA(cudaDeviceSynchronize());
  r.wall_us_mean = (now_s() - t0) * 1e6 / double(b.reps);
  PetscFunctionReturn(PETSC_SUCCESS);
}

bool CudaContextLost(Bench &b, std::string *why)
{
  if (b.cpu) return false;
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e == cudaSuccess) return false;
  (void)cudaGetLastError();
  cudaError_t e2 = cudaDeviceSynchronize();
  if (e2 == cudaSuccess) e2 = cudaGetLastError();
  if (e2 == cudaSuccess) return false;
  *why = std::string(cudaGetErrorName(e2)) + ": " + cudaGetErrorString(e2);
  return true;
}

PetscErrorCode MeasureBandwidth(Bench &b)
{
  PetscFunctionBegin;
  if (b.cpu) {
    const size_t        n = size_t(256) << 20;
    std::vector<char>   a(n, 0x3f), c(n, 0);
    std::vector<double> t;
    for (int i = 0; i < 5; ++i) {
      const double t0 = now_s();
      std::memcpy(c.data(), a.data(), n);
      t.push_back(now_s() - t0);
      a[size_t(i)] = c[size_t(n - 1 - i)];
    }
    std::sort(t.begin(), t.end());
    b.copy_bw = b.copy_bw_memcpy = 2.0 * double(n) / t[t.size() / 2] / 1e9;
    b.copy_bw_method             = "host memcpy of 256 MiB (cpu mode)";
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  const size_t n   = b.copy_bytes & ~size_t(15);
  void        *src = nullptr, *dst = nullptr;
  PetscCallCUDA(cudaMalloc(&src, n));
  PetscCallCUDA(cudaMalloc(&dst, n));
  PetscCallCUDA(cudaMemset(src, 0x3f, n)); // doubles of 0x3f3f... : finite, not zero
  PetscCallCUDA(cudaMemset(dst, 0x11, n));
  cudaEvent_t e0, e1;
  PetscCallCUDA(cudaEventCreate(&e0));
  PetscCallCUDA(cudaEventCreate(&e1));
  auto median_of = [&](const std::function<cudaError_t()> &f, double *ms_med) -> PetscErrorCode {
    std::vector<double> t;
    PetscFunctionBegin;
    for (int i = 0; i < 3; ++i) PetscCallCUDA(f());
    for (int i = 0; i < 20; ++i) {
      float ms;
      PetscCallCUDA(cudaEventRecord(e0, b.stream));
      PetscCallCUDA(f());
      PetscCallCUDA(cudaEventRecord(e1, b.stream));
      PetscCallCUDA(cudaEventSynchronize(e1));
      PetscCallCUDA(cudaEventElapsedTime(&ms, e0, e1));
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    *ms_med = 0.5 * (t[9] + t[10]);
    PetscFunctionReturn(PETSC_SUCCESS);
  };
  double ms;
  PetscCall(median_of([&]() { return cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, b.stream); }, &ms));
  b.copy_bw_memcpy = 2.0 * double(n) / (ms * 1e-3) / 1e9;
  PetscCall(median_of([&]() { return bench_copy(src, dst, n, b.stream); }, &ms));
  b.copy_bw_kernel = 2.0 * double(n) / (ms * 1e-3) / 1e9;
  PetscCall(median_of([&]() { return bench_read(src, n, b.sink, b.stream); }, &ms));
  b.read_bw        = double(n) / (ms * 1e-3) / 1e9;
  b.copy_bw        = std::max(b.copy_bw_memcpy, b.copy_bw_kernel);
  b.copy_bw_method = std::string("max of cudaMemcpyAsync D2D and a copy kernel over ") + std::to_string(n >> 20) + " MiB, bytes read + written, median of 20 (" + (b.copy_bw_memcpy >= b.copy_bw_kernel ? "memcpy" : "kernel") + " won)";
  PetscCallCUDA(cudaEventDestroy(e0));
  PetscCallCUDA(cudaEventDestroy(e1));
  PetscCallCUDA(cudaFree(src));
  PetscCallCUDA(cudaFree(dst));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Setup(Bench &b)
{
  PetscFunctionBegin;
  {
    char v[256];
    PetscCall(PetscGetVersion(v, sizeof(v)));
    b.petsc_version = v;
  }
  {
    char h[256] = {0};
    gethostname(h, sizeof(h) - 1);
    b.host = h;
  }
  b.date = utc_now();
#if defined(_OPENMP)
  b.omp_threads = omp_get_max_threads();
#endif
  if (b.cpu) {
    b.gpu_name    = "none (cpu mode)";
    b.stream_desc = "none (host timers)";
    PetscCall(MeasureBandwidth(b));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
  int dev = 0, rt = 0, drv = 0;
  PetscCallCUDA(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  PetscCallCUDA(cudaGetDeviceProperties(&prop, dev));
  b.gpu_name = prop.name;
  b.gpu_sms  = prop.multiProcessorCount;
  b.gpu_l2   = prop.l2CacheSize;
  b.gpu_mem  = (long long)prop.totalGlobalMem;
  PetscCallCUDA(cudaRuntimeGetVersion(&rt));
  PetscCallCUDA(cudaDriverGetVersion(&drv));
  b.cuda_runtime = std::to_string(rt / 1000) + "." + std::to_string((rt % 1000) / 10);
  b.cuda_driver  = std::to_string(drv / 1000) + "." + std::to_string((drv % 1000) / 10);
  // the stream PETSc's current device context (and so the petscspmv kernels) uses
  {
    PetscDeviceContext dctx;
    cudaStream_t      *h = nullptr;
    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscDeviceContextGetStreamHandle(dctx, (void **)&h));
    b.stream = h ? *h : nullptr;
    char s[64];
    std::snprintf(s, sizeof(s), "%p", (void *)b.stream);
    b.stream_desc = b.stream ? std::string("PetscDeviceContext stream ") + s : "legacy default stream (NULL) of the PetscDeviceContext";
    std::snprintf(s, sizeof(s), "%p", (void *)PetscDefaultCudaStream);
    b.default_stream_desc = PetscDefaultCudaStream ? std::string(s) : "NULL (legacy default stream)";
    if (b.stream != PetscDefaultCudaStream)
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "spmv_bench: warning: the device context stream (%s) is not PetscDefaultCudaStream (%s): aijcusparse events may not bracket its kernels\n", b.stream_desc.c_str(), b.default_stream_desc.c_str()));
  }
  PetscCallCUSPARSE(cusparseCreate(&b.sp));
  PetscCallCUSPARSE(cusparseSetStream(b.sp, b.stream));
  {
    int v = 0;
    PetscCallCUSPARSE(cusparseGetVersion(b.sp, &v));
    b.cusparse_version = std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 100) + "." + std::to_string(v % 100);
  }
  PetscCallCUDA(cudaMalloc((void **)&b.sink, sizeof(double)));
  b.ev.resize(size_t(2 * b.reps));
  for (auto &e : b.ev) PetscCallCUDA(cudaEventCreate(&e));
  PetscCall(MeasureBandwidth(b));
  if (b.flush) {
    b.flushbytes = std::max<size_t>(size_t(4) * size_t(b.gpu_l2), size_t(256) << 20);
    PetscCallCUDA(cudaMalloc(&b.flushbuf, b.flushbytes));
    PetscCallCUDA(cudaMemset(b.flushbuf, 0x3f, b.flushbytes));
  }
  if (!b.cpu) { // the floor under any product: one empty kernel timed exactly like a MatMult
    Result floor;
    PetscCall(TimeOp(
      b,
      [&]() -> PetscErrorCode {
        PetscFunctionBegin;
        PetscCallCUDA(bench_empty(b.stream));
        PetscFunctionReturn(PETSC_SUCCESS);
      },
      floor));
    std::vector<double> s = floor.us;
    std::sort(s.begin(), s.end());
    b.launch_floor_us = s.size() % 2 ? s[s.size() / 2] : 0.5 * (s[s.size() / 2 - 1] + s[s.size() / 2]);
  }
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "spmv_bench: %s, CUDA %s (driver %s), cuSPARSE %s, %s; copy bandwidth %.0f GB/s (memcpy %.0f, kernel %.0f), read %.0f GB/s; launch floor %.2f us\n", b.gpu_name.c_str(), b.cuda_runtime.c_str(), b.cuda_driver.c_str(),
                        b.cusparse_version.c_str(), b.petsc_version.c_str(), b.copy_bw, b.copy_bw_memcpy, b.copy_bw_kernel, b.read_bw, b.launch_floor_us));
  PetscFunctionReturn(PETSC_SUCCESS);
}

JsonFields RunHeader(const Bench &b)
{
  const auto n   = [](long long v) { return std::to_string(v); };
  const auto gpu = "{\"name\": " + jstr(b.gpu_name) + ", \"multiprocessors\": " + n(b.gpu_sms) + ", \"l2_bytes\": " + n(b.gpu_l2) + ", \"memory_bytes\": " + n(b.gpu_mem) + "}";
  return {{"program", jstr("petscspmv bench/spmv/spmv_bench")},
          {"date", jstr(b.date)},
          {"host", jstr(b.host)},
          {"commit", jstr(b.commit)},
          {"label", jstr(b.label)},
          {"gpu", gpu},
          {"cuda_runtime", jstr(b.cuda_runtime)},
          {"cuda_driver", jstr(b.cuda_driver)},
          {"cusparse", jstr(b.cusparse_version)},
          {"petsc", jstr(b.petsc_version)},
          {"cpu_mode", jbool(b.cpu)},
          {"omp_threads", n(b.omp_threads)},
          {"copy_bw_gbps", jnum(b.copy_bw)},
          {"copy_bw_memcpy_gbps", jnum(b.copy_bw_memcpy)},
          {"copy_bw_kernel_gbps", jnum(b.copy_bw_kernel)},
          {"read_bw_gbps", jnum(b.read_bw)},
          {"launch_floor_us", jnum(b.launch_floor_us)},
          {"copy_bw_method", jstr(b.copy_bw_method)},
          {"repetitions", n(b.reps)},
          {"warmup", n(b.warmup)},
          {"flush_l2", jbool(b.flush)},
          {"flush_bytes", n((long long)b.flushbytes)},
          {"timing_stream", jstr(b.stream_desc)},
          {"petsc_default_cuda_stream", jstr(b.default_stream_desc)}};
}

} // namespace bench
