// Mixed-precision CG with reliable updates on the device: mixed_cg_device.hpp. The order of the
// operations is the host twin's (mixed_cg.cpp); the dot products are FP64 sums reduced in a fixed
// order (device_reduce.cuh), so host and device differ by the summation order only.
#include "mixed_cg_device.hpp"
#include "device_solver_kernels.cuh"
#include "scaling.hpp"
#include "cuda/device_memory.cuh"
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <new>
#include <type_traits>
#include <vector>

namespace pspmv
{
namespace mixed
{
namespace cuda
{

namespace
{

struct McState {
  double       sigma, rho, rz, rz_prev, maxrr, tau, delta; // rz: (r, z), rho without a preconditioner
  double       alpha, beta;                                // rounded to the vectors' precision
  long long    its, end_at;                                // end_at: end_step()'s (MixedCgDecisions::segment_end())
  int          trigger, stop, breakdown;
  int          pc; // a preconditioner: its rz judged by step_breakdown()
  unsigned int counter;
  double       red[4];
};

__device__ __forceinline__ int64_t first_index()
{
  return static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_stride()
{
  return static_cast<int64_t>(gridDim.x) * kThreads;
}

// Two FP64 sums of the grid in a fixed order (device_reduce.cuh's grid_reduce, two values):
// partials holds 2 gridDim.x doubles; finish(a, b) on thread 0 of the last block.
template <class Finish>
__device__ __forceinline__ void grid_reduce2(double a, double b, double *partials, unsigned int *counter, Finish finish)
{
  using BlockReduce = cub::BlockReduce<double, kThreads>;
  __shared__ typename BlockReduce::TempStorage tmp;
  __shared__ bool                              last;
  const double                                 sa = BlockReduce(tmp).Sum(a);
  __syncthreads();
  const double sb = BlockReduce(tmp).Sum(b);
  if (threadIdx.x == 0) {
    partials[2 * blockIdx.x]     = sa;
    partials[2 * blockIdx.x + 1] = sb;
    __threadfence();
    last = atomicAdd(counter, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  double ta = 0.0, tb = 0.0;
  for (unsigned int k = threadIdx.x; k < gridDim.x; k += kThreads) {
    ta += __ldcg(partials + 2 * k);
    tb += __ldcg(partials + 2 * k + 1);
  }
  __syncthreads();
  const double ra = BlockReduce(tmp).Sum(ta);
  __syncthreads();
  const double rb = BlockReduce(tmp).Sum(tb);
  if (threadIdx.x == 0) {
    *counter = 0u;
    finish(ra, rb);
  }
}

// breakdown: a Breakdown (mixed_cg.hpp), 0 while none
__device__ __forceinline__ void finish_pw(McState *st, double pw, bool lowp)
{
  const Breakdown b = step_breakdown(pw, st->rz, st->pc != 0);
  if (b != Breakdown::None) {
    st->breakdown = static_cast<int>(b);
    st->stop      = 1;
  } else {
    st->alpha = lowp ? static_cast<double>(__double2float_rn(st->rz / pw)) : st->rz / pw;
    if (st->alpha == 0.0) {
      st->breakdown = static_cast<int>(Breakdown::Curvature);
      st->stop      = 1;
    }
  }
}

// The low-precision product's passes: Whole, w = A_lp p with the compensation and (p, w) (one
// rank, or a rank without an off-diagonal block); on several ranks Diagonal, w = A_d p (no
// compensation, no dot product: the halo is in flight), then OffDiagonal, w += A_o ghost, the
// compensation and (p, w), in the host twin's order (w = A_d p + A_o ghost, then fma(c, p, w)).
enum class Pass {
  Whole,
  Diagonal,
  OffDiagonal
};

// The step's first reduction of a rank: alpha from pw (one rank), or pw left in red[0] for the
// sum over the ranks (defer; finish_pw_kernel then forms alpha).
__device__ __forceinline__ void finish_or_defer_pw(McState *st, double pw, bool lowp, int defer)
{
  if (defer) st->red[0] = pw;
  else finish_pw(st, pw, lowp);
}

// A low-precision product pass (above) of a (x: p, or the ghost buffer for OffDiagonal), and
// for Whole and OffDiagonal (p, w) and alpha (FP32 vectors)
template <ValueKind K, bool Gapped, Pass P>
__global__ void __launch_bounds__(kThreads) product_dot_kernel(LowpArgs a, const float *__restrict__ x, const float *__restrict__ p, const float *__restrict__ comp, float *__restrict__ w, McState *st, double *partials, int defer)
{
  if (st->stop || st->trigger) return;
  double        acc  = 0.0;
  const int64_t lane = threadIdx.x & 31u;
  for (int64_t t0 = first_index() - lane; t0 < a.rows; t0 += grid_stride()) {
    const int64_t t = t0 + lane;
    int32_t       row;
    float         v = pspmv::cuda::detail::lowp_row<K, Gapped>(a, x, t, t < a.rows, &row);
    if (t < a.rows) {
      if constexpr (P == Pass::OffDiagonal) v = w[row] + v;
      if (P != Pass::Diagonal && comp) v = fmaf(comp[row], p[row], v); // the row-sum compensation, as the host twin's caller adds it
      w[row] = v;
      if constexpr (P != Pass::Diagonal) acc += static_cast<double>(p[row]) * static_cast<double>(v);
    }
  }
  if constexpr (P != Pass::Diagonal) detail::grid_reduce(acc, partials, &st->counter, [st, defer](double pw) { finish_or_defer_pw(st, pw, true, defer); });
}

// FP64 phase: v = s .* p (before the exact product), then w = s .* Av and (p, w), alpha
__global__ void scale_kernel(int32_t n, const McState *st, const double *__restrict__ s, const double *__restrict__ p, double *__restrict__ v)
{
  if (st->stop || st->trigger) return;
  for (int64_t i = first_index(); i < n; i += grid_stride()) v[i] = s[i] * p[i];
}
__global__ void __launch_bounds__(kThreads) dot64_kernel(int32_t n, const double *__restrict__ s, const double *__restrict__ av, const double *__restrict__ p, double *__restrict__ w, McState *st, double *partials, int defer)
{
  if (st->stop || st->trigger) return;
  double acc = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const double wi = s[i] * av[i];
    w[i]            = wi;
    acc += p[i] * wi;
  }
  detail::grid_reduce(acc, partials, &st->counter, [st, defer](double pw) { finish_or_defer_pw(st, pw, false, defer); });
}

// The end of a step from (r', r') and (r', z') ((r', r') without a preconditioner; Fletcher-
// Reeves' beta, as the host twin (mixed_cg.hpp): (r', w) is not used): the non-finite breakdown,
// the step count, then end_step() (mixed_cg.hpp, the host twin's): the trigger and beta (rounded
// to the vectors' precision when lowp)
__device__ __forceinline__ void finish_step(McState *st, double rho_new, double rz_new, bool lowp)
{
  if (!isfinite(rho_new)) {
    st->breakdown = static_cast<int>(Breakdown::NonFinite);
    st->stop      = 1;
    return;
  }
  st->its += 1;
  double b;
  st->trigger = end_step(rho_new, rz_new, st->its, st->end_at, st->delta, st->tau, st->maxrr, st->rho, st->rz, st->rz_prev, &b) ? 1 : 0;
  st->beta    = lowp ? static_cast<double>(__double2float_rn(b)) : b;
}

// r = fma(-alpha, w, r); (r, r) and (r, w); the trigger; beta (defer: the two sums left in
// red[0..1], for the sum over the ranks (finish_step_kernel then ends the step) or for the
// preconditioner's from_pc_kernel)
template <class T>
__global__ void __launch_bounds__(kThreads) update_kernel(int32_t n, McState *st, double *partials, T *__restrict__ r, const T *__restrict__ w, int defer)
{
  if (st->stop || st->trigger) return;
  const T alpha = static_cast<T>(st->alpha);
  double  rr = 0.0, rw = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const T ri = fma(-alpha, w[i], r[i]);
    r[i]       = ri;
    rr += static_cast<double>(ri) * static_cast<double>(ri);
    rw += static_cast<double>(ri) * static_cast<double>(w[i]);
  }
  grid_reduce2(rr, rw, partials, &st->counter, [st, defer](double rho_new, double rwt) {
    if (defer) {
      st->red[0] = rho_new;
      st->red[1] = rwt;
    } else {
      finish_step(st, rho_new, rho_new, std::is_same<T, float>::value);
    }
  });
}

// Several ranks: the step's reductions from the sums over the ranks in red[] (one thread)
__global__ void finish_pw_kernel(McState *st, int lowp)
{
  if (st->stop || st->trigger) return;
  finish_pw(st, st->red[0], lowp != 0);
}
// (pc: (r', z') in red[2], from_pc_kernel's)
__global__ void finish_step_kernel(McState *st, int lowp, int pc)
{
  if (st->stop || st->trigger) return;
  finish_step(st, st->red[0], pc ? st->red[2] : st->red[0], lowp != 0);
}

// The preconditioner's input v = r ./ s (FP64) of the T residual r (the iterated one, or r_T of a
// reliable update): M_hat^-1 = S^-1 M^-1 S^-1 (mixed_cg.hpp).
template <class T>
__global__ void to_pc_kernel(int32_t n, const double *__restrict__ s, const T *__restrict__ r, double *__restrict__ v)
{
  for (int64_t i = first_index(); i < n; i += grid_stride()) v[i] = static_cast<double>(r[i]) / s[i];
}

// From the preconditioner's output u = M^-1 v: z = T(u ./ s) (z may be u itself: the FP64 phase
// keeps z in u; u null: z is the low-precision preconditioner's output already) and rz = (r, z)
// in the fixed-order grid reduction. step: a step's (nothing after
// a breakdown or a trigger; then the step's end, finish_step() with red[0] = (r', r') of
// update_kernel, or, defer, rz left in red[2] for the sum over the ranks); otherwise (a reliable
// update's r_T) rz is left in red[2].
template <class T>
__global__ void __launch_bounds__(kThreads) from_pc_kernel(int32_t n, const double *__restrict__ s, const double *u, T *z, const T *__restrict__ r, McState *st, double *partials, int step, int defer)
{
  if (step && (st->stop || st->trigger)) return;
  double rz = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    T zi;
    if (u) {
      zi   = static_cast<T>(u[i] / s[i]);
      z[i] = zi;
    } else zi = z[i];
    rz += static_cast<double>(r[i]) * static_cast<double>(zi);
  }
  detail::grid_reduce(rz, partials, &st->counter, [st, step, defer](double t) {
    if (step && !defer) finish_step(st, st->red[0], t, std::is_same<T, float>::value);
    else st->red[2] = t;
  });
}

// dy += (sigma alpha) p; unless the step triggered an update: p = fma(beta, p, r) (r: the
// preconditioned residual z with a preconditioner). Runs only in the launch whose update_kernel
// ran (its == expected).
template <class T>
__global__ void xp_kernel(int32_t n, const McState *st, long long expected, T *__restrict__ p, const T *__restrict__ r, double *__restrict__ dy)
{
  if (st->its != expected || st->breakdown) return;
  const double c    = st->sigma * st->alpha;
  const T      beta = static_cast<T>(st->beta);
  const bool   trig = st->trigger != 0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const T pi = p[i];
    dy[i] += c * static_cast<double>(pi);
    if (!trig) p[i] = fma(beta, pi, r[i]);
  }
}

__global__ void flush_kernel(int32_t n, const double *__restrict__ s, double *__restrict__ dy, double *__restrict__ x)
{
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    x[i] += s[i] * dy[i];
    dy[i] = 0.0;
  }
}

// r = b - t; red[0] = max |r|, then (second kernel) red[1] = max |s r|
__global__ void __launch_bounds__(kThreads) resid_kernel(int32_t n, const double *__restrict__ b, const double *__restrict__ t, double *__restrict__ r, McState *st, double *partials)
{
  double m = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const double ri = b[i] - t[i];
    r[i]            = ri;
    m               = nan_max(m, fabs(ri));
  }
  detail::grid_reduce_max(m, partials, &st->counter, [st](double v) { st->red[0] = v; });
}
__global__ void __launch_bounds__(kThreads) smax_kernel(int32_t n, const double *__restrict__ s, const double *__restrict__ r, McState *st, double *partials)
{
  double m = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) m = nan_max(m, fabs(s[i] * r[i]));
  detail::grid_reduce_max(m, partials, &st->counter, [st](double v) { st->red[1] = v; });
}
// red[2] = sum (r sc0)^2, red[3] = sum (s r sc1)^2
__global__ void __launch_bounds__(kThreads) sumsq_kernel(int32_t n, const double *__restrict__ s, const double *__restrict__ r, double sc0, double sc1, McState *st, double *partials)
{
  double a = 0.0, c = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const double u = r[i] * sc0, v = (s[i] * r[i]) * sc1;
    a += u * u;
    c += v * v;
  }
  grid_reduce2(a, c, partials, &st->counter, [st](double x, double y) {
    st->red[2] = x;
    st->red[3] = y;
  });
}
// departure: red[0] = ||s r / sigma - r_iter||^2, red[1] = ||s r / sigma||^2
template <class T>
__global__ void __launch_bounds__(kThreads) departure_kernel(int32_t n, const double *__restrict__ s, const double *__restrict__ r, double sigma, const T *__restrict__ rit, McState *st, double *partials)
{
  double e2 = 0.0, t2 = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const double t = s[i] * r[i] / sigma, e = t - static_cast<double>(rit[i]);
    e2 += e * e;
    t2 += t * t;
  }
  grid_reduce2(e2, t2, partials, &st->counter, [st](double x, double y) {
    st->red[0] = x;
    st->red[1] = y;
  });
}
// the preconditioner's check (after_stall()): red[0] = ||z_lp - u ./ s||^2, red[1] = ||u ./ s||^2
// (u = M^-1 (r_T ./ s) in FP64, z_lp the reduced-precision preconditioner's output)
__global__ void __launch_bounds__(kThreads) pc_departure_kernel(int32_t n, const double *__restrict__ s, const double *__restrict__ u, const float *__restrict__ zl, McState *st, double *partials)
{
  double e2 = 0.0, z2 = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const double z = u[i] / s[i], e = static_cast<double>(zl[i]) - z;
    e2 += e * e;
    z2 += z * z;
  }
  grid_reduce2(e2, z2, partials, &st->counter, [st](double x, double y) {
    st->red[0] = x;
    st->red[1] = y;
  });
}
// r_T = T(s r / sig); red[0] = (r_T, r_T), red[1] = (r_T, p)
template <class T>
__global__ void __launch_bounds__(kThreads) restart_kernel(int32_t n, const double *__restrict__ s, const double *__restrict__ r, double sig, T *__restrict__ rt, const T *__restrict__ p, McState *st, double *partials)
{
  double a = 0.0, c = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const T ri = static_cast<T>((s[i] * r[i]) / sig);
    rt[i]      = ri;
    a += static_cast<double>(ri) * static_cast<double>(ri);
    c += static_cast<double>(ri) * static_cast<double>(p[i]);
  }
  grid_reduce2(a, c, partials, &st->counter, [st](double x, double y) {
    st->red[0] = x;
    st->red[1] = y;
  });
}
template <class T>
__global__ void direction_kernel(int32_t n, T coef, T beta, int restart, const T *__restrict__ r, T *__restrict__ p)
{
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    if (restart) p[i] = r[i];
    else p[i] = fma(beta, fma(-coef, r[i], p[i]), r[i]);
  }
}
// (v, av): red[0]
__global__ void __launch_bounds__(kThreads) dot_kernel(int32_t n, const double *__restrict__ v, const double *__restrict__ av, McState *st, double *partials)
{
  double acc = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) acc += v[i] * av[i];
  detail::grid_reduce(acc, partials, &st->counter, [st](double t) { st->red[0] = t; });
}
template <class T>
__global__ void widen_kernel(int32_t n, const T *__restrict__ in, double *__restrict__ out)
{
  for (int64_t i = first_index(); i < n; i += grid_stride()) out[i] = static_cast<double>(in[i]);
}
__global__ void fill_kernel(int32_t n, double v, double *__restrict__ y)
{
  for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] = v;
}
__global__ void comp_kernel(int32_t n, const double *__restrict__ s, const double *__restrict__ as, const double *__restrict__ lp, float *__restrict__ c)
{
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const double d = s[i] * as[i] - lp[i];
    c[i]           = isfinite(d) ? __double2float_rn(d) : 0.0f;
  }
}
__global__ void lowp_scale_kernel(int32_t n, const double *__restrict__ s, const float *__restrict__ p, double *__restrict__ v)
{
  for (int64_t i = first_index(); i < n; i += grid_stride()) v[i] = s[i] * static_cast<double>(p[i]);
}

