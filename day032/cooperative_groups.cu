// Day 032 - cooperative groups: tiled partitions and a grid-wide barrier in one kernel
//
// Cooperative groups name sets of threads and give each set its own collective operations. A
// tile, cg::tiled_partition<32>(block) or <16>, is a warp or half-warp as an object: cg::reduce(
// tile, v, cg::plus<float>()) sums over it with register shuffles. At the other end,
// cg::this_grid().sync() is a barrier for every thread of the grid, so a computation whose phases
// each need ALL of the previous phase's results can run in one kernel launch instead of one launch
// per phase. The barrier only works if every block of the grid is resident at once, so the kernel
// is launched with cudaLaunchCooperativeKernel, which refuses a grid larger than the occupancy
// calculator allows: the grid is persistent, each block looping over its share of the data.
//
// Two problems, each as a multi-launch version and a cooperative version with the same phase
// code, the same grid and the same arithmetic order (so only the barrier differs):
//   z-score   y = (x - mean) / sqrt(var + eps): sum x, sum (x - mean)^2, write y.
//   Jacobi    `steps` smoothing steps u'[i] = (u[i-1] + 2 u[i] + u[i+1]) / 4 on a 1D rod with fixed
//             end values: each step needs all of the previous step's neighbours.
//
// Versions
//   multi_launch         z-score as 3 kernels (tile-32 reductions); the launch boundary is the
//                        barrier.
//   cooperative          the same 3 phases in one cooperative kernel with 2 grid.sync().
//   cooperative_tile16   the same kernel reducing in tiles of 16 threads (a template parameter).
//   jacobi_multi_launch  one launch per Jacobi step.
//   jacobi_cooperative   all steps in one cooperative kernel, grid.sync() between steps.
// Sweeps: both z-score versions over n, both Jacobi versions over the rod length, microseconds
// per call / per step and the speedup of the cooperative kernel: the cost of a kernel boundary
// against the cost of a grid barrier.
//
// Check: z-score against a double CPU reference, with a tolerance from the fp32 rounding bound of
// the sums (zscore_tolerance); Jacobi bit-exact against the same float arithmetic on the CPU
// (the update is written with __fadd_rn/__fmul_rn, so no FMA contraction changes a bit).
//
// Run:  build/bin/day032 [--n 67108867] [--cells 1048583 --steps 100]
//                        [--kernel cooperative,jacobi_cooperative]
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpu100/gpu100.h"

namespace cg = cooperative_groups;

namespace {

constexpr int kBlock = 256;
constexpr float kEps = 1e-5f;
// Fixed values at both ends of the Jacobi rod (the inputs lie between them, so every value stays
// in [0.5, 2] and no subnormal can appear).
constexpr float kLeft = 1.0f, kRight = 2.0f;

// ---- CPU reference ------------------------------------------------------------------------------
struct ZscoreRef {
  std::vector<float> y;
  double mean = 0, rstd = 0, xmax = 0, ymax = 0, yrms = 0;
};

ZscoreRef zscore_reference(const std::vector<float>& x) {
  ZscoreRef r;
  const double n = double(x.size());
  double s = 0;
  for (float v : x) s += v;
  r.mean = s / n;
  double q = 0;
  for (float v : x) q += (v - r.mean) * (v - r.mean);
  r.rstd = 1.0 / std::sqrt(q / n + double(kEps));
  r.y.resize(x.size());
  double y2 = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double y = (x[i] - r.mean) * r.rstd;
    r.y[i] = float(y);
    r.xmax = std::max(r.xmax, std::fabs(double(x[i])));
    r.ymax = std::max(r.ymax, std::fabs(y));
    y2 += y * y;
  }
  r.yrms = std::sqrt(y2 / n);
  return r;
}

