// Random CSR matrices for the GPU tests (see random_matrices.hpp).
#include "random_matrices.hpp"
#include <algorithm>
#include <random>
#include <unordered_set>

namespace gputest
{

namespace
{

std::vector<int32_t> pick_columns(int32_t n, int32_t cols, ColumnSpread spread, std::mt19937_64 &rng)
{
  std::vector<int32_t> c;
  if (n <= 0 || cols <= 0) return c;
  n = std::min(n, cols);
  c.reserve(size_t(n));
  if (n == cols) {
    for (int32_t j = 0; j < cols; ++j) c.push_back(j);
    return c;
  }
  switch (spread) {
  case ColumnSpread::Clustered: {
    const int32_t start = int32_t(rng() % uint64_t(cols - n + 1));
    for (int32_t j = 0; j < n; ++j) c.push_back(start + j);
    return c;
  }
  case ColumnSpread::Extremes: {
    const int32_t lo = n / 2, hi = n - lo;
    for (int32_t j = 0; j < lo; ++j) c.push_back(j);
    for (int32_t j = cols - hi; j < cols; ++j) c.push_back(j);
    return c;
  }
  case ColumnSpread::Uniform:
    break;
  }
  if (int64_t(n) * 2 > cols) { // dense-ish: drop random columns from the full set
    std::vector<int32_t> all(static_cast<size_t>(cols));
    for (int32_t j = 0; j < cols; ++j) all[size_t(j)] = j;
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(size_t(n));
    std::sort(all.begin(), all.end());
    return all;
  }
  std::unordered_set<int32_t> set;
  while (int32_t(set.size()) < n) set.insert(int32_t(rng() % uint64_t(cols)));
  c.assign(set.begin(), set.end());
  std::sort(c.begin(), c.end());
  return c;
}

} // namespace

HostCsr random_csr(const RandomSpec &spec)
{
  std::mt19937_64                        rng(spec.seed);
  std::uniform_real_distribution<double> mag(0.5, 1.5), unit(0.0, 1.0);
  HostCsr                                A;
  A.rows = spec.rows;
  A.cols = spec.cols;
  A.rowptr.assign(size_t(std::max(spec.rows, 0)) + 1, 0);
  for (int32_t r = 0; r < spec.rows; ++r) {
    const int32_t              n = spec.length ? std::max(0, spec.length(r, rng())) : 0;
    const std::vector<int32_t> c = pick_columns(n, spec.cols, spec.spread, rng);
    for (int32_t j : c) {
      A.colidx.push_back(j);
      double v = ((rng() & 1u) ? 1.0 : -1.0) * mag(rng) * spec.magnitude;
      if (unit(rng) < spec.explicit_zero_share) v = 0.0;
      A.values.push_back(v);
    }
    A.rowptr[size_t(r) + 1] = int32_t(A.colidx.size());
  }
  return A;
}

HostCsr with_new_values(const HostCsr &A, double magnitude, uint64_t seed)
{
  HostCsr                                B = A;
  std::mt19937_64                        rng(seed);
  std::uniform_real_distribution<double> mag(0.5, 1.5);
  for (double &v : B.values) v = ((rng() & 1u) ? 1.0 : -1.0) * mag(rng) * magnitude;
  return B;
}

} // namespace gputest
