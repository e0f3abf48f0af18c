// Runs under the emulator (emu/): the device is recognized, the report says its times are CPU
// times and shows no GPU figures, and versions that need a closed vendor library are NOT RUN -
// neither passed nor failed - with the day judged by the versions that ran.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <ostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpu100/cli.h"
#include "gpu100/device.h"
#include "gpu100/gemm.h"
#include "gpu100/report.h"
#include "gpu100/run.h"
#include "internal.h"

namespace gpu100 {
// gtest prints an enum as its bytes otherwise.
void PrintTo(Outcome o, std::ostream* os) { *os << outcome_name(o); }
}  // namespace gpu100

namespace {

gpu100::Stats ms(double v) { return gpu100::summarize({v, v, v}); }
gpu100::CheckResult verdict(bool pass) {
  std::vector<float> a{1, 2}, b{1, pass ? 2.0f : 3.0f};
  return gpu100::compare(a, b, gpu100::Tolerance::FP32());
}
std::string printed(const gpu100::RunReport& r) {
  testing::internal::CaptureStdout();
  r.print();
  return testing::internal::GetCapturedStdout();
}
bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}
std::string last_line(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text.substr(text.rfind('\n') + 1);
}

gpu100::DeviceInfo device(bool emulated) {
  gpu100::DeviceInfo d;
  d.name = emulated ? "gpu100 emulator (sm_90)" : "Test GPU";
  d.emulated = emulated;
  d.cc_major = 9;
  return d;
}

// A parsed command line, a device and a report: what gpu100::run hands a day's body.
struct Day {
  gpu100::Cli cli{"test program", "day999", "testing", "hash"};
  gpu100::RunReport report{"day999", "testing"};
  std::unique_ptr<gpu100::Context> ctx;
  explicit Day(bool emulated, std::vector<std::string> args = {}) {
    cli.kernels({"own", "cublas_thing"});
    args.insert(args.begin(), "day999");
    std::vector<const char*> argv;
    for (auto& a : args) argv.push_back(a.c_str());
    EXPECT_EQ(gpu100::CliAccess::parse(cli, int(argv.size()), argv.data()), -1);
    report.emulated(emulated);
    ctx = std::make_unique<gpu100::Context>(cli, device(emulated), report);
  }
};

}  // namespace

TEST(Emulation, DeviceNamePrefixIdentifiesTheEmulator) {
  EXPECT_TRUE(gpu100::is_emulator_name("gpu100 emulator (sm_90)"));
  EXPECT_TRUE(gpu100::is_emulator_name("gpu100 emulator"));
  EXPECT_FALSE(gpu100::is_emulator_name("NVIDIA H100 80GB HBM3"));
  EXPECT_FALSE(gpu100::is_emulator_name("my gpu100 emulator"));  // a prefix, not a substring
  EXPECT_FALSE(gpu100::is_emulator_name("gpu100 emu"));
  EXPECT_FALSE(gpu100::is_emulator_name(""));
  EXPECT_TRUE(gpu100::vendor_libraries_usable(device(false)));
  EXPECT_FALSE(gpu100::vendor_libraries_usable(device(true)));
}

// The exit-code rule: NOT RUN counts for nothing; the versions that ran decide.
TEST(Emulation, NotRunIsNeitherPassNorFail) {
  gpu100::RunReport only_not_run("day021", "cublas_gemm");
  only_not_run.not_run("sgemm", "needs cuBLAS");
  EXPECT_EQ(only_not_run.outcome(), gpu100::Outcome::Skip);
  EXPECT_FALSE(only_not_run.passed());
  EXPECT_EQ(gpu100::exit_code(only_not_run), 77);

  gpu100::RunReport ran_and_passed("day020", "t");
  ran_and_passed.not_run("cublas_dot", "needs cuBLAS");
  ran_and_passed.add("own_dot", ms(1), 1, verdict(true));
  EXPECT_EQ(ran_and_passed.outcome(), gpu100::Outcome::Pass);
  EXPECT_EQ(gpu100::exit_code(ran_and_passed), 0);

  gpu100::RunReport ran_and_failed("day020", "t");
  ran_and_failed.not_run("cublas_dot", "needs cuBLAS");
  ran_and_failed.add("own_dot", ms(1), 1, verdict(false));
  ran_and_failed.not_run("cublas_axpy", "needs cuBLAS");
  EXPECT_EQ(ran_and_failed.outcome(), gpu100::Outcome::Fail);
  EXPECT_EQ(gpu100::exit_code(ran_and_failed), 1);

  gpu100::RunReport unchecked("day020", "t");
  unchecked.not_run("cublas_dot", "needs cuBLAS");
  unchecked.add("own_dot", ms(1), 1, gpu100::CheckResult{});
  EXPECT_EQ(unchecked.outcome(), gpu100::Outcome::Fail);

  gpu100::RunReport nothing("day020", "t");
  EXPECT_EQ(nothing.outcome(), gpu100::Outcome::Fail);
  EXPECT_EQ(gpu100::exit_code(nothing), 1);

  gpu100::RunReport no_reason("day020", "t");
  no_reason.not_run("cublas_dot", "");
  EXPECT_FALSE(no_reason.versions()[0].ran());
  EXPECT_EQ(no_reason.outcome(), gpu100::Outcome::Skip);
}

