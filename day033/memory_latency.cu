// Day 033 - memory latency: pointer chasing through L1, L2 and HBM
//
// Bandwidth days hide latency behind thousands of loads in flight. This day exposes it: one thread
// follows a chain p = *p, so every load needs the previous one's value and nothing overlaps. The
// time per step IS the load-to-use latency of wherever the chain lives, and sweeping the size of
// the chain's working set walks down the memory hierarchy: a flat L1 plateau, a step to the L2
// plateau once the set outgrows L1, and a step to HBM latency once it outgrows L2. Where the L2
// step happens is the L2 capacity one SM can use, read off the curve and compared with the
// device's reported L2 size.
//
// The chain: the working set is cut into 128-byte lines (the cache line size of L1 and L2); each
// line holds, in its first 8 bytes, the address of the next line. The order is a random cyclic
// permutation (Sattolo's algorithm: one cycle through every line), so consecutive loads land on
// unrelated lines and no stride or next-line prefetcher can guess them. Storing addresses, not
// indices, keeps address arithmetic off the dependent path: the step is exactly one load.
//
// Timing: inside the kernel, clock64() (SM cycles) and %globaltimer (nanoseconds) are read around
// `steps` dependent loads, after a warm-up walk over the whole chain (at most 2^19 lines or twice
// the L2, whichever is more) that brings into the caches what fits. The loads are inline PTX `asm
// volatile`, so the compiler can neither drop nor reorder them, and the final pointer is written
// out (and checked). The clock reads do not wait for a load in flight: the first timed load waits
// for the last warm-up load, whose remaining latency falls inside the interval, and the last timed
// load is still in flight when the interval closes; the two nearly cancel, and either is one load
// out of `steps`.
//
// Versions (--kernel ca,cg: the load flavour)
//   ca   ld.global.ca: cached in L1 and L2 (the default for global loads). Shows L1, L2 and HBM.
//   cg   ld.global.cg: cached in L2 only (L1 bypassed). Shows L2 and HBM; its L2 plateau is the
//        reference for the L2 size estimate.
// The main table times each flavour with CUDA events at three working sets (the smallest of the
// sweep, the one nearest L2 / 16, the largest): ns per load = time / steps, caches warmed by the
// untimed runs (no L2 flush here: a warm cache is the point), each run continuing the walk where
// the previous one stopped. The sweep table has cycles and ns per load by working-set size; notes
// give the plateaus and the L2 size estimate.
//
// What the curve may show on an H100: the L2 is two partitions joined by a crossbar; a line lives
// in one of them, so from one SM about half of the L2 hits are "far" and slower, and the L2 plateau
// is the average of the two latencies (a data-dependent one: it can look noisy). Depending on how
// the hardware places and duplicates lines, the step to HBM latency can start before the full
// reported L2 size, e.g. near half of it: the notes therefore give two sizes, where the curve
// first leaves the L2 plateau (25 % above it) and where it passes halfway to HBM, next to the
// reported L2, and claim neither is "the" L2 size. At the largest sizes TLB misses add to HBM
// latency (the chain touches more pages than the TLBs cover), so the last points rise above the
// HBM plateau.
//
// Check: the final index after warm + steps loads equals a CPU walk of the same permutation.
//
// Run:  build/bin/day033 [--max-kib 1048576] [--steps 65536] [--kernel cg]
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int64_t kLineBytes = 128;
constexpr int64_t kWordsPerLine = kLineBytes / 8;
// Warm-up walks stop after this many lines (64 MiB, beyond the L2 of an H100) or twice the L2 of
// the device, whichever is more: past that the chain cannot fit anyway, and warming costs one HBM
// latency per line.
constexpr int64_t kMaxWarmLines = int64_t(1) << 19;

enum class Cache { CA, CG };

// One dependent load in the requested flavour. asm volatile: never removed, never reordered with
// the other volatile asm (the clock reads); the pointer it returns is the next address to load.
template <Cache C>
__device__ __forceinline__ const uint64_t* next_of(const uint64_t* p) {
  uint64_t v;
  if constexpr (C == Cache::CA)
    asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(v) : "l"(p));
  else
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(p));
  return reinterpret_cast<const uint64_t*>(v);
}

