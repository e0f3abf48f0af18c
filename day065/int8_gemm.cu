// Day 065 - int8 GEMM: dp4a on the CUDA cores, mma.sync s8 on the tensor cores, int32 accumulation
//
// Quantized inference (day 061) multiplies int8 activations by int8 weights and adds the products
// in int32: no rounding anywhere, so the result is exact and the check is equality. Here
//   C[M x N] (int32, row-major) = A[M x K] * B^T,   A int8 row-major, B int8 given as N x K
// row-major (the weight of a linear layer, out x in). Both operands keep k contiguous because both
// instructions taught today take four consecutive k of an operand packed in one 32-bit register:
//   dp4a.s32.s32 d, a, b, c       d = c + a.b0*b.b0 + ... + a.b3*b.b3 (signed bytes): 4
//       multiply-adds per thread, 128 per warp instruction, on the ordinary integer pipe;
//   mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32     a 16 x 8 x 32 product by one warp: 4096
//       multiply-adds per warp instruction, 32 times dp4a's, on the tensor cores.
// The "col" operand of the mma is B stored n by n with k contiguous, which is exactly our B: both
// A and B tiles are rows of k in shared memory and ldmatrix (no .trans; it has none for 8-bit
// elements anyway) delivers both fragments.
//
// Versions
//   dp4a   64 x 64 block tile, 32-deep k slices through shared memory, stored k-word-major (with 4
//          words of padding: conflict-free stores); each thread owns 4 x 4 outputs, so each 4-deep
//          k step is two 16-byte shared loads (4 words of A, 4 of B) feeding 16 dp4a.
//   mma    128 x 128 block tile, 64-deep slices in 3 cp.async stages, 64-byte rows XOR-swizzled so
//          that the 8 rows of an ldmatrix fall on 8 different 16-byte bank groups; 8 warps of
//          64 x 32, each k32 step 4 + 2 ldmatrix.x4 feeding 16 mma.
// Edges: rows and columns past M and N load as zeros and are not stored; the last k slice is
// zero-padded past K (zeros add nothing to a dot product), so any K works. Whole 4-byte words
// (dp4a, K % 4 == 0) and 16-byte cp.async chunks (mma, K % 16 == 0) are used when the rows are
// aligned to them, bytes one by one otherwise.
//
// Exactness: |a b| <= 128 * 128 = 2^14, so every partial sum of K products lies within K * 2^14;
// K <= 131071 keeps that below 2^31, and int32 accumulation (dp4a's wraps, mma's without
// .satfinite wraps) never overflows: larger K is refused (exit 2). The --inputs min case fills A
// and B with -128, every entry then is exactly K * 2^14, the largest sum possible.
// A table gives each version's math instructions from its tiles and the fraction of their
// multiply-adds that touch real data (the rest multiply the padding of partial tiles).
// Check: an int64 CPU dot product, compared exactly: every entry at --quick sizes, ~4096 sampled
// entries (corners, last row and column, random) beyond.
// Baseline: cuBLASLt, int8 A and B, int32 C, CUBLAS_COMPUTE_32I, in the "TN" form its int8 tensor
// core (IMMA) kernels require (row-major C = A B^T is column-major C^T = op_T(B) A). Those kernels
// also need leading dimensions and the dimensions m and k that it sees to be multiples of 4: N and
// K here. Other sizes run without the baseline (a note says why).
//
// Run:  build/bin/day065 [--m 4096 --n 4096 --k 4096] [--kernel dp4a,mma] [--inputs min]
//       build/bin/day065 --m 257 --n 131 --k 67       (odd shapes: the zero-padded edge paths)
#include <cublasLt.h>
#include <fmt/core.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"

