// Day 049 - fused linear + cross-entropy: the loss of a language-model head without its logits
//
// The head of a language model multiplies N token states X (N x H) by the vocabulary matrix W
// (V x H) into logits Z = X W^T (N x V), then takes the mean cross-entropy against the targets.
// At a large vocabulary the logits alone outweigh X, W and both gradients together. Training needs
// only the loss, dX and dW, and everything about a row of Z is local to that row: so take the rows
// a chunk at a time, compute the chunk's logits, turn them in place into dZ = (softmax - onehot) /
// n_valid (the cross-entropy gradient, day 48), and use them at once: dX_chunk = dZ W and dW +=
// dZ^T X_chunk. Only one chunk of logits ever exists. The cost is the same arithmetic in more,
// smaller GEMMs.
//
// Versions (all compute the loss, dX and dW; rows with target ignore_index count for nothing)
//   unfused         the whole Z at once: one GEMM for the logits, the cross-entropy kernel over
//                   all N rows, one GEMM each for dX and dW. The same kernels as fused.
//   fused           chunks of C rows through the same kernels, dW accumulated chunk after chunk.
//   unfused_cublas  the unfused path with cublasSgemm for the GEMMs (vendor: not run emulated).
//   fused_cublas    the fused path with cublasSgemm: the report's baseline (x baseline on a GPU).
// The day's GEMM is a 64 x 64 tiled kernel (16-deep k tiles in shared memory, 4 x 4 outputs per
// thread) with the operands' layouts as template parameters: X W^T, dZ W and dZ^T X read their
// operands in three different orders. Each output is one fma chain in k order, continued from
// the stored value when accumulating, so fused and unfused give bit-identical loss, dX and dW.
//
// Peak device memory of each path is measured: cudaMemGetInfo read after its allocations and
// after a run (and, under the emulator, its allocator's high-water mark too). --alloc-only makes
// exactly each path's allocations (the same functions as a run), reads the same counters and
// launches no kernel: the way to measure N = 8192, H = 1024, V = 32768 where it cannot be run.
//
// Check: fused against unfused bit for bit (loss, dX, dW); both, and the cuBLAS paths, against a
// CPU reference in double within per-element bounds derived from the fp32 dot products (gamma_K
// times the sums of absolute products) and the cross-entropy's own bound. Where the full reference
// would take more than a few seconds (N V H > --full-reference-max), unfused is checked on sampled
// rows (a chunk's first row, the last row, seeded random ones: their row loss, dZ and dX within
// the same bounds) and sampled rows of dW against its own dZ. The CPU backward is checked against
// central finite differences of the CPU forward on a tiny case.
//
// Run:  build/bin/day049 [--tokens 8192 --hidden 1024 --vocab 32768] [--chunk 256] [--alloc-only]
#include <cublas_v2.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "gpu100/emu_metrics.h"
#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"

