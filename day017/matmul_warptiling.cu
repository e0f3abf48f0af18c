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
// Per k step a lane then reads its 8 A and 8 B values as four float4 (ld.shared.v4), and for
// each of them the warp reads ONE contiguous, aligned run of at most 128 bytes: no bank
// conflicts, and a broadcast for the lanes that share a value. The tile loader below (global ->
// registers -> shared memory, A transposed into rows padded by 4 floats, unguarded float4 inside
// the matrices, guarded loads with zero fill at the edges) feeds it.
//
// Versions
//   vectorized  the day-015 kernel: 128 x 128 x 8 block tile, 256 threads, each an 8 x 8
//               contiguous thread tile; float4 global loads, A transposed, unpadded.
//   warptile    block tile -> warp tile -> thread tile as above, __launch_bounds__(256, 2).
//
// Shapes: row-major, C[M x N] = A[M x K] * B[K x N], arbitrary M, N, K (1 to 2^30 each). Blocks
// are numbered in one dimension (tile row = blockIdx.x / tiles_n), so no shape meets the 65535
// limit of gridDim.y. The program notes the registers, shared memory and blocks per SM that the
// compiler and the occupancy calculator gave each kernel on the device it runs on.
//
// Check: every entry (at --quick sizes) or ~4096 sampled entries, last row and column included,
// against a double-precision CPU dot product, with gemm_tolerance(K). Baseline: cublasSgemm
// (plain FP32, no TF32) on the same inputs in the same run.
//
// Run:  build/bin/day017 [--m 4096 --n 4096 --k 4096] [--kernel warptile] [--sweep]
#include <fmt/core.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"

namespace {

constexpr int64_t kMaxDim = int64_t(1) << 30;

// ---- kernels: the tile loader -------------------------------------------------------------------
// Any M, N, K: tiles that lie inside the matrices load with unguarded float4; tiles that cross an
// edge load what exists element by element and fill the rest with zeros (which add nothing to the
// dot products); C is written only where it exists. float4 (16-byte) global accesses only where
// the matrix allows them: row length a multiple of 4 and a 16-byte aligned base (the launcher's
// a_vec / b_vec / c_vec). No access is ever out of bounds.

// The block tile and how its threads load it. Everything is a compile-time constant, so every
// register array sized by it is indexed with constants only and stays in registers. A is stored
// transposed in shared memory (As[k][m], rows of BM + APad_ floats), B as it is (Bs[k][n]).
template <int BM_, int BN_, int BK_, int Threads_, int APad_>
struct TileShape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_;
  static constexpr int kThreads = Threads_, kWarps = Threads_ / 32;
  static constexpr int kAStride = BM + APad_;  // floats per k row of the transposed A tile
  static constexpr int kBStride = BN;
  static constexpr int kAFloats = BK * kAStride, kBFloats = BK * kBStride;

  // A (BM x BK, row-major in global memory): every warp loads chunks of 16 rows x 8 columns,
  // lane l taking row l % 16 and the float4 at column 4 * (l / 16). One pass of all warps covers
  // kAPassRows x kAPassK; kALoadsM x kALoadsK passes cover the tile.
  static constexpr int kAPassRows = 16 * kWarps < BM ? 16 * kWarps : BM;
  static constexpr int kAPassK = 8 * kWarps / (kAPassRows / 16);
  static constexpr int kALoadsM = BM / kAPassRows, kALoadsK = BK / kAPassK;
  // B (BK x BN): consecutive threads take consecutive float4 of a row.
  static constexpr int kBVecPerRow = BN / 4;
  static constexpr int kBPassRows = kThreads / kBVecPerRow;
  static constexpr int kBLoads = BK / kBPassRows;

  static_assert(kThreads % 32 == 0, "whole warps");
  static_assert(BM % 32 == 0 && BN % 32 == 0, "tiles of whole banks");
  static_assert(APad_ % 4 == 0, "the padding must keep float4 rows 16-byte aligned");
  // The warps of one pass split into whole columns of 16-row chunks: without this (e.g. 8 warps
  // over BM = 96, 6 chunks) kAPassK is rounded down, some chunks get loaded twice, some columns
  // never, and a_col + j * kAPassK stops being a multiple of 4 (misaligned float4).
  static_assert(kWarps % (kAPassRows / 16) == 0, "A load passes: warps in whole chunk columns");
  static_assert(BM % kAPassRows == 0 && kAPassK >= 8 && BK % kAPassK == 0, "A load passes");
  static_assert(kThreads % kBVecPerRow == 0 && BK % kBPassRows == 0, "B load passes");
};

// Up to four consecutive floats at p, zero where they do not exist: `ok` says whether the row
// exists, `avail` how many of the 4 columns do (any int; <= 0: none). `vec`: the matrix allows
// 16-byte loads (row length a multiple of 4, aligned base), so p is 16-byte aligned.
__device__ __forceinline__ float4 load4_guarded(const float* __restrict__ p, bool ok, int avail,
                                                bool vec) {
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
  if (ok && avail > 0) {
    if (vec && avail >= 4) {
      v = __ldg(reinterpret_cast<const float4*>(p));
    } else {
      v.x = __ldg(p);
      if (avail > 1) v.y = __ldg(p + 1);
      if (avail > 2) v.z = __ldg(p + 2);
      if (avail > 3) v.w = __ldg(p + 3);
    }
  }
  return v;
}

