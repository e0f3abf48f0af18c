// Planted bug: a write past the dynamic shared-memory window. The kernel stages blockDim.x + 1
// floats (its inputs and one halo element) in extern __shared__ memory, but the launch sizes the
// window for blockDim.x floats only, so thread 127 of block 0 stores buf[128], just past the
// block's 512 bytes. Expected: cudaErrorIllegalAddress and the emulator naming that shared
// store. --fixed: the launch asks for (blockDim.x + 1) floats and the differences come out right.
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
constexpr int kBlocks = 3;

// out[i] = in[i + 1] - in[i], with in[n] read as 0: buf[0..blockDim.x] holds
// in[base..base+blockDim].
__global__ void k_diff(const float* in, float* out, int n) {
  extern __shared__ float buf[];
  const int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  // The planted bug: t + 1 == blockDim.x is outside the window.
  buf[t + 1] = i + 1 < n ? in[i + 1] : 0.0f;  // PLANTED
  if (t == 0) buf[0] = in[i];
  __syncthreads();
  out[i] = buf[t + 1] - buf[t];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  const int n = kBlock * kBlocks;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = float((i * i) % 23);
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&out, n * sizeof(float)));
  CHECK(cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const size_t smem = (fixed ? kBlock + 1 : kBlock) * sizeof(float);
  k_diff<<<kBlocks, kBlock, smem>>>(in, out, n);
  if (!fixed) return verdict("smem_dynamic", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  std::vector<float> got(n);
  CHECK(cudaMemcpy(got.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    const float want = (i + 1 < n ? h[i + 1] : 0.0f) - h[i];
    if (got[i] != want) {
      std::fprintf(stderr, "smem_dynamic --fixed: out[%d] = %g, expected %g\n", i, got[i], want);
      return 3;
    }
  }
  std::fprintf(stderr, "smem_dynamic --fixed: ok\n");
  return 0;
}
