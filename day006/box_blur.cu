// Day 006 - box blur: the mean of a (2r+1) x (2r+1) window around every pixel of an 8-bit image
//
// The first stencil of the course: every output pixel reads (2r+1)^2 input pixels, and each
// input pixel is read by (2r+1)^2 outputs. The lesson is data reuse: fetch a pixel from DRAM
// once, then serve its many readers from on-chip memory (L1 or shared memory), and finally
// cut the arithmetic itself from O(r^2) to O(r) per pixel by splitting the 2D sum.
//
// Definition (what the CPU reference and every version compute):
//   out(x, y) = (S + count / 2) / count,  S = sum over dy, dx in [-r, r] of in(clamp x+dx, clamp
//   y+dy) count = (2r+1)^2, integer division, coordinates clamped into the image ("replicate"
//   border: a pixel outside the image is its nearest edge pixel, so count never changes). Adding
//   count/2 rounds to nearest. All integer arithmetic: GPU and CPU must agree bit for bit.
//   The image may be smaller than the window (1 x 1 with r = 15): clamping covers it.
//
// Versions
//   naive        one thread per pixel reads its whole window straight from global memory. The
//                L1 cache catches most of the (2r+1)^2 re-reads, but every one is still a load
//                instruction with clamping arithmetic.
//   shared_tile  a 32 x 8 block loads its output tile plus an r-pixel halo into shared memory
//                once (one global read per tile pixel), __syncthreads(), then every thread sums
//                its window from shared memory. Same O(r^2) adds, far fewer global loads.
//   separable    the box is separable: S = sum over the 2r+1 rows of (sum over 2r+1 columns),
//                and integer addition is exact, so splitting the sum gives the same S. A block
//                loads a 32 x 64 tile plus halo, computes the horizontal sums of every tile row
//                into shared memory, syncs, and each thread then slides a vertical window down
//                its 8 consecutive output rows (add the row entering, subtract the row leaving).
//                About 2(2r+1) adds per pixel instead of (2r+1)^2.
//
// Tall images: gridDim.y is at most 65535, so every version loops its block row over the tile
// rows (a uniform loop: all threads of a block take the same trips, so __syncthreads() inside
// it is legal).
//
// Rate: GB/s counts the useful traffic only, one byte read and one byte written per pixel
// (2 bytes per pixel); halo re-reads and cache hits are not counted. The baseline is a
// device-to-device copy of the image (the same 2 bytes per pixel).
//
// Run:  build/bin/day006 [--width 12289 --height 8191 --radius 4] [--kernel separable]
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kMaxRadius = 15;
// (2r+1)^2 * 255 must fit the sums: 961 * 255 < 2^32, and a row sum 31 * 255 < 2^16.
static_assert((2 * kMaxRadius + 1) * 255 < 65536, "horizontal sums are stored as uint16");

constexpr int kBlockX = 32;  // one warp across: a warp reads 32 consecutive bytes of a row
constexpr int kBlockY = 8;
constexpr int kBlockThreads = kBlockX * kBlockY;
constexpr int kSepRowsPerThread = 8;                    // separable: output rows per thread
constexpr int kSepTileH = kBlockY * kSepRowsPerThread;  // 64 output rows per block

__device__ __forceinline__ int clamp_to(int v, int hi) {
  return min(max(v, 0), hi);
}

__host__ __device__ inline uint8_t box_mean(uint32_t sum, uint32_t count) {
  return uint8_t((sum + count / 2) / count);
}

// ---- CPU reference ------------------------------------------------------------------------------
// The direct O(r^2) definition is slow at full size, so the reference used for
// checking is the separable form (exactly the same integer sums); at small sizes the two CPU
// versions are compared with each other first.
int clamp_host(int v, int hi) {
  return std::min(std::max(v, 0), hi);
}

