// Planted bug: a warp reads a pair of shared words, lanes 0-15 the first and lanes 16-31 the
// second, after lane 20 has looked at the first word too; then lane 0 overwrites the first word
// with no __syncwarp() between. Lanes of a warp are not ordered by running together: lane 20's read
// races with lane 0's write. (The checks settle a warp's reads of runs of one word together, the
// word's earlier reader of this epoch kept; this program shows lane 20's read is still seen.)
// Expected: the checks report lane 0's write against lane 20's read, and the launch fails
// (cudaErrorLaunchFailure). --fixed: __syncwarp() before the write, and the sums are the ones
// expected.
#include "fault_common.h"

constexpr int kWarpSize = 32, kPeeker = 20;

__global__ void k_pairs(const int* in, int* out, int fixed) {
  __shared__ int s[3];  // the pair, and a word only an impossible peek would read
  const int lane = threadIdx.x;
  if (lane < 2) s[lane] = in[lane];
  __syncthreads();
  int peek = 0;
  if (lane == kPeeker) peek = *(volatile int*)&s[0];  // PARTNER
  const int v = s[lane / 16 + (peek == -1 ? 1 : 0)];  // after the peek: its address depends on it
  if (fixed) __syncwarp();
  if (lane == 0) s[0] = v + 1;  // PLANTED
  out[lane] = v + peek;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  const int h[2] = {5, 9};
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, kWarpSize * sizeof(int)));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_pairs<<<1, kWarpSize>>>(in, out, fixed);
  if (!fixed) return verdict("race_shared_runs", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got[kWarpSize];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kWarpSize; ++i) {
    const int want = h[i / 16] + (i == kPeeker ? h[0] : 0);
    if (got[i] != want) return fixed_wrong("race_shared_runs", "lane %d got %d, expected %d", i, got[i], want);
  }
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("race_shared_runs");
}
