// Day 047 - SwiGLU: out = silu(a) * b, fused forward and backward
//
// The feed-forward block of LLaMA-style models projects x to 2H values per token and gates one
// half with the other: for a row [a | b] of length 2H, out = silu(a) * b with
// silu(a) = a * sigmoid(a). The backward, given dout, is
//   da = dout * b * s * (1 + a (1 - s)),  db = dout * silu(a),   s = sigmoid(a).
// A handful of FLOPs per element: it is a bandwidth problem, and the lesson is the bytes. Run as
// two library calls (silu, then a multiply) the intermediate silu(a) goes to memory and comes
// back: 5 H values moved per row instead of the 3 H the fused kernel reads and writes.
//
// Versions (one thread per element or per 16-byte vector)
//   fwd_unfused         silu(a) into a temporary, then a second kernel multiplies by b.
//   fwd_fused           one kernel: a and b read, out written.
//   fwd_fused_vec       fused with 16-byte loads and stores (4 floats).
//   fwd_fused_vec_bf16  bf16 in and out, 8 elements per 16-byte access, math in fp32.
//   bwd_fused           da and db from a, b, dout in one kernel (s and silu recomputed, never
//                       stored by the forward).
//   bwd_fused_vec       the same with 16-byte accesses.
//   bwd_fused_vec_bf16  bf16 in and out.
// A vector never spans two rows, and a, b and out rows are all 16-byte aligned only when H is
// a multiple of the vector width: for other H the vector versions run their scalar kernel (the
// report says which did).
//
// Check: against a CPU reference in double on the same (bf16-rounded, for bf16) inputs. Inputs
// include large |a| (-90: exp(-a) overflows to inf and the sigmoid must come out 0, never NaN;
// 30: it rounds to 1) and the point a = -1.278 where 1 + a (1 - s) cancels. Each output is a short
// chain of correctly rounded operations and expf (2 ulp), so its error is a few units in the last
// place of its terms: common/'s fp32 tolerance, and its bf16 one for bf16 outputs. The CPU backward
// is checked against central finite differences of the CPU forward.
//
// Run:  build/bin/day047 [--rows 2048] [--hidden 5632] [--kernel fwd_fused_vec,...]
#include <cuda_bf16.h>
#include <fmt/core.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

using bf16 = __nv_bfloat16;
constexpr int kBlock = 256;

// ---- CPU reference ------------------------------------------------------------------------------
// x holds rows of [a | b], 2H each; out rows of H.
std::vector<double> swiglu_forward_cpu(const std::vector<double>& x, int64_t rows, int64_t h) {
  std::vector<double> out(size_t(rows * h));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < h; ++j) {
      const double a = x[size_t(r * 2 * h + j)], b = x[size_t(r * 2 * h + h + j)];
      out[size_t(r * h + j)] = a / (1.0 + std::exp(-a)) * b;
    }
  return out;
}

std::vector<double> swiglu_backward_cpu(const std::vector<double>& x,
                                        const std::vector<double>& dout, int64_t rows, int64_t h) {
  std::vector<double> dx(x.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < h; ++j) {
      const size_t ia = size_t(r * 2 * h + j), ib = ia + size_t(h);
      const double a = x[ia], b = x[ib], g = dout[size_t(r * h + j)];
      const double s = 1.0 / (1.0 + std::exp(-a));
      dx[ia] = g * b * s * (1.0 + a * (1.0 - s));
      dx[ib] = g * a * s;
    }
  return dx;
}

// ---- kernels ------------------------------------------------------------------------------------
__device__ __forceinline__ float to_float(float v) {
  return v;
}
__device__ __forceinline__ float to_float(bf16 v) {
  return __bfloat162float(v);
}
template <class T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ bf16 from_float<bf16>(float v) {
  return __float2bfloat16_rn(v);
}

// expf, not __expf: the fast one's error grows with |a|. For a < -88, expf(-a) is inf and the
// sigmoid is 1/inf = 0, not NaN (a e^a / (1 + e^a) would be inf/inf at the other end).
__device__ __forceinline__ float sigmoid(float a) {
  return 1.0f / (1.0f + expf(-a));
}

template <class T>
constexpr int kVec = 16 / int(sizeof(T));

