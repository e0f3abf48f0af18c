// Day 020 - cuBLAS level 1: dot, axpy, scal, nrm2, amax/amin against our own kernels, and incx
//
// Level-1 BLAS is the vector layer of the library: O(n) work on O(n) data, so every call is
// memory bound and the only honest yardstick is bandwidth. Each cuBLAS call runs beside a kernel
// of our own that does the same job on the same data; both are timed, their useful bytes per
// second are compared with the HBM peak and with a device-to-device cudaMemcpy measured in the
// same run (the "copy" baseline: "% of copy" in the table), and a second table puts each of our
// kernels next to its cuBLAS call ("own % of cuBLAS"). What the day is about:
//
//  * BLAS speaks Fortran. Indices returned by amax/amin are 1-based: cublasIsamax returns the
//    SMALLEST i in 1..n with |x_i| maximal (cublasIsamin likewise for the minimum). Subtract 1
//    before indexing a C array. Ties are part of the contract, so the inputs contain planted ties
//    (magnitude 2, above every random value, at three places with both signs; and 0 and -0 at
//    three places) and the check compares the index exactly with the CPU's first one.
//  * Pointer mode. By default (CUBLAS_POINTER_MODE_HOST) a scalar result (dot, nrm2, an index)
//    is written to host memory, so the call waits for the GPU: a hidden cudaDeviceSynchronize in
//    every dot. Here the handle is in CUBLAS_POINTER_MODE_DEVICE: results land in device memory
//    and the calls stay asynchronous, like a kernel launch. The price: alpha of axpy/scal must
//    then also live in device memory (our kernels take alpha the same way).
//  * Strides. Every level-1 routine takes (n, x, incx): any n floats spaced incx apart. cuBLAS
//    is column-major; a matrix stored row-major (rows x cols, leading dimension ld = cols) is,
//    read by cuBLAS, its transpose in column-major order. A ROW of the row-major matrix is
//    contiguous (x = A + r*ld, incx = 1). A COLUMN is a strided vector: x = A + c, incx = ld.
//    In column-major storage (ld = rows) it is the other way round: a column is contiguous and
//    a row is the strided vector with incx = ld. Same numbers, same call, very different speed:
//    with incx * 4 bytes >= 32 every element sits in its own 32-byte DRAM sector, so the memory
//    system moves about 8x the bytes the call uses.
//
// Versions (fp32; results and alphas in device memory)
//   cublas_dot, own_dot      x . y                    reads 8 bytes per element
//   cublas_axpy, own_axpy    y = alpha x + y          reads 8, writes 4
//   cublas_scal, own_scal    x = alpha x              reads 4, writes 4
//   cublas_nrm2, own_nrm2    sqrt(sum x^2)            reads 4
//   cublas_amax, own_amax    first index of max |x|   reads 4
//   cublas_amin, own_amin    first index of min |x|   reads 4
//   dot_strided              cublasSdot of the last column of a row-major rows x cols matrix
//                            with a vector: x = A + (cols - 1), incx = ld = cols
//   dot_contiguous           the same column in a column-major copy of the matrix: incx = 1
// Our kernels: a fixed grid (the blocks that fit on the GPU at once, fewer for small n) of 256
// threads striding over 16-byte float4 loads (the n % 4 leftovers scalar; scalar throughout if a
// pointer were not 16-byte aligned). The reductions are two launches: each block reduces its
// threads' register sums with warp shuffles and writes one partial, then one block adds the
// partials in a fixed order (deterministic: the same bits every run) and finishes (sqrt for
// nrm2, +1 for the 1-based index). amax/amin carry (|x|, index) pairs and keep the larger (or
// smaller) magnitude, the smaller index on equal magnitudes: an order-independent rule, so the
// first index wins however threads, warps and blocks meet. Our nrm2 sums plain squares, which
// overflow above |x| ~ 1.8e19 (and underflow below ~1e-19); a library nrm2 must not (reference
// BLAS scales the sum; how cuBLAS guards it is not documented), so cuBLAS may do more work per
// element and the two nrm2 rows do not quite measure the same job.
// GB/s count useful bytes (the elements the call needs), so dot_strided's number shows what
// the stride costs. axpy and scal work in place: their "poison" step restores the input
// (an element the call forgets then still holds y or x, not alpha x + y or alpha x, and fails),
// and the timed repeats alternate alpha with its inverse (-alpha for axpy, 1/alpha for scal) so
// the data stays near its starting values however many repeats --iters asks for.
//
// Check (CPU, double): dot and nrm2 against double sums, with gemm_tolerance(n) (the random-walk
// rounding model of an fp32 sum of n terms with a 4x margin; it holds for any summation order,
// which cuBLAS does not document); axpy and scal elementwise with the fp32 tolerance (one or two
// roundings per element); amax/amin exactly (the first index, 1-based). Inputs are uniform in
// [-0.5, 1.5): both signs occur, but the mean is positive, so a dot (about n/4) is far from zero
// and its relative error means something.
//
// Run:  build/bin/day020 [--n 67108869] [--rows 4194305 --cols 16] [--kernel own_dot,cublas_dot]
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"

