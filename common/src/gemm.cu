#include "gpu100/gemm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "gpu100/bench.h"
#include "gpu100/buffer.h"
#include "gpu100/check.h"
#include "gpu100/random.h"
#include "gpu100/report.h"
#include "internal.h"

namespace gpu100 {

CublasHandle::CublasHandle() {
  if (const char* o = std::getenv("NVIDIA_TF32_OVERRIDE"); o && std::string(o) == "1")
    throw std::runtime_error(
        "NVIDIA_TF32_OVERRIDE=1 would turn the FP32 cuBLAS baseline into TF32; unset it");
}

CublasHandle::~CublasHandle() {
  if (handle_) cublasDestroy(handle_);
}

namespace {
// Without this, the emulator shows up as a bare CUBLAS_STATUS_NOT_INITIALIZED.
void refuse_under_emulator(const char* library) {
  if (current_device_is_emulated())
    throw CudaError(std::string(library) + " was called under the emulator, where it cannot run: "
                    "the version that calls it must be reported NOT RUN there "
                    "(Measure::vendor, gemm_baseline)");
}
}  // namespace

cublasHandle_t CublasHandle::get() const {
  if (handle_) return handle_;
  refuse_under_emulator("cuBLAS");
  CUBLAS_CHECK(cublasCreate(&handle_));
  CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
  return handle_;
}

void CublasHandle::set_stream(cudaStream_t stream) { CUBLAS_CHECK(cublasSetStream(get(), stream)); }

CublasLtHandle::~CublasLtHandle() {
  if (handle_) cublasLtDestroy(handle_);
}

cublasLtHandle_t CublasLtHandle::get() const {
  if (handle_) return handle_;
  refuse_under_emulator("cuBLASLt");
  CUBLAS_CHECK(cublasLtCreate(&handle_));
  return handle_;
}

namespace {
int narrow(int64_t v, const char* what) {
  if (v <= 0 || v > INT32_MAX)
    throw std::invalid_argument(fmt::format("cuBLAS GEMM: {} = {} out of int range", what, v));
  return int(v);
}
}  // namespace

// Row-major C = alpha * A * B + beta * C through cuBLAS (operands swapped, see gemm.h).
static void sgemm_row_major(cublasHandle_t h, int64_t m, int64_t n, int64_t k, float alpha,
                            const float* A, const float* B, float beta, float* C) {
  const int M = narrow(m, "m"), N = narrow(n, "n"), K = narrow(k, "k");
  // Column-major view: C^T (N x M) = B^T (N x K) * A^T (K x M).
  CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, C, N));
}

static void hgemm_ex(cublasHandle_t h, int64_t m, int64_t n, int64_t k, float alpha,
                     const __half* A, const __half* B, float beta, void* C, cudaDataType ctype) {
  const int M = narrow(m, "m"), N = narrow(n, "n"), K = narrow(k, "k");
  CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_16F, N, A,
                            CUDA_R_16F, K, &beta, C, ctype, N, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
}

// fp16 inputs, fp32 accumulation (CUBLAS_COMPUTE_32F), output fp32 or fp16.
static void hgemm_row_major(cublasHandle_t h, int64_t m, int64_t n, int64_t k, float alpha,
                            const __half* A, const __half* B, float beta, float* C) {
  hgemm_ex(h, m, n, k, alpha, A, B, beta, C, CUDA_R_32F);
}

static void hgemm_row_major(cublasHandle_t h, int64_t m, int64_t n, int64_t k, float alpha,
                            const __half* A, const __half* B, float beta, __half* C) {
  hgemm_ex(h, m, n, k, alpha, A, B, beta, C, CUDA_R_16F);
}

Tolerance gemm_tolerance(int64_t k, double output_rounding) {
  const double u = std::ldexp(1.0, -24);
  const double walk = u * std::sqrt(double(std::max<int64_t>(k, 1)));
  const double rel = std::max(1e-5, 4.0 * walk) + output_rounding;
  const double max_abs = std::max(1e-4, 16.0 * walk) + 2.0 * output_rounding;
  return {rel, max_abs, false, "gemm fp32-accumulate"};
}

