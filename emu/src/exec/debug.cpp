// Debugging aids: the trace of one thread or warp (with its divergence), watched addresses, and
// the access map of one block (exec/debug.h).
#include "exec/debug.h"

#include <cxxabi.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <set>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#include "exec/ops.h"
#include "exec/sanitizer.h"

namespace emu {
namespace san {
bool g_hook = false;  // the memory hooks run: the checks' or the debugging aids'
AccessFn g_access = access;
// Both: the debugging aids' view of an access, then the checks'.
void access_both(Exec& x, uint32_t pc, Space space, uint64_t a, uint32_t size, int lane, uint32_t kind) {
  debug::access(x, pc, space, a, size, lane, kind);
  if (g_mem) access(x, pc, space, a, size, lane, kind);
}
}  // namespace san

namespace debug {

bool g_enabled = false;
bool g_trace_now = false;

namespace {

// ---------------------------------------------------------------------------------------------
// Options

struct Target {  // KERNEL[,block=X.Y.Z][,thread=X.Y.Z|warp=N][,launch=N]
  std::string kernel;
  Dim3 block{0, 0, 0}, thread{0, 0, 0};
  int warp = -1;  // >= 0: the whole warp
  uint64_t launch = 1;
};

struct Range {
  uint64_t a = 0, bytes = 0;
  bool seen = false;  // inside a live allocation at some point
};

struct Options {
  bool trace = false, map = false;
  Target trace_at, map_at;
  uint64_t trace_limit = 10000;
  std::vector<Range> watch;
  bool watch_reads = false;
  std::string map_file = "access-map.txt";
};
Options g_opt;

[[noreturn]] void refuse(const char* option, const std::string& why) {
  std::fflush(stdout);
  std::fprintf(stderr, "gpu100 emulator: %s: %s\n", option, why.c_str());
  std::fflush(stderr);
  _exit(2);
}

bool parse_u64(const std::string& s, uint64_t* v, int base = 10) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  *v = std::strtoull(s.c_str(), &end, base);
  return errno == 0 && end && *end == 0 && s[0] != '-';
}

bool parse_dim(const std::string& s, Dim3* d) {
  uint64_t v[3] = {0, 0, 0};
  size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t dot = s.find_first_of(".,", start);
    const std::string part = s.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!parse_u64(part, &v[i]) || v[i] > 0xFFFFFFFFu) return false;
    if (dot == std::string::npos) break;
    if (i == 2) return false;
    start = dot + 1;
  }
  *d = Dim3{uint32_t(v[0]), uint32_t(v[1]), uint32_t(v[2])};
  return true;
}

Target parse_target(const char* option, const std::string& text, bool lanes) {
  const std::string usage = lanes ? "KERNEL[,block=X.Y.Z][,thread=X.Y.Z|warp=N][,launch=N]"
                                  : "KERNEL[,block=X.Y.Z][,launch=N]";
  Target t;
  size_t start = 0;
  bool first = true, thread = false;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    if (first) {
      if (item.empty() || item.find('=') != std::string::npos)
        refuse(option, "'" + text + "' names no kernel; expected " + usage);
      t.kernel = item;
      first = false;
      continue;
    }
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    uint64_t n = 0;
    // A dim3 is written X.Y.Z; a comma splits items, so only "block=3" or "block=3.1" forms.
    if (key == "block" && parse_dim(value, &t.block)) continue;
    if (lanes && key == "thread" && parse_dim(value, &t.thread)) { thread = true; continue; }
    if (lanes && key == "warp" && parse_u64(value, &n) && n < 32) { t.warp = int(n); continue; }
    if (key == "launch" && parse_u64(value, &n) && n >= 1) { t.launch = n; continue; }
    refuse(option, "cannot read '" + item + "' in '" + text + "'; expected " + usage);
  }
  if (thread && t.warp >= 0) refuse(option, "give thread= or warp=, not both");
  return t;
}

void configure_now() {
  if (const char* s = std::getenv("GPU100_EMU_TRACE"); s && *s) {
    g_opt.trace = true;
    g_opt.trace_at = parse_target("--trace", s, true);
  }
  if (const char* s = std::getenv("GPU100_EMU_TRACE_LIMIT"); s && *s) {
    if (!parse_u64(s, &g_opt.trace_limit) || g_opt.trace_limit == 0)
      refuse("--trace-limit", std::string("'") + s + "' is not a positive number of instructions");
  }
  if (const char* s = std::getenv("GPU100_EMU_WATCH"); s && *s) {
    std::string text = s;
    size_t start = 0;
    while (start <= text.size()) {
      const size_t comma = text.find(',', start);
      const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      start = comma == std::string::npos ? text.size() + 1 : comma + 1;
      const size_t colon = item.find(':');
      Range r;
      r.bytes = 4;
      const std::string addr = item.substr(0, colon);
      const bool hex = addr.rfind("0x", 0) == 0 || addr.rfind("0X", 0) == 0;
      if (!parse_u64(hex ? addr.substr(2) : addr, &r.a, hex ? 16 : 10) ||
          (colon != std::string::npos && (!parse_u64(item.substr(colon + 1), &r.bytes) || r.bytes == 0)))
        refuse("--watch", "cannot read '" + item + "'; expected ADDRESS[:BYTES], e.g. 0x700000000040:4");
      g_opt.watch.push_back(r);
    }
  }
  if (const char* s = std::getenv("GPU100_EMU_WATCH_READS"); s && *s && std::strcmp(s, "0") != 0) {
    if (g_opt.watch.empty()) refuse("--watch-reads", "needs --watch ADDRESS[:BYTES]");
    g_opt.watch_reads = true;
  }
  if (const char* s = std::getenv("GPU100_EMU_ACCESS_MAP"); s && *s) {
    g_opt.map = true;
    g_opt.map_at = parse_target("--access-map", s, false);
    if (const char* f = std::getenv("GPU100_EMU_ACCESS_MAP_FILE"); f && *f) g_opt.map_file = f;
  }
  g_enabled = g_opt.trace || g_opt.map || !g_opt.watch.empty();
}

