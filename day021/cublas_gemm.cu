// Day 021 - cuBLAS GEMM: SGEMM, TF32, HGEMM, strided-batched, and cuBLASLt's fused epilogue
//
// Days 011-018 chase cuBLAS; today is about calling it well.
//  * The row-major trick. cuBLAS is column-major; our row-major matrices read as column-major are
//    their transposes, and since (A B)^T = B^T A^T, asking cuBLAS for C^T = B^T A^T writes exactly
//    the bytes of the row-major C: pass B first, A second, swap M and N, keep CUBLAS_OP_N, use the
//    row-major leading dimensions. No copy, no transpose:
//      cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, C, N);
//  * Precision is a per-call choice: FP32 on the FP32 units (the handle keeps CUBLAS_DEFAULT_MATH),
//    TF32 or fp16 inputs on the tensor cores with fp32 accumulation.
//  * Many small GEMMs in one launch (strided batched) instead of a launch per matrix.
//  * cuBLASLt describes a matmul with descriptors, picks an algorithm once, and can fuse an
//    epilogue: D = GELU(alpha A B + bias) computed while the tile is still in registers. Its bias
//    is per row of the column-major D, i.e. per COLUMN of our row-major C (per output feature).
//
// Versions (TFLOP/s count 2 M N K per GEMM; bias and GELU are not counted)
//   sgemm            cublasSgemm with the row-major trick (the same call as the baseline)
//   tf32             cublasGemmEx, fp32 in/out, CUBLAS_COMPUTE_32F_FAST_TF32
//   hgemm            cublasGemmEx, fp16 A and B, fp32 accumulate and output
//   batched_loop     `batch` GEMMs of bm x bn x bk, one cublasSgemm call each
//   strided_batched  the same GEMMs in one cublasSgemmStridedBatched call
//   lt_unfused       cuBLASLt matmul (alpha = 2/sqrt(K)) + our bias+GELU elementwise kernel
//   lt_gelu_bias     one cuBLASLt matmul with CUBLASLT_EPILOGUE_GELU_BIAS
// alpha = 2/sqrt(K) keeps the pre-activations near unit size, where GELU actually bends. The
// report's limit is the FP32 peak; a side table gives tf32's and hgemm's % of the tensor peak.
// Every version calls cuBLAS or cuBLASLt: under the emulator all are NOT RUN and the day skips.
//
// Check: CPU double at every entry for small problems, ~4096 sampled entries (corners, last row
// and column, random) otherwise, 256 per matrix for the batched versions. sgemm and batched:
// gemm_tolerance(K); hgemm: tensor_core_gemm_tolerance(K) on the fp16 values themselves; tf32:
// that + 4 * 2^-10 (each input loses 13 mantissa bits); the cuBLASLt versions against the tanh
// form of GELU(alpha A B + bias): 2x the GEMM tolerance, + 2^-10 for the fused epilogue's tanh.
// A note prints the fused result's distance from the tanh and the erf form of GELU.
//
// Run:  build/bin/day021 [--m 4096 --n 4096 --k 4096] [--batch 96 --bm 512 --bn 512 --bk 64]
//                        [--kernel sgemm,tf32,lt_gelu_bias]
#include <cublasLt.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"

