// Day 078 - FlashAttention-2 forward: mma.sync m16n8k16, ldmatrix, cp.async double buffering
//
// O = softmax(Q K^T / sqrt(d)) V for every (batch, head), Q, K, V, O of shape [B, H, S, d] in fp16
// or bf16, fp32 accumulation, head dim d = 64 or 128, any S, causal (query i sees keys 0..i) or
// not; the kernel also saves each row's logsumexp L = ln sum_j e^(s_ij) in fp32, what the backward
// (day 079) recomputes P from. Day 077 did the online softmax in fp32 on CUDA cores, 4 threads per
// query row. Here a block of 4 warps owns 64 query rows, each warp 16 of them (the FA2 loop
// order: the query loop is outside, split across warps, so no warp ever needs another's sums),
// and walks the key/value tiles of 64 keys:
//   S = Q K^T        mma.sync m16n8k16 with Q from registers (ldmatrix once) and K by ldmatrix;
//   online softmax   the 16 x 64 scores stay in the accumulators: row max and row sum over the
//                    quad of lanes that shares a row (two shuffles), O rescaled by
//                    2^(m_old - m_new);
//   O += P V         P rounded to fp16/bf16 in registers - an accumulator fragment pair is exactly
//                    an A fragment of the next mma - and V by ldmatrix.trans.
// Causal: a block's query tile [q0, q0 + 64) needs only the key tiles that start at or before its
// last row; tiles past the diagonal are skipped, not masked, and the one on it is masked.
//
// Versions (one kernel template over a Design: shared layout and how tiles arrive)
//   plain      K/V tiles loaded through registers into one shared buffer, rows stored as they are
//              in memory: the 8 rows an ldmatrix reads lie 128 or 256 bytes apart, all in the same
//              4 banks - an 8-way bank conflict on every fragment load.
//   swizzled   the same with the 16-byte chunk c of row r stored at c ^ (r % 8): conflict-free.
//   pipelined  swizzled, and cp.async with two K/V buffers: tile j+1 is on its way while tile j
//              is multiplied; one barrier per tile.
// Each version runs per dtype (fp16, bf16) and mask (none, causal): "pipelined bf16 causal".
//
// Check: a CPU reference in double on the fp16/bf16 values the inputs hold, per element against a
// bound derived below (ErrorModel) from the kernel's roundings; the logsumexp likewise. Every row
// at the test sizes, sampled rows at full size. TFLOP/s counts 4 B H S^2 d (two GEMMs of 2 S^2 d
// each per head), halved for causal.
//
// Run:  build/bin/day078 [--batch 4 --heads 16 --seq 4096 --dim 128] [--dtype bf16] [--mask causal]
//       build/bin/day078 --seq 1000 --dim 64 --kernel pipelined      (odd S: the masked edge tile)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr int kBM = 16 * kWarps;  // query rows per block: 16 per warp
constexpr int kBN = 64;           // keys per K/V tile
constexpr double kLn2 = 0.69314718055994530942;
constexpr double kLog2e = 1.44269504088896340736;

using bf16 = __nv_bfloat16;

// ---- CPU reference (double) and its error bound -------------------------------------------------
struct Shape {
  int batch, heads, seq, dim;
  bool causal;
  int64_t heads_total() const { return int64_t(batch) * heads; }
  int64_t elements() const { return heads_total() * seq * dim; }
  int kv_end(int row) const { return causal ? row + 1 : seq; }  // keys row i sees: [0, kv_end)
  // Key tiles the kernel visits for the query tile holding `row`.
  int tiles_visited(int row) const {
    const int q0 = row / kBM * kBM;
    const int end = causal ? std::min(seq, q0 + kBM) : seq;
    return (end + kBN - 1) / kBN;
  }
};

// How a tensor core's fp32 accumulation is modelled (emu/README.md, "Tensor cores"): each mma adds
// 16 exact products to C; every addend is truncated to the bits that lie within kAccumBits of the
// largest addend's leading bit, the truncated addends are summed and the sum is rounded toward
// zero to fp32. Per mma that loses less than 17 * 2^(1 - kAccumBits) * max|addend| + 2^-23 |sum|,
// both at most the sum of |addends|. 22 bits is fewer than the fp32 significand the measurements of
// A100 and Hopper tensor cores report kept (Fasi et al. 2021; MMA-Sim), so the bound holds there;
// a test runs the day under the emulator's GPU100_EMU_MMA_ACCUM=truncate:22.
constexpr int kAccumBits = 22;

