// Day 076 - attention masks: causal, padding, sliding window, and grouped-query heads
//
// Day 075's three kernels (scores, softmax, P V) with the masks real models use. Each one says
// which keys j a query i may see, and for all of them that set is one interval [lo, hi):
//   causal          j <= i                      (a token sees no future)
//   padding         j < len_b                   (sequence b of the batch has len_b real tokens;
//                                                the keys past it are padding)
//   sliding window  i - W < j, and j < i + W when not causal (Mistral's band, or a local window)
// and their combinations intersect the intervals. A row whose interval is empty (a sequence of
// length 0, or a query past its padding by a window or more) is FULLY MASKED: a softmax over no
// values is undefined (PyTorch's SDPA returns NaN there). Here it is defined as P = 0 and O = 0,
// what FlashAttention returns, and tested: such rows must come out exactly 0, never NaN.
// Grouped-query attention (GQA): H_q query heads share H_kv key/value heads (H_q a multiple of
// H_kv), query head h reading key/value head h / (H_q / H_kv); H_kv = 1 is multi-query attention.
//
// Versions
//   mask_tensor  the framework way: a boolean mask [batch][S][S] built once (a byte per score),
//                K and V repeated to H_q heads by a copy kernel (HF's repeat_kv), every score
//                computed, the softmax reading S and the mask in full.
//   mask_rule    the interval computed from (b, i) where it is needed, no mask bytes; K and V read
//                through the head mapping, no copies; tiles of S outside every row's interval
//                skipped by the scores kernel (about half of them for causal), the softmax reading
//                only the interval, P V looping only over the key tiles its rows can see.
// Rate: GB/s of the bytes the three-kernel path must move for this mask (Q, K, V at H_kv heads,
// O, and 16 bytes per VISIBLE score: S written and read, P written and read), against a
// device-to-device copy: the path is bound by memory (day 075), and a mask removes bytes, not
// just FLOPs. A version moving more than that (mask bytes, repeated K/V, masked scores) shows it as
// a lower rate.
//
// Check: a CPU forward in double over each row's interval, each output against the worst-case
// bound of day 075 (gamma_D on the scores carried through the softmax, its own rounding, gamma_n
// for the P V sum over the n visible keys); fully masked rows against exactly 0. Padding lengths:
// sequence 0 random in [ceil(S/2), S], the last one (of two or more) 0, the others in [0, S].
//
// Run:  build/bin/day076 [--batch 4 --heads 16 --kv-heads 4 --seq 2048 --dim 64]
//                        [--causal] [--window W] [--padding] [--kernel mask_tensor,mask_rule]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr double kU = 0x1p-24;              // fp32 unit roundoff
constexpr double kFullReference = 1 << 27;  // B H S^2 D above this: sampled rows only
constexpr int64_t kSampledRows = 256;

struct Shape {
  int64_t batch, heads, kv_heads, seq, dim;
  __host__ __device__ int64_t group() const { return heads / kv_heads; }
  __host__ __device__ int64_t q_heads_total() const { return batch * heads; }
  __host__ __device__ int64_t q_rows() const { return batch * heads * seq; }
  __host__ __device__ int64_t kv_rows() const { return batch * kv_heads * seq; }
  // The key/value head (over the batch) that query head qh (over the batch) reads.
  __host__ __device__ int64_t kv_head_of(int64_t qh) const {
    return (qh / heads) * kv_heads + (qh % heads) / (heads / kv_heads);
  }
};

// ---- the mask: one interval of keys per query
// ----------------------------------------------------
struct Mask {
  bool causal = false;
  int window = 0;  // 0: none
  bool padding = false;
};

struct KeySpan {
  int64_t lo, hi;  // visible keys: lo <= j < hi; empty when lo >= hi
};

