// Day 079 - FlashAttention-2 backward: dQ, dK, dV recomputed from the saved logsumexp
//
// Forward (per head): S = scale Q K^T, P = softmax(S) row by row, O = P V, and the logsumexp
// L_i = log sum_j exp(S_ij) saved per query row. Given dO, the backward is five matrix products
//   recompute  S = scale Q K^T          (1)   and P = exp(S - L): no softmax pass, L says it all
//   dV = P^T dO                         (2)
//   dP = dO V^T                         (3)
//   dS = P o (dP - D),  D_i = sum_d dO_id O_id = rowsum(dO o O)   (the softmax's Jacobian)
//   dK = scale dS^T Q                   (4)
//   dQ = scale dS K                     (5)
// D is one number per query row (a vector of length S, B_r per tile; the sum runs over the head
// dimension d). Its definition, D_i = sum_j P_ij dP_ij, runs over every key of the row, which no
// key tile sees alone; rowsum(dO o O) is the same number (O = P V, so dO_i.O_i = sum_j P_ij
// dP_ij) and needs one row of dO and O only, so a small kernel computes it before the main one.
// Nothing of size S x S ever reaches global memory.
//
// Kernels (one template each over dtype fp16/bf16, head dim 64/128, causal or not)
//   attention_forward        this day's own FA2-style forward (queries outer, one warp per 16
//                            query rows, online softmax): O in the input dtype and L in fp32.
//   dot_do_o                 D = rowsum(dO o O), one warp per row.
//   attention_backward_dkdv  one block per (key tile, head): K and V tiles held in shared memory,
//                            a loop over the query tiles (cp.async double-buffered Q, dO, L, D)
//                            recomputes P^T from L; each warp owns 16 keys and accumulates their
//                            dK and dV rows in registers, written once at the end.
//                            <kAtomicDq>: dS goes through shared memory and each block adds its
//                            dQ contribution (5) with fp32 atomics into a zeroed dQ.
//   attention_backward_dq    one block per (query tile, head): the deterministic dQ - a second
//                            pass over the key tiles recomputes P and dS and accumulates dQ in
//                            registers; no atomics, so the same bits on every run.
// Versions: forward; backward_atomic_dq (D, dK/dV with atomic dQ); backward_deterministic
// (D, dK/dV, then the dQ pass: two more of the five products recomputed, (1) and (3)).
// All tiles are 64 rows; a warp's operands come from shared memory by ldmatrix (rows padded by
// 16 bytes, so the 8 rows an 8x8 ldmatrix matrix reads lie in 8 different bank groups), and
// products are mma.sync m16n8k16 with fp32 accumulation. The accumulator layout of a 16 x 64
// product is the A-fragment layout of the next product's 16 x 64 operand, so P and dS go from
// one mma to the next in registers (only the atomic dQ's dS, which needs query rows, goes through
// shared memory). Gradients are written in fp32.
//
// FLOPs: the forward counts the standard 4 B H S^2 D (two products); the backward 2.5 times that
// (five products of the same size), both halved for causal masking. The deterministic version
// does more work than it is credited with (seven products); the count is the problem's, not the
// kernel's.
//
// Check: a CPU forward and backward in double on the values the fp16/bf16 inputs hold; the CPU
// backward itself checked against central finite differences of the CPU forward on a tiny case.
// Every output within a per-element bound derived below (error_bounds), not a fixed tolerance.
//
// Run:  build/bin/day079 [--batch 4 --heads 16 --seq 2048 --dim 128] [--causal] [--dtype bf16]
//       build/bin/day079 --seq 1000 --dim 64 --causal       (partial tiles)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu100/error_bounds.h"
#include "gpu100/gpu100.h"

namespace {

constexpr int kTile = 64;  // queries and keys per tile
constexpr int kWarps = 4;  // each owns 16 rows of a tile
constexpr int kThreads = 32 * kWarps;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// ---- kernels: the PTX, one wrapper per instruction (as day 024) ---------------------------------
__device__ __forceinline__ uint32_t shared_addr(const void* p) {
  return uint32_t(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  // .cg: every tile is read once per block from L2; src_bytes = 0 zero-fills rows past S.
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(__cvta_generic_to_global(src)), "r"(src_bytes)
               : "memory");
#else
  __trap();
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#endif
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#else
  __trap();
#endif
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#else
  __trap();
#endif
}

// d += a * b for one 16 x 8 x 16 tile, fp16 or bf16 multiplicands, fp32 accumulators.
template <class T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                          uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (std::is_same_v<T, __half>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
#else
  __trap();
#endif
}

// ---- kernels: the element type ------------------------------------------------------------------
__device__ __forceinline__ float to_float(__half x) {
  return __half2float(x);
}
__device__ __forceinline__ float to_float(__nv_bfloat16 x) {
  return __bfloat162float(x);
}

template <class T>
__device__ __forceinline__ T from_float(float x) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(x);
  } else {
    return __float2bfloat16_rn(x);
  }
}

// Two values rounded to T, the lower index in the low half: one register of an mma fragment.
template <class T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  if constexpr (std::is_same_v<T, __half>) {
    return uint32_t(__half_as_ushort(__float2half_rn(lo))) |
           uint32_t(__half_as_ushort(__float2half_rn(hi))) << 16;
  } else {
    return uint32_t(__bfloat16_as_ushort(__float2bfloat16_rn(lo))) |
           uint32_t(__bfloat16_as_ushort(__float2bfloat16_rn(hi))) << 16;
  }
}

// ---- kernels: tiles in shared memory and the two product shapes ---------------------------------
// A tile: 64 rows of D halves, each row padded by 8 halves (16 bytes). An 8 x 8 ldmatrix matrix
// reads one 16-byte chunk from each of 8 consecutive rows; with a row stride of 144 or 272 bytes
// (16 modulo 128) those chunks land in 8 different 16-byte bank groups: conflict-free, unswizzled.
template <int D>
struct Tile {
  static constexpr int kStride = D + 8;  // halves per row
  static constexpr int kBytes = kTile * kStride * 2;
  static constexpr int kChunks = D / 8;  // 16-byte chunks per row
  __device__ static uint32_t at(uint32_t base, int row, int chunk) {
    return base + uint32_t(row * kStride * 2 + chunk * 16);
  }
};
using DsTile = Tile<kTile>;  // the 64 x 64 dS tile of the atomic-dQ kernel

// Rows row0 .. row0+63 of a head's S x D matrix into a tile, by cp.async (one commit group is
// the caller's); rows at or past S are zero-filled.
template <int D, class T>
__device__ __forceinline__ void load_tile(uint32_t dst, const T* __restrict__ src, int row0,
                                          int rows) {
  constexpr int kPerThread = kTile * Tile<D>::kChunks / kThreads;
  static_assert(kPerThread * kThreads == kTile * Tile<D>::kChunks, "chunks split evenly");
#pragma unroll
  for (int n = 0; n < kPerThread; ++n) {
    const int id = int(threadIdx.x) + n * kThreads;
    const int r = id / Tile<D>::kChunks, c = id % Tile<D>::kChunks;
    const bool inside = row0 + r < rows;
    const T* p = inside ? src + (int64_t(row0 + r) * D + c * 8) : src;  // never out of bounds
    cp_async_16(Tile<D>::at(dst, r, c), p, inside ? 16 : 0);
  }
}

