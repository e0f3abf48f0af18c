// Day 024 - HGEMM in PTX: mma.sync m16n8k16, ldmatrix, XOR-swizzled shared memory, cp.async
//
// Day 023 reached the tensor cores through WMMA, whose fragments are opaque. Here the same
// C = A * B (fp16 A and B, fp32 accumulation, fp32 C, row-major, any M, N, K) is written with the
// instructions WMMA hides, as inline PTX, the way CUTLASS's Ampere kernels work:
//   mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32   one warp, a 16 x 8 x 16 product, in the
//       fragment layout the PTX ISA documents ("Matrix Fragments for mma.m16n8k16");
//   ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16     four 8 x 8 half matrices from shared
//       memory straight into that layout (.trans turns row-major B into the "col" operand);
//   cp.async.cg.shared.global [dst], [src], 16, src_bytes    a 16-byte copy global -> shared that
//       bypasses registers and does not block; src_bytes = 0 zero-fills: how edge tiles are padded.
// In plain row-major tiles the 8 rows an ldmatrix reads fall on 2 (A) or 1 (B) of the 8 16-byte
// bank groups; the XOR swizzle stores chunk c of row r at chunk c ^ f(r), so any 8 consecutive
// rows hit 8 different groups, without padding.
//
// Versions (one kernel template, hgemm_mma<Config<...>>; each step changes one thing)
//   mma_basic       128 x 128 x 32 block tile, 8 warps of 64 x 32, one shared stage filled
//                   through registers, plain row-major shared tiles: 4-way (A) and 8-way (B)
//                   conflicts in ldmatrix. Loads and math take turns.
//   mma_swizzled    the same with the XOR-swizzled layout: conflict-free ldmatrix.
//   mma_multistage  cp.async with 4 stages (64 KB, opt-in above 48 KB): slices k+1..k+3 load
//                   while slice k is multiplied, one barrier per slice.
//   mma_pipelined   128 x 256 x 32 block tile, 8 warps of 64 x 64, 4 stages (96 KB): more mma per
//                   ldmatrix, and shared-memory bandwidth is what caps these kernels.
// Each warp double-buffers its fragments (the ldmatrix of the next 16-deep step goes out before
// the mma of this one). A note per version gives its registers, shared memory and blocks per SM.
//
// Check: as day 023 - fp16 inputs from to_half, a double reference on the values the halves hold
// (half_values), tensor_core_gemm_tolerance(k); every entry at --quick, sampled entries (with the
// last row and column) at full size. Baseline: cublasGemmEx, fp16 in, fp32 compute, fp32 out.
//
// Run:  build/bin/day024 [--m 4096 --n 4096 --k 4096] [--kernel mma_pipelined] [--sweep]
//       build/bin/day024 --m 129 --n 67 --k 259      (odd shapes: the guarded edge paths)
#include <cuda_fp16.h>
#include <fmt/core.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"

