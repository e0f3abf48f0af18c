// Planted bug: device memory never freed. Two buffers are allocated and used; the program ends
// without cudaFree. A GPU does not mind (the driver reclaims the context), but in a long-running
// program the same mistake inside a loop exhausts the device.
// Expected: at exit the emulator lists both allocations (4096 and 1000 bytes); with
// GPU100_EMU_CHECK=...,leaks-fail the exit status becomes 1, with leaks alone it stays 0.
// --fixed: both buffers are freed and nothing is reported.
#include "fault_common.h"

__global__ void k_iota(int* a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = i;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int *a = nullptr, *b = nullptr;
  CHECK(cudaMalloc(&a, 4096));
  CHECK(cudaMalloc(&b, 1000));
  k_iota<<<8, 128>>>(a, 1024);
  k_iota<<<2, 128>>>(b, 250);
  CHECK(launch_result());
  if (!fixed) {
    std::fprintf(stderr, "leak: two buffers left allocated\n");
    return 0;
  }
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  return fixed_ok("leak");
}
