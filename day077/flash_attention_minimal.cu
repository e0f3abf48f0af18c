// Day 077 - flash attention, minimal: O = softmax(Q K^T / sqrt(d)) V in fp32 without ever
// writing the seq x seq score matrix
//
// The materialized path (day 075's shape) writes the scores S = Q K^T, reads them back for the
// softmax, writes P, and reads P again for P V: four seq^2 arrays of traffic per head, and
// seq^2 floats of memory, to produce an output of only seq x d. FlashAttention (Dao et al., 2022)
// keeps a tile of query rows on chip and streams the keys and values past it in tiles: for each
// K/V tile it computes that tile's scores, turns them into probabilities with the online softmax
// of day 038 (a running maximum m and sum l per row; when m grows, everything summed so far is
// rescaled by e^(m_old - m_new)), and adds P V into an output accumulator that is rescaled the
// same way. Nothing of size seq^2 leaves the block; each row's logsumexp m + log l is written
// beside O, which is what a backward pass needs to recompute P (day 079). What still grows as
// seq^2 is reading: every query tile reads all of K and V, 2 d / (rows per tile) floats per
// score, inputs that all the tiles of a head read at about the same time (L2 can serve them).
//
// Versions
//   materialized  three kernels: batched tiled GEMM for S = scale Q K^T, a warp per row for the
//                 softmax (P over S in place, and the logsumexp), tiled GEMM for O = P V.
//   flash         one block per (batch x head, tile of 64 query rows), 4 threads per row. The
//                 query tile (pre-scaled) stays in shared memory; per tile of 32 keys the block
//                 loads K and V into shared memory, each thread computes 8 scores of its row,
//                 the row's 4 threads agree on the tile maximum and sum with two shuffles each,
//                 and each thread adds p v into its quarter of the row's output (P goes from
//                 thread to thread by shuffles: it never touches memory). Causal blocks stop at
//                 their last query row's tile.
//
// Any sequence length (partial tiles are masked: keys past the end get score -inf), any head
// dimension up to 128 (the kernel is compiled for 64 and 128 and runs the smaller that holds d),
// causal (key j visible to query i when j <= i) or not. Rate: the standard 4 B H seq^2 d FLOPs
// (two matmuls), halved for causal; the materialized path is the baseline ("x" column).
//
// Check: a CPU forward in double, per element of O and of the logsumexp within a worst-case
// bound derived from each version's order of operations (check_attention). Every row at small
// sizes, sampled rows above a budget.
//
// Run:  build/bin/day077 [--batch 4 --heads 16 --seq 2048 --dim 64] [--causal]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kMaxDim = 128;
constexpr int kRowsPerBlock = 64;  // query rows a flash block keeps on chip
constexpr int kKeysPerTile = 32;   // keys (and values) per shared-memory tile
constexpr int kLanesPerRow = 4;    // threads sharing one query row
constexpr int kFlashThreads = kRowsPerBlock * kLanesPerRow;
constexpr int kKeysPerLane = kKeysPerTile / kLanesPerRow;
// Row pitch of the shared tiles: d + 4 floats keeps rows 16-byte aligned for float4 reads and puts
// the rows a row's 4 threads read (4 consecutive keys) in 4 different groups of banks.
constexpr int kPad = 4;
constexpr int kGemmTile = 16;  // the materialized path's GEMM tiles
constexpr int kSoftmaxBlock = 256;

// Q, K, V and O are [batch * heads][seq][dim] row-major; the logsumexp is [batch * heads][seq].
struct Problem {
  int64_t heads;  // batch x heads: independent attention problems
  int seq, dim;
  bool causal;
  float scale;  // fp32 rounding of 1 / sqrt(dim)
};

// ---- CPU reference ------------------------------------------------------------------------------
// In double, with the bound's ingredients for row i of a head: a_j = scale sum_d |q_d k_jd| (the
// dot products' error scale), p_j, and the range max_j s_j - min_j s_j over the visible keys.
struct RowReference {
  std::vector<double> out;     // O[i][:]
  std::vector<double> abs_pv;  // sum_j p_j |v_jd|, the scale of O's error
  double lse = 0;
  double max_score_error_scale = 0;  // max_j a_j
  double range = 0;                  // of the visible scores
  double log_l = 0;                  // log sum_j e^(s_j - m)
};

