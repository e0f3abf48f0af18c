// Day 057 - 3D seven-point stencil: out = c0 in + sum over the six face neighbours of c_d in_d
//
// The kernel of heat diffusion, Jacobi sweeps and finite differences on a grid. Each output reads
// seven inputs and does seven multiply-adds, so it is bound by memory: a cell should cost 8 bytes
// of DRAM traffic (one read, one write) and the question is how many times each input is loaded
// on the way there. Every input is a neighbour of six outputs; the versions differ in where those
// repeated reads are served from.
//
// Cells on a face of the grid (x, y or z equal to 0 or the last index) have no full neighbourhood:
// they are copied from the input unchanged (a fixed Dirichlet boundary), in every version.
//
// Versions
//   naive     one thread per cell, all seven values loaded from global memory (the caches serve
//             the repeats on a GPU, the load instructions are all there).
//   shared    a block owns a 2D tile of one z-plane: it stages the tile and its one-cell halo
//             ring in shared memory, so the x and y neighbours come from there; the z neighbours
//             still come from global memory.
//   register  thread coarsening in z (PMPP ch. 8): a block owns a 2D tile and walks up a column
//             of planes. Each thread keeps its cell of the planes below, at and above z in
//             registers; only the current plane goes to shared memory (for the x and y
//             neighbours), and each step loads just the next plane's cell and the halo ring.
//
// Check: both sides evaluate the same chain, c0 in first, then one fused multiply-add per
// neighbour in a fixed order (-x, +x, -y, +y, -z, +z), __fmul_rn / __fmaf_rn on the device and
// float * float then std::fma on the CPU. Each step is one correctly rounded operation on the
// same operands, so every version must equal the CPU bit for bit.
//
// Reports GB/s (8 bytes per cell) beside a device-to-device copy of the grid.
//
// Run:  build/bin/day057 [--nx 259 --ny 257 --nz 255] [--kernel naive,register] [--json out.json]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

struct Coefficients {
  float c, xm, xp, ym, yp, zm, zp;
};
// Distinct per direction, so a neighbour swapped for another changes the result.
constexpr Coefficients kCoef{0.40f, 0.11f, 0.09f, 0.13f, 0.07f, 0.12f, 0.08f};

struct Grid {
  int64_t nx, ny, nz;
  int64_t cells() const { return nx * ny * nz; }
};

// ---- CPU reference ------------------------------------------------------------------------------
std::vector<float> stencil_cpu(const std::vector<float>& in, const Grid& g) {
  std::vector<float> out(in.size());
  const int64_t sy = g.nx, sz = g.nx * g.ny;
  for (int64_t z = 0; z < g.nz; ++z)
    for (int64_t y = 0; y < g.ny; ++y)
      for (int64_t x = 0; x < g.nx; ++x) {
        const int64_t i = z * sz + y * sy + x;
        if (x == 0 || y == 0 || z == 0 || x == g.nx - 1 || y == g.ny - 1 || z == g.nz - 1) {
          out[i] = in[i];
          continue;
        }
        float v = kCoef.c * in[i];
        v = std::fma(kCoef.xm, in[i - 1], v);
        v = std::fma(kCoef.xp, in[i + 1], v);
        v = std::fma(kCoef.ym, in[i - sy], v);
        v = std::fma(kCoef.yp, in[i + sy], v);
        v = std::fma(kCoef.zm, in[i - sz], v);
        v = std::fma(kCoef.zp, in[i + sz], v);
        out[i] = v;
      }
  return out;
}

// ---- kernels ------------------------------------------------------------------------------------
// The one chain every version evaluates (the CPU's, operation for operation).
__device__ __forceinline__ float apply(float c, float xm, float xp, float ym, float yp, float zm,
                                       float zp) {
  float v = __fmul_rn(kCoef.c, c);
  v = __fmaf_rn(kCoef.xm, xm, v);
  v = __fmaf_rn(kCoef.xp, xp, v);
  v = __fmaf_rn(kCoef.ym, ym, v);
  v = __fmaf_rn(kCoef.yp, yp, v);
  v = __fmaf_rn(kCoef.zm, zm, v);
  return __fmaf_rn(kCoef.zp, zp, v);
}

__device__ __forceinline__ bool on_face(int64_t x, int64_t y, int64_t z, const Grid& g) {
  return x == 0 || y == 0 || z == 0 || x == g.nx - 1 || y == g.ny - 1 || z == g.nz - 1;
}