__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// `pos` is where the walk starts (set by the host, or left by the previous launch) and where it
// stopped; the rest are outputs.
struct ChaseState {
  unsigned long long pos, index, cycles, ns;
};

// Writes the chain: line k points to line next[k].
__global__ void link_chain(uint64_t* __restrict__ lines, const uint32_t* __restrict__ next,
                           int64_t count) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < count; k += stride)
    lines[k * kWordsPerLine] = reinterpret_cast<uint64_t>(lines + int64_t(next[k]) * kWordsPerLine);
}

// One thread: `warm` untimed steps, then `steps` timed ones, from state->pos.
template <Cache C>
__global__ void chase(const uint64_t* base, int64_t warm, int64_t steps, ChaseState* state) {
  const uint64_t* p = reinterpret_cast<const uint64_t*>(state->pos);
  for (int64_t i = 0; i < warm; ++i) p = next_of<C>(p);
  const long long c0 = clock64();
  const uint64_t t0 = global_ns();
#pragma unroll 4
  for (int64_t i = 0; i < steps; ++i) p = next_of<C>(p);
  const long long c1 = clock64();
  const uint64_t t1 = global_ns();
  state->pos = reinterpret_cast<unsigned long long>(p);
  state->index = static_cast<unsigned long long>((p - base) / kWordsPerLine);
  state->cycles = static_cast<unsigned long long>(c1 - c0);
  state->ns = t1 - t0;
}

// A random cyclic permutation of 0..count-1 (Sattolo: j < i strictly, so the result is one cycle
// through every element; Fisher-Yates with j <= i could leave short cycles).
std::vector<uint32_t> random_cycle(int64_t count, uint64_t seed) {
  std::vector<uint32_t> next(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) next[size_t(i)] = uint32_t(i);
  for (int64_t i = count - 1; i > 0; --i) {
    const int64_t j =
        int64_t(gpu100::mix64(seed ^ (uint64_t(i) * 0x9E3779B97F4A7C15ull)) % uint64_t(i));
    std::swap(next[size_t(i)], next[size_t(j)]);
  }
  return next;
}

uint64_t cpu_walk(const std::vector<uint32_t>& next, int64_t steps) {
  uint32_t k = 0;
  for (int64_t i = 0; i < steps; ++i) k = next[k];
  return k;
}

// The device side of the experiment: one buffer as large as the largest working set; each point
// uses a prefix of it and links its own chain there.
struct Chaser {
  gpu100::DeviceBuffer<uint64_t> lines;
  gpu100::DeviceBuffer<uint32_t> next;
  gpu100::DeviceBuffer<ChaseState> state{1};
  std::vector<uint32_t> host_next;
  int64_t count = 0;  // lines of the current chain

  explicit Chaser(int64_t max_lines)
      : lines(size_t(max_lines * kWordsPerLine)), next(size_t(max_lines)) {}

