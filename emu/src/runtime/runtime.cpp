// The CUDA runtime API (libcudart.so.13) over the emulator: registration hooks nvcc's generated
// code calls, device queries of the emulated device, memory, streams and events (executed in
// order, synchronously, on the calling thread), graphs and stream capture, launches.
//
// Errors follow the runtime's rules: a bad argument is returned and remembered for
// cudaGetLastError; a fault inside a kernel is sticky (every later call returns it), and the
// emulator prints what happened and where.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <sys/mman.h>

#include "exec/debug.h"
#include "exec/machine.h"
#include "exec/sanitizer.h"
#include "exec/metrics.h"
#include "ptx/fatbin.h"
#include "runtime/streams.h"

using namespace emu;

namespace emu {

// ---------------------------------------------------------------------------------------------
// Device memory table
void MemoryTable::add(uint64_t base, uint64_t bytes, std::string what, bool writable) {
  allocs_[base] = Allocation{base, bytes, std::move(what), writable};
  live_ += bytes;
  peak_ = std::max(peak_, live_);
  last_ = nullptr;
}
bool MemoryTable::remove(uint64_t base) {
  auto it = allocs_.find(base);
  if (it == allocs_.end()) return false;
  live_ -= it->second.bytes;
  san::on_release(it->second);
  if (freed_.size() >= 256) freed_.erase(freed_.begin());
  freed_.push_back(it->second);
  allocs_.erase(it);
  last_ = nullptr;
  return true;
}
const Allocation* MemoryTable::find_slow(uint64_t addr, uint64_t size) const {
  auto it = allocs_.upper_bound(addr);
  if (it == allocs_.begin()) return nullptr;
  --it;
  const Allocation& a = it->second;
  if (addr >= a.base && addr + size <= a.base + a.bytes && addr + size >= addr) {
    last_ = &a;
    return &a;
  }
  return nullptr;
}
std::string MemoryTable::describe(uint64_t addr) const {
  for (auto f = freed_.rbegin(); f != freed_.rend(); ++f) {
    if (addr >= f->base && addr < f->base + f->bytes && !find_slow(addr, 1)) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "%llu bytes into %s of %llu bytes at 0x%llx, which was freed",
                    (unsigned long long)(addr - f->base), f->what.c_str(),
                    (unsigned long long)f->bytes, (unsigned long long)f->base);
      return buf;
    }
  }
  if (allocs_.empty()) return "no device allocations";
  auto it = allocs_.upper_bound(addr);
  const Allocation* below = it != allocs_.begin() ? &std::prev(it)->second : nullptr;
  const Allocation* above = it != allocs_.end() ? &it->second : nullptr;
  char buf[256];
  if (below && addr >= below->base && addr < below->base + below->bytes) {
    std::snprintf(buf, sizeof buf, "%llu bytes into %s of %llu bytes at 0x%llx, access runs past its end",
                  (unsigned long long)(addr - below->base), below->what.c_str(),
                  (unsigned long long)below->bytes, (unsigned long long)below->base);
  } else if (below && (!above || addr - (below->base + below->bytes) <= above->base - addr)) {
    std::snprintf(buf, sizeof buf, "%llu bytes past the end of %s of %llu bytes at 0x%llx",
                  (unsigned long long)(addr - (below->base + below->bytes)), below->what.c_str(),
                  (unsigned long long)below->bytes, (unsigned long long)below->base);
  } else if (above) {
    std::snprintf(buf, sizeof buf, "%llu bytes before %s of %llu bytes at 0x%llx",
                  (unsigned long long)(above->base - addr), above->what.c_str(),
                  (unsigned long long)above->bytes, (unsigned long long)above->base);
  } else {
    std::snprintf(buf, sizeof buf, "no allocation near");
  }
  return buf;
}
MemoryTable g_memory;

DeviceConfig& device_config() {
  static DeviceConfig c = [] {
    DeviceConfig d;
    if (const char* s = std::getenv("GPU100_EMU_SMS")) d.sms = std::max(1, std::atoi(s));
    if (const char* s = std::getenv("GPU100_EMU_CC")) {
      int cc = std::atoi(s);
      if (cc >= 70) { d.cc_major = cc / 10; d.cc_minor = cc % 10; }
    }
    if (const char* s = std::getenv("GPU100_EMU_L2_KB")) d.l2_bytes = uint64_t(std::max(1, std::atoi(s))) << 10;
    if (const char* s = std::getenv("GPU100_EMU_MEM_MB")) d.total_mem = uint64_t(std::max(1, std::atoi(s))) << 20;
    if (const char* s = std::getenv("GPU100_EMU_SCHEDULE")) {
      std::string v = s;
      if (v.rfind("random", 0) == 0) {
        d.random_schedule = true;
        auto colon = v.find(':');
        d.schedule_seed = colon == std::string::npos ? 1 : std::strtoull(v.c_str() + colon + 1, nullptr, 10);
      }
    }
    return d;
  }();
  return c;
}

}  // namespace emu

namespace {

// ---------------------------------------------------------------------------------------------
// Registration: fatbinaries, kernels and variables of the program.
struct FatbinRecord {
  const void* wrapper = nullptr;
  std::vector<std::unique_ptr<Module>> modules;
  std::string error;
  std::unique_ptr<SassInfo> sass;  // read with the first kernel used
};

struct KernelRecord {
  FatbinRecord* fatbin = nullptr;
  std::string name;
  Kernel* kernel = nullptr;   // decoded on first use
  int max_dynamic_smem = -1;  // cudaFuncAttributeMaxDynamicSharedMemorySize
  // Clusters: cudaFuncAttributeNonPortableClusterSizeAllowed, the required dimensions set with
  // cudaFuncAttributeRequiredCluster{Width,Height,Depth} (0: none), ClusterDimMustBeSet.
  bool non_portable_cluster = false;
  int required_cluster[3] = {0, 0, 0};
  bool cluster_must_be_set = false;
};

struct VarRecord {
  FatbinRecord* fatbin = nullptr;
  std::string name;
  size_t size = 0;
  bool constant = false;
};

struct State {
  std::vector<std::unique_ptr<FatbinRecord>> fatbins;
  std::map<const void*, std::unique_ptr<KernelRecord>> kernels;  // by host stub
  std::map<const void*, VarRecord> vars;                         // by host shadow
  cudaError_t last = cudaSuccess;
  cudaError_t sticky = cudaSuccess;
  struct Config { dim3 grid, block; size_t smem; cudaStream_t stream; };
  std::vector<Config> configs;
  std::map<uint64_t, size_t> host_allocs;
  size_t limits[16] = {1024, 1 << 20, 8 << 20, 2, 2048, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  uint64_t gridid = 0;
};
State& st() {
  static State s;
  return s;
}

// GPU100_EMU_STATS=1: what the emulator executed, printed when the program exits.
struct StatsPrinter {
  ~StatsPrinter() {
    const char* v = std::getenv("GPU100_EMU_STATS");
    if (!v || !*v || *v == '0') return;
    const Stats& s = stats();
    std::fprintf(stderr,
                 "gpu100 emulator: %llu launches, %llu warp-instructions, %llu thread-instructions "
                 "in %.3f s of CPU time: %.1f million thread-instructions per second\n",
                 (unsigned long long)s.launches, (unsigned long long)s.warp_instructions,
                 (unsigned long long)s.thread_instructions, s.cpu_seconds,
                 s.cpu_seconds > 0 ? double(s.thread_instructions) / s.cpu_seconds / 1e6 : 0.0);
  }
} g_stats_printer;

cudaError_t set_error(cudaError_t e) {
  if (e != cudaSuccess) st().last = e;
  return e;
}
// Every API call returns a pending sticky error first.
#define EMU_STICKY() do { if (st().sticky != cudaSuccess) return st().sticky; } while (0)
// Calls that act at once on memory queued work may touch (2D copies and memsets, symbol copies,
// frees) first run all queued work, as a device synchronization would.
#define EMU_SYNC_ALL() do { EMU_STICKY(); if (cudaError_t e_ = streams::sync_all(); e_ != cudaSuccess) return e_; } while (0)

// The runtime API may be called from several host threads; the emulator runs one call at a
// time (a launch runs to completion inside its call).
std::recursive_mutex& api_mutex() {
  static std::recursive_mutex m;
  return m;
}
#define EMU_API_LOCK() std::lock_guard<std::recursive_mutex> api_lock_(api_mutex())

void say(const std::string& s) { std::fprintf(stderr, "gpu100 emulator: %s\n", s.c_str()); }

cudaError_t unsupported(const char* fn, const std::string& what) {
  say(std::string(fn) + ": " + what + " is not supported by the emulator");
  return set_error(cudaErrorNotSupported);
}

bool device_visible() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!v) return true;
  std::string s = v;
  return !(s.empty() || s[0] == '-' || s == "none" || s == "NoDevFiles");
}

// Device memory lives at the same addresses on every run of a program (the watch of
// scripts/emulate takes an address that an earlier run printed): allocations are carved in
// order from a range reserved at a fixed address, and an address is never handed out twice (a
// use after free stays an access outside every allocation). Where the range cannot be
// reserved, or is used up, the host's allocator serves, at addresses that vary between runs.
// A guard of unallocated addresses follows each allocation, so that an access a little past the
// end of one buffer is reported as outside every allocation instead of landing in the next.
constexpr uint64_t kHeapBase = 0x7000'0000'0000ull, kHeapBytes = 1ull << 40, kHeapGuard = 4096;
uint64_t g_heap_next = 0;  // 0: not reserved (yet)
bool g_heap_tried = false;

void* device_heap_alloc(size_t bytes) {
  if (!g_heap_tried) {
    g_heap_tried = true;
    void* r = mmap(reinterpret_cast<void*>(kHeapBase), kHeapBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (r == reinterpret_cast<void*>(kHeapBase)) g_heap_next = kHeapBase;
    else if (r != MAP_FAILED) munmap(r, kHeapBytes);  // a kernel without MAP_FIXED_NOREPLACE
  }
  const uint64_t rounded = (uint64_t(bytes) + 255) / 256 * 256;
  if (g_heap_next && g_heap_next + rounded <= kHeapBase + kHeapBytes) {
    void* q = reinterpret_cast<void*>(g_heap_next);
    g_heap_next += rounded + kHeapGuard;
    return q;
  }
  return std::aligned_alloc(256, rounded);
}
void device_heap_free(void* p, uint64_t bytes) {
  const uint64_t a = reinterpret_cast<uint64_t>(p);
  if (a < kHeapBase || a >= kHeapBase + kHeapBytes || !g_heap_next) {
    std::free(p);
    return;
  }
  // Gives the whole pages back; the addresses stay reserved.
  const uint64_t page = 4096, first = (a + page - 1) / page * page, end = (a + bytes) / page * page;
  if (end > first) madvise(reinterpret_cast<void*>(first), end - first, MADV_DONTNEED);
}

std::unique_ptr<Module> build_module(const std::string& text) {
  auto m = std::make_unique<Module>();
  m->ptx = text;
  m->parsed = parse_ptx(m->ptx);
  for (const PVar& v : m->parsed.vars) {
    if (v.space == Space::shared) continue;  // laid out per kernel by the decoder
    GlobalVar g;
    g.name = v.name;
    g.space = v.space;
    g.bytes = std::max<uint64_t>(1, v.bytes());
    void* p = device_heap_alloc(g.bytes);
    std::memset(p, 0, g.bytes);
    if (!v.init.empty()) std::memcpy(p, v.init.data(), std::min<size_t>(v.init.size(), g.bytes));
    g.storage = static_cast<uint8_t*>(p);
    memory().add(reinterpret_cast<uint64_t>(p), g.bytes,
                 std::string(v.space == Space::konst ? "__constant__ " : "__device__ ") + v.name,
                 v.space != Space::konst);
    m->var_index[v.name] = m->vars.size();
    m->vars.push_back(g);
  }
  // Initializers holding other variables' addresses.
  for (const PVar& v : m->parsed.vars) {
    if (v.init_symbols.empty() || !m->var_index.count(v.name)) continue;
    GlobalVar& g = m->vars[m->var_index[v.name]];
    for (const auto& [off, name] : v.init_symbols) {
      auto it = m->var_index.find(name);
      if (it == m->var_index.end()) continue;
      uint64_t addr;
      std::memcpy(&addr, g.storage + off, 8);
      addr += reinterpret_cast<uint64_t>(m->vars[it->second].storage);
      std::memcpy(g.storage + off, &addr, 8);
    }
  }
  return m;
}

// The modules of a registered fatbinary: one, or with relocatable device code one per linked
// object that has PTX for the emulated device (the device runtime's object has none).
bool load_modules(FatbinRecord* f) {
  if (!f->modules.empty()) return true;
  if (!f->error.empty()) return false;
  try {
    std::vector<PtxEntry> entries = fatbin_ptx_entries(f->wrapper);
    const int arch = device_config().cc_major * 10 + device_config().cc_minor;
    std::map<int, const PtxEntry*> best;  // per unit
    for (const PtxEntry& e : entries)
      if (e.arch <= arch && (!best[e.unit] || e.arch > best[e.unit]->arch)) best[e.unit] = &e;
    for (const auto& [unit, e] : best)
      if (e) f->modules.push_back(build_module(e->text));
    if (f->modules.empty()) {
      f->error = "the program has no PTX for compute capability " + std::to_string(arch) +
                 " or lower (build with PTX embedded, e.g. -arch=sm_90 or CUDA_ARCHITECTURES 90)";
      return false;
    }
    return true;
  } catch (const std::exception& e) {
    f->modules.clear();
    f->error = e.what();
    return false;
  }
}

// The kernel's registers and stack frame from the program's SASS for the emulated device, as a
// GPU would load it. A program without such SASS (PTX only, or only for other architectures)
// would be compiled by the driver, whose register counts are unknown here: registers then limit
// nothing (numRegs reads 32), and the metrics lines say regs=none.
void attach_sass(KernelRecord* k) {
  FatbinRecord* f = k->fatbin;
  const int cc = device_config().cc_major * 10 + device_config().cc_minor;
  if (!f->sass) f->sass = std::make_unique<SassInfo>(fatbin_sass_info(f->wrapper, cc));
  auto it = f->sass->kernels.find(k->name);
  if (it == f->sass->kernels.end()) return;
  k->kernel->regs = it->second.regs;
  k->kernel->sass_frame_bytes = uint32_t(it->second.frame_bytes);
}

KernelRecord* kernel_of(const void* func, cudaError_t* err) {
  auto it = st().kernels.find(func);
  if (it == st().kernels.end()) {
    *err = cudaErrorInvalidDeviceFunction;
    return nullptr;
  }
  KernelRecord* k = it->second.get();
  if (k->kernel) return k;
  if (!load_modules(k->fatbin)) {
    say("cannot load the kernels of this program: " + k->fatbin->error);
    *err = cudaErrorInvalidKernelImage;
    return nullptr;
  }
  try {
    for (auto& m : k->fatbin->modules)
      if (!k->kernel) k->kernel = m->kernel(k->name);
  } catch (const std::exception& e) {
    say(std::string("kernel ") + k->name + ": " + e.what());
    *err = cudaErrorInvalidPtx;
    return nullptr;
  }
  if (!k->kernel) {
    say("kernel " + k->name + " is not in the program's PTX");
    *err = cudaErrorInvalidDeviceFunction;
    return nullptr;
  }
  attach_sass(k);
  return k;
}

// ---------------------------------------------------------------------------------------------
// Registers, by the CUDA occupancy calculator's rules (cuda_occupancy.h) for compute capability
// 7.0 and later: a warp is allocated its threads' registers rounded up to 256; the SM's 65536
// registers are split among 4 sub-partitions, each holding whole warps; and the hardware checks a
// block as if its warps were spread over all 4 (warps rounded up to a multiple of 4) against the
// 65536 registers a block may have. Kernels without SASS (regs -1) are not limited.
constexpr int kRegsPerBlock = 65536, kSubPartitions = 4;
int regs_per_warp(const Kernel& k) { return (k.regs * 32 + 255) / 256 * 256; }
bool block_fits_registers(const Kernel& k, int warps) {
  if (k.regs <= 0) return true;
  return k.regs <= 255 && regs_per_warp(k) * ((warps + kSubPartitions - 1) / kSubPartitions * kSubPartitions) <= kRegsPerBlock;
}
// The most threads a block of the kernel may have (cudaFuncAttributes::maxThreadsPerBlock): the
// device's 1024, the kernel's .maxntid / .reqntid, and its registers.
int max_threads_per_block(const Kernel& k) {
  int n = k.maxntid ? k.maxntid : k.reqntid ? k.reqntid : 1024;
  while (n > 0 && !block_fits_registers(k, (n + 31) / 32)) n = ((n + 31) / 32 - 1) * 32;
  return n;
}

// Occupancy: the emulated SM's limits on threads, blocks, shared memory and registers.
int blocks_per_sm(const Kernel& k, int threads, size_t dyn_smem) {
  const DeviceConfig& c = device_config();
  if (threads <= 0) return 0;
  const int warps = (threads + 31) / 32;
  int n = std::min(c.max_blocks_per_sm, (c.max_threads_per_sm / 32) / warps);
  const size_t smem = k.static_smem + dyn_smem;
  if (smem) n = std::min<int>(n, int((c.smem_per_sm) / ((smem + 127) / 128 * 128 + 1024)));
  if (!block_fits_registers(k, warps)) return 0;
  if (k.regs > 0) n = std::min(n, (c.regs_per_sm / kSubPartitions / regs_per_warp(k)) * kSubPartitions / warps);
  return std::max(0, n);
}

}  // namespace

