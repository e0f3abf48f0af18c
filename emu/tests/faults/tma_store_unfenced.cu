// Planted bug: a bulk copy reads shared memory that threads wrote without fence.proxy.async.
// Every thread squares its element into shared memory, the block synchronizes, and thread 0
// stores the row to global memory with cp.async.bulk: the copy reads through the async proxy,
// which sees generic-proxy writes only after a fence.proxy.async (a barrier alone orders the
// threads, not the proxies). Expected: cudaErrorLaunchFailure and the emulator naming the unfenced
// write at the copy. --fixed: each thread fences after its write.
#include <cstdint>

#include "fault_common.h"

constexpr int kWords = 128;

__device__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__global__ void k_squares(const uint32_t* in, uint32_t* out, int fixed) {
  __shared__ alignas(16) uint32_t row[kWords];
  row[threadIdx.x] = in[threadIdx.x] * in[threadIdx.x];
  if (fixed) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 ::"l"(out), "r"(smem(row)), "r"(kWords * 4) : "memory");  // PLANTED
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  uint32_t h[kWords];
  for (int i = 0; i < kWords; ++i) h[i] = uint32_t(i + 3);
  uint32_t *in, *out;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_squares<<<1, kWords>>>(in, out, fixed);
  if (!fixed) return verdict("tma_store_unfenced", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  uint32_t got[kWords];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kWords; ++i)
    if (got[i] != h[i] * h[i]) return fixed_wrong("tma_store_unfenced", "out[%d] = %u, expected %u", i, got[i], h[i] * h[i]);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("tma_store_unfenced");
}