template <class T>
__device__ __forceinline__ void load_vec(const T* p, float (&v)[kVec<T>]) {
  const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
  const unsigned words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if constexpr (sizeof(T) == 4) {
      v[k] = __uint_as_float(words[k]);
    } else {
      const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&words[k]));
      v[2 * k] = f.x;
      v[2 * k + 1] = f.y;
    }
  }
}

template <class T>
__device__ __forceinline__ void store_vec(T* p, const float (&v)[kVec<T>]) {
  unsigned words[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if constexpr (sizeof(T) == 4) {
      words[k] = __float_as_uint(v[k]);
    } else {
      const __nv_bfloat162 h = __floats2bfloat162_rn(v[2 * k], v[2 * k + 1]);
      words[k] = *reinterpret_cast<const unsigned*>(&h);
    }
  }
  *reinterpret_cast<uint4*>(p) = make_uint4(words[0], words[1], words[2], words[3]);
}

// Thread t owns W consecutive outputs i = t W .. t W + W - 1 of one row (W = 1, or a vector
// when h % W == 0, so that the W never cross a row and every access is aligned).
template <class T, int W>
__global__ void swiglu_forward(const T* __restrict__ x, T* __restrict__ out, int64_t rows,
                               int64_t h) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t * W >= rows * h) return;
  const int64_t i = t * W, r = i / h, j = i - r * h;
  const T* a = x + r * 2 * h + j;
  const T* b = a + h;
  if constexpr (W == 1) {
    const float av = to_float(a[0]);
    out[i] = from_float<T>(av * sigmoid(av) * to_float(b[0]));
  } else {
    float av[W], bv[W];
    load_vec(a, av);
    load_vec(b, bv);
#pragma unroll
    for (int e = 0; e < W; ++e) av[e] = av[e] * sigmoid(av[e]) * bv[e];
    store_vec(out + i, av);
  }
}

template <class T, int W>
__global__ void swiglu_backward(const T* __restrict__ x, const T* __restrict__ dout,
                                T* __restrict__ dx, int64_t rows, int64_t h) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t * W >= rows * h) return;
  const int64_t i = t * W, r = i / h, j = i - r * h;
  const int64_t ia = r * 2 * h + j, ib = ia + h;
  if constexpr (W == 1) {
    const float a = to_float(x[ia]), b = to_float(x[ib]), g = to_float(dout[i]);
    const float s = sigmoid(a);
    dx[ia] = from_float<T>(g * b * s * (1.0f + a * (1.0f - s)));
    dx[ib] = from_float<T>(g * a * s);
  } else {
    float a[W], b[W], g[W], da[W];
    load_vec(x + ia, a);
    load_vec(x + ib, b);
    load_vec(dout + i, g);
#pragma unroll
    for (int e = 0; e < W; ++e) {
      const float s = sigmoid(a[e]);
      da[e] = g[e] * b[e] * s * (1.0f + a[e] * (1.0f - s));
      b[e] = g[e] * a[e] * s;  // db
    }
    store_vec(dx + ia, da);
    store_vec(dx + ib, b);
  }
}

// The unfused chain: what two separate element-wise library calls would do.
__global__ void silu_kernel(const float* __restrict__ x, float* __restrict__ tmp, int64_t rows,
                            int64_t h) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * h) return;
  const int64_t r = i / h;
  const float a = x[r * 2 * h + (i - r * h)];
  tmp[i] = a * sigmoid(a);
}

__global__ void gate_multiply_kernel(const float* __restrict__ tmp, const float* __restrict__ x,
                                     float* __restrict__ out, int64_t rows, int64_t h) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * h) return;
  const int64_t r = i / h;
  out[i] = tmp[i] * x[r * 2 * h + h + (i - r * h)];
}

// ---- launchers ----------------------------------------------------------------------------------
enum class Kind { unfused, fused, vec };
struct Version {
  const char* name;
  bool forward;
  Kind kind;
  bool bf16;
};
const Version kVersions[] = {
    {"fwd_unfused", true, Kind::unfused, false},    {"fwd_fused", true, Kind::fused, false},
    {"fwd_fused_vec", true, Kind::vec, false},      {"fwd_fused_vec_bf16", true, Kind::vec, true},
    {"bwd_fused", false, Kind::fused, false},       {"bwd_fused_vec", false, Kind::vec, false},
    {"bwd_fused_vec_bf16", false, Kind::vec, true},
};