namespace emu {
uint32_t resident_blocks_per_sm(const Launch& l) {
  return uint32_t(std::max(1, blocks_per_sm(*l.kernel, int(l.threads_per_block), l.dyn_smem)));
}
}  // namespace emu

namespace {

// ---------------------------------------------------------------------------------------------
// Launch
struct LaunchRequest {
  KernelRecord* rec = nullptr;
  dim3 grid, block;
  size_t smem = 0;
  std::vector<uint8_t> params;
  bool cooperative = false;
  dim3 cluster{1, 1, 1};          // the launch's cluster dimensions (1x1x1: none)
  bool explicit_cluster = false;  // named at compile time or by the launch
};

// The cluster dimensions a launch gets: the launch attribute's (`given`, null without one), the
// kernel's compile-time ones (__cluster_dims__: .reqnctapercluster) or those set with
// cudaFuncSetAttribute. The CUDA Programming Guide's rules: a compile-time size cannot be changed
// at launch, the grid is a whole number of clusters in every dimension, and a cluster holds at
// most 8 blocks (the portable size), 16 with cudaFuncAttributeNonPortableClusterSizeAllowed.
// A launch that breaks one fails with cudaErrorInvalidClusterSize ("cluster misconfiguration").
cudaError_t cluster_dims(const KernelRecord& rec, dim3 grid, const dim3* given, dim3* out, bool* named,
                         bool check_grid = true) {
  const Kernel& k = *rec.kernel;
  dim3 required{1, 1, 1};
  bool has_required = false;
  if (k.cluster_dims[0]) {
    required = dim3(k.cluster_dims[0], k.cluster_dims[1], k.cluster_dims[2]);
    has_required = true;
  } else if (rec.required_cluster[0]) {
    required = dim3(unsigned(rec.required_cluster[0]), unsigned(rec.required_cluster[1]), unsigned(rec.required_cluster[2]));
    has_required = true;
  }
  dim3 c = has_required ? required : dim3(1, 1, 1);
  auto dims = [](dim3 d) { return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z); };
  auto refuse = [&](const std::string& why) {
    say("kernel " + rec.name + ": " + why);
    return cudaErrorInvalidClusterSize;
  };
  if (given) {
    if (given->x == 0 || given->y == 0 || given->z == 0) return refuse("a cluster dimension of 0");
    if (has_required && (given->x != required.x || given->y != required.y || given->z != required.z))
      return refuse("launched with clusters of " + dims(*given) + ", but its cluster size is " + dims(required) +
                    (k.cluster_dims[0] ? " (__cluster_dims__: fixed at compile time)" : " (cudaFuncAttributeRequiredCluster*)"));
    c = *given;
  } else if (!has_required && (k.explicit_cluster || rec.cluster_must_be_set)) {
    return refuse("must be launched with a cluster dimension, and none was given");
  }
  const uint64_t size = uint64_t(c.x) * c.y * c.z;
  const uint64_t limit = rec.non_portable_cluster ? 16 : 8;
  if (size > limit)
    return refuse("a cluster of " + std::to_string(size) + " blocks: at most " + std::to_string(limit) +
                  (rec.non_portable_cluster ? "" : " (the portable size; 16 with cudaFuncAttributeNonPortableClusterSizeAllowed)"));
  if (check_grid && (grid.x % c.x || grid.y % c.y || grid.z % c.z))
    return refuse("the grid " + dims(grid) + " is not a whole number of clusters of " + dims(c));
  *out = c;
  *named = given || has_required;
  return cudaSuccess;
}

cudaError_t prepare(const void* func, dim3 grid, dim3 block, void** args, size_t smem,
                    LaunchRequest& req, const dim3* cluster = nullptr) {
  cudaError_t err = cudaSuccess;
  KernelRecord* rec = kernel_of(func, &err);
  if (!rec) return err;
  const Kernel& k = *rec->kernel;
  const uint64_t threads = uint64_t(block.x) * block.y * block.z;
  if (block.x == 0 || block.y == 0 || block.z == 0 || grid.x == 0 || grid.y == 0 || grid.z == 0 ||
      block.x > 1024 || block.y > 1024 || block.z > 64 || threads > 1024 || grid.y > 65535 ||
      grid.z > 65535 || grid.x > 0x7FFFFFFFu)
    return cudaErrorInvalidConfiguration;
  if (k.reqntid && threads != uint64_t(k.reqntid)) return cudaErrorInvalidConfiguration;
  // More threads than the kernel's .maxntid or its registers allow: refused as the hardware does.
  if (threads > uint64_t(max_threads_per_block(k))) return cudaErrorLaunchOutOfResources;
  const DeviceConfig& c = device_config();
  const size_t dyn_limit = rec->max_dynamic_smem >= 0 ? size_t(rec->max_dynamic_smem)
                                                       : size_t(c.smem_per_block) - std::min<size_t>(c.smem_per_block, k.static_smem);
  if (smem > dyn_limit || k.static_smem + smem > size_t(c.smem_per_block_optin)) return cudaErrorInvalidValue;
  // Clusters: the launch attribute's dimensions or the kernel's own (graph kernel nodes too).
  if (cudaError_t e = cluster_dims(*rec, grid, cluster, &req.cluster, &req.explicit_cluster); e != cudaSuccess)
    return e;
  req.rec = rec;
  req.grid = grid;
  req.block = block;
  req.smem = smem;
  req.params.assign(k.param_bytes, 0);
  for (size_t i = 0; i < k.param_offsets.size(); ++i) {
    if (!args || !args[i]) return cudaErrorInvalidValue;
    std::memcpy(req.params.data() + k.param_offsets[i], args[i], k.param_sizes[i]);
  }
  return cudaSuccess;
}

cudaError_t execute(LaunchRequest& req) {
  Kernel& k = *req.rec->kernel;
  if (debug::g_enabled) {  // the kernels the debugging options name must exist
    std::vector<std::string> names;
    for (const auto& [stub, rec] : st().kernels) names.push_back(rec->name);
    debug::check_kernels(names);
  }
  Launch l;
  l.kernel = &k;
  l.grid = Dim3{req.grid.x, req.grid.y, req.grid.z};
  l.block = Dim3{req.block.x, req.block.y, req.block.z};
  l.dyn_smem = uint32_t(req.smem);
  l.params = req.params;
  l.threads_per_block = req.block.x * req.block.y * req.block.z;
  l.warps_per_block = (l.threads_per_block + 31) / 32;
  // The dynamic window starts after the static variables, 16-byte aligned (k.smem_align).
  const uint32_t dyn_base = (k.static_smem + k.smem_align - 1) / k.smem_align * k.smem_align;
  l.smem_bytes = dyn_base + l.dyn_smem;
  l.gridid = ++grid_counter();
  l.cluster = Dim3{req.cluster.x, req.cluster.y, req.cluster.z};
  l.explicit_cluster = req.explicit_cluster;
  std::vector<uint8_t> workspace;
  if (req.cooperative) {
    const uint64_t capacity = uint64_t(resident_blocks_per_sm(l)) * device_config().sms;
    if (l.grid.count() > capacity) return cudaErrorCooperativeLaunchTooLarge;
    workspace.assign(256, 0);
    const uint64_t a = reinterpret_cast<uint64_t>(workspace.data());
    memory().add(a, workspace.size(), "the grid-synchronization workspace");
    l.envreg[1] = a >> 32;
    l.envreg[2] = a & 0xFFFFFFFFu;
  }
  cudaError_t result = cudaSuccess;
  try {
    run_launch(l);
    run_children(l);  // a grid is complete when its children are
  } catch (const Fault& f) {
    abandon_device_launches();
    say(f.message);
    result = cudaError_t(f.error);
    st().sticky = result;
  }
  if (req.cooperative) memory().remove(reinterpret_cast<uint64_t>(workspace.data()));
  return result;
}

// ---------------------------------------------------------------------------------------------
// Streams, events, graphs. Work is queued on its stream and runs when the program synchronizes
// (runtime/streams.cpp); a capturing stream records it instead.
struct Node;
struct GraphImpl {
  std::vector<std::unique_ptr<Node>> nodes;
};
struct EventImpl {
  double ms = -1;
  unsigned flags = 0;
};
struct Node {
  enum Kind { kernel, memcpy_, memset_, memcpy3d, host, empty, event_record, event_wait } kind = kernel;
  LaunchRequest launch;
  void* dst = nullptr;
  const void* src = nullptr;
  size_t bytes = 0;       // memset: bytes of each row
  int value = 0;
  unsigned element = 1;   // memset: the value is stored in elements of 1, 2 or 4 bytes
  size_t rows = 1, pitch = 0;
  cudaMemcpy3DParms copy{};
  cudaHostFn_t fn = nullptr;
  void* user = nullptr;
  EventImpl* event = nullptr;
  std::vector<const Node*> deps;  // nodes of the same graph that must run first
  std::shared_ptr<std::vector<uint8_t>> staged;  // a pageable source, copied when issued
};
struct StreamImpl {
  GraphImpl* capture = nullptr;
  unsigned flags = 0;
  streams::Stream* queue = nullptr;
  const Node* capture_tail = nullptr;  // the node captured last: the next one depends on it
};
struct GraphExecImpl {
  std::vector<Node> nodes;
  std::map<const Node*, size_t> index;  // source node -> position
};

// A graph's nodes in an order that honours every dependency: Kahn's algorithm, taking the
// earliest-added ready node first, so a captured graph (whose nodes carry no edges) runs in
// issue order.
std::vector<const Node*> execution_order(const GraphImpl& g) {
  std::map<const Node*, size_t> position;
  for (size_t i = 0; i < g.nodes.size(); ++i) position[g.nodes[i].get()] = i;
  std::vector<size_t> waiting(g.nodes.size(), 0);
  std::vector<std::vector<size_t>> dependents(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const Node* d : g.nodes[i]->deps) {
      auto it = position.find(d);
      if (it == position.end()) continue;
      dependents[it->second].push_back(i);
      ++waiting[i];
    }
  std::set<size_t> ready;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!waiting[i]) ready.insert(i);
  std::vector<const Node*> order;
  while (!ready.empty()) {
    const size_t i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(g.nodes[i].get());
    for (size_t j : dependents[i])
      if (--waiting[j] == 0) ready.insert(j);
  }
  return order;  // complete: cudaGraphAddDependencies refuses an edge that would close a cycle
}

// The legacy default stream (0 or cudaStreamLegacy) and the per-thread default stream are
// handles, not objects. A program built with --default-stream per-thread calls the _ptsz / _ptds
// entry points, for which 0 is the calling thread's per-thread default stream.
StreamImpl* stream_of(cudaStream_t s) {
  if (s == cudaStreamLegacy || s == cudaStreamPerThread) return nullptr;
  return reinterpret_cast<StreamImpl*>(s);
}
thread_local bool t_per_thread_default = false;
thread_local bool t_memset_sync = false;  // inside cudaMemset (not cudaMemsetAsync)
struct PerThreadDefault {  // inside a _ptsz / _ptds entry point
  bool saved = t_per_thread_default;
  PerThreadDefault() { t_per_thread_default = true; }
  ~PerThreadDefault() { t_per_thread_default = saved; }
};
streams::Stream* queue_of(cudaStream_t s) {
  if (s == cudaStreamPerThread || (!s && t_per_thread_default)) return streams::per_thread();
  if (!s || s == cudaStreamLegacy) return streams::legacy();
  return reinterpret_cast<StreamImpl*>(s)->queue;
}
double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A copy between pitched linear memory (CUDA arrays are not emulated): extent.depth slices of
// extent.height rows of extent.width bytes, each side starting at its position.
char* pitched_at(const cudaPitchedPtr& p, const cudaPos& pos, size_t y, size_t z) {
  return static_cast<char*>(p.ptr) + (pos.z + z) * p.pitch * p.ysize + (pos.y + y) * p.pitch + pos.x;
}
cudaError_t copy_3d(const cudaMemcpy3DParms& p) {
  for (size_t z = 0; z < p.extent.depth; ++z)
    for (size_t y = 0; y < p.extent.height; ++y) {
      char* to = pitched_at(p.dstPtr, p.dstPos, y, z);
      const char* from = pitched_at(p.srcPtr, p.srcPos, y, z);
      std::memmove(to, from, p.extent.width);
      san::on_copy(to, from, p.extent.width);
    }
  return cudaSuccess;
}

