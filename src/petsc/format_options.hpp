// Format options of one matrix (PETSc-free part): parsing, validation, canonical names.
// The rules themselves live in the core; this only maps option keys to core fields.
#pragma once
#include "formats/packsell/packsell.hpp"
#include "formats/rgcsr/rgcsr.hpp"

#include <string>

namespace pspmv {
namespace glue {

enum class Format : int { RgCSR = 0, PackSELL = 1 };

// One user-visible option (one -mat_<format>_<name> and one setter/getter pair each).
enum class OptionKey : int { GroupSize = 0, SliceHeight, Sigma, ValueFormat, Scaling, Hybrid };
constexpr int kNumOptionKeys = 6;

// "RgCSR" or "PackSELL".
const char *FormatTitle(Format f);
// True for the integer options (their bad values are out-of-range errors), false for strings.
bool IsIntegerOption(OptionKey key);

// The sigma option's value for "choose from the row lengths" (core kPackSellSigmaAuto): PETSc's
// PETSC_DECIDE, checked in options.cpp.
constexpr long long kSigmaDecide = -1;

struct FormatOptions {
  RgCsrOptions    rgcsr;
  PackSellOptions packsell;

  // Sets one option from an integer (GroupSize, SliceHeight, Sigma) or a string (the others) and,
  // with validate, checks the whole option set of format f with the core builder. Throws
  // FormatError (a full sentence naming the option, the bad value and what is accepted); *this
  // is unchanged then. Without validate only the value itself is parsed (a batch of options is
  // validated once at the end, so their order does not matter).
  void Set(Format f, OptionKey key, long long ivalue, const char *svalue, bool validate = true);
  // Integer value of an integer option (sigma: kSigmaDecide when it is chosen automatically).
  long long GetInt(OptionKey key) const;
  // Canonical string of a string option ("fp16", "auto", "none", "48", ...).
  std::string GetString(Format f, OptionKey key) const;
  // Throws FormatError if the option set of format f is not accepted by the core builder.
  void Validate(Format f) const;
  // One line for MatView: "group size 32, hybrid auto".
  std::string Describe(Format f) const;

  bool Equals(Format f, const FormatOptions &o) const { return Describe(f) == o.Describe(f); }
};

} // namespace glue
} // namespace pspmv
