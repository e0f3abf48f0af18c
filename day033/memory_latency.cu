// Day 033 - memory latency: pointer chasing through L1, L2 and HBM
//
// Bandwidth days hide latency behind thousands of loads in flight. This day exposes it: one thread
// follows a chain p = *p, so every load needs the previous one's value and nothing overlaps. The
// time per step IS the load-to-use latency of wherever the chain lives, and sweeping the size of
// the chain's working set walks down the memory hierarchy: a flat L1 plateau, a step to the L2
// plateau once the set outgrows L1, and a step to HBM latency once it outgrows L2. Where the L2
// step happens is the L2 capacity one SM can use, read off the curve (read_curve) and compared
// with the device's reported L2 size.
//
// The chain: the working set is cut into 128-byte lines; each line holds, in its first 8 bytes,
// the address of the next line, in the order of a random cyclic permutation (Sattolo's
// algorithm), so no prefetcher can guess the next line and the step is exactly one load.
//
// Timing: inside the kernel, clock64() (SM cycles) and %globaltimer (ns) are read around `steps`
// dependent loads, after an untimed warm-up walk that brings into the caches what fits. The loads
// are inline PTX `asm volatile`, so the compiler can neither drop nor reorder them, and the final
// pointer is written out (and checked).
//
// Versions (--kernel ca,cg: the load flavour)
//   ca   ld.global.ca: cached in L1 and L2 (the default for global loads). Shows L1, L2 and HBM.
//   cg   ld.global.cg: cached in L2 only (L1 bypassed). Shows L2 and HBM; its L2 plateau is the
//        reference for the L2 size estimate.
// The main table times each flavour with CUDA events at three working sets (rows "ca 64 KiB"):
// ns per load = time / steps, caches warm (no L2 flush: a warm cache is the point), each run
// continuing the walk where the previous one stopped. The sweep table has cycles and ns per load
// by working-set size; notes give the plateaus and the L2 size estimates.
//
// Check: the final index after warm + steps loads equals a CPU walk of the same permutation.
//
// Run:  build/bin/day033 [--max-kib 1048576] [--steps 65536] [--kernel cg]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
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

// ---- CPU reference ------------------------------------------------------------------------------
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

// ---- kernels ------------------------------------------------------------------------------------
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

// ---- launchers ----------------------------------------------------------------------------------
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

  // The next run starts at line 0, its outputs poisoned (all ones), so a kernel that did not
  // write them fails the check.
  void restart() {
    const ChaseState start{reinterpret_cast<unsigned long long>(lines.data()), ~0ull, ~0ull, ~0ull};
    state.upload(&start, 1);
  }
  // The final line of a run from line 0 against the CPU walk; the state of that run in `r`.
  gpu100::CheckResult check(int64_t loads, ChaseState* r = nullptr) const {
    const ChaseState got_state = state.download()[0];
    if (r) *r = got_state;
    const uint64_t got = got_state.index, want = cpu_walk(host_next, loads);
    return gpu100::compare_exact(&got, &want, 1);
  }
};

struct Version {
  const char* name;
  Cache cache;
};
const Version kVersions[] = {{"ca", Cache::CA}, {"cg", Cache::CG}};

// ---- analysis -----------------------------------------------------------------------------------
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


// The main table's working sets: the smallest of the sweep, the one nearest (in ratio) to
// L2 / 16 (an L2 hit for .cg and .ca), and the largest.
std::vector<int64_t> main_sizes(const std::vector<int64_t>& sizes, int64_t l2_kib) {
  std::vector<int64_t> out = {sizes.front()};
  auto distance = [&](int64_t k) {
    return std::fabs(std::log2(double(k) * 16 / double(std::max<int64_t>(l2_kib, 1))));
  };
  int64_t mid = sizes.front();
  for (int64_t k : sizes)
    if (distance(k) < distance(mid)) mid = k;
  if (mid != out.back()) out.push_back(mid);
  if (sizes.back() != out.back()) out.push_back(sizes.back());
  return out;
}

