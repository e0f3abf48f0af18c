// Planted bug: a TMA multicast (cp.async.bulk ... .multicast::cluster) whose ctaMask names a CTA
// the cluster does not have: the cluster has 2 blocks (ranks 0 and 1) but the mask 0x5 also sets
// bit 2. The PTX ISA's ctaMask names destination CTAs of the cluster, one bit per CTA.
// Expected: the launch fails (cudaErrorIllegalInstruction) naming the mask and the rank.
// --fixed: the mask 0x3, both blocks of the cluster, each of which checks the bytes it received.
#include <cstdint>

#include "fault_common.h"

constexpr int kWords = 256;  // 1 KiB per copy

__device__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__global__ void __cluster_dims__(2, 1, 1) k_broadcast(const uint32_t* in, uint32_t* out, int fixed) {
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
  const uint16_t mask = fixed ? 0x3 : 0x5;
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
  k_broadcast<<<2, 64>>>(in, out, fixed);
  if (!fixed) return verdict("multicast_mask_outside", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  uint32_t h[2 * kWords];
  CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 2 * kWords; ++i)
    if (h[i] != h_in[i % kWords])
      return fixed_wrong("multicast_mask_outside", "out[%d] = %u, expected %u", i, h[i], h_in[i % kWords]);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("multicast_mask_outside");
}
