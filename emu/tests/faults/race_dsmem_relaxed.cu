// Planted bug: block 0 writes into block 1's shared memory (a cluster of 2), then the cluster
// barrier is passed with barrier.cluster.arrive.relaxed: the wait still waits for every thread,
// but a relaxed arrive releases nothing (the PTX ISA: no memory ordering for the accesses before
// it), so block 1's read of what block 0 wrote is not ordered after the write.
// Expected: the checks report the race on distributed shared memory and the launch fails
// (cudaErrorLaunchFailure). --fixed: barrier.cluster.arrive (.release, the default).
#include <cooperative_groups.h>

#include "fault_common.h"

namespace cg = cooperative_groups;

constexpr int kThreads = 64;

__global__ void __cluster_dims__(2, 1, 1) k_relay(int* out, int fixed) {
  __shared__ int inbox[kThreads];
  cg::cluster_group cl = cg::this_cluster();
  const unsigned rank = cl.block_rank();
  const int t = threadIdx.x;
  inbox[t] = 0;
  cl.sync();
  if (rank == 0) {
    int* peer = cl.map_shared_rank(inbox, 1);
    peer[t] = 7 * t + 2;  // PARTNER
  }
  if (fixed) asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
  else asm volatile("barrier.cluster.arrive.relaxed;\n\tbarrier.cluster.wait;" ::: "memory");
  if (rank == 1) out[t] = inbox[t];  // PLANTED
  cl.sync();
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int* out = nullptr;
  CHECK(cudaMalloc(&out, kThreads * sizeof(int)));
  k_relay<<<2, kThreads>>>(out, fixed);
  if (!fixed) return verdict("race_dsmem_relaxed", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int h[kThreads];
  CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t)
    if (h[t] != 7 * t + 2) return fixed_wrong("race_dsmem_relaxed", "out[%d] = %d, expected %d", t, h[t], 7 * t + 2);
  CHECK(cudaFree(out));
  return fixed_ok("race_dsmem_relaxed");
}
