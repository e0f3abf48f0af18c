// Day 026 - shared-memory bank conflicts: cycles per warp access against the access pattern
//
// Shared memory is 32 banks, each 4 bytes wide; word w lives in bank w % 32. Each cycle an SM's
// shared memory serves one "wavefront": at most one word from every bank (lanes that want the
// same word get it together, a broadcast). A warp access whose 32 lanes need d different words
// of one bank takes d wavefronts, so for lane k reading word k * s the model is
//     cycles per warp access = conflict degree = gcd(s, 32):
// odd strides are free, stride 2 costs 2, stride 32 (a column of a 32 x 32 tile) costs 32. The
// classic fixes for a tile column are a padded row (33 words) and an XOR swizzle (element (r, c)
// at column c ^ r): both put the 32 lanes of a column read into 32 different banks.
//
// The probe kernel: a block of 32 warps fills 2048 words of shared memory, and every lane then
// reads, kUnroll = 16 independent loads per loop trip, the words at its pattern offset plus
// 32 u. A multiple of 32 words keeps every lane in its bank, while the addresses change each
// trip, so the loads can be neither hoisted nor merged; clock64() around the loop of one block
// on one SM gives cycles per warp access.
//
// Versions (main table: the probe on every SM, CUDA events; rate = 128 bytes per warp access
// delivered to the lanes; baseline: the conflict-free row read in the same run)
//   tile_row              lanes read a row of a 32 x 32 tile: 32 banks, no conflict.
//   tile_column           lanes read a column of the row-major tile: all in one bank, 32-way.
//   tile_column_padded    the tile with 33-word rows: the column spans all 32 banks.
//   tile_column_swizzled  element (r, c) at r * 32 + (c ^ r): conflict-free, no padding.
// Tables (clock64 on one block)
//   layouts       the four tile layouts and a broadcast (all lanes one word: one wavefront),
//                 measured cycles per access against the model.
//   stride_sweep  lane k reads logical word k * s, s = 1..32, in three layouts of 32-word rows:
//                 row-major, padded (w + w / 32) and swizzled (w ^ (w / 32 % 32)).
//
// Check: the inputs are random integers 1..65535 and every lane adds its words in uint32 (modulo
// 2^32 when --trips is large, the same on both sides); each thread's sum must equal the CPU
// replay of its indices exactly.
//
// Run:  build/bin/day026 [--trips 256] [--kernel tile_column,stride_sweep] [--json out.json]
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kThreads = 1024;  // 32 warps: enough independent loads to fill the pipe
constexpr int kWarps = kThreads / 32;
constexpr int kWords = 2048;           // the data, 8 KB; a power of two so wrapping is a mask
constexpr int kUnroll = 16;            // loads per loop trip, at offsets w + 32 u
constexpr int kMirror = kUnroll * 32;  // words past kWords repeating the start, so w + 32 u with
                                       // w < kWords never needs a wrap inside a trip
static_assert((kWords & (kWords - 1)) == 0, "kWords must be a power of two");
static_assert(kWords % 32 == 0, "shifts by whole rows of 32 words keep the banks");

using LaneWords = std::array<int, 32>;  // the word each lane starts at: the access pattern

// ---- CPU reference ------------------------------------------------------------------------------
// The access patterns, and the sums the probe must produce for each.
//
// Where logical word w of an array of 32-word rows lives in each layout of the stride sweep.
enum class Layout { kRowMajor, kPadded, kSwizzled };
int physical_word(Layout layout, int w) {
  switch (layout) {
    case Layout::kPadded:
      return w + w / 32;  // rows of 33 words: row r shifts by r banks
    case Layout::kSwizzled:
      return w ^ (w / 32 % 32);  // bank = column XOR row
    default:
      return w;
  }
}
// Lane k reads logical word k * stride. The largest address is 31 * 32 + 31 = 1023 (padded), so
// with the warp offset the lanes stay distinct after the kernel's wrap at kWords.
LaneWords stride_pattern(int stride, Layout layout = Layout::kRowMajor) {
  LaneWords w{};
  for (int k = 0; k < 32; ++k) w[size_t(k)] = physical_word(layout, k * stride);
  return w;
}

// A 32 x 32 tile of words; lane k touches row or column `fixed`.
constexpr int kFixed = 5;
LaneWords tile_row() {  // row kFixed, lane k at column k
  LaneWords w{};
  for (int k = 0; k < 32; ++k) w[size_t(k)] = kFixed * 32 + k;
  return w;
}
LaneWords tile_column(int row_words) {  // column kFixed, lane k at row k; 32 or 33 words a row
  LaneWords w{};
  for (int k = 0; k < 32; ++k) w[size_t(k)] = k * row_words + kFixed;
  return w;
}
LaneWords tile_column_swizzled() {  // element (r, c) stored at r * 32 + (c ^ r)
  LaneWords w{};
  for (int k = 0; k < 32; ++k) w[size_t(k)] = k * 32 + (kFixed ^ k);
  return w;
}
LaneWords broadcast() {
  LaneWords w{};
  w.fill(7);
  return w;
}

