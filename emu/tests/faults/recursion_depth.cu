// Planted bug: unbounded recursion. A recursive device function measures the depth of a binary
// tree stored as child-index arrays; the planted tree has a cycle (leaf 11, a child of node 5,
// names node 5 as its left child), so the recursion never ends. On a GPU it would overflow the
// thread's stack; the emulator stops it at its call-depth limit. Expected:
// cudaErrorIllegalInstruction and the emulator naming the call depth, at the recursive call.
// --fixed: the cycle is cut and every depth is right.
#include <algorithm>

#include "fault_common.h"

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
  const bool fixed = wants_fixed(argc, argv);
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
    if (got[i] != host_depth(left, right, i))
      return fixed_wrong("recursion_depth", "depth(%d) = %d, expected %d", i, got[i],
                         host_depth(left, right, i));
  return fixed_ok("recursion_depth");
}
