// Day 018 - double buffering and autotuning: the day-017 SGEMM with a two-stage shared-memory
// pipeline, compiled in a set of tile shapes that are all checked and timed on the GPU it runs on
//
// Day 017's warp-tiled kernel does, for every BK-deep slice of K:
//   global loads -> (wait ~1 us) -> shared stores -> barrier -> BK k steps of FFMAs -> barrier.
// During the wait the block computes nothing; only the second block on the SM (2 fit) can use
// the FP32 pipes. Two ideas remove the wait and the guess.
//
// 1. Double buffering. Two shared-memory stages: while the warps compute tile t out of one, the
//    global loads of tile t+1 are in flight into the staging registers, which go to the other
//    stage after the math; one __syncthreads() per tile publishes the new stage and ends every
//    read of the old one. The price: twice the shared memory, and staging registers live across
//    the math beside the accumulators, under __launch_bounds__'s register cap. The tile loader is
//    day 017's, changed for this: store() fills one stage [As | Bs] of the dynamic shared array.
// 2. Autotuning. Which tile is fastest depends on the GPU and the problem by a few percent, too
//    little for a model to predict: the program compiles a set of configurations, checks every
//    one (a fast wrong kernel must not win), times them all, tabulates registers, shared memory
//    and blocks per SM, and names the fastest that passed; --sweep runs it against cuBLAS.
//
// Versions (db_<BMxBNxBK>_w<WMxWN>_b<blocks per SM asked of __launch_bounds__>, db = double
// buffered; thread tile 4*WMITER x 4*WNITER in 4 x 4 sub-tiles as on day 017)
//   warptile                 day 017's kernel, single stage: the row to beat
//   db_128x128x8_w32x64_b2   the classic double-buffered tile
//   db_128x128x16_w32x64_b2  day 017's tile, double-buffered (k loop unrolled by 2)
//   db_128x128x16_w64x32_b2  the same block tile cut into taller warp tiles
//   db_128x128x16_w32x64_b1  day 017's tile, one block per SM (up to 255 registers)
//   db_128x128x32_w32x64_b1  twice the stage depth: 65 KiB of shared memory (opted in)
//   db_64x128x16_w32x64_b3   128 threads, 3 blocks per SM: smaller tiles, more of them
//   db_128x64x16_w64x32_b3   its transpose
//   db_128x128x16_w64x64_b2  128 threads, 16 x 8 outputs per thread
//   db_128x256x8_w64x64_b1   256 threads, 16 x 8 outputs per thread, the largest tile
//   db_64x64x16_w32x32_b4    128 threads, 8 x 4 outputs per thread, for small problems
//
// Shapes: row-major, C[M x N] = A[M x K] * B[K x N], arbitrary M, N, K (1 to 2^30 each): edge
// tiles take guarded loads and stores, interior tiles unguarded float4 (day 017). 1D grid.
//
// Check: every configuration, at every entry (at --quick sizes) or ~4096 sampled entries, last
// row and column included, against a double-precision CPU dot product, with gemm_tolerance(K).
// Baseline: cublasSgemm (plain FP32, no TF32) on the same inputs in the same run.
//
// Run:  build/bin/day018 [--m 4096 --n 4096 --k 4096] [--kernel warptile,db_128x128x8_w32x64_b2]
//       [--sweep]
#include <fmt/core.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"

namespace {

constexpr int64_t kMaxDim = int64_t(1) << 30;

// ---- kernels: the tile loader (day 017's, with stages) ------------------------------------------
// Any M, N, K: tiles that lie inside the matrices load with unguarded float4; tiles that cross an
// edge load what exists element by element and fill the rest with zeros (which add nothing to the
// dot products); C is written only where it exists. float4 (16-byte) global accesses only where
// the matrix allows them: row length a multiple of 4 and a 16-byte aligned base (the launcher's
// a_vec / b_vec / c_vec). No access is ever out of bounds.

// The block tile and how its threads load it. Everything is a compile-time constant, so every
// register array sized by it is indexed with constants only and stays in registers. A is stored
// transposed in shared memory (As[k][m], rows of BM + 4 floats: every configuration here pads, as
// day 017's warptile does), B as it is (Bs[k][n]). A stage is [As | Bs], kStageFloats floats.
template <int BM_, int BN_, int BK_, int Threads_>
struct TileShape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_;
  static constexpr int kThreads = Threads_, kWarps = Threads_ / 32;
  static constexpr int kAStride = BM + 4;  // floats per k row of the transposed A tile
  static constexpr int kBStride = BN;
  static constexpr int kAFloats = BK * kAStride, kBFloats = BK * kBStride;
  static constexpr int kStageFloats = kAFloats + kBFloats;

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
  static_assert(kAFloats % 4 == 0 && kStageFloats % 4 == 0, "16-byte aligned tiles and stages");
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

// The global loads of one thread, tile after tile along K. Double buffering keeps this state and
// the staging registers live across the whole inner product, so it is small on purpose (two
// running pointers, the strides and three counts): every register it holds is one fewer for the
// accumulators and fragments. The pointers may point past the matrix (rows or columns the tile
// does not have); they are dereferenced only where the element exists.
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

