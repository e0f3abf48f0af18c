// Day 042 - batch normalization, training mode: per-channel statistics, forward and backward
//
// x is NCHW. Each channel c is normalized over its M = N * H * W values, the whole batch:
//   mean_c, var_c (biased), rstd_c = 1 / sqrt(var_c + eps), xhat = (x - mean_c) rstd_c,
//   y = gamma_c xhat + beta_c
// and the backward, with sums over the channel's M values:
//   dbeta_c = sum dy, dgamma_c = sum dy xhat,
//   dx = gamma_c rstd_c / M * (M dy - dbeta_c - xhat dgamma_c).
// Unlike layer norm, a reduction does not fit in one warp or even one block when M is large,
// and there are few channels (64 to 2048) to spread over the GPU: the lesson is how to split
// one long reduction over many blocks and merge the pieces deterministically.
//
// Versions (fp32; 256 threads per block)
//   fwd_two_pass  one block per channel: a pass for the mean, one for the squared deviations
//                 (the numerically safe variance), one to write y. Reads x three times and
//                 runs only C blocks.
//   fwd_welford   one block per channel, Welford's running (count, mean, M2) per thread, merged
//                 across the warp with shuffles and across warps in shared memory (Chan's rule):
//                 the statistics in one read of x, then a second read to write y.
//   fwd_split     the same Welford partials from C x S blocks (S slices per channel, so the GPU
//                 fills even with few channels), then a normalize kernel over the same grid whose
//                 blocks merge their channel's S partials in slice order (the same bits on every
//                 run, no atomics) before writing y.
//   bwd_block     one block per channel: sums of dy and dy xhat, then dx.
//   bwd_split     C x S blocks of partial sums, then a dx kernel over the same grid that merges
//                 the S partials in slice order.
//
// Check: against a CPU reference in double. Every seventh channel is constant (zero variance:
// rstd = 1/sqrt(eps), xhat = 0 exactly in exact arithmetic, y = beta); a one-element channel
// (--n 1 --hw 1) has zero variance everywhere. Every element is compared against its own
// rounding-error bound (the mean's error times rstd, the variance's through rstd, the products),
// so the zero-variance channels, whose dx is 1/sqrt(eps) larger, neither set the scale of the
// check for the others nor hide behind it. The backward is handed the reference mean and rstd, so
// it is checked on its own. The CPU backward is checked against central finite differences of the
// CPU forward (x, gamma and beta probed) on a tiny case with a constant channel.
//
// Run:  build/bin/day042 [--n 16] [--c 256] [--hw 3136] [--eps 1e-5] [--kernel fwd_split,...]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kBlock = 256;  // 8 warps
constexpr int kWarps = kBlock / 32;
constexpr int64_t kSliceElems = 4096;  // elements per block in the split versions
constexpr const char* kBoundName = "per-element fp32 error bound";
constexpr int kMaxSlices = 64;
constexpr double kU = 0x1p-24;  // fp32 unit roundoff

struct Shape {
  int n = 0, c = 0, hw = 0;
  double eps = 0;
  int64_t m() const { return int64_t(n) * hw; }  // values per channel
  // Slices per channel of the split versions: whole kSliceElems each, at most kMaxSlices.
  int slices() const {
    return int(std::clamp<int64_t>((m() + kSliceElems - 1) / kSliceElems, 1, kMaxSlices));
  }
};

// Where the e-th value of channel ch lives (e runs over (n, hw) in that order).
inline int64_t offset(const Shape& s, int ch, int64_t e) {
  return (e / s.hw * s.c + ch) * s.hw + e % s.hw;
}

// ---- CPU reference ------------------------------------------------------------------------------
struct Stats {
  std::vector<double> mean, var, rstd;
};

Stats batchnorm_stats_cpu(const Shape& s, const std::vector<double>& x) {
  Stats st{std::vector<double>(s.c), std::vector<double>(s.c), std::vector<double>(s.c)};
  for (int ch = 0; ch < s.c; ++ch) {
    double sum = 0, dev = 0;
    for (int64_t e = 0; e < s.m(); ++e) sum += x[offset(s, ch, e)];
    const double mean = sum / double(s.m());
    for (int64_t e = 0; e < s.m(); ++e)
      dev += (x[offset(s, ch, e)] - mean) * (x[offset(s, ch, e)] - mean);
    st.mean[ch] = mean;
    st.var[ch] = dev / double(s.m());
    st.rstd[ch] = 1.0 / std::sqrt(st.var[ch] + s.eps);
  }
  return st;
}

