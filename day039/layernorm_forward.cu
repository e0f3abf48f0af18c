// Day 039 - layer normalization, forward: y = (x - mean) * rstd * gamma + beta, per row
//
// Each row of C values is shifted to mean 0 and scaled to variance 1 (rstd = 1 / sqrt(var + eps),
// the biased variance as in PyTorch), then scaled and shifted by the learned gamma and beta of
// its column. The mean and rstd of every row are written too: the backward (day 040) needs them.
// Two reductions per row and an element-wise pass, so the kernel is bound by memory; the rate is
// GB/s of the bytes an ideal kernel moves (x read once, y written once, gamma and beta once, two
// floats per row) against a device-to-device copy measured in the same run.
//
// The variance is where fp32 goes wrong: E[x^2] - E[x]^2 subtracts two nearly equal numbers when
// the mean is large against the spread, and can even come out negative (rstd = NaN). Every
// version here avoids that formula: either two passes (the mean first, then the mean of
// (x - mean)^2, a sum of non-negative terms), or Welford's one-pass update (count, mean, M2),
// whose partial results merge exactly like the online softmax's pairs (Chan et al.).
//
// Versions
//   naive           one thread per row, two passes for the statistics and one to normalize.
//   two_pass_warp   a warp per row: each pass a strided loop of the 32 lanes and a shuffle sum.
//   welford_warp    a warp per row, mean and M2 in one pass over the row (per-lane Welford,
//                   lanes merged by shuffles): one read of x fewer than two_pass_warp.
//   block           a block per row, two passes, each sum through a shared-memory block reduce.
//   float4          block with 16-byte loads and stores of x and y on each row's 16-byte aligned
//                   middle (scalar code for the 0-3 elements around it); gamma and beta are read
//                   as float4 where the row's middle starts on a multiple of 4 columns, else one
//                   float at a time.
//
// Check: a CPU layer norm in double (two passes); y, mean and rstd element by element against the
// worst-case error of the version's order of additions (error_bounds): the mean's rounding error,
// magnified by rstd, is what separates a sequential sum over the row from a tree of shuffles. The
// edge rows have zero variance: row 0 repeats 1.5 (every sum exact, so x - mean is exactly 0 and y
// must equal beta bit for bit), row 1 repeats 0.1 (not a binary fraction: the mean may miss x by an
// ulp, which rstd = 1/sqrt(eps) magnifies, but never into a NaN).
//
// Run:  build/bin/day039 [--rows 8191 --cols 4097] [--kernel welford_warp,float4]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr float kEps = 1e-5f;
constexpr int kThreadBlock = 128;  // naive: rows per block
constexpr int kWarpBlock = 256;    // warp-per-row versions: 8 rows per block
constexpr int kRowBlock = 256;     // block-per-row versions

// ---- CPU reference ------------------------------------------------------------------------------
struct LayerNormRef {
  std::vector<double> y, mean, rstd;
};

LayerNormRef layernorm_cpu(const std::vector<float>& x, const std::vector<float>& gamma,
                           const std::vector<float>& beta, int64_t rows, int64_t cols) {
  LayerNormRef r{std::vector<double>(x.size()), std::vector<double>(size_t(rows)),
                 std::vector<double>(size_t(rows))};
  for (int64_t i = 0; i < rows; ++i) {
    const float* in = &x[size_t(i * cols)];
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c) mean += in[c];
    mean /= double(cols);
    for (int64_t c = 0; c < cols; ++c) var += (in[c] - mean) * (in[c] - mean);
    var /= double(cols);
    const double rstd = 1.0 / std::sqrt(var + double(kEps));
    for (int64_t c = 0; c < cols; ++c)
      r.y[size_t(i * cols + c)] = (in[c] - mean) * rstd * gamma[size_t(c)] + beta[size_t(c)];
    r.mean[size_t(i)] = mean;
    r.rstd[size_t(i)] = rstd;
  }
  return r;
}

// ---- reductions ---------------------------------------------------------------------------------
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int k = 16; k > 0; k >>= 1) v += __shfl_xor_sync(0xffffffffu, v, k);
  return v;
}

// Every thread gets the block's total; all BLOCK threads must call it.
template <int BLOCK>
__device__ __forceinline__ float block_sum(float v) {
  constexpr int kWarps = BLOCK / 32;
  __shared__ float partial[kWarps];
  const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
  v = warp_sum(v);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  float total = 0.0f;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) total += partial[w];  // a broadcast read: no bank conflict
  // The next call writes partial again: every thread must have read it first.
  __syncthreads();
  return total;
}

