// Day 067 - FP8 GEMM with block scales and fp32 promotion every 128 of K (the DeepSeek-V3 recipe)
//
// Day 066 gave each tensor one scale and let the tensor cores accumulate all of K. Two things go
// wrong at scale, and this day measures both:
//  * Range. One outlier row (a token with large activations) sets the scale of the whole tensor,
//    and every small row falls into e4m3's subnormals or to zero. Block scales bound the damage:
//    one scale per row per 128 of K for the activations (1 x 128), one per 128 x 128 block for the
//    weights: C[i][j] = sum over K blocks b of s_a[i][b] s_w[j/128][b] (q_a q_w over block b).
//  * Accumulation. The fp8 mma's fp32 accumulator is not a full fp32 adder on Hopper: the products
//    are aligned to the largest addend and about 14 bits are kept (DeepSeek-V3 report), so a long K
//    loses the small products of its late steps. The fix is to accumulate only 128 of K in the
//    tensor core, then add that partial to an fp32 sum on the CUDA cores ("promotion") and start
//    again from zero. Block scales need exactly this: the scale of block b is applied at its
//    promotion, s_a s_w * partial, outside the tensor-core accumulation.
//
// Versions (one e4m3 kernel template: day 066's e4m3_mma - 128 x 128 tiles of 64-byte K slices,
// swizzled shared memory, ldmatrix, cp.async, mma.sync m16n8k32 - with a scaling policy)
//   all_k      per-tensor scales, all of K accumulated in the tensor core (day 066)
//   promoted   per-tensor scales, the mma accumulator added to an fp32 sum every 128 of K
//              (two slices) and reset: the same operands as all_k, only the accumulation differs
//   blockwise  1 x 128 activation and 128 x 128 weight scales, promoted every 128 of K with
//              sum += (s_a s_w) * partial: one weight scale per block tile (128 columns), one
//              activation scale per row, read at each promotion
// The quantization (per tensor as day 066; per block: a warp per 1 x 128 row block, a block of
// threads per 128 x 128 weight block) is checked bit for bit against the CPU.
// Baseline: cuBLASLt fp8 with per-tensor scales (day 066's call). And cublaslt_blockwise:
// cuBLASLt's own block scaling on the blockwise operands (CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F
// for A, BLK128x128_32F for W; cuBLAS 12.9+, Hopper only), checked like blockwise. Its scale
// layouts are PyTorch's (scaled_mm hands cuBLASLt the same tensors); they have not been tried on a
// GPU yet.
//
// Check: every entry at --quick (sampled beyond) against a double GEMM of each version's own
// dequantized operands, within a per-entry bound derived as in day 066: each mma of 32 products may
// add sum min(|x|, 2^(1-p) max|x|) over its addends + 2^-23 (|c| + sum|p|) for a tensor core
// keeping p bits (--mma-bits, default 13; 24 = fp32 rounded), starting from zero at each promotion
// for the promoted versions, plus the promotion's own fp32 roundings (the scale product and the
// fused multiply-add). all_k's bound grows with the number of mma steps times the partial sums'
// size (with K^2 for same-sign products); a promoted version's only with the number of 128-blocks.
// The lesson, in numbers (table "accumulation"): each version's largest error against max |C|,
// against its own bound and against the bound promotion guarantees. Under the emulator the
// accumulation is whatever GPU100_EMU_MMA_ACCUM models (default exact: the sum of products and
// accumulator rounded once to fp32, where the versions barely differ; truncate:14 models Hopper's,
// where all_k leaves promotion's bound far behind on long K).
//
// Run:  build/bin/day067 [--m 4096 --n 4096 --k 4096] [--kernel blockwise] [--mma-bits 14]
//       build/bin/day067 --m 40 --n 24 --k 4096 --mean 1 --mma-bits 14   (a long K: the lesson)
#include <cublasLt.h>
#include <cuda_fp8.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"

