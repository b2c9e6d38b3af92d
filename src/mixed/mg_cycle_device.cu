// The FP32 multigrid V-cycle on the device (mg_cycle_device.hpp): the host twin's steps
// (mg_cycle.cpp) as kernels.
#include "cuda/device_build.cuh"
#include "device_checks.cuh"
#include "device_solver_kernels.cuh"
#include "formats/packsell/packsell_device_build.hpp"
#include "mg_cycle_device.hpp"
#include "scaled_copy_device.hpp"
#include "scaling.hpp"
#include <cub/device/device_radix_sort.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <algorithm>
#include <climits>
#include <cmath>

namespace pspmv
{
namespace mixed
{
namespace cuda
{

namespace
{

namespace pd = pspmv::cuda::detail;
namespace md = pspmv::mixed::detail;
using pd::kLowpThreads;
using pspmv::cuda::DeviceCsr;
using pspmv::cuda::DevicePackSell;

struct Level {
  int64_t          rows = 0, nnz = 0, p_nnz = 0;
  bool             lowp = false; // above the coarse level: copied, run in FP32
  double           emax = 0;
  double          *s    = nullptr; // the coarse level's D^-1/2 (lowp levels: A.s)
  double          *B    = nullptr; // the coarse level's S^-1 A^-1 S^-1 (rows x rows) when its inverse was given
  DeviceScaledCopy A;              // A_hat (lowp)
  DevicePackSell   P, R;           // P_hat and P_hat^T (lowp)
  FormatStats      p_stats, r_stats;
  LowpArgs         a_args, p_args, r_args;
  md::Chebyshev    cheb;
  // work vectors (rows floats): right-hand side, solution, two Chebyshev iterates, residual
  float *b = nullptr, *x = nullptr, *y1 = nullptr, *y2 = nullptr, *t = nullptr;
};

} // namespace

struct DeviceMgCycle {
  MgCycleOptions     opt;
  int                coarse = 0;
  std::vector<Level> levels;
  double            *cb = nullptr, *cx = nullptr; // the coarse solve's b and x
  // the Lanczos estimate's sums (and the null space's): grid_reduce's partials and counter, the result
  double       *partials = nullptr, *sum = nullptr;
  unsigned int *counter = nullptr;
  unsigned int  grid    = 1;
  // set_null_space()'s projection: null_k vectors' w and q (null_k x the finest rows), their c
  int     null_k = 0;
  double *null_w = nullptr, *null_q = nullptr, *null_c = nullptr;
};

namespace
{

// ---- the products, each fused with what the host twin does with its result ----

// out[r] = v
struct Store {
  float          *y;
  __device__ void operator()(int32_t r, float v) const { y[r] = v; }
};
// t = b - A x
struct Residual {
  const float    *b;
  float          *t;
  __device__ void operator()(int32_t r, float v) const { t[r] = b[r] - v; }
};
// x = x + P x_c
struct AddTo {
  float          *x;
  __device__ void operator()(int32_t r, float v) const { x[r] = x[r] + v; }
};
// Chebyshev's first step from y_0 = x: y_1 = fma(scale, b - A x, x)
struct ChebFirst {
  const float    *b, *x;
  float          *y;
  float           scale;
  __device__ void operator()(int32_t r, float v) const { y[r] = fmaf(scale, b[r] - v, x[r]); }
};
// Chebyshev's step k: y_{k+1} = fma(ca, y_{k-1}, fma(cb, y_k, cc (b - A y_k))); ym1 null: y_{k-1}
// = 0 (a smoothing from zero). out may be ym1 (each thread reads its row before writing it).
struct ChebStep {
  const float    *b, *ym1, *yk;
  float          *out;
  float           ca, cb, cc;
  __device__ void operator()(int32_t r, float v) const { out[r] = fmaf(ca, ym1 ? ym1[r] : 0.0f, fmaf(cb, yk[r], cc * (b[r] - v))); }
};

template <ValueKind K, bool Gapped, class Epilogue>
__global__ void __launch_bounds__(kLowpThreads) product_kernel(LowpArgs a, const float *__restrict__ x, Epilogue epi)
{
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kLowpThreads + threadIdx.x;
  if (t - (threadIdx.x & 31u) >= a.rows) return; // whole warps only: a long tail takes the warp
  int32_t     r;
  const float v = pd::lowp_row<K, Gapped>(a, x, t, t < a.rows, &r);
  if (t < a.rows) epi(r, v);
}

// epi(r, (A x)_r) for every row r of the copy whose arguments are a (its value kind k).
template <class Epilogue>
cudaError_t product(const LowpArgs &a, ValueKind k, const float *x, Epilogue epi, cudaStream_t st)
{
  if (a.rows <= 0) return cudaSuccess;
  const unsigned int blocks = pd::blocks_for(a.rows, kLowpThreads);
  pd::with_decode(k, a.gaps != nullptr, [&](auto kind, auto gapped) { product_kernel<decltype(kind)::value, decltype(gapped)::value><<<blocks, kLowpThreads, 0, st>>>(a, x, epi); });
  return cudaGetLastError();
}

// ---- vector kernels ----

__global__ void scale_kernel(int64_t n, float scale, const float *__restrict__ b, float *__restrict__ y)
{
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = scale * b[i];
}

// The coarse solve's b = double(b_hat) / s and x_hat = float(x / s).
__global__ void to_coarse_kernel(int64_t n, const float *__restrict__ b, const double *__restrict__ s, double *__restrict__ cb)
{
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) cb[i] = static_cast<double>(b[i]) / s[i];
}
__global__ void from_coarse_kernel(int64_t n, const double *__restrict__ cx, const double *__restrict__ s, float *__restrict__ x)
{
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] = static_cast<float>(cx[i] / s[i]);
}

// The coarse solve by the level's scaled inverse (B symmetric): x_i = float(sum_j B_ji b_j), the
// host twin's fma's in j order; column i read by thread i, coalesced across threads.
__global__ void dense_coarse_kernel(int64_t n, const double *__restrict__ B, const float *__restrict__ b, float *__restrict__ x)
{
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = 0.0;
  for (int64_t j = 0; j < n; ++j) v = fma(B[j * n + i], static_cast<double>(b[j]), v);
  x[i] = static_cast<float>(v);
}

unsigned int vector_blocks(int64_t n)
{
  return pd::blocks_for(std::max<int64_t>(n, 1), kThreads);
}

// ---- the Lanczos estimate's steps (md::LanczosSteps), sums by grid_reduce into *sum ----

// v = u / ||u|| step 1: *sum = sum u_i^2 (u_i = pair_hash01(i, kLanczosSeed) - 1/2)
__global__ void __launch_bounds__(kThreads) start_norm_kernel(int64_t n, double *partials, unsigned int *counter, double *sum)
{
  double acc = 0.0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += static_cast<int64_t>(gridDim.x) * kThreads) {
    const double u = pair_hash01(i, md::kLanczosSeed) - 0.5;
    acc += u * u;
  }
  detail::grid_reduce(acc, partials, counter, [sum](double t) { *sum = t; });
}
__global__ void start_kernel(int64_t n, double nu, float *__restrict__ v, float *__restrict__ vp)
{
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    v[i]  = static_cast<float>((pair_hash01(i, md::kLanczosSeed) - 0.5) / nu);
    vp[i] = 0.0f;
  }
}
// *sum = (w, v) in FP64
__global__ void __launch_bounds__(kThreads) dot_kernel(int64_t n, const float *__restrict__ w, const float *__restrict__ v, double *partials, unsigned int *counter, double *sum)
{
  double acc = 0.0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += static_cast<int64_t>(gridDim.x) * kThreads) acc += static_cast<double>(w[i]) * static_cast<double>(v[i]);
  detail::grid_reduce(acc, partials, counter, [sum](double t) { *sum = t; });
}
// w = fma(-fa, v, fma(-fb, vp, w)); *sum = (w, w)
__global__ void __launch_bounds__(kThreads) orthogonalise_kernel(int64_t n, float fa, float fb, const float *__restrict__ v, const float *__restrict__ vp, float *__restrict__ w, double *partials, unsigned int *counter, double *sum)
{
  double acc = 0.0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += static_cast<int64_t>(gridDim.x) * kThreads) {
    const float wi = fmaf(-fa, v[i], fmaf(-fb, vp[i], w[i]));
    w[i]           = wi;
    acc += static_cast<double>(wi) * static_cast<double>(wi);
  }
  detail::grid_reduce(acc, partials, counter, [sum](double t) { *sum = t; });
}
// ---- the null space's projection (MgCycle::set_null_space()) ----