// The error model of one output row, from the kernel's arithmetic (u = 2^-24, fp32's unit
// roundoff; u_p the unit roundoff of fp16 (2^-11) or bf16 (2^-8); T the key tiles visited):
//  1. Scores. s~ = q.k in d/16 mma: |s~ - s| <= (d/16) e_mma A, A = sum_d |q_d k_d|, e_mma the
//     per-mma relative loss above. t = s * c with c = fl(log2(e) / sqrt(d)) (one rounding in c,
//     one in the product): |dt| <= c (d/16) e_mma A + 2u|t|. The kernel subtracts the running max
//     m (one more rounding, u(|t| + |m|)) and takes exp2f (2 ulp = 2^-22 relative, CUDA's table of
//     maximum ulp errors). The running max only shifts every exponent of a row by the same amount:
//     whichever m is used, it cancels between O's numerator and denominator.
//  2. Rescaling. A weight computed in tile k is later multiplied by the factors
//     alpha = exp2f(m_old - m_new) of the tiles after it (each 2^-22 plus the rounding of the
//     difference, u * 2 max|t|); O and l are multiplied by the same alpha, so that error is common
//     to numerator and denominator too.
//  => every weight w_j = 2^(t_j - max t) reaches both sums as w_j (1 + r_j), |r_j| <= rho.
//  3. Numerator only: P is rounded to fp16/bf16 for the PV mma (relative u_p; for fp16 a weight
//     below 2^-14 is subnormal and loses up to 2^-25 absolutely), then ceil(keys/16) = 4T mma
//     accumulate it in fp32 (4T e_mma relative to sum_j w_j |v_j|), and T products O * alpha.
//  4. Denominator only: l = sum of the fp32 weights; each goes through at most 17T + 2 roundings
//     (16 additions and one alpha product per tile in its thread, two across the quad): gamma_l.
//  Then O = sum_j w_j(1+r_j)(1+e_j) v_j / sum_j w_j(1+r_j)(1+g_j), and since
//  sum_j P_j (ratio_j - 1) v_j with |ratio_j - 1| <= kappa is at most kappa sum_j P_j |v_j|:
//     |O~ - O| <= kappa sum_j P_j |v_j| + tiny,
//     kappa = (1+rho)(1+u_p)(1+gamma_l)/((1-rho)(1-gamma_l)) - 1
//  plus the final division (1/l, then a product: 2u) and the rounding to the output type (u_p).
//  The logsumexp L = m ln 2 + logf(l): |L~ - L| <= -ln((1-rho)(1-gamma_l)) + 2u|m ln 2| + 1 ulp of
//  logf (CUDA's table: 1 ulp) + u|L|.
// The reference itself is double: its errors (1e-16 relative) are far below all of these.
struct ErrorModel {
  double u_p;  // unit roundoff of P and O (fp16 2^-11, bf16 2^-8)
  bool fp16;   // fp16: weights below 2^-14 are subnormal in P
  double e_mma() const { return 17.0 * std::ldexp(1.0, 1 - kAccumBits) + std::ldexp(1.0, -23); }
};

struct Reference {
  std::vector<int64_t> rows;           // flattened (head * S + i) of the rows compared
  std::vector<double> o, o_bound;      // rows.size() * d
  std::vector<double> lse, lse_bound;  // rows.size()
};

