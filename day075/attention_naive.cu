// Day 075 - attention, the naive way: O = softmax(Q K^T / sqrt(D)) V in three kernels
//
// Scaled dot-product attention for batch x heads independent problems, each with S queries and S
// keys of head dimension D (layout [batch][head][seq][dim], fp32). Written as the formula reads:
//   scores  S = scale Q K^T    an S x S matrix per head, written to global memory
//   softmax P = softmax_rows(S) read back, normalized, written again (the day-038 online pass)
//   pv      O = P V            P read back once more
// The FLOPs are two GEMMs, 4 S^2 D per head (the standard count: 4 B H S^2 D), but the bytes are
// the lesson: S and P are S^2 floats per head each, against 4 S D for Q, K, V and O together:
// S / (2 D) times as many, growing with S while the FLOPs per byte stay fixed near D/4: the naive
// path is bound by memory, and at long sequences by memory capacity (a head at S = 65536 needs 32
// GiB for S and P). Day 077 removes them (FlashAttention).
//
// Versions (TFLOP/s count 4 B H S^2 D; softmax FLOPs are not counted)
//   naive   one thread per score (a dot product of length D from global memory: neighbouring
//           lanes read keys D floats apart, a sector each) and one thread per output element.
//   tiled   the two GEMMs through shared memory, 32 x 32 output tiles, each thread 4 outputs
//           (day 012's idea): every Q/K/P/V element loaded from global memory once per tile.
//   cublas  cublasSgemmStridedBatched for Q K^T (alpha = scale) and for P V, one call for all
//           heads, with this day's softmax between them: the vendor path (NOT RUN emulated).
// All three share the softmax kernel: one warp per row of S, an online (max, sum) pass and a
// writing pass (day 038).
//
// Check: a CPU forward in double (the scale is the fp32 value 1/sqrt(D) the kernels use) at every
// query row up to 2^27 multiply-adds, at sampled rows beyond, each output element against a
// worst-case bound derived in check_attention: the dot products' rounding (gamma_D), carried
// through the softmax's exponentials, the softmax's own rounding, and the P V sum (gamma_S). The
// inputs are uniform in [-1, 1) except the last head's queries, scaled by 256 so its scores reach
// hundreds: exp(s) overflows fp32 above 88.7, so a softmax that skips subtracting the row maximum
// fails there.
//
// Run:  build/bin/day075 [--batch 4 --heads 16 --seq 2048 --dim 64] [--kernel naive,tiled,cublas]
#include <cublas_v2.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"