struct CudaFailure {
  cudaError_t err;
};
#define MC_TRY(call) \
  do { \
    const cudaError_t mc_err_ = (call); \
    if (mc_err_ != cudaSuccess) throw CudaFailure{mc_err_}; \
  } while (0)

template <class T>
cudaError_t alloc(size_t n, T **p)
{
  *p = nullptr;
  if (n == 0) return cudaSuccess;
  return cudaMalloc(reinterpret_cast<void **>(p), n * sizeof(T));
}

} // namespace

struct DeviceMixedCg {
  DeviceScaledCopy copy;
  LowpArgs         args;
  int32_t          rows = 0;
  unsigned int     grid = 1, product_grid = 1;
  float           *r32 = nullptr, *p32 = nullptr, *w32 = nullptr;
  float           *z32     = nullptr; // the preconditioned residual (the first solve with a preconditioner allocates it)
  double          *pc_v    = nullptr; // the preconditioner's input and output, FP64 (the same); pc_u holds z in the FP64 phase
  double          *pc_u    = nullptr;
  float           *comp    = nullptr; // the row-sum compensation (null: off)
  double          *scratch = nullptr; // compensate()'s row sums (r and t may hold a solve's data then)
  double          *r = nullptr, *t = nullptr, *dy = nullptr, *v = nullptr;
  double          *r64 = nullptr, *p64 = nullptr, *w64 = nullptr; // the FP64 phase's
  double          *partials = nullptr;
  McState         *state    = nullptr;
  // several ranks: the off-diagonal block (off.rows == 0: none), its ghost buffer, and the
  // pinned host copy of the step's partial sums
  pspmv::cuda::DevicePackSell off;
  LowpArgs                    off_args;
  float                      *ghost  = nullptr;
  int32_t                     nghost = 0;
  double                     *pinned = nullptr;
};

