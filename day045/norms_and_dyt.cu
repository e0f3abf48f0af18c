// Day 045 - vector norms (L1, L2) and Dynamic Tanh, forward and backward
//
// Two memory-bound pieces of a training step. The norms of a long vector (gradient clipping
// computes ||g||_2 over every parameter) are full reductions: the whole GPU reads n floats and
// agrees on one number. L2 has a trap beyond speed: x^2 overflows fp32 for |x| > 1.8e19 and
// underflows to 0 for |x| < 1e-19, so a plain sum of squares returns inf or 0 for vectors whose
// norm is perfectly representable. Dynamic Tanh (DyT, "Transformers without Normalization",
// 2025) replaces LayerNorm by y = gamma_j tanh(alpha x) + beta_j with one learned scalar alpha:
// no statistics in the forward, but the backward has three reductions of different shapes,
//   dx = dy gamma_j alpha (1 - t^2)   (t = tanh(alpha x)),   dgamma_j = sum_rows dy t,
//   dbeta_j = sum_rows dy,   dalpha = sum_all dy gamma_j x (1 - t^2).
//
// Versions
//   l1_norm          sum |x|: 16-byte grid-stride loads, block sums, then one block adds the
//                    per-block partials in a fixed order (deterministic, no atomics).
//   l2_norm          the same for sum x^2, then sqrt.
//   l2_norm_scaled   two passes: max|x| (exact), then sum (x 2^-e)^2 with 2^e the power of two
//                    just above the max; scaling by a power of two is exact, and nothing
//                    overflows or underflows.
//   dyt_fwd          one thread per element.
//   dyt_fwd_vec      16-byte loads and stores (when the row length is a multiple of 4; else the
//                    scalar kernel runs, and the report says so).
//   dyt_bwd_unfused  dx in one pass, then a second pass over x and dy for the three reductions.
//   dyt_bwd_fused    one pass: thread = column over a chunk of rows writes dx and accumulates
//                    dgamma, dbeta and its share of dalpha; the chunks' partials are then added
//                    in order.
//
// Check: against a CPU reference in double. Norms: the rounding-error bound of a sum of
// non-negative terms (common/'s summation tolerance, with the additions each input goes
// through), plus the scaled L2 on vectors scaled by 1e25 and 1e-25, where the plain L2 gives inf
// and 0 (shown in a table). DyT (inputs include large |alpha x|, where tanh saturates and
// 1 - t^2 is 0): y, dx and the reductions against per-element rounding-error bounds (tanhf's 2
// ulp, the sums' gamma_h), element by element. The CPU backward (dx, dalpha,
// dgamma, dbeta) is checked against central finite differences of the CPU forward.
//
// Run:  build/bin/day045 [--n 67108867] [--rows 4096] [--cols 4096] [--kernel l2_norm,...]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;
constexpr unsigned kMaxNormBlocks = 1024;  // stage-1 blocks of the norms, whatever the device
constexpr const char* kBoundName = "per-element fp32 error bound";
constexpr int kChunkRows = 64;  // rows per partial in the DyT reductions
constexpr double kU = 0x1p-24;

// ---- CPU reference ------------------------------------------------------------------------------
double l1_cpu(const std::vector<float>& x) {
  double s = 0;
  for (float v : x) s += std::fabs(double(v));
  return s;
}
double l2_cpu(const std::vector<float>& x) {
  double s = 0;
  for (float v : x) s += double(v) * double(v);  // doubles reach 1e308: no overflow for fp32 data
  return std::sqrt(s);
}

struct DytShape {
  int64_t rows, cols;
};

// z = [x (rows * cols), alpha, gamma (cols), beta (cols)] so that finite differences can probe
// every input at once.
std::vector<double> dyt_forward_cpu(const DytShape& s, const std::vector<double>& x, double alpha,
                                    const std::vector<double>& gamma,
                                    const std::vector<double>& beta) {
  std::vector<double> y(x.size());
  for (int64_t i = 0; i < s.rows; ++i)
    for (int64_t j = 0; j < s.cols; ++j) {
      const size_t o = size_t(i * s.cols + j);
      y[o] = gamma[j] * std::tanh(alpha * x[o]) + beta[j];
    }
  return y;
}

