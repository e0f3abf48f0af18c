// Planted bug: expect_tx announces fewer bytes than the copy brings. The row is 256 words of 4
// bytes, but the announcement was written for 2-byte elements (kWords * 2): when the copy's
// complete_tx arrives, phase 0 has all its arrivals and its tx-count goes to -512, which the ISA
// never lets a phase complete with. Expected: cudaErrorIllegalInstruction and the emulator naming
// the mbarrier and the 512 bytes at the copy. --fixed: the announcement counts 4 bytes a word.
#include <cstdint>

#include "fault_common.h"

constexpr int kWords = 256;

__device__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__global__ void k_load_row(const uint32_t* in, uint32_t* out, int fixed) {
  __shared__ alignas(16) uint32_t row[kWords];
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)) : "memory");
  __syncthreads();
  if (threadIdx.x == 0)
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(&bar)), "r"(kWords * (fixed ? 4 : 2)) : "memory");
  __syncthreads();
  if (threadIdx.x == 0)
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(smem(row)), "l"(in), "r"(kWords * 4), "r"(smem(&bar)) : "memory");  // PLANTED
  uint32_t done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(smem(&bar)) : "memory");
  out[threadIdx.x] = row[threadIdx.x] * 2;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  uint32_t h[kWords];
  for (int i = 0; i < kWords; ++i) h[i] = uint32_t(i * 7 + 1);
  uint32_t *in, *out;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_load_row<<<1, kWords>>>(in, out, fixed);
  if (!fixed) return verdict("mbar_tx_negative", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  uint32_t got[kWords];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kWords; ++i)
    if (got[i] != 2 * h[i]) return fixed_wrong("mbar_tx_negative", "out[%d] = %u, expected %u", i, got[i], 2 * h[i]);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("mbar_tx_negative");
}
