// PackSELL host reference kernels: product, diagonal, storage statistics. Values are decoded
// exactly to FP64 and accumulated in FP64; the row sum is multiplied by 2^-scale_exponent.
#include "packsell_lowp_tail.hpp"
#include "packsell_rows.hpp"
#include <algorithm>
#include <cmath>

namespace pspmv
{

namespace
{
// FP64 value of the word at position p (before the 2^-s factor).
inline double word_value(const PackSellMatrix &M, int64_t p)
{
  if (!M.value_format.lossy()) return M.exact_values[size_t(p)];
  return decode_value(M.value_format, packsell::word_value_bits(M.words[size_t(p)], M.delta_bits));
}
} // namespace

void packsell_spmv(const PackSellMatrix &M, const double *x, double *y, bool add)
{
  const double inv_scale = std::ldexp(1.0, -M.scale_exponent);
  for (int32_t i = 0; i < M.rows; ++i) {
    double sum = 0.0;
    detail::for_each_row_nonzero(M, i, [&](int64_t p, int32_t col) { sum += word_value(M, p) * x[col]; });
    const int32_t r = M.perm[size_t(i)];
    sum *= inv_scale;
    y[r] = add ? y[r] + sum : sum;
  }
  coo_tail_spmv_add(M.tail, x, y); // tail values are already in unscaled units
}

void packsell_spmv_f32(const PackSellMatrix &M, const float *x, float *y)
{
  const float inv_scale = static_cast<float>(std::ldexp(1.0, -M.scale_exponent));
  const bool  lossy     = M.value_format.lossy();
  for (int32_t i = 0; i < M.rows; ++i) {
    float sum = 0.0f;
    detail::for_each_row_nonzero(M, i, [&](int64_t p, int32_t col) {
      const float v = lossy ? static_cast<float>(decode_value(M.value_format, packsell::word_value_bits(M.words[size_t(p)], M.delta_bits))) : static_cast<float>(M.exact_values[size_t(p)]);
      sum           = std::fma(v, x[col], sum);
    });
    y[M.perm[size_t(i)]] = sum * inv_scale;
  }
  // the tail row by row, in packsell_lowp_tail.hpp's order
  const CooTail &t    = M.tail;
  auto           term = [&](int64_t k, float acc) { return std::fma(static_cast<float>(t.val[size_t(k)]), x[t.col[size_t(k)]], acc); };
  for (int64_t b = 0, e; b < t.nnz(); b = e) {
    const int32_t r = t.row[size_t(b)];
    for (e = b + 1; e < t.nnz() && t.row[size_t(e)] == r; ++e) { }
    if (e - b <= packsell::kLowpLongTail) {
      for (int64_t k = b; k < e; ++k) y[r] = term(k, y[r]);
      continue;
    }
    float lane[packsell::kLowpTailLanes] = {};
    for (int64_t k = b; k < e; ++k) {
      float &s = lane[(k - b) % packsell::kLowpTailLanes];
      s        = term(k, s);
    }
    for (int32_t o = packsell::kLowpTailLanes / 2; o > 0; o /= 2) {
      float next[packsell::kLowpTailLanes];
      for (int32_t l = 0; l < packsell::kLowpTailLanes; ++l) next[l] = lane[l] + lane[l ^ o];
      std::copy(next, next + packsell::kLowpTailLanes, lane);
    }
    y[r] = y[r] + lane[0];
  }
}

void packsell_diagonal(const PackSellMatrix &M, double *d)
{
  const double  inv_scale = std::ldexp(1.0, -M.scale_exponent);
  const int32_t n         = std::min(M.rows, M.cols);
  std::fill(d, d + std::max(n, 0), 0.0);
  for (int32_t i = 0; i < M.rows; ++i) {
    const int32_t r = M.perm[size_t(i)];
    if (r >= n) continue;
    detail::for_each_row_nonzero(M, i, [&](int64_t p, int32_t col) {
      if (col == r) d[r] = word_value(M, p) * inv_scale;
    });
  }
  coo_tail_diagonal(M.tail, n, d);
}

FormatStats PackSellMatrix::stats() const
{
  FormatStats s;
  s.rows       = rows;
  s.cols       = cols;
  int64_t real = 0, dummies = 0, padding = 0;
  for (uint32_t w : words) {
    if (packsell::word_flag(w)) ++real;
    else if (w) ++dummies;
    else ++padding;
  }
  s.tail_nnz      = tail.nnz();
  s.nnz           = real + s.tail_nnz;
  s.stored_slots  = int64_t(words.size());
  s.padding_slots = padding;
  s.dummy_words   = dummies;
  s.hybrid_width  = hybrid_width;
  s.sigma         = sigma;
  s.gap_entries   = int64_t(gaps.size());
  s.stored_bytes  = packsell::stored_bytes(int64_t(words.size()), !exact_values.empty(), int64_t(gaps.size()), num_slices(), int64_t(perm.size()), s.tail_nnz);
  return s;
}

} // namespace pspmv
