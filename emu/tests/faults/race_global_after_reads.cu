// Planted bug: two blocks read a buffer a word per thread (whole warps, consecutive addresses)
// and, in the same launch, a third block overwrites it. Nothing orders the reads before the
// write: on a GPU a reader that runs late reads the new words. Two unordered readers of a word are
// both kept by the checks (the word's shadow grows to hold them); this program shows a later
// whole-warp write is still checked against them.
// Expected: the checks report block 2's write of a word against block 0's read of it, and the
// launch fails (cudaErrorLaunchFailure). --fixed: the reads and the write are separate launches,
// and the readers see the words as they were.
#include "fault_common.h"

constexpr int kWords = 64;

__global__ void k_reads(const int* b, int* out) {
  out[blockIdx.x * kWords + threadIdx.x] = b[threadIdx.x] + 1;
}

__global__ void k_write(int* b) { b[threadIdx.x] = -1; }

// Blocks 0 and 1 read the words, block 2 overwrites them.
__global__ void k_reads_write(int* b, int* out) {
  if (blockIdx.x < 2) out[blockIdx.x * kWords + threadIdx.x] = b[threadIdx.x] + 1;  // PARTNER
  else b[threadIdx.x] = -1;  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int *b = nullptr, *out = nullptr;
  int h[kWords];
  for (int i = 0; i < kWords; ++i) h[i] = 5 * i;
  CHECK(cudaMalloc(&b, kWords * sizeof(int)));
  CHECK(cudaMalloc(&out, 2 * kWords * sizeof(int)));
  CHECK(cudaMemcpy(b, h, sizeof(h), cudaMemcpyHostToDevice));
  if (!fixed) {
    k_reads_write<<<3, kWords>>>(b, out);
    return verdict("race_global_after_reads", launch_result(), cudaErrorLaunchFailure);
  }
  k_reads<<<2, kWords>>>(b, out);
  CHECK(launch_result());
  k_write<<<1, kWords>>>(b);
  CHECK(launch_result());
  int got[2 * kWords];
  CHECK(cudaMemcpy(got, out, sizeof(got), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 2 * kWords; ++i)
    if (got[i] != 5 * (i % kWords) + 1)
      return fixed_wrong("race_global_after_reads", "word %d is %d, expected %d", i, got[i], 5 * (i % kWords) + 1);
  CHECK(cudaFree(b));
  CHECK(cudaFree(out));
  return fixed_ok("race_global_after_reads");
}
