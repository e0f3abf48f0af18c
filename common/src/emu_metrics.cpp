#include "gpu100/emu_metrics.h"

#include "gpu100/verify.h"
#include "internal.h"

#include <dlfcn.h>
#include <fmt/format.h>

namespace gpu100 {

namespace {

struct Entry {
  Gpu100EmuMetricsFn read = nullptr;
  Gpu100EmuResetPeakFn reset_peak = nullptr;
  unsigned long long (*device_address)(const void*) = nullptr;
};

// Looked up once: the symbols are there only when the emulator's libcudart.so.13 was loaded.
const Entry& entry() {
  static const Entry e = [] {
    Entry x;
    x.read = reinterpret_cast<Gpu100EmuMetricsFn>(dlsym(RTLD_DEFAULT, GPU100_EMU_METRICS_SYMBOL));
    x.reset_peak =
        reinterpret_cast<Gpu100EmuResetPeakFn>(dlsym(RTLD_DEFAULT, GPU100_EMU_RESET_PEAK_SYMBOL));
    x.device_address = reinterpret_cast<unsigned long long (*)(const void*)>(
        dlsym(RTLD_DEFAULT, "gpu100_emu_device_address"));
    return x;
  }();
  return e;
}

// A ratio as "4" or "4.98".
std::string ratio(unsigned long long a, unsigned long long b) {
  return a % b == 0 ? std::to_string(a / b) : fmt::format("{:.2f}", double(a) / double(b));
}

// "measured (ideal)" per request, or "-" when there were no requests.
std::string per_request(unsigned long long total, unsigned long long ideal,
                        unsigned long long requests) {
  if (requests == 0) return "-";
  return ratio(total, requests) + " (" + ratio(ideal, requests) + ")";
}

}  // namespace

std::optional<EmuMetrics> emu_metrics_now() {
  if (!entry().read) return std::nullopt;
  EmuMetrics m{};
  m.size = sizeof m;
  entry().read(&m);
  return m;
}

EmuMetricsScope::EmuMetricsScope() {
  if (entry().reset_peak) entry().reset_peak();
  start_ = emu_metrics_now();
}

std::optional<EmuMetrics> EmuMetricsScope::take() const {
  if (!start_) return std::nullopt;
  std::optional<EmuMetrics> now = emu_metrics_now();
  if (now) gpu100_emu_metrics_diff(&*now, &*start_);
  return now;
}

std::vector<std::pair<std::string, unsigned long long>> emu_metric_fields(const EmuMetrics& m) {
  std::vector<std::pair<std::string, unsigned long long>> f;
#define GPU100_FIELD_(name) f.emplace_back(#name, m.name);
  GPU100_EMU_METRICS_COUNTERS(GPU100_FIELD_)
#undef GPU100_FIELD_
  f.emplace_back("device_bytes_live", m.device_bytes_live);
  f.emplace_back("device_bytes_peak", m.device_bytes_peak);
  return f;
}

std::vector<std::string> emu_metric_columns() {
  return {"warp inst", "div br",      "ld req",    "ld sect/req", "st req",
          "st sect/req", "smem wf/req", "conflicts", "atomics g/s"};
}

std::vector<std::string> emu_metric_cells(const std::optional<EmuMetrics>& m) {
  if (!m) return std::vector<std::string>(emu_metric_columns().size(), "-");
  const unsigned long long smem_req = m->shared_load_requests + m->shared_store_requests;
  const unsigned long long smem_wf = m->shared_load_wavefronts + m->shared_store_wavefronts;
  const unsigned long long smem_ideal =
      m->shared_load_ideal_wavefronts + m->shared_store_ideal_wavefronts;
  return {std::to_string(m->warp_instructions),
          std::to_string(m->divergent_branches),
          std::to_string(m->global_load_requests),
          per_request(m->global_load_sectors, m->global_load_ideal_sectors, m->global_load_requests),
          std::to_string(m->global_store_requests),
          per_request(m->global_store_sectors, m->global_store_ideal_sectors,
                      m->global_store_requests),
          per_request(smem_wf, smem_ideal, smem_req),
          std::to_string(smem_wf - smem_ideal),
          fmt::format("{}/{}", m->global_atomic_threads, m->shared_atomic_threads)};
}

std::string emu_metric_legend() {
  return "emulated metrics of each version's checked run, counted on its PTX (emu/README.md): "
         "warp instructions, divergent branches, global load and store requests and 32-byte "
         "sectors per request (in parentheses: the fewest that hold the bytes used), "
         "shared-memory wavefronts per request (conflict-free) and the bank conflicts (the "
         "wavefronts beyond), atomic operations on global/shared memory; --json has every "
         "counter";
}

namespace detail {
uint64_t device_address_of(const void* host) {
  return entry().device_address ? entry().device_address(host) : 0;
}
}  // namespace detail

}  // namespace gpu100
