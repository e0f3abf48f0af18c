// Day 044 - fused bias + dropout mask + scale + residual add in fp16: out = (x + bias) * m * s + r
//
// The tail of a transformer sublayer: add the bias of the projection, apply a dropout mask scaled
// by s = 1 / (1 - p), add the residual stream. Written as framework ops it is three element-wise
// kernels, each reading its inputs from DRAM and writing an fp16 intermediate that the next one
// reads back. Every byte of those intermediates is traffic a fused kernel never makes: here 15
// bytes per element against 7 (x, mask, residual in; out out), and each unfused step also rounds
// to fp16 once more. Nothing to compute changes; only the memory traffic (and so the time of a
// memory-bound kernel) and the number of roundings.
//
// Versions (x, r, out: rows x cols fp16; bias: cols fp16; mask: rows x cols bytes)
//   unfused     three kernels, as a framework runs them: t = x + bias; u = t * m * s; out = u + r,
//               each computing in fp32 and rounding its result to fp16.
//   fused       one kernel, one thread per element, fp32 math, one rounding to fp16 at the end.
//   fused_vec8  one thread per eight elements: 16-byte loads of x and r, an 8-byte load of the
//               mask, a 16-byte store; the n % 8 tail in scalar code.
//
// Check: every version against the CPU in double on the fp16 inputs, with the fp16 tolerance; the
// fused versions also element by element within half an fp16 ulp plus their fp32 steps (they
// round once), and the report gives each version's worst error in fp16 units in the last place
// (the unfused chain rounds three times). The unfused chain is also checked bit for bit against a
// CPU model of the same three roundings.
// Bytes saved and the speedup of each fused version over the unfused chain are in a table
// (speedups only from a GPU run: emulated times are not speed).
//
// Run:  build/bin/day044 [--rows 16384] [--cols 4099] [--p 0.1] [--kernel fused_vec8]
#include <cuda_fp16.h>
#include <fmt/core.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

struct Problem {
  int64_t rows, cols;
  float scale;
  int64_t n() const { return rows * cols; }
};

// ---- CPU reference ------------------------------------------------------------------------------
struct Inputs {
  std::vector<__half> x, bias, r;
  std::vector<uint8_t> mask;
};

std::vector<double> fused_cpu(const Inputs& in, const Problem& p) {
  std::vector<double> out(size_t(p.n()));
  for (int64_t i = 0; i < p.n(); ++i) {
    const double t =
        double(__half2float(in.x[size_t(i)])) + double(__half2float(in.bias[size_t(i % p.cols)]));
    out[size_t(i)] =
        (in.mask[size_t(i)] ? t * double(p.scale) : 0.0) + double(__half2float(in.r[size_t(i)]));
  }
  return out;
}

// The unfused chain's own arithmetic: each step one fp32 operation on fp16 values, rounded to fp16.
// A single fp32 add or multiply of two values is correctly rounded on any IEEE machine, so this is
// exactly what the three kernels compute.
std::vector<__half> unfused_cpu(const Inputs& in, const Problem& p) {
  std::vector<__half> out(size_t(p.n()));
  for (int64_t i = 0; i < p.n(); ++i) {
    const __half t =
        __float2half_rn(__half2float(in.x[size_t(i)]) + __half2float(in.bias[size_t(i % p.cols)]));
    const __half u = __float2half_rn(__half2float(t) * (in.mask[size_t(i)] ? p.scale : 0.0f));
    out[size_t(i)] = __float2half_rn(__half2float(u) + __half2float(in.r[size_t(i)]));
  }
  return out;
}

