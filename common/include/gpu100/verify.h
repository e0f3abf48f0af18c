// Comparing a GPU result with the CPU reference.
//
// Floating point: pass when every value is finite, the relative L2 error
// ||gpu - ref|| / ||ref|| is at most tol.rel_l2, and the largest absolute difference is at most
// tol.max_abs_rel * max|ref| (so the bound scales with the data). Exact mode (integers,
// bit-exact kernels): pass only when every element is equal. NaN or Inf never passes.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

namespace gpu100 {

struct Tolerance {
  double rel_l2 = 0;
  double max_abs_rel = 0;
  bool exact = false;
  const char* name = "exact";

  static constexpr Tolerance Exact() { return {0, 0, true, "exact"}; }
  static constexpr Tolerance FP32() { return {1e-5, 1e-4, false, "fp32"}; }
  static constexpr Tolerance TF32() { return {1e-3, 1e-2, false, "tf32"}; }
  static constexpr Tolerance FP16() { return {1e-2, 5e-2, false, "fp16"}; }
  // bf16 keeps 8 significant bits (unit roundoff u = 2^-8 = 3.9e-3): about 5 u in the L2 norm
  // and 25 u at the worst element, room for a few roundings (inputs, output, one intermediate)
  // of values computed in fp32, as in the element-wise and normalization days.
  static constexpr Tolerance BF16() { return {2e-2, 1e-1, false, "bf16"}; }
  static constexpr Tolerance Custom(double rel_l2, double max_abs_rel) {
    return {rel_l2, max_abs_rel, false, "custom"};
  }
};

struct CheckResult {
  bool pass = false;
  bool checked = false;        // false: nothing was compared (a version that only reports)
  double rel_err = 0;          // ||gpu - ref||_2 / ||ref||_2 (mismatch fraction in exact mode)
  double max_abs_err = 0;
  double max_ref = 0;          // max |ref|
  int64_t count = 0;           // elements compared
  int64_t nonfinite = 0;       // NaN/Inf in the GPU result
  int64_t mismatches = 0;      // exact mode: unequal elements
  int64_t worst_index = -1;    // index of the largest absolute error (first mismatch when exact)
  double worst_got = 0, worst_ref = 0;
  std::string tolerance;       // the tolerance's name
  std::string describe() const;  // one line: why it passed or failed
};

// Accumulates errors element by element; works for full and sampled comparisons.
class ErrorStats {
 public:
  explicit ErrorStats(Tolerance tol) : tol_(tol) {}
  void add(double got, double ref, int64_t index);
  CheckResult finish() const;

 private:
  Tolerance tol_;
  double diff2_ = 0, ref2_ = 0, max_abs_ = 0, max_ref_ = 0, worst_got_ = 0, worst_ref_ = 0;
  int64_t count_ = 0, nonfinite_ = 0, mismatches_ = 0, worst_ = -1;
};

namespace detail {
template <class T>
inline double to_double(const T& x) {
  return static_cast<double>(static_cast<float>(x));  // works for __half / __nv_bfloat16 too
}
inline double to_double(double x) { return x; }
inline double to_double(int64_t x) { return static_cast<double>(x); }
inline double to_double(uint64_t x) { return static_cast<double>(x); }
inline double to_double(int32_t x) { return x; }
inline double to_double(uint32_t x) { return x; }
}  // namespace detail

// Compare n elements of got (GPU) with ref (CPU reference).
template <class G, class R>
CheckResult compare(const G* got, const R* ref, size_t n, Tolerance tol) {
  ErrorStats s(tol);
  for (size_t i = 0; i < n; ++i)
    s.add(detail::to_double(got[i]), detail::to_double(ref[i]), int64_t(i));
  return s.finish();
}
template <class VG, class VR>
CheckResult compare(const VG& got, const VR& ref, Tolerance tol) {
  if (got.size() != ref.size()) {
    CheckResult r;
    r.checked = true;
    r.tolerance = "size mismatch";
    return r;
  }
  return compare(got.data(), ref.data(), got.size(), tol);
}

namespace detail {
// Bit-exact comparison: integers with ==, floating-point values by their bit patterns (so -0 and
// +0 differ, and a NaN never equals anything).
template <class T>
bool same_bits(const T& a, const T& b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  } else {
    return a == b;
  }
}
}  // namespace detail

template <class T>
CheckResult compare_exact(const T* got, const T* ref, size_t n) {
  CheckResult r;
  r.checked = true;
  r.tolerance = "exact";
  r.count = int64_t(n);
  for (size_t i = 0; i < n; ++i) {
    if (!detail::same_bits(got[i], ref[i])) {
      if (r.mismatches == 0) {
        r.worst_index = int64_t(i);
        r.worst_got = detail::to_double(got[i]);
        r.worst_ref = detail::to_double(ref[i]);
      }
      ++r.mismatches;
    }
  }
  r.rel_err = n ? double(r.mismatches) / double(n) : 0.0;
  r.max_abs_err = r.mismatches ? std::fabs(r.worst_got - r.worst_ref) : 0.0;
  r.pass = r.mismatches == 0 && n > 0;
  return r;
}
template <class V>
CheckResult compare_exact(const V& got, const V& ref) {
  if (got.size() != ref.size()) {
    CheckResult r;
    r.checked = true;
    r.tolerance = "size mismatch";
    return r;
  }
  return compare_exact(got.data(), ref.data(), got.size());
}

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

// Combines two results (e.g. an output and a second output of the same kernel): passes only if
// both pass; errors are the worse of the two.
CheckResult combine(const CheckResult& a, const CheckResult& b);

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