namespace {

constexpr int64_t kMaxDim = int64_t(1) << 30;  // indices + a tile offset stay inside int
constexpr float kE4M3Max = 448.0f;
constexpr int kBlock = 128;      // the scale block: 128 of K (and 128 rows of W)
constexpr int kSliceBytes = 64;  // depth of a shared-memory slice: 64 e4m3
constexpr int kGroupM = 8;       // tile rows per group of the block numbering (L2 reuse)
constexpr size_t kLtWorkspaceBytes = size_t(32) << 20;

// ---- the e4m3 format (as day 066) ---------------------------------------------------------------
float e4m3_value(uint8_t bits) {
  const int e = (bits >> 3) & 15, m = bits & 7;
  if (e == 15 && m == 7) return NAN;
  const float mag = e == 0 ? std::ldexp(float(m), -9) : std::ldexp(float(8 + m), e - 10);
  return bits & 0x80 ? -mag : mag;
}

// Round to nearest even with saturation at 448 (cvt.rn.satfinite): rint in units of the binade's
// spacing 2^(e-3) (2^-9 for the subnormals).
uint8_t e4m3_round(float x) {
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const double a = std::fabs(double(x));
  if (a >= double(kE4M3Max)) return sign | 0x7E;
  int e = 0;
  std::frexp(a, &e);
  const int step_exp = std::max(e - 1, -6) - 3;
  const double r = std::nearbyint(std::ldexp(a, -step_exp));
  if (r == 0) return sign;
  const double v = std::ldexp(r, step_exp);
  if (v >= double(kE4M3Max)) return sign | 0x7E;
  int ve = 0;
  std::frexp(v, &ve);
  if (ve - 1 < -6) return sign | uint8_t(r);
  const int mant = int(std::ldexp(v, -(ve - 1)) * 8.0) - 8;
  return sign | uint8_t(((ve - 1 + 7) << 3) | mant);
}

// ---- CPU reference: quantization ----------------------------------------------------------------
// One group of values with one scale: amax over the group, scale 448 / amax, dequantization scale
// amax / 448 (1 for an all-zero group), q = e4m3(x * scale): the GPU's arithmetic, bit for bit.
float quant_scale(float amax) {
  return amax > 0 ? kE4M3Max / amax : 1.0f;
}
float dequant_scale(float amax) {
  return amax > 0 ? amax / kE4M3Max : 1.0f;
}

struct Quantized {
  std::vector<uint8_t> q;
  std::vector<float> dequant;  // per tensor: one; per block: one per block, row-major by block
};

Quantized quantize_tensor_cpu(const std::vector<float>& x) {
  float amax = 0;
  for (float v : x) amax = std::max(amax, std::fabs(v));
  Quantized r{std::vector<uint8_t>(x.size()), {dequant_scale(amax)}};
  const float scale = quant_scale(amax);
  for (size_t i = 0; i < x.size(); ++i) r.q[i] = e4m3_round(x[i] * scale);
  return r;
}

// rows x k, one scale per block of `block_rows` rows and 128 of K (1 for activations, 128 for
// weights); the scales are [row block][K block].
Quantized quantize_blocks_cpu(const std::vector<float>& x, int64_t rows, int64_t k,
                              int block_rows) {
  const int64_t kb_count = (k + kBlock - 1) / kBlock;
  const int64_t rb_count = (rows + block_rows - 1) / block_rows;
  Quantized r{std::vector<uint8_t>(x.size()), std::vector<float>(size_t(rb_count * kb_count))};
  for (int64_t rb = 0; rb < rb_count; ++rb)
    for (int64_t kb = 0; kb < kb_count; ++kb) {
      const int64_t r0 = rb * block_rows, r1 = std::min(rows, r0 + block_rows);
      const int64_t k0 = kb * kBlock, k1 = std::min(k, k0 + kBlock);
      float amax = 0;
      for (int64_t i = r0; i < r1; ++i)
        for (int64_t j = k0; j < k1; ++j) amax = std::max(amax, std::fabs(x[size_t(i * k + j)]));
      const float scale = quant_scale(amax);
      r.dequant[size_t(rb * kb_count + kb)] = dequant_scale(amax);
      for (int64_t i = r0; i < r1; ++i)
        for (int64_t j = k0; j < k1; ++j)
          r.q[size_t(i * k + j)] = e4m3_round(x[size_t(i * k + j)] * scale);
    }
  return r;
}

// ---- CPU reference: the product and its error bound ---------------------------------------------
// The error one mma may add to an accumulator of magnitude <= c_abs (day 066's model): the
// addends aligned to the largest and cut to p bits, then the fp32 result rounded either way.
double mma_error_bound(double c_abs, const double* p, int count, int bits) {
  double sum_abs = 0, max_abs = c_abs;
  for (int i = 0; i < count; ++i) {
    sum_abs += std::fabs(p[i]);
    max_abs = std::max(max_abs, std::fabs(p[i]));
  }
  double bound = std::ldexp(c_abs + sum_abs, -23);
  if (bits < 24) {
    const double ulp = std::ldexp(max_abs, 1 - bits);
    bound += std::min(c_abs, ulp);
    for (int i = 0; i < count; ++i) bound += std::min(std::fabs(p[i]), ulp);
  }
  return bound;
}

struct Entry {
  double ref, bound;
};

// How an entry is accumulated: promoted every 128 of K or not, each 128-block's partial times
// block_scale[b] at its promotion (all 1 with per-tensor scales), and the result times
// `epilogue_scale` (d_a d_w with per-tensor scales, 1 with block scales).
struct Scheme {
  bool promote;
  const double* block_scale;
  double epilogue_scale;
  int bits;
};

// C[i][j] in double from the e4m3 bytes of row i of A and row j of W, and the bound on how far
// the scheme's fp32 result may be from it. The exact partial sums stand in for the computed ones,
// plus the error bound so far (the computed value is within it).
Entry entry_of(const uint8_t* qa, const uint8_t* qw, int64_t k, const Scheme& s) {
  double total = 0, total_err = 0, total_abs = 0, chunk = 0, chunk_err = 0, chunk_abs = 0;
  double p[32];
  for (int64_t k0 = 0; k0 < k; k0 += 32) {
    const int count = int(std::min<int64_t>(32, k - k0));
    double step = 0;
    for (int t = 0; t < count; ++t) {
      p[t] = double(e4m3_value(qa[k0 + t])) * double(e4m3_value(qw[k0 + t]));
      step += p[t];
      chunk_abs += std::fabs(p[t]);
    }
    chunk_err += mma_error_bound(std::fabs(chunk) + chunk_err, p, count, s.bits);
    chunk += step;
    const bool block_end = (k0 + 32) % kBlock == 0 || k0 + 32 >= k;
    if (s.promote && block_end) {
      const double f = std::fabs(s.block_scale[k0 / kBlock]);
      const double part = chunk * s.block_scale[k0 / kBlock], part_err = chunk_err * f;
      // sum = fma(fl(s_a s_w), partial, sum): the scale product rounds once relative to the
      // partial, the fused multiply-add once relative to the new sum.
      const double promotion = std::ldexp(std::fabs(part) + part_err, -24) +
                               std::ldexp(std::fabs(total + part) + total_err + part_err, -24);
      total += part;
      total_err += part_err + promotion;
      total_abs += chunk_abs * f;
      chunk = chunk_err = chunk_abs = 0;
    }
  }
  if (!s.promote) {
    total = chunk;
    total_err = chunk_err;
    total_abs = chunk_abs;
  }
  // Epilogue: fl(fl(d_a d_w) * sum), two roundings (none with block scales: the sum is stored);
  // and the double reference's own k roundings of at most 2^-53 of the running sum.
  const double epilogue =
      s.epilogue_scale != 1.0 ? std::ldexp(std::fabs(total) + total_err, -23) : 0.0;
  const double reference = double(k) * std::ldexp(total_abs, -53);
  return {total * s.epilogue_scale,
          (total_err + epilogue + reference) * std::fabs(s.epilogue_scale)};
}

// ---- kernels: quantization ----------------------------------------------------------------------
constexpr int kQuantBlock = 256;

__device__ __forceinline__ float warp_max(float m) {
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  return m;
}

// The max over a block of kQuantBlock threads, returned to every thread.
__device__ __forceinline__ float block_max(float m) {
  __shared__ float partial[kQuantBlock / 32];
  __shared__ float result;
  m = warp_max(m);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x < 32) {
    m = warp_max(threadIdx.x < kQuantBlock / 32 ? partial[threadIdx.x] : 0.0f);
    if (threadIdx.x == 0) result = m;
  }
  __syncthreads();
  return result;
}

__device__ __forceinline__ float quant_scale_dev(float amax) {
  return amax > 0.0f ? kE4M3Max / amax : 1.0f;
}
__device__ __forceinline__ float dequant_scale_dev(float amax) {
  return amax > 0.0f ? amax / kE4M3Max : 1.0f;
}

// Per tensor (day 066): absmax by a grid-stride max and one atomicMax per block (non-negative
// floats order like their bits), then the scaled conversion.
__global__ void __launch_bounds__(kQuantBlock)
    absmax_kernel(const float* __restrict__ x, int64_t n, unsigned* __restrict__ amax_bits) {
  float m = 0.0f;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    m = fmaxf(m, fabsf(x[i]));
  m = block_max(m);
  if (threadIdx.x == 0) atomicMax(amax_bits, __float_as_uint(m));
}

__global__ void __launch_bounds__(kQuantBlock)
    quantize_tensor_kernel(const float* __restrict__ x, int64_t n,
                           const unsigned* __restrict__ amax_bits, __nv_fp8_e4m3* __restrict__ q,
                           float* __restrict__ dequant) {
  const float amax = __uint_as_float(*amax_bits);
  const float scale = quant_scale_dev(amax);
  if (blockIdx.x == 0 && threadIdx.x == 0) *dequant = dequant_scale_dev(amax);
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    q[i] = __nv_fp8_e4m3(x[i] * scale);
}

