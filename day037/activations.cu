// Day 037 - activation functions: GELU (erf and tanh forms), SiLU, sigmoid, tanh and GeGLU,
// forward and backward, in fp32 and in half2
//
// An activation reads each element once, does a few dozen flops on it and writes it back: it is
// bound by memory, so its speed is GB/s against a device-to-device copy measured in the same run,
// and the way to make it faster is to move fewer bytes. Storing activations in fp16 halves the
// traffic; loading them two at a time as half2 (one 32-bit word per thread) keeps the requests
// as wide as the fp32 ones. The arithmetic stays in fp32 where it loses precision in half
// (erf, tanh, exp and the cancellation in 1 + t near t = -1); half2 arithmetic is used where it
// is exact or nearly so: the backward of sigmoid and tanh from their saved output y,
// y (1 - y) = fma(-y, y, y) and 1 - y^2 = fma(-y, y, 1) with one rounding (fma.rn.f16x2). A
// multiply then a subtract would round y^2 first, and near y = 1 the cancellation in 1 - y^2
// turns that half-ulp of y^2 into many ulps of the result.
//
// Versions (each op in each precision and direction is one version, <op>_<fwd|bwd>_<fp32|half2>)
//   gelu_erf   0.5 x (1 + erf(x / sqrt 2)), the exact GELU; backward from x.
//   gelu_tanh  0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the tanh approximation (GPT-2);
//              backward from x.
//   silu       x sigmoid(x); backward from x: s (1 + x (1 - s)).
//   sigmoid    1 / (1 + e^-x); backward from the saved output: y (1 - y).
//   tanh       backward from the saved output: 1 - y^2.
//   geglu      gelu_erf(a) * b for a gate a and a value b of the same shape (two tensors);
//              backward gives da = dy b gelu'(a) and db = dy gelu(a).
//   fp32: one element per thread per step of a grid-stride loop. half2: two elements per step,
//   one 32-bit load per operand, and a scalar tail for an odd n.
//
// Check: a CPU reference in double on the values the inputs hold (fp32, or the halves), rounded
// once to the output's format, against common/'s fp32 and fp16 tolerances (the fp32 math adds a
// few ulps, the half2 products one more rounding). The CPU backward of every op is itself checked
// against central finite differences of the CPU forward on a few elements. The inputs span [-6, 6]
// plus +-30 and 0: the saturated tails, where e^-x overflows to infinity and 1 / (1 + inf) must
// still give 0.
//
// Run:  build/bin/day037 [--n 16777217] [--kernel gelu_tanh_fwd_half2,silu_bwd_fp32]
#include <cuda_fp16.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kBlock = 256;
constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kInvSqrt2 = 0.7071067811865476;
constexpr double kInvSqrt2Pi = 0.3989422804014327;  // 1 / sqrt(2 pi)
constexpr double kGeluCubic = 0.044715;

// ---- CPU reference (double) ---------------------------------------------------------------------
enum class Op { gelu_erf, gelu_tanh, silu, sigmoid, tanh, geglu };

double sigmoid_d(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
double gelu_erf_d(double x) {
  return 0.5 * x * (1.0 + std::erf(x * kInvSqrt2));
}
double gelu_erf_grad_d(double x) {
  return 0.5 * (1.0 + std::erf(x * kInvSqrt2)) + x * kInvSqrt2Pi * std::exp(-0.5 * x * x);
}

double forward_d(Op op, double x) {
  switch (op) {
    case Op::gelu_erf:
      return gelu_erf_d(x);
    case Op::gelu_tanh:
      return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + kGeluCubic * x * x * x)));
    case Op::silu:
      return x * sigmoid_d(x);
    case Op::sigmoid:
      return sigmoid_d(x);
    case Op::tanh:
      return std::tanh(x);
    case Op::geglu:
      break;
  }
  return 0;
}

// Sigmoid and tanh differentiate from their output y (what a framework saves); the others from x.
bool grad_from_output(Op op) {
  return op == Op::sigmoid || op == Op::tanh;
}