namespace {

constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kGeluCubic = 0.044715;
constexpr size_t kLtWorkspaceBytes = size_t(32) << 20;
constexpr int64_t kIntMax = 2147483647;  // cuBLAS dimensions are int

// ---- CPU reference ------------------------------------------------------------------------------
double gelu_tanh_ref(double x) {
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + kGeluCubic * x * x * x)));
}
double gelu_erf_ref(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

// The product at sampled entries, computed once and shared by every version.
struct Sampled {
  std::vector<std::pair<int64_t, int64_t>> points;
  std::vector<double> ab;  // (A B)[i][j] in double at each point
};

Sampled sample_product(const float* A, const float* B, int64_t m, int64_t n, int64_t k,
                       uint64_t seed, int64_t samples = 4096, double full_limit = double(1 << 27)) {
  Sampled s;
  s.points = gpu100::gemm_check_points(m, n, k, seed, samples, full_limit);
  s.ab.resize(s.points.size());
  for (size_t t = 0; t < s.points.size(); ++t) {
    const auto [i, j] = s.points[t];
    double acc = 0;
    for (int64_t p = 0; p < k; ++p) acc += double(A[i * k + p]) * double(B[p * n + j]);
    s.ab[t] = acc;
  }
  return s;
}

// Compares C (row-major, ldc = n) with f(point index, i, j) at the sampled points.
template <class Ref>
void add_errors(gpu100::ErrorStats& e, const std::vector<float>& C, int64_t n, int64_t offset,
                const Sampled& s, Ref ref) {
  for (size_t t = 0; t < s.points.size(); ++t) {
    const auto [i, j] = s.points[t];
    e.add(double(C[size_t(offset + i * n + j)]), ref(t, j), offset + i * n + j);
  }
}

gpu100::Tolerance tf32_tolerance(int64_t k) {
  const auto t = gpu100::tensor_core_gemm_tolerance(k);
  const double tf32 = std::ldexp(1.0, -10);
  return gpu100::Tolerance::Custom(t.rel_l2 + 4.0 * tf32, t.max_abs_rel + 16.0 * tf32);
}

// ---- kernels ------------------------------------------------------------------------------------
// 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)): the same function, written without the cancellation
// of 1 + tanh(u) for negative u (at x = -3, tanh(u) = -0.9976, and one ulp of tanh would already
// be a relative error of 2.5e-5 in the result; for x < -5 the result would collapse to 0).
__device__ __forceinline__ float gelu_tanh(float x) {
  const float inner = float(kSqrt2OverPi) * fmaf(float(kGeluCubic) * x, x * x, x);
  return x / (1.0f + expf(-2.0f * inner));  // exp overflow to inf gives -0: GELU's limit
}

// D[r][c] = GELU(D[r][c] + bias[c]) in place on the row-major m x n matrix. Block x covers 256
// (or 1024 with float4) columns, block y a row; gridDim.y is capped at 65535, so blocks loop
// over rows. kVec4 needs n % 4 == 0 (then every row starts 16-byte aligned and c < n implies
// c + 3 < n) and 16-byte aligned d and bias: the launcher checks.
template <bool kVec4>
__global__ void bias_gelu(float* __restrict__ d, const float* __restrict__ bias, int64_t m,
                          int64_t n) {
  constexpr int kW = kVec4 ? 4 : 1;
  const int64_t c = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * kW;
  if (c >= n) return;  // no barrier in this kernel
  if constexpr (kVec4) {
    const float4 b = *reinterpret_cast<const float4*>(bias + c);
    for (int64_t r = blockIdx.y; r < m; r += gridDim.y) {
      float4* p = reinterpret_cast<float4*>(d + r * n + c);
      float4 v = *p;
      v.x = gelu_tanh(v.x + b.x);
      v.y = gelu_tanh(v.y + b.y);
      v.z = gelu_tanh(v.z + b.z);
      v.w = gelu_tanh(v.w + b.w);
      *p = v;
    }
  } else {
    const float b = bias[c];
    for (int64_t r = blockIdx.y; r < m; r += gridDim.y) d[r * n + c] = gelu_tanh(d[r * n + c] + b);
  }
}

// ---- launchers ----------------------------------------------------------------------------------
void launch_bias_gelu(float* d, const float* bias, int64_t m, int64_t n, cudaStream_t s) {
  constexpr int kBlock = 256;
  const bool vec4 = n % 4 == 0 && gpu100::is_aligned(d, 16) && gpu100::is_aligned(bias, 16);
  const int64_t per_block = kBlock * (vec4 ? 4 : 1);
  const dim3 grid(unsigned(gpu100::ceil_div<int64_t>(n, per_block)),
                  unsigned(std::min<int64_t>(m, gpu100::kMaxGridDimY)));
  if (vec4)
    bias_gelu<true><<<grid, kBlock, 0, s>>>(d, bias, m, n);
  else
    bias_gelu<false><<<grid, kBlock, 0, s>>>(d, bias, m, n);
  LAUNCH_CHECK();
}

// cuBLASLt: one matmul plan (descriptors + the heuristic's algorithm), RAII.
class LtPlan {
 public:
  // Row-major D[m x n] = epilogue(alpha * A[m x k] * B[k x n] (+ bias[n])), via the row-major
  // trick: cuBLASLt's "A" is our B (column-major n x k, ld n), its "B" is our A (k x m, ld k),
  // D is column-major n x m with ld n, and the bias (length = rows of D = n) is per column of C.
  LtPlan(cublasLtHandle_t lt, int64_t m, int64_t n, int64_t k, cublasLtEpilogue_t epilogue,
         const float* bias) {
    try {
      init(lt, m, n, k, epilogue, bias);
    } catch (...) {
      destroy();  // a constructor that throws runs no destructor
      throw;
    }
  }
  ~LtPlan() { destroy(); }
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;

  void run(cublasLtHandle_t lt, float alpha, const float* A, const float* B, float* D,
           void* workspace, cudaStream_t s) const {
    const float beta = 0.0f;
    CUBLAS_CHECK(cublasLtMatmul(lt, desc_, &alpha, B, a_, A, b_, &beta, D, d_, D, d_, &algo_,
                                workspace, kLtWorkspaceBytes, s));
  }

 private:
  void init(cublasLtHandle_t lt, int64_t m, int64_t n, int64_t k, cublasLtEpilogue_t epilogue,
            const float* bias) {
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t op = CUBLAS_OP_N;
    CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &op, sizeof op));
    CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &op, sizeof op));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                                sizeof epilogue));
    if (bias)
      CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                  sizeof bias));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_, CUDA_R_32F, uint64_t(n), uint64_t(k), n));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_, CUDA_R_32F, uint64_t(k), uint64_t(m), k));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d_, CUDA_R_32F, uint64_t(n), uint64_t(m), n));
    cublasLtMatmulPreference_t pref = nullptr;
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t ws = kLtWorkspaceBytes;
    cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulAlgoGetHeuristic(lt, desc_, a_, b_, d_, d_, pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    CUBLAS_CHECK(st);
    if (found == 0) throw std::runtime_error("cuBLASLt: no algorithm for this matmul and epilogue");
    algo_ = result.algo;
  }
  void destroy() {
    if (d_) cublasLtMatrixLayoutDestroy(d_);
    if (b_) cublasLtMatrixLayoutDestroy(b_);
    if (a_) cublasLtMatrixLayoutDestroy(a_);
    if (desc_) cublasLtMatmulDescDestroy(desc_);
    d_ = b_ = a_ = nullptr;
    desc_ = nullptr;
  }

  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
};