// What a fused kernel may be off by, per element: its fp32 steps ((x + b), * s, + r: at most
// three roundings, u = 2^-24 each, relative to the terms, which can cancel) and then one rounding
// to fp16, at most half the fp16 spacing of the binade the fp32 value lies in (2^(e - 10), or the
// subnormal 2^-24 below 2^-14). A second fp16 rounding, as in the unfused chain, exceeds it.
std::vector<double> fused_bound(const Inputs& in, const Problem& p,
                                const std::vector<double>& ref) {
  std::vector<double> bound(ref.size());
  for (int64_t i = 0; i < p.n(); ++i) {
    const double x = std::fabs(double(__half2float(in.x[size_t(i)])));
    const double b = std::fabs(double(__half2float(in.bias[size_t(i % p.cols)])));
    const double r = std::fabs(double(__half2float(in.r[size_t(i)])));
    const double terms = (x + b) * double(p.scale) * (1 + 0x1p-23) + r;
    const double fp32 = 3 * 0x1p-24 * (1 + 0x1p-20) * terms;
    const double v = std::fabs(ref[size_t(i)]) + fp32;
    const double spacing = v < 0x1p-14 ? 0x1p-24 : std::ldexp(1.0, std::ilogb(v) - 10);
    bound[size_t(i)] = fp32 + 0.5 * spacing;
  }
  return bound;
}

// ---- kernels ------------------------------------------------------------------------------------
// Rows go over the grid's y (striding when there are more than the grid has), columns over x: the
// column is the thread's own, so bias needs no division.
__global__ void bias_add(const __half* __restrict__ x, const __half* __restrict__ bias,
                         __half* __restrict__ t, int64_t rows, int64_t cols) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const int64_t i = row * cols + c;
    t[i] = __float2half_rn(__half2float(x[i]) + __half2float(bias[c]));
  }
}

__global__ void mask_scale(const __half* __restrict__ t, const uint8_t* __restrict__ mask,
                           __half* __restrict__ u, int64_t n, float scale) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) u[i] = __float2half_rn(__half2float(t[i]) * (mask[i] ? scale : 0.0f));
}

__global__ void residual_add(const __half* __restrict__ u, const __half* __restrict__ r,
                             __half* __restrict__ out, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2half_rn(__half2float(u[i]) + __half2float(r[i]));
}

__device__ __forceinline__ float bias_mask_scale_add(float x, float b, uint8_t m, float s,
                                                     float r) {
  return m ? (x + b) * s + r : r;
}

__global__ void fused_scalar(const __half* __restrict__ x, const __half* __restrict__ bias,
                             const uint8_t* __restrict__ mask, const __half* __restrict__ r,
                             __half* __restrict__ out, int64_t rows, int64_t cols, float scale) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  const float b = __half2float(bias[c]);
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const int64_t i = row * cols + c;
    out[i] = __float2half_rn(
        bias_mask_scale_add(__half2float(x[i]), b, mask[i], scale, __half2float(r[i])));
  }
}

// Flat over the rows x cols elements in groups of eight, so a row length that is no multiple of 8
// still gets full vectors; the bias column of each element steps from the group's first.
__global__ void fused_vec8(const __half* __restrict__ x, const __half* __restrict__ bias,
                           const uint8_t* __restrict__ mask, const __half* __restrict__ r,
                           __half* __restrict__ out, int64_t n, int64_t cols, float scale) {
  const int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t full = n / 8;
  if (g < full) {
    const uint4 xv = reinterpret_cast<const uint4*>(x)[g];
    const uint4 rv = reinterpret_cast<const uint4*>(r)[g];
    const uint2 mv = reinterpret_cast<const uint2*>(mask)[g];
    const __half* xh = reinterpret_cast<const __half*>(&xv);
    const __half* rh = reinterpret_cast<const __half*>(&rv);
    const uint8_t* mb = reinterpret_cast<const uint8_t*>(&mv);
    uint4 ov;
    __half* oh = reinterpret_cast<__half*>(&ov);
    int64_t c = (8 * g) % cols;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      oh[k] = __float2half_rn(bias_mask_scale_add(__half2float(xh[k]), __half2float(bias[c]), mb[k],
                                                  scale, __half2float(rh[k])));
      if (++c == cols) c = 0;
    }
    reinterpret_cast<uint4*>(out)[g] = ov;
  } else if (g == full) {  // the last n % 8 elements
    for (int64_t i = 8 * full; i < n; ++i)
      out[i] = __float2half_rn(bias_mask_scale_add(__half2float(x[i]), __half2float(bias[i % cols]),
                                                   mask[i], scale, __half2float(r[i])));
  }
}

