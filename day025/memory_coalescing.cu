// Day 025 - memory coalescing: bandwidth against the access stride and the misalignment
//
// A warp's load instruction is served in 32-byte sectors: the L1 collects the addresses of the 32
// lanes, asks the L2 for every 32-byte sector they touch, and the L2 fetches missing sectors from
// DRAM. When the 32 lanes read 32 consecutive 4-byte words, that is 4 sectors for 128 useful bytes:
// every byte moved is used. When lane k reads word k * s, the same 128 useful bytes need
// min(32, ceil(32 s / 8)) sectors, so the useful bandwidth should fall like 1/s until s = 8 (one
// word per sector) and then stay flat: from there on every word costs a whole sector (and the DRAM
// may move even more: it fetches in granules of 64 bytes or more). A start that is not a multiple
// of 8 words makes every warp request straddle one more sector (5 instead of 4), but neighbouring
// warps read that sector anyway, so the DRAM traffic barely changes: on a GPU with a large L2 the
// misalignment should cost little. The day measures both curves.
//
// Every kernel reads 4-byte integers with its pattern and sums them (int64 in a register, one
// partial sum per block); the host adds the partials and compares the total with the CPU sum of
// the same elements, exactly. A sum reads and writes nothing else, so its time is the time of
// the reads. Each thread keeps kUnroll independent loads in flight, so the coalesced case can
// reach the copy bandwidth and the strided cases are limited by the sectors, not by latency -
// as long as every thread has a few trips of kUnroll elements. The grid stays the same for all
// strides, so at n = 2^27 on an H100 (132 SMs x 2048 threads) a thread has about 8 elements at
// stride 64 and 2 at stride 256: those rows mix in load latency and launch cost, and read
// lower than the sector model alone says.
//
// Versions (main table; rate = useful bytes, 4 per element read, per second)
//   coalesced   stride 1, offset 0: word t for thread t. The reference point.
//   misaligned  stride 1, starting at word 1: every warp request touches 5 sectors.
//   stride2     every second word: half of each sector is wasted.
//   stride32    one word per 128-byte line: 1/8 of each sector is used.
//   vector4     stride 1 read as int4 (16-byte loads, ld.global.v4): a quarter of the load
//               instructions for the same sectors; should match or beat `coalesced`.
// Sweeps (tables; the same kernel as the first four versions)
//   stride_sweep  strides 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128, 256 words over one
//                 buffer of n words: the elements 0, s, 2s, ... < n.
//   offset_sweep  n - 32 consecutive words starting at word 0, 1, ..., 32.
// Each sweep row: time, useful GB/s, the GB/s of the 32-byte sectors the warp requests touch
// (counted by the model above, what Nsight Compute calls l1tex sectors), and the useful rate as
// % of the device-to-device copy measured in the same run (its rate counts read + write bytes).
//
// Check: the inputs are random integers 1..1023, so every sum is exact; the CPU adds the same
// elements in int64 and every version and every sweep point must match it exactly.
//
// Run:  build/bin/day025 [--n 134217731] [--kernel coalesced,stride_sweep] [--json out.json]
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;
constexpr int kUnroll = 8;  // independent loads per thread per loop trip

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
// main checks) plus the n % 4 leftover words as scalars.
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

// ---- host side ------------------------------------------------------------------------------

struct Pattern {
  int64_t first = 0, stride = 1, count = 0;
};

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

// Sectors of the first full warp request: 4 for aligned consecutive words, 5 when misaligned.
int64_t sectors_per_request(int64_t first, int64_t stride) {
  return sectors_requested({first, stride, 32});
}