namespace {

// Sizes are capped at 2^30, so a row or column index plus a tile offset stays inside int; element
// offsets (row * ld) are computed in int64.
constexpr int64_t kMaxDim = int64_t(1) << 30;
constexpr int kBK = 32;     // depth of a shared-memory slice (halves)
constexpr int kGroupM = 8;  // tile rows per group of the block numbering (L2 reuse)

// ---- kernels: the PTX, one wrapper per instruction ----------------------------------------------
// Shared-memory operands are 32-bit shared-window
// addresses. Every wrapper is volatile so the compiler keeps their order relative to each other
// and to the barriers. Built for an older GPU than sm_80 (never run: min_cc 80), they trap.
__device__ __forceinline__ uint32_t shared_addr(const void* p) {
  return uint32_t(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  // .cg: cache in L2 only - each slice is read once per block, L1 would only be polluted.
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

// Waits until at most `kPending` of this thread's most recent groups are still in flight.
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

// d = a * b + d for one 16 x 8 x 16 tile. Not volatile: it touches only registers, and the
// compiler may interleave it with the fragment loads.
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4],
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

// ---- kernels: the configurations and the kernel -------------------------------------------------
// One kernel configuration: block tile kBM x kBN x 32, kWarpsM x kWarpsN warps, kStages shared
// slices, swizzled or plain shared layout, cp.async or register-staged loads.
template <int BM, int BN, int WarpsM, int WarpsN, int Stages, bool Swizzle, bool Async,
          int MinBlocks>
struct Config {
  static constexpr int kBM = BM, kBN = BN, kWarpsM = WarpsM, kWarpsN = WarpsN;
  static constexpr int kStages = Stages, kMinBlocks = MinBlocks;
  static constexpr bool kSwizzle = Swizzle, kAsync = Async;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kWM = kBM / kWarpsM, kWN = kBN / kWarpsN;  // warp tile
  static constexpr int kMT = kWM / 16, kNT = kWN / 8;             // mma tiles per warp tile
  static constexpr int kChunksA = kBM * kBK / 8 / kThreads;        // 16-byte chunks per thread
  static constexpr int kChunksB = kBK * kBN / 8 / kThreads;
  static constexpr int kABytes = kBM * kBK * 2, kBBytes = kBK * kBN * 2;
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr int kSmemBytes = kStages * kStageBytes;

  static_assert(kWM % 16 == 0 && kWN % 16 == 0, "warp tile: whole m16 tiles, pairs of n8 tiles");
  static_assert(kChunksA * kThreads * 8 == kBM * kBK && kChunksB * kThreads * 8 == kBK * kBN,
                "slices split evenly over the threads");
  static_assert(kBN % 64 == 0, "the B swizzle permutes groups of 8 chunks within a row");
  static_assert(Async ? Stages >= 2 : Stages == 1,
                "cp.async pipelines need >= 2 stages; register-staged loads use one");

  // Byte offset, inside a stage's A tile (kBM rows of 32 halves = 64 bytes = 4 chunks), of
  // 16-byte chunk `chunk` of row `row`. Rows 2j and 2j+1 share one 128-byte bank line, so the
  // swizzle key is (row / 2) % 4: 8 consecutive rows at one chunk column cover all 8 groups.
  GPU100_HD static constexpr uint32_t a_offset(int row, int chunk) {
    return uint32_t(row * 64 + 16 * (kSwizzle ? chunk ^ ((row >> 1) & 3) : chunk));
  }
  // Byte offset, inside a stage's B tile (32 rows k of kBN halves), of chunk `chunk` of row k.
  // The key k % 8 permutes chunks within each aligned group of 8 (one 128-byte line).
  GPU100_HD static constexpr uint32_t b_offset(int k, int chunk) {
    return uint32_t(k * kBN * 2 + 16 * (kSwizzle ? chunk ^ (k & 7) : chunk));
  }
};

// Lane roles in ldmatrix.x4. A (non-transposed): matrices 0..3 = (rows 0-7, k 0-7),
// (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15) = registers a0..a3 of the mma.
GPU100_HD constexpr int ldsm_a_row(int lane) { return lane & 15; }
GPU100_HD constexpr int ldsm_a_chunk(int lane) { return lane >> 4; }
// B (transposed, rows of the smem tile are k): matrices 0..3 = (k 0-7, n 0-7), (k 8-15, n 0-7),
// (k 0-7, n 8-15), (k 8-15, n 8-15) = b0, b1 of n-tile 0, then b0, b1 of n-tile 1.
GPU100_HD constexpr int ldsm_b_k(int lane) { return (lane & 7) + ((lane >> 3) & 1) * 8; }
GPU100_HD constexpr int ldsm_b_chunk(int lane) { return lane >> 4; }

// The block's tile, with blocks numbered in groups of kGroupM tile rows: consecutive blocks walk
// down a group's tile rows first, then across its columns, so the blocks in flight share a few
// A slices and a few B slices instead of one A slice and all of B.
GPU100_HD inline void block_tile(int bid, int tiles_m, int tiles_n, int& tm, int& tn) {
  const int width = kGroupM * tiles_n;
  const int group = bid / width, first = group * kGroupM;
  const int rows = tiles_m - first < kGroupM ? tiles_m - first : kGroupM;
  const int in_group = bid - group * width;
  tm = first + in_group % rows;
  tn = in_group / rows;
}

struct EdgeFlags {
  bool vec_a;   // K % 8 == 0 and A 16-byte aligned: A rows split into aligned 16-byte chunks
  bool vec_b;   // N % 8 == 0 and B 16-byte aligned
  bool pair_c;  // N even and C 8-byte aligned: float2 stores
};

// One 16-byte chunk of a row-major rows x cols half matrix: elements (row, col .. col+7) into the
// shared address dst, zeros for the part outside the matrix.
template <bool kAsync>
__device__ __forceinline__ void copy_chunk(uint32_t dst, const __half* __restrict__ src, int row,
                                           int rows, int col, int cols, bool vec) {
  if (vec) {
    // cols % 8 == 0 and col % 8 == 0: the chunk is entirely inside or entirely outside.
    const bool inside = row < rows && col < cols;
    const __half* p = inside ? src + (int64_t(row) * cols + col) : src;  // never out of bounds
    if constexpr (kAsync) {
      cp_async_16(dst, p, inside ? 16 : 0);
    } else {
      st_shared_16(dst, inside ? *reinterpret_cast<const uint4*>(p) : make_uint4(0, 0, 0, 0));
    }
    return;
  }
  uint32_t w[4] = {0, 0, 0, 0};
  if (row < rows) {
    const __half* p = src + int64_t(row) * cols;
#pragma unroll
    for (int e = 0; e < 8; ++e)
      if (col + e < cols) w[e / 2] |= uint32_t(__half_as_ushort(p[col + e])) << (16 * (e % 2));
  }
  st_shared_16(dst, make_uint4(w[0], w[1], w[2], w[3]));
}

// The block's slice k0 .. k0+31 of A (rows m0..) and B (columns n0..) into one stage.
template <class Cfg>
__device__ __forceinline__ void load_slice(uint32_t stage, const __half* __restrict__ A,
                                           const __half* __restrict__ B, int M, int N, int K,
                                           int m0, int n0, int k0, EdgeFlags f, int tid) {
#pragma unroll
  for (int i = 0; i < Cfg::kChunksA; ++i) {
    const int id = tid + i * Cfg::kThreads;
    const int row = id / (kBK / 8), chunk = id % (kBK / 8);
    copy_chunk<Cfg::kAsync>(stage + Cfg::a_offset(row, chunk), A, m0 + row, M, k0 + chunk * 8, K,
                            f.vec_a);
  }
#pragma unroll
  for (int i = 0; i < Cfg::kChunksB; ++i) {
    const int id = tid + i * Cfg::kThreads;
    const int k = id / (Cfg::kBN / 8), chunk = id % (Cfg::kBN / 8);
    copy_chunk<Cfg::kAsync>(stage + Cfg::kABytes + Cfg::b_offset(k, chunk), B, k0 + k, K,
                            n0 + chunk * 8, N, f.vec_b);
  }
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    hgemm_mma(const __half* __restrict__ A, const __half* __restrict__ B, float* __restrict__ C,
              int M, int N, int K, int tiles_m, int tiles_n, EdgeFlags flags) {
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

  // Fragments of two 16-deep steps: the next step's ldmatrix is in flight during this step's mma.
  uint32_t fa[2][kMT][4], fb[2][kNT][2];
  auto load_fragments = [&](int buf, uint32_t stage, int ks) {
#pragma unroll
    for (int i = 0; i < kMT; ++i)
      ldmatrix_x4(fa[buf][i], stage + Cfg::a_offset(wm0 + i * 16 + ldsm_a_row(lane),
                                                    ks * 2 + ldsm_a_chunk(lane)));
#pragma unroll
    for (int j = 0; j < kNT; j += 2) {
      uint32_t r[4];
      ldmatrix_x4_trans(r, stage + Cfg::kABytes +
                               Cfg::b_offset(ks * 16 + ldsm_b_k(lane),
                                             (wn0 + j * 8) / 8 + ldsm_b_chunk(lane)));
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
      for (int j = 0; j < kNT; ++j) mma_16816(acc[i][j], fa[buf][i], fb[buf][j]);
  };
  constexpr int kSteps = kBK / 16;  // 16-deep mma steps per slice
  static_assert(kSteps % 2 == 0, "a slice's last step refills fragment buffer 0 for the next");

  const int ktiles = (K + kBK - 1) / kBK;  // K <= 2^30: no overflow
  if constexpr (Cfg::kAsync) {
    // Prologue: slices 0 .. kStages-2 in flight. One commit per slot even when there is no
    // slice left, so that "group i holds slice i" and the wait counts below stay exact.
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < ktiles) load_slice<Cfg>(smem0 + s * Cfg::kStageBytes, A, B, M, N, K, m0, n0, s * kBK,
                                      flags, tid);
      cp_async_commit();
    }
    cp_async_wait<kStages - 2>();  // slice 0 has landed (this thread's part) ...
    __syncthreads();               // ... and everyone's
    load_fragments(0, smem0, 0);
    // Steady state (CUTLASS's "multistage" order). Iteration kt refills the stage of slice kt-1
    // with slice kt+kStages-1, multiplies slice kt, and in its last step already waits for
    // slice kt+1 and loads that slice's first fragments, so the tensor cores are busy with the
    // last mma of slice kt while those ldmatrix are in flight. One barrier per slice, with two
    // jobs: slice kt+1 is visible to every warp, and every warp has done all its ldmatrix of
    // slice kt, whose stage iteration kt+1 refills (in iteration 0 the refilled stage,
    // kStages-1, has not been used yet).
    for (int kt = 0; kt < ktiles; ++kt) {
      const int next = kt + kStages - 1;
      if (next < ktiles)
        load_slice<Cfg>(smem0 + (next % kStages) * Cfg::kStageBytes, A, B, M, N, K, m0, n0,
                        next * kBK, flags, tid);
      cp_async_commit();
      const uint32_t stage = smem0 + (kt % kStages) * Cfg::kStageBytes;
#pragma unroll
      for (int ks = 0; ks < kSteps; ++ks) {
        if (ks + 1 < kSteps) {
          load_fragments((ks + 1) & 1, stage, ks + 1);
        } else {
          // kStages-1+kt+1 groups are committed; kStages-2 pending means slice kt+1 landed.
          cp_async_wait<kStages - 2>();
          __syncthreads();  // ks is a compile-time constant here: no divergent barrier
          // The last iteration reloads its own slice (unused, harmless: nobody writes it any
          // more). Loading unconditionally matters: behind an `if`, the buffer's old contents
          // would have to stay live through this step too - 32 registers, and spills.
          const int following = kt + 1 < ktiles ? kt + 1 : kt;
          load_fragments((ks + 1) & 1, smem0 + (following % kStages) * Cfg::kStageBytes, 0);
        }
        mma_step(ks & 1);
      }
    }
    cp_async_wait<0>();  // only empty groups remain; leave nothing in flight at exit
  } else {
    for (int kt = 0; kt < ktiles; ++kt) {
      load_slice<Cfg>(smem0, A, B, M, N, K, m0, n0, kt * kBK, flags, tid);
      __syncthreads();  // the slice is complete before any warp reads it
      load_fragments(0, smem0, 0);
#pragma unroll
      for (int ks = 0; ks < kSteps; ++ks) {
        if (ks + 1 < kSteps) load_fragments((ks + 1) & 1, smem0, ks + 1);
        mma_step(ks & 1);
      }
      __syncthreads();  // every warp is done with it before it is overwritten
    }
  }

  // Epilogue straight from the accumulators: lane 4g + t holds C(g, 2t..2t+1) and C(g+8, ..) of
  // each 16 x 8 tile. A quad writes 32 contiguous bytes of a row: whole sectors.
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
        const float x = acc[i][j][2 * h], y = acc[i][j][2 * h + 1];
        if (flags.pair_c && col + 1 < N) {
          *reinterpret_cast<float2*>(out) = make_float2(x, y);
        } else {
          if (col < N) out[0] = x;
          if (col + 1 < N) out[1] = y;
        }
      }
    }
}

