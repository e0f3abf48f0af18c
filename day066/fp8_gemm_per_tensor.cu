// Day 066 - FP8 GEMM with per-tensor scales: e4m3 mma.sync m16n8k32, fp32 accumulation
//
// An e4m3 number has 4 exponent bits and 3 mantissa bits: 448 at most, 2^-9 at least, 8 steps
// per binade. That is far too little range for raw activations and weights, so each tensor gets a
// scale: s = 448 / max|x| maps its largest magnitude onto the largest e4m3, q = e4m3(x * s), and
// the tensor is q * d with d = max|x| / 448 (per-tensor "current scaling", as Transformer Engine
// calls it). A GEMM of two such tensors is d_a d_b (q_a q_b): the tensor cores multiply the bytes,
// and the two scales are applied once, to the fp32 result.
//
// C[M x N] = A[M x K] W[N x K]^T, both operands K-major (W as a Linear layer stores it). That is
// the only layout the 8-bit mma accepts ("row.col"; ldmatrix has no 8-bit transpose), and the
// "TN" layout cuBLASLt requires for fp8.
//   mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32   one warp, a 16 x 8 x 32 product: twice
//       the depth of the fp16 m16n8k16 in the same registers (4 bytes of A per thread and row
//       pair, 4 bytes of B), so the same ldmatrix x4 loads feed it twice the K.
//   cvt.rn.satfinite.e4m3x2.f32   the quantization: round to nearest even, saturate at 448.
// Both need compute capability 8.9 (Ada) or 9.0 (Hopper); the program is built for 80 and 90, so
// the fp8 code is compiled only where __CUDA_ARCH__ >= 890 and the day skips on an older GPU.
//
// Versions (one kernel template, day 024's multistage pipeline: 128 x 128 block tiles of 64-byte
// K slices, XOR-swizzled shared memory, ldmatrix, cp.async with 4 stages; each changes one thing)
//   f16_mma        the same quantized values held as fp16 (exactly: every e4m3 value is an fp16),
//                  mma m16n8k16: 2 bytes per element, 32 of K per slice
//   e4m3_mma       e4m3 bytes, mma m16n8k32: 1 byte per element, 64 of K per slice - half the
//                  bytes and half the mma instructions for the same product
// (Day 024's 128 x 256 tile spills registers here; the next step for fp8 on Hopper is wgmma,
// day 074.)
// Before them, two kernels quantize A and W (absmax by a block reduction and atomicMax, then the
// scaled conversion), checked bit for bit against the CPU; the GEMMs are timed on their output.
// Baseline: cuBLASLt fp8 (e4m3 x e4m3 -> fp32, the two dequantization scales as A/B scale
// pointers, TN), zero-padded to multiples of 16 where the shape is not (its documented alignment).
//
// Check: every entry at --quick (sampled beyond) against a double GEMM of the dequantized
// operands (q_a d_a)(q_w d_w), within a per-entry bound derived from the formats and K, not a
// hand-picked tolerance. Products of e4m3 values are exact in fp32 (4 x 4 significant bits), so
// the whole error is in the accumulation: each mma adds its 32 (16 for fp16) products to the
// accumulator. Modelling a tensor core that aligns the addends to the largest and keeps p bits,
// truncating, then rounds to fp32, one mma adds at most
//   sum over its addends x of min(|x|, 2^(1-p) max|x|)  +  2^-23 (|c| + sum |products|)
// and the epilogue's two roundings (d_a d_b, then times the sum) 2^-23 |sum|. The CPU sums these
// per entry along the same 32-wide steps (bound_of_entry). --mma-bits p: 24 is the fp32
// accumulator the PTX names rounded once per mma (the emulator's default model); the default 13
// sits below the ~14 bits reported for Hopper's fp8 accumulation, so the check holds on hardware
// too - and shows why accumulating all of a long K in the tensor core is a problem (day 067).
//
// Run:  build/bin/day066 [--m 4096 --n 4096 --k 4096] [--kernel e4m3_mma] [--mma-bits 24]
//       build/bin/day066 --m 129 --n 67 --k 259      (odd shapes: the guarded edge paths)
#include <cublasLt.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"

