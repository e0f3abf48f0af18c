// Launches onto emulated SMs, blocks onto warps, warps onto instructions.
//
// Independent thread scheduling: each lane has its own pc. A warp runs the group of ready lanes
// that share the lowest pc; lanes that reach the pc where others wait merge with them, which is
// where a divergent branch reconverges. Collectives (shfl, vote, bar.warp.sync, mma, ...) park
// their lanes until every lane of the member mask has arrived at the same instruction.
// Barriers park lanes until the barrier's thread count has arrived (without a count: every
// thread of the block that has not exited).
//
// Blocks are dispatched in order onto a resident set as large as the occupancy calculator says
// the device holds, and the resident blocks take turns, so a block that spins on a flag another
// resident block sets (decoupled look-back, a grid barrier) makes progress.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <time.h>

#include "exec/cluster.h"
#include "exec/debug.h"
#include "exec/metrics.h"
#include "exec/ops.h"
#include "exec/sanitizer.h"

namespace emu {

namespace {

uint64_t g_clock = 0;  // warp-instructions executed by the device: %clock64
uint64_t g_thread_instructions = 0;

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

constexpr int kErrIllegalAddress = 700;
constexpr int kErrMisaligned = 716;
constexpr int kErrIllegalInstruction = 715;
constexpr int kErrLaunchFailure = 719;
constexpr int kErrAssert = 710;

std::string where(const Exec& x, int lane) {
  const Block& b = *x.b;
  char buf[256];
  uint32_t t = x.w->index * 32 + uint32_t(std::max(lane, 0));
  const Dim3& bd = x.l->block;
  std::snprintf(buf, sizeof buf, "block (%u,%u,%u) thread (%u,%u,%u)", b.id.x, b.id.y, b.id.z,
                t % bd.x, (t / bd.x) % bd.y, t / (bd.x * bd.y));
  return buf;
}

}  // namespace

std::string source_of(const Kernel& k, uint32_t pc) {
  if (pc >= k.code.size()) return "?";
  const Inst& in = k.code[pc];
  if (in.src < 0) return "?";
  const SourceRef& s = k.source[size_t(in.src)];
  std::string out = "'" + s.text + "'";
  auto file_name = [&](int id) {
    auto it = k.module->parsed.files.find(id);
    std::string file = it != k.module->parsed.files.end() ? it->second : "?";
    auto slash = file.rfind('/');
    return slash != std::string::npos ? file.substr(slash + 1) : file;
  };
  if (s.line > 0) {
    out += " at " + file_name(s.file) + ":" + std::to_string(s.line);
    if (s.inlined_line > 0)
      out += " (inlined at " + file_name(s.inlined_file) + ":" + std::to_string(s.inlined_line) + ")";
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Exec services

uint64_t Exec::sreg(uint32_t id, int lane) const {
  const uint32_t t = w->index * 32 + uint32_t(lane);
  const Dim3& bd = l->block;
  switch (id) {
    case sr_tid_x: return t % bd.x;
    case sr_tid_y: return (t / bd.x) % bd.y;
    case sr_tid_z: return t / (bd.x * bd.y);
    case sr_ntid_x: return bd.x;
    case sr_ntid_y: return bd.y;
    case sr_ntid_z: return bd.z;
    case sr_ctaid_x: return b->id.x;
    case sr_ctaid_y: return b->id.y;
    case sr_ctaid_z: return b->id.z;
    case sr_nctaid_x: return l->grid.x;
    case sr_nctaid_y: return l->grid.y;
    case sr_nctaid_z: return l->grid.z;
    case sr_laneid: return uint32_t(lane);
    case sr_warpid: return w->index;
    case sr_nwarpid: return (uint32_t(device_config().max_threads_per_sm) + 31) / 32;
    case sr_smid: return b->sm;
    case sr_nsmid: return uint32_t(device_config().sms);
    case sr_lanemask_eq: return 1u << lane;
    case sr_lanemask_le: return uint32_t((2ull << lane) - 1);
    case sr_lanemask_lt: return (1u << lane) - 1;
    case sr_lanemask_ge: return ~((1u << lane) - 1);
    case sr_lanemask_gt: return uint32_t(~((2ull << lane) - 1));
    case sr_clock: return uint32_t(g_clock);
    case sr_clock64: return g_clock;
    case sr_globaltimer:
      return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch()).count());
    case sr_gridid: return l->gridid;
    case sr_dynamic_smem_size: return l->dyn_smem;
    case sr_total_smem_size: return l->smem_bytes;
    default:
      if (id >= sr_envreg0 && id < sr_envreg0 + 32) return uint32_t(l->envreg[id - sr_envreg0]);
      if (id >= sr_cluster_ctarank && id < sr_count) return cluster::sreg(*this, id, lane);
      return 0;
  }
}

uint64_t Exec::val_slow(const Operand& o, int lane) const {
  if (o.kind == OK::sreg) return sreg(o.reg, lane);
  fail("an operand of this kind cannot be read here", lane);
}

void Exec::bad_dest(const Operand&) const { fail("destination is not a register"); }

void Exec::fail_with(int error, const std::string& what, int lane) const {
  throw Fault{error,
              "kernel " + k->name + ", " + where(*this, lane) + ", " + source_of(*k, pc) + ": " + what};
}

void Exec::fault(int error, const std::string& what, uint64_t a, int lane) const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(a));
  throw Fault{error,
              "kernel " + k->name + ", " + where(*this, lane) + ", " + source_of(*k, pc) + ": " +
                  what + " at address " + buf,
              a, lane};
}