// 1 x 128 blocks of the activations: one warp per (row, K block), 4 elements per lane, strided so
// that the warp reads 128 consecutive floats. Scales [row][K block].
__global__ void __launch_bounds__(kQuantBlock)
    quantize_rows_kernel(const float* __restrict__ x, int64_t rows, int64_t k, int64_t kb_count,
                         __nv_fp8_e4m3* __restrict__ q, float* __restrict__ dequant) {
  const int64_t warp = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= rows * kb_count) return;  // whole warps: no shuffle below loses a partner
  const int64_t row = warp / kb_count, k0 = (warp % kb_count) * kBlock;
  const float* src = x + row * k;
  float v[kBlock / 32];
  float m = 0.0f;
#pragma unroll
  for (int j = 0; j < kBlock / 32; ++j) {
    const int64_t c = k0 + lane + 32 * j;
    v[j] = c < k ? src[c] : 0.0f;
    m = fmaxf(m, fabsf(v[j]));
  }
  const float amax = warp_max(m), scale = quant_scale_dev(amax);
#pragma unroll
  for (int j = 0; j < kBlock / 32; ++j) {
    const int64_t c = k0 + lane + 32 * j;
    if (c < k) q[row * k + c] = __nv_fp8_e4m3(v[j] * scale);
  }
  if (lane == 0) dequant[warp] = dequant_scale_dev(amax);
}

// 128 x 128 blocks of the weights: one block of threads per (row block, K block), each thread 64
// elements (two passes over global memory: the max, then the conversion). Scales [row block][K
// block].
__global__ void __launch_bounds__(kQuantBlock)
    quantize_tiles_kernel(const float* __restrict__ x, int64_t rows, int64_t k, int64_t kb_count,
                          __nv_fp8_e4m3* __restrict__ q, float* __restrict__ dequant) {
  const int64_t rb = blockIdx.x / kb_count, kb = blockIdx.x % kb_count;
  const int64_t r0 = rb * kBlock, k0 = kb * kBlock;
  float m = 0.0f;
  for (int e = threadIdx.x; e < kBlock * kBlock; e += kQuantBlock) {
    const int64_t r = r0 + e / kBlock, c = k0 + e % kBlock;
    if (r < rows && c < k) m = fmaxf(m, fabsf(x[r * k + c]));
  }
  const float amax = block_max(m), scale = quant_scale_dev(amax);
  for (int e = threadIdx.x; e < kBlock * kBlock; e += kQuantBlock) {
    const int64_t r = r0 + e / kBlock, c = k0 + e % kBlock;
    if (r < rows && c < k) q[r * k + c] = __nv_fp8_e4m3(x[r * k + c] * scale);
  }
  if (threadIdx.x == 0) dequant[blockIdx.x] = dequant_scale_dev(amax);
}

