// Day 005 - RGB to grayscale: gray = (77 R + 150 G + 29 B + 128) >> 8 for an 8-bit image
//
// A pixel-wise kernel whose only cost is memory traffic, and whose lesson is the shape of that
// traffic: 3-byte pixels do not fit the 4-, 8- and 16-byte loads the hardware likes.
//
// The formula: BT.601 luma is Y = 0.299 R + 0.587 G + 0.114 B. Scaled by 256 the weights are
// 76.544, 150.272 and 29.184; rounded to 77, 150, 29 they still sum to 256, so white stays 255
// and no sum can leave 8 bits after the shift. Adding 128 (half of 256) before the shift makes
// the division round to nearest instead of truncating. Everything is integer arithmetic, so the
// GPU result must equal the CPU result bit for bit; the same function computes both.
//
// The image is width x height packed pixels with no row padding, so every version walks it as
// one flat array of pixels (no 2D grid, no gridDim.y limit).
//
// Versions (each thread of a grid-stride loop):
//   uchar3  one pixel per thread from the packed RGB image. uchar3 has 1-byte alignment, so a
//           pixel is three 1-byte loads; 4 bytes of traffic per pixel (3 read, 1 written).
//   uchar4  one pixel per thread from an RGBX copy of the image (4 bytes per pixel, X unused):
//           the layout the kernel prefers, one 4-byte load per pixel. It moves 5 bytes per pixel
//           (4 read, 1 written), but its GB/s counts the same useful 4 as every version (the X
//           byte is padding), so GB/s and "x copy" rank the versions by how fast they convert
//           an image; moving 25% more bytes should hold it near 80% of the copy.
//   wide4   four pixels per thread from the packed image: 12 bytes = three 32-bit loads, one
//           32-bit store of four gray bytes. Thread g reads bytes 12g..12g+11, always 4-aligned.
//   wide16  sixteen pixels per thread: 48 bytes = three 16-byte loads (ld.global.v4.u32), one
//           16-byte store. The fewest memory instructions per byte: expected to be the fastest on
//           the packed input. The n % 16 pixels past the last full group are done one per thread.
//
// Baseline: a device-to-device cudaMemcpy moving the same 4 bytes per pixel (2n read + 2n
// written), so "x copy" says how close each version comes to the practical bandwidth ceiling.
// GB/s always counts the useful 4 bytes per pixel (3 read, 1 written), whatever a version moves.
// The grid-stride grid is what fits on the GPU at once (occupancy API): one full wave.
//
// Run:  build/bin/day005 [--width 15361 --height 8641] [--kernel uchar3,wide16] [--json out.json]
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

// The one formula both sides use (day 003: one __host__ __device__ function, no drift).
GPU100_HD constexpr uint8_t luma(uint32_t r, uint32_t g, uint32_t b) {
  return uint8_t((77u * r + 150u * g + 29u * b + 128u) >> 8);
}
static_assert(luma(255, 255, 255) == 255 && luma(0, 0, 0) == 0, "weights must sum to 256");

// ---- CPU reference ------------------------------------------------------------------------------
std::vector<uint8_t> grayscale_cpu(const std::vector<uint8_t>& rgb, size_t n) {
  std::vector<uint8_t> gray(n);
  for (size_t i = 0; i < n; ++i) gray[i] = luma(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
  return gray;
}

// The RGBX copy the uchar4 version reads: the same pixels with a fourth (ignored) byte.
std::vector<uint8_t> rgbx_of(const std::vector<uint8_t>& rgb, size_t n) {
  std::vector<uint8_t> rgbx(4 * n);
  for (size_t i = 0; i < n; ++i) {
    memcpy(&rgbx[4 * i], &rgb[3 * i], 3);
    rgbx[4 * i + 3] = 255;
  }
  return rgbx;
}

// ---- kernels ------------------------------------------------------------------------------------
__global__ void gray_uchar3(const uchar3* __restrict__ rgb, uint8_t* __restrict__ gray, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uchar3 p = rgb[i];
    gray[i] = luma(p.x, p.y, p.z);
  }
}

__global__ void gray_uchar4(const uchar4* __restrict__ rgbx, uint8_t* __restrict__ gray,
                            int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uchar4 p = rgbx[i];  // one 4-byte load; p.w is ignored
    gray[i] = luma(p.x, p.y, p.z);
  }
}

// Byte k of a little-endian array of 32-bit words; with k a compile-time constant after
// unrolling this is one shift-and-mask on a register.
__device__ __forceinline__ uint32_t byte_at(const uint32_t* words, int k) {
  return (words[k >> 2] >> (8 * (k & 3))) & 0xFFu;
}

