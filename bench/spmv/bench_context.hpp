// The run of spmv_bench: its settings, device handles and the header the JSON carries; PETSc's
// error messages caught per format; the timing loop; the copy bandwidth; set-up of the device.
#pragma once
#include "results.hpp"

#include <cuda_runtime.h>
#include <cusparse.h>

#include <petscsys.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace bench
{

inline double now_s()
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct ErrorCapture {
  std::string message;
  bool        have = false;
  void        reset()
  {
    message.clear();
    have = false;
  }
};

// PETSc error handler (ctx: an ErrorCapture) that keeps the first message and its place.
PetscErrorCode CaptureHandler(MPI_Comm, int line, const char *fun, const char *file, PetscErrorCode n, PetscErrorType p, const char *mess, void *ctx);

struct Bench {
  bool                     cpu  = false;
  PetscInt                 reps = 100, warmup = 10;
  PetscBool                flush      = PETSC_TRUE;
  size_t                   copy_bytes = size_t(1) << 30;
  cudaStream_t             stream     = nullptr;
  std::string              stream_desc, default_stream_desc;
  void                    *flushbuf   = nullptr;
  size_t                   flushbytes = 0;
  double                  *sink       = nullptr;
  std::vector<cudaEvent_t> ev;
  cusparseHandle_t         sp      = nullptr;
  double                   copy_bw = kNaN, copy_bw_memcpy = kNaN, copy_bw_kernel = kNaN, read_bw = kNaN;
  double                   launch_floor_us = kNaN; // median events-to-events time of one empty kernel after the L2 flush
  std::string              copy_bw_method;
  int                      attempt = 0;
  ErrorCapture             cap;
  // header
  std::string date, host, gpu_name, cuda_runtime, cuda_driver, cusparse_version, petsc_version, commit, label;
  long long   gpu_sms = 0, gpu_l2 = 0, gpu_mem = 0;
  int         omp_threads = 1;
};

// Fills r.us with `reps` timed runs of op (and wall_us_mean).
PetscErrorCode TimeOp(Bench &b, const std::function<PetscErrorCode()> &op, Result &r);
// Whether the CUDA context is unusable (an error that survives clearing); *why says which.
bool CudaContextLost(Bench &b, std::string *why);
// Copy and read bandwidth of the device (host memcpy with -cpu) into b.
PetscErrorCode MeasureBandwidth(Bench &b);
// Header fields, device, stream, cuSPARSE handle, events, L2 flush buffer, bandwidth, launch floor.
PetscErrorCode Setup(Bench &b);
// The run's header of the JSON file (WriteJson): program, date, host, device, versions,
// bandwidths, timing settings.
JsonFields RunHeader(const Bench &b);

} // namespace bench