// *c = (w, z) in FP64
__global__ void __launch_bounds__(kThreads) null_dot_kernel(int64_t n, const double *__restrict__ w, const float *__restrict__ z, double *partials, unsigned int *counter, double *c)
{
  double acc = 0.0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += static_cast<int64_t>(gridDim.x) * kThreads) acc += w[i] * static_cast<double>(z[i]);
  detail::grid_reduce(acc, partials, counter, [c](double t) { *c = t; });
}
// z = float(z - sum_j c_j q_j) (q: k vectors of n)
__global__ void null_update_kernel(int64_t n, int k, const double *__restrict__ c, const double *__restrict__ q, float *__restrict__ z)
{
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    double v = static_cast<double>(z[i]);
    for (int j = 0; j < k; ++j) v -= c[j] * q[static_cast<int64_t>(j) * n + i];
    z[i] = static_cast<float>(v);
  }
}

__global__ void advance_kernel(int64_t n, double nw, const float *__restrict__ w, float *__restrict__ v, float *__restrict__ vp)
{
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    vp[i] = v[i];
    v[i]  = static_cast<float>(static_cast<double>(w[i]) / nw);
  }
}

// A CUDA error inside the Lanczos steps (md::LanczosSteps hooks, which cannot return one), thrown
// as CudaFailure and returned by build_mg_cycle_on_device().
struct CudaFailure {
  cudaError_t code;
};
void check(cudaError_t e)
{
  if (e != cudaSuccess) throw CudaFailure{e};
}

