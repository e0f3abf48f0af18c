#include "gpu100/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "gpu100/device.h"
#include "internal.h"

namespace gpu100 {

namespace {

std::string num(double v) {
  if (!std::isfinite(v)) return "-";
  const double a = std::fabs(v);
  if (a == 0) return "0";
  if (a >= 1e5 || a < 1e-3) return fmt::format("{:.3e}", v);
  if (a >= 100) return fmt::format("{:.1f}", v);
  if (a >= 1) return fmt::format("{:.3f}", v);
  return fmt::format("{:.4f}", v);
}

std::string err(double v) { return fmt::format("{:.1e}", v); }

// NaN and Inf are not JSON; they become null.
nlohmann::ordered_json jnum(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

std::string iso_date() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

Cell::Cell(double v) : text(num(v)), number(v) {}
Cell::Cell(int v) : text(std::to_string(v)), number(double(v)) {}
Cell::Cell(long v) : text(std::to_string(v)), number(double(v)) {}
Cell::Cell(long long v) : text(std::to_string(v)), number(double(v)) {}
Cell::Cell(unsigned long v) : text(std::to_string(v)), number(double(v)) {}
Cell::Cell(unsigned long long v) : text(std::to_string(v)), number(double(v)) {}

Report::Report(std::string day, std::string topic) : day_(std::move(day)), topic_(std::move(topic)) {}

// A key given again (a size the command line recorded, then the day) keeps its place and takes
// the new value.
void Report::problem(const std::string& key, double value) {
  for (auto& [k, v] : problem_num_)
    if (k == key) {
      v = value;
      return;
    }
  problem_num_.emplace_back(key, value);
  problem_order_.push_back(key);
}
void Report::problem(const std::string& key, const std::string& value) {
  for (auto& [k, v] : problem_text_)
    if (k == key) {
      v = value;
      return;
    }
  problem_text_.emplace_back(key, value);
  problem_order_.push_back(key);
}
void Report::limit(const std::string& kind, double value, const std::string& label) {
  limit_kind_ = kind;
  limit_value_ = value;
  limit_label_ = label;
}
void Report::baseline(const std::string& name, const Stats& time, double rate,
                      const CheckResult& check) {
  baseline_ = VersionResult{name, time, rate, check, {}, {}};
}
void Report::add(const std::string& name, const Stats& time, double rate, const CheckResult& c) {
  versions_.push_back(VersionResult{name, time, rate, c, {}, {}});
}
void Report::add_check(const std::string& name, const CheckResult& c) {
  versions_.push_back(VersionResult{name, Stats{}, 0.0, c, {}, {}});
}
void Report::metrics(const std::string& name, const EmuMetrics& m) {
  for (auto v = versions_.rbegin(); v != versions_.rend(); ++v)
    if (v->name == name) {
      v->metrics = m;
      return;
    }
  throw std::logic_error("Report::metrics: no version named " + name);
}
namespace {
VersionResult not_run_result(const std::string& name, const std::string& why) {
  VersionResult v;
  v.name = name;
  v.not_run = why.empty() ? "not run" : why;  // empty would read as "it ran"
  return v;
}
}  // namespace

void Report::not_run(const std::string& name, const std::string& why) {
  versions_.push_back(not_run_result(name, why));
}
void Report::baseline_not_run(const std::string& name, const std::string& why) {
  baseline_ = not_run_result(name, why);
}

double Report::rate(double work, double ms) const {
  if (unit_ == "GB/s") return gbps(work, ms);
  if (unit_ == "TFLOP/s") return tflops(work, ms);
  if (unit_ == "GFLOP/s") return tflops(work, ms) * 1e3;
  throw std::invalid_argument("Report::rate: no conversion for unit " + unit_);
}

const VersionResult* Report::find(const std::string& name) const {
  for (const VersionResult& v : versions_)
    if (v.name == name) return &v;
  return nullptr;
}

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Pass: return "PASS";
    case Outcome::Skip: return "SKIP";
    case Outcome::Fail: break;
  }
  return "FAIL";
}

Outcome Report::outcome() const {
  if (baseline_ && baseline_->ran() && baseline_->check.checked && !baseline_->check.pass)
    return Outcome::Fail;
  bool any_ran = false, any_not_run = false;
  for (const VersionResult& v : versions_) {
    if (!v.ran()) {
      any_not_run = true;
      continue;
    }
    any_ran = true;
    if (!(v.check.checked && v.check.pass)) return Outcome::Fail;
  }
  if (any_ran) return Outcome::Pass;
  return any_not_run ? Outcome::Skip : Outcome::Fail;
}

void print_table(const Table& t) {
  std::vector<size_t> width(t.columns.size());
  for (size_t c = 0; c < t.columns.size(); ++c) width[c] = t.columns[c].size();
  for (const auto& row : t.rows)
    for (size_t c = 0; c < row.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], row[c].text.size());
  if (!t.title.empty()) fmt::print("\n{}\n", t.title);
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t c = 0; c < width.size(); ++c) {
      const std::string& x = c < cells.size() ? cells[c] : std::string();
      s += c == 0 ? fmt::format("{:<{}}", x, width[c]) : fmt::format(" | {:>{}}", x, width[c]);
    }
    fmt::print("{}\n", s);
  };
  line(t.columns);
  size_t total = 0;
  for (size_t w : width) total += w + 3;
  fmt::print("{}\n", std::string(total > 3 ? total - 3 : 0, '-'));
  for (const auto& row : t.rows) {
    std::vector<std::string> cells;
    for (const auto& c : row) cells.push_back(c.text);
    line(cells);
  }
}

