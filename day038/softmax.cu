// Day 038 - softmax over the rows of a matrix: y[r][c] = exp(x[r][c] - m_r) / sum_c exp(x[r][c] -
// m_r)
//
// Subtracting the row maximum m_r changes nothing mathematically and everything numerically: e^x
// overflows fp32 above x = 88.7, and logits of a few hundred are common, while every e^(x - m)
// lies in (0, 1] and the largest is exactly 1, so the sum is at least 1 and never overflows. The
// cost is a pass to find m before the pass that sums. The online softmax (Milakov & Gimelshein,
// 2018) removes it: keep a running maximum m and a sum s of e^(x - m); when a larger value comes,
// rescale s by e^(m_old - m_new). Two (m, s) pairs merge the same way, so the pass can be split
// over the lanes of a warp or the threads of a block and combined with shuffles. Softmax is bound
// by memory, so the rate is GB/s (8 bytes per element: one read and one write, what an ideal
// kernel moves) against a device-to-device copy measured in the same run.
//
// Versions
//   three_pass     one thread per row: a pass for the maximum, one for the sum, one to write.
//                  Neighbouring lanes read addresses a row apart: one sector per lane.
//   online         one thread per row, maximum and sum in one pass, then the write pass.
//   warp_per_row   a warp per row: each lane runs the online pass over a strided slice (lanes
//                  read consecutive words), five shfl.sync.bfly steps merge the lanes' pairs.
//   block_per_row  a block per row: warps merge as above, then one pair per warp through shared
//                  memory; many more threads per row for long rows, three barriers per row.
//   vectorized     block_per_row with float4 loads and stores on the 16-byte aligned middle of
//                  each row, scalar code for the 0-3 elements before it and after it (a row of
//                  an odd width starts anywhere in a 16-byte word).
//
// Check: a CPU softmax in double, element by element against the worst-case rounding error of
// each version's order of operations (check_softmax: a sequential sum over a 50257-wide row
// drifts past a fixed fp32 tolerance, a tree of shuffles does not); the rows are random in [-8, 8]
// except a few edge rows: every value equal (the output must be exactly 1/cols: each exponential
// is exp(0) = 1, the sum an exact integer and one correctly rounded division, checked bit for
// bit), logits around +1000 and around -1000 (no overflow, no all-zero underflow), and a row whose
// first half is -inf (a causal mask: the online merge must not compute -inf - -inf).
//
// Run:  build/bin/day038 [--rows 8191 --cols 4097] [--kernel warp_per_row,vectorized]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kThreadBlock = 128;  // thread-per-row versions
constexpr int kWarpBlock = 256;    // warp-per-row: 8 rows per block
constexpr int kRowBlock = 256;     // block-per-row versions
constexpr int kEdgeRows = 4;       // all-equal, +1000, -1000, half masked

// ---- CPU reference ------------------------------------------------------------------------------
std::vector<double> softmax_cpu(const std::vector<float>& x, int64_t rows, int64_t cols) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = &x[size_t(r * cols)];
    double m = -std::numeric_limits<double>::infinity(), s = 0;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, double(in[c]));
    for (int64_t c = 0; c < cols; ++c) s += std::exp(double(in[c]) - m);
    for (int64_t c = 0; c < cols; ++c) y[size_t(r * cols + c)] = std::exp(double(in[c]) - m) / s;
  }
  return y;
}

// ---- the online (max, sum) pair -----------------------------------------------------------------
// s is the sum of e^(x - m) over the values seen. An empty pair is (-inf, 0); merging two empty
// ones, or adding -inf to an empty one, must leave it empty instead of computing -inf - -inf = NaN.
struct MaxSum {
  float m, s;
};

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return a;
  return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}

__device__ __forceinline__ MaxSum add(MaxSum a, float x) {
  if (x == -INFINITY) return a;  // a masked value; with a.m = -inf still, x - a.m would be NaN
  if (x <= a.m) return {a.m, a.s + expf(x - a.m)};
  return {x, a.s * expf(a.m - x) + 1.0f};  // a new maximum: rescale what came before
}