namespace {

constexpr float kAxpyAlpha = 1.75f;
constexpr float kScalAlpha = -1.25f;
constexpr int kBlock = 256;  // threads per block of every kernel here (a multiple of 32)
constexpr int kWarps = kBlock / 32;
constexpr unsigned kMaxPartials = 4096;  // cap of the reduction grids (the partials buffer)

// Setup, not a timed version: the column-major copy of the row-major matrix, element (r, c)
// moving from r * cols + c to c * rows + r (reads coalesced, writes strided; day 010 shows the
// fast way). It runs once.
__global__ void to_column_major(const float* __restrict__ row_major, float* __restrict__ col_major,
                                int64_t rows, int64_t cols) {
  const int64_t total = rows * cols;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t r = i / cols, c = i - r * cols;
    col_major[c * rows + r] = row_major[i];
  }
}

// ---- our kernels: sums (dot, nrm2) --------------------------------------------------------------
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// The sum of v over the block, valid in thread 0. Every thread of the block must call it (it has
// a barrier), once per kernel (its shared array is not reused).
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float warp_part[kWarps];
  const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
  v = warp_sum(v);
  if (lane == 0) warp_part[warp] = v;
  __syncthreads();
  v = lane < kWarps ? warp_part[lane] : 0.0f;
  return warp == 0 ? warp_sum(v) : 0.0f;
}

// partial[block] = sum over this block's share of x[i] * y[i] (kSquare: x[i] * x[i]; y unused).
// kVec4: x and y 16-byte aligned (the launcher checks); float4 i covers elements 4i .. 4i + 3.
template <bool kSquare, bool kVec4>
__global__ void __launch_bounds__(kBlock)
    sum_partials(const float* __restrict__ x, const float* __restrict__ y, int64_t n,
                 float* __restrict__ partial) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  int64_t scalar_begin = 0;
  if constexpr (kVec4) {
    const int64_t n4 = n / 4;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    const float4* y4 = reinterpret_cast<const float4*>(y);
    for (int64_t i = first; i < n4; i += stride) {
      const float4 a = x4[i];
      const float4 b = kSquare ? a : y4[i];
      acc = fmaf(a.x, b.x, acc);
      acc = fmaf(a.y, b.y, acc);
      acc = fmaf(a.z, b.z, acc);
      acc = fmaf(a.w, b.w, acc);
    }
    scalar_begin = 4 * n4;  // 0..3 leftovers below
  }
  for (int64_t i = scalar_begin + first; i < n; i += stride)
    acc = fmaf(x[i], kSquare ? x[i] : y[i], acc);
  acc = block_sum(acc);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

// One block: *result = sum of the count partials (kSqrt: its square root). The order of the
// additions depends only on count, so the result is the same on every run.
template <bool kSqrt>
__global__ void __launch_bounds__(kBlock)
    sum_finish(const float* __restrict__ partial, int count, float* __restrict__ result) {
  float acc = 0.0f;
  for (int i = int(threadIdx.x); i < count; i += kBlock) acc += partial[i];
  acc = block_sum(acc);
  if (threadIdx.x == 0) *result = kSqrt ? sqrtf(acc) : acc;
}

