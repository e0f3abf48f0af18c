// Day 041 - RMSNorm: y = x * rstd * w, rstd = 1 / sqrt(mean(x^2) + eps), forward and backward
//
// LayerNorm without the mean: one statistic per row (the root mean square), one weight vector w
// and no bias. It is what LLaMA-style models use, and like every normalization it is memory
// bound: a row is read, reduced to one number, and read again to be scaled. The forward saves
// rstd per row (4 bytes) so that the backward need not recompute it. With g = dy * w:
//   dx_j = rstd * g_j - x_j * rstd^3 * mean_k(g_k x_k)        (per row)
//   dw_j = sum over rows of dy_j * x_j * rstd                  (per column, across rows)
// so the backward has a row reduction (dx) and a column reduction (dw), in separate kernels.
//
// Versions (fp32 unless named bf16; the bf16 ones keep x, w, y, dy, dx in bf16 and do every
// sum in fp32)
//   fwd_thread         one thread per row: simple, and each warp request touches 32 rows.
//   fwd_warp           one warp per row, lanes stride over the row (coalesced), shuffle sum.
//   fwd_warp_vec       the same with 16-byte loads and stores (4 floats): a row is split into a
//                      scalar head up to the first 16-byte boundary, whole vectors, a scalar tail,
//                      so any row length and any row start works.
//   fwd_warp_vec_bf16  fwd_warp_vec on bf16 data: 8 elements per 16-byte access.
//   bwd_warp           warp per row for dx (sum of g x, then dx); dw in two stages: column
//                      partial sums over fixed chunks of rows, then the sum of the chunks in
//                      order (deterministic: no atomics, the same bits on every run).
//   bwd_warp_vec       dx with 16-byte accesses; the same dw kernels.
//   bwd_warp_vec_bf16  bf16 x, w, dy and dx; dw accumulated and stored in fp32.
//
// Check: against a CPU reference in double on the same (bf16-rounded, for bf16) inputs. Every
// fifth row is all zeros: mean(x^2) = 0, rstd = 1/sqrt(eps), y = 0 and dx = rstd * g, the case
// that needs eps. fp32 tolerances follow from the rounding-error bound of the sums (the row sums
// of squares, the row sums of g x, the column sums of dw), never below common/'s fp32 defaults;
// bf16 y uses common/'s bf16 tolerance; bf16 dx the fp32 bound plus the final rounding (dx
// cancels: with one column, dx = rstd g eps / (x^2 + eps)), never below the bf16 tolerance;
// bf16 dw (fp32 sums) the same bound as fp32. The CPU backward itself is checked against
// central finite differences of the CPU forward on a tiny case (one zero row included).
//
// Run:  build/bin/day041 [--rows 4096] [--cols 4096] [--eps 1e-6] [--kernel fwd_warp_vec,...]
#include <cuda_bf16.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

using bf16 = __nv_bfloat16;

constexpr int kBlock = 256;       // 8 warps: 8 rows per block in the warp-per-row kernels
constexpr int kDwChunkRows = 64;  // rows one dw partial sums in stage 1
constexpr int kMaxGridY = 65535;  // the most blocks a grid has in y
constexpr double kU = 0x1p-24;    // fp32 unit roundoff

// ---- CPU reference ------------------------------------------------------------------------------
struct Problem {
  int rows = 0, cols = 0;
  double eps = 0;
};

// y and rstd in double from x, w (already rounded to the kernel's input type).
void rmsnorm_forward_cpu(const Problem& p, const std::vector<double>& x,
                         const std::vector<double>& w, std::vector<double>& y,
                         std::vector<double>& rstd) {
  y.assign(size_t(p.rows) * p.cols, 0.0);
  rstd.assign(p.rows, 0.0);
  for (int i = 0; i < p.rows; ++i) {
    const double* xr = &x[size_t(i) * p.cols];
    double ss = 0;
    for (int j = 0; j < p.cols; ++j) ss += xr[j] * xr[j];
    const double r = 1.0 / std::sqrt(ss / p.cols + p.eps);
    rstd[i] = r;
    for (int j = 0; j < p.cols; ++j) y[size_t(i) * p.cols + j] = xr[j] * r * w[j];
  }
}

