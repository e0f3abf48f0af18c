#include "gpu100/cli.h"

#include <CLI/CLI.hpp>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "internal.h"

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
  // A day's own option (a size, --radius, ...): part of the problem the report describes.
  std::function<double()> problem_value;
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
  o.problem_value = [&value] { return double(value); };
  impl_->sizes.push_back(SizeOption{name, &value, quick_value, &o});
}

void Cli::option(const std::string& name, int& value, const std::string& help, int lo, int hi) {
  impl_->number(name, fmt::format("{} (default {})", help, value),
                [&value, name, lo, hi](const std::string& t) {
                  return parse_integer(name, t, lo, hi, value);
                })
      .problem_value = [&value] { return double(value); };
}

void Cli::option(const std::string& name, double& value, const std::string& help, double lo,
                 double hi) {
  impl_->number(name, fmt::format("{} (default {})", help, value),
                [&value, name, lo, hi](const std::string& t) {
                  return parse_real(name, t, lo, hi, value);
                })
      .problem_value = [&value] { return value; };
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
  for (const auto& o : impl_->numbers)
    if (o->problem_value) s += fmt::format("{}{}={}", s.empty() ? "" : " ", o->name, o->problem_value());
  return s;
}

void Cli::record_problem(Report& report) const {
  for (const auto& o : impl_->numbers) {
    if (!o->problem_value) continue;
    std::string key = o->name;
    std::replace(key.begin(), key.end(), '-', '_');
    report.problem(key, o->problem_value());
  }
}

int CliAccess::device_index(const Cli& cli) { return cli.impl_->device; }

}  // namespace gpu100