struct DytGrads {
  std::vector<double> dx, dgamma, dbeta;
  double dalpha = 0;
};
DytGrads dyt_backward_cpu(const DytShape& s, const std::vector<double>& x, double alpha,
                          const std::vector<double>& gamma, const std::vector<double>& dy) {
  DytGrads g{std::vector<double>(x.size()), std::vector<double>(s.cols),
             std::vector<double>(s.cols), 0};
  for (int64_t i = 0; i < s.rows; ++i)
    for (int64_t j = 0; j < s.cols; ++j) {
      const size_t o = size_t(i * s.cols + j);
      const double t = std::tanh(alpha * x[o]), d = 1 - t * t;
      g.dx[o] = dy[o] * gamma[j] * alpha * d;
      g.dgamma[j] += dy[o] * t;
      g.dbeta[j] += dy[o];
      g.dalpha += dy[o] * gamma[j] * x[o] * d;
    }
  return g;
}

double gamma_n(double h) {
  return h * kU / (1 - h * kU);
}

// ---- kernels ------------------------------------------------------------------------------------
__device__ __forceinline__ float block_sum(float v, float* scratch) {
#pragma unroll
  for (int k = 16; k > 0; k /= 2) v += __shfl_xor_sync(0xffffffffu, v, k);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float total = scratch[0];
#pragma unroll
  for (int w = 1; w < kWarps; ++w) total += scratch[w];
  __syncthreads();
  return total;
}

__device__ __forceinline__ float block_max(float v, float* scratch) {
#pragma unroll
  for (int k = 16; k > 0; k /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, k));
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float total = scratch[0];
#pragma unroll
  for (int w = 1; w < kWarps; ++w) total = fmaxf(total, scratch[w]);
  __syncthreads();
  return total;
}

enum class Norm { l1, l2, max_abs };

template <Norm kNorm>
__device__ __forceinline__ float term(float v, float scale) {
  if constexpr (kNorm == Norm::l1) return fabsf(v);
  if constexpr (kNorm == Norm::max_abs) return fabsf(v);
  const float s = v * scale;
  return s * s;
}

// Stage 1: each block reduces its grid-stride share (float4 where the buffer allows, the n % 4
// leftovers by the first threads) into partial[blockIdx.x]. x comes from cudaMalloc: aligned.
// scale multiplies every value before squaring (a power of two: exact); *scale_exp, when given,
// holds the exponent e of 2^-e, read from the previous stage's max.
template <Norm kNorm>
__global__ void norm_partial(const float* __restrict__ x, int64_t n,
                             const int* __restrict__ scale_exp, float* __restrict__ partial) {
  __shared__ float scratch[kWarps];
  const float scale = scale_exp ? ldexpf(1.0f, -*scale_exp) : 1.0f;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float acc = 0;
  auto add = [&](float v) {
    const float t = term<kNorm>(v, scale);
    acc = kNorm == Norm::max_abs ? fmaxf(acc, t) : acc + t;
  };
  for (int64_t i = tid; i < n / 4; i += stride) {
    const float4 v = __ldg(x4 + i);
    add(v.x);
    add(v.y);
    add(v.z);
    add(v.w);
  }
  for (int64_t i = n / 4 * 4 + tid; i < n; i += stride) add(x[i]);
  acc = kNorm == Norm::max_abs ? block_max(acc, scratch) : block_sum(acc, scratch);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

// Stage 2, one block: the partials in a fixed order, then the norm. For the max it also writes
// the exponent the scaled L2 uses: 2^e > max|x| (frexp: max = f 2^e, f in [0.5, 1)), clamped so
// that 2^-e stays a normal float.
template <Norm kNorm>
__global__ void norm_final(const float* __restrict__ partial, int count,
                           const int* __restrict__ scale_exp, float* __restrict__ result,
                           int* __restrict__ exp_out) {
  __shared__ float scratch[kWarps];
  float acc = 0;
  for (int i = threadIdx.x; i < count; i += blockDim.x)
    acc = kNorm == Norm::max_abs ? fmaxf(acc, partial[i]) : acc + partial[i];
  acc = kNorm == Norm::max_abs ? block_max(acc, scratch) : block_sum(acc, scratch);
  if (threadIdx.x != 0) return;
  if constexpr (kNorm == Norm::max_abs) {
    int e = 0;
    frexpf(acc, &e);
    *exp_out = max(e, -125);
  } else if constexpr (kNorm == Norm::l1) {
    *result = acc;
  } else {
    *result = ldexpf(sqrtf(acc), scale_exp ? *scale_exp : 0);
  }
}

// DyT forward, W elements per thread (W = 4 only when cols % 4 == 0: a vector then stays in one
// row and gamma, beta are aligned at its column).
template <int W>
__global__ void dyt_forward(const float* __restrict__ x, const float* __restrict__ alpha,
                            const float* __restrict__ gamma, const float* __restrict__ beta,
                            float* __restrict__ y, int64_t n, int64_t cols) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t * W >= n) return;
  const float a = *alpha;
  const int64_t i = t * W, j = i % cols;
  if constexpr (W == 1) {
    y[i] = gamma[j] * tanhf(a * x[i]) + beta[j];
  } else {
    const float4 v = __ldg(reinterpret_cast<const float4*>(x + i));
    const float4 g = __ldg(reinterpret_cast<const float4*>(gamma + j));
    const float4 b = __ldg(reinterpret_cast<const float4*>(beta + j));
    *reinterpret_cast<float4*>(y + i) =
        make_float4(g.x * tanhf(a * v.x) + b.x, g.y * tanhf(a * v.y) + b.y,
                    g.z * tanhf(a * v.z) + b.z, g.w * tanhf(a * v.w) + b.w);
  }
}

