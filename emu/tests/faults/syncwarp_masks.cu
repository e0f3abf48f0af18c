// Planted bug: divergent lanes give one __syncwarp different member masks. The two halves of a
// warp exchange values through shared memory and each should synchronize only itself; the lower
// half passes 0x0000ffff but the upper half passes the full 0xffffffff, so lanes 16-31 wait at
// the bar.warp.sync for lanes 0-15, which completed it under another mask, moved on and exited.
// Expected: cudaErrorIllegalInstruction and the emulator's explanation at lane 16's
// bar.warp.sync (a lane of its member mask has exited).
// --fixed: the upper half passes 0xffff0000 and the exchanged values are right.
#include "fault_common.h"

__global__ void k_swap_pairs(const int* in, int* out, int fixed) {
  __shared__ int s[32];
  const int lane = threadIdx.x;
  s[lane] = in[lane] * 2;
  const unsigned upper = fixed ? 0xFFFF0000u : 0xFFFFFFFFu;
  // The planted bug: the upper half names the lower half too.
  __syncwarp(lane < 16 ? 0x0000FFFFu : upper);  // PLANTED
  out[lane] = s[lane ^ 1];                      // the partner is in the same half
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[32];
  for (int i = 0; i < 32; ++i) h[i] = 100 - 3 * i;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_swap_pairs<<<1, 32>>>(in, out, fixed);
  if (!fixed) return verdict("syncwarp_masks", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[32];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 32; ++i)
    if (got[i] != 2 * h[i ^ 1])
      return fixed_wrong("syncwarp_masks", "out[%d] = %d, expected %d", i, got[i], 2 * h[i ^ 1]);
  return fixed_ok("syncwarp_masks");
}