void rmsnorm_backward_cpu(const Problem& p, const std::vector<double>& x,
                          const std::vector<double>& w, const std::vector<double>& rstd,
                          const std::vector<double>& dy, std::vector<double>& dx,
                          std::vector<double>& dw) {
  dx.assign(size_t(p.rows) * p.cols, 0.0);
  dw.assign(p.cols, 0.0);
  for (int i = 0; i < p.rows; ++i) {
    const size_t o = size_t(i) * p.cols;
    const double r = rstd[i];
    double gx = 0;
    for (int j = 0; j < p.cols; ++j) gx += dy[o + j] * w[j] * x[o + j];
    const double c = r * r * r * gx / p.cols;
    for (int j = 0; j < p.cols; ++j) {
      dx[o + j] = r * dy[o + j] * w[j] - x[o + j] * c;
      dw[j] += dy[o + j] * x[o + j] * r;
    }
  }
}

double gamma(double h) {
  return h * kU / (1 - h * kU);
}

// Additions a warp-per-row sum puts on each input: cols/32 in a lane's register, 5 shuffles;
// a thread-per-row sum: all of them.
double row_additions(int cols, bool per_thread) {
  return per_thread ? double(cols) : std::ceil(cols / 32.0) + 5;
}

// Relative bound of y: the sum of squares (non-negative terms, h additions, one rounding each
// square) is off by gamma_{h+1}; the divide and eps add two roundings; rsqrtf is within 2 ulp
// (4 u); rstd takes half the relative error of what it is the inverse root of; x * rstd * w two
// more roundings.
double forward_bound(int cols, bool per_thread) {
  return 0.5 * gamma(row_additions(cols, per_thread) + 3) + 4 * kU + gamma(2);
}

// Per-element bound of dx: the row sum of g x (h additions of terms with 2 roundings each) is
// off by gamma_{h+2} sum|g x|, and every product on the way adds a few roundings (rstd was
// rounded to fp32 when handed over: one more).
std::vector<double> dx_bound(const Problem& p, const std::vector<double>& x,
                             const std::vector<double>& w, const std::vector<double>& rstd,
                             const std::vector<double>& dy) {
  std::vector<double> b(x.size());
  const double h = row_additions(p.cols, false);
  for (int i = 0; i < p.rows; ++i) {
    const size_t o = size_t(i) * p.cols;
    const double r = rstd[i];
    double a = 0;
    for (int j = 0; j < p.cols; ++j) a += std::fabs(dy[o + j] * w[j] * x[o + j]);
    for (int j = 0; j < p.cols; ++j) {
      const double t1 = std::fabs(r * dy[o + j] * w[j]),
                   t2 = std::fabs(x[o + j]) * r * r * r * a / p.cols;
      b[o + j] = gamma(4) * t1 + gamma(h + 9) * t2;
    }
  }
  return b;
}

// Per-element bound of dw: a column sum over the rows in two stages, kDwChunkRows additions in
// stage 1 and one per chunk in stage 2, of terms with 3 roundings (two products, rstd to fp32).
std::vector<double> dw_bound(const Problem& p, const std::vector<double>& x,
                             const std::vector<double>& rstd, const std::vector<double>& dy) {
  std::vector<double> s(p.cols, 0.0);
  for (int i = 0; i < p.rows; ++i)
    for (int j = 0; j < p.cols; ++j)
      s[j] += std::fabs(dy[size_t(i) * p.cols + j] * x[size_t(i) * p.cols + j] * rstd[i]);
  const double h = kDwChunkRows + std::ceil(double(p.rows) / kDwChunkRows) + 3;
  for (double& v : s) v *= gamma(h);
  return s;
}

// ---- kernels ------------------------------------------------------------------------------------
__device__ __forceinline__ float to_float(float v) {
  return v;
}
__device__ __forceinline__ float to_float(bf16 v) {
  return __bfloat162float(v);
}
template <class T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ bf16 from_float<bf16>(float v) {
  return __float2bfloat16_rn(v);
}

