// Planted bug: one block writes a buffer a byte per thread and, in the same launch, another block
// reads those bytes. Neighbouring threads writing neighbouring bytes do not conflict (the checks
// keep such words byte by byte), but nothing orders block 0's writes before block 1's reads: a
// race across blocks, which reads stale bytes on a GPU whenever block 1 runs first or alongside.
// Expected: the checks report block 1's read of a byte against block 0's write of it, and the
// launch fails (cudaErrorLaunchFailure). --fixed: the bytes are written by one launch and read by
// the next, and every byte read is the one written.
#include "fault_common.h"

constexpr int kBytes = 64;

__global__ void k_write(unsigned char* b) { b[threadIdx.x] = (unsigned char)(3 * threadIdx.x + 1); }

__global__ void k_read(const unsigned char* b, unsigned char* out) {
  out[threadIdx.x] = (unsigned char)(b[threadIdx.x] + 1);
}

// Block 0 writes the bytes, block 1 reads them.
__global__ void k_write_read(unsigned char* b, unsigned char* out) {
  if (blockIdx.x == 0) b[threadIdx.x] = (unsigned char)(3 * threadIdx.x + 1);  // PARTNER
  else out[threadIdx.x] = (unsigned char)(b[threadIdx.x] + 1);  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  unsigned char *b = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&b, kBytes));
  CHECK(cudaMalloc(&out, kBytes));
  CHECK(cudaMemset(b, 0, kBytes));
  if (!fixed) {
    k_write_read<<<2, kBytes>>>(b, out);
    return verdict("race_global_bytes", launch_result(), cudaErrorLaunchFailure);
  }
  k_write<<<1, kBytes>>>(b);
  CHECK(launch_result());
  k_read<<<1, kBytes>>>(b, out);
  CHECK(launch_result());
  unsigned char got[kBytes];
  CHECK(cudaMemcpy(got, out, kBytes, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kBytes; ++i)
    if (got[i] != (unsigned char)(3 * i + 2))
      return fixed_wrong("race_global_bytes", "byte %d is %d, expected %d", i, got[i], (3 * i + 2) & 0xFF);
  CHECK(cudaFree(b));
  CHECK(cudaFree(out));
  return fixed_ok("race_global_bytes");
}
