// Day 007 - parallel reduction in shared memory: the sum of n floats
//
// A reduction reads every input once and writes almost nothing, so like day 1 it is bound by
// memory bandwidth (4 bytes per element, one add per element) and the number to watch is GB/s
// against the HBM peak and against cub::DeviceReduce::Sum run on the same data. The path to that
// bandwidth is Mark Harris's "Optimizing Parallel Reduction in CUDA": seven kernels, each
// removing the bottleneck the previous one exposed. Every block of every version sums its share
// into shared memory with a tree and writes one partial sum; the same kernel then runs again on
// the partials until one value is left, and the timing covers all of those passes.
//
// Versions (256 threads per block)
//   divergent      1 interleaved addressing, `if (tid % (2*stride) == 0)`: in every step only
//                  a scattered subset of each warp's lanes works, and the modulo is slow.
//   strided_index  2 the same pairs, but thread tid handles pair 2*stride*tid: active threads
//                  are contiguous, so whole warps retire, but the strided shared-memory
//                  addresses now hit the same banks: 2-, 4- and 8-way conflicts (the working
//                  lanes thin out as the stride grows, so no level is worse than 8-way).
//   sequential     3 sequential addressing, s[tid] += s[tid + stride] with stride halving:
//                  consecutive lanes touch consecutive words, no conflicts; but half the
//                  threads are idle from the first step on.
//   add_on_load    4 each thread loads two elements and adds them while loading, so the block
//                  covers 512 inputs and no thread idles in the first step; half the blocks.
//   unroll_warp    5 once 32 threads are left, one warp finishes alone without __syncthreads()
//                  (with __syncwarp(): see warp_tree for why volatile no longer suffices).
//   full_unroll    6 the block size is a template parameter, so every loop and every `if` on
//                  the block size is resolved at compile time.
//   multi_element  7 a fixed grid (as many blocks as the SMs hold at once) whose threads
//                  accumulate many elements in a register with a grid-stride loop before the
//                  tree: the tree's cost is paid once per thread instead of once per two
//                  elements, and loads stay in flight.
//
// Check: the CPU sums the same floats in double. The inputs are quarters, k/4 with k in 1..4, so
// every partial sum any version forms is a multiple of 1/4 below n: up to n = 2^22 (4n <= 2^24,
// the fp32 significand) all of them are exact, so every version, whatever its order of additions,
// must return exactly the reference, and one lost or doubled element (>= 0.25) fails. (With
// uniform [0, 1) inputs the worst-case rounding bound at the --quick size is about 1, larger
// than a typical element: a lost element would pass.) Above 2^22 the fp32 sums round, and the
// tolerance is the classic worst-case bound gamma_h for the order each version adds in (see
// gpu100::summation_error_bound), printed per version in the "rounding bound" table.
//
// Run:  build/bin/day007 [--n 134217733] [--kernel sequential,multi_element] [--json out.json]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cub/cub.cuh>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr unsigned kBlock = 256;
constexpr unsigned kLog2Block = 8;
static_assert((1u << kLog2Block) == kBlock, "kLog2Block must match kBlock");

// Up to this n every sum of the quarter-valued inputs is exact in fp32 (see Check above).
constexpr int64_t kExactMaxN = int64_t(1) << 22;

