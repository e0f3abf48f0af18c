// Day 043 - dropout with a counter-based generator: y = x * keep / (1 - p), dx = dy * keep / (1 -
// p)
//
// Dropout needs one random decision per element, made again in the backward. A stateful generator
// (one state per thread, advanced in sequence) ties the stream to the launch shape and forces the
// forward to store its mask. A counter-based generator is a pure function of (counter, key): here
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11), ten rounds
// of two 32x32->64-bit multiplies and xors. Element i takes word i % 4 of Philox(counter = (i / 4,
// offset), key = seed), so any thread of any grid, the backward, or the CPU gets the same bit for
// element i without storing anything. An element is kept when its word is >= round(p 2^32).
//
// Versions
//   forward_scalar      one thread per element; each runs all ten rounds and uses one of the four
//                       words it made: four times the generator work of the others.
//   forward_vec4        one thread per group of four elements: one Philox call, one float4 load and
//                       one float4 store; the n % 4 tail is the last group's thread, in scalar.
//   forward_store_mask  forward_vec4 that also writes the keep mask (one byte per element), as a
//                       framework without a counter-based generator must.
//   backward_regen      dx from dy with the mask regenerated from (seed, offset): the same kernel
//   as
//                       forward_vec4, on dy. Reads and writes 8 bytes per element.
//   backward_stored     dx from dy and the stored mask: 9 bytes per element, and the forward paid a
//                       byte per element more to write it.
//
// Check: every version bit for bit against the CPU, which runs the same Philox on the same
// counters; the CPU mask equals the stored mask byte for byte. Philox itself is checked against
// the published known-answer vectors, on the CPU and in a kernel; the kept fraction against the
// binomial bounds of p; the CPU backward against finite differences of the CPU forward.
//
// Run:  build/bin/day043 [--n 67108867] [--p 0.1] [--offset 0] [--kernel forward_vec4]
#include <fmt/core.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

// ---- Philox4x32-10 (CPU and GPU) ----------------------------------------------------------------
struct Words {
  uint32_t w[4];
};

// The published constants: the two multipliers and the Weyl increments of the key schedule.
constexpr uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;

__host__ __device__ inline void mul_hi_lo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
#ifdef __CUDA_ARCH__
  hi = __umulhi(a, b);
  lo = a * b;
#else
  const uint64_t p = uint64_t(a) * uint64_t(b);
  hi = uint32_t(p >> 32);
  lo = uint32_t(p);
#endif
}

__host__ __device__ inline Words philox4x32_10(Words c, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    mul_hi_lo(kPhiloxM0, c.w[0], hi0, lo0);
    mul_hi_lo(kPhiloxM1, c.w[2], hi1, lo1);
    c = Words{{hi1 ^ c.w[1] ^ k0, lo1, hi0 ^ c.w[3] ^ k1, lo0}};
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  return c;
}

// The four words that decide elements 4g .. 4g+3.
__host__ __device__ inline Words dropout_words(uint64_t group, uint64_t seed, uint64_t offset) {
  return philox4x32_10(
      Words{{uint32_t(group), uint32_t(group >> 32), uint32_t(offset), uint32_t(offset >> 32)}},
      uint32_t(seed), uint32_t(seed >> 32));
}

// A dropped element is +0 (not x * 0, which is -0 for negative x), on both sides.
__host__ __device__ inline float apply(float x, uint32_t word, uint32_t threshold, float scale) {
  return word >= threshold ? x * scale : 0.0f;
}

struct Dropout {
  uint64_t seed, offset;
  uint32_t threshold;  // keep when the word is >= threshold
  float scale;         // 1 / (1 - p), rounded once to fp32 on the host
};

Dropout make_dropout(double p, uint64_t seed, uint64_t offset) {
  return {seed, offset, uint32_t(std::llround(p * 4294967296.0)), float(1.0 / (1.0 - p))};
}

