// Day 011 - naive matrix multiplication: C = A * B in FP32, one thread per output element
//
// The first GEMM of the course, and the first lesson of Part II: the same arithmetic runs at very
// different speeds depending only on which thread computes which output. Every thread does the
// whole dot product of one row of A with one column of B, so no data is shared between threads
// on purpose; what differs between the versions is how the 32 lanes of a warp line up against
// the row-major matrices, and so how many memory transactions each warp-wide access costs.
//
// Convention (all of Part II): row-major, C[M x N] = A[M x K] * B[K x N], leading dimensions
// K, N and N. M, N and K are arbitrary (1 x 1 x 1, odd sizes, no multiple of any block).
//
// Versions (blocks of 32 x 8 threads; one template, matmul_naive<kColumnsAlongX>)
//   naive      thread x -> row of C: a warp holds 32 consecutive ROWS and one column, so each
//              load of A[row][p] touches 32 sectors for 4 useful bytes each, B[p][col] is one
//              broadcast address, and the store to C hits 32 rows.
//   coalesced  thread x -> column of C: a warp holds 32 consecutive COLUMNS of one row, so
//              A[row][p] is a broadcast and B[p][col] and the store are 128 contiguous bytes.
//
// Grid: x covers the dimension the threads' x index walks (rows for naive, columns for
// coalesced); y is capped at 65535 blocks and the kernel loops over the rest.
//
// Check: check_gemm (double reference; every entry at --quick sizes, ~4096 sampled entries incl.
// the last row and column at large ones) with gemm_tolerance(K). Baseline: cublasSgemm (plain
// FP32, no TF32) on the same inputs in the same run; the table shows "% of cublasSgemm".
//
// Run:  build/bin/day011 [--m 4096 --n 4096 --k 4096] [--kernel coalesced] [--sweep]
//       [--json out.json]      (--sweep: the fastest version vs cuBLAS at 256..8192)
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"

namespace {

constexpr int kBlockX = 32;  // one warp along x
constexpr int kBlockY = 8;
// Sizes stay below 2^30 so that tile indices plus a tile edge never overflow a 32-bit int; the
// element offsets (row * K can pass 2^31 long before that) are 64-bit.
constexpr int64_t kMaxDim = int64_t(1) << 30;

// kColumnsAlongX = false: naive (x -> row); true: coalesced (x -> column).
template <bool kColumnsAlongX>
__global__ void __launch_bounds__((kBlockX * kBlockY))
    matmul_naive(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                 int M, int N, int K) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int x_extent = kColumnsAlongX ? N : M;
  const int y_extent = kColumnsAlongX ? M : N;
  if (x >= x_extent) return;  // no barriers in this kernel, so an early exit is safe
  for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < y_extent; y += gridDim.y * blockDim.y) {
    const int row = kColumnsAlongX ? y : x;
    const int col = kColumnsAlongX ? x : y;
    const float* a = A + int64_t(row) * K;  // walks along a row of A
    const float* b = B + col;               // walks down a column of B, N floats per step
    float acc = 0.0f;
    for (int p = 0; p < K; ++p) acc = fmaf(a[p], b[int64_t(p) * N], acc);
    C[int64_t(row) * N + col] = acc;
  }
}

template <bool kColumnsAlongX>
void launch_naive(const gpu100::GemmOperands& o, cudaStream_t s) {
  const int64_t x_extent = kColumnsAlongX ? o.n : o.m;
  const int64_t y_extent = kColumnsAlongX ? o.m : o.n;
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid(gpu100::grid_for(x_extent, kBlockX),
                  unsigned(std::min<int64_t>(gpu100::ceil_div<int64_t>(y_extent, kBlockY),
                                             gpu100::kMaxGridDimY)));
  matmul_naive<kColumnsAlongX>
      <<<grid, block, 0, s>>>(static_cast<const float*>(o.A), static_cast<const float*>(o.B),
                              static_cast<float*>(o.C), int(o.m), int(o.n), int(o.k));
  LAUNCH_CHECK();
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "C = A * B in fp32 (row-major): naive (thread x -> row) and coalesced (thread x -> column) "
      "kernels vs cublasSgemm");
  gpu100::GemmArgs args;  // --m --n --k --sweep
  args.add_to(cli, kMaxDim);
  const int64_t &m = args.m, &n = args.n, &k = args.k;
  const std::vector<gpu100::GemmVersion> versions = {
      {"naive", launch_naive<false>},
      {"coalesced", launch_naive<true>},
  };
  cli.kernels_of(versions);

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    gpu100::GemmProblem problem(ctx, m, n, k);
    problem.run(versions, args.sweep);
  });
}
