// Load-balanced COO tail kernel (Ginkgo-style "coo" SpMV) and tail uploads.
//
// Thread mapping: the tail's nnz entries (sorted by row) are cut into equal contiguous chunks,
// one per warp (a multiple of 32 entries, so every batch of 32 loads is aligned). A warp walks
// its chunk 32 entries at a time: lane l takes entry base+l (row, col, val: 16 B, coalesced)
// and forms val * x[col].
//   * Batch entirely in the row carried from the previous batch (long rows, the usual case in
//     a hybrid tail): each lane just adds its product to its own register accumulator; one
//     warp vote, no shuffle, no atomic.
//   * Otherwise: the carried accumulators are summed across the warp, a segmented suffix sum
//     by row (5 shuffle steps; rows are sorted so equal rows are contiguous lanes) leaves each
//     row segment's total in its first lane, and the first lane of every segment but the
//     last does one atomicAdd (FP64 atomicAdd is native on sm_60+). The last segment may go
//     on in the next batch, so it becomes the new carry.
// At the chunk end the carry is flushed with one atomicAdd. So a row costs one atomic per
// chunk it touches, and the work per warp is equal whatever the row lengths are.
// ptxas -v (sm_90, CUDA 13.0): 32 registers, no stack, no spills.
#include "coo_tail.cuh"
#include "device_memory.cuh"
#include <algorithm>

namespace pspmv {
namespace cuda {
namespace detail {

namespace {

constexpr int kTailThreads = 256;
constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ double warp_sum(double v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(kFull, v, off);
  return v;
}

__global__ void __launch_bounds__(kTailThreads)
    coo_tail_kernel(int64_t nnz, int64_t chunk, const int32_t *__restrict__ row,
                    const int32_t *__restrict__ col, const double *__restrict__ val,
                    const double *__restrict__ x, double *__restrict__ y) {
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int64_t begin = warp * chunk;
  if (begin >= nnz) return; // whole warp leaves together
  const int64_t end = min(begin + chunk, nnz);

  double acc = 0.0;   // per-lane partial sums of row carry_row (warp-uniform row)
  int carry_row = -1; // -1: nothing carried
  for (int64_t base = begin; base < end; base += 32) {
    const int64_t idx = base + lane;
    const bool valid = idx < end;
    int r = -1;
    double p = 0.0;
    if (valid) {
      r = __ldcs(row + idx);
      p = __ldcs(val + idx) * __ldg(x + __ldcs(col + idx));
    }
    // Fast path: the whole batch continues the carried row.
    if (__all_sync(kFull, valid && r == carry_row)) {
      acc += p;
      continue;
    }
    // Segmented suffix sum: afterwards the first lane of each row segment holds its total.
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      const double po = __shfl_down_sync(kFull, p, off);
      const int ro = __shfl_down_sync(kFull, r, off);
      if (lane + off < 32 && ro == r) p += po;
    }
    const int rprev = __shfl_up_sync(kFull, r, 1);
    const bool head = valid && (lane == 0 || rprev != r);
    const double carried = warp_sum(acc);
    if (lane == 0 && carry_row >= 0) { // lane 0 is valid: base < end
      if (r == carry_row)
        p += carried;
      else
        atomicAdd(y + carry_row, carried);
    }
    const unsigned heads = __ballot_sync(kFull, head);
    const int last = 31 - __clz(static_cast<int>(heads)); // first lane of the last segment
    if (head && lane != last) atomicAdd(y + r, p);
    const double last_sum = __shfl_sync(kFull, p, last);
    carry_row = __shfl_sync(kFull, r, last);
    acc = lane == 0 ? last_sum : 0.0;
  }
  const double carried = warp_sum(acc);
  if (lane == 0 && carry_row >= 0) atomicAdd(y + carry_row, carried);
}

} // namespace

cudaError_t upload_tail(const CooTail &h, DeviceCooTail *d) {
  d->nnz = h.nnz();
  PSPMV_CUDA_TRY(alloc_copy(h.row, &d->row));
  PSPMV_CUDA_TRY(alloc_copy(h.col, &d->col));
  return alloc_copy(h.val, &d->val);
}

cudaError_t upload_tail_values(const CooTail &h, DeviceCooTail *d) {
  if (h.nnz() != d->nnz || h.val.size() != static_cast<size_t>(d->nnz)) return cudaErrorInvalidValue;
  return copy_into(h.val, d->val);
}

void release_tail(DeviceCooTail *d, cudaError_t *first) {
  free_ptr(&d->row, first);
  free_ptr(&d->col, first);
  free_ptr(&d->val, first);
  d->nnz = 0;
}

int64_t tail_bytes(const DeviceCooTail &t) {
  return t.nnz * static_cast<int64_t>(sizeof(int32_t) + sizeof(int32_t) + sizeof(double));
}

cudaError_t coo_tail_spmv_add(const DeviceCooTail &t, const double *x, double *y, cudaStream_t stream) {
  if (t.nnz <= 0) return cudaSuccess;
  int sms = 1;
  PSPMV_CUDA_TRY(multiprocessor_count(&sms));
  // Enough warps to fill the machine (64 per multiprocessor: the kernel's 32 registers
  // allow full occupancy, and each warp has one batch of loads in flight at a time), each
  // with >= 32 entries; the chunk is a multiple of 32 so every batch starts aligned.
  const int64_t max_warps = static_cast<int64_t>(sms) * 64;
  const int64_t batches = (t.nnz + 31) / 32;
  const int64_t warps_wanted = std::min(batches, max_warps);
  const int64_t chunk = ((batches + warps_wanted - 1) / warps_wanted) * 32;
  const int64_t warps = (t.nnz + chunk - 1) / chunk;
  const unsigned int blocks = blocks_for(warps * 32, kTailThreads);
  coo_tail_kernel<<<blocks, kTailThreads, 0, stream>>>(t.nnz, chunk, t.row, t.col, t.val, x, y);
  return cudaGetLastError();
}

} // namespace detail
} // namespace cuda
} // namespace pspmv
