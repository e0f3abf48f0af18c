// Day 023 - WMMA HGEMM: C = A * B on tensor cores, fp16 inputs, fp32 accumulation, fp32 output
//
// Until now every multiply-add was one FFMA on one CUDA core. A tensor core multiplies whole
// small matrices: one warp-wide instruction computes a 16 x 16 x 16 product (4096 multiply-adds).
// The portable door to them is WMMA (nvcuda::wmma, <mma.h>, compute capability 7.0+): a warp owns
// opaque "fragments" - a 16 x 16 tile of A, of B, and of the fp32 accumulator - spread over its
// 32 threads in a layout the hardware chooses. load_matrix_sync fills a fragment from memory,
// mma_sync multiplies, store_matrix_sync writes the accumulator back (wmma.load, wmma.mma.sync,
// wmma.store in PTX).
//
// A fragment comes only from a whole 16 x 16 tile with an aligned start and leading dimension
// (direct_ok). Interior tiles of well-shaped matrices go straight through WMMA; everything else
// (K = 67, tiles hanging over the edge) is staged through zero-padded shared memory by guarded
// loads, and fragments that overhang C leave through shared memory element by element. Any M, N,
// K works (1 x 1 x 1 included).
//
// Versions
//   wmma_warp      one warp per 16 x 16 tile of C, fragments straight from global memory: every
//                  A element is read by ceil(N/16) warps, so like day 011 it is bound by memory
//                  traffic, not by the tensor cores.
//   wmma_block     8 warps per 128 x 128 tile of C, from 128 x 32 and 32 x 128 slices copied to
//                  shared memory (16-byte loads, rows padded by 8 halves against bank conflicts);
//                  each warp multiplies 4 x 2 fragments, reusing A fragments twice, B four times.
//   wmma_block_db  the same tile, double-buffered: slice k+1 goes to registers while the tensor
//                  cores work on slice k, one barrier per slice (day 018 on tensor cores).
//
// Check: fp16 inputs (to_half of random floats); the CPU reference multiplies the exact values the
// halves hold (half_values) in double. Products of halves are exact in fp32, so only the
// accumulation rounds, truncated inside the tensor cores: tensor_core_gemm_tolerance(k), every
// entry at --quick, ~4096 sampled entries (with the last row and column) at full size.
// Baseline: cublasGemmEx with fp16 A and B, fp32 compute and fp32 C, on the same data.
//
// Run:  build/bin/day023 [--m 4096 --n 4096 --k 4096] [--kernel wmma_block_db] [--sweep]
//       build/bin/day023 --m 129 --n 67 --k 259    (shapes that are multiples of no tile)
#include <cuda_fp16.h>
#include <mma.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"