// ---- CPU reference ------------------------------------------------------------------------------
// Each element's own Philox call, as forward_scalar does it.
std::vector<uint8_t> mask_cpu(int64_t n, const Dropout& d) {
  std::vector<uint8_t> keep(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    keep[size_t(i)] = dropout_words(uint64_t(i / 4), d.seed, d.offset).w[i % 4] >= d.threshold;
  return keep;
}

std::vector<float> dropout_cpu(const std::vector<float>& x, const std::vector<uint8_t>& keep,
                               float scale) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = keep[i] ? x[i] * scale : 0.0f;
  return y;
}

// ---- kernels ------------------------------------------------------------------------------------
__global__ void dropout_scalar(const float* __restrict__ x, float* __restrict__ y, int64_t n,
                               Dropout d) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Words r = dropout_words(uint64_t(i / 4), d.seed, d.offset);
  y[i] = apply(x[i], r.w[i % 4], d.threshold, d.scale);
}

// One thread per group of four. With StoreMask it also writes the keep bytes (as a uchar4).
template <bool StoreMask>
__global__ void dropout_vec4(const float* __restrict__ x, float* __restrict__ y,
                             uint8_t* __restrict__ mask, int64_t n, Dropout d) {
  const int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t full = n / 4;
  if (g < full) {
    const Words r = dropout_words(uint64_t(g), d.seed, d.offset);
    const float4 v = reinterpret_cast<const float4*>(x)[g];
    reinterpret_cast<float4*>(y)[g] = make_float4(
        apply(v.x, r.w[0], d.threshold, d.scale), apply(v.y, r.w[1], d.threshold, d.scale),
        apply(v.z, r.w[2], d.threshold, d.scale), apply(v.w, r.w[3], d.threshold, d.scale));
    if constexpr (StoreMask)
      reinterpret_cast<uchar4*>(mask)[g] =
          make_uchar4(r.w[0] >= d.threshold, r.w[1] >= d.threshold, r.w[2] >= d.threshold,
                      r.w[3] >= d.threshold);
  } else if (g == full && 4 * full < n) {  // the last 1..3 elements
    const Words r = dropout_words(uint64_t(g), d.seed, d.offset);
    for (int64_t i = 4 * full; i < n; ++i) {
      y[i] = apply(x[i], r.w[i - 4 * full], d.threshold, d.scale);
      if constexpr (StoreMask) mask[i] = r.w[i - 4 * full] >= d.threshold;
    }
  }
}

// The backward of a framework that stored the mask: one more byte read per element.
__global__ void dropout_from_mask(const float* __restrict__ dy, const uint8_t* __restrict__ mask,
                                  float* __restrict__ dx, int64_t n, float scale) {
  const int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t full = n / 4;
  if (g < full) {
    const float4 v = reinterpret_cast<const float4*>(dy)[g];
    const uchar4 m = reinterpret_cast<const uchar4*>(mask)[g];
    reinterpret_cast<float4*>(dx)[g] =
        make_float4(m.x ? v.x * scale : 0.0f, m.y ? v.y * scale : 0.0f, m.z ? v.z * scale : 0.0f,
                    m.w ? v.w * scale : 0.0f);
  } else if (g == full) {
    for (int64_t i = 4 * full; i < n; ++i) dx[i] = mask[i] ? dy[i] * scale : 0.0f;
  }
}

__global__ void philox_known_answers(const uint32_t* __restrict__ in, uint32_t* __restrict__ out,
                                     int count) {
  const int t = threadIdx.x;
  if (t >= count) return;
  const uint32_t* v = in + 6 * t;
  const Words r = philox4x32_10(Words{{v[0], v[1], v[2], v[3]}}, v[4], v[5]);
  for (int k = 0; k < 4; ++k) out[4 * t + k] = r.w[k];
}

// ---- launchers ----------------------------------------------------------------------------------
constexpr int kBlock = 256;

