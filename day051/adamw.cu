// Day 051 - AdamW over many tensors: one kernel per op, one per tensor, one launch for them all
//
// An optimizer step touches every parameter of a model, held in hundreds of tensors of very
// different sizes (a bias of 1024, an embedding of 50 million). AdamW per element, with the bias
// corrections folded into two scalars as PyTorch does:
//   p *= 1 - lr wd;  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g g
//   p -= (lr / (1 - b1^t)) m / (sqrt(v) / sqrt(1 - b2^t) + eps)
// Written as tensor ops it is five kernels per tensor, the last reading a temporary the fourth
// wrote: 56 bytes per element and 5 launches per tensor. Fused it is 28 bytes (p, g, m, v in;
// p, m, v out), and the launches are what remains: a model of many small tensors is dominated by
// launch overhead, so the fused kernel takes a list of tensors and covers them all in one launch
// (the "multi-tensor apply" of apex and PyTorch's foreach/fused optimizers).
//
// Versions
//   per_op             five element-wise kernels per tensor, as unfused tensor ops.
//   per_tensor         one fused kernel per tensor.
//   multi_tensor       one launch: block b takes chunk b of a host-built table of (tensor, start)
//                      chunks of 4096 elements, each chunk in one tensor, so blocks of one launch
//                      work on tensors of any size.
//   multi_tensor_vec4  the same with float4 loads and stores (chunk starts are multiples of 4 and
//                      every tensor is its own aligned allocation), the tensor's last n % 4 scalar.
//
// Check: bit for bit against a CPU AdamW doing the same fp32 operations in the same order. Every
// device operation is an explicit round-to-nearest intrinsic (__fmul_rn, __fadd_rn, __fdiv_rn,
// __fsqrt_rn), which nvcc never contracts into an FMA, and the host side is compiled with
// -ffp-contract=off (CMakeLists.txt); the step's scalars are computed once, on the host, for both.
// The fp32 model itself is checked against AdamW in double, each p within the bound of its fp32
// roundings, so bit-exact means accurate too.
//
// Run:  build/bin/day051 [--n 33554467] [--tensors 97] [--step 10] [--kernel multi_tensor]
#include <fmt/core.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

// One step's scalars, computed once on the host and handed to the CPU model and every kernel.
struct Step {
  float b1, one_minus_b1, b2, one_minus_b2, eps;
  float decay;      // 1 - lr wd
  float step_size;  // lr / (1 - b1^t)
  float bc2_sqrt;   // sqrt(1 - b2^t)
};

// The run's hyperparameters and step t, as given (doubles; the kernels get a Step).
struct Hyperparameters {
  double lr, b1, b2, eps, wd;
  int t;
};

Step make_step(const Hyperparameters& h) {
  return {float(h.b1),
          float(1.0 - h.b1),
          float(h.b2),
          float(1.0 - h.b2),
          float(h.eps),
          float(1.0 - h.lr * h.wd),
          float(h.lr / (1.0 - std::pow(h.b1, h.t))),
          float(std::sqrt(1.0 - std::pow(h.b2, h.t)))};
}

// ---- CPU reference ------------------------------------------------------------------------------
// The fused update in fp32, one correctly rounded operation per line, in the kernels' order.
// (-ffp-contract=off keeps the host compiler from fusing a multiply and an add into an FMA.)
void adamw_cpu(float& p, float g, float& m, float& v, const Step& s) {
  const float m1 = s.b1 * m;
  const float m2 = s.one_minus_b1 * g;
  m = m1 + m2;
  const float v1 = s.b2 * v;
  const float gg = s.one_minus_b2 * g;
  const float v2 = gg * g;
  v = v1 + v2;
  const float root = std::sqrt(v);
  const float denom = root / s.bc2_sqrt + s.eps;
  const float ratio = m / denom;
  const float delta = s.step_size * ratio;
  const float decayed = p * s.decay;
  p = decayed - delta;
}

// The same update in double from the same starting values, with the exact bias corrections.
double adamw_double(double p, double g, double m, double v, const Hyperparameters& h) {
  const auto [lr, b1, b2, eps, wd, t] = h;
  m = b1 * m + (1 - b1) * g;
  v = b2 * v + (1 - b2) * g * g;
  const double mhat = m / (1 - std::pow(b1, t)), vhat = v / (1 - std::pow(b2, t));
  return p * (1 - lr * wd) - lr * mhat / (std::sqrt(vhat) + eps);
}

