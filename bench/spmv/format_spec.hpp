// The -formats tokens of spmv_bench: family, PETSc type, options for the one MatConvert, value
// format and its rounding bound.
#pragma once
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace bench
{

struct FormatSpec {
  std::string                                      name;         // as given in -formats: the CSV "format" column
  std::string                                      family;       // aijcusparse sellcuda rgcsrcuda packsellcuda cusparse_csr cusparse_sell
  std::string                                      mattype;      // PETSc type MatConvert goes to (PETSc families)
  std::vector<std::pair<std::string, std::string>> options;      // option name (no '-') and value
  std::string                                      value_format; // packsell / cusparse precision
  bool                                             explicit_scaling = false;
  bool                                             petsc            = true;

  bool lossy() const { return family == "packsellcuda" ? value_format != "exact" : value_format == "fp16"; }
  // relative rounding bound of one stored value (and, for cusparse fp16, of x, y and FP32 sums)
  double error_bound() const
  {
    const double dbl = 1e-13;
    if (!lossy()) return dbl;
    if (family == "packsellcuda") {
      if (value_format == "fp16") return std::ldexp(1.0, -11) + dbl;
      if (value_format == "bf16") return std::ldexp(1.0, -8) + dbl;
      if (value_format.rfind("e8m", 0) == 0) return std::ldexp(1.0, -(std::atoi(value_format.c_str() + 3) + 1)) + dbl;
    }
    return 3 * std::ldexp(1.0, -11) + 1e-6; // cusparse fp16: A, x and y rounded, FP32 accumulation
  }
};

// Value of option name (no '-') in f.options, "" when not set.
std::string option_value(const FormatSpec &f, const std::string &name);
// Parses one -formats token (cpu: the host types instead of the CUDA ones); throws
// std::runtime_error naming the token.
FormatSpec parse_format(const std::string &spec, bool cpu);

} // namespace bench