Tolerance tensor_core_gemm_tolerance(int64_t k, double output_rounding) {
  const Tolerance g = gemm_tolerance(k, output_rounding);
  const double drift = std::ldexp(1.0, -24) * double(std::max<int64_t>(k, 1)) / 4.0;
  return {g.rel_l2 + drift, g.max_abs_rel + 4.0 * drift, false, "gemm tensor-core accumulate"};
}

std::vector<__half> to_half(const std::vector<float>& x) {
  std::vector<__half> h(x.size());
  for (size_t i = 0; i < x.size(); ++i) h[i] = __float2half_rn(x[i]);
  return h;
}

std::vector<float> half_values(const std::vector<__half>& x) {
  std::vector<float> f(x.size());
  for (size_t i = 0; i < x.size(); ++i) f[i] = __half2float(x[i]);
  return f;
}

std::vector<std::pair<int64_t, int64_t>> gemm_check_points(int64_t m, int64_t n, int64_t k,
                                                           uint64_t seed, int64_t samples,
                                                           double full_limit) {
  std::vector<std::pair<int64_t, int64_t>> pts;
  // Every entry when the reference is cheap, and the list of points small (K = 1 with a huge
  // M x N would otherwise list up to full_limit points).
  const double entries = double(m) * double(n);
  if (entries * double(k) <= full_limit && entries <= double(1 << 22)) {
    pts.reserve(size_t(m * n));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) pts.emplace_back(i, j);
    return pts;
  }
  // Edges first: partial tiles live in the last rows and columns.
  const int64_t edge = std::min<int64_t>(samples / 4, 256);
  pts.emplace_back(0, 0);
  pts.emplace_back(0, n - 1);
  pts.emplace_back(m - 1, 0);
  pts.emplace_back(m - 1, n - 1);
  for (int64_t t = 0; t < edge; ++t) {
    const uint64_t r = mix64(seed ^ (0xE1u + uint64_t(t) * 0x9E37u));
    pts.emplace_back(m - 1, int64_t(r % uint64_t(n)));
    pts.emplace_back(int64_t((r >> 32) % uint64_t(m)), n - 1);
  }
  while (int64_t(pts.size()) < samples) {
    const uint64_t r = mix64(seed + 0x5A5Au + pts.size() * 0x632BE59BD9B4E019ull);
    pts.emplace_back(int64_t(r % uint64_t(m)), int64_t((r >> 21) % uint64_t(n)));
  }
  return pts;
}

namespace {

size_t dtype_bytes(GemmDtype t) { return t == GemmDtype::F32 ? 4 : 2; }
const char* dtype_name(GemmDtype t) { return t == GemmDtype::F32 ? "fp32" : "fp16"; }

// Device inputs of one size plus the exact float values they hold (for the CPU check).
struct SweepInputs {
  std::vector<float> a, b;
  DeviceBuffer<unsigned char> A, B, C;
};

SweepInputs make_inputs(int64_t s, GemmDtype in, GemmDtype out, uint64_t seed) {
  SweepInputs x;
  const size_t count = size_t(s) * size_t(s);
  x.a = random_floats(count, seed ^ 0xA11CEu);
  x.b = random_floats(count, seed ^ 0xB0B5u);
  x.A = DeviceBuffer<unsigned char>(count * dtype_bytes(in));
  x.B = DeviceBuffer<unsigned char>(count * dtype_bytes(in));
  x.C = DeviceBuffer<unsigned char>(count * dtype_bytes(out));
  if (in == GemmDtype::F16) {
    auto ha = to_half(x.a), hb = to_half(x.b);
    x.a = half_values(ha);
    x.b = half_values(hb);
    CUDA_CHECK(cudaMemcpy(x.A.data(), ha.data(), x.A.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(x.B.data(), hb.data(), x.B.bytes(), cudaMemcpyHostToDevice));
  } else {
    CUDA_CHECK(cudaMemcpy(x.A.data(), x.a.data(), x.A.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(x.B.data(), x.b.data(), x.B.bytes(), cudaMemcpyHostToDevice));
  }
  return x;
}

// Fewer repeats when one run is long: about a second of timed runs, at least 3.
BenchOptions sweep_options(const Context& ctx, const GemmLauncher& launch,
                           const GemmOperands& ops) {
  BenchOptions o = bench_options(ctx.cli(), ctx.device(), true);
  cudaEvent_t t0, t1;
  CUDA_CHECK(cudaEventCreate(&t0));
  CUDA_CHECK(cudaEventCreate(&t1));
  CUDA_CHECK(cudaEventRecord(t0));
  launch(ops, nullptr);
  CUDA_CHECK(cudaEventRecord(t1));
  CUDA_CHECK(cudaEventSynchronize(t1));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, t0, t1));
  CUDA_CHECK(cudaEventDestroy(t0));
  CUDA_CHECK(cudaEventDestroy(t1));
  if (ms > 0) o.iters = std::clamp(int(1000.0 / ms), std::min(3, o.iters), o.iters);
  o.warmup = std::min(o.warmup, 2);
  return o;
}

}  // namespace

