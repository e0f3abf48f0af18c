// Planted bug: block 0 waits on block 1's mbarrier (a cluster of 2) through the generic address
// mapa gives for it. The PTX ISA lets an arrive (and expect_tx, complete_tx) name the mbarrier of
// another CTA of the cluster, but test_wait and try_wait only the executing CTA's own.
// Expected: the launch fails (cudaErrorIllegalInstruction) naming the mbarrier and its block.
// --fixed: block 0 arrives on block 1's mbarrier instead, and block 1 waits on its own.
#include <cstdint>

#include "fault_common.h"

__device__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__global__ void __cluster_dims__(2, 1, 1) k_handshake(int* out, int fixed) {
  __shared__ uint64_t bar;
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  uint64_t peer;
  asm volatile("mapa.u64 %0, %1, 1;" : "=l"(peer) : "l"(reinterpret_cast<uint64_t>(&bar)));
  uint32_t done = 0;
  if (rank == 0 && threadIdx.x == 0) {
    if (fixed) {
      asm volatile("mbarrier.arrive.release.cluster.b64 _, [%0];" ::"l"(peer) : "memory");
    } else {
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }" : "=r"(done) : "l"(peer) : "memory");  // PLANTED
    }
  }
  if (rank == 1)
    while (!done)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                   : "=r"(done) : "r"(smem(&bar)) : "memory");
  if (threadIdx.x == 0) out[blockIdx.x] = int(rank) + 1;
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int* out = nullptr;
  CHECK(cudaMalloc(&out, 2 * sizeof(int)));
  k_handshake<<<2, 32>>>(out, fixed);
  if (!fixed) return verdict("mbar_remote_wait", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int h[2];
  CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  for (int b = 0; b < 2; ++b)
    if (h[b] != b + 1) return fixed_wrong("mbar_remote_wait", "out[%d] = %d, expected %d", b, h[b], b + 1);
  CHECK(cudaFree(out));
  return fixed_ok("mbar_remote_wait");
}
