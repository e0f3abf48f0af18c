// What the matrix-multiplication days (Part II and later GEMM users) share: the row-major
// convention, cuBLAS as the baseline, the CPU check at sampled entries, and the --sweep table.
// Link it with `LIBS gpu100_gemm` in the day's gpu100_day() call (it brings cuBLAS with it).
//
// Convention (every GEMM day): row-major. C[M x N] = alpha * A[M x K] * B[K x N] + beta * C,
// A with leading dimension K, B with N, C with N. cuBLAS is column-major; a row-major matrix read
// as column-major is its transpose, so cuBLAS computes the row-major C as C^T = B^T * A^T: call it
// with the operands swapped (B first) and M and N swapped. No copies, no transposes.
#pragma once
#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gpu100/buffer.h"
#include "gpu100/cli.h"
#include "gpu100/verify.h"

namespace gpu100 {

inline double gemm_flops(int64_t m, int64_t n, int64_t k) { return 2.0 * double(m) * n * k; }

// A cuBLAS handle (RAII). FP32 GEMMs stay FP32: the default math mode, with TF32 tensor-core
// math not allowed (CUBLAS_DEFAULT_MATH; NVIDIA_TF32_OVERRIDE=1 in the environment would change
// that, and the constructor refuses to run under it so a baseline cannot silently become TF32).
// cuBLAS itself starts at the first use, not at construction: a day can hold a handle under the
// emulator, where cuBLAS cannot run, as long as only versions reported NOT RUN there use it
// (Measure::vendor, gemm_baseline); a use anyway throws, saying so.
class CublasHandle {
 public:
  CublasHandle();
  ~CublasHandle();
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const;
  operator cublasHandle_t() const { return get(); }
  void set_stream(cudaStream_t stream);

 private:
  mutable cublasHandle_t handle_ = nullptr;
};

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
  return s.finish();
}

// --sweep: one GEMM version against its baseline over square sizes (256 ... 8192 by default).
// A launcher computes C = A * B (alpha 1, beta 0) for the given shape on the given stream.
enum class GemmDtype { F32, F16 };
struct GemmOperands {
  int64_t m, n, k;
  const void* A;  // float* or __half*, by the sweep's input type
  const void* B;
  void* C;        // float* or __half*, by the sweep's output type
};
using GemmLauncher = std::function<void(const GemmOperands&, cudaStream_t)>;

struct GemmSweep {
  std::string version;           // e.g. "warptile"
  GemmLauncher launch;
  std::string baseline;          // e.g. "cublasSgemm"
  GemmLauncher baseline_launch;
  GemmDtype input = GemmDtype::F32;
  GemmDtype output = GemmDtype::F32;
  std::vector<int64_t> sizes = {256, 512, 1024, 2048, 4096, 8192};
};

// For each size: random inputs from the seed, the version run once and its output checked at
// sampled entries (gemm_tolerance), then both timed (median of CUDA events; fewer repeats for slow
// runs, at least 3). Adds the table "<version> vs <baseline> by size" (size | ms | TFLOP/s | ms |
// TFLOP/s | % of baseline) and one checked row "sweep <version>" to the report. Sizes whose three
// matrices do not fit in free device memory are left out with a note. Returns whether every
// size passed. Under the emulator the row is NOT RUN: the sweep is a timing against cuBLAS.
bool gemm_sweep(Context& ctx, const GemmSweep& sweep);

// The vendor baseline as every GEMM day runs it: once on `ops`, checked with `check` like a
// version (a wrong baseline would make every percentage meaningless, so a failure is recorded as
// a failed check), then timed on the stream the benchmark hands over, recorded as the report's
// baseline with a "% of <name>" column, and described by `note` (ctx.measure, Role::baseline).
// Returns its time.
// Where vendor libraries cannot run (the emulator) it is recorded as NOT RUN, nothing is called,
// and the returned time is invalid (samples 0).
Stats gemm_baseline(Context& ctx, const std::string& name, const GemmLauncher& launch,
                    const GemmOperands& ops, const std::function<void()>& poison,
                    const std::function<CheckResult()>& check, const std::string& note);

// The launcher of the FP32 cuBLAS baseline for GemmOperands (alpha 1, beta 0, on the given
// stream), row-major through the swapped-operand identity.
GemmLauncher cublas_sgemm_launcher(CublasHandle& h);
// What the FP32 baseline is, for the report's note.
inline const char* sgemm_baseline_note() {
  return "baseline cublasSgemm: plain FP32 SGEMM (CUBLAS_DEFAULT_MATH, no TF32 tensor cores), "
         "same inputs, row-major through the swapped-operand identity";
}

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
  const GemmOperands& ops() const { return ops_; }
  double flops() const { return gemm_flops(ops_.m, ops_.n, ops_.k); }
  void poison() { d_c_.poison(); }
  CheckResult check() const;
  // The cuBLAS baseline and every version the command line selects, through ctx.measure_all
  // (each validated, then each timed), then with `sweep` the fastest passing version against
  // cuBLAS over square sizes (gemm_sweep_best).
  void run(const std::vector<GemmVersion>& versions, bool sweep);
  // A version as ctx.measure() takes it: launched on ops(), poison() before, check() after.
  Measure measure(const GemmVersion& version);
  // The parts of run(), for a day that does more between them: the checked and timed cuBLAS
  // baseline (returns its time), one version (ctx.measure), and the square-size sweep against
  // cuBLAS of one version or of the fastest passing one among `versions`.
  Stats baseline();
  CheckResult run_version(const GemmVersion& version);
  void sweep(const GemmVersion& version);
  void sweep_best(const std::vector<GemmVersion>& versions);

 private:
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