// ---- kernels: the PTX, one wrapper per instruction (as day 066) ---------------------------------
// The fp8 mma exists from sm_89; built for sm_80 the wrapper traps, and the program skips there.
__device__ __forceinline__ uint32_t shared_addr(const void* p) {
  return uint32_t(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
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

__device__ __forceinline__ void mma_e4m3(float (&d)[4], const uint32_t (&a)[4],
                                         const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  __trap();
#endif
}

// ---- kernels: the GEMM --------------------------------------------------------------------------
enum class Scaling { tensor_all_k, tensor_promoted, blockwise };

// Day 066's 128 x 128 x 64-byte block tiles and 8 warps of 64 x 32. The promoted versions keep a
// second set of accumulators, the fp32 sums, beside the mma's; both still fit in registers.
constexpr int kBM = 128, kBN = 128, kWarpsM = 2, kWarpsN = 4, kStages = 4;
constexpr int kThreads = 32 * kWarpsM * kWarpsN;
constexpr int kWM = kBM / kWarpsM, kWN = kBN / kWarpsN;
constexpr int kMT = kWM / 16, kNT = kWN / 8;
constexpr int kChunksPerRow = kSliceBytes / 16;
constexpr int kChunksA = kBM * kChunksPerRow / kThreads, kChunksB = kBN * kChunksPerRow / kThreads;
constexpr int kABytes = kBM * kSliceBytes, kStageBytes = (kBM + kBN) * kSliceBytes;
constexpr int kSmemBytes = kStages * kStageBytes;
constexpr int kSlicesPerBlock = kBlock / kSliceBytes;  // slices between promotions
static_assert(kChunksA * kThreads == kBM * kChunksPerRow &&
                  kChunksB * kThreads == kBN * kChunksPerRow,
              "slices split evenly over the threads");
static_assert(kBN == kBlock, "a block tile's columns are one 128-row block of W: one weight scale");
static_assert(kWN % 16 == 0 && kWM % 16 == 0, "warp tile: whole m16 tiles, pairs of n8 tiles");

// Byte offset of 16-byte chunk `chunk` of row `row` in a tile of 64-byte rows, XOR-swizzled so
// that the 8 rows of an ldmatrix phase fall on 8 different 16-byte bank groups (day 066).
__host__ __device__ constexpr uint32_t tile_offset(int row, int chunk) {
  return uint32_t(row * kSliceBytes + 16 * (chunk ^ ((row >> 1) & 3)));
}

GPU100_HD inline void block_tile(int bid, int tiles_m, int tiles_n, int& tm, int& tn) {
  const int width = kGroupM * tiles_n;
  const int group = bid / width, first = group * kGroupM;
  const int rows = tiles_m - first < kGroupM ? tiles_m - first : kGroupM;
  const int in_group = bid - group * width;
  tm = first + in_group % rows;
  tn = in_group / rows;
}

// One 16-byte chunk (16 e4m3) of a row-major rows x cols byte matrix, zeros outside it. `vec`:
// cols % 16 == 0 and 16-byte aligned, so a chunk is wholly inside or outside (cp.async).
__device__ __forceinline__ void copy_chunk(uint32_t dst, const uint8_t* __restrict__ src, int row,
                                           int rows, int col, int cols, bool vec) {
  if (vec) {
    const bool inside = row < rows && col < cols;
    const uint8_t* p = inside ? src + (int64_t(row) * cols + col) : src;
    cp_async_16(dst, p, inside ? 16 : 0);
    return;
  }
  uint32_t w[4] = {0, 0, 0, 0};
  if (row < rows) {
    const uint8_t* p = src + int64_t(row) * cols;
#pragma unroll
    for (int e = 0; e < 16; ++e)
      if (col + e < cols) w[e / 4] |= uint32_t(p[col + e]) << (8 * (e % 4));
  }
  st_shared_16(dst, make_uint4(w[0], w[1], w[2], w[3]));
}

__device__ __forceinline__ void load_slice(uint32_t stage, const uint8_t* A, const uint8_t* W,
                                           int M, int N, int K, int m0, int n0, int k0, bool vec,
                                           int tid) {
#pragma unroll
  for (int i = 0; i < kChunksA; ++i) {
    const int id = tid + i * kThreads, row = id / kChunksPerRow, chunk = id % kChunksPerRow;
    copy_chunk(stage + tile_offset(row, chunk), A, m0 + row, M, k0 + chunk * 16, K, vec);
  }
#pragma unroll
  for (int i = 0; i < kChunksB; ++i) {
    const int id = tid + i * kThreads, row = id / kChunksPerRow, chunk = id % kChunksPerRow;
    copy_chunk(stage + kABytes + tile_offset(row, chunk), W, n0 + row, N, k0 + chunk * 16, K, vec);
  }
}

// What the scaling policies read: per-tensor d_a, d_w; or the block scales, activations
// [row][K block] and weights [row block][K block], with kb_count K blocks.
struct Scales {
  const float* tensor;  // [0] d_a, [1] d_w
  const float* rows;
  const float* tiles;
  int kb_count;
};

template <Scaling kScaling>
__global__ void __launch_bounds__(kThreads)
    gemm_fp8(const uint8_t* __restrict__ A, const uint8_t* __restrict__ W, Scales scales,
             float* __restrict__ C, int M, int N, int K, int tiles_m, int tiles_n, bool vec) {
  constexpr bool kPromote = kScaling != Scaling::tensor_all_k;
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t smem0 = shared_addr(smem);
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int g = lane / 4, t = lane % 4;
  int tm, tn;
  block_tile(int(blockIdx.x), tiles_m, tiles_n, tm, tn);
  const int m0 = tm * kBM, n0 = tn * kBN;
  const int wm0 = (warp / kWarpsN) * kWM, wn0 = (warp % kWarpsN) * kWN;

  float acc[kMT][kNT][4];  // the tensor core's accumulators
  float sum[kMT][kNT][4];  // the fp32 sums the promotions add into (promoted versions)
#pragma unroll
  for (int i = 0; i < kMT; ++i)
#pragma unroll
    for (int j = 0; j < kNT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = sum[i][j][e] = 0.0f;

  // Promotion of K block kb: sum += factor * acc on the CUDA cores, then acc = 0, so the tensor
  // core never accumulates more than 128 of K. With block scales the factor is s_a[row][kb] (one
  // per accumulator row: g and g + 8 of each m16 tile) times s_w[n block][kb].
  auto promote = [&](int kb) {
    float row_factor[kMT][2];
#pragma unroll
    for (int i = 0; i < kMT; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        row_factor[i][h] = 1.0f;
        if constexpr (kScaling == Scaling::blockwise) {
          const int row = m0 + wm0 + i * 16 + g + 8 * h;
          const float w_scale = scales.tiles[int64_t(tn) * scales.kb_count + kb];
          row_factor[i][h] =
              row < M ? scales.rows[int64_t(row) * scales.kb_count + kb] * w_scale : 0.0f;
        }
      }
#pragma unroll
    for (int i = 0; i < kMT; ++i)
#pragma unroll
      for (int j = 0; j < kNT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          sum[i][j][e] = fmaf(row_factor[i][e / 2], acc[i][j][e], sum[i][j][e]);
          acc[i][j][e] = 0.0f;
        }
  };

  uint32_t fa[2][kMT][4], fb[2][kNT][2];
  auto load_fragments = [&](int buf, uint32_t stage, int ks) {
#pragma unroll
    for (int i = 0; i < kMT; ++i)
      ldmatrix_x4(fa[buf][i], stage + tile_offset(wm0 + i * 16 + (lane & 15), ks * 2 + lane / 16));
#pragma unroll
    for (int j = 0; j < kNT; j += 2) {
      uint32_t r[4];
      ldmatrix_x4(
          r, stage + kABytes +
                 tile_offset(wn0 + j * 8 + (lane & 7) + (lane / 16) * 8, ks * 2 + (lane / 8) % 2));
      fb[buf][j][0] = r[0];
      fb[buf][j][1] = r[1];
      fb[buf][j + 1][0] = r[2];
      fb[buf][j + 1][1] = r[3];
    }
  };
  auto mma_step = [&](int buf) {
#pragma unroll
    for (int i = 0; i < kMT; ++i)
#pragma unroll
      for (int j = 0; j < kNT; ++j) mma_e4m3(acc[i][j], fa[buf][i], fb[buf][j]);
  };
  constexpr int kSteps = kSliceBytes / 32;

  // Day 066's multistage pipeline (one commit per slot, one barrier per slice).
  const int ktiles = (K + kSliceBytes - 1) / kSliceBytes;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < ktiles)
      load_slice(smem0 + s * kStageBytes, A, W, M, N, K, m0, n0, s * kSliceBytes, vec, tid);
    cp_async_commit();
  }
  cp_async_wait<kStages - 2>();
  __syncthreads();
  load_fragments(0, smem0, 0);
  for (int kt = 0; kt < ktiles; ++kt) {
    const int next = kt + kStages - 1;
    if (next < ktiles)
      load_slice(smem0 + (next % kStages) * kStageBytes, A, W, M, N, K, m0, n0, next * kSliceBytes,
                 vec, tid);
    cp_async_commit();
    const uint32_t stage = smem0 + (kt % kStages) * kStageBytes;
#pragma unroll
    for (int ks = 0; ks < kSteps; ++ks) {
      if (ks + 1 < kSteps) {
        load_fragments((ks + 1) & 1, stage, ks + 1);
      } else {
        cp_async_wait<kStages - 2>();
        __syncthreads();
        const int following = kt + 1 < ktiles ? kt + 1 : kt;
        load_fragments((ks + 1) & 1, smem0 + (following % kStages) * kStageBytes, 0);
      }
      mma_step(ks & 1);
    }
    if constexpr (kPromote)
      if (kt % kSlicesPerBlock == kSlicesPerBlock - 1 || kt + 1 == ktiles)
        promote(kt / kSlicesPerBlock);
  }
  cp_async_wait<0>();

  // Epilogue: per-tensor scales once per entry; block scales were applied at the promotions.
  const float scale = kScaling == Scaling::blockwise ? 1.0f : scales.tensor[0] * scales.tensor[1];
#pragma unroll
  for (int i = 0; i < kMT; ++i)
#pragma unroll
    for (int j = 0; j < kNT; ++j) {
      const int col = n0 + wn0 + j * 8 + 2 * t;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + wm0 + i * 16 + g + 8 * h;
        if (row >= M) continue;
        const float* v = kPromote ? &sum[i][j][2 * h] : &acc[i][j][2 * h];
        float* out = C + int64_t(row) * N + col;
        if (col < N) out[0] = v[0] * scale;
        if (col + 1 < N) out[1] = v[1] * scale;
      }
    }
}

// ---- launchers ----------------------------------------------------------------------------------
// The device data: the fp32 inputs, both quantizations, and C.
struct Operands {
  int64_t m, n, k, kb_count;
  gpu100::DeviceBuffer<float> a, w;
  gpu100::DeviceBuffer<__nv_fp8_e4m3> qa_tensor, qw_tensor, qa_blocks, qw_blocks;
  gpu100::DeviceBuffer<unsigned> amax_bits;   // [0] A, [1] W
  gpu100::DeviceBuffer<float> tensor_scales;  // [0] d_a, [1] d_w
  gpu100::DeviceBuffer<float> row_scales, tile_scales;
  gpu100::DeviceBuffer<float> c;
};

