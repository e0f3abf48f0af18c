#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gpu100/verify.h"

using gpu100::compare;
using gpu100::compare_exact;
using gpu100::Tolerance;

TEST(Verify, IdenticalFloatsPass) {
  std::vector<float> a{1, 2, 3}, b{1, 2, 3};
  auto r = compare(a, b, Tolerance::FP32());
  EXPECT_TRUE(r.pass);
  EXPECT_EQ(r.rel_err, 0.0);
  EXPECT_EQ(r.count, 3);
}

TEST(Verify, SmallRelativeErrorPassesLargeFails) {
  std::vector<double> ref(1000, 1.0);
  std::vector<float> got(1000, 1.0f);
  got[10] = 1.0f + 1e-6f;
  EXPECT_TRUE(compare(got, ref, Tolerance::FP32()).pass);
  got[10] = 1.1f;
  auto r = compare(got, ref, Tolerance::FP32());
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.worst_index, 10);
  EXPECT_NEAR(r.max_abs_err, 0.1, 1e-6);
}

TEST(Verify, NanNeverPasses) {
  std::vector<float> ref{1, 2, 3}, got{1, std::numeric_limits<float>::quiet_NaN(), 3};
  auto r = compare(got, ref, Tolerance::Custom(1e30, 1e30));
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.nonfinite, 1);
  EXPECT_EQ(r.worst_index, 1);
}

TEST(Verify, InfNeverPasses) {
  std::vector<float> ref{1, 2}, got{1, std::numeric_limits<float>::infinity()};
  EXPECT_FALSE(compare(got, ref, Tolerance::FP16()).pass);
}

TEST(Verify, PoisonedOutputFails) {
  // 0xFFFFFFFF is a NaN: an element the kernel never wrote is caught.
  float poison;
  unsigned bits = 0xFFFFFFFFu;
  std::memcpy(&poison, &bits, sizeof poison);
  std::vector<float> ref{0.5f, 0.25f}, got{0.5f, poison};
  EXPECT_FALSE(compare(got, ref, Tolerance::FP32()).pass);
}

TEST(Verify, MaxAbsBoundScalesWithReference) {
  // One element off by 1e-3 of max|ref| in 10^6: L2 error tiny, but max abs error too big.
  std::vector<double> ref(1000000, 1000.0);
  std::vector<double> got = ref;
  got[5] += 1.0;
  auto r = compare(got, ref, Tolerance::FP32());
  EXPECT_LT(r.rel_err, 1e-5);
  EXPECT_FALSE(r.pass);
}

TEST(Verify, TolerancesOrderedByPrecision) {
  EXPECT_LT(Tolerance::FP32().rel_l2, Tolerance::TF32().rel_l2);
  EXPECT_LT(Tolerance::TF32().rel_l2, Tolerance::FP16().rel_l2);
}

TEST(Verify, ExactModeCountsMismatches) {
  std::vector<int> ref{1, 2, 3, 4}, got{1, 2, 5, 6};
  auto r = compare_exact(got, ref);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.mismatches, 2);
  EXPECT_EQ(r.worst_index, 2);
  EXPECT_TRUE(compare_exact(ref, ref).pass);
}

TEST(Verify, ExactToleranceThroughErrorStats) {
  std::vector<float> ref{1, 2}, got{1, 2.0000002f};
  EXPECT_FALSE(compare(got, ref, Tolerance::Exact()).pass);
  EXPECT_TRUE(compare(ref, ref, Tolerance::Exact()).pass);
}

TEST(Verify, EmptyComparisonDoesNotPass) {
  std::vector<float> a;
  EXPECT_FALSE(compare(a, a, Tolerance::FP32()).pass);
  EXPECT_FALSE(compare_exact(a, a).pass);
}

TEST(Verify, SizeMismatchFails) {
  std::vector<float> a{1, 2}, b{1};
  EXPECT_FALSE(compare(a, b, Tolerance::FP32()).pass);
}

TEST(Verify, CombineFailsIfEitherFails) {
  std::vector<float> ok{1, 2}, bad{1, 3};
  auto good = compare(ok, ok, Tolerance::FP32());
  auto wrong = compare(bad, ok, Tolerance::FP32());
  EXPECT_FALSE(gpu100::combine(good, wrong).pass);
  EXPECT_FALSE(gpu100::combine(wrong, good).pass);
  EXPECT_TRUE(gpu100::combine(good, good).pass);
}

