// Planted bug: freeing a buffer twice. A cleanup path calls cudaFree on a pointer that was
// already freed. Expected: the second cudaFree returns cudaErrorInvalidValue and the emulator
// says the pointer is not a live cudaMalloc allocation; the error is not sticky (cudaGetLastError
// returns it once and later calls succeed). --fixed: one cudaFree per cudaMalloc.
#include "fault_common.h"

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  float *a = nullptr, *b = nullptr;
  CHECK(cudaMalloc(&a, 1024));
  CHECK(cudaMalloc(&b, 1024));
  CHECK(cudaFree(a));
  if (!fixed) {
    const int v = verdict("double_free", cudaFree(a), cudaErrorInvalidValue);  // a is already freed
    if (v == 1 && (cudaGetLastError() != cudaErrorInvalidValue ||
                   cudaGetLastError() != cudaSuccess || cudaFree(b) != cudaSuccess)) {
      std::fprintf(stderr, "double_free: the refused cudaFree left an error behind\n");
      return 2;
    }
    return v;
  }
  CHECK(cudaFree(b));
  CHECK(cudaGetLastError());
  return fixed_ok("double_free");
}
