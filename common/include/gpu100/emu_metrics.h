// The emulator's launch metrics, as a day reads them: what a version's kernels did under the
// emulator (sectors per request, bank conflicts, instructions; emu/README.md, "Metrics"). On a GPU
// there are none: the real runtime does not have the emulator's counters.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

// Every counter by name (launches .. local_store_requests, device_bytes_live, device_bytes_peak).
std::vector<std::pair<std::string, unsigned long long>> emu_metric_fields(const EmuMetrics& m);

// The report's columns for them under emulation, and a version's cells ("-" for none).
std::vector<std::string> emu_metric_columns();
std::vector<std::string> emu_metric_cells(const std::optional<EmuMetrics>& m);
// What the columns mean, for a note under the table.
std::string emu_metric_legend();

}  // namespace gpu100
