// Dynamic parallelism: kernels launched from the device (CUDA 12+ device runtime, "CDP2").
//
// nvcc compiles `child<<<g, b, s, stream>>>(args)` in -rdc=true code into two calls of the
// device runtime:
//   p = __cudaCDP2GetParameterBufferV2(child, g, b, s);   // (b64 func, 12-byte dim3 x2, b32)
//   if (p) { st [p+offset], arg...; __cudaCDP2LaunchDeviceV2(p, stream); }
// where `child` is the kernel's address (`mov.u64 %rd, _Z5childPii;`). Errors go to the calling
// thread's last error (__cudaCDP2GetLastError / PeekAtLastError), as cudaGetLastError() reads it.
//
// Scheduling, within what the programming guide allows:
// - a child grid may start any time after its launch and must finish before its parent grid
//   counts as complete. Here every child runs after the parent's last block has exited, so a
//   parent that reads what its children write (without which no ordering exists in CDP2: there
//   is no device-side cudaDeviceSynchronize) sees nothing of it, deterministically;
// - launches into one stream run in issue order: a block's NULL stream is shared by its
//   threads, a stream created on the device is the grid's; fire-and-forget launches each form
//   their own stream. Launches of different streams run in issue order, or in a shuffled order
//   under GPU100_EMU_SCHEDULE=random, which a program must not depend on;
// - cudaStreamTailLaunch: after the parent and all its other children (with their descendants)
//   are complete, in the order the parent issued them;
// - a child's subtree completes before the next child starts (one schedule among many);
// - nesting depth: a grid launched from the host has depth 0, launches deeper than 24 fail with
//   cudaErrorLaunchMaxDepthExceeded; more than cudaLimitDevRuntimePendingLaunchCount launches
//   waiting to start fail with cudaErrorLaunchPendingCountExceeded.
#include <algorithm>
#include <deque>
#include <random>

#include "exec/ops.h"

