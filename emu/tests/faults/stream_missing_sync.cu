// Planted bug: a kernel on a non-blocking stream writes a result, and the program copies it to a
// pageable host buffer with cudaMemcpy without synchronizing the stream first. cudaMemcpy runs on
// the legacy default stream, which does not synchronize with non-blocking streams (the runtime
// API's "Stream synchronization behavior"), so on a GPU the copy may read the buffer before or
// while the kernel writes it, although cudaMemcpy itself returns only when its copy is done.
// Expected: the emulator reports the kernel's write and the copy's read as unordered stream work,
// naming both sides, and cudaMemcpy fails (cudaErrorLaunchFailure). --fixed:
// cudaStreamSynchronize before the copy.
#include <vector>

#include "fault_common.h"

constexpr int kN = 2048, kBlock = 256;

__global__ void square(int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * i;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int* d = nullptr;
  CHECK(cudaMalloc(&d, kN * sizeof(int)));
  std::vector<int> h(kN);  // pageable
  square<<<kN / kBlock, kBlock, 0, s>>>(d, kN);
  CHECK(cudaGetLastError());
  if (fixed) CHECK(cudaStreamSynchronize(s));  // PLANTED: missing without --fixed
  const cudaError_t e = cudaMemcpy(h.data(), d, kN * sizeof(int), cudaMemcpyDeviceToHost);
  if (!fixed) return verdict("stream_missing_sync", e, cudaErrorLaunchFailure);
  CHECK(e);
  for (int i = 0; i < kN; ++i)
    if (h[i] != i * i) return fixed_wrong("stream_missing_sync", "h[%d] = %d, expected %d", i, h[i], i * i);
  CHECK(cudaFree(d));
  CHECK(cudaStreamDestroy(s));
  return fixed_ok("stream_missing_sync");
}
