// Day 063 - NF4 quantization: 4-bit NormalFloat codes in blocks of 64, double-quantized scales
//
// QLoRA stores a model's frozen weights in 4 bits. Weights are roughly normal, so the 16 levels
// are placed at quantiles of the standard normal distribution (NormalFloat, NF4) instead of
// evenly: each level then stands for about as many weights as any other. A block of 64 weights
// shares one scale, its absolute maximum (absmax); a weight becomes the index of the level
// nearest to w / absmax, two indices per byte. The scales themselves cost 32 bits per 64 weights,
// half a bit per weight, so QLoRA quantizes them again ("double quantization"): subtract their
// mean, then 8 bits each with one fp32 scale per 256 of them. The program derives the 16 levels
// from the normal quantiles (CPU, double) and compares them with the published table, prints the
// bits stored per parameter, and quantizes and dequantizes on the GPU, bit for bit as the CPU does.
//
// Versions
//   quantize_thread  one thread per block of 64: scalar loads, two passes over the block (absmax,
//                    then codes), one byte stored at a time. Neighbouring lanes are 256 bytes
//                    apart, so every load and store request of a warp touches 32 sectors.
//   quantize_warp    one warp per block, two weights per lane (float2 loads, 256 bytes a request),
//                    the absmax by shuffles, one byte of codes per lane (32 bytes a request); the
//                    blocks' scales gathered in shared memory and stored together.
//   quantize_vec     16 lanes per block, four weights per lane (float4 loads, 512 bytes a
//                    request), two bytes of codes per lane.
//   double_quant     the absmax scales: their mean (fixed-order sums per 256, then of those), and
//                    per 256 scales the absmax of scale - mean and an int8 code per scale.
//   dequantize       codes + double-quantized scales -> fp32 weights, 4 weights (a 16-bit load
//                    of codes) per thread, one float4 store.
//
// The level nearest to v is found among the 15 midpoints between levels by a four-step binary
// search in shared memory (the midpoints as fp32 data, the same on the CPU). The first weight of
// a pair goes in the high nibble, as bitsandbytes packs them.
//
// The 8-bit code of the scales: QLoRA keeps them in bitsandbytes' dynamic 8-bit float map; here
// they are linear int8 (round(127 (c - mean) / absmax2)). The bytes per parameter are the same.
//
// Check: every output bit for bit against the CPU (codes, scales, int8 codes, mean, dequantized
// weights); every operation whose rounding matters is one IEEE operation on both sides (a product,
// a quotient, an fmaf) in the same order, sums in the same fixed tree. The CPU codes are checked to
// be the nearest levels, and the derived levels against the published ones.
//
// Run:  build/bin/day063 [--n 67108867] [--kernel quantize_vec,dequantize] [--json out.json]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kBlock = 64;        // weights per absmax scale
constexpr int kScaleGroup = 256;  // absmax scales per second-level (fp32) scale
constexpr int kThreads = 256;     // threads per CTA (the double-quant kernels rely on 256)
static_assert(kThreads == kScaleGroup, "one CTA reduces one group of scales");

// ---- the NF4 levels, derived --------------------------------------------------------------------
// Phi(x) = P(N(0,1) <= x) = erfc(-x / sqrt 2) / 2; its inverse by bisection in double, which
// halves the bracket until it cannot shrink further (the last bit of a double).
double normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

double normal_quantile(double p) {
  double lo = -40.0, hi = 40.0;
  for (;;) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) return mid;
    (normal_cdf(mid) < p ? lo : hi) = mid;
  }
}

// QLoRA's asymmetric construction: 8 quantiles of the positive half and 7 of the negative half,
// equally spaced in probability from 1/2 (excluded: it is the shared 0) to delta, then all divided
// by the largest so that they span [-1, 1] with 0 exact. The outermost probability delta cannot be
// 1 (an infinite quantile): it is halfway between 1 - 1/(2*15) and 1 - 1/(2*16), the centres of the
// outermost of 15 and of 16 equal bins.
std::vector<double> nf4_levels_derived() {
  const double delta = 1.0 - 0.5 * (1.0 / (2 * 15) + 1.0 / (2 * 16));
  const double top = normal_quantile(delta);
  std::vector<double> v;
  for (int k = 7; k >= 1; --k) v.push_back(-normal_quantile(0.5 + (delta - 0.5) * k / 7) / top);
  v.push_back(0.0);
  for (int k = 1; k <= 8; ++k) v.push_back(normal_quantile(0.5 + (delta - 0.5) * k / 8) / top);
  return v;
}

