// Planted bug: a device-side assert that fails. The kernel asserts that every input is
// non-negative and element 77 is -1. Expected: cudaErrorAssert and the emulator naming the
// failed assertion (block 0, thread 77, at the assert's line). --fixed: all inputs are
// non-negative, the assert holds and the results are right.
//
// NDEBUG is undefined on purpose: release builds define it and would compile the assert away.
#undef NDEBUG
#include <cuda_runtime.h>

#include <cassert>
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

constexpr int kN = 128;

__global__ void k_checked_sqrt(const float* in, float* out) {
  const int i = threadIdx.x;
  // The planted bug: in[77] is negative.
  assert(in[i] >= 0.0f);  // PLANTED
  out[i] = sqrtf(in[i]);
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  float h[kN];
  for (int i = 0; i < kN; ++i) h[i] = float(i * i);
  if (!fixed) h[77] = -1.0f;
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_checked_sqrt<<<1, kN>>>(in, out);
  if (!fixed) return verdict("device_assert", launch_result(), cudaErrorAssert);
  CHECK(launch_result());
  float got[kN];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i)
    if (got[i] != float(i)) {
      std::fprintf(stderr, "device_assert --fixed: out[%d] = %g, expected %d\n", i, got[i], i);
      return 3;
    }
  std::fprintf(stderr, "device_assert --fixed: ok\n");
  return 0;
}
