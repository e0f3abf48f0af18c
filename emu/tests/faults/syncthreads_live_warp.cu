// Planted bug: __syncthreads() where only part of the block can come. A warp-specialized kernel:
// warps 2-3 produce a tile into shared memory, warps 0-1 consume it. Producers announce the tile
// on named barrier 1 (bar.arrive) and wait on named barrier 2 until the consumers are done with
// it; the consumers wait on barrier 1, read, and should announce on barrier 2 (bar.arrive) but
// were written with __syncthreads(), which waits for every thread of the block that has not
// exited, producers included, while the producers wait on barrier 2. Expected:
// cudaErrorLaunchFailure and the emulator's deadlock explanation: barrier 0 waits for the whole
// block, no thread has exited, only the consumers arrive. --fixed: the consumers arrive on
// barrier 2, and the tile comes out reversed.

#include "fault_common.h"

constexpr int kThreads = 128;
constexpr int kTile = 64;

__global__ void k_produce_consume(const int* in, int* out, int fixed) {
  __shared__ int tile[kTile];
  const int t = threadIdx.x;
  if (t >= kTile) {  // producers, warps 2-3
    tile[t - kTile] = in[t - kTile] * 3;
    asm volatile("bar.arrive 1, 128;" ::: "memory");
    asm volatile("bar.sync 2, 128;" ::: "memory");
  } else {  // consumers, warps 0-1
    asm volatile("bar.sync 1, 128;" ::: "memory");
    out[t] = tile[kTile - 1 - t];
    if (fixed) asm volatile("bar.arrive 2, 128;" ::: "memory");
    else __syncthreads();  // PLANTED
  }
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[kTile];
  for (int i = 0; i < kTile; ++i) h[i] = 11 * i - 300;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_produce_consume<<<1, kThreads>>>(in, out, fixed);
  if (!fixed) return verdict("syncthreads_live_warp", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got[kTile];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int t = 0; t < kTile; ++t)
    if (got[t] != 3 * h[kTile - 1 - t])
      return fixed_wrong("syncthreads_live_warp", "out[%d] = %d, expected %d", t, got[t], 3 * h[kTile - 1 - t]);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("syncthreads_live_warp");
}
