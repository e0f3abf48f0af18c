// Planted bug: thread 0 of the cluster's first block skips the cluster barrier (a cluster.sync()
// in divergent code) and waits at __syncthreads() for the rest of its block, which waits at the
// cluster barrier for thread 0. Every warp of the cluster waits, and none can go on: on a GPU the
// kernel hangs.
// Expected: the emulator reports the deadlock, naming each waiting warp with its barrier and
// source line, and the launch fails (cudaErrorLaunchFailure). --fixed: every thread takes part.
#include <cooperative_groups.h>

#include "fault_common.h"

namespace cg = cooperative_groups;

constexpr int kThreads = 64;

__global__ void __cluster_dims__(2, 1, 1) k_exchange(int* out, int fixed) {
  __shared__ int mine[kThreads];
  cg::cluster_group cl = cg::this_cluster();
  const unsigned rank = cl.block_rank();
  const int t = threadIdx.x;
  mine[t] = 10 * t + int(rank);
  // cluster.sync(), written out so that the report can name this line (cg's is inlined twice).
  if (fixed || t != 0 || rank != 0) asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");  // PLANTED
  __syncthreads();  // PARTNER
  const int* other = cl.map_shared_rank(mine, rank ^ 1);
  out[rank * kThreads + t] = other[t];
  cl.sync();
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int* out = nullptr;
  CHECK(cudaMalloc(&out, 2 * kThreads * sizeof(int)));
  k_exchange<<<2, kThreads>>>(out, fixed);
  if (!fixed) return verdict("cluster_deadlock", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int h[2 * kThreads];
  CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  for (int r = 0; r < 2; ++r)
    for (int t = 0; t < kThreads; ++t)
      if (h[r * kThreads + t] != 10 * t + (r ^ 1))
        return fixed_wrong("cluster_deadlock", "out[%d] = %d, expected %d", r * kThreads + t, h[r * kThreads + t],
                           10 * t + (r ^ 1));
  CHECK(cudaFree(out));
  return fixed_ok("cluster_deadlock");
}
