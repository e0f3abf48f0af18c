// Planted bug: a last-block reduction whose partial results are written by many threads of each
// block, each of them calling __threadfence() before the __syncthreads() after which thread 0
// takes the block's ticket with atomicAdd. The PTX memory model orders a write before the reads
// of the last block only through a release: a fence followed, in the same thread, by the strong
// write the last block observes (here thread 0's atomic). Such a release orders what precedes
// its fence in thread 0, and what barriers ordered before that fence; the other threads' writes
// reach thread 0 through the __syncthreads() that comes after thread 0's own fence, so no
// release covers them (their own fences have no later strong write of theirs to release them
// through). The last block's read of another block's partial races with the write.
// Expected: the checks report the last block's read against the write of block 0's thread 1,
// and say that the reading thread did acquire a release of that block, one that began before the
// write was ordered into it. The launch fails (cudaErrorLaunchFailure).
// --fixed: __syncthreads(), then thread 0's __threadfence() and atomicAdd: the barrier orders
// every thread's write before the fence that begins thread 0's release, and the total is right.
#include "fault_common.h"

constexpr int kThreads = 64, kBlocks = 5, kN = kThreads * kBlocks;

__global__ void k_sum(const int* in, int* partial, unsigned* done, int* total, int fixed) {
  __shared__ bool last;
  const int t = threadIdx.x, i = blockIdx.x * kThreads + t;
  // Each thread writes its pair sum; the pairs of a block are the block's partial results.
  if (t % 2 == 1) partial[i / 2] = in[i - 1] + in[i];  // PARTNER
  if (!fixed) __threadfence();
  __syncthreads();
  if (t == 0) {
    if (fixed) __threadfence();
    last = atomicAdd(done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last || t != 0) return;
  int v = 0;
  for (int p = 0; p < kN / 2; ++p) v += partial[p];  // PLANTED
  *total = v;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  static int h[kN];
  int want = 0;
  for (int i = 0; i < kN; ++i) want += h[i] = (i * 11) % 31 - 15;
  int *in = nullptr, *partial = nullptr, *total = nullptr;
  unsigned* done = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&partial, kN / 2 * sizeof(int)));
  CHECK(cudaMalloc(&done, sizeof(unsigned)));
  CHECK(cudaMalloc(&total, sizeof(int)));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(done, 0, sizeof(unsigned)));
  k_sum<<<kBlocks, kThreads>>>(in, partial, done, total, fixed);
  if (!fixed) return verdict("race_fence_early", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got = 0;
  CHECK(cudaMemcpy(&got, total, sizeof got, cudaMemcpyDeviceToHost));
  if (got != want) return fixed_wrong("race_fence_early", "total %d, expected %d", got, want);
  CHECK(cudaFree(in));
  CHECK(cudaFree(partial));
  CHECK(cudaFree(done));
  CHECK(cudaFree(total));
  return fixed_ok("race_fence_early");
}
