// Scalings of the mixed-precision preconditioner that hold across the whole double range
// (PETSc-free; __host__ __device__, so the host twins and the device kernels share one
// definition and agree bit for bit):
//   - the entry norm sigma = ||t||_2, t = s .* r (inner_solver.hpp): a sum of squares of t
//     scaled by a power of two 2^-e (2^e about max |t_i|), as LAPACK's dnrm2 scales its sum;
//     a power of two is exact, so wherever the plain sum neither overflows nor underflows the
//     result is bit for bit the plain sqrt(sum t_i^2), and elsewhere it is still right (the
//     plain sum underflows to 0 below ||t|| ~ 1e-162 and overflows above ~ 1e154);
//   - the copy's values a_ij * (s_i * s_j) (scaled_copy.hpp), with s_i * s_j formed from the
//     significands and the exponents apart when the product leaves the normal range (s_i lies
//     in [2e-154, 5e161], so s_i * s_j may overflow or underflow although the scaled value is
//     about 1): bit for bit the plain product wherever that one stays normal.
#pragma once
#include "core/host_device.hpp"
#include "core/value_codec_hd.hpp"
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace pspmv
{
namespace mixed
{

// x is neither Inf nor NaN (the bits, not the library: the same on host and device).
PSPMV_HD bool finite_value(double x)
{
  return (codec::double_bits(x) & 0x7ff0000000000000ULL) != 0x7ff0000000000000ULL;
}

// x is a normal double (finite, |x| >= 2^-1022).
PSPMV_HD bool normal_value(double x)
{
  const uint64_t e = codec::double_bits(x) & 0x7ff0000000000000ULL;
  return e != 0 && e != 0x7ff0000000000000ULL;
}

// The larger of a and b, NaN when either is NaN: a max over many values that is NaN exactly
// when one of them is, whatever the order (fmax would drop the NaN).
PSPMV_HD double nan_max(double a, double b)
{
  return (a != a || a > b) ? a : b;
}

// The power of two 2^-e with amax = f 2^e, f in [0.5, 1), e clamped to [-1022, 1022] so that
// it is a normal double: multiplied by it, the largest magnitude lies in [0.5, 1) (in
// [2^-52, 1) for a subnormal amax, [0.5, 4) near DBL_MAX). 1 when amax is 0, Inf or NaN
// (nothing to scale; the plain sum then gives 0, Inf or NaN as before).
PSPMV_HD double norm_scale(double amax)
{
  if (!(amax > 0.0) || !finite_value(amax)) return 1.0;
  int e = 0;
  (void)frexp(amax, &e);
  e = e < -1022 ? -1022 : (e > 1022 ? 1022 : e);
  return ldexp(1.0, -e);
}

// sigma = ||s .* r||_2 over n entries, the host twins' order: amax = the nan_max of |s_i r_i|,
// scale = norm_scale(amax), sum = the sum of ((s_i r_i) scale)^2 in index order,
// sigma = sqrt(sum) / scale.
inline double entry_norm(const double *s, const double *r, size_t n)
{
  double amax = 0.0;
  for (size_t i = 0; i < n; ++i) amax = nan_max(amax, std::fabs(s[i] * r[i]));
  const double scale = norm_scale(amax);
  double       sum   = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double t = (s[i] * r[i]) * scale;
    sum += t * t;
  }
  return std::sqrt(sum) / scale;
}

// a * (si * sj) (si, sj > 0 finite), computed as ldexp(ma * (mi * mj), ea + ei + ej) from the
// significands m and exponents e of a, si and sj (frexp), so that it is right wherever the
// result is representable; the plain product when it and si * sj are normal (then equal bit
// for bit, a power of two being exact). Inf or 0 for a nonzero a: the result is out of range.
PSPMV_HD double scaled_value(double a, double si, double sj)
{
  const double p = si * sj, v = a * p;
  if (normal_value(p) && (normal_value(v) || a == 0.0)) return v;
  int          ea = 0, ei = 0, ej = 0;
  const double ma = frexp(a, &ea), mi = frexp(si, &ei), mj = frexp(sj, &ej);
  return ldexp(ma * (mi * mj), ea + ei + ej);
}

// A symmetric pseudo-random number in [0, 1) of the unordered pair {i, j} (a splitmix64-style
// mix of the pair): the same for (i, j) and (j, i), on every rank and on host and device.
PSPMV_HD double pair_hash01(int64_t i, int64_t j)
{
  const uint64_t lo = static_cast<uint64_t>(i < j ? i : j), hi = static_cast<uint64_t>(i < j ? j : i);
  uint64_t       h = (lo * 0x9E3779B97F4A7C15ULL) ^ (hi + 0x632BE59BD9B4E019ULL + (lo << 6) + (lo >> 2));
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ULL;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBULL;
  h ^= h >> 31;
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

// Dithered rounding (the copies of KSPMIXEDCG): v moved by (u - 1/2) units in the last place of
// a value format with m mantissa bits and smallest normal binade 2^emin, u = pair_hash01(gi, gj),
// so that round-to-nearest of the result rounds v up or down with the probabilities of its
// position between the two neighbours: unbiased, and symmetric in (gi, gj). Rounding to nearest
// makes the errors of equal values equal (a constant-coefficient stencil's copy is then a scaled
// matrix on its interior, whose error CG meets again at every reliable update); dithered, they
// are uncorrelated. v itself on the diagonal (gi == gj), for 0 and non-finite v, for m <= 0
// (the exact format), and below the format's smallest subnormal 2^(emin - m) (a dither there
// could flip its sign or make a value the format cannot hold look like one: the format rounds
// it, and a refusal names v itself). (u - 1/2) 2^k is exact, so the one rounding is the sum's: host and device
// agree bit for bit (a fused multiply-add gives the same result).
PSPMV_HD double dithered_value(double v, int64_t gi, int64_t gj, int m, int emin)
{
  if (gi == gj || m <= 0 || v == 0.0 || !finite_value(v)) return v;
  int e = 0;
  (void)frexp(v, &e); // |v| in [2^(e-1), 2^e)
  if (e - 1 < emin - m) return v;
  const int binade = e - 1 < emin ? emin : e - 1;
  return v + (pair_hash01(gi, gj) - 0.5) * ldexp(1.0, binade - m);
}

// v = scaled_value(a, ...) is one the copy can hold: finite, and not 0 for a nonzero a.
PSPMV_HD bool scaled_value_fits(double a, double v)
{
  return finite_value(v) && (v != 0.0 || a == 0.0);
}

} // namespace mixed
} // namespace pspmv
