// Matrix files (through the shared reader of tests/support), generators and the FP64 reference
// product of spmv_bench.
#include "matrix_source.hpp"
#include "matrix_market.hpp"

#include "core/csr_permute.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

#if defined(_OPENMP)
  #include <omp.h>
#endif

namespace bench
{

namespace
{

uint64_t splitmix64(uint64_t x)
{
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// uniform in [0, 1) from 53 random bits
double unit(uint64_t h)
{
  return double(h >> 11) * (1.0 / 9007199254740992.0);
}

struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(splitmix64(seed)) { }
  uint64_t next() { return s = splitmix64(s); }
  double   uniform() { return unit(next()); }
};

bool ends_with(const std::string &s, const std::string &suffix)
{
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string lower(std::string s)
{
  for (char &c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Pattern files: values uniform in [0.5, 1.5] with random signs, the same for (i, j) and (j, i)
// (scripts/mtx2petsc.py's rule, not its numbers; 1-based indices hashed).
double pattern_value(int32_t row, int32_t col)
{
  const uint64_t a = uint64_t(std::min(row, col)) + 1, b = uint64_t(std::max(row, col)) + 1;
  const uint64_t h = splitmix64(a * 0x100000001b3ULL ^ splitmix64(b));
  return (0.5 + unit(h)) * ((h & 1) ? -1.0 : 1.0);
}

} // namespace

int32_t HostCsr::max_row_length() const
{
  int32_t m = 0;
  for (int32_t r = 0; r < rows; ++r) m = std::max(m, rowptr[r + 1] - rowptr[r]);
  return m;
}

bool is_matrix_market(const std::string &path)
{
  std::string p = lower(path);
  for (const char *z : {".gz", ".xz", ".bz2"})
    if (ends_with(p, z)) p.resize(p.size() - std::strlen(z));
  return ends_with(p, ".mtx");
}

std::string matrix_name_from_path(const std::string &path)
{
  std::string b = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  for (const char *z : {".gz", ".xz", ".bz2"})
    if (ends_with(b, z)) b.resize(b.size() - std::strlen(z));
  for (const char *z : {".mtx", ".petsc", ".bin", ".dat"})
    if (ends_with(b, z)) b.resize(b.size() - std::strlen(z));
  return b;
}

HostCsr read_matrix_market(const std::string &path)
{
  pspmv_test::MatrixMarketOptions opt;
  opt.pattern            = pattern_value;
  opt.integer_as_pattern = false; // integer files keep their values
  pspmv_test::MatrixMarketHeader hdr;
  pspmv_test::CsrMatrix          M = pspmv_test::read_matrix_market(path, opt, &hdr);
  HostCsr                        A;
  A.name   = matrix_name_from_path(path);
  A.source = path;
  A.kind   = "matrix market " + hdr.field + " " + hdr.symmetry;
  A.rows   = M.rows;
  A.cols   = M.cols;
  A.rowptr = std::move(M.rowptr);
  A.colidx = std::move(M.colidx);
  A.values = std::move(M.values);
  return A;
}

namespace
{

HostCsr laplacian(int64_t N, int stencil)
{
  if (N < 2 || N > 1290) throw std::runtime_error("lap" + std::to_string(stencil) + ":N needs 2 <= N <= 1290");
  const int64_t n = N * N * N;
  HostCsr       A;
  A.name   = "lap" + std::to_string(stencil) + "_" + std::to_string(N);
  A.source = "lap" + std::to_string(stencil) + ":" + std::to_string(N);
  A.kind   = "generated 3-D " + std::to_string(stencil) + "-point Laplacian on a " + std::to_string(N) + "^3 grid";
  A.rows = A.cols = int32_t(n);
  A.rowptr.assign(size_t(n) + 1, 0);
  auto extent = [N](int64_t i) { return int64_t(1) + (i > 0) + (i < N - 1); }; // neighbours along one axis, self included
  for (int64_t k = 0; k < N; ++k)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t i = 0; i < N; ++i) {
        const int64_t r = (k * N + j) * N + i;
        int64_t       len;
        if (stencil == 27) len = extent(i) * extent(j) * extent(k);
        else len = 1 + (extent(i) - 1) + (extent(j) - 1) + (extent(k) - 1);
        A.rowptr[size_t(r) + 1] = int32_t(len);
      }
  int64_t total = 0;
  for (int64_t r = 0; r < n; ++r) {
    total += A.rowptr[size_t(r) + 1];
    if (total > std::numeric_limits<int32_t>::max()) throw std::runtime_error(A.source + ": more than 2^31-1 nonzeros");
    A.rowptr[size_t(r) + 1] = int32_t(total);
  }
  A.colidx.resize(size_t(total));
  A.values.resize(size_t(total));
  const double diag = stencil == 27 ? 26.0 : 6.0;
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < N; ++k)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t i = 0; i < N; ++i) {
        const int64_t r = (k * N + j) * N + i;
        int64_t       p = A.rowptr[size_t(r)];
        for (int64_t dk = -1; dk <= 1; ++dk)
          for (int64_t dj = -1; dj <= 1; ++dj)
            for (int64_t di = -1; di <= 1; ++di) {
              const int64_t a = std::abs(di) + std::abs(dj) + std::abs(dk);
              if (stencil == 7 && a > 1) continue;
              const int64_t ii = i + di, jj = j + dj, kk = k + dk;
              if (ii < 0 || jj < 0 || kk < 0 || ii >= N || jj >= N || kk >= N) continue;
              A.colidx[size_t(p)] = int32_t((kk * N + jj) * N + ii);
              A.values[size_t(p)] = a == 0 ? diag : -1.0;
              ++p;
            }
      }
  return A;
}

HostCsr powerlaw(int64_t rows, double avg, double alpha, uint64_t seed, const std::string &spec)
{
  if (rows < 1 || rows > std::numeric_limits<int32_t>::max() - 1) throw std::runtime_error(spec + ": ROWS must be in [1, 2^31-2]");
  if (!(avg >= 1.0) || !(alpha > 1.0)) throw std::runtime_error(spec + ": needs AVG >= 1 and ALPHA > 1");
  HostCsr A;
  {
    char buf[256];
    std::snprintf(buf, sizeof(buf), "powerlaw_%lld_%g_%g_%llu", (long long)rows, avg, alpha, (unsigned long long)seed);
    A.name = buf;
  }
  A.source = spec;
  A.kind   = "generated power-law row lengths (Pareto tail exponent " + std::to_string(alpha) + ", mean " + std::to_string(avg) + "), random columns";
  A.rows = A.cols = int32_t(rows);
  // raw Pareto lengths, then one scale so that the mean is avg
  std::vector<double> raw(static_cast<size_t>(rows));
  double              sum = 0.0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const double u = 1.0 - unit(splitmix64(seed * 0x9e3779b97f4a7c15ULL + uint64_t(r))); // (0, 1]
    raw[size_t(r)] = std::pow(u, -1.0 / (alpha - 1.0));
    sum += raw[size_t(r)];
  }
  const double scale = avg * double(rows) / sum;
  A.rowptr.assign(size_t(rows) + 1, 0);
  int64_t total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const double  l   = std::min(double(rows), std::max(1.0, std::floor(scale * raw[size_t(r)] + 0.5)));
    const int64_t len = int64_t(l);
    total += len;
    if (total > std::numeric_limits<int32_t>::max()) throw std::runtime_error(spec + ": more than 2^31-1 nonzeros");
    A.rowptr[size_t(r) + 1] = int32_t(total);
  }
  std::vector<double>().swap(raw);
  A.colidx.resize(size_t(total));
  A.values.resize(size_t(total));
#pragma omp parallel
  {
    std::vector<int32_t> cols;
#pragma omp for schedule(dynamic, 4096)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t b = A.rowptr[size_t(r)], len = A.rowptr[size_t(r) + 1] - b;
      Rng           rng(seed ^ splitmix64(uint64_t(r) + 0x632be59bd9b4e019ULL));
      cols.clear();
      if (len * 2 > rows) {
        // dense-ish row: keep each column with probability len/rows, then fix the count
        for (int64_t c = 0; c < rows; ++c) cols.push_back(int32_t(c));
        for (int64_t k = 0; k < rows - len; ++k) { // partial Fisher-Yates: drop rows-len columns
          const int64_t pick = k + int64_t(rng.uniform() * double(rows - k));
          std::swap(cols[size_t(k)], cols[size_t(std::min(pick, rows - 1))]);
        }
        cols.erase(cols.begin(), cols.begin() + (rows - len));
        std::sort(cols.begin(), cols.end());
      } else {
        while (int64_t(cols.size()) < len) {
          const size_t before = cols.size();
          for (int64_t k = int64_t(before); k < len; ++k) cols.push_back(int32_t(std::min<int64_t>(rows - 1, int64_t(rng.uniform() * double(rows)))));
          std::sort(cols.begin(), cols.end());
          cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
        }
      }
      for (int64_t k = 0; k < len; ++k) {
        const uint64_t h        = rng.next();
        A.colidx[size_t(b + k)] = cols[size_t(k)];
        A.values[size_t(b + k)] = (0.1 + 0.9 * unit(h)) * ((h & 1) ? -1.0 : 1.0);
      }
    }
  }
  return A;
}