namespace {

constexpr int kIgnoreIndex = -100;
constexpr int kRowBlock = 256;  // cross-entropy: a block per row
constexpr int kBM = 64, kBN = 64, kBK = 16, kGemmThreads = 256;
constexpr double kU = 0x1p-24;
constexpr const char* kBoundName = "per-element fp32 error bound";
// N V H up to which the whole CPU reference is computed (about 3 N V H double operations: a few
// seconds); beyond it, sampled rows of it (--full-reference-max moves it).
constexpr double kFullReferenceMax = 0x1p30;

// ---- inputs -------------------------------------------------------------------------------------
struct Problem {
  int64_t n, h, v;
  std::vector<float> x, w;  // N x H, V x H
  std::vector<int32_t> t;   // N targets (every 5th, from row 2, ignore_index)
};

Problem make_problem(int64_t n, int64_t h, int64_t v, uint64_t seed) {
  Problem p{n,
            h,
            v,
            gpu100::random_floats(size_t(n * h), seed, -1.0f, 1.0f),
            gpu100::random_floats(size_t(v * h), seed + 1, -1.0f, 1.0f),
            {}};
  const auto t = gpu100::random_ints(size_t(n), seed + 2, 0, int32_t(v - 1));
  p.t.assign(t.begin(), t.end());
  for (int64_t r = 2; r < n; r += 5) p.t[size_t(r)] = kIgnoreIndex;
  // Every 7th row from row 3 scaled up: logits in the hundreds, past where exp overflows fp32
  // without the max-subtraction.
  for (int64_t r = 3; r < n; r += 7)
    for (int64_t k = 0; k < h; ++k) p.x[size_t(r * h + k)] *= 256.0f;
  return p;
}

// ---- CPU reference ------------------------------------------------------------------------------
// Forward in double: mean cross-entropy over the non-ignored rows of Z = X W^T (0 if none).
double loss_cpu(const std::vector<double>& x, const std::vector<double>& w,
                const std::vector<int32_t>& t, int64_t n, int64_t h, int64_t v) {
  double sum = 0;
  int64_t valid = 0;
  std::vector<double> z(static_cast<size_t>(v));
  for (int64_t r = 0; r < n; ++r) {
    if (t[size_t(r)] == kIgnoreIndex) continue;
    ++valid;
    double m = -INFINITY, s = 0;
    for (int64_t j = 0; j < v; ++j) {
      double d = 0;
      for (int64_t k = 0; k < h; ++k) d += x[size_t(r * h + k)] * w[size_t(j * h + k)];
      z[size_t(j)] = d;
      m = std::max(m, d);
    }
    for (int64_t j = 0; j < v; ++j) s += std::exp(z[size_t(j)] - m);
    sum += m + std::log(s) - z[size_t(t[size_t(r)])];
  }
  return valid ? sum / double(valid) : 0.0;
}

// The reference and the largest error an fp32 path may make in each output (first-order terms,
// doubled). Z's entries carry gamma_H sum|x||w|; dZ follows from them and from the
// cross-entropy's own roundings (day 48); dX and dW are dot products of dZ with W and X: gamma_K
// sum|a||b| plus what dZ's errors carry through sum|dZ err||b|.
struct Reference {
  double loss = 0, loss_bound = 0;
  std::vector<double> dx, dx_bound, dw, dw_bound;
};

// The rounding steps of mean_loss's fp32 sum: n / 256 sequential additions per thread, 8 levels
// of the tree, and the product with 1 / n_valid.
double mean_loss_steps(int64_t n) { return double(n) / kRowBlock + 10.0; }

// One non-ignored row r of the reference: its loss lse - z_t, dZ_r and their error bounds (not
// yet doubled). Everything about a row of Z is local to the row: the full reference and the
// sampled one (rows of it) both take their rows from here.
struct RowReference {
  double loss = 0, loss_err = 0;
  std::vector<double> g, eg;  // dZ_r and its error bound, V entries
};

RowReference reference_row(const Problem& p, int64_t r, double inv) {
  const int64_t h = p.h, v = p.v;
  const int32_t t = p.t[size_t(r)];
  const double ce_steps = double(gpu100::ceil_div<int64_t>(v, kRowBlock)) + 14.0;
  std::vector<double> z(static_cast<size_t>(v)), ez(static_cast<size_t>(v));
  RowReference row{0, 0, std::vector<double>(size_t(v)), std::vector<double>(size_t(v))};
  const float* xr = p.x.data() + r * h;
  double m = -INFINITY, emax = 0;
  for (int64_t j = 0; j < v; ++j) {
    const float* wj = p.w.data() + j * h;
    double d = 0, a = 0;
    for (int64_t k = 0; k < h; ++k) {
      d += double(xr[k]) * double(wj[k]);
      a += std::fabs(double(xr[k]) * double(wj[k]));
    }
    z[size_t(j)] = d;
    ez[size_t(j)] = double(h) * kU * a;
    m = std::max(m, d);
    emax = std::max(emax, ez[size_t(j)]);
  }
  double s = 0, dmax = 0;
  for (int64_t j = 0; j < v; ++j) {
    s += std::exp(z[size_t(j)] - m);
    dmax = std::max(dmax, m - z[size_t(j)]);
  }
  const double lse = m + std::log(s);
  // lse: the logits' errors (at most emax each) and day 48's roundings of the fp32 kernel.
  const double e_lse =
      emax + (4.0 * ce_steps + 8.0 + dmax) * kU + kU * (std::fabs(lse - m) + std::fabs(lse));
  row.loss = lse - z[size_t(t)];
  row.loss_err =
      e_lse + ez[size_t(t)] + kU * (std::fabs(lse - z[size_t(t)]) + std::fabs(z[size_t(t)]));
  for (int64_t j = 0; j < v; ++j) {
    const double pj = std::exp(z[size_t(j)] - lse);
    row.g[size_t(j)] = inv * (pj - (j == t ? 1.0 : 0.0));
    row.eg[size_t(j)] =
        inv * pj * (e_lse + ez[size_t(j)] + kU * (std::fabs(z[size_t(j)] - lse) + 4.0)) +
        3.0 * kU * std::fabs(row.g[size_t(j)]) + inv * 0x1p-126;
  }
  return row;
}

double inverse_valid(const Problem& p) {
  int64_t valid = 0;
  for (int32_t t : p.t) valid += t != kIgnoreIndex;
  return valid ? 1.0 / double(valid) : 0.0;
}

// dX row r = dZ_r W (K = V) and its bound (not yet doubled), accumulated into dx and bound.
void add_dx_row(const Problem& p, const RowReference& row, double* dx, double* bound) {
  for (int64_t j = 0; j < p.v; ++j) {
    const float* wj = p.w.data() + j * p.h;
    const double g = row.g[size_t(j)], e = row.eg[size_t(j)];
    for (int64_t k = 0; k < p.h; ++k) {
      dx[k] += g * double(wj[k]);
      bound[k] += (double(p.v) * kU * std::fabs(g) + e) * std::fabs(double(wj[k]));
    }
  }
}

Reference reference(const Problem& p) {
  const int64_t n = p.n, h = p.h, v = p.v;
  Reference ref;
  ref.dx.assign(size_t(n * h), 0.0);
  ref.dx_bound.assign(size_t(n * h), 0.0);
  ref.dw.assign(size_t(v * h), 0.0);
  ref.dw_bound.assign(size_t(v * h), 0.0);
  const double inv = inverse_valid(p);
  double loss_sum = 0, loss_err = 0;
  for (int64_t r = 0; r < n; ++r) {
    if (p.t[size_t(r)] == kIgnoreIndex) continue;  // dZ row exactly 0: contributes nothing
    const RowReference row = reference_row(p, r, inv);
    loss_sum += row.loss;
    loss_err += row.loss_err;
    add_dx_row(p, row, ref.dx.data() + r * h, ref.dx_bound.data() + r * h);
    // dW += dZ_r^T x_r (K = N, one term per row).
    const float* xr = p.x.data() + r * h;
    for (int64_t j = 0; j < v; ++j) {
      const double g = row.g[size_t(j)], e = row.eg[size_t(j)];
      double* dwj = ref.dw.data() + j * h;
      double* bwj = ref.dw_bound.data() + j * h;
      for (int64_t k = 0; k < h; ++k) {
        dwj[k] += g * double(xr[k]);
        bwj[k] += (double(n) * kU * std::fabs(g) + e) * std::fabs(double(xr[k]));
      }
    }
  }
  for (double& b : ref.dx_bound) b *= 2.0;
  for (double& b : ref.dw_bound) b *= 2.0;
  ref.loss = loss_sum * inv;
  // The sum of the row losses: all >= 0, so their sum's roundings are relative to the loss.
  ref.loss_bound = 2.0 * (inv * loss_err + mean_loss_steps(n) * kU * std::fabs(ref.loss));
  return ref;
}

// ---- kernels: the tiled GEMM --------------------------------------------------------------------
// C (M x N, row-major, ldc) = A B, or C += A B when `accumulate`. A_KMAJOR: A(m, k) = A[m lda + k]
// (k contiguous), else A[k lda + m]; B_KMAJOR: B(k, n) = B[n ldb + k], else B[k ldb + n]. Tiles
// are loaded so that neighbouring threads read neighbouring addresses in either layout. Each
// output is one fma chain over k in order, started from 0 or from C's stored value: a chunked
// sum over k continues the same chain, and zero-padded k beyond K adds exact zeros.
template <bool A_KMAJOR, bool B_KMAJOR>
__global__ void __launch_bounds__(kGemmThreads)
    gemm_tiled(int M, int N, int K, const float* __restrict__ A, int lda,
               const float* __restrict__ B, int ldb, float* __restrict__ C, int ldc,
               bool accumulate) {
  // +2: a warp of k-major loads stores 16 k by 2 m; a row stride of 2 mod 32 banks keeps them apart
  __shared__ float As[kBK][kBM + 2];
  __shared__ float Bs[kBK][kBN + 2];
  const int tid = int(threadIdx.x), tx = tid % 16, ty = tid / 16;
  const int m0 = int(blockIdx.y) * kBM, n0 = int(blockIdx.x) * kBN;
  // This block's corner of C; every offset inside a tile fits in 32 bits (the launcher checks
  // that M ldc, K lda and so on stay below 2^31).
  float* Cb = C + int64_t(m0) * ldc + n0;
  float acc[4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
      acc[i][j] = accumulate && m < M && n < N ? Cb[(ty + 16 * i) * ldc + tx + 16 * j] : 0.0f;
    }
  for (int k0 = 0; k0 < K; k0 += kBK) {
#pragma unroll
    for (int l = 0; l < kBM * kBK / kGemmThreads; ++l) {
      const int idx = tid + l * kGemmThreads;
      const int mm = A_KMAJOR ? idx / kBK : idx % kBM, kk = A_KMAJOR ? idx % kBK : idx / kBM;
      const int m = m0 + mm, k = k0 + kk;
      As[kk][mm] = m < M && k < K ? (A_KMAJOR ? A[m * lda + k] : A[k * lda + m]) : 0.0f;
      const int nn = B_KMAJOR ? idx / kBK : idx % kBN, kb = B_KMAJOR ? idx % kBK : idx / kBN;
      const int n = n0 + nn, kn = k0 + kb;
      Bs[kb][nn] = n < N && kn < K ? (B_KMAJOR ? B[n * ldb + kn] : B[kn * ldb + n]) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = As[kk][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = Bs[kk][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();  // before the next tile overwrites As and Bs
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
      if (m < M && n < N) Cb[(ty + 16 * i) * ldc + tx + 16 * j] = acc[i][j];
    }
}

// ---- kernels: cross-entropy rows, in place ------------------------------------------------------
struct MaxSum {
  float m, s;  // s * exp(m); empty: (-inf, 0)
};
__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
  if (a.m == -INFINITY) return b;
  if (b.m == -INFINITY) return a;
  const float m = fmaxf(a.m, b.m);
  return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}
__device__ __forceinline__ MaxSum push(MaxSum a, float x) {
  if (x <= a.m) return {a.m, a.s + expf(x - a.m)};
  return {x, a.s * expf(a.m - x) + 1.0f};
}

// Row r of z (logits in, dZ out): loss_rows[r] = lse - z[t] (0 if ignored), z = (softmax - onehot)
// * inv_count. One block per row; z[t] is read before the barrier that precedes the writes.
__global__ void __launch_bounds__(kRowBlock)
    ce_rows(float* __restrict__ z, const int32_t* __restrict__ t,
            const float* __restrict__ inv_count, float* __restrict__ loss_rows, int64_t v) {
  __shared__ MaxSum warp_pairs[kRowBlock / 32];
  __shared__ MaxSum total;
  const int64_t r = blockIdx.x;
  float* zr = z + r * v;
  const int32_t target = t[r];
  if (target == kIgnoreIndex) {
    for (int64_t i = threadIdx.x; i < v; i += kRowBlock) zr[i] = 0.0f;
    if (threadIdx.x == 0) loss_rows[r] = 0.0f;
    return;
  }
  const float zt = threadIdx.x == 0 ? zr[target] : 0.0f;
  MaxSum p{-INFINITY, 0.0f};
  for (int64_t i = threadIdx.x; i < v; i += kRowBlock) p = push(p, zr[i]);
#pragma unroll
  for (int k = 16; k > 0; k >>= 1)
    p = merge(p, {__shfl_xor_sync(0xffffffffu, p.m, k), __shfl_xor_sync(0xffffffffu, p.s, k)});
  const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
  if (lane == 0) warp_pairs[warp] = p;
  __syncthreads();
  if (warp == 0) {
    p = lane < kRowBlock / 32 ? warp_pairs[lane] : MaxSum{-INFINITY, 0.0f};
#pragma unroll
    for (int k = 16; k > 0; k >>= 1)
      p = merge(p, {__shfl_xor_sync(0xffffffffu, p.m, k), __shfl_xor_sync(0xffffffffu, p.s, k)});
    if (lane == 0) total = p;
  }
  __syncthreads();
  const float lse = total.m + logf(total.s);
  const float inv = *inv_count;
  if (threadIdx.x == 0) loss_rows[r] = lse - zt;
  for (int64_t i = threadIdx.x; i < v; i += kRowBlock) {
    const float pr = expf(zr[i] - lse);
    zr[i] = (i == target ? pr - 1.0f : pr) * inv;
  }
}

// One block: 1 / (rows whose target is not ignored), 0 when there are none.
__global__ void __launch_bounds__(kRowBlock)
    count_valid(const int32_t* __restrict__ t, int64_t n, float* __restrict__ inv_count) {
  __shared__ int64_t partial[kRowBlock];
  int64_t c = 0;
  for (int64_t r = threadIdx.x; r < n; r += kRowBlock) c += t[r] != kIgnoreIndex;
  partial[threadIdx.x] = c;
  __syncthreads();
  for (int s = kRowBlock / 2; s > 0; s >>= 1) {
    if (int(threadIdx.x) < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) *inv_count = partial[0] ? 1.0f / float(partial[0]) : 0.0f;
}

// One block: loss = inv_count * sum of the row losses, in a fixed order.
__global__ void __launch_bounds__(kRowBlock)
    mean_loss(const float* __restrict__ loss_rows, int64_t n, const float* __restrict__ inv_count,
              float* __restrict__ loss) {
  __shared__ float partial[kRowBlock];
  float s = 0.0f;
  for (int64_t r = threadIdx.x; r < n; r += kRowBlock) s += loss_rows[r];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int k = kRowBlock / 2; k > 0; k >>= 1) {
    if (int(threadIdx.x) < k) partial[threadIdx.x] += partial[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) *loss = partial[0] * *inv_count;
}

// ---- launchers ----------------------------------------------------------------------------------
// The buffers every path shares (inputs and outputs) and the ones each path allocates for itself
// (its logits buffer of `chunk` rows, the row losses, two scalars). A run and --alloc-only make
// them through these same two functions.
struct Io {
  gpu100::DeviceBuffer<float> x, w, dx, dw, loss;
  gpu100::DeviceBuffer<int32_t> t;
};
Io alloc_io(int64_t n, int64_t h, int64_t v) {
  return {gpu100::DeviceBuffer<float>(size_t(n * h)),
          gpu100::DeviceBuffer<float>(size_t(v * h)),
          gpu100::DeviceBuffer<float>(size_t(n * h)),
          gpu100::DeviceBuffer<float>(size_t(v * h)),
          gpu100::DeviceBuffer<float>(1),
          gpu100::DeviceBuffer<int32_t>(size_t(n))};
}

// What a path computed, copied back.
struct Outputs {
  std::vector<float> loss, dx, dw;
};
Outputs download(const Io& io) {
  return {io.loss.download(), io.dx.download(), io.dw.download()};
}

struct Workspace {
  int64_t chunk;
  gpu100::DeviceBuffer<float> z, loss_rows, inv_count;
};
Workspace alloc_workspace(int64_t chunk, int64_t n, int64_t v) {
  return {chunk, gpu100::DeviceBuffer<float>(size_t(chunk * v)),
          gpu100::DeviceBuffer<float>(size_t(n)), gpu100::DeviceBuffer<float>(1)};
}

struct Shape {
  int64_t n, h, v;
};

// One GEMM of the path; the two implementations below.
enum class Op { logits, dx, dw };  // Z_c = X_c W^T; dX_c = dZ_c W; dW (+)= dZ_c^T X_c

void gemm_own(Op op, const Shape& s, int64_t rows, const float* xc, const float* w, float* z,
              float* out, bool accumulate, cudaStream_t st) {
  auto grid = [](int64_t m, int64_t n) {
    return dim3(unsigned(gpu100::ceil_div<int64_t>(n, kBN)),
                unsigned(gpu100::ceil_div<int64_t>(m, kBM)));
  };
  const int r = int(rows), h = int(s.h), v = int(s.v);  // main keeps every product below 2^31
  switch (op) {
    case Op::logits:
      gemm_tiled<true, true>
          <<<grid(r, v), kGemmThreads, 0, st>>>(r, v, h, xc, h, w, h, z, v, false);
      break;
    case Op::dx:
      gemm_tiled<true, false>
          <<<grid(r, h), kGemmThreads, 0, st>>>(r, h, v, z, v, w, h, out, h, false);
      break;
    case Op::dw:
      gemm_tiled<false, false>
          <<<grid(v, h), kGemmThreads, 0, st>>>(v, h, r, z, v, xc, h, out, h, accumulate);
      break;
  }
  LAUNCH_CHECK();
}

// cuBLAS is column-major: a row-major M x N product C = A B is computed as C^T = B^T A^T.
void gemm_cublas(gpu100::CublasHandle& handle, Op op, const Shape& s, int64_t rows, const float* xc,
                 const float* w, float* z, float* out, bool accumulate, cudaStream_t st) {
  handle.set_stream(st);
  const float one = 1.0f, zero = 0.0f;
  const int n = int(rows), h = int(s.h), v = int(s.v);
  switch (op) {
    case Op::logits:  // Z_c^T (V x C) = W (V x H, i.e. W^T col-major) X_c^T
      CUBLAS_CHECK(
          cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, v, n, h, &one, w, h, xc, h, &zero, z, v));
      break;
    case Op::dx:  // dX_c^T (H x C) = W^T (H x V) dZ_c^T (V x C)
      CUBLAS_CHECK(
          cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, h, n, v, &one, w, h, z, v, &zero, out, h));
      break;
    case Op::dw:  // dW^T (H x V) (+)= X_c^T (H x C) dZ_c (C x V)
      CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, h, v, n, &one, xc, h, z, v,
                               accumulate ? &one : &zero, out, h));
      break;
  }
}

