// Planted bug: a shuffle whose member mask excludes the calling lane. Each half-warp sums its 16
// values with __shfl_xor_sync; the mask 0x0000ffff was written for the lower half, but the upper
// half executes the same line with the same mask, so lane 16 runs a collective it is not a
// member of. Expected: cudaErrorIllegalInstruction and the emulator saying so at lane 16's
// shfl.sync. --fixed: each half names itself (0x0000ffff / 0xffff0000) and both sums are right.
#include "fault_common.h"

__global__ void k_half_sums(const int* in, int* out, int fixed) {
  const int lane = threadIdx.x & 31;
  const unsigned mask = fixed && lane >= 16 ? 0xFFFF0000u : 0x0000FFFFu;
  int v = in[threadIdx.x];
  // The planted bug: lanes 16-31 are not in the mask.
  for (int d = 8; d > 0; d /= 2) v += __shfl_xor_sync(mask, v, d);  // PLANTED
  if (lane % 16 == 0) out[threadIdx.x / 16] = v;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[64];
  for (int i = 0; i < 64; ++i) h[i] = (i * 13) % 17;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, 4 * sizeof(int)));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_half_sums<<<1, 64>>>(in, out, fixed);
  if (!fixed) return verdict("shfl_mask_excludes", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[4];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int q = 0; q < 4; ++q) {
    int want = 0;
    for (int i = 0; i < 16; ++i) want += h[q * 16 + i];
    if (got[q] != want)
      return fixed_wrong("shfl_mask_excludes", "half %d sum %d, expected %d", q, got[q], want);
  }
  return fixed_ok("shfl_mask_excludes");
}