std::vector<double> batchnorm_forward_cpu(const Shape& s, const std::vector<double>& x,
                                          const std::vector<double>& gamma,
                                          const std::vector<double>& beta) {
  const Stats st = batchnorm_stats_cpu(s, x);
  std::vector<double> y(x.size());
  for (int ch = 0; ch < s.c; ++ch)
    for (int64_t e = 0; e < s.m(); ++e) {
      const int64_t o = offset(s, ch, e);
      y[o] = (x[o] - st.mean[ch]) * st.rstd[ch] * gamma[ch] + beta[ch];
    }
  return y;
}

struct Grads {
  std::vector<double> dx, dgamma, dbeta;
};

Grads batchnorm_backward_cpu(const Shape& s, const std::vector<double>& x, const Stats& st,
                             const std::vector<double>& gamma, const std::vector<double>& dy) {
  Grads g{std::vector<double>(x.size()), std::vector<double>(s.c), std::vector<double>(s.c)};
  const double m = double(s.m());
  for (int ch = 0; ch < s.c; ++ch) {
    double sdy = 0, sdyx = 0;
    for (int64_t e = 0; e < s.m(); ++e) {
      const int64_t o = offset(s, ch, e);
      sdy += dy[o];
      sdyx += dy[o] * (x[o] - st.mean[ch]) * st.rstd[ch];
    }
    g.dbeta[ch] = sdy;
    g.dgamma[ch] = sdyx;
    for (int64_t e = 0; e < s.m(); ++e) {
      const int64_t o = offset(s, ch, e);
      const double xhat = (x[o] - st.mean[ch]) * st.rstd[ch];
      g.dx[o] = gamma[ch] * st.rstd[ch] / m * (m * dy[o] - sdy - xhat * sdyx);
    }
  }
  return g;
}

// ---- error bounds -------------------------------------------------------------------------------
double gamma_n(double h) {
  return h * kU / (1 - h * kU);
}

// Additions an input goes through on its way into a channel sum, the most of any version: a
// thread's sequential share, 8 tree levels (5 shuffles, 3 over the warps) and, split, the slices
// merged in order.
double additions(const Shape& s) {
  const double block = std::ceil(double(s.m()) / kBlock) + 8;
  const double split = std::ceil(double(s.m()) / (double(s.slices()) * kBlock)) + 8 + s.slices();
  return std::max(block, split);
}

// Per-element bounds of the forward (|got - ref| <= bound).
//   mean: a sum of M values of size <= A = max|x - 0| (Welford's update mean += (x - mean) / n
//     has three roundings per step where a sum has one): delta = gamma_{3h+2} A.
//   var: each squared deviation has a few roundings and carries the mean's error (cross terms
//     2 delta |x - mean| <= 4 delta A, plus delta^2): Ev = gamma_{3h+8} var + 4 delta A + delta^2.
//   rstd: half the relative error of var + eps, 2 ulp of rsqrtf and a rounding: r (Ev / (2 (var +
//     eps)) + 6u).
//   y = (x - mean) rstd gamma + beta: |gamma| (delta rstd + |x - mean| drstd) + 4 roundings.
struct ForwardBounds {
  std::vector<double> mean, rstd, y;
};
ForwardBounds forward_bounds(const Shape& s, const std::vector<double>& x, const Stats& st,
                             const std::vector<double>& gamma, const std::vector<double>& y) {
  ForwardBounds b{std::vector<double>(s.c), std::vector<double>(s.c),
                  std::vector<double>(x.size())};
  const double h = additions(s);
  for (int ch = 0; ch < s.c; ++ch) {
    double a = 0;
    for (int64_t e = 0; e < s.m(); ++e) a = std::max(a, std::fabs(x[offset(s, ch, e)]));
    const double delta = gamma_n(3 * h + 2) * a;
    const double ev = gamma_n(3 * h + 8) * st.var[ch] + 4 * delta * a + delta * delta;
    const double r = st.rstd[ch];
    const double dr = r * (ev / (2 * (st.var[ch] + s.eps)) + 6 * kU);
    b.mean[ch] = delta;
    b.rstd[ch] = dr;
    for (int64_t e = 0; e < s.m(); ++e) {
      const int64_t o = offset(s, ch, e);
      const double d = std::fabs(x[o] - st.mean[ch]);
      b.y[o] = std::fabs(gamma[ch]) * (delta * (r + dr) + d * dr) +
               gamma_n(4) * (d * r * std::fabs(gamma[ch]) + std::fabs(y[o]));
    }
  }
  return b;
}