// d forward / dx, given x, or y = forward(x) for the ops that differentiate from their output.
double grad_d(Op op, double v) {
  switch (op) {
    case Op::gelu_erf:
      return gelu_erf_grad_d(v);
    case Op::gelu_tanh: {
      const double t = std::tanh(kSqrt2OverPi * (v + kGeluCubic * v * v * v));
      return 0.5 * (1.0 + t) +
             0.5 * v * (1.0 - t * t) * kSqrt2OverPi * (1.0 + 3.0 * kGeluCubic * v * v);
    }
    case Op::silu: {
      const double s = sigmoid_d(v);
      return s * (1.0 + v * (1.0 - s));
    }
    case Op::sigmoid:
      return v * (1.0 - v);
    case Op::tanh:
      return 1.0 - v * v;
    case Op::geglu:
      break;
  }
  return 0;
}

// The CPU backward of a unary op as check_gradient sees it: dx from x (through y where the op
// differentiates from its output), so the formulas above are checked in the form the kernels use.
std::vector<double> backward_d(Op op, const std::vector<double>& x, const std::vector<double>& dy) {
  std::vector<double> dx(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    dx[i] = dy[i] * grad_d(op, grad_from_output(op) ? forward_d(op, x[i]) : x[i]);
  return dx;
}

// GeGLU over the concatenation [a; b] of two n-element tensors; the backward returns [da; db].
std::vector<double> geglu_forward_d(const std::vector<double>& ab) {
  const size_t n = ab.size() / 2;
  std::vector<double> y(n);
  for (size_t i = 0; i < n; ++i) y[i] = gelu_erf_d(ab[i]) * ab[n + i];
  return y;
}
std::vector<double> geglu_backward_d(const std::vector<double>& ab, const std::vector<double>& dy) {
  const size_t n = ab.size() / 2;
  std::vector<double> d(2 * n);
  for (size_t i = 0; i < n; ++i) {
    d[i] = dy[i] * ab[n + i] * gelu_erf_grad_d(ab[i]);
    d[n + i] = dy[i] * gelu_erf_d(ab[i]);
  }
  return d;
}

// ---- device math (fp32) -------------------------------------------------------------------------
// Accurate library functions (expf, erff, tanhf), not the __expf intrinsics: their error would
// be visible at fp32 tolerance and the kernels are bound by memory, not by these instructions.
__device__ __forceinline__ float sigmoid_f(float x) {
  return 1.0f / (1.0f + expf(-x));
}
__device__ __forceinline__ float gelu_erf_f(float x) {
  return 0.5f * x * (1.0f + erff(x * float(kInvSqrt2)));
}
__device__ __forceinline__ float gelu_erf_grad_f(float x) {
  return 0.5f * (1.0f + erff(x * float(kInvSqrt2))) + x * float(kInvSqrt2Pi) * expf(-0.5f * x * x);
}

template <Op OP>
__device__ __forceinline__ float forward_f(float x) {
  if constexpr (OP == Op::gelu_erf) return gelu_erf_f(x);
  if constexpr (OP == Op::gelu_tanh) {
    const float t = tanhf(float(kSqrt2OverPi) * (x + float(kGeluCubic) * x * x * x));
    return 0.5f * x * (1.0f + t);
  }
  if constexpr (OP == Op::silu) return x * sigmoid_f(x);
  if constexpr (OP == Op::sigmoid) return sigmoid_f(x);
  if constexpr (OP == Op::tanh) return tanhf(x);
  return 0.0f;
}

template <Op OP>
__device__ __forceinline__ float grad_f(float v) {  // v = x, or y for sigmoid and tanh
  if constexpr (OP == Op::gelu_erf) return gelu_erf_grad_f(v);
  if constexpr (OP == Op::gelu_tanh) {
    const float t = tanhf(float(kSqrt2OverPi) * (v + float(kGeluCubic) * v * v * v));
    return 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * float(kSqrt2OverPi) *
                                   (1.0f + 3.0f * float(kGeluCubic) * v * v);
  }
  if constexpr (OP == Op::silu) {
    const float s = sigmoid_f(v);
    return s * (1.0f + v * (1.0f - s));
  }
  if constexpr (OP == Op::sigmoid) return fmaf(-v, v, v);
  if constexpr (OP == Op::tanh) return fmaf(-v, v, 1.0f);
  return 0.0f;
}

// ---- kernels: fp32 ------------------------------------------------------------------------------
template <Op OP>
__global__ void forward_fp32(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = forward_f<OP>(x[i]);
}

// v is x, or the saved output y for sigmoid and tanh.
template <Op OP>
__global__ void backward_fp32(const float* __restrict__ v, const float* __restrict__ dy,
                              float* __restrict__ dx, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dx[i] = dy[i] * grad_f<OP>(v[i]);
}

__global__ void geglu_forward_fp32(const float* __restrict__ a, const float* __restrict__ b,
                                   float* __restrict__ y, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = gelu_erf_f(a[i]) * b[i];
}

__global__ void geglu_backward_fp32(const float* __restrict__ a, const float* __restrict__ b,
                                    const float* __restrict__ dy, float* __restrict__ da,
                                    float* __restrict__ db, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float g = dy[i];
    da[i] = g * b[i] * gelu_erf_grad_f(a[i]);
    db[i] = g * gelu_erf_f(a[i]);
  }
}

