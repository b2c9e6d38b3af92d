// RgCSR on the device: upload, value update, release, SpMV (PETSc-free).
//
// Kernel mapping: one thread per row; a block of 256 threads covers 256 consecutive rows.
// G is a multiple of 32, so each warp's 32 rows lie in one group and read slot
// group_pointers[g] + lane + k*G (rgcsr_layout.hpp) for consecutive lanes: 32 consecutive columns (128 B) and
// values (256 B) per k, fully coalesced. The loop runs to the row's own length, so padding is
// never read (a lane whose row ended is masked; sectors nobody needs are not fetched).
// Four nonzeros are loaded before the first multiply (independent loads in flight); the
// FP64 sum is one accumulator in k order, the order of the host reference.
// Matrix arrays are read with streaming loads (__ldcs: evict-first), x and the group pointers
// (shared by a group's rows) through the read-only path (__ldg) so they stay cached. Slot
// offsets are 64-bit.
// The COO tail of the hybrid split runs in its own kernel after this one, under programmatic
// dependent launch (coo_tail.cuh).
//
// T threads per row (T = 2, 4, 8; DeviceRgCsr::threads_per_row, chosen at upload for
// matrices with few rows: core/threads_per_row.hpp): T consecutive threads share a row;
// thread t reads slots k = t, t+T, ... (same k*G + lane layout: a warp reads 32/T >= 4
// consecutive rows per k, so every 32-byte sector of values it touches is fully used, and of
// columns at least half), sums them in FP64, and the T partial sums are added by a shuffle
// reduction of width T; thread t = 0 writes y. No thread returns before the shuffle
// (full-warp mask). T = 1 is the mapping above.
#include "cuda/coo_tail.cuh"
#include "rgcsr_device.hpp"
#include "rgcsr_layout.hpp"
#include "cuda/device_memory.cuh"
#include "core/threads_per_row.hpp"
#include <algorithm>
#include <vector>