namespace {

constexpr int64_t kMaxDim = int64_t(1) << 30;  // indices + a tile offset stay inside int
constexpr float kE4M3Max = 448.0f;
constexpr int kSliceBytes = 64;  // depth of a shared-memory slice: 64 e4m3 or 32 halves
constexpr int kGroupM = 8;       // tile rows per group of the block numbering (L2 reuse)
constexpr size_t kLtWorkspaceBytes = size_t(32) << 20;

// ---- the e4m3 format (OCP FP8 E4M3, the "fn" variant CUDA implements) ---------------------------
// S.EEEE.MMM, bias 7: E = 0 holds subnormals m * 2^-9; E = 15 with M = 7 is the only NaN, so the
// top binade is normal and 448 = 1.75 * 2^8 is the largest value.
float e4m3_value(uint8_t bits) {
  const int e = (bits >> 3) & 15, m = bits & 7;
  if (e == 15 && m == 7) return NAN;
  const float mag = e == 0 ? std::ldexp(float(m), -9) : std::ldexp(float(8 + m), e - 10);
  return bits & 0x80 ? -mag : mag;
}

// Round to nearest, ties to even, saturating at 448 (cvt.rn.satfinite). The spacing of the
// binade of |x| is 2^(e-3) (2^-9 below 2^-6, where the subnormals continue the last binade's
// spacing), so rounding is rint(|x| / spacing) * spacing; a carry into the next binade is fine.
uint8_t e4m3_round(float x) {
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const double a = std::fabs(double(x));
  if (a >= double(kE4M3Max)) return sign | 0x7E;  // S.1111.110 = 448
  int e = 0;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1): the binade's exponent is e - 1
  const int step_exp = std::max(e - 1, -6) - 3;
  const double r = std::nearbyint(std::ldexp(a, -step_exp));  // spacings, ties to even
  if (r == 0) return sign;
  const double v = std::ldexp(r, step_exp);
  if (v >= double(kE4M3Max)) return sign | 0x7E;
  int ve = 0;
  std::frexp(v, &ve);
  if (ve - 1 < -6) return sign | uint8_t(r);  // subnormal: r = m < 8 spacings of 2^-9
  const int mant = int(std::ldexp(v, -(ve - 1)) * 8.0) - 8;
  return sign | uint8_t(((ve - 1 + 7) << 3) | mant);
}

// ---- CPU reference: per-tensor quantization -----------------------------------------------------
// What the GPU must produce bit for bit: the largest magnitude, the quantization scale
// 448 / amax and the dequantization scale amax / 448 (each one correctly rounded fp32 division;
// amax = 0, an all-zero tensor, uses 1), and e4m3(x * scale) with x * scale rounded to fp32 first.
struct Quantized {
  std::vector<uint8_t> q;
  float amax = 0, dequant = 1;
};

Quantized quantize_cpu(const std::vector<float>& x) {
  Quantized r;
  for (float v : x) r.amax = std::max(r.amax, std::fabs(v));
  const float scale = r.amax > 0 ? kE4M3Max / r.amax : 1.0f;
  r.dequant = r.amax > 0 ? r.amax / kE4M3Max : 1.0f;
  r.q.resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) r.q[i] = e4m3_round(x[i] * scale);
  return r;
}

// ---- CPU reference: the product and its error bound ---------------------------------------------
// The accumulation a version does, for the bound: `step` products per mma (32 for e4m3, 16 for
// fp16) and `bits` kept by the tensor core's adder (24: fp32, rounded).
struct Accumulation {
  int step;
  int bits;
};

// The error one mma may add to an accumulator of magnitude <= c_abs, given its products (exact),
// under the model in the header comment.
double mma_error_bound(double c_abs, const double* p, int count, int bits) {
  double sum_abs = 0, max_abs = c_abs;
  for (int i = 0; i < count; ++i) {
    sum_abs += std::fabs(p[i]);
    max_abs = std::max(max_abs, std::fabs(p[i]));
  }
  double bound = std::ldexp(c_abs + sum_abs, -23);  // the fp32 result, rounded either way
  if (bits < 24) {
    const double ulp = std::ldexp(max_abs, 1 - bits);  // >= the grid the addends are cut to
    bound += std::min(c_abs, ulp);
    for (int i = 0; i < count; ++i) bound += std::min(std::fabs(p[i]), ulp);
  }
  return bound;
}

struct Entry {
  double ref, bound;
};

// C[i][j] in double from the quantized bytes and the two dequantization scales, and how far an
// accumulation `acc` may be from it. The exact partial sum stands in for the accumulator, plus the
// error bound so far (the computed accumulator is within it).
Entry bound_of_entry(const uint8_t* qa_row, const uint8_t* qw_row, int64_t k, double scale,
                     Accumulation acc) {
  double sum = 0, err = 0, sum_abs = 0;
  double p[32];
  for (int64_t k0 = 0; k0 < k; k0 += acc.step) {
    const int count = int(std::min<int64_t>(acc.step, k - k0));
    double step_sum = 0;
    for (int t = 0; t < count; ++t) {
      p[t] = double(e4m3_value(qa_row[k0 + t])) * double(e4m3_value(qw_row[k0 + t]));
      step_sum += p[t];
      sum_abs += std::fabs(p[t]);
    }
    err += mma_error_bound(std::fabs(sum) + err, p, count, acc.bits);
    sum += step_sum;
  }
  // Epilogue: fl(fl(d_a d_w) * acc), two roundings; and the double reference's own sum (at most
  // k roundings of 2^-53, far below the rest).
  const double epilogue = std::ldexp(std::fabs(sum) + err, -23);
  const double reference = double(k) * std::ldexp(sum_abs, -53);
  return {sum * scale, (err + epilogue + reference) * scale};
}

// ---- kernels: quantization ----------------------------------------------------------------------
constexpr int kQuantBlock = 256;

// amax = max |x| over the tensor: a grid-stride max per thread, a warp and block reduction, one
// atomicMax per block. Non-negative floats order like their bit patterns as unsigned integers.
__global__ void __launch_bounds__(kQuantBlock)
    absmax_kernel(const float* __restrict__ x, int64_t n, unsigned* __restrict__ amax_bits) {
  __shared__ float warp_max[kQuantBlock / 32];
  float m = 0.0f;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    m = fmaxf(m, fabsf(x[i]));
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x < 32) {
    m = threadIdx.x < kQuantBlock / 32 ? warp_max[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (threadIdx.x == 0) atomicMax(amax_bits, __float_as_uint(m));
  }
}