void quantize_all(Operands& o) {
  const int grid = int(
      std::min<int64_t>(gpu100::ceil_div<int64_t>(std::max(o.m, o.n) * o.k, kQuantBlock), 1024));
  CUDA_CHECK(cudaMemset(o.amax_bits.data(), 0, o.amax_bits.bytes()));
  absmax_kernel<<<grid, kQuantBlock>>>(o.a.data(), o.m * o.k, o.amax_bits.data());
  LAUNCH_CHECK();
  absmax_kernel<<<grid, kQuantBlock>>>(o.w.data(), o.n * o.k, o.amax_bits.data() + 1);
  LAUNCH_CHECK();
  quantize_tensor_kernel<<<grid, kQuantBlock>>>(o.a.data(), o.m * o.k, o.amax_bits.data(),
                                                o.qa_tensor.data(), o.tensor_scales.data());
  LAUNCH_CHECK();
  quantize_tensor_kernel<<<grid, kQuantBlock>>>(o.w.data(), o.n * o.k, o.amax_bits.data() + 1,
                                                o.qw_tensor.data(), o.tensor_scales.data() + 1);
  LAUNCH_CHECK();
  const int64_t row_warps = o.m * o.kb_count;
  quantize_rows_kernel<<<unsigned(gpu100::ceil_div<int64_t>(row_warps * 32, kQuantBlock)),
                         kQuantBlock>>>(o.a.data(), o.m, o.k, o.kb_count, o.qa_blocks.data(),
                                        o.row_scales.data());
  LAUNCH_CHECK();
  const int64_t tiles = gpu100::ceil_div<int64_t>(o.n, kBlock) * o.kb_count;
  quantize_tiles_kernel<<<unsigned(tiles), kQuantBlock>>>(o.w.data(), o.n, o.k, o.kb_count,
                                                          o.qw_blocks.data(), o.tile_scales.data());
  LAUNCH_CHECK();
  CUDA_CHECK(cudaDeviceSynchronize());
}

template <Scaling kScaling>
void launch_gemm(Operands& o, cudaStream_t s) {
  static const bool opted_in = [] {
    CUDA_CHECK(cudaFuncSetAttribute(gemm_fp8<kScaling>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    kSmemBytes));
    return true;
  }();
  (void)opted_in;
  const int64_t tiles_m = gpu100::ceil_div<int64_t>(o.m, kBM);
  const int64_t tiles_n = gpu100::ceil_div<int64_t>(o.n, kBN);
  if ((tiles_m + kGroupM) * tiles_n > int64_t(INT32_MAX))
    throw std::invalid_argument("too many tiles for one gridDim.x");
  const bool blocks = kScaling == Scaling::blockwise;
  const auto* A =
      reinterpret_cast<const uint8_t*>(blocks ? o.qa_blocks.data() : o.qa_tensor.data());
  const auto* W =
      reinterpret_cast<const uint8_t*>(blocks ? o.qw_blocks.data() : o.qw_tensor.data());
  const bool vec = o.k % 16 == 0 && gpu100::is_aligned(A, 16) && gpu100::is_aligned(W, 16);
  const Scales scales{o.tensor_scales.data(), o.row_scales.data(), o.tile_scales.data(),
                      int(o.kb_count)};
  gemm_fp8<kScaling><<<unsigned(tiles_m * tiles_n), kThreads, kSmemBytes, s>>>(
      A, W, scales, o.c.data(), int(o.m), int(o.n), int(o.k), int(tiles_m), int(tiles_n), vec);
  LAUNCH_CHECK();
}

struct Version {
  const char* name;
  void (*launch)(Operands&, cudaStream_t);
  Scaling scaling;
  const char* scales;
  const char* accumulation;
};
const Version kVersions[] = {
    {"all_k", launch_gemm<Scaling::tensor_all_k>, Scaling::tensor_all_k, "per tensor",
     "all of K in the tensor core"},
    {"promoted", launch_gemm<Scaling::tensor_promoted>, Scaling::tensor_promoted, "per tensor",
     "128 of K, then fp32"},
    {"blockwise", launch_gemm<Scaling::blockwise>, Scaling::blockwise, "1x128 / 128x128",
     "128 of K, then fp32 with the scales"},
};

// ---- cuBLASLt: the per-tensor fp8 baseline (day 066's call) and its block scaling -------------
// TN: cuBLASLt's A is W (K x N column-major, transposed), its B is A (K x M), D is N x M; the
// dimensions zero-padded to multiples of 16 in copies where they are not (its fp8 alignment).
// Block scaling (cuBLAS 12.9+, Hopper): W's scales in CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F
// mode, A's in VEC128_32F. Their layouts, as PyTorch's scaled_mm hands them over (cuBLAS documents
// them under "scaling factors layouts"; not tried on a GPU yet): A's 1 x 128 scales [K block][row]
// with the rows contiguous ("outer-dimension major"), W's 128 x 128 scales [N block][K block] with
// the K blocks contiguous and the row stride rounded up to a multiple of 4.
int64_t pad16(int64_t x) {
  return (x + 15) / 16 * 16;
}

class LtFp8Gemm {
 public:
  // blocks: qa and qw carry block scales (quantize_blocks_cpu), else one scale each, read on the
  // device from o.tensor_scales.
  LtFp8Gemm(const Operands& o, const Quantized& qa, const Quantized& qw, bool blocks)
      : m_(o.m),
        n_(o.n),
        mp_(pad16(o.m)),
        np_(pad16(o.n)),
        kp_(pad16(o.k)),
        blocks_(blocks),
        workspace_(kLtWorkspaceBytes) {
    padded_ = mp_ != m_ || np_ != n_ || kp_ != o.k;
    a_ = reinterpret_cast<const uint8_t*>(blocks ? o.qa_blocks.data() : o.qa_tensor.data());
    w_ = reinterpret_cast<const uint8_t*>(blocks ? o.qw_blocks.data() : o.qw_tensor.data());
    if (padded_) {
      a_pad_ = gpu100::DeviceBuffer<uint8_t>(pad_rows(qa.q, o.m, o.k));
      w_pad_ = gpu100::DeviceBuffer<uint8_t>(pad_rows(qw.q, o.n, o.k));
      d_pad_ = gpu100::DeviceBuffer<float>(size_t(mp_ * np_));
      a_ = a_pad_.data();
      w_ = w_pad_.data();
    }
    if (blocks) {
      a_scales_ = gpu100::DeviceBuffer<float>(row_scales_outer_major(qa.dequant, o.m, o.k));
      w_scales_ = gpu100::DeviceBuffer<float>(tile_scales_padded(qw.dequant, o.n, o.k));
    }
    try {
      init();
    } catch (...) {
      destroy();
      throw;
    }
  }
  ~LtFp8Gemm() { destroy(); }
  LtFp8Gemm(const LtFp8Gemm&) = delete;
  LtFp8Gemm& operator=(const LtFp8Gemm&) = delete;
  bool padded() const { return padded_; }
  bool found() const { return found_; }

