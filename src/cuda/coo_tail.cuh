// COO tail of the hybrid split on the device (PETSc-free): uploads, the load-balanced
// y += T x warp routine, and the launch that runs it either in its own kernel or fused into
// the regular format's kernel.
//
// Load balancing (Ginkgo-style "coo" SpMV): the tail's nnz entries (sorted by row) are cut
// into equal contiguous chunks, one per warp (a multiple of 32 entries, so every batch of 32
// loads is aligned). A warp walks its chunk 32 entries at a time: lane l takes entry base+l
// (row, col, val: 16 B, coalesced) and forms val * x[col].
//   * Batch entirely in the row carried from the previous batch (long rows, the usual case in
//     a hybrid tail): each lane adds its product to its own register accumulator; one warp
//     vote, no shuffle, no atomic.
//   * Otherwise: the carried accumulators are summed across the warp, a segmented suffix sum
//     by row (5 shuffle steps; rows are sorted so equal rows are contiguous lanes) leaves each
//     row segment's total in its first lane, and the first lane of every segment but the
//     last does one atomicAdd (native FP64 atomics on sm_60+). The last segment may go on in
//     the next batch, so it becomes the new carry.
// At the chunk end the carry is flushed with one atomicAdd. A row costs one atomic per chunk
// it touches; the work per warp is equal whatever the row lengths are.
//
// Default: the tail's own kernel, launched after the regular one as a programmatic dependent
// (sm_90 PDL): the regular kernel triggers at its start, so the tail's blocks begin once every
// regular block has; they load their entries and gather x, and wait (griddepcontrol.wait,
// which covers the regular grid's completion and memory) only before their first atomic.
// This hides most of the tail's launch on a small matrix and beats the fused launch below on
// every layout measured (docs/kernels.md).
//
// Fused launch (DeviceCooTail::allow_fused, kernel_bench's comparison variant; planned per
// product, the default path plans nothing per product): the regular kernel's grid gets extra
// blocks that run the tail. (Kept compiled on purpose: without it ptxas allocates RgCSR's
// regular kernel differently, which was slower even with pinned register counts;
// docs/kernels.md.) The tail's atomics must land after the regular
// part wrote its rows (y = A_reg x overwrites), so each regular block, when done, fences and
// increments sync[0]; a tail warp waits (lane 0 polls with an acquire load and sleeps) until
// sync[0] equals the number of regular blocks before its first atomic. The last tail block to
// finish resets both counters for the next product (which is ordered after this one on the
// stream). Deadlock-free: the regular blocks wait for nothing, and a tail block can only
// wait on regular blocks of its own launch. The hardware dispatches a grid's blocks in index
// order (regular blocks first), and even in any order one launch has at most
// kFusedTailBlocksPerSM x (multiprocessors) tail blocks while the tail is fused only into a
// kernel of which a multiprocessor holds more than kFusedTailBlocksPerSM blocks (asked of the
// occupancy API; ours hold 5-8), so its regular blocks always find room. (Not a minimum-blocks
// launch bound: with one, ptxas spent more registers and the kernels lost occupancy.)
// Consequence: two products of one matrix must not run concurrently on different streams
// (they would share the counters).
#pragma once
#include "core/hybrid.hpp"
#include "cuda/device_coo_tail.hpp"
#include <atomic>
#include <cuda_runtime.h>

