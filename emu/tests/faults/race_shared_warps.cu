// Planted bug: a block stages words in shared memory, one warp writing them and another reading
// them, with no __syncthreads() between: nothing orders warp 1's stores before warp 0's loads, and
// on a GPU warp 0 reads stale words whenever it runs ahead. (The checks settle a warp's reads of
// words written before the block's last barrier together; this program shows a read of a word
// written since is still checked.)
// Expected: the checks report a thread of warp 0 reading a word against the thread of warp 1 that
// wrote it (the emulator runs warp 1 on first, as the last warp at the barrier), and the launch fails (cudaErrorLaunchFailure). --fixed: __syncthreads() between the
// stores and the loads, and every word read is the one written.
#include "fault_common.h"

constexpr int kWarpSize = 32;

__global__ void k_stage(const int* in, int* out, int fixed) {
  __shared__ int s[kWarpSize];
  const int t = threadIdx.x, lane = t % kWarpSize;
  if (t >= kWarpSize) s[lane] = 0;
  __syncthreads();
  if (t >= kWarpSize) s[lane] = in[lane];  // PARTNER
  if (fixed) __syncthreads();
  if (t < kWarpSize) out[lane] = s[lane] + 1;  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[kWarpSize];
  for (int i = 0; i < kWarpSize; ++i) h[i] = 7 * i - 3;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_stage<<<1, 2 * kWarpSize>>>(in, out, fixed);
  if (!fixed) return verdict("race_shared_warps", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got[kWarpSize];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kWarpSize; ++i)
    if (got[i] != h[i] + 1) return fixed_wrong("race_shared_warps", "word %d is %d, expected %d", i, got[i], h[i] + 1);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("race_shared_warps");
}
