// Day 068 - mixed precision: fp16/bf16 rounding, dynamic loss scaling, stochastic rounding, Kahan
//
// Training in 16-bit formats keeps a few fp32 copies and a few tricks around the 16-bit math. Each
// trick answers one way the narrow formats lose information, and each is shown beside the naive
// way on the same data (the error table):
//   * Rounding. fp16 keeps 11 significant bits over a range of 2^-24 .. 65504; bf16 keeps 8 over
//     fp32's range. cvt.rn rounds to nearest, ties to even: relative error <= 2^-11 / 2^-8 in the
//     normal range, gradual underflow below it, infinity above.
//   * Loss scaling. Gradients are small: below 2^-25 they round to zero in fp16 (its smallest
//     subnormal is 2^-24) and below 2^-14 they lose bits. Multiplying the loss (hence every
//     gradient) by S moves them into range; the fp32 copy is unscaled by 1/S (exact for a power
//     of two). Too large an S overflows: the step is then skipped and S backs off, and after N
//     good steps S grows again (PyTorch's GradScaler: found_inf, backoff_factor 0.5,
//     growth_factor 2, growth_interval).
//   * Stochastic rounding. Adding an update smaller than half an ulp to a bf16 weight rounds it
//     away every time (round-to-nearest stagnates). Rounding up with probability equal to the
//     fraction of an ulp that was cut off makes every rounding unbiased, E[round(x)] = x, so the
//     updates survive on average: add 16 random bits to the fp32 pattern and truncate.
//   * Kahan summation. A long running sum loses the low bits of each small addend; a second
//     variable carries what was lost (c = (t - s) - y) and feeds it back into the next addend.
//
// Versions
//   round_trip          fp32 -> fp16 -> fp32 and fp32 -> bf16 -> fp32: cvt.rn.f16.f32 and
//                       cvt.rn.bf16.f32.
//   stochastic_round    fp32 -> bf16 with 16 random bits (a counter-based hash of seed and index).
//   accumulate_rn/_sr   `accumulators` bf16 weights, each w = round(w + u) `updates` times from 0:
//                       with u = 0.001, round-to-nearest stops at 0.5, where half an ulp is 2^-9.
//   sum_{fp32,bf16}_{naive,kahan}   `chains` running sums over n small values, chain c taking the
//                       elements c, c + chains, ... (coalesced), in fp32 or in bf16 arithmetic.
//   loss_scale_none/_dynamic  `steps` SGD steps on `params` weights with fp16 gradients: 4 launches
//                       a step (fp16 backward, unscale + overflow check, step unless skipped, scale
//                       update), with S fixed at 1 or dynamic from 2^16.
// Check: each version bit for bit against a CPU model of the same operations (each addition,
// conversion and rounding; the host is compiled with -ffp-contract=off), and
//   stochastic_round: |mean(round(x) - x)| within 5 standard errors, from each element's Bernoulli
//   variance ulp^2 f (1 - f); accumulate_sr: |mean(w) - T u| within 5 standard errors of
//   T steps of variance <= ulp^2 / 4 each.
// The error table reports the naive and the compensated versions' errors against exact sums (in
// double) and the gradients' errors against fp32 (from the CPU model the GPU matched bit for bit).
//
// Run:  build/bin/day068 [--n 1000003 --chains 32] [--accumulators 4099 --updates 10001]
//                        [--params 100003 --steps 61 --growth-interval 3]
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kBlock = 256;
constexpr float kUpdate = 0.001f;       // the small update added to each bf16 accumulator
constexpr double kSigmas = 5.0;         // standard errors allowed by the statistical checks
constexpr float kInitScale = 65536.0f;  // GradScaler's init_scale, 2^16
constexpr float kGrowth = 2.0f, kBackoff = 0.5f;
constexpr float kLearningRate = 0.5f;

// ---- shared by the CPU model and the kernels ----------------------------------------------------
// A counter-based random 32-bit value for (seed, index): the splitmix64 finalizer, so the CPU
// model draws exactly the numbers each thread draws, in any order.
GPU100_HD inline uint32_t hash32(uint64_t seed, uint64_t index) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return uint32_t((z ^ (z >> 31)) >> 32);
}

GPU100_HD inline uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

// Stochastic rounding of fp32 to bf16 (the bf16 bit pattern): adding r in [0, 2^16) to the fp32
// pattern carries into the kept 16 bits with probability (cut-off bits) / 2^16, the fraction of
// an ulp below x: rounding up that often and down otherwise makes E[result] = x. Infinity and NaN
// pass through (a NaN keeps a set quiet bit); a value within an ulp of the largest bf16 may round
// up to infinity, as real stochastic-rounding hardware does.
GPU100_HD inline uint16_t bf16_stochastic_bits(float x, uint32_t r) {
  const uint32_t u = float_bits(x);
  if ((u & 0x7F800000u) == 0x7F800000u) return uint16_t((u >> 16) | ((u & 0xFFFFu) ? 0x40u : 0u));
  return uint16_t((u + (r & 0xFFFFu)) >> 16);
}