// ---------------------------------------------------------------------------------------------
// Names

std::string demangled(const std::string& mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !d) return mangled;
  std::string s = d;
  std::free(d);
  return s;
}

// "void ns::(anonymous namespace)::transpose<32, true>(float const*, ...)" -> "transpose".
std::string short_name(const std::string& mangled) {
  std::string s = demangled(mangled);
  const std::string anon = "(anonymous namespace)";
  for (size_t p; (p = s.find(anon)) != std::string::npos;) s.replace(p, anon.size(), "anon");
  int depth = 0;
  size_t end = s.size();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    else if (s[i] == '>') --depth;
    else if (s[i] == '(' && depth == 0) { end = i; break; }
  }
  s = s.substr(0, end);
  // The template arguments, then the qualifiers and a return type.
  if (!s.empty() && s.back() == '>') {
    depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == '>') ++depth;
      else if (s[i] == '<' && --depth == 0) { s = s.substr(0, i); break; }
    }
  }
  const size_t colon = s.rfind("::");
  if (colon != std::string::npos) s = s.substr(colon + 2);
  const size_t space = s.rfind(' ');
  if (space != std::string::npos) s = s.substr(space + 1);
  return s;
}

bool names(const std::string& wanted, const std::string& mangled) {
  if (wanted == mangled || wanted == short_name(mangled)) return true;
  std::string d = demangled(mangled);
  const size_t paren = d.rfind('(');
  return paren != std::string::npos && d.substr(0, paren).find(wanted) != std::string::npos &&
         wanted.find_first_of("<:") != std::string::npos;
}

std::string dim(const Dim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}
std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}
std::string lanes_picture(uint32_t m, char on = '#') {
  std::string s(32, '.');
  for (int i = 0; i < 32; ++i)
    if ((m >> i) & 1) s[size_t(i)] = on;
  return s;
}
std::string mask_hex(uint32_t m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", m);
  return buf;
}

std::string file_line(const Kernel& k, uint32_t pc, bool inlined = true) {
  if (pc >= k.code.size() || k.code[pc].src < 0) return "?";
  const SourceRef& s = k.source[size_t(k.code[pc].src)];
  if (s.line <= 0) return "?";
  auto it = k.module->parsed.files.find(s.file);
  std::string file = it != k.module->parsed.files.end() ? it->second : "?";
  const size_t slash = file.rfind('/');
  if (slash != std::string::npos) file = file.substr(slash + 1);
  std::string out = file + ":" + std::to_string(s.line);
  if (s.inlined_line > 0 && inlined) {
    auto jt = k.module->parsed.files.find(s.inlined_file);
    std::string f2 = jt != k.module->parsed.files.end() ? jt->second : "?";
    const size_t sl = f2.rfind('/');
    if (sl != std::string::npos) f2 = f2.substr(sl + 1);
    out += " (inlined at " + f2 + ":" + std::to_string(s.inlined_line) + ")";
  }
  return out;
}
std::string text_of(const Kernel& k, uint32_t pc) {
  if (pc >= k.code.size() || k.code[pc].src < 0) return "?";
  std::string t = k.source[size_t(k.code[pc].src)].text;
  for (char& c : t)
    if (c == '\t') c = ' ';
  return t;
}

// Where an address lies: "0x... (16 bytes into a cudaMalloc allocation of 4000 bytes at 0x...)".
std::string place(Space space, uint64_t a) {
  if (space == Space::shared) return "shared " + hex(a);
  if (space == Space::local) return "local " + hex(a);
  if (space == Space::param) return "param " + hex(a);
  const Allocation* al = memory().find(a, 1);
  if (!al) return hex(a);
  return hex(a) + " (" + std::to_string(a - al->base) + " bytes into " + al->what + " of " +
         std::to_string(al->bytes) + " bytes at " + hex(al->base) + ")";
}

// Normalizes a generic address to its window; returns the space.
Space resolve(Space space, uint64_t* a) {
  if (space == Space::generic) {
    if (*a - kSharedWindow < kWindowSize) { *a -= kSharedWindow; return Space::shared; }
    if (*a - kLocalWindow < kWindowSize) { *a -= kLocalWindow; return Space::local; }
    return Space::global;
  }
  if (space == Space::konst) return Space::global;
  return space;
}

const uint8_t* host_of(const Exec& x, Space space, uint64_t a, int lane) {
  switch (space) {
    case Space::global: return reinterpret_cast<const uint8_t*>(a);
    case Space::shared: return x.b->shared.data() + a;
    case Space::local: return x.w->local + size_t(lane) * x.k->local_bytes + a;
    case Space::param: return x.l->params.data() + a;
    default: return nullptr;
  }
}