// A in a random symmetric order: B(i, j) = A(q[i], q[j]) for a random permutation q (Fisher-Yates
// from splitmix64 with a fixed seed): a matrix in poor order, as meshes from unstructured
// generators and graphs arrive.
HostCsr shuffled(HostCsr A)
{
  std::vector<int32_t> q(size_t(A.rows));
  std::iota(q.begin(), q.end(), 0);
  Rng rng(1);
  for (int64_t i = int64_t(A.rows) - 1; i > 0; --i) std::swap(q[size_t(i)], q[size_t(rng.next() % uint64_t(i + 1))]);
  pspmv::CsrView v;
  v.rows   = A.rows;
  v.cols   = A.cols;
  v.rowptr = A.rowptr.data();
  v.colidx = A.colidx.data();
  v.values = A.values.data();
  const pspmv::PermutedCsr P(v, q);
  const pspmv::CsrView     b = P.view();
  HostCsr                  B;
  B.name   = A.name + "_shuffled";
  B.source = A.source + ":shuffled";
  B.kind   = A.kind + ", rows and columns in a random symmetric order";
  B.rows   = b.rows;
  B.cols   = b.cols;
  B.rowptr.assign(b.rowptr, b.rowptr + b.rows + 1);
  B.colidx.assign(b.colidx, b.colidx + P.nnz());
  B.values.assign(b.values, b.values + P.nnz());
  return B;
}

} // namespace