// The rows every check compares: all of them when the reference is cheap, else `samples` random
// rows plus each head's last row (the masked edge tile) and first row (causal: a single key).
std::vector<int64_t> rows_to_check(const Shape& sh, uint64_t seed, bool all) {
  const int64_t n = sh.heads_total() * sh.seq;
  std::vector<int64_t> rows;
  if (all) {
    for (int64_t r = 0; r < n; ++r) rows.push_back(r);
    return rows;
  }
  constexpr int kSamples = 1024;
  for (int64_t h = 0; h < std::min<int64_t>(sh.heads_total(), 8); ++h) {
    rows.push_back(h * sh.seq);
    rows.push_back(h * sh.seq + sh.seq - 1);
  }
  for (int k = 0; k < kSamples; ++k) rows.push_back(int64_t(gpu100::mix64(seed + k) % uint64_t(n)));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

template <class T>
Reference reference(const Shape& sh, const std::vector<T>& q, const std::vector<T>& k,
                    const std::vector<T>& v, const ErrorModel& em, std::vector<int64_t> rows) {
  const int d = sh.dim, S = sh.seq;
  const double u = std::ldexp(1.0, -24), scale = 1.0 / std::sqrt(double(d));
  const double c = double(float(scale * kLog2e));  // the constant the kernel multiplies by
  Reference r;
  r.rows = std::move(rows);
  r.o.resize(r.rows.size() * d);
  r.o_bound.resize(r.rows.size() * d);
  r.lse.resize(r.rows.size());
  r.lse_bound.resize(r.rows.size());
  std::vector<double> t(S), a(S), w(S), acc(d), acc_abs(d), tiny(d), qi(d);
  for (size_t n = 0; n < r.rows.size(); ++n) {
    const int64_t head = r.rows[n] / S;
    const int i = int(r.rows[n] % S);
    const int64_t base = head * S * d;
    const int keys = sh.kv_end(i), tiles = sh.tiles_visited(i);
    for (int x = 0; x < d; ++x) qi[x] = double(float(q[base + int64_t(i) * d + x]));
    double m = -INFINITY, max_abs_t = 0, max_dt = 0;
    for (int j = 0; j < keys; ++j) {
      const T* kj = &k[base + int64_t(j) * d];
      double s = 0, sa = 0;
      for (int x = 0; x < d; ++x) {
        const double p = qi[x] * double(float(kj[x]));
        s += p;
        sa += std::fabs(p);
      }
      t[j] = s * scale * kLog2e;
      a[j] = sa;
      m = std::max(m, t[j]);
      max_abs_t = std::max(max_abs_t, std::fabs(t[j]));
    }
    double wsum = 0;
    std::fill(acc.begin(), acc.end(), 0.0);
    std::fill(acc_abs.begin(), acc_abs.end(), 0.0);
    std::fill(tiny.begin(), tiny.end(), 0.0);
    for (int j = 0; j < keys; ++j) {
      w[j] = std::exp2(t[j] - m);
      wsum += w[j];
      max_dt = std::max(max_dt, c * (d / 16) * em.e_mma() * a[j] + 2 * u * std::fabs(t[j]) +
                                    u * (std::fabs(t[j]) + std::fabs(m)));
      const bool subnormal = em.fp16 && w[j] < std::ldexp(1.0, -14) * (1 + 1e-3);
      const T* vj = &v[base + int64_t(j) * d];
      for (int x = 0; x < d; ++x) {
        const double vx = double(float(vj[x]));
        acc[x] += w[j] * vx;
        acc_abs[x] += w[j] * std::fabs(vx);
        if (subnormal) tiny[x] += std::fabs(vx);
      }
    }
    // Items 1-2: the common relative error of a weight; 3-4: numerator and denominator alone.
    const double ex2 = std::ldexp(1.0, -22);
    const double rho = std::expm1(kLn2 * max_dt) + ex2 + (tiles - 1) * (ex2 + 2 * u * max_abs_t);
    const double h_l = 17.0 * tiles + 2, gamma_l = h_l * u / (1 - h_l * u);
    const double accum = 4.0 * tiles * em.e_mma() + tiles * u;
    const double kappa = (1 + rho) * (1 + em.u_p) * (1 + gamma_l) / ((1 - rho) * (1 - gamma_l)) - 1;
    const double den = (1 - rho) * (1 - gamma_l);  // the computed l is at least wsum * den
    for (int x = 0; x < d; ++x) {
      const double o = acc[x] / wsum, mean_abs = acc_abs[x] / wsum;
      double b = kappa * mean_abs + accum * (1 + kappa) * mean_abs / den +
                 std::ldexp(1.0, -25) * tiny[x] / (wsum * den);
      b += 2 * u * (std::fabs(o) + b);  // 1/l and the product
      b += em.u_p * (std::fabs(o) + b) + (em.fp16 ? std::ldexp(1.0, -25) : 0);  // to fp16/bf16
      r.o[n * d + x] = o;
      r.o_bound[n * d + x] = b * (1 + 1e-6);
    }
    const double lse = m * kLn2 + std::log(wsum);
    r.lse[n] = lse;
    r.lse_bound[n] =
        (-std::log(den) + 2 * u * std::fabs(m * kLn2) +
         std::ldexp(1.0, -23) * (std::fabs(std::log(wsum)) + 1e-30) + u * std::fabs(lse)) *
            (1 + 1e-6) +
        1e-30;
  }
  return r;
}

// ---- kernels: the PTX wrappers (as day 024) -----------------------------------------------------
__device__ __forceinline__ uint32_t shared_addr(const void* p) {
  return uint32_t(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  // .cg: through L2 only; a K/V tile is read once per block. src_bytes = 0 zero-fills.
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

__device__ __forceinline__ void st_shared_16(uint32_t dst, uint4 v) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
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

// d += a * b for one 16 x 8 x 16 tile, fp32 accumulators, fp16 or bf16 multiplicands.
template <class T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                          uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (std::is_same_v<T, __half>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
#else
  __trap();
#endif
}

// Two fp32 values as one register of two fp16/bf16 (x in the low half: the lower column index).
template <class T>
__device__ __forceinline__ uint32_t pack2(float x, float y) {
  if constexpr (std::is_same_v<T, __half>) {
    const __half2 h = __floats2half2_rn(x, y);
    return *reinterpret_cast<const uint32_t*>(&h);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(x, y);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
}

// ---- kernels: the design and the kernel ---------------------------------------------------------
template <bool Swizzle, bool Async>
struct Design {
  static constexpr bool kSwizzle = Swizzle, kAsync = Async;
};

// A Q, K or V tile in shared memory: 64 rows of d halves (8 or 16 chunks of 16 bytes per row).
template <int D, class Des>
struct Config {
  static constexpr int kD = D, kChunks = D / 8, kRowBytes = 2 * D;
  static constexpr int kTileBytes = kBN * kRowBytes;  // a Q tile has as many rows (kBM == kBN)
  static constexpr int kStages = Des::kAsync ? 2 : 1;
  // Q, then a K and a V tile per stage.
  static constexpr int kSmemBytes = kTileBytes + kStages * 2 * kTileBytes;
  static constexpr bool kSwizzle = Des::kSwizzle, kAsync = Des::kAsync;
  static_assert(D % 64 == 0, "the swizzle permutes groups of 8 chunks (128 bytes) within a row");
  static_assert(kBM == kBN, "Q tiles share the K/V tile layout");
  static_assert(kBN * kChunks % kThreads == 0, "tiles split evenly over the threads");

  // Byte offset of chunk `chunk` of row `row`. Rows are 128 or 256 bytes long, so the 8 rows of an
  // ldmatrix matrix start in the same bank; XOR-ing the chunk with row % 8 spreads them over the
  // 8 chunk positions of a 128-byte line: 8 different groups of 4 banks.
  GPU100_HD static constexpr uint32_t offset(int row, int chunk) {
    return uint32_t(row * kRowBytes + 16 * (kSwizzle ? chunk ^ (row & 7) : chunk));
  }
};

// Rows row0 .. row0+63 of a [S, d] matrix into a tile at `dst`, zeros past row S - 1.
template <class Cfg, class T>
__device__ __forceinline__ void load_tile(uint32_t dst, const T* __restrict__ src, int row0, int S,
                                          int tid) {
#pragma unroll
  for (int i = 0; i < kBN * Cfg::kChunks / kThreads; ++i) {
    const int id = tid + i * kThreads;
    const int row = id / Cfg::kChunks, chunk = id % Cfg::kChunks;
    const bool inside = row0 + row < S;
    const T* p = src + (inside ? int64_t(row0 + row) * Cfg::kD + chunk * 8 : 0);
    if constexpr (Cfg::kAsync) {
      cp_async_16(dst + Cfg::offset(row, chunk), p, inside ? 16 : 0);
    } else {
      st_shared_16(dst + Cfg::offset(row, chunk),
                   inside ? __ldg(reinterpret_cast<const uint4*>(p)) : make_uint4(0, 0, 0, 0));
    }
  }
}

// What one warp keeps across the key tiles: its 16 query rows as A fragments, O's accumulators
// (16 x d), and per row the running max m (log2 units) and this lane's part of the sum l. Lane
// 4g + t holds rows g and g + 8 (index h = 0, 1), columns 2t, 2t + 1 of each 8-wide n tile.
template <int D>
struct WarpState {
  uint32_t q[D / 16][4];
  float o[D / 8][4];
  float m[2], l[2];
};

// One key tile for one warp: S = Q K^T, mask, online softmax, O += P V.
template <class T, class Cfg, bool kCausal>
__device__ __forceinline__ void attend_tile(WarpState<Cfg::kD>& w, uint32_t sK, uint32_t sV, int n0,
                                            int row0, int S, float scale_log2, int lane) {
  constexpr int D = Cfg::kD, kNT = kBN / 8;
  float s[kNT][4];
#pragma unroll
  for (int j = 0; j < kNT; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) s[j][e] = 0.0f;
  // K rows are keys (n) with d (k) contiguous: ldmatrix without .trans gives the "col" B fragment.
  // Matrices: (keys 0-7, d 0-7), (keys 0-7, d 8-15), (keys 8-15, d 0-7), (keys 8-15, d 8-15).
  const int k_row = (lane & 7) + ((lane >> 4) & 1) * 8, k_chunk = (lane >> 3) & 1;
#pragma unroll
  for (int ks = 0; ks < D / 16; ++ks)
#pragma unroll
    for (int np = 0; np < kNT / 2; ++np) {
      uint32_t r[4];
      ldmatrix_x4(r, sK + Cfg::offset(np * 16 + k_row, ks * 2 + k_chunk));
      mma_16816<T>(s[2 * np], w.q[ks], r[0], r[1]);
      mma_16816<T>(s[2 * np + 1], w.q[ks], r[2], r[3]);
    }

  // Scores to log2 units; keys past S, and past the row under the causal mask, to -inf. Only the
  // last tile (partial) and, causal, the tiles reaching past row0 need the test.
  const int g = lane / 4, t = lane % 4;
  const bool edge = n0 + kBN > S || (kCausal && n0 + kBN - 1 > row0);
  float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int j = 0; j < kNT; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float x = s[j][e] * scale_log2;
      if (edge) {
        const int col = n0 + j * 8 + 2 * t + (e & 1), row = row0 + g + 8 * (e >> 1);
        if (col >= S || (kCausal && col > row)) x = -INFINITY;
      }
      s[j][e] = x;
      tile_max[e >> 1] = fmaxf(tile_max[e >> 1], x);
    }
  float alpha[2], base[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    // The 4 lanes of a quad hold a row's 64 scores between them.
    tile_max[h] = fmaxf(tile_max[h], __shfl_xor_sync(0xffffffffu, tile_max[h], 1));
    tile_max[h] = fmaxf(tile_max[h], __shfl_xor_sync(0xffffffffu, tile_max[h], 2));
    const float m_new = fmaxf(w.m[h], tile_max[h]);
    // A row with no visible key yet keeps m = -inf; exponents relative to 0 then give 0, not NaN.
    base[h] = m_new == -INFINITY ? 0.0f : m_new;
    alpha[h] = exp2f(w.m[h] - base[h]);
    w.m[h] = m_new;
    w.l[h] *= alpha[h];
  }
#pragma unroll
  for (int j = 0; j < kNT; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      s[j][e] = exp2f(s[j][e] - base[e >> 1]);
      w.l[e >> 1] += s[j][e];
    }
#pragma unroll
  for (int j = 0; j < D / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) w.o[j][e] *= alpha[e >> 1];

  // O += P V. The accumulators of n tiles 2kk and 2kk+1 (keys 16kk .. 16kk+15) are, packed in
  // pairs, the A fragment of key step kk: (row g, k 2t), (row g+8, k 2t), (row g, k 2t+8), ...
  // V rows are keys (k) with d (n) contiguous: ldmatrix.trans gives the "col" B fragment.
  // Matrices: (keys 0-7, d 0-7), (keys 8-15, d 0-7), (keys 0-7, d 8-15), (keys 8-15, d 8-15).
  const int v_row = (lane & 7) + ((lane >> 3) & 1) * 8, v_chunk = lane >> 4;
#pragma unroll
  for (int kk = 0; kk < kBN / 16; ++kk) {
    const uint32_t p[4] = {
        pack2<T>(s[2 * kk][0], s[2 * kk][1]), pack2<T>(s[2 * kk][2], s[2 * kk][3]),
        pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]), pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
    for (int dp = 0; dp < D / 16; ++dp) {
      uint32_t r[4];
      ldmatrix_x4_trans(r, sV + Cfg::offset(kk * 16 + v_row, dp * 2 + v_chunk));
      mma_16816<T>(w.o[2 * dp], p, r[0], r[1]);
      mma_16816<T>(w.o[2 * dp + 1], p, r[2], r[3]);
    }
  }
}

// Grid: (query tiles, batch * heads). Block: 4 warps, 16 query rows each.
template <class T, class Cfg, bool kCausal>
__global__ void __launch_bounds__(kThreads, 2)
    fa2_forward(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V,
                T* __restrict__ O, float* __restrict__ lse, int S, float scale_log2) {
  constexpr int D = Cfg::kD;
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sQ = shared_addr(smem);
  const uint32_t sKV0 = sQ + Cfg::kTileBytes;  // stage st: K at sKV0 + 2 st tile, V right after
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  // Causal blocks differ in work by up to S / 64 tiles: the longest start first.
  const int q0 = int(gridDim.x - 1 - blockIdx.x) * kBM;
  const int64_t head_offset = int64_t(blockIdx.y) * S * D;
  Q += head_offset, K += head_offset, V += head_offset, O += head_offset;
  lse += int64_t(blockIdx.y) * S;
  const int kv_end = kCausal ? min(S, q0 + kBM) : S;  // tiles past the diagonal are never visited
  const int n_tiles = (kv_end + kBN - 1) / kBN;
  const int row0 = q0 + warp * 16;

  WarpState<D> w;
#pragma unroll
  for (int j = 0; j < D / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) w.o[j][e] = 0.0f;
  w.m[0] = w.m[1] = -INFINITY;
  w.l[0] = w.l[1] = 0.0f;
  auto load_q_fragments = [&] {
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks)
      ldmatrix_x4(w.q[ks], sQ + Cfg::offset(warp * 16 + (lane & 15), ks * 2 + (lane >> 4)));
  };

  if constexpr (Cfg::kAsync) {
    // Group 0: Q and tile 0. Iteration j sends tile j+1 into the other stage (empty groups keep
    // the count exact), multiplies tile j, then waits for tile j+1. Its barrier also tells every
    // warp that stage j % 2 is free for tile j+2.
    load_tile<Cfg>(sQ, Q, q0, S, tid);
    load_tile<Cfg>(sKV0, K, 0, S, tid);
    load_tile<Cfg>(sKV0 + Cfg::kTileBytes, V, 0, S, tid);
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
    load_q_fragments();
    for (int j = 0; j < n_tiles; ++j) {
      if (j + 1 < n_tiles) {
        const uint32_t next = sKV0 + ((j + 1) % 2) * 2 * Cfg::kTileBytes;
        load_tile<Cfg>(next, K, (j + 1) * kBN, S, tid);
        load_tile<Cfg>(next + Cfg::kTileBytes, V, (j + 1) * kBN, S, tid);
      }
      cp_async_commit();
      const uint32_t sK = sKV0 + (j % 2) * 2 * Cfg::kTileBytes;
      attend_tile<T, Cfg, kCausal>(w, sK, sK + Cfg::kTileBytes, j * kBN, row0, S, scale_log2, lane);
      cp_async_wait<0>();
      __syncthreads();
    }
  } else {
    load_tile<Cfg>(sQ, Q, q0, S, tid);
    __syncthreads();
    load_q_fragments();
    for (int j = 0; j < n_tiles; ++j) {
      if (j > 0) __syncthreads();  // every warp is done with tile j-1 before it is overwritten
      load_tile<Cfg>(sKV0, K, j * kBN, S, tid);
      load_tile<Cfg>(sKV0 + Cfg::kTileBytes, V, j * kBN, S, tid);
      __syncthreads();
      attend_tile<T, Cfg, kCausal>(w, sKV0, sKV0 + Cfg::kTileBytes, j * kBN, row0, S, scale_log2,
                                   lane);
    }
  }

  // l was summed per lane over its columns; the quad holds the row's total. Then O / l, and the
  // logsumexp m ln 2 + ln l (natural log, what the backward's exp() expects).
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    w.l[h] += __shfl_xor_sync(0xffffffffu, w.l[h], 1);
    w.l[h] += __shfl_xor_sync(0xffffffffu, w.l[h], 2);
    const int row = row0 + g + 8 * h;
    if (row >= S) continue;
    const float inv = 1.0f / w.l[h];
    T* out = O + int64_t(row) * D + 2 * t;
#pragma unroll
    for (int j = 0; j < D / 8; ++j)
      *reinterpret_cast<uint32_t*>(out + j * 8) =
          pack2<T>(w.o[j][2 * h] * inv, w.o[j][2 * h + 1] * inv);
    if (t == 0) lse[row] = w.m[h] * float(kLn2) + logf(w.l[h]);
  }
}