// ---- launchers ----------------------------------------------------------------------------------
using Basic = Config<128, 128, 2, 4, 1, false, false, 1>;
using Swizzled = Config<128, 128, 2, 4, 1, true, false, 1>;
using Multistage = Config<128, 128, 2, 4, 4, true, true, 1>;
using Pipelined = Config<128, 256, 2, 4, 4, true, true, 1>;

template <class Cfg>
void launch_mma(const __half* A, const __half* B, float* C, int M, int N, int K,
                cudaStream_t s) {
  // Dynamic shared memory above 48 KB must be requested per kernel (once is enough).
  static const bool opted_in = [] {
    CUDA_CHECK(cudaFuncSetAttribute(hgemm_mma<Cfg>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    Cfg::kSmemBytes));
    return true;
  }();
  (void)opted_in;
  const int64_t tiles_m = gpu100::ceil_div<int64_t>(M, Cfg::kBM);
  const int64_t tiles_n = gpu100::ceil_div<int64_t>(N, Cfg::kBN);
  // A group's blocks are numbered up to kGroupM * tiles_n past its start: keep that in int too.
  if ((tiles_m + kGroupM) * tiles_n > int64_t(INT32_MAX))
    throw std::invalid_argument("too many tiles for one gridDim.x");
  const EdgeFlags flags{K % 8 == 0 && gpu100::is_aligned(A, 16),
                        N % 8 == 0 && gpu100::is_aligned(B, 16),
                        N % 2 == 0 && gpu100::is_aligned(C, 8)};
  hgemm_mma<Cfg><<<unsigned(tiles_m * tiles_n), Cfg::kThreads, Cfg::kSmemBytes, s>>>(
      A, B, C, M, N, K, int(tiles_m), int(tiles_n), flags);
  LAUNCH_CHECK();
}

