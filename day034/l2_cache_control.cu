// Day 034 - L2 cache control: a persisting access-policy window, and tile launch order in a GEMM
//
// The L2 (50 MiB on an H100) sits between every SM and HBM. Two ways to make better use of it:
//
// 1. Tell the hardware what to keep. Since Ampere a slice of L2 can be set aside for "persisting"
//    lines (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, bytes), at most
//    cudaDevAttrMaxPersistingL2CacheSize), and a stream can carry an access-policy window
//    (cudaStreamAttributeAccessPolicyWindow): an address range [base_ptr, base_ptr + num_bytes)
//    whose accesses are tagged hitProp for a fraction hitRatio of its lines and missProp for the
//    rest. hitProp = cudaAccessPropertyPersisting keeps those lines in the set-aside slice, where
//    ordinary traffic cannot evict them; missProp = cudaAccessPropertyStreaming marks the others
//    as first to go. The hit ratio is how much of the window to protect: with a window larger than
//    the set-aside slice, hitRatio = set-aside / window protects as much as fits and keeps the
//    persisting lines from evicting each other (a ratio of 1 on a too-large window makes them
//    thrash inside the slice). The driver cuts the window into segments and marks about hitRatio
//    of them hitProp (the driver API documents it so; the Programming Guide only promises "about
//    hitRatio of the accesses"), so the protected part is a fixed set of addresses, the same on
//    every pass. hitRatio = 0 makes the whole window missProp (streaming): the sweep's first point
//    shows what marking the hot buffer as streaming costs. Persisting lines stay persisting after
//    the kernel ends, until cudaCtxResetPersistingL2Cache() demotes them; this program resets them
//    and the limit at the end (and before every measurement that must not inherit them).
//    Workload: out[i] = stream[i] + hot[i mod hot_n]: a large buffer read once, a hot buffer of
//    about half the L2 read again and again. Between two uses of a hot line the kernel touches
//    about three hot buffers' worth of other lines (stream, hot, out), more than the L2 holds, so
//    without a window the hot buffer comes from HBM every time: 12 bytes of DRAM traffic per
//    element. With the window it stays in L2: 8 bytes per element, an ideal speedup of 1.5x.
//
// 2. Schedule for locality. A tiled GEMM launches one block per output tile; the hardware starts
//    blocks roughly in blockIdx order, so the mapping blockIdx -> tile decides which tiles run at
//    the same time. Row-major order runs a few full rows of tiles at once: together they read a
//    few row panels of A but ALL of B. Grouped order (a "swizzle": walk GROUP tile rows column by
//    column, then the next GROUP rows) with GROUP near the square root of the number of blocks
//    resident at once runs a roughly square patch of tiles at once, which reads about sqrt as many
//    panels of each: more reuse in L2, less HBM traffic. Same kernel, same arithmetic; only the
//    tile_of() mapping differs (group 1 IS row-major order).
//
// Versions (the main table reports speedups: unit "x", each pair against its first member)
//   no_window    the stream + hot kernel on a stream without a policy window (reference, 1.00).
//   persisting   the same launch on a stream whose window covers the hot buffer, hitRatio =
//                min(1, set-aside / window). Not applicable (a note, no failure) where the device
//                has no persisting L2 (cudaDevAttrMaxPersistingL2CacheSize = 0).
//   row_order    64x64-tile SGEMM (4x4 outputs per thread, 16-deep K steps through shared memory),
//                tiles in row-major order (reference, 1.00).
//   grouped      the same kernel with tiles in groups of --group tile rows (default: the
//                integer nearest sqrt(resident blocks), so the blocks running at once cover a
//                square patch).
// Tables: the hit-ratio sweep (ms, effective GB/s vs HBM peak, speedup) and the group-size sweep
// (ms, TFLOP/s vs FP32 peak, speedup).
//
// Check: the stream kernel exactly (one float addition, correctly rounded on both sides); the GEMM
// against a double CPU reference at sampled entries (gpu100::check_gemm, gemm_tolerance(k)).
// Arbitrary sizes: row-major GEMM of any M, N, K (partial tiles are zero-padded in shared memory
// and their stores guarded), any buffer lengths.
//
// What to expect: the persisting window should approach the 1.5x model when the hot buffer fits
// the set-aside slice. The GEMM gain depends on how much of the time is HBM traffic: this simple
// FP32 kernel is limited by its shared-memory and FMA issue rate long before HBM, and H100's 50 MiB
// L2 holds much of a 4096^2 operand, so the difference may be a few percent; it grows for larger
// matrices and for faster (tensor-core) kernels, which is where swizzled launch orders are
// standard.
//
// Run:  build/bin/day034 [--elements 67108875 --hot-fraction 0.5] [--m 4096 --n 4096 --k 4096
//                         --group 0] [--kernel persisting,grouped]
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"
#include "gpu100/stream.h"

