// Day 001 - vector addition: c[i] = a[i] + b[i]
//
// The first kernel of the course, and already a lesson in memory bandwidth: each element costs
// 12 bytes of DRAM traffic (two loads, one store) and one FLOP, so the only number that matters
// is GB/s, compared with what a device-to-device cudaMemcpy achieves in the same run.
//
// Versions
//   naive        one thread per element; the grid covers n exactly (ceil(n / 256) blocks).
//   grid_stride  a fixed grid (exactly the blocks that fit on the GPU at once) whose threads
//                stride over the array by the grid size: one launch shape for every n, and no
//                grid-size limit.
//   float4       grid-stride over 16-byte vectors (ld.global.v4.f32): a quarter of the load and
//                store instructions; the n % 4 leftover elements are handled by scalar code.
//
// Check: float addition is correctly rounded on both sides, so the GPU result must equal the CPU
// loop bit for bit.
//
// Run:  build/bin/day001 [--n 134217731] [--kernel naive,float4] [--json out.json]
#include <stdexcept>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

// ---- CPU reference ------------------------------------------------------------------------------
std::vector<float> add_cpu(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> c(a.size());
  for (size_t i = 0; i < c.size(); ++i) c[i] = a[i] + b[i];
  return c;
}

// ---- kernels ------------------------------------------------------------------------------------
__global__ void add_naive(const float* __restrict__ a, const float* __restrict__ b,
                          float* __restrict__ c, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void add_grid_stride(const float* __restrict__ a, const float* __restrict__ b,
                                float* __restrict__ c, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    c[i] = a[i] + b[i];
}

// a, b and c must be 16-byte aligned to be read as float4 (the launcher checks).
__global__ void add_float4(const float* __restrict__ a, const float* __restrict__ b,
                           float* __restrict__ c, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t n4 = n / 4;
  const float4* a4 = reinterpret_cast<const float4*>(a);
  const float4* b4 = reinterpret_cast<const float4*>(b);
  float4* c4 = reinterpret_cast<float4*>(c);
  for (int64_t i = tid; i < n4; i += stride) {
    const float4 x = a4[i], y = b4[i];
    c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
  for (int64_t i = 4 * n4 + tid; i < n; i += stride) c[i] = a[i] + b[i];  // 0..3 leftovers
}

// ---- launchers ----------------------------------------------------------------------------------
constexpr int kBlock = 256;
using Kernel = void (*)(const float*, const float*, float*, int64_t);

struct Version {
  const char* name;
  Kernel kernel;
  bool grid_stride;  // a fixed, device-filling grid instead of one thread per element
};
const Version kVersions[] = {
    {"naive", add_naive, false},
    {"grid_stride", add_grid_stride, true},
    {"float4", add_float4, true},
};

// Grid-stride grids: as many blocks as fit on the SMs at once (occupancy calculator). A fixed
// "8 blocks of 256 per SM" fits only kernels of <= 32 registers, and add_float4 needs more.
unsigned grid_of(const Version& v, int64_t n) {
  return v.grid_stride ? gpu100::resident_grid(v.kernel, kBlock) : gpu100::grid_for(n, kBlock);
}

void launch(const Version& v, unsigned grid, const float* a, const float* b, float* c, int64_t n,
            cudaStream_t s) {
  // A misaligned base (an offset into a bigger allocation, say) would be a misaligned-address
  // fault in add_float4: say so instead.
  if (v.kernel == add_float4 &&
      !(gpu100::is_aligned(a, 16) && gpu100::is_aligned(b, 16) && gpu100::is_aligned(c, 16)))
    throw std::invalid_argument("add_float4 needs 16-byte aligned arrays");
  v.kernel<<<grid, kBlock, 0, s>>>(a, b, c, n);
  LAUNCH_CHECK();
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("c = a + b in fp32: naive, grid-stride and float4 kernels vs cudaMemcpy");
  int64_t n = (int64_t(1) << 27) + 3;
  cli.size("n", n, 1'000'003, "number of elements");
  cli.kernels_of(kVersions);
  cli.device_bytes([&] { return 3.0 * double(n) * sizeof(float); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    report.intensity(1.0 / 12.0);  // one FLOP per 12 bytes

    const auto a = gpu100::random_floats(size_t(n), ctx.seed());
    const auto b = gpu100::random_floats(size_t(n), ctx.seed() + 1);
    const auto ref = add_cpu(a, b);
    gpu100::DeviceBuffer<float> d_a(a), d_b(b), d_c{size_t(n)};
    // Same traffic as the kernels: a copy of 1.5 n floats reads and writes 12 n bytes in total.
    ctx.copy_baseline(size_t(1.5 * double(n) * sizeof(float)));

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      runs.push_back({.name = v.name,
                      .launch =
                          [&, grid = grid_of(v, n)](cudaStream_t s) {
                            launch(v, grid, d_a.data(), d_b.data(), d_c.data(), n, s);
                          },
                      .reset = [&] { d_c.poison(); },
                      .check = [&] { return gpu100::compare_exact(d_c.download(), ref); },
                      .work = 12.0 * double(n)});
    }
    ctx.measure_all(runs);
  });
}
