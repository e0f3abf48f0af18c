// Day 058 - all-pairs n-body: softened gravitational accelerations, leapfrog integration
//
// Each body i feels a_i = sum_j m_j (r_j - r_i) / (|r_j - r_i|^2 + eps^2)^(3/2) (G = 1). The
// softening eps keeps close pairs finite and makes the j = i term zero, so every thread sums all
// n bodies without a branch. n^2 interactions of about 20 FLOPs each on n bodies of 16 bytes:
// with thousands of bodies the work is pure arithmetic, and the question is how the n positions
// reach every thread. The rate is GFLOP/s at the conventional 20 FLOPs per interaction (3 sub,
// 3 fma for r^2 + eps^2, rsqrt, 2 mul for the cube, 1 mul by the mass, 3 fma to accumulate; the
// rsqrt counted as several, as in the GPU Gems 3 chapter), against the fp32 peak.
//
// Versions (one thread per body, 256 per block; both sum j = 0 .. n-1 in the same order)
//   naive   every thread reads body j from global memory, for every j: n loads per thread, all
//           of a warp's lanes on the same address (one broadcast per warp and j).
//   shared  the block stages a tile of 256 bodies in shared memory (one float4 load per
//           thread), then every thread reads the tile from there: a 256th of the global loads.
//
// Integration: kick-drift-kick leapfrog over --steps steps (half kick, drift, new forces, half
// kick), symplectic, so the total energy oscillates instead of drifting away; the report tabulates
// kinetic + potential energy at the start and the end of each version's run and their relative
// drift. The kick and drift are fused multiply-adds, checked bit for bit against the CPU replaying
// them on the same accelerations.
//
// Check: the accelerations of the initial state against the CPU in double, per component, within
// a bound derived from the operations: each term goes through about a dozen fp32 roundings plus
// three rsqrt.approx.f32 errors (at most 2^-22.9 relative each, PTX ISA) and then a sequential sum
// of n terms, so |gpu - ref| <= (gamma(n + 12) + 3 * 2^-22.9) * sum_j |term_j| (the sum of
// absolute terms computed in double). The derivation is in PROGRESS.md.
//
// Run:  build/bin/day058 [--n 16411] [--steps 100] [--dt 0.001] [--softening 0.05]
//       [--kernel naive,shared] [--json out.json]
#include <fmt/core.h>

#include <cmath>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kBlock = 256;  // threads per block = bodies per shared tile

struct Params {
  float eps2;  // softening squared, rounded to fp32 once: the CPU uses the same value
  float dt, half_dt;
};

// ---- CPU reference ------------------------------------------------------------------------------
// Bodies are float4 (x, y, z, mass). Returns the accelerations (3 per body) in double and, per
// component, the sum of the absolute terms (the scale of the rounding-error bound).
void accelerations_cpu(const std::vector<float4>& pos, float eps2, std::vector<double>& acc,
                       std::vector<double>& abs_sum) {
  const size_t n = pos.size();
  acc.assign(3 * n, 0.0);
  abs_sum.assign(3 * n, 0.0);
  for (size_t i = 0; i < n; ++i) {
    double a[3] = {0, 0, 0}, s[3] = {0, 0, 0};
    for (size_t j = 0; j < n; ++j) {
      const double d[3] = {double(pos[j].x) - pos[i].x, double(pos[j].y) - pos[i].y,
                           double(pos[j].z) - pos[i].z};
      const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + double(eps2);
      const double f = double(pos[j].w) / (r2 * std::sqrt(r2));
      for (int c = 0; c < 3; ++c) {
        a[c] += d[c] * f;
        s[c] += std::fabs(d[c] * f);
      }
    }
    for (int c = 0; c < 3; ++c) acc[3 * i + c] = a[c], abs_sum[3 * i + c] = s[c];
  }
}