// Why this tolerance: the inputs are positive (uniform in [1, 3)), so the fp32 sum of x and the
// sum of squared deviations have relative error at most b = gamma_h (gpu100::summation_error_bound)
// where h counts the roundings one input meets: its thread's serial loop, two block trees, the
// serial loop over partials and a few for x - mean, the square and the division. Then mean and
// rstd are off by at most b relatively, and y = (x - mean) * rstd by
//   |dy| <= b * (|mean| * rstd + |y|) + 4u * (|x| * rstd + |y|),   u = 2^-24.
// The largest such |dy| bounds the max abs error; divided by rms(y) it bounds the relative L2.
gpu100::Tolerance zscore_tolerance(const ZscoreRef& r, int64_t n, unsigned grid) {
  const double u = std::ldexp(1.0, -24);
  const double levels = std::log2(double(kBlock));
  const double h = double(gpu100::ceil_div<int64_t>(n, int64_t(grid) * kBlock)) + 2 * levels +
                   double(gpu100::ceil_div<int64_t>(grid, kBlock)) + levels + 4;
  const double b = gpu100::summation_error_bound(h, n);
  const double dy = b * (std::fabs(r.mean) * r.rstd + r.ymax) + 4 * u * (r.xmax * r.rstd + r.ymax);
  gpu100::Tolerance t = gpu100::Tolerance::Custom(
      std::max(gpu100::Tolerance::FP32().rel_l2, r.yrms > 0 ? dy / r.yrms : dy),
      std::max(gpu100::Tolerance::FP32().max_abs_rel, r.ymax > 0 ? dy / r.ymax : 1.0));
  t.name = "fp32 z-score bound";
  return t;
}

// (l + 2c + r) / 4 with every rounding spelled out, so the CPU can reproduce it bit for bit: 2c
// and the final * 0.25 are exact (no subnormals here), the two additions round once each.
__host__ __device__ inline float jacobi_update(float l, float c, float r) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(__fadd_rn(__fadd_rn(l, __fmul_rn(2.0f, c)), r), 0.25f);
#else
  return ((l + 2.0f * c) + r) * 0.25f;
#endif
}

std::vector<float> jacobi_reference(std::vector<float> u, int steps) {
  std::vector<float> v(u.size());
  const size_t n = u.size();
  for (int s = 0; s < steps; ++s) {
    for (size_t i = 0; i < n; ++i)
      v[i] = jacobi_update(i > 0 ? u[i - 1] : kLeft, u[i], i + 1 < n ? u[i + 1] : kRight);
    std::swap(u, v);
  }
  return u;
}

// ---- kernels ------------------------------------------------------------------------------------
// Sum of v over the block, returned to every thread. Each tile reduces with cg::reduce (a shuffle
// tree of log2(Tile) steps), tile leaders park their sums in shared memory, and the first tile sums
// those. Every thread of the block must call it. `scratch` holds kBlock / Tile + 1 floats.
template <int Tile>
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  constexpr int kTiles = kBlock / Tile;
  static_assert(kTiles <= Tile, "the first tile must be able to hold one partial per tile");
  const cg::thread_block block = cg::this_thread_block();
  const auto tile = cg::tiled_partition<Tile>(block);
  v = cg::reduce(tile, v, cg::plus<float>());
  // No barrier is needed before this write: a previous call's readers of scratch[0..kTiles) were
  // all before that call's last barrier.
  if (tile.thread_rank() == 0) scratch[int(tile.meta_group_rank())] = v;
  block.sync();
  if (tile.meta_group_rank() == 0) {
    const int lane = int(tile.thread_rank());
    float w = lane < kTiles ? scratch[lane] : 0.0f;
    w = cg::reduce(tile, w, cg::plus<float>());
    if (tile.thread_rank() == 0) scratch[kTiles] = w;
  }
  block.sync();
  return scratch[kTiles];
}

// The partial arrays are written by other blocks earlier in the same cooperative kernel, so they
// must be read with ordinary coherent loads: never through a `const __restrict__` pointer, which
// would allow the non-coherent read-only path (ld.global.nc) and could return stale data.
template <int Tile>
__device__ __forceinline__ float grid_total(const float* partial, float* scratch) {
  float s = 0.0f;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += kBlock) s += partial[i];
  return block_sum<Tile>(s, scratch);
}