// The CPU replay of one block: the sum of every thread (identical in every block).
std::vector<uint32_t> replay(const std::vector<uint32_t>& data, const LaneWords& words, int trips) {
  std::vector<uint32_t> sums(kThreads);
  for (int warp = 0; warp < kWarps; ++warp) {
    for (int lane = 0; lane < 32; ++lane) {
      int w = (words[size_t(lane)] + warp * 32) & (kWords - 1);
      uint32_t acc = 0;
      for (int trip = 0; trip < trips; ++trip) {
        for (int u = 0; u < kUnroll; ++u) acc += data[size_t((w + u * 32) & (kWords - 1))];
        w = (w + kUnroll * 32) & (kWords - 1);
      }
      sums[size_t(warp * 32 + lane)] = acc;
    }
  }
  return sums;
}

// ---- kernels ------------------------------------------------------------------------------------
// Each lane reads s[w], s[w + 32], ..., kUnroll per trip, then moves w on by kUnroll rows. Warp
// v starts v rows further down, so the warps do not all read the same words.
__global__ void __launch_bounds__(kThreads)
    bank_probe(const uint32_t* __restrict__ data, const int* __restrict__ lane_words, int trips,
               uint32_t* __restrict__ sums, long long* __restrict__ cycles) {
  __shared__ uint32_t s[kWords + kMirror];
  for (int i = threadIdx.x; i < kWords + kMirror; i += kThreads) s[i] = data[i & (kWords - 1)];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int w = (lane_words[lane] + warp * 32) & (kWords - 1);
  __syncthreads();

  const long long start = clock64();
  uint32_t acc = 0;
  for (int trip = 0; trip < trips; ++trip) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc += s[w + u * 32];
    w = (w + kUnroll * 32) & (kWords - 1);
  }
  // The store needs acc, so each warp has all its loads back before it reaches the barrier, and
  // thread 0 reads the clock only when every warp has: block time, loads included.
  sums[int64_t(blockIdx.x) * kThreads + threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.x == 0) cycles[blockIdx.x] = clock64() - start;
}

// ---- launchers ----------------------------------------------------------------------------------
// The probe's device buffers: the data, every pattern of the run (32 words each, all uploaded
// before the first launch), one sum per thread and the cycles of each block.
struct Probe {
  const uint32_t* data;
  const int* patterns;
  uint32_t* sums;
  long long* cycles;
  int trips;
};

void launch(const Probe& p, size_t pattern, unsigned blocks, cudaStream_t s) {
  bank_probe<<<blocks, kThreads, 0, s>>>(p.data, p.patterns + 32 * pattern, p.trips, p.sums,
                                         p.cycles);
  LAUNCH_CHECK();
}

struct Version {
  const char* name;
  const char* layout;  // its row of the layout table
  LaneWords words;
};
const Version kVersions[] = {
    {"tile_row", "tile row (lane k: column k)", tile_row()},
    {"tile_column", "tile column, 32-word rows", tile_column(32)},
    {"tile_column_padded", "tile column, 33-word rows (padded)", tile_column(33)},
    {"tile_column_swizzled", "tile column, XOR swizzle c ^ r", tile_column_swizzled()},
};

// --kernel: the versions, then the sweep.
std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const Version& v : kVersions) names.emplace_back(v.name);
  names.emplace_back("stride_sweep");
  return names;
}

// ---- analysis -----------------------------------------------------------------------------------
// Wavefronts one warp access needs: the most distinct words any bank must deliver.
int conflict_degree(const LaneWords& words) {
  int degree = 0;
  for (int bank = 0; bank < 32; ++bank) {
    std::vector<int> in_bank;
    for (int w : words)
      if (w % 32 == bank && std::find(in_bank.begin(), in_bank.end(), w) == in_bank.end())
        in_bank.push_back(w);
    degree = std::max(degree, int(in_bank.size()));
  }
  return degree;
}

// The strides of the sweep; each is probed in the three layouts, in this order.
std::vector<int> sweep_strides(bool quick) {
  if (quick) return {1, 2, 3, 8, 16, 31, 32};
  std::vector<int> strides(32);
  std::iota(strides.begin(), strides.end(), 1);
  return strides;
}
constexpr Layout kLayouts[] = {Layout::kRowMajor, Layout::kPadded, Layout::kSwizzled};

