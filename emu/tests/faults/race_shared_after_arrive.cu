// Planted bug: a warp hands shared words to another warp through a named barrier, but reads them
// after its bar.arrive: the arrive orders only what the arriving warp did before it, so on a GPU the
// other warp, released by it, may overwrite the words before they are read. (The checks leave a
// whole warp's reads between two barriers of the block unrecorded until something else touches
// shared memory; this program shows a read made after the warp arrived at a barrier keeps the
// clock it was made at.)
// Expected: the checks report thread 0 writing a word against a read of it by thread 32, and the
// launch fails (cudaErrorLaunchFailure). --fixed: the reading warp reads before it arrives, and
// reads the words as they were.
#include "fault_common.h"

constexpr int kWarpSize = 32;

__global__ void k_handoff(const int* in, int* out, int fixed) {
  __shared__ int s[kWarpSize];
  const int t = threadIdx.x, lane = t % kWarpSize, warp = t / kWarpSize;
  if (warp == 0) s[lane] = in[lane];
  __syncthreads();
  if (warp == 1) {
    int v = 0;
    if (fixed) v = s[lane];
    asm volatile("bar.arrive 1, 64;" ::: "memory");
    if (!fixed) v = s[lane];  // PARTNER
    out[lane] = v;
  } else {
    asm volatile("bar.sync 1, 64;" ::: "memory");
    s[lane] = -1;  // PLANTED
  }
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[kWarpSize];
  for (int i = 0; i < kWarpSize; ++i) h[i] = 3 * i + 1;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_handoff<<<1, 2 * kWarpSize>>>(in, out, fixed);
  if (!fixed) return verdict("race_shared_after_arrive", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got[kWarpSize];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kWarpSize; ++i)
    if (got[i] != h[i]) return fixed_wrong("race_shared_after_arrive", "word %d is %d, expected %d", i, got[i], h[i]);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("race_shared_after_arrive");
}