// The growth and backoff of the loss scale after one step, as GradScaler does it (the kernel's;
// the CPU model states the rule again on its own).
struct ScaleState {
  float scale;
  int good_steps;  // GradScaler's growth tracker: consecutive steps without inf/NaN
};
struct ScalePolicy {
  float growth, backoff;
  int interval;
};
GPU100_HD inline void update_scale_state(ScaleState& s, bool found_inf, const ScalePolicy& p) {
  if (found_inf) {
    s.scale *= p.backoff;
    s.good_steps = 0;
  } else if (++s.good_steps == p.interval) {
    s.scale *= p.growth;
    s.good_steps = 0;
  }
}

// The gradient of step t is 2^exponent * base: small (2^-26), except on every fifth step for one
// element, a spike of 2^3 that overflows fp16 once scaled by 2^13 or more (for |base| near 1).
// One element: an overflow is found however few gradients have it.
GPU100_HD inline int gradient_exponent(int t, int64_t i, int64_t n) {
  return t % 5 == 4 && i == int64_t(t) * 7919 % n ? 3 : -26;
}

// ---- CPU model ----------------------------------------------------------------------------------
// x rounded to nearest, ties to even, in a binary format with p significant bits, smallest normal
// exponent emin and largest finite value max_finite: gradual underflow, overflow to infinity.
// x / ulp is exact (a power of two), and nearbyint rounds ties to even in the default mode.
double round_to_format(double x, int p, int emin, double max_finite) {
  if (!std::isfinite(x) || x == 0.0) return x;
  int e = 0;
  std::frexp(std::fabs(x), &e);  // |x| in [2^(e-1), 2^e)
  const double ulp = std::ldexp(1.0, std::max(e - 1, emin) - (p - 1));
  const double r = std::nearbyint(x / ulp) * ulp;
  return std::fabs(r) > max_finite ? std::copysign(INFINITY, x) : r;
}
double to_fp16(double x) {
  return round_to_format(x, 11, -14, 65504.0);
}
double to_bf16(double x) {
  return round_to_format(x, 8, -126, 0x1.FEp127);
}
double to_fp32(double x) {
  return round_to_format(x, 24, -126, double(std::numeric_limits<float>::max()));
}

