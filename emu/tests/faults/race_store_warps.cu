// Planted bug: the warps of a block store the same value to one flag, with nothing ordering their
// stores. The CUDA Programming Guide defines equal stores by the threads of one warp in one
// instruction, not stores by different warps: those are a data race in the PTX memory model
// (a write-write conflict between threads that no barrier or release/acquire orders), whatever
// the values.
// Expected: the checks report warp 1's store against warp 0's store, and the launch fails
// (cudaErrorLaunchFailure). --fixed: each warp stores its own flag (the lanes of one warp storing
// one value in one instruction, which is defined), and thread 0 combines them after
// __syncthreads().
#include "fault_common.h"

constexpr int kThreads = 128, kWarpsPerBlock = kThreads / 32, kBlocks = 2;

__global__ void k_any_negative(const int* in, int* any, int fixed) {
  __shared__ int warp_any[kWarpsPerBlock];
  const int t = threadIdx.x, i = blockIdx.x * kThreads + t;
  if (fixed) {
    if (t % 32 == 0) warp_any[t / 32] = 0;
    __syncwarp();
    if (in[i] < 0) warp_any[t / 32] = 1;
    __syncthreads();
    if (t == 0) {
      int a = 0;
      for (int w = 0; w < kWarpsPerBlock; ++w) a |= warp_any[w];
      any[blockIdx.x] = a;
    }
  } else {
    if (t == 0) warp_any[0] = 0;
    __syncthreads();
    if (in[i] < 0) warp_any[0] = 1;  // PLANTED
    __syncthreads();
    if (t == 0) any[blockIdx.x] = warp_any[0];
  }
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
