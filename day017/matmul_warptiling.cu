// Day 017 - warp tiling: C = A * B in FP32, the fastest CUDA-core SGEMM of the course
//
// Days 011-016 took SGEMM from one thread per output to block tiles in shared memory, 8 x 8
// outputs per thread, float4 loads and conflict-free shared layouts. One level of the hierarchy
// is still missing, and it is the one cuBLAS and CUTLASS are built on: the warp. Shared memory
// is read by warps, not by threads; the 32 lanes of one warp execute each ld.shared together,
// so what decides the cost of the inner loop is the footprint of one warp in the tile, not of
// one thread. Warp tiling makes that footprint an explicit level:
//
//   block tile  BM x BN = 128 x 128, K in steps of BK = 16: A and B tiles in shared memory
//   warp tile   WM x WN =  32 x  64: each of the 8 warps owns a rectangle of the block tile
//   thread tile 8 x 8 registers per lane, as 2 x 2 sub-tiles of 4 x 4: the warp tile is covered
//               twice in each direction by a 16 x 32 "sub-tile" in which lane l owns the 4 x 4
//               block at (4 * (l / 8), 4 * (l % 8)).
//
// Why the sub-tiles: in one k step a lane needs 8 values of A (its rows) and 8 of B (its
// columns). Laid out 2 x 2 x (4 x 4), those are two float4 of A and two float4 of B
// (ld.shared.v4), and for each of the four loads the warp reads ONE contiguous run of shared
// memory: 4 distinct float4 of A (64 bytes, each shared by 8 lanes) or 8 distinct float4 of B
// (128 bytes, each shared by 4 lanes). Contiguous, aligned runs of at most 128 bytes touch every
// bank at most once: no bank conflicts, and the broadcast serves the lanes that share a value.
// The previous day's layout (thread tile 8 x 8 contiguous, `vectorized` below) has lanes 32
// bytes apart, so a warp's B load spans 512 bytes in 16 pieces and two lanes of a quarter-warp
// hit the same bank. Per k step a warp now moves 96 floats (32 of A + 64 of B) out of shared
// memory for 2048 FMAs, and every thread issues 4 shared loads for 64 FFMAs.
//
// The rest of the design, and why:
//   - A is stored transposed in shared memory (As[k][m]), so the 4 rows a lane needs at one k
//     are one float4. Row length BM + 4: the padding shifts each k row by 4 banks, which makes
//     the transposing stores conflict-free as well: each warp loads a 16-row x 8-column chunk of
//     A (two float4 per row, one full 32-byte sector of global memory per row), and with the
//     4-float shift its 32 lanes store column q of that chunk into 32 different banks. (+4 rather
//     than +1 keeps every row 16-byte aligned for the float4 reads.)
//   - Global loads are float4 (ld.global.nc.v4) for every tile that lies inside the matrices;
//     a block-uniform test picks that path, so the common case has no per-element guards. Tiles
//     that cross the last row, column or K, and matrices whose K or N is not a multiple of 4
//     (a float4 would straddle two rows and lose 16-byte alignment), take a guarded path that
//     loads what exists element by element and fills the rest of the tile with zeros, which add
//     nothing to the dot products. The C store is float4 where the 4 columns exist and N keeps
//     rows 16-byte aligned, scalar otherwise. No access is ever out of bounds.
//   - All loads of a tile are issued before any of them is stored to shared memory, so the 4
//     float4 loads of a thread are in flight together.
//   - This loader and the C store live in common/include/gpu100/sgemm_tiles.cuh, for day 018 too:
//     TileShape says which thread loads which float4 of the A and B tiles, TileLoader::load
//     brings them into registers (guarded only at the edges), TileLoader::store writes them to
//     shared memory with A transposed, and store4 writes C, float4 where the matrix allows it.
//   - Resources (ptxas -v, CUDA 13.0, sm_90 / sm_80): warptile 127 / 123 registers, 16640 bytes
//     static shared memory; vectorized 127 / 121 registers, 8192 bytes; no spills (the ptx test
//     checks). The loader keeps little between tiles (two running pointers and three counts)
//     because every register it holds is one the accumulators and fragments cannot have.
//     __launch_bounds__(256, 2) asks for at most 128 registers so that 2 blocks (16 warps) fit
//     on one SM: 64 accumulators + 16 fragment registers + addresses fill them. 2 x 16.25 KB of
//     shared memory per SM is far from the limit; registers are what bound the occupancy, and
//     25% occupancy is enough because each warp has 64 independent FFMAs per k step to issue.
//     While one block waits at its barrier for the next tiles, the other one computes; day 018
//     removes that wait with a second shared-memory buffer.
//   - Traffic: at 4096^3 every block reads 128 x 4096 of A and 4096 x 128 of B, 4.3 GB in total
//     through L2 for 137 GFLOP (32 FLOP per byte): at cuBLAS's rate that is under 2 TB/s, well
//     inside what the H100's L2 delivers; the kernel is bound by FFMA issue and shared loads.
//
// Goal: >= 90% of cuBLAS SGEMM at 4096^3 on an H100. Not measured yet: the numbers in
// results/ will say whether the design meets it.
//
// Versions
//   vectorized  the day-015 kernel: 128 x 128 x 8 block tile, 256 threads, each an 8 x 8
//               contiguous thread tile; float4 global loads, A transposed, unpadded (2-way
//               conflicts on the transposing stores, 2-way on the B reads).
//   warptile    block tile -> warp tile -> thread tile as above.
//
// Shapes: row-major, C[M x N] = A[M x K] * B[K x N], arbitrary M, N, K (1 to 2^30 each). Blocks
// are numbered in one dimension (tile row = blockIdx.x / tiles_n), so no shape meets the 65535
// limit of gridDim.y.
//
// Check: every entry (at --quick sizes) or ~4096 sampled entries, last row and column included,
// against a double-precision CPU dot product, with gemm_tolerance(K). Baseline: cublasSgemm
// (plain FP32, no TF32) on the same inputs in the same run.
//
// Run:  build/bin/day017 [--m 4096 --n 4096 --k 4096] [--kernel warptile] [--sweep]
#include <algorithm>
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
template <int BM_, int BN_, int BK_, int WM_, int WN_, int WMITER_, int WNITER_, int MinBlocks_>
struct WarpTiling : TileShape<BM_, BN_, BK_, 32 * (BM_ / WM_) * (BN_ / WN_), 4> {
  static constexpr int WM = WM_, WN = WN_, WMITER = WMITER_, WNITER = WNITER_;
  static constexpr int kMinBlocks = MinBlocks_;
  static constexpr int kWarpsN = BN_ / WN_;
  static constexpr int kSubM = WM / WMITER, kSubN = WN / WNITER;  // one pass of the warp
  static constexpr int kLanesN = kSubN / 4;                       // lanes across a sub-tile
  static constexpr int kRegM = 4 * WMITER, kRegN = 4 * WNITER;    // thread tile
  static_assert(BM_ % WM_ == 0 && BN_ % WN_ == 0, "warp tiles cover the block tile");
  static_assert(WM % WMITER == 0 && WN % WNITER == 0 && kSubM % 4 == 0 && kSubN % 4 == 0,
                "sub-tiles of whole 4 x 4 blocks");
  static_assert((kSubM / 4) * (kSubN / 4) == 32, "one 4 x 4 block per lane in each sub-tile");
};

