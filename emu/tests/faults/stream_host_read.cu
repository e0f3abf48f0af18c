// Planted bug: a copy to pinned host memory queued on a non-blocking stream, and host code that
// reads the buffer without synchronizing the stream. cudaMemcpyAsync to pinned memory returns
// before the copy has run (the runtime API's "API synchronization behavior"), so on a GPU the
// host may read the buffer before the copy has written it.
// Expected: the emulator reports the host's read of the buffer, naming the queued copy and its
// stream, and the next runtime call fails (cudaErrorLaunchFailure). --fixed:
// cudaStreamSynchronize before the read.
#include "fault_common.h"

constexpr int kN = 1024, kBlock = 128;

__global__ void triple(int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 3 * i;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int* d = nullptr;
  int* h = nullptr;
  CHECK(cudaMalloc(&d, kN * sizeof(int)));
  CHECK(cudaMallocHost(&h, kN * sizeof(int)));
  triple<<<kN / kBlock, kBlock, 0, s>>>(d, kN);
  CHECK(cudaMemcpyAsync(h, d, kN * sizeof(int), cudaMemcpyDeviceToHost, s));
  if (fixed) CHECK(cudaStreamSynchronize(s));
  long sum = 0;
  for (int i = 0; i < kN; ++i) sum += h[i];  // PLANTED: without --fixed, read before the copy ran
  const cudaError_t e = cudaStreamSynchronize(s);
  if (!fixed) return verdict("stream_host_read", e, cudaErrorLaunchFailure);
  CHECK(e);
  if (sum != 3L * kN * (kN - 1) / 2) return fixed_wrong("stream_host_read", "sum %ld, expected %ld", sum, 3L * kN * (kN - 1) / 2);
  CHECK(cudaFreeHost(h));
  CHECK(cudaFree(d));
  CHECK(cudaStreamDestroy(s));
  return fixed_ok("stream_host_read");
}