bool gemm_sweep(Context& ctx, const GemmSweep& sw) {
  if (!ctx.vendor_libraries()) {
    vendor_not_run(ctx, "sweep " + sw.version);
    return false;
  }
  Table t;
  t.title = fmt::format("{} vs {} by size", sw.version, sw.baseline);
  t.columns = {"size (m=n=k)", sw.version + " ms", sw.version + " TFLOP/s", sw.baseline + " ms",
               sw.baseline + " TFLOP/s", "% of " + sw.baseline};
  CheckResult all;
  bool first = true;
  for (int64_t s : sw.sizes) {
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const double need = double(s) * s * (2.0 * dtype_bytes(sw.input) + dtype_bytes(sw.output));
    if (need > 0.8 * double(free_b)) {
      ctx.report().note(fmt::format("sweep: size {} left out ({:.1f} GiB needed, {:.1f} GiB free)",
                                    s, need / (1 << 30), double(free_b) / (1 << 30)));
      continue;
    }
    SweepInputs x = make_inputs(s, sw.input, sw.output, ctx.seed() + uint64_t(s));
    GemmOperands ops{s, s, s, x.A.data(), x.B.data(), x.C.data()};

    x.C.poison();
    sw.launch(ops, nullptr);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CheckResult c;
    // fp16 inputs run on the tensor cores (the baseline, and the days' kernels).
    const double out_rounding = sw.output == GemmDtype::F16 ? std::ldexp(1.0, -11) : 0.0;
    const Tolerance tol = sw.input == GemmDtype::F16
                              ? tensor_core_gemm_tolerance(s, out_rounding)
                              : gemm_tolerance(s, out_rounding);
    if (sw.output == GemmDtype::F16) {
      std::vector<__half> h(size_t(s) * s);
      CUDA_CHECK(cudaMemcpy(h.data(), x.C.data(), x.C.bytes(), cudaMemcpyDeviceToHost));
      c = check_gemm(h.data(), x.a.data(), x.b.data(), s, s, s, tol, ctx.seed());
    } else {
      std::vector<float> h(size_t(s) * s);
      CUDA_CHECK(cudaMemcpy(h.data(), x.C.data(), x.C.bytes(), cudaMemcpyDeviceToHost));
      c = check_gemm(h.data(), x.a.data(), x.b.data(), s, s, s, tol, ctx.seed());
    }
    if (!c.pass)
      ctx.report().note(fmt::format("sweep: {} at size {}: {}", sw.version, s, c.describe()));
    all = first ? c : combine(all, c);
    first = false;

    auto run = [&](const GemmLauncher& f) {
      return benchmark([&](cudaStream_t st) { f(ops, st); }, sweep_options(ctx, f, ops));
    };
    const Stats tv = run(sw.launch);
    const Stats tb = run(sw.baseline_launch);
    const double fl = gemm_flops(s, s, s);
    const double rv = tflops(fl, tv.median_ms), rb = tflops(fl, tb.median_ms);
    t.add_row({Cell(static_cast<long long>(s)), Cell(tv.median_ms), Cell(rv), Cell(tb.median_ms),
               Cell(rb), Cell(rb > 0 ? 100.0 * rv / rb : 0.0)});
  }
  ctx.report().note(fmt::format("sweep: {} inputs, {} output, C = A*B; {} checked at sampled "
                                "entries of every size",
                                dtype_name(sw.input), dtype_name(sw.output), sw.version));
  ctx.report().table(std::move(t));
  if (first) {
    all.checked = true;
    all.pass = false;
    all.tolerance = "no size fit in device memory";
  }
  ctx.report().add_check("sweep " + sw.version, all);
  return all.pass;
}