std::vector<std::string> split(const std::string &s, char sep)
{
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t b = 0;
  for (;;) {
    const size_t e = s.find(sep, b);
    out.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}

HostCsr generate_matrix(const std::string &spec)
{
  const std::vector<std::string> t = split(spec, ':');
  try {
    if (t.size() == 2 && (t[0] == "lap7" || t[0] == "lap27")) return laplacian(std::stoll(t[1]), t[0] == "lap7" ? 7 : 27);
    if (t.size() == 3 && (t[0] == "lap7" || t[0] == "lap27") && t[2] == "shuffled") return shuffled(laplacian(std::stoll(t[1]), t[0] == "lap7" ? 7 : 27));
    if (t.size() == 5 && t[0] == "powerlaw") return powerlaw(std::stoll(t[1]), std::stod(t[2]), std::stod(t[3]), std::stoull(t[4]), spec);
  } catch (const std::logic_error &e) { // stoll/stod on a bad number
    throw std::runtime_error("bad generator spec '" + spec + "': " + e.what());
  }
  throw std::runtime_error("bad generator spec '" + spec + "': use lap7:N, lap27:N, lap7:N:shuffled, lap27:N:shuffled or powerlaw:ROWS:AVG:ALPHA:SEED");
}

void reference_spmv(const HostCsr &A, const double *x, double *y, double *absy)
{
#pragma omp parallel for schedule(dynamic, 4096)
  for (int32_t r = 0; r < A.rows; ++r) {
    double s = 0.0, a = 0.0;
    for (int32_t k = A.rowptr[r]; k < A.rowptr[r + 1]; ++k) {
      const double p = A.values[size_t(k)] * x[A.colidx[size_t(k)]];
      s += p;
      a += std::fabs(p);
    }
    y[r]    = s;
    absy[r] = a;
  }
}

std::vector<double> make_x(int32_t n, uint64_t seed)
{
  std::vector<double> x(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    const uint64_t h = splitmix64(seed * 0xd1b54a32d192ed03ULL + uint64_t(i));
    x[size_t(i)]     = (0.25 + 0.75 * unit(h)) * ((h & 1) ? -1.0 : 1.0);
  }
  return x;
}

} // namespace bench
