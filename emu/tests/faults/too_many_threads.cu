// Planted bug: a launch with 1025 threads per block, one more than any block may have.
// Expected: the launch is refused with cudaErrorInvalidConfiguration before anything runs (so no
// kernel message), and the error is not sticky: cudaGetLastError clears it and the next calls
// succeed. --fixed: 1024 threads, and every thread writes its index.
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

__global__ void k_iota(int* out) {
  out[threadIdx.x] = int(threadIdx.x);
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  const int threads = fixed ? 1024 : 1025;
  int* out = nullptr;
  CHECK(cudaMalloc(&out, 1025 * sizeof(int)));
  k_iota<<<1, threads>>>(out);  // 1025 is over the limit of 1024 threads per block
  if (!fixed) {
    const int v = verdict("too_many_threads", launch_result(), cudaErrorInvalidConfiguration);
    // launch_result's cudaGetLastError returned the error and cleared it; nothing stays behind.
    if (v == 1 && (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess ||
                   cudaMemset(out, 0, sizeof(int)) != cudaSuccess)) {
      std::fprintf(stderr, "too_many_threads: the refused launch left a sticky error\n");
      return 2;
    }
    return v;
  }
  CHECK(launch_result());
  std::vector<int> got(threads);
  CHECK(cudaMemcpy(got.data(), out, threads * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < threads; ++i)
    if (got[i] != i) {
      std::fprintf(stderr, "too_many_threads --fixed: out[%d] = %d\n", i, got[i]);
      return 3;
    }
  std::fprintf(stderr, "too_many_threads --fixed: ok\n");
  return 0;
}