namespace pspmv
{
namespace cuda
{
namespace detail
{

constexpr int kTailThreads            = 256; // also the block size of the fused kernels
constexpr int kFusedTailBlocksPerSM   = 2;   // tail blocks per multiprocessor of the device, in total
constexpr int kSeparateTailWarpsPerSM = 64;  // full occupancy when the tail has its own kernel

cudaError_t upload_tail(const CooTail &h, DeviceCooTail *d);        // allocates exactly
cudaError_t upload_tail_values(const CooTail &h, DeviceCooTail *d); // same nnz, new values
void        release_tail(DeviceCooTail *d, cudaError_t *first);
int64_t     tail_bytes(const DeviceCooTail &t);       // row, col, val: read by a product, copied by upload_tail
int64_t     tail_value_bytes(const DeviceCooTail &t); // val: copied by upload_tail_values
int64_t     tail_map_bytes(const DeviceCooTail &t);   // source and sync: held, not read by a product

// The tail's own kernel (the default path): d->chunk for d->nnz entries on the current device
// (enough warps to fill it, each with >= 32 entries). Called by upload_tail and by the device
// builder once the tail's size is known.
cudaError_t plan_separate_tail(DeviceCooTail *d);

// How a product with DeviceCooTail::allow_fused runs the tail (the comparison variant, planned
// per product): fused_blocks extra blocks in the regular kernel's grid, or its own kernel after
// it (separate == true). `fusable`: the regular kernel holds more than kFusedTailBlocksPerSM
// blocks per multiprocessor; threads_per_row: the regular kernel's T (a fused tail is smaller
// for T >= 4, coo_tail.cu).
struct TailPlan {
  int64_t      chunk        = 0; // entries per warp, a multiple of 32
  unsigned int fused_blocks = 0;
  bool         separate     = false;
};
cudaError_t plan_fused_tail(const DeviceCooTail &t, bool fusable, int threads_per_row, TailPlan *plan);

// Runs the tail's own kernel (y += T x) with `chunk` entries per warp (a positive multiple of
// 32: launch_hybrid checks it), when the tail has entries; must follow the regular kernel on
// the same stream.
cudaError_t launch_separate_tail(const DeviceCooTail &t, int64_t chunk, const double *x, double *y, cudaStream_t stream);

// ------------------------------------------------------------------ device side
constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ double warp_sum(double v)
{
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(kFull, v, off);
  return v;
}

// A regular row's result: y = v (Add false) or y += v (Add true), the products' two modes.
template <bool Add>
__device__ __forceinline__ void write_row(double *y, double v)
{
  if (Add) *y += v;
  else *y = v;
}

// Arguments of the tail part of a fused kernel (or of the separate tail kernel, sync == null).
struct TailArgs {
  int64_t        nnz = 0, chunk = 0;
  const int32_t *row = nullptr, *col = nullptr;
  const double  *val            = nullptr;
  unsigned int  *sync           = nullptr; // [regular blocks done, tail blocks done]; null: no waiting
  unsigned int   regular_blocks = 0, tail_blocks = 0;
};

// Regular block epilogue of a fused kernel: publish this block's y writes, then count it.
// The block barrier orders every thread's y writes before thread 0's fence (cumulative), and
// the fence orders them before the count: the release pattern of cooperative groups' grid
// sync, one fence per block instead of one per thread.
__device__ __forceinline__ void signal_regular_done(const TailArgs &t)
{
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicAdd(t.sync, 1u);
  }
}

// Programmatic dependent launch (PTX griddepcontrol, sm_90+). Older architectures compile
// them to nothing: there the tail's own kernel starts after the regular one in stream order.
__device__ __forceinline__ void pdl_launch_dependents()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}
__device__ __forceinline__ void pdl_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Before a tail warp's first atomic: wait until every regular block has written its rows.
// GridDepWait (the tail's own kernel, launched as a programmatic dependent of the regular
// one): every lane waits for the regular grid's completion and memory (griddepcontrol.wait;
// returns at once when the launch had no such dependency).
template <bool GridDepWait>
__device__ __forceinline__ void wait_regular_done(const TailArgs &t, bool &ready)
{
  if (ready) return;
  if (t.sync == nullptr) {
    if (GridDepWait) {
      pdl_wait();
      ready = true;
    }
    return;
  }
  if ((threadIdx.x & 31u) == 0) {
    unsigned int done;
    while (true) {
      asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(done) : "l"(t.sync) : "memory");
      if (done >= t.regular_blocks) break;
      __nanosleep(128);
    }
  }
  __syncwarp();
  __threadfence();
  ready = true;
}