// ---- kernels: half2 -----------------------------------------------------------------------------
// Pairs 0 .. n/2 - 1 as half2 (the buffers come from cudaMalloc: 4-byte aligned), then the odd
// last element, if any, by the thread that would have had pair n/2.
template <Op OP>
__device__ __forceinline__ __half2 forward_h2(__half2 x) {
  const float2 f = __half22float2(x);
  return __floats2half2_rn(forward_f<OP>(f.x), forward_f<OP>(f.y));
}

// Sigmoid and tanh from their output: half2 arithmetic, each fma rounded once. The others: fp32
// math, the product with dy rounded once to half.
template <Op OP>
__device__ __forceinline__ __half2 backward_h2(__half2 v, __half2 dy) {
  if constexpr (OP == Op::sigmoid) {
    return __hmul2(dy, __hfma2(__hneg2(v), v, v));
  } else if constexpr (OP == Op::tanh) {
    return __hmul2(dy, __hfma2(__hneg2(v), v, __float2half2_rn(1.0f)));
  } else {
    const float2 fv = __half22float2(v), fd = __half22float2(dy);
    return __floats2half2_rn(fd.x * grad_f<OP>(fv.x), fd.y * grad_f<OP>(fv.y));
  }
}

template <Op OP>
__global__ void forward_half2(const __half* __restrict__ x, __half* __restrict__ y, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t pairs = n / 2;
  const __half2* x2 = reinterpret_cast<const __half2*>(x);
  __half2* y2 = reinterpret_cast<__half2*>(y);
  for (int64_t i = tid; i < pairs; i += stride) y2[i] = forward_h2<OP>(x2[i]);
  if ((n & 1) && tid == pairs % stride)
    y[n - 1] = __float2half_rn(forward_f<OP>(__half2float(x[n - 1])));
}

template <Op OP>
__global__ void backward_half2(const __half* __restrict__ v, const __half* __restrict__ dy,
                               __half* __restrict__ dx, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t pairs = n / 2;
  const __half2* v2 = reinterpret_cast<const __half2*>(v);
  const __half2* dy2 = reinterpret_cast<const __half2*>(dy);
  __half2* dx2 = reinterpret_cast<__half2*>(dx);
  for (int64_t i = tid; i < pairs; i += stride) dx2[i] = backward_h2<OP>(v2[i], dy2[i]);
  if ((n & 1) && tid == pairs % stride) {
    // The same arithmetic as the pairs, on a pair whose upper half is a dummy.
    const __half2 r = backward_h2<OP>(__half2half2(v[n - 1]), __half2half2(dy[n - 1]));
    dx[n - 1] = __low2half(r);
  }
}

__global__ void geglu_forward_half2(const __half* __restrict__ a, const __half* __restrict__ b,
                                    __half* __restrict__ y, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t pairs = n / 2;
  const __half2* a2 = reinterpret_cast<const __half2*>(a);
  const __half2* b2 = reinterpret_cast<const __half2*>(b);
  __half2* y2 = reinterpret_cast<__half2*>(y);
  for (int64_t i = tid; i < pairs; i += stride) {
    const float2 fa = __half22float2(a2[i]), fb = __half22float2(b2[i]);
    y2[i] = __floats2half2_rn(gelu_erf_f(fa.x) * fb.x, gelu_erf_f(fa.y) * fb.y);
  }
  if ((n & 1) && tid == pairs % stride)
    y[n - 1] = __float2half_rn(gelu_erf_f(__half2float(a[n - 1])) * __half2float(b[n - 1]));
}