uint8_t* Exec::addr_slow(Space space, uint64_t a, uint32_t size, int lane, bool write) {
  if (size > 1 && (a & (size - 1)))
    fault(kErrMisaligned, "misaligned " + std::to_string(size) + "-byte " + (write ? "store" : "load"), a, lane);
  if (space == Space::generic) {
    if (a - kSharedWindow < kWindowSize) { space = Space::shared; a -= kSharedWindow; }
    else if (a - kLocalWindow < kWindowSize) { space = Space::local; a -= kLocalWindow; }
    else space = Space::global;
  }
  switch (space) {
    case Space::global:
    case Space::konst: {
      const Allocation* al = memory().find(a, size);
      if (!al)
        fault(kErrIllegalAddress,
              std::string("out-of-bounds global ") + (write ? "store" : "load") + " of " +
                  std::to_string(size) + " bytes (" + memory().describe(a) + ")",
              a, lane);
      if (write && !al->writable) fault(kErrIllegalAddress, "store to read-only " + al->what, a, lane);
      return reinterpret_cast<uint8_t*>(a);
    }
    case Space::shared:
      if (a + size > b->shared.size()) {
        // A shared::cluster address of another block lies past every block's window.
        if ((a >> cluster::kRankShift) && l->clusters) return cluster::remote_shared(*this, a, size, lane, write);
        fault(kErrIllegalAddress,
              "shared memory access outside the block's " + std::to_string(b->shared.size()) +
                  " bytes",
              a, lane);
      }
      return b->shared.data() + a;
    case Space::local: {
      const uint32_t lb = k->local_bytes;
      if (a + size > lb)
        fault(kErrIllegalAddress, "local memory access outside the thread's " + std::to_string(lb) + " bytes", a, lane);
      return w->local + size_t(lane) * lb + a;
    }
    case Space::param:
      if (write) fault(kErrIllegalAddress, "store to kernel parameters", a, lane);
      if (a + size > l->params.size()) fault(kErrIllegalAddress, "read past the kernel parameters", a, lane);
      return l->params.data() + a;
    default:
      fail("unknown state space", lane);
  }
}

// ---------------------------------------------------------------------------------------------
// Warps

