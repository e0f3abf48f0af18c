// Planted bug: block 1 of a cluster reads block 0's shared memory after the cluster barrier,
// and block 0 exits right after that barrier. A block's shared memory ends with the block; the
// CUDA Programming Guide asks that every distributed shared memory access be complete before
// the owning block exits, which a final cluster.sync() guarantees. Without it block 0 may be
// gone when block 1 reads.
// Expected: the checks report the access that nothing orders before block 0's exit, and the
// launch fails (cudaErrorLaunchFailure). --fixed: cluster.sync() before the end of the kernel.
#include <cooperative_groups.h>

#include "fault_common.h"

namespace cg = cooperative_groups;

constexpr int kThreads = 32;

__global__ void __cluster_dims__(2, 1, 1) k_fetch(int* out, int fixed) {
  __shared__ int value[kThreads];
  cg::cluster_group cl = cg::this_cluster();
  const unsigned rank = cl.block_rank();
  const int t = threadIdx.x;
  value[t] = 5 * t + int(rank);
  cl.sync();
  if (rank == 1) {
    const int* peer = cl.map_shared_rank(value, 0);
    out[t] = peer[t];  // PLANTED
  }
  if (fixed) cl.sync();
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int* out = nullptr;
  CHECK(cudaMalloc(&out, kThreads * sizeof(int)));
  k_fetch<<<2, kThreads>>>(out, fixed);
  if (!fixed) return verdict("dsmem_exit", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int h[kThreads];
  CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t)
    if (h[t] != 5 * t) return fixed_wrong("dsmem_exit", "out[%d] = %d, expected %d", t, h[t], 5 * t);
  CHECK(cudaFree(out));
  return fixed_ok("dsmem_exit");
}
