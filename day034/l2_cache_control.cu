// Day 034 - L2 cache control: a persisting access-policy window, and tile launch order in a GEMM
//
// The L2 (50 MiB on an H100) sits between every SM and HBM. Two ways to make better use of it:
//
// 1. Tell the hardware what to keep. Since Ampere a slice of L2 can be set aside for "persisting"
//    lines (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, bytes)), and a stream can carry an
//    access-policy window: an address range whose accesses are tagged hitProp (persisting: kept
//    in the set-aside slice) for a fraction hitRatio of its lines and missProp (streaming: first
//    to go) for the rest. Workload: out[i] = stream[i] + hot[i mod hot_n], a large buffer read
//    once and a hot buffer of about half the L2 read again and again; without a window the hot
//    buffer comes from HBM every time (12 bytes of DRAM traffic per element), with it from L2 (8).
//
// 2. Schedule for locality. A tiled GEMM launches one block per output tile, and the mapping
//    blockIdx -> tile decides which tiles run at the same time. Row-major order runs a few full
//    rows of tiles at once, which read a few panels of A but ALL of B; grouped order (walk GROUP
//    tile rows column by column) with GROUP near the square root of the blocks resident at once
//    runs a square patch, which reads far fewer panels of each. Same kernel; only tile_of()
//    differs (group 1 IS row-major order).
//
// Versions (the main table reports speedups: unit "x", each pair against its first member)
//   no_window    the stream + hot kernel on a stream without a policy window (reference, 1.00).
//   persisting   the same launch on a stream whose window covers the hot buffer, hitRatio =
//                min(1, set-aside / window); not applicable (a note) without a persisting L2.
//   row_order    64x64-tile SGEMM (4x4 outputs per thread, 16-deep K steps through shared
//                memory), tiles in row-major order (reference, 1.00).
//   grouped      the same kernel with tiles in groups of --group tile rows (default: the integer
//                nearest sqrt(resident blocks)).
// Tables: the hit-ratio sweep (ms, effective GB/s vs HBM peak, speedup) and the group-size sweep
// (ms, TFLOP/s vs FP32 peak, speedup).
//
// Check: the stream kernel exactly (one float addition, correctly rounded on both sides); the GEMM
// against a double CPU reference at sampled entries (gpu100::check_gemm, gemm_tolerance(k)). Any
// M, N, K and buffer lengths (partial tiles are zero-padded and their stores guarded).
//
// Run:  build/bin/day034 [--elements 67108875 --hot-fraction 0.5] [--m 4096 --n 4096 --k 4096
//                         --group 0] [--kernel persisting,grouped]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"
#include "gpu100/stream.h"

