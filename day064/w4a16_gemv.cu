// Day 064 - W4A16 GEMV: y = W x with 4-bit weights dequantized on the fly, fp16 activations
//
// Generating one token of a language model multiplies every weight matrix by one vector: a GEMV,
// two flops per weight and every weight read once, so the time is the bytes of W over the memory
// bandwidth. Storing W in 4 bits reads a quarter of fp16's bytes; the kernel turns each 4-bit code
// back into a number in registers (a 16-entry table times the scale of its group) right before the
// multiply, so the fp16 matrix never exists in memory. Two 4-bit formats:
//   int4  codes 0..15 standing for -8..7 (symmetric: no zero point), one fp16 scale per group of
//         128 weights along K, the group size GPTQ and AWQ use;
//   nf4   the NF4 levels of day 063, one fp32 absmax per block of 64 along K (QLoRA).
// Either is "a 16-entry codebook times a group scale", so one kernel template serves both. W is
// rows x K, row-major; 8 codes per 32-bit word, code j of a word in bits 4j..4j+3. Activations
// x and the output y are fp16; every product is accumulated in fp32.
//
// Versions (fp16 first: the unquantized GEMV, the same loop with 4x the weight bytes)
//   fp16         a warp per row, 16-byte loads of 8 weights and of the 8 x they meet.
//   <f>_thread   one thread per row, one 32-bit word (8 codes) at a time: the lanes of a warp
//                read rows K/2 bytes apart, so every load request touches 32 sectors.
//   <f>_warp     a warp per row: the lanes read 32 consecutive words (128 bytes a request) and
//                the 8 x of each word as one 16-byte load; the codebook in shared memory.
//   <f>_vec      a warp per row with 16-byte loads of codes: each lane's 4 words. For x to stay
//                coalesced, the lanes' words must still be the ones 256 weights apart, so W is
//                repacked once on the host: within every 1024 weights of a row, position 4 l + j
//                holds word 32 j + l. A quarter of the load requests for W; the rest as _warp.
//
// Check: against a CPU GEMV in double on the dequantized weights (the codebook value times its
// scale, exact in double) and the fp16 x, every row within its own bound: the fp32 accumulation
// error gamma_h sum_k |w_k x_k| with h = K + 16 roundings on any term's path (at most 7 in a
// word's chain, one per word in a lane's sum, the fused multiply by the scale, 5 in the shuffle
// tree), u = 2^-24, plus the fp16 rounding of the output: 2^-11 |y| and 2^-25 for subnormals.
//
// Run:  build/bin/day064 [--rows 16387 --k 8232] [--kernel fp16,int4_vec,nf4_vec]
#include <cuda_fp16.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kThreads = 256;        // 8 warps: 8 rows per CTA in the warp-per-row versions
constexpr int kWordsPerChunk = 128;  // the vec layout's unit: 32 lanes x 4 words = 1024 weights

enum class Fmt { int4, nf4 };
template <Fmt F>
struct Traits;
template <>
struct Traits<Fmt::int4> {
  using Scale = __half;
  static constexpr int kGroup = 128;
  static constexpr uint32_t kZeroCode = 8;
};
template <>
struct Traits<Fmt::nf4> {
  using Scale = float;
  static constexpr int kGroup = 64;
  static constexpr uint32_t kZeroCode = 7;
};

// The codebooks: int4's integers, and the NF4 table as published with QLoRA (quoted as data; day
// 063 derives it from the normal quantiles).
constexpr float kInt4Levels[16] = {-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7};
// clang-format off
constexpr float kNf4Levels[16] = {
    -1.0f,                 -0.6961928009986877f,  -0.5250730514526367f, -0.39491748809814453f,
    -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
    0.07958029955625534f,  0.16093020141124725f,  0.24611230194568634f, 0.33791524171829224f,
    0.44070982933044434f,  0.5626170039176941f,   0.7229568362236023f,  1.0f};
// clang-format on
__constant__ float c_codebook[2][16];

