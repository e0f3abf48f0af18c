// Planted bug: a wait on an mbarrier state two phases old. Every thread arrives once per round on
// an mbarrier of the whole block and waits for its own arrival's phase to complete; the program
// keeps the first round's state and, in round 2, waits on it instead of the fresh one. The ISA
// allows a state of the current phase or the one before it only. Expected:
// cudaErrorIllegalInstruction and the emulator naming the mbarrier and the phase's age at the
// wait. --fixed: each round waits on its own state.
#include <cstdint>

#include "fault_common.h"

__device__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__global__ void k_rounds(uint32_t* out, int fixed) {
  __shared__ uint64_t bar;
  __shared__ uint32_t total[3];  // the adds of each round
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(&bar)), "r"(blockDim.x) : "memory");
    for (int r = 0; r < 3; ++r) total[r] = 0;
  }
  __syncthreads();
  uint64_t first = 0;
  for (int round = 0; round < 3; ++round) {
    atomicAdd(&total[round], 1u);
    uint64_t state;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(state) : "r"(smem(&bar)) : "memory");
    if (round == 0) first = state;
    const uint64_t wait_on = (round == 2 && !fixed) ? first : state;
    uint32_t done = 0;
    while (!done)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                   : "=r"(done) : "r"(smem(&bar)), "l"(wait_on) : "memory");  // PLANTED
    if (threadIdx.x == 0) out[round] = total[round];  // every add came before its arrival
  }
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  uint32_t* out;
  CHECK(cudaMalloc(&out, 3 * sizeof(uint32_t)));
  k_rounds<<<1, 64>>>(out, fixed);
  if (!fixed) return verdict("mbar_token_old", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  uint32_t got[3];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int r = 0; r < 3; ++r)
    if (got[r] != 64u) return fixed_wrong("mbar_token_old", "round %d saw %u adds, expected 64", r, got[r]);
  CHECK(cudaFree(out));
  return fixed_ok("mbar_token_old");
}