// Welford's state of a set of values: their count, mean and sum of squared deviations M2.
struct Welford {
  float n, mean, m2;
};

__device__ __forceinline__ Welford welford_add(Welford a, float x) {
  const float n = a.n + 1.0f;
  const float d = x - a.mean;
  const float mean = a.mean + d / n;
  return {n, mean, a.m2 + d * (x - mean)};
}

// Chan et al.'s merge of two sets; an empty side (a lane that saw no element) leaves the other.
__device__ __forceinline__ Welford welford_merge(Welford a, Welford b) {
  if (b.n == 0.0f) return a;
  if (a.n == 0.0f) return b;
  const float n = a.n + b.n;
  const float d = b.mean - a.mean;
  const float wb = b.n / n;
  return {n, a.mean + d * wb, a.m2 + b.m2 + d * d * a.n * wb};
}

__device__ __forceinline__ Welford warp_welford(Welford w) {
#pragma unroll
  for (int k = 16; k > 0; k >>= 1) {
    const Welford o = {__shfl_xor_sync(0xffffffffu, w.n, k),
                       __shfl_xor_sync(0xffffffffu, w.mean, k),
                       __shfl_xor_sync(0xffffffffu, w.m2, k)};
    w = welford_merge(w, o);
  }
  return w;
}

__device__ __forceinline__ float rstd_of(float var) {
  return 1.0f / sqrtf(var + kEps);
}

// ---- kernels ------------------------------------------------------------------------------------
__global__ void layernorm_naive(const float* __restrict__ x, const float* __restrict__ gamma,
                                const float* __restrict__ beta, float* __restrict__ y,
                                float* __restrict__ mean_out, float* __restrict__ rstd_out,
                                int64_t rows, int64_t cols) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* in = x + r * cols;
  float sum = 0.0f;
  for (int64_t c = 0; c < cols; ++c) sum += in[c];
  const float mean = sum / float(cols);
  float sq = 0.0f;
  for (int64_t c = 0; c < cols; ++c) sq += (in[c] - mean) * (in[c] - mean);
  const float rstd = rstd_of(sq / float(cols));
  for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = (in[c] - mean) * rstd * gamma[c] + beta[c];
  mean_out[r] = mean;
  rstd_out[r] = rstd;
}

template <bool WELFORD>
__global__ void layernorm_warp(const float* __restrict__ x, const float* __restrict__ gamma,
                               const float* __restrict__ beta, float* __restrict__ y,
                               float* __restrict__ mean_out, float* __restrict__ rstd_out,
                               int64_t rows, int64_t cols) {
  const int64_t r = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = int(threadIdx.x) % 32;
  if (r >= rows) return;  // whole warps leave together
  const float* in = x + r * cols;
  float mean, var;
  if constexpr (WELFORD) {
    Welford w = {0.0f, 0.0f, 0.0f};
    for (int64_t c = lane; c < cols; c += 32) w = welford_add(w, in[c]);
    w = warp_welford(w);
    mean = w.mean;
    var = w.m2 / float(cols);
  } else {
    float sum = 0.0f;
    for (int64_t c = lane; c < cols; c += 32) sum += in[c];
    mean = warp_sum(sum) / float(cols);
    float sq = 0.0f;
    for (int64_t c = lane; c < cols; c += 32) sq += (in[c] - mean) * (in[c] - mean);
    var = warp_sum(sq) / float(cols);
  }
  const float rstd = rstd_of(var);
  for (int64_t c = lane; c < cols; c += 32)
    y[r * cols + c] = (in[c] - mean) * rstd * gamma[c] + beta[c];
  if (lane == 0) {
    mean_out[r] = mean;
    rstd_out[r] = rstd;
  }
}

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    layernorm_block(const float* __restrict__ x, const float* __restrict__ gamma,
                    const float* __restrict__ beta, float* __restrict__ y,
                    float* __restrict__ mean_out, float* __restrict__ rstd_out, int64_t rows,
                    int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* in = x + r * cols;
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += BLOCK) sum += in[c];
    const float mean = block_sum<BLOCK>(sum) / float(cols);
    float sq = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += BLOCK) sq += (in[c] - mean) * (in[c] - mean);
    const float rstd = rstd_of(block_sum<BLOCK>(sq) / float(cols));
    for (int64_t c = threadIdx.x; c < cols; c += BLOCK)
      y[r * cols + c] = (in[c] - mean) * rstd * gamma[c] + beta[c];
    if (threadIdx.x == 0) {
      mean_out[r] = mean;
      rstd_out[r] = rstd;
    }
  }
}

