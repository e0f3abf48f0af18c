// Day 061 - int8 quantization: per-tensor symmetric (int8 and a scale) and asymmetric (uint8, a
// scale and a zero point), quantize and dequantize
//
// Quantizing stores each fp32 value as one byte: q = round(x / scale), saturated to the type's
// range. One scale for the whole tensor comes from its range, so the day is two passes over x: a
// reduction (the largest value and the largest negated value, clamped at 0; one reduction serves
// both schemes) and the elementwise quantize. Symmetric: scale = absmax / 127, codes -127..127,
// 0.0 is code 0. Asymmetric: the range [min(x, 0), max(x, 0)] is spread over 0..255; the zero
// point is the code of 0.0, so zeros (padding, ReLU outputs) stay exact. The rounding is the
// hardware's cvt.rni: to nearest, ties to even (2.5 -> 2, 3.5 -> 4), not the ties-away of C's
// round(); one instruction both rounds and saturates.
//
// What the day does with values that are not finite: the reduction skips them (one inf would make
// the scale inf and every other code 0). Then +inf saturates to the top code and -inf to the
// bottom one (-128 in symmetric: the type's range, one code below -127), and NaN becomes the code
// of 0.0 (cvt's rule: NaN converts to integer 0). A tensor without a finite nonzero value has
// scale 0, and every code is the code of 0.0: the reciprocal of the scale is taken as 0 instead of
// dividing by zero.
//
// Versions
//   quant_{sym,asym}_naive   range pass, then one element per thread: a 4-byte load, a 1-byte
//                            store (cvt.rni.s8.f32 for symmetric: round and saturate at once).
//   quant_{sym,asym}_vec4    both passes read float4; four codes rounded to s32 and packed with
//                            saturation by two cvt.pack.sat.{s8,u8}.s32.b32 into one 32-bit store.
//   dequant_{sym,asym}_vec4  q * scale or (q - zero_point) * scale: 4 codes in one 32-bit load,
//                            one float4 store.
//   The quantize versions read x twice (5 + 4 bytes per element); dequantize moves 5.
//
// Check: bit-exact against a CPU model in fp32 with round-half-even (std::nearbyint) and explicit
// saturation, the scale, its reciprocal and the zero point included. The inputs hold an outlier,
// +-inf, NaN, -0.0 and values placed on exact .5 ties of each scheme (half-away would fail them).
//
// Run:  build/bin/day061 [--n 16777217] [--input random|zeros] [--kernel quant_sym_vec4]
#include <fmt/core.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kBlock = 256;
enum class Scheme { symmetric, asymmetric };

// max(0, max x) and max(0, max -x) over the finite elements.
struct Range {
  float pos = 0, neg = 0;
};
struct QParams {
  float scale = 0, inv_scale = 0;  // x ~ (q - zero_point) * scale
  int32_t zero_point = 0;
};

// ---- CPU reference ------------------------------------------------------------------------------
Range range_cpu(const std::vector<float>& x) {
  Range r;
  for (float v : x)
    if (std::isfinite(v)) r.pos = std::max(r.pos, v), r.neg = std::max(r.neg, -v);
  return r;
}

// std::nearbyint rounds in the current mode: to nearest, ties to even (the C default).
QParams params_cpu(Scheme s, Range r) {
  QParams p;
  if (s == Scheme::symmetric) {
    const float absmax = std::max(r.pos, r.neg);
    p.scale = absmax / 127.0f;
    p.inv_scale = absmax > 0 ? 127.0f / absmax : 0.0f;
  } else {
    const float span = r.pos + r.neg;
    p.scale = span / 255.0f;
    p.inv_scale = span > 0 ? 255.0f / span : 0.0f;
    p.zero_point = int32_t(std::min(255.0f, std::nearbyint(r.neg * p.inv_scale)));
  }
  return p;
}