GemmLauncher cublas_sgemm_launcher(CublasHandle& h) {
  return [&h](const GemmOperands& o, cudaStream_t s) {
    h.set_stream(s);
    sgemm_row_major(h, o.m, o.n, o.k, 1.0f, static_cast<const float*>(o.A),
                    static_cast<const float*>(o.B), 0.0f, static_cast<float*>(o.C));
  };
}

// fp16 inputs with fp32 accumulation and an fp32 or fp16 output.
static GemmLauncher cublas_hgemm_launcher(CublasHandle& h, GemmDtype output = GemmDtype::F32) {
  return [&h, output](const GemmOperands& o, cudaStream_t s) {
    h.set_stream(s);
    const auto* a = static_cast<const __half*>(o.A);
    const auto* b = static_cast<const __half*>(o.B);
    if (output == GemmDtype::F32)
      hgemm_row_major(h, o.m, o.n, o.k, 1.0f, a, b, 0.0f, static_cast<float*>(o.C));
    else
      hgemm_row_major(h, o.m, o.n, o.k, 1.0f, a, b, 0.0f, static_cast<__half*>(o.C));
  };
}

Stats gemm_baseline(Context& ctx, const std::string& name, const GemmLauncher& launch,
                    const GemmOperands& ops, const std::function<void()>& poison,
                    const std::function<CheckResult()>& check, const std::string& note) {
  const Measured r = ctx.measure({.name = name,
                                  .launch = [&](cudaStream_t s) { launch(ops, s); },
                                  .reset = poison,
                                  .check = check,
                                  .work = gemm_flops(ops.m, ops.n, ops.k),
                                  .role = Role::baseline,
                                  .vendor = true});
  if (!r.ran) return Stats{};
  ctx.report().baseline_as_percent();
  if (!note.empty()) ctx.report().note(note);
  return r.time;
}

std::string best_passing_version(const Report& report) {
  std::string best;
  double best_rate = -1;
  for (const VersionResult& r : report.versions())
    if (r.check.pass && r.time.valid() && r.rate > best_rate) {
      best = r.name;
      best_rate = r.rate;
    }
  return best;
}

// --sweep for a day with several versions: `sweep` with the fastest passing version of this run
// (looked up among `versions` by name) filled in, or a note when no version passed.
static bool gemm_sweep_best(Context& ctx, GemmSweep sweep,
                            const std::vector<GemmVersion>& versions) {
  const std::string best = best_passing_version(ctx.report());
  for (const GemmVersion& v : versions)
    if (!best.empty() && v.name == best) {
      sweep.version = v.name;
      sweep.launch = v.launch;
      return gemm_sweep(ctx, sweep);
    }
  // No version passed: the run already fails on those checks; there is nothing to sweep.
  ctx.report().note("sweep: left out, no version passed in this run");
  return false;
}

void GemmArgs::add_to(Cli& cli, int64_t max_dim, GemmDtype input) {
  cli.size("m", m, 257, "rows of A and C", max_dim);
  cli.size("n", n, 131, "columns of B and C", max_dim);
  cli.size("k", k, 67, "columns of A, rows of B", max_dim);
  cli.flag("sweep", sweep,
           "also run the fastest passing version and cuBLAS at square sizes 256..8192");
  const double in_bytes = input == GemmDtype::F16 ? 2.0 : 4.0;
  cli.device_bytes([this, in_bytes] {
    return in_bytes * (double(m) * k + double(k) * n) + 4.0 * double(m) * n;
  });
}