template <class Cfg>
void launch(const gpu100::GemmOperands& o, cudaStream_t s) {
  launch_mma<Cfg>(static_cast<const __half*>(o.A), static_cast<const __half*>(o.B),
                  static_cast<float*>(o.C), int(o.m), int(o.n), int(o.k), s);
}

// A version: its GEMM launcher (fp16 A and B, fp32 C) and what the notes report of its kernel.
struct Version {
  const char* name;
  gpu100::GemmLauncher launch;
  const void* kernel;
  int smem_bytes, threads;
};
template <class Cfg>
Version version(const char* name) {
  return {name, launch<Cfg>, reinterpret_cast<const void*>(hgemm_mma<Cfg>), Cfg::kSmemBytes,
          Cfg::kThreads};
}
const Version kVersions[] = {version<Basic>("mma_basic"), version<Swizzled>("mma_swizzled"),
                             version<Multistage>("mma_multistage"),
                             version<Pipelined>("mma_pipelined")};

std::vector<gpu100::GemmVersion> gemm_versions() {
  std::vector<gpu100::GemmVersion> out;
  for (const Version& v : kVersions) out.push_back({v.name, v.launch});
  return out;
}

// ---- analysis -----------------------------------------------------------------------------------
// Every version's stages must fit the device's opt-in shared memory per block.
void require_shared_memory(const gpu100::DeviceInfo& dev) {
  for (const Version& v : kVersions)
    if (size_t(v.smem_bytes) > dev.smem_per_block_optin)
      throw std::runtime_error(fmt::format(
          "{} needs {} bytes of shared memory per block, more than this GPU allows", v.name,
          v.smem_bytes));
}

