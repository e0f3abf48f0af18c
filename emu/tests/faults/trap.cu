// Planted bug: a trap. The kernel aborts with `trap` when it meets a value it cannot handle
// (a zero divisor, at element 40). Expected: cudaErrorIllegalInstruction and the emulator naming
// the trap (block 0, thread 40, at the asm's line). --fixed: no zero divisor, no trap, and the
// quotients are right.
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

constexpr int kN = 64;

__global__ void k_divide(const int* num, const int* den, int* out) {
  const int i = threadIdx.x;
  // The planted bug: den[40] == 0.
  if (den[i] == 0) asm volatile("trap;");  // PLANTED
  out[i] = num[i] / den[i];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  int num[kN], den[kN];
  for (int i = 0; i < kN; ++i) {
    num[i] = 1000 + 37 * i;
    den[i] = i % 7 + 1;
  }
  if (!fixed) den[40] = 0;
  int *d_num = nullptr, *d_den = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&d_num, sizeof num));
  CHECK(cudaMalloc(&d_den, sizeof den));
  CHECK(cudaMalloc(&out, sizeof num));
  CHECK(cudaMemcpy(d_num, num, sizeof num, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_den, den, sizeof den, cudaMemcpyHostToDevice));
  k_divide<<<1, kN>>>(d_num, d_den, out);
  if (!fixed) return verdict("trap", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[kN];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i)
    if (got[i] != num[i] / den[i]) {
      std::fprintf(stderr, "trap --fixed: out[%d] = %d, expected %d\n", i, got[i], num[i] / den[i]);
      return 3;
    }
  std::fprintf(stderr, "trap --fixed: ok\n");
  return 0;
}
