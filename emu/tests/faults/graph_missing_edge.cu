// Planted bug: a graph of two kernel nodes, the second reading what the first writes, built
// without the edge between them. Nodes that no path of edges orders may run in any order or at
// once (CUDA Graphs: a node runs once all its dependencies have completed, and only then).
// Expected: the emulator reports the two nodes' accesses as unordered, naming both kernels and
// their launches, and the program fails (cudaErrorLaunchFailure). --fixed: the edge is there.
#include <vector>

#include "fault_common.h"

constexpr int kN = 1024, kBlock = 128;

__global__ void fill(int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 5 * i + 2;
}
__global__ void twice(const int* in, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2 * in[i];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int *a = nullptr, *b = nullptr;
  CHECK(cudaMalloc(&a, kN * sizeof(int)));
  CHECK(cudaMalloc(&b, kN * sizeof(int)));
  int n = kN;
  void* fill_args[] = {&a, &n};
  void* twice_args[] = {&a, &b, &n};
  cudaGraph_t g;
  CHECK(cudaGraphCreate(&g, 0));
  cudaKernelNodeParams p{};
  p.gridDim = dim3(kN / kBlock);
  p.blockDim = dim3(kBlock);
  p.func = reinterpret_cast<void*>(fill);
  p.kernelParams = fill_args;
  cudaGraphNode_t first, second;
  CHECK(cudaGraphAddKernelNode(&first, g, nullptr, 0, &p));
  p.func = reinterpret_cast<void*>(twice);
  p.kernelParams = twice_args;
  CHECK(cudaGraphAddKernelNode(&second, g, fixed ? &first : nullptr, fixed ? 1 : 0, &p));  // PLANTED
  cudaGraphExec_t x;
  CHECK(cudaGraphInstantiate(&x, g, 0));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  CHECK(cudaGraphLaunch(x, s));
  const cudaError_t e = cudaStreamSynchronize(s);
  if (!fixed) return verdict("graph_missing_edge", e, cudaErrorLaunchFailure);
  CHECK(e);
  std::vector<int> got(kN);
  CHECK(cudaMemcpy(got.data(), b, kN * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i)
    if (got[i] != 2 * (5 * i + 2)) return fixed_wrong("graph_missing_edge", "b[%d] = %d, expected %d", i, got[i], 2 * (5 * i + 2));
  CHECK(cudaGraphExecDestroy(x));
  CHECK(cudaGraphDestroy(g));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  return fixed_ok("graph_missing_edge");
}
