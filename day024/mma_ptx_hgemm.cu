// Day 024 - HGEMM in PTX: mma.sync m16n8k16, ldmatrix, XOR-swizzled shared memory, cp.async
//
// Day 023 reached the tensor cores through WMMA, whose fragments are opaque. Here the same
// C = A * B (fp16 A and B, fp32 accumulation, fp32 C, row-major, any M, N, K) is written with
// the instructions WMMA hides, as inline PTX, which is how CUTLASS's Ampere kernels work:
//
//   mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32   one warp: a 16 x 8 x 16 product.
//       The fragment layout is documented (PTX ISA, "Matrix Fragments for mma.m16n8k16"):
//       with g = lane / 4 and t = lane % 4, a thread holds A(g, 2t..2t+1), A(g+8, 2t..),
//       A(g, 2t+8..), A(g+8, 2t+8..) as four half2 registers, B(2t..2t+1, g) and B(2t+8.., g)
//       as two, and C(g, 2t..2t+1), C(g+8, 2t..2t+1) as four floats.
//   ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16   one warp loads four 8 x 8 half matrices
//       from shared memory straight into that layout: lane l gives the address of row l % 8 of
//       matrix l / 8, and lane 4r + c receives the two halves (r, 2c), (r, 2c+1) of each matrix
//       - exactly an A fragment. B is row-major K x N in memory but the mma wants it "col"
//       (k pairs per register), so B rows go through .trans, which hands lane 4r + c the
//       elements (2c, r), (2c+1, r) instead. No shuffles, no transposed copies.
//   cp.async.cg.shared.global [dst], [src], 16, src_bytes   a 16-byte copy global -> shared
//       that does not pass through registers and does not block the thread; commit_group /
//       wait_group N track batches of them. With 3 slices in flight while the tensor cores work
//       on a fourth, the load latency disappears behind the math (a multistage pipeline).
//       src_bytes = 0 copies nothing and zero-fills the 16 bytes: how edge tiles are padded.
//
// Bank conflicts: ldmatrix reads 8 rows of 16 bytes per matrix. In a plain row-major tile those
// 8 rows are 64 bytes (A, 32 halves) or 256 bytes (B, 128 halves) apart, so they fall on 2 or 1
// of the 8 16-byte bank groups: 4-way and 8-way conflicts. The XOR swizzle stores 16-byte
// chunk c of row r at chunk c ^ f(r): f(r) = (r / 2) % 4 for A (two 64-byte rows share a
// 128-byte bank line), f(r) = r % 8 for B. Any 8 consecutive rows then hit 8 different bank
// groups, for the reads (ldmatrix) and for the cp.async writes, without padding bytes.
//
// Versions (one kernel template; each step changes one thing)
//   mma_basic       128 x 128 x 32 block tile, 8 warps of 64 x 32, single shared stage filled
//                   through registers (16-byte loads), plain row-major shared tiles: ldmatrix
//                   with 4-way (A) and 8-way (B) bank conflicts. Loads and math take turns.
//   mma_swizzled    the same with the XOR-swizzled layout: conflict-free ldmatrix.
//   mma_multistage  the same tile with cp.async and 4 stages (64 KB of shared memory, opt-in
//                   above 48 KB): slices k+1..k+3 load while slice k is multiplied, one barrier
//                   per slice.
//   mma_pipelined   128 x 256 x 32 block tile, 8 warps of 64 x 64, 4 stages (96 KB). A bigger
//                   warp tile does more mma per ldmatrix (32 mma per 8 ldmatrix.x4 per 16-deep
//                   step, against 16 per 6 for 64 x 32), which is what decides the speed below.
//   In all of them each warp double-buffers its fragments: the ldmatrix of the second 16-deep
//   step is issued before the mma of the first. The cp.async versions also prefetch across
//   slices: the last step of slice k waits for slice k+1, passes the barrier and loads its first
//   fragments before issuing its own mma, so the tensor cores never wait on a barrier alone.
//
// Design for the H100 (goal: >= 70% of cuBLAS HGEMM at 4096^3; UNMEASURED, nothing here has
// run on a GPU). Per SM and clock an H100 does 4096 dense fp16 FLOPs = one m16n8k16 mma, and
// shared memory delivers 128 bytes = a quarter of an ldmatrix.x4. Per 32-deep slice of a
// 128 x 256 tile the 8 warps issue 512 mma (512 clocks at peak) and 128 ldmatrix.x4 (512 clocks
// of shared-memory bandwidth) while cp.async writes 24 KB (192 clocks): shared memory caps this
// tile at ~73% of the tensor peak. A 128 x 128 tile of 64 x 32 warps caps at 50%, which is why
// the warp tile grows in the last step. The accumulators take 128 registers per thread, the
// double-buffered fragments 64 more: ptxas (CUDA 13.0) gives mma_pipelined 246 registers for
// sm_80 and 255 - the cap, with no spills - for sm_90, so 256 threads = one block per SM (8
// warps, 2 per scheduler), with 96 KB of the 227 KB of shared memory. Any added live value in
// the main loop would spill: the ptx test watches for it. Blocks are numbered in groups of
// 8 tile rows so that the A and B slices that concurrently running blocks read stay in L2.
// cuBLAS on an H100 runs wgmma (warpgroup MMA, sm_90a), which issues from shared memory without
// ldmatrix and without the register-file bottleneck; mma.sync is the Ampere instruction and is
// reported to reach roughly two thirds of Hopper's peak at best. Expect mma_pipelined below the
// 70% goal on an H100 (closer on an A100, where cuBLAS uses mma.sync too); what the numbers are
// is for the first GPU run to say.
//
// Edges: every chunk a cp.async copies must be a 16-byte aligned, in-range 16-byte piece of a
// row. When K % 8 == 0 (A) or N % 8 == 0 (B) every chunk of the matrix is (the base pointer is
// checked), and a chunk outside the matrix is copied with src_bytes = 0, which writes zeros.
// When K or N is not a multiple of 8 the rows themselves are misaligned, and that matrix's
// chunks are filled instead by guarded 2-byte loads packed into one 16-byte shared store - slow,
// but never out of bounds. Zero padding adds nothing to a product, so the math is the same for
// full and partial tiles; the epilogue writes only entries inside C (8-byte float2 stores when N
// is even, scalar stores otherwise).
//
// Check: fp16 inputs from to_half(random floats); CPU reference in double on the exact values
// the halves hold (half_values); tensor_core_gemm_tolerance(k), since fp16 x fp16 products are
// exact in fp32 and only the accumulation rounds - with truncation inside the tensor cores.
// Sampled entries (incl. the last row and column) at the full size, every entry at --quick. Baseline: cublasGemmEx, fp16 in, fp32 compute, fp32 out.
//
// Run:  build/bin/day024 [--m 4096 --n 4096 --k 4096] [--kernel mma_pipelined] [--sweep]
//       build/bin/day024 --m 129 --n 67 --k 259      (odd shapes: the guarded edge paths)
//       ncu --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum build/bin/day024
//           --kernel mma_basic,mma_swizzled --m 1024 --n 1024 --k 1024   (the conflicts, counted)
#include <cuda_fp16.h>

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

