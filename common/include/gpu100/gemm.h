// What the matrix-multiplication days (Part II and later GEMM users) share: the row-major
// convention, cuBLAS as the baseline, the CPU check at sampled entries, and the --sweep table.
// Link it with `LIBS gpu100_gemm` in the day's gpu100_day() call (it brings cuBLAS with it).
//
// Convention (every GEMM day): row-major. C[M x N] = alpha * A[M x K] * B[K x N] + beta * C,
// A with leading dimension K, B with N, C with N. cuBLAS is column-major; a row-major matrix read
// as column-major is its transpose, so cuBLAS computes the row-major C as C^T = B^T * A^T: call it
// with the operands swapped (B first) and M and N swapped. No copies, no transposes.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu100/buffer.h"
#include "gpu100/gemm_baseline.h"
#include "gpu100/gemm_check.h"
#include "gpu100/run.h"

namespace gpu100 {

inline double gemm_flops(int64_t m, int64_t n, int64_t k) { return 2.0 * double(m) * n * k; }

// One kernel version of a GEMM day: its --kernel name and its launcher.
struct GemmVersion {
  std::string name;
  GemmLauncher launch;
};

// The command line every GEMM day shares: --m, --n, --k (default 4096 each, --quick
// 257 x 131 x 67: a multiple of no tile), --sweep, and the device memory A, B (of the input
// type) and C (fp32) need.
struct GemmArgs {
  int64_t m = 4096, n = 4096, k = 4096;
  bool sweep = false;
  void add_to(Cli& cli, int64_t max_dim, GemmDtype input = GemmDtype::F32);
};

// One GEMM problem inside gpu100::run, as the GEMM days set it up: records m, n, k, the unit
// (TFLOP/s), the peak (FP32, or FP16 tensor for fp16 inputs) and the arithmetic intensity; makes A
// and B random in [-1, 1) from the seed (rounded to fp16 for fp16 inputs; the CPU reference uses
// the rounded values), on the host and the device; C is fp32, checked with check_gemm and
// gemm_tolerance(k). The baseline is cublasSgemm (FP32) or cublasGemmEx (fp16 in, fp32 compute
// and out).
class GemmProblem {
 public:
  GemmProblem(Context& ctx, int64_t m, int64_t n, int64_t k, GemmDtype input = GemmDtype::F32);
  double flops() const { return gemm_flops(ops_.m, ops_.n, ops_.k); }
  CheckResult check() const;
  // The cuBLAS baseline and every version the command line selects, through ctx.measure_all
  // (each validated, then each timed), then with `sweep` the fastest passing version against
  // cuBLAS over square sizes.
  void run(const std::vector<GemmVersion>& versions, bool sweep);
  // The parts of run(), for a day that does more between them: the checked and timed cuBLAS
  // baseline (returns its time), a version as ctx.measure() takes it (launched on the problem's
  // operands, C poisoned before, checked after), and the sweep of one version against cuBLAS.
  Stats baseline();
  Measure measure(const GemmVersion& version);
  void sweep(const GemmVersion& version);

 private:
  void poison() { d_c_.poison(); }
  void sweep_best(const std::vector<GemmVersion>& versions);
  GemmLauncher cublas();
  std::string baseline_note() const;
  Context& ctx_;
  GemmDtype input_;
  std::string baseline_name_;
  std::vector<float> a_, b_;  // the values the GPU multiplies (fp16-rounded for fp16 input)
  DeviceBuffer<float> d_a_, d_b_, d_c_;
  DeviceBuffer<__half> d_ah_, d_bh_;
  GemmOperands ops_;
  Tolerance tol_;
  CublasHandle handle_;
};

}  // namespace gpu100
