// Day 027 - occupancy: how many warps an SM holds, what limits it, and what it buys
//
// An SM hides the latency of a load by switching to another warp. Occupancy is the number of
// warps resident on an SM as a fraction of the most it can hold (64 on an H100). Three things cap
// it: the blocks per SM, the registers per thread against the register file, and the shared
// memory per block. The runtime's occupancy calculator gives the theoretical value
// (cudaOccupancyMaxActiveBlocksPerMultiprocessor, cudaOccupancyMaxPotentialBlockSize), and
// __launch_bounds__(threads, min_blocks) makes the compiler cap the registers so that min_blocks
// blocks fit - at the risk of spills to local memory.
//
// The kernel: y = x + s(group) on uint32. Thread g owns K elements 1024 apart (each load is
// coalesced across the warp), and s is a weighted sum of all K, so every loaded value stays live
// in a register until s is known: K sets the registers per thread and the loads in flight. Few
// warps with many loads each can move as many bytes as many warps with one load each.
//
// Achieved occupancy is measured without a profiler: an instrumented copy of each kernel has lane
// 0 of every warp record clock64() at its start and its end, and %smid; achieved_occupancy()
// turns the records of its last timed run into resident warps averaged over each SM's busy time.
//
// Versions (blocks of 256 threads; rate = 8 bytes per element: 4 read, 4 written)
//   ilp1, ilp4, ilp8  K = 1, 4, 8: few registers, full occupancy.
//   ilp16             K = 16: more than 32 registers, so 6 blocks of 256 fit, not 8.
//   ilp16_bounded     the same code under __launch_bounds__(256, 8): 32 registers, 8 blocks.
//   ilp32             K = 32: 3 blocks of 256.
//   ilp64             K = 64: 2 blocks of 256; a block of 1024 threads cannot launch at all.
//   ilp64_bounded     __launch_bounds__(256, 3): 3 blocks, without spilling.
// Tables
//   register sweep    the versions by registers per thread: spills, blocks per SM, theoretical
//                     and achieved occupancy, GB/s, and the block size the calculator suggests.
//   block_sweep       ilp1, ilp16 and ilp64 at block sizes from 32 to 1024.
//
// Check: exact; the CPU computes y = x + s for the same groups (uint32 wraps the same way on both
// sides). Every version, every sweep point and the instrumented copies' output are checked, and
// a warp record the instrumented kernel did not write fails the day.
//
// Run:  build/bin/day027 [--n 33554439] [--kernel ilp1,ilp16_bounded,block_sweep] [--json f]
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kTile = 1024;          // a thread's K elements are kTile apart
constexpr int kVersionBlock = 256;   // block size of the main versions (and the bounded ones)
constexpr unsigned kMaxSmId = 1024;  // more than any %smid seen so far

// ---- CPU reference ------------------------------------------------------------------------------
std::vector<uint32_t> reference(const std::vector<uint32_t>& x, int k) {
  const int64_t n = int64_t(x.size());
  std::vector<uint32_t> y(x.size());
  const int64_t tile_elems = int64_t(kTile) * k;
  for (int64_t t0 = 0; t0 < n; t0 += tile_elems) {
    for (int64_t c = 0; c < kTile; ++c) {
      uint32_t s = 0;
      for (int j = 0; j < k; ++j) {
        const int64_t i = t0 + c + int64_t(j) * kTile;
        if (i < n) s += x[size_t(i)] * (2u * uint32_t(j) + 1u);
      }
      for (int j = 0; j < k; ++j) {
        const int64_t i = t0 + c + int64_t(j) * kTile;
        if (i < n) y[size_t(i)] = x[size_t(i)] + s;
      }
    }
  }
  return y;
}

// The reference of one K at a time: the checks ask for one K after another, so the host holds
// 3 arrays of n, not one per K.
class References {
 public:
  explicit References(const std::vector<uint32_t>& x) : x_(x) {}
  const std::vector<uint32_t>& of(int k) {
    if (k != k_) {
      y_ = reference(x_, k);
      k_ = k;
    }
    return y_;
  }

 private:
  const std::vector<uint32_t>& x_;
  int k_ = 0;
  std::vector<uint32_t> y_;
};

// ---- kernels ------------------------------------------------------------------------------------
// Where the instrumented kernels record each warp's life (indexed by global warp number).
struct WarpLife {
  unsigned long long* start;
  unsigned long long* end;
  unsigned* sm;
};

