// Reduced-precision value formats packed into PackSELL words (PETSc-free).
//
// Every format is a sign bit, E exponent bits with IEEE bias 2^(E-1)-1, and M mantissa bits,
// with IEEE semantics: exponent field 0 holds zero and subnormals, all ones holds Inf/NaN.
//   FP16  : E=5, M=10  (IEEE binary16)
//   BF16  : E=8, M=7   (bfloat16; the same bits as E8M7)
//   E8Mm  : E=8, M=m, m in [7, 22]  (FP32 with its mantissa cut to m bits; PackSELL paper)
//   Exact : no value bits; the FP64 value is stored beside the word (lossless: the default of
//           PackSellOptions; the lossy formats are used only when asked for)
// Encoding rounds FP64 to nearest, ties to even, directly (no double rounding through FP32).
#pragma once
#include <cstdint>
#include <string>

namespace pspmv
{

enum class ValueKind : int {
  Exact = 0,
  FP16  = 1,
  BF16  = 2,
  E8M   = 3
};

struct ValueFormat {
  ValueKind kind          = ValueKind::Exact;
  int       mantissa_bits = 0; // M (10 for FP16, 7 for BF16, m for E8Mm, 0 for Exact)
  int       exponent_bits = 0; // E (5 for FP16, 8 otherwise, 0 for Exact)

  // Named constructors; e8m() throws FormatError unless 7 <= m <= 22.
  static ValueFormat exact();
  static ValueFormat fp16();
  static ValueFormat bf16();
  static ValueFormat e8m(int m);
  // Parses "exact", "fp16", "bf16", "e8m<m>" (case-sensitive, as PETSc option values are
  // given); throws FormatError listing the accepted names otherwise.
  static ValueFormat parse(const std::string &name);
  std::string        name() const; // inverse of parse

  int    value_bits() const { return kind == ValueKind::Exact ? 0 : 1 + exponent_bits + mantissa_bits; }
  bool   lossy() const { return kind != ValueKind::Exact; }
  bool   operator==(const ValueFormat &o) const { return kind == o.kind && mantissa_bits == o.mantissa_bits && exponent_bits == o.exponent_bits; }
  bool   operator!=(const ValueFormat &o) const { return !(*this == o); }
  double max_finite() const; // largest finite magnitude (inf for Exact)
  // Unit roundoff: the relative error bound of one round-to-nearest into the format,
  // 2^-p with p = M + 1 significand bits: FP16 2^-11, BF16 2^-8, E8Mm 2^-(m+1), and for Exact
  // FP64's 2^-53 (the values are FP64 as given: no rounding beyond the FP64 arithmetic).
  // Valid in the format's normal range; below it the error is absolute (half a subnormal).
  double unit_roundoff() const;
};

enum class EncodeStatus : int {
  Ok       = 0,
  Overflow = 1
};

// Encodes x into the low value_bits() bits of the result. A finite x whose rounded
// magnitude exceeds max_finite() gives Overflow (the bits are then the signed Inf).
// NaN encodes as a quiet NaN, +-Inf as +-Inf, -0 as -0. Not for Exact.
uint32_t encode_value(const ValueFormat &f, double x, EncodeStatus *status);
// Decodes value_bits() bits exactly to FP64. Not for Exact.
double decode_value(const ValueFormat &f, uint32_t bits);

} // namespace pspmv
