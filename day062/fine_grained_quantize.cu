// Day 062 - fine-grained quantization: per-token and per-block (1x128) absmax scales, fp8 e4m3 and
// e5m2, and fake quantization (QAT) forward and backward
//
// One scale per tensor lets one outlier set the step for every value (day 061). Activations are
// quantized with a scale per token (row) or, finer, per block of 128 values of a row: an outlier
// then costs precision only inside its own row or block, for one fp32 scale per 128 bytes of
// codes. The codes here are fp8: e4m3 (4 exponent bits, 3 mantissa bits, largest 448, no
// infinity) keeps more precision, e5m2 (largest 57344, IEEE-like) more range. The scale maps each
// group's absmax onto the format's largest value: scale = absmax / max, code = fp8(x / scale),
// computed as x * (max / absmax) and converted by cvt.rn.satfinite: round to nearest even, and
// anything beyond the largest finite value (infinity included) saturates to it.
//
// Fake quantization is how quantization-aware training sees fp8 in fp32: y = dequant(quant(x))
// with a fixed clip range [-clip, clip] (scale = clip / max). Its backward is the straight-through
// estimator: the rounding is treated as the identity, the clipping is not, so dx = dy where
// |x| <= clip and 0 where the forward saturated.
//
// What the day does with values that are not finite: the absmax skips them; +-inf saturate to the
// largest code of their sign; NaN stays NaN (which NaN code is not specified: any NaN code of the
// format passes for it); in the backward, NaN and +-inf get gradient 0. A group without a finite
// nonzero value has scale 0 (its reciprocal is taken as 0: no division by zero) and codes +-0.
//
// Versions
//   token_{e4m3,e5m2}   one thread block per row: the row's absmax (block reduction), then a
//                       second pass over the row converting one element per thread.
//   block_{e4m3,e5m2}   one warp per 1x128 block: each lane holds 4 of its values in registers,
//                       the absmax is 5 warp shuffles, and two packed cvt (x2) per lane convert
//                       them: x is read once. A row of hidden % 128 != 0 ends with a partial block.
//   fake_quant_{e4m3,e5m2}  y = decode(fp8(x * max / clip)) * (clip / max), one element per thread.
//   fake_quant_bwd      dx = |x| <= clip ? dy : 0.
//
// Check: bit-exact against a CPU model of each format written from its definition (sign, biased
// exponent, mantissa; subnormals; round half to even in double arithmetic; saturation), the
// scales included. The inputs give each block a power-of-two magnitude with 1.75 * 2^e planted as
// its absmax, so x * (max / absmax) is exact and values can be planted on exact ties of each
// format (normal and subnormal), next to +-inf, NaN, +-0, all-zero rows and outliers.
//
// Run:  build/bin/day062 [--tokens 4096 --hidden 7168] [--clip 3.5] [--kernel block_e4m3]
#include <cuda_fp8.h>
#include <fmt/core.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kGroup = 128;       // values per block scale
constexpr int kRowThreads = 256;  // threads per row in the per-token kernels
constexpr int kBlock = 256;
enum class Fp8 { e4m3, e5m2 };

// ---- CPU model of the formats, from their definitions -------------------------------------------
// e4m3 ("fn"): bias 7, 3 mantissa bits, no infinity; S.1111.111 is NaN, so the largest value is
// S.1111.110 = 1.75 * 2^8 = 448. e5m2: bias 15, 2 mantissa bits, IEEE-like (exponent 11111 holds
// inf and NaN), largest 1.75 * 2^15 = 57344. Both have subnormals: exponent field 0 means
// 0.mantissa * 2^(1 - bias).
struct Format {
  int mantissa_bits, bias;
  double max;
};
constexpr Format format_of(Fp8 f) {
  return f == Fp8::e4m3 ? Format{3, 7, 448.0} : Format{2, 15, 57344.0};
}
constexpr uint8_t kNaNCode = 0x7F;  // the code the model gives NaN (S.1111.111 / S.11111.11)

bool is_nan_code(Fp8 f, uint8_t c) {
  return f == Fp8::e4m3 ? (c & 0x7F) == 0x7F : (c & 0x7F) > 0x7C;
}

