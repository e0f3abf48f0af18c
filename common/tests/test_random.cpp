#include <gtest/gtest.h>

#include <algorithm>

#include "gpu100/random.h"

TEST(Random, SameSeedSameData) {
  EXPECT_EQ(gpu100::random_floats(1000, 7), gpu100::random_floats(1000, 7));
  EXPECT_NE(gpu100::random_floats(1000, 7), gpu100::random_floats(1000, 8));
}

TEST(Random, FloatsStayInTheHalfOpenIntervalAndAreNotAllZero) {
  auto v = gpu100::random_floats(100000, 3, 0.5f, 2.0f);
  EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](float x) { return x >= 0.5f && x < 2.0f; }));
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  EXPECT_LT(*lo, 0.51f);
  EXPECT_GT(*hi, 1.99f);
}

TEST(Random, IntsCoverTheInclusiveRange) {
  auto v = gpu100::random_ints(10000, 1, -3, 3);
  EXPECT_EQ(*std::min_element(v.begin(), v.end()), -3);
  EXPECT_EQ(*std::max_element(v.begin(), v.end()), 3);
}

TEST(Random, PrefixIsIndependentOfLength) {
  auto a = gpu100::random_floats(10, 5);
  auto b = gpu100::random_floats(100, 5);
  EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin()));
}
