// What a format module declares (PETSc-free): the options a user sets, with their help text,
// parsing and canonical names, so that the PETSc glue can list, read, set and get them without
// knowing the format. Each format's module (src/formats/<format>/<format>_module.hpp) is a
// struct with:
//   using Options, Host;                     the option set and the host layout
//   static constexpr const char *name, *title;   "rgcsr" (-mat_rgcsr_*), "RgCSR" (messages)
//   static constexpr OptionSpec<Options> options[num_options]; static constexpr size_t num_options;
//   static void name_options(Options &, const std::string &prefix);   how messages spell the
//                                                  options ("-sub_mat_packsell_" + key)
//   static Host build(const CsrView &, const Options &);   the layout (throws FormatError,
//                                                          ValueRangeError)
//   static void update(const CsrView &, Host &);   same pattern, new values
//   static void spmv(const Host &, const double *x, double *y, bool add);
//   static void diagonal(const Host &, double *d);
//   static int scale_exponent(const Host &);       values stored times 2^this (0: none)
//   static constexpr bool scaled;                  whether scale_exponent can be nonzero
//   static std::string describe(const Options &);  one line for MatView
//   static std::string values_note(const Options &); MatView's line on the stored values
//                                                  ("" when the values are the matrix's)
//   static bool lossy(const Options &);            the layout holds rounded values (a build or
//                                                  update may refuse a value out of range)
// The registry (src/formats/registry.hpp) lists the modules.
#pragma once
#include "core/csr.hpp"
#include "core/format_stats.hpp"
#include "core/hybrid.hpp"
#include "core/layout_ordering.hpp"
#include <cstdint>
#include <string>

namespace pspmv
{

// One user-visible option of a format: -mat_<format>_<key>, and one setter/getter pair.
template <class Options>
struct OptionSpec {
  const char *key;     // "group_size"
  const char *title;   // "group size", in messages
  const char *help;    // the -help text
  const char *setter;  // the public setter ("MatRgCSRSetGroupSize"), -help's man page
  bool        integer; // an integer option (else a string)
  // Sets the option from ivalue (integer options) or svalue (string options); throws
  // FormatError with a full sentence for a value that does not parse. Whether the option set
  // as a whole is valid is the builder's to say (Validate in the glue).
  void (*set)(Options &, long long ivalue, const std::string &svalue);
  // Integer options: the value (null for string options, which have none).
  long long (*get_int)(const Options &);
  // The canonical string: "fp16", "auto", "32"...
  std::string (*get_string)(const Options &);
  // Options the builder resolves (PackSELL's automatic sigma): the value the layout was built
  // with, which a getter reports once the matrix is assembled. Null for the others.
  long long (*built)(const FormatStats &) = nullptr;
  // Options a solver's reduced-precision copy (KSPMIXEDCG, PCMIXEDKRYLOV) refuses: why, for the
  // error. Null for the others.
  const char *refused_by_copies = nullptr;
};

// The value of an integer option that asks the builder to choose (PETSc's PETSC_DECIDE; the
// glue checks that they agree).
constexpr long long kOptionDecide = -1;

namespace detail
{
// A 32-bit option value, or a FormatError naming the option.
inline int32_t option_int32(const char *title, long long v)
{
  if (v < INT32_MIN || v > INT32_MAX) throw FormatError(std::string(title) + " " + std::to_string(v) + " is out of the 32-bit integer range");
  return static_cast<int32_t>(v);
}
} // namespace detail

namespace detail
{
constexpr bool same_key(const char *a, const char *b)
{
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}
} // namespace detail

// Whether module M has the option `key` (checked at compile time where the glue names one).
template <class M>
constexpr bool HasOption(const char *key)
{
  for (const auto &s : M::options)
    if (detail::same_key(s.key, key)) return true;
  return false;
}

// The hybrid option every format with a COO tail has (field Options::hybrid).
template <class Options>
constexpr OptionSpec<Options> hybrid_option_spec(const char *setter)
{
  return {"hybrid",
          "hybrid",
          "Hybrid split: auto, none, or the width K of the regular part (the rest goes to a COO tail)",
          setter,
          false,
          [](Options &o, long long, const std::string &s) { o.hybrid = HybridOption::parse(s); },
          nullptr,
          [](const Options &o) { return o.hybrid.name(); }};
}

// The ordering's part of a format's describe() line: nothing for the default.
inline std::string ordering_note(LayoutOrdering o)
{
  return o == LayoutOrdering::Rcm ? ", ordering rcm" : "";
}

// The ordering option of every format (field Options::ordering).
template <class Options>
constexpr OptionSpec<Options> ordering_option_spec(const char *setter)
{
  return {"ordering",
          "ordering",
          "Order the layout stores rows and columns in: natural (the matrix's) or rcm (reverse Cuthill-McKee of a square matrix or MPI diagonal block; the product gathers x and scatters y)",
          setter,
          false,
          [](Options &o, long long, const std::string &s) { o.ordering = parse_layout_ordering(s); },
          nullptr,
          [](const Options &o) { return layout_ordering_name(o.ordering); },
          nullptr,
          "a solver's reduced-precision copy keeps the matrix's order; the ordering option applies to the layouts of the Mat types"};
}

} // namespace pspmv