// ---- our kernels: amax / amin -------------------------------------------------------------------
// Is candidate (v, i) better than (bv, bi)? Larger (kMax) or smaller magnitude, and on equal
// magnitudes the smaller index: a total order, so any tree of comparisons finds the first extreme.
template <bool kMax>
__device__ __forceinline__ bool better(float v, int i, float bv, int bi) {
  return (kMax ? v > bv : v < bv) || (v == bv && i < bi);
}

template <bool kMax>
__device__ __forceinline__ void take(float v, int i, float& bv, int& bi) {
  if (better<kMax>(v, i, bv, bi)) {
    bv = v;
    bi = i;
  }
}

// The best pair of the block, valid in thread 0; every thread must call it, once per kernel.
template <bool kMax>
__device__ __forceinline__ void block_best(float& bv, int& bi) {
  __shared__ float warp_v[kWarps];
  __shared__ int warp_i[kWarps];
  const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    take<kMax>(__shfl_xor_sync(0xffffffffu, bv, offset), __shfl_xor_sync(0xffffffffu, bi, offset),
               bv, bi);
  if (lane == 0) {
    warp_v[warp] = bv;
    warp_i[warp] = bi;
  }
  __syncthreads();
  if (warp == 0) {
    // Lanes past the warp count start from the neutral pair, which loses every comparison.
    bv = lane < kWarps ? warp_v[lane] : (kMax ? -1.0f : INFINITY);
    bi = lane < kWarps ? warp_i[lane] : INT_MAX;
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2)
      take<kMax>(__shfl_xor_sync(0xffffffffu, bv, offset), __shfl_xor_sync(0xffffffffu, bi, offset),
                 bv, bi);
  }
}

// (part_v, part_i)[block] = the best (|x_i|, i) of this block's share (0-based i < n <= INT_MAX).
// The neutral pair (-1 or +inf, INT_MAX) loses to every element (index INT_MAX is never a valid
// 0-based index, and on a tie of magnitudes the smaller index wins). NaNs compare false and are
// skipped (what cuBLAS does with them is not specified; the inputs have none).
template <bool kMax, bool kVec4>
__global__ void __launch_bounds__(kBlock)
    arg_partials(const float* __restrict__ x, int64_t n, float* __restrict__ part_v,
                 int* __restrict__ part_i) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  float bv = kMax ? -1.0f : INFINITY;
  int bi = INT_MAX;
  int64_t scalar_begin = 0;
  if constexpr (kVec4) {
    const int64_t n4 = n / 4;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    for (int64_t i = first; i < n4; i += stride) {
      const float4 a = x4[i];
      const int base = int(4 * i);  // 4 * i + 3 < n <= INT_MAX
      take<kMax>(fabsf(a.x), base, bv, bi);
      take<kMax>(fabsf(a.y), base + 1, bv, bi);
      take<kMax>(fabsf(a.z), base + 2, bv, bi);
      take<kMax>(fabsf(a.w), base + 3, bv, bi);
    }
    scalar_begin = 4 * n4;
  }
  for (int64_t i = scalar_begin + first; i < n; i += stride)
    take<kMax>(fabsf(x[i]), int(i), bv, bi);
  block_best<kMax>(bv, bi);
  if (threadIdx.x == 0) {
    part_v[blockIdx.x] = bv;
    part_i[blockIdx.x] = bi;
  }
}

// One block: *result = 1-based index of the best of the count partials (0 if none was valid).
template <bool kMax>
__global__ void __launch_bounds__(kBlock)
    arg_finish(const float* __restrict__ part_v, const int* __restrict__ part_i, int count,
               int* __restrict__ result) {
  float bv = kMax ? -1.0f : INFINITY;
  int bi = INT_MAX;
  for (int i = int(threadIdx.x); i < count; i += kBlock) take<kMax>(part_v[i], part_i[i], bv, bi);
  block_best<kMax>(bv, bi);
  if (threadIdx.x == 0) *result = bi == INT_MAX ? 0 : bi + 1;
}

