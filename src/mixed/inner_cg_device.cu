// The inner-outer CG inner solver on the device (PETSc-free): inner_cg_device.hpp.
// Algorithm, entry, exit, breakdown rule and Jacobi fallback: inner_solver.hpp (the host twin
// is inner_cg.hpp, inner_cg.cpp); the same FP32 operations in the same order as the host twin
// (the vector updates are single FMAs, as its std::fma: x = fma(alpha, p, x),
// r = fma(-alpha, w, r), p = fma(beta, p, r)), the same product (packsell_lowp_rows.cuh equals
// packsell_spmv_f32 operation for operation), FP64 dot products reduced deterministically
// (device_reduce.cuh): host and device differ only by the summation order of the FP64 dots
// (and so of sigma), which can move alpha, beta or b by an FP32 rounding.
//
// Kernels of one apply(), blocks of 256 threads, grid-stride loops over fixed grids chosen at
// create() (the product: as many blocks as the device holds at once of product_dot, asked of
// the occupancy API, so a product is one wave; the vector kernels: 8 per multiprocessor; both
// capped at the blocks that rows need); the last block of each reduction does the scalar work:
//   entry_max        scale = norm_scale(max |s_i r_i|) (scaling.hpp; a NaN-propagating max)
//   entry_norm       sigma = sqrt(sum ((s .* r) scale)^2) / scale (entry_norm of scaling.hpp);
//                    resets the state (stop = (sigma == 0), its = 0)
//   entry_scale      b = float(s .* r / sigma); x = 0; r_hat = p = b; rho = rho0 = (b, b);
//                    rho0 == 0 (only when sigma overflows): stop, no step
//   per step k = 0 .. max_it-1:
//     product_dot    w = A_hat p (PackSELL FP32, its COO tail too) and pw = (p, w) in one
//                    kernel; pw > 0 and finite: alpha = float(rho / pw), else breakdown (stop)
//     update         x += alpha p, r -= alpha w, rho' = (r, r); its += 1; the rtol test
//                    (stop), else beta = float(rho' / rho), rho = rho'
//     direction      p = r + beta p (not launched after the last step)
//   exit             z = sigma * (s .* x), or z = s .* (s .* r) when no step was made, or z = 0
//                    when sigma == 0; block 0 adds to the counters
// That is 3 launches per inner step plus 4 per application, none of which the host waits
// for. A kernel launched after a breakdown or an rtol exit reads the device flag `stop` at
// its start and returns at once (the whole grid: stop changes only in the last block of a
// reduction, after every block of that kernel has read it).
#include "inner_cg_device.hpp"
#include "device_solver_kernels.cuh"
#include "scaling.hpp"
#include "cuda/device_memory.cuh"
#include <algorithm>
#include <new>

