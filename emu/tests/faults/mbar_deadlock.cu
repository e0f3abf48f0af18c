// Planted bug: expect_tx announces more bytes than the copies bring, so phase 0 never completes
// and every thread waits in mbarrier.try_wait for ever: on a GPU, a hang. The row is meant to
// come in two copies of half a row, but only the first is issued. Expected:
// cudaErrorLaunchFailure and the emulator's deadlock report naming the mbarrier, its phase and
// the 512 bytes still expected, at the wait. --fixed: both halves are copied.
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
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(&bar)), "r"(kWords * 4) : "memory");
  __syncthreads();
  if (threadIdx.x == 0)
    for (int half = 0; half < (fixed ? 2 : 1); ++half)
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                   ::"r"(smem(row + half * kWords / 2)), "l"(in + half * kWords / 2), "r"(kWords * 2), "r"(smem(&bar)) : "memory");
  uint32_t done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(smem(&bar)) : "memory");  // PLANTED
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
  if (!fixed) return verdict("mbar_deadlock", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  uint32_t got[kWords];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kWords; ++i)
    if (got[i] != 2 * h[i]) return fixed_wrong("mbar_deadlock", "out[%d] = %u, expected %u", i, got[i], 2 * h[i]);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("mbar_deadlock");
}