// The device data of every version.
struct Operands {
  int64_t m, n, k, batch, bm, bn, bk;
  float lt_alpha;
  gpu100::DeviceBuffer<float> a, b, c, bias;
  gpu100::DeviceBuffer<__half> a16, b16;
  gpu100::DeviceBuffer<float> ab, bb, cb;  // the batched GEMMs, matrix t at t * (its size)
  gpu100::DeviceBuffer<unsigned char> ws;  // cuBLASLt's workspace
  size_t a_batch() const { return size_t(bm * bk); }
  size_t b_batch() const { return size_t(bk * bn); }
  size_t c_batch() const { return size_t(bm * bn); }
};

// cuBLASLt and the two matmul plans: created only where the library can run (not under the
// emulator, where every version is NOT RUN and none of this is called).
struct Lt {
  explicit Lt(const Operands& o)
      : plain(lt, o.m, o.n, o.k, CUBLASLT_EPILOGUE_DEFAULT, nullptr),
        fused(lt, o.m, o.n, o.k, CUBLASLT_EPILOGUE_GELU_BIAS, o.bias.data()) {}
  gpu100::CublasLtHandle lt;
  LtPlan plain, fused;
};

struct Gemms {
  Operands& o;
  std::unique_ptr<Lt> lt;
  gpu100::CublasHandle h;  // CUBLAS_DEFAULT_MATH: FP32 stays FP32; cuBLAS starts at the first use
  cublasHandle_t on(cudaStream_t s) {
    h.set_stream(s);
    return h;
  }
};

const float kOne = 1.0f, kZero = 0.0f;