// Elements per thread: a 16-byte vector where h allows it, else one.
int width_of(const Version& v, int64_t h) {
  const int w = v.bf16 ? kVec<bf16> : kVec<float>;
  return v.kind == Kind::vec && h % w == 0 ? w : 1;
}

struct Buffers {
  const float *x, *dout;
  float *out, *tmp, *dx;
  const bf16 *xb, *doutb;
  bf16 *outb, *dxb;
};

// The scalar or the vector instance of one kernel.
template <class Kernel, class... Args>
void launch_width(int w, Kernel scalar, Kernel vector, unsigned grid, cudaStream_t s,
                  Args... args) {
  (w == 1 ? scalar : vector)<<<grid, kBlock, 0, s>>>(args...);
}

void launch(const Version& v, const Buffers& b, int64_t rows, int64_t h, cudaStream_t s) {
  const int w = width_of(v, h);
  const unsigned grid = gpu100::grid_for(rows * h / w, kBlock);
  if (w > 1 && !(gpu100::is_aligned(b.x, 16) && gpu100::is_aligned(b.xb, 16)))
    throw std::invalid_argument("the vector kernels need 16-byte aligned buffers");
  if (v.kind == Kind::unfused) {
    silu_kernel<<<grid, kBlock, 0, s>>>(b.x, b.tmp, rows, h);
    LAUNCH_CHECK();
    gate_multiply_kernel<<<grid, kBlock, 0, s>>>(b.tmp, b.x, b.out, rows, h);
  } else if (v.forward) {
    if (v.bf16)
      launch_width(w, swiglu_forward<bf16, 1>, swiglu_forward<bf16, kVec<bf16>>, grid, s, b.xb,
                   b.outb, rows, h);
    else
      launch_width(w, swiglu_forward<float, 1>, swiglu_forward<float, kVec<float>>, grid, s, b.x,
                   b.out, rows, h);
  } else {
    if (v.bf16)
      launch_width(w, swiglu_backward<bf16, 1>, swiglu_backward<bf16, kVec<bf16>>, grid, s, b.xb,
                   b.doutb, b.dxb, rows, h);
    else
      launch_width(w, swiglu_backward<float, 1>, swiglu_backward<float, kVec<float>>, grid, s, b.x,
                   b.dout, b.dx, rows, h);
  }
  LAUNCH_CHECK();
}

