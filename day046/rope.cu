// Day 046 - rotary position embedding (RoPE), forward and backward, two layouts
//
// RoPE encodes a token's position p by rotating each pair of a head's coordinates by an angle
// p * w_j, with frequencies w_j = base^(-2j / d) for pair j of a head of d (even) dims. A dot
// product of two rotated vectors then depends on positions only through their difference. The
// rotation is element-wise work on pairs: read x, read (cos, sin), write y, so it is
// memory-bound. The backward is the transposed rotation: the same kernel with sin negated.
//
// Two layouts pair the coordinates differently, and models disagree on which they use:
//   interleaved  pair j is (2j, 2j + 1) (GPT-J, the original paper): one 8-byte load per pair.
//   half-split   pair j is (j, j + d/2) (GPT-NeoX, Llama in Hugging Face): two 4-byte loads d/2
//                apart, each coalesced across the warp's lanes.
// Mixing them up gives plausible-looking wrong outputs, so both are checked against the CPU.
//
// Versions (x, y: tokens x heads x dim fp32; one thread per pair)
//   forward_interleaved, forward_half      cos and sin read from a table [tokens][dim/2] of
//                                          float2, computed on the host in double.
//   forward_half_recompute                 the angle computed in the kernel as fp32 p * w_j, then
//                                          sincosf: no table traffic, but an fp32 angle.
//   backward_interleaved, backward_half    dx from dy, the table's rotation transposed.
//
// Check: table versions against the CPU in double with the exact angles (fp32 tolerance: the
// table entries are rounded once). The recompute version against the CPU rotating by the same fp32
// angle in double: what it loses is the fp32 angle, which the report measures separately (its
// worst error at the longest position). The CPU backward of both layouts against central finite
// differences of the CPU forward. An odd --dim is refused (exit 2).
//
// Run:  build/bin/day046 [--tokens 4096] [--heads 32] [--dim 128] [--base 10000]
#include <fmt/core.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

struct Shape {
  int64_t tokens, heads, dim;
  int64_t half() const { return dim / 2; }
  int64_t pairs() const { return tokens * heads * half(); }
  int64_t n() const { return tokens * heads * dim; }
};

enum class Layout { interleaved, half };

// The two coordinates of pair j of the head starting at `base`.
__host__ __device__ inline int64_t first_of(Layout l, int64_t base, int64_t j, int64_t half) {
  return l == Layout::interleaved ? base + 2 * j : base + j;
}
__host__ __device__ inline int64_t second_of(Layout l, int64_t base, int64_t j, int64_t half) {
  return l == Layout::interleaved ? base + 2 * j + 1 : base + j + half;
}

// ---- CPU reference ------------------------------------------------------------------------------
// angle(t, j) for every token and pair, in double; `fp32` gives the kernel's float(t) * float(w_j).
std::vector<double> angles(const Shape& s, double base, bool fp32) {
  std::vector<double> a(size_t(s.tokens * s.half()));
  for (int64_t t = 0; t < s.tokens; ++t)
    for (int64_t j = 0; j < s.half(); ++j) {
      const double w = std::pow(base, -2.0 * double(j) / double(s.dim));
      a[size_t(t * s.half() + j)] = fp32 ? double(float(t) * float(w)) : double(t) * w;
    }
  return a;
}

// Rotates every pair by its angle (sign -1: the transposed rotation, the backward).
std::vector<double> rotate_cpu(const std::vector<double>& x, const Shape& s, Layout l,
                               const std::vector<double>& angle, double sign) {
  std::vector<double> y(x.size());
  for (int64_t th = 0; th < s.tokens * s.heads; ++th) {
    const int64_t t = th / s.heads, base = th * s.dim;
    for (int64_t j = 0; j < s.half(); ++j) {
      const double c = std::cos(angle[size_t(t * s.half() + j)]);
      const double sn = sign * std::sin(angle[size_t(t * s.half() + j)]);
      const size_t a = size_t(first_of(l, base, j, s.half())),
                   b = size_t(second_of(l, base, j, s.half()));
      y[a] = x[a] * c - x[b] * sn;
      y[b] = x[a] * sn + x[b] * c;
    }
  }
  return y;
}