bool in_table(const void* p, size_t bytes);

cudaError_t run_node(Node& n) {
  switch (n.kind) {
    case Node::kernel: return execute(n.launch);
    case Node::memcpy_:
      if (debug::g_enabled) debug::host_write(n.dst, n.bytes, "cudaMemcpy", n.src);
      std::memmove(n.dst, n.src, n.bytes);
      san::on_copy(n.dst, n.src, n.bytes);
      if (debug::g_enabled) debug::host_write_done();
      // Remembered for a check that asks where an element of its host copy came from.
      if (in_table(n.src, n.bytes)) debug::note_download(n.dst, reinterpret_cast<uint64_t>(n.src), n.bytes);
      return cudaSuccess;
    case Node::memset_:
      if (debug::g_enabled) debug::host_write(n.dst, n.pitch * (n.rows - 1) + n.bytes, "cudaMemset", nullptr);
      for (size_t r = 0; r < n.rows; ++r) {
        char* row = static_cast<char*>(n.dst) + r * n.pitch;
        if (n.element == 1) {
          std::memset(row, n.value, n.bytes);
        } else {
          for (size_t i = 0; i < n.bytes; i += n.element) std::memcpy(row + i, &n.value, n.element);
        }
        san::on_host_write(row, n.bytes);
      }
      if (debug::g_enabled) debug::host_write_done();
      return cudaSuccess;
    case Node::memcpy3d: return copy_3d(n.copy);
    case Node::host: n.fn(n.user); return cudaSuccess;
    case Node::event_record: n.event->ms = now_ms(); return cudaSuccess;
    case Node::empty: case Node::event_wait: return cudaSuccess;  // ordering only
  }
  return cudaSuccess;
}

// What a node is, for the reports of unordered work (a kernel's launch number is known when it runs).
std::string node_what(const Node& n) {
  auto bytes = [](size_t b) { return std::to_string(b) + " bytes"; };
  switch (n.kind) {
    case Node::kernel: return "kernel " + n.launch.rec->name;
    case Node::memcpy_: return "a copy of " + bytes(n.bytes);
    case Node::memset_: return "a memset of " + bytes(n.bytes * n.rows);
    case Node::memcpy3d: return "a 3D copy";
    case Node::host: return "a host function";
    case Node::empty: return "an empty node";
    case Node::event_record: return "an event record";
    case Node::event_wait: return "an event wait";
  }
  return "work";
}
// The bytes a node touches that are known before it runs; a kernel's are recorded as it runs.
void node_footprint(const Node& n, streams::Footprint& f) {
  auto add = [&](const void* p, size_t b, int cls) {
    const uint64_t a = reinterpret_cast<uint64_t>(p);
    f.add(a, a + b, cls);
  };
  switch (n.kind) {
    case Node::memcpy_:
      add(n.dst, n.bytes, streams::kWr);
      if (!n.staged) add(n.src, n.bytes, streams::kRd);
      break;
    case Node::memset_:
      for (size_t r = 0; r < n.rows; ++r) add(static_cast<char*>(n.dst) + r * n.pitch, n.bytes, streams::kWr);
      break;
    case Node::memcpy3d:
      for (size_t z = 0; z < n.copy.extent.depth; ++z)
        for (size_t y = 0; y < n.copy.extent.height; ++y) {
          add(pitched_at(n.copy.dstPtr, n.copy.dstPos, y, z), n.copy.extent.width, streams::kWr);
          add(pitched_at(n.copy.srcPtr, n.copy.srcPos, y, z), n.copy.extent.width, streams::kRd);
        }
      break;
    default: break;
  }
}
void name_kernel(const Node& n, streams::Op& o) {
  if (n.kind == Node::kernel) o.what = streams::kernel_label(n.launch.rec->name, grid_counter() + 1);
}

// Queues a node on its stream (or adds it to the graph the stream captures, after the node the
// stream captured last). `host_sync`: the call returns once it has run.
cudaError_t issue(cudaStream_t s, Node n, bool host_sync = false) {
  if (StreamImpl* si = stream_of(s); si && si->capture) {
    auto node = std::make_unique<Node>(std::move(n));
    if (si->capture_tail) node->deps.push_back(si->capture_tail);
    si->capture_tail = node.get();
    si->capture->nodes.push_back(std::move(node));
    return cudaSuccess;
  }
  streams::Op op;
  op.what = node_what(n);
  node_footprint(n, op.footprint);
  op.host_sync = host_sync;
  // Pinned host memory of cudaHostAlloc the queued copy or memset touches: the host must not
  // touch it before the work has run.
  auto pinned = [](const void* p, size_t b) {
    const Allocation* a = memory().find(reinterpret_cast<uint64_t>(p), std::max<size_t>(b, 1));
    return a && st().host_allocs.count(a->base) != 0;
  };
  auto range = [](const void* p, size_t b) {
    return std::make_pair(reinterpret_cast<uint64_t>(p), reinterpret_cast<uint64_t>(p) + b);
  };
  if ((n.kind == Node::memcpy_ || n.kind == Node::memset_) && n.rows == 1 && pinned(n.dst, n.bytes))
    op.pinned_writes.push_back(range(n.dst, n.bytes));
  if (n.kind == Node::memcpy_ && !n.staged && pinned(n.src, n.bytes)) op.pinned_reads.push_back(range(n.src, n.bytes));
  auto node = std::make_shared<Node>(std::move(n));
  op.run = [node](streams::Op& o) {
    name_kernel(*node, o);
    return run_node(*node);
  };
  return streams::enqueue(queue_of(s), std::move(op));
}

// ---------------------------------------------------------------------------------------------
// Memory checks for copies: a device pointer must lie in an allocation, with the whole range.
bool in_table(const void* p, size_t bytes) {
  return bytes == 0 || memory().find(reinterpret_cast<uint64_t>(p), bytes) != nullptr;
}
cudaError_t check_copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (bytes == 0) return cudaSuccess;
  if (!dst || !src) return cudaErrorInvalidValue;
  const bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  const bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if (kind == cudaMemcpyDefault) return cudaSuccess;
  if ((dst_dev && !in_table(dst, bytes)) || (src_dev && !in_table(src, bytes))) {
    say("cudaMemcpy: a device range is not inside one allocation (" +
        memory().describe(reinterpret_cast<uint64_t>(dst_dev && !in_table(dst, bytes) ? dst : src)) + ")");
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

void* symbol_address(const void* symbol, size_t* size) {
  auto it = st().vars.find(symbol);
  if (it == st().vars.end()) return nullptr;
  if (!load_modules(it->second.fatbin)) return nullptr;
  for (auto& m : it->second.fatbin->modules) {
    auto vi = m->var_index.find(it->second.name);
    if (vi == m->var_index.end()) continue;
    if (size) *size = m->vars[vi->second].bytes;
    return m->vars[vi->second].storage;
  }
  return nullptr;
}

}  // namespace

namespace {

// ---------------------------------------------------------------------------------------------
// Memory beyond cudaMalloc. Every kind lives in host memory and is entered in the memory table,
// so kernels reach it through its own address and every access is bounds-checked:
//   registered host memory (cudaHostRegister): the program's own bytes, mapped as they are;
//   managed memory (cudaMallocManaged): device memory the host also reads and writes directly;
//   stream-ordered allocations (cudaMallocAsync): device memory that belongs to a pool.
// Execution is serialized, so host and device never touch managed memory at the same time,
// and a stream-ordered free takes effect at once (a later use is a use after free).
struct MemPoolImpl {
  uint64_t release_threshold = 0;
  int reuse[3] = {1, 1, 1};  // cudaMemPoolReuse*: recorded, nothing is reused out of order here
  uint64_t used = 0, used_high = 0;
  bool destroyed = false;    // by cudaMemPoolDestroy while allocations were outstanding
};
struct MemoryKinds {
  std::map<uint64_t, unsigned> registered;  // base -> cudaHostRegister flags
  std::set<uint64_t> managed;
  struct PoolAllocation { MemPoolImpl* pool; uint64_t bytes; };
  std::map<uint64_t, PoolAllocation> pooled;
  MemPoolImpl default_pool;
  MemPoolImpl* current_pool = &default_pool;
  unsigned device_flags = cudaDeviceMapHost;  // implicit for the runtime, as cudaGetDeviceFlags says
  // __managed__ variables: the host reaches each through a pointer the runtime sets when the
  // program first touches one (nvcc's generated code calls __cudaInitModule then).
  struct ManagedVar { FatbinRecord* fatbin; void** host_slot; std::string name; };
  std::vector<ManagedVar> managed_vars;
};
MemoryKinds& kinds() {
  static MemoryKinds k;
  return k;
}

// Points the host's handles of a fatbinary's __managed__ variables at their storage (the module's
// global variables, which kernels use directly).
bool bind_managed_vars(FatbinRecord* f) {
  if (!load_modules(f)) {
    say("cannot load the module of this program's __managed__ variables: " + f->error);
    return false;
  }
  for (const auto& v : kinds().managed_vars) {
    if (v.fatbin != f) continue;
    for (auto& m : f->modules) {
      auto it = m->var_index.find(v.name);
      if (it == m->var_index.end()) continue;
      *v.host_slot = m->vars[it->second].storage;
      kinds().managed.insert(reinterpret_cast<uint64_t>(m->vars[it->second].storage));
      break;
    }
  }
  return true;
}

// The allocation holding p, if it is host memory the device may use (cudaHostAlloc,
// cudaHostRegister).
const Allocation* host_mapping_of(const void* p) {
  const Allocation* a = memory().find(reinterpret_cast<uint64_t>(p), 1);
  if (!a) return nullptr;
  return st().host_allocs.count(a->base) || kinds().registered.count(a->base) ? a : nullptr;
}
bool is_managed(const void* p, size_t bytes) {
  const Allocation* a = memory().find(reinterpret_cast<uint64_t>(p), std::max<size_t>(bytes, 1));
  return a && kinds().managed.count(a->base);
}

// An allocation leaving the table through cudaFree or cudaFreeAsync.
void forget_allocation(uint64_t base) {
  kinds().managed.erase(base);
  auto it = kinds().pooled.find(base);
  if (it == kinds().pooled.end()) return;
  MemPoolImpl* pool = it->second.pool;
  pool->used -= std::min(pool->used, it->second.bytes);
  kinds().pooled.erase(it);
  if (pool->destroyed && pool->used == 0) delete pool;
}

cudaError_t check_location(const cudaMemLocation& l) {
  switch (l.type) {
    case cudaMemLocationTypeDevice: return l.id == 0 ? cudaSuccess : cudaErrorInvalidDevice;
    case cudaMemLocationTypeHost: case cudaMemLocationTypeHostNuma: case cudaMemLocationTypeHostNumaCurrent:
      return cudaSuccess;
    default: return cudaErrorInvalidValue;
  }
}

// A 3D copy's checks: linear memory only, positions and widths inside the pitches, device sides
// inside one allocation.
cudaError_t check_copy_3d(const cudaMemcpy3DParms& p, const char* fn) {
  if (p.srcArray || p.dstArray) return unsupported(fn, "a copy to or from a CUDA array");
  if (!p.srcPtr.ptr || !p.dstPtr.ptr) return cudaErrorInvalidValue;
  const cudaExtent e = p.extent;
  if (e.width == 0 || e.height == 0 || e.depth == 0) return cudaErrorInvalidValue;
  if (p.srcPos.x + e.width > p.srcPtr.pitch || p.dstPos.x + e.width > p.dstPtr.pitch) return cudaErrorInvalidValue;
  if (e.depth > 1 && (p.srcPos.y + e.height > p.srcPtr.ysize || p.dstPos.y + e.height > p.dstPtr.ysize))
    return cudaErrorInvalidValue;
  if (p.kind == cudaMemcpyDefault || p.kind == cudaMemcpyHostToHost) return cudaSuccess;
  const bool dst_dev = p.kind == cudaMemcpyHostToDevice || p.kind == cudaMemcpyDeviceToDevice;
  const bool src_dev = p.kind == cudaMemcpyDeviceToHost || p.kind == cudaMemcpyDeviceToDevice;
  if (!dst_dev && !src_dev) return cudaErrorInvalidMemcpyDirection;
  auto span_ok = [&](const cudaPitchedPtr& ptr, const cudaPos& pos) {
    const char* first = pitched_at(ptr, pos, 0, 0);
    const char* last = pitched_at(ptr, pos, e.height - 1, e.depth - 1) + e.width;
    return in_table(first, size_t(last - first));
  };
  if ((dst_dev && !span_ok(p.dstPtr, p.dstPos)) || (src_dev && !span_ok(p.srcPtr, p.srcPos))) {
    say(std::string(fn) + ": a device range is not inside one allocation");
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

bool in_graph(const GraphImpl& g, const Node* n) {
  return std::any_of(g.nodes.begin(), g.nodes.end(), [&](const auto& m) { return m.get() == n; });
}
// A node for graph g, after dependencies that must all be nodes of g.
cudaError_t add_node(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* deps, size_t count,
                     std::unique_ptr<Node> n) {
  if (!out || !g || (count && !deps)) return cudaErrorInvalidValue;
  GraphImpl& graph = *reinterpret_cast<GraphImpl*>(g);
  for (size_t i = 0; i < count; ++i) {
    const Node* d = reinterpret_cast<const Node*>(deps[i]);
    if (!in_graph(graph, d) || std::find(n->deps.begin(), n->deps.end(), d) != n->deps.end())
      return cudaErrorInvalidValue;  // not a node of g, or named twice
    n->deps.push_back(d);
  }
  *out = reinterpret_cast<cudaGraphNode_t>(n.get());
  graph.nodes.push_back(std::move(n));
  return cudaSuccess;
}
// Whether `from` depends, directly or not, on `on`.
bool depends_on(const Node* from, const Node* on) {
  std::vector<const Node*> todo{from};
  std::set<const Node*> seen;
  while (!todo.empty()) {
    const Node* n = todo.back();
    todo.pop_back();
    if (n == on) return true;
    if (!seen.insert(n).second) continue;
    todo.insert(todo.end(), n->deps.begin(), n->deps.end());
  }
  return false;
}

}  // namespace

// =============================================================================================
// The API
extern "C" {

// --- registration hooks ----------------------------------------------------------------------
void** __cudaRegisterFatBinary(void* fatCubin) {
  EMU_API_LOCK();
  auto rec = std::make_unique<FatbinRecord>();
  rec->wrapper = fatCubin;
  void** handle = reinterpret_cast<void**>(rec.get());
  st().fatbins.push_back(std::move(rec));
  return handle;
}
void __cudaRegisterFatBinaryEnd(void**) {
  EMU_API_LOCK();}
void __cudaUnregisterFatBinary(void**) {
  EMU_API_LOCK();}
char __cudaInitModule(void** handle) {
  EMU_API_LOCK();
  return bind_managed_vars(reinterpret_cast<FatbinRecord*>(handle)) ? 1 : 0;
}

void __cudaRegisterFunction(void** handle, const char* hostFun, char*, const char* deviceName, int,
                            uint3*, uint3*, dim3*, dim3*, int*) {
  EMU_API_LOCK();
  auto rec = std::make_unique<KernelRecord>();
  rec->fatbin = reinterpret_cast<FatbinRecord*>(handle);
  rec->name = deviceName;
  st().kernels[hostFun] = std::move(rec);
}

void __cudaRegisterVar(void** handle, char* hostVar, char*, const char* deviceName, int, size_t size,
                       int constant, int) {
  EMU_API_LOCK();
  st().vars[hostVar] = VarRecord{reinterpret_cast<FatbinRecord*>(handle), deviceName, size, constant != 0};
}

void __cudaRegisterManagedVar(void** handle, void** host_slot, char*, const char* deviceName, int, size_t, int, int) {
  EMU_API_LOCK();
  kinds().managed_vars.push_back({reinterpret_cast<FatbinRecord*>(handle), host_slot, deviceName});
}

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st* stream) {
  EMU_API_LOCK();
  st().configs.push_back({gridDim, blockDim, sharedMem, stream});
  return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem, void* stream) {
  EMU_API_LOCK();
  if (st().configs.empty()) return cudaErrorMissingConfiguration;
  auto c = st().configs.back();
  st().configs.pop_back();
  *gridDim = c.grid;
  *blockDim = c.block;
  *sharedMem = c.smem;
  *static_cast<cudaStream_t*>(stream) = c.stream;
  return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* func) {
  EMU_API_LOCK();
  *kernel = reinterpret_cast<cudaKernel_t>(const_cast<void*>(func));
  return st().kernels.count(func) ? cudaSuccess : cudaErrorInvalidDeviceFunction;
}

// A launch refused for the kernel itself (its PTX cannot be loaded, or holds an instruction the
// emulator cannot decode) would have run on a GPU, so the program's results are missing: the
// failure is sticky, like a fault, and the next synchronizing call (every later call) returns
// it. A bad configuration is not: the runtime returns it once, and so does the hardware.
static cudaError_t launch_refused(cudaError_t e) {
  if (e == cudaErrorInvalidPtx || e == cudaErrorInvalidKernelImage) st().sticky = e;
  return set_error(e);
}

static cudaError_t launch_common(const void* func, dim3 grid, dim3 block, void** args, size_t smem,
                                 cudaStream_t stream, bool cooperative, const dim3* cluster = nullptr) {
  EMU_STICKY();
  Node n;
  n.kind = Node::kernel;
  cudaError_t e = prepare(func, grid, block, args, smem, n.launch, cluster);
  if (e != cudaSuccess) return launch_refused(e);
  n.launch.cooperative = cooperative;
  if (cooperative) {  // refused at the launch, before the grid is queued
    const int per_sm = blocks_per_sm(*n.launch.rec->kernel, int(block.x * block.y * block.z), smem);
    if (uint64_t(grid.x) * grid.y * grid.z > uint64_t(std::max(per_sm, 1)) * device_config().sms)
      return set_error(cudaErrorCooperativeLaunchTooLarge);
  }
  return set_error(issue(stream, std::move(n)));
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t smem,
                               cudaStream_t stream) {
  EMU_API_LOCK();
  return launch_common(reinterpret_cast<const void*>(kernel), grid, block, args, smem, stream, false);
}
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void** args,
                                    size_t smem, cudaStream_t stream) {
  EMU_API_LOCK();
  PerThreadDefault per_thread;
  return __cudaLaunchKernel(kernel, grid, block, args, smem, stream);
}
cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t smem,
                             cudaStream_t stream) {
  EMU_API_LOCK();
  return launch_common(func, grid, block, args, smem, stream, false);
}
cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 grid, dim3 block, void** args,
                                        size_t smem, cudaStream_t stream) {
  EMU_API_LOCK();
  return launch_common(func, grid, block, args, smem, stream, true);
}

