// F3R inner solver on the device: the steps of f3r.hpp (the host twin, f3r.cpp, is the
// reference), one kernel per vector operation, one-thread kernels for the small problems
// (entry norm, Givens, Richardson weights), FP64 sums reduced in a fixed order.
//
// Device flags (int, kFlag*): a level that stops sets its done flag; every kernel of level L
// returns at once when level 2 is done or (L >= 3) level 3 is done, except the two that must
// still run for a stopped level: its combination x = Z y (level 3: unless level 2 is done,
// level 2: unless r = 0) and the exit. r = 0 sets level 2 done before any step.
#include "f3r_device.hpp"
#include "scaling.hpp"
#include <new>
#include "cuda/device_memory.cuh"
#include "formats/packsell/packsell_device.hpp"
#include "formats/packsell/packsell_device_lowp.hpp"
#include <cuda_fp16.h>
#include <algorithm>
#include <cstdint>
#include <vector>

namespace pspmv
{
namespace mixed
{
namespace cuda
{

namespace
{

constexpr int kThreads   = 256;                  // every kernel's block (block_sum assumes it)
constexpr int kMaxBlocks = 1024;                 // grid of the vector kernels and of the partial sums
constexpr int kMaxM      = kMaxDeviceLevelSteps; // m2, m3 bound (the least-squares solve's shared array)

enum : int {
  kFlagZero   = 0,
  kFlagDone2  = 1,
  kFlagDone3  = 2,
  kFlagNcols2 = 3,
  kFlagNcols3 = 4,
  kNumFlags   = 5
};
enum : int {
  kScSumSq = 0,
  kScSigma = 1,
  kScAd    = 2,
  kScAa    = 3,
  kScScale = 4,
  kNumSc   = 5
};
enum : int {
  kCntInnerIts = 0,
  kCntZero     = 1,
  kCntFallback = 2,
  kNumCnt      = 3
};

__device__ __forceinline__ bool closed(const int *f, int level)
{
  return f[kFlagDone2] != 0 || (level >= 3 && f[kFlagDone3] != 0);
}

// Sum of v over the block (kThreads threads), in a fixed tree order; valid in thread 0.
__device__ double block_sum(double v)
{
  __shared__ double sh[kThreads];
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (int(threadIdx.x) < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  return sh[0];
}

// The nan_max of v over the block (kThreads threads), in a fixed tree order; valid in thread 0.
__device__ double block_max(double v)
{
  __shared__ double sh[kThreads];
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (int(threadIdx.x) < s) sh[threadIdx.x] = nan_max(sh[threadIdx.x], sh[threadIdx.x + s]);
    __syncthreads();
  }
  return sh[0];
}

#define GRID_STRIDE(i, n) for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

// ---- reductions -------------------------------------------------------------------------------

// partial[blockIdx] = the nan_max over the block's indices of |s_i r_i|.
__global__ void entry_max_partial(int64_t n, const double *s, const double *r, double *partial)
{
  double acc            = 0.0;
  GRID_STRIDE(i, n) acc = nan_max(acc, fabs(s[i] * r[i]));
  const double m        = block_max(acc);
  if (threadIdx.x == 0) partial[blockIdx.x] = m;
}

// sc[kScScale] = norm_scale(the nan_max of partial[0 .. nb)) (one block).
__global__ void entry_scale_factor(const double *partial, int nb, double *sc)
{
  double acc = 0.0;
  for (int b = int(threadIdx.x); b < nb; b += kThreads) acc = nan_max(acc, partial[b]);
  const double m = block_max(acc);
  if (threadIdx.x == 0) sc[kScScale] = norm_scale(m);
}

// partial[blockIdx] = sum over the block's indices of ((s_i r_i) scale)^2.
__global__ void entry_partial(int64_t n, const double *s, const double *r, const double *sc, double *partial)
{
  const double scale = sc[kScScale];
  double       acc   = 0.0;
  GRID_STRIDE(i, n)
  {
    const double t = (s[i] * r[i]) * scale;
    acc += t * t;
  }
  const double sum = block_sum(acc);
  if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

// partial[k*nb + blockIdx] = (w, V_k) for k < nv (V_k = V + k*n), FP64 sums.
__global__ void dots_partial(const int *f, int level, int64_t n, const float *w, const float *V, int nv, double *partial, int nb)
{
  if (closed(f, level)) return;
  for (int k = 0; k < nv; ++k) {
    const float *Vk  = V + int64_t(k) * n;
    double       acc = 0.0;
    GRID_STRIDE(i, n) acc += double(w[i]) * double(Vk[i]);
    const double sum = block_sum(acc);
    if (threadIdx.x == 0) partial[int64_t(k) * nb + blockIdx.x] = sum;
    __syncthreads(); // block_sum's shared array is reused by the next k
  }
}

// partial[0*nb + b] = (t, d), partial[1*nb + b] = (t, t), FP16 vectors, FP64 sums.
__global__ void dots16_partial(const int *f, int64_t n, const __half *t, const __half *d, double *partial, int nb)
{
  if (closed(f, 4)) return;
  double ad = 0.0, aa = 0.0;
  GRID_STRIDE(i, n)
  {
    const double ti = double(__half2float(t[i]));
    ad += ti * double(__half2float(d[i]));
    aa += ti * ti;
  }
  const double s1 = block_sum(ad);
  if (threadIdx.x == 0) partial[blockIdx.x] = s1;
  __syncthreads();
  const double s2 = block_sum(aa);
  if (threadIdx.x == 0) partial[nb + blockIdx.x] = s2;
}

// out[k] = sum_b partial[k*nb + b] (grid: one block per k), fixed order. level 0: never gated.
__global__ void reduce_partials(const int *f, int level, const double *partial, int nb, double *out)
{
  if (level > 0 && closed(f, level)) return;
  const double *p   = partial + int64_t(blockIdx.x) * nb;
  double        acc = 0.0;
  for (int b = int(threadIdx.x); b < nb; b += kThreads) acc += p[b];
  const double sum = block_sum(acc);
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

// ---- entry and exit ---------------------------------------------------------------------------

// sigma = ||s .* r|| (entry_norm of scaling.hpp); r = 0 stops everything; level 2's state
// reset (g = e_1, no columns).
__global__ void entry_finalize(int *f, double *sc, double *g2, int m2)
{
  const double sigma = sqrt(sc[kScSumSq]) / sc[kScScale];
  sc[kScSigma]       = sigma;
  const int zero     = sigma == 0.0 ? 1 : 0;
  f[kFlagZero]       = zero;
  f[kFlagDone2]      = zero;
  f[kFlagDone3]      = 0;
  f[kFlagNcols2]     = 0;
  f[kFlagNcols3]     = 0;
  for (int k = 0; k <= m2; ++k) g2[k] = k == 0 ? 1.0 : 0.0;
}

// b = float((s .* r) / sigma): V2_0.
__global__ void entry_scale(const int *f, int64_t n, const double *s, const double *r, const double *sc, float *b)
{
  if (f[kFlagZero]) return;
  const double sigma     = sc[kScSigma];
  GRID_STRIDE(i, n) b[i] = float((s[i] * r[i]) / sigma);
}

// z = 0 (r = 0), s .* (s .* r) (no level-2 column), or sigma * (s .* x); counts the first two.
__global__ void exit_kernel(const int *f, int64_t n, const double *s, const double *r, const double *sc, const float *x, double *z, unsigned long long *cnt)
{
  const int    zero = f[kFlagZero], fallback = !zero && f[kFlagNcols2] == 0;
  const double sigma = sc[kScSigma];
  GRID_STRIDE(i, n)
  {
    if (zero) z[i] = 0.0;
    else if (fallback) z[i] = s[i] * (s[i] * r[i]);
    else z[i] = sigma * (s[i] * double(x[i]));
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    cnt[kCntZero] += zero;
    cnt[kCntFallback] += fallback;
  }
}

// ---- FGMRES (levels 2 and 3) ------------------------------------------------------------------

// Level 3's start for input v: V3_0 = v; its state reset (not done, no columns, g = e_1).
__global__ void level3_start(int *f, int64_t n, const float *v, float *V0, double *g3, int m3)
{
  if (f[kFlagDone2]) return;
  GRID_STRIDE(i, n) V0[i] = v[i];
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    f[kFlagDone3]  = 0;
    f[kFlagNcols3] = 0;
    for (int k = 0; k <= m3; ++k) g3[k] = k == 0 ? 1.0 : 0.0;
  }
}

// w -= sum_{k<=j} float(col[k]) V_k (FP32, k ascending).
__global__ void cgs_update(const int *f, int level, int64_t n, float *w, const float *V, const double *col, int j)
{
  if (closed(f, level)) return;
  GRID_STRIDE(i, n)
  {
    float acc = float(col[0]) * V[i];
    for (int k = 1; k <= j; ++k) acc += float(col[k]) * V[int64_t(k) * n + i];
    w[i] -= acc;
  }
}

// Column j of H (rows 0..j: the dots, row j+1: ||w||^2, replaced by ||w||): the earlier rotations, a new one, g
// rotated; stop rules of f3r.hpp; inv = float(1 / h_j+1,j) for V_j+1. One thread.
__global__ void givens(int *f, int level, int m, int j, double *H, double *cs, double *sn, double *g, float *inv)
{
  if (closed(f, level)) return;
  double      *col = H + int64_t(m + 1) * j;
  const double hn  = sqrt(col[j + 1]); // reduce_partials left ||w||^2 there
  col[j + 1]       = hn;
  for (int k = 0; k < j; ++k) {
    const double a = col[k];
    col[k]         = cs[k] * a + sn[k] * col[k + 1];
    col[k + 1]     = -sn[k] * a + cs[k] * col[k + 1];
  }
  const double den    = sqrt(col[j] * col[j] + col[j + 1] * col[j + 1]);
  bool         finite = isfinite(den);
  for (int k = 0; k <= j + 1; ++k) finite = finite && isfinite(col[k]);
  const int done_flag = level == 2 ? kFlagDone2 : kFlagDone3, ncols_flag = level == 2 ? kFlagNcols2 : kFlagNcols3;
  if (!finite || !(den > 0.0)) {
    f[done_flag] = 1;
    return;
  }
  cs[j]         = col[j] / den;
  sn[j]         = col[j + 1] / den;
  col[j]        = den;
  col[j + 1]    = 0.0;
  g[j + 1]      = -sn[j] * g[j];
  g[j]          = cs[j] * g[j];
  f[ncols_flag] = j + 1;
  if (hn == 0.0) f[done_flag] = 1;
  else *inv = float(1.0 / hn);
}

// V_j+1 = w * inv.
__global__ void scale_v(const int *f, int level, int64_t n, const float *w, float *Vn, const float *inv)
{
  if (closed(f, level)) return;
  const float s           = *inv;
  GRID_STRIDE(i, n) Vn[i] = w[i] * s;
}

// x = sum_{k<ncols} float(y_k) Z_k, y = R^-1 g solved by thread 0 of every block (the same
// FP64 operations in every block). Skipped when the level above is done (level 3) or r = 0.
__global__ void combine(const int *f, int level, int64_t n, int m, const double *H, const double *g, const float *Z, float *x)
{
  if (level == 3 ? f[kFlagDone2] != 0 : f[kFlagZero] != 0) return;
  __shared__ float y[kMaxM];
  const int        ncols = f[level == 2 ? kFlagNcols2 : kFlagNcols3];
  if (threadIdx.x == 0) {
    double yd[kMaxM];
    for (int i = ncols - 1; i >= 0; --i) {
      double s = g[i];
      for (int k = i + 1; k < ncols; ++k) s -= H[int64_t(m + 1) * k + i] * yd[k];
      yd[i] = s / H[int64_t(m + 1) * i + i];
    }
    for (int i = 0; i < ncols; ++i) y[i] = float(yd[i]);
  }
  __syncthreads();
  GRID_STRIDE(i, n)
  {
    float acc = 0.0f;
    if (ncols > 0) acc = y[0] * Z[i];
    for (int k = 1; k < ncols; ++k) acc += y[k] * Z[int64_t(k) * n + i];
    x[i] = acc;
  }
}

// ---- Richardson (level 4) ---------------------------------------------------------------------

__device__ __forceinline__ void count_steps(unsigned long long *cnt, int steps)
{
  if (steps > 0 && blockIdx.x == 0 && threadIdx.x == 0) cnt[kCntInnerIts] += (unsigned long long)steps;
}

// h = fp16(v).
__global__ void rich_load(const int *f, int64_t n, const float *v, __half *h)
{
  if (closed(f, 4)) return;
  GRID_STRIDE(i, n) h[i] = __float2half_rn(v[i]);
}

// Non-period step 0: h = fp16(v), x = fp16(w * h); out = float(x) when given (m4 = 1).
__global__ void rich_first(const int *f, int64_t n, const float *v, __half *h, __half *x, const float *w, float *out, unsigned long long *cnt, int steps)
{
  if (closed(f, 4)) return;
  const float wk = *w;
  GRID_STRIDE(i, n)
  {
    const __half hi = __float2half_rn(v[i]);
    h[i]            = hi;
    const __half xi = __float2half_rn(wk * __half2float(hi));
    x[i]            = xi;
    if (out) out[i] = __half2float(xi);
  }
  count_steps(cnt, steps);
}

// Non-period step k >= 1: d = fp16(h - t) (t = fp16(A x)), x = fp16(x + w d); out as above.
__global__ void rich_step(const int *f, int64_t n, const __half *h, const __half *t, __half *x, const float *w, float *out, unsigned long long *cnt, int steps)
{
  if (closed(f, 4)) return;
  const float wk = *w;
  GRID_STRIDE(i, n)
  {
    const float  d  = __half2float(__float2half_rn(__half2float(h[i]) - __half2float(t[i])));
    const __half xi = __float2half_rn(__half2float(x[i]) + wk * d);
    x[i]            = xi;
    if (out) out[i] = __half2float(xi);
  }
  count_steps(cnt, steps);
}

// Period step k >= 1, first half: d = fp16(h - t).
__global__ void rich_resid(const int *f, int64_t n, const __half *h, const __half *t, __half *d)
{
  if (closed(f, 4)) return;
  GRID_STRIDE(i, n) d[i] = __float2half_rn(__half2float(h[i]) - __half2float(t[i]));
}

// Period step: x = fp16((first ? 0 : x) + w d); out as above.
__global__ void rich_update(const int *f, int64_t n, const __half *d, __half *x, const float *w, int first, float *out, unsigned long long *cnt, int steps)
{
  if (closed(f, 4)) return;
  const float wk = *w;
  GRID_STRIDE(i, n)
  {
    const float  xo = first ? 0.0f : __half2float(x[i]);
    const __half xi = __float2half_rn(xo + wk * __half2float(d[i]));
    x[i]            = xi;
    if (out) out[i] = __half2float(xi);
  }
  count_steps(cnt, steps);
}

// Period step k's weight: the minimal-residual sample (A d, d) / (A d, A d), or weight[k] when
// that is not finite or (A d, A d) == 0. One thread.
__global__ void rich_weight(const int *f, int k, const double *sc, const float *weight, double *wsample, float *wcur)
{
  if (closed(f, 4)) return;
  double       w  = double(weight[k]);
  const double aa = sc[kScAa], sample = sc[kScAd] / aa;
  if (aa > 0.0 && isfinite(sample)) w = sample;
  wsample[k] = w;
  wcur[k]    = float(w);
}

// End of a period call: the running means (F3R: sum and ome start at 1, den = samples + 1).
__global__ void rich_mean(const int *f, int m4, double *wsum, float *weight, const double *wsample, long long *samples)
{
  if (closed(f, 4)) return;
  const long long s = ++*samples;
  for (int k = 0; k < m4; ++k) {
    wsum[k] += wsample[k];
    weight[k] = float(wsum[k] / double(s + 1));
  }
}

// ---- host side --------------------------------------------------------------------------------

template <class T>
cudaError_t alloc_zero(T **p, size_t n)
{
  *p = nullptr;
  if (n == 0) return cudaSuccess;
  PSPMV_CUDA_TRY(cudaMalloc(reinterpret_cast<void **>(p), n * sizeof(T)));
  return cudaMemset(*p, 0, n * sizeof(T));
}

} // namespace

struct DeviceF3R {
  F3RParams        p;
  int64_t          n  = 0;
  int              nb = 1; // blocks of the vector kernels and partial sums
  DeviceScaledCopy copy;   // A_hat (copy.op) and s (copy.s), owned
  // level 2 and 3: V (m+1 vectors), Z (m), w; H ((m+1) x m, column-major), cs, sn (m), g (m+1)
  float              *V2 = nullptr, *Z2 = nullptr, *w2 = nullptr, *V3 = nullptr, *Z3 = nullptr, *w3 = nullptr, *xhat = nullptr;
  double             *H2 = nullptr, *cs2 = nullptr, *sn2 = nullptr, *g2 = nullptr;
  double             *H3 = nullptr, *cs3 = nullptr, *sn3 = nullptr, *g3 = nullptr;
  __half             *h16 = nullptr, *x16 = nullptr, *d16 = nullptr, *t16 = nullptr;
  double             *partial = nullptr;                  // (max(m2, m3) + 1) * nb
  int                *flags   = nullptr;                  // kNumFlags
  double             *sc      = nullptr;                  // kNumSc
  float              *inv     = nullptr;                  // 2: levels 2 and 3
  double             *wsum = nullptr, *wsample = nullptr; // m4
  float              *weight = nullptr, *wcur = nullptr;  // m4
  long long          *samples  = nullptr;
  unsigned long long *counters = nullptr; // kNumCnt
  int64_t             calls = 0, applications = 0, host_zero = 0;
};

namespace
{

cudaError_t reset_weights(DeviceF3R *d)
{
  const std::vector<double> ones(size_t(d->p.m4), 1.0);
  const std::vector<float>  onesf(size_t(d->p.m4), 1.0f);
  PSPMV_CUDA_TRY(cudaMemcpy(d->wsum, ones.data(), ones.size() * sizeof(double), cudaMemcpyHostToDevice));
  PSPMV_CUDA_TRY(cudaMemcpy(d->weight, onesf.data(), onesf.size() * sizeof(float), cudaMemcpyHostToDevice));
  PSPMV_CUDA_TRY(cudaMemset(d->samples, 0, sizeof(long long)));
  d->calls = 0;
  // cudaMemset and pageable cudaMemcpy are asynchronous on the legacy stream, which the caller's
  // (non-blocking) stream does not wait for: setup is finished before create/update return.
  return cudaDeviceSynchronize();
}

struct Level {
  int     level, m;
  float  *V, *Z, *w, *inv;
  double *H, *cs, *sn, *g;
};

// One Arnoldi step j of level L after Z_j has been written.
cudaError_t arnoldi_step(DeviceF3R *d, const Level &L, int j, cudaStream_t st)
{
  const int64_t n   = d->n;
  const int     nb  = d->nb;
  double       *col = L.H + int64_t(L.m + 1) * j;
  PSPMV_CUDA_TRY(::pspmv::cuda::spmv_f32(d->copy.op, L.Z + int64_t(j) * n, L.w, st));
  dots_partial<<<nb, kThreads, 0, st>>>(d->flags, L.level, n, L.w, L.V, j + 1, d->partial, nb);
  reduce_partials<<<j + 1, kThreads, 0, st>>>(d->flags, L.level, d->partial, nb, col);
  cgs_update<<<nb, kThreads, 0, st>>>(d->flags, L.level, n, L.w, L.V, col, j);
  dots_partial<<<nb, kThreads, 0, st>>>(d->flags, L.level, n, L.w, L.w, 1, d->partial, nb);
  reduce_partials<<<1, kThreads, 0, st>>>(d->flags, L.level, d->partial, nb, col + j + 1);
  givens<<<1, 1, 0, st>>>(d->flags, L.level, L.m, j, L.H, L.cs, L.sn, L.g, L.inv);
  scale_v<<<nb, kThreads, 0, st>>>(d->flags, L.level, n, L.w, L.V + int64_t(j + 1) * n, L.inv);
  return cudaGetLastError();
}

// One Richardson call (level 4) on v, out = its result; period as the host decided.
cudaError_t richardson(DeviceF3R *d, const float *v, float *out, bool period, cudaStream_t st)
{
  const int64_t       n  = d->n;
  const int           nb = d->nb, m4 = d->p.m4;
  unsigned long long *cnt = d->counters;
  if (!period) {
    rich_first<<<nb, kThreads, 0, st>>>(d->flags, n, v, d->h16, d->x16, d->weight, m4 == 1 ? out : nullptr, cnt, m4 == 1 ? m4 : 0);
    for (int k = 1; k < m4; ++k) {
      const bool last = k == m4 - 1;
      PSPMV_CUDA_TRY(::pspmv::cuda::spmv_f16(d->copy.op, d->x16, d->t16, st));
      rich_step<<<nb, kThreads, 0, st>>>(d->flags, n, d->h16, d->t16, d->x16, d->weight + k, last ? out : nullptr, cnt, last ? m4 : 0);
    }
    return cudaGetLastError();
  }
  rich_load<<<nb, kThreads, 0, st>>>(d->flags, n, v, d->h16);
  for (int k = 0; k < m4; ++k) {
    const bool    last = k == m4 - 1;
    const __half *dk   = d->h16;
    if (k > 0) {
      PSPMV_CUDA_TRY(::pspmv::cuda::spmv_f16(d->copy.op, d->x16, d->t16, st));
      rich_resid<<<nb, kThreads, 0, st>>>(d->flags, n, d->h16, d->t16, d->d16);
      dk = d->d16;
    }
    PSPMV_CUDA_TRY(::pspmv::cuda::spmv_f16(d->copy.op, dk, d->t16, st));
    dots16_partial<<<nb, kThreads, 0, st>>>(d->flags, n, d->t16, dk, d->partial, nb);
    reduce_partials<<<2, kThreads, 0, st>>>(d->flags, 4, d->partial, nb, d->sc + kScAd);
    rich_weight<<<1, 1, 0, st>>>(d->flags, k, d->sc, d->weight, d->wsample, d->wcur);
    rich_update<<<nb, kThreads, 0, st>>>(d->flags, n, dk, d->x16, d->wcur + k, k == 0 ? 1 : 0, last ? out : nullptr, cnt, last ? m4 : 0);
  }
  rich_mean<<<1, 1, 0, st>>>(d->flags, m4, d->wsum, d->weight, d->wsample, d->samples);
  return cudaGetLastError();
}

} // namespace

cudaError_t create(DeviceScaledCopy *c, const F3RParams &p, DeviceF3R **out)
{
  const bool valid = p.m2 >= 1 && p.m3 >= 1 && p.m4 >= 1 && p.weight_period >= 1 && p.m2 <= kMaxM && p.m3 <= kMaxM;
  PSPMV_CUDA_TRY(new_solver_on_copy(c, valid, out));
  DeviceF3R    *d    = *out;
  const int32_t rows = d->copy.op.rows;
  d->p               = p;
  d->n               = rows;
  d->nb              = int(std::max<int64_t>(1, std::min<int64_t>(kMaxBlocks, (d->n + kThreads - 1) / kThreads)));
  const size_t n = size_t(d->n), m2 = size_t(p.m2), m3 = size_t(p.m3), m4 = size_t(p.m4);
  cudaError_t  e = [&]() -> cudaError_t {
    PSPMV_CUDA_TRY(alloc_zero(&d->V2, (m2 + 1) * n));
    PSPMV_CUDA_TRY(alloc_zero(&d->Z2, m2 * n));
    PSPMV_CUDA_TRY(alloc_zero(&d->w2, n));
    PSPMV_CUDA_TRY(alloc_zero(&d->V3, (m3 + 1) * n));
    PSPMV_CUDA_TRY(alloc_zero(&d->Z3, m3 * n));
    PSPMV_CUDA_TRY(alloc_zero(&d->w3, n));
    PSPMV_CUDA_TRY(alloc_zero(&d->xhat, n));
    PSPMV_CUDA_TRY(alloc_zero(&d->H2, (m2 + 1) * m2));
    PSPMV_CUDA_TRY(alloc_zero(&d->cs2, m2));
    PSPMV_CUDA_TRY(alloc_zero(&d->sn2, m2));
    PSPMV_CUDA_TRY(alloc_zero(&d->g2, m2 + 1));
    PSPMV_CUDA_TRY(alloc_zero(&d->H3, (m3 + 1) * m3));
    PSPMV_CUDA_TRY(alloc_zero(&d->cs3, m3));
    PSPMV_CUDA_TRY(alloc_zero(&d->sn3, m3));
    PSPMV_CUDA_TRY(alloc_zero(&d->g3, m3 + 1));
    PSPMV_CUDA_TRY(alloc_zero(&d->h16, n));
    PSPMV_CUDA_TRY(alloc_zero(&d->x16, n));
    PSPMV_CUDA_TRY(alloc_zero(&d->d16, n));
    PSPMV_CUDA_TRY(alloc_zero(&d->t16, n));
    PSPMV_CUDA_TRY(alloc_zero(&d->partial, (std::max(m2, m3) + 1) * size_t(d->nb)));
    PSPMV_CUDA_TRY(alloc_zero(&d->flags, size_t(kNumFlags)));
    PSPMV_CUDA_TRY(alloc_zero(&d->sc, size_t(kNumSc)));
    PSPMV_CUDA_TRY(alloc_zero(&d->inv, size_t(2)));
    PSPMV_CUDA_TRY(alloc_zero(&d->wsum, m4));
    PSPMV_CUDA_TRY(alloc_zero(&d->wsample, m4));
    PSPMV_CUDA_TRY(alloc_zero(&d->weight, m4));
    PSPMV_CUDA_TRY(alloc_zero(&d->wcur, m4));
    PSPMV_CUDA_TRY(alloc_zero(&d->samples, size_t(1)));
    PSPMV_CUDA_TRY(alloc_zero(&d->counters, size_t(kNumCnt)));
    return reset_weights(d);
  }();
  if (e != cudaSuccess) {
    destroy(d);
    *out = nullptr;
  }
  return e;
}

cudaError_t create(const ScaledCopy &c, const F3RParams &p, DeviceF3R **out)
{
  if (out == nullptr) return cudaErrorInvalidValue;
  *out = nullptr;
  DeviceScaledCopy dc;
  PSPMV_CUDA_TRY(upload(c, &dc));
  return create(&dc, p, out);
}

cudaError_t update_values(const ::pspmv::cuda::DeviceCsr &A, cudaStream_t stream, DeviceF3R *d, bool *pattern_changed)
{
  if (d == nullptr || pattern_changed == nullptr) return cudaErrorInvalidValue;
  PSPMV_CUDA_TRY(cudaDeviceSynchronize()); // applications in flight on any stream read the copy
  PSPMV_CUDA_TRY(update_scaled_copy_on_device(A, stream, &d->copy, pattern_changed));
  if (*pattern_changed) return cudaSuccess;
  return reset_weights(d);
}

const DeviceScaledCopy &copy_of(const DeviceF3R *d)
{
  return d->copy;
}

cudaError_t apply(DeviceF3R *d, const double *r, double *z, cudaStream_t st)
{
  const F3RParams &p  = d->p;
  const int64_t    n  = d->n;
  const int        nb = d->nb;
  ++d->applications;
  const int64_t q0 = d->calls;
  d->calls += int64_t(p.m2) * p.m3;
  if (n == 0) { // sigma = 0 without a launch (a grid of 0 blocks is invalid)
    ++d->host_zero;
    return cudaSuccess;
  }
  entry_max_partial<<<nb, kThreads, 0, st>>>(n, d->copy.s, r, d->partial);
  entry_scale_factor<<<1, kThreads, 0, st>>>(d->partial, nb, d->sc);
  entry_partial<<<nb, kThreads, 0, st>>>(n, d->copy.s, r, d->sc, d->partial);
  reduce_partials<<<1, kThreads, 0, st>>>(d->flags, 0, d->partial, nb, d->sc + kScSumSq);
  entry_finalize<<<1, 1, 0, st>>>(d->flags, d->sc, d->g2, p.m2);
  entry_scale<<<nb, kThreads, 0, st>>>(d->flags, n, d->copy.s, r, d->sc, d->V2);
  PSPMV_CUDA_TRY(cudaGetLastError());
  const Level L2{2, p.m2, d->V2, d->Z2, d->w2, d->inv, d->H2, d->cs2, d->sn2, d->g2};
  const Level L3{3, p.m3, d->V3, d->Z3, d->w3, d->inv + 1, d->H3, d->cs3, d->sn3, d->g3};
  for (int j2 = 0; j2 < p.m2; ++j2) {
    level3_start<<<nb, kThreads, 0, st>>>(d->flags, n, d->V2 + int64_t(j2) * n, d->V3, d->g3, p.m3);
    for (int j3 = 0; j3 < p.m3; ++j3) {
      const int64_t q      = q0 + int64_t(j2) * p.m3 + j3;
      const bool    period = (q + 1) % p.weight_period == 0;
      PSPMV_CUDA_TRY(richardson(d, d->V3 + int64_t(j3) * n, d->Z3 + int64_t(j3) * n, period, st));
      PSPMV_CUDA_TRY(arnoldi_step(d, L3, j3, st));
    }
    combine<<<nb, kThreads, 0, st>>>(d->flags, 3, n, p.m3, d->H3, d->g3, d->Z3, d->Z2 + int64_t(j2) * n);
    PSPMV_CUDA_TRY(arnoldi_step(d, L2, j2, st));
  }
  combine<<<nb, kThreads, 0, st>>>(d->flags, 2, n, p.m2, d->H2, d->g2, d->Z2, d->xhat);
  exit_kernel<<<nb, kThreads, 0, st>>>(d->flags, n, d->copy.s, r, d->sc, d->xhat, z, d->counters);
  return cudaGetLastError();
}

cudaError_t read_stats(DeviceF3R *d, InnerStats *stats, cudaStream_t st)
{
  unsigned long long c[kNumCnt] = {0, 0, 0};
  PSPMV_CUDA_TRY(cudaMemcpyAsync(c, d->counters, sizeof(c), cudaMemcpyDeviceToHost, st));
  PSPMV_CUDA_TRY(cudaStreamSynchronize(st));
  PSPMV_CUDA_TRY(cudaMemsetAsync(d->counters, 0, sizeof(c), st));
  stats->applications += d->applications;
  stats->inner_its += int64_t(c[kCntInnerIts]);
  stats->zero_rhs += int64_t(c[kCntZero]) + d->host_zero;
  stats->jacobi_fallbacks += int64_t(c[kCntFallback]);
  d->applications = 0;
  d->host_zero    = 0;
  return cudaStreamSynchronize(st);
}

cudaError_t read_state(DeviceF3R *d, F3RState *out, cudaStream_t st)
{
  const size_t m4 = size_t(d->p.m4);
  out->weight_sum.assign(m4, 0.0);
  out->weight.assign(m4, 0.0f);
  long long samples = 0;
  PSPMV_CUDA_TRY(cudaMemcpyAsync(out->weight_sum.data(), d->wsum, m4 * sizeof(double), cudaMemcpyDeviceToHost, st));
  PSPMV_CUDA_TRY(cudaMemcpyAsync(out->weight.data(), d->weight, m4 * sizeof(float), cudaMemcpyDeviceToHost, st));
  PSPMV_CUDA_TRY(cudaMemcpyAsync(&samples, d->samples, sizeof(samples), cudaMemcpyDeviceToHost, st));
  PSPMV_CUDA_TRY(cudaStreamSynchronize(st));
  out->samples = samples;
  out->calls   = d->calls;
  return cudaSuccess;
}

cudaError_t destroy(DeviceF3R *d)
{
  if (d == nullptr) return cudaSuccess;
  cudaError_t first = release(&d->copy);
  using ::pspmv::cuda::detail::free_ptr;
  free_ptr(&d->V2, &first);
  free_ptr(&d->Z2, &first);
  free_ptr(&d->w2, &first);
  free_ptr(&d->V3, &first);
  free_ptr(&d->Z3, &first);
  free_ptr(&d->w3, &first);
  free_ptr(&d->xhat, &first);
  free_ptr(&d->H2, &first);
  free_ptr(&d->cs2, &first);
  free_ptr(&d->sn2, &first);
  free_ptr(&d->g2, &first);
  free_ptr(&d->H3, &first);
  free_ptr(&d->cs3, &first);
  free_ptr(&d->sn3, &first);
  free_ptr(&d->g3, &first);
  free_ptr(&d->h16, &first);
  free_ptr(&d->x16, &first);
  free_ptr(&d->d16, &first);
  free_ptr(&d->t16, &first);
  free_ptr(&d->partial, &first);
  free_ptr(&d->flags, &first);
  free_ptr(&d->sc, &first);
  free_ptr(&d->inv, &first);
  free_ptr(&d->wsum, &first);
  free_ptr(&d->wsample, &first);
  free_ptr(&d->weight, &first);
  free_ptr(&d->wcur, &first);
  free_ptr(&d->samples, &first);
  free_ptr(&d->counters, &first);
  delete d;
  return first;
}

} // namespace cuda
} // namespace mixed
} // namespace pspmv
