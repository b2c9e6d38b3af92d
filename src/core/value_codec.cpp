// Generic IEEE-style codec (sign, E exponent bits, M mantissa bits) from and to FP64.
// Works on the bits of the double so rounding is exact and independent of the FPU's
// rounding mode: one round-to-nearest-even step from FP64, never through FP32.
#include "value_codec.hpp"
#include "csr.hpp"
#include <cmath>
#include <cstring>
#include <limits>

namespace pspmv {

namespace {

uint64_t double_bits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

double bits_double(uint64_t b) {
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

constexpr const char *kAcceptedNames = "exact, fp16, bf16 or e8m<m> with 7 <= m <= 22";

} // namespace

ValueFormat ValueFormat::exact() { return ValueFormat{}; }

ValueFormat ValueFormat::fp16() {
  ValueFormat f;
  f.kind = ValueKind::FP16;
  f.mantissa_bits = 10;
  f.exponent_bits = 5;
  return f;
}

ValueFormat ValueFormat::bf16() {
  ValueFormat f;
  f.kind = ValueKind::BF16;
  f.mantissa_bits = 7;
  f.exponent_bits = 8;
  return f;
}

ValueFormat ValueFormat::e8m(int m) {
  if (m < 7 || m > 22)
    throw FormatError("value format e8m" + std::to_string(m) +
                      " is not supported: the mantissa width m must satisfy 7 <= m <= 22");
  ValueFormat f;
  f.kind = ValueKind::E8M;
  f.mantissa_bits = m;
  f.exponent_bits = 8;
  return f;
}

ValueFormat ValueFormat::parse(const std::string &name) {
  if (name == "exact") return exact();
  if (name == "fp16") return fp16();
  if (name == "bf16") return bf16();
  if (name.size() >= 4 && name.size() <= 5 && name.compare(0, 3, "e8m") == 0) {
    int m = 0;
    bool digits = true;
    for (size_t i = 3; i < name.size(); ++i) {
      if (name[i] < '0' || name[i] > '9') digits = false;
      else m = 10 * m + (name[i] - '0');
    }
    // Canonical spelling only ("e8m07" is refused) so that name() inverts parse().
    if (digits && name[3] != '0' && m >= 7 && m <= 22) return e8m(m);
  }
  throw FormatError("unknown value format '" + name + "': use " + kAcceptedNames);
}

std::string ValueFormat::name() const {
  switch (kind) {
  case ValueKind::Exact: return "exact";
  case ValueKind::FP16: return "fp16";
  case ValueKind::BF16: return "bf16";
  case ValueKind::E8M: return "e8m" + std::to_string(mantissa_bits);
  }
  return "unknown";
}

double ValueFormat::max_finite() const {
  if (kind == ValueKind::Exact) return std::numeric_limits<double>::infinity();
  const int bias = (1 << (exponent_bits - 1)) - 1;
  // (2 - 2^-M) * 2^bias, computed exactly.
  return std::ldexp(double((uint64_t(1) << (mantissa_bits + 1)) - 1), bias - mantissa_bits);
}

double ValueFormat::unit_roundoff() const {
  return kind == ValueKind::Exact ? std::ldexp(1.0, -53) : std::ldexp(1.0, -(mantissa_bits + 1));
}

uint32_t encode_value(const ValueFormat &f, double x, EncodeStatus *status) {
  const int E = f.exponent_bits, M = f.mantissa_bits;
  const int bias = (1 << (E - 1)) - 1;
  const uint32_t exp_all_ones = (uint32_t(1) << E) - 1;
  const uint64_t b = double_bits(x);
  const uint32_t sign = uint32_t(b >> 63) << (E + M);
  const int de = int((b >> 52) & 0x7ff);
  uint64_t sig = b & ((uint64_t(1) << 52) - 1);
  if (status) *status = EncodeStatus::Ok;

  if (de == 0x7ff) { // Inf keeps its sign; every NaN becomes the quiet NaN of the format
    const uint32_t mant = sig ? (uint32_t(1) << (M - 1)) : 0;
    return sign | (exp_all_ones << M) | mant;
  }
  if (de == 0 && sig == 0) return sign; // signed zero

  // x = sig * 2^(ue - 52) with sig normalised to [2^52, 2^53).
  int ue;
  if (de == 0) { // FP64 subnormal
    ue = -1022;
    while (!(sig >> 52)) { sig <<= 1; --ue; }
  } else {
    sig |= uint64_t(1) << 52;
    ue = de - 1023;
  }

  const int emin = 1 - bias;
  // Bits to drop: the quantum is 2^(ue - M) in the normal range, 2^(emin - M) below it.
  const int drop = 52 - M + (ue >= emin ? 0 : emin - ue);
  uint64_t n;
  if (drop > 63) {
    n = 0; // far below half the smallest subnormal: rounds to zero
  } else {
    n = sig >> drop;
    const uint64_t rem = sig & ((uint64_t(1) << drop) - 1);
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
    if (status) *status = EncodeStatus::Overflow;
    return sign | (exp_all_ones << M);
  }
  return sign | (uint32_t(be) << M) | uint32_t(n & ((uint64_t(1) << M) - 1));
}

double decode_value(const ValueFormat &f, uint32_t bits) {
  const int E = f.exponent_bits, M = f.mantissa_bits;
  const int bias = (1 << (E - 1)) - 1;
  const uint32_t exp_all_ones = (uint32_t(1) << E) - 1;
  const uint64_t sign = uint64_t((bits >> (E + M)) & 1) << 63;
  const uint32_t be = (bits >> M) & exp_all_ones;
  const uint64_t mant = bits & ((uint32_t(1) << M) - 1);
  if (be == exp_all_ones) // Inf or quiet NaN, sign kept
    return bits_double(sign | (uint64_t(0x7ff) << 52) | (mant ? uint64_t(1) << 51 : 0));
  if (be == 0) { // zero or subnormal: mant * 2^(emin - M), exact in FP64
    const double mag = std::ldexp(double(mant), 1 - bias - M);
    return sign ? -mag : mag;
  }
  return bits_double(sign | (uint64_t(int(be) - bias + 1023) << 52) | (mant << (52 - M)));
}

} // namespace pspmv
