// The rule that picks the threads per row of the device kernels (core/threads_per_row.hpp).
#include "core/threads_per_row.hpp"
#include <gtest/gtest.h>

using pspmv::threads_per_row;

TEST(ThreadsPerRow, LargestPowerOfTwoUpToEightWithinHalfTheResidentThreads) {
  const int64_t h200 = 132 * 2048; // 270336 resident threads: half is 135168
  EXPECT_EQ(threads_per_row(479, h200), 8);
  EXPECT_EQ(threads_per_row(135168 / 8, h200), 8);
  EXPECT_EQ(threads_per_row(135168 / 8 + 1, h200), 4);
  EXPECT_EQ(threads_per_row(135168 / 4, h200), 4);
  EXPECT_EQ(threads_per_row(135168 / 4 + 1, h200), 2);
  EXPECT_EQ(threads_per_row(135168 / 2, h200), 2);
  EXPECT_EQ(threads_per_row(135168 / 2 + 1, h200), 1);
  EXPECT_EQ(threads_per_row(8000000, h200), 1);
}

TEST(ThreadsPerRow, NoRowsOrNoDeviceGiveOne) {
  EXPECT_EQ(threads_per_row(0, 270336), 1);
  EXPECT_EQ(threads_per_row(-1, 270336), 1);
  EXPECT_EQ(threads_per_row(1, 0), 1);
  EXPECT_EQ(threads_per_row(1, 4), 2); // 1 row x 2 threads <= 4 / 2
  EXPECT_EQ(threads_per_row(1, 1 << 30), 8);
}