namespace {

struct Sched {
  Launch& l;
  Kernel& k;
  std::mt19937_64 rng;
  bool random;
};

// Under a random schedule: the pc of a random group of the ready lanes, each pc the ready
// lanes are at equally likely (whatever its number of lanes), so that a group of one lane that
// ran ahead is as likely to go on as the rest of the warp.
uint32_t random_group(Sched& s, const Warp& w, uint32_t ready, uint32_t lowest) {
  uint32_t pcs[32];
  int n = 0;
  for (uint32_t m = ready; m; m &= m - 1) {
    const uint32_t p = w.pc[__builtin_ctz(m)];
    if (std::find(pcs, pcs + n, p) == pcs + n) pcs[n++] = p;
  }
  return n > 1 ? pcs[s.rng() % uint64_t(n)] : lowest;
}

// Releases the lanes waiting at barrier `id` of block b (all its warps).
void release_barrier(Block& b, int id, const Kernel& k) {
  san::bar_release(b, uint32_t(id));
  Barrier& bar = b.bars[id];
  for (Warp& w : b.warps) {
    if (!w.parked) continue;
    for (uint32_t m = w.parked; m; m &= m - 1) {
      int lane = __builtin_ctz(m);
      if (w.park_bar[lane] != id) continue;
      const uint32_t pc = w.park_pc[lane];
      const Inst& in = k.code[pc];
      if (in.aux == 2) {  // bar.red: every participant receives the reduction
        const uint32_t kind = in.flags & 3;
        uint64_t v = kind == 1 ? bar.red_popc : kind == 2 ? bar.red_and : bar.red_or;
        w.r[in.o[0].reg * 32 + lane] = v;
      }
      w.pc[lane] = pc + 1;
      w.parked &= ~(1u << lane);
    }
  }
  bar = Barrier{};
}

// How many arrivals complete a barrier: its thread count, or for a barrier without one the
// block's threads that have not exited (the PTX ISA's barrier waits for the non-exited threads).
uint32_t barrier_needs(const Block& b, const Barrier& bar) {
  return bar.whole_block ? b.nthreads - b.exited_threads : bar.expected;
}

// After threads exit: a barrier of the whole block that waited only for them completes (the
// ISA's exit: "if the exiting threads are holding up the barrier, the barrier is released").
// Barriers with a thread count keep waiting for their count.
void release_after_exit(Block& b, const Kernel& k) {
  for (int id = 0; id < 16; ++id) {
    const Barrier& bar = b.bars[id];
    if (bar.arrived && bar.whole_block && bar.arrived == barrier_needs(b, bar)) release_barrier(b, id, k);
  }
}

// Completes the collectives whose remaining lanes have all exited: the parked lanes of one
// instruction and member mask run it together and move past it.
void complete_collectives(Exec& x, Warp& w, const Inst* code) {
  const uint32_t saved_pc = x.pc;
  for (uint32_t m = w.parked; m; m &= m - 1) {
    const int lane = __builtin_ctz(m);
    if (w.park_bar[lane] != -1 || !((w.parked >> lane) & 1)) continue;
    const uint32_t pc = w.park_pc[lane], member = w.park_member[lane];
    uint32_t group = 0;
    for (uint32_t g = w.parked; g; g &= g - 1) {
      const int l = __builtin_ctz(g);
      if (w.park_bar[l] == -1 && w.park_pc[l] == pc && w.park_member[l] == member) group |= 1u << l;
    }
    const uint32_t needed = member & w.valid & ~w.exited;
    if (needed & ~group) continue;
    x.pc = pc;
    if (code[pc].metric) metrics::memory(x, code[pc], group);
    if (code[pc].fn) code[pc].fn(x, code[pc], group);
    w.parked &= ~group;
    for (uint32_t g = group; g; g &= g - 1) w.pc[__builtin_ctz(g)] = pc + 1;
  }
  x.pc = saved_pc;
}

// An instruction that may suspend some of its lanes (Ctl::wait: mbarrier.try_wait). True when
// it did: the others move past it and the warp regroups.
__attribute__((noinline)) bool wait_step(Exec& x, const Inst& in, uint32_t mask, uint32_t active) {
  Warp& w = *x.w;
  if (active) {
    if (in.metric) metrics::memory(x, in, active);
    in.fn(x, in, active);
  }
  if (!(w.parked & mask)) return false;
  for (uint32_t m = mask & ~w.parked; m; m &= m - 1) w.pc[__builtin_ctz(m)] = x.pc + 1;
  return true;
}

// Runs up to `budget` warp-instructions of warp w. Returns how many ran. Traced is the traced
// warp of --trace (exec/debug.h): the same loop, reporting each instruction.
template <bool Traced>
uint64_t run_warp(Sched& s, Block& b, Warp& w, uint64_t budget) {
  Exec x;
  x.w = &w;
  x.b = &b;
  x.l = &s.l;
  x.k = &s.k;
  const Inst* code = s.k.code.data();
  uint64_t executed = 0;

  for (;;) {
    uint32_t ready = w.ready();
    if (!ready || executed >= budget) {
      if constexpr (Traced) debug::pause(x);
      return executed;
    }
    // The group: ready lanes at the lowest pc (under a random schedule: the lanes of a random
    // one of the pcs the ready lanes are at, which independent thread scheduling allows as well).
    uint32_t pc = ~0u;
    if (ready == kFullWarp) {  // every lane: loops the compiler vectorizes
      for (int lane = 0; lane < 32; ++lane) pc = std::min(pc, w.pc[lane]);
    } else {
      for (uint32_t m = ready; m; m &= m - 1) pc = std::min(pc, w.pc[__builtin_ctz(m)]);
    }
    if (s.random && (ready & (ready - 1))) pc = random_group(s, w, ready, pc);
    uint32_t mask = 0;
    if (ready == kFullWarp) {
      for (int lane = 0; lane < 32; ++lane) mask |= uint32_t(w.pc[lane] == pc) << lane;
    } else {
      for (uint32_t m = ready; m; m &= m - 1) {
        int lane = __builtin_ctz(m);
        if (w.pc[lane] == pc) mask |= 1u << lane;
      }
    }
    uint32_t others = ready & ~mask;
    uint32_t others_min = ~0u;
    for (uint32_t m = others; m; m &= m - 1) others_min = std::min(others_min, w.pc[__builtin_ctz(m)]);

    // Run the group until it diverges, blocks, meets other lanes or the budget ends.
    bool regroup = false;
    while (!regroup && executed < budget) {
      if (others) {
        // Reconverge where the lanes meet; under a random schedule, only sometimes: the group
        // may run on past the lanes waiting there (they follow on a later turn).
        if (pc == others_min && (!s.random || (s.rng() & 1))) {  // reconverge
          for (uint32_t m = others; m; m &= m - 1) {
            int lane = __builtin_ctz(m);
            if (w.pc[lane] == pc) mask |= 1u << lane;
          }
          others = ready & ~mask;
          others_min = ~0u;
          for (uint32_t m = others; m; m &= m - 1) others_min = std::min(others_min, w.pc[__builtin_ctz(m)]);
        } else if (pc > others_min && !s.random) {
          break;  // lower lanes first
        }
      }
      const Inst& in = code[pc];
      x.pc = pc;
      ++executed;
      ++g_clock;
      g_thread_instructions += uint32_t(__builtin_popcount(mask));
      uint32_t active = mask;
      if (in.guard >= 0) {
        const uint32_t truth = row_bits(w.r + size_t(in.guard) * 32);
        active = mask & (in.guard_neg ? ~truth : truth);
      }
      if constexpr (Traced) debug::step(x, pc, mask, active);
      // One branch for both per-instruction hooks (undefined values, in-flight wgmma registers).
      if (__builtin_expect((san::g_undefined | wgmma::g_pending) != 0, 0)) {
        EMU_SAN_STEP(x, in, mask, active);
        if (wgmma::g_pending) wgmma::step(x, in);
      }
      switch (in.ctl) {
        case Ctl::normal:
          if (active) {
            if (in.metric) metrics::memory(x, in, active);
            in.fn(x, in, active);
          }
          ++pc;
          break;
        case Ctl::bra:
          metrics::branch(active, mask);
          if (active == mask) {
            pc = in.target;
          } else if (active) {
            for (uint32_t m = mask; m; m &= m - 1) {
              int lane = __builtin_ctz(m);
              w.pc[lane] = (active >> lane) & 1 ? in.target : pc + 1;
            }
            regroup = true;
            continue;
          } else {
            ++pc;
          }
          break;
        case Ctl::exit: {
          if (active) {
            w.exited |= active;
            // Lanes waiting at a collective for these lanes wait no longer (the ISA waits for the
            // non-exited threads of the mask): the collective completes with the lanes there.
            if (w.parked) complete_collectives(x, w, code);
            b.exited_threads += uint32_t(__builtin_popcount(active));
            release_after_exit(b, s.k);
            if (b.cluster) cluster::exited(b, w, active);
          }
          const uint32_t rest = mask & ~active;
          for (uint32_t m = rest; m; m &= m - 1) w.pc[__builtin_ctz(m)] = pc + 1;
          regroup = true;
          continue;
        }
        case Ctl::trap:
          if (active) {
            x.pc = pc;
            throw Fault{in.aux == 1 ? kErrAssert : kErrIllegalInstruction,
                        "kernel " + s.k.name + ", " + where(x, __builtin_ctz(active)) + ", " +
                            source_of(s.k, pc) + ": " +
                            (in.aux == 1 ? "device-side assertion failed" : "trap")};
          }
          ++pc;
          break;
        case Ctl::call:
          if (active) {
            call_lanes(x, in, mask, active);
            regroup = true;
            continue;
          }
          ++pc;
          break;
        case Ctl::ret:
          if (active) {
            return_lanes(x, in, mask, active);
            regroup = true;
            continue;
          }
          ++pc;
          break;
        case Ctl::bar: {
          const uint32_t rest = mask & ~active;
          for (uint32_t m = rest; m; m &= m - 1) w.pc[__builtin_ctz(m)] = pc + 1;
          if (!active) { regroup = true; continue; }
          const int lane0 = __builtin_ctz(active);
          const uint64_t id = x.val(in.o[1], lane0);
          if (id >= 16) x.fail("barrier id " + std::to_string(id) + " out of range", lane0);
          uint32_t count = b.launch->threads_per_block;
          if (in.o[2].kind != OK::none) count = uint32_t(x.val(in.o[2], lane0));
          for (uint32_t m = active; m; m &= m - 1) {
            int lane = __builtin_ctz(m);
            if (x.val(in.o[1], lane) != id) x.fail("threads of one warp name different barriers", lane);
          }
          if (in.flags & kAligned) {
            // bar.sync / barrier.sync.aligned: every thread of a warp at the same instruction.
            for (uint32_t m = w.parked; m; m &= m - 1) {
              const int lane = __builtin_ctz(m);
              if (w.park_bar[lane] == int8_t(id) && w.park_pc[lane] != pc)
                x.fail("threads of one warp wait at different instructions for barrier " +
                           std::to_string(id) + " (bar.sync is .aligned: a divergent __syncthreads)",
                       lane0);
            }
          }
          Barrier& bar = b.bars[id];
          if (bar.arrived == 0) {
            bar.expected = count;
            bar.whole_block = false;
          } else if (bar.expected != count)
            x.fail("barrier " + std::to_string(id) + " reached with thread count " +
                       std::to_string(count) + " while " + std::to_string(bar.expected) + " expected",
                   lane0);
          if (san::g_checks) san::bar_arrive(x, uint32_t(id), in.o[2].kind != OK::none ? count : 0, active, in.aux == 1);
          if (in.o[2].kind == OK::none) bar.whole_block = true;
          bar.arrived += uint32_t(__builtin_popcount(active));
          if (in.aux == 2) {
            for (uint32_t m = active; m; m &= m - 1) {
              int lane = __builtin_ctz(m);
              bool p = x.pred(in.o[3], lane);
              bar.red_popc += p;
              bar.red_and = bar.red_and && p;
              bar.red_or = bar.red_or || p;
            }
          }
          if (in.aux == 1) {  // bar.arrive: counts, does not wait
            for (uint32_t m = active; m; m &= m - 1) w.pc[__builtin_ctz(m)] = pc + 1;
          } else {
            for (uint32_t m = active; m; m &= m - 1) {
              int lane = __builtin_ctz(m);
              w.park_pc[lane] = pc;
              w.park_bar[lane] = int8_t(id);
            }
            w.parked |= active;
          }
          if (bar.arrived > barrier_needs(b, bar))
            x.fail("barrier " + std::to_string(id) + ": more threads arrived (" +
                       std::to_string(bar.arrived) + ") than its count " + std::to_string(bar.expected),
                   lane0);
          if (bar.arrived == barrier_needs(b, bar)) release_barrier(b, int(id), s.k);
          regroup = true;
          continue;
        }
        case Ctl::wait: [[unlikely]]  // the handler suspends the lanes that must wait (try_wait)
          if (wait_step(x, in, mask, active)) {
            regroup = true;
            continue;
          }
          ++pc;
          break;
        case Ctl::cluster: {  // barrier.cluster.arrive / wait (exec/cluster.cpp)
          for (uint32_t m = mask & ~active; m; m &= m - 1) w.pc[__builtin_ctz(m)] = pc + 1;
          if (active) cluster::barrier(x, in, active);
          regroup = true;
          continue;
        }
        case Ctl::warpsync:
        case Ctl::collective: {
          if (!active) { ++pc; break; }
          if (san::g_checks & san::kSync) san::collective_arrive(x, active);
          // Lanes at one collective instruction may name different member masks (groups made
          // by __match_any_sync or a divergent __activemask): each mask is its own collective.
          uint32_t todo = active, advanced = mask & ~active, parked_now = 0, joined = 0, sent_back = 0;
          while (todo) {
            const int lane0 = __builtin_ctz(todo);
            const uint32_t member = in.member_op == 0xFF ? active
                                    : in.member_op == 0xFE ? w.valid  // .aligned: the whole warp
                                                           : uint32_t(x.val(in.o[in.member_op], lane0));
            uint32_t group = 0;
            if (in.member_op >= 0xFE || in.o[in.member_op].kind == OK::imm) {
              group = todo;  // one member mask for all the lanes
            } else if (in.o[in.member_op].kind == OK::reg && uniform_row(w.r + size_t(in.o[in.member_op].reg) * 32)) {
              group = todo;  // a register holding the same mask in every lane
            } else {
              for (uint32_t m = todo; m; m &= m - 1) {
                int lane = __builtin_ctz(m);
                if (uint32_t(x.val(in.o[in.member_op], lane)) == member) group |= 1u << lane;
              }
            }
            todo &= ~group;
            if (group & ~member)
              x.fail("a thread executes a collective whose member mask does not include it", __builtin_ctz(group & ~member));
            // The ISA waits for the non-exited threads of the mask: lanes that have exited, or
            // that a partial warp does not have, are not waited for (reading from one is an
            // error, which the instruction reports).
            const uint32_t needed = member & w.valid & ~w.exited;
            // bar.warp.sync may be met at different instructions (the ISA asks only for the
            // same member mask); the data collectives meet at one instruction.
            uint32_t waiting = 0;
            for (uint32_t m = w.parked & member; m; m &= m - 1) {
              int lane = __builtin_ctz(m);
              if (w.park_bar[lane] != -1 || w.park_member[lane] != member) continue;
              if (w.park_pc[lane] == pc || (in.ctl == Ctl::warpsync && code[w.park_pc[lane]].ctl == Ctl::warpsync))
                waiting |= 1u << lane;
            }
            if ((needed & ~(group | waiting)) == 0) {
              if (in.metric) metrics::memory(x, in, group | waiting);
              if (in.fn) in.fn(x, in, group | waiting);
              w.parked &= ~waiting;
              advanced |= group;
              joined |= waiting;
              for (uint32_t m = waiting; m; m &= m - 1) {
                const int lane = __builtin_ctz(m);
                if (w.park_pc[lane] != pc) { w.pc[lane] = w.park_pc[lane] + 1; joined &= ~(1u << lane); sent_back |= 1u << lane; }
              }
            } else {
              for (uint32_t m = group; m; m &= m - 1) {
                int lane = __builtin_ctz(m);
                w.park_pc[lane] = pc;
                w.park_bar[lane] = -1;
                w.park_member[lane] = member;
              }
              w.parked |= group;
              parked_now |= group;
            }
          }
          ++pc;
          if (parked_now || joined || sent_back) {
            for (uint32_t m = advanced | joined; m; m &= m - 1) w.pc[__builtin_ctz(m)] = pc;
            regroup = true;
            continue;
          }
          break;
        }
      }
    }
    if (!regroup) {
      for (uint32_t m = mask; m; m &= m - 1) w.pc[__builtin_ctz(m)] = pc;
    }
  }
}

// Why a block with no ready lane cannot go on.
[[noreturn]] void deadlock(Sched& s, Block& b) {
  // A block of a cluster, or one waiting at barrier.cluster: every waiting warp is listed, the
  // cluster barrier's too. Other blocks name the first waiting thread and what it waits for.
  bool at_cluster_barrier = false;
  for (const Warp& w : b.warps)
    for (uint32_t m = w.parked; m; m &= m - 1) at_cluster_barrier |= w.park_bar[__builtin_ctz(m)] == cluster::kBarrier;
  if (b.cluster && (s.l.cluster.count() > 1 || at_cluster_barrier)) cluster::deadlock(s.l, &b, 1);
  Exec x;
  x.b = &b;
  x.l = &s.l;
  x.k = &s.k;
  std::string why;
  for (Warp& w : b.warps) {
    if (!w.parked) continue;
    x.w = &w;
    int lane = __builtin_ctz(w.parked);
    x.pc = w.park_pc[lane];
    if (w.park_bar[lane] == -2) {
      why = mbarrier_wait_text(x, lane);
    } else if (w.park_bar[lane] >= 0) {
      const Barrier& bar = b.bars[w.park_bar[lane]];
      why = "barrier " + std::to_string(w.park_bar[lane]) + " waits for " +
            std::to_string(barrier_needs(b, bar)) + " threads but only " + std::to_string(bar.arrived) +
            " can arrive (" + std::to_string(b.exited_threads) +
            " threads of the block have exited): not every thread reaches the barrier";
    } else {
      why = "a collective waits for lanes of its member mask that never arrive";
      const uint32_t member = w.park_member[lane];
      for (uint32_t m = w.parked & member; m; m &= m - 1) {
        const int other = __builtin_ctz(m);
        if (w.park_bar[other] == -1 && w.park_member[other] != member) {
          char buf[160];
          std::snprintf(buf, sizeof buf,
                        "lanes of the member mask wait at a collective with another member mask "
                        "(lane %d: 0x%08x, lane %d: 0x%08x)",
                        lane, member, other, w.park_member[other]);
          why = buf;
          break;
        }
      }
    }
    throw Fault{kErrLaunchFailure, "kernel " + s.k.name + ", " + where(x, lane) + ", " +
                                       source_of(s.k, x.pc) + ": deadlock: " + why};
  }
  throw Fault{kErrLaunchFailure, "kernel " + s.k.name + ": deadlock"};
}

// The order in which blocks start: linear, or under a random schedule a random permutation of
// the grid (the hardware promises no order; a block may wait only for blocks that are sure to
// have started). A keyed Feistel network permutes [0, 4^h) and cycle-walks into [0, n), so a
// grid of any size is shuffled without a table.
struct BlockOrder {
  uint64_t n = 0;
  bool shuffled = false;
  int half = 1;          // bits in each half
  uint64_t key[4] = {};  // round keys
  BlockOrder(uint64_t blocks, bool random, std::mt19937_64& rng)
      : n(blocks), shuffled(random && blocks > 1) {
    while (half < 31 && (uint64_t(1) << (2 * half)) < n) ++half;
    for (uint64_t& k : key) k = rng();
  }
  uint64_t round(uint64_t v, uint64_t k) const {  // a 64-bit mix (splitmix64's finalizer)
    v ^= k;
    v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ull;
    v = (v ^ (v >> 27)) * 0x94d049bb133111ebull;
    return v ^ (v >> 31);
  }
  uint64_t operator()(uint64_t i) const {
    if (!shuffled) return i;
    const uint64_t mask = (uint64_t(1) << half) - 1;
    do {
      uint64_t l = i >> half, r = i & mask;
      for (const uint64_t k : key) {
        const uint64_t t = l ^ (round(r, k) & mask);
        l = r;
        r = t;
      }
      i = (l << half) | r;
    } while (i >= n);
    return i;
  }
};

// A launch whose resident blocks have run for a long time (8192 turns each, or 2^28
// warp-instructions in all) without storing anything, running an atomic, or finishing: they
// spin, waiting for each other or for a block that has not started. The hardware would hang;
// the emulator stops the launch and says where the blocks wait.
[[noreturn]] void livelock(Sched& s, std::vector<Block>& blocks, const std::vector<int64_t>& slot_block,
                           uint64_t rounds, uint64_t instructions) {
  std::string waits;
  int listed = 0;
  uint64_t running = 0;
  for (size_t i = 0; i < slot_block.size(); ++i) {  // blocks may hold more (kept) slots
    if (slot_block[i] < 0) continue;
    ++running;
    if (listed == 4) continue;
    Block& b = blocks[i];
    for (Warp& w : b.warps) {
      const uint32_t ready = w.ready();
      if (!ready) continue;
      Exec x;
      x.b = &b;
      x.l = &s.l;
      x.k = &s.k;
      x.w = &w;
      const int lane = __builtin_ctz(ready);
      waits += std::string(listed ? "; " : "") + where(x, lane) + " at " + source_of(s.k, w.pc[lane]);
      ++listed;
      break;
    }
  }
  throw Fault{kErrLaunchFailure,
              "kernel " + s.k.name + ": no progress: the " + std::to_string(running) +
                  " resident blocks ran " + std::to_string(rounds) + " turns each (" +
                  std::to_string(instructions) +
                  " warp-instructions) without a store, an atomic or a block finishing, so they "
                  "wait for something no running thread will do (" + waits +
                  "). Blocks start in no promised order: a block that waits for another block "
                  "may wait only for one that is sure to have started (one that took an earlier "
                  "ticket from an atomic counter, not one with a lower blockIdx)"};
}

// Stores, atomics and local stores so far: a launch whose blocks do none of them (and finish none)
// only spins.
uint64_t progress_mark() {
  const Gpu100EmuMetrics& c = metrics::g_counts;
  return c.global_store_requests + c.shared_store_requests + c.global_atomic_requests +
         c.shared_atomic_requests + c.local_store_requests;
}

void init_block(Sched& s, Block& b, uint32_t linear) {
  Launch& l = s.l;
  b.launch = &l;
  b.linear = linear;
  b.id.x = linear % l.grid.x;
  b.id.y = (linear / l.grid.x) % l.grid.y;
  b.id.z = linear / (l.grid.x * l.grid.y);
  b.nthreads = l.threads_per_block;
  b.done = false;
  b.exited_threads = 0;
  for (auto& bar : b.bars) bar = Barrier{};
  const uint32_t nw = l.warps_per_block;
  // Registers and local memory start undefined on hardware; a reused slot keeps its previous
  // block's values rather than paying to clear them (only fresh storage is zeroed).
  const size_t nregs = size_t(s.k.nregs) * 32 * nw, nlocal = size_t(s.k.local_bytes) * 32 * nw;
  if (b.regs.size() != nregs) b.regs.assign(nregs, 0);
  if (b.local.size() != nlocal) b.local.assign(nlocal, 0xFF);
  // Shared memory starts undefined too: all ones (NaN as a float), so a kernel that reads a
  // shared word before any thread wrote it cannot pass its check by reading a convenient zero.
  b.shared.assign(l.smem_bytes, 0xFF);
  b.warps.resize(nw);
  for (uint32_t i = 0; i < nw; ++i) {
    Warp& w = b.warps[i];
    w.exited = w.parked = 0;
    w.calls.reset();
    w.wgmma.reset();
    std::fill(std::begin(w.pc), std::end(w.pc), 0u);
    w.block = &b;
    w.index = i;
    w.r = b.regs.data() + size_t(s.k.nregs) * 32 * i;
    w.local = b.local.data() + size_t(s.k.local_bytes) * 32 * i;
    const uint32_t first = i * 32;
    const uint32_t n = std::min<uint32_t>(32, b.nthreads - first);
    w.valid = n == 32 ? 0xFFFFFFFFu : ((1u << n) - 1);
  }
  cluster::block_start(b);
  san::block_start(b);
}

}  // namespace