namespace
{

cudaError_t setup(DeviceMixedCg *d)
{
  if (!pspmv::cuda::detail::lowp_args(d->copy.op, &d->args)) return cudaErrorInvalidValue;
  d->rows    = d->copy.op.rows;
  int per_sm = 1;
  PSPMV_CUDA_TRY(detail::solver_grid(d->rows, detail::kVectorBlocksPerSM, &d->grid));
  PSPMV_CUDA_TRY(pspmv::cuda::detail::with_decode(d->copy.op.value_format.kind, d->args.gaps != nullptr,
                                                  [&](auto k, auto g) { return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, product_dot_kernel<decltype(k)::value, decltype(g)::value, Pass::Whole>, kThreads, 0); }));
  PSPMV_CUDA_TRY(detail::solver_grid(d->rows, per_sm, &d->product_grid));
  return cudaSuccess;
}

class Run {
public:
  Run(DeviceMixedCg *d, const double *b, double *x, const MixedCgParams &p, int every, const DeviceMixedCgHooks &h, cudaStream_t st) :
    d_(d),
    b_(b),
    x_(x),
    p_(p),
    every_(std::max(every, 1)),
    h_(h),
    stream_(st),
    n_(d->rows),
    multi_(static_cast<bool>(h.allreduce_sum)),
    pc_(static_cast<bool>(h.precondition)),
    dc_(p, h.converged ? std::function<MixedCgReason(int64_t, double)>([this](int64_t its, double rn) { return outside([&] { return h_.converged(its, rn); }); }) : nullptr,
        h.monitor ? std::function<void(int64_t, double)>([this](int64_t its, double rn) { outside([&] { h_.monitor(its, rn); }); }) : nullptr,
        h.target ? std::function<double(double)>([this](double rn0) { return outside([&] { return h_.target(rn0); }); }) : nullptr)
  {
  }

