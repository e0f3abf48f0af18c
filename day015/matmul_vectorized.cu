// Day 015 - vectorized SGEMM: float4 global loads and a transposed A tile in shared memory
//
// Day 014's 2D blocktiling keeps an 8 x 8 block of C in registers per thread, so every shared
// value a thread loads feeds 8 FMAs. What is left is the number of load INSTRUCTIONS: per k step a
// thread needs 8 values of A (one column of its 8 rows) and 8 values of B (one row of its 8
// columns). Shared memory hands a thread 16 bytes per instruction (ld.shared.v4.f32) when the 4
// floats are adjacent and 16-byte aligned. In the usual layout As[m][k] the 8 A values of a
// thread are kBK floats apart; stored transposed, As[k][m], they are adjacent: 2 float4 loads, and
// B ([k][n]) 2 more, 4 shared loads per 64 FMAs instead of up to 16. On the global side each
// thread fetches its share of the A and B tiles with one 16-byte load each (ld.global.nc.v4.f32).
//
// Convention (all of Part II): row-major, C[M x N] = A[M x K] * B[K x N], leading dimensions
// K, N and N. M, N and K are arbitrary. A 16-byte access needs a 16-byte aligned address: A is
// read with float4 only when K % 4 == 0 (and the base pointer is aligned), B and C only when
// N % 4 == 0. Otherwise, and for every group of 4 that reaches past the matrix edge, the same code
// goes element by element with a bounds check each; elements outside the matrix enter the tiles
// as 0, every thread reaches every barrier, and only the final store is guarded.
//
// Versions (one template, 128 x 128 x 8 block tile, 256 threads, an 8 x 8 block of C each)
//   blocktile_2d  day 014's kernel for comparison: scalar global loads, As stored [m][k], 8
//                 scalar shared loads of A per k step.
//   vectorized    one float4 global load of A and one of B per thread per tile, As stored [k][m]
//                 (the float4 of A goes down a column: 4 scalar stores), both fragments read
//                 with float4 shared loads, C written with float4 stores.
// Both launch with __launch_bounds__(256, 2): at most 128 registers, two blocks per SM.
//
// Grid: one dimension, block b computes the tile (b / tiles_n, b % tiles_n), so neighbouring
// blocks share the same rows of A in L2 and no grid dimension meets the 65535 limit.
//
// Check: check_gemm (double reference; every entry at --quick sizes, ~4096 sampled entries incl.
// the last row and column at large ones) with gemm_tolerance(K). Baseline: cublasSgemm (plain
// FP32, no TF32) on the same inputs in the same run, itself checked; the table shows "% of
// cublasSgemm".
//
// Run:  build/bin/day015 [--m 4096 --n 4096 --k 4096] [--kernel vectorized] [--sweep]
//       [--json out.json]      (--sweep: the fastest version vs cuBLAS at 256..8192)
#include <fmt/core.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"