// The table published with QLoRA (bitsandbytes' NF4 code), quoted as data.
// clang-format off
constexpr double kPublishedNf4[16] = {
    -1.0,                 -0.6961928009986877,  -0.5250730514526367, -0.39491748809814453,
    -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
    0.07958029955625534,  0.16093020141124725,  0.24611230194568634, 0.33791524171829224,
    0.44070982933044434,  0.5626170039176941,   0.7229568362236023,  1.0};
// clang-format on

// bitsandbytes computed its probabilities in fp32 (torch.linspace) from delta typed as 0.9677083:
// each probability is off by up to 2^-24 + 3.4e-8, which moves a quantile by that over the normal
// density (>= 0.072 at the outermost, x = 1.85): <= 1.3e-6, or 7e-7 after the division by 1.85 that
// normalizes, on both the level and the divisor, plus the fp32 rounding of the result (6e-8).
constexpr double kPublishedTolerance = 2e-6;

// The levels and the 15 midpoints between them, as the fp32 data every kernel and the CPU use.
struct Codebook {
  float level[16];
  float midpoint[15];  // v > midpoint[i] means v is nearer level i + 1 than level i
};

Codebook make_codebook(const std::vector<double>& levels) {
  Codebook c{};
  for (int i = 0; i < 16; ++i) c.level[i] = float(levels[size_t(i)]);
  for (int i = 0; i < 15; ++i) c.midpoint[i] = 0.5f * (c.level[i] + c.level[i + 1]);
  return c;
}

__constant__ Codebook c_codebook;

// ---- shared by the CPU and the kernels ----------------------------------------------------------
// 1 / absmax, or 0 for an all-zero block (every weight then takes the code of 0).
GPU100_HD inline float inverse_scale(float absmax) {
  return absmax > 0.0f ? 1.0f / absmax : 0.0f;
}

// The double-quantized absmax of a block: int8 code q, its group's absmax2, the mean. One fmaf.
GPU100_HD inline float dequantized_absmax(int8_t q, float absmax2, float mean) {
  return fmaf(float(q), absmax2 / 127.0f, mean);
}

// ---- CPU reference ------------------------------------------------------------------------------
// The code of v: how many midpoints lie below it (a linear count; the kernels search).
uint8_t nf4_code_cpu(float v, const Codebook& cb) {
  int code = 0;
  for (float m : cb.midpoint) code += v > m;
  return uint8_t(code);
}

struct Quantized {
  std::vector<uint8_t> codes;  // ceil(n / 2) bytes, first weight of a pair in the high nibble
  std::vector<float> absmax;   // one per block of 64
};

Quantized quantize_cpu(const std::vector<float>& x, const Codebook& cb) {
  const int64_t n = int64_t(x.size()), blocks = gpu100::ceil_div<int64_t>(n, kBlock);
  Quantized q{std::vector<uint8_t>(size_t((n + 1) / 2), 0), std::vector<float>(size_t(blocks))};
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t begin = b * kBlock, end = std::min(n, begin + kBlock);
    float m = 0.0f;
    for (int64_t i = begin; i < end; ++i) m = std::max(m, std::fabs(x[size_t(i)]));
    q.absmax[size_t(b)] = m;
    const float inv = inverse_scale(m);
    for (int64_t i = begin; i < end; ++i) {
      const uint8_t code = nf4_code_cpu(x[size_t(i)] * inv, cb);
      q.codes[size_t(i / 2)] |= uint8_t(i % 2 == 0 ? code << 4 : code);
    }
  }
  return q;
}

// The tree a CTA of 256 threads sums in: s[t] += s[t + stride] for stride 128, 64, ..., 1.
float tree_sum_256(std::vector<float> s) {
  for (int stride = kThreads / 2; stride > 0; stride /= 2)
    for (int t = 0; t < stride; ++t) s[size_t(t)] += s[size_t(t + stride)];
  return s[0];
}

