#include "gpu100/run.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "gpu100/check.h"
#include "internal.h"

#ifndef GPU100_CONFIGURE_COMMIT
#define GPU100_CONFIGURE_COMMIT "unknown"
#endif

namespace gpu100 {

namespace {
std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024)); }

// The program's command line as typed (argv[0] included), quoted where the shell needs it.
std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), out, arg;
  for (char c : all) {
    if (c != '\0') { arg += c; continue; }
    const bool plain = !arg.empty() && arg.find_first_not_of(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,/:@%") == std::string::npos;
    if (!out.empty()) out += ' ';
    if (!plain) out += '\'';
    out += arg;
    if (!plain) out += '\'';
    arg.clear();
  }
  return out;
}

// Under the emulator, a failed check names the device address of its worst element, which is
// the same on every run there: the command that re-runs the case watching it shows which
// thread and instruction stored the wrong value (emu/README.md, "Debugging").
void print_watch_hint(const std::string& name, const CheckResult& r) {
  if (r.pass || !r.checked || !r.worst_device_address) return;
  // The same run: the emulator's checks and schedule as this one had them.
  std::string env, options;
  if (const char* v = std::getenv("GPU100_EMU_SCHEDULE"); v && *v) env = fmt::format("GPU100_EMU_SCHEDULE={} ", v);
  if (const char* v = std::getenv("GPU100_EMU_CHECK"); v && *v && std::string(v) != "all")
    options = fmt::format(" --check={}", v);
  fmt::print("{}: the check failed at element {} (got {:g}, expected {:g}), which came from device "
             "address {:#x}; to see which thread stored it, run\n  {}scripts/emulate{} --watch {:#x}:{} {}\n",
             name, r.worst_index, r.worst_got, r.worst_ref, r.worst_device_address, env, options,
             r.worst_device_address, r.element_bytes, command_line());
}
}  // namespace

bool Context::vendor_libraries() const { return vendor_libraries_usable(device_); }

bool Context::skipped(const Measure& m) {
  if (m.role == Role::version && !want(m.kernel.empty() ? m.name : m.kernel)) return true;
  if (!m.vendor || vendor_libraries()) return false;
  if (m.role == Role::version) report_.not_run(m.name, kVendorNotRunReason);
  if (m.role == Role::baseline) report_.baseline_not_run(m.name, kVendorNotRunReason);
  return true;
}

CheckResult Context::checked_run(const Measure& m, double* ms,
                                 std::optional<EmuMetrics>* metrics) {
  if (m.reset) m.reset();
  // The reset may have used another stream (cudaMemset is on the legacy default stream, which a
  // non-blocking stream does not wait for): it is complete before the launch.
  if (m.stream) CUDA_CHECK(cudaDeviceSynchronize());
  const auto t0 = std::chrono::steady_clock::now();
  if (m.prepare) m.prepare(m.stream);
  const EmuMetricsScope counted;  // the checked run only, not the timed repeats
  m.launch(m.stream);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (metrics) *metrics = counted.take();
  return m.check ? m.check() : CheckResult{};
}

Stats Context::timed_runs(const Measure& m, double checked_ms, Stats* wall) const {
  BenchOptions o = bench_options(cli_, device_, m.flush_l2);
  o.stream = m.stream;
  o.prepare = m.prepare;
  o.idle_start = m.idle_start;
  if (m.max_timed_ms > 0 && checked_ms > m.max_timed_ms / 20) {
    o.warmup = std::min(o.warmup, 1);
    o.iters = std::min(o.iters, std::max(3, int(m.max_timed_ms / checked_ms)));
  }
  return benchmark(m.launch, o, m.idle_start ? wall : nullptr);
}

void Context::record(const Measure& m, const Measured& r) {
  switch (m.role) {
    case Role::version:
      report_.add(m.name, r.time, r.rate, r.check);
      if (r.metrics) report_.metrics(m.name, *r.metrics);
      break;
    case Role::baseline: report_.baseline(m.name, r.time, r.rate, r.check); break;
    case Role::point: break;
  }
}

