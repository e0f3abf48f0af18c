// Day 029 - histogram: the 256-bin histogram of n bytes
//
// A histogram is a reduction whose destination depends on the data: thread i adds one to bin
// in[i], and two threads that meet the same bin must not lose an update, so every version counts
// with atomics. How fast they go depends on the data as much as on the code: on uniform bytes the
// 256 bins share the updates evenly, while on a skewed input (most bytes one value, as in images
// with a flat background or text full of spaces) every atomic queues on the same address. The
// program therefore histograms both inputs in every run - uniform bytes and bytes of which --skew
// percent (default 90) are one value: rows "<version> uniform" and "<version> skewed" - and sweeps
// the skew in a table.
//
// The work is one byte read per element, so the rate is n bytes / time in GB/s, compared with the
// HBM peak and with a device-to-device copy measured in the same run ("% of copy").
//
// Versions (256 threads per block, 256 bins)
//   global_atomics     one thread per byte, atomicAdd on the bin in global memory. Every update
//                      is an L2 atomic; on the skewed input 90% of them hit one address and
//                      serialize in one L2 slice.
//   shared_privatized  each block counts into its own copy of the histogram in shared memory
//                      (atom.shared) and adds its non-zero bins to the global histogram at the
//                      end. Still one thread per byte (PMPP's first privatized kernel), so a block
//                      handles only 256 bytes, and the merge still costs a global atomic for each
//                      distinct value among them: on uniform input 256 (1 - (255/256)^256), about
//                      162, so only about a third of the global atomics go away. It pays off on
//                      skewed input, where a block's 256 bytes touch few bins.
//   coarsened          privatized, on a grid that just fills the GPU: each thread loads 16 bytes
//                      at once (ld.global.nc.v4) and strides over the input, so every block
//                      merges once per many thousands of bytes and each load instruction brings
//                      16 bytes in flight instead of 1.
//   aggregated         coarsened, plus run-length aggregation: a thread keeps the bin it saw last
//                      and a count, and issues one atomic per run of equal bytes instead of one per
//                      byte. On skewed input most of a thread's 16 bytes are the dominant value,
//                      so the atomics on the hot bin drop several-fold; on uniform input runs are
//                      rare and the extra compare costs a little.
//
// Check: bit-exact. Counts are integers, the CPU counts the same bytes, every bin must match. n is
// limited to 2^32 - 1 so that no count can overflow a 32-bit bin.
//
// Run:  build/bin/day029 [--n 134217731] [--skew 90] [--kernel coarsened,aggregated] [--json f]
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kBins = 256;
constexpr int kBlock = 256;
constexpr int kVectorBytes = 16;  // one uint4
constexpr int64_t kMaxN = (int64_t(1) << 32) - 1;  // every count fits in a 32-bit bin

// ---- CPU reference ------------------------------------------------------------------------------
// The input: n bytes of which about skew_pct percent are `dominant` and the rest uniform in 0..255
// (the dominant value among them too). skew 0 is the uniform input. Counter-based, so reproducible.
std::vector<uint8_t> make_input(size_t n, uint64_t seed, double skew_pct, uint8_t dominant) {
  std::vector<uint8_t> x(n);
  // r % 2^20 < threshold with probability skew_pct / 100 (to 1e-6).
  const uint64_t threshold = uint64_t(skew_pct / 100.0 * double(1 << 20) + 0.5);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = gpu100::mix64(seed * 0x9E3779B97F4A7C15ull + i);
    x[i] = (r & ((1u << 20) - 1)) < threshold ? dominant : uint8_t(r >> 56);
  }
  return x;
}

std::vector<unsigned> cpu_histogram(const std::vector<uint8_t>& x) {
  std::vector<unsigned> h(kBins, 0);
  for (uint8_t b : x) ++h[b];
  return h;
}

// ---- kernels ------------------------------------------------------------------------------------
// 1: global atomics.
// Grid-stride only so that any n fits the grid; with grid = ceil(n / 256) each thread handles one
// byte. The result of atomicAdd is unused, so ptxas turns it into a fire-and-forget RED.
__global__ void __launch_bounds__(kBlock)
    hist_global(const uint8_t* __restrict__ in, int64_t n, unsigned* __restrict__ hist) {
  const int64_t stride = int64_t(gridDim.x) * kBlock;
  for (int64_t i = int64_t(blockIdx.x) * kBlock + threadIdx.x; i < n; i += stride)
    atomicAdd(&hist[in[i]], 1u);
}

// 2-4: privatized in shared memory.
// How a thread adds bytes to its block's shared histogram: one atomic per byte, or one per run of
// equal bytes (aggregation). Runs carry over from one load to the next: which bytes are neighbours
// does not matter for correctness, only that every byte is counted once.
template <bool kAggregate>
struct BinAdder;

template <>
struct BinAdder<false> {
  unsigned* bins;
  __device__ __forceinline__ void add(unsigned b) { atomicAdd(&bins[b], 1u); }
  __device__ __forceinline__ void flush() {}
};

