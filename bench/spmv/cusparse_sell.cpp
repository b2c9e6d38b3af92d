#include "cusparse_sell.hpp"

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>

namespace bench
{

void BuildSell(const HostCsr &H, int32_t C, Sell &S)
{
  S.C       = C;
  S.nslices = (H.rows + C - 1) / C;
  S.off.assign(size_t(S.nslices) + 1, 0);
  for (long long sl = 0; sl < S.nslices; ++sl) {
    int32_t w = 0;
    for (int32_t i = int32_t(sl * C); i < std::min<int32_t>(H.rows, int32_t((sl + 1) * C)); ++i) w = std::max(w, H.rowptr[i + 1] - H.rowptr[i]);
    S.off[size_t(sl) + 1] = S.off[size_t(sl)] + int64_t(C) * w;
  }
  S.slots = S.off.back();
  // uninitialised buffers filled slice by slice in parallel (no serial memset of GBs)
  S.col.reset(new int32_t[size_t(std::max<long long>(S.slots, 1))]);
  S.val.reset(new double[size_t(std::max<long long>(S.slots, 1))]);
#pragma omp parallel for schedule(dynamic, 64)
  for (long long sl = 0; sl < S.nslices; ++sl) {
    std::fill(S.col.get() + S.off[size_t(sl)], S.col.get() + S.off[size_t(sl) + 1], -1);
    std::fill(S.val.get() + S.off[size_t(sl)], S.val.get() + S.off[size_t(sl) + 1], 0.0);
    for (int32_t i = int32_t(sl * C); i < std::min<int32_t>(H.rows, int32_t((sl + 1) * C)); ++i) {
      const int64_t base = S.off[size_t(sl)] + (i % C);
      for (int32_t q = H.rowptr[i]; q < H.rowptr[i + 1]; ++q) {
        const int64_t at  = base + int64_t(q - H.rowptr[i]) * C;
        S.col[size_t(at)] = H.colidx[size_t(q)];
        S.val[size_t(at)] = H.values[size_t(q)];
      }
    }
  }
}

void EmulateCusparse(const HostCsr &H, const Sell *S, bool half, int k, const std::vector<double> &x, std::vector<double> &y)
{
  auto a_of = [&](double v) { return half ? double(__half2float(__double2half(std::ldexp(v, -k)))) : v; };
  auto x_of = [&](int32_t j) { return half ? double(__half2float(__double2half(x[size_t(j)]))) : x[size_t(j)]; };
  y.assign(size_t(H.rows), 0.0);
#pragma omp parallel for schedule(dynamic, 1024)
  for (int32_t i = 0; i < H.rows; ++i) {
    double sd = 0;
    float  sf = 0;
    if (S) {
      const int64_t base = S->off[size_t(i / S->C)] + (i % S->C), w = (S->off[size_t(i / S->C) + 1] - S->off[size_t(i / S->C)]) / S->C;
      for (int64_t q = 0; q < w; ++q) {
        const int32_t c = S->col[size_t(base + q * S->C)];
        if (c < 0) continue;
        if (half) sf += float(a_of(S->val[size_t(base + q * S->C)]) * x_of(c));
        else sd += S->val[size_t(base + q * S->C)] * x[size_t(c)];
      }
    } else {
      for (int32_t q = H.rowptr[i]; q < H.rowptr[i + 1]; ++q) {
        if (half) sf += float(a_of(H.values[size_t(q)]) * x_of(H.colidx[size_t(q)]));
        else sd += H.values[size_t(q)] * x[size_t(H.colidx[size_t(q)])];
      }
    }
    y[size_t(i)] = half ? std::ldexp(double(__half2float(__float2half(sf))), k) : sd;
  }
}

} // namespace bench