namespace {

// ---- part 1: a large stream plus a hot buffer -------------------------------------------------

constexpr int kStreamBlock = 256;

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
// non-blocking stream: the legacy default stream that ctx.bench uses by default is no place for
// it, and every measurement below synchronizes the device after poisoning, on the legacy stream,
// before it launches on this one).
void set_window(cudaStream_t s, const void* base, size_t bytes, float hit_ratio) {
  cudaStreamAttrValue v{};
  v.accessPolicyWindow.base_ptr = const_cast<void*>(base);
  v.accessPolicyWindow.num_bytes = bytes;  // 0 removes the window
  v.accessPolicyWindow.hitRatio = hit_ratio;
  v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  CUDA_CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
}

// ---- part 2: a simple tiled SGEMM whose only variable is the tile order ----------------------

constexpr int kTile = 64;          // output tile kTile x kTile per block
constexpr int kTileK = 16;         // K depth of one shared-memory step
constexpr int kGemmThreads = 256;  // 16 x 16 threads, 4 x 4 outputs each
constexpr int kMicro = 4;
static_assert(kTile == 16 * kMicro && kGemmThreads == 256, "the thread layout is 16 x 16");
static_assert(kTile * kTileK == 4 * kGemmThreads, "each thread loads 4 elements of each tile");

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
  cli.kernels({"no_window", "persisting", "row_order", "grouped"});
  cli.device_bytes([&] {
    return 12.0 * double(elements) + 4.0 * (double(m) * k + double(k) * n + double(m) * n);
  });
  cli.validate([&]() -> std::string {
    const double tiles = std::ceil(double(m) / kTile) * std::ceil(double(n) / kTile);
    return tiles < 2147483647.0 ? "" : "--m x --n needs more than 2^31 - 1 tiles (grid limit)";
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    const auto& dev = ctx.device();
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

    // ---- part 1 ----------------------------------------------------------------------------
    if (ctx.want("no_window") || ctx.want("persisting")) {
      const int64_t hot_n = std::min<int64_t>(
          elements,
          std::max<int64_t>(1, int64_t(hot_fraction * double(dev.l2_bytes) / sizeof(float))) | 1);
      const auto stream_in = gpu100::random_floats(size_t(elements), ctx.seed(), -1.0f, 1.0f);
      const auto hot_in = gpu100::random_floats(size_t(hot_n), ctx.seed() + 1, -1.0f, 1.0f);
      std::vector<float> ref(stream_in.size());
      for (size_t i = 0; i < ref.size(); ++i) ref[i] = stream_in[i] + hot_in[i % size_t(hot_n)];
      gpu100::DeviceBuffer<float> d_stream(stream_in), d_hot(hot_in), d_out{size_t(elements)};
      const unsigned grid = std::min(gpu100::resident_grid(stream_plus_hot, kStreamBlock),
                                     gpu100::grid_for(elements, kStreamBlock));
      gpu100::Stream stream;
      auto launch = [&](cudaStream_t s) {
        stream_plus_hot<<<grid, kStreamBlock, 0, s>>>(d_stream.data(), d_hot.data(), d_out.data(),
                                                      elements, hot_n);
        LAUNCH_CHECK();
      };
      // Poison, run once on `stream`, check exactly, then time on the same stream.
      auto measure = [&](gpu100::CheckResult* check) {
        d_out.poison();
        CUDA_CHECK(cudaDeviceSynchronize());
        launch(stream.get());
        CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        *check = gpu100::compare_exact(d_out.download(), ref);
        auto options = ctx.bench_options(true);
        options.stream = stream.get();
        return gpu100::benchmark(launch, options);
      };
      // Effective rate: the bytes the kernel asks for (stream, hot and out: 12 per element), some
      // of which the L2 may serve; above the HBM peak only because of that.
      const double bytes = 12.0 * double(elements);
      const double peak = dev.peak_dram_gbps();
      report.note(gpu100::format_doubles(
                      "stream + hot: %.0f MiB streamed, hot buffer %.1f MiB (%.2f of the L2)",
                      4.0 * double(elements) / (1 << 20), 4.0 * double(hot_n) / (1 << 20),
                      4.0 * double(hot_n) / double(dev.l2_bytes)) +
                  ", grid " + std::to_string(grid) + " x " + std::to_string(kStreamBlock));

      // The reference first, before any line has been made persisting.
      gpu100::CheckResult base_check;
      const gpu100::Stats base = measure(&base_check);
      // The reference is checked whether or not it was selected: the speedups rest on it.
      if (ctx.want("no_window"))
        report.add("no_window", base, 1.0, base_check);
      else
        report.add_check("no_window (reference of the speedups)", base_check);
      const double base_gbps = gpu100::gbps(bytes, base.median_ms);
      report.note(gpu100::format_doubles(
          "no_window: %.1f GB/s effective = %.1f %% of the HBM peak (%.0f GB/s); "
          "model: 12 bytes of DRAM traffic per element",
          base_gbps, 100.0 * base_gbps / peak, peak));

      int max_persisting = 0, max_window = 0;
      CUDA_CHECK(
          cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, dev.id));
      CUDA_CHECK(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, dev.id));
      if (ctx.want("persisting") && (max_persisting <= 0 || max_window <= 0)) {
        report.note("persisting: not applicable, " + dev.name +
                    " has no persisting L2 (cudaDevAttrMaxPersistingL2CacheSize = 0)");
      } else if (ctx.want("persisting")) {
        const size_t hot_bytes = size_t(hot_n) * sizeof(float);
        const size_t window = std::min(hot_bytes, size_t(max_window));
        PersistingL2 setaside(std::min(window, size_t(max_persisting)));
        if (setaside.granted() == 0) {
          report.note(std::string("persisting: not applicable, cudaDeviceSetLimit("
                                  "cudaLimitPersistingL2CacheSize) granted no set-aside (") +
                      cudaGetErrorName(setaside.error()) + ")");
        } else {
          const float ratio = float(
              std::min(1.0, double(setaside.granted()) / double(std::max<size_t>(window, 1))));
          report.note(gpu100::format_doubles(
                          "persisting: set-aside %.1f MiB (device maximum %.1f MiB), window "
                          "%.1f MiB",
                          double(setaside.granted()) / (1 << 20),
                          double(max_persisting) / (1 << 20), double(window) / (1 << 20)) +
                      gpu100::format_doubles(
                          " (maximum %.1f MiB), hitRatio %.3f = min(1, set-aside / window); "
                          "hitProp persisting, missProp streaming",
                          double(max_window) / (1 << 20), ratio));
          report.note(
              "persisting lines survive the L2 flush between timed runs (normal reads cannot "
              "evict them): each run after the first starts with the hot buffer in L2, "
              "which is what persistence is for");

          set_window(stream.get(), d_hot.data(), window, ratio);
          gpu100::CheckResult check;
          const gpu100::Stats t = measure(&check);
          report.add("persisting", t, base.median_ms / t.median_ms, check);

          gpu100::Table sweep{
              "persisting window: hit ratio sweep (hot buffer " +
                  gpu100::format_doubles("%.1f MiB, set-aside %.1f MiB)",
                                         double(hot_bytes) / (1 << 20),
                                         double(setaside.granted()) / (1 << 20)),
              {"hitRatio", "ms", "effective GB/s", "% of HBM peak", "speedup (x) vs no window"},
              {}};
          gpu100::CheckResult all;
          for (float r : {0.0f, 0.25f, 0.5f, 0.75f, 1.0f}) {
            CUDA_CHECK(cudaDeviceSynchronize());
            CUDA_CHECK(
                cudaCtxResetPersistingL2Cache());  // start each point without persisting lines
            set_window(stream.get(), d_hot.data(), window, r);
            gpu100::CheckResult c;
            const gpu100::Stats s = measure(&c);
            all = gpu100::combine(all, c);
            const double g = gpu100::gbps(bytes, s.median_ms);
            sweep.add_row(
                {double(r), s.median_ms, g, 100.0 * g / peak, base.median_ms / s.median_ms});
          }
          set_window(stream.get(), d_hot.data(), 0, 0.0f);
          report.add_check("persisting hit-ratio sweep (every point)", all);
          report.table(std::move(sweep));
        }
      }
    }

