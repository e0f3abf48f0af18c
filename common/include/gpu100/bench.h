// Timing with CUDA events: warm-up, repeats, median/min/max, optional L2 flush between repeats.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <vector>

namespace gpu100 {

struct Stats {
  double median_ms = 0, min_ms = 0, max_ms = 0, mean_ms = 0;
  int samples = 0;
  bool valid() const { return samples > 0; }
};

// Median (mean of the middle two for an even count), min, max, mean. Empty input -> samples 0.
Stats summarize(std::vector<double> samples_ms);

struct BenchOptions {
  int warmup = 3;          // untimed runs first: clocks ramp, caches and TLBs warm, lazy loading
  int iters = 20;          // timed runs; the median is reported
  bool flush_l2 = true;    // read a buffer of twice the L2 size before each timed run
  cudaStream_t stream = nullptr;
  std::function<void(cudaStream_t)> prepare;  // before every run (warm-up too), outside the events
  bool idle_start = false;  // synchronize after every run: each starts on an idle stream
};

// Times fn(stream) iters times, each between its own pair of events, and summarizes. With
// idle_start, `wall` (if given) gets the host clock of each timed run: start event to synchronize.
Stats benchmark(const std::function<void(cudaStream_t)>& fn, const BenchOptions& options,
                Stats* wall = nullptr);

// Rates from a time: bytes moved -> GB/s (1e9 bytes/s), flops -> TFLOP/s (1e12 flop/s).
inline double gbps(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0.0; }
inline double tflops(double flops, double ms) { return ms > 0 ? flops / (ms * 1e9) : 0.0; }

// Device-to-device cudaMemcpy of `bytes`: the practical bandwidth ceiling memory-bound days
// compare with. Rate counts read + write (2 * bytes). The probe copies at most
// kMaxCopyProbeBytes (and at most a quarter of the free memory): far beyond L2, where the rate no
// longer depends on the size, and small enough that days need not count its buffers.
constexpr size_t kMaxCopyProbeBytes = size_t(1) << 30;
struct CopyProbe {
  Stats time;
  double gbps = 0;
  size_t bytes = 0;  // what was actually copied
};
CopyProbe measure_copy_bandwidth(size_t bytes, const BenchOptions& options);

}  // namespace gpu100
