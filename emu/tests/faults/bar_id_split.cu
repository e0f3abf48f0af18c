// Planted bug: one warp names two different barriers. Groups of 64 threads each synchronize on
// named barrier 1 + t / group; the group size was written as 48 (three rows of 16), so the warp
// of threads 32-63 splits: threads 32-47 name barrier 1 and threads 48-63 barrier 2. Expected:
// cudaErrorIllegalInstruction and the emulator saying one warp names different barriers, at
// thread 48. --fixed: groups of 64 (whole warps), and each group mirrors its values correctly.
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

constexpr int kThreads = 256;

__global__ void k_group_mirror(const int* in, int* out, int group) {
  __shared__ int s[kThreads];
  const int t = threadIdx.x, first = t / group * group;
  s[t] = in[t] * 5;
  // The planted bug: with group = 48, warp 1 names barriers 1 and 2.
  asm volatile("bar.sync %0, 64;" ::"r"(1 + t / group) : "memory");  // PLANTED
  out[t] = s[first + group - 1 - (t - first)];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  const int group = fixed ? 64 : 48;
  int h[kThreads];
  for (int i = 0; i < kThreads; ++i) h[i] = i - 100;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_group_mirror<<<1, kThreads>>>(in, out, group);
  if (!fixed) return verdict("bar_id_split", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[kThreads];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t) {
    const int first = t / group * group, want = 5 * h[first + group - 1 - (t - first)];
    if (got[t] != want) {
      std::fprintf(stderr, "bar_id_split --fixed: out[%d] = %d, expected %d\n", t, got[t], want);
      return 3;
    }
  }
  std::fprintf(stderr, "bar_id_split --fixed: ok\n");
  return 0;
}