// Kinetic plus softened potential energy (the potential whose gradient is the force above).
double total_energy(const std::vector<float4>& pos, const std::vector<float4>& vel, float eps2) {
  const size_t n = pos.size();
  double kinetic = 0, potential = 0;
  for (size_t i = 0; i < n; ++i) {
    const double v2 =
        double(vel[i].x) * vel[i].x + double(vel[i].y) * vel[i].y + double(vel[i].z) * vel[i].z;
    kinetic += 0.5 * pos[i].w * v2;
    for (size_t j = i + 1; j < n; ++j) {
      const double dx = double(pos[j].x) - pos[i].x, dy = double(pos[j].y) - pos[i].y,
                   dz = double(pos[j].z) - pos[i].z;
      potential -= double(pos[i].w) * pos[j].w / std::sqrt(dx * dx + dy * dy + dz * dz + eps2);
    }
  }
  return kinetic + potential;
}

// The device's kick and drift, operation for operation (one correctly rounded fma each).
void kick_drift_cpu(std::vector<float4>& pos, std::vector<float4>& vel,
                    const std::vector<float4>& acc, const Params& p) {
  for (size_t i = 0; i < pos.size(); ++i) {
    vel[i].x = std::fma(acc[i].x, p.half_dt, vel[i].x);
    vel[i].y = std::fma(acc[i].y, p.half_dt, vel[i].y);
    vel[i].z = std::fma(acc[i].z, p.half_dt, vel[i].z);
    pos[i].x = std::fma(vel[i].x, p.dt, pos[i].x);
    pos[i].y = std::fma(vel[i].y, p.dt, pos[i].y);
    pos[i].z = std::fma(vel[i].z, p.dt, pos[i].z);
  }
}

// ---- kernels ------------------------------------------------------------------------------------
// One interaction, the same chain in both versions: 3 subtractions, r^2 + eps^2 as three fmas,
// rsqrt (rsqrt.approx.f32), the cube, the mass, three fmas into the accumulator.
__device__ __forceinline__ void interact(const float4 bi, const float4 bj, float eps2, float3& a) {
  const float dx = __fsub_rn(bj.x, bi.x), dy = __fsub_rn(bj.y, bi.y), dz = __fsub_rn(bj.z, bi.z);
  const float r2 = __fmaf_rn(dz, dz, __fmaf_rn(dy, dy, __fmaf_rn(dx, dx, eps2)));
  const float inv_r = rsqrtf(r2);
  const float s = __fmul_rn(bj.w, __fmul_rn(__fmul_rn(inv_r, inv_r), inv_r));
  a.x = __fmaf_rn(dx, s, a.x);
  a.y = __fmaf_rn(dy, s, a.y);
  a.z = __fmaf_rn(dz, s, a.z);
}

__global__ void forces_naive(const float4* __restrict__ pos, float4* __restrict__ acc, int n,
                             float eps2) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 bi = pos[i];
  float3 a = make_float3(0, 0, 0);
  for (int j = 0; j < n; ++j) interact(bi, pos[j], eps2, a);
  acc[i] = make_float4(a.x, a.y, a.z, 0);
}

__global__ void forces_shared(const float4* __restrict__ pos, float4* __restrict__ acc, int n,
                              float eps2) {
  __shared__ float4 tile[kBlock];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  // Threads past n have no body but still load their share of every tile and meet the barriers.
  const float4 bi = i < n ? pos[i] : make_float4(0, 0, 0, 0);
  float3 a = make_float3(0, 0, 0);
  for (int base = 0; base < n; base += kBlock) {
    if (base + int(threadIdx.x) < n) tile[threadIdx.x] = pos[base + threadIdx.x];
    __syncthreads();
    const int count = min(kBlock, n - base);  // the last tile is partial: its tail is stale
    for (int k = 0; k < count; ++k) interact(bi, tile[k], eps2, a);
    __syncthreads();  // the next tile overwrites this one
  }
  if (i < n) acc[i] = make_float4(a.x, a.y, a.z, 0);
}