void sgemm(Gemms& g, cudaStream_t s) {
  Operands& o = g.o;
  // C^T (N x M) = B^T (N x K) * A^T (K x M), all column-major views of row-major data.
  CUBLAS_CHECK(cublasSgemm(g.on(s), CUBLAS_OP_N, CUBLAS_OP_N, int(o.n), int(o.m), int(o.k), &kOne,
                           o.b.data(), int(o.n), o.a.data(), int(o.k), &kZero, o.c.data(),
                           int(o.n)));
}

void tf32(Gemms& g, cudaStream_t s) {
  Operands& o = g.o;
  CUBLAS_CHECK(cublasGemmEx(g.on(s), CUBLAS_OP_N, CUBLAS_OP_N, int(o.n), int(o.m), int(o.k), &kOne,
                            o.b.data(), CUDA_R_32F, int(o.n), o.a.data(), CUDA_R_32F, int(o.k),
                            &kZero, o.c.data(), CUDA_R_32F, int(o.n), CUBLAS_COMPUTE_32F_FAST_TF32,
                            CUBLAS_GEMM_DEFAULT));
}

void hgemm(Gemms& g, cudaStream_t s) {
  Operands& o = g.o;
  CUBLAS_CHECK(cublasGemmEx(g.on(s), CUBLAS_OP_N, CUBLAS_OP_N, int(o.n), int(o.m), int(o.k), &kOne,
                            o.b16.data(), CUDA_R_16F, int(o.n), o.a16.data(), CUDA_R_16F, int(o.k),
                            &kZero, o.c.data(), CUDA_R_32F, int(o.n), CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
}

void batched_loop(Gemms& g, cudaStream_t s) {
  Operands& o = g.o;
  cublasHandle_t h = g.on(s);
  for (int64_t t = 0; t < o.batch; ++t)
    CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, int(o.bn), int(o.bm), int(o.bk), &kOne,
                             o.bb.data() + size_t(t) * o.b_batch(), int(o.bn),
                             o.ab.data() + size_t(t) * o.a_batch(), int(o.bk), &kZero,
                             o.cb.data() + size_t(t) * o.c_batch(), int(o.bn)));
}

void strided_batched(Gemms& g, cudaStream_t s) {
  Operands& o = g.o;
  // Matrix t of each operand starts t * stride elements after the first.
  CUBLAS_CHECK(cublasSgemmStridedBatched(
      g.on(s), CUBLAS_OP_N, CUBLAS_OP_N, int(o.bn), int(o.bm), int(o.bk), &kOne, o.bb.data(),
      int(o.bn), (long long)o.b_batch(), o.ab.data(), int(o.bk), (long long)o.a_batch(), &kZero,
      o.cb.data(), int(o.bn), (long long)o.c_batch(), int(o.batch)));
}

void lt_unfused(Gemms& g, cudaStream_t s) {
  Operands& o = g.o;
  g.lt->plain.run(g.lt->lt, o.lt_alpha, o.a.data(), o.b.data(), o.c.data(), o.ws.data(), s);
  launch_bias_gelu(o.c.data(), o.bias.data(), o.m, o.n, s);
}

void lt_gelu_bias(Gemms& g, cudaStream_t s) {
  Operands& o = g.o;
  g.lt->fused.run(g.lt->lt, o.lt_alpha, o.a.data(), o.b.data(), o.c.data(), o.ws.data(), s);
}

// How a version's output is checked.
enum class Check { Fp32, Tf32, Fp16, Batched, GeluUnfused, GeluFused };
struct Version {
  const char* name;
  Check check;
  void (*launch)(Gemms&, cudaStream_t);
};
const Version kVersions[] = {
    {"sgemm", Check::Fp32, sgemm},
    {"tf32", Check::Tf32, tf32},
    {"hgemm", Check::Fp16, hgemm},
    {"batched_loop", Check::Batched, batched_loop},
    {"strided_batched", Check::Batched, strided_batched},
    {"lt_unfused", Check::GeluUnfused, lt_unfused},
    {"lt_gelu_bias", Check::GeluFused, lt_gelu_bias},
};

// The CPU side of the checks: the references at sampled entries and the host inputs they need.
struct References {
  Sampled fp32, fp16;          // A B of the fp32 inputs and of their fp16 values
  std::vector<Sampled> batch;  // each batched GEMM
  std::vector<float> bias;
  float lt_alpha;
  gpu100::CheckResult fused_erf;  // lt_gelu_bias against the erf form, kept for a note
};

