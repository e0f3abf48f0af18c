// Day 048 - cross-entropy over a vocabulary: loss and gradient of every row in one kernel
//
// A language model's last step turns a row of V logits x into a loss against the target t:
// loss = logsumexp(x) - x[t], and its gradient dx_i = dy * (softmax(x)_i - [i == t]). Everything
// hinges on logsumexp: exp(x) overflows fp32 past x = 88, so it is computed as
// m + log(sum exp(x_i - m)) with m = max x. Rows whose target is ignore_index (padding) have no
// loss and a zero gradient. The gradient needs only lse of its row, so one kernel reads the row
// for lse and once more to write dx: a fused forward and backward, memory-bound like softmax.
//
// Versions (each writes loss[row] and dx[row, :])
//   naive         one thread per row, three sweeps (max, sum of exp, output). Neighbouring lanes
//                 read addresses V floats apart: one sector per lane per request.
//   block_online  a block per row; each thread keeps an online (max, sum) pair over its strided
//                 elements, rescaling the sum when the max grows, so the row is read once for
//                 lse; the pairs are merged with warp shuffles and one shared slot per warp.
//   block_float4  the same with 16-byte loads and stores over the aligned middle of the row (a
//                 quarter of the requests); scalar code takes the 0-3 floats before the first
//                 16-byte boundary of the row and after the last.
//
// Check: CPU reference in double. Each loss and each gradient element must lie within a bound
// derived from the fp32 operations on its path (rounding of x - m, expf's 2 ulp, the additions
// and rescalings of the sum, logf, the final subtraction), computed per row from the data; rows
// of ignore_index must be exactly 0. Inputs include rows of large logits (|x| ~ 3e4: without the
// max-subtraction exp overflows), rows of all-equal logits and ignored rows. The CPU backward is
// itself checked against central finite differences of the CPU forward on a tiny case.
//
// Run:  build/bin/day048 [--rows 8191 --vocab 32003] [--kernel block_float4]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kIgnoreIndex = -100;
constexpr int kRowBlock = 256;    // threads of a block-per-row kernel
constexpr int kNaiveBlock = 128;  // threads (rows) of a naive block
constexpr double kU = 0x1p-24;    // fp32 unit roundoff

// ---- inputs -------------------------------------------------------------------------------------
// Row kinds by row index: ignored, large positive logits, large negative logits, all equal, plain.
enum class RowKind { plain, ignored, large_pos, large_neg, equal };
RowKind kind_of(int64_t r) {
  switch (r % 8) {
    case 3:
      return RowKind::ignored;
    case 1:
      return RowKind::large_pos;
    case 5:
      return RowKind::large_neg;
    case 6:
      return RowKind::equal;
    default:
      return RowKind::plain;
  }
}

struct Problem {
  int64_t rows, vocab;
  std::vector<float> x;    // rows x vocab logits
  std::vector<int32_t> t;  // target per row, or kIgnoreIndex
  std::vector<float> dy;   // upstream gradient of each row's loss
};

Problem make_problem(int64_t rows, int64_t vocab, uint64_t seed) {
  Problem p{rows, vocab, gpu100::random_floats(size_t(rows * vocab), seed, -4.0f, 4.0f), {}, {}};
  const auto targets = gpu100::random_ints(size_t(rows), seed + 1, 0, int32_t(vocab - 1));
  p.dy = gpu100::random_floats(size_t(rows), seed + 2, 0.5f, 2.0f);
  p.t.assign(targets.begin(), targets.end());
  for (int64_t r = 0; r < rows; ++r) {
    float* row = p.x.data() + r * vocab;
    switch (kind_of(r)) {
      case RowKind::ignored:
        p.t[size_t(r)] = kIgnoreIndex;
        break;
      case RowKind::large_pos:
        for (int64_t i = 0; i < vocab; ++i) row[i] += 30000.0f;
        break;
      case RowKind::large_neg:
        for (int64_t i = 0; i < vocab; ++i) row[i] -= 30000.0f;
        break;
      case RowKind::equal:
        std::fill(row, row + vocab, 1.5f);
        break;
      case RowKind::plain:
        break;
    }
  }
  return p;
}

// ---- CPU reference ------------------------------------------------------------------------------
double lse_cpu(const double* x, int64_t v) {
  double m = -INFINITY, s = 0;
  for (int64_t i = 0; i < v; ++i) m = std::max(m, x[i]);
  for (int64_t i = 0; i < v; ++i) s += std::exp(x[i] - m);
  return m + std::log(s);
}

