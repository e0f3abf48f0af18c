// Planted bug: a warp stores a word per lane into shared memory, all lanes in one instruction,
// where another lane of the warp has written too, with no __syncwarp() between: lanes of a warp are
// not ordered by running together. Built twice: two lanes of the store write the same word
// (race_shared_warp_store_pairs: lane 2k and lane 2k+1 both word k), or lane 31 wrote one byte of
// word 3 just before the store (race_shared_warp_store_byte).
// Expected: the checks report lane 3's write (pairs: lane 1's) against lane 31's (pairs: lane 0's),
// and the launch fails (cudaErrorLaunchFailure). --fixed: every lane its own word, the byte written
// before a __syncwarp(), and the outputs are the ones expected.
#include "fault_common.h"

constexpr int kWarpSize = 32;

__global__ void k_store(int* out, int fixed) {
  __shared__ int s[kWarpSize];
  const int lane = threadIdx.x;
  if (!PAIRS && lane == 31) reinterpret_cast<unsigned char*>(s)[3 * 4 + 1] = 0x7f;  // PARTNER
  if (fixed) __syncwarp();
  const int word = PAIRS && !fixed ? lane / 2 : lane;
  s[word] = 3 * lane;  // PLANTED
  __syncwarp();
  out[lane] = s[word];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int* out = nullptr;
  CHECK(cudaMalloc(&out, kWarpSize * sizeof(int)));
  k_store<<<1, kWarpSize>>>(out, fixed);
  if (!fixed) return verdict(FAULT_NAME, launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got[kWarpSize];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kWarpSize; ++i)
    if (got[i] != 3 * i) return fixed_wrong(FAULT_NAME, "word %d is %d, expected %d", i, got[i], 3 * i);
  CHECK(cudaFree(out));
  return fixed_ok(FAULT_NAME);
}