// A value of `bytes` bytes as the type says (the instruction's), e.g. "3.5 (0x40600000)".
std::string value(const uint8_t* p, uint32_t bytes, Type t) {
  if (bytes == 0) return "";
  uint64_t v = 0;
  if (bytes <= 8) std::memcpy(&v, p, bytes);
  char buf[96];
  if (bytes > 8) {
    std::string s = "0x";
    for (uint32_t i = bytes; i-- > 0;) {
      std::snprintf(buf, sizeof buf, "%02x", p[i]);
      s += buf;
    }
    return s;
  }
  if (bytes == 4 && t == Type::f32) {
    std::snprintf(buf, sizeof buf, "%.9g (0x%08" PRIx64 ")", double(f32_of(v)), v);
  } else if (bytes == 8 && t == Type::f64) {
    std::snprintf(buf, sizeof buf, "%.17g (0x%016" PRIx64 ")", f64_of(v), v);
  } else if (type_signed(t)) {
    const int64_t sv = int64_t(v << (64 - 8 * bytes)) >> (64 - 8 * bytes);
    std::snprintf(buf, sizeof buf, "%" PRId64, sv);
  } else if (t == Type::u8 || t == Type::u16 || t == Type::u32 || t == Type::u64) {
    std::snprintf(buf, sizeof buf, "%" PRIu64, v);
  } else {
    std::snprintf(buf, sizeof buf, "0x%0*" PRIx64, int(2 * bytes), v);
  }
  return buf;
}

// A register's value by nvcc's naming of its kind: %p predicate, %f f32, %fd f64, %rd 64-bit,
// %r 32-bit, %rs 16-bit, %h/%hh halves.
std::string reg_value(const std::string& name, uint64_t v) {
  char buf[96];
  auto starts = [&](const char* p) { return name.rfind(p, 0) == 0 && name.size() > std::strlen(p) &&
                                            std::isdigit(static_cast<unsigned char>(name[std::strlen(p)])); };
  if (starts("%p")) return v & 1 ? "true" : "false";
  if (starts("%fd")) { std::snprintf(buf, sizeof buf, "%.17g", f64_of(v)); return buf; }
  if (starts("%f")) { std::snprintf(buf, sizeof buf, "%.9g", double(f32_of(v))); return buf; }
  if (starts("%rd")) {
    std::string s = hex(v);
    if (const Allocation* al = v ? memory().find(v, 1) : nullptr)
      s += " (" + al->what + " at " + hex(al->base) + " + " + std::to_string(v - al->base) + ")";
    return s;
  }
  if (starts("%rs")) { std::snprintf(buf, sizeof buf, "%d", int(int16_t(v))); return buf; }
  if (starts("%r")) { std::snprintf(buf, sizeof buf, "%d", int(int32_t(v))); return buf; }
  return hex(v);
}

// ---------------------------------------------------------------------------------------------
// Launch bookkeeping

uint64_t g_launches = 0;                    // every launch so far
std::map<std::string, uint64_t> g_counted;  // launches per option (trace, map) that named it
const Launch* g_trace_launch = nullptr;
const Launch* g_map_launch = nullptr;
uint32_t g_trace_block = 0, g_map_block = 0, g_trace_warp = 0;
int g_trace_lane = -1;  // -1: the whole warp
bool g_trace_done = false, g_map_done = false;
bool g_kernels_checked = false;

// --- trace state ---
struct Access {
  int lane;
  Space space;
  uint64_t a;
  uint32_t size, kind;
  uint8_t before[16];
  const uint8_t* p;
};
struct Pending {
  bool live = false;
  uint32_t pc = 0, mask = 0, active = 0;
  std::vector<uint64_t> regs;  // the traced lanes' registers before the instruction
  std::vector<Access> accesses;
};
Pending g_pending;
uint64_t g_traced = 0;  // instructions printed
bool g_limit_said = false;
std::map<uint32_t, std::vector<uint32_t>> g_dests;  // per pc: destination registers

// --- divergence of the traced warp ---
uint32_t g_group[32];
uint32_t g_next_group = 1;
uint32_t g_prev_pc = ~0u, g_prev_mask = 0, g_prev_active = 0;
std::vector<std::string> g_divergence;

// --- watch ---
struct WatchEvent {
  size_t range;
  std::string who;   // "store by kernel ..., block ... thread ..., '<inst>' at file:line"
  uint8_t before[16];
  uint32_t bytes;
  Type type;
  bool write;
};
std::vector<WatchEvent> g_watch_pending;

// --- access map ---
struct MapRecord {
  uint32_t pc, warp;
  int lane;
  Space space;
  uint64_t a;
  uint32_t size, kind;
};
std::vector<MapRecord> g_map;

uint32_t lane_mask() { return g_trace_lane < 0 ? 0xFFFFFFFFu : 1u << g_trace_lane; }

std::string thread_of(const Launch& l, uint32_t warp, int lane) {
  const uint32_t t = warp * 32 + uint32_t(lane);
  const Dim3& bd = l.block;
  return dim(Dim3{t % bd.x, (t / bd.x) % bd.y, t / (bd.x * bd.y)});
}