// --- errors ----------------------------------------------------------------------------------
cudaError_t cudaGetLastError(void) {
  EMU_API_LOCK();
  cudaError_t e = st().sticky != cudaSuccess ? st().sticky : st().last;
  st().last = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError(void) { return st().sticky != cudaSuccess ? st().sticky : st().last; }

const char* cudaGetErrorName(cudaError_t e) {
  EMU_API_LOCK();
  switch (e) {
#define EMU_E(x) case x: return #x;
    EMU_E(cudaSuccess) EMU_E(cudaErrorInvalidValue) EMU_E(cudaErrorMemoryAllocation)
    EMU_E(cudaErrorInitializationError) EMU_E(cudaErrorInvalidConfiguration)
    EMU_E(cudaErrorInvalidDevice) EMU_E(cudaErrorInvalidDeviceFunction) EMU_E(cudaErrorNoDevice)
    EMU_E(cudaErrorInvalidKernelImage) EMU_E(cudaErrorInvalidPtx) EMU_E(cudaErrorNotSupported)
    EMU_E(cudaErrorIllegalAddress) EMU_E(cudaErrorMisalignedAddress) EMU_E(cudaErrorIllegalInstruction)
    EMU_E(cudaErrorLaunchFailure) EMU_E(cudaErrorAssert) EMU_E(cudaErrorCooperativeLaunchTooLarge)
    EMU_E(cudaErrorInvalidResourceHandle) EMU_E(cudaErrorNotReady) EMU_E(cudaErrorMissingConfiguration)
    EMU_E(cudaErrorStreamCaptureUnsupported) EMU_E(cudaErrorStreamCaptureInvalidated)
    EMU_E(cudaErrorInvalidSymbol) EMU_E(cudaErrorLaunchOutOfResources) EMU_E(cudaErrorInvalidMemcpyDirection)
    EMU_E(cudaErrorGraphExecUpdateFailure) EMU_E(cudaErrorIllegalState)
    EMU_E(cudaErrorInvalidClusterSize) EMU_E(cudaErrorNotPermitted)
#undef EMU_E
    default: return "cudaErrorUnknown";
  }
}
const char* cudaGetErrorString(cudaError_t e) {
  EMU_API_LOCK();
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorNotSupported: return "operation not supported (by the gpu100 emulator)";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorMisalignedAddress: return "misaligned address";
    case cudaErrorIllegalInstruction: return "an illegal instruction was encountered";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorAssert: return "device-side assert triggered";
    case cudaErrorCooperativeLaunchTooLarge: return "too many blocks in cooperative launch";
    case cudaErrorInvalidKernelImage: return "device kernel image is invalid";
    case cudaErrorInvalidPtx: return "a PTX JIT compilation failed";
    case cudaErrorInvalidClusterSize: return "a kernel launch error has occurred due to cluster misconfiguration";
    case cudaErrorNotPermitted: return "operation not permitted";
    default: return cudaGetErrorName(e);
  }
}

// --- device ----------------------------------------------------------------------------------
cudaError_t cudaGetDeviceCount(int* count) {
  EMU_API_LOCK();
  if (!count) return cudaErrorInvalidValue;
  *count = device_visible() ? 1 : 0;
  return *count ? cudaSuccess : set_error(cudaErrorNoDevice);
}
cudaError_t cudaGetDevice(int* device) {
  EMU_API_LOCK();
  if (!device) return cudaErrorInvalidValue;
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  EMU_API_LOCK();
  if (!device_visible()) return set_error(cudaErrorNoDevice);
  return device == 0 ? cudaSuccess : set_error(cudaErrorInvalidDevice);
}
cudaError_t cudaDeviceSynchronize(void) {
  EMU_API_LOCK(); EMU_STICKY(); return set_error(streams::sync_all()); }
cudaError_t cudaDeviceReset(void) {
  EMU_API_LOCK();
  streams::sync_all();
  st().sticky = cudaSuccess;
  st().last = cudaSuccess;
  return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int* v) {
  EMU_API_LOCK(); if (!v) return cudaErrorInvalidValue; *v = CUDART_VERSION; return cudaSuccess; }
cudaError_t cudaRuntimeGetVersion(int* v) {
  EMU_API_LOCK(); if (!v) return cudaErrorInvalidValue; *v = CUDART_VERSION; return cudaSuccess; }

static const int kClockKHz = 1755000;      // an SM clock for the properties; emulated time is CPU time
static const int kMemClockKHz = 2619000;
static const int kBusBits = 5120;

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  EMU_API_LOCK();
  if (!value) return set_error(cudaErrorInvalidValue);
  if (device != 0 || !device_visible()) return set_error(cudaErrorInvalidDevice);
  const DeviceConfig& c = device_config();
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = 1024; break;
    case cudaDevAttrMaxBlockDimX: case cudaDevAttrMaxBlockDimY: *value = 1024; break;
    case cudaDevAttrMaxBlockDimZ: *value = 64; break;
    case cudaDevAttrMaxGridDimX: *value = 0x7FFFFFFF; break;
    case cudaDevAttrMaxGridDimY: case cudaDevAttrMaxGridDimZ: *value = 65535; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = c.smem_per_block; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = c.smem_per_block_optin; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = c.smem_per_sm; break;
    case cudaDevAttrTotalConstantMemory: *value = 65536; break;
    case cudaDevAttrWarpSize: *value = 32; break;
    case cudaDevAttrMaxPitch: *value = 0x7FFFFFFF; break;
    case cudaDevAttrMaxRegistersPerBlock: *value = 65536; break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: *value = c.regs_per_sm; break;
    case cudaDevAttrClockRate: *value = kClockKHz; break;
    case cudaDevAttrMemoryClockRate: *value = kMemClockKHz; break;
    case cudaDevAttrGlobalMemoryBusWidth: *value = kBusBits; break;
    case cudaDevAttrL2CacheSize: *value = int(c.l2_bytes); break;
    case cudaDevAttrMultiProcessorCount: *value = c.sms; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = c.max_threads_per_sm; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *value = c.max_blocks_per_sm; break;
    case cudaDevAttrComputeCapabilityMajor: *value = c.cc_major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = c.cc_minor; break;
    case cudaDevAttrCooperativeLaunch: *value = 1; break;
    case cudaDevAttrConcurrentKernels: *value = 1; break;
    case cudaDevAttrEccEnabled: *value = 0; break;
    case cudaDevAttrIntegrated: *value = 0; break;
    case cudaDevAttrCanMapHostMemory: *value = 1; break;
    case cudaDevAttrUnifiedAddressing: *value = 1; break;
    // Managed memory is one memory for host and device, and launches run to completion before
    // the host goes on, so the host may touch it at any time: concurrent access holds.
    case cudaDevAttrManagedMemory: *value = 1; break;
    case cudaDevAttrConcurrentManagedAccess: *value = 1; break;
    case cudaDevAttrDirectManagedMemAccessFromHost: *value = 1; break;
    case cudaDevAttrHostRegisterSupported: *value = 1; break;
    case cudaDevAttrHostRegisterReadOnlySupported: *value = 1; break;
    case cudaDevAttrCanUseHostPointerForRegisteredMem: *value = 1; break;
    case cudaDevAttrPageableMemoryAccessUsesHostPageTables: *value = 0; break;
    case cudaDevAttrMemoryPoolSupportedHandleTypes: *value = 0; break;
    case cudaDevAttrPageableMemoryAccess: *value = 0; break;
    case cudaDevAttrAsyncEngineCount: *value = 1; break;
    case cudaDevAttrMaxPersistingL2CacheSize: *value = 0; break;
    case cudaDevAttrMaxAccessPolicyWindowSize: *value = 0; break;
    case cudaDevAttrGlobalL1CacheSupported: case cudaDevAttrLocalL1CacheSupported: *value = 1; break;
    case cudaDevAttrReservedSharedMemoryPerBlock: *value = 1024; break;
    case cudaDevAttrComputePreemptionSupported: *value = 0; break;
    case cudaDevAttrStreamPrioritiesSupported: *value = 0; break;
    case cudaDevAttrSingleToDoublePrecisionPerfRatio: *value = 2; break;
    case cudaDevAttrPciBusId: case cudaDevAttrPciDeviceId: case cudaDevAttrPciDomainId: *value = 0; break;
    case cudaDevAttrTccDriver: *value = 0; break;
    case cudaDevAttrKernelExecTimeout: *value = 0; break;
    case cudaDevAttrComputeMode: *value = 0; break;
    case cudaDevAttrMemoryPoolsSupported: *value = 1; break;
    case cudaDevAttrClusterLaunch: *value = device_config().cc_major >= 9; break;
    case cudaDevAttrHostNativeAtomicSupported: *value = 0; break;
    default:
      say("cudaDeviceGetAttribute: attribute " + std::to_string(int(attr)) + " is not known to the emulator");
      return set_error(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int device) {
  EMU_API_LOCK();
  if (!p) return set_error(cudaErrorInvalidValue);
  if (device != 0 || !device_visible()) return set_error(cudaErrorInvalidDevice);
  const DeviceConfig& c = device_config();
  std::memset(p, 0, sizeof *p);
  std::snprintf(p->name, sizeof p->name, "gpu100 emulator (sm_%d%d)", c.cc_major, c.cc_minor);
  p->totalGlobalMem = c.total_mem;
  p->sharedMemPerBlock = size_t(c.smem_per_block);
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->memPitch = 0x7FFFFFFF;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024; p->maxThreadsDim[1] = 1024; p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 0x7FFFFFFF; p->maxGridSize[1] = 65535; p->maxGridSize[2] = 65535;
  p->totalConstMem = 65536;
  p->major = c.cc_major;
  p->minor = c.cc_minor;
  p->textureAlignment = 512;
  p->texturePitchAlignment = 32;
  p->multiProcessorCount = c.sms;
  p->integrated = 0;
  p->canMapHostMemory = 1;
  p->concurrentKernels = 1;
  p->asyncEngineCount = 1;
  p->unifiedAddressing = 1;
  p->memoryBusWidth = kBusBits;
  p->l2CacheSize = int(c.l2_bytes);
  p->persistingL2CacheMaxSize = 0;
  p->maxThreadsPerMultiProcessor = c.max_threads_per_sm;
  p->sharedMemPerMultiprocessor = size_t(c.smem_per_sm);
  p->regsPerMultiprocessor = c.regs_per_sm;
  p->sharedMemPerBlockOptin = size_t(c.smem_per_block_optin);
  p->maxBlocksPerMultiProcessor = c.max_blocks_per_sm;
  p->cooperativeLaunch = 1;
  p->managedMemory = 1;
  p->concurrentManagedAccess = 1;
  p->directManagedMemAccessFromHost = 1;
  p->hostRegisterSupported = 1;
  p->hostRegisterReadOnlySupported = 1;
  p->canUseHostPointerForRegisteredMem = 1;
  p->memoryPoolsSupported = 1;
  p->globalL1CacheSupported = 1;
  p->localL1CacheSupported = 1;
  p->reservedSharedMemPerBlock = 1024;
  p->accessPolicyMaxWindowSize = 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value) {
  EMU_API_LOCK();
  if (int(limit) < 0 || int(limit) >= 16) return set_error(cudaErrorInvalidValue);
  if (limit == cudaLimitPersistingL2CacheSize && value > 0) return set_error(cudaErrorInvalidValue);
  st().limits[limit] = value;
  if (limit == cudaLimitDevRuntimePendingLaunchCount) device_config().pending_launch_limit = value;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit) {
  EMU_API_LOCK();
  if (!value || int(limit) < 0 || int(limit) >= 16) return set_error(cudaErrorInvalidValue);
  *value = limit == cudaLimitPersistingL2CacheSize ? 0 : st().limits[limit];
  return cudaSuccess;
}
// No persisting lines exist on the emulated device, so there is nothing to reset.
cudaError_t cudaCtxResetPersistingL2Cache(void) {
  EMU_API_LOCK(); EMU_STICKY(); return cudaSuccess; }