// Per-element bounds of the backward, which gets mean and rstd rounded to fp32 (relative u each):
//   xhat = (x - mean) rstd: dxh = u |mean| rstd + gamma_3 |xhat| (+ rstd's rounding).
//   sums: dbeta off by gamma_h sum|dy|; dgamma by gamma_{h+2} sum|dy xhat| + sum |dy| dxh.
//   dx = gamma rstd / M (M dy - dbeta - xhat dgamma): the errors of its terms, plus 5 roundings.
struct BackwardBounds {
  std::vector<double> dx, dgamma, dbeta;
};
BackwardBounds backward_bounds(const Shape& s, const std::vector<double>& x, const Stats& st,
                               const std::vector<double>& gamma, const std::vector<double>& dy,
                               const Grads& g) {
  BackwardBounds b{std::vector<double>(x.size()), std::vector<double>(s.c),
                   std::vector<double>(s.c)};
  const double h = additions(s), m = double(s.m());
  for (int ch = 0; ch < s.c; ++ch) {
    const double r = st.rstd[ch];
    double sdy = 0, sdyx = 0, sdyd = 0;
    auto xhat_err = [&](int64_t o) {
      const double xh = std::fabs((x[o] - st.mean[ch]) * r);
      return kU * std::fabs(st.mean[ch]) * r + gamma_n(4) * xh;
    };
    for (int64_t e = 0; e < s.m(); ++e) {
      const int64_t o = offset(s, ch, e);
      sdy += std::fabs(dy[o]);
      sdyx += std::fabs(dy[o] * (x[o] - st.mean[ch]) * r);
      sdyd += std::fabs(dy[o]) * xhat_err(o);
    }
    b.dbeta[ch] = gamma_n(h) * sdy;
    b.dgamma[ch] = gamma_n(h + 2) * sdyx + sdyd;
    for (int64_t e = 0; e < s.m(); ++e) {
      const int64_t o = offset(s, ch, e);
      const double xh = std::fabs((x[o] - st.mean[ch]) * r), dxh = xhat_err(o);
      const double inner =
          b.dbeta[ch] + xh * b.dgamma[ch] + dxh * (std::fabs(g.dgamma[ch]) + b.dgamma[ch]);
      b.dx[o] = std::fabs(gamma[ch]) * r / m * inner +
                gamma_n(6) * (std::fabs(g.dx[o]) + std::fabs(gamma[ch]) * r / m *
                                                       (m * std::fabs(dy[o]) + sdy + xh * sdyx));
    }
  }
  return b;
}

// ---- kernels ------------------------------------------------------------------------------------
// Welford state: count, mean, sum of squared deviations. Merged by Chan's rule, which is exact
// in exact arithmetic for any split of the values.
struct Welford {  // trivial, so that it can live in __shared__
  float n, mean, m2;
};

__device__ __forceinline__ Welford merge(Welford a, Welford b) {
  const float n = a.n + b.n;
  if (n == 0) return a;
  const float delta = b.mean - a.mean, fb = b.n / n;
  return {n, a.mean + delta * fb, a.m2 + b.m2 + delta * delta * a.n * fb};
}

__device__ __forceinline__ void push(Welford& w, float x) {
  w.n += 1;
  const float d = x - w.mean;
  w.mean += d / w.n;
  w.m2 += d * (x - w.mean);
}

__device__ __forceinline__ Welford shfl_xor(Welford w, int k) {
  return {__shfl_xor_sync(0xffffffffu, w.n, k), __shfl_xor_sync(0xffffffffu, w.mean, k),
          __shfl_xor_sync(0xffffffffu, w.m2, k)};
}
__device__ __forceinline__ float shfl_xor(float v, int k) {
  return __shfl_xor_sync(0xffffffffu, v, k);
}
__device__ __forceinline__ float2 shfl_xor(float2 v, int k) {
  return {__shfl_xor_sync(0xffffffffu, v.x, k), __shfl_xor_sync(0xffffffffu, v.y, k)};
}
__device__ __forceinline__ float merge(float a, float b) {
  return a + b;
}
__device__ __forceinline__ float2 merge(float2 a, float2 b) {
  return {a.x + b.x, a.y + b.y};
}

// Block-wide merge in a fixed tree (the same order on every run); every thread gets the result.
// The trailing barrier lets the caller reuse `scratch` right away.
template <class T>
__device__ T block_merge(T v, T* scratch) {
#pragma unroll
  for (int k = 16; k > 0; k /= 2) v = merge(v, shfl_xor(v, k));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  T total = scratch[0];
#pragma unroll
  for (int w = 1; w < kWarps; ++w) total = merge(total, scratch[w]);
  __syncthreads();
  return total;
}

