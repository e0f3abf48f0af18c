#include "gpu100/cli.h"

#include <CLI/CLI.hpp>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gpu100/check.h"

#ifndef GPU100_CONFIGURE_COMMIT
#define GPU100_CONFIGURE_COMMIT "unknown"
#endif

namespace gpu100 {

namespace {
constexpr double kMaxBytes = 1024.0 * 1024 * 1024 * 1024;  // 1 TiB: more than any single GPU

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024)); }
}  // namespace

// Every numeric option is read as the text typed and converted here, so that a value the
// target type cannot hold is refused, quoting that text, instead of being saturated or wrapped
// by the conversion (CLI11 turns 99999999999999999999999 into INT64_MAX and accepts -1 for an
// unsigned seed).
struct NumberOption {
  std::string name;  // without the leading --
  std::string text;  // as typed; empty when not given
  CLI::Option* opt = nullptr;
  // Converts text into the target; returns "" or the exit-2 message.
  std::function<std::string(const std::string& text)> assign;
};

namespace {

bool is_decimal_integer(const std::string& t) {
  const size_t first = !t.empty() && t[0] == '-' ? 1 : 0;
  if (t.size() == first) return false;
  return std::all_of(t.begin() + std::ptrdiff_t(first), t.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

template <class T>
std::string parse_integer(const std::string& name, const std::string& text, T lo, T hi, T& out) {
  if (!is_decimal_integer(text))
    return fmt::format("--{} expects a whole number, got '{}'", name, text);
  T v{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  // A syntactically fine integer that does not convert is outside T (or negative for unsigned T).
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
    return fmt::format("--{} must be between {} and {}, got '{}'", name, lo, hi, text);
  out = v;
  return "";
}

std::string parse_real(const std::string& name, const std::string& text, double lo, double hi,
                       double& out) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::invalid_argument || end != text.data() + text.size() || text.empty())
    return fmt::format("--{} expects a number, got '{}'", name, text);
  // Overflow and underflow (ec), inf and nan (not finite) are values a double cannot hold here.
  if (ec != std::errc() || !std::isfinite(v) || v < lo || v > hi)
    return fmt::format("--{} must be between {} and {}, got '{}'", name, lo, hi, text);
  out = v;
  return "";
}

}  // namespace

struct SizeOption {
  std::string name;
  int64_t* target;
  int64_t quick;
  NumberOption* number;
};

struct Cli::Impl {
  CLI::App app;
  // Pointers stay valid: the options are created once, before parsing.
  std::vector<std::unique_ptr<NumberOption>> numbers;
  std::vector<SizeOption> sizes;
  std::vector<std::function<std::string()>> range_checks;
  int device = 0;

