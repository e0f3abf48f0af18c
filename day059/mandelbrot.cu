// Day 059 - Mandelbrot: escape-time counts, one thread per pixel vs dynamic parallelism
//
// A pixel's dwell is the number of steps z <- z^2 + c (z starting at 0, c the pixel's point)
// before |z| > 2, capped at --max-iter. Pixels are independent, so one thread per pixel is the
// obvious kernel, but the work is anything but even: points inside the set run the full cap,
// points far outside leave after a step or two, and a warp runs as long as its slowest lane.
// The picture itself has structure: large regions of equal dwell (the set's interior, the outer
// bands). Mariani-Silver exploits it: if a rectangle's border has one dwell, take the interior to
// have it too (regions of equal dwell are connected and have no holes) and fill it without
// iterating; otherwise split the rectangle and look again. The split is recursive and data
// dependent, which is what kernels launching kernels (dynamic parallelism) are for.
//
// Versions
//   flat     one thread per pixel in 16x16 blocks.
//   mariani  one block per rectangle: its threads compute the border's dwells (and store them),
//            reduce their minimum and maximum in shared memory; equal: the block fills the
//            interior; a small rectangle or the depth limit: the block computes every interior
//            pixel; else thread 0 launches a 2x2 grid of the same kernel on the quadrants, from
//            the device (relocatable device code, the device runtime), or, if the device
//            runtime refuses the launch, the block computes the interior itself. The host
//            launches one block per 64x64 tile.
//
// Check: one __host__ __device__ dwell function with every float operation spelled out (the
// device's __fmul_rn / __fadd_rn / __fsub_rn, plain operations on the host, which is compiled
// with -ffp-contract=off): no contraction into fma anywhere, so the counts are exactly the CPU's.
// flat is compared with the per-pixel CPU image, mariani with the same subdivision run on the
// CPU (the border test is a heuristic: a thin filament can cross a rectangle without touching its
// border, so where the two CPU images differ is reported, not failed).
//
// The rate is Mpixels/s. --frames-dir DIR also writes --frame-count frames of a zoom into the
// seahorse valley, with a palette that cycles from frame to frame, as binary PPM (P6) files
// DIR/frame_000.ppm, ... computed by the flat kernel (README.md shows how to view them).
//
// Run:  build/bin/day059 [--width 4097 --height 3073 --max-iter 1024] [--kernel flat,mariani]
//                        [--frames-dir frames --frame-count 48]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

// The complex-plane window: pixel (px, py) is the point (x0 + px dx, y1 - py dy), row 0 on top.
struct View {
  float x0, y1, dx, dy;
};
View view_of(double cx, double cy, double width, int w, int h) {
  const double d = width / w;
  return View{float(cx - 0.5 * w * d), float(cy + 0.5 * h * d), float(d), float(d)};
}