// Destination registers: the first operand, except for instructions that have none; setp's
// second predicate, shfl's and match's predicate (Inst::op_flags, from the decoder's table).
const std::vector<uint32_t>& dests(const Kernel& k, uint32_t pc) {
  auto it = g_dests.find(pc);
  if (it != g_dests.end()) return it->second;
  std::vector<uint32_t> out;
  const Inst& in = k.code[pc];
  const bool has = (in.ctl == Ctl::normal || in.ctl == Ctl::collective) && !(in.op_flags & kOpNoDest);
  auto add = [&](const Operand& o) {
    if (o.kind == OK::reg) out.push_back(o.reg);
    if (o.kind == OK::vec)
      for (int e = 0; e < o.count; ++e)
        if (k.vec_ops[o.reg + e].kind == OK::reg) out.push_back(k.vec_ops[o.reg + e].reg);
  };
  if (has) {
    add(in.o[0]);
    if ((in.op_flags & kOpDest4) && in.o[4].kind == OK::reg) add(in.o[4]);
    if ((in.op_flags & kOpDest5) && in.o[5].kind == OK::reg) add(in.o[5]);
  }
  return g_dests[pc] = out;
}

// The values of one register over the traced lanes: one value, "a + d*lane", or a list.
std::string lanes_value(const Kernel& k, const Warp& w, uint32_t reg, uint32_t lanes) {
  const std::string& name = k.reg_names[reg];
  if (g_trace_lane >= 0) return reg_value(name, w.r[reg * 32 + uint32_t(g_trace_lane)]);
  bool same = true;
  int first = -1;
  for (uint32_t m = lanes; m; m &= m - 1) {
    const int l = __builtin_ctz(m);
    if (first < 0) first = l;
    else if (w.r[reg * 32 + l] != w.r[reg * 32 + first]) same = false;
  }
  if (first < 0) return "";
  if (same) return reg_value(name, w.r[reg * 32 + first]);
  if (name.rfind("%p", 0) == 0) {  // a predicate: one letter per lane, lane 0 first
    std::string pic(32, '.');
    for (uint32_t m = lanes; m; m &= m - 1) {
      const int l = __builtin_ctz(m);
      pic[size_t(l)] = w.r[reg * 32 + l] & 1 ? 'T' : 'F';
    }
    return pic;
  }
  // An arithmetic progression over the lanes (addresses, indices): "base + step*lane".
  int second = -1;
  for (uint32_t m = lanes & ~(1u << first); m && second < 0; m &= m - 1) second = __builtin_ctz(m);
  const bool wide = name.rfind("%rd", 0) == 0;
  const uint64_t mask = wide ? ~0ull : 0xFFFFFFFFull;
  const uint64_t v0 = w.r[reg * 32 + first], v1 = w.r[reg * 32 + second];
  const int64_t step = wide ? int64_t(v1 - v0) : int64_t(int32_t(uint32_t(v1 - v0)));
  if ((v1 - v0) % uint64_t(second - first) == 0 || step % (second - first) == 0) {
    const int64_t d = step / (second - first);
    bool linear = d != 0;
    for (uint32_t m = lanes; m && linear; m &= m - 1) {
      const int l = __builtin_ctz(m);
      linear = ((v0 + uint64_t(d) * uint64_t(l - first)) & mask) == (w.r[reg * 32 + l] & mask);
    }
    if (linear) {
      const uint64_t base = (v0 - uint64_t(d) * uint64_t(first)) & mask;
      return reg_value(name, base) + " + " + std::to_string(d) + "*lane";
    }
  }
  std::string s = "[";
  for (uint32_t m = lanes; m; m &= m - 1) {
    const int l = __builtin_ctz(m);
    s += std::to_string(l) + ":" + reg_value(name, w.r[reg * 32 + l]) + (m & (m - 1) ? " " : "");
  }
  return s + "]";
}

void print_pending(const Exec& x) {
  if (!g_pending.live) return;
  g_pending.live = false;
  const Kernel& k = *x.k;
  const Warp& w = *x.w;
  const uint32_t pc = g_pending.pc;
  const uint32_t lanes = g_pending.active & lane_mask();
  std::string line = "  " + std::to_string(g_traced) + "  " + file_line(k, pc) + "  " + text_of(k, pc);
  if (g_trace_lane < 0)
    line += "   lanes " + mask_hex(g_pending.mask) + (g_pending.active != g_pending.mask ? " active " + mask_hex(g_pending.active) : "");
  else if (!lanes)
    line += "   (guard false: not executed)";
  std::fprintf(stderr, "%s\n", line.c_str());
  if (!lanes) return;
  // Registers written: the destinations, and any other register whose value changed.
  std::vector<uint32_t> regs = dests(k, pc);
  const uint32_t nl = g_trace_lane < 0 ? 32 : 1;
  for (uint32_t r = 0; r < k.nregs; ++r) {
    bool changed = false;
    for (uint32_t m = lanes; m; m &= m - 1) {
      const int l = __builtin_ctz(m);
      const uint64_t before = g_pending.regs[size_t(r) * nl + (nl == 1 ? 0 : uint32_t(l))];
      if (before != w.r[r * 32 + l]) changed = true;
    }
    if (changed && std::find(regs.begin(), regs.end(), r) == regs.end()) regs.push_back(r);
  }
  for (uint32_t r : regs)
    std::fprintf(stderr, "        %s = %s\n", k.reg_names[r].c_str(), lanes_value(k, w, r, lanes).c_str());
  const Type t = k.code[pc].type;
  const uint32_t es = type_bytes(t) > 0 ? uint32_t(type_bytes(t)) : 0;
  for (const Access& a : g_pending.accesses) {
    const std::string who = g_trace_lane < 0 ? "lane " + std::to_string(a.lane) + ": " : "";
    const uint32_t shown = std::min<uint32_t>(a.size, 16);
    auto values = [&](const uint8_t* p) {
      if (!es || shown % es || shown == es) return value(p, shown, shown == es ? t : Type::none);
      std::string s = "{";
      for (uint32_t i = 0; i < shown; i += es) s += (i ? ", " : "") + value(p + i, es, t);
      return s + "}";
    };
    std::string s = "        " + who;
    if (a.kind & san::kWrite) {
      s += (a.kind & san::kRead ? "atomic " : "store ") + place(a.space, a.a) + ": " + values(a.before) + " -> " + values(a.p);
    } else {
      s += "load " + place(a.space, a.a) + ": " + values(a.before);
    }
    std::fprintf(stderr, "%s\n", s.c_str());
  }
}

