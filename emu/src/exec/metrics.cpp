// Launch metrics: the counting behind include/gpu100_emu_metrics.h.
//
// The model of the memory pipeline, per warp-level request (one execution of a memory
// instruction by a warp, counted only when at least one lane is active):
//
// Global memory. A request touches the distinct 32-byte sectors that hold the bytes its active
// lanes access (an access is aligned to its size, so one of up to 32 bytes lies in one sector).
// Its ideal is the fewest sectors that could hold those bytes, ceil(distinct bytes / 32): a warp
// reading 32 consecutive floats touches 4 sectors and needs 4, one reading every other float
// touches 8 and needs 4, one whose floats start 4 bytes into a sector touches 5 and needs 4.
//
// Shared memory. 32 banks of 4-byte words; word w lives in bank w % 32. A request is served in
// 128-byte phases: all 32 lanes together for accesses of up to 4 bytes a lane, lanes 0-15 and
// 16-31 for 8 bytes, quarter-warps (lanes 0-7, 8-15, ...) for 16 bytes, each phase with an active
// lane taking at least one wavefront. Within a phase, lanes that access the same word are served
// together (a broadcast, or a multicast), lanes that need different words of one bank are served
// one word per wavefront: the phase takes as many wavefronts as the most distinct words any bank
// holds. The ideal is one wavefront per phase with an active lane; the wavefronts beyond it are
// the bank conflicts. ldmatrix is a 16-byte access by each lane that supplies a row address
// (lanes 0-7 per matrix), which is what the hardware does with it too.
//
// What this does not model: caches (every sector of a request counts, hit or not), the
// hardware's merging of requests, and the SASS that ptxas makes of the PTX (emu/README.md).
#include "exec/metrics.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "exec/cluster.h"
#include "exec/ops.h"

