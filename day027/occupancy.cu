// Day 027 - occupancy: how many warps an SM holds, what limits it, and what it buys
//
// An SM hides the latency of a load by switching to another warp. Occupancy is the number of
// warps resident on an SM as a fraction of the most it can hold (64 on an H100: 2048 threads).
// Three things cap it: the block size against the limit on blocks per SM (32 blocks of 32
// threads are only 1024 threads), the registers per thread against the register file (65536 per
// SM: above 32 registers a thread, 2048 threads no longer fit), and shared memory per block. The
// CUDA occupancy calculator gives the theoretical value for a kernel and a block size:
// cudaOccupancyMaxActiveBlocksPerMultiprocessor (blocks per SM) and
// cudaOccupancyMaxPotentialBlockSize (the block size that maximizes it); cudaFuncGetAttributes
// reports the registers the compiler chose. __launch_bounds__(threads, min_blocks) makes the
// compiler fit min_blocks blocks of `threads` threads on an SM, capping its registers - at the
// risk of spills to local memory when the cap is below what the code keeps live.
//
// The kernel: y = x + s(group) on uint32. Thread g owns K elements, 1024 apart (so each of its
// K loads is coalesced across the warp), and s is a weighted sum of all K: every one of the K
// loaded values stays live in a register until s is known. K is a template parameter: it sets
// the registers per thread (register pressure) and the loads each thread has in flight at once.
// That is the trade-off the day measures: few warps with many loads each (high K, low
// occupancy) can move as many bytes as many warps with one load each (K = 1, full occupancy).
//
// Achieved occupancy (measured, not from a profiler): an instrumented copy of each kernel has
// lane 0 of every warp store clock64() when the warp starts and when it ends, with %smid. Per SM,
// the sum of the warps' lifetimes divided by the SM's busy span (first start to last end, same
// SM clock) is the time-averaged number of resident warps; summed over SMs and divided by the
// total span times the maximum warps per SM, it is the achieved occupancy, averaged like Nsight
// Compute's sm__warps_active.avg.pct_of_peak_sustained_active: over the cycles each SM is busy.
// So the drain at the end of an SM's work (its last blocks finishing with no new ones to
// start) lowers it, but an SM that sits idle while other SMs finish the last partial wave does
// not: that whole-GPU tail shows in the GB/s, not here. A record covers the warp from its first
// clock read to its last, a few tens of cycles short of its whole residency, so very short
// warps (ilp1) read a few percent low. The instrumented copy is timed like the plain kernel
// (warm-up, L2 flushed before every run) and the records of its last run are used, so both
// columns describe the same conditions. The GB/s come from the plain kernel.
//
// Versions (block of 256 threads; rate = 8 bytes per element: 4 read, 4 written)
//   ilp1            K = 1: one load per thread, about 12 registers: full occupancy.
//   ilp4, ilp8      K = 4 and 8: 16 and 24 registers, still full occupancy.
//   ilp16           K = 16: about 37 registers, so 6 blocks of 256 fit, not 8 (75%).
//   ilp16_bounded   the same code under __launch_bounds__(256, 8): the compiler fits it in 32
//                   registers without spilling (CUDA 13.0), so 8 blocks fit: 100%.
//   ilp32           K = 32: about 71 registers: 3 blocks of 256 (37.5%).
//   ilp64           K = 64: about 92 registers: 2 blocks of 256 (25%), and a block of 1024
//                   threads cannot launch at all.
//   ilp64_bounded   __launch_bounds__(256, 3): at most 80 registers, 3 blocks (37.5%), no spill.
//   Register counts above are ptxas's for sm_90; the program prints the real ones. (Registers
//   are allocated in steps of 8 per thread, 256 per warp: 37 registers cost 40.)
// Tables
//   register sweep  the versions sorted by registers per thread: local memory (spills), blocks
//                   per SM and theoretical occupancy at 256 threads, the achieved occupancy, the
//                   GB/s of the main table, and the block size that
//                   cudaOccupancyMaxPotentialBlockSize suggests.
//   block_sweep     for ilp1, ilp16 and ilp64: block size 32..1024 against blocks per SM,
//                   theoretical and achieved occupancy, GB/s and % of the copy.
//
// Check: exact; the CPU computes y = x + s for the same groups (uint32 arithmetic wraps the
// same way on both sides). Every version and every sweep point is checked.
//
// What to expect (unmeasured here): achieved follows theoretical from below (block launch
// and the drain of each SM's last blocks cost resident warps, most for the short ilp1 warps;
// the whole-GPU tail of the last partial wave costs GB/s instead, see above), and
// the GB/s of high-K versions need not fall with occupancy: bytes in flight per SM, not warps,
// is what a memory-bound kernel needs (Little's law).
//
// Run:  build/bin/day027 [--n 33554439] [--kernel ilp1,ilp16_bounded,block_sweep] [--json f]
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kTile = 1024;          // a thread's K elements are kTile apart
constexpr int kVersionBlock = 256;   // block size of the main versions (and the bounded ones)
constexpr unsigned kMaxSmId = 1024;  // more than any %smid seen so far

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

