#include "gpu100/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpu100 {

void ErrorStats::add(double got, double ref, int64_t index) {
  ++count_;
  auto remember = [&] {
    worst_ = index;
    worst_got_ = got;
    worst_ref_ = ref;
  };
  if (!std::isfinite(got)) {
    if (nonfinite_++ == 0) remember();  // the first NaN/Inf is what the message shows
    return;
  }
  const double d = std::fabs(got - ref);
  if (tol_.exact && got != ref && mismatches_++ == 0 && nonfinite_ == 0) remember();
  diff2_ += d * d;
  ref2_ += ref * ref;
  max_ref_ = std::max(max_ref_, std::fabs(ref));
  if (d > max_abs_ || count_ == 1) {
    max_abs_ = std::max(max_abs_, d);
    if (!tol_.exact && nonfinite_ == 0) remember();
  }
}

CheckResult ErrorStats::finish() const {
  CheckResult r;
  r.checked = true;
  r.tolerance = tol_.name;
  r.count = count_;
  r.nonfinite = nonfinite_;
  r.mismatches = mismatches_;
  r.max_abs_err = max_abs_;
  r.max_ref = max_ref_;
  r.worst_index = worst_;
  r.worst_got = worst_got_;
  r.worst_ref = worst_ref_;
  if (tol_.exact) {
    r.rel_err = count_ ? double(mismatches_ + nonfinite_) / double(count_) : 0.0;
    r.pass = count_ > 0 && mismatches_ == 0 && nonfinite_ == 0;
    return r;
  }
  // An all-zero reference makes the relative error meaningless; fall back to the absolute one.
  r.rel_err = ref2_ > 0 ? std::sqrt(diff2_ / ref2_) : std::sqrt(diff2_);
  const double abs_bound = tol_.max_abs_rel * std::max(max_ref_, 1e-30);
  r.pass = count_ > 0 && nonfinite_ == 0 && r.rel_err <= tol_.rel_l2 &&
           (max_abs_ <= abs_bound || max_abs_ == 0.0);
  return r;
}

std::string CheckResult::describe() const {
  if (!checked) return "not checked";
  if (count == 0) return fmt::format("nothing compared ({})", tolerance);
  if (nonfinite > 0)
    return fmt::format("FAIL: {} of {} values are NaN/Inf (first at index {})", nonfinite, count,
                       worst_index);
  if (tolerance == "exact") {
    if (pass) return fmt::format("all {} values equal", count);
    return fmt::format("FAIL: {} of {} values differ; first at index {}: got {} expected {}",
                       mismatches, count, worst_index, worst_got, worst_ref);
  }
  if (!pass && mismatches > 0)
    return fmt::format("FAIL: {} of {} values beyond their error bounds; worst at index {}: got "
                       "{:.9g} expected {:.9g} [{}]",
                       mismatches, count, worst_index, worst_got, worst_ref, tolerance);
  return fmt::format("{}: rel L2 error {:.2e}, max abs error {:.2e} (max |ref| {:.3g}) at index "
                     "{} (got {:.7g} expected {:.7g}) over {} values [{}]",
                     pass ? "ok" : "FAIL", rel_err, max_abs_err, max_ref, worst_index, worst_got,
                     worst_ref, count, tolerance);
}

CheckResult compare_within(const std::vector<double>& got, const std::vector<double>& ref,
                           const std::vector<double>& bound, const std::string& name) {
  if (got.size() != ref.size() || bound.size() != ref.size())
    throw std::invalid_argument("compare_within: got, ref and bound differ in size");
  CheckResult c;
  c.checked = true;
  c.tolerance = name;
  c.count = int64_t(got.size());
  double diff2 = 0, ref2 = 0, worst_ratio = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(got[i] - ref[i]);
    const bool finite = std::isfinite(got[i]);
    if (!finite) ++c.nonfinite;
    const double ratio = !finite ? INFINITY : err == 0 ? 0 : bound[i] > 0 ? err / bound[i] : INFINITY;
    if (ratio > 1) ++c.mismatches;
    if (finite) {
      diff2 += err * err;
      c.max_abs_err = std::max(c.max_abs_err, err);
    }
    ref2 += ref[i] * ref[i];
    c.max_ref = std::max(c.max_ref, std::fabs(ref[i]));
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      c.worst_index = int64_t(i);
      c.worst_got = got[i];
      c.worst_ref = ref[i];
    }
  }
  c.rel_err = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  c.pass = c.count > 0 && c.nonfinite == 0 && c.mismatches == 0;
  return c;
}

double summation_error_bound(double h, int64_t n) {
  const double u = std::ldexp(1.0, -24);
  return h * u / (1.0 - h * u) + double(n) * std::ldexp(1.0, -53);
}

Tolerance summation_tolerance(double h, int64_t n) {
  const double bound = summation_error_bound(h, n);
  Tolerance t = Tolerance::Custom(bound, bound);
  t.name = "fp32 sum bound";
  return t;
}

CheckResult combine(const CheckResult& a, const CheckResult& b) {
  if (!a.checked) return b;
  if (!b.checked) return a;
  CheckResult r = a.max_abs_err >= b.max_abs_err ? a : b;
  if (!a.pass) r = a;
  else if (!b.pass) r = b;
  r.pass = a.pass && b.pass;
  r.rel_err = std::max(a.rel_err, b.rel_err);
  r.max_abs_err = std::max(a.max_abs_err, b.max_abs_err);
  r.count = a.count + b.count;
  r.nonfinite = a.nonfinite + b.nonfinite;
  r.mismatches = a.mismatches + b.mismatches;
  return r;
}

CheckResult check_gradient(
    const std::function<std::vector<double>(const std::vector<double>&)>& forward,
    const std::vector<double>& x, const std::vector<double>& dy, const std::vector<double>& dx) {
  if (dx.size() != x.size()) throw std::invalid_argument("check_gradient: dx and x differ in size");
  const auto loss = [&](const std::vector<double>& at) {
    const std::vector<double> y = forward(at);
    if (y.size() != dy.size()) throw std::invalid_argument("check_gradient: y and dy differ in size");
    double l = 0;
    for (size_t i = 0; i < y.size(); ++i) l += dy[i] * y[i];
    return l;
  };
  ErrorStats stats(Tolerance{1e-6, 1e-6, false, "finite differences"});
  std::vector<double> probe = x;
  for (size_t j = 0; j < x.size(); ++j) {
    const double h = 1e-5 * std::max(1.0, std::abs(x[j]));
    probe[j] = x[j] + h;
    const double up = loss(probe);
    probe[j] = x[j] - h;
    const double down = loss(probe);
    probe[j] = x[j];
    stats.add(dx[j], (up - down) / (2 * h), int64_t(j));
  }
  return stats.finish();
}

}  // namespace gpu100