// A 16-byte access holds kVec<T> elements.
template <class T>
constexpr int kVec = 16 / int(sizeof(T));

template <class T>
__device__ __forceinline__ void load_vec(const T* p, float (&v)[kVec<T>]) {
  const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
  const unsigned words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if constexpr (sizeof(T) == 4) {
      v[k] = __uint_as_float(words[k]);
    } else {
      const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&words[k]));
      v[2 * k] = f.x;
      v[2 * k + 1] = f.y;
    }
  }
}

template <class T>
__device__ __forceinline__ void store_vec(T* p, const float (&v)[kVec<T>]) {
  unsigned words[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if constexpr (sizeof(T) == 4) {
      words[k] = __float_as_uint(v[k]);
    } else {
      const __nv_bfloat162 h = __floats2bfloat162_rn(v[2 * k], v[2 * k + 1]);
      words[k] = *reinterpret_cast<const unsigned*>(&h);
    }
  }
  *reinterpret_cast<uint4*>(p) = make_uint4(words[0], words[1], words[2], words[3]);
}

// How a row is walked: [0, head) and [head + nvec * V, cols) element by element, the nvec
// vectors between them 16 bytes at a time. Every buffer's base is 16-byte aligned (the launcher
// checks), so rows of x, y, dy and dx that start at the same index share one split; w starts at
// index 0 and is read as vectors only where head is 0.
struct RowSplit {
  int head, nvec, tail;  // tail: first element after the vectors
};
template <class T, bool kVector>
__device__ __forceinline__ RowSplit split_row(const T* row, int cols) {
  if constexpr (!kVector) {
    return {0, 0, 0};
  } else {
    constexpr int V = kVec<T>;
    const int misaligned = int((reinterpret_cast<uintptr_t>(row) % 16) / sizeof(T));
    const int head = min((V - misaligned) % V, cols);
    const int nvec = (cols - head) / V;
    return {head, nvec, head + nvec * V};
  }
}

template <int kLanes>
__device__ __forceinline__ float lanes_sum(float v) {
#pragma unroll
  for (int k = kLanes / 2; k > 0; k /= 2) v += __shfl_xor_sync(0xffffffffu, v, k);
  return v;
}

// kLanes threads own a row (1: a thread, 32: a warp). A row is handed out whole to a warp, so
// the rows >= rows exit per warp and every shuffle has all 32 lanes.
template <class T, int kLanes, bool kVector>
__global__ void rmsnorm_forward(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y,
                                float* __restrict__ rstd, int rows, int cols, float eps) {
  constexpr int V = kVec<T>;
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t row = t / kLanes;
  const int lane = int(t % kLanes);
  if (row >= rows) return;
  const T* xr = x + row * cols;
  T* yr = y + row * cols;
  const RowSplit s = split_row<T, kVector>(xr, cols);

  float ss = 0;
  for (int j = lane; j < s.head; j += kLanes) ss += to_float(xr[j]) * to_float(xr[j]);
  for (int k = lane; k < s.nvec; k += kLanes) {
    float v[V];
    load_vec(xr + s.head + k * V, v);
#pragma unroll
    for (int e = 0; e < V; ++e) ss += v[e] * v[e];
  }
  for (int j = s.tail + lane; j < cols; j += kLanes) ss += to_float(xr[j]) * to_float(xr[j]);
  ss = lanes_sum<kLanes>(ss);
  const float r = rsqrtf(ss / float(cols) + eps);
  if (lane == 0) rstd[row] = r;

  for (int j = lane; j < s.head; j += kLanes)
    yr[j] = from_float<T>(to_float(xr[j]) * r * to_float(w[j]));
  for (int k = lane; k < s.nvec; k += kLanes) {
    const int j0 = s.head + k * V;
    float v[V], wv[V];
    load_vec(xr + j0, v);
    if (s.head == 0) {
      load_vec(w + j0, wv);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) wv[e] = to_float(w[j0 + e]);
    }
#pragma unroll
    for (int e = 0; e < V; ++e) v[e] = v[e] * r * wv[e];
    store_vec(yr + j0, v);
  }
  for (int j = s.tail + lane; j < cols; j += kLanes)
    yr[j] = from_float<T>(to_float(xr[j]) * r * to_float(w[j]));
}

