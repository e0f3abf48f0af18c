// Planted bug: a cudaMemcpy longer than its device buffer. The results are copied back with the
// padded length (1024 floats) from a buffer that holds 1000. Expected: cudaMemcpy returns
// cudaErrorInvalidValue and the emulator says the device range runs past its allocation; the
// error is not sticky. --fixed: the copy uses the buffer's length and the values arrive intact.
#include <vector>

#include "fault_common.h"

constexpr int kN = 1000;
constexpr int kPadded = 1024;

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  std::vector<float> h(kPadded), back(kPadded, -1.0f);
  for (int i = 0; i < kPadded; ++i) h[i] = float(i) + 0.5f;
  float* d = nullptr;
  CHECK(cudaMalloc(&d, kN * sizeof(float)));
  CHECK(cudaMemcpy(d, h.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
  const size_t bytes = (fixed ? kN : kPadded) * sizeof(float);
  const cudaError_t e =
      cudaMemcpy(back.data(), d, bytes, cudaMemcpyDeviceToHost);  // 1024 of 1000 floats
  if (!fixed) {
    const int v = verdict("memcpy_overrun", e, cudaErrorInvalidValue);
    if (v == 1 &&
        (cudaGetLastError() != cudaErrorInvalidValue || cudaGetLastError() != cudaSuccess ||
         cudaMemcpy(back.data(), d, kN * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess)) {
      std::fprintf(stderr, "memcpy_overrun: the refused copy left an error behind\n");
      return 2;
    }
    return v;
  }
  CHECK(e);
  for (int i = 0; i < kN; ++i)
    if (back[i] != h[i])
      return fixed_wrong("memcpy_overrun", "element %d = %g, expected %g", i, back[i], h[i]);
  return fixed_ok("memcpy_overrun");
}
