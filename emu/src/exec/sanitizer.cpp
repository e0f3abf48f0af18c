// racecheck, initcheck, synccheck and leaks (see sanitizer.h and emu/README.md).
//
// Races: happens-before with vector clocks, as ThreadSanitizer and FastTrack do it, over the
// threads of a launch. Every thread has a clock and a vector clock of what it knows about other
// threads; a memory access is recorded in the shadow of its 4-byte granule with the thread and its
// clock, and a later conflicting access is a race unless the thread knows (through its vector
// clock) that the earlier one happened before. Knowledge flows through
//   - barriers: the threads arriving at bar.sync / bar.red / bar.arrive release what they know,
//     the threads that wait acquire all of it;
//   - bar.warp.sync: its member lanes exchange what they know;
//   - release/acquire through memory: a strong write after a fence (or st/atom/red.release)
//     publishes the writer's knowledge in the location's sync clock; a strong read followed by a
//     fence or a barrier (or ld/atom.acquire) takes it.
// Shuffles, votes, match, redux, ldmatrix and mma move registers only: they do not order memory.
//
// A barrier the whole block waits at orders everything before it for everyone, which is the
// common case; rather than join a thousand vector clocks, the block's "floor" rises above every
// clock its threads have used: an access of the block with a clock below the floor happened before
// every later access in the block. Clocks only grow (across blocks of a slot and across launches),
// so shadow state never needs clearing: a record older than the block (shared memory) or than the
// launch (global memory) is below the floor or the launch base, i.e. ordered.
#include "exec/sanitizer.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>

#include "exec/machine.h"
#include "exec/ops.h"