void end_trace(const Launch& l) {
  if (!g_trace_launch || g_trace_launch != &l) return;
  if (g_pending.live) {  // the launch stopped at this instruction (a fault): no results to show
    g_pending.live = false;
    const Kernel& k = *l.kernel;
    std::fprintf(stderr, "  %llu  %s  %s   (stopped here: the launch failed)\n", (unsigned long long)g_traced,
                 file_line(k, g_pending.pc).c_str(), text_of(k, g_pending.pc).c_str());
  }
  g_trace_launch = nullptr;
  g_trace_now = false;
  g_trace_done = true;
  std::fprintf(stderr, "gpu100 emulator: end of the trace: %llu instructions%s\n",
               (unsigned long long)g_traced, g_limit_said ? " (printed up to the limit)" : "");
  if (g_divergence.empty()) {
    std::fprintf(stderr, "gpu100 emulator: warp %u never diverged\n", g_trace_warp);
  } else {
    std::fprintf(stderr, "gpu100 emulator: divergence of warp %u (lane 0 first; %zu events):\n",
                 g_trace_warp, g_divergence.size());
    for (const std::string& s : g_divergence) std::fprintf(stderr, "%s\n", s.c_str());
  }
}

void flush_watch() {
  for (const WatchEvent& e : g_watch_pending) {
    const Range& r = g_opt.watch[e.range];
    const std::string before = value(e.before, e.bytes, e.type);
    std::string s = "gpu100 emulator: watch " + place(Space::global, r.a) + ": " + e.who + ": ";
    if (e.write) s += before + " -> " + value(reinterpret_cast<const uint8_t*>(r.a), e.bytes, e.type);
    else s += "reads " + before;
    std::fprintf(stderr, "%s\n", s.c_str());
  }
  g_watch_pending.clear();
}

void mark_seen() {
  for (Range& r : g_opt.watch)
    if (!r.seen && memory().find(r.a, r.bytes)) r.seen = true;
}

void write_map(const Launch& l) {
  g_map_launch = nullptr;
  g_map_done = true;
  FILE* f = std::fopen(g_opt.map_file.c_str(), "w");
  if (!f) refuse("--access-map", "cannot write " + g_opt.map_file);
  const Kernel& k = *l.kernel;
  const Dim3 b{g_map_block % l.grid.x, (g_map_block / l.grid.x) % l.grid.y, g_map_block / (l.grid.x * l.grid.y)};
  std::fprintf(f, "# gpu100 emulator access map (scripts/access_map.py draws it)\n");
  std::fprintf(f, "kernel %s %s\n", short_name(k.name).c_str(), k.name.c_str());
  std::fprintf(f, "launch %llu block %u %u %u blockdim %u %u %u\n", (unsigned long long)g_counted["map"],
               b.x, b.y, b.z, l.block.x, l.block.y, l.block.z);
  // Regions: each allocation touched, and shared memory.
  std::map<uint64_t, int> region_of;  // allocation base -> id; shared is id 0
  std::vector<std::string> regions;
  regions.push_back("region 0 shared 0 " + std::to_string(l.smem_bytes) + " shared memory");
  for (const MapRecord& r : g_map) {
    if (r.space != Space::global) continue;
    const Allocation* al = memory().find(r.a, 1);
    if (!al || region_of.count(al->base)) continue;
    region_of[al->base] = int(regions.size());
    regions.push_back("region " + std::to_string(regions.size()) + " global " + hex(al->base) + " " +
                      std::to_string(al->bytes) + " " + al->what);
  }
  for (const std::string& s : regions) std::fprintf(f, "%s\n", s.c_str());
  std::map<uint32_t, bool> pcs;
  for (const MapRecord& r : g_map) pcs[r.pc] = true;
  for (const auto& [pc, _] : pcs)
    std::fprintf(f, "inst %u %s %s\n", pc, file_line(k, pc, false).c_str(), text_of(k, pc).c_str());
  // access PC R|W|A REGION OFFSET BYTES WARP LANE
  for (const MapRecord& r : g_map) {
    int region = -1;
    uint64_t off = r.a;
    if (r.space == Space::shared) region = 0;
    else if (r.space == Space::global) {
      const Allocation* al = memory().find(r.a, 1);
      if (!al) continue;
      region = region_of[al->base];
      off = r.a - al->base;
    } else {
      continue;  // local and parameter accesses belong to one thread: no picture to draw
    }
    const char kind = (r.kind & san::kWrite) ? ((r.kind & san::kRead) ? 'A' : 'W') : 'R';
    std::fprintf(f, "access %u %c %d %llu %u %u %d\n", r.pc, kind, region, (unsigned long long)off, r.size,
                 r.warp, r.lane);
  }
  std::fclose(f);
  std::fprintf(stderr, "gpu100 emulator: access map of kernel %s, block %s (%zu accesses) written to %s\n",
               short_name(k.name).c_str(), dim(b).c_str(), g_map.size(), g_opt.map_file.c_str());
  g_map.clear();
}

