// Context::measure and measure_all: the contract's sequence (reset, checked launch, check, then
// the timed launches), what is recorded for each role, and what is skipped. The launches are
// host functions that log what happens, so no kernel is needed; the CUDA calls around them
// (synchronization, events) run on the emulator's runtime (ctest puts it first on the library
// path), so these tests need no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gpu100/check.h"
#include "gpu100/cli.h"
#include "gpu100/device.h"
#include "gpu100/report.h"
#include "gpu100/run.h"
#include "internal.h"

namespace {

gpu100::CheckResult verdict(bool pass) {
  std::vector<float> a{1, 2}, b{1, pass ? 2.0f : 3.0f};
  return gpu100::compare(a, b, gpu100::Tolerance::FP32());
}

struct Day {
  gpu100::Cli cli{"test program", "day999", "testing", "hash"};
  gpu100::RunReport report{"day999", "testing"};
  std::unique_ptr<gpu100::Context> ctx;
  std::vector<std::string> log;

  explicit Day(std::vector<std::string> args = {}) {
    cli.kernels({"a", "b", "cublas_thing"});
    args.insert(args.begin(), "day999");
    std::vector<const char*> argv;
    for (auto& s : args) argv.push_back(s.c_str());
    EXPECT_EQ(gpu100::CliAccess::parse(cli, int(argv.size()), argv.data()), -1);
    gpu100::DeviceInfo dev = gpu100::query_device(0);
    EXPECT_TRUE(dev.emulated) << "these tests run on the emulator's runtime; got " << dev.name;
    report.emulated(dev.emulated);
    report.unit("GB/s");
    ctx = std::make_unique<gpu100::Context>(cli, dev, report);
  }

