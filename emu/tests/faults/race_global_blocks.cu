// Planted bug: blocks of one launch adding into one global total with a plain read-modify-write.
// Each block sums its 128 values in shared memory (correctly, with barriers), then its thread 0
// does *total += sum. Nothing orders one block's write of the total before another block's read:
// a race across blocks, which loses updates on a GPU whenever two blocks overlap.
// Expected: the checks report a later block's read of the total against block 0's write, and the
// launch fails (cudaErrorLaunchFailure). --fixed: atomicAdd(total, sum), and the total is right.
#include "fault_common.h"

constexpr int kThreads = 128, kN = 1000;

__global__ void k_total(const int* in, int* total, int n, int fixed) {
  __shared__ int s[kThreads];
  const int t = threadIdx.x, i = blockIdx.x * kThreads + t;
  s[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int d = kThreads / 2; d > 0; d /= 2) {
    if (t < d) s[t] += s[t + d];
    __syncthreads();
  }
  if (t == 0) {
    if (fixed) atomicAdd(total, s[0]);
    else *total += s[0];  // PLANTED
  }
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  static int h[kN];
  int want = 0;
  for (int i = 0; i < kN; ++i) want += h[i] = (i * 13) % 29 - 14;
  int *in = nullptr, *total = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&total, sizeof(int)));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(total, 0, sizeof(int)));
  k_total<<<(kN + kThreads - 1) / kThreads, kThreads>>>(in, total, kN, fixed);
  if (!fixed) return verdict("race_global_blocks", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got = 0;
  CHECK(cudaMemcpy(&got, total, sizeof got, cudaMemcpyDeviceToHost));
  if (got != want) return fixed_wrong("race_global_blocks", "total %d, expected %d", got, want);
  CHECK(cudaFree(in));
  CHECK(cudaFree(total));
  return fixed_ok("race_global_blocks");
}