namespace {

constexpr int64_t kMaxDim = int64_t(1) << 24;  // M, N: tile indices and row * K stay in range
// The largest K whose worst dot product, K * 128 * 128, still fits in int32.
constexpr int64_t kMaxK = int64_t(std::numeric_limits<int32_t>::max()) / (128 * 128);
constexpr size_t kLtWorkspaceBytes = size_t(32) << 20;

// ---- CPU reference ------------------------------------------------------------------------------
// C[i][j] in int64 (which no K here can overflow), at the entries the check compares.
struct Reference {
  std::vector<std::pair<int64_t, int64_t>> points;
  std::vector<int64_t> c;
};

Reference int8_gemm_cpu(const std::vector<int8_t>& A, const std::vector<int8_t>& B, int64_t m,
                        int64_t n, int64_t k, uint64_t seed) {
  Reference r;
  r.points = gpu100::gemm_check_points(m, n, k, seed);
  r.c.reserve(r.points.size());
  for (const auto& [i, j] : r.points) {
    int64_t acc = 0;
    const int8_t* a = A.data() + i * k;
    const int8_t* b = B.data() + j * k;
    for (int64_t p = 0; p < k; ++p) acc += int64_t(a[p]) * int64_t(b[p]);
    r.c.push_back(acc);
  }
  return r;
}

gpu100::CheckResult check_c(const std::vector<int32_t>& C, int64_t n, const Reference& ref) {
  gpu100::ErrorStats e(gpu100::Tolerance::Exact());
  for (size_t t = 0; t < ref.points.size(); ++t) {
    const auto [i, j] = ref.points[t];
    e.add(double(C[size_t(i * n + j)]), double(ref.c[t]), i * n + j);
  }
  return e.finish();
}

// ---- kernels: dp4a ------------------------------------------------------------------------------
namespace dp4a_tile {
constexpr int kBM = 64, kBN = 64;  // block tile
constexpr int kBK = 32;            // bytes of k per shared slice
constexpr int kWords = kBK / 4;    // 32-bit words of k per row of a slice
constexpr int kThreads = 256;      // 16 x 16 threads, 4 x 4 outputs each
constexpr int kTM = 4, kTN = 4;
// A slice is stored word-major: S[w][row]. The threads storing one warp's words cover 4 rows x 8
// words; with rows 64 + 4 words apart the 32 words land in 32 different banks.
constexpr int kPad = 4;
static_assert(kBM == 16 * kTM && kBN == 16 * kTN, "16 x 16 threads cover the block tile");
static_assert(kBM * kWords == 2 * kThreads, "each thread loads two words of each slice");
}  // namespace dp4a_tile

// Bytes k .. k+3 of row `row` of a rows x K int8 matrix as one little-endian word, zeros for the
// bytes outside. `whole`: K % 4 == 0 and the matrix 4-byte aligned, so a word is all in or all out.
__device__ __forceinline__ int load_word(const int8_t* __restrict__ src, int row, int rows, int k,
                                         int K, bool whole) {
  if (row >= rows || k >= K) return 0;
  const int8_t* p = src + (int64_t(row) * K + k);
  if (whole) return *reinterpret_cast<const int*>(p);
  uint32_t w = 0;
  for (int e = 0; e < 4 && k + e < K; ++e) w |= uint32_t(uint8_t(p[e])) << (8 * e);
  return int(w);
}

struct Dp4aFlags {
  bool whole_words;  // K % 4 == 0, A and B 4-byte aligned
  bool vec_c;        // N % 4 == 0, C 16-byte aligned: int4 stores
};

__global__ void __launch_bounds__(dp4a_tile::kThreads)
    gemm_dp4a(const int8_t* __restrict__ A, const int8_t* __restrict__ B, int32_t* __restrict__ C,
              int M, int N, int K, int tiles_n, Dp4aFlags flags) {
  using namespace dp4a_tile;
  __shared__ __align__(16) int As[kWords][kBM + kPad];
  __shared__ __align__(16) int Bs[kWords][kBN + kPad];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int m0 = int(blockIdx.x) / tiles_n * kBM, n0 = int(blockIdx.x) % tiles_n * kBN;

  int acc[kTM][kTN] = {};
  for (int k0 = 0; k0 < K; k0 += kBK) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int id = tid + i * kThreads, row = id / kWords, w = id % kWords;
      As[w][row] = load_word(A, m0 + row, M, k0 + 4 * w, K, flags.whole_words);
      Bs[w][row] = load_word(B, n0 + row, N, k0 + 4 * w, K, flags.whole_words);
    }
    __syncthreads();  // the slice is complete before anyone reads it
#pragma unroll
    for (int w = 0; w < kWords; ++w) {
      const int4 a4 = *reinterpret_cast<const int4*>(&As[w][ty * kTM]);
      const int4 b4 = *reinterpret_cast<const int4*>(&Bs[w][tx * kTN]);
      const int a[kTM] = {a4.x, a4.y, a4.z, a4.w}, b[kTN] = {b4.x, b4.y, b4.z, b4.w};
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] = __dp4a(a[i], b[j], acc[i][j]);
    }
    __syncthreads();  // everyone is done with the slice before it is overwritten
  }

  const int col = n0 + tx * kTN;
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    const int row = m0 + ty * kTM + i;
    if (row >= M) break;
    int32_t* out = C + (int64_t(row) * N + col);
    if (flags.vec_c && col + kTN <= N) {
      *reinterpret_cast<int4*>(out) = make_int4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    } else {
#pragma unroll
      for (int j = 0; j < kTN; ++j)
        if (col + j < N) out[j] = acc[i][j];
    }
  }
}

