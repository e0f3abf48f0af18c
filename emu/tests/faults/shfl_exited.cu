// Planted bug: a shuffle that reads lanes which have exited. A warp sum over n = 48 values
// returns early in the threads past the data (lanes 16-31 of warp 1) and then shuffles with the
// full mask 0xffffffff. The shuffle itself waits only for the lanes that have not exited (as the
// ISA says), but the butterfly's first step reads lanes 16-31, whose values are undefined.
// Expected: cudaErrorIllegalInstruction and the emulator saying which lane it read. --fixed: no
// early return; the threads past the data contribute 0 and both warp sums are right.
#include <algorithm>

#include "fault_common.h"

constexpr int kN = 48;
constexpr int kThreads = 64;

__global__ void k_warp_sums(const int* in, int* out, int n, int fixed) {
  const int i = threadIdx.x, lane = i & 31;
  if (!fixed && i >= n) return;  // lanes past the data leave early
  int v = i < n ? in[i] : 0;
  // The planted bug: the mask still names the lanes that returned.
  for (int d = 16; d > 0; d /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, d);  // PLANTED
  if (lane == 0) out[i / 32] = v;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[kN];
  for (int i = 0; i < kN; ++i) h[i] = 3 * i + 1;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, 2 * sizeof(int)));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_warp_sums<<<1, kThreads>>>(in, out, kN, fixed);
  if (!fixed) return verdict("shfl_exited", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[2];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int w = 0; w < 2; ++w) {
    int want = 0;
    for (int i = w * 32; i < std::min(kN, w * 32 + 32); ++i) want += h[i];
    if (got[w] != want)
      return fixed_wrong("shfl_exited", "warp %d sum %d, expected %d", w, got[w], want);
  }
  return fixed_ok("shfl_exited");
}