// Per-row values of a query tile (L in log2 units, or D) into shared memory; 0 past S.
__device__ __forceinline__ void load_row_values(float* dst, const float* __restrict__ src, int row0,
                                                int rows, float factor) {
  if (threadIdx.x < kTile) {
    const int r = row0 + int(threadIdx.x);
    dst[threadIdx.x] = r < rows ? src[r] * factor : 0.0f;
  }
}

// acc (16 x 64) = A B^T over k = D: A is 16 rows of tile a from row a_row0, B all 64 rows of tile
// b; both tiles row-major with k contiguous (Q K^T, K Q^T, dO V^T, V dO^T). ldmatrix without
// .trans gives the A fragment and, from rows of B, the "col" B fragment directly.
template <class T, int D>
__device__ __forceinline__ void mma_rows_by_rows(float (&acc)[8][4], uint32_t a, int a_row0,
                                                 uint32_t b, int lane) {
#pragma unroll
  for (int nt = 0; nt < 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[nt][e] = 0.0f;
#pragma unroll
  for (int ks = 0; ks < D / 16; ++ks) {
    uint32_t fa[4];
    // matrices: rows 0-7 / 8-15 of k 0-7, then of k 8-15 = a0..a3
    ldmatrix_x4(fa, Tile<D>::at(a, a_row0 + (lane & 15), ks * 2 + (lane >> 4)));
#pragma unroll
    for (int nt = 0; nt < 8; nt += 2) {
      // matrices: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15)
      const int m = lane >> 3;
      uint32_t fb[4];
      ldmatrix_x4(fb, Tile<D>::at(b, nt * 8 + (lane & 7) + (m >> 1) * 8, ks * 2 + (m & 1)));
      mma_16816<T>(acc[nt], fa, fb[0], fb[1]);
      mma_16816<T>(acc[nt + 1], fa, fb[2], fb[3]);
    }
  }
}

// A 16 x 64 accumulator as the A operand of the next product: accumulator n-tiles 2s and 2s+1
// (columns 16s .. 16s+15) are exactly the a0..a3 registers of k-step s, rounded to T.
template <class T>
__device__ __forceinline__ void to_fragments(uint32_t (&pa)[4][4], const float (&p)[8][4]) {
#pragma unroll
  for (int s = 0; s < 4; ++s) {
    pa[s][0] = pack2<T>(p[2 * s][0], p[2 * s][1]);
    pa[s][1] = pack2<T>(p[2 * s][2], p[2 * s][3]);
    pa[s][2] = pack2<T>(p[2 * s + 1][0], p[2 * s + 1][1]);
    pa[s][3] = pack2<T>(p[2 * s + 1][2], p[2 * s + 1][3]);
  }
}

// Element (nt, e) of the accumulator that to_fragments packed, as the T value the mma used.
template <class T>
__device__ __forceinline__ float fragment_value(const uint32_t (&pa)[4][4], int nt, int e) {
  const uint32_t word = pa[nt / 2][(nt % 2) * 2 + e / 2];
  const unsigned short bits =
      (e % 2) ? (unsigned short)(word >> 16) : (unsigned short)(word & 0xffffu);
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(__ushort_as_half(bits));
  } else {
    return __bfloat162float(__ushort_as_bfloat16(bits));
  }
}

// acc (16 x 8NT) += A (16 x 64, fragments in registers) B: B is the 64 rows (k) of tile b, NT
// n-tiles of columns from chunk chunk0; rows are k, so ldmatrix.trans makes the "col" fragment
// (P V, dS K, P^T dO, dS^T Q).
template <class T, int D, int NT>
__device__ __forceinline__ void mma_fragments_by_tile(float (&acc)[NT][4],
                                                      const uint32_t (&pa)[4][4], uint32_t b,
                                                      int chunk0, int lane) {
#pragma unroll
  for (int s = 0; s < 4; ++s)
#pragma unroll
    for (int nt = 0; nt < NT; nt += 2) {
      uint32_t fb[4];
      ldmatrix_x4_trans(fb, Tile<D>::at(b, s * 16 + (lane & 7) + ((lane >> 3) & 1) * 8,
                                        chunk0 + nt + (lane >> 4)));
      mma_16816<T>(acc[nt], pa[s], fb[0], fb[1]);
      mma_16816<T>(acc[nt + 1], pa[s], fb[2], fb[3]);
    }
}

// Query i sees key j. Keys past S arrive zero-filled, with score 0, not -inf: the forward must
// mask them, or its row sum counts one exp(-m) for each. In the backward their zero K and V rows
// (and the zero Q, dO, L, D of queries past S) keep them out of every stored gradient already;
// the same test is kept there so that P itself is right.
__device__ __forceinline__ bool visible(int i, int j, int S, bool causal) {
  return i < S && j < S && (!causal || j <= i);
}

// ---- kernels: the forward (O and L for the backward) --------------------------------------------
// Lane 4g + t of a warp holds accumulator rows g and g + 8 (h = 0, 1), columns 2t and 2t + 1 of
// every 8-wide n-tile; a row's max and sum are completed across the 4 lanes of its quad.
template <class T, int D, bool kCausal>
__global__ void __launch_bounds__(kThreads)
    attention_forward(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V,
                      T* __restrict__ O, float* __restrict__ lse, int S, float scale_log2) {
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t s_q = shared_addr(smem);
  auto s_k = [&](int st) { return s_q + uint32_t((1 + 2 * st) * Tile<D>::kBytes); };
  auto s_v = [&](int st) { return s_q + uint32_t((2 + 2 * st) * Tile<D>::kBytes); };
  const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32, g = lane / 4, t = lane % 4;
  const int qt = int(blockIdx.x), q0 = qt * kTile;
  const int64_t head = int64_t(blockIdx.y) * S * D;
  Q += head, K += head, V += head, O += head;
  lse += int64_t(blockIdx.y) * S;
  const int tiles = (S + kTile - 1) / kTile;
  const int kv_tiles =
      kCausal ? min(tiles, qt + 1) : tiles;  // causal: tiles past the diagonal skipped

  load_tile<D>(s_q, Q, q0, S);
  load_tile<D>(s_k(0), K, 0, S);
  load_tile<D>(s_v(0), V, 0, S);
  cp_async_commit();

  float o[D / 8][4] = {};
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};  // m in log2 units
  for (int kt = 0; kt < kv_tiles; ++kt) {
    const int st = kt & 1;
    if (kt + 1 < kv_tiles) {  // the next K, V tile loads while this one is used
      load_tile<D>(s_k(st ^ 1), K, (kt + 1) * kTile, S);
      load_tile<D>(s_v(st ^ 1), V, (kt + 1) * kTile, S);
    }
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();

    float s[8][4];
    mma_rows_by_rows<T, D>(s, s_q, warp * 16, s_k(st), lane);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int i = q0 + warp * 16 + g + 8 * h;
      float mx = -INFINITY;
#pragma unroll
      for (int nt = 0; nt < 8; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int j = kt * kTile + nt * 8 + 2 * t + e;
          float& x = s[nt][2 * h + e];
          x = visible(i, j, S, kCausal) ? x * scale_log2 : -INFINITY;
          mx = fmaxf(mx, x);
        }
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = fmaxf(m[h], mx);
      const float m_use = m_new == -INFINITY ? 0.0f : m_new;  // rows past S see no key at all
      const float rescale = exp2f(m[h] - m_use);
      l[h] *= rescale;
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt) {
        o[dt][2 * h] *= rescale;
        o[dt][2 * h + 1] *= rescale;
      }