// Row layout: ceil(K / 8) words, padded to a multiple of 4 (16 bytes, for the 16-byte loads) with
// the code of 0; x padded with zeros to the same length. A padded weight is never more than 31
// past K, so its group is the row's last one (groups are multiples of 32 weights).
struct Shape {
  int64_t rows, k, row_words, k_padded;
};
Shape make_shape(int64_t rows, int64_t k) {
  const int64_t words = gpu100::ceil_div<int64_t>(k, 8);
  const int64_t row_words = gpu100::ceil_div<int64_t>(words, 4) * 4;
  return {rows, k, row_words, row_words * 8};
}
template <Fmt F>
int64_t groups_of(const Shape& s) {
  return gpu100::ceil_div<int64_t>(s.k, Traits<F>::kGroup);
}

// ---- quantization (host) and the CPU reference --------------------------------------------------
struct Quantized4 {
  std::vector<uint32_t> words;      // rows x row_words, natural order
  std::vector<uint32_t> words_vec;  // the same, repacked for the vec kernel
  std::vector<__half> scales_half;  // int4: rows x groups
  std::vector<float> scales_float;  // nf4: rows x groups
  std::vector<double> dequantized;  // rows x k: the values the kernels multiply by, exactly
};

// The level nearest to v: how many midpoints between consecutive levels lie below it.
uint32_t nearest_code(float v, const float* levels) {
  uint32_t code = 0;
  for (int i = 0; i < 15; ++i) code += v > 0.5f * (levels[i] + levels[i + 1]);
  return code;
}

// Within each whole chunk of 128 words, position 4 l + j takes word 32 j + l.
std::vector<uint32_t> repack_for_vec(const std::vector<uint32_t>& words, const Shape& s) {
  std::vector<uint32_t> out = words;
  for (int64_t r = 0; r < s.rows; ++r)
    for (int64_t c = 0; c + kWordsPerChunk <= s.row_words; c += kWordsPerChunk)
      for (int l = 0; l < 32; ++l)
        for (int j = 0; j < 4; ++j)
          out[size_t(r * s.row_words + c + 4 * l + j)] =
              words[size_t(r * s.row_words + c + 32 * j + l)];
  return out;
}

template <Fmt F>
Quantized4 quantize(const std::vector<float>& w, const Shape& s) {
  constexpr int G = Traits<F>::kGroup;
  const float* levels = F == Fmt::int4 ? kInt4Levels : kNf4Levels;
  const int64_t groups = groups_of<F>(s);
  Quantized4 q;
  q.words.assign(size_t(s.rows * s.row_words), 0);
  q.dequantized.resize(size_t(s.rows * s.k));
  for (int64_t r = 0; r < s.rows; ++r) {
    uint32_t* row = &q.words[size_t(r * s.row_words)];
    for (int64_t kk = 0; kk < s.k_padded; ++kk)  // the code of 0 everywhere, pad included
      row[kk / 8] |= Traits<F>::kZeroCode << (4 * (kk % 8));
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t begin = g * G, end = std::min(s.k, begin + G);
      float absmax = 0.0f;
      for (int64_t kk = begin; kk < end; ++kk)
        absmax = std::max(absmax, std::fabs(w[size_t(r * s.k + kk)]));
      float scale;  // what a code's level is multiplied by
      if constexpr (F == Fmt::int4) {
        const __half h = __float2half_rn(absmax / 7.0f);
        q.scales_half.push_back(h);
        scale = __half2float(h);
      } else {
        q.scales_float.push_back(absmax);
        scale = absmax;
      }
      const float inv = scale > 0.0f ? 1.0f / scale : 0.0f;
      for (int64_t kk = begin; kk < end; ++kk) {
        const float v = w[size_t(r * s.k + kk)] * inv;
        const uint32_t code = F == Fmt::int4
                                  ? uint32_t(std::clamp(std::nearbyint(v), -8.0f, 7.0f) + 8.0f)
                                  : nearest_code(v, levels);
        row[kk / 8] = (row[kk / 8] & ~(15u << (4 * (kk % 8)))) | code << (4 * (kk % 8));
        q.dequantized[size_t(r * s.k + kk)] = double(levels[code]) * double(scale);
      }
    }
  }
  q.words_vec = repack_for_vec(q.words, s);
  return q;
}

