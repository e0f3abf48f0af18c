// Planted bug: a named barrier whose thread count includes threads that exit. In a 128-thread
// block, threads 64-127 have nothing to do and return at once; threads 0-63 exchange values
// through shared memory and meet on barrier 1 with the count written as the block size, 128.
// Only a barrier without a count (__syncthreads) waits for just the threads that have not exited;
// one with a count waits for its count (PTX ISA, bar/barrier and exit), so the 64 threads wait
// forever. Expected: cudaErrorLaunchFailure and the emulator's deadlock explanation naming the
// barrier, its count, the threads that arrived and those that exited. --fixed: the count is the
// 64 threads that meet there.

#include "fault_common.h"

constexpr int kThreads = 128;
constexpr int kWorkers = 64;

__global__ void k_mirror_half(const int* in, int* out, unsigned count) {
  __shared__ int s[kWorkers];
  const int t = threadIdx.x;
  if (t >= kWorkers) return;
  s[t] = in[t] * 7;
  // The planted bug: count = 128 counts the 64 threads that returned above.
  asm volatile("bar.sync 1, %0;" ::"r"(count) : "memory");  // PLANTED
  out[t] = s[kWorkers - 1 - t];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[kWorkers];
  for (int i = 0; i < kWorkers; ++i) h[i] = 5 * i - 90;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_mirror_half<<<1, kThreads>>>(in, out, fixed ? kWorkers : kThreads);
  if (!fixed) return verdict("bar_count_exit", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got[kWorkers];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int t = 0; t < kWorkers; ++t)
    if (got[t] != 7 * h[kWorkers - 1 - t])
      return fixed_wrong("bar_count_exit", "out[%d] = %d, expected %d", t, got[t], 7 * h[kWorkers - 1 - t]);
  return fixed_ok("bar_count_exit");
}