// ---------------------------------------------------------------------------------------------
// vectorized: 8 x 8 contiguous outputs per thread (16 x 16 threads over a 128 x 128 tile).
using VecShape = TileShape<128, 128, 8, 256, 0>;

__global__ void __launch_bounds__(VecShape::kThreads, 2)
    sgemm_vectorized(const float* __restrict__ A, const float* __restrict__ B,
                     float* __restrict__ C, int M, int N, int K, int tiles_n, bool a_vec,
                     bool b_vec, bool c_vec) {
  using T = VecShape;
  __shared__ __align__(16) float As[T::kAFloats];
  __shared__ __align__(16) float Bs[T::kBFloats];
  const int tile_m = int(blockIdx.x) / tiles_n, tile_n = int(blockIdx.x) - tile_m * tiles_n;
  const int m0 = tile_m * T::BM, n0 = tile_n * T::BN;
  const int ty = int(threadIdx.x) / 16, tx = int(threadIdx.x) % 16;

  TileLoader<T> loader(A, B, M, N, K, m0, n0);
  // Block-uniform: the block's rows of A / columns of B lie inside the matrix and allow float4.
  // A tile then takes the unguarded path when it is a full BK deep as well.
  const bool a_inside = a_vec && m0 + T::BM <= M, b_inside = b_vec && n0 + T::BN <= N;
  float acc[8][8] = {};
  for (int k_rem = K; k_rem > 0; k_rem -= T::BK) {  // k_rem = K - k0, block-uniform
    loader.load(k_rem, a_inside && k_rem >= T::BK, b_inside && k_rem >= T::BK, a_vec, b_vec);
    loader.store(As, Bs);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T::BK; ++k) {
      const float4* a4 = reinterpret_cast<const float4*>(As + k * T::kAStride + ty * 8);
      const float4* b4 = reinterpret_cast<const float4*>(Bs + k * T::kBStride + tx * 8);
      const float4 a[2] = {a4[0], a4[1]}, b[2] = {b4[0], b4[1]};
#pragma unroll
      for (int x = 0; x < 8; ++x)
#pragma unroll
        for (int y = 0; y < 8; ++y)
          acc[x][y] = fmaf(component(a[x / 4], x % 4), component(b[y / 4], y % 4), acc[x][y]);
    }
    __syncthreads();  // the next tile overwrites As and Bs
  }
