// The shared matrix files (PETSCSPMV_MATRIX_DIR) as GoogleTest parameters: the small ones (the
// sanitizer subset) and the others, and their test names.
#pragma once
#include <gtest/gtest.h>
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace gputest
{

inline std::string matrix_dir()
{
  if (const char *e = std::getenv("PETSCSPMV_MATRIX_DIR"); e && *e) return e;
#ifdef PETSCSPMV_MATRIX_DIR
  return PETSCSPMV_MATRIX_DIR;
#else
  return "../shared/matrices";
#endif
}

inline std::string stem(const std::string &file)
{
  std::string s = file;
  for (const char *ext : {".gz", ".mtx"})
    if (s.size() > std::strlen(ext) && s.compare(s.size() - std::strlen(ext), std::string::npos, ext) == 0) s.resize(s.size() - std::strlen(ext));
  return s;
}

// Small enough for compute-sanitizer (50-100x slower kernels): a chemical process matrix, a
// CFD matrix with a 128-long row, a circuit matrix with a 1310-long row (tail), a graph.
inline bool is_small(const std::string &stem_name)
{
  static const std::set<std::string> s{"west0479", "watt_2", "adder_dcop_05", "power"};
  return s.count(stem_name) != 0;
}

inline std::vector<std::string> files(bool small)
{
  std::vector<std::string> v;
  std::error_code          ec;
  for (const auto &e : std::filesystem::directory_iterator(matrix_dir(), ec)) {
    const std::string name = e.path().filename().string();
    const bool        mtx  = name.size() > 4 && (name.rfind(".mtx") == name.size() - 4 || name.rfind(".mtx.gz") == name.size() - 7);
    if (mtx && is_small(stem(name)) == small) v.push_back(name);
  }
  std::sort(v.begin(), v.end());
  return v;
}

inline std::string param_name(const testing::TestParamInfo<std::string> &info)
{
  std::string s = stem(info.param);
  for (char &c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

} // namespace gputest
