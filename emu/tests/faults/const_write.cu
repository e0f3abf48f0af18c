// Planted bug: a store to __constant__ memory through a pointer. The kernel updates its
// coefficients in place through a plain float* that points at a __constant__ array, which is
// read-only to kernels. Expected: cudaErrorIllegalAddress and the emulator naming the store to
// the read-only variable (block 0, thread 0). --fixed: the updated coefficients go to a
// __device__ array instead, and both arrays hold the right values afterwards.
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

constexpr int kCoefs = 32;
__constant__ float c_coef[kCoefs];
__device__ float g_coef[kCoefs];

__global__ void k_decay(float rate, int fixed) {
  float* coef = fixed ? g_coef : c_coef;  // the __constant__ array, as a writable-looking pointer
  const int i = threadIdx.x;
  // The planted bug: a kernel cannot write c_coef.
  coef[i] = c_coef[i] * rate;  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  float h[kCoefs];
  for (int i = 0; i < kCoefs; ++i) h[i] = float(i + 1);
  CHECK(cudaMemcpyToSymbol(c_coef, h, sizeof h));
  k_decay<<<1, kCoefs>>>(0.5f, fixed);
  if (!fixed) return verdict("const_write", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  float c[kCoefs], g[kCoefs];
  CHECK(cudaMemcpyFromSymbol(c, c_coef, sizeof c));
  CHECK(cudaMemcpyFromSymbol(g, g_coef, sizeof g));
  for (int i = 0; i < kCoefs; ++i)
    if (c[i] != h[i] || g[i] != 0.5f * h[i]) {
      std::fprintf(stderr, "const_write --fixed: coefficient %d: constant %g, device %g\n", i, c[i],
                   g[i]);
      return 3;
    }
  std::fprintf(stderr, "const_write --fixed: ok\n");
  return 0;
}