// P = sizeof(V) pixels per thread: their 3P RGB bytes are exactly three V's, and their P gray
// bytes exactly one V. Group g starts at byte 3Pg of the input and Pg of the output, both
// multiples of sizeof(V), so the vector accesses are aligned whenever the base pointers are
// (the launcher checks). memcpy between a vector and words is how C++ says "reinterpret these
// registers"; it compiles to nothing.
template <class V>
__global__ void gray_wide(const uint8_t* __restrict__ rgb, uint8_t* __restrict__ gray, int64_t n) {
  constexpr int P = int(sizeof(V));
  constexpr int W = P / 4;  // 32-bit words per vector
  const V* __restrict__ in = reinterpret_cast<const V*>(rgb);
  V* __restrict__ out = reinterpret_cast<V*>(gray);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t groups = n / P;
  for (int64_t g = tid; g < groups; g += stride) {
    uint32_t w[3 * W];
#pragma unroll
    for (int k = 0; k < 3; ++k) {
      const V v = in[3 * g + k];
      memcpy(&w[k * W], &v, sizeof(V));
    }
    uint32_t o[W];
#pragma unroll
    for (int q = 0; q < W; ++q) o[q] = 0;
#pragma unroll
    for (int p = 0; p < P; ++p)
      o[p / 4] |= uint32_t(luma(byte_at(w, 3 * p), byte_at(w, 3 * p + 1), byte_at(w, 3 * p + 2)))
                  << (8 * (p % 4));
    V v;
    memcpy(&v, o, sizeof(V));
    out[g] = v;
  }
  // The last n % P pixels (fewer than P), one per thread.
  for (int64_t i = groups * P + tid; i < n; i += stride)
    gray[i] = luma(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
}

// ---- launchers ----------------------------------------------------------------------------------
constexpr int kBlock = 256;

struct Image {
  const uint8_t* rgb;   // 3 bytes per pixel, packed
  const uint8_t* rgbx;  // 4 bytes per pixel
  uint8_t* gray;
  int64_t n;  // pixels
};

void launch_uchar3(const Image& im, unsigned grid, cudaStream_t s) {
  gray_uchar3<<<grid, kBlock, 0, s>>>(reinterpret_cast<const uchar3*>(im.rgb), im.gray, im.n);
  LAUNCH_CHECK();
}

void launch_uchar4(const Image& im, unsigned grid, cudaStream_t s) {
  gray_uchar4<<<grid, kBlock, 0, s>>>(reinterpret_cast<const uchar4*>(im.rgbx), im.gray, im.n);
  LAUNCH_CHECK();
}

template <class V>
void launch_wide(const Image& im, unsigned grid, cudaStream_t s) {
  // Group g starts at byte 3 * sizeof(V) * g of rgb and sizeof(V) * g of gray: vector-aligned
  // for every g exactly when the base pointers are.
  if (!gpu100::is_aligned(im.rgb, sizeof(V)) || !gpu100::is_aligned(im.gray, sizeof(V)))
    throw std::invalid_argument("gray_wide needs buffers aligned to the vector size");
  gray_wide<V><<<grid, kBlock, 0, s>>>(im.rgb, im.gray, im.n);
  LAUNCH_CHECK();
}

// Every version is a grid-stride loop over what fits on the GPU at once (occupancy API).
struct Version {
  const char* name;
  void (*launch)(const Image&, unsigned grid, cudaStream_t);
  unsigned (*grid)();
};
const Version kVersions[] = {
    {"uchar3", launch_uchar3, [] { return gpu100::resident_grid(gray_uchar3, kBlock); }},
    {"uchar4", launch_uchar4, [] { return gpu100::resident_grid(gray_uchar4, kBlock); }},
    {"wide4", launch_wide<uint32_t>,
     [] { return gpu100::resident_grid(gray_wide<uint32_t>, kBlock); }},
    {"wide16", launch_wide<uint4>, [] { return gpu100::resident_grid(gray_wide<uint4>, kBlock); }},
};

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "8-bit RGB to gray with rounded BT.601 integer weights: uchar3, uchar4, "
      "wide4 and wide16 loads vs cudaMemcpy");
  int64_t width = 15361, height = 8641;
  cli.size("width", width, 333, "image width in pixels", int64_t(1) << 24);
  cli.size("height", height, 211, "image height in pixels", int64_t(1) << 24);
  cli.kernels_of(kVersions);
  // RGB (3n) + RGBX copy (4n) + gray (n).
  cli.device_bytes([&] { return 8.0 * double(width) * double(height); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    const int64_t n = width * height;
    report.problem("pixels", double(n));
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");

    const size_t count = size_t(n);
    const auto rgb = gpu100::random_bytes(3 * count, ctx.seed());
    const auto ref = grayscale_cpu(rgb, count);
    gpu100::DeviceBuffer<uint8_t> d_rgb(rgb), d_rgbx(rgbx_of(rgb, count)), d_gray(count);
    const Image image{d_rgb.data(), d_rgbx.data(), d_gray.data(), n};
    // 4 bytes of traffic per pixel (3 read + 1 written): a copy of 2n bytes moves the same.
    ctx.copy_baseline(2 * count);

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      runs.push_back({.name = v.name,
                      .launch = [&, grid = v.grid()](cudaStream_t s) { v.launch(image, grid, s); },
                      .reset = [&] { d_gray.poison(); },
                      .check = [&] { return gpu100::compare_exact(d_gray.download(), ref); },
                      .work = 4.0 * double(n)});  // useful traffic: 3 bytes read + 1 written
    }
    ctx.measure_all(runs);
    report.note(
        "GB/s counts the useful 4 bytes per pixel for every version; uchar4 actually reads a "
        "4-byte RGBX pixel (5 bytes moved per pixel), so expect about 0.8x copy at best");
  });
}