// The z-score phases (shared by both versions).
template <int Tile>
__device__ __forceinline__ void phase_sum(const float* __restrict__ x, int64_t n, float* partial,
                                          float* scratch) {
  const int64_t stride = int64_t(gridDim.x) * kBlock;
  float s = 0.0f;
  for (int64_t i = int64_t(blockIdx.x) * kBlock + threadIdx.x; i < n; i += stride) s += x[i];
  s = block_sum<Tile>(s, scratch);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

template <int Tile>
__device__ __forceinline__ void phase_sqdev(const float* __restrict__ x, int64_t n, float mean,
                                            float* partial, float* scratch) {
  const int64_t stride = int64_t(gridDim.x) * kBlock;
  float s = 0.0f;
  for (int64_t i = int64_t(blockIdx.x) * kBlock + threadIdx.x; i < n; i += stride) {
    const float d = x[i] - mean;
    s += d * d;
  }
  s = block_sum<Tile>(s, scratch);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

__device__ __forceinline__ void phase_normalize(const float* __restrict__ x, float* __restrict__ y,
                                                int64_t n, float mean, float rstd) {
  const int64_t stride = int64_t(gridDim.x) * kBlock;
  for (int64_t i = int64_t(blockIdx.x) * kBlock + threadIdx.x; i < n; i += stride)
    y[i] = (x[i] - mean) * rstd;
}

__device__ __forceinline__ float rstd_of(float var) {
  return 1.0f / sqrtf(var + kEps);
}

// multi_launch: one kernel per phase. Every block of kernels 2 and 3 recomputes the totals from the
// partials (a few KB from L2), in the same order, so all blocks agree on mean and rstd.
template <int Tile>
__global__ void __launch_bounds__(kBlock)
    zscore_sum_kernel(const float* __restrict__ x, int64_t n, float* partial_sum) {
  __shared__ float scratch[kBlock / Tile + 1];
  phase_sum<Tile>(x, n, partial_sum, scratch);
}

template <int Tile>
__global__ void __launch_bounds__(kBlock)
    zscore_sqdev_kernel(const float* __restrict__ x, int64_t n, float* partial_sum,
                        float* partial_sq) {
  __shared__ float scratch[kBlock / Tile + 1];
  const float mean = grid_total<Tile>(partial_sum, scratch) / float(n);
  phase_sqdev<Tile>(x, n, mean, partial_sq, scratch);
}

template <int Tile>
__global__ void __launch_bounds__(kBlock)
    zscore_normalize_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n,
                            float* partial_sum, float* partial_sq, float* stats) {
  __shared__ float scratch[kBlock / Tile + 1];
  const float mean = grid_total<Tile>(partial_sum, scratch) / float(n);
  const float rstd = rstd_of(grid_total<Tile>(partial_sq, scratch) / float(n));
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    stats[0] = mean;
    stats[1] = rstd;
  }
  phase_normalize(x, y, n, mean, rstd);
}

// cooperative: the same three phases, separated by grid barriers instead of kernel boundaries.
// Two partial arrays, because blocks still reading partial_sum for the mean must not see it
// overwritten by a faster block's sum of squares.
template <int Tile>
__global__ void __launch_bounds__(kBlock)
    zscore_cooperative(const float* __restrict__ x, float* __restrict__ y, int64_t n,
                       float* partial_sum, float* partial_sq, float* stats) {
  __shared__ float scratch[kBlock / Tile + 1];
  const cg::grid_group grid = cg::this_grid();
  phase_sum<Tile>(x, n, partial_sum, scratch);
  grid.sync();
  const float mean = grid_total<Tile>(partial_sum, scratch) / float(n);
  phase_sqdev<Tile>(x, n, mean, partial_sq, scratch);
  grid.sync();
  const float rstd = rstd_of(grid_total<Tile>(partial_sq, scratch) / float(n));
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    stats[0] = mean;
    stats[1] = rstd;
  }
  phase_normalize(x, y, n, mean, rstd);
}

// Jacobi.
// `in` was written by the previous step, in the cooperative kernel by other blocks of the same
// launch: plain pointers, no __restrict__ (see grid_total).
__device__ __forceinline__ void jacobi_step(const float* in, float* out, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * kBlock;
  for (int64_t i = int64_t(blockIdx.x) * kBlock + threadIdx.x; i < n; i += stride) {
    const float l = i > 0 ? in[i - 1] : kLeft;
    const float r = i + 1 < n ? in[i + 1] : kRight;
    out[i] = jacobi_update(l, in[i], r);
  }
}

__global__ void __launch_bounds__(kBlock)
    jacobi_step_kernel(const float* in, float* out, int64_t n) {
  jacobi_step(in, out, n);
}

// Step s reads u0 (s = 0), a (s odd) or b (s even), and writes a (s even) or b (s odd).
__device__ __host__ inline const float* jacobi_in(int s, const float* u0, const float* a,
                                                  const float* b) {
  return s == 0 ? u0 : (s % 2 ? a : b);
}
__device__ __host__ inline float* jacobi_out(int s, float* a, float* b) {
  return s % 2 ? b : a;
}

