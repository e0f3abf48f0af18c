// Execution state: the device memory table, a launch, its resident blocks, their warps, and the
// Exec context every instruction handler receives.
#pragma once
#include <cstdint>
#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "emu.h"

namespace emu {

// ---------------------------------------------------------------------------------------------
// Device memory: allocations live in host memory; device pointers are their host addresses.
struct Allocation {
  uint64_t base = 0, bytes = 0;
  std::string what;       // "cudaMalloc", "__device__ foo", "cudaHostAlloc", ...
  bool writable = true;
  mutable void* shadow = nullptr;  // the checks' state for it (exec/sanitizer.cpp)
};

class MemoryTable {
 public:
  void add(uint64_t base, uint64_t bytes, std::string what, bool writable = true);
  bool remove(uint64_t base);
  // The allocation holding [addr, addr+size), or nullptr.
  const Allocation* find(uint64_t addr, uint64_t size) const {
    if (last_ && addr >= last_->base && addr + size <= last_->base + last_->bytes) return last_;
    return find_slow(addr, size);
  }
  const Allocation* find_slow(uint64_t addr, uint64_t size) const;
  std::string describe(uint64_t addr) const;  // the nearest allocation, for fault messages
  const std::map<uint64_t, Allocation>& all() const { return allocs_; }
  const Allocation* cached() const { return last_; }
  uint64_t live_bytes() const { return live_; }
  uint64_t peak_bytes() const { return peak_; }

 private:
  std::map<uint64_t, Allocation> allocs_;
  std::vector<Allocation> freed_;  // the most recent frees, to name a use after free
  mutable const Allocation* last_ = nullptr;
  uint64_t live_ = 0, peak_ = 0;
};
extern MemoryTable g_memory;
inline MemoryTable& memory() { return g_memory; }

// ---------------------------------------------------------------------------------------------
struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t(x) * y * z; }
};

struct Block;
struct Launch;
struct WgmmaState;  // exec/wgmma.cpp
namespace san { struct BlockState; }
namespace cluster { struct Cta; struct Clusters; }  // exec/cluster.cpp

struct Warp {
  Block* block = nullptr;
  uint32_t index = 0;            // warp within the block
  uint64_t* r = nullptr;         // registers: r[reg * 32 + lane]
  uint32_t pc[32] = {};
  uint32_t valid = 0;            // lanes that exist (a partial last warp has fewer)
  uint32_t exited = 0;
  uint32_t parked = 0;           // lanes waiting at a collective or a barrier
  uint32_t park_pc[32] = {};
  int8_t park_bar[32] = {};      // barrier id a parked lane waits at, -1 for a collective
  uint32_t park_member[32] = {}; // the member mask of the collective a parked lane waits at
  uint32_t call_depth[32] = {};
  // Return addresses of device-function calls, per lane; allocated by the first call.
  // Each call also saves the callee's registers and local bytes of the lane, restored at its
  // return, so that every activation of a recursive function has its own.
  struct CallStacks {
    std::array<std::vector<uint32_t>, 32> ret;
    std::array<std::vector<uint64_t>, 32> saved;
  };
  std::unique_ptr<CallStacks> calls;
  std::vector<uint32_t>& ret_stack(int lane) {
    if (!calls) calls = std::make_unique<CallStacks>();
    return calls->ret[size_t(lane)];
  }
  std::vector<uint64_t>& saved(int lane) {
    if (!calls) calls = std::make_unique<CallStacks>();
    return calls->saved[size_t(lane)];
  }
  uint8_t* local = nullptr;      // local memory of lane 0; lane l at local + l * local_bytes
  uint64_t steps = 0;
  std::shared_ptr<WgmmaState> wgmma;  // wgmma.mma_async in flight, setmaxnreg (exec/wgmma.cpp)
  bool done() const { return ((exited | ~valid)) == 0xFFFFFFFFu; }
  uint32_t ready() const { return valid & ~exited & ~parked; }
};