// --- memory ----------------------------------------------------------------------------------
static cudaError_t device_alloc(void** p, size_t bytes, const char* what) {
  if (!p) return set_error(cudaErrorInvalidValue);
  *p = nullptr;
  if (bytes == 0) return cudaSuccess;
  if (memory().live_bytes() + bytes > device_config().total_mem) return set_error(cudaErrorMemoryAllocation);
  void* q = device_heap_alloc(bytes);
  if (!q) return set_error(cudaErrorMemoryAllocation);
  // New device memory reads as all ones (NaN as float): a kernel that reads what nobody wrote
  // sees a value that cannot pass a check by accident.
  std::memset(q, 0xFF, bytes);
  memory().add(reinterpret_cast<uint64_t>(q), bytes, what);
  san::on_device_alloc(reinterpret_cast<uint64_t>(q), bytes);
  metrics::device_alloc(bytes);
  *p = q;
  return cudaSuccess;
}
cudaError_t cudaMalloc(void** p, size_t bytes) {
  EMU_API_LOCK(); EMU_STICKY(); return device_alloc(p, bytes, "a cudaMalloc allocation"); }
static cudaError_t free_device(void* p);
cudaError_t cudaFree(void* p) {
  EMU_API_LOCK();
  EMU_SYNC_ALL();  // cudaFree synchronizes the device
  return free_device(p);
}
static cudaError_t free_device(void* p) {
  if (!p) return cudaSuccess;
  const Allocation* a = memory().find(reinterpret_cast<uint64_t>(p), 1);
  const uint64_t bytes = a && a->base == reinterpret_cast<uint64_t>(p) ? a->bytes : 0;
  if (host_mapping_of(p) || !memory().remove(reinterpret_cast<uint64_t>(p))) {
    say("cudaFree: pointer was not returned by cudaMalloc");
    return set_error(cudaErrorInvalidValue);
  }
  forget_allocation(reinterpret_cast<uint64_t>(p));
  metrics::device_free(bytes);
  device_heap_free(p, bytes);
  return cudaSuccess;
}
cudaError_t cudaMallocPitch(void** p, size_t* pitch, size_t width, size_t height) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!pitch) return set_error(cudaErrorInvalidValue);
  *pitch = (width + 511) / 512 * 512;
  return device_alloc(p, *pitch * height, "a cudaMallocPitch allocation");
}
cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned int) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!p) return set_error(cudaErrorInvalidValue);
  void* q = std::aligned_alloc(4096, (std::max<size_t>(bytes, 1) + 4095) / 4096 * 4096);
  if (!q) return set_error(cudaErrorMemoryAllocation);
  memory().add(reinterpret_cast<uint64_t>(q), bytes, "pinned host memory (cudaHostAlloc)");
  st().host_allocs[reinterpret_cast<uint64_t>(q)] = bytes;
  *p = q;
  return cudaSuccess;
}
cudaError_t cudaMallocHost(void** p, size_t bytes) { return cudaHostAlloc(p, bytes, 0); }
cudaError_t cudaFreeHost(void* p) {
  EMU_API_LOCK();
  if (!p) return cudaSuccess;
  streams::sync_all();
  if (!st().host_allocs.erase(reinterpret_cast<uint64_t>(p))) return set_error(cudaErrorInvalidValue);
  memory().remove(reinterpret_cast<uint64_t>(p));
  std::free(p);
  return cudaSuccess;
}
// Mapped host memory has one address on both sides (cudaDevAttrCanUseHostPointerForRegisteredMem),
// and any address inside a mapping maps.
cudaError_t cudaHostGetDevicePointer(void** d, void* h, unsigned int flags) {
  EMU_API_LOCK();
  if (!d || flags != 0 || !host_mapping_of(h)) return set_error(cudaErrorInvalidValue);
  *d = h;
  return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total) {
  EMU_API_LOCK();
  EMU_STICKY();
  const uint64_t t = device_config().total_mem;
  if (free_bytes) *free_bytes = t - std::min<uint64_t>(t, memory().live_bytes());
  if (total) *total = t;
  return cudaSuccess;
}

// A copy, queued on stream s, as the runtime's "API synchronization behavior" describes it
// (`sync`: cudaMemcpy, else cudaMemcpyAsync). A pageable source copied to the device is staged
// when the call is made; the host waits for a synchronous copy to the host, from pinned memory
// or between host buffers, and for any copy between host buffers; a synchronous copy from
// pageable memory first waits for the stream's earlier work; a copy between device buffers never
// makes the host wait.
static cudaError_t copy_on_stream(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                                  cudaStream_t s, bool sync) {
  if (cudaError_t e = check_copy(dst, src, bytes, kind); e != cudaSuccess) return set_error(e);
  if (bytes == 0) return cudaSuccess;
  auto device = [](const void* p, size_t b) { return in_table(p, b) && !host_mapping_of(p); };
  bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if (kind == cudaMemcpyDefault) {
    dst_dev = device(dst, bytes);
    src_dev = device(src, bytes);
  }
  const bool src_pageable = !src_dev && !in_table(src, bytes);
  Node n;
  n.kind = Node::memcpy_;
  n.dst = dst;
  n.src = src;
  n.bytes = bytes;
  bool host_sync = !dst_dev && !src_dev;  // host to host
  if (dst_dev && !src_dev && src_pageable) {
    if (sync && !(stream_of(s) && stream_of(s)->capture))
      if (cudaError_t e = streams::sync_stream(queue_of(s)); e != cudaSuccess) return set_error(e);
    if (!(stream_of(s) && stream_of(s)->capture)) {
      n.staged = std::make_shared<std::vector<uint8_t>>(static_cast<const uint8_t*>(src),
                                                        static_cast<const uint8_t*>(src) + bytes);
      n.src = n.staged->data();
    }
  } else if (sync && !(dst_dev && src_dev)) {
    host_sync = true;
  }
  return set_error(issue(s, std::move(n), host_sync));
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
  EMU_API_LOCK();
  EMU_STICKY();
  return copy_on_stream(dst, src, bytes, kind, s, false);
}
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  EMU_API_LOCK();
  EMU_STICKY();
  return copy_on_stream(dst, src, bytes, kind, nullptr, true);
}
cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t s) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (bytes && !in_table(p, bytes)) {
    say("cudaMemset: the range is not inside one allocation (" + memory().describe(reinterpret_cast<uint64_t>(p)) + ")");
    return set_error(cudaErrorInvalidValue);
  }
  if (bytes == 0) return cudaSuccess;
  Node n;
  n.kind = Node::memset_;
  n.dst = p;
  n.value = value;
  n.bytes = bytes;
  // cudaMemset is asynchronous to the host, except on pinned host memory.
  return set_error(issue(s, std::move(n), t_memset_sync && host_mapping_of(p)));
}
cudaError_t cudaMemset(void* p, int value, size_t bytes) {
  EMU_API_LOCK();
  t_memset_sync = true;
  cudaError_t e = cudaMemsetAsync(p, value, bytes, nullptr);
  t_memset_sync = false;
  return e;
}

cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                         size_t height, cudaMemcpyKind kind) {
  EMU_API_LOCK();
  EMU_SYNC_ALL();
  if (width > dpitch || width > spitch) return set_error(cudaErrorInvalidPitchValue);
  if (height == 0 || width == 0) return cudaSuccess;
  const size_t dspan = dpitch * (height - 1) + width, sspan = spitch * (height - 1) + width;
  const bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  const bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if ((dst_dev && !in_table(dst, dspan)) || (src_dev && !in_table(src, sspan))) {
    say("cudaMemcpy2D: a device range is not inside one allocation");
    return set_error(cudaErrorInvalidValue);
  }
  for (size_t r = 0; r < height; ++r) {
    std::memmove(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
    san::on_copy(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
  }
  return cudaSuccess;
}
cudaError_t cudaMemset2D(void* p, size_t pitch, int value, size_t width, size_t height) {
  EMU_API_LOCK();
  EMU_SYNC_ALL();
  if (width > pitch) return set_error(cudaErrorInvalidValue);
  if (height == 0 || width == 0) return cudaSuccess;
  if (!in_table(p, pitch * (height - 1) + width)) return set_error(cudaErrorInvalidValue);
  for (size_t r = 0; r < height; ++r) {
    std::memset(static_cast<char*>(p) + r * pitch, value, width);
    san::on_host_write(static_cast<char*>(p) + r * pitch, width);
  }
  return cudaSuccess;
}

cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset, cudaMemcpyKind) {
  EMU_API_LOCK();
  EMU_SYNC_ALL();
  size_t size = 0;
  void* a = symbol_address(symbol, &size);
  if (!a) return set_error(cudaErrorInvalidSymbol);
  if (offset + count > size) return set_error(cudaErrorInvalidValue);
  std::memcpy(static_cast<char*>(a) + offset, src, count);
  return cudaSuccess;
}
cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind) {
  EMU_API_LOCK();
  EMU_SYNC_ALL();
  size_t size = 0;
  void* a = symbol_address(symbol, &size);
  if (!a) return set_error(cudaErrorInvalidSymbol);
  if (offset + count > size) return set_error(cudaErrorInvalidValue);
  std::memcpy(dst, static_cast<char*>(a) + offset, count);
  return cudaSuccess;
}
cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count, size_t offset,
                                    cudaMemcpyKind kind, cudaStream_t) {
  EMU_API_LOCK();
  return cudaMemcpyToSymbol(symbol, src, count, offset, kind);
}
cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t count, size_t offset,
                                      cudaMemcpyKind kind, cudaStream_t) {
  EMU_API_LOCK();
  return cudaMemcpyFromSymbol(dst, symbol, count, offset, kind);
}
cudaError_t cudaGetSymbolAddress(void** p, const void* symbol) {
  EMU_API_LOCK();
  void* a = symbol_address(symbol, nullptr);
  if (!a || !p) return set_error(cudaErrorInvalidSymbol);
  *p = a;
  return cudaSuccess;
}
cudaError_t cudaGetSymbolSize(size_t* size, const void* symbol) {
  EMU_API_LOCK();
  if (!size || !symbol_address(symbol, size)) return set_error(cudaErrorInvalidSymbol);
  return cudaSuccess;
}
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* a, const void* p) {
  EMU_API_LOCK();
  if (!a) return set_error(cudaErrorInvalidValue);
  std::memset(a, 0, sizeof *a);
  const Allocation* al = memory().find(reinterpret_cast<uint64_t>(p), 1);
  const bool host = host_mapping_of(p) != nullptr;
  const bool managed = al && kinds().managed.count(al->base);
  a->type = !al ? cudaMemoryTypeUnregistered : host ? cudaMemoryTypeHost : managed ? cudaMemoryTypeManaged : cudaMemoryTypeDevice;
  a->device = 0;
  a->devicePointer = al ? const_cast<void*>(p) : nullptr;
  a->hostPointer = (!al || host || managed) ? const_cast<void*>(p) : nullptr;
  return cudaSuccess;
}

