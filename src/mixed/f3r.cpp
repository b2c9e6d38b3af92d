// Host twin of the F3R inner solver: the steps of f3r.hpp, written plainly (the device solver,
// f3r_device.cu, runs the same steps with fused kernels). Sources of each step:
// docs/mixed-f3r.md.
#include "f3r.hpp"
#include "core/value_codec.hpp"
#include "scaling.hpp"
#include <cmath>
#include <string>

namespace pspmv
{
namespace mixed
{

namespace
{

// x rounded to IEEE binary16 (nearest, ties to even; overflow gives +-Inf, as the device's
// __float2half_rn), returned as a float.
float fp16(float x)
{
  static const ValueFormat f = ValueFormat::fp16();
  EncodeStatus             st;
  return float(decode_value(f, encode_value(f, double(x), &st)));
}

double dot64(const float *a, const float *b, int32_t n)
{
  double s = 0.0;
  for (int32_t i = 0; i < n; ++i) s += double(a[i]) * double(b[i]);
  return s;
}

struct Solver {
  const PackSellMatrix &A;
  const F3RParams      &p;
  F3RState             *st;
  int32_t               n;
  int64_t               rich_steps = 0;
  std::vector<float>    h, x16, d, t; // level 4 work (FP16 values held in floats)

  Solver(const PackSellMatrix &A_, const F3RParams &p_, F3RState *st_) : A(A_), p(p_), st(st_), n(A_.rows), h(size_t(n)), x16(size_t(n)), d(size_t(n)), t(size_t(n)) { }

  // y = fp16(A x) for FP16 x: FP32 sums rounded once (cuda::spmv_f16's contract).
  void spmv16(const float *x, float *y)
  {
    packsell_spmv_f32(A, x, y);
    for (int32_t i = 0; i < n; ++i) y[i] = fp16(y[i]);
  }

  // Level 4: m4 Richardson steps on v, call slot q; out = float(x).
  void richardson(const float *v, float *out, int64_t q)
  {
    const bool          period = (q + 1) % p.weight_period == 0;
    std::vector<double> w(size_t(p.m4));
    for (int32_t i = 0; i < n; ++i) {
      h[size_t(i)]   = fp16(v[i]);
      x16[size_t(i)] = 0.0f;
    }
    for (int32_t k = 0; k < p.m4; ++k) {
      if (k == 0) {
        d = h;
      } else {
        spmv16(x16.data(), t.data());
        for (int32_t i = 0; i < n; ++i) d[size_t(i)] = fp16(h[size_t(i)] - t[size_t(i)]);
      }
      double wk = st->weight[size_t(k)];
      if (period) {
        spmv16(d.data(), t.data());
        const double ad = dot64(t.data(), d.data(), n), aa = dot64(t.data(), t.data(), n);
        const double sample = ad / aa;
        if (aa > 0.0 && std::isfinite(sample)) wk = sample;
      }
      w[size_t(k)]   = wk;
      const float wf = float(wk);
      for (int32_t i = 0; i < n; ++i) x16[size_t(i)] = fp16(x16[size_t(i)] + wf * d[size_t(i)]);
    }
    if (period) {
      ++st->samples;
      for (int32_t k = 0; k < p.m4; ++k) {
        st->weight_sum[size_t(k)] += w[size_t(k)];
        st->weight[size_t(k)] = float(st->weight_sum[size_t(k)] / double(st->samples + 1));
      }
    }
    for (int32_t i = 0; i < n; ++i) out[i] = x16[size_t(i)];
    rich_steps += p.m4;
  }

