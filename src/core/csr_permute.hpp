// A symmetric permutation of a square CSR (PETSc-free): the matrix a layout stores when its rows
// and columns are kept in a locality-restoring order (the ordering itself comes from a library,
// e.g. PETSc's MatGetOrdering(); this only applies it).
#pragma once
#include "core/csr.hpp"

#include <cstdint>
#include <vector>

namespace pspmv
{

// B = P A P^T for the permutation perm (new index -> old index): B(i, j) = A(perm[i], perm[j]).
// B's columns are increasing inside each row, and source[k] is the entry of A that B's entry k
// holds, so a value update of A's pattern is a gather (update_values).
class PermutedCsr {
public:
  PermutedCsr() = default;
  // Throws FormatError if A is not square, perm is not a permutation of [0, A.rows) or A is not
  // a valid CSR (check_csr). O(nnz log(row length)).
  PermutedCsr(const CsrView &A, const std::vector<int32_t> &perm);

  // Whether C has the pattern of the A this was built from (its shape, row offsets and columns,
  // compared through a 64-bit hash: O(nnz)).
  bool same_source_pattern(const CsrView &C) const;
  // B's values from the values of a matrix of A's pattern (a_values: A.nnz() entries).
  void update_values(const double *a_values);

  CsrView                     view() const; // B; valid while *this lives
  const std::vector<int32_t> &perm() const { return perm_; }
  int64_t                     nnz() const { return (int64_t)colidx_.size(); }

private:
  int32_t              n_           = 0;
  uint64_t             source_hash_ = 0;
  std::vector<int32_t> perm_, rowptr_, colidx_;
  std::vector<int64_t> source_;
  std::vector<double>  values_;
};

} // namespace pspmv