// y = W x in double, and each row's bound (the header's derivation).
struct Reference {
  std::vector<double> y, bound;
};

Reference gemv_reference(const std::vector<double>& w, const std::vector<__half>& x,
                         const Shape& s) {
  constexpr double u = 0x1p-24;
  const double h = double(s.k + 16), gamma = h * u / (1 - h * u);
  Reference ref{std::vector<double>(size_t(s.rows)), std::vector<double>(size_t(s.rows))};
  for (int64_t r = 0; r < s.rows; ++r) {
    double sum = 0, magnitude = 0;
    for (int64_t kk = 0; kk < s.k; ++kk) {
      const double p = w[size_t(r * s.k + kk)] * double(__half2float(x[size_t(kk)]));
      sum += p;
      magnitude += std::fabs(p);
    }
    ref.y[size_t(r)] = sum;
    ref.bound[size_t(r)] = gamma * magnitude * (1 + 0x1p-11) + 0x1p-11 * std::fabs(sum) + 0x1p-25;
  }
  return ref;
}

// ---- device helpers -----------------------------------------------------------------------------
__device__ __forceinline__ float low_half(uint32_t v) {
  return __half2float(__ushort_as_half(uint16_t(v)));
}
__device__ __forceinline__ float high_half(uint32_t v) {
  return __half2float(__ushort_as_half(uint16_t(v >> 16)));
}

__device__ __forceinline__ float scale_value(__half s) {
  return __half2float(s);
}
__device__ __forceinline__ float scale_value(float s) {
  return s;
}

// The 8 codes of a word against their 8 activations (a 16-byte load: 4 words of 2 halves), with
// the levels from the shared-memory codebook; the group scale is applied once per word by the
// caller.
__device__ __forceinline__ float word_dot(uint32_t codes, uint4 x, const float* lut) {
  const uint32_t xs[4] = {x.x, x.y, x.z, x.w};
  float dot = 0.0f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    dot = fmaf(lut[(codes >> (8 * i)) & 15], low_half(xs[i]), dot);
    dot = fmaf(lut[(codes >> (8 * i + 4)) & 15], high_half(xs[i]), dot);
  }
  return dot;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// The codebook into shared memory: lanes look up different entries, which constant memory would
// serialize; 16 words in 16 banks answer a warp in one wavefront.
template <Fmt F>
__device__ __forceinline__ void load_codebook(float* lut) {
  if (threadIdx.x < 16) lut[threadIdx.x] = c_codebook[int(F)][threadIdx.x];
  __syncthreads();
}

// Word w of a row: its 8 codes times the 8 x, times the scale of its group, added to acc.
template <Fmt F>
__device__ __forceinline__ float accumulate_word(
    float acc, uint32_t codes, int64_t w, const uint4* __restrict__ x8,
    const typename Traits<F>::Scale* __restrict__ row_scales, const float* lut) {
  const float scale = scale_value(row_scales[w * 8 / Traits<F>::kGroup]);
  return fmaf(word_dot(codes, x8[w], lut), scale, acc);
}

// ---- kernels ------------------------------------------------------------------------------------
__global__ void gemv_fp16(const __half* __restrict__ w, const __half* __restrict__ x,
                          __half* __restrict__ y, int64_t rows, int64_t k_padded) {
  const int64_t row = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const uint4* w8 = reinterpret_cast<const uint4*>(w + row * k_padded);
  const uint4* x8 = reinterpret_cast<const uint4*>(x);
  float acc = 0.0f;
  for (int64_t c = lane; c < k_padded / 8; c += 32) {
    const uint4 a = w8[c], b = x8[c];
    const uint32_t as[4] = {a.x, a.y, a.z, a.w}, bs[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      acc = fmaf(low_half(as[i]), low_half(bs[i]), acc);
      acc = fmaf(high_half(as[i]), high_half(bs[i]), acc);
    }
  }
  acc = warp_sum(acc);
  if (lane == 0) y[row] = __float2half_rn(acc);
}