// ---- our kernels: axpy, scal (in place, alpha read from device memory) --------------------------
template <bool kVec4>
__global__ void __launch_bounds__(kBlock)
    axpy_kernel(const float* __restrict__ alpha, const float* __restrict__ x, float* __restrict__ y,
                int64_t n) {
  const float a = *alpha;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t scalar_begin = 0;
  if constexpr (kVec4) {
    const int64_t n4 = n / 4;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* y4 = reinterpret_cast<float4*>(y);
    for (int64_t i = first; i < n4; i += stride) {
      const float4 xv = x4[i];
      float4 yv = y4[i];
      yv.x = fmaf(a, xv.x, yv.x);
      yv.y = fmaf(a, xv.y, yv.y);
      yv.z = fmaf(a, xv.z, yv.z);
      yv.w = fmaf(a, xv.w, yv.w);
      y4[i] = yv;
    }
    scalar_begin = 4 * n4;
  }
  for (int64_t i = scalar_begin + first; i < n; i += stride) y[i] = fmaf(a, x[i], y[i]);
}

template <bool kVec4>
__global__ void __launch_bounds__(kBlock)
    scal_kernel(const float* __restrict__ alpha, float* __restrict__ x, int64_t n) {
  const float a = *alpha;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t scalar_begin = 0;
  if constexpr (kVec4) {
    const int64_t n4 = n / 4;
    float4* x4 = reinterpret_cast<float4*>(x);
    for (int64_t i = first; i < n4; i += stride) {
      float4 v = x4[i];
      v.x *= a;
      v.y *= a;
      v.z *= a;
      v.w *= a;
      x4[i] = v;
    }
    scalar_begin = 4 * n4;
  }
  for (int64_t i = scalar_begin + first; i < n; i += stride) x[i] *= a;
}

// ---- launchers
// ----------------------------------------------------------------------------------- A grid-stride
// grid: enough blocks for the work items (float4s or elements), at most the blocks resident at once
// (one full wave) and at most kMaxPartials. Each launcher asks the occupancy calculator once per
// kernel (a static): the timed loop should only enqueue launches.
unsigned stride_grid(int64_t items, unsigned resident) {
  const int64_t want = std::max<int64_t>(1, gpu100::ceil_div<int64_t>(items, kBlock));
  const int64_t cap = std::min<int64_t>(resident, kMaxPartials);
  return unsigned(std::min(want, cap));
}

// The scratch space of the two-pass reductions (one partial per block of the first pass).
struct Partials {
  gpu100::DeviceBuffer<float> v{kMaxPartials};
  gpu100::DeviceBuffer<int> i{kMaxPartials};
};

template <bool kSquare>
void own_sum(const float* x, const float* y, int64_t n, Partials& p, float* result,
             cudaStream_t s) {
  static const unsigned res_vec = gpu100::resident_grid(sum_partials<kSquare, true>, kBlock);
  static const unsigned res_scalar = gpu100::resident_grid(sum_partials<kSquare, false>, kBlock);
  const bool vec = gpu100::is_aligned(x, 16) && (kSquare || gpu100::is_aligned(y, 16));
  unsigned grid;
  if (vec) {
    grid = stride_grid(gpu100::ceil_div<int64_t>(n, 4), res_vec);
    sum_partials<kSquare, true><<<grid, kBlock, 0, s>>>(x, y, n, p.v.data());
  } else {
    grid = stride_grid(n, res_scalar);
    sum_partials<kSquare, false><<<grid, kBlock, 0, s>>>(x, y, n, p.v.data());
  }
  LAUNCH_CHECK();
  sum_finish<kSquare><<<1, kBlock, 0, s>>>(p.v.data(), int(grid), result);
  LAUNCH_CHECK();
}

template <bool kMax>
void own_arg(const float* x, int64_t n, Partials& p, int* result, cudaStream_t s) {
  static const unsigned res_vec = gpu100::resident_grid(arg_partials<kMax, true>, kBlock);
  static const unsigned res_scalar = gpu100::resident_grid(arg_partials<kMax, false>, kBlock);
  unsigned grid;
  if (gpu100::is_aligned(x, 16)) {
    grid = stride_grid(gpu100::ceil_div<int64_t>(n, 4), res_vec);
    arg_partials<kMax, true><<<grid, kBlock, 0, s>>>(x, n, p.v.data(), p.i.data());
  } else {
    grid = stride_grid(n, res_scalar);
    arg_partials<kMax, false><<<grid, kBlock, 0, s>>>(x, n, p.v.data(), p.i.data());
  }
  LAUNCH_CHECK();
  arg_finish<kMax><<<1, kBlock, 0, s>>>(p.v.data(), p.i.data(), int(grid), result);
  LAUNCH_CHECK();
}

