// Planted bug: use after free. The input buffer is released with cudaFree before the kernel
// that reads it is launched, so thread 0 of block 0 loads from memory that is no longer
// allocated. Expected: cudaErrorIllegalAddress and the emulator naming that load. --fixed: the
// buffer is freed after the kernel, which then sums correctly.
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

__global__ void k_add_one(const int* in, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  // The planted bug: in was freed before the launch.
  if (i < n) out[i] = in[i] + 1;  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  std::vector<int> h(kN);
  for (int i = 0; i < kN; ++i) h[i] = 7 * i;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, kN * sizeof(int)));
  CHECK(cudaMalloc(&out, kN * sizeof(int)));
  CHECK(cudaMemcpy(in, h.data(), kN * sizeof(int), cudaMemcpyHostToDevice));
  if (!fixed) CHECK(cudaFree(in));  // too early: the kernel below still reads it
  k_add_one<<<kN / kBlock, kBlock>>>(in, out, kN);
  if (!fixed) return verdict("use_after_free", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  CHECK(cudaFree(in));
  std::vector<int> got(kN);
  CHECK(cudaMemcpy(got.data(), out, kN * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i)
    if (got[i] != h[i] + 1) {
      std::fprintf(stderr, "use_after_free --fixed: out[%d] = %d, expected %d\n", i, got[i],
                   h[i] + 1);
      return 3;
    }
  std::fprintf(stderr, "use_after_free --fixed: ok\n");
  return 0;
}