// Row r's elements [r cols, (r + 1) cols) split at 16-byte boundaries: `head` scalars, `body4`
// float4s from column `head`, then scalars to the end. x and y share the split.
struct RowSplit {
  int64_t head, body4;
};
__device__ __forceinline__ RowSplit split_row(int64_t r, int64_t cols) {
  const int64_t misalign = (4 - (r * cols) % 4) % 4;
  const int64_t head = misalign < cols ? misalign : cols;
  return {head, (cols - head) / 4};
}

__device__ __forceinline__ float4 norm4(float4 v, float mean, float rstd, float4 g, float4 b) {
  return make_float4((v.x - mean) * rstd * g.x + b.x, (v.y - mean) * rstd * g.y + b.y,
                     (v.z - mean) * rstd * g.z + b.z, (v.w - mean) * rstd * g.w + b.w);
}

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    layernorm_float4(const float* __restrict__ x, const float* __restrict__ gamma,
                     const float* __restrict__ beta, float* __restrict__ y,
                     float* __restrict__ mean_out, float* __restrict__ rstd_out, int64_t rows,
                     int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const RowSplit sp = split_row(r, cols);
    const float* in = x + r * cols;
    float* out = y + r * cols;
    const float4* in4 = reinterpret_cast<const float4*>(in + sp.head);
    float4* out4 = reinterpret_cast<float4*>(out + sp.head);
    const int64_t tail = sp.head + 4 * sp.body4;
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < sp.head; c += BLOCK) sum += in[c];
    for (int64_t i = threadIdx.x; i < sp.body4; i += BLOCK) {
      const float4 v = in4[i];
      sum += (v.x + v.y) + (v.z + v.w);
    }
    for (int64_t c = tail + threadIdx.x; c < cols; c += BLOCK) sum += in[c];
    const float mean = block_sum<BLOCK>(sum) / float(cols);
    float sq = 0.0f;
    for (int64_t c = threadIdx.x; c < sp.head; c += BLOCK) sq += (in[c] - mean) * (in[c] - mean);
    for (int64_t i = threadIdx.x; i < sp.body4; i += BLOCK) {
      const float4 v = in4[i];
      const float a = v.x - mean, b = v.y - mean, c = v.z - mean, d = v.w - mean;
      sq += (a * a + b * b) + (c * c + d * d);
    }
    for (int64_t c = tail + threadIdx.x; c < cols; c += BLOCK)
      sq += (in[c] - mean) * (in[c] - mean);
    const float rstd = rstd_of(block_sum<BLOCK>(sq) / float(cols));
    for (int64_t c = threadIdx.x; c < sp.head; c += BLOCK)
      out[c] = (in[c] - mean) * rstd * gamma[c] + beta[c];
    if (sp.head == 0) {  // the body starts at column 0: gamma and beta are 16-byte aligned too
      const float4* g4 = reinterpret_cast<const float4*>(gamma);
      const float4* b4 = reinterpret_cast<const float4*>(beta);
      for (int64_t i = threadIdx.x; i < sp.body4; i += BLOCK)
        out4[i] = norm4(in4[i], mean, rstd, g4[i], b4[i]);
    } else {
      for (int64_t i = threadIdx.x; i < sp.body4; i += BLOCK) {
        const int64_t c = sp.head + 4 * i;
        const float4 g = make_float4(gamma[c], gamma[c + 1], gamma[c + 2], gamma[c + 3]);
        const float4 b = make_float4(beta[c], beta[c + 1], beta[c + 2], beta[c + 3]);
        out4[i] = norm4(in4[i], mean, rstd, g, b);
      }
    }
    for (int64_t c = tail + threadIdx.x; c < cols; c += BLOCK)
      out[c] = (in[c] - mean) * rstd * gamma[c] + beta[c];
    if (threadIdx.x == 0) {
      mean_out[r] = mean;
      rstd_out[r] = rstd;
    }
  }
}

// ---- launchers ----------------------------------------------------------------------------------
using Kernel = void (*)(const float*, const float*, const float*, float*, float*, float*, int64_t,
                        int64_t);
enum class Shape { thread_per_row, warp_per_row, block_per_row };