// ---- kernels: mma.sync m16n8k32 -----------------------------------------------------------------
// The PTX, one wrapper per instruction. Shared-memory operands are 32-bit shared-window addresses;
// the memory wrappers are volatile so their order relative to the barriers stays as written.
// Built for an older GPU than sm_80 (never run: min_cc 80), they trap.
__device__ __forceinline__ uint32_t shared_addr(const void* p) {
  return uint32_t(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  // .cg: L2 only - each slice is read once per block. src_bytes = 0 writes 16 zeros.
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

__device__ __forceinline__ void st_shared_16(uint32_t dst, const uint32_t (&w)[4]) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(w[0]), "r"(w[1]),
               "r"(w[2]), "r"(w[3])
               : "memory");
}

// Four 8 x 16-byte matrices; lanes 8i .. 8i+7 give the row addresses of matrix i, and register i
// receives matrix i: lane l holds bytes 4(l % 4) .. 4(l % 4)+3 of row l / 4.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#else
  __trap();
#endif
}

// d += a * b for one 16 x 8 x 32 tile, in the fragment layouts of the PTX ISA ("Matrix Fragments
// for mma.m16n8k32"): a0..a3 = (row g, k 4t..), (row g+8, k 4t..), (row g, k 16+4t..),
// (row g+8, k 16+4t..); b0, b1 = (k 4t.., col g), (k 16+4t.., col g); d0..d3 = (g, 2t), (g, 2t+1),
// (g+8, 2t), (g+8, 2t+1), with g = lane / 4 and t = lane % 4.
__device__ __forceinline__ void mma_s8_16832(int (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  __trap();
#endif
}

namespace mma_tile {
constexpr int kBM = 128, kBN = 128;  // block tile
constexpr int kBK = 64;              // bytes of k per slice: two k32 mma steps
constexpr int kStages = 3;
constexpr int kWarpsM = 2, kWarpsN = 4, kThreads = 32 * kWarpsM * kWarpsN;
constexpr int kWM = kBM / kWarpsM, kWN = kBN / kWarpsN;  // 64 x 32 warp tile
constexpr int kMT = kWM / 16, kNT = kWN / 8;             // 4 x 4 mma tiles per warp
constexpr int kTileBytes = kBM * kBK;                    // A (or B) part of a stage
constexpr int kStageBytes = 2 * kTileBytes;
constexpr int kSmemBytes = kStages * kStageBytes;
constexpr int kChunks = kBM * kBK / 16 / kThreads;  // 16-byte chunks of A (and of B) per thread
static_assert(kBM == kBN && kChunks * kThreads * 16 == kBM * kBK, "slices split evenly");
static_assert(kNT % 2 == 0, "B fragments come in pairs of n8 tiles per ldmatrix.x4");

// Byte offset of 16-byte chunk c (0..3) of row r in a tile of 64-byte rows. Rows 2j and 2j+1 share
// one 128-byte bank line; XOR-ing the chunk with (r / 2) % 4 puts the 8 rows an ldmatrix reads at
// one chunk column on 8 different 16-byte bank groups.
__host__ __device__ constexpr uint32_t swizzled(int r, int c) {
  return uint32_t(r * kBK + 16 * (c ^ ((r >> 1) & 3)));
}
}  // namespace mma_tile

struct MmaFlags {
  bool cp_async;  // K % 16 == 0 and A, B 16-byte aligned: every chunk all in or all out
  bool pair_c;    // N even and C 8-byte aligned: int2 stores
};

// One 16-byte chunk, bytes k .. k+15 of row `row` of a rows x K int8 matrix, into shared memory,
// zeros for the part outside the matrix.
__device__ __forceinline__ void copy_chunk(uint32_t dst, const int8_t* __restrict__ src, int row,
                                           int rows, int k, int K, bool cp_async) {
  if (cp_async) {
    const bool inside = row < rows && k < K;
    cp_async_16(dst, inside ? src + (int64_t(row) * K + k) : src, inside ? 16 : 0);
    return;
  }
  uint32_t w[4] = {0, 0, 0, 0};
  if (row < rows) {
    const int8_t* p = src + int64_t(row) * K;
    for (int e = 0; e < 16 && k + e < K; ++e)
      w[e / 4] |= uint32_t(uint8_t(p[k + e])) << (8 * (e % 4));
  }
  st_shared_16(dst, w);
}

// Slice k0 .. k0+63 of the block's rows of A (from m0) and of B (from n0) into one stage.
__device__ __forceinline__ void load_slice(uint32_t stage, const int8_t* __restrict__ A,
                                           const int8_t* __restrict__ B, int M, int N, int K,
                                           int m0, int n0, int k0, bool cp_async, int tid) {
  using namespace mma_tile;
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
    const int id = tid + i * kThreads, row = id / (kBK / 16), c = id % (kBK / 16);
    copy_chunk(stage + swizzled(row, c), A, m0 + row, M, k0 + 16 * c, K, cp_async);
    copy_chunk(stage + kTileBytes + swizzled(row, c), B, n0 + row, N, k0 + 16 * c, K, cp_async);
  }
}