// ---- launchers ----------------------------------------------------------------------------------
using Plain = Design<false, false>;
using Swizzled = Design<true, false>;
using Pipelined = Design<true, true>;

struct Args {
  const void *q, *k, *v;
  void* o;
  float* lse;
};

template <class T, class Cfg, bool kCausal>
void launch_fa2(const Shape& sh, const Args& a, cudaStream_t s) {
  static const bool opted_in = [] {
    CUDA_CHECK(cudaFuncSetAttribute(fa2_forward<T, Cfg, kCausal>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
    return true;
  }();
  (void)opted_in;
  const float scale_log2 = float(kLog2e / std::sqrt(double(sh.dim)));
  const dim3 grid(unsigned((sh.seq + kBM - 1) / kBM), unsigned(sh.heads_total()));
  fa2_forward<T, Cfg, kCausal><<<grid, kThreads, Cfg::kSmemBytes, s>>>(
      static_cast<const T*>(a.q), static_cast<const T*>(a.k), static_cast<const T*>(a.v),
      static_cast<T*>(a.o), a.lse, sh.seq, scale_log2);
  LAUNCH_CHECK();
}

template <class T, class Des>
void launch(const Shape& sh, const Args& a, cudaStream_t s) {
  if (sh.dim == 64) {
    sh.causal ? launch_fa2<T, Config<64, Des>, true>(sh, a, s)
              : launch_fa2<T, Config<64, Des>, false>(sh, a, s);
  } else {
    sh.causal ? launch_fa2<T, Config<128, Des>, true>(sh, a, s)
              : launch_fa2<T, Config<128, Des>, false>(sh, a, s);
  }
}

enum class Dtype { fp16, bf16 };
using Launcher = void (*)(const Shape&, const Args&, cudaStream_t);

struct Version {
  const char* name;
  Launcher fp16, bf16;
  int smem64, smem128;               // shared memory per block at d = 64 and 128
  const void *kernel64, *kernel128;  // the fp16 kernel without mask, for the resources note
};
template <class Des>
Version version(const char* name) {
  return {name,
          launch<__half, Des>,
          launch<bf16, Des>,
          Config<64, Des>::kSmemBytes,
          Config<128, Des>::kSmemBytes,
          reinterpret_cast<const void*>(fa2_forward<__half, Config<64, Des>, false>),
          reinterpret_cast<const void*>(fa2_forward<__half, Config<128, Des>, false>)};
}
const Version kVersions[] = {version<Plain>("plain"), version<Swizzled>("swizzled"),
                             version<Pipelined>("pipelined")};

// ---- host: inputs, buffers, measures ------------------------------------------------------------
// Uniform inputs, Q four times wider than K and V: scores of standard deviation about 1, so rows
// have a few dominant keys and the running max moves from tile to tile (the rescaling is used).
template <class T>
std::vector<T> random_tensor(int64_t n, uint64_t seed, float range) {
  const std::vector<float> f = gpu100::random_floats(size_t(n), seed, -range, range);
  std::vector<T> out(f.size());
  for (size_t i = 0; i < f.size(); ++i) out[i] = T(f[i]);
  return out;
}

struct TypedData {
  Dtype dtype;
  gpu100::DeviceBuffer<uint16_t> q, k, v, o;
  gpu100::DeviceBuffer<float> lse;
  Reference ref[2];  // per mask: none, causal
};

template <class T>
std::vector<uint16_t> bits_of(const std::vector<T>& x) {
  std::vector<uint16_t> b(x.size());
  std::memcpy(b.data(), x.data(), x.size() * 2);
  return b;
}

template <class T>
std::vector<double> values_of(const std::vector<uint16_t>& bits) {
  std::vector<double> out(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) {
    T x;
    std::memcpy(&x, &bits[i], 2);
    out[i] = double(float(x));
  }
  return out;
}

template <class T>
void make_data(TypedData& data, const Shape& base, const std::vector<bool>& masks, uint64_t seed,
               bool all_rows) {
  const int64_t n = base.elements();
  const auto q = random_tensor<T>(n, seed, 2.0f), k = random_tensor<T>(n, seed + 1, 1.0f),
             v = random_tensor<T>(n, seed + 2, 1.0f);
  data.q.upload(bits_of(q));
  data.k.upload(bits_of(k));
  data.v.upload(bits_of(v));
  const bool fp16 = std::is_same_v<T, __half>;
  const ErrorModel em{fp16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8), fp16};
  for (int c = 0; c < 2; ++c)
    if (masks[c]) {
      Shape sh = base;
      sh.causal = c == 1;
      data.ref[c] = reference(sh, q, k, v, em, rows_to_check(sh, seed + 3, all_rows));
    }
}

gpu100::CheckResult check_output(const TypedData& data, const Reference& r, int d) {
  const std::vector<uint16_t> o_bits = data.o.download();
  const std::vector<float> lse = data.lse.download();
  const std::vector<double> o_all =
      data.dtype == Dtype::fp16 ? values_of<__half>(o_bits) : values_of<bf16>(o_bits);
  std::vector<double> o(r.o.size()), l(r.lse.size());
  for (size_t n = 0; n < r.rows.size(); ++n) {
    l[n] = lse[size_t(r.rows[n])];
    for (int x = 0; x < d; ++x) o[n * d + x] = o_all[size_t(r.rows[n]) * d + x];
  }
  return gpu100::combine(
      gpu100::compare_within(o, r.o, r.o_bound, "derived bound (O)"),
      gpu100::compare_within(l, r.lse, r.lse_bound, "derived bound (logsumexp)"));
}

gpu100::Measure measure(const Version& v, TypedData& data, const Shape& sh) {
  const char* type = data.dtype == Dtype::fp16 ? "fp16" : "bf16";
  const Launcher launcher = data.dtype == Dtype::fp16 ? v.fp16 : v.bf16;
  const Args args{data.q.data(), data.k.data(), data.v.data(), data.o.data(), data.lse.data()};
  const double flops = 4.0 * double(sh.heads_total()) * double(sh.seq) * double(sh.seq) *
                       double(sh.dim) * (sh.causal ? 0.5 : 1.0);
  return {.name = fmt::format("{} {} {}", v.name, type, sh.causal ? "causal" : "full"),
          .kernel = v.name,
          .launch = [launcher, sh, args](cudaStream_t s) { launcher(sh, args, s); },
          .reset =
              [&data] {
                data.o.poison();
                data.lse.poison();
              },
          .check = [&data, sh] { return check_output(data, data.ref[sh.causal ? 1 : 0], sh.dim); },
          .work = flops};
}

// (query tile, key tile) pairs a causal run visits: query tile i stops at the tile holding its
// last row, so with T tiles of each, 1 + 2 + ... + T = T (T + 1) / 2 of the T^2.
int64_t causal_tile_pairs(int seq) {
  int64_t n = 0;
  for (int row = 0; row < seq; row += kBM) n += Shape{1, 1, seq, 64, true}.tiles_visited(row);
  return n;
}

// What the compiler and the occupancy calculator made of a version at head dim `dim`.
std::string resources(const Version& v, int dim) {
  const void* kernel = dim == 64 ? v.kernel64 : v.kernel128;
  const int smem = dim == 64 ? v.smem64 : v.smem128;
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  int blocks = 0;
  CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kThreads, size_t(smem)));
  return fmt::format(
      "{} (d = {}): {} registers/thread, {} KB shared memory, {} block(s) of {} "
      "threads per SM",
      v.name, dim, attr.numRegs, smem / 1024, blocks, kThreads);
}

