#include "core/csr_permute.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

namespace pspmv
{

namespace
{
// FNV-1a over the shape, the row offsets and the columns.
uint64_t pattern_hash(const CsrView &A)
{
  uint64_t h   = 1469598103934665603ULL;
  auto     mix = [&h](uint64_t v) {
    h ^= v;
    h *= 1099511628211ULL;
  };
  mix(uint64_t(uint32_t(A.rows)));
  mix(uint64_t(uint32_t(A.cols)));
  for (int64_t r = 0; r <= A.rows && A.rowptr; ++r) mix(uint64_t(uint32_t(A.rowptr[r])));
  for (int64_t k = 0; k < A.nnz(); ++k) mix(uint64_t(uint32_t(A.colidx[k])));
  return h;
}
} // namespace

PermutedCsr::PermutedCsr(const CsrView &A, const std::vector<int32_t> &perm)
{
  check_csr(A);
  if (A.rows != A.cols) throw FormatError("a symmetric permutation needs a square matrix, not " + std::to_string(A.rows) + " x " + std::to_string(A.cols));
  if (perm.size() != (size_t)A.rows) throw FormatError("the permutation has " + std::to_string(perm.size()) + " entries for " + std::to_string(A.rows) + " rows");
  const int32_t        n = A.rows;
  std::vector<int32_t> inverse(n, -1);
  for (int32_t i = 0; i < n; ++i) {
    const int32_t p = perm[i];
    if (p < 0 || p >= n || inverse[p] >= 0) throw FormatError("entry " + std::to_string(i) + " of the permutation (" + std::to_string(p) + ") is out of range or repeated");
    inverse[p] = i;
  }
  n_           = n;
  perm_        = perm;
  source_hash_ = pattern_hash(A);
  rowptr_.assign((size_t)n + 1, 0);
  for (int32_t i = 0; i < n; ++i) rowptr_[i + 1] = rowptr_[i] + A.row_length(perm[i]);
  colidx_.resize((size_t)A.nnz());
  source_.resize((size_t)A.nnz());
  std::vector<std::pair<int32_t, int64_t>> row;
  for (int32_t i = 0; i < n; ++i) {
    const int32_t r = perm[i];
    row.clear();
    for (int64_t k = A.rowptr[r]; k < A.rowptr[r + 1]; ++k) row.emplace_back(inverse[A.colidx[k]], k);
    std::sort(row.begin(), row.end());
    for (size_t q = 0; q < row.size(); ++q) {
      colidx_[rowptr_[i] + q] = row[q].first;
      source_[rowptr_[i] + q] = row[q].second;
    }
  }
  values_.resize(source_.size());
  update_values(A.values);
}

bool PermutedCsr::same_source_pattern(const CsrView &C) const
{
  return C.rows == n_ && C.cols == n_ && C.nnz() == nnz() && pattern_hash(C) == source_hash_;
}

void PermutedCsr::update_values(const double *a_values)
{
  for (size_t k = 0; k < source_.size(); ++k) values_[k] = a_values[source_[k]];
}

CsrView PermutedCsr::view() const
{
  CsrView v;
  v.rows   = n_;
  v.cols   = n_;
  v.rowptr = rowptr_.data();
  v.colidx = colidx_.data();
  v.values = values_.data();
  return v;
}

} // namespace pspmv
