// Memory beyond cudaMalloc: mapped pinned host memory (cudaHostAlloc with cudaHostAllocMapped,
// cudaHostRegister), managed memory (cudaMallocManaged, with prefetch and advice), and
// stream-ordered allocation from memory pools (cudaMallocAsync, cudaMallocFromPoolAsync). A
// kernel reads and writes each kind through its device pointer; the host sees the results.
// Expected values and error codes are the CUDA Runtime API documentation's. Under the emulator
// the device memory metrics are checked too (read with dlsym; a GPU has no such symbol).
#include <dlfcn.h>

#include <cstdint>
#include <vector>

#include "conf_common.h"
#include "gpu100_emu_metrics.h"

__managed__ int g_managed_table[4] = {10, 20, 30, 40};

__global__ void k_add_to_managed_table(int delta) {
  g_managed_table[threadIdx.x] += delta * int(threadIdx.x + 1);
}

__global__ void k_affine(int* data, int mul, int add, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * mul + add;
}
__global__ void k_fill_index(int* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = i;
}

void check_err(const char* name, cudaError_t got, cudaError_t expected) {
  conf_check_text(name, "(return value)", got == expected, cudaGetErrorName(got), cudaGetErrorName(expected));
}
void check_err_and_last(const char* name, cudaError_t got, cudaError_t expected) {
  check_err(name, got, expected);
  check_err(conf_fmt("cudaGetLastError after %s", name).s, cudaGetLastError(), expected);
}

// Runs k_affine over n ints at p and returns how many differ from x * mul + add, where the
// elements held x = 5 * i - 3 before.
int affine_wrong(const int* host_view, int* device_ptr, int n, int mul, int add) {
  k_affine<<<(n + 127) / 128, 128>>>(device_ptr, mul, add, n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += host_view[i] != (5 * i - 3) * mul + add;
  return wrong;
}

void test_attributes() {
  const struct {
    cudaDeviceAttr attr;
    const char* name;
  } wanted[] = {{cudaDevAttrCanMapHostMemory, "cudaDevAttrCanMapHostMemory"},
                {cudaDevAttrManagedMemory, "cudaDevAttrManagedMemory"},
                {cudaDevAttrConcurrentManagedAccess, "cudaDevAttrConcurrentManagedAccess"},
                {cudaDevAttrMemoryPoolsSupported, "cudaDevAttrMemoryPoolsSupported"},
                {cudaDevAttrHostRegisterSupported, "cudaDevAttrHostRegisterSupported"}};
  for (const auto& w : wanted) {
    int v = -1;
    CUDA_CHECK(cudaDeviceGetAttribute(&v, w.attr, 0));
    conf_check(w.name, "device 0", v, 1);
  }
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  conf_check("cudaDeviceProp::canMapHostMemory", "device 0", prop.canMapHostMemory, 1);
  conf_check("cudaDeviceProp::managedMemory", "device 0", prop.managedMemory, 1);
  conf_check("cudaDeviceProp::concurrentManagedAccess", "device 0", prop.concurrentManagedAccess, 1);
}

void test_mapped_host_alloc() {
  const int n = 333;
  int* host = nullptr;
  CUDA_CHECK(cudaHostAlloc(&host, n * sizeof(int), cudaHostAllocMapped));
  for (int i = 0; i < n; ++i) host[i] = 5 * i - 3;
  int* dev = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer((void**)&dev, host, 0));
  conf_check("cudaHostAlloc(Mapped): elements wrong after a kernel", "x * 7 + 2", affine_wrong(host, dev, n, 7, 2), 0);
  cudaPointerAttributes attr;
  CUDA_CHECK(cudaPointerGetAttributes(&attr, host));
  conf_check("cudaPointerGetAttributes(cudaHostAlloc).type", "mapped", int(attr.type), int(cudaMemoryTypeHost));
  CUDA_CHECK(cudaFreeHost(host));
}

void test_host_register() {
  const int n = 1000;
  std::vector<int> buffer(n);
  for (int i = 0; i < n; ++i) buffer[i] = 5 * i - 3;
  CUDA_CHECK(cudaHostRegister(buffer.data(), n * sizeof(int), cudaHostRegisterMapped));
  int* dev = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer((void**)&dev, buffer.data(), 0));
  conf_check("cudaHostRegister(Mapped): elements wrong after a kernel", "x * -4 + 9",
             affine_wrong(buffer.data(), dev, n, -4, 9), 0);
  cudaPointerAttributes attr;
  CUDA_CHECK(cudaPointerGetAttributes(&attr, buffer.data()));
  conf_check("cudaPointerGetAttributes(registered).type", "mapped", int(attr.type), int(cudaMemoryTypeHost));
  check_err_and_last("cudaHostRegister (the same range again)",
                     cudaHostRegister(buffer.data(), n * sizeof(int), cudaHostRegisterMapped),
                     cudaErrorHostMemoryAlreadyRegistered);
  check_err("cudaHostUnregister", cudaHostUnregister(buffer.data()), cudaSuccess);
  check_err_and_last("cudaHostUnregister (not registered)", cudaHostUnregister(buffer.data()),
                     cudaErrorHostMemoryNotRegistered);
}