// C against A B (of the fp32 or of the fp16 inputs) at the sampled entries.
gpu100::CheckResult check_product(const gpu100::DeviceBuffer<float>& c, int64_t n,
                                  const Sampled& s, gpu100::Tolerance tol) {
  gpu100::ErrorStats e(tol);
  add_errors(e, c.download(), n, 0, s, [&](size_t t, int64_t) { return s.ab[t]; });
  return e.finish();
}

// GELU(alpha A B + bias[j]) with the given GELU form, at the sampled entries.
gpu100::CheckResult check_gelu(const std::vector<float>& got, int64_t n, References& ref,
                               gpu100::Tolerance tol, double (*gelu)(double)) {
  gpu100::ErrorStats e(tol);
  add_errors(e, got, n, 0, ref.fp32, [&](size_t t, int64_t j) {
    return gelu(double(ref.lt_alpha) * ref.fp32.ab[t] + double(ref.bias[size_t(j)]));
  });
  return e.finish();
}

// A version as ctx.measure takes it (every one calls a vendor library).
gpu100::Measure measure_of(const Version& v, Gemms& g, References& ref) {
  Operands& o = g.o;
  const bool batched = v.check == Check::Batched;
  gpu100::Measure m{
      .name = v.name,
      .launch = [&v, &g](cudaStream_t s) { v.launch(g, s); },
      .reset = [&o, batched] { batched ? o.cb.poison() : o.c.poison(); },
      .work = batched ? double(o.batch) * gpu100::gemm_flops(o.bm, o.bn, o.bk)
                      : gpu100::gemm_flops(o.m, o.n, o.k),
      .vendor = true};
  auto plain = [&o](const Sampled& s, gpu100::Tolerance tol) {
    return [&o, &s, tol] { return check_product(o.c, o.n, s, tol); };
  };
  const auto g_tol = gpu100::gemm_tolerance(o.k);
  const auto unfused_tol = gpu100::Tolerance::Custom(2.0 * g_tol.rel_l2, 2.0 * g_tol.max_abs_rel);
  const double slack = std::ldexp(1.0, -10);
  const auto fused_tol =
      gpu100::Tolerance::Custom(unfused_tol.rel_l2 + slack, unfused_tol.max_abs_rel + slack);
  switch (v.check) {
    case Check::Fp32: m.check = plain(ref.fp32, g_tol); break;
    case Check::Tf32: m.check = plain(ref.fp32, tf32_tolerance(o.k)); break;
    case Check::Fp16: m.check = plain(ref.fp16, gpu100::tensor_core_gemm_tolerance(o.k)); break;
    case Check::Batched:
      m.check = [&o, &ref] {
        const auto got = o.cb.download();
        gpu100::ErrorStats e(gpu100::gemm_tolerance(o.bk));
        for (int64_t t = 0; t < o.batch; ++t) {
          const Sampled& s = ref.batch[size_t(t)];
          add_errors(e, got, o.bn, t * int64_t(o.c_batch()), s,
                     [&](size_t p, int64_t) { return s.ab[p]; });
        }
        return e.finish();
      };
      break;
    case Check::GeluUnfused:
      m.check = [&o, &ref, unfused_tol] {
        return check_gelu(o.c.download(), o.n, ref, unfused_tol, gelu_tanh_ref);
      };
      break;
    case Check::GeluFused:
      m.check = [&o, &ref, fused_tol] {
        const auto got = o.c.download();
        ref.fused_erf = check_gelu(got, o.n, ref, fused_tol, gelu_erf_ref);
        return check_gelu(got, o.n, ref, fused_tol, gelu_tanh_ref);
      };
      break;
  }
  return m;
}

// ---- analysis -----------------------------------------------------------------------------------
// The result of the version of that name if it ran (r[i] is kVersions[i]'s), else null.
const gpu100::Measured* ran(const std::vector<gpu100::Measured>& r, const std::string& name) {
  for (size_t i = 0; i < r.size(); ++i)
    if (name == kVersions[i].name && r[i].ran) return &r[i];
  return nullptr;
}

