// The rule that picks the threads per row of the device kernels (core/threads_per_row.hpp).
#include "core/threads_per_row.hpp"
#include <gtest/gtest.h>
#include <utility>
#include <vector>

using pspmv::threads_per_row;

constexpr int64_t kH200 = 132 * 2048; // resident threads; 3/4 of them: 202752

TEST(ThreadsPerRow, FewRowsGetUpToEightThreadsWithinThreeQuartersOfTheGpu)
{
  const int64_t long_rows = 100; // slots per row: never the limit here
  for (const auto &[rows, T] : std::vector<std::pair<int64_t, int>>{{479, 8}, {202752 / 8, 8}, {202752 / 8 + 1, 4}, {202752 / 4, 4}, {202752 / 4 + 1, 2}, {202752 / 2, 2}, {202752 / 2 + 1, 1}, {8000000, 1}})
    EXPECT_EQ(threads_per_row(rows, rows * long_rows, kH200), T) << rows << " rows";
}

TEST(ThreadsPerRow, NoMoreThreadsThanSlotsPerRowOnAverage)
{
  EXPECT_EQ(threads_per_row(1000, 8000, kH200), 8);
  EXPECT_EQ(threads_per_row(1000, 7999, kH200), 4);
  EXPECT_EQ(threads_per_row(1000, 4000, kH200), 4);
  EXPECT_EQ(threads_per_row(1000, 3999, kH200), 2);
  EXPECT_EQ(threads_per_row(1000, 2000, kH200), 2);
  EXPECT_EQ(threads_per_row(1000, 1999, kH200), 1);
  EXPECT_EQ(threads_per_row(1000, 0, kH200), 1); // every nonzero in the COO tail
}

TEST(ThreadsPerRow, NoRowsOrNoDeviceGiveOne)
{
  EXPECT_EQ(threads_per_row(0, 0, kH200), 1);
  EXPECT_EQ(threads_per_row(-1, 10, kH200), 1);
  EXPECT_EQ(threads_per_row(1, 100, 0), 1);
  EXPECT_EQ(threads_per_row(1, 100, 2), 1); // 1 row x 2 threads > 3/4 of 2
  EXPECT_EQ(threads_per_row(1, 100, 3), 2); // 2 threads <= 3/4 of 3
  EXPECT_EQ(threads_per_row(1, 100, 1 << 30), 8);
}
