// The emulator's launch metrics, as a day reads them: what a version's kernels did under the
// emulator (sectors per request, bank conflicts, instructions; emu/README.md, "Metrics"). On a GPU
// there are none: the real runtime does not have the emulator's counters.
#pragma once
#include <optional>

#include "gpu100_emu_metrics.h"

namespace gpu100 {

using EmuMetrics = Gpu100EmuMetrics;

// The emulator's cumulative counters now; std::nullopt when not running under it.
std::optional<EmuMetrics> emu_metrics_now();

// Counts what runs between its construction and take(): the launches' counters, and in
// device_bytes_peak the most device memory allocated at once in between.
class EmuMetricsScope {
 public:
  EmuMetricsScope();
  std::optional<EmuMetrics> take() const;

 private:
  std::optional<EmuMetrics> start_;
};

}  // namespace gpu100
