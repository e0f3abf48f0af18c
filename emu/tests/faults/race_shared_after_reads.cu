// Planted bug: two warps of a block read shared words and another overwrites them, with no
// __syncthreads() between the reads and the write: on a GPU a reading warp that runs late reads
// the new words. (The checks settle a warp's writes of words nothing has touched since the
// block's last barrier together; this program shows a write after unordered reads is still
// checked against them.)
// Expected: the checks report a thread of warp 0 writing a word against a read of it by a thread
// of warp 2 (the emulator runs warp 2 on first, as the last warp at the barrier), and the launch fails (cudaErrorLaunchFailure). --fixed: __syncthreads() between the
// reads and the write, and the readers see the words as they were.
#include "fault_common.h"

constexpr int kWarpSize = 32;

__global__ void k_reuse(const int* in, int* out, int fixed) {
  __shared__ int s[kWarpSize];
  const int t = threadIdx.x, lane = t % kWarpSize, warp = t / kWarpSize;
  if (warp == 0) s[lane] = in[lane];
  __syncthreads();
  if (warp > 0) out[t - kWarpSize] = s[lane] + warp;  // PARTNER
  if (fixed) __syncthreads();
  if (warp == 0) s[lane] = -1;  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[kWarpSize];
  for (int i = 0; i < kWarpSize; ++i) h[i] = 5 * i + 2;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, 2 * sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_reuse<<<1, 3 * kWarpSize>>>(in, out, fixed);
  if (!fixed) return verdict("race_shared_after_reads", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got[2 * kWarpSize];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 2 * kWarpSize; ++i)
    if (got[i] != h[i % kWarpSize] + 1 + i / kWarpSize)
      return fixed_wrong("race_shared_after_reads", "word %d is %d, expected %d", i, got[i], h[i % kWarpSize] + 1 + i / kWarpSize);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("race_shared_after_reads");
}