#pragma unroll
  for (int x = 0; x < 8; ++x)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      store4(C, M, N, m0 + ty * 8 + x, n0 + tx * 8 + 4 * h,
             make_float4(acc[x][4 * h], acc[x][4 * h + 1], acc[x][4 * h + 2], acc[x][4 * h + 3]),
             c_vec);
}

// ---------------------------------------------------------------------------------------------
// warptile: block tile -> warp tile -> thread tile.
using WarpTile = WarpTiling<128, 128, 16, 32, 64, 2, 2, 2>;

template <class T>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    sgemm_warptile(const float* __restrict__ A, const float* __restrict__ B,
                   float* __restrict__ C, int M, int N, int K, int tiles_n, bool a_vec,
                   bool b_vec, bool c_vec) {
  __shared__ __align__(16) float As[T::kAFloats];
  __shared__ __align__(16) float Bs[T::kBFloats];
  const int tile_m = int(blockIdx.x) / tiles_n, tile_n = int(blockIdx.x) - tile_m * tiles_n;
  const int m0 = tile_m * T::BM, n0 = tile_n * T::BN;
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  // First row of this lane's A values and first column of its B values within the block tile.
  const int a_off = (warp / T::kWarpsN) * T::WM + (lane / T::kLanesN) * 4;
  const int b_off = (warp % T::kWarpsN) * T::WN + (lane % T::kLanesN) * 4;

  TileLoader<T> loader(A, B, M, N, K, m0, n0);
  const bool a_inside = a_vec && m0 + T::BM <= M, b_inside = b_vec && n0 + T::BN <= N;
  float acc[T::kRegM][T::kRegN] = {};
  for (int k_rem = K; k_rem > 0; k_rem -= T::BK) {  // k_rem = K - k0, block-uniform
    loader.load(k_rem, a_inside && k_rem >= T::BK, b_inside && k_rem >= T::BK, a_vec, b_vec);
    loader.store(As, Bs);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T::BK; ++k) {
      float4 a[T::WMITER], b[T::WNITER];
#pragma unroll
      for (int i = 0; i < T::WMITER; ++i)
        a[i] = *reinterpret_cast<const float4*>(As + k * T::kAStride + a_off + i * T::kSubM);
#pragma unroll
      for (int j = 0; j < T::WNITER; ++j)
        b[j] = *reinterpret_cast<const float4*>(Bs + k * T::kBStride + b_off + j * T::kSubN);
      // The outer product of the thread's 4*WMITER A values and 4*WNITER B values.
#pragma unroll
      for (int x = 0; x < T::kRegM; ++x)
#pragma unroll
        for (int y = 0; y < T::kRegN; ++y)
          acc[x][y] = fmaf(component(a[x / 4], x % 4), component(b[y / 4], y % 4), acc[x][y]);
    }
    __syncthreads();  // the next tile overwrites As and Bs
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
// Launchers. One block per BM x BN tile, numbered along N first (blocks that run together share
// their A rows in L2).
template <int BM, int BN, int Threads, class Kernel>
void launch_tiles(Kernel kernel, const float* A, const float* B, float* C, int64_t m, int64_t n,
                  int64_t k, cudaStream_t s) {
  const int64_t tiles_n = gpu100::ceil_div<int64_t>(n, BN);
  const int64_t tiles = gpu100::ceil_div<int64_t>(m, BM) * tiles_n;
  if (tiles > INT32_MAX) throw std::invalid_argument("too many tiles for a 1D grid");
  // float4 access needs 16-byte aligned rows: row length a multiple of 4 and an aligned base.
  const bool a_vec = k % 4 == 0 && gpu100::is_aligned(A, 16);
  const bool b_vec = n % 4 == 0 && gpu100::is_aligned(B, 16);
  const bool c_vec = n % 4 == 0 && gpu100::is_aligned(C, 16);
  kernel<<<unsigned(tiles), Threads, 0, s>>>(A, B, C, int(m), int(n), int(k), int(tiles_n), a_vec,
                                             b_vec, c_vec);
  LAUNCH_CHECK();
}

void run_vectorized(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k,
                    cudaStream_t s) {
  launch_tiles<VecShape::BM, VecShape::BN, VecShape::kThreads>(sgemm_vectorized, A, B, C, m, n,
                                                               k, s);
}

void run_warptile(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k,
                  cudaStream_t s) {
  launch_tiles<WarpTile::BM, WarpTile::BN, WarpTile::kThreads>(sgemm_warptile<WarpTile>, A, B, C,
                                                               m, n, k, s);
}

// "128 regs, 16640 B smem, 2 blocks/SM": what the compiler and the occupancy calculator made of
// a kernel on this device, to compare with the design in the opening comment.
template <class Kernel>
std::string resources(Kernel kernel, int threads) {
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0));
  char s[160];
  std::snprintf(s, sizeof s, "%d registers, %zu B shared, %zu B local (spills), %d blocks/SM",
                attr.numRegs, attr.sharedSizeBytes, attr.localSizeBytes, blocks);
  return s;
}

}  // namespace