constexpr int kTileX = 32, kTileY = 8;  // one warp per tile row, eight rows per block
constexpr int kZPerBlock = 16;          // planes one block of the register version walks through
constexpr unsigned kMaxGridZ = 65535;

// gridDim.z is capped at 65535: blocks loop over the planes.
__global__ void stencil_naive(const float* __restrict__ in, float* __restrict__ out, Grid g) {
  const int64_t x = int64_t(blockIdx.x) * kTileX + threadIdx.x;
  const int64_t y = int64_t(blockIdx.y) * kTileY + threadIdx.y;
  if (x >= g.nx || y >= g.ny) return;
  const int64_t sy = g.nx, sz = g.nx * g.ny;
  for (int64_t z = blockIdx.z; z < g.nz; z += gridDim.z) {
    const int64_t i = z * sz + y * sy + x;
    out[i] = on_face(x, y, z, g) ? in[i]
                                 : apply(in[i], in[i - 1], in[i + 1], in[i - sy], in[i + sy],
                                         in[i - sz], in[i + sz]);
  }
}

// Stages the (kTileY + 2) x (kTileX + 2) tile of plane z whose inside starts at (x0, y0), the
// cells outside the grid left unwritten (no inside cell of the grid reads them).
__device__ __forceinline__ void load_ring(const float* __restrict__ plane, const Grid& g,
                                          int64_t x0, int64_t y0,
                                          float (&tile)[kTileY + 2][kTileX + 2]) {
  // The ring around the inside: top row, bottom row (kTileX + 2 each), left and right columns.
  constexpr int kRing = 2 * (kTileX + 2) + 2 * kTileY;
  for (int r = threadIdx.y * kTileX + threadIdx.x; r < kRing; r += kTileX * kTileY) {
    int ty, tx;
    if (r < 2 * (kTileX + 2)) {
      ty = r < kTileX + 2 ? 0 : kTileY + 1;
      tx = r % (kTileX + 2);
    } else {
      const int c = r - 2 * (kTileX + 2);
      ty = 1 + c % kTileY;
      tx = c < kTileY ? 0 : kTileX + 1;
    }
    const int64_t x = x0 + tx - 1, y = y0 + ty - 1;
    if (x >= 0 && y >= 0 && x < g.nx && y < g.ny) tile[ty][tx] = plane[y * g.nx + x];
  }
}

__global__ void stencil_shared(const float* __restrict__ in, float* __restrict__ out, Grid g) {
  __shared__ float tile[kTileY + 2][kTileX + 2];
  const int64_t x0 = int64_t(blockIdx.x) * kTileX, y0 = int64_t(blockIdx.y) * kTileY;
  const int64_t x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  const bool inside = x < g.nx && y < g.ny;
  const int64_t sy = g.nx, sz = g.nx * g.ny;
  for (int64_t z = blockIdx.z; z < g.nz; z += gridDim.z) {
    const float* plane = in + z * sz;
    if (inside) tile[threadIdx.y + 1][threadIdx.x + 1] = plane[y * sy + x];
    load_ring(plane, g, x0, y0, tile);
    __syncthreads();
    if (inside) {
      const int64_t i = z * sz + y * sy + x;
      const int tx = threadIdx.x + 1, ty = threadIdx.y + 1;
      const float c = tile[ty][tx];
      out[i] = on_face(x, y, z, g) ? c
                                   : apply(c, tile[ty][tx - 1], tile[ty][tx + 1], tile[ty - 1][tx],
                                           tile[ty + 1][tx], in[i - sz], in[i + sz]);
    }
    __syncthreads();  // the next plane overwrites the tile
  }
}