__global__ void __launch_bounds__(kBlock)
    jacobi_cooperative(const float* u0, float* a, float* b, int64_t n, int steps) {
  const cg::grid_group grid = cg::this_grid();
  for (int s = 0; s < steps; ++s) {
    jacobi_step(jacobi_in(s, u0, a, b), jacobi_out(s, a, b), n);
    if (s + 1 < steps) grid.sync();
  }
}

// ---- launchers ----------------------------------------------------------------------------------
// The grid of a cooperative kernel: the blocks that fit on the device at once (a larger grid makes
// cudaLaunchCooperativeKernel fail with cudaErrorCooperativeLaunchTooLarge), and no more blocks
// than there are 256-element chunks (an idle block would only make the barrier slower).
unsigned cooperative_grid(const void* kernel, int sm_count, int64_t items) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBlock, 0));
  if (per_sm < 1) throw std::runtime_error("a cooperative kernel cannot have one block per SM");
  const int64_t resident = int64_t(per_sm) * sm_count;
  return unsigned(std::clamp<int64_t>(gpu100::ceil_div<int64_t>(items, kBlock), 1, resident));
}

enum class Kind {
  multi_launch,
  cooperative32,
  cooperative16,
  jacobi_multi_launch,
  jacobi_cooperative
};
struct Version {
  const char* name;
  Kind kind;
};
const Version kVersions[] = {{"multi_launch", Kind::multi_launch},
                             {"cooperative", Kind::cooperative32},
                             {"cooperative_tile16", Kind::cooperative16},
                             {"jacobi_multi_launch", Kind::jacobi_multi_launch},
                             {"jacobi_cooperative", Kind::jacobi_cooperative}};
const Version& kZscoreMulti = kVersions[0];
const Version& kZscoreCooperative = kVersions[1];
const Version& kJacobiMulti = kVersions[3];
const Version& kJacobiCooperative = kVersions[4];
bool is_jacobi(const Version& v) {
  return v.kind == Kind::jacobi_multi_launch || v.kind == Kind::jacobi_cooperative;
}

// One z-score problem on the device: inputs, reference, buffers and the launchers of its versions.
struct Zscore {
  int64_t n;
  unsigned grid32, grid16;
  std::vector<float> x;
  ZscoreRef ref;
  gpu100::DeviceBuffer<float> d_x, d_y, d_partial_sum, d_partial_sq, d_stats;

  Zscore(int64_t n_, uint64_t seed, int sm_count)
      : n(n_),
        grid32(
            cooperative_grid(reinterpret_cast<const void*>(zscore_cooperative<32>), sm_count, n_)),
        grid16(
            cooperative_grid(reinterpret_cast<const void*>(zscore_cooperative<16>), sm_count, n_)),
        x(gpu100::random_floats(size_t(n_), seed, 1.0f, 3.0f)),
        ref(zscore_reference(x)),
        d_x(x),
        d_y(size_t(n_)),
        d_partial_sum(std::max(grid32, grid16)),
        d_partial_sq(std::max(grid32, grid16)),
        d_stats(2) {}

  void multi_launch(cudaStream_t s) {
    // The same grid as the cooperative kernel, so both add the same numbers in the same order.
    zscore_sum_kernel<32><<<grid32, kBlock, 0, s>>>(d_x.data(), n, d_partial_sum.data());
    LAUNCH_CHECK();
    zscore_sqdev_kernel<32>
        <<<grid32, kBlock, 0, s>>>(d_x.data(), n, d_partial_sum.data(), d_partial_sq.data());
    LAUNCH_CHECK();
    zscore_normalize_kernel<32><<<grid32, kBlock, 0, s>>>(
        d_x.data(), d_y.data(), n, d_partial_sum.data(), d_partial_sq.data(), d_stats.data());
    LAUNCH_CHECK();
  }

