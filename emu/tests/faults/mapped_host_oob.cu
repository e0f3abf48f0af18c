// Planted bug: a store past the end of mapped pinned host memory. The buffer comes from
// cudaHostAlloc with cudaHostAllocMapped and the kernel writes it through the device pointer
// cudaHostGetDevicePointer returned, but it is told one element more than was allocated, so
// thread 104 of block 7 (element 1000) stores just past the end. Expected:
// cudaErrorIllegalAddress and the emulator naming that store and the host allocation. --fixed:
// the right count, and the host reads every result in place.
#include "fault_common.h"

constexpr int kN = 1000;
constexpr int kBlock = 128;

__global__ void k_ramp(int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  // The planted bug: n is one more than the buffer holds.
  if (i < n) out[i] = 2 * i + 1;  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int* host = nullptr;
  CHECK(cudaHostAlloc(&host, kN * sizeof(int), cudaHostAllocMapped));
  int* dev = nullptr;
  CHECK(cudaHostGetDevicePointer((void**)&dev, host, 0));
  const int n = fixed ? kN : kN + 1;
  k_ramp<<<(n + kBlock - 1) / kBlock, kBlock>>>(dev, n);
  if (!fixed) return verdict("mapped_host_oob", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  for (int i = 0; i < kN; ++i)
    if (host[i] != 2 * i + 1) return fixed_wrong("mapped_host_oob", "host[%d] = %d, expected %d", i, host[i], 2 * i + 1);
  CHECK(cudaFreeHost(host));
  return fixed_ok("mapped_host_oob");
}
