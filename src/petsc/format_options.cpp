// Format options: key -> core field mapping, validation through the core builders.
#include "format_options.hpp"

#include <climits>

namespace pspmv {
namespace glue {

namespace {

const char *KeyName(OptionKey key) {
  switch (key) {
  case OptionKey::GroupSize: return "group size";
  case OptionKey::SliceHeight: return "slice height";
  case OptionKey::Sigma: return "sigma";
  case OptionKey::ValueFormat: return "value format";
  case OptionKey::Scaling: return "scaling";
  case OptionKey::Hybrid: return "hybrid";
  }
  return "option";
}

bool Belongs(Format f, OptionKey key) {
  switch (key) {
  case OptionKey::GroupSize: return f == Format::RgCSR;
  case OptionKey::Hybrid: return true;
  default: return f == Format::PackSELL;
  }
}

int32_t ToInt32(OptionKey key, long long v) {
  if (v < INT32_MIN || v > INT32_MAX)
    throw FormatError(std::string(KeyName(key)) + " " + std::to_string(v) + " is out of the 32-bit integer range");
  return static_cast<int32_t>(v);
}

PackSellScaling ParseScaling(const std::string &s) {
  if (s == "none") return PackSellScaling::None;
  if (s == "auto") return PackSellScaling::Auto;
  throw FormatError("PackSELL scaling '" + s + "' is not valid: use none or auto");
}

} // namespace

const char *FormatTitle(Format f) { return f == Format::RgCSR ? "RgCSR" : "PackSELL"; }

bool IsIntegerOption(OptionKey key) {
  return key == OptionKey::GroupSize || key == OptionKey::SliceHeight || key == OptionKey::Sigma;
}

void FormatOptions::Set(Format f, OptionKey key, long long ivalue, const char *svalue, bool validate) {
  if (!Belongs(f, key)) throw FormatError(std::string("the ") + KeyName(key) + " option does not apply to " + FormatTitle(f) + " matrices");
  if (!IsIntegerOption(key) && !svalue) throw FormatError(std::string("the ") + KeyName(key) + " option needs a string value");
  FormatOptions o = *this;
  const std::string s = svalue ? svalue : "";
  switch (key) {
  case OptionKey::GroupSize: o.rgcsr.group_size = ToInt32(key, ivalue); break;
  case OptionKey::SliceHeight: o.packsell.slice_height = ToInt32(key, ivalue); break;
  case OptionKey::Sigma:
    // 0 is the core's auto, not a window: through PETSc only PETSC_DECIDE asks for the choice
    if (ivalue != kSigmaDecide && ivalue < 1)
      throw FormatError("PackSELL sigma " + std::to_string(ivalue) +
                        " is not valid: use PETSC_DECIDE (chosen from the row lengths), 1 (no sorting) or a positive multiple of the slice height");
    o.packsell.sigma = ivalue == kSigmaDecide ? kPackSellSigmaAuto : ToInt32(key, ivalue);
    break;
  case OptionKey::ValueFormat: o.packsell.value_format = ValueFormat::parse(s); break;
  case OptionKey::Scaling: o.packsell.scaling = ParseScaling(s); break;
  case OptionKey::Hybrid:
    if (f == Format::RgCSR) o.rgcsr.hybrid = HybridOption::parse(s);
    else o.packsell.hybrid = HybridOption::parse(s);
    break;
  }
  if (validate) o.Validate(f);
  *this = o;
}

long long FormatOptions::GetInt(OptionKey key) const {
  switch (key) {
  case OptionKey::GroupSize: return rgcsr.group_size;
  case OptionKey::SliceHeight: return packsell.slice_height;
  case OptionKey::Sigma: return packsell.sigma == kPackSellSigmaAuto ? kSigmaDecide : packsell.sigma;
  default: throw FormatError(std::string("the ") + KeyName(key) + " option is a string, not an integer");
  }
}

std::string FormatOptions::GetString(Format f, OptionKey key) const {
  switch (key) {
  case OptionKey::ValueFormat: return packsell.value_format.name();
  case OptionKey::Scaling: return packsell.scaling == PackSellScaling::Auto ? "auto" : "none";
  case OptionKey::Hybrid: return f == Format::RgCSR ? rgcsr.hybrid.name() : packsell.hybrid.name();
  default: return std::to_string(GetInt(key));
  }
}

void FormatOptions::Validate(Format f) const {
  // The builders check their options before reading the matrix: an empty matrix costs nothing
  // and keeps the rules in one place (the core).
  static const int32_t zero = 0;
  CsrView              empty;
  empty.rowptr = &zero;
  if (f == Format::RgCSR) (void)build_rgcsr(empty, rgcsr);
  else (void)build_packsell(empty, packsell);
}

std::string FormatOptions::Describe(Format f) const {
  if (f == Format::RgCSR) return "group size " + std::to_string(rgcsr.group_size) + ", hybrid " + rgcsr.hybrid.name();
  const std::string sigma = packsell.sigma == kPackSellSigmaAuto ? "auto" : std::to_string(packsell.sigma);
  return "slice height " + std::to_string(packsell.slice_height) + ", sigma " + sigma + ", value format " + packsell.value_format.name() +
         ", scaling " + GetString(f, OptionKey::Scaling) + ", hybrid " + packsell.hybrid.name();
}

} // namespace glue
} // namespace pspmv