// q = e4m3(x * 448 / amax); block 0 also stores the dequantization scale amax / 448.
__global__ void __launch_bounds__(kQuantBlock)
    quantize_kernel(const float* __restrict__ x, int64_t n, const unsigned* __restrict__ amax_bits,
                    __nv_fp8_e4m3* __restrict__ q, float* __restrict__ dequant) {
  const float amax = __uint_as_float(*amax_bits);
  const float scale = amax > 0.0f ? kE4M3Max / amax : 1.0f;
  if (blockIdx.x == 0 && threadIdx.x == 0) *dequant = amax > 0.0f ? amax / kE4M3Max : 1.0f;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    q[i] = __nv_fp8_e4m3(x[i] * scale);  // cvt.rn.satfinite.e4m3x2.f32 on sm_89+
}

// ---- kernels: the PTX, one wrapper per instruction ----------------------------------------------
// Shared-memory operands are 32-bit shared-window addresses; the wrappers that touch memory are
// volatile so they keep their order relative to each other and to the barriers. Built for an
// architecture without the instruction (the fp8 mma below sm_89), a wrapper traps; the program
// never launches those kernels there (it skips below compute capability 8.9).
__device__ __forceinline__ uint32_t shared_addr(const void* p) {
  return uint32_t(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  // .cg: cache in L2 only - each slice is read once per block. src_bytes 0 zero-fills.
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

// Four 8 x 16-byte matrices: lane 4g + t receives bytes 4t..4t+3 of row g of each. For halves
// that is elements 2t, 2t+1; for e4m3 elements 4t..4t+3 - the fragment layouts of both mma.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#else
  __trap();
#endif
}

// d += a * b, 16 x 8 x 16 halves.
__device__ __forceinline__ void mma_f16(float (&d)[4], const uint32_t (&a)[4],
                                        const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  __trap();
#endif
}

// d += a * b, 16 x 8 x 32 e4m3 (the same registers as above, four bytes in each).
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

// ---- kernels: the configuration and the kernel --------------------------------------------------
// The element type of the operands: its storage, its mma, and how much K one 16-byte chunk holds.
struct F16 {
  using Storage = uint16_t;
  __device__ static void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    mma_f16(d, a, b);
  }
};
struct E4M3 {
  using Storage = uint8_t;
  __device__ static void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    mma_e4m3(d, a, b);
  }
};

template <class Elem, int BM, int BN, int WarpsM, int WarpsN, int Stages>
struct Config {
  using Element = Elem;
  using Storage = typename Elem::Storage;
  static constexpr int kBM = BM, kBN = BN, kWarpsM = WarpsM, kWarpsN = WarpsN, kStages = Stages;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kWM = kBM / kWarpsM, kWN = kBN / kWarpsN;  // warp tile
  static constexpr int kMT = kWM / 16, kNT = kWN / 8;             // mma tiles per warp tile
  static constexpr int kElemsPerChunk = 16 / int(sizeof(Storage));
  static constexpr int kSliceK = kSliceBytes / int(sizeof(Storage));  // K per slice
  static constexpr int kStepK = 32 / int(sizeof(Storage));            // K per mma
  static constexpr int kChunksPerRow = kSliceBytes / 16;
  static constexpr int kChunksA = kBM * kChunksPerRow / kThreads;  // 16-byte chunks per thread
  static constexpr int kChunksB = kBN * kChunksPerRow / kThreads;
  static constexpr int kABytes = kBM * kSliceBytes, kBBytes = kBN * kSliceBytes;
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr int kSmemBytes = kStages * kStageBytes;

  static_assert(kWM % 16 == 0 && kWN % 16 == 0, "warp tile: whole m16 tiles, pairs of n8 tiles");
  static_assert(kChunksA * kThreads == kBM * kChunksPerRow &&
                    kChunksB * kThreads == kBN * kChunksPerRow,
                "slices split evenly over the threads");
  static_assert(kStages >= 2, "cp.async pipelines need at least two stages");

  // Byte offset of 16-byte chunk `chunk` of row `row` in a tile of 64-byte rows (A: rows m, W:
  // rows n; both K-major). Rows 2j and 2j+1 share a 128-byte bank line, so the key (row / 2) % 4
  // spreads the 8 rows one ldmatrix phase reads over all 8 16-byte bank groups.
  GPU100_HD static constexpr uint32_t offset(int row, int chunk) {
    return uint32_t(row * kSliceBytes + 16 * (chunk ^ ((row >> 1) & 3)));
  }
};

// The block's tile, blocks numbered in groups of kGroupM tile rows (as day 024).
GPU100_HD inline void block_tile(int bid, int tiles_m, int tiles_n, int& tm, int& tn) {
  const int width = kGroupM * tiles_n;
  const int group = bid / width, first = group * kGroupM;
  const int rows = tiles_m - first < kGroupM ? tiles_m - first : kGroupM;
  const int in_group = bid - group * width;
  tm = first + in_group % rows;
  tn = in_group / rows;
}

