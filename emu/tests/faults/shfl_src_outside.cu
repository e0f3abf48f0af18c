// Planted bug: a shuffle that reads from a lane outside its member mask. Lanes 0-15 of a warp
// reduce their values with __shfl_down_sync(0x0000ffff, v, d) but leave the width at its default
// of 32, so at d = 8 lane 8 reads lane 16, which is not a member. (Width 16 would have kept the
// source inside the half: past the segment the lane keeps its own value.) Expected:
// cudaErrorIllegalInstruction and the emulator naming the lane read. --fixed: width 16, and the
// half-warp sums are right.
#include "fault_common.h"

__global__ void k_lower_half_sums(const int* in, int* out, int width) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  if (lane < 16) {
    int v = in[i];
    // The planted bug: with width 32, lane 8 reads lane 16 at d = 8.
    for (int d = 8; d > 0; d /= 2) v += __shfl_down_sync(0x0000FFFFu, v, d, width);  // PLANTED
    if (lane == 0) out[i / 32] = v;
  }
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[64];
  for (int i = 0; i < 64; ++i) h[i] = (i * 7) % 19 - 4;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, 2 * sizeof(int)));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_lower_half_sums<<<1, 64>>>(in, out, fixed ? 16 : 32);
  if (!fixed) return verdict("shfl_src_outside", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[2];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int w = 0; w < 2; ++w) {
    int want = 0;
    for (int i = 0; i < 16; ++i) want += h[w * 32 + i];
    if (got[w] != want)
      return fixed_wrong("shfl_src_outside", "warp %d sum %d, expected %d", w, got[w], want);
  }
  return fixed_ok("shfl_src_outside");
}
