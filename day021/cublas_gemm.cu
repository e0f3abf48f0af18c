// Day 021 - cuBLAS GEMM: SGEMM, TF32, HGEMM, strided-batched, and cuBLASLt's fused epilogue
//
// Days 011-018 chase cuBLAS; today is about calling it well. Five lessons:
//
// 1. The row-major trick. cuBLAS is column-major (Fortran): element (i, j) of an r x c matrix
//    with leading dimension ld lives at i + j * ld. Our matrices are row-major: C[M x N] =
//    A[M x K] * B[K x N] with (i, j) at i * ld + j, ld = K, N, N. The same bytes read as
//    column-major are the TRANSPOSE: the row-major A (ld K) is a column-major K x M matrix A^T
//    with ld K. Since (A B)^T = B^T A^T, asking cuBLAS for the column-major product
//        C^T [N x M] = B^T [N x K] * A^T [K x M]
//    writes exactly the bytes of the row-major C. So: pass B first, A second, swap M and N,
//    keep CUBLAS_OP_N for both, and use the row-major leading dimensions (N for B, K for A, N
//    for C). No copy and no transpose anywhere. Using CUBLAS_OP_T instead would compute A B
//    correctly but leave it column-major: a transposed answer.
//      cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, C, N);
// 2. Precision is a per-call choice. The handle here (gpu100::CublasHandle) keeps
//    CUBLAS_DEFAULT_MATH, so cublasSgemm is true FP32 on the FP32 units. cublasGemmEx with
//    CUBLAS_COMPUTE_32F_FAST_TF32 lets the tensor cores round the fp32 inputs to TF32 (10
//    mantissa bits) and accumulate in fp32: several times faster, about 3 decimal digits per
//    product. fp16 inputs with CUBLAS_COMPUTE_32F (HGEMM with fp32 accumulation) halve the bytes
//    too; the inputs are rounded once, when converted.
// 3. Many small GEMMs: one launch. cublasSgemmStridedBatched runs `batch` GEMMs whose operands
//    sit at fixed strides (bm*bk, bk*bn, bm*bn elements) in one call; a loop of cublasSgemm calls
//    pays a launch per matrix and runs each small GEMM alone on the GPU.
// 4. cuBLASLt (the "lightweight" API underneath cuBLAS) describes a matmul with descriptor
//    objects, asks a heuristic for an algorithm once, and can fuse an epilogue: D =
//    GELU(alpha A B + bias) computed while the output tile is still in registers. The unfused
//    way writes A B to memory and reads it back in a second kernel. CUBLASLT_EPILOGUE_GELU_BIAS
//    applies the bias per row of the column-major D, which is per COLUMN of our row-major C:
//    the bias of a linear layer's output features. The row-major trick works unchanged.
// 5. Which GELU. cuBLASLt's documentation does not spell out its formula; the epilogue is the
//    tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (PyTorch routes only
//    approximate='tanh' GELU into it). The CPU reference and our elementwise kernel use that
//    same form (written as x / (1 + exp(-2u)), free of cancellation), and a note prints the
//    fused result's distance from both the tanh and the exact (erf) GELU, beside the distance
//    between the two forms, so a GPU run shows which one cuBLASLt computes.
//
// Versions (the TFLOP/s count 2 M N K per GEMM; bias and GELU are not counted)
//   sgemm            cublasSgemm with the row-major trick (the same call as the baseline)
//   tf32             cublasGemmEx, fp32 in/out, CUBLAS_COMPUTE_32F_FAST_TF32
//   hgemm            cublasGemmEx, fp16 A and B, fp32 accumulate and output
//   batched_loop     `batch` GEMMs of bm x bn x bk, one cublasSgemm call each
//   strided_batched  the same GEMMs in one cublasSgemmStridedBatched call
//   lt_unfused       cuBLASLt matmul (alpha = 2/sqrt(K)) + our bias+GELU elementwise kernel
//   lt_gelu_bias     one cuBLASLt matmul with CUBLASLT_EPILOGUE_GELU_BIAS
// alpha = 2/sqrt(K) in the cuBLASLt versions keeps the pre-activation near unit size, where GELU
// actually bends; at the GEMM's natural scale (sqrt(K)/3 for inputs in [-1, 1)) it would act
// as a ReLU and the check would not see which GELU was computed.
//
// The report's limit is the FP32 peak (one limit per report): sgemm, the batched and the
// cuBLASLt versions (CUBLAS_COMPUTE_32F) run on the FP32 units. tf32 and hgemm run on the tensor
// cores and may pass 100% of it; a separate table gives their % of the tensor peak they use
// (FP16 dense tensor peak; TF32 taken as half of it, as on A100 and H100).
//
// Check: CPU double at every entry for small problems, ~4096 sampled entries (corners, last
// row and column, random) otherwise; 256 per matrix for the batched versions.
//   sgemm, batched:   gemm_tolerance(K) (fp32 accumulation, random-walk model, 4x margin).
//   hgemm:            the reference multiplies the fp16 values themselves, so only accumulation
//                     error remains; tensor cores add products with truncation (round toward
//                     zero) once per MMA step (Fasi et al., "Numerical behavior of NVIDIA tensor
//                     cores", 2021), a biased error that grows like u K / c instead of u sqrt(K).
//                     tensor_core_gemm_tolerance adds u K / 4 (u = 2^-24; ~5x that model for
//                     c = 8 products per step).
//   tf32:             LOOSER: each input is rounded (or truncated) to 10 mantissa bits, so each
//                     product is off by up to ~2^-10 relative, independent of K: a relative L2
//                     error near 1e-3. Tolerance = the hgemm one + 4 * 2^-10 (rel L2) and
//                     16 * 2^-10 (max abs / max |ref|). Tolerance::TF32 (1e-3) would sit right
//                     at the expected error, so it is not used.
//   lt_unfused:       gemm_tolerance x 2: GELU's slope is at most 1.13 and the output norm is
//                     about 0.85x the pre-activation norm at this scale, so errors grow < 1.4x.
//   lt_gelu_bias:     that + 2^-10: how cuBLASLt evaluates tanh is not documented, and the
//                     hardware tanh.approx.f32 has a relative error up to 2^-10.99.
//
// Run:  build/bin/day021 [--m 4096 --n 4096 --k 4096] [--batch 96 --bm 512 --bn 512 --bk 64]
//                        [--kernel sgemm,tf32,lt_gelu_bias]
#include <cublasLt.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"

