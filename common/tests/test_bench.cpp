#include <gtest/gtest.h>

#include "gpu100/bench.h"

using gpu100::summarize;

TEST(Summarize, OddCountMedianIsMiddle) {
  auto s = summarize({5.0, 1.0, 3.0});
  EXPECT_EQ(s.samples, 3);
  EXPECT_DOUBLE_EQ(s.median_ms, 3.0);
  EXPECT_DOUBLE_EQ(s.min_ms, 1.0);
  EXPECT_DOUBLE_EQ(s.max_ms, 5.0);
}

TEST(Summarize, EvenCountMedianIsMeanOfMiddleTwo) {
  auto s = summarize({4.0, 1.0, 2.0, 100.0});
  EXPECT_DOUBLE_EQ(s.median_ms, 3.0);
  EXPECT_DOUBLE_EQ(s.max_ms, 100.0);
}

TEST(Summarize, MedianIgnoresOneOutlier) {
  auto s = summarize({1.0, 1.0, 1.0, 1.0, 50.0});
  EXPECT_DOUBLE_EQ(s.median_ms, 1.0);
  EXPECT_DOUBLE_EQ(s.max_ms, 50.0);
}

TEST(Summarize, EmptyIsInvalid) {
  auto s = summarize({});
  EXPECT_FALSE(s.valid());
  EXPECT_EQ(s.samples, 0);
}

TEST(Rates, GigabytesAndTeraflops) {
  EXPECT_DOUBLE_EQ(gpu100::gbps(2e9, 1000.0), 2.0);   // 2 GB in 1 s
  EXPECT_DOUBLE_EQ(gpu100::gbps(1e6, 1.0), 1.0);      // 1 MB in 1 ms
  EXPECT_DOUBLE_EQ(gpu100::tflops(2e12, 1000.0), 2.0);
  EXPECT_DOUBLE_EQ(gpu100::gbps(1.0, 0.0), 0.0);       // no division by zero
}