enum class Kind { scalar, vec4, vec4_mask, from_mask };
enum class Pass { forward, backward };
struct Version {
  const char* name;
  Kind kind;
  Pass pass;
  double bytes_per_element;
};
const Version kVersions[] = {
    {"forward_scalar", Kind::scalar, Pass::forward, 8},
    {"forward_vec4", Kind::vec4, Pass::forward, 8},
    {"forward_store_mask", Kind::vec4_mask, Pass::forward, 9},
    {"backward_regen", Kind::vec4, Pass::backward, 8},
    {"backward_stored", Kind::from_mask, Pass::backward, 9},
};

unsigned grid_of(const Version& v, int64_t n) {
  return gpu100::grid_for(v.kind == Kind::scalar ? n : n / 4 + 1, kBlock);
}

// in -> out; mask is written (vec4_mask) or read (from_mask).
void launch(const Version& v, unsigned grid, const float* in, float* out, uint8_t* mask, int64_t n,
            const Dropout& d, cudaStream_t s) {
  switch (v.kind) {
    case Kind::scalar:
      dropout_scalar<<<grid, kBlock, 0, s>>>(in, out, n, d);
      break;
    case Kind::vec4:
      dropout_vec4<false><<<grid, kBlock, 0, s>>>(in, out, nullptr, n, d);
      break;
    case Kind::vec4_mask:
      dropout_vec4<true><<<grid, kBlock, 0, s>>>(in, out, mask, n, d);
      break;
    case Kind::from_mask:
      dropout_from_mask<<<grid, kBlock, 0, s>>>(in, mask, out, n, d.scale);
      break;
  }
  LAUNCH_CHECK();
}

