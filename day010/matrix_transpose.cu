// Day 010 - matrix transpose: out[c][r] = in[r][c] for a rows x cols fp32 matrix (row-major)
//
// No arithmetic at all, so the only question is how close to copy bandwidth the data moves.
// Reading rows of `in` means writing columns of `out`: one side is always strided unless a
// block stages a tile on chip and turns it around there. The day walks the classic steps
// (NVIDIA's "An Efficient Matrix Transpose in CUDA C/C++"), each fixing what the previous one
// left.
//
// Versions
//   naive         32 x 8 threads, one element each: reads along rows (coalesced), writes down
//                 columns, so a warp's 32 stores land in 32 different 32-byte sectors.
//   shared_tiled  32 x 32 threads copy a 32 x 32 tile into shared memory with coalesced reads,
//                 __syncthreads(), then write the tile's columns as coalesced rows of `out`.
//                 Reading a tile column tile[tx][j] with a row length of 32 floats puts all 32
//                 lanes of a warp in the same bank: 32-way bank conflicts.
//   padded        the same with tile[32][33]: one extra float per row shifts each row by one
//                 bank, so a column walks all 32 banks. No conflicts.
//   coarsened     the padded tile moved by 32 x 8 threads, 4 elements each: 4 independent loads
//                 in flight per thread and a quarter of the index arithmetic per element.
//   coarsened8    the same with 32 x 4 threads, 8 elements each: 16 blocks fit per SM instead of
//                 8 (2048 threads either way), so twice the bytes are in flight per SM while the
//                 blocks wait at the barrier. HBM3 needs more bytes in flight than the GPUs the
//                 32 x 8 shape was tuned on; one of the two should reach 90% of the copy on an
//                 H100.
//
// Shapes: rows and cols are arbitrary (1 x N, N x 1, not multiples of 32); partial tiles are
// guarded element by element. The tiled versions number their blocks in one dimension and
// recover (tile row, tile column) from blockIdx.x, so a tall matrix never meets the 65535 limit
// of gridDim.y; the naive version instead loops its block rows when rows / 8 exceeds it.
//
// Check: a transpose moves bits, so the result must equal the CPU transpose exactly.
// Rate: 2 * rows * cols * 4 bytes (each element read once, written once); the baseline is a
// device-to-device copy of the same matrix.
//
// Run:  build/bin/day010 [--rows 12289 --cols 8191] [--kernel padded,coarsened] [--json out.json]
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kTile = 32;
constexpr int kNaiveRows = 8;    // naive block: 32 x 8 threads
constexpr int kCoarseRows = 8;   // coarsened block: 32 x 8 threads, 4 elements each
constexpr int kCoarse8Rows = 4;  // coarsened8 block: 32 x 4 threads, 8 elements each

// ---- CPU reference ------------------------------------------------------------------------------
std::vector<float> transpose_cpu(const std::vector<float>& in, int64_t rows, int64_t cols) {
  std::vector<float> out(in.size());
  constexpr int64_t B = 64;  // blocked, so neither side strides through memory for long
  for (int64_t rb = 0; rb < rows; rb += B)
    for (int64_t cb = 0; cb < cols; cb += B)
      for (int64_t r = rb; r < std::min(rb + B, rows); ++r)
        for (int64_t c = cb; c < std::min(cb + B, cols); ++c)
          out[size_t(c * rows + r)] = in[size_t(r * cols + c)];
  return out;
}

// ---- kernels ------------------------------------------------------------------------------------
// naive: block (32, kNaiveRows); grid (ceil(cols / 32), min(ceil(rows / 8), 65535)), looping
// over rows when the matrix is taller than the grid.
__global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out, int64_t rows,
                                int64_t cols) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= cols) return;  // no barrier in this kernel
  const int64_t step = int64_t(gridDim.y) * blockDim.y;
  for (int64_t r = int64_t(blockIdx.y) * blockDim.y + threadIdx.y; r < rows; r += step)
    out[c * rows + r] = in[r * cols + c];
}

