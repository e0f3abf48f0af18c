// The debugging aids on small kernels (emu/tests/debug/debug_test.py runs them):
//   k_five    out[1] = v: five PTX instructions (two parameter loads, cvta, the store, ret); the
//             trace must show each of them, the values they write and the store's address
//   k_fill    out[i] = i * i, except for the planted bug: thread 37 stores 1000 (the watch on
//             out[37] must name that one store, and nothing else of the launch)
//   k_halves  lanes below 16 sum a prefix of `in` in a loop, the others scale their element: the
//             warp splits at the branch and meets again at the store (the divergence view)
// The program prints the device addresses the test needs, then "ok".
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(call)                                                         \
  do {                                                                      \
    const cudaError_t e_ = (call);                                          \
    if (e_ != cudaSuccess) {                                                \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorName(e_)); \
      std::exit(1);                                                         \
    }                                                                       \
  } while (0)

__global__ void k_five(int* out, int v) { out[1] = v; }

__global__ void k_fill(int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = i * i;
  if (i == 37) v = 1000;  // PLANTED
  out[i] = v;
}

__global__ void k_halves(const int* in, int* out) {
  const int lane = threadIdx.x;
  int v = 0;
  if (lane < 16) {
    for (int k = 0; k <= lane; ++k) v += in[k];  // LOWER
  } else {
    v = in[lane] * 7;  // UPPER
  }
  out[lane] = v;  // MEET
}

int main(int argc, char** argv) {
  const int n = 100;
  int *out = nullptr, *in = nullptr;
  CHECK(cudaMalloc(&out, n * sizeof(int)));
  CHECK(cudaMalloc(&in, 32 * sizeof(int)));
  int host[32];
  for (int i = 0; i < 32; ++i) host[i] = i;
  CHECK(cudaMemcpy(in, host, sizeof host, cudaMemcpyHostToDevice));
  std::printf("out %p\nin %p\n", static_cast<void*>(out), static_cast<void*>(in));
  const char* which = argc > 1 ? argv[1] : "all";
  if (!std::strcmp(which, "five") || !std::strcmp(which, "all")) k_five<<<1, 1>>>(out, 20);
  if (!std::strcmp(which, "fill") || !std::strcmp(which, "all")) k_fill<<<(n + 63) / 64, 64>>>(out, n);
  if (!std::strcmp(which, "halves") || !std::strcmp(which, "all")) k_halves<<<1, 32>>>(in, out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  std::printf("ok\n");
  return 0;
}