// ---- kernels ------------------------------------------------------------------------------------
// Sign = -1 rotates backwards: dx = R^T dy.
template <Layout L, int Sign>
__global__ void rope_table(const float* __restrict__ in, float* __restrict__ out,
                           const float2* __restrict__ cos_sin, int64_t pairs, int64_t heads,
                           int64_t half) {
  const int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= pairs) return;
  const int64_t j = p % half, th = p / half, t = th / heads, base = th * 2 * half;
  const float2 cs = cos_sin[t * half + j];
  const float c = cs.x, sn = Sign * cs.y;
  if constexpr (L == Layout::interleaved) {
    const float2 v = reinterpret_cast<const float2*>(in)[base / 2 + j];
    reinterpret_cast<float2*>(out)[base / 2 + j] =
        make_float2(v.x * c - v.y * sn, v.x * sn + v.y * c);
  } else {
    const float a = in[base + j], b = in[base + j + half];
    out[base + j] = a * c - b * sn;
    out[base + j + half] = a * sn + b * c;
  }
}

// The angle in fp32 from the per-pair frequency table: one rounded multiply, then sincosf (full
// range reduction, a few ulps, not the fast __sinf).
__global__ void rope_half_recompute(const float* __restrict__ in, float* __restrict__ out,
                                    const float* __restrict__ inv_freq, int64_t pairs,
                                    int64_t heads, int64_t half) {
  const int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= pairs) return;
  const int64_t j = p % half, th = p / half, t = th / heads, base = th * 2 * half;
  float sn, c;
  sincosf(__fmul_rn(float(t), inv_freq[j]), &sn, &c);
  const float a = in[base + j], b = in[base + j + half];
  out[base + j] = a * c - b * sn;
  out[base + j + half] = a * sn + b * c;
}

// ---- launchers ----------------------------------------------------------------------------------
constexpr int kBlock = 256;

enum class Kind { table, recompute };
struct Version {
  const char* name;
  Layout layout;
  Kind kind;
  int sign;  // +1 forward, -1 backward
};
const Version kVersions[] = {
    {"forward_interleaved", Layout::interleaved, Kind::table, +1},
    {"forward_half", Layout::half, Kind::table, +1},
    {"forward_half_recompute", Layout::half, Kind::recompute, +1},
    {"backward_interleaved", Layout::interleaved, Kind::table, -1},
    {"backward_half", Layout::half, Kind::table, -1},
};

void launch(const Version& v, const float* in, float* out, const float2* cos_sin,
            const float* inv_freq, const Shape& s, cudaStream_t st) {
  const unsigned grid = gpu100::grid_for(s.pairs(), kBlock);
  const int64_t P = s.pairs(), H = s.heads, h = s.half();
  if (v.kind == Kind::recompute) {
    rope_half_recompute<<<grid, kBlock, 0, st>>>(in, out, inv_freq, P, H, h);
  } else if (v.layout == Layout::interleaved) {
    if (v.sign > 0)
      rope_table<Layout::interleaved, 1><<<grid, kBlock, 0, st>>>(in, out, cos_sin, P, H, h);
    else
      rope_table<Layout::interleaved, -1><<<grid, kBlock, 0, st>>>(in, out, cos_sin, P, H, h);
  } else {
    if (v.sign > 0)
      rope_table<Layout::half, 1><<<grid, kBlock, 0, st>>>(in, out, cos_sin, P, H, h);
    else
      rope_table<Layout::half, -1><<<grid, kBlock, 0, st>>>(in, out, cos_sin, P, H, h);
  }
  LAUNCH_CHECK();
}

// ---- analysis -----------------------------------------------------------------------------------
// Both layouts' CPU backward (the transposed rotation) against finite differences of the forward,
// on 3 tokens of 2 heads of 6 dims.
gpu100::CheckResult check_reference_gradients(double base) {
  const Shape s{3, 2, 6};
  const auto a = angles(s, base, false);
  const auto xf = gpu100::random_floats(size_t(s.n()), 11),
             dyf = gpu100::random_floats(size_t(s.n()), 12);
  const std::vector<double> x(xf.begin(), xf.end()), dy(dyf.begin(), dyf.end());
  gpu100::CheckResult all;
  bool first = true;
  for (Layout l : {Layout::interleaved, Layout::half}) {
    auto forward = [&](const std::vector<double>& v) { return rotate_cpu(v, s, l, a, 1.0); };
    const auto c = gpu100::check_gradient(forward, x, dy, rotate_cpu(dy, s, l, a, -1.0));
    all = first ? c : gpu100::combine(all, c);
    first = false;
  }
  return all;
}

