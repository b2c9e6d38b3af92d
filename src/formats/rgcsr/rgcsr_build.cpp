// RgCSR on the host: the host executor of the build driver (rgcsr_plan.hpp), the fill of the
// groups and the tail from the plan, and value-only updates.
#include "core/layout_util.hpp"
#include "rgcsr_plan.hpp"
#include <algorithm>

namespace pspmv
{

namespace
{

// The driver's executor over a host CSR (checked).
class HostExecutor {
public:
  explicit HostExecutor(const CsrView &A) : A_(A) { }
  int32_t    rows() const { return A_.rows; }
  BuildError max_row_length(int32_t *maxlen) const
  {
    *maxlen = detail::max_row_length(A_);
    return BuildError{};
  }
  BuildError length_histograms(int32_t G, int32_t maxlen, std::vector<int64_t> *hist, std::vector<int64_t> *group_hist) const
  {
    hist->assign(size_t(maxlen) + 1, 0);
    group_hist->assign(size_t(maxlen) + 1, 0);
    for (int32_t g = 0; g < rgcsr::num_groups(A_.rows, G); ++g) {
      const int32_t r0 = g * G, r1 = int32_t(std::min<int64_t>(A_.rows, int64_t(r0) + G));
      int32_t       m = 0;
      for (int32_t r = r0; r < r1; ++r) {
        (*hist)[size_t(A_.row_length(r))] += 1;
        m = std::max(m, A_.row_length(r));
      }
      (*group_hist)[size_t(m)] += 1;
    }
    return BuildError{};
  }

private:
  const CsrView &A_;
};

} // namespace

void detail::check_rgcsr_options(const RgCsrOptions &opt)
{
  // Above 1024 a group gains nothing (a kernel block holds at most 1024 threads) and the
  // padding of the last group to G rows would cost memory for no reason.
  if (!rgcsr::valid_group_size(opt.group_size)) throw FormatError("RgCSR group size " + std::to_string(opt.group_size) + " is not valid: use a positive multiple of 32 up to 1024 (e.g. 32, 64, 128)");
  detail::check_hybrid_option(opt.hybrid);
}

RgCsrMatrix build_rgcsr(const CsrView &A, const RgCsrOptions &opt)
{
  detail::check_rgcsr_options(opt);
  check_csr(A);

  HostExecutor x(A);
  RgCsrPlan    p;
  plan_rgcsr(x, opt, &p).raise();

  const int32_t G = opt.group_size;
  RgCsrMatrix   M;
  M.rows          = A.rows;
  M.cols          = A.cols;
  M.group_size    = G;
  M.hybrid_width  = p.hybrid_width;
  const int32_t K = M.hybrid_width;

  M.row_length.resize(size_t(A.rows));
  for (int32_t r = 0; r < A.rows; ++r) M.row_length[size_t(r)] = std::min(A.row_length(r), K);

  const int32_t ngroups = p.num_groups;
  M.group_pointers.assign(size_t(ngroups) + 1, 0);
  for (int32_t g = 0; g < ngroups; ++g) {
    const int32_t r0 = g * G, r1 = int32_t(std::min<int64_t>(A.rows, int64_t(r0) + G));
    int32_t       width = 0;
    for (int32_t r = r0; r < r1; ++r) width = std::max(width, M.row_length[size_t(r)]);
    M.group_pointers[size_t(g) + 1] = M.group_pointers[size_t(g)] + rgcsr::group_slots(width, G);
  }

  // Padding: value 0, column 0.
  M.columns.assign(size_t(M.group_pointers.back()), 0);
  M.values.assign(size_t(M.group_pointers.back()), 0.0);
  for (int32_t r = 0; r < A.rows; ++r) {
    const int64_t first = rgcsr::row_first_slot(M.group_pointers.data(), r, G);
    const int32_t start = A.rowptr[r];
    for (int32_t k = 0; k < M.row_length[size_t(r)]; ++k) {
      const size_t s = size_t(rgcsr::slot(first, k, G));
      M.columns[s]   = A.colidx[start + k];
      M.values[s]    = A.values[start + k];
    }
  }
  M.tail = detail::coo_tail_of(A, K);
  return M;
}

void update_rgcsr_values(const CsrView &A, RgCsrMatrix &M)
{
  detail::check_same_shape(A, M.rows, M.cols, rgcsr_regular_nnz(M) + M.tail.nnz());
  check_csr(A);
  const int32_t G = M.group_size, K = M.hybrid_width;
  // Check the whole pattern first so a refused update leaves M unchanged.
  for (int32_t r = 0; r < A.rows; ++r) {
    if (M.row_length[size_t(r)] != std::min(A.row_length(r), K)) throw detail::pattern_changed(r);
    const int64_t first = rgcsr::row_first_slot(M.group_pointers.data(), r, G);
    for (int32_t k = 0; k < M.row_length[size_t(r)]; ++k)
      if (M.columns[size_t(rgcsr::slot(first, k, G))] != A.colidx[A.rowptr[r] + k]) throw detail::pattern_changed(r);
  }
  update_coo_tail_values(A, K, M.tail);
  // Positions follow from rowptr: the k-th nonzero of row r sits at slot k of the row.
  for (int32_t r = 0; r < A.rows; ++r) {
    const int64_t first = rgcsr::row_first_slot(M.group_pointers.data(), r, G);
    const int32_t start = A.rowptr[r];
    for (int32_t k = 0; k < M.row_length[size_t(r)]; ++k) M.values[size_t(rgcsr::slot(first, k, G))] = A.values[start + k];
  }
}

int64_t rgcsr_regular_nnz(const RgCsrMatrix &M)
{
  int64_t n = 0;
  for (int32_t l : M.row_length) n += l;
  return n;
}

} // namespace pspmv