struct DoubleQuantized {
  std::vector<float> partial;  // the sum of each group of 256 scales
  float mean = 0;
  std::vector<int8_t> q;       // one per absmax scale
  std::vector<float> absmax2;  // one per group of 256: max |absmax - mean|
};

DoubleQuantized double_quantize_cpu(const std::vector<float>& absmax) {
  const int64_t blocks = int64_t(absmax.size()),
                groups = gpu100::ceil_div<int64_t>(blocks, kScaleGroup);
  DoubleQuantized d;
  for (int64_t g = 0; g < groups; ++g) {
    std::vector<float> s(kThreads, 0.0f);
    for (int t = 0; t < kThreads && g * kScaleGroup + t < blocks; ++t)
      s[size_t(t)] = absmax[size_t(g * kScaleGroup + t)];
    d.partial.push_back(tree_sum_256(s));
  }
  std::vector<float> s(kThreads, 0.0f);  // thread t adds partials t, t + 256, ... in order
  for (int64_t i = 0; i < groups; ++i) s[size_t(i % kThreads)] += d.partial[size_t(i)];
  d.mean = tree_sum_256(s) / float(blocks);
  d.q.resize(size_t(blocks));
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t begin = g * kScaleGroup, end = std::min(blocks, begin + kScaleGroup);
    float a2 = 0.0f;
    for (int64_t i = begin; i < end; ++i) a2 = std::max(a2, std::fabs(absmax[size_t(i)] - d.mean));
    d.absmax2.push_back(a2);
    const float inv = a2 > 0.0f ? 127.0f / a2 : 0.0f;
    for (int64_t i = begin; i < end; ++i)
      d.q[size_t(i)] =
          int8_t(std::clamp(std::nearbyint((absmax[size_t(i)] - d.mean) * inv), -127.0f, 127.0f));
  }
  return d;
}

std::vector<float> dequantize_cpu(const Quantized& q, const DoubleQuantized& d, int64_t n,
                                  const Codebook& cb) {
  std::vector<float> w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t b = i / kBlock;
    const float scale =
        dequantized_absmax(d.q[size_t(b)], d.absmax2[size_t(b / kScaleGroup)], d.mean);
    const uint8_t byte = q.codes[size_t(i / 2)];
    w[size_t(i)] = cb.level[i % 2 == 0 ? byte >> 4 : byte & 15] * scale;
  }
  return w;
}

// ---- kernels: quantize --------------------------------------------------------------------------
// The midpoints into shared memory: the search's indices differ between lanes, which constant
// memory would serialize, while 15 words in 15 banks serve a warp in one wavefront.
__device__ __forceinline__ void load_midpoints(float* s_mid) {
  if (threadIdx.x < 15) s_mid[threadIdx.x] = c_codebook.midpoint[threadIdx.x];
  __syncthreads();
}

// How many midpoints lie below v, by binary search: the count is at least 8 if v is above
// midpoint 7, then +4, +2, +1 on the half that remains.
__device__ __forceinline__ uint32_t nf4_code(float v, const float* s_mid) {
  uint32_t c = v > s_mid[7] ? 8 : 0;
  c += v > s_mid[c + 3] ? 4 : 0;
  c += v > s_mid[c + 1] ? 2 : 0;
  c += v > s_mid[c] ? 1 : 0;
  return c;
}

__global__ void quantize_thread(const float* __restrict__ x, uint8_t* __restrict__ codes,
                                float* __restrict__ absmax, int64_t n) {
  __shared__ float s_mid[15];
  load_midpoints(s_mid);
  const int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t begin = b * kBlock, end = min(n, begin + kBlock);
  if (begin >= n) return;
  float m = 0.0f;
  for (int64_t i = begin; i < end; ++i) m = fmaxf(m, fabsf(x[i]));
  absmax[b] = m;
  const float inv = inverse_scale(m);
  for (int64_t i = begin; i < end; i += 2) {
    const uint32_t hi = nf4_code(x[i] * inv, s_mid);
    const uint32_t lo = i + 1 < end ? nf4_code(x[i + 1] * inv, s_mid) : 0;
    codes[i / 2] = uint8_t(hi << 4 | lo);
  }
}