// Query i of a sequence with len real tokens (len = seq without padding). Both ends are
// non-decreasing in i, so the rows i0..i1 together see at most [span(i0).lo, span(i1).hi).
__host__ __device__ __forceinline__ KeySpan key_span(const Mask& m, int64_t len, int64_t i) {
  int64_t lo = 0, hi = len;
  if (m.causal) hi = hi < i + 1 ? hi : i + 1;
  if (m.window > 0) {
    lo = i - m.window + 1 > 0 ? i - m.window + 1 : 0;
    if (!m.causal) hi = hi < i + m.window ? hi : i + m.window;
  }
  return {lo, hi};
}

// ---- CPU reference ------------------------------------------------------------------------------
// Day 075's bound over the row's n visible keys (u = 2^-24, gamma_n = n u / (1 - n u)): each score
// off by at most e_j = scale gamma_D sum_d |q_d k_jd| + u |s_j|, E = max_j e_j, so each p_j moves
// by a factor within e^(+-2E); the softmax's own rounding at most gamma(h + 3 range + 12), h its
// steps over the row (the mask_tensor version passes over all S scores); then the P V sum off by
// (eps + gamma_n (1 + eps)) sum_j p_j |v_jd|. Masked keys add exact zeros. A fully masked row's
// bound is 0: its outputs must be exactly 0.
struct RowResult {
  std::vector<double> out, bound;
};

double softmax_steps(int64_t seq) {
  return 6.0 * double((seq + 31) / 32 + 5);
}

RowResult attention_row(const float* q, const float* k, const float* v,
                        const std::vector<int64_t>& keys, const Shape& sh, double scale) {
  const int64_t D = sh.dim, n = int64_t(keys.size());
  RowResult r{std::vector<double>(size_t(D), 0.0), std::vector<double>(size_t(D), 0.0)};
  if (n == 0) return r;
  std::vector<double> s(static_cast<size_t>(n));
  double worst_score_err = 0;
  for (int64_t t = 0; t < n; ++t) {
    const float* kj = k + keys[size_t(t)] * D;
    double dot = 0, mag = 0;
    for (int64_t d = 0; d < D; ++d) {
      dot += double(q[d]) * double(kj[d]);
      mag += std::fabs(double(q[d]) * double(kj[d]));
    }
    s[size_t(t)] = scale * dot;
    worst_score_err =
        std::max(worst_score_err, scale * gpu100::summation_error_bound(double(D), D) * mag +
                                      kU * std::fabs(s[size_t(t)]));
  }
  const double m = *std::max_element(s.begin(), s.end());
  const double range = m - *std::min_element(s.begin(), s.end());
  double sum = 0;
  for (double& x : s) sum += (x = std::exp(x - m));
  const double eps_in = std::expm1(2 * worst_score_err);
  const double eps_own =
      gpu100::summation_error_bound(softmax_steps(sh.seq) + 3 * range + 12, sh.seq);
  const double eps = (1 + eps_in) * (1 + eps_own) - 1;
  const double gamma_n = gpu100::summation_error_bound(double(n), n);
  for (int64_t t = 0; t < n; ++t) {
    const double p = s[size_t(t)] / sum;
    const float* vj = v + keys[size_t(t)] * D;
    for (int64_t d = 0; d < D; ++d) {
      r.out[size_t(d)] += p * double(vj[d]);
      r.bound[size_t(d)] += p * std::fabs(double(vj[d]));
    }
  }
  for (double& b : r.bound) b *= eps + gamma_n * (1 + eps);
  return r;
}

struct Problem {
  Shape sh;
  Mask mask;
  std::vector<int> len;  // real tokens per sequence (seq each without padding)
  std::vector<float> q, k, v;
  float scale;
  // The keys query row q_row (query head over the batch * seq + i) sees, from the definitions
  // one key at a time (not from key_span: the check must not share the kernels' interval logic).
  std::vector<int64_t> visible_keys(int64_t q_row) const {
    const int64_t i = q_row % sh.seq, b = q_row / sh.seq / sh.heads;
    std::vector<int64_t> keys;
    for (int64_t j = 0; j < sh.seq; ++j) {
      const bool future = mask.causal && j > i;
      const bool padded = mask.padding && j >= len[size_t(b)];
      const bool far = mask.window > 0 && std::abs(i - j) >= mask.window;
      if (!future && !padded && !far) keys.push_back(j);
    }
    return keys;
  }
};

