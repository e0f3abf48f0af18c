// Planted bug: threads disagree on a named barrier's thread count. All 96 threads of the block
// meet on barrier 1 before reading each other's shared values; warps 0-1 say `bar.sync 1, 96`
// but warp 2 (threads 64-95) was written as `bar.sync 1, 64`. Expected:
// cudaErrorIllegalInstruction and the emulator naming the barrier and both counts at warp 2's
// bar.sync. --fixed: every warp says 96 and the reversed array comes out right.
#include "fault_common.h"

constexpr int kThreads = 96;

__global__ void k_reverse(const int* in, int* out, int fixed) {
  __shared__ int s[kThreads];
  const int t = threadIdx.x;
  s[t] = in[t] * 3;
  // The planted bug: warp 2's barrier counts only 64 of the 96 threads.
  if (t >= 64 && !fixed)
    asm volatile("bar.sync 1, 64;" ::: "memory");  // PLANTED
  else
    asm volatile("bar.sync 1, 96;" ::: "memory");
  out[t] = s[kThreads - 1 - t];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[kThreads];
  for (int i = 0; i < kThreads; ++i) h[i] = i * i - 5;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_reverse<<<1, kThreads>>>(in, out, fixed);
  if (!fixed) return verdict("bar_count", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[kThreads];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t)
    if (got[t] != 3 * h[kThreads - 1 - t])
      return fixed_wrong("bar_count", "out[%d] = %d, expected %d", t, got[t],
                         3 * h[kThreads - 1 - t]);
  return fixed_ok("bar_count");
}
