// The guarded global -> shared tile loader and the C store of the warp-tiled FP32 GEMM days
// (017 teaches them, 018 reuses them). Conventions: row-major, C[M x N] = A[M x K] * B[K x N],
// any M, N, K (int). Tiles that lie inside the matrices load with unguarded float4; tiles that
// cross an edge load what exists element by element and fill the rest with zeros (which add
// nothing to the dot products); C is written only where it exists. float4 (16-byte) global
// accesses are used only when the matrix allows them: row length a multiple of 4 and a 16-byte
// aligned base (the launcher's a_vec / b_vec / c_vec). No access is ever out of bounds.
//   TileShape      the block tile BM x BN x BK, its shared layouts and which thread loads what
//   TileLoader<T>  one thread's part of each tile: global -> registers (load), registers ->
//                  shared memory (store), A transposed
//   load4_guarded  up to 4 consecutive floats, zero where they do not exist
//   store4         a thread's 4 consecutive outputs of one row of C
//   component      v.x / v.y / v.z / v.w by an index that is constant after unrolling
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace gpu100::sgemm {

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

// ---------------------------------------------------------------------------------------------
// Global -> registers -> shared memory, for any TileShape.

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
// on purpose (two running pointers, the strides and three counts): every register it holds is one
// fewer for the accumulators and fragments, and with double buffering this state and the staging
// registers stay live across the whole inner product. The pointers may point past the matrix
// (rows or columns the tile does not have); they are dereferenced only where the element exists.
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

  // Writes the staging registers to the shared tiles (the only stage, or one of two): A
  // transposed (As[k][m]), B as it is (Bs[k][n]). The A stores of a warp: lanes 0-15 write 16
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

// ---------------------------------------------------------------------------------------------
// Registers -> C, and reading float4 fragments.

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

}  // namespace gpu100::sgemm
