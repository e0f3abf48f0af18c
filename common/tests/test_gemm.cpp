// Host-side pieces of gpu100/gemm.h: which entries are checked, the tolerance, and that the
// sampled check passes a correct product and fails one with a single wrong entry.
#include <gtest/gtest.h>

#include <set>

#include "gpu100/gemm.h"
#include "gpu100/random.h"
#include "internal.h"

namespace {

std::vector<float> matmul(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                          int64_t n, int64_t k) {
  std::vector<float> c(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float s = 0;
      for (int64_t p = 0; p < k; ++p) s += a[size_t(i * k + p)] * b[size_t(p * n + j)];
      c[size_t(i * n + j)] = s;
    }
  return c;
}

TEST(Gemm, SmallProblemsCheckEveryEntry) {
  auto pts = gpu100::gemm_check_points(257, 131, 67, 1);
  EXPECT_EQ(pts.size(), size_t(257 * 131));
  std::set<std::pair<int64_t, int64_t>> seen(pts.begin(), pts.end());
  EXPECT_EQ(seen.size(), pts.size());
}

TEST(Gemm, LargeProblemsSampleEdgesAndCorners) {
  const int64_t m = 4099, n = 3001, k = 4096;
  auto pts = gpu100::gemm_check_points(m, n, k, 7, 2000);
  EXPECT_EQ(pts.size(), size_t(2000));
  std::set<std::pair<int64_t, int64_t>> seen(pts.begin(), pts.end());
  EXPECT_TRUE(seen.count({m - 1, n - 1}));
  EXPECT_TRUE(seen.count({0, n - 1}));
  int last_row = 0, last_col = 0;
  for (auto [i, j] : pts) {
    ASSERT_GE(i, 0);
    ASSERT_LT(i, m);
    ASSERT_GE(j, 0);
    ASSERT_LT(j, n);
    last_row += i == m - 1;
    last_col += j == n - 1;
  }
  EXPECT_GT(last_row, 100);
  EXPECT_GT(last_col, 100);
}

TEST(Gemm, ToleranceGrowsWithKAndNeverBelowFp32) {
  EXPECT_DOUBLE_EQ(gpu100::gemm_tolerance(1).rel_l2, 1e-5);
  EXPECT_GT(gpu100::gemm_tolerance(1 << 20).rel_l2, gpu100::gemm_tolerance(1 << 10).rel_l2);
  EXPECT_GT(gpu100::gemm_tolerance(64, 1.0 / 2048).rel_l2, 1.0 / 2048);
}

TEST(Gemm, CheckPassesFloatProductAndFailsOneWrongTerm) {
  const int64_t m = 67, n = 45, k = 513;
  auto a = gpu100::random_floats(size_t(m * k), 1);
  auto b = gpu100::random_floats(size_t(k * n), 2);
  auto c = matmul(a, b, m, n, k);
  auto tol = gpu100::gemm_tolerance(k);
  EXPECT_TRUE(gpu100::check_gemm(c.data(), a.data(), b.data(), m, n, k, tol, 3).pass);
  // One output entry missing one product term, as a tile-edge bug would make it.
  c[size_t(33 * n + 44)] -= a[size_t(33 * k + 512)] * b[size_t(512 * n + 44)];
  EXPECT_FALSE(gpu100::check_gemm(c.data(), a.data(), b.data(), m, n, k, tol, 3).pass);
}

TEST(Gemm, CheckUsesAlphaBetaAndHalfValues) {
  const int64_t m = 5, n = 7, k = 9;
  auto a = gpu100::half_values(gpu100::to_half(gpu100::random_floats(size_t(m * k), 4)));
  auto b = gpu100::half_values(gpu100::to_half(gpu100::random_floats(size_t(k * n), 5)));
  auto c0 = gpu100::random_floats(size_t(m * n), 6);
  auto c = matmul(a, b, m, n, k);
  for (size_t i = 0; i < c.size(); ++i) c[i] = 2.0f * c[i] - 0.5f * c0[i];
  auto tol = gpu100::gemm_tolerance(k);
  EXPECT_TRUE(
      gpu100::check_gemm(c.data(), a.data(), b.data(), m, n, k, tol, 3, 2.0f, -0.5f, c0.data()).pass);
  EXPECT_FALSE(gpu100::check_gemm(c.data(), a.data(), b.data(), m, n, k, tol, 3).pass);
}

}  // namespace

namespace {

gpu100::Stats timed(double ms) { return gpu100::summarize({ms, ms, ms}); }
gpu100::CheckResult verdict(bool pass) {
  gpu100::CheckResult c;
  c.checked = true;
  c.pass = pass;
  return c;
}

}  // namespace

// --sweep follows the fastest version that passed: a faster failing version, or one that was only
// checked, must not be chosen; no passing version gives an empty name.
TEST(Gemm, BestPassingVersionSkipsFailedAndUntimed) {
  gpu100::RunReport r("day999", "test");
  EXPECT_EQ(gpu100::best_passing_version(r), "");
  r.add("slow", timed(4.0), 1.0, verdict(true));
  r.add("fast_but_wrong", timed(1.0), 4.0, verdict(false));
  r.add_check("checked_only", verdict(true));
  r.add("medium", timed(2.0), 2.0, verdict(true));
  EXPECT_EQ(gpu100::best_passing_version(r), "medium");
}

// Tensor-core accumulation truncates: its bound must contain the fp32 one and grow linearly in K.
TEST(Gemm, TensorCoreToleranceAddsALinearTerm) {
  const auto g = gpu100::gemm_tolerance(8192), t = gpu100::tensor_core_gemm_tolerance(8192);
  EXPECT_GT(t.rel_l2, g.rel_l2);
  EXPECT_GT(t.max_abs_rel, g.max_abs_rel);
  const double d1 = gpu100::tensor_core_gemm_tolerance(1 << 12).rel_l2 -
                    gpu100::gemm_tolerance(1 << 12).rel_l2;
  const double d2 = gpu100::tensor_core_gemm_tolerance(1 << 14).rel_l2 -
                    gpu100::gemm_tolerance(1 << 14).rel_l2;
  EXPECT_NEAR(d2 / d1, 4.0, 1e-9);
  // Still far below one missing product term out of K = 8192 (~1/sqrt(K) ~ 1e-2 in that entry).
  EXPECT_LT(t.max_abs_rel, 1e-3);
}
