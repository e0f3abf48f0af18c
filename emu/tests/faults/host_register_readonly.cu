// Planted bug: a store to host memory registered read-only. The table is registered with
// cudaHostRegisterReadOnly, which promises the device only reads it, but the kernel updates it
// in place, so thread 0 of block 0 stores to memory the device may not write. Expected:
// cudaErrorIllegalAddress and the emulator naming that store. --fixed: the kernel writes its
// results to device memory instead.
#include <vector>

#include "fault_common.h"

constexpr int kN = 256;
constexpr int kBlock = 128;

__global__ void k_square(const int* table, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  // The planted bug: out is the read-only table itself.
  if (i < n) out[i] = table[i] * table[i];  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  std::vector<int> h(kN);
  for (int i = 0; i < kN; ++i) h[i] = i - 100;
  CHECK(cudaHostRegister(h.data(), kN * sizeof(int), cudaHostRegisterMapped | cudaHostRegisterReadOnly));
  int* table = nullptr;
  CHECK(cudaHostGetDevicePointer((void**)&table, h.data(), 0));
  int* out = nullptr;
  CHECK(cudaMalloc(&out, kN * sizeof(int)));
  k_square<<<kN / kBlock, kBlock>>>(table, fixed ? out : table, kN);
  if (!fixed) return verdict("host_register_readonly", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  std::vector<int> got(kN);
  CHECK(cudaMemcpy(got.data(), out, kN * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i)
    if (got[i] != h[i] * h[i])
      return fixed_wrong("host_register_readonly", "out[%d] = %d, expected %d", i, got[i], h[i] * h[i]);
  CHECK(cudaHostUnregister(h.data()));
  CHECK(cudaFree(out));
  return fixed_ok("host_register_readonly");
}
