// The two formats' host APIs behind one interface, for typed tests over the formats
// (TYPED_TEST_SUITE(Suite, HostFormats)): types, builder, value update, diagonal, product.
// tests/gpu/format_traits.hpp adds the device side. The suites take gtest's default names,
// Suite/0 (RgCSR) and Suite/1 (PackSELL): CMake's gtest_discover_tests makes them the ctest
// names Suite.Case<pspmv_test::RgCsrHost> (a name generator's Suite/RgCsr it cannot parse).
#pragma once
#include "formats/packsell/packsell.hpp"
#include "formats/rgcsr/rgcsr.hpp"
#include <gtest/gtest.h>
#include <string>

namespace pspmv_test
{

struct RgCsrHost {
  using Host                          = pspmv::RgCsrMatrix;
  using Options                       = pspmv::RgCsrOptions;
  static constexpr const char *kLabel = "RgCSR"; // failure messages
  // 0 and 1: typed tests that draw random matrices per format use seed + kIndex (or
  // + 100 * kIndex): the matrices of the former per-format tests.
  static constexpr int kIndex = 0;

  static Host build(const pspmv::CsrView &A, const Options &o) { return pspmv::build_rgcsr(A, o); }
  static void update(const pspmv::CsrView &B, Host &M) { pspmv::update_rgcsr_values(B, M); }
  static void diagonal(const Host &M, double *d) { pspmv::rgcsr_diagonal(M, d); }
  static void spmv(const Host &M, const double *x, double *y, bool add) { pspmv::rgcsr_spmv(M, x, y, add); }
  // Rows per group (G), and the layout's slot pointers (per group).
  static int32_t                     block(const Host &M) { return M.group_size; }
  static const std::vector<int64_t> &slot_pointers(const Host &M) { return M.group_pointers; }
  // The exact value stored in slot p.
  static double stored_value(const Host &M, size_t p) { return M.values[p]; }
};

struct PackSellHost {
  using Host                          = pspmv::PackSellMatrix;
  using Options                       = pspmv::PackSellOptions;
  static constexpr const char *kLabel = "PackSELL";
  static constexpr int         kIndex = 1;

  static Host                        build(const pspmv::CsrView &A, const Options &o) { return pspmv::build_packsell(A, o); }
  static void                        update(const pspmv::CsrView &B, Host &M) { pspmv::update_packsell_values(B, M); }
  static void                        diagonal(const Host &M, double *d) { pspmv::packsell_diagonal(M, d); }
  static void                        spmv(const Host &M, const double *x, double *y, bool add) { pspmv::packsell_spmv(M, x, y, add); }
  static int32_t                     block(const Host &M) { return M.slice_height; }
  static const std::vector<int64_t> &slot_pointers(const Host &M) { return M.slice_pointers; }
  // Exact layouts only (the value format exact keeps FP64 values beside the words).
  static double stored_value(const Host &M, size_t p) { return M.exact_values[p]; }
};

using HostFormats = testing::Types<RgCsrHost, PackSellHost>;

} // namespace pspmv_test