Measured Context::measure(const Measure& m) {
  return measure_all({m}).front();
}

std::vector<Measured> Context::measure_all(const std::vector<Measure>& list) {
  std::vector<Measured> out(list.size());
  std::vector<double> checked_ms(list.size(), 0.0);
  for (size_t i = 0; i < list.size(); ++i) {
    if (skipped(list[i])) continue;
    out[i].ran = true;
    out[i].check = checked_run(list[i], &checked_ms[i], &out[i].metrics);
    if (device_.emulated) print_watch_hint(list[i].name, out[i].check);
  }
  for (size_t i = 0; i < list.size(); ++i) {
    if (!out[i].ran) continue;
    const Measure& m = list[i];
    out[i].time = timed_runs(m, checked_ms[i], &out[i].wall);
    const double ms = out[i].time.median_ms;
    out[i].rate = m.rate ? m.rate(ms) : report_.rate(m.work, ms);
    record(m, out[i]);
  }
  return out;
}

BenchOptions bench_options(const Cli& cli, const DeviceInfo& device, bool flush_l2) {
  BenchOptions o;
  o.iters = cli.iters();
  o.warmup = CliAccess::warmup(cli);
  o.flush_l2 = flush_l2 && !device.emulated;
  return o;
}

void vendor_not_run(Context& ctx, const std::string& name) {
  ctx.report().not_run(name, kVendorNotRunReason);
}

CopyProbe Context::copy_baseline(size_t bytes) {
  CopyProbe p = measure_copy_bandwidth(bytes, bench_options(cli_, device_, true));
  report_.baseline("copy", p.time, p.gbps);
  report_.note(fmt::format("baseline 'copy': cudaMemcpy device to device of {:.1f} MiB (rate counts "
                           "read + write){}",
                           double(p.bytes) / (1 << 20),
                           p.bytes < bytes ? ", capped: past a few L2 sizes the rate is flat" : ""));
  return p;
}

namespace {
bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}
}  // namespace

bool require_gpu_from_env() { return env_flag("GPU100_REQUIRE_GPU"); }
bool require_emulator_from_env() { return env_flag("GPU100_REQUIRE_EMULATOR"); }

int no_device_exit_code(bool require_gpu) { return require_gpu ? kFail : kSkip; }

int exit_code(const RunReport& report) {
  switch (report.outcome()) {
    case Outcome::Pass: return kPass;
    case Outcome::Skip: return kSkip;
    case Outcome::Fail: break;
  }
  return kFail;
}

std::string CliAccess::header(const Cli& cli, const DeviceInfo& dev) {
  std::string h = fmt::format("{} {}: {}\n", cli.day_, cli.topic_, cli.description_);
  h += fmt::format("device: {} (cc {}, {} SMs, {:.0f} MHz, {}, L2 {} MiB, driver {}, runtime {})\n",
                   dev.name, dev.cc_string(), dev.sm_count, dev.sm_clock_khz / 1e3,
                   gib(double(dev.total_mem)), dev.l2_bytes >> 20, cuda_version_string(dev.driver_version),
                   cuda_version_string(dev.runtime_version));
  if (dev.emulated)
    h += "EMULATED: the kernels run on the CPU in the gpu100 emulator. Times are the emulator's "
         "CPU times,\n  meaningless as GPU speed: no rates, % of limit or x baseline are shown, "
         "and closed vendor\n  libraries (cuBLAS, ...) are not run.\n";
  h += fmt::format("problem: {}{}; timing: median of {} runs after {} warm-up{}\n\n",
                   cli.sizes_string(), cli.quick() ? " (--quick)" : "", cli.iters(), cli.warmup_,
                   dev.emulated ? " (emulator CPU time)" : "");
  return h;
}