__global__ void __launch_bounds__(mma_tile::kThreads)
    gemm_mma(const int8_t* __restrict__ A, const int8_t* __restrict__ B, int32_t* __restrict__ C,
             int M, int N, int K, int tiles_n, MmaFlags flags) {
  using namespace mma_tile;
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t smem0 = shared_addr(smem);
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int m0 = int(blockIdx.x) / tiles_n * kBM, n0 = int(blockIdx.x) % tiles_n * kBN;
  const int wm0 = warp / kWarpsN * kWM, wn0 = warp % kWarpsN * kWN;

  int acc[kMT][kNT][4] = {};
  const int ktiles = (K + kBK - 1) / kBK;
  // Slices 0 .. kStages-2 in flight; one commit per slot even without a slice, so that group i
  // always holds slice i and the wait count below stays exact.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < ktiles)
      load_slice(smem0 + s * kStageBytes, A, B, M, N, K, m0, n0, s * kBK, flags.cp_async, tid);
    cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<kStages - 2>();  // this thread's part of slice kt has landed ...
    __syncthreads();  // ... and everyone's; and every warp is done with slice kt-1, whose stage
                      // the load below refills
    const int next = kt + kStages - 1;
    if (next < ktiles)
      load_slice(smem0 + next % kStages * kStageBytes, A, B, M, N, K, m0, n0, next * kBK,
                 flags.cp_async, tid);
    cp_async_commit();

    const uint32_t a_tile = smem0 + kt % kStages * kStageBytes, b_tile = a_tile + kTileBytes;
#pragma unroll
    for (int ks = 0; ks < kBK / 32; ++ks) {
      uint32_t fa[kMT][4], fb[kNT][2];
      // A: matrices (rows 0-7 | 8-15) x (k 0-15 | 16-31) of the 16-row tile = a0..a3.
#pragma unroll
      for (int i = 0; i < kMT; ++i)
        ldmatrix_x4(fa[i], a_tile + swizzled(wm0 + i * 16 + (lane & 15), 2 * ks + (lane >> 4)));
        // B: matrices (n 0-7, k 0-15), (n 0-7, k 16-31), (n 8-15, k 0-15), (n 8-15, k 16-31) =
        // b0, b1 of n tile j, then b0, b1 of n tile j+1.
#pragma unroll
      for (int j = 0; j < kNT; j += 2) {
        uint32_t r[4];
        ldmatrix_x4(r, b_tile + swizzled(wn0 + j * 8 + (lane & 7) + (lane >> 4) * 8,
                                         2 * ks + ((lane >> 3) & 1)));
        fb[j][0] = r[0];
        fb[j][1] = r[1];
        fb[j + 1][0] = r[2];
        fb[j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < kMT; ++i)
#pragma unroll
        for (int j = 0; j < kNT; ++j) mma_s8_16832(acc[i][j], fa[i], fb[j]);
    }
  }
  cp_async_wait<0>();  // only empty groups remain; leave nothing in flight at exit

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
        int32_t* out = C + (int64_t(row) * N + col);
        if (flags.pair_c && col + 1 < N) {
          *reinterpret_cast<int2*>(out) = make_int2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        } else {
          if (col < N) out[0] = acc[i][j][2 * h];
          if (col + 1 < N) out[1] = acc[i][j][2 * h + 1];
        }
      }
    }
}

