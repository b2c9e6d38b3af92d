// The formats of the registry (src/formats/registry.hpp) as the glue sees them, and the
// option set of one matrix (PETSc-free): parsing, validation, canonical names. The rules live
// in each format's module and builder; nothing here names a format.
#pragma once
#include "formats/registry.hpp"

#include <cassert>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>

namespace pspmv
{
namespace glue
{

template <class List>
struct Registry;
template <class... M>
struct Registry<ModuleList<M...>> {
  using Options = std::variant<typename M::Options...>;
  template <size_t I>
  using Module                 = std::tuple_element_t<I, std::tuple<M...>>;
  static constexpr size_t size = sizeof...(M);
};
using Formats = Registry<Modules>;

/* A format of the registry: its position in Modules. */
struct Format {
  size_t index = 0;
  bool   operator==(Format o) const { return index == o.index; }
  bool   operator!=(Format o) const { return index != o.index; }
};

/* The format of module M. */
template <class M, size_t I = 0>
constexpr Format FormatOf()
{
  static_assert(I < Formats::size, "the module is not in the registry (src/formats/registry.hpp)");
  if constexpr (std::is_same_v<M, typename Formats::template Module<I>>) return Format{I};
  else return FormatOf<M, I + 1>();
}

/* Calls fn(Module{}) with the module of format f (Module: a type of Modules) and returns its result. */
template <class Fn, size_t I = 0>
decltype(auto) WithModule(Format f, Fn &&fn)
{
  if constexpr (I == 0) assert(f.index < Formats::size);
  if constexpr (I + 1 < Formats::size) {
    if (f.index != I) return WithModule<Fn, I + 1>(f, static_cast<Fn &&>(fn));
  }
  return fn(typename Formats::template Module<I>{});
}

const char *FormatName(Format f);  /* "rgcsr": the -mat_rgcsr_* options */
const char *FormatTitle(Format f); /* "RgCSR" */
/* Whether the format stores its values times 2^scale_exponent (MatView shows the exponent). */
bool FormatScaled(Format f);

/* One user-visible option of a format (OptionSpec of its module, without the typed functions). */
struct OptionInfo {
  const char *key, *title, *help, *setter;
  bool        integer;
  const char *refused_by_copies; /* OptionSpec's: why a solver's copy refuses it, or null */
};
size_t     NumOptions(Format f);
OptionInfo OptionAt(Format f, size_t i);

/* The option set of one matrix, of one format. */
class FormatOptions {
public:
  explicit FormatOptions(Format f = Format{}); /* the defaults of format f */
  Format format() const { return Format{v_.index()}; }

  /* Sets the option `key` ("group_size") from an integer or a string (as the option is) and,
     with validate, checks the whole set with the core builder. Throws FormatError (a full
     sentence naming the option, the bad value and what is accepted): *this is unchanged then.
     Without validate only the value itself is parsed (a batch of options is validated once at
     the end, so their order does not matter). */
  void      Set(const std::string &key, long long ivalue, const char *svalue, bool validate = true);
  bool      IsInteger(const std::string &key) const; /* an integer option (else a string one) */
  long long GetInt(const std::string &key) const;    /* integer options */
  /* Options the builder resolves (format_module.hpp, OptionSpec::built), and the value of one
     in a layout with statistics s. */
  bool        ResolvedByBuild(const std::string &key) const;
  long long   BuiltValue(const std::string &key, const FormatStats &s) const;
  std::string GetString(const std::string &key) const; /* canonical string ("fp16", "auto", "48") */
  /* Spells the options as the user sets them, for the core's messages: prefix is the options
     prefix with the format's part ("-sub_mat_packsell_", "-ksp_mixedcg_mat_packsell_"). */
  void NameOptions(const std::string &prefix);
  /* Throws FormatError if the core builder does not accept the set. */
  void           Validate() const;
  std::string    Describe() const;   /* one line for MatView: "group size 32, hybrid auto" */
  std::string    ValuesNote() const; /* MatView's line on the stored values ("" if they are the matrix's) */
  bool           Lossy() const;      /* rounded values: a build or value update may refuse a value */
  LayoutOrdering Ordering() const;   /* the order the layout stores rows and columns in (every format's option) */
  bool           operator==(const FormatOptions &o) const { return format() == o.format() && Describe() == o.Describe(); }
  bool           operator!=(const FormatOptions &o) const { return !(*this == o); }

  /* The options of module M's format (the set must be of that format). */
  template <class M>
  const typename M::Options &Of() const
  {
    return std::get<typename M::Options>(v_);
  }

private:
  Formats::Options v_;
};

} // namespace glue
} // namespace pspmv