void own_axpy(const float* alpha, const float* x, float* y, int64_t n, cudaStream_t s) {
  static const unsigned res_vec = gpu100::resident_grid(axpy_kernel<true>, kBlock);
  static const unsigned res_scalar = gpu100::resident_grid(axpy_kernel<false>, kBlock);
  if (gpu100::is_aligned(x, 16) && gpu100::is_aligned(y, 16))
    axpy_kernel<true>
        <<<stride_grid(gpu100::ceil_div<int64_t>(n, 4), res_vec), kBlock, 0, s>>>(alpha, x, y, n);
  else
    axpy_kernel<false><<<stride_grid(n, res_scalar), kBlock, 0, s>>>(alpha, x, y, n);
  LAUNCH_CHECK();
}

void own_scal(const float* alpha, float* x, int64_t n, cudaStream_t s) {
  static const unsigned res_vec = gpu100::resident_grid(scal_kernel<true>, kBlock);
  static const unsigned res_scalar = gpu100::resident_grid(scal_kernel<false>, kBlock);
  if (gpu100::is_aligned(x, 16))
    scal_kernel<true>
        <<<stride_grid(gpu100::ceil_div<int64_t>(n, 4), res_vec), kBlock, 0, s>>>(alpha, x, n);
  else
    scal_kernel<false><<<stride_grid(n, res_scalar), kBlock, 0, s>>>(alpha, x, n);
  LAUNCH_CHECK();
}

// ---- CPU side ----------------------------------------------------------------------------------
// Ties for amax and amin, at places that land in the same float4, in different threads and (for
// large n) in different blocks: magnitude 2 (above every input in [-0.5, 1.5)) with both signs,
// and 0 / -0 (nothing is smaller). Only for n >= 16, where the six places are distinct.
void plant_ties(std::vector<float>& x) {
  const size_t n = x.size();
  if (n < 16) return;
  x[n - 1] = 2.0f;
  x[(2 * n) / 3 + 1] = 2.0f;
  x[(2 * n) / 3] = -2.0f;  // the first of the three: amax is (2n)/3 + 1 (1-based)
  x[n / 2] = 0.0f;
  x[n / 5 + 1] = 0.0f;
  x[n / 5] = -0.0f;  // the first zero: amin is n/5 + 1 (1-based)
}

// The 1-based index of the first element of largest (or smallest) magnitude: BLAS's i?amax /
// i?amin rule. Strict comparisons keep the first of equal magnitudes.
int first_extreme_index(const std::vector<float>& x, bool largest) {
  size_t best = 0;
  float best_abs = std::fabs(x[0]);
  for (size_t i = 1; i < x.size(); ++i) {
    const float a = std::fabs(x[i]);
    if (largest ? a > best_abs : a < best_abs) {
      best = i;
      best_abs = a;
    }
  }
  return int(best) + 1;
}

