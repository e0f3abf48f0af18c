// Day 025 - memory coalescing: bandwidth against the access stride and the misalignment
//
// A warp's load instruction is served in 32-byte sectors: the L1 collects the addresses of the 32
// lanes, asks the L2 for every 32-byte sector they touch, and the L2 fetches missing sectors from
// DRAM. When the 32 lanes read 32 consecutive 4-byte words, that is 4 sectors for 128 useful
// bytes. When lane k reads word k * s, the same 128 useful bytes need min(32, ceil(32 s / 8))
// sectors, so the useful bandwidth should fall like 1/s until s = 8 and then stay flat. A start
// that is not a multiple of 8 words makes every warp request touch one more sector (5 instead of
// 4), but the neighbouring warp reads that sector anyway: misalignment should cost little.
//
// One kernel sums 4-byte integers with a pattern (first word, stride, count), kUnroll loads in
// flight per thread, one partial sum per block, so its time is the time of the reads.
//
// Versions (main table; rate = useful bytes, 4 per element read, per second)
//   coalesced   stride 1, offset 0: word t for thread t. The reference point.
//   misaligned  stride 1, starting at word 1: every warp request touches 5 sectors.
//   stride2     every second word: half of each sector is wasted.
//   stride32    one word per 128-byte line: 1/8 of each sector is used.
//   vector4     stride 1 read as int4 (16-byte loads, ld.global.v4): a quarter of the load
//               instructions for the same sectors; should match or beat `coalesced`.
// Sweeps (tables; the pattern kernel)
//   stride_sweep  strides 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128, 256 words over the buffer.
//   offset_sweep  n - 32 consecutive words starting at word 0, 1, ..., 32.
// Each sweep row: time, useful GB/s, the GB/s of the 32-byte sectors the warp requests touch (the
// model above, what Nsight Compute calls l1tex sectors), and the useful rate as % of the
// device-to-device copy measured in the same run.
//
// Check: the inputs are random integers 1..1023, so every sum is exact; the CPU adds the same
// elements in int64 and every version and every sweep point must match it exactly.
//
// Run:  build/bin/day025 [--n 134217731] [--kernel coalesced,stride_sweep] [--json out.json]
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;
constexpr int kUnroll = 8;  // independent loads per thread per loop trip

// What a kernel reads: element t (0 <= t < count) is word first + t * stride of the buffer.
struct Pattern {
  int64_t first = 0, stride = 1, count = 0;
};

// ---- CPU reference ------------------------------------------------------------------------------
// For strides that divide kPeriod, the sum of the words i < n with i % s == 0 is the
// sum of the residue classes j % s == 0 of a single pass that adds word i into class i % kPeriod.
constexpr int64_t kPeriod = 768;  // 3 * 256: divisible by every stride of the sweep

class Reference {
 public:
  explicit Reference(const std::vector<int32_t>& x) : x_(x), classes_(size_t(kPeriod), 0) {
    const int64_t n = int64_t(x.size());
    for (int64_t i0 = 0; i0 < n; i0 += kPeriod)
      for (int64_t j = 0; j < kPeriod && i0 + j < n; ++j) classes_[size_t(j)] += x[size_t(i0 + j)];
  }
  int64_t sum(const Pattern& p) const {
    const int64_t n = int64_t(x_.size());
    if (p.first == 0 && kPeriod % p.stride == 0 && p.count == (n + p.stride - 1) / p.stride) {
      int64_t s = 0;
      for (int64_t j = 0; j < kPeriod; j += p.stride) s += classes_[size_t(j)];
      return s;
    }
    int64_t s = 0;
    for (int64_t t = 0; t < p.count; ++t) s += x_[size_t(p.first + t * p.stride)];
    return s;
  }
  // Sums of the windows [o, o + count) for o = 0..max_offset, sliding one word at a time.
  std::vector<int64_t> window_sums(int64_t count, int64_t max_offset) const {
    std::vector<int64_t> sums(size_t(max_offset + 1));
    sums[0] = sum({0, 1, count});
    for (int64_t o = 1; o <= max_offset; ++o)
      sums[size_t(o)] = sums[size_t(o - 1)] - x_[size_t(o - 1)] + x_[size_t(o - 1 + count)];
    return sums;
  }

 private:
  const std::vector<int32_t>& x_;
  std::vector<int64_t> classes_;
};