GemmProblem::GemmProblem(Context& ctx, int64_t m, int64_t n, int64_t k, GemmDtype input)
    : ctx_(ctx),
      input_(input),
      baseline_name_(input == GemmDtype::F16 ? "cublasGemmEx fp16" : "cublasSgemm"),
      a_(random_floats(size_t(m * k), ctx.seed(), -1.0f, 1.0f)),
      b_(random_floats(size_t(k * n), ctx.seed() + 1, -1.0f, 1.0f)),
      d_c_(size_t(m * n)),
      ops_{m, n, k, nullptr, nullptr, d_c_.data()},
      tol_(input == GemmDtype::F16 ? tensor_core_gemm_tolerance(k) : gemm_tolerance(k)) {
  Report& report = ctx.report();
  report.problem("m", double(m));
  report.problem("n", double(n));
  report.problem("k", double(k));
  report.unit("TFLOP/s");
  double in_bytes = 4.0;
  if (input == GemmDtype::F16) {
    const std::vector<__half> ah = to_half(a_), bh = to_half(b_);
    a_ = half_values(ah);
    b_ = half_values(bh);
    d_ah_ = DeviceBuffer<__half>(ah);
    d_bh_ = DeviceBuffer<__half>(bh);
    ops_.A = d_ah_.data();
    ops_.B = d_bh_.data();
    in_bytes = 2.0;
    report.limit("fp16_tensor_tflops", ctx.device().peak_fp16_tensor_tflops(), "FP16 tensor peak");
  } else {
    d_a_ = DeviceBuffer<float>(a_);
    d_b_ = DeviceBuffer<float>(b_);
    ops_.A = d_a_.data();
    ops_.B = d_b_.data();
    report.limit("fp32_tflops", ctx.device().peak_fp32_tflops(), "FP32 peak");
  }
  // The least DRAM traffic any GEMM needs: read A and B once, write C once.
  report.intensity(flops() /
                   (in_bytes * (double(m) * k + double(k) * n) + 4.0 * double(m) * n));
}

CheckResult GemmProblem::check() const {
  const std::vector<float> c = d_c_.download();
  return check_gemm(c.data(), a_.data(), b_.data(), ops_.m, ops_.n, ops_.k, tol_, ctx_.seed());
}

GemmLauncher GemmProblem::cublas() {
  return input_ == GemmDtype::F16 ? cublas_hgemm_launcher(handle_)
                                  : cublas_sgemm_launcher(handle_);
}

std::string GemmProblem::baseline_note() const {
  return input_ == GemmDtype::F16
             ? "baseline cublasGemmEx fp16: fp16 A and B, fp32 accumulation (CUBLAS_COMPUTE_32F), "
               "fp32 C - the kernels' arithmetic; same inputs, row-major through the "
               "swapped-operand identity"
             : sgemm_baseline_note();
}

Stats GemmProblem::baseline() {
  return gemm_baseline(
      ctx_, baseline_name_, cublas(), ops_, [this] { poison(); }, [this] { return check(); },
      baseline_note());
}

Measure GemmProblem::measure(const GemmVersion& v) {
  return {.name = v.name,
          .launch = [this, launch = v.launch](cudaStream_t s) { launch(ops_, s); },
          .reset = [this] { poison(); },
          .check = [this] { return check(); },
          .work = flops()};
}

void GemmProblem::sweep(const GemmVersion& version) {
  GemmSweep sw;
  sw.version = version.name;
  sw.launch = version.launch;
  sw.baseline = baseline_name_;
  sw.baseline_launch = cublas();
  sw.input = input_;
  gemm_sweep(ctx_, sw);
}

void GemmProblem::sweep_best(const std::vector<GemmVersion>& versions) {
  GemmSweep sw;
  sw.baseline = baseline_name_;
  sw.baseline_launch = cublas();
  sw.input = input_;
  gemm_sweep_best(ctx_, sw, versions);
}

void GemmProblem::run(const std::vector<GemmVersion>& versions, bool sweep) {
  std::vector<Measure> list{{.name = baseline_name_,
                             .launch = [this, base = cublas()](cudaStream_t s) { base(ops_, s); },
                             .reset = [this] { poison(); },
                             .check = [this] { return check(); },
                             .work = flops(),
                             .role = Role::baseline,
                             .vendor = true}};
  for (const GemmVersion& v : versions) list.push_back(measure(v));
  if (ctx_.measure_all(list).front().ran) {
    ctx_.report().baseline_as_percent();
    ctx_.report().note(baseline_note());
  }
  if (sweep) sweep_best(versions);
}

}  // namespace gpu100