// The channel's values e in [e0, e1) of an NCHW tensor; the (n, hw) split costs a division, which
// a memory-bound kernel hides.
struct Channel {
  int c, hw, ch;
  __device__ __forceinline__ int64_t at(int64_t e) const {
    return (e / hw * c + ch) * int64_t(hw) + e % hw;
  }
};

__global__ void bn_forward_two_pass(const float* __restrict__ x, const float* __restrict__ gamma,
                                    const float* __restrict__ beta, float* __restrict__ y,
                                    float* __restrict__ mean_out, float* __restrict__ rstd_out,
                                    int c, int hw, int64_t m, float eps) {
  __shared__ float scratch[kWarps];
  const Channel ch{c, hw, int(blockIdx.x)};
  float sum = 0;
  for (int64_t e = threadIdx.x; e < m; e += blockDim.x) sum += x[ch.at(e)];
  const float mean = block_merge(sum, scratch) / float(m);
  float dev = 0;
  for (int64_t e = threadIdx.x; e < m; e += blockDim.x) {
    const float d = x[ch.at(e)] - mean;
    dev += d * d;
  }
  const float rstd = rsqrtf(block_merge(dev, scratch) / float(m) + eps);
  if (threadIdx.x == 0) {
    mean_out[ch.ch] = mean;
    rstd_out[ch.ch] = rstd;
  }
  const float g = gamma[ch.ch] * rstd, b = beta[ch.ch];
  for (int64_t e = threadIdx.x; e < m; e += blockDim.x) {
    const int64_t o = ch.at(e);
    y[o] = (x[o] - mean) * g + b;
  }
}

__global__ void bn_forward_welford(const float* __restrict__ x, const float* __restrict__ gamma,
                                   const float* __restrict__ beta, float* __restrict__ y,
                                   float* __restrict__ mean_out, float* __restrict__ rstd_out,
                                   int c, int hw, int64_t m, float eps) {
  __shared__ Welford scratch[kWarps];
  const Channel ch{c, hw, int(blockIdx.x)};
  Welford w{0, 0, 0};
  for (int64_t e = threadIdx.x; e < m; e += blockDim.x) push(w, x[ch.at(e)]);
  w = block_merge(w, scratch);
  const float rstd = rsqrtf(w.m2 / w.n + eps);
  if (threadIdx.x == 0) {
    mean_out[ch.ch] = w.mean;
    rstd_out[ch.ch] = rstd;
  }
  const float g = gamma[ch.ch] * rstd, b = beta[ch.ch];
  for (int64_t e = threadIdx.x; e < m; e += blockDim.x) {
    const int64_t o = ch.at(e);
    y[o] = (x[o] - w.mean) * g + b;
  }
}

// Slice blockIdx.y of channel blockIdx.x: elements [e0, e1).
__device__ __forceinline__ void slice_range(int64_t m, int64_t& e0, int64_t& e1) {
  const int64_t per = (m + gridDim.y - 1) / gridDim.y;
  e0 = min(m, int64_t(blockIdx.y) * per);
  e1 = min(m, e0 + per);
}

__global__ void bn_stats_partial(const float* __restrict__ x, Welford* __restrict__ partial, int c,
                                 int hw, int64_t m) {
  __shared__ Welford scratch[kWarps];
  const Channel ch{c, hw, int(blockIdx.x)};
  int64_t e0, e1;
  slice_range(m, e0, e1);
  Welford w{0, 0, 0};
  for (int64_t e = e0 + threadIdx.x; e < e1; e += blockDim.x) push(w, x[ch.at(e)]);
  w = block_merge(w, scratch);
  if (threadIdx.x == 0) partial[int64_t(blockIdx.x) * gridDim.y + blockIdx.y] = w;
}