  // The caller's timer runs over the loop's own work only: stopped around every hook (outside()).
  void timer_start()
  {
    if (!timing_ && h_.timer_start && h_.timer_stop) {
      h_.timer_start();
      timing_ = true;
    }
  }
  void timer_stop()
  {
    if (timing_) {
      timing_ = false;
      h_.timer_stop();
    }
  }
  // Stops the timer after an error (its own error dropped: the first one is reported).
  void timer_stop_quietly() noexcept
  {
    try {
      timer_stop();
    } catch (...) {
    }
  }
  template <class F>
  auto outside(F &&f) -> decltype(f())
  {
    timer_stop();
    if constexpr (std::is_void<decltype(f())>::value) {
      f();
      timer_start();
    } else {
      auto v = f();
      timer_start();
      return v;
    }
  }

  // Several ranks: the rank's values v[0 .. k) (host) replaced by their sum / maximum over the
  // ranks; nothing on one rank.
  void global_sum(double *v, int k)
  {
    if (h_.allreduce_sum) outside([&] { h_.allreduce_sum(v, k); });
  }
  void global_max(double *v, int k)
  {
    if (h_.allreduce_max) outside([&] { h_.allreduce_max(v, k); });
  }
  // Several ranks: the k partial sums a step's kernel left in the device state's red[] replaced
  // by the sums over the ranks (through the pinned buffer; the copy back is ordered on the stream
  // before the kernel that reads them).
  void global_sum_on_device(int k)
  {
    double *red = reinterpret_cast<double *>(reinterpret_cast<char *>(d_->state) + offsetof(McState, red));
    MC_TRY(cudaMemcpyAsync(d_->pinned, red, size_t(k) * sizeof(double), cudaMemcpyDeviceToHost, stream_));
    MC_TRY(cudaStreamSynchronize(stream_));
    global_sum(d_->pinned, k);
    MC_TRY(cudaMemcpyAsync(red, d_->pinned, size_t(k) * sizeof(double), cudaMemcpyHostToDevice, stream_));
  }