template <Fmt F>
__global__ void gemv_thread(const uint32_t* __restrict__ words,
                            const typename Traits<F>::Scale* __restrict__ scales,
                            const __half* __restrict__ x, __half* __restrict__ y, int64_t rows,
                            int64_t row_words, int64_t groups) {
  __shared__ float lut[16];
  load_codebook<F>(lut);
  const int64_t row = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const uint4* x8 = reinterpret_cast<const uint4*>(x);
  float acc = 0.0f;
  for (int64_t w = 0; w < row_words; ++w)
    acc = accumulate_word<F>(acc, words[row * row_words + w], w, x8, scales + row * groups, lut);
  y[row] = __float2half_rn(acc);
}

// A warp per row. VEC: 16-byte loads of 4 words from the repacked chunks, then the words past the
// last whole chunk one at a time, as the plain warp version does them all.
template <Fmt F, bool VEC>
__global__ void gemv_warp(const uint32_t* __restrict__ words,
                          const typename Traits<F>::Scale* __restrict__ scales,
                          const __half* __restrict__ x, __half* __restrict__ y, int64_t rows,
                          int64_t row_words, int64_t groups) {
  __shared__ float lut[16];
  load_codebook<F>(lut);
  const int64_t row = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const uint32_t* row_words_ptr = words + row * row_words;
  const auto* row_scales = scales + row * groups;
  const uint4* x8 = reinterpret_cast<const uint4*>(x);
  float acc = 0.0f;
  int64_t w = lane;
  if constexpr (VEC) {
    const int64_t chunked = row_words / kWordsPerChunk * kWordsPerChunk;
    for (int64_t c = 0; c < chunked; c += kWordsPerChunk) {
      const uint4 four = *reinterpret_cast<const uint4*>(row_words_ptr + c + 4 * lane);
      acc = accumulate_word<F>(acc, four.x, c + lane, x8, row_scales, lut);
      acc = accumulate_word<F>(acc, four.y, c + 32 + lane, x8, row_scales, lut);
      acc = accumulate_word<F>(acc, four.z, c + 64 + lane, x8, row_scales, lut);
      acc = accumulate_word<F>(acc, four.w, c + 96 + lane, x8, row_scales, lut);
    }
    w += chunked;
  }
  for (; w < row_words; w += 32)
    acc = accumulate_word<F>(acc, row_words_ptr[w], w, x8, row_scales, lut);
  acc = warp_sum(acc);
  if (lane == 0) y[row] = __float2half_rn(acc);
}

// ---- launchers ----------------------------------------------------------------------------------
enum class Kind { fp16, thread, warp, vec };
struct Version {
  const char* name;
  Kind kind;
  Fmt fmt;
};
const Version kVersions[] = {
    {"fp16", Kind::fp16, Fmt::int4},        {"int4_thread", Kind::thread, Fmt::int4},
    {"int4_warp", Kind::warp, Fmt::int4},   {"int4_vec", Kind::vec, Fmt::int4},
    {"nf4_thread", Kind::thread, Fmt::nf4}, {"nf4_warp", Kind::warp, Fmt::nf4},
    {"nf4_vec", Kind::vec, Fmt::nf4},
};

struct DeviceData {
  gpu100::DeviceBuffer<__half> w16, x, y;
  gpu100::DeviceBuffer<uint32_t> int4_words, int4_words_vec, nf4_words, nf4_words_vec;
  gpu100::DeviceBuffer<__half> int4_scales;
  gpu100::DeviceBuffer<float> nf4_scales;
};

template <Fmt F>
void launch_quantized(Kind kind, const uint32_t* words, const uint32_t* words_vec,
                      const typename Traits<F>::Scale* scales, DeviceData& d, const Shape& s,
                      cudaStream_t st) {
  const int64_t groups = groups_of<F>(s);
  const unsigned warp_grid = gpu100::grid_for(s.rows * 32, kThreads);
  if (kind == Kind::thread)
    gemv_thread<F><<<gpu100::grid_for(s.rows, kThreads), kThreads, 0, st>>>(
        words, scales, d.x.data(), d.y.data(), s.rows, s.row_words, groups);
  else if (kind == Kind::warp)
    gemv_warp<F, false><<<warp_grid, kThreads, 0, st>>>(words, scales, d.x.data(), d.y.data(),
                                                        s.rows, s.row_words, groups);
  else
    gemv_warp<F, true><<<warp_grid, kThreads, 0, st>>>(words_vec, scales, d.x.data(), d.y.data(),
                                                       s.rows, s.row_words, groups);
}

