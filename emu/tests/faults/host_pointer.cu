// Planted bug: a host pointer passed to a kernel. The kernel is given the std::vector's data()
// instead of the device copy, so thread 0 of block 0 loads from host memory the device cannot
// reach. Expected: cudaErrorIllegalAddress and the emulator naming that load. --fixed: the
// device pointer is passed and the results are right.
#include <vector>

#include "fault_common.h"

constexpr int kN = 512;
constexpr int kBlock = 128;

__global__ void k_square(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  // The planted bug: in is a host address.
  if (i < n) out[i] = in[i] * in[i];  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  std::vector<float> h(kN);
  for (int i = 0; i < kN; ++i) h[i] = float(i % 37);
  float *d_in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&d_in, kN * sizeof(float)));
  CHECK(cudaMalloc(&out, kN * sizeof(float)));
  CHECK(cudaMemcpy(d_in, h.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
  k_square<<<kN / kBlock, kBlock>>>(fixed ? d_in : h.data(), out, kN);
  if (!fixed) return verdict("host_pointer", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  std::vector<float> got(kN);
  CHECK(cudaMemcpy(got.data(), out, kN * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i)
    if (got[i] != h[i] * h[i])
      return fixed_wrong("host_pointer", "out[%d] = %g, expected %g", i, got[i], h[i] * h[i]);
  return fixed_ok("host_pointer");
}
