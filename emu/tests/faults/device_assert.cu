// Planted bug: a device-side assert that fails. The kernel asserts that every input is
// non-negative and element 77 is -1. Expected: cudaErrorAssert and the emulator naming the
// failed assertion (block 0, thread 77, at the assert's line). --fixed: all inputs are
// non-negative, the assert holds and the results are right.
//
// NDEBUG is undefined on purpose: release builds define it and would compile the assert away.
#undef NDEBUG
#include <cassert>

#include "fault_common.h"

constexpr int kN = 128;

__global__ void k_checked_sqrt(const float* in, float* out) {
  const int i = threadIdx.x;
  // The planted bug: in[77] is negative.
  assert(in[i] >= 0.0f);  // PLANTED
  out[i] = sqrtf(in[i]);
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  float h[kN];
  for (int i = 0; i < kN; ++i) h[i] = float(i * i);
  if (!fixed) h[77] = -1.0f;
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_checked_sqrt<<<1, kN>>>(in, out);
  if (!fixed) return verdict("device_assert", launch_result(), cudaErrorAssert);
  CHECK(launch_result());
  float got[kN];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i)
    if (got[i] != float(i))
      return fixed_wrong("device_assert", "out[%d] = %g, expected %d", i, got[i], i);
  return fixed_ok("device_assert");
}