// The warp's number in the grid (block sizes are multiples of 32). 32 bits hold it: n <= 2^32
// elements make at most 2^32 threads, 2^27 warps; blockIdx.x * blockDim.x could overflow, this
// cannot.
__device__ __forceinline__ unsigned warp_number() {
  return blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
}

__device__ __forceinline__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// Thread g: tile g / kTile, column g % kTile; its K elements are
// tile * kTile * K + column + j * kTile for j < K. Block sizes are multiples of 32, so a warp's
// 32 threads are 32 neighbouring columns of one tile: every load and store of the warp covers
// 128 contiguous bytes.
template <int K, bool kInstrument>
__device__ __forceinline__ void group_sum(const uint32_t* __restrict__ x, uint32_t* __restrict__ y,
                                          int64_t n, const WarpLife& life) {
  const int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  // Instrumentation must not cost registers, or the instrumented copy would fit fewer blocks
  // per SM than the kernel it measures: the warp number is recomputed at the end rather than
  // kept live. Written this way the copies round to the same register allocation as the plain
  // kernels (CUDA 13.0, sm_80 and sm_90: ptxas allocates registers in steps of 8 per thread);
  // main() notes it if a compiler ever makes them fit a different number of blocks.
  if (kInstrument && threadIdx.x % 32 == 0) life.start[g / 32] = clock64();

  const int64_t base = (g / kTile) * (int64_t(kTile) * K) + g % kTile;
  uint32_t v[K];
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const int64_t i = base + int64_t(j) * kTile;
    v[j] = i < n ? x[i] : 0u;
  }
  // A weighted sum (weights 2j + 1) so that no two inputs can be swapped unnoticed. y = v + s,
  // not v ^ s: for K = 1, s = v and v ^ v = 0, so the compiler dropped the load and the kernel
  // wrote zeros, and passed its check (the ptx test now requires ld.global in every version).
  uint32_t s = 0;
#pragma unroll
  for (int j = 0; j < K; ++j) s += v[j] * (2u * j + 1u);
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const int64_t i = base + int64_t(j) * kTile;
    if (i < n) y[i] = v[j] + s;
  }

  if (kInstrument && threadIdx.x % 32 == 0) {
    const unsigned warp = warp_number();
    life.end[warp] = clock64();
    life.sm[warp] = sm_id();
  }
}

template <int K, bool kInstrument>
__global__ void ilp(const uint32_t* __restrict__ x, uint32_t* __restrict__ y, int64_t n,
                    WarpLife life) {
  group_sum<K, kInstrument>(x, y, n, life);
}

// The same code, promised to run in blocks of at most kVersionBlock threads with kMinBlocks of
// them on an SM: the compiler caps the registers at 65536 / (kVersionBlock * kMinBlocks).
template <int K, int kMinBlocks, bool kInstrument>
__global__ void __launch_bounds__(kVersionBlock, kMinBlocks)
    ilp_bounded(const uint32_t* __restrict__ x, uint32_t* __restrict__ y, int64_t n,
                WarpLife life) {
  group_sum<K, kInstrument>(x, y, n, life);
}

// ---- launchers ----------------------------------------------------------------------------------
using Kernel = void (*)(const uint32_t*, uint32_t*, int64_t, WarpLife);

struct Version {
  const char* name;
  int k;
  Kernel plain, instrumented;
  bool in_sweep;  // block sizes above 256 are outside the bounded kernels' promise
};
const Version kVersions[] = {
    {"ilp1", 1, ilp<1, false>, ilp<1, true>, true},
    {"ilp4", 4, ilp<4, false>, ilp<4, true>, false},
    {"ilp8", 8, ilp<8, false>, ilp<8, true>, false},
    {"ilp16", 16, ilp<16, false>, ilp<16, true>, true},
    {"ilp16_bounded", 16, ilp_bounded<16, 8, false>, ilp_bounded<16, 8, true>, false},
    {"ilp32", 32, ilp<32, false>, ilp<32, true>, false},
    {"ilp64", 64, ilp<64, false>, ilp<64, true>, true},
    {"ilp64_bounded", 64, ilp_bounded<64, 3, false>, ilp_bounded<64, 3, true>, false},
};

// --kernel: the versions, then the sweep.
std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const Version& v : kVersions) names.emplace_back(v.name);
  names.emplace_back("block_sweep");
  return names;
}

// Threads the kernel needs: kTile per tile of kTile * K elements.
int64_t threads_needed(int64_t n, int k) {
  return gpu100::ceil_div<int64_t>(n, int64_t(kTile) * k) * kTile;
}
unsigned grid_of(int64_t n, int k, int block) {
  return unsigned(gpu100::ceil_div<int64_t>(threads_needed(n, k), block));
}

