// Day 020 - cuBLAS level 1: dot, axpy, scal, nrm2, amax/amin against our own kernels, and incx
//
// Level-1 BLAS is the vector layer of the library: O(n) work on O(n) data, so every call is
// memory bound and the only honest yardstick is bandwidth. Each cuBLAS call runs beside a kernel
// of our own that does the same job on the same data; both report useful GB/s against the HBM
// peak and against a device-to-device cudaMemcpy of the same run ("% of copy"), and a second
// table puts each of our kernels next to its cuBLAS call. Three habits of the API are the lesson:
// amax/amin return a 1-based index, the FIRST of equal magnitudes; CUBLAS_POINTER_MODE_DEVICE
// keeps results (and alphas) in device memory, so no call waits for the host; and every routine
// takes a stride incx: a row of a row-major matrix is contiguous, a column is the strided vector
// x = A + c, incx = ld (in column-major storage it is the other way round).
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
// Our kernels: resident blocks striding over float4 loads, register sums, a warp-shuffle block
// reduction to one partial per block, then one block adds the partials in a fixed order (the same
// bits every run). amax/amin carry (|x|, index) pairs and keep the smaller index on equal
// magnitudes, an order-independent rule. axpy and scal work in place: the reset restores the
// input, and the timed repeats alternate alpha with its inverse so the data stays near its start.
//
// Check (CPU, double): dot and nrm2 with gemm_tolerance(n) (the rounding model of an fp32 sum of n
// terms, any order); axpy and scal elementwise with the fp32 tolerance; amax/amin exactly (the
// first index, 1-based). Inputs are uniform in [-0.5, 1.5) (the dot is far from zero) with planted
// ties: magnitude 2 at three places with both signs, and 0 / -0 at three places.
//
// Run:  build/bin/day020 [--n 67108869] [--rows 4194305 --cols 16] [--kernel own_dot,cublas_dot]
#include <fmt/core.h>

#include <algorithm>
#include <climits>
#include <cmath>
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
constexpr int64_t kIntMax = 2147483647;  // the int API of cuBLAS

// ---- CPU reference ------------------------------------------------------------------------------
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

// The inputs and every answer, in double (indices 1-based, as BLAS returns them).
struct Problem {
  std::vector<float> x, y;    // the vectors (x with planted ties)
  std::vector<float> mat, v;  // a row-major rows x cols matrix and a vector of length rows
  int64_t rows, cols, col;    // col: the column the stride versions read (the last one)
  double dot = 0, nrm2 = 0, col_dot = 0;
  int amax = 0, amin = 0;
};

Problem make_problem(int64_t n, int64_t rows, int64_t cols, uint64_t seed) {
  Problem p;
  p.x = gpu100::random_floats(size_t(n), seed, -0.5f, 1.5f);
  plant_ties(p.x);
  p.y = gpu100::random_floats(size_t(n), seed + 1, -0.5f, 1.5f);
  double sumsq = 0;
  for (size_t i = 0; i < p.x.size(); ++i) {
    p.dot += double(p.x[i]) * double(p.y[i]);
    sumsq += double(p.x[i]) * double(p.x[i]);
  }
  p.nrm2 = std::sqrt(sumsq);
  p.amax = first_extreme_index(p.x, true);
  p.amin = first_extreme_index(p.x, false);

  p.rows = rows, p.cols = cols, p.col = cols - 1;  // its last element is the matrix's last
  p.mat = gpu100::random_floats(size_t(rows) * size_t(cols), seed + 2, -0.5f, 1.5f);
  p.v = gpu100::random_floats(size_t(rows), seed + 3, -0.5f, 1.5f);
  for (int64_t r = 0; r < rows; ++r)
    p.col_dot += double(p.mat[size_t(r * cols + p.col)]) * double(p.v[size_t(r)]);
  return p;
}