// Round to nearest even onto the format's grid, then saturate to +-max (satfinite).
uint8_t encode(Fp8 f, float x) {
  if (std::isnan(x)) return kNaNCode;
  const Format fm = format_of(f);
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  double a = std::fabs(double(x));
  const int min_exp = 1 - fm.bias;  // exponent of the smallest normal value
  if (a > fm.max) {
    a = fm.max;
  } else if (a > 0) {
    // The spacing of the grid at a: 2^(e - mantissa_bits), e = a's exponent, no less than min_exp
    // (below it the spacing stays that of the subnormals).
    const int e = std::max(std::ilogb(a), min_exp);
    const double ulp = std::ldexp(1.0, e - fm.mantissa_bits);
    a = std::nearbyint(a / ulp) * ulp;  // exact in double; ties to even in the default mode
    a = std::min(a, fm.max);
  }
  if (a == 0) return sign;
  const int e = std::ilogb(a);
  if (e < min_exp)  // subnormal: exponent field 0, mantissa = a / 2^(min_exp - mantissa_bits)
    return uint8_t(sign | int(std::ldexp(a, fm.mantissa_bits - min_exp)));
  const int mantissa = int(std::ldexp(a, fm.mantissa_bits - e)) - (1 << fm.mantissa_bits);
  return uint8_t(sign | (e + fm.bias) << fm.mantissa_bits | mantissa);
}

float decode(Fp8 f, uint8_t c) {
  const Format fm = format_of(f);
  if (is_nan_code(f, c)) return NAN;
  const double sign = c & 0x80 ? -1.0 : 1.0;
  const int field = (c & 0x7F) >> fm.mantissa_bits, mantissa = c & ((1 << fm.mantissa_bits) - 1);
  if (f == Fp8::e5m2 && field == 31) return float(sign * INFINITY);
  if (field == 0) return float(sign * std::ldexp(mantissa, 1 - fm.bias - fm.mantissa_bits));
  return float(sign *
               std::ldexp(mantissa + (1 << fm.mantissa_bits), field - fm.bias - fm.mantissa_bits));
}

// Scale and reciprocal of a group from its finite absmax, the same fp32 operations as the kernels.
struct Scale {
  float scale, inv;
};
Scale scale_of(float absmax, float max) {
  return {absmax / max, absmax > 0 ? max / absmax : 0.0f};
}

float finite_absmax(const float* x, int64_t count) {
  float m = 0;
  for (int64_t i = 0; i < count; ++i)
    if (std::isfinite(x[i])) m = std::max(m, std::fabs(x[i]));
  return m;
}

// Codes and scales of a tokens x hidden matrix, in groups of `group` values of a row.
struct Quantized {
  std::vector<uint8_t> codes;
  std::vector<float> scales;
};
Quantized quantize_cpu(Fp8 f, const std::vector<float>& x, int64_t tokens, int64_t hidden,
                       int64_t group) {
  Quantized q{std::vector<uint8_t>(x.size()), {}};
  const float max = float(format_of(f).max);
  for (int64_t r = 0; r < tokens; ++r)
    for (int64_t c0 = 0; c0 < hidden; c0 += group) {
      const int64_t count = std::min(group, hidden - c0), base = r * hidden + c0;
      const Scale s = scale_of(finite_absmax(&x[base], count), max);
      q.scales.push_back(s.scale);
      for (int64_t i = base; i < base + count; ++i) q.codes[i] = encode(f, x[i] * s.inv);
    }
  return q;
}

std::vector<float> fake_quant_cpu(Fp8 f, const std::vector<float>& x, float clip) {
  const Scale s = scale_of(clip, float(format_of(f).max));
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = decode(f, encode(f, x[i] * s.inv)) * s.scale;
  return y;
}

std::vector<float> fake_quant_bwd_cpu(const std::vector<float>& x, const std::vector<float>& dy,
                                      float clip) {
  std::vector<float> dx(x.size());
  for (size_t i = 0; i < x.size(); ++i) dx[i] = std::fabs(x[i]) <= clip ? dy[i] : 0.0f;
  return dx;
}