// ---------------------------------------------------------------------------------------------
// The PTX, one wrapper per instruction. Shared-memory operands are 32-bit shared-window
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

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
// The four versions.
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

// A version: its GEMM launcher (fp16 A and B, fp32 C) and what the notes report of its kernel.
struct Version {
  gpu100::GemmVersion gemm;
  const void* kernel;
  int smem_bytes, threads;
};
template <class Cfg>
void launch(const gpu100::GemmOperands& o, cudaStream_t s) {
  launch_mma<Cfg>(static_cast<const __half*>(o.A), static_cast<const __half*>(o.B),
                  static_cast<float*>(o.C), int(o.m), int(o.n), int(o.k), s);
}
template <class Cfg>
Version version(const char* name) {
  return {{name, launch<Cfg>}, reinterpret_cast<const void*>(hgemm_mma<Cfg>), Cfg::kSmemBytes,
          Cfg::kThreads};
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "fp16 GEMM with fp32 accumulation in inline PTX: mma.sync m16n8k16 + ldmatrix, XOR-swizzled "
      "shared memory, cp.async multistage pipeline; vs cublasGemmEx");
  gpu100::GemmArgs args;  // --m --n --k --sweep
  args.add_to(cli, kMaxDim, gpu100::GemmDtype::F16);
  cli.kernels({"mma_basic", "mma_swizzled", "mma_multistage", "mma_pipelined"});
  cli.min_cc(80);  // mma.sync m16n8k16 and cp.async are Ampere instructions

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    const std::vector<Version> versions = {
        version<Basic>("mma_basic"), version<Swizzled>("mma_swizzled"),
        version<Multistage>("mma_multistage"), version<Pipelined>("mma_pipelined")};
    for (const auto& v : versions) {
      if (size_t(v.smem_bytes) > ctx.device().smem_per_block_optin)
        throw std::runtime_error(v.gemm.name + " needs " +
                                 std::to_string(v.smem_bytes) +
                                 " bytes of shared memory per block, more than this GPU allows");
    }

    gpu100::GemmProblem problem(ctx, args.m, args.n, args.k, gpu100::GemmDtype::F16);
    problem.baseline();
    report.note("on Hopper cuBLAS uses wgmma, which mma.sync cannot match");

    for (const auto& v : versions) {
      if (!ctx.want(v.gemm.name)) continue;
      problem.run_version(v.gemm);
      // What the compiler and the occupancy calculator made of the design (see the header).
      cudaFuncAttributes attr{};
      CUDA_CHECK(cudaFuncGetAttributes(&attr, v.kernel));
      int blocks = 0;
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, v.kernel, v.threads,
                                                               size_t(v.smem_bytes)));
      report.note(v.gemm.name + ": " + std::to_string(attr.numRegs) + " registers/thread, " +
                  std::to_string(v.smem_bytes / 1024) + " KB shared memory, " +
                  std::to_string(blocks) + " block(s) of " + std::to_string(v.threads) +
                  " threads per SM");
    }

    if (args.sweep) {
      std::vector<gpu100::GemmVersion> gemms;
      for (const auto& v : versions) gemms.push_back(v.gemm);
      problem.sweep_best(gemms);
    }
  });
}