// A launcher of the GEMM days' common shape for one of the kernels above.
template <void (*Run)(const float*, const float*, float*, int64_t, int64_t, int64_t, cudaStream_t)>
void launch(const gpu100::GemmOperands& o, cudaStream_t s) {
  Run(static_cast<const float*>(o.A), static_cast<const float*>(o.B), static_cast<float*>(o.C),
      o.m, o.n, o.k, s);
}

int main(int argc, char** argv) {
  gpu100::Cli cli("FP32 SGEMM with warp tiling (block -> warp -> thread tiles) vs cublasSgemm");
  constexpr int64_t kMaxDim = int64_t(1) << 30;
  gpu100::GemmArgs args;  // --m --n --k --sweep
  args.add_to(cli, kMaxDim);
  const std::vector<gpu100::GemmVersion> versions = {{"vectorized", launch<run_vectorized>},
                                                     {"warptile", launch<run_warptile>}};
  cli.kernels({"vectorized", "warptile"});

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    gpu100::GemmProblem problem(ctx, args.m, args.n, args.k);
    problem.run(versions, args.sweep);
    auto& report = ctx.report();
    if (ctx.want("vectorized"))
      report.note("vectorized: " + resources(sgemm_vectorized, VecShape::kThreads));
    if (ctx.want("warptile"))
      report.note("warptile: " + resources(sgemm_warptile<WarpTile>, WarpTile::kThreads));
  });
}