// dx for one row per warp: first sum g x over the row, then write dx.
template <class T, bool kVector>
__global__ void rmsnorm_backward_dx(const T* __restrict__ x, const T* __restrict__ w,
                                    const float* __restrict__ rstd, const T* __restrict__ dy,
                                    T* __restrict__ dx, int rows, int cols) {
  constexpr int V = kVec<T>;
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t row = t / 32;
  const int lane = int(t % 32);
  if (row >= rows) return;
  const T* xr = x + row * cols;
  const T* dyr = dy + row * cols;
  T* dxr = dx + row * cols;
  const RowSplit s = split_row<T, kVector>(xr, cols);

  // Loads one vector's worth of w (as a vector where its alignment allows).
  auto load_w = [&](int j0, float(&wv)[V]) {
    if (s.head == 0) {
      load_vec(w + j0, wv);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) wv[e] = to_float(w[j0 + e]);
    }
  };

  float gx = 0;
  for (int j = lane; j < s.head; j += 32) gx += to_float(dyr[j]) * to_float(w[j]) * to_float(xr[j]);
  for (int k = lane; k < s.nvec; k += 32) {
    const int j0 = s.head + k * V;
    float xv[V], gv[V], wv[V];
    load_vec(xr + j0, xv);
    load_vec(dyr + j0, gv);
    load_w(j0, wv);
#pragma unroll
    for (int e = 0; e < V; ++e) gx += gv[e] * wv[e] * xv[e];
  }
  for (int j = s.tail + lane; j < cols; j += 32)
    gx += to_float(dyr[j]) * to_float(w[j]) * to_float(xr[j]);
  gx = lanes_sum<32>(gx);
  const float r = rstd[row];
  const float c = r * r * r * gx / float(cols);

  for (int j = lane; j < s.head; j += 32)
    dxr[j] = from_float<T>(r * to_float(dyr[j]) * to_float(w[j]) - to_float(xr[j]) * c);
  for (int k = lane; k < s.nvec; k += 32) {
    const int j0 = s.head + k * V;
    float xv[V], gv[V], wv[V];
    load_vec(xr + j0, xv);
    load_vec(dyr + j0, gv);
    load_w(j0, wv);
#pragma unroll
    for (int e = 0; e < V; ++e) gv[e] = r * gv[e] * wv[e] - xv[e] * c;
    store_vec(dxr + j0, gv);
  }
  for (int j = s.tail + lane; j < cols; j += 32)
    dxr[j] = from_float<T>(r * to_float(dyr[j]) * to_float(w[j]) - to_float(xr[j]) * c);
}

// dw stage 1: thread = column, blockIdx.y = a chunk of kDwChunkRows rows. Consecutive threads
// read consecutive columns (coalesced); each chunk's partial sums go to their own row of
// `partial`, so no two threads add to one word.
template <class T>
__global__ void rmsnorm_dw_partial(const T* __restrict__ x, const float* __restrict__ rstd,
                                   const T* __restrict__ dy, float* __restrict__ partial, int rows,
                                   int cols, int chunks) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  // A grid has at most 65535 blocks in y: past that many chunks, each block takes several.
  for (int chunk = blockIdx.y; chunk < chunks; chunk += gridDim.y) {
    const int r0 = chunk * kDwChunkRows, r1 = min(rows, r0 + kDwChunkRows);
    float acc = 0;
    for (int i = r0; i < r1; ++i) {
      const int64_t o = int64_t(i) * cols + j;
      acc += to_float(dy[o]) * to_float(x[o]) * rstd[i];
    }
    partial[int64_t(chunk) * cols + j] = acc;
  }
}

// dw stage 2: each column adds its chunks in order, so the result does not depend on scheduling.
__global__ void rmsnorm_dw_sum(const float* __restrict__ partial, float* __restrict__ dw,
                               int chunks, int cols) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  float acc = 0;
  for (int c = 0; c < chunks; ++c) acc += partial[int64_t(c) * cols + j];
  dw[j] = acc;
}