  MixedCgResult solve()
  {
    timer_start();
    if (pc_) ensure_pc();
    MC_TRY(cudaMemsetAsync(d_->dy, 0, size_t(n_) * sizeof(double), stream_));
    host_ = McState{};
    if (!dc_.start(true_residual())) return dc_.res;
    if (!p_.start_fp64 && phase<float>()) return dc_.res;
    dc_.res.fp64 = true;
    ensure_fp64();
    if (!dc_.restart) widen_kernel<float><<<d_->grid, kThreads, 0, stream_>>>(n_, d_->p32, d_->p64);
    MC_TRY(cudaGetLastError());
    phase<double>();
    return dc_.res;
  }

private:
  // the preconditioner's buffers, at the first solve with one (each kept once allocated)
  void ensure_pc()
  {
    if (!d_->z32) MC_TRY(alloc(size_t(n_), &d_->z32));
    if (!d_->pc_v) MC_TRY(alloc(size_t(n_), &d_->pc_v));
    if (!d_->pc_u) MC_TRY(alloc(size_t(n_), &d_->pc_u));
  }
  void ensure_fp64()
  {
    if (d_->p64) return;
    MC_TRY(alloc(size_t(n_), &d_->r64));
    MC_TRY(alloc(size_t(n_), &d_->p64));
    MC_TRY(alloc(size_t(n_), &d_->w64));
  }
  void pull()
  {
    MC_TRY(cudaMemcpyAsync(&host_, d_->state, sizeof(McState), cudaMemcpyDeviceToHost, stream_));
    MC_TRY(cudaStreamSynchronize(stream_));
  }
  void push()
  {
    host_.counter = 0;
    MC_TRY(cudaMemcpyAsync(d_->state, &host_, sizeof(McState), cudaMemcpyHostToDevice, stream_));
    MC_TRY(cudaStreamSynchronize(stream_)); // host_ is reused
  }
  // r = b - A x; ||r|| and sigma_new_ = ||s .* r|| (scaled sums as entry_norm)
  double true_residual()
  {
    outside([&] { h_.exact_product(x_, d_->t); });
    resid_kernel<<<d_->grid, kThreads, 0, stream_>>>(n_, b_, d_->t, d_->r, d_->state, d_->partials);
    MC_TRY(cudaGetLastError());
    smax_kernel<<<d_->grid, kThreads, 0, stream_>>>(n_, d_->copy.s, d_->r, d_->state, d_->partials);
    MC_TRY(cudaGetLastError());
    pull();
    global_max(host_.red, 2);
    const double sc0 = norm_scale(host_.red[0]), sc1 = norm_scale(host_.red[1]);
    sumsq_kernel<<<d_->grid, kThreads, 0, stream_>>>(n_, d_->copy.s, d_->r, sc0, sc1, d_->state, d_->partials);
    MC_TRY(cudaGetLastError());
    pull();
    global_sum(host_.red + 2, 2);
    sigma_new_ = std::sqrt(host_.red[3]) / sc1;
    return std::sqrt(host_.red[2]) / sc0;
  }
  template <class T>
  T *rv()
  {
    return reinterpret_cast<T *>(std::is_same<T, float>::value ? static_cast<void *>(d_->r32) : static_cast<void *>(d_->r64));
  }
  template <class T>
  T *pv()
  {
    return reinterpret_cast<T *>(std::is_same<T, float>::value ? static_cast<void *>(d_->p32) : static_cast<void *>(d_->p64));
  }
  template <class T>
  T *wv()
  {
    return reinterpret_cast<T *>(std::is_same<T, float>::value ? static_cast<void *>(d_->w32) : static_cast<void *>(d_->w64));
  }
  // the preconditioned residual z (FP64: in the preconditioner's output pc_u)
  template <class T>
  T *zv()
  {
    return reinterpret_cast<T *>(std::is_same<T, float>::value ? static_cast<void *>(d_->z32) : static_cast<void *>(d_->pc_u));
  }
  // u = M^-1 v through the caller's hook (device arrays), counted
  void apply_pc(const double *v, double *u)
  {
    outside([&] { h_.precondition(v, u); });
    ++dc_.res.pc_applications;
  }
  // z = T((M^-1 (r ./ s)) ./ s) of the T residual r: to_pc, the hook, from_pc (step, defer: as
  // from_pc_kernel's); FP32 with precondition_lowp: z = M_hat_lp^-1 r by that hook, from_pc's rz
  template <class T>
  void precondition(int step, int defer)
  {
    const double *u = d_->pc_u;
    if (std::is_same<T, float>::value && h_.precondition_lowp) {
      outside([&] { h_.precondition_lowp(d_->r32, d_->z32); });
      ++dc_.res.pc_applications;
      ++dc_.res.pc_lowp_applications;
      u = nullptr;
    } else {
      to_pc_kernel<T><<<d_->grid, kThreads, 0, stream_>>>(n_, d_->copy.s, rv<T>(), d_->pc_v);
      MC_TRY(cudaGetLastError());
      apply_pc(d_->pc_v, d_->pc_u);
    }
    from_pc_kernel<T><<<d_->grid, kThreads, 0, stream_>>>(n_, d_->copy.s, u, zv<T>(), rv<T>(), d_->state, d_->partials, step, defer);
    MC_TRY(cudaGetLastError());
  }

  template <class T>
  bool true_update(bool judge, bool *raise, bool with_departure)
  {
    flush_kernel<<<d_->grid, kThreads, 0, stream_>>>(n_, d_->copy.s, d_->dy, x_);
    MC_TRY(cudaGetLastError());
    dc_.record(true_residual());
    double dev = 0.0;
    if (with_departure && host_.sigma > 0 && sigma_new_ > 0) {
      departure_kernel<T><<<d_->grid, kThreads, 0, stream_>>>(n_, d_->copy.s, d_->r, host_.sigma, rv<T>(), d_->state, d_->partials);
      MC_TRY(cudaGetLastError());
      const McState keep = host_;
      pull();
      global_sum(host_.red, 2);
      dev   = host_.red[1] > 0 ? std::sqrt(host_.red[0] / host_.red[1]) : 0.0;
      host_ = keep;
    }
    return dc_.finish_update(judge && std::is_same<T, float>::value, sigma_new_, dev, raise);
  }

  template <class T>
  void restart_vectors()
  {
    const double  sig  = sigma_new_ > 0 ? sigma_new_ : 1.0;
    const McState keep = host_;
    restart_kernel<T><<<d_->grid, kThreads, 0, stream_>>>(n_, d_->copy.s, d_->r, sig, rv<T>(), pv<T>(), d_->state, d_->partials);
    MC_TRY(cudaGetLastError());
    if (pc_) precondition<T>(0, 0); // z_T, (r_T, z_T) in red[2]
    pull();
    global_sum(host_.red, pc_ ? 3 : 2);
    const double rho_true = host_.red[0], rp = host_.red[1], rz_true = pc_ ? host_.red[2] : host_.red[0];
    host_ = keep;
    double     coef, beta;
    const bool restart = dc_.restart_coefficients(sigma_new_, rho_true, rz_true, rp, &coef, &beta);
    direction_kernel<T><<<d_->grid, kThreads, 0, stream_>>>(n_, T(coef), T(beta), restart ? 1 : 0, pc_ ? zv<T>() : rv<T>(), pv<T>());
    MC_TRY(cudaGetLastError());
    const MixedCgSegment &seg = dc_.seg;
    host_.sigma               = seg.sigma;
    host_.rho                 = seg.rho;
    host_.rz                  = seg.rz;
    host_.rz_prev             = seg.rz_prev;
    host_.pc                  = pc_ ? 1 : 0;
    host_.maxrr               = seg.maxrr;
    host_.tau                 = seg.tau;
    host_.trigger = host_.stop = host_.breakdown = 0;
    host_.its                                    = dc_.res.its;
    seg_start_                                   = dc_.res.its;
    host_.delta                                  = p_.delta;
    host_.end_at                                 = dc_.segment_end(pc_lowp<T>(), seg_start_);
    push();
  }