float bf16_value(uint16_t bits) {
  const uint32_t u = uint32_t(bits) << 16;
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

double bf16_to_float(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

// The unit in the last place of the bf16 binade of |x| (normal range).
double bf16_ulp(double x) {
  int e = 0;
  std::frexp(std::fabs(x), &e);
  return std::ldexp(1.0, e - 8);
}

// One chain's running sum of x[c], x[c + chains], ... in the given arithmetic; each operation
// rounds the exact result once (a sum of two fp32 or bf16 values is exact in double).
template <bool kBf16, bool kKahan>
double chain_sum_cpu(const std::vector<float>& x, int64_t c, int64_t chains) {
  auto round = [](double v) { return kBf16 ? to_bf16(v) : to_fp32(v); };
  double s = 0, comp = 0;
  for (int64_t i = c; i < int64_t(x.size()); i += chains) {
    if constexpr (kKahan) {
      const double y = round(double(x[size_t(i)]) - comp);
      const double t = round(s + y);
      comp = round(round(t - s) - y);
      s = t;
    } else {
      s = round(s + double(x[size_t(i)]));
    }
  }
  return s;
}

// One accumulator: w = round(float(w) + u), T times, from 0; round-to-nearest or stochastic
// with the numbers hash32(seed, a * T + t).
template <bool kStochastic>
float accumulate_cpu(int64_t a, int64_t updates, uint64_t seed) {
  float w = 0.0f;
  for (int64_t t = 0; t < updates; ++t) {
    const float sum = w + kUpdate;  // fp32 addition, as on the device
    w = kStochastic ? bf16_value(bf16_stochastic_bits(sum, hash32(seed, uint64_t(a * updates + t))))
                    : float(to_bf16(sum));
  }
  return w;
}

// Training with fp16 gradients and a loss scale, step by step as the kernels do it; also the
// largest relative error of an applied step's unscaled gradient against its fp32 value.
struct Training {
  std::vector<float> p;
  std::vector<float> scales;  // the scale each step used
  std::vector<int> skipped;   // 1 where the step found inf/NaN and was skipped
  double worst_grad_error = 0;
};

Training train_cpu(const std::vector<float>& p0, const std::vector<float>& base, int steps,
                   float init_scale, const ScalePolicy& policy) {
  Training r{p0, {}, {}, 0.0};
  ScaleState st{init_scale, 0};
  std::vector<float> g(p0.size());
  for (int t = 0; t < steps; ++t) {
    const float inv_scale = 1.0f / st.scale;  // a power of two: exact
    bool found_inf = false;
    double err2 = 0, ref2 = 0;
    for (size_t i = 0; i < base.size(); ++i) {
      const float grad =
          std::ldexp(base[i], gradient_exponent(t, int64_t(i), int64_t(base.size())));
      const float scaled = grad * st.scale;  // exact or inf
      g[i] = float(to_fp16(scaled)) * inv_scale;
      found_inf = found_inf || !std::isfinite(g[i]);
      err2 += (double(g[i]) - grad) * (double(g[i]) - grad);
      ref2 += double(grad) * grad;
    }
    r.scales.push_back(st.scale);
    r.skipped.push_back(found_inf ? 1 : 0);
    if (!found_inf) {
      for (size_t i = 0; i < r.p.size(); ++i) r.p[i] = r.p[i] - kLearningRate * g[i];
      if (ref2 > 0) r.worst_grad_error = std::max(r.worst_grad_error, std::sqrt(err2 / ref2));
    }
    // GradScaler's update, written out here on its own (not the kernels' update_scale_state), so
    // that the check compares two statements of the rule: back off and restart the count after an
    // overflow; grow after `interval` consecutive good steps.
    if (found_inf) {
      st.scale *= policy.backoff;
      st.good_steps = 0;
    } else {
      st.good_steps += 1;
      if (st.good_steps == policy.interval) {
        st.scale *= policy.growth;
        st.good_steps = 0;
      }
    }
  }
  return r;
}

// ---- checks -------------------------------------------------------------------------------------
// Values compared exactly: equal, with the same sign for zeros, or both NaN.
gpu100::CheckResult compare_values(const std::vector<double>& got, const std::vector<double>& ref) {
  gpu100::CheckResult r;
  r.checked = true;
  r.tolerance = "exact";
  r.count = int64_t(got.size());
  if (got.size() != ref.size()) return r;  // not passed
  for (size_t i = 0; i < got.size(); ++i) {
    const bool same = (std::isnan(got[i]) && std::isnan(ref[i])) ||
                      (got[i] == ref[i] && std::signbit(got[i]) == std::signbit(ref[i]));
    if (same) continue;
    if (r.mismatches++ == 0) {
      r.worst_index = int64_t(i);
      r.worst_got = got[i];
      r.worst_ref = ref[i];
    }
  }
  r.rel_err = r.count ? double(r.mismatches) / double(r.count) : 0.0;
  r.pass = r.count > 0 && r.mismatches == 0;
  return r;
}

template <class T, class F>
std::vector<double> as_doubles(const std::vector<T>& v, F value) {
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = double(value(v[i]));
  return out;
}

// A statistical claim as a check: |mean error| <= kSigmas standard errors.
gpu100::CheckResult unbiased(double mean_error, double standard_error, int64_t samples) {
  gpu100::CheckResult r;
  r.checked = true;
  r.tolerance = "mean within 5 standard errors";
  r.count = samples;
  r.max_abs_err = std::fabs(mean_error);
  r.max_ref = kSigmas * standard_error;
  r.pass = std::fabs(mean_error) <= kSigmas * standard_error;
  r.mismatches = r.pass ? 0 : 1;
  r.worst_index = 0;
  r.worst_got = mean_error;
  r.worst_ref = kSigmas * standard_error;
  return r;
}

// ---- kernels ------------------------------------------------------------------------------------
__global__ void round_trip(const float* __restrict__ x, float* __restrict__ via_fp16,
                           float* __restrict__ via_bf16, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    via_fp16[i] = __half2float(__float2half_rn(x[i]));
    via_bf16[i] = __bfloat162float(__float2bfloat16_rn(x[i]));
  }
}

__global__ void stochastic_round(const float* __restrict__ x, __nv_bfloat16* __restrict__ y,
                                 int64_t n, uint64_t seed) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = __ushort_as_bfloat16(bf16_stochastic_bits(x[i], hash32(seed, uint64_t(i))));
}

// One thread per accumulator: `updates` additions of kUpdate, each rounded back to bf16.
template <bool kStochastic>
__global__ void accumulate(__nv_bfloat16* __restrict__ w_out, int64_t accumulators, int64_t updates,
                           uint64_t seed) {
  const int64_t a = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (a >= accumulators) return;
  __nv_bfloat16 w = __float2bfloat16_rn(0.0f);
  for (int64_t t = 0; t < updates; ++t) {
    const float sum = __fadd_rn(__bfloat162float(w), kUpdate);
    if constexpr (kStochastic)
      w = __ushort_as_bfloat16(bf16_stochastic_bits(sum, hash32(seed, uint64_t(a * updates + t))));
    else
      w = __float2bfloat16_rn(sum);
  }
  w_out[a] = w;
}

// Chain c's running sum of x[c], x[c + chains], ...: neighbouring threads read neighbouring
// elements, one coalesced request per warp and step.
template <bool kKahan>
__global__ void chain_sum_fp32(const float* __restrict__ x, float* __restrict__ partial, int64_t n,
                               int64_t chains) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= chains) return;
  float s = 0.0f, comp = 0.0f;
  for (int64_t i = c; i < n; i += chains) {
    if constexpr (kKahan) {
      const float y = __fsub_rn(x[i], comp);  // the addend, corrected by what was lost last time
      const float t = __fadd_rn(s, y);
      comp = __fsub_rn(__fsub_rn(t, s), y);  // what of y did not make it into t
      s = t;
    } else {
      s = __fadd_rn(s, x[i]);
    }
  }
  partial[c] = s;
}

