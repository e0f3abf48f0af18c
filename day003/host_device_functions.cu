// Day 003 - __host__ __device__ functions, and why "the same code" can give different floats
//
// A function marked __host__ __device__ is compiled twice, once for the CPU and once for the
// GPU, so the CPU reference and the kernel can share one source of truth. Sharing the source
// is not sharing the arithmetic, though: nvcc contracts a * x + y into one fused multiply-add
// (FMA) by default (--fmad=true), while a host compiler for plain x86-64 emits a multiply and
// an add (a host whose base instruction set has FMA, such as AArch64 in a Grace Hopper system,
// may contract too: the host side depends on the host and its flags). An FMA rounds once (the
// exact a*x+y, rounded to float); a multiply then an add round twice (a*x is rounded to float
// before y is added). Both are correct IEEE arithmetic, but their results differ in the last
// bits, and the CPU check of a kernel then fails for no bug.
//
// The cure is to say which arithmetic you mean, on both sides, so neither compiler decides:
//   fused     device __fmaf_rn(a, b, c), host std::fma(a, b, c): one rounding each.
//   separate  device __fadd_rn(__fmul_rn(a, b), c): the _rn intrinsics are never contracted;
//             host: the product goes through a volatile float, which forces its rounding to
//             float and leaves the compiler nothing to fuse, whatever -ffp-contract says.
// With that, every GPU variant equals the CPU variant of the same name bit for bit.
//
// Versions (each pair shares one __host__ __device__ function with the CPU reference)
//   saxpy_fma, saxpy_nofma   z = a * x + y (out of place, so the check and every timed run
//                            see the same y; the traffic, 12 bytes per element, is SAXPY's)
//   poly_fma, poly_nofma     z = p(x), a degree-8 polynomial by Horner's rule: 8 multiply-adds
//                            per element, 8 bytes of traffic, still memory bound
// A table then counts how many elements differ between fma and nofma, by how many ulps, and
// how far each is from a float64 evaluation at worst: one rounding has the smaller worst case.
//
// Run:  build/bin/day003 [--n 67108867] [--kernel saxpy_fma,poly_nofma] [--json out.json]
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

enum class Rounding { fused, separate };

// The one multiply-add every function below is built from: a * b + c, rounded as asked.
template <Rounding R>
__host__ __device__ inline float mul_add(float a, float b, float c) {
#ifdef __CUDA_ARCH__
  if constexpr (R == Rounding::fused)
    return __fmaf_rn(a, b, c);
  else
    return __fadd_rn(__fmul_rn(a, b), c);
#else
  if constexpr (R == Rounding::fused) {
    return std::fma(a, b, c);  // correctly rounded in software where the CPU has no FMA
  } else {
    volatile float product = a * b;
    return product + c;
  }
#endif
}

template <Rounding R>
__host__ __device__ inline float saxpy(float a, float x, float y) {
  return mul_add<R>(a, x, y);
}

// exp(x) truncated after x^8 / 8!: the result stays between 0.36 and 2.72 on [-1, 1], with no
// cancellation, so both roundings stay within a few ulps of the float64 value. Passed by value:
// kernel parameters and host code read the same struct.
constexpr int kDegree = 8;
struct Poly {
  float c[kDegree + 1];  // c[k] multiplies x^k
};

template <Rounding R>
__host__ __device__ inline float horner(const Poly& p, float x) {
  float acc = p.c[kDegree];
  for (int k = kDegree - 1; k >= 0; --k) acc = mul_add<R>(acc, x, p.c[k]);
  return acc;
}

Poly exp_taylor() {
  Poly p{};
  double factorial = 1;
  for (int k = 0; k <= kDegree; ++k) {
    if (k > 0) factorial *= k;
    p.c[k] = float(1.0 / factorial);
  }
  return p;
}

// ---- CPU reference: the same functions the kernels call, compiled for the host ---------------
struct Version {
  const char* name;
  bool is_saxpy;
  Rounding rounding;
};
const Version kVersions[] = {
    {"saxpy_fma", true, Rounding::fused},
    {"saxpy_nofma", true, Rounding::separate},
    {"poly_fma", false, Rounding::fused},
    {"poly_nofma", false, Rounding::separate},
};

struct References {
  std::vector<float> saxpy[2], poly[2];  // [0] fused, [1] separate
  const std::vector<float>& of(const Version& v) const {
    return (v.is_saxpy ? saxpy : poly)[v.rounding == Rounding::fused ? 0 : 1];
  }
};

References references(float a, const Poly& poly, const std::vector<float>& x,
                      const std::vector<float>& y) {
  References r;
  for (auto* v : {&r.saxpy[0], &r.saxpy[1], &r.poly[0], &r.poly[1]}) v->resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    r.saxpy[0][i] = saxpy<Rounding::fused>(a, x[i], y[i]);
    r.saxpy[1][i] = saxpy<Rounding::separate>(a, x[i], y[i]);
    r.poly[0][i] = horner<Rounding::fused>(poly, x[i]);
    r.poly[1][i] = horner<Rounding::separate>(poly, x[i]);
  }
  return r;
}

// ---- kernels ------------------------------------------------------------------------------------
template <Rounding R>
__global__ void saxpy_kernel(float a, const float* __restrict__ x, const float* __restrict__ y,
                             float* __restrict__ z, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    z[i] = saxpy<R>(a, x[i], y[i]);
}

template <Rounding R>
__global__ void poly_kernel(Poly p, const float* __restrict__ x, float* __restrict__ z, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    z[i] = horner<R>(p, x[i]);
}

// ---- launcher -----------------------------------------------------------------------------------
constexpr int kBlock = 256;