  template <int Tile>
  void cooperative(cudaStream_t s) {
    const float* x_arg = d_x.data();
    float* y_arg = d_y.data();
    int64_t n_arg = n;
    float* ps = d_partial_sum.data();
    float* pq = d_partial_sq.data();
    float* st = d_stats.data();
    void* args[] = {&x_arg, &y_arg, &n_arg, &ps, &pq, &st};
    CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(zscore_cooperative<Tile>),
                                           dim3(Tile == 32 ? grid32 : grid16), dim3(kBlock), args,
                                           0, s));
  }

  void launch(const Version& v, cudaStream_t s) {
    if (v.kind == Kind::multi_launch) multi_launch(s);
    if (v.kind == Kind::cooperative32) cooperative<32>(s);
    if (v.kind == Kind::cooperative16) cooperative<16>(s);
  }
  void poison() {
    d_y.poison();
    d_partial_sum.poison();
    d_partial_sq.poison();
    d_stats.poison();
  }
  // The tolerance counts the roundings of the version's grid.
  gpu100::CheckResult check(const Version& v) const {
    const unsigned grid = v.kind == Kind::cooperative16 ? grid16 : grid32;
    return gpu100::compare(d_y.download(), ref.y, zscore_tolerance(ref, n, grid));
  }
};

// One Jacobi problem: the initial rod u0, two ping-pong buffers, the reference after `steps`.
struct Jacobi {
  int64_t n;
  int steps;
  unsigned grid;
  std::vector<float> ref;
  gpu100::DeviceBuffer<float> d_u0, d_a, d_b;

  Jacobi(int64_t n_, int steps_, uint64_t seed, int sm_count)
      : n(n_),
        steps(steps_),
        grid(cooperative_grid(reinterpret_cast<const void*>(jacobi_cooperative), sm_count, n_)),
        d_a(size_t(n_)),
        d_b(size_t(n_)) {
    const auto u0 = gpu100::random_floats(size_t(n_), seed, 0.5f, 1.5f);
    d_u0 = gpu100::DeviceBuffer<float>(u0);
    ref = jacobi_reference(u0, steps_);
  }

  void multi_launch(cudaStream_t s) {
    for (int k = 0; k < steps; ++k) {
      jacobi_step_kernel<<<grid, kBlock, 0, s>>>(jacobi_in(k, d_u0.data(), d_a.data(), d_b.data()),
                                                 jacobi_out(k, d_a.data(), d_b.data()), n);
      LAUNCH_CHECK();
    }
  }
  void cooperative(cudaStream_t s) {
    const float* u0 = d_u0.data();
    float* a = d_a.data();
    float* b = d_b.data();
    int64_t n_arg = n;
    int steps_arg = steps;
    void* args[] = {&u0, &a, &b, &n_arg, &steps_arg};
    CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(jacobi_cooperative),
                                           dim3(grid), dim3(kBlock), args, 0, s));
  }
  void launch(const Version& v, cudaStream_t s) {
    if (v.kind == Kind::jacobi_multi_launch) multi_launch(s);
    if (v.kind == Kind::jacobi_cooperative) cooperative(s);
  }
  void poison() {
    d_a.poison();
    d_b.poison();
  }
  gpu100::CheckResult check(const Version&) const {
    // The last step, steps - 1, wrote a when it is even (jacobi_out).
    return gpu100::compare_exact((steps - 1) % 2 == 0 ? d_a.download() : d_b.download(), ref);
  }
};

// Version v of problem p (a Zscore or a Jacobi): the contract's run, poisoned and checked.
template <class Problem>
gpu100::Measure run_of(Problem& p, const Version& v, double work, gpu100::Role role) {
  return {.name = v.name,
          .launch = [&p, &v](cudaStream_t s) { p.launch(v, s); },
          .reset = [&p] { p.poison(); },
          .check = [&p, &v] { return p.check(v); },
          .work = work,
          .role = role};
}

// ---- analysis -----------------------------------------------------------------------------------
// Sizes of the sweeps: these points below the main size, then the main size itself.
std::vector<int64_t> sweep_points(std::vector<int64_t> points, int64_t main_size) {
  std::vector<int64_t> out;
  for (int64_t p : points)
    if (p < main_size) out.push_back(p);
  out.push_back(main_size);
  return out;
}


gpu100::Table zscore_table() {
  return {"z-score: one cooperative kernel vs three launches, by n",
          {"n", "multi_launch us", "cooperative us", "speedup (x)", "% of HBM peak (cooperative)"},
          {}};
}
std::vector<gpu100::Cell> zscore_row(int64_t n, const gpu100::Measured& multi,
                                     const gpu100::Measured& coop, double peak_gbps) {
  const double m = multi.time.median_ms, c = coop.time.median_ms;
  return {gpu100::Cell(static_cast<long long>(n)), m * 1e3, c * 1e3, m / c,
          100.0 * gpu100::gbps(16.0 * double(n), c) / peak_gbps};
}

