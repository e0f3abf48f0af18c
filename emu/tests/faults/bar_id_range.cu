// Planted bug: a named-barrier id out of range. Each pair of warps of a 1024-thread block
// synchronizes on its own named barrier, 1 + warp / 2 (barrier 0 belongs to __syncthreads), so
// the last pair, warps 30-31, computes id 16; a block has only barriers 0-15. Expected:
// cudaErrorIllegalInstruction and the emulator naming the id, at warp 30 (thread 960).
// --fixed: groups of four warps use ids 1-8 and every group mirrors its values correctly.
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

constexpr int kThreads = 1024;

__global__ void k_group_mirror(const int* in, int* out, int warps_per_group) {
  __shared__ int s[kThreads];
  const int t = threadIdx.x;
  const int group_threads = 32 * warps_per_group, first = t / group_threads * group_threads;
  const int id = 1 + t / group_threads;
  s[t] = in[t] + 1;
  // The planted bug: warps 30-31 compute barrier id 16.
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(group_threads) : "memory");  // PLANTED
  out[t] = s[first + group_threads - 1 - (t - first)];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  const int warps_per_group = fixed ? 4 : 2;
  std::vector<int> h(kThreads);
  for (int i = 0; i < kThreads; ++i) h[i] = (i * 31) % 1000;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, kThreads * sizeof(int)));
  CHECK(cudaMalloc(&out, kThreads * sizeof(int)));
  CHECK(cudaMemcpy(in, h.data(), kThreads * sizeof(int), cudaMemcpyHostToDevice));
  k_group_mirror<<<1, kThreads>>>(in, out, warps_per_group);
  if (!fixed) return verdict("bar_id_range", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  std::vector<int> got(kThreads);
  CHECK(cudaMemcpy(got.data(), out, kThreads * sizeof(int), cudaMemcpyDeviceToHost));
  const int g = 32 * warps_per_group;
  for (int t = 0; t < kThreads; ++t) {
    const int first = t / g * g, want = h[first + g - 1 - (t - first)] + 1;
    if (got[t] != want) {
      std::fprintf(stderr, "bar_id_range --fixed: out[%d] = %d, expected %d\n", t, got[t], want);
      return 3;
    }
  }
  std::fprintf(stderr, "bar_id_range --fixed: ok\n");
  return 0;
}