// ---- device conversions -------------------------------------------------------------------------
// cuda_fp8.h's conversions are cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 (and cvt.rn.f16x2.* back) on
// compute capability 8.9 and later, and the same rounding in software below it.
template <Fp8 F>
constexpr __nv_fp8_interpretation_t kInterp = F == Fp8::e4m3 ? __NV_E4M3 : __NV_E5M2;
template <Fp8 F>
constexpr float kMax = F == Fp8::e4m3 ? 448.0f : 57344.0f;

template <Fp8 F>
__device__ __forceinline__ uint8_t to_fp8(float x) {
  return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, kInterp<F>);
}
// Two values in one instruction: lo lands in the low byte.
template <Fp8 F>
__device__ __forceinline__ uint16_t to_fp8x2(float lo, float hi) {
  return __nv_cvt_float2_to_fp8x2(make_float2(lo, hi), __NV_SATFINITE, kInterp<F>);
}
template <Fp8 F>
__device__ __forceinline__ float from_fp8(uint8_t c) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(c, kInterp<F>)));
}

__device__ __forceinline__ float finite_abs(float v) {
  return fabsf(v) <= FLT_MAX ? fabsf(v) : 0.0f;  // inf and NaN count as 0 toward the absmax
}

__device__ __forceinline__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// ---- kernels: per token -------------------------------------------------------------------------
// Block r quantizes row r: its absmax (warp shuffles, then the warps' maxima through shared
// memory), then the row again, one element per thread.
template <Fp8 F>
__global__ void quantize_token(const float* __restrict__ x, uint8_t* __restrict__ codes,
                               float* __restrict__ scales, int hidden) {
  const float* row = x + int64_t(blockIdx.x) * hidden;
  uint8_t* out = codes + int64_t(blockIdx.x) * hidden;
  float m = 0;
  for (int c = threadIdx.x; c < hidden; c += kRowThreads) m = fmaxf(m, finite_abs(row[c]));
  m = warp_max(m);
  __shared__ float warp_absmax[kRowThreads / 32];
  __shared__ float row_inv;
  if (threadIdx.x % 32 == 0) warp_absmax[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kRowThreads / 32; ++w) m = fmaxf(m, warp_absmax[w]);
    scales[blockIdx.x] = m / kMax<F>;
    row_inv = m > 0 ? kMax<F> / m : 0.0f;
  }
  __syncthreads();
  const float inv = row_inv;
  for (int c = threadIdx.x; c < hidden; c += kRowThreads) out[c] = to_fp8<F>(row[c] * inv);
}

// ---- kernels: per block of 128 ------------------------------------------------------------------
// Warp w takes block (w / blocks_per_row, w % blocks_per_row). Lane l holds elements l, l + 32,
// l + 64, l + 96 of it (each warp load is 128 contiguous bytes); lanes past a partial block's
// end hold 0, which never raises the absmax.
template <Fp8 F>
__global__ void quantize_block(const float* __restrict__ x, uint8_t* __restrict__ codes,
                               float* __restrict__ scales, int tokens, int hidden) {
  const int blocks_per_row = (hidden + kGroup - 1) / kGroup;
  const int64_t warp = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= int64_t(tokens) * blocks_per_row) return;  // whole warps leave together
  const int col0 = int(warp % blocks_per_row) * kGroup;
  const int64_t base = warp / blocks_per_row * hidden + col0;
  const int count = min(kGroup, hidden - col0);
  float v[4];
  float m = 0;
  for (int k = 0; k < 4; ++k) {
    const int c = lane + 32 * k;
    v[k] = c < count ? x[base + c] : 0.0f;
    m = fmaxf(m, finite_abs(v[k]));
  }
  m = warp_max(m);
  if (lane == 0) scales[warp] = m / kMax<F>;
  const float inv = m > 0 ? kMax<F> / m : 0.0f;
  const uint16_t c01 = to_fp8x2<F>(v[0] * inv, v[1] * inv);
  const uint16_t c23 = to_fp8x2<F>(v[2] * inv, v[3] * inv);
  const uint8_t c[4] = {uint8_t(c01), uint8_t(c01 >> 8), uint8_t(c23), uint8_t(c23 >> 8)};
  for (int k = 0; k < 4; ++k)
    if (lane + 32 * k < count) codes[base + lane + 32 * k] = c[k];
}

