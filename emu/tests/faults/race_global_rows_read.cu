// Planted bug: three warps of a block read a buffer of words, unordered with one another, then
// one of them reads it again after a barrier, all in whole warps at consecutive addresses; a thread
// of another block of the same launch waits for the block's flag and overwrites one of the words.
// The flag is set with no fence before it, so it orders nothing: on a GPU a reader that runs late
// reads the new word. The checks keep two of a word's unordered readers, as rows of records (one
// per 16 words) while whole warps read the run; this program shows a later write of one word is
// checked against the right threads.
// Expected: the checks report block 1's write of word 21 against a read of it by block 0 thread
// 21, 53 or 85 (lane 21 of a warp), and the launch fails (cudaErrorLaunchFailure). --fixed: the
// write is in the next launch, and every read sees the words as they were copied.
#include "fault_common.h"

constexpr int kWords = 32;

// Block 0, three warps: each reads the words, then warp 1 reads them again.
__device__ void read_twice(const int* b, int* out) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int round = 0; round < 2; ++round) {
    if (round == 0 || warp == 1) out[(round ? 3 : warp) * kWords + lane] = b[lane];  // PARTNER
    __syncthreads();
  }
}

__global__ void k_reads_write(int* b, int* out, int* done) {
  if (blockIdx.x == 0) {
    read_twice(b, out);
    if (threadIdx.x == 0) atomicExch(done, 1);  // no __threadfence() before it
  } else if (threadIdx.x == 0) {
    while (atomicAdd(done, 0) == 0) {
    }
    b[21] = -1;  // PLANTED
  }
}

__global__ void k_reads(const int* b, int* out) { read_twice(b, out); }
__global__ void k_write(int* b) { b[21] = -1; }

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int *b = nullptr, *out = nullptr, *done = nullptr;
  int h[kWords];
  for (int i = 0; i < kWords; ++i) h[i] = 3 * i;
  CHECK(cudaMalloc(&b, kWords * sizeof(int)));
  CHECK(cudaMalloc(&out, 4 * kWords * sizeof(int)));
  CHECK(cudaMemcpy(b, h, sizeof(h), cudaMemcpyHostToDevice));
  if (!fixed) {
    CHECK(cudaMalloc(&done, sizeof(int)));
    CHECK(cudaMemset(done, 0, sizeof(int)));
    k_reads_write<<<2, 96>>>(b, out, done);
    return verdict("race_global_rows_read", launch_result(), cudaErrorLaunchFailure);
  }
  k_reads<<<1, 96>>>(b, out);
  CHECK(launch_result());
  k_write<<<1, 1>>>(b);
  CHECK(launch_result());
  int got[4 * kWords];
  CHECK(cudaMemcpy(got, out, sizeof(got), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 4 * kWords; ++i)
    if (got[i] != 3 * (i % kWords))
      return fixed_wrong("race_global_rows_read", "read %d is %d, expected %d", i, got[i], 3 * (i % kWords));
  CHECK(cudaFree(b));
  CHECK(cudaFree(out));
  return fixed_ok("race_global_rows_read");
}
