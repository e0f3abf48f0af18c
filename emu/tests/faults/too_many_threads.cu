// Planted bug: a launch with 1025 threads per block, one more than any block may have.
// Expected: the launch is refused with cudaErrorInvalidConfiguration before anything runs (so no
// kernel message), and the error is not sticky: cudaGetLastError clears it and the next calls
// succeed. --fixed: 1024 threads, and every thread writes its index.
#include <vector>

#include "fault_common.h"

__global__ void k_iota(int* out) {
  out[threadIdx.x] = int(threadIdx.x);
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  const int threads = fixed ? 1024 : 1025;
  int* out = nullptr;
  CHECK(cudaMalloc(&out, 1025 * sizeof(int)));
  k_iota<<<1, threads>>>(out);  // 1025 is over the limit of 1024 threads per block
  if (!fixed) {
    const int v = verdict("too_many_threads", launch_result(), cudaErrorInvalidConfiguration);
    // launch_result's cudaGetLastError returned the error and cleared it; nothing stays behind.
    if (v == 1 && (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess ||
                   cudaMemset(out, 0, sizeof(int)) != cudaSuccess)) {
      std::fprintf(stderr, "too_many_threads: the refused launch left a sticky error\n");
      return 2;
    }
    return v;
  }
  CHECK(launch_result());
  std::vector<int> got(threads);
  CHECK(cudaMemcpy(got.data(), out, threads * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < threads; ++i)
    if (got[i] != i) return fixed_wrong("too_many_threads", "out[%d] = %d", i, got[i]);
  return fixed_ok("too_many_threads");
}