#pragma unroll
      for (int nt = 0; nt < 8; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float& x = s[nt][2 * h + e];
          x = exp2f(x - m_use);
          l[h] += x;
        }
      m[h] = m_new;
    }
    uint32_t pa[4][4];
    to_fragments<T>(pa, s);
    mma_fragments_by_tile<T, D, D / 8>(o, pa, s_v(st), 0, lane);
    __syncthreads();  // every warp is done with this stage before it is refilled
  }
  cp_async_wait<0>();

#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float sum = l[h];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    const int i = q0 + warp * 16 + g + 8 * h;
    if (i >= S) continue;
    const float inv = 1.0f / sum;
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt)
      *reinterpret_cast<uint32_t*>(O + (int64_t(i) * D + dt * 8 + 2 * t)) =
          pack2<T>(o[dt][2 * h] * inv, o[dt][2 * h + 1] * inv);
    if (t == 0) lse[i] = (m[h] + log2f(sum)) * kLn2;  // natural log, as libraries store it
  }
}

// ---- kernels: the preprocessing D = rowsum(dO o O) ----------------------------------------------
template <class T, int D>
__global__ void dot_do_o(const T* __restrict__ dO, const T* __restrict__ O,
                         float* __restrict__ delta, int64_t rows) {
  const int64_t row = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = int(threadIdx.x) % 32;
  if (row >= rows) return;  // whole warps: a row is one warp
  float sum = 0.0f;
#pragma unroll
  for (int d = lane; d < D; d += 32) sum += to_float(dO[row * D + d]) * to_float(O[row * D + d]);
#pragma unroll
  for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  if (lane == 0) delta[row] = sum;
}

// ---- kernels: dK, dV per key tile (and dQ by atomics) -------------------------------------------
// Shared memory: K, V; two stages of (Q, dO); the dS tile; two stages of L (log2 units) and D.
template <int D>
struct DkdvSmem {
  static constexpr int kK = 0, kV = Tile<D>::kBytes;
  __host__ __device__ static constexpr int kQ(int st) { return (2 + 2 * st) * Tile<D>::kBytes; }
  __host__ __device__ static constexpr int kDo(int st) { return (3 + 2 * st) * Tile<D>::kBytes; }
  static constexpr int kDs = 6 * Tile<D>::kBytes;
  static constexpr int kRows = kDs + DsTile::kBytes;  // floats: L[2][64], then D[2][64]
  static constexpr int kBytes = kRows + 4 * kTile * 4;
};

template <class T, int D, bool kCausal, bool kAtomicDq>
__global__ void __launch_bounds__(kThreads)
    attention_backward_dkdv(const T* __restrict__ Q, const T* __restrict__ K,
                            const T* __restrict__ V, const T* __restrict__ dO,
                            const float* __restrict__ lse, const float* __restrict__ delta,
                            float* __restrict__ dq, float* __restrict__ dk, float* __restrict__ dv,
                            int S, float scale, float scale_log2) {
  using L = DkdvSmem<D>;
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t base = shared_addr(smem);
  float* s_lse = reinterpret_cast<float*>(smem + L::kRows);  // [2][64], log2 units
  float* s_delta = s_lse + 2 * kTile;                        // [2][64]
  T* s_ds = reinterpret_cast<T*>(smem + L::kDs);
  const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32, g = lane / 4, t = lane % 4;
  const int kt = int(blockIdx.x), k0 = kt * kTile;
  const int64_t head = int64_t(blockIdx.y) * S * D;
  Q += head, K += head, V += head, dO += head;
  if constexpr (kAtomicDq) dq += head;
  dk += head, dv += head;
  lse += int64_t(blockIdx.y) * S;
  delta += int64_t(blockIdx.y) * S;
  const int tiles = (S + kTile - 1) / kTile;
  const int first = kCausal ? kt : 0;  // causal: query tiles before the key tile see none of it

  auto load_query_tile = [&](int st, int qt) {
    load_tile<D>(base + L::kQ(st), Q, qt * kTile, S);
    load_tile<D>(base + L::kDo(st), dO, qt * kTile, S);
    load_row_values(s_lse + st * kTile, lse, qt * kTile, S, kLog2e);
    load_row_values(s_delta + st * kTile, delta, qt * kTile, S, 1.0f);
  };
  load_tile<D>(base + L::kK, K, k0, S);
  load_tile<D>(base + L::kV, V, k0, S);
  load_query_tile(0, first);
  cp_async_commit();

  float dk_acc[D / 8][4] = {}, dv_acc[D / 8][4] = {};
  for (int qt = first; qt < tiles; ++qt) {
    const int st = (qt - first) & 1, q0 = qt * kTile;
    if (qt + 1 < tiles) load_query_tile(st ^ 1, qt + 1);
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();

    // (1) S^T = K Q^T for the warp's 16 keys: rows are keys j, columns queries i.
    float p[8][4];
    mma_rows_by_rows<T, D>(p, base + L::kK, warp * 16, base + L::kQ(st), lane);
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int j = k0 + warp * 16 + g + 8 * (e / 2), il = nt * 8 + 2 * t + e % 2;
        p[nt][e] = visible(q0 + il, j, S, kCausal)
                       ? exp2f(p[nt][e] * scale_log2 - s_lse[st * kTile + il])
                       : 0.0f;
      }
    // P^T stays only as the 16 registers of T pairs the mma reads (registers: with D = 128 the
    // dK and dV accumulators take 128 per thread already), and dS is formed from those values.
    uint32_t pa[4][4];
    to_fragments<T>(pa, p);
    // (2) dV += P^T dO
    mma_fragments_by_tile<T, D, D / 8>(dv_acc, pa, base + L::kDo(st), 0, lane);
    // (3) dP^T = V dO^T, then dS^T = P^T o (dP^T - D), in the registers of dP^T
    float(&ds)[8][4] = p;
    mma_rows_by_rows<T, D>(ds, base + L::kV, warp * 16, base + L::kDo(st), lane);
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        ds[nt][e] = fragment_value<T>(pa, nt, e) *
                    (ds[nt][e] - s_delta[st * kTile + nt * 8 + 2 * t + e % 2]);
    to_fragments<T>(pa, ds);
    // (4) dK += dS^T Q (scaled once at the end)
    mma_fragments_by_tile<T, D, D / 8>(dk_acc, pa, base + L::kQ(st), 0, lane);

    if constexpr (kAtomicDq) {
      // (5) dQ needs dS with query rows: the transpose goes through shared memory, then warp w
      // computes dQ rows 16w .. 16w+15 of the tile over all 64 keys, 32 columns at a time, and
      // adds them to global dQ (fp32 atomics: every key tile adds to every query row).
#pragma unroll
      for (int nt = 0; nt < 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          s_ds[(nt * 8 + 2 * t + e % 2) * DsTile::kStride + warp * 16 + g + 8 * (e / 2)] =
              from_float<T>(ds[nt][e]);
      __syncthreads();
      uint32_t fa[4][4];
#pragma unroll
      for (int s = 0; s < 4; ++s)
        ldmatrix_x4(fa[s], DsTile::at(base + L::kDs, warp * 16 + (lane & 15), s * 2 + (lane >> 4)));
#pragma unroll
      for (int c0 = 0; c0 < D / 8; c0 += 4) {
        float acc[4][4] = {};
        mma_fragments_by_tile<T, D, 4>(acc, fa, base + L::kK, c0, lane);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int i = q0 + warp * 16 + g + 8 * h;
          if (i >= S) continue;
#pragma unroll
          for (int nt = 0; nt < 4; ++nt) {
            float* out = dq + (int64_t(i) * D + (c0 + nt) * 8 + 2 * t);
            atomicAdd(out, acc[nt][2 * h] * scale);
            atomicAdd(out + 1, acc[nt][2 * h + 1] * scale);
          }
        }
      }
    }
    __syncthreads();  // stage st (and the dS tile) are free for the next iteration's writes
  }
  cp_async_wait<0>();

