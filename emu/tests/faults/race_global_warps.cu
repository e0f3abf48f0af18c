// Planted bug: one block writes a buffer a word per thread, whole warps at consecutive addresses,
// and in the same launch another block reads those words. Nothing orders block 0's writes before
// block 1's reads: a race across blocks, which reads stale words on a GPU whenever block 1 runs
// first or alongside. (The checks settle such whole-warp accesses of consecutive words together;
// this program shows they still see the race.)
// Expected: the checks report block 1's read of a word against block 0's write of it, and the
// launch fails (cudaErrorLaunchFailure). --fixed: the words are written by one launch and read by
// the next, and every word read is the one written.
#include "fault_common.h"

constexpr int kWords = 64;

__global__ void k_write(int* b) { b[threadIdx.x] = 3 * threadIdx.x + 1; }

__global__ void k_read(const int* b, int* out) { out[threadIdx.x] = b[threadIdx.x] + 1; }

// Block 0 writes the words, block 1 reads them.
__global__ void k_write_read(int* b, int* out) {
  if (blockIdx.x == 0) b[threadIdx.x] = 3 * threadIdx.x + 1;  // PARTNER
  else out[threadIdx.x] = b[threadIdx.x] + 1;  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int *b = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&b, kWords * sizeof(int)));
  CHECK(cudaMalloc(&out, kWords * sizeof(int)));
  CHECK(cudaMemset(b, 0, kWords * sizeof(int)));
  if (!fixed) {
    k_write_read<<<2, kWords>>>(b, out);
    return verdict("race_global_warps", launch_result(), cudaErrorLaunchFailure);
  }
  k_write<<<1, kWords>>>(b);
  CHECK(launch_result());
  k_read<<<1, kWords>>>(b, out);
  CHECK(launch_result());
  int got[kWords];
  CHECK(cudaMemcpy(got, out, sizeof(got), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kWords; ++i)
    if (got[i] != 3 * i + 2) return fixed_wrong("race_global_warps", "word %d is %d, expected %d", i, got[i], 3 * i + 2);
  CHECK(cudaFree(b));
  CHECK(cudaFree(out));
  return fixed_ok("race_global_warps");
}
