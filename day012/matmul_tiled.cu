// Day 012 - tiled matrix multiplication: C = A * B in FP32 through shared-memory tiles
//
// Day 011's coalesced kernel loads two floats from global memory (through L1/L2) for every FMA:
// each A element is loaded again by every thread of its row, each B element by every thread of
// its column. Tiling makes a block of TILE x TILE threads share that work: per step the block
// copies a TILE x TILE tile of A and one of B into shared memory (one element per thread,
// coalesced), waits at a barrier, and then every thread runs TILE FMAs reading only shared
// memory. Each global element now serves TILE threads instead of one: global/L2 traffic falls by
// a factor of TILE. The barrier after the FMAs keeps a fast warp from overwriting the tiles while
// a slow one still reads them.
//
// Any M, N and K: threads whose element of A or B lies outside the matrix store 0 into the tile,
// threads whose output lies outside C still load and still reach every barrier, and only the
// final store is guarded (a __syncthreads() that some threads skip is undefined behaviour).
//
// Versions
//   static16  template<int TILE> with TILE = 16: static __shared__ tiles (2 KB), 256 threads.
//   static32  the same template with TILE = 32 (8 KB, 1024 threads): half the global traffic.
//   dynamic   the tile edge chosen at run time (--tile, default 32): one extern __shared__
//             array sized in the launch, split into As and Bs; its inner loop has a run-time
//             trip count, so it does not unroll. Compare it with static32 at --tile 32.
//
// Grid: x over column tiles, y over row tiles (gridDim.y <= 65535, so M <= 65535 * 16 for the
// static16 version; the CLI refuses larger M with a clear message).
//
// Check: check_gemm (double reference; every entry at --quick sizes, ~4096 sampled entries incl.
// the last row and column at large ones) with gemm_tolerance(K). Baseline: cublasSgemm (plain
// FP32, no TF32) on the same inputs in the same run; the table shows "% of cublasSgemm".
//
// Run:  build/bin/day012 [--m 4096 --n 4096 --k 4096] [--tile 24] [--kernel static32,dynamic]
//       [--sweep] [--json out.json]      (--sweep: the fastest version vs cuBLAS at 256..8192)
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"

namespace {

// Sizes stay below 2^30 so that tile indices plus a tile edge never overflow a 32-bit int; the
// element offsets (row * K can pass 2^31 long before that) are 64-bit.
constexpr int64_t kMaxDim = int64_t(1) << 30;
constexpr int kMaxTile = 32;  // TILE x TILE threads per block: at most 1024

// ---------------------------------------------------------------------------------------------
// static: the tile edge is a compile-time constant, so the shared arrays are static and the
// inner loop unrolls into TILE FMAs with constant shared-memory offsets.
template <int TILE>
__global__ void __launch_bounds__((TILE * TILE))
    matmul_tiled_static(const float* __restrict__ A, const float* __restrict__ B,
                        float* __restrict__ C, int M, int N, int K) {
  // 16-byte aligned: a thread reads As[ty][p..p+3] in consecutive steps, which the compiler may
  // merge into one 16-byte load (it cannot in the dynamic version: the tile edge is unknown).
  __shared__ __align__(16) float As[TILE][TILE];
  __shared__ __align__(16) float Bs[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  // The tile's A row (clamped into the matrix, so the pointer is always valid) and B column.
  const float* a_row = A + int64_t(min(row, M - 1)) * K;
  const float* b_col = B + min(col, N - 1);
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    // Coalesced: a warp reads consecutive k of one A row and consecutive columns of one B row.
    As[ty][tx] = (row < M && k0 + tx < K) ? a_row[k0 + tx] : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && col < N) ? b_col[int64_t(k0 + ty) * N] : 0.0f;
    __syncthreads();  // the tiles are complete
#pragma unroll
    for (int p = 0; p < TILE; ++p) acc = fmaf(As[ty][p], Bs[p][tx], acc);
    __syncthreads();  // everyone is done reading before the next step overwrites the tiles
  }
  if (row < M && col < N) C[int64_t(row) * N + col] = acc;
}

