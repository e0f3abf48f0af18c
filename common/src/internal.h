// What common/'s sources share with each other and with its unit tests, but no day needs: kept
// out of include/gpu100/ so that a day's reader meets only what a day uses.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpu100/bench.h"
#include "gpu100/cli.h"
#include "gpu100/device.h"
#include "gpu100/emu_metrics.h"
#include "gpu100/report.h"
#include "gpu100/run.h"

namespace gpu100 {

enum ExitCode : int { kPass = 0, kFail = 1, kUsage = 2, kSkip = 77 };

// --- bench.cpp, l2_flush.cu ------------------------------------------------------------------
// How Context times a Measure: from the command line, the Measure's own fields and the device.
struct BenchOptions {
  int warmup = 3;          // untimed runs first: clocks ramp, caches and TLBs warm, lazy loading
  int iters = 20;          // timed runs; the median is reported
  bool flush_l2 = true;    // read a buffer of twice the L2 size before each timed run
  cudaStream_t stream = nullptr;
  std::function<void(cudaStream_t)> prepare;  // before every run (warm-up too), outside the events
  bool idle_start = false;  // synchronize after every run: each starts on an idle stream
};
// --iters and --warmup; the L2 flush is left out under the emulator, where it would only cost
// emulated time (it exists for GPU timings).
BenchOptions bench_options(const Cli& cli, const DeviceInfo& device, bool flush_l2);
// Records `name` (a version, a table, a sweep) as NOT RUN because it needs a vendor library,
// for code that cannot even set it up under the emulator.
void vendor_not_run(Context& ctx, const std::string& name);
// Times fn(stream) iters times, each between its own pair of events, and summarizes. With
// idle_start, `wall` (if given) gets the host clock of each timed run: start event to synchronize.
Stats benchmark(const std::function<void(cudaStream_t)>& fn, const BenchOptions& options,
                Stats* wall = nullptr);
// Device-to-device cudaMemcpy of `bytes` (at most kMaxCopyProbeBytes and a quarter of the free
// memory), timed; the rate counts read + write (2 * bytes).
CopyProbe measure_copy_bandwidth(size_t bytes, const BenchOptions& options);
void flush_l2_by_reading(const void* buffer, size_t bytes, int* sink, cudaStream_t stream);

// --- device.cpp ------------------------------------------------------------------------------
// Why a version that calls a closed vendor library was not run (the report's NOT RUN line): they
// have their own runtime inside, which talks to the GPU driver directly, so the emulator cannot
// stand in for them.
inline constexpr const char kVendorNotRunReason[] =
    "not run under emulation: closed vendor libraries (cuBLAS, cuBLASLt, cuSPARSE, cuRAND) need "
    "a GPU driver";

// The emulator (emu/) is a libcudart.so.13 that runs kernels on the CPU; its device's name starts
// with this ("gpu100 emulator (sm_90)"), which is how a program knows it is emulated.
inline constexpr const char kEmulatorNamePrefix[] = "gpu100 emulator";
bool is_emulator_name(const std::string& device_name);
// Whether the current device is the emulator, for code that has no DeviceInfo at hand.
bool current_device_is_emulated();
// cuBLAS, cuBLASLt, cuSPARSE and cuRAND's host API are closed libraries with their own runtime
// inside, which talks to the GPU driver directly: the emulator cannot stand in for them.
inline bool vendor_libraries_usable(const DeviceInfo& device) { return !device.emulated; }
// Limit formulas. DRAM is double data rate: two transfers per memory clock over the whole bus.
double dram_gbps(int mem_clock_khz, int bus_bits);
// Dense FP16 tensor-core FLOPs per clock per SM (FMA = 2 FLOPs); 0 when unknown.
int fp16_tensor_flops_per_clock_per_sm(int cc_major, int cc_minor);
// The same for int8 (operations) and fp8 (FLOPs) inputs; 0 when the architecture has none.
int int8_tensor_ops_per_clock_per_sm(int cc_major, int cc_minor);
int fp8_tensor_flops_per_clock_per_sm(int cc_major, int cc_minor);
// FP32 peak: every lane issues one FMA (2 FLOPs) per clock.
double fp32_tflops(int sm_count, int lanes_per_sm, int sm_clock_khz);
// Version integers from cudaDriverGetVersion / cudaRuntimeGetVersion as "major.minor".
std::string cuda_version_string(int version);

// --- emu_metrics.cpp -------------------------------------------------------------------------
// Every counter by name (launches .. local_store_requests, device_bytes_live, device_bytes_peak).
std::vector<std::pair<std::string, unsigned long long>> emu_metric_fields(const EmuMetrics& m);
// The report's columns for them under emulation, and a version's cells ("-" for none).
std::vector<std::string> emu_metric_columns();
std::vector<std::string> emu_metric_cells(const std::optional<EmuMetrics>& m);
// What the columns mean, for a note under the table.
std::string emu_metric_legend();

// --- report.cpp ------------------------------------------------------------------------------
// PASS: every version that ran passed, and one did, and a checked baseline passed. SKIP: none
// ran, and some were not run (e.g. every version calls cuBLAS, under the emulator). FAIL:
// anything else, including no versions.
enum class Outcome { Pass, Fail, Skip };
const char* outcome_name(Outcome o);  // "PASS", "FAIL", "SKIP"
// The report as gpu100::run holds it: what a day's body sees (Report) plus what the run does
// with it afterwards.
class RunReport : public Report {
 public:
  using Report::Report;
  using Report::baseline_not_run;
  using Report::commit;
  using Report::day;
  using Report::json;
  using Report::not_run;
  using Report::outcome;
  using Report::print;
  using Report::source_hash;
  using Report::topic;
  bool passed() const { return outcome() == Outcome::Pass; }
};
void print_table(const Table& t);     // aligned columns, to stdout

// --- cli.cpp, run.cpp -------------------------------------------------------------------------
// What run() and the tests read of a Cli beyond what a day reads.
struct CliAccess {
  // -1 to go on, or the exit code (0 after --help, 2 after one "dayNNN: error: ..." line).
  static int parse(Cli& cli, int argc, const char* const* argv) { return cli.parse(argc, argv); }
  static int warmup(const Cli& cli) { return cli.warmup_; }
  static int device_index(const Cli& cli);
  static std::string header(const Cli& cli, const DeviceInfo& device);  // run_header
};
// The no-device decision: kSkip, or kFail when a GPU (or the emulator) is required.
int no_device_exit_code(bool require_gpu);
bool require_gpu_from_env();
bool require_emulator_from_env();
// The exit code of a finished report: kPass, kFail, or kSkip when no version ran (Outcome).
int exit_code(const RunReport& report);
// The lines printed before the body runs: what the day is, the device, the problem and how it
// is timed; under the emulator, that the times are CPU times and mean nothing for a GPU.
inline std::string run_header(const Cli& cli, const DeviceInfo& device) {
  return CliAccess::header(cli, device);
}

// --- gemm.cu ---------------------------------------------------------------------------------
// The fastest timed version of this run that passed its check; empty when none did.
std::string best_passing_version(const Report& report);

}  // namespace gpu100
