// RgCSR host reference kernels: product, diagonal, storage statistics.
#include "rgcsr.hpp"
#include "rgcsr_layout.hpp"
#include <algorithm>

namespace pspmv
{

void rgcsr_spmv(const RgCsrMatrix &M, const double *x, double *y, bool add)
{
  const int32_t G = M.group_size;
  for (int32_t r = 0; r < M.rows; ++r) {
    // One "thread" per row, in k order (the device kernel's order at one thread per row).
    const int64_t first = rgcsr::row_first_slot(M.group_pointers.data(), r, G);
    double        sum   = 0.0;
    for (int32_t k = 0; k < M.row_length[size_t(r)]; ++k) {
      const size_t s = size_t(rgcsr::slot(first, k, G));
      sum += M.values[s] * x[M.columns[s]];
    }
    y[r] = add ? y[r] + sum : sum;
  }
  coo_tail_spmv_add(M.tail, x, y);
}

void rgcsr_diagonal(const RgCsrMatrix &M, double *d)
{
  const int32_t G = M.group_size;
  const int32_t n = std::min(M.rows, M.cols);
  for (int32_t r = 0; r < n; ++r) {
    d[r]                = 0.0;
    const int64_t first = rgcsr::row_first_slot(M.group_pointers.data(), r, G);
    for (int32_t k = 0; k < M.row_length[size_t(r)]; ++k) {
      const size_t s = size_t(rgcsr::slot(first, k, G));
      if (M.columns[s] == r) d[r] = M.values[s];
    }
  }
  coo_tail_diagonal(M.tail, n, d);
}

FormatStats RgCsrMatrix::stats() const
{
  FormatStats s;
  s.rows          = rows;
  s.cols          = cols;
  int64_t regular = 0;
  for (int32_t l : row_length) regular += l;
  s.tail_nnz      = tail.nnz();
  s.nnz           = regular + s.tail_nnz;
  s.stored_slots  = group_pointers.empty() ? 0 : group_pointers.back();
  s.padding_slots = s.stored_slots - regular;
  s.dummy_words   = 0;
  s.hybrid_width  = hybrid_width;
  s.stored_bytes  = int64_t(values.size() * sizeof(double) + columns.size() * sizeof(int32_t) + group_pointers.size() * sizeof(int64_t) + row_length.size() * sizeof(int32_t)) + s.tail_nnz * int64_t(sizeof(int32_t) * 2 + sizeof(double));
  return s;
}

} // namespace pspmv