TEST(Verify, DescribeNamesTheFailure) {
  std::vector<int> ref{1, 2, 3}, got{1, 9, 3};
  auto text = compare_exact(got, ref).describe();
  EXPECT_NE(text.find("FAIL"), std::string::npos);
  EXPECT_NE(text.find("index 1"), std::string::npos);
}

TEST(Verify, SummationBoundGrowsWithAdditions) {
  const double u = std::ldexp(1.0, -24);
  EXPECT_NEAR(gpu100::summation_error_bound(27, 1), 27 * u / (1 - 27 * u) + std::ldexp(1.0, -53), 1e-18);
  EXPECT_LT(gpu100::summation_error_bound(10, 1000), gpu100::summation_error_bound(20, 1000));
  // A sum with one input dropped (1 of 1000 values near 1) is far outside the bound.
  std::vector<double> ref{500.0};
  std::vector<float> got{499.0f};
  EXPECT_FALSE(compare(got, ref, gpu100::summation_tolerance(10, 1000)).pass);
  std::vector<float> close{500.0001f};
  EXPECT_TRUE(compare(close, ref, gpu100::summation_tolerance(10, 1000)).pass);
}

TEST(Verify, ExactFloatsCompareBitPatterns) {
  std::vector<float> pos{0.0f, 1.0f}, neg{-0.0f, 1.0f};
  EXPECT_FALSE(compare_exact(neg, pos).pass);  // -0 is not +0 bit for bit
  EXPECT_TRUE(compare_exact(pos, pos).pass);
}

// Softmax's backward dx_i = y_i (dy_i - sum_j dy_j y_j) passes; the common slip of leaving out
// the y_i factor, or the sum, fails.
TEST(Verify, GradientCheckSeparatesRightFromWrongBackward) {
  const auto softmax = [](const std::vector<double>& x) {
    double m = x[0], s = 0;
    for (double v : x) m = std::max(m, v);
    std::vector<double> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) s += y[i] = std::exp(x[i] - m);
    for (double& v : y) v /= s;
    return y;
  };
  const std::vector<double> x{0.3, -1.2, 2.0, 0.7}, dy{1.0, -0.5, 0.25, 2.0};
  const auto y = softmax(x);
  double dot = 0;
  for (size_t i = 0; i < x.size(); ++i) dot += dy[i] * y[i];
  std::vector<double> right(x.size()), no_factor(x.size()), no_sum(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    right[i] = y[i] * (dy[i] - dot);
    no_factor[i] = dy[i] - dot;
    no_sum[i] = y[i] * dy[i];
  }
  EXPECT_TRUE(gpu100::check_gradient(softmax, x, dy, right).pass);
  EXPECT_FALSE(gpu100::check_gradient(softmax, x, dy, no_factor).pass);
  EXPECT_FALSE(gpu100::check_gradient(softmax, x, dy, no_sum).pass);
  std::vector<double> one_off = right;
  one_off[2] *= 1.001;  // a 0.1% error in one coordinate is far above the 1e-6 tolerance
  EXPECT_FALSE(gpu100::check_gradient(softmax, x, dy, one_off).pass);
}

TEST(Verify, Bf16IsLooserThanFp16) {
  EXPECT_LT(Tolerance::FP16().rel_l2, Tolerance::BF16().rel_l2);
  EXPECT_LT(Tolerance::FP16().max_abs_rel, Tolerance::BF16().max_abs_rel);
}

// Each element against its own bound: an error inside a large bound passes, the same error past
// a small one fails, and a NaN fails whatever its bound.
TEST(Verify, CompareWithinUsesEachElementsBound) {
  const std::vector<double> ref{1.0, 2.0, 3.0}, bound{1e-3, 1e-6, 1e-3};
  const std::vector<float> close{1.0005f, 2.0f, 3.0f}, past{1.0f, 2.00001f, 3.0f},
      nan{1.0f, 2.0f, std::nanf("")};
  EXPECT_TRUE(gpu100::compare_within(close, ref, bound, "bound").pass);
  const auto c = gpu100::compare_within(past, ref, bound, "bound");
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_EQ(c.worst_index, 1);
  EXPECT_NE(c.describe().find("beyond their error bounds"), std::string::npos);
  EXPECT_FALSE(gpu100::compare_within(nan, ref, bound, "bound").pass);
  EXPECT_THROW(gpu100::compare_within(close, ref, std::vector<double>{1.0}, "bound"),
               std::invalid_argument);
}
