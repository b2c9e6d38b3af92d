// RgCSR's build driver: the decisions of a build taken once, here, for both backends (the
// algorithm in one place, small backend kernels). RgCSR decides one thing, the hybrid width K
// (core/hybrid's rule over the row lengths and the groups' longest rows); the group pointers
// follow from K (every group G rows of its longest row cut at K). The executors measure and
// fill: the host one in rgcsr_build.cpp, the device one in rgcsr_device_build.cu (only the
// longest row and two histograms of lengths come back to the host).
//
// The executor X provides (each returns a BuildError; None on success):
//   int32_t rows() const;
//   max_row_length(int32_t *maxlen)
//   length_histograms(G, maxlen, std::vector<int64_t> *hist, std::vector<int64_t> *group_hist)
//       hist[l] = rows of length l, group_hist[m] = groups of G rows whose longest row is m
//       (both of size maxlen + 1)
#pragma once
#include "core/build_error.hpp"
#include "core/hybrid.hpp"
#include "rgcsr.hpp"
#include "rgcsr_layout.hpp"
#include <algorithm>
#include <cstdint>
#include <vector>

namespace pspmv
{

// The decisions of one build (plan_rgcsr()).
struct RgCsrPlan {
  int32_t rows           = 0;
  int32_t group_size     = 32; // G
  int32_t num_groups     = 0;
  int32_t max_row_length = 0;
  int32_t hybrid_width   = 0; // K: none: the longest row; a fixed K: at most the longest row; auto: the rule
};

// The plan of a build (options checked by the caller, the CSR valid).
template <class X>
BuildError plan_rgcsr(X &x, const RgCsrOptions &opt, RgCsrPlan *p)
{
  p->rows       = x.rows();
  p->group_size = opt.group_size;
  p->num_groups = rgcsr::num_groups(p->rows, opt.group_size);
  PSPMV_BUILD_TRY(x.max_row_length(&p->max_row_length));
  const int32_t maxlen = p->max_row_length;
  switch (opt.hybrid.mode) {
  case HybridOption::Mode::None:
    p->hybrid_width = maxlen;
    return BuildError{};
  case HybridOption::Mode::Fixed:
    p->hybrid_width = std::min(opt.hybrid.width, maxlen);
    return BuildError{};
  case HybridOption::Mode::Auto:
    break;
  }
  std::vector<int64_t> hist, group_hist;
  PSPMV_BUILD_TRY(x.length_histograms(opt.group_size, maxlen, &hist, &group_hist));
  p->hybrid_width = std::min(choose_hybrid_width_from_counts(hist, group_hist, opt.group_size, kRgCsrHybridCost), maxlen);
  return BuildError{};
}

} // namespace pspmv