struct Barrier {
  uint32_t arrived = 0;
  uint32_t expected = 0;
  // Reached without a thread count: all threads of the block take part, and it waits for those
  // that have not exited (so an exit can complete it).
  bool whole_block = false;
  uint32_t red_popc = 0;
  bool red_and = true, red_or = false;
};

struct Block {
  Launch* launch = nullptr;
  Dim3 id;
  uint32_t linear = 0;
  uint32_t sm = 0;
  uint32_t nthreads = 0;
  std::vector<Warp> warps;
  std::vector<uint64_t> regs;
  std::vector<uint8_t> shared;
  std::vector<uint8_t> local;
  Barrier bars[16];
  uint32_t exited_threads = 0;
  bool done = false;
  san::BlockState* san = nullptr;  // the checks' state of the block (exec/sanitizer.cpp)
  cluster::Cta* cluster = nullptr; // its cluster, when the launch has any (exec/cluster.cpp)
};

// A kernel launched from the device (dynamic parallelism, exec/device_launch.cpp), waiting for
// its parent grid to finish: it runs after the parent, before the parent counts as complete.
struct ChildLaunch {
  Kernel* kernel = nullptr;
  Dim3 grid, block;
  uint32_t dyn_smem = 0;
  std::vector<uint8_t> params;
  bool tail = false;   // cudaStreamTailLaunch: after the parent and all its other children
  uint64_t stream = 0; // launches with the same key run in issue order: the block's NULL stream,
                       // a device-created stream; each fire-and-forget launch has its own key
};

struct Launch {
  Kernel* kernel = nullptr;
  Dim3 grid, block;
  uint32_t dyn_smem = 0;
  std::vector<uint8_t> params;   // the kernel's parameter buffer
  uint32_t smem_bytes = 0;       // static + dynamic
  uint32_t threads_per_block = 0;
  uint32_t warps_per_block = 0;
  uint64_t envreg[32] = {};
  uint64_t gridid = 0;
  // Dynamic parallelism: 0 for a grid launched from the host, the parent's + 1 for a child.
  uint32_t depth = 0;
  std::vector<ChildLaunch> children;         // launched by this grid's threads, in issue order
  std::map<uint32_t, int> last_error;        // cudaGetLastError() on the device, per thread
  std::vector<uint64_t> streams;             // created on the device by this grid's threads
  // Thread block clusters (exec/cluster.cpp): the cluster's dimensions in blocks (1x1x1 without
  // one), whether the launch named them (%is_explicit_cluster), and their state while it runs.
  Dim3 cluster;
  bool explicit_cluster = false;
  cluster::Clusters* clusters = nullptr;
};

// Dynamic parallelism. A device function pointer to a kernel (`mov.u64 %rd, kernel;`) is a
// handle naming the module and the entry; the launch runtime calls are builtins of the decoder.
uint64_t entry_handle(Module* m, const std::string& name);
// Runs the children (and theirs) of a grid that has finished, in an order the CUDA 12 device
// runtime allows; throws Fault as run_launch does.
void run_children(Launch& parent);
// After a fault: frees the parameter buffers of launches that will never run.
void abandon_device_launches();
uint64_t& grid_counter();  // the %gridid of the next launch

// ---------------------------------------------------------------------------------------------
// The context of one warp-instruction. Handlers read operands and write results through it.
struct Exec {
  Warp* w = nullptr;
  Block* b = nullptr;
  Launch* l = nullptr;
  const Kernel* k = nullptr;
  uint32_t pc = 0;
  uint32_t lanes_done = 0;   // collectives: lanes whose pc the handler advanced itself
  bool parked = false;       // the handler parked its lanes (a collective waiting for others)

  uint64_t& reg(uint32_t r, int lane) { return w->r[r * 32 + lane]; }

  uint64_t sreg(uint32_t id, int lane) const;

