// Day 018 - double buffering and autotuning: the day-017 SGEMM with a two-stage shared-memory
// pipeline, compiled in a set of tile shapes that are all checked and timed on the GPU it runs on
//
// Day 017's warp-tiled kernel does, for every BK-deep slice of K:
//   global loads -> (wait ~1 us) -> shared stores -> barrier -> BK k steps of FFMAs -> barrier.
// During the wait the block computes nothing; only the second block on the SM (2 fit) can use
// the FP32 pipes, and when both wait at once they idle. Two ideas remove the wait and the guess.
//
// 1. Double buffering. Two shared-memory stages. While the warps compute tile t out of one
//    stage, the global loads of tile t+1 are already in flight into registers (the "staging"
//    registers); after the math the registers go into the other stage. Per iteration:
//        issue loads of tile t+1  ->  FFMAs on stage t%2  ->  store tile t+1 to stage (t+1)%2
//        -> one __syncthreads()
//    The load latency now hides behind BK k steps of FFMAs. One barrier per tile is enough: it
//    publishes stage (t+1)%2 for iteration t+1, and it guarantees that every warp finished
//    reading stage t%2, which iteration t+1 overwrites with tile t+2. (Stage (t+1)%2 may be
//    written during iteration t: its last reader was iteration t-1, which ended at a barrier.)
//    The price: twice the shared memory, and the staging registers (one float4 per 4 elements
//    a thread loads: 2 for 128 x 128 x 8, 4 for x16, 8 for x32 at 256 threads) stay live across
//    the math, beside the 64 or 128 accumulators. Registers are the budget that decides it:
//    __launch_bounds__(256, 2) caps a thread at 128 registers (2 blocks = 16 warps per SM).
//    With BK = 8 the double-buffered kernel fits (125 registers on sm_90). With BK = 16 it fits
//    only if the inner k loop is unrolled by 2 instead of 16: asked for 16, the compiler hoists
//    shared loads of later k steps far ahead of their FFMAs, runs out of registers and spills
//    (ptxas -v: from 8 to several hundred bytes of spill stores, depending on small details of
//    the code; the ptx test rejects any). The alternative is one
//    block per SM with up to 255 registers (_b1 configs): 8 warps, which is enough when every
//    load is prefetched a tile ahead - whether it is faster is what the tuner measures.
//    The loader (day 017's TileLoader from common/include/gpu100/sgemm_tiles.cuh, which holds the
//    staging registers) keeps its state between tiles small for the same reason: two running
//    pointers and three counts instead of matrix bases, indices and bounds.
//
// 2. Autotuning. Which tile is fastest depends on the GPU (SM count and how many blocks fit: a
//    partial last wave wastes SMs; registers; shared memory) and on the problem, and the
//    differences are a few percent either way - too little for a model to predict. So the
//    program compiles a set of tile configurations (templates, one kernel each), checks every
//    one against the CPU (an autotuner that picks a fast wrong kernel is worse than none), times
//    them all on the device at the requested size, prints a table with the registers, shared
//    memory and blocks per SM that the compiler and the occupancy calculator gave each, and names
//    the fastest that passed, with its parameters; --sweep runs it against cuBLAS from 256 to
//    8192. (CUTLASS's profiler and Triton's @autotune do the same thing at larger scale.)
//
// The set (11 kernels; names: db_<BMxBNxBK>_w<WMxWN>_b<blocks per SM asked of
// __launch_bounds__>, db = double-buffered; thread tile = 4*WMITER x 4*WNITER registers, in
// WMITER x WNITER sub-tiles of 4 x 4 as on day 017; "unroll" is the factor asked of `#pragma unroll` for the inner k
// loop. nvcc (CUDA 13.0) caps an unrolled body near 512 FFMAs, so where more is asked the PTX
// shows less: 8 k steps per loop trip for 8 x 8 thread tiles with BK >= 16, 4 for 16 x 8 ones;
// BK = 8 with 8 x 8 and 64 x 64 x 16 with 8 x 4 are unrolled in full):
//   warptile                 day 017's kernel (single stage, 128 x 128 x 16, 256 threads, 8 x 8
//                            per thread, 2 blocks/SM): the row to beat.
//   db_128x128x8_w32x64_b2   the classic double-buffered SGEMM tile (2 float4 of staging).
//   db_128x128x16_w32x64_b2  day 017's tile, double-buffered (unroll 2): what double buffering
//                            alone is worth.
//   db_128x128x16_w64x32_b2  the same block tile cut into taller warp tiles (unroll 2).
//   db_128x128x16_w32x64_b1  day 017's tile, one block per SM, unroll asked 16 (8 in the PTX).
//   db_128x128x32_w32x64_b1  twice the stage: half the barriers per FLOP, 8 float4 of staging,
//                            65 KiB (66,560 B) of shared memory (over 48 KiB: opted in at run
//                            time).
//   db_64x128x16_w32x64_b3   128 threads, 8 x 8 per thread, 3 blocks/SM (cap 168 registers):
//                            smaller tiles, more of them (better for mid sizes and partial waves).
//   db_128x64x16_w64x32_b3   its transpose.
//   db_128x128x16_w64x64_b2  128 threads, 16 x 8 per thread (siboehm's kernel-10 shape): 6
//                            shared loads for 128 FFMAs per k step, fewer warps.
//   db_128x256x8_w64x64_b1   256 threads, 16 x 8 per thread, the largest tile.
//   db_64x64x16_w32x32_b4    128 threads, 8 x 4 per thread: for small problems, where 128 x 128
//                            tiles leave most SMs idle.
// Every config keeps 16-byte aligned, conflict-free shared layouts (A transposed, rows padded by
// 4 floats, as on day 017; fragment reads of a warp are contiguous runs of at most 128 bytes)
// and fits its register cap without spilling (the ptx test checks all of them).
//
// Resources (ptxas -v, CUDA 13.0; registers per thread on sm_90 / sm_80, all without spills):
//   warptile 127/123, db_128x128x8_w32x64_b2 125/128, db_128x128x16_w32x64_b2 128/128,
//   db_128x128x16_w64x32_b2 128/128, db_128x128x16_w32x64_b1 149/143, db_128x128x32_w32x64_b1
//   167/163, db_64x128x16_w32x64_b3 159/157, db_128x64x16_w64x32_b3 155/149,
//   db_128x128x16_w64x64_b2 231/231, db_128x256x8_w64x64_b1 219/249, db_64x64x16_w32x32_b4
//   107/99. The 128-register configs sit at their cap: small changes to the loop (even how the
//   loop counts its tiles) moved ptxas between 0 and 8 bytes of spills while this was written, so
//   the kernel below counts K down (k_rem) and swaps two stage pointers instead of keeping a tile
//   index. The program prints what the driver reports for each config on the device it runs on.
//
// Goal: the winner >= day 017 (the `warptile` row, day 017's kernel, is in the table
// for that comparison) and, like day 017, >= 90% of cuBLAS SGEMM at 4096^3 on an H100. Not
// measured yet: nothing here has run on a GPU.
//
// Versions: `warptile` (single-buffered, day 017) and every config above. All run by default;
// the winner is the fastest version that passed.
//
// Shapes: row-major, C[M x N] = A[M x K] * B[K x N], arbitrary M, N, K (1 to 2^30 each): partial
// tiles and K or N not a multiple of 4 take guarded loads (element by element, zero fill) and
// guarded stores; interior tiles take unguarded float4 loads (day 017's loader and C store,
// gpu100/sgemm_tiles.cuh). 1D grid, so no gridDim.y limit.
//
// Check: every entry (at --quick sizes) or ~4096 sampled entries, last row and column included,
// against a double-precision CPU dot product, with gemm_tolerance(K), for every config. Baseline:
// cublasSgemm (plain FP32, no TF32) on the same inputs in the same run.
//
// Run:  build/bin/day018 [--m 4096 --n 4096 --k 4096] [--kernel warptile,db_128x128x8_w32x64_b2]
//       [--sweep]
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"
#include "gpu100/sgemm_tiles.cuh"