double estimate_emax(DeviceMgCycle &m, const Level &L, cudaStream_t st)
{
  const int64_t n = L.rows;
  float        *v = L.y1, *vp = L.y2, *w = L.t;
  auto          fetch_sum = [&] {
    double h = 0.0;
    check(cudaGetLastError());
    check(pd::fetch(m.sum, &h, st));
    return h;
  };
  md::LanczosSteps s;
  s.start = [&] {
    start_norm_kernel<<<m.grid, kThreads, 0, st>>>(n, m.partials, m.counter, m.sum);
    const double nu = std::sqrt(fetch_sum());
    start_kernel<<<vector_blocks(n), kThreads, 0, st>>>(n, nu, v, vp);
    check(cudaGetLastError());
  };
  s.product_dot = [&] {
    check(product(L.a_args, L.A.op.value_format.kind, v, Store{w}, st));
    dot_kernel<<<m.grid, kThreads, 0, st>>>(n, w, v, m.partials, m.counter, m.sum);
    return fetch_sum();
  };
  s.orthogonalise = [&](float fa, float fb) {
    orthogonalise_kernel<<<m.grid, kThreads, 0, st>>>(n, fa, fb, v, vp, w, m.partials, m.counter, m.sum);
    return std::sqrt(fetch_sum());
  };
  s.advance = [&](double nw) {
    advance_kernel<<<vector_blocks(n), kThreads, 0, st>>>(n, nw, w, v, vp);
    check(cudaGetLastError());
  };
  return md::lanczos_emax(m.opt.eig_steps, s);
}

// ---- the interpolation's copies ----

// v[k] = scaled_value(p_rc, 1 / sf_r, sc_c), one warp per row (MgCycle::scaled_interpolation).
__global__ void scaled_interpolation_kernel(DeviceCsr P, const double *__restrict__ sf, const double *__restrict__ sc, double *__restrict__ v)
{
  const int64_t r    = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int     lane = threadIdx.x % 32;
  if (r >= P.rows) return;
  const double fr = 1.0 / sf[r];
  for (int64_t k = int64_t(P.rowptr[r]) + lane; k < P.rowptr[r + 1]; k += 32) v[k] = scaled_value(P.values[k], fr, sc[P.colidx[k]]);
}

