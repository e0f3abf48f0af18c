// The emulator's speed: thread-instructions per second of CPU time on four workloads, each the
// shape of code the days run most: a memory-bound kernel (saxpy), a compute-bound one (a chain of
// FMAs per thread), a shared-memory tiled SGEMM, and a warp-shuffle reduction. Not a test: run it
// under the emulator to see the figures (the counters come from the emulator itself), once with
// the checks on (the default) and once with them off:
//
//   scripts/emulate build/emu/bench/emu_bench
//   scripts/emulate --check=none build/emu/bench/emu_bench
//
// Each workload also checks its own result, so a fast emulator that computes the wrong thing does
// not print a figure. Options: --only NAME (saxpy, fma, sgemm, reduce) runs one of them; --warm
// launches each kernel once on the same buffers before the measured launch (same result), so that
// the figure leaves out what a first launch pays for memory the checks see for the first time.
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

struct EmuStats {
  unsigned long long launches, warp_instructions, thread_instructions;
  double cpu_seconds;
};
using StatsFn = void (*)(EmuStats*);

constexpr int kSaxpyN = 1 << 20;
constexpr int kFmaThreads = 1 << 16, kFmaChain = 1024;
constexpr int kGemmN = 256, kTile = 16;
constexpr int kReduceN = 1 << 20, kReduceBlock = 256;