struct Reference {
  std::vector<int64_t> rows;       // query rows checked
  std::vector<double> out, bound;  // D per checked row
  int64_t fully_masked = 0;        // checked rows that see no key
  double visible = 0;              // visible scores over the whole problem
};

std::vector<int64_t> reference_rows(const Shape& sh, uint64_t seed) {
  std::vector<int64_t> rows;
  if (double(sh.q_heads_total()) * double(sh.seq) * double(sh.seq) * double(sh.dim) <=
      kFullReference) {
    for (int64_t r = 0; r < sh.q_rows(); ++r) rows.push_back(r);
    return rows;
  }
  // The first and last query of the first and last head (the last sequence is the padded one).
  const int64_t last_head = (sh.q_heads_total() - 1) * sh.seq;
  rows = {0, sh.seq - 1, last_head, last_head + sh.seq - 1};
  std::mt19937_64 rng(seed ^ 0x5eedu);
  std::uniform_int_distribution<int64_t> pick(0, sh.q_rows() - 1);
  while (int64_t(rows.size()) < kSampledRows) rows.push_back(pick(rng));
  return rows;
}

Reference attention_cpu(const Problem& p, uint64_t seed) {
  const Shape& sh = p.sh;
  Reference ref{reference_rows(sh, seed), {}, {}, 0, 0};
  for (int64_t r = 0; r < sh.q_rows(); ++r) {
    ref.visible += double(p.visible_keys(r).size());
  }
  const int64_t D = sh.dim;
  for (int64_t r : ref.rows) {
    const std::vector<int64_t> keys = p.visible_keys(r);
    if (keys.empty()) ++ref.fully_masked;
    const int64_t b = r / sh.seq / sh.heads, h = r / sh.seq % sh.heads;
    const int64_t kv = (b * sh.kv_heads + h * sh.kv_heads / sh.heads) * sh.seq * D;
    const RowResult rr = attention_row(&p.q[size_t(r * D)], &p.k[size_t(kv)], &p.v[size_t(kv)],
                                       keys, sh, double(p.scale));
    ref.out.insert(ref.out.end(), rr.out.begin(), rr.out.end());
    ref.bound.insert(ref.bound.end(), rr.bound.begin(), rr.bound.end());
  }
  return ref;
}

gpu100::CheckResult check_attention(const std::vector<float>& o, const Reference& ref,
                                    const Shape& sh) {
  std::vector<double> got;
  got.reserve(ref.out.size());
  for (int64_t r : ref.rows)
    for (int64_t d = 0; d < sh.dim; ++d) got.push_back(o[size_t(r * sh.dim + d)]);
  return gpu100::compare_within(
      got, ref.out, ref.bound,
      fmt::format("bound: gamma_D scores, softmax, gamma_n P V; {} fully masked rows = 0",
                  ref.fully_masked));
}

// ---- kernels: the mask tensor and the repeated heads (mask_tensor) ------------------------------
// A byte per (sequence, query, key): 1 = visible. Every head of a sequence shares it.
__global__ void build_mask(uint8_t* __restrict__ mask, const int* __restrict__ len, Mask m,
                           int64_t batch, int64_t seq) {
  const int64_t total = batch * seq * seq, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += stride) {
    const int64_t j = t % seq, i = t / seq % seq, b = t / seq / seq;
    const KeySpan sp = key_span(m, m.padding ? len[b] : seq, i);
    mask[t] = uint8_t(sp.lo <= j && j < sp.hi);
  }
}

// K or V [batch][kv_heads][seq][dim] copied to [batch][heads][seq][dim], each key/value head
// `group` times in a row (PyTorch's repeat_interleave along the heads).
__global__ void repeat_kv(const float* __restrict__ kv, float* __restrict__ out, Shape sh) {
  const int64_t head_size = sh.seq * sh.dim, total = sh.q_heads_total() * head_size;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += stride)
    out[t] = kv[sh.kv_head_of(t / head_size) * head_size + t % head_size];
}