gpu100::Table jacobi_table(int steps) {
  return {fmt::format("Jacobi: grid.sync() vs one launch per step, by rod length ({} steps)",
                      steps),
          {"cells", "multi_launch us/step", "cooperative us/step", "speedup (x)"},
          {}};
}
std::vector<gpu100::Cell> jacobi_row(int64_t cells, const gpu100::Measured& multi,
                                     const gpu100::Measured& coop, int steps) {
  const double m = multi.time.median_ms, c = coop.time.median_ms;
  return {gpu100::Cell(static_cast<long long>(cells)), m * 1e3 / steps, c * 1e3 / steps, m / c};
}

bool both_passed(const gpu100::Measured& a, const gpu100::Measured& b) {
  return a.ran && a.check.pass && b.ran && b.check.pass;
}

// measure_all's results by the names of the runs.
using Results = std::map<std::string, gpu100::Measured>;
Results measure_by_name(gpu100::Context& ctx, const std::vector<gpu100::Measure>& runs) {
  const auto measured = ctx.measure_all(runs);
  Results by_name;
  for (size_t i = 0; i < runs.size(); ++i) by_name[runs[i].name] = measured[i];
  return by_name;
}

// The z-score versions at the main size, the table's rows.
Results zscore_versions(gpu100::Context& ctx, int64_t n) {
  Zscore z(n, ctx.seed(), ctx.device().sm_count);
  std::vector<gpu100::Measure> runs;
  for (const Version& v : kVersions)
    if (!is_jacobi(v)) runs.push_back(run_of(z, v, 16.0 * double(n), gpu100::Role::version));
  Results measured = measure_by_name(ctx, runs);
  ctx.report().note(fmt::format("z-score: grid of {} blocks x {} threads (the resident maximum, "
                                "capped at n / {}) for every version; mean {:.6f}, rstd {:.6f} "
                                "(CPU, double)",
                                z.grid32, kBlock, kBlock, z.ref.mean, z.ref.rstd));
  return measured;
}

// The Jacobi versions at the main rod length, the table's rows.
Results jacobi_versions(gpu100::Context& ctx, int64_t cells, int steps) {
  Jacobi j(cells, steps, ctx.seed() + 1, ctx.device().sm_count);
  const double bytes = 8.0 * double(cells) * steps;  // per step: read u, write u'
  const auto role = gpu100::Role::version;
  Results measured = measure_by_name(
      ctx, {run_of(j, kJacobiMulti, bytes, role), run_of(j, kJacobiCooperative, bytes, role)});
  ctx.report().note(fmt::format("Jacobi: {} steps on {} cells, grid of {} blocks; GB/s count 8 "
                                "bytes per cell per step, and the rod (2 x {:.1f} MiB) can stay in "
                                "L2, so rates above the HBM peak are L2 rates",
                                steps, cells, j.grid, 4.0 * double(cells) / (1 << 20)));
  return measured;
}

// Both z-score versions at smaller sizes, each size a fresh problem, checked; the last row is the
// main size's, from its measurements.
void zscore_sweep(gpu100::Context& ctx, int64_t n, const Results& main) {
  const auto point = gpu100::Role::point;
  const double peak = ctx.device().peak_dram_gbps();
  gpu100::Table t = zscore_table();
  gpu100::CheckResult all;
  const auto below = ctx.quick() ? std::vector<int64_t>{1001}
                                 : std::vector<int64_t>{1001, 32771, 1048583, 16777259};
  for (int64_t size : sweep_points(below, n)) {
    if (size == n) {
      const auto &multi = main.at(kZscoreMulti.name), &coop = main.at(kZscoreCooperative.name);
      if (both_passed(multi, coop)) t.add_row(zscore_row(size, multi, coop, peak));
      continue;
    }
    Zscore z(size, ctx.seed() + uint64_t(size), ctx.device().sm_count);
    const double bytes = 16.0 * double(size);
    const Results rs = measure_by_name(
        ctx, {run_of(z, kZscoreMulti, bytes, point), run_of(z, kZscoreCooperative, bytes, point)});
    const auto &multi = rs.at(kZscoreMulti.name), &coop = rs.at(kZscoreCooperative.name);
    all = gpu100::combine(all, gpu100::combine(multi.check, coop.check));
    t.add_row(zscore_row(size, multi, coop, peak));
  }
  if (all.checked) ctx.report().add_check("z-score sweep (all sizes, both versions)", all);
  ctx.report().table(std::move(t));
}