template <>
struct BinAdder<true> {
  unsigned* bins;
  unsigned bin = 0, count = 0;  // the current run; count 0 = no run yet
  __device__ __forceinline__ void add(unsigned b) {
    if (b == bin) {
      ++count;
    } else {
      if (count) atomicAdd(&bins[bin], count);
      bin = b;
      count = 1;
    }
  }
  __device__ __forceinline__ void flush() {
    if (count) atomicAdd(&bins[bin], count);
    count = 0;
  }
};

template <class Adder>
__device__ __forceinline__ void add_word(Adder& adder, unsigned w) {
#pragma unroll
  for (int k = 0; k < 4; ++k) adder.add((w >> (8 * k)) & 0xFFu);
}

// kVector: 16-byte loads (the input must be 16-byte aligned; the launcher checks), then the n % 16
// leftover bytes one at a time. Without it, one byte per thread per grid step.
template <bool kVector, bool kAggregate>
__global__ void __launch_bounds__(kBlock)
    hist_privatized(const uint8_t* __restrict__ in, int64_t n, unsigned* __restrict__ hist) {
  __shared__ unsigned bins[kBins];
  for (int b = threadIdx.x; b < kBins; b += kBlock) bins[b] = 0;
  __syncthreads();  // every bin is zero before any thread counts into it

  BinAdder<kAggregate> adder{bins};
  const int64_t stride = int64_t(gridDim.x) * kBlock;
  const int64_t tid = int64_t(blockIdx.x) * kBlock + threadIdx.x;
  int64_t scalar_begin = 0;
  if constexpr (kVector) {
    const int64_t n16 = n / kVectorBytes;
    const uint4* in16 = reinterpret_cast<const uint4*>(in);
    // Consecutive threads read consecutive 16-byte words: a warp reads 512 contiguous bytes.
    for (int64_t v = tid; v < n16; v += stride) {
      const uint4 q = in16[v];
      add_word(adder, q.x);
      add_word(adder, q.y);
      add_word(adder, q.z);
      add_word(adder, q.w);
    }
    scalar_begin = n16 * kVectorBytes;
  }
  for (int64_t i = scalar_begin + tid; i < n; i += stride) adder.add(in[i]);
  adder.flush();
  __syncthreads();  // every count of the block is in shared memory before the merge reads it

  // Bins the block never touched cost nothing; the others one global atomic each.
  for (int b = threadIdx.x; b < kBins; b += kBlock) {
    const unsigned c = bins[b];
    if (c) atomicAdd(&hist[b], c);
  }
}

// ---- launchers ----------------------------------------------------------------------------------
using HistKernel = void (*)(const uint8_t*, int64_t, unsigned*);

struct Version {
  const char* name;
  HistKernel kernel;
  bool coarse;  // a grid that fills the GPU once, 16 bytes per load; else one byte per thread
};
const Version kVersions[] = {
    {"global_atomics", hist_global, false},
    {"shared_privatized", hist_privatized<false, false>, false},
    {"coarsened", hist_privatized<true, false>, true},
    {"aggregated", hist_privatized<true, true>, true},
};

// One byte per thread (capped so gridDim.x stays legal; the kernels stride over the rest), or the
// resident grid, but no more blocks than there are 16-byte words to give them.
unsigned grid_of(const Version& v, int64_t n, int max_grid_x) {
  if (!v.coarse)
    return unsigned(std::min<int64_t>(gpu100::ceil_div<int64_t>(n, kBlock), max_grid_x));
  const int64_t useful = std::max<int64_t>(1, gpu100::ceil_div<int64_t>(n, kVectorBytes * kBlock));
  return unsigned(std::min<int64_t>(gpu100::resident_grid(v.kernel, kBlock), useful));
}

// Atomics add to what is there: the histogram starts from zero on every launch (timed with it).
void launch(const Version& v, unsigned grid, const uint8_t* in, int64_t n, unsigned* hist,
            cudaStream_t s) {
  if (v.coarse && !gpu100::is_aligned(in, kVectorBytes))
    throw std::invalid_argument("the 16-byte loads need a 16-byte aligned input");
  CUDA_CHECK(cudaMemsetAsync(hist, 0, kBins * sizeof(unsigned), s));
  v.kernel<<<grid, kBlock, 0, s>>>(in, n, hist);
  LAUNCH_CHECK();
}

// ---- analysis -----------------------------------------------------------------------------------
// The skew sweep: uniform and --skew always (they are the main table's two inputs), plus a few
// more points in the full run.
std::set<double> sweep_skews(double skew, bool quick) {
  std::set<double> skews = {0.0, skew};
  if (!quick)
    for (double s : {50.0, 90.0, 99.0}) skews.insert(s);
  return skews;
}

gpu100::Table sweep_table(const std::vector<const Version*>& selected) {
  gpu100::Table t{"GB/s vs skew (bytes read / time; copy = D2D cudaMemcpy of n bytes)",
                  {"dominant value %"},
                  {}};
  for (const Version* v : selected) t.columns.push_back(fmt::format("{} GB/s", v->name));
  t.columns.push_back("best % of copy");
  return t;
}