// A failed check is a failure whatever else was not run, and a baseline that did not run
// changes nothing about the versions that did.
TEST(Emulation, BaselineNotRunLeavesTheVerdictToTheVersions) {
  gpu100::RunReport r("day011", "t");
  r.baseline_not_run("cublasSgemm", "needs cuBLAS");
  EXPECT_EQ(r.outcome(), gpu100::Outcome::Fail);  // no version at all
  r.add("naive", ms(1), 1, verdict(true));
  EXPECT_EQ(r.outcome(), gpu100::Outcome::Pass);
  r.add_check("failed baseline check", verdict(false));
  EXPECT_EQ(r.outcome(), gpu100::Outcome::Fail);
}

TEST(Emulation, PrintShowsNotRunOnceAndEndsWithSkip) {
  gpu100::RunReport r("day021", "cublas_gemm");
  r.baseline_not_run("cublasSgemm", gpu100::kVendorNotRunReason);
  r.not_run("sgemm", gpu100::kVendorNotRunReason);
  r.not_run("tf32", gpu100::kVendorNotRunReason);
  const std::string out = printed(r);
  EXPECT_TRUE(contains(out, "[baseline] cublasSgemm"));
  EXPECT_TRUE(contains(out, "NOT RUN: sgemm, tf32: not run under emulation"));
  EXPECT_TRUE(contains(out, "baseline: cublasSgemm not run under emulation"));
  EXPECT_FALSE(contains(out, ": PASS"));
  EXPECT_FALSE(contains(out, "FAIL"));
  EXPECT_EQ(last_line(out).rfind("SKIP: day021 cublas_gemm: no version ran (not run under", 0), 0u)
      << last_line(out);
}

TEST(Emulation, PrintUnderEmulationShowsNoGpuFigures) {
  auto make = [](bool emulated) {
    gpu100::RunReport r("day001", "vector_add");
    r.emulated(emulated);
    r.unit("GB/s");
    r.limit("dram_gbps", 2000, "HBM peak");
    r.baseline("copy", ms(2), 1600);
    r.add("float4", ms(1), 1500, verdict(true));
    r.table(gpu100::Table{"sweep", {"stride", "GB/s"}, {{1, 1234.5}}});
    return printed(r);
  };
  const std::string gpu = make(false), emu = make(true);
  EXPECT_TRUE(contains(gpu, "% HBM peak"));
  EXPECT_TRUE(contains(gpu, "x copy"));
  EXPECT_TRUE(contains(gpu, "limit: HBM peak"));
  EXPECT_FALSE(contains(gpu, "emulat"));

  EXPECT_TRUE(contains(emu, "emulator ms"));
  EXPECT_FALSE(contains(emu, "% HBM peak"));
  EXPECT_FALSE(contains(emu, "x copy"));
  EXPECT_FALSE(contains(emu, "GB/s |"));  // no rate column
  EXPECT_FALSE(contains(emu, "1500"));    // the rate nowhere
  EXPECT_FALSE(contains(emu, "limit:"));
  EXPECT_TRUE(contains(emu, "[emulated: times and rates below are the emulator's CPU figures, "
                            "not GPU speed] sweep"));
  EXPECT_EQ(last_line(emu), "day001 vector_add: PASS");
}