void launch(const Version& v, unsigned grid, float a, const Poly& poly, const float* x,
            const float* y, float* z, int64_t n, cudaStream_t s) {
  const bool fused = v.rounding == Rounding::fused;
  if (v.is_saxpy) {
    auto kernel = fused ? saxpy_kernel<Rounding::fused> : saxpy_kernel<Rounding::separate>;
    kernel<<<grid, kBlock, 0, s>>>(a, x, y, z, n);
  } else {
    auto kernel = fused ? poly_kernel<Rounding::fused> : poly_kernel<Rounding::separate>;
    kernel<<<grid, kBlock, 0, s>>>(poly, x, z, n);
  }
  LAUNCH_CHECK();
}

// ---- analysis: what contraction changes, in ulps ---------------------------------------------

// Floats ordered as integers: consecutive floats are consecutive integers (and -0 == +0), so
// the difference of two is their distance in ulps.
int64_t ordered(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  const int64_t magnitude = int64_t(u & 0x7fffffffu);
  return (u >> 31) ? -magnitude : magnitude;
}
int64_t ulp_distance(float a, float b) {
  return std::llabs(ordered(a) - ordered(b));
}

// Error of a float result against a float64 value, in ulps of the float nearest that value.
double error_in_ulps(float got, double exact) {
  const float nearest = float(exact);
  const float mag = std::fabs(nearest);
  const double ulp = double(std::nextafter(mag, INFINITY)) - double(mag);
  return std::fabs(double(got) - exact) / ulp;
}

struct Difference {
  int64_t differ = 0, max_ulps = 0;
  double max_err_fma = 0, max_err_nofma = 0;  // vs float64, in ulps
};

Difference differences(const std::vector<float>& fma, const std::vector<float>& nofma,
                       const std::vector<double>& exact) {
  Difference d;
  for (size_t i = 0; i < fma.size(); ++i) {
    const int64_t u = ulp_distance(fma[i], nofma[i]);
    d.differ += u != 0;
    d.max_ulps = std::max(d.max_ulps, u);
    d.max_err_fma = std::max(d.max_err_fma, error_in_ulps(fma[i], exact[i]));
    d.max_err_nofma = std::max(d.max_err_nofma, error_in_ulps(nofma[i], exact[i]));
  }
  return d;
}

// From the CPU results, which every GPU version matched bit for bit. SAXPY: the separate form
// rounds a*x first; that error is relative to a*x, not to the result, so where y nearly cancels
// a*x it is many ulps of the small result, while the fused form stays within half an ulp. The exp
// polynomial has no cancellation, so there the two differ by a few ulps at most (each Horner step
// adds its own rounding either way).
gpu100::Table contraction_table(const References& r, float a, const Poly& poly,
                                const std::vector<float>& x, const std::vector<float>& y) {
  const size_t count = x.size();
  std::vector<double> saxpy_exact(count), poly_exact(count);
  for (size_t i = 0; i < count; ++i) {
    saxpy_exact[i] = double(a) * double(x[i]) + double(y[i]);
    double acc = poly.c[kDegree];
    for (int k = kDegree - 1; k >= 0; --k) acc = acc * double(x[i]) + double(poly.c[k]);
    poly_exact[i] = acc;
  }
  gpu100::Table table;
  table.title = "FMA (one rounding) vs separate multiply and add (two roundings)";
  table.columns = {"function",
                   "elements",
                   "fma != nofma",
                   "% differ",
                   "max ulps apart",
                   "fma max err (ulp vs fp64)",
                   "nofma max err (ulp vs fp64)"};
  auto add_row = [&](const char* name, const std::vector<float>* ref,
                     const std::vector<double>& exact) {
    const Difference d = differences(ref[0], ref[1], exact);
    table.add_row({name, (long long)count, (long long)d.differ,
                   100.0 * double(d.differ) / double(count), (long long)d.max_ulps, d.max_err_fma,
                   d.max_err_nofma});
  };
  add_row("saxpy", r.saxpy, saxpy_exact);
  add_row("poly (exp, degree 8)", r.poly, poly_exact);
  return table;
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("one __host__ __device__ function on both sides; FMA contraction on and off");
  int64_t n = (int64_t(1) << 26) + 3;
  cli.size("n", n, 100'003, "number of elements");
  cli.kernels_of(kVersions);
  cli.device_bytes([&] { return 3.0 * double(n) * sizeof(float); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.problem("degree", double(kDegree));
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");

    const float a = 1.7f;
    const Poly poly = exp_taylor();
    const auto x = gpu100::random_floats(size_t(n), ctx.seed());
    const auto y = gpu100::random_floats(size_t(n), ctx.seed() + 1);
    const References ref = references(a, poly, x, y);
    gpu100::DeviceBuffer<float> d_x(x), d_y(y), d_z{size_t(n)};
    // Same traffic as SAXPY: a copy of 1.5 n floats reads and writes 12 n bytes.
    ctx.copy_baseline(size_t(1.5 * double(n) * sizeof(float)));
    const unsigned grid = unsigned(ctx.device().sm_count) * 8;

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      runs.push_back(
          {.name = v.name,
           .launch =
               [&](cudaStream_t s) {
                 launch(v, grid, a, poly, d_x.data(), d_y.data(), d_z.data(), n, s);
               },
           .reset = [&] { d_z.poison(); },
           .check = [&] { return gpu100::compare_exact(d_z.download(), ref.of(v)); },
           .work = (v.is_saxpy ? 12.0 : 8.0) * double(n)});  // x, y read, z written; or x, z
    }
    ctx.measure_all(runs);

    report.table(contraction_table(ref, a, poly, x, y));
    report.note(
        "each GPU version is compared bit for bit with the CPU version of the same "
        "rounding; fma and nofma differ from each other, not from their reference");
  });
}
