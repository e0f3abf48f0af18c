// Planted bug: a plain read of a counter that other threads update with atomics, its value used
// as a result. Every thread takes a ticket with atomicAdd and then reads the counter back with an
// ordinary load to learn how many threads have arrived: nothing orders that load after the other
// threads' atomics, so it may see any older value (on a GPU the count depends on timing).
// Expected: the checks report the plain read against an earlier thread's atomic, saying that no
// compare-and-swap of the reading thread checked the value, and the launch fails
// (cudaErrorLaunchFailure).
// --fixed: the plain loads that CUDA's own headers and the CUDA Programming Guide use to seed a
// compare-and-swap loop, which a stale value cannot fool (the CAS compares it with memory and the
// loop retries with what the CAS returned): atomicAdd(__nv_bfloat162*) and
// atomicAdd(__nv_bfloat16*) from cuda_bf16.hpp (built for sm_80, where they are such loops), a
// float atomicMax written by hand as the Programming Guide writes it, the same on shared memory;
// and the count read with the atomic's own return value. Every result is checked.
#include <cuda_bf16.h>

#include <algorithm>

#include "fault_common.h"

constexpr int kThreads = 128, kBlocks = 4, kN = kThreads * kBlocks;

// The Programming Guide's form: seed with a plain load, retry with what atomicCAS returns.
__device__ float atomic_max(float* address, float val) {
  int* address_as_int = reinterpret_cast<int*>(address);
  int old = *address_as_int, assumed;
  do {
    assumed = old;
    old = atomicCAS(address_as_int, assumed, __float_as_int(fmaxf(val, __int_as_float(assumed))));
  } while (assumed != old);
  return __int_as_float(old);
}

__global__ void k_arrivals(unsigned* counter, unsigned* seen, int fixed) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  const unsigned ticket = atomicAdd(counter, 1u);  // PARTNER
  if (fixed) seen[i] = ticket + 1;
  else seen[i] = *counter;  // PLANTED
}

__global__ void k_seeded(const float* in, __nv_bfloat162* sum2, __nv_bfloat16* sum1, float* max,
                         float* block_max) {
  __shared__ float s_max;
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (threadIdx.x == 0) s_max = -1.0f;
  __syncthreads();
  atomicAdd(sum2, __floats2bfloat162_rn(1.0f, 2.0f));
  atomicAdd(sum1, __float2bfloat16(1.0f));
  atomic_max(max, in[i]);
  atomic_max(&s_max, in[i]);
  __syncthreads();
  if (threadIdx.x == 0) block_max[blockIdx.x] = s_max;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  unsigned *counter = nullptr, *seen = nullptr;
  CHECK(cudaMalloc(&counter, sizeof(unsigned)));
  CHECK(cudaMalloc(&seen, kN * sizeof(unsigned)));
  CHECK(cudaMemset(counter, 0, sizeof(unsigned)));
  k_arrivals<<<kBlocks, kThreads>>>(counter, seen, fixed);
  if (!fixed) return verdict("race_cas_seed", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());

  static float h_in[kN];
  float want_max = -1.0f, want_block[kBlocks];
  for (int b = 0; b < kBlocks; ++b) want_block[b] = -1.0f;
  for (int i = 0; i < kN; ++i) {
    h_in[i] = float((i * 37) % 1001) / 8.0f;
    want_max = std::max(want_max, h_in[i]);
    want_block[i / kThreads] = std::max(want_block[i / kThreads], h_in[i]);
  }
  float *in = nullptr, *max = nullptr, *block_max = nullptr;
  __nv_bfloat162* sum2 = nullptr;
  __nv_bfloat16* sum1 = nullptr;
  CHECK(cudaMalloc(&in, sizeof h_in));
  CHECK(cudaMalloc(&max, sizeof(float)));
  CHECK(cudaMalloc(&block_max, kBlocks * sizeof(float)));
  CHECK(cudaMalloc(&sum2, sizeof(__nv_bfloat162)));
  CHECK(cudaMalloc(&sum1, sizeof(__nv_bfloat16)));
  CHECK(cudaMemcpy(in, h_in, sizeof h_in, cudaMemcpyHostToDevice));
  const float minus_one = -1.0f;
  CHECK(cudaMemcpy(max, &minus_one, sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(sum2, 0, sizeof(__nv_bfloat162)));
  CHECK(cudaMemset(sum1, 0, sizeof(__nv_bfloat16)));
  k_seeded<<<kBlocks, kThreads>>>(in, sum2, sum1, max, block_max);
  CHECK(launch_result());

  // Each ticket is one of 1..kN, and each exactly once.
  static unsigned h_seen[kN];
  static bool taken[kN + 1];
  CHECK(cudaMemcpy(h_seen, seen, sizeof h_seen, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i) {
    if (h_seen[i] < 1 || h_seen[i] > unsigned(kN) || taken[h_seen[i]])
      return fixed_wrong("race_cas_seed", "thread %d: ticket %u", i, h_seen[i]);
    taken[h_seen[i]] = true;
  }
  float got_max = 0.0f, got_block[kBlocks];
  __nv_bfloat162 got2;
  __nv_bfloat16 got1;
  CHECK(cudaMemcpy(&got_max, max, sizeof got_max, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(got_block, block_max, sizeof got_block, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&got2, sum2, sizeof got2, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&got1, sum1, sizeof got1, cudaMemcpyDeviceToHost));
  if (got_max != want_max) return fixed_wrong("race_cas_seed", "max %g, expected %g", got_max, want_max);
  for (int b = 0; b < kBlocks; ++b)
    if (got_block[b] != want_block[b])
      return fixed_wrong("race_cas_seed", "block %d max %g, expected %g", b, got_block[b], want_block[b]);
  // bf16 has 8 significant bits: adding 1 stops at 256 (256 + 1 rounds back to 256, to even),
  // adding 2 at 512; kN additions reach both limits.
  const float lo = __low2float(got2), hi = __high2float(got2), one = __bfloat162float(got1);
  if (lo != 256.0f || hi != 512.0f || one != 256.0f)
    return fixed_wrong("race_cas_seed", "bf16 sums %g, %g and %g, expected 256, 512 and 256", lo, hi, one);
  CHECK(cudaFree(counter));
  CHECK(cudaFree(seen));
  CHECK(cudaFree(in));
  CHECK(cudaFree(max));
  CHECK(cudaFree(block_max));
  CHECK(cudaFree(sum2));
  CHECK(cudaFree(sum1));
  return fixed_ok("race_cas_seed");
}
