// Planted bug: a kernel built with -use_fast_math, checked with an fp32 tolerance. Under
// -use_fast_math, tanhf compiles to tanh.approx.f32, whose maximum relative error the PTX ISA
// gives as 2^-11 (earlier ISA texts: 2^-10.987), about 4.9e-4: a relative tolerance of 1e-6,
// right for an accurate tanhf, is too tight for it. With approximate instructions computed
// exactly the check passes; on a GPU, or under GPU100_EMU_APPROX=bound-* (results at the edge
// of the ISA's bound), it fails. Expected: the program's own report of the results outside the
// tolerance (exit 1). --fixed: the tolerance derived from the bound, 2^-10.987 relative to the
// exact value plus the rounding of the f32 result it is compared with.

#include <cmath>
#include <vector>

#include "fault_common.h"

constexpr int kN = 4096;

__global__ void k_tanh(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tanhf(in[i]);
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  std::vector<float> h(kN), got(kN);
  for (int i = 0; i < kN; ++i) h[i] = -6.0f + 12.0f * (i + 0.5f) / kN;
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, kN * sizeof(float)));
  CHECK(cudaMalloc(&out, kN * sizeof(float)));
  CHECK(cudaMemcpy(in, h.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
  k_tanh<<<(kN + 255) / 256, 256>>>(in, out, kN);
  CHECK(launch_result());
  CHECK(cudaMemcpy(got.data(), out, kN * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));

  // The planted bug: an fp32 tolerance for a fast-math result.
  const double fp32_rtol = 1e-6;  // PLANTED
  // The bound of tanh.approx.f32, and half an ulp of an f32 near |tanh| (at most 1).
  const double bound_rtol = std::exp2(-10.987), half_ulp = std::ldexp(1.0, -25);
  int bad = 0, worst = 0;
  double worst_err = 0;
  for (int i = 0; i < kN; ++i) {
    const double ref = std::tanh(double(h[i]));
    const double err = std::fabs(double(got[i]) - ref);
    const double tol = fixed ? bound_rtol * std::fabs(ref) + half_ulp : fp32_rtol * std::fabs(ref);
    if (!(err <= tol)) ++bad;
    if (err / std::fabs(ref) > worst_err) worst_err = err / std::fabs(ref), worst = i;
  }
  if (fixed) {
    if (bad) return fixed_wrong("fast_math_tolerance", "%d results outside the bound of tanh.approx.f32", bad);
    return fixed_ok("fast_math_tolerance");
  }
  std::fprintf(stderr,
               "fast_math_tolerance: %d of %d results outside the relative tolerance %g (worst: "
               "tanhf(%.9g) = %.9g, relative error %.3g)\n",
               bad, kN, fp32_rtol, h[worst], got[worst], worst_err);
  return bad ? 1 : 0;
}