// ---- launchers ----------------------------------------------------------------------------------
constexpr int kBlock = 256;
constexpr unsigned kMaxGridY = 65535;

struct Buffers {
  const __half *x, *bias, *r;
  const uint8_t* mask;
  __half *t, *u, *out;  // t, u: the unfused chain's intermediates
};

enum class Kind { unfused, fused, fused_vec8 };
struct Version {
  const char* name;
  Kind kind;
  double bytes_per_element;  // DRAM traffic: every array read or written once (bias aside)
};
const Version kVersions[] = {
    {"unfused", Kind::unfused, 2 + 2 + (2 + 1 + 2) + (2 + 2 + 2)},
    {"fused", Kind::fused, 2 + 1 + 2 + 2},
    {"fused_vec8", Kind::fused_vec8, 2 + 1 + 2 + 2},
};

dim3 rows_grid(const Problem& p) {
  return dim3(gpu100::grid_for(p.cols, kBlock), unsigned(std::min<int64_t>(p.rows, kMaxGridY)));
}

void launch(const Version& v, const Buffers& b, const Problem& p, cudaStream_t s) {
  const int64_t n = p.n();
  switch (v.kind) {
    case Kind::unfused:
      bias_add<<<rows_grid(p), kBlock, 0, s>>>(b.x, b.bias, b.t, p.rows, p.cols);
      LAUNCH_CHECK();
      mask_scale<<<gpu100::grid_for(n, kBlock), kBlock, 0, s>>>(b.t, b.mask, b.u, n, p.scale);
      LAUNCH_CHECK();
      residual_add<<<gpu100::grid_for(n, kBlock), kBlock, 0, s>>>(b.u, b.r, b.out, n);
      break;
    case Kind::fused:
      fused_scalar<<<rows_grid(p), kBlock, 0, s>>>(b.x, b.bias, b.mask, b.r, b.out, p.rows, p.cols,
                                                   p.scale);
      break;
    case Kind::fused_vec8:
      fused_vec8<<<gpu100::grid_for(n / 8 + 1, kBlock), kBlock, 0, s>>>(b.x, b.bias, b.mask, b.r,
                                                                        b.out, n, p.cols, p.scale);
      break;
  }
  LAUNCH_CHECK();
}

// ---- analysis -----------------------------------------------------------------------------------
std::vector<__half> to_half(const std::vector<float>& v) {
  std::vector<__half> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) h[i] = __float2half_rn(v[i]);
  return h;
}

std::vector<uint16_t> bits(const std::vector<__half>& h) {
  std::vector<uint16_t> b(h.size());
  for (size_t i = 0; i < h.size(); ++i) b[i] = __half_as_ushort(h[i]);
  return b;
}

// The worst error in units of the fp16 spacing at the reference value (2^(e - 10) for |ref| in
// [2^e, 2^(e+1)), the subnormal spacing 2^-24 below 2^-14).
double worst_ulps(const std::vector<__half>& got, const std::vector<double>& ref) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double a = std::fabs(ref[i]);
    const double ulp = a < 0x1p-14 ? 0x1p-24 : std::ldexp(1.0, std::ilogb(a) - 10);
    worst = std::max(worst, std::fabs(double(__half2float(got[i])) - ref[i]) / ulp);
  }
  return worst;
}