__global__ void dyt_backward_dx(const float* __restrict__ x, const float* __restrict__ alpha,
                                const float* __restrict__ gamma, const float* __restrict__ dy,
                                float* __restrict__ dx, int64_t n, int64_t cols) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float a = *alpha, t = tanhf(a * x[i]);
  dx[i] = dy[i] * gamma[i % cols] * a * (1.0f - t * t);
}

// Thread = column j, blockIdx.y = a chunk of kChunkRows rows (coalesced across j). Writes the
// chunk's dgamma and dbeta partials of its column, and the block's dalpha partial; with kWriteDx
// it also writes dx, so x and dy are read once for everything.
template <bool kWriteDx>
__global__ void dyt_backward_chunk(const float* __restrict__ x, const float* __restrict__ alpha,
                                   const float* __restrict__ gamma, const float* __restrict__ dy,
                                   float* __restrict__ dx, float* __restrict__ part_gamma,
                                   float* __restrict__ part_beta, float* __restrict__ part_alpha,
                                   int64_t rows, int64_t cols, int64_t chunks) {
  __shared__ float scratch[kWarps];
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const float a = *alpha;
  // A grid has at most 65535 blocks in y: past that many chunks, each block takes several.
  for (int64_t chunk = blockIdx.y; chunk < chunks; chunk += gridDim.y) {
    const int64_t r0 = chunk * kChunkRows, r1 = min(rows, r0 + kChunkRows);
    float sg = 0, sb = 0, sa = 0;
    if (j < cols) {
      const float g = gamma[j];
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t o = r * cols + j;
        const float xv = x[o], d = dy[o], t = tanhf(a * xv), dt = 1.0f - t * t;
        if constexpr (kWriteDx) dx[o] = d * g * a * dt;
        sg += d * t;
        sb += d;
        sa += d * g * xv * dt;
      }
      part_gamma[chunk * cols + j] = sg;
      part_beta[chunk * cols + j] = sb;
    }
    sa = block_sum(sa, scratch);  // every thread takes part (the barrier), idle columns add 0
    if (threadIdx.x == 0) part_alpha[chunk * gridDim.x + blockIdx.x] = sa;
  }
}