// CPU sums. For strides that divide kPeriod, the sum of the words i < n with i % s == 0 is the
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

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("bandwidth vs access stride and misalignment: strided and offset sums of int32");
  int64_t n = (int64_t(1) << 27) + 3;
  cli.size("n", n, 1'000'003, "number of 4-byte words in the buffer the patterns read");
  cli.kernels({"coalesced", "misaligned", "stride2", "stride32", "vector4", "stride_sweep",
               "offset_sweep"});
  cli.device_bytes([&] { return 4.0 * double(n) + double(1 << 20); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.problem("n", double(n));
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");

    const auto x = gpu100::random_ints(size_t(n), ctx.seed(), 1, 1023);
    const Reference ref(x);
    gpu100::DeviceBuffer<int32_t> d_in(x);
    if (!gpu100::is_aligned(d_in.data(), sizeof(int4)))
      throw std::runtime_error("sum_vec4 needs a 16-byte aligned buffer");

    // One grid for every pattern: as many blocks as fit at once (the kernels are grid-stride).
    const unsigned grid_strided = gpu100::resident_grid(sum_strided, kBlock);
    const unsigned grid_vec4 = gpu100::resident_grid(sum_vec4, kBlock);
    gpu100::DeviceBuffer<int64_t> d_partials(std::max(grid_strided, grid_vec4));
    auto gpu_total = [&](unsigned grid) {
      std::vector<int64_t> partials(grid);
      d_partials.download(partials.data(), grid);
      return std::accumulate(partials.begin(), partials.end(), int64_t(0));
    };
    auto check_total = [&](unsigned grid, int64_t expected) {
      const int64_t got = gpu_total(grid);
      return gpu100::compare_exact(&got, &expected, 1);
    };

    // Baseline: the copy of the whole buffer (its rate counts the read and the write).
    const double copy_gbps = ctx.copy_baseline(size_t(n) * sizeof(int32_t)).gbps;

    auto launch_pattern = [&](const Pattern& p) {
      return [&, p](cudaStream_t s) {
        sum_strided<<<grid_strided, kBlock, 0, s>>>(d_in.data(), p.first, p.stride, p.count,
                                                    d_partials.data());
        LAUNCH_CHECK();
      };
    };
    auto strided = [&](int64_t stride) { return Pattern{0, stride, (n + stride - 1) / stride}; };

    // ---- main versions ----------------------------------------------------------------------
    const struct {
      const char* name;
      Pattern p;
    } versions[] = {
        {"coalesced", strided(1)},
        {"misaligned", Pattern{1, 1, n - 1}},
        {"stride2", strided(2)},
        {"stride32", strided(32)},
    };
    for (const auto& v : versions) {
      ctx.run_version(
          v.name, launch_pattern(v.p), [&] { d_partials.poison(); },
          [&] { return check_total(grid_strided, ref.sum(v.p)); }, 4.0 * double(v.p.count));
    }
    ctx.run_version(
        "vector4",
        [&](cudaStream_t s) {
          sum_vec4<<<grid_vec4, kBlock, 0, s>>>(d_in.data(), n, d_partials.data());
          LAUNCH_CHECK();
        },
        [&] { d_partials.poison(); }, [&] { return check_total(grid_vec4, ref.sum(strided(1))); },
        4.0 * double(n));

    // ---- sweeps -----------------------------------------------------------------------------
    // One row: check the pattern once, then time it; a wrong sum anywhere fails the sweep. Under
    // the emulator, the checked run's counts are left in `counted`, and each row shows the
    // sectors the emulator counted beside the model's.
    std::optional<gpu100::EmuMetrics> counted;
    auto measure = [&](const Pattern& p, int64_t expected, gpu100::CheckResult& sweep_check) {
      d_partials.poison();
      const gpu100::EmuMetricsScope scope;
      launch_pattern(p)(nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      counted = scope.take();
      const auto c = check_total(grid_strided, expected);
      sweep_check = sweep_check.checked ? gpu100::combine(sweep_check, c) : c;
      return ctx.bench(launch_pattern(p));
    };
    const bool emulated = ctx.device().emulated;
    const std::vector<std::string> emulated_columns = {"model sectors", "emulated sectors",
                                                       "emulated sectors/request"};
    auto add_emulated = [&](std::vector<gpu100::Cell>& row, const Pattern& p) {
      if (!emulated) return;
      row.emplace_back((long long)sectors_requested(p));
      if (!counted || counted->global_load_requests == 0) {
        row.insert(row.end(), {"-", "-"});
        return;
      }
      row.emplace_back(counted->global_load_sectors);
      row.emplace_back(double(counted->global_load_sectors) / double(counted->global_load_requests));
    };

    if (ctx.want("stride_sweep")) {
      const std::vector<int64_t> strides =
          ctx.quick() ? std::vector<int64_t>{1, 2, 3, 8, 32, 256}
                      : std::vector<int64_t>{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128, 256};
      gpu100::Table t{
          "stride sweep: elements 0, s, 2s, ... of n words (useful = 4 B per element)",
          {"stride (words)", "ms", "useful GB/s", "sector GB/s (32 B sectors requested)",
           "% of copy (useful GB/s)", "% useful of sector bytes (model)"},
          {}};
      if (emulated) t.columns.insert(t.columns.end(), emulated_columns.begin(), emulated_columns.end());
      gpu100::CheckResult check;
      for (int64_t s : strides) {
        const Pattern p = strided(s);
        const auto time = measure(p, ref.sum(p), check);
        const double useful = 4.0 * double(p.count), moved = 32.0 * double(sectors_requested(p));
        std::vector<gpu100::Cell> row{(long long)s, time.median_ms,
                                      gpu100::gbps(useful, time.median_ms),
                                      gpu100::gbps(moved, time.median_ms),
                                      100.0 * gpu100::gbps(useful, time.median_ms) / copy_gbps,
                                      100.0 * useful / moved};
        add_emulated(row, p);
        t.add_row(std::move(row));
      }
      report.table(std::move(t));
      report.add_check("stride_sweep", check);
    }

    if (ctx.want("offset_sweep")) {
      // Every offset reads the same number of words, so the rows differ only in alignment.
      const int64_t max_offset = std::min<int64_t>(32, n - 1);
      std::vector<int64_t> offsets;
      if (ctx.quick()) {
        for (int64_t o : {0, 1, 3, 8, 31, 32})
          if (o <= max_offset) offsets.push_back(o);
      } else {
        for (int64_t o = 0; o <= max_offset; ++o) offsets.push_back(o);
      }
      gpu100::Table t{
          "offset sweep: n - " + std::to_string(max_offset) +
              " consecutive words starting at word `offset`",
          {"offset (words)", "ms", "useful GB/s", "sector GB/s (32 B sectors requested)",
           "% of copy (useful GB/s)", "model sectors/request"},
          {}};
      if (emulated) t.columns.insert(t.columns.end(), emulated_columns.begin(), emulated_columns.end());
      const auto window = ref.window_sums(n - max_offset, max_offset);
      gpu100::CheckResult check;
      for (int64_t o : offsets) {
        const Pattern p{o, 1, n - max_offset};
        const auto time = measure(p, window[size_t(o)], check);
        const double useful = 4.0 * double(p.count), moved = 32.0 * double(sectors_requested(p));
        std::vector<gpu100::Cell> row{(long long)o, time.median_ms,
                                      gpu100::gbps(useful, time.median_ms),
                                      gpu100::gbps(moved, time.median_ms),
                                      100.0 * gpu100::gbps(useful, time.median_ms) / copy_gbps,
                                      (long long)sectors_per_request(o, 1)};
        add_emulated(row, p);
        t.add_row(std::move(row));
      }
      report.table(std::move(t));
      report.add_check("offset_sweep", check);
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