// ---- launchers ----------------------------------------------------------------------------------
struct Operands {
  gpu100::DeviceBuffer<int8_t> a, b;
  gpu100::DeviceBuffer<int32_t> c;
  int64_t m, n, k;
};

void launch_dp4a(Operands& o, cudaStream_t s) {
  using namespace dp4a_tile;
  const int64_t tiles_m = gpu100::ceil_div<int64_t>(o.m, kBM);
  const int64_t tiles_n = gpu100::ceil_div<int64_t>(o.n, kBN);
  const Dp4aFlags flags{
      o.k % 4 == 0 && gpu100::is_aligned(o.a.data(), 4) && gpu100::is_aligned(o.b.data(), 4),
      o.n % 4 == 0 && gpu100::is_aligned(o.c.data(), 16)};
  gemm_dp4a<<<unsigned(tiles_m * tiles_n), kThreads, 0, s>>>(
      o.a.data(), o.b.data(), o.c.data(), int(o.m), int(o.n), int(o.k), int(tiles_n), flags);
  LAUNCH_CHECK();
}

void launch_mma(Operands& o, cudaStream_t s) {
  using namespace mma_tile;
  // 48 KB is the most a block gets without asking; asking once makes the size explicit.
  static const bool opted_in = [] {
    CUDA_CHECK(
        cudaFuncSetAttribute(gemm_mma, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    return true;
  }();
  (void)opted_in;
  const int64_t tiles_m = gpu100::ceil_div<int64_t>(o.m, kBM);
  const int64_t tiles_n = gpu100::ceil_div<int64_t>(o.n, kBN);
  const MmaFlags flags{
      o.k % 16 == 0 && gpu100::is_aligned(o.a.data(), 16) && gpu100::is_aligned(o.b.data(), 16),
      o.n % 2 == 0 && gpu100::is_aligned(o.c.data(), 8)};
  gemm_mma<<<unsigned(tiles_m * tiles_n), kThreads, kSmemBytes, s>>>(
      o.a.data(), o.b.data(), o.c.data(), int(o.m), int(o.n), int(o.k), int(tiles_n), flags);
  LAUNCH_CHECK();
}

struct Version {
  const char* name;
  void (*launch)(Operands&, cudaStream_t);
};
const Version kVersions[] = {{"dp4a", launch_dp4a}, {"mma", launch_mma}};

// ---- the cuBLASLt baseline ----------------------------------------------------------------------
// Why cuBLASLt's int8 tensor-core kernels cannot take this problem, or "" when they can. Through
// the row-major identity its m is our N, its k our K, its leading dimensions K, K and N; its
// documented requirements (cublasLtMatmul, "To use IMMA kernels", regular data ordering): "TN"
// (A transposed, B not), pointers 4-byte aligned (cudaMalloc gives 256), leading dimensions and
// the dimensions m and k multiples of 4.
std::string lt_int8_unsupported(int64_t n, int64_t k) {
  if (n % 4 == 0 && k % 4 == 0) return "";
  return fmt::format(
      "cuBLASLt int8 baseline not run: its int8 tensor-core kernels need N and K to be multiples "
      "of 4 (leading dimensions and its m and k), here N = {}, K = {}",
      n, k);
}

// One int8 matmul plan: C^T (column-major N x M, ld N) = op_T(B') * A', where B' is our B read
// column-major (K x N, ld K) and A' our A read column-major (K x M, ld K).
class LtInt8Gemm {
 public:
  LtInt8Gemm(int64_t m, int64_t n, int64_t k) : workspace_(kLtWorkspaceBytes) {
    try {
      init(m, n, k);
    } catch (...) {
      destroy();
      throw;
    }
  }
  ~LtInt8Gemm() { destroy(); }
  LtInt8Gemm(const LtInt8Gemm&) = delete;
  LtInt8Gemm& operator=(const LtInt8Gemm&) = delete;
  bool found() const { return found_; }

  void run(Operands& o, cudaStream_t s) {
    const int32_t alpha = 1, beta = 0;  // scale type int32
    CUBLAS_CHECK(cublasLtMatmul(lt_, desc_, &alpha, o.b.data(), b_layout_, o.a.data(), a_layout_,
                                &beta, o.c.data(), c_layout_, o.c.data(), c_layout_, &algo_,
                                workspace_.data(), kLtWorkspaceBytes, s));
  }

 private:
  void init(int64_t m, int64_t n, int64_t k) {
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32I, CUDA_R_32I));
    const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &transpose,
                                                sizeof transpose));
    CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof none));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_layout_, CUDA_R_8I, uint64_t(k), uint64_t(n), k));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_layout_, CUDA_R_8I, uint64_t(k), uint64_t(m), k));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c_layout_, CUDA_R_32I, uint64_t(n), uint64_t(m), n));
    cublasLtMatmulPreference_t pref = nullptr;
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t ws = kLtWorkspaceBytes;
    cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    cublasLtMatmulHeuristicResult_t result{};
    int count = 0;
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulAlgoGetHeuristic(lt_, desc_, b_layout_, a_layout_, c_layout_, c_layout_,
                                          pref, 1, &result, &count);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED) return;  // found_ stays false: a note says so
    CUBLAS_CHECK(st);
    found_ = count > 0;
    algo_ = result.algo;
  }
  void destroy() {
    if (c_layout_) cublasLtMatrixLayoutDestroy(c_layout_);
    if (a_layout_) cublasLtMatrixLayoutDestroy(a_layout_);
    if (b_layout_) cublasLtMatrixLayoutDestroy(b_layout_);
    if (desc_) cublasLtMatmulDescDestroy(desc_);
    c_layout_ = a_layout_ = b_layout_ = nullptr;
    desc_ = nullptr;
  }

  gpu100::CublasLtHandle lt_;
  gpu100::DeviceBuffer<unsigned char> workspace_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, c_layout_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  bool found_ = false;
};

