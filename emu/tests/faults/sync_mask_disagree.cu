// Planted bug: member masks that disagree. Each half of a warp takes the maximum of its 16
// values with butterfly shuffles; the lower half names itself (0x0000ffff), but the upper half
// passes the full mask, so its shuffle waits for lanes that are in a different shuffle.
// Expected: cudaErrorIllegalInstruction and the checks naming the two masks (thread 16 gives
// 0xffffffff, which names thread 0, which gives 0x0000ffff). --fixed: the upper half names
// itself (0xffff0000).
#include "fault_common.h"

constexpr int kThreads = 64;

__global__ void k_half_max(const int* in, int* out, int fixed) {
  const int lane = threadIdx.x & 31;
  int v = in[threadIdx.x];
  const unsigned mask = lane < 16 ? 0x0000ffffu : fixed ? 0xffff0000u : 0xffffffffu;
  for (int d = 8; d > 0; d /= 2) v = max(v, __shfl_xor_sync(mask, v, d));  // PLANTED
  if ((lane & 15) == 0) out[threadIdx.x / 16] = v;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[kThreads];
  for (int i = 0; i < kThreads; ++i) h[i] = (i * 41) % 67;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, kThreads / 16 * sizeof(int)));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_half_max<<<1, kThreads>>>(in, out, fixed);
  if (!fixed) return verdict("sync_mask_disagree", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[kThreads / 16];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int q = 0; q < kThreads / 16; ++q) {
    int want = h[q * 16];
    for (int i = q * 16; i < q * 16 + 16; ++i) want = h[i] > want ? h[i] : want;
    if (got[q] != want) return fixed_wrong("sync_mask_disagree", "group %d: %d, expected %d", q, got[q], want);
  }
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("sync_mask_disagree");
}