  // A version that logs its steps as "<name>:reset", "<name>:launch", "<name>:check".
  gpu100::Measure logged(const std::string& name, bool pass = true) {
    return {.name = name,
            .launch = [this, name](cudaStream_t) { log.push_back(name + ":launch"); },
            .reset = [this, name] { log.push_back(name + ":reset"); },
            .check = [this, name, pass] {
              log.push_back(name + ":check");
              return verdict(pass);
            },
            .work = 1e6};
  }
  size_t count(const std::string& entry) const {
    return size_t(std::count(log.begin(), log.end(), entry));
  }
};

TEST(Measure, ResetLaunchCheckThenWarmupAndTimedLaunches) {
  Day day({"--iters", "5", "--warmup", "2"});
  const gpu100::Measured r = day.ctx->measure(day.logged("a"));
  ASSERT_TRUE(r.ran);
  const std::vector<std::string> first = {"a:reset", "a:launch", "a:check"};
  ASSERT_GE(day.log.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(day.log.begin(), day.log.begin() + 3), first);
  EXPECT_EQ(day.count("a:launch"), 1u + 2u + 5u);  // checked + warm-up + timed
  EXPECT_EQ(day.count("a:check"), 1u);
  EXPECT_EQ(day.count("a:reset"), 1u);
  EXPECT_TRUE(r.check.pass);
  EXPECT_EQ(r.time.samples, 5);
  ASSERT_EQ(day.report.versions().size(), 1u);
  EXPECT_EQ(day.report.versions()[0].name, "a");
  EXPECT_TRUE(day.report.versions()[0].check.pass);
  EXPECT_EQ(day.report.versions()[0].time.samples, 5);
  EXPECT_DOUBLE_EQ(r.rate, day.report.rate(1e6, r.time.median_ms));
  EXPECT_EQ(day.report.outcome(), gpu100::Outcome::Pass);
}

TEST(Measure, AllValidatedBeforeAnyIsTimed) {
  Day day({"--iters", "1", "--warmup", "0"});
  day.ctx->measure_all({day.logged("a"), day.logged("b")});
  const std::vector<std::string> expected = {"a:reset", "a:launch", "a:check", "b:reset",
                                             "b:launch", "b:check", "a:launch", "b:launch"};
  EXPECT_EQ(day.log, expected);
  ASSERT_EQ(day.report.versions().size(), 2u);
  EXPECT_EQ(day.report.versions()[1].name, "b");
}

TEST(Measure, FailedCheckFailsTheRunAndIsStillTimed) {
  Day day({"--iters", "2", "--warmup", "0"});
  const gpu100::Measured r = day.ctx->measure(day.logged("a", false));
  EXPECT_TRUE(r.ran);
  EXPECT_FALSE(r.check.pass);
  EXPECT_EQ(r.time.samples, 2);
  EXPECT_EQ(day.report.outcome(), gpu100::Outcome::Fail);
}

TEST(Measure, NoCheckIsRecordedUnchecked) {
  Day day({"--iters", "1", "--warmup", "0"});
  gpu100::Measure m = day.logged("a");
  m.check = nullptr;
  EXPECT_FALSE(day.ctx->measure(m).check.checked);
  EXPECT_EQ(day.report.outcome(), gpu100::Outcome::Fail);  // an unchecked version never passes
}

TEST(Measure, VersionNotSelectedIsNeitherCalledNorRecorded) {
  Day day({"--kernel", "b"});
  const gpu100::Measured r = day.ctx->measure(day.logged("a"));
  EXPECT_FALSE(r.ran);
  EXPECT_TRUE(day.log.empty());
  EXPECT_TRUE(day.report.versions().empty());
}

TEST(Measure, VendorVersionIsNotRunUnderTheEmulator) {
  Day day;
  gpu100::Measure m = day.logged("cublas_thing");
  m.vendor = true;
  EXPECT_FALSE(day.ctx->measure(m).ran);
  EXPECT_TRUE(day.log.empty());
  ASSERT_EQ(day.report.versions().size(), 1u);
  EXPECT_EQ(day.report.versions()[0].not_run, gpu100::kVendorNotRunReason);
  EXPECT_EQ(day.report.outcome(), gpu100::Outcome::Skip);
}

TEST(Measure, VendorBaselineIsNotRunUnderTheEmulator) {
  Day day;
  gpu100::Measure m = day.logged("cublasThing");
  m.role = gpu100::Role::baseline;
  m.vendor = true;
  EXPECT_FALSE(day.ctx->measure(m).ran);
  EXPECT_TRUE(day.log.empty());
  EXPECT_TRUE(day.report.versions().empty());
  const std::string j = day.report.json(nullptr);
  EXPECT_NE(j.find("\"status\": \"NOT RUN\""), std::string::npos) << j;
}

TEST(Measure, BaselineIsCheckedAndRecordedAsTheBaseline) {
  Day day({"--kernel", "a", "--iters", "1", "--warmup", "0"});  // a baseline is not a --kernel
  gpu100::Measure base = day.logged("library");
  base.role = gpu100::Role::baseline;
  day.ctx->measure_all({base, day.logged("a")});
  EXPECT_EQ(day.count("library:check"), 1u);
  ASSERT_EQ(day.report.versions().size(), 1u);  // the baseline is not a row of its own
  const std::string j = day.report.json(nullptr);
  EXPECT_NE(j.find("\"name\": \"library\""), std::string::npos) << j;
  EXPECT_EQ(day.report.outcome(), gpu100::Outcome::Pass);
}

TEST(Measure, FailingBaselineFailsTheRun) {
  Day day({"--iters", "1", "--warmup", "0"});
  gpu100::Measure base = day.logged("library", false);
  base.role = gpu100::Role::baseline;
  day.ctx->measure_all({base, day.logged("a")});
  EXPECT_EQ(day.report.outcome(), gpu100::Outcome::Fail);
  testing::internal::CaptureStdout();
  day.report.print();
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("[baseline] library: FAIL"), std::string::npos) << out;
}

TEST(Measure, PointIsReturnedNotRecordedAndIgnoresKernelSelection) {
  Day day({"--kernel", "b", "--iters", "3", "--warmup", "0"});
  gpu100::Measure m = day.logged("a");
  m.role = gpu100::Role::point;
  m.rate = [](double ms) { return 42.0 + 0.0 * ms; };
  const gpu100::Measured r = day.ctx->measure(m);
  EXPECT_TRUE(r.ran);
  EXPECT_TRUE(r.check.pass);
  EXPECT_EQ(r.time.samples, 3);
  EXPECT_EQ(r.rate, 42.0);
  EXPECT_TRUE(day.report.versions().empty());
}

TEST(Measure, EveryLaunchGoesToTheGivenStream) {
  Day day({"--iters", "2", "--warmup", "1"});
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  std::vector<cudaStream_t> seen;
  day.ctx->measure({.name = "a",
                    .launch = [&](cudaStream_t s) { seen.push_back(s); },
                    .check = [] { return verdict(true); },
                    .work = 1,
                    .stream = stream});
  EXPECT_EQ(seen, std::vector<cudaStream_t>(4, stream));
  cudaStreamDestroy(stream);
}

