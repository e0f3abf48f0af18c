// Planted bug: a block stages bytes in shared memory, one warp writing them and another reading
// them, with no __syncthreads() between: nothing orders warp 1's stores before warp 0's loads, and
// on a GPU warp 0 reads stale bytes whenever it runs ahead. Neighbouring threads writing
// neighbouring bytes do not conflict (the checks keep such words byte by byte). (The checks settle
// byte accesses of words written before the block's last barrier together; this program shows a
// byte written since is still checked.)
// Expected: the checks report a thread of warp 0 reading a byte against the thread of warp 1 that
// wrote it (the emulator runs warp 1 on first, as the last warp at the barrier), and the launch
// fails (cudaErrorLaunchFailure). --fixed: __syncthreads() between the stores and the loads.
#include "fault_common.h"

constexpr int kWarpSize = 32;

__global__ void k_stage(const unsigned char* in, unsigned char* out, int fixed) {
  __shared__ unsigned char s[kWarpSize];
  const int t = threadIdx.x, lane = t % kWarpSize;
  if (t >= kWarpSize) s[lane] = 0;
  __syncthreads();
  if (t >= kWarpSize) s[lane] = in[lane];  // PARTNER
  if (fixed) __syncthreads();
  if (t < kWarpSize) out[lane] = (unsigned char)(s[lane] + 1);  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  unsigned char h[kWarpSize];
  for (int i = 0; i < kWarpSize; ++i) h[i] = (unsigned char)(7 * i + 3);
  unsigned char *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_stage<<<1, 2 * kWarpSize>>>(in, out, fixed);
  if (!fixed) return verdict("race_shared_bytes", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  unsigned char got[kWarpSize];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kWarpSize; ++i)
    if (got[i] != (unsigned char)(h[i] + 1))
      return fixed_wrong("race_shared_bytes", "byte %d is %d, expected %d", i, got[i], (h[i] + 1) & 0xFF);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("race_shared_bytes");
}