  void run(Operands& o, cudaStream_t s) {
    const float one = 1.0f, zero = 0.0f;
    float* d = padded_ ? d_pad_.data() : o.c.data();
    const float* w_scale = blocks_ ? w_scales_.data() : o.tensor_scales.data() + 1;
    const float* a_scale = blocks_ ? a_scales_.data() : o.tensor_scales.data();
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                                &w_scale, sizeof w_scale));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                                &a_scale, sizeof a_scale));
    CUBLAS_CHECK(cublasLtMatmul(lt_, desc_, &one, w_, w_layout_, a_, a_layout_, &zero, d,
                                d_layout_, d, d_layout_, &algo_, workspace_.data(),
                                kLtWorkspaceBytes, s));
    if (padded_)
      CUDA_CHECK(cudaMemcpy2DAsync(o.c.data(), size_t(n_) * 4, d_pad_.data(), size_t(np_) * 4,
                                   size_t(n_) * 4, size_t(m_), cudaMemcpyDeviceToDevice, s));
  }

 private:
  static std::vector<uint8_t> pad_rows(const std::vector<uint8_t>& q, int64_t rows, int64_t k) {
    const int64_t rp = pad16(rows), kp = pad16(k);
    std::vector<uint8_t> out(size_t(rp * kp), 0);
    for (int64_t r = 0; r < rows; ++r) std::copy_n(q.begin() + r * k, k, out.begin() + r * kp);
    return out;
  }
  // [row][K block] -> [K block][padded row], the padding rows' scales 1 (their data is zero).
  static std::vector<float> row_scales_outer_major(const std::vector<float>& s, int64_t rows,
                                                   int64_t k) {
    const int64_t kb_count = (k + kBlock - 1) / kBlock, rp = pad16(rows);
    std::vector<float> out(size_t(kb_count * rp), 1.0f);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t b = 0; b < kb_count; ++b) out[size_t(b * rp + r)] = s[size_t(r * kb_count + b)];
    return out;
  }
  // [N block][K block] with the row stride rounded up to a multiple of 4.
  static std::vector<float> tile_scales_padded(const std::vector<float>& s, int64_t rows,
                                               int64_t k) {
    const int64_t kb_count = (k + kBlock - 1) / kBlock, stride = (kb_count + 3) / 4 * 4;
    const int64_t rb_count = (rows + kBlock - 1) / kBlock;
    std::vector<float> out(size_t(rb_count * stride), 1.0f);
    for (int64_t r = 0; r < rb_count; ++r)
      for (int64_t b = 0; b < kb_count; ++b)
        out[size_t(r * stride + b)] = s[size_t(r * kb_count + b)];
    return out;
  }
  void init() {
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t t = CUBLAS_OP_T, nt = CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
    CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &nt, sizeof nt));
    if (blocks_) {
      const int32_t w_mode = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
      const int32_t a_mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
      cublasStatus_t st = cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
                                                         &w_mode, sizeof w_mode);
      if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &a_mode,
                                            sizeof a_mode);
      if (st != CUBLAS_STATUS_SUCCESS) return;  // this cuBLASLt has no block scaling: not found
    }
    CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(&w_layout_, CUDA_R_8F_E4M3, uint64_t(kp_), uint64_t(np_), kp_));
    CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(&a_layout_, CUDA_R_8F_E4M3, uint64_t(kp_), uint64_t(mp_), kp_));
    CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(&d_layout_, CUDA_R_32F, uint64_t(np_), uint64_t(mp_), np_));
    cublasLtMatmulPreference_t pref = nullptr;
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t ws = kLtWorkspaceBytes;
    cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulAlgoGetHeuristic(lt_, desc_, w_layout_, a_layout_, d_layout_, d_layout_,
                                          pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED) return;  // found_ stays false: a note says so
    CUBLAS_CHECK(st);
    found_ = found > 0;
    algo_ = result.algo;
  }
  void destroy() {
    if (d_layout_) cublasLtMatrixLayoutDestroy(d_layout_);
    if (a_layout_) cublasLtMatrixLayoutDestroy(a_layout_);
    if (w_layout_) cublasLtMatrixLayoutDestroy(w_layout_);
    if (desc_) cublasLtMatmulDescDestroy(desc_);
    d_layout_ = a_layout_ = w_layout_ = nullptr;
    desc_ = nullptr;
  }

  int64_t m_, n_, mp_, np_, kp_;
  bool blocks_;
  gpu100::CublasLtHandle lt_;
  bool padded_ = false, found_ = false;
  const uint8_t *a_ = nullptr, *w_ = nullptr;
  gpu100::DeviceBuffer<uint8_t> a_pad_, w_pad_;
  gpu100::DeviceBuffer<float> d_pad_, a_scales_, w_scales_;
  gpu100::DeviceBuffer<unsigned char> workspace_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t w_layout_ = nullptr, a_layout_ = nullptr, d_layout_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
};

// ---- the checks ---------------------------------------------------------------------------------
// The CPU side: both quantizations, and at the checked entries the reference of each operand set,
// each version's bound, the bound promotion would guarantee on the per-tensor operands, and the
// double product of the unquantized inputs.
struct Reference {
  Quantized a_tensor, w_tensor, a_blocks, w_blocks;
  std::vector<std::pair<int64_t, int64_t>> points;
  std::vector<double> ref_tensor, ref_blocks, exact_inputs;
  std::vector<double> bound_all_k, bound_promoted, bound_blockwise;
  const std::vector<double>& ref_of(Scaling s) const {
    return s == Scaling::blockwise ? ref_blocks : ref_tensor;
  }
  const std::vector<double>& bound_of(Scaling s) const {
    return s == Scaling::tensor_all_k ? bound_all_k
           : s == Scaling::blockwise  ? bound_blockwise
                                      : bound_promoted;
  }
};

Reference reference_of(const std::vector<float>& a, const std::vector<float>& w, int64_t m,
                       int64_t n, int64_t k, int bits, uint64_t seed) {
  Reference r{quantize_tensor_cpu(a), quantize_tensor_cpu(w), quantize_blocks_cpu(a, m, k, 1),
              quantize_blocks_cpu(w, n, k, kBlock)};
  r.points = gpu100::gemm_check_points(m, n, k, seed);
  const int64_t kb_count = (k + kBlock - 1) / kBlock;
  const double tensor_scale = double(r.a_tensor.dequant[0]) * double(r.w_tensor.dequant[0]);
  const std::vector<double> ones(static_cast<size_t>(kb_count), 1.0);
  std::vector<double> block_scale(static_cast<size_t>(kb_count));
  for (const auto& [i, j] : r.points) {
    const uint8_t* qa = r.a_tensor.q.data() + i * k;
    const uint8_t* qw = r.w_tensor.q.data() + j * k;
    const Entry all_k = entry_of(qa, qw, k, {false, ones.data(), tensor_scale, bits});
    const Entry promoted = entry_of(qa, qw, k, {true, ones.data(), tensor_scale, bits});
    for (int64_t b = 0; b < kb_count; ++b)
      block_scale[size_t(b)] = double(r.a_blocks.dequant[size_t(i * kb_count + b)]) *
                               double(r.w_blocks.dequant[size_t((j / kBlock) * kb_count + b)]);
    const Entry blocks = entry_of(r.a_blocks.q.data() + i * k, r.w_blocks.q.data() + j * k, k,
                                  {true, block_scale.data(), 1.0, bits});
    double exact = 0;
    for (int64_t p = 0; p < k; ++p) exact += double(a[size_t(i * k + p)]) * w[size_t(j * k + p)];
    r.ref_tensor.push_back(all_k.ref);
    r.ref_blocks.push_back(blocks.ref);
    r.exact_inputs.push_back(exact);
    r.bound_all_k.push_back(all_k.bound);
    r.bound_promoted.push_back(promoted.bound);
    r.bound_blockwise.push_back(blocks.bound);
  }
  return r;
}

