// Planted bug: more dynamic shared memory than a block gets without opting in. The kernel is
// launched with 64 KiB of dynamic shared memory, above the default 48 KiB per block, without
// raising cudaFuncAttributeMaxDynamicSharedMemorySize first. Expected: the launch is refused with
// cudaErrorInvalidValue before anything runs (so no kernel message). --fixed: the attribute is
// raised to 64 KiB first, and the kernel fills and reads back all of it.
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

constexpr int kSmemBytes = 64 * 1024;
constexpr int kBlock = 256;

// Each thread writes its slice of the window, the block syncs, and each reads a neighbour's.
__global__ void k_big_window(int* out) {
  extern __shared__ int window[];
  const int per_thread = kSmemBytes / sizeof(int) / kBlock, t = threadIdx.x;
  for (int j = 0; j < per_thread; ++j) window[t * per_thread + j] = t * 1000 + j;
  __syncthreads();
  const int other = (t + 1) % kBlock;
  int s = 0;
  for (int j = 0; j < per_thread; ++j) s += window[other * per_thread + j];
  out[t] = s;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  int* out = nullptr;
  CHECK(cudaMalloc(&out, kBlock * sizeof(int)));
  if (fixed)
    CHECK(cudaFuncSetAttribute(k_big_window, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               kSmemBytes));
  k_big_window<<<1, kBlock, kSmemBytes>>>(out);  // 64 KiB without the opt-in
  if (!fixed) return verdict("dyn_smem_optin", launch_result(), cudaErrorInvalidValue);
  CHECK(launch_result());
  int got[kBlock];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  const int per_thread = kSmemBytes / sizeof(int) / kBlock;
  for (int t = 0; t < kBlock; ++t) {
    const int other = (t + 1) % kBlock;
    const int want = per_thread * other * 1000 + per_thread * (per_thread - 1) / 2;
    if (got[t] != want) {
      std::fprintf(stderr, "dyn_smem_optin --fixed: out[%d] = %d, expected %d\n", t, got[t], want);
      return 3;
    }
  }
  std::fprintf(stderr, "dyn_smem_optin --fixed: ok\n");
  return 0;
}