// One 16-byte chunk of a row-major rows x cols matrix: elements (row, col ..) into the shared
// address dst, zeros outside the matrix (the zero-padded last slice of K, the rows past M or N).
// `vec`: cols is a multiple of the chunk and the matrix 16-byte aligned, so a chunk is entirely
// inside or outside and cp.async copies it; otherwise the chunk is gathered element by element.
template <class Storage>
__device__ __forceinline__ void copy_chunk(uint32_t dst, const Storage* __restrict__ src, int row,
                                           int rows, int col, int cols, bool vec) {
  constexpr int kPer = 16 / int(sizeof(Storage));
  if (vec) {
    const bool inside = row < rows && col < cols;
    const Storage* p = inside ? src + (int64_t(row) * cols + col) : src;  // never out of bounds
    cp_async_16(dst, p, inside ? 16 : 0);
    return;
  }
  uint32_t w[4] = {0, 0, 0, 0};
  if (row < rows) {
    const Storage* p = src + int64_t(row) * cols;
#pragma unroll
    for (int e = 0; e < kPer; ++e) {
      const int byte = e * int(sizeof(Storage));
      if (col + e < cols) w[byte / 4] |= uint32_t(p[col + e]) << (8 * (byte % 4));
    }
  }
  st_shared_16(dst, make_uint4(w[0], w[1], w[2], w[3]));
}

template <class Cfg>
__device__ __forceinline__ void load_slice(uint32_t stage, const typename Cfg::Storage* A,
                                           const typename Cfg::Storage* W, int M, int N, int K,
                                           int m0, int n0, int k0, bool vec, int tid) {
#pragma unroll
  for (int i = 0; i < Cfg::kChunksA; ++i) {
    const int id = tid + i * Cfg::kThreads;
    const int row = id / Cfg::kChunksPerRow, chunk = id % Cfg::kChunksPerRow;
    copy_chunk(stage + Cfg::offset(row, chunk), A, m0 + row, M, k0 + chunk * Cfg::kElemsPerChunk, K,
               vec);
  }
#pragma unroll
  for (int i = 0; i < Cfg::kChunksB; ++i) {
    const int id = tid + i * Cfg::kThreads;
    const int row = id / Cfg::kChunksPerRow, chunk = id % Cfg::kChunksPerRow;
    copy_chunk(stage + Cfg::kABytes + Cfg::offset(row, chunk), W, n0 + row, N,
               k0 + chunk * Cfg::kElemsPerChunk, K, vec);
  }
}

// C = (d_a d_w) * (A W^T), the product accumulated in fp32 by the tensor cores over all of K.
// dequant[0] = d_a, dequant[1] = d_w (the quantization kernels wrote them).
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads)
    gemm_mma(const typename Cfg::Storage* __restrict__ A,
             const typename Cfg::Storage* __restrict__ W, const float* __restrict__ dequant,
             float* __restrict__ C, int M, int N, int K, int tiles_m, int tiles_n, bool vec) {
  constexpr int kMT = Cfg::kMT, kNT = Cfg::kNT, kStages = Cfg::kStages;
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t smem0 = shared_addr(smem);
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  int tm, tn;
  block_tile(int(blockIdx.x), tiles_m, tiles_n, tm, tn);
  const int m0 = tm * Cfg::kBM, n0 = tn * Cfg::kBN;
  const int wm0 = (warp / Cfg::kWarpsN) * Cfg::kWM, wn0 = (warp % Cfg::kWarpsN) * Cfg::kWN;

  float acc[kMT][kNT][4];
#pragma unroll
  for (int i = 0; i < kMT; ++i)
#pragma unroll
    for (int j = 0; j < kNT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

  // Fragments of two mma steps (32 bytes of K each): the next step's ldmatrix is in flight
  // during this step's mma. A: matrices (rows 0-7 | 8-15) x (bytes 0-15 | 16-31) = a0..a3.
  // W: (rows n 0-7, bytes 0-15), (n 0-7, 16-31), (n 8-15, 0-15), (n 8-15, 16-31) = b0, b1 of two
  // n8 tiles. No transposes: both operands are K-major.
  uint32_t fa[2][kMT][4], fb[2][kNT][2];
  auto load_fragments = [&](int buf, uint32_t stage, int ks) {
#pragma unroll
    for (int i = 0; i < kMT; ++i)
      ldmatrix_x4(fa[buf][i], stage + Cfg::offset(wm0 + i * 16 + (lane & 15), ks * 2 + lane / 16));
#pragma unroll
    for (int j = 0; j < kNT; j += 2) {
      uint32_t r[4];
      ldmatrix_x4(
          r, stage + Cfg::kABytes +
                 Cfg::offset(wn0 + j * 8 + (lane & 7) + (lane / 16) * 8, ks * 2 + (lane / 8) % 2));
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
      for (int j = 0; j < kNT; ++j) Cfg::Element::mma(acc[i][j], fa[buf][i], fb[buf][j]);
  };
  constexpr int kSteps = kSliceBytes / 32;  // mma steps per slice
  static_assert(kSteps % 2 == 0, "a slice's last step refills fragment buffer 0 for the next");

  // Day 024's multistage order: one commit per slot (empty ones too, so that "group i holds
  // slice i"), one barrier per slice, and the next slice's first fragments loaded during the
  // last step of this one.
  const int ktiles = (K + Cfg::kSliceK - 1) / Cfg::kSliceK;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < ktiles)
      load_slice<Cfg>(smem0 + s * Cfg::kStageBytes, A, W, M, N, K, m0, n0, s * Cfg::kSliceK, vec,
                      tid);
    cp_async_commit();
  }
  cp_async_wait<kStages - 2>();
  __syncthreads();
  load_fragments(0, smem0, 0);
  for (int kt = 0; kt < ktiles; ++kt) {
    const int next = kt + kStages - 1;
    if (next < ktiles)
      load_slice<Cfg>(smem0 + (next % kStages) * Cfg::kStageBytes, A, W, M, N, K, m0, n0,
                      next * Cfg::kSliceK, vec, tid);
    cp_async_commit();
    const uint32_t stage = smem0 + (kt % kStages) * Cfg::kStageBytes;
#pragma unroll
    for (int ks = 0; ks < kSteps; ++ks) {
      if (ks + 1 < kSteps) {
        load_fragments((ks + 1) & 1, stage, ks + 1);
      } else {
        cp_async_wait<kStages - 2>();  // slice kt+1 has landed (this thread's part) ...
        __syncthreads();               // ... everyone's, and slice kt is free for a refill
        const int following = kt + 1 < ktiles ? kt + 1 : kt;
        load_fragments((ks + 1) & 1, smem0 + (following % kStages) * Cfg::kStageBytes, 0);
      }
      mma_step(ks & 1);
    }
  }
  cp_async_wait<0>();

  // Epilogue: the two dequantization scales, once per entry. Lane 4g + t holds C(g, 2t..2t+1)
  // and C(g+8, ..) of each 16 x 8 tile.
  const float scale = dequant[0] * dequant[1];
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int i = 0; i < kMT; ++i)
#pragma unroll
    for (int j = 0; j < kNT; ++j) {
      const int col = n0 + wn0 + j * 8 + 2 * t;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + wm0 + i * 16 + g + 8 * h;
        if (row >= M) continue;
        float* out = C + int64_t(row) * N + col;
        if (col < N) out[0] = acc[i][j][2 * h] * scale;
        if (col + 1 < N) out[1] = acc[i][j][2 * h + 1] * scale;
      }
    }
}

