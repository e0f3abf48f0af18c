// Planted bug: use after free. The input buffer is released with cudaFree before the kernel
// that reads it is launched, so thread 0 of block 0 loads from memory that is no longer
// allocated. Expected: cudaErrorIllegalAddress and the emulator naming that load. --fixed: the
// buffer is freed after the kernel, which then sums correctly.
#include <vector>

#include "fault_common.h"

constexpr int kN = 512;
constexpr int kBlock = 128;

__global__ void k_add_one(const int* in, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  // The planted bug: in was freed before the launch.
  if (i < n) out[i] = in[i] + 1;  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  std::vector<int> h(kN);
  for (int i = 0; i < kN; ++i) h[i] = 7 * i;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, kN * sizeof(int)));
  CHECK(cudaMalloc(&out, kN * sizeof(int)));
  CHECK(cudaMemcpy(in, h.data(), kN * sizeof(int), cudaMemcpyHostToDevice));
  if (!fixed) CHECK(cudaFree(in));  // too early: the kernel below still reads it
  k_add_one<<<kN / kBlock, kBlock>>>(in, out, kN);
  if (!fixed) return verdict("use_after_free", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  CHECK(cudaFree(in));
  std::vector<int> got(kN);
  CHECK(cudaMemcpy(got.data(), out, kN * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i)
    if (got[i] != h[i] + 1)
      return fixed_wrong("use_after_free", "out[%d] = %d, expected %d", i, got[i], h[i] + 1);
  return fixed_ok("use_after_free");
}