RowReference attention_row_cpu(const std::vector<float>& q, const std::vector<float>& k,
                               const std::vector<float>& v, const Problem& p, int64_t head, int i) {
  const int64_t base = head * p.seq * p.dim;
  const float* qi = &q[size_t(base + int64_t(i) * p.dim)];
  const double scale = 1.0 / std::sqrt(double(p.dim));
  const int visible = p.causal ? i + 1 : p.seq;
  std::vector<double> s(static_cast<size_t>(visible));
  RowReference r;
  double m = -std::numeric_limits<double>::infinity(), lo = -m;
  for (int j = 0; j < visible; ++j) {
    const float* kj = &k[size_t(base + int64_t(j) * p.dim)];
    double dot = 0, a = 0;
    for (int d = 0; d < p.dim; ++d) {
      dot += double(qi[d]) * kj[d];
      a += std::fabs(double(qi[d]) * kj[d]);
    }
    s[size_t(j)] = scale * dot;
    r.max_score_error_scale = std::max(r.max_score_error_scale, scale * a);
    m = std::max(m, s[size_t(j)]);
    lo = std::min(lo, s[size_t(j)]);
  }
  double l = 0;
  for (double& x : s) l += (x = std::exp(x - m));
  r.out.assign(size_t(p.dim), 0.0);
  r.abs_pv.assign(size_t(p.dim), 0.0);
  for (int j = 0; j < visible; ++j) {
    const float* vj = &v[size_t(base + int64_t(j) * p.dim)];
    const double pj = s[size_t(j)] / l;
    for (int d = 0; d < p.dim; ++d) {
      r.out[size_t(d)] += pj * vj[d];
      r.abs_pv[size_t(d)] += pj * std::fabs(double(vj[d]));
    }
  }
  r.log_l = std::log(l);
  r.lse = m + r.log_l;
  r.range = m - lo;
  return r;
}

// ---- flash: the tiled online-softmax forward ----------------------------------------------------
template <int DMAX>
constexpr size_t flash_smem_bytes() {
  return size_t(kRowsPerBlock + 2 * kKeysPerTile) * (DMAX + kPad) * sizeof(float);
}

// Rows [0, ROWS) of a tile from a contiguous [rows][dim] block of global memory: consecutive
// threads read consecutive floats whatever dim is (coalesced), rows at or past `valid` are zeros.
template <int ROWS, int PITCH>
__device__ __forceinline__ void load_tile(float* __restrict__ tile, const float* __restrict__ src,
                                          int valid, int dim, float scale) {
  for (int i = threadIdx.x; i < ROWS * dim; i += kFlashThreads) {
    const int r = i / dim, c = i - r * dim;
    tile[r * PITCH + c] = r < valid ? src[i] * scale : 0.0f;
  }
}