// ---- launchers ----------------------------------------------------------------------------------
void launch_quantize(const float* x, int64_t n, unsigned* amax_bits, __nv_fp8_e4m3* q,
                     float* dequant, int grid, cudaStream_t s) {
  CUDA_CHECK(cudaMemsetAsync(amax_bits, 0, sizeof(unsigned), s));
  absmax_kernel<<<grid, kQuantBlock, 0, s>>>(x, n, amax_bits);
  LAUNCH_CHECK();
  quantize_kernel<<<grid, kQuantBlock, 0, s>>>(x, n, amax_bits, q, dequant);
  LAUNCH_CHECK();
}

// The device data: the fp32 inputs, their e4m3 bytes, the same values as halves, the scales.
struct Operands {
  int64_t m, n, k;
  gpu100::DeviceBuffer<float> a, w;
  gpu100::DeviceBuffer<__nv_fp8_e4m3> qa, qw;
  gpu100::DeviceBuffer<__half> ha, hw;
  gpu100::DeviceBuffer<unsigned> amax_bits;  // [0] A, [1] W
  gpu100::DeviceBuffer<float> dequant;       // [0] d_a, [1] d_w
  gpu100::DeviceBuffer<float> c;
};

template <class Cfg>
const void* storage_of(const Operands& o, bool w) {
  if constexpr (std::is_same_v<typename Cfg::Element, E4M3>)
    return w ? static_cast<const void*>(o.qw.data()) : static_cast<const void*>(o.qa.data());
  else
    return w ? static_cast<const void*>(o.hw.data()) : static_cast<const void*>(o.ha.data());
}

template <class Cfg>
void launch_gemm(Operands& o, cudaStream_t s) {
  using Storage = typename Cfg::Storage;
  static const bool opted_in = [] {  // dynamic shared memory above 48 KB, once per kernel
    CUDA_CHECK(cudaFuncSetAttribute(gemm_mma<Cfg>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    Cfg::kSmemBytes));
    return true;
  }();
  (void)opted_in;
  const int64_t tiles_m = gpu100::ceil_div<int64_t>(o.m, Cfg::kBM);
  const int64_t tiles_n = gpu100::ceil_div<int64_t>(o.n, Cfg::kBN);
  if ((tiles_m + kGroupM) * tiles_n > int64_t(INT32_MAX))
    throw std::invalid_argument("too many tiles for one gridDim.x");
  const auto* A = static_cast<const Storage*>(storage_of<Cfg>(o, false));
  const auto* W = static_cast<const Storage*>(storage_of<Cfg>(o, true));
  const bool vec =
      o.k % Cfg::kElemsPerChunk == 0 && gpu100::is_aligned(A, 16) && gpu100::is_aligned(W, 16);
  gemm_mma<Cfg><<<unsigned(tiles_m * tiles_n), Cfg::kThreads, Cfg::kSmemBytes, s>>>(
      A, W, o.dequant.data(), o.c.data(), int(o.m), int(o.n), int(o.k), int(tiles_m), int(tiles_n),
      vec);
  LAUNCH_CHECK();
}