// A scalar result against its double reference.
gpu100::CheckResult check_scalar(float got, double ref, gpu100::Tolerance tol) {
  gpu100::ErrorStats s(tol);
  s.add(double(got), ref, 0);
  return s.finish();
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "cuBLAS level 1 (dot, axpy, scal, nrm2, amax, amin) vs our own kernels, and strided vectors "
      "(a matrix column with incx = ld), vs cudaMemcpy");
  int64_t n = (int64_t(1) << 26) + 5;
  int64_t rows = (int64_t(1) << 22) + 1, cols = 16;
  constexpr int64_t kIntMax = 2147483647;  // the int API of cuBLAS
  cli.size("n", n, 100'003, "vector length", kIntMax);
  cli.size("rows", rows, 10'007, "rows of the matrix of the stride versions", kIntMax);
  cli.size("cols", cols, 13, "columns of that matrix (= ld = incx of a column)", kIntMax);
  const std::vector<std::string> ops = {"dot", "axpy", "scal", "nrm2", "amax", "amin"};
  std::vector<std::string> names;
  for (const auto& op : ops) {
    names.push_back("cublas_" + op);
    names.push_back("own_" + op);
  }
  names.push_back("dot_strided");
  names.push_back("dot_contiguous");
  cli.kernels(names);
  cli.validate([&]() -> std::string {
    // The strided vector spans (rows - 1) * cols + 1 elements; keep every offset inside int.
    if (double(rows) * double(cols) > double(kIntMax))
      return "rows * cols must be below 2^31 (cuBLAS level-1 offsets are int)";
    return "";
  });
  // x, y and the two in-place work copies; the matrix twice; the vector of the column dots; the
  // copy baseline's two buffers (at most 1 GiB each); partials and scalars.
  cli.device_bytes([&] {
    const double copy = std::min(4.0 * double(n), double(gpu100::kMaxCopyProbeBytes));
    return 16.0 * double(n) + 8.0 * double(rows) * double(cols) + 4.0 * double(rows) + 2.0 * copy +
           double(1 << 20);
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.problem("n", double(n));
    report.problem("rows", double(rows));
    report.problem("cols", double(cols));
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    report.baseline_as_percent();

    // ---- inputs and CPU references ------------------------------------------------------
    const size_t count = size_t(n);
    auto x = gpu100::random_floats(count, ctx.seed(), -0.5f, 1.5f);
    plant_ties(x);
    const auto y = gpu100::random_floats(count, ctx.seed() + 1, -0.5f, 1.5f);
    double dot_ref = 0, sumsq = 0;
    for (size_t i = 0; i < count; ++i) {
      dot_ref += double(x[i]) * double(y[i]);
      sumsq += double(x[i]) * double(x[i]);
    }
    const double nrm2_ref = std::sqrt(sumsq);
    const int amax_ref = first_extreme_index(x, true);
    const int amin_ref = first_extreme_index(x, false);

    const size_t mcount = size_t(rows) * size_t(cols);
    const auto mat = gpu100::random_floats(mcount, ctx.seed() + 2, -0.5f, 1.5f);
    const auto v = gpu100::random_floats(size_t(rows), ctx.seed() + 3, -0.5f, 1.5f);
    const int64_t col = cols - 1;  // the last column: its last element is the matrix's last
    double col_dot_ref = 0;
    for (int64_t r = 0; r < rows; ++r)
      col_dot_ref += double(mat[size_t(r * cols + col)]) * double(v[size_t(r)]);

    // ---- device data --------------------------------------------------------------------
    gpu100::DeviceBuffer<float> d_x(x), d_y(y), d_xw(count), d_yw(count);
    gpu100::DeviceBuffer<float> d_rm(mat), d_cm(mcount), d_v(v);
    {
      const unsigned grid = gpu100::resident_grid(to_column_major, 256);
      to_column_major<<<grid, 256>>>(d_rm.data(), d_cm.data(), rows, cols);
      LAUNCH_CHECK();
      CUDA_CHECK(cudaDeviceSynchronize());
    }
    // Scalars in device memory (device pointer mode): alpha and its inverse for each call.
    const std::vector<float> scalars = {kAxpyAlpha, -kAxpyAlpha, kScalAlpha, 1.0f / kScalAlpha};
    gpu100::DeviceBuffer<float> d_scalars(scalars), d_fres(1);
    gpu100::DeviceBuffer<int> d_ires(1);
    Partials partials;

    gpu100::CublasHandle h;  // the cuBLAS versions are NOT RUN under the emulator
    if (ctx.vendor_libraries()) CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
    const int N = int(n), R = int(rows), C = int(cols);

    ctx.copy_baseline(count * sizeof(float));  // reads + writes 8 bytes per element, like dot
    const double fbytes = double(sizeof(float));

    // ---- checks shared by both implementations of an operation --------------------------
    const gpu100::Tolerance sum_tol = gpu100::gemm_tolerance(n);
    auto float_result = [&](double ref, gpu100::Tolerance tol) {
      return [&d_fres, ref, tol] { return check_scalar(d_fres.download()[0], ref, tol); };
    };
    auto index_result = [&](int ref) {
      return [&d_ires, ref] {
        return gpu100::compare_exact(d_ires.download(), std::vector<int>{ref});
      };
    };
    auto poison_f = [&] { d_fres.poison(); };
    auto poison_i = [&] { d_ires.poison(); };
    auto check_axpy = [&] {
      const auto got = d_yw.download();
      gpu100::ErrorStats s(gpu100::Tolerance::FP32());
      for (size_t i = 0; i < count; ++i)
        s.add(double(got[i]), double(kAxpyAlpha) * double(x[i]) + double(y[i]), int64_t(i));
      return s.finish();
    };
    auto check_scal = [&] {
      const auto got = d_xw.download();
      gpu100::ErrorStats s(gpu100::Tolerance::FP32());
      for (size_t i = 0; i < count; ++i)
        s.add(double(got[i]), double(kScalAlpha) * double(x[i]), int64_t(i));
      return s.finish();
    };
    // In-place calls: restore the input; even calls use alpha, odd calls its inverse.
    int axpy_calls = 0, scal_calls = 0;
    auto reset_y = [&] {
      CUDA_CHECK(cudaMemcpy(d_yw.data(), d_y.data(), d_y.bytes(), cudaMemcpyDeviceToDevice));
      axpy_calls = 0;
    };
    auto reset_x = [&] {
      CUDA_CHECK(cudaMemcpy(d_xw.data(), d_x.data(), d_x.bytes(), cudaMemcpyDeviceToDevice));
      scal_calls = 0;
    };
    auto axpy_alpha = [&] { return d_scalars.data() + (axpy_calls++ % 2); };
    auto scal_alpha = [&] { return d_scalars.data() + 2 + (scal_calls++ % 2); };

    // ---- the versions -------------------------------------------------------------------
    const double dot_bytes = 2 * fbytes * double(n), read_bytes = fbytes * double(n);
    ctx.run_vendor_version(
        "cublas_dot",
        [&](cudaStream_t s) {
          h.set_stream(s);
          CUBLAS_CHECK(cublasSdot(h, N, d_x.data(), 1, d_y.data(), 1, d_fres.data()));
        },
        poison_f, float_result(dot_ref, sum_tol), dot_bytes);
    ctx.run_version(
        "own_dot",
        [&](cudaStream_t s) {
          own_sum<false>(d_x.data(), d_y.data(), n, partials, d_fres.data(), s);
        },
        poison_f, float_result(dot_ref, sum_tol), dot_bytes);

    ctx.run_vendor_version(
        "cublas_axpy",
        [&](cudaStream_t s) {
          h.set_stream(s);
          CUBLAS_CHECK(cublasSaxpy(h, N, axpy_alpha(), d_x.data(), 1, d_yw.data(), 1));
        },
        reset_y, check_axpy, 3 * fbytes * double(n));
    ctx.run_version(
        "own_axpy", [&](cudaStream_t s) { own_axpy(axpy_alpha(), d_x.data(), d_yw.data(), n, s); },
        reset_y, check_axpy, 3 * fbytes * double(n));

    ctx.run_vendor_version(
        "cublas_scal",
        [&](cudaStream_t s) {
          h.set_stream(s);
          CUBLAS_CHECK(cublasSscal(h, N, scal_alpha(), d_xw.data(), 1));
        },
        reset_x, check_scal, 2 * fbytes * double(n));
    ctx.run_version(
        "own_scal", [&](cudaStream_t s) { own_scal(scal_alpha(), d_xw.data(), n, s); }, reset_x,
        check_scal, 2 * fbytes * double(n));

    ctx.run_vendor_version(
        "cublas_nrm2",
        [&](cudaStream_t s) {
          h.set_stream(s);
          CUBLAS_CHECK(cublasSnrm2(h, N, d_x.data(), 1, d_fres.data()));
        },
        poison_f, float_result(nrm2_ref, sum_tol), read_bytes);
    ctx.run_version(
        "own_nrm2",
        [&](cudaStream_t s) { own_sum<true>(d_x.data(), nullptr, n, partials, d_fres.data(), s); },
        poison_f, float_result(nrm2_ref, sum_tol), read_bytes);

    ctx.run_vendor_version(
        "cublas_amax",
        [&](cudaStream_t s) {
          h.set_stream(s);
          CUBLAS_CHECK(cublasIsamax(h, N, d_x.data(), 1, d_ires.data()));
        },
        poison_i, index_result(amax_ref), read_bytes);
    ctx.run_version(
        "own_amax",
        [&](cudaStream_t s) { own_arg<true>(d_x.data(), n, partials, d_ires.data(), s); }, poison_i,
        index_result(amax_ref), read_bytes);

    ctx.run_vendor_version(
        "cublas_amin",
        [&](cudaStream_t s) {
          h.set_stream(s);
          CUBLAS_CHECK(cublasIsamin(h, N, d_x.data(), 1, d_ires.data()));
        },
        poison_i, index_result(amin_ref), read_bytes);
    ctx.run_version(
        "own_amin",
        [&](cudaStream_t s) { own_arg<false>(d_x.data(), n, partials, d_ires.data(), s); },
        poison_i, index_result(amin_ref), read_bytes);

    // A column of the row-major matrix: start at element `col` of row 0, step ld = cols.
    const gpu100::Tolerance col_tol = gpu100::gemm_tolerance(rows);
    ctx.run_vendor_version(
        "dot_strided",
        [&](cudaStream_t s) {
          h.set_stream(s);
          CUBLAS_CHECK(cublasSdot(h, R, d_rm.data() + col, C, d_v.data(), 1, d_fres.data()));
        },
        poison_f, float_result(col_dot_ref, col_tol), 2 * fbytes * double(rows));

    // The same column in column-major storage: contiguous, starting at col * ld (ld = rows).
    ctx.run_vendor_version(
        "dot_contiguous",
        [&](cudaStream_t s) {
          h.set_stream(s);
          CUBLAS_CHECK(cublasSdot(h, R, d_cm.data() + col * rows, 1, d_v.data(), 1, d_fres.data()));
        },
        poison_f, float_result(col_dot_ref, col_tol), 2 * fbytes * double(rows));

    // ---- our kernels next to cuBLAS -----------------------------------------------------
    gpu100::Table vs;
    vs.title = "own kernels vs cuBLAS (same data, same useful bytes)";
    vs.columns = {"operation", "cuBLAS GB/s", "own GB/s", "own % of cuBLAS"};
    for (const auto& op : ops) {
      const auto* b = report.find("cublas_" + op);
      const auto* o = report.find("own_" + op);
      if (!b || !o || !b->time.valid() || !o->time.valid()) continue;
      vs.add_row({op, b->rate, o->rate, b->rate > 0 ? 100.0 * o->rate / b->rate : 0.0});
    }
    if (!vs.rows.empty()) report.table(std::move(vs));

    // ---- notes --------------------------------------------------------------------------
    size_t ties_max = 0, ties_min = 0;
    const float top = std::fabs(x[size_t(amax_ref - 1)]);
    const float bottom = std::fabs(x[size_t(amin_ref - 1)]);
    for (float e : x) {
      ties_max += std::fabs(e) == top;
      ties_min += std::fabs(e) == bottom;
    }
    char line[320];
    std::snprintf(line, sizeof line,
                  "amax: max |x| = %.9g occurs %zu time(s); BLAS returns the first, 1-based: %d "
                  "(C index %d). amin: min |x| = %.9g occurs %zu time(s), first at %d",
                  double(top), ties_max, amax_ref, amax_ref - 1, double(bottom), ties_min,
                  amin_ref);
    report.note(line);
    std::snprintf(line, sizeof line,
                  "dot_strided: column %lld of a row-major %lld x %lld matrix, incx = ld = %lld "
                  "(%lld bytes apart; %s); dot_contiguous: the same column stored column-major, "
                  "incx = 1",
                  (long long)col, (long long)rows, (long long)cols, (long long)cols,
                  (long long)(cols * 4),
                  cols >= 8 ? "one 32-byte sector per element, ~8x the useful bytes move"
                            : "several elements share a 32-byte sector");
    report.note(line);
    report.note(
        "GB/s count the useful bytes of each call (x and y of a dot, y read and written by "
        "axpy, ...); results and alphas live in device memory (CUBLAS_POINTER_MODE_DEVICE), so "
        "no call waits for the host");
  });
}
