// Planted bug: a store before the start of a buffer. The kernel shifts an array left by one,
// out[i - 1] = in[i], but its first index is 0 instead of 1, so thread 0 of block 0 stores
// out[-1], 4 bytes before a cudaMalloc buffer. Expected: cudaErrorIllegalAddress and the
// emulator naming that store. --fixed: the loop starts at 1 and every element lands in place.
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

constexpr int kN = 1000;
constexpr int kBlock = 256;

__global__ void k_shift_left(const float* in, float* out, int n, int first) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  // The planted bug: first = 0 stores out[-1].
  if (i >= first && i < n) out[i - 1] = in[i];  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  std::vector<float> h(kN);
  for (int i = 0; i < kN; ++i) h[i] = float(3 * i);
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, kN * sizeof(float)));
  CHECK(cudaMalloc(&out, (kN - 1) * sizeof(float)));  // n - 1 results
  CHECK(cudaMemcpy(in, h.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
  k_shift_left<<<(kN + kBlock - 1) / kBlock, kBlock>>>(in, out, kN, fixed ? 1 : 0);
  if (!fixed) return verdict("oob_store", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  std::vector<float> got(kN - 1);
  CHECK(cudaMemcpy(got.data(), out, (kN - 1) * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN - 1; ++i)
    if (got[i] != h[i + 1]) {
      std::fprintf(stderr, "oob_store --fixed: out[%d] = %g, expected %g\n", i, got[i], h[i + 1]);
      return 3;
    }
  std::fprintf(stderr, "oob_store --fixed: ok\n");
  return 0;
}
