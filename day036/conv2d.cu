// Day 036 - 2D convolution over channels: out[f][y][x] = sum over c, dy, dx of
//           w[f][c][dy][dx] * in[c][y + dy - r][x + dx - r]
//
// A convolution layer's forward pass in its direct form: C input channels of H x W pixels, F
// filters of C x (2r+1) x (2r+1) weights, "same" zero padding, F output channels. Day 035 in two
// dimensions, with a third kind of reuse: every input pixel is read by (2r+1)^2 neighbours of
// every one of the F filters. The filter bank is small and read at the same index by a whole
// warp, so it lives in constant memory; the input tile with its halo is staged in shared memory
// once per channel; and a thread that computes several output channels at one pixel reads each
// staged input once for all of them.
//
// Versions (16 x 16 threads per block, one block per 16 x 16 output tile)
//   naive            one thread per output value (grid z = filters); weights and inputs from
//                    global memory.
//   constant_filter  the weights in __constant__ memory (ld.const): broadcast to the warp.
//   tiled            for each input channel the block stages its 16 x 16 tile plus an r-pixel
//                    halo in shared memory, syncs, and accumulates from there. The tile's rows
//                    are padded so that a warp (two rows of 16 threads) reads without bank
//                    conflicts.
//   tiled_multi_out  the same tile, and each thread computes 4 output channels at its pixel: an
//                    input value loaded from shared memory feeds 4 weights (register reuse),
//                    and the grid has a quarter of the blocks, each staging the input once.
//
// Check: every version, and the CPU, accumulates sum = fma(w, in, sum) over c, then dy, then dx,
// from +0, with ghost pixels adding +-0 (which never changes a sum that started at +0): fma is
// correctly rounded, so the outputs must equal the CPU's bit for bit.
//
// Rate: TFLOP/s (2 FLOPs per multiply-add, F C (2r+1)^2 H W of them) against the FP32 peak.
// With 3 channels, 16 filters and r = 2 that is about 32 FLOPs per byte of input and output:
// the arithmetic, not DRAM, bounds a good kernel.
//
// Run:  build/bin/day036 [--width 1921 --height 1081 --channels 3 --filters 16 --radius 2]
#include <cmath>
#include <vector>

#include <fmt/core.h>

#include "gpu100/gpu100.h"