// Forward and backward of one row in double.
void row_cpu(const double* x, int64_t v, int32_t t, double dy, double* loss, double* dx) {
  if (t == kIgnoreIndex) {
    *loss = 0;
    if (dx) std::fill(dx, dx + v, 0.0);
    return;
  }
  const double lse = lse_cpu(x, v);
  *loss = lse - x[t];
  if (dx)
    for (int64_t i = 0; i < v; ++i) dx[i] = dy * (std::exp(x[i] - lse) - (i == t ? 1.0 : 0.0));
}

// The reference of the checked rows (all of them up to kFullCheck elements, else a sample), with
// what the error bounds need: per row the first-order error of lse apart from the summation
// (which depends on the version), per element dy * p_i and the rest of its bound.
constexpr int64_t kFullCheck = int64_t(1) << 24;

struct Reference {
  std::vector<int64_t> rows;                   // the checked rows
  std::vector<double> loss, loss_base, dy;     // per checked row (dy: 0 where ignored)
  std::vector<double> dx, dx_base, dx_weight;  // per element of the checked rows
};

std::vector<int64_t> checked_rows(int64_t rows, int64_t v) {
  std::vector<int64_t> out;
  const int64_t stride = rows * v <= kFullCheck ? 1 : std::max<int64_t>(1, rows / 256);
  for (int64_t r = 0; r < rows; ++r)
    if (r < 64 || r % stride == 0 || r == rows - 1) out.push_back(r);
  return out;
}

Reference reference(const Problem& p) {
  const int64_t v = p.vocab;
  Reference ref;
  ref.rows = checked_rows(p.rows, v);
  const size_t n = ref.rows.size();
  ref.loss.resize(n);
  ref.loss_base.resize(n);
  ref.dy.resize(n);
  ref.dx.resize(n * size_t(v));
  ref.dx_base.resize(n * size_t(v));
  ref.dx_weight.resize(n * size_t(v));
  std::vector<double> xd(static_cast<size_t>(v));
  for (size_t k = 0; k < n; ++k) {
    const int64_t r = ref.rows[k];
    const float* x = p.x.data() + r * v;
    for (int64_t i = 0; i < v; ++i) xd[size_t(i)] = x[i];
    const int32_t t = p.t[size_t(r)];
    double* dx = ref.dx.data() + k * size_t(v);
    row_cpu(xd.data(), v, t, p.dy[size_t(r)], &ref.loss[k], dx);
    if (t == kIgnoreIndex) continue;  // bounds stay 0: ignored rows must be exactly 0
    // First-order error of the fp32 path (see the opening comment): D = max |x_i - m| bounds
    // the rounding of every argument of expf, 4 for expf's 2 ulps (an ulp is up to 2u of the
    // value); logf and the two additions round once each. The summation's own share is added
    // per version in `check_version`.
    const double m = *std::max_element(xd.begin(), xd.end());
    const double lse = lse_cpu(xd.data(), v);
    double d = 0;
    for (double xi : xd) d = std::max(d, m - xi);
    const double e_lse = (4.0 + d) * kU + kU * (std::fabs(lse - m) + std::fabs(lse));
    ref.loss_base[k] = e_lse + kU * (std::fabs(ref.loss[k]) + std::fabs(xd[size_t(t)]));
    const double dy = std::fabs(double(p.dy[size_t(r)]));
    ref.dy[k] = dy;
    for (int64_t i = 0; i < v; ++i) {
      const double pdy = dy * std::exp(xd[size_t(i)] - lse);
      ref.dx_weight[k * size_t(v) + size_t(i)] = pdy;
      ref.dx_base[k * size_t(v) + size_t(i)] =
          pdy * (e_lse + kU * (std::fabs(xd[size_t(i)] - lse) + 4.0)) + 2.0 * kU * std::fabs(dx[i]);
    }
  }
  return ref;
}