  void build(int64_t line_count, uint64_t seed) {
    count = line_count;
    host_next = random_cycle(line_count, seed);
    next.upload(host_next);
    const unsigned grid = std::min(gpu100::grid_for(line_count, 256), 4096u);
    link_chain<<<grid, 256>>>(lines.data(), next.data(), line_count);
    LAUNCH_CHECK();
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  template <Cache C>
  void launch(int64_t warm, int64_t steps, cudaStream_t s) {
    chase<C><<<1, 1, 0, s>>>(lines.data(), warm, steps, state.data());
    LAUNCH_CHECK();
  }
  void launch(Cache c, int64_t warm, int64_t steps, cudaStream_t s) {
    if (c == Cache::CA)
      launch<Cache::CA>(warm, steps, s);
    else
      launch<Cache::CG>(warm, steps, s);
  }

  // Runs once from line 0 and checks the final line against the CPU walk. The outputs start
  // poisoned (all ones), so a kernel that did not write them fails the check.
  ChaseState run(Cache c, int64_t warm, int64_t steps, gpu100::CheckResult* check) {
    const ChaseState start{reinterpret_cast<unsigned long long>(lines.data()), ~0ull, ~0ull, ~0ull};
    state.upload(&start, 1);
    launch(c, warm, steps, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const ChaseState r = state.download()[0];
    const uint64_t got = r.index, want = cpu_walk(host_next, warm + steps);
    *check = gpu100::compare_exact(&got, &want, 1);
    return r;
  }
};

// Working-set sizes of the sweep, in KiB: octaves through L1 (with a few points in between, where
// the L1 capacity lies), quarter octaves from 4 MiB to 128 MiB where L2 ends, octaves beyond.
std::vector<int64_t> sweep_kib(int64_t max_kib, bool quick) {
  std::vector<int64_t> v;
  if (quick) {
    v = {5, 67, 1027};
  } else {
    v = {4, 8, 16, 32, 64, 96, 128, 160, 192, 224, 256, 384, 512, 1024, 2048};
    for (int q = 0; q < 20; ++q) v.push_back(int64_t(std::llround(4096.0 * std::exp2(q / 4.0))));
    for (int64_t k = 131072; k <= (int64_t(1) << 26); k *= 2) v.push_back(k);
  }
  std::vector<int64_t> out;
  for (int64_t k : v)
    if (k < max_kib) out.push_back(k);
  out.push_back(max_kib);
  return out;
}

int64_t lines_of(int64_t kib) {
  return std::max<int64_t>(1, kib * 1024 / kLineBytes);
}

const char* suffix(Cache c) {
  return c == Cache::CA ? ".ca" : ".cg";
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("pointer chasing with clock64: L1, L2 and HBM latency, L2 size from the curve");
  int64_t max_kib = int64_t(1) << 20;  // 1 GiB
  int64_t steps = int64_t(1) << 16;
  cli.size("max-kib", max_kib, 8191, "largest working set of the sweep, KiB", int64_t(1) << 26);
  cli.size("steps", steps, 4099, "timed dependent loads per measurement", int64_t(1) << 28);
  cli.kernels({"ca", "cg"});
  cli.device_bytes([&] { return double(max_kib) * 1024.0 * (1.0 + 4.0 / kLineBytes) + 4096.0; });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    const auto& dev = ctx.device();
    report.problem("max_kib", double(max_kib));
    report.problem("steps", double(steps));
    report.unit("ns per load");

    std::vector<Cache> flavours;
    if (ctx.want("ca")) flavours.push_back(Cache::CA);
    if (ctx.want("cg")) flavours.push_back(Cache::CG);

    // No shared memory is used, so give the whole L1/shared array to L1.
    CUDA_CHECK(cudaFuncSetAttribute(chase<Cache::CA>,
                                    cudaFuncAttributePreferredSharedMemoryCarveout,
                                    int(cudaSharedmemCarveoutMaxL1)));
    CUDA_CHECK(cudaFuncSetAttribute(chase<Cache::CG>,
                                    cudaFuncAttributePreferredSharedMemoryCarveout,
                                    int(cudaSharedmemCarveoutMaxL1)));

    const auto sizes = sweep_kib(max_kib, ctx.quick());
    const int64_t max_warm =
        std::max<int64_t>(kMaxWarmLines, 2 * int64_t(dev.l2_bytes) / kLineBytes);
    Chaser chaser(lines_of(max_kib));

    // ---- main table: event-timed ns per load at three working sets ----------------------------
    const size_t l2_kib = dev.l2_bytes / 1024;
    std::vector<int64_t> main_sizes = {sizes.front()};
    int64_t mid = sizes.front();
    for (int64_t k : sizes)  // the point nearest (in ratio) to L2 / 16: an L2 hit for .cg and .ca
      if (std::fabs(std::log2(double(k) * 16 / double(std::max<size_t>(l2_kib, 1)))) <
          std::fabs(std::log2(double(mid) * 16 / double(std::max<size_t>(l2_kib, 1)))))
        mid = k;
    if (mid != main_sizes.back()) main_sizes.push_back(mid);
    if (sizes.back() != main_sizes.back()) main_sizes.push_back(sizes.back());
    for (int64_t kib : main_sizes) {
      chaser.build(lines_of(kib), ctx.seed() + uint64_t(kib));
      for (Cache c : flavours) {
        gpu100::CheckResult check;
        chaser.run(c, 0, steps, &check);
        // The timed runs continue the walk where the previous run stopped. Restarting at line 0
        // would replay the same `steps` lines every run, and L2 would soon hold them all, even
        // at working sets far beyond L2.
        const auto t = ctx.bench([&](cudaStream_t s) { chaser.launch(c, 0, steps, s); },
                                 /*flush_l2=*/false);
        report.add(std::string(c == Cache::CA ? "ca" : "cg") + " " + std::to_string(kib) + " KiB",
                   t, t.median_ms * 1e6 / double(steps), check);
      }
    }
    report.note(
        "main table: ns per load = event time of one launch / steps (lower is better; "
        "launch overhead adds < 0.1 ns per load at the default steps); each run continues "
        "the walk where the last one stopped, caches warmed by the untimed warm-up runs, "
        "no L2 flush");
    report.note(
        "no device attribute gives a latency limit: the figures are compared with each "
        "other (L1, L2 and HBM plateaus) and the L2 size read off the curve with the "
        "device's reported L2 (cudaDevAttrL2CacheSize)");

    // ---- sweep: clock64 cycles and globaltimer ns per load --------------------------------------
    gpu100::Table t{"latency of one dependent load by working set (clock64 and %globaltimer)",
                    {"working set KiB"},
                    {}};
    for (Cache c : flavours) t.columns.push_back(std::string("cycles (") + suffix(c) + ")");
    for (Cache c : flavours) t.columns.push_back(std::string("ns (") + suffix(c) + ")");
    // curve[f][i]: cycles per load of flavour f at sizes[i]
    std::vector<std::vector<double>> curve(flavours.size()), ns(flavours.size());
    gpu100::CheckResult all;
    double cycles_sum = 0, ns_sum = 0;
    for (int64_t kib : sizes) {
      const int64_t count = lines_of(kib);
      chaser.build(count, ctx.seed() + 1000 + uint64_t(kib));
      const int64_t warm = std::min(count, max_warm);
      std::vector<gpu100::Cell> row = {gpu100::Cell(static_cast<long long>(kib))};
      for (size_t f = 0; f < flavours.size(); ++f) {
        gpu100::CheckResult check;
        const ChaseState r = chaser.run(flavours[f], warm, steps, &check);
        all = gpu100::combine(all, check);
        curve[f].push_back(double(r.cycles) / double(steps));
        ns[f].push_back(double(r.ns) / double(steps));
        cycles_sum += double(r.cycles);
        ns_sum += double(r.ns);
      }
      for (size_t f = 0; f < flavours.size(); ++f) row.emplace_back(curve[f].back());
      for (size_t f = 0; f < flavours.size(); ++f) row.emplace_back(ns[f].back());
      t.add_row(std::move(row));
    }
    report.add_check("sweep: final index = CPU walk at every size", all);
    report.table(std::move(t));
    if (ns_sum > 0)
      report.note(
          gpu100::format_doubles("clock64 advanced %.3f cycles per globaltimer ns during the sweep",
                                 cycles_sum / ns_sum) +
          gpu100::format_doubles(
              " (the SM clock in GHz; device maximum %.3f GHz): ns = cycles / that",
              dev.sm_clock_khz / 1e6));

    // ---- reading the curve ----------------------------------------------------------------------
    auto value_at = [&](const std::vector<double>& y, int64_t lo_kib, int64_t hi_kib, bool median) {
      std::vector<double> v;
      for (size_t i = 0; i < sizes.size(); ++i)
        if (sizes[i] >= lo_kib && sizes[i] <= hi_kib) v.push_back(y[i]);
      if (v.empty()) return -1.0;
      std::sort(v.begin(), v.end());
      return median ? v[v.size() / 2] : v.front();
    };
    // The first size whose latency passes halfway from plateau `lo` to plateau `hi`; the capacity
    // lies between the size before it and it.
    auto capacity = [&](const std::vector<double>& y, double lo, double hi, int64_t from_kib) {
      for (size_t i = 1; i < sizes.size(); ++i)
        if (sizes[i] >= from_kib && y[i] > lo + 0.5 * (hi - lo))
          return std::make_pair(sizes[i - 1], sizes[i]);
      return std::make_pair(int64_t(-1), int64_t(-1));
    };
    const double ghz = ns_sum > 0 ? cycles_sum / ns_sum : dev.sm_clock_khz / 1e6;
    const int64_t l2k = int64_t(l2_kib);
    auto plateau_note = [&](const char* what, double cycles, const std::string& where) {
      if (cycles < 0) {
        report.note(std::string(what) + ": not in this sweep (" + where + ")");
        return;
      }
      report.note(std::string(what) + gpu100::format_doubles(": %.0f cycles", cycles) +
                  gpu100::format_doubles(" = %.1f ns", cycles / ghz) + " (" + where + ")");
    };
    const Cache estimate_from = flavours.empty() ? Cache::CG : flavours.back();  // .cg if it ran
    for (size_t f = 0; f < flavours.size(); ++f) {
      const auto& y = curve[f];
      const bool ca = flavours[f] == Cache::CA;
      const double l2 = value_at(y, 1024, std::max<int64_t>(l2k / 4, 1024), true);
      const double dram = value_at(y, 4 * l2k, int64_t(1) << 62, false);
      if (ca) {
        const double l1 = value_at(y, 1, 32, false);
        plateau_note(".ca L1 hit", l1, "fastest point <= 32 KiB");
        if (l1 > 0 && l2 > 0) {
          const auto [a, b] = capacity(y, l1, l2, 1);
          if (a > 0)
            report.note(".ca: the L1 plateau ends between " + std::to_string(a) + " and " +
                        std::to_string(b) + " KiB (L1 and shared memory share " +
                        std::to_string(dev.smem_per_sm / 1024) +
                        "+ KiB per SM; the carveout "
                        "asked for the maximum L1)");
        }
      }
      plateau_note(ca ? ".ca L2 hit" : ".cg L2 hit", l2, "median of points from 1 MiB to L2/4");
      plateau_note(ca ? ".ca HBM" : ".cg HBM", dram,
                   "fastest point >= 4 x the reported L2; larger sets add TLB misses");
      // The L2 size from the .cg curve (no L1 plateau in the way), or from .ca when only it ran.
      if (flavours[f] != estimate_from) continue;
      const std::string reported =
          gpu100::format_doubles("the device reports an L2 of %.1f MiB", double(l2k) / 1024);
      if (l2 > 0 && dram > 0) {
        const auto [a, b] = capacity(y, l2, dram, 1024);
        if (a > 0)
          report.note(std::string("L2 size seen by one SM: the ") + suffix(flavours[f]) +
                      gpu100::format_doubles(
                          " latency passes halfway from the L2 to the HBM plateau between "
                          "%.1f",
                          double(a) / 1024) +
                      gpu100::format_doubles(" and %.1f MiB; ", double(b) / 1024) + reported);
        else
          report.note(std::string("L2 size: the ") + suffix(flavours[f]) +
                      " curve never passes halfway from the L2 to the HBM plateau; " + reported);
        // The first rise can come well before that: an L2 of two partitions (A100, H100) may keep
        // only about half its capacity near one SM, and lines past that come from the far
        // partition or HBM. Both sizes are printed; neither is forced to match the reported L2.
        const auto [c, d] = capacity(y, l2, 1.5 * l2, 1024);  // 25 % above the L2 plateau
        if (c > 0)
          report.note(
              std::string("L2 plateau end: the ") + suffix(flavours[f]) +
              gpu100::format_doubles(" latency first exceeds the L2 plateau by 25 %% between %.1f",
                                     double(c) / 1024) +
              gpu100::format_doubles(
                  " and %.1f MiB (on a two-partition L2 a first step near half the "
                  "reported size, then a second towards HBM, shows the partitions)",
                  double(d) / 1024));
      } else {
        report.note(
            "L2 size: not estimated, the sweep needs points from 1 MiB to 4 x the reported "
            "L2 (--max-kib " +
            std::to_string(4 * std::max<int64_t>(l2k, 1)) + " or more); " + reported);
      }
    }
  });
}
