// Planted bug: more dynamic shared memory than a block gets without opting in. The kernel is
// launched with 64 KiB of dynamic shared memory, above the default 48 KiB per block, without
// raising cudaFuncAttributeMaxDynamicSharedMemorySize first. Expected: the launch is refused with
// cudaErrorInvalidValue before anything runs (so no kernel message). --fixed: the attribute is
// raised to 64 KiB first, and the kernel fills and reads back all of it.
#include "fault_common.h"

constexpr int kSmemBytes = 64 * 1024;
constexpr int kBlock = 256;

// Each thread writes its slice of the window, the block syncs, and each reads a neighbour's.
__global__ void k_big_window(int* out) {
  extern __shared__ int window[];
  const int per_thread = kSmemBytes / sizeof(int) / kBlock, t = threadIdx.x;
  for (int j = 0; j < per_thread; ++j) window[t * per_thread + j] = t * 1000 + j;
  __syncthreads();
  const int other = (t + 1) % kBlock;
  int s = 0;
  for (int j = 0; j < per_thread; ++j) s += window[other * per_thread + j];
  out[t] = s;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int* out = nullptr;
  CHECK(cudaMalloc(&out, kBlock * sizeof(int)));
  if (fixed)
    CHECK(cudaFuncSetAttribute(k_big_window, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               kSmemBytes));
  k_big_window<<<1, kBlock, kSmemBytes>>>(out);  // 64 KiB without the opt-in
  if (!fixed) return verdict("dyn_smem_optin", launch_result(), cudaErrorInvalidValue);
  CHECK(launch_result());
  int got[kBlock];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  const int per_thread = kSmemBytes / sizeof(int) / kBlock;
  for (int t = 0; t < kBlock; ++t) {
    const int other = (t + 1) % kBlock;
    const int want = per_thread * other * 1000 + per_thread * (per_thread - 1) / 2;
    if (got[t] != want)
      return fixed_wrong("dyn_smem_optin", "out[%d] = %d, expected %d", t, got[t], want);
  }
  return fixed_ok("dyn_smem_optin");
}