  // Writes the staging registers to one stage [As | Bs] of the dynamic shared array (the only
  // one, or one of two).
  __device__ __forceinline__ void store(float* stage) const { store(stage, stage + T::kAFloats); }
  // A transposed (As[k][m]), B as it is (Bs[k][n]). The A stores of a warp: lanes 0-15 write 16
  // consecutive floats of one k row, lanes 16-31 of the row 4 further, 4 * kAStride floats away:
  // 16 banks away with the padding of 4 (conflict-free).
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


// ---- kernels: double-buffered warp tiling -------------------------------------------------------
// WarpTiling adds the warp and thread levels to TileShape. MinBlocks_: __launch_bounds__'s minimum
// blocks per SM, which caps registers at 65536 / (threads * MinBlocks_). UnrollK_: unroll factor
// of the inner k loop (asked for the whole BK, nvcc may spill at a 128-register cap).
template <int BM_, int BN_, int BK_, int WM_, int WN_, int WMITER_, int WNITER_, int MinBlocks_,
          int UnrollK_ = BK_>
struct WarpTiling : TileShape<BM_, BN_, BK_, 32 * (BM_ / WM_) * (BN_ / WN_)> {
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

// The kernel: day 017's warp-tiled SGEMM, single-buffered or with two shared stages.
template <class T, bool kDoubleBuffer>
constexpr size_t smem_bytes() {
  return sizeof(float) * size_t(T::kStageFloats) * (kDoubleBuffer ? 2 : 1);
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

template <class T>
__device__ __forceinline__ void warp_tile_mma(const float* stage, float (&acc)[T::kRegM][T::kRegN],
                                              int a_off, int b_off) {
  warp_tile_mma<T>(stage, stage + T::kAFloats, acc, a_off, b_off);
}

template <class T, bool kDoubleBuffer>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    sgemm_warptile(const float* __restrict__ A, const float* __restrict__ B,
                   float* __restrict__ C, int M, int N, int K, int tiles_n, bool a_vec,
                   bool b_vec, bool c_vec) {
  // Dynamic shared memory (opted in above 48 KB): [As | Bs] once, or twice for two stages.
  extern __shared__ float4 smem4[];
  float* const smem = reinterpret_cast<float*>(smem4);

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
    loader.store(smem);
    __syncthreads();
    float* cur = smem;                      // the stage the math reads
    float* nxt = smem + T::kStageFloats;  // the stage the next tile goes to
    for (;;) {
      const bool more = k_rem > 0;  // another tile to load; the same for the whole block
      if (more) load_next();        // in flight during the math below
      warp_tile_mma<T>(cur, acc, a_off, b_off);
      if (more) loader.store(nxt);
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
      loader.store(smem);
      __syncthreads();
      warp_tile_mma<T>(smem, acc, a_off, b_off);
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

// ---- launchers ----------------------------------------------------------------------------------
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

template <class T, bool kDoubleBuffer>
void launch_config(const gpu100::GemmOperands& o, cudaStream_t s) {
  const auto* A = static_cast<const float*>(o.A);
  const auto* B = static_cast<const float*>(o.B);
  auto* C = static_cast<float*>(o.C);
  // One block per BM x BN tile, numbered along N first (blocks that run together share their
  // A rows in L2); a 1D grid, so no gridDim.y limit.
  const int64_t tiles_n = gpu100::ceil_div<int64_t>(o.n, T::BN);
  const int64_t tiles = gpu100::ceil_div<int64_t>(o.m, T::BM) * tiles_n;
  if (tiles > INT32_MAX) throw std::invalid_argument("too many tiles for a 1D grid");
  // float4 access needs 16-byte aligned rows: row length a multiple of 4 and an aligned base.
  const bool a_vec = o.k % 4 == 0 && gpu100::is_aligned(A, 16);
  const bool b_vec = o.n % 4 == 0 && gpu100::is_aligned(B, 16);
  const bool c_vec = o.n % 4 == 0 && gpu100::is_aligned(C, 16);
  sgemm_warptile<T, kDoubleBuffer><<<unsigned(tiles), T::kThreads, smem_bytes<T, kDoubleBuffer>(),
                                     s>>>(A, B, C, int(o.m), int(o.n), int(o.k), int(tiles_n),
                                          a_vec, b_vec, c_vec);
  LAUNCH_CHECK();
}

struct Config {
  std::string name;
  int bm, bn, bk, wm, wn, tm, tn, threads, min_blocks, unroll, stages;
  size_t smem;
  const void* kernel;
  void (*launch)(const gpu100::GemmOperands&, cudaStream_t);
};

template <class T, bool kDoubleBuffer>
Config make_config(std::string name = "") {
  if (name.empty())
    name = fmt::format("db_{}x{}x{}_w{}x{}_b{}", T::BM, T::BN, T::BK, T::WM, T::WN, T::kMinBlocks);
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

const std::vector<Config> kConfigs = {
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

// Above 48 KB of dynamic shared memory a kernel must opt in; below it this is harmless. Every
// config fits the 99 KB a block may opt in to on any sm_80+ GPU; the check is for a device that
// allows less, where a launch would fail.
void allow_shared_memory(const Config& c, const gpu100::DeviceInfo& device) {
  if (c.smem > device.smem_per_block_optin)
    throw std::runtime_error(fmt::format("{} needs {} B of shared memory per block, the device "
                                         "allows {}",
                                         c.name, c.smem, device.smem_per_block_optin));
  CUDA_CHECK(cudaFuncSetAttribute(c.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  int(c.smem)));
}

// ---- analysis: the autotune table ---------------------------------------------------------------
// The index in kConfigs (and in results) of the fastest configuration that ran and passed its
// check; -1 when none did.
int fastest_passing(const std::vector<gpu100::Measured>& results) {
  int winner = -1;
  double winner_rate = 0;
  for (size_t i = 0; i < kConfigs.size(); ++i)
    if (results[i].ran && results[i].check.pass && results[i].rate > winner_rate) {
      winner = int(i);
      winner_rate = results[i].rate;
    }
  return winner;
}

// Every configuration that ran: its shape, what the compiler and the occupancy calculator gave it
// on this device (registers, blocks per SM), its time, rate and check.
gpu100::Table autotune_table(const std::vector<gpu100::Measured>& results, int winner,
                             double base_rate, int64_t m, int64_t n, int64_t k) {
  gpu100::Table table;
  table.title = fmt::format("autotune: every tile configuration at m={} n={} k={}", m, n, k);
  table.columns = {"config",   "stages",    "block tile", "warp tile", "thread tile",
                   "threads",  "k unroll asked", "registers", "smem KiB", "blocks/SM",
                   "ms",       "TFLOP/s",   "% of cublasSgemm",        "check",
                   "winner"};
  for (size_t i = 0; i < kConfigs.size(); ++i) {
    const gpu100::Measured& r = results[i];
    if (!r.ran) continue;
    const Config& c = kConfigs[i];
    cudaFuncAttributes attr{};
    CUDA_CHECK(cudaFuncGetAttributes(&attr, c.kernel));
    int blocks = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, c.kernel, c.threads, c.smem));
    table.add_row({c.name, c.stages, fmt::format("{}x{}x{}", c.bm, c.bn, c.bk),
                   fmt::format("{}x{}", c.wm, c.wn), fmt::format("{}x{}", c.tm, c.tn), c.threads,
                   c.unroll, attr.numRegs, double(c.smem) / 1024.0, blocks, r.time.median_ms,
                   r.rate, base_rate > 0 ? 100.0 * r.rate / base_rate : 0.0,
                   r.check.pass ? "PASS" : "FAIL", int(i) == winner ? "<- best" : ""});
  }
  return table;
}

std::string winner_note(const Config& c, double rate, double base_rate, bool sweep) {
  return fmt::format(
      "autotune winner: {} (block tile {}x{}x{}, warp tile {}x{}, thread tile {}x{}, {} threads, "
      "{} stage(s), __launch_bounds__({}, {}), k unroll asked {}): {:.2f} TFLOP/s, {:.1f}% of "
      "cublasSgemm{}",
      c.name, c.bm, c.bn, c.bk, c.wm, c.wn, c.tm, c.tn, c.threads, c.stages, c.threads,
      c.min_blocks, c.unroll, rate, base_rate > 0 ? 100.0 * rate / base_rate : 0.0,
      sweep ? "; --sweep runs it" : "");
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "FP32 SGEMM: warp tiling with a two-stage shared-memory pipeline, autotuned over tile "
      "shapes, vs cublasSgemm");
  gpu100::GemmArgs args;  // --m --n --k --sweep (the sweep runs the autotune winner)
  args.add_to(cli, kMaxDim);
  cli.kernels_of(kConfigs);

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    gpu100::GemmProblem problem(ctx, args.m, args.n, args.k);
    const double base_rate = gpu100::tflops(problem.flops(), problem.baseline().median_ms);

    // Every selected config: checked against the CPU, then timed.
    std::vector<gpu100::Measure> runs;
    for (const Config& c : kConfigs) {
      if (ctx.want(c.name)) allow_shared_memory(c, ctx.device());
      runs.push_back(problem.measure({c.name, c.launch}));
    }
    const std::vector<gpu100::Measured> results = ctx.measure_all(runs);

    const int best = fastest_passing(results);
    report.table(autotune_table(results, best, base_rate, args.m, args.n, args.k));
    if (best < 0) {
      report.note("autotune: no configuration passed; nothing to name");
      return;
    }
    const Config& winner = kConfigs[size_t(best)];
    report.note(winner_note(winner, results[size_t(best)].rate, base_rate, args.sweep));
    if (args.sweep) problem.sweep({winner.name, winner.launch});
  });
}
