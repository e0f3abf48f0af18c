// Registers, local memory and the limits they put on a kernel: cudaFuncGetAttributes (numRegs,
// localSizeBytes, maxThreadsPerBlock), the occupancy calculator and the launch check.
//
// The expected register counts and stack frames are not the program's to know: the build runs
// ptxas on this file for the same architecture (`nvcc -cubin -Xptxas -v`, see CMakeLists.txt) and
// passes what ptxas reports as registers_expected.h. From those counts the host derives the rest
// with the CUDA occupancy calculator's rules (cuda_occupancy.h, the Programming Guide's "Hardware
// Multithreading" and the Occupancy Calculator), for compute capability 7.0 and later:
//   - a warp is allocated its 32 threads' registers rounded up to 256;
//   - an SM's registers (regsPerMultiprocessor) are split among its 4 sub-partitions, each
//     holding whole warps;
//   - a block fits only if (registers of a warp) x (its warps rounded up to a multiple of 4) is
//     at most regsPerBlock; a launch of a block that does not fit, or of more threads than
//     __launch_bounds__ allows, fails with cudaErrorLaunchOutOfResources.
// The occupancy is cross-checked against cuda_occupancy.h itself, given the device's properties
// and the ptxas register counts.
#include <cuda_occupancy.h>

#include <string>

#include "conf_common.h"

// What ptxas reported for each kernel of this file for the architecture the program runs.
struct Expected {
  const char* name;
  int regs;   // "Used N registers"
  int frame;  // "N bytes stack frame"
};
#if __has_include("registers_expected.h")
#include "registers_expected.h"  // constexpr Expected kExpected[] = {...};
#else  // the build's own ptxas run over this file, which writes that header
constexpr Expected kExpected[] = {{"", 0, 0}};
#endif

constexpr int kWide = 96;  // values each thread of k_wide keeps live across a barrier

// Few registers.
extern "C" __global__ void k_small(const float* in, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i] * 2.0f + 1.0f;
}

// Many registers: kWide values loaded before the barrier are stored after it, so all are live
// across it (loads cannot move past __syncthreads). ptxas needs more than 64 registers, so a
// block of 1024 threads cannot hold them.
extern "C" __global__ void k_wide(const float* in, float* out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int n = gridDim.x * blockDim.x;
  float v[kWide];
#pragma unroll
  for (int j = 0; j < kWide; ++j) v[j] = in[j * n + t];
  __syncthreads();
#pragma unroll
  for (int j = 0; j < kWide; ++j) out[j * n + t] = v[kWide - 1 - j];
}

// At most 256 threads a block.
extern "C" __global__ void __launch_bounds__(256) k_bounded(const float* in, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i] - 1.0f;
}

// A local array indexed at run time: a stack frame (local memory).
extern "C" __global__ void k_local(const int* in, int* out) {
  int table[64];
  const int t = threadIdx.x;
  for (int j = 0; j < 64; ++j) table[j] = j * (t + 1);
  for (int j = 0; j < 64; ++j) table[in[j] & 63] += in[64 + j];
  out[t] = table[in[128 + t] & 63];
}

struct Kernel {
  const char* name;
  const void* func;
  int launch_bound;  // __launch_bounds__ max threads, 0: none
};
const Kernel kKernels[] = {{"k_small", (const void*)k_small, 0},
                           {"k_wide", (const void*)k_wide, 0},
                           {"k_bounded", (const void*)k_bounded, 256},
                           {"k_local", (const void*)k_local, 0}};

int round_up(int x, int m) { return (x + m - 1) / m * m; }
constexpr int kSubPartitions = 4, kGranularity = 256;

// Whether a block of `warps` warps of a kernel with `regs` registers per thread fits.
bool block_fits(int regs, int warps, const cudaDeviceProp& p) {
  const int per_warp = round_up(regs * 32, kGranularity);
  return regs <= 255 && per_warp * round_up(warps, kSubPartitions) <= p.regsPerBlock;
}
// The most threads a launch of the kernel may have.
int max_threads(int regs, int bound, const cudaDeviceProp& p) {
  int n = bound ? bound : p.maxThreadsPerBlock;
  while (n > 0 && !block_fits(regs, (n + 31) / 32, p)) n = ((n + 31) / 32 - 1) * 32;
  return n;
}

