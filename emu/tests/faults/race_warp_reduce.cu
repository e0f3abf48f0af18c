// Planted bug: warp-synchronous code. A block sum finishes in warp 0 the pre-Volta way: the lanes
// add shared-memory partial sums through a volatile pointer, with no __syncwarp between the steps,
// relying on the warp running in lockstep. Under independent thread scheduling (sm_70+) nothing
// orders lane 16's write of s[16] before lane 0's read of it in the next step: a race.
// Expected: the checks report lane 0's read in the second step against lane 16's write in the
// first, and the launch fails (cudaErrorLaunchFailure). --fixed: each step reads, __syncwarp(),
// writes, __syncwarp() (the CUDA Programming Guide's form), and the sums are right.
#include "fault_common.h"

constexpr int kThreads = 64, kBlocks = 3;

__global__ void k_block_sums(const int* in, int* out, int fixed) {
  __shared__ int s[kThreads];
  const int t = threadIdx.x;
  s[t] = in[blockIdx.x * kThreads + t];
  __syncthreads();
  if (t >= 32) return;
  if (!fixed) {
    volatile int* v = s;
    v[t] += v[t + 32];  // PARTNER
    v[t] += v[t + 16];  // PLANTED
    v[t] += v[t + 8];
    v[t] += v[t + 4];
    v[t] += v[t + 2];
    v[t] += v[t + 1];
    if (t == 0) out[blockIdx.x] = v[0];
  } else {
    int v = s[t] + s[t + 32];
    for (int d = 16; d > 0; d /= 2) {
      __syncwarp();
      s[t] = v;
      __syncwarp();
      v += s[t + d];
    }
    if (t == 0) out[blockIdx.x] = v;
  }
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[kBlocks * kThreads];
  for (int i = 0; i < kBlocks * kThreads; ++i) h[i] = (i * 37) % 101 - 50;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, kBlocks * sizeof(int)));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_block_sums<<<kBlocks, kThreads>>>(in, out, fixed);
  if (!fixed) return verdict("race_warp_reduce", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got[kBlocks];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int b = 0; b < kBlocks; ++b) {
    int want = 0;
    for (int i = 0; i < kThreads; ++i) want += h[b * kThreads + i];
    if (got[b] != want) return fixed_wrong("race_warp_reduce", "block %d: %d, expected %d", b, got[b], want);
  }
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("race_warp_reduce");
}
