// Planted bug: use after a stream-ordered free. A buffer from cudaMallocAsync is released with
// cudaFreeAsync and the stream synchronized; then a kernel reads it, so thread 0 of block 0 loads
// from memory that is no longer allocated. Expected: cudaErrorIllegalAddress and the emulator
// naming that load. --fixed: the free comes after the kernel, which then sums correctly.
#include <vector>

#include "fault_common.h"

constexpr int kN = 512;
constexpr int kBlock = 128;

__global__ void k_plus_index(const int* in, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  // The planted bug: in was freed (in stream order, and the stream reached the free).
  if (i < n) out[i] = in[i] + i;  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  std::vector<int> h(kN);
  for (int i = 0; i < kN; ++i) h[i] = 11 * i;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMallocAsync(&in, kN * sizeof(int), stream));
  CHECK(cudaMalloc(&out, kN * sizeof(int)));
  CHECK(cudaMemcpyAsync(in, h.data(), kN * sizeof(int), cudaMemcpyHostToDevice, stream));
  if (!fixed) {  // too early: the kernel below still reads it
    CHECK(cudaFreeAsync(in, stream));
    CHECK(cudaStreamSynchronize(stream));
  }
  k_plus_index<<<kN / kBlock, kBlock, 0, stream>>>(in, out, kN);
  if (!fixed) return verdict("free_async_use", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  CHECK(cudaFreeAsync(in, stream));
  std::vector<int> got(kN);
  CHECK(cudaMemcpyAsync(got.data(), out, kN * sizeof(int), cudaMemcpyDeviceToHost, stream));
  CHECK(cudaStreamSynchronize(stream));
  for (int i = 0; i < kN; ++i)
    if (got[i] != h[i] + i) return fixed_wrong("free_async_use", "out[%d] = %d, expected %d", i, got[i], h[i] + i);
  CHECK(cudaFree(out));
  CHECK(cudaStreamDestroy(stream));
  return fixed_ok("free_async_use");
}