__global__ void geglu_backward_half2(const __half* __restrict__ a, const __half* __restrict__ b,
                                     const __half* __restrict__ dy, __half* __restrict__ da,
                                     __half* __restrict__ db, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t pairs = n / 2;
  const __half2* a2 = reinterpret_cast<const __half2*>(a);
  const __half2* b2 = reinterpret_cast<const __half2*>(b);
  const __half2* dy2 = reinterpret_cast<const __half2*>(dy);
  for (int64_t i = tid; i < pairs; i += stride) {
    const float2 fa = __half22float2(a2[i]), fb = __half22float2(b2[i]);
    const float2 g = __half22float2(dy2[i]);
    reinterpret_cast<__half2*>(da)[i] =
        __floats2half2_rn(g.x * fb.x * gelu_erf_grad_f(fa.x), g.y * fb.y * gelu_erf_grad_f(fa.y));
    reinterpret_cast<__half2*>(db)[i] =
        __floats2half2_rn(g.x * gelu_erf_f(fa.x), g.y * gelu_erf_f(fa.y));
  }
  if ((n & 1) && tid == pairs % stride) {
    const float fa = __half2float(a[n - 1]), fb = __half2float(b[n - 1]);
    const float g = __half2float(dy[n - 1]);
    da[n - 1] = __float2half_rn(g * fb * gelu_erf_grad_f(fa));
    db[n - 1] = __float2half_rn(g * gelu_erf_f(fa));
  }
}

// ---- launchers ----------------------------------------------------------------------------------
enum class Dir { fwd, bwd };
enum class Prec { fp32, half2 };

// Device inputs and outputs of both precisions; a version uses the ones of its own.
struct Buffers {
  gpu100::DeviceBuffer<float> x, y, dy, a, b, out, out2;
  gpu100::DeviceBuffer<__half> xh, yh, dyh, ah, bh, outh, out2h;
};

struct Version {
  const char* name;
  Op op;
  Dir dir;
  Prec prec;
};

constexpr Version kVersions[] = {
    {"gelu_erf_fwd_fp32", Op::gelu_erf, Dir::fwd, Prec::fp32},
    {"gelu_erf_fwd_half2", Op::gelu_erf, Dir::fwd, Prec::half2},
    {"gelu_erf_bwd_fp32", Op::gelu_erf, Dir::bwd, Prec::fp32},
    {"gelu_erf_bwd_half2", Op::gelu_erf, Dir::bwd, Prec::half2},
    {"gelu_tanh_fwd_fp32", Op::gelu_tanh, Dir::fwd, Prec::fp32},
    {"gelu_tanh_fwd_half2", Op::gelu_tanh, Dir::fwd, Prec::half2},
    {"gelu_tanh_bwd_fp32", Op::gelu_tanh, Dir::bwd, Prec::fp32},
    {"gelu_tanh_bwd_half2", Op::gelu_tanh, Dir::bwd, Prec::half2},
    {"silu_fwd_fp32", Op::silu, Dir::fwd, Prec::fp32},
    {"silu_fwd_half2", Op::silu, Dir::fwd, Prec::half2},
    {"silu_bwd_fp32", Op::silu, Dir::bwd, Prec::fp32},
    {"silu_bwd_half2", Op::silu, Dir::bwd, Prec::half2},
    {"sigmoid_fwd_fp32", Op::sigmoid, Dir::fwd, Prec::fp32},
    {"sigmoid_fwd_half2", Op::sigmoid, Dir::fwd, Prec::half2},
    {"sigmoid_bwd_fp32", Op::sigmoid, Dir::bwd, Prec::fp32},
    {"sigmoid_bwd_half2", Op::sigmoid, Dir::bwd, Prec::half2},
    {"tanh_fwd_fp32", Op::tanh, Dir::fwd, Prec::fp32},
    {"tanh_fwd_half2", Op::tanh, Dir::fwd, Prec::half2},
    {"tanh_bwd_fp32", Op::tanh, Dir::bwd, Prec::fp32},
    {"tanh_bwd_half2", Op::tanh, Dir::bwd, Prec::half2},
    {"geglu_fwd_fp32", Op::geglu, Dir::fwd, Prec::fp32},
    {"geglu_fwd_half2", Op::geglu, Dir::fwd, Prec::half2},
    {"geglu_bwd_fp32", Op::geglu, Dir::bwd, Prec::fp32},
    {"geglu_bwd_half2", Op::geglu, Dir::bwd, Prec::half2},
};

