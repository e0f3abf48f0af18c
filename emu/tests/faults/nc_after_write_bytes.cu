// Planted bug: nc_after_write a byte at a time. Each thread reads a byte the kernel never writes
// through `flags_in` (a const __restrict__ pointer, which nvcc compiles to ld.global.nc: allowed),
// writes its own byte of the same buffer, and after a barrier reads its neighbour's byte through
// `flags_in` as well. The barrier makes it no race, but ld.global.nc is allowed only for memory
// the kernel never writes: a GPU may serve the read from its non-coherent cache, stale.
// Expected: the checks report a non-coherent load (thread (32,0,0) under the default schedule) of
// the byte its neighbour (33,0,0) wrote, naming both, and the launch fails
// (cudaErrorLaunchFailure). --fixed: the neighbour's byte is read with a plain load (`flags`).
#include "fault_common.h"

constexpr int kThreads = 64;

__global__ void k_neighbour(unsigned char* flags, const unsigned char* __restrict__ flags_in,
                            unsigned char* __restrict__ out, int fixed) {
  const int t = threadIdx.x, next = (t + 1) % kThreads;
  const unsigned char add = flags_in[kThreads + t];  // never written by the kernel
  flags[t] = (unsigned char)(5 * t + 1);  // PARTNER
  __syncthreads();
  if (fixed) out[t] = (unsigned char)(flags[next] + add);
  else out[t] = (unsigned char)(flags_in[next] + add);  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  unsigned char *flags = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&flags, 2 * kThreads));
  CHECK(cudaMalloc(&out, kThreads));
  CHECK(cudaMemset(flags, 2, 2 * kThreads));
  k_neighbour<<<1, kThreads>>>(flags, flags, out, fixed);
  if (!fixed) return verdict("nc_after_write_bytes", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  unsigned char got[kThreads];
  CHECK(cudaMemcpy(got, out, kThreads, cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t) {
    const int want = (5 * ((t + 1) % kThreads) + 3) & 0xFF;
    if (got[t] != want) return fixed_wrong("nc_after_write_bytes", "byte %d is %d, expected %d", t, got[t], want);
  }
  CHECK(cudaFree(flags));
  CHECK(cudaFree(out));
  return fixed_ok("nc_after_write_bytes");
}