using F16Mma = Config<F16, 128, 128, 2, 4, 4>;
using E4M3Mma = Config<E4M3, 128, 128, 2, 4, 4>;

struct Version {
  const char* name;
  void (*launch)(Operands&, cudaStream_t);
  const void* kernel;
  int smem_bytes, threads, step_k, bm, bn, elem_bytes;
};
template <class Cfg>
Version version(const char* name) {
  return {name,
          launch_gemm<Cfg>,
          reinterpret_cast<const void*>(gemm_mma<Cfg>),
          Cfg::kSmemBytes,
          Cfg::kThreads,
          Cfg::kStepK,
          Cfg::kBM,
          Cfg::kBN,
          int(sizeof(typename Cfg::Storage))};
}
const Version kVersions[] = {version<F16Mma>("f16_mma"), version<E4M3Mma>("e4m3_mma")};

// ---- the cuBLASLt fp8 baseline ------------------------------------------------------------------
// Its documented fp8 requirements: A transposed and B not ("TN"), compute 32F, scale type 32F,
// 16-byte aligned pointers and dimensions (multiples of 16 for 1-byte types), sm_89+. Row-major
// C = A W^T read column-major is C^T = W A^T: cuBLASLt's A is W (K x N column-major, lda K,
// transposed), its B is A (K x M, ldb K), D is N x M with ldd N. Dimensions that are not
// multiples of 16 are zero-padded in copies (zeros add nothing to any product).
int64_t pad16(int64_t x) {
  return (x + 15) / 16 * 16;
}

class LtFp8Gemm {
 public:
  LtFp8Gemm(const Operands& o, const Quantized& qa, const Quantized& qw)
      : m_(o.m),
        n_(o.n),
        mp_(pad16(o.m)),
        np_(pad16(o.n)),
        kp_(pad16(o.k)),
        workspace_(kLtWorkspaceBytes) {
    padded_ = mp_ != m_ || np_ != n_ || kp_ != o.k;
    if (padded_) {
      a_pad_ = gpu100::DeviceBuffer<uint8_t>(pad_rows(qa.q, o.m, o.k));
      w_pad_ = gpu100::DeviceBuffer<uint8_t>(pad_rows(qw.q, o.n, o.k));
      d_pad_ = gpu100::DeviceBuffer<float>(size_t(mp_ * np_));
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
    const void* a = padded_ ? static_cast<const void*>(a_pad_.data()) : o.qa.data();
    const void* w = padded_ ? static_cast<const void*>(w_pad_.data()) : o.qw.data();
    float* d = padded_ ? d_pad_.data() : o.c.data();
    const float* d_w = o.dequant.data() + 1;
    const float* d_a = o.dequant.data();
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &d_w,
                                                sizeof d_w));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &d_a,
                                                sizeof d_a));
    CUBLAS_CHECK(cublasLtMatmul(lt_, desc_, &one, w, w_layout_, a, a_layout_, &zero, d, d_layout_,
                                d, d_layout_, &algo_, workspace_.data(), kLtWorkspaceBytes, s));
    if (padded_)  // the M x N corner of the padded result
      CUDA_CHECK(cudaMemcpy2DAsync(o.c.data(), size_t(n_) * 4, d_pad_.data(), size_t(np_) * 4,
                                   size_t(n_) * 4, size_t(m_), cudaMemcpyDeviceToDevice, s));
  }

 private:
  int64_t m_, n_, mp_, np_, kp_;
  static std::vector<uint8_t> pad_rows(const std::vector<uint8_t>& q, int64_t rows, int64_t k) {
    const int64_t rp = pad16(rows), kp = pad16(k);
    std::vector<uint8_t> out(size_t(rp * kp), 0);
    for (int64_t r = 0; r < rows; ++r) std::copy_n(q.begin() + r * k, k, out.begin() + r * kp);
    return out;
  }
  void init() {
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t t = CUBLAS_OP_T, nt = CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
    CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &nt, sizeof nt));
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

  gpu100::CublasLtHandle lt_;
  bool padded_ = false, found_ = false;
  gpu100::DeviceBuffer<uint8_t> a_pad_, w_pad_;
  gpu100::DeviceBuffer<float> d_pad_;
  gpu100::DeviceBuffer<unsigned char> workspace_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t w_layout_ = nullptr, a_layout_ = nullptr, d_layout_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
};

// ---- the checks ---------------------------------------------------------------------------------
// The CPU side: both quantizations, and the checked entries of C with their bounds per version
// kind (the bound depends on the mma depth: 32 products per e4m3 mma, 16 per fp16 one).
struct Reference {
  Quantized a, w;
  std::vector<std::pair<int64_t, int64_t>> points;
  std::vector<double> ref, bound_e4m3, bound_f16;
};

Reference reference_of(const std::vector<float>& a, const std::vector<float>& w, int64_t m,
                       int64_t n, int64_t k, int mma_bits, uint64_t seed) {
  Reference r{quantize_cpu(a), quantize_cpu(w)};
  r.points = gpu100::gemm_check_points(m, n, k, seed);
  const double scale = double(r.a.dequant) * double(r.w.dequant);
  for (const auto& [i, j] : r.points) {
    const uint8_t* qa = r.a.q.data() + i * k;
    const uint8_t* qw = r.w.q.data() + j * k;
    const Entry e8 = bound_of_entry(qa, qw, k, scale, {32, mma_bits});
    const Entry e16 = bound_of_entry(qa, qw, k, scale, {16, mma_bits});
    r.ref.push_back(e8.ref);
    r.bound_e4m3.push_back(e8.bound);
    r.bound_f16.push_back(e16.bound);
  }
  return r;
}

