// Planted bug: race_global_bytes the other way round. One block reads a buffer a byte per thread
// and, in the same launch, another block overwrites those bytes. Nothing orders block 0's reads
// before block 1's writes: on a GPU block 0 reads the old bytes or the new ones, depending on
// which block runs first.
// Expected: the checks report block 1's write of a byte against block 0's read of it, and the
// launch fails (cudaErrorLaunchFailure). --fixed: the bytes are read by one launch and overwritten
// by the next, and every byte read is the old one.
#include "fault_common.h"

constexpr int kBytes = 64;

__global__ void k_read(const unsigned char* b, unsigned char* out) {
  out[threadIdx.x] = (unsigned char)(b[threadIdx.x] + 1);
}

__global__ void k_write(unsigned char* b) { b[threadIdx.x] = (unsigned char)(3 * threadIdx.x + 1); }

// Block 0 reads the bytes, block 1 overwrites them.
__global__ void k_read_write(unsigned char* b, unsigned char* out) {
  if (blockIdx.x == 0) out[threadIdx.x] = (unsigned char)(b[threadIdx.x] + 1);  // PARTNER
  else b[threadIdx.x] = (unsigned char)(3 * threadIdx.x + 1);  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  unsigned char *b = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&b, kBytes));
  CHECK(cudaMalloc(&out, kBytes));
  CHECK(cudaMemset(b, 7, kBytes));
  if (!fixed) {
    k_read_write<<<2, kBytes>>>(b, out);
    return verdict("race_global_bytes_write", launch_result(), cudaErrorLaunchFailure);
  }
  k_read<<<1, kBytes>>>(b, out);
  CHECK(launch_result());
  k_write<<<1, kBytes>>>(b);
  CHECK(launch_result());
  unsigned char got[kBytes];
  CHECK(cudaMemcpy(got, out, kBytes, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kBytes; ++i)
    if (got[i] != 8) return fixed_wrong("race_global_bytes_write", "byte %d is %d, expected 8", i, got[i]);
  CHECK(cudaFree(b));
  CHECK(cudaFree(out));
  return fixed_ok("race_global_bytes_write");
}