// The whole path: count the targets, then per chunk of rows the logits GEMM, the cross-entropy
// rows in place, the dX GEMM and the dW GEMM; the mean loss at the end. Unfused is one chunk.
template <class Gemm>
void run_path(Io& io, Workspace& ws, const Shape& s, Gemm gemm, cudaStream_t st) {
  count_valid<<<1, kRowBlock, 0, st>>>(io.t.data(), s.n, ws.inv_count.data());
  LAUNCH_CHECK();
  for (int64_t r0 = 0; r0 < s.n; r0 += ws.chunk) {
    const int64_t rows = std::min(ws.chunk, s.n - r0);
    const float* xc = io.x.data() + r0 * s.h;
    gemm(Op::logits, rows, xc, ws.z.data(), nullptr, false, st);
    ce_rows<<<unsigned(rows), kRowBlock, 0, st>>>(
        ws.z.data(), io.t.data() + r0, ws.inv_count.data(), ws.loss_rows.data() + r0, s.v);
    LAUNCH_CHECK();
    gemm(Op::dx, rows, xc, ws.z.data(), io.dx.data() + r0 * s.h, false, st);
    gemm(Op::dw, rows, xc, ws.z.data(), io.dw.data(), r0 > 0, st);
  }
  mean_loss<<<1, kRowBlock, 0, st>>>(ws.loss_rows.data(), s.n, ws.inv_count.data(), io.loss.data());
  LAUNCH_CHECK();
}