gpu100::CheckResult check_c(const gpu100::DeviceBuffer<float>& c, int64_t n, const Reference& r,
                            const std::vector<double>& bound) {
  const std::vector<float> got_all = c.download();
  std::vector<double> got;
  got.reserve(r.points.size());
  for (const auto& [i, j] : r.points) got.push_back(double(got_all[size_t(i * n + j)]));
  return gpu100::compare_within(got, r.ref, bound, "C");
}

// The quantization: bytes and both scales bit for bit.
gpu100::CheckResult check_quantized(const Operands& o, const Reference& r) {
  std::vector<uint8_t> qa(size_t(o.m * o.k)), qw(size_t(o.n * o.k));
  CUDA_CHECK(cudaMemcpy(qa.data(), o.qa.data(), qa.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(qw.data(), o.qw.data(), qw.size(), cudaMemcpyDeviceToHost));
  qa.insert(qa.end(), qw.begin(), qw.end());
  std::vector<uint8_t> want = r.a.q;
  want.insert(want.end(), r.w.q.begin(), r.w.q.end());
  const std::vector<float> scales = o.dequant.download();
  const std::vector<float> want_scales = {r.a.dequant, r.w.dequant};
  return gpu100::combine(gpu100::compare_exact(qa, want),
                         gpu100::compare_exact(scales, want_scales));
}

// The bound's size next to the results it bounds: the largest bound relative to max |C|.
std::string bound_note(const Reference& r, int mma_bits) {
  double max_ref = 0, max_bound = 0;
  for (size_t t = 0; t < r.ref.size(); ++t) {
    max_ref = std::max(max_ref, std::fabs(r.ref[t]));
    max_bound = std::max(max_bound, r.bound_e4m3[t]);
  }
  return fmt::format(
      "check: each entry within its bound for a tensor core keeping {} bits per mma{}; the "
      "largest e4m3 bound is {:.2e} of max|C| (--mma-bits 24: fp32 rounded once per mma)",
      mma_bits, mma_bits >= 24 ? " (fp32, rounded)" : ", truncating",
      max_ref > 0 ? max_bound / max_ref : 0.0);
}

// What the compiler and the occupancy calculator made of a version, and the bytes its block tile
// loads per output element: (BM + BN) K elem_bytes / (BM BN).
std::string resources(const Version& v, int64_t k) {
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, v.kernel));
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, v.kernel, v.threads,
                                                           size_t(v.smem_bytes)));
  return fmt::format(
      "{}: {} registers/thread, {} KB shared memory, {} block(s) per SM; {} of K per mma, {:.1f} "
      "bytes of A and W loaded per output",
      v.name, attr.numRegs, v.smem_bytes / 1024, blocks, v.step_k,
      double(v.bm + v.bn) * double(k) * v.elem_bytes / (double(v.bm) * v.bn));
}

std::string fp8_unsupported(const gpu100::DeviceInfo& dev) {
  if (dev.cc() >= 89) return "";
  return fmt::format(
      "fp8 e4m3 mma.sync and cvt need compute capability 8.9 or newer; this GPU "
      "is {} (only --kernel f16_mma runs here)",
      dev.cc_string());
}

// Skip on this device: an fp8 version is asked for and the GPU predates sm_89.
std::string skip_reason(const gpu100::Cli& cli, const gpu100::DeviceInfo& dev) {
  for (const Version& v : kVersions)
    if (v.elem_bytes == 1 && cli.want(v.name)) return fp8_unsupported(dev);
  return "";
}

// The e4m3 values as halves (exact: every e4m3 value is an fp16 value), for f16_mma.
std::vector<__half> as_halves(const std::vector<uint8_t>& q) {
  std::vector<__half> h(q.size());
  for (size_t i = 0; i < q.size(); ++i) h[i] = __float2half(e4m3_value(q[i]));
  return h;
}