// Bytes one run moves: operands read plus results written, per element, times n.
double bytes_of(const Version& v, int64_t n) {
  const double elem = v.prec == Prec::fp32 ? 4.0 : 2.0;
  const double operands =
      v.op == Op::geglu ? (v.dir == Dir::fwd ? 3 : 5) : (v.dir == Dir::fwd ? 2 : 3);
  return operands * elem * double(n);
}

template <Op OP>
void launch_unary(const Version& v, unsigned grid, Buffers& d, int64_t n, cudaStream_t s) {
  // v is x, or the saved output y for the ops that differentiate from it.
  const bool from_y = OP == Op::sigmoid || OP == Op::tanh;
  if (v.prec == Prec::fp32) {
    if (v.dir == Dir::fwd)
      forward_fp32<OP><<<grid, kBlock, 0, s>>>(d.x.data(), d.out.data(), n);
    else
      backward_fp32<OP>
          <<<grid, kBlock, 0, s>>>(from_y ? d.y.data() : d.x.data(), d.dy.data(), d.out.data(), n);
  } else {
    if (v.dir == Dir::fwd)
      forward_half2<OP><<<grid, kBlock, 0, s>>>(d.xh.data(), d.outh.data(), n);
    else
      backward_half2<OP><<<grid, kBlock, 0, s>>>(from_y ? d.yh.data() : d.xh.data(), d.dyh.data(),
                                                 d.outh.data(), n);
  }
}

void launch(const Version& v, unsigned grid, Buffers& d, int64_t n, cudaStream_t s) {
  switch (v.op) {
    case Op::gelu_erf:
      launch_unary<Op::gelu_erf>(v, grid, d, n, s);
      break;
    case Op::gelu_tanh:
      launch_unary<Op::gelu_tanh>(v, grid, d, n, s);
      break;
    case Op::silu:
      launch_unary<Op::silu>(v, grid, d, n, s);
      break;
    case Op::sigmoid:
      launch_unary<Op::sigmoid>(v, grid, d, n, s);
      break;
    case Op::tanh:
      launch_unary<Op::tanh>(v, grid, d, n, s);
      break;
    case Op::geglu:
      if (v.prec == Prec::fp32) {
        if (v.dir == Dir::fwd)
          geglu_forward_fp32<<<grid, kBlock, 0, s>>>(d.a.data(), d.b.data(), d.out.data(), n);
        else
          geglu_backward_fp32<<<grid, kBlock, 0, s>>>(d.a.data(), d.b.data(), d.dy.data(),
                                                      d.out.data(), d.out2.data(), n);
      } else {
        if (v.dir == Dir::fwd)
          geglu_forward_half2<<<grid, kBlock, 0, s>>>(d.ah.data(), d.bh.data(), d.outh.data(), n);
        else
          geglu_backward_half2<<<grid, kBlock, 0, s>>>(d.ah.data(), d.bh.data(), d.dyh.data(),
                                                       d.outh.data(), d.out2h.data(), n);
      }
      break;
  }
  LAUNCH_CHECK();
}

// One thread per element (fp32) or per pair (half2), capped at a few waves of resident blocks:
// past that the grid-stride loop takes over.
unsigned grid_of(const Version& v, int64_t n) {
  const int64_t items = v.prec == Prec::fp32 ? n : n / 2 + 1;
  const int64_t cap = 32 * int64_t(gpu100::resident_grid(forward_fp32<Op::gelu_erf>, kBlock));
  return unsigned(std::min<int64_t>(gpu100::grid_for(items, kBlock), cap));
}

// ---- inputs and references ----------------------------------------------------------------------
// Uniform in [-6, 6], with the saturated tails and zero among the first elements.
std::vector<float> activation_inputs(int64_t n, uint64_t seed) {
  auto x = gpu100::random_floats(size_t(n), seed, -6.0f, 6.0f);
  const float edges[] = {-30.0f, 30.0f, 0.0f};
  for (size_t i = 0; i < std::size(edges) && i < x.size(); ++i) x[i] = edges[i];
  return x;
}

