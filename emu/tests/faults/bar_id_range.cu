// Planted bug: a named-barrier id out of range. Each pair of warps of a 1024-thread block
// synchronizes on its own named barrier, 1 + warp / 2 (barrier 0 belongs to __syncthreads), so
// the last pair, warps 30-31, computes id 16; a block has only barriers 0-15. Expected:
// cudaErrorIllegalInstruction and the emulator naming the id, at warp 30 (thread 960).
// --fixed: groups of four warps use ids 1-8 and every group mirrors its values correctly.
#include <vector>

#include "fault_common.h"

constexpr int kThreads = 1024;

__global__ void k_group_mirror(const int* in, int* out, int warps_per_group) {
  __shared__ int s[kThreads];
  const int t = threadIdx.x;
  const int group_threads = 32 * warps_per_group, first = t / group_threads * group_threads;
  const int id = 1 + t / group_threads;
  s[t] = in[t] + 1;
  // The planted bug: warps 30-31 compute barrier id 16.
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(group_threads) : "memory");  // PLANTED
  out[t] = s[first + group_threads - 1 - (t - first)];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  const int warps_per_group = fixed ? 4 : 2;
  std::vector<int> h(kThreads);
  for (int i = 0; i < kThreads; ++i) h[i] = (i * 31) % 1000;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, kThreads * sizeof(int)));
  CHECK(cudaMalloc(&out, kThreads * sizeof(int)));
  CHECK(cudaMemcpy(in, h.data(), kThreads * sizeof(int), cudaMemcpyHostToDevice));
  k_group_mirror<<<1, kThreads>>>(in, out, warps_per_group);
  if (!fixed) return verdict("bar_id_range", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  std::vector<int> got(kThreads);
  CHECK(cudaMemcpy(got.data(), out, kThreads * sizeof(int), cudaMemcpyDeviceToHost));
  const int g = 32 * warps_per_group;
  for (int t = 0; t < kThreads; ++t) {
    const int first = t / g * g, want = h[first + g - 1 - (t - first)] + 1;
    if (got[t] != want)
      return fixed_wrong("bar_id_range", "out[%d] = %d, expected %d", t, got[t], want);
  }
  return fixed_ok("bar_id_range");
}
