// Planted bug: a halo that is never loaded. Each block of 128 threads stages its inputs in
// shared memory and computes forward differences, in[i + 1] - in[i]; the tile has room for one
// element past the block, but no thread loads it, so the last thread reads a shared word that
// nothing wrote (on a GPU: whatever the previous block on that SM left there).
// Expected: the checks report thread 127's read of the word at 0x200 and the launch fails
// (cudaErrorLaunchFailure). --fixed: thread 0 also loads the halo element.
#include "fault_common.h"

constexpr int kThreads = 128, kN = 1000;

__global__ void k_diff(const float* in, float* out, int n, int fixed) {
  __shared__ float s[kThreads + 1];
  const int t = threadIdx.x, i = blockIdx.x * kThreads + t;
  s[t] = i < n ? in[i] : 0.f;
  if (fixed && t == 0) s[kThreads] = i + kThreads < n ? in[i + kThreads] : 0.f;
  __syncthreads();
  if (i < n - 1) out[i] = s[t + 1] - s[t];  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  static float h[kN];
  for (int i = 0; i < kN; ++i) h[i] = float((i * i) % 97);
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_diff<<<(kN + kThreads - 1) / kThreads, kThreads>>>(in, out, kN, fixed);
  if (!fixed) return verdict("init_shared", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  static float got[kN];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN - 1; ++i)
    if (got[i] != h[i + 1] - h[i])
      return fixed_wrong("init_shared", "out[%d] = %g, expected %g", i, got[i], h[i + 1] - h[i]);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("init_shared");
}
