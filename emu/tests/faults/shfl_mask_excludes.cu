// Planted bug: a shuffle whose member mask excludes the calling lane. Each half-warp sums its 16
// values with __shfl_xor_sync; the mask 0x0000ffff was written for the lower half, but the upper
// half executes the same line with the same mask, so lane 16 runs a collective it is not a
// member of. Expected: cudaErrorIllegalInstruction and the emulator saying so at lane 16's
// shfl.sync. --fixed: each half names itself (0x0000ffff / 0xffff0000) and both sums are right.
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

__global__ void k_half_sums(const int* in, int* out, int fixed) {
  const int lane = threadIdx.x & 31;
  const unsigned mask = fixed && lane >= 16 ? 0xFFFF0000u : 0x0000FFFFu;
  int v = in[threadIdx.x];
  // The planted bug: lanes 16-31 are not in the mask.
  for (int d = 8; d > 0; d /= 2) v += __shfl_xor_sync(mask, v, d);  // PLANTED
  if (lane % 16 == 0) out[threadIdx.x / 16] = v;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  int h[64];
  for (int i = 0; i < 64; ++i) h[i] = (i * 13) % 17;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, 4 * sizeof(int)));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_half_sums<<<1, 64>>>(in, out, fixed);
  if (!fixed) return verdict("shfl_mask_excludes", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[4];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int q = 0; q < 4; ++q) {
    int want = 0;
    for (int i = 0; i < 16; ++i) want += h[q * 16 + i];
    if (got[q] != want) {
      std::fprintf(stderr, "shfl_mask_excludes --fixed: half %d sum %d, expected %d\n", q, got[q],
                   want);
      return 3;
    }
  }
  std::fprintf(stderr, "shfl_mask_excludes --fixed: ok\n");
  return 0;
}