void launch(const Version& v, DeviceData& d, const Shape& s, cudaStream_t st) {
  if (v.kind == Kind::fp16)
    gemv_fp16<<<gpu100::grid_for(s.rows * 32, kThreads), kThreads, 0, st>>>(
        d.w16.data(), d.x.data(), d.y.data(), s.rows, s.k_padded);
  else if (v.fmt == Fmt::int4)
    launch_quantized<Fmt::int4>(v.kind, d.int4_words.data(), d.int4_words_vec.data(),
                                d.int4_scales.data(), d, s, st);
  else
    launch_quantized<Fmt::nf4>(v.kind, d.nf4_words.data(), d.nf4_words_vec.data(),
                               d.nf4_scales.data(), d, s, st);
  LAUNCH_CHECK();
}

// Bytes of weights a run reads: codes (or fp16 values) and scales, without the padding.
double weight_bytes(const Version& v, const Shape& s) {
  const double elements = double(s.rows) * double(s.k);
  if (v.kind == Kind::fp16) return 2.0 * elements;
  if (v.fmt == Fmt::int4) return elements / 2 + 2.0 * double(s.rows * groups_of<Fmt::int4>(s));
  return elements / 2 + 4.0 * double(s.rows * groups_of<Fmt::nf4>(s));
}

// ---- the versions: each one's run and check -----------------------------------------------------
gpu100::Measure measure_version(const Version& v, DeviceData& d, const Shape& s,
                                const Reference& ref) {
  return {.name = v.name,
          .launch = [&v, &d, s](cudaStream_t st) { launch(v, d, s, st); },
          .reset = [&d] { d.y.poison(); },
          .check =
              [&d, &ref] {
                return gpu100::compare_within(d.y.download(), ref.y, ref.bound,
                                              "fp32 accumulation bound + fp16 rounding");
              },
          .work = weight_bytes(v, s)};
}

// ---- inputs and analysis ------------------------------------------------------------------------
// Uniform weights, each run of 32 along K at its own magnitude in [1/8, 2): groups differ in
// scale, so a weight read with its neighbouring group's scale is visibly wrong.
std::vector<float> make_weights(const Shape& s, uint64_t seed) {
  auto w = gpu100::random_floats(size_t(s.rows * s.k), seed);
  const int64_t runs = gpu100::ceil_div<int64_t>(s.k, 32);
  const auto mag = gpu100::random_floats(size_t(s.rows * runs), seed + 1, 0.125f, 2.0f);
  for (int64_t r = 0; r < s.rows; ++r)
    for (int64_t kk = 0; kk < s.k; ++kk) w[size_t(r * s.k + kk)] *= mag[size_t(r * runs + kk / 32)];
  return w;
}

// fp16 weights padded to k_padded, and their values as the reference sees them.
std::vector<__half> to_half_padded(const std::vector<float>& w, const Shape& s,
                                   std::vector<double>& exact) {
  std::vector<__half> h(size_t(s.rows * s.k_padded), __float2half_rn(0.0f));
  exact.resize(size_t(s.rows * s.k));
  for (int64_t r = 0; r < s.rows; ++r)
    for (int64_t kk = 0; kk < s.k; ++kk) {
      h[size_t(r * s.k_padded + kk)] = __float2half_rn(w[size_t(r * s.k + kk)]);
      exact[size_t(r * s.k + kk)] = double(__half2float(h[size_t(r * s.k_padded + kk)]));
    }
  return h;
}