// The sweep: for every working set and flavour, one walk from line 0 (warm-up, then `steps`
// timed loads by the kernel's own clocks), its final line checked.
struct Sweep {
  std::vector<std::vector<double>> cycles, ns;  // [flavour][size], per load
  double cycles_sum = 0, ns_sum = 0;
  gpu100::CheckResult check;
};

Sweep run_sweep(Chaser& chaser, const std::vector<Cache>& flavours,
                const std::vector<int64_t>& sizes, int64_t steps, int64_t max_warm,
                uint64_t seed) {
  Sweep s;
  s.cycles.resize(flavours.size());
  s.ns.resize(flavours.size());
  for (int64_t kib : sizes) {
    const int64_t count = lines_of(kib);
    chaser.build(count, seed + 1000 + uint64_t(kib));
    const int64_t warm = std::min(count, max_warm);
    for (size_t f = 0; f < flavours.size(); ++f) {
      chaser.restart();
      chaser.launch(flavours[f], warm, steps, nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      ChaseState r{};
      s.check = gpu100::combine(s.check, chaser.check(warm + steps, &r));
      s.cycles[f].push_back(double(r.cycles) / double(steps));
      s.ns[f].push_back(double(r.ns) / double(steps));
      s.cycles_sum += double(r.cycles);
      s.ns_sum += double(r.ns);
    }
  }
  return s;
}

gpu100::Table sweep_table(const std::vector<Cache>& flavours, const std::vector<int64_t>& sizes,
                          const Sweep& s) {
  gpu100::Table t{"latency of one dependent load by working set (clock64 and %globaltimer)",
                  {"working set KiB"},
                  {}};
  for (Cache c : flavours) t.columns.push_back(fmt::format("cycles ({})", suffix(c)));
  for (Cache c : flavours) t.columns.push_back(fmt::format("ns ({})", suffix(c)));
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<gpu100::Cell> row = {gpu100::Cell(static_cast<long long>(sizes[i]))};
    for (const auto& y : s.cycles) row.emplace_back(y[i]);
    for (const auto& y : s.ns) row.emplace_back(y[i]);
    t.add_row(std::move(row));
  }
  return t;
}

// What one flavour's curve (cycles per load at each working set, KiB) says: its plateaus, in
// cycles (-1: the sweep has no point for it), and where the latency steps up, as the pair of
// sizes (KiB) around the step ({-1, -1}: it does not).
struct Curve {
  double l1 = -1, l2 = -1, hbm = -1;
  std::pair<int64_t, int64_t> l1_end{-1, -1}, l2_halfway{-1, -1}, l2_rise{-1, -1};
};

Curve read_curve(const std::vector<int64_t>& sizes, const std::vector<double>& cycles,
                 int64_t l2_kib) {
  // The median (a plateau) or the minimum (the fastest point) of the points in [lo, hi] KiB.
  auto value_at = [&](int64_t lo_kib, int64_t hi_kib, bool median) {
    std::vector<double> v;
    for (size_t i = 0; i < sizes.size(); ++i)
      if (sizes[i] >= lo_kib && sizes[i] <= hi_kib) v.push_back(cycles[i]);
    if (v.empty()) return -1.0;
    std::sort(v.begin(), v.end());
    return median ? v[v.size() / 2] : v.front();
  };
  // The first size from from_kib on whose latency passes `level`; the capacity lies between the
  // size before it and it.
  auto step = [&](double level, int64_t from_kib) {
    for (size_t i = 1; i < sizes.size(); ++i)
      if (sizes[i] >= from_kib && cycles[i] > level) return std::make_pair(sizes[i - 1], sizes[i]);
    return std::make_pair(int64_t(-1), int64_t(-1));
  };
  Curve c;
  c.l1 = value_at(1, 32, false);
  c.l2 = value_at(1024, std::max<int64_t>(l2_kib / 4, 1024), true);
  c.hbm = value_at(4 * l2_kib, int64_t(1) << 62, false);
  if (c.l1 > 0 && c.l2 > 0) c.l1_end = step(c.l1 + 0.5 * (c.l2 - c.l1), 1);
  if (c.l2 > 0 && c.hbm > 0) {
    c.l2_halfway = step(c.l2 + 0.5 * (c.hbm - c.l2), 1024);
    // The first rise can come well before that: an L2 of two partitions (A100, H100) may keep
    // only about half its capacity near one SM, and lines past that come from the far partition
    // or HBM. Both sizes are printed; neither is forced to match the reported L2.
    c.l2_rise = step(c.l2 + 0.5 * (1.5 * c.l2 - c.l2), 1024);  // 25 % above the L2 plateau
  }
  return c;
}