// ---- kernels: the GEMMs, tiled through shared memory (day 075's, with heads and masks)
// ----------- C (M x N) = alpha A (M x K) op(B) for query head blockIdx.z; B belongs to key/value
// head kv_head_of(blockIdx.z). SCORES: B is the keys (N x K, C = A B^T), else the values (K x N, C
// = A B, A = P). A 32 x 32 tile of C per block of 32 x 8 threads, 4 rows each; Bs padded to 33
// columns (the key tile is stored transposed). With SKIP, the block first intersects its keys with
// the visible interval of its 32 query rows: a scores tile outside it is never computed (and
// never read: the softmax reads only the interval), and P V runs K only over it (P is 0 outside
// each row's interval, so the keys a row cannot see add exact zeros).
constexpr int kTile = 32, kTileRows = 8;

template <bool SCORES, bool SKIP>
__global__ void __launch_bounds__(kTile* kTileRows)
    gemm_tiled(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
               int64_t M, int64_t N, int64_t K, float alpha, int heads, int kv_heads, Mask mask,
               const int* __restrict__ len) {
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile + 1];
  const int tx = int(threadIdx.x), ty = int(threadIdx.y);
  const int head = int(blockIdx.z),
            kv_head = head / heads * kv_heads + head % heads / (heads / kv_heads);
  const int64_t row0 = int64_t(blockIdx.y) * kTile, col0 = int64_t(blockIdx.x) * kTile;
  a += int64_t(head) * M * K;
  b += int64_t(kv_head) * N * K;
  c += int64_t(head) * M * N;
  int64_t k_begin = 0, k_end = K;
  if constexpr (SKIP) {
    const int64_t seq_len = mask.padding ? len[head / heads] : M;
    const int64_t last_row = row0 + kTile - 1 < M ? row0 + kTile - 1 : M - 1;
    const KeySpan seen = {key_span(mask, seq_len, row0).lo, key_span(mask, seq_len, last_row).hi};
    if constexpr (SCORES) {
      if (seen.hi <= col0 || col0 + kTile <= seen.lo || seen.hi <= seen.lo) return;
    } else {
      k_begin = seen.lo / kTile * kTile;
      k_end = seen.hi < K ? seen.hi : K;
    }
  }
  float acc[kTile / kTileRows] = {};
  for (int64_t k0 = k_begin; k0 < k_end; k0 += kTile) {
#pragma unroll
    for (int r = 0; r < kTile; r += kTileRows) {
      const int64_t ar = row0 + ty + r, ak = k0 + tx;
      As[ty + r][tx] = (ar < M && ak < K) ? a[ar * K + ak] : 0.0f;
      if constexpr (SCORES) {
        const int64_t bn = col0 + ty + r, bk = k0 + tx;
        Bs[tx][ty + r] = (bn < N && bk < K) ? b[bn * K + bk] : 0.0f;
      } else {
        const int64_t bk = k0 + ty + r, bn = col0 + tx;
        Bs[ty + r][tx] = (bk < K && bn < N) ? b[bk * N + bn] : 0.0f;
      }
    }
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < kTile; ++kk) {
      const float bv = Bs[kk][tx];
#pragma unroll
      for (int r = 0; r < kTile / kTileRows; ++r) acc[r] += As[ty + r * kTileRows][kk] * bv;
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < kTile / kTileRows; ++r) {
    const int64_t cr = row0 + ty + r * kTileRows, cc = col0 + tx;
    if (cr < M && cc < N) c[cr * N + cc] = alpha * acc[r];
  }
}

// ---- kernels: the masked softmax
// ------------------------------------------------------------------
struct RunningMax {
  float m, l;  // the maximum seen, the sum of e^(x - m)
};

