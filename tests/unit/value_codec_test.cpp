// Value codecs at their edges: names, ties, overflow, subnormals, signed zero, NaN, Inf,
// exhaustive FP16 round trips and sampled E8Mm, against independent oracles where one exists
// (_Float16 for FP16, truncated FP32 bits for E8Mm, nearest-neighbour search for all).
#include "core/csr.hpp"
#include "core/value_codec.hpp"
#include "random_matrix.hpp"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <limits>
#include <vector>

using namespace pspmv;
using pspmv_test::Rng;

namespace
{

std::vector<ValueFormat> lossy_formats()
{
  std::vector<ValueFormat> f{ValueFormat::fp16(), ValueFormat::bf16()};
  for (int m = 7; m <= 22; ++m) f.push_back(ValueFormat::e8m(m));
  return f;
}

uint32_t enc(const ValueFormat &f, double x, EncodeStatus *st = nullptr)
{
  EncodeStatus   s;
  const uint32_t b = encode_value(f, x, &s);
  if (st) *st = s;
  else EXPECT_EQ(s, EncodeStatus::Ok) << f.name() << " x = " << x;
  return b;
}

int bias(const ValueFormat &f)
{
  return (1 << (f.exponent_bits - 1)) - 1;
}
double min_subnormal(const ValueFormat &f)
{
  return std::ldexp(1.0, 1 - bias(f) - f.mantissa_bits);
}
double min_normal(const ValueFormat &f)
{
  return std::ldexp(1.0, 1 - bias(f));
}
uint32_t sign_bit(const ValueFormat &f)
{
  return uint32_t(1) << (f.exponent_bits + f.mantissa_bits);
}
uint32_t inf_bits(const ValueFormat &f)
{
  return ((uint32_t(1) << f.exponent_bits) - 1) << f.mantissa_bits;
}

float float_from_bits(uint32_t b)
{
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

} // namespace

TEST(ValueFormat, ParseAndNameRoundTrip)
{
  for (const char *n : {"exact", "fp16", "bf16"}) EXPECT_EQ(ValueFormat::parse(n).name(), n);
  for (int m = 7; m <= 22; ++m) {
    const std::string n = "e8m" + std::to_string(m);
    const ValueFormat f = ValueFormat::parse(n);
    EXPECT_EQ(f.name(), n);
    EXPECT_EQ(f.kind, ValueKind::E8M);
    EXPECT_EQ(f.mantissa_bits, m);
    EXPECT_EQ(f.exponent_bits, 8);
    EXPECT_EQ(f.value_bits(), 9 + m);
  }
  EXPECT_EQ(ValueFormat::fp16().value_bits(), 16);
  EXPECT_EQ(ValueFormat::bf16().value_bits(), 16);
  EXPECT_EQ(ValueFormat::exact().value_bits(), 0);
  EXPECT_FALSE(ValueFormat::exact().lossy());
  EXPECT_TRUE(ValueFormat::bf16().lossy());
}

TEST(ValueFormat, BadNamesAreRefusedWithTheAcceptedList)
{
  for (const char *n : {"", "FP16", "fp32", "e8m", "e8m6", "e8m23", "e8m07", "e8m7x", "e5m10", "float"}) {
    try {
      ValueFormat::parse(n);
      ADD_FAILURE() << "'" << n << "' was accepted";
    } catch (const FormatError &e) {
      const std::string w = e.what();
      EXPECT_NE(w.find("fp16"), std::string::npos) << w;
      EXPECT_NE(w.find("e8m<m>"), std::string::npos) << w;
    }
  }
  EXPECT_THROW(ValueFormat::e8m(6), FormatError);
  EXPECT_THROW(ValueFormat::e8m(23), FormatError);
}

TEST(ValueFormat, MaxFiniteAndUnitRoundoff)
{
  EXPECT_EQ(ValueFormat::fp16().max_finite(), 65504.0);
  EXPECT_EQ(ValueFormat::bf16().max_finite(), 0x1.fep127);
  EXPECT_EQ(ValueFormat::e8m(22).max_finite(), 0x1.fffffcp127);
  EXPECT_EQ(ValueFormat::e8m(14).max_finite(), std::ldexp(double((1 << 15) - 1), 127 - 14));
  EXPECT_EQ(ValueFormat::fp16().unit_roundoff(), 0x1p-11);
  EXPECT_EQ(ValueFormat::bf16().unit_roundoff(), 0x1p-8);
  EXPECT_EQ(ValueFormat::e8m(22).unit_roundoff(), 0x1p-23);
  EXPECT_TRUE(std::isinf(ValueFormat::exact().max_finite()));
  EXPECT_EQ(ValueFormat::exact().unit_roundoff(), 0x1p-53) << "FP64's unit roundoff";
}

// unit_roundoff() is 2^-(M+1) for every format, and it bounds one rounding in the normal
// range: |decode(encode(x)) - x| <= u |x|, attained (to within one FP64 ulp) halfway between
// two neighbours; exact has FP64's 2^-53; lossy() is false only for exact.
TEST(ValueFormat, UnitRoundoffOfEveryFormatBoundsOneRounding)
{
  EXPECT_EQ(ValueFormat::bf16().unit_roundoff(), ValueFormat::e8m(7).unit_roundoff());
  EXPECT_EQ(ValueFormat::e8m(14).unit_roundoff(), 0x1p-15);
  EXPECT_EQ(ValueFormat::exact().unit_roundoff(), std::numeric_limits<double>::epsilon() / 2);
  EXPECT_FALSE(ValueFormat::exact().lossy());
  EXPECT_FALSE(ValueFormat{}.lossy()) << "a default ValueFormat is exact";
  Rng rng(91);
  for (const ValueFormat &f : lossy_formats()) {
    EXPECT_TRUE(f.lossy()) << f.name();
    const double u = f.unit_roundoff();
    EXPECT_EQ(u, std::ldexp(1.0, -(f.mantissa_bits + 1))) << f.name();
    // 1 + u is the tie between 1 and 1 + 2u (the next value): the relative error is u.
    EXPECT_EQ(decode_value(f, enc(f, 1.0 + u)), 1.0) << f.name() << ": ties to even";
    EXPECT_EQ(decode_value(f, enc(f, 1.0 + 1.5 * u)), 1.0 + 2 * u) << f.name();
    double worst = 0.0;
    for (int i = 0; i < 2000; ++i) {
      const double x = std::ldexp(1.0 + rng.uniform(), int(rng.below(21)) - 10);
      const double d = decode_value(f, enc(f, x));
      worst          = std::max(worst, std::fabs(d - x) / std::fabs(x));
    }
    EXPECT_LE(worst, u) << f.name();
    EXPECT_GT(worst, 0.5 * u) << f.name() << ": the bound is nearly reached";
  }
}

TEST(ValueCodec, Fp16ExhaustiveRoundTrip)
{
  const ValueFormat f    = ValueFormat::fp16();
  double            prev = -1.0;
  for (uint32_t b = 0; b < 65536; ++b) {
    const double x        = decode_value(f, b);
    const bool   nan_bits = (b & 0x7c00) == 0x7c00 && (b & 0x3ff);
    if (nan_bits) {
      ASSERT_TRUE(std::isnan(x)) << b;
      const uint32_t e = enc(f, x);
      ASSERT_TRUE((e & 0x7c00) == 0x7c00 && (e & 0x200)) << "NaN must encode as a quiet NaN";
      continue;
    }
    ASSERT_EQ(enc(f, x), b) << "bits " << b << " value " << x;
#ifdef __FLT16_MAX__
    _Float16       h;
    const uint16_t b16 = uint16_t(b);
    std::memcpy(&h, &b16, 2);
    ASSERT_TRUE(double(h) == x && std::signbit(double(h)) == std::signbit(x)) << "decode differs from _Float16 at " << b;
#endif
    if (b <= 0x7c00) { // positive values increase with their bits, Inf last
      ASSERT_GT(x, prev) << b;
      prev = x;
    }
  }
}

TEST(ValueCodec, E8mSampledRoundTripMatchesTruncatedFp32)
{
  Rng rng(11);
  for (int m = 7; m <= 22; ++m) {
    const ValueFormat f       = ValueFormat::e8m(m);
    const uint32_t    all     = uint32_t(1) << (9 + m);
    const uint32_t    samples = m == 7 ? all : 40000;
    for (uint32_t t = 0; t < samples; ++t) {
      uint32_t b = m == 7 ? t : uint32_t(rng.below(all));
      if (m != 7 && t < 8) b = std::vector<uint32_t>{0, 1, inf_bits(f) - 1, inf_bits(f), sign_bit(f), sign_bit(f) | 1, uint32_t(1) << m, (uint32_t(1) << m) - 1}[t];
      const double x = decode_value(f, b);
      // E8Mm is FP32 with the mantissa cut: its bits shifted left are an FP32 of equal value.
      const float ref = float_from_bits(b << (23 - m));
      if (std::isnan(ref)) {
        ASSERT_TRUE(std::isnan(x));
        continue;
      }
      ASSERT_TRUE(double(ref) == x && std::signbit(x) == std::signbit(ref)) << f.name() << " bits " << b;
      ASSERT_EQ(enc(f, x), b) << f.name() << " bits " << b;
    }
  }
  // BF16 is E8M7 bit for bit.
  for (uint32_t b = 0; b < 65536; ++b) {
    const double x = decode_value(ValueFormat::bf16(), b), y = decode_value(ValueFormat::e8m(7), b);
    ASSERT_TRUE((std::isnan(x) && std::isnan(y)) || x == y) << b;
  }
}

// Random doubles over the whole range of each format: the encoded value is a nearest
// neighbour, and a tie picks the even mantissa.
TEST(ValueCodec, RoundsToNearestEvenAgainstNeighbours)
{
  Rng rng(5);
  for (const ValueFormat &f : lossy_formats()) {
    const int      lo = 1 - bias(f) - f.mantissa_bits - 2, hi = bias(f) + 1;
    const uint32_t top = inf_bits(f); // positive finite bits are [0, top)
    for (int t = 0; t < 20000; ++t) {
      const int e = lo + int(rng.below(uint64_t(hi - lo)));
      double    x = std::ldexp(1.0 + rng.uniform(), e);
      if (t % 7 == 0) // exact ties: a representable value plus half an ulp
        x = std::ldexp(std::floor(std::ldexp(1.0 + rng.uniform(), f.mantissa_bits)) + 0.5, e - f.mantissa_bits);
      EncodeStatus   st;
      const uint32_t b = enc(f, x, &st);
      if (st == EncodeStatus::Overflow) {
        ASSERT_GT(x, f.max_finite()) << f.name();
        ASSERT_EQ(b, inf_bits(f));
        continue;
      }
      ASSERT_LT(b, top);
      const double v = decode_value(f, b), err = std::fabs(v - x);
      const double below = b > 0 ? std::fabs(decode_value(f, b - 1) - x) : INFINITY;
      const double above = b + 1 < top ? std::fabs(decode_value(f, b + 1) - x) : INFINITY;
      ASSERT_LE(err, below) << f.name() << " x = " << x;
      ASSERT_LE(err, above) << f.name() << " x = " << x;
      if (err == below || err == above) {
        ASSERT_EQ(b & 1, 0u) << "tie not to even, " << f.name() << " x = " << x;
      }
      ASSERT_EQ(enc(f, -x), b | sign_bit(f)) << "sign symmetry";
      const double allowed = std::fabs(x) >= min_normal(f) ? f.unit_roundoff() * std::fabs(x) : 0.5 * min_subnormal(f);
      ASSERT_LE(err, allowed) << f.name() << " x = " << x;
    }
  }
}

#ifdef __FLT16_MAX__
TEST(ValueCodec, Fp16MatchesFloat16Conversion)
{
  Rng               rng(3);
  const ValueFormat f = ValueFormat::fp16();
  for (int t = 0; t < 200000; ++t) {
    const double   x = std::ldexp(rng.uniform() * 2.0 - 1.0, int(rng.below(44)) - 28);
    const _Float16 h = static_cast<_Float16>(x); // direct FP64 -> FP16, round to nearest even
    uint16_t       hb;
    std::memcpy(&hb, &h, 2);
    EncodeStatus st;
    ASSERT_EQ(encode_value(f, x, &st), hb) << "x = " << x;
  }
}
#endif

TEST(ValueCodec, TiesGoToEven)
{
  const ValueFormat h = ValueFormat::fp16();
  EXPECT_EQ(enc(h, 1.0 + 0x1p-11), 0x3c00u);     // between 1 (even) and 1+2^-10 (odd)
  EXPECT_EQ(enc(h, 1.0 + 3 * 0x1p-11), 0x3c02u); // between mantissa 1 (odd) and 2 (even)
  EXPECT_EQ(enc(h, -(1.0 + 0x1p-11)), 0xbc00u);
  EXPECT_EQ(enc(h, 2048.0 + 1.0), 0x6800u); // ulp 2 at 2048: 2049 ties to 2048
  EXPECT_EQ(enc(h, 2048.0 + 3.0), 0x6802u); // 2051 ties to 2052
  for (const ValueFormat &f : lossy_formats()) {
    const int      M   = f.mantissa_bits;
    const uint32_t one = uint32_t(bias(f)) << M;
    EXPECT_EQ(enc(f, 1.0 + std::ldexp(1.0, -M - 1)), one) << f.name();
    EXPECT_EQ(enc(f, 1.0 + 3 * std::ldexp(1.0, -M - 1)), one + 2) << f.name();
    EXPECT_EQ(enc(f, 1.0 + std::ldexp(1.0, -M - 1) + 0x1p-45), one + 1) << f.name(); // just above the tie
    EXPECT_EQ(enc(f, 1.0 + std::ldexp(1.0, -M - 1) - 0x1p-45), one) << f.name();     // just below
  }
}

// Rounding FP64 -> FP32 -> format would round twice; the codec must not.
TEST(ValueCodec, NoDoubleRoundingThroughFloat)
{
  for (const ValueFormat &f : lossy_formats()) {
    const int    M = f.mantissa_bits;
    const double x = 1.0 + std::ldexp(1.0, -M - 1) + 0x1p-40; // above the tie in FP64 only
    ASSERT_EQ(double(float(x)), 1.0 + std::ldexp(1.0, -M - 1)) << "FP32 would land on the tie";
    EXPECT_EQ(enc(f, x), (uint32_t(bias(f)) << M) + 1) << f.name();
  }
}

TEST(ValueCodec, LargestFiniteAndFirstOverflow)
{
  for (const ValueFormat &f : lossy_formats()) {
    const double   mf       = f.max_finite();
    const double   half_ulp = std::ldexp(1.0, bias(f) - f.mantissa_bits - 1);
    const uint32_t max_bits = inf_bits(f) - 1;
    EncodeStatus   st;
    EXPECT_EQ(enc(f, mf), max_bits) << f.name();
    EXPECT_EQ(decode_value(f, max_bits), mf);
    EXPECT_EQ(enc(f, std::nextafter(mf + half_ulp, 0.0)), max_bits) << "just below the tie rounds down";
    EXPECT_EQ(encode_value(f, mf + half_ulp, &st), inf_bits(f)) << "the tie goes to even = overflow";
    EXPECT_EQ(st, EncodeStatus::Overflow) << f.name();
    EXPECT_EQ(encode_value(f, -(mf + half_ulp), &st), inf_bits(f) | sign_bit(f));
    EXPECT_EQ(st, EncodeStatus::Overflow);
    EXPECT_EQ(encode_value(f, 1e300, &st), inf_bits(f));
    EXPECT_EQ(st, EncodeStatus::Overflow);
    EXPECT_EQ(encode_value(f, std::numeric_limits<double>::max(), &st), inf_bits(f));
    EXPECT_EQ(st, EncodeStatus::Overflow);
  }
  EncodeStatus st;
  EXPECT_EQ(encode_value(ValueFormat::fp16(), 65519.99, &st), 0x7bffu);
  EXPECT_EQ(st, EncodeStatus::Ok);
  EXPECT_EQ(encode_value(ValueFormat::fp16(), 65520.0, &st), 0x7c00u);
  EXPECT_EQ(st, EncodeStatus::Overflow);
}

TEST(ValueCodec, Subnormals)
{
  const ValueFormat h = ValueFormat::fp16();
  EXPECT_EQ(enc(h, 0x1p-24), 0x0001u);
  EXPECT_EQ(enc(h, 1023 * 0x1p-24), 0x03ffu);
  EXPECT_EQ(enc(h, 0x1p-14), 0x0400u);
  EXPECT_EQ(decode_value(h, 0x0001), 0x1p-24);
  EXPECT_EQ(decode_value(h, 0x03ff), 1023 * 0x1p-24);
  for (const ValueFormat &f : lossy_formats()) {
    const double   ms           = min_subnormal(f);
    const uint32_t first_normal = uint32_t(1) << f.mantissa_bits;
    EXPECT_EQ(enc(f, ms), 1u) << f.name();
    EXPECT_EQ(decode_value(f, 1), ms) << f.name();
    EXPECT_EQ(enc(f, 0.5 * ms), 0u) << "half the smallest subnormal ties to zero, " << f.name();
    EXPECT_EQ(enc(f, std::nextafter(0.5 * ms, 1.0)), 1u) << f.name();
    EXPECT_EQ(enc(f, 1.5 * ms), 2u) << "tie between 1 and 2 goes to 2, " << f.name();
    EXPECT_EQ(enc(f, 2.5 * ms), 2u) << "tie between 2 and 3 goes to 2, " << f.name();
    EXPECT_EQ(decode_value(f, first_normal - 1), min_normal(f) - ms) << "largest subnormal, " << f.name();
    EXPECT_EQ(enc(f, min_normal(f) - ms), first_normal - 1) << f.name();
    EXPECT_EQ(enc(f, min_normal(f) - 0.5 * ms), first_normal) << "rounds up into the normal range, " << f.name();
    EXPECT_EQ(enc(f, min_normal(f)), first_normal) << f.name();
    EXPECT_EQ(enc(f, -0.25 * ms), sign_bit(f)) << "underflow keeps the sign, " << f.name();
    EXPECT_EQ(enc(f, 5e-324), 0u) << "an FP64 subnormal underflows, " << f.name();
    EXPECT_EQ(enc(f, -5e-324), sign_bit(f)) << f.name();
  }
}

TEST(ValueCodec, SignedZeroNanInf)
{
  for (const ValueFormat &f : lossy_formats()) {
    EXPECT_EQ(enc(f, 0.0), 0u);
    EXPECT_EQ(enc(f, -0.0), sign_bit(f));
    EXPECT_EQ(decode_value(f, 0), 0.0);
    EXPECT_FALSE(std::signbit(decode_value(f, 0)));
    EXPECT_TRUE(std::signbit(decode_value(f, sign_bit(f))) && decode_value(f, sign_bit(f)) == 0.0);

    EncodeStatus   st;
    const uint32_t n = encode_value(f, std::numeric_limits<double>::quiet_NaN(), &st);
    EXPECT_EQ(st, EncodeStatus::Ok) << "NaN is not an overflow";
    EXPECT_EQ(n & inf_bits(f), inf_bits(f));
    EXPECT_NE(n & (uint32_t(1) << (f.mantissa_bits - 1)), 0u) << "quiet bit set";
    EXPECT_TRUE(std::isnan(decode_value(f, n)));
    const uint32_t sn = encode_value(f, std::numeric_limits<double>::signaling_NaN(), &st);
    EXPECT_TRUE(std::isnan(decode_value(f, sn)));
    EXPECT_NE(sn & (uint32_t(1) << (f.mantissa_bits - 1)), 0u) << "a signalling NaN becomes quiet";

    EXPECT_EQ(encode_value(f, INFINITY, &st), inf_bits(f));
    EXPECT_EQ(st, EncodeStatus::Ok) << "Inf stays Inf without an overflow status";
    EXPECT_EQ(encode_value(f, -INFINITY, &st), inf_bits(f) | sign_bit(f));
    EXPECT_EQ(decode_value(f, inf_bits(f)), INFINITY);
    EXPECT_EQ(decode_value(f, inf_bits(f) | sign_bit(f)), -INFINITY);
  }
}
