#include "matrix_market.hpp"
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>
#include <zlib.h>

namespace pspmv_test
{

namespace
{

bool ends_with(const std::string &s, const std::string &suffix)
{
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string shell_quote(const std::string &s)
{
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// .xz and .bz2 through their command-line tools.
std::string slurp_pipe(const std::string &path, const std::string &tool)
{
  const std::string cmd = tool + " -dc " + shell_quote(path);
  FILE             *f   = popen(cmd.c_str(), "r");
  if (!f) throw std::runtime_error(path + ": cannot open (through '" + cmd + "')");
  std::string       data;
  std::vector<char> chunk(size_t(1) << 22);
  size_t            n;
  while ((n = std::fread(chunk.data(), 1, chunk.size(), f)) > 0) data.append(chunk.data(), n);
  const int rc = pclose(f);
  if (rc != 0) throw std::runtime_error(path + ": read error ('" + cmd + "' exited with status " + std::to_string(rc) + ")");
  return data;
}

// Whole file, decompressed if needed (gzread reads plain files as they are).
std::string slurp(const std::string &path)
{
  if (ends_with(path, ".xz")) return slurp_pipe(path, "xz");
  if (ends_with(path, ".bz2")) return slurp_pipe(path, "bzip2");
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error(path + ": cannot open");
  gzbuffer(f, 1 << 20);
  std::string       data;
  std::vector<char> chunk(1 << 22);
  int               n;
  while ((n = gzread(f, chunk.data(), unsigned(chunk.size()))) > 0) data.append(chunk.data(), size_t(n));
  int               err = 0;
  const char       *msg = gzerror(f, &err);
  const std::string why = msg ? msg : "";
  gzclose(f);
  if (n < 0 || (err != Z_OK && err != Z_STREAM_END)) throw std::runtime_error(path + ": read error: " + why);
  return data;
}

std::string lower(std::string s)
{
  for (char &c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Cursor over the text with line counting for error messages.
struct Parser {
  const std::string &path;
  const char        *p, *end;
  int64_t            line = 1;

  [[noreturn]] void fail(const std::string &what) const { throw std::runtime_error(path + ":" + std::to_string(line) + ": " + what); }
  void              skip_blanks()
  {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
  }
  // Skips empty lines and '%' comment lines, leaving p at the start of a data line.
  void next_data_line()
  {
    for (;;) {
      skip_blanks();
      if (p < end && *p == '\n') {
        ++p;
        ++line;
        continue;
      }
      if (p < end && *p == '%') {
        while (p < end && *p != '\n') ++p;
        continue;
      }
      return;
    }
  }
  void end_line()
  {
    skip_blanks();
    if (p < end && *p != '\n') fail("unexpected text after the entry");
    if (p < end) {
      ++p;
      ++line;
    }
  }
  int64_t integer(const char *what)
  {
    skip_blanks();
    if (p < end && *p == '+') ++p;
    int64_t v    = 0;
    auto [q, ec] = std::from_chars(p, end, v);
    if (ec != std::errc()) fail(std::string("cannot read ") + what);
    p = q;
    return v;
  }
  double real(const char *what)
  {
    skip_blanks();
    if (p < end && *p == '+') ++p;
    double v     = 0;
    auto [q, ec] = std::from_chars(p, end, v);
    // from_chars refuses underflow and overflow; strtod gives the IEEE answer (0, subnormal, inf)
    if (ec == std::errc::result_out_of_range) v = std::strtod(std::string(p, q).c_str(), nullptr);
    else if (ec != std::errc()) fail(std::string("cannot read ") + what);
    p = q;
    return v;
  }
};

uint64_t splitmix64(uint64_t x)
{
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Sorts the columns of every row (stable: duplicates are summed in file order) and sums
// duplicates; colidx/values are compacted in place.
void sort_and_merge(CsrMatrix &A)
{
  const int32_t        rows = A.rows;
  std::vector<int32_t> newlen(size_t(rows), 0);
#pragma omp parallel
  {
    std::vector<std::pair<int32_t, double>> buf;
#pragma omp for schedule(dynamic, 1024)
    for (int32_t r = 0; r < rows; ++r) {
      const int64_t b = A.rowptr[size_t(r)], e = A.rowptr[size_t(r) + 1];
      buf.clear();
      for (int64_t k = b; k < e; ++k) buf.emplace_back(A.colidx[size_t(k)], A.values[size_t(k)]);
      std::stable_sort(buf.begin(), buf.end(), [](const auto &x, const auto &y) { return x.first < y.first; });
      int64_t out = b;
      for (const auto &[c, v] : buf) {
        if (out > b && A.colidx[size_t(out) - 1] == c) A.values[size_t(out) - 1] += v; // duplicate entry: summed
        else {
          A.colidx[size_t(out)] = c;
          A.values[size_t(out)] = v;
          ++out;
        }
      }
      newlen[size_t(r)] = int32_t(out - b);
    }
  }
  int64_t w = 0;
  for (int32_t r = 0; r < rows; ++r) {
    const int64_t b = A.rowptr[size_t(r)];
    if (w != b) {
      std::memmove(&A.colidx[size_t(w)], &A.colidx[size_t(b)], sizeof(int32_t) * size_t(newlen[size_t(r)]));
      std::memmove(&A.values[size_t(w)], &A.values[size_t(b)], sizeof(double) * size_t(newlen[size_t(r)]));
    }
    A.rowptr[size_t(r)] = int32_t(w);
    w += newlen[size_t(r)];
  }
  A.rowptr[size_t(rows)] = int32_t(w);
  A.colidx.resize(size_t(w));
  A.values.resize(size_t(w));
}

} // namespace

double pattern_value(int32_t row, int32_t col)
{
  const uint64_t      h          = splitmix64((uint64_t(uint32_t(row)) << 32) | uint32_t(col));
  const double        frac       = 1.0 + double(h >> 44) / double(1 << 20); // [1, 2)
  static const double decades[5] = {1e-2, 1e-1, 1.0, 1e1, 1e2};
  const double        v          = frac * decades[(h >> 8) % 5];
  return (h & 1) ? -v : v;
}

CsrMatrix read_matrix_market(const std::string &path, const MatrixMarketOptions &options, MatrixMarketHeader *header)
{
  const std::string text = slurp(path);
  Parser            in{path, text.data(), text.data() + text.size()};

  // Banner: %%MatrixMarket matrix coordinate <field> <symmetry>
  const char              *eol    = std::find(in.p, in.end, '\n');
  std::string              banner = lower(std::string(in.p, eol));
  std::vector<std::string> words;
  for (size_t i = 0; i < banner.size();) {
    while (i < banner.size() && std::isspace(static_cast<unsigned char>(banner[i]))) ++i;
    size_t j = i;
    while (j < banner.size() && !std::isspace(static_cast<unsigned char>(banner[j]))) ++j;
    if (j > i) words.push_back(banner.substr(i, j - i));
    i = j;
  }
  if (words.size() < 5 || words[0] != "%%matrixmarket" || words[1] != "matrix") in.fail("not a Matrix Market matrix file (banner '%%MatrixMarket matrix ...' expected)");
  if (words[2] != "coordinate") in.fail("only coordinate files are supported, not '" + words[2] + "'");
  const std::string field = words[3], symmetry = words[4];
  if (field != "real" && field != "double" && field != "integer" && field != "pattern") in.fail("field '" + field + "' is not supported (real, integer or pattern)");
  if (symmetry != "general" && symmetry != "symmetric" && symmetry != "skew-symmetric") in.fail("symmetry '" + symmetry + "' is not supported (general, symmetric, skew-symmetric)");
  in.p = eol;

  in.next_data_line();
  const int64_t rows    = in.integer("the number of rows");
  const int64_t cols    = in.integer("the number of columns");
  const int64_t entries = in.integer("the number of entries");
  in.end_line();
  if (rows < 0 || cols < 0 || entries < 0 || rows >= INT32_MAX || cols > INT32_MAX) in.fail("bad or too large size line");
  if (symmetry != "general" && rows != cols) in.fail("a symmetric matrix must be square");

  // The entries as the file has them, then counted, placed (mirrors included) and merged.
  const bool           mirror = symmetry != "general", skew = symmetry == "skew-symmetric";
  const bool           generated = field == "pattern" || (field == "integer" && options.integer_as_pattern);
  std::vector<int32_t> ei(static_cast<size_t>(entries)), ej(static_cast<size_t>(entries));
  std::vector<double>  ev(static_cast<size_t>(entries));
  for (int64_t k = 0; k < entries; ++k) {
    in.next_data_line();
    if (in.p >= in.end) in.fail("file ends after " + std::to_string(k) + " of " + std::to_string(entries) + " entries");
    const int64_t i = in.integer("a row index") - 1;
    const int64_t j = in.integer("a column index") - 1;
    double        v = field == "pattern" ? 0.0 : in.real("a value");
    if (i < 0 || i >= rows || j < 0 || j >= cols) in.fail("entry (" + std::to_string(i + 1) + ", " + std::to_string(j + 1) + ") is outside the matrix");
    in.end_line();
    if (generated) v = options.pattern(int32_t(i), int32_t(j));
    ei[size_t(k)] = int32_t(i);
    ej[size_t(k)] = int32_t(j);
    ev[size_t(k)] = v;
  }
  CsrMatrix A;
  A.rows = int32_t(rows);
  A.cols = int32_t(cols);
  A.rowptr.assign(size_t(rows) + 1, 0);
  int64_t total = 0;
  for (int64_t k = 0; k < entries; ++k) {
    ++A.rowptr[size_t(ei[size_t(k)]) + 1];
    ++total;
    if (mirror && ei[size_t(k)] != ej[size_t(k)]) {
      ++A.rowptr[size_t(ej[size_t(k)]) + 1];
      ++total;
    }
  }
  if (total > std::numeric_limits<int32_t>::max()) throw std::runtime_error(path + ": more than 2^31-1 nonzeros (32-bit indices)");
  for (size_t r = 0; r < size_t(rows); ++r) A.rowptr[r + 1] += A.rowptr[r];
  A.colidx.resize(size_t(total));
  A.values.resize(size_t(total));
  {
    std::vector<int32_t> next(A.rowptr.begin(), A.rowptr.end() - 1);
    for (int64_t k = 0; k < entries; ++k) {
      const int32_t i = ei[size_t(k)], j = ej[size_t(k)];
      const double  v     = ev[size_t(k)];
      int32_t       p     = next[size_t(i)]++;
      A.colidx[size_t(p)] = j;
      A.values[size_t(p)] = v;
      if (mirror && i != j) { // the mirrored entry keeps the file's symmetry, generated values included
        p                   = next[size_t(j)]++;
        A.colidx[size_t(p)] = i;
        A.values[size_t(p)] = skew ? -v : v;
      }
    }
  }
  std::vector<int32_t>().swap(ei);
  std::vector<int32_t>().swap(ej);
  std::vector<double>().swap(ev);
  sort_and_merge(A);
  if (header) *header = {field, symmetry};
  return A;
}

} // namespace pspmv_test