namespace {

// The block tile and its guarded loader and C store, from gpu100/sgemm_tiles.cuh: TileShape
// (block tile, shared layouts, which thread loads what), TileLoader (global -> registers ->
// shared memory), store4 (4 outputs of a row of C), component (a float4's x/y/z/w by index).
using gpu100::sgemm::component;
using gpu100::sgemm::store4;
using gpu100::sgemm::TileLoader;
using gpu100::sgemm::TileShape;

// ---------------------------------------------------------------------------------------------
// Tile shapes. WarpTiling adds the warp and thread levels to TileShape. Everything is a
// compile-time constant, so every register array below is indexed with constants only and stays
// in registers.
// MinBlocks_: __launch_bounds__'s minimum blocks per SM, which caps registers at
// 65536 / (threads * MinBlocks_). UnrollK_: unroll factor of the inner k loop (see the top).
template <int BM_, int BN_, int BK_, int WM_, int WN_, int WMITER_, int WNITER_, int MinBlocks_,
          int UnrollK_ = BK_>
struct WarpTiling : TileShape<BM_, BN_, BK_, 32 * (BM_ / WM_) * (BN_ / WN_), 4> {
  static constexpr int WM = WM_, WN = WN_, WMITER = WMITER_, WNITER = WNITER_;
  static constexpr int kMinBlocks = MinBlocks_, kUnrollK = UnrollK_;
  static constexpr int kWarpsN = BN_ / WN_;
  static constexpr int kSubM = WM / WMITER, kSubN = WN / WNITER;  // one pass of the warp
  static constexpr int kLanesN = kSubN / 4;                       // lanes across a sub-tile
  static constexpr int kRegM = 4 * WMITER, kRegN = 4 * WNITER;    // thread tile
  static_assert(BM_ % WM_ == 0 && BN_ % WN_ == 0, "warp tiles cover the block tile");
  static_assert(WM % WMITER == 0 && WN % WNITER == 0 && kSubM % 4 == 0 && kSubN % 4 == 0,
                "sub-tiles of whole 4 x 4 blocks");
  static_assert((kSubM / 4) * (kSubN / 4) == 32, "one 4 x 4 block per lane in each sub-tile");
  static_assert(kSubM <= 32 && kSubN <= 32,
                "a warp's fragment read is at most 128 contiguous bytes: conflict-free");
  static_assert(BK_ % UnrollK_ == 0, "the unrolled k loop covers the tile");
};

// ---------------------------------------------------------------------------------------------
// The kernel: day 017's warp-tiled SGEMM, single-buffered or with two shared stages.
template <class T, bool kDoubleBuffer>
constexpr size_t smem_bytes() {
  return sizeof(float) * size_t(T::kAFloats + T::kBFloats) * (kDoubleBuffer ? 2 : 1);
}

// The BK k steps of one stage: per step, WMITER float4 of A and WNITER float4 of B from shared
// memory, then their outer product into the thread's accumulators.
template <class T>
__device__ __forceinline__ void warp_tile_mma(const float* __restrict__ As,
                                              const float* __restrict__ Bs,
                                              float (&acc)[T::kRegM][T::kRegN], int a_off,
                                              int b_off) {
#pragma unroll T::kUnrollK
  for (int k = 0; k < T::BK; ++k) {
    float4 a[T::WMITER], b[T::WNITER];
#pragma unroll
    for (int i = 0; i < T::WMITER; ++i)
      a[i] = *reinterpret_cast<const float4*>(As + k * T::kAStride + a_off + i * T::kSubM);
#pragma unroll
    for (int j = 0; j < T::WNITER; ++j)
      b[j] = *reinterpret_cast<const float4*>(Bs + k * T::kBStride + b_off + j * T::kSubN);
#pragma unroll
    for (int x = 0; x < T::kRegM; ++x)
#pragma unroll
      for (int y = 0; y < T::kRegN; ++y)
        acc[x][y] = fmaf(component(a[x / 4], x % 4), component(b[y / 4], y % 4), acc[x][y]);
  }
}

template <class T, bool kDoubleBuffer>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    sgemm_warptile(const float* __restrict__ A, const float* __restrict__ B,
                   float* __restrict__ C, int M, int N, int K, int tiles_n, bool a_vec,
                   bool b_vec, bool c_vec) {
  // Dynamic shared memory (opted in above 48 KB): [As | Bs] once, or twice for two stages.
  extern __shared__ float4 smem4[];
  float* const smem = reinterpret_cast<float*>(smem4);
  constexpr int kStage = T::kAFloats + T::kBFloats;  // a multiple of 4: stages stay aligned
  static_assert(kStage % 4 == 0 && T::kAFloats % 4 == 0, "16-byte aligned tiles");

  const int tile_m = int(blockIdx.x) / tiles_n, tile_n = int(blockIdx.x) - tile_m * tiles_n;
  const int m0 = tile_m * T::BM, n0 = tile_n * T::BN;
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  // First row of this lane's A values and first column of its B values within the block tile.
  const int a_off = (warp / T::kWarpsN) * T::WM + (lane / T::kLanesN) * 4;
  const int b_off = (warp % T::kWarpsN) * T::WN + (lane % T::kLanesN) * 4;

  TileLoader<T> loader(A, B, M, N, K, m0, n0);
  // Block-uniform: the block's rows of A / columns of B lie inside the matrix and allow float4.
  // A tile then takes the unguarded path when it is a full BK deep as well.
  const bool a_inside = a_vec && m0 + T::BM <= M, b_inside = b_vec && n0 + T::BN <= N;
  int k_rem = K;  // K - k0 of the next tile to load
  auto load_next = [&] {
    loader.load(k_rem, a_inside && k_rem >= T::BK, b_inside && k_rem >= T::BK, a_vec, b_vec);
    k_rem -= T::BK;
  };
  float acc[T::kRegM][T::kRegN] = {};
  if constexpr (kDoubleBuffer) {
    load_next();
    loader.store(smem, smem + T::kAFloats);
    __syncthreads();
    float* cur = smem;  // the stage the math reads
    float* nxt = smem + kStage;  // the stage the next tile goes to
    for (;;) {
      const bool more = k_rem > 0;  // another tile to load; the same for the whole block
      if (more) load_next();        // in flight during the math below
      warp_tile_mma<T>(cur, cur + T::kAFloats, acc, a_off, b_off);
      if (more) loader.store(nxt, nxt + T::kAFloats);
      // Publishes stage nxt for the next iteration and ends every read of stage cur, which the
      // next iteration refills. Outside the branches: every thread reaches it.
      __syncthreads();
      if (!more) break;
      float* const read_next = nxt;
      nxt = cur;
      cur = read_next;
    }
  } else {
    while (k_rem > 0) {  // block-uniform
      load_next();
      loader.store(smem, smem + T::kAFloats);
      __syncthreads();
      warp_tile_mma<T>(smem, smem + T::kAFloats, acc, a_off, b_off);
      __syncthreads();  // the next tile overwrites the only stage
    }
  }
#pragma unroll
  for (int x = 0; x < T::kRegM; ++x)
#pragma unroll
    for (int j = 0; j < T::WNITER; ++j)
      store4(C, M, N, m0 + a_off + (x / 4) * T::kSubM + x % 4, n0 + b_off + j * T::kSubN,
             make_float4(acc[x][4 * j], acc[x][4 * j + 1], acc[x][4 * j + 2], acc[x][4 * j + 3]),
             c_vec);
}

// ---------------------------------------------------------------------------------------------
// The autotune set: WarpTiling<BM, BN, BK, WM, WN, WMITER, WNITER, min blocks per SM, k unroll>.
using Tile017 = WarpTiling<128, 128, 16, 32, 64, 2, 2, 2>;  // day 017's kernel, single stage
using Db128x128x8 = WarpTiling<128, 128, 8, 32, 64, 2, 2, 2>;
using Db128x128x16 = WarpTiling<128, 128, 16, 32, 64, 2, 2, 2, 2>;
using Db128x128x16W64x32 = WarpTiling<128, 128, 16, 64, 32, 2, 2, 2, 2>;
using Db128x128x16B1 = WarpTiling<128, 128, 16, 32, 64, 2, 2, 1>;
using Db128x128x32B1 = WarpTiling<128, 128, 32, 32, 64, 2, 2, 1>;
using Db64x128x16 = WarpTiling<64, 128, 16, 32, 64, 2, 2, 3>;
using Db128x64x16 = WarpTiling<128, 64, 16, 64, 32, 2, 2, 3>;
using Db128x128x16W64x64 = WarpTiling<128, 128, 16, 64, 64, 4, 2, 2>;
using Db128x256x8 = WarpTiling<128, 256, 8, 64, 64, 4, 2, 1>;
using Db64x64x16 = WarpTiling<64, 64, 16, 32, 32, 2, 1, 4>;

using Launch = void (*)(const float*, const float*, float*, int64_t, int64_t, int64_t,
                        cudaStream_t);

struct Config {
  std::string name;
  int bm, bn, bk, wm, wn, tm, tn, threads, min_blocks, unroll, stages;
  size_t smem;
  const void* kernel;
  Launch launch;
};

template <class T, bool kDoubleBuffer>
void launch_config(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k,
                   cudaStream_t s) {
  // One block per BM x BN tile, numbered along N first (blocks that run together share their
  // A rows in L2); a 1D grid, so no gridDim.y limit.
  const int64_t tiles_n = gpu100::ceil_div<int64_t>(n, T::BN);
  const int64_t tiles = gpu100::ceil_div<int64_t>(m, T::BM) * tiles_n;
  if (tiles > INT32_MAX) throw std::invalid_argument("too many tiles for a 1D grid");
  // float4 access needs 16-byte aligned rows: row length a multiple of 4 and an aligned base.
  const bool a_vec = k % 4 == 0 && gpu100::is_aligned(A, 16);
  const bool b_vec = n % 4 == 0 && gpu100::is_aligned(B, 16);
  const bool c_vec = n % 4 == 0 && gpu100::is_aligned(C, 16);
  sgemm_warptile<T, kDoubleBuffer><<<unsigned(tiles), T::kThreads, smem_bytes<T, kDoubleBuffer>(),
                                     s>>>(A, B, C, int(m), int(n), int(k), int(tiles_n), a_vec,
                                          b_vec, c_vec);
  LAUNCH_CHECK();
}

template <class T, bool kDoubleBuffer>
Config make_config(std::string name = "") {
  auto x = [](int a, int b) { return std::to_string(a) + "x" + std::to_string(b); };
  if (name.empty())
    name = "db_" + x(T::BM, T::BN) + "x" + std::to_string(T::BK) + "_w" + x(T::WM, T::WN) +
           "_b" + std::to_string(T::kMinBlocks);
  return {name,
          T::BM,
          T::BN,
          T::BK,
          T::WM,
          T::WN,
          T::kRegM,
          T::kRegN,
          T::kThreads,
          T::kMinBlocks,
          T::kUnrollK,
          kDoubleBuffer ? 2 : 1,
          smem_bytes<T, kDoubleBuffer>(),
          reinterpret_cast<const void*>(sgemm_warptile<T, kDoubleBuffer>),
          launch_config<T, kDoubleBuffer>};
}

std::vector<Config> all_configs() {
  return {
      make_config<Tile017, false>("warptile"),
      make_config<Db128x128x8, true>(),
      make_config<Db128x128x16, true>(),
      make_config<Db128x128x16W64x32, true>(),
      make_config<Db128x128x16B1, true>(),
      make_config<Db128x128x32B1, true>(),
      make_config<Db64x128x16, true>(),
      make_config<Db128x64x16, true>(),
      make_config<Db128x128x16W64x64, true>(),
      make_config<Db128x256x8, true>(),
      make_config<Db64x64x16, true>(),
  };
}

std::string describe(const Config& c) {
  auto x = [](int p, int q) { return std::to_string(p) + "x" + std::to_string(q); };
  return "block tile " + x(c.bm, c.bn) + "x" + std::to_string(c.bk) + ", warp tile " +
         x(c.wm, c.wn) + ", thread tile " + x(c.tm, c.tn) + ", " + std::to_string(c.threads) +
         " threads, " + std::to_string(c.stages) + " stage(s), __launch_bounds__(" +
         std::to_string(c.threads) + ", " + std::to_string(c.min_blocks) + "), k unroll asked " +
         std::to_string(c.unroll);
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "FP32 SGEMM: warp tiling with a two-stage shared-memory pipeline, autotuned over tile "
      "shapes, vs cublasSgemm");
  constexpr int64_t kMaxDim = int64_t(1) << 30;
  gpu100::GemmArgs args;  // --m --n --k --sweep (the sweep runs the autotune winner)
  args.add_to(cli, kMaxDim);
  const int64_t &m = args.m, &n = args.n, &k = args.k;
  const std::vector<Config> configs = all_configs();
  cli.kernels_of(configs);

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    gpu100::GemmProblem problem(ctx, m, n, k);
    const gpu100::Stats base = problem.baseline();
    const double base_rate = gpu100::tflops(problem.flops(), base.median_ms);

