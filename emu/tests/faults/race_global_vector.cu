// Planted bug: one block writes the last word of every 16-byte group of a buffer and, in the same
// launch, another block reads the groups as float4: nothing orders block 0's stores before block
// 1's loads, which on a GPU see old or new words depending on the blocks' timing. (The checks
// settle a warp's vector accesses of one allocation together; this program shows every word of the
// vector is checked.)
// Expected: the checks report block 1 reading 16 bytes against block 0's write of the group's last
// word, and the launch fails (cudaErrorLaunchFailure). --fixed: the words are written by one launch
// and the groups read by the next.
#include "fault_common.h"

constexpr int kThreads = 64;

__global__ void k_write(float* b) { b[4 * threadIdx.x + 3] = -1.0f; }

__global__ void k_read(const float4* b, float* out) {
  const float4 v = b[threadIdx.x];
  out[threadIdx.x] = v.x + v.y + v.z + v.w;
}

// Block 0 writes the last words, block 1 reads the groups.
__global__ void k_write_read(float* b, float* out) {
  if (blockIdx.x == 0) {
    b[4 * threadIdx.x + 3] = -1.0f;  // PARTNER
  } else {
    const float4 v = reinterpret_cast<const float4*>(b)[threadIdx.x];  // PLANTED
    out[threadIdx.x] = v.x + v.y + v.z + v.w;
  }
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  float h[4 * kThreads];
  for (int i = 0; i < 4 * kThreads; ++i) h[i] = float(i / 4);
  float *b = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&b, sizeof h));
  CHECK(cudaMalloc(&out, kThreads * sizeof(float)));
  CHECK(cudaMemcpy(b, h, sizeof h, cudaMemcpyHostToDevice));
  if (!fixed) {
    k_write_read<<<2, kThreads>>>(b, out);
    return verdict("race_global_vector", launch_result(), cudaErrorLaunchFailure);
  }
  k_write<<<1, kThreads>>>(b);
  CHECK(launch_result());
  k_read<<<1, kThreads>>>(reinterpret_cast<const float4*>(b), out);
  CHECK(launch_result());
  float got[kThreads];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kThreads; ++i)
    if (got[i] != 3.0f * i - 1.0f) return fixed_wrong("race_global_vector", "sum %d is %g, expected %g", i, got[i], 3.0f * i - 1.0f);
  CHECK(cudaFree(b));
  CHECK(cudaFree(out));
  return fixed_ok("race_global_vector");
}