// One batch's entry for lane `lane`: row -1 past the chunk's end.
struct TailEntry {
  int    row = -1, col = 0;
  double val = 0.0;
};
__device__ __forceinline__ TailEntry load_tail_entry(const TailArgs &t, int64_t idx, int64_t end)
{
  TailEntry e;
  if (idx < end) {
    e.row = __ldcs(t.row + idx);
    e.col = __ldcs(t.col + idx);
    e.val = __ldcs(t.val + idx);
  }
  return e;
}

// y += (entries of chunk `warp`) x, by one whole warp (every lane calls it).
// Own: the tail's own kernel (GridDepWait above). Prefetch (own kernel, chunks of two
// batches or more): the next batch's entries are loaded before this batch's gather,
// shuffles and atomics, so a chunk of n batches is not n chains of load -> gather -> atomic
// (with one batch per warp the plain loop is faster; docs/kernels.md). The fused kernels keep
// the plain loop: there the prefetch changed the register allocation of the regular part they
// are compiled with, which was then slower.
template <bool Own, bool Prefetch>
__device__ __forceinline__ void coo_tail_warp(const TailArgs &t, int64_t warp, const double *__restrict__ x, double *__restrict__ y)
{
  const int     lane  = static_cast<int>(threadIdx.x & 31u);
  const int64_t begin = warp * t.chunk;
  if (begin >= t.nnz) return; // whole warp leaves together
  const int64_t end   = min(begin + t.chunk, t.nnz);
  bool          ready = false; // warp-uniform: waited for the regular part (counters or griddepcontrol)

  double    acc       = 0.0; // per-lane partial sums of row carry_row (warp-uniform row)
  int       carry_row = -1;  // -1: nothing carried
  TailEntry next;
  if (Prefetch) next = load_tail_entry(t, begin + lane, end);
  for (int64_t base = begin; base < end; base += 32) {
    const int64_t idx   = base + lane;
    const bool    valid = idx < end;
    int           r     = -1;
    double        p     = 0.0;
    if (Prefetch) {
      r = next.row;
      if (valid) p = next.val * __ldg(x + next.col);
      next = load_tail_entry(t, idx + 32, end);
    } else if (valid) {
      r = __ldcs(t.row + idx);
      p = __ldcs(t.val + idx) * __ldg(x + __ldcs(t.col + idx));
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
      const int    ro = __shfl_down_sync(kFull, r, off);
      if (lane + off < 32 && ro == r) p += po;
    }
    const int      rprev   = __shfl_up_sync(kFull, r, 1);
    const bool     head    = valid && (lane == 0 || rprev != r);
    const double   carried = warp_sum(acc);
    const unsigned heads   = __ballot_sync(kFull, head);
    const int      last    = 31 - __clz(static_cast<int>(heads)); // first lane of the last segment
    const int      r0      = __shfl_sync(kFull, r, 0);
    if ((carry_row >= 0 && r0 != carry_row) || heads != (1u << last)) wait_regular_done<Own>(t, ready); // atomics follow
    if (lane == 0 && carry_row >= 0) {                                                                  // lane 0 is valid: base < end
      if (r == carry_row) p += carried;
      else atomicAdd(y + carry_row, carried);
    }
    if (head && lane != last) atomicAdd(y + r, p);
    const double last_sum = __shfl_sync(kFull, p, last);
    carry_row             = __shfl_sync(kFull, r, last);
    acc                   = lane == 0 ? last_sum : 0.0;
  }
  const double carried = warp_sum(acc);
  wait_regular_done<Own>(t, ready);
  if (lane == 0 && carry_row >= 0) atomicAdd(y + carry_row, carried);
}

// Tail block `b` (0-based among the tail blocks) of a fused kernel; the last one to finish
// resets the counters.
__device__ __forceinline__ void coo_tail_block(const TailArgs &t, unsigned int b, const double *__restrict__ x, double *__restrict__ y)
{
  const int64_t warp = (static_cast<int64_t>(b) * blockDim.x + threadIdx.x) >> 5;
  coo_tail_warp<false, false>(t, warp, x, y);
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(t.sync + 1, 1u) == t.tail_blocks - 1) {
    atomicExch(t.sync, 0u);
    atomicExch(t.sync + 1, 0u);
  }
}