// ---- analysis -----------------------------------------------------------------------------------
// The CPU backward against central differences of the CPU forward (a and b probed together),
// two rows of three, one a at the cancellation point of da.
gpu100::CheckResult finite_difference_check() {
  const std::vector<double> x = {0.8, -1.278, 2.5, 1.1, -0.6, 0.4, -3.0, 0.3, -0.9, 0.7, 1.9, -1.2};
  const std::vector<double> dout = {0.5, -1.3, 0.9, 1.2, -0.4, 0.6};
  auto forward = [](const std::vector<double>& z) { return swiglu_forward_cpu(z, 2, 3); };
  return gpu100::check_gradient(forward, x, dout, swiglu_backward_cpu(x, dout, 2, 3));
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "SwiGLU forward and backward: unfused chain vs fused, scalar and 16-byte "
      "vectors, fp32 and bf16");
  int64_t rows = 2048, hidden = 5632;
  cli.size("rows", rows, 37, "rows (tokens)", int64_t(1) << 30);
  cli.size("hidden", hidden, 1031, "H: the gated half-width (a row of the input has 2 H)",
           int64_t(1) << 30);
  cli.kernels_of(kVersions);
  cli.validate([&] {
    return rows * hidden >= (int64_t(1) << 30) ? std::string("--rows * --hidden must be below 2^30")
                                               : std::string();
  });
  // fp32: x and dx (2 H), out, tmp, dout (H each); bf16 copies: half of that.
  cli.device_bytes([&] { return 1.5 * 7.0 * double(rows) * double(hidden) * sizeof(float); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    report.baseline_as_percent();
    const int64_t h = hidden, n = rows * h;

    // a in [-6, 6] and b in [-2, 2]; every 499th a at -90 (exp(-a) overflows) or 30 (the
    // sigmoid rounds to 1), rare enough not to set the scale of the error norms; every 89th at
    // the cancellation point of da.
    auto x = gpu100::random_floats(size_t(2 * n), ctx.seed(), -2.0f, 2.0f);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < h; ++j) {
        float& a = x[size_t(r * 2 * h + j)];
        const int64_t i = r * h + j;
        a = i % 499 == 5 ? (i % 2 ? 30.0f : -90.0f) : i % 89 == 7 ? -1.2785f : 3.0f * a;
      }
    const auto dout = gpu100::random_floats(size_t(n), ctx.seed() + 1);
    std::vector<bf16> xb(x.size()), doutb(dout.size());
    for (size_t i = 0; i < x.size(); ++i) xb[i] = __float2bfloat16_rn(x[i]);
    for (size_t i = 0; i < dout.size(); ++i) doutb[i] = __float2bfloat16_rn(dout[i]);
    auto widen = [](const auto& v) {
      std::vector<double> d(v.size());
      for (size_t i = 0; i < v.size(); ++i) d[i] = double(float(v[i]));
      return d;
    };
    const auto xd = widen(x), doutd = widen(dout), xbd = widen(xb), doutbd = widen(doutb);
    const auto out_ref = swiglu_forward_cpu(xd, rows, h);
    const auto dx_ref = swiglu_backward_cpu(xd, doutd, rows, h);
    const auto out_ref16 = swiglu_forward_cpu(xbd, rows, h);
    const auto dx_ref16 = swiglu_backward_cpu(xbd, doutbd, rows, h);

    gpu100::DeviceBuffer<float> d_x(x), d_dout(dout), d_out{size_t(n)}, d_tmp{size_t(n)},
        d_dx{size_t(2 * n)};
    gpu100::DeviceBuffer<bf16> d_xb(xb), d_doutb(doutb), d_outb{size_t(n)}, d_dxb{size_t(2 * n)};
    const Buffers buf{d_x.data(),  d_dout.data(),  d_out.data(),  d_tmp.data(), d_dx.data(),
                      d_xb.data(), d_doutb.data(), d_outb.data(), d_dxb.data()};

    // The fp32 forward's least traffic, 3 n floats: a copy of 1.5 n floats reads and writes it.
    ctx.copy_baseline(size_t(1.5 * double(n) * sizeof(float)));

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      const double elem = v.bf16 ? 2.0 : 4.0;
      runs.push_back({.name = v.name,
                      .launch = [&](cudaStream_t s) { launch(v, buf, rows, h, s); },
                      .reset =
                          [&] {
                            for (auto* b : {&d_out, &d_dx}) b->poison();
                            for (auto* b : {&d_outb, &d_dxb}) b->poison();
                          },
                      .check =
                          [&] {
                            const auto f32 = gpu100::Tolerance::FP32(),
                                       b16 = gpu100::Tolerance::BF16();
                            if (v.forward)
                              return v.bf16 ? gpu100::compare(d_outb.download(), out_ref16, b16)
                                            : gpu100::compare(d_out.download(), out_ref, f32);
                            return v.bf16 ? gpu100::compare(d_dxb.download(), dx_ref16, b16)
                                          : gpu100::compare(d_dx.download(), dx_ref, f32);
                          },
                      // The least traffic of the operation (fused): forward a, b read and out
                      // written; backward a, b, dout read and da, db written. The unfused chain
                      // moves more for the same work, which is its lesson.
                      .work = (v.forward ? 3.0 : 5.0) * elem * double(n)});
    }
    ctx.measure_all(runs);

    report.add_check("reference gradient (finite differences)", finite_difference_check());
    std::string widths;
    for (const Version& v : kVersions)
      if (v.kind == Kind::vec)
        widths += fmt::format("{}{} {}", widths.empty() ? "" : ", ", v.name, width_of(v, h));
    report.note(
        fmt::format("elements per thread (1: H = {} is no multiple of the vector): {}", h, widths));
  });
}
