#include "gpu100/bench.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>

#include "gpu100/buffer.h"
#include "gpu100/check.h"

namespace gpu100 {

void flush_l2_by_reading(const void* buffer, size_t bytes, int* sink, cudaStream_t stream);

Stats summarize(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  s.samples = int(n);
  s.min_ms = v.front();
  s.max_ms = v.back();
  s.median_ms = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  s.mean_ms = std::accumulate(v.begin(), v.end(), 0.0) / double(n);
  return s;
}

namespace {

// Reading a buffer twice the size of L2 evicts whatever the previous run left there, so every
// timed run starts from DRAM, the way a kernel inside a real program usually does. One buffer per
// device (a program may time on more than one).
class L2Flusher {
 public:
  void flush(cudaStream_t stream) {
    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    auto& b = buffers_[dev];
    if (!b.data.size()) {
      int l2 = 0;
      CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
      b.data = DeviceBuffer<unsigned char>(std::max<size_t>(2 * size_t(l2), size_t(1) << 20));
      b.sink = DeviceBuffer<int>(1);
      b.data.zero();  // initialized once, so the reads are of defined memory (initcheck)
      b.sink.zero();
      // cudaMemset runs on the legacy default stream, which does not order work on non-blocking
      // streams: finish it before the first flush, whatever stream that flush is on.
      CUDA_CHECK(cudaDeviceSynchronize());
    }
    flush_l2_by_reading(b.data.data(), b.data.bytes(), b.sink.data(), stream);
  }

 private:
  struct Buffers {
    DeviceBuffer<unsigned char> data;
    DeviceBuffer<int> sink;
  };
  std::map<int, Buffers> buffers_;
};

class EventPair {
 public:
  EventPair() {
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  cudaEvent_t start{}, stop{};
};

}  // namespace

Stats benchmark(const std::function<void(cudaStream_t)>& fn, const BenchOptions& o,
                Stats* wall) {
  static L2Flusher flusher;
  for (int i = 0; i < o.warmup; ++i) {
    if (o.prepare) o.prepare(o.stream);
    fn(o.stream);
    if (o.idle_start) CUDA_CHECK(cudaStreamSynchronize(o.stream));
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaStreamSynchronize(o.stream));
  const int iters = std::max(1, o.iters);
  const size_t count = size_t(iters);
  std::vector<EventPair> events(count);
  std::vector<double> wall_ms;
  for (int i = 0; i < iters; ++i) {
    if (o.flush_l2) flusher.flush(o.stream);
    if (o.prepare) o.prepare(o.stream);
    const auto t0 = std::chrono::steady_clock::now();
    CUDA_CHECK(cudaEventRecord(events[size_t(i)].start, o.stream));
    fn(o.stream);
    CUDA_CHECK(cudaEventRecord(events[size_t(i)].stop, o.stream));
    if (o.idle_start) {
      CUDA_CHECK(cudaStreamSynchronize(o.stream));
      wall_ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
              .count());
    }
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaStreamSynchronize(o.stream));
  std::vector<double> ms(count);
  for (int i = 0; i < iters; ++i) {
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, events[size_t(i)].start, events[size_t(i)].stop));
    ms[size_t(i)] = t;
  }
  if (wall) *wall = summarize(std::move(wall_ms));
  return summarize(std::move(ms));
}

CopyProbe measure_copy_bandwidth(size_t bytes, const BenchOptions& options) {
  // Past a few times the L2 size, copy bandwidth no longer depends on the size; capping the probe
  // keeps it from needing memory the day's own buffers already hold.
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  bytes = std::max<size_t>(std::min({bytes, kMaxCopyProbeBytes, free_bytes / 4}), 1);
  DeviceBuffer<unsigned char> src(bytes), dst(bytes);
  CUDA_CHECK(cudaMemset(src.data(), 1, bytes));
  CopyProbe p;
  p.time = benchmark(
      [&](cudaStream_t s) {
        CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, s));
      },
      options);
  p.bytes = bytes;
  p.gbps = gbps(2.0 * double(bytes), p.time.median_ms);
  return p;
}

}  // namespace gpu100