// round(x * inv_scale) + zero_point, saturated to the code range; NaN is the code of 0.0.
int32_t quantize_cpu(Scheme s, float x, const QParams& p) {
  const float y = x * p.inv_scale;
  const double r = std::isnan(y) ? 0.0 : std::nearbyint(double(y));
  const double lo = s == Scheme::symmetric ? -128 : 0, hi = s == Scheme::symmetric ? 127 : 255;
  return int32_t(std::clamp(r + p.zero_point, lo, hi));
}

float dequantize_cpu(int32_t q, const QParams& p) {
  return float(q - p.zero_point) * p.scale;
}

// ---- kernels: the range (both schemes) ----------------------------------------------------------
__device__ __forceinline__ void take(float v, float& pos, float& neg) {
  if (fabsf(v) <= FLT_MAX) pos = fmaxf(pos, v), neg = fmaxf(neg, -v);  // false for inf and NaN
}

// Block reduction, then one atomicMax per block and value. Both values are >= 0, and non-negative
// floats order like their bit patterns as unsigned integers, so an integer atomicMax is a float
// max. The output starts at 0 (a memset before the launch).
template <int VEC>
__global__ void range_kernel(const float* __restrict__ x, int64_t n, Range* __restrict__ out) {
  float pos = 0, neg = 0;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if constexpr (VEC == 4) {
    const float4* x4 = reinterpret_cast<const float4*>(x);
    for (int64_t i = tid; i < n / 4; i += stride) {
      const float4 v = x4[i];
      take(v.x, pos, neg), take(v.y, pos, neg), take(v.z, pos, neg), take(v.w, pos, neg);
    }
    for (int64_t i = n / 4 * 4 + tid; i < n; i += stride) take(x[i], pos, neg);
  } else {
    for (int64_t i = tid; i < n; i += stride) take(x[i], pos, neg);
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    pos = fmaxf(pos, __shfl_xor_sync(0xffffffffu, pos, offset));
    neg = fmaxf(neg, __shfl_xor_sync(0xffffffffu, neg, offset));
  }
  __shared__ float warp_pos[kBlock / 32], warp_neg[kBlock / 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) warp_pos[warp] = pos, warp_neg[warp] = neg;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kBlock / 32; ++w)
      pos = fmaxf(pos, warp_pos[w]), neg = fmaxf(neg, warp_neg[w]);
    // fmaxf(+0, -0) may be -0, whose sign bit would win the integer max: adding +0 makes it +0.
    atomicMax(reinterpret_cast<unsigned*>(&out->pos), __float_as_uint(pos + 0.0f));
    atomicMax(reinterpret_cast<unsigned*>(&out->neg), __float_as_uint(neg + 0.0f));
  }
}

// One thread: the same fp32 operations as params_cpu (the zero point is in range: no saturation
// needed, so the C++ intrinsic for cvt.rni.s32.f32 is enough).
template <Scheme S>
__global__ void params_kernel(const Range* __restrict__ range, QParams* __restrict__ p) {
  const Range r = *range;
  QParams q;
  if constexpr (S == Scheme::symmetric) {
    const float absmax = fmaxf(r.pos, r.neg);
    q.scale = absmax / 127.0f;
    q.inv_scale = absmax > 0 ? 127.0f / absmax : 0.0f;
  } else {
    const float span = r.pos + r.neg;
    q.scale = span / 255.0f;
    q.inv_scale = span > 0 ? 255.0f / span : 0.0f;
    q.zero_point = min(255, __float2int_rn(r.neg * q.inv_scale));
  }
  *p = q;
}

// ---- kernels: quantize --------------------------------------------------------------------------
// Symmetric, one element: round to nearest even and saturate to -128..127 in one instruction
// (NaN gives 0). C++ has no intrinsic for it, hence the inline PTX.
__device__ __forceinline__ int8_t quantize_sym(float x, float inv_scale) {
  short q;
  asm("cvt.rni.s8.f32 %0, %1;" : "=h"(q) : "f"(x * inv_scale));
  return int8_t(q);
}