// The global loads of one thread, tile after tile along K. What it keeps between tiles is small
// on purpose (two running pointers, the strides and three counts): at the 128-register cap every
// register it holds is one fewer for the accumulators and fragments. The pointers may point past
// the matrix (rows or columns the tile does not have); they are dereferenced only where the
// element exists.
template <class T>
struct TileLoader {
  float4 a[T::kALoadsM][T::kALoadsK];  // staging registers
  float4 b[T::kBLoads];
  const float* a_ptr;  // &A[m0 + a_row][k0 + a_col] of the next tile
  const float* b_ptr;  // &B[k0 + b_row][n0 + b_col]
  int K, N;
  int a_rows;  // rows of A from this thread's first row on: M - (m0 + a_row)
  int b_cols;  // columns of B from this thread's first column on: N - (n0 + b_col)
  int a_col, b_row;

  __device__ TileLoader(const float* __restrict__ A, const float* __restrict__ B, int M, int N_,
                        int K_, int m0, int n0)
      : K(K_), N(N_) {
    const int a_row = first_a_row();
    a_col = (int(threadIdx.x) / 32 / kChunksM) * 8 + (int(threadIdx.x) % 32 / 16) * 4;
    b_row = int(threadIdx.x) / T::kBVecPerRow;
    const int b_col = first_b_col();
    a_ptr = A + int64_t(m0 + a_row) * K + a_col;
    b_ptr = B + int64_t(b_row) * N + (n0 + b_col);
    a_rows = M - (m0 + a_row);
    b_cols = N - (n0 + b_col);
  }

  static constexpr int kChunksM = T::kAPassRows / 16;
  __device__ static int first_a_row() {
    return (int(threadIdx.x) / 32 % kChunksM) * 16 + int(threadIdx.x) % 16;
  }
  __device__ static int first_b_col() { return (int(threadIdx.x) % T::kBVecPerRow) * 4; }

  // Issues every global load of the next tile (none is waited for here) and moves on by BK.
  // k_rem = K - k0 of that tile. fast (block-uniform): the whole tile lies inside the matrix
  // and float4 is allowed; no guards. vec: float4 allowed where 4 elements exist.
  __device__ __forceinline__ void load(int k_rem, bool a_fast, bool b_fast, bool a_vec,
                                       bool b_vec) {
    if (a_fast) {
#pragma unroll
      for (int i = 0; i < T::kALoadsM; ++i)
#pragma unroll
        for (int j = 0; j < T::kALoadsK; ++j)
          a[i][j] = __ldg(reinterpret_cast<const float4*>(
              a_ptr + int64_t(i * T::kAPassRows) * K + j * T::kAPassK));
    } else {
#pragma unroll
      for (int i = 0; i < T::kALoadsM; ++i)
#pragma unroll
        for (int j = 0; j < T::kALoadsK; ++j)
          a[i][j] = load4_guarded(a_ptr + int64_t(i * T::kAPassRows) * K + j * T::kAPassK,
                                  i * T::kAPassRows < a_rows, k_rem - a_col - j * T::kAPassK,
                                  a_vec);
    }
    if (b_fast) {
#pragma unroll
      for (int i = 0; i < T::kBLoads; ++i)
        b[i] = __ldg(reinterpret_cast<const float4*>(b_ptr + int64_t(i * T::kBPassRows) * N));
    } else {
#pragma unroll
      for (int i = 0; i < T::kBLoads; ++i)
        b[i] = load4_guarded(b_ptr + int64_t(i * T::kBPassRows) * N,
                             b_row + i * T::kBPassRows < k_rem, b_cols, b_vec);
    }
    a_ptr += T::BK;
    b_ptr += int64_t(T::BK) * N;
  }

  // Writes the staging registers to the shared tiles: A transposed (As[k][m]), B as it is
  // (Bs[k][n]). The A stores of a warp: lanes 0-15 write 16
  // consecutive floats of one k row, lanes 16-31 of the row 4 further, 4 * kAStride floats away:
  // 16 banks away with a padding of 4 (conflict-free), the same banks without padding (2-way
  // conflicts).
  __device__ __forceinline__ void store(float* __restrict__ As, float* __restrict__ Bs) const {
    const int a_row = first_a_row(), b_col = first_b_col();
#pragma unroll
    for (int i = 0; i < T::kALoadsM; ++i)
#pragma unroll
      for (int j = 0; j < T::kALoadsK; ++j) {
        float* p = As + (a_col + j * T::kAPassK) * T::kAStride + a_row + i * T::kAPassRows;
        p[0] = a[i][j].x;
        p[T::kAStride] = a[i][j].y;
        p[2 * T::kAStride] = a[i][j].z;
        p[3 * T::kAStride] = a[i][j].w;
      }
#pragma unroll
    for (int i = 0; i < T::kBLoads; ++i)
      *reinterpret_cast<float4*>(Bs + (b_row + i * T::kBPassRows) * T::kBStride + b_col) = b[i];
  }
};