// One skew's row: the GB/s of the first `versions` runs, one per version (FAIL where its check
// failed), then the best as % of copy.
std::vector<gpu100::Cell> sweep_row(double skew, const std::vector<gpu100::Measured>& rs,
                                    size_t versions, double copy_gbps) {
  std::vector<gpu100::Cell> row = {skew};
  double best = 0;
  for (size_t i = 0; i < versions; ++i) {
    const gpu100::Measured& r = rs[i];
    row.push_back(r.check.pass ? gpu100::Cell(r.rate) : gpu100::Cell("FAIL"));
    best = std::max(best, r.check.pass ? r.rate : 0.0);
  }
  row.push_back(copy_gbps > 0 ? 100.0 * best / copy_gbps : 0.0);
  return row;
}

// Version v on the input in d_in, its histogram checked exactly against the CPU's.
gpu100::Measure measure_histogram(const Version& v, std::string name, gpu100::Role role,
                                  const gpu100::DeviceBuffer<uint8_t>& d_in,
                                  gpu100::DeviceBuffer<unsigned>& d_hist, int64_t n,
                                  const std::vector<unsigned>& ref, int max_grid_x) {
  return {.name = std::move(name),
          .kernel = v.name,
          .launch = [&v, &d_in, &d_hist, n, grid = grid_of(v, n, max_grid_x)](
                        cudaStream_t st) { launch(v, grid, d_in.data(), n, d_hist.data(), st); },
          // The launch's own memset overwrites the poison; it still catches a launch that
          // forgets the memset (its counts would start from 0xFFFFFFFF).
          .reset = [&d_hist] { d_hist.poison(); },
          .check = [&d_hist, &ref] { return gpu100::compare_exact(d_hist.download(), ref); },
          .work = double(n),
          .role = role};
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("256-bin byte histogram: global atomics, shared privatization, coarsening, "
                  "aggregation; uniform and skewed inputs");
  int64_t n = (int64_t(1) << 27) + 3;
  double skew = 90;
  cli.size("n", n, 1'000'003, "number of bytes", kMaxN);
  cli.option("skew", skew, "percent of the skewed input that is one value", 0, 100);
  cli.kernels_of(kVersions);
  cli.device_bytes([&] { return double(n) + kBins * sizeof(unsigned); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.problem("n", double(n));
    report.problem("bins", double(kBins));
    report.problem("skew_pct", skew);
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    report.baseline_as_percent();

    gpu100::DeviceBuffer<uint8_t> d_in{size_t(n)};
    gpu100::DeviceBuffer<unsigned> d_hist(kBins);
    // A copy of n bytes moves 2n (read + write) at the rate the memory system sustains: the
    // practical ceiling of a kernel that streams its input once.
    const double copy_gbps = ctx.copy_baseline(size_t(n)).gbps;

    const uint8_t dominant = uint8_t(1 + gpu100::mix64(ctx.seed() ^ 0xD0D0u) % 255);
    report.note(fmt::format("skewed input: {:g}% of the bytes are {}, the rest uniform; uniform "
                            "input: every byte uniform in 0..255",
                            skew, unsigned(dominant)));
    report.note("each timed launch includes the cudaMemsetAsync that zeroes the 1 KiB histogram");

    std::vector<const Version*> selected;
    for (const Version& v : kVersions)
      if (ctx.want(v.name)) selected.push_back(&v);
    gpu100::Table sweep = sweep_table(selected);
    gpu100::CheckResult sweep_check;  // unchecked until the first point is combined into it
    for (double s : sweep_skews(skew, ctx.quick())) {
      const auto input = make_input(size_t(n), ctx.seed(), s, dominant);
      const auto ref = cpu_histogram(input);
      d_in.upload(input);
      // The main table's rows are the points of its two inputs; the others are sweep points.
      auto run = [&](const Version& v, std::string name, gpu100::Role role) {
        return measure_histogram(v, std::move(name), role, d_in, d_hist, n, ref,
                                 ctx.device().max_grid_x);
      };
      std::vector<gpu100::Measure> runs;
      for (const Version* v : selected) {
        if (s == 0.0)
          runs.push_back(run(*v, fmt::format("{} uniform", v->name), gpu100::Role::version));
        else if (s == skew)
          runs.push_back(run(*v, fmt::format("{} skewed", v->name), gpu100::Role::version));
        else
          runs.push_back(run(*v, v->name, gpu100::Role::point));
      }
      // --skew 0: the skewed rows are the uniform input too.
      if (s == 0.0 && skew == 0.0)
        for (const Version* v : selected)
          runs.push_back(run(*v, fmt::format("{} skewed", v->name), gpu100::Role::version));
      const auto rs = ctx.measure_all(runs);
      for (const auto& r : rs) sweep_check = gpu100::combine(sweep_check, r.check);
      sweep.add_row(sweep_row(s, rs, selected.size(), copy_gbps));
    }
    report.add_check("skew sweep (every point, every version)", sweep_check);
    report.table(std::move(sweep));
  });
}