// Every lane ends with the merge of all 32 lanes' pairs; the whole warp must call it.
__device__ __forceinline__ MaxSum warp_merge(MaxSum p) {
#pragma unroll
  for (int k = 16; k > 0; k >>= 1) {
    const MaxSum q = {__shfl_xor_sync(0xffffffffu, p.m, k), __shfl_xor_sync(0xffffffffu, p.s, k)};
    p = merge(p, q);
  }
  return p;
}

// Every thread of the block gets the merge of all threads' pairs; all BLOCK threads must call it.
template <int BLOCK>
__device__ __forceinline__ MaxSum block_merge(MaxSum p) {
  constexpr int kWarps = BLOCK / 32;
  __shared__ MaxSum partial[kWarps];
  __shared__ MaxSum total;
  const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
  p = warp_merge(p);
  if (lane == 0) partial[warp] = p;
  __syncthreads();
  if (warp == 0) {
    p = lane < kWarps ? partial[lane] : MaxSum{-INFINITY, 0.0f};
    p = warp_merge(p);
    if (lane == 0) total = p;
  }
  __syncthreads();
  const MaxSum t = total;
  // No thread may overwrite partial or total (next row) before every thread has read total.
  __syncthreads();
  return t;
}

// ---- kernels ------------------------------------------------------------------------------------
__global__ void softmax_three_pass(const float* __restrict__ x, float* __restrict__ y, int64_t rows,
                                   int64_t cols) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* in = x + r * cols;
  float m = -INFINITY, s = 0.0f;
  for (int64_t c = 0; c < cols; ++c) m = fmaxf(m, in[c]);
  for (int64_t c = 0; c < cols; ++c) s += expf(in[c] - m);
  const float inv = 1.0f / s;
  for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = expf(in[c] - m) * inv;
}

__global__ void softmax_online(const float* __restrict__ x, float* __restrict__ y, int64_t rows,
                               int64_t cols) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* in = x + r * cols;
  MaxSum p = {-INFINITY, 0.0f};
  for (int64_t c = 0; c < cols; ++c) p = add(p, in[c]);
  const float inv = 1.0f / p.s;
  for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = expf(in[c] - p.m) * inv;
}

__global__ void softmax_warp_per_row(const float* __restrict__ x, float* __restrict__ y,
                                     int64_t rows, int64_t cols) {
  const int64_t r = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = int(threadIdx.x) % 32;
  if (r >= rows) return;  // whole warps leave together: rows are per warp
  const float* in = x + r * cols;
  MaxSum p = {-INFINITY, 0.0f};
  for (int64_t c = lane; c < cols; c += 32) p = add(p, in[c]);
  p = warp_merge(p);
  const float inv = 1.0f / p.s;
  for (int64_t c = lane; c < cols; c += 32) y[r * cols + c] = expf(in[c] - p.m) * inv;
}

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    softmax_block_per_row(const float* __restrict__ x, float* __restrict__ y, int64_t rows,
                          int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* in = x + r * cols;
    MaxSum p = {-INFINITY, 0.0f};
    for (int64_t c = threadIdx.x; c < cols; c += BLOCK) p = add(p, in[c]);
    p = block_merge<BLOCK>(p);
    const float inv = 1.0f / p.s;
    for (int64_t c = threadIdx.x; c < cols; c += BLOCK) y[r * cols + c] = expf(in[c] - p.m) * inv;
  }
}