#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int j = k0 + warp * 16 + g + 8 * h;
    if (j >= S) continue;
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt) {
      const int64_t at = int64_t(j) * D + dt * 8 + 2 * t;
      *reinterpret_cast<float2*>(dk + at) =
          make_float2(dk_acc[dt][2 * h] * scale, dk_acc[dt][2 * h + 1] * scale);
      *reinterpret_cast<float2*>(dv + at) = make_float2(dv_acc[dt][2 * h], dv_acc[dt][2 * h + 1]);
    }
  }
}

// ---- kernels: the deterministic dQ pass ---------------------------------------------------------
// One block per (query tile, head), shaped like the forward: each warp keeps 16 query rows of Q
// and dO, recomputes S, P, dP and dS for every key tile (products (1) and (3) again) and
// accumulates dQ = scale dS K in registers. Each dQ element has one owner: no atomics, fixed order.
template <class T, int D, bool kCausal>
__global__ void __launch_bounds__(kThreads)
    attention_backward_dq(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V,
                          const T* __restrict__ dO, const float* __restrict__ lse,
                          const float* __restrict__ delta, float* __restrict__ dq, int S,
                          float scale, float scale_log2) {
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t s_q = shared_addr(smem), s_do = s_q + Tile<D>::kBytes;
  auto s_k = [&](int st) { return s_q + uint32_t((2 + 2 * st) * Tile<D>::kBytes); };
  auto s_v = [&](int st) { return s_q + uint32_t((3 + 2 * st) * Tile<D>::kBytes); };
  const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32, g = lane / 4, t = lane % 4;
  const int qt = int(blockIdx.x), q0 = qt * kTile;
  const int64_t head = int64_t(blockIdx.y) * S * D;
  Q += head, K += head, V += head, dO += head, dq += head;
  lse += int64_t(blockIdx.y) * S;
  delta += int64_t(blockIdx.y) * S;
  const int tiles = (S + kTile - 1) / kTile;
  const int kv_tiles = kCausal ? min(tiles, qt + 1) : tiles;

  load_tile<D>(s_q, Q, q0, S);
  load_tile<D>(s_do, dO, q0, S);
  load_tile<D>(s_k(0), K, 0, S);
  load_tile<D>(s_v(0), V, 0, S);
  cp_async_commit();
  float row_lse[2], row_delta[2];  // of rows g and g + 8, L in log2 units
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int i = q0 + warp * 16 + g + 8 * h;
    row_lse[h] = i < S ? lse[i] * kLog2e : 0.0f;
    row_delta[h] = i < S ? delta[i] : 0.0f;
  }

  float dq_acc[D / 8][4] = {};
  for (int kt = 0; kt < kv_tiles; ++kt) {
    const int st = kt & 1;
    if (kt + 1 < kv_tiles) {
      load_tile<D>(s_k(st ^ 1), K, (kt + 1) * kTile, S);
      load_tile<D>(s_v(st ^ 1), V, (kt + 1) * kTile, S);
    }
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();

    float p[8][4];
    mma_rows_by_rows<T, D>(p, s_q, warp * 16, s_k(st), lane);  // (1) S = Q K^T
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int h = e / 2, i = q0 + warp * 16 + g + 8 * h;
        const int j = kt * kTile + nt * 8 + 2 * t + e % 2;
        p[nt][e] = visible(i, j, S, kCausal) ? exp2f(p[nt][e] * scale_log2 - row_lse[h]) : 0.0f;
      }
    // P as T pairs, as in the dK/dV kernel (the same dS, and 16 registers instead of 32).
    uint32_t pa[4][4];
    to_fragments<T>(pa, p);
    float(&ds)[8][4] = p;
    mma_rows_by_rows<T, D>(ds, s_do, warp * 16, s_v(st), lane);  // (3) dP = dO V^T
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        ds[nt][e] = fragment_value<T>(pa, nt, e) * (ds[nt][e] - row_delta[e / 2]);
    to_fragments<T>(pa, ds);
    mma_fragments_by_tile<T, D, D / 8>(dq_acc, pa, s_k(st), 0, lane);  // (5) dQ += dS K
    __syncthreads();
  }
  cp_async_wait<0>();

#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int i = q0 + warp * 16 + g + 8 * h;
    if (i >= S) continue;
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt)
      *reinterpret_cast<float2*>(dq + (int64_t(i) * D + dt * 8 + 2 * t)) =
          make_float2(dq_acc[dt][2 * h] * scale, dq_acc[dt][2 * h + 1] * scale);
  }
}

// ---- launchers ----------------------------------------------------------------------------------
struct Shape {
  int64_t batch, heads, seq;
  int dim;
  bool causal, bf16;
  int64_t heads_total() const { return batch * heads; }
  int64_t elements() const { return batch * heads * seq * dim; }
  double scale() const { return 1.0 / std::sqrt(double(dim)); }
  // The standard count: QK^T and PV, 2 S^2 D each per head; causal keeps half.
  double forward_flops() const {
    return 4.0 * double(batch * heads) * double(seq) * double(seq) * dim * (causal ? 0.5 : 1.0);
  }
  double backward_flops() const { return 2.5 * forward_flops(); }  // five products, not two
};

// Device buffers as the kernels see them (T is fp16 or bf16 behind void*).
struct Buffers {
  const void *q, *k, *v, *dout;
  void* o;
  float *lse, *delta, *dq, *dk, *dv;
};

enum class Backward { atomic_dq, deterministic };

template <class Kernel>
void allow_shared(Kernel kernel, int bytes) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