__device__ __forceinline__ RunningMax merge(RunningMax a, RunningMax b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return a;  // both empty (a lane that saw no visible key): stay (-inf, 0)
  return {m, a.l * expf(a.m - m) + b.l * expf(b.m - m)};
}

constexpr int kSoftmaxBlock = 256;  // a warp per row

// One warp per row of S. FROM_TENSOR: every score is read, and the mask byte beside it says
// whether it counts. Otherwise only the row's interval is read. Either way the whole row of P is
// written, 0 where masked, and a row with no visible key gets l = 0 and P = 0 (not 0/0 = NaN).
template <bool FROM_TENSOR>
__global__ void __launch_bounds__(kSoftmaxBlock)
    softmax_masked(const float* __restrict__ s, float* __restrict__ p,
                   const uint8_t* __restrict__ mask, const int* __restrict__ len, Mask rule,
                   Shape sh) {
  const int64_t r = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = int(threadIdx.x % 32);
  if (r >= sh.q_rows()) return;  // whole warps leave together
  const int64_t seq = sh.seq, i = r % seq, b = r / seq / sh.heads;
  const float* in = s + r * seq;
  const uint8_t* visible = FROM_TENSOR ? mask + (b * seq + i) * seq : nullptr;
  KeySpan sp = {0, seq};
  if (!FROM_TENSOR) sp = key_span(rule, rule.padding ? len[b] : seq, i);
  RunningMax acc = {-INFINITY, 0.0f};
  for (int64_t c = sp.lo + lane; c < sp.hi; c += 32) {
    const float x = in[c];
    if (!FROM_TENSOR || visible[c]) acc = merge(acc, RunningMax{x, 1.0f});
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1)
    acc = merge(acc, RunningMax{__shfl_xor_sync(0xffffffffu, acc.m, off),
                                __shfl_xor_sync(0xffffffffu, acc.l, off)});
  const float inv = acc.l > 0.0f ? 1.0f / acc.l : 0.0f;
  for (int64_t c = lane; c < seq; c += 32) {
    const bool seen = FROM_TENSOR ? visible[c] != 0 : (sp.lo <= c && c < sp.hi);
    p[r * seq + c] = seen ? expf(in[c] - acc.m) * inv : 0.0f;
  }
}

// ---- launchers ----------------------------------------------------------------------------------
struct Buffers {
  const float *q, *k, *v;
  float *s, *p, *o;
  float *k_rep, *v_rep;  // mask_tensor: K and V repeated to H_q heads (null when H_q = H_kv)
  const uint8_t* mask;   // mask_tensor: the mask bytes
  const int* len;        // per sequence: real tokens
};

template <bool SKIP>
void gemms_and_softmax(const Buffers& b, const float* k, const float* v, const Shape& head_sh,
                       const Shape& sh, const Mask& mask, float scale, cudaStream_t st) {
  const dim3 block(kTile, kTileRows);
  const unsigned heads = unsigned(sh.q_heads_total()), row_tiles = gpu100::grid_for(sh.seq, kTile);
  gemm_tiled<true, SKIP><<<dim3(gpu100::grid_for(sh.seq, kTile), row_tiles, heads), block, 0, st>>>(
      b.q, k, b.s, sh.seq, sh.seq, sh.dim, scale, int(head_sh.heads), int(head_sh.kv_heads), mask,
      b.len);
  LAUNCH_CHECK();
  softmax_masked<!SKIP>
      <<<gpu100::grid_for(sh.q_rows(), kSoftmaxBlock / 32), kSoftmaxBlock, 0, st>>>(
          b.s, b.p, b.mask, b.len, mask, sh);
  LAUNCH_CHECK();
  gemm_tiled<false, SKIP>
      <<<dim3(gpu100::grid_for(sh.dim, kTile), row_tiles, heads), block, 0, st>>>(
          b.p, v, b.o, sh.seq, sh.dim, sh.seq, 1.0f, int(head_sh.heads), int(head_sh.kv_heads),
          mask, b.len);
  LAUNCH_CHECK();
}