void require_shared_memory(const gpu100::DeviceInfo& dev, int dim) {
  for (const Version& v : kVersions) {
    const int bytes = dim == 64 ? v.smem64 : v.smem128;
    if (size_t(bytes) > dev.smem_per_block_optin)
      throw std::runtime_error(
          fmt::format("{} needs {} bytes of shared memory per block, more than this GPU allows",
                      v.name, bytes));
  }
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "FlashAttention-2 forward, fp16/bf16 with fp32 accumulation: mma.sync m16n8k16, ldmatrix, "
      "swizzled shared tiles, cp.async double buffering, causal tile skipping, logsumexp");
  int64_t batch = 4, heads = 16, seq = 4096;
  int dim = 128;
  std::string dtype = "both", mask = "both";
  cli.size("batch", batch, 1, "batch size", 65535);
  cli.size("heads", heads, 2, "heads per sequence", 65535);
  cli.size("seq", seq, 131, "sequence length (queries = keys)", int64_t(1) << 24);
  cli.option("dim", dim, "head dimension: 64 or 128", 64, 128);
  cli.option("dtype", dtype, {"fp16", "bf16", "both"}, "input/output type");
  cli.option("mask", mask, {"none", "causal", "both"}, "attention mask");
  cli.kernels_of(kVersions);
  cli.validate([&] {
    if (dim != 64 && dim != 128) return std::string("--dim must be 64 or 128");
    if (batch * heads > 65535) return std::string("--batch * --heads must be at most 65535");
    if (batch * heads * seq * dim >= (int64_t(1) << 40))
      return std::string("--batch * --heads * --seq * --dim must be below 2^40");
    return std::string();
  });
  // Q, K, V and O of 2 bytes per element, per type; the logsumexp.
  cli.device_bytes([&] {
    const double n = double(batch) * double(heads) * double(seq);
    return (dtype == "both" ? 2.0 : 1.0) * (8.0 * n * dim + 4.0 * n);
  });
  cli.min_cc(80);  // mma.sync m16n8k16 with bf16, cp.async and ldmatrix are Ampere instructions

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("TFLOP/s");
    report.limit("fp16_tflops", ctx.device().peak_fp16_tensor_tflops(), "FP16 tensor peak");
    require_shared_memory(ctx.device(), dim);
    const Shape base{int(batch), int(heads), int(seq), dim, false};
    const std::vector<bool> masks = {mask != "causal", mask != "none"};
    // Every row when the reference is cheap (the test sizes), else sampled rows.
    const bool all_rows = double(base.heads_total()) * double(seq) * double(seq) * dim <= 1e9;

    std::vector<TypedData> data;
    for (Dtype t : {Dtype::fp16, Dtype::bf16}) {
      if (dtype != "both" && dtype != (t == Dtype::fp16 ? "fp16" : "bf16")) continue;
      const size_t n = size_t(base.elements());
      data.push_back({t,
                      gpu100::DeviceBuffer<uint16_t>(n),
                      gpu100::DeviceBuffer<uint16_t>(n),
                      gpu100::DeviceBuffer<uint16_t>(n),
                      gpu100::DeviceBuffer<uint16_t>(n),
                      gpu100::DeviceBuffer<float>(size_t(base.heads_total() * seq)),
                      {}});
    }
    for (TypedData& td : data) {
      if (td.dtype == Dtype::fp16)
        make_data<__half>(td, base, masks, ctx.seed(), all_rows);
      else
        make_data<bf16>(td, base, masks, ctx.seed() + 100, all_rows);
    }

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions)
      for (TypedData& td : data)
        for (int c = 0; c < 2; ++c)
          if (masks[c]) {
            Shape sh = base;
            sh.causal = c == 1;
            runs.push_back(measure(v, td, sh));
          }
    ctx.measure_all(runs);

    report.note(
        fmt::format("{} key tiles of {} per query tile of {}; causal visits {} of {} "
                    "(query, key) tile pairs",
                    (seq + kBN - 1) / kBN, kBN, kBM, causal_tile_pairs(int(seq)),
                    int64_t((seq + kBM - 1) / kBM) * ((seq + kBN - 1) / kBN)));
    report.note(
        fmt::format("checked {} rows per version against a bound derived for a tensor core "
                    "keeping {} bits when it accumulates",
                    data.empty() ? 0 : data[0].ref[masks[0] ? 0 : 1].rows.size(), kAccumBits));
    for (const Version& v : kVersions)
      if (ctx.want(v.name)) report.note(resources(v, dim));
  });
}
