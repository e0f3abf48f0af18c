// cuBLAS as the GEMM days run it: the handle, the launcher of a GEMM on row-major operands, the
// checked and timed baseline, and the --sweep of one version against it over square sizes.
#pragma once
#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpu100/run.h"

namespace gpu100 {

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
  operator cublasHandle_t() const { return get(); }
  void set_stream(cudaStream_t stream);

 private:
  cublasHandle_t get() const;  // starts cuBLAS at the first use
  mutable cublasHandle_t handle_ = nullptr;
};

// A cuBLASLt handle (RAII), started at the first use like CublasHandle, and refusing the same
// way under the emulator.
class CublasLtHandle {
 public:
  CublasLtHandle() = default;
  ~CublasLtHandle();
  CublasLtHandle(const CublasLtHandle&) = delete;
  CublasLtHandle& operator=(const CublasLtHandle&) = delete;
  operator cublasLtHandle_t() const { return get(); }

 private:
  cublasLtHandle_t get() const;
  mutable cublasLtHandle_t handle_ = nullptr;
};

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

}  // namespace gpu100