// Leapfrog halves: v += a dt/2 then x += v dt; and the closing v += a dt/2.
__global__ void kick_drift(float4* __restrict__ pos, float4* __restrict__ vel,
                           const float4* __restrict__ acc, int n, Params p) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 v = vel[i], x = pos[i];
  const float4 a = acc[i];
  v.x = __fmaf_rn(a.x, p.half_dt, v.x);
  v.y = __fmaf_rn(a.y, p.half_dt, v.y);
  v.z = __fmaf_rn(a.z, p.half_dt, v.z);
  x.x = __fmaf_rn(v.x, p.dt, x.x);
  x.y = __fmaf_rn(v.y, p.dt, x.y);
  x.z = __fmaf_rn(v.z, p.dt, x.z);
  vel[i] = v;
  pos[i] = x;
}

__global__ void kick(float4* __restrict__ vel, const float4* __restrict__ acc, int n, Params p) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 v = vel[i];
  const float4 a = acc[i];
  v.x = __fmaf_rn(a.x, p.half_dt, v.x);
  v.y = __fmaf_rn(a.y, p.half_dt, v.y);
  v.z = __fmaf_rn(a.z, p.half_dt, v.z);
  vel[i] = v;
}

// ---- launchers ----------------------------------------------------------------------------------
using Kernel = void (*)(const float4*, float4*, int, float);
struct Version {
  const char* name;
  Kernel kernel;
};
const Version kVersions[] = {
    {"naive", forces_naive},
    {"shared", forces_shared},
};

void launch_forces(const Version& v, const float4* pos, float4* acc, int n, float eps2,
                   cudaStream_t s) {
  v.kernel<<<gpu100::grid_for(n, kBlock), kBlock, 0, s>>>(pos, acc, n, eps2);
  LAUNCH_CHECK();
}

// ---- analysis -----------------------------------------------------------------------------------
// The per-component bound of the accelerations: per term, the subtraction giving d (1 rounding);
// r^2 + eps^2 (3 fmas on squares: at most 5 roundings), which reach the term as r^-3, so times 3/2;
// the cube and the mass (3 multiplies): 11.5 roundings, taken as 12; each rsqrt adds its own
// 2^-22.9 three times (cubed). The fma sum, which also rounds the product with d, adds at most n
// more roundings to every term.
// gamma covers the products of (1 + delta) to first order; the factor 1.001 the cross terms.
std::vector<double> acceleration_bounds(const std::vector<double>& abs_sum, int64_t n) {
  const double per_term = gpu100::summation_error_bound(double(n) + 12, n) + 3 * std::exp2(-22.9);
  std::vector<double> bound(abs_sum.size());
  for (size_t k = 0; k < bound.size(); ++k) bound[k] = 1.001 * per_term * abs_sum[k];
  return bound;
}