template <bool kKahan>
__global__ void chain_sum_bf16(const __nv_bfloat16* __restrict__ x, float* __restrict__ partial,
                               int64_t n, int64_t chains) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= chains) return;
  __nv_bfloat16 s = __float2bfloat16_rn(0.0f), comp = s;
  for (int64_t i = c; i < n; i += chains) {
    if constexpr (kKahan) {
      const __nv_bfloat16 y = __hsub(x[i], comp);
      const __nv_bfloat16 t = __hadd(s, y);
      comp = __hsub(__hsub(t, s), y);
      s = t;
    } else {
      s = __hadd(s, x[i]);
    }
  }
  partial[c] = __bfloat162float(s);
}

// Loss scaling, one step in four launches. The backward pass, reduced to its last operation:
// the fp32 gradient times the loss scale, stored in fp16 (inf where it overflows).
__global__ void backward_fp16(const float* __restrict__ base, __half* __restrict__ g16,
                              const float* __restrict__ scale, int step, int64_t n) {
  const float s = *scale;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    g16[i] = __float2half_rn(__fmul_rn(ldexpf(base[i], gradient_exponent(step, i, n)), s));
}

// g32 = g16 / scale, and found_inf set if any is inf or NaN (one atomic per warp that saw one).
// Every lane stays in the loop's last vote: the loop bound is the same for the whole warp.
__global__ void unscale_check(const __half* __restrict__ g16, float* __restrict__ g32,
                              const float* __restrict__ scale, int* __restrict__ found_inf,
                              int64_t n) {
  const float inv_scale = __frcp_rn(*scale);  // a power of two: exact
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  bool bad = false;
  for (int64_t i = first; i < n; i += stride) {
    const float g = __fmul_rn(__half2float(g16[i]), inv_scale);
    bad = bad || !isfinite(g);
    g32[i] = g;
  }
  if (__any_sync(0xFFFFFFFFu, bad) && threadIdx.x % 32 == 0) atomicOr(found_inf, 1);
}

// The optimizer step, skipped entirely when any gradient was inf or NaN.
__global__ void sgd_step(float* __restrict__ p, const float* __restrict__ g32,
                         const int* __restrict__ found_inf, float lr, int64_t n) {
  if (*found_inf) return;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    p[i] = __fsub_rn(p[i], __fmul_rn(lr, g32[i]));
}

// One thread: log the step, grow or back off the scale, clear the flag for the next step.
__global__ void update_scale(ScaleState* __restrict__ state, float* __restrict__ scale,
                             int* __restrict__ found_inf, float* __restrict__ log_scale,
                             int* __restrict__ log_skipped, ScalePolicy policy) {
  const bool inf = *found_inf != 0;
  *log_scale = state->scale;
  *log_skipped = inf ? 1 : 0;
  update_scale_state(*state, inf, policy);
  *scale = state->scale;
  *found_inf = 0;
}

// ---- launchers ----------------------------------------------------------------------------------
unsigned grid_of(int64_t n) {
  return unsigned(std::min<int64_t>(gpu100::ceil_div<int64_t>(n, kBlock), 1024));
}

struct Sizes {
  int64_t n, chains, accumulators, updates, params, steps;
  int growth_interval;
};

// Loss-scaling state on the device: the weights, gradients, the scale and its log.
struct TrainingBuffers {
  gpu100::DeviceBuffer<float> p, base, g32, scale, log_scale;
  gpu100::DeviceBuffer<__half> g16;
  gpu100::DeviceBuffer<ScaleState> state;
  gpu100::DeviceBuffer<int> found_inf, log_skipped;
};

struct LossScaling {
  float init_scale;
  ScalePolicy policy;
};