namespace {

constexpr double kU = 0x1p-24;              // fp32 unit roundoff
constexpr float kHotQueryScale = 256.0f;    // the last head's queries: scores in the hundreds
constexpr double kFullReference = 1 << 27;  // B H S^2 D above this: sampled rows only
constexpr int64_t kSampledRows = 256;

struct Shape {
  int64_t batch, heads, seq, dim;
  int64_t heads_total() const { return batch * heads; }
  int64_t rows() const { return batch * heads * seq; }  // query rows, over all heads
  double flops() const { return 4.0 * double(heads_total()) * double(seq) * double(seq) * dim; }
};

float attention_scale(int64_t dim) {
  return float(1.0 / std::sqrt(double(dim)));
}

// ---- CPU reference ------------------------------------------------------------------------------
// One query row (head bh, query i) in double, and the error bound of each of its D outputs.
//
// The bound (u = 2^-24, gamma_n = n u / (1 - n u), Higham 3.1): a score s_j = scale * (q . k_j)
// computed in fp32, in any order of its D products, is off by at most
//   e_j = scale gamma_D sum_d |q_d k_jd| + u |s_j|          (the dot product, then the scale).
// With every score off by at most E = max_j e_j, each p_j = e^(s_j) / sum_k e^(s_k) moves by a
// factor within e^(+-2E). The softmax's own arithmetic adds a relative error of at most
// gamma(h + 3 range + 12) (day 038's derivation: h rounding steps of the warp's online pass, and
// the rounded argument s_j - m of each expf, |s_j - m| <= range, the row's max minus min). So
// every computed p_j = p_j (1 + eps_j), |eps_j| <= eps. The P V sum, S products in any order,
// is then off by at most (eps + gamma_S (1 + eps)) sum_j p_j |v_jd|.
struct RowResult {
  std::vector<double> out, bound;
};

double softmax_steps(int64_t seq) {
  return 6.0 * double((seq + 31) / 32 + 5);
}

RowResult attention_row(const float* q, const float* k, const float* v, const Shape& sh,
                        double scale) {
  const int64_t S = sh.seq, D = sh.dim;
  std::vector<double> s(size_t(S), 0.0);
  double worst_score_err = 0;
  for (int64_t j = 0; j < S; ++j) {
    double dot = 0, mag = 0;
    for (int64_t d = 0; d < D; ++d) {
      dot += double(q[d]) * double(k[j * D + d]);
      mag += std::fabs(double(q[d]) * double(k[j * D + d]));
    }
    s[size_t(j)] = scale * dot;
    worst_score_err =
        std::max(worst_score_err, scale * gpu100::summation_error_bound(double(D), D) * mag +
                                      kU * std::fabs(s[size_t(j)]));
  }
  const double m = *std::max_element(s.begin(), s.end());
  const double range = m - *std::min_element(s.begin(), s.end());
  double sum = 0;
  for (double& x : s) sum += (x = std::exp(x - m));
  const double eps_in = std::expm1(2 * worst_score_err);
  const double eps_own = gpu100::summation_error_bound(softmax_steps(S) + 3 * range + 12, S);
  const double eps = (1 + eps_in) * (1 + eps_own) - 1;
  const double gamma_s = gpu100::summation_error_bound(double(S), S);

  RowResult r{std::vector<double>(size_t(D), 0.0), std::vector<double>(size_t(D), 0.0)};
  for (int64_t j = 0; j < S; ++j) {
    const double p = s[size_t(j)] / sum;
    for (int64_t d = 0; d < D; ++d) {
      r.out[size_t(d)] += p * double(v[j * D + d]);
      r.bound[size_t(d)] += p * std::fabs(double(v[j * D + d]));
    }
  }
  for (double& b : r.bound) b *= eps + gamma_s * (1 + eps);
  return r;
}

// Every query row when the problem is small, else the first and last rows of the first and last
// head (where partial tiles are) and random ones.
std::vector<int64_t> reference_rows(const Shape& sh, uint64_t seed) {
  std::vector<int64_t> rows;
  const double work = double(sh.heads_total()) * double(sh.seq) * double(sh.seq) * double(sh.dim);
  if (work <= kFullReference) {
    for (int64_t r = 0; r < sh.rows(); ++r) rows.push_back(r);
    return rows;
  }
  const int64_t last_head = (sh.heads_total() - 1) * sh.seq;
  rows = {0, sh.seq - 1, last_head, last_head + sh.seq - 1};
  std::mt19937_64 rng(seed ^ 0x5eedu);
  std::uniform_int_distribution<int64_t> pick(0, sh.rows() - 1);
  while (int64_t(rows.size()) < kSampledRows) rows.push_back(pick(rng));
  return rows;
}

struct Reference {
  std::vector<int64_t> rows;       // query rows checked (head * seq + query)
  std::vector<double> out, bound;  // D per checked row
};

Reference attention_cpu(const std::vector<float>& q, const std::vector<float>& k,
                        const std::vector<float>& v, const Shape& sh, uint64_t seed) {
  Reference ref{reference_rows(sh, seed), {}, {}};
  const double scale = attention_scale(sh.dim);
  const int64_t D = sh.dim, per_head = sh.seq * sh.dim;
  for (int64_t r : ref.rows) {
    const int64_t head = r / sh.seq;
    const RowResult rr = attention_row(&q[size_t(r * D)], &k[size_t(head * per_head)],
                                       &v[size_t(head * per_head)], sh, scale);
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
      fmt::format("bound: gamma_D scores, softmax, gamma_S P V ({} rows)", ref.rows.size()));
}

// ---- kernels: scores ----------------------------------------------------------------------------
// One thread per score s_ij of head blockIdx.z. A warp's 32 lanes take 32 keys j: they all read
// q_i (one broadcast request) and 32 different rows of K, D floats apart.
__global__ void scores_naive(const float* __restrict__ q, const float* __restrict__ k,
                             float* __restrict__ s, int64_t seq, int64_t dim, float scale) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t i = int64_t(blockIdx.y) * blockDim.y + threadIdx.y;
  if (i >= seq || j >= seq) return;
  const int64_t head = blockIdx.z;
  const float* qi = q + (head * seq + i) * dim;
  const float* kj = k + (head * seq + j) * dim;
  float acc = 0.0f;
  for (int64_t d = 0; d < dim; ++d) acc += qi[d] * kj[d];
  s[(head * seq + i) * seq + j] = scale * acc;
}

