// The emulator's metrics in the report: under emulation they replace the CPU times in the table
// and go into the JSON; without the emulator (these tests run on the real runtime) there are none.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu100/device.h"
#include "gpu100/emu_metrics.h"
#include "gpu100/report.h"
#include "internal.h"

namespace {

gpu100::Stats ms(double v) { return gpu100::summarize({v, v, v}); }
gpu100::CheckResult ok() {
  std::vector<float> a{1, 2};
  return gpu100::compare(a, a, gpu100::Tolerance::FP32());
}
std::string printed(const gpu100::RunReport& r) {
  testing::internal::CaptureStdout();
  r.print();
  return testing::internal::GetCapturedStdout();
}
bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A misaligned float load: 100 requests of 5 sectors where 4 hold the bytes; a shared tile read
// down a column: 10 requests of 32 wavefronts each.
gpu100::EmuMetrics sample() {
  gpu100::EmuMetrics m{};
  m.size = sizeof m;
  m.launches = 1;
  m.warp_instructions = 12345;
  m.divergent_branches = 7;
  m.global_load_requests = 100;
  m.global_load_sectors = 500;
  m.global_load_ideal_sectors = 400;
  m.global_store_requests = 3;
  m.global_store_sectors = 10;
  m.global_store_ideal_sectors = 3;
  m.shared_load_requests = 10;
  m.shared_load_wavefronts = 320;
  m.shared_load_ideal_wavefronts = 10;
  m.global_atomic_threads = 256;
  m.shared_atomic_threads = 4096;
  m.device_bytes_peak = 1 << 20;
  return m;
}

gpu100::RunReport report(bool emulated) {
  gpu100::RunReport r("day025", "memory_coalescing");
  r.emulated(emulated);
  r.add("misaligned", ms(3.5), 1, ok());
  r.metrics("misaligned", sample());
  r.add("other", ms(2.5), 1, ok());  // a version without metrics
  return r;
}

}  // namespace

TEST(EmuMetrics, NoneWithoutTheEmulator) {
  EXPECT_FALSE(gpu100::emu_metrics_now().has_value());
  const gpu100::EmuMetricsScope scope;
  EXPECT_FALSE(scope.take().has_value());
}

TEST(EmuMetrics, CellsArePerRequestWithTheIdealBeside) {
  const auto cells = gpu100::emu_metric_cells(sample());
  ASSERT_EQ(cells.size(), gpu100::emu_metric_columns().size());
  EXPECT_EQ(cells[0], "12345");           // warp instructions
  EXPECT_EQ(cells[1], "7");               // divergent branches
  EXPECT_EQ(cells[2], "100");             // load requests
  EXPECT_EQ(cells[3], "5 (4)");           // load sectors per request (ideal)
  EXPECT_EQ(cells[4], "3");               // store requests
  EXPECT_EQ(cells[5], "3.33 (1)");        // store sectors per request (ideal)
  EXPECT_EQ(cells[6], "32 (1)");          // shared wavefronts per request (ideal)
  EXPECT_EQ(cells[7], "310");             // bank conflicts: wavefronts beyond the ideal
  EXPECT_EQ(cells[8], "256/4096");        // atomics, global/shared
  for (const auto& c : gpu100::emu_metric_cells(std::nullopt)) EXPECT_EQ(c, "-");
}

TEST(EmuMetrics, EmulatedTableShowsThemInPlaceOfTimes) {
  const std::string out = printed(report(true));
  EXPECT_FALSE(contains(out, "emulator ms"));
  EXPECT_FALSE(contains(out, "3.500"));  // the CPU time of the version
  EXPECT_TRUE(contains(out, "ld sect/req"));
  EXPECT_TRUE(contains(out, "5 (4)"));
  EXPECT_TRUE(contains(out, "32 (1)"));
  EXPECT_TRUE(contains(out, "note: emulated metrics of each version's checked run"));
  // A GPU run never has metrics; its table is the usual one.
  const std::string gpu = printed(report(false));
  EXPECT_FALSE(contains(gpu, "ld sect/req"));
  EXPECT_TRUE(contains(gpu, "median ms"));
}

TEST(EmuMetrics, EmulatedJsonCarriesEveryCounter) {
  const gpu100::RunReport r = report(true);
  const auto j = nlohmann::json::parse(r.json(nullptr));
  const auto& v = j["versions"][0];
  ASSERT_TRUE(v.contains("metrics"));
  EXPECT_EQ(v["metrics"]["global_load_sectors"], 500);
  EXPECT_EQ(v["metrics"]["global_load_ideal_sectors"], 400);
  EXPECT_EQ(v["metrics"]["shared_load_wavefronts"], 320);
  EXPECT_EQ(v["metrics"]["device_bytes_peak"], 1 << 20);
  EXPECT_EQ(v["metrics"].size(), gpu100::emu_metric_fields(sample()).size());
  EXPECT_FALSE(j["versions"][1].contains("metrics"));
}

TEST(EmuMetrics, AttachingToAnUnknownVersionIsAnError) {
  gpu100::RunReport r("day001", "vector_add");
  r.add("naive", ms(1), 1, ok());
  EXPECT_THROW(r.metrics("float4", sample()), std::logic_error);
}
