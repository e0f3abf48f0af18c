// Planted bug: unbounded recursion. A recursive device function measures the depth of a binary
// tree stored as child-index arrays; the planted tree has a cycle (leaf 11, a child of node 5,
// names node 5 as its left child), so the recursion never ends. On a GPU it would overflow the
// thread's stack; the emulator stops it at its call-depth limit. Expected:
// cudaErrorIllegalInstruction and the emulator naming the call depth, at the recursive call.
// --fixed: the cycle is cut and every depth is right.
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

constexpr int kNodes = 16;

// Both children are visited, so neither call is a tail call the compiler could turn into a loop.
__device__ __noinline__ int depth(const int* left, const int* right, int node) {
  if (node < 0) return 0;
  // The planted bug: on the cycle this recurses without end.
  const int l = depth(left, right, left[node]);  // PLANTED
  const int r = depth(left, right, right[node]);
  return 1 + max(l, r);
}

__global__ void k_depths(const int* left, const int* right, int* out) {
  out[threadIdx.x] = depth(left, right, int(threadIdx.x));
}

// The same depth on the host (the fixed tree only).
static int host_depth(const int* left, const int* right, int node) {
  if (node < 0) return 0;
  return 1 + std::max(host_depth(left, right, left[node]), host_depth(left, right, right[node]));
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  int left[kNodes], right[kNodes];
  for (int i = 0; i < kNodes; ++i) {  // a heap-shaped tree: children 2i+1 and 2i+2
    left[i] = 2 * i + 1 < kNodes ? 2 * i + 1 : -1;
    right[i] = 2 * i + 2 < kNodes ? 2 * i + 2 : -1;
  }
  // Node 11 is a leaf under node 5 (5's children are 11 and 12); pointing its left child back
  // at 5 makes the cycle 5 -> 11 -> 5. The walks from 0, 2, 5 and 11 run into it.
  if (!fixed) left[11] = 5;
  int *d_left = nullptr, *d_right = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&d_left, sizeof left));
  CHECK(cudaMalloc(&d_right, sizeof right));
  CHECK(cudaMalloc(&out, kNodes * sizeof(int)));
  CHECK(cudaMemcpy(d_left, left, sizeof left, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_right, right, sizeof right, cudaMemcpyHostToDevice));
  k_depths<<<1, kNodes>>>(d_left, d_right, out);
  if (!fixed) return verdict("recursion_depth", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[kNodes];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kNodes; ++i)
    if (got[i] != host_depth(left, right, i)) {
      std::fprintf(stderr, "recursion_depth --fixed: depth(%d) = %d, expected %d\n", i, got[i],
                   host_depth(left, right, i));
      return 3;
    }
  std::fprintf(stderr, "recursion_depth --fixed: ok\n");
  return 0;
}