template <int DMAX, bool CAUSAL>
__global__ void __launch_bounds__(kFlashThreads)
    flash_forward(const float* __restrict__ Q, const float* __restrict__ K,
                  const float* __restrict__ V, float* __restrict__ O, float* __restrict__ lse,
                  int seq, int dim, float scale) {
  constexpr int PITCH = DMAX + kPad;
  constexpr int CHUNKS = DMAX / 4 / kLanesPerRow;  // float4s of the output row per thread
  extern __shared__ float4 smem4[];
  float* Qs = reinterpret_cast<float*>(smem4);
  float* Ks = Qs + kRowsPerBlock * PITCH;
  float* Vs = Ks + kKeysPerTile * PITCH;
  __shared__ float lse_tile[kRowsPerBlock];

  const int64_t head_offset = int64_t(blockIdx.y) * seq * dim;
  const int q0 = blockIdx.x * kRowsPerBlock;
  const int row = threadIdx.x / kLanesPerRow, part = threadIdx.x % kLanesPerRow;
  const int lane = threadIdx.x % 32, group_first = lane & ~(kLanesPerRow - 1);
  const int query = q0 + row;
  const int dim4 = (dim + 3) & ~3;  // the float4 loops run to here over zeroed padding

  // The padding columns [dim, dim4) of all three tiles are zeroed once: loads never write them.
  for (int i = threadIdx.x; i < (kRowsPerBlock + 2 * kKeysPerTile) * (dim4 - dim);
       i += kFlashThreads)
    Qs[i / (dim4 - dim) * PITCH + dim + i % (dim4 - dim)] = 0.0f;
  // Scaling q here is one rounding per element instead of one per score.
  load_tile<kRowsPerBlock, PITCH>(Qs, Q + head_offset + int64_t(q0) * dim,
                                  min(kRowsPerBlock, seq - q0), dim, scale);

  float m = -INFINITY, l = 0.0f;
  float4 o[CHUNKS];
#pragma unroll
  for (int c = 0; c < CHUNKS; ++c) o[c] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);

  // A causal block needs no key past its last query row.
  const int keys_end = CAUSAL ? min(seq, q0 + kRowsPerBlock) : seq;
  for (int k0 = 0; k0 < keys_end; k0 += kKeysPerTile) {
    __syncthreads();  // every thread is done with the previous K/V tile (and Qs is complete)
    const int valid = min(kKeysPerTile, seq - k0);
    load_tile<kKeysPerTile, PITCH>(Ks, K + head_offset + int64_t(k0) * dim, valid, dim, 1.0f);
    load_tile<kKeysPerTile, PITCH>(Vs, V + head_offset + int64_t(k0) * dim, valid, dim, 1.0f);
    __syncthreads();

    // This thread's scores: keys k0 + part + 4 j of its query row.
    float s[kKeysPerLane];
#pragma unroll
    for (int j = 0; j < kKeysPerLane; ++j) s[j] = 0.0f;
    const float* q_row = Qs + row * PITCH;
    for (int d = 0; d < dim4; d += 4) {
      const float4 qv = *reinterpret_cast<const float4*>(q_row + d);
#pragma unroll
      for (int j = 0; j < kKeysPerLane; ++j) {
        const float4 kv =
            *reinterpret_cast<const float4*>(Ks + (part + kLanesPerRow * j) * PITCH + d);
        s[j] = fmaf(qv.x, kv.x, s[j]);
        s[j] = fmaf(qv.y, kv.y, s[j]);
        s[j] = fmaf(qv.z, kv.z, s[j]);
        s[j] = fmaf(qv.w, kv.w, s[j]);
      }
    }

    // The online softmax step for this tile (the derivation is in PROGRESS.md, day 077).
    float tile_max = -INFINITY;
#pragma unroll
    for (int j = 0; j < kKeysPerLane; ++j) {
      const int key = k0 + part + kLanesPerRow * j;
      if (key >= seq || (CAUSAL && key > query)) s[j] = -INFINITY;
      tile_max = fmaxf(tile_max, s[j]);
    }
#pragma unroll
    for (int step = 1; step < kLanesPerRow; step <<= 1)
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, step));
    // Key 0 is visible to every row (padding rows included) and lies in the first tile, so
    // m_new is finite from the first tile on: e^(s - m_new) is 0 for a masked s, never NaN, and
    // alpha is e^-inf = 0 on the first tile, where l and o are still 0.
    const float m_new = fmaxf(m, tile_max);
    const float alpha = expf(m - m_new);
    float row_sum = 0.0f;
#pragma unroll
    for (int j = 0; j < kKeysPerLane; ++j) row_sum += (s[j] = expf(s[j] - m_new));
#pragma unroll
    for (int step = 1; step < kLanesPerRow; step <<= 1)
      row_sum += __shfl_xor_sync(0xffffffffu, row_sum, step);
    l = l * alpha + row_sum;
    m = m_new;
#pragma unroll
    for (int c = 0; c < CHUNKS; ++c) {
      o[c].x *= alpha;
      o[c].y *= alpha;
      o[c].z *= alpha;
      o[c].w *= alpha;
    }

    // o += P V: key c's probability lives in lane c % 4 of the row's group, in its s[c / 4].