// ---- launchers ----------------------------------------------------------------------------------
enum class Pass { forward, backward };
enum class Type { f32, bf16 };

struct Version {
  const char* name;
  Pass pass;
  Type type;
  int lanes;    // threads per row (forward; the backward is warp per row)
  bool vector;  // 16-byte accesses
};
const Version kVersions[] = {
    {"fwd_thread", Pass::forward, Type::f32, 1, false},
    {"fwd_warp", Pass::forward, Type::f32, 32, false},
    {"fwd_warp_vec", Pass::forward, Type::f32, 32, true},
    {"fwd_warp_vec_bf16", Pass::forward, Type::bf16, 32, true},
    {"bwd_warp", Pass::backward, Type::f32, 32, false},
    {"bwd_warp_vec", Pass::backward, Type::f32, 32, true},
    {"bwd_warp_vec_bf16", Pass::backward, Type::bf16, 32, true},
};

unsigned grid_of(const Version& v, int rows) {
  return gpu100::grid_for(int64_t(rows) * v.lanes, kBlock);
}

void require_aligned(std::initializer_list<const void*> ptrs) {
  for (const void* p : ptrs)
    if (!gpu100::is_aligned(p, 16))
      throw std::invalid_argument("the vectorized kernels need 16-byte aligned buffers");
}

template <class T>
void launch_forward(const Version& v, unsigned grid, const T* x, const T* w, T* y, float* rstd,
                    const Problem& p, cudaStream_t s) {
  const float eps = float(p.eps);
  if (v.lanes == 1) {
    rmsnorm_forward<T, 1, false><<<grid, kBlock, 0, s>>>(x, w, y, rstd, p.rows, p.cols, eps);
  } else if (!v.vector) {
    rmsnorm_forward<T, 32, false><<<grid, kBlock, 0, s>>>(x, w, y, rstd, p.rows, p.cols, eps);
  } else {
    require_aligned({x, w, y});
    rmsnorm_forward<T, 32, true><<<grid, kBlock, 0, s>>>(x, w, y, rstd, p.rows, p.cols, eps);
  }
  LAUNCH_CHECK();
}

template <class T>
void launch_backward(const Version& v, unsigned grid, const T* x, const T* w, const float* rstd,
                     const T* dy, T* dx, float* partial, float* dw, const Problem& p,
                     cudaStream_t s) {
  if (v.vector) {
    require_aligned({x, w, dy, dx});
    rmsnorm_backward_dx<T, true><<<grid, kBlock, 0, s>>>(x, w, rstd, dy, dx, p.rows, p.cols);
  } else {
    rmsnorm_backward_dx<T, false><<<grid, kBlock, 0, s>>>(x, w, rstd, dy, dx, p.rows, p.cols);
  }
  LAUNCH_CHECK();
  const int chunks = int(gpu100::grid_for(p.rows, kDwChunkRows));
  const dim3 g1(gpu100::grid_for(p.cols, kBlock), std::min(chunks, kMaxGridY));
  rmsnorm_dw_partial<T><<<g1, kBlock, 0, s>>>(x, rstd, dy, partial, p.rows, p.cols, chunks);
  LAUNCH_CHECK();
  rmsnorm_dw_sum<<<gpu100::grid_for(p.cols, kBlock), kBlock, 0, s>>>(partial, dw, chunks, p.cols);
  LAUNCH_CHECK();
}

