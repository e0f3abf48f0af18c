// Planted bug: a read past a static __shared__ array. A 3-point stencil stages one tile of 128
// floats per block and reads tile[t + 1] without a halo, so thread 127 of block 0 loads
// tile[128], just past the block's 512 bytes of shared memory. Expected:
// cudaErrorIllegalAddress and the emulator naming that shared load. --fixed: the right
// neighbour is clamped to the tile and the results match the host's.
#include <vector>

#include "fault_common.h"

constexpr int kTile = 128;
constexpr int kBlocks = 4;

__global__ void k_pair_sum(const float* in, float* out, int fixed) {
  __shared__ float tile[kTile];
  const int t = threadIdx.x, base = blockIdx.x * kTile;
  tile[t] = in[base + t];
  __syncthreads();
  const int right = fixed ? min(t + 1, kTile - 1) : t + 1;
  // The planted bug: right == 128 for the last thread.
  out[base + t] = tile[t] + tile[right];  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  const int n = kTile * kBlocks;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = float(i % 11);
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&out, n * sizeof(float)));
  CHECK(cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  k_pair_sum<<<kBlocks, kTile>>>(in, out, fixed);
  if (!fixed) return verdict("smem_static", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  std::vector<float> got(n);
  CHECK(cudaMemcpy(got.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    const int t = i % kTile, r = t + 1 < kTile ? i + 1 : i;
    if (got[i] != h[i] + h[r])
      return fixed_wrong("smem_static", "out[%d] = %g, expected %g", i, got[i], h[i] + h[r]);
  }
  return fixed_ok("smem_static");
}
