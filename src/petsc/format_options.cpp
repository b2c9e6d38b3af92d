// The option sets of the registry's formats: lookup of an option by key, validation through
// the core builders.
#include "format_options.hpp"

namespace pspmv
{
namespace glue
{

namespace
{

/* The module's option `key`, or a FormatError saying that the format has no such option. */
template <class M>
const OptionSpec<typename M::Options> &Spec(const std::string &key)
{
  for (const auto &s : M::options)
    if (key == s.key) return s;
  std::string title = key;
  for (char &c : title)
    if (c == '_') c = ' ';
  throw FormatError("the " + title + " option does not apply to " + M::title + " matrices");
}

template <size_t... I>
Formats::Options Defaults(Format f, std::index_sequence<I...>)
{
  Formats::Options v;
  ((f.index == I ? (void)v.template emplace<I>() : (void)0), ...);
  return v;
}

} // namespace

const char *FormatName(Format f)
{
  return WithModule(f, [](auto m) { return decltype(m)::name; });
}
const char *FormatTitle(Format f)
{
  return WithModule(f, [](auto m) { return decltype(m)::title; });
}
bool FormatScaled(Format f)
{
  return WithModule(f, [](auto m) { return decltype(m)::scaled; });
}
size_t NumOptions(Format f)
{
  return WithModule(f, [](auto m) { return decltype(m)::num_options; });
}
OptionInfo OptionAt(Format f, size_t i)
{
  return WithModule(f, [i](auto m) {
    const auto &s = decltype(m)::options[i];
    return OptionInfo{s.key, s.title, s.help, s.setter, s.integer, s.refused_by_copies};
  });
}

FormatOptions::FormatOptions(Format f) : v_(Defaults(f, std::make_index_sequence<Formats::size>{})) { }

void FormatOptions::Set(const std::string &key, long long ivalue, const char *svalue, bool validate)
{
  FormatOptions o = *this;
  WithModule(format(), [&](auto m) {
    using M          = decltype(m);
    const auto &spec = Spec<M>(key);
    if (!spec.integer && !svalue) throw FormatError(std::string("the ") + spec.title + " option needs a string value");
    spec.set(std::get<typename M::Options>(o.v_), ivalue, svalue ? svalue : "");
  });
  if (validate) o.Validate();
  *this = o;
}

void FormatOptions::NameOptions(const std::string &prefix)
{
  WithModule(format(), [&](auto m) {
    using M = decltype(m);
    M::name_options(std::get<typename M::Options>(v_), prefix);
  });
}

bool FormatOptions::IsInteger(const std::string &key) const
{
  return WithModule(format(), [&](auto m) { return Spec<decltype(m)>(key).integer; });
}

long long FormatOptions::GetInt(const std::string &key) const
{
  return WithModule(format(), [&](auto m) {
    using M          = decltype(m);
    const auto &spec = Spec<M>(key);
    if (!spec.integer) throw FormatError(std::string("the ") + spec.title + " option is a string, not an integer");
    return spec.get_int(std::get<typename M::Options>(v_));
  });
}

bool FormatOptions::ResolvedByBuild(const std::string &key) const
{
  return WithModule(format(), [&](auto m) { return Spec<decltype(m)>(key).built != nullptr; });
}

long long FormatOptions::BuiltValue(const std::string &key, const FormatStats &s) const
{
  return WithModule(format(), [&](auto m) { return Spec<decltype(m)>(key).built(s); });
}

std::string FormatOptions::GetString(const std::string &key) const
{
  return WithModule(format(), [&](auto m) {
    using M = decltype(m);
    return Spec<M>(key).get_string(std::get<typename M::Options>(v_));
  });
}

void FormatOptions::Validate() const
{
  // The builders check their options before reading the matrix: an empty matrix costs nothing
  // and keeps the rules in one place (the core).
  static const int32_t zero = 0;
  CsrView              empty;
  empty.rowptr = &zero;
  WithModule(format(), [&](auto m) {
    using M = decltype(m);
    (void)M::build(empty, std::get<typename M::Options>(v_));
  });
}

std::string FormatOptions::Describe() const
{
  return WithModule(format(), [&](auto m) {
    using M = decltype(m);
    return M::describe(std::get<typename M::Options>(v_));
  });
}

bool FormatOptions::Lossy() const
{
  return WithModule(format(), [&](auto m) {
    using M = decltype(m);
    return M::lossy(std::get<typename M::Options>(v_));
  });
}

LayoutOrdering FormatOptions::Ordering() const
{
  return WithModule(format(), [&](auto m) { return Of<decltype(m)>().ordering; });
}

std::string FormatOptions::ValuesNote() const
{
  return WithModule(format(), [&](auto m) {
    using M = decltype(m);
    return M::values_note(std::get<typename M::Options>(v_));
  });
}

} // namespace glue
} // namespace pspmv