TEST(Emulation, JsonSaysEmulatedAndLeavesOutGpuFigures) {
  auto make = [](bool emulated) {
    gpu100::RunReport r("day001", "vector_add");
    r.emulated(emulated);
    r.limit("dram_gbps", 2000, "HBM peak");
    r.baseline("copy", ms(2), 1600);
    r.add("float4", ms(1), 1500, verdict(true));
    r.not_run("cublas_axpy", "needs cuBLAS");
    const gpu100::DeviceInfo d = device(emulated);
    return nlohmann::json::parse(r.json(&d));
  };
  const auto gpu = make(false), emu = make(true);
  ASSERT_TRUE(gpu.contains("emulated"));
  EXPECT_EQ(gpu["emulated"], false);
  EXPECT_EQ(gpu["status"], "PASS");
  EXPECT_DOUBLE_EQ(gpu["versions"][0]["rate"].get<double>(), 1500.0);
  EXPECT_DOUBLE_EQ(gpu["versions"][0]["pct_of_limit"].get<double>(), 75.0);

  EXPECT_EQ(emu["emulated"], true);
  EXPECT_EQ(emu["status"], "PASS");
  EXPECT_TRUE(emu["limit"].is_null());
  const auto& v = emu["versions"][0];
  EXPECT_DOUBLE_EQ(v["median_ms"].get<double>(), 1.0);  // a CPU time, labeled by "emulated"
  EXPECT_TRUE(v["rate"].is_null());
  EXPECT_TRUE(v["pct_of_limit"].is_null());
  EXPECT_TRUE(v["x_baseline"].is_null());
  EXPECT_TRUE(v["pct_of_baseline"].is_null());
  EXPECT_TRUE(emu["baseline"]["rate"].is_null());

  const auto& skipped = emu["versions"][1];
  EXPECT_EQ(skipped["name"], "cublas_axpy");
  EXPECT_EQ(skipped["status"], "NOT RUN");
  EXPECT_EQ(skipped["reason"], "needs cuBLAS");
  EXPECT_FALSE(skipped.contains("median_ms"));
}

TEST(Emulation, JsonStatusSkipAndBaselineNotRun) {
  gpu100::RunReport r("day021", "cublas_gemm");
  r.emulated(true);
  r.baseline_not_run("cublasSgemm", "needs cuBLAS");
  r.not_run("sgemm", "needs cuBLAS");
  const auto j = nlohmann::json::parse(r.json(nullptr));
  EXPECT_EQ(j["status"], "SKIP");
  EXPECT_EQ(j["baseline"]["name"], "cublasSgemm");
  EXPECT_EQ(j["baseline"]["status"], "NOT RUN");
  EXPECT_FALSE(j["baseline"].contains("rate"));
}

TEST(Emulation, HeaderSaysTimesAreCpuTimes) {
  Day day(false);
  const std::string gpu = gpu100::run_header(day.cli, device(false));
  const std::string emu = gpu100::run_header(day.cli, device(true));
  EXPECT_FALSE(contains(gpu, "EMULATED"));
  EXPECT_FALSE(contains(gpu, "CPU time"));
  EXPECT_TRUE(contains(emu, "device: gpu100 emulator (sm_90)"));
  EXPECT_TRUE(contains(emu, "EMULATED: the kernels run on the CPU"));
  EXPECT_TRUE(contains(emu, "meaningless as GPU speed"));
  EXPECT_TRUE(contains(emu, "(emulator CPU time)"));
}

// Nothing of a vendor version runs under the emulator - not even its poison or check, which
// could touch state the vendor library would have set up.
TEST(Emulation, VendorVersionIsNotRunUnderTheEmulator) {
  Day day(true);
  EXPECT_FALSE(day.ctx->vendor_libraries());
  int calls = 0;
  const gpu100::CheckResult c = day.ctx
                                     ->measure({.name = "cublas_thing",
                                                .launch = [&](cudaStream_t) { ++calls; },
                                                .reset = [&] { ++calls; },
                                                .check =
                                                    [&] {
                                                      ++calls;
                                                      return verdict(true);
                                                    },
                                                .work = 1.0,
                                                .vendor = true})
                                     .check;
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(c.checked);
  ASSERT_EQ(day.report.versions().size(), 1u);
  EXPECT_EQ(day.report.versions()[0].name, "cublas_thing");
  EXPECT_FALSE(day.report.versions()[0].ran());
  EXPECT_EQ(day.report.versions()[0].not_run, gpu100::kVendorNotRunReason);
  EXPECT_EQ(day.report.outcome(), gpu100::Outcome::Skip);
}