// The fused result's distances from both GELU forms, beside the distance between the forms on
// this data (CPU, at the checked entries): the form much closer than that is the one cuBLASLt
// computes.
std::string gelu_forms_note(const References& ref, const gpu100::CheckResult& fused_tanh) {
  double d2 = 0, r2 = 0;
  for (size_t t = 0; t < ref.fp32.points.size(); ++t) {
    const double pre = double(ref.lt_alpha) * ref.fp32.ab[t] +
                       double(ref.bias[size_t(ref.fp32.points[t].second)]);
    const double e = gelu_erf_ref(pre), th = gelu_tanh_ref(pre);
    d2 += (th - e) * (th - e);
    r2 += th * th;
  }
  return fmt::format(
      "lt_gelu_bias vs GELU forms: tanh form rel L2 {:.2e}, exact erf form rel L2 {:.2e}; the two "
      "forms differ by rel L2 {:.2e} on this data: the form much closer than that is the one "
      "cuBLASLt computes",
      fused_tanh.rel_err, ref.fused_erf.rel_err, r2 > 0 ? std::sqrt(d2 / r2) : 0.0);
}

std::string fusion_note(const gpu100::Measured& unfused, const gpu100::Measured& fused, int64_t m,
                        int64_t n) {
  return fmt::format(
      "fused epilogue: {:.3f} ms vs {:.3f} ms unfused ({:.1f}% less); the unfused path moves "
      "{:.1f} MiB more (the output written by the GEMM, read and written again by the GELU "
      "kernel; the fused one writes it once)",
      fused.time.median_ms, unfused.time.median_ms,
      100.0 * (1.0 - fused.time.median_ms / unfused.time.median_ms),
      2.0 * 4.0 * double(m) * double(n) / (1 << 20));
}

