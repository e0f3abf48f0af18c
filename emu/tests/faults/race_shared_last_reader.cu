// Planted bug: a warp's last lane reads a shared running total, the whole warp then reads it to
// offset its outputs, and the last lane advances it with no __syncwarp() between. Lanes of a warp
// are not ordered by running together: lane 30's read races with lane 31's write. (The checks settle
// a warp's reads of one word together; when the word's first read slot already holds the last
// lane's earlier read, the lane before it is the one kept beside it.)
// Expected: the checks report lane 31's write against lane 30's read, and the launch fails
// (cudaErrorLaunchFailure). --fixed: __syncwarp() before the write, and the outputs are the ones
// expected.
#include "fault_common.h"

constexpr int kWarpSize = 32, kLast = kWarpSize - 1;

__global__ void k_offsets(const int* in, int* out, int fixed) {
  __shared__ int total[2];  // the running total, and a word only an impossible peek would read
  const int lane = threadIdx.x;
  if (lane == 0) total[0] = in[0];
  __syncthreads();
  int mine = 0;
  if (lane == kLast) mine = *(volatile int*)&total[0];
  const int base = total[mine == -1 ? 1 : 0];  // PARTNER (after the last lane's read: its address depends on it)
  if (fixed) __syncwarp();
  if (lane == kLast) total[0] = mine + kWarpSize;  // PLANTED
  out[lane] = base + lane;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  const int start = 40;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof start));
  CHECK(cudaMalloc(&out, kWarpSize * sizeof(int)));
  CHECK(cudaMemcpy(in, &start, sizeof start, cudaMemcpyHostToDevice));
  k_offsets<<<1, kWarpSize>>>(in, out, fixed);
  if (!fixed) return verdict("race_shared_last_reader", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got[kWarpSize];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kWarpSize; ++i)
    if (got[i] != start + i) return fixed_wrong("race_shared_last_reader", "lane %d got %d, expected %d", i, got[i], start + i);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("race_shared_last_reader");
}