#pragma unroll
    for (int c = 0; c < kKeysPerTile; ++c) {
      const float p =
          __shfl_sync(0xffffffffu, s[c / kLanesPerRow], group_first | (c % kLanesPerRow));
      const float4* v_row = reinterpret_cast<const float4*>(Vs + c * PITCH);
#pragma unroll
      for (int ch = 0; ch < CHUNKS; ++ch) {
        const int chunk = part + kLanesPerRow * ch;  // d = 4 chunk .. 4 chunk + 3
        if (4 * chunk < dim4) {
          const float4 vv = v_row[chunk];
          o[ch].x = fmaf(p, vv.x, o[ch].x);
          o[ch].y = fmaf(p, vv.y, o[ch].y);
          o[ch].z = fmaf(p, vv.z, o[ch].z);
          o[ch].w = fmaf(p, vv.w, o[ch].w);
        }
      }
    }
  }

  // O = o / l through the query tile (no longer read), so that the stores are coalesced rows.
  __syncthreads();
#pragma unroll
  for (int ch = 0; ch < CHUNKS; ++ch) {
    const int chunk = part + kLanesPerRow * ch;
    if (4 * chunk < dim4)
      *reinterpret_cast<float4*>(Qs + row * PITCH + 4 * chunk) =
          make_float4(o[ch].x / l, o[ch].y / l, o[ch].z / l, o[ch].w / l);
  }
  if (part == 0) lse_tile[row] = m + logf(l);
  __syncthreads();
  const int rows = min(kRowsPerBlock, seq - q0);
  float* out = O + head_offset + int64_t(q0) * dim;
  for (int i = threadIdx.x; i < rows * dim; i += kFlashThreads) {
    const int r = i / dim, c = i - r * dim;
    out[i] = Qs[r * PITCH + c];
  }
  if (int(threadIdx.x) < rows)
    lse[int64_t(blockIdx.y) * seq + q0 + threadIdx.x] = lse_tile[threadIdx.x];
}

// ---- materialized: S and P in global memory -----------------------------------------------------
// C[z] = alpha A[z] op(B[z]) for each head z (blockIdx.z): A is M x K, op(B) is K x N, where B is
// stored K x N, or N x K when B_TRANSPOSED (K^T: keys are rows). Day 012's tiling; the transposed
// B tile is read along its rows (coalesced) and written across the shared tile.
template <bool B_TRANSPOSED>
__global__ void __launch_bounds__(kGemmTile* kGemmTile)
    batched_gemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                 int M, int N, int K, float alpha) {
  __shared__ float As[kGemmTile][kGemmTile + 1];
  __shared__ float Bs[kGemmTile][kGemmTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kGemmTile + ty, col = blockIdx.x * kGemmTile + tx;
  A += int64_t(blockIdx.z) * M * K;
  B += int64_t(blockIdx.z) * K * N;
  C += int64_t(blockIdx.z) * M * N;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kGemmTile) {
    As[ty][tx] = (row < M && k0 + tx < K) ? A[int64_t(row) * K + k0 + tx] : 0.0f;
    if (B_TRANSPOSED) {
      const int n = blockIdx.x * kGemmTile + ty;
      Bs[tx][ty] = (n < N && k0 + tx < K) ? B[int64_t(n) * K + k0 + tx] : 0.0f;
    } else {
      Bs[ty][tx] = (k0 + ty < K && col < N) ? B[int64_t(k0 + ty) * N + col] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int p = 0; p < kGemmTile; ++p) acc = fmaf(As[ty][p], Bs[p][tx], acc);
    __syncthreads();
  }
  if (row < M && col < N) C[int64_t(row) * N + col] = alpha * acc;
}

// A warp per row of S: the maximum, the sum of e^(s - m), then P = e^(s - m) / l over S and the
// row's logsumexp. Causal rows see keys j <= i only; the others get P = 0.
__global__ void softmax_rows(float* __restrict__ S, float* __restrict__ lse, int64_t rows, int seq,
                             bool causal) {
  const int64_t r = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (r >= rows) return;  // whole warps leave together
  float* s = S + r * seq;
  const int visible = causal ? int(r % seq) + 1 : seq;
  float m = -INFINITY, l = 0.0f;
  for (int j = lane; j < visible; j += 32) m = fmaxf(m, s[j]);
  for (int step = 16; step > 0; step >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, step));
  for (int j = lane; j < visible; j += 32) l += expf(s[j] - m);
  for (int step = 16; step > 0; step >>= 1) l += __shfl_xor_sync(0xffffffffu, l, step);
  for (int j = lane; j < seq; j += 32) s[j] = j < visible ? expf(s[j] - m) / l : 0.0f;
  if (lane == 0) lse[r] = m + logf(l);
}