__global__ void bn_normalize_split(const float* __restrict__ x, const Welford* __restrict__ partial,
                                   const float* __restrict__ gamma, const float* __restrict__ beta,
                                   float* __restrict__ y, float* __restrict__ mean_out,
                                   float* __restrict__ rstd_out, int c, int hw, int64_t m,
                                   float eps) {
  __shared__ float stats[2];
  const Channel ch{c, hw, int(blockIdx.x)};
  if (threadIdx.x == 0) {
    // In slice order: every block of the channel computes the same bits.
    Welford w = partial[int64_t(blockIdx.x) * gridDim.y];
    for (unsigned k = 1; k < gridDim.y; ++k)
      w = merge(w, partial[int64_t(blockIdx.x) * gridDim.y + k]);
    stats[0] = w.mean;
    stats[1] = rsqrtf(w.m2 / w.n + eps);
    if (blockIdx.y == 0) {
      mean_out[ch.ch] = stats[0];
      rstd_out[ch.ch] = stats[1];
    }
  }
  __syncthreads();
  const float mean = stats[0], g = gamma[ch.ch] * stats[1], b = beta[ch.ch];
  int64_t e0, e1;
  slice_range(m, e0, e1);
  for (int64_t e = e0 + threadIdx.x; e < e1; e += blockDim.x) {
    const int64_t o = ch.at(e);
    y[o] = (x[o] - mean) * g + b;
  }
}

// Backward: (sum dy, sum dy xhat) of elements [e0, e1) of the channel.
__device__ __forceinline__ float2 grad_sums(const float* __restrict__ x,
                                            const float* __restrict__ dy, const Channel& ch,
                                            int64_t e0, int64_t e1, float mean, float rstd) {
  float2 s{0, 0};
  for (int64_t e = e0 + threadIdx.x; e < e1; e += blockDim.x) {
    const int64_t o = ch.at(e);
    const float g = dy[o];
    s.x += g;
    s.y += g * ((x[o] - mean) * rstd);
  }
  return s;
}

__device__ __forceinline__ void write_dx(const float* __restrict__ x, const float* __restrict__ dy,
                                         float* __restrict__ dx, const Channel& ch, int64_t e0,
                                         int64_t e1, int64_t m, float mean, float rstd, float gamma,
                                         float2 sums) {
  const float scale = gamma * rstd / float(m), fm = float(m);
  for (int64_t e = e0 + threadIdx.x; e < e1; e += blockDim.x) {
    const int64_t o = ch.at(e);
    const float xhat = (x[o] - mean) * rstd;
    dx[o] = scale * (fm * dy[o] - sums.x - xhat * sums.y);
  }
}

__global__ void bn_backward_block(const float* __restrict__ x, const float* __restrict__ dy,
                                  const float* __restrict__ mean, const float* __restrict__ rstd,
                                  const float* __restrict__ gamma, float* __restrict__ dx,
                                  float* __restrict__ dgamma, float* __restrict__ dbeta, int c,
                                  int hw, int64_t m) {
  __shared__ float2 scratch[kWarps];
  const Channel ch{c, hw, int(blockIdx.x)};
  const float mu = mean[ch.ch], r = rstd[ch.ch];
  const float2 sums = block_merge(grad_sums(x, dy, ch, 0, m, mu, r), scratch);
  if (threadIdx.x == 0) {
    dbeta[ch.ch] = sums.x;
    dgamma[ch.ch] = sums.y;
  }
  write_dx(x, dy, dx, ch, 0, m, m, mu, r, gamma[ch.ch], sums);
}

__global__ void bn_backward_partial(const float* __restrict__ x, const float* __restrict__ dy,
                                    const float* __restrict__ mean, const float* __restrict__ rstd,
                                    float2* __restrict__ partial, int c, int hw, int64_t m) {
  __shared__ float2 scratch[kWarps];
  const Channel ch{c, hw, int(blockIdx.x)};
  int64_t e0, e1;
  slice_range(m, e0, e1);
  const float2 s = block_merge(grad_sums(x, dy, ch, e0, e1, mean[ch.ch], rstd[ch.ch]), scratch);
  if (threadIdx.x == 0) partial[int64_t(blockIdx.x) * gridDim.y + blockIdx.y] = s;
}

__global__ void bn_backward_dx_split(const float* __restrict__ x, const float* __restrict__ dy,
                                     const float* __restrict__ mean, const float* __restrict__ rstd,
                                     const float* __restrict__ gamma,
                                     const float2* __restrict__ partial, float* __restrict__ dx,
                                     float* __restrict__ dgamma, float* __restrict__ dbeta, int c,
                                     int hw, int64_t m) {
  __shared__ float2 total;
  const Channel ch{c, hw, int(blockIdx.x)};
  if (threadIdx.x == 0) {
    float2 s = partial[int64_t(blockIdx.x) * gridDim.y];
    for (unsigned k = 1; k < gridDim.y; ++k)
      s = merge(s, partial[int64_t(blockIdx.x) * gridDim.y + k]);
    total = s;
    if (blockIdx.y == 0) {
      dbeta[ch.ch] = s.x;
      dgamma[ch.ch] = s.y;
    }
  }
  __syncthreads();
  int64_t e0, e1;
  slice_range(m, e0, e1);
  write_dx(x, dy, dx, ch, e0, e1, m, mean[ch.ch], rstd[ch.ch], gamma[ch.ch], total);
}