void launch_training(TrainingBuffers& b, const std::vector<float>& p0, const Sizes& z,
                     const LossScaling& ls, cudaStream_t s) {
  // The run starts from the same weights and scale each time (the timed runs too).
  CUDA_CHECK(
      cudaMemcpyAsync(b.p.data(), p0.data(), p0.size() * sizeof(float), cudaMemcpyHostToDevice, s));
  const ScaleState init{ls.init_scale, 0};
  CUDA_CHECK(cudaMemcpyAsync(b.state.data(), &init, sizeof init, cudaMemcpyHostToDevice, s));
  CUDA_CHECK(
      cudaMemcpyAsync(b.scale.data(), &init.scale, sizeof(float), cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaMemsetAsync(b.found_inf.data(), 0, sizeof(int), s));
  const unsigned grid = grid_of(z.params);
  for (int t = 0; t < int(z.steps); ++t) {
    backward_fp16<<<grid, kBlock, 0, s>>>(b.base.data(), b.g16.data(), b.scale.data(), t, z.params);
    unscale_check<<<grid, kBlock, 0, s>>>(b.g16.data(), b.g32.data(), b.scale.data(),
                                          b.found_inf.data(), z.params);
    sgd_step<<<grid, kBlock, 0, s>>>(b.p.data(), b.g32.data(), b.found_inf.data(), kLearningRate,
                                     z.params);
    update_scale<<<1, 1, 0, s>>>(b.state.data(), b.scale.data(), b.found_inf.data(),
                                 b.log_scale.data() + t, b.log_skipped.data() + t, ls.policy);
    LAUNCH_CHECK();
  }
}

// ---- the versions: each one's run and check -----------------------------------------------------
struct Inputs {
  std::vector<float> rt;        // round-trip inputs: specials, then random magnitudes
  std::vector<float> unit;      // stochastic-rounding inputs in [1, 2)
  std::vector<float> small;     // fp32 summands, about 1e-3
  std::vector<float> small16;   // the same rounded to bf16 (the bf16 sums' summands)
  std::vector<float> p0, base;  // loss scaling: initial weights, gradient shape
};

struct Device {
  gpu100::DeviceBuffer<float> rt, rt16, rtbf, unit, small, partial;
  gpu100::DeviceBuffer<__nv_bfloat16> unit_sr, small_bf16, acc;
  TrainingBuffers train;
};

// fp16 and bf16 round trips of values across both formats' ranges: the specials first (zeros,
// infinities, NaN, the largest and smallest values, ties), then magnitudes 2^-30 .. 2^20.
std::vector<float> round_trip_inputs(int64_t n, uint64_t seed) {
  // clang-format off
  std::vector<float> x = {
      0.0f, -0.0f, INFINITY, -INFINITY, NAN,
      65504.0f, 65519.0f, 65520.0f,              // fp16's largest; rounds down to it; rounds to inf
      0x1p-24f, 0x1p-25f, 0x1.8p-25f,             // fp16's smallest subnormal; a tie (to 0); above
      -0x1p-14f,                                  // minus fp16's smallest normal
      1.0f + 0x1p-11f, 1.0f + 0x3p-11f,           // fp16 ties: to 1, and up to 1 + 2^-9
      1.0f + 0x1p-8f, 1.0f + 0x3p-8f,             // the same for bf16
      std::numeric_limits<float>::max(), 3.0e38f,  // to inf in bf16; just below its largest
      std::numeric_limits<float>::denorm_min()};  // fp32's smallest: 0 in both formats
  // clang-format on
  const auto mant = gpu100::random_floats(size_t(n), seed, 1.0f, 2.0f);
  const auto expo = gpu100::random_ints(size_t(n), seed + 1, -30, 20);
  for (int64_t i = 0; i < n; ++i)
    x.push_back((i % 2 ? -1.0f : 1.0f) * std::ldexp(mant[size_t(i)], expo[size_t(i)]));
  return x;
}

// The checks: each version's output against the CPU model, and the statistical claims.
gpu100::CheckResult check_round_trip(const Device& d, const Inputs& in) {
  std::vector<double> ref16, refbf;
  for (float v : in.rt) {
    ref16.push_back(to_fp16(v));
    refbf.push_back(to_bf16(v));
  }
  const auto id = [](float v) { return v; };
  return gpu100::combine(compare_values(as_doubles(d.rt16.download(), id), ref16),
                         compare_values(as_doubles(d.rtbf.download(), id), refbf));
}

gpu100::CheckResult check_stochastic_round(const Device& d, const Inputs& in, uint64_t seed) {
  const auto got = as_doubles(d.unit_sr.download(), bf16_to_float);
  std::vector<double> ref;
  double err = 0, var = 0;
  for (size_t i = 0; i < in.unit.size(); ++i) {
    const float x = in.unit[i];
    ref.push_back(bf16_value(bf16_stochastic_bits(x, hash32(seed, i))));
    // x lies a fraction f of an ulp above the bf16 value below it: rounded up with probability
    // f, the error is a Bernoulli variable scaled by ulp, variance ulp^2 f (1 - f).
    const double ulp = bf16_ulp(x), f = (x - std::floor(x / ulp) * ulp) / ulp;
    err += got[i] - x;
    var += ulp * ulp * f * (1.0 - f);
  }
  const double count = double(in.unit.size());
  return gpu100::combine(compare_values(got, ref),
                         unbiased(err / count, std::sqrt(var) / count, int64_t(count)));
}

template <bool kStochastic>
gpu100::CheckResult check_accumulate(const Device& d, const Sizes& z, uint64_t seed) {
  const auto got = as_doubles(d.acc.download(), bf16_to_float);
  std::vector<double> ref;
  double sum = 0;
  for (int64_t a = 0; a < z.accumulators; ++a) {
    ref.push_back(accumulate_cpu<kStochastic>(a, z.updates, seed));
    sum += got[size_t(a)];
  }
  const gpu100::CheckResult exact = compare_values(got, ref);
  if (!kStochastic) return exact;
  // Each step's rounding error has variance <= ulp^2 / 4 (the ulp of the largest w, below
  // 2 T u), and the steps' errors are independent: Var(w) <= T ulp^2 / 4.
  const double target = double(z.updates) * double(kUpdate);
  const double se = bf16_ulp(2.0 * target) * std::sqrt(double(z.updates) / 4.0) /
                    std::sqrt(double(z.accumulators));
  return gpu100::combine(exact,
                         unbiased(sum / double(z.accumulators) - target, se, z.accumulators));
}

template <bool kBf16, bool kKahan>
gpu100::CheckResult check_sum(const Device& d, const Inputs& in, const Sizes& z) {
  std::vector<double> ref;
  for (int64_t c = 0; c < z.chains; ++c)
    ref.push_back(chain_sum_cpu<kBf16, kKahan>(kBf16 ? in.small16 : in.small, c, z.chains));
  return compare_values(as_doubles(d.partial.download(), [](float v) { return v; }), ref);
}

gpu100::CheckResult check_training(const Device& d, const Inputs& in, const Sizes& z,
                                   const LossScaling& ls) {
  const Training ref = train_cpu(in.p0, in.base, int(z.steps), ls.init_scale, ls.policy);
  const auto id = [](auto v) { return v; };
  const auto p = compare_values(as_doubles(d.train.p.download(), id), as_doubles(ref.p, id));
  const auto scales =
      compare_values(as_doubles(d.train.log_scale.download(), id), as_doubles(ref.scales, id));
  const auto skipped =
      compare_values(as_doubles(d.train.log_skipped.download(), id), as_doubles(ref.skipped, id));
  return gpu100::combine(p, gpu100::combine(scales, skipped));
}

// The versions as ctx.measure takes them. work: the bytes each run reads and writes.
gpu100::Measure measure_round_trip(Device& d, const Inputs& in) {
  const int64_t n = int64_t(in.rt.size());
  return {.name = "round_trip",
          .launch =
              [&d, n](cudaStream_t s) {
                round_trip<<<grid_of(n), kBlock, 0, s>>>(d.rt.data(), d.rt16.data(), d.rtbf.data(),
                                                         n);
                LAUNCH_CHECK();
              },
          .reset =
              [&d] {
                d.rt16.poison();
                d.rtbf.poison();
              },
          .check = [&d, &in] { return check_round_trip(d, in); },
          .work = 12.0 * double(n)};
}

gpu100::Measure measure_stochastic_round(Device& d, const Inputs& in, uint64_t seed) {
  const int64_t n = int64_t(in.unit.size());
  return {.name = "stochastic_round",
          .launch =
              [&d, n, seed](cudaStream_t s) {
                stochastic_round<<<grid_of(n), kBlock, 0, s>>>(d.unit.data(), d.unit_sr.data(), n,
                                                               seed);
                LAUNCH_CHECK();
              },
          .reset = [&d] { d.unit_sr.poison(); },
          .check = [&d, &in, seed] { return check_stochastic_round(d, in, seed); },
          .work = 6.0 * double(n)};
}

template <bool kStochastic>
gpu100::Measure measure_accumulate(Device& d, const Sizes& z, uint64_t seed) {
  return {.name = kStochastic ? "accumulate_sr" : "accumulate_rn",
          .launch =
              [&d, z, seed](cudaStream_t s) {
                accumulate<kStochastic><<<gpu100::grid_for(z.accumulators, kBlock), kBlock, 0, s>>>(
                    d.acc.data(), z.accumulators, z.updates, seed);
                LAUNCH_CHECK();
              },
          .reset = [&d] { d.acc.poison(); },
          .check = [&d, z, seed] { return check_accumulate<kStochastic>(d, z, seed); },
          .work = 2.0 * double(z.accumulators)};
}

template <bool kBf16, bool kKahan>
gpu100::Measure measure_sum(Device& d, const Inputs& in, const Sizes& z) {
  const char* names[2][2] = {{"sum_fp32_naive", "sum_fp32_kahan"},
                             {"sum_bf16_naive", "sum_bf16_kahan"}};
  return {.name = names[kBf16][kKahan],
          .launch =
              [&d, z](cudaStream_t s) {
                const unsigned grid = gpu100::grid_for(z.chains, kBlock);
                if constexpr (kBf16)
                  chain_sum_bf16<kKahan><<<grid, kBlock, 0, s>>>(d.small_bf16.data(),
                                                                 d.partial.data(), z.n, z.chains);
                else
                  chain_sum_fp32<kKahan>
                      <<<grid, kBlock, 0, s>>>(d.small.data(), d.partial.data(), z.n, z.chains);
                LAUNCH_CHECK();
              },
          .reset = [&d] { d.partial.poison(); },
          .check = [&d, &in, z] { return check_sum<kBf16, kKahan>(d, in, z); },
          .work = (kBf16 ? 2.0 : 4.0) * double(z.n)};
}

gpu100::Measure measure_training(Device& d, const Inputs& in, const Sizes& z, bool dynamic) {
  const LossScaling ls = dynamic ? LossScaling{kInitScale, {kGrowth, kBackoff, z.growth_interval}}
                                 : LossScaling{1.0f, {1.0f, 1.0f, 1}};
  return {.name = dynamic ? "loss_scale_dynamic" : "loss_scale_none",
          .launch = [&d, &in, z, ls](cudaStream_t s) { launch_training(d.train, in.p0, z, ls, s); },
          .reset =
              [&d] {
                d.train.p.poison();
                d.train.log_scale.poison();
                d.train.log_skipped.poison();
              },
          .check = [&d, &in, z, ls] { return check_training(d, in, z, ls); },
          .work = 14.0 * double(z.params) * double(z.steps)};
}

// ---- analysis -----------------------------------------------------------------------------------
// Each technique's error beside the naive way's, on this run's data, from the CPU model (which
// each version's check compared with the GPU bit for bit).
gpu100::Table error_table(const Inputs& in, const Sizes& z, uint64_t seed) {
  gpu100::Table t;
  t.title = "errors: naive vs with the technique";
  t.columns = {"what", "naive", "error", "technique", "error"};
  auto rel = [](double got, double exact) { return std::fabs(got - exact) / std::fabs(exact); };

  // Sums: the chains' partial sums added in double, against the exact sum (in double, exact
  // here: the summands' bits span fewer than 53 binary places).
  auto sum_of = [](const std::vector<float>& x) {
    double s = 0;
    for (float v : x) s += v;
    return s;
  };
  auto total = [&](const std::vector<float>& x, auto chain) {
    double s = 0;
    for (int64_t c = 0; c < z.chains; ++c) s += chain(x, c, z.chains);
    return s;
  };
  const double exact32 = sum_of(in.small), exact16 = sum_of(in.small16);
  const double f_naive = total(in.small, chain_sum_cpu<false, false>);
  const double f_kahan = total(in.small, chain_sum_cpu<false, true>);
  const double b_naive = total(in.small16, chain_sum_cpu<true, false>);
  const double b_kahan = total(in.small16, chain_sum_cpu<true, true>);
  const std::string sums = fmt::format("sum of {} values ~1e-3 in {} chains", z.n, z.chains);
  t.add_row(
      {sums + ", fp32", "running sum", rel(f_naive, exact32), "Kahan", rel(f_kahan, exact32)});
  t.add_row(
      {sums + ", bf16", "running sum", rel(b_naive, exact16), "Kahan", rel(b_kahan, exact16)});

  // Accumulation of small updates in bf16: the mean final value against T u.
  const double target = double(z.updates) * double(kUpdate);
  double rn = 0, sr = 0;
  for (int64_t a = 0; a < z.accumulators; ++a) {
    rn += accumulate_cpu<false>(a, z.updates, seed);
    sr += accumulate_cpu<true>(a, z.updates, seed);
  }
  t.add_row({fmt::format("bf16 w = 0, w += {} x {}, mean of {} weights", kUpdate, z.updates,
                         z.accumulators),
             "round to nearest", rel(rn / double(z.accumulators), target), "stochastic rounding",
             rel(sr / double(z.accumulators), target)});

  // Gradients through fp16: the worst applied step's relative L2 error against fp32.
  const Training none = train_cpu(in.p0, in.base, int(z.steps), 1.0f, {1.0f, 1.0f, 1});
  const Training dyn =
      train_cpu(in.p0, in.base, int(z.steps), kInitScale, {kGrowth, kBackoff, z.growth_interval});
  int skipped = 0;
  for (int s : dyn.skipped) skipped += s;
  t.add_row({fmt::format("fp16 gradients of 2^-26 (a spike of 2^3), {} steps", z.steps),
             "no scaling", none.worst_grad_error,
             fmt::format("dynamic loss scale ({} skipped, last 2^{})", skipped,
                         std::ilogb(dyn.scales.back())),
             dyn.worst_grad_error});

  // Rounding itself: the largest relative error of a round trip in each format's normal range.
  double worst16 = 0, worstbf = 0;
  for (float v : in.rt) {
    if (!std::isfinite(v) || v == 0.0f) continue;
    const double a = std::fabs(v);
    if (a >= 0x1p-14 && a <= 65504.0) worst16 = std::max(worst16, rel(to_fp16(v), v));
    if (a >= 0x1p-126 && a <= 0x1.FEp127) worstbf = std::max(worstbf, rel(to_bf16(v), v));
  }
  t.add_row({"round trip, normal range (bound 2^-11 / 2^-8)", "fp16", worst16, "bf16", worstbf});
  return t;
}

// The dynamic run's scale step by step (the CPU model's, which its check compared with the GPU's
// log): one row per run of steps at one scale (a power of two), and how many were skipped.
gpu100::Table scale_table(const Inputs& in, const Sizes& z) {
  const Training dyn =
      train_cpu(in.p0, in.base, int(z.steps), kInitScale, {kGrowth, kBackoff, z.growth_interval});
  gpu100::Table t;
  t.title = "loss scale by step (loss_scale_dynamic)";
  t.columns = {"steps", "scale", "skipped"};
  size_t first = 0;
  for (size_t i = 0; i < dyn.scales.size(); ++i) {
    if (i + 1 < dyn.scales.size() && dyn.scales[i + 1] == dyn.scales[i]) continue;
    int skipped = 0;
    for (size_t j = first; j <= i; ++j) skipped += dyn.skipped[j];
    t.add_row({first == i ? fmt::format("{}", i) : fmt::format("{}-{}", first, i),
               fmt::format("2^{}", std::ilogb(dyn.scales[i])), skipped});
    first = i + 1;
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "mixed precision: fp16/bf16 rounding, dynamic loss scaling, stochastic rounding to bf16, "
      "Kahan summation; each beside the naive way, checked against a CPU model");
  Sizes z{1'000'003, 32, 4099, 10'001, 100'003, 61, 3};
  cli.size("n", z.n, 30'011, "values summed (and round-tripped, stochastically rounded)");
  cli.size("chains", z.chains, 7, "running sums the n values are split over", 1 << 20);
  cli.size("accumulators", z.accumulators, 257, "bf16 weights receiving small updates", 1 << 24);
  cli.size("updates", z.updates, 1001, "small updates added to each bf16 weight", 1 << 24);
  cli.size("params", z.params, 1001, "weights of the loss-scaling run", int64_t(1) << 30);
  cli.size("steps", z.steps, 21, "SGD steps of the loss-scaling run", 100'000);
  cli.option("growth-interval", z.growth_interval,
             "good steps before the loss scale doubles (PyTorch's default is 2000)", 1, 1'000'000);
  cli.kernels({"round_trip", "stochastic_round", "accumulate_rn", "accumulate_sr", "sum_fp32_naive",
               "sum_fp32_kahan", "sum_bf16_naive", "sum_bf16_kahan", "loss_scale_none",
               "loss_scale_dynamic"});
  cli.device_bytes([&] {
    return 14.0 * double(z.n) + 4.0 * double(z.chains) + 2.0 * double(z.accumulators) +
           14.0 * double(z.params) + 8.0 * double(z.steps);
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    const uint64_t seed = ctx.seed();

    Inputs in;
    in.rt = round_trip_inputs(z.n, seed);
    in.unit = gpu100::random_floats(size_t(z.n), seed + 2, 1.0f, 2.0f);
    in.small = gpu100::random_floats(size_t(z.n), seed + 3, 0.5e-3f, 1.5e-3f);
    std::vector<__nv_bfloat16> small_bf16;
    for (float v : in.small) {
      in.small16.push_back(float(to_bf16(v)));
      small_bf16.push_back(__float2bfloat16_rn(v));
    }
    in.p0 = gpu100::random_floats(size_t(z.params), seed + 4);
    in.base = gpu100::random_floats(size_t(z.params), seed + 5);

    Device d{
        gpu100::DeviceBuffer<float>(in.rt),
        gpu100::DeviceBuffer<float>(in.rt.size()),
        gpu100::DeviceBuffer<float>(in.rt.size()),
        gpu100::DeviceBuffer<float>(in.unit),
        gpu100::DeviceBuffer<float>(in.small),
        gpu100::DeviceBuffer<float>(size_t(z.chains)),
        gpu100::DeviceBuffer<__nv_bfloat16>(in.unit.size()),
        gpu100::DeviceBuffer<__nv_bfloat16>(small_bf16),
        gpu100::DeviceBuffer<__nv_bfloat16>(size_t(z.accumulators)),
        TrainingBuffers{
            gpu100::DeviceBuffer<float>(size_t(z.params)), gpu100::DeviceBuffer<float>(in.base),
            gpu100::DeviceBuffer<float>(size_t(z.params)), gpu100::DeviceBuffer<float>(1),
            gpu100::DeviceBuffer<float>(size_t(z.steps)),
            gpu100::DeviceBuffer<__half>(size_t(z.params)), gpu100::DeviceBuffer<ScaleState>(1),
            gpu100::DeviceBuffer<int>(1), gpu100::DeviceBuffer<int>(size_t(z.steps))}};
    ctx.copy_baseline(size_t(z.n) * sizeof(float));

    ctx.measure_all({measure_round_trip(d, in), measure_stochastic_round(d, in, seed),
                     measure_accumulate<false>(d, z, seed), measure_accumulate<true>(d, z, seed),
                     measure_sum<false, false>(d, in, z), measure_sum<false, true>(d, in, z),
                     measure_sum<true, false>(d, in, z), measure_sum<true, true>(d, in, z),
                     measure_training(d, in, z, false), measure_training(d, in, z, true)});
    report.table(error_table(in, z, seed));
    report.table(scale_table(in, z));
    report.note(
        "error table: from the CPU model of each version, which its check compared with "
        "the GPU's results bit for bit; sums added in double over the chains' partials");
  });
}