void test_managed() {
  const int n = 4097;
  int* m = nullptr;
  CUDA_CHECK(cudaMallocManaged(&m, n * sizeof(int)));
  for (int i = 0; i < n; ++i) m[i] = 5 * i - 3;  // the host writes it directly
  cudaMemLocation device0 = {};
  device0.type = cudaMemLocationTypeDevice;
  device0.id = 0;
  cudaMemLocation host = {};
  host.type = cudaMemLocationTypeHost;
  check_err("cudaMemAdvise(SetReadMostly)", cudaMemAdvise(m, n * sizeof(int), cudaMemAdviseSetReadMostly, device0),
            cudaSuccess);
  check_err("cudaMemAdvise(UnsetReadMostly)", cudaMemAdvise(m, n * sizeof(int), cudaMemAdviseUnsetReadMostly, device0),
            cudaSuccess);
  check_err("cudaMemAdvise(SetPreferredLocation, device 0)",
            cudaMemAdvise(m, n * sizeof(int), cudaMemAdviseSetPreferredLocation, device0), cudaSuccess);
  check_err("cudaMemAdvise(SetAccessedBy, device 0)", cudaMemAdvise(m, n * sizeof(int), cudaMemAdviseSetAccessedBy, device0),
            cudaSuccess);
  check_err("cudaMemPrefetchAsync(device 0)", cudaMemPrefetchAsync(m, n * sizeof(int), device0, 0, 0), cudaSuccess);
  conf_check("cudaMallocManaged: elements wrong after a kernel", "x * 3 + 1", affine_wrong(m, m, n, 3, 1), 0);
  check_err("cudaMemPrefetchAsync(host)", cudaMemPrefetchAsync(m, n * sizeof(int), host, 0, 0), cudaSuccess);
  CUDA_CHECK(cudaDeviceSynchronize());
  cudaPointerAttributes attr;
  CUDA_CHECK(cudaPointerGetAttributes(&attr, m + 10));
  conf_check("cudaPointerGetAttributes(managed).type", "cudaMallocManaged", int(attr.type), int(cudaMemoryTypeManaged));
  conf_check("cudaPointerGetAttributes(managed).hostPointer", "cudaMallocManaged", attr.hostPointer == m + 10, true);
  conf_check("cudaPointerGetAttributes(managed).devicePointer", "cudaMallocManaged", attr.devicePointer == m + 10, true);
  // "flags - flags for future use, must be zero now"
  check_err_and_last("cudaMemPrefetchAsync(flags 1)", cudaMemPrefetchAsync(m, n * sizeof(int), device0, 1, 0),
                     cudaErrorInvalidValue);
  CUDA_CHECK(cudaFree(m));
  // "If size is 0, cudaMallocManaged returns cudaErrorInvalidValue."
  int* none = nullptr;
  check_err_and_last("cudaMallocManaged(size 0)", cudaMallocManaged(&none, 0), cudaErrorInvalidValue);
  // "flags must be one of cudaMemAttachGlobal or cudaMemAttachHost."
  check_err_and_last("cudaMallocManaged(flags 0)", cudaMallocManaged(&none, 64, 0), cudaErrorInvalidValue);
  int* attached = nullptr;
  check_err("cudaMallocManaged(cudaMemAttachHost)", cudaMallocManaged(&attached, 64, cudaMemAttachHost), cudaSuccess);
  CUDA_CHECK(cudaFree(attached));
}

// A __managed__ variable: its initializer is seen by host and device, and so are the writes of
// either.
void test_managed_variable() {
  conf_check("__managed__ initializer seen by the host", "g_managed_table[2]", g_managed_table[2], 30);
  g_managed_table[0] = 1;
  k_add_to_managed_table<<<1, 4>>>(100);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  const int want[4] = {1 + 100, 20 + 200, 30 + 300, 40 + 400};
  for (int i = 0; i < 4; ++i)
    conf_check("__managed__ after a kernel", conf_fmt("g_managed_table[%d]", i), g_managed_table[i], want[i]);
  cudaPointerAttributes attr;
  CUDA_CHECK(cudaPointerGetAttributes(&attr, g_managed_table));
  conf_check("cudaPointerGetAttributes(__managed__).type", "g_managed_table", int(attr.type), int(cudaMemoryTypeManaged));
}