// What the compiler and the occupancy calculator made of a version's design.
std::string resources(const Version& v) {
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, v.kernel));
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, v.kernel, v.threads,
                                                           size_t(v.smem_bytes)));
  return fmt::format(
      "{}: {} registers/thread, {} KB shared memory, {} block(s) of {} threads per SM", v.name,
      attr.numRegs, v.smem_bytes / 1024, blocks, v.threads);
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "fp16 GEMM with fp32 accumulation in inline PTX: mma.sync m16n8k16 + ldmatrix, XOR-swizzled "
      "shared memory, cp.async multistage pipeline; vs cublasGemmEx");
  gpu100::GemmArgs args;  // --m --n --k --sweep
  args.add_to(cli, kMaxDim, gpu100::GemmDtype::F16);
  cli.kernels_of(kVersions);
  cli.min_cc(80);  // mma.sync m16n8k16 and cp.async are Ampere instructions

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    require_shared_memory(ctx.device());
    gpu100::GemmProblem problem(ctx, args.m, args.n, args.k, gpu100::GemmDtype::F16);
    ctx.report().note("on Hopper cuBLAS uses wgmma, which mma.sync cannot match");
    problem.run(gemm_versions(), args.sweep);
    for (const Version& v : kVersions)
      if (ctx.want(v.name)) ctx.report().note(resources(v));
  });
}