std::vector<double> sampled(const gpu100::DeviceBuffer<float>& c, int64_t n, const Reference& r) {
  const std::vector<float> all = c.download();
  std::vector<double> got;
  got.reserve(r.points.size());
  for (const auto& [i, j] : r.points) got.push_back(double(all[size_t(i * n + j)]));
  return got;
}

// The quantizations, bytes and scales, bit for bit.
gpu100::CheckResult check_quantized(const Operands& o, const Reference& r) {
  auto bytes = [](const gpu100::DeviceBuffer<__nv_fp8_e4m3>& d) {
    std::vector<uint8_t> h(d.size());
    CUDA_CHECK(cudaMemcpy(h.data(), d.data(), h.size(), cudaMemcpyDeviceToHost));
    return h;
  };
  gpu100::CheckResult c = gpu100::compare_exact(bytes(o.qa_tensor), r.a_tensor.q);
  c = gpu100::combine(c, gpu100::compare_exact(bytes(o.qw_tensor), r.w_tensor.q));
  c = gpu100::combine(c, gpu100::compare_exact(bytes(o.qa_blocks), r.a_blocks.q));
  c = gpu100::combine(c, gpu100::compare_exact(bytes(o.qw_blocks), r.w_blocks.q));
  const std::vector<float> tensor = {r.a_tensor.dequant[0], r.w_tensor.dequant[0]};
  c = gpu100::combine(c, gpu100::compare_exact(o.tensor_scales.download(), tensor));
  c = gpu100::combine(c, gpu100::compare_exact(o.row_scales.download(), r.a_blocks.dequant));
  return gpu100::combine(c, gpu100::compare_exact(o.tile_scales.download(), r.w_blocks.dequant));
}

// One version's errors, for the accumulation table.
struct Errors {
  double max_rel = 0;            // max |err| / max |C|
  double own = 0, promoted = 0;  // max over entries of |err| / bound
  double vs_inputs = 0;          // the worst row's rel L2 against the unquantized inputs' product
};

Errors errors_of(const std::vector<double>& got, const Reference& r, Scaling s) {
  const std::vector<double>& ref = r.ref_of(s);
  const std::vector<double>& promoted_bound =
      s == Scaling::blockwise ? r.bound_blockwise : r.bound_promoted;
  Errors e;
  double max_ref = 0, max_err = 0;
  std::map<int64_t, std::pair<double, double>> rows;  // row: sum of err^2, sum of ref^2
  for (size_t t = 0; t < got.size(); ++t) {
    const double err = std::fabs(got[t] - ref[t]);
    max_ref = std::max(max_ref, std::fabs(ref[t]));
    max_err = std::max(max_err, err);
    if (r.bound_of(s)[t] > 0) e.own = std::max(e.own, err / r.bound_of(s)[t]);
    if (promoted_bound[t] > 0) e.promoted = std::max(e.promoted, err / promoted_bound[t]);
    auto& [d2, x2] = rows[r.points[t].first];
    d2 += (got[t] - r.exact_inputs[t]) * (got[t] - r.exact_inputs[t]);
    x2 += r.exact_inputs[t] * r.exact_inputs[t];
  }
  e.max_rel = max_ref > 0 ? max_err / max_ref : max_err;
  for (const auto& [row, sums] : rows)
    if (sums.second > 0) e.vs_inputs = std::max(e.vs_inputs, std::sqrt(sums.first / sums.second));
  return e;
}

// What a version's checked run produced, kept for the table.
struct Outcome {
  const char *name, *scales, *accumulation;
  bool ran = false;
  Errors errors;
};

gpu100::Measure measure_version(const Version& v, Operands& o, const Reference& r, Outcome& out) {
  return {.name = v.name,
          .launch = [&v, &o](cudaStream_t s) { v.launch(o, s); },
          .reset = [&o] { o.c.poison(); },
          .check =
              [&v, &o, &r, &out] {
                const std::vector<double> got = sampled(o.c, o.n, r);
                out.ran = true;
                out.errors = errors_of(got, r, v.scaling);
                return gpu100::compare_within(got, r.ref_of(v.scaling), r.bound_of(v.scaling), "C");
              },
          .work = gpu100::gemm_flops(o.m, o.n, o.k)};
}

void measure_baseline(gpu100::Context& ctx, Operands& o, const Reference& r,
                      std::unique_ptr<LtFp8Gemm>& plan) {
  if (ctx.vendor_libraries()) {
    plan = std::make_unique<LtFp8Gemm>(o, r.a_tensor, r.w_tensor, false);
    if (!plan->found()) {
      ctx.report().note("cuBLASLt fp8 baseline not run: its heuristic offers no algorithm");
      return;
    }
    if (plan->padded())
      ctx.report().note(
          "cuBLASLt fp8 runs on copies zero-padded to multiples of 16 (its "
          "alignment rule); its rate counts the unpadded M N K");
  }
  ctx.measure({.name = "cublasLt fp8 per-tensor",
               .launch = [&o, &plan](cudaStream_t s) { plan->run(o, s); },
               .reset = [&o] { o.c.poison(); },
               .check =
                   [&o, &r] {
                     return gpu100::compare_within(sampled(o.c, o.n, r), r.ref_tensor,
                                                   r.bound_all_k, "C");
                   },
               .work = gpu100::gemm_flops(o.m, o.n, o.k),
               .role = gpu100::Role::baseline,
               .vendor = true});
}

// cuBLASLt's block-scaled fp8 GEMM on the blockwise operands: a version, checked like ours.
constexpr const char* kLtBlockwise = "cublaslt_blockwise";

void add_lt_blockwise(gpu100::Context& ctx, Operands& o, const Reference& r,
                      std::unique_ptr<LtFp8Gemm>& plan, Outcome& out,
                      std::vector<gpu100::Measure>& runs) {
  if (ctx.vendor_libraries() && ctx.want(kLtBlockwise)) {
    plan = std::make_unique<LtFp8Gemm>(o, r.a_blocks, r.w_blocks, true);
    if (!plan->found()) {
      ctx.report().note(
          "cuBLASLt block-scaled fp8 not run: its heuristic offers no algorithm "
          "for VEC128 x BLK128x128 scales here (Hopper only)");
      return;
    }
  }
  runs.push_back({.name = kLtBlockwise,
                  .launch = [&o, &plan](cudaStream_t s) { plan->run(o, s); },
                  .reset = [&o] { o.c.poison(); },
                  .check =
                      [&o, &r, &out] {
                        const std::vector<double> got = sampled(o.c, o.n, r);
                        out.ran = true;
                        out.errors = errors_of(got, r, Scaling::blockwise);
                        return gpu100::compare_within(got, r.ref_blocks, r.bound_blockwise, "C");
                      },
                  .work = gpu100::gemm_flops(o.m, o.n, o.k),
                  .vendor = true});
}