// ---- kernels: fake quantization (QAT) -----------------------------------------------------------
template <Fp8 F>
__global__ void fake_quant_fwd(const float* __restrict__ x, float* __restrict__ y, float clip,
                               int64_t n) {
  const float scale = clip / kMax<F>, inv = kMax<F> / clip;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = __fmul_rn(from_fp8<F>(to_fp8<F>(x[i] * inv)), scale);
}

// Straight-through: the gradient passes where the forward did not clip. NaN fails the test.
__global__ void fake_quant_bwd(const float* __restrict__ x, const float* __restrict__ dy,
                               float* __restrict__ dx, float clip, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dx[i] = fabsf(x[i]) <= clip ? dy[i] : 0.0f;
}

// ---- launchers ----------------------------------------------------------------------------------
enum class Op { token, block, fake_fwd, fake_bwd };
struct Version {
  const char* name;
  Op op;
  Fp8 format;
};
constexpr Version kVersions[] = {
    {"token_e4m3", Op::token, Fp8::e4m3},         {"token_e5m2", Op::token, Fp8::e5m2},
    {"block_e4m3", Op::block, Fp8::e4m3},         {"block_e5m2", Op::block, Fp8::e5m2},
    {"fake_quant_e4m3", Op::fake_fwd, Fp8::e4m3}, {"fake_quant_e5m2", Op::fake_fwd, Fp8::e5m2},
    {"fake_quant_bwd", Op::fake_bwd, Fp8::e4m3},  // the backward does not depend on the format
};

struct Shape {
  int64_t tokens, hidden;
  int64_t n() const { return tokens * hidden; }
  int64_t blocks_per_row() const { return (hidden + kGroup - 1) / kGroup; }
};

struct DeviceData {
  gpu100::DeviceBuffer<float> x, dy, y, scales;
  gpu100::DeviceBuffer<uint8_t> codes;
};

unsigned elementwise_grid(int64_t n) {
  const int64_t cap = 4 * int64_t(gpu100::resident_grid(fake_quant_bwd, kBlock));
  return unsigned(std::clamp<int64_t>(gpu100::grid_for(n, kBlock), 1, cap));
}

template <Fp8 F>
void launch_format(Op op, DeviceData& d, const Shape& s, float clip, cudaStream_t st) {
  const int tokens = int(s.tokens), hidden = int(s.hidden);
  switch (op) {
    case Op::token:
      quantize_token<F>
          <<<tokens, kRowThreads, 0, st>>>(d.x.data(), d.codes.data(), d.scales.data(), hidden);
      break;
    case Op::block: {
      const int64_t threads = s.tokens * s.blocks_per_row() * 32;
      quantize_block<F><<<gpu100::grid_for(threads, kBlock), kBlock, 0, st>>>(
          d.x.data(), d.codes.data(), d.scales.data(), tokens, hidden);
      break;
    }
    case Op::fake_fwd:
      fake_quant_fwd<F>
          <<<elementwise_grid(s.n()), kBlock, 0, st>>>(d.x.data(), d.y.data(), clip, s.n());
      break;
    case Op::fake_bwd:
      fake_quant_bwd<<<elementwise_grid(s.n()), kBlock, 0, st>>>(d.x.data(), d.dy.data(),
                                                                 d.y.data(), clip, s.n());
      break;
  }
  LAUNCH_CHECK();
}

void launch(const Version& v, DeviceData& d, const Shape& s, float clip, cudaStream_t st) {
  if (v.format == Fp8::e4m3)
    launch_format<Fp8::e4m3>(v.op, d, s, clip, st);
  else
    launch_format<Fp8::e5m2>(v.op, d, s, clip, st);
}

// ---- inputs -------------------------------------------------------------------------------------
// Scaled values (x * max / absmax) that land exactly between two neighbours of each format, where
// half-even and half-away differ, in the normal and the subnormal range, and one that rounds
// to 0.
constexpr float kTiesE4m3[] = {1.0625f,  2.375f,   -2.625f,   432.0f,
                               0x3p-10f, 0x1p-10f, -0x1p-10f, 0x1p-11f};
