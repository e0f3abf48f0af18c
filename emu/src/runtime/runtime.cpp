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

#include "exec/machine.h"
#include "exec/sanitizer.h"
#include "exec/metrics.h"
#include "ptx/fatbin.h"

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
};

struct KernelRecord {
  FatbinRecord* fatbin = nullptr;
  std::string name;
  Kernel* kernel = nullptr;   // decoded on first use
  int max_dynamic_smem = -1;  // cudaFuncAttributeMaxDynamicSharedMemorySize
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
    void* p = std::aligned_alloc(256, (g.bytes + 255) / 256 * 256);
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
  return k;
}

// ---------------------------------------------------------------------------------------------
// Occupancy: the emulated SM's limits on threads, blocks and shared memory. Registers are not
// modeled (the PTX's virtual registers say nothing about the hardware's allocation).
int blocks_per_sm(const Kernel& k, int threads, size_t dyn_smem) {
  const DeviceConfig& c = device_config();
  if (threads <= 0) return 0;
  const int warps = (threads + 31) / 32;
  int n = std::min(c.max_blocks_per_sm, (c.max_threads_per_sm / 32) / warps);
  const size_t smem = k.static_smem + dyn_smem;
  if (smem) n = std::min<int>(n, int((c.smem_per_sm) / ((smem + 127) / 128 * 128 + 1024)));
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
};

