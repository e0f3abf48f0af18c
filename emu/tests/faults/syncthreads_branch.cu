// Planted bug: __syncthreads() inside a branch only part of the block takes. A shared-memory
// tree reduction puts the barrier inside `if (t < stride)`, so in the first round only threads
// 0-63 of the 128 reach it, while threads 64-127 skip every round and go on to the barrier after
// the loop, where every thread waits before reading the block's sum. bar.sync (what
// __syncthreads() compiles to) is .aligned: every thread of the block must execute the same
// barrier instruction, so this is undefined, although the arrivals at the two instructions add
// up to the whole block. (Had threads 64-127 returned instead, the barrier would complete
// without them: it waits for the threads that have not exited.) Expected:
// cudaErrorIllegalInstruction and the checks naming both barriers: thread 0 at the one in the
// branch, and warp 3, which the emulator's in-order schedule runs on from the first barrier, at
// the one after the loop. --fixed: the barrier sits after the branch, where every thread meets
// it, and every thread reads the right sum.

#include <vector>

#include "fault_common.h"

constexpr int kBlock = 128;
constexpr int kBlocks = 2;

__global__ void k_block_sum(const float* in, float* out, int fixed) {
  __shared__ float s[kBlock];
  const int t = threadIdx.x;
  s[t] = in[blockIdx.x * kBlock + t];
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (t < stride) {
      s[t] += s[t + stride];
      // The planted bug: only the threads below stride arrive.
      if (!fixed) __syncthreads();  // PLANTED
    }
    if (fixed) __syncthreads();
  }
  // Every thread reads the sum.
  __syncthreads();  // PARTNER
  out[blockIdx.x * kBlock + t] = s[0];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  const int n = kBlock * kBlocks;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = float(i % 9);
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&out, n * sizeof(float)));
  CHECK(cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  k_block_sum<<<kBlocks, kBlock>>>(in, out, fixed);
  if (!fixed) return verdict("syncthreads_branch", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  std::vector<float> got(n);
  CHECK(cudaMemcpy(got.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int b = 0; b < kBlocks; ++b) {
    float want = 0;
    for (int t = 0; t < kBlock; ++t) want += h[b * kBlock + t];
    for (int t = 0; t < kBlock; ++t)
      if (got[b * kBlock + t] != want)
        return fixed_wrong("syncthreads_branch", "block %d thread %d read sum %g, expected %g", b, t,
                           got[b * kBlock + t], want);
  }
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("syncthreads_branch");
}
