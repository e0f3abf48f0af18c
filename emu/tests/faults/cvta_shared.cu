// Planted bug: a global address converted to a shared-memory address. The kernel stages values
// with st.shared at an address made by __cvta_generic_to_shared (as cp.async and ldmatrix code
// does), but the pointer it converts is the global output buffer instead of the shared tile.
// Expected: cudaErrorIllegalInstruction and the emulator saying the converted address is
// outside the shared window (block 0, thread 0). --fixed: the shared tile is converted and the
// rotated values are right.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static void require_device() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("SKIP: no CUDA device\n");
    std::exit(77);
  }
}

// A bad configuration is reported at once; a fault inside the kernel, on hardware, only at the
// next synchronization (the emulator already knows at the launch). Either way one of the two.
static cudaError_t launch_result() {
  const cudaError_t e = cudaGetLastError();
  return e != cudaSuccess ? e : cudaDeviceSynchronize();
}

// Exit 1 (the status the test expects) only for the expected error; 0 when the bug went
// unnoticed, so the test fails; 2 for a different error.
static int verdict(const char* what, cudaError_t got, cudaError_t want) {
  std::fprintf(stderr, "%s: %s (%s)\n", what, cudaGetErrorName(got), cudaGetErrorString(got));
  if (got == want) return 1;
  std::fprintf(stderr, "%s: expected %s\n", what, cudaGetErrorName(want));
  return got == cudaSuccess ? 0 : 2;
}

#define CHECK(call)                                                         \
  do {                                                                      \
    const cudaError_t e_ = (call);                                          \
    if (e_ != cudaSuccess) {                                                \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorName(e_)); \
      std::exit(2);                                                         \
    }                                                                       \
  } while (0)

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
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
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
    if (got[t] != float((t + 1) % kThreads)) {
      std::fprintf(stderr, "cvta_shared --fixed: out[%d] = %g, expected %d\n", t, got[t],
                   (t + 1) % kThreads);
      return 3;
    }
  std::fprintf(stderr, "cvta_shared --fixed: ok\n");
  return 0;
}
