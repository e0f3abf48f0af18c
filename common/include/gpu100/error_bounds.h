// Checks whose tolerance is derived from the computation instead of a dtype: rounding-error
// bounds of summation, per-element bounds, and the finite-difference check of a CPU backward.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpu100/tolerance.h"

namespace gpu100 {

// Tolerance for a floating-point sum of non-negative inputs, from the rounding-error bound of
// summation (Higham, "Accuracy and Stability of Numerical Algorithms", sec. 4.2): if every input
// goes through at most h rounded fp32 additions on its way to the total, in whatever order,
// |computed - exact| <= gamma_h * sum|x_i| with gamma_h = h*u / (1 - h*u), u = 2^-24. For
// non-negative inputs that bounds the relative error; the double reference adds at most
// (n - 1) * 2^-53. A worst case, so a correct kernel cannot fail it; the measured error is usually
// near sqrt(h) * u. A tree over n values has h = log2(n); a thread that first adds k values in a
// register adds k to h.
double summation_error_bound(double additions_per_input, int64_t n);
Tolerance summation_tolerance(double additions_per_input, int64_t n);

// Per-element error bounds: passes when every value is finite and |got_i - ref_i| <= bound_i, a
// worst-case bound derived for that element (from the order of its additions and its roundings:
// summation_error_bound and friends). The strictest check short of bit equality, and the one for
// outputs whose error grows with a row's length or magnitude, where a single relative tolerance
// either fails a correct kernel on long rows or lets a wrong one pass on short ones. The worst
// element reported is the one nearest to (or furthest past) its bound.
CheckResult compare_within(const std::vector<double>& got, const std::vector<double>& ref,
                           const std::vector<double>& bound, const std::string& name);
template <class G>
CheckResult compare_within(const std::vector<G>& got, const std::vector<double>& ref,
                           const std::vector<double>& bound, const std::string& name) {
  std::vector<double> g(got.size());
  for (size_t i = 0; i < got.size(); ++i) g[i] = detail::to_double(got[i]);
  return compare_within(g, ref, bound, name);
}

// Checks a CPU backward against central finite differences of the CPU forward, in double, so
// the reference itself is checked. forward maps x to y; with fixed upstream gradients dy the
// scalar L(x) = sum_i dy_i y_i(x) has dL/dx_j = (dy^T J)_j, which is what a backward returns as
// dx. Each coordinate is probed with (L(x + h e_j) - L(x - h e_j)) / 2h, h = 1e-5 max(1, |x_j|):
// truncation error O(h^2) and rounding error O(2^-53 / h), both far below the 1e-6 relative
// tolerance, while a wrong formula is off by O(1). Use a handful of elements: each probe is two
// forwards. Inputs must stay away from kinks (ReLU at 0, a max that changes owner).
CheckResult check_gradient(
    const std::function<std::vector<double>(const std::vector<double>&)>& forward,
    const std::vector<double>& x, const std::vector<double>& dy, const std::vector<double>& dx);


}  // namespace gpu100