// The notes of one flavour's curve; `estimate`: this flavour gives the L2 size (.cg if it ran).
std::vector<std::string> curve_notes(const Curve& c, Cache flavour, bool estimate, double ghz,
                                     int64_t l2_kib, int64_t smem_per_sm) {
  std::vector<std::string> notes;
  auto plateau = [&](const char* what, double cycles, const char* where) {
    notes.push_back(cycles < 0 ? fmt::format("{}: not in this sweep ({})", what, where)
                               : fmt::format("{}: {:.0f} cycles = {:.1f} ns ({})", what, cycles,
                                             cycles / ghz, where));
  };
  const bool ca = flavour == Cache::CA;
  if (ca) {
    plateau(".ca L1 hit", c.l1, "fastest point <= 32 KiB");
    if (c.l1_end.first > 0)
      notes.push_back(fmt::format(".ca: the L1 plateau ends between {} and {} KiB (L1 and shared "
                                  "memory share {}+ KiB per SM; the carveout asked for the "
                                  "maximum L1)",
                                  c.l1_end.first, c.l1_end.second, smem_per_sm / 1024));
  }
  plateau(ca ? ".ca L2 hit" : ".cg L2 hit", c.l2, "median of points from 1 MiB to L2/4");
  plateau(ca ? ".ca HBM" : ".cg HBM", c.hbm,
          "fastest point >= 4 x the reported L2; larger sets add TLB misses");
  if (!estimate) return notes;
  const std::string reported =
      fmt::format("the device reports an L2 of {:.1f} MiB", double(l2_kib) / 1024);
  if (c.l2 < 0 || c.hbm < 0) {
    notes.push_back(fmt::format("L2 size: not estimated, the sweep needs points from 1 MiB to 4 x "
                                "the reported L2 (--max-kib {} or more); {}",
                                4 * std::max<int64_t>(l2_kib, 1), reported));
    return notes;
  }
  if (c.l2_halfway.first > 0)
    notes.push_back(fmt::format("L2 size seen by one SM: the {} latency passes halfway from the "
                                "L2 to the HBM plateau between {:.1f} and {:.1f} MiB; {}",
                                suffix(flavour), double(c.l2_halfway.first) / 1024,
                                double(c.l2_halfway.second) / 1024, reported));
  else
    notes.push_back(fmt::format("L2 size: the {} curve never passes halfway from the L2 to the "
                                "HBM plateau; {}",
                                suffix(flavour), reported));
  if (c.l2_rise.first > 0)
    notes.push_back(fmt::format("L2 plateau end: the {} latency first exceeds the L2 plateau by "
                                "25 % between {:.1f} and {:.1f} MiB (on a two-partition L2 a "
                                "first step near half the reported size, then a second towards "
                                "HBM, shows the partitions)",
                                suffix(flavour), double(c.l2_rise.first) / 1024,
                                double(c.l2_rise.second) / 1024));
  return notes;
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("pointer chasing with clock64: L1, L2 and HBM latency, L2 size from the curve");
  int64_t max_kib = int64_t(1) << 20;  // 1 GiB
  int64_t steps = int64_t(1) << 16;
  cli.size("max-kib", max_kib, 8191, "largest working set of the sweep, KiB", int64_t(1) << 26);
  cli.size("steps", steps, 4099, "timed dependent loads per measurement", int64_t(1) << 28);
  cli.kernels_of(kVersions);
  cli.device_bytes([&] { return double(max_kib) * 1024.0 * (1.0 + 4.0 / kLineBytes) + 4096.0; });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    const auto& dev = ctx.device();
    report.problem("max_kib", double(max_kib));
    report.problem("steps", double(steps));
    report.unit("ns per load");

    std::vector<Cache> flavours;
    for (const Version& v : kVersions)
      if (ctx.want(v.name)) flavours.push_back(v.cache);
    // No shared memory is used, so give the whole L1/shared array to L1.
    CUDA_CHECK(cudaFuncSetAttribute(chase<Cache::CA>,
                                    cudaFuncAttributePreferredSharedMemoryCarveout,
                                    int(cudaSharedmemCarveoutMaxL1)));
    CUDA_CHECK(cudaFuncSetAttribute(chase<Cache::CG>,
                                    cudaFuncAttributePreferredSharedMemoryCarveout,
                                    int(cudaSharedmemCarveoutMaxL1)));

    const auto sizes = sweep_kib(max_kib, ctx.quick());
    const int64_t l2_kib = int64_t(dev.l2_bytes / 1024);
    Chaser chaser(lines_of(max_kib));

    // ---- main table: event-timed ns per load at three working sets ----------------------------
    for (int64_t kib : main_sizes(sizes, l2_kib)) {
      chaser.build(lines_of(kib), ctx.seed() + uint64_t(kib));
      std::vector<gpu100::Measure> runs;
      for (const Version& v : kVersions)
        // The checked run starts at line 0; the timed runs continue the walk where the previous
        // run stopped. Restarting at line 0 would replay the same `steps` lines every run, and L2
        // would soon hold them all, even at working sets far beyond L2.
        runs.push_back({.name = fmt::format("{} {} KiB", v.name, kib),
                        .kernel = v.name,
                        .launch = [&, c = v.cache](
                                      cudaStream_t s) { chaser.launch(c, 0, steps, s); },
                        .reset = [&] { chaser.restart(); },
                        .check = [&] { return chaser.check(steps); },
                        .rate = [&](double ms) { return ms * 1e6 / double(steps); },
                        .flush_l2 = false});
      ctx.measure_all(runs);
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
    const int64_t max_warm =
        std::max<int64_t>(kMaxWarmLines, 2 * int64_t(dev.l2_bytes) / kLineBytes);
    const Sweep sweep = run_sweep(chaser, flavours, sizes, steps, max_warm, ctx.seed());
    report.add_check("sweep: final index = CPU walk at every size", sweep.check);
    report.table(sweep_table(flavours, sizes, sweep));
    if (sweep.ns_sum > 0)
      report.note(fmt::format("clock64 advanced {:.3f} cycles per globaltimer ns during the sweep "
                              "(the SM clock in GHz; device maximum {:.3f} GHz): ns = cycles / "
                              "that",
                              sweep.cycles_sum / sweep.ns_sum, dev.sm_clock_khz / 1e6));

    // ---- reading the curve ----------------------------------------------------------------------
    const double ghz = sweep.ns_sum > 0 ? sweep.cycles_sum / sweep.ns_sum : dev.sm_clock_khz / 1e6;
    for (size_t f = 0; f < flavours.size(); ++f) {
      const bool estimate = f + 1 == flavours.size();  // .cg if it ran, else .ca
      for (const std::string& note :
           curve_notes(read_curve(sizes, sweep.cycles[f], l2_kib), flavours[f], estimate, ghz,
                       l2_kib, int64_t(dev.smem_per_sm)))
        report.note(note);
    }
  });
}