namespace pspmv
{
namespace mixed
{
namespace cuda
{

namespace
{

// The InnerStats counters in device memory, in InnerStats' order.
struct DeviceCounters {
  long long applications, inner_its, breakdowns, early_exits, jacobi_fallbacks, zero_rhs;
};

// The scalars of the running application, the last one's history length, the counters.
struct CgState {
  double         scale; // norm_scale of the entry's max |s_i r_i|
  double         sigma, rho, rho0;
  float          alpha, beta;
  int            its;       // steps applied
  int            stop;      // no further step: breakdown, rtol, or sigma == 0
  int            zero;      // sigma == 0
  int            breakdown; // ended by pw <= 0 (or not finite)
  int            converged; // ended by rtol
  int            hist_len;  // residuals of the last application: its + 1, or 0 (r = 0, Jacobi fallback)
  unsigned int   counter;   // grid_reduce's block counter (0 between kernels)
  DeviceCounters counters;
};

} // namespace

struct DeviceInnerCg {
  DeviceScaledCopy copy; // A_hat (copy.op) and s (copy.s), owned
  LowpArgs         args;
  int32_t          rows         = 0;
  int32_t          max_it       = 0;
  unsigned int     grid         = 1;                                      // blocks of the vector kernels
  unsigned int     product_grid = 1;                                      // blocks of product_dot
  float           *x = nullptr, *r = nullptr, *p = nullptr, *w = nullptr; // rows each
  double          *partials = nullptr;                                    // max(grid, product_grid)
  double          *history  = nullptr;                                    // max_it + 1
  CgState         *state    = nullptr;
};

namespace
{

using detail::grid_reduce;

__device__ __forceinline__ int64_t first_index()
{
  return static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_stride()
{
  return static_cast<int64_t>(gridDim.x) * kThreads;
}

__global__ void __launch_bounds__(kThreads) entry_max_kernel(int32_t n, const double *__restrict__ s, const double *__restrict__ rin, CgState *st, double *partials)
{
  double acc = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) acc = nan_max(acc, fabs(s[i] * rin[i]));
  detail::grid_reduce_max(acc, partials, &st->counter, [st](double amax) { st->scale = norm_scale(amax); });
}

__global__ void __launch_bounds__(kThreads) entry_norm_kernel(int32_t n, const double *__restrict__ s, const double *__restrict__ rin, CgState *st, double *partials)
{
  const double scale = st->scale;
  double       acc   = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const double t = (s[i] * rin[i]) * scale;
    acc += t * t;
  }
  grid_reduce(acc, partials, &st->counter, [st, scale](double total) {
    const double sigma = sqrt(total) / scale;
    st->sigma          = sigma;
    st->zero           = sigma == 0.0;
    st->stop           = sigma == 0.0;
    st->its            = 0;
    st->breakdown      = 0;
    st->converged      = 0;
  });
}

__global__ void __launch_bounds__(kThreads) entry_scale_kernel(int32_t n, const double *__restrict__ s, const double *__restrict__ rin, CgState *st, double *partials, float *__restrict__ x, float *__restrict__ r, float *__restrict__ p, double *history)
{
  if (st->stop) return;
  const double sigma = st->sigma;
  double       acc   = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const float b = __double2float_rn((s[i] * rin[i]) / sigma);
    x[i]          = 0.0f;
    r[i]          = b;
    p[i]          = b;
    acc += static_cast<double>(b) * static_cast<double>(b);
  }
  grid_reduce(acc, partials, &st->counter, [st, history](double total) {
    st->rho    = total;
    st->rho0   = total;
    history[0] = sqrt(total);
    if (total == 0.0) st->stop = 1; // b = 0: no step, no breakdown (the Jacobi step follows)
  });
}

// w = A p and pw = (p, w): one thread per sorted row (grid-stride, whole warps), p[perm[sr]] * w[perm[sr]].
template <ValueKind K, bool Gapped>
__global__ void __launch_bounds__(kThreads) product_dot_kernel(LowpArgs a, const float *__restrict__ p, float *__restrict__ w, CgState *st, double *partials)
{
  if (st->stop) return;
  double        acc  = 0.0;
  const int64_t lane = threadIdx.x & 31u;
  for (int64_t t0 = first_index() - lane; t0 < a.rows; t0 += grid_stride()) { // whole warps (lowp_row)
    const int64_t t = t0 + lane;
    int32_t       row;
    const float   v = pspmv::cuda::detail::lowp_row<K, Gapped>(a, p, t, t < a.rows, &row);
    if (t < a.rows) {
      w[row] = v;
      acc += static_cast<double>(p[row]) * static_cast<double>(v);
    }
  }
  grid_reduce(acc, partials, &st->counter, [st](double pw) {
    if (!(pw > 0.0) || isinf(pw)) { // not positive, or not finite
      st->breakdown = 1;
      st->stop      = 1;
    } else {
      st->alpha = __double2float_rn(st->rho / pw);
    }
  });
}

__global__ void __launch_bounds__(kThreads) update_kernel(int32_t n, double rtol2, CgState *st, double *partials, float *__restrict__ x, float *__restrict__ r, const float *__restrict__ p, const float *__restrict__ w, double *history)
{
  if (st->stop) return;
  const float alpha = st->alpha;
  double      acc   = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    x[i]           = fmaf(alpha, p[i], x[i]);
    const float ri = fmaf(-alpha, w[i], r[i]);
    r[i]           = ri;
    acc += static_cast<double>(ri) * static_cast<double>(ri);
  }
  grid_reduce(acc, partials, &st->counter, [st, history, rtol2](double rho_new) {
    const int its = st->its + 1;
    st->its       = its;
    history[its]  = sqrt(rho_new);
    if ((rtol2 > 0.0 && rho_new <= rtol2 * st->rho0) || rho_new <= kCgResidualFloor2 * st->rho0) {
      st->converged = 1;
      st->stop      = 1;
    } else {
      st->beta = __double2float_rn(rho_new / st->rho);
      st->rho  = rho_new;
    }
  });
}

__global__ void __launch_bounds__(kThreads) direction_kernel(int32_t n, const CgState *st, const float *__restrict__ r, float *__restrict__ p)
{
  if (st->stop) return;
  const float beta = st->beta;
  for (int64_t i = first_index(); i < n; i += grid_stride()) p[i] = fmaf(beta, p[i], r[i]);
}

__global__ void __launch_bounds__(kThreads) exit_kernel(int32_t n, const double *__restrict__ s, const double *__restrict__ rin, const float *__restrict__ x, CgState *st, double *__restrict__ z)
{
  const int    zero = st->zero, its = st->its;
  const double sigma = st->sigma;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    if (zero) z[i] = 0.0;
    else if (its == 0) // no step made: the Jacobi step D^-1 r
      z[i] = s[i] * (s[i] * rin[i]);
    else z[i] = sigma * (s[i] * static_cast<double>(x[i]));
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) { // reads nothing that this kernel writes
    DeviceCounters &c = st->counters;
    c.applications += 1;
    c.inner_its += its;
    c.breakdowns += st->breakdown;
    c.early_exits += st->converged;
    c.jacobi_fallbacks += (!zero && its == 0) ? 1 : 0;
    c.zero_rhs += zero ? 1 : 0;
    st->hist_len = (zero || its == 0) ? 0 : its + 1;
  }
}