cudaError_t prepare(const void* func, dim3 grid, dim3 block, void** args, size_t smem,
                    LaunchRequest& req) {
  cudaError_t err = cudaSuccess;
  KernelRecord* rec = kernel_of(func, &err);
  if (!rec) return err;
  const Kernel& k = *rec->kernel;
  const uint64_t threads = uint64_t(block.x) * block.y * block.z;
  if (block.x == 0 || block.y == 0 || block.z == 0 || grid.x == 0 || grid.y == 0 || grid.z == 0 ||
      block.x > 1024 || block.y > 1024 || block.z > 64 || threads > 1024 || grid.y > 65535 ||
      grid.z > 65535 || grid.x > 0x7FFFFFFFu)
    return cudaErrorInvalidConfiguration;
  if ((k.maxntid && threads > uint64_t(k.maxntid)) || (k.reqntid && threads != uint64_t(k.reqntid)))
    return cudaErrorInvalidConfiguration;
  const DeviceConfig& c = device_config();
  const size_t dyn_limit = rec->max_dynamic_smem >= 0 ? size_t(rec->max_dynamic_smem)
                                                       : size_t(c.smem_per_block) - std::min<size_t>(c.smem_per_block, k.static_smem);
  if (smem > dyn_limit || k.static_smem + smem > size_t(c.smem_per_block_optin)) return cudaErrorInvalidValue;
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
// Streams, events, graphs. Work runs when it is issued; a capturing stream records it instead.
struct Node;
struct GraphImpl {
  std::vector<std::unique_ptr<Node>> nodes;
};
struct Node {
  enum Kind { kernel, memcpy_, memset_ } kind = kernel;
  LaunchRequest launch;
  void* dst = nullptr;
  const void* src = nullptr;
  size_t bytes = 0;
  int value = 0;
};
struct StreamImpl {
  GraphImpl* capture = nullptr;
  unsigned flags = 0;
};
struct EventImpl {
  double ms = -1;
  unsigned flags = 0;
};
struct GraphExecImpl {
  std::vector<Node> nodes;
  std::map<const Node*, size_t> index;  // source node -> position
};

// The legacy default stream (0 or cudaStreamLegacy) and the per-thread default stream are
// handles, not objects: all of them run work in issue order like every stream here.
StreamImpl* stream_of(cudaStream_t s) {
  if (s == cudaStreamLegacy || s == cudaStreamPerThread) return nullptr;
  return reinterpret_cast<StreamImpl*>(s);
}
double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

cudaError_t run_node(Node& n) {
  switch (n.kind) {
    case Node::kernel: return execute(n.launch);
    case Node::memcpy_:
      std::memmove(n.dst, n.src, n.bytes);
      san::on_copy(n.dst, n.src, n.bytes);
      return cudaSuccess;
    case Node::memset_:
      std::memset(n.dst, n.value, n.bytes);
      san::on_host_write(n.dst, n.bytes);
      return cudaSuccess;
  }
  return cudaSuccess;
}

cudaError_t issue(cudaStream_t s, Node n) {
  if (StreamImpl* si = stream_of(s); si && si->capture) {
    si->capture->nodes.push_back(std::make_unique<Node>(std::move(n)));
    return cudaSuccess;
  }
  return run_node(n);
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
char __cudaInitModule(void**) { return 1; }

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

void __cudaRegisterManagedVar(void**, void**, char*, const char* deviceName, int, size_t, int, int) {
  EMU_API_LOCK();
  say(std::string("__managed__ variable ") + deviceName + ": managed memory is not supported by the emulator");
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

static cudaError_t launch_common(const void* func, dim3 grid, dim3 block, void** args, size_t smem,
                                 cudaStream_t stream, bool cooperative) {
  EMU_STICKY();
  Node n;
  n.kind = Node::kernel;
  cudaError_t e = prepare(func, grid, block, args, smem, n.launch);
  if (e != cudaSuccess) return set_error(e);
  n.launch.cooperative = cooperative;
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
  EMU_API_LOCK(); EMU_STICKY(); return cudaSuccess; }
cudaError_t cudaDeviceReset(void) {
  EMU_API_LOCK();
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
    case cudaDevAttrManagedMemory: *value = 0; break;
    case cudaDevAttrConcurrentManagedAccess: *value = 0; break;
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
    case cudaDevAttrMemoryPoolsSupported: *value = 0; break;
    case cudaDevAttrClusterLaunch: *value = 0; break;
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
  void* q = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
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
cudaError_t cudaFree(void* p) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!p) return cudaSuccess;
  const Allocation* a = memory().find(reinterpret_cast<uint64_t>(p), 1);
  const uint64_t bytes = a && a->base == reinterpret_cast<uint64_t>(p) ? a->bytes : 0;
  if (!memory().remove(reinterpret_cast<uint64_t>(p))) {
    say("cudaFree: pointer was not returned by cudaMalloc");
    return set_error(cudaErrorInvalidValue);
  }
  metrics::device_free(bytes);
  std::free(p);
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
  if (!st().host_allocs.erase(reinterpret_cast<uint64_t>(p))) return set_error(cudaErrorInvalidValue);
  memory().remove(reinterpret_cast<uint64_t>(p));
  std::free(p);
  return cudaSuccess;
}
cudaError_t cudaHostGetDevicePointer(void** d, void* h, unsigned int) {
  EMU_API_LOCK();
  if (!d || !st().host_allocs.count(reinterpret_cast<uint64_t>(h))) return set_error(cudaErrorInvalidValue);
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

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (cudaError_t e = check_copy(dst, src, bytes, kind); e != cudaSuccess) return set_error(e);
  if (bytes == 0) return cudaSuccess;
  Node n;
  n.kind = Node::memcpy_;
  n.dst = dst;
  n.src = src;
  n.bytes = bytes;
  return set_error(issue(s, std::move(n)));
}
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  EMU_API_LOCK();
  return cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
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
  return set_error(issue(s, std::move(n)));
}
cudaError_t cudaMemset(void* p, int value, size_t bytes) { return cudaMemsetAsync(p, value, bytes, nullptr); }

cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                         size_t height, cudaMemcpyKind kind) {
  EMU_API_LOCK();
  EMU_STICKY();
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
  EMU_STICKY();
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
  EMU_STICKY();
  size_t size = 0;
  void* a = symbol_address(symbol, &size);
  if (!a) return set_error(cudaErrorInvalidSymbol);
  if (offset + count > size) return set_error(cudaErrorInvalidValue);
  std::memcpy(static_cast<char*>(a) + offset, src, count);
  return cudaSuccess;
}
cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind) {
  EMU_API_LOCK();
  EMU_STICKY();
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
  const bool host = st().host_allocs.count(al ? al->base : 0) != 0;
  a->type = !al ? cudaMemoryTypeUnregistered : host ? cudaMemoryTypeHost : cudaMemoryTypeDevice;
  a->device = 0;
  a->devicePointer = al ? const_cast<void*>(p) : nullptr;
  a->hostPointer = (!al || host) ? const_cast<void*>(p) : nullptr;
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
  attr->localSizeBytes = k.local_bytes;
  attr->maxThreadsPerBlock = k.maxntid ? k.maxntid : k.reqntid ? k.reqntid : 1024;
  attr->numRegs = 32;  // not modeled: the PTX names virtual registers only
  attr->ptxVersion = c.cc_major * 10 + c.cc_minor;
  if (k.module) attr->ptxVersion = k.module->parsed.target_sm;  // the PTX the kernel came from
  attr->binaryVersion = attr->ptxVersion;
  attr->maxDynamicSharedSizeBytes = rec->max_dynamic_smem >= 0
                                        ? rec->max_dynamic_smem
                                        : int(c.smem_per_block - std::min<int>(c.smem_per_block, int(k.static_smem)));
  attr->preferredShmemCarveout = -1;
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
  *s = reinterpret_cast<cudaStream_t>(impl);
  return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t* s) { return cudaStreamCreateWithFlags(s, 0); }
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned int flags, int) { return cudaStreamCreateWithFlags(s, flags); }
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  EMU_API_LOCK();
  delete stream_of(s);
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) {
  EMU_API_LOCK(); EMU_STICKY(); return cudaSuccess; }