__global__ void saxpy(const float* __restrict__ x, float* __restrict__ y, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void fma_chain(float* out, int fmas) {
  float v = threadIdx.x * 1e-3f, w = 1.0001f;
  for (int i = 0; i < fmas; ++i) v = fmaf(v, w, 1e-4f);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// C = A * B, n x n row-major, one 16 x 16 tile of C per block, A and B staged through shared memory.
__global__ void sgemm_tiled(const float* a, const float* b, float* c, int n) {
  __shared__ float as[kTile][kTile], bs[kTile][kTile];
  const int row = blockIdx.y * kTile + threadIdx.y, col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += kTile) {
    as[threadIdx.y][threadIdx.x] = a[row * n + k0 + threadIdx.x];
    bs[threadIdx.y][threadIdx.x] = b[(k0 + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < kTile; ++k) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = acc;
}

// One partial sum per block: each warp sums its values with shuffles, warp 0 sums the warps'.
__global__ void reduce_shuffle(const float* x, float* partial, int n) {
  __shared__ float warp_sums[kReduceBlock / 32];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < kReduceBlock / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (threadIdx.x == 0) partial[blockIdx.x] = v;
  }
}

namespace {

StatsFn stats;
bool warm = false;

// Runs one launch and prints its rate; returns false if the launch failed. With --warm, warm_up
// runs first, unmeasured.
template <class Launch, class WarmUp>
bool measure(const char* name, Launch launch, WarmUp warm_up) {
  if (warm) {
    warm_up();
    if (cudaDeviceSynchronize() != cudaSuccess) return false;
  }
  EmuStats before, after;
  stats(&before);
  launch();
  const cudaError_t e = cudaDeviceSynchronize();
  stats(&after);
  if (e != cudaSuccess) {
    std::printf("%-34s error: %s\n", name, cudaGetErrorString(e));
    return false;
  }
  const double instructions = double(after.thread_instructions - before.thread_instructions);
  const double seconds = after.cpu_seconds - before.cpu_seconds;
  std::printf("%-34s %12.0f thread-instructions in %7.3f s CPU: %7.1f million per second\n", name,
              instructions, seconds, instructions / seconds / 1e6);
  return true;
}

float* device_copy(const std::vector<float>& host) {
  float* d = nullptr;
  cudaMalloc(&d, sizeof(float) * host.size());
  cudaMemcpy(d, host.data(), sizeof(float) * host.size(), cudaMemcpyHostToDevice);
  return d;
}

std::vector<float> host_copy(const float* d, size_t n) {
  std::vector<float> host(n);
  cudaMemcpy(host.data(), d, sizeof(float) * n, cudaMemcpyDeviceToHost);
  return host;
}

// Small integers keep every sum exact in fp32, so each check compares for equality.
std::vector<float> small_integers(size_t n, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(int((i * 7 + seed * 13) % 5) - 2);
  return v;
}

bool bench_saxpy() {
  const std::vector<float> x = small_integers(kSaxpyN, 1), y = small_integers(kSaxpyN, 2);
  float *dx = device_copy(x), *dy = device_copy(y);
  bool ok = measure(
      "saxpy, 2^20 floats", [&] { saxpy<<<(kSaxpyN + 255) / 256, 256>>>(dx, dy, 2.0f, kSaxpyN); },
      [&] { saxpy<<<(kSaxpyN + 255) / 256, 256>>>(dx, dy, 0.0f, kSaxpyN); });  // y unchanged
  const std::vector<float> got = host_copy(dy, kSaxpyN);
  for (int i = 0; ok && i < kSaxpyN; ++i) ok = got[i] == 2.0f * x[i] + y[i];
  cudaFree(dx);
  cudaFree(dy);
  return ok;
}

bool bench_fma() {
  float* out = nullptr;
  cudaMalloc(&out, sizeof(float) * kFmaThreads);
  auto launch = [&] { fma_chain<<<kFmaThreads / 256, 256>>>(out, kFmaChain); };
  bool ok = measure("fma chain, 2^16 threads x 1024", launch, launch);
  const std::vector<float> got = host_copy(out, kFmaThreads);
  for (int t = 0; ok && t < kFmaThreads; ++t) {
    float v = (t % 256) * 1e-3f;
    for (int i = 0; i < kFmaChain; ++i) v = std::fma(v, 1.0001f, 1e-4f);
    ok = got[t] == v;
  }
  cudaFree(out);
  return ok;
}

bool bench_sgemm() {
  const size_t nn = size_t(kGemmN) * kGemmN;
  const std::vector<float> a = small_integers(nn, 3), b = small_integers(nn, 4);
  float *da = device_copy(a), *db = device_copy(b), *dc = nullptr;
  cudaMalloc(&dc, sizeof(float) * nn);
  auto launch = [&] {
    sgemm_tiled<<<dim3(kGemmN / kTile, kGemmN / kTile), dim3(kTile, kTile)>>>(da, db, dc, kGemmN);
  };
  bool ok = measure("shared-memory tiled SGEMM 256^3", launch, launch);
  const std::vector<float> c = host_copy(dc, nn);
  for (int i = 0; ok && i < kGemmN; i += 17)
    for (int j = 0; ok && j < kGemmN; ++j) {
      float want = 0.0f;
      for (int k = 0; k < kGemmN; ++k) want += a[i * kGemmN + k] * b[k * kGemmN + j];
      ok = c[i * kGemmN + j] == want;
    }
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  return ok;
}

bool bench_reduce() {
  const std::vector<float> x = small_integers(kReduceN, 5);
  const int blocks = (kReduceN + kReduceBlock - 1) / kReduceBlock;
  float *dx = device_copy(x), *partial = nullptr;
  cudaMalloc(&partial, sizeof(float) * blocks);
  auto launch = [&] { reduce_shuffle<<<blocks, kReduceBlock>>>(dx, partial, kReduceN); };
  bool ok = measure("warp-shuffle reduction, 2^20", launch, launch);
  const std::vector<float> got = host_copy(partial, blocks);
  for (int blk = 0; ok && blk < blocks; ++blk) {
    float want = 0.0f;
    for (int i = blk * kReduceBlock; i < (blk + 1) * kReduceBlock; ++i) want += x[i];
    ok = got[blk] == want;
  }
  cudaFree(dx);
  cudaFree(partial);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const char* only = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!std::strcmp(argv[i], "--warm")) warm = true;
    else {
      std::fprintf(stderr, "usage: %s [--only saxpy|fma|sgemm|reduce] [--warm]\n", argv[0]);
      return 2;
    }
  }
  stats = reinterpret_cast<StatsFn>(dlsym(RTLD_DEFAULT, "gpu100_emu_stats"));
  if (!stats) {
    std::printf("not running under the gpu100 emulator (scripts/emulate %s)\n", argv[0]);
    return 77;
  }
  struct Workload { const char* name; bool (*run)(); };
  const Workload workloads[] = {
      {"saxpy", bench_saxpy}, {"fma", bench_fma}, {"sgemm", bench_sgemm}, {"reduce", bench_reduce}};
  bool ok = true, ran = false;
  for (const Workload& w : workloads) {
    if (only && std::strcmp(only, w.name)) continue;
    ran = true;
    if (!w.run()) {
      std::printf("%s: wrong result\n", w.name);
      ok = false;
    }
  }
  if (!ran) {
    std::fprintf(stderr, "--only %s: no such workload (saxpy, fma, sgemm, reduce)\n", only);
    return 2;
  }
  return ok ? 0 : 1;
}
