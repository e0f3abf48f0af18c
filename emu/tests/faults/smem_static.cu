// Planted bug: a read past a static __shared__ array. A 3-point stencil stages one tile of 128
// floats per block and reads tile[t + 1] without a halo, so thread 127 of block 0 loads
// tile[128], just past the block's 512 bytes of shared memory. Expected:
// cudaErrorIllegalAddress and the emulator naming that shared load. --fixed: the right
// neighbour is clamped to the tile and the results match the host's.
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

constexpr int kTile = 128;
constexpr int kBlocks = 4;

__global__ void k_pair_sum(const float* in, float* out, int fixed) {
  __shared__ float tile[kTile];
  const int t = threadIdx.x, base = blockIdx.x * kTile;
  tile[t] = in[base + t];
  __syncthreads();
  const int right = fixed ? min(t + 1, kTile - 1) : t + 1;
  // The planted bug: right == 128 for the last thread.
  out[base + t] = tile[t] + tile[right];  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  const int n = kTile * kBlocks;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = float(i % 11);
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&out, n * sizeof(float)));
  CHECK(cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  k_pair_sum<<<kBlocks, kTile>>>(in, out, fixed);
  if (!fixed) return verdict("smem_static", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  std::vector<float> got(n);
  CHECK(cudaMemcpy(got.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    const int t = i % kTile, r = t + 1 < kTile ? i + 1 : i;
    if (got[i] != h[i] + h[r]) {
      std::fprintf(stderr, "smem_static --fixed: out[%d] = %g, expected %g\n", i, got[i],
                   h[i] + h[r]);
      return 3;
    }
  }
  std::fprintf(stderr, "smem_static --fixed: ok\n");
  return 0;
}