constexpr float kTiesE5m2[] = {1.125f, 1.375f, -1.625f, 53248.0f, 0x3p-17f, 0x1p-17f, -0x1p-17f};

// Each 1x128 block of row r gets a power-of-two magnitude 2^e (largest in block 0) and its
// absmax planted as 1.75 * 2^e, so that max / absmax is a power of two for both formats
// (448 = 1.75 * 2^8, 57344 = 1.75 * 2^15) and x * inv is exact. The body is uniform inside
// +-0.9 * 1.75 * 2^e. Every fifth row has an outlier 2^6 times its magnitude in its last block,
// every eleventh row is all zeros, and block 0 of each row holds the ties; row 0 also holds
// +-inf, NaN and +-0.
int block_exponent(int64_t r, int64_t b) {
  const int row_e = int((r * 7) % 11) - 5;
  return b == 0 ? row_e : row_e - int((r + 3 * b) % 5);
}

std::vector<float> make_inputs(const Shape& s, uint64_t seed) {
  std::vector<float> x = gpu100::random_floats(size_t(s.n()), seed, -1.575f, 1.575f);
  const int64_t nb = s.blocks_per_row();
  for (int64_t r = 0; r < s.tokens; ++r) {
    float* row = &x[size_t(r * s.hidden)];
    if (r % 11 == 10) {
      std::fill(row, row + s.hidden, 0.0f);
      continue;
    }
    for (int64_t b = 0; b < nb; ++b) {
      const int e = block_exponent(r, b);
      const int64_t c0 = b * kGroup, count = std::min<int64_t>(kGroup, s.hidden - c0);
      for (int64_t c = c0; c < c0 + count; ++c) row[c] = std::ldexp(row[c], e);
      row[c0 + (r * 13 + b * 7) % count] = std::ldexp(r % 2 ? -1.75f : 1.75f, e);
    }
    std::vector<float> planted;
    const int e0 = block_exponent(r, 0);
    for (float t : kTiesE4m3) planted.push_back(std::ldexp(t, e0 - 8));  // x * 2^(8 - e0) = t
    for (float t : kTiesE5m2) planted.push_back(std::ldexp(t, e0 - 15));
    if (r == 0) planted.insert(planted.end(), {INFINITY, -INFINITY, NAN, -0.0f, 0.0f});
    const int64_t absmax_col = (r * 13) % std::min<int64_t>(kGroup, s.hidden);
    for (size_t i = 0, c = 0;
         i < planted.size() && int64_t(c) < std::min<int64_t>(kGroup, s.hidden); ++c)
      if (int64_t(c) != absmax_col) row[c] = planted[i++];
    if (r % 5 == 3 && nb > 1) row[s.hidden - 1] = std::ldexp(1.75f, e0 + 6);
  }
  return x;
}