// row[k] = the row of entry k, one warp per row
__global__ void entry_rows_kernel(DeviceCsr P, int32_t *__restrict__ row)
{
  const int64_t r    = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int     lane = threadIdx.x % 32;
  if (r >= P.rows) return;
  for (int64_t k = int64_t(P.rowptr[r]) + lane; k < P.rowptr[r + 1]; k += 32) row[k] = static_cast<int32_t>(r);
}

__global__ void iota_kernel(int64_t n, int32_t *__restrict__ k)
{
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) k[i] = static_cast<int32_t>(i);
}

// The transpose's row offsets from P's columns sorted (stably) by column: rowptr[c] = the first
// sorted position whose column is >= c, c = 0 .. cols.
__global__ void transpose_rowptr_kernel(int64_t nnz, int32_t cols, const int32_t *__restrict__ sorted_cols, int32_t *__restrict__ rowptr)
{
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c > cols) return;
  int64_t lo = 0, hi = nnz;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (sorted_cols[mid] < c) lo = mid + 1;
    else hi = mid;
  }
  rowptr[c] = static_cast<int32_t>(lo);
}
// The transpose's columns and values: entry q of it is P's entry order[q].
__global__ void transpose_fill_kernel(int64_t nnz, const int32_t *__restrict__ order, const int32_t *__restrict__ row, const double *__restrict__ v, int32_t *__restrict__ colidx, double *__restrict__ values)
{
  const int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q >= nnz) return;
  const int32_t k = order[q];
  colidx[q]       = row[k];
  values[q]       = v[k];
}

int end_bit_for(int32_t cols)
{
  int b = 1;
  while (b < 31 && (int64_t(1) << b) <= int64_t(cols)) ++b;
  return b;
}

