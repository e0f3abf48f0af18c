// Planted bug: one warp names two different barriers. Groups of 64 threads each synchronize on
// named barrier 1 + t / group; the group size was written as 48 (three rows of 16), so the warp
// of threads 32-63 splits: threads 32-47 name barrier 1 and threads 48-63 barrier 2. Expected:
// cudaErrorIllegalInstruction and the emulator saying one warp names different barriers, at
// thread 48. --fixed: groups of 64 (whole warps), and each group mirrors its values correctly.
#include "fault_common.h"

constexpr int kThreads = 256;

__global__ void k_group_mirror(const int* in, int* out, int group) {
  __shared__ int s[kThreads];
  const int t = threadIdx.x, first = t / group * group;
  s[t] = in[t] * 5;
  // The planted bug: with group = 48, warp 1 names barriers 1 and 2.
  asm volatile("bar.sync %0, 64;" ::"r"(1 + t / group) : "memory");  // PLANTED
  out[t] = s[first + group - 1 - (t - first)];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  const int group = fixed ? 64 : 48;
  int h[kThreads];
  for (int i = 0; i < kThreads; ++i) h[i] = i - 100;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_group_mirror<<<1, kThreads>>>(in, out, group);
  if (!fixed) return verdict("bar_id_split", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[kThreads];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t) {
    const int first = t / group * group, want = 5 * h[first + group - 1 - (t - first)];
    if (got[t] != want)
      return fixed_wrong("bar_id_split", "out[%d] = %d, expected %d", t, got[t], want);
  }
  return fixed_ok("bar_id_split");
}