// ---- kernels ------------------------------------------------------------------------------------
// Sum over the block; the result is valid in thread 0. Every thread of the block must call it.
__device__ __forceinline__ int64_t block_sum(int64_t v) {
  __shared__ int64_t warp_sums[kWarps];
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = 0;
  if (warp == 0) {
    v = lane < kWarps ? warp_sums[lane] : 0;
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  return v;
}

// Element t (0 <= t < count) is in[first + t * stride]. Thread t handles t, t + T, t + 2T, ...
// (T threads in the grid), so the 32 lanes of a warp always read 32 consecutive t: the warp's
// request has exactly the stride pattern. The first loop keeps kUnroll loads in flight.
__global__ void __launch_bounds__(kBlock)
    sum_strided(const int32_t* __restrict__ in, int64_t first, int64_t stride, int64_t count,
                int64_t* __restrict__ partials) {
  const int64_t threads = int64_t(gridDim.x) * kBlock;
  const int32_t* base = in + first;
  int64_t t = int64_t(blockIdx.x) * kBlock + threadIdx.x;
  int64_t acc = 0;
  for (; t + (kUnroll - 1) * threads < count; t += kUnroll * threads) {
    int32_t v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = base[(t + u * threads) * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc += v[u];
  }
  for (; t < count; t += threads) acc += base[t * stride];
  const int64_t total = block_sum(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// The n words read as n / 4 int4 vectors (cudaMalloc's 256-byte alignment makes them aligned;
// the launcher checks) plus the n % 4 leftover words as scalars.
__global__ void __launch_bounds__(kBlock)
    sum_vec4(const int32_t* __restrict__ in, int64_t n, int64_t* __restrict__ partials) {
  constexpr int kVecUnroll = 4;  // 4 x 16 bytes in flight per thread, as many bytes as sum_strided
  const int64_t threads = int64_t(gridDim.x) * kBlock;
  const int64_t n4 = n / 4;
  const int4* in4 = reinterpret_cast<const int4*>(in);
  const int64_t tid = int64_t(blockIdx.x) * kBlock + threadIdx.x;
  int64_t acc = 0;
  int64_t i = tid;
  for (; i + (kVecUnroll - 1) * threads < n4; i += kVecUnroll * threads) {
    int4 v[kVecUnroll];
#pragma unroll
    for (int u = 0; u < kVecUnroll; ++u) v[u] = in4[i + u * threads];
#pragma unroll
    for (int u = 0; u < kVecUnroll; ++u) acc += int64_t(v[u].x) + v[u].y + v[u].z + v[u].w;
  }
  for (; i < n4; i += threads) {
    const int4 v = in4[i];
    acc += int64_t(v.x) + v.y + v.z + v.w;
  }
  for (int64_t j = 4 * n4 + tid; j < n; j += threads) acc += in[j];
  const int64_t total = block_sum(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// ---- launchers ----------------------------------------------------------------------------------
// A version reads a pattern of the n-word buffer, with the strided kernel or as int4 vectors.
struct Version {
  const char* name;
  int64_t first, stride;
  bool vec4;
};
const Version kVersions[] = {
    {"coalesced", 0, 1, false}, {"misaligned", 1, 1, false}, {"stride2", 0, 2, false},
    {"stride32", 0, 32, false}, {"vector4", 0, 1, true},
};

// --kernel: the versions, then the sweeps.
std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const Version& v : kVersions) names.emplace_back(v.name);
  names.insert(names.end(), {"stride_sweep", "offset_sweep"});
  return names;
}

Pattern pattern_of(const Version& v, int64_t n) {
  return {v.first, v.stride, (n - v.first + v.stride - 1) / v.stride};
}

// One grid for every pattern: as many blocks as fit at once (the kernels are grid-stride).
unsigned grid_of(bool vec4) {
  return vec4 ? gpu100::resident_grid(sum_vec4, kBlock)
              : gpu100::resident_grid(sum_strided, kBlock);
}

// sum_vec4 reads words 0 .. count - 1 (the pattern of `coalesced`).
void launch(bool vec4, unsigned grid, const int32_t* in, const Pattern& p, int64_t* partials,
            cudaStream_t s) {
  if (vec4 && !gpu100::is_aligned(in, sizeof(int4)))
    throw std::invalid_argument("sum_vec4 needs a 16-byte aligned buffer");
  if (vec4)
    sum_vec4<<<grid, kBlock, 0, s>>>(in, p.count, partials);
  else
    sum_strided<<<grid, kBlock, 0, s>>>(in, p.first, p.stride, p.count, partials);
  LAUNCH_CHECK();
}

// ---- analysis -----------------------------------------------------------------------------------
// 32-byte sectors the warp requests of a pattern touch (the model of the opening comment). The
// lanes of one request are 32 consecutive t starting at a multiple of 32. With stride <= 8 words
// consecutive lanes are at most one sector apart, so a request touches every sector from its
// first word to its last; with stride >= 8 every lane has a sector of its own.
int64_t sectors_requested(const Pattern& p) {
  int64_t sectors = 0;
  for (int64_t t0 = 0; t0 < p.count; t0 += 32) {
    const int64_t lanes = std::min<int64_t>(32, p.count - t0);
    if (p.stride >= 8) {
      sectors += lanes;
    } else {
      const int64_t lo = p.first + t0 * p.stride, hi = p.first + (t0 + lanes - 1) * p.stride;
      sectors += hi / 8 - lo / 8 + 1;
    }
  }
  return sectors;
}

// The sweeps' patterns: strides over the whole buffer; windows of one length at offsets 0..32.
std::vector<Pattern> stride_patterns(int64_t n, bool quick) {
  const std::vector<int64_t> strides =
      quick ? std::vector<int64_t>{1, 2, 3, 8, 32, 256}
            : std::vector<int64_t>{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128, 256};
  std::vector<Pattern> out;
  for (int64_t s : strides) out.push_back({0, s, (n + s - 1) / s});
  return out;
}

int64_t max_offset(int64_t n) { return std::min<int64_t>(32, n - 1); }

std::vector<Pattern> offset_patterns(int64_t n, bool quick) {
  std::vector<Pattern> out;
  for (int64_t o = 0; o <= max_offset(n); ++o)
    if (!quick || o == 0 || o == 1 || o == 3 || o == 8 || o == 31 || o == 32)
      out.push_back({o, 1, n - max_offset(n)});
  return out;
}

// The columns both sweeps share: time, useful and sector GB/s, useful GB/s as % of the copy.
std::vector<gpu100::Cell> rate_cells(const Pattern& p, const gpu100::Measured& r,
                                     double copy_gbps) {
  const double ms = r.time.median_ms;
  const double useful = 4.0 * double(p.count), moved = 32.0 * double(sectors_requested(p));
  return {ms, gpu100::gbps(useful, ms), gpu100::gbps(moved, ms),
          100.0 * gpu100::gbps(useful, ms) / copy_gbps};
}

// Under the emulator, each row also shows the sectors it counted beside the model's: the checked
// run's global load sectors, in total and per request.
const std::vector<std::string> kEmulatedColumns = {"model sectors", "emulated sectors",
                                                   "emulated sectors/request"};
void add_emulated_cells(std::vector<gpu100::Cell>& row, const Pattern& p,
                        const gpu100::Measured& r) {
  if (!r.metrics) return;
  row.emplace_back((long long)sectors_requested(p));
  if (r.metrics->global_load_requests == 0) {
    row.insert(row.end(), {"-", "-"});
    return;
  }
  row.emplace_back(r.metrics->global_load_sectors);
  row.emplace_back(double(r.metrics->global_load_sectors) /
                   double(r.metrics->global_load_requests));
}
void add_emulated_columns(gpu100::Table& t, const std::vector<gpu100::Measured>& rs) {
  if (!rs.empty() && rs.front().metrics)
    t.columns.insert(t.columns.end(), kEmulatedColumns.begin(), kEmulatedColumns.end());
}

gpu100::Table stride_table(const std::vector<Pattern>& ps, const std::vector<gpu100::Measured>& rs,
                           double copy_gbps) {
  gpu100::Table t{"stride sweep: elements 0, s, 2s, ... of n words (useful = 4 B per element)",
                  {"stride (words)", "ms", "useful GB/s", "sector GB/s (32 B sectors requested)",
                   "% of copy (useful GB/s)", "% useful of sector bytes (model)"},
                  {}};
  add_emulated_columns(t, rs);
  for (size_t i = 0; i < ps.size(); ++i) {
    std::vector<gpu100::Cell> row{(long long)ps[i].stride};
    for (auto& c : rate_cells(ps[i], rs[i], copy_gbps)) row.push_back(c);
    row.emplace_back(100.0 * 4.0 * double(ps[i].count) / (32.0 * double(sectors_requested(ps[i]))));
    add_emulated_cells(row, ps[i], rs[i]);
    t.add_row(std::move(row));
  }
  return t;
}

gpu100::Table offset_table(int64_t n, const std::vector<Pattern>& ps,
                           const std::vector<gpu100::Measured>& rs, double copy_gbps) {
  gpu100::Table t{
      fmt::format("offset sweep: n - {} consecutive words starting at word `offset`",
                  max_offset(n)),
      {"offset (words)", "ms", "useful GB/s", "sector GB/s (32 B sectors requested)",
       "% of copy (useful GB/s)", "model sectors/request"},
      {}};
  add_emulated_columns(t, rs);
  for (size_t i = 0; i < ps.size(); ++i) {
    std::vector<gpu100::Cell> row{(long long)ps[i].first};
    for (auto& c : rate_cells(ps[i], rs[i], copy_gbps)) row.push_back(c);
    // Sectors of the first full warp request: 4 for aligned consecutive words, 5 when misaligned.
    row.emplace_back((long long)sectors_requested({ps[i].first, 1, 32}));
    add_emulated_cells(row, ps[i], rs[i]);
    t.add_row(std::move(row));
  }
  return t;
}

// A sweep passes only if every one of its points matched the CPU.
gpu100::CheckResult all_points(const std::vector<gpu100::Measured>& rs) {
  gpu100::CheckResult c;
  for (const auto& r : rs) c = gpu100::combine(c, r.check);
  return c;
}

// A version or a sweep point: the pattern summed on the GPU, the total checked exactly.
gpu100::Measure measure_sum(std::string name, bool vec4, const Pattern& p, int64_t expected,
                            gpu100::Role role, const gpu100::DeviceBuffer<int32_t>& d_in,
                            gpu100::DeviceBuffer<int64_t>& d_partials) {
  return {.name = std::move(name),
          .launch = [&d_in, &d_partials, vec4, p, grid = grid_of(vec4)](cudaStream_t s) {
            launch(vec4, grid, d_in.data(), p, d_partials.data(), s);
          },
          .reset = [&d_partials] { d_partials.poison(); },
          .check = [&d_partials, expected, grid = grid_of(vec4)] {
            const auto partials = d_partials.download();
            const int64_t got =
                std::accumulate(partials.begin(), partials.begin() + grid, int64_t(0));
            return gpu100::compare_exact(&got, &expected, 1);
          },
          .work = 4.0 * double(p.count),
          .role = role};
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("bandwidth vs access stride and misalignment: strided and offset sums of int32");
  int64_t n = (int64_t(1) << 27) + 3;
  cli.size("n", n, 1'000'003, "number of 4-byte words in the buffer the patterns read");
  cli.kernels(kernel_names());
  cli.device_bytes([&] { return 4.0 * double(n) + double(1 << 20); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.problem("n", double(n));
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");

    const auto x = gpu100::random_ints(size_t(n), ctx.seed(), 1, 1023);
    const Reference ref(x);
    gpu100::DeviceBuffer<int32_t> d_in(x);
    gpu100::DeviceBuffer<int64_t> d_partials(std::max(grid_of(false), grid_of(true)));
    // Baseline: the copy of the whole buffer (its rate counts the read and the write).
    const double copy_gbps = ctx.copy_baseline(size_t(n) * sizeof(int32_t)).gbps;

    auto sum_of = [&](std::string name, bool vec4, const Pattern& p, int64_t expected,
                      gpu100::Role role) {
      return measure_sum(std::move(name), vec4, p, expected, role, d_in, d_partials);
    };

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      const Pattern p = pattern_of(v, n);
      runs.push_back(sum_of(v.name, v.vec4, p, ref.sum(p), gpu100::Role::version));
    }
    ctx.measure_all(runs);

    if (ctx.want("stride_sweep")) {
      const auto ps = stride_patterns(n, ctx.quick());
      std::vector<gpu100::Measure> points;
      for (const Pattern& p : ps)
        points.push_back(sum_of(fmt::format("stride {}", p.stride), false, p, ref.sum(p),
                                gpu100::Role::point));
      const auto rs = ctx.measure_all(points);
      report.table(stride_table(ps, rs, copy_gbps));
      report.add_check("stride_sweep", all_points(rs));
    }
    if (ctx.want("offset_sweep")) {
      const auto ps = offset_patterns(n, ctx.quick());
      const auto window = ref.window_sums(n - max_offset(n), max_offset(n));
      std::vector<gpu100::Measure> points;
      for (const Pattern& p : ps)
        points.push_back(sum_of(fmt::format("offset {}", p.first), false, p,
                                window[size_t(p.first)], gpu100::Role::point));
      const auto rs = ctx.measure_all(points);
      report.table(offset_table(n, ps, rs, copy_gbps));
      report.add_check("offset_sweep", all_points(rs));
    }

    report.note(
        "useful GB/s counts the 4-byte words the pattern sums; sector GB/s counts the "
        "32-byte sectors its warp requests touch (model, not a counter); the limit is the "
        "HBM peak, the baseline a device-to-device copy of the buffer in this run");
    report.note(
        "timings include only the kernel (one partial sum per block); the host adds the "
        "partials and checks the total exactly against the CPU");
  });
}