struct Version {
  const char* name;
  bool fused, cublas;
};
const Version kVersions[] = {
    {"unfused", false, false},
    {"fused", true, false},
    {"unfused_cublas", false, true},
    {"fused_cublas", true, true},
};

// Liger-Kernel's choice: about N H / V rows per chunk, so a chunk of logits is the size of X.
int64_t default_chunk(int64_t n, int64_t h, int64_t v) {
  return std::max<int64_t>(1, gpu100::ceil_div<int64_t>(n, gpu100::ceil_div<int64_t>(v, h)));
}

// ---- analysis: peak device memory ---------------------------------------------------------------
size_t device_used() {
  size_t free_bytes = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  return total - free_bytes;
}

struct Peak {
  double io = 0, path = 0;    // cudaMemGetInfo: after the inputs/outputs, at the high-water mark
  std::optional<double> emu;  // the emulator allocator's high-water mark, over the same span
  std::optional<Outputs> outputs;  // what the run computed (none with alloc_only)
};

// Allocates one path's inputs, outputs and workspace exactly as a run does; runs it once unless
// alloc_only; reads device memory in use after each step. Everything is freed again on return.
Peak measure_peak(const Problem* p, const Shape& s, int64_t chunk, bool alloc_only) {
  const size_t before = device_used();
  const auto emu_before = gpu100::emu_metrics_now();
  gpu100::EmuMetricsScope scope;
  Peak peak;
  {
    Io io = alloc_io(s.n, s.h, s.v);
    peak.io = double(device_used() - before);
    Workspace ws = alloc_workspace(chunk, s.n, s.v);
    size_t high = device_used();
    if (!alloc_only) {
      io.x.upload(p->x);
      io.w.upload(p->w);
      io.t.upload(p->t);
      run_path(
          io, ws, s,
          [&](Op op, int64_t rows, const float* xc, float* z, float* out, bool acc,
              cudaStream_t st) { gemm_own(op, s, rows, xc, io.w.data(), z, out, acc, st); },
          nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      high = std::max(high, device_used());
      peak.outputs = download(io);
    }
    peak.path = double(high - before);
  }
  if (const auto m = scope.take(); m && emu_before)
    peak.emu = double(m->device_bytes_peak) - double(emu_before->device_bytes_live);
  return peak;
}

gpu100::Table memory_table(const Peak& unfused, const Peak& fused, int64_t n, int64_t chunk,
                           bool alloc_only) {
  constexpr double kMiB = 1024.0 * 1024.0;
  gpu100::Table t{
      fmt::format("peak device memory, measured{}",
                  alloc_only ? " (allocation only: no kernel ran)" : " (allocations and one run)"),
      {"path", "rows per chunk", "inputs+outputs MiB", "peak MiB (cudaMemGetInfo)",
       "beyond inputs+outputs MiB", "peak MiB (emulator allocator)", "unfused / this",
       "unfused / this, beyond inputs+outputs"},
      {}};
  auto row = [&](const char* name, int64_t rows, const Peak& p) {
    t.add_row({name, rows, p.io / kMiB, p.path / kMiB, (p.path - p.io) / kMiB,
               p.emu ? gpu100::Cell(*p.emu / kMiB) : gpu100::Cell("-"),
               p.path > 0 ? unfused.path / p.path : 0.0,
               p.path > p.io ? (unfused.path - unfused.io) / (p.path - p.io) : 0.0});
  };
  row("unfused", n, unfused);
  row("fused", chunk, fused);
  return t;
}

// --alloc-only: the two paths' allocations alone, and whether fused needs less.
void report_alloc_only(gpu100::Report& report, const Shape& s, int64_t chunk) {
  const Peak unfused = measure_peak(nullptr, s, s.n, true),
             fused = measure_peak(nullptr, s, chunk, true);
  report.table(memory_table(unfused, fused, s.n, chunk, true));
  gpu100::CheckResult c;
  c.checked = true;
  c.pass = fused.path < unfused.path;
  c.tolerance = "fused peak below unfused peak";
  report.add_check("peak memory measured, fused below unfused", c);
}

// ---- analysis: the CPU backward against finite differences --------------------------------------
// 4 rows (one ignored), H = 3, V = 5: the loss as a function of X and W together.
gpu100::CheckResult gradient_check() {
  constexpr int64_t n = 4, h = 3, v = 5;
  Problem p = make_problem(n, h, v, 11);  // row 2 is ignored
  const Reference ref = reference(p);
  std::vector<double> in;
  for (float f : p.x) in.push_back(f);
  for (float f : p.w) in.push_back(f);
  auto forward = [&](const std::vector<double>& xw) {
    const std::vector<double> x(xw.begin(), xw.begin() + n * h), w(xw.begin() + n * h, xw.end());
    return std::vector<double>{loss_cpu(x, w, p.t, n, h, v)};
  };
  std::vector<double> grad(ref.dx);
  grad.insert(grad.end(), ref.dw.begin(), ref.dw.end());
  return gpu100::check_gradient(forward, in, {1.0}, grad);
}

// ---- the versions: each path's run and its check -----------------------------------------------
// Beyond the full reference's budget, the reference of some rows: every row of Z is local, so a
// sampled row's loss, dZ and dX are computed exactly as the full reference computes them, with
// the same bounds. A row of dW sums over every row of dZ: it is checked against the unfused
// path's own dZ (sampled rows of which are checked against the CPU) with the bound of its fp32
// dot product, and the loss against the path's own row losses with the bound of their mean.
struct SampledReference {
  std::vector<int64_t> rows;  // of X: the row losses, dZ and dX
  std::vector<double> row_loss, row_loss_bound, dz, dz_bound, dx, dx_bound;  // per sampled row
  std::vector<int64_t> dw_rows;  // of dW (vocabulary entries)
  double inv = 0;
};

constexpr int64_t kSampledSpread = 32;  // rows (and dW rows) spread evenly over the problem
constexpr int64_t kSampledRandom = 4;   // and seeded random ones beside them

// The first row of every chunk (at most kSampledSpread of them, evenly spread) and the last row,
// so a wrong chunk or a wrong partial last chunk shows, and kSampledRandom seeded random rows.
std::vector<int64_t> sample_indices(int64_t count, int64_t step, uint64_t seed) {
  std::vector<int64_t> out;
  const int64_t steps = gpu100::ceil_div<int64_t>(count, step);
  const int64_t every = gpu100::ceil_div<int64_t>(steps, kSampledSpread);
  for (int64_t c = 0; c < steps; c += every) out.push_back(c * step);
  out.push_back(count - 1);
  for (int32_t r : gpu100::random_ints(size_t(kSampledRandom), seed, 0, int32_t(count - 1)))
    out.push_back(r);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

SampledReference sampled_reference(const Problem& p, int64_t chunk, uint64_t seed) {
  const int64_t h = p.h, v = p.v;
  SampledReference ref;
  ref.inv = inverse_valid(p);
  ref.rows = sample_indices(p.n, chunk, seed + 3);
  ref.dw_rows = sample_indices(v, kBM, seed + 4);  // a row in each tile of dW's rows, as spread
  const size_t rows = ref.rows.size();
  ref.row_loss.assign(rows, 0.0);
  ref.row_loss_bound.assign(rows, 0.0);
  ref.dz.assign(rows * size_t(v), 0.0);
  ref.dz_bound.assign(rows * size_t(v), 0.0);
  ref.dx.assign(rows * size_t(h), 0.0);
  ref.dx_bound.assign(rows * size_t(h), 0.0);
  for (size_t i = 0; i < rows; ++i) {
    if (p.t[size_t(ref.rows[i])] == kIgnoreIndex) continue;  // all of it exactly 0
    const RowReference row = reference_row(p, ref.rows[i], ref.inv);
    ref.row_loss[i] = row.loss;
    ref.row_loss_bound[i] = 2.0 * row.loss_err;
    for (int64_t j = 0; j < v; ++j) {
      ref.dz[i * size_t(v) + size_t(j)] = row.g[size_t(j)];
      ref.dz_bound[i * size_t(v) + size_t(j)] = 2.0 * row.eg[size_t(j)];
    }
    add_dx_row(p, row, ref.dx.data() + i * size_t(h), ref.dx_bound.data() + i * size_t(h));
  }
  for (double& b : ref.dx_bound) b *= 2.0;
  return ref;
}

// What the unfused path leaves in its workspace: every row's loss and the whole dZ.
struct Intermediates {
  std::vector<float> loss_rows, dz;
};

gpu100::CheckResult check_sampled(const Problem& p, const Outputs& got, const Intermediates& mid,
                                  const SampledReference& ref) {
  const int64_t n = p.n, h = p.h, v = p.v;
  std::vector<double> row_loss, dz, dx;
  for (int64_t r : ref.rows) {
    row_loss.push_back(mid.loss_rows[size_t(r)]);
    dz.insert(dz.end(), mid.dz.begin() + r * v, mid.dz.begin() + (r + 1) * v);
    dx.insert(dx.end(), got.dx.begin() + r * h, got.dx.begin() + (r + 1) * h);
  }
  gpu100::CheckResult c =
      gpu100::compare_within(row_loss, ref.row_loss, ref.row_loss_bound, kBoundName);
  c = gpu100::combine(c, gpu100::compare_within(dz, ref.dz, ref.dz_bound, kBoundName));
  c = gpu100::combine(c, gpu100::compare_within(dx, ref.dx, ref.dx_bound, kBoundName));
  // The mean of the path's own row losses, and its fp32 sum's roundings.
  double loss_sum = 0;
  for (float l : mid.loss_rows) loss_sum += l;
  const double loss = loss_sum * ref.inv;
  c = gpu100::combine(c, gpu100::compare_within(got.loss, {loss},
                                                {2.0 * mean_loss_steps(n) * kU * std::fabs(loss)},
                                                kBoundName));
  // Rows of dW = dZ^T X from the path's own dZ: an fp32 dot product of N terms per entry.
  std::vector<double> dw, dw_ref, dw_bound;
  for (int64_t j : ref.dw_rows) {
    std::vector<double> sum(size_t(h), 0.0), abs(size_t(h), 0.0);
    for (int64_t r = 0; r < n; ++r) {
      const double g = mid.dz[size_t(r * v + j)];
      if (g == 0.0) continue;
      const float* xr = p.x.data() + r * h;
      for (int64_t k = 0; k < h; ++k) {
        sum[size_t(k)] += g * double(xr[k]);
        abs[size_t(k)] += std::fabs(g * double(xr[k]));
      }
    }
    dw.insert(dw.end(), got.dw.begin() + j * h, got.dw.begin() + (j + 1) * h);
    dw_ref.insert(dw_ref.end(), sum.begin(), sum.end());
    for (double a : abs) dw_bound.push_back(2.0 * double(n) * kU * a);
  }
  return gpu100::combine(c, gpu100::compare_within(dw, dw_ref, dw_bound, kBoundName));
}

// What the versions are checked against, all of it computed before any version runs.
struct Expected {
  std::optional<Reference> cpu;                // where N V H makes it affordable
  std::optional<SampledReference> sampled;     // where it does not
  std::optional<Outputs> unfused;  // the unfused path's own outputs, where unfused is selected
  gpu100::Tolerance cublas;        // cuBLAS against unfused, where there is no CPU reference
};

// The full CPU reference costs about 3 N V H double operations; beyond `full_max` (a few
// seconds' worth) only sampled rows of it are computed, about 3 V H each.
void cpu_reference(gpu100::Report& report, const Problem& p, int64_t chunk, uint64_t seed,
                   double full_max, Expected& e) {
  if (double(p.n) * double(p.v) * double(p.h) <= full_max) {
    e.cpu = reference(p);
    return;
  }
  e.sampled = sampled_reference(p, chunk, seed);
  report.note(fmt::format(
      "N V H > {:g}: CPU reference of {} sampled rows (their loss, dZ and dX) for unfused, and "
      "{} rows of dW against unfused's own dZ; fused is checked bit for bit against unfused, "
      "the cuBLAS paths against unfused within gpu100::gemm_tolerance of their longest dot "
      "product",
      full_max, e.sampled->rows.size(), e.sampled->dw_rows.size()));
}

gpu100::CheckResult check_cpu(const Outputs& got, const Reference& ref) {
  gpu100::CheckResult c =
      gpu100::compare_within(got.loss, {ref.loss}, {ref.loss_bound}, kBoundName);
  c = gpu100::combine(c, gpu100::compare_within(got.dx, ref.dx, ref.dx_bound, kBoundName));
  return gpu100::combine(c, gpu100::compare_within(got.dw, ref.dw, ref.dw_bound, kBoundName));
}

// Unfused is checked against the CPU (sampled: with its own intermediates); fused against the
// CPU and, bit for bit, against unfused; the cuBLAS paths against the CPU, or without it against
// unfused within a GEMM tolerance.
gpu100::CheckResult check_path(const Version& ver, const Problem& p, const Outputs& got,
                               const Intermediates* mid, const Expected& e) {
  gpu100::CheckResult c;
  if (e.cpu) c = check_cpu(got, *e.cpu);
  if (e.sampled && mid) c = check_sampled(p, got, *mid, *e.sampled);
  if (!e.unfused) return c;
  const Outputs& want = *e.unfused;
  if (ver.cublas && !e.cpu) {
    c = gpu100::compare(got.loss, want.loss, e.cublas);
    c = gpu100::combine(c, gpu100::compare(got.dx, want.dx, e.cublas));
    return gpu100::combine(c, gpu100::compare(got.dw, want.dw, e.cublas));
  }
  if (ver.cublas || !ver.fused) return c;
  // Same kernels, same fma chains: fused must equal unfused bit for bit.
  gpu100::CheckResult exact = gpu100::compare_exact(got.loss, want.loss);
  exact = gpu100::combine(exact, gpu100::compare_exact(got.dx, want.dx));
  exact = gpu100::combine(exact, gpu100::compare_exact(got.dw, want.dw));
  return e.cpu ? gpu100::combine(c, exact) : exact;
}

// The device side of one path: its inputs, outputs and workspace (unfused: all N rows).
struct Path {
  Io io;
  Workspace ws;
};
Path make_path(const Problem& p, int64_t chunk) {
  Path path{alloc_io(p.n, p.h, p.v), alloc_workspace(chunk, p.n, p.v)};
  path.io.x.upload(p.x);
  path.io.w.upload(p.w);
  path.io.t.upload(p.t);
  return path;
}

void launch_version(const Version& ver, Path& path, const Shape& s, gpu100::CublasHandle& handle,
                    cudaStream_t st) {
  const float* w = path.io.w.data();
  if (ver.cublas)
    run_path(
        path.io, path.ws, s,
        [&](Op op, int64_t rows, const float* xc, float* z, float* out, bool acc, cudaStream_t q) {
          gemm_cublas(handle, op, s, rows, xc, w, z, out, acc, q);
        },
        st);
  else
    run_path(
        path.io, path.ws, s,
        [&](Op op, int64_t rows, const float* xc, float* z, float* out, bool acc, cudaStream_t q) {
          gemm_own(op, s, rows, xc, w, z, out, acc, q);
        },
        st);
}

gpu100::Measure measure_version(const Version& ver, const Problem& p, Path& path, const Shape& s,
                                gpu100::CublasHandle& handle, const Expected& expected) {
  return {
      .name = ver.name,
      .launch = [&ver, &path, s,
                 &handle](cudaStream_t st) { launch_version(ver, path, s, handle, st); },
      .reset =
          [&path] {
            path.io.dx.poison();
            path.io.dw.poison();
            path.io.loss.poison();
            path.ws.z.poison();
          },
      .check =
          [&ver, &p, &path, &expected] {
            // Own unfused: its workspace holds every row's loss and dZ after the run.
            std::optional<Intermediates> mid;
            if (expected.sampled && !ver.fused && !ver.cublas)
              mid = Intermediates{path.ws.loss_rows.download(), path.ws.z.download()};
            return check_path(ver, p, download(path.io), mid ? &*mid : nullptr, expected);
          },
      .work = 3.0 * gpu100::gemm_flops(s.n, s.v, s.h),
      .role = ver.cublas && ver.fused ? gpu100::Role::baseline : gpu100::Role::version,
      .vendor = ver.cublas};
}

// On a GPU, fused's time beside unfused's; and how fused was checked when unfused did not run.
void note_fused(gpu100::Context& ctx, const Expected& expected, const gpu100::Measured& unfused,
                const gpu100::Measured& fused) {
  if (!ctx.device().emulated && unfused.ran && fused.ran && unfused.time.median_ms > 0)
    ctx.report().note(fmt::format("fused / unfused time: {:.3f} (own GEMMs)",
                                  fused.time.median_ms / unfused.time.median_ms));
  if (!ctx.want("unfused") && ctx.want("fused"))
    ctx.report().note(expected.cpu
                          ? "fused ran without unfused: checked against the CPU only"
                          : "fused ran without unfused and without a CPU reference: not checked");
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("fused linear + cross-entropy forward and backward (loss, dX, dW) in row chunks");
  int64_t n = 8192, h = 1024, v = 32768;
  int chunk_arg = 0;
  bool alloc_only = false;
  // Tiles of 64 rows of either operand go along gridDim.y (at most 65535): 4194240 rows at most.
  constexpr int64_t kMaxRows = int64_t(65535) * kBM;
  cli.size("tokens", n, 67, "rows of X (B*T)", kMaxRows);
  cli.size("hidden", h, 33, "columns of X and W (H)", kMaxRows);
  cli.size("vocab", v, 129, "rows of W (V)", kMaxRows);
  cli.option("chunk", chunk_arg, "rows per chunk of the fused paths (0: about N H / V)", 0,
             1 << 24);
  double full_reference_max = kFullReferenceMax;
  cli.option("full-reference-max", full_reference_max,
             "N V H beyond which the CPU reference is computed for sampled rows only", 0, 1e18);
  cli.flag("alloc-only", alloc_only,
           "measure each path's peak memory from its allocations alone, no kernels");
  cli.kernels_of(kVersions);
  cli.validate([&]() -> std::string {
    if (n * v > INT32_MAX || n * h > INT32_MAX || v * h > INT32_MAX)
      return "tokens x vocab, tokens x hidden and vocab x hidden must each stay below 2^31 "
             "(cuBLAS's int sizes)";
    return "";
  });
  cli.device_bytes([&] {  // both paths' inputs and outputs, the full logits and a chunk of them
    return 4.0 * (4.0 * double(n) * double(h) + 4.0 * double(v) * double(h) +
                  2.0 * double(n) * double(v) + 4.0 * double(n));
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("TFLOP/s");
    report.limit("fp32_tflops", ctx.device().peak_fp32_tflops(), "FP32 peak");
    const int64_t chunk = chunk_arg > 0 ? std::min<int64_t>(chunk_arg, n) : default_chunk(n, h, v);
    report.problem("chunk_rows", double(chunk));
    const Shape s{n, h, v};
    if (alloc_only) return report_alloc_only(report, s, chunk);

    report.add_check("reference gradient (finite differences)", gradient_check());
    const Problem p = make_problem(n, h, v, ctx.seed());
    Expected expected{.cublas = gpu100::gemm_tolerance(std::max(n, v))};
    cpu_reference(report, p, chunk, ctx.seed(), full_reference_max, expected);
    // Each own path run once for its peak memory; the unfused run's outputs are what fused must
    // reproduce bit for bit.
    const Peak unf_peak = measure_peak(&p, s, n, false),
               fus_peak = measure_peak(&p, s, chunk, false);
    if (ctx.want("unfused")) expected.unfused = unf_peak.outputs;

    Path unfused = make_path(p, n), fused = make_path(p, chunk);
    gpu100::CublasHandle handle;
    std::vector<gpu100::Measure> runs;
    for (const Version& ver : kVersions)
      runs.push_back(measure_version(ver, p, ver.fused ? fused : unfused, s, handle, expected));
    const auto measured = ctx.measure_all(runs);

    report.table(memory_table(unf_peak, fus_peak, n, chunk, false));
    note_fused(ctx, expected, gpu100::measured_of("unfused", runs, measured),
               gpu100::measured_of("fused", runs, measured));
  });
}
