// Planted bug: one thread of a block writes a word of a buffer; a warp of another block of the
// same launch waits for the block's flag and reads the buffer's first 32 words, a word per lane.
// The flag is set with no fence before it, so it orders nothing: on a GPU the warp may read the
// word before the write. The checks keep a run read by whole warps as rows of records (one per 16
// words) while no access needed each word's own, and the write needed its word's: this program
// shows the warp's read is checked against it. Built twice: the run read by a warp of the writer's
// block before the write (race_global_rows_after_lane_rows) or untouched before it
// (race_global_rows_after_lane_fresh).
// Expected: the checks report block 1 thread 3's read of word 3 against block 0 thread 3's write
// of it, and the launch fails (cudaErrorLaunchFailure). --fixed: the reads are in the next launch,
// and see the write.
#include "fault_common.h"

constexpr int kWords = 32;

__device__ void read_then_write(int* b, int* out) {
  if (READ_FIRST) out[kWords + threadIdx.x] = b[threadIdx.x];
  __syncwarp();
  if (threadIdx.x == 3) b[3] = -3;  // PARTNER
}

__global__ void k_write_read(int* b, int* out, int* done) {
  if (blockIdx.x == 0) {
    read_then_write(b, out);
    if (threadIdx.x == 3) atomicExch(done, 1);  // no __threadfence() before it
  } else {
    while (atomicAdd(done, 0) == 0) {
    }
    out[threadIdx.x] = b[threadIdx.x];  // PLANTED
  }
}

__global__ void k_write(int* b, int* out) { read_then_write(b, out); }
__global__ void k_read(const int* b, int* out) { out[threadIdx.x] = b[threadIdx.x]; }

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[kWords];
  for (int i = 0; i < kWords; ++i) h[i] = 2 * i;
  int *b = nullptr, *out = nullptr, *done = nullptr;
  CHECK(cudaMalloc(&b, sizeof h));
  CHECK(cudaMalloc(&out, 2 * kWords * sizeof(int)));
  CHECK(cudaMemcpy(b, h, sizeof h, cudaMemcpyHostToDevice));
  if (!fixed) {
    CHECK(cudaMalloc(&done, sizeof(int)));
    CHECK(cudaMemset(done, 0, sizeof(int)));
    k_write_read<<<2, kWords>>>(b, out, done);
    return verdict(FAULT_NAME, launch_result(), cudaErrorLaunchFailure);
  }
  k_write<<<1, kWords>>>(b, out);
  CHECK(launch_result());
  k_read<<<1, kWords>>>(b, out);
  CHECK(launch_result());
  int got[kWords];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kWords; ++i) {
    const int want = i == 3 ? -3 : 2 * i;
    if (got[i] != want) return fixed_wrong(FAULT_NAME, "word %d is %d, expected %d", i, got[i], want);
  }
  CHECK(cudaFree(b));
  CHECK(cudaFree(out));
  return fixed_ok(FAULT_NAME);
}