std::vector<double> flatten(const std::vector<float4>& acc) {
  std::vector<double> out(3 * acc.size());
  for (size_t i = 0; i < acc.size(); ++i) {
    out[3 * i] = acc[i].x;
    out[3 * i + 1] = acc[i].y;
    out[3 * i + 2] = acc[i].z;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("All-pairs softened gravity in fp32: global vs shared-memory tiles, leapfrog");
  int64_t n = 16411;
  int steps = 100;
  double dt = 1e-3, softening = 0.05;
  // The CPU reference is O(n^2) in double: 2^16 bodies take it seconds.
  cli.size("n", n, 1001, "number of bodies", int64_t(1) << 16);
  cli.option("steps", steps, "leapfrog steps of the energy-drift run", 0, 1000000);
  cli.option("dt", dt, "time step", 1e-9, 1.0);
  cli.option("softening", softening, "softening length eps", 1e-4, 10.0);
  cli.kernels_of(kVersions);
  cli.device_bytes([&] { return 3.0 * double(n) * sizeof(float4); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GFLOP/s");
    report.limit("fp32_gflops", ctx.device().peak_fp32_tflops() * 1e3, "fp32 peak");
    const double interactions = double(n) * double(n);
    report.problem("interactions", interactions);

    const Params p{float(softening * softening), float(dt), float(0.5 * dt)};
    // A unit cube of bodies with masses summing to about 1 and small random velocities.
    const auto r = gpu100::random_floats(size_t(7 * n), ctx.seed(), -1.0f, 1.0f);
    std::vector<float4> pos0(n), vel0(n);
    for (int64_t i = 0; i < n; ++i) {
      pos0[i] = make_float4(r[7 * i], r[7 * i + 1], r[7 * i + 2],
                            (1.0f + 0.5f * r[7 * i + 3]) / float(n));
      vel0[i] = make_float4(0.1f * r[7 * i + 4], 0.1f * r[7 * i + 5], 0.1f * r[7 * i + 6], 0);
    }
    std::vector<double> ref, abs_sum;
    accelerations_cpu(pos0, p.eps2, ref, abs_sum);
    const auto bound = acceleration_bounds(abs_sum, n);

    gpu100::DeviceBuffer<float4> d_pos(pos0), d_vel(vel0), d_acc{size_t(n)};
    const int ni = int(n);
    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      runs.push_back(
          {.name = v.name,
           .launch =
               [&](cudaStream_t s) { launch_forces(v, d_pos.data(), d_acc.data(), ni, p.eps2, s); },
           .reset = [&] { d_acc.poison(); },
           .check =
               [&] {
                 return gpu100::compare_within(flatten(d_acc.download()), ref, bound,
                                               "rsqrt + summation bound");
               },
           .work = 20.0 * interactions,
           .flush_l2 = false});
    }
    const auto measured = ctx.measure_all(runs);

    // The energy-drift run of every version that ran, from the same initial state.
    gpu100::Table drift{"energy over the leapfrog run (CPU, double)",
                        {"version", "steps", "E start", "E end", "relative drift"}};
    const double e0 = total_energy(pos0, vel0, p.eps2);
    const unsigned grid = gpu100::grid_for(n, kBlock);
    bool step_checked = false;
    for (size_t k = 0; k < measured.size(); ++k) {
      if (!measured[k].ran) continue;
      const Version& v = kVersions[k];
      d_pos.upload(pos0);
      d_vel.upload(vel0);
      launch_forces(v, d_pos.data(), d_acc.data(), ni, p.eps2, nullptr);
      for (int step = 0; step < steps; ++step) {
        if (!step_checked) {  // the integrator's first kick and drift, bit for bit
          auto pos = d_pos.download(), vel = d_vel.download();
          const auto acc = d_acc.download();
          kick_drift<<<grid, kBlock>>>(d_pos.data(), d_vel.data(), d_acc.data(), ni, p);
          LAUNCH_CHECK();
          kick_drift_cpu(pos, vel, acc, p);
          report.add_check(
              "kick-drift step (exact)",
              gpu100::combine(gpu100::compare_exact(flatten(d_pos.download()), flatten(pos)),
                              gpu100::compare_exact(flatten(d_vel.download()), flatten(vel))));
          step_checked = true;
        } else {
          kick_drift<<<grid, kBlock>>>(d_pos.data(), d_vel.data(), d_acc.data(), ni, p);
          LAUNCH_CHECK();
        }
        launch_forces(v, d_pos.data(), d_acc.data(), ni, p.eps2, nullptr);
        kick<<<grid, kBlock>>>(d_vel.data(), d_acc.data(), ni, p);
        LAUNCH_CHECK();
      }
      CUDA_CHECK(cudaDeviceSynchronize());
      const double e1 = total_energy(d_pos.download(), d_vel.download(), p.eps2);
      drift.add_row({std::string(v.name), steps, e0, e1, std::fabs(e1 - e0) / std::fabs(e0)});
    }
    report.table(drift);
  });
}
