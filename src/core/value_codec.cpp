// Generic IEEE-style codec (sign, E exponent bits, M mantissa bits) from and to FP64.
// Works on the bits of the double so rounding is exact and independent of the FPU's
// rounding mode: one round-to-nearest-even step from FP64, never through FP32.
#include "value_codec.hpp"
#include "value_codec_hd.hpp"
#include "csr.hpp"
#include <cmath>
#include <cstring>
#include <limits>

namespace pspmv
{

namespace
{

constexpr const char *kAcceptedNames = "exact, fp16, bf16 or e8m<m> with 7 <= m <= 22";

ValueFormat value_format(ValueKind kind, int mantissa_bits, int exponent_bits)
{
  ValueFormat f;
  f.kind          = kind;
  f.mantissa_bits = mantissa_bits;
  f.exponent_bits = exponent_bits;
  return f;
}

} // namespace

ValueFormat ValueFormat::exact()
{
  return ValueFormat{};
}

ValueFormat ValueFormat::fp16()
{
  return value_format(ValueKind::FP16, 10, 5);
}

ValueFormat ValueFormat::bf16()
{
  return value_format(ValueKind::BF16, 7, 8);
}

ValueFormat ValueFormat::e8m(int m)
{
  if (m < 7 || m > 22) throw FormatError("value format e8m" + std::to_string(m) + " is not supported: the mantissa width m must satisfy 7 <= m <= 22");
  return value_format(ValueKind::E8M, m, 8);
}

ValueFormat ValueFormat::parse(const std::string &name)
{
  if (name == "exact") return exact();
  if (name == "fp16") return fp16();
  if (name == "bf16") return bf16();
  if (name.size() >= 4 && name.size() <= 5 && name.compare(0, 3, "e8m") == 0) {
    int  m      = 0;
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

std::string ValueFormat::name() const
{
  switch (kind) {
  case ValueKind::Exact:
    return "exact";
  case ValueKind::FP16:
    return "fp16";
  case ValueKind::BF16:
    return "bf16";
  case ValueKind::E8M:
    return "e8m" + std::to_string(mantissa_bits);
  }
  return "unknown";
}

double ValueFormat::max_finite() const
{
  if (kind == ValueKind::Exact) return std::numeric_limits<double>::infinity();
  const int bias = (1 << (exponent_bits - 1)) - 1;
  // (2 - 2^-M) * 2^bias, computed exactly.
  return std::ldexp(double((uint64_t(1) << (mantissa_bits + 1)) - 1), bias - mantissa_bits);
}

double ValueFormat::unit_roundoff() const
{
  return kind == ValueKind::Exact ? std::ldexp(1.0, -53) : std::ldexp(1.0, -(mantissa_bits + 1));
}

uint32_t encode_value(const ValueFormat &f, double x, EncodeStatus *status)
{
  bool           overflow = false;
  const uint32_t bits     = codec::encode_bits(f.exponent_bits, f.mantissa_bits, x, &overflow);
  if (status) *status = overflow ? EncodeStatus::Overflow : EncodeStatus::Ok;
  return bits;
}

double decode_value(const ValueFormat &f, uint32_t bits)
{
  return codec::decode_bits(f.exponent_bits, f.mantissa_bits, bits);
}

} // namespace pspmv