namespace {

constexpr int kStreamBlock = 256;
constexpr int kTile = 64;          // output tile kTile x kTile per block
constexpr int kTileK = 16;         // K depth of one shared-memory step
constexpr int kGemmThreads = 256;  // 16 x 16 threads, 4 x 4 outputs each
constexpr int kMicro = 4;
static_assert(kTile == 16 * kMicro && kGemmThreads == 256, "the thread layout is 16 x 16");
static_assert(kTile * kTileK == 4 * kGemmThreads, "each thread loads 4 elements of each tile");

// ---- CPU reference ------------------------------------------------------------------------------
// Part 1's result; part 2's reference is gpu100::check_gemm's, at sampled entries.
std::vector<float> stream_plus_hot_cpu(const std::vector<float>& stream,
                                       const std::vector<float>& hot) {
  std::vector<float> out(stream.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = stream[i] + hot[i % hot.size()];
  return out;
}

// ---- kernels ------------------------------------------------------------------------------------
// Part 1: a large stream plus a hot buffer.
// out[i] = stream[i] + hot[i mod hot_n]. j follows i mod hot_n without a division per element:
// i advances by the grid stride, so j advances by stride mod hot_n and wraps at most once.
__global__ void __launch_bounds__(kStreamBlock)
    stream_plus_hot(const float* __restrict__ stream, const float* __restrict__ hot,
                    float* __restrict__ out, int64_t n, int64_t hot_n) {
  const int64_t stride = int64_t(gridDim.x) * kStreamBlock;
  const int64_t step = stride % hot_n;
  int64_t i = int64_t(blockIdx.x) * kStreamBlock + threadIdx.x;
  int64_t j = i % hot_n;
  for (; i < n; i += stride) {
    out[i] = stream[i] + hot[j];
    j += step;
    if (j >= hot_n) j -= hot_n;
  }
}

// Part 2: a simple tiled SGEMM whose only variable is the tile order.
// Block b -> output tile (tm, tn). Tiles are taken in groups of `group` tile rows; inside a group
// column by column (down the group's rows first). group = 1 is plain row-major order. The last
// group may have fewer rows.
__device__ __forceinline__ void tile_of(int64_t b, int64_t tiles_m, int64_t tiles_n, int64_t group,
                                        int64_t& tm, int64_t& tn) {
  const int64_t per_group = group * tiles_n;
  const int64_t first_m = (b / per_group) * group;
  const int64_t rows = min(tiles_m - first_m, group);
  const int64_t in_group = b % per_group;
  tm = first_m + in_group % rows;
  tn = in_group / rows;
}

// C[M x N] = A[M x K] * B[K x N], all row-major. The A tile is stored transposed (As[k][m]) so that
// a thread reads its 4 rows of one k as one float4; the + 4 padding spreads the transposing
// stores over 16 banks instead of 2 and keeps rows 16-byte aligned.
__global__ void __launch_bounds__(kGemmThreads, 4)
    gemm_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
               int M, int N, int K, int group) {
  __shared__ __align__(16) float As[kTileK][kTile + 4];
  __shared__ __align__(16) float Bs[kTileK][kTile];
  const int64_t tiles_m = (M + kTile - 1) / kTile, tiles_n = (N + kTile - 1) / kTile;
  int64_t tm, tn;
  tile_of(blockIdx.x, tiles_m, tiles_n, min(int64_t(group), tiles_m), tm, tn);
  const int row0 = int(tm) * kTile, col0 = int(tn) * kTile;
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;

  float acc[kMicro][kMicro] = {};
  for (int k0 = 0; k0 < K; k0 += kTileK) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int idx = tid + r * kGemmThreads;
      const int am = idx / kTileK, ak = idx % kTileK;  // A tile: 64 rows x 16 columns
      const int gm = row0 + am, gk = k0 + ak;
      As[ak][am] = gm < M && gk < K ? A[int64_t(gm) * K + gk] : 0.0f;
      const int bk = idx / kTile, bn = idx % kTile;  // B tile: 16 rows x 64 columns
      const int gk2 = k0 + bk, gn = col0 + bn;
      Bs[bk][bn] = gk2 < K && gn < N ? B[int64_t(gk2) * N + gn] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTileK; ++kk) {
      const float4 a = *reinterpret_cast<const float4*>(&As[kk][ty * kMicro]);
      const float4 b = *reinterpret_cast<const float4*>(&Bs[kk][tx * kMicro]);
      const float av[kMicro] = {a.x, a.y, a.z, a.w};
      const float bv[kMicro] = {b.x, b.y, b.z, b.w};
#pragma unroll
      for (int i = 0; i < kMicro; ++i)
#pragma unroll
        for (int j = 0; j < kMicro; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    __syncthreads();  // before the next step overwrites the tiles others may still read
  }
#pragma unroll
  for (int i = 0; i < kMicro; ++i) {
    const int r = row0 + ty * kMicro + i;
    if (r >= M) break;
#pragma unroll
    for (int j = 0; j < kMicro; ++j) {
      const int c = col0 + tx * kMicro + j;
      if (c < N) C[int64_t(r) * N + c] = acc[i][j];
    }
  }
}

// ---- launchers ----------------------------------------------------------------------------------
// The persisting set-aside slice for the lifetime of the object; on the way out every persisting
// line is demoted and the limit set back to what it was (0 in a fresh context), so nothing after
// this (the GEMM, another program) runs with a smaller normal L2. A device can list a persisting
// maximum and still refuse the limit (a shared GPU, e.g. under MPS): then granted() is 0, error()
// says why, the destructor touches nothing, and the day reports the version as not applicable
// instead of failing.
class PersistingL2 {
 public:
  explicit PersistingL2(size_t bytes) {
    if (cudaDeviceGetLimit(&previous_, cudaLimitPersistingL2CacheSize) != cudaSuccess) {
      previous_ = 0;
      (void)cudaGetLastError();
    }
    error_ = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, bytes);
    if (error_ != cudaSuccess) {
      (void)cudaGetLastError();  // not sticky: clear it so later checks do not see it
      return;
    }
    set_ = true;
    CUDA_CHECK(cudaDeviceGetLimit(&granted_, cudaLimitPersistingL2CacheSize));
  }
  ~PersistingL2() {
    if (!set_) return;
    cudaDeviceSynchronize();
    cudaCtxResetPersistingL2Cache();
    cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, previous_);
    // A failure here (no check: destructors must not throw) would otherwise stay the "last error"
    // and make the next LAUNCH_CHECK, at an unrelated GEMM launch, fail the day.
    (void)cudaGetLastError();
  }
  PersistingL2(const PersistingL2&) = delete;
  PersistingL2& operator=(const PersistingL2&) = delete;
  size_t granted() const { return granted_; }
  cudaError_t error() const { return error_; }

 private:
  size_t granted_ = 0, previous_ = 0;
  bool set_ = false;
  cudaError_t error_ = cudaSuccess;
};