void launch(Kernel kernel, unsigned grid, int block, const uint32_t* x, uint32_t* y, int64_t n,
            const WarpLife& life, cudaStream_t s) {
  kernel<<<grid, block, 0, s>>>(x, y, n, life);
  LAUNCH_CHECK();
}

// What the instrumented kernel recorded of each warp: clock64 at its start and end, its SM.
struct WarpRecords {
  std::vector<unsigned long long> start, end;
  std::vector<unsigned> sm;
};

// The device side of a run: x, y and the instrumented kernels' warp records.
struct Buffers {
  Buffers(const std::vector<uint32_t>& host_x, size_t records)
      : x(host_x), y(host_x.size()), start(records), end(records), sm(records) {}
  WarpLife life() { return {start.data(), end.data(), sm.data()}; }
  WarpRecords records(size_t warps) const {
    WarpRecords r{std::vector<unsigned long long>(warps), std::vector<unsigned long long>(warps),
                  std::vector<unsigned>(warps)};
    start.download(r.start.data(), warps);
    end.download(r.end.data(), warps);
    sm.download(r.sm.data(), warps);
    return r;
  }
  gpu100::DeviceBuffer<uint32_t> x, y;
  gpu100::DeviceBuffer<unsigned long long> start, end;
  gpu100::DeviceBuffer<unsigned> sm;
};

// ---- analysis -----------------------------------------------------------------------------------
int registers(Kernel kernel) {
  cudaFuncAttributes a{};
  CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  return a.numRegs;
}
int blocks_per_sm(Kernel kernel, int block) {
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block, 0));
  return blocks;
}
double theoretical_pct(Kernel kernel, int block, int max_threads_per_sm) {
  return 100.0 * blocks_per_sm(kernel, block) * block / max_threads_per_sm;
}
// The instrumented copy measures the plain kernel only while both fit as many blocks per SM.
bool same_fit(const Version& v, int block) {
  return blocks_per_sm(v.instrumented, block) == blocks_per_sm(v.plain, block);
}

struct Achieved {
  double pct = 0;
  gpu100::CheckResult check;  // unchecked when every record is valid; a failure when one is not
};

// Per SM, the sum of the warps' lifetimes divided by the SM's busy span (first start to last
// end, one SM's clock) is the time-averaged number of resident warps; summed over SMs and divided
// by the total span times the warps an SM holds, it is the achieved occupancy, averaged like
// Nsight Compute's sm__warps_active.avg.pct_of_peak_sustained_active: over the cycles each SM is
// busy. The drain at the end of an SM's work lowers it; an SM idle while the others finish the
// last partial wave does not (that tail shows in the GB/s).
Achieved achieved_occupancy(const WarpRecords& r, int max_warps_per_sm) {
  std::vector<unsigned long long> first(kMaxSmId, ~0ull), last(kMaxSmId, 0);
  std::vector<double> busy(kMaxSmId, 0.0);
  for (size_t w = 0; w < r.sm.size(); ++w) {
    // A record the kernel did not write (0xFF.. poison) or an id beyond the table: the
    // measurement is invalid, which the check reports.
    if (r.sm[w] >= kMaxSmId || r.end[w] < r.start[w]) {
      Achieved bad;
      bad.check.checked = true;
      bad.check.tolerance = "warp record";
      bad.check.count = int64_t(r.sm.size());
      bad.check.mismatches = 1;
      bad.check.worst_index = int64_t(w);
      return bad;
    }
    first[r.sm[w]] = std::min(first[r.sm[w]], r.start[w]);
    last[r.sm[w]] = std::max(last[r.sm[w]], r.end[w]);
    busy[r.sm[w]] += double(r.end[w] - r.start[w]);
  }
  double lifetime = 0, span = 0;
  for (unsigned s = 0; s < kMaxSmId; ++s) {
    if (last[s] <= first[s]) continue;  // no warp ran here (or one of zero length)
    lifetime += busy[s];
    span += double(last[s] - first[s]);
  }
  return {span > 0 ? 100.0 * lifetime / (span * max_warps_per_sm) : 0.0, {}};
}

