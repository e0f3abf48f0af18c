// Planted bug: divergent lanes give one __syncwarp different member masks. The two halves of a
// warp exchange values through shared memory and each should synchronize only itself; the lower
// half passes 0x0000ffff but the upper half passes the full 0xffffffff, so lanes 16-31 wait at
// the bar.warp.sync for lanes 0-15, which completed it under another mask, moved on and exited.
// Expected: cudaErrorIllegalInstruction and the emulator's explanation at lane 16's
// bar.warp.sync (a lane of its member mask has exited).
// --fixed: the upper half passes 0xffff0000 and the exchanged values are right.
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

__global__ void k_swap_pairs(const int* in, int* out, int fixed) {
  __shared__ int s[32];
  const int lane = threadIdx.x;
  s[lane] = in[lane] * 2;
  const unsigned upper = fixed ? 0xFFFF0000u : 0xFFFFFFFFu;
  // The planted bug: the upper half names the lower half too.
  __syncwarp(lane < 16 ? 0x0000FFFFu : upper);  // PLANTED
  out[lane] = s[lane ^ 1];                      // the partner is in the same half
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  int h[32];
  for (int i = 0; i < 32; ++i) h[i] = 100 - 3 * i;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_swap_pairs<<<1, 32>>>(in, out, fixed);
  if (!fixed) return verdict("syncwarp_masks", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[32];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 32; ++i)
    if (got[i] != 2 * h[i ^ 1]) {
      std::fprintf(stderr, "syncwarp_masks --fixed: out[%d] = %d, expected %d\n", i, got[i],
                   2 * h[i ^ 1]);
      return 3;
    }
  std::fprintf(stderr, "syncwarp_masks --fixed: ok\n");
  return 0;
}