// --- kernels: attributes and occupancy -------------------------------------------------------
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!attr) return set_error(cudaErrorInvalidValue);
  cudaError_t err = cudaSuccess;
  KernelRecord* rec = kernel_of(func, &err);
  if (!rec) return set_error(err);
  const Kernel& k = *rec->kernel;
  const DeviceConfig& c = device_config();
  std::memset(attr, 0, sizeof *attr);
  attr->sharedSizeBytes = k.static_smem;
  attr->constSizeBytes = 0;
  // From the SASS when the program has it for the emulated device (see attach_sass).
  attr->localSizeBytes = k.regs >= 0 ? k.sass_frame_bytes : k.local_bytes;
  attr->maxThreadsPerBlock = max_threads_per_block(k);
  attr->numRegs = k.regs >= 0 ? k.regs : 32;
  attr->ptxVersion = c.cc_major * 10 + c.cc_minor;
  if (k.module) attr->ptxVersion = k.module->parsed.target_sm;  // the PTX the kernel came from
  attr->binaryVersion = attr->ptxVersion;
  attr->maxDynamicSharedSizeBytes = rec->max_dynamic_smem >= 0
                                        ? rec->max_dynamic_smem
                                        : int(c.smem_per_block - std::min<int>(c.smem_per_block, int(k.static_smem)));
  attr->preferredShmemCarveout = -1;
  attr->clusterDimMustBeSet = k.explicit_cluster || rec->cluster_must_be_set;
  for (int i = 0; i < 3; ++i) {
    const int v = k.cluster_dims[0] ? int(k.cluster_dims[i]) : rec->required_cluster[i];
    (i == 0 ? attr->requiredClusterWidth : i == 1 ? attr->requiredClusterHeight : attr->requiredClusterDepth) = v;
  }
  attr->nonPortableClusterSizeAllowed = rec->non_portable_cluster;
  return cudaSuccess;
}
cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  EMU_API_LOCK();
  EMU_STICKY();
  cudaError_t err = cudaSuccess;
  KernelRecord* rec = kernel_of(func, &err);
  if (!rec) return set_error(err);
  if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    if (value < 0 || size_t(value) + rec->kernel->static_smem > size_t(device_config().smem_per_block_optin))
      return set_error(cudaErrorInvalidValue);
    rec->max_dynamic_smem = value;
    return cudaSuccess;
  }
  if (attr == cudaFuncAttributePreferredSharedMemoryCarveout) return cudaSuccess;  // a hint
  if (attr == cudaFuncAttributeNonPortableClusterSizeAllowed) {
    if (value != 0 && value != 1) return set_error(cudaErrorInvalidValue);
    rec->non_portable_cluster = value == 1;
    return cudaSuccess;
  }
  if (attr == cudaFuncAttributeRequiredClusterWidth || attr == cudaFuncAttributeRequiredClusterHeight ||
      attr == cudaFuncAttributeRequiredClusterDepth) {
    if (rec->kernel->cluster_dims[0]) return set_error(cudaErrorNotPermitted);  // set at compile time
    if (value < 0) return set_error(cudaErrorInvalidValue);
    rec->required_cluster[int(attr) - int(cudaFuncAttributeRequiredClusterWidth)] = value;
    return cudaSuccess;
  }
  if (attr == cudaFuncAttributeClusterDimMustBeSet) {
    rec->cluster_must_be_set = value != 0;
    return cudaSuccess;
  }
  if (attr == cudaFuncAttributeClusterSchedulingPolicyPreference) return cudaSuccess;  // a hint
  return unsupported("cudaFuncSetAttribute", "attribute " + std::to_string(int(attr)));
}
cudaError_t cudaFuncSetCacheConfig(const void*, cudaFuncCache) { return cudaSuccess; }  // a hint

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* n, const void* func, int block,
                                                                   size_t dyn, unsigned int) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!n || block <= 0) return set_error(cudaErrorInvalidValue);
  cudaError_t err = cudaSuccess;
  KernelRecord* rec = kernel_of(func, &err);
  if (!rec) return set_error(err);
  *n = blocks_per_sm(*rec->kernel, block, dyn);
  return cudaSuccess;
}
// Clusters: the emulated device has no GPCs; a cluster's blocks may lie on any of its SMs, so as
// many clusters fit as whole clusters fit into the resident blocks (SMs x blocks per SM).
static cudaError_t cluster_of_config(const void* func, const cudaLaunchConfig_t* config, KernelRecord** rec,
                                     dim3* cluster) {
  if (!config) return cudaErrorInvalidValue;
  cudaError_t err = cudaSuccess;
  *rec = kernel_of(func, &err);
  if (!*rec) return err;
  const dim3* given = nullptr;
  dim3 attr_dims;
  for (unsigned i = 0; i < config->numAttrs; ++i)
    if (config->attrs && config->attrs[i].id == cudaLaunchAttributeClusterDimension) {
      const auto& d = config->attrs[i].val.clusterDim;
      attr_dims = dim3(d.x, d.y, d.z);
      given = &attr_dims;
    }
  const Kernel& k = *(*rec)->kernel;
  if (!given && !k.cluster_dims[0] && !(*rec)->required_cluster[0]) return cudaErrorInvalidClusterSize;
  bool named = false;
  return cluster_dims(**rec, config->gridDim, given, cluster, &named, false);
}
cudaError_t cudaOccupancyMaxActiveClusters(int* n, const void* func, const cudaLaunchConfig_t* config) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!n) return set_error(cudaErrorInvalidValue);
  KernelRecord* rec = nullptr;
  dim3 c;
  if (cudaError_t e = cluster_of_config(func, config, &rec, &c); e != cudaSuccess) return set_error(e);
  const int threads = int(config->blockDim.x * config->blockDim.y * config->blockDim.z);
  const uint64_t blocks = uint64_t(blocks_per_sm(*rec->kernel, threads, config->dynamicSmemBytes)) * device_config().sms;
  *n = int(blocks / (uint64_t(c.x) * c.y * c.z));
  return cudaSuccess;
}
cudaError_t cudaOccupancyMaxPotentialClusterSize(int* size, const void* func, const cudaLaunchConfig_t* config) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!size || !config) return set_error(cudaErrorInvalidValue);
  cudaError_t err = cudaSuccess;
  KernelRecord* rec = kernel_of(func, &err);
  if (!rec) return set_error(err);
  const int threads = int(config->blockDim.x * config->blockDim.y * config->blockDim.z);
  const int blocks = blocks_per_sm(*rec->kernel, threads, config->dynamicSmemBytes) * device_config().sms;
  *size = std::min(rec->non_portable_cluster ? 16 : 8, blocks);
  return cudaSuccess;
}
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, const void* func, int block, size_t dyn) {
  EMU_API_LOCK();
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n, func, block, dyn, 0);
}

// --- streams and events ----------------------------------------------------------------------
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int flags) {
  EMU_API_LOCK();
  if (!s) return set_error(cudaErrorInvalidValue);
  auto* impl = new StreamImpl;
  impl->flags = flags;
  impl->queue = streams::create(flags);
  *s = reinterpret_cast<cudaStream_t>(impl);
  return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t* s) { return cudaStreamCreateWithFlags(s, 0); }
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned int flags, int) { return cudaStreamCreateWithFlags(s, flags); }
// A destroyed stream's queued work still runs (the runtime releases the stream when it is done).
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  EMU_API_LOCK();
  if (StreamImpl* si = stream_of(s)) streams::destroy(si->queue);
  delete stream_of(s);
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  EMU_API_LOCK(); EMU_STICKY(); return set_error(streams::sync_stream(queue_of(s))); }
// A query runs the stream's work and reports it complete (a program that polls makes progress).
cudaError_t cudaStreamQuery(cudaStream_t s) {
  EMU_API_LOCK(); EMU_STICKY(); return set_error(streams::query_stream(queue_of(s))); }
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!e) return set_error(cudaErrorInvalidResourceHandle);
  if (StreamImpl* si = stream_of(s); si && si->capture) return cudaSuccess;  // ordering inside the capture
  return set_error(streams::wait(queue_of(s), e));
}
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s) { PerThreadDefault p; return cudaStreamSynchronize(s); }
cudaError_t cudaStreamQuery_ptsz(cudaStream_t s) { PerThreadDefault p; return cudaStreamQuery(s); }
cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t s, cudaEvent_t e, unsigned int f) {
  PerThreadDefault p;
  return cudaStreamWaitEvent(s, e, f);
}
// Access-policy windows are cache hints; the emulated device has no persisting L2 set-aside.
cudaError_t cudaStreamSetAttribute(cudaStream_t, cudaStreamAttrID, const cudaStreamAttrValue*) { return cudaSuccess; }
cudaError_t cudaStreamGetAttribute(cudaStream_t, cudaStreamAttrID, cudaStreamAttrValue* v) {
  EMU_API_LOCK();
  if (v) std::memset(v, 0, sizeof *v);
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int flags) {
  EMU_API_LOCK();
  if (!e) return set_error(cudaErrorInvalidValue);
  auto* impl = new EventImpl;
  impl->flags = flags;
  *e = reinterpret_cast<cudaEvent_t>(impl);
  return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t* e) { return cudaEventCreateWithFlags(e, 0); }
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  EMU_API_LOCK();
  streams::forget_event(e);
  delete reinterpret_cast<EventImpl*>(e);
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!e) return set_error(cudaErrorInvalidResourceHandle);
  if (StreamImpl* si = stream_of(s); si && si->capture) return cudaSuccess;  // ordering only
  return set_error(streams::record(e, queue_of(s)));
}
cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned int) { return cudaEventRecord(e, s); }
cudaError_t cudaEventRecord_ptsz(cudaEvent_t e, cudaStream_t s) { PerThreadDefault p; return cudaEventRecord(e, s); }
cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t e, cudaStream_t s, unsigned int f) {
  PerThreadDefault p;
  return cudaEventRecordWithFlags(e, s, f);
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!e) return set_error(cudaErrorInvalidResourceHandle);
  return set_error(streams::sync_event(e));
}
// A query runs the work before the event's record and reports it complete.
cudaError_t cudaEventQuery(cudaEvent_t e) {
  EMU_API_LOCK();
  EMU_STICKY();
  return e ? set_error(streams::query_event(e)) : set_error(cudaErrorInvalidResourceHandle);
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!ms || !start || !end) return set_error(cudaErrorInvalidValue);
  auto* a = reinterpret_cast<EventImpl*>(start);
  auto* b = reinterpret_cast<EventImpl*>(end);
  if ((a->flags | b->flags) & cudaEventDisableTiming) return set_error(cudaErrorInvalidResourceHandle);
  double ta = 0, tb = 0;
  if (!streams::event_time(start, &ta) || !streams::event_time(end, &tb)) return set_error(cudaErrorInvalidResourceHandle);
  EMU_STICKY();
  *ms = float(tb - ta);
  return cudaSuccess;
}

// --- graphs ----------------------------------------------------------------------------------
cudaError_t cudaGraphCreate(cudaGraph_t* g, unsigned int) {
  EMU_API_LOCK();
  if (!g) return set_error(cudaErrorInvalidValue);
  *g = reinterpret_cast<cudaGraph_t>(new GraphImpl);
  return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t g) {
  EMU_API_LOCK();
  delete reinterpret_cast<GraphImpl*>(g);
  return cudaSuccess;
}
cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode) {
  EMU_API_LOCK();
  EMU_STICKY();
  StreamImpl* si = stream_of(s);
  if (!si) return set_error(cudaErrorStreamCaptureUnsupported);  // the legacy stream cannot capture
  if (si->capture) return set_error(cudaErrorIllegalState);
  si->capture = new GraphImpl;
  si->capture_tail = nullptr;
  return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* g) {
  EMU_API_LOCK();
  StreamImpl* si = stream_of(s);
  if (!si || !si->capture || !g) return set_error(cudaErrorIllegalState);
  *g = reinterpret_cast<cudaGraph_t>(si->capture);
  si->capture = nullptr;
  return cudaSuccess;
}
cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus* status) {
  EMU_API_LOCK();
  if (!status) return set_error(cudaErrorInvalidValue);
  StreamImpl* si = stream_of(s);
  *status = si && si->capture ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  return cudaSuccess;
}
cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps, size_t count,
                                   const cudaKernelNodeParams* p) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!node || !g || !p) return set_error(cudaErrorInvalidValue);
  auto n = std::make_unique<Node>();
  n->kind = Node::kernel;
  cudaError_t e = prepare(p->func, p->gridDim, p->blockDim, p->kernelParams, p->sharedMemBytes, n->launch);
  if (e != cudaSuccess) return set_error(e);
  return set_error(add_node(node, g, deps, count, std::move(n)));
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t g, unsigned long long) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!exec || !g) return set_error(cudaErrorInvalidValue);
  auto* x = new GraphExecImpl;
  for (const Node* n : execution_order(*reinterpret_cast<GraphImpl*>(g))) {
    x->index[n] = x->nodes.size();
    x->nodes.push_back(*n);
  }
  *exec = reinterpret_cast<cudaGraphExec_t>(x);
  return cudaSuccess;
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x) {
  EMU_API_LOCK();
  delete reinterpret_cast<GraphExecImpl*>(x);
  return cudaSuccess;
}
// A graph launch is one operation of its stream, made of the executable graph's nodes as they are
// now (a later update changes later launches). When it runs, its nodes run one at a time in an
// order that honours the edges (the earliest-added ready node first, or a random ready node under
// GPU100_EMU_SCHEDULE=random), and two nodes that no path of edges orders must not conflict. Its
// event record nodes record when the whole launch completes; its event wait nodes wait before it
// starts.
cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t s) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!x) return set_error(cudaErrorInvalidValue);
  if (StreamImpl* si = stream_of(s); si && si->capture)
    return unsupported("cudaGraphLaunch", "a graph launch inside stream capture (a child graph node)");
  auto* gx = reinterpret_cast<GraphExecImpl*>(x);
  auto nodes = std::make_shared<std::vector<Node>>(gx->nodes);
  const size_t count = nodes->size();
  auto preds = std::make_shared<std::vector<std::vector<size_t>>>(count);
  streams::Op op;
  op.what = "a graph launch";
  for (size_t i = 0; i < count; ++i) {
    const Node& n = (*nodes)[i];
    for (const Node* d : n.deps)
      if (auto it = gx->index.find(d); it != gx->index.end()) (*preds)[i].push_back(it->second);
    if (n.kind == Node::event_record) op.records.push_back(n.event);
    if (n.kind == Node::event_wait) op.waits.push_back(n.event);
  }
  op.run = [nodes, preds, count](streams::Op& o) {
    std::vector<size_t> waiting(count);
    std::vector<std::vector<size_t>> dependents(count);
    for (size_t i = 0; i < count; ++i) {
      waiting[i] = (*preds)[i].size();
      for (size_t p : (*preds)[i]) dependents[p].push_back(i);
    }
    std::vector<size_t> ready;
    for (size_t i = 0; i < count; ++i)
      if (!waiting[i]) ready.push_back(i);
    std::vector<streams::Footprint> fps(count);
    std::vector<std::string> what(count);
    std::vector<size_t> order;
    streams::Footprint* whole = streams::g_recording;
    cudaError_t result = cudaSuccess;
    while (!ready.empty() && result == cudaSuccess) {
      std::sort(ready.begin(), ready.end());
      const size_t k = streams::pick(ready.size());
      const size_t i = ready[k];
      ready.erase(ready.begin() + long(k));
      Node& n = (*nodes)[i];
      streams::Op node_op;
      node_op.what = node_what(n);
      name_kernel(n, node_op);
      what[i] = node_op.what;
      node_footprint(n, fps[i]);
      streams::g_recording = whole ? &fps[i] : nullptr;
      result = run_node(n);
      streams::g_recording = whole;
      if (whole) whole->merge(fps[i]);
      order.push_back(i);
      for (size_t j : dependents[i])
        if (--waiting[j] == 0) ready.push_back(j);
    }
    if (result == cudaSuccess && whole) {
      std::vector<std::vector<bool>> reach(count, std::vector<bool>(count, false));
      for (size_t i : order)  // in an order that honours the edges: predecessors are complete
        for (size_t p : (*preds)[i]) {
          reach[p][i] = true;
          for (size_t a = 0; a < count; ++a)
            if (reach[a][p]) reach[a][i] = true;
        }
      streams::check_graph(what, fps, reach, "graph launch");
    }
    (void)o;
    return result;
  };
  return set_error(streams::enqueue(queue_of(s), std::move(op)));
}
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t x, cudaStream_t s) { PerThreadDefault p; return cudaGraphLaunch(x, s); }
cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t x, cudaGraphNode_t node, const cudaKernelNodeParams* p) {
  EMU_API_LOCK();
  EMU_STICKY();
  auto* gx = reinterpret_cast<GraphExecImpl*>(x);
  if (!gx || !p) return set_error(cudaErrorInvalidValue);
  auto it = gx->index.find(reinterpret_cast<const Node*>(node));
  if (it == gx->index.end()) return set_error(cudaErrorInvalidValue);
  Node& n = gx->nodes[it->second];
  if (n.kind != Node::kernel) return set_error(cudaErrorInvalidValue);
  LaunchRequest req;
  cudaError_t e = prepare(p->func, p->gridDim, p->blockDim, p->kernelParams, p->sharedMemBytes, req);
  if (e != cudaSuccess) return set_error(e);
  if (req.rec != n.launch.rec) return set_error(cudaErrorInvalidValue);  // the function cannot change
  n.launch = std::move(req);
  return cudaSuccess;
}
// Whole-graph update: the topology must match (same node kinds and kernels, in order).
cudaError_t cudaGraphExecUpdate(cudaGraphExec_t x, cudaGraph_t g, cudaGraphExecUpdateResultInfo* info) {
  EMU_API_LOCK();
  EMU_STICKY();
  auto* gx = reinterpret_cast<GraphExecImpl*>(x);
  auto* gi = reinterpret_cast<GraphImpl*>(g);
  if (info) std::memset(info, 0, sizeof *info);
  if (!gx || !gi) return set_error(cudaErrorInvalidValue);
  auto fail = [&](cudaGraphExecUpdateResult r) {
    if (info) info->result = r;
    return set_error(cudaErrorGraphExecUpdateFailure);
  };
  const std::vector<const Node*> order = execution_order(*gi);
  if (order.size() != gx->nodes.size()) return fail(cudaGraphExecUpdateErrorTopologyChanged);
  for (size_t i = 0; i < order.size(); ++i) {
    const Node& a = *order[i];
    const Node& b = gx->nodes[i];
    if (a.kind != b.kind) return fail(cudaGraphExecUpdateErrorNodeTypeChanged);
    if (a.kind == Node::kernel && a.launch.rec != b.launch.rec) return fail(cudaGraphExecUpdateErrorFunctionChanged);
  }
  gx->index.clear();
  for (size_t i = 0; i < order.size(); ++i) {
    gx->nodes[i] = *order[i];
    gx->index[order[i]] = i;
  }
  if (info) info->result = cudaGraphExecUpdateSuccess;
  return cudaSuccess;
}

