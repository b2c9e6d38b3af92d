// The library's exceptions in the GPU tests: what a host or device build threw (type, fields,
// message), compared field by field.
#pragma once
#include "core/csr.hpp"
#include "mixed/scaled_copy.hpp"
#include <cstring>
#include <functional>
#include <gtest/gtest.h>
#include <string>

namespace gputest
{

// What a build or update threw: the exception's kind and fields ("" when nothing).
struct Thrown {
  std::string kind, what;
  int64_t     row = -1, col = -1;
  double      value = 0.0;
};

inline Thrown catch_core(const std::function<void()> &f)
{
  Thrown t;
  try {
    f();
  } catch (const pspmv::mixed::DiagonalError &e) {
    t = Thrown{"DiagonalError", e.what(), e.row, -1, e.value};
  } catch (const pspmv::ValueRangeError &e) {
    t = Thrown{"ValueRangeError", e.what(), e.row, e.col, 0.0};
  } catch (const pspmv::FormatError &e) {
    t = Thrown{"FormatError", e.what()};
  }
  return t;
}

inline void expect_same_error(const Thrown &host, const Thrown &dev, const std::string &w)
{
  EXPECT_EQ(dev.kind, host.kind) << w << ": " << host.what;
  EXPECT_EQ(dev.what, host.what) << w;
  EXPECT_EQ(dev.row, host.row) << w;
  EXPECT_EQ(dev.col, host.col) << w;
  EXPECT_EQ(std::memcmp(&dev.value, &host.value, sizeof(double)), 0) << w << ": value " << dev.value << " vs " << host.value;
}

} // namespace gputest