// A float4's x / y / z / w by index, for the outer products over float4 fragments.
__device__ __forceinline__ float component(const float4& v, int c) {
  return c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w;  // c is a constant after unrolling
}

// Writes a thread's 4 consecutive outputs of one row: one float4 store where all 4 columns
// exist and the row keeps 16-byte alignment, scalar stores otherwise.
__device__ __forceinline__ void store4(float* __restrict__ C, int M, int N, int row, int col,
                                       float4 v, bool c_vec) {
  if (row >= M) return;
  float* p = C + int64_t(row) * N + col;
  if (c_vec && col + 4 <= N) {
    *reinterpret_cast<float4*>(p) = v;
  } else {
    if (col < N) p[0] = v.x;
    if (col + 1 < N) p[1] = v.y;
    if (col + 2 < N) p[2] = v.z;
    if (col + 3 < N) p[3] = v.w;
  }
}

// ---- kernels: vectorized and warptile -----------------------------------------------------------
// WarpTiling adds the warp and thread levels to TileShape.
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

// ---- launchers ----------------------------------------------------------------------------------
// One block per BM x BN tile, numbered along N first (blocks that run together share their A rows
// in L2).
template <int BM, int BN, int Threads, class Kernel>
void launch_tiles(Kernel kernel, const gpu100::GemmOperands& o, cudaStream_t s) {
  const auto* A = static_cast<const float*>(o.A);
  const auto* B = static_cast<const float*>(o.B);
  auto* C = static_cast<float*>(o.C);
  const int64_t tiles_n = gpu100::ceil_div<int64_t>(o.n, BN);
  const int64_t tiles = gpu100::ceil_div<int64_t>(o.m, BM) * tiles_n;
  if (tiles > INT32_MAX) throw std::invalid_argument("too many tiles for a 1D grid");
  // float4 access needs 16-byte aligned rows: row length a multiple of 4 and an aligned base.
  const bool a_vec = o.k % 4 == 0 && gpu100::is_aligned(A, 16);
  const bool b_vec = o.n % 4 == 0 && gpu100::is_aligned(B, 16);
  const bool c_vec = o.n % 4 == 0 && gpu100::is_aligned(C, 16);
  kernel<<<unsigned(tiles), Threads, 0, s>>>(A, B, C, int(o.m), int(o.n), int(o.k), int(tiles_n),
                                             a_vec, b_vec, c_vec);
  LAUNCH_CHECK();
}

void launch_vectorized(const gpu100::GemmOperands& o, cudaStream_t s) {
  launch_tiles<VecShape::BM, VecShape::BN, VecShape::kThreads>(sgemm_vectorized, o, s);
}

void launch_warptile(const gpu100::GemmOperands& o, cudaStream_t s) {
  launch_tiles<WarpTile::BM, WarpTile::BN, WarpTile::kThreads>(sgemm_warptile<WarpTile>, o, s);
}

struct Version {
  const char* name;
  void (*launch)(const gpu100::GemmOperands&, cudaStream_t);
  const void* kernel;  // for its resources
  int threads;
};
const Version kVersions[] = {
    {"vectorized", launch_vectorized, reinterpret_cast<const void*>(sgemm_vectorized),
     VecShape::kThreads},
    {"warptile", launch_warptile, reinterpret_cast<const void*>(sgemm_warptile<WarpTile>),
     WarpTile::kThreads},
};

std::vector<gpu100::GemmVersion> gemm_versions() {
  std::vector<gpu100::GemmVersion> v;
  for (const Version& x : kVersions) v.push_back({x.name, x.launch});
  return v;
}

// ---- analysis -----------------------------------------------------------------------------------
// "128 registers, 16640 B shared, ...": what the compiler and the occupancy calculator made of a
// kernel on this device, to compare with the design (PROGRESS.md).
std::string resources(const Version& v) {
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, v.kernel));
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, v.kernel, v.threads, 0));
  return fmt::format("{}: {} registers, {} B shared, {} B local (spills), {} blocks/SM", v.name,
                     attr.numRegs, attr.sharedSizeBytes, attr.localSizeBytes, blocks);
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("FP32 SGEMM with warp tiling (block -> warp -> thread tiles) vs cublasSgemm");
  gpu100::GemmArgs args;  // --m --n --k --sweep
  args.add_to(cli, kMaxDim);
  cli.kernels_of(kVersions);

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    gpu100::GemmProblem problem(ctx, args.m, args.n, args.k);
    problem.run(gemm_versions(), args.sweep);
    for (const Version& v : kVersions)
      if (ctx.want(v.name)) ctx.report().note(resources(v));
  });
}