cudaError_t product_dot(const DeviceInnerCg &d, cudaStream_t stream)
{
  pspmv::cuda::detail::with_decode(d.copy.op.value_format.kind, d.args.gaps != nullptr, [&](auto k, auto g) { product_dot_kernel<decltype(k)::value, decltype(g)::value><<<d.product_grid, kThreads, 0, stream>>>(d.args, d.p, d.w, d.state, d.partials); });
  return cudaGetLastError();
}

// Resident blocks per multiprocessor of product_dot_kernel for value kind k, with column gaps
// or without.
cudaError_t product_blocks_per_sm(ValueKind k, bool gapped, int *n)
{
  return pspmv::cuda::detail::with_decode(k, gapped, [&](auto kind, auto g) { return cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, product_dot_kernel<decltype(kind)::value, decltype(g)::value>, kThreads, 0); });
}

template <class T>
cudaError_t alloc(size_t n, T **p)
{
  *p = nullptr;
  if (n == 0) return cudaSuccess;
  return cudaMalloc(reinterpret_cast<void **>(p), n * sizeof(T));
}

// The work space and grids for d->copy and max_it steps.
cudaError_t create_into(int32_t max_it, DeviceInnerCg *d)
{
  if (!pspmv::cuda::detail::lowp_args(d->copy.op, &d->args)) return cudaErrorInvalidValue;
  d->rows   = d->copy.op.rows;
  d->max_it = max_it;
  PSPMV_CUDA_TRY(detail::solver_grid(d->rows, detail::kVectorBlocksPerSM, &d->grid));
  int per_sm = 0;
  PSPMV_CUDA_TRY(product_blocks_per_sm(d->copy.op.value_format.kind, d->args.gaps != nullptr, &per_sm));
  PSPMV_CUDA_TRY(detail::solver_grid(d->rows, per_sm, &d->product_grid));
  const size_t n = static_cast<size_t>(d->rows);
  PSPMV_CUDA_TRY(alloc(n, &d->x));
  PSPMV_CUDA_TRY(alloc(n, &d->r));
  PSPMV_CUDA_TRY(alloc(n, &d->p));
  PSPMV_CUDA_TRY(alloc(n, &d->w));
  PSPMV_CUDA_TRY(alloc(std::max(d->grid, d->product_grid), &d->partials));
  PSPMV_CUDA_TRY(alloc(static_cast<size_t>(max_it) + 1, &d->history));
  PSPMV_CUDA_TRY(alloc(1, &d->state));
  PSPMV_CUDA_TRY(cudaMemset(d->state, 0, sizeof(CgState)));
  PSPMV_CUDA_TRY(cudaMemset(d->history, 0, (static_cast<size_t>(max_it) + 1) * sizeof(double)));
  return cudaDeviceSynchronize();
}

} // namespace

cudaError_t create(DeviceScaledCopy *c, int32_t max_it, DeviceInnerCg **out)
{
  PSPMV_CUDA_TRY(new_solver_on_copy(c, max_it >= 0, out));
  const cudaError_t err = create_into(max_it, *out);
  if (err != cudaSuccess) {
    destroy(*out);
    *out = nullptr;
  }
  return err;
}

cudaError_t create(const ScaledCopy &c, int32_t max_it, DeviceInnerCg **out)
{
  if (out == nullptr) return cudaErrorInvalidValue;
  *out = nullptr;
  DeviceScaledCopy dc;
  PSPMV_CUDA_TRY(upload(c, &dc));
  return create(&dc, max_it, out);
}

cudaError_t update_values(const pspmv::cuda::DeviceCsr &A, cudaStream_t stream, DeviceInnerCg *d, bool *pattern_changed)
{
  if (d == nullptr || pattern_changed == nullptr) return cudaErrorInvalidValue;
  PSPMV_CUDA_TRY(cudaDeviceSynchronize()); // applications in flight on any stream read the copy
  PSPMV_CUDA_TRY(update_scaled_copy_on_device(A, stream, &d->copy, pattern_changed));
  if (*pattern_changed) return cudaSuccess;
  if (!pspmv::cuda::detail::lowp_args(d->copy.op, &d->args)) return cudaErrorInvalidValue; // inv_scale may change
  return cudaSuccess;
}