    // ---- part 2 ----------------------------------------------------------------------------
    if (ctx.want("row_order") || ctx.want("grouped")) {
      const auto A = gpu100::random_floats(size_t(m * k), ctx.seed() + 2);
      const auto B = gpu100::random_floats(size_t(k * n), ctx.seed() + 3);
      gpu100::DeviceBuffer<float> d_a(A), d_b(B), d_c{size_t(m * n)};
      const int64_t tiles =
          gpu100::ceil_div<int64_t>(m, kTile) * gpu100::ceil_div<int64_t>(n, kTile);
      const auto tol = gpu100::gemm_tolerance(k);
      auto launch_with = [&](int g) {
        return [&, g](cudaStream_t s) {
          gemm_tiled<<<unsigned(tiles), kGemmThreads, 0, s>>>(d_a.data(), d_b.data(), d_c.data(),
                                                              int(m), int(n), int(k), g);
          LAUNCH_CHECK();
        };
      };
      auto check = [&] {
        return gpu100::check_gemm(d_c.download().data(), A.data(), B.data(), m, n, k, tol,
                                  ctx.seed());
      };
      auto measure = [&](int g, gpu100::CheckResult* c) {
        d_c.poison();
        launch_with(g)(nullptr);
        CUDA_CHECK(cudaDeviceSynchronize());
        *c = check();
        return ctx.bench(launch_with(g));
      };
      const double flops = gpu100::gemm_flops(m, n, k);
      const double peak = dev.peak_fp32_tflops();
      // The R blocks resident at once (R = 528 on an H100 with the 60 registers ptxas gives the
      // kernel today: 4 blocks per SM) cover G x R/G tiles in grouped order and R/tiles_n x
      // tiles_n in row order. A fixed G such as 8 would give 8 x 66 at 4096^2, the same shape as
      // row order's 8.25 x 64: nothing to measure. The square patch, G = sqrt(R), reads the
      // fewest A + B panels per wave.
      const int64_t tiles_m = gpu100::ceil_div<int64_t>(m, kTile);
      const unsigned resident = gpu100::resident_grid(gemm_tiled, kGemmThreads);
      const int64_t auto_g = std::max<int64_t>(1, std::llround(std::sqrt(double(resident))));
      const int grouped_g = int(std::min<int64_t>(group > 0 ? int64_t(group) : auto_g, tiles_m));
      report.problem("group", double(grouped_g));

      gpu100::CheckResult base_check;
      const gpu100::Stats base = measure(1, &base_check);
      if (ctx.want("row_order"))
        report.add("row_order", base, 1.0, base_check);
      else
        report.add_check("row_order (reference of the speedups)", base_check);
      report.note(gpu100::format_doubles(
                      "row_order: %.2f TFLOP/s = %.1f %% of the FP32 peak (%.1f TFLOP/s)",
                      gpu100::tflops(flops, base.median_ms),
                      100.0 * gpu100::tflops(flops, base.median_ms) / peak, peak) +
                  gpu100::format_doubles("; %.0f tiles of 64 x 64, A %.1f MiB, B %.1f MiB",
                                         double(tiles), 4.0 * double(m * k) / (1 << 20),
                                         4.0 * double(k * n) / (1 << 20)));
      {
        const double tiles_n = double(tiles / tiles_m), r = double(resident);
        std::string how = group > 0 ? " (--group, at most the tile rows)"
                                    : " (the integer nearest sqrt(" + std::to_string(resident) +
                                          ") resident blocks, at most the tile rows)";
        if (r < double(tiles))
          how += gpu100::format_doubles(
                     ": the blocks resident at once cover about %.1f x %.1f tiles, in row "
                     "order %.1f",
                     std::max(double(grouped_g), r / tiles_n), std::min(r / grouped_g, tiles_n),
                     r / tiles_n) +
                 gpu100::format_doubles(" x %.0f (tile rows x columns)", tiles_n);
        else
          how += ": every tile is resident at once, so the order can hardly matter";
        report.note("grouped: group " + std::to_string(grouped_g) + how);
      }
      if (ctx.want("grouped")) {
        gpu100::CheckResult c;
        const gpu100::Stats t = measure(grouped_g, &c);
        report.add("grouped", t, base.median_ms / t.median_ms, c);
      }

      gpu100::Table sweep{"GEMM tile order: tile rows per group (1 = row-major order)",
                          {"group", "ms", "TFLOP/s", "% of FP32 peak", "speedup (x) vs row order"},
                          {}};
      gpu100::CheckResult all;
      std::vector<int> groups = {1, 2, 4, 8, 16, 32};
      if (std::find(groups.begin(), groups.end(), grouped_g) == groups.end()) {
        groups.push_back(grouped_g);
        std::sort(groups.begin(), groups.end());
      }
      for (int g : groups) {
        if (g > 1 && g > tiles_m) break;  // larger groups are all the same order
        gpu100::CheckResult c;
        const gpu100::Stats s = g == 1 ? base : measure(g, &c);
        if (g > 1) all = gpu100::combine(all, c);
        const double tf = gpu100::tflops(flops, s.median_ms);
        sweep.add_row({g, s.median_ms, tf, 100.0 * tf / peak, base.median_ms / s.median_ms});
      }
      if (all.checked) report.add_check("GEMM group sweep (every group size)", all);
      report.table(std::move(sweep));
    }
  });
}
