// Planted bug: two non-blocking streams, the second reading what the first writes, with the
// event wait between them left out. The first stream records an event after its producer, but
// the consumer's stream never waits for it (cudaStreamWaitEvent), so on a GPU the consumer may
// run before or during the producer and read stale values.
// Expected: the emulator reports the producer's write and the consumer's read as unordered stream
// work, naming both kernels, their launches and streams, and the program fails
// (cudaErrorLaunchFailure at the next synchronization). --fixed: the wait is there.
#include <vector>

#include "fault_common.h"

constexpr int kN = 1024, kBlock = 128;

__global__ void producer(int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 3 * i;
}
__global__ void consumer(const int* in, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + 1;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  cudaStream_t s1, s2;
  CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t produced;
  CHECK(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming));
  int *a = nullptr, *b = nullptr;
  CHECK(cudaMalloc(&a, kN * sizeof(int)));
  CHECK(cudaMalloc(&b, kN * sizeof(int)));
  producer<<<kN / kBlock, kBlock, 0, s1>>>(a, kN);
  CHECK(cudaEventRecord(produced, s1));
  if (fixed) CHECK(cudaStreamWaitEvent(s2, produced, 0));  // PLANTED: missing without --fixed
  consumer<<<kN / kBlock, kBlock, 0, s2>>>(a, b, kN);
  if (!fixed) return verdict("stream_missing_wait", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  std::vector<int> got(kN);
  CHECK(cudaMemcpy(got.data(), b, kN * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i)
    if (got[i] != 3 * i + 1) return fixed_wrong("stream_missing_wait", "b[%d] = %d, expected %d", i, got[i], 3 * i + 1);
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaEventDestroy(produced));
  CHECK(cudaStreamDestroy(s1));
  CHECK(cudaStreamDestroy(s2));
  return fixed_ok("stream_missing_wait");
}
