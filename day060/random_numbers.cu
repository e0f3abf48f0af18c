// Day 060 - random_numbers: cuRAND's device and host APIs, Monte Carlo pi and a European call
//
// A counter-based generator (Philox4x32-10) turns a counter and a key into four random words with
// ten rounds of multiply-xor; nothing is carried from one output to the next but the counter, so
// every thread can own an independent stream without any setup cost: curand_init(seed,
// subsequence, offset) sets key = seed, counter = (offset / 4, subsequence), and each thread takes
// the subsequence of its own index (subsequences are 2^66 outputs apart, so they never overlap).
// The device API (curand_kernel.h) is header-only, compiled into the day's kernels; the host API
// (curandGenerate*) fills a buffer from a closed library. Two Monte Carlo problems use them:
// pi = 4 P(x^2 + y^2 <= 1) for (x, y) uniform in the unit square, and the price of a European
// call under geometric Brownian motion, e^{-rT} E[max(S_T - K, 0)] with
// S_T = S0 exp((r - sigma^2/2) T + sigma sqrt(T) Z), which Black-Scholes gives in closed form.
// The rate is samples per second (a sample is one point or one path).
//
// Versions (each thread counts its own samples; a block reduces its threads' sums with shuffles
// into one partial per block, and a one-block kernel adds the partials in a fixed order: no
// atomics, and the same bits every run)
//   pi            curand_uniform twice per point: the state's four-word buffer is drained one word
//                 at a time, a branch per call.
//   pi_uniform4   curand_uniform4: one Philox block gives two points. Same stream, same points,
//                 same count as pi.
//   option        curand_normal (Box-Muller on two words; the second normal is kept for the next
//                 call), one path per normal, payoff and its square summed in double.
//   curand_host   the host API: curandGenerateUniform fills 2n floats, a kernel counts the
//                 points. A closed library, so not run under emulation.
//
// Check
//   * The generator itself, bit for bit: the first curand() words and curand_uniform values of
//     several (seed, subsequence, offset) states, one of them set up exactly as the versions set
//     up their threads, against Philox4x32-10 written here from its definition (the state layout
//     read from curand_philox4x32_x.h: key = seed, counter words 2-3 = subsequence).
//   * pi and pi_uniform4: the hit count exactly equal to the CPU's count over the same streams.
//   * Every estimate against the true value with a bound derived from the sample count at a
//     false-failure probability of 1e-9: Hoeffding for pi (bounded samples, no normality), the
//     normal tail (k = 6.11) with the payoff's exact variance for the option (1e-9 only as far
//     as the central limit theorem holds so far out: an approximation, not a guarantee like
//     Hoeffding's), Chebyshev (k = 1/sqrt(1e-9), guaranteed) below 10^4 paths, where the payoff's
//     skew makes the normal tail doubtful.
//
// Run:  build/bin/day060 [--n 100000007] [--kernel pi,option] [--json f]
#include <curand.h>
#include <curand_kernel.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