namespace {

namespace wmma = nvcuda::wmma;

constexpr int kFrag = 16;  // WMMA shape m16n16k16
using FragA = wmma::fragment<wmma::matrix_a, kFrag, kFrag, kFrag, __half, wmma::row_major>;
using FragB = wmma::fragment<wmma::matrix_b, kFrag, kFrag, kFrag, __half, wmma::row_major>;
using FragC = wmma::fragment<wmma::accumulator, kFrag, kFrag, kFrag, float>;

// Sizes are capped at 2^30 (main), so row/column indices plus a tile offset stay inside int;
// element offsets (row * ld) are computed in int64.
constexpr int64_t kMaxDim = int64_t(1) << 30;

// ---- kernels ------------------------------------------------------------------------------------
// Where a fragment may be loaded (stored) straight from global memory. The CUDA Programming Guide
// asks for a 256-bit (32-byte) aligned pointer and a leading dimension that is a multiple of 16
// bytes (8 halves, 4 floats). The PTX ISA's wmma.load/wmma.store text is stricter: EVERY row start
// must be aligned to the fragment's size, 32 bytes for these shapes, so the stride itself must be
// a multiple of 32 bytes (16 halves, 8 floats). The direct path meets the stricter rule - it
// costs nothing where speed matters (4096 is a multiple of 16) - and tile starts are then 32-byte
// aligned too, since tiles start at multiples of 16 rows and 16 columns.
struct DirectOk {
  bool a, b, c;
};
DirectOk direct_ok(const void* A, const void* B, const void* C, int n, int k) {
  return {k % 16 == 0 && gpu100::is_aligned(A, 32), n % 16 == 0 && gpu100::is_aligned(B, 32),
          n % 8 == 0 && gpu100::is_aligned(C, 32)};
}

// The guarded copy of one 16 x 16 tile of a row-major rows x cols half matrix into a warp's
// staging buffer (row length 16), zeros outside the matrix. Each lane writes 8 elements.
__device__ void stage_tile(__half* __restrict__ dst, const __half* __restrict__ src, int row0,
                           int col0, int rows, int cols, int lane) {
  for (int e = lane; e < kFrag * kFrag; e += 32) {
    const int r = row0 + e / kFrag, c = col0 + e % kFrag;
    dst[e] = (r < rows && c < cols) ? src[int64_t(r) * cols + c] : __float2half(0.0f);
  }
}

// Stores one accumulator fragment to C at (row0, col0): directly when the whole tile is inside C
// and C allows it, else through the warp's 16 x 16 float staging buffer with a guarded copy.
__device__ void store_tile(float* __restrict__ C, const FragC& acc, float* __restrict__ staging,
                           int row0, int col0, int M, int N, bool direct, int lane) {
  if (direct && row0 + kFrag <= M && col0 + kFrag <= N) {
    wmma::store_matrix_sync(C + int64_t(row0) * N + col0, acc, unsigned(N), wmma::mem_row_major);
    return;
  }
  wmma::store_matrix_sync(staging, acc, kFrag, wmma::mem_row_major);
  __syncwarp();
  for (int e = lane; e < kFrag * kFrag; e += 32) {
    const int r = row0 + e / kFrag, c = col0 + e % kFrag;
    if (r < M && c < N) C[int64_t(r) * N + c] = staging[e];
  }
  __syncwarp();  // the buffer is reused by the next fragment
}

// ---- wmma_warp ----------------------------------------------------------------------------------
// A block of 2 x 2 warps covers 32 x 32 of C, each warp one 16 x 16 tile. Blocks are numbered in
// one dimension (tile row = blockIdx.x / tiles_n), so no grid dimension limits M or N.
constexpr int kWarpBlockWarps = 4;
constexpr int kWarpBlockTile = 32;

__global__ void __launch_bounds__(kWarpBlockWarps * 32)
    hgemm_wmma_warp(const __half* __restrict__ A, const __half* __restrict__ B,
                    float* __restrict__ C, int M, int N, int K, unsigned tiles_n, DirectOk direct) {
  // Per warp: a 16 x 16 half tile of A and one of B while multiplying (1 KB), reused as the
  // 16 x 16 float tile of C at the end (1 KB). Warps never share it: __syncwarp is enough.
  __shared__ alignas(32) __half staging[kWarpBlockWarps][2 * kFrag * kFrag];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const unsigned tile_m = blockIdx.x / tiles_n, tile_n = blockIdx.x - tile_m * tiles_n;
  const int row0 = int(tile_m) * kWarpBlockTile + (warp / 2) * kFrag;
  const int col0 = int(tile_n) * kWarpBlockTile + (warp % 2) * kFrag;
  if (row0 >= M || col0 >= N) return;  // whole warp; this kernel has no block-wide barrier

  __half* sA = staging[warp];
  __half* sB = sA + kFrag * kFrag;
  const bool full_m = row0 + kFrag <= M, full_n = col0 + kFrag <= N;
  FragA a;
  FragB b;
  FragC acc;
  wmma::fill_fragment(acc, 0.0f);
  const int ktiles = (K + kFrag - 1) / kFrag;  // K <= 2^30: no overflow
  for (int kt = 0; kt < ktiles; ++kt) {
    const int k0 = kt * kFrag;
    const bool full_k = k0 + kFrag <= K;
    // Every condition below is the same for all 32 lanes, so the branches do not split the warp
    // (the *_sync calls need all lanes).
    if (direct.a && full_m && full_k) {
      wmma::load_matrix_sync(a, A + int64_t(row0) * K + k0, unsigned(K));
    } else {
      stage_tile(sA, A, row0, k0, M, K, lane);
      __syncwarp();
      wmma::load_matrix_sync(a, sA, kFrag);
    }
    if (direct.b && full_n && full_k) {
      wmma::load_matrix_sync(b, B + int64_t(k0) * N + col0, unsigned(N));
    } else {
      stage_tile(sB, B, k0, col0, K, N, lane);
      __syncwarp();
      wmma::load_matrix_sync(b, sB, kFrag);
    }
    wmma::mma_sync(acc, a, b, acc);
    __syncwarp();  // all lanes have read the staging tiles before the next step rewrites them
  }
  store_tile(C, acc, reinterpret_cast<float*>(sA), row0, col0, M, N, direct.c, lane);
}

// ---- wmma_block, wmma_block_db ------------------------------------------------------------------
// 128 x 128 x 32 block tiles, 8 warps as 2 (M) x 4 (N), each warp a 64 x 32 tile of C = 4 x 2
// accumulator fragments.
constexpr int kBM = 128, kBN = 128, kBK = 32;
constexpr int kWarpsM = 2, kWarpsN = 4, kThreads = kWarpsM * kWarpsN * 32;
constexpr int kWM = kBM / kWarpsM, kWN = kBN / kWarpsN;
constexpr int kFragsM = kWM / kFrag, kFragsN = kWN / kFrag;
// Row padding of 8 halves: 16 bytes keeps every row start 16-byte aligned (for the uint4 stores)
// and shifts consecutive rows by 4 banks, so the 8 rows a fragment load reads at once spread
// over the banks instead of piling onto the same ones. 16-row steps stay 32-byte aligned, so
// every fragment pointer is 32-byte aligned. The strides (80 and 272 bytes) meet the Programming
// Guide's 16-byte rule but not the PTX ISA's 32-byte one (direct_ok): a 32-byte-multiple stride
// puts rows r and r + 4 on the same banks (2-way conflicts on every fragment load), and the
// 8-half pad is what common WMMA code relies on (unverified here: no GPU, no disassembler). If a
// GPU run ever disagrees, kPad = 16 is the strictly legal fallback (42 KB double-buffered).
constexpr int kPad = 8;
constexpr int kLdA = kBK + kPad;  // 40 halves = 80 bytes
constexpr int kLdB = kBN + kPad;  // 136 halves = 272 bytes
constexpr int kStageHalves = kBM * kLdA + kBK * kLdB;
// Chunks of 8 halves (16 bytes) per slice, and per thread.
constexpr int kChunksA = kBM * kBK / 8 / kThreads;
constexpr int kChunksB = kBK * kBN / 8 / kThreads;
static_assert(kChunksA * kThreads * 8 == kBM * kBK && kChunksB * kThreads * 8 == kBK * kBN,
              "the slices split evenly over the threads");
static_assert(kWarpsM * kWarpsN * kFrag * kFrag * sizeof(float) <= kStageHalves * sizeof(__half),
              "the epilogue's per-warp C staging fits in one stage");

// 8 halves of row `row` from column `col` of a row-major rows x cols matrix, zeros outside it.
// vec: cols % 8 == 0 and a 16-byte aligned base, so a chunk (col % 8 == 0) is either entirely
// inside the matrix and 16-byte aligned (one 16-byte load), or entirely outside.
__device__ uint4 load_chunk(const __half* __restrict__ src, int row, int rows, int64_t col,
                            int cols, bool vec) {
  if (row >= rows) return make_uint4(0, 0, 0, 0);
  const int64_t base = int64_t(row) * cols;
  if (vec) {
    return col < cols ? *reinterpret_cast<const uint4*>(src + base + col) : make_uint4(0, 0, 0, 0);
  }
  uint32_t w[4];
#pragma unroll
  for (int e = 0; e < 8; e += 2) {
    const unsigned short lo = col + e < cols ? __half_as_ushort(src[base + col + e]) : 0;
    const unsigned short hi = col + e + 1 < cols ? __half_as_ushort(src[base + col + e + 1]) : 0;
    w[e / 2] = uint32_t(lo) | (uint32_t(hi) << 16);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

template <bool kDoubleBuffer>
__global__ void __launch_bounds__(kThreads)
    hgemm_wmma_block(const __half* __restrict__ A, const __half* __restrict__ B,
                     float* __restrict__ C, int M, int N, int K, unsigned tiles_n, bool vec_a,
                     bool vec_b, bool direct_c) {
  constexpr int kStages = kDoubleBuffer ? 2 : 1;
  __shared__ alignas(128) __half smem[kStages * kStageHalves];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const unsigned tile_m = blockIdx.x / tiles_n, tile_n = blockIdx.x - tile_m * tiles_n;
  const int m0 = int(tile_m) * kBM, n0 = int(tile_n) * kBN;
  const int wm = warp / kWarpsN, wn = warp % kWarpsN;

  FragC acc[kFragsM][kFragsN];
#pragma unroll
  for (int i = 0; i < kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  // One slice in flight, held in registers between the global load and the shared store.
  uint4 ra[kChunksA], rb[kChunksB];
  auto fetch = [&](int k0) {
#pragma unroll
    for (int i = 0; i < kChunksA; ++i) {
      const int id = tid + i * kThreads, r = id / (kBK / 8), c = (id % (kBK / 8)) * 8;
      ra[i] = load_chunk(A, m0 + r, M, int64_t(k0) + c, K, vec_a);
    }
#pragma unroll
    for (int i = 0; i < kChunksB; ++i) {
      const int id = tid + i * kThreads, r = id / (kBN / 8), c = (id % (kBN / 8)) * 8;
      rb[i] = load_chunk(B, k0 + r, K, int64_t(n0) + c, N, vec_b);
    }
  };
  auto stash = [&](int stage) {
    __half* sA = smem + stage * kStageHalves;
    __half* sB = sA + kBM * kLdA;
#pragma unroll
    for (int i = 0; i < kChunksA; ++i) {
      const int id = tid + i * kThreads, r = id / (kBK / 8), c = (id % (kBK / 8)) * 8;
      *reinterpret_cast<uint4*>(sA + r * kLdA + c) = ra[i];
    }
#pragma unroll
    for (int i = 0; i < kChunksB; ++i) {
      const int id = tid + i * kThreads, r = id / (kBN / 8), c = (id % (kBN / 8)) * 8;
      *reinterpret_cast<uint4*>(sB + r * kLdB + c) = rb[i];
    }
  };
  auto compute = [&](int stage) {
    const __half* sA = smem + stage * kStageHalves + (wm * kWM) * kLdA;
    const __half* sB = smem + stage * kStageHalves + kBM * kLdA + wn * kWN;
#pragma unroll
    for (int ks = 0; ks < kBK; ks += kFrag) {
      FragA a[kFragsM];
      FragB b[kFragsN];
#pragma unroll
      for (int i = 0; i < kFragsM; ++i) wmma::load_matrix_sync(a[i], sA + i * kFrag * kLdA + ks, kLdA);
#pragma unroll
      for (int j = 0; j < kFragsN; ++j) wmma::load_matrix_sync(b[j], sB + ks * kLdB + j * kFrag, kLdB);
#pragma unroll
      for (int i = 0; i < kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
  };

  const int ktiles = (K + kBK - 1) / kBK;
  if constexpr (kDoubleBuffer) {
    fetch(0);
    stash(0);
    __syncthreads();
    for (int kt = 0; kt < ktiles; ++kt) {
      const bool more = kt + 1 < ktiles;
      if (more) fetch((kt + 1) * kBK);  // in flight while the tensor cores work on slice kt
      compute(kt & 1);
      // Buffer (kt + 1) & 1 was last read in step kt - 1, and every warp has passed the barrier
      // that ended that step, so it is free to overwrite.
      if (more) stash((kt + 1) & 1);
      __syncthreads();
    }
  } else {
    for (int kt = 0; kt < ktiles; ++kt) {
      fetch(kt * kBK);
      stash(0);
      __syncthreads();  // the slice is complete before any warp reads it
      compute(0);
      __syncthreads();  // every warp is done with it before it is overwritten
    }
  }

  // Epilogue. The loop ended with a barrier, so the operand buffers are dead: each warp reuses
  // 1 KB of them as the staging tile for fragments that hang over the edge of C.
  float* staging = reinterpret_cast<float*>(smem) + warp * kFrag * kFrag;
#pragma unroll
  for (int i = 0; i < kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) {
      const int row0 = m0 + wm * kWM + i * kFrag, col0 = n0 + wn * kWN + j * kFrag;
      if (row0 < M && col0 < N)  // warp-uniform
        store_tile(C, acc[i][j], staging, row0, col0, M, N, direct_c, lane);
    }
}

// ---- launchers ----------------------------------------------------------------------------------
// GemmLaunchers, so that --sweep can run them at other shapes too.
unsigned checked_grid(int64_t tiles_m, int64_t tiles_n) {
  const int64_t blocks = tiles_m * tiles_n;
  if (blocks > int64_t(INT32_MAX)) throw std::invalid_argument("too many tiles for gridDim.x");
  return unsigned(blocks);
}

void launch_warp(const __half* A, const __half* B, float* C, int M, int N, int K,
                 cudaStream_t s) {
  const int64_t tiles_n = gpu100::ceil_div<int64_t>(N, kWarpBlockTile);
  const unsigned grid = checked_grid(gpu100::ceil_div<int64_t>(M, kWarpBlockTile), tiles_n);
  hgemm_wmma_warp<<<grid, kWarpBlockWarps * 32, 0, s>>>(A, B, C, M, N, K, unsigned(tiles_n),
                                                        direct_ok(A, B, C, N, K));
  LAUNCH_CHECK();
}

template <bool kDoubleBuffer>
void launch_block(const __half* A, const __half* B, float* C, int M, int N, int K,
                  cudaStream_t s) {
  const int64_t tiles_n = gpu100::ceil_div<int64_t>(N, kBN);
  const unsigned grid = checked_grid(gpu100::ceil_div<int64_t>(M, kBM), tiles_n);
  const bool vec_a = K % 8 == 0 && gpu100::is_aligned(A, 16);
  const bool vec_b = N % 8 == 0 && gpu100::is_aligned(B, 16);
  const bool direct_c = direct_ok(A, B, C, N, K).c;
  hgemm_wmma_block<kDoubleBuffer><<<grid, kThreads, 0, s>>>(A, B, C, M, N, K, unsigned(tiles_n),
                                                            vec_a, vec_b, direct_c);
  LAUNCH_CHECK();
}

// The versions, as GEMM launchers (fp16 A and B, fp32 C).
template <void (*Launch)(const __half*, const __half*, float*, int, int, int, cudaStream_t)>
void launch(const gpu100::GemmOperands& o, cudaStream_t s) {
  Launch(static_cast<const __half*>(o.A), static_cast<const __half*>(o.B),
         static_cast<float*>(o.C), int(o.m), int(o.n), int(o.k), s);
}
const std::vector<gpu100::GemmVersion> kVersions = {
    {"wmma_warp", launch<launch_warp>},
    {"wmma_block", launch<launch_block<false>>},
    {"wmma_block_db", launch<launch_block<true>>},
};

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "fp16 GEMM with fp32 accumulation through WMMA tensor-core fragments: one warp per tile, "
      "shared-memory block tiles, double buffering; vs cublasGemmEx");
  gpu100::GemmArgs args;  // --m --n --k --sweep
  args.add_to(cli, kMaxDim, gpu100::GemmDtype::F16);
  cli.kernels_of(kVersions);
  cli.min_cc(70);  // WMMA needs Volta tensor cores

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    gpu100::GemmProblem problem(ctx, args.m, args.n, args.k, gpu100::GemmDtype::F16);
    ctx.report().note("on Hopper cuBLAS uses wgmma, which WMMA cannot reach");
    problem.run(kVersions, args.sweep);
  });
}