// The partials in chunk order (deterministic). Thread 0 of block 0 also adds the dalpha partials.
__global__ void dyt_backward_final(const float* __restrict__ part_gamma,
                                   const float* __restrict__ part_beta,
                                   const float* __restrict__ part_alpha, int chunks,
                                   int alpha_parts, float* __restrict__ dgamma,
                                   float* __restrict__ dbeta, float* __restrict__ dalpha,
                                   int64_t cols) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j < cols) {
    float sg = 0, sb = 0;
    for (int c = 0; c < chunks; ++c) {
      sg += part_gamma[c * cols + j];
      sb += part_beta[c * cols + j];
    }
    dgamma[j] = sg;
    dbeta[j] = sb;
  }
  if (j == 0) {
    float sa = 0;
    for (int k = 0; k < alpha_parts; ++k) sa += part_alpha[k];
    *dalpha = sa;
  }
}

// ---- launchers ----------------------------------------------------------------------------------
enum class Kind { l1, l2, l2_scaled, dyt_fwd, dyt_fwd_vec, dyt_bwd_unfused, dyt_bwd_fused };
struct Version {
  const char* name;
  Kind kind;
};
const Version kVersions[] = {
    {"l1_norm", Kind::l1},
    {"l2_norm", Kind::l2},
    {"l2_norm_scaled", Kind::l2_scaled},
    {"dyt_fwd", Kind::dyt_fwd},
    {"dyt_fwd_vec", Kind::dyt_fwd_vec},
    {"dyt_bwd_unfused", Kind::dyt_bwd_unfused},
    {"dyt_bwd_fused", Kind::dyt_bwd_fused},
};

unsigned norm_blocks(int64_t n) {
  return std::min<unsigned>(kMaxNormBlocks, gpu100::grid_for(std::max<int64_t>(n / 4, 1), kBlock));
}

// Additions an input goes through in a norm: 4 per float4 in its thread's register, 8 in the
// block tree, its block's partial then a share of the final block's loop and its tree.
double norm_additions(int64_t n) {
  const double blocks = norm_blocks(n);
  return 4 * std::ceil(double(n) / (4 * blocks * kBlock)) + 4 + 8 + std::ceil(blocks / kBlock) + 8;
}

struct NormBuffers {
  float* partial;  // kMaxNormBlocks
  float* result;
  int* exponent;
};

void launch_norm(Kind k, const float* x, int64_t n, const NormBuffers& b, cudaStream_t s) {
  const unsigned blocks = norm_blocks(n);
  if (k == Kind::l1) {
    norm_partial<Norm::l1><<<blocks, kBlock, 0, s>>>(x, n, nullptr, b.partial);
    LAUNCH_CHECK();
    norm_final<Norm::l1><<<1, kBlock, 0, s>>>(b.partial, int(blocks), nullptr, b.result, nullptr);
  } else if (k == Kind::l2) {
    norm_partial<Norm::l2><<<blocks, kBlock, 0, s>>>(x, n, nullptr, b.partial);
    LAUNCH_CHECK();
    norm_final<Norm::l2><<<1, kBlock, 0, s>>>(b.partial, int(blocks), nullptr, b.result, nullptr);
  } else {
    norm_partial<Norm::max_abs><<<blocks, kBlock, 0, s>>>(x, n, nullptr, b.partial);
    LAUNCH_CHECK();
    norm_final<Norm::max_abs>
        <<<1, kBlock, 0, s>>>(b.partial, int(blocks), nullptr, nullptr, b.exponent);
    LAUNCH_CHECK();
    norm_partial<Norm::l2><<<blocks, kBlock, 0, s>>>(x, n, b.exponent, b.partial);
    LAUNCH_CHECK();
    norm_final<Norm::l2>
        <<<1, kBlock, 0, s>>>(b.partial, int(blocks), b.exponent, b.result, nullptr);
  }
  LAUNCH_CHECK();
}

struct DytBuffers {
  const float *x, *alpha, *gamma, *beta, *dy;
  float *y, *dx, *dgamma, *dbeta, *dalpha, *part_gamma, *part_beta, *part_alpha;
};

int dyt_width(const Version& v, int64_t cols) {
  return v.kind == Kind::dyt_fwd_vec && cols % 4 == 0 ? 4 : 1;
}