using Kernel = void (*)(const uint32_t*, uint32_t*, int64_t, WarpLife);

// ---- host side ------------------------------------------------------------------------------

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

// Threads the kernel needs: kTile per tile of kTile * K elements.
int64_t threads_needed(int64_t n, int k) {
  return gpu100::ceil_div<int64_t>(n, int64_t(kTile) * k) * kTile;
}

struct Version {
  const char* name;
  int k;
  Kernel plain, instrumented;
  bool in_sweep;  // block sizes above 256 are outside the bounded kernels' promise
};

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "occupancy: the occupancy API, __launch_bounds__, register pressure, block sizes");
  int64_t n = (int64_t(1) << 25) + 7;
  // At most 2^32 elements: the warp records use 32-bit warp numbers (see warp_number).
  cli.size("n", n, 1'000'003, "number of uint32 elements", int64_t(1) << 32);
  cli.kernels({"ilp1", "ilp4", "ilp8", "ilp16", "ilp16_bounded", "ilp32", "ilp64", "ilp64_bounded",
               "block_sweep"});
  // x, y, and 20 bytes of warp records per 32 threads (K = 1 needs the most threads).
  auto max_warps = [&] { return threads_needed(n, 1) / 32 + kTile / 32; };
  cli.device_bytes([&] { return 8.0 * double(n) + 20.0 * double(max_warps()) + double(1 << 20); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    const auto& dev = ctx.device();
    report.problem("n", double(n));
    report.unit("GB/s");
    report.limit("dram_gbps", dev.peak_dram_gbps(), "HBM peak");
    const int max_warps_per_sm = dev.max_threads_per_sm / 32;

    std::vector<uint32_t> x(static_cast<size_t>(n));
    {
      const auto r = gpu100::random_ints(size_t(n), ctx.seed(), 1, 0x3fffffff);
      for (size_t i = 0; i < x.size(); ++i) x[i] = uint32_t(r[i]);
    }
    // The reference of the last K asked for (the versions and the sweep ask for one K after
    // another, so one cached vector is enough and the host holds 3 arrays of n, not one per K).
    int ref_k = 0;
    std::vector<uint32_t> ref;
    auto ref_for = [&](int k) -> const std::vector<uint32_t>& {
      if (k != ref_k) {
        ref = reference(x, k);
        ref_k = k;
      }
      return ref;
    };

    gpu100::DeviceBuffer<uint32_t> d_x(x), d_y(static_cast<size_t>(n));
    const size_t record_count = size_t(max_warps());
    gpu100::DeviceBuffer<unsigned long long> d_start(record_count), d_end(record_count);
    gpu100::DeviceBuffer<unsigned> d_sm(record_count);
    const WarpLife life{d_start.data(), d_end.data(), d_sm.data()};
    const double bytes = 8.0 * double(n);
    const double copy_gbps = ctx.copy_baseline(size_t(n) * sizeof(uint32_t)).gbps;

    auto launcher = [&](Kernel kernel, int k, int block, bool instrumented) {
      const unsigned grid = unsigned(gpu100::ceil_div<int64_t>(threads_needed(n, k), block));
      return [=, &d_x, &d_y](cudaStream_t s) {
        kernel<<<grid, block, 0, s>>>(d_x.data(), d_y.data(), n,
                                      instrumented ? life : WarpLife{nullptr, nullptr, nullptr});
        LAUNCH_CHECK();
      };
    };
    auto check_y = [&](int k) { return gpu100::compare_exact(d_y.download(), ref_for(k)); };
    auto blocks_per_sm = [&](Kernel kernel, int block) {
      int blocks = 0;
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block, 0));
      return blocks;
    };
    auto theoretical_pct = [&](Kernel kernel, int block) {
      return 100.0 * blocks_per_sm(kernel, block) * block / dev.max_threads_per_sm;
    };

    // Times the instrumented kernel like the plain one and turns the warp records of its last
    // run into achieved occupancy (%).
    // Missing records fail `check`; with check_output, so does a wrong y (instrumentation must
    // not change the result).
    auto merge = [](gpu100::CheckResult& into, const gpu100::CheckResult& c) {
      into = into.checked ? gpu100::combine(into, c) : c;
    };
    auto achieved = [&](Kernel kernel, int k, int block, bool check_output,
                        gpu100::CheckResult& check) {
      const unsigned grid = unsigned(gpu100::ceil_div<int64_t>(threads_needed(n, k), block));
      const size_t warps = size_t(grid) * size_t(block) / 32;
      // Poisoned records: start = ~0 and end = 0 make end < start, and smid = ~0 is out of range,
      // so a record no run wrote cannot pass for one (stale records of an earlier launch could).
      d_y.poison();
      d_sm.poison();
      d_start.poison();
      d_end.zero();
      // Run it the way the GB/s are measured (warm-up, L2 flushed before every timed run) and
      // keep the records of the last run: a single cold launch right after the memsets would
      // find part of x in L2 and the TLBs cold, so its warps would live differently.
      ctx.bench(launcher(kernel, k, block, true));
      if (check_output) merge(check, check_y(k));
      std::vector<unsigned long long> start(warps), end(warps);
      std::vector<unsigned> sm(warps);
      d_start.download(start.data(), warps);
      d_end.download(end.data(), warps);
      d_sm.download(sm.data(), warps);
      std::vector<unsigned long long> first(kMaxSmId, ~0ull), last(kMaxSmId, 0);
      std::vector<double> busy(kMaxSmId, 0.0);
      for (size_t w = 0; w < warps; ++w) {
        // A record the kernel did not write (0xFF.. poison) or an id beyond the table: the
        // measurement is invalid, which the check reports.
        if (sm[w] >= kMaxSmId || end[w] < start[w]) {
          gpu100::CheckResult bad;
          bad.checked = true;
          bad.tolerance = "warp record";
          bad.count = int64_t(warps);
          bad.mismatches = 1;
          bad.worst_index = int64_t(w);
          merge(check, bad);
          return 0.0;
        }
        first[sm[w]] = std::min(first[sm[w]], start[w]);
        last[sm[w]] = std::max(last[sm[w]], end[w]);
        busy[sm[w]] += double(end[w] - start[w]);
      }
      double lifetime = 0, span = 0;
      for (unsigned s = 0; s < kMaxSmId; ++s) {
        if (last[s] <= first[s]) continue;  // no warp ran here (or one of zero length)
        lifetime += busy[s];
        span += double(last[s] - first[s]);
      }
      return span > 0 ? 100.0 * lifetime / (span * max_warps_per_sm) : 0.0;
    };

    const Version versions[] = {
        {"ilp1", 1, ilp<1, false>, ilp<1, true>, true},
        {"ilp4", 4, ilp<4, false>, ilp<4, true>, false},
        {"ilp8", 8, ilp<8, false>, ilp<8, true>, false},
        {"ilp16", 16, ilp<16, false>, ilp<16, true>, true},
        {"ilp16_bounded", 16, ilp_bounded<16, 8, false>, ilp_bounded<16, 8, true>, false},
        {"ilp32", 32, ilp<32, false>, ilp<32, true>, false},
        {"ilp64", 64, ilp<64, false>, ilp<64, true>, true},
        {"ilp64_bounded", 64, ilp_bounded<64, 3, false>, ilp_bounded<64, 3, true>, false},
    };

    // ---- main versions and the register sweep (the occupancy API at 256 threads) ------------
    // One row per version, sorted by registers per thread so that the table (and its plot) reads
    // as occupancy and bandwidth against register pressure.
    std::vector<std::pair<int, std::vector<gpu100::Cell>>> register_rows;
    gpu100::CheckResult instrumented_check;
    for (const auto& v : versions) {
      if (!ctx.want(v.name)) continue;
      ctx.run_version(
          v.name, launcher(v.plain, v.k, kVersionBlock, false), [&] { d_y.poison(); },
          [&] { return check_y(v.k); }, bytes);
      const double gbps = report.versions().back().rate;
      cudaFuncAttributes plain{}, instr{};
      CUDA_CHECK(cudaFuncGetAttributes(&plain, v.plain));
      CUDA_CHECK(cudaFuncGetAttributes(&instr, v.instrumented));
      int min_grid = 0, suggested = 0;
      CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &suggested, v.plain, 0, 0));
      const double achieved_pct =
          achieved(v.instrumented, v.k, kVersionBlock, true, instrumented_check);
      register_rows.push_back(
          {plain.numRegs,
           {plain.numRegs, v.name, std::to_string(plain.localSizeBytes),
            blocks_per_sm(v.plain, kVersionBlock), theoretical_pct(v.plain, kVersionBlock),
            achieved_pct, gbps, 100.0 * gbps / copy_gbps, suggested,
            theoretical_pct(v.plain, suggested)}});
      if (blocks_per_sm(v.instrumented, kVersionBlock) != blocks_per_sm(v.plain, kVersionBlock))
        report.note(std::string(v.name) + ": the instrumented copy (" +
                    std::to_string(instr.numRegs) +
                    " registers) fits a different number of "
                    "blocks per SM than the plain kernel; its achieved occupancy is its own");
    }
    if (!register_rows.empty()) {
      std::stable_sort(register_rows.begin(), register_rows.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      gpu100::Table t{
          "register sweep: the versions at " + std::to_string(kVersionBlock) +
              " threads per block (occupancy API and measured)",
          {"registers/thread", "version", "local bytes/thread", "blocks/SM",
           "% theoretical occupancy", "% achieved occupancy", "GB/s", "% of copy",
           "suggested threads/block (MaxPotentialBlockSize)", "% theoretical at suggested"},
          {}};
      for (auto& r : register_rows) t.add_row(std::move(r.second));
      report.table(std::move(t));
      report.add_check("instrumented copies", instrumented_check);
    }

    // ---- block-size sweep --------------------------------------------------------------------
    if (ctx.want("block_sweep")) {
      const std::vector<int> blocks =
          ctx.quick() ? std::vector<int>{32, 96, 256, 1024}
                      : std::vector<int>{32, 64, 96, 128, 192, 256, 384, 512, 640, 768, 1024};
      gpu100::CheckResult check;
      for (const auto& v : versions) {
        if (!v.in_sweep) continue;
        cudaFuncAttributes attr{}, instr{};
        CUDA_CHECK(cudaFuncGetAttributes(&attr, v.plain));
        CUDA_CHECK(cudaFuncGetAttributes(&instr, v.instrumented));
        const int max_block = std::min(attr.maxThreadsPerBlock, instr.maxThreadsPerBlock);
        gpu100::Table t{std::string("block sweep: ") + v.name + " (" +
                            std::to_string(attr.numRegs) + " registers/thread)",
                        {"block (threads)", "blocks/SM", "% theoretical occupancy",
                         "% achieved occupancy", "GB/s", "% of copy"},
                        {}};
        for (int block : blocks) {
          // Too many registers for this block size: the launch would fail. A row of zeros says so.
          if (block > max_block || blocks_per_sm(v.plain, block) == 0) {
            t.add_row({block, 0, 0.0, 0.0, 0.0, 0.0});
            continue;
          }
          const auto launch = launcher(v.plain, v.k, block, false);
          d_y.poison();
          launch(nullptr);
          CUDA_CHECK(cudaDeviceSynchronize());
          merge(check, check_y(v.k));
          const auto time = ctx.bench(launch);
          const double gbps = gpu100::gbps(bytes, time.median_ms);
          // The instrumented copy's output is checked in the main versions; here its records.
          const double achieved_pct = achieved(v.instrumented, v.k, block, false, check);
          if (blocks_per_sm(v.instrumented, block) != blocks_per_sm(v.plain, block))
            report.note(std::string(v.name) + ", block " + std::to_string(block) +
                        ": the instrumented copy fits a different number of blocks per SM than "
                        "the plain kernel; its achieved occupancy is its own");
          t.add_row({block, blocks_per_sm(v.plain, block), theoretical_pct(v.plain, block),
                     achieved_pct, gbps, 100.0 * gbps / copy_gbps});
        }
        report.table(std::move(t));
      }
      report.add_check("block_sweep", check);
      report.note(
          "block sweep: a row of zeros is a block size the kernel cannot launch with "
          "(registers x threads exceed the SM's register file)");
    }
    report.note(
        "occupancy = resident warps / " + std::to_string(max_warps_per_sm) +
        " (the SM's limit); theoretical from cudaOccupancyMaxActiveBlocksPerMultiprocessor, "
        "achieved from clock64 warp lifetimes of an instrumented copy (see the source)");
    report.note(
        "GB/s: 8 bytes per element (read + write); limit HBM peak; % of copy compares with "
        "the device-to-device copy of the same bytes in this run");
  });
}