gpu100::Table traffic_table(const std::vector<gpu100::Measured>& results, bool emulated,
                            int64_t n) {
  gpu100::Table t;
  t.title = "traffic and speedup over the unfused chain";
  t.columns = {"version", "bytes/element", "bytes moved", "saved vs unfused", "speedup (GPU time)"};
  const double unfused_ms = results[0].ran ? results[0].time.median_ms : 0;
  for (size_t k = 0; k < std::size(kVersions); ++k) {
    const auto& v = kVersions[k];
    const double saved = 1.0 - v.bytes_per_element / kVersions[0].bytes_per_element;
    std::string speedup = "-";
    if (emulated)
      speedup = "emulated: not a speed";
    else if (results[k].ran && unfused_ms > 0)
      speedup = fmt::format("{:.2f}x", unfused_ms / results[k].time.median_ms);
    t.add_row({v.name, fmt::format("{:g}", v.bytes_per_element),
               fmt::format("{:.3g} MB", v.bytes_per_element * double(n) / 1e6),
               fmt::format("{:.0f}%", 100 * saved), speedup});
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "fp16 bias + dropout mask + scale + residual add: the unfused chain vs fused kernels");
  int64_t rows = 16384, cols = 4099;
  double p = 0.1;
  cli.size("rows", rows, 37, "rows (tokens)");
  cli.size("cols", cols, 1027, "columns (hidden size)");
  cli.option("p", p, "dropout probability the mask was drawn with (scale = 1 / (1 - p))", 0.0,
             0.999);
  cli.kernels_of(kVersions);
  cli.device_bytes([&] { return double(rows) * double(cols) * (5 * 2 + 1) + 2.0 * double(cols); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    const Problem prob{rows, cols, float(1.0 / (1.0 - p))};
    const int64_t n = prob.n();

    Inputs in;
    in.x = to_half(gpu100::random_floats(size_t(n), ctx.seed()));
    in.bias = to_half(gpu100::random_floats(size_t(cols), ctx.seed() + 1));
    in.r = to_half(gpu100::random_floats(size_t(n), ctx.seed() + 2, -4.0f, 4.0f));
    const auto bytes = gpu100::random_bytes(size_t(n), ctx.seed() + 3);
    const unsigned threshold = unsigned(std::lround(p * 256.0));
    in.mask.resize(size_t(n));
    for (size_t i = 0; i < bytes.size(); ++i) in.mask[i] = bytes[i] >= threshold;
    const auto ref = fused_cpu(in, prob);
    const auto unfused_ref = unfused_cpu(in, prob);
    const auto bound = fused_bound(in, prob, ref);

    gpu100::DeviceBuffer<__half> d_x(in.x), d_bias(in.bias), d_r(in.r);
    gpu100::DeviceBuffer<uint8_t> d_mask(in.mask);
    gpu100::DeviceBuffer<__half> d_t{size_t(n)}, d_u{size_t(n)}, d_out{size_t(n)};
    const Buffers b{d_x.data(), d_bias.data(), d_r.data(),  d_mask.data(),
                    d_t.data(), d_u.data(),    d_out.data()};
    // The fused kernels' traffic, 7 bytes per element, as a copy of 3.5 bytes per element.
    ctx.copy_baseline(size_t(3.5 * double(n)));

    std::vector<double> ulps(std::size(kVersions), 0.0);
    std::vector<gpu100::Measure> runs;
    for (size_t k = 0; k < std::size(kVersions); ++k) {
      const Version& v = kVersions[k];
      runs.push_back(
          {.name = v.name,
           .launch = [&](cudaStream_t s) { launch(v, b, prob, s); },
           .reset =
               [&] {
                 d_out.poison();
                 d_t.poison();
                 d_u.poison();
               },
           .check =
               [&, k] {
                 const auto got = d_out.download();
                 ulps[k] = worst_ulps(got, ref);
                 auto c = gpu100::compare(got, ref, gpu100::Tolerance::FP16());
                 if (v.kind == Kind::unfused)
                   c = gpu100::combine(c, gpu100::compare_exact(bits(got), bits(unfused_ref)));
                 else
                   c = gpu100::combine(c, gpu100::compare_within(got, ref, bound,
                                                                 "fp32 steps + one fp16 rounding"));
                 return c;
               },
           .work = v.bytes_per_element * double(n)});
    }
    const auto results = ctx.measure_all(runs);

    report.table(traffic_table(results, ctx.device().emulated, n));
    std::string worst;
    for (size_t k = 0; k < std::size(kVersions); ++k)
      if (results[k].ran) worst += fmt::format(" {} {:.2f},", kVersions[k].name, ulps[k]);
    if (!worst.empty()) worst.pop_back();
    report.note("worst error in fp16 ulps of the exact result:" + worst);
  });
}