std::vector<uint8_t> blur_cpu_direct(const std::vector<uint8_t>& in, int w, int h, int r) {
  std::vector<uint8_t> out(in.size());
  const uint32_t count = uint32_t((2 * r + 1) * (2 * r + 1));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint32_t sum = 0;
      for (int dy = -r; dy <= r; ++dy)
        for (int dx = -r; dx <= r; ++dx)
          sum +=
              in[size_t(clamp_host(y + dy, h - 1)) * size_t(w) + size_t(clamp_host(x + dx, w - 1))];
      out[size_t(y) * size_t(w) + size_t(x)] = box_mean(sum, count);
    }
  return out;
}

std::vector<uint8_t> blur_cpu_separable(const std::vector<uint8_t>& in, int w, int h, int r) {
  const size_t W = size_t(w);
  std::vector<uint32_t> hs(in.size());
  for (int y = 0; y < h; ++y) {
    const uint8_t* row = &in[size_t(y) * W];
    for (int x = 0; x < w; ++x) {
      uint32_t s = 0;
      for (int dx = -r; dx <= r; ++dx) s += row[clamp_host(x + dx, w - 1)];
      hs[size_t(y) * W + size_t(x)] = s;
    }
  }
  std::vector<uint8_t> out(in.size());
  const uint32_t count = uint32_t((2 * r + 1) * (2 * r + 1));
  std::vector<uint32_t> acc(W);
  for (int y = 0; y < h; ++y) {
    std::fill(acc.begin(), acc.end(), 0u);
    for (int dy = -r; dy <= r; ++dy) {
      const uint32_t* src = &hs[size_t(clamp_host(y + dy, h - 1)) * W];
      for (size_t x = 0; x < W; ++x) acc[x] += src[x];
    }
    for (size_t x = 0; x < W; ++x) out[size_t(y) * W + x] = box_mean(acc[x], count);
  }
  return out;
}

std::vector<uint8_t> blur_reference(const std::vector<uint8_t>& img, int w, int h, int r) {
  auto ref = blur_cpu_separable(img, w, h, r);
  if (img.size() <= (size_t(1) << 20) &&  // the fast reference must equal the definition
      !gpu100::compare_exact(blur_cpu_direct(img, w, h, r), ref).pass)
    throw std::logic_error("CPU references disagree: separable vs direct box sum");
  return ref;
}

// ---- kernels ------------------------------------------------------------------------------------
// naive: each thread reads its window from global memory.
__global__ void blur_naive(const uint8_t* __restrict__ in, uint8_t* __restrict__ out, int width,
                           int height, int r) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  if (x >= width) return;  // no barrier in this kernel, so an early return is fine
  const uint32_t count = uint32_t((2 * r + 1) * (2 * r + 1));
  for (int y = blockIdx.y * kBlockY + threadIdx.y; y < height; y += gridDim.y * kBlockY) {
    uint32_t sum = 0;
    for (int dy = -r; dy <= r; ++dy) {
      const uint8_t* row = in + int64_t(clamp_to(y + dy, height - 1)) * width;
      for (int dx = -r; dx <= r; ++dx) sum += row[clamp_to(x + dx, width - 1)];
    }
    out[int64_t(y) * width + x] = box_mean(sum, count);
  }
}

// Loads the input rectangle [x0 - r, x0 - r + sw) x [y0 - r, y0 - r + sh) into tile (sw x sh
// bytes, row-major), clamping coordinates into the image. Rows are spread over threadIdx.y and
// columns over threadIdx.x, so a warp reads consecutive bytes of one row.
__device__ __forceinline__ void load_tile(const uint8_t* __restrict__ in, uint8_t* tile, int width,
                                          int height, int x0, int y0, int r, int sw, int sh) {
  for (int sy = threadIdx.y; sy < sh; sy += kBlockY) {
    const uint8_t* row = in + int64_t(clamp_to(y0 - r + sy, height - 1)) * width;
    for (int sx = threadIdx.x; sx < sw; sx += kBlockX)
      tile[sy * sw + sx] = row[clamp_to(x0 - r + sx, width - 1)];
  }
}