int run(Cli& cli, int argc, char** argv, const std::function<void(Context&)>& body) {
  if (int rc = cli.parse(argc, argv); rc >= 0) return rc;

  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    const std::string reason =
        e != cudaSuccess ? fmt::format("cudaGetDeviceCount: {}", cudaGetErrorName(e))
                         : std::string("no devices visible");
    cudaGetLastError();
    const bool require_gpu = require_gpu_from_env();
    const bool require = require_gpu || require_emulator_from_env();
    if (require) {
      const char* variable = require_gpu ? "GPU100_REQUIRE_GPU" : "GPU100_REQUIRE_EMULATOR";
      fmt::print(stderr, "{}\n",
                 cli.error_line(fmt::format("no CUDA device ({}); {}=1 makes this a failure",
                                            reason, variable)));
    } else {
      fmt::print("SKIP: no CUDA device ({})\n", reason);
    }
    return no_device_exit_code(require);
  }
  const int device = CliAccess::device_index(cli);
  if (device >= count) {
    fmt::print(stderr, "{} (see --help)\n",
               cli.error_line(fmt::format("--device {} but only {} device(s)", device, count)));
    return kUsage;
  }

  RunReport report(cli.day_, cli.topic_);
  cli.record_problem(report);
  report.source_hash = cli.source_hash_;
  const char* commit = std::getenv("GPU100_COMMIT");
  report.commit = commit && *commit ? commit : GPU100_CONFIGURE_COMMIT;
  try {
    DeviceInfo dev = query_device(device);
    if (require_emulator_from_env() && !dev.emulated) {
      fmt::print(stderr, "{}\n",
                 cli.error_line(fmt::format("GPU100_REQUIRE_EMULATOR=1 but the device is {}: the "
                                            "emulator's libcudart.so.13 was not loaded (not first "
                                            "on LD_LIBRARY_PATH?)",
                                            dev.name)));
      return kFail;
    }
    report.emulated(dev.emulated);
    if (cli.min_cc_ > 0 && dev.cc() < cli.min_cc_) {
      fmt::print("SKIP: {} needs compute capability {}.{}; {} is {}\n", cli.day_, cli.min_cc_ / 10,
                 cli.min_cc_ % 10, dev.name, dev.cc_string());
      return kSkip;
    }
    for (const auto& check : cli.device_checks_) {
      if (std::string why = check(dev); !why.empty()) {
        fmt::print("SKIP: {}: {}\n", cli.day_, why);
        return kSkip;
      }
    }
    const double need = (cli.estimate_ ? cli.estimate_() : 0.0);
    if (need > 0.95 * double(dev.free_mem)) {
      fmt::print(stderr, "{} (see --help)\n",
                 cli.error_line(fmt::format("these sizes need {} of device memory; {} has {} free",
                                            gib(need), dev.name, gib(double(dev.free_mem)))));
      return kUsage;
    }
    fmt::print("{}", run_header(cli, dev));
    Context ctx(cli, dev, report);
    body(ctx);
    CUDA_CHECK(cudaDeviceSynchronize());
    report.print();
    if (!cli.json_.empty()) {
      std::ofstream out(cli.json_);
      out << report.json(&dev) << "\n";
      if (!out) {
        fmt::print(stderr, "{}\n", cli.error_line("cannot write " + cli.json_));
        return kFail;
      }
    }
  } catch (const CudaError& err) {
    fmt::print(stderr, "{}: CUDA error: {}\n", cli.day_, err.what());
    fmt::print("{} {}: FAIL\n", cli.day_, cli.topic_);
    return kFail;
  } catch (const std::exception& err) {
    fmt::print(stderr, "{}: error: {}\n", cli.day_, err.what());
    fmt::print("{} {}: FAIL\n", cli.day_, cli.topic_);
    return kFail;
  }
  return exit_code(report);
}

const Measured& measured_of(const std::string& name, const std::vector<Measure>& runs,
                            const std::vector<Measured>& measured) {
  for (size_t i = 0; i < runs.size() && i < measured.size(); ++i)
    if (runs[i].name == name) return measured[i];
  throw std::logic_error(fmt::format("no version called {}", name));
}

}  // namespace gpu100