namespace {

constexpr int kMaxRadius = 3;
constexpr int kMaxWeights = 12288;  // 48 KiB of the 64 KiB constant bank
constexpr int kTile = 16;           // output tile edge = block edge
constexpr int kOutPerThread = 4;    // tiled_multi_out: output channels per thread

struct Shape {
  int channels, filters, height, width, r;
  __host__ __device__ int taps() const { return (2 * r + 1) * (2 * r + 1); }
  __host__ __device__ int64_t pixels() const { return int64_t(height) * width; }
};

// ---- CPU reference ------------------------------------------------------------------------------
std::vector<float> conv2d_cpu(const std::vector<float>& in, const std::vector<float>& w,
                              const Shape& s) {
  const int k = 2 * s.r + 1;
  std::vector<float> out(size_t(s.filters) * size_t(s.pixels()));
  for (int f = 0; f < s.filters; ++f)
    for (int y = 0; y < s.height; ++y)
      for (int x = 0; x < s.width; ++x) {
        float sum = 0.0f;
        for (int c = 0; c < s.channels; ++c)
          for (int dy = 0; dy < k; ++dy)
            for (int dx = 0; dx < k; ++dx) {
              const int iy = y + dy - s.r, ix = x + dx - s.r;
              const bool inside = iy >= 0 && iy < s.height && ix >= 0 && ix < s.width;
              const float v = inside ? in[(size_t(c) * s.height + iy) * s.width + ix] : 0.0f;
              sum = std::fma(w[((size_t(f) * s.channels + c) * k + dy) * k + dx], v, sum);
            }
        out[(size_t(f) * s.height + y) * s.width + x] = sum;
      }
  return out;
}

// ---- kernels ------------------------------------------------------------------------------------
__constant__ float c_weights[kMaxWeights];

// WeightsFromConstant selects where the weights come from: the same loop, two memories.
template <bool WeightsFromConstant>
__global__ void conv2d_direct(const float* __restrict__ in, const float* __restrict__ w,
                              float* __restrict__ out, Shape s) {
  const int x = blockIdx.x * kTile + threadIdx.x;
  const int y = blockIdx.y * kTile + threadIdx.y;
  const int f = blockIdx.z;
  if (x >= s.width || y >= s.height) return;
  const int k = 2 * s.r + 1;
  const float* wf = (WeightsFromConstant ? c_weights : w) + size_t(f) * s.channels * k * k;
  float sum = 0.0f;
  for (int c = 0; c < s.channels; ++c)
    for (int dy = 0; dy < k; ++dy) {
      const int iy = y + dy - s.r;
      if (iy < 0 || iy >= s.height) continue;
      const float* row = in + (size_t(c) * s.height + iy) * s.width;
      for (int dx = 0; dx < k; ++dx) {
        const int ix = x + dx - s.r;
        if (ix >= 0 && ix < s.width) sum = fmaf(wf[(c * k + dy) * k + dx], row[ix], sum);
      }
    }
  out[(size_t(f) * s.height + y) * s.width + x] = sum;
}

// A warp is two rows of 16 threads, reading tile rows ty + dy and ty + dy + 1 at once. With a row
// pitch of 16 mod 32 words the two halves fall on disjoint banks; the unpadded pitch 16 + 2r
// would put 2r of the second half's lanes on the first half's banks (a 2-way conflict).
__host__ __device__ int tile_pitch(int edge) { return edge + ((16 - edge % 32) + 32) % 32; }

// The block's filters are blockIdx.z * OUT .. + OUT - 1 (the last group may be partial); for each
// channel it stages input rows y0 - r .. y0 + 15 + r, columns x0 - r .. x0 + 15 + r, ghost pixels
// as zeros, so the accumulation has no bounds checks.
template <int OUT>
__global__ void conv2d_tiled(const float* __restrict__ in, float* __restrict__ out, Shape s) {
  extern __shared__ float tile[];
  const int k = 2 * s.r + 1, edge = kTile + 2 * s.r, pitch = tile_pitch(edge);
  const int x0 = blockIdx.x * kTile, y0 = blockIdx.y * kTile;
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  const int f0 = blockIdx.z * OUT;
  const int tid = threadIdx.y * kTile + threadIdx.x;
  float sum[OUT];
#pragma unroll
  for (int o = 0; o < OUT; ++o) sum[o] = 0.0f;
  for (int c = 0; c < s.channels; ++c) {
    const float* plane = in + size_t(c) * s.pixels();
    for (int t = tid; t < edge * edge; t += kTile * kTile) {
      const int iy = y0 - s.r + t / edge, ix = x0 - s.r + t % edge;
      const bool inside = iy >= 0 && iy < s.height && ix >= 0 && ix < s.width;
      tile[(t / edge) * pitch + t % edge] = inside ? plane[size_t(iy) * s.width + ix] : 0.0f;
    }
    __syncthreads();
    for (int dy = 0; dy < k; ++dy)
      for (int dx = 0; dx < k; ++dx) {
        const float v = tile[(threadIdx.y + dy) * pitch + threadIdx.x + dx];
#pragma unroll
        for (int o = 0; o < OUT; ++o)
          if (f0 + o < s.filters)
            sum[o] = fmaf(c_weights[(((f0 + o) * s.channels + c) * k + dy) * k + dx], v, sum[o]);
      }
    __syncthreads();  // the next channel overwrites the tile only after everyone read it
  }
  if (x >= s.width || y >= s.height) return;
#pragma unroll
  for (int o = 0; o < OUT; ++o)
    if (f0 + o < s.filters) out[(size_t(f0 + o) * s.height + y) * s.width + x] = sum[o];
}

// ---- launchers ----------------------------------------------------------------------------------
dim3 grid_of(const Shape& s, int filters_per_block) {
  return dim3(gpu100::grid_for(s.width, kTile), gpu100::grid_for(s.height, kTile),
              gpu100::grid_for(s.filters, filters_per_block));
}

template <bool WeightsFromConstant>
void launch_direct(const float* in, const float* w, float* out, const Shape& s, cudaStream_t st) {
  conv2d_direct<WeightsFromConstant><<<grid_of(s, 1), dim3(kTile, kTile), 0, st>>>(in, w, out, s);
  LAUNCH_CHECK();
}

template <int OUT>
void launch_tiled(const float* in, const float*, float* out, const Shape& s, cudaStream_t st) {
  const int edge = kTile + 2 * s.r;
  const size_t smem = size_t(edge) * size_t(tile_pitch(edge)) * sizeof(float);
  conv2d_tiled<OUT><<<grid_of(s, OUT), dim3(kTile, kTile), smem, st>>>(
      in, out, s);
  LAUNCH_CHECK();
}

struct Version {
  const char* name;
  void (*launch)(const float* in, const float* w, float* out, const Shape& s, cudaStream_t st);
};
const Version kVersions[] = {
    {"naive", launch_direct<false>},
    {"constant_filter", launch_direct<true>},
    {"tiled", launch_tiled<1>},
    {"tiled_multi_out", launch_tiled<kOutPerThread>},
};

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "multi-channel 2D convolution with zero padding: global weights, constant weights, shared "
      "input tile, tile with 4 output channels per thread");
  int64_t width = 1921, height = 1081;
  int channels = 3, filters = 16, radius = 2;
  cli.size("width", width, 67, "image width in pixels", int64_t(1) << 20);
  cli.size("height", height, 37, "image height in pixels (grid y: at most 65535 tiles)",
           int64_t(65535) * kTile);
  cli.option("channels", channels, "input channels C", 1, 256);
  cli.option("filters", filters, "filters = output channels F (grid z: at most 65535)", 1, 4096);
  cli.option("radius", radius, "filter radius r: each filter is C x (2r+1) x (2r+1)", 0,
             kMaxRadius);
  cli.validate([&] {
    const int64_t weights = int64_t(filters) * channels * (2 * radius + 1) * (2 * radius + 1);
    return weights <= kMaxWeights
               ? std::string()
               : fmt::format("--filters x --channels x (2 radius + 1)^2 must be at most {} "
                             "weights (constant memory), got {}",
                             kMaxWeights, weights);
  });
  cli.kernels_of(kVersions);
  cli.device_bytes([&] {
    return double(channels + filters) * double(width) * double(height) * sizeof(float);
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    const Shape s{channels, filters, int(height), int(width), radius};
    const double flops = 2.0 * s.filters * s.channels * s.taps() * double(s.pixels());
    report.unit("TFLOP/s");
    report.limit("fp32_tflops", ctx.device().peak_fp32_tflops(), "FP32 peak");
    report.intensity(flops / (double(s.channels + s.filters) * double(s.pixels()) * 4.0));

    const auto in = gpu100::random_floats(size_t(s.channels) * size_t(s.pixels()), ctx.seed());
    const auto w = gpu100::random_floats(size_t(s.filters) * s.channels * s.taps(),
                                         ctx.seed() + 1);
    const auto ref = conv2d_cpu(in, w, s);
    gpu100::DeviceBuffer<float> d_in(in), d_w(w), d_out{ref.size()};
    CUDA_CHECK(cudaMemcpyToSymbol(c_weights, w.data(), w.size() * sizeof(float)));

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      runs.push_back(
          {.name = v.name,
           .launch = [&](cudaStream_t st) { v.launch(d_in.data(), d_w.data(), d_out.data(), s, st); },
           .reset = [&] { d_out.poison(); },
           .check = [&] { return gpu100::compare_exact(d_out.download(), ref); },
           .work = flops});
    }
    ctx.measure_all(runs);
    report.note("TFLOP/s counts 2 FLOPs per multiply-add of the direct convolution");
  });
}
