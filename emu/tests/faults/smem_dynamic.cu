// Planted bug: a write past the dynamic shared-memory window. The kernel stages blockDim.x + 1
// floats (its inputs and one halo element) in extern __shared__ memory, but the launch sizes the
// window for blockDim.x floats only, so thread 127 of block 0 stores buf[128], just past the
// block's 512 bytes. Expected: cudaErrorIllegalAddress and the emulator naming that shared
// store. --fixed: the launch asks for (blockDim.x + 1) floats and the differences come out right.
#include <vector>

#include "fault_common.h"

constexpr int kBlock = 128;
constexpr int kBlocks = 3;

// out[i] = in[i + 1] - in[i], with in[n] read as 0: buf[0..blockDim.x] holds
// in[base..base+blockDim].
__global__ void k_diff(const float* in, float* out, int n) {
  extern __shared__ float buf[];
  const int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  // The planted bug: t + 1 == blockDim.x is outside the window.
  buf[t + 1] = i + 1 < n ? in[i + 1] : 0.0f;  // PLANTED
  if (t == 0) buf[0] = in[i];
  __syncthreads();
  out[i] = buf[t + 1] - buf[t];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  const int n = kBlock * kBlocks;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = float((i * i) % 23);
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&out, n * sizeof(float)));
  CHECK(cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const size_t smem = (fixed ? kBlock + 1 : kBlock) * sizeof(float);
  k_diff<<<kBlocks, kBlock, smem>>>(in, out, n);
  if (!fixed) return verdict("smem_dynamic", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  std::vector<float> got(n);
  CHECK(cudaMemcpy(got.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    const float want = (i + 1 < n ? h[i + 1] : 0.0f) - h[i];
    if (got[i] != want)
      return fixed_wrong("smem_dynamic", "out[%d] = %g, expected %g", i, got[i], want);
  }
  return fixed_ok("smem_dynamic");
}