#define CURAND_CHECK(expr)                                                              \
  do {                                                                                  \
    const curandStatus_t status_ = (expr);                                              \
    if (status_ != CURAND_STATUS_SUCCESS)                                               \
      ::gpu100::throw_library_error("curand", int(status_), #expr, __FILE__, __LINE__); \
  } while (0)

namespace {

constexpr int kBlock = 256;
// Enough threads to fill a large GPU; beyond that each thread draws more samples.
constexpr int64_t kMaxThreads = int64_t(1) << 18;
constexpr int64_t kMinSamplesPerThread = 16;
constexpr double kFalseFailure = 1e-9;
constexpr double kNormalK = 6.11;  // 2 (1 - Phi(6.11)) < 1e-9
constexpr int64_t kNormalFrom = 10000;

// The option: out of the money (strike above the forward), a year out.
constexpr double kS0 = 100, kStrike = 110, kRate = 0.05, kVol = 0.2, kYears = 1;

enum class Kind { pi, option };

// ---- CPU reference ----

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC11).
struct Words {
  uint32_t w[4];
};

Words philox4x32_10(Words c, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t(0xD2511F53u) * c.w[0];
    const uint64_t p1 = uint64_t(0xCD9E8D57u) * c.w[2];
    c = {{uint32_t(p1 >> 32) ^ c.w[1] ^ k0, uint32_t(p1), uint32_t(p0 >> 32) ^ c.w[3] ^ k1,
          uint32_t(p0)}};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

// Word `position` of subsequence `subsequence` of seed `seed`, as curand() returns it.
uint32_t philox_word(uint64_t seed, uint64_t subsequence, uint64_t position) {
  const uint64_t block = position / 4;
  const Words c{
      {uint32_t(block), uint32_t(block >> 32), uint32_t(subsequence), uint32_t(subsequence >> 32)}};
  return philox4x32_10(c, uint32_t(seed), uint32_t(seed >> 32)).w[position % 4];
}

// curand_uniform's map: (0, 1], the word scaled by 2^-32 (exact) plus half a step.
float uniform_of(uint32_t word) {
  const float step = 2.3283064e-10f;
  return float(word) * step + step / 2.0f;
}

// The pi test on floats, one rounding, so that host and device agree on every point.
bool inside(float x, float y) {
  return std::fma(x, x, y * y) <= 1.0f;
}

// Threads of the device versions: each takes samples i, i + threads, ... of the n.
int64_t threads_for(int64_t n) {
  const int64_t want = std::min(kMaxThreads, (n + kMinSamplesPerThread - 1) / kMinSamplesPerThread);
  return (want + kBlock - 1) / kBlock * kBlock;
}
int64_t samples_of(int64_t thread, int64_t threads, int64_t n) {
  return thread < n ? (n - 1 - thread) / threads + 1 : 0;
}

// The hits the device versions must count: thread t draws 2 * samples uniforms from
// subsequence t of the seed.
uint64_t pi_hits_cpu(uint64_t seed, int64_t n) {
  const int64_t threads = threads_for(n);
  uint64_t hits = 0;
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t m = samples_of(t, threads, n);
    for (int64_t i = 0; i < m; i += 2) {
      const uint64_t block = uint64_t(i) / 2;  // four words: two points
      const Words c{{uint32_t(block), uint32_t(block >> 32), uint32_t(t), 0u}};
      const Words w = philox4x32_10(c, uint32_t(seed), uint32_t(seed >> 32));
      hits += inside(uniform_of(w.w[0]), uniform_of(w.w[1]));
      if (i + 1 < m) hits += inside(uniform_of(w.w[2]), uniform_of(w.w[3]));
    }
  }
  return hits;
}

double normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

// The discounted payoff Y = e^{-rT} max(S_T - K, 0) with ln S_T ~ N(mu, s^2): its mean
// (Black-Scholes) and variance from E[S^j 1{S > K}] = e^{j mu + j^2 s^2 / 2} Phi(d + j s).
struct OptionMoments {
  double price, variance;
};
OptionMoments option_moments() {
  const double mu = std::log(kS0) + (kRate - 0.5 * kVol * kVol) * kYears;
  const double s = kVol * std::sqrt(kYears);
  const double d = (mu - std::log(kStrike)) / s;
  const auto partial = [&](int j) {
    return std::exp(j * mu + 0.5 * j * j * s * s) * normal_cdf(d + j * s);
  };
  const double m1 = partial(1) - kStrike * normal_cdf(d);
  const double m2 = partial(2) - 2 * kStrike * partial(1) + kStrike * kStrike * normal_cdf(d);
  const double discount = std::exp(-kRate * kYears);
  return {discount * m1, discount * discount * (m2 - m1 * m1)};
}

// ---- kernels ----

// How every version seeds its threads: the subsequence is the thread's index.
__device__ void init_stream(uint64_t seed, unsigned thread, curandStatePhilox4_32_10_t* state) {
  curand_init(seed, thread, 0, state);
}

__device__ unsigned inside_dev(float x, float y) {
  return __fmaf_rn(x, x, __fmul_rn(y, y)) <= 1.0f ? 1u : 0u;
}

// One partial per block: shuffles within warps, then the first warp over the warps' sums.
template <class T>
__device__ T block_sum(T v) {
  __shared__ T warp_sums[kBlock / 32];
  for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < kBlock / 32 ? warp_sums[threadIdx.x] : T(0);
  if (threadIdx.x < 32)
    for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
  return v;
}

__device__ int64_t my_samples(int64_t n) {
  const int64_t thread = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t threads = int64_t(gridDim.x) * blockDim.x;
  return thread < n ? (n - 1 - thread) / threads + 1 : 0;
}

template <bool kFour>
__global__ void pi_kernel(uint64_t seed, int64_t n, unsigned long long* __restrict__ partial) {
  curandStatePhilox4_32_10_t state;
  init_stream(seed, blockIdx.x * blockDim.x + threadIdx.x, &state);
  const int64_t m = my_samples(n);
  unsigned long long hits = 0;
  int64_t i = 0;
  if constexpr (kFour) {
    for (; i + 2 <= m; i += 2) {
      const float4 u = curand_uniform4(&state);
      hits += inside_dev(u.x, u.y) + inside_dev(u.z, u.w);
    }
  }
  for (; i < m; ++i) {
    const float x = curand_uniform(&state);
    const float y = curand_uniform(&state);
    hits += inside_dev(x, y);
  }
  hits = block_sum(hits);
  if (threadIdx.x == 0) partial[blockIdx.x] = hits;
}

struct PathModel {
  double s0, strike, drift, diffusion;  // ln S_T = ln s0 + drift + diffusion * Z
};

__global__ void option_kernel(uint64_t seed, int64_t n, PathModel p, double* __restrict__ partial) {
  curandStatePhilox4_32_10_t state;
  init_stream(seed, blockIdx.x * blockDim.x + threadIdx.x, &state);
  const int64_t m = my_samples(n);
  double sum = 0, squares = 0;
  for (int64_t i = 0; i < m; ++i) {
    const double z = curand_normal(&state);
    const double payoff = fmax(p.s0 * exp(p.drift + p.diffusion * z) - p.strike, 0.0);
    sum += payoff;
    squares += payoff * payoff;
  }
  sum = block_sum(sum);
  __syncthreads();  // warp_sums is reused
  squares = block_sum(squares);
  if (threadIdx.x == 0) {
    partial[2 * blockIdx.x] = sum;
    partial[2 * blockIdx.x + 1] = squares;
  }
}

// Points from a buffer the host API filled: point i is (u[2i], u[2i+1]).
__global__ void count_points(const float* __restrict__ u, int64_t n,
                             unsigned long long* __restrict__ partial) {
  unsigned long long hits = 0;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    hits += inside_dev(u[2 * i], u[2 * i + 1]);
  hits = block_sum(hits);
  if (threadIdx.x == 0) partial[blockIdx.x] = hits;
}

// The partials in a fixed order by one block: `width` values per partial.
template <class T>
__global__ void sum_partials(const T* __restrict__ partial, int count, int width,
                             T* __restrict__ out) {
  for (int k = 0; k < width; ++k) {
    T v = 0;
    for (int i = threadIdx.x; i < count; i += blockDim.x) v += partial[i * width + k];
    v = block_sum(v);
    if (threadIdx.x == 0) out[k] = v;
    __syncthreads();
  }
}

// The generator probe: `count` words and then `count` uniforms from each state.
struct Probe {
  unsigned long long seed, subsequence, offset;
  int via_init_stream;  // 1: set up as the versions set up thread `subsequence`
};

__global__ void probe_kernel(const Probe* __restrict__ probes, int count,
                             unsigned* __restrict__ words, float* __restrict__ uniforms) {
  const Probe p = probes[blockIdx.x];
  curandStatePhilox4_32_10_t state;
  if (p.via_init_stream)
    init_stream(p.seed, unsigned(p.subsequence), &state);
  else
    curand_init(p.seed, p.subsequence, p.offset, &state);
  for (int i = 0; i < count; ++i) words[blockIdx.x * count + i] = curand(&state);
  for (int i = 0; i < count; ++i) uniforms[blockIdx.x * count + i] = curand_uniform(&state);
}

// ---- launchers ----

struct Version {
  const char* name;
  Kind kind;
  bool four;
};
const Version kVersions[] = {
    {"pi", Kind::pi, false},
    {"pi_uniform4", Kind::pi, true},
    {"option", Kind::option, false},
};

struct Scratch {
  unsigned long long* hit_partial;
  double* sum_partial;
  unsigned long long* hits;
  double* sums;
};

void launch(const Version& v, int grid, uint64_t seed, int64_t n, const Scratch& s,
            cudaStream_t stream) {
  if (v.kind == Kind::pi) {
    if (v.four)
      pi_kernel<true><<<grid, kBlock, 0, stream>>>(seed, n, s.hit_partial);
    else
      pi_kernel<false><<<grid, kBlock, 0, stream>>>(seed, n, s.hit_partial);
    LAUNCH_CHECK();
    sum_partials<<<1, kBlock, 0, stream>>>(s.hit_partial, grid, 1, s.hits);
  } else {
    const PathModel p{kS0, kStrike, (kRate - 0.5 * kVol * kVol) * kYears, kVol * std::sqrt(kYears)};
    option_kernel<<<grid, kBlock, 0, stream>>>(seed + 1, n, p, s.sum_partial);
    LAUNCH_CHECK();
    sum_partials<<<1, kBlock, 0, stream>>>(s.sum_partial, grid, 2, s.sums);
  }
  LAUNCH_CHECK();
}

// The host API: a Philox generator of the library, on the day's stream.
class HostGenerator {
 public:
  HostGenerator(uint64_t seed, int64_t n) : n_(n), u_(size_t(2 * n)) {
    CURAND_CHECK(curandCreateGenerator(&gen_, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(gen_, seed + 2));
  }
  ~HostGenerator() { curandDestroyGenerator(gen_); }
  HostGenerator(const HostGenerator&) = delete;
  HostGenerator& operator=(const HostGenerator&) = delete;
  void run(int grid, const Scratch& s, cudaStream_t stream) {
    CURAND_CHECK(curandSetStream(gen_, stream));
    CURAND_CHECK(curandGenerateUniform(gen_, u_.data(), size_t(2 * n_)));
    count_points<<<grid, kBlock, 0, stream>>>(u_.data(), n_, s.hit_partial);
    LAUNCH_CHECK();
    sum_partials<<<1, kBlock, 0, stream>>>(s.hit_partial, grid, 1, s.hits);
    LAUNCH_CHECK();
  }

 private:
  curandGenerator_t gen_{};
  int64_t n_;
  gpu100::DeviceBuffer<float> u_;
};

// ---- analysis ----

// One estimate against its true value within `bound`.
gpu100::CheckResult within(double got, double truth, double bound, const std::string& how) {
  gpu100::CheckResult r;
  r.checked = true;
  r.count = 1;
  r.worst_index = 0;
  r.worst_got = got;
  r.worst_ref = truth;
  r.max_ref = std::fabs(truth);
  r.max_abs_err = std::fabs(got - truth);
  r.rel_err = r.max_abs_err / std::fabs(truth);
  r.nonfinite = std::isfinite(got) ? 0 : 1;
  r.pass = r.nonfinite == 0 && r.max_abs_err <= bound;
  r.tolerance = fmt::format("{} bound {:.3g}", how, bound);
  return r;
}

// Hoeffding: P(|H/n - p| >= t) <= 2 exp(-2 n t^2) for n samples in [0, 1]. The float uniforms
// and the one-rounding test move a point by at most a few 2^-24, so p differs from pi/4 by less
// than 4 * 2^-24 (arc length pi/2 times the move): added to the bound.
double pi_bound(int64_t n) {
  const double t = std::sqrt(std::log(2.0 / kFalseFailure) / (2.0 * double(n)));
  return 4.0 * (t + 4.0 * std::ldexp(1.0, -24));
}

gpu100::CheckResult check_pi(uint64_t hits, int64_t n, const uint64_t* exact_hits) {
  const double estimate = 4.0 * double(hits) / double(n);
  gpu100::CheckResult r = within(estimate, M_PI, pi_bound(n), "Hoeffding 1e-9");
  if (exact_hits && hits != *exact_hits) {
    r.pass = false;
    r.tolerance += fmt::format("; hits {} != CPU's {} over the same streams", hits, *exact_hits);
  }
  return r;
}

// Normal tail with the exact variance from 10^4 paths, Chebyshev below. The float Box-Muller
// (sincos.approx to 2^-21.4, logf and sqrtf to a few ulp) puts z within 2^-19 (1 + |z|) of the
// exact normal of its two words; the payoff moves by at most S_T s |dz|, whose mean is below
// S0 e^{rT} s (2 + s) 2^-19: added to the bound.
double option_bound(int64_t n, double variance) {
  const double k = n >= kNormalFrom ? kNormalK : 1.0 / std::sqrt(kFalseFailure);
  const double s = kVol * std::sqrt(kYears);
  return k * std::sqrt(variance / double(n)) + kS0 * s * (2 + s) * std::ldexp(1.0, -19);
}

gpu100::CheckResult check_option(const std::vector<double>& sums, int64_t n,
                                 const OptionMoments& truth) {
  const double discount = std::exp(-kRate * kYears);
  const double estimate = discount * sums[0] / double(n);
  return within(estimate, truth.price, option_bound(n, truth.variance),
                n >= kNormalFrom ? "normal tail 1e-9" : "Chebyshev 1e-9");
}

std::vector<Probe> probes(uint64_t seed, int64_t n) {
  const unsigned last = unsigned(threads_for(n) - 1);
  return {{seed, 0, 0, 1},
          {seed, last, 0, 1},
          {seed, 1, 0, 0},
          {seed ^ 0x9E3779B97F4A7C15ull, (1ull << 40) + 7, 5, 0},
          {~seed, 3, (1ull << 34) + 2, 0}};
}

gpu100::CheckResult check_generator(uint64_t seed, int64_t n) {
  constexpr int kCount = 9;  // crosses the four-word blocks from any offset
  const auto ps = probes(seed, n);
  gpu100::DeviceBuffer<Probe> d_probes(ps);
  gpu100::DeviceBuffer<unsigned> d_words{ps.size() * kCount};
  gpu100::DeviceBuffer<float> d_uniforms{ps.size() * kCount};
  d_words.poison();
  d_uniforms.poison();
  probe_kernel<<<unsigned(ps.size()), 1>>>(d_probes.data(), kCount, d_words.data(),
                                           d_uniforms.data());
  LAUNCH_CHECK();
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned> want_words;
  std::vector<float> want_uniforms;
  for (const Probe& p : ps) {
    for (int i = 0; i < 2 * kCount; ++i) {
      const uint32_t w = philox_word(p.seed, p.subsequence, p.offset + uint64_t(i));
      if (i < kCount)
        want_words.push_back(w);
      else
        want_uniforms.push_back(uniform_of(w));
    }
  }
  return gpu100::combine(gpu100::compare_exact(d_words.download(), want_words),
                         gpu100::compare_exact(d_uniforms.download(), want_uniforms));
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("cuRAND device and host APIs: Monte Carlo pi and a European call option");
  int64_t n = 100000007;
  cli.size("n", n, 30011, "samples: points for pi, paths for the option");
  std::vector<std::string> names;
  for (const Version& v : kVersions) names.emplace_back(v.name);
  names.emplace_back("curand_host");
  cli.kernels(names);
  // Partials, and the host API's 2n uniforms.
  cli.device_bytes([&] { return 8.0 * double(n) + 16.0 * double(kMaxThreads / kBlock) + 64; });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("Gsamples/s");
    const uint64_t seed = ctx.seed();
    const int64_t threads = threads_for(n);
    const int grid = int(threads / kBlock);
    report.problem("threads", double(threads));

    report.add_check("curand Philox4_32_10 vs CPU Philox4x32-10 (bit exact)",
                     check_generator(seed, n));
    const bool any_pi = ctx.cli().want("pi") || ctx.cli().want("pi_uniform4");
    const uint64_t exact_hits = any_pi ? pi_hits_cpu(seed, n) : 0;
    const OptionMoments truth = option_moments();

    gpu100::DeviceBuffer<unsigned long long> d_hit_partial{size_t(grid)}, d_hits{1};
    gpu100::DeviceBuffer<double> d_sum_partial{size_t(2 * grid)}, d_sums{2};
    const Scratch scratch{d_hit_partial.data(), d_sum_partial.data(), d_hits.data(), d_sums.data()};
    std::unique_ptr<HostGenerator> host;
    if (ctx.vendor_libraries() && ctx.cli().want("curand_host"))
      host = std::make_unique<HostGenerator>(seed, n);

    double option_estimate = 0, option_sample_variance = 0;
    const auto rate = [&](double ms) { return double(n) / (ms * 1e6); };
    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      runs.push_back({.name = v.name,
                      .launch = [&](cudaStream_t s) { launch(v, grid, seed, n, scratch, s); },
                      .reset =
                          [&] {
                            d_hits.poison();
                            d_sums.poison();
                          },
                      .check = [&]() -> gpu100::CheckResult {
                        if (v.kind == Kind::pi)
                          return check_pi(d_hits.download()[0], n, &exact_hits);
                        const auto sums = d_sums.download();
                        const double mean = sums[0] / double(n);
                        option_estimate = std::exp(-kRate * kYears) * mean;
                        if (n > 1)
                          option_sample_variance = std::exp(-2 * kRate * kYears) *
                                                   (sums[1] - double(n) * mean * mean) /
                                                   double(n - 1);
                        return check_option(sums, n, truth);
                      },
                      .rate = rate});
    }
    runs.push_back({.name = "curand_host",
                    .launch = [&](cudaStream_t s) { host->run(grid, scratch, s); },
                    .reset = [&] { d_hits.poison(); },
                    .check = [&] { return check_pi(d_hits.download()[0], n, nullptr); },
                    .rate = rate,
                    .vendor = true});
    ctx.measure_all(runs);

    if (any_pi)
      report.note(fmt::format(
          "pi: CPU count over the same streams {} hits of {}; bound {:.3g} (Hoeffding, 1e-9)",
          exact_hits, n, pi_bound(n)));
    if (ctx.cli().want("option"))
      report.note(fmt::format(
          "option: Black-Scholes {:.6f}, estimate {:.6f}, payoff variance exact {:.4f} sample "
          "{:.4f}, bound {:.3g} ({}, 1e-9)",
          truth.price, option_estimate, truth.variance, option_sample_variance,
          option_bound(n, truth.variance), n >= kNormalFrom ? "normal tail" : "Chebyshev"));
  });
}
