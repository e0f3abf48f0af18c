// Planted bug: an off-by-one bound. The guard says i <= n, so the thread just past the last
// element (block 3, thread 232 of 4 x 256 threads over n = 1000) loads in[n], one float past the
// end of a cudaMalloc buffer. Expected: cudaErrorIllegalAddress and the emulator naming that
// load. --fixed: the same kernel with i < n must run clean and scale every element.
#include <vector>

#include "fault_common.h"

constexpr int kN = 1000;  // not a multiple of the block: the last block has idle threads
constexpr int kBlock = 256;

__global__ void k_scale(const float* in, float* out, int n, int fixed) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const bool inside = fixed ? i < n : i <= n;
  // The planted bug: i == n reads past the end.
  if (inside) out[i] = 2.0f * in[i];  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  std::vector<float> h(kN);
  for (int i = 0; i < kN; ++i) h[i] = float(i);
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, kN * sizeof(float)));
  CHECK(cudaMalloc(&out, kN * sizeof(float)));
  CHECK(cudaMemcpy(in, h.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
  k_scale<<<(kN + kBlock - 1) / kBlock, kBlock>>>(in, out, kN, fixed);
  if (!fixed) return verdict("oob_load", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  std::vector<float> got(kN);
  CHECK(cudaMemcpy(got.data(), out, kN * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i)
    if (got[i] != 2.0f * float(i))
      return fixed_wrong("oob_load", "out[%d] = %g, expected %g", i, got[i], 2.0 * i);
  return fixed_ok("oob_load");
}
