// What a check compares against and what it found. Floating point: pass when every value is
// finite, the relative L2 error ||gpu - ref|| / ||ref|| is at most tol.rel_l2, and the largest
// absolute difference is at most tol.max_abs_rel * max|ref| (so the bound scales with the data).
// Exact mode (integers, bit-exact kernels): pass only when every element is equal. NaN or Inf
// never passes.
#pragma once
#include <cstdint>
#include <string>

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
  // A failed check under the emulator: the device address the worst element was downloaded
  // from, and its size (0 elsewhere); the report prints the command that watches it.
  uint64_t worst_device_address = 0;
  uint32_t element_bytes = 0;
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

// Combines two results (e.g. an output and a second output of the same kernel): passes only if
// both pass; errors are the worse of the two.
CheckResult combine(const CheckResult& a, const CheckResult& b);

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

}  // namespace gpu100