    // Every selected config: checked against the CPU, timed, and its resources recorded.
    struct Row {
      const Config* config;
      int registers, blocks_per_sm;
      double ms, rate;
      bool pass;
    };
    std::vector<Row> rows;
    const Config* winner = nullptr;
    double winner_rate = 0;
    for (const auto& c : configs) {
      if (!ctx.want(c.name)) continue;
      // Every config fits the 99 KB a block may opt in to on any sm_80+ GPU; the check is for
      // a device that allows less, where a launch would fail.
      if (c.smem > ctx.device().smem_per_block_optin)
        throw std::runtime_error(c.name + " needs " + std::to_string(c.smem) +
                                 " B of shared memory per block, the device allows " +
                                 std::to_string(ctx.device().smem_per_block_optin));
      // Above 48 KB of dynamic shared memory a kernel must opt in; below it this is harmless.
      CUDA_CHECK(cudaFuncSetAttribute(c.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      int(c.smem)));
      const gpu100::CheckResult check = ctx.run_version(
          c.name,
          [&](cudaStream_t s) {
            const gpu100::GemmOperands& o = problem.ops();
            c.launch(static_cast<const float*>(o.A), static_cast<const float*>(o.B),
                     static_cast<float*>(o.C), m, n, k, s);
          },
          [&] { problem.poison(); }, [&] { return problem.check(); }, problem.flops());
      const gpu100::VersionResult& r = report.versions().back();
      cudaFuncAttributes attr{};
      CUDA_CHECK(cudaFuncGetAttributes(&attr, c.kernel));
      int blocks = 0;
      CUDA_CHECK(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, c.kernel, c.threads, c.smem));
      rows.push_back({&c, attr.numRegs, blocks, r.time.median_ms, r.rate, check.pass});
      if (check.pass && r.rate > winner_rate) {
        winner = &c;
        winner_rate = r.rate;
      }
    }

    gpu100::Table table;
    table.title = "autotune: every tile configuration at m=" + std::to_string(m) +
                  " n=" + std::to_string(n) + " k=" + std::to_string(k);
    table.columns = {"config",   "stages",    "block tile", "warp tile", "thread tile",
                     "threads",  "k unroll asked", "registers", "smem KiB", "blocks/SM",
                     "ms",       "TFLOP/s",   "% of cublasSgemm",        "check",
                     "winner"};
    auto x = [](int p, int q) { return std::to_string(p) + "x" + std::to_string(q); };
    for (const Row& row : rows) {
      const Config& c = *row.config;
      table.add_row({c.name, c.stages, x(c.bm, c.bn) + "x" + std::to_string(c.bk), x(c.wm, c.wn),
                     x(c.tm, c.tn), c.threads, c.unroll, row.registers,
                     double(c.smem) / 1024.0, row.blocks_per_sm, row.ms, row.rate,
                     base_rate > 0 ? 100.0 * row.rate / base_rate : 0.0,
                     row.pass ? "PASS" : "FAIL", &c == winner ? "<- best" : ""});
    }
    report.table(std::move(table));
    if (winner == nullptr) {
      report.note("autotune: no configuration passed; nothing to name");
      return;
    }
    report.note(
        "autotune winner: " + winner->name + " (" + describe(*winner) +
        "): " + gpu100::format_doubles("%.2f", winner_rate) + " TFLOP/s, " +
        gpu100::format_doubles("%.1f", base_rate > 0 ? 100.0 * winner_rate / base_rate : 0.0) +
        "% of cublasSgemm" + (args.sweep ? "; --sweep runs it" : ""));

    if (args.sweep) {
      const Launch launch = winner->launch;
      problem.sweep({winner->name, [launch](const gpu100::GemmOperands& o, cudaStream_t s) {
                       launch(static_cast<const float*>(o.A), static_cast<const float*>(o.B),
                              static_cast<float*>(o.C), o.m, o.n, o.k, s);
                     }});
    }
  });
}
