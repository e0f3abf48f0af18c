// The program contract (DESIGN.md): parse arguments first, then find a device, then run.
//
//   int main(int argc, char** argv) {
//     gpu100::Cli cli("Vector addition: naive, grid-stride, float4");
//     int64_t n = 1 << 26;
//     cli.size("n", n, 1'000'003, "number of elements");
//     cli.kernels({"naive", "grid_stride", "float4"});
//     cli.device_bytes([&] { return 3.0 * n * sizeof(float); });
//     return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) { ... });
//   }
//
// Exit codes: 0 pass, 1 check failed or CUDA error, 2 bad usage, 77 skipped (no device, too old
// a GPU, or no version could run here). With GPU100_REQUIRE_GPU=1, no device is exit 1; with
// GPU100_REQUIRE_EMULATOR=1 (scripts/emulate, the emu tests), so is any device but the emulator.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpu100/bench.h"
#include "gpu100/device.h"
#include "gpu100/report.h"

#ifndef GPU100_DAY
#define GPU100_DAY "day000"
#endif
#ifndef GPU100_TOPIC
#define GPU100_TOPIC "unnamed"
#endif
#ifndef GPU100_SOURCE_HASH
#define GPU100_SOURCE_HASH "unknown"
#endif

namespace gpu100 {

enum ExitCode : int { kPass = 0, kFail = 1, kUsage = 2, kSkip = 77 };

class Cli {
 public:
  // Day, topic and source hash come from the build (gpu100_day() defines them per program).
  explicit Cli(std::string description)
      : Cli(std::move(description), GPU100_DAY, GPU100_TOPIC, GPU100_SOURCE_HASH) {}
  Cli(std::string description, std::string day, std::string topic, std::string source_hash);
  ~Cli();
  Cli(const Cli&) = delete;
  Cli& operator=(const Cli&) = delete;

  // A positive size (elements, rows, ...). --quick sets it to quick_value unless it was given.
  void size(const std::string& name, int64_t& value, int64_t quick_value, const std::string& help,
            int64_t max_value = int64_t(1) << 40);
  void option(const std::string& name, int& value, const std::string& help, int min_value,
              int max_value);
  void option(const std::string& name, double& value, const std::string& help, double min_value,
              double max_value);
  void option(const std::string& name, std::string& value, const std::vector<std::string>& choices,
              const std::string& help);
  void flag(const std::string& name, bool& value, const std::string& help);
  // The kernel versions; --kernel a,b selects some (all by default).
  void kernels(std::vector<std::string> names);
  // The same from a day's list of versions (anything whose elements have a `name`).
  template <class Versions>
  void kernels_of(const Versions& versions) {
    std::vector<std::string> names;
    for (const auto& v : versions) names.emplace_back(v.name);
    kernels(std::move(names));
  }
  // Device memory the run needs at the parsed sizes (bytes, as a double so it cannot overflow).
  // Checked against 1 TiB before looking for a device and against the device's memory after.
  void device_bytes(std::function<double()> estimate);
  // Minimum compute capability (e.g. 90); below it the program skips with exit 77.
  void min_cc(int cc) { min_cc_ = cc; }
  // A feature the day needs from the device found (e.g. cooperative launch): return "" when the
  // device has it, else the reason, and the program prints "SKIP: <reason>" and exits 77.
  void require_device(std::function<std::string(const DeviceInfo&)> check) {
    device_checks_.push_back(std::move(check));
  }
  const std::vector<std::function<std::string(const DeviceInfo&)>>& device_checks() const {
    return device_checks_;
  }
  // Extra validation after parsing (relations between options); return "" when fine, else
  // the message of the exit-2 error.
  void validate(std::function<std::string()> check);

  // Parses argv. Returns -1 to go on, or the exit code to return (0 for --help, 2 for errors,
  // after printing one line "dayNNN: error: ..." to stderr).
  int parse(int argc, const char* const* argv);