void test_stream_ordered() {
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  const int n = 2500;

  // The default pool.
  cudaMemPool_t default_pool = nullptr;
  CUDA_CHECK(cudaDeviceGetDefaultMemPool(&default_pool, 0));
  conf_check("cudaDeviceGetDefaultMemPool", "device 0", default_pool != nullptr, true);
  cudaMemPool_t current = nullptr;
  CUDA_CHECK(cudaDeviceGetMemPool(&current, 0));
  conf_check("cudaDeviceGetMemPool", "never set", current == default_pool, true);
  int* d = nullptr;
  CUDA_CHECK(cudaMallocAsync(&d, n * sizeof(int), stream));
  k_fill_index<<<(n + 255) / 256, 256, 0, stream>>>(d, n);
  CUDA_CHECK(cudaGetLastError());
  std::vector<int> got(n, -1);
  CUDA_CHECK(cudaMemcpyAsync(got.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaFreeAsync(d, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += got[i] != i;
  conf_check("cudaMallocAsync: elements wrong", "k_fill_index", wrong, 0);

  // A pool of its own.
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool = nullptr;
  CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
  uint64_t threshold = UINT64_MAX, read_back = 0;
  CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &read_back));
  conf_check("cudaMemPoolGetAttribute(ReleaseThreshold)", "set to UINT64_MAX", read_back, UINT64_MAX);
  int reuse = -1;
  CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &reuse));
  conf_check("cudaMemPoolGetAttribute(ReuseAllowOpportunistic)", "default", reuse, 1);  // "default enabled"
  uint64_t used = 0;
  CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  conf_check("cudaMemPoolGetAttribute(UsedMemCurrent)", "new pool", used, 0);
  int* p = nullptr;
  CUDA_CHECK(cudaMallocFromPoolAsync((void**)&p, n * sizeof(int), pool, stream));
  CUDA_CHECK(cudaMemcpyAsync(p, got.data(), n * sizeof(int), cudaMemcpyHostToDevice, stream));
  k_affine<<<(n + 255) / 256, 256, 0, stream>>>(p, 2, -1, n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpyAsync(got.data(), p, n * sizeof(int), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  conf_check("cudaMemPoolGetAttribute(UsedMemCurrent) >= the allocation", conf_fmt("%zu bytes", n * sizeof(int)),
             used >= n * sizeof(int), true);
  wrong = 0;
  for (int i = 0; i < n; ++i) wrong += got[i] != 2 * i - 1;
  conf_check("cudaMallocFromPoolAsync: elements wrong", "2 * i - 1", wrong, 0);
  CUDA_CHECK(cudaFreeAsync(p, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  conf_check("cudaMemPoolGetAttribute(UsedMemCurrent)", "after the free", used, 0);
  // The high watermarks can only be reset, to zero.
  uint64_t zero = 0, nonzero = 1;
  check_err("cudaMemPoolSetAttribute(UsedMemHigh, 0)", cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero),
            cudaSuccess);
  check_err_and_last("cudaMemPoolSetAttribute(UsedMemHigh, 1)",
                     cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &nonzero), cudaErrorInvalidValue);
  CUDA_CHECK(cudaMemPoolDestroy(pool));
  CUDA_CHECK(cudaStreamDestroy(stream));
}

// Under the emulator: managed and stream-ordered memory is device memory, and counts as such.
void test_device_memory_metrics() {
  auto read = reinterpret_cast<Gpu100EmuMetricsFn>(dlsym(RTLD_DEFAULT, GPU100_EMU_METRICS_SYMBOL));
  if (!read) return;  // a GPU: its memory is not counted this way
  Gpu100EmuMetrics m0, m1, m2, m3;
  read(&m0);
  void *managed = nullptr, *pooled = nullptr;
  CUDA_CHECK(cudaMallocManaged(&managed, 3000));
  read(&m1);
  CUDA_CHECK(cudaMallocAsync(&pooled, 5000, 0));
  read(&m2);
  CUDA_CHECK(cudaFreeAsync(pooled, 0));
  CUDA_CHECK(cudaFree(managed));
  CUDA_CHECK(cudaDeviceSynchronize());
  read(&m3);
  conf_check("device_bytes_live", "after cudaMallocManaged(3000)", m1.device_bytes_live - m0.device_bytes_live, 3000);
  conf_check("device_bytes_live", "after cudaMallocAsync(5000)", m2.device_bytes_live - m0.device_bytes_live, 8000);
  conf_check("device_bytes_live", "after both are freed", m3.device_bytes_live, m0.device_bytes_live);
  conf_check("device_bytes_peak >= both", "", m3.device_bytes_peak >= m0.device_bytes_live + 8000, true);
}

int main() {
  conf_require_device();
  test_attributes();
  test_mapped_host_alloc();
  test_host_register();
  test_managed();
  test_managed_variable();
  test_stream_ordered();
  test_device_memory_metrics();
  return conf_finish("memory_kinds");
}