// ---- kernels: softmax over each row of S
// --------------------------------------------------------- The running pair of the online softmax:
// m the maximum seen, l the sum of e^(x - m).
struct RunningMax {
  float m, l;
};

__device__ __forceinline__ RunningMax merge(RunningMax a, RunningMax b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return a;  // both empty: -inf - -inf would be NaN
  return {m, a.l * expf(a.m - m) + b.l * expf(b.m - m)};
}

constexpr int kSoftmaxBlock = 256;  // 8 rows per block, a warp each

__global__ void __launch_bounds__(kSoftmaxBlock)
    softmax_rows(const float* __restrict__ s, float* __restrict__ p, int64_t rows, int64_t cols) {
  const int64_t r = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = int(threadIdx.x % 32);
  if (r >= rows) return;  // whole warps leave together
  const float* in = s + r * cols;
  RunningMax acc = {-INFINITY, 0.0f};
  for (int64_t c = lane; c < cols; c += 32) acc = merge(acc, RunningMax{in[c], 1.0f});
#pragma unroll
  for (int off = 16; off > 0; off >>= 1)
    acc = merge(acc, RunningMax{__shfl_xor_sync(0xffffffffu, acc.m, off),
                                __shfl_xor_sync(0xffffffffu, acc.l, off)});
  const float inv = 1.0f / acc.l;
  for (int64_t c = lane; c < cols; c += 32) p[r * cols + c] = expf(in[c] - acc.m) * inv;
}

// ---- kernels: P V
// -------------------------------------------------------------------------------- One thread per
// output o_id: lanes take consecutive d, so V's rows are read coalesced and P's element p_ij is one
// broadcast.
__global__ void pv_naive(const float* __restrict__ p, const float* __restrict__ v,
                         float* __restrict__ o, int64_t seq, int64_t dim) {
  const int64_t d = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t i = int64_t(blockIdx.y) * blockDim.y + threadIdx.y;
  if (i >= seq || d >= dim) return;
  const int64_t head = blockIdx.z;
  const float* pi = p + (head * seq + i) * seq;
  const float* vh = v + head * seq * dim;
  float acc = 0.0f;
  for (int64_t j = 0; j < seq; ++j) acc += pi[j] * vh[j * dim + d];
  o[(head * seq + i) * dim + d] = acc;
}

// ---- kernels: both GEMMs tiled through shared memory
// ----------------------------------------------- C (M x N) = alpha A (M x K) op(B) for head
// blockIdx.z, all row-major. B_KEYS: B is stored N x K (the keys: C = A B^T, the scores), else K x
// N (the values: C = A B). A 32 x 32 tile of C per block of 32 x 8 threads, each thread rows ty, ty
// + 8, ty + 16, ty + 24 of column tx; K in steps of 32 through shared memory. Bs is padded to 33
// columns: the key tile is stored transposed (Bs[k][n] = B[n][k]), and with 32 columns the 32 lanes
// writing one column would hit one bank.
constexpr int kTile = 32, kTileRows = 8;

