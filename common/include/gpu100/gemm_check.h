// The GEMM days' check: tolerances of a dot product of length k (CUDA cores and tensor cores),
// the entries checked (all at --quick sizes, sampled beyond), and the comparison in double.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "gpu100/verify.h"

namespace gpu100 {

// The tolerance of one fp32-accumulated dot product of length k with inputs of either sign, as
// the kernels here compute it (a running sum, or a few partial sums added at the end). Each of the
// k roundings is at most u|partial sum| with u = 2^-24; with random signs the errors add like a
// random walk, so the expected relative error of an entry is about u * sqrt(k) / 2 and the
// relative L2 error over many entries about the same. The bound below is 8x that (never below
// the FP32 tolerance), loose enough for any summation order and tight enough that one wrong
// product term out of k (relative size ~1/sqrt(k)) fails. `output_rounding` adds the unit
// roundoff of a narrower output type (2^-11 for fp16 C).
Tolerance gemm_tolerance(int64_t k, double output_rounding = 0);

// The same for a product accumulated by tensor cores (fp16/bf16 inputs, fp32 accumulation).
// They add the products of one MMA step with truncation (round toward zero) of the aligned
// terms (Fasi et al., "Numerical behavior of NVIDIA tensor cores", 2021), a biased error that
// grows like u*K/c (c terms per step) instead of u*sqrt(K). Adds u*K/4 to the relative L2 bound
// and u*K to the max-abs one (u = 2^-24): about 5x that model for c = 8, and still far below the
// ~1/sqrt(K) of one missing product term.
Tolerance tensor_core_gemm_tolerance(int64_t k, double output_rounding = 0);

// Row-major fp16 helpers for the fp16 days: the halves, and the exact float values they hold
// (what the CPU reference must multiply, not the floats before rounding).
std::vector<__half> to_half(const std::vector<float>& x);
std::vector<float> half_values(const std::vector<__half>& x);

// Which entries of an M x N result to check: every entry when M*N*K <= full_limit multiply-adds
// and M*N <= 2^22 (the --quick sizes), else `samples` entries: the four corners, the last row and
// column (where partial tiles are) and random entries from the seed.
std::vector<std::pair<int64_t, int64_t>> gemm_check_points(int64_t m, int64_t n, int64_t k,
                                                           uint64_t seed, int64_t samples = 4096,
                                                           double full_limit = double(1 << 27));

// Compares C (host copy of the GPU result, row-major, ldc = n) with alpha*A*B + beta*C0 computed
// in double at gemm_check_points(). A, B (and C0 when beta != 0) are the host inputs, row-major.
template <class TC>
CheckResult check_gemm(const TC* C, const float* A, const float* B, int64_t m, int64_t n,
                       int64_t k, Tolerance tol, uint64_t seed, float alpha = 1.0f,
                       float beta = 0.0f, const float* C0 = nullptr) {
  ErrorStats s(tol);
  for (const auto& [i, j] : gemm_check_points(m, n, k, seed)) {
    double ref = 0;
    for (int64_t p = 0; p < k; ++p) ref += double(A[i * k + p]) * double(B[p * n + j]);
    ref *= alpha;
    if (beta != 0.0f) ref += double(beta) * double(C0[i * n + j]);
    s.add(detail::to_double(C[i * n + j]), ref, i * n + j);
  }
  return detail::located(s.finish(), C);
}

}  // namespace gpu100