// The copies of P_hat and P_hat^T of level l (MgCycle::setup_level's interpolation part).
cudaError_t build_interpolation(Level &V, const Level &below, int l, const std::vector<DeviceMgLevelInput> &in, const MgCycleOptions &opt, cudaStream_t st)
{
  const size_t     n = in.size();
  const DeviceCsr &P = in[size_t(l)].P;
  md::interpolation_shape_check(P.rows, P.cols, V.rows, below.rows, l, n);
  cudaError_t err = cudaSuccess;
  md::at_level(l, n, "the interpolation P_l", [&] { err = checks::code_or_raise(pd::check_csr_on_device(P, st)); });
  PSPMV_CUDA_TRY(err);
  const double        *sc  = below.lowp ? below.A.s : below.s;
  const int64_t        nnz = P.nnz;
  pd::Scratch<double>  v(size_t(nnz), st), tv(size_t(nnz), st);
  pd::Scratch<int32_t> row(size_t(nnz), st), scol(size_t(nnz), st), order_in(size_t(nnz), st), order(size_t(nnz), st), tcol(size_t(nnz), st), trowptr(size_t(P.cols) + 1, st);
  for (auto e : {v.status(), tv.status(), row.status(), scol.status(), order_in.status(), order.status(), tcol.status(), trowptr.status()}) PSPMV_CUDA_TRY(e);
  if (P.rows > 0) {
    scaled_interpolation_kernel<<<pd::warp_grid_for(P.rows), pd::kBuildThreads, 0, st>>>(P, V.A.s, sc, v.get());
    PSPMV_CUDA_TRY(cudaGetLastError());
  }
  int64_t bad       = INT64_MAX;
  auto    positions = thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0), checks::BadEntryPosition{P.values, v.get()});
  PSPMV_CUDA_TRY(checks::min_of(positions, nnz, int64_t(INT64_MAX), &bad, st));
  if (bad != INT64_MAX) {
    int32_t r = 0, c = 0;
    double  p = 0.0, vk = 0.0, sr = 0.0, scc = 0.0;
    PSPMV_CUDA_TRY(pd::row_of_position(P, bad, &r, st));
    PSPMV_CUDA_TRY(pd::fetch(P.colidx + bad, &c, st));
    PSPMV_CUDA_TRY(pd::fetch(P.values + bad, &p, st));
    PSPMV_CUDA_TRY(pd::fetch(v.get() + bad, &vk, st));
    PSPMV_CUDA_TRY(pd::fetch(V.A.s + r, &sr, st));
    PSPMV_CUDA_TRY(pd::fetch(sc + c, &scc, st));
    throw md::interpolation_value_error(r, c, p, vk, (1.0 / sr) * scc, l, n);
  }
  // P_hat^T: P's entries stably sorted by column (within a column in row order: the host's
  // counting transpose)
  if (nnz > 0) {
    entry_rows_kernel<<<pd::warp_grid_for(P.rows), pd::kBuildThreads, 0, st>>>(P, row.get());
    PSPMV_CUDA_TRY(cudaGetLastError());
    iota_kernel<<<vector_blocks(nnz), kThreads, 0, st>>>(nnz, order_in.get());
    PSPMV_CUDA_TRY(cudaGetLastError());
    PSPMV_CUDA_TRY(pd::cub_run(st, [&](void *t, size_t &b) { return cub::DeviceRadixSort::SortPairs(t, b, P.colidx, scol.get(), order_in.get(), order.get(), nnz, 0, end_bit_for(P.cols), st); }));
  }
  transpose_rowptr_kernel<<<vector_blocks(int64_t(P.cols) + 1), kThreads, 0, st>>>(nnz, P.cols, scol.get(), trowptr.get());
  PSPMV_CUDA_TRY(cudaGetLastError());
  if (nnz > 0) {
    transpose_fill_kernel<<<vector_blocks(nnz), kThreads, 0, st>>>(nnz, order.get(), row.get(), v.get(), tcol.get(), tv.get());
    PSPMV_CUDA_TRY(cudaGetLastError());
  }
  DeviceCsr Ph                    = P, Rh;
  Ph.values                       = v.get();
  Rh.rows                         = P.cols;
  Rh.cols                         = P.rows;
  Rh.nnz                          = nnz;
  Rh.rowptr                       = trowptr.get();
  Rh.colidx                       = tcol.get();
  Rh.values                       = tv.get();
  const PackSellOptions        po = md::interpolation_options(opt.level_options);
  pspmv::cuda::DeviceBuildInfo pi, ri;
  md::at_level(l, n, "the interpolation P_l (its copy)", [&] { err = checks::code_or_raise(pspmv::cuda::build_on_device(Ph, po, st, &V.P, &pi)); });
  PSPMV_CUDA_TRY(err);
  md::at_level(l, n, "the transpose of the interpolation P_l (its copy)", [&] { err = checks::code_or_raise(pspmv::cuda::build_on_device(Rh, po, st, &V.R, &ri)); });
  PSPMV_CUDA_TRY(err);
  V.p_stats = pi.stats;
  V.r_stats = ri.stats;
  V.p_nnz   = nnz;
  if (!pd::lowp_args(V.P, &V.p_args) || !pd::lowp_args(V.R, &V.r_args)) return cudaErrorInvalidValue;
  return cudaSuccess;
}

cudaError_t alloc_vectors(Level &V, bool all)
{
  const size_t n = size_t(V.rows);
  PSPMV_CUDA_TRY(pd::alloc(n, &V.b));
  PSPMV_CUDA_TRY(pd::alloc(n, &V.x));
  if (!all) return cudaSuccess;
  PSPMV_CUDA_TRY(pd::alloc(n, &V.y1));
  PSPMV_CUDA_TRY(pd::alloc(n, &V.y2));
  return pd::alloc(n, &V.t);
}