// ---- analysis -----------------------------------------------------------------------------------
// The CPU backward against central differences of the CPU forward: x (one zero row) and w are
// probed together, so both dx and dw are checked. eps is large here because at a zero row the
// forward's third derivative grows like eps^-3/2, and with it the difference quotient's error.
gpu100::CheckResult finite_difference_check() {
  const Problem p{3, 4, 0.25};
  const std::vector<double> x0 = {0.7, -1.3, 0.2, 2.1, 0, 0, 0, 0, -0.4, 0.9, 1.6, -0.8};
  const std::vector<double> w0 = {1.2, -0.6, 0.9, 0.3};
  const std::vector<double> dy = {0.5, -1.1, 0.8, 0.3, -0.7, 0.6, 1.4, -0.2, 0.9, 0.1, -0.5, 1.3};
  const size_t nx = x0.size();
  auto forward = [&](const std::vector<double>& z) {
    std::vector<double> x(z.begin(), z.begin() + nx), w(z.begin() + nx, z.end()), y, r;
    rmsnorm_forward_cpu(p, x, w, y, r);
    return y;
  };
  std::vector<double> y, rstd, dx, dw;
  rmsnorm_forward_cpu(p, x0, w0, y, rstd);
  rmsnorm_backward_cpu(p, x0, w0, rstd, dy, dx, dw);
  std::vector<double> z = x0, grad = dx;
  z.insert(z.end(), w0.begin(), w0.end());
  grad.insert(grad.end(), dw.begin(), dw.end());
  return gpu100::check_gradient(forward, z, dy, grad);
}

// Compares the zero rows and the other rows apart: their outputs differ in scale by up to
// 1/sqrt(eps), and one norm over both would hide the other rows' errors. (dx and dw, which
// have per-element bounds, are compared element by element instead.)
template <class G>
gpu100::CheckResult compare_rows(const std::vector<G>& got, const std::vector<double>& ref,
                                 int cols, gpu100::Tolerance tol) {
  std::vector<G> got_part[2];
  std::vector<double> ref_part[2];
  for (size_t i = 0; i < ref.size(); ++i) {
    const int zero = (i / size_t(cols)) % 5 == 2;
    got_part[zero].push_back(got[i]);
    ref_part[zero].push_back(ref[i]);
  }
  gpu100::CheckResult r;
  for (int k = 0; k < 2; ++k)
    if (!ref_part[k].empty())
      r = gpu100::combine(r, gpu100::compare(got_part[k], ref_part[k], tol));
  return r;
}

// ---- the versions: inputs, references, and each version's run and check -----------------------
// x (every fifth row zero: compare_rows knows them), w around 1 with both signs, dy; in fp32, or
// the same values rounded to bf16.
template <class T>
struct Inputs {
  std::vector<T> x, w, dy;
};

Inputs<float> make_inputs(const Problem& p, uint64_t seed) {
  const size_t n = size_t(p.rows) * size_t(p.cols);
  auto x = gpu100::random_floats(n, seed, -2.0f, 2.0f);
  for (int i = 2; i < p.rows; i += 5) std::fill_n(x.begin() + size_t(i) * p.cols, p.cols, 0.0f);
  return {std::move(x), gpu100::random_floats(size_t(p.cols), seed + 1, -1.5f, 1.5f),
          gpu100::random_floats(n, seed + 2)};
}

Inputs<bf16> to_bf16(const Inputs<float>& in) {
  auto rounded = [](const std::vector<float>& v) {
    std::vector<bf16> b(v.size());
    for (size_t i = 0; i < v.size(); ++i) b[i] = __float2bfloat16_rn(v[i]);
    return b;
  };
  return {rounded(in.x), rounded(in.w), rounded(in.dy)};
}

std::vector<double> to_double(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}
std::vector<double> to_double(const std::vector<bf16>& v) {
  std::vector<double> d(v.size());
  for (size_t i = 0; i < v.size(); ++i) d[i] = double(__bfloat162float(v[i]));
  return d;
}

// The reference in double from the inputs the kernels see, and the bounds of dx and dw.
struct Reference {
  std::vector<double> y, rstd, dx, dw, dx_bound, dw_bound;
  std::vector<float> rstd32;  // what the backward is handed
};