// LANES lanes per block of 64, 64 / LANES consecutive weights each (2: float2, 4: float4). Every
// thread of the grid takes part in the shuffles (the mask is the whole warp); those past the end
// load zeros and store nothing.
template <int LANES>
__global__ void quantize_lanes(const float* __restrict__ x, uint8_t* __restrict__ codes,
                               float* __restrict__ absmax, int64_t n) {
  constexpr int kPer = kBlock / LANES;
  static_assert(kPer == 2 || kPer == 4, "a float2 or a float4 per lane");
  constexpr int kBlocksPerCta = kThreads / LANES;
  __shared__ float s_mid[15];
  __shared__ float s_absmax[kBlocksPerCta];
  load_midpoints(s_mid);

  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t begin = t * kPer;  // blocks are 64 = LANES * kPer weights: t / LANES is the block
  float v[kPer];
  if (begin + kPer <= n) {
    if constexpr (kPer == 2) {
      const float2 f = *reinterpret_cast<const float2*>(x + begin);
      v[0] = f.x, v[1] = f.y;
    } else {
      const float4 f = *reinterpret_cast<const float4*>(x + begin);
      v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
    }
  } else {
    for (int j = 0; j < kPer; ++j) v[j] = begin + j < n ? x[begin + j] : 0.0f;
  }
  float m = 0.0f;
  for (int j = 0; j < kPer; ++j) m = fmaxf(m, fabsf(v[j]));
  for (int offset = LANES / 2; offset > 0; offset /= 2)
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
  const float inv = inverse_scale(m);

  uint32_t packed = 0;  // kPer / 2 bytes, the first in the lowest byte (memory order)
  for (int j = 0; j < kPer; j += 2) {
    const uint32_t hi = nf4_code(v[j] * inv, s_mid);
    const uint32_t lo = begin + j + 1 < n ? nf4_code(v[j + 1] * inv, s_mid) : 0;  // odd n: empty
    packed |= (hi << 4 | lo) << (4 * j);
  }
  if (begin + kPer <= n) {
    if constexpr (kPer == 2)
      codes[begin / 2] = uint8_t(packed);
    else
      *reinterpret_cast<uint16_t*>(codes + begin / 2) = uint16_t(packed);
  } else {
    for (int j = 0; j < kPer && begin + j < n; j += 2)
      codes[(begin + j) / 2] = uint8_t(packed >> (4 * j));
  }

  // One store of the CTA's scales instead of one per warp: full sectors.
  if (threadIdx.x % LANES == 0) s_absmax[threadIdx.x / LANES] = m;
  __syncthreads();
  const int64_t first = int64_t(blockIdx.x) * kBlocksPerCta;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  if (threadIdx.x < kBlocksPerCta && first + threadIdx.x < blocks)
    absmax[first + threadIdx.x] = s_absmax[threadIdx.x];
}

// ---- kernels: double quantization of the scales -------------------------------------------------
// The fixed tree tree_sum_256 describes; every thread of the CTA calls it.
__device__ float cta_tree_sum(float v, float* s) {
  s[threadIdx.x] = v;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  return s[0];
}