// MgCycle::setup_level on the device (fresh builds only).
cudaError_t setup_level(DeviceMgCycle &m, int l, const std::vector<DeviceMgLevelInput> &in, cudaStream_t st)
{
  Level                    &V   = m.levels[size_t(l)];
  const DeviceMgLevelInput &I   = in[size_t(l)];
  const size_t              n   = in.size();
  cudaError_t               err = cudaSuccess;
  if (l == m.coarse) { // the coarse level: its scaling only
    PSPMV_CUDA_TRY(pd::alloc(size_t(V.rows), &V.s));
    md::at_level(l, n, "its operator A_l", [&] { err = diagonal_scaling_on_device(I.A, V.s, st); });
    PSPMV_CUDA_TRY(err);
    if (I.inverse) { // B = S^-1 A^-1 S^-1, formed on the host as the host twin does
      std::vector<double> sh(size_t(V.rows));
      PSPMV_CUDA_TRY(cudaMemcpyAsync(sh.data(), V.s, sizeof(double) * sh.size(), cudaMemcpyDeviceToHost, st));
      PSPMV_CUDA_TRY(cudaStreamSynchronize(st));
      PSPMV_CUDA_TRY(pd::alloc_copy(md::scaled_inverse(I.inverse, sh, l, n), &V.B));
    }
    V.lowp = false;
    V.emax = I.emax;
    return alloc_vectors(V, false);
  }
  V.lowp = true;
  md::at_level(l, n, "its operator A_l", [&] { err = build_scaled_copy_on_device(I.A, m.opt.level_options, st, &V.A); });
  PSPMV_CUDA_TRY(err);
  if (!pd::lowp_args(V.A.op, &V.a_args)) return cudaErrorInvalidValue;
  PSPMV_CUDA_TRY(build_interpolation(V, m.levels[size_t(l) - 1], l, in, m.opt, st));
  PSPMV_CUDA_TRY(alloc_vectors(V, true));
  V.emax = I.emax > 0.0 ? I.emax : estimate_emax(m, V, st);
  md::check_emax(V.emax, l, n);
  V.cheb = md::chebyshev_coefficients(V.emax, m.opt);
  return cudaSuccess;
}

cudaError_t build(const std::vector<DeviceMgLevelInput> &levels, const MgCycleOptions &opt, cudaStream_t st, DeviceMgCycle &m)
{
  std::vector<int64_t> rows;
  std::vector<double>  emax;
  for (const DeviceMgLevelInput &I : levels) {
    rows.push_back(I.A.rows);
    emax.push_back(I.emax);
  }
  m.coarse = md::check_levels(rows, emax, opt);
  m.opt    = opt;
  m.levels.resize(levels.size());
  int64_t most = 1;
  for (size_t l = 0; l < levels.size(); ++l) {
    m.levels[l].rows = levels[l].A.rows;
    m.levels[l].nnz  = levels[l].A.nnz;
    m.levels[l].emax = levels[l].emax;
    most             = std::max<int64_t>(most, levels[l].A.rows);
  }
  PSPMV_CUDA_TRY(detail::solver_grid(int32_t(most), detail::kVectorBlocksPerSM, &m.grid));
  PSPMV_CUDA_TRY(pd::alloc(size_t(m.grid), &m.partials));
  PSPMV_CUDA_TRY(pd::alloc(size_t(1), &m.sum));
  PSPMV_CUDA_TRY(pd::alloc(size_t(1), &m.counter));
  PSPMV_CUDA_TRY(cudaMemsetAsync(m.counter, 0, sizeof(unsigned int), st));
  const size_t nc = size_t(m.levels[size_t(m.coarse)].rows);
  PSPMV_CUDA_TRY(pd::alloc(nc, &m.cb));
  PSPMV_CUDA_TRY(pd::alloc(nc, &m.cx));
  for (int l = m.coarse; l < int(levels.size()); ++l) PSPMV_CUDA_TRY(setup_level(m, l, levels, st));
  return cudaStreamSynchronize(st);
}

// ---- the cycle ----

// K_l(b, x): the host twin's smooth() with the iterates rotated so that y_m lands in x: y_j
// (j >= 1) in slot (m - j) mod 3 of {x, y1, y2}. y_0 is 0 (zero) or x; where y_1's slot would be
// x while its product reads y_0 = x ((m - 1) mod 3 == 0), y_0 is first copied to y2 (y_2's slot
// then, which step 2 reads and writes row by row).
cudaError_t smooth(const Level &V, const float *b, float *x, bool zero, cudaStream_t st)
{
  const int       m    = int(V.cheb.ca.size()) + 1;
  float          *S[3] = {x, V.y1, V.y2};
  auto            slot = [&](int j) { return S[(m - j) % 3]; };
  const ValueKind k    = V.A.op.value_format.kind;
  const float    *y0   = zero ? nullptr : x;
  if (!zero && (m - 1) % 3 == 0) {
    PSPMV_CUDA_TRY(cudaMemcpyAsync(V.y2, x, sizeof(float) * size_t(V.rows), cudaMemcpyDeviceToDevice, st));
    y0 = V.y2;
  }
  if (zero) {
    scale_kernel<<<vector_blocks(V.rows), kThreads, 0, st>>>(V.rows, V.cheb.scale, b, slot(1));
    PSPMV_CUDA_TRY(cudaGetLastError());
  } else PSPMV_CUDA_TRY(product(V.a_args, k, y0, ChebFirst{b, y0, slot(1), V.cheb.scale}, st));
  for (int j = 0; j + 1 < m; ++j) { // y_{j+2} from y_j and y_{j+1}
    const float *ym1 = j == 0 ? y0 : slot(j);
    PSPMV_CUDA_TRY(product(V.a_args, k, slot(j + 1), ChebStep{b, ym1, slot(j + 1), slot(j + 2), V.cheb.ca[size_t(j)], V.cheb.cb[size_t(j)], V.cheb.cc[size_t(j)]}, st));
  }
  return cudaSuccess;
}

} // namespace