template <class T>
Reference reference(const Problem& p, const Inputs<T>& in) {
  const std::vector<double> x = to_double(in.x), w = to_double(in.w), dy = to_double(in.dy);
  Reference r;
  rmsnorm_forward_cpu(p, x, w, r.y, r.rstd);
  rmsnorm_backward_cpu(p, x, w, r.rstd, dy, r.dx, r.dw);
  r.rstd32.assign(r.rstd.begin(), r.rstd.end());
  r.dx_bound = dx_bound(p, x, w, r.rstd, dy);
  // bf16 dx: the same fp32 computation, then one rounding to bf16: half an ulp, which is 2^-8
  // of the value at the bottom of a binade (8 significant bits: u = 2^-8).
  if constexpr (std::is_same_v<T, bf16>)
    for (size_t i = 0; i < r.dx.size(); ++i)
      r.dx_bound[i] += 0x1p-8 * (std::fabs(r.dx[i]) + r.dx_bound[i]);
  r.dw_bound = dw_bound(p, x, r.rstd, dy);
  return r;
}

// The fp32 forward's tolerance (see the bounds above), never below common/'s fp32 defaults.
gpu100::Tolerance forward_tolerance(int cols, bool per_thread) {
  const double b = forward_bound(cols, per_thread);
  gpu100::Tolerance t = gpu100::Tolerance::Custom(std::max(1e-5, b), std::max(1e-4, b));
  t.name = "fp32 error bound";
  return t;
}

// Every buffer of every version: fp32 and bf16 inputs and outputs, the rstd each backward is
// handed, and the dw partials.
struct Buffers {
  gpu100::DeviceBuffer<float> x, w, dy, y, dx, rstd, rstd_in32, rstd_in16;
  gpu100::DeviceBuffer<bf16> xb, wb, dyb, yb, dxb;
  gpu100::DeviceBuffer<float> partial, dw;
};

Buffers make_buffers(const Problem& p, const Inputs<float>& in, const Inputs<bf16>& in16,
                     const Reference& ref32, const Reference& ref16) {
  const size_t n = size_t(p.rows) * size_t(p.cols);
  const size_t chunks = gpu100::grid_for(p.rows, kDwChunkRows);
  return {gpu100::DeviceBuffer<float>(in.x),
          gpu100::DeviceBuffer<float>(in.w),
          gpu100::DeviceBuffer<float>(in.dy),
          gpu100::DeviceBuffer<float>(n),
          gpu100::DeviceBuffer<float>(n),
          gpu100::DeviceBuffer<float>(size_t(p.rows)),
          gpu100::DeviceBuffer<float>(ref32.rstd32),
          gpu100::DeviceBuffer<float>(ref16.rstd32),
          gpu100::DeviceBuffer<bf16>(in16.x),
          gpu100::DeviceBuffer<bf16>(in16.w),
          gpu100::DeviceBuffer<bf16>(in16.dy),
          gpu100::DeviceBuffer<bf16>(n),
          gpu100::DeviceBuffer<bf16>(n),
          gpu100::DeviceBuffer<float>(chunks * size_t(p.cols)),
          gpu100::DeviceBuffer<float>(size_t(p.cols))};
}

gpu100::Measure measure_forward(const Version& v, const Problem& p, Buffers& b,
                                const Reference& r) {
  const bool is16 = v.type == Type::bf16;
  const double elem = is16 ? 2.0 : 4.0, n = double(p.rows) * double(p.cols);
  return {.name = v.name,
          .launch =
              [&v, &p, &b, is16, grid = grid_of(v, p.rows)](cudaStream_t s) {
                if (is16)
                  launch_forward<bf16>(v, grid, b.xb.data(), b.wb.data(), b.yb.data(),
                                       b.rstd.data(), p, s);
                else
                  launch_forward<float>(v, grid, b.x.data(), b.w.data(), b.y.data(), b.rstd.data(),
                                        p, s);
              },
          .reset =
              [&b] {
                b.y.poison();
                b.yb.poison();
                b.rstd.poison();
              },
          .check =
              [&v, &p, &b, &r, is16] {
                const auto rs =
                    gpu100::compare(b.rstd.download(), r.rstd, forward_tolerance(p.cols, false));
                const auto ys =
                    is16 ? compare_rows(b.yb.download(), r.y, p.cols, gpu100::Tolerance::BF16())
                         : compare_rows(b.y.download(), r.y, p.cols,
                                        forward_tolerance(p.cols, v.lanes == 1));
                return gpu100::combine(ys, rs);
              },
          // x read, y written, w and rstd.
          .work = 2.0 * elem * n + elem * double(p.cols) + 4.0 * double(p.rows)};
}