// cvt.rni.s32.f32 as the PTX ISA defines it: NaN gives 0, and values past the s32 range (+-inf)
// saturate. (The C++ intrinsic __float2int_rn leaves out-of-range inputs undefined.)
__device__ __forceinline__ int32_t round_s32(float y) {
  int32_t r;
  asm("cvt.rni.s32.f32 %0, %1;" : "=r"(r) : "f"(y));
  return r;
}

// Kept within +-255 so that adding the zero point cannot overflow; the caller saturates to 0..255.
__device__ __forceinline__ int32_t shifted_code(float x, const QParams& p) {
  return min(max(round_s32(x * p.inv_scale), -255), 255) + p.zero_point;
}

template <Scheme S>
__device__ __forceinline__ uint8_t quantize_one(float x, const QParams& p) {
  if constexpr (S == Scheme::symmetric)
    return uint8_t(quantize_sym(x, p.inv_scale));
  else
    return uint8_t(min(max(shifted_code(x, p), 0), 255));
}

// The codes are bytes in both schemes (int8 or uint8); q points at them as uint8_t.
template <Scheme S>
__global__ void quantize_naive(const float* __restrict__ x, const QParams* __restrict__ params,
                               uint8_t* __restrict__ q, int64_t n) {
  const QParams p = *params;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    q[i] = quantize_one<S>(x[i], p);
}

// cvt.pack.sat.{s8,u8}.s32.b32 d, a, b, c = (c << 16) | (sat(a) << 8) | sat(b): two of them pack
// four saturated codes, element 0 in the lowest byte (little-endian: the first in memory).
template <Scheme S>
__device__ __forceinline__ uint32_t pack4(int32_t c0, int32_t c1, int32_t c2, int32_t c3) {
  uint32_t high, word;
  if constexpr (S == Scheme::symmetric) {
    asm("cvt.pack.sat.s8.s32.b32 %0, %1, %2, 0;" : "=r"(high) : "r"(c3), "r"(c2));
    asm("cvt.pack.sat.s8.s32.b32 %0, %1, %2, %3;" : "=r"(word) : "r"(c1), "r"(c0), "r"(high));
  } else {
    asm("cvt.pack.sat.u8.s32.b32 %0, %1, %2, 0;" : "=r"(high) : "r"(c3), "r"(c2));
    asm("cvt.pack.sat.u8.s32.b32 %0, %1, %2, %3;" : "=r"(word) : "r"(c1), "r"(c0), "r"(high));
  }
  return word;
}

template <Scheme S>
__device__ __forceinline__ int32_t unsaturated_code(float x, const QParams& p) {
  if constexpr (S == Scheme::symmetric)
    return round_s32(x * p.inv_scale);
  else
    return shifted_code(x, p);
}

// Four elements per thread (cudaMalloc'd buffers are aligned for float4), then a scalar tail.
template <Scheme S>
__global__ void quantize_vec4(const float* __restrict__ x, const QParams* __restrict__ params,
                              uint8_t* __restrict__ q, int64_t n) {
  const QParams p = *params;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  uint32_t* q4 = reinterpret_cast<uint32_t*>(q);
  for (int64_t i = tid; i < n / 4; i += stride) {
    const float4 v = x4[i];
    q4[i] = pack4<S>(unsaturated_code<S>(v.x, p), unsaturated_code<S>(v.y, p),
                     unsaturated_code<S>(v.z, p), unsaturated_code<S>(v.w, p));
  }
  for (int64_t i = n / 4 * 4 + tid; i < n; i += stride) q[i] = quantize_one<S>(x[i], p);
}

// ---- kernels: dequantize ------------------------------------------------------------------------
template <Scheme S>
__device__ __forceinline__ float dequantize_one(uint8_t code, const QParams& p) {
  const int32_t q = S == Scheme::symmetric ? int32_t(int8_t(code)) : int32_t(code);
  return __fmul_rn(float(q - p.zero_point), p.scale);
}