// --- graphs built node by node ---------------------------------------------------------------
cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps, size_t count,
                                   const cudaMemcpy3DParms* p) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!p) return set_error(cudaErrorInvalidValue);
  if (cudaError_t e = check_copy_3d(*p, "cudaGraphAddMemcpyNode"); e != cudaSuccess) return set_error(e);
  auto n = std::make_unique<Node>();
  n->kind = Node::memcpy3d;
  n->copy = *p;
  return set_error(add_node(node, g, deps, count, std::move(n)));
}
cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps,
                                     size_t count, void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (bytes == 0) return set_error(cudaErrorInvalidValue);
  if (cudaError_t e = check_copy(dst, src, bytes, kind); e != cudaSuccess) return set_error(e);
  auto n = std::make_unique<Node>();
  n->kind = Node::memcpy_;
  n->dst = dst;
  n->src = src;
  n->bytes = bytes;
  return set_error(add_node(node, g, deps, count, std::move(n)));
}
cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps, size_t count,
                                   const cudaMemsetParams* p) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!p || !p->dst || p->width == 0 || p->height == 0) return set_error(cudaErrorInvalidValue);
  if (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) return set_error(cudaErrorInvalidValue);
  const size_t row = p->width * p->elementSize;
  if (p->height > 1 && p->pitch < row) return set_error(cudaErrorInvalidValue);
  const size_t span = (p->height - 1) * p->pitch + row;
  if (!in_table(p->dst, span)) {
    say("cudaGraphAddMemsetNode: the range is not inside one allocation (" +
        memory().describe(reinterpret_cast<uint64_t>(p->dst)) + ")");
    return set_error(cudaErrorInvalidValue);
  }
  auto n = std::make_unique<Node>();
  n->kind = Node::memset_;
  n->dst = p->dst;
  n->value = int(p->value);
  n->element = p->elementSize;
  n->bytes = row;
  n->rows = p->height;
  n->pitch = p->pitch;
  return set_error(add_node(node, g, deps, count, std::move(n)));
}
cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps, size_t count,
                                 const cudaHostNodeParams* p) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!p || !p->fn) return set_error(cudaErrorInvalidValue);
  auto n = std::make_unique<Node>();
  n->kind = Node::host;
  n->fn = p->fn;
  n->user = p->userData;
  return set_error(add_node(node, g, deps, count, std::move(n)));
}
cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps, size_t count) {
  EMU_API_LOCK();
  EMU_STICKY();
  auto n = std::make_unique<Node>();
  n->kind = Node::empty;
  return set_error(add_node(node, g, deps, count, std::move(n)));
}
namespace {
cudaError_t add_event_node(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps,
                           size_t count, cudaEvent_t event, Node::Kind kind) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!event) return set_error(cudaErrorInvalidValue);
  auto n = std::make_unique<Node>();
  n->kind = kind;
  n->event = reinterpret_cast<EventImpl*>(event);
  return set_error(add_node(node, g, deps, count, std::move(n)));
}
}  // namespace
cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps,
                                        size_t count, cudaEvent_t event) {
  return add_event_node(node, g, deps, count, event, Node::event_record);
}
// Work before the graph launch has already run when the launch starts, so the wait is ordering only.
cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps,
                                      size_t count, cudaEvent_t event) {
  return add_event_node(node, g, deps, count, event, Node::event_wait);
}
cudaError_t cudaGraphAddDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                     const cudaGraphEdgeData* edges, size_t count) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!g || (count && (!from || !to))) return set_error(cudaErrorInvalidValue);
  GraphImpl& graph = *reinterpret_cast<GraphImpl*>(g);
  for (size_t i = 0; i < count; ++i) {
    // Only the default edge (full completion of `from`) is emulated.
    if (edges && (edges[i].from_port || edges[i].to_port || edges[i].type))
      return unsupported("cudaGraphAddDependencies", "an edge other than the default");
    const Node* a = reinterpret_cast<const Node*>(from[i]);
    Node* b = reinterpret_cast<Node*>(to[i]);
    if (!in_graph(graph, a) || !in_graph(graph, b) || a == b) return set_error(cudaErrorInvalidValue);
    if (std::find(b->deps.begin(), b->deps.end(), a) != b->deps.end()) return set_error(cudaErrorInvalidValue);
    if (depends_on(a, b)) return set_error(cudaErrorInvalidValue);  // the edge would close a cycle
    b->deps.push_back(a);
  }
  return cudaSuccess;
}
cudaError_t cudaGraphGetNodes(cudaGraph_t g, cudaGraphNode_t* nodes, size_t* count) {
  EMU_API_LOCK();
  if (!g || !count) return set_error(cudaErrorInvalidValue);
  const GraphImpl& graph = *reinterpret_cast<GraphImpl*>(g);
  if (nodes) {
    for (size_t i = 0; i < *count; ++i)
      nodes[i] = i < graph.nodes.size() ? reinterpret_cast<cudaGraphNode_t>(graph.nodes[i].get()) : nullptr;
    *count = std::min(*count, graph.nodes.size());
  } else {
    *count = graph.nodes.size();
  }
  return cudaSuccess;
}
cudaError_t cudaGraphGetRootNodes(cudaGraph_t g, cudaGraphNode_t* nodes, size_t* count) {
  EMU_API_LOCK();
  if (!g || !count) return set_error(cudaErrorInvalidValue);
  std::vector<cudaGraphNode_t> roots;
  for (const auto& n : reinterpret_cast<GraphImpl*>(g)->nodes)
    if (n->deps.empty()) roots.push_back(reinterpret_cast<cudaGraphNode_t>(n.get()));
  if (nodes) {
    for (size_t i = 0; i < *count; ++i) nodes[i] = i < roots.size() ? roots[i] : nullptr;
    *count = std::min(*count, roots.size());
  } else {
    *count = roots.size();
  }
  return cudaSuccess;
}
cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, cudaGraphNodeType* type) {
  EMU_API_LOCK();
  if (!node || !type) return set_error(cudaErrorInvalidValue);
  switch (reinterpret_cast<const Node*>(node)->kind) {
    case Node::kernel: *type = cudaGraphNodeTypeKernel; break;
    case Node::memcpy_: case Node::memcpy3d: *type = cudaGraphNodeTypeMemcpy; break;
    case Node::memset_: *type = cudaGraphNodeTypeMemset; break;
    case Node::host: *type = cudaGraphNodeTypeHost; break;
    case Node::empty: *type = cudaGraphNodeTypeEmpty; break;
    case Node::event_record: *type = cudaGraphNodeTypeEventRecord; break;
    case Node::event_wait: *type = cudaGraphNodeTypeWaitEvent; break;
  }
  return cudaSuccess;
}
cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t g, unsigned long long flags) {
  EMU_API_LOCK();
  return cudaGraphInstantiate(exec, g, flags);
}

// --- host functions in stream order ----------------------------------------------------------
cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void* user) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!fn) return set_error(cudaErrorInvalidValue);
  Node n;
  n.kind = Node::host;
  n.fn = fn;
  n.user = user;
  return set_error(issue(s, std::move(n)));
}
cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t s, cudaHostFn_t fn, void* user) {
  PerThreadDefault p;
  return cudaLaunchHostFunc(s, fn, user);
}
cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb, void* user, unsigned int flags) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!cb || flags != 0) return set_error(cudaErrorInvalidValue);
  if (StreamImpl* si = stream_of(s); si && si->capture) return set_error(cudaErrorStreamCaptureUnsupported);
  streams::Op op;
  op.what = "a stream callback";
  op.run = [cb, s, user](streams::Op&) {
    cb(s, cudaSuccess, user);
    return cudaSuccess;
  };
  return set_error(streams::enqueue(queue_of(s), std::move(op)));
}
cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t s, cudaStreamCallback_t cb, void* user, unsigned int flags) {
  PerThreadDefault p;
  return cudaStreamAddCallback(s, cb, user, flags);
}

// --- launches with attributes ----------------------------------------------------------------
// cudaLaunchKernelEx (the C++ template) and CUB's launches in CUDA 13 come here. Attributes that
// only schedule, prioritize or overlap launches change no result when launches run one after
// another, so they are accepted and ignored; the completion events are recorded after the grid.
cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!config || (config->numAttrs && !config->attrs)) return set_error(cudaErrorInvalidValue);
  bool cooperative = false;
  bool has_cluster = false;
  dim3 cluster{1, 1, 1};
  std::vector<cudaEvent_t> completion;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const cudaLaunchAttribute& a = config->attrs[i];
    switch (a.id) {
      case cudaLaunchAttributeIgnore: case cudaLaunchAttributeAccessPolicyWindow:
      case cudaLaunchAttributeSynchronizationPolicy: case cudaLaunchAttributeClusterSchedulingPolicyPreference:
      case cudaLaunchAttributeProgrammaticStreamSerialization: case cudaLaunchAttributePriority:
      case cudaLaunchAttributeMemSyncDomainMap: case cudaLaunchAttributeMemSyncDomain:
      case cudaLaunchAttributePreferredClusterDimension:  // a preference: the required dimension rules
        break;
      case cudaLaunchAttributeCooperative: cooperative = a.val.cooperative != 0; break;
      case cudaLaunchAttributeClusterDimension:
        has_cluster = true;
        cluster = dim3(a.val.clusterDim.x, a.val.clusterDim.y, a.val.clusterDim.z);
        break;
      case cudaLaunchAttributeProgrammaticEvent:
        if (a.val.programmaticEvent.event) completion.push_back(a.val.programmaticEvent.event);
        break;
      case cudaLaunchAttributeLaunchCompletionEvent:
        if (a.val.launchCompletionEvent.event) completion.push_back(a.val.launchCompletionEvent.event);
        break;
      default:
        return unsupported("cudaLaunchKernelExC", "launch attribute " + std::to_string(int(a.id)));
    }
  }
  cudaError_t e = launch_common(func, config->gridDim, config->blockDim, args, config->dynamicSmemBytes,
                                config->stream, cooperative, has_cluster ? &cluster : nullptr);
  if (e != cudaSuccess) return e;
  for (cudaEvent_t ev : completion)
    if (cudaError_t r = cudaEventRecord(ev, config->stream); r != cudaSuccess) return r;
  return cudaSuccess;
}
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config, const void* func, void** args) {
  PerThreadDefault per_thread;
  return cudaLaunchKernelExC(config, func, args);
}

// --- device flags and the profiler -----------------------------------------------------------
cudaError_t cudaSetDeviceFlags(unsigned int flags) {
  EMU_API_LOCK();
  if (!device_visible()) return set_error(cudaErrorNoDevice);
  const unsigned schedule = flags & cudaDeviceScheduleMask;
  if ((flags & ~unsigned(cudaDeviceMask)) ||
      (schedule != cudaDeviceScheduleAuto && schedule != cudaDeviceScheduleSpin &&
       schedule != cudaDeviceScheduleYield && schedule != cudaDeviceScheduleBlockingSync))
    return set_error(cudaErrorInvalidValue);
  kinds().device_flags = flags | cudaDeviceMapHost;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
  EMU_API_LOCK();
  if (!flags) return set_error(cudaErrorInvalidValue);
  *flags = kinds().device_flags;
  return cudaSuccess;
}
// Profiler ranges mark what a profiler collects; there is none here.
cudaError_t cudaProfilerStart(void) { return cudaSuccess; }
cudaError_t cudaProfilerStop(void) { return cudaSuccess; }

// --- registered host memory ------------------------------------------------------------------
cudaError_t cudaHostRegister(void* p, size_t bytes, unsigned int flags) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!p || bytes == 0 ||
      (flags & ~unsigned(cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterIoMemory |
                         cudaHostRegisterReadOnly)))
    return set_error(cudaErrorInvalidValue);
  if (flags & cudaHostRegisterIoMemory) return unsupported("cudaHostRegister", "I/O memory");
  const uint64_t base = reinterpret_cast<uint64_t>(p);
  const auto& all = memory().all();
  auto next = all.lower_bound(base + bytes);
  if (next != all.begin() && std::prev(next)->second.base + std::prev(next)->second.bytes > base) {
    const uint64_t other = std::prev(next)->second.base;
    if (st().host_allocs.count(other) || kinds().registered.count(other))
      return set_error(cudaErrorHostMemoryAlreadyRegistered);
    say("cudaHostRegister: the range overlaps " + memory().describe(base));
    return set_error(cudaErrorInvalidValue);
  }
  // Read-only registration is honoured: a kernel's store to it is an illegal address.
  memory().add(base, bytes, "host memory registered with cudaHostRegister", !(flags & cudaHostRegisterReadOnly));
  kinds().registered[base] = flags;
  return cudaSuccess;
}
cudaError_t cudaHostUnregister(void* p) {
  EMU_API_LOCK();
  EMU_SYNC_ALL();
  if (!p) return set_error(cudaErrorInvalidValue);
  if (!kinds().registered.erase(reinterpret_cast<uint64_t>(p))) return set_error(cudaErrorHostMemoryNotRegistered);
  memory().remove(reinterpret_cast<uint64_t>(p));
  return cudaSuccess;
}