TEST(Emulation, VendorVersionNotSelectedIsNotRecorded) {
  Day day(true, {"--kernel", "own"});
  day.ctx->measure({.name = "cublas_thing",
                    .launch = [](cudaStream_t) {},
                    .check = [] { return verdict(true); },
                    .work = 1.0,
                    .vendor = true});
  EXPECT_TRUE(day.report.versions().empty());
}

TEST(Emulation, VendorNotRunRecordsAnyName) {
  Day day(true, {"--kernel", "own"});
  gpu100::vendor_not_run(*day.ctx, "sweep own");
  ASSERT_EQ(day.report.versions().size(), 1u);
  EXPECT_EQ(day.report.versions()[0].name, "sweep own");
  EXPECT_FALSE(day.report.versions()[0].ran());
}

gpu100::BenchOptions options(bool emulated, bool flush_l2) {
  const Day day(emulated);
  return gpu100::bench_options(day.cli, day.ctx->device(), flush_l2);
}

TEST(Emulation, NoL2FlushUnderTheEmulator) {
  EXPECT_TRUE(options(false, true).flush_l2);
  EXPECT_FALSE(options(true, true).flush_l2);
  EXPECT_FALSE(options(false, false).flush_l2);
  EXPECT_TRUE(Day(false).ctx->vendor_libraries());
}

TEST(Emulation, GemmBaselineIsNotRunUnderTheEmulator) {
  Day day(true);
  int calls = 0;
  const gpu100::Stats t = gpu100::gemm_baseline(
      *day.ctx, "cublasSgemm", [&](const gpu100::GemmOperands&, cudaStream_t) { ++calls; },
      gpu100::GemmOperands{3, 5, 7, nullptr, nullptr, nullptr}, [&] { ++calls; },
      [&] {
        ++calls;
        return verdict(true);
      },
      "a note about cuBLAS");
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(t.valid());
  EXPECT_TRUE(day.report.versions().empty());
  const auto j = nlohmann::json::parse(day.report.json(nullptr));
  EXPECT_EQ(j["baseline"]["status"], "NOT RUN");
  EXPECT_TRUE(j["notes"].empty());  // the note describes a baseline that did not run
}

TEST(Emulation, GemmSweepIsNotRunUnderTheEmulator) {
  Day day(true);
  int calls = 0;
  gpu100::GemmSweep sw;
  sw.version = "own";
  sw.launch = [&](const gpu100::GemmOperands&, cudaStream_t) { ++calls; };
  sw.baseline = "cublasSgemm";
  sw.baseline_launch = sw.launch;
  EXPECT_FALSE(gpu100::gemm_sweep(*day.ctx, sw));
  EXPECT_EQ(calls, 0);
  ASSERT_EQ(day.report.versions().size(), 1u);
  EXPECT_EQ(day.report.versions()[0].name, "sweep own");
  EXPECT_FALSE(day.report.versions()[0].ran());
}

TEST(Emulation, NotRunVersionIsNeverTheBest) {
  gpu100::RunReport r("day011", "t");
  r.not_run("sweep fast", "needs cuBLAS");
  EXPECT_EQ(gpu100::best_passing_version(r), "");
  r.add("slow", ms(2), 1.0, verdict(true));
  EXPECT_EQ(gpu100::best_passing_version(r), "slow");
}

// cuBLAS starts at the first use, so a day may hold a handle where cuBLAS cannot run (here: a
// machine without a GPU) as long as it does not use it.
TEST(Emulation, CublasHandleStartsCublasOnlyWhenUsed) {
  EXPECT_NO_THROW(gpu100::CublasHandle h);
}

TEST(Emulation, RequireEmulatorFromEnvironment) {
  const char* before = std::getenv("GPU100_REQUIRE_EMULATOR");
  const std::string saved = before ? before : "";
  setenv("GPU100_REQUIRE_EMULATOR", "1", 1);
  EXPECT_TRUE(gpu100::require_emulator_from_env());
  setenv("GPU100_REQUIRE_EMULATOR", "0", 1);
  EXPECT_FALSE(gpu100::require_emulator_from_env());
  unsetenv("GPU100_REQUIRE_EMULATOR");
  EXPECT_FALSE(gpu100::require_emulator_from_env());
  if (before) setenv("GPU100_REQUIRE_EMULATOR", saved.c_str(), 1);
}