// The plain kernel of v in blocks of `block`, its y checked; rate 8 bytes per element.
gpu100::Measure plain_run(Buffers& b, References& ref, std::string name, const Version& v,
                          int block, gpu100::Role role) {
  const int64_t n = int64_t(b.x.size());
  return {.name = std::move(name),
          .launch =
              [&b, n, kernel = v.plain, grid = grid_of(n, v.k, block), block](cudaStream_t s) {
                launch(kernel, grid, block, b.x.data(), b.y.data(), n, {}, s);
              },
          .reset = [&b] { b.y.poison(); },
          .check = [&b, &ref, k = v.k] { return gpu100::compare_exact(b.y.download(), ref.of(k)); },
          .work = 8.0 * double(n),
          .role = role};
}

// The instrumented copy, run and timed as the plain kernel is (warm-up, L2 flushed before every
// timed run: a single cold launch would find part of x in L2 and the TLBs cold), and the
// occupancy its warps recorded in the last timed run. With check_output its y is checked too
// (instrumentation must not change the result).
Achieved instrumented_run(gpu100::Context& ctx, Buffers& b, References& ref, const Version& v,
                          int block, bool check_output) {
  const int64_t n = int64_t(b.x.size());
  const unsigned grid = grid_of(n, v.k, block);
  gpu100::Measure m = plain_run(b, ref, fmt::format("{} instrumented, block {}", v.name, block),
                                v, block, gpu100::Role::point);
  m.launch = [&b, n, kernel = v.instrumented, grid, block](cudaStream_t s) {
    launch(kernel, grid, block, b.x.data(), b.y.data(), n, b.life(), s);
  };
  // Poisoned records: start = ~0 and end = 0 make end < start and smid = ~0 is out of range, so
  // a record no run wrote cannot pass for one.
  m.reset = [&b] {
    b.y.poison();
    b.sm.poison();
    b.start.poison();
    b.end.zero();
  };
  if (!check_output) m.check = nullptr;
  const gpu100::Measured r = ctx.measure(m);

  Achieved a = achieved_occupancy(b.records(size_t(grid) * size_t(block) / 32),
                                  ctx.device().max_threads_per_sm / 32);
  a.check = gpu100::combine(r.check, a.check);
  if (!same_fit(v, block))
    ctx.report().note(fmt::format("{}, block {}: the instrumented copy ({} registers) fits a "
                                  "different number of blocks per SM than the plain kernel; its "
                                  "achieved occupancy is its own",
                                  v.name, block, registers(v.instrumented)));
  return a;
}

// One row of the register sweep: a version at kVersionBlock threads.
struct RegisterRow {
  const Version* v;
  double achieved_pct, gbps;
};

// The versions sorted by registers per thread, so that the table (and its plot) reads as
// occupancy and bandwidth against register pressure.
gpu100::Table register_table(std::vector<RegisterRow> rows, int max_threads_per_sm,
                             double copy_gbps) {
  gpu100::Table t{
      fmt::format("register sweep: the versions at {} threads per block (occupancy API and "
                  "measured)",
                  kVersionBlock),
      {"registers/thread", "version", "local bytes/thread", "blocks/SM",
       "% theoretical occupancy", "% achieved occupancy", "GB/s", "% of copy",
       "suggested threads/block (MaxPotentialBlockSize)", "% theoretical at suggested"},
      {}};
  std::stable_sort(rows.begin(), rows.end(), [](const RegisterRow& a, const RegisterRow& b) {
    return registers(a.v->plain) < registers(b.v->plain);
  });
  for (const RegisterRow& r : rows) {
    cudaFuncAttributes a{};
    CUDA_CHECK(cudaFuncGetAttributes(&a, r.v->plain));
    int min_grid = 0, suggested = 0;
    CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &suggested, r.v->plain, 0, 0));
    t.add_row({a.numRegs, r.v->name, fmt::format("{}", a.localSizeBytes),
               blocks_per_sm(r.v->plain, kVersionBlock),
               theoretical_pct(r.v->plain, kVersionBlock, max_threads_per_sm), r.achieved_pct,
               r.gbps, 100.0 * r.gbps / copy_gbps, suggested,
               theoretical_pct(r.v->plain, suggested, max_threads_per_sm)});
  }
  return t;
}

// The block sizes of the sweep, and the largest block both copies of a version can launch with.
std::vector<int> sweep_blocks(bool quick) {
  return quick ? std::vector<int>{32, 96, 256, 1024}
               : std::vector<int>{32, 64, 96, 128, 192, 256, 384, 512, 640, 768, 1024};
}
bool launchable(const Version& v, int block) {
  cudaFuncAttributes plain{}, instr{};
  CUDA_CHECK(cudaFuncGetAttributes(&plain, v.plain));
  CUDA_CHECK(cudaFuncGetAttributes(&instr, v.instrumented));
  return block <= std::min(plain.maxThreadsPerBlock, instr.maxThreadsPerBlock) &&
         blocks_per_sm(v.plain, block) > 0;
}