cudaError_t build_mg_cycle_on_device(const std::vector<DeviceMgLevelInput> &levels, const MgCycleOptions &opt, cudaStream_t stream, DeviceMgCycle **out)
{
  *out = nullptr;
  pd::ScratchRelease release_scratch(stream);
  DeviceMgCycle     *m = new (std::nothrow) DeviceMgCycle;
  if (!m) return cudaErrorMemoryAllocation;
  cudaError_t err = cudaSuccess;
  try {
    err = build(levels, opt, stream, *m);
  } catch (const CudaFailure &f) {
    err = f.code;
  } catch (...) {
    (void)cudaStreamSynchronize(stream);
    (void)destroy(m);
    throw;
  }
  if (err != cudaSuccess) {
    (void)cudaStreamSynchronize(stream);
    (void)destroy(m);
    return err;
  }
  *out = m;
  return cudaSuccess;
}

cudaError_t apply_mg_cycle(const DeviceMgCycle *m, const float *r, float *z, const std::function<void(const double *b, double *x)> &coarse, cudaStream_t st)
{
  const int    L = int(m->levels.size()), c = m->coarse;
  const Level &F  = m->levels.back();
  const float *rb = r;
  if (r == z) { // the finest level's b must survive its x
    PSPMV_CUDA_TRY(cudaMemcpyAsync(F.b, r, sizeof(float) * size_t(F.rows), cudaMemcpyDeviceToDevice, st));
    rb = F.b;
  }
  auto bof = [&](int l) { return l == L - 1 ? rb : m->levels[size_t(l)].b; };
  auto xof = [&](int l) { return l == L - 1 ? z : m->levels[size_t(l)].x; };
  for (int l = L - 1; l > c; --l) { // down: pre-smoothing, restriction of the residual
    const Level &V = m->levels[size_t(l)];
    PSPMV_CUDA_TRY(smooth(V, bof(l), xof(l), true, st));
    PSPMV_CUDA_TRY(product(V.a_args, V.A.op.value_format.kind, xof(l), Residual{bof(l), V.t}, st));
    PSPMV_CUDA_TRY(product(V.r_args, V.R.value_format.kind, V.t, Store{m->levels[size_t(l) - 1].b}, st));
  }
  { // the coarse solve on the unscaled system: b = S^-1 b_hat, x_hat = S^-1 x
    const Level   &C = m->levels[size_t(c)];
    const double  *s = C.lowp ? C.A.s : C.s;
    const unsigned g = vector_blocks(C.rows);
    if (C.B) dense_coarse_kernel<<<g, kThreads, 0, st>>>(C.rows, C.B, bof(c), xof(c));
    else {
      to_coarse_kernel<<<g, kThreads, 0, st>>>(C.rows, bof(c), s, m->cb);
      PSPMV_CUDA_TRY(cudaGetLastError());
      coarse(m->cb, m->cx);
      from_coarse_kernel<<<g, kThreads, 0, st>>>(C.rows, m->cx, s, xof(c));
    }
    PSPMV_CUDA_TRY(cudaGetLastError());
  }
  for (int l = c + 1; l < L; ++l) { // up: coarse-grid correction, post-smoothing
    const Level &V = m->levels[size_t(l)];
    PSPMV_CUDA_TRY(product(V.p_args, V.P.value_format.kind, xof(l - 1), AddTo{xof(l)}, st));
    PSPMV_CUDA_TRY(smooth(V, bof(l), xof(l), false, st));
  }
  if (m->null_k) { // the null space's projection: every c_k, then the update
    const int64_t n = F.rows;
    for (int k = 0; k < m->null_k; ++k) null_dot_kernel<<<m->grid, kThreads, 0, st>>>(n, m->null_w + int64_t(k) * n, z, m->partials, m->counter, m->null_c + k);
    null_update_kernel<<<vector_blocks(n), kThreads, 0, st>>>(n, m->null_k, m->null_c, m->null_q, z);
    PSPMV_CUDA_TRY(cudaGetLastError());
  }
  return cudaSuccess;
}

