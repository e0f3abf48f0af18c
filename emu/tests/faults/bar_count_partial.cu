// Planted bug: a named-barrier count that is not a whole number of warps. In a 64-thread block
// threads 0-47 produce values and all 64 threads then meet on barrier 1 to read them; the count
// was written as the number of producers, 48. Barrier counts are whole warps (the PTX ISA
// requires a multiple of 32), and both warps arrive: 64 threads at a barrier counting 48.
// Expected: cudaErrorIllegalInstruction and the emulator saying more threads arrived than the
// count, at warp 1 (thread 32). --fixed: the count is 64 and the consumers read the right values.
#include "fault_common.h"

constexpr int kThreads = 64;
constexpr int kProducers = 48;

__global__ void k_produce_consume(int* out, unsigned count) {
  __shared__ int s[kProducers];
  const int t = threadIdx.x;
  if (t < kProducers) s[t] = t * t;
  // The planted bug: a count of 48, but 64 threads (two warps) arrive.
  asm volatile("bar.sync 1, %0;" ::"r"(count) : "memory");  // PLANTED
  out[t] = s[(t * 7) % kProducers];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int* out = nullptr;
  CHECK(cudaMalloc(&out, kThreads * sizeof(int)));
  k_produce_consume<<<1, kThreads>>>(out, fixed ? kThreads : kProducers);
  if (!fixed) return verdict("bar_count_partial", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[kThreads];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t) {
    const int p = (t * 7) % kProducers;
    if (got[t] != p * p)
      return fixed_wrong("bar_count_partial", "out[%d] = %d, expected %d", t, got[t], p * p);
  }
  return fixed_ok("bar_count_partial");
}