  // After parse():
  bool quick() const { return quick_; }
  uint64_t seed() const { return seed_; }
  int iters() const { return iters_; }
  int warmup() const { return warmup_; }
  const std::string& json_path() const { return json_; }
  bool want(const std::string& kernel) const;       // selected by --kernel?
  const std::vector<std::string>& kernel_names() const { return kernels_; }
  const std::string& day() const { return day_; }
  const std::string& topic() const { return topic_; }
  const std::string& description() const { return description_; }
  double estimated_device_bytes() const { return estimate_ ? estimate_() : 0.0; }
  int required_cc() const { return min_cc_; }
  int device_index() const;
  const std::string& source_hash() const { return source_hash_; }
  // "n=1000003 m=..." for the header line.
  std::string sizes_string() const;
  std::string error_line(const std::string& message) const;  // "dayNNN: error: message"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string day_, topic_, description_, source_hash_;
  bool quick_ = false;
  uint64_t seed_ = 42;
  int iters_ = 20, warmup_ = 3;
  std::string json_;
  std::string kernel_arg_;
  std::vector<std::string> kernels_, selected_;
  std::function<double()> estimate_;
  std::vector<std::function<std::string()>> validators_;
  int min_cc_ = 0;
  std::vector<std::function<std::string(const DeviceInfo&)>> device_checks_;
};

// What a measurement is for: a version (a row of the table, selected with --kernel), the
// report's baseline (the "x baseline" of every row), or a point of a day's own sweep (measured
// and returned, not recorded: the day tabulates it).
enum class Role { version, baseline, point };

// One kernel version, baseline or sweep point: how to run it once, how to make its run checkable
// and how to check it, and what one run does. Set the fields by name, in this order (C++20
// designated initializers must follow the declaration order):
//   ctx.measure({.name = "float4",
//                .launch = [&](cudaStream_t s) { add_float4<<<grid, 256, 0, s>>>(...); },
//                .reset = [&] { d_c.poison(); },
//                .check = [&] { return gpu100::compare_exact(d_c.download(), ref); },
//                .work = 12.0 * n});
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
  // For days whose lesson is in how a run is timed:
  std::function<void(cudaStream_t)> prepare;  // before every run, outside the events (a reset)
  bool idle_start = false;  // each timed run alone: synchronized after its stop event, so no
                            // run's host work overlaps the previous run; Measured::wall too
  double max_timed_ms = 0;  // > 0: a checked run longer than a twentieth of it cuts the timed
                            // runs to about this many ms in all (at least 3), after <= 1 warm-up
};

struct Measured {
  bool ran = false;  // false: not selected by --kernel, or NOT RUN here (then nothing was called)
  CheckResult check;
  Stats time;
  double rate = 0;
  Stats wall;  // idle_start: host clock of each timed run, from its start event to its synchronize
};

// What a day's body gets: the device, the selected options, the report and the measurements.
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

  // The contract's sequence for one version or baseline: the checked run (reset, launch once,
  // synchronize, check), then the timed runs (--warmup, then --iters each between CUDA events,
  // median), recorded in the report by role. A version that --kernel does not select is skipped.
  Measured measure(const Measure& m);
  // The same for a list: every entry is validated first, then every one is timed.
  std::vector<Measured> measure_all(const std::vector<Measure>& list);
  // Measures the device-to-device copy of `bytes` and records it as the report's baseline.
  CopyProbe copy_baseline(size_t bytes);
  // Whether closed vendor libraries (cuBLAS, cuBLASLt, cuSPARSE, cuRAND's host API) can run:
  // not under the emulator. Where they cannot, a version or baseline that calls them is reported
  // NOT RUN - neither a pass nor a failure - and the day is judged by the versions that ran.
  bool vendor_libraries() const { return vendor_libraries_usable(device_); }

  // --- deprecated: the positional API of the days not yet moved to measure() -----------------
  // Under the emulator the L2 flush is left out: it exists for GPU timings, and would only cost
  // emulated time there.
  BenchOptions bench_options(bool flush_l2 = true) const;
  // Times fn with the --iters/--warmup of the command line.
  Stats bench(const std::function<void(cudaStream_t)>& fn, bool flush_l2 = true) const;
  // measure() of a version with positional arguments; returns its check.
  CheckResult run_version(const std::string& name,
                          const std::function<void(cudaStream_t)>& launch,
                          const std::function<void()>& poison,
                          const std::function<CheckResult()>& check, double work,
                          bool flush_l2 = true);
  // run_version of a version that calls a vendor library (.vendor = true).
  CheckResult run_vendor_version(const std::string& name,
                                 const std::function<void(cudaStream_t)>& launch,
                                 const std::function<void()>& poison,
                                 const std::function<CheckResult()>& check, double work,
                                 bool flush_l2 = true);
  // Records `name` (a version, a table, a sweep) as NOT RUN because it needs a vendor library,
  // for a day that cannot even set it up under the emulator.
  void vendor_not_run(const std::string& name);

 private:
  // The checked run: reset, one launch, every error it raised, its check. Kept apart from the
  // timed runs, which are never checked.
  CheckResult checked_run(const Measure& m, double* ms);  // ms: prepare + launch, host clock
  Stats timed_runs(const Measure& m, double checked_ms, Stats* wall) const;
  bool skipped(const Measure& m);  // not selected, or NOT RUN here (and recorded so)
  void record(const Measure& m, const Measured& r);

  const Cli& cli_;
  DeviceInfo device_;
  Report& report_;
};

// Parses, finds a device, runs body, prints the report, writes --json. Returns the exit code.
int run(Cli& cli, int argc, char** argv, const std::function<void(Context&)>& body);

// The no-device decision, separated for testing: returns kSkip or kFail.
int no_device_exit_code(bool require_gpu);
bool require_gpu_from_env();
bool require_emulator_from_env();
// The exit code of a finished report: kPass, kFail, or kSkip when no version ran (Outcome).
int exit_code(const Report& report);
// The lines printed before the body runs: what the day is, the device, the problem and how it
// is timed; under the emulator, that the times are CPU times and mean nothing for a GPU.
std::string run_header(const Cli& cli, const DeviceInfo& device);

}  // namespace gpu100