// --- managed memory --------------------------------------------------------------------------
cudaError_t cudaMallocManaged(void** p, size_t bytes, unsigned int flags) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!p || bytes == 0 || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
    return set_error(cudaErrorInvalidValue);
  if (cudaError_t e = device_alloc(p, bytes, "a cudaMallocManaged allocation"); e != cudaSuccess) return e;
  // The host writes managed memory without a runtime call, so its bytes count as written; the
  // all-ones fill still shows a program that reads what nobody wrote ("the memory is not
  // cleared", says cudaMallocManaged).
  san::on_host_write(*p, bytes);
  kinds().managed.insert(reinterpret_cast<uint64_t>(*p));
  return cudaSuccess;
}
cudaError_t cudaMemPrefetchAsync(const void* p, size_t bytes, cudaMemLocation location, unsigned int flags,
                                 cudaStream_t) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!p || bytes == 0 || flags != 0) return set_error(cudaErrorInvalidValue);
  if (cudaError_t e = check_location(location); e != cudaSuccess) return set_error(e);
  if (!is_managed(p, bytes)) {
    say("cudaMemPrefetchAsync: the range is not inside one managed allocation");
    return set_error(cudaErrorInvalidValue);
  }
  return cudaSuccess;  // one memory serves host and device: there is nothing to move
}
cudaError_t cudaMemPrefetchAsync_ptsz(const void* p, size_t bytes, cudaMemLocation location, unsigned int flags,
                                      cudaStream_t s) {
  return cudaMemPrefetchAsync(p, bytes, location, flags, s);
}
cudaError_t cudaMemAdvise(const void* p, size_t bytes, cudaMemoryAdvise advice, cudaMemLocation location) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!p || bytes == 0 || advice < cudaMemAdviseSetReadMostly || advice > cudaMemAdviseUnsetAccessedBy)
    return set_error(cudaErrorInvalidValue);
  // Read-mostly advice names no location.
  if (advice != cudaMemAdviseSetReadMostly && advice != cudaMemAdviseUnsetReadMostly)
    if (cudaError_t e = check_location(location); e != cudaSuccess) return set_error(e);
  if (!is_managed(p, bytes)) {
    say("cudaMemAdvise: the range is not inside one managed allocation");
    return set_error(cudaErrorInvalidValue);
  }
  return cudaSuccess;  // advice about placement; there is one placement
}
cudaError_t cudaStreamAttachMemAsync(cudaStream_t, void* p, size_t bytes, unsigned int flags) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost && flags != cudaMemAttachSingle)
    return set_error(cudaErrorInvalidValue);
  if (!p || !is_managed(p, bytes)) return set_error(cudaErrorInvalidValue);
  return cudaSuccess;
}

// --- stream-ordered allocation and memory pools ----------------------------------------------
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  EMU_API_LOCK();
  if (!pool) return set_error(cudaErrorInvalidValue);
  if (device != 0 || !device_visible()) return set_error(cudaErrorInvalidDevice);
  *pool = reinterpret_cast<cudaMemPool_t>(&kinds().default_pool);
  return cudaSuccess;
}
cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int device) {
  EMU_API_LOCK();
  if (!pool) return set_error(cudaErrorInvalidValue);
  if (device != 0 || !device_visible()) return set_error(cudaErrorInvalidDevice);
  *pool = reinterpret_cast<cudaMemPool_t>(kinds().current_pool);
  return cudaSuccess;
}
cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool) {
  EMU_API_LOCK();
  if (!pool) return set_error(cudaErrorInvalidValue);
  if (device != 0 || !device_visible()) return set_error(cudaErrorInvalidDevice);
  kinds().current_pool = reinterpret_cast<MemPoolImpl*>(pool);
  return cudaSuccess;
}
cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const cudaMemPoolProps* props) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!pool || !props || props->allocType != cudaMemAllocationTypePinned) return set_error(cudaErrorInvalidValue);
  if (props->location.type != cudaMemLocationTypeDevice) return set_error(cudaErrorInvalidValue);
  if (props->location.id != 0) return set_error(cudaErrorInvalidDevice);
  if (props->handleTypes != cudaMemHandleTypeNone)
    return unsupported("cudaMemPoolCreate", "a pool whose allocations export handles");
  *pool = reinterpret_cast<cudaMemPool_t>(new MemPoolImpl);
  return cudaSuccess;
}
// Outstanding allocations keep a destroyed pool alive until they are freed, as the runtime says.
cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool) {
  EMU_API_LOCK();
  auto* p = reinterpret_cast<MemPoolImpl*>(pool);
  if (!p || p == &kinds().default_pool) return set_error(cudaErrorInvalidValue);
  if (kinds().current_pool == p) kinds().current_pool = &kinds().default_pool;
  if (p->used) p->destroyed = true;
  else delete p;
  return cudaSuccess;
}
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t) {
  EMU_API_LOCK();
  return pool ? cudaSuccess : set_error(cudaErrorInvalidValue);  // freed memory is returned at once
}
// A pool reserves exactly what it hands out: freed memory goes back at once, whatever the
// release threshold (a threshold only allows a pool to keep more).
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  EMU_API_LOCK();
  auto* p = reinterpret_cast<MemPoolImpl*>(pool);
  if (!p || !value) return set_error(cudaErrorInvalidValue);
  switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies: case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies:
      p->reuse[int(attr) - int(cudaMemPoolReuseFollowEventDependencies)] = *static_cast<int*>(value);
      return cudaSuccess;
    case cudaMemPoolAttrReleaseThreshold: p->release_threshold = *static_cast<uint64_t*>(value); return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh: case cudaMemPoolAttrUsedMemHigh:
      if (*static_cast<uint64_t*>(value) != 0) return set_error(cudaErrorInvalidValue);  // only a reset
      p->used_high = p->used;
      return cudaSuccess;
    default: return set_error(cudaErrorInvalidValue);
  }
}
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  EMU_API_LOCK();
  auto* p = reinterpret_cast<MemPoolImpl*>(pool);
  if (!p || !value) return set_error(cudaErrorInvalidValue);
  switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies: case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies:
      *static_cast<int*>(value) = p->reuse[int(attr) - int(cudaMemPoolReuseFollowEventDependencies)];
      return cudaSuccess;
    case cudaMemPoolAttrReleaseThreshold: *static_cast<uint64_t*>(value) = p->release_threshold; return cudaSuccess;
    case cudaMemPoolAttrReservedMemCurrent: case cudaMemPoolAttrUsedMemCurrent:
      *static_cast<uint64_t*>(value) = p->used;
      return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh: case cudaMemPoolAttrUsedMemHigh:
      *static_cast<uint64_t*>(value) = p->used_high;
      return cudaSuccess;
    default: return set_error(cudaErrorInvalidValue);
  }
}
cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const cudaMemAccessDesc* list, size_t count) {
  EMU_API_LOCK();
  if (!pool || (count && !list)) return set_error(cudaErrorInvalidValue);
  for (size_t i = 0; i < count; ++i)
    if (cudaError_t e = check_location(list[i].location); e != cudaSuccess) return set_error(e);
  return cudaSuccess;  // one device: it always has access to its own pools
}
cudaError_t cudaMemPoolGetAccess(cudaMemAccessFlags* flags, cudaMemPool_t pool, cudaMemLocation* location) {
  EMU_API_LOCK();
  if (!flags || !pool || !location) return set_error(cudaErrorInvalidValue);
  if (cudaError_t e = check_location(*location); e != cudaSuccess) return set_error(e);
  *flags = location->type == cudaMemLocationTypeDevice ? cudaMemAccessFlagsProtReadWrite : cudaMemAccessFlagsProtNone;
  return cudaSuccess;
}
cudaError_t cudaMallocFromPoolAsync(void** p, size_t bytes, cudaMemPool_t pool, cudaStream_t s) {
  EMU_API_LOCK();
  EMU_STICKY();
  auto* mp = reinterpret_cast<MemPoolImpl*>(pool);
  if (!p || !mp || mp->destroyed) return set_error(cudaErrorInvalidValue);
  if (StreamImpl* si = stream_of(s); si && si->capture)
    return unsupported("cudaMallocAsync", "allocation inside stream capture (a graph memory node)");
  if (cudaError_t e = device_alloc(p, bytes, "a cudaMallocAsync allocation"); e != cudaSuccess) return e;
  if (!*p) return cudaSuccess;
  kinds().pooled[reinterpret_cast<uint64_t>(*p)] = {mp, bytes};
  mp->used += bytes;
  mp->used_high = std::max(mp->used_high, mp->used);
  return cudaSuccess;
}
cudaError_t cudaMallocAsync(void** p, size_t bytes, cudaStream_t s) {
  EMU_API_LOCK();
  return cudaMallocFromPoolAsync(p, bytes, reinterpret_cast<cudaMemPool_t>(kinds().current_pool), s);
}
// The free takes effect now, which is when the stream reaches it: work issued before it has run.
cudaError_t cudaFreeAsync(void* p, cudaStream_t s) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!p || host_mapping_of(p)) return set_error(cudaErrorInvalidValue);
  if (StreamImpl* si = stream_of(s); si && si->capture)
    return unsupported("cudaFreeAsync", "a free inside stream capture (a graph memory node)");
  const Allocation* a = memory().find(reinterpret_cast<uint64_t>(p), 1);
  if (!a || a->base != reinterpret_cast<uint64_t>(p)) {
    say("cudaFreeAsync: pointer was not returned by cudaMalloc or cudaMallocAsync");
    return set_error(cudaErrorInvalidValue);
  }
  // The free happens when the stream reaches it; to work the stream does not order with it, it
  // is a write of every byte.
  streams::Op op;
  op.what = "cudaFreeAsync of " + std::to_string(a->bytes) + " bytes";
  op.footprint.add(a->base, a->base + a->bytes, streams::kWr);
  op.run = [p](streams::Op&) { return free_device(p); };
  return set_error(streams::enqueue(queue_of(s), std::move(op)));
}
cudaError_t cudaMallocAsync_ptsz(void** p, size_t bytes, cudaStream_t s) { return cudaMallocAsync(p, bytes, s); }
cudaError_t cudaMallocFromPoolAsync_ptsz(void** p, size_t bytes, cudaMemPool_t pool, cudaStream_t s) {
  return cudaMallocFromPoolAsync(p, bytes, pool, s);
}
cudaError_t cudaFreeAsync_ptsz(void* p, cudaStream_t s) { return cudaFreeAsync(p, s); }

// The per-thread default stream's entry points (--default-stream per-thread): a 0 stream is the
// calling thread's per-thread default stream.
cudaError_t cudaMemcpy_ptds(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  PerThreadDefault p;
  return cudaMemcpy(dst, src, bytes, kind);
}
cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
  PerThreadDefault p;
  return cudaMemcpyAsync(dst, src, bytes, kind, s);
}
cudaError_t cudaMemset_ptds(void* d, int value, size_t bytes) {
  PerThreadDefault p;
  return cudaMemset(d, value, bytes);
}
cudaError_t cudaMemsetAsync_ptsz(void* d, int value, size_t bytes, cudaStream_t s) {
  PerThreadDefault p;
  return cudaMemsetAsync(d, value, bytes, s);
}
cudaError_t cudaMemcpy2D_ptds(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                              size_t height, cudaMemcpyKind kind) {
  PerThreadDefault p;
  return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}
cudaError_t cudaMemset2D_ptds(void* d, size_t pitch, int value, size_t width, size_t height) {
  PerThreadDefault p;
  return cudaMemset2D(d, pitch, value, width, height);
}
cudaError_t cudaMemcpyToSymbol_ptds(const void* symbol, const void* src, size_t count, size_t offset,
                                    cudaMemcpyKind kind) {
  PerThreadDefault p;
  return cudaMemcpyToSymbol(symbol, src, count, offset, kind);
}
cudaError_t cudaMemcpyFromSymbol_ptds(void* dst, const void* symbol, size_t count, size_t offset,
                                      cudaMemcpyKind kind) {
  PerThreadDefault p;
  return cudaMemcpyFromSymbol(dst, symbol, count, offset, kind);
}
cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void* symbol, const void* src, size_t count, size_t offset,
                                         cudaMemcpyKind kind, cudaStream_t s) {
  PerThreadDefault p;
  return cudaMemcpyToSymbolAsync(symbol, src, count, offset, kind, s);
}
cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void* dst, const void* symbol, size_t count, size_t offset,
                                           cudaMemcpyKind kind, cudaStream_t s) {
  PerThreadDefault p;
  return cudaMemcpyFromSymbolAsync(dst, symbol, count, offset, kind, s);
}
cudaError_t cudaLaunchCooperativeKernel_ptsz(const void* func, dim3 grid, dim3 block, void** args, size_t smem,
                                             cudaStream_t stream) {
  PerThreadDefault p;
  return cudaLaunchCooperativeKernel(func, grid, block, args, smem, stream);
}
cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t s, cudaStreamCaptureMode mode) {
  PerThreadDefault p;
  return cudaStreamBeginCapture(s, mode);
}
cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t s, cudaGraph_t* g) {
  PerThreadDefault p;
  return cudaStreamEndCapture(s, g);
}
cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t s, cudaStreamCaptureStatus* status) {
  PerThreadDefault p;
  return cudaStreamIsCapturing(s, status);
}

}  // extern "C"

// Called by the generated stubs of every runtime function the emulator does not implement.
extern "C" int gpu100_emu_unimplemented(const char* name) {
  EMU_API_LOCK();
  say(std::string(name) + " is not implemented by the emulator");
  return set_error(cudaErrorNotSupported);
}

// The emulator's counters, for emu/bench (looked up with dlsym; absent from the real runtime).
struct Gpu100EmuStats {
  unsigned long long launches, warp_instructions, thread_instructions;
  double cpu_seconds;
};
extern "C" void gpu100_emu_stats(Gpu100EmuStats* out) {
  EMU_API_LOCK();
  const Stats& s = stats();
  out->launches = s.launches;
  out->warp_instructions = s.warp_instructions;
  out->thread_instructions = s.thread_instructions;
  out->cpu_seconds = s.cpu_seconds;
}

// The launch metrics (include/gpu100_emu_metrics.h), for programs that look them up with dlsym.
extern "C" void gpu100_emu_metrics(Gpu100EmuMetrics* out) {
  EMU_API_LOCK();
  if (out) metrics::read(out);
}
extern "C" void gpu100_emu_metrics_reset_peak(void) {
  EMU_API_LOCK();
  metrics::reset_peak();
}

// The runtime's state as its other files (runtime/texture.cpp) reach it.
namespace emu::runtime {
std::recursive_mutex& api_lock() { return api_mutex(); }
cudaError_t sticky_error() { return st().sticky; }
void set_sticky(cudaError_t e) { st().sticky = e; set_error(e); }
cudaError_t set_last_error(cudaError_t e) { return set_error(e); }
}  // namespace emu::runtime