cudaError_t cudaStreamQuery(cudaStream_t) {
  EMU_API_LOCK(); EMU_STICKY(); return cudaSuccess; }
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned int) {
  EMU_API_LOCK(); EMU_STICKY(); return cudaSuccess; }
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
  delete reinterpret_cast<EventImpl*>(e);
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!e) return set_error(cudaErrorInvalidResourceHandle);
  if (StreamImpl* si = stream_of(s); si && si->capture) return cudaSuccess;  // ordering only
  reinterpret_cast<EventImpl*>(e)->ms = now_ms();
  return cudaSuccess;
}
cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned int) { return cudaEventRecord(e, s); }
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!e) return set_error(cudaErrorInvalidResourceHandle);
  return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t e) {
  EMU_API_LOCK();
  EMU_STICKY();
  return e ? cudaSuccess : set_error(cudaErrorInvalidResourceHandle);
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!ms || !start || !end) return set_error(cudaErrorInvalidValue);
  auto* a = reinterpret_cast<EventImpl*>(start);
  auto* b = reinterpret_cast<EventImpl*>(end);
  if ((a->flags | b->flags) & cudaEventDisableTiming) return set_error(cudaErrorInvalidResourceHandle);
  if (a->ms < 0 || b->ms < 0) return set_error(cudaErrorInvalidResourceHandle);
  *ms = float(b->ms - a->ms);
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
cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t*, size_t,
                                   const cudaKernelNodeParams* p) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!node || !g || !p) return set_error(cudaErrorInvalidValue);
  auto n = std::make_unique<Node>();
  n->kind = Node::kernel;
  cudaError_t e = prepare(p->func, p->gridDim, p->blockDim, p->kernelParams, p->sharedMemBytes, n->launch);
  if (e != cudaSuccess) return set_error(e);
  *node = reinterpret_cast<cudaGraphNode_t>(n.get());
  reinterpret_cast<GraphImpl*>(g)->nodes.push_back(std::move(n));
  return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t g, unsigned long long) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!exec || !g) return set_error(cudaErrorInvalidValue);
  auto* x = new GraphExecImpl;
  for (auto& n : reinterpret_cast<GraphImpl*>(g)->nodes) {
    x->index[n.get()] = x->nodes.size();
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
cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t) {
  EMU_API_LOCK();
  EMU_STICKY();
  if (!x) return set_error(cudaErrorInvalidValue);
  for (Node& n : reinterpret_cast<GraphExecImpl*>(x)->nodes) {
    cudaError_t e = run_node(n);
    if (e != cudaSuccess) return set_error(e);
  }
  return cudaSuccess;
}
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
  if (gi->nodes.size() != gx->nodes.size()) return fail(cudaGraphExecUpdateErrorTopologyChanged);
  for (size_t i = 0; i < gi->nodes.size(); ++i) {
    const Node& a = *gi->nodes[i];
    const Node& b = gx->nodes[i];
    if (a.kind != b.kind) return fail(cudaGraphExecUpdateErrorNodeTypeChanged);
    if (a.kind == Node::kernel && a.launch.rec != b.launch.rec) return fail(cudaGraphExecUpdateErrorFunctionChanged);
  }
  gx->index.clear();
  for (size_t i = 0; i < gi->nodes.size(); ++i) {
    gx->nodes[i] = *gi->nodes[i];
    gx->index[gi->nodes[i].get()] = i;
  }
  if (info) info->result = cudaGraphExecUpdateSuccess;
  return cudaSuccess;
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