namespace pspmv
{
namespace cuda
{

namespace
{

constexpr int kRgThreads = detail::kTailThreads; // one block size for the fused kernel

// The arrays a product reads.
struct RgCsrArgs {
  int32_t        rows, G;
  const int64_t *group_pointers;
  const int32_t *row_length, *columns;
  const double  *values, *x;
  double        *y;
};

// Sum of values[slot] * x[columns[slot]] over the slots k = k0, k0 + T, ... < n of one row,
// slot advancing by `stride`: in groups of 4 (4 columns and 4 values loaded, then 4 gathers,
// then 4 FMAs into one accumulator in k order), then the last 1-3 as one predicated group.
__device__ __forceinline__ double rgcsr_row_sum(const RgCsrArgs &a, int64_t slot, int64_t stride, int32_t k, int32_t T, int32_t n)
{
  double sum = 0.0;
  for (; k + 3 * T < n; k += 4 * T) { // k, k+T, k+2T, k+3T < n
    const int32_t c0 = __ldcs(a.columns + slot);
    const int32_t c1 = __ldcs(a.columns + slot + stride);
    const int32_t c2 = __ldcs(a.columns + slot + 2 * stride);
    const int32_t c3 = __ldcs(a.columns + slot + 3 * stride);
    const double  v0 = __ldcs(a.values + slot);
    const double  v1 = __ldcs(a.values + slot + stride);
    const double  v2 = __ldcs(a.values + slot + 2 * stride);
    const double  v3 = __ldcs(a.values + slot + 3 * stride);
    const double  x0 = __ldg(a.x + c0);
    const double  x1 = __ldg(a.x + c1);
    const double  x2 = __ldg(a.x + c2);
    const double  x3 = __ldg(a.x + c3);
    sum              = fma(v0, x0, sum);
    sum              = fma(v1, x1, sum);
    sum              = fma(v2, x2, sum);
    sum              = fma(v3, x3, sum);
    slot += 4 * stride;
  }
  // The last 1-3 slots as one predicated group: their loads are all in flight together (a
  // scalar loop paid two dependent latencies per slot: 6 of the 8 on a bcsstk16 row at T = 8).
  if (k < n) {
    double v[3], xv[3];
#pragma unroll
    for (int j = 0; j < 3; ++j) {
      const bool    in = k + j * T < n;
      const int32_t c  = in ? __ldcs(a.columns + slot + j * stride) : 0;
      v[j]             = in ? __ldcs(a.values + slot + j * stride) : 0.0;
      xv[j]            = in ? __ldg(a.x + c) : 0.0;
    }
#pragma unroll
    for (int j = 0; j < 3; ++j)
      if (k + j * T < n) sum = fma(v[j], xv[j], sum);
  }
  return sum;
}

// One thread per row: rows [block*256, block*256 + 256).
template <bool Add>
struct RgCsrRows {
  RgCsrArgs                       a;
  __device__ __forceinline__ void operator()(unsigned int block) const
  {
    const int64_t row = static_cast<int64_t>(block) * kRgThreads + threadIdx.x;
    if (row >= a.rows) return;
    const int32_t r    = static_cast<int32_t>(row);
    const int32_t g    = rgcsr::group_of(r, a.G);
    const int32_t lane = rgcsr::lane_in_group(r, g, a.G);
    const int32_t n    = __ldcs(a.row_length + r);
    const double  sum  = n > 0 ? rgcsr_row_sum(a, rgcsr::first_slot(__ldg(a.group_pointers + g), lane), rgcsr::slot_stride(1, a.G), 0, 1, n) : 0.0;
    detail::write_row<Add>(a.y + r, sum);
  }
};

// T threads per row: rows [block*256/T, (block+1)*256/T). Thread t of a row takes slots
// t, t+T, ...; the T partial sums are added by a shuffle reduction of width T.
template <bool Add, int T>
struct RgCsrRowsMulti {
  static_assert(T == 2 || T == 4 || T == 8, "T threads per row: 2, 4 or 8 (T = 1 is RgCsrRows)");
  RgCsrArgs                       a;
  __device__ __forceinline__ void operator()(unsigned int block) const
  {
    const int64_t tid    = static_cast<int64_t>(block) * kRgThreads + threadIdx.x;
    const int64_t row    = tid / T;
    const int32_t t      = static_cast<int32_t>(tid % T);
    const bool    active = row < a.rows;
    double        sum    = 0.0;
    if (active) {
      const int32_t r    = static_cast<int32_t>(row);
      const int32_t g    = rgcsr::group_of(r, a.G);
      const int32_t lane = rgcsr::lane_in_group(r, g, a.G);
      const int32_t n    = __ldcs(a.row_length + r);
      // thread t starts at slot t of the row, and goes from slot k to slot k + T
      sum = rgcsr_row_sum(a, rgcsr::slot(rgcsr::first_slot(__ldg(a.group_pointers + g), lane), t, a.G), rgcsr::slot_stride(T, a.G), t, T, n);
    }
    // Every thread of the warp gets here (rows past the end are inactive, not returned). The
    // T threads of a row are aligned lanes of one warp.
#pragma unroll
    for (int off = T / 2; off > 0; off /= 2) sum += __shfl_down_sync(0xffffffffu, sum, off, T);
    if (active && t == 0) {
      detail::write_row<Add>(a.y + row, sum);
    }
  }
};

template <template <bool> class Rows>
cudaError_t launch_rows(const DeviceRgCsr &A, const RgCsrArgs &a, int threads_per_row, bool add, cudaStream_t stream)
{
  const unsigned int blocks = detail::blocks_for(static_cast<int64_t>(A.rows) * threads_per_row, kRgThreads);
  if (add) return detail::launch_hybrid(Rows<true>{a}, blocks, threads_per_row, A.tail, a.x, a.y, stream);
  return detail::launch_hybrid(Rows<false>{a}, blocks, threads_per_row, A.tail, a.x, a.y, stream);
}
template <bool Add>
using RgCsrRows2 = RgCsrRowsMulti<Add, 2>;
template <bool Add>
using RgCsrRows4 = RgCsrRowsMulti<Add, 4>;
template <bool Add>
using RgCsrRows8 = RgCsrRowsMulti<Add, 8>;

} // namespace

cudaError_t release(DeviceRgCsr *d)
{
  cudaError_t first = cudaSuccess;
  detail::free_ptr(&d->group_pointers, &first);
  detail::free_ptr(&d->row_length, &first);
  detail::free_ptr(&d->columns, &first);
  detail::free_ptr(&d->values, &first);
  detail::free_ptr(&d->diagonal, &first);
  detail::release_tail(&d->tail, &first);
  *d = DeviceRgCsr{};
  return first;
}

static cudaError_t upload_all(const RgCsrMatrix &h, DeviceRgCsr *d)
{
  if (!rgcsr::valid_group_size(h.group_size)) return cudaErrorInvalidValue;
  if (h.rows < 0 || h.cols < 0 || h.row_length.size() != static_cast<size_t>(h.rows)) return cudaErrorInvalidValue;
  const int64_t slots = h.group_pointers.empty() ? 0 : h.group_pointers.back();
  if (h.columns.size() != static_cast<size_t>(slots) || h.values.size() != static_cast<size_t>(slots)) return cudaErrorInvalidValue;
  if (h.rows > 0 && static_cast<int64_t>(h.group_pointers.size()) - 1 < rgcsr::num_groups(h.rows, h.group_size)) return cudaErrorInvalidValue;
  d->rows          = h.rows;
  d->cols          = h.cols;
  d->group_size    = h.group_size;
  d->num_groups    = h.group_pointers.empty() ? 0 : h.num_groups();
  d->num_slots     = slots;
  d->hybrid_width  = h.hybrid_width;
  d->nnz           = rgcsr_regular_nnz(h) + h.tail.nnz();
  int64_t resident = 0;
  PSPMV_CUDA_TRY(detail::resident_threads(&resident));
  d->threads_per_row = threads_per_row(h.rows, rgcsr_regular_nnz(h), resident);
  PSPMV_CUDA_TRY(detail::alloc_copy(h.group_pointers, &d->group_pointers));
  PSPMV_CUDA_TRY(detail::alloc_copy(h.row_length, &d->row_length));
  PSPMV_CUDA_TRY(detail::alloc_copy(h.columns, &d->columns));
  PSPMV_CUDA_TRY(detail::alloc_copy(h.values, &d->values));
  PSPMV_CUDA_TRY(detail::upload_diagonal(h, rgcsr_diagonal, &d->diagonal, true));
  PSPMV_CUDA_TRY(detail::upload_tail(h.tail, &d->tail));
  // cudaMemcpy from pageable memory may return before the DMA lands; a product launched
  // next on a non-blocking stream must see the data.
  return cudaDeviceSynchronize();
}

cudaError_t upload(const RgCsrMatrix &h, DeviceRgCsr *d)
{
  return detail::reupload(h, d, upload_all);
}

cudaError_t upload_values(const RgCsrMatrix &h, DeviceRgCsr *d)
{
  if (h.rows != d->rows || h.cols != d->cols || static_cast<int64_t>(h.values.size()) != d->num_slots || h.tail.nnz() != d->tail.nnz) return cudaErrorInvalidValue;
  // A product still running on another stream may read the old values.
  PSPMV_CUDA_TRY(cudaDeviceSynchronize());
  PSPMV_CUDA_TRY(detail::copy_into(h.values, d->values));
  PSPMV_CUDA_TRY(detail::upload_tail_values(h.tail, &d->tail));
  PSPMV_CUDA_TRY(detail::upload_diagonal(h, rgcsr_diagonal, &d->diagonal, false));
  return cudaDeviceSynchronize();
}

cudaError_t spmv(const DeviceRgCsr &A, const double *x, double *y, bool add, cudaStream_t stream)
{
  if (A.threads_per_row != 1 && A.threads_per_row != 2 && A.threads_per_row != 4 && A.threads_per_row != 8) return cudaErrorInvalidValue;
  if (A.rows <= 0) return cudaSuccess;
  // With add, rows without regular nonzeros need no work; still one launch (cheap, uniform).
  const RgCsrArgs a{A.rows, A.group_size, A.group_pointers, A.row_length, A.columns, A.values, x, y};
  switch (A.threads_per_row) {
  case 2:
    return launch_rows<RgCsrRows2>(A, a, 2, add, stream);
  case 4:
    return launch_rows<RgCsrRows4>(A, a, 4, add, stream);
  case 8:
    return launch_rows<RgCsrRows8>(A, a, 8, add, stream);
  default:
    return launch_rows<RgCsrRows>(A, a, 1, add, stream);
  }
}

int64_t stored_bytes(const DeviceRgCsr &A)
{
  const int64_t gp = A.group_pointers ? static_cast<int64_t>(A.num_groups + 1) * 8 : 0;
  return gp + static_cast<int64_t>(A.rows) * 4 + A.num_slots * (4 + 8) + detail::tail_bytes(A.tail);
}

// The arrays upload_all() and upload_values() copy, at the sizes they were allocated with.
int64_t upload_bytes(const DeviceRgCsr &A)
{
  const int64_t gp = A.group_pointers ? static_cast<int64_t>(A.num_groups + 1) * static_cast<int64_t>(sizeof(int64_t)) : 0;
  return gp + static_cast<int64_t>(A.rows) * static_cast<int64_t>(sizeof(int32_t)) + A.num_slots * static_cast<int64_t>(sizeof(int32_t) + sizeof(double)) + detail::diagonal_bytes(A) + detail::tail_bytes(A.tail);
}

int64_t device_bytes(const DeviceRgCsr &A)
{
  return upload_bytes(A) + detail::tail_map_bytes(A.tail);
}

int64_t value_upload_bytes(const DeviceRgCsr &A)
{
  return A.num_slots * static_cast<int64_t>(sizeof(double)) + detail::diagonal_bytes(A) + detail::tail_value_bytes(A.tail);
}

} // namespace cuda
} // namespace pspmv