void launch_dyt(const Version& v, const DytShape& sh, const DytBuffers& b, cudaStream_t s) {
  const int64_t n = sh.rows * sh.cols;
  if (v.kind == Kind::dyt_fwd || v.kind == Kind::dyt_fwd_vec) {
    if (dyt_width(v, sh.cols) == 4)
      dyt_forward<4><<<gpu100::grid_for(n / 4, kBlock), kBlock, 0, s>>>(b.x, b.alpha, b.gamma,
                                                                        b.beta, b.y, n, sh.cols);
    else
      dyt_forward<1><<<gpu100::grid_for(n, kBlock), kBlock, 0, s>>>(b.x, b.alpha, b.gamma, b.beta,
                                                                    b.y, n, sh.cols);
    LAUNCH_CHECK();
    return;
  }
  const int64_t chunks = gpu100::grid_for(sh.rows, kChunkRows);
  const dim3 grid(gpu100::grid_for(sh.cols, kBlock), unsigned(std::min<int64_t>(chunks, 65535)));
  if (v.kind == Kind::dyt_bwd_unfused) {
    dyt_backward_dx<<<gpu100::grid_for(n, kBlock), kBlock, 0, s>>>(b.x, b.alpha, b.gamma, b.dy,
                                                                   b.dx, n, sh.cols);
    LAUNCH_CHECK();
    dyt_backward_chunk<false><<<grid, kBlock, 0, s>>>(b.x, b.alpha, b.gamma, b.dy, nullptr,
                                                      b.part_gamma, b.part_beta, b.part_alpha,
                                                      sh.rows, sh.cols, chunks);
  } else {
    dyt_backward_chunk<true><<<grid, kBlock, 0, s>>>(b.x, b.alpha, b.gamma, b.dy, b.dx,
                                                     b.part_gamma, b.part_beta, b.part_alpha,
                                                     sh.rows, sh.cols, chunks);
  }
  LAUNCH_CHECK();
  dyt_backward_final<<<gpu100::grid_for(sh.cols, kBlock), kBlock, 0, s>>>(
      b.part_gamma, b.part_beta, b.part_alpha, int(chunks), int(grid.x * chunks), b.dgamma, b.dbeta,
      b.dalpha, sh.cols);
  LAUNCH_CHECK();
}

// ---- analysis -----------------------------------------------------------------------------------
// The CPU backward against central differences of the CPU forward: x, alpha, gamma and beta
// probed together, 2 rows of 3, one value far into tanh's saturation.
gpu100::CheckResult finite_difference_check() {
  const DytShape s{2, 3};
  const std::vector<double> x0 = {0.7, -1.4, 2.2, -0.3, 6.0, 0.9};
  const double alpha0 = 0.8;
  const std::vector<double> gamma0 = {1.1, -0.6, 0.9}, beta0 = {0.2, -0.1, 0.3};
  const std::vector<double> dy = {0.5, -1.2, 0.8, 1.4, -0.3, 0.6};
  auto forward = [&](const std::vector<double>& z) {
    const std::vector<double> x(z.begin(), z.begin() + 6), g(z.begin() + 7, z.begin() + 10),
        b(z.begin() + 10, z.end());
    return dyt_forward_cpu(s, x, z[6], g, b);
  };
  const DytGrads g = dyt_backward_cpu(s, x0, alpha0, gamma0, dy);
  std::vector<double> z = x0, grad = g.dx;
  z.push_back(alpha0);
  grad.push_back(g.dalpha);
  z.insert(z.end(), gamma0.begin(), gamma0.end());
  grad.insert(grad.end(), g.dgamma.begin(), g.dgamma.end());
  z.insert(z.end(), beta0.begin(), beta0.end());
  grad.insert(grad.end(), g.dbeta.begin(), g.dbeta.end());
  return gpu100::check_gradient(forward, z, dy, grad);
}

// ---- the versions: inputs, references, and each version's run and check -----------------------
// The normed vector, uniform in [-1, 1], its norms in double and their tolerances.
struct Norms {
  std::vector<float> v;
  double l1, l2;
  gpu100::Tolerance l1_tol, l2_tol;
};

