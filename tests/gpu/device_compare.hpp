// Comparisons of device layouts for the GPU tests: downloads, bit-for-bit array comparison,
// a CSR held on the device, and layout-by-layout equality (every array downloaded) of the
// device structs against a reference (usually upload() of the host build).
#pragma once
#include "formats/device_formats.hpp"
#include "formats/packsell/packsell_layout.hpp"
#include "gpu_test_util.hpp"
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace gputest
{

template <class T>
std::vector<T> dl(const T *p, int64_t n)
{
  std::vector<T> h(size_t(std::max<int64_t>(n, 0)));
  if (n > 0) {
    EXPECT_NE(p, nullptr);
    if (p) EXPECT_EQ(cudaMemcpy(h.data(), p, sizeof(T) * h.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  } else {
    EXPECT_EQ(p, nullptr) << "an empty array must not be allocated";
  }
  return h;
}

template <class T>
void expect_bits(const std::vector<T> &a, const std::vector<T> &b, const std::string &what)
{
  ASSERT_EQ(a.size(), b.size()) << what << ": sizes";
  if (!a.empty() && std::memcmp(a.data(), b.data(), sizeof(T) * a.size()) != 0) {
    size_t i = 0;
    while (std::memcmp(&a[i], &b[i], sizeof(T)) == 0) ++i;
    ADD_FAILURE() << what << ": first difference at " << i << " of " << a.size() << ": " << a[i] << " vs " << b[i];
  }
}

// The CSR on the device.
struct DevCsr {
  DeviceArray<int32_t>   rowptr, colidx;
  DeviceArray<double>    values;
  pspmv::cuda::DeviceCsr v;
  explicit DevCsr(const HostCsr &A) : rowptr(A.rowptr.size()), colidx(A.colidx.size()), values(A.values.size())
  {
    rowptr.upload(A.rowptr);
    colidx.upload(A.colidx);
    values.upload(A.values);
    v.rows   = A.rows;
    v.cols   = A.cols;
    v.nnz    = A.nnz();
    v.rowptr = rowptr.get();
    v.colidx = colidx.get();
    v.values = values.get();
  }
};

inline void expect_stats(const pspmv::FormatStats &h, const pspmv::FormatStats &d, const std::string &w)
{
  EXPECT_EQ(h.rows, d.rows) << w;
  EXPECT_EQ(h.cols, d.cols) << w;
  EXPECT_EQ(h.nnz, d.nnz) << w;
  EXPECT_EQ(h.stored_slots, d.stored_slots) << w;
  EXPECT_EQ(h.padding_slots, d.padding_slots) << w;
  EXPECT_EQ(h.dummy_words, d.dummy_words) << w;
  EXPECT_EQ(h.tail_nnz, d.tail_nnz) << w;
  EXPECT_EQ(h.hybrid_width, d.hybrid_width) << w;
  EXPECT_EQ(h.sigma, d.sigma) << w;
  EXPECT_EQ(h.gap_entries, d.gap_entries) << w;
  EXPECT_EQ(h.stored_bytes, d.stored_bytes) << w;
}

inline void expect_tail(const pspmv::cuda::DeviceCooTail &ref, const pspmv::cuda::DeviceCooTail &d, const std::string &w)
{
  ASSERT_EQ(ref.nnz, d.nnz) << w << ": tail nnz";
  expect_bits(dl(ref.row, ref.nnz), dl(d.row, d.nnz), w + ": tail rows");
  expect_bits(dl(ref.col, ref.nnz), dl(d.col, d.nnz), w + ": tail columns");
  expect_bits(dl(ref.val, ref.nnz), dl(d.val, d.nnz), w + ": tail values");
  EXPECT_EQ(ref.sync != nullptr, d.sync != nullptr) << w;
  EXPECT_EQ(ref.chunk, d.chunk) << w << ": the tail kernel's entries per warp";
}

inline void expect_same(const pspmv::cuda::DeviceRgCsr &ref, const pspmv::cuda::DeviceRgCsr &d, const std::string &w)
{
  EXPECT_EQ(ref.rows, d.rows) << w;
  EXPECT_EQ(ref.cols, d.cols) << w;
  EXPECT_EQ(ref.group_size, d.group_size) << w;
  EXPECT_EQ(ref.num_groups, d.num_groups) << w;
  EXPECT_EQ(ref.num_slots, d.num_slots) << w;
  EXPECT_EQ(ref.threads_per_row, d.threads_per_row) << w;
  EXPECT_EQ(ref.hybrid_width, d.hybrid_width) << w;
  EXPECT_EQ(ref.nnz, d.nnz) << w;
  expect_bits(dl(ref.group_pointers, int64_t(ref.num_groups) + 1), dl(d.group_pointers, int64_t(d.num_groups) + 1), w + ": group_pointers");
  expect_bits(dl(ref.row_length, ref.rows), dl(d.row_length, d.rows), w + ": row_length");
  expect_bits(dl(ref.columns, ref.num_slots), dl(d.columns, d.num_slots), w + ": columns");
  expect_bits(dl(ref.values, ref.num_slots), dl(d.values, d.num_slots), w + ": values");
  const int32_t n = std::min(ref.rows, ref.cols);
  expect_bits(dl(ref.diagonal, n), dl(d.diagonal, n), w + ": diagonal");
  expect_tail(ref.tail, d.tail, w);
}

inline void expect_same(const pspmv::cuda::DevicePackSell &ref, const pspmv::cuda::DevicePackSell &d, const std::string &w)
{
  EXPECT_EQ(ref.rows, d.rows) << w;
  EXPECT_EQ(ref.cols, d.cols) << w;
  EXPECT_EQ(ref.slice_height, d.slice_height) << w;
  EXPECT_EQ(ref.num_slices, d.num_slices) << w;
  EXPECT_EQ(ref.delta_bits, d.delta_bits) << w;
  EXPECT_EQ(ref.value_format.name(), d.value_format.name()) << w;
  EXPECT_EQ(std::memcmp(&ref.inv_scale, &d.inv_scale, sizeof(double)), 0) << w << ": inv_scale";
  EXPECT_EQ(ref.scale_exponent, d.scale_exponent) << w;
  EXPECT_EQ(ref.hybrid_width, d.hybrid_width) << w;
  EXPECT_EQ(ref.nnz, d.nnz) << w;
  EXPECT_EQ(ref.threads_per_row, d.threads_per_row) << w;
  ASSERT_EQ(ref.num_words, d.num_words) << w;
  expect_bits(dl(ref.slice_pointers, int64_t(ref.num_slices) + 1), dl(d.slice_pointers, int64_t(d.num_slices) + 1), w + ": slice_pointers");
  expect_bits(dl(ref.perm, ref.rows), dl(d.perm, d.rows), w + ": perm");
  expect_bits(dl(ref.words, ref.num_words), dl(d.words, d.num_words), w + ": words");
  ASSERT_EQ(ref.gaps != nullptr, d.gaps != nullptr) << w << ": column gaps in one layout only";
  if (ref.gaps) expect_bits(dl(ref.gaps, pspmv::packsell::gap_entries(ref.num_words, ref.slice_height)), dl(d.gaps, pspmv::packsell::gap_entries(d.num_words, d.slice_height)), w + ": column gaps");
  const bool exact = ref.value_format.kind == pspmv::ValueKind::Exact;
  expect_bits(dl(ref.exact_values, exact ? ref.num_words : 0), dl(d.exact_values, exact ? d.num_words : 0), w + ": exact_values");
  const int32_t n = std::min(ref.rows, ref.cols);
  expect_bits(dl(ref.diagonal, n), dl(d.diagonal, n), w + ": diagonal");
  expect_tail(ref.tail, d.tail, w);
}

} // namespace gputest
