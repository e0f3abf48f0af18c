// Planted bug: a host pointer passed to a kernel. The kernel is given the std::vector's data()
// instead of the device copy, so thread 0 of block 0 loads from host memory the device cannot
// reach. Expected: cudaErrorIllegalAddress and the emulator naming that load. --fixed: the
// device pointer is passed and the results are right.
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

constexpr int kN = 512;
constexpr int kBlock = 128;

__global__ void k_square(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  // The planted bug: in is a host address.
  if (i < n) out[i] = in[i] * in[i];  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  std::vector<float> h(kN);
  for (int i = 0; i < kN; ++i) h[i] = float(i % 37);
  float *d_in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&d_in, kN * sizeof(float)));
  CHECK(cudaMalloc(&out, kN * sizeof(float)));
  CHECK(cudaMemcpy(d_in, h.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
  k_square<<<kN / kBlock, kBlock>>>(fixed ? d_in : h.data(), out, kN);
  if (!fixed) return verdict("host_pointer", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  std::vector<float> got(kN);
  CHECK(cudaMemcpy(got.data(), out, kN * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i)
    if (got[i] != h[i] * h[i]) {
      std::fprintf(stderr, "host_pointer --fixed: out[%d] = %g, expected %g\n", i, got[i],
                   h[i] * h[i]);
      return 3;
    }
  std::fprintf(stderr, "host_pointer --fixed: ok\n");
  return 0;
}
