// Planted bug: threads disagree on a named barrier's thread count. All 96 threads of the block
// meet on barrier 1 before reading each other's shared values; warps 0-1 say `bar.sync 1, 96`
// but warp 2 (threads 64-95) was written as `bar.sync 1, 64`. Expected:
// cudaErrorIllegalInstruction and the emulator naming the barrier and both counts at warp 2's
// bar.sync. --fixed: every warp says 96 and the reversed array comes out right.
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

constexpr int kThreads = 96;

__global__ void k_reverse(const int* in, int* out, int fixed) {
  __shared__ int s[kThreads];
  const int t = threadIdx.x;
  s[t] = in[t] * 3;
  // The planted bug: warp 2's barrier counts only 64 of the 96 threads.
  if (t >= 64 && !fixed)
    asm volatile("bar.sync 1, 64;" ::: "memory");  // PLANTED
  else
    asm volatile("bar.sync 1, 96;" ::: "memory");
  out[t] = s[kThreads - 1 - t];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  int h[kThreads];
  for (int i = 0; i < kThreads; ++i) h[i] = i * i - 5;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_reverse<<<1, kThreads>>>(in, out, fixed);
  if (!fixed) return verdict("bar_count", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[kThreads];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t)
    if (got[t] != 3 * h[kThreads - 1 - t]) {
      std::fprintf(stderr, "bar_count --fixed: out[%d] = %d, expected %d\n", t, got[t],
                   3 * h[kThreads - 1 - t]);
      return 3;
    }
  std::fprintf(stderr, "bar_count --fixed: ok\n");
  return 0;
}
