// Planted bug: an off-by-one bound. The guard says i <= n, so the thread just past the last
// element (block 3, thread 232 of 4 x 256 threads over n = 1000) loads in[n], one float past the
// end of a cudaMalloc buffer. Expected: cudaErrorIllegalAddress and the emulator naming that
// load. --fixed: the same kernel with i < n must run clean and scale every element.
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

constexpr int kN = 1000;  // not a multiple of the block: the last block has idle threads
constexpr int kBlock = 256;

__global__ void k_scale(const float* in, float* out, int n, int fixed) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const bool inside = fixed ? i < n : i <= n;
  // The planted bug: i == n reads past the end.
  if (inside) out[i] = 2.0f * in[i];  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  std::vector<float> h(kN);
  for (int i = 0; i < kN; ++i) h[i] = float(i);
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, kN * sizeof(float)));
  CHECK(cudaMalloc(&out, kN * sizeof(float)));
  CHECK(cudaMemcpy(in, h.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
  k_scale<<<(kN + kBlock - 1) / kBlock, kBlock>>>(in, out, kN, fixed);
  if (!fixed) return verdict("oob_load", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  std::vector<float> got(kN);
  CHECK(cudaMemcpy(got.data(), out, kN * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i)
    if (got[i] != 2.0f * float(i)) {
      std::fprintf(stderr, "oob_load --fixed: out[%d] = %g, expected %g\n", i, got[i], 2.0 * i);
      return 3;
    }
  std::fprintf(stderr, "oob_load --fixed: ok\n");
  return 0;
}