  // The address an [reg+imm] (or [imm]) operand names for a lane.
  __attribute__((always_inline)) uint64_t address(const Operand& a, int lane) const {
    const uint64_t sum = (a.kind == OK::reg ? w->r[a.reg * 32 + lane] : 0) + a.imm;
    return a.addr32 ? uint32_t(sum) : sum;
  }

  // The value of a source operand for a lane, as raw bits.
  __attribute__((always_inline)) uint64_t val(const Operand& o, int lane) const {
    if (o.kind == OK::reg) return w->r[o.reg * 32 + lane];
    if (o.kind == OK::imm) return o.imm;
    return val_slow(o, lane);
  }
  uint64_t val_slow(const Operand& o, int lane) const;
  __attribute__((always_inline)) bool pred(const Operand& o, int lane) const {
    bool v = val(o, lane) & 1;
    return o.neg ? !v : v;
  }
  __attribute__((always_inline)) void set(const Operand& o, int lane, uint64_t v) {
    if (o.kind == OK::reg) w->r[o.reg * 32 + lane] = v;
    else if (o.kind != OK::sink && o.kind != OK::none) bad_dest(o);
  }
  [[noreturn]] void bad_dest(const Operand& o) const;
  const Operand& vec(const Operand& o, int i) const { return k->vec_ops[o.reg + i]; }

  // Memory, with checks. `space` is the instruction's state space; addresses of the generic
  // space are resolved to global, shared or local here.
  __attribute__((always_inline)) uint8_t* addr(Space space, uint64_t a, uint32_t size, int lane, bool write) {
    // Fast paths: an aligned global access inside the allocation of the previous one; an
    // aligned shared access (or a generic one into the shared window) inside the block's
    // shared memory. Everything else (faults included) goes through addr_slow.
    if (!(a & (size - 1))) {
      if (space == Space::global) {
        const Allocation* al = memory().cached();
        if (al && a >= al->base && a + size <= al->base + al->bytes && (al->writable || !write))
          return reinterpret_cast<uint8_t*>(a);
      } else if (space == Space::shared) {
        if (a + size <= b->shared.size()) return b->shared.data() + a;
      } else if (space == Space::generic && a - kSharedWindow < kWindowSize) {
        const uint64_t o = a - kSharedWindow;
        if (o + size <= b->shared.size()) return b->shared.data() + o;
      }
    }
    return addr_slow(space, a, size, lane, write);
  }
  uint8_t* addr_slow(Space space, uint64_t a, uint32_t size, int lane, bool write);
  [[noreturn]] void fault(int error, const std::string& what, uint64_t a, int lane) const;
  [[noreturn]] void fail(const std::string& what, int lane = -1) const { fail_with(715, what, lane); }
  [[noreturn]] void fail_with(int error, const std::string& what, int lane) const;
};

// Totals over the program's launches (GPU100_EMU_STATS=1 prints them at exit).
struct Stats {
  uint64_t launches = 0, warp_instructions = 0, thread_instructions = 0;
  double cpu_seconds = 0;  // CPU time of the calling thread inside launches
};
Stats& stats();

// Runs a launch to completion; throws Fault on a fault, a deadlock or an undefined collective.
void run_launch(Launch& launch);

// "'<PTX statement>' at file.cu:LINE" for messages.
std::string source_of(const Kernel& k, uint32_t pc);

// Emulated device properties used by the executor (from the runtime's configuration).
struct DeviceConfig {
  int cc_major = 9, cc_minor = 0;
  int sms = 8;
  uint64_t l2_bytes = 1 << 20;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  int regs_per_sm = 65536;
  int smem_per_sm = 228 * 1024;
  int smem_per_block_optin = 227 * 1024;
  int smem_per_block = 48 * 1024;
  uint64_t total_mem = 16ull << 30;
  uint64_t pending_launch_limit = 2048;  // cudaLimitDevRuntimePendingLaunchCount
  bool random_schedule = false;
  uint64_t schedule_seed = 0;
};
DeviceConfig& device_config();

}  // namespace emu
