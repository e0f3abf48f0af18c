// Planted bug: each side of a branch that splits every warp has its own __syncthreads(). Even
// threads scale their value and odd threads offset theirs, each followed by a barrier, then every
// thread reads its neighbour's. bar.sync (what __syncthreads() compiles to) is .aligned: every
// thread of the block must execute the same barrier instruction, so this is undefined even though
// the two barriers' arrivals add up to the whole block (compute-sanitizer's synccheck reports
// it). Expected: cudaErrorIllegalInstruction and the emulator naming the divergent barrier, at
// the barrier reached second. --fixed: one __syncthreads() after the branch.
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

constexpr int kThreads = 64;

__global__ void k_even_odd(const int* in, int* out, int fixed) {
  __shared__ int s[kThreads];
  const int t = threadIdx.x;
  if (t % 2 == 0) {
    s[t] = in[t] * 2;
    if (!fixed) __syncthreads();
  } else {
    s[t] = in[t] + 1;
    // The planted bug: a second barrier instruction, for the odd threads.
    if (!fixed) __syncthreads();  // PLANTED
  }
  if (fixed) __syncthreads();
  out[t] = s[t ^ 1];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  int h[kThreads];
  for (int i = 0; i < kThreads; ++i) h[i] = 3 * i - 7;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_even_odd<<<1, kThreads>>>(in, out, fixed);
  if (!fixed) return verdict("syncthreads_divergent", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[kThreads];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t) {
    const int p = t ^ 1, want = p % 2 == 0 ? 2 * h[p] : h[p] + 1;
    if (got[t] != want) {
      std::fprintf(stderr, "syncthreads_divergent --fixed: out[%d] = %d, expected %d\n", t, got[t],
                   want);
      return 3;
    }
  }
  std::fprintf(stderr, "syncthreads_divergent --fixed: ok\n");
  return 0;
}
