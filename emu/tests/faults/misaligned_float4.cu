// Planted bug: a misaligned float4 load. A vectorized copy reinterprets in + offset as float4*
// for a sub-range that starts at element 1, an address only 4-byte aligned, so thread 0 of
// block 0 issues a 16-byte load at an address 4 bytes past a 16-byte boundary. Expected:
// cudaErrorMisalignedAddress and the emulator naming that load. --fixed: the sub-range starts at
// element 4 (16-byte aligned) and the copy is exact.
#include <vector>

#include "fault_common.h"

constexpr int kVecs = 256;
constexpr int kBlock = 64;

__global__ void k_copy4(const float* in, float4* out, int offset) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float4* src = reinterpret_cast<const float4*>(in + offset);
  // The planted bug: in + 1 is not 16-byte aligned.
  out[i] = src[i];  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  const int offset = fixed ? 4 : 1;
  const int n = kVecs * 4 + 4;  // room for either offset
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = float(i) * 0.5f;
  float* in = nullptr;
  float4* out = nullptr;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&out, kVecs * sizeof(float4)));
  CHECK(cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  k_copy4<<<kVecs / kBlock, kBlock>>>(in, out, offset);
  if (!fixed) return verdict("misaligned_float4", launch_result(), cudaErrorMisalignedAddress);
  CHECK(launch_result());
  std::vector<float> got(kVecs * 4);
  CHECK(cudaMemcpy(got.data(), out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kVecs * 4; ++i)
    if (got[i] != h[offset + i])
      return fixed_wrong("misaligned_float4", "out[%d] = %g, expected %g", i, got[i],
                         h[offset + i]);
  return fixed_ok("misaligned_float4");
}