namespace emu {

namespace {

constexpr int kErrInvalidValue = 1, kErrInvalidConfiguration = 9, kErrMaxDepth = 65,
              kErrPendingCount = 69, kErrInvalidDeviceFunction = 98, kErrInvalidHandle = 400;
constexpr uint32_t kMaxDepth = 24;
constexpr uint64_t kStreamNull = 0, kStreamTail = 3, kStreamFireAndForget = 4;
// Device-created streams and entry handles are values no allocation can have.
constexpr uint64_t kStreamBase = 0x5d00000000000000ull, kEntryBase = 0x0e00000000000000ull;

struct EntryRef {
  Module* module;
  std::string name;
};
std::vector<EntryRef>& entries() {
  static std::vector<EntryRef> v;
  return v;
}

struct ParamBuffer {
  Kernel* kernel = nullptr;
  Dim3 grid, block;
  uint32_t dyn_smem = 0;
  uint8_t* storage = nullptr;
};
std::map<uint64_t, ParamBuffer>& param_buffers() {
  static std::map<uint64_t, ParamBuffer> m;
  return m;
}
uint64_t g_pending = 0;      // launched, not yet started
uint64_t g_fire_forget = 0;  // stream keys of fire-and-forget launches

void free_buffer(uint64_t addr) {
  auto it = param_buffers().find(addr);
  if (it == param_buffers().end()) return;
  memory().remove(addr);
  std::free(it->second.storage);
  param_buffers().erase(it);
}

uint32_t thread_key(const Exec& x, int lane) { return x.b->linear * 1024u + x.w->index * 32u + uint32_t(lane); }
void set_error(Exec& x, int lane, int err) {
  if (err) x.l->last_error[thread_key(x, lane)] = err;
}

template <class T>
T read_slot(Exec& x, const Operand& o, int lane) {
  T v;
  std::memcpy(&v, x.addr(Space::local, o.imm, sizeof(T), lane, false), sizeof(T));
  return v;
}
template <class T>
void write_slot(Exec& x, const Operand& o, int lane, T v) {
  if (o.kind == OK::imm) std::memcpy(x.addr(Space::local, o.imm, sizeof(T), lane, true), &v, sizeof(T));
}
Dim3 read_dim3(Exec& x, const Operand& o, int lane) {
  Dim3 d;
  std::memcpy(&d.x, x.addr(Space::local, o.imm, 4, lane, false), 4);
  std::memcpy(&d.y, x.addr(Space::local, o.imm + 4, 4, lane, false), 4);
  std::memcpy(&d.z, x.addr(Space::local, o.imm + 8, 4, lane, false), 4);
  return d;
}

// (func, grid, block, shared bytes) -> a buffer for the kernel's parameters, or 0.
void h_get_param_buffer(Exec& x, const Inst& in, uint32_t mask) {
  EMU_FOR_LANES(mask)
    const uint64_t func = read_slot<uint64_t>(x, in.o[1], lane);
    ParamBuffer pb;
    pb.grid = read_dim3(x, in.o[2], lane);
    pb.block = read_dim3(x, in.o[3], lane);
    pb.dyn_smem = read_slot<uint32_t>(x, in.o[4], lane);
    const uint64_t index = (func - kEntryBase) / 16;
    uint64_t result = 0;
    if (func < kEntryBase || (func - kEntryBase) % 16 || index >= entries().size()) {
      set_error(x, lane, kErrInvalidDeviceFunction);
    } else {
      const EntryRef& e = entries()[index];
      pb.kernel = e.module->kernel(e.name);
      const uint32_t bytes = std::max<uint32_t>(8, pb.kernel->param_bytes);
      pb.storage = static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
      std::memset(pb.storage, 0xFF, bytes);
      result = reinterpret_cast<uint64_t>(pb.storage);
      memory().add(result, bytes, "the parameter buffer of a device-side launch of " + pb.kernel->name);
      param_buffers()[result] = pb;
    }
    write_slot<uint64_t>(x, in.o[0], lane, result);
  EMU_END_LANES
}

int launch_one(Exec& x, int lane, uint64_t buffer, uint64_t stream) {
  auto it = param_buffers().find(buffer);
  if (it == param_buffers().end()) return kErrInvalidValue;
  const ParamBuffer pb = it->second;
  ChildLaunch c;
  c.kernel = pb.kernel;
  c.grid = pb.grid;
  c.block = pb.block;
  c.dyn_smem = pb.dyn_smem;
  c.params.assign(pb.storage, pb.storage + pb.kernel->param_bytes);
  free_buffer(buffer);  // the launch took its copy; a later write to the buffer is a fault
  const Kernel& k = *c.kernel;
  const uint64_t threads = c.block.count();
  if (c.block.x == 0 || c.block.y == 0 || c.block.z == 0 || c.grid.x == 0 || c.grid.y == 0 ||
      c.grid.z == 0 || c.block.x > 1024 || c.block.y > 1024 || c.block.z > 64 || threads > 1024 ||
      c.grid.y > 65535 || c.grid.z > 65535 || c.grid.x > 0x7FFFFFFFu ||
      (k.maxntid && threads > uint64_t(k.maxntid)) || (k.reqntid && threads != uint64_t(k.reqntid)))
    return kErrInvalidConfiguration;
  if (k.static_smem + uint64_t(c.dyn_smem) > uint64_t(device_config().smem_per_block)) return kErrInvalidValue;
  if (x.l->depth + 1 > kMaxDepth) return kErrMaxDepth;
  if (g_pending >= device_config().pending_launch_limit) return kErrPendingCount;
  if (stream == kStreamTail) {
    c.tail = true;
  } else if (stream == kStreamFireAndForget) {
    c.stream = (uint64_t(2) << 62) | ++g_fire_forget;
  } else if (stream == kStreamNull) {
    c.stream = (uint64_t(1) << 62) | x.b->linear;
  } else {
    const auto& s = x.l->streams;
    if (std::find(s.begin(), s.end(), stream) == s.end()) return kErrInvalidHandle;
    c.stream = stream;
  }
  (void)lane;
  ++g_pending;
  x.l->children.push_back(std::move(c));
  return 0;
}

// (parameter buffer, stream) -> cudaError_t
void h_launch_device(Exec& x, const Inst& in, uint32_t mask) {
  EMU_FOR_LANES(mask)
    const int err = launch_one(x, lane, read_slot<uint64_t>(x, in.o[1], lane), read_slot<uint64_t>(x, in.o[2], lane));
    set_error(x, lane, err);
    write_slot<uint32_t>(x, in.o[0], lane, uint32_t(err));
  EMU_END_LANES
}

void h_last_error(Exec& x, const Inst& in, uint32_t mask, bool reset) {
  EMU_FOR_LANES(mask)
    auto it = x.l->last_error.find(thread_key(x, lane));
    int err = 0;
    if (it != x.l->last_error.end()) {
      err = it->second;
      if (reset) x.l->last_error.erase(it);
    }
    write_slot<uint32_t>(x, in.o[0], lane, uint32_t(err));
  EMU_END_LANES
}
void h_get_last_error(Exec& x, const Inst& in, uint32_t mask) { h_last_error(x, in, mask, true); }
void h_peek_last_error(Exec& x, const Inst& in, uint32_t mask) { h_last_error(x, in, mask, false); }

// (cudaStream_t* out, flags) -> cudaError_t: device streams must be non-blocking.
void h_stream_create(Exec& x, const Inst& in, uint32_t mask) {
  EMU_FOR_LANES(mask)
    const uint64_t out = read_slot<uint64_t>(x, in.o[1], lane);
    const uint32_t flags = read_slot<uint32_t>(x, in.o[2], lane);
    int err = 0;
    if (flags != 1 /* cudaStreamNonBlocking */) {
      err = kErrInvalidValue;
    } else {
      static uint64_t next = 0;
      const uint64_t h = kStreamBase + 16 * ++next;
      std::memcpy(x.addr(Space::generic, out, 8, lane, true), &h, 8);
      x.l->streams.push_back(h);
    }
    set_error(x, lane, err);
    write_slot<uint32_t>(x, in.o[0], lane, uint32_t(err));
  EMU_END_LANES
}
// (stream) -> cudaError_t: work already launched into it still runs.
void h_stream_destroy(Exec& x, const Inst& in, uint32_t mask) {
  EMU_FOR_LANES(mask)
    const uint64_t h = read_slot<uint64_t>(x, in.o[1], lane);
    auto& s = x.l->streams;
    auto it = std::find(s.begin(), s.end(), h);
    const int err = it == s.end() ? kErrInvalidHandle : 0;
    if (it != s.end()) s.erase(it);
    set_error(x, lane, err);
    write_slot<uint32_t>(x, in.o[0], lane, uint32_t(err));
  EMU_END_LANES
}

void run_child(ChildLaunch& c, uint32_t depth) {
  Launch l;
  l.kernel = c.kernel;
  l.grid = c.grid;
  l.block = c.block;
  l.dyn_smem = c.dyn_smem;
  l.params = std::move(c.params);
  l.threads_per_block = uint32_t(c.block.count());
  l.warps_per_block = (l.threads_per_block + 31) / 32;
  const Kernel& k = *c.kernel;
  const uint32_t dyn_base = (k.static_smem + k.smem_align - 1) / k.smem_align * k.smem_align;
  l.smem_bytes = dyn_base + l.dyn_smem;
  l.gridid = ++grid_counter();
  l.depth = depth;
  --g_pending;
  run_launch(l);
  run_children(l);
}

}  // namespace

uint64_t& grid_counter() {
  static uint64_t n = 0;
  return n;
}

uint64_t entry_handle(Module* m, const std::string& name) {
  auto& v = entries();
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].module == m && v[i].name == name) return kEntryBase + 16 * i;
  v.push_back({m, name});
  return kEntryBase + 16 * (v.size() - 1);
}