template <Scheme S>
__global__ void dequantize_vec4(const uint8_t* __restrict__ q, const QParams* __restrict__ params,
                                float* __restrict__ y, int64_t n) {
  const QParams p = *params;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint32_t* q4 = reinterpret_cast<const uint32_t*>(q);
  float4* y4 = reinterpret_cast<float4*>(y);
  for (int64_t i = tid; i < n / 4; i += stride) {
    const uint32_t w = q4[i];
    y4[i] =
        make_float4(dequantize_one<S>(uint8_t(w), p), dequantize_one<S>(uint8_t(w >> 8), p),
                    dequantize_one<S>(uint8_t(w >> 16), p), dequantize_one<S>(uint8_t(w >> 24), p));
  }
  for (int64_t i = n / 4 * 4 + tid; i < n; i += stride) y[i] = dequantize_one<S>(q[i], p);
}

// ---- launchers ----------------------------------------------------------------------------------
enum class Op { quantize, dequantize };

struct Version {
  const char* name;
  Op op;
  Scheme scheme;
  int vec;  // elements per thread per step: 1 or 4
};
constexpr Version kVersions[] = {
    {"quant_sym_naive", Op::quantize, Scheme::symmetric, 1},
    {"quant_sym_vec4", Op::quantize, Scheme::symmetric, 4},
    {"quant_asym_naive", Op::quantize, Scheme::asymmetric, 1},
    {"quant_asym_vec4", Op::quantize, Scheme::asymmetric, 4},
    {"dequant_sym_vec4", Op::dequantize, Scheme::symmetric, 4},
    {"dequant_asym_vec4", Op::dequantize, Scheme::asymmetric, 4},
};

struct DeviceData {
  gpu100::DeviceBuffer<float> x, y;
  gpu100::DeviceBuffer<uint8_t> q;
  gpu100::DeviceBuffer<Range> range;
  gpu100::DeviceBuffer<QParams> params;
};

// One thread per element (per 4 for vec4), capped at four waves of resident blocks: past that
// the grid-stride loops take over (the emulated 100001-element case goes through them).
unsigned grid_of(const Version& v, int64_t n) {
  const int64_t items = v.vec == 4 ? n / 4 + n % 4 : n;
  const int64_t cap = 4 * int64_t(gpu100::resident_grid(quantize_naive<Scheme::symmetric>, kBlock));
  return unsigned(std::clamp<int64_t>(gpu100::grid_for(items, kBlock), 1, cap));
}

template <Scheme S>
void launch_quantize(const Version& v, unsigned grid, DeviceData& d, int64_t n, cudaStream_t s) {
  CUDA_CHECK(cudaMemsetAsync(d.range.data(), 0, sizeof(Range), s));
  if (v.vec == 4)
    range_kernel<4><<<grid, kBlock, 0, s>>>(d.x.data(), n, d.range.data());
  else
    range_kernel<1><<<grid, kBlock, 0, s>>>(d.x.data(), n, d.range.data());
  LAUNCH_CHECK();
  params_kernel<S><<<1, 1, 0, s>>>(d.range.data(), d.params.data());
  LAUNCH_CHECK();
  if (v.vec == 4)
    quantize_vec4<S><<<grid, kBlock, 0, s>>>(d.x.data(), d.params.data(), d.q.data(), n);
  else
    quantize_naive<S><<<grid, kBlock, 0, s>>>(d.x.data(), d.params.data(), d.q.data(), n);
  LAUNCH_CHECK();
}

