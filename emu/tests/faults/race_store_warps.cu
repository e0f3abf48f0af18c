// Planted bug: the warps of a block record which warp saw a negative input in one shared flag, each
// storing its own number, with nothing ordering their stores: which warp's number lands depends
// on their order (a write-write race in the PTX memory model, with different values).
// Expected: the checks report one warp's store against another warp's store, and the launch fails
// (cudaErrorLaunchFailure). --fixed: every warp that saw a negative stores the same value, 1: the
// flag ends the same whichever store lands last, which the checks do not report; thread 0 reads
// it after __syncthreads().
#include "fault_common.h"

constexpr int kThreads = 128, kBlocks = 2;

__global__ void k_any_negative(const int* in, int* any, int fixed) {
  __shared__ int flag;
  const int t = threadIdx.x, i = blockIdx.x * kThreads + t;
  if (t == 0) flag = 0;
  __syncthreads();
  if (in[i] < 0) flag = fixed ? 1 : t / 32 + 1;  // PLANTED
  __syncthreads();
  if (t == 0) any[blockIdx.x] = flag != 0;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  static int h[kBlocks * kThreads];
  // Block 0 has negative inputs in every warp, block 1 none.
  for (int i = 0; i < kBlocks * kThreads; ++i) h[i] = (i < kThreads && i % 7 == 3) ? -i : i;
  int *in = nullptr, *any = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&any, kBlocks * sizeof(int)));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_any_negative<<<kBlocks, kThreads>>>(in, any, fixed);
  if (!fixed) return verdict("race_store_warps", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got[kBlocks];
  CHECK(cudaMemcpy(got, any, sizeof got, cudaMemcpyDeviceToHost));
  if (got[0] != 1 || got[1] != 0) return fixed_wrong("race_store_warps", "flags %d %d, expected 1 0", got[0], got[1]);
  CHECK(cudaFree(in));
  CHECK(cudaFree(any));
  return fixed_ok("race_store_warps");
}
