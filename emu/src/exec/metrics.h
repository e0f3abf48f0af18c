// Launch metrics: what the lessons are about (instructions, divergence, sectors per request,
// shared-memory wavefronts and bank conflicts, atomics), counted as the warps execute, with
// Nsight Compute's definitions where one exists (include/gpu100_emu_metrics.h lists them).
//
// The decoder marks each instruction that the metrics look at (Inst::metric, from its opcode
// table); the scheduler calls memory() for a marked instruction with its active lanes, and
// branch() for every bra.
#pragma once
#include <cstdint>
#include <exception>

#include "exec/machine.h"
#include "gpu100_emu_metrics.h"

namespace emu::metrics {

// What a marked instruction is (Inst::metric).
enum Kind : uint8_t { kNone = 0, kLoad, kStore, kAtomic, kCpAsync, kLdmatrix };

// The cumulative counters of every launch so far, except the instruction counts (stats()).
extern Gpu100EmuMetrics g_counts;

// A memory instruction executed by the lanes `active` (at least one).
void memory(const Exec& x, const Inst& in, uint32_t active);

// A bra executed by the group `mask`, of which `taken` jump.
inline void branch(uint32_t taken, uint32_t mask) {
  ++g_counts.branches;
  g_counts.divergent_branches += (taken != 0) & (taken != mask);
}

// Device memory allocated and freed (cudaMalloc and its kin).
void device_alloc(uint64_t bytes);
void device_free(uint64_t bytes);

// The counters as a program reads them (instruction counts included).
void read(Gpu100EmuMetrics* out);
void reset_peak();

// Lives for the duration of one launch; with GPU100_EMU_METRICS set, its end prints the launch's
// own counts as one line (to stderr for "1", appended to the file it names otherwise).
class LaunchRecord {
 public:
  explicit LaunchRecord(const Launch& l);
  ~LaunchRecord();

 private:
  const Launch& l_;
  Gpu100EmuMetrics before_;
  int exceptions_;
};

}  // namespace emu::metrics
