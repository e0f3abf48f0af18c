// The report a day prints (one table) and writes with --json (the same numbers and where they
// come from); docs/CONTRACT.md describes both.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "gpu100/bench.h"
#include "gpu100/emu_metrics.h"
#include "gpu100/table.h"
#include "gpu100/verify.h"

namespace gpu100 {

class Context;
struct DeviceInfo;

struct VersionResult {
  std::string name;
  Stats time;            // invalid (samples 0) for versions that are only checked
  double rate = 0;       // in the report's unit
  CheckResult check;
  std::string not_run;   // why it was not run (NOT RUN: neither pass nor fail); empty: it ran
  std::optional<EmuMetrics> metrics;  // under the emulator: what its checked run did
  bool ran() const { return not_run.empty(); }
};

enum class Outcome;  // PASS, FAIL or SKIP: common/src/internal.h

class Report {
 public:
  Report(std::string day, std::string topic);

  // The problem size and shape, e.g. problem("pixels", n), in the JSON. gpu100::run records the
  // day's numeric options (sizes, --radius, ...) itself; a day adds what it derives from them.
  void problem(const std::string& key, double value);
  void problem(const std::string& key, const std::string& value);
  // What rates are measured in ("GB/s", "TFLOP/s", ...) and the device limit they are a fraction
  // of (kind e.g. "dram_gbps", value in the same unit, label e.g. "HBM peak").
  void unit(const std::string& unit) { unit_ = unit; }
  const std::string& unit() const { return unit_; }
  // The rate of `work` (bytes for GB/s, FLOPs for TFLOP/s and GFLOP/s) done in `ms`, in the
  // report's unit; throws for other units (compute those rates in the day).
  double rate(double work, double ms) const;
  void limit(const std::string& kind, double value, const std::string& label);
  // The vendor/baseline measurement of the same run; "x baseline" divides by its rate. A checked
  // baseline that fails fails the run: every ratio to it would be meaningless.
  void baseline(const std::string& name, const Stats& time, double rate,
                const CheckResult& check = {});
  // Show the comparison with the baseline as "% of <name>" (one decimal) instead of "x <name>"
  // (the GEMM days speak of % of cuBLAS). The JSON has both x_baseline and pct_of_baseline.
  void baseline_as_percent(bool on = true) { baseline_pct_ = on; }
  // One kernel version: its time, rate and check.
  void add(const std::string& name, const Stats& time, double rate, const CheckResult& check);
  // A version that is checked but not timed (property tables, device queries).
  void add_check(const std::string& name, const CheckResult& check);
  // The emulated metrics of the version last added under that name (its checked run): shown in
  // the table in place of the emulator's times, and in the JSON.
  void metrics(const std::string& name, const EmuMetrics& m);
  // The run is on the emulator: times are its CPU times, so the table leaves out rates, % of the
  // limit and x baseline, the header and the JSON say so, and free-form tables are marked.
  void emulated(bool on) { emulated_ = on; }
  bool emulated() const { return emulated_; }
  // FLOPs per byte of DRAM traffic of the problem: places the day on the roofline plot.
  void intensity(double flop_per_byte) { intensity_ = flop_per_byte; }
  void note(const std::string& line) { notes_.push_back(line); }
  void table(Table t) { tables_.push_back(std::move(t)); }

  const std::vector<VersionResult>& versions() const { return versions_; }
  // The recorded version of that name (perhaps NOT RUN); null when not selected by --kernel.
  const VersionResult* find(const std::string& name) const;

 private:
  // What gpu100::run and Context do with the report (RunReport in common/src/internal.h).
  friend class Context;
  friend class RunReport;
  friend void vendor_not_run(Context& ctx, const std::string& name);
  // A version, or the baseline, that could not run here, and why: NOT RUN, neither a pass nor a
  // failure.
  void not_run(const std::string& name, const std::string& why);
  void baseline_not_run(const std::string& name, const std::string& why);
  Outcome outcome() const;
  // The table, then "dayNNN topic: PASS|FAIL" (or "SKIP: dayNNN topic: <reason>"), to stdout.
  void print() const;
  std::string json(const DeviceInfo* device) const;  // docs/CONTRACT.md; device may be null
  const std::string& day() const { return day_; }
  const std::string& topic() const { return topic_; }
  std::string source_hash = "unknown";
  std::string commit = "unknown";

  std::string day_, topic_, unit_ = "GB/s";
  std::vector<std::pair<std::string, std::string>> problem_text_;
  std::vector<std::pair<std::string, double>> problem_num_;
  std::vector<std::string> problem_order_;
  std::string limit_kind_, limit_label_;
  double limit_value_ = 0;
  double intensity_ = -1;
  bool baseline_pct_ = false;
  bool emulated_ = false;
  std::optional<VersionResult> baseline_;
  std::vector<VersionResult> versions_;
  std::vector<std::string> notes_;
  std::vector<Table> tables_;
};

}  // namespace gpu100