// ---------------------------------------------------------------------------------------------
// shared_tile: a 32 x 8 output tile, its (32 + 2r) x (8 + 2r) input in shared memory.
__global__ void __launch_bounds__(kBlockThreads)
    blur_shared_tile(const uint8_t* __restrict__ in, uint8_t* __restrict__ out, int width,
                     int height, int r) {
  extern __shared__ __align__(16) uint8_t smem[];
  const int sw = kBlockX + 2 * r, sh = kBlockY + 2 * r;
  const uint32_t count = uint32_t((2 * r + 1) * (2 * r + 1));
  const int x0 = blockIdx.x * kBlockX;
  const int tiles_y = (height + kBlockY - 1) / kBlockY;
  for (int ty = blockIdx.y; ty < tiles_y; ty += gridDim.y) {  // same trips for the whole block
    const int y0 = ty * kBlockY;
    load_tile(in, smem, width, height, x0, y0, r, sw, sh);
    __syncthreads();
    const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
    if (x < width && y < height) {
      uint32_t sum = 0;
      for (int dy = 0; dy <= 2 * r; ++dy) {
        const uint8_t* row = smem + (threadIdx.y + dy) * sw + threadIdx.x;
        for (int dx = 0; dx <= 2 * r; ++dx) sum += row[dx];
      }
      out[int64_t(y) * width + x] = box_mean(sum, count);
    }
    __syncthreads();  // the next tile overwrites smem only after everyone has read it
  }
}

size_t shared_tile_smem(int r) {
  return size_t(kBlockX + 2 * r) * size_t(kBlockY + 2 * r);
}

// ---------------------------------------------------------------------------------------------
// separable: a 32 x 64 output tile. Shared memory holds the horizontal sums of the tile's
// 64 + 2r input rows (uint16, 32 per row, first so they stay 16-byte aligned) and then the
// (32 + 2r) x (64 + 2r) input bytes.
__global__ void __launch_bounds__(kBlockThreads)
    blur_separable(const uint8_t* __restrict__ in, uint8_t* __restrict__ out, int width, int height,
                   int r) {
  extern __shared__ __align__(16) uint8_t smem[];
  const int sw = kBlockX + 2 * r, sh = kSepTileH + 2 * r;
  uint16_t* hsum = reinterpret_cast<uint16_t*>(smem);              // [sh][kBlockX]
  uint8_t* tile = smem + size_t(sh) * kBlockX * sizeof(uint16_t);  // [sh][sw]
  const uint32_t count = uint32_t((2 * r + 1) * (2 * r + 1));
  const int x0 = blockIdx.x * kBlockX;
  const int x = x0 + threadIdx.x;
  const int tiles_y = (height + kSepTileH - 1) / kSepTileH;
  for (int ty = blockIdx.y; ty < tiles_y; ty += gridDim.y) {  // same trips for the whole block
    const int y0 = ty * kSepTileH;
    load_tile(in, tile, width, height, x0, y0, r, sw, sh);
    __syncthreads();
    // Horizontal pass: row sum of the 2r+1 pixels centred on this thread's column, for every
    // input row of the tile. A warp reads consecutive bytes: no bank conflicts.
    for (int row = threadIdx.y; row < sh; row += kBlockY) {
      const uint8_t* p = tile + row * sw + threadIdx.x;
      uint32_t s = 0;
      for (int dx = 0; dx <= 2 * r; ++dx) s += p[dx];
      hsum[row * kBlockX + threadIdx.x] = uint16_t(s);
    }
    __syncthreads();
    // Vertical pass: this thread's outputs are rows oy .. oy+7 of the tile, whose windows are
    // hsum rows oy+j .. oy+j+2r. Sum the first window, then slide it down one row at a time.
    const int oy = threadIdx.y * kSepRowsPerThread;
    const uint16_t* col = hsum + threadIdx.x;
    uint32_t s = 0;
    for (int k = 0; k <= 2 * r; ++k) s += col[(oy + k) * kBlockX];
#pragma unroll
    for (int j = 0; j < kSepRowsPerThread; ++j) {
      if (j > 0) s = s + col[(oy + j + 2 * r) * kBlockX] - col[(oy + j - 1) * kBlockX];
      const int y = y0 + oy + j;
      if (x < width && y < height) out[int64_t(y) * width + x] = box_mean(s, count);
    }
    __syncthreads();  // the next tile overwrites tile and hsum only after everyone is done
  }
}