gpu100::Measure measure_backward(const Version& v, const Problem& p, Buffers& b,
                                 const Reference& r) {
  const bool is16 = v.type == Type::bf16;
  const double elem = is16 ? 2.0 : 4.0, n = double(p.rows) * double(p.cols);
  return {.name = v.name,
          .launch =
              [&v, &p, &b, is16, grid = grid_of(v, p.rows)](cudaStream_t s) {
                if (is16)
                  launch_backward<bf16>(v, grid, b.xb.data(), b.wb.data(), b.rstd_in16.data(),
                                        b.dyb.data(), b.dxb.data(), b.partial.data(), b.dw.data(),
                                        p, s);
                else
                  launch_backward<float>(v, grid, b.x.data(), b.w.data(), b.rstd_in32.data(),
                                         b.dy.data(), b.dx.data(), b.partial.data(), b.dw.data(), p,
                                         s);
              },
          .reset =
              [&b] {
                b.dx.poison();
                b.dxb.poison();
                b.dw.poison();
              },
          .check =
              [&b, &r, is16] {
                const auto dxs = is16 ? gpu100::compare_within(b.dxb.download(), r.dx, r.dx_bound,
                                                               "bf16 rounding + fp32 error bound")
                                      : gpu100::compare_within(b.dx.download(), r.dx, r.dx_bound,
                                                               "fp32 error bound");
                const auto dws =
                    gpu100::compare_within(b.dw.download(), r.dw, r.dw_bound, "fp32 error bound");
                return gpu100::combine(dxs, dws);
              },
          // The least any backward moves: x and dy read, dx written, dw.
          .work = 3.0 * elem * n + (elem + 4.0) * double(p.cols)};
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "RMSNorm forward and backward, fp32 and bf16: thread, warp and 16-byte vector "
      "kernels vs cudaMemcpy");
  int64_t rows = 4096, cols = 4096;
  double eps = 1e-6;
  cli.size("rows", rows, 37, "rows (tokens)", int64_t(1) << 30);
  cli.size("cols", cols, 1031, "elements per row (channels)", int64_t(1) << 30);
  cli.option("eps", eps, "added to mean(x^2) before the square root", 1e-12, 1.0);
  cli.kernels_of(kVersions);
  cli.validate([&] {
    return rows * cols >= (int64_t(1) << 31) ? std::string("--rows * --cols must be below 2^31")
                                             : std::string();
  });
  // fp32 x, y, dy, dx and a dw partial row per chunk; the bf16 copies are half of that again.
  cli.device_bytes([&] { return 6.0 * double(rows) * double(cols) * sizeof(float); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    report.baseline_as_percent();
    const Problem p{int(rows), int(cols), eps};

    // References in double: from the fp32 inputs, and from the same inputs rounded to bf16.
    const Inputs<float> in = make_inputs(p, ctx.seed());
    const Inputs<bf16> in16 = to_bf16(in);
    const Reference ref32 = reference(p, in), ref16 = reference(p, in16);
    Buffers buffers = make_buffers(p, in, in16, ref32, ref16);

    // The copy moves as many bytes as the fp32 forward: x read, y written.
    ctx.copy_baseline(size_t(rows) * size_t(cols) * sizeof(float));

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      const Reference& r = v.type == Type::bf16 ? ref16 : ref32;
      runs.push_back(v.pass == Pass::forward ? measure_forward(v, p, buffers, r)
                                             : measure_backward(v, p, buffers, r));
    }
    ctx.measure_all(runs);

    report.add_check("reference gradient (finite differences)", finite_difference_check());
    report.note(
        fmt::format("every fifth row of x is zero (rstd = 1/sqrt(eps)); dw sums {} rows "
                    "per chunk, then {} chunks in order",
                    kDwChunkRows, gpu100::grid_for(rows, kDwChunkRows)));
  });
}