// The fp32 model's worst-case error against adamw_double, to first order in u = 2^-24, counting
// each rounding of adamw_cpu and of the Step constants: m carries 3u of |b1 m| + |(1 - b1) g|
// (each product's constant and result, the sum); v, a sum of non-negative terms, 4u of itself,
// so denom carries 6u (half of v's through the root, the root, bc2_sqrt and the division, eps and
// the addition); the ratio adds 1u, delta 2u (step_size, the product); p * decay carries 2u and
// the subtraction 1u of the result. The factor 1.01 covers the higher-order terms.
double adamw_bound(double p, double g, double m, double v, const Hyperparameters& h) {
  const auto [lr, b1, b2, eps, wd, t] = h;
  constexpr double u = 0x1p-24;
  const double m_new = b1 * m + (1 - b1) * g, v_new = b2 * v + (1 - b2) * g * g;
  const double step_size = lr / (1 - std::pow(b1, t));
  const double denom = std::sqrt(v_new / (1 - std::pow(b2, t))) + eps;
  const double delta = step_size * m_new / denom, decayed = p * (1 - lr * wd);
  const double m_err = 3 * u * (std::fabs(b1 * m) + std::fabs((1 - b1) * g));
  return 1.01 * (step_size * m_err / denom + 9 * u * std::fabs(delta) +
                 2 * u * std::fabs(decayed) + u * std::fabs(decayed - delta));
}

// ---- kernels ------------------------------------------------------------------------------------
__device__ __forceinline__ void adamw_element(float& p, float g, float& m, float& v,
                                              const Step& s) {
  m = __fadd_rn(__fmul_rn(s.b1, m), __fmul_rn(s.one_minus_b1, g));
  v = __fadd_rn(__fmul_rn(s.b2, v), __fmul_rn(__fmul_rn(s.one_minus_b2, g), g));
  const float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(v), s.bc2_sqrt), s.eps);
  p = __fsub_rn(__fmul_rn(p, s.decay), __fmul_rn(s.step_size, __fdiv_rn(m, denom)));
}

// per_op: the five tensor ops, each its own kernel, the same roundings as adamw_element.
__global__ void op_decay(float* __restrict__ p, int64_t n, float decay) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] = __fmul_rn(p[i], decay);
}
__global__ void op_lerp(float* __restrict__ m, const float* __restrict__ g, int64_t n, float b,
                        float one_minus_b) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) m[i] = __fadd_rn(__fmul_rn(b, m[i]), __fmul_rn(one_minus_b, g[i]));
}
__global__ void op_lerp_square(float* __restrict__ v, const float* __restrict__ g, int64_t n,
                               float b, float one_minus_b) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) v[i] = __fadd_rn(__fmul_rn(b, v[i]), __fmul_rn(__fmul_rn(one_minus_b, g[i]), g[i]));
}
__global__ void op_denom(const float* __restrict__ v, float* __restrict__ d, int64_t n,
                         float bc2_sqrt, float eps) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) d[i] = __fadd_rn(__fdiv_rn(__fsqrt_rn(v[i]), bc2_sqrt), eps);
}
__global__ void op_addcdiv(float* __restrict__ p, const float* __restrict__ m,
                           const float* __restrict__ d, int64_t n, float step_size) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] = __fsub_rn(p[i], __fmul_rn(step_size, __fdiv_rn(m[i], d[i])));
}

__global__ void adamw_tensor(float* __restrict__ p, const float* __restrict__ g,
                             float* __restrict__ m, float* __restrict__ v, int64_t n, Step s) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    float pi = p[i], mi = m[i], vi = v[i];
    adamw_element(pi, g[i], mi, vi, s);
    p[i] = pi;
    m[i] = mi;
    v[i] = vi;
  }
}

struct TensorRef {
  float *p, *g, *m, *v;
  int64_t n;
};
struct Chunk {
  int32_t tensor;
  int64_t start;
};
constexpr int64_t kChunk = 4096;  // a multiple of 4, so every chunk start is float4-aligned

