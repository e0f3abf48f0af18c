// Planted bug: the "last block" reduction (the CUDA Programming Guide's example for memory
// fences) without its __threadfence(). Each block stores its partial sum, then counts itself
// done with atomicAdd; the block that draws the last ticket sums the partials. Without a fence
// between the store and the atomic, nothing makes the store visible before the count that
// announces it: the last block's read of a partial sum races with the block's write of it.
// Expected: the checks report the last block's read of partial[0] against block 0's write, and
// the launch fails (cudaErrorLaunchFailure). --fixed: __threadfence() between the store and the
// atomicAdd (a release; the ticket's atomic and the barrier after it acquire), and the total is
// right. The fixed program is the pattern the checks must follow through a fence and an atomic.
#include "fault_common.h"

constexpr int kThreads = 128, kBlocks = 6, kN = kThreads * kBlocks - 50;

__device__ int block_sum(int v) {
  __shared__ int s[kThreads];
  const int t = threadIdx.x;
  s[t] = v;
  __syncthreads();
  for (int d = kThreads / 2; d > 0; d /= 2) {
    if (t < d) s[t] += s[t + d];
    __syncthreads();
  }
  const int sum = s[0];
  __syncthreads();  // s is reused by the next call
  return sum;
}

__global__ void k_sum(const int* in, int* partial, unsigned* done, int* total, int n, int fixed) {
  __shared__ bool last;
  const int t = threadIdx.x, i = blockIdx.x * kThreads + t;
  const int sum = block_sum(i < n ? in[i] : 0);
  if (t == 0) {
    partial[blockIdx.x] = sum;  // PARTNER
    if (fixed) __threadfence();
    last = atomicAdd(done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  int v = 0;
  for (int b = t; b < int(gridDim.x); b += kThreads) v += partial[b];  // PLANTED
  v = block_sum(v);
  if (t == 0) *total = v;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  static int h[kN];
  int want = 0;
  for (int i = 0; i < kN; ++i) want += h[i] = (i * 7) % 23 - 11;
  int *in = nullptr, *partial = nullptr, *total = nullptr;
  unsigned* done = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&partial, kBlocks * sizeof(int)));
  CHECK(cudaMalloc(&done, sizeof(unsigned)));
  CHECK(cudaMalloc(&total, sizeof(int)));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(done, 0, sizeof(unsigned)));
  k_sum<<<kBlocks, kThreads>>>(in, partial, done, total, kN, fixed);
  if (!fixed) return verdict("race_missing_fence", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got = 0;
  CHECK(cudaMemcpy(&got, total, sizeof got, cudaMemcpyDeviceToHost));
  if (got != want) return fixed_wrong("race_missing_fence", "total %d, expected %d", got, want);
  CHECK(cudaFree(in));
  CHECK(cudaFree(partial));
  CHECK(cudaFree(done));
  CHECK(cudaFree(total));
  return fixed_ok("race_missing_fence");
}
