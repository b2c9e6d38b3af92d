// COO tail uploads, launch plans, and the tail's own kernel (the warp routine and the fused
// launch are in coo_tail.cuh).
#include "coo_tail.cuh"
#include "device_memory.cuh"
#include <algorithm>

namespace pspmv
{
namespace cuda
{
namespace detail
{

namespace
{

// With DeviceCooTail::allow_fused (not the default: the own kernel under programmatic
// dependent launch is faster on every fused layout measured), a fused tail is planned when
// every fused warp gets at most this many batches of 32 entries: beyond that the tail's own
// kernel at full occupancy is faster than a quarter of the machine. With one or two threads
// per row: 3 batches; with 4 or 8, whose regular part has 4-8 times the threads and fills the
// machine: 1 batch (kernel_bench over fixed widths K: docs/kernels.md).
constexpr int64_t kFusedBatchesPerWarpFewThreads  = 3; // T = 1, 2
constexpr int64_t kFusedBatchesPerWarpManyThreads = 1; // T = 4, 8

// Entries per warp for `warps_max` warps at most, each with >= 32 entries; a multiple of 32 so
// every batch starts aligned.
int64_t chunk_for(int64_t nnz, int64_t warps_max)
{
  const int64_t batches = (nnz + 31) / 32;
  const int64_t warps   = std::min(batches, warps_max);
  return ((batches + warps - 1) / warps) * 32;
}

template <bool Prefetch>
__global__ void __launch_bounds__(kTailThreads) coo_tail_kernel(TailArgs t, const double *__restrict__ x, double *__restrict__ y)
{
  coo_tail_warp<true, Prefetch>(t, (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5, x, y);
}

} // namespace

cudaError_t upload_tail(const CooTail &h, DeviceCooTail *d)
{
  d->nnz = h.nnz();
  PSPMV_CUDA_TRY(alloc_copy(h.row, &d->row));
  PSPMV_CUDA_TRY(alloc_copy(h.col, &d->col));
  PSPMV_CUDA_TRY(alloc_copy(h.val, &d->val));
  PSPMV_CUDA_TRY(plan_separate_tail(d));
  if (d->nnz == 0) return cudaSuccess;
  PSPMV_CUDA_TRY(cudaMalloc(reinterpret_cast<void **>(&d->sync), 2 * sizeof(unsigned int)));
  return cudaMemset(d->sync, 0, 2 * sizeof(unsigned int));
}

cudaError_t upload_tail_values(const CooTail &h, DeviceCooTail *d)
{
  if (h.nnz() != d->nnz || h.val.size() != static_cast<size_t>(d->nnz)) return cudaErrorInvalidValue;
  return copy_into(h.val, d->val);
}

void release_tail(DeviceCooTail *d, cudaError_t *first)
{
  free_ptr(&d->row, first);
  free_ptr(&d->col, first);
  free_ptr(&d->val, first);
  free_ptr(&d->source, first);
  free_ptr(&d->sync, first);
  d->nnz   = 0;
  d->chunk = 0;
}

int64_t tail_bytes(const DeviceCooTail &t)
{
  return t.nnz * static_cast<int64_t>(sizeof(int32_t) + sizeof(int32_t) + sizeof(double));
}

int64_t tail_value_bytes(const DeviceCooTail &t)
{
  return t.nnz * static_cast<int64_t>(sizeof(double));
}

int64_t tail_map_bytes(const DeviceCooTail &t)
{
  const int64_t source = t.source ? t.nnz * static_cast<int64_t>(sizeof(int32_t)) : 0;
  const int64_t sync   = t.sync ? 2 * static_cast<int64_t>(sizeof(unsigned int)) : 0;
  return source + sync;
}

cudaError_t plan_separate_tail(DeviceCooTail *d)
{
  d->chunk = 0;
  if (d->nnz <= 0) return cudaSuccess;
  int sms = 1;
  PSPMV_CUDA_TRY(multiprocessor_count(&sms));
  d->chunk = chunk_for(d->nnz, static_cast<int64_t>(sms) * kSeparateTailWarpsPerSM);
  return cudaSuccess;
}

cudaError_t plan_fused_tail(const DeviceCooTail &t, bool fusable, int threads_per_row, TailPlan *plan)
{
  *plan = TailPlan{};
  if (t.nnz <= 0) return cudaSuccess;
  int sms = 1;
  PSPMV_CUDA_TRY(multiprocessor_count(&sms));
  const int64_t batches     = (t.nnz + 31) / 32;
  const int64_t fused_warps = static_cast<int64_t>(sms) * kFusedTailBlocksPerSM * (kTailThreads / 32);
  const int64_t per_warp    = threads_per_row <= 2 ? kFusedBatchesPerWarpFewThreads : kFusedBatchesPerWarpManyThreads;
  if (!fusable || t.sync == nullptr || batches > fused_warps * per_warp) {
    plan->chunk    = t.chunk;
    plan->separate = true;
    return cudaSuccess;
  }
  plan->chunk        = chunk_for(t.nnz, fused_warps);
  plan->fused_blocks = blocks_for(((t.nnz + plan->chunk - 1) / plan->chunk) * 32, kTailThreads);
  return cudaSuccess;
}

cudaError_t launch_separate_tail(const DeviceCooTail &t, int64_t chunk, const double *x, double *y, cudaStream_t stream)
{
  if (t.nnz <= 0) return cudaSuccess;
  TailArgs a;
  a.nnz               = t.nnz;
  a.chunk             = chunk;
  a.row               = t.row;
  a.col               = t.col;
  a.val               = t.val; // sync stays null: ordered after the regular kernel by griddepcontrol.wait
  const int64_t warps = (t.nnz + chunk - 1) / chunk;
  // Programmatic dependent launch (sm_90): the tail's blocks start while the regular kernel
  // finishes, load their entries and gather x, and wait for it only before their first
  // atomic on y (griddepcontrol.wait), instead of starting after it in stream order.
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim            = dim3(blocks_for(warps * 32, kTailThreads));
  cfg.blockDim           = dim3(kTailThreads);
  cfg.stream             = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id                                         = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs                                          = attr;
  cfg.numAttrs                                       = 1;
  const cudaError_t err                              = chunk > 32 ? cudaLaunchKernelEx(&cfg, coo_tail_kernel<true>, a, x, y) : cudaLaunchKernelEx(&cfg, coo_tail_kernel<false>, a, x, y);
  if (err != cudaSuccess) (void)cudaGetLastError(); // returned here, not left for a later check
  return err;
}

} // namespace detail
} // namespace cuda
} // namespace pspmv