  // The reduced-precision preconditioner against the FP64 one on r_T = float(s r / sigma') of the
  // true residual (the host twin's pc_departure()): ||z_lp - z|| / ||z|| over the ranks. Uses r32,
  // z32, pc_v and pc_u (restart_vectors() forms them afresh); the host's copy of the state kept.
  double pc_departure()
  {
    const double  sig  = sigma_new_ > 0 ? sigma_new_ : 1.0;
    const McState keep = host_;
    restart_kernel<float><<<d_->grid, kThreads, 0, stream_>>>(n_, d_->copy.s, d_->r, sig, d_->r32, d_->p32, d_->state, d_->partials);
    MC_TRY(cudaGetLastError());
    outside([&] { h_.precondition_lowp(d_->r32, d_->z32); });
    ++dc_.res.pc_applications;
    ++dc_.res.pc_lowp_applications;
    to_pc_kernel<float><<<d_->grid, kThreads, 0, stream_>>>(n_, d_->copy.s, d_->r32, d_->pc_v);
    MC_TRY(cudaGetLastError());
    apply_pc(d_->pc_v, d_->pc_u);
    pc_departure_kernel<<<d_->grid, kThreads, 0, stream_>>>(n_, d_->copy.s, d_->pc_u, d_->z32, d_->state, d_->partials);
    MC_TRY(cudaGetLastError());
    pull();
    global_sum(host_.red, 2);
    const double dep = relative_departure(host_.red[0], host_.red[1]);
    host_            = keep;
    return dep;
  }

  // (a, b) of two FP64 device vectors of the rank's rows, summed over the ranks; the host's copy
  // of the state kept
  double dot64(const double *a, const double *b)
  {
    dot_kernel<<<d_->grid, kThreads, 0, stream_>>>(n_, a, b, d_->state, d_->partials);
    MC_TRY(cudaGetLastError());
    const McState keep = host_;
    pull();
    global_sum(host_.red, 1);
    const double c = host_.red[0];
    host_          = keep;
    return c;
  }

  double exact_curvature()
  {
    lowp_scale_kernel<<<d_->grid, kThreads, 0, stream_>>>(n_, d_->copy.s, d_->p32, d_->v);
    MC_TRY(cudaGetLastError());
    outside([&] { h_.exact_product(d_->v, d_->t); });
    return dot64(d_->v, d_->t);
  }

  // (r, M^-1 r) of the FP64 true residual r (a preconditioner's breakdown is checked with it)
  double true_rz()
  {
    apply_pc(d_->r, d_->pc_u);
    return dot64(d_->r, d_->pc_u);
  }

  // w = A_lp p and (p, w): one pass on one rank; on several ranks the halo started, the
  // diagonal block's pass, the halo ended, the off-diagonal block's pass (MatMult_MPIAIJ's order).
  // One product pass P of copy a (its decode picked by with_decode).
  template <Pass P>
  void product_pass(const LowpArgs &a, const pspmv::cuda::DevicePackSell &copy, const float *x, const float *comp, int defer)
  {
    pspmv::cuda::detail::with_decode(copy.value_format.kind, a.gaps != nullptr,
                                     [&](auto k, auto g) { product_dot_kernel<decltype(k)::value, decltype(g)::value, P><<<d_->product_grid, kThreads, 0, stream_>>>(a, x, d_->p32, comp, d_->w32, d_->state, d_->partials, defer); });
  }

  void product()
  {
    const int  defer = multi_ ? 1 : 0;
    const bool off   = d_->off.rows > 0;
    if (h_.halo_begin) outside([&] { h_.halo_begin(d_->p32, d_->ghost); });
    if (off) product_pass<Pass::Diagonal>(d_->args, d_->copy.op, d_->p32, nullptr, defer);
    else product_pass<Pass::Whole>(d_->args, d_->copy.op, d_->p32, d_->comp, defer);
    MC_TRY(cudaGetLastError());
    if (h_.halo_end) outside([&] { h_.halo_end(d_->p32, d_->ghost); });
    if (off) product_pass<Pass::OffDiagonal>(d_->off_args, d_->off, d_->ghost, d_->comp, defer);
  }

  template <class T>
  void step(long long expected)
  {
    if constexpr (std::is_same<T, float>::value) {
      product();
    } else {
      scale_kernel<<<d_->grid, kThreads, 0, stream_>>>(n_, d_->state, d_->copy.s, d_->p64, d_->v);
      MC_TRY(cudaGetLastError());
      outside([&] { h_.exact_product(d_->v, d_->t); }); // the exact product runs whatever the state: cheap next to a stall
      dot64_kernel<<<d_->grid, kThreads, 0, stream_>>>(n_, d_->copy.s, d_->t, d_->p64, d_->w64, d_->state, d_->partials, multi_ ? 1 : 0);
    }
    MC_TRY(cudaGetLastError());
    constexpr int lowp = std::is_same<T, float>::value ? 1 : 0;
    if (multi_) { // (p, w) over the ranks, then alpha
      global_sum_on_device(1);
      finish_pw_kernel<<<1, 1, 0, stream_>>>(d_->state, lowp);
      MC_TRY(cudaGetLastError());
    }
    update_kernel<T><<<d_->grid, kThreads, 0, stream_>>>(n_, d_->state, d_->partials, rv<T>(), wv<T>(), multi_ || pc_ ? 1 : 0);
    MC_TRY(cudaGetLastError());
    // a preconditioner: z, and rz' = (r', z) ends the step (the hook runs whatever the state: a
    // step after a breakdown leaves nothing to it); several ranks: (r', r'), (r', w) and rz' over
    // the ranks in one sum, then the trigger and beta
    if (pc_) precondition<T>(1, multi_ ? 1 : 0);
    if (multi_) {
      global_sum_on_device(pc_ ? 3 : 2);
      finish_step_kernel<<<1, 1, 0, stream_>>>(d_->state, lowp, pc_ ? 1 : 0);
      MC_TRY(cudaGetLastError());
    }
    xp_kernel<T><<<d_->grid, kThreads, 0, stream_>>>(n_, d_->state, expected, pv<T>(), pc_ ? zv<T>() : rv<T>(), d_->dy);
    MC_TRY(cudaGetLastError());
  }