// The window is a stream attribute, so the kernel runs on a stream of our own (gpu100::Stream, a
// non-blocking stream: the legacy default stream that measurements use by default is no place
// for it; ctx.measure synchronizes the device after poisoning, on the legacy stream, before it
// launches on this one).
void set_window(cudaStream_t s, const void* base, size_t bytes, float hit_ratio) {
  cudaStreamAttrValue v{};
  v.accessPolicyWindow.base_ptr = const_cast<void*>(base);
  v.accessPolicyWindow.num_bytes = bytes;  // 0 removes the window
  v.accessPolicyWindow.hitRatio = hit_ratio;
  v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  CUDA_CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
}

void launch_stream_plus_hot(unsigned grid, const float* stream, const float* hot, float* out,
                            int64_t n, int64_t hot_n, cudaStream_t s) {
  stream_plus_hot<<<grid, kStreamBlock, 0, s>>>(stream, hot, out, n, hot_n);
  LAUNCH_CHECK();
}

void launch_gemm(int64_t tiles, const float* A, const float* B, float* C, int64_t m, int64_t n,
                 int64_t k, int group, cudaStream_t s) {
  gemm_tiled<<<unsigned(tiles), kGemmThreads, 0, s>>>(A, B, C, int(m), int(n), int(k), group);
  LAUNCH_CHECK();
}

struct Version {
  const char* name;
};
const Version kVersions[] = {{"no_window"}, {"persisting"}, {"row_order"}, {"grouped"}};

// The speedup of a run over its pair's reference, as the main table's rate.
std::function<double(double)> speedup_over(double reference_ms) {
  return [reference_ms](double ms) { return ms > 0 ? reference_ms / ms : 0.0; };
}

// ---- analysis: part 1, the persisting window ----------------------------------------------------
// The hot buffer: about hot_fraction of the L2, odd (so i mod hot_n runs through every offset of
// a line), at most the stream.
int64_t hot_elements(int64_t elements, double hot_fraction, size_t l2_bytes) {
  return std::min<int64_t>(
      elements,
      std::max<int64_t>(1, int64_t(hot_fraction * double(l2_bytes) / sizeof(float))) | 1);
}