__global__ void scale_group_sums(const float* __restrict__ absmax, float* __restrict__ partial,
                                 int64_t blocks) {
  __shared__ float s[kThreads];
  const int64_t i = int64_t(blockIdx.x) * kScaleGroup + threadIdx.x;
  const float total = cta_tree_sum(i < blocks ? absmax[i] : 0.0f, s);
  if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

// One CTA: thread t adds partials t, t + 256, ... in order, then the tree.
__global__ void scale_mean(const float* __restrict__ partial, float* __restrict__ mean,
                           int64_t groups, int64_t blocks) {
  __shared__ float s[kThreads];
  float v = 0.0f;
  for (int64_t i = threadIdx.x; i < groups; i += kThreads) v += partial[i];
  const float total = cta_tree_sum(v, s);
  if (threadIdx.x == 0) *mean = total / float(blocks);
}

__global__ void scale_quantize(const float* __restrict__ absmax, const float* __restrict__ mean,
                               int8_t* __restrict__ q, float* __restrict__ absmax2,
                               int64_t blocks) {
  __shared__ float s_warp_max[kThreads / 32];
  const int64_t i = int64_t(blockIdx.x) * kScaleGroup + threadIdx.x;
  const float centred = i < blocks ? absmax[i] - *mean : 0.0f;
  float m = fabsf(centred);
  for (int offset = 16; offset > 0; offset /= 2)
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
  if (threadIdx.x % 32 == 0) s_warp_max[threadIdx.x / 32] = m;
  __syncthreads();
  float a2 = 0.0f;
  for (int w = 0; w < kThreads / 32; ++w) a2 = fmaxf(a2, s_warp_max[w]);
  const float inv = a2 > 0.0f ? 127.0f / a2 : 0.0f;
  if (i < blocks) q[i] = int8_t(fminf(fmaxf(rintf(centred * inv), -127.0f), 127.0f));
  if (threadIdx.x == 0) absmax2[blockIdx.x] = a2;
}

// ---- kernels: dequantize ------------------------------------------------------------------------
// Thread t: weights 4t .. 4t + 3, two bytes of codes (a 16-bit load), one float4 store; a warp
// writes 512 contiguous bytes per request. The four lie in one block of 64.
__global__ void dequantize(const uint8_t* __restrict__ codes, const int8_t* __restrict__ q,
                           const float* __restrict__ absmax2, const float* __restrict__ mean,
                           float* __restrict__ w, int64_t n) {
  __shared__ float s_level[16];
  if (threadIdx.x < 16) s_level[threadIdx.x] = c_codebook.level[threadIdx.x];
  __syncthreads();
  const int64_t begin = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
  if (begin >= n) return;
  const int64_t b = begin / kBlock;
  const float scale = dequantized_absmax(q[b], absmax2[b / kScaleGroup], *mean);
  if (begin + 4 <= n) {
    const uint32_t pair = *reinterpret_cast<const uint16_t*>(codes + begin / 2);
    // The first byte in memory is the low byte; in each byte the first weight is the high nibble.
    *reinterpret_cast<float4*>(w + begin) =
        make_float4(s_level[(pair >> 4) & 15] * scale, s_level[pair & 15] * scale,
                    s_level[(pair >> 12) & 15] * scale, s_level[(pair >> 8) & 15] * scale);
  } else {
    for (int64_t i = begin; i < n; ++i) {
      const uint32_t byte = codes[i / 2];
      w[i] = s_level[i % 2 == 0 ? byte >> 4 : byte & 15] * scale;
    }
  }
}

// ---- launchers ----------------------------------------------------------------------------------
enum class Kind { quantize_thread, quantize_warp, quantize_vec, double_quant, dequantize };
struct Version {
  const char* name;
  Kind kind;
};
const Version kVersions[] = {
    {"quantize_thread", Kind::quantize_thread}, {"quantize_warp", Kind::quantize_warp},
    {"quantize_vec", Kind::quantize_vec},       {"double_quant", Kind::double_quant},
    {"dequantize", Kind::dequantize},
};

struct Sizes {
  int64_t n, blocks, groups;
};

struct DeviceData {
  gpu100::DeviceBuffer<float> x, absmax, absmax_ref, partial, mean, absmax2, w;
  gpu100::DeviceBuffer<uint8_t> codes, codes_ref;
  gpu100::DeviceBuffer<int8_t> q;
  // The CPU's double quantization, the dequantize version's input.
  gpu100::DeviceBuffer<int8_t> q_ref;
  gpu100::DeviceBuffer<float> absmax2_ref, mean_ref;
};

void launch_quantize(Kind kind, DeviceData& d, const Sizes& s, cudaStream_t st) {
  if (kind == Kind::quantize_thread)
    quantize_thread<<<gpu100::grid_for(s.blocks, kThreads), kThreads, 0, st>>>(
        d.x.data(), d.codes.data(), d.absmax.data(), s.n);
  else if (kind == Kind::quantize_warp)
    quantize_lanes<32><<<gpu100::grid_for(s.blocks * 32, kThreads), kThreads, 0, st>>>(
        d.x.data(), d.codes.data(), d.absmax.data(), s.n);
  else
    quantize_lanes<16><<<gpu100::grid_for(s.blocks * 16, kThreads), kThreads, 0, st>>>(
        d.x.data(), d.codes.data(), d.absmax.data(), s.n);
  LAUNCH_CHECK();
}

// Reads the CPU's absmax scales, so that it is checked apart from the quantize versions.
void launch_double_quant(DeviceData& d, const Sizes& s, cudaStream_t st) {
  const unsigned groups = unsigned(s.groups);
  scale_group_sums<<<groups, kThreads, 0, st>>>(d.absmax_ref.data(), d.partial.data(), s.blocks);
  scale_mean<<<1, kThreads, 0, st>>>(d.partial.data(), d.mean.data(), s.groups, s.blocks);
  scale_quantize<<<groups, kThreads, 0, st>>>(d.absmax_ref.data(), d.mean.data(), d.q.data(),
                                              d.absmax2.data(), s.blocks);
  LAUNCH_CHECK();
}

void launch_dequantize(DeviceData& d, const Sizes& s, cudaStream_t st) {
  dequantize<<<gpu100::grid_for(gpu100::ceil_div<int64_t>(s.n, 4), kThreads), kThreads, 0, st>>>(
      d.codes_ref.data(), d.q_ref.data(), d.absmax2_ref.data(), d.mean_ref.data(), d.w.data(), s.n);
  LAUNCH_CHECK();
}

// ---- the versions: each one's run and check -----------------------------------------------------
struct Reference {
  Quantized quant;
  DoubleQuantized dq;
  std::vector<float> w;  // dequantized
};

gpu100::CheckResult check_quantize(const DeviceData& d, const Reference& ref) {
  return gpu100::combine(gpu100::compare_exact(d.codes.download(), ref.quant.codes),
                         gpu100::compare_exact(d.absmax.download(), ref.quant.absmax));
}

gpu100::CheckResult check_double_quant(const DeviceData& d, const Reference& ref) {
  auto c = gpu100::combine(gpu100::compare_exact(d.q.download(), ref.dq.q),
                           gpu100::compare_exact(d.absmax2.download(), ref.dq.absmax2));
  c = gpu100::combine(c, gpu100::compare_exact(d.partial.download(), ref.dq.partial));
  return gpu100::combine(c,
                         gpu100::compare_exact(d.mean.download(), std::vector<float>{ref.dq.mean}));
}

// Bytes each version reads and writes once.
double bytes_of(Kind kind, const Sizes& s) {
  const double codes = double((s.n + 1) / 2), scales = 4.0 * double(s.blocks);
  switch (kind) {
    case Kind::quantize_thread:
    case Kind::quantize_warp:
    case Kind::quantize_vec:
      return 4.0 * double(s.n) + codes + scales;
    case Kind::double_quant:  // the scales twice (sums, codes); int8 codes, absmax2, partials out
      return 2 * scales + double(s.blocks) + 8.0 * double(s.groups) + 8;
    case Kind::dequantize:
      return codes + double(s.blocks) + 4.0 * double(s.groups) + 4 + 4.0 * double(s.n);
  }
  return 0;
}

gpu100::Measure measure_version(const Version& v, DeviceData& d, const Sizes& s,
                                const Reference& ref) {
  gpu100::Measure m{.name = v.name, .work = bytes_of(v.kind, s)};
  switch (v.kind) {
    case Kind::double_quant:
      m.launch = [&d, s](cudaStream_t st) { launch_double_quant(d, s, st); };
      m.reset = [&d] { d.q.poison(), d.absmax2.poison(), d.partial.poison(), d.mean.poison(); };
      m.check = [&d, &ref] { return check_double_quant(d, ref); };
      break;
    case Kind::dequantize:
      m.launch = [&d, s](cudaStream_t st) { launch_dequantize(d, s, st); };
      m.reset = [&d] { d.w.poison(); };
      m.check = [&d, &ref] { return gpu100::compare_exact(d.w.download(), ref.w); };
      break;
    default:
      m.launch = [&d, s, kind = v.kind](cudaStream_t st) { launch_quantize(kind, d, s, st); };
      m.reset = [&d] { d.codes.poison(), d.absmax.poison(); };
      m.check = [&d, &ref] { return check_quantize(d, ref); };
  }
  return m;
}

// ---- inputs and analysis ------------------------------------------------------------------------
// Normal weights (Box-Muller), each block of 64 at its own magnitude in [0.25, 2): the absmax
// scales vary, so their double quantization has something to do.
std::vector<float> normal_weights(int64_t n, uint64_t seed) {
  const auto u = gpu100::random_floats(size_t(2 * n), seed, 0.0f, 1.0f);
  const auto mag =
      gpu100::random_floats(size_t(gpu100::ceil_div<int64_t>(n, kBlock)), seed + 1, 0.25f, 2.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double r = std::sqrt(-2.0 * std::log(1.0 - double(u[size_t(2 * i)])));
    x[size_t(i)] =
        float(mag[size_t(i / kBlock)] * r * std::cos(6.283185307179586 * u[size_t(2 * i + 1)]));
  }
  return x;
}

gpu100::CheckResult check_levels(const std::vector<double>& derived) {
  gpu100::ErrorStats s(gpu100::Tolerance::Custom(kPublishedTolerance, kPublishedTolerance));
  for (int i = 0; i < 16; ++i) s.add(derived[size_t(i)], kPublishedNf4[i], i);
  auto c = s.finish();  // max|published| = 1: the bound is absolute
  c.tolerance = fmt::format("published NF4 table, max abs {:g}", kPublishedTolerance);
  return c;
}

// Each CPU code is the level nearest to its normalized weight (in double, up to the fp32 rounding
// of the midpoints, 2^-25 at most).
gpu100::CheckResult check_nearest(const std::vector<float>& x, const Quantized& q,
                                  const Codebook& cb) {
  gpu100::CheckResult r;
  r.checked = true;
  r.tolerance = "nearest level";
  r.count = int64_t(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = double(x[i] * inverse_scale(q.absmax[i / kBlock]));
    const uint8_t byte = q.codes[i / 2];
    const int code = i % 2 == 0 ? byte >> 4 : byte & 15;
    const double mine = std::fabs(v - cb.level[code]);
    for (float l : cb.level)
      if (std::fabs(v - l) < mine - 0x1p-25) {
        if (r.mismatches++ == 0)
          r.worst_index = int64_t(i), r.worst_got = mine, r.worst_ref = std::fabs(v - l);
        break;
      }
  }
  r.pass = r.mismatches == 0 && r.count > 0;
  return r;
}

// Bits stored per parameter: the codes (ceil(n / 2) bytes), an int8 code per block of 64, an
// fp32 absmax2 per 256 blocks and the fp32 mean.
double bits_per_parameter(const Sizes& s) {
  return (8.0 * double((s.n + 1) / 2) + 8.0 * double(s.blocks) + 32.0 * double(s.groups) + 32.0) /
         double(s.n);
}

// The same for each form of the scales.
gpu100::Table storage_table(const Sizes& s) {
  const double single = (8.0 * double((s.n + 1) / 2) + 32.0 * double(s.blocks)) / double(s.n);
  gpu100::Table t{"storage per parameter", {"format", "bits per parameter", "bytes per parameter"}};
  t.add_row({"fp32", 32.0, 4.0});
  t.add_row({"NF4 + fp32 absmax / 64", single, single / 8});
  t.add_row({"NF4 + double-quantized absmax", bits_per_parameter(s), bits_per_parameter(s) / 8});
  const double limit = 4.0 + 8.0 / kBlock + 32.0 / (kBlock * kScaleGroup);
  t.add_row({"  the same as n grows: 4 + 8/64 + 32/(64*256)", limit, limit / 8});
  return t;
}

// Round trip (CPU): the weights rebuilt from their codes against the originals, relative to each
// block's absmax, with the fp32 absmax (at most half the widest gap between levels, as the codes
// are the nearest levels) and with the double-quantized one (plus the 8-bit scale's error).
void note_round_trip(gpu100::Report& report, const std::vector<float>& x, const Reference& ref,
                     const Codebook& cb) {
  double worst_fp32 = 0, worst_dq = 0, sum2 = 0, ref2 = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double absmax = ref.quant.absmax[i / kBlock];
    const uint8_t byte = ref.quant.codes[i / 2];
    const double w_fp32 = double(cb.level[i % 2 == 0 ? byte >> 4 : byte & 15]) * absmax;
    const double e = double(ref.w[i]) - x[i];
    if (absmax > 0) {
      worst_fp32 = std::max(worst_fp32, std::fabs(w_fp32 - x[i]) / absmax);
      worst_dq = std::max(worst_dq, std::fabs(e) / absmax);
    }
    sum2 += e * e;
    ref2 += double(x[i]) * x[i];
  }
  report.note(fmt::format(
      "round trip (CPU): worst |w' - w| / absmax {:.4f} with the fp32 absmax (half the widest gap "
      "between levels: {:.4f}), {:.4f} with the double-quantized one; ||w' - w|| / ||w|| = {:.4f}",
      worst_fp32, 0.5 * (cb.level[1] - cb.level[0]), worst_dq, std::sqrt(sum2 / ref2)));
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("NF4 blockwise quantization with double-quantized scales, and dequantization");
  int64_t n = (int64_t(1) << 26) + 3;
  cli.size("n", n, 100'003, "number of weights", int64_t(1) << 32);
  cli.kernels_of(kVersions);
  cli.device_bytes([&] { return 17.5 * double(n); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    const Sizes s{n, gpu100::ceil_div<int64_t>(n, kBlock),
                  gpu100::ceil_div<int64_t>(gpu100::ceil_div<int64_t>(n, kBlock), kScaleGroup)};
    report.problem("blocks", double(s.blocks));
    report.problem("scale_groups", double(s.groups));

    const auto levels = nf4_levels_derived();
    report.add_check("NF4 levels from normal quantiles vs published", check_levels(levels));
    const Codebook cb = make_codebook(levels);
    CUDA_CHECK(cudaMemcpyToSymbol(c_codebook, &cb, sizeof cb));

    const auto x = normal_weights(n, ctx.seed());
    Reference ref;
    ref.quant = quantize_cpu(x, cb);
    ref.dq = double_quantize_cpu(ref.quant.absmax);
    ref.w = dequantize_cpu(ref.quant, ref.dq, n, cb);
    report.add_check("CPU codes are the nearest levels", check_nearest(x, ref.quant, cb));

    DeviceData d;
    d.x = gpu100::DeviceBuffer<float>(x);
    d.codes = gpu100::DeviceBuffer<uint8_t>(ref.quant.codes.size());
    d.absmax = gpu100::DeviceBuffer<float>(size_t(s.blocks));
    d.codes_ref = gpu100::DeviceBuffer<uint8_t>(ref.quant.codes);
    d.absmax_ref = gpu100::DeviceBuffer<float>(ref.quant.absmax);
    d.partial = gpu100::DeviceBuffer<float>(size_t(s.groups));
    d.mean = gpu100::DeviceBuffer<float>(1);
    d.q = gpu100::DeviceBuffer<int8_t>(size_t(s.blocks));
    d.absmax2 = gpu100::DeviceBuffer<float>(size_t(s.groups));
    d.q_ref = gpu100::DeviceBuffer<int8_t>(ref.dq.q);
    d.absmax2_ref = gpu100::DeviceBuffer<float>(ref.dq.absmax2);
    d.mean_ref = gpu100::DeviceBuffer<float>(std::vector<float>{ref.dq.mean});
    d.w = gpu100::DeviceBuffer<float>(size_t(n));
    ctx.copy_baseline(size_t(n) *
                      sizeof(float));  // an fp32 copy: what quantize reads, written back

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) runs.push_back(measure_version(v, d, s, ref));
    ctx.measure_all(runs);

    report.problem("bits_per_parameter", bits_per_parameter(s));
    report.table(storage_table(s));
    note_round_trip(report, x, ref, cb);
  });
}