template <class T, int D, bool kCausal>
struct Attention {
  static constexpr int kForwardSmem = 5 * Tile<D>::kBytes;
  static constexpr int kDqSmem = 6 * Tile<D>::kBytes;
  static constexpr int kDkdvSmem = DkdvSmem<D>::kBytes;

  static void opt_in() {  // shared memory above 48 KB, once per kernel
    static const bool done = [] {
      allow_shared(attention_forward<T, D, kCausal>, kForwardSmem);
      allow_shared(attention_backward_dkdv<T, D, kCausal, true>, kDkdvSmem);
      allow_shared(attention_backward_dkdv<T, D, kCausal, false>, kDkdvSmem);
      allow_shared(attention_backward_dq<T, D, kCausal>, kDqSmem);
      return true;
    }();
    (void)done;
  }
  static dim3 grid(const Shape& s) {
    return dim3(unsigned((s.seq + kTile - 1) / kTile), unsigned(s.heads_total()));
  }

  static void forward(const Buffers& b, const Shape& s, cudaStream_t st) {
    opt_in();
    attention_forward<T, D, kCausal><<<grid(s), kThreads, kForwardSmem, st>>>(
        static_cast<const T*>(b.q), static_cast<const T*>(b.k), static_cast<const T*>(b.v),
        static_cast<T*>(b.o), b.lse, int(s.seq), float(s.scale()) * kLog2e);
    LAUNCH_CHECK();
  }

  static void backward(Backward version, const Buffers& b, const Shape& s, cudaStream_t st) {
    opt_in();
    const auto* q = static_cast<const T*>(b.q);
    const auto* k = static_cast<const T*>(b.k);
    const auto* v = static_cast<const T*>(b.v);
    const auto* dout = static_cast<const T*>(b.dout);
    const int S = int(s.seq);
    const float scale = float(s.scale()), scale_log2 = scale * kLog2e;
    const int64_t rows = s.heads_total() * s.seq;
    dot_do_o<T, D><<<unsigned((rows + kWarps - 1) / kWarps), kThreads, 0, st>>>(
        dout, static_cast<const T*>(b.o), b.delta, rows);
    LAUNCH_CHECK();
    if (version == Backward::atomic_dq) {
      CUDA_CHECK(cudaMemsetAsync(b.dq, 0, size_t(s.elements()) * sizeof(float), st));
      attention_backward_dkdv<T, D, kCausal, true><<<grid(s), kThreads, kDkdvSmem, st>>>(
          q, k, v, dout, b.lse, b.delta, b.dq, b.dk, b.dv, S, scale, scale_log2);
      LAUNCH_CHECK();
    } else {
      attention_backward_dkdv<T, D, kCausal, false><<<grid(s), kThreads, kDkdvSmem, st>>>(
          q, k, v, dout, b.lse, b.delta, b.dq, b.dk, b.dv, S, scale, scale_log2);
      LAUNCH_CHECK();
      attention_backward_dq<T, D, kCausal><<<grid(s), kThreads, kDqSmem, st>>>(
          q, k, v, dout, b.lse, b.delta, b.dq, S, scale, scale_log2);
      LAUNCH_CHECK();
    }
  }
};

// Calls fn with an Attention<T, D, causal> instance for the run-time shape.
template <class T, class Fn>
void with_head_dim(const Shape& s, Fn&& fn) {
  if (s.dim == 64) {
    s.causal ? fn(Attention<T, 64, true>{}) : fn(Attention<T, 64, false>{});
  } else {
    s.causal ? fn(Attention<T, 128, true>{}) : fn(Attention<T, 128, false>{});
  }
}
template <class Fn>
void with_attention(const Shape& s, Fn&& fn) {
  if (s.bf16) {
    with_head_dim<__nv_bfloat16>(s, fn);
  } else {
    with_head_dim<__half>(s, fn);
  }
}

void launch_forward(const Buffers& b, const Shape& s, cudaStream_t st) {
  with_attention(s, [&](auto a) { a.forward(b, s, st); });
}
void launch_backward(Backward version, const Buffers& b, const Shape& s, cudaStream_t st) {
  with_attention(s, [&](auto a) { a.backward(version, b, s, st); });
}

// ---- CPU reference ------------------------------------------------------------------------------
// One head in double: q, k, v, dout are S x D row-major.
struct ForwardRef {
  std::vector<double> o, lse, p;  // p: S x S, the softmax (0 where masked)
};

ForwardRef forward_cpu(const double* q, const double* k, const double* v, int64_t S, int D,
                       bool causal) {
  const double scale = 1.0 / std::sqrt(double(D));
  ForwardRef f{std::vector<double>(size_t(S * D), 0.0), std::vector<double>(size_t(S)),
               std::vector<double>(size_t(S * S), 0.0)};
  std::vector<double> s(static_cast<size_t>(S));
  for (int64_t i = 0; i < S; ++i) {
    const int64_t keys = causal ? i + 1 : S;
    double mx = -INFINITY;
    for (int64_t j = 0; j < keys; ++j) {
      double dot = 0;
      for (int d = 0; d < D; ++d) dot += q[i * D + d] * k[j * D + d];
      s[size_t(j)] = dot * scale;
      mx = std::max(mx, s[size_t(j)]);
    }
    double sum = 0;
    for (int64_t j = 0; j < keys; ++j) sum += std::exp(s[size_t(j)] - mx);
    f.lse[size_t(i)] = mx + std::log(sum);
    for (int64_t j = 0; j < keys; ++j) {
      const double p = std::exp(s[size_t(j)] - f.lse[size_t(i)]);
      f.p[size_t(i * S + j)] = p;
      for (int d = 0; d < D; ++d) f.o[size_t(i * D + d)] += p * v[j * D + d];
    }
  }
  return f;
}

struct BackwardRef {
  std::vector<double> dq, dk, dv, dp, ds, delta;  // dp, ds: S x S
};

BackwardRef backward_cpu(const double* q, const double* k, const double* v, const double* dout,
                         const ForwardRef& f, int64_t S, int D) {
  const double scale = 1.0 / std::sqrt(double(D));
  const size_t n = size_t(S * D), nn = size_t(S * S);
  BackwardRef b{std::vector<double>(n, 0.0),  std::vector<double>(n, 0.0),
                std::vector<double>(n, 0.0),  std::vector<double>(nn, 0.0),
                std::vector<double>(nn, 0.0), std::vector<double>(size_t(S), 0.0)};
  for (int64_t i = 0; i < S; ++i)
    for (int d = 0; d < D; ++d) b.delta[size_t(i)] += dout[i * D + d] * f.o[size_t(i * D + d)];
  for (int64_t i = 0; i < S; ++i)
    for (int64_t j = 0; j < S; ++j) {
      const double p = f.p[size_t(i * S + j)];
      if (p == 0) continue;  // masked (an unmasked p underflowing to 0 contributes nothing)
      double dp = 0;
      for (int d = 0; d < D; ++d) dp += dout[i * D + d] * v[j * D + d];
      const double ds = p * (dp - b.delta[size_t(i)]);
      b.dp[size_t(i * S + j)] = dp;
      b.ds[size_t(i * S + j)] = ds;
      for (int d = 0; d < D; ++d) {
        b.dv[size_t(j * D + d)] += p * dout[i * D + d];
        b.dk[size_t(j * D + d)] += scale * ds * q[i * D + d];
        b.dq[size_t(i * D + d)] += scale * ds * k[j * D + d];
      }
    }
  return b;
}