// At exit: an option that never applied is an error in the command. Registered with atexit at
// the first launch or copy, after the runtime's static objects exist, so it runs before they go.
void at_exit() {
  {
    flush_watch();
    mark_seen();
    std::string why;
    if (g_opt.trace && !g_trace_done)
      why = "--trace: kernel " + g_opt.trace_at.kernel + " was launched " + std::to_string(g_counted["trace"]) +
            " time(s), never a launch " + std::to_string(g_opt.trace_at.launch);
    else if (g_opt.map && !g_map_done)
      why = "--access-map: kernel " + g_opt.map_at.kernel + " was launched " + std::to_string(g_counted["map"]) +
            " time(s), never a launch " + std::to_string(g_opt.map_at.launch);
    for (const Range& r : g_opt.watch)
      if (!r.seen && why.empty())
        why = "--watch: " + hex(r.a) + ":" + std::to_string(r.bytes) +
              " was never inside an allocation of the program (" + memory().describe(r.a) + ")";
    if (why.empty()) return;
    std::fflush(stdout);
    std::fprintf(stderr, "gpu100 emulator: %s\n", why.c_str());
    std::fflush(stderr);
    _exit(2);
  }
}
void register_at_exit() {
  static bool done = false;
  if (!done) std::atexit(at_exit);
  done = true;
}

}  // namespace

void configure() {
  static bool done = false;
  if (done) return;
  done = true;
  configure_now();
}

void check_kernels(const std::vector<std::string>& mangled) {
  if (!g_enabled || g_kernels_checked) return;
  g_kernels_checked = true;
  auto check = [&](const char* option, const std::string& wanted) {
    for (const std::string& m : mangled)
      if (names(wanted, m)) return;
    std::set<std::string> shorts;
    for (const std::string& m : mangled) shorts.insert(short_name(m));
    std::string list;
    for (const std::string& n : shorts) list += (list.empty() ? " " : ", ") + n;
    refuse(option, "the program has no kernel '" + wanted + "'; its kernels:" + list);
  };
  if (g_opt.trace) check("--trace", g_opt.trace_at.kernel);
  if (g_opt.map) check("--access-map", g_opt.map_at.kernel);
}

void launch_begin(Launch& l) {
  san::g_hook = san::g_mem;
  san::g_access = san::access;
  if (!g_enabled) return;
  register_at_exit();
  ++g_launches;
  flush_watch();
  mark_seen();
  const Kernel& k = *l.kernel;
  auto pick = [&](const char* option, const char* key, const Target& t, bool lanes, uint32_t* block) {
    if (!names(t.kernel, k.name)) return false;
    if (++g_counted[key] != t.launch) return false;
    if (t.block.x >= l.grid.x || t.block.y >= l.grid.y || t.block.z >= l.grid.z)
      refuse(option, "block " + dim(t.block) + " is outside the grid " + dim(l.grid) + " of launch " +
                         std::to_string(t.launch) + " of " + short_name(k.name));
    if (lanes && t.warp < 0 && (t.thread.x >= l.block.x || t.thread.y >= l.block.y || t.thread.z >= l.block.z))
      refuse(option, "thread " + dim(t.thread) + " is outside the block " + dim(l.block) + " of launch " +
                         std::to_string(t.launch) + " of " + short_name(k.name));
    if (lanes && t.warp >= 0 && uint32_t(t.warp) >= l.warps_per_block)
      refuse(option, "warp " + std::to_string(t.warp) + " is outside the block (" +
                         std::to_string(l.warps_per_block) + " warp(s)) of launch " + std::to_string(t.launch) +
                         " of " + short_name(k.name));
    *block = t.block.x + l.grid.x * (t.block.y + l.grid.y * t.block.z);
    return true;
  };
  if (g_opt.trace && !g_trace_done && pick("--trace", "trace", g_opt.trace_at, true, &g_trace_block)) {
    const Target& t = g_opt.trace_at;
    g_trace_launch = &l;
    g_trace_now = true;
    if (t.warp >= 0) {
      g_trace_warp = uint32_t(t.warp);
      g_trace_lane = -1;
    } else {
      const uint32_t linear = t.thread.x + l.block.x * (t.thread.y + l.block.y * t.thread.z);
      g_trace_warp = linear / 32;
      g_trace_lane = int(linear % 32);
    }
    g_traced = 0;
    g_pending = Pending{};
    for (uint32_t& gr : g_group) gr = 0;
    g_prev_pc = ~0u;
    std::fprintf(stderr, "gpu100 emulator: trace of %s, launch %llu of it (launch %llu of the program), block %s %s\n",
                 short_name(k.name).c_str(), (unsigned long long)t.launch, (unsigned long long)g_launches,
                 dim(t.block).c_str(),
                 (t.warp >= 0 ? "warp " + std::to_string(t.warp) + " (threads " + thread_of(l, g_trace_warp, 0) + " to " +
                                   thread_of(l, g_trace_warp, int(std::min<uint32_t>(32, l.threads_per_block - 32 * g_trace_warp)) - 1) + ")"
                              : "thread " + dim(t.thread) + " (warp " + std::to_string(g_trace_warp) + ", lane " +
                                    std::to_string(g_trace_lane) + ")").c_str());
  }
  if (g_opt.map && !g_map_done && pick("--access-map", "map", g_opt.map_at, false, &g_map_block)) g_map_launch = &l;
  if (g_trace_launch == &l || g_map_launch == &l || !g_opt.watch.empty()) {
    san::g_hook = true;
    san::g_access = san::access_both;
  }
}