void attention_mask_tensor(const Buffers& b, const Problem& pr, cudaStream_t st) {
  const Shape& sh = pr.sh;
  const float *k = b.k, *v = b.v;
  Shape head_sh = sh;  // after repeating, query head h reads head h
  if (sh.group() > 1) {
    const unsigned grid = gpu100::grid_for(sh.q_rows() * sh.dim, 256);
    repeat_kv<<<grid, 256, 0, st>>>(b.k, b.k_rep, sh);
    LAUNCH_CHECK();
    repeat_kv<<<grid, 256, 0, st>>>(b.v, b.v_rep, sh);
    LAUNCH_CHECK();
    k = b.k_rep, v = b.v_rep, head_sh.kv_heads = sh.heads;
  }
  gemms_and_softmax<false>(b, k, v, head_sh, sh, pr.mask, pr.scale, st);
}

void attention_mask_rule(const Buffers& b, const Problem& pr, cudaStream_t st) {
  gemms_and_softmax<true>(b, b.k, b.v, pr.sh, pr.sh, pr.mask, pr.scale, st);
}

using Launcher = void (*)(const Buffers&, const Problem&, cudaStream_t);
struct Version {
  const char* name;
  Launcher launch;
};
const Version kVersions[] = {{"mask_tensor", attention_mask_tensor},
                             {"mask_rule", attention_mask_rule}};

// ---- inputs -------------------------------------------------------------------------------------
std::vector<int> sequence_lengths(const Shape& sh, bool padding, uint64_t seed) {
  std::vector<int> len(size_t(sh.batch), int(sh.seq));
  if (!padding) return len;
  std::mt19937_64 rng(seed ^ 0x1e9u);
  for (int64_t b = 0; b < sh.batch; ++b) {
    const int64_t lowest = b == 0 ? (sh.seq + 1) / 2 : 0;  // the first one mostly real tokens
    len[size_t(b)] = int(lowest + int64_t(rng() % uint64_t(sh.seq + 1 - lowest)));
  }
  if (sh.batch > 1) len.back() = 0;  // a sequence of padding only: every row fully masked
  return len;
}

Problem make_problem(const Shape& sh, const Mask& mask, uint64_t seed) {
  const size_t nq = size_t(sh.q_rows() * sh.dim), nkv = size_t(sh.kv_rows() * sh.dim);
  return {sh,
          mask,
          sequence_lengths(sh, mask.padding, seed),
          gpu100::random_floats(nq, seed),
          gpu100::random_floats(nkv, seed + 1),
          gpu100::random_floats(nkv, seed + 2),
          float(1.0 / std::sqrt(double(sh.dim)))};
}

std::string lengths_text(const std::vector<int>& len) {
  std::string s;
  for (int l : len) s += fmt::format("{}{}", s.empty() ? "" : " ", l);
  return s;
}

std::string describe(const Mask& m) {
  std::string s = m.causal ? "causal" : "";
  if (m.window > 0) s += fmt::format("{}window {}", s.empty() ? "" : " + ", m.window);
  if (m.padding) s += fmt::format("{}padding", s.empty() ? "" : " + ");
  return s.empty() ? "none" : s;
}

// The bytes the three-kernel path must move for this mask: Q and O at H_q heads, K and V at H_kv,
// and for each visible score S written, S read, P written, P read.
double path_bytes(const Shape& sh, double visible) {
  return 4.0 * double(sh.dim) * double(2 * sh.q_rows() + 2 * sh.kv_rows()) + 16.0 * visible;
}

struct Outputs {
  gpu100::DeviceBuffer<float>& s;
  gpu100::DeviceBuffer<float>& p;
  gpu100::DeviceBuffer<float>& o;
};

