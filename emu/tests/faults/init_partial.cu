// Planted bug: an off-by-one in a byte-wise fill, found a copy later. One kernel writes a buffer
// of 64 bytes one byte per thread but stops at byte 62; the buffer is copied device to device
// (the copy carries the unwritten byte along) and a second kernel reads the copy as 16 words.
// Only the last word has an unwritten byte, and only one of its four.
// Expected: the checks report thread 15's read of the word at offset 60 with 1 of its 4 bytes
// unwritten, and the launch fails (cudaErrorLaunchFailure). --fixed: all 64 bytes are written;
// byte-granular writes by neighbouring threads and the device-to-device copy then read clean.
#include "fault_common.h"

constexpr int kBytes = 64, kWords = kBytes / 4;

__global__ void k_fill_bytes(unsigned char* b, int n) {
  const int i = threadIdx.x;
  if (i < n) b[i] = (unsigned char)(3 * i + 1);
}

__global__ void k_sum_words(const unsigned* w, unsigned* out) {
  const int i = threadIdx.x;
  out[i] = w[i] + 1u;  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  unsigned char *bytes = nullptr, *copy = nullptr;
  unsigned* out = nullptr;
  CHECK(cudaMalloc(&bytes, kBytes));
  CHECK(cudaMalloc(&copy, kBytes));
  CHECK(cudaMalloc(&out, kWords * sizeof(unsigned)));
  k_fill_bytes<<<1, kBytes>>>(bytes, fixed ? kBytes : kBytes - 1);
  CHECK(launch_result());
  CHECK(cudaMemcpy(copy, bytes, kBytes, cudaMemcpyDeviceToDevice));
  k_sum_words<<<1, kWords>>>(reinterpret_cast<const unsigned*>(copy), out);
  if (!fixed) return verdict("init_partial", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  unsigned got[kWords];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int w = 0; w < kWords; ++w) {
    unsigned want = 0;
    for (int k = 0; k < 4; ++k) want |= unsigned((3 * (4 * w + k) + 1) & 0xFF) << (8 * k);
    if (got[w] != want + 1u) return fixed_wrong("init_partial", "word %d: 0x%08x, expected 0x%08x", w, got[w], want + 1u);
  }
  CHECK(cudaFree(bytes));
  CHECK(cudaFree(copy));
  CHECK(cudaFree(out));
  return fixed_ok("init_partial");
}