// On a GPU: each quantized version's time against fp16's (the weight bytes fall about 4x).
void note_speedups(gpu100::Context& ctx, const std::vector<gpu100::Measure>& runs,
                   const std::vector<gpu100::Measured>& measured, const Shape& s) {
  const Version& fp16 = kVersions[0];
  ctx.report().note(fmt::format("weight bytes: fp16 / int4 = {:.2f}, fp16 / nf4 = {:.2f}",
                                weight_bytes(fp16, s) / weight_bytes(kVersions[1], s),
                                weight_bytes(fp16, s) / weight_bytes(kVersions[4], s)));
  if (ctx.device().emulated) return;
  const auto& base = gpu100::measured_of("fp16", runs, measured);
  if (!base.ran) return;
  for (const Version& v : kVersions) {
    const auto& m = gpu100::measured_of(v.name, runs, measured);
    if (v.kind != Kind::fp16 && m.ran && m.time.median_ms > 0)
      ctx.report().note(fmt::format("fp16 time / {} time: {:.2f}", v.name,
                                    base.time.median_ms / m.time.median_ms));
  }
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("GEMV y = W x, W in 4 bits (int4 groups of 128, NF4 blocks of 64), x and y fp16");
  int64_t rows = 16387, k = 8232;
  cli.size("rows", rows, 203, "rows of W (outputs)", int64_t(1) << 26);
  cli.size("k", k, 1100, "columns of W (inputs)", int64_t(1) << 26);
  cli.kernels_of(kVersions);
  // fp16 W, two 4-bit copies of each format, scales, x and y, and the copy baseline's two buffers.
  cli.device_bytes(
      [&] { return double(rows) * double(k + 32) * (2 + 4 * 0.5 + 0.1 + 2) + 4.0 * k; });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    const Shape s = make_shape(rows, k);
    report.problem("k_padded", double(s.k_padded));
    CUDA_CHECK(cudaMemcpyToSymbol(c_codebook, kInt4Levels, sizeof kInt4Levels));
    CUDA_CHECK(cudaMemcpyToSymbol(c_codebook, kNf4Levels, sizeof kNf4Levels, sizeof kInt4Levels));

    const auto w = make_weights(s, ctx.seed());
    const auto xf = gpu100::random_floats(size_t(k), ctx.seed() + 2);
    std::vector<__half> x(size_t(s.k_padded), __float2half_rn(0.0f));
    for (int64_t i = 0; i < k; ++i) x[size_t(i)] = __float2half_rn(xf[size_t(i)]);

    std::vector<double> w16_exact;
    const auto w16 = to_half_padded(w, s, w16_exact);
    const auto int4 = quantize<Fmt::int4>(w, s);
    const auto nf4 = quantize<Fmt::nf4>(w, s);
    const Reference ref16 = gemv_reference(w16_exact, x, s);
    const Reference ref_int4 = gemv_reference(int4.dequantized, x, s);
    const Reference ref_nf4 = gemv_reference(nf4.dequantized, x, s);

    DeviceData d;
    d.w16 = gpu100::DeviceBuffer<__half>(w16);
    d.x = gpu100::DeviceBuffer<__half>(x);
    d.y = gpu100::DeviceBuffer<__half>(size_t(rows));
    d.int4_words = gpu100::DeviceBuffer<uint32_t>(int4.words);
    d.int4_words_vec = gpu100::DeviceBuffer<uint32_t>(int4.words_vec);
    d.int4_scales = gpu100::DeviceBuffer<__half>(int4.scales_half);
    d.nf4_words = gpu100::DeviceBuffer<uint32_t>(nf4.words);
    d.nf4_words_vec = gpu100::DeviceBuffer<uint32_t>(nf4.words_vec);
    d.nf4_scales = gpu100::DeviceBuffer<float>(nf4.scales_float);
    // A copy that reads and writes as many bytes as the fp16 GEMV reads.
    ctx.copy_baseline(size_t(rows) * size_t(k));

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions)
      runs.push_back(measure_version(v, d, s,
                                     v.kind == Kind::fp16 ? ref16
                                     : v.fmt == Fmt::int4 ? ref_int4
                                                          : ref_nf4));
    const auto measured = ctx.measure_all(runs);
    note_speedups(ctx, runs, measured, s);
  });
}