void Report::print() const {
  // An emulator's CPU time says nothing about a GPU: no rate, no % of a limit, no ratio.
  const bool have_limit = limit_value_ > 0 && !emulated_;
  const bool have_base = baseline_ && baseline_->rate > 0 && !emulated_;
  Table t;
  // Under the emulator the versions' metrics take the place of its CPU times, where it has them.
  const bool have_metrics =
      emulated_ && std::any_of(versions_.begin(), versions_.end(),
                               [](const VersionResult& v) { return v.metrics.has_value(); });
  if (have_metrics) {
    t.columns = {"version"};
    for (const auto& c : emu_metric_columns()) t.columns.push_back(c);
  } else if (emulated_)
    t.columns = {"version", "emulator ms"};
  else
    t.columns = {"version", "median ms", "min ms", "max ms", unit_};
  if (have_limit) t.columns.push_back("% " + limit_label_);
  if (have_base) t.columns.push_back((baseline_pct_ ? "% of " : "x ") + baseline_->name);
  for (const char* c : {"rel err", "max abs err", "check"}) t.columns.push_back(c);

  auto row = [&](const VersionResult& v, bool is_base) {
    std::vector<Cell> r;
    r.push_back(is_base ? "[baseline] " + v.name : v.name);
    if (have_metrics) {
      for (auto& cell : emu_metric_cells(v.metrics)) r.push_back(std::move(cell));
    } else if (emulated_) {
      r.push_back(v.time.valid() ? num(v.time.median_ms) : "-");
    } else if (v.time.valid()) {
      r.push_back(num(v.time.median_ms));
      r.push_back(num(v.time.min_ms));
      r.push_back(num(v.time.max_ms));
      r.push_back(num(v.rate));
    } else {
      for (int i = 0; i < 4; ++i) r.push_back("-");
    }
    if (have_limit)
      r.push_back(v.time.valid() ? fmt::format("{:.1f}", 100.0 * v.rate / limit_value_) : "-");
    if (have_base) {
      const double x = v.rate / baseline_->rate;
      r.push_back(!v.time.valid() ? "-"
                  : baseline_pct_ ? fmt::format("{:.1f}", 100.0 * x)
                                  : fmt::format("{:.2f}", x));
    }
    if (!v.ran()) {
      r.push_back("-");
      r.push_back("-");
      r.push_back("NOT RUN");
    } else if (!v.check.checked) {
      r.push_back("-");
      r.push_back("-");
      r.push_back(is_base ? "" : "not checked");
    } else {
      r.push_back(v.check.tolerance == "exact" ? std::to_string(v.check.mismatches) + " diff"
                                               : err(v.check.rel_err));
      r.push_back(err(v.check.max_abs_err));
      r.push_back(v.check.pass ? "PASS" : "FAIL");
    }
    t.add_row(std::move(r));
  };
  if (baseline_) row(*baseline_, true);
  for (const auto& v : versions_) row(v, false);
  print_table(t);
  if (have_limit)
    fmt::print("limit: {} = {} {} (theoretical: SM count and clocks from device attributes, per-SM rates from common/src/device.cpp)\n", limit_label_,
               num(limit_value_), unit_);
  if (baseline_ && !baseline_->ran())
    fmt::print("baseline: {} {}\n", baseline_->name, baseline_->not_run);
  else if (baseline_ && emulated_)
    fmt::print("baseline: {} ran in this run (emulator CPU time {} ms)\n", baseline_->name,
               num(baseline_->time.median_ms));
  else if (baseline_)
    fmt::print("baseline: {} measured in this run: {} ms, {} {}\n", baseline_->name,
               num(baseline_->time.median_ms), num(baseline_->rate), unit_);
  if (baseline_ && baseline_->ran() && baseline_->check.checked && !baseline_->check.pass)
    fmt::print("[baseline] {}: {}\n", baseline_->name, baseline_->check.describe());
  for (const auto& v : versions_)
    if (v.ran() && v.check.checked && !v.check.pass)
      fmt::print("{}: {}\n", v.name, v.check.describe());
  // One line per reason: a day with eight cuBLAS versions need not say it eight times.
  std::vector<std::string> reasons;
  for (const auto& v : versions_)
    if (!v.ran() && std::find(reasons.begin(), reasons.end(), v.not_run) == reasons.end())
      reasons.push_back(v.not_run);
  for (const auto& why : reasons) {
    std::vector<std::string> names;
    for (const auto& v : versions_)
      if (v.not_run == why) names.push_back(v.name);
    fmt::print("NOT RUN: {}: {}\n", fmt::join(names, ", "), why);
  }
  if (have_metrics) fmt::print("note: {}\n", emu_metric_legend());
  for (const auto& n : notes_) fmt::print("note: {}\n", n);
  for (const auto& tab : tables_) {
    if (!emulated_) {
      print_table(tab);
      continue;
    }
    // A day's own tables may hold times and rates the report cannot tell apart from counts.
    Table marked = tab;
    marked.title = "[emulated: times and rates below are the emulator's CPU figures, not GPU "
                   "speed] " + tab.title;
    print_table(marked);
  }
  switch (outcome()) {
    case Outcome::Skip:
      fmt::print("SKIP: {} {}: no version ran ({})\n", day_, topic_, reasons.front());
      break;
    case Outcome::Pass:
    case Outcome::Fail:
      fmt::print("{} {}: {}\n", day_, topic_, outcome_name(outcome()));
      break;
  }
}