// Both Jacobi versions on shorter rods, the same way.
void jacobi_sweep(gpu100::Context& ctx, int64_t cells, int steps, const Results& main) {
  const auto point = gpu100::Role::point;
  gpu100::Table t = jacobi_table(steps);
  gpu100::CheckResult all;
  const auto below = ctx.quick() ? std::vector<int64_t>{1001}
                                 : std::vector<int64_t>{1001, 16411, 262147, 4194319};
  for (int64_t size : sweep_points(below, cells)) {
    if (size == cells) {
      const auto &multi = main.at(kJacobiMulti.name), &coop = main.at(kJacobiCooperative.name);
      if (both_passed(multi, coop)) t.add_row(jacobi_row(size, multi, coop, steps));
      continue;
    }
    Jacobi j(size, steps, ctx.seed() + uint64_t(size), ctx.device().sm_count);
    const double bytes = 8.0 * double(size) * steps;
    const Results rs = measure_by_name(
        ctx, {run_of(j, kJacobiMulti, bytes, point), run_of(j, kJacobiCooperative, bytes, point)});
    const auto &multi = rs.at(kJacobiMulti.name), &coop = rs.at(kJacobiCooperative.name);
    all = gpu100::combine(all, gpu100::combine(multi.check, coop.check));
    t.add_row(jacobi_row(size, multi, coop, steps));
  }
  if (all.checked) ctx.report().add_check("Jacobi sweep (all sizes, both versions)", all);
  ctx.report().table(std::move(t));
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "tiled partitions and grid.sync(): z-score and Jacobi steps in one cooperative kernel vs one "
      "launch per phase");
  int64_t n = (int64_t(1) << 26) + 3;
  int64_t cells = (int64_t(1) << 20) + 7;
  int steps = 100;
  cli.size("n", n, 100'003, "elements of the z-score problem");
  cli.size("cells", cells, 10'007, "length of the Jacobi rod");
  cli.option("steps", steps, "Jacobi steps (one launch or one grid.sync() each)", 1, 100000);
  cli.kernels_of(kVersions);
  cli.device_bytes([&] { return 8.0 * double(n) + 12.0 * double(cells) + double(1 << 20); });
  cli.require_device([](const gpu100::DeviceInfo& d) -> std::string {
    return d.cooperative_launch ? ""
                                : "the device cannot launch cooperative kernels "
                                  "(cudaDevAttrCooperativeLaunch = 0)";
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.problem("n", double(n));
    report.problem("cells", double(cells));
    report.problem("steps", double(steps));
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    // z-score traffic: x read three times, y written once; copy 8n bytes = the same 16n bytes.
    ctx.copy_baseline(size_t(8.0 * double(n)));

    Results z_main, j_main;
    if (ctx.want("multi_launch") || ctx.want("cooperative") || ctx.want("cooperative_tile16"))
      z_main = zscore_versions(ctx, n);
    if (ctx.want("jacobi_multi_launch") || ctx.want("jacobi_cooperative"))
      j_main = jacobi_versions(ctx, cells, steps);
    report.note(
        "grid.sync() = barrier.sync + one atom.add.release.gpu per block on an arrival "
        "counter + a spin on ld.acquire.gpu (see the PTX); it needs "
        "cudaLaunchCooperativeKernel and a grid that is resident all at once");

    // The same comparisons at smaller sizes, each size checked.
    if (ctx.want("multi_launch") && ctx.want("cooperative")) zscore_sweep(ctx, n, z_main);
    if (ctx.want("jacobi_multi_launch") && ctx.want("jacobi_cooperative"))
      jacobi_sweep(ctx, cells, steps, j_main);
    report.note(
        "speedup (x) = multi_launch time / cooperative time (same grid, same arithmetic); "
        "us = microseconds per call (z-score) or per step (Jacobi), median of CUDA events "
        "with L2 flushed before each run");
    report.note(
        "limits: z-score GB/s count 16 bytes per element against the HBM peak (the copy "
        "baseline is the practical one); the Jacobi rods of the sweep fit in L2 and a "
        "step is bounded mostly by the latency of a launch or a barrier, for which no "
        "device limit exists, so that table reports us/step and the speedup only");
  });
}
