// Day 026 - shared-memory bank conflicts: cycles per warp access against the access pattern
//
// Shared memory is 32 banks, each 4 bytes wide; word w lives in bank w % 32. Each cycle an SM's
// shared memory serves one "wavefront": at most one word from every bank (all lanes that want the
// same word get it together, a broadcast). A warp access whose 32 lanes need d different words
// of one bank takes d wavefronts: a d-way bank conflict costs d cycles of the shared-memory pipe
// where a conflict-free access costs 1. For lane k reading word k * s, the lanes fall into
// 32 / gcd(s, 32) banks with gcd(s, 32) distinct words each, so the model is
//     cycles per warp access = conflict degree = gcd(s, 32):
// odd strides are free, stride 2 costs 2, stride 32 (a column of a 32 x 32 tile) costs 32. The
// classic fixes for a tile column are a padded row (33 words: row r starts in bank r) and an XOR
// swizzle (element (r, c) stored at column c ^ r: no wasted space); both put the 32 lanes of a
// column read into 32 different banks.
//
// The probe kernel: a block of 32 warps fills 2048 words of shared memory, and every lane then
// reads, kUnroll = 16 loads per loop trip, the words at its own pattern offset plus 32 u
// (u = 0..15). Adding a multiple of 32 words keeps every lane in its bank, so the pattern's
// conflict degree stays fixed, while the addresses change each trip, so the compiler can neither
// hoist nor merge the loads. The loads are independent and 32 warps issue them, so the
// shared-memory pipe, not latency, sets the time: clock64() around the loop of one block on one SM
// gives cycles per warp access directly. Every lane adds what it read and stores the sum; the CPU
// replays the same indices, so a load the compiler dropped, or a wrong address, fails the check.
//
// Versions (main table; the same probe on every SM, timed with events; rate = 128 bytes per
// warp access delivered to the lanes, compared with the shared-memory peak of 32 banks x 4 B per
// cycle per SM and with the conflict-free row read measured in the same run)
//   tile_row              lanes read a row of a 32 x 32 tile: 32 banks, no conflict.
//   tile_column           lanes read a column of the row-major tile: all in one bank, 32-way.
//   tile_column_padded    the tile with 33-word rows: the column spans all 32 banks.
//   tile_column_swizzled  element (r, c) at r * 32 + (c ^ r): conflict-free, no padding.
// Sweeps (tables; clock64 on one block)
//   stride_sweep          lane k reads logical word k * s for s = 1..32, in three layouts of the
//                         same array seen as rows of 32 words:
//                           row-major  word w at w: conflict degree gcd(s, 32);
//                           padded     word w at w + w / 32 (one unused word after each row);
//                           swizzled   word w at w ^ (w / 32 % 32) (bank XOR row, no waste).
//                         Measured cycles per warp access of each against its model (the
//                         conflict degree, counted by the host from the 32 addresses). Padding
//                         and swizzle make every power-of-two stride conflict-free (stride 32
//                         is the tile column), but they are no free lunch: odd strides above 1,
//                         free in the row-major layout, become 2-way (padded) or 2- to 11-way
//                         (swizzled), and stride 31 becomes 31-way in both (stride 1 stays
//                         free: its 32 words are one row). A layout fix belongs to the access
//                         pattern it was made for.
//   The layout table gives the same for the four tile layouts and a broadcast (all lanes one
//   word: one wavefront).
//
// Check: the inputs are random integers 1..65535 and every lane adds its words in uint32 (modulo
// 2^32 when --trips is large: unsigned wrap-around is the same on both sides); each thread's sum
// must equal the CPU replay of its indices exactly.
//
// Run:  build/bin/day026 [--trips 256] [--kernel tile_column,stride_sweep] [--json out.json]
#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
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

