// Planted bug: a full-warp member mask in a partial warp. A block of 48 threads has a second
// warp of only 16 lanes, yet every warp sums its values with __reduce_add_sync(0xffffffff, v),
// naming lanes 16-31 of warp 1 that do not exist. Expected: cudaErrorIllegalInstruction and the
// emulator saying the mask names lanes absent from the (partial) warp, at thread 32.
// --fixed: the mask covers only the lanes the warp has, and both sums are right.
#include "fault_common.h"

constexpr int kThreads = 48;

__global__ void k_warp_totals(const int* in, int* out, int fixed) {
  const int t = threadIdx.x, lane = t & 31;
  const int lanes = min(32, int(blockDim.x) - (t & ~31));  // lanes this warp has
  const unsigned mask = fixed && lanes < 32 ? (1u << lanes) - 1 : 0xFFFFFFFFu;
  // The planted bug: warp 1 has no lanes 16-31.
  const int sum = __reduce_add_sync(mask, in[t]);  // PLANTED
  if (lane == 0) out[t / 32] = sum;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[kThreads];
  for (int i = 0; i < kThreads; ++i) h[i] = i % 5 + 2 * i;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, 2 * sizeof(int)));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_warp_totals<<<1, kThreads>>>(in, out, fixed);
  if (!fixed) return verdict("partial_warp_mask", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[2];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int w = 0; w < 2; ++w) {
    int want = 0;
    for (int i = w * 32; i < kThreads && i < w * 32 + 32; ++i) want += h[i];
    if (got[w] != want)
      return fixed_wrong("partial_warp_mask", "warp %d sum %d, expected %d", w, got[w], want);
  }
  return fixed_ok("partial_warp_mask");
}
