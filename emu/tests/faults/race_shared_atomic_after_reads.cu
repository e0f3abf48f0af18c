// Planted bug: a warp reads shared counters while another warp adds to them atomically, with no
// __syncthreads() between: an atomic orders nothing against plain reads, so on a GPU the reader
// may see a count before or after the add. (The checks leave a whole warp's reads between two
// barriers of the block unrecorded until something else touches shared memory; this program shows
// an atomic, checked lane by lane, still meets the reads before it.)
// Expected: the checks report thread 0's atomic against a read of its word by thread 32, and the
// launch fails (cudaErrorLaunchFailure). --fixed: __syncthreads() between the reads and the adds,
// and the reader sees the counts before the adds.
#include "fault_common.h"

constexpr int kWarpSize = 32;

__global__ void k_counts(const int* in, int* out, int fixed) {
  __shared__ int s[kWarpSize];
  const int t = threadIdx.x, lane = t % kWarpSize, warp = t / kWarpSize;
  if (warp == 0) s[lane] = in[lane];
  __syncthreads();
  if (warp == 1) out[lane] = s[lane];  // PARTNER
  if (fixed) __syncthreads();
  if (warp == 0) atomicAdd(&s[lane], 1);  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[kWarpSize];
  for (int i = 0; i < kWarpSize; ++i) h[i] = 7 * i + 4;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_counts<<<1, 2 * kWarpSize>>>(in, out, fixed);
  if (!fixed) return verdict("race_shared_atomic_after_reads", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got[kWarpSize];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kWarpSize; ++i)
    if (got[i] != h[i])
      return fixed_wrong("race_shared_atomic_after_reads", "word %d is %d, expected %d", i, got[i], h[i]);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("race_shared_atomic_after_reads");
}