void launch(const Version& v, unsigned grid, DeviceData& d, int64_t n, cudaStream_t s) {
  const bool sym = v.scheme == Scheme::symmetric;
  if (v.op == Op::quantize) {
    if (sym)
      launch_quantize<Scheme::symmetric>(v, grid, d, n, s);
    else
      launch_quantize<Scheme::asymmetric>(v, grid, d, n, s);
    return;
  }
  if (sym)
    dequantize_vec4<Scheme::symmetric>
        <<<grid, kBlock, 0, s>>>(d.q.data(), d.params.data(), d.y.data(), n);
  else
    dequantize_vec4<Scheme::asymmetric>
        <<<grid, kBlock, 0, s>>>(d.q.data(), d.params.data(), d.y.data(), n);
  LAUNCH_CHECK();
}

// ---- inputs -------------------------------------------------------------------------------------
constexpr float kOutlier = 40.0f;
constexpr float kBodyLo = -3.0f, kBodyHi = 5.0f;

// A float x with fl(x * inv_scale) == t exactly, searched among the floats next to t / inv_scale;
// NaN when none of them lands there.
float tie_input(float t, float inv_scale) {
  float x = t / inv_scale;
  for (int step = 0; step < 64; ++step) x = std::nextafter(x, -INFINITY);
  for (int step = 0; step < 128; ++step, x = std::nextafter(x, INFINITY))
    if (x * inv_scale == t) return x;
  return NAN;
}

// The body uniform in [-3, 5) (its minimum -3 is planted, so both schemes' ranges are known
// before the ties are placed), an outlier, the values that are not finite, both zeros, then for
// each scheme inputs landing exactly on k + 0.5 for even k (where half-even and half-away differ).
std::vector<float> make_inputs(int64_t n, uint64_t seed, const std::string& kind) {
  std::vector<float> x(size_t(n), 0.0f);
  if (kind == "zeros") return x;
  x = gpu100::random_floats(size_t(n), seed, kBodyLo, kBodyHi);
  std::vector<float> planted = {kOutlier, kBodyLo, INFINITY, -INFINITY, NAN, -0.0f, 0.0f};
  const Range r{kOutlier, -kBodyLo};
  for (Scheme s : {Scheme::symmetric, Scheme::asymmetric}) {
    const float inv = params_cpu(s, r).inv_scale;
    for (float t : {0.5f, -0.5f, 2.5f, -2.5f, 6.5f, -8.5f, 12.5f}) {
      const float xt = tie_input(t, inv);
      if (std::isfinite(xt) && xt > kBodyLo && xt < kOutlier) planted.push_back(xt);
    }
  }
  std::copy_n(planted.begin(), std::min(planted.size(), x.size()), x.begin());
  return x;
}

// The elements whose scaled value x * inv_scale is exactly halfway between two integers.
int64_t count_ties(const std::vector<float>& x, const QParams& p) {
  int64_t ties = 0;
  for (float v : x) {
    const float y = v * p.inv_scale;
    ties += std::isfinite(y) && y - std::floor(y) == 0.5f;
  }
  return ties;
}

// ---- the versions: each one's run and check -----------------------------------------------------
struct Reference {
  Range range;
  QParams params[2];              // by Scheme
  std::vector<uint8_t> codes[2];  // the bytes of the int8 or uint8 codes
  std::vector<float> values[2];   // their dequantized values
};

Reference make_reference(const std::vector<float>& x) {
  Reference ref;
  ref.range = range_cpu(x);
  for (Scheme s : {Scheme::symmetric, Scheme::asymmetric}) {
    const int k = int(s);
    ref.params[k] = params_cpu(s, ref.range);
    for (float v : x) {
      const int32_t q = quantize_cpu(s, v, ref.params[k]);
      ref.codes[k].push_back(uint8_t(q));
      ref.values[k].push_back(dequantize_cpu(q, ref.params[k]));
    }
  }
  return ref;
}

std::vector<float> params_bits(const QParams& p) {
  return {p.scale, p.inv_scale, float(p.zero_point)};
}