template <bool Vec4>
__global__ void adamw_multi_tensor(const TensorRef* __restrict__ tensors,
                                   const Chunk* __restrict__ chunks, Step s) {
  const Chunk c = chunks[blockIdx.x];
  const TensorRef t = tensors[c.tensor];
  const int64_t end = min(c.start + kChunk, t.n);
  if constexpr (!Vec4) {
    for (int64_t i = c.start + threadIdx.x; i < end; i += blockDim.x) {
      float pi = t.p[i], mi = t.m[i], vi = t.v[i];
      adamw_element(pi, t.g[i], mi, vi, s);
      t.p[i] = pi;
      t.m[i] = mi;
      t.v[i] = vi;
    }
  } else {
    const int64_t end4 = c.start + (end - c.start) / 4 * 4;
    for (int64_t i = c.start + 4 * threadIdx.x; i < end4; i += 4 * blockDim.x) {
      float4 p4 = *reinterpret_cast<const float4*>(t.p + i);
      float4 m4 = *reinterpret_cast<const float4*>(t.m + i);
      float4 v4 = *reinterpret_cast<const float4*>(t.v + i);
      const float4 g4 = *reinterpret_cast<const float4*>(t.g + i);
      adamw_element(p4.x, g4.x, m4.x, v4.x, s);
      adamw_element(p4.y, g4.y, m4.y, v4.y, s);
      adamw_element(p4.z, g4.z, m4.z, v4.z, s);
      adamw_element(p4.w, g4.w, m4.w, v4.w, s);
      *reinterpret_cast<float4*>(t.p + i) = p4;
      *reinterpret_cast<float4*>(t.m + i) = m4;
      *reinterpret_cast<float4*>(t.v + i) = v4;
    }
    for (int64_t i = end4 + threadIdx.x; i < end; i += blockDim.x) {  // the tensor's last n % 4
      float pi = t.p[i], mi = t.m[i], vi = t.v[i];
      adamw_element(pi, t.g[i], mi, vi, s);
      t.p[i] = pi;
      t.m[i] = mi;
      t.v[i] = vi;
    }
  }
}

// ---- launchers ----------------------------------------------------------------------------------
constexpr int kBlock = 256;

// The optimizer state on the device: one allocation per tensor (as a model's parameters are),
// the scratch the per-op version needs, and the multi-tensor tables.
struct State {
  std::vector<gpu100::DeviceBuffer<float>> p, g, m, v, scratch;
  std::vector<TensorRef> refs;
  gpu100::DeviceBuffer<TensorRef> d_refs;
  gpu100::DeviceBuffer<Chunk> d_chunks;
  unsigned chunks = 0;
};

enum class Kind { per_op, per_tensor, multi_tensor, multi_tensor_vec4 };
struct Version {
  const char* name;
  Kind kind;
  double bytes_per_element;
};
const Version kVersions[] = {
    {"per_op", Kind::per_op, 8 + 12 + 12 + 8 + 16},
    {"per_tensor", Kind::per_tensor, 28},
    {"multi_tensor", Kind::multi_tensor, 28},
    {"multi_tensor_vec4", Kind::multi_tensor_vec4, 28},
};

void launch(const Version& v, State& st, const Step& s, cudaStream_t stream) {
  switch (v.kind) {
    case Kind::per_op:
      for (size_t k = 0; k < st.refs.size(); ++k) {
        const TensorRef& t = st.refs[k];
        const unsigned grid = gpu100::grid_for(t.n, kBlock);
        float* d = st.scratch[k].data();
        op_decay<<<grid, kBlock, 0, stream>>>(t.p, t.n, s.decay);
        op_lerp<<<grid, kBlock, 0, stream>>>(t.m, t.g, t.n, s.b1, s.one_minus_b1);
        op_lerp_square<<<grid, kBlock, 0, stream>>>(t.v, t.g, t.n, s.b2, s.one_minus_b2);
        op_denom<<<grid, kBlock, 0, stream>>>(t.v, d, t.n, s.bc2_sqrt, s.eps);
        op_addcdiv<<<grid, kBlock, 0, stream>>>(t.p, t.m, d, t.n, s.step_size);
        LAUNCH_CHECK();
      }
      break;
    case Kind::per_tensor:
      for (const TensorRef& t : st.refs) {
        adamw_tensor<<<gpu100::grid_for(t.n, kBlock), kBlock, 0, stream>>>(t.p, t.g, t.m, t.v, t.n,
                                                                           s);
        LAUNCH_CHECK();
      }
      break;
    case Kind::multi_tensor:
      adamw_multi_tensor<false>
          <<<st.chunks, kBlock, 0, stream>>>(st.d_refs.data(), st.d_chunks.data(), s);
      break;
    case Kind::multi_tensor_vec4:
      adamw_multi_tensor<true>
          <<<st.chunks, kBlock, 0, stream>>>(st.d_refs.data(), st.d_chunks.data(), s);
      break;
  }
  LAUNCH_CHECK();
}