// ---- the dwell, the same operations on both sides -------------------------------------------
__host__ __device__ inline float mul(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
__host__ __device__ inline float add(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
__host__ __device__ inline float sub(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

__host__ __device__ inline int dwell_at(const View& v, int px, int py, int max_iter) {
  const float cx = add(v.x0, mul(float(px), v.dx));
  const float cy = sub(v.y1, mul(float(py), v.dy));
  float x = 0.0f, y = 0.0f;
  int i = 0;
  for (; i < max_iter; ++i) {
    const float x2 = mul(x, x), y2 = mul(y, y);
    if (add(x2, y2) > 4.0f) break;
    const float xy = mul(x, y);
    y = add(add(xy, xy), cy);
    x = add(sub(x2, y2), cx);
  }
  return i;
}

// Mariani-Silver's parameters, shared by the kernel and its CPU model.
constexpr int kTile = 64;     // the host's grid: one block per tile (the last ones smaller)
constexpr int kMinSide = 32;  // a rectangle this narrow is computed pixel by pixel
static_assert(kTile <= 2 * kMinSide,
              "the pending-launch bound in main assumes one level of launches");
constexpr int kMaxDepth = 6;  // nesting below the host's grid (the device allows 24)

// Rectangle (x, y, w, h) split into gx x gy pieces; piece (i, j) in integer arithmetic, so any
// size splits without gaps or overlaps.
struct Rect {
  int x, y, w, h;
};
__host__ __device__ inline Rect piece_of(const Rect& r, int gx, int gy, int i, int j) {
  const int xa = r.x + int(int64_t(r.w) * i / gx), xb = r.x + int(int64_t(r.w) * (i + 1) / gx);
  const int ya = r.y + int(int64_t(r.h) * j / gy), yb = r.y + int(int64_t(r.h) * (j + 1) / gy);
  return Rect{xa, ya, xb - xa, yb - ya};
}
// The border's k-th pixel: top row, bottom row, then the left and right columns between them.
__host__ __device__ inline int border_count(const Rect& p) {
  return (p.w <= 2 || p.h <= 2) ? p.w * p.h : 2 * p.w + 2 * (p.h - 2);
}
__host__ __device__ inline void border_pixel(const Rect& p, int k, int* px, int* py) {
  if (p.w <= 2 || p.h <= 2) {
    *px = p.x + k % p.w;
    *py = p.y + k / p.w;
    return;
  }
  if (k < p.w) {
    *px = p.x + k;
    *py = p.y;
    return;
  }
  k -= p.w;
  if (k < p.w) {
    *px = p.x + k;
    *py = p.y + p.h - 1;
    return;
  }
  k -= p.w;
  *px = (k & 1) ? p.x + p.w - 1 : p.x;
  *py = p.y + 1 + k / 2;
}

// ---- CPU reference ----------------------------------------------------------------------------
std::vector<int> flat_cpu(const View& v, int w, int h, int max_iter) {
  std::vector<int> out(size_t(w) * h);
  for (int py = 0; py < h; ++py)
    for (int px = 0; px < w; ++px) out[size_t(py) * w + px] = dwell_at(v, px, py, max_iter);
  return out;
}

// The kernel's decisions, in the same order; counts the grids the device would launch.
struct MarianiCpu {
  const View& v;
  int w, max_iter;
  std::vector<int>& out;
  int64_t child_grids = 0, filled = 0;

  void grid(const Rect& r, int gx, int gy, int depth) {
    for (int j = 0; j < gy; ++j)
      for (int i = 0; i < gx; ++i) block(piece_of(r, gx, gy, i, j), depth);
  }
  void block(const Rect& p, int depth) {
    if (p.w <= 0 || p.h <= 0) return;
    int lo = max_iter + 1, hi = -1;
    for (int k = 0; k < border_count(p); ++k) {
      int px, py;
      border_pixel(p, k, &px, &py);
      const int d = dwell_at(v, px, py, max_iter);
      out[size_t(py) * w + px] = d;
      lo = std::min(lo, d);
      hi = std::max(hi, d);
    }
    if (p.w <= 2 || p.h <= 2) return;  // all border
    if (lo == hi) {
      for (int py = p.y + 1; py < p.y + p.h - 1; ++py)
        for (int px = p.x + 1; px < p.x + p.w - 1; ++px) out[size_t(py) * w + px] = lo;
      filled += int64_t(p.w - 2) * (p.h - 2);
    } else if (p.w <= kMinSide || p.h <= kMinSide || depth >= kMaxDepth) {
      for (int py = p.y + 1; py < p.y + p.h - 1; ++py)
        for (int px = p.x + 1; px < p.x + p.w - 1; ++px)
          out[size_t(py) * w + px] = dwell_at(v, px, py, max_iter);
    } else {
      ++child_grids;
      grid(p, 2, 2, depth + 1);
    }
  }
};

// ---- kernels ------------------------------------------------------------------------------------
__global__ void mandelbrot_flat(int* __restrict__ out, View v, int w, int h, int max_iter) {
  const int px = blockIdx.x * blockDim.x + threadIdx.x;
  const int py = blockIdx.y * blockDim.y + threadIdx.y;
  if (px < w && py < h) out[size_t(py) * w + px] = dwell_at(v, px, py, max_iter);
}

// Block (i, j) of this grid owns piece (i, j) of r; the host's grid has depth 0.
__global__ void mandelbrot_mariani(int* __restrict__ out, View v, int w, int max_iter, Rect r,
                                   int depth) {
  __shared__ int lo, hi, launched;
  const Rect p = piece_of(r, gridDim.x, gridDim.y, blockIdx.x, blockIdx.y);
  if (p.w <= 0 || p.h <= 0) return;  // the whole block leaves: no barrier is left waiting
  if (threadIdx.x == 0) {
    lo = max_iter + 1;
    hi = -1;
  }
  __syncthreads();
  int my_lo = max_iter + 1, my_hi = -1;
  for (int k = threadIdx.x; k < border_count(p); k += blockDim.x) {
    int px, py;
    border_pixel(p, k, &px, &py);
    const int d = dwell_at(v, px, py, max_iter);
    out[size_t(py) * w + px] = d;
    my_lo = min(my_lo, d);
    my_hi = max(my_hi, d);
  }
  if (my_hi >= 0) {
    atomicMin(&lo, my_lo);
    atomicMax(&hi, my_hi);
  }
  __syncthreads();
  if (p.w <= 2 || p.h <= 2) return;
  const int iw = p.w - 2, n = iw * (p.h - 2);
  if (lo == hi) {
    for (int k = threadIdx.x; k < n; k += blockDim.x)
      out[size_t(p.y + 1 + k / iw) * w + p.x + 1 + k % iw] = lo;
    return;
  }
  bool subdivide = p.w > kMinSide && p.h > kMinSide && depth < kMaxDepth;
  if (subdivide) {  // lo, hi and p are the block's: every thread takes this branch or none
    if (threadIdx.x == 0) {
      // The border stored above is visible to the children: a grid sees its parent's writes
      // made before the launch. The parent needs nothing back: it counts as complete only when
      // they are.
      mandelbrot_mariani<<<dim3(2, 2), blockDim.x>>>(out, v, w, max_iter, p, depth + 1);
      launched = cudaGetLastError() == cudaSuccess;
    }
    __syncthreads();
    // A launch the device runtime refused (too many pending, say) is done here instead.
    subdivide = launched;
  }
  if (!subdivide)
    for (int k = threadIdx.x; k < n; k += blockDim.x) {
      const int px = p.x + 1 + k % iw, py = p.y + 1 + k / iw;
      out[size_t(py) * w + px] = dwell_at(v, px, py, max_iter);
    }
}

// ---- launchers ----------------------------------------------------------------------------------
constexpr int kFlatBlock = 16, kMarianiBlock = 128;
enum class Kind { flat, mariani };
struct Version {
  const char* name;
  Kind kind;
};
const Version kVersions[] = {{"flat", Kind::flat}, {"mariani", Kind::mariani}};

void launch(const Version& v, int* out, const View& view, int w, int h, int max_iter,
            cudaStream_t s) {
  if (v.kind == Kind::flat) {
    const dim3 block(kFlatBlock, kFlatBlock);
    const dim3 grid(unsigned((w + kFlatBlock - 1) / kFlatBlock),
                    unsigned((h + kFlatBlock - 1) / kFlatBlock));
    mandelbrot_flat<<<grid, block, 0, s>>>(out, view, w, h, max_iter);
  } else {
    const dim3 grid(unsigned((w + kTile - 1) / kTile), unsigned((h + kTile - 1) / kTile));
    mandelbrot_mariani<<<grid, kMarianiBlock, 0, s>>>(out, view, w, max_iter, Rect{0, 0, w, h}, 0);
  }
  LAUNCH_CHECK();
}

// ---- analysis: frames -------------------------------------------------------------------------
// A cosine palette whose phase moves with the frame; the set's interior stays black.
void colour(int dwell, int max_iter, int frame, unsigned char* rgb) {
  if (dwell >= max_iter) {
    rgb[0] = rgb[1] = rgb[2] = 0;
    return;
  }
  const double t = std::sqrt(double(dwell) / max_iter) * 4.0 + frame * 0.04;
  for (int c = 0; c < 3; ++c)
    rgb[c] =
        static_cast<unsigned char>(127.5 * (1.0 + std::cos(6.283185307179586 * (t + c / 3.0))));
}

void write_ppm(const std::string& path, const std::vector<int>& dwell, int w, int h, int max_iter,
               int frame) {
  std::vector<unsigned char> rgb(size_t(w) * h * 3);
  for (size_t i = 0; i < dwell.size(); ++i) colour(dwell[i], max_iter, frame, &rgb[3 * i]);
  std::ofstream f(path, std::ios::binary);
  f << "P6\n" << w << ' ' << h << "\n255\n";
  f.write(reinterpret_cast<const char*>(rgb.data()), std::streamsize(rgb.size()));
  if (!f) throw std::runtime_error("cannot write " + path);
}

// Pixels where Mariani-Silver's image differs from the per-pixel one.
int64_t differing(const std::vector<int>& a, const std::vector<int>& b) {
  int64_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
  return n;
}

// --frames-dir takes any path, which the common options do not: it is taken out of argv here.
// Returns "" or the error.
std::string take_frames_dir(int& argc, char** argv, std::string& dir) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    int used = 0;
    if (a == "--frames-dir") {
      if (i + 1 >= argc || !*argv[i + 1]) return "--frames-dir needs a directory";
      dir = argv[i + 1];
      used = 2;
    } else if (a.rfind("--frames-dir=", 0) == 0) {
      dir = a.substr(13);
      if (dir.empty()) return "--frames-dir needs a directory";
      used = 1;
    }
    if (used) {
      for (int j = i; j + used < argc; ++j) argv[j] = argv[j + used];
      argc -= used;
      argv[argc] = nullptr;
      --i;
    }
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  std::string frames_dir;
  if (const std::string e = take_frames_dir(argc, argv, frames_dir); !e.empty()) {
    std::fprintf(stderr, "day059: error: %s\n", e.c_str());
    return 2;
  }
  gpu100::Cli cli(
      "Mandelbrot escape-time counts: one thread per pixel vs Mariani-Silver with kernels launched "
      "from the device; --frames-dir DIR writes a zoom as PPM frames");
  int64_t width = 4097, height = 3073;
  int max_iter = 1024, frame_count = 48;
  cli.size("width", width, 769, "image width in pixels", 16384);
  cli.size("height", height, 513, "image height in pixels", 16384);
  cli.option("max-iter", max_iter, "iteration cap (the dwell of the set's interior)", 1, 1 << 20);
  cli.option("frame-count", frame_count, "frames written with --frames-dir", 1, 10000);
  cli.kernels_of(kVersions);
  cli.device_bytes([&] { return double(width) * double(height) * sizeof(int); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("Mpixels/s");
    const int w = int(width), h = int(height);
    const double pixels = double(w) * h;
    // The whole set: a large interior and wide outer bands, the case Mariani-Silver is for.
    const View view = view_of(-0.75, 0.0, 3.0, w, h);

    const auto ref_flat = flat_cpu(view, w, h, max_iter);
    std::vector<int> ref_mariani(size_t(w) * h, -1);
    MarianiCpu model{view, w, max_iter, ref_mariani};
    model.grid(Rect{0, 0, w, h}, (w + kTile - 1) / kTile, (h + kTile - 1) / kTile, 0);

    // Only a 64-pixel tile's block launches (its quadrants are no wider than kMinSide), so at
    // most one grid per tile is waiting to start; the device runtime's default allows 2048.
    const size_t tiles = size_t((w + kTile - 1) / kTile) * size_t((h + kTile - 1) / kTile);
    CUDA_CHECK(
        cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, std::max<size_t>(2048, tiles)));
    gpu100::DeviceBuffer<int> d_out{size_t(w) * h};
    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      const auto& ref = v.kind == Kind::flat ? ref_flat : ref_mariani;
      runs.push_back(
          {.name = v.name,
           .launch = [&](cudaStream_t s) { launch(v, d_out.data(), view, w, h, max_iter, s); },
           .reset = [&] { d_out.poison(); },
           .check = [&] { return gpu100::compare_exact(d_out.download(), ref); },
           .rate = [pixels](double ms) { return pixels / (ms * 1e3); }});
    }
    ctx.measure_all(runs);

    report.note(fmt::format(
        "mariani: {} grids launched from the device, {} of {} pixels filled without iterating, "
        "{} pixels differ from the per-pixel image (from the CPU model)",
        model.child_grids, model.filled, int64_t(pixels), differing(ref_flat, ref_mariani)));

    if (!frames_dir.empty()) {
      std::filesystem::create_directories(frames_dir);
      for (int f = 0; f < frame_count; ++f) {
        const double span = 3.0 * std::pow(0.88, f);
        const View fv = view_of(-0.743643887 * (1 - std::pow(0.88, f)) - 0.75 * std::pow(0.88, f),
                                0.131825904 * (1 - std::pow(0.88, f)), span, w, h);
        launch(kVersions[0], d_out.data(), fv, w, h, max_iter, nullptr);
        CUDA_CHECK(cudaDeviceSynchronize());
        write_ppm(fmt::format("{}/frame_{:03d}.ppm", frames_dir, f), d_out.download(), w, h,
                  max_iter, f);
      }
      report.note(fmt::format("wrote {} frames {}x{} to {}/frame_000.ppm ...", frame_count, w, h,
                              frames_dir));
    }
  });
}