  template <class T>
  bool phase()
  {
    constexpr bool lowp  = std::is_same<T, float>::value;
    MixedCgResult &res   = dc_.res;
    auto           raise = [this] { return h_.raise_precision && outside([&] { return h_.raise_precision(); }); };
    restart_vectors<T>();
    for (;;) {
      const long long base = res.its;
      // FP64 phase: one step per check (a step past a trigger would still run its exact product);
      // several ranks: one step per check too (a step waits for its reductions anyway, and a
      // step past a trigger would still exchange its halo and reductions); a preconditioner: one
      // step per check (a step past a trigger would still apply it)
      const long long k = lowp && !multi_ && !pc_ ? std::min<long long>(every_, std::max<long long>(p_.max_it - base, 1)) : 1;
      for (long long j = 0; j < k; ++j) step<T>(base + j + 1);
      pull();
      const long long done = host_.its - base;
      res.its              = host_.its;
      if (lowp) res.lowp_its += done;
      dc_.seg.rho     = host_.rho; // the device's end_step() moved these
      dc_.seg.rz      = host_.rz;
      dc_.seg.rz_prev = host_.rz_prev;
      dc_.seg.maxrr   = host_.maxrr;
      PhaseNext next  = PhaseNext::Continue;
      if (host_.breakdown)
        next = dc_.after_breakdown(
          lowp, static_cast<Breakdown>(host_.breakdown), [&](bool judge, bool *r) { return true_update<T>(judge, r, false); }, [&] { return exact_curvature(); }, [&] { return true_rz(); }, raise);
      else if (host_.trigger) {
        auto update = [&](bool judge, bool *r) { return true_update<T>(judge, r, true); };
        if (dc_.stalled(pc_lowp<T>(), seg_start_, res.its))
          next = dc_.after_stall(
            update, [&] { return pc_departure(); }, raise);
        else next = dc_.after_trigger(update, raise);
      } else continue;
      if (next == PhaseNext::End) return true;
      if (next == PhaseNext::Fp64) return false;
      restart_vectors<T>();
    }
  }

  DeviceMixedCg            *d_;
  const double             *b_;
  double                   *x_;
  const MixedCgParams      &p_;
  int                       every_;
  const DeviceMixedCgHooks &h_;
  cudaStream_t              stream_;
  int32_t                   n_;
  McState                   host_{};
  bool                      multi_;         // several ranks: the reductions summed over the ranks through the hooks
  bool                      pc_;            // a preconditioner (h.precondition set)
  long long                 seg_start_ = 0; // the steps at the last true residual (the segment's start)
  // the low-precision phase with a reduced-precision preconditioner (the guard's check of it)
  template <class T>
  bool pc_lowp() const
  {
    return std::is_same<T, float>::value && pc_ && static_cast<bool>(h_.precondition_lowp);
  }
  MixedCgDecisions dc_;
  double           sigma_new_ = 0; // ||s .* r|| of the new true residual
  bool             timing_    = false;
};

} // namespace

cudaError_t create(DeviceScaledCopy *c, DeviceMixedCg **out)
{
  PSPMV_CUDA_TRY(new_solver_on_copy(c, true, out));
  DeviceMixedCg *d = *out;
  *out             = nullptr;
  cudaError_t  err = setup(d);
  const size_t n = size_t(d->rows), parts = 2 * size_t(std::max(d->grid, d->product_grid));
  if (err == cudaSuccess) err = alloc(n, &d->r32);
  if (err == cudaSuccess) err = alloc(n, &d->p32);
  if (err == cudaSuccess) err = alloc(n, &d->w32);
  if (err == cudaSuccess) err = alloc(n, &d->r);
  if (err == cudaSuccess) err = alloc(n, &d->t);
  if (err == cudaSuccess) err = alloc(n, &d->dy);
  if (err == cudaSuccess) err = alloc(n, &d->v);
  if (err == cudaSuccess) err = alloc(parts, &d->partials);
  if (err == cudaSuccess) err = alloc(1, &d->state);
  if (err == cudaSuccess) err = cudaMemset(d->state, 0, sizeof(McState));
  // the pinned copy of a step's partial sums on several ranks: allocated here, where a failure
  // is agreed on over the ranks, not inside a solve that the other ranks would wait in
  if (err == cudaSuccess) err = cudaMallocHost(reinterpret_cast<void **>(&d->pinned), 4 * sizeof(double));
  if (err != cudaSuccess) {
    destroy(d);
    return err;
  }
  *out = d;
  return cudaDeviceSynchronize();
}

cudaError_t replace_copy(DeviceMixedCg *d, DeviceScaledCopy *c)
{
  if (d == nullptr || c == nullptr) return cudaErrorInvalidValue;
  DeviceScaledCopy own = take(c);
  if (own.op.rows != d->rows) {
    (void)release(&own);
    return cudaErrorInvalidValue;
  }
  PSPMV_CUDA_TRY(cudaDeviceSynchronize());
  (void)release(&d->copy);
  d->copy = take(&own);
  {
    cudaError_t first = cudaSuccess;
    pspmv::cuda::detail::free_ptr(&d->comp, &first); // of the old copy
    PSPMV_CUDA_TRY(first);
    PSPMV_CUDA_TRY(pspmv::cuda::release(&d->off)); // at the old format: set_offdiag() again
    pspmv::cuda::detail::free_ptr(&d->ghost, &first);
    d->nghost = 0;
    PSPMV_CUDA_TRY(first);
  }
  const unsigned int parts_before = std::max(d->grid, d->product_grid);
  PSPMV_CUDA_TRY(setup(d));
  if (std::max(d->grid, d->product_grid) > parts_before) {
    cudaError_t first = cudaSuccess;
    pspmv::cuda::detail::free_ptr(&d->partials, &first);
    PSPMV_CUDA_TRY(first);
    PSPMV_CUDA_TRY(alloc(2 * size_t(std::max(d->grid, d->product_grid)), &d->partials));
  }
  return cudaSuccess;
}