// tf32 and hgemm against their tensor peak (FP16 dense from device attributes; TF32 taken as
// half of it, as on A100 and H100).
gpu100::Table tensor_table(const std::vector<gpu100::Measured>& r, double fp16_peak) {
  gpu100::Table tensor;
  tensor.title = "tensor-core versions vs their tensor peak (main table: % of FP32 peak)";
  tensor.columns = {"version", "TFLOP/s", "tensor peak TFLOP/s", "% of tensor peak"};
  const std::pair<const char*, double> tensor_versions[] = {{"tf32", 0.5 * fp16_peak},
                                                            {"hgemm", fp16_peak}};
  for (const auto& [name, peak] : tensor_versions) {
    const gpu100::Measured* v = ran(r, name);
    if (!v) continue;
    if (peak > 0)
      tensor.add_row({name, v->rate, peak, 100.0 * v->rate / peak});
    else
      tensor.add_row({name, v->rate, "unknown", "-"});
  }
  return tensor;
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "cuBLAS GEMM: SGEMM, TF32, HGEMM, batched loop vs strided-batched, cuBLASLt unfused vs fused "
      "bias+GELU epilogue (row-major via C^T = B^T A^T)");
  int64_t m = 4096, n = 4096, k = 4096;
  int64_t batch = 96, bm = 512, bn = 512, bk = 64;
  cli.size("m", m, 257, "rows of A and C", kIntMax);
  cli.size("n", n, 131, "columns of B and C", kIntMax);
  cli.size("k", k, 67, "columns of A, rows of B", kIntMax);
  cli.size("batch", batch, 5, "number of GEMMs of the batched versions", kIntMax);
  cli.size("bm", bm, 33, "rows of each batched A and C", kIntMax);
  cli.size("bn", bn, 65, "columns of each batched B and C", kIntMax);
  cli.size("bk", bk, 17, "columns of each batched A, rows of each batched B", kIntMax);
  cli.kernels_of(kVersions);
  cli.device_bytes([&] {
    const double big = 4.0 * (double(m) * k + double(k) * n + double(m) * n) +
                       2.0 * (double(m) * k + double(k) * n) + 4.0 * double(n);
    const double batched =
        4.0 * double(batch) * (double(bm) * bk + double(bk) * bn + double(bm) * bn);
    return big + batched + double(kLtWorkspaceBytes) + double(64 << 20);
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.problem("m", double(m));
    report.problem("n", double(n));
    report.problem("k", double(k));
    report.problem("batch", double(batch));
    report.problem("bm", double(bm));
    report.problem("bn", double(bn));
    report.problem("bk", double(bk));
    report.unit("TFLOP/s");
    report.limit("fp32_tflops", ctx.device().peak_fp32_tflops(), "FP32 peak");
    report.baseline_as_percent();

    // Inputs, and the CPU references at sampled entries (shared by the versions that use them).
    const auto a = gpu100::random_floats(size_t(m * k), ctx.seed());
    const auto b = gpu100::random_floats(size_t(k * n), ctx.seed() + 1);
    const auto a16 = gpu100::to_half(a), b16 = gpu100::to_half(b);
    const auto ab_in = gpu100::random_floats(size_t(batch * bm * bk), ctx.seed() + 3);
    const auto bb_in = gpu100::random_floats(size_t(batch * bk * bn), ctx.seed() + 4);
    References ref{.fp32 = sample_product(a.data(), b.data(), m, n, k, ctx.seed()),
                   .fp16 = sample_product(gpu100::half_values(a16).data(),
                                          gpu100::half_values(b16).data(), m, n, k, ctx.seed()),
                   .bias = gpu100::random_floats(size_t(n), ctx.seed() + 2),
                   .lt_alpha = float(2.0 / std::sqrt(double(k)))};
    for (int64_t t = 0; t < batch; ++t)  // 256 entries per matrix (every entry of small ones)
      ref.batch.push_back(sample_product(ab_in.data() + size_t(t * bm * bk),
                                         bb_in.data() + size_t(t * bk * bn), bm, bn, bk,
                                         ctx.seed() + uint64_t(t), 256, double(1 << 20)));

    Operands o{m, n, k, batch, bm, bn, bk, ref.lt_alpha,
               gpu100::DeviceBuffer<float>(a), gpu100::DeviceBuffer<float>(b),
               gpu100::DeviceBuffer<float>(size_t(m * n)), gpu100::DeviceBuffer<float>(ref.bias),
               gpu100::DeviceBuffer<__half>(a16), gpu100::DeviceBuffer<__half>(b16),
               gpu100::DeviceBuffer<float>(ab_in), gpu100::DeviceBuffer<float>(bb_in),
               gpu100::DeviceBuffer<float>(size_t(batch * bm * bn)),
               gpu100::DeviceBuffer<unsigned char>(kLtWorkspaceBytes)};
    Gemms g{o, ctx.vendor_libraries() ? std::make_unique<Lt>(o) : nullptr};

    // The baseline is checked like a version (a wrong baseline would make every % meaningless).
    gpu100::gemm_baseline(
        ctx, "cublasSgemm", gpu100::cublas_sgemm_launcher(g.h),
        gpu100::GemmOperands{m, n, k, o.a.data(), o.b.data(), o.c.data()}, [&] { o.c.poison(); },
        [&] { return check_product(o.c, n, ref.fp32, gpu100::gemm_tolerance(k)); },
        std::string(gpu100::sgemm_baseline_note()) +
            "; sgemm is the same call written out, so it should read ~100%");

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) runs.push_back(measure_of(v, g, ref));
    const std::vector<gpu100::Measured> r = ctx.measure_all(runs);

    report.note(fmt::format("batched versions: {} GEMMs of {} x {} x {} (their % of cublasSgemm "
                            "compares with the one big {} x {} x {} GEMM)",
                            batch, bm, bn, bk, m, n, k));
    if (const gpu100::Measured* fused = ran(r, "lt_gelu_bias"); fused && fused->check.checked)
      report.note(gelu_forms_note(ref, fused->check));
    if (const auto *u = ran(r, "lt_unfused"), *f = ran(r, "lt_gelu_bias"); u && f)
      report.note(fusion_note(*u, *f, m, n));
    if (gpu100::Table t = tensor_table(r, ctx.device().peak_fp16_tensor_tflops());
        !t.rows.empty()) {
      report.table(std::move(t));
      report.note(
          "tensor peaks: FP16 dense with fp32 accumulation from device attributes; TF32 taken "
          "as half of it (A100, H100)");
    }
  });
}