// The checked rows of a version's outputs against the reference. `steps`: the elements one thread
// pushes into its running sum, plus the merge levels after it; each step rescales, exponentiates
// and adds (a few roundings), so the sum's relative error is at most about 4 steps u. Bounds are
// twice the first-order terms, room for the higher-order ones.
gpu100::CheckResult check_version(const Reference& ref, const std::vector<float>& loss,
                                  const std::vector<float>& dx, int64_t v, double steps) {
  const double e_sum = (4.0 * steps + 4.0) * kU;
  std::vector<double> got_loss, got_dx, loss_bound, dx_bound;
  for (size_t k = 0; k < ref.rows.size(); ++k) {
    const int64_t r = ref.rows[k];
    got_loss.push_back(loss[size_t(r)]);
    loss_bound.push_back(ref.loss_base[k] > 0 ? 2.0 * (ref.loss_base[k] + e_sum) : 0.0);
    for (int64_t i = 0; i < v; ++i) {
      const size_t j = k * size_t(v) + size_t(i);
      got_dx.push_back(dx[size_t(r * v + i)]);
      // + dy 2^-126: a probability that underflows to a denormal or to 0
      dx_bound.push_back(2.0 * (ref.dx_base[j] + ref.dx_weight[j] * e_sum) + ref.dy[k] * 0x1p-126);
    }
  }
  return gpu100::combine(
      gpu100::compare_within(got_loss, ref.loss, loss_bound, "per-element fp32 error bound"),
      gpu100::compare_within(got_dx, ref.dx, dx_bound, "per-element fp32 error bound"));
}

// ---- device: online logsumexp pairs
// -------------------------------------------------------------- (m, s) stands for s * exp(m): the
// running max and the sum of exp(x - m). An empty pair is
// (-inf, 0); merging with it must not compute exp(-inf - -inf) = NaN.
struct MaxSum {
  float m, s;
};

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
  if (a.m == -INFINITY) return b;
  if (b.m == -INFINITY) return a;
  const float m = fmaxf(a.m, b.m);
  return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}

__device__ __forceinline__ MaxSum push(MaxSum a, float x) {
  if (x <= a.m) return {a.m, a.s + expf(x - a.m)};
  return {x, a.s * expf(a.m - x) + 1.0f};  // a new max: rescale what was summed so far
}

// The pair of the whole block in every thread. Every thread of the block must call it.
template <int BLOCK>
__device__ MaxSum block_merge(MaxSum v) {
  constexpr int kWarps = BLOCK / 32;
  __shared__ MaxSum warp_pairs[kWarps];
  __shared__ MaxSum total;
#pragma unroll
  for (int k = 16; k > 0; k >>= 1)
    v = merge(v, {__shfl_xor_sync(0xffffffffu, v.m, k), __shfl_xor_sync(0xffffffffu, v.s, k)});
  const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
  if (lane == 0) warp_pairs[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kWarps ? warp_pairs[lane] : MaxSum{-INFINITY, 0.0f};
#pragma unroll
    for (int k = 16; k > 0; k >>= 1)
      v = merge(v, {__shfl_xor_sync(0xffffffffu, v.m, k), __shfl_xor_sync(0xffffffffu, v.s, k)});
    if (lane == 0) total = v;
  }
  __syncthreads();
  return total;
}

// ---- kernels ------------------------------------------------------------------------------------
// The gradient of one element, given lse of its row.
__device__ __forceinline__ float grad(float x, float lse, bool is_target, float dy) {
  const float p = expf(x - lse);
  return dy * (is_target ? p - 1.0f : p);
}

__global__ void ce_naive(const float* __restrict__ x, const int32_t* __restrict__ t,
                         const float* __restrict__ dy, float* __restrict__ loss,
                         float* __restrict__ dx, int64_t rows, int64_t v) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* xr = x + r * v;
  float* dxr = dx + r * v;
  const int32_t target = t[r];
  if (target == kIgnoreIndex) {
    loss[r] = 0.0f;
    for (int64_t i = 0; i < v; ++i) dxr[i] = 0.0f;
    return;
  }
  float m = -INFINITY;
  for (int64_t i = 0; i < v; ++i) m = fmaxf(m, xr[i]);
  float s = 0.0f;
  for (int64_t i = 0; i < v; ++i) s += expf(xr[i] - m);
  const float lse = m + logf(s);
  loss[r] = lse - xr[target];
  const float g = dy[r];
  for (int64_t i = 0; i < v; ++i) dxr[i] = grad(xr[i], lse, i == target, g);
}

// Applies f(i, x) to the elements i of a row that this thread owns, scalar or vectorized. The
// vectorized walk: the floats before the row's first 16-byte boundary (head), float4 in the
// middle, the rest (tail), so any row length and any row start works.
template <bool VEC4>
struct RowWalk {
  int64_t head, n4;  // VEC4: scalar head floats, then n4 float4
  __device__ RowWalk(const float* row, int64_t v) {
    if constexpr (VEC4) {
      const int64_t mis = int64_t((16u - (reinterpret_cast<uintptr_t>(row) & 15u)) & 15u) / 4;
      head = mis < v ? mis : v;
      n4 = (v - head) / 4;
    } else {
      head = v;
      n4 = 0;
    }
  }
};

