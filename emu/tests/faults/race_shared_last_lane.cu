// Planted bug: a warp reads a pair of shared words, every lane the first but the last lane, which
// reads the second (a count kept beside the data); then lane 0 overwrites the count with no
// __syncwarp() between. Lanes of a warp are not ordered by running together: lane 31's read races
// with lane 0's write. (The checks settle a warp's reads of runs of one word together; this
// program shows a run of one lane at the warp's end is still seen.)
// Expected: the checks report lane 0's write against lane 31's read, and the launch fails
// (cudaErrorLaunchFailure). --fixed: __syncwarp() before the write, and the outputs are the ones
// expected.
#include "fault_common.h"

constexpr int kWarpSize = 32, kLast = kWarpSize - 1;

__global__ void k_count(const int* in, int* out, int fixed) {
  __shared__ int s[2];  // the value, and its count
  const int lane = threadIdx.x;
  if (lane < 2) s[lane] = in[lane];
  __syncthreads();
  const int v = s[lane == kLast ? 1 : 0];  // PARTNER
  if (fixed) __syncwarp();
  if (lane == 0) s[1] = v + 1;  // PLANTED
  out[lane] = v;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  const int h[2] = {11, 3};
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, kWarpSize * sizeof(int)));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_count<<<1, kWarpSize>>>(in, out, fixed);
  if (!fixed) return verdict("race_shared_last_lane", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got[kWarpSize];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kWarpSize; ++i) {
    const int want = h[i == kLast ? 1 : 0];
    if (got[i] != want) return fixed_wrong("race_shared_last_lane", "lane %d got %d, expected %d", i, got[i], want);
  }
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("race_shared_last_lane");
}