// The arguments for the tail part of a fused kernel with `regular_blocks` regular blocks.
inline TailArgs fused_tail_args(const DeviceCooTail &t, const TailPlan &plan, unsigned int regular_blocks)
{
  TailArgs a;
  if (plan.fused_blocks == 0) return a; // tail_blocks = 0: the kernel is the regular one alone
  a.nnz            = t.nnz;
  a.chunk          = plan.chunk;
  a.row            = t.row;
  a.col            = t.col;
  a.val            = t.val;
  a.sync           = t.sync;
  a.regular_blocks = regular_blocks;
  a.tail_blocks    = plan.fused_blocks;
  return a;
}

// The kernel of a hybrid product: blocks [0, regular_blocks) run Regular (a functor with
// __device__ void operator()(unsigned block) const, which must not exit threads early: the
// epilogue synchronizes the block), the remaining t.tail_blocks blocks run the tail.
template <class Regular>
__global__ void __launch_bounds__(kTailThreads) hybrid_kernel(Regular reg, TailArgs t, const double *__restrict__ x, double *__restrict__ y)
{
  // A separate tail kernel, launched as a programmatic dependent, may start once every block
  // here has begun (its wait still covers this grid's completion); no effect otherwise.
  pdl_launch_dependents();
  if (blockIdx.x < t.regular_blocks || t.tail_blocks == 0) {
    reg(blockIdx.x);
    if (t.tail_blocks > 0) signal_regular_done(t);
    return;
  }
  coo_tail_block(t, blockIdx.x - t.regular_blocks, x, y);
}

// Blocks of hybrid_kernel<Regular> a multiprocessor of the current device holds (registers
// decide), asked of the occupancy API once per device ordinal. 0 (the tail is not fused) when
// the query fails; a failure is not cached and its error is cleared, so the launch that
// follows reports only its own.
template <class Regular>
int fused_blocks_per_sm()
{
  static std::atomic<int> cache[64] = {};
  int                     dev = 0, n = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  const bool cached = dev >= 0 && dev < 64;
  if (cached && (n = cache[dev].load(std::memory_order_relaxed)) > 0) return n;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, hybrid_kernel<Regular>, kTailThreads, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  if (cached && n > 0) cache[dev].store(n, std::memory_order_relaxed);
  return n;
}

// Launches hybrid_kernel for `regular_blocks` blocks of Regular (threads_per_row threads per
// row), then the tail's own kernel with the chunk planned at setup; with tail.allow_fused, the
// tail is planned here and may run as extra blocks of the same grid instead.
template <class Regular>
cudaError_t launch_hybrid(const Regular &reg, unsigned int regular_blocks, int threads_per_row, const DeviceCooTail &tail, const double *x, double *y, cudaStream_t stream)
{
  // a tail never planned (plan_separate_tail) is refused before anything runs
  if (tail.nnz > 0 && (tail.chunk <= 0 || tail.chunk % 32 != 0)) return cudaErrorInvalidValue;
  TailPlan plan;
  plan.chunk    = tail.chunk;
  plan.separate = tail.nnz > 0;
  if (tail.allow_fused) {
    const cudaError_t err = plan_fused_tail(tail, fused_blocks_per_sm<Regular>() > kFusedTailBlocksPerSM, threads_per_row, &plan);
    if (err != cudaSuccess) return err;
  }
  hybrid_kernel<Regular><<<regular_blocks + plan.fused_blocks, kTailThreads, 0, stream>>>(reg, fused_tail_args(tail, plan, regular_blocks), x, y);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess || !plan.separate) return err;
  return launch_separate_tail(tail, plan.chunk, x, y, stream);
}

} // namespace detail
} // namespace cuda
} // namespace pspmv