gpu100::Measure measure_version(const Version& ver, const Buffers& b, const Problem& pr,
                                Outputs out, const Reference& ref) {
  return {.name = ver.name,
          .launch = [&b, &pr, ver](cudaStream_t st) { ver.launch(b, pr, st); },
          // S and P too: a score or probability a kernel forgets is a NaN that reaches O.
          .reset = [out] { out.s.poison(), out.p.poison(), out.o.poison(); },
          .check = [out, &ref, &pr] { return check_attention(out.o.download(), ref, pr.sh); },
          .work = path_bytes(pr.sh, ref.visible)};
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "Masked attention (causal, padding, sliding window, grouped-query heads): "
      "mask tensor vs mask rule");
  Shape sh{4, 16, 4, 2048, 64};
  Mask mask;
  cli.size("batch", sh.batch, 3, "sequences in the batch");
  cli.size("heads", sh.heads, 4, "query heads per sequence (H_q)");
  cli.size("kv-heads", sh.kv_heads, 2, "key/value heads per sequence (H_kv, divides H_q)");
  cli.size("seq", sh.seq, 77, "sequence length (queries = keys)", 65535);
  cli.size("dim", sh.dim, 40, "head dimension", 4096);
  cli.flag("causal", mask.causal, "each query sees no later key");
  cli.option("window", mask.window, "sliding window: keys fewer than W positions away (0: none)", 0,
             65535);
  cli.flag("padding", mask.padding, "random real lengths per sequence, the last one 0");
  cli.kernels_of(kVersions);
  cli.validate([&]() -> std::string {
    if (sh.heads % sh.kv_heads != 0) return "--heads must be a multiple of --kv-heads";
    if (sh.batch * sh.heads > 65535) return "batch x heads must be at most 65535 (gridDim.z)";
    return "";
  });
  cli.device_bytes([&] {  // Q, O, S, P; K and V repeated; the mask bytes
    const double qh = double(sh.batch * sh.heads), s2 = double(sh.seq) * double(sh.seq);
    return 4.0 * qh * (4.0 * double(sh.seq * sh.dim) + 2.0 * s2) + double(sh.batch) * s2;
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    report.problem("mask", describe(mask));

    const Problem pr = make_problem(sh, mask, ctx.seed());
    const Reference ref = attention_cpu(pr, ctx.seed());
    const size_t scores = size_t(sh.q_heads_total() * sh.seq * sh.seq);
    const size_t repeated = sh.group() > 1 ? size_t(sh.q_rows() * sh.dim) : 0;
    gpu100::DeviceBuffer<float> d_q(pr.q), d_k(pr.k), d_v(pr.v), d_s{scores}, d_p{scores},
        d_o{pr.q.size()}, d_k_rep{repeated}, d_v_rep{repeated};
    gpu100::DeviceBuffer<int> d_len(pr.len);
    gpu100::DeviceBuffer<uint8_t> d_mask{size_t(sh.batch * sh.seq * sh.seq)};
    // Built once, as a framework builds its attention mask once for every layer.
    build_mask<<<gpu100::grid_for(sh.batch * sh.seq * sh.seq, 256), 256>>>(
        d_mask.data(), d_len.data(), mask, sh.batch, sh.seq);
    LAUNCH_CHECK();
    const Buffers b{d_q.data(), d_k.data(),     d_v.data(),     d_s.data(),    d_p.data(),
                    d_o.data(), d_k_rep.data(), d_v_rep.data(), d_mask.data(), d_len.data()};
    ctx.copy_baseline(size_t(path_bytes(sh, ref.visible) / 2));

    std::vector<gpu100::Measure> runs;
    for (const Version& ver : kVersions)
      runs.push_back(measure_version(ver, b, pr, {d_s, d_p, d_o}, ref));
    ctx.measure_all(runs);
    report.note(fmt::format(
        "mask: {}; {:.1f}% of the scores visible; {} of {} checked rows fully "
        "masked (their output must be exactly 0)",
        describe(mask), 100.0 * ref.visible / double(scores), ref.fully_masked, ref.rows.size()));
    if (mask.padding) report.note(fmt::format("sequence lengths: {}", lengths_text(pr.len)));
  });
}