// How many rounded fp32 operations each x goes through on its way into its row's sum (the sum's
// error bound, see Check): a thread's own loop over the values it reads, then the combining steps.
struct SumOrder {
  int64_t values_per_step;  // values one step of a thread's loop covers across the row
  int64_t combine;          // roundings after the loop: the float4's two adds, shuffles, partials
  int64_t per_value;        // roundings per loop step: 1 for a sum, 3 for Welford's update
};

struct Version {
  const char* name;
  Kernel kernel;
  Shape shape;
  int block;
  SumOrder order;
};
const Version kVersions[] = {
    {"naive", layernorm_naive, Shape::thread_per_row, kThreadBlock, {1, 0, 1}},
    {"two_pass_warp", layernorm_warp<false>, Shape::warp_per_row, kWarpBlock, {32, 5, 1}},
    {"welford_warp", layernorm_warp<true>, Shape::warp_per_row, kWarpBlock, {32, 5, 3}},
    {"block",
     layernorm_block<kRowBlock>,
     Shape::block_per_row,
     kRowBlock,
     {kRowBlock, 5 + kRowBlock / 32, 1}},
    {"float4",
     layernorm_float4<kRowBlock>,
     Shape::block_per_row,
     kRowBlock,
     {4 * kRowBlock, 2 + 5 + kRowBlock / 32, 1}},
};

double roundings_per_input(const SumOrder& o, int64_t cols) {
  return double(o.per_value * ((cols + o.values_per_step - 1) / o.values_per_step) + o.combine);
}

unsigned grid_of(const Version& v, int64_t rows) {
  switch (v.shape) {
    case Shape::thread_per_row:
      return gpu100::grid_for(rows, v.block);
    case Shape::warp_per_row:
      return gpu100::grid_for(rows, v.block / 32);
    case Shape::block_per_row:
      return unsigned(std::min<int64_t>(rows, gpu100::resident_grid(v.kernel, v.block)));
  }
  return 1;
}

struct Args {
  const float *x, *gamma, *beta;
  float *y, *mean, *rstd;
  int64_t rows, cols;
};

void launch(const Version& v, unsigned grid, const Args& a, cudaStream_t s) {
  if (v.kernel == layernorm_float4<kRowBlock> &&
      !(gpu100::is_aligned(a.x, 16) && gpu100::is_aligned(a.y, 16) &&
        gpu100::is_aligned(a.gamma, 16) && gpu100::is_aligned(a.beta, 16)))
    throw std::invalid_argument("layernorm_float4 needs 16-byte aligned x, y, gamma and beta");
  v.kernel<<<grid, v.block, 0, s>>>(a.x, a.gamma, a.beta, a.y, a.mean, a.rstd, a.rows, a.cols);
  LAUNCH_CHECK();
}

// ---- inputs -------------------------------------------------------------------------------------
// Rows in [-2, 2] around a per-row offset in [-1, 1]; rows 0 and 1 have zero variance (Check).
std::vector<float> layernorm_inputs(int64_t rows, int64_t cols, uint64_t seed) {
  auto x = gpu100::random_floats(size_t(rows * cols), seed, -2.0f, 2.0f);
  const auto offset = gpu100::random_floats(size_t(rows), seed + 10);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float& v = x[size_t(r * cols + c)];
      v = r == 0 ? 1.5f : r == 1 ? 0.1f : v + offset[size_t(r)];
    }
  return x;
}