gpu100::Table block_table(const Version& v) {
  return {fmt::format("block sweep: {} ({} registers/thread)", v.name, registers(v.plain)),
          {"block (threads)", "blocks/SM", "% theoretical occupancy", "% achieved occupancy",
           "GB/s", "% of copy"},
          {}};
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "occupancy: the occupancy API, __launch_bounds__, register pressure, block sizes");
  int64_t n = (int64_t(1) << 25) + 7;
  // At most 2^32 elements: the warp records use 32-bit warp numbers (see warp_number).
  cli.size("n", n, 1'000'003, "number of uint32 elements", int64_t(1) << 32);
  cli.kernels(kernel_names());
  // x, y, and 20 bytes of warp records per 32 threads (K = 1 needs the most threads).
  auto max_warps = [&] { return threads_needed(n, 1) / 32 + kTile / 32; };
  cli.device_bytes(
      [&] { return 8.0 * double(n) + 20.0 * double(max_warps()) + double(1 << 20); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    const auto& dev = ctx.device();
    report.problem("n", double(n));
    report.unit("GB/s");
    report.limit("dram_gbps", dev.peak_dram_gbps(), "HBM peak");

    std::vector<uint32_t> x(static_cast<size_t>(n));
    {
      const auto r = gpu100::random_ints(size_t(n), ctx.seed(), 1, 0x3fffffff);
      for (size_t i = 0; i < x.size(); ++i) x[i] = uint32_t(r[i]);
    }
    References ref(x);
    Buffers b(x, size_t(max_warps()));
    const double copy_gbps = ctx.copy_baseline(size_t(n) * sizeof(uint32_t)).gbps;

    // ---- the versions, then the register sweep of their instrumented copies -----------------
    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions)
      runs.push_back(plain_run(b, ref, v.name, v, kVersionBlock, gpu100::Role::version));
    const auto measured = ctx.measure_all(runs);
    std::vector<RegisterRow> rows;
    gpu100::CheckResult instrumented_check;
    for (size_t i = 0; i < std::size(kVersions); ++i) {
      if (!measured[i].ran) continue;
      const Achieved a = instrumented_run(ctx, b, ref, kVersions[i], kVersionBlock, true);
      instrumented_check = gpu100::combine(instrumented_check, a.check);
      rows.push_back({&kVersions[i], a.pct, measured[i].rate});
    }
    if (!rows.empty()) {
      report.table(register_table(rows, dev.max_threads_per_sm, copy_gbps));
      report.add_check("instrumented copies", instrumented_check);
    }

    // ---- block-size sweep --------------------------------------------------------------------
    if (ctx.want("block_sweep")) {
      gpu100::CheckResult check;
      for (const Version& v : kVersions) {
        if (!v.in_sweep) continue;
        gpu100::Table t = block_table(v);
        for (int block : sweep_blocks(ctx.quick())) {
          // Too many registers for this block size: the launch would fail. A row of zeros says so.
          if (!launchable(v, block)) {
            t.add_row({block, 0, 0.0, 0.0, 0.0, 0.0});
            continue;
          }
          const auto r = ctx.measure(plain_run(b, ref, fmt::format("{} block {}", v.name, block),
                                               v, block, gpu100::Role::point));
          // The instrumented copy's output is checked in the main versions; here its records.
          const Achieved a = instrumented_run(ctx, b, ref, v, block, false);
          check = gpu100::combine(check, gpu100::combine(r.check, a.check));
          t.add_row({block, blocks_per_sm(v.plain, block),
                     theoretical_pct(v.plain, block, dev.max_threads_per_sm), a.pct, r.rate,
                     100.0 * r.rate / copy_gbps});
        }
        report.table(std::move(t));
      }
      report.add_check("block_sweep", check);
      report.note(
          "block sweep: a row of zeros is a block size the kernel cannot launch with "
          "(registers x threads exceed the SM's register file)");
    }
    report.note(fmt::format(
        "occupancy = resident warps / {} (the SM's limit); theoretical from "
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor, achieved from clock64 warp lifetimes of "
        "an instrumented copy (see the source)",
        dev.max_threads_per_sm / 32));
    report.note(
        "GB/s: 8 bytes per element (read + write); limit HBM peak; % of copy compares with "
        "the device-to-device copy of the same bytes in this run");
  });
}