// The quantization, once: on the GPU where it can (the fp8 versions run only there), checked bit
// for bit; else the CPU's scales are uploaded for f16_mma.
void quantize(gpu100::Context& ctx, Operands& o, const Reference& r) {
  if (!fp8_unsupported(ctx.device()).empty()) {
    const std::vector<float> scales = {r.a.dequant, r.w.dequant};
    o.dequant.upload(scales);
    return;
  }
  const int grid = int(
      std::min<int64_t>(gpu100::ceil_div<int64_t>(std::max(o.m, o.n) * o.k, kQuantBlock), 1024));
  launch_quantize(o.a.data(), o.m * o.k, o.amax_bits.data(), o.qa.data(), o.dequant.data(), grid,
                  nullptr);
  launch_quantize(o.w.data(), o.n * o.k, o.amax_bits.data() + 1, o.qw.data(), o.dequant.data() + 1,
                  grid, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  ctx.report().add_check("quantize (e4m3, per tensor)", check_quantized(o, r));
}

// The inputs: A like activations, W like weights at a sixteenth of that scale (each tensor's own
// scale maps it onto the e4m3 range), uniform around `mean`.
std::vector<float> make_inputs(size_t count, uint64_t seed, double mean, float magnitude) {
  std::vector<float> x = gpu100::random_floats(count, seed, float(mean) - 1.0f, float(mean) + 1.0f);
  for (float& v : x) v *= magnitude;
  return x;
}

gpu100::Measure measure_version(const Version& v, Operands& o, const Reference& r) {
  const std::vector<double>& bound = v.step_k == 32 ? r.bound_e4m3 : r.bound_f16;
  return {.name = v.name,
          .launch = [&v, &o](cudaStream_t s) { v.launch(o, s); },
          .reset = [&o] { o.c.poison(); },
          .check = [&o, &r, &bound] { return check_c(o.c, o.n, r, bound); },
          .work = gpu100::gemm_flops(o.m, o.n, o.k)};
}

void measure_baseline(gpu100::Context& ctx, Operands& o, const Reference& r,
                      std::unique_ptr<LtFp8Gemm>& plan) {
  if (!fp8_unsupported(ctx.device()).empty()) return;
  if (ctx.vendor_libraries()) {
    plan = std::make_unique<LtFp8Gemm>(o, r.a, r.w);
    if (!plan->found()) {
      ctx.report().note("cuBLASLt fp8 baseline not run: its heuristic offers no algorithm");
      return;
    }
    if (plan->padded())
      ctx.report().note(
          "cuBLASLt fp8 runs on copies zero-padded to multiples of 16 (its "
          "alignment rule); its rate counts the unpadded M N K");
  }
  ctx.measure({.name = "cublasLt fp8",
               .launch = [&o, &plan](cudaStream_t s) { plan->run(o, s); },
               .reset = [&o] { o.c.poison(); },
               .check = [&o, &r] { return check_c(o.c, o.n, r, r.bound_e4m3); },
               .work = gpu100::gemm_flops(o.m, o.n, o.k),
               .role = gpu100::Role::baseline,
               .vendor = true});
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "fp8 GEMM with per-tensor scales: absmax quantization to e4m3, mma.sync m16n8k32 with fp32 "
      "accumulation, dequantization in the epilogue; fp16 mma on the same values; vs cuBLASLt fp8");
  int64_t m = 4096, n = 4096, k = 4096;
  int mma_bits = 13;
  double mean = 0;
  cli.size("m", m, 257, "rows of A and C", kMaxDim);
  cli.size("n", n, 131, "rows of W (k contiguous), columns of C", kMaxDim);
  cli.size("k", k, 67, "columns of A and W (the dot-product length)", kMaxDim);
  cli.option("mma-bits", mma_bits,
             "bits the check assumes the tensor core keeps when it adds (24: fp32)", 8, 24);
  cli.option("mean", mean, "inputs are uniform in [mean - 1, mean + 1) (times 1/16 for W)", -8.0,
             8.0);
  cli.kernels_of(kVersions);
  cli.min_cc(80);  // ldmatrix, cp.async, mma.sync
  cli.require_device([&](const gpu100::DeviceInfo& dev) { return skip_reason(cli, dev); });
  cli.device_bytes([&] {
    const double mk = double(m) * double(k), nk = double(n) * double(k);
    return 7.0 * (mk + nk) + 4.0 * double(m) * double(n) * 2 + double(kLtWorkspaceBytes);
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("TFLOP/s");
    report.limit("fp8_tflops", ctx.device().peak_fp8_tensor_tflops(), "FP8 tensor peak");
    report.baseline_as_percent();
    report.intensity(gpu100::gemm_flops(m, n, k) /
                     (double(m) * double(k) + double(n) * double(k) + 4.0 * double(m) * double(n)));

    const std::vector<float> a = make_inputs(size_t(m * k), ctx.seed(), mean, 1.0f);
    const std::vector<float> w = make_inputs(size_t(n * k), ctx.seed() + 1, mean, 1.0f / 16);
    const Reference r = reference_of(a, w, m, n, k, mma_bits, ctx.seed());
    Operands o{m,
               n,
               k,
               gpu100::DeviceBuffer<float>(a),
               gpu100::DeviceBuffer<float>(w),
               gpu100::DeviceBuffer<__nv_fp8_e4m3>(size_t(m * k)),
               gpu100::DeviceBuffer<__nv_fp8_e4m3>(size_t(n * k)),
               gpu100::DeviceBuffer<__half>(as_halves(r.a.q)),
               gpu100::DeviceBuffer<__half>(as_halves(r.w.q)),
               gpu100::DeviceBuffer<unsigned>(2),
               gpu100::DeviceBuffer<float>(2),
               gpu100::DeviceBuffer<float>(size_t(m * n))};

    quantize(ctx, o, r);

    std::unique_ptr<LtFp8Gemm> plan;
    measure_baseline(ctx, o, r, plan);
    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) runs.push_back(measure_version(v, o, r));
    ctx.measure_all(runs);

    report.note(
        fmt::format("scales: d_a = {:.4g}, d_w = {:.4g} (max|x| / 448)", r.a.dequant, r.w.dequant));
    report.note(bound_note(r, mma_bits));
    for (const Version& v : kVersions)
      if (ctx.want(v.name)) report.note(resources(v, k));
  });
}
