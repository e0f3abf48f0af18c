// What a day's main hands to gpu100::run, and what its body gets back: the Context, the Measure
// of one kernel version and its Measured result. docs/CONTRACT.md describes the sequence.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpu100/bench.h"
#include "gpu100/cli.h"
#include "gpu100/device.h"
#include "gpu100/report.h"

namespace gpu100 {

// version: a row of the table (--kernel selects it); baseline: the "x baseline" of every row;
// point: one point of a day's own sweep, measured and returned but not recorded.
enum class Role { version, baseline, point };

// One version, baseline or sweep point. Designated initializers must follow this order:
//   ctx.measure({.name = "float4", .launch = [&](cudaStream_t s) { add<<<g, 256, 0, s>>>(..); },
//                .reset = [&] { d_c.poison(); }, .check = [&] { return ...; }, .work = 12.0 * n});
struct Measure {
  std::string name;
  std::string kernel;  // the --kernel name that selects a version named otherwise ("ca 64 KiB")
  std::function<void(cudaStream_t)> launch;  // one run, enqueued on the given stream
  std::function<void()> reset;               // before the checked run: poison the outputs
  std::function<CheckResult()> check;        // after it: copy back, compare; unset: unchecked
  double work = 0;  // what one run does in the report's unit: bytes (GB/s) or FLOPs (TFLOP/s)
  std::function<double(double ms)> rate;  // instead of work, for a unit the report cannot convert
  Role role = Role::version;
  bool vendor = false;    // calls cuBLAS & co: NOT RUN (nothing of it called) under the emulator
  bool flush_l2 = true;   // evict L2 before each timed run (false for on-chip work)
  cudaStream_t stream = nullptr;  // the checked run and the timed runs go there
  // Day 028 (atomics) only: resets the counters the updates accumulate into, before every run
  // (warm-up included), outside the CUDA events.
  std::function<void(cudaStream_t)> prepare;
  // Day 031 (CUDA graphs) only: each timed run alone, synchronized after its stop event, so the
  // host's launch work cannot hide behind the previous run; Measured::wall gets the host clock.
  bool idle_start = false;
  // Day 028 only: its most contended points are slow; > 0 cuts the timed runs to about this many
  // ms in all (at least 3, after <= 1 warm-up) once a checked run takes more than a twentieth.
  double max_timed_ms = 0;
};

struct Measured {
  bool ran = false;  // false: not selected by --kernel, or NOT RUN here (then nothing was called)
  CheckResult check;
  Stats time;
  double rate = 0;
  Stats wall;  // idle_start: host clock of each timed run, from its start event to its synchronize
  std::optional<EmuMetrics> metrics;  // under the emulator: what the checked run's kernels did
};

class Context {
 public:
  Context(const Cli& cli, DeviceInfo device, Report& report)
      : cli_(cli), device_(std::move(device)), report_(report) {}
  const DeviceInfo& device() const { return device_; }
  const Cli& cli() const { return cli_; }
  Report& report() { return report_; }
  bool quick() const { return cli_.quick(); }
  uint64_t seed() const { return cli_.seed(); }
  bool want(const std::string& kernel) const { return cli_.want(kernel); }
  // The checked run (reset, launch, synchronize, check), then --warmup and --iters timed runs
  // (median of CUDA events), recorded by role. measure_all checks every entry before timing any.
  Measured measure(const Measure& m);
  std::vector<Measured> measure_all(const std::vector<Measure>& list);
  // A device-to-device copy of `bytes`, timed and recorded as the report's baseline.
  CopyProbe copy_baseline(size_t bytes);
  // False under the emulator: cuBLAS & co cannot run there (Measure::vendor is reported NOT RUN).
  bool vendor_libraries() const;

 private:
  CheckResult checked_run(const Measure& m, double* ms, std::optional<EmuMetrics>* metrics);
  Stats timed_runs(const Measure& m, double checked_ms, Stats* wall) const;
  bool skipped(const Measure& m);  // not selected, or NOT RUN here (and recorded so)
  void record(const Measure& m, const Measured& r);
  const Cli& cli_;
  DeviceInfo device_;
  Report& report_;
};

// The measurement of the version called `name`: measure_all answers in the order of its list.
// Throws std::logic_error when no entry of `runs` has that name.
const Measured& measured_of(const std::string& name, const std::vector<Measure>& runs,
                            const std::vector<Measured>& measured);

// Parses, finds a device, runs body, prints the report, writes --json; returns the exit code.
int run(Cli& cli, int argc, char** argv, const std::function<void(Context&)>& body);

}  // namespace gpu100
