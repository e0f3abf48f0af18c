// Times and rates: the summary of a version's timed runs (gpu100::run times them with CUDA events)
// and the units the report converts them to.
#pragma once
#include <cstddef>
#include <vector>

namespace gpu100 {

struct Stats {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int samples = 0;
  bool valid() const { return samples > 0; }
};

// Median (mean of the middle two for an even count), min, max. Empty input -> samples 0.
Stats summarize(std::vector<double> samples_ms);

// Rates from a time: bytes moved -> GB/s (1e9 bytes/s), flops -> TFLOP/s (1e12 flop/s).
inline double gbps(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0.0; }
inline double tflops(double flops, double ms) { return ms > 0 ? flops / (ms * 1e9) : 0.0; }

// The device-to-device cudaMemcpy that Context::copy_baseline measures: the practical bandwidth
// ceiling memory-bound days compare with. Rate counts read + write (2 * bytes). It copies at most
// kMaxCopyProbeBytes (and at most a quarter of the free memory): far beyond L2, where the rate no
// longer depends on the size, and small enough that days need not count its buffers.
constexpr size_t kMaxCopyProbeBytes = size_t(1) << 30;
struct CopyProbe {
  Stats time;
  double gbps = 0;
  size_t bytes = 0;  // what was actually copied
};

}  // namespace gpu100