// The row [r cols, (r + 1) cols) split at 16-byte boundaries: a scalar head of 0-3 elements, a
// float4 body, a scalar tail of 0-3. x and y share the offset, so one split serves both.
struct RowSplit {
  int64_t head, body4, start;  // head elements, then body4 float4s from element start
};
__device__ __forceinline__ RowSplit split_row(int64_t r, int64_t cols) {
  const int64_t first = r * cols;
  const int64_t misalign = (4 - first % 4) % 4;
  const int64_t head = misalign < cols ? misalign : cols;
  return {head, (cols - head) / 4, first + head};
}

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    softmax_vectorized(const float* __restrict__ x, float* __restrict__ y, int64_t rows,
                       int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const RowSplit sp = split_row(r, cols);
    const float4* body = reinterpret_cast<const float4*>(x + sp.start);
    const float* in = x + r * cols;
    const int64_t tail = sp.head + 4 * sp.body4;  // first element after the body
    MaxSum p = {-INFINITY, 0.0f};
    for (int64_t c = threadIdx.x; c < sp.head; c += BLOCK) p = add(p, in[c]);
    for (int64_t i = threadIdx.x; i < sp.body4; i += BLOCK) {
      const float4 v = body[i];
      p = add(add(add(add(p, v.x), v.y), v.z), v.w);
    }
    for (int64_t c = tail + threadIdx.x; c < cols; c += BLOCK) p = add(p, in[c]);
    p = block_merge<BLOCK>(p);
    const float inv = 1.0f / p.s;
    float* out = y + r * cols;
    float4* out4 = reinterpret_cast<float4*>(y + sp.start);
    for (int64_t c = threadIdx.x; c < sp.head; c += BLOCK) out[c] = expf(in[c] - p.m) * inv;
    for (int64_t i = threadIdx.x; i < sp.body4; i += BLOCK) {
      const float4 v = body[i];
      out4[i] = make_float4(expf(v.x - p.m) * inv, expf(v.y - p.m) * inv, expf(v.z - p.m) * inv,
                            expf(v.w - p.m) * inv);
    }
    for (int64_t c = tail + threadIdx.x; c < cols; c += BLOCK) out[c] = expf(in[c] - p.m) * inv;
  }
}

// ---- launchers ----------------------------------------------------------------------------------
using Kernel = void (*)(const float*, float*, int64_t, int64_t);
enum class Shape { thread_per_row, warp_per_row, block_per_row };

// Each exponential's way into its row's sum: how many rounded steps (for the error bound of the
// Check) one value goes through. A thread's loop adds `per_thread` of a row's values in sequence;
// the merges add `merges` more. The online versions round up to `per_step` times per step (the
// add, the rescaling exponential and its product); the three-pass sum once.
struct SumOrder {
  int64_t threads;   // threads sharing a row
  int64_t extra;     // values a thread adds beyond cols / threads (the float4 version's head/tail)
  int64_t merges;    // merge steps after the loop
  int64_t per_step;  // roundings per step
};

struct Version {
  const char* name;
  Kernel kernel;
  Shape shape;
  int block;
  SumOrder order;
};
const Version kVersions[] = {
    {"three_pass", softmax_three_pass, Shape::thread_per_row, kThreadBlock, {1, 0, 0, 1}},
    {"online", softmax_online, Shape::thread_per_row, kThreadBlock, {1, 0, 0, 6}},
    {"warp_per_row", softmax_warp_per_row, Shape::warp_per_row, kWarpBlock, {32, 0, 5, 6}},
    {"block_per_row",
     softmax_block_per_row<kRowBlock>,
     Shape::block_per_row,
     kRowBlock,
     {kRowBlock, 0, 10, 6}},
    {"vectorized",
     softmax_vectorized<kRowBlock>,
     Shape::block_per_row,
     kRowBlock,
     {kRowBlock, 6, 10, 6}},
};

double rounding_steps(const SumOrder& o, int64_t cols) {
  return double(o.per_step * ((cols + o.threads - 1) / o.threads + o.extra + o.merges));
}

// Block-per-row kernels loop over rows, so their grid stops at what fits on the device at once.
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

void launch(const Version& v, unsigned grid, const float* x, float* y, int64_t rows, int64_t cols,
            cudaStream_t s) {
  if (v.kernel == softmax_vectorized<kRowBlock> &&
      !(gpu100::is_aligned(x, 16) && gpu100::is_aligned(y, 16)))
    throw std::invalid_argument("softmax_vectorized needs 16-byte aligned x and y");
  v.kernel<<<grid, v.block, 0, s>>>(x, y, rows, cols);
  LAUNCH_CHECK();
}

