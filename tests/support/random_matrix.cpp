#include "random_matrix.hpp"
#include <algorithm>
#include <cmath>
#include <unordered_set>

namespace pspmv_test
{

uint64_t Rng::next()
{
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z          = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

namespace
{

// n distinct sorted integers from [0, m).
std::vector<int64_t> sample_sorted(Rng &rng, int64_t n, int64_t m)
{
  std::vector<int64_t> out;
  out.reserve(size_t(n));
  if (n > m / 4) { // selection sampling: one pass over [0, m)
    int64_t need = n;
    for (int64_t i = 0; i < m && need > 0; ++i)
      if (int64_t(rng.below(uint64_t(m - i))) < need) {
        out.push_back(i);
        --need;
      }
    return out;
  }
  std::unordered_set<int64_t> seen;
  while (int64_t(out.size()) < n) {
    const int64_t c = int64_t(rng.below(uint64_t(m)));
    if (seen.insert(c).second) out.push_back(c);
  }
  std::sort(out.begin(), out.end());
  return out;
}

double random_value(Rng &rng, double lo, double hi)
{
  const double mag = lo * std::pow(hi / lo, rng.uniform());
  return (rng.next() & 1) ? -mag : mag;
}

} // namespace

CsrMatrix random_csr(const RandomSpec &spec)
{
  Rng       rng(spec.seed);
  CsrMatrix A;
  A.rows = spec.rows;
  A.cols = spec.cols;
  A.rowptr.assign(size_t(spec.rows) + 1, 0);
  const int64_t gap = std::max(1, spec.min_gap);
  for (int32_t r = 0; r < spec.rows; ++r) {
    int64_t n = spec.min_len + int64_t(rng.below(uint64_t(spec.max_len - spec.min_len + 1)));
    if (rng.uniform() < spec.empty_fraction) n = 0;
    else if (rng.uniform() < spec.long_fraction) n = spec.long_len;
    const bool dense = spec.dense_rows > 0 && r % std::max(1, spec.rows / spec.dense_rows) == 0 && r / std::max(1, spec.rows / spec.dense_rows) < spec.dense_rows;
    if (dense) n = spec.cols;
    // With gaps >= gap, n columns need (n - 1) * gap + 1 <= cols.
    const int64_t room               = spec.cols > 0 ? (spec.cols - 1) / gap + 1 : 0;
    n                                = std::min(n, dense ? int64_t(spec.cols) : room);
    const int64_t              shift = dense ? 0 : gap - 1;
    const std::vector<int64_t> s     = sample_sorted(rng, n, spec.cols - (n > 0 ? (n - 1) * shift : 0));
    for (int64_t k = 0; k < n; ++k) {
      A.colidx.push_back(int32_t(s[size_t(k)] + k * shift));
      double v = random_value(rng, spec.min_magnitude, spec.max_magnitude);
      if (rng.uniform() < spec.zero_fraction) v = (rng.next() & 1) ? -0.0 : 0.0;
      A.values.push_back(v);
    }
    A.rowptr[size_t(r) + 1] = int32_t(A.colidx.size());
  }
  return A;
}

CsrMatrix with_new_values(const CsrMatrix &A, uint64_t seed, double lo, double hi)
{
  Rng       rng(seed);
  CsrMatrix B = A;
  for (double &v : B.values) v = random_value(rng, lo, hi);
  return B;
}

std::vector<double> random_vector(int64_t n, uint64_t seed)
{
  Rng                 rng(seed);
  std::vector<double> x(size_t(std::max<int64_t>(n, 0)));
  for (double &v : x) v = 2.0 * rng.uniform() - 1.0;
  return x;
}

} // namespace pspmv_test