// A scalar result against its double reference.
gpu100::CheckResult check_scalar(float got, double ref, gpu100::Tolerance tol) {
  gpu100::ErrorStats s(tol);
  s.add(double(got), ref, 0);
  return s.finish();
}

// ---- kernels ------------------------------------------------------------------------------------
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

// Sums (dot, nrm2).
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

// amax / amin.
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

// axpy, scal (in place, alpha read from device memory).
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

// ---- launchers ----------------------------------------------------------------------------------
// A grid-stride grid: enough blocks for the work items (float4s or elements), at most the blocks
// resident at once (one full wave) and at most kMaxPartials. Each launcher asks the occupancy
// calculator once per kernel (a static): the timed loop should only enqueue launches.
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
void sum_two_pass(const float* x, const float* y, int64_t n, Partials& p, float* result,
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
void arg_two_pass(const float* x, int64_t n, Partials& p, int* result, cudaStream_t s) {
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

void axpy_grid_stride(const float* alpha, const float* x, float* y, int64_t n, cudaStream_t s) {
  static const unsigned res_vec = gpu100::resident_grid(axpy_kernel<true>, kBlock);
  static const unsigned res_scalar = gpu100::resident_grid(axpy_kernel<false>, kBlock);
  if (gpu100::is_aligned(x, 16) && gpu100::is_aligned(y, 16))
    axpy_kernel<true>
        <<<stride_grid(gpu100::ceil_div<int64_t>(n, 4), res_vec), kBlock, 0, s>>>(alpha, x, y, n);
  else
    axpy_kernel<false><<<stride_grid(n, res_scalar), kBlock, 0, s>>>(alpha, x, y, n);
  LAUNCH_CHECK();
}

void scal_grid_stride(const float* alpha, float* x, int64_t n, cudaStream_t s) {
  static const unsigned res_vec = gpu100::resident_grid(scal_kernel<true>, kBlock);
  static const unsigned res_scalar = gpu100::resident_grid(scal_kernel<false>, kBlock);
  if (gpu100::is_aligned(x, 16))
    scal_kernel<true>
        <<<stride_grid(gpu100::ceil_div<int64_t>(n, 4), res_vec), kBlock, 0, s>>>(alpha, x, n);
  else
    scal_kernel<false><<<stride_grid(n, res_scalar), kBlock, 0, s>>>(alpha, x, n);
  LAUNCH_CHECK();
}

// Everything the versions run on: the inputs, in-place work copies, the matrix in both layouts,
// alphas and results in device memory (CUBLAS_POINTER_MODE_DEVICE), the cuBLAS handle.
struct Level1 {
  Level1(const Problem& p, bool cublas_usable)
      : n(int64_t(p.x.size())), rows(p.rows), cols(p.cols), col(p.col),
        x(p.x), y(p.y), xw(p.x.size()), yw(p.y.size()), rm(p.mat), cm(p.mat.size()), v(p.v),
        // alpha and its inverse for each in-place call
        scalars(std::vector<float>{kAxpyAlpha, -kAxpyAlpha, kScalAlpha, 1.0f / kScalAlpha}),
        fres(1), ires(1) {
    // Setup, not timed: the column-major copy.
    const unsigned grid = gpu100::resident_grid(to_column_major, 256);
    to_column_major<<<grid, 256>>>(rm.data(), cm.data(), rows, cols);
    LAUNCH_CHECK();
    CUDA_CHECK(cudaDeviceSynchronize());
    // Only where cuBLAS can run: under the emulator its versions are NOT RUN and never touch h.
    if (cublas_usable) CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
  }
  cublasHandle_t on(cudaStream_t s) {
    h.set_stream(s);
    return h;
  }
  // In-place calls: even calls use alpha, odd calls its inverse (reset() starts at alpha).
  const float* axpy_alpha() { return scalars.data() + (axpy_calls++ % 2); }
  const float* scal_alpha() { return scalars.data() + 2 + (scal_calls++ % 2); }

  int64_t n, rows, cols, col;
  gpu100::DeviceBuffer<float> x, y, xw, yw, rm, cm, v, scalars, fres;
  gpu100::DeviceBuffer<int> ires;
  Partials partials;
  gpu100::CublasHandle h;
  int axpy_calls = 0, scal_calls = 0;
};

void cublas_dot(Level1& d, cudaStream_t s) {
  CUBLAS_CHECK(cublasSdot(d.on(s), int(d.n), d.x.data(), 1, d.y.data(), 1, d.fres.data()));
}
void own_dot(Level1& d, cudaStream_t s) {
  sum_two_pass<false>(d.x.data(), d.y.data(), d.n, d.partials, d.fres.data(), s);
}
void cublas_axpy(Level1& d, cudaStream_t s) {
  CUBLAS_CHECK(cublasSaxpy(d.on(s), int(d.n), d.axpy_alpha(), d.x.data(), 1, d.yw.data(), 1));
}
void own_axpy(Level1& d, cudaStream_t s) {
  axpy_grid_stride(d.axpy_alpha(), d.x.data(), d.yw.data(), d.n, s);
}
void cublas_scal(Level1& d, cudaStream_t s) {
  CUBLAS_CHECK(cublasSscal(d.on(s), int(d.n), d.scal_alpha(), d.xw.data(), 1));
}
void own_scal(Level1& d, cudaStream_t s) { scal_grid_stride(d.scal_alpha(), d.xw.data(), d.n, s); }
void cublas_nrm2(Level1& d, cudaStream_t s) {
  CUBLAS_CHECK(cublasSnrm2(d.on(s), int(d.n), d.x.data(), 1, d.fres.data()));
}
void own_nrm2(Level1& d, cudaStream_t s) {
  sum_two_pass<true>(d.x.data(), nullptr, d.n, d.partials, d.fres.data(), s);
}
void cublas_amax(Level1& d, cudaStream_t s) {
  CUBLAS_CHECK(cublasIsamax(d.on(s), int(d.n), d.x.data(), 1, d.ires.data()));
}
void own_amax(Level1& d, cudaStream_t s) {
  arg_two_pass<true>(d.x.data(), d.n, d.partials, d.ires.data(), s);
}
void cublas_amin(Level1& d, cudaStream_t s) {
  CUBLAS_CHECK(cublasIsamin(d.on(s), int(d.n), d.x.data(), 1, d.ires.data()));
}
void own_amin(Level1& d, cudaStream_t s) {
  arg_two_pass<false>(d.x.data(), d.n, d.partials, d.ires.data(), s);
}
// A column of the row-major matrix: start at element `col` of row 0, step ld = cols.
void dot_strided(Level1& d, cudaStream_t s) {
  CUBLAS_CHECK(cublasSdot(d.on(s), int(d.rows), d.rm.data() + d.col, int(d.cols), d.v.data(), 1,
                          d.fres.data()));
}
// The same column in column-major storage: contiguous, starting at col * ld (ld = rows).
void dot_contiguous(Level1& d, cudaStream_t s) {
  CUBLAS_CHECK(cublasSdot(d.on(s), int(d.rows), d.cm.data() + d.col * d.rows, 1, d.v.data(), 1,
                          d.fres.data()));
}

enum class Op { Dot, Axpy, Scal, Nrm2, Amax, Amin, ColumnDot };
struct Version {
  const char* name;
  Op op;
  bool cublas;  // calls cuBLAS: NOT RUN under the emulator
  void (*launch)(Level1&, cudaStream_t);
};
const Version kVersions[] = {
    {"cublas_dot", Op::Dot, true, cublas_dot},
    {"own_dot", Op::Dot, false, own_dot},
    {"cublas_axpy", Op::Axpy, true, cublas_axpy},
    {"own_axpy", Op::Axpy, false, own_axpy},
    {"cublas_scal", Op::Scal, true, cublas_scal},
    {"own_scal", Op::Scal, false, own_scal},
    {"cublas_nrm2", Op::Nrm2, true, cublas_nrm2},
    {"own_nrm2", Op::Nrm2, false, own_nrm2},
    {"cublas_amax", Op::Amax, true, cublas_amax},
    {"own_amax", Op::Amax, false, own_amax},
    {"cublas_amin", Op::Amin, true, cublas_amin},
    {"own_amin", Op::Amin, false, own_amin},
    {"dot_strided", Op::ColumnDot, true, dot_strided},
    {"dot_contiguous", Op::ColumnDot, true, dot_contiguous},
};

const char* op_name(Op op) {
  switch (op) {
    case Op::Dot: return "dot";
    case Op::Axpy: return "axpy";
    case Op::Scal: return "scal";
    case Op::Nrm2: return "nrm2";
    case Op::Amax: return "amax";
    case Op::Amin: return "amin";
    case Op::ColumnDot: break;
  }
  return "column dot";
}

// A version as ctx.measure takes it: its reset and check, and its useful bytes, follow from its
// operation. The in-place ones restore their input, so an element the call forgets still holds y
// (or x) instead of alpha x + y (or alpha x), and fails.
gpu100::Measure measure_of(const Version& v, Level1& d, const Problem& p) {
  const double f = sizeof(float), n = double(d.n);
  gpu100::Measure m{.name = v.name,
                    .launch = [&v, &d](cudaStream_t s) { v.launch(d, s); },
                    .vendor = v.cublas};
  auto scalar = [&d](double ref, gpu100::Tolerance tol) {
    return [&d, ref, tol] { return check_scalar(d.fres.download()[0], ref, tol); };
  };
  auto index = [&d](int ref) {
    return [&d, ref] { return gpu100::compare_exact(d.ires.download(), std::vector<int>{ref}); };
  };
  const gpu100::Tolerance sum_tol = gpu100::gemm_tolerance(d.n);
  switch (v.op) {
    case Op::Dot:
      m.reset = [&d] { d.fres.poison(); };
      m.check = scalar(p.dot, sum_tol);
      m.work = 2 * f * n;
      break;
    case Op::Nrm2:
      m.reset = [&d] { d.fres.poison(); };
      m.check = scalar(p.nrm2, sum_tol);
      m.work = f * n;
      break;
    case Op::Amax:
    case Op::Amin:
      m.reset = [&d] { d.ires.poison(); };
      m.check = index(v.op == Op::Amax ? p.amax : p.amin);
      m.work = f * n;
      break;
    case Op::Axpy:
      m.reset = [&d] {
        CUDA_CHECK(cudaMemcpy(d.yw.data(), d.y.data(), d.y.bytes(), cudaMemcpyDeviceToDevice));
        d.axpy_calls = 0;
      };
      m.check = [&d, &p] {
        const auto got = d.yw.download();
        gpu100::ErrorStats s(gpu100::Tolerance::FP32());
        for (size_t i = 0; i < got.size(); ++i)
          s.add(double(got[i]), double(kAxpyAlpha) * double(p.x[i]) + double(p.y[i]), int64_t(i));
        return s.finish();
      };
      m.work = 3 * f * n;
      break;
    case Op::Scal:
      m.reset = [&d] {
        CUDA_CHECK(cudaMemcpy(d.xw.data(), d.x.data(), d.x.bytes(), cudaMemcpyDeviceToDevice));
        d.scal_calls = 0;
      };
      m.check = [&d, &p] {
        const auto got = d.xw.download();
        gpu100::ErrorStats s(gpu100::Tolerance::FP32());
        for (size_t i = 0; i < got.size(); ++i)
          s.add(double(got[i]), double(kScalAlpha) * double(p.x[i]), int64_t(i));
        return s.finish();
      };
      m.work = 2 * f * n;
      break;
    case Op::ColumnDot:
      m.reset = [&d] { d.fres.poison(); };
      m.check = scalar(p.col_dot, gpu100::gemm_tolerance(d.rows));
      m.work = 2 * f * double(d.rows);
      break;
  }
  return m;
}

// ---- analysis -----------------------------------------------------------------------------------
// Our kernels next to cuBLAS, for every operation where both ran (r[i] is kVersions[i]'s result).
gpu100::Table own_vs_cublas(const std::vector<gpu100::Measured>& r) {
  gpu100::Table vs;
  vs.title = "own kernels vs cuBLAS (same data, same useful bytes)";
  vs.columns = {"operation", "cuBLAS GB/s", "own GB/s", "own % of cuBLAS"};
  for (size_t i = 0; i < r.size(); ++i) {
    if (kVersions[i].cublas || !r[i].ran) continue;
    for (size_t j = 0; j < r.size(); ++j)
      if (kVersions[j].cublas && kVersions[j].op == kVersions[i].op && r[j].ran)
        vs.add_row({op_name(kVersions[i].op), r[j].rate, r[i].rate,
                    r[j].rate > 0 ? 100.0 * r[i].rate / r[j].rate : 0.0});
  }
  return vs;
}

std::string ties_note(const Problem& p) {
  size_t ties_max = 0, ties_min = 0;
  const float top = std::fabs(p.x[size_t(p.amax - 1)]);
  const float bottom = std::fabs(p.x[size_t(p.amin - 1)]);
  for (float e : p.x) {
    ties_max += std::fabs(e) == top;
    ties_min += std::fabs(e) == bottom;
  }
  return fmt::format(
      "amax: max |x| = {:.9g} occurs {} time(s); BLAS returns the first, 1-based: {} (C index "
      "{}). amin: min |x| = {:.9g} occurs {} time(s), first at {}",
      top, ties_max, p.amax, p.amax - 1, bottom, ties_min, p.amin);
}

std::string stride_note(const Problem& p) {
  return fmt::format(
      "dot_strided: column {} of a row-major {} x {} matrix, incx = ld = {} ({} bytes apart; {}); "
      "dot_contiguous: the same column stored column-major, incx = 1",
      p.col, p.rows, p.cols, p.cols, p.cols * 4,
      p.cols >= 8 ? "one 32-byte sector per element, ~8x the useful bytes move"
                  : "several elements share a 32-byte sector");
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "cuBLAS level 1 (dot, axpy, scal, nrm2, amax, amin) vs our own kernels, and strided vectors "
      "(a matrix column with incx = ld), vs cudaMemcpy");
  int64_t n = (int64_t(1) << 26) + 5;
  int64_t rows = (int64_t(1) << 22) + 1, cols = 16;
  cli.size("n", n, 100'003, "vector length", kIntMax);
  cli.size("rows", rows, 10'007, "rows of the matrix of the stride versions", kIntMax);
  cli.size("cols", cols, 13, "columns of that matrix (= ld = incx of a column)", kIntMax);
  cli.kernels_of(kVersions);
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

    const Problem p = make_problem(n, rows, cols, ctx.seed());
    Level1 d(p, ctx.vendor_libraries());
    ctx.copy_baseline(size_t(n) * sizeof(float));  // reads + writes 8 bytes per element, like dot

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) runs.push_back(measure_of(v, d, p));
    const std::vector<gpu100::Measured> r = ctx.measure_all(runs);

    if (gpu100::Table vs = own_vs_cublas(r); !vs.rows.empty()) report.table(std::move(vs));
    report.note(ties_note(p));
    report.note(stride_note(p));
    report.note(
        "GB/s count the useful bytes of each call (x and y of a dot, y read and written by "
        "axpy, ...); results and alphas live in device memory (CUBLAS_POINTER_MODE_DEVICE), so "
        "no call waits for the host");
  });
}