// ---- the versions: each one's run and check -----------------------------------------------------
// TOPS: 2 M N K integer operations (a multiply and an add per product) per 1e12 per second.
std::function<double(double)> tops_of(const Operands& o) {
  const double ops = 2.0 * double(o.m) * double(o.n) * double(o.k);
  return [ops](double ms) { return ms > 0 ? ops / (ms * 1e9) : 0.0; };
}

gpu100::Measure measure_version(const Version& v, Operands& o, const Reference& ref) {
  return {.name = v.name,
          .launch = [&v, &o](cudaStream_t s) { v.launch(o, s); },
          .reset = [&o] { o.c.poison(); },
          .check = [&o, &ref] { return check_c(o.c.download(), o.n, ref); },
          .rate = tops_of(o)};
}

// The baseline, checked like a version (a wrong baseline would make every ratio meaningless);
// under the emulator it is NOT RUN, and `plan` is null there.
void measure_baseline(gpu100::Context& ctx, Operands& o, const Reference& ref,
                      std::unique_ptr<LtInt8Gemm>& plan) {
  if (const std::string why = lt_int8_unsupported(o.n, o.k); !why.empty()) {
    ctx.report().note(why);
    return;
  }
  if (ctx.vendor_libraries()) {
    plan = std::make_unique<LtInt8Gemm>(o.m, o.n, o.k);
    if (!plan->found()) {
      ctx.report().note("cuBLASLt int8 baseline not run: its heuristic offers no algorithm");
      return;
    }
  }
  ctx.measure({.name = "cublasLt int8",
               .launch = [&o, &plan](cudaStream_t s) { plan->run(o, s); },
               .reset = [&o] { o.c.poison(); },
               .check = [&o, &ref] { return check_c(o.c.download(), o.n, ref); },
               .rate = tops_of(o),
               .role = gpu100::Role::baseline,
               .vendor = true});
}