gpu100::CheckResult check_quantize(const Version& v, DeviceData& d, const Reference& ref) {
  const int k = int(v.scheme);
  const auto codes = gpu100::compare_exact(d.q.download(), ref.codes[k]);
  const auto params =
      gpu100::compare_exact(params_bits(d.params.download()[0]), params_bits(ref.params[k]));
  return gpu100::combine(codes, params);
}

// Dequantize reads the CPU's codes and parameters, so it is checked on its own.
void reset_dequantize(const Version& v, DeviceData& d, const Reference& ref) {
  const int k = int(v.scheme);
  d.q.upload(ref.codes[k]);
  d.params.upload(std::vector<QParams>{ref.params[k]});
  d.y.poison();
}

gpu100::Measure measure_version(const Version& v, DeviceData& d, const Reference& ref, int64_t n) {
  const bool quant = v.op == Op::quantize;
  // Quantize: x read by both passes, one byte written. Dequantize: a byte read, a float written.
  const double bytes = quant ? 9.0 * double(n) : 5.0 * double(n);
  return {.name = v.name,
          .launch = [&v, &d, n, grid = grid_of(v, n)](cudaStream_t s) { launch(v, grid, d, n, s); },
          .reset =
              [&v, &d, &ref, quant] {
                if (quant) {
                  d.q.poison();
                  d.params.poison();
                } else {
                  reset_dequantize(v, d, ref);
                }
              },
          .check =
              [&v, &d, &ref, quant] {
                return quant ? check_quantize(v, d, ref)
                             : gpu100::compare_exact(d.y.download(), ref.values[int(v.scheme)]);
              },
          .work = bytes};
}

// ---- analysis -----------------------------------------------------------------------------------
// What one scale per tensor costs: the outlier sets the step, and the body of the data gets few
// of the 256 codes.
void note_scales(gpu100::Report& report, const std::vector<float>& x, const Reference& ref) {
  for (Scheme s : {Scheme::symmetric, Scheme::asymmetric}) {
    const int k = int(s);
    const QParams& p = ref.params[k];
    std::vector<bool> used(256, false);
    for (size_t i = 0; i < x.size(); ++i)
      if (x[i] >= kBodyLo && x[i] < kBodyHi) used[ref.codes[k][i]] = true;
    report.note(fmt::format(
        "{}: scale {:.6g}, zero point {}; the body [{}, {}) uses {} of 256 "
        "codes; {} elements on exact .5 ties",
        s == Scheme::symmetric ? "symmetric" : "asymmetric", p.scale, p.zero_point, kBodyLo,
        kBodyHi, std::count(used.begin(), used.end(), true), count_ties(x, p)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("Per-tensor int8 quantization, symmetric and asymmetric: quantize, dequantize");
  int64_t n = (int64_t(1) << 26) + 3;
  std::string input = "random";
  cli.size("n", n, 30'011, "elements of the tensor", int64_t(1) << 33);
  cli.option("input", input, {"random", "zeros"},
             "random (with an outlier, +-inf, NaN and ties) or all zeros (scale 0)");
  cli.kernels_of(kVersions);
  // x, the dequantized y, the codes, and the copy baseline's two buffers.
  cli.device_bytes([&] { return (4.0 + 4.0 + 1.0 + 8.0) * double(n); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");

    const auto x = make_inputs(n, ctx.seed(), input);
    const Reference ref = make_reference(x);
    ctx.copy_baseline(size_t(n) * sizeof(float));

    DeviceData d{gpu100::DeviceBuffer<float>(x), gpu100::DeviceBuffer<float>(size_t(n)),
                 gpu100::DeviceBuffer<uint8_t>(size_t(n)), gpu100::DeviceBuffer<Range>(1),
                 gpu100::DeviceBuffer<QParams>(1)};
    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions)
      if (ctx.want(v.name)) runs.push_back(measure_version(v, d, ref, n));
    ctx.measure_all(runs);
    note_scales(report, x, ref);
  });
}
