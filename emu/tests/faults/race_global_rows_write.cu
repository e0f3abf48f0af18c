// Planted bug: warp 0 of a block writes a buffer of words and, after a barrier, warps 1 and 2 read
// it back, all in whole warps at consecutive addresses; a thread of another block of the same
// launch waits for the block's flag and reads one of the words. The flag is set with no fence
// before it, so it orders nothing: on a GPU the read may see the word before the write. The checks
// keep such a run, written and read by whole warps, as rows of records (one per 16 words) until an
// access needs each word's own; this program shows the write is still known, and whose it is.
// Built twice: the run written once (race_global_rows_write_once), or written again by warp 2
// after a second barrier (race_global_rows_write_twice).
// Expected: the checks report block 1's read of word 21 against block 0's last write of it, by
// thread 21 (once: warp 0, lane 21) or thread 85 (twice: warp 2, lane 21), and the launch fails
// (cudaErrorLaunchFailure). --fixed: the read is in the next launch, and sees the last write.
#include "fault_common.h"

constexpr int kWords = 32, kWrites = WRITES;

// Block 0, three warps: warp 0 writes the words, warps 1 and 2 read them, and in a second round
// warp 2 writes them again.
__device__ void write_read(int* b, int* out) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int round = 0; round < kWrites; ++round) {
    if (warp == 2 * round) b[lane] = (round + 1) * lane;  // PARTNER
    __syncthreads();
    if (round == 0 && warp > 0) out[(warp - 1) * kWords + lane] = b[lane];
    __syncthreads();
  }
}

__global__ void k_rows_read(int* b, int* out, int* seen, int* done) {
  if (blockIdx.x == 0) {
    write_read(b, out);
    if (threadIdx.x == 0) atomicExch(done, 1);  // no __threadfence() before it
  } else if (threadIdx.x == 0) {
    while (atomicAdd(done, 0) == 0) {
    }
    *seen = b[21];  // PLANTED
  }
}

__global__ void k_rows(int* b, int* out) { write_read(b, out); }
__global__ void k_read(const int* b, int* seen) { *seen = b[21]; }

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int *b = nullptr, *out = nullptr, *seen = nullptr, *done = nullptr;
  CHECK(cudaMalloc(&b, kWords * sizeof(int)));
  CHECK(cudaMalloc(&out, 2 * kWords * sizeof(int)));
  CHECK(cudaMalloc(&seen, sizeof(int)));
  if (!fixed) {
    CHECK(cudaMalloc(&done, sizeof(int)));
    CHECK(cudaMemset(done, 0, sizeof(int)));
    k_rows_read<<<2, 96>>>(b, out, seen, done);
    return verdict(FAULT_NAME, launch_result(), cudaErrorLaunchFailure);
  }
  k_rows<<<1, 96>>>(b, out);
  CHECK(launch_result());
  k_read<<<1, 1>>>(b, seen);
  CHECK(launch_result());
  int got[2 * kWords], last = 0;
  CHECK(cudaMemcpy(got, out, sizeof(got), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&last, seen, sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 2 * kWords; ++i)
    if (got[i] != i % kWords) return fixed_wrong(FAULT_NAME, "read %d is %d, expected %d", i, got[i], i % kWords);
  if (last != kWrites * 21) return fixed_wrong(FAULT_NAME, "word 21 is %d, expected %d", last, kWrites * 21);
  CHECK(cudaFree(b));
  CHECK(cudaFree(out));
  CHECK(cudaFree(seen));
  return fixed_ok(FAULT_NAME);
}