std::vector<__half> to_half(const std::vector<float>& x) {
  std::vector<__half> h(x.size());
  for (size_t i = 0; i < x.size(); ++i) h[i] = __float2half_rn(x[i]);
  return h;
}
template <class T>
std::vector<double> values(const std::vector<T>& x) {
  std::vector<double> d(x.size());
  for (size_t i = 0; i < x.size(); ++i) d[i] = gpu100::detail::to_double(x[i]);
  return d;
}

// Host-side data of one precision: inputs as that format holds them and, for sigmoid and tanh,
// y = forward(x) stored in it (the saved output their backward reads).
template <class T>
struct HostSet {
  std::vector<T> x, y, dy, a, b;
};

template <class T>
HostSet<T> make_set(const std::vector<float>& xf, const std::vector<float>& dyf,
                    const std::vector<float>& af, const std::vector<float>& bf, Op op,
                    T (*convert)(float)) {
  HostSet<T> h;
  for (float v : xf) h.x.push_back(convert(v));
  for (float v : dyf) h.dy.push_back(convert(v));
  for (float v : af) h.a.push_back(convert(v));
  for (float v : bf) h.b.push_back(convert(v));
  if (grad_from_output(op))
    for (const T& v : h.x)
      h.y.push_back(convert(float(forward_d(op, gpu100::detail::to_double(v)))));
  return h;
}

// The exact result rounded to the output's format: the best answer that format can hold (near
// x = -30 the outputs are far below half's smallest subnormal, and 0 is the right answer there).
template <class T>
std::vector<double> rounded(std::vector<double> r) {
  for (double& v : r) v = gpu100::detail::to_double(T(float(v)));
  return r;
}

// The reference outputs of one version, in double, from the inputs of its precision.
template <class T>
std::vector<std::vector<double>> reference(const Version& v, const HostSet<T>& h) {
  const auto x = values(h.x), y = values(h.y), dy = values(h.dy);
  const size_t n = x.size();
  if (v.op == Op::geglu) {
    std::vector<double> ab = values(h.a);
    const auto b = values(h.b);
    ab.insert(ab.end(), b.begin(), b.end());
    if (v.dir == Dir::fwd) return {rounded<T>(geglu_forward_d(ab))};
    const auto d = geglu_backward_d(ab, dy);
    return {rounded<T>(std::vector<double>(d.begin(), d.begin() + n)),
            rounded<T>(std::vector<double>(d.begin() + n, d.end()))};
  }
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = v.dir == Dir::fwd ? forward_d(v.op, x[i])
                               : dy[i] * grad_d(v.op, grad_from_output(v.op) ? y[i] : x[i]);
  return {rounded<T>(out)};
}

// ---- analysis -----------------------------------------------------------------------------------
const char* op_name(Op op) {
  switch (op) {
    case Op::gelu_erf:
      return "gelu_erf";
    case Op::gelu_tanh:
      return "gelu_tanh";
    case Op::silu:
      return "silu";
    case Op::sigmoid:
      return "sigmoid";
    case Op::tanh:
      return "tanh";
    case Op::geglu:
      return "geglu";
  }
  return "?";
}

