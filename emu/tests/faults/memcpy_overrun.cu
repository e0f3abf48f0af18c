// Planted bug: a cudaMemcpy longer than its device buffer. The results are copied back with the
// padded length (1024 floats) from a buffer that holds 1000. Expected: cudaMemcpy returns
// cudaErrorInvalidValue and the emulator says the device range runs past its allocation; the
// error is not sticky. --fixed: the copy uses the buffer's length and the values arrive intact.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static void require_device() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("SKIP: no CUDA device\n");
    std::exit(77);
  }
}

// Exit 1 (the status the test expects) only for the expected error; 0 when the bug went
// unnoticed, so the test fails; 2 for a different error.
static int verdict(const char* what, cudaError_t got, cudaError_t want) {
  std::fprintf(stderr, "%s: %s (%s)\n", what, cudaGetErrorName(got), cudaGetErrorString(got));
  if (got == want) return 1;
  std::fprintf(stderr, "%s: expected %s\n", what, cudaGetErrorName(want));
  return got == cudaSuccess ? 0 : 2;
}

#define CHECK(call)                                                         \
  do {                                                                      \
    const cudaError_t e_ = (call);                                          \
    if (e_ != cudaSuccess) {                                                \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorName(e_)); \
      std::exit(2);                                                         \
    }                                                                       \
  } while (0)

constexpr int kN = 1000;
constexpr int kPadded = 1024;

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
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
    if (back[i] != h[i]) {
      std::fprintf(stderr, "memcpy_overrun --fixed: element %d = %g, expected %g\n", i, back[i],
                   h[i]);
      return 3;
    }
  std::fprintf(stderr, "memcpy_overrun --fixed: ok\n");
  return 0;
}
