// Planted bug: a load past the end of registered host memory. The program registers (and maps)
// the first 1000 floats of a larger host array with cudaHostRegister, but the kernel reads 1001
// through the device pointer, so thread 104 of block 7 (element 1000) loads a float the device
// was never given, though it is the program's own memory. Expected: cudaErrorIllegalAddress and
// the emulator naming that load and the registered range. --fixed: 1000 elements.
#include <vector>

#include "fault_common.h"

constexpr int kN = 1000;
constexpr int kBlock = 128;

__global__ void k_double(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  // The planted bug: n runs one past the registered range.
  if (i < n) out[i] = 2.0f * in[i];  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  std::vector<float> h(kN + 24);
  for (int i = 0; i < kN + 24; ++i) h[i] = float(i % 97);
  CHECK(cudaHostRegister(h.data(), kN * sizeof(float), cudaHostRegisterMapped));
  float* in = nullptr;
  CHECK(cudaHostGetDevicePointer((void**)&in, h.data(), 0));
  float* out = nullptr;
  CHECK(cudaMalloc(&out, (kN + 1) * sizeof(float)));
  const int n = fixed ? kN : kN + 1;
  k_double<<<(n + kBlock - 1) / kBlock, kBlock>>>(in, out, n);
  if (!fixed) return verdict("host_register_oob", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  std::vector<float> got(kN);
  CHECK(cudaMemcpy(got.data(), out, kN * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i)
    if (got[i] != 2.0f * h[i])
      return fixed_wrong("host_register_oob", "out[%d] = %g, expected %g", i, got[i], 2.0f * h[i]);
  CHECK(cudaHostUnregister(h.data()));
  CHECK(cudaFree(out));
  return fixed_ok("host_register_oob");
}