const DeviceScaledCopy &copy_of(const DeviceInnerCg *d)
{
  return d->copy;
}

cudaError_t apply(DeviceInnerCg *d, const InnerCgParams &p, const double *r, double *z, cudaStream_t stream)
{
  if (d == nullptr || p.max_it < 0 || p.max_it > d->max_it) return cudaErrorInvalidValue;
  if (d->rows > 0 && (r == nullptr || z == nullptr)) return cudaErrorInvalidValue;
  const int32_t n     = d->rows;
  const double  rtol2 = p.rtol > 0.0 ? p.rtol * p.rtol : 0.0; // 0: no rtol test
  entry_max_kernel<<<d->grid, kThreads, 0, stream>>>(n, d->copy.s, r, d->state, d->partials);
  PSPMV_CUDA_TRY(cudaGetLastError());
  entry_norm_kernel<<<d->grid, kThreads, 0, stream>>>(n, d->copy.s, r, d->state, d->partials);
  PSPMV_CUDA_TRY(cudaGetLastError());
  entry_scale_kernel<<<d->grid, kThreads, 0, stream>>>(n, d->copy.s, r, d->state, d->partials, d->x, d->r, d->p, d->history);
  PSPMV_CUDA_TRY(cudaGetLastError());
  for (int32_t k = 0; k < p.max_it; ++k) {
    PSPMV_CUDA_TRY(product_dot(*d, stream));
    update_kernel<<<d->grid, kThreads, 0, stream>>>(n, rtol2, d->state, d->partials, d->x, d->r, d->p, d->w, d->history);
    PSPMV_CUDA_TRY(cudaGetLastError());
    if (k + 1 < p.max_it) {
      direction_kernel<<<d->grid, kThreads, 0, stream>>>(n, d->state, d->r, d->p);
      PSPMV_CUDA_TRY(cudaGetLastError());
    }
  }
  exit_kernel<<<d->grid, kThreads, 0, stream>>>(n, d->copy.s, r, d->x, d->state, z);
  return cudaGetLastError();
}

cudaError_t read_stats(DeviceInnerCg *d, InnerStats *stats, std::vector<double> *residuals, cudaStream_t stream)
{
  if (d == nullptr) return cudaErrorInvalidValue;
  CgState h;
  PSPMV_CUDA_TRY(cudaMemcpyAsync(&h, d->state, sizeof(CgState), cudaMemcpyDeviceToHost, stream));
  PSPMV_CUDA_TRY(cudaStreamSynchronize(stream));
  if (residuals != nullptr) {
    const int len = std::min(std::max(h.hist_len, 0), d->max_it + 1);
    residuals->assign(static_cast<size_t>(len), 0.0);
    if (len > 0) {
      PSPMV_CUDA_TRY(cudaMemcpyAsync(residuals->data(), d->history, static_cast<size_t>(len) * sizeof(double), cudaMemcpyDeviceToHost, stream));
      PSPMV_CUDA_TRY(cudaStreamSynchronize(stream));
    }
  }
  PSPMV_CUDA_TRY(cudaMemsetAsync(&d->state->counters, 0, sizeof(DeviceCounters), stream));
  PSPMV_CUDA_TRY(cudaStreamSynchronize(stream));
  if (stats != nullptr) {
    const DeviceCounters &c = h.counters;
    stats->applications += c.applications;
    stats->inner_its += c.inner_its;
    stats->breakdowns += c.breakdowns;
    stats->early_exits += c.early_exits;
    stats->jacobi_fallbacks += c.jacobi_fallbacks;
    stats->zero_rhs += c.zero_rhs;
  }
  return cudaSuccess;
}

cudaError_t destroy(DeviceInnerCg *d)
{
  if (d == nullptr) return cudaSuccess;
  cudaError_t first = release(&d->copy);
  pspmv::cuda::detail::free_ptr(&d->x, &first);
  pspmv::cuda::detail::free_ptr(&d->r, &first);
  pspmv::cuda::detail::free_ptr(&d->p, &first);
  pspmv::cuda::detail::free_ptr(&d->w, &first);
  pspmv::cuda::detail::free_ptr(&d->partials, &first);
  pspmv::cuda::detail::free_ptr(&d->history, &first);
  pspmv::cuda::detail::free_ptr(&d->state, &first);
  delete d;
  return first;
}

} // namespace cuda
} // namespace mixed
} // namespace pspmv