void launch_end(Launch& l) {
  if (!g_enabled) return;
  flush_watch();
  end_trace(l);
  if (g_map_launch == &l) write_map(l);
  san::g_hook = san::g_mem;
  san::g_access = san::access;
}

bool traced(const Block& b, const Warp& w) {
  return b.launch == g_trace_launch && b.linear == g_trace_block && w.index == g_trace_warp;
}

void step(Exec& x, uint32_t pc, uint32_t mask, uint32_t active) {
  print_pending(x);
  const Kernel& k = *x.k;
  const Warp& w = *x.w;
  // Divergence: the previous instruction split its group, or this one runs lanes that were apart.
  if (g_prev_pc != ~0u) {
    const Inst& prev = k.code[g_prev_pc];
    if (prev.ctl == Ctl::bra && g_prev_active && g_prev_active != g_prev_mask) {
      const uint32_t go = g_prev_mask & ~g_prev_active;
      const std::string s = "  split at " + file_line(k, g_prev_pc) + " '" + text_of(k, g_prev_pc) + "':\n" +
                            "    " + lanes_picture(g_prev_active, 'T') + " jump to " + file_line(k, prev.target) + "\n" +
                            "    " + lanes_picture(go, 'F') + " fall through to " + file_line(k, g_prev_pc + 1);
      g_divergence.push_back(s);
      if (g_traced < g_opt.trace_limit) std::fprintf(stderr, "%s\n", s.c_str());
      const uint32_t a = g_next_group++, b = g_next_group++;
      for (int i = 0; i < 32; ++i) {
        if ((g_prev_active >> i) & 1) g_group[i] = a;
        else if ((go >> i) & 1) g_group[i] = b;
      }
    }
    if (prev.ctl == Ctl::exit && g_prev_active && (w.valid & ~w.exited)) {
      const std::string s = "  exit at " + file_line(k, g_prev_pc) + ": " + lanes_picture(g_prev_active, 'x') +
                            " leave, " + std::to_string(__builtin_popcount(w.valid & ~w.exited)) + " lanes go on";
      g_divergence.push_back(s);
      if (g_traced < g_opt.trace_limit) std::fprintf(stderr, "%s\n", s.c_str());
    }
  }
  // Lanes of different groups running one instruction together: they met again.
  uint32_t groups[32];
  int ngroups = 0;
  for (uint32_t m = mask; m; m &= m - 1) {
    const uint32_t g = g_group[__builtin_ctz(m)];
    bool known = false;
    for (int i = 0; i < ngroups; ++i) known |= groups[i] == g;
    if (!known) groups[ngroups++] = g;
  }
  if (ngroups > 1) {
    std::string pic(32, '.');
    for (uint32_t m = mask; m; m &= m - 1) {
      const int l = __builtin_ctz(m);
      for (int i = 0; i < ngroups; ++i)
        if (groups[i] == g_group[l]) pic[size_t(l)] = char('a' + i);
    }
    const std::string s = "  meet at " + file_line(k, pc) + " '" + text_of(k, pc) + "':\n    " + pic + " run together again";
    g_divergence.push_back(s);
    if (g_traced < g_opt.trace_limit) std::fprintf(stderr, "%s\n", s.c_str());
    const uint32_t a = g_next_group++;
    for (uint32_t m = mask; m; m &= m - 1) g_group[__builtin_ctz(m)] = a;
  }
  g_prev_pc = pc;
  g_prev_mask = mask;
  g_prev_active = active;
  // The instruction itself, printed once it has run.
  if (!(mask & lane_mask())) return;
  ++g_traced;
  if (g_traced > g_opt.trace_limit) {
    if (!g_limit_said) {
      std::fprintf(stderr, "  ... (--trace-limit %llu reached; the divergence summary follows at the end)\n",
                   (unsigned long long)g_opt.trace_limit);
      g_limit_said = true;
    }
    return;
  }
  g_pending.live = true;
  g_pending.pc = pc;
  g_pending.mask = mask;
  g_pending.active = active;
  g_pending.accesses.clear();
  const uint32_t nl = g_trace_lane < 0 ? 32 : 1;
  g_pending.regs.resize(size_t(k.nregs) * nl);
  for (uint32_t r = 0; r < k.nregs; ++r) {
    if (nl == 1) g_pending.regs[r] = w.r[r * 32 + uint32_t(g_trace_lane)];
    else std::memcpy(&g_pending.regs[size_t(r) * 32], &w.r[r * 32], 32 * sizeof(uint64_t));
  }
}

