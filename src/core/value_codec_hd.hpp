// The bit-level value codec of src/core/value_codec.cpp as __host__ __device__ functions, so
// that the host builders and the device builders (src/formats/*/*_device_build.cu) round every
// value with the same code: one definition, bit for bit the same result on both sides.
// PETSc-free, no CUDA needed (PSPMV_HD is plain inline without nvcc).
#pragma once
#include "host_device.hpp"
#include <cmath>
#include <cstdint>
#include <cstring>

namespace pspmv
{
namespace codec
{

PSPMV_HD uint64_t double_bits(double x)
{
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(x));
#else
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
#endif
}

PSPMV_HD double bits_double(uint64_t b)
{
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(b));
#else
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
#endif
}

// Encodes x into sign | E exponent bits (IEEE bias) | M mantissa bits, rounding to nearest,
// ties to even, in one step from the FP64 bits (never through FP32). *overflow is set when a
// finite x rounds beyond the largest finite value (the bits are then the signed Inf). NaN
// encodes as the quiet NaN, +-Inf as +-Inf, -0 as -0. E in [2, 8], M in [1, 22].
PSPMV_HD uint32_t encode_bits(int E, int M, double x, bool *overflow)
{
  const int      bias         = (1 << (E - 1)) - 1;
  const uint32_t exp_all_ones = (uint32_t(1) << E) - 1;
  const uint64_t b            = double_bits(x);
  const uint32_t sign         = uint32_t(b >> 63) << (E + M);
  const int      de           = int((b >> 52) & 0x7ff);
  uint64_t       sig          = b & ((uint64_t(1) << 52) - 1);
  *overflow                   = false;

  if (de == 0x7ff) { // Inf keeps its sign; every NaN becomes the quiet NaN of the format
    const uint32_t mant = sig ? (uint32_t(1) << (M - 1)) : 0;
    return sign | (exp_all_ones << M) | mant;
  }
  if (de == 0 && sig == 0) return sign; // signed zero

  // x = sig * 2^(ue - 52) with sig normalised to [2^52, 2^53).
  int ue;
  if (de == 0) { // FP64 subnormal
    ue = -1022;
    while (!(sig >> 52)) {
      sig <<= 1;
      --ue;
    }
  } else {
    sig |= uint64_t(1) << 52;
    ue = de - 1023;
  }

  const int emin = 1 - bias;
  // Bits to drop: the quantum is 2^(ue - M) in the normal range, 2^(emin - M) below it.
  const int drop = 52 - M + (ue >= emin ? 0 : emin - ue);
  uint64_t  n;
  if (drop > 63) {
    n = 0; // far below half the smallest subnormal: rounds to zero
  } else {
    n                   = sig >> drop;
    const uint64_t rem  = sig & ((uint64_t(1) << drop) - 1);
    const uint64_t half = uint64_t(1) << (drop - 1);
    if (rem > half || (rem == half && (n & 1))) ++n; // round to nearest, ties to even
  }

  if (ue < emin) {
    // Subnormal result; n == 2^M is the smallest normal, whose bits are exactly n.
    return sign | uint32_t(n);
  }
  if (n >> (M + 1)) { // rounding carried into the next binade
    n >>= 1;
    ++ue;
  }
  const int be = ue + bias;
  if (be >= int(exp_all_ones)) {
    *overflow = true;
    return sign | (exp_all_ones << M);
  }
  return sign | (uint32_t(be) << M) | uint32_t(n & ((uint64_t(1) << M) - 1));
}

// Decodes the bits of encode_bits exactly to FP64.
PSPMV_HD double decode_bits(int E, int M, uint32_t bits)
{
  const int      bias         = (1 << (E - 1)) - 1;
  const uint32_t exp_all_ones = (uint32_t(1) << E) - 1;
  const uint64_t sign         = uint64_t((bits >> (E + M)) & 1) << 63;
  const uint32_t be           = (bits >> M) & exp_all_ones;
  const uint64_t mant         = bits & ((uint32_t(1) << M) - 1);
  if (be == exp_all_ones) // Inf or quiet NaN, sign kept
    return bits_double(sign | (uint64_t(0x7ff) << 52) | (mant ? uint64_t(1) << 51 : 0));
  if (be == 0) { // zero or subnormal: mant * 2^(emin - M), exact in FP64
    const double mag = ldexp(double(mant), 1 - bias - M);
    return sign ? -mag : mag;
  }
  return bits_double(sign | (uint64_t(int(be) - bias + 1023) << 52) | (mant << (52 - M)));
}

// Whether a value format of E exponent and M mantissa bits cannot hold value v stored times
// 2^s: a finite v that overflows, or a nonzero that rounds to zero (Inf and NaN are stored as
// such). The range check of every PackSELL build and value update, host and device.
PSPMV_HD bool unencodable(int E, int M, double v, int32_t s)
{
#if defined(__CUDA_ARCH__)
  if (!isfinite(v)) return false;
#else
  if (!std::isfinite(v)) return false;
#endif
  bool           overflow;
  const uint32_t bits      = encode_bits(E, M, ldexp(v, s), &overflow);
  const uint32_t magnitude = (uint32_t(1) << (E + M)) - 1; // all but the sign
  return overflow || (v != 0.0 && (bits & magnitude) == 0);
}

} // namespace codec
} // namespace pspmv