// no_window, persisting and the hit-ratio sweep. The reference first, before any line has been
// made persisting, and checked whether or not it was selected: the speedups rest on it.
void persisting_window(gpu100::Context& ctx, int64_t elements, double hot_fraction) {
  auto& report = ctx.report();
  const auto& dev = ctx.device();
  const int64_t hot_n = hot_elements(elements, hot_fraction, dev.l2_bytes);
  const auto stream_in = gpu100::random_floats(size_t(elements), ctx.seed(), -1.0f, 1.0f);
  const auto hot_in = gpu100::random_floats(size_t(hot_n), ctx.seed() + 1, -1.0f, 1.0f);
  const auto ref = stream_plus_hot_cpu(stream_in, hot_in);
  gpu100::DeviceBuffer<float> d_stream(stream_in), d_hot(hot_in), d_out{size_t(elements)};
  const unsigned grid = std::min(gpu100::resident_grid(stream_plus_hot, kStreamBlock),
                                 gpu100::grid_for(elements, kStreamBlock));
  // The window is a stream attribute, so the kernel runs on a stream of its own.
  gpu100::Stream stream;
  auto run = [&](std::string name, std::function<double(double)> rate, gpu100::Role role) {
    return gpu100::Measure{
        .name = std::move(name),
        .launch =
            [&](cudaStream_t s) {
              launch_stream_plus_hot(grid, d_stream.data(), d_hot.data(), d_out.data(), elements,
                                     hot_n, s);
            },
        .reset = [&] { d_out.poison(); },
        .check = [&] { return gpu100::compare_exact(d_out.download(), ref); },
        .rate = std::move(rate),
        .role = role,
        .stream = stream.get()};
  };
  // Effective rate: the bytes the kernel asks for (stream, hot and out: 12 per element), some of
  // which the L2 may serve; above the HBM peak only because of that.
  const double bytes = 12.0 * double(elements);
  const double peak = dev.peak_dram_gbps();
  report.note(fmt::format("stream + hot: {:.0f} MiB streamed, hot buffer {:.1f} MiB ({:.2f} of the "
                          "L2), grid {} x {}",
                          4.0 * double(elements) / (1 << 20), 4.0 * double(hot_n) / (1 << 20),
                          4.0 * double(hot_n) / double(dev.l2_bytes), grid, kStreamBlock));

  const bool listed = ctx.want("no_window");
  const gpu100::Measured base = ctx.measure(
      run("no_window", [](double) { return 1.0; },
          listed ? gpu100::Role::version : gpu100::Role::point));
  if (!listed) report.add_check("no_window (reference of the speedups)", base.check);
  const double base_gbps = gpu100::gbps(bytes, base.time.median_ms);
  report.note(fmt::format("no_window: {:.1f} GB/s effective = {:.1f} % of the HBM peak ({:.0f} "
                          "GB/s); model: 12 bytes of DRAM traffic per element",
                          base_gbps, 100.0 * base_gbps / peak, peak));
  if (!ctx.want("persisting")) return;

  int max_persisting = 0, max_window = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, dev.id));
  CUDA_CHECK(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, dev.id));
  if (max_persisting <= 0 || max_window <= 0) {
    report.note(fmt::format("persisting: not applicable, {} has no persisting L2 "
                            "(cudaDevAttrMaxPersistingL2CacheSize = 0)",
                            dev.name));
    return;
  }
  const size_t hot_bytes = size_t(hot_n) * sizeof(float);
  const size_t window = std::min(hot_bytes, size_t(max_window));
  PersistingL2 setaside(std::min(window, size_t(max_persisting)));
  if (setaside.granted() == 0) {
    report.note(fmt::format("persisting: not applicable, cudaDeviceSetLimit("
                            "cudaLimitPersistingL2CacheSize) granted no set-aside ({})",
                            cudaGetErrorName(setaside.error())));
    return;
  }
  const float ratio =
      float(std::min(1.0, double(setaside.granted()) / double(std::max<size_t>(window, 1))));
  report.note(fmt::format("persisting: set-aside {:.1f} MiB (device maximum {:.1f} MiB), window "
                          "{:.1f} MiB (maximum {:.1f} MiB), hitRatio {:.3f} = min(1, set-aside / "
                          "window); hitProp persisting, missProp streaming",
                          double(setaside.granted()) / (1 << 20),
                          double(max_persisting) / (1 << 20), double(window) / (1 << 20),
                          double(max_window) / (1 << 20), ratio));
  report.note(
      "persisting lines survive the L2 flush between timed runs (normal reads cannot evict "
      "them): each run after the first starts with the hot buffer in L2, which is what "
      "persistence is for");
  set_window(stream.get(), d_hot.data(), window, ratio);
  ctx.measure(run("persisting", speedup_over(base.time.median_ms), gpu100::Role::version));

  gpu100::Table sweep{fmt::format("persisting window: hit ratio sweep (hot buffer {:.1f} MiB, "
                                  "set-aside {:.1f} MiB)",
                                  double(hot_bytes) / (1 << 20),
                                  double(setaside.granted()) / (1 << 20)),
                      {"hitRatio", "ms", "effective GB/s", "% of HBM peak",
                       "speedup (x) vs no window"},
                      {}};
  gpu100::CheckResult all;
  for (float r : {0.0f, 0.25f, 0.5f, 0.75f, 1.0f}) {
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaCtxResetPersistingL2Cache());  // start each point without persisting lines
    set_window(stream.get(), d_hot.data(), window, r);
    const gpu100::Measured p = ctx.measure(
        run(fmt::format("hitRatio {}", r), speedup_over(base.time.median_ms), gpu100::Role::point));
    all = gpu100::combine(all, p.check);
    const double g = gpu100::gbps(bytes, p.time.median_ms);
    sweep.add_row({double(r), p.time.median_ms, g, 100.0 * g / peak, p.rate});
  }
  set_window(stream.get(), d_hot.data(), 0, 0.0f);
  report.add_check("persisting hit-ratio sweep (every point)", all);
  report.table(std::move(sweep));
}

