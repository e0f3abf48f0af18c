// Planted bug: __syncthreads in code that diverges between warps. Warp 0 and warp 1 take
// different branches, and each branch has its own __syncthreads. The hardware counts arrivals
// at barrier 0 and lets both branches through, which is why this can pass on a GPU; the CUDA
// Programming Guide allows __syncthreads in conditional code only when the condition is the
// same across the whole block.
// Expected: cudaErrorIllegalInstruction and the checks naming both barriers (warp 1, thread 32,
// at the second; warp 0 at the first). --fixed: one __syncthreads after the branches.
#include "fault_common.h"

constexpr int kThreads = 64;

__global__ void k_mirror(const int* in, int* out, int fixed) {
  __shared__ int s[kThreads];
  const int t = threadIdx.x;
  if (fixed) {
    s[t] = t < 32 ? in[t] * 2 : in[t] + 1;
    __syncthreads();
  } else if (t < 32) {
    s[t] = in[t] * 2;
    __syncthreads();  // PARTNER
  } else {
    s[t] = in[t] + 1;
    __syncthreads();  // PLANTED
  }
  out[t] = s[kThreads - 1 - t];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[kThreads];
  for (int i = 0; i < kThreads; ++i) h[i] = i * 3 - 50;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_mirror<<<1, kThreads>>>(in, out, fixed);
  if (!fixed) return verdict("sync_syncthreads_warps", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[kThreads];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t) {
    const int src = kThreads - 1 - t;
    const int want = src < 32 ? h[src] * 2 : h[src] + 1;
    if (got[t] != want) return fixed_wrong("sync_syncthreads_warps", "out[%d] = %d, expected %d", t, got[t], want);
  }
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("sync_syncthreads_warps");
}