Norms make_norms(int64_t n, uint64_t seed) {
  auto v = gpu100::random_floats(size_t(n), seed, -1.0f, 1.0f);
  const double l1 = l1_cpu(v), l2 = l2_cpu(v);
  // Non-negative sums: relative error at most gamma_h (h additions per input); the L2 takes
  // half of it through sqrt plus the rounding of each square and of sqrt.
  return {std::move(v), l1, l2, gpu100::summation_tolerance(norm_additions(n), n),
          gpu100::summation_tolerance(norm_additions(n) + 3, n)};
}

struct NormDevice {
  gpu100::DeviceBuffer<float> v, partial, result;
  gpu100::DeviceBuffer<int> exponent;
  NormBuffers buffers() { return {partial.data(), result.data(), exponent.data()}; }
};

NormDevice upload(const Norms& norms) {
  return {gpu100::DeviceBuffer<float>(norms.v), gpu100::DeviceBuffer<float>(kMaxNormBlocks),
          gpu100::DeviceBuffer<float>(1), gpu100::DeviceBuffer<int>(1)};
}

// DyT's inputs: x spread so that alpha x reaches tanh's saturation on some elements.
struct DytInputs {
  std::vector<float> x, gamma, beta, dy;
  float alpha;
};

DytInputs make_dyt_inputs(const DytShape& sh, double alpha, uint64_t seed) {
  const int64_t m = sh.rows * sh.cols;
  auto x = gpu100::random_floats(size_t(m), seed, -3.0f, 3.0f);
  for (int64_t i = 5; i < m; i += 101) x[size_t(i)] *= 10.0f;
  return {std::move(x), gpu100::random_floats(size_t(sh.cols), seed + 1, 0.5f, 1.5f),
          gpu100::random_floats(size_t(sh.cols), seed + 2, -0.5f, 0.5f),
          gpu100::random_floats(size_t(m), seed + 3), float(alpha)};
}

// The reference in double and the bound of every element it is compared on.
struct DytReference {
  std::vector<double> y;
  DytGrads g;
  std::vector<double> y_bound, dx_bound, dgamma_bound, dbeta_bound, dalpha_bound;
};

DytReference dyt_reference(const DytShape& sh, const DytInputs& in) {
  const int64_t rows = sh.rows, cols = sh.cols, m = rows * cols;
  const std::vector<double> xd(in.x.begin(), in.x.end()), gd(in.gamma.begin(), in.gamma.end()),
      bd(in.beta.begin(), in.beta.end()), dyd(in.dy.begin(), in.dy.end());
  const double a = double(in.alpha);
  DytReference r{dyt_forward_cpu(sh, xd, a, gd, bd), dyt_backward_cpu(sh, xd, a, gd, dyd)};
  // Bounds of the reductions. t = tanhf(a x) is within 2 ulp and a x rounded once, so t and
  // 1 - t^2 are off by at most 10 u in absolute terms (t is at most 1); each sum adds gamma_h
  // of its absolute terms, h = the chunk's rows and the chunks (dalpha: its block tree and
  // every block's partial).
  const int64_t chunks = gpu100::grid_for(rows, kChunkRows);
  const int64_t alpha_parts = chunks * gpu100::grid_for(cols, kBlock);
  // y and dx element by element: t within 2 ulp plus the rounding of a x carried through
  // tanh' = 1 - t^2; 1 - t^2 within 10 u absolute; a few roundings of the products.
  r.y_bound.resize(size_t(m));
  r.dx_bound.resize(size_t(m));
  r.dgamma_bound.resize(size_t(cols));
  r.dbeta_bound.resize(size_t(cols));
  double ba_terms = 0, ba_round = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const size_t o = size_t(i * cols + j);
      const double t = std::tanh(a * xd[o]);
      r.y_bound[o] =
          std::fabs(gd[j]) * (4 * kU * std::fabs(t) + kU * std::fabs(a * xd[o]) * (1 - t * t)) +
          gamma_n(2) * (std::fabs(gd[j] * t) + std::fabs(r.y[o]));
      r.dx_bound[o] = 10 * kU * std::fabs(dyd[o] * gd[j] * a) + gamma_n(4) * std::fabs(r.g.dx[o]);
      r.dgamma_bound[j] +=
          std::fabs(dyd[o]) * (std::fabs(t) * gamma_n(kChunkRows + chunks + 2) + 10 * kU);
      r.dbeta_bound[j] += std::fabs(dyd[o]) * gamma_n(kChunkRows + chunks);
      const double w = std::fabs(dyd[o] * gd[j] * xd[o]);
      ba_terms += w * (1 - t * t);
      ba_round += w;
    }
  r.dalpha_bound = {gamma_n(kChunkRows + 8 + alpha_parts + 4) * ba_terms + 12 * kU * ba_round};
  return r;
}