template <bool B_KEYS>
__global__ void __launch_bounds__(kTile* kTileRows)
    gemm_tiled(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
               int64_t M, int64_t N, int64_t K, float alpha) {
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile + 1];
  const int tx = int(threadIdx.x), ty = int(threadIdx.y);
  const int64_t head = blockIdx.z;
  const int64_t row0 = int64_t(blockIdx.y) * kTile, col0 = int64_t(blockIdx.x) * kTile;
  a += head * M * K;
  b += head * N * K;
  c += head * M * N;
  float acc[kTile / kTileRows] = {};
  for (int64_t k0 = 0; k0 < K; k0 += kTile) {
#pragma unroll
    for (int r = 0; r < kTile; r += kTileRows) {
      const int64_t ar = row0 + ty + r, ak = k0 + tx;
      As[ty + r][tx] = (ar < M && ak < K) ? a[ar * K + ak] : 0.0f;
      if constexpr (B_KEYS) {  // row n = col0 + ty + r of B, element k0 + tx: coalesced along k
        const int64_t bn = col0 + ty + r, bk = k0 + tx;
        Bs[tx][ty + r] = (bn < N && bk < K) ? b[bn * K + bk] : 0.0f;
      } else {  // row k0 + ty + r of B, column col0 + tx
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
    __syncthreads();  // the next step overwrites the tiles
  }
#pragma unroll
  for (int r = 0; r < kTile / kTileRows; ++r) {
    const int64_t cr = row0 + ty + r * kTileRows, cc = col0 + tx;
    if (cr < M && cc < N) c[cr * N + cc] = alpha * acc[r];
  }
}

// ---- launchers ----------------------------------------------------------------------------------
struct Buffers {
  const float *q, *k, *v;
  float *s, *p, *o;
};

void softmax(const Buffers& b, const Shape& sh, cudaStream_t st) {
  const int64_t rows = sh.rows();
  softmax_rows<<<gpu100::grid_for(rows, kSoftmaxBlock / 32), kSoftmaxBlock, 0, st>>>(b.s, b.p, rows,
                                                                                     sh.seq);
  LAUNCH_CHECK();
}

void attention_naive(const Buffers& b, const Shape& sh, cudaStream_t st) {
  const dim3 block(32, 8);
  const unsigned heads = unsigned(sh.heads_total()), row_blocks = gpu100::grid_for(sh.seq, 8);
  scores_naive<<<dim3(gpu100::grid_for(sh.seq, 32), row_blocks, heads), block, 0, st>>>(
      b.q, b.k, b.s, sh.seq, sh.dim, attention_scale(sh.dim));
  LAUNCH_CHECK();
  softmax(b, sh, st);
  pv_naive<<<dim3(gpu100::grid_for(sh.dim, 32), row_blocks, heads), block, 0, st>>>(b.p, b.v, b.o,
                                                                                    sh.seq, sh.dim);
  LAUNCH_CHECK();
}

void attention_tiled(const Buffers& b, const Shape& sh, cudaStream_t st) {
  const dim3 block(kTile, kTileRows);
  const unsigned heads = unsigned(sh.heads_total()), row_tiles = gpu100::grid_for(sh.seq, kTile);
  gemm_tiled<true><<<dim3(gpu100::grid_for(sh.seq, kTile), row_tiles, heads), block, 0, st>>>(
      b.q, b.k, b.s, sh.seq, sh.seq, sh.dim, attention_scale(sh.dim));
  LAUNCH_CHECK();
  softmax(b, sh, st);
  gemm_tiled<false><<<dim3(gpu100::grid_for(sh.dim, kTile), row_tiles, heads), block, 0, st>>>(
      b.p, b.v, b.o, sh.seq, sh.dim, sh.seq, 1.0f);
  LAUNCH_CHECK();
}

// cuBLAS is column-major: a row-major X read as column-major is X^T. The scores S (S x S,
// row-major) are then S^T = K Q^T: A = K, transposed (its column-major view is K^T), B = Q as
// is, m = n = seq, k = dim. The output O = P V is O^T = V^T P^T: A = V, B = P, both as they are,
// m = dim, n = seq, k = seq. Every head at once: strided batched over heads.
void attention_cublas(const Buffers& b, const Shape& sh, cublasHandle_t h, cudaStream_t st) {
  const int S = int(sh.seq), D = int(sh.dim), heads = int(sh.heads_total());
  const long long qkv_stride = sh.seq * sh.dim, sp_stride = sh.seq * sh.seq;
  const float scale = attention_scale(sh.dim), one = 1.0f, zero = 0.0f;
  CUBLAS_CHECK(cublasSetStream(h, st));
  CUBLAS_CHECK(cublasSgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, S, S, D, &scale, b.k, D,
                                         qkv_stride, b.q, D, qkv_stride, &zero, b.s, S, sp_stride,
                                         heads));
  softmax(b, sh, st);
  CUBLAS_CHECK(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, D, S, S, &one, b.v, D,
                                         qkv_stride, b.p, S, sp_stride, &zero, b.o, D, qkv_stride,
                                         heads));
}

using Launcher = void (*)(const Buffers&, const Shape&, cudaStream_t);
struct Version {
  const char* name;
  Launcher launch;
};
const Version kVersions[] = {{"naive", attention_naive}, {"tiled", attention_tiled}};