std::string Report::json(const DeviceInfo* device) const {
  using J = nlohmann::ordered_json;
  J j;
  j["day"] = day_;
  j["topic"] = topic_;
  j["status"] = outcome_name(outcome());
  // Emulated results are CPU runs: scripts keep them out of results/ and never count them as
  // GPU verification.
  j["emulated"] = emulated_;
  j["source_hash"] = source_hash;
  j["commit"] = commit;
  if (device) {
    j["device"] = {{"name", device->name},
                   {"cc", device->cc_string()},
                   {"driver", cuda_version_string(device->driver_version)},
                   {"runtime", cuda_version_string(device->runtime_version)},
                   {"sm_count", device->sm_count},
                   {"sm_clock_mhz", device->sm_clock_khz / 1000.0},
                   {"l2_bytes", device->l2_bytes},
                   {"dram_gbps", jnum(device->peak_dram_gbps())},
                   {"fp32_tflops", jnum(device->peak_fp32_tflops())}};
  }
  j["date"] = iso_date();
  J problem = J::object();
  for (const auto& key : problem_order_) {
    for (const auto& [k, v] : problem_num_)
      if (k == key) problem[k] = jnum(v);
    for (const auto& [k, v] : problem_text_)
      if (k == key) problem[k] = v;
  }
  j["problem"] = problem;
  j["unit"] = unit_;
  j["arithmetic_intensity"] = intensity_ >= 0 ? jnum(intensity_) : J(nullptr);
  if (limit_value_ > 0 && !emulated_)
    j["limit"] = {{"kind", limit_kind_}, {"label", limit_label_}, {"value", limit_value_}};
  else
    j["limit"] = nullptr;
  const double base_rate = baseline_ && !emulated_ ? baseline_->rate : 0.0;
  const double limit = emulated_ ? 0.0 : limit_value_;
  J versions = J::array();
  for (const auto& v : versions_) {
    J x;
    x["name"] = v.name;
    if (!v.ran()) {
      x["status"] = "NOT RUN";
      x["reason"] = v.not_run;
      versions.push_back(x);
      continue;
    }
    x["status"] = !v.check.checked ? "UNCHECKED" : (v.check.pass ? "PASS" : "FAIL");
    if (v.time.valid()) {
      x["median_ms"] = jnum(v.time.median_ms);
      x["min_ms"] = jnum(v.time.min_ms);
      x["max_ms"] = jnum(v.time.max_ms);
      x["samples"] = v.time.samples;
      x["rate"] = emulated_ ? J(nullptr) : jnum(v.rate);
      x["unit"] = unit_;
      x["pct_of_limit"] = limit > 0 ? jnum(100.0 * v.rate / limit) : J(nullptr);
      x["x_baseline"] = base_rate > 0 ? jnum(v.rate / base_rate) : J(nullptr);
      x["pct_of_baseline"] = base_rate > 0 ? jnum(100.0 * v.rate / base_rate) : J(nullptr);
    }
    x["rel_err"] = jnum(v.check.rel_err);
    x["max_abs_err"] = jnum(v.check.max_abs_err);
    x["check"] = v.check.describe();
    if (v.metrics) {
      J m = J::object();
      for (const auto& [key, value] : emu_metric_fields(*v.metrics)) m[key] = value;
      x["metrics"] = m;
    }
    versions.push_back(x);
  }
  j["versions"] = versions;
  if (baseline_ && !baseline_->ran()) {
    j["baseline"] = {{"name", baseline_->name}, {"status", "NOT RUN"},
                     {"reason", baseline_->not_run}};
  } else if (baseline_) {
    j["baseline"] = {{"name", baseline_->name},
                     {"median_ms", jnum(baseline_->time.median_ms)},
                     {"min_ms", jnum(baseline_->time.min_ms)},
                     {"max_ms", jnum(baseline_->time.max_ms)},
                     {"rate", emulated_ ? J(nullptr) : jnum(baseline_->rate)}};
    if (baseline_->check.checked) {
      j["baseline"]["status"] = baseline_->check.pass ? "PASS" : "FAIL";
      j["baseline"]["rel_err"] = jnum(baseline_->check.rel_err);
      j["baseline"]["max_abs_err"] = jnum(baseline_->check.max_abs_err);
      j["baseline"]["check"] = baseline_->check.describe();
    }
  } else {
    j["baseline"] = nullptr;
  }
  j["notes"] = notes_;
  J tables = J::array();
  for (const auto& t : tables_) {
    J rows = J::array();
    for (const auto& r : t.rows) {
      J row = J::array();
      for (const auto& c : r) row.push_back(c.number ? jnum(*c.number) : J(c.text));
      rows.push_back(row);
    }
    tables.push_back({{"title", t.title}, {"columns", t.columns}, {"rows", rows}});
  }
  j["tables"] = tables;
  return j.dump(2);
}

}  // namespace gpu100