struct DytDevice {
  gpu100::DeviceBuffer<float> x, alpha, gamma, beta, dy, y, dx, dgamma, dbeta, dalpha, part_gamma,
      part_beta, part_alpha;
  DytBuffers buffers() {
    return {x.data(),          alpha.data(),     gamma.data(),     beta.data(),  dy.data(),
            y.data(),          dx.data(),        dgamma.data(),    dbeta.data(), dalpha.data(),
            part_gamma.data(), part_beta.data(), part_alpha.data()};
  }
};

DytDevice upload(const DytShape& sh, const DytInputs& in) {
  const size_t m = size_t(sh.rows * sh.cols), cols = size_t(sh.cols);
  const size_t chunks = gpu100::grid_for(sh.rows, kChunkRows);
  const size_t alpha_parts = chunks * gpu100::grid_for(sh.cols, kBlock);
  using Floats = gpu100::DeviceBuffer<float>;
  return {Floats(in.x),
          Floats(std::vector<float>{in.alpha}),
          Floats(in.gamma),
          Floats(in.beta),
          Floats(in.dy),
          Floats(m),
          Floats(m),
          Floats(cols),
          Floats(cols),
          Floats(1),
          Floats(chunks * cols),
          Floats(chunks * cols),
          Floats(alpha_parts)};
}

gpu100::Measure measure_norm(const Version& ver, int64_t n, NormDevice& d, const Norms& ref) {
  return {.name = ver.name,
          .launch = [&ver, n,
                     &d](cudaStream_t s) { launch_norm(ver.kind, d.v.data(), n, d.buffers(), s); },
          .reset = [&d] { d.result.poison(); },
          .check =
              [&ver, &d, &ref] {
                const bool l1 = ver.kind == Kind::l1;
                return gpu100::compare(d.result.download(),
                                       std::vector<double>{l1 ? ref.l1 : ref.l2},
                                       l1 ? ref.l1_tol : ref.l2_tol);
              },
          .work = 4.0 * double(n)};
}

gpu100::Measure measure_dyt_forward(const Version& ver, const DytShape& sh, DytDevice& d,
                                    const DytReference& ref) {
  return {.name = ver.name,
          .launch = [&ver, sh, &d](cudaStream_t s) { launch_dyt(ver, sh, d.buffers(), s); },
          .reset = [&d] { d.y.poison(); },
          .check =
              [&d, &ref] {
                return gpu100::compare_within(d.y.download(), ref.y, ref.y_bound, kBoundName);
              },
          .work = 8.0 * double(sh.rows * sh.cols)};
}

gpu100::Measure measure_dyt_backward(const Version& ver, const DytShape& sh, DytDevice& d,
                                     const DytReference& ref) {
  return {
      .name = ver.name,
      .launch = [&ver, sh, &d](cudaStream_t s) { launch_dyt(ver, sh, d.buffers(), s); },
      .reset =
          [&d] {
            for (auto* b : {&d.dx, &d.dgamma, &d.dbeta, &d.dalpha}) b->poison();
          },
      .check =
          [&d, &ref] {
            auto r = gpu100::compare_within(d.dx.download(), ref.g.dx, ref.dx_bound, kBoundName);
            r = gpu100::combine(r, gpu100::compare_within(d.dgamma.download(), ref.g.dgamma,
                                                          ref.dgamma_bound, kBoundName));
            r = gpu100::combine(r, gpu100::compare_within(d.dbeta.download(), ref.g.dbeta,
                                                          ref.dbeta_bound, kBoundName));
            return gpu100::combine(r, gpu100::compare_within(d.dalpha.download(), {ref.g.dalpha},
                                                             ref.dalpha_bound, kBoundName));
          },
      // The least traffic: x and dy read, dx written.
      .work = 12.0 * double(sh.rows * sh.cols)};
}