// ---- launchers ----------------------------------------------------------------------------------
enum class Kind { fwd_two_pass, fwd_welford, fwd_split, bwd_block, bwd_split };
struct Version {
  const char* name;
  Kind kind;
  bool forward() const {
    return kind == Kind::fwd_two_pass || kind == Kind::fwd_welford || kind == Kind::fwd_split;
  }
};
const Version kVersions[] = {
    {"fwd_two_pass", Kind::fwd_two_pass}, {"fwd_welford", Kind::fwd_welford},
    {"fwd_split", Kind::fwd_split},       {"bwd_block", Kind::bwd_block},
    {"bwd_split", Kind::bwd_split},
};

struct Buffers {
  const float *x, *gamma, *beta, *dy, *mean_in, *rstd_in;
  float *y, *mean, *rstd, *dx, *dgamma, *dbeta;
  Welford* stats_partial;
  float2* grad_partial;
};

void launch(const Version& v, const Shape& s, const Buffers& b, cudaStream_t st) {
  const dim3 per_channel(s.c), split(s.c, s.slices());
  const float eps = float(s.eps);
  switch (v.kind) {
    case Kind::fwd_two_pass:
      bn_forward_two_pass<<<per_channel, kBlock, 0, st>>>(b.x, b.gamma, b.beta, b.y, b.mean, b.rstd,
                                                          s.c, s.hw, s.m(), eps);
      break;
    case Kind::fwd_welford:
      bn_forward_welford<<<per_channel, kBlock, 0, st>>>(b.x, b.gamma, b.beta, b.y, b.mean, b.rstd,
                                                         s.c, s.hw, s.m(), eps);
      break;
    case Kind::fwd_split:
      bn_stats_partial<<<split, kBlock, 0, st>>>(b.x, b.stats_partial, s.c, s.hw, s.m());
      LAUNCH_CHECK();
      bn_normalize_split<<<split, kBlock, 0, st>>>(b.x, b.stats_partial, b.gamma, b.beta, b.y,
                                                   b.mean, b.rstd, s.c, s.hw, s.m(), eps);
      break;
    case Kind::bwd_block:
      bn_backward_block<<<per_channel, kBlock, 0, st>>>(b.x, b.dy, b.mean_in, b.rstd_in, b.gamma,
                                                        b.dx, b.dgamma, b.dbeta, s.c, s.hw, s.m());
      break;
    case Kind::bwd_split:
      bn_backward_partial<<<split, kBlock, 0, st>>>(b.x, b.dy, b.mean_in, b.rstd_in, b.grad_partial,
                                                    s.c, s.hw, s.m());
      LAUNCH_CHECK();
      bn_backward_dx_split<<<split, kBlock, 0, st>>>(b.x, b.dy, b.mean_in, b.rstd_in, b.gamma,
                                                     b.grad_partial, b.dx, b.dgamma, b.dbeta, s.c,
                                                     s.hw, s.m());
      break;
  }
  LAUNCH_CHECK();
}

// ---- analysis -----------------------------------------------------------------------------------
// The CPU backward against central differences of the CPU forward, probing x, gamma and beta
// together: 2 images, 3 channels (the middle one constant), 2 pixels.
gpu100::CheckResult finite_difference_check() {
  const Shape s{2, 3, 2, 1e-3};
  const std::vector<double> x0 = {0.4, -1.1, 0.5, 0.5, 0.9, 1.7, -0.3, 0.8, 0.5, 0.5, -1.4, 0.2};
  const std::vector<double> gamma0 = {1.3, -0.7, 0.6}, beta0 = {0.1, 0.4, -0.2};
  const std::vector<double> dy = {0.6, -0.9, 1.2, 0.3, -0.4, 0.7, 0.2, 1.1, -0.8, 0.5, 0.9, -0.6};
  const size_t nx = x0.size();
  auto forward = [&](const std::vector<double>& z) {
    const std::vector<double> x(z.begin(), z.begin() + nx), g(z.begin() + nx, z.begin() + nx + 3),
        b(z.begin() + nx + 3, z.end());
    return batchnorm_forward_cpu(s, x, g, b);
  };
  const Grads g = batchnorm_backward_cpu(s, x0, batchnorm_stats_cpu(s, x0), gamma0, dy);
  std::vector<double> z = x0, grad = g.dx;
  z.insert(z.end(), gamma0.begin(), gamma0.end());
  z.insert(z.end(), beta0.begin(), beta0.end());
  grad.insert(grad.end(), g.dgamma.begin(), g.dgamma.end());
  grad.insert(grad.end(), g.dbeta.begin(), g.dbeta.end());
  return gpu100::check_gradient(forward, z, dy, grad);
}