// ---- 1: interleaved addressing with a divergent branch ---------------------------------------
// The versions 1-5 take their block size from blockDim.x (a power of two; 5 needs >= 64), the
// way Harris wrote them; versions 6 and 7 turn it into a template parameter.
__global__ void reduce_divergent(const float* __restrict__ in, float* __restrict__ out, int64_t n) {
  extern __shared__ float s[];
  const unsigned tid = threadIdx.x;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + tid;
  s[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
    // Lanes 0, 2, 4, ... then 0, 4, 8, ... work: every warp stays busy until the last steps,
    // executing both sides of the branch, while most of its lanes do nothing.
    if (tid % (2 * stride) == 0) s[tid] += s[tid + stride];
    __syncthreads();  // outside the branch: every thread of the block reaches it
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

// ---- 2: interleaved addressing, strided index -------------------------------------------------
__global__ void reduce_strided_index(const float* __restrict__ in, float* __restrict__ out,
                                     int64_t n) {
  extern __shared__ float s[];
  const unsigned tid = threadIdx.x;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + tid;
  s[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
    // Threads 0..blockDim/(2*stride)-1 work, so idle warps skip the step entirely. The price:
    // lane k touches word 2*stride*k, in bank (2*stride*k) % 32. At stride 4 the 32 lanes of
    // warp 0 share 4 banks, 8 words each; at stride 16 the 8 lanes still working all hit bank 0.
    const unsigned index = 2 * stride * tid;
    if (index < blockDim.x) s[index] += s[index + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

// ---- 3: sequential addressing -------------------------------------------------------------------
__global__ void reduce_sequential(const float* __restrict__ in, float* __restrict__ out,
                                  int64_t n) {
  extern __shared__ float s[];
  const unsigned tid = threadIdx.x;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + tid;
  s[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  // Fold the upper half onto the lower half: lanes read consecutive words (no bank conflicts)
  // and the working threads are always a contiguous prefix.
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

// ---- 4: first add during load -------------------------------------------------------------------
// Each block covers 2 * blockDim.x inputs; thread tid loads elements tid and tid + blockDim.x
// (both coalesced) and stores their sum.
__device__ __forceinline__ float load_pair(const float* __restrict__ in, int64_t n, int64_t i,
                                           unsigned offset) {
  float v = i < n ? in[i] : 0.0f;
  if (i + offset < n) v += in[i + offset];
  return v;
}

__global__ void reduce_add_on_load(const float* __restrict__ in, float* __restrict__ out,
                                   int64_t n) {
  extern __shared__ float s[];
  const unsigned tid = threadIdx.x;
  const int64_t i = int64_t(blockIdx.x) * (2 * blockDim.x) + tid;
  s[tid] = load_pair(in, n, i, blockDim.x);
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

// ---- 5: unrolled last warp ----------------------------------------------------------------------
// The last six steps of the tree (64 values -> 1), done by the 32 lanes of warp 0 without a
// block-wide barrier. Called by all 32 lanes of warp 0 once s[0..63] is final; the sum ends up
// in lane 0 (and in s[0]).
//
// Harris (2007) wrote these steps as `vs[tid] += vs[tid + 16];` on a `volatile float* vs` and
// relied on the warp executing in lockstep: every lane read before any lane wrote. Since Volta
// (independent thread scheduling) the lanes of a warp may run apart, and nothing orders lane 0's
// read of s[16] before lane 16's write of s[16] = s[16] + s[32]; lane 0 may add a value that
// already contains s[32], a read/write race that compute-sanitizer's racecheck reports and that
// gives wrong sums. volatile only stops the compiler from keeping s[] in registers; it orders
// nothing between lanes. __syncwarp() is a barrier and a memory fence for the warp: reading into
// a register, __syncwarp(), writing, __syncwarp() puts every read of a step before every write of
// that step, and every write before the next step's reads. (Day 8 replaces all of this with
// register shuffles, which need no shared memory at all.)
__device__ __forceinline__ float warp_tree(float* s, unsigned tid) {
  float v = s[tid];
#pragma unroll
  for (unsigned stride = 32; stride > 0; stride >>= 1) {
    v += s[tid + stride];  // tid + stride <= 63: inside the >= 64-float array
    __syncwarp();
    s[tid] = v;
    __syncwarp();
  }
  return v;
}

__global__ void reduce_unroll_warp(const float* __restrict__ in, float* __restrict__ out,
                                   int64_t n) {
  extern __shared__ float s[];
  const unsigned tid = threadIdx.x;
  const int64_t i = int64_t(blockIdx.x) * (2 * blockDim.x) + tid;
  s[tid] = load_pair(in, n, i, blockDim.x);
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 32; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid < 32) {  // the whole of warp 0, so __syncwarp() inside sees all 32 lanes
    const float total = warp_tree(s, tid);
    if (tid == 0) out[blockIdx.x] = total;
  }
}

// ---- 6: completely unrolled ---------------------------------------------------------------------
// With BLOCK known at compile time the `if constexpr` steps vanish or stay, and each remaining
// step is straight-line code. The __syncthreads() inside them are not divergent: the condition
// is a constant, the same for every thread.
template <unsigned BLOCK>
__device__ __forceinline__ float block_tree(float* s, unsigned tid) {
  static_assert(BLOCK >= 64 && BLOCK <= 1024 && (BLOCK & (BLOCK - 1)) == 0,
                "block_tree needs a power-of-two block of 64..1024 threads");
  if constexpr (BLOCK >= 1024) {
    if (tid < 512) s[tid] += s[tid + 512];
    __syncthreads();
  }
  if constexpr (BLOCK >= 512) {
    if (tid < 256) s[tid] += s[tid + 256];
    __syncthreads();
  }
  if constexpr (BLOCK >= 256) {
    if (tid < 128) s[tid] += s[tid + 128];
    __syncthreads();
  }
  if constexpr (BLOCK >= 128) {
    if (tid < 64) s[tid] += s[tid + 64];
    __syncthreads();
  }
  return tid < 32 ? warp_tree(s, tid) : 0.0f;  // valid in thread 0
}

template <unsigned BLOCK>
__global__ void __launch_bounds__(BLOCK)
    reduce_full_unroll(const float* __restrict__ in, float* __restrict__ out, int64_t n) {
  __shared__ float s[BLOCK];
  const unsigned tid = threadIdx.x;
  const int64_t i = int64_t(blockIdx.x) * (2 * BLOCK) + tid;
  s[tid] = load_pair(in, n, i, BLOCK);
  __syncthreads();
  const float total = block_tree<BLOCK>(s, tid);
  if (tid == 0) out[blockIdx.x] = total;
}

// ---- 7: multiple elements per thread ------------------------------------------------------------
// A grid of a fixed size strides over the input 2*BLOCK*gridDim.x elements at a time. Each
// thread's running sum stays in a register; shared memory and barriers are used once per block.
template <unsigned BLOCK>
__global__ void __launch_bounds__(BLOCK)
    reduce_multi_element(const float* __restrict__ in, float* __restrict__ out, int64_t n) {
  __shared__ float s[BLOCK];
  const unsigned tid = threadIdx.x;
  const int64_t stride = int64_t(gridDim.x) * (2 * BLOCK);
  float sum = 0.0f;
  for (int64_t i = int64_t(blockIdx.x) * (2 * BLOCK) + tid; i < n; i += stride)
    sum += load_pair(in, n, i, BLOCK);
  s[tid] = sum;
  __syncthreads();
  const float total = block_tree<BLOCK>(s, tid);
  if (tid == 0) out[blockIdx.x] = total;
}

// ---- host side ----------------------------------------------------------------------------------
using ReduceKernel = void (*)(const float*, float*, int64_t);

struct Version {
  const char* name;
  ReduceKernel kernel;
  int64_t items_per_block;  // inputs one block covers per grid step (1 or 2 per thread)
  unsigned max_grid;        // 0: one block per items_per_block inputs; else the grid is capped
  size_t dynamic_smem;
};

// One launch of the kernel: len inputs -> grid partial sums.
struct Pass {
  int64_t len;
  unsigned grid;
};

// The passes that take n values down to one: each pass's partials are the next pass's input.
std::vector<Pass> plan(const Version& v, int64_t n) {
  std::vector<Pass> passes;
  int64_t len = n;
  do {
    int64_t grid = gpu100::ceil_div<int64_t>(len, v.items_per_block);
    if (v.max_grid > 0 && grid > int64_t(v.max_grid)) grid = v.max_grid;
    passes.push_back({len, unsigned(grid)});
    len = grid;
  } while (len > 1);
  return passes;
}

// Runs every pass, ping-ponging the partial sums between two scratch buffers; returns where the
// final sum lies.
float* reduce(const Version& v, const std::vector<Pass>& passes, const float* in, float* scratch_a,
              float* scratch_b, cudaStream_t stream) {
  const float* src = in;
  float* dst = scratch_a;
  for (const Pass& p : passes) {
    v.kernel<<<p.grid, kBlock, v.dynamic_smem, stream>>>(src, dst, p.len);
    LAUNCH_CHECK();
    src = dst;
    dst = dst == scratch_a ? scratch_b : scratch_a;
  }
  return const_cast<float*>(src);
}

// h for a plan: per pass, the values one thread adds in registers (at most
// ceil(len / threads) + 1) and the log2(block) levels of the shared-memory tree.
double additions_per_input(const std::vector<Pass>& passes) {
  double h = 0;
  for (const Pass& p : passes)
    h += double(gpu100::ceil_div<int64_t>(p.len, int64_t(p.grid) * kBlock) + 1 + kLog2Block);
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("sum of n floats: the seven classic shared-memory tree reductions vs CUB");
  int64_t n = (int64_t(1) << 27) + 5;
  cli.size("n", n, 1'000'003, "number of elements");
  cli.kernels({"divergent", "strided_index", "sequential", "add_on_load", "unroll_warp",
               "full_unroll", "multi_element"});
  // The input, two scratch buffers of ceil(n / 256) partials, and CUB's few KB of temp storage.
  cli.device_bytes([&] { return 4.0 * double(n) * (1.0 + 2.0 / kBlock) + double(16 << 20); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.problem("n", double(n));
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    report.intensity(1.0 / 4.0);  // one add per 4-byte element

    const size_t count = size_t(n);
    // k/4, k in 1..4: never zero, so every element counts; the sum (about 0.6 n) is far from
    // zero, so a relative error means something; and small sums are exact (see Check above).
    std::vector<float> x(count);
    {
      const auto k = gpu100::random_ints(count, ctx.seed(), 1, 4);
      for (size_t i = 0; i < count; ++i) x[i] = 0.25f * float(k[i]);
    }
    double ref = 0;
    for (float v : x) ref += double(v);
    const bool exact = n <= kExactMaxN;
    if (exact)
      report.note(
          "n <= 2^22: every partial sum of the quarter-valued inputs is exact in fp32, so "
          "each version must equal the reference exactly (\"bound\" below is what larger "
          "n allows)");

    gpu100::DeviceBuffer<float> d_in(x);
    const size_t partials = size_t(gpu100::ceil_div<int64_t>(n, kBlock));
    gpu100::DeviceBuffer<float> d_a(partials), d_b(partials), d_out(1);
    const double bytes = 4.0 * double(n);

    // Baseline: CUB's tuned two-kernel reduction on the same device array. Its temp storage is
    // allocated here, outside the timed region, like our scratch buffers.
    size_t temp_bytes = 0;
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, d_in.data(), d_out.data(), n));
    gpu100::DeviceBuffer<unsigned char> d_temp(std::max<size_t>(temp_bytes, 1));
    auto cub_sum = [&](cudaStream_t s) {
      CUDA_CHECK(
          cub::DeviceReduce::Sum(d_temp.data(), temp_bytes, d_in.data(), d_out.data(), n, s));
    };
    d_out.poison();
    cub_sum(nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const float cub_result = d_out.download()[0];
    const auto cub_time = ctx.bench(cub_sum);
    report.baseline("cub::DeviceReduce::Sum", cub_time, gpu100::gbps(bytes, cub_time.median_ms));
    char line[160];
    std::snprintf(line, sizeof line, "cub::DeviceReduce::Sum = %.9g, reference %.12g, rel err %.2e",
                  double(cub_result), ref, std::fabs(double(cub_result) - ref) / ref);
    report.note(line);

    const size_t smem = kBlock * sizeof(float);
    // Version 7's grid: as many blocks as the SMs hold at once (8 per SM where an SM runs 2048
    // threads), so every SM has loads in flight and no block waits for a second wave.
    const auto& dev = ctx.device();
    const unsigned resident_grid =
        unsigned(dev.sm_count) * unsigned(std::max(1, dev.max_threads_per_sm / int(kBlock)));
    const Version versions[] = {
        {"divergent", reduce_divergent, kBlock, 0, smem},
        {"strided_index", reduce_strided_index, kBlock, 0, smem},
        {"sequential", reduce_sequential, kBlock, 0, smem},
        {"add_on_load", reduce_add_on_load, 2 * kBlock, 0, smem},
        {"unroll_warp", reduce_unroll_warp, 2 * kBlock, 0, smem},
        {"full_unroll", reduce_full_unroll<kBlock>, 2 * kBlock, 0, 0},
        {"multi_element", reduce_multi_element<kBlock>, 2 * kBlock, resident_grid, 0},
    };

    gpu100::Table bounds{"rounding bound (worst case gamma_h, see gpu100::summation_error_bound)",
                         {"version", "passes", "h", "bound", "rel err"},
                         {}};
    for (const auto& v : versions) {
      if (!ctx.want(v.name)) continue;
      const auto passes = plan(v, n);
      for (const Pass& p : passes)
        if (int64_t(p.grid) > int64_t(ctx.device().max_grid_x))
          throw std::runtime_error(std::string(v.name) + ": grid larger than the device allows");
      const double h = additions_per_input(passes);
      const double tol = gpu100::summation_error_bound(h, n);
      float* result = nullptr;
      auto launch = [&](cudaStream_t s) {
        result = reduce(v, passes, d_in.data(), d_a.data(), d_b.data(), s);
      };
      d_a.poison();
      d_b.poison();
      const gpu100::EmuMetricsScope counted;  // under the emulator: what the checked run did
      launch(nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      const auto metrics = counted.take();
      float got = 0;
      CUDA_CHECK(cudaMemcpy(&got, result, sizeof(float), cudaMemcpyDeviceToHost));
      const auto check = gpu100::compare(
          &got, &ref, 1, exact ? gpu100::Tolerance::Exact() : gpu100::summation_tolerance(h, n));
      const auto t = ctx.bench(launch);
      report.add(v.name, t, gpu100::gbps(bytes, t.median_ms), check);
      if (metrics) report.metrics(v.name, *metrics);
      // The relative error itself (an exact check's rel_err is the fraction of unequal values).
      bounds.add_row({v.name, int(passes.size()), h, tol, std::fabs(double(got) - ref) / ref});
    }
    report.table(bounds);
  });
}