// ---- inputs -------------------------------------------------------------------------------------
// Random rows in [-8, 8]; the first rows (as many as there are) are the edge cases of the Check.
std::vector<float> softmax_inputs(int64_t rows, int64_t cols, uint64_t seed) {
  auto x = gpu100::random_floats(size_t(rows * cols), seed, -8.0f, 8.0f);
  for (int64_t r = 0; r < std::min<int64_t>(rows, kEdgeRows); ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      float& v = x[size_t(r * cols + c)];
      if (r == 0) v = 3.5f;
      if (r == 1) v += 1000.0f;
      if (r == 2) v -= 1000.0f;
      if (r == 3 && c < cols / 2) v = -std::numeric_limits<float>::infinity();
    }
  }
  return x;
}

// Element by element against the worst case (u = 2^-24). An exponential e^(x - m) is off by at
// most (|x - m| + 4) u relative: x - m rounds (an error of u |x - m| in the exponent) and expf is
// within 2 ulps. The sum of those positive terms is off by at most gamma_h relative, h = the
// version's rounding steps (Higham 4.2) plus the largest summand's own error; the online
// rescalings multiply by exponentials of increments of the running maximum, whose exponent errors
// add up to at most u times the row's range (the maximum only grows). Then one division and one
// product. So |y - ref| <= ref gamma(h + |x - m| + 2 range + 12). Masked values must be exactly 0.
gpu100::CheckResult check_softmax(const std::vector<float>& got, const std::vector<double>& ref,
                                  const std::vector<float>& x, int64_t rows, int64_t cols,
                                  double steps) {
  std::vector<double> bound(ref.size());
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = &x[size_t(r * cols)];
    const double m = *std::max_element(in, in + cols);
    double range = 0;
    for (int64_t k = 0; k < cols; ++k)
      if (std::isfinite(in[k])) range = std::max(range, m - in[k]);
    for (int64_t k = 0; k < cols; ++k) {
      const size_t i = size_t(r * cols + k);
      const double d = std::isfinite(in[k]) ? m - in[k] : 0.0;
      bound[i] = ref[i] * gpu100::summation_error_bound(steps + d + 2 * range + 12, cols);
    }
  }
  return gpu100::compare_within(got, ref, bound,
                                fmt::format("summation-order bound, h = {}", steps));
}

// The all-equal row (row 0) bit for bit: every element must be the fp32 quotient 1 / cols.
gpu100::CheckResult check_equal_row(const std::vector<float>& y, int64_t cols) {
  const std::vector<float> expect(size_t(cols), 1.0f / float(cols));
  return gpu100::compare_exact(y.data(), expect.data(), size_t(cols));
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "Row softmax in fp32: three-pass, online, warp-per-row, block-per-row, vectorized");
  int64_t rows = 8191, cols = 4097;
  cli.size("rows", rows, 37, "rows of the matrix", int64_t(1) << 31);
  cli.size("cols", cols, 1027, "elements per row (softmax width)", int64_t(1) << 31);
  cli.kernels_of(kVersions);
  cli.device_bytes([&] { return 4.0 * double(rows) * double(cols) * sizeof(float); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");

    const size_t count = size_t(rows * cols);
    const auto x = softmax_inputs(rows, cols, ctx.seed());
    const auto ref = softmax_cpu(x, rows, cols);
    gpu100::DeviceBuffer<float> d_x(x), d_y{count};
    ctx.copy_baseline(count * sizeof(float));

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      runs.push_back({.name = v.name,
                      .launch =
                          [&, grid = grid_of(v, rows)](cudaStream_t s) {
                            launch(v, grid, d_x.data(), d_y.data(), rows, cols, s);
                          },
                      .reset = [&] { d_y.poison(); },
                      .check =
                          [&] {
                            const auto y = d_y.download();
                            return gpu100::combine(
                                check_softmax(y, ref, x, rows, cols, rounding_steps(v.order, cols)),
                                check_equal_row(y, cols));
                          },
                      .work = 8.0 * double(count)});
    }
    ctx.measure_all(runs);
    report.note(fmt::format("rows 0-{} are the edge rows: all equal, +1000, -1000, first half -inf",
                            kEdgeRows - 1));
  });
}
