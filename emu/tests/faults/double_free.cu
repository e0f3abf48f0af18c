// Planted bug: freeing a buffer twice. A cleanup path calls cudaFree on a pointer that was
// already freed. Expected: the second cudaFree returns cudaErrorInvalidValue and the emulator
// says the pointer is not a live cudaMalloc allocation; the error is not sticky (cudaGetLastError
// returns it once and later calls succeed). --fixed: one cudaFree per cudaMalloc.
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

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  float *a = nullptr, *b = nullptr;
  CHECK(cudaMalloc(&a, 1024));
  CHECK(cudaMalloc(&b, 1024));
  CHECK(cudaFree(a));
  if (!fixed) {
    const int v = verdict("double_free", cudaFree(a), cudaErrorInvalidValue);  // a is already freed
    if (v == 1 && (cudaGetLastError() != cudaErrorInvalidValue ||
                   cudaGetLastError() != cudaSuccess || cudaFree(b) != cudaSuccess)) {
      std::fprintf(stderr, "double_free: the refused cudaFree left an error behind\n");
      return 2;
    }
    return v;
  }
  CHECK(cudaFree(b));
  CHECK(cudaGetLastError());
  std::fprintf(stderr, "double_free --fixed: ok\n");
  return 0;
}
