// Planted bug: accumulating into memory nobody cleared. cudaMalloc does not zero what it
// returns; the kernel adds into acc[i] as if it did.
// Expected: the checks report thread 0's read of acc[0] ("not written since the allocation")
// and the launch fails (cudaErrorLaunchFailure). --fixed: cudaMemset(acc, 0) before the launch.
#include "fault_common.h"

constexpr int kThreads = 128, kN = 1000;

__global__ void k_accumulate(const float* __restrict__ in, float* acc, int n) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i < n) acc[i] += in[i];  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  static float h[kN];
  for (int i = 0; i < kN; ++i) h[i] = float(i % 13) - 6.f;
  float *in = nullptr, *acc = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&acc, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  if (fixed) CHECK(cudaMemset(acc, 0, sizeof h));
  k_accumulate<<<(kN + kThreads - 1) / kThreads, kThreads>>>(in, acc, kN);
  if (!fixed) return verdict("init_global", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  static float got[kN];
  CHECK(cudaMemcpy(got, acc, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i)
    if (got[i] != h[i]) return fixed_wrong("init_global", "acc[%d] = %g, expected %g", i, got[i], h[i]);
  CHECK(cudaFree(in));
  CHECK(cudaFree(acc));
  return fixed_ok("init_global");
}
