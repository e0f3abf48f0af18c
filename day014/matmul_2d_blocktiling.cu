// Day 014 - 2D block tiling: a TM x TN block of C per thread, built from register outer products
//
// Day 013's 1D block tiling gives each thread TM outputs in one column: per k it reads one B
// value and TM A values from shared memory for TM FMAs, so it can never do better than about one
// shared load per FMA. Give the thread a TM x TN block of outputs instead: per k it reads a
// column of TM values of the A tile and a row of TN values of the B tile into registers and
// multiplies them as an outer product, acc[i][j] += a[i] * b[j]: TM + TN shared loads for
// TM * TN FMAs. With 8 x 8 that is 16 loads for 64 FMAs (siboehm's SGEMM worklog, kernel 5).
// This is the structure every fast FP32 GEMM keeps from here on; days 015-018 only change how
// the tiles are fed.
//
// Convention (all of Part II): row-major, C[M x N] = A[M x K] * B[K x N], leading dimensions
// K, N and N. M, N and K are arbitrary: elements of a tile outside A or B are stored as 0 (they
// add nothing), every thread reaches every barrier, and only the final stores are guarded.
//
// Versions (one template: block tile BM x BN, K step BK, TM x TN outputs per thread)
//   blocktile1d          day 013's kernel as the reference point: TN = 1, 64 x 64 x 8, TM = 8.
//   blocktile2d          128 x 128 x 8, TM = TN = 8, 256 threads; thread (t_row, t_col) owns the
//                        CONTIGUOUS 8 x 8 block at rows 8*t_row.., columns 8*t_col...
//   blocktile2d_strided  the same, but each thread owns an INTERLEAVED 8 x 8 set: rows
//                        t_row + 16*i, columns t_col + 16*j. Does the layout of a thread's
//                        outputs matter? (It changes which shared-memory banks a warp hits.)
// __launch_bounds__(256, 2) holds the 2D kernels at 128 registers (64 accumulators + operands),
// so that two blocks fit per SM.
//
// Grid: x over column tiles, y over row tiles (gridDim.y <= 65535, so M <= 65535 * 64; the CLI
// refuses larger M with a clear message).
//
// Check: check_gemm (double reference; every entry at --quick sizes, ~4096 sampled entries incl.
// the last row and column at large ones) with gemm_tolerance(K). Baseline: cublasSgemm (plain
// FP32, no TF32) on the same inputs in the same run; the table shows "% of cublasSgemm".
//
// Run:  build/bin/day014 [--m 4096 --n 4096 --k 4096] [--kernel blocktile2d,blocktile2d_strided]
//       [--sweep] [--json out.json]      (--sweep: the fastest version vs cuBLAS at 256..8192)
#include <fmt/core.h>

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
// BM x BN block of C per block, (BM / TM) x (BN / TN) threads, TM x TN outputs per thread.
// kStrided = false: thread (t_row, t_col) owns rows t_row * TM + i and columns t_col * TN + j;
// true: rows t_row + i * (BM / TM) and columns t_col + j * (BN / TN).
// Tile loads: thread t copies A-tile column t % BK and B-tile column t % BN (the thread count is a
// multiple of BK and of BN), at rows stepping by threads / BK and threads / BN, so a warp reads
// whole 32-byte sectors of A and 128 contiguous bytes of B.
template <int BM, int BN, int BK, int TM, int TN, bool kStrided>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), 2)  // two blocks per SM
    matmul_blocktile(const float* __restrict__ A, const float* __restrict__ B,
                     float* __restrict__ C, int M, int N, int K) {
  constexpr int kThreadRows = BM / TM, kThreadCols = BN / TN;
  constexpr int kThreads = kThreadRows * kThreadCols;
  static_assert(BM % TM == 0 && BN % TN == 0, "TM and TN must divide the block tile");
  static_assert(kThreads % BK == 0 && (BM * BK) % kThreads == 0, "A tile: whole rows per pass");
  static_assert(kThreads % BN == 0 && (BK * BN) % kThreads == 0, "B tile: whole rows per pass");
  constexpr int kARowStep = kThreads / BK, kAPasses = BM * BK / kThreads;
  constexpr int kBRowStep = kThreads / BN, kBPasses = BK * BN / kThreads;

  // 16-byte aligned so that the compiler may read four consecutive floats with one load.
  __shared__ __align__(16) float As[BM][BK];
  __shared__ __align__(16) float Bs[BK][BN];
  const int tid = threadIdx.x;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  const int t_col = tid % kThreadCols, t_row = tid / kThreadCols;
  const int a_col = tid % BK, a_row = tid / BK;  // what this thread copies from the A tile
  const int b_col = tid % BN, b_row = tid / BN;  // and from the B tile
  // Block-relative row of output i and column of output j of this thread.
  const auto out_row = [&](int i) { return kStrided ? t_row + i * kThreadRows : t_row * TM + i; };
  const auto out_col = [&](int j) { return kStrided ? t_col + j * kThreadCols : t_col * TN + j; };

  float acc[TM][TN] = {};
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
      float a[TM], b[TN];  // a column of the A tile, a row of the B tile: TM + TN loads
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[out_row(i)][p];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[p][out_col(j)];
#pragma unroll
      for (int i = 0; i < TM; ++i)  // the outer product: TM * TN FMAs on registers only
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int r = row0 + out_row(i);
    if (r >= M) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int c = col0 + out_col(j);
      if (c < N) C[int64_t(r) * N + c] = acc[i][j];
    }
  }
}

// ---- launchers ----------------------------------------------------------------------------------
template <int BM, int BN, int BK, int TM, int TN, bool kStrided>
void launch_blocktile(const gpu100::GemmOperands& o, cudaStream_t s) {
  const dim3 grid(gpu100::grid_for(o.n, BN), gpu100::grid_for(o.m, BM));
  matmul_blocktile<BM, BN, BK, TM, TN, kStrided><<<grid, (BM / TM) * (BN / TN), 0, s>>>(
      static_cast<const float*>(o.A), static_cast<const float*>(o.B), static_cast<float*>(o.C),
      int(o.m), int(o.n), int(o.k));
  LAUNCH_CHECK();
}

const std::vector<gpu100::GemmVersion> kVersions = {
    {"blocktile1d", launch_blocktile<64, 64, 8, 8, 1, false>},
    {"blocktile2d", launch_blocktile<128, 128, 8, 8, 8, false>},
    {"blocktile2d_strided", launch_blocktile<128, 128, 8, 8, 8, true>},
};
constexpr int kSmallestRowTile = 64;  // blocktile1d's BM; the 2D versions use 128

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
      "C = A * B in fp32 (row-major) with 2D block tiling (8x8 outputs per thread from register "
      "outer products, contiguous and interleaved ownership) and 1D block tiling, vs "
      "cublasSgemm");
  gpu100::GemmArgs args;  // --m --n --k --sweep
  args.add_to(cli, kMaxDim);
  cli.kernels_of(kVersions);
  cli.validate([&] { return rows_fit_grid(args.m); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    gpu100::GemmProblem problem(ctx, args.m, args.n, args.k);
    problem.run(kVersions, args.sweep);
  });
}
