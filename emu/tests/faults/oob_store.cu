// Planted bug: a store before the start of a buffer. The kernel shifts an array left by one,
// out[i - 1] = in[i], but its first index is 0 instead of 1, so thread 0 of block 0 stores
// out[-1], 4 bytes before a cudaMalloc buffer. Expected: cudaErrorIllegalAddress and the
// emulator naming that store. --fixed: the loop starts at 1 and every element lands in place.
#include <vector>

#include "fault_common.h"

constexpr int kN = 1000;
constexpr int kBlock = 256;

__global__ void k_shift_left(const float* in, float* out, int n, int first) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  // The planted bug: first = 0 stores out[-1].
  if (i >= first && i < n) out[i - 1] = in[i];  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  std::vector<float> h(kN);
  for (int i = 0; i < kN; ++i) h[i] = float(3 * i);
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, kN * sizeof(float)));
  CHECK(cudaMalloc(&out, (kN - 1) * sizeof(float)));  // n - 1 results
  CHECK(cudaMemcpy(in, h.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
  k_shift_left<<<(kN + kBlock - 1) / kBlock, kBlock>>>(in, out, kN, fixed ? 1 : 0);
  if (!fixed) return verdict("oob_store", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  std::vector<float> got(kN - 1);
  CHECK(cudaMemcpy(got.data(), out, (kN - 1) * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN - 1; ++i)
    if (got[i] != h[i + 1])
      return fixed_wrong("oob_store", "out[%d] = %g, expected %g", i, got[i], h[i + 1]);
  return fixed_ok("oob_store");
}