// ---- the versions: inputs, reference, and each version's run and check ------------------------
// Channel ch: values around an offset of its own, scaled by its own spread; every seventh
// channel constant (zero variance).
struct Inputs {
  std::vector<float> x, gamma, beta, dy;
  std::vector<bool> constant;  // per channel
};

Inputs make_inputs(const Shape& s, uint64_t seed) {
  const size_t total = size_t(s.n) * size_t(s.c) * size_t(s.hw);
  Inputs in;
  in.x = gpu100::random_floats(total, seed, -1.0f, 1.0f);
  const auto offsets = gpu100::random_floats(size_t(s.c), seed + 1, -2.0f, 2.0f);
  const auto spreads = gpu100::random_floats(size_t(s.c), seed + 2, 0.25f, 2.0f);
  in.constant.resize(size_t(s.c));
  for (int ch = 0; ch < s.c; ++ch) {
    in.constant[ch] = ch % 7 == 3 || s.m() == 1;
    for (int64_t e = 0; e < s.m(); ++e) {
      float& v = in.x[size_t(offset(s, ch, e))];
      v = in.constant[ch] ? offsets[ch] : offsets[ch] + spreads[ch] * v;
    }
  }
  in.gamma = gpu100::random_floats(size_t(s.c), seed + 3, 0.5f, 1.5f);
  in.beta = gpu100::random_floats(size_t(s.c), seed + 4);
  in.dy = gpu100::random_floats(total, seed + 5);
  return in;
}

// The reference in double, with every element's bound.
struct Reference {
  Stats st;
  std::vector<double> y;
  Grads g;
  ForwardBounds fb;
  BackwardBounds bb;
};

Reference reference(const Shape& s, const Inputs& in) {
  const std::vector<double> x(in.x.begin(), in.x.end()), gamma(in.gamma.begin(), in.gamma.end()),
      beta(in.beta.begin(), in.beta.end()), dy(in.dy.begin(), in.dy.end());
  Reference r;
  r.st = batchnorm_stats_cpu(s, x);
  r.y = batchnorm_forward_cpu(s, x, gamma, beta);
  r.g = batchnorm_backward_cpu(s, x, r.st, gamma, dy);
  r.fb = forward_bounds(s, x, r.st, gamma, r.y);
  r.bb = backward_bounds(s, x, r.st, gamma, dy, r.g);
  return r;
}

// What every version reads and writes; the backward is handed the reference mean and rstd, so
// that it is checked on its own.
struct DeviceData {
  gpu100::DeviceBuffer<float> x, gamma, beta, dy, mean_in, rstd_in, y, dx, mean, rstd, dgamma,
      dbeta;
  gpu100::DeviceBuffer<Welford> stats_partial;
  gpu100::DeviceBuffer<float2> grad_partial;
};

DeviceData upload(const Shape& s, const Inputs& in, const Reference& ref) {
  const size_t total = in.x.size(), c = size_t(s.c), parts = c * size_t(s.slices());
  const std::vector<float> mean32(ref.st.mean.begin(), ref.st.mean.end()),
      rstd32(ref.st.rstd.begin(), ref.st.rstd.end());
  using Floats = gpu100::DeviceBuffer<float>;
  return {Floats(in.x),
          Floats(in.gamma),
          Floats(in.beta),
          Floats(in.dy),
          Floats(mean32),
          Floats(rstd32),
          Floats(total),
          Floats(total),
          Floats(c),
          Floats(c),
          Floats(c),
          Floats(c),
          gpu100::DeviceBuffer<Welford>(parts),
          gpu100::DeviceBuffer<float2>(parts)};
}

Buffers buffers(DeviceData& d) {
  return {d.x.data(),
          d.gamma.data(),
          d.beta.data(),
          d.dy.data(),
          d.mean_in.data(),
          d.rstd_in.data(),
          d.y.data(),
          d.mean.data(),
          d.rstd.data(),
          d.dx.data(),
          d.dgamma.data(),
          d.dbeta.data(),
          d.stats_partial.data(),
          d.grad_partial.data()};
}

