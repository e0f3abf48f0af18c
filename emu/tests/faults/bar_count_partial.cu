// Planted bug: a named-barrier count that is not a whole number of warps. In a 64-thread block
// threads 0-47 produce values and all 64 threads then meet on barrier 1 to read them; the count
// was written as the number of producers, 48. Barrier counts are whole warps (the PTX ISA
// requires a multiple of 32), and both warps arrive: 64 threads at a barrier counting 48.
// Expected: cudaErrorIllegalInstruction and the emulator saying more threads arrived than the
// count, at warp 1 (thread 32). --fixed: the count is 64 and the consumers read the right values.
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

// A bad configuration is reported at once; a fault inside the kernel, on hardware, only at the
// next synchronization (the emulator already knows at the launch). Either way one of the two.
static cudaError_t launch_result() {
  const cudaError_t e = cudaGetLastError();
  return e != cudaSuccess ? e : cudaDeviceSynchronize();
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

constexpr int kThreads = 64;
constexpr int kProducers = 48;

__global__ void k_produce_consume(int* out, unsigned count) {
  __shared__ int s[kProducers];
  const int t = threadIdx.x;
  if (t < kProducers) s[t] = t * t;
  // The planted bug: a count of 48, but 64 threads (two warps) arrive.
  asm volatile("bar.sync 1, %0;" ::"r"(count) : "memory");  // PLANTED
  out[t] = s[(t * 7) % kProducers];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  int* out = nullptr;
  CHECK(cudaMalloc(&out, kThreads * sizeof(int)));
  k_produce_consume<<<1, kThreads>>>(out, fixed ? kThreads : kProducers);
  if (!fixed) return verdict("bar_count_partial", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[kThreads];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t) {
    const int p = (t * 7) % kProducers;
    if (got[t] != p * p) {
      std::fprintf(stderr, "bar_count_partial --fixed: out[%d] = %d, expected %d\n", t, got[t],
                   p * p);
      return 3;
    }
  }
  std::fprintf(stderr, "bar_count_partial --fixed: ok\n");
  return 0;
}