// ---- host side ------------------------------------------------------------------------------

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

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "shared-memory bank conflicts: cycles per warp access vs stride, padding, swizzle");
  int64_t trips = 256;
  cli.size("trips", trips, 15,
           "loop trips per warp (" + std::to_string(kUnroll) + " shared loads per lane each)",
           int64_t(1) << 12);
  cli.kernels(
      {"tile_row", "tile_column", "tile_column_padded", "tile_column_swizzled", "stride_sweep"});
  cli.device_bytes([] { return double(64 << 20); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    const auto& dev = ctx.device();
    report.problem("trips", double(trips));
    report.problem("loads per lane", double(trips * kUnroll));
    report.unit("GB/s");
    // 32 banks x 4 bytes per cycle per SM at the peak SM clock.
    const double smem_peak_gbps =
        double(dev.sm_count) * 32 * 4 * double(dev.sm_clock_khz) * 1e3 / 1e9;
    report.limit("smem_gbps", smem_peak_gbps, "shared-memory peak");

    std::vector<uint32_t> data(kWords);
    {
      const auto r = gpu100::random_ints(kWords, ctx.seed(), 1, 65535);
      for (int i = 0; i < kWords; ++i) data[size_t(i)] = uint32_t(r[size_t(i)]);
    }
    gpu100::DeviceBuffer<uint32_t> d_data(data);
    gpu100::DeviceBuffer<int> d_words(32);

    const unsigned grid = gpu100::resident_grid(bank_probe, kThreads);
    gpu100::DeviceBuffer<uint32_t> d_sums(size_t(grid) * kThreads);
    gpu100::DeviceBuffer<long long> d_cycles(grid);
    const int trips32 = int(trips);
    const double accesses_per_block = double(kWarps) * double(trips) * kUnroll;

    auto launcher = [&](unsigned blocks) {
      return [&, blocks](cudaStream_t s) {
        bank_probe<<<blocks, kThreads, 0, s>>>(d_data.data(), d_words.data(), trips32,
                                               d_sums.data(), d_cycles.data());
        LAUNCH_CHECK();
      };
    };
    // Upload a pattern, run `blocks` blocks once and compare every thread with the replay. Under
    // the emulator, what the run did is left in `counted`.
    std::optional<gpu100::EmuMetrics> counted;
    auto run_checked = [&](const LaneWords& words, unsigned blocks) {
      d_words.upload(words.data(), 32);
      d_sums.poison();
      const gpu100::EmuMetricsScope scope;
      launcher(blocks)(nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      counted = scope.take();
      const auto one = replay(data, words, trips32);
      std::vector<uint32_t> expected(size_t(blocks) * kThreads);
      for (size_t i = 0; i < expected.size(); ++i) expected[i] = one[i % kThreads];
      std::vector<uint32_t> got(expected.size());
      d_sums.download(got.data(), got.size());
      return gpu100::compare_exact(got, expected);
    };
    // clock64 cycles per warp access of one block alone on one SM: median of a few launches.
    auto cycles_per_access = [&]() {
      std::vector<double> samples;
      for (int rep = 0; rep < 5; ++rep) {
        launcher(1)(nullptr);
        long long c = 0;
        CUDA_CHECK(cudaMemcpy(&c, d_cycles.data(), sizeof c, cudaMemcpyDeviceToHost));
        samples.push_back(double(c) / accesses_per_block);
      }
      std::sort(samples.begin(), samples.end());
      return samples[samples.size() / 2];
    };

    // Under the emulator, the wavefronts per warp access that it counted in the last checked run
    // (whose loads all follow one pattern): the model's conflict degree, counted independently.
    const bool emulated = ctx.device().emulated;
    auto emulated_wavefronts = [&]() -> gpu100::Cell {
      if (!counted || counted->shared_load_requests == 0) return gpu100::Cell("-");
      const unsigned long long wf = counted->shared_load_wavefronts, req = counted->shared_load_requests;
      if (wf % req == 0) return gpu100::Cell(wf / req);
      return gpu100::Cell(double(wf) / double(req));
    };

    // ---- main versions: every SM, timed with events --------------------------------------
    const struct {
      const char* name;
      const char* layout;
      LaneWords words;
    } layouts[] = {
        {"tile_row", "tile row (lane k: column k)", tile_row()},
        {"tile_column", "tile column, 32-word rows", tile_column(32)},
        {"tile_column_padded", "tile column, 33-word rows (padded)", tile_column(33)},
        {"tile_column_swizzled", "tile column, XOR swizzle c ^ r", tile_column_swizzled()},
        {"broadcast", "broadcast (all lanes one word)", broadcast()},
    };
    const double bytes = 128.0 * accesses_per_block * grid;  // 4 bytes to each of 32 lanes
    gpu100::Table layout_table{
        "tile layouts: one block of 32 warps on one SM (clock64)",
        {"layout", "measured cycles/access", "model cycles/access (conflict degree)"},
        {}};
    if (emulated) layout_table.columns.push_back("emulated wavefronts/access");
    gpu100::CheckResult layout_check;
    auto merge = [](gpu100::CheckResult& into, const gpu100::CheckResult& c) {
      into = into.checked ? gpu100::combine(into, c) : c;
    };
    for (const auto& l : layouts) {
      const std::string name = l.name;
      // The row read is the baseline, so it runs even when --kernel leaves it out.
      if (name != "broadcast" && (ctx.want(name) || name == "tile_row")) {
        const auto check = run_checked(l.words, grid);
        const auto t = ctx.bench(launcher(grid), false);  // no DRAM traffic: no L2 flush
        const double rate = gpu100::gbps(bytes, t.median_ms);
        if (name == "tile_row") report.baseline("tile_row (conflict-free)", t, rate);
        if (ctx.want(name)) {
          report.add(name, t, rate, check);
          if (counted) report.metrics(name, *counted);
        } else {
          merge(layout_check, check);  // a baseline must be right too
        }
      }
      merge(layout_check, run_checked(l.words, 1));
      std::vector<gpu100::Cell> row{l.layout, cycles_per_access(), conflict_degree(l.words)};
      if (emulated) row.push_back(emulated_wavefronts());
      layout_table.add_row(std::move(row));
    }
    report.table(std::move(layout_table));
    report.add_check("layouts (one block)", layout_check);

    // ---- stride sweep ----------------------------------------------------------------------
    if (ctx.want("stride_sweep")) {
      std::vector<int> strides;
      if (ctx.quick()) {
        strides = {1, 2, 3, 8, 16, 31, 32};
      } else {
        for (int s = 1; s <= 32; ++s) strides.push_back(s);
      }
      gpu100::Table t{
          "stride sweep: lane k reads logical word k * s of 32-word rows (one block, "
          "clock64)",
          {"stride (words)", "row-major cycles/access", "padded cycles/access",
           "swizzled cycles/access", "row-major model cycles/access (gcd(s,32))",
           "padded model cycles/access", "swizzled model cycles/access"},
          {}};
      if (emulated)
        for (const char* c : {"row-major emulated wavefronts/access",
                              "padded emulated wavefronts/access",
                              "swizzled emulated wavefronts/access"})
          t.columns.push_back(c);
      gpu100::CheckResult check;
      for (int s : strides) {
        std::vector<gpu100::Cell> measured{s}, model, counted_wavefronts;
        for (Layout layout : {Layout::kRowMajor, Layout::kPadded, Layout::kSwizzled}) {
          const LaneWords words = stride_pattern(s, layout);
          merge(check, run_checked(words, 1));
          counted_wavefronts.push_back(emulated_wavefronts());
          measured.emplace_back(cycles_per_access());
          model.emplace_back(conflict_degree(words));
        }
        // The general count and the closed form of the opening comment agree.
        if (conflict_degree(stride_pattern(s)) != std::gcd(s, 32))
          throw std::logic_error("conflict model disagrees with gcd(s, 32)");
        measured.insert(measured.end(), model.begin(), model.end());
        if (emulated)
          measured.insert(measured.end(), counted_wavefronts.begin(), counted_wavefronts.end());
        t.add_row(std::move(measured));
      }
      report.table(std::move(t));
      report.add_check("stride_sweep", check);
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