// ---------------------------------------------------------------------------------------------
// Tiled: one block per 32 x 32 tile, kTile x kBlockRows threads, each moving kTile / kBlockRows
// elements. kPad = 0 shows the bank conflicts, kPad = 1 removes them.
// Block b handles tile (b / tiles_x, b % tiles_x): consecutive blocks walk along a tile row of
// `in`, so reads stream through memory. tiles_x <= gridDim.x, so the division is a 32-bit one
// (a 64-bit division is a long software sequence).
template <int kPad, int kBlockRows>
__global__ void __launch_bounds__((kTile * kBlockRows))
    transpose_tiled(const float* __restrict__ in, float* __restrict__ out, int64_t rows,
                    int64_t cols, unsigned tiles_x) {
  static_assert(kTile % kBlockRows == 0, "each thread moves a whole number of elements");
  __shared__ float tile[kTile][kTile + kPad];
  const unsigned tile_row = blockIdx.x / tiles_x;
  const unsigned tile_col = blockIdx.x - tile_row * tiles_x;
  const int64_t r0 = int64_t(tile_row) * kTile, c0 = int64_t(tile_col) * kTile;
  const int tx = threadIdx.x, ty = threadIdx.y;

  // Coalesced read: a warp (fixed ty + j) reads 32 consecutive floats of one row of `in`.
  const int64_t c_in = c0 + tx;
#pragma unroll
  for (int j = 0; j < kTile; j += kBlockRows) {
    const int64_t r = r0 + ty + j;
    if (r < rows && c_in < cols) tile[ty + j][tx] = in[r * cols + c_in];
  }
  __syncthreads();
  // Coalesced write: a warp writes 32 consecutive floats of one row of `out` (= column c0+ty+j
  // of `in`), reading tile column ty + j: with kPad = 0 all 32 reads hit one bank.
  const int64_t c_out = r0 + tx;  // column of `out` = row of `in`
#pragma unroll
  for (int j = 0; j < kTile; j += kBlockRows) {
    const int64_t r = c0 + ty + j;  // row of `out` = column of `in`
    if (r < cols && c_out < rows) out[r * rows + c_out] = tile[tx][ty + j];
  }
}

// ---- launchers ----------------------------------------------------------------------------------
void launch_naive(const float* in, float* out, int64_t rows, int64_t cols, cudaStream_t s) {
  const dim3 grid(gpu100::grid_for(cols, kTile),  // 32 columns per block, like a tile
                  unsigned(std::min<int64_t>(gpu100::ceil_div<int64_t>(rows, kNaiveRows),
                                             int64_t(gpu100::kMaxGridDimY))));
  transpose_naive<<<grid, dim3(kTile, kNaiveRows), 0, s>>>(in, out, rows, cols);
  LAUNCH_CHECK();
}

// One block per tile, numbered along the tile rows of `in` (tiles <= gridDim.x: main checks).
template <int kPad, int kBlockRows>
void launch_tiled(const float* in, float* out, int64_t rows, int64_t cols, cudaStream_t s) {
  const int64_t tiles_x = gpu100::ceil_div<int64_t>(cols, kTile);
  const int64_t tiles = tiles_x * gpu100::ceil_div<int64_t>(rows, kTile);
  transpose_tiled<kPad, kBlockRows>
      <<<unsigned(tiles), dim3(kTile, kBlockRows), 0, s>>>(in, out, rows, cols, unsigned(tiles_x));
  LAUNCH_CHECK();
}

struct Version {
  const char* name;
  void (*launch)(const float* in, float* out, int64_t rows, int64_t cols, cudaStream_t s);
};
const Version kVersions[] = {
    {"naive", launch_naive},
    {"shared_tiled", launch_tiled<0, kTile>},
    {"padded", launch_tiled<1, kTile>},
    {"coarsened", launch_tiled<1, kCoarseRows>},
    {"coarsened8", launch_tiled<1, kCoarse8Rows>},
};

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "fp32 matrix transpose: naive, shared-memory tiled, padded and coarsened (4 and 8 "
      "elements per thread) kernels vs cudaMemcpy");
  int64_t rows = 12289, cols = 8191;
  cli.size("rows", rows, 67, "rows of the input matrix");
  cli.size("cols", cols, 131, "columns of the input matrix");
  cli.kernels_of(kVersions);
  // Input + output + the copy baseline's two buffers, 4 bytes per element each.
  cli.device_bytes([&] { return 16.0 * double(rows) * double(cols); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    const int64_t n = rows * cols;
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    const int64_t tiles =
        gpu100::ceil_div<int64_t>(cols, kTile) * gpu100::ceil_div<int64_t>(rows, kTile);
    if (tiles > int64_t(ctx.device().max_grid_x))
      throw std::invalid_argument("matrix has more 32 x 32 tiles than gridDim.x allows");

    const auto a = gpu100::random_floats(size_t(n), ctx.seed());
    const auto ref = transpose_cpu(a, rows, cols);
    gpu100::DeviceBuffer<float> d_in(a), d_out{size_t(n)};
    ctx.copy_baseline(size_t(n) * sizeof(float));  // same bytes read and written as a transpose

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      runs.push_back(
          {.name = v.name,
           .launch = [&](cudaStream_t s) { v.launch(d_in.data(), d_out.data(), rows, cols, s); },
           .reset = [&] { d_out.poison(); },
           .check = [&] { return gpu100::compare_exact(d_out.download(), ref); },
           .work = 2.0 * double(n) * sizeof(float)});
    }
    ctx.measure_all(runs);
  });
}
