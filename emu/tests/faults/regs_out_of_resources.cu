// Planted bug: a launch of 1024 threads per block of a kernel that needs more than 64 registers
// per thread. A block's registers must fit in the 65536 a block may have (each warp's rounded up
// to 256, for warps rounded up to a multiple of 4): at 65 or more registers 1024 threads do not.
// Expected: the launch is refused with cudaErrorLaunchOutOfResources before anything runs (no
// kernel message), and the error is not sticky. --fixed: 256 threads, which fit at any register
// count (255 registers: 8192 a warp, 8 warps), and every value comes back reversed.
#include <vector>

#include "fault_common.h"

constexpr int kLive = 80;  // values each thread keeps live across the barrier

// Each thread loads kLive values and stores them after a barrier, which loads cannot pass: all
// are live at once, so ptxas gives the kernel well over 64 registers.
__global__ void k_reverse_columns(const float* in, float* out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int n = gridDim.x * blockDim.x;
  float v[kLive];
#pragma unroll
  for (int j = 0; j < kLive; ++j) v[j] = in[j * n + t];
  __syncthreads();
#pragma unroll
  for (int j = 0; j < kLive; ++j) out[j * n + t] = v[kLive - 1 - j];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  const int threads = fixed ? 256 : 1024;
  const size_t n = size_t(threads) * kLive;
  std::vector<float> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = float(i);
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&out, n * sizeof(float)));
  CHECK(cudaMemcpy(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  k_reverse_columns<<<1, threads>>>(in, out);  // 1024 threads of a kernel of over 64 registers
  if (!fixed) {
    const int v = verdict("regs_out_of_resources", launch_result(), cudaErrorLaunchOutOfResources);
    if (v == 1 && (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess ||
                   cudaMemset(out, 0, sizeof(float)) != cudaSuccess)) {
      std::fprintf(stderr, "regs_out_of_resources: the refused launch left a sticky error\n");
      return 2;
    }
    return v;
  }
  CHECK(launch_result());
  std::vector<float> got(n);
  CHECK(cudaMemcpy(got.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int j = 0; j < kLive; ++j)
    for (int t = 0; t < threads; ++t)
      if (got[size_t(j) * threads + t] != host[size_t(kLive - 1 - j) * threads + t])
        return fixed_wrong("regs_out_of_resources", "out[%d][%d] = %g", j, t, got[size_t(j) * threads + t]);
  return fixed_ok("regs_out_of_resources");
}