namespace emu {

std::string source_of(const Kernel& k, uint32_t pc);  // scheduler.cpp

namespace san {

namespace {

uint32_t parse_checks() {
  const char* v = std::getenv("GPU100_EMU_CHECK");
  const uint32_t all = kRace | kInit | kSync | kLeaks;
  if (!v || !*v) return all;
  uint32_t c = 0;
  std::string s = v;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find_first_of(", ", i);
    if (j == std::string::npos) j = s.size();
    const std::string t = s.substr(i, j - i);
    i = j + 1;
    if (t.empty()) continue;
    if (t == "all") c |= all;
    else if (t == "none") c = 0;
    else if (t == "race") c |= kRace;
    else if (t == "init") c |= kInit;
    else if (t == "sync") c |= kSync;
    else if (t == "leaks") c |= kLeaks;
    else if (t == "leaks-fail") c |= kLeaks | kLeaksFail;
    else {
      std::fprintf(stderr,
                   "gpu100 emulator: GPU100_EMU_CHECK: unknown check '%s' (all, none, race, init, "
                   "sync, leaks, leaks-fail)\n",
                   t.c_str());
      std::exit(2);
    }
  }
  return c;
}

}  // namespace

uint32_t g_checks = parse_checks();
bool g_mem = (g_checks & (kRace | kInit)) != 0;

uint32_t decode_semantics(const std::string& op, const std::vector<std::string>& mods) {
  auto has = [&](const char* m) { return std::find(mods.begin(), mods.end(), m) != mods.end(); };
  uint32_t f = 0;
  if (op == "atom" || op == "red") f |= kStrong | kAtomic;
  if (has("volatile") || has("relaxed") || has("acquire") || has("release") || has("acq_rel") ||
      has("mmio"))
    f |= kStrong;
  if (has("acquire") || has("acq_rel")) f |= kAcquire;
  if (has("release") || has("acq_rel")) f |= kRelease;
  if (has("cta")) f |= kCta;
  return f;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Vector clocks: sorted (key, clock) entries, shared and immutable. A key names a thread of a
// block, (block << 11) | thread, or a block's floor, (block << 11) | kFloor: every access of that
// block with a clock below the entry's.
constexpr uint32_t kFloor = 0x7FF;
struct Entry {
  uint64_t key;
  uint32_t clock;
};
struct VC {
  std::vector<Entry> e;
};
using VCRef = std::shared_ptr<const VC>;

inline uint64_t vkey(uint64_t block, uint32_t t) { return (block << 11) | t; }

VCRef join(const VCRef& a, const VCRef& b) {
  if (!b || a == b) return a;
  if (!a) return b;
  const auto& x = a->e;
  const auto& y = b->e;
  std::vector<Entry> out;
  out.reserve(x.size() + y.size());
  bool a_has_all = true, b_has_all = true;
  size_t i = 0, j = 0;
  while (i < x.size() || j < y.size()) {
    if (j == y.size() || (i < x.size() && x[i].key < y[j].key)) {
      out.push_back(x[i++]);
      b_has_all = false;
    } else if (i == x.size() || y[j].key < x[i].key) {
      out.push_back(y[j++]);
      a_has_all = false;
    } else {
      if (x[i].clock > y[j].clock) b_has_all = false;
      if (y[j].clock > x[i].clock) a_has_all = false;
      out.push_back({x[i].key, std::max(x[i].clock, y[j].clock)});
      ++i, ++j;
    }
  }
  if (a_has_all) return a;
  if (b_has_all) return b;
  auto v = std::make_shared<VC>();
  v->e = std::move(out);
  return v;
}

VCRef make_vc(std::vector<Entry> e) {
  std::sort(e.begin(), e.end(), [](const Entry& p, const Entry& q) { return p.key < q.key; });
  auto v = std::make_shared<VC>();
  v->e = std::move(e);
  return v;
}

// Does the clock know that thread t of `block` made its access at `clock`?
bool covers(const VC* v, uint64_t block, uint32_t t, uint32_t clock) {
  if (!v) return false;
  const auto& e = v->e;
  auto it = std::lower_bound(e.begin(), e.end(), vkey(block, 0),
                             [](const Entry& p, uint64_t k) { return p.key < k; });
  for (; it != e.end() && (it->key >> 11) == block; ++it) {
    const uint32_t who = uint32_t(it->key & kFloor);
    if (who == t && clock <= it->clock) return true;
    if (who == kFloor && clock < it->clock) return true;
  }
  return false;
}

// The clock without the entries of `block` (a barrier of the whole block subsumes them).
VCRef strip(const VCRef& v, uint64_t block) {
  if (!v) return v;
  bool any = false;
  for (const Entry& e : v->e) any |= (e.key >> 11) == block;
  if (!any) return v;
  auto out = std::make_shared<VC>();
  for (const Entry& e : v->e)
    if ((e.key >> 11) != block) out->e.push_back(e);
  if (out->e.empty()) return nullptr;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Shadow memory: per 4-byte granule the last write and up to two reads since it. A granule
// accessed below its size (bytes, halves) is split into four byte cells, so that threads writing
// neighbouring bytes do not conflict.
struct Rec {
  uint32_t key = 0;    // the thread: block * threads_per_block + thread
  uint32_t clock = 0;  // its clock at the access; 0: none
  uint32_t pc = 0;     // instruction (low 24 bits) and flags
};
constexpr uint32_t kPcMask = 0x00FFFFFFu;
constexpr uint32_t fStrong = 1u << 24, fAtomic = 1u << 25, fCta = 1u << 26;
constexpr uint32_t fRelease = 1u << 27;  // a write right after a fence, or .release
constexpr uint32_t fSplit = 1u << 31;  // granule cell: its bytes are in the byte cells
struct Cell {
  Rec w, r[2];
};

struct Region {
  Cell* cells = nullptr;
  Cell* bytes = nullptr;
  uint64_t granules = 0;
  void ensure(uint64_t nbytes) {
    const uint64_t g = (nbytes + 3) / 4;
    if (g <= granules) return;
    release();
    cells = static_cast<Cell*>(std::calloc(g, sizeof(Cell)));
    granules = g;
  }
  Cell* byte_cells() {
    if (!bytes) bytes = static_cast<Cell*>(std::calloc(granules * 4, sizeof(Cell)));
    return bytes;
  }
  void release() {
    std::free(cells);
    std::free(bytes);
    cells = bytes = nullptr;
    granules = 0;
  }
  ~Region() { release(); }
};

// Global memory: per allocation, the race shadow and, for cudaMalloc memory, one bit per byte
// that says it was written (by a copy, a memset or a kernel) since the allocation.
struct GShadow {
  Region race;
  uint64_t* init = nullptr;  // null: not tracked (host-mapped, __device__, workspace: initialized)
  uint64_t bytes = 0;
  ~GShadow() { std::free(init); }
};

bool bits_all(const uint64_t* b, uint64_t from, uint64_t n) {
  for (uint64_t i = from; i < from + n;) {
    if ((i & 63) == 0 && i + 64 <= from + n) {
      if (b[i >> 6] != ~0ull) return false;
      i += 64;
    } else {
      if (!((b[i >> 6] >> (i & 63)) & 1)) return false;
      ++i;
    }
  }
  return true;
}
void bits_set(uint64_t* b, uint64_t from, uint64_t n) {
  for (uint64_t i = from; i < from + n;) {
    if ((i & 63) == 0 && i + 64 <= from + n) {
      b[i >> 6] = ~0ull;
      i += 64;
    } else {
      b[i >> 6] |= 1ull << (i & 63);
      ++i;
    }
  }
}

// ---------------------------------------------------------------------------------------------
struct TState {
  uint32_t clock = 0;
  VCRef vc;       // what the thread knows of others
  VCRef fence;    // what it knew at its last fence: a later strong write publishes it
  VCRef pending;  // taken by strong reads, known once a fence or barrier follows
  bool fenced = false;  // a fence since the thread's last strong write
};

struct BarState {
  VCRef join;
  std::vector<Entry> arrivals;
  std::vector<uint32_t> waiters;
  uint32_t nsync = 0, narrive = 0;
  int64_t pc = -1;  // the instruction of the first arrival, for the whole-block check
  uint32_t first_thread = 0;
  void reset() {
    join.reset();
    arrivals.clear();
    waiters.clear();
    nsync = narrive = 0;
    pc = -1;
  }
};

}  // namespace

struct BlockState {
  uint64_t block = 0;     // linear block index
  uint32_t tpb = 0;       // threads per block
  uint32_t key_base = 0;  // key of thread 0
  uint32_t start = 0;     // the clock the block started at: shared memory written before is not
  uint32_t floor = 0;     // accesses of the block with a lower clock are ordered before all later
  std::vector<TState> t;
  Region shared;
  std::unordered_map<uint64_t, VCRef> shared_sync;
  BarState bars[16];
  uint32_t max_clock() const {
    uint32_t m = floor;
    for (const TState& s : t) m = std::max(m, s.clock);
    return m;
  }
};

namespace {

// ---------------------------------------------------------------------------------------------
// Findings of a launch: one per pair of instructions (or per instruction, for uninitialized
// reads), with the first occurrence's message and how often it happened.
enum FKind { fRaceShared, fRaceGlobal, fInitShared, fInitGlobal };
struct Finding {
  std::string text;
  uint64_t count = 0;
  uint64_t order = 0;
};

struct LaunchState {
  Launch* l = nullptr;
  uint32_t base = 1;  // clocks of this launch start here
  std::unordered_map<uint64_t, VCRef> sync;  // global locations written by release patterns
  std::map<std::tuple<int, uint32_t, uint32_t>, Finding> findings;
  uint64_t next_order = 0;
};

struct Global {
  uint32_t next_clock = 1;
  std::vector<std::unique_ptr<BlockState>> pool;
  size_t pool_used = 0;
  LaunchState launch;
  // Device allocations alive, for the leak report: base -> (bytes, serial number).
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> live;
  uint64_t allocations = 0;
};
// Never destroyed: the leak report runs while the process's static objects are torn down.
Global& G() {
  static Global* g = new Global;
  return *g;
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string thread_name(const Launch& l, uint64_t block, uint32_t t) {
  const Dim3& g = l.grid;
  const Dim3& b = l.block;
  char buf[128];
  std::snprintf(buf, sizeof buf, "block (%llu,%llu,%llu) thread (%u,%u,%u)",
                (unsigned long long)(block % g.x), (unsigned long long)((block / g.x) % g.y),
                (unsigned long long)(block / (uint64_t(g.x) * g.y)), t % b.x, (t / b.x) % b.y,
                t / (b.x * b.y));
  return buf;
}

std::string place(const Allocation* al, uint64_t a) {
  if (!al) return "";
  char buf[256];
  std::snprintf(buf, sizeof buf, " (%llu bytes into %s of %llu bytes at 0x%llx)",
                (unsigned long long)(a - al->base), al->what.c_str(),
                (unsigned long long)al->bytes, (unsigned long long)al->base);
  return buf;
}

// Records a finding; the message is built only the first time.
template <class Text>
void note(int kind, uint32_t pc_a, uint32_t pc_b, Text text) {
  LaunchState& L = G().launch;
  Finding& f = L.findings[{kind, pc_a, pc_b}];
  if (f.count++ == 0) {
    f.text = text();
    f.order = L.next_order++;
  }
}

const char* access_name(uint32_t kind) {
  return (kind & kAtomic) ? "atomic" : (kind & kWrite) ? "write" : "read";
}

// ---------------------------------------------------------------------------------------------
// One lane's access, granule by granule.
struct Walk {
  Exec* x;
  BlockState* bs;
  TState* ts;
  uint32_t t, key, kind, pc, recpc;  // recpc: pc with the record flags
  uint32_t lo;                       // records below this clock are ordered (or absent)
  bool shared, race, init_shared;
  uint32_t uninit = 0;               // shared bytes read before any thread of the block wrote them
  uint64_t addr;                     // for messages
  uint32_t size;
  const Allocation* al;
  uint32_t reported[4];
  int nreported = 0;
};

inline bool ordered(const Walk& w, const Rec& r) {
  if (r.clock < w.lo || r.key == w.key) return true;
  const BlockState& bs = *w.bs;
  const uint32_t d = r.key - bs.key_base;
  if (d < bs.tpb) return r.clock < bs.floor || covers(w.ts->vc.get(), bs.block, d, r.clock);
  return covers(w.ts->vc.get(), r.key / bs.tpb, r.key % bs.tpb, r.clock);
}

// Two strong accesses do not race (PTX: morally strong), unless one is .cta-scoped and they are
// in different blocks, or both are volatile/relaxed loads and stores (no atomic) by lanes of one
// warp and the store is no release (no fence right before it): that is warp-synchronous code,
// which independent thread scheduling does not order. (A flag one lane sets after a fence and
// another lane of the warp spins on is message passing, and is not reported.)
inline bool exempt(const Walk& w, const Rec& r, bool prev_is_write) {
  if (!(r.pc & fStrong) || !(w.kind & kStrong)) return false;
  const uint32_t d = r.key - w.bs->key_base;
  const bool same_block = d < w.bs->tpb;
  if (((r.pc & fCta) || (w.kind & kCta)) && !same_block) return false;
  if ((r.pc & fAtomic) || (w.kind & kAtomic)) return true;
  if (!same_block || d / 32 != w.t / 32) return true;
  return ((prev_is_write ? r.pc : w.recpc) & fRelease) != 0;
}

void race(Walk& w, const Rec& r, const char* prev_name) {
  const uint32_t prev_pc = r.pc & kPcMask;
  for (int i = 0; i < w.nreported; ++i)
    if (w.reported[i] == prev_pc) return;  // one count per access and earlier instruction
  if (w.nreported < 4) w.reported[w.nreported++] = prev_pc;
  note(w.shared ? fRaceShared : fRaceGlobal, prev_pc, w.pc, [&] {
    const Exec& x = *w.x;
    const Launch& l = *x.l;
    const BlockState& bs = *w.bs;
    std::string s = "kernel " + x.k->name + ", " + thread_name(l, bs.block, w.t) + ", " +
                    source_of(*x.k, w.pc) + ": race on " + (w.shared ? "shared" : "global") +
                    " memory at address " + hex(w.addr) + (w.shared ? "" : place(w.al, w.addr)) +
                    ": this " + access_name(w.kind) + " of " + std::to_string(w.size) +
                    " bytes and an earlier " + prev_name + " by " +
                    thread_name(l, r.key / bs.tpb, r.key % bs.tpb) + ", " +
                    source_of(*x.k, prev_pc) +
                    ", with no barrier, __syncwarp or release/acquire ordering them";
    return s;
  });
}

inline void cell_op(Walk& w, Cell& c, uint32_t nbytes) {
  const bool rd = w.kind & kRead, wr = w.kind & kWrite;
  if (w.init_shared && rd && c.w.clock < w.bs->start) w.uninit += nbytes;
  if (w.race) {
    if (c.w.clock >= w.lo && !ordered(w, c.w) && !exempt(w, c.w, true))
      race(w, c.w, (c.w.pc & fAtomic) ? "atomic" : "write");
    if (wr)
      for (const Rec& r : c.r)
        if (r.clock >= w.lo && !ordered(w, r) && !exempt(w, r, false))
          race(w, r, (r.pc & fAtomic) ? "atomic" : "read");
  }
  const Rec me{w.key, w.ts->clock, w.recpc};
  if (wr) {
    c.w = me;
    c.r[0].clock = c.r[1].clock = 0;
    return;
  }
  // A read replaces a read it follows (the same thread's, or one ordered before it): any write
  // ordered after this one is ordered after that one too. Two unordered readers are kept; a third
  // replaces the second (a write racing only with a forgotten reader goes unreported).
  for (Rec& r : c.r) {
    if (r.clock < w.lo || r.key == w.key || ordered(w, r)) {
      r = me;
      return;
    }
  }
  c.r[1] = me;
}

void walk(Walk& w, Region& reg, uint64_t off) {
  const uint64_t end = off + w.size;
  for (uint64_t g = off >> 2; g <= (end - 1) >> 2; ++g) {
    Cell& c = reg.cells[g];
    const uint64_t gs = std::max(off, g * 4), ge = std::min(end, g * 4 + 4);
    if (ge - gs == 4 && !(c.w.pc & fSplit)) {
      cell_op(w, c, 4);
      continue;
    }
    if (!reg.byte_cells()) continue;
    Cell* bytes = reg.byte_cells() + g * 4;
    if (!(c.w.pc & fSplit)) {
      for (int i = 0; i < 4; ++i) bytes[i] = c;
      c = Cell{};
      c.w.pc = fSplit;
    }
    for (uint64_t b = gs; b < ge; ++b) cell_op(w, bytes[b - g * 4], 1);
  }
}

VCRef snapshot(const BlockState& bs, uint32_t t, const TState& ts) {
  return join(ts.vc, make_vc({{vkey(bs.block, t), ts.clock}, {vkey(bs.block, kFloor), bs.floor}}));
}

// Release and acquire through a strong access of location `loc`.
void sync_through(BlockState& bs, uint32_t t, TState& ts, uint32_t kind,
                  std::unordered_map<uint64_t, VCRef>& sync, uint64_t loc) {
  if (kind & kWrite) {
    if (kind & kRelease) {
      VCRef& s = sync[loc];
      s = join(s, snapshot(bs, t, ts));
      ++ts.clock;
    } else if (ts.fence) {
      VCRef& s = sync[loc];
      s = join(s, ts.fence);
    }
  }
  if ((kind & kRead) && !sync.empty()) {
    auto it = sync.find(loc);
    if (it != sync.end() && it->second) {
      if (kind & kAcquire) ts.vc = join(ts.vc, it->second);
      else ts.pending = join(ts.pending, it->second);
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
void access(Exec& x, uint32_t pc, Space space, uint64_t a, uint32_t size, int lane, uint32_t kind) {
  if (space == Space::generic) {
    if (a - kSharedWindow < kWindowSize) { space = Space::shared; a -= kSharedWindow; }
    else if (a - kLocalWindow < kWindowSize) return;
    else space = Space::global;
  }
  if (space != Space::shared && space != Space::global && space != Space::konst) return;
  BlockState* bs = x.b->san;
  if (!bs || size == 0) return;
  const uint32_t t = x.w->index * 32 + uint32_t(lane);
  TState& ts = bs->t[t];
  Walk w;
  w.x = &x;
  w.bs = bs;
  w.ts = &ts;
  w.t = t;
  w.key = bs->key_base + t;
  w.kind = kind;
  w.pc = pc;
  w.recpc = (pc & kPcMask) | ((kind & kStrong) ? fStrong : 0) | ((kind & kAtomic) ? fAtomic : 0) |
            ((kind & kCta) ? fCta : 0);
  if ((kind & kStrong) && (kind & kWrite)) {
    if ((kind & kRelease) || ts.fenced) w.recpc |= fRelease;
    ts.fenced = false;
  }
  w.race = g_checks & kRace;
  w.addr = a;
  w.size = size;
  w.al = nullptr;
  if (space == Space::shared) {
    w.shared = true;
    w.init_shared = g_checks & kInit;
    w.lo = bs->floor;
    if (a + size > bs->shared.granules * 4 || !bs->shared.cells) return;
    walk(w, bs->shared, a);
    if (w.uninit) {
      note(fInitShared, pc, 0, [&] {
        return "kernel " + x.k->name + ", " + thread_name(*x.l, bs->block, t) + ", " +
               source_of(*x.k, pc) + ": uninitialized shared memory read of " +
               std::to_string(size) + " bytes at address " + hex(a) + ": " +
               std::to_string(w.uninit) + " of them written by no thread of the block before";
      });
    }
    if ((kind & kStrong) && w.race) sync_through(*bs, t, ts, kind, bs->shared_sync, a);
    return;
  }
  const Allocation* al = memory().find(a, size);
  if (!al) return;
  w.al = al;
  auto* g = static_cast<GShadow*>(al->shadow);
  if (!g) {
    g = new GShadow;
    g->bytes = al->bytes;
    al->shadow = g;
  }
  const uint64_t off = a - al->base;
  if ((g_checks & kInit) && g->init) {
    if ((kind & kRead) && !bits_all(g->init, off, size)) {
      note(fInitGlobal, pc, 0, [&] {
        uint32_t missing = 0;
        for (uint64_t i = off; i < off + size; ++i) missing += !((g->init[i >> 6] >> (i & 63)) & 1);
        return "kernel " + x.k->name + ", " + thread_name(*x.l, bs->block, t) + ", " +
               source_of(*x.k, pc) + ": uninitialized global memory read of " +
               std::to_string(size) + " bytes at address " + hex(a) + place(al, a) + ": " +
               std::to_string(missing) +
               " of them not written since the allocation (by a copy, a memset or a kernel)";
      });
    }
    if (kind & kWrite) bits_set(g->init, off, size);
  }
  if (!w.race) return;
  w.shared = false;
  w.init_shared = false;
  w.lo = G().launch.base;
  g->race.ensure(al->bytes);
  if (!g->race.cells) return;  // no memory for the shadow of an allocation this large
  walk(w, g->race, off);
  if (kind & kStrong) sync_through(*bs, t, ts, kind, G().launch.sync, a);
}

// ---------------------------------------------------------------------------------------------
void fence(Exec& x, uint32_t mask) {
  BlockState* bs = x.b->san;
  if (!bs || !(g_checks & kRace)) return;
  for (uint32_t m = mask; m; m &= m - 1) {
    const uint32_t t = x.w->index * 32 + uint32_t(__builtin_ctz(m));
    TState& ts = bs->t[t];
    if (ts.pending) {
      ts.vc = join(ts.vc, ts.pending);
      ts.pending.reset();
    }
    ts.fence = snapshot(*bs, t, ts);
    ts.fenced = true;
    ++ts.clock;
  }
}

void warp_sync(Exec& x, uint32_t mask) {
  BlockState* bs = x.b->san;
  if (!bs || !(g_checks & kRace)) return;
  VCRef j;
  std::vector<Entry> own;
  for (uint32_t m = mask; m; m &= m - 1) {
    const uint32_t t = x.w->index * 32 + uint32_t(__builtin_ctz(m));
    j = join(j, bs->t[t].vc);
    own.push_back({vkey(bs->block, t), bs->t[t].clock});
  }
  j = join(j, make_vc(std::move(own)));
  for (uint32_t m = mask; m; m &= m - 1) {
    TState& ts = bs->t[x.w->index * 32 + uint32_t(__builtin_ctz(m))];
    ts.vc = j;
    ++ts.clock;
  }
}

void bar_arrive(Exec& x, uint32_t id, uint32_t count, uint32_t mask, bool arrive_only) {
  BlockState* bs = x.b->san;
  if (!bs || id >= 16) return;
  BarState& B = bs->bars[id];
  const int lane0 = __builtin_ctz(mask);
  const uint32_t t0 = x.w->index * 32 + uint32_t(lane0);
  if (g_checks & kSync) {
    // __syncthreads is bar.sync 0 (.aligned) with no count: every thread of the block at the same
    // instruction. (barrier.sync without .aligned may be reached from different ones.)
    const bool aligned = x.k->code[x.pc].flags & kAligned;
    if (aligned && count == 0 && B.pc >= 0 && uint32_t(B.pc) != x.pc)
      x.fail("barrier " + std::to_string(id) + " of the whole block (no thread count, as " +
                 "__syncthreads) reached at different instructions: here and by " +
                 thread_name(*x.l, bs->block, B.first_thread) + " at " +
                 source_of(*x.k, uint32_t(B.pc)) + " (a __syncthreads in divergent code)",
             lane0);
    if (aligned && B.pc < 0) {
      B.pc = x.pc;
      B.first_thread = t0;
    }
  }
  if (!(g_checks & kRace)) return;
  for (uint32_t m = mask; m; m &= m - 1) {
    const uint32_t t = x.w->index * 32 + uint32_t(__builtin_ctz(m));
    TState& ts = bs->t[t];
    if (!arrive_only && ts.pending) {
      ts.vc = join(ts.vc, ts.pending);
      ts.pending.reset();
    }
    B.join = join(B.join, ts.vc);
    B.arrivals.push_back({vkey(bs->block, t), ts.clock});
    if (arrive_only) {
      ++B.narrive;
    } else {
      ++B.nsync;
      B.waiters.push_back(t);
    }
    ++ts.clock;
  }
}

void bar_release(Block& b, uint32_t id) {
  BlockState* bs = b.san;
  if (!bs || id >= 16) return;
  BarState& B = bs->bars[id];
  if (g_checks & kRace) {
    if (B.narrive == 0 && B.nsync == bs->tpb) {
      bs->floor = bs->max_clock() + 1;
      const VCRef cross = strip(B.join, bs->block);
      for (TState& ts : bs->t) {
        ts.clock = bs->floor;
        ts.vc = cross;
      }
    } else {
      const VCRef j = join(B.join, make_vc(std::move(B.arrivals)));
      for (uint32_t t : B.waiters) bs->t[t].vc = join(bs->t[t].vc, j);
    }
  }
  B.reset();
}

void collective_arrive(Exec& x, uint32_t mask) {
  const Inst& in = x.k->code[x.pc];
  if (in.member_op >= 0xFE || !(g_checks & kSync)) return;
  const Warp& w = *x.w;
  uint32_t given[32];
  for (uint32_t m = mask; m; m &= m - 1) {
    const int lane = __builtin_ctz(m);
    given[lane] = uint32_t(x.val(in.o[in.member_op], lane));
  }
  auto disagree = [&](int lane, uint32_t mine, int other, uint32_t theirs) {
    const std::string who = thread_name(*x.l, x.b->linear, w.index * 32 + uint32_t(other));
    char buf[96];
    std::snprintf(buf, sizeof buf, "this thread gives 0x%08x while ", mine);
    std::string s = std::string("the member masks of one collective disagree: ") + buf +
                    who.substr(who.find("thread"));
    std::snprintf(buf, sizeof buf, ", which one of the two masks names, gives 0x%08x", theirs);
    x.fail(s + buf, lane);
  };
  for (uint32_t m = mask; m; m &= m - 1) {
    const int lane = __builtin_ctz(m);
    const uint32_t mine = given[lane];
    // Arriving together: a lane of my mask that gives another mask.
    for (uint32_t o = mine & mask; o; o &= o - 1) {
      const int other = __builtin_ctz(o);
      if (given[other] != mine) disagree(lane, mine, other, given[other]);
    }
    // Waiting at this instruction already, in a collective that names me or that I name.
    for (uint32_t o = w.parked; o; o &= o - 1) {
      const int other = __builtin_ctz(o);
      if (w.park_bar[other] != -1 || w.park_pc[other] != x.pc || w.park_member[other] == mine)
        continue;
      if (((mine >> other) & 1) || ((w.park_member[other] >> lane) & 1))
        disagree(lane, mine, other, w.park_member[other]);
    }
  }
}

// ---------------------------------------------------------------------------------------------
void block_start(Block& b) {
  if (!(g_checks & (kRace | kInit | kSync))) return;
  Global& g = G();
  if (!b.san) {
    if (g.pool_used == g.pool.size()) g.pool.push_back(std::make_unique<BlockState>());
    b.san = g.pool[g.pool_used++].get();
    b.san->floor = 0;
    b.san->t.clear();
  }
  BlockState& s = *b.san;
  const uint32_t start = std::max(s.max_clock() + 1, g.launch.base);
  s.block = b.linear;
  s.tpb = b.nthreads;
  s.key_base = uint32_t(uint64_t(b.linear) * b.nthreads);
  s.start = s.floor = start;
  s.t.assign(b.nthreads, TState{});
  for (TState& ts : s.t) ts.clock = start;
  if (g_mem) s.shared.ensure(b.launch->smem_bytes);
  s.shared_sync.clear();
  for (BarState& bar : s.bars) bar.reset();
}

// ---------------------------------------------------------------------------------------------
namespace {

void print_findings() {
  LaunchState& L = G().launch;
  if (L.findings.empty()) return;
  std::vector<const Finding*> all;
  for (const auto& [k, f] : L.findings) all.push_back(&f);
  std::sort(all.begin(), all.end(), [](const Finding* a, const Finding* b) { return a->order < b->order; });
  const size_t shown = std::min<size_t>(all.size(), 20);
  for (size_t i = 0; i < shown; ++i)
    std::fprintf(stderr, "gpu100 emulator: %s (%llu time%s in this launch)\n", all[i]->text.c_str(),
                 (unsigned long long)all[i]->count, all[i]->count == 1 ? "" : "s");
  if (all.size() > shown)
    std::fprintf(stderr, "gpu100 emulator: ... and %zu more findings like these\n", all.size() - shown);
}

void end_launch() {
  Global& g = G();
  uint32_t top = g.next_clock;
  for (size_t i = 0; i < g.pool_used; ++i) top = std::max(top, g.pool[i]->max_clock() + 1);
  g.next_clock = top;
  g.pool_used = 0;
  g.launch.sync.clear();
  // Clocks are 32 bits: far before they wrap, forget every record (all of them are ordered
  // before the next launch anyway).
  if (g.next_clock > (1u << 31)) {
    g.pool.clear();
    for (const auto& [base, al] : memory().all())
      if (al.shadow) static_cast<GShadow*>(al.shadow)->race.release();
    g.next_clock = 1;
  }
}

}  // namespace

LaunchScope::LaunchScope(Launch& l) {
  Global& g = G();
  g.launch.l = &l;
  g.launch.base = g.next_clock;
  g.launch.findings.clear();
  g.launch.next_order = 0;
  g.pool_used = 0;
}

LaunchScope::~LaunchScope() {
  if (finished_) return;
  print_findings();
  G().launch.findings.clear();
  end_launch();
}

void LaunchScope::finish() {
  finished_ = true;
  LaunchState& L = G().launch;
  end_launch();
  if (L.findings.empty()) return;
  print_findings();
  uint64_t races = 0, uninit = 0;
  for (const auto& [k, f] : L.findings) {
    if (std::get<0>(k) == fRaceShared || std::get<0>(k) == fRaceGlobal) ++races;
    else ++uninit;
  }
  L.findings.clear();
  std::string what;
  if (races) what += std::to_string(races) + (races == 1 ? " race" : " races");
  if (uninit) {
    if (!what.empty()) what += " and ";
    what += std::to_string(uninit) + (uninit == 1 ? " uninitialized read" : " uninitialized reads");
  }
  throw Fault{719, "kernel " + L.l->kernel->name + ": the checks found " + what +
                       " (listed above); the launch fails (GPU100_EMU_CHECK selects "
                       "the checks)"};
}

// ---------------------------------------------------------------------------------------------
void on_device_alloc(uint64_t base, uint64_t bytes) {
  Global& g = G();
  g.live[base] = {bytes, ++g.allocations};
  if (!(g_checks & kInit)) return;
  const Allocation* al = memory().find(base, 1);
  if (!al) return;
  auto* s = new GShadow;
  s->bytes = bytes;
  s->init = static_cast<uint64_t*>(std::calloc((bytes + 63) / 64, 8));
  al->shadow = s;
}

void on_release(Allocation& a) {
  G().live.erase(a.base);
  delete static_cast<GShadow*>(a.shadow);
  a.shadow = nullptr;
}

void on_host_write(const void* dst, uint64_t bytes) {
  if (!(g_checks & kInit) || !bytes) return;
  const uint64_t d = reinterpret_cast<uint64_t>(dst);
  const Allocation* al = memory().find(d, bytes);
  if (!al || !al->shadow) return;
  auto* g = static_cast<GShadow*>(al->shadow);
  if (g->init) bits_set(g->init, d - al->base, bytes);
}

void on_copy(const void* dst, const void* src, uint64_t bytes) {
  if (!(g_checks & kInit) || !bytes) return;
  const uint64_t d = reinterpret_cast<uint64_t>(dst), s = reinterpret_cast<uint64_t>(src);
  const Allocation* da = memory().find(d, bytes);
  if (!da || !da->shadow || !static_cast<GShadow*>(da->shadow)->init) return;
  uint64_t* dbits = static_cast<GShadow*>(da->shadow)->init;
  const uint64_t doff = d - da->base;
  const Allocation* sa = memory().find(s, bytes);
  const uint64_t* sbits = sa && sa->shadow ? static_cast<GShadow*>(sa->shadow)->init : nullptr;
  // A device-to-device copy carries what was uninitialized along with it.
  if (!sbits || bits_all(sbits, s - sa->base, bytes)) {
    bits_set(dbits, doff, bytes);
    return;
  }
  const uint64_t soff = s - sa->base;
  for (uint64_t i = 0; i < bytes; ++i) {
    const uint64_t si = soff + i, di = doff + i;
    if ((sbits[si >> 6] >> (si & 63)) & 1) dbits[di >> 6] |= 1ull << (di & 63);
    else dbits[di >> 6] &= ~(1ull << (di & 63));
  }
}

namespace {
// Device allocations alive at exit: reported (GPU100_EMU_CHECK=leaks), a failure with leaks-fail.
struct LeakReport {
  ~LeakReport() {
    if (!(g_checks & kLeaks)) return;
    const Global& g = G();
    if (g.live.empty()) return;
    uint64_t total = 0;
    for (const auto& [base, info] : g.live) total += info.first;
    std::fprintf(stderr, "gpu100 emulator: leak: %zu device allocation%s (%llu bytes) not freed at exit:\n",
                 g.live.size(), g.live.size() == 1 ? "" : "s", (unsigned long long)total);
    // In the order the program allocated them.
    std::vector<std::pair<uint64_t, uint64_t>> order;  // (serial, base)
    for (const auto& [base, info] : g.live) order.push_back({info.second, base});
    std::sort(order.begin(), order.end());
    for (size_t i = 0; i < order.size(); ++i) {
      if (i == 10) {
        std::fprintf(stderr, "gpu100 emulator:   ... and %zu more\n", order.size() - 10);
        break;
      }
      std::fprintf(stderr, "gpu100 emulator:   %llu bytes at 0x%llx (device allocation number %llu)\n",
                   (unsigned long long)g.live.at(order[i].second).first,
                   (unsigned long long)order[i].second, (unsigned long long)order[i].first);
    }
    if (g_checks & kLeaksFail) {
      std::fflush(nullptr);
      std::_Exit(1);
    }
  }
} g_leak_report;
}  // namespace

}  // namespace san
}  // namespace emu
