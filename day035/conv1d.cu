// Day 035 - 1D convolution: y[i] = sum over j in [0, 2r] of mask[j] * x[i + j - r]
//
// The first convolution of Part IV, and the stencil of day 006 in one dimension with weights:
// every output reads 2r+1 inputs and every input is read by 2r+1 outputs. Two memories do the
// work here. The mask is tiny, read-only and read by every thread at the same index at the same
// time: constant memory broadcasts one word to a whole warp from a small on-chip cache. The
// inputs are reused 2r+1 times by neighbouring threads: a block stages its tile plus an r-element
// halo on each side in shared memory, once, and every thread reads its window from there.
// Inputs outside [0, n) are zero ("ghost cells").
//
// Versions
//   naive            one thread per output; mask and window both read from global memory.
//   constant_mask    the mask in __constant__ memory (ld.const): one broadcast per tap
//                    instead of a global load per tap.
//   tiled_halo       a block of 256 threads loads its 256 inputs plus both halos into shared
//                    memory, syncs, then computes from shared memory with the constant mask.
//   tiled_coarsened  the same tile logic with 4 outputs per thread (1024 per block): the halo is
//                    loaded once for four times the outputs, and each thread's windows overlap.
//
// Check: every version, and the CPU, computes sum = fma(mask[j], x[i + j - r], sum) for j = 0,
// 1, ... 2r in that order, starting from +0, skipping nothing but adding +-0 for ghost cells
// (which never changes a sum that started at +0). fma is correctly rounded on both sides, so the
// outputs must equal the CPU's bit for bit.
//
// Rate: GB/s of useful traffic, one float read and one written per output (8 bytes), against a
// device-to-device copy of the same bytes measured in the same run. With 2(2r+1) FLOPs per 8
// bytes the kernels are memory-bound for every radius allowed here.
//
// Run:  build/bin/day035 [--n 67108867] [--radius 8] [--kernel tiled_halo] [--json out.json]
#include <cmath>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kMaxRadius = 64;  // a mask of up to 129 taps: 516 bytes of the 64 KiB constant bank
constexpr int kBlock = 256;
constexpr int kCoarsen = 4;  // tiled_coarsened: outputs per thread

// ---- CPU reference ------------------------------------------------------------------------------
std::vector<float> conv1d_cpu(const std::vector<float>& x, const std::vector<float>& mask, int r) {
  const int64_t n = int64_t(x.size());
  std::vector<float> y(x.size());
  for (int64_t i = 0; i < n; ++i) {
    float sum = 0.0f;
    for (int j = 0; j <= 2 * r; ++j) {
      const int64_t k = i + j - r;
      sum = std::fma(mask[j], (k >= 0 && k < n) ? x[k] : 0.0f, sum);
    }
    y[i] = sum;
  }
  return y;
}

// ---- kernels ------------------------------------------------------------------------------------
__constant__ float c_mask[2 * kMaxRadius + 1];

__global__ void conv1d_naive(const float* __restrict__ x, const float* __restrict__ mask,
                             float* __restrict__ y, int64_t n, int r) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float sum = 0.0f;
  for (int j = 0; j <= 2 * r; ++j) {
    const int64_t k = i + j - r;
    if (k >= 0 && k < n) sum = fmaf(mask[j], x[k], sum);
  }
  y[i] = sum;
}

__global__ void conv1d_constant_mask(const float* __restrict__ x, float* __restrict__ y,
                                     int64_t n, int r) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float sum = 0.0f;
  for (int j = 0; j <= 2 * r; ++j) {
    const int64_t k = i + j - r;
    if (k >= 0 && k < n) sum = fmaf(c_mask[j], x[k], sum);
  }
  y[i] = sum;
}