// ---- analysis -----------------------------------------------------------------------------------
// The math instructions each version issues, from its tiles: whole block tiles and whole k slices,
// so at sizes that are no multiple of them part of the work multiplies padding zeros.
gpu100::Table math_table(int64_t m, int64_t n, int64_t k) {
  auto tiles = [](int64_t x, int64_t tile) { return double(gpu100::ceil_div<int64_t>(x, tile)); };
  const double dp4a = tiles(m, dp4a_tile::kBM) * tiles(n, dp4a_tile::kBN) *
                      (dp4a_tile::kThreads / 32) * tiles(k, dp4a_tile::kBK) * dp4a_tile::kWords *
                      dp4a_tile::kTM * dp4a_tile::kTN;
  const double mma = tiles(m, mma_tile::kBM) * tiles(n, mma_tile::kBN) * (mma_tile::kThreads / 32) *
                     tiles(k, mma_tile::kBK) * (mma_tile::kBK / 32) * mma_tile::kMT * mma_tile::kNT;
  const double useful = double(m) * double(n) * double(k);
  gpu100::Table t;
  t.title = "math instructions (derived from the tiles)";
  t.columns = {"version", "warp instructions", "multiply-adds each", "useful fraction"};
  t.add_row({"dp4a", (long long)dp4a, 32 * 4, useful / (dp4a * 32 * 4)});
  t.add_row({"mma", (long long)mma, 16 * 8 * 32, useful / (mma * 16 * 8 * 32)});
  return t;
}

// The inputs: uniform over all of int8, or every byte -128 (each entry then K * 2^14, the largest
// dot product int8 allows: the int32 range at K = 131071).
std::vector<int8_t> make_inputs(size_t count, uint64_t seed, bool minimum) {
  if (minimum) return std::vector<int8_t>(count, int8_t(-128));
  const std::vector<int32_t> r = gpu100::random_ints(count, seed, -128, 127);
  return std::vector<int8_t>(r.begin(), r.end());
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "int8 GEMM with int32 accumulation: dp4a on the CUDA cores, mma.sync m16n8k32 s8 on the "
      "tensor cores; exact against an int64 CPU GEMM; vs cuBLASLt int8");
  int64_t m = 4096, n = 4096, k = 4096;
  std::string inputs = "random";
  cli.size("m", m, 257, "rows of A and C", kMaxDim);
  cli.size("n", n, 131, "rows of B (k contiguous), columns of C", kMaxDim);
  cli.size("k", k, 67, "columns of A and of B (the dot-product length)", int64_t(1) << 30);
  cli.option("inputs", inputs, {"random", "min"},
             "random int8, or every byte -128 (the largest sums, K * 2^14)");
  cli.kernels_of(kVersions);
  cli.min_cc(80);  // mma.sync m16n8k32 s8, ldmatrix and cp.async: Ampere and later
  cli.validate([&]() -> std::string {
    if (k <= kMaxK) return "";
    return fmt::format(
        "--k {}: a dot product of k int8 products reaches k * 128 * 128, which "
        "must fit in int32: k <= {}",
        k, kMaxK);
  });
  cli.device_bytes([&] {
    return double(m) * double(k) + double(n) * double(k) + 4.0 * double(m) * double(n) +
           double(kLtWorkspaceBytes);
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("TOPS");
    // Dense int8 tensor-core throughput is twice the fp16 one on A100 and H100.
    report.limit("int8_tops", 2.0 * ctx.device().peak_fp16_tensor_tflops(),
                 "INT8 tensor peak (2x FP16 dense)");
    report.intensity(2.0 * double(m) * double(n) * double(k) /
                     (double(m) * double(k) + double(n) * double(k) + 4.0 * double(m) * double(n)));

    const auto a = make_inputs(size_t(m * k), ctx.seed(), inputs == "min");
    const auto b = make_inputs(size_t(n * k), ctx.seed() + 1, inputs == "min");
    const Reference ref = int8_gemm_cpu(a, b, m, n, k, ctx.seed());
    Operands o{gpu100::DeviceBuffer<int8_t>(a),
               gpu100::DeviceBuffer<int8_t>(b),
               gpu100::DeviceBuffer<int32_t>(size_t(m * n)),
               m,
               n,
               k};

    std::unique_ptr<LtInt8Gemm> plan;
    measure_baseline(ctx, o, ref, plan);
    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) runs.push_back(measure_version(v, o, ref));
    ctx.measure_all(runs);
    report.table(math_table(m, n, k));
  });
}