// y, mean and rstd element by element; `residue` gets what a constant channel's y deviates from
// beta (exactly beta in exact arithmetic): the two-pass mean is a rounded sum, Welford's stays
// the value itself.
gpu100::CheckResult check_forward(const Shape& s, const DeviceData& d, const Inputs& in,
                                  const Reference& ref, double& residue) {
  const auto y = d.y.download();
  residue = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const int ch = int(int64_t(i) / s.hw % s.c);
    if (in.constant[ch]) residue = std::max(residue, std::fabs(double(y[i]) - in.beta[ch]));
  }
  auto r = gpu100::compare_within(y, ref.y, ref.fb.y, kBoundName);
  r = gpu100::combine(
      r, gpu100::compare_within(d.mean.download(), ref.st.mean, ref.fb.mean, kBoundName));
  return gpu100::combine(
      r, gpu100::compare_within(d.rstd.download(), ref.st.rstd, ref.fb.rstd, kBoundName));
}

gpu100::CheckResult check_backward(const DeviceData& d, const Reference& ref) {
  auto r = gpu100::compare_within(d.dx.download(), ref.g.dx, ref.bb.dx, kBoundName);
  r = gpu100::combine(
      r, gpu100::compare_within(d.dgamma.download(), ref.g.dgamma, ref.bb.dgamma, kBoundName));
  return gpu100::combine(
      r, gpu100::compare_within(d.dbeta.download(), ref.g.dbeta, ref.bb.dbeta, kBoundName));
}

// Per forward version: the largest |y - beta| on the constant channels.
using Residues = std::map<std::string, double>;

gpu100::Measure measure_version(const Version& v, const Shape& s, DeviceData& d, const Inputs& in,
                                const Reference& ref, Residues& residues) {
  const double total = double(in.x.size());
  return {.name = v.name,
          .launch = [&v, &s, b = buffers(d)](cudaStream_t stream) { launch(v, s, b, stream); },
          .reset =
              [&d] {
                for (auto* b : {&d.y, &d.mean, &d.rstd, &d.dx, &d.dgamma, &d.dbeta}) b->poison();
              },
          .check =
              [&v, &s, &d, &in, &ref, &residues] {
                return v.forward() ? check_forward(s, d, in, ref, residues[v.name])
                                   : check_backward(d, ref);
              },
          // The least traffic: forward x read, y written; backward x and dy read, dx written.
          .work = (v.forward() ? 2.0 : 3.0) * total * sizeof(float)};
}

gpu100::Table residue_table(const Residues& residues) {
  gpu100::Table t{"zero-variance channels", {"version", "max |y - beta|"}};
  for (const Version& v : kVersions)
    if (const auto it = residues.find(v.name); it != residues.end())
      t.add_row({v.name, fmt::format("{:.3g}", it->second)});
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "Batch normalization (training): per-channel statistics by two passes, Welford "
      "per block and Welford split over blocks; backward per block and split");
  int64_t n = 16, c = 256, hw = 3136;
  double eps = 1e-5;
  cli.size("n", n, 3, "images in the batch", int64_t(1) << 20);
  cli.size("c", c, 11, "channels", int64_t(1) << 16);
  cli.size("hw", hw, 37, "pixels per image and channel (H * W)", int64_t(1) << 30);
  cli.option("eps", eps, "added to the variance before the square root", 1e-12, 1.0);
  cli.kernels_of(kVersions);
  cli.validate([&] {
    return n * c * hw >= (int64_t(1) << 31) ? std::string("--n * --c * --hw must be below 2^31")
                                            : std::string();
  });
  cli.device_bytes([&] { return 5.0 * double(n) * double(c) * double(hw) * sizeof(float); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    report.baseline_as_percent();
    const Shape s{int(n), int(c), int(hw), eps};
    report.problem("m", double(s.m()));
    report.problem("slices", double(s.slices()));

    const Inputs in = make_inputs(s, ctx.seed());
    const Reference ref = reference(s, in);
    DeviceData d = upload(s, in, ref);

    // The forward's least traffic: x read, y written (a copy of x).
    ctx.copy_baseline(in.x.size() * sizeof(float));

    Residues residues;
    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) runs.push_back(measure_version(v, s, d, in, ref, residues));
    ctx.measure_all(runs);

    report.add_check("reference gradient (finite differences)", finite_difference_check());
    if (!residues.empty()) report.table(residue_table(residues));
    report.note(
        fmt::format("every seventh channel is constant (zero variance); the split "
                    "versions run {} blocks per channel",
                    s.slices()));
  });
}
