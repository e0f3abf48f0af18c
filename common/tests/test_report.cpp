#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "gpu100/device.h"
#include "gpu100/report.h"
#include "internal.h"

namespace {
gpu100::Stats ms(double v) { return gpu100::summarize({v, v, v}); }
gpu100::CheckResult ok() {
  std::vector<float> a{1, 2};
  return gpu100::compare(a, a, gpu100::Tolerance::FP32());
}
gpu100::CheckResult bad() {
  std::vector<float> a{1, 2}, b{1, 3};
  return gpu100::compare(a, b, gpu100::Tolerance::FP32());
}
}  // namespace

TEST(Report, PassOnlyWhenEveryVersionPasses) {
  gpu100::RunReport r("day001", "vector_add");
  EXPECT_FALSE(r.passed());  // nothing ran
  r.add("a", ms(1), 10, ok());
  EXPECT_TRUE(r.passed());
  r.add("b", ms(1), 10, bad());
  EXPECT_FALSE(r.passed());
}

TEST(Report, FindReturnsTheRecordedVersionOrNull) {
  gpu100::RunReport r("day001", "vector_add");
  r.add("a", ms(2), 10, ok());
  r.add("b", ms(1), 20, bad());
  ASSERT_NE(r.find("b"), nullptr);
  EXPECT_EQ(r.find("b")->rate, 20);
  EXPECT_FALSE(r.find("b")->check.pass);
  EXPECT_EQ(r.find("c"), nullptr);
}

TEST(Report, UncheckedVersionDoesNotPass) {
  gpu100::RunReport r("day001", "vector_add");
  r.add("a", ms(1), 10, gpu100::CheckResult{});
  EXPECT_FALSE(r.passed());
}

TEST(Report, JsonHasTheDesignKeysAndRatios) {
  gpu100::RunReport r("day001", "vector_add");
  r.source_hash = "abc";
  r.problem("n", 1000);
  r.unit("GB/s");
  r.limit("dram_gbps", 2000, "HBM peak");
  r.baseline("copy", ms(2), 1600);
  r.add("float4", ms(1), 1500, ok());
  gpu100::DeviceInfo d;
  d.name = "Test GPU";
  d.cc_major = 9;
  auto j = nlohmann::json::parse(r.json(&d));
  EXPECT_EQ(j["day"], "day001");
  EXPECT_EQ(j["topic"], "vector_add");
  EXPECT_EQ(j["status"], "PASS");
  EXPECT_EQ(j["source_hash"], "abc");
  EXPECT_EQ(j["device"]["name"], "Test GPU");
  EXPECT_EQ(j["device"]["cc"], "9.0");
  EXPECT_EQ(j["problem"]["n"], 1000);
  EXPECT_EQ(j["limit"]["value"], 2000);
  EXPECT_EQ(j["baseline"]["name"], "copy");
  ASSERT_EQ(j["versions"].size(), 1u);
  auto v = j["versions"][0];
  EXPECT_EQ(v["name"], "float4");
  EXPECT_EQ(v["status"], "PASS");
  EXPECT_DOUBLE_EQ(v["median_ms"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(v["pct_of_limit"].get<double>(), 75.0);
  EXPECT_DOUBLE_EQ(v["x_baseline"].get<double>(), 1500.0 / 1600.0);
  EXPECT_DOUBLE_EQ(v["pct_of_baseline"].get<double>(), 100.0 * 1500.0 / 1600.0);
  EXPECT_TRUE(j.contains("date"));
  EXPECT_TRUE(j.contains("commit"));
}

TEST(Report, NonFiniteNumbersBecomeNull) {
  gpu100::RunReport r("day001", "t");
  r.add("a", ms(0.0), std::nan(""), ok());
  auto j = nlohmann::json::parse(r.json(nullptr));
  EXPECT_TRUE(j["versions"][0]["rate"].is_null());
}

TEST(Report, TablesKeepNumbersAsNumbers) {
  gpu100::RunReport r("day025", "t");
  gpu100::Table t{"sweep", {"stride", "GB/s"}, {}};
  t.add_row({1, 1234.5});
  t.add_row({"odd", 2.0});
  r.table(t);
  auto j = nlohmann::json::parse(r.json(nullptr));
  EXPECT_EQ(j["tables"][0]["title"], "sweep");
  EXPECT_EQ(j["tables"][0]["rows"][0][0], 1);
  EXPECT_DOUBLE_EQ(j["tables"][0]["rows"][0][1].get<double>(), 1234.5);
  EXPECT_EQ(j["tables"][0]["rows"][1][0], "odd");
}

TEST(Report, PrintEndsWithTheStatusLine) {
  gpu100::RunReport r("day001", "vector_add");
  r.add("a", ms(1), 10, bad());
  testing::internal::CaptureStdout();
  r.print();
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("day001 vector_add: FAIL\n"), std::string::npos);
  EXPECT_NE(out.find("FAIL"), std::string::npos);
}

TEST(Report, ProblemKeyGivenAgainKeepsItsPlaceAndTakesTheNewValue) {
  gpu100::RunReport r("day999", "t");
  r.problem("n", 5);
  r.problem("pixels", 7);
  r.problem("n", 6);
  const auto j = nlohmann::ordered_json::parse(r.json(nullptr));
  ASSERT_EQ(j["problem"].size(), 2u);
  EXPECT_EQ(j["problem"].begin().key(), "n");
  EXPECT_EQ(j["problem"]["n"], 6);
  EXPECT_EQ(j["problem"]["pixels"], 7);
}

TEST(Report, RateFollowsTheUnit) {
  gpu100::RunReport r("day011", "t");
  r.unit("GB/s");
  EXPECT_DOUBLE_EQ(r.rate(3e9, 1000.0), 3.0);
  r.unit("TFLOP/s");
  EXPECT_DOUBLE_EQ(r.rate(2e12, 1000.0), 2.0);
  r.unit("GFLOP/s");
  EXPECT_DOUBLE_EQ(r.rate(2e12, 1000.0), 2000.0);
  r.unit("blocks/us");
  EXPECT_THROW(r.rate(1, 1), std::invalid_argument);
}