// ---- analysis -----------------------------------------------------------------------------------
// The published known answers (Random123's kat_vectors): counter[4], key[2] -> output[4].
struct KnownAnswer {
  uint32_t in[6], out[4];
};
constexpr KnownAnswer kKnownAnswers[] = {
    {{0, 0, 0, 0, 0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

void check_known_answers(gpu100::Report& report) {
  std::vector<uint32_t> in, expected, cpu;
  for (const auto& k : kKnownAnswers) {
    in.insert(in.end(), k.in, k.in + 6);
    expected.insert(expected.end(), k.out, k.out + 4);
    const Words r = philox4x32_10(Words{{k.in[0], k.in[1], k.in[2], k.in[3]}}, k.in[4], k.in[5]);
    cpu.insert(cpu.end(), r.w, r.w + 4);
  }
  const int count = int(std::size(kKnownAnswers));
  gpu100::DeviceBuffer<uint32_t> d_in(in), d_out{expected.size()};
  d_out.poison();
  philox_known_answers<<<1, 32>>>(d_in.data(), d_out.data(), count);
  LAUNCH_CHECK();
  CUDA_CHECK(cudaDeviceSynchronize());
  report.add_check("Philox4x32-10 known answers (CPU)", gpu100::compare_exact(cpu, expected));
  report.add_check("Philox4x32-10 known answers (GPU)",
                   gpu100::compare_exact(d_out.download(), expected));
}

// The kept count is binomial(n, q) with q = 1 - threshold / 2^32: within 6 standard deviations
// (+1 for tiny n) unless the generator or the threshold is wrong (a false alarm ~ 2e-9).
gpu100::CheckResult check_kept_fraction(const std::vector<uint8_t>& keep, const Dropout& d) {
  double kept = 0;
  for (uint8_t k : keep) kept += k;
  const double n = double(keep.size()), q = 1.0 - double(d.threshold) / 4294967296.0;
  const double mean = n * q, sd = std::sqrt(n * q * (1.0 - q));
  gpu100::CheckResult r;
  r.checked = true;
  r.count = int64_t(n);
  r.worst_got = kept;
  r.worst_ref = mean;
  r.max_abs_err = std::fabs(kept - mean);
  r.rel_err = mean > 0 ? r.max_abs_err / mean : 0;
  r.tolerance = fmt::format("|kept - n q| <= 6 sd + 1 = {:.1f}", 6 * sd + 1);
  r.pass = r.max_abs_err <= 6 * sd + 1;
  return r;
}

// y = keep * x * s is linear in x, so dx = keep * dy * s exactly; the probe checks the CPU backward
// (mask and scale applied to dy, not to x) on a handful of elements.
gpu100::CheckResult check_reference_gradient(const Dropout& d) {
  const int64_t n = 7;
  const auto keep = mask_cpu(n, d);
  const auto xf = gpu100::random_floats(size_t(n), 7), dyf = gpu100::random_floats(size_t(n), 8);
  const std::vector<double> x(xf.begin(), xf.end()), dy(dyf.begin(), dyf.end());
  auto forward = [&](const std::vector<double>& v) {
    std::vector<double> y(v.size());
    for (size_t i = 0; i < v.size(); ++i) y[i] = keep[i] ? v[i] * double(d.scale) : 0.0;
    return y;
  };
  std::vector<double> dx(static_cast<size_t>(n));
  for (size_t i = 0; i < dx.size(); ++i) dx[i] = keep[i] ? dy[i] * double(d.scale) : 0.0;
  return gpu100::check_gradient(forward, x, dy, dx);
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "Dropout with in-kernel Philox4x32-10: forward, stored-mask and regenerated backward");
  int64_t n = (int64_t(1) << 26) + 3;
  double p = 0.1;
  int offset = 0;
  cli.size("n", n, 100'003, "number of elements");
  cli.option("p", p, "probability of dropping an element", 0.0, 0.999);
  cli.option("offset", offset, "Philox counter offset (a different stream per dropout call)", 0,
             2147483647);
  cli.kernels_of(kVersions);
  cli.device_bytes([&] { return 4.0 * double(n) * sizeof(float) + double(n); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");

    const Dropout d = make_dropout(p, ctx.seed(), uint64_t(offset));
    auto x = gpu100::random_floats(size_t(n), ctx.seed() + 1);
    auto dy = gpu100::random_floats(size_t(n), ctx.seed() + 2);
    // A zero input would make a kept and a dropped element look alike: the y check is a mask
    // check only for non-zero inputs.
    for (auto* v : {&x, &dy})
      for (float& e : *v)
        if (e == 0.0f) e = 0.5f;
    const auto keep = mask_cpu(n, d);
    const auto y_ref = dropout_cpu(x, keep, d.scale);
    const auto dx_ref = dropout_cpu(dy, keep, d.scale);

    check_known_answers(report);
    report.add_check("kept fraction (binomial bounds)", check_kept_fraction(keep, d));
    report.add_check("reference gradient (finite differences)", check_reference_gradient(d));

    gpu100::DeviceBuffer<float> d_x(x), d_dy(dy), d_out{size_t(n)};
    gpu100::DeviceBuffer<uint8_t> d_mask(keep);  // the stored mask the backward_stored reads
    gpu100::DeviceBuffer<uint8_t> d_mask_out{size_t(n)};
    ctx.copy_baseline(size_t(n) * sizeof(float));  // reads and writes 8 n bytes, like the kernels

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      const bool fwd = v.pass == Pass::forward;
      runs.push_back(
          {.name = v.name,
           .launch =
               [&, fwd, grid = grid_of(v, n)](cudaStream_t s) {
                 uint8_t* mask = v.kind == Kind::from_mask ? d_mask.data() : d_mask_out.data();
                 launch(v, grid, fwd ? d_x.data() : d_dy.data(), d_out.data(), mask, n, d, s);
               },
           .reset =
               [&] {
                 d_out.poison();
                 d_mask_out.poison();
               },
           .check =
               [&, fwd] {
                 auto c = gpu100::compare_exact(d_out.download(), fwd ? y_ref : dx_ref);
                 if (v.kind == Kind::vec4_mask)
                   c = gpu100::combine(c, gpu100::compare_exact(d_mask_out.download(), keep));
                 return c;
               },
           .work = v.bytes_per_element * double(n)});
    }
    ctx.measure_all(runs);
    report.note(fmt::format("p = {}: keep when the Philox word >= {} (of 2^32), scale {:.9g}", p,
                            d.threshold, d.scale));
  });
}