// How far the fp32 angle float(t) * float(w_j) is from the exact t * w_j, at worst.
double worst_fp32_angle_error(const Shape& s, double base) {
  const auto exact = angles(s, base, false), fp32 = angles(s, base, true);
  double worst = 0;
  for (size_t i = 0; i < exact.size(); ++i) worst = std::max(worst, std::fabs(exact[i] - fp32[i]));
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "Rotary position embedding: interleaved and half-split layouts, forward and backward");
  int64_t tokens = 4096, heads = 32, dim = 128;
  double base = 10000.0;
  cli.size("tokens", tokens, 37, "tokens (positions 0 .. tokens-1)");
  cli.size("heads", heads, 3, "heads per token");
  cli.size("dim", dim, 70, "dims per head (even)");
  cli.option("base", base, "frequency base", 2.0, 1e9);
  cli.validate([&]() -> std::string {
    if (dim % 2 != 0)
      return fmt::format("--dim must be even (coordinates rotate in pairs), got {}", dim);
    if (tokens > (int64_t(1) << 24))
      return fmt::format("--tokens must be at most 2^24 (positions exact in fp32), got {}", tokens);
    return "";
  });
  cli.kernels_of(kVersions);
  cli.device_bytes([&] {
    return 2.0 * double(tokens) * double(heads) * double(dim) * 4 +
           4.0 * double(tokens) * double(dim);
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    const Shape s{tokens, heads, dim};

    const auto xf = gpu100::random_floats(size_t(s.n()), ctx.seed());
    const auto dyf = gpu100::random_floats(size_t(s.n()), ctx.seed() + 1);
    const std::vector<double> x(xf.begin(), xf.end()), dy(dyf.begin(), dyf.end());
    const auto exact = angles(s, base, false), fp32 = angles(s, base, true);

    std::vector<float2> cos_sin(exact.size());
    for (size_t i = 0; i < exact.size(); ++i)
      cos_sin[i] = make_float2(float(std::cos(exact[i])), float(std::sin(exact[i])));
    std::vector<float> inv_freq(size_t(s.half()));
    for (int64_t j = 0; j < s.half(); ++j)
      inv_freq[size_t(j)] = float(std::pow(base, -2.0 * double(j) / double(dim)));

    report.add_check("reference gradient (finite differences)", check_reference_gradients(base));

    gpu100::DeviceBuffer<float> d_x(xf), d_dy(dyf), d_out{size_t(s.n())}, d_freq(inv_freq);
    gpu100::DeviceBuffer<float2> d_cs(cos_sin);
    ctx.copy_baseline(size_t(s.n()) * sizeof(float));  // x in, y out: 8 bytes per element

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      const bool fwd = v.sign > 0;
      // Each reference is computed only when its version is selected (they take a while at full
      // size).
      runs.push_back(
          {.name = v.name,
           .launch =
               [&, fwd](cudaStream_t st) {
                 launch(v, fwd ? d_x.data() : d_dy.data(), d_out.data(), d_cs.data(), d_freq.data(),
                        s, st);
               },
           .reset = [&] { d_out.poison(); },
           .check =
               [&, fwd] {
                 const auto ref = rotate_cpu(fwd ? x : dy, s, v.layout,
                                             v.kind == Kind::recompute ? fp32 : exact, v.sign);
                 return gpu100::compare(d_out.download(), ref, gpu100::Tolerance::FP32());
               },
           .work = 8.0 * double(s.n()) +
                   (v.kind == Kind::table ? 8.0 * double(tokens * s.half()) : 0.0)});
    }
    ctx.measure_all(runs);
    report.note(fmt::format(
        "fp32 angle float(t) * float(w_j) vs the exact t * w_j: worst {:.3g} rad "
        "(at tokens = {}); forward_half_recompute carries it, the table versions do not",
        worst_fp32_angle_error(s, base), tokens));
  });
}
