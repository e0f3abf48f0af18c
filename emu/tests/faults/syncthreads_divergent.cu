// Planted bug: each side of a branch that splits every warp has its own __syncthreads(). Even
// threads scale their value and odd threads offset theirs, each followed by a barrier, then every
// thread reads its neighbour's. bar.sync (what __syncthreads() compiles to) is .aligned: every
// thread of the block must execute the same barrier instruction, so this is undefined even though
// the two barriers' arrivals add up to the whole block (compute-sanitizer's synccheck reports
// it). Expected: cudaErrorIllegalInstruction and the emulator naming the divergent barrier, at
// the barrier reached second. --fixed: one __syncthreads() after the branch.
#include "fault_common.h"

constexpr int kThreads = 64;

__global__ void k_even_odd(const int* in, int* out, int fixed) {
  __shared__ int s[kThreads];
  const int t = threadIdx.x;
  if (t % 2 == 0) {
    s[t] = in[t] * 2;
    if (!fixed) __syncthreads();
  } else {
    s[t] = in[t] + 1;
    // The planted bug: a second barrier instruction, for the odd threads.
    if (!fixed) __syncthreads();  // PLANTED
  }
  if (fixed) __syncthreads();
  out[t] = s[t ^ 1];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[kThreads];
  for (int i = 0; i < kThreads; ++i) h[i] = 3 * i - 7;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_even_odd<<<1, kThreads>>>(in, out, fixed);
  if (!fixed) return verdict("syncthreads_divergent", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[kThreads];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t) {
    const int p = t ^ 1, want = p % 2 == 0 ? 2 * h[p] : h[p] + 1;
    if (got[t] != want)
      return fixed_wrong("syncthreads_divergent", "out[%d] = %d, expected %d", t, got[t], want);
  }
  return fixed_ok("syncthreads_divergent");
}