// ---- launchers ----------------------------------------------------------------------------------
struct Tensors {
  const float *q, *k, *v;
  float *o, *lse, *scores;
};

void launch_materialized(const Problem& p, const Tensors& t, cudaStream_t stream) {
  const dim3 block(kGemmTile, kGemmTile);
  const unsigned key_tiles = gpu100::grid_for(p.seq, kGemmTile);
  batched_gemm<true><<<dim3(key_tiles, key_tiles, unsigned(p.heads)), block, 0, stream>>>(
      t.q, t.k, t.scores, p.seq, p.seq, p.dim, p.scale);
  LAUNCH_CHECK();
  const int64_t rows = p.heads * p.seq;
  softmax_rows<<<gpu100::grid_for(rows, kSoftmaxBlock / 32), kSoftmaxBlock, 0, stream>>>(
      t.scores, t.lse, rows, p.seq, p.causal);
  LAUNCH_CHECK();
  batched_gemm<false><<<dim3(gpu100::grid_for(p.dim, kGemmTile), key_tiles, unsigned(p.heads)),
                        block, 0, stream>>>(t.scores, t.v, t.o, p.seq, p.dim, p.seq, 1.0f);
  LAUNCH_CHECK();
}

template <int DMAX, bool CAUSAL>
void launch_flash_for(const Problem& p, const Tensors& t, cudaStream_t stream) {
  constexpr size_t smem = flash_smem_bytes<DMAX>();
  // Above 48 KiB a kernel must opt in to the dynamic shared memory it uses (once, not per run).
  static const bool opted_in = [] {
    CUDA_CHECK(cudaFuncSetAttribute(flash_forward<DMAX, CAUSAL>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    return true;
  }();
  (void)opted_in;
  const dim3 grid(gpu100::grid_for(p.seq, kRowsPerBlock), unsigned(p.heads));
  flash_forward<DMAX, CAUSAL>
      <<<grid, kFlashThreads, smem, stream>>>(t.q, t.k, t.v, t.o, t.lse, p.seq, p.dim, p.scale);
  LAUNCH_CHECK();
}

void launch_flash(const Problem& p, const Tensors& t, cudaStream_t stream) {
  if (p.dim <= 64)
    p.causal ? launch_flash_for<64, true>(p, t, stream) : launch_flash_for<64, false>(p, t, stream);
  else
    p.causal ? launch_flash_for<128, true>(p, t, stream)
             : launch_flash_for<128, false>(p, t, stream);
}

// ---- the check ----------------------------------------------------------------------------------
// How one row's result is computed, for the error bound: the rounded additions each term goes
// through on its way into l and into O's numerator, and the sum of the |m_old - m_new| steps and
// rescalings its weight e^(s - m) may have been multiplied through (flash only).
struct Order {
  double l_additions, o_additions, rescalings;
};

Order flash_order(const Problem& p, int i) {
  const int keys = p.causal ? std::min(p.seq, (i / kRowsPerBlock + 1) * kRowsPerBlock) : p.seq;
  const double tiles = std::ceil(double(keys) / kKeysPerTile);
  // l: 8 values in a thread, two shuffles, then one product and one sum per later tile. O: 32
  // fmas per tile, one product by alpha per later tile.
  return {kKeysPerLane + 2 + 2 * tiles, (kKeysPerTile + 1) * tiles, tiles};
}
Order materialized_order(const Problem& p, int i) {
  // l: a lane's strided share of the row, five shuffles; O: one fma chain over every key.
  const int visible = p.causal ? i + 1 : p.seq;
  return {std::ceil(visible / 32.0) + 5, double(p.seq), 0};
}

double gamma(double h) {
  const double u = std::ldexp(1.0, -24);
  return h * u / (1 - h * u);
}

// The bound, row by row (u = 2^-24, gamma(h) = h u / (1 - h u)):
//  - a score is a dot product of d fp32 products (fma chain) and one scaling: |s^ - s| <=
//    gamma(d + 2) a_j = delta (the 1/sqrt(d) rounding counts as one of the d + 2);
//  - each weight e^(s^ - m) is off by the subtraction (u |s - m| <= u range), expf (2 ulp = 4u),
//    and, in flash, its rescalings: alpha = e^(m_old - m_new) errs by u (|m_old - m_new| + 4) and
//    its product by u, the steps adding up to at most the range (m only grows): together
//    e^(delta) - 1 + u (range + 4) + u (2 range + 5 tiles) =: eps relative;
//  - normalizing weights that each err by eps relative moves sum_j p_j v_j by at most
//    2 eps / (1 - eps) sum_j p_j |v_j|; the sums add gamma(h_l) and gamma(h_o) relative to their
//    scales, the division u.
//  So |O^ - O| <= (2 eps / (1 - eps) + gamma(h_o) + gamma(h_l) + 2u) sum_j p_j |v_jd|. The
//  logsumexp m + log l: delta from the scores, log(1 + eps + gamma(h_l)) from l, logf 1 ulp of
//  log l, the sum u |lse|.
struct RowBound {
  double o_scale, lse;
};
RowBound row_bound(const RowReference& r, const Problem& p, const Order& order) {
  const double u = std::ldexp(1.0, -24);
  const double delta = gamma(p.dim + 2) * r.max_score_error_scale;
  const double eps =
      std::expm1(delta) + u * (r.range + 4) + u * (2 * r.range + 5 * order.rescalings);
  const double o_scale =
      2 * eps / (1 - eps) + gamma(order.o_additions) + gamma(order.l_additions) + 2 * u;
  const double l_rel = eps + gamma(order.l_additions);
  const double lse = delta + -std::log1p(-l_rel) + 2 * u * r.log_l + u * (std::fabs(r.lse) + 1);
  return {o_scale, lse};
}

// The rows checked: all of them while the reference costs at most `budget` multiply-adds, else
// evenly spread rows (the first and the last included) over every head.
std::vector<int64_t> checked_rows(const Problem& p, double budget) {
  const int64_t rows = p.heads * p.seq;
  const double per_row = 2.0 * p.seq * p.dim;
  const int64_t wanted = std::max<int64_t>(2, int64_t(budget / per_row));
  std::vector<int64_t> out;
  if (wanted >= rows) {
    for (int64_t r = 0; r < rows; ++r) out.push_back(r);
  } else {
    for (int64_t n = 0; n < wanted; ++n) out.push_back(n * (rows - 1) / (wanted - 1));
  }
  return out;
}

struct Reference {
  std::vector<int64_t> rows;
  std::vector<RowReference> at;
};

Reference attention_cpu(const std::vector<float>& q, const std::vector<float>& k,
                        const std::vector<float>& v, const Problem& p, double budget) {
  Reference ref;
  ref.rows = checked_rows(p, budget);
  for (int64_t r : ref.rows)
    ref.at.push_back(attention_row_cpu(q, k, v, p, r / p.seq, int(r % p.seq)));
  return ref;
}

gpu100::CheckResult check_attention(const std::vector<float>& o, const std::vector<float>& lse,
                                    const Reference& ref, const Problem& p,
                                    Order (*order_of)(const Problem&, int)) {
  std::vector<double> got_o, want_o, bound_o, got_lse, want_lse, bound_lse;
  for (size_t n = 0; n < ref.rows.size(); ++n) {
    const int64_t r = ref.rows[n];
    const RowReference& row = ref.at[n];
    const RowBound b = row_bound(row, p, order_of(p, int(r % p.seq)));
    for (int d = 0; d < p.dim; ++d) {
      got_o.push_back(o[size_t(r * p.dim + d)]);
      want_o.push_back(row.out[size_t(d)]);
      bound_o.push_back(b.o_scale * row.abs_pv[size_t(d)]);
    }
    got_lse.push_back(lse[size_t(r)]);
    want_lse.push_back(row.lse);
    bound_lse.push_back(b.lse);
  }
  return gpu100::combine(
      gpu100::compare_within(got_o, want_o, bound_o, "O, derived bound"),
      gpu100::compare_within(got_lse, want_lse, bound_lse, "lse, derived bound"));
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "Attention forward in fp32: materialized S and P vs flash (tiled online softmax)");
  int64_t batch = 4, heads = 16, seq = 2048, dim = 64;
  bool causal = false;
  double reference_budget = 3e8;
  cli.size("batch", batch, 2, "sequences", 65535);
  cli.size("heads", heads, 2, "attention heads per sequence", 65535);
  cli.size("seq", seq, 129, "sequence length (queries = keys)", int64_t(1) << 24);
  cli.size("dim", dim, 64, "head dimension (1 to 128)", kMaxDim);
  cli.flag("causal", causal, "query i attends to keys j <= i only");
  cli.option("reference-budget", reference_budget,
             "multiply-adds of the CPU reference; above it, sampled rows are checked", 1e3, 1e12);
  cli.kernels({"materialized", "flash"});
  cli.validate([&] {
    return batch * heads > 65535 ? std::string("batch x heads must be at most 65535 (grid limit)")
                                 : std::string();
  });
  cli.device_bytes([&] {
    const double bh = double(batch) * double(heads);
    // The seq x seq scores only for the materialized path: flash runs where they would not fit.
    const double scores = cli.want("materialized") ? bh * double(seq) * double(seq) : 0.0;
    return 4.0 * (4.0 * bh * double(seq) * double(dim) + bh * double(seq) + scores);
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("TFLOP/s");
    report.limit("fp32_tflops", ctx.device().peak_fp32_tflops(), "FP32 peak");
    report.problem("flash_rows_per_block", kRowsPerBlock);
    const Problem p{batch * heads, int(seq), int(dim), causal, float(1.0 / std::sqrt(double(dim)))};
    const size_t elements = size_t(p.heads * seq * dim);
    // Scores with a spread of a few units (q, k in [-2, 2]: standard deviation 4/3 after the
    // scaling), so the softmax is neither uniform nor one-hot.
    const auto q = gpu100::random_floats(elements, ctx.seed(), -2.0f, 2.0f);
    const auto k = gpu100::random_floats(elements, ctx.seed() + 1, -2.0f, 2.0f);
    const auto v = gpu100::random_floats(elements, ctx.seed() + 2, -1.0f, 1.0f);
    const Reference ref = attention_cpu(q, k, v, p, reference_budget);
    gpu100::DeviceBuffer<float> d_q(q), d_k(k), d_v(v), d_o{elements}, d_lse{size_t(p.heads * seq)};
    gpu100::DeviceBuffer<float> d_scores{ctx.want("materialized") ? size_t(p.heads * seq * seq)
                                                                  : size_t(1)};
    const Tensors t{d_q.data(), d_k.data(), d_v.data(), d_o.data(), d_lse.data(), d_scores.data()};

    const double flops =
        4.0 * double(p.heads) * double(seq) * double(seq) * double(dim) * (causal ? 0.5 : 1.0);
    auto reset = [&] {
      d_o.poison();
      d_lse.poison();
    };
    auto checker = [&](Order (*order_of)(const Problem&, int)) {
      return [&, order_of] {
        return check_attention(d_o.download(), d_lse.download(), ref, p, order_of);
      };
    };
    const std::vector<gpu100::Measure> runs = {
        {.name = "materialized",
         .launch = [&](cudaStream_t s) { launch_materialized(p, t, s); },
         .reset = reset,
         .check = checker(materialized_order),
         .work = flops},
        {.name = "flash",
         .launch = [&](cudaStream_t s) { launch_flash(p, t, s); },
         .reset = reset,
         .check = checker(flash_order),
         .work = flops},
    };
    const auto measured = ctx.measure_all(runs);
    // The materialized path is the comparison point: the x column is flash over it.
    const auto& base = gpu100::measured_of("materialized", runs, measured);
    if (base.ran) report.baseline("materialized", base.time, base.rate, base.check);
    report.note(fmt::format("checked {} of {} rows (all below a reference of {:g} multiply-adds)",
                            ref.rows.size(), p.heads * seq, reference_budget));
    report.note(fmt::format("flash: {} query rows per block, {} keys per tile, d compiled as {}",
                            kRowsPerBlock, kKeysPerTile, dim <= 64 ? 64 : 128));
  });
}
