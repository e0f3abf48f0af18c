// The command line every day shares (--quick, --kernel, --iters, --warmup, --seed, --json,
// --device, --help) and the options a day adds. docs/CONTRACT.md lists them with the exit codes;
// gpu100::run (run.h) parses before it looks for a device.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpu100/device.h"

// gpu100_day() (cmake/Day.cmake) defines the three for each program; the defaults are for tests.
#ifndef GPU100_DAY
#define GPU100_DAY "day000"
#define GPU100_TOPIC "unnamed"
#define GPU100_SOURCE_HASH "unknown"
#endif

namespace gpu100 {

class Context;
class Report;

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
  // The kernel versions --kernel a,b chooses from (all by default), or those of a list whose
  // elements have a `name`.
  void kernels(std::vector<std::string> names);
  template <class Versions>
  void kernels_of(const Versions& versions) {
    std::vector<std::string> names;
    for (const auto& v : versions) names.emplace_back(v.name);
    kernels(std::move(names));
  }
  // Device memory the sizes need, in bytes: over 1 TiB, or over the device's free memory, is
  // exit 2.
  void device_bytes(std::function<double()> estimate);
  // Skips (exit 77) below this compute capability (e.g. 90), or when `check` returns a reason.
  void min_cc(int cc) { min_cc_ = cc; }
  void require_device(std::function<std::string(const DeviceInfo&)> check) {
    device_checks_.push_back(std::move(check));
  }
  // Relations between options, checked after parsing: "" when fine, else the exit-2 message.
  void validate(std::function<std::string()> check);

  // After parsing:
  bool quick() const { return quick_; }
  uint64_t seed() const { return seed_; }
  int iters() const { return iters_; }
  bool want(const std::string& kernel) const;  // selected by --kernel?

 private:
  friend int run(Cli&, int, char**, const std::function<void(Context&)>&);
  friend struct CliAccess;  // common/src/internal.h
  // -1 to go on, or the exit code (0 after --help, 2 after one "dayNNN: error: ..." line).
  int parse(int argc, const char* const* argv);
  std::string sizes_string() const;           // "n=1000003 radius=4": the day's numeric options
  void record_problem(Report& report) const;  // the same, in report.problem()
  std::string error_line(const std::string& message) const;  // "dayNNN: error: message"

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

}  // namespace gpu100