// ---------------------------------------------------------------------------------------------
// dynamic: the same kernel with the tile edge read from blockDim (square blocks, tile = blockDim.x)
// and the two tiles carved out of one dynamically sized shared array of 2 * tile^2 floats.
__global__ void __launch_bounds__((kMaxTile * kMaxTile))
    matmul_tiled_dynamic(const float* __restrict__ A, const float* __restrict__ B,
                         float* __restrict__ C, int M, int N, int K) {
  extern __shared__ float smem[];
  const int tile = blockDim.x;
  float* As = smem;                // tile x tile, row-major
  float* Bs = smem + tile * tile;  // tile x tile, row-major
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * tile + ty;
  const int col = blockIdx.x * tile + tx;
  const float* a_row = A + int64_t(min(row, M - 1)) * K;
  const float* b_col = B + min(col, N - 1);
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += tile) {
    As[ty * tile + tx] = (row < M && k0 + tx < K) ? a_row[k0 + tx] : 0.0f;
    Bs[ty * tile + tx] = (k0 + ty < K && col < N) ? b_col[int64_t(k0 + ty) * N] : 0.0f;
    __syncthreads();
    for (int p = 0; p < tile; ++p) acc = fmaf(As[ty * tile + p], Bs[p * tile + tx], acc);
    __syncthreads();
  }
  if (row < M && col < N) C[int64_t(row) * N + col] = acc;
}

dim3 tile_grid(const gpu100::GemmOperands& o, int tile) {
  return dim3(gpu100::grid_for(o.n, tile), gpu100::grid_for(o.m, tile));  // y <= 65535: see main
}

template <int TILE>
void launch_static(const gpu100::GemmOperands& o, cudaStream_t s) {
  matmul_tiled_static<TILE><<<tile_grid(o, TILE), dim3(TILE, TILE), 0, s>>>(
      static_cast<const float*>(o.A), static_cast<const float*>(o.B), static_cast<float*>(o.C),
      int(o.m), int(o.n), int(o.k));
  LAUNCH_CHECK();
}

void launch_dynamic(const gpu100::GemmOperands& o, cudaStream_t s, int tile) {
  const size_t bytes = 2 * size_t(tile) * tile * sizeof(float);
  matmul_tiled_dynamic<<<tile_grid(o, tile), dim3(tile, tile), bytes, s>>>(
      static_cast<const float*>(o.A), static_cast<const float*>(o.B), static_cast<float*>(o.C),
      int(o.m), int(o.n), int(o.k));
  LAUNCH_CHECK();
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "C = A * B in fp32 (row-major) with shared-memory tiles: static 16x16 and 32x32 tiles "
      "(template) and a run-time tile in dynamic shared memory, vs cublasSgemm");
  gpu100::GemmArgs args;  // --m --n --k --sweep
  args.add_to(cli, kMaxDim);
  const int64_t &m = args.m, &n = args.n, &k = args.k;
  int tile = 32;
  cli.option("tile", tile, "tile edge of the dynamic version (tile^2 threads per block)", 1,
             kMaxTile);
  const std::vector<gpu100::GemmVersion> versions = {
      {"static16", launch_static<16>},
      {"static32", launch_static<32>},
      {"dynamic",
       [&](const gpu100::GemmOperands& o, cudaStream_t s) { launch_dynamic(o, s, tile); }},
  };
  cli.kernels_of(versions);
  // Row tiles run along gridDim.y (at most 65535 blocks); the smallest tile in use decides.
  cli.validate([&]() -> std::string {
    const int64_t smallest = std::min(16, tile);
    if (gpu100::ceil_div<int64_t>(m, smallest) > int64_t(gpu100::kMaxGridDimY))
      return fmt::format(
          "--m {} needs more than 65535 row tiles of {} (gridDim.y limit); use "
          "--m <= {}",
          m, smallest, int64_t(gpu100::kMaxGridDimY) * smallest);
    return "";
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    gpu100::GemmProblem problem(ctx, m, n, k);
    // Past 48 KB a block's dynamic shared memory needs an opt-in (cudaFuncSetAttribute); the
    // tiles here are at most 8 KB, checked once against the device before the first launch.
    if (2.0 * tile * tile * sizeof(float) > double(ctx.device().smem_per_block))
      throw std::invalid_argument("the dynamic tile does not fit the shared memory of a block");
    problem.run(versions, args.sweep);
  });
}
