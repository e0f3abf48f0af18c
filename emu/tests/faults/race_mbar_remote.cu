// Planted bug: block 0 stores into block 1's shared memory (distributed shared memory, a cluster
// of 2) and then signals block 1's mbarrier with a remote arrive that is .relaxed: the arrive
// still completes the phase, so block 1's wait returns, but a relaxed arrive releases nothing
// (the PTX ISA: no memory ordering for the accesses before it), so block 1's read of what
// block 0 stored is not ordered after the store.
// Expected: the checks report the race on distributed shared memory and the launch fails
// (cudaErrorLaunchFailure). --fixed: mbarrier.arrive.release.cluster.shared::cluster, whose
// release the waiting try_wait (acquire) takes.
#include <cstdint>

#include "fault_common.h"

constexpr int kThreads = 64;

__device__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__global__ void __cluster_dims__(2, 1, 1) k_signal(int* out, int fixed) {
  __shared__ int inbox[kThreads];
  __shared__ uint64_t bar;
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  const int t = threadIdx.x;
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(&bar)), "r"(kThreads) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  if (rank == 0) {
    uint32_t slot, peer_bar;
    asm volatile("mapa.shared::cluster.u32 %0, %1, 1;" : "=r"(slot) : "r"(smem(&inbox[t])));
    asm volatile("mapa.shared::cluster.u32 %0, %1, 1;" : "=r"(peer_bar) : "r"(smem(&bar)));
    asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(slot), "r"(5 * t + 3) : "memory");  // PARTNER
    if (fixed) asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(peer_bar) : "memory");
    else asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];" ::"r"(peer_bar) : "memory");
  } else {
    uint32_t done = 0;
    while (!done)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                   : "=r"(done) : "r"(smem(&bar)) : "memory");
    out[t] = inbox[t];  // PLANTED
  }
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int* out = nullptr;
  CHECK(cudaMalloc(&out, kThreads * sizeof(int)));
  k_signal<<<2, kThreads>>>(out, fixed);
  if (!fixed) return verdict("race_mbar_remote", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int h[kThreads];
  CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t)
    if (h[t] != 5 * t + 3) return fixed_wrong("race_mbar_remote", "out[%d] = %d, expected %d", t, h[t], 5 * t + 3);
  CHECK(cudaFree(out));
  return fixed_ok("race_mbar_remote");
}
