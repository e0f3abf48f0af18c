// Planted bug: a buffer read through the non-coherent path (__ldg) while the same launch writes
// it. Each block smooths its 128 values in place: thread t reads its right neighbour with __ldg
// and, after a barrier, stores its own result over the data. The barrier orders the threads, so
// there is no race, but the PTX ISA allows ld.global.nc only for memory that is read-only for the
// kernel's whole lifetime: the next launch on a GPU (or a block the hardware runs later) may read
// stale bytes from the non-coherent cache.
// Expected: the checks report a store of bytes that the thread before it read with ld.global.nc
// (block (0,0,0) thread (96,0,0) and thread (95,0,0) under the default schedule), naming both, and the launch fails (cudaErrorLaunchFailure).
// --fixed: the kernel reads `in` with __ldg and writes a different buffer `out` (which it never
// reads that way): not reported.
#include "fault_common.h"

constexpr int kThreads = 128, kBlocks = 4, kN = kThreads * kBlocks;

__global__ void k_smooth(float* data, float* out, int fixed) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  const float right = threadIdx.x + 1 < kThreads ? __ldg(&data[i + 1]) : 0.0f;  // PARTNER
  const float mine = data[i];
  __syncthreads();
  const float v = 0.5f * (mine + right);
  if (fixed) out[i] = v;
  else data[i] = v;  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  static float h[kN], got[kN];
  for (int i = 0; i < kN; ++i) h[i] = float(i % 17);
  float *data = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&data, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(data, h, sizeof h, cudaMemcpyHostToDevice));
  k_smooth<<<kBlocks, kThreads>>>(data, out, fixed);
  if (!fixed) return verdict("nc_written", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i) {
    const int t = i % kThreads;
    const float want = 0.5f * (h[i] + (t + 1 < kThreads ? h[i + 1] : 0.0f));
    if (got[i] != want) return fixed_wrong("nc_written", "element %d: %g, expected %g", i, got[i], want);
  }
  CHECK(cudaFree(data));
  CHECK(cudaFree(out));
  return fixed_ok("nc_written");
}
