// Planted bug: one warp of a block writes a buffer of words and, after a barrier, another warp
// reads them back, both whole warps at consecutive addresses; a thread of another block of the same
// launch waits for the block's flag and reads one of the words. The flag is set with no fence
// before it, so it orders nothing: on a GPU the read may see the word before the write. The checks
// keep such a run, written then read, as rows of records (one per 16 words) until an access needs
// each word's own; this program shows the write is still known, and whose it is.
// Expected: the checks report block 1's read of word 21 against block 0 thread 21's write of it,
// and the launch fails (cudaErrorLaunchFailure). --fixed: the read is in the next launch, and sees
// the write.
#include "fault_common.h"

constexpr int kWords = 32;

// Block 0, two warps: warp 0 writes the words, warp 1 reads them.
__device__ void write_read(int* b, int* out) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp == 0) b[lane] = 7 * lane;  // PARTNER
  __syncthreads();
  if (warp == 1) out[lane] = b[lane];
}

__global__ void k_written_read(int* b, int* out, int* seen, int* done) {
  if (blockIdx.x == 0) {
    write_read(b, out);
    __syncthreads();
    if (threadIdx.x == 0) atomicExch(done, 1);  // no __threadfence() before it
  } else if (threadIdx.x == 0) {
    while (atomicAdd(done, 0) == 0) {
    }
    *seen = b[21];  // PLANTED
  }
}

__global__ void k_written(int* b, int* out) { write_read(b, out); }
__global__ void k_read(const int* b, int* seen) { *seen = b[21]; }

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int *b = nullptr, *out = nullptr, *seen = nullptr, *done = nullptr;
  CHECK(cudaMalloc(&b, kWords * sizeof(int)));
  CHECK(cudaMalloc(&out, kWords * sizeof(int)));
  CHECK(cudaMalloc(&seen, sizeof(int)));
  if (!fixed) {
    CHECK(cudaMalloc(&done, sizeof(int)));
    CHECK(cudaMemset(done, 0, sizeof(int)));
    k_written_read<<<2, 64>>>(b, out, seen, done);
    return verdict("race_global_rows_written", launch_result(), cudaErrorLaunchFailure);
  }
  k_written<<<1, 64>>>(b, out);
  CHECK(launch_result());
  k_read<<<1, 1>>>(b, seen);
  CHECK(launch_result());
  int got[kWords], last = 0;
  CHECK(cudaMemcpy(got, out, sizeof(got), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&last, seen, sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kWords; ++i)
    if (got[i] != 7 * i) return fixed_wrong("race_global_rows_written", "read %d is %d, expected %d", i, got[i], 7 * i);
  if (last != 7 * 21) return fixed_wrong("race_global_rows_written", "word 21 is %d, expected %d", last, 7 * 21);
  CHECK(cudaFree(b));
  CHECK(cudaFree(out));
  CHECK(cudaFree(seen));
  return fixed_ok("race_global_rows_written");
}
