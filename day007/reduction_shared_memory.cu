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
// must return exactly the reference, and one lost or doubled element (>= 0.25) fails; so must
// the CUB baseline. Above 2^22 the fp32 sums round, and the tolerance is the classic worst-case
// bound gamma_h for the order each version adds in (see gpu100::summation_error_bound), printed
// per version in the "rounding bound" table.
//
// Run:  build/bin/day007 [--n 134217733] [--kernel sequential,multi_element] [--json out.json]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cub/cub.cuh>
#include <iterator>
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

// ---- CPU reference ------------------------------------------------------------------------------
// k/4, k in 1..4: never zero, so every element counts; the sum (about 0.6 n) is far from zero, so
// a relative error means something; and small sums are exact (see Check above).
std::vector<float> quarters(size_t count, uint64_t seed) {
  const auto k = gpu100::random_ints(count, seed, 1, 4);
  std::vector<float> x(count);
  for (size_t i = 0; i < count; ++i) x[i] = 0.25f * float(k[i]);
  return x;
}

double sum_cpu(const std::vector<float>& x) {
  double s = 0;
  for (float v : x) s += double(v);
  return s;
}

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

// ---- launchers ----------------------------------------------------------------------------------
using ReduceKernel = void (*)(const float*, float*, int64_t);

struct Version {
  const char* name;
  ReduceKernel kernel;
  int64_t items_per_block;  // inputs one block covers per grid step (1 or 2 per thread)
  bool resident;            // the grid is capped at the blocks the SMs hold at once
  size_t dynamic_smem;
};
constexpr size_t kSmem = kBlock * sizeof(float);
const Version kVersions[] = {
    {"divergent", reduce_divergent, kBlock, false, kSmem},
    {"strided_index", reduce_strided_index, kBlock, false, kSmem},
    {"sequential", reduce_sequential, kBlock, false, kSmem},
    {"add_on_load", reduce_add_on_load, 2 * kBlock, false, kSmem},
    {"unroll_warp", reduce_unroll_warp, 2 * kBlock, false, kSmem},
    {"full_unroll", reduce_full_unroll<kBlock>, 2 * kBlock, false, 0},
    {"multi_element", reduce_multi_element<kBlock>, 2 * kBlock, true, 0},
};

// One launch of the kernel: len inputs -> grid partial sums.
struct Pass {
  int64_t len;
  unsigned grid;
};