size_t separable_smem(int r) {
  const size_t sh = size_t(kSepTileH + 2 * r);
  return sh * kBlockX * sizeof(uint16_t) + sh * size_t(kBlockX + 2 * r);
}

// ---- launchers ----------------------------------------------------------------------------------
// Grids: x covers the columns; y the block rows, capped at gridDim.y's limit (the kernels loop).
dim3 grid_of(int w, int h, int rows_per_block) {
  return dim3(gpu100::grid_for(w, kBlockX),
              unsigned(std::min<int64_t>(gpu100::ceil_div<int64_t>(h, rows_per_block),
                                         int64_t(gpu100::kMaxGridDimY))));
}

void launch_naive(const uint8_t* in, uint8_t* out, int w, int h, int r, cudaStream_t s) {
  blur_naive<<<grid_of(w, h, kBlockY), dim3(kBlockX, kBlockY), 0, s>>>(in, out, w, h, r);
  LAUNCH_CHECK();
}

void launch_shared_tile(const uint8_t* in, uint8_t* out, int w, int h, int r, cudaStream_t s) {
  blur_shared_tile<<<grid_of(w, h, kBlockY), dim3(kBlockX, kBlockY), shared_tile_smem(r), s>>>(
      in, out, w, h, r);
  LAUNCH_CHECK();
}

void launch_separable(const uint8_t* in, uint8_t* out, int w, int h, int r, cudaStream_t s) {
  blur_separable<<<grid_of(w, h, kSepTileH), dim3(kBlockX, kBlockY), separable_smem(r), s>>>(
      in, out, w, h, r);
  LAUNCH_CHECK();
}

struct Version {
  const char* name;
  void (*launch)(const uint8_t* in, uint8_t* out, int w, int h, int r, cudaStream_t s);
};
const Version kVersions[] = {
    {"naive", launch_naive},
    {"shared_tile", launch_shared_tile},
    {"separable", launch_separable},
};

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "8-bit box blur of radius r with replicated borders: naive, shared-memory "
      "tile and separable kernels vs cudaMemcpy");
  int64_t width = 12289, height = 8191;
  int radius = 4;
  cli.size("width", width, 97, "image width in pixels", int64_t(1) << 24);
  cli.size("height", height, 61, "image height in pixels", int64_t(1) << 24);
  cli.option("radius", radius, "blur radius r: the window is (2r+1) x (2r+1)", 1, kMaxRadius);
  cli.kernels_of(kVersions);
  // Input and output (1 byte per pixel each) + the copy baseline's two buffers.
  cli.device_bytes([&] { return 4.0 * double(width) * double(height); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    const int w = int(width), h = int(height), r = radius;
    const int64_t n = width * height;
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");

    const auto img = gpu100::random_bytes(size_t(n), ctx.seed());
    const auto ref = blur_reference(img, w, h, r);
    gpu100::DeviceBuffer<uint8_t> d_in(img), d_out{size_t(n)};
    ctx.copy_baseline(size_t(n));  // one byte read + one byte written per pixel, like the kernels

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      runs.push_back(
          {.name = v.name,
           .launch = [&](cudaStream_t s) { v.launch(d_in.data(), d_out.data(), w, h, r, s); },
           .reset = [&] { d_out.poison(); },
           .check = [&] { return gpu100::compare_exact(d_out.download(), ref); },
           .work = 2.0 * double(n)});
    }
    ctx.measure_all(runs);
    report.note(
        "GB/s counts 1 byte read + 1 byte written per pixel (useful traffic only; halo "
        "re-reads and cache hits are not counted)");
  });
}