  // FGMRES(m) of level `level` (2 or 3) on b, x = its solution; q0: the first call slot of the
  // Richardson calls beneath; returns the columns kept.
  int32_t fgmres(int level, const float *b, float *x, int64_t q0)
  {
    const int32_t       m = level == 2 ? p.m2 : p.m3;
    const size_t        N = size_t(n);
    std::vector<float>  V(N * size_t(m + 1)), Z(N * size_t(m)), w(N);
    std::vector<double> H(size_t(m + 1) * size_t(m)), cs(size_t(m), 0.0), sn(size_t(m), 0.0), g(size_t(m + 1), 0.0);
    g[0] = 1.0;
    for (size_t i = 0; i < N; ++i) V[i] = b[i];
    int32_t ncols = 0;
    for (int32_t j = 0; j < m; ++j) {
      float *Vj = &V[N * size_t(j)], *Zj = &Z[N * size_t(j)];
      if (level == 2) fgmres(3, Vj, Zj, q0 + int64_t(j) * p.m3);
      else richardson(Vj, Zj, q0 + j);
      packsell_spmv_f32(A, Zj, w.data());
      double *col = &H[size_t(m + 1) * size_t(j)];
      for (int32_t k = 0; k <= j; ++k) col[k] = dot64(w.data(), &V[N * size_t(k)], n);
      for (size_t i = 0; i < N; ++i) {
        float acc = float(col[0]) * V[i];
        for (int32_t k = 1; k <= j; ++k) acc += float(col[k]) * V[N * size_t(k) + i];
        w[i] -= acc;
      }
      const double hn = std::sqrt(dot64(w.data(), w.data(), n));
      col[j + 1]      = hn;
      for (int32_t k = 0; k < j; ++k) {
        const double a = col[k];
        col[k]         = cs[size_t(k)] * a + sn[size_t(k)] * col[k + 1];
        col[k + 1]     = -sn[size_t(k)] * a + cs[size_t(k)] * col[k + 1];
      }
      const double den    = std::sqrt(col[j] * col[j] + col[j + 1] * col[j + 1]);
      bool         finite = std::isfinite(den);
      for (int32_t k = 0; k <= j + 1; ++k) finite = finite && std::isfinite(col[k]);
      if (!finite || !(den > 0.0)) break;
      cs[size_t(j)]    = col[j] / den;
      sn[size_t(j)]    = col[j + 1] / den;
      col[j]           = den;
      col[j + 1]       = 0.0;
      g[size_t(j) + 1] = -sn[size_t(j)] * g[size_t(j)];
      g[size_t(j)]     = cs[size_t(j)] * g[size_t(j)];
      ncols            = j + 1;
      if (hn == 0.0) break;
      const float inv = float(1.0 / hn);
      float      *Vn  = &V[N * size_t(j + 1)];
      for (size_t i = 0; i < N; ++i) Vn[i] = w[i] * inv;
    }
    // y = R^-1 g (R: the rotated H, column-major with leading dimension m+1).
    std::vector<double> y(size_t(m), 0.0);
    for (int32_t i = ncols - 1; i >= 0; --i) {
      double s = g[size_t(i)];
      for (int32_t k = i + 1; k < ncols; ++k) s -= H[size_t(m + 1) * size_t(k) + size_t(i)] * y[size_t(k)];
      y[size_t(i)] = s / H[size_t(m + 1) * size_t(i) + size_t(i)];
    }
    for (size_t i = 0; i < N; ++i) {
      float acc = 0.0f;
      for (int32_t k = 0; k < ncols; ++k) acc = k == 0 ? float(y[0]) * Z[i] : acc + float(y[size_t(k)]) * Z[N * size_t(k) + i];
      x[i] = acc;
    }
    return ncols;
  }
};

void check_params(const F3RParams &p)
{
  if (p.m2 < 1 || p.m3 < 1 || p.m4 < 1 || p.weight_period < 1)
    throw FormatError("F3R parameters must be >= 1 (m2 " + std::to_string(p.m2) + ", m3 " + std::to_string(p.m3) + ", m4 " + std::to_string(p.m4) + ", weight_period " + std::to_string(p.weight_period) + ")");
}

} // namespace

void f3r_reset(const F3RParams &p, F3RState *st)
{
  check_params(p);
  st->weight_sum.assign(size_t(p.m4), 1.0);
  st->weight.assign(size_t(p.m4), 1.0f);
  st->calls   = 0;
  st->samples = 0;
}

F3RResult f3r_solve(const PackSellMatrix &A, const float *b, float *x, const F3RParams &p, F3RState *st)
{
  check_params(p);
  if (st->weight.size() != size_t(p.m4) || st->weight_sum.size() != size_t(p.m4)) f3r_reset(p, st);
  if (A.rows != A.cols) throw FormatError("F3R: the operator is not square");
  Solver        s(A, p, st);
  const int64_t q0 = st->calls;
  F3RResult     res;
  res.level2_steps     = s.fgmres(2, b, x, q0);
  res.richardson_steps = s.rich_steps;
  st->calls            = q0 + int64_t(p.m2) * p.m3;
  return res;
}

void apply_inner_f3r(const ScaledCopy &c, const F3RParams &p, const double *r, double *z, F3RState *st, InnerStats *stats)
{
  check_params(p);
  if (st->weight.size() != size_t(p.m4) || st->weight_sum.size() != size_t(p.m4)) f3r_reset(p, st);
  const size_t n = c.s.size();
  ++stats->applications;
  const double sigma = entry_norm(c.s.data(), r, n);
  if (sigma == 0.0) {
    for (size_t i = 0; i < n; ++i) z[i] = 0.0;
    ++stats->zero_rhs;
    st->calls += int64_t(p.m2) * p.m3;
    return;
  }
  std::vector<float> b(n), x(n);
  for (size_t i = 0; i < n; ++i) b[i] = float((c.s[i] * r[i]) / sigma);
  const F3RResult res = f3r_solve(c.op, b.data(), x.data(), p, st);
  stats->inner_its += res.richardson_steps;
  if (res.level2_steps == 0) {
    for (size_t i = 0; i < n; ++i) z[i] = c.s[i] * (c.s[i] * r[i]);
    ++stats->jacobi_fallbacks;
    return;
  }
  for (size_t i = 0; i < n; ++i) z[i] = sigma * (c.s[i] * double(x[i]));
}

} // namespace mixed
} // namespace pspmv
