// Asynchronous streams: work queued on streams runs when the program synchronizes, interleaved
// across streams, and what two unordered operations do to the same bytes is checked.
//
// The runtime (runtime.cpp) turns each stream-ordered call into an operation: a closure that does
// the work, what it is ("kernel k (launch 3)"), the bytes it is known to touch (copies, memsets;
// a kernel's are recorded while it runs), the events it records and the events it waits for.
// Operations run when the host waits for them (stream, event and device synchronization,
// synchronous copies, queries), in stream order, after the events they wait for, and by the
// legacy default stream's rules; among the operations ready to run the fixed schedule takes the
// earliest issued, GPU100_EMU_SCHEDULE=random:SEED a random one.
//
// Each operation carries a vector clock (one entry per stream) of what is ordered before it:
// its stream's earlier work, the records of the events it waits for, the legacy default stream's
// barriers and what the host had waited for when it issued the operation. Two operations of
// which neither is ordered before the other, one writing bytes the other reads or writes (two
// strong accesses, e.g. atomics, excepted), are reported, and the program fails as on a race.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace emu::streams {

// The classes of bytes an operation touches.
enum : uint8_t { kRd = 0, kWr = 1, kStrongRd = 2, kStrongWr = 3, kClasses = 4 };

// The byte ranges an operation touched, per class, merged.
class Footprint {
 public:
  Footprint() = default;
  Footprint(const Footprint& o) { *this = o; }
  Footprint& operator=(const Footprint& o) {
    for (int c = 0; c < kClasses; ++c) {
      r_[c] = o.r_[c];
      have_last_[c] = false;
    }
    grain_ = o.grain_;
    return *this;
  }
  Footprint(Footprint&&) = default;  // a moved map keeps its nodes: the iterators stay valid
  Footprint& operator=(Footprint&&) = default;
  void add(uint64_t lo, uint64_t hi, int cls);  // [lo, hi)
  // add(), inline for bytes inside or right after the range last added (a warp's lanes, one
  // after the other), the common case of a kernel's accesses.
  void add_fast(uint64_t lo, uint64_t hi, int cls) {
    if (have_last_[cls] && lo >= last_lo_[cls] && lo <= last_hi_[cls] && hi < next_lo_[cls]) {
      if (hi > last_hi_[cls]) last_[cls]->second = last_hi_[cls] = hi;
      return;
    }
    add(lo, hi, cls);
  }
  bool empty() const;
  void merge(const Footprint& o);
  // The first range of this footprint that conflicts with `o`; false when none does.
  bool conflict(const Footprint& o, uint64_t* lo, uint64_t* hi, int* mine, int* theirs) const;

 private:
  void coarsen(int cls);
  std::map<uint64_t, uint64_t> r_[kClasses];  // lo -> hi
  std::map<uint64_t, uint64_t>::iterator last_[kClasses];  // the range last added to (valid if have_last_)
  uint64_t last_lo_[kClasses] = {}, last_hi_[kClasses] = {}, next_lo_[kClasses] = {};  // and the next one's start
  bool have_last_[kClasses] = {};
  uint64_t grain_ = 1;
};

// While a kernel of an operation runs (with the race check on), its global accesses land here.
extern Footprint* g_recording;
// From the sanitizer's access hook: one lane's global access (san::kRead/kWrite/kStrong bits:
// bits 0, 1 and 24, as exec/sanitizer.h defines them).
inline void note_access(uint64_t a, uint32_t size, uint32_t san_kind) {
  Footprint* f = g_recording;
  if (!f) return;
  const bool strong = san_kind & (1u << 24), read = san_kind & 1u, write = san_kind & 2u;
  if (write) f->add_fast(a, a + size, strong ? kStrongWr : kWr);
  if (read && !(write && strong)) f->add_fast(a, a + size, strong ? kStrongRd : kRd);
}

// Whether the cross-stream check runs (it is part of GPU100_EMU_CHECK's race check).
bool checking();

struct Stream;
Stream* legacy();
Stream* per_thread();  // the calling host thread's per-thread default stream
Stream* create(unsigned flags);
void destroy(Stream* s);  // its queued work still runs

struct Op {
  std::string what;                              // "cudaMemcpyAsync device to host of 64 bytes"
  std::function<cudaError_t(Op&)> run;           // may rename `what` (a kernel's launch number)
  Footprint footprint;                           // known bytes; a kernel adds what it touches
  std::vector<const void*> records, waits;       // events (cudaEvent_t)
  bool host_sync = false;                        // the host waits for it (a synchronous call)
  // Pinned host memory of cudaHostAlloc (whole pages of its own) the operation writes or reads: until it
  // runs, the host's reads and writes of the bytes it writes, and writes of the bytes it reads,
  // are reported (the pages are protected; see streams.cpp).
  std::vector<std::pair<uint64_t, uint64_t>> pinned_writes, pinned_reads;
};

// Queues an operation on a stream; returns the operation's number. When op.host_sync is set the
// call returns once it has run (and what it returned), the host then being ordered after it.
cudaError_t enqueue(Stream* s, Op op, uint64_t* id = nullptr);

// Synchronization: runs queued work until the target has run, and orders the host after it.
// Each returns the first error of the work it ran (a fault is also sticky in the runtime).
cudaError_t sync_stream(Stream* s);
cudaError_t sync_all();
cudaError_t sync_event(const void* event);
// The host's view of a stream or event for the queries: both run the work first, so the answer
// is always "complete" (cudaSuccess) or the error.
cudaError_t query_stream(Stream* s);
cudaError_t query_event(const void* event);
// cudaEventRecord / cudaStreamWaitEvent.
cudaError_t record(const void* event, Stream* s);
cudaError_t wait(Stream* s, const void* event);
// The time (CPU ms) the event's latest record completed, running the work it needs; false when the
// event was never recorded.
bool event_time(const void* event, double* ms);
void forget_event(const void* event);

// A graph launch's nodes, checked against each other: node i and node j, neither reachable
// from the other through the graph's edges, must not conflict. `reach[i][j]`: i before j.
void check_graph(const std::vector<std::string>& what, const std::vector<Footprint>& fp,
                 const std::vector<std::vector<bool>>& reach, const std::string& launch);
// Random choices of the schedule (GPU100_EMU_SCHEDULE=random:SEED): an index below n; 0 under the
// fixed schedule.
size_t pick(size_t n);
// "kernel NAME (launch N)", the name demangled.
std::string kernel_label(const std::string& mangled, uint64_t launch);

}  // namespace emu::streams