TEST(Measure, KernelNameSelectsARowNamedOtherwise) {
  Day day({"--kernel", "b", "--iters", "1", "--warmup", "0"});
  gpu100::Measure b = day.logged("b at 64 KiB"), a = day.logged("a at 64 KiB");
  b.kernel = "b";
  a.kernel = "a";
  const auto r = day.ctx->measure_all({a, b});
  EXPECT_FALSE(r[0].ran);
  EXPECT_TRUE(r[1].ran);
  EXPECT_EQ(day.count("a at 64 KiB:launch"), 0u);
  ASSERT_EQ(day.report.versions().size(), 1u);
  EXPECT_EQ(day.report.versions()[0].name, "b at 64 KiB");
}

TEST(Measure, PrepareRunsBeforeEveryLaunch) {
  Day day({"--iters", "2", "--warmup", "1"});
  gpu100::Measure m = day.logged("a");
  m.prepare = [&](cudaStream_t) { day.log.push_back("a:prepare"); };
  day.ctx->measure(m);
  const std::vector<std::string> expected = {"a:reset",   "a:prepare", "a:launch",  "a:check",
                                             "a:prepare", "a:launch",  "a:prepare", "a:launch",
                                             "a:prepare", "a:launch"};
  EXPECT_EQ(day.log, expected);
}

TEST(Measure, IdleStartTimesTheHostClockToo) {
  Day day({"--iters", "3", "--warmup", "1"});
  gpu100::Measure m = day.logged("a");
  EXPECT_EQ(day.ctx->measure(m).wall.samples, 0);
  m.idle_start = true;
  const gpu100::Measured r = day.ctx->measure(m);
  EXPECT_EQ(r.time.samples, 3);
  EXPECT_EQ(r.wall.samples, 3);
  EXPECT_GE(r.wall.min_ms, 0.0);
}

TEST(Measure, MaxTimedMsCutsTheRunsOfASlowVersionOnly) {
  Day day({"--iters", "10", "--warmup", "2"});
  gpu100::Measure fast = day.logged("a");
  fast.max_timed_ms = 100000;
  day.ctx->measure(fast);
  EXPECT_EQ(day.count("a:launch"), 1u + 2u + 10u);
  // 60 ms per run against 200 ms: one warm-up, then 200 / 60 -> at least 3 timed runs.
  gpu100::Measure slow = day.logged("b");
  slow.launch = [&](cudaStream_t) {
    day.log.push_back("b:launch");
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
  };
  slow.max_timed_ms = 200;
  const gpu100::Measured r = day.ctx->measure(slow);
  EXPECT_EQ(day.count("b:launch"), 1u + 1u + 3u);
  EXPECT_EQ(r.time.samples, 3);
}

// An error raised by the checked launch (here a failed asynchronous call) ends the run there,
// before the check and the timed launches.
TEST(Measure, ErrorOfTheCheckedLaunchThrows) {
  Day day;
  int checks = 0;
  EXPECT_THROW(day.ctx->measure({.name = "a",
                                 .launch =
                                     [](cudaStream_t s) {
                                       (void)cudaMemsetAsync(reinterpret_cast<void*>(16), 0,
                                                             size_t(1) << 40, s);
                                     },
                                 .check =
                                     [&] {
                                       ++checks;
                                       return verdict(true);
                                     }}),
               gpu100::CudaError);
  EXPECT_EQ(checks, 0);
  cudaGetLastError();
}

// measured_of finds a version's result by its name in measure_all's answer, skipped ones too.
TEST(Measure, MeasuredOfFindsAVersionByName) {
  Day day({"--iters", "1", "--warmup", "0", "--kernel", "b"});
  const std::vector<gpu100::Measure> runs{day.logged("a"), day.logged("b", false)};
  const std::vector<gpu100::Measured> measured = day.ctx->measure_all(runs);
  EXPECT_EQ(&gpu100::measured_of("a", runs, measured), &measured[0]);
  EXPECT_EQ(&gpu100::measured_of("b", runs, measured), &measured[1]);
  EXPECT_FALSE(gpu100::measured_of("a", runs, measured).ran);
  EXPECT_TRUE(gpu100::measured_of("b", runs, measured).ran);
  EXPECT_FALSE(gpu100::measured_of("b", runs, measured).check.pass);
  EXPECT_THROW(gpu100::measured_of("c", runs, measured), std::logic_error);
}

}  // namespace