  NumberOption& number(const std::string& name, const std::string& help,
                       std::function<std::string(const std::string&)> assign) {
    auto o = std::make_unique<NumberOption>();
    o->name = name;
    o->assign = std::move(assign);
    o->opt = app.add_option("--" + name, o->text, help);
    numbers.push_back(std::move(o));
    return *numbers.back();
  }
};

Cli::Cli(std::string description, std::string day, std::string topic, std::string source_hash)
    : impl_(std::make_unique<Impl>()),
      day_(std::move(day)),
      topic_(std::move(topic)),
      description_(std::move(description)),
      source_hash_(std::move(source_hash)) {
  auto& app = impl_->app;
  app.name(day_);
  app.description(day_ + " " + topic_ + ": " + description_);
  app.add_flag("--quick", quick_, "small, odd sizes (what ctest runs)");
  impl_->number("iters", "timed repetitions; the median is reported", [this](const std::string& t) {
    return parse_integer("iters", t, 1, 1000000, iters_);
  });
  impl_->number("warmup", "untimed runs before timing", [this](const std::string& t) {
    return parse_integer("warmup", t, 0, 100000, warmup_);
  });
  impl_->number("seed", "seed of the random inputs", [this](const std::string& t) {
    return parse_integer<uint64_t>("seed", t, 0, UINT64_MAX, seed_);
  });
  app.add_option("--json", json_, "write the results as JSON to this file");
  impl_->number("device", "CUDA device index", [this](const std::string& t) {
    return parse_integer("device", t, 0, 1023, impl_->device);
  });
}

Cli::~Cli() = default;

void Cli::size(const std::string& name, int64_t& value, int64_t quick_value,
               const std::string& help, int64_t max_value) {
  NumberOption& o = impl_->number(
      name, fmt::format("{} (default {}, --quick {})", help, value, quick_value),
      [&value, name, max_value](const std::string& t) {
        return parse_integer<int64_t>(name, t, 1, max_value, value);
      });
  impl_->sizes.push_back(SizeOption{name, &value, quick_value, &o});
}

void Cli::option(const std::string& name, int& value, const std::string& help, int lo, int hi) {
  impl_->number(name, fmt::format("{} (default {})", help, value),
                [&value, name, lo, hi](const std::string& t) {
                  return parse_integer(name, t, lo, hi, value);
                });
}

void Cli::option(const std::string& name, double& value, const std::string& help, double lo,
                 double hi) {
  impl_->number(name, fmt::format("{} (default {})", help, value),
                [&value, name, lo, hi](const std::string& t) {
                  return parse_real(name, t, lo, hi, value);
                });
}

void Cli::option(const std::string& name, std::string& value,
                 const std::vector<std::string>& choices, const std::string& help) {
  impl_->app.add_option("--" + name, value,
                        fmt::format("{} (one of {}; default {})", help, fmt::join(choices, ", "),
                                    value));
  impl_->range_checks.push_back([&value, name, choices]() -> std::string {
    if (std::find(choices.begin(), choices.end(), value) == choices.end())
      return fmt::format("--{} must be one of {} (got '{}')", name, fmt::join(choices, ", "), value);
    return "";
  });
}

void Cli::flag(const std::string& name, bool& value, const std::string& help) {
  impl_->app.add_flag("--" + name, value, help);
}

void Cli::kernels(std::vector<std::string> names) {
  kernels_ = std::move(names);
  impl_->app.add_option("--kernel", kernel_arg_,
                        fmt::format("comma-separated versions to run: {} (default: all)",
                                    fmt::join(kernels_, ", ")));
}

void Cli::device_bytes(std::function<double()> estimate) { estimate_ = std::move(estimate); }
void Cli::validate(std::function<std::string()> check) { validators_.push_back(std::move(check)); }

std::string Cli::error_line(const std::string& message) const {
  return fmt::format("{}: error: {}", day_, one_line(message));
}

int Cli::parse(int argc, const char* const* argv) {
  auto fail = [&](const std::string& message) {
    fmt::print(stderr, "{} (see --help)\n", error_line(message));
    return int(kUsage);
  };
  try {
    impl_->app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    impl_->app.exit(e);
    return kPass;
  } catch (const CLI::CallForAllHelp& e) {
    impl_->app.exit(e);
    return kPass;
  } catch (const CLI::ParseError& e) {
    return fail(e.what());
  }
  for (auto& o : impl_->numbers)
    if (o->opt->count() > 0)
      if (auto m = o->assign(o->text); !m.empty()) return fail(m);
  for (auto& s : impl_->sizes)
    if (s.number->opt->count() == 0 && quick_) *s.target = s.quick;
  for (auto& check : impl_->range_checks)
    if (auto m = check(); !m.empty()) return fail(m);
  selected_.clear();
  if (!kernel_arg_.empty()) {
    std::stringstream ss(kernel_arg_);
    std::string k;
    while (std::getline(ss, k, ',')) {
      if (k.empty()) continue;
      if (std::find(kernels_.begin(), kernels_.end(), k) == kernels_.end())
        return fail(fmt::format("unknown kernel '{}'; this day has: {}", k, fmt::join(kernels_, ", ")));
      selected_.push_back(k);
    }
    if (selected_.empty()) return fail("--kernel names no kernel");
  }
  for (auto& v : validators_)
    if (auto m = v(); !m.empty()) return fail(m);
  if (estimate_) {
    const double need = estimate_();
    if (!(need <= kMaxBytes))
      return fail(fmt::format("these sizes need {} of device memory, more than any GPU has",
                              gib(need)));
  }
  return -1;
}

bool Cli::want(const std::string& kernel) const {
  return selected_.empty() || std::find(selected_.begin(), selected_.end(), kernel) != selected_.end();
}

std::string Cli::sizes_string() const {
  std::string s;
  for (auto& o : impl_->sizes) s += fmt::format("{}{}={}", s.empty() ? "" : " ", o.name, *o.target);
  return s;
}

int Cli::device_index() const { return impl_->device; }

bool Context::skipped(const Measure& m) {
  if (m.role == Role::version && !want(m.kernel.empty() ? m.name : m.kernel)) return true;
  if (!m.vendor || vendor_libraries()) return false;
  if (m.role == Role::version) report_.not_run(m.name, kVendorNotRunReason);
  if (m.role == Role::baseline) report_.baseline_not_run(m.name, kVendorNotRunReason);
  return true;
}

CheckResult Context::checked_run(const Measure& m, double* ms) {
  if (m.reset) m.reset();
  // The reset may have used another stream (cudaMemset is on the legacy default stream, which a
  // non-blocking stream does not wait for): it is complete before the launch.
  if (m.stream) CUDA_CHECK(cudaDeviceSynchronize());
  const auto t0 = std::chrono::steady_clock::now();
  if (m.prepare) m.prepare(m.stream);
  m.launch(m.stream);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return m.check ? m.check() : CheckResult{};
}

Stats Context::timed_runs(const Measure& m, double checked_ms, Stats* wall) const {
  BenchOptions o = bench_options(m.flush_l2);
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
    case Role::version: report_.add(m.name, r.time, r.rate, r.check); break;
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
    out[i].check = checked_run(list[i], &checked_ms[i]);
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

BenchOptions Context::bench_options(bool flush_l2) const {
  BenchOptions o;
  o.iters = cli_.iters();
  o.warmup = cli_.warmup();
  o.flush_l2 = flush_l2 && !device_.emulated;
  return o;
}

Stats Context::bench(const std::function<void(cudaStream_t)>& fn, bool flush_l2) const {
  return benchmark(fn, bench_options(flush_l2));
}

CopyProbe Context::copy_baseline(size_t bytes) {
  CopyProbe p = measure_copy_bandwidth(bytes, bench_options(true));
  report_.baseline("copy", p.time, p.gbps);
  report_.note(fmt::format("baseline 'copy': cudaMemcpy device to device of {:.1f} MiB (rate counts "
                           "read + write){}",
                           double(p.bytes) / (1 << 20),
                           p.bytes < bytes ? ", capped: past a few L2 sizes the rate is flat" : ""));
  return p;
}

CheckResult Context::run_version(const std::string& name,
                                 const std::function<void(cudaStream_t)>& launch,
                                 const std::function<void()>& poison,
                                 const std::function<CheckResult()>& check, double work,
                                 bool flush_l2) {
  return measure({.name = name, .launch = launch, .reset = poison, .check = check, .work = work,
                  .flush_l2 = flush_l2})
      .check;
}

CheckResult Context::run_vendor_version(const std::string& name,
                                        const std::function<void(cudaStream_t)>& launch,
                                        const std::function<void()>& poison,
                                        const std::function<CheckResult()>& check, double work,
                                        bool flush_l2) {
  return measure({.name = name, .launch = launch, .reset = poison, .check = check, .work = work,
                  .vendor = true, .flush_l2 = flush_l2})
      .check;
}

void Context::vendor_not_run(const std::string& name) {
  report_.not_run(name, kVendorNotRunReason);
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

int exit_code(const Report& report) {
  switch (report.outcome()) {
    case Outcome::Pass: return kPass;
    case Outcome::Skip: return kSkip;
    case Outcome::Fail: break;
  }
  return kFail;
}

std::string run_header(const Cli& cli, const DeviceInfo& dev) {
  std::string h = fmt::format("{} {}: {}\n", cli.day(), cli.topic(), cli.description());
  h += fmt::format("device: {} (cc {}, {} SMs, {:.0f} MHz, {}, L2 {} MiB, driver {}, runtime {})\n",
                   dev.name, dev.cc_string(), dev.sm_count, dev.sm_clock_khz / 1e3,
                   gib(double(dev.total_mem)), dev.l2_bytes >> 20, dev.driver_string(),
                   dev.runtime_string());
  if (dev.emulated)
    h += "EMULATED: the kernels run on the CPU in the gpu100 emulator. Times are the emulator's "
         "CPU times,\n  meaningless as GPU speed: no rates, % of limit or x baseline are shown, "
         "and closed vendor\n  libraries (cuBLAS, ...) are not run.\n";
  h += fmt::format("problem: {}{}; timing: median of {} runs after {} warm-up{}\n\n",
                   cli.sizes_string(), cli.quick() ? " (--quick)" : "", cli.iters(), cli.warmup(),
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
  if (cli.device_index() >= count) {
    fmt::print(stderr, "{} (see --help)\n",
               cli.error_line(fmt::format("--device {} but only {} device(s)", cli.device_index(), count)));
    return kUsage;
  }

  Report report(cli.day(), cli.topic());
  report.source_hash = cli.source_hash();
  const char* commit = std::getenv("GPU100_COMMIT");
  report.commit = commit && *commit ? commit : GPU100_CONFIGURE_COMMIT;
  try {
    DeviceInfo dev = query_device(cli.device_index());
    if (require_emulator_from_env() && !dev.emulated) {
      fmt::print(stderr, "{}\n",
                 cli.error_line(fmt::format("GPU100_REQUIRE_EMULATOR=1 but the device is {}: the "
                                            "emulator's libcudart.so.13 was not loaded (not first "
                                            "on LD_LIBRARY_PATH?)",
                                            dev.name)));
      return kFail;
    }
    report.emulated(dev.emulated);
    if (cli.required_cc() > 0 && dev.cc() < cli.required_cc()) {
      fmt::print("SKIP: {} needs compute capability {}.{}; {} is {}\n", cli.day(),
                 cli.required_cc() / 10, cli.required_cc() % 10, dev.name, dev.cc_string());
      return kSkip;
    }
    for (const auto& check : cli.device_checks()) {
      if (std::string why = check(dev); !why.empty()) {
        fmt::print("SKIP: {}: {}\n", cli.day(), why);
        return kSkip;
      }
    }
    const double need = cli.estimated_device_bytes();
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
    if (!cli.json_path().empty()) {
      std::ofstream out(cli.json_path());
      out << report.json(&dev) << "\n";
      if (!out) {
        fmt::print(stderr, "{}\n", cli.error_line("cannot write " + cli.json_path()));
        return kFail;
      }
    }
  } catch (const CudaError& err) {
    fmt::print(stderr, "{}: CUDA error: {}\n", cli.day(), err.what());
    fmt::print("{} {}: FAIL\n", cli.day(), cli.topic());
    return kFail;
  } catch (const std::exception& err) {
    fmt::print(stderr, "{}: error: {}\n", cli.day(), err.what());
    fmt::print("{} {}: FAIL\n", cli.day(), cli.topic());
    return kFail;
  }
  return exit_code(report);
}

}  // namespace gpu100
