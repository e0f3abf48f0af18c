// Planted bug: a global address converted to a shared-memory address. The kernel stages values
// with st.shared at an address made by __cvta_generic_to_shared (as cp.async and ldmatrix code
// does), but the pointer it converts is the global output buffer instead of the shared tile.
// Expected: cudaErrorIllegalInstruction and the emulator saying the converted address is
// outside the shared window (block 0, thread 0). --fixed: the shared tile is converted and the
// rotated values are right.
#include "fault_common.h"

constexpr int kThreads = 128;

__global__ void k_rotate(const float* in, float* out, int fixed) {
  __shared__ float tile[kThreads];
  const int t = threadIdx.x;
  float* dst = fixed ? &tile[t] : &out[t];  // where this thread's value is staged
  // The planted bug: dst points at out, global memory.
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(dst));  // PLANTED
  asm volatile("st.shared.f32 [%0], %1;" ::"r"(a), "f"(in[t] * 0.25f) : "memory");
  __syncthreads();
  out[t] = tile[(t + 1) % kThreads];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  float h[kThreads];
  for (int i = 0; i < kThreads; ++i) h[i] = float(4 * i);
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_rotate<<<1, kThreads>>>(in, out, fixed);
  if (!fixed) return verdict("cvta_shared", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  float got[kThreads];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t)
    if (got[t] != float((t + 1) % kThreads))
      return fixed_wrong("cvta_shared", "out[%d] = %g, expected %d", t, got[t], (t + 1) % kThreads);
  return fixed_ok("cvta_shared");
}
