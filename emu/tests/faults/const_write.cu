// Planted bug: a store to __constant__ memory through a pointer. The kernel updates its
// coefficients in place through a plain float* that points at a __constant__ array, which is
// read-only to kernels. Expected: cudaErrorIllegalAddress and the emulator naming the store to
// the read-only variable (block 0, thread 0). --fixed: the updated coefficients go to a
// __device__ array instead, and both arrays hold the right values afterwards.
#include "fault_common.h"

constexpr int kCoefs = 32;
__constant__ float c_coef[kCoefs];
__device__ float g_coef[kCoefs];

__global__ void k_decay(float rate, int fixed) {
  float* coef = fixed ? g_coef : c_coef;  // the __constant__ array, as a writable-looking pointer
  const int i = threadIdx.x;
  // The planted bug: a kernel cannot write c_coef.
  coef[i] = c_coef[i] * rate;  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  float h[kCoefs];
  for (int i = 0; i < kCoefs; ++i) h[i] = float(i + 1);
  CHECK(cudaMemcpyToSymbol(c_coef, h, sizeof h));
  k_decay<<<1, kCoefs>>>(0.5f, fixed);
  if (!fixed) return verdict("const_write", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  float c[kCoefs], g[kCoefs];
  CHECK(cudaMemcpyFromSymbol(c, c_coef, sizeof c));
  CHECK(cudaMemcpyFromSymbol(g, g_coef, sizeof g));
  for (int i = 0; i < kCoefs; ++i)
    if (c[i] != h[i] || g[i] != 0.5f * h[i])
      return fixed_wrong("const_write", "coefficient %d: constant %g, device %g", i, c[i], g[i]);
  return fixed_ok("const_write");
}
