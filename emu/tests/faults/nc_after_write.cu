// Planted bug: a load through the non-coherent path (a const __restrict__ pointer, which nvcc
// compiles to ld.global.nc) of bytes another thread of the same launch wrote. Each block's thread 0
// writes the block's scale factor, a barrier orders that write before the other threads, and they
// read it through `scale_in`, the same buffer declared const __restrict__. The barrier makes it
// no race, but the PTX ISA allows ld.global.nc only for memory that is read-only for the kernel's
// whole lifetime: a GPU may serve the read from its non-coherent cache, stale.
// Expected: the checks report a non-coherent load (block (0,0,0) thread (32,0,0) under the default
// schedule) of the bytes thread (0,0,0) wrote, naming both, and the launch fails (cudaErrorLaunchFailure).
// --fixed: the scale factors come from a separate buffer that the kernel never writes.
#include "fault_common.h"

constexpr int kThreads = 64, kBlocks = 3, kN = kThreads * kBlocks;

__global__ void k_scale(float* scale, const float* __restrict__ scale_in, const float* __restrict__ x,
                        float* __restrict__ y) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (threadIdx.x == 0) scale[blockIdx.x] = float(blockIdx.x + 1);  // PARTNER
  __syncthreads();
  y[i] = x[i] * scale_in[blockIdx.x];  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  static float hx[kN], hy[kN];
  for (int i = 0; i < kN; ++i) hx[i] = float(i % 13);
  const float hs[kBlocks] = {1.0f, 2.0f, 3.0f};
  float *scale = nullptr, *fixed_scale = nullptr, *x = nullptr, *y = nullptr;
  CHECK(cudaMalloc(&scale, sizeof hs));
  CHECK(cudaMalloc(&fixed_scale, sizeof hs));
  CHECK(cudaMalloc(&x, sizeof hx));
  CHECK(cudaMalloc(&y, sizeof hy));
  CHECK(cudaMemcpy(fixed_scale, hs, sizeof hs, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice));
  k_scale<<<kBlocks, kThreads>>>(scale, fixed ? fixed_scale : scale, x, y);
  if (!fixed) return verdict("nc_after_write", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  CHECK(cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i) {
    const float want = hx[i] * hs[i / kThreads];
    if (hy[i] != want) return fixed_wrong("nc_after_write", "element %d: %g, expected %g", i, hy[i], want);
  }
  CHECK(cudaFree(scale));
  CHECK(cudaFree(fixed_scale));
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  return fixed_ok("nc_after_write");
}