// ---- the error bounds ---------------------------------------------------------------------------
// Per-element worst-case bounds, to first order in the unit roundoffs: u_T of the inputs' type
// (fp16 2^-11, bf16 2^-8) and u = 2^-24 of fp32.
//
// Tensor-core accumulation. One mma.sync adds 16 exact products to the fp32 accumulator C. On a
// GPU the 17 addends are aligned to the largest, the bits below the kept significand truncated
// (Fasi et al. 2021), and the sum rounded (toward zero): with at least 24 bits kept each addend
// loses < 2u times the largest, so one step errs by <= (17 + 1) 2u = 36u times the sum of |all
// terms added so far|. A length-n dot product takes ceil(n/16) steps, plus a few fp32 operations
// after (the atomic adds of dQ: one per key tile, u each): gamma(n) = 40u (ceil(n/16) + 2) bounds
// its error relative to sum |terms|. The emulator's default (exact sum, one rounding) is inside;
// day079.emu.truncate runs it under GPU100_EMU_MMA_ACCUM=truncate:24 as well.
//
// Through the computation (i a query, j a key, s = scale q.k, all sums over visible pairs):
//   e_s(i,j)  = scale gamma(D) sum_d |q_id k_jd|                          a recomputed score
//   E_i       = max_j e_s(i,j)
//   e_L(i)    = E_i + gamma(S) + 4u (1 + |L_i|)      the forward's L: its scores, its row sum
//               (S positive terms, rescaled once per key tile: < 4u each), log2 and the add
//   eps_i     = E_i + e_L(i) + 4u (1 + max_j |s_ij| + |L_i|)    relative error of a recomputed P:
//               scores, L, and exp2 (its argument rounded in fp32, ex2.approx within 2u)
//   O (forward, rounded to T):  (eps_i + u_T + gamma(S)) sum_j P_ij |v_jd| + u_T |O_id|
//               (P rounded to T for the PV mma; the division by the row sum inside eps_i)
//   e_D(i)    = sum_d |dO_id| bound(O_id) + gamma(D) sum_d |dO_id O_id|      D from the GPU's O
//   e_dP(i,j) = gamma(D) sum_d |dO_id v_jd|
//   e_dS(i,j) = P_ij [(eps_i + 2 u_T + 4u) |dP_ij - D_i| + e_dP(i,j) + e_D(i)]
//               (P's error, P as rounded to T for the dV product, dS rounded to T for its
//               mma, the fp32 subtraction and product)
//   dV_jd:  sum_i (eps_i + u_T + gamma(S)) P_ij |dO_id|                     P rounded to T
//   dK_jd:  scale sum_i (e_dS(i,j) + gamma(S) |dS_ij|) |q_id| + 2u |dK_jd|  (the scale multiply)
//   dQ_id:  scale sum_j (e_dS(i,j) + gamma(S) |dS_ij|) |k_jd| + 2u |dQ_id|
//   L_i:    e_L(i) + u |L_i|
// Products of two error terms are below u_T <= 2^-8 of the terms kept; 1.1 times the sum covers
// them. A wrong mask, scale, D or tile offset errs by the size of the values themselves, far
// above these bounds (the tests plant such bugs).
constexpr double kU = 1.0 / 16777216.0;  // 2^-24
constexpr double kSecondOrder = 1.1;

double gamma_acc(int64_t n) {
  return 40.0 * kU * double((n + 15) / 16 + 2);
}

struct HeadBounds {
  std::vector<double> o, lse, dq, dk, dv;
};

HeadBounds head_bounds(const double* q, const double* k, const double* v, const double* dout,
                       const ForwardRef& f, const BackwardRef& b, int64_t S, int D, double u_t) {
  const double scale = 1.0 / std::sqrt(double(D));
  const size_t n = size_t(S * D);
  HeadBounds hb{std::vector<double>(n, 0.0), std::vector<double>(size_t(S), 0.0),
                std::vector<double>(n, 0.0), std::vector<double>(n, 0.0),
                std::vector<double>(n, 0.0)};
  const double g_d = gamma_acc(D), g_s = gamma_acc(S);
  std::vector<double> eps(static_cast<size_t>(S)), e_d(static_cast<size_t>(S));
  for (int64_t i = 0; i < S; ++i) {
    double e_max = 0, s_max = 0;
    for (int64_t j = 0; j < S; ++j) {
      if (f.p[size_t(i * S + j)] == 0) continue;
      double abs_qk = 0, qk = 0;
      for (int d = 0; d < D; ++d) {
        abs_qk += std::abs(q[i * D + d] * k[j * D + d]);
        qk += q[i * D + d] * k[j * D + d];
      }
      e_max = std::max(e_max, scale * g_d * abs_qk);
      s_max = std::max(s_max, std::abs(scale * qk));
    }
    const double lse = std::abs(f.lse[size_t(i)]);
    const double e_l = e_max + g_s + 4 * kU * (1 + lse);
    eps[size_t(i)] = e_max + e_l + 4 * kU * (1 + s_max + lse);
    hb.lse[size_t(i)] = kSecondOrder * (e_l + kU * lse);
  }
  // O, then D from it.
  for (int64_t i = 0; i < S; ++i) {
    double e = 0;
    for (int d = 0; d < D; ++d) {
      double pv = 0;
      for (int64_t j = 0; j < S; ++j) pv += f.p[size_t(i * S + j)] * std::abs(v[j * D + d]);
      const double bo = (eps[size_t(i)] + u_t + g_s) * pv + u_t * std::abs(f.o[size_t(i * D + d)]);
      hb.o[size_t(i * D + d)] = kSecondOrder * bo;
      e +=
          std::abs(dout[i * D + d]) * bo + g_d * std::abs(dout[i * D + d] * f.o[size_t(i * D + d)]);
    }
    e_d[size_t(i)] = e;
  }
  for (int64_t i = 0; i < S; ++i)
    for (int64_t j = 0; j < S; ++j) {
      const double p = f.p[size_t(i * S + j)];
      if (p == 0) continue;
      double abs_dov = 0;
      for (int d = 0; d < D; ++d) abs_dov += std::abs(dout[i * D + d] * v[j * D + d]);
      const double e_ds = p * ((eps[size_t(i)] + 2 * u_t + 4 * kU) *
                                   std::abs(b.dp[size_t(i * S + j)] - b.delta[size_t(i)]) +
                               g_d * abs_dov + e_d[size_t(i)]);
      const double w = scale * (e_ds + g_s * std::abs(b.ds[size_t(i * S + j)]));
      const double wv = (eps[size_t(i)] + u_t + g_s) * p;
      for (int d = 0; d < D; ++d) {
        hb.dv[size_t(j * D + d)] += wv * std::abs(dout[i * D + d]);
        hb.dk[size_t(j * D + d)] += w * std::abs(q[i * D + d]);
        hb.dq[size_t(i * D + d)] += w * std::abs(k[j * D + d]);
      }
    }
  for (size_t e = 0; e < n; ++e) {
    hb.dv[e] *= kSecondOrder;
    hb.dk[e] = kSecondOrder * (hb.dk[e] + 2 * kU * std::abs(b.dk[e]));
    hb.dq[e] = kSecondOrder * (hb.dq[e] + 2 * kU * std::abs(b.dq[e]));
  }
  return hb;
}