// ---- analysis: part 2, the tile order -----------------------------------------------------------
// The group of the grouped order: --group, or the integer nearest sqrt(resident blocks), so the
// blocks running at once cover a square patch; at most the tile rows.
int grouped_group(int group, unsigned resident, int64_t tiles_m) {
  const int64_t auto_g = std::max<int64_t>(1, std::llround(std::sqrt(double(resident))));
  return int(std::min<int64_t>(group > 0 ? int64_t(group) : auto_g, tiles_m));
}

// What the resident blocks cover in grouped and in row order.
std::string grouped_note(int group, int grouped_g, unsigned resident, int64_t tiles,
                         int64_t tiles_m) {
  const double tiles_n = double(tiles / tiles_m), r = double(resident);
  std::string how = group > 0 ? " (--group, at most the tile rows)"
                              : fmt::format(" (the integer nearest sqrt({}) resident blocks, at "
                                            "most the tile rows)",
                                            resident);
  if (r < double(tiles))
    how += fmt::format(": the blocks resident at once cover about {:.1f} x {:.1f} tiles, in row "
                       "order {:.1f} x {:.0f} (tile rows x columns)",
                       std::max(double(grouped_g), r / tiles_n), std::min(r / grouped_g, tiles_n),
                       r / tiles_n, tiles_n);
  else
    how += ": every tile is resident at once, so the order can hardly matter";
  return fmt::format("grouped: group {}{}", grouped_g, how);
}

// The sweep's groups: 1, 2, 4, ..., 32 and the grouped version's; larger than the tile rows they
// are all the same order.
std::vector<int> sweep_groups(int grouped_g, int64_t tiles_m) {
  std::vector<int> groups = {1, 2, 4, 8, 16, 32};
  if (std::find(groups.begin(), groups.end(), grouped_g) == groups.end()) {
    groups.push_back(grouped_g);
    std::sort(groups.begin(), groups.end());
  }
  std::vector<int> out;
  for (int g : groups)
    if (g == 1 || g <= tiles_m) out.push_back(g);
  return out;
}