__global__ void stencil_register(const float* __restrict__ in, float* __restrict__ out, Grid g) {
  __shared__ float tile[kTileY + 2][kTileX + 2];
  const int64_t x0 = int64_t(blockIdx.x) * kTileX, y0 = int64_t(blockIdx.y) * kTileY;
  const int64_t x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  const bool inside = x < g.nx && y < g.ny;
  const int64_t sy = g.nx, sz = g.nx * g.ny;
  const int64_t z0 = int64_t(blockIdx.z) * kZPerBlock;
  const int64_t z_end = z0 + kZPerBlock < g.nz ? z0 + kZPerBlock : g.nz;
  const float* column = in + y * sy + x;  // this thread's cell, plane by plane
  // below / here / above: the planes z - 1, z, z + 1 at this thread's (x, y). A plane outside the
  // grid is never read: the cells next to it are on a face and copied.
  float below = 0, here = 0, above = 0;
  if (inside) {
    if (z0 > 0) below = column[(z0 - 1) * sz];
    here = column[z0 * sz];
    if (z0 + 1 < g.nz) above = column[(z0 + 1) * sz];
  }
  for (int64_t z = z0; z < z_end; ++z) {
    if (inside) tile[threadIdx.y + 1][threadIdx.x + 1] = here;
    load_ring(in + z * sz, g, x0, y0, tile);
    __syncthreads();
    if (inside) {
      const int tx = threadIdx.x + 1, ty = threadIdx.y + 1;
      out[z * sz + y * sy + x] = on_face(x, y, z, g)
                                     ? here
                                     : apply(here, tile[ty][tx - 1], tile[ty][tx + 1],
                                             tile[ty - 1][tx], tile[ty + 1][tx], below, above);
      below = here;
      here = above;
      if (z + 2 < g.nz && z + 1 < z_end) above = column[(z + 2) * sz];
    }
    __syncthreads();  // the next plane overwrites the tile
  }
}

// ---- launchers ----------------------------------------------------------------------------------
using Kernel = void (*)(const float*, float*, Grid);
struct Version {
  const char* name;
  Kernel kernel;
  int z_per_block;  // planes per block in z (the naive and shared grids loop past 65535)
};
const Version kVersions[] = {
    {"naive", stencil_naive, 1},
    {"shared", stencil_shared, 1},
    {"register", stencil_register, kZPerBlock},
};

dim3 grid_of(const Version& v, const Grid& g) {
  const int64_t gz = (g.nz + v.z_per_block - 1) / v.z_per_block;
  return dim3(unsigned((g.nx + kTileX - 1) / kTileX), unsigned((g.ny + kTileY - 1) / kTileY),
              unsigned(std::min<int64_t>(gz, kMaxGridZ)));
}

void launch(const Version& v, dim3 grid, const float* in, float* out, const Grid& g,
            cudaStream_t s) {
  v.kernel<<<grid, dim3(kTileX, kTileY), 0, s>>>(in, out, g);
  LAUNCH_CHECK();
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "3D seven-point stencil in fp32: naive, shared-memory tiles, register tiling in z");
  Grid g{259, 257, 255};
  // The y blocks of a launch (ceil(ny / 8)) must stay within 65535; the register version's
  // z blocks (ceil(nz / 16)) too.
  constexpr int64_t kMaxDim = int64_t(1) << 18;
  cli.size("nx", g.nx, 33, "cells in x (contiguous)", kMaxDim);
  cli.size("ny", g.ny, 17, "cells in y", kMaxDim);
  cli.size("nz", g.nz, 65, "cells in z", kMaxDim);
  cli.kernels_of(kVersions);
  cli.device_bytes(
      [&] { return 2.0 * double(g.nx) * double(g.ny) * double(g.nz) * sizeof(float); });
  cli.validate([&] {
    const double cells = double(g.nx) * double(g.ny) * double(g.nz);
    return cells > double(int64_t(1) << 36)
               ? fmt::format("nx * ny * nz must be at most 2^36 cells, got {:.0f}", cells)
               : std::string();
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    report.intensity(13.0 / 8.0);  // one multiply and six fused multiply-adds per 8 bytes
    report.problem("cells", double(g.cells()));

    const size_t n = size_t(g.cells());
    const auto in = gpu100::random_floats(n, ctx.seed());
    const auto ref = stencil_cpu(in, g);
    gpu100::DeviceBuffer<float> d_in(in), d_out{n};
    ctx.copy_baseline(n * sizeof(float));  // reads and writes the grid once, as a stencil should

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      runs.push_back(
          {.name = v.name,
           .launch = [&, grid = grid_of(v, g)](
                         cudaStream_t s) { launch(v, grid, d_in.data(), d_out.data(), g, s); },
           .reset = [&] { d_out.poison(); },
           .check = [&] { return gpu100::compare_exact(d_out.download(), ref); },
           .work = 8.0 * double(n)});
    }
    ctx.measure_all(runs);
  });
}