// The block's outputs are [first, first + OUTPUTS_PER_THREAD * blockDim.x); the tile holds the
// inputs [first - r, first + outputs + r), ghost cells as zeros, so the compute loop has no
// bounds checks at all. Output j of a thread is first + threadIdx.x + j * blockDim.x: a warp
// always writes 32 consecutive floats, and reads 32 consecutive shared words (no conflicts).
template <int OUTPUTS_PER_THREAD>
__global__ void conv1d_tiled(const float* __restrict__ x, float* __restrict__ y, int64_t n,
                             int r) {
  extern __shared__ float tile[];
  const int outputs = OUTPUTS_PER_THREAD * blockDim.x;
  const int64_t first = int64_t(blockIdx.x) * outputs;
  for (int t = threadIdx.x; t < outputs + 2 * r; t += blockDim.x) {
    const int64_t k = first - r + t;
    tile[t] = (k >= 0 && k < n) ? x[k] : 0.0f;
  }
  __syncthreads();
#pragma unroll
  for (int o = 0; o < OUTPUTS_PER_THREAD; ++o) {
    const int local = threadIdx.x + o * blockDim.x;
    if (first + local >= n) break;
    float sum = 0.0f;
    for (int j = 0; j <= 2 * r; ++j) sum = fmaf(c_mask[j], tile[local + j], sum);
    y[first + local] = sum;
  }
}

// ---- launchers ----------------------------------------------------------------------------------
struct Args {
  const float* x;
  const float* mask;  // the global copy (naive); the others read c_mask
  float* y;
  int64_t n;
  int r;
};

void launch_naive(const Args& a, cudaStream_t s) {
  conv1d_naive<<<gpu100::grid_for(a.n, kBlock), kBlock, 0, s>>>(a.x, a.mask, a.y, a.n, a.r);
  LAUNCH_CHECK();
}

void launch_constant_mask(const Args& a, cudaStream_t s) {
  conv1d_constant_mask<<<gpu100::grid_for(a.n, kBlock), kBlock, 0, s>>>(a.x, a.y, a.n, a.r);
  LAUNCH_CHECK();
}

template <int OUTPUTS_PER_THREAD>
void launch_tiled(const Args& a, cudaStream_t s) {
  const int outputs = OUTPUTS_PER_THREAD * kBlock;
  const size_t smem = size_t(outputs + 2 * a.r) * sizeof(float);
  conv1d_tiled<OUTPUTS_PER_THREAD>
      <<<gpu100::grid_for(a.n, outputs), kBlock, smem, s>>>(a.x, a.y, a.n, a.r);
  LAUNCH_CHECK();
}

struct Version {
  const char* name;
  void (*launch)(const Args&, cudaStream_t);
};
const Version kVersions[] = {
    {"naive", launch_naive},
    {"constant_mask", launch_constant_mask},
    {"tiled_halo", launch_tiled<1>},
    {"tiled_coarsened", launch_tiled<kCoarsen>},
};

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "1D convolution with a (2r+1)-tap mask and zero padding: global mask, constant mask, "
      "shared tile with halo, coarsened tile, vs cudaMemcpy");
  int64_t n = (int64_t(1) << 26) + 3;
  int radius = 8;
  cli.size("n", n, 100'003, "number of elements", int64_t(1) << 32);
  cli.option("radius", radius, "mask radius r: the mask has 2r+1 taps", 0, kMaxRadius);
  cli.kernels_of(kVersions);
  cli.device_bytes([&] { return 4.0 * double(n) * sizeof(float); });  // x, y, copy's two

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    const int r = radius;
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    report.intensity(2.0 * (2 * r + 1) / 8.0);

    const auto x = gpu100::random_floats(size_t(n), ctx.seed());
    const auto mask = gpu100::random_floats(size_t(2 * r + 1), ctx.seed() + 1);
    const auto ref = conv1d_cpu(x, mask, r);
    gpu100::DeviceBuffer<float> d_x(x), d_mask(mask), d_y{size_t(n)};
    CUDA_CHECK(cudaMemcpyToSymbol(c_mask, mask.data(), mask.size() * sizeof(float)));
    ctx.copy_baseline(size_t(n) * sizeof(float));  // n floats read + n written, like the kernels

    const Args args{d_x.data(), d_mask.data(), d_y.data(), n, r};
    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      runs.push_back({.name = v.name,
                      .launch = [&](cudaStream_t s) { v.launch(args, s); },
                      .reset = [&] { d_y.poison(); },
                      .check = [&] { return gpu100::compare_exact(d_y.download(), ref); },
                      .work = 8.0 * double(n)});
    }
    ctx.measure_all(runs);
    report.note(
        "GB/s counts 4 bytes read + 4 written per output (halo re-reads and mask reads are not "
        "counted)");
  });
}