// ---- analysis -----------------------------------------------------------------------------------
// Tensor sizes: a 1, a 3 and a 4097 first (the edges of the vector and chunk loops), then sizes
// spread from the seed so that they total about n, as a model's mix of biases and matrices.
std::vector<int64_t> tensor_sizes(int64_t n, int tensors, uint64_t seed) {
  std::vector<int64_t> sizes;
  for (int64_t s : {int64_t(1), int64_t(3), int64_t(4097)})
    if (int(sizes.size()) < tensors) sizes.push_back(s);
  const int rest = tensors - int(sizes.size());
  if (rest > 0) {
    const int64_t avg = std::max<int64_t>(1, n / rest);
    const auto r = gpu100::random_ints(size_t(rest), seed, 1,
                                       int32_t(std::min<int64_t>(2 * avg - 1, INT32_MAX)));
    for (int32_t x : r) sizes.push_back(x);
  }
  return sizes;
}

std::vector<Chunk> chunk_table(const std::vector<int64_t>& sizes) {
  std::vector<Chunk> chunks;
  for (size_t k = 0; k < sizes.size(); ++k)
    for (int64_t start = 0; start < sizes[k]; start += kChunk)
      chunks.push_back({int32_t(k), start});
  return chunks;
}

// The tensors' starting values on the host and their values after one step of the CPU model.
struct HostTensors {
  std::vector<std::vector<float>> p0, g, m0, v0;  // before the step
  std::vector<std::vector<float>> p, m, v;        // after it
};

HostTensors host_tensors(const std::vector<int64_t>& sizes, uint64_t seed, const Step& s) {
  HostTensors h;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const size_t sz = size_t(sizes[k]);
    const uint64_t tensor_seed = seed + 4 * k;
    h.p0.push_back(gpu100::random_floats(sz, tensor_seed));
    h.g.push_back(gpu100::random_floats(sz, tensor_seed + 1, -0.1f, 0.1f));
    h.m0.push_back(gpu100::random_floats(sz, tensor_seed + 2, -0.01f, 0.01f));
    h.v0.push_back(gpu100::random_floats(sz, tensor_seed + 3, 0.0f, 1e-4f));
    h.p.push_back(h.p0.back());
    h.m.push_back(h.m0.back());
    h.v.push_back(h.v0.back());
    for (size_t i = 0; i < sz; ++i)
      adamw_cpu(h.p.back()[i], h.g.back()[i], h.m.back()[i], h.v.back()[i], s);
  }
  return h;
}

// The fp32 algorithm against AdamW in double, each p within its rounding bound (the kernels equal
// the fp32 model bit for bit, so this is their accuracy too).
gpu100::CheckResult check_fp32_model(const HostTensors& h, const Hyperparameters& hyper) {
  std::vector<float> model;
  std::vector<double> exact, bound;
  for (size_t k = 0; k < h.p.size(); ++k) {
    model.insert(model.end(), h.p[k].begin(), h.p[k].end());
    for (size_t i = 0; i < h.p[k].size(); ++i) {
      exact.push_back(adamw_double(h.p0[k][i], h.g[k][i], h.m0[k][i], h.v0[k][i], hyper));
      bound.push_back(adamw_bound(h.p0[k][i], h.g[k][i], h.m0[k][i], h.v0[k][i], hyper));
    }
  }
  return gpu100::compare_within(model, exact, bound, "fp32 rounding bound");
}

