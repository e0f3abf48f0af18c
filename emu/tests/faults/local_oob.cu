// Planted bug: a local array indexed out of range. Each thread counts its four keys into an
// 8-bin histogram held in a local array; the keys run 0..8 and nothing clamps 8, so thread 37 of
// block 0 (the only thread given a key of 8) touches bins[8], past the thread's 32 bytes of
// local memory. Expected: cudaErrorIllegalAddress and the emulator naming that local access.
// --fixed: keys above 7 are clamped into the last bin and the histograms match the host's.
#include <cuda_runtime.h>

#include <algorithm>
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
constexpr int kKeys = 4;
constexpr int kBins = 8;

__global__ void k_histogram(const int* keys, int* out, int fixed) {
  const int t = threadIdx.x;
  int bins[kBins] = {};
  for (int j = 0; j < kKeys; ++j) {
    int k = keys[t * kKeys + j];
    if (fixed) k = min(k, kBins - 1);
    // The planted bug: k == 8 is one past the array.
    bins[k] += 1;  // PLANTED
  }
  for (int b = 0; b < kBins; ++b) out[t * kBins + b] = bins[b];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  std::vector<int> keys(kThreads * kKeys);
  for (int i = 0; i < kThreads * kKeys; ++i) keys[i] = (i * 5) % kBins;  // 0..7
  keys[37 * kKeys + 2] = kBins;                                          // the one out-of-range key
  int *d_keys = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&d_keys, keys.size() * sizeof(int)));
  CHECK(cudaMalloc(&out, kThreads * kBins * sizeof(int)));
  CHECK(cudaMemcpy(d_keys, keys.data(), keys.size() * sizeof(int), cudaMemcpyHostToDevice));
  k_histogram<<<1, kThreads>>>(d_keys, out, fixed);
  if (!fixed) return verdict("local_oob", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  std::vector<int> got(kThreads * kBins);
  CHECK(cudaMemcpy(got.data(), out, got.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t) {
    int want[kBins] = {};
    for (int j = 0; j < kKeys; ++j) want[std::min(keys[t * kKeys + j], kBins - 1)] += 1;
    for (int b = 0; b < kBins; ++b)
      if (got[t * kBins + b] != want[b]) {
        std::fprintf(stderr, "local_oob --fixed: thread %d bin %d = %d, expected %d\n", t, b,
                     got[t * kBins + b], want[b]);
        return 3;
      }
  }
  std::fprintf(stderr, "local_oob --fixed: ok\n");
  return 0;
}
