// Planted bug: __syncthreads() inside a branch only part of the block takes. A shared-memory
// tree reduction puts the barrier inside `if (t < stride)`, so in the first round only threads
// 0-63 of the 128 reach it while threads 64-127 skip every round and exit. Barrier 0 can never
// complete. Expected: cudaErrorLaunchFailure and the emulator's deadlock explanation naming the
// barrier, how many threads it waits for and that not every thread reaches it.
// --fixed: the barrier sits after the branch, where every thread meets it, and the sums are right.
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

constexpr int kBlock = 128;
constexpr int kBlocks = 2;

__global__ void k_block_sum(const float* in, float* out, int fixed) {
  __shared__ float s[kBlock];
  const int t = threadIdx.x;
  s[t] = in[blockIdx.x * kBlock + t];
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (t < stride) {
      s[t] += s[t + stride];
      // The planted bug: only the threads below stride arrive.
      if (!fixed) __syncthreads();  // PLANTED
    }
    if (fixed) __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  const int n = kBlock * kBlocks;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = float(i % 9);
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&out, kBlocks * sizeof(float)));
  CHECK(cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  k_block_sum<<<kBlocks, kBlock>>>(in, out, fixed);
  if (!fixed) return verdict("syncthreads_branch", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  float got[kBlocks];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int b = 0; b < kBlocks; ++b) {
    float want = 0;
    for (int t = 0; t < kBlock; ++t) want += h[b * kBlock + t];
    if (got[b] != want) {
      std::fprintf(stderr, "syncthreads_branch --fixed: block %d sum %g, expected %g\n", b, got[b],
                   want);
      return 3;
    }
  }
  std::fprintf(stderr, "syncthreads_branch --fixed: ok\n");
  return 0;
}