// ---- inputs -------------------------------------------------------------------------------------
struct Inputs {
  std::vector<float> q, k, v;
};

Inputs make_inputs(const Shape& sh, uint64_t seed) {
  const size_t n = size_t(sh.rows() * sh.dim);
  Inputs in{gpu100::random_floats(n, seed), gpu100::random_floats(n, seed + 1),
            gpu100::random_floats(n, seed + 2)};
  // The last head's queries scaled: scores of a few hundred, where exp without the max overflows.
  for (size_t i = size_t((sh.heads_total() - 1) * sh.seq * sh.dim); i < n; ++i)
    in.q[i] *= kHotQueryScale;
  return in;
}

// A version (or, with cuBLAS, the baseline) as ctx.measure takes it: O poisoned, and S, so a
// scores kernel that skips an entry leaves a NaN for the softmax to spread.
struct Outputs {
  gpu100::DeviceBuffer<float>& s;
  gpu100::DeviceBuffer<float>& o;
};

gpu100::Measure measure_of(const std::string& name, std::function<void(cudaStream_t)> launch,
                           Outputs out, const Reference& ref, const Shape& sh) {
  return {.name = name,
          .launch = std::move(launch),
          .reset = [out] { out.o.poison(), out.s.poison(); },
          .check = [out, &ref, &sh] { return check_attention(out.o.download(), ref, sh); },
          .work = sh.flops()};
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("Attention in three kernels (Q K^T, softmax, P V): naive, tiled, cuBLAS");
  Shape sh{4, 16, 2048, 64};
  cli.size("batch", sh.batch, 2, "sequences in the batch");
  cli.size("heads", sh.heads, 1, "attention heads per sequence");
  cli.size("seq", sh.seq, 129, "sequence length (queries = keys)", 65535);
  cli.size("dim", sh.dim, 67, "head dimension", 4096);
  cli.kernels_of(kVersions);
  cli.validate([&]() -> std::string {
    if (sh.batch * sh.heads > 65535) return "batch x heads must be at most 65535 (gridDim.z)";
    return "";
  });
  cli.device_bytes([&] {  // Q, K, V, O and the two S x S matrices
    return 4.0 * double(sh.heads_total()) * double(sh.seq) * (4.0 * sh.dim + 2.0 * sh.seq);
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("TFLOP/s");
    report.limit("fp32_tflops", ctx.device().peak_fp32_tflops(), "FP32 peak");
    // FLOPs per byte if only Q, K, V and O crossed DRAM (what day 077 approaches).
    report.intensity(sh.flops() / (16.0 * double(sh.rows() * sh.dim)));

    const Inputs in = make_inputs(sh, ctx.seed());
    const Reference ref = attention_cpu(in.q, in.k, in.v, sh, ctx.seed());
    const size_t scores = size_t(sh.heads_total() * sh.seq * sh.seq);
    gpu100::DeviceBuffer<float> d_q(in.q), d_k(in.k), d_v(in.v), d_s{scores}, d_p{scores},
        d_o{in.q.size()};
    const Buffers b{d_q.data(), d_k.data(), d_v.data(), d_s.data(), d_p.data(), d_o.data()};
    const Outputs out{d_s, d_o};
    gpu100::CublasHandle cublas;
    gpu100::Measure baseline = measure_of(
        "cublas", [&](cudaStream_t st) { attention_cublas(b, sh, cublas, st); }, out, ref, sh);
    baseline.role = gpu100::Role::baseline;
    baseline.vendor = true;
    std::vector<gpu100::Measure> runs{baseline};
    for (const Version& ver : kVersions)
      runs.push_back(measure_of(
          ver.name, [&, ver](cudaStream_t st) { ver.launch(b, sh, st); }, out, ref, sh));
    ctx.measure_all(runs);
    report.note(
        fmt::format("scale = fp32(1/sqrt({})); queries of the last head x{} (scores in "
                    "the hundreds); {} query rows checked",
                    sh.dim, kHotQueryScale, ref.rows.size()));
    report.note(fmt::format("S and P: {:.1f} MiB, Q K V O: {:.1f} MiB (S^2 against 4 S D per head)",
                            8.0 * double(scores) / (1 << 20),
                            16.0 * double(sh.rows() * sh.dim) / (1 << 20)));
  });
}
