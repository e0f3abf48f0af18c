// The emulator's speed: thread-instructions per second of CPU time, for a memory-bound kernel
// (saxpy) and a compute-bound one (a chain of FMAs per thread). Not a test: run it under the
// emulator to see the figures (the counters come from the emulator itself).
//
//   scripts/emulate build/emu/bench/emu_bench [--n 4194304] [--fmas 2048]
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

struct EmuStats {
  unsigned long long launches, warp_instructions, thread_instructions;
  double cpu_seconds;
};
using StatsFn = void (*)(EmuStats*);

__global__ void saxpy(const float* __restrict__ x, float* __restrict__ y, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void fma_chain(float* out, int fmas) {
  float v = threadIdx.x * 1e-3f, w = 1.0001f;
  for (int i = 0; i < fmas; ++i) v = fmaf(v, w, 1e-4f);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

int main(int argc, char** argv) {
  int n = 1 << 22, fmas = 2048, blocks = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--n")) n = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--fmas")) fmas = std::atoi(argv[i + 1]);
  }
  auto stats = reinterpret_cast<StatsFn>(dlsym(RTLD_DEFAULT, "gpu100_emu_stats"));
  if (!stats) {
    std::printf("not running under the gpu100 emulator (scripts/emulate %s)\n", argv[0]);
    return 77;
  }
  float *x, *y, *out;
  cudaMalloc(&x, sizeof(float) * n);
  cudaMalloc(&y, sizeof(float) * n);
  cudaMalloc(&out, sizeof(float) * blocks * 256);
  cudaMemset(x, 0, sizeof(float) * n);
  cudaMemset(y, 0, sizeof(float) * n);
  auto measure = [&](const char* name, auto launch) {
    EmuStats a, b;
    stats(&a);
    launch();
    cudaDeviceSynchronize();
    stats(&b);
    const double instr = double(b.thread_instructions - a.thread_instructions);
    const double secs = b.cpu_seconds - a.cpu_seconds;
    std::printf("%-28s %12.0f thread-instructions in %7.3f s CPU: %7.1f million per second\n", name,
                instr, secs, instr / secs / 1e6);
  };
  measure("memory-bound (saxpy)", [&] { saxpy<<<(n + 255) / 256, 256>>>(x, y, 2.0f, n); });
  measure("compute-bound (fma chain)", [&] { fma_chain<<<blocks, 256>>>(out, fmas); });
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    std::printf("error: %s\n", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