// ---- CPU reference over the checked heads -------------------------------------------------------
// Values and bounds of every output, for the heads checked (all of them when the reference is
// cheap, else the first and the last: the same kernels run every head, with its own offsets).
struct Reference {
  std::vector<int64_t> heads;
  std::vector<double> o, lse, dq, dk, dv;            // the checked heads, one after another
  std::vector<double> b_o, b_lse, b_dq, b_dk, b_dv;  // their bounds
};

std::vector<int64_t> checked_heads(const Shape& s) {
  const double cost = double(s.heads_total()) * double(s.seq) * double(s.seq) * s.dim;
  if (cost <= double(1 << 28) || s.heads_total() == 1) {
    std::vector<int64_t> all(size_t(s.heads_total()));
    for (int64_t h = 0; h < s.heads_total(); ++h) all[size_t(h)] = h;
    return all;
  }
  return {0, s.heads_total() - 1};
}

void append(std::vector<double>& to, const std::vector<double>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

Reference reference(const std::vector<float>& q, const std::vector<float>& k,
                    const std::vector<float>& v, const std::vector<float>& dout, const Shape& s) {
  Reference r;
  r.heads = checked_heads(s);
  const double u_t = s.bf16 ? 1.0 / 256 : 1.0 / 2048;
  const size_t n = size_t(s.seq * s.dim);
  for (int64_t h : r.heads) {
    const size_t at = size_t(h) * n;
    const std::vector<double> qd(q.begin() + at, q.begin() + at + n),
        kd(k.begin() + at, k.begin() + at + n), vd(v.begin() + at, v.begin() + at + n),
        dod(dout.begin() + at, dout.begin() + at + n);
    const ForwardRef f = forward_cpu(qd.data(), kd.data(), vd.data(), s.seq, s.dim, s.causal);
    const BackwardRef b =
        backward_cpu(qd.data(), kd.data(), vd.data(), dod.data(), f, s.seq, s.dim);
    const HeadBounds hb =
        head_bounds(qd.data(), kd.data(), vd.data(), dod.data(), f, b, s.seq, s.dim, u_t);
    append(r.o, f.o), append(r.lse, f.lse), append(r.dq, b.dq), append(r.dk, b.dk),
        append(r.dv, b.dv);
    append(r.b_o, hb.o), append(r.b_lse, hb.lse), append(r.b_dq, hb.dq), append(r.b_dk, hb.dk),
        append(r.b_dv, hb.dv);
  }
  return r;
}

// The CPU backward against central finite differences of the CPU forward, as a function of Q, K
// and V together, on 5 queries and keys of head dim 4 (causal or not).
gpu100::CheckResult check_reference_gradient(bool causal) {
  constexpr int64_t S = 5;
  constexpr int D = 4;
  const size_t n = size_t(S * D);
  std::vector<double> x, dout;
  for (uint64_t part = 0; part < 3; ++part)
    for (float e : gpu100::random_floats(n, 791 + part)) x.push_back(e);
  for (float e : gpu100::random_floats(n, 795)) dout.push_back(e);
  auto forward = [&](const std::vector<double>& qkv) {
    return forward_cpu(qkv.data(), qkv.data() + n, qkv.data() + 2 * n, S, D, causal).o;
  };
  const ForwardRef f = forward_cpu(x.data(), x.data() + n, x.data() + 2 * n, S, D, causal);
  const BackwardRef b =
      backward_cpu(x.data(), x.data() + n, x.data() + 2 * n, dout.data(), f, S, D);
  std::vector<double> dx = b.dq;
  append(dx, b.dk);
  append(dx, b.dv);
  return gpu100::check_gradient(forward, x, dout, dx);
}

// ---- inputs, device data, checks ----------------------------------------------------------------
template <class T>
std::vector<T> rounded(const std::vector<float>& x) {
  std::vector<T> out(x.size());
  for (size_t e = 0; e < x.size(); ++e) {
    if constexpr (std::is_same_v<T, __half>) {
      out[e] = __float2half_rn(x[e]);
    } else {
      out[e] = __float2bfloat16_rn(x[e]);
    }
  }
  return out;
}

// Random inputs in [-1, 1) as the device holds them: a T buffer, and the floats it holds exactly.
struct Input {
  gpu100::DeviceBuffer<uint16_t> device;
  std::vector<float> values;
};

template <class T>
Input make_input_as(size_t n, uint64_t seed) {
  const std::vector<T> t = rounded<T>(gpu100::random_floats(n, seed));
  Input in{gpu100::DeviceBuffer<uint16_t>(n), std::vector<float>(n)};
  std::vector<uint16_t> bits(n);
  for (size_t e = 0; e < n; ++e) {
    in.values[e] = float(t[e]);
    std::memcpy(&bits[e], &t[e], 2);
  }
  in.device.upload(bits);
  return in;
}

Input make_input(const Shape& s, uint64_t seed) {
  const size_t n = size_t(s.elements());
  return s.bf16 ? make_input_as<__nv_bfloat16>(n, seed) : make_input_as<__half>(n, seed);
}

struct DeviceData {
  DeviceData(const Shape& s, uint64_t seed)
      : q(make_input(s, seed)),
        k(make_input(s, seed + 1)),
        v(make_input(s, seed + 2)),
        dout(make_input(s, seed + 3)),
        o(size_t(s.elements())),
        lse(size_t(s.heads_total() * s.seq)),
        delta(size_t(s.heads_total() * s.seq)),
        dq(size_t(s.elements())),
        dk(size_t(s.elements())),
        dv(size_t(s.elements())) {
    b = {q.device.data(), k.device.data(), v.device.data(), dout.device.data(), o.data(),
         lse.data(),      delta.data(),    dq.data(),       dk.data(),          dv.data()};
  }
  DeviceData(const DeviceData&) = delete;  // b points into this object
  DeviceData& operator=(const DeviceData&) = delete;

  Input q, k, v, dout;
  gpu100::DeviceBuffer<uint16_t> o;
  gpu100::DeviceBuffer<float> lse, delta, dq, dk, dv;
  Buffers b;
};

// The checked heads' part of a [heads][per_head] result, as double.
template <class Getter>
std::vector<double> checked_part(const std::vector<int64_t>& heads, size_t per_head, Getter get) {
  std::vector<double> out;
  out.reserve(heads.size() * per_head);
  for (int64_t h : heads)
    for (size_t e = 0; e < per_head; ++e) out.push_back(get(size_t(h) * per_head + e));
  return out;
}

std::vector<double> checked_floats(const gpu100::DeviceBuffer<float>& d, const Reference& r,
                                   size_t per_head) {
  const std::vector<float> host = d.download();
  return checked_part(r.heads, per_head, [&](size_t e) { return double(host[e]); });
}

double to_double_bits(uint16_t bits, bool bf16) {
  if (bf16) {
    __nv_bfloat16 x;
    std::memcpy(&x, &bits, 2);
    return double(float(x));
  }
  __half x;
  std::memcpy(&x, &bits, 2);
  return double(float(x));
}

// How much of its bound an output uses at worst (max |got - ref| / bound): how loose the
// worst-case derivation is on this data. Appended to `tightness` for the report's notes.
void note_tightness(std::string& tightness, const char* name, const std::vector<double>& got,
                    const std::vector<double>& ref, const std::vector<double>& bound) {
  double worst = 0;
  for (size_t e = 0; e < got.size(); ++e)
    if (bound[e] > 0) worst = std::max(worst, std::abs(got[e] - ref[e]) / bound[e]);
  tightness += fmt::format(" {} {:.2g}", name, worst);
}

gpu100::CheckResult check_forward(const DeviceData& d, const Reference& r, const Shape& s,
                                  std::string& tightness) {
  const size_t n = size_t(s.seq * s.dim);
  const std::vector<uint16_t> o = d.o.download();
  const auto got_o =
      checked_part(r.heads, n, [&](size_t e) { return to_double_bits(o[e], s.bf16); });
  const auto got_lse = checked_floats(d.lse, r, size_t(s.seq));
  tightness.clear();
  note_tightness(tightness, "O", got_o, r.o, r.b_o);
  note_tightness(tightness, "L", got_lse, r.lse, r.b_lse);
  return gpu100::combine(gpu100::compare_within(got_o, r.o, r.b_o, "O"),
                         gpu100::compare_within(got_lse, r.lse, r.b_lse, "logsumexp"));
}

gpu100::CheckResult check_backward(const DeviceData& d, const Reference& r, const Shape& s,
                                   std::string& tightness) {
  const size_t n = size_t(s.seq * s.dim);
  const auto dq = checked_floats(d.dq, r, n), dk = checked_floats(d.dk, r, n),
             dv = checked_floats(d.dv, r, n);
  tightness.clear();
  note_tightness(tightness, "dQ", dq, r.dq, r.b_dq);
  note_tightness(tightness, "dK", dk, r.dk, r.b_dk);
  note_tightness(tightness, "dV", dv, r.dv, r.b_dv);
  auto c = gpu100::compare_within(dq, r.dq, r.b_dq, "dQ");
  c = gpu100::combine(c, gpu100::compare_within(dk, r.dk, r.b_dk, "dK"));
  return gpu100::combine(c, gpu100::compare_within(dv, r.dv, r.b_dv, "dV"));
}

struct Version {
  const char* name;
  bool forward;
  Backward backward;
};
const Version kVersions[] = {{"forward", true, Backward::atomic_dq},
                             {"backward_atomic_dq", false, Backward::atomic_dq},
                             {"backward_deterministic", false, Backward::deterministic}};

gpu100::Measure measure_version(const Version& v, DeviceData& d, const Reference& r, const Shape& s,
                                std::string& tightness) {
  if (v.forward)
    return {.name = v.name,
            .launch = [&d, s](cudaStream_t st) { launch_forward(d.b, s, st); },
            .reset =
                [&d] {
                  d.o.poison();
                  d.lse.poison();
                },
            .check = [&d, &r, s, &tightness] { return check_forward(d, r, s, tightness); },
            .work = s.forward_flops()};
  return {.name = v.name,
          .launch = [&d, s, version = v.backward](
                        cudaStream_t st) { launch_backward(version, d.b, s, st); },
          .reset =
              [&d] {
                d.delta.poison();
                d.dq.poison();
                d.dk.poison();
                d.dv.poison();
              },
          .check = [&d, &r, s, &tightness] { return check_backward(d, r, s, tightness); },
          .work = s.backward_flops()};
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "FlashAttention-2 backward (dQ, dK, dV from the saved logsumexp) with mma.sync, ldmatrix and "
      "cp.async; dQ by fp32 atomics or by a deterministic second pass");
  int64_t batch = 4, heads = 16, seq = 2048;
  int dim = 128;
  bool causal = false;
  std::string dtype = "fp16";
  cli.size("batch", batch, 1, "sequences");
  cli.size("heads", heads, 2, "attention heads per sequence");
  cli.size("seq", seq, 77, "sequence length (queries = keys)", int64_t(1) << 20);
  cli.option("dim", dim, "head dimension: 64 or 128", 64, 128);
  cli.flag("causal", causal, "causal mask (query i sees keys 0..i)");
  cli.option("dtype", dtype, {"fp16", "bf16"}, "type of Q, K, V, dO and O");
  cli.kernels_of(kVersions);
  cli.min_cc(80);  // mma.sync m16n8k16 with bf16, ldmatrix and cp.async are Ampere instructions
  cli.validate([&]() -> std::string {
    if (dim != 64 && dim != 128) return "--dim must be 64 or 128";
    if (batch * heads > 65535) return "--batch times --heads must be at most 65535 (grid y)";
    return "";
  });
  cli.device_bytes([&] {
    const double n = double(batch) * double(heads) * double(seq) * dim;
    return n * (5 * 2 + 3 * 4) + 2.0 * 4 * double(batch * heads * seq);
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("TFLOP/s");
    report.limit("fp16_tensor_tflops", ctx.device().peak_fp16_tensor_tflops(),
                 "dense fp16/bf16 tensor peak");
    const Shape s{batch, heads, seq, dim, causal, dtype == "bf16"};
    const int max_smem = std::max(DkdvSmem<128>::kBytes, 6 * Tile<128>::kBytes);
    if (size_t(max_smem) > ctx.device().smem_per_block_optin)
      throw std::runtime_error(
          fmt::format("the kernels need {} bytes of shared memory per block", max_smem));

    report.add_check("CPU backward vs finite differences", check_reference_gradient(false));
    report.add_check("CPU backward vs finite differences (causal)", check_reference_gradient(true));

    DeviceData d(s, ctx.seed());
    // The backward reads the forward's O and L: computed once here, and again by the forward's
    // own measurement (the same bits: the forward has no atomics).
    launch_forward(d.b, s, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const Reference r = reference(d.q.values, d.k.values, d.v.values, d.dout.values, s);

    std::map<std::string, std::string> tightness;  // per version, filled by its check
    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions)
      runs.push_back(measure_version(v, d, r, s, tightness[v.name]));
    ctx.measure_all(runs);
    for (const Version& v : kVersions)
      if (!tightness[v.name].empty())
        report.note(
            fmt::format("{}: largest |error| / derived bound:{}", v.name, tightness[v.name]));

    report.note(fmt::format(
        "FLOPs: forward 4*B*H*S^2*D{}; backward 2.5x that (five S x S x D products: S, dV, dP, "
        "dK, dQ); the deterministic version also recomputes S and dP in its dQ pass, uncounted",
        causal ? " / 2 (causal)" : ""));
    report.note(fmt::format("checked {} of {} heads against the CPU in double; gradients are fp32",
                            r.heads.size(), s.heads_total()));
  });
}