// The L2 norm of the same vector scaled by 1e25 and 1e-25: the plain sum of squares overflows
// to inf or underflows to 0; the scaled one must match the reference (checked).
void report_scaled_l2(gpu100::Context& ctx, const Norms& norms, NormDevice& d) {
  const int64_t n = int64_t(norms.v.size());
  gpu100::Table t{"L2 norm of the vector scaled by s",
                  {"s", "reference", "l2_norm", "l2_norm_scaled"}};
  for (const float s : {1e25f, 1e-25f}) {
    std::vector<float> w(norms.v);
    for (float& e : w) e *= s;
    const double ref = l2_cpu(w);
    gpu100::DeviceBuffer<float> d_w(w);
    std::string cells[2];
    for (int k = 0; k < 2; ++k) {
      const Kind kind = k == 0 ? Kind::l2 : Kind::l2_scaled;
      if (!ctx.want(k == 0 ? "l2_norm" : "l2_norm_scaled")) continue;
      launch_norm(kind, d_w.data(), n, d.buffers(), nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      const auto got = d.result.download();
      cells[k] = fmt::format("{:.6g}", got[0]);
      if (kind == Kind::l2_scaled)
        ctx.report().add_check(fmt::format("l2_norm_scaled at s = {:g}", s),
                               gpu100::compare(got, std::vector<double>{ref}, norms.l2_tol));
    }
    t.add_row({fmt::format("{:g}", s), fmt::format("{:.6g}", ref), cells[0], cells[1]});
  }
  ctx.report().table(std::move(t));
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("L1/L2 vector norms (plain and overflow-safe) and Dynamic Tanh forward/backward");
  int64_t n = (int64_t(1) << 26) + 3, rows = 4096, cols = 4096;
  double alpha = 0.5;
  cli.size("n", n, 100003, "elements of the normed vector", int64_t(1) << 31);
  cli.size("rows", rows, 37, "DyT rows (tokens)", int64_t(1) << 30);
  cli.size("cols", cols, 1031, "DyT row length (channels)", int64_t(1) << 30);
  cli.option("alpha", alpha, "DyT's scalar alpha", -100.0, 100.0);
  cli.kernels_of(kVersions);
  cli.validate([&] {
    return rows * cols >= (int64_t(1) << 31) ? std::string("--rows * --cols must be below 2^31")
                                             : std::string();
  });
  cli.device_bytes([&] { return 4.0 * (double(n) + 5.0 * double(rows) * double(cols)); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    report.baseline_as_percent();

    const Norms norms = make_norms(n, ctx.seed());
    NormDevice norm_device = upload(norms);
    const DytShape sh{rows, cols};
    const DytInputs dyt = make_dyt_inputs(sh, alpha, ctx.seed() + 1);
    const DytReference dyt_ref = dyt_reference(sh, dyt);
    DytDevice dyt_device = upload(sh, dyt);

    // A copy of the DyT forward's bytes: x read, y written.
    ctx.copy_baseline(size_t(rows * cols) * sizeof(float));

    std::vector<gpu100::Measure> runs;
    for (const Version& ver : kVersions) {
      if (ver.kind == Kind::l1 || ver.kind == Kind::l2 || ver.kind == Kind::l2_scaled)
        runs.push_back(measure_norm(ver, n, norm_device, norms));
      else if (ver.kind == Kind::dyt_fwd || ver.kind == Kind::dyt_fwd_vec)
        runs.push_back(measure_dyt_forward(ver, sh, dyt_device, dyt_ref));
      else
        runs.push_back(measure_dyt_backward(ver, sh, dyt_device, dyt_ref));
    }
    ctx.measure_all(runs);

    if (ctx.want("l2_norm") || ctx.want("l2_norm_scaled"))
      report_scaled_l2(ctx, norms, norm_device);
    report.add_check("reference gradient (finite differences)", finite_difference_check());
    report.note(fmt::format("dyt_fwd_vec: {} elements per thread (4 needs --cols % 4 == 0)",
                            dyt_width(kVersions[4], cols)));
  });
}