// The passes that take n values down to one: each pass's partials are the next pass's input.
// A resident version's grid is at most resident_grid blocks.
std::vector<Pass> plan(const Version& v, int64_t n, unsigned resident_grid) {
  std::vector<Pass> passes;
  int64_t len = n;
  do {
    int64_t grid = gpu100::ceil_div<int64_t>(len, v.items_per_block);
    if (v.resident && grid > int64_t(resident_grid)) grid = resident_grid;
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

// ---- analysis: the rounding bound of each version's order of additions -----------------------
// h for a plan: per pass, the values one thread adds in registers (at most
// ceil(len / threads) + 1) and the log2(block) levels of the shared-memory tree.
double additions_per_input(const std::vector<Pass>& passes) {
  double h = 0;
  for (const Pass& p : passes)
    h += double(gpu100::ceil_div<int64_t>(p.len, int64_t(p.grid) * kBlock) + 1 + kLog2Block);
  return h;
}

// One version's plan and what its checked run returned, for the bounds table.
struct Run {
  std::vector<Pass> passes;
  double h = 0;
  float* result = nullptr;  // where the last launch left the sum
  float got = 0;            // the checked run's sum
};

gpu100::Table bounds_table(const std::vector<Run>& runs, double ref, int64_t n,
                           const gpu100::Context& ctx) {
  gpu100::Table t{"rounding bound (worst case gamma_h, see gpu100::summation_error_bound)",
                  {"version", "passes", "h", "bound", "rel err"},
                  {}};
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!ctx.want(kVersions[i].name)) continue;
    const Run& r = runs[i];
    // The relative error itself (an exact check's rel_err is the fraction of unequal values).
    t.add_row({kVersions[i].name, int(r.passes.size()), r.h, gpu100::summation_error_bound(r.h, n),
               std::fabs(double(r.got) - ref) / ref});
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("sum of n floats: the seven classic shared-memory tree reductions vs CUB");
  int64_t n = (int64_t(1) << 27) + 5;
  cli.size("n", n, 1'000'003, "number of elements");
  cli.kernels_of(kVersions);
  // The input, two scratch buffers of ceil(n / 256) partials, and CUB's few KB of temp storage.
  cli.device_bytes([&] { return 4.0 * double(n) * (1.0 + 2.0 / kBlock) + double(16 << 20); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    const auto& dev = ctx.device();
    report.unit("GB/s");
    report.limit("dram_gbps", dev.peak_dram_gbps(), "HBM peak");
    report.intensity(1.0 / 4.0);  // one add per 4-byte element

    const auto x = quarters(size_t(n), ctx.seed());
    const double ref = sum_cpu(x);
    const bool exact = n <= kExactMaxN;
    if (exact)
      report.note(
          "n <= 2^22: every partial sum of the quarter-valued inputs is exact in fp32, so "
          "each version must equal the reference exactly (\"bound\" below is what larger "
          "n allows)");
    gpu100::DeviceBuffer<float> d_in(x);
    const size_t partials = size_t(gpu100::ceil_div<int64_t>(n, kBlock));
    gpu100::DeviceBuffer<float> d_a(partials), d_b(partials), d_out(1);

    // Baseline: CUB's tuned two-kernel reduction on the same device array. Its temp storage is
    // allocated here, outside the timed region, like our scratch buffers.
    size_t temp_bytes = 0;
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, d_in.data(), d_out.data(), n));
    gpu100::DeviceBuffer<unsigned char> d_temp(std::max<size_t>(temp_bytes, 1));
    float cub_value = 0;
    std::vector<gpu100::Measure> measures{
        {.name = "cub::DeviceReduce::Sum",
         .launch =
             [&](cudaStream_t s) {
               CUDA_CHECK(cub::DeviceReduce::Sum(d_temp.data(), temp_bytes, d_in.data(),
                                                 d_out.data(), n, s));
             },
         .reset = [&] { d_out.poison(); },
         // Exact where every order of additions is (CUB's order is its own); unchecked beyond.
         .check =
             [&] {
               cub_value = d_out.download()[0];
               return exact ? gpu100::compare(&cub_value, &ref, 1, gpu100::Tolerance::Exact())
                            : gpu100::CheckResult{};
             },
         .work = 4.0 * double(n),
         .role = gpu100::Role::baseline}};

    // Version 7's grid: as many blocks as the SMs hold at once (8 per SM where an SM runs 2048
    // threads), so every SM has loads in flight and no block waits for a second wave.
    const unsigned resident_grid =
        unsigned(dev.sm_count) * unsigned(std::max(1, dev.max_threads_per_sm / int(kBlock)));
    std::vector<Run> runs(std::size(kVersions));
    for (size_t i = 0; i < runs.size(); ++i) {
      const Version& v = kVersions[i];
      Run& r = runs[i];
      r.passes = plan(v, n, resident_grid);
      for (const Pass& p : r.passes)
        if (ctx.want(v.name) && int64_t(p.grid) > int64_t(dev.max_grid_x))
          throw std::runtime_error(fmt::format("{}: grid larger than the device allows", v.name));
      r.h = additions_per_input(r.passes);
      measures.push_back(
          {.name = v.name,
           .launch =
               [&](cudaStream_t s) {
                 r.result = reduce(v, r.passes, d_in.data(), d_a.data(), d_b.data(), s);
               },
           .reset =
               [&] {
                 d_a.poison();
                 d_b.poison();
               },
           .check =
               [&] {
                 CUDA_CHECK(cudaMemcpy(&r.got, r.result, sizeof(float), cudaMemcpyDeviceToHost));
                 return gpu100::compare(
                     &r.got, &ref, 1,
                     exact ? gpu100::Tolerance::Exact() : gpu100::summation_tolerance(r.h, n));
               },
           .work = 4.0 * double(n)});
    }
    ctx.measure_all(measures);
    report.note(fmt::format("cub::DeviceReduce::Sum = {:.9g}, reference {:.12g}, rel err {:.2e}",
                            cub_value, ref, std::fabs(double(cub_value) - ref) / ref));
    report.table(bounds_table(runs, ref, n, ctx));
  });
}
