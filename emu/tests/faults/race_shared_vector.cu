// Planted bug: one warp writes the last word of every 16-byte group of a shared buffer and another
// warp, with no __syncthreads() between, reads the groups as float4: the vector load overlaps the
// other warp's stores in its last word only. On a GPU the reader sees old or new words depending on
// the warps' timing. (The checks settle a warp's vector accesses of words written before the
// block's last barrier together; this program shows every word of the vector is checked.)
// Expected: the checks report a thread of warp 0 reading 16 bytes against the thread of warp 1
// that wrote the group's last word (the emulator runs warp 1 on first, as the last warp at the
// barrier), and the launch fails (cudaErrorLaunchFailure). --fixed: __syncthreads() between.
#include "fault_common.h"

constexpr int kWarpSize = 32;

__global__ void k_groups(float* out, int fixed) {
  __shared__ float4 s[kWarpSize];
  const int t = threadIdx.x, lane = t % kWarpSize;
  if (t >= kWarpSize) s[lane] = make_float4(lane, lane, lane, lane);
  __syncthreads();
  if (t >= kWarpSize) reinterpret_cast<float*>(s)[4 * lane + 3] = -1.0f;  // PARTNER
  if (fixed) __syncthreads();
  if (t < kWarpSize) {
    const float4 v = s[lane];  // PLANTED
    out[lane] = v.x + v.y + v.z + v.w;
  }
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  float* out = nullptr;
  CHECK(cudaMalloc(&out, kWarpSize * sizeof(float)));
  k_groups<<<1, 2 * kWarpSize>>>(out, fixed);
  if (!fixed) return verdict("race_shared_vector", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  float got[kWarpSize];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kWarpSize; ++i)
    if (got[i] != 3.0f * i - 1.0f) return fixed_wrong("race_shared_vector", "sum %d is %g, expected %g", i, got[i], 3.0f * i - 1.0f);
  CHECK(cudaFree(out));
  return fixed_ok("race_shared_vector");
}