const DeviceScaledCopy &copy_of(const DeviceMixedCg *d)
{
  return d->copy;
}

cudaError_t set_offdiag(DeviceMixedCg *d, pspmv::cuda::DevicePackSell *off)
{
  if (d == nullptr || off == nullptr) return cudaErrorInvalidValue;
  pspmv::cuda::DevicePackSell own = *off;
  *off                            = pspmv::cuda::DevicePackSell{};
  LowpArgs a;
  if (own.rows != d->rows || own.cols < 0 || own.value_format != d->copy.op.value_format || !pspmv::cuda::detail::lowp_args(own, &a)) {
    (void)pspmv::cuda::release(&own);
    return cudaErrorInvalidValue;
  }
  cudaError_t err   = cudaDeviceSynchronize(); // a solve may still read the old block
  cudaError_t first = cudaSuccess;
  if (err == cudaSuccess) err = pspmv::cuda::release(&d->off);
  pspmv::cuda::detail::free_ptr(&d->ghost, &first);
  pspmv::cuda::detail::free_ptr(&d->comp, &first); // without this block's row sums
  if (err == cudaSuccess) err = first;
  d->nghost = 0;
  if (err == cudaSuccess) err = alloc(size_t(own.cols), &d->ghost);
  if (err != cudaSuccess) { // no off-diagonal block is left half set
    (void)pspmv::cuda::release(&own);
    (void)pspmv::cuda::release(&d->off);
    return err;
  }
  d->off      = own;
  d->off_args = a;
  d->nghost   = own.cols;
  return cudaSuccess;
}

int32_t ghost_count(const DeviceMixedCg *d)
{
  return d ? d->nghost : 0;
}

cudaError_t compensate(DeviceMixedCg *d, const std::function<void(const double *s, double *As)> &product, cudaStream_t stream)
{
  if (d == nullptr || !product) return cudaErrorInvalidValue;
  if (d->rows == 0) { // the product is collective on several ranks: a rank without rows takes part
    product(nullptr, nullptr);
    return cudaSuccess;
  }
  if (d->comp == nullptr) PSPMV_CUDA_TRY(alloc(size_t(d->rows), &d->comp));
  if (d->scratch == nullptr) PSPMV_CUDA_TRY(alloc(2 * size_t(d->rows), &d->scratch));
  // called inside a solve (a raise): r (the true residual) must survive, so scratch only
  double *as = d->scratch, *lp = d->scratch + d->rows;
  product(d->copy.s, as); // A s (the exact matrix)
  fill_kernel<<<d->grid, kThreads, 0, stream>>>(d->rows, 1.0, d->v);
  PSPMV_CUDA_TRY(cudaGetLastError());
  PSPMV_CUDA_TRY(pspmv::cuda::spmv(d->copy.op, d->v, lp, false, stream)); // the copy's row sums, FP64
  if (d->off.rows > 0 && d->nghost > 0) {                                 // plus the off-diagonal block's, on ones of the ghost columns
    double *ones = nullptr;
    PSPMV_CUDA_TRY(alloc(size_t(d->nghost), &ones));
    fill_kernel<<<d->grid, kThreads, 0, stream>>>(d->nghost, 1.0, ones);
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess) err = pspmv::cuda::spmv(d->off, ones, lp, true, stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
    pspmv::cuda::detail::free_ptr(&ones, &err);
    PSPMV_CUDA_TRY(err);
  }
  comp_kernel<<<d->grid, kThreads, 0, stream>>>(d->rows, d->copy.s, as, lp, d->comp);
  PSPMV_CUDA_TRY(cudaGetLastError());
  return cudaStreamSynchronize(stream);
}

cudaError_t solve(DeviceMixedCg *d, const double *b, double *x, const MixedCgParams &p, int check_every, const DeviceMixedCgHooks &h, cudaStream_t stream, MixedCgResult *res)
{
  if (d == nullptr || res == nullptr || !h.exact_product || check_every < 1) return cudaErrorInvalidValue;
  if (d->rows > 0 && (b == nullptr || x == nullptr)) return cudaErrorInvalidValue;
  if (static_cast<bool>(h.timer_start) != static_cast<bool>(h.timer_stop)) return cudaErrorInvalidValue;
  if (static_cast<bool>(h.allreduce_sum) != static_cast<bool>(h.allreduce_max) || static_cast<bool>(h.halo_begin) != static_cast<bool>(h.halo_end)) return cudaErrorInvalidValue;
  if (d->off.rows > 0 && !h.halo_begin) return cudaErrorInvalidValue; // the ghost entries would never arrive
  Run run(d, b, x, p, check_every, h, stream);
  try {
    *res = run.solve();
    run.timer_stop();
  } catch (const CudaFailure &f) {
    run.timer_stop_quietly();
    return f.err;
  } catch (...) {
    run.timer_stop_quietly(); // the hooks' errors (and std::bad_alloc) go to the caller
    throw;
  }
  return cudaGetLastError();
}

cudaError_t destroy(DeviceMixedCg *d)
{
  if (d == nullptr) return cudaSuccess;
  cudaError_t first = release(&d->copy);
  for (float **q : {&d->r32, &d->p32, &d->w32, &d->z32, &d->comp}) pspmv::cuda::detail::free_ptr(q, &first);
  for (double **q : {&d->r, &d->t, &d->dy, &d->v, &d->r64, &d->p64, &d->w64, &d->pc_v, &d->pc_u, &d->partials, &d->scratch}) pspmv::cuda::detail::free_ptr(q, &first);
  pspmv::cuda::detail::free_ptr(&d->state, &first);
  pspmv::cuda::detail::free_ptr(&d->ghost, &first);
  {
    const cudaError_t e = pspmv::cuda::release(&d->off);
    if (first == cudaSuccess) first = e;
  }
  if (d->pinned) {
    const cudaError_t e = cudaFreeHost(d->pinned);
    if (first == cudaSuccess) first = e;
  }
  delete d;
  return first;
}

} // namespace cuda
} // namespace mixed
} // namespace pspmv