void pause(Exec& x) { print_pending(x); }

void access(Exec& x, uint32_t pc, Space space, uint64_t a, uint32_t size, int lane, uint32_t kind) {
  if (!g_watch_pending.empty()) flush_watch();
  space = resolve(space, &a);
  // The trace: an access of the traced thread (or warp) at the instruction being traced.
  if (g_pending.live && x.l == g_trace_launch && x.b->linear == g_trace_block && x.w->index == g_trace_warp &&
      pc == g_pending.pc && (g_trace_lane < 0 || lane == g_trace_lane)) {
    Access acc{lane, space, a, size, kind, {}, host_of(x, space, a, lane)};
    if (acc.p) std::memcpy(acc.before, acc.p, std::min<uint32_t>(size, 16));
    g_pending.accesses.push_back(acc);
  }
  if (g_map_launch == x.l && x.b->linear == g_map_block && g_map.size() < (64u << 20))
    g_map.push_back(MapRecord{pc, x.w->index, lane, space, a, size, kind});
  if (space != Space::global || g_opt.watch.empty()) return;
  const bool write = (kind & san::kWrite) != 0;
  if (!write && !g_opt.watch_reads) return;
  for (size_t i = 0; i < g_opt.watch.size(); ++i) {
    Range& r = g_opt.watch[i];
    if (a >= r.a + r.bytes || a + size <= r.a) continue;
    r.seen = true;
    WatchEvent e;
    e.range = i;
    e.write = write;
    e.bytes = uint32_t(std::min<uint64_t>(r.bytes, 16));
    const Inst& in = x.k->code[pc];
    e.type = e.bytes == uint32_t(std::max(1, type_bytes(in.type))) ? in.type : Type::none;
    std::memcpy(e.before, reinterpret_cast<const uint8_t*>(r.a), e.bytes);
    const char* what = (kind & san::kRead) && write ? "atomic" : write ? "store" : "load";
    e.who = std::string(what) + " by kernel " + short_name(x.k->name) + " (launch " + std::to_string(g_launches) +
            "), block " + dim(x.b->id) + " thread " + thread_of(*x.l, x.w->index, lane) + ", '" +
            text_of(*x.k, pc) + "' at " + file_line(*x.k, pc);
    g_watch_pending.push_back(e);
  }
}

void host_write(const void* dst, uint64_t bytes, const char* what, const void*) {
  if (!g_enabled) return;
  register_at_exit();
  if (g_opt.watch.empty()) return;
  flush_watch();
  const uint64_t a = reinterpret_cast<uint64_t>(dst);
  for (size_t i = 0; i < g_opt.watch.size(); ++i) {
    Range& r = g_opt.watch[i];
    if (a >= r.a + r.bytes || a + bytes <= r.a) continue;
    if (memory().find(r.a, r.bytes)) r.seen = true;
    WatchEvent e;
    e.range = i;
    e.write = true;
    e.bytes = uint32_t(std::min<uint64_t>(r.bytes, 16));
    e.type = Type::none;
    std::memcpy(e.before, reinterpret_cast<const uint8_t*>(r.a), e.bytes);
    e.who = std::string(what) + " by the host (before launch " + std::to_string(g_launches + 1) + ")";
    g_watch_pending.push_back(e);
  }
}

void host_write_done() { flush_watch(); }

// --- downloads -------------------------------------------------------------------------------------
namespace {
struct Download { uint64_t host, device, bytes; };
std::vector<Download>& downloads() {
  static std::vector<Download> d;
  return d;
}
}  // namespace

void note_download(const void* host, uint64_t device, uint64_t bytes) {
  auto& d = downloads();
  const uint64_t h = reinterpret_cast<uint64_t>(host);
  // The newest copy into a host range replaces older ones that it covers.
  d.erase(std::remove_if(d.begin(), d.end(), [&](const Download& o) { return o.host >= h && o.host + o.bytes <= h + bytes; }),
          d.end());
  d.push_back(Download{h, device, bytes});
  if (d.size() > 256) d.erase(d.begin());
}

uint64_t device_address_of(const void* host) {
  const uint64_t h = reinterpret_cast<uint64_t>(host);
  const auto& d = downloads();
  for (auto it = d.rbegin(); it != d.rend(); ++it)
    if (h >= it->host && h < it->host + it->bytes) return it->device + (h - it->host);
  return 0;
}

// The options are read when the library loads, so a malformed one stops the program at once.
namespace {
struct Configure {
  Configure() { configure(); }
} g_configure;
}  // namespace

}  // namespace debug

}  // namespace emu

// For a program's check (common/): the device address a byte of a host buffer was copied from
// by the most recent device-to-host copy into it, or 0.
extern "C" __attribute__((visibility("default"))) unsigned long long gpu100_emu_device_address(const void* host) {
  return emu::debug::device_address_of(host);
}