void run_children(Launch& parent) {
  std::vector<ChildLaunch> kids = std::move(parent.children);
  parent.children.clear();
  // One queue per stream, in order of each stream's first launch.
  std::vector<std::deque<size_t>> queues;
  std::map<uint64_t, size_t> queue_of;
  for (size_t i = 0; i < kids.size(); ++i) {
    if (kids[i].tail) continue;
    auto [it, fresh] = queue_of.emplace(kids[i].stream, queues.size());
    if (fresh) queues.emplace_back();
    queues[it->second].push_back(i);
  }
  static std::mt19937_64 rng(device_config().schedule_seed ^ 0x9e3779b97f4a7c15ull);
  for (;;) {
    // Deterministic: the earliest-issued launch at the head of a queue; random: any queue's head.
    size_t best = queues.size();
    if (device_config().random_schedule) {
      std::vector<size_t> ready;
      for (size_t q = 0; q < queues.size(); ++q)
        if (!queues[q].empty()) ready.push_back(q);
      if (!ready.empty()) best = ready[rng() % ready.size()];
    } else {
      for (size_t q = 0; q < queues.size(); ++q)
        if (!queues[q].empty() && (best == queues.size() || queues[q].front() < queues[best].front())) best = q;
    }
    if (best == queues.size()) break;
    const size_t i = queues[best].front();
    queues[best].pop_front();
    run_child(kids[i], parent.depth + 1);
  }
  for (ChildLaunch& c : kids)
    if (c.tail) run_child(c, parent.depth + 1);
}

void abandon_device_launches() {
  std::vector<uint64_t> addrs;
  for (const auto& [a, pb] : param_buffers()) addrs.push_back(a);
  for (uint64_t a : addrs) free_buffer(a);
  g_pending = 0;
}

// The device runtime's functions nvcc calls; false if `callee` is none of them.
bool decode_device_runtime_call(DecodeCtx& d, const std::string& callee, const Operand& ret,
                                const PTok* args, Inst& in) {
  struct Builtin { const char* name; Handler fn; size_t nargs; };
  static const Builtin table[] = {
      {"__cudaCDP2GetParameterBufferV2", h_get_param_buffer, 4},
      {"__cudaCDP2LaunchDeviceV2", h_launch_device, 2},
      {"__cudaCDP2LaunchDeviceV2_ptsz", h_launch_device, 2},
      {"__cudaCDP2GetLastError", h_get_last_error, 0},
      {"__cudaCDP2PeekAtLastError", h_peek_last_error, 0},
      {"__cudaCDP2StreamCreateWithFlags", h_stream_create, 2},
      {"__cudaCDP2StreamDestroy", h_stream_destroy, 1},
  };
  for (const Builtin& b : table) {
    if (callee != b.name) continue;
    const size_t n = args ? args->elems.size() : 0;
    if (n != b.nargs) throw std::runtime_error(callee + " called with " + std::to_string(n) + " arguments");
    in.o[0] = ret;
    for (size_t a = 0; a < n; ++a) in.o[a + 1] = d.op(args->elems[a]);
    in.fn = b.fn;
    return true;
  }
  if (callee.rfind("__cudaCDP2", 0) == 0)
    throw std::runtime_error("the device runtime's " + callee + " is not supported by the emulator");
  return false;
}

}  // namespace emu