namespace {

constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kGeluCubic = 0.044715;
constexpr size_t kLtWorkspaceBytes = size_t(32) << 20;

// ---- GELU, tanh form, on both sides ------------------------------------------------------------
// 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)): the same function, written without the cancellation
// of 1 + tanh(u) for negative u (at x = -3, tanh(u) = -0.9976, and one ulp of tanh would already
// be a relative error of 2.5e-5 in the result; for x < -5 the result would collapse to 0).
__device__ __forceinline__ float gelu_tanh(float x) {
  const float inner = float(kSqrt2OverPi) * fmaf(float(kGeluCubic) * x, x * x, x);
  return x / (1.0f + expf(-2.0f * inner));  // exp overflow to inf gives -0: GELU's limit
}
double gelu_tanh_ref(double x) {
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + kGeluCubic * x * x * x)));
}
double gelu_erf_ref(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
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

// ---- cuBLASLt: one matmul plan (descriptors + the heuristic's algorithm), RAII ------------------
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

struct LtHandle {
  cublasLtHandle_t h = nullptr;
  LtHandle() { CUBLAS_CHECK(cublasLtCreate(&h)); }
  ~LtHandle() {
    if (h) cublasLtDestroy(h);
  }
  LtHandle(const LtHandle&) = delete;
  LtHandle& operator=(const LtHandle&) = delete;
};

// ---- the CPU reference at sampled entries, computed once and shared by every version -----------
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

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "cuBLAS GEMM: SGEMM, TF32, HGEMM, batched loop vs strided-batched, cuBLASLt unfused vs fused "
      "bias+GELU epilogue (row-major via C^T = B^T A^T)");
  constexpr int64_t kIntMax = 2147483647;  // cuBLAS dimensions are int
  int64_t m = 4096, n = 4096, k = 4096;
  int64_t batch = 96, bm = 512, bn = 512, bk = 64;
  cli.size("m", m, 257, "rows of A and C", kIntMax);
  cli.size("n", n, 131, "columns of B and C", kIntMax);
  cli.size("k", k, 67, "columns of A, rows of B", kIntMax);
  cli.size("batch", batch, 5, "number of GEMMs of the batched versions", kIntMax);
  cli.size("bm", bm, 33, "rows of each batched A and C", kIntMax);
  cli.size("bn", bn, 65, "columns of each batched B and C", kIntMax);
  cli.size("bk", bk, 17, "columns of each batched A, rows of each batched B", kIntMax);
  cli.kernels(
      {"sgemm", "tf32", "hgemm", "batched_loop", "strided_batched", "lt_unfused", "lt_gelu_bias"});
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
    // Every version calls cuBLAS or cuBLASLt, which cannot run under the emulator.
    if (!ctx.vendor_libraries()) {
      for (const auto& name : ctx.cli().kernel_names())
        if (ctx.want(name)) ctx.vendor_not_run(name);
      return;
    }

    // ---- inputs ----------------------------------------------------------------------
    const auto a = gpu100::random_floats(size_t(m * k), ctx.seed());
    const auto b = gpu100::random_floats(size_t(k * n), ctx.seed() + 1);
    const auto bias = gpu100::random_floats(size_t(n), ctx.seed() + 2);
    const auto a16 = gpu100::to_half(a), b16 = gpu100::to_half(b);
    const auto a16v = gpu100::half_values(a16), b16v = gpu100::half_values(b16);
    const size_t a_batch = size_t(bm * bk), b_batch = size_t(bk * bn), c_batch = size_t(bm * bn);
    const auto ab_in = gpu100::random_floats(size_t(batch) * a_batch, ctx.seed() + 3);
    const auto bb_in = gpu100::random_floats(size_t(batch) * b_batch, ctx.seed() + 4);
    const float lt_alpha = float(2.0 / std::sqrt(double(k)));

    gpu100::DeviceBuffer<float> d_a(a), d_b(b), d_c(size_t(m * n)), d_bias(bias);
    gpu100::DeviceBuffer<__half> d_a16(a16), d_b16(b16);
    gpu100::DeviceBuffer<float> d_ab(ab_in), d_bb(bb_in), d_cb(size_t(batch) * c_batch);
    gpu100::DeviceBuffer<unsigned char> d_ws(kLtWorkspaceBytes);

    // ---- CPU references at sampled entries (shared by the versions that use them) -------------
    const Sampled ref32 = sample_product(a.data(), b.data(), m, n, k, ctx.seed());
    const Sampled ref16 = sample_product(a16v.data(), b16v.data(), m, n, k, ctx.seed());
    // Batched: 256 entries per matrix (every entry of small ones), edges included.
    std::vector<Sampled> refb(static_cast<size_t>(batch));
    for (int64_t t = 0; t < batch; ++t)
      refb[size_t(t)] =
          sample_product(ab_in.data() + size_t(t) * a_batch, bb_in.data() + size_t(t) * b_batch, bm,
                         bn, bk, ctx.seed() + uint64_t(t), 256, double(1 << 20));

    auto check_plain = [&](const gpu100::DeviceBuffer<float>& d, const Sampled& s,
                           gpu100::Tolerance tol) {
      const auto got = d.download();
      gpu100::ErrorStats e(tol);
      add_errors(e, got, n, 0, s, [&](size_t t, int64_t) { return s.ab[t]; });
      return e.finish();
    };
    auto check_batched = [&] {
      const auto got = d_cb.download();
      gpu100::ErrorStats e(gpu100::gemm_tolerance(bk));
      for (int64_t t = 0; t < batch; ++t) {
        const Sampled& s = refb[size_t(t)];
        add_errors(e, got, bn, t * int64_t(c_batch), s, [&](size_t p, int64_t) { return s.ab[p]; });
      }
      return e.finish();
    };
    // GELU(alpha A B + bias[j]) with the given GELU form.
    auto check_gelu = [&](const std::vector<float>& got, gpu100::Tolerance tol,
                          double (*gelu)(double)) {
      gpu100::ErrorStats e(tol);
      add_errors(e, got, n, 0, ref32, [&](size_t t, int64_t j) {
        return gelu(double(lt_alpha) * ref32.ab[t] + double(bias[size_t(j)]));
      });
      return e.finish();
    };

    // ---- cuBLAS handles and the baseline ------------------------------------------------
    gpu100::CublasHandle h;  // CUBLAS_DEFAULT_MATH: FP32 stays FP32
    LtHandle lt;
    const LtPlan lt_plain(lt.h, m, n, k, CUBLASLT_EPILOGUE_DEFAULT, nullptr);
    const LtPlan lt_fused(lt.h, m, n, k, CUBLASLT_EPILOGUE_GELU_BIAS, d_bias.data());

    const double flops = gpu100::gemm_flops(m, n, k);
    const double batched_flops = double(batch) * gpu100::gemm_flops(bm, bn, bk);
    const int M = int(m), N = int(n), K = int(k);
    const int BM = int(bm), BN = int(bn), BK = int(bk);
    const float one = 1.0f, zero = 0.0f;

    auto poison_c = [&] { d_c.poison(); };
    const gpu100::Tolerance fp32_tol = gpu100::gemm_tolerance(k);
    // The baseline is checked like a version (a wrong baseline would make every % meaningless).
    gpu100::gemm_baseline(
        ctx, "cublasSgemm", gpu100::cublas_sgemm_launcher(h),
        gpu100::GemmOperands{m, n, k, d_a.data(), d_b.data(), d_c.data()}, poison_c,
        [&] { return check_plain(d_c, ref32, fp32_tol); },
        std::string(gpu100::sgemm_baseline_note()) +
            "; sgemm is the same call written out, so it should read ~100%");

    // ---- the versions -------------------------------------------------------------------
    ctx.run_version(
        "sgemm",
        [&](cudaStream_t s) {
          h.set_stream(s);
          // C^T (N x M) = B^T (N x K) * A^T (K x M), all column-major views of row-major data.
          CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, d_b.data(), N,
                                   d_a.data(), K, &zero, d_c.data(), N));
        },
        poison_c, [&] { return check_plain(d_c, ref32, fp32_tol); }, flops);

    ctx.run_version(
        "tf32",
        [&](cudaStream_t s) {
          h.set_stream(s);
          CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, d_b.data(),
                                    CUDA_R_32F, N, d_a.data(), CUDA_R_32F, K, &zero, d_c.data(),
                                    CUDA_R_32F, N, CUBLAS_COMPUTE_32F_FAST_TF32,
                                    CUBLAS_GEMM_DEFAULT));
        },
        poison_c, [&] { return check_plain(d_c, ref32, tf32_tolerance(k)); }, flops);

    ctx.run_version(
        "hgemm",
        [&](cudaStream_t s) {
          h.set_stream(s);
          CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, d_b16.data(),
                                    CUDA_R_16F, N, d_a16.data(), CUDA_R_16F, K, &zero, d_c.data(),
                                    CUDA_R_32F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        },
        poison_c,
        [&] { return check_plain(d_c, ref16, gpu100::tensor_core_gemm_tolerance(k)); }, flops);

    auto poison_cb = [&] { d_cb.poison(); };
    ctx.run_version(
        "batched_loop",
        [&](cudaStream_t s) {
          h.set_stream(s);
          for (int64_t t = 0; t < batch; ++t)
            CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, BN, BM, BK, &one,
                                     d_bb.data() + size_t(t) * b_batch, BN,
                                     d_ab.data() + size_t(t) * a_batch, BK, &zero,
                                     d_cb.data() + size_t(t) * c_batch, BN));
        },
        poison_cb, check_batched, batched_flops);

    ctx.run_version(
        "strided_batched",
        [&](cudaStream_t s) {
          h.set_stream(s);
          // Matrix t of each operand starts t * stride elements after the first.
          CUBLAS_CHECK(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, BN, BM, BK, &one,
                                                 d_bb.data(), BN, (long long)b_batch, d_ab.data(),
                                                 BK, (long long)a_batch, &zero, d_cb.data(), BN,
                                                 (long long)c_batch, int(batch)));
        },
        poison_cb, check_batched, batched_flops);

    const auto g = gpu100::gemm_tolerance(k);
    const auto unfused_tol = gpu100::Tolerance::Custom(2.0 * g.rel_l2, 2.0 * g.max_abs_rel);
    const double slack = std::ldexp(1.0, -10);
    const auto fused_tol =
        gpu100::Tolerance::Custom(unfused_tol.rel_l2 + slack, unfused_tol.max_abs_rel + slack);
    ctx.run_version(
        "lt_unfused",
        [&](cudaStream_t s) {
          lt_plain.run(lt.h, lt_alpha, d_a.data(), d_b.data(), d_c.data(), d_ws.data(), s);
          launch_bias_gelu(d_c.data(), d_bias.data(), m, n, s);
        },
        poison_c, [&] { return check_gelu(d_c.download(), unfused_tol, gelu_tanh_ref); }, flops);

    gpu100::CheckResult fused_vs_erf;
    const auto fused = ctx.run_version(
        "lt_gelu_bias",
        [&](cudaStream_t s) {
          lt_fused.run(lt.h, lt_alpha, d_a.data(), d_b.data(), d_c.data(), d_ws.data(), s);
        },
        poison_c,
        [&] {
          const auto got = d_c.download();
          fused_vs_erf = check_gelu(got, fused_tol, gelu_erf_ref);
          return check_gelu(got, fused_tol, gelu_tanh_ref);
        },
        flops);

    // ---- notes and the tensor-core table --------------------------------------------------
    char line[320];
    std::snprintf(line, sizeof line,
                  "batched versions: %lld GEMMs of %lld x %lld x %lld (their %% of cublasSgemm "
                  "compares with the one big %lld x %lld x %lld GEMM)",
                  (long long)batch, (long long)bm, (long long)bn, (long long)bk, (long long)m,
                  (long long)n, (long long)k);
    report.note(line);
    if (fused.checked) {
      // How far apart the two GELU forms are on this data (CPU, at the checked entries): the
      // fused result's distances from both only tell them apart when this is well above them.
      double d2 = 0, r2 = 0;
      for (size_t t = 0; t < ref32.points.size(); ++t) {
        const double pre =
            double(lt_alpha) * ref32.ab[t] + double(bias[size_t(ref32.points[t].second)]);
        const double e = gelu_erf_ref(pre), th = gelu_tanh_ref(pre);
        d2 += (th - e) * (th - e);
        r2 += th * th;
      }
      std::snprintf(line, sizeof line,
                    "lt_gelu_bias vs GELU forms: tanh form rel L2 %.2e, exact erf form rel L2 "
                    "%.2e; the two forms differ by rel L2 %.2e on this data: the form much closer "
                    "than that is the one cuBLASLt computes",
                    fused.rel_err, fused_vs_erf.rel_err, r2 > 0 ? std::sqrt(d2 / r2) : 0.0);
      report.note(line);
    }
    const auto* vu = report.find("lt_unfused");
    const auto* vf = report.find("lt_gelu_bias");
    if (vu && vf && vu->time.valid() && vf->time.valid()) {
      std::snprintf(line, sizeof line,
                    "fused epilogue: %.3f ms vs %.3f ms unfused (%.1f%% less); the unfused path "
                    "moves %.1f MiB more (the output written by the GEMM, read and written again "
                    "by the GELU kernel; the fused one writes it once)",
                    vf->time.median_ms, vu->time.median_ms,
                    100.0 * (1.0 - vf->time.median_ms / vu->time.median_ms),
                    2.0 * 4.0 * double(m) * double(n) / (1 << 20));
      report.note(line);
    }

    const double fp16_peak = ctx.device().peak_fp16_tensor_tflops();
    gpu100::Table tensor;
    tensor.title = "tensor-core versions vs their tensor peak (main table: % of FP32 peak)";
    tensor.columns = {"version", "TFLOP/s", "tensor peak TFLOP/s", "% of tensor peak"};
    const std::pair<const char*, double> tensor_versions[] = {{"tf32", 0.5 * fp16_peak},
                                                              {"hgemm", fp16_peak}};
    for (const auto& [name, peak] : tensor_versions) {
      const auto* v = report.find(name);
      if (!v || !v->time.valid()) continue;
      if (peak > 0)
        tensor.add_row({name, v->rate, peak, 100.0 * v->rate / peak});
      else
        tensor.add_row({name, v->rate, "unknown", "-"});
    }
    if (!tensor.rows.empty()) {
      report.table(std::move(tensor));
      report.note(
          "tensor peaks: FP16 dense with fp32 accumulation from device attributes; TF32 taken "
          "as half of it (A100, H100)");
    }
  });
}