namespace emu::metrics {

Gpu100EmuMetrics g_counts{};

namespace {

inline uint64_t lane_address(const Exec& x, const Operand& a, int lane) {
  return x.address(a, lane);
}

// One global request over the n addresses in a[] (any order), each access `width` bytes.
void global_request(uint64_t* a, int n, bool sorted, uint32_t width, unsigned long long& requests,
                    unsigned long long& sectors, unsigned long long& ideal) {
  if (!sorted) std::sort(a, a + n);
  uint64_t bytes = 0, covered_end = 0, next_sector = 0, count = 0;
  for (int i = 0; i < n; ++i) {
    const uint64_t lo = a[i], hi = lo + width;
    const uint64_t from = std::max(lo, covered_end);
    if (hi > from) bytes += hi - from;
    covered_end = std::max(covered_end, hi);
    const uint64_t first = std::max(lo >> 5, next_sector), last = (hi - 1) >> 5;
    if (last >= first) count += last - first + 1;
    next_sector = std::max(next_sector, last + 1);
  }
  ++requests;
  sectors += count;
  ideal += (bytes + 31) / 32;
}

// The wavefronts of one phase: the most distinct words any bank is asked for. word[lane] is the
// lane's first 4-byte word (its offset / 4, kept to 32 bits).
uint32_t phase_wavefronts(const uint32_t* word, uint32_t lanes, uint32_t width) {
  uint32_t words[32];
  int n = 0;
  const uint32_t per_lane = width <= 4 ? 1 : width / 4;
  for (uint32_t m = lanes; m; m &= m - 1) {
    const uint32_t w0 = word[__builtin_ctz(m)];
    for (uint32_t j = 0; j < per_lane; ++j) words[n++] = w0 + j;
  }
  // Usually every bank is asked for at most one word: one pass decides it.
  uint32_t used = 0, bank_word[32];
  bool conflict = false;
  for (int i = 0; i < n && !conflict; ++i) {
    const uint32_t bank = words[i] & 31, bit = 1u << bank;
    if (!(used & bit)) {
      used |= bit;
      bank_word[bank] = words[i];
    } else if (bank_word[bank] != words[i]) {
      conflict = true;
    }
  }
  if (!conflict) return 1;
  std::sort(words, words + n);
  uint8_t per_bank[32] = {};
  uint32_t most = 0;
  for (int i = 0; i < n; ++i) {
    if (i && words[i] == words[i - 1]) continue;
    most = std::max<uint32_t>(most, ++per_bank[words[i] & 31]);
  }
  return most;
}

// One shared request by `lanes`, word[lane] being each lane's first word in the block's window.
// A phase whose words (each lane's first to last) lie within 32 consecutive words asks no bank
// for two different words: one wavefront, decided from the lowest and highest word alone.
void shared_request(const uint32_t* word, uint32_t lanes, uint32_t width,
                    unsigned long long& requests, unsigned long long& wavefronts,
                    unsigned long long& ideal) {
  const uint32_t per_phase = width <= 4 ? 32 : std::max<uint32_t>(1, 128 / width);
  const uint32_t phase_mask = per_phase == 32 ? ~0u : (1u << per_phase) - 1;
  const uint64_t last_word = width <= 4 ? 0 : width / 4 - 1;  // a lane's last word minus its first
  ++requests;
  if (lanes == ~0u && per_phase == 32) {  // the whole warp in one phase
    uint32_t lo = ~0u, hi = 0;
    for (int i = 0; i < 32; ++i) {  // from 0: the loads line up with the stores that wrote word[]
      lo = std::min(lo, word[i]);
      hi = std::max(hi, word[i]);
    }
    ++ideal;
    if (hi - lo < 32) ++wavefronts;
    else wavefronts += phase_wavefronts(word, lanes, width);
    return;
  }
  for (uint32_t first = 0; first < 32; first += per_phase) {
    const uint32_t in_phase = lanes & (phase_mask << first);
    if (!in_phase) continue;
    ++ideal;
    uint32_t lo = ~0u, hi = 0;
    const uint32_t end = std::min<uint32_t>(32, first + per_phase);
    for (uint32_t i = first; i < end; ++i) {
      const bool on = (in_phase >> i) & 1;
      lo = std::min(lo, on ? word[i] : ~0u);
      hi = std::max(hi, on ? word[i] : 0u);
    }
    if (uint64_t(hi) + last_word - lo < 32) ++wavefronts;
    else wavefronts += phase_wavefronts(word, in_phase, width);
  }
}
// Distributed shared memory: of the shared accesses `lanes` (offset[lane] in the shared window),
// those naming another block of the cluster are counted as DSMEM; returns them.
uint32_t dsmem(const Exec& x, const uint64_t* offset, uint32_t lanes, uint32_t width) {
  uint32_t remote = 0;
  for (uint32_t m = lanes; m; m &= m - 1) {
    const int lane = __builtin_ctz(m);
    if ((offset[lane] >> cluster::kRankShift) && cluster::target(x, offset[lane]) != x.b) remote |= 1u << lane;
  }
  if (remote) {
    ++g_counts.dsmem_requests;
    g_counts.dsmem_bytes += uint64_t(__builtin_popcount(remote)) * width;
  }
  return remote;
}

// A load or store (or the global side of cp.async) by `lanes` of `width` bytes each.
void access(const Exec& x, const Operand& op, uint32_t lanes, uint32_t width, Space space, bool store) {
  Gpu100EmuMetrics& c = g_counts;
  if (space == Space::global) {
    // One pass for the usual case, addresses in lane order that do not decrease: aligned
    // accesses of up to 32 bytes either coincide or are disjoint, and each lies in one sector.
    uint64_t a[32], prev = 0;
    uint32_t n = 0, distinct = 0, sectors = 0;
    bool sorted = true;
    auto& requests = store ? c.global_store_requests : c.global_load_requests;
    auto& sectors_total = store ? c.global_store_sectors : c.global_load_sectors;
    auto& ideal = store ? c.global_store_ideal_sectors : c.global_load_ideal_sectors;
    if (lanes == ~0u && op.kind == OK::reg && !op.addr32 && width <= 32) {
      // A full warp whose addresses step by one stride (the usual case): counted from the
      // stride, after a branch-free pass that the compiler vectorizes.
      const uint64_t* r = x.w->r + size_t(op.reg) * 32;
      const uint64_t stride = r[1] - r[0];
      uint64_t other = 0;
      for (int i = 2; i < 32; ++i) other |= (r[i] - r[i - 1]) ^ stride;
      if (other == 0 && int64_t(stride) >= 0) {
        const uint64_t first = r[0] + op.imm, last = r[31] + op.imm;
        ++requests;
        sectors_total += stride == 0 ? 1 : stride >= 32 ? 32 : (last >> 5) - (first >> 5) + 1;
        ideal += ((stride == 0 ? 1 : 32) * uint64_t(width) + 31) / 32;
        return;
      }
    }
    for (uint32_t m = lanes; m; m &= m - 1) {
      const uint64_t v = lane_address(x, op, __builtin_ctz(m));
      a[n] = v;
      if (n == 0 || v != prev) {
        sorted = sorted && (n == 0 || v > prev);
        ++distinct;
        sectors += n == 0 || (v >> 5) != (prev >> 5);
      }
      prev = v;
      ++n;
    }
    if (sorted && width <= 32) {
      ++requests;
      sectors_total += sectors;
      ideal += (uint64_t(distinct) * width + 31) / 32;
    } else {
      global_request(a, int(n), false, width, requests, sectors_total, ideal);
    }
    return;
  }
  if (space == Space::shared && op.kind == OK::reg && !x.l->clusters) {
    // Shared accesses through a register: every lane's word at once, in a loop the compiler
    // vectorizes (the registers of inactive lanes are read too, and ignored).
    const uint64_t* r = x.w->r + size_t(op.reg) * 32;
    uint32_t word[32];
    if (op.addr32)
      for (int i = 0; i < 32; ++i) word[i] = uint32_t(r[i] + op.imm) >> 2;
    else
      for (int i = 0; i < 32; ++i) word[i] = uint32_t((r[i] + op.imm) >> 2);
    if (store) shared_request(word, lanes, width, c.shared_store_requests, c.shared_store_wavefronts, c.shared_store_ideal_wavefronts);
    else shared_request(word, lanes, width, c.shared_load_requests, c.shared_load_wavefronts, c.shared_load_ideal_wavefronts);
    return;
  }
  uint64_t by_lane[32];
  uint32_t global = 0, shared = 0, local = 0;
  for (uint32_t m = lanes; m; m &= m - 1) {
    const int lane = __builtin_ctz(m);
    uint64_t a = lane_address(x, op, lane);
    if (space == Space::shared) {
      shared |= 1u << lane;
    } else if (space == Space::local) {
      local |= 1u << lane;
    } else if (a - kSharedWindow < kWindowSize) {  // generic
      a -= kSharedWindow;
      shared |= 1u << lane;
    } else if (a - kLocalWindow < kWindowSize) {
      local |= 1u << lane;
    } else {
      global |= 1u << lane;
    }
    by_lane[lane] = a;
  }
  if (shared && x.l->clusters) shared &= ~dsmem(x, by_lane, shared, width);
  if (shared) {
    uint32_t word[32];
    for (uint32_t m = shared; m; m &= m - 1) word[__builtin_ctz(m)] = uint32_t(by_lane[__builtin_ctz(m)] >> 2);
    if (store) shared_request(word, shared, width, c.shared_store_requests, c.shared_store_wavefronts, c.shared_store_ideal_wavefronts);
    else shared_request(word, shared, width, c.shared_load_requests, c.shared_load_wavefronts, c.shared_load_ideal_wavefronts);
  }
  if (local) ++(store ? c.local_store_requests : c.local_load_requests);
  if (global) {
    uint64_t a[32];
    int n = 0;
    for (uint32_t m = global; m; m &= m - 1) a[n++] = by_lane[__builtin_ctz(m)];
    if (store) global_request(a, n, false, width, c.global_store_requests, c.global_store_sectors, c.global_store_ideal_sectors);
    else global_request(a, n, false, width, c.global_load_requests, c.global_load_sectors, c.global_load_ideal_sectors);
  }
}

void atomic(const Exec& x, const Operand& op, uint32_t lanes, Space space, uint32_t width) {
  uint32_t global = 0, shared = 0;
  if (space == Space::global) global = lanes;
  else if (space == Space::shared) shared = lanes;
  else
    for (uint32_t m = lanes; m; m &= m - 1) {
      const int lane = __builtin_ctz(m);
      (lane_address(x, op, lane) - kSharedWindow < kWindowSize ? shared : global) |= 1u << lane;
    }
  if (shared && x.l->clusters) {
    uint64_t by_lane[32];
    for (uint32_t m = shared; m; m &= m - 1) {
      const int lane = __builtin_ctz(m);
      const uint64_t a = lane_address(x, op, lane);
      by_lane[lane] = a - kSharedWindow < kWindowSize ? a - kSharedWindow : a;
    }
    shared &= ~dsmem(x, by_lane, shared, width);
  }
  Gpu100EmuMetrics& c = g_counts;
  if (global) { ++c.global_atomic_requests; c.global_atomic_threads += uint32_t(__builtin_popcount(global)); }
  if (shared) { ++c.shared_atomic_requests; c.shared_atomic_threads += uint32_t(__builtin_popcount(shared)); }
}

// cp.async reads global memory like a load (Nsight Compute files it under op_ldgsts); lanes that
// copy nothing (src-size 0, ignore-src) read nothing. Its shared-memory side is not counted.
void cp_async(const Exec& x, const Inst& in, uint32_t lanes) {
  uint32_t reading = 0, width = 0;
  for (uint32_t m = lanes; m; m &= m - 1) {
    const int lane = __builtin_ctz(m);
    uint64_t src_size = in.o[3].kind != OK::none ? x.val(in.o[3], lane) : x.val(in.o[2], lane);
    if (in.o[4].kind != OK::none && x.pred(in.o[4], lane)) src_size = 0;
    if (src_size) reading |= 1u << lane;
    width = std::max<uint32_t>(width, uint32_t(x.val(in.o[2], lane)));
  }
  if (reading) access(x, in.o[1], reading, width, Space::global, false);
}

FILE* sink() {
  static FILE* f = [] () -> FILE* {
    const char* v = std::getenv("GPU100_EMU_METRICS");
    if (!v || !*v || !std::strcmp(v, "0")) return nullptr;
    if (!std::strcmp(v, "1")) return stderr;
    FILE* file = std::fopen(v, "a");
    if (!file) std::fprintf(stderr, "gpu100 emulator: GPU100_EMU_METRICS: cannot open %s\n", v);
    return file;
  }();
  return f;
}

}  // namespace

void memory(const Exec& x, const Inst& in, uint32_t active) {
  switch (in.metric) {
    case kLoad: access(x, in.o[1], active, in.aux * in.vec, in.space, false); break;
    case kStore: access(x, in.o[0], active, in.aux * in.vec, in.space, true); break;
    case kAtomic: atomic(x, in.o[1], active, in.space, uint32_t(type_bytes(in.type)) * in.vec); break;
    case kCpAsync: cp_async(x, in, active); break;
    case kLdmatrix: {
      const uint32_t rows = in.aux >= 4 ? ~0u : (1u << (8 * in.aux)) - 1;  // lanes giving addresses
      if (active & rows) access(x, in.o[1], active & rows, 16, in.space, false);
      break;
    }
    default: break;
  }
}

void device_alloc(uint64_t bytes) {
  g_counts.device_bytes_live += bytes;
  g_counts.device_bytes_peak = std::max(g_counts.device_bytes_peak, g_counts.device_bytes_live);
}
void device_free(uint64_t bytes) { g_counts.device_bytes_live -= std::min<uint64_t>(bytes, g_counts.device_bytes_live); }
void reset_peak() { g_counts.device_bytes_peak = g_counts.device_bytes_live; }

void read(Gpu100EmuMetrics* out) {
  Gpu100EmuMetrics all = g_counts;
  const Stats& s = stats();
  all.launches = s.launches;
  all.warp_instructions = s.warp_instructions;
  all.thread_instructions = s.thread_instructions;
  size_t size = out->size && out->size < sizeof all ? size_t(out->size) : sizeof all;
  all.size = size;
  std::memcpy(out, &all, size);
}

LaunchRecord::LaunchRecord(const Launch& l) : l_(l), exceptions_(std::uncaught_exceptions()) {
  before_.size = sizeof before_;
  if (sink()) read(&before_);
  g_counts.blocks += l.grid.count();
}

LaunchRecord::~LaunchRecord() {
  FILE* f = sink();
  if (!f) return;
  Gpu100EmuMetrics now;
  now.size = sizeof now;
  read(&now);
  gpu100_emu_metrics_diff(&now, &before_);
  std::fprintf(f, "gpu100 emulator metrics: launch=%llu kernel=%s grid=%u,%u,%u block=%u,%u,%u status=%s",
               (unsigned long long)stats().launches, l_.kernel->name.c_str(),
               l_.grid.x, l_.grid.y, l_.grid.z, l_.block.x, l_.block.y, l_.block.z,
               std::uncaught_exceptions() > exceptions_ ? "fault" : "ok");
#define EMU_PRINT_COUNTER(name) if (std::strcmp(#name, "launches")) std::fprintf(f, " " #name "=%llu", now.name);
  GPU100_EMU_METRICS_COUNTERS(EMU_PRINT_COUNTER)
#undef EMU_PRINT_COUNTER
  std::fprintf(f, " device_bytes_live=%llu device_bytes_peak=%llu", now.device_bytes_live,
               now.device_bytes_peak);
  // Registers per thread from the program's SASS ("none": it has none for the emulated device).
  if (l_.kernel->regs >= 0) std::fprintf(f, " regs=%d\n", l_.kernel->regs);
  else std::fprintf(f, " regs=none\n");
  std::fflush(f);
}

}  // namespace emu::metrics
