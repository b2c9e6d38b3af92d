#include "format_spec.hpp"
#include "matrix_source.hpp"

#include <petscspmv.h>

#include <petscmat.h>

#include <cctype>
#include <stdexcept>

namespace bench
{

std::string option_value(const FormatSpec &f, const std::string &name)
{
  for (auto &o : f.options)
    if (o.first == name) return o.second;
  return "";
}

FormatSpec parse_format(const std::string &spec, bool cpu)
{
  FormatSpec               f;
  std::vector<std::string> t = split(spec, ':');
  if (t.empty()) throw std::runtime_error("empty format name in -formats");
  f.name   = spec;
  f.family = t[0];
  auto kv  = [&](const std::string &tok, std::string &k, std::string &v) {
    const size_t e = tok.find('=');
    if (e == std::string::npos) return false;
    k = tok.substr(0, e);
    v = tok.substr(e + 1);
    return true;
  };
  const std::string fam = f.family;
  std::string       k, v;
  if (fam == "aijcusparse" || fam == "sellcuda") {
    f.mattype = fam == "aijcusparse" ? (cpu ? MATSEQAIJ : MATSEQAIJCUSPARSE) : (cpu ? MATSEQSELL : MATSEQSELLCUDA);
    for (size_t i = 1; i < t.size(); ++i) {
      if (kv(t[i], k, v) && k.rfind("mat_", 0) == 0) f.options.emplace_back(k, v);
      else throw std::runtime_error("format '" + spec + "': unknown token '" + t[i] + "'");
    }
  } else if (fam == "rgcsrcuda") {
    f.mattype = cpu ? MATRGCSR : MATRGCSRCUDA;
    for (size_t i = 1; i < t.size(); ++i) {
      if (t[i].size() > 1 && t[i][0] == 'g' && std::isdigit((unsigned char)t[i][1])) f.options.emplace_back("mat_rgcsr_group_size", t[i].substr(1));
      else if (kv(t[i], k, v) && (k == "hyb" || k == "hybrid")) f.options.emplace_back("mat_rgcsr_hybrid", v);
      else if (kv(t[i], k, v) && k.rfind("mat_", 0) == 0) f.options.emplace_back(k, v);
      else throw std::runtime_error("format '" + spec + "': unknown token '" + t[i] + "' (g<G>, hyb=auto|none|K, mat_<option>=<value>)");
    }
  } else if (fam == "packsellcuda") {
    f.mattype = cpu ? MATPACKSELL : MATPACKSELLCUDA;
    for (size_t i = 1; i < t.size(); ++i) {
      if (!kv(t[i], k, v)) {
        f.value_format = t[i];
        f.options.emplace_back("mat_packsell_value_format", t[i]);
      } else if (k == "hyb" || k == "hybrid") f.options.emplace_back("mat_packsell_hybrid", v);
      else if (k == "scaling") {
        f.options.emplace_back("mat_packsell_scaling", v);
        f.explicit_scaling = true;
      } else if (k == "C") f.options.emplace_back("mat_packsell_slice_height", v);
      else if (k == "sigma") f.options.emplace_back("mat_packsell_sigma", v);
      else if (k.rfind("mat_", 0) == 0) f.options.emplace_back(k, v);
      else throw std::runtime_error("format '" + spec + "': unknown token '" + t[i] + "'");
    }
    if (f.value_format.empty()) f.value_format = "exact"; // the type's default (lossless)
  } else if (fam == "cusparse_csr" || fam == "cusparse_sell") {
    f.petsc        = false;
    f.value_format = t.size() > 1 ? t[1] : "fp64";
    if (t.size() > 2 || (f.value_format != "fp64" && f.value_format != "fp16")) throw std::runtime_error("format '" + spec + "': use " + fam + ":fp64 or " + fam + ":fp16");
  } else throw std::runtime_error("unknown format family '" + fam + "' in '" + spec + "'");
  return f;
}

} // namespace bench