// The worst-case errors of a version whose sums put h roundings on each input (u = 2^-24;
// Higham 4.2). The mean is off by at most e = gamma_(h+1) mean|x| (the division is one more). The
// variance sums non-negative terms, each (x - mean')^2 with a few roundings: off by gamma_(h+4)
// relative, plus e^2 from the shifted mean; rstd by half of that relative to var + eps, plus the
// square root and the division. y = (x - mean) rstd gamma + beta shifts by gamma rstd e (rstd
// magnifies the mean's error: 1/sqrt(eps) on a row of equal values, where a long sequential sum
// shows), by |y - beta| times rstd's relative error, and by a few roundings of its own. A bound
// no correct kernel exceeds; a wrong formula misses it by orders of magnitude.
struct Bounds {
  std::vector<double> y, mean, rstd;
};
Bounds error_bounds(const LayerNormRef& ref, const std::vector<float>& x,
                    const std::vector<float>& gamma, const std::vector<float>& beta, int64_t rows,
                    int64_t cols, double h) {
  const double u = std::ldexp(1.0, -24);
  const double g_mean = gpu100::summation_error_bound(h + 1, cols);
  const double g_var = gpu100::summation_error_bound(h + 4, cols);
  Bounds b{std::vector<double>(x.size()), std::vector<double>(size_t(rows)),
           std::vector<double>(size_t(rows))};
  for (int64_t r = 0; r < rows; ++r) {
    double abs_mean = 0;
    for (int64_t k = 0; k < cols; ++k) abs_mean += std::fabs(x[size_t(r * cols + k)]);
    const double rstd = ref.rstd[size_t(r)];
    const double e = g_mean * abs_mean / double(cols);
    const double var = 1.0 / (rstd * rstd) - double(kEps);  // var + eps = 1 / rstd^2
    const double rstd_rel = 0.5 * (g_var * var + e * e) * rstd * rstd + 2 * u;
    b.mean[size_t(r)] = e;
    b.rstd[size_t(r)] = rstd_rel * rstd;
    for (int64_t k = 0; k < cols; ++k) {
      const size_t i = size_t(r * cols + k);
      const double yn = std::fabs(ref.y[i] - beta[size_t(k)]);
      b.y[i] = std::fabs(gamma[size_t(k)]) * rstd * e + yn * (rstd_rel + 4 * u) +
               2 * u * std::fabs(beta[size_t(k)]);
    }
  }
  return b;
}

// Row 0: x - mean is exactly 0, so y must be beta bit for bit.
gpu100::CheckResult check_constant_row(const std::vector<float>& y, const std::vector<float>& beta,
                                       int64_t cols) {
  return gpu100::compare_exact(y.data(), beta.data(), size_t(cols));
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("LayerNorm forward in fp32: naive, two-pass warp, Welford warp, block, float4");
  int64_t rows = 8191, cols = 4097;
  cli.size("rows", rows, 37, "rows (tokens)", int64_t(1) << 31);
  cli.size("cols", cols, 1027, "elements per row (channels C)", int64_t(1) << 31);
  cli.kernels_of(kVersions);
  cli.device_bytes([&] {
    return (4.0 * double(rows) * double(cols) + 2.0 * double(cols) + 2.0 * double(rows)) *
           sizeof(float);
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");

    const size_t count = size_t(rows * cols);
    const auto x = layernorm_inputs(rows, cols, ctx.seed());
    const auto gamma = gpu100::random_floats(size_t(cols), ctx.seed() + 1, 0.5f, 1.5f);
    const auto beta = gpu100::random_floats(size_t(cols), ctx.seed() + 2);
    const auto ref = layernorm_cpu(x, gamma, beta, rows, cols);
    gpu100::DeviceBuffer<float> d_x(x), d_gamma(gamma), d_beta(beta), d_y{count},
        d_mean{size_t(rows)}, d_rstd{size_t(rows)};
    const Args args{d_x.data(),    d_gamma.data(), d_beta.data(), d_y.data(),
                    d_mean.data(), d_rstd.data(),  rows,          cols};
    ctx.copy_baseline(count * sizeof(float));

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      runs.push_back(
          {.name = v.name,
           .launch = [&, grid = grid_of(v, rows)](cudaStream_t s) { launch(v, grid, args, s); },
           .reset =
               [&] {
                 d_y.poison();
                 d_mean.poison();
                 d_rstd.poison();
               },
           .check =
               [&] {
                 const double h = roundings_per_input(v.order, cols);
                 const Bounds b = error_bounds(ref, x, gamma, beta, rows, cols, h);
                 const auto y = d_y.download();
                 const std::string order = fmt::format("summation-order bound, h = {}", h);
                 auto c = gpu100::compare_within(y, ref.y, b.y, "y: " + order);
                 c = gpu100::combine(c, gpu100::compare_within(d_mean.download(), ref.mean, b.mean,
                                                               "mean: " + order));
                 c = gpu100::combine(c, gpu100::compare_within(d_rstd.download(), ref.rstd, b.rstd,
                                                               "rstd: " + order));
                 return gpu100::combine(c, check_constant_row(y, beta, cols));
               },
           .work = (8.0 * double(count) + 8.0 * double(cols) + 8.0 * double(rows))});
    }
    ctx.measure_all(runs);
    report.note("rows 0 and 1 have zero variance (all 1.5, all 0.1): rstd = 1/sqrt(eps)");
  });
}
