// Runtime API calls that third-party programs make around their kernels: profiler ranges, device
// flags, launches through cudaLaunchKernelEx with launch attributes, host functions in stream
// order. Expected values and error codes are the CUDA Runtime API documentation's.
#include <cooperative_groups.h>
#include <cuda_profiler_api.h>

#include <vector>

#include "conf_common.h"

namespace cg = cooperative_groups;

__global__ void k_scale(const int* in, int* out, int factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * factor + int(blockDim.x);
}

// Every block writes its slot, the whole grid waits, then each block reads its neighbour's slot:
// right only when the launch was cooperative (a grid barrier needs all blocks resident).
__global__ void k_grid_exchange(int* slots, int* out) {
  const int b = int(blockIdx.x);
  if (threadIdx.x == 0) slots[b] = 100 + b;
  cg::this_grid().sync();
  if (threadIdx.x == 0) out[b] = slots[(b + 1) % int(gridDim.x)];
}

struct HostLog {
  int calls[8];
  int count;
};
void record_call(void* user, int tag) {
  auto* log = static_cast<HostLog*>(user);
  if (log->count < 8) log->calls[log->count] = tag;
  ++log->count;
}
void CUDART_CB host_first(void* user) { record_call(user, 1); }
void CUDART_CB host_second(void* user) { record_call(user, 2); }

void check_err(const char* name, cudaError_t got, cudaError_t expected) {
  conf_check_text(name, "(return value)", got == expected, cudaGetErrorName(got), cudaGetErrorName(expected));
}

void test_profiler() {
  check_err("cudaProfilerStart", cudaProfilerStart(), cudaSuccess);
  check_err("cudaProfilerStop", cudaProfilerStop(), cudaSuccess);
}

void test_device_flags() {
  const unsigned schedules[] = {cudaDeviceScheduleSpin, cudaDeviceScheduleYield, cudaDeviceScheduleBlockingSync,
                                cudaDeviceScheduleAuto};
  for (unsigned s : schedules) {
    check_err("cudaSetDeviceFlags", cudaSetDeviceFlags(s | cudaDeviceMapHost), cudaSuccess);
    unsigned flags = 0;
    CUDA_CHECK(cudaGetDeviceFlags(&flags));
    conf_check("cudaGetDeviceFlags & cudaDeviceScheduleMask", conf_fmt("after setting 0x%x", s),
               flags & cudaDeviceScheduleMask, s);
    // cudaDeviceMapHost may always be reported: it is implicit for the runtime.
    conf_check("cudaGetDeviceFlags & cudaDeviceMapHost", conf_fmt("after setting 0x%x", s | cudaDeviceMapHost),
               flags & cudaDeviceMapHost, cudaDeviceMapHost);
  }
  // A flag outside cudaDeviceMask is not a device flag.
  check_err("cudaSetDeviceFlags(0x100)", cudaSetDeviceFlags(0x100), cudaErrorInvalidValue);
  check_err("cudaGetLastError after a refused flag", cudaGetLastError(), cudaErrorInvalidValue);
  check_err("cudaGetDeviceFlags(NULL)", cudaGetDeviceFlags(nullptr), cudaErrorInvalidValue);
  check_err("cudaGetLastError after a NULL flags pointer", cudaGetLastError(), cudaErrorInvalidValue);
}

