// Planted bug: a TMA multicast (cp.async.bulk ... .multicast::cluster) to two blocks, launched
// without clusters (<<<2, 64>>> of a kernel that has no __cluster_dims__): each block is then a
// cluster of its own, rank 0, and the ctaMask 0x3 names a rank 1 that does not exist.
// Expected: the launch fails (cudaErrorIllegalInstruction) saying the launch has no clusters.
// --fixed: the same kernel launched with a cluster dimension of 2 (cudaLaunchKernelEx).
#include <cstdint>

#include "fault_common.h"

constexpr int kWords = 256;  // 1 KiB per copy

__device__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__global__ void k_broadcast(const uint32_t* in, uint32_t* out, int fixed) {
  __shared__ alignas(128) uint32_t buf[kWords];
  __shared__ uint64_t bar;
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(&bar)), "r"(kWords * 4) : "memory");
  }
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  const uint16_t mask = 0x3;
  const uint32_t dst = smem(buf), mbar = smem(&bar), bytes = kWords * 4;
  if (rank == 0 && threadIdx.x == 0)
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1], %2, [%3], %4;" ::"r"(dst), "l"(in), "r"(bytes), "r"(mbar), "h"(mask) : "memory");  // PLANTED
  uint32_t done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(smem(&bar)) : "memory");
  for (int i = threadIdx.x; i < kWords; i += blockDim.x) out[blockIdx.x * kWords + i] = buf[i];
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  uint32_t h_in[kWords], *in = nullptr, *out = nullptr;
  for (int i = 0; i < kWords; ++i) h_in[i] = 3u * i + 11u;
  CHECK(cudaMalloc(&in, sizeof h_in));
  CHECK(cudaMalloc(&out, 2 * sizeof h_in));
  CHECK(cudaMemcpy(in, h_in, sizeof h_in, cudaMemcpyHostToDevice));
  if (!fixed) {
    k_broadcast<<<2, 64>>>(in, out, fixed);
    return verdict("multicast_no_cluster", launch_result(), cudaErrorIllegalInstruction);
  }
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(2);
  cfg.blockDim = dim3(64);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 2;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CHECK(cudaLaunchKernelEx(&cfg, k_broadcast, static_cast<const uint32_t*>(in), out, int(fixed)));
  CHECK(launch_result());
  uint32_t h[2 * kWords];
  CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 2 * kWords; ++i)
    if (h[i] != h_in[i % kWords])
      return fixed_wrong("multicast_no_cluster", "out[%d] = %u, expected %u", i, h[i], h_in[i % kWords]);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("multicast_no_cluster");
}