int main() {
  conf_require_device();
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major < 7) {
    std::printf("SKIP: the register rules checked here are those of compute capability 7.0 and later\n");
    return 77;
  }
  conf_check("cudaDeviceProp", "regsPerBlock", prop.regsPerBlock, 65536);
  conf_check("cudaDeviceProp", "regsPerMultiprocessor", prop.regsPerMultiprocessor, 65536);

  for (const Kernel& k : kKernels) {
    const Expected* e = nullptr;
    for (const Expected& x : kExpected)
      if (std::string(x.name) == k.name) e = &x;
    if (!e) {
      std::fprintf(stderr, "%s: ptxas reported no register count (registers_expected.h)\n", k.name);
      return 1;
    }
    cudaFuncAttributes a;
    CUDA_CHECK(cudaFuncGetAttributes(&a, k.func));
    conf_check("numRegs", k.name, a.numRegs, e->regs);
    conf_check("localSizeBytes", k.name, int(a.localSizeBytes), e->frame);
    const int most = max_threads(e->regs, k.launch_bound, prop);
    conf_check("maxThreadsPerBlock", k.name, a.maxThreadsPerBlock, most);

    // The occupancy calculator, for every block size a launch may have (multiples of 32 and a few
    // others), against cuda_occupancy.h given the ptxas register count.
    cudaOccDeviceProp occ_prop(prop);
    cudaOccFuncAttributes occ_attr(a);
    occ_attr.numRegs = e->regs;
    occ_attr.maxThreadsPerBlock = most;
    cudaOccDeviceState occ_state;
    for (int block = 1; block <= most; block += (block < 64 ? 31 : 32)) {
      int got = -1;
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&got, k.func, block, 0));
      cudaOccResult r;
      if (cudaOccMaxActiveBlocksPerMultiprocessor(&r, &occ_prop, &occ_attr, &occ_state, block, 0) !=
          CUDA_OCC_SUCCESS) {
        std::fprintf(stderr, "cuda_occupancy.h failed for %s, block %d\n", k.name, block);
        return 1;
      }
      conf_check("cudaOccupancyMaxActiveBlocksPerMultiprocessor", conf_fmt("%s, block %d", k.name, block),
                 got, r.activeBlocksPerMultiprocessor);
    }
  }

  // k_wide must need more than 64 registers for the launch checks below to mean anything.
  int wide_regs = 0;
  for (const Expected& x : kExpected)
    if (std::string(x.name) == "k_wide") wide_regs = x.regs;
  conf_check("ptxas registers of k_wide > 64", "", wide_regs > 64, true);

  // Launches: the largest block that fits runs (and computes), one warp more is refused without a
  // sticky error; 1024 threads are refused.
  const int most = max_threads(wide_regs, 0, prop);
  const int blocks = 2;
  const size_t n = size_t(blocks) * 1024 * kWide;
  float *in = nullptr, *out = nullptr;
  CUDA_CHECK(cudaMalloc(&in, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&out, n * sizeof(float)));
  std::vector<float> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = float(i % 100003);
  CUDA_CHECK(cudaMemcpy(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  k_wide<<<blocks, most>>>(in, out);
  conf_check("launch k_wide", conf_fmt("%d threads (the most that fit)", most), int(cudaGetLastError()),
             int(cudaSuccess));
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> got(size_t(blocks) * most * kWide);
  CUDA_CHECK(cudaMemcpy(got.data(), out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  const int threads = blocks * most;
  int wrong = 0;
  for (int j = 0; j < kWide; ++j)
    for (int t = 0; t < threads; ++t)
      wrong += got[size_t(j) * threads + t] != host[size_t(kWide - 1 - j) * threads + t];
  conf_check("k_wide results", "", wrong, 0);
  if (most < 1024) {
    k_wide<<<blocks, most + 32>>>(in, out);
    conf_check("launch k_wide", conf_fmt("%d threads (one warp more)", most + 32), int(cudaGetLastError()),
               int(cudaErrorLaunchOutOfResources));
    k_wide<<<blocks, 1024>>>(in, out);
    conf_check("launch k_wide", "1024 threads", int(cudaGetLastError()), int(cudaErrorLaunchOutOfResources));
    conf_check("after refused launches", "cudaDeviceSynchronize", int(cudaDeviceSynchronize()), int(cudaSuccess));
  }
  // __launch_bounds__(256): 257 threads are refused the same way.
  k_bounded<<<1, 257>>>(in, out);
  conf_check("launch k_bounded", "257 threads", int(cudaGetLastError()), int(cudaErrorLaunchOutOfResources));
  k_bounded<<<1, 256>>>(in, out);
  conf_check("launch k_bounded", "256 threads", int(cudaGetLastError()), int(cudaSuccess));
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaFree(in));
  CUDA_CHECK(cudaFree(out));
  return conf_finish("registers");
}