// The starting values on the device, one allocation per tensor, and the multi-tensor tables.
void upload_state(State& st, const HostTensors& h, const std::vector<int64_t>& sizes) {
  for (size_t k = 0; k < h.p0.size(); ++k) {
    st.p.emplace_back(h.p0[k]);
    st.g.emplace_back(h.g[k]);
    st.m.emplace_back(h.m0[k]);
    st.v.emplace_back(h.v0[k]);
    st.scratch.emplace_back(h.p0[k].size());
    st.refs.push_back({st.p[k].data(), st.g[k].data(), st.m[k].data(), st.v[k].data(), sizes[k]});
  }
  const auto chunks = chunk_table(sizes);
  st.d_refs = gpu100::DeviceBuffer<TensorRef>(st.refs);
  st.d_chunks = gpu100::DeviceBuffer<Chunk>(chunks);
  st.chunks = unsigned(chunks.size());
}

// Before each checked run: the starting values again, the per-op scratch poisoned.
void reset_state(State& st, const HostTensors& h) {
  for (size_t k = 0; k < h.p0.size(); ++k) {
    st.p[k].upload(h.p0[k]);
    st.m[k].upload(h.m0[k]);
    st.v[k].upload(h.v0[k]);
    st.scratch[k].poison();
  }
}

// p, m and v of every tensor, each bit for bit against the CPU model's.
gpu100::CheckResult check_state(const State& st, const HostTensors& h) {
  std::vector<float> got_p, got_m, got_v, want_p, want_m, want_v;
  for (size_t k = 0; k < h.p.size(); ++k) {
    for (auto [dst, src] : {std::pair{&got_p, &st.p[k]}, {&got_m, &st.m[k]}, {&got_v, &st.v[k]}}) {
      const auto d = src->download();
      dst->insert(dst->end(), d.begin(), d.end());
    }
    want_p.insert(want_p.end(), h.p[k].begin(), h.p[k].end());
    want_m.insert(want_m.end(), h.m[k].begin(), h.m[k].end());
    want_v.insert(want_v.end(), h.v[k].begin(), h.v[k].end());
  }
  auto c =
      gpu100::combine(gpu100::compare_exact(got_p, want_p), gpu100::compare_exact(got_m, want_m));
  return gpu100::combine(c, gpu100::compare_exact(got_v, want_v));
}

gpu100::Measure measure_version(const Version& v, State& st, const HostTensors& h, const Step& s,
                                int64_t total) {
  return {.name = v.name,
          .launch = [&v, &st, s](cudaStream_t stream) { launch(v, st, s, stream); },
          .reset = [&st, &h] { reset_state(st, h); },
          .check = [&st, &h] { return check_state(st, h); },
          .work = v.bytes_per_element * double(total)};
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "AdamW over a list of tensors: per-op kernels, per-tensor fused, one multi-tensor launch");
  int64_t n = (int64_t(1) << 25) + 35;
  int tensors = 97, step = 10;
  double lr = 1e-3, wd = 0.01;
  cli.size("n", n, 20'011, "total parameters, about (spread over the tensors)");
  cli.option("tensors", tensors, "number of tensors", 1, 100000);
  cli.option("step", step, "the step t of the bias corrections", 1, 1000000);
  cli.option("lr", lr, "learning rate", 0.0, 1.0);
  cli.option("wd", wd, "weight decay", 0.0, 1.0);
  cli.kernels_of(kVersions);
  cli.device_bytes([&] { return 5.0 * 4 * double(n + 2 * 4097 + tensors); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    const Hyperparameters hyper{.lr = lr, .b1 = 0.9, .b2 = 0.999, .eps = 1e-8, .wd = wd, .t = step};
    const Step s = make_step(hyper);

    const auto sizes = tensor_sizes(n, tensors, ctx.seed() + 99);
    int64_t total = 0;
    for (int64_t x : sizes) total += x;
    report.problem("elements", double(total));

    const HostTensors host = host_tensors(sizes, ctx.seed(), s);
    report.add_check("fp32 AdamW model: p vs AdamW in double", check_fp32_model(host, hyper));

    State st;
    upload_state(st, host, sizes);
    // 28 bytes per element read + written, as the fused kernels
    ctx.copy_baseline(size_t(total) * 14);

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) runs.push_back(measure_version(v, st, host, s, total));
    ctx.measure_all(runs);
    report.note(
        fmt::format("{} tensors, {} elements, {} chunks of up to {} for the multi-tensor launch; "
                    "launches per step: per_op {}, per_tensor {}, multi_tensor 1",
                    sizes.size(), total, st.chunks, kChunk, 5 * sizes.size(), sizes.size()));
  });
}
