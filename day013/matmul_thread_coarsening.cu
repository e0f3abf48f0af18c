// Day 013 - thread coarsening for matrix multiplication: several outputs per thread (FP32)
//
// Day 012's tiled kernel is limited by shared memory, not by the FP32 units: every FMA reads its
// B operand from shared memory, and the A operand too. The cure is to give each thread several
// outputs that share an operand. A thread that computes COARSE outputs of ONE COLUMN of C needs
// the same B value Bs[p][col] for all of them: it loads it once into a register and uses it
// COARSE times (PMPP chapter 6, "thread coarsening"). The price: more registers per thread, fewer
// threads to hide latency with. Day 014 then reuses both operands (outer products in registers).
//
// Convention (all of Part II): row-major, C[M x N] = A[M x K] * B[K x N], leading dimensions
// K, N and N. M, N and K are arbitrary: elements of a tile outside A or B are stored as 0 (they
// add nothing), every thread reaches every barrier, and only the final stores are guarded.
//
// Versions
//   coarsened    PMPP's coarsened tiled kernel, turned to run down a column: 32 x 32 threads,
//                TILE = 32, COARSE = 4; thread (tx, ty) computes rows ty, ty+32, ty+64, ty+96 of
//                column tx, and one B tile serves four A tiles (20 KB of shared memory).
//   blocktile1d  1D block tiling (siboehm's SGEMM worklog, kernel 4): a 64 x 64 block of C, 512
//                threads, each computing TM = 8 consecutive rows of one column; K in steps of
//                BK = 8, so per k a thread reads one B value and eight broadcast A values.
//
// Grid: x over column tiles, y over row tiles (gridDim.y <= 65535, so M <= 65535 * 64; the CLI
// refuses larger M with a clear message).
//
// Check: check_gemm (double reference; every entry at --quick sizes, ~4096 sampled entries incl.
// the last row and column at large ones) with gemm_tolerance(K). Baseline: cublasSgemm (plain
// FP32, no TF32) on the same inputs in the same run; the table shows "% of cublasSgemm".
//
// Run:  build/bin/day013 [--m 4096 --n 4096 --k 4096] [--kernel blocktile1d] [--sweep]
//       [--json out.json]      (--sweep: the fastest version vs cuBLAS at 256..8192)
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"

namespace {

// Sizes stay below 2^30 so that tile indices plus a tile edge never overflow a 32-bit int; the
// element offsets (row * K can pass 2^31 long before that) are 64-bit.
constexpr int64_t kMaxDim = int64_t(1) << 30;

// ---- kernels ------------------------------------------------------------------------------------
// coarsened: TILE x TILE threads; the block covers (COARSE * TILE) rows x TILE columns of C.
template <int TILE, int COARSE>
__global__ void __launch_bounds__((TILE * TILE))
    matmul_coarsened(const float* __restrict__ A, const float* __restrict__ B,
                     float* __restrict__ C, int M, int N, int K) {
  // 16-byte aligned (here and below) so that the compiler may read four consecutive floats of a
  // tile row with one 16-byte load.
  __shared__ __align__(16) float As[COARSE][TILE][TILE];
  __shared__ __align__(16) float Bs[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row0 = blockIdx.y * (COARSE * TILE) + ty;  // rows row0 + c * TILE, c < COARSE
  const int col = blockIdx.x * TILE + tx;
  const float* b_col = B + min(col, N - 1);  // clamped: the pointer stays inside B
  float acc[COARSE] = {};
  for (int k0 = 0; k0 < K; k0 += TILE) {
    const int ka = k0 + tx;  // column of A this thread copies
#pragma unroll
    for (int c = 0; c < COARSE; ++c) {
      const int r = row0 + c * TILE;
      As[c][ty][tx] = (r < M && ka < K) ? A[int64_t(r) * K + ka] : 0.0f;
    }
    const int kb = k0 + ty;  // row of B this thread copies
    Bs[ty][tx] = (kb < K && col < N) ? b_col[int64_t(kb) * N] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int p = 0; p < TILE; ++p) {
      const float b = Bs[p][tx];  // one shared load, COARSE FMAs
#pragma unroll
      for (int c = 0; c < COARSE; ++c) acc[c] = fmaf(As[c][ty][p], b, acc[c]);
    }
    __syncthreads();
  }
  if (col < N) {
#pragma unroll
    for (int c = 0; c < COARSE; ++c) {
      const int r = row0 + c * TILE;
      if (r < M) C[int64_t(r) * N + col] = acc[c];
    }
  }
}

// blocktile1d: BM x BN block of C, (BM / TM) * BN threads, thread t computes rows
// (t / BN) * TM + i (i < TM) of column t % BN. Both tiles are loaded with whole rows of threads:
// thread t copies A-tile column t % BK and B-tile column t % BN (the thread count is a multiple
// of BK and of BN), at rows that step by threads / BK and threads / BN.
template <int BM, int BN, int BK, int TM>
__global__ void __launch_bounds__((BM / TM) * BN)
    matmul_blocktile1d(const float* __restrict__ A, const float* __restrict__ B,
                       float* __restrict__ C, int M, int N, int K) {
  constexpr int kThreads = (BM / TM) * BN;
  static_assert(BM % TM == 0, "TM must divide BM");
  static_assert(kThreads % BK == 0 && (BM * BK) % kThreads == 0, "A tile: whole rows per pass");
  static_assert(kThreads % BN == 0 && (BK * BN) % kThreads == 0, "B tile: whole rows per pass");
  constexpr int kARowStep = kThreads / BK, kAPasses = BM * BK / kThreads;
  constexpr int kBRowStep = kThreads / BN, kBPasses = BK * BN / kThreads;

  __shared__ __align__(16) float As[BM][BK];
  __shared__ __align__(16) float Bs[BK][BN];
  const int tid = threadIdx.x;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  const int t_col = tid % BN;                    // this thread's output column within the block
  const int t_row = (tid / BN) * TM;             // its first output row within the block
  const int a_col = tid % BK, a_row = tid / BK;  // what it copies from the A tile
  const int b_col = tid % BN, b_row = tid / BN;  // and from the B tile

  float acc[TM] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int i = 0; i < kAPasses; ++i) {
      const int r = a_row + i * kARowStep;
      As[r][a_col] =
          (row0 + r < M && k0 + a_col < K) ? A[int64_t(row0 + r) * K + k0 + a_col] : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < kBPasses; ++i) {
      const int r = b_row + i * kBRowStep;
      Bs[r][b_col] =
          (k0 + r < K && col0 + b_col < N) ? B[int64_t(k0 + r) * N + col0 + b_col] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int p = 0; p < BK; ++p) {
      const float b = Bs[p][t_col];  // consecutive lanes, consecutive words: conflict-free
#pragma unroll
      for (int i = 0; i < TM; ++i) acc[i] = fmaf(As[t_row + i][p], b, acc[i]);  // broadcast
    }
    __syncthreads();
  }
  const int col = col0 + t_col;
  if (col < N) {
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int r = row0 + t_row + i;
      if (r < M) C[int64_t(r) * N + col] = acc[i];
    }
  }
}