uint32_t resident_blocks_per_sm(const Launch& l);

Stats& stats() {
  static Stats s;
  return s;
}

namespace {
void run_blocks(Launch& l);
}

void run_launch(Launch& l) {
  const metrics::LaunchRecord record(l);  // declared first: it reads what Account adds up
  struct Debugging {  // the debugging aids' view of the launch (exec/debug.h), last to end
    Launch& l;
    explicit Debugging(Launch& launch) : l(launch) { debug::launch_begin(l); }
    ~Debugging() { debug::launch_end(l); }
  } debugging(l);
  Stats& st = stats();
  const double t0 = thread_cpu_seconds();
  const uint64_t c0 = g_clock, i0 = g_thread_instructions;
  struct Account {
    Stats& st; double t0; uint64_t c0, i0;
    ~Account() {
      st.launches++;
      st.warp_instructions += g_clock - c0;
      st.thread_instructions += g_thread_instructions - i0;
      st.cpu_seconds += thread_cpu_seconds() - t0;
    }
  } account{st, t0, c0, i0};
  san::LaunchScope checks(l);
  run_blocks(l);
  checks.finish();
}

namespace {
// The resident blocks' storage (registers, shared and local memory, warps) is kept from one
// launch to the next: a grid that fills many SMs (GPU100_EMU_SMS=132: a thousand blocks and
// more) would otherwise allocate and fault in hundreds of megabytes at every launch. A slot's
// registers and local memory start with what it last held (on hardware they start undefined).
struct BlockSlots {
  std::vector<Block> own;  // a launch inside a launch (none today) gets storage of its own
  std::vector<Block>* v;
  static std::vector<Block>& kept() {
    static std::vector<Block> k;
    return k;
  }
  static bool& busy() {
    static bool b = false;
    return b;
  }
  explicit BlockSlots(uint64_t n) : v(busy() ? &own : &kept()) {
    if (v == &kept()) busy() = true;
    if (v->size() < n) v->resize(n);
    for (uint64_t i = 0; i < n; ++i) (*v)[i].san = nullptr;  // the checks' states are per launch
  }
  ~BlockSlots() {
    if (v == &kept()) busy() = false;
  }
};

void run_blocks(Launch& l) {
  Kernel& k = *l.kernel;
  Sched s{l, k, std::mt19937_64(device_config().schedule_seed), device_config().random_schedule};
  const uint64_t nblocks = l.grid.count();
  const uint32_t per_sm = std::max<uint32_t>(1, resident_blocks_per_sm(l));
  uint64_t resident = std::min<uint64_t>(nblocks, uint64_t(per_sm) * device_config().sms);
  // Clusters: the slots hold whole clusters, refilled a cluster at a time (exec/cluster.h).
  const cluster::Scope clusters(l);
  const uint64_t csize = l.cluster.count();
  if (csize > 1) resident = std::max<uint64_t>(csize, resident / csize * csize);
  std::vector<uint8_t> group_moved(csize > 1 ? resident / csize : 0);
  BlockSlots slots(resident);
  std::vector<Block>& blocks = *slots.v;
  std::vector<int64_t> slot_block(resident, -1);
  uint64_t next = 0, finished = 0;
  // CUB's single-pass algorithms (scans, select, run-length encode, reduce-by-key) take their
  // tile from blockIdx and wait for the tiles before it: they rely on blocks starting in order,
  // which CUDA does not promise but NVIDIA's GPUs do (NVIDIA/cub#245). Their kernels (and
  // Thrust's, which reach them) keep the linear order; every other kernel's blocks are shuffled.
  const bool library_order = k.name.rfind("_ZN3cub", 0) == 0 || k.name.rfind("_ZN6thrust", 0) == 0;
  const BlockOrder start_order(nblocks, s.random && !library_order, s.rng);
  std::vector<uint32_t> sm_load(device_config().sms, 0);
  for (uint64_t i = 0; i < resident; ++i) {
    // Clusters are dispatched whole, in order (exec/cluster.h); other blocks in start_order.
    init_block(s, blocks[i], uint32_t(csize > 1 ? cluster::dispatched(l, next) : start_order(next)));
    blocks[i].sm = uint32_t(i % device_config().sms);
    slot_block[i] = int64_t(next++);
  }
  // A warp runs a slice of instructions before the next warp's turn.
  const uint64_t slice = 512;
  std::vector<uint32_t> order;
  // Turns of every resident block, and warp-instructions, with no store, atomic or finished block
  // anywhere (livelock).
  constexpr uint64_t kQuietRounds = 1u << 13, kQuietInstructions = 1ull << 28;
  uint64_t quiet = 0, mark = progress_mark(), finished_before = 0, clock_before = g_clock;
  while (finished < nblocks) {
    if (progress_mark() != mark || finished != finished_before) {
      mark = progress_mark();
      finished_before = finished;
      clock_before = g_clock;
      quiet = 0;
    } else if (++quiet == kQuietRounds || g_clock - clock_before >= kQuietInstructions) {
      livelock(s, blocks, slot_block, quiet, g_clock - clock_before);
    }
    for (uint64_t i = 0; i < resident; ++i) {
      if (slot_block[i] < 0) continue;
      Block& b = blocks[i];
      bool progress = false;
      bool all_done = true;
      order.resize(b.warps.size());
      for (uint32_t j = 0; j < order.size(); ++j) order[j] = j;
      if (s.random) std::shuffle(order.begin(), order.end(), s.rng);
      for (uint32_t j : order) {
        Warp& w = b.warps[j];
        if (w.done()) continue;
        uint64_t budget = s.random ? 1 + s.rng() % (2 * slice) : slice;
        const uint64_t ran = debug::g_trace_now && debug::traced(b, w) ? run_warp<true>(s, b, w, budget)
                                                                         : run_warp<false>(s, b, w, budget);
        if (ran) progress = true;
        if (!w.done()) all_done = false;
      }
      if (csize > 1) group_moved[i / csize] |= progress || all_done;
      if (all_done && csize > 1) {  // a cluster's slots are refilled when all its blocks are done
        ++finished;
        cluster::block_done(b);
        slot_block[i] = -1;
        const uint64_t g0 = i / csize * csize;
        bool group_done = true;
        for (uint64_t j = g0; j < g0 + csize; ++j) group_done &= slot_block[j] < 0;
        if (group_done && next < nblocks)
          for (uint64_t j = g0; j < g0 + csize; ++j) {
            const uint32_t sm = blocks[j].sm;
            init_block(s, blocks[j], uint32_t(cluster::dispatched(l, next)));
            blocks[j].sm = sm;
            slot_block[j] = int64_t(next++);
          }
      } else if (all_done) {
        ++finished;
        if (b.cluster) cluster::block_done(b);
        if (next < nblocks) {
          const uint32_t sm = b.sm;
          init_block(s, b, uint32_t(start_order(next)));
          b.sm = sm;
          slot_block[i] = int64_t(next++);
        } else {
          slot_block[i] = -1;
        }
      } else if (!progress && csize == 1) {
        deadlock(s, b);
      }
    }
    // A cluster none of whose blocks ran an instruction in a whole round cannot go on.
    for (size_t g = 0; g < group_moved.size(); ++g) {
      bool live = false;
      for (uint64_t j = g * csize; j < (g + 1) * csize; ++j) live |= slot_block[j] >= 0;
      if (live && !group_moved[g]) cluster::deadlock(l, &blocks[g * csize], csize);
      group_moved[g] = 0;
    }
  }
}

}  // namespace

}  // namespace emu
