// Planted bug: a block writes into its neighbour's shared memory (distributed shared memory, a
// cluster of 2) and the neighbour reads it after only __syncthreads(), which orders the threads
// of one block, not the blocks of a cluster. Nothing orders the write of block 0 with the read
// of block 1: a race between the CTAs of a cluster, which on a GPU reads the old value whenever
// the reader runs first.
// Expected: the checks report the race on distributed shared memory and the launch fails
// (cudaErrorLaunchFailure). --fixed: cluster.sync() between the write and the read.
#include <cooperative_groups.h>

#include "fault_common.h"

namespace cg = cooperative_groups;

constexpr int kThreads = 64;

__global__ void __cluster_dims__(2, 1, 1) k_pass(int* out, int fixed) {
  __shared__ int inbox[kThreads];
  cg::cluster_group cl = cg::this_cluster();
  const unsigned rank = cl.block_rank();
  const int t = threadIdx.x;
  inbox[t] = 0;
  cl.sync();  // both blocks cleared their inbox
  if (rank == 0) {
    int* peer = cl.map_shared_rank(inbox, 1);
    peer[t] = 3 * t + 1;  // PARTNER
  }
  if (fixed) cl.sync();
  else __syncthreads();
  if (rank == 1) out[t] = inbox[t];  // PLANTED
  cl.sync();  // no block exits while the other may still use its shared memory
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int* out = nullptr;
  CHECK(cudaMalloc(&out, kThreads * sizeof(int)));
  k_pass<<<2, kThreads>>>(out, fixed);
  if (!fixed) return verdict("race_dsmem", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int h[kThreads];
  CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t)
    if (h[t] != 3 * t + 1) return fixed_wrong("race_dsmem", "out[%d] = %d, expected %d", t, h[t], 3 * t + 1);
  CHECK(cudaFree(out));
  return fixed_ok("race_dsmem");
}