template <int BLOCK, bool VEC4>
__global__ void __launch_bounds__(BLOCK)
    ce_block(const float* __restrict__ x, const int32_t* __restrict__ t,
             const float* __restrict__ dy, float* __restrict__ loss, float* __restrict__ dx,
             int64_t rows, int64_t v) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {  // block-uniform loop
    const float* xr = x + r * v;
    float* dxr = dx + r * v;
    const int32_t target = t[r];
    const RowWalk<VEC4> w(xr, v);
    const float4* x4 = reinterpret_cast<const float4*>(xr + w.head);
    float4* dx4 = reinterpret_cast<float4*>(dxr + w.head);  // same alignment: see the launcher
    const int64_t tail = w.head + 4 * w.n4;
    if (target == kIgnoreIndex) {
      if (threadIdx.x == 0) loss[r] = 0.0f;
      for (int64_t i = threadIdx.x; i < w.head; i += BLOCK) dxr[i] = 0.0f;
      for (int64_t i = threadIdx.x; i < w.n4; i += BLOCK) dx4[i] = make_float4(0, 0, 0, 0);
      for (int64_t i = tail + threadIdx.x; i < v; i += BLOCK) dxr[i] = 0.0f;
      continue;
    }
    MaxSum p{-INFINITY, 0.0f};
    for (int64_t i = threadIdx.x; i < w.head; i += BLOCK) p = push(p, xr[i]);
    for (int64_t i = threadIdx.x; i < w.n4; i += BLOCK) {
      const float4 q = x4[i];
      p = push(push(push(push(p, q.x), q.y), q.z), q.w);
    }
    for (int64_t i = tail + threadIdx.x; i < v; i += BLOCK) p = push(p, xr[i]);
    p = block_merge<BLOCK>(p);
    const float lse = p.m + logf(p.s);
    if (threadIdx.x == 0) loss[r] = lse - xr[target];
    const float g = dy[r];
    for (int64_t i = threadIdx.x; i < w.head; i += BLOCK) dxr[i] = grad(xr[i], lse, i == target, g);
    for (int64_t i = threadIdx.x; i < w.n4; i += BLOCK) {
      const float4 q = x4[i];
      const int64_t j = w.head + 4 * i;
      dx4[i] = make_float4(grad(q.x, lse, j == target, g), grad(q.y, lse, j + 1 == target, g),
                           grad(q.z, lse, j + 2 == target, g), grad(q.w, lse, j + 3 == target, g));
    }
    for (int64_t i = tail + threadIdx.x; i < v; i += BLOCK)
      dxr[i] = grad(xr[i], lse, i == target, g);
    // The next row's block_merge reuses the shared slots: every thread has read `total` above.
  }
}

// ---- launchers ----------------------------------------------------------------------------------
struct Args {
  const float* x;
  const int32_t* t;
  const float* dy;
  float* loss;
  float* dx;
  int64_t rows, v;
};

enum class Kind { naive, block, float4 };
struct Version {
  const char* name;
  Kind kind;
};
const Version kVersions[] = {
    {"naive", Kind::naive},
    {"block_online", Kind::block},
    {"block_float4", Kind::float4},
};

unsigned grid_of(const Version& v, int64_t rows) {
  if (v.kind == Kind::naive) return unsigned(gpu100::ceil_div<int64_t>(rows, kNaiveBlock));
  const int64_t resident = v.kind == Kind::block
                               ? gpu100::resident_grid(ce_block<kRowBlock, false>, kRowBlock)
                               : gpu100::resident_grid(ce_block<kRowBlock, true>, kRowBlock);
  return unsigned(std::min(rows, resident));
}

void launch(const Version& v, unsigned grid, const Args& a, cudaStream_t s) {
  switch (v.kind) {
    case Kind::naive:
      ce_naive<<<grid, kNaiveBlock, 0, s>>>(a.x, a.t, a.dy, a.loss, a.dx, a.rows, a.v);
      break;
    case Kind::block:
      ce_block<kRowBlock, false>
          <<<grid, kRowBlock, 0, s>>>(a.x, a.t, a.dy, a.loss, a.dx, a.rows, a.v);
      break;
    case Kind::float4:
      // x and dx rows start at the same offset from bases that are both 16-byte aligned, so
      // the head computed from x is the head of dx too.
      if (!gpu100::is_aligned(a.x, 16) || !gpu100::is_aligned(a.dx, 16))
        throw std::runtime_error("block_float4: x and dx must be 16-byte aligned");
      ce_block<kRowBlock, true>
          <<<grid, kRowBlock, 0, s>>>(a.x, a.t, a.dy, a.loss, a.dx, a.rows, a.v);
      break;
  }
  LAUNCH_CHECK();
}