cudaError_t set_null_space(DeviceMgCycle *m, const std::vector<std::vector<double>> &basis, cudaStream_t st)
{
  const Level        &F = m->levels.back();
  std::vector<double> s(size_t(F.rows));
  PSPMV_CUDA_TRY(cudaMemcpyAsync(s.data(), F.lowp ? F.A.s : F.s, sizeof(double) * s.size(), cudaMemcpyDeviceToHost, st));
  PSPMV_CUDA_TRY(cudaStreamSynchronize(st));
  const md::NullSpaceWeights nw    = md::null_space_weights(basis, s); // throws before anything changes
  cudaError_t                first = cudaSuccess;
  for (double **p : {&m->null_w, &m->null_q, &m->null_c}) pd::free_ptr(p, &first);
  m->null_k = 0;
  PSPMV_CUDA_TRY(first);
  if (nw.k == 0) return cudaSuccess;
  PSPMV_CUDA_TRY(pd::alloc(nw.w.size(), &m->null_w));
  PSPMV_CUDA_TRY(pd::alloc(nw.q.size(), &m->null_q));
  PSPMV_CUDA_TRY(pd::alloc(size_t(nw.k), &m->null_c));
  PSPMV_CUDA_TRY(cudaMemcpyAsync(m->null_w, nw.w.data(), sizeof(double) * nw.w.size(), cudaMemcpyHostToDevice, st));
  PSPMV_CUDA_TRY(cudaMemcpyAsync(m->null_q, nw.q.data(), sizeof(double) * nw.q.size(), cudaMemcpyHostToDevice, st));
  PSPMV_CUDA_TRY(cudaStreamSynchronize(st)); // nw's arrays are freed on return
  m->null_k = nw.k;
  return cudaSuccess;
}

std::vector<MgLevelInfo> mg_cycle_info(const DeviceMgCycle *m)
{
  std::vector<MgLevelInfo> out;
  for (const Level &V : m->levels) out.push_back(md::level_info(V.rows, V.nnz, V.lowp, V.emax, V.B != nullptr, V.A.op.value_format, V.lowp ? V.A.stats.stored_bytes : 0, V.p_nnz, V.lowp ? V.p_stats.stored_bytes + V.r_stats.stored_bytes : 0));
  return out;
}

int coarse_level(const DeviceMgCycle *m)
{
  return m->coarse;
}

int num_levels(const DeviceMgCycle *m)
{
  return int(m->levels.size());
}

cudaError_t destroy(DeviceMgCycle *m)
{
  if (!m) return cudaSuccess;
  cudaError_t first = cudaSuccess;
  for (Level &V : m->levels) {
    const cudaError_t e1 = release(&V.A), e2 = pspmv::cuda::release(&V.P), e3 = pspmv::cuda::release(&V.R);
    for (cudaError_t e : {e1, e2, e3})
      if (first == cudaSuccess) first = e;
    for (float **p : {&V.b, &V.x, &V.y1, &V.y2, &V.t}) pd::free_ptr(p, &first);
    pd::free_ptr(&V.s, &first);
    pd::free_ptr(&V.B, &first);
  }
  pd::free_ptr(&m->cb, &first);
  pd::free_ptr(&m->cx, &first);
  pd::free_ptr(&m->partials, &first);
  pd::free_ptr(&m->sum, &first);
  pd::free_ptr(&m->counter, &first);
  for (double **p : {&m->null_w, &m->null_q, &m->null_c}) pd::free_ptr(p, &first);
  delete m;
  return first;
}

} // namespace cuda
} // namespace mixed
} // namespace pspmv