// Each op's CPU backward against central differences of its CPU forward, on seven points away
// from zero and from the saturated tails (where both sides are ~0 and prove nothing).
void check_reference_gradients(gpu100::Report& report) {
  const std::vector<double> x = {-2.5, -1.3, -0.4, 0.3, 0.9, 1.7, 2.8};
  const std::vector<double> dy = {0.7, -1.1, 0.4, 1.3, -0.6, 0.9, -1.4};
  for (Op op : {Op::gelu_erf, Op::gelu_tanh, Op::silu, Op::sigmoid, Op::tanh}) {
    const auto fwd = [op](const std::vector<double>& v) {
      std::vector<double> y(v.size());
      for (size_t i = 0; i < v.size(); ++i) y[i] = forward_d(op, v[i]);
      return y;
    };
    report.add_check(fmt::format("reference gradient {} (finite differences)", op_name(op)),
                     gpu100::check_gradient(fwd, x, dy, backward_d(op, x, dy)));
  }
  std::vector<double> ab = x;
  ab.insert(ab.end(), {0.8, -1.5, 2.1, -0.3, 1.2, -2.2, 0.6});
  report.add_check("reference gradient geglu (finite differences)",
                   gpu100::check_gradient(geglu_forward_d, ab, dy, geglu_backward_d(ab, dy)));
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "GELU (erf, tanh), SiLU, sigmoid, tanh, GeGLU: forward and backward, fp32 and half2");
  int64_t n = (int64_t(1) << 24) + 1;
  cli.size("n", n, 100'003, "elements per tensor", int64_t(1) << 34);
  cli.kernels_of(kVersions);
  // Both precisions' inputs and outputs, and the copy baseline's two buffers.
  cli.device_bytes([&] { return (7 * 4.0 + 7 * 2.0 + 8.0) * double(n); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");

    const auto xf = activation_inputs(n, ctx.seed());
    const auto dyf = gpu100::random_floats(size_t(n), ctx.seed() + 1);
    const auto af = activation_inputs(n, ctx.seed() + 2);
    const auto bf = gpu100::random_floats(size_t(n), ctx.seed() + 3, -2.0f, 2.0f);

    check_reference_gradients(report);
    ctx.copy_baseline(size_t(n) * sizeof(float));  // reads and writes 8 n bytes, as a fp32 forward

    Buffers d;
    d.x = gpu100::DeviceBuffer<float>(xf);
    d.dy = gpu100::DeviceBuffer<float>(dyf);
    d.a = gpu100::DeviceBuffer<float>(af);
    d.b = gpu100::DeviceBuffer<float>(bf);
    d.y = gpu100::DeviceBuffer<float>(size_t(n));
    d.out = gpu100::DeviceBuffer<float>(size_t(n));
    d.out2 = gpu100::DeviceBuffer<float>(size_t(n));
    d.xh = gpu100::DeviceBuffer<__half>(to_half(xf));
    d.dyh = gpu100::DeviceBuffer<__half>(to_half(dyf));
    d.ah = gpu100::DeviceBuffer<__half>(to_half(af));
    d.bh = gpu100::DeviceBuffer<__half>(to_half(bf));
    d.yh = gpu100::DeviceBuffer<__half>(size_t(n));
    d.outh = gpu100::DeviceBuffer<__half>(size_t(n));
    d.out2h = gpu100::DeviceBuffer<__half>(size_t(n));

    // Per version: its saved output uploaded before its checked run, its references in double.
    struct Plan {
      HostSet<float> f;
      HostSet<__half> h;
      std::vector<std::vector<double>> ref;
    };
    std::vector<Plan> plans(std::size(kVersions));
    std::vector<gpu100::Measure> runs;
    for (size_t k = 0; k < std::size(kVersions); ++k) {
      const Version& v = kVersions[k];
      if (!ctx.want(v.name)) continue;
      Plan& p = plans[k];
      if (v.prec == Prec::fp32) {
        p.f = make_set<float>(xf, dyf, af, bf, v.op, [](float f) { return f; });
        p.ref = reference(v, p.f);
      } else {
        p.h = make_set<__half>(xf, dyf, af, bf, v.op, [](float f) { return __float2half_rn(f); });
        p.ref = reference(v, p.h);
      }
      const gpu100::Tolerance tol =
          v.prec == Prec::fp32 ? gpu100::Tolerance::FP32() : gpu100::Tolerance::FP16();
      runs.push_back(
          {.name = v.name,
           .launch = [&, grid = grid_of(v, n)](cudaStream_t s) { launch(v, grid, d, n, s); },
           .reset =
               [&] {
                 if (v.prec == Prec::fp32) {
                   if (!p.f.y.empty()) d.y.upload(p.f.y);
                   d.out.poison();
                   d.out2.poison();
                 } else {
                   if (!p.h.y.empty()) d.yh.upload(p.h.y);
                   d.outh.poison();
                   d.out2h.poison();
                 }
               },
           .check =
               [&, tol] {
                 const bool two = v.op == Op::geglu && v.dir == Dir::bwd;
                 if (v.prec == Prec::fp32) {
                   auto c = gpu100::compare(d.out.download(), p.ref[0], tol);
                   return two ? gpu100::combine(c,
                                                gpu100::compare(d.out2.download(), p.ref[1], tol))
                              : c;
                 }
                 auto c = gpu100::compare(d.outh.download(), p.ref[0], tol);
                 return two ? gpu100::combine(c, gpu100::compare(d.out2h.download(), p.ref[1], tol))
                            : c;
               },
           .work = bytes_of(v, n)});
    }
    ctx.measure_all(runs);
  });
}