// ---- launchers ----------------------------------------------------------------------------------
// The configurations the versions use, and the rows of C one block covers (for the grid).
constexpr int kCoarseTile = 32, kCoarse = 4;
constexpr int kBM = 64, kBN = 64, kBK = 8, kTM = 8;
constexpr int kSmallestRowTile = std::min(kCoarseTile * kCoarse, kBM);

void launch_coarsened(const gpu100::GemmOperands& o, cudaStream_t s) {
  const dim3 grid(gpu100::grid_for(o.n, kCoarseTile), gpu100::grid_for(o.m, kCoarseTile * kCoarse));
  matmul_coarsened<kCoarseTile, kCoarse><<<grid, dim3(kCoarseTile, kCoarseTile), 0, s>>>(
      static_cast<const float*>(o.A), static_cast<const float*>(o.B), static_cast<float*>(o.C),
      int(o.m), int(o.n), int(o.k));
  LAUNCH_CHECK();
}

void launch_blocktile1d(const gpu100::GemmOperands& o, cudaStream_t s) {
  const dim3 grid(gpu100::grid_for(o.n, kBN), gpu100::grid_for(o.m, kBM));
  matmul_blocktile1d<kBM, kBN, kBK, kTM><<<grid, (kBM / kTM) * kBN, 0, s>>>(
      static_cast<const float*>(o.A), static_cast<const float*>(o.B), static_cast<float*>(o.C),
      int(o.m), int(o.n), int(o.k));
  LAUNCH_CHECK();
}

const std::vector<gpu100::GemmVersion> kVersions = {
    {"coarsened", launch_coarsened},
    {"blocktile1d", launch_blocktile1d},
};

// Row tiles run along gridDim.y (at most 65535 blocks): "" when M fits, else why not.
std::string rows_fit_grid(int64_t m) {
  const int64_t limit = int64_t(gpu100::kMaxGridDimY) * kSmallestRowTile;
  if (m <= limit) return "";
  return fmt::format("--m {} needs more than 65535 row tiles (gridDim.y limit); use --m <= {}", m,
                     limit);
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "C = A * B in fp32 (row-major) with several outputs per thread: a coarsened tiled kernel "
      "and 1D block tiling, vs cublasSgemm");
  gpu100::GemmArgs args;  // --m --n --k --sweep
  args.add_to(cli, kMaxDim);
  cli.kernels_of(kVersions);
  cli.validate([&] { return rows_fit_grid(args.m); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    gpu100::GemmProblem problem(ctx, args.m, args.n, args.k);
    problem.run(kVersions, args.sweep);
  });
}
