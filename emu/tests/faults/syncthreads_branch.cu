// Planted bug: __syncthreads() inside a branch only part of the block takes. A shared-memory
// tree reduction puts the barrier inside `if (t < stride)`, so in the first round only threads
// 0-63 of the 128 reach it while threads 64-127 skip every round and exit. Barrier 0 can never
// complete. Expected: cudaErrorLaunchFailure and the emulator's deadlock explanation naming the
// barrier, how many threads it waits for and that not every thread reaches it.
// --fixed: the barrier sits after the branch, where every thread meets it, and the sums are right.
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
  if (t == 0) out[blockIdx.x] = s[0];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  const int n = kBlock * kBlocks;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = float(i % 9);
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&out, kBlocks * sizeof(float)));
  CHECK(cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  k_block_sum<<<kBlocks, kBlock>>>(in, out, fixed);
  if (!fixed) return verdict("syncthreads_branch", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  float got[kBlocks];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int b = 0; b < kBlocks; ++b) {
    float want = 0;
    for (int t = 0; t < kBlock; ++t) want += h[b * kBlock + t];
    if (got[b] != want)
      return fixed_wrong("syncthreads_branch", "block %d sum %g, expected %g", b, got[b], want);
  }
  return fixed_ok("syncthreads_branch");
}