void test_launch_ex() {
  const int n = 300;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = 3 * i - 7;
  int *in = nullptr, *out = nullptr;
  CUDA_CHECK(cudaMalloc(&in, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&out, n * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));

  // Attributes that schedule or prioritize the launch do not change what it computes.
  cudaLaunchAttribute attrs[4];
  attrs[0].id = cudaLaunchAttributeClusterDimension;
  attrs[0].val.clusterDim.x = 1;
  attrs[0].val.clusterDim.y = 1;
  attrs[0].val.clusterDim.z = 1;
  attrs[1].id = cudaLaunchAttributePriority;
  attrs[1].val.priority = 0;
  attrs[2].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attrs[2].val.programmaticStreamSerializationAllowed = 1;
  attrs[3].id = cudaLaunchAttributeIgnore;
  for (unsigned used = 0; used <= 4; ++used) {
    CUDA_CHECK(cudaMemset(out, 0, n * sizeof(int)));
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((n + 127) / 128);
    config.blockDim = dim3(128);
    config.dynamicSmemBytes = 0;
    config.stream = stream;
    config.attrs = used ? attrs : nullptr;
    config.numAttrs = used;
    check_err("cudaLaunchKernelEx", cudaLaunchKernelEx(&config, k_scale, (const int*)in, out, 5, n), cudaSuccess);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<int> got(n);
    CUDA_CHECK(cudaMemcpy(got.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += got[i] != h[i] * 5 + 128;
    conf_check("cudaLaunchKernelEx: elements wrong", conf_fmt("%u attributes", used), wrong, 0);
  }

  // A cooperative launch through the attribute: the grid barrier works.
  int coop = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0));
  if (coop) {
    const int blocks = 4;
    int *slots = nullptr, *exch = nullptr;
    CUDA_CHECK(cudaMalloc(&slots, blocks * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&exch, blocks * sizeof(int)));
    cudaLaunchAttribute coop_attr;
    coop_attr.id = cudaLaunchAttributeCooperative;
    coop_attr.val.cooperative = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(64);
    config.stream = stream;
    config.attrs = &coop_attr;
    config.numAttrs = 1;
    check_err("cudaLaunchKernelEx (cooperative)", cudaLaunchKernelEx(&config, k_grid_exchange, slots, exch),
              cudaSuccess);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    int got[blocks];
    CUDA_CHECK(cudaMemcpy(got, exch, sizeof got, cudaMemcpyDeviceToHost));
    for (int b = 0; b < blocks; ++b)
      conf_check("cooperative cudaLaunchKernelEx: neighbour's slot", conf_fmt("block %d", b), got[b],
                 100 + (b + 1) % blocks);
    CUDA_CHECK(cudaFree(slots));
    CUDA_CHECK(cudaFree(exch));
  }

  // The C entry point with an argument array.
  {
    int factor = -2, count = n;
    const int* in_arg = in;
    void* args[] = {&in_arg, &out, &factor, &count};
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((n + 63) / 64);
    config.blockDim = dim3(64);
    config.stream = stream;
    check_err("cudaLaunchKernelExC", cudaLaunchKernelExC(&config, (const void*)k_scale, args), cudaSuccess);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<int> got(n);
    CUDA_CHECK(cudaMemcpy(got.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += got[i] != h[i] * -2 + 64;
    conf_check("cudaLaunchKernelExC: elements wrong", "factor -2, 64 threads", wrong, 0);
  }
  CUDA_CHECK(cudaStreamDestroy(stream));
  CUDA_CHECK(cudaFree(in));
  CUDA_CHECK(cudaFree(out));
}

// Host functions run in stream order: after the work issued before them.
void test_host_functions() {
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  HostLog log = {};
  CUDA_CHECK(cudaLaunchHostFunc(stream, host_first, &log));
  CUDA_CHECK(cudaLaunchHostFunc(stream, host_second, &log));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  conf_check("cudaLaunchHostFunc: calls", "two", log.count, 2);
  conf_check("cudaLaunchHostFunc: first call", "two", log.calls[0], 1);
  conf_check("cudaLaunchHostFunc: second call", "two", log.calls[1], 2);
  check_err("cudaLaunchHostFunc(NULL function)", cudaLaunchHostFunc(stream, nullptr, &log), cudaErrorInvalidValue);
  check_err("cudaGetLastError after a NULL host function", cudaGetLastError(), cudaErrorInvalidValue);
  CUDA_CHECK(cudaStreamDestroy(stream));
}

int main() {
  conf_require_device();
  test_profiler();
  test_device_flags();
  test_launch_ex();
  test_host_functions();
  return conf_finish("runtime_api");
}