namespace {

constexpr int kBM = 128, kBN = 128, kBK = 8;  // block tile
constexpr int kTM = 8, kTN = 8;               // thread tile
constexpr int kThreadsN = kBN / kTN;          // 16 threads along n
constexpr int kThreads = (kBM / kTM) * kThreadsN;  // 256
static_assert(kBM * kBK == 4 * kThreads, "one float4 of A per thread per tile");
static_assert(kBK * kBN == 4 * kThreads, "one float4 of B per thread per tile");
// Sizes below 2^30: a tile origin plus a tile edge never overflows a 32-bit int. Element offsets
// (row * K passes 2^31 long before that) are 64-bit.
constexpr int64_t kMaxDim = int64_t(1) << 30;

// ---- kernels ------------------------------------------------------------------------------------
// Four consecutive floats row[col .. col+3] of a row with `cols` columns, zeros past its end.
// One 16-byte load when the caller says the row is 16-byte aligned (vec_ok: base aligned and
// row stride a multiple of 4 floats; col is a multiple of 4) and all four are inside the row.
__device__ __forceinline__ float4 load4(const float* __restrict__ row, int col, int cols,
                                        bool vec_ok) {
  if (vec_ok && col + 3 < cols) return *reinterpret_cast<const float4*>(row + col);
  float4 v;
  v.x = col < cols ? row[col] : 0.0f;
  v.y = col + 1 < cols ? row[col + 1] : 0.0f;
  v.z = col + 2 < cols ? row[col + 2] : 0.0f;
  v.w = col + 3 < cols ? row[col + 3] : 0.0f;
  return v;
}

// C = A * B. kVectorized selects the version (see the opening comment). a_vec, b_vec, c_vec:
// whether rows of A, B and C may be accessed with 16-byte vectors (set by the launcher).
template <bool kVectorized>
__global__ void __launch_bounds__(kThreads, 2)
    sgemm_blocktile(const float* __restrict__ A, const float* __restrict__ B,
                    float* __restrict__ C, int M, int N, int K, int tiles_n, bool a_vec,
                    bool b_vec, bool c_vec) {
  // blocktile_2d: As[m][k] (m-major, m * kBK + k). vectorized: As[k][m] (k * kBM + m).
  __shared__ __align__(16) float As[kBM * kBK];
  __shared__ __align__(16) float Bs[kBK * kBN];

  const int tile_m = int(blockIdx.x) / tiles_n;
  const int m0 = tile_m * kBM;
  const int n0 = (int(blockIdx.x) - tile_m * tiles_n) * kBN;
  const int tid = int(threadIdx.x);
  const int ty = tid / kThreadsN, tx = tid % kThreadsN;  // this thread's 8 x 8 block of the tile

  float acc[kTM][kTN] = {};

  for (int k0 = 0; k0 < K; k0 += kBK) {
    if constexpr (kVectorized) {
      // A: thread t reads k0 + 4 (t % 2) .. +3 of tile row t / 2 (a warp: 16 rows, 32 bytes
      // each, every sector fully used) and writes them down a column of the [k][m] tile.
      const int ar = tid / 2, ac = (tid % 2) * 4;
      float4 va = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (m0 + ar < M) va = load4(A + int64_t(m0 + ar) * K, k0 + ac, K, a_vec);
      As[(ac + 0) * kBM + ar] = va.x;
      As[(ac + 1) * kBM + ar] = va.y;
      As[(ac + 2) * kBM + ar] = va.z;
      As[(ac + 3) * kBM + ar] = va.w;
      // B: thread t reads n0 + 4 (t % 32) .. +3 of tile row t / 32: a warp reads one 512-byte
      // row segment, and stores it as it is.
      const int br = tid / 32, bc = (tid % 32) * 4;
      float4 vb = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (k0 + br < K) vb = load4(B + int64_t(k0 + br) * N, n0 + bc, N, b_vec);
      *reinterpret_cast<float4*>(&Bs[br * kBN + bc]) = vb;
    } else {
      // Scalar: element e = tid + 256 i of each tile, 4 per thread per matrix.
#pragma unroll
      for (int i = 0; i < kBM * kBK / kThreads; ++i) {
        const int e = tid + i * kThreads;
        const int r = e / kBK, c = e % kBK;
        const int gm = m0 + r, gk = k0 + c;
        As[r * kBK + c] = (gm < M && gk < K) ? A[int64_t(gm) * K + gk] : 0.0f;
      }
#pragma unroll
      for (int i = 0; i < kBK * kBN / kThreads; ++i) {
        const int e = tid + i * kThreads;
        const int r = e / kBN, c = e % kBN;
        const int gk = k0 + r, gn = n0 + c;
        Bs[r * kBN + c] = (gk < K && gn < N) ? B[int64_t(gk) * N + gn] : 0.0f;
      }
    }
    __syncthreads();  // tiles complete before anyone reads them

    // blocktile_2d keeps its k loop rolled. Unrolled, nvcc sees that the 8 k values of each of
    // the thread's 8 rows of As[m][k] are adjacent and fetches the whole 8 x 8 block with 16 float4
    // loads at the top of the tile: 64 registers live for A, and the kernel spills under the
    // 128-register cap of two blocks per SM. Rolled, it issues what the source says: 8 scalar
    // loads of A per k step. The transposed tile gets float4 loads without holding the block.
    constexpr int kUnrollK = kVectorized ? kBK : 1;
#pragma unroll kUnrollK
    for (int d = 0; d < kBK; ++d) {
      float a[kTM], b[kTN];
      if constexpr (kVectorized) {
        const float4 a0 = *reinterpret_cast<const float4*>(&As[d * kBM + ty * kTM]);
        const float4 a1 = *reinterpret_cast<const float4*>(&As[d * kBM + ty * kTM + 4]);
        const float4 b0 = *reinterpret_cast<const float4*>(&Bs[d * kBN + tx * kTN]);
        const float4 b1 = *reinterpret_cast<const float4*>(&Bs[d * kBN + tx * kTN + 4]);
        a[0] = a0.x, a[1] = a0.y, a[2] = a0.z, a[3] = a0.w;
        a[4] = a1.x, a[5] = a1.y, a[6] = a1.z, a[7] = a1.w;
        b[0] = b0.x, b[1] = b0.y, b[2] = b0.z, b[3] = b0.w;
        b[4] = b1.x, b[5] = b1.y, b[6] = b1.z, b[7] = b1.w;
      } else {
#pragma unroll
        for (int i = 0; i < kTM; ++i) a[i] = As[(ty * kTM + i) * kBK + d];
#pragma unroll
        for (int j = 0; j < kTN; ++j) b[j] = Bs[d * kBN + tx * kTN + j];
      }
      // The outer product: 64 FMAs from 16 registers.
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();  // everyone is done reading before the next tile overwrites them
  }

  // Write the 8 x 8 block: two groups of 4 columns per row, float4 where allowed.
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    const int gm = m0 + ty * kTM + i;
    if (gm >= M) break;  // no barrier follows
    float* c_row = C + int64_t(gm) * N;
#pragma unroll
    for (int h = 0; h < kTN; h += 4) {
      const int gn = n0 + tx * kTN + h;
      if (kVectorized && c_vec && gn + 3 < N) {
        *reinterpret_cast<float4*>(c_row + gn) =
            make_float4(acc[i][h], acc[i][h + 1], acc[i][h + 2], acc[i][h + 3]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (gn + j < N) c_row[gn + j] = acc[i][h + j];
      }
    }
  }
}

// ---- launchers ----------------------------------------------------------------------------------
template <bool kVectorized>
void launch_blocktile(const gpu100::GemmOperands& o, cudaStream_t s) {
  const auto* A = static_cast<const float*>(o.A);
  const auto* B = static_cast<const float*>(o.B);
  auto* C = static_cast<float*>(o.C);
  const int64_t tiles_m = gpu100::ceil_div<int64_t>(o.m, kBM);
  const int64_t tiles_n = gpu100::ceil_div<int64_t>(o.n, kBN);
  if (tiles_m * tiles_n > int64_t(INT32_MAX))
    throw std::invalid_argument("more 128 x 128 tiles than gridDim.x allows");
  // 16-byte accesses need every row start 16-byte aligned: an aligned base and a row stride that
  // is a multiple of 4 floats.
  const bool a_vec = o.k % 4 == 0 && gpu100::is_aligned(A, 16);
  const bool b_vec = o.n % 4 == 0 && gpu100::is_aligned(B, 16);
  const bool c_vec = o.n % 4 == 0 && gpu100::is_aligned(C, 16);
  sgemm_blocktile<kVectorized><<<unsigned(tiles_m * tiles_n), kThreads, 0, s>>>(
      A, B, C, int(o.m), int(o.n), int(o.k), int(tiles_n), a_vec, b_vec, c_vec);
  LAUNCH_CHECK();
}

const std::vector<gpu100::GemmVersion> kVersions = {
    {"blocktile_2d", launch_blocktile<false>},
    {"vectorized", launch_blocktile<true>},
};

// ---- analysis -----------------------------------------------------------------------------------
// Which of vectorized's 16-byte paths this shape allows (the launcher's a_vec, b_vec, c_vec).
std::string vector_paths(int64_t n, int64_t k) {
  return fmt::format(
      "vectorized: A rows {}; B and C rows {}; a group of 4 that crosses the matrix edge always "
      "element by element",
      k % 4 == 0 ? "16-byte aligned (K % 4 == 0): float4 loads"
                 : "not 16-byte aligned (K % 4 != 0): scalar loads",
      n % 4 == 0 ? "16-byte aligned (N % 4 == 0): float4 loads and stores"
                 : "not 16-byte aligned (N % 4 != 0): scalar loads and stores");
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "C = A * B in fp32 (row-major): 2D blocktiling (128x128x8 tiles, 8x8 per thread) with scalar "
      "loads vs float4 global loads and a transposed A tile (float4 shared loads), vs cublasSgemm");
  gpu100::GemmArgs args;  // --m --n --k --sweep
  args.add_to(cli, kMaxDim);
  cli.kernels_of(kVersions);

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    gpu100::GemmProblem problem(ctx, args.m, args.n, args.k);
    ctx.report().note(vector_paths(args.n, args.k));
    problem.run(kVersions, args.sweep);
  });
}
