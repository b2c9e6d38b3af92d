#include "matrix_market.hpp"
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <zlib.h>

namespace pspmv_test {

namespace {

// Whole file, decompressed if needed (gzread reads plain files as they are).
std::string slurp(const std::string &path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error(path + ": cannot open");
  gzbuffer(f, 1 << 20);
  std::string data;
  std::vector<char> chunk(1 << 22);
  int n;
  while ((n = gzread(f, chunk.data(), unsigned(chunk.size()))) > 0) data.append(chunk.data(), size_t(n));
  int err = 0;
  const char *msg = gzerror(f, &err);
  const std::string why = msg ? msg : "";
  gzclose(f);
  if (n < 0 || (err != Z_OK && err != Z_STREAM_END))
    throw std::runtime_error(path + ": read error: " + why);
  return data;
}

std::string lower(std::string s) {
  for (char &c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Cursor over the text with line counting for error messages.
struct Parser {
  const std::string &path;
  const char *p, *end;
  int64_t line = 1;

  [[noreturn]] void fail(const std::string &what) const {
    throw std::runtime_error(path + ":" + std::to_string(line) + ": " + what);
  }
  void skip_blanks() {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
  }
  // Skips empty lines and '%' comment lines, leaving p at the start of a data line.
  void next_data_line() {
    for (;;) {
      skip_blanks();
      if (p < end && *p == '\n') { ++p; ++line; continue; }
      if (p < end && *p == '%') {
        while (p < end && *p != '\n') ++p;
        continue;
      }
      return;
    }
  }
  void end_line() {
    skip_blanks();
    if (p < end && *p != '\n') fail("unexpected text after the entry");
    if (p < end) { ++p; ++line; }
  }
  template <class T> T number(const char *what) {
    skip_blanks();
    if (p < end && *p == '+') ++p;
    T v{};
    auto [q, ec] = std::from_chars(p, end, v);
    if (ec != std::errc()) fail(std::string("cannot read ") + what);
    p = q;
    return v;
  }
};

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct Triplet {
  int32_t row, col;
  double val;
};

CsrMatrix to_csr(int32_t rows, int32_t cols, std::vector<Triplet> &t) {
  CsrMatrix A;
  A.rows = rows;
  A.cols = cols;
  std::vector<int64_t> count(size_t(rows) + 1, 0);
  for (const Triplet &e : t) ++count[size_t(e.row) + 1];
  for (size_t r = 0; r < size_t(rows); ++r) count[r + 1] += count[r];
  std::vector<std::pair<int32_t, double>> entries(t.size());
  {
    std::vector<int64_t> next(count.begin(), count.end() - 1);
    for (const Triplet &e : t) entries[size_t(next[size_t(e.row)]++)] = {e.col, e.val};
  }
  t.clear();
  t.shrink_to_fit();
  A.rowptr.assign(size_t(rows) + 1, 0);
  A.colidx.reserve(entries.size());
  A.values.reserve(entries.size());
  for (int32_t r = 0; r < rows; ++r) {
    auto b = entries.begin() + count[size_t(r)], e = entries.begin() + count[size_t(r) + 1];
    std::stable_sort(b, e, [](const auto &x, const auto &y) { return x.first < y.first; });
    for (auto it = b; it != e; ++it) {
      if (int64_t(A.colidx.size()) > A.rowptr[size_t(r)] && A.colidx.back() == it->first)
        A.values.back() += it->second; // duplicate entry: summed
      else {
        A.colidx.push_back(it->first);
        A.values.push_back(it->second);
      }
    }
    A.rowptr[size_t(r) + 1] = int32_t(A.colidx.size());
  }
  return A;
}

} // namespace

double pattern_value(int32_t row, int32_t col) {
  const uint64_t h = splitmix64((uint64_t(uint32_t(row)) << 32) | uint32_t(col));
  const double frac = 1.0 + double(h >> 44) / double(1 << 20); // [1, 2)
  static const double decades[5] = {1e-2, 1e-1, 1.0, 1e1, 1e2};
  const double v = frac * decades[(h >> 8) % 5];
  return (h & 1) ? -v : v;
}

CsrMatrix read_matrix_market(const std::string &path) {
  const std::string text = slurp(path);
  Parser in{path, text.data(), text.data() + text.size()};

  // Banner: %%MatrixMarket matrix coordinate <field> <symmetry>
  const char *eol = std::find(in.p, in.end, '\n');
  std::string banner = lower(std::string(in.p, eol));
  std::vector<std::string> words;
  for (size_t i = 0; i < banner.size();) {
    while (i < banner.size() && std::isspace(static_cast<unsigned char>(banner[i]))) ++i;
    size_t j = i;
    while (j < banner.size() && !std::isspace(static_cast<unsigned char>(banner[j]))) ++j;
    if (j > i) words.push_back(banner.substr(i, j - i));
    i = j;
  }
  if (words.size() < 5 || words[0] != "%%matrixmarket" || words[1] != "matrix")
    in.fail("not a Matrix Market matrix file (banner '%%MatrixMarket matrix ...' expected)");
  if (words[2] != "coordinate") in.fail("only coordinate files are supported, not '" + words[2] + "'");
  const std::string field = words[3], symmetry = words[4];
  if (field != "real" && field != "integer" && field != "pattern")
    in.fail("field '" + field + "' is not supported (real, integer or pattern)");
  if (symmetry != "general" && symmetry != "symmetric" && symmetry != "skew-symmetric")
    in.fail("symmetry '" + symmetry + "' is not supported (general, symmetric, skew-symmetric)");
  in.p = eol;

  in.next_data_line();
  const int64_t rows = in.number<int64_t>("the number of rows");
  const int64_t cols = in.number<int64_t>("the number of columns");
  const int64_t entries = in.number<int64_t>("the number of entries");
  in.end_line();
  if (rows < 0 || cols < 0 || entries < 0 || rows > INT32_MAX || cols > INT32_MAX)
    in.fail("bad size line");
  if (symmetry != "general" && rows != cols) in.fail("a symmetric matrix must be square");

  const bool generated = field != "real"; // pattern and integer: hashed values
  std::vector<Triplet> t;
  t.reserve(size_t(symmetry == "general" ? entries : 2 * entries));
  for (int64_t k = 0; k < entries; ++k) {
    in.next_data_line();
    if (in.p >= in.end)
      in.fail("file ends after " + std::to_string(k) + " of " + std::to_string(entries) + " entries");
    const int64_t i = in.number<int64_t>("a row index") - 1;
    const int64_t j = in.number<int64_t>("a column index") - 1;
    double v = 0.0;
    if (field == "real") v = in.number<double>("a value");
    else if (field == "integer") (void)in.number<int64_t>("an integer value");
    if (i < 0 || i >= rows || j < 0 || j >= cols)
      in.fail("entry (" + std::to_string(i + 1) + ", " + std::to_string(j + 1) + ") is outside the matrix");
    in.end_line();
    const int32_t r = int32_t(i), c = int32_t(j);
    if (generated) v = pattern_value(r, c);
    t.push_back({r, c, v});
    // The mirrored entry keeps the file's symmetry, generated values included.
    if (symmetry != "general" && r != c) t.push_back({c, r, symmetry == "skew-symmetric" ? -v : v});
  }
  return to_csr(int32_t(rows), int32_t(cols), t);
}

} // namespace pspmv_test