// The lesson: each version's error against max |C|, its own bound and promotion's bound, and
// its distance from the product of the unquantized inputs (what the scales are for): the rel L2
// error of the worst row, where per-tensor scales push a small row into e4m3's subnormals.
gpu100::Table accumulation_table(const std::vector<Outcome>& outcomes) {
  gpu100::Table t;
  t.title = "accumulation: errors against each version's own dequantized operands";
  t.columns = {"version",
               "scales",
               "accumulation",
               "max err / max|C|",
               "max err / own bound",
               "max err / promoted bound",
               "worst row vs fp32 inputs"};
  for (const Outcome& o : outcomes) {
    if (!o.ran) continue;
    const Errors& e = o.errors;
    t.add_row({o.name, o.scales, o.accumulation, e.max_rel, e.own, e.promoted, e.vs_inputs});
  }
  return t;
}

std::string model_note(const gpu100::DeviceInfo& dev, int bits) {
  std::string model = "a GPU's tensor cores";
  if (dev.emulated) {
    const char* env = std::getenv("GPU100_EMU_MMA_ACCUM");
    model = fmt::format("the emulator's GPU100_EMU_MMA_ACCUM={}",
                        env && *env ? env : "exact (default: one fp32 rounding per mma)");
  }
  return fmt::format(
      "accumulation model of these numbers: {}; the bounds assume {} bits kept "
      "per mma (--mma-bits){}",
      model, bits, bits >= 24 ? ", fp32 rounded" : ", truncated");
}

std::string fp8_unsupported(const gpu100::DeviceInfo& dev) {
  if (dev.cc() >= 89) return "";
  return fmt::format(
      "fp8 e4m3 mma.sync and cvt need compute capability 8.9 or newer; this GPU "
      "is {}",
      dev.cc_string());
}

// Inputs with the spread block scales are for: A's rows (tokens) span 2^-14 .. 2^2 in magnitude,
// wider than e4m3's normal range (2^-6 .. 448), W's 128 x 128 blocks 2^-7 .. 2^-2; uniform around
// `mean` within each.
std::vector<float> make_inputs(int64_t rows, int64_t k, uint64_t seed, double mean, bool weights) {
  std::vector<float> x =
      gpu100::random_floats(size_t(rows * k), seed, float(mean) - 1.0f, float(mean) + 1.0f);
  const int64_t kb_count = (k + kBlock - 1) / kBlock;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < k; ++j) {
      const uint64_t key = weights ? uint64_t((i / kBlock) * kb_count + j / kBlock) : uint64_t(i);
      const int e = weights ? -7 + int(gpu100::mix64(seed ^ (key * 2 + 1)) % 6)
                            : -14 + int(gpu100::mix64(seed ^ (key * 2)) % 17);
      x[size_t(i * k + j)] = std::ldexp(x[size_t(i * k + j)], e);
    }
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "fp8 GEMM with 1x128 activation and 128x128 weight block scales, promoted to fp32 every 128 "
      "of K; per-tensor all-K vs promoted accumulation on the same operands; vs cuBLASLt fp8");
  int64_t m = 4096, n = 4096, k = 4096;
  int mma_bits = 13;
  double mean = 0;
  cli.size("m", m, 257, "rows of A and C", kMaxDim);
  cli.size("n", n, 131, "rows of W (k contiguous), columns of C", kMaxDim);
  cli.size("k", k, 300, "columns of A and W (the dot-product length)", kMaxDim);
  cli.option("mma-bits", mma_bits,
             "bits the check assumes the tensor core keeps when it adds (24: fp32)", 8, 24);
  cli.option("mean", mean,
             "inputs are uniform in [mean - 1, mean + 1) before their block's "
             "magnitude",
             -8.0, 8.0);
  std::vector<std::string> kernels;
  for (const Version& v : kVersions) kernels.emplace_back(v.name);
  kernels.emplace_back(kLtBlockwise);
  cli.kernels(kernels);
  cli.min_cc(80);
  cli.require_device(fp8_unsupported);
  cli.device_bytes([&] {
    const double mk = double(m) * double(k), nk = double(n) * double(k);
    return 6.0 * (mk + nk) + 4.0 * double(m) * double(n) * 2 + double(kLtWorkspaceBytes);
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("TFLOP/s");
    report.limit("fp8_tflops", ctx.device().peak_fp8_tensor_tflops(), "FP8 tensor peak");
    report.baseline_as_percent();
    report.intensity(gpu100::gemm_flops(m, n, k) /
                     (double(m) * double(k) + double(n) * double(k) + 4.0 * double(m) * double(n)));

    const std::vector<float> a = make_inputs(m, k, ctx.seed(), mean, false);
    const std::vector<float> w = make_inputs(n, k, ctx.seed() + 1, mean, true);
    const Reference r = reference_of(a, w, m, n, k, mma_bits, ctx.seed());
    const int64_t kb_count = (k + kBlock - 1) / kBlock;
    Operands o{m,
               n,
               k,
               kb_count,
               gpu100::DeviceBuffer<float>(a),
               gpu100::DeviceBuffer<float>(w),
               gpu100::DeviceBuffer<__nv_fp8_e4m3>(size_t(m * k)),
               gpu100::DeviceBuffer<__nv_fp8_e4m3>(size_t(n * k)),
               gpu100::DeviceBuffer<__nv_fp8_e4m3>(size_t(m * k)),
               gpu100::DeviceBuffer<__nv_fp8_e4m3>(size_t(n * k)),
               gpu100::DeviceBuffer<unsigned>(2),
               gpu100::DeviceBuffer<float>(2),
               gpu100::DeviceBuffer<float>(r.a_blocks.dequant.size()),
               gpu100::DeviceBuffer<float>(r.w_blocks.dequant.size()),
               gpu100::DeviceBuffer<float>(size_t(m * n))};
    quantize_all(o);
    report.add_check("quantize (per tensor, 1x128, 128x128)", check_quantized(o, r));

    std::unique_ptr<LtFp8Gemm> plan;
    measure_baseline(ctx, o, r, plan);
    std::vector<Outcome> outcomes;
    for (const Version& v : kVersions) outcomes.push_back({v.name, v.scales, v.accumulation});
    outcomes.push_back({kLtBlockwise, "1x128 / 128x128", "cuBLASLt's"});
    std::vector<gpu100::Measure> runs;
    for (size_t i = 0; i < std::size(kVersions); ++i)
      runs.push_back(measure_version(kVersions[i], o, r, outcomes[i]));
    std::unique_ptr<LtFp8Gemm> lt_blocks;
    add_lt_blockwise(ctx, o, r, lt_blocks, outcomes.back(), runs);
    ctx.measure_all(runs);

    report.table(accumulation_table(outcomes));
    report.note(model_note(ctx.device(), mma_bits));
  });
}