// ---- analysis -----------------------------------------------------------------------------------
// Sequential steps of one element on its way into its row's sum: a whole row in one thread for
// naive; a strided share, then 5 shuffle and 3 shared levels of merges, for a block (float4 pushes
// 4 per load, and the head/tail up to 6 more).
double sum_steps(const Version& v, int64_t vocab) {
  if (v.kind == Kind::naive) return double(vocab);
  return double(gpu100::ceil_div<int64_t>(vocab, kRowBlock)) + 6.0 + 8.0;
}

// The CPU backward against central differences of the CPU forward: 3 rows of 5 logits (one row
// ignored), loss of each row as the outputs.
gpu100::CheckResult gradient_check() {
  constexpr int64_t kRows = 3, kV = 5;
  const std::vector<int32_t> t = {2, kIgnoreIndex, 4};
  const auto xf = gpu100::random_floats(size_t(kRows * kV), 7, -2.0f, 2.0f);
  const auto dyf = gpu100::random_floats(size_t(kRows), 8, 0.5f, 2.0f);
  const std::vector<double> x(xf.begin(), xf.end()), dy(dyf.begin(), dyf.end());
  auto forward = [&](const std::vector<double>& in) {
    std::vector<double> out(kRows);
    for (int64_t r = 0; r < kRows; ++r)
      row_cpu(in.data() + r * kV, kV, t[size_t(r)], 1.0, &out[size_t(r)], nullptr);
    return out;
  };
  std::vector<double> dx(x.size()), loss(kRows);
  for (int64_t r = 0; r < kRows; ++r)
    row_cpu(x.data() + r * kV, kV, t[size_t(r)], dy[size_t(r)], &loss[size_t(r)],
            dx.data() + r * kV);
  return gpu100::check_gradient(forward, x, dy, dx);
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("cross-entropy loss and gradient per row: naive, block online, float4");
  int64_t rows = 8191, vocab = 32003;
  cli.size("rows", rows, 37, "rows (tokens)");
  cli.size("vocab", vocab, 1031, "logits per row", int64_t(1) << 30);
  cli.kernels_of(kVersions);
  cli.device_bytes([&] { return 8.0 * double(rows) * double(vocab) + 12.0 * double(rows); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");

    report.add_check("reference gradient (finite differences)", gradient_check());

    const Problem p = make_problem(rows, vocab, ctx.seed());
    const Reference ref = reference(p);
    if (ref.rows.size() < size_t(rows))
      report.note(fmt::format("checked: {} of the {} rows (the first 64, then a stride sample)",
                              ref.rows.size(), rows));
    gpu100::DeviceBuffer<float> d_x(p.x), d_dy(p.dy), d_loss{size_t(rows)},
        d_dx{size_t(rows * vocab)};
    gpu100::DeviceBuffer<int32_t> d_t(p.t);
    const Args args{d_x.data(), d_t.data(), d_dy.data(), d_loss.data(), d_dx.data(), rows, vocab};
    // Minimum traffic: read the logits once, write the gradient once (as a copy of the logits).
    ctx.copy_baseline(size_t(rows * vocab) * sizeof(float));

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      runs.push_back(
          {.name = v.name,
           .launch = [&, grid = grid_of(v, rows)](cudaStream_t s) { launch(v, grid, args, s); },
           .reset =
               [&] {
                 d_loss.poison();
                 d_dx.poison();
               },
           .check =
               [&] {
                 return check_version(ref, d_loss.download(), d_dx.download(), vocab,
                                      sum_steps(v, vocab));
               },
           .work = 8.0 * double(rows) * double(vocab) + 12.0 * double(rows)});
    }
    ctx.measure_all(runs);
    report.note(fmt::format(
        "rows: every 8th from row 3 ignored (ignore_index {}), from row 1 logits + 3e4, from row 5 "
        "logits - 3e4, from row 6 all equal; each version reads a row twice (lse, then dx)",
        kIgnoreIndex));
  });
}