// ---- the versions: each one's run and check -----------------------------------------------------
// Codes compared bit for bit, except that any NaN code of the format equals any other: the PTX
// ISA does not say which NaN a conversion returns.
std::vector<uint8_t> canonical(Fp8 f, std::vector<uint8_t> codes) {
  for (uint8_t& c : codes)
    if (is_nan_code(f, c)) c = kNaNCode;
  return codes;
}
// fp32 results by their bits, with every NaN made the same.
std::vector<uint32_t> float_bits(const std::vector<float>& v) {
  std::vector<uint32_t> bits(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    bits[i] = std::isnan(v[i]) ? 0x7FFFFFFFu : (std::memcpy(&bits[i], &v[i], 4), bits[i]);
  return bits;
}

struct Reference {
  Quantized token[2], block[2];  // by Fp8
  std::vector<float> fake[2], fake_bwd;
};

Reference make_reference(const std::vector<float>& x, const std::vector<float>& dy, const Shape& s,
                         float clip) {
  Reference ref;
  for (Fp8 f : {Fp8::e4m3, Fp8::e5m2}) {
    ref.token[int(f)] = quantize_cpu(f, x, s.tokens, s.hidden, s.hidden);
    ref.block[int(f)] = quantize_cpu(f, x, s.tokens, s.hidden, kGroup);
    ref.fake[int(f)] = fake_quant_cpu(f, x, clip);
  }
  ref.fake_bwd = fake_quant_bwd_cpu(x, dy, clip);
  return ref;
}

gpu100::CheckResult check_version(const Version& v, DeviceData& d, const Shape& s,
                                  const Reference& ref) {
  const int k = int(v.format);
  if (v.op == Op::fake_fwd)
    return gpu100::compare_exact(float_bits(d.y.download()), float_bits(ref.fake[k]));
  if (v.op == Op::fake_bwd) return gpu100::compare_exact(d.y.download(), ref.fake_bwd);
  const Quantized& q = v.op == Op::token ? ref.token[k] : ref.block[k];
  std::vector<float> scales(q.scales.size());
  d.scales.download(scales.data(), scales.size());
  return gpu100::combine(
      gpu100::compare_exact(canonical(v.format, d.codes.download()), canonical(v.format, q.codes)),
      gpu100::compare_exact(scales, q.scales));
}

gpu100::Measure measure_version(const Version& v, DeviceData& d, const Shape& s, float clip,
                                const Reference& ref) {
  // Bytes a version must move: x read and codes written (plus the scales), or x read and y
  // written, or x and dy read and dx written.
  const double n = double(s.n());
  const double groups =
      v.op == Op::block ? double(s.tokens * s.blocks_per_row()) : double(s.tokens);
  const double bytes = v.op == Op::fake_fwd   ? 8 * n
                       : v.op == Op::fake_bwd ? 12 * n
                                              : 5 * n + 4 * groups;
  return {.name = v.name,
          .launch = [&v, &d, s, clip](cudaStream_t st) { launch(v, d, s, clip, st); },
          .reset =
              [&d] {
                d.codes.poison();
                d.scales.poison();
                d.y.poison();
              },
          .check = [&v, &d, s, &ref] { return check_version(v, d, s, ref); },
          .work = bytes};
}

// ---- analysis -----------------------------------------------------------------------------------
// What the granularity buys, from the reference codes (the GPU's equal them bit for bit). fp8 is
// floating point: its relative precision is the same at any magnitude inside its range, so a
// coarse scale hurts the values it pushes below the normal range (into subnormals, or to 0). The
// error is taken per row (a token's relative RMS error, finite values) and averaged over the rows
// that are not all zero, so small-magnitude tokens count as much as large ones.
struct ErrorStats {
  double mean_row_error = 0;
  int64_t flushed = 0;  // nonzero finite values whose code is +-0
};

// scale_at(i): the scale element i was quantized with.
template <class ScaleAt>
ErrorStats dequant_errors(Fp8 f, const std::vector<float>& x, const std::vector<uint8_t>& codes,
                          const Shape& s, ScaleAt scale_at) {
  ErrorStats e;
  int64_t rows = 0;
  for (int64_t r = 0; r < s.tokens; ++r) {
    double err = 0, ref = 0;
    for (int64_t i = r * s.hidden; i < (r + 1) * s.hidden; ++i) {
      if (!std::isfinite(x[i])) continue;
      const double y = double(decode(f, codes[i])) * scale_at(i);
      err += (y - x[i]) * (y - x[i]), ref += double(x[i]) * x[i];
      e.flushed += x[i] != 0 && (codes[i] & 0x7F) == 0;
    }
    if (ref > 0) e.mean_row_error += std::sqrt(err / ref), ++rows;
  }
  if (rows) e.mean_row_error /= double(rows);
  return e;
}

void error_table(gpu100::Report& report, const std::vector<float>& x, const Shape& s,
                 const Reference& ref) {
  gpu100::Table t;
  t.title = "quantization error by scale granularity (CPU model)";
  t.columns = {"format", "scales", "mean relative RMS error per token", "nonzero values -> 0"};
  for (Fp8 f : {Fp8::e4m3, Fp8::e5m2}) {
    const Quantized tensor = quantize_cpu(f, x, 1, s.n(), s.n());  // one scale for all
    const Quantized& token = ref.token[int(f)];
    const Quantized& block = ref.block[int(f)];
    const ErrorStats stats[] = {
        dequant_errors(f, x, tensor.codes, s, [&](int64_t) { return tensor.scales[0]; }),
        dequant_errors(f, x, token.codes, s, [&](int64_t i) { return token.scales[i / s.hidden]; }),
        dequant_errors(f, x, block.codes, s, [&](int64_t i) {
          return block.scales[i / s.hidden * s.blocks_per_row() + i % s.hidden / kGroup];
        })};
    const char* names[] = {"per tensor", "per token", "per 1x128 block"};
    for (int g = 0; g < 3; ++g)
      t.rows.push_back({f == Fp8::e4m3 ? "e4m3" : "e5m2", names[g],
                        fmt::format("{:.3e}", stats[g].mean_row_error),
                        fmt::format("{}", stats[g].flushed)});
  }
  report.table(std::move(t));
}

// The CPU model on values whose codes follow from the definitions by hand.
gpu100::CheckResult check_format_model() {
  const struct {
    Fp8 f;
    float x;
    uint8_t code;
  } cases[] = {
      {Fp8::e4m3, 448.0f, 0x7E},   {Fp8::e4m3, 1e9f, 0x7E},     {Fp8::e4m3, -INFINITY, 0xFE},
      {Fp8::e4m3, 1.0f, 0x38},     {Fp8::e4m3, 0x1p-9f, 0x01},  {Fp8::e4m3, 0x7p-9f, 0x07},
      {Fp8::e4m3, 0x1p-6f, 0x08},  {Fp8::e4m3, 1.0625f, 0x38},  {Fp8::e4m3, 1.1875f, 0x3A},
      {Fp8::e5m2, 57344.0f, 0x7B}, {Fp8::e5m2, INFINITY, 0x7B}, {Fp8::e5m2, 1.0f, 0x3C},
      {Fp8::e5m2, 0x1p-16f, 0x01}, {Fp8::e5m2, 0x3p-16f, 0x03}, {Fp8::e5m2, 0x1p-14f, 0x04},
      {Fp8::e5m2, -1.125f, 0xBC},  {Fp8::e5m2, -0.0f, 0x80},
  };
  std::vector<uint8_t> got, want;
  for (const auto& c : cases) {
    got.push_back(encode(c.f, c.x));
    want.push_back(c.code);
    got.push_back(encode(c.f, decode(c.f, c.code)));  // and back
    want.push_back(c.code);
  }
  return gpu100::compare_exact(got, want);
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "Per-token and per-block fp8 (e4m3, e5m2) quantization; fake quant forward/backward");
  int64_t tokens = 4096, hidden = 7168;
  double clip = 3.5;
  cli.size("tokens", tokens, 37, "rows (tokens)", int64_t(1) << 24);
  cli.size("hidden", hidden, 1000, "values per row (hidden size)", int64_t(1) << 24);
  cli.option("clip", clip, "fake quantization's clip range [-clip, clip]", 1e-30, 1e30);
  cli.kernels_of(kVersions);
  cli.validate([&] {
    return tokens * hidden > (int64_t(1) << 33) ? std::string("tokens x hidden must be <= 2^33")
                                                : std::string();
  });
  // x, dy, y, the codes, the scales, and the copy baseline's two buffers.
  cli.device_bytes([&] { return (4.0 * 3 + 1 + 4 + 8) * double(tokens) * double(hidden); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    report.add_check("CPU fp8 model on hand-derived codes", check_format_model());

    const Shape s{tokens, hidden};
    const auto x = make_inputs(s, ctx.seed());
    const auto dy = gpu100::random_floats(size_t(s.n()), ctx.seed() + 1);
    const Reference ref = make_reference(x, dy, s, float(clip));
    ctx.copy_baseline(size_t(s.n()) * sizeof(float));

    DeviceData d{gpu100::DeviceBuffer<float>(x), gpu100::DeviceBuffer<float>(dy),
                 gpu100::DeviceBuffer<float>(size_t(s.n())),
                 gpu100::DeviceBuffer<float>(size_t(s.tokens * s.blocks_per_row())),
                 gpu100::DeviceBuffer<uint8_t>(size_t(s.n()))};
    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions)
      if (ctx.want(v.name)) runs.push_back(measure_version(v, d, s, float(clip), ref));
    ctx.measure_all(runs);
    error_table(report, x, s, ref);
  });
}