// row_order, grouped and the group sweep.
void tile_order(gpu100::Context& ctx, int64_t m, int64_t n, int64_t k, int group) {
  auto& report = ctx.report();
  const auto& dev = ctx.device();
  const auto A = gpu100::random_floats(size_t(m * k), ctx.seed() + 2);
  const auto B = gpu100::random_floats(size_t(k * n), ctx.seed() + 3);
  gpu100::DeviceBuffer<float> d_a(A), d_b(B), d_c{size_t(m * n)};
  const int64_t tiles_m = gpu100::ceil_div<int64_t>(m, kTile);
  const int64_t tiles = tiles_m * gpu100::ceil_div<int64_t>(n, kTile);
  const auto tol = gpu100::gemm_tolerance(k);
  auto run = [&](std::string name, int g, std::function<double(double)> rate, gpu100::Role role) {
    return gpu100::Measure{
        .name = std::move(name),
        .launch =
            [&, g](cudaStream_t s) {
              launch_gemm(tiles, d_a.data(), d_b.data(), d_c.data(), m, n, k, g, s);
            },
        .reset = [&] { d_c.poison(); },
        .check =
            [&] {
              return gpu100::check_gemm(d_c.download().data(), A.data(), B.data(), m, n, k, tol,
                                        ctx.seed());
            },
        .rate = std::move(rate),
        .role = role};
  };
  const double flops = gpu100::gemm_flops(m, n, k);
  const double peak = dev.peak_fp32_tflops();
  // The R blocks resident at once (R = 528 on an H100 with the 60 registers ptxas gives the
  // kernel today: 4 blocks per SM) cover G x R/G tiles in grouped order and R/tiles_n x tiles_n
  // in row order; the square patch, G = sqrt(R), reads the fewest A + B panels per wave.
  const unsigned resident = gpu100::resident_grid(gemm_tiled, kGemmThreads);
  const int grouped_g = grouped_group(group, resident, tiles_m);
  report.problem("group", double(grouped_g));

  const bool listed = ctx.want("row_order");
  const gpu100::Measured base = ctx.measure(run(
      "row_order", 1, [](double) { return 1.0; },
      listed ? gpu100::Role::version : gpu100::Role::point));
  if (!listed) report.add_check("row_order (reference of the speedups)", base.check);
  const double base_tf = gpu100::tflops(flops, base.time.median_ms);
  report.note(fmt::format("row_order: {:.2f} TFLOP/s = {:.1f} % of the FP32 peak ({:.1f} "
                          "TFLOP/s); {} tiles of 64 x 64, A {:.1f} MiB, B {:.1f} MiB",
                          base_tf, 100.0 * base_tf / peak, peak, tiles,
                          4.0 * double(m * k) / (1 << 20), 4.0 * double(k * n) / (1 << 20)));
  report.note(grouped_note(group, grouped_g, resident, tiles, tiles_m));
  const auto speedup = speedup_over(base.time.median_ms);
  if (ctx.want("grouped")) ctx.measure(run("grouped", grouped_g, speedup, gpu100::Role::version));

  gpu100::Table sweep{"GEMM tile order: tile rows per group (1 = row-major order)",
                      {"group", "ms", "TFLOP/s", "% of FP32 peak", "speedup (x) vs row order"},
                      {}};
  gpu100::CheckResult all;
  for (int g : sweep_groups(grouped_g, tiles_m)) {
    const gpu100::Measured r =
        g == 1 ? base
               : ctx.measure(run(fmt::format("group {}", g), g, speedup, gpu100::Role::point));
    if (g > 1) all = gpu100::combine(all, r.check);
    const double tf = gpu100::tflops(flops, r.time.median_ms);
    sweep.add_row({g, r.time.median_ms, tf, 100.0 * tf / peak, speedup(r.time.median_ms)});
  }
  if (all.checked) report.add_check("GEMM group sweep (every group size)", all);
  report.table(std::move(sweep));
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("persisting L2 access-policy window; grouped tile launch order in a tiled SGEMM");
  int64_t elements = (int64_t(1) << 26) + 11;
  int64_t m = 4096, n = 4096, k = 4096;
  double hot_fraction = 0.5;
  int group = 0;  // 0: about sqrt(resident blocks), the square patch (see part 2)
  cli.size("elements", elements, 1'000'003, "length of the streamed buffer (floats)");
  cli.size("m", m, 257, "GEMM rows of A and C", int64_t(1) << 20);
  cli.size("n", n, 131, "GEMM columns of B and C", int64_t(1) << 20);
  cli.size("k", k, 67, "GEMM columns of A, rows of B", int64_t(1) << 20);
  cli.option("hot-fraction", hot_fraction, "hot buffer size as a fraction of the L2 size", 0.001,
             8.0);
  cli.option("group", group,
             "tile rows per group in the grouped GEMM order (0: the integer nearest the square "
             "root of the blocks resident at once)",
             0, 1 << 20);
  cli.kernels_of(kVersions);
  cli.device_bytes([&] {
    return 12.0 * double(elements) + 4.0 * (double(m) * k + double(k) * n + double(m) * n);
  });
  cli.validate([&]() -> std::string {
    const double tiles = std::ceil(double(m) / kTile) * std::ceil(double(n) / kTile);
    return tiles < 2147483647.0 ? "" : "--m x --n needs more than 2^31 - 1 tiles (grid limit)";
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.problem("elements", double(elements));
    report.problem("m", double(m));
    report.problem("n", double(n));
    report.problem("k", double(k));
    report.unit("speedup (x)");
    report.note(
        "speedup (x) = time of the pair's reference / time: persisting vs no_window, "
        "grouped vs row_order (same kernel and launch, only the L2 policy or the tile order "
        "differs)");
    report.note(
        "limits of the speedups: persisting <= 1.5x (the traffic model: 12 -> 8 bytes of "
        "DRAM traffic per element, see the GB/s notes against the HBM peak); grouped has "
        "no model, its sweep gives TFLOP/s against the FP32 peak");
    if (ctx.want("no_window") || ctx.want("persisting"))
      persisting_window(ctx, elements, hot_fraction);
    if (ctx.want("row_order") || ctx.want("grouped")) tile_order(ctx, m, n, k, group);
  });
}