// clock64 cycles per warp access of one block alone on one SM: the median of a few launches.
double cycles_per_access(const Probe& p, size_t pattern) {
  std::vector<double> samples;
  for (int rep = 0; rep < 5; ++rep) {
    launch(p, pattern, 1, nullptr);
    long long c = 0;
    CUDA_CHECK(cudaMemcpy(&c, p.cycles, sizeof c, cudaMemcpyDeviceToHost));
    samples.push_back(double(c) / (double(kWarps) * p.trips * kUnroll));
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

// Under the emulator: the shared-load wavefronts per warp access it counted in a probe's checked
// run (whose loads all follow one pattern) - the model's conflict degree, counted independently.
gpu100::Cell emulated_wavefronts(const gpu100::Measured& r) {
  if (!r.metrics || r.metrics->shared_load_requests == 0) return gpu100::Cell("-");
  const unsigned long long wf = r.metrics->shared_load_wavefronts;
  const unsigned long long req = r.metrics->shared_load_requests;
  if (wf % req == 0) return gpu100::Cell(wf / req);
  return gpu100::Cell(double(wf) / double(req));
}

// The layout table: the versions' patterns and the broadcast (patterns 0..4), measured cycles
// against the model (and, emulated, the wavefronts counted: rs[i] is pattern i's probe).
gpu100::Table layout_table(const Probe& p, const std::vector<LaneWords>& patterns,
                           const std::vector<gpu100::Measured>& rs) {
  const bool emulated = !rs.empty() && rs.front().metrics.has_value();
  gpu100::Table t{"tile layouts: one block of 32 warps on one SM (clock64)",
                  {"layout", "measured cycles/access", "model cycles/access (conflict degree)"},
                  {}};
  if (emulated) t.columns.push_back("emulated wavefronts/access");
  for (size_t i = 0; i < std::size(kVersions) + 1; ++i) {
    const char* label =
        i < std::size(kVersions) ? kVersions[i].layout : "broadcast (all lanes one word)";
    std::vector<gpu100::Cell> row{label, cycles_per_access(p, i), conflict_degree(patterns[i])};
    if (emulated) row.push_back(emulated_wavefronts(rs[i]));
    t.add_row(std::move(row));
  }
  return t;
}

// The stride sweep: per stride, the three layouts' measured cycles, then their models.
gpu100::Table stride_table(const Probe& p, size_t first, const std::vector<LaneWords>& patterns,
                           const std::vector<int>& strides,
                           const std::vector<gpu100::Measured>& rs) {
  const bool emulated = !rs.empty() && rs.front().metrics.has_value();
  gpu100::Table t{
      "stride sweep: lane k reads logical word k * s of 32-word rows (one block, clock64)",
      {"stride (words)", "row-major cycles/access", "padded cycles/access",
       "swizzled cycles/access", "row-major model cycles/access (gcd(s,32))",
       "padded model cycles/access", "swizzled model cycles/access"},
      {}};
  if (emulated)
    for (const char* c : {"row-major emulated wavefronts/access", "padded emulated wavefronts/access",
                          "swizzled emulated wavefronts/access"})
      t.columns.push_back(c);
  size_t i = first;
  for (int s : strides) {
    // The general count and the closed form of the opening comment agree.
    if (conflict_degree(stride_pattern(s)) != std::gcd(s, 32))
      throw std::logic_error("conflict model disagrees with gcd(s, 32)");
    std::vector<gpu100::Cell> measured{s}, model, counted;
    for (size_t l = 0; l < std::size(kLayouts); ++l, ++i) {
      measured.emplace_back(cycles_per_access(p, i));
      model.emplace_back(conflict_degree(patterns[i]));
      if (emulated) counted.push_back(emulated_wavefronts(rs[i - first]));
    }
    measured.insert(measured.end(), model.begin(), model.end());
    measured.insert(measured.end(), counted.begin(), counted.end());
    t.add_row(std::move(measured));
  }
  return t;
}

// A table's check passes only if every one of its probes matched the replay.
gpu100::CheckResult all_points(const std::vector<gpu100::Measured>& rs) {
  gpu100::CheckResult c;
  for (const auto& r : rs) c = gpu100::combine(c, r.check);
  return c;
}

// Pattern i on `blocks` blocks; every thread's sum checked against the replay of one block.
gpu100::Measure measure_probe(std::string name, size_t i, unsigned blocks, gpu100::Role role,
                              const Probe& probe, gpu100::DeviceBuffer<uint32_t>& d_sums,
                              const std::vector<uint32_t>& data, const LaneWords& words) {
  return {.name = std::move(name),
          .launch = [&probe, i, blocks](cudaStream_t s) { launch(probe, i, blocks, s); },
          .reset = [&d_sums] { d_sums.poison(); },
          .check =
              [&d_sums, &data, &words, trips = probe.trips, blocks] {
                const auto one = replay(data, words, trips);
                std::vector<uint32_t> expected(size_t(blocks) * kThreads), got(expected.size());
                for (size_t j = 0; j < expected.size(); ++j) expected[j] = one[j % kThreads];
                d_sums.download(got.data(), got.size());
                return gpu100::compare_exact(got, expected);
              },
          // 4 bytes to each of 32 lanes per warp access
          .work = 128.0 * double(kWarps) * double(probe.trips) * kUnroll * blocks,
          .role = role,
          .flush_l2 = false};  // no DRAM traffic
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "shared-memory bank conflicts: cycles per warp access vs stride, padding, swizzle");
  int64_t trips = 256;
  cli.size("trips", trips, 15,
           fmt::format("loop trips per warp ({} shared loads per lane each)", kUnroll),
           int64_t(1) << 12);
  cli.kernels(kernel_names());
  cli.device_bytes([] { return double(64 << 20); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    const auto& dev = ctx.device();
    report.problem("trips", double(trips));
    report.problem("loads per lane", double(trips * kUnroll));
    report.unit("GB/s");
    // 32 banks x 4 bytes per cycle per SM at the peak SM clock.
    report.limit("smem_gbps", double(dev.sm_count) * 32 * 4 * double(dev.sm_clock_khz) * 1e3 / 1e9,
                 "shared-memory peak");

    std::vector<uint32_t> data(kWords);
    {
      const auto r = gpu100::random_ints(kWords, ctx.seed(), 1, 65535);
      for (int i = 0; i < kWords; ++i) data[size_t(i)] = uint32_t(r[size_t(i)]);
    }
    // Every pattern of the run: the versions, the broadcast, then the sweep's strides x layouts.
    std::vector<LaneWords> patterns;
    for (const Version& v : kVersions) patterns.push_back(v.words);
    patterns.push_back(broadcast());
    const size_t first_sweep = patterns.size();
    const std::vector<int> strides = sweep_strides(ctx.quick());
    if (ctx.want("stride_sweep"))
      for (int s : strides)
        for (Layout l : kLayouts) patterns.push_back(stride_pattern(s, l));
    std::vector<int> flat;
    for (const LaneWords& w : patterns) flat.insert(flat.end(), w.begin(), w.end());

    const unsigned grid = gpu100::resident_grid(bank_probe, kThreads);
    gpu100::DeviceBuffer<uint32_t> d_data(data), d_sums{size_t(grid) * kThreads};
    gpu100::DeviceBuffer<int> d_patterns(flat);
    gpu100::DeviceBuffer<long long> d_cycles(grid);
    const Probe probe{d_data.data(), d_patterns.data(), d_sums.data(), d_cycles.data(), int(trips)};

    auto probe_run = [&](std::string name, size_t i, unsigned blocks, gpu100::Role role) {
      return measure_probe(std::move(name), i, blocks, role, probe, d_sums, data, patterns[i]);
    };

    // ---- every SM, timed with events: the row read as the baseline, then the versions --------
    std::vector<gpu100::Measure> runs{
        probe_run("tile_row (conflict-free)", 0, grid, gpu100::Role::baseline)};
    for (size_t i = 0; i < std::size(kVersions); ++i)
      runs.push_back(probe_run(kVersions[i].name, i, grid, gpu100::Role::version));
    ctx.measure_all(runs);

    // ---- one block, clock64: the layouts, then the stride sweep --------------------------------
    std::vector<gpu100::Measure> layouts;
    for (size_t i = 0; i < first_sweep; ++i)
      layouts.push_back(probe_run(fmt::format("layout {}", i), i, 1, gpu100::Role::point));
    const auto layout_runs = ctx.measure_all(layouts);
    report.add_check("layouts (one block)", all_points(layout_runs));
    report.table(layout_table(probe, patterns, layout_runs));

    if (ctx.want("stride_sweep")) {
      std::vector<gpu100::Measure> sweep;
      for (size_t i = first_sweep; i < patterns.size(); ++i)
        sweep.push_back(probe_run(fmt::format("sweep pattern {}", i), i, 1, gpu100::Role::point));
      const auto rs = ctx.measure_all(sweep);
      report.table(stride_table(probe, first_sweep, patterns, strides, rs));
      report.add_check("stride_sweep", all_points(rs));
    }

    report.note(
        "cycles/access: clock64 cycles of one block (32 warps, one SM) divided by its "
        "warp accesses; the model (and the limit) is one cycle per wavefront: 1 when "
        "conflict-free (32 banks x 4 B per cycle), d for a d-way conflict");
    report.note(
        "GB/s in the main table: 128 bytes per warp access delivered to the lanes, all SMs, "
        "CUDA events; limit = SMs x 32 banks x 4 B x peak SM clock");
  });
}
