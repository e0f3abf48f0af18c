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
// Two kinds of unordered conflicts are defined, and are not reported:
//   - a st storing the very bytes the conflicting write (the location's latest) stored, from any
//     thread: the outcome does not depend on their order. Lanes of one st instruction storing
//     different values to one address are reported as such (the CUDA Programming Guide: which
//     lane's write succeeds is unspecified). An access unordered with either write is still
//     checked: the earlier stays the write record, the equal store takes a read slot, marked;
//   - a plain load whose only conflicts are other threads' atomic writes, when a later atom.cas of
//     the same thread on the same location compares against the value it read: the CAS loops of
//     CUDA's own headers (atomicAdd on bf16 for sm_80) and of the Programming Guide seed their
//     compare value that way, and a stale value only makes the CAS fail. Such a read is held
//     until the launch ends and reported then if no CAS checked it.
// A read that acquired a release of the writer's block, but one that began before the write was
// ordered before it (writers fencing before the barrier after which another thread releases), is
// reported with that explanation: a release pattern orders only what precedes its fence.
//
// A barrier the whole block waits at orders everything before it for everyone, which is the
// common case; rather than join a thousand vector clocks, the block's "floor" rises above every
// clock its threads have used: an access of the block with a clock below the floor happened before
// every later access in the block. Clocks only grow (across blocks of a slot and across launches),
// so shadow state never needs clearing: a record older than the block (shared memory) or than the
// launch (global memory) is below the floor or the launch base, i.e. ordered.
#include "exec/sanitizer.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <immintrin.h>
#include <map>
#include <new>
#include <memory>
#include <tuple>
#include <type_traits>
#include <unordered_map>

#include <sys/mman.h>

#include "exec/cluster.h"
#include "exec/machine.h"
#include "exec/ops.h"
#include "runtime/streams.h"

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
uint32_t g_undefined = 0;

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

inline bool knows(const VCRef& v, uint64_t block, uint32_t t, uint32_t clock) {
  return v && covers(v.get(), block, t, clock);
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
//
// Global memory records name the thread by its index in the grid, with the instruction and its
// flags: 12 bytes. Shared memory is the block's own, so a record there packs the thread within the
// block, the instruction, the flags and the clock into 64 bits.
struct GRec {
  uint32_t key = 0;    // block * threads_per_block + thread
  uint32_t clock = 0;  // the thread's clock at the access; 0: none
  uint32_t pc = 0;     // instruction (low 24 bits) and flags
};
struct GCell {
  GRec w, r[2];
};
constexpr uint32_t kPcMask = 0x00FFFFFFu;
constexpr uint32_t fStrong = 1u << 24, fAtomic = 1u << 25, fCta = 1u << 26;
constexpr uint32_t fRelease = 1u << 27;  // a write right after a fence, or .release
constexpr uint32_t fSplit = 1u << 31;    // granule cell: its bytes are in the byte cells
// A read slot holding a store of the bytes the location's write record stored (see s_op).
constexpr uint32_t fEqualStore = 1u << 28;

// Shared: clock (bits 0-31), instruction (32-49), strong, atomic, release, split (50-53), thread
// (54-63).
using SRec = uint64_t;
struct SCell {
  SRec w, r[2];
};
constexpr int kSPcBits = 18;
constexpr uint64_t sStrong = 1ull << 50, sAtomic = 1ull << 51, sRelease = 1ull << 52,
                   sSplit = 1ull << 53;
// The split bit has no use in a read slot: there it marks a store of the bytes the location's write
// record stored (see s_op).
constexpr uint64_t sEqualStore = sSplit;
inline uint32_t s_clock(SRec r) { return uint32_t(r); }
inline uint32_t s_pc(SRec r) { return uint32_t(r >> 32) & ((1u << kSPcBits) - 1); }
inline uint32_t s_tid(SRec r) { return uint32_t(r >> 54); }
inline SRec s_make(uint32_t clock, uint32_t pc, uint64_t flags, uint32_t tid) {
  return uint64_t(clock) | (uint64_t(pc & ((1u << kSPcBits) - 1)) << 32) | flags | (uint64_t(tid) << 54);
}
inline bool is_split(const GCell& c) { return c.w.pc & fSplit; }
inline bool is_split(const SCell& c) { return c.w & sSplit; }
inline void mark_split(GCell& c) { c = GCell{}; c.w.pc = fSplit; }
inline void mark_split(SCell& c) { c = SCell{}; c.w = sSplit; }

// What all race shadows together may take (GPU100_EMU_CHECK_MB, default 3 GiB): past it, memory
// first touched is not checked for races nor, in shared memory, for uninitialized reads (said
// once), rather than the process running the machine out of memory (a random-access benchmark
// over a table of gigabytes would).
struct ShadowBudget {
  uint64_t used = 0, limit = 0;
  bool said = false;
  ShadowBudget() {
    const char* v = std::getenv("GPU100_EMU_CHECK_MB");
    limit = uint64_t(v && *v ? std::max(1ll, std::atoll(v)) : 3072) << 20;
  }
  bool take(uint64_t bytes) {
    if (used + bytes <= limit) {
      used += bytes;
      return true;
    }
    if (!said) {
      std::fprintf(stderr,
                   "gpu100 emulator: the race check's shadow memory reached its limit of %llu MB "
                   "(GPU100_EMU_CHECK_MB): memory first touched from now on is not checked for "
                   "races (nor shared memory for uninitialized reads)\n",
                   (unsigned long long)(limit >> 20));
      said = true;
    }
    return false;
  }
};
ShadowBudget& budget() {
  static ShadowBudget* b = new ShadowBudget;
  return *b;
}

// Zeroed memory for shadow arenas, straight from the kernel (fresh pages are zero).
constexpr uint64_t kHugePage = 2u << 20, kArenaMax = 8u << 20;
// bytes: below a huge page, or a multiple of one; huge: asked for as transparent huge pages.
void* arena_alloc(uint64_t bytes, bool huge) {
  if (bytes < kHugePage) return std::calloc(1, bytes);
  // Aligned to a huge page: over-map by one and trim both ends.
  const uint64_t len = bytes;
  void* m = mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  const uintptr_t from = reinterpret_cast<uintptr_t>(m), at = (from + kHugePage - 1) & ~uintptr_t(kHugePage - 1);
  if (at > from) munmap(m, at - from);
  if (at + len < from + len + kHugePage) munmap(reinterpret_cast<void*>(at + len), from + len + kHugePage - at - len);
#ifdef MADV_HUGEPAGE
  if (huge) madvise(reinterpret_cast<void*>(at), len, MADV_HUGEPAGE);
#endif
  return reinterpret_cast<void*>(at);
}
// Zeroed memory for row records (SlotRegion), from calloc. An access reads a chunk's row before
// it writes it, which on a fresh page is two page faults (the zero page mapped, then copied): an
// array of up to kPopulateMax bytes, most of which a launch touches, is made writable at once; a
// larger one is left to fault where it is touched.
constexpr uint64_t kPopulateMax = 16u << 20;
void* zeroed_rows(uint64_t bytes) {
  void* p = std::calloc(1, bytes);
#ifdef MADV_POPULATE_WRITE
  const uintptr_t page = 4096, from = (reinterpret_cast<uintptr_t>(p) + page - 1) & ~(page - 1),
                  to = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(page - 1);
  if (p && bytes <= kPopulateMax && to > from)
    madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
#endif
  return p;
}
void arena_free(void* a, uint64_t bytes) {
  if (bytes < kHugePage) return std::free(a);
  munmap(a, bytes);
}

// The shadow of a memory range, in chunks of 16 granules (64 bytes of memory), each made when the
// range is first touched there: a strided or pitched access pattern pays for what it touches.
constexpr uint64_t kChunkGranules = 16;
template <class Cell>
class Region {
 public:
  Region() = default;
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  ~Region() { release(); }
  uint64_t bytes() const { return nchunks_ * kChunkGranules * 4; }
  // dense: every chunk made at once, in one piece (a block's shared memory, small and touched
  // whole by most kernels), so that granule g is dense() + g.
  void ensure(uint64_t nbytes, bool dense = false) {
    const uint64_t n = (nbytes + kChunkGranules * 4 - 1) / (kChunkGranules * 4);
    if (n <= nchunks_) return;
    release();
    chunks_ = static_cast<Cell**>(std::calloc(n, sizeof(Cell*)));
    if (!chunks_) return;
    nchunks_ = n;
    if (dense && (dense_ = carve(n * kChunkGranules)))
      for (uint64_t i = 0; i < n; ++i) chunks_[i] = dense_ + i * kChunkGranules;
  }
  bool ok() const { return chunks_ != nullptr; }
  Cell* dense() const { return dense_; }
  Cell* granule(uint64_t g) {  // null: over the budget
    Cell*& c = chunks_[g / kChunkGranules];
    if (__builtin_expect(!c, 0) && !(c = carve(kChunkGranules))) return nullptr;
    return c + g % kChunkGranules;
  }
  Cell* peek(uint64_t g) const {  // granule g if its chunk was made, else null (makes nothing)
    Cell* c = chunks_ ? chunks_[g / kChunkGranules] : nullptr;
    return c ? c + g % kChunkGranules : nullptr;
  }
  Cell* more(uint64_t n) { return carve(n); }  // n zeroed cells outside the chunks; null: over the budget
  Cell* byte_cells(uint64_t g) {  // the four byte cells of granule g; null: over the budget
    if (!bytes_) bytes_ = static_cast<Cell**>(std::calloc(nchunks_, sizeof(Cell*)));
    if (!bytes_) return nullptr;
    Cell*& c = bytes_[g / kChunkGranules];
    if (!c && !(c = carve(4 * kChunkGranules))) return nullptr;
    return c + 4 * (g % kChunkGranules);
  }
  void release() {
    for (const auto& [a, n] : arenas_) arena_free(a, n);
    budget().used -= arena_bytes_;
    arena_bytes_ = 0;
    arenas_.clear();
    std::free(chunks_);
    std::free(bytes_);
    chunks_ = bytes_ = nullptr;
    dense_ = nullptr;
    nchunks_ = 0;
    left_ = 0;
  }

 private:
  Cell* carve(uint64_t cells) {
    if (left_ < cells) {
      // Arenas grow with the region, up to kArenaMax bytes: a large region takes few, and those
      // of 2 MiB or more come as transparent huge pages where the kernel offers them on request,
      // one fault for what would be hundreds.
      const uint64_t region = nchunks_ * kChunkGranules * sizeof(Cell);  // bytes
      uint64_t bytes = std::max<uint64_t>(cells * sizeof(Cell), region < kHugePage
                                                                     ? (1u << 14) * sizeof(Cell)
                                                                     : std::clamp<uint64_t>(region / 8, kHugePage, kArenaMax));
      if (bytes >= kHugePage) bytes = (bytes + kHugePage - 1) & ~(kHugePage - 1);
      const uint64_t n = bytes / sizeof(Cell);
      if (!budget().take(bytes)) return nullptr;
      // The first arena in small pages: a region of which a launch touches a few cells (saxpy's
      // slots, with its rows) makes a few pages, not a huge page zeroed whole.
      void* a = arena_alloc(bytes, !arenas_.empty());
      if (!a) {
        budget().used -= bytes;
        return nullptr;
      }
      arena_bytes_ += bytes;
      arenas_.push_back({a, bytes});
      next_ = static_cast<Cell*>(a);
      left_ = n;
    }
    Cell* c = next_;
    next_ += cells;
    left_ -= cells;
    return c;
  }
  Cell** chunks_ = nullptr;
  Cell** bytes_ = nullptr;
  Cell* dense_ = nullptr;
  uint64_t nchunks_ = 0;
  std::vector<std::pair<void*, uint64_t>> arenas_;
  uint64_t arena_bytes_ = 0;
  Cell* next_ = nullptr;
  uint64_t left_ = 0;
};

// Global memory's race shadow, a slot per granule. Most granules only ever need one live record
// (the latest write, or a read with no write since in this launch), so the slot holds that record
// alone (12 bytes, fSlotRead saying it is the read slot r[0]); a granule whose state needs more
// becomes a full cell elsewhere, the slot holding its address (fSlotFull), and a split granule's
// slot holds the address of its four byte cells (fSplit). A record below the launch base is
// ordered before every access of this launch and of later ones (the base only grows) and never
// reported, exactly as an empty record: so a full cell whose other records are all below the base
// is the slot's record alone. The checks decide on the full cell (decode, g_op, encode) except in
// global_warp's common cases, which change a slot only where g_op would leave a state that a slot
// holds.
using GSlot = GRec;
constexpr uint32_t fSlotRead = 1u << 29;  // the record is the read slot r[0]; the write slot is empty
constexpr uint32_t fSlotFull = 1u << 30;  // key and clock hold the address of a full cell
// A slot of 12 bytes (three 32-bit words, the last `pc`) pointing to what it stands for: the
// address in its first 8 bytes, a tag in pc.
template <class Full, class Slot>
inline Full* slot_target(const Slot& s) {
  static_assert(sizeof(Slot) == 12 && sizeof(Full*) == 8);
  Full* p;
  std::memcpy(&p, &s, sizeof p);
  return p;
}
template <class Slot, class Full>
inline void point_slot(Slot& s, Full* f, uint32_t tag) {
  s = Slot{};
  std::memcpy(static_cast<void*>(&s), &f, sizeof f);  // trivially copyable, 8 bytes of 12
  s.pc = tag;
}
inline GCell* slot_cells(const GSlot& s) { return slot_target<GCell>(s); }  // full or byte cells
// A full row (SlotRegion) points as a slot does, with the pointer's top bit set: its clock word
// is never 0, which says the row is there.
constexpr uint64_t kRowBit = 1ull << 63;
template <class Slot, class Full>
inline void point_row(Slot& s, Full* f, uint32_t tag) {
  point_slot(s, reinterpret_cast<Full*>(reinterpret_cast<uintptr_t>(f) | kRowBit), tag);
}
template <class Full, class Slot>
inline Full* row_target(const Slot& s) {
  return reinterpret_cast<Full*>(reinterpret_cast<uintptr_t>(slot_target<Full>(s)) & ~kRowBit);
}

// Slots, and the full cells some of them point to. A chunk whose 16 granules were last accessed
// by 16 consecutive threads of a warp, one granule each in order, at one clock and by one
// instruction, as a warp reading or writing consecutive 4-byte elements leaves them, is kept as one
// row record until an access needs its slots: Stretch(row, i) is granule i's slot (the row's thread
// key plus i). The rows take 12 bytes per chunk, like the chunk table not counted in the budget.
// Where each granule's state needs a full cell, and the cells would be three such rows stretched
// (a tile of a matrix read by warps of many blocks: the first reader and the latest), the row is a
// full row: it points to the chunk's 16 full cells, taken at once, of which only the first is used,
// holding the three rows (Stretch::full(rows, i) is granule i's cell), until an access needs them.
template <class Slot, class Full, class Stretch>
class SlotRegion {
  static constexpr uint32_t kSlotsMade = 1;  // a row's pc, with clock 0: the chunk has slots

 public:
  SlotRegion() = default;
  SlotRegion(const SlotRegion&) = delete;
  SlotRegion& operator=(const SlotRegion&) = delete;
  ~SlotRegion() { std::free(rows_); }
  void ensure(uint64_t bytes) {
    const uint64_t before = slots_.bytes();
    slots_.ensure(bytes);
    if (slots_.bytes() == before && rows_) return;
    std::free(rows_);
    const uint64_t rows = slots_.bytes() / (kChunkGranules * 4);
    rows_ = slots_.ok() ? static_cast<Slot*>(zeroed_rows(rows * sizeof(Slot))) : nullptr;
  }
  bool ok() const { return slots_.ok(); }
  void release() {
    slots_.release();
    cells_.release();
    std::free(rows_);
    rows_ = nullptr;
  }
  Slot* slot(uint64_t g) {  // null: over the budget
    if (rows_) {
      Slot& r = rows_[g / kChunkGranules];
      if (__builtin_expect(r.clock != 0, 0)) unfold(g / kChunkGranules);
      else r.pc = kSlotsMade;
    }
    return slots_.granule(g);
  }
  Slot* peek(uint64_t g) {  // granule g's slot if it has one (a row's is made), else null
    if (__builtin_expect(rows_ && rows_[g / kChunkGranules].clock, 0)) unfold(g / kChunkGranules);
    return slots_.peek(g);
  }
  Full* more(uint64_t n) { return cells_.more(n); }  // null: over the budget
  // Chunk c's row record (all zero: no access since the allocation) while the chunk has no slots;
  // else null. A chunk's slots are made by slot() and unfold(), which mark its row with clock 0 and
  // kSlotsMade, so that rows are told apart without the chunk table.
  Slot* row(uint64_t c) { return rows_ && (rows_[c].clock || !rows_[c].pc) ? rows_ + c : nullptr; }
  // Chunk c's row made into its slots (over the budget: the row is dropped, as a slot would be).
  // A full row (Stretch::kFullTag) points to its chunk's 16 full cells, the first holding the
  // records they stretch.
  void unfold(uint64_t c) {
    const Slot r = rows_[c];
    rows_[c] = Slot{};
    rows_[c].pc = kSlotsMade;
    Slot* s = slots_.granule(c * kChunkGranules);
    if (!s) return;
    if (Stretch::kFullTag && (r.pc & Stretch::kFullTag)) {
      Full* f = row_target<Full>(r);
      const Full first = f[0];
      for (uint32_t i = 0; i < kChunkGranules; ++i) {
        f[i] = Stretch{}.full(first, i);
        point_slot(s[i], f + i, Stretch::kFullTag);
      }
      return;
    }
    for (uint32_t i = 0; i < kChunkGranules; ++i) s[i] = Stretch{}(r, i);
  }

 private:
  Region<Slot> slots_;
  Region<Full> cells_;
  Slot* rows_ = nullptr;
};
inline bool live(const GRec& r, uint32_t base) { return r.clock >= base && r.clock; }
inline GCell decode(const GSlot& s) {
  GCell c{};
  (s.pc & fSlotRead ? c.r[0] : c.w) = GRec{s.key, s.clock, s.pc & ~fSlotRead};
  return c;
}
// Granule i's record in a row: the row's thread key plus i (an empty record stays empty).
inline GRec stretch(const GRec& r, uint32_t i) { return r.key | r.clock | r.pc ? GRec{r.key + i, r.clock, r.pc} : GRec{}; }
struct GSlotStretch {
  static constexpr uint32_t kFullTag = fSlotFull;
  GSlot operator()(const GSlot& r, uint32_t i) const { return GSlot{r.key + i, r.clock, r.pc}; }
  GCell full(const GCell& rows, uint32_t i) const {
    return GCell{stretch(rows.w, i), {stretch(rows.r[0], i), stretch(rows.r[1], i)}};
  }
};
class GlobalRace : public SlotRegion<GSlot, GCell, GSlotStretch> {
 public:
  // Stores c (a plain slot's decoded state, changed) in the slot: as a record where it has at most
  // one live one, in the write slot or the first read slot, else as a full cell. Over the budget
  // the slot keeps what it had.
  void encode(GSlot& s, const GCell& c, uint32_t base) {
    const bool lw = live(c.w, base), l0 = live(c.r[0], base);
    if (!live(c.r[1], base) && !(lw && l0)) {
      s = lw ? c.w : l0 ? GSlot{c.r[0].key, c.r[0].clock, c.r[0].pc | fSlotRead} : GSlot{};
    } else if (GCell* f = more(1)) {
      *f = c;
      point_slot(s, f, fSlotFull);
    }
  }
};

// Global memory: per allocation, the race shadow and, for cudaMalloc memory, one bit per byte
// that says it was written (by a copy, a memset or a kernel) since the allocation.
// The first two threads of the current launch that read a granule through ld.global.nc (the
// non-coherent path), and which of its bytes: a later write of those bytes by another thread is
// reported. clock 0 or below the launch base: none in this launch.
struct NcCell {
  uint32_t clock = 0;
  uint32_t key = 0, pc = 0;            // the first reader
  uint32_t key2 = 0, pc2 = 0;          // the first reader that is not the first (key2 != key)
  uint8_t bytes = 0, bytes2 = 0;
};
// Most granules have one such reader: a 12-byte slot holds it (clock, key, and the instruction
// with the bytes read in bits 24-27), standing for the NcCell with no second reader; the second
// reader makes the full cell, the slot holding its address (fNcFull).
struct NcSlot {
  uint32_t clock = 0, key = 0, pc = 0;
};
constexpr uint32_t fNcFull = 1u << 31;
struct NcSlotStretch {
  static constexpr uint32_t kFullTag = 0;
  NcCell full(const NcCell& c, uint32_t) const { return c; }
  NcSlot operator()(const NcSlot& r, uint32_t i) const { return NcSlot{r.clock, r.key + i, r.pc}; }
};
class NcShadow : public SlotRegion<NcSlot, NcCell, NcSlotStretch> {
 public:
  // An ld.global.nc by thread `me` (key) at `clock` of the granule's bytes in `mask`.
  __attribute__((always_inline)) void note(NcSlot& s, uint32_t clock, uint32_t me, uint32_t pc, uint8_t mask,
                                           uint32_t base) {
    if (__builtin_expect(s.pc & fNcFull, 0)) {
      NcCell& n = *slot_target<NcCell>(s);
      if (n.clock < base || !n.clock) n = NcCell{clock, me, pc, 0, 0, mask, 0};
      else if (n.key == me) n.bytes |= mask;
      else if (!n.bytes2) { n.key2 = me; n.pc2 = pc; n.bytes2 = mask; }
      else if (n.key2 == me) n.bytes2 |= mask;
    } else if (s.clock < base || !s.clock) {
      s = NcSlot{clock, me, (pc & kPcMask) | uint32_t(mask) << 24};
    } else if (s.key == me) {
      s.pc |= uint32_t(mask) << 24;
    } else if (NcCell* n = more(1)) {  // the second reader
      *n = NcCell{s.clock, s.key, s.pc & kPcMask, me, pc, uint8_t(s.pc >> 24), mask};
      point_slot(s, n, fNcFull);
    }
  }
  // A reader in this launch, other than `me`, of bytes of `mask` of granule g: its key and
  // instruction. False: none.
  bool reader(uint64_t g, uint8_t mask, uint32_t me, uint32_t base, uint32_t* key, uint32_t* pc) {
    const NcSlot* s = peek(g);
    if (!s) return false;
    if (s->pc & fNcFull) {
      const NcCell& n = *slot_target<NcCell>(*s);
      if (!n.clock || n.clock < base) return false;
      if ((n.bytes & mask) && n.key != me) return *key = n.key, *pc = n.pc, true;
      if ((n.bytes2 & mask) && n.key2 != me) return *key = n.key2, *pc = n.pc2, true;
      return false;
    }
    if (!s->clock || s->clock < base || !((s->pc >> 24) & mask) || s->key == me) return false;
    return *key = s->key, *pc = s->pc & kPcMask, true;
  }
};
struct GShadow {
  GlobalRace race;
  NcShadow nc;  // made at the first ld.global.nc of the allocation
  // The highest clock an ld.global.nc of the allocation stamped: below the launch base, nothing
  // of it was read that way in this launch, and its writes have no nc records to check.
  uint32_t nc_last = 0;
  uint64_t* init = nullptr;  // null: not tracked (host-mapped, __device__, workspace: initialized)
  uint64_t bytes = 0;
  ~GShadow() { std::free(init); }
};

// Bit ranges, a 64-bit word at a time.
inline uint64_t bit_range(uint64_t from, uint64_t n) {  // within one word: from % 64 + n <= 64
  return (n >= 64 ? ~0ull : (1ull << n) - 1) << (from & 63);
}
bool bits_all(const uint64_t* b, uint64_t from, uint64_t n) {
  while (n) {
    const uint64_t k = std::min<uint64_t>(64 - (from & 63), n), m = bit_range(from, k);
    if ((b[from >> 6] & m) != m) return false;
    from += k;
    n -= k;
  }
  return true;
}
void bits_set(uint64_t* b, uint64_t from, uint64_t n) {
  while (n) {
    const uint64_t k = std::min<uint64_t>(64 - (from & 63), n);
    b[from >> 6] |= bit_range(from, k);
    from += k;
    n -= k;
  }
}

// ---------------------------------------------------------------------------------------------
struct TState {
  VCRef vc;       // what the thread knows of others
  VCRef fence;    // what it knew at its last fence: a later strong write publishes it
  VCRef pending;  // taken by strong reads, known once a fence or barrier follows
  bool fenced = false;  // a fence since the thread's last strong write
  uint32_t proxy_fence = 0;  // 1 + its clock at its last fence.proxy.async, 0: none
};

struct BarState {
  VCRef join;                    // what the arriving threads knew
  std::vector<Entry> arrivals;   // bar.arrive: the thread and its clock when it arrived
  uint32_t nsync = 0, narrive = 0;
  int64_t pc = -1;  // the instruction of the first .aligned arrival, for the whole-block check
  uint32_t first_thread = 0;
  void reset() {
    join.reset();
    arrivals.clear();
    nsync = narrive = 0;
    pc = -1;
  }
};

// The registers of a warp holding values loaded from shared memory nothing wrote: per register,
// the lanes marked and the load that marked them (the instruction a report names).
struct WarpUndefined {
  std::vector<uint32_t> lanes;
  std::vector<uint32_t> origin;
  uint32_t marked = 0;  // registers with any lane marked
};

// A warp's plain read of whole shared granules whose records shared_warp left for later (see
// defer_read): the lanes' byte offsets, the granules each lane reads (1, 2 or 4), the instruction.
struct DeferredRead {
  uint64_t pc_bits;  // s_make(0, pc, 0, 0)
  uint32_t w0, mask, cells;
  uint32_t addr[32];
};

}  // namespace

struct BlockState {
  uint64_t block = 0;     // linear block index
  uint32_t tpb = 0;       // threads per block
  uint32_t key_base = 0;  // key of thread 0
  uint32_t start = 0;     // the clock the block started at: shared memory written before is not
  uint32_t floor = 0;     // accesses of the block with a lower clock are ordered before all later
  uint32_t top = 0;       // the highest clock any thread of the block has had
  std::vector<TState> t;
  std::vector<uint32_t> with_vc;  // threads whose vector clock was set since the last barrier
  bool dirty = false;  // a thread's fence, pending or proxy_fence was set since the block started
  Region<SCell> shared;
  std::unordered_map<uint64_t, VCRef> shared_sync;
  BarState bars[16];
  std::vector<WarpUndefined> undefined;  // per warp
  // Clusters: every access to the block's shared memory, its own and other blocks' (through
  // distributed shared memory), as global memory records them; and per thread of another block
  // that accessed it, its latest access (clock, instruction), checked when the block exits.
  Region<GCell> dsmem;
  std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> remote;
  // Shared reads not yet in `shared` (see defer_read): the first `ndeferred` of `deferred`, every
  // one by threads at the floor's clock. `defer`: no thread wrote shared memory since the barrier
  // of the whole block that last raised the floor. `ready`: a bit per granule of `shared` whose
  // write record, unsplit, is this block's (so not uninitialized), bytes past the end zero.
  std::vector<DeferredRead> deferred;
  uint32_t ndeferred = 0;
  bool defer = false;
  std::vector<uint8_t> ready;
  // A bit per warp with a thread ticked since the floor was last raised: only its threads' clocks
  // can be past the floor (clock_of), which a deferred read must not be.
  uint32_t late_warps = 0;
  // A thread's clock is its own count or the floor, whichever is higher: a barrier of the whole
  // block raises every clock by raising the floor.
  uint32_t clock_of(uint32_t i) const { return std::max(own_[i], floor); }
  const uint32_t* own_clocks() const { return own_.data(); }  // clock_of without the floor
  void tick(uint32_t i) {
    own_[i] = clock_of(i) + 1;
    top = std::max(top, own_[i]);
    late_warps |= 1u << (i / 32);
  }
  void tick_warp(uint32_t w0, uint32_t mask) {  // tick of the lanes of a warp (thread w0 + lane)
    if (mask != 0xFFFFFFFFu) {
      for (uint32_t m = mask; m; m &= m - 1) tick(w0 + uint32_t(__builtin_ctz(m)));
      return;
    }
    uint32_t* const own = own_.data() + w0;
    uint32_t high = top;
    late_warps |= 1u << (w0 / 32);
    for (uint32_t l = 0; l < 32; ++l) {  // a loop the compiler vectorizes
      own[l] = std::max(own[l], floor) + 1;
      high = std::max(high, own[l]);
    }
    top = high;
  }
  void set_vc(uint32_t i, VCRef v) {
    if (!t[i].vc) with_vc.push_back(i);
    t[i].vc = std::move(v);
  }
  void reset_threads(uint32_t n, uint32_t start) {
    own_.assign(n, start);
    if (t.size() != n || dirty) {
      t.assign(n, TState{});
    } else {
      for (uint32_t i : with_vc) t[i].vc.reset();
    }
    dirty = false;
    with_vc.clear();
    floor = top = start;
    late_warps = 0;
  }

 private:
  std::vector<uint32_t> own_;
};

namespace {

// The ready bits of a block's shared granules (BlockState::ready, see defer_read).
inline uint64_t ready_bits(const BlockState& bs, uint64_t g) {  // bits of granules g, g + 1, ...: 57 at least
  uint64_t v;
  std::memcpy(&v, bs.ready.data() + (g >> 3), sizeof v);
  return v >> (g & 7);
}
inline void set_ready(BlockState& bs, uint64_t g, uint32_t n) {  // granules g .. g + n - 1, n <= 57
  uint64_t v;
  uint8_t* const p = bs.ready.data() + (g >> 3);
  std::memcpy(&v, p, sizeof v);
  v |= ((uint64_t(1) << n) - 1) << (g & 7);
  std::memcpy(p, &v, sizeof v);
}
inline void clear_ready(BlockState& bs, uint64_t first, uint64_t last) {
  for (uint64_t i = first; i <= last && (i >> 3) < bs.ready.size(); ++i) bs.ready[i >> 3] &= uint8_t(~(1u << (i & 7)));
}

// ---------------------------------------------------------------------------------------------
// Findings of a launch: one per pair of instructions (or per instruction, for uninitialized
// reads), with the first occurrence's message and how often it happened.
enum FKind { fRaceShared, fRaceGlobal, fInitShared, fInitGlobal, fNcWritten };
struct Finding {
  std::string text;
  uint64_t count = 0;
  uint64_t order = 0;
};

using FindingKey = std::tuple<int, uint32_t, uint32_t>;  // kind and the two instructions

// A plain read whose conflicts so far are atomic writes of other threads: the findings it makes
// are held until a CAS of its thread on its location compares against the value it read (the
// read only seeded a CAS loop), or the launch ends (they are reported).
struct HeldRead {
  uint32_t size = 0;
  uint64_t value = 0;
  std::vector<std::pair<uint32_t, uint64_t>> findings;  // index into held_findings, occurrences
};
struct HeldFinding {
  FindingKey key;
  std::string text;
};

struct LaunchState {
  Launch* l = nullptr;
  uint32_t base = 1;  // clocks of this launch start here
  std::unordered_map<uint64_t, VCRef> sync;  // global locations written by release patterns
  std::map<FindingKey, Finding> findings;
  uint64_t next_order = 0;
  // Held reads by (location, reading thread); a shared location has bit 63 set.
  std::map<std::pair<uint64_t, uint32_t>, std::vector<HeldRead>> held;
  std::map<FindingKey, uint32_t> held_index;
  std::vector<HeldFinding> held_findings;
  // Uninitialized shared reads whose values are in registers (WarpUndefined::origin indexes it).
  struct UndefinedRead {
    uint64_t block, addr;
    uint32_t pc, t, size, uninit;
  };
  std::vector<UndefinedRead> undefined_reads;
};

// The lanes one execution of a st instruction has stored so far, and where.
struct StoreExec {
  uint64_t id = ~0ull;  // %clock64 at the execution: the warp-instructions run before it
  uint32_t lanes = 0;
  uint64_t loc[32] = {};
};

// barrier.cluster of one cluster: what the arrivals of the current phase release, and what the
// last completed phase released (what its waiters acquire).
struct ClusterSync {
  VCRef pending, published;
  std::vector<Entry> entries;
};

struct Global {
  std::unordered_map<uint64_t, ClusterSync> clusters;
  uint32_t next_clock = 1;
  std::vector<std::unique_ptr<BlockState>> pool;
  size_t pool_used = 0;
  size_t deferred_entries = 0;  // the read logs' room in this launch, all blocks together
  LaunchState launch;
  StoreExec store;
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

const char* access_name(uint32_t kind) {
  return (kind & kAtomic) ? "atomic" : (kind & kWrite) ? "write" : "read";
}

// ---------------------------------------------------------------------------------------------
// One lane's access.
struct Ctx {
  Exec* x;
  BlockState* bs;
  TState* ts;
  uint32_t t, clock, kind, pc;
  uint64_t addr;
  uint32_t size;
  const Allocation* al;  // global memory
  uint32_t uninit = 0;   // shared bytes read before any thread of the block wrote them
  uint32_t reported[4] = {};
  int nreported = 0;
};

// Records a finding; the message is built only the first time.
__attribute__((noinline, cold)) void note(int kind, uint32_t pc_a, uint32_t pc_b,
                                          const std::function<std::string()>& text) {
  LaunchState& L = G().launch;
  Finding& f = L.findings[{kind, pc_a, pc_b}];
  if (f.count++ == 0) {
    f.text = text();
    f.order = L.next_order++;
  }
}

// Why an unordered conflict is reported, as the message says it.
enum Why {
  kUnordered,    // nothing orders the two accesses
  kLanesDiffer,  // lanes of one store instruction storing different values to one address
  kUnchecked,    // a plain read racing with atomics, which no CAS of its thread checked
};

// Does the clock know anything of `block` (has its thread acquired a release of that block)?
bool knows_block(const VCRef& v, uint64_t block) {
  if (!v) return false;
  auto it = std::lower_bound(v->e.begin(), v->e.end(), vkey(block, 0),
                             [](const Entry& p, uint64_t k) { return p.key < k; });
  return it != v->e.end() && (it->key >> 11) == block;
}

std::string race_text(const Ctx& c, bool shared, uint64_t prev_block, uint32_t prev_t,
                      uint32_t prev_pc, const char* prev_name, Why why) {
  const Exec& x = *c.x;
  const Launch& l = *x.l;
  std::string s = "kernel " + x.k->name + ", " + thread_name(l, c.bs->block, c.t) + ", " +
                  source_of(*x.k, c.pc) + ": race on " + (shared ? "shared" : "global") +
                  " memory at address " + hex(c.addr) + (shared ? "" : place(c.al, c.addr)) +
                  ": this " + access_name(c.kind) + " of " + std::to_string(c.size) +
                  " bytes and an earlier " + prev_name + " by " +
                  thread_name(l, prev_block, prev_t) + ", " + source_of(*x.k, prev_pc);
  if (why == kLanesDiffer)
    return s + ", in the same execution of this store by one warp, storing a different value " +
           "(which lane's value lands is unspecified; lanes storing equal values are not " +
           "reported)";
  s += ", with no barrier, __syncwarp or release/acquire ordering them";
  if (why == kUnchecked)
    return s + ": a plain read of memory that other threads update atomically may return a " +
           "stale value, and no compare-and-swap of the reading thread on this address " +
           "compared against the value read (a plain load that only seeds a CAS loop is not " +
           "reported)";
  // A release of the writer's block reached this thread, but the write was not in it.
  if (!shared && prev_block != c.bs->block && std::strcmp(prev_name, "write") == 0 &&
      knows_block(c.ts->vc, prev_block))
    s += ": this thread acquired a release by that block, but one that began before the write "
         "was ordered into it (a fence and a later strong write of one thread release what "
         "precedes the fence in that thread, or was ordered before it by a barrier: a writer's "
         "own fence before the barrier that precedes another thread's atomic releases nothing; "
         "fence in the thread that does the atomic, after the barrier)";
  return s;
}

// One count per access and earlier instruction.
inline bool first_report(Ctx& c, uint32_t prev_pc) {
  for (int i = 0; i < c.nreported; ++i)
    if (c.reported[i] == prev_pc) return false;
  if (c.nreported < 4) c.reported[c.nreported++] = prev_pc;
  return true;
}

__attribute__((noinline, cold)) void race(Ctx& c, bool shared, uint64_t prev_block,
                                          uint32_t prev_t, uint32_t prev_pc, const char* prev_name,
                                          Why why = kUnordered) {
  if (!first_report(c, prev_pc)) return;
  note(shared ? fRaceShared : fRaceGlobal, prev_pc, c.pc,
       [&] { return race_text(c, shared, prev_block, prev_t, prev_pc, prev_name, why); });
}

inline uint64_t location(const Ctx& c, bool shared) { return shared ? c.addr | (1ull << 63) : c.addr; }

// Holds a conflict between a plain read by `reader` (grid-wide thread index) and an atomic write
// (see HeldRead). The access `c` is the read, or the atomic right before it writes: either way
// memory holds what the read returned, as no write came between them.
__attribute__((noinline, cold)) void hold(Ctx& c, bool shared, uint32_t reader, uint64_t prev_block,
                                          uint32_t prev_t, uint32_t prev_pc, const char* prev_name) {
  if (c.size > 8) return race(c, shared, prev_block, prev_t, prev_pc, prev_name, kUnchecked);
  if (!first_report(c, prev_pc)) return;
  LaunchState& L = G().launch;
  const FindingKey key{shared ? fRaceShared : fRaceGlobal, prev_pc, c.pc};
  auto [at, fresh] = L.held_index.try_emplace(key, uint32_t(L.held_findings.size()));
  if (fresh)
    L.held_findings.push_back({key, race_text(c, shared, prev_block, prev_t, prev_pc, prev_name, kUnchecked)});
  const uint32_t index = at->second;
  auto report_now = [&] { note(std::get<0>(key), prev_pc, c.pc, [&] { return L.held_findings[index].text; }); };
  const uint8_t* mem = shared ? c.x->b->shared.data() + c.addr : reinterpret_cast<const uint8_t*>(c.addr);
  uint64_t value = 0;
  std::memcpy(&value, mem, c.size);
  // Bounded: a thread reading many values and checking none, or a launch with very many such
  // reads, has the rest reported at once.
  const std::pair<uint64_t, uint32_t> where{location(c, shared), reader};
  auto w = L.held.find(where);
  if (w == L.held.end()) {
    if (L.held.size() >= (1u << 18)) return report_now();
    w = L.held.emplace(where, std::vector<HeldRead>{}).first;
  }
  std::vector<HeldRead>& reads = w->second;
  auto r = std::find_if(reads.begin(), reads.end(),
                        [&](const HeldRead& h) { return h.size == c.size && h.value == value; });
  if (r == reads.end()) {
    if (reads.size() == 8) return report_now();
    r = reads.insert(reads.end(), HeldRead{c.size, value, {}});
  }
  for (auto& [i, n] : r->findings)
    if (i == index) return void(++n);
  r->findings.push_back({index, 1});
}

// A CAS of thread `reader` on the location of `c` comparing against `compare`: the held reads of
// that value by the thread only seeded it.
void check_held(const Ctx& c, bool shared, uint32_t reader, uint64_t compare) {
  LaunchState& L = G().launch;
  auto it = L.held.find({location(c, shared), reader});
  if (it == L.held.end()) return;
  compare &= width_mask(int(c.size));
  std::erase_if(it->second, [&](const HeldRead& h) { return h.size == c.size && h.value == compare; });
  if (it->second.empty()) L.held.erase(it);
}

// The held findings no CAS has discharged become findings of the launch.
void report_held() {
  LaunchState& L = G().launch;
  std::vector<uint64_t> count(L.held_findings.size());
  for (const auto& [where, reads] : L.held)
    for (const HeldRead& r : reads)
      for (const auto& [index, n] : r.findings) count[index] += n;
  for (size_t i = 0; i < count.size(); ++i) {
    if (!count[i]) continue;
    Finding& f = L.findings[L.held_findings[i].key];
    if (f.count == 0) {
      f.text = L.held_findings[i].text;
      f.order = L.next_order++;
    }
    f.count += count[i];
  }
  L.held.clear();
  L.held_index.clear();
  L.held_findings.clear();
}

// --- one store instruction, many lanes ------------------------------------------------------------
// The bytes lane `lane` stores with st instruction `in`.
uint32_t stored_bytes(const Exec& x, const Inst& in, int lane, uint8_t* out) {
  const uint32_t es = in.aux;
  for (uint32_t i = 0; i < in.vec; ++i) {
    const Operand& e = in.vec == 1 ? in.o[1] : x.vec(in.o[1], int(i));
    const uint64_t v = e.kind == OK::sink ? 0 : x.val(e, lane);
    std::memcpy(out + i * es, &v, es);
  }
  return es * in.vec;
}

enum StoreLanes { kOtherStore, kEqualValue, kOtherValue };
// A plain store conflicting with the earlier write of thread `prev_t` of its own block: was that
// write another lane of this very execution of the instruction, and did it store the same bytes?
StoreLanes store_lanes(const Ctx& c, bool shared, uint32_t prev_t) {
  if (prev_t / 32 != c.t / 32) return kOtherStore;
  const StoreExec& se = G().store;
  const int prev_lane = int(prev_t % 32), lane = int(c.t % 32);
  // That lane stored to this location in this execution; the record is its latest write there.
  if (!((se.lanes >> prev_lane) & 1) || se.loc[prev_lane] != location(c, shared)) return kOtherStore;
  const Inst& in = c.x->k->code[c.pc];
  uint8_t mine[64], theirs[64];
  const uint32_t n = stored_bytes(*c.x, in, lane, mine);
  stored_bytes(*c.x, in, prev_lane, theirs);
  return std::memcmp(mine, theirs, n) == 0 ? kEqualValue : kOtherValue;
}

// A plain store conflicting with the latest write of its location, before it is applied: memory
// holds what that write stored, so a store of the same bytes changes nothing in either order.
bool stores_what_memory_holds(const Ctx& c, bool shared) {
  uint8_t mine[64];
  const uint32_t n = stored_bytes(*c.x, c.x->k->code[c.pc], int(c.t % 32), mine);
  const uint8_t* mem = shared ? c.x->b->shared.data() + c.addr : reinterpret_cast<const uint8_t*>(c.addr);
  return n == c.size && std::memcmp(mem, mine, n) == 0;
}

inline bool plain_read(uint32_t kind) { return (kind & kRead) && !(kind & (kWrite | kStrong)); }

// An unordered, non-exempt conflict with the earlier write (or atomic) of thread `prev_t` of
// block `prev_block`, or with its earlier read: reported, held, or (equal stores of one
// instruction) defined.
__attribute__((noinline, cold)) bool conflict(Ctx& c, bool shared, uint64_t prev_block,
                                              uint32_t prev_t, uint32_t prev_pc, bool prev_write,
                                              bool prev_atomic, bool prev_strong) {
  const char* name = prev_atomic ? "atomic" : prev_write ? "write" : "read";
  if (prev_write && !prev_atomic && (c.kind & kStore)) {
    if (prev_block == c.bs->block) {
      switch (store_lanes(c, shared, prev_t)) {
        case kEqualValue: return false;
        case kOtherValue: return race(c, shared, prev_block, prev_t, prev_pc, name, kLanesDiffer), false;
        case kOtherStore: break;
      }
    }
    if (stores_what_memory_holds(c, shared)) return true;
  }
  const uint32_t prev_key = uint32_t(prev_block * c.bs->tpb + prev_t);
  if (prev_atomic && plain_read(c.kind))
    return hold(c, shared, c.bs->key_base + c.t, prev_block, prev_t, prev_pc, name), false;
  if (!prev_write && !prev_strong && (c.kind & kAtomic))
    return hold(c, shared, prev_key, prev_block, prev_t, prev_pc, name), false;
  race(c, shared, prev_block, prev_t, prev_pc, name);
  return false;
}

// Two strong accesses do not race (PTX: morally strong), unless one is .cta-scoped and they are
// in different blocks, or both are volatile/relaxed loads and stores (no atomic) by lanes of one
// warp and the store is no release (no fence right before it): that is warp-synchronous code,
// which independent thread scheduling does not order. (A flag one lane sets after a fence and
// another lane of the warp spins on is message passing, and is not reported.)
inline bool exempt_pair(bool both_strong, bool any_atomic, bool same_warp, bool write_released) {
  if (!both_strong) return false;
  if (any_atomic || !same_warp) return true;
  return write_released;
}

// --- shared memory ------------------------------------------------------------------------------
inline bool s_ordered(const Ctx& c, SRec r) {
  const uint32_t clock = s_clock(r), tid = s_tid(r);
  return clock < c.bs->floor || tid == c.t || knows(c.ts->vc, c.bs->block, tid, clock);
}
inline bool s_exempt(const Ctx& c, SRec r, uint64_t me, bool prev_is_write) {
  return exempt_pair((r & sStrong) && (c.kind & kStrong), (r & sAtomic) || (c.kind & kAtomic),
                     s_tid(r) / 32 == c.t / 32, ((prev_is_write ? r : me) & sRelease) != 0);
}

inline void s_op(Ctx& c, SCell& cell, uint32_t nbytes, uint64_t me, bool race_on, bool init_on) {
  const bool rd = c.kind & kRead, wr = c.kind & kWrite;
  if (init_on && rd && s_clock(cell.w) < c.bs->start) c.uninit += nbytes;
  bool unchanged = false;  // a store of the bytes of an unordered write record: it changes nothing
  SRec kept = 0;           // an equal store in a read slot this store is unordered with
  if (race_on) {
    if (!s_ordered(c, cell.w) && !s_exempt(c, cell.w, me, true))
      unchanged = conflict(c, true, c.bs->block, s_tid(cell.w), s_pc(cell.w), true, cell.w & sAtomic,
                           cell.w & sStrong);
    if (wr)
      for (SRec r : cell.r)
        if (!s_ordered(c, r) && !s_exempt(c, r, me, (r & sEqualStore) != 0) &&
            conflict(c, true, c.bs->block, s_tid(r), s_pc(r), (r & sEqualStore) != 0, false, r & sStrong))
          kept = r;
  }
  if (wr) {
    // Both equal stores stay known, so that a later access unordered with either is checked: the
    // write record keeps the earlier one, a read slot the later (a later write checks it as one).
    if (unchanged) {
      cell.r[0] = me | sEqualStore;
      cell.r[1] = kept;
      return;
    }
    cell.w = me;
    cell.r[0] = kept;
    cell.r[1] = 0;
    return;
  }
  // A read replaces a read it follows (the same thread's, or one ordered before it): any write
  // ordered after this one is ordered after that one too. Two unordered readers are kept; a third
  // replaces the second (a write racing only with a forgotten reader goes unreported).
  if (s_ordered(c, cell.r[0])) cell.r[0] = me;
  else if (s_ordered(c, cell.r[1])) cell.r[1] = me;
  else cell.r[1] = me;
}

// --- global memory ------------------------------------------------------------------------------
inline bool g_ordered(const Ctx& c, const GRec& r, uint32_t base) {
  if (r.clock < base || r.key == c.bs->key_base + c.t) return true;
  const BlockState& bs = *c.bs;
  const uint32_t d = r.key - bs.key_base;
  if (d < bs.tpb) return r.clock < bs.floor || knows(c.ts->vc, bs.block, d, r.clock);
  return knows(c.ts->vc, r.key / bs.tpb, r.key % bs.tpb, r.clock);
}
inline bool g_exempt(const Ctx& c, const GRec& r, uint32_t mepc, bool prev_is_write) {
  if (!(r.pc & fStrong) || !(c.kind & kStrong)) return false;
  const uint32_t d = r.key - c.bs->key_base;
  const bool same_block = d < c.bs->tpb;
  if (((r.pc & fCta) || (c.kind & kCta)) && !same_block) return false;
  return exempt_pair(true, (r.pc & fAtomic) || (c.kind & kAtomic), same_block && d / 32 == c.t / 32,
                     ((prev_is_write ? r.pc : mepc) & fRelease) != 0);
}

inline void g_op(Ctx& c, GCell& cell, const GRec& me, uint32_t base) {
  const bool wr = c.kind & kWrite;
  const uint32_t tpb = c.bs->tpb;
  bool unchanged = false;  // as in s_op
  if (!g_ordered(c, cell.w, base) && !g_exempt(c, cell.w, me.pc, true))
    unchanged = conflict(c, false, cell.w.key / tpb, cell.w.key % tpb, cell.w.pc & kPcMask, true,
                         cell.w.pc & fAtomic, cell.w.pc & fStrong);
  if (wr) {
    GRec kept{};  // as in s_op
    for (const GRec& r : cell.r)
      if (!g_ordered(c, r, base) && !g_exempt(c, r, me.pc, (r.pc & fEqualStore) != 0) &&
          conflict(c, false, r.key / tpb, r.key % tpb, r.pc & kPcMask, (r.pc & fEqualStore) != 0, false,
                   r.pc & fStrong))
        kept = r;
    if (unchanged) {
      cell.r[0] = me;
      cell.r[0].pc |= fEqualStore;
      cell.r[1] = kept;
      return;
    }
    cell.w = me;
    cell.r[0] = kept;
    cell.r[1].clock = 0;
    return;
  }
  if (g_ordered(c, cell.r[0], base)) cell.r[0] = me;
  else if (g_ordered(c, cell.r[1], base)) cell.r[1] = me;
  else cell.r[1] = me;
}

// Visits the cells of [off, off + size): whole granules, or the byte cells of split ones.
template <class Cell, class Op>
inline void walk(Region<Cell>& reg, uint64_t off, uint32_t size, Op op) {
  const uint64_t end = off + size;
  for (uint64_t g = off >> 2; g <= (end - 1) >> 2; ++g) {
    Cell* cp = reg.granule(g);
    if (!cp) continue;
    Cell& c = *cp;
    const uint64_t gs = std::max(off, g * 4), ge = std::min(end, g * 4 + 4);
    if (ge - gs == 4 && !is_split(c)) {
      op(c, 4u);
      continue;
    }
    Cell* bytes = reg.byte_cells(g);
    if (!bytes) continue;
    if (!is_split(c)) {
      for (int i = 0; i < 4; ++i) bytes[i] = c;
      mark_split(c);
    }
    for (uint64_t b = gs; b < ge; ++b) op(bytes[b - g * 4], 1u);
  }
}

// walk for global memory: each granule's full cell, its decoded slot (stored back after op), or
// the byte cells of a split one.
template <class Op>
inline void walk_global(GlobalRace& reg, uint64_t off, uint32_t size, uint32_t base, Op op) {
  const uint64_t end = off + size;
  for (uint64_t g = off >> 2; g <= (end - 1) >> 2; ++g) {
    GSlot* sp = reg.slot(g);
    if (!sp) continue;
    GSlot& s = *sp;
    const uint64_t gs = std::max(off, g * 4), ge = std::min(end, g * 4 + 4);
    if (ge - gs == 4 && !(s.pc & fSplit)) {
      if (s.pc & fSlotFull) {
        op(*slot_cells(s), 4u);
      } else {
        GCell c = decode(s);
        op(c, 4u);
        reg.encode(s, c, base);
      }
      continue;
    }
    if (!(s.pc & fSplit)) {
      GCell* bytes = reg.more(4);
      if (!bytes) continue;
      const GCell c = (s.pc & fSlotFull) ? *slot_cells(s) : decode(s);
      for (int i = 0; i < 4; ++i) bytes[i] = c;
      point_slot(s, bytes, fSplit);
    }
    GCell* bytes = slot_cells(s);
    for (uint64_t b = gs; b < ge; ++b) op(bytes[b - g * 4], 1u);
  }
}

VCRef snapshot(const BlockState& bs, uint32_t t) {
  return join(bs.t[t].vc,
              make_vc({{vkey(bs.block, t), bs.clock_of(t)}, {vkey(bs.block, kFloor), bs.floor}}));
}

// Release and acquire through a strong access of location `loc`.
void sync_through(BlockState& bs, uint32_t t, uint32_t kind, std::unordered_map<uint64_t, VCRef>& sync,
                  uint64_t loc) {
  TState& ts = bs.t[t];
  if (kind & kWrite) {
    if (kind & kRelease) {
      VCRef& s = sync[loc];
      s = join(s, snapshot(bs, t));
      bs.tick(t);
    } else if (ts.fence) {
      VCRef& s = sync[loc];
      s = join(s, ts.fence);
    }
  }
  if ((kind & kRead) && !sync.empty()) {
    auto it = sync.find(loc);
    if (it != sync.end() && it->second) {
      if (kind & kAcquire) bs.set_vc(t, join(ts.vc, it->second));
      else ts.pending = join(ts.pending, it->second), bs.dirty = true;
    }
  }
}

__attribute__((noinline, cold)) void uninit_shared(Ctx& c) {
  note(fInitShared, c.pc, 0, [&] {
    const Exec& x = *c.x;
    return "kernel " + x.k->name + ", " + thread_name(*x.l, c.bs->block, c.t) + ", " +
           source_of(*x.k, c.pc) + ": uninitialized shared memory read of " +
           std::to_string(c.size) + " bytes at address " + hex(c.addr) + ": " +
           std::to_string(c.uninit) + " of them written by no thread of the block before";
  });
}

// --- undefined values in registers -------------------------------------------------------------
WarpUndefined& undefined_of(BlockState& bs, const Exec& x) {
  if (bs.undefined.size() <= x.w->index) bs.undefined.resize(x.w->index + 1);
  WarpUndefined& u = bs.undefined[x.w->index];
  if (u.lanes.size() < x.k->nregs) {
    u.lanes.resize(x.k->nregs, 0);
    u.origin.resize(x.k->nregs, 0);
  }
  return u;
}

// Lanes `affected` of register r become `marked` (a subset), from the load at `origin`.
inline void mark(WarpUndefined& u, uint32_t r, uint32_t affected, uint32_t marked, uint32_t origin) {
  if (r >= u.lanes.size()) return;
  const uint32_t was = u.lanes[r], now = (was & ~affected) | (marked & affected);
  if (now && !was) { ++u.marked; ++g_undefined; }
  if (!now && was) { --u.marked; --g_undefined; }
  if (marked & affected) u.origin[r] = origin;
  u.lanes[r] = now;
}

// A plain ld of shared bytes nothing wrote: its destination registers are marked for the lane;
// any other reading instruction is reported at once.
__attribute__((noinline, cold)) void uninit_shared_read(Ctx& c, int lane) {
  const Exec& x = *c.x;
  if (plain_read(c.kind) && x.k->code[c.pc].san_class == opLoad) {
    // Bounded: past the cap, the latest read takes the last record (a report may then name
    // another uninitialized read of the same launch).
    constexpr size_t kMaxReads = size_t(1) << 20;
    LaunchState& L = G().launch;
    if (L.undefined_reads.size() == kMaxReads) L.undefined_reads.pop_back();
    const uint32_t origin = uint32_t(L.undefined_reads.size());
    L.undefined_reads.push_back({c.bs->block, c.addr, c.pc, c.t, c.size, c.uninit});
    WarpUndefined& u = undefined_of(*c.bs, x);
    const Operand& d = x.k->code[c.pc].o[0];
    const uint32_t bit = 1u << lane;
    if (d.kind == OK::reg) mark(u, d.reg, bit, bit, origin);
    else if (d.kind == OK::vec)
      for (int i = 0; i < d.count; ++i)
        if (x.vec(d, i).kind == OK::reg) mark(u, x.vec(d, i).reg, bit, bit, origin);
    return;
  }
  uninit_shared(c);
}

__attribute__((noinline, cold)) void uninit_global(Ctx& c, const GShadow& g, uint64_t off) {
  note(fInitGlobal, c.pc, 0, [&] {
    const Exec& x = *c.x;
    uint32_t missing = 0;
    for (uint64_t i = off; i < off + c.size; ++i) missing += !((g.init[i >> 6] >> (i & 63)) & 1);
    return "kernel " + x.k->name + ", " + thread_name(*x.l, c.bs->block, c.t) + ", " +
           source_of(*x.k, c.pc) + ": uninitialized global memory read of " +
           std::to_string(c.size) + " bytes at address " + hex(c.addr) + place(c.al, c.addr) +
           ": " + std::to_string(missing) +
           " of them not written since the allocation (by a copy, a memset or a kernel)";
  });
}

// --- non-coherent loads --------------------------------------------------------------------------
// ld.global.nc (__ldg, loads through a const __restrict__ pointer) reads through a cache that is
// not kept coherent with the launch's writes: the PTX ISA allows it only for memory that is
// read-only for the kernel's whole lifetime. So such a load of bytes another thread of the launch
// wrote, and a write of bytes another thread of the launch read that way, are reported, however
// the two are ordered.
const char* const kNcRule =
    "memory read through the non-coherent path (ld.global.nc: __ldg, or a const __restrict__ "
    "pointer) must stay unchanged while the kernel runs (read it with a plain load, or write it "
    "in another launch)";

__attribute__((noinline, cold)) void nc_written(Ctx& c, const GRec& w) {
  const uint32_t tpb = c.bs->tpb, prev_pc = w.pc & kPcMask;
  if (!first_report(c, prev_pc)) return;
  note(fNcWritten, prev_pc, c.pc, [&] {
    const Exec& x = *c.x;
    return "kernel " + x.k->name + ", " + thread_name(*x.l, c.bs->block, c.t) + ", " +
           source_of(*x.k, c.pc) + ": non-coherent load of " + std::to_string(c.size) +
           " bytes at address " + hex(c.addr) + place(c.al, c.addr) + " that " +
           ((w.pc & fAtomic) ? "an atomic" : "a write") + " by " +
           thread_name(*x.l, w.key / tpb, w.key % tpb) + ", " + source_of(*x.k, prev_pc) +
           ", changed earlier in this launch: " + kNcRule;
  });
}

__attribute__((noinline, cold)) void nc_read_before(Ctx& c, uint32_t key, uint32_t prev_pc) {
  const uint32_t tpb = c.bs->tpb;
  if (!first_report(c, prev_pc)) return;
  note(fNcWritten, prev_pc, c.pc, [&] {
    const Exec& x = *c.x;
    return "kernel " + x.k->name + ", " + thread_name(*x.l, c.bs->block, c.t) + ", " +
           source_of(*x.k, c.pc) + ": this " + access_name(c.kind) + " of " +
           std::to_string(c.size) + " bytes at address " + hex(c.addr) + place(c.al, c.addr) +
           " changes memory that a non-coherent load by " + thread_name(*x.l, key / tpb, key % tpb) +
           ", " + source_of(*x.k, prev_pc) + ", read earlier in this launch: " + kNcRule;
  });
}

// An ld.global.nc (kNc) or a write of an allocation that has had one, of [off, off + c.size).
__attribute__((noinline)) void nc_access(Ctx& c, GShadow& g, uint64_t off) {
  const uint32_t base = G().launch.base, me = c.bs->key_base + c.t;
  const uint64_t end = off + c.size;
  const bool load = (c.kind & kNc) != 0;
  if (load && !g.nc.ok()) g.nc.ensure(g.bytes);
  if (load) g.nc_last = std::max(g.nc_last, c.clock);
  for (uint64_t gi = off >> 2; gi <= (end - 1) >> 2; ++gi) {
    const uint64_t gs = std::max(off, gi * 4), ge = std::min(end, gi * 4 + 4);
    const uint8_t mask = uint8_t(((1u << (ge - gs)) - 1) << (gs - gi * 4));
    if (load) {
      // Written before, in this launch, by another thread (the granule's latest write).
      if (const GSlot* sp = g.race.peek(gi)) {
        auto check = [&](const GRec& w) {
          if (w.clock >= base && w.clock && w.key != me) nc_written(c, w);
        };
        if (sp->pc & fSplit)
          for (uint64_t b = gs; b < ge; ++b) check(slot_cells(*sp)[b - gi * 4].w);
        else if (sp->pc & fSlotFull) check(slot_cells(*sp)->w);
        else if (!(sp->pc & fSlotRead)) check(*sp);
      }
      if (NcSlot* n = g.nc.ok() ? g.nc.slot(gi) : nullptr) g.nc.note(*n, c.clock, me, c.pc, mask, base);
      continue;
    }
    uint32_t key, pc;
    if (g.nc.reader(gi, mask, me, base, &key, &pc)) nc_read_before(c, key, pc);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
namespace {

// One lane's access of shared memory (offset a) or global memory (address a in allocation al).
inline void access_lane(Exec& x, BlockState* bs, uint32_t pc, bool shared, uint64_t a, uint32_t size,
                        int lane, uint32_t kind, const Allocation* al) {
  const uint32_t t = x.w->index * 32 + uint32_t(lane);
  TState& ts = bs->t[t];
  bool released = false;
  if ((kind & kStrong) && (kind & kWrite)) {
    released = (kind & kRelease) || ts.fenced;
    ts.fenced = false;
  }
  const bool race_on = g_checks & kRace, init_on = g_checks & kInit;
  Ctx c{&x, bs, &ts, t, bs->clock_of(t), kind, pc, a, size, al};
  if ((kind & (kStore | kCas)) && race_on) {
    if (kind & kStore) {
      StoreExec& se = G().store;
      const uint64_t id = x.sreg(sr_clock64, lane);
      if (id != se.id) {
        se.id = id;
        se.lanes = 0;
      }
      se.lanes |= 1u << lane;
      se.loc[lane] = location(c, shared);
    } else if (!G().launch.held.empty()) {
      check_held(c, shared, bs->key_base + t, x.val(x.k->code[pc].o[2], lane));
    }
  }
  if (shared) {
    const SRec me = s_make(c.clock, pc,
                           ((kind & kStrong) ? sStrong : 0) | ((kind & kAtomic) ? sAtomic : 0) |
                               (released ? sRelease : 0),
                           t);
    if ((a | size) & 3) clear_ready(*bs, a >> 2, (a + size - 1) >> 2);  // split into byte cells
    walk(bs->shared, a, size, [&](SCell& cell, uint32_t n) { s_op(c, cell, n, me, race_on, init_on); });
    if (__builtin_expect(c.uninit != 0, 0)) uninit_shared_read(c, lane);
    if ((kind & kStrong) && race_on) sync_through(*bs, t, kind, bs->shared_sync, a);
    return;
  }
  auto* g = static_cast<GShadow*>(al->shadow);
  const uint64_t off = a - al->base;
  if (init_on && g->init) {
    if ((kind & kRead) && !bits_all(g->init, off, size)) uninit_global(c, *g, off);
    if (kind & kWrite) bits_set(g->init, off, size);
  }
  if (!race_on || !g->race.ok()) return;  // no memory for the shadow of an allocation this large
  const GRec me{bs->key_base + t, c.clock,
                (pc & kPcMask) | ((kind & kStrong) ? fStrong : 0) | ((kind & kAtomic) ? fAtomic : 0) |
                    ((kind & kCta) ? fCta : 0) | (released ? fRelease : 0)};
  const uint32_t base = G().launch.base;
  walk_global(g->race, off, size, base, [&](GCell& cell, uint32_t) { g_op(c, cell, me, base); });
  if (__builtin_expect((kind & kNc) || ((kind & kWrite) && g->nc.ok() && g->nc_last >= base), 0))
    nc_access(c, *g, off);
  if (kind & kStrong) sync_through(*bs, t, kind, G().launch.sync, a);
}

// The global allocation holding [a, a + size), with its shadow made.
inline const Allocation* global_of(uint64_t a, uint32_t size) {
  const Allocation* al = memory().find(a, size);
  if (!al) return nullptr;
  if (!al->shadow) {
    auto* g = new GShadow;
    g->bytes = al->bytes;
    al->shadow = g;
  }
  if (g_checks & kRace) static_cast<GShadow*>(al->shadow)->race.ensure(al->bytes);
  return al;
}

}  // namespace

namespace {

// --- distributed shared memory -------------------------------------------------------------------
__attribute__((noinline, cold)) void dsmem_race(const Ctx& c, const BlockState& owner, const Block& tb,
                                                const GRec& prev, bool prev_write) {
  const uint32_t tpb = c.bs->tpb, prev_pc = prev.pc & kPcMask;
  note(fRaceShared, prev_pc, c.pc, [&] {
    const Exec& x = *c.x;
    const char* prev_name = (prev.pc & fAtomic) ? "atomic" : prev_write ? "write" : "read";
    return "kernel " + x.k->name + ", " + thread_name(*x.l, c.bs->block, c.t) + ", " +
           source_of(*x.k, c.pc) + ": race on distributed shared memory at offset " + hex(c.addr) +
           " of the shared memory of " + cluster::name(tb) + ": this " + access_name(c.kind) + " of " +
           std::to_string(c.size) + " bytes and an earlier " + prev_name + " by " +
           thread_name(*x.l, prev.key / tpb, prev.key % tpb) + ", " + source_of(*x.k, prev_pc) +
           ", with no cluster barrier (barrier.cluster.arrive, which releases, then "
           "barrier.cluster.wait, which acquires: cluster.sync()) or other release/acquire "
           "ordering them";
  });
  (void)owner;
}

__attribute__((noinline, cold)) void dsmem_uninit(const Ctx& c, const Block& tb) {
  note(fInitShared, c.pc, 1, [&] {
    const Exec& x = *c.x;
    return "kernel " + x.k->name + ", " + thread_name(*x.l, c.bs->block, c.t) + ", " +
           source_of(*x.k, c.pc) + ": uninitialized distributed shared memory read of " +
           std::to_string(c.size) + " bytes at offset " + hex(c.addr) + " of the shared memory of " +
           cluster::name(tb) + ": written by no thread of the cluster since that block started";
  });
}

// A shared access in a launch with clusters (or through a shared::cluster address): the block's
// own accesses keep their checks; every access is also checked against the other blocks'
// accesses of the same bytes in the target block's record.
void dsmem_access(Exec& x, BlockState* bs, uint32_t pc, uint64_t a, uint32_t size, int lane, uint32_t kind) {
  Block* tb = cluster::target(x, a);
  if (!tb || !tb->san) return;
  const uint64_t off = a & cluster::kOffsetMask;
  const bool local = tb == x.b;
  if (local && off + size <= bs->shared.bytes() && bs->shared.ok())
    access_lane(x, bs, pc, true, off, size, lane, kind, nullptr);
  BlockState& owner = *tb->san;
  if (x.l->cluster.count() <= 1 || !owner.dsmem.ok() || off + size > owner.dsmem.bytes()) return;
  const uint32_t t = x.w->index * 32 + uint32_t(lane);
  Ctx c{&x, bs, &bs->t[t], t, bs->clock_of(t), kind, pc, off, size, nullptr};
  const GRec me{bs->key_base + t, c.clock,
                (pc & kPcMask) | ((kind & kStrong) ? fStrong : 0) | ((kind & kAtomic) ? fAtomic : 0) |
                    ((kind & kCta) ? fCta : 0)};
  const bool race_on = g_checks & kRace, wr = kind & kWrite;
  const uint64_t tpb = bs->tpb;
  bool unwritten = false;
  walk(owner.dsmem, off, size, [&](GCell& cell, uint32_t) {
    auto check = [&](const GRec& r, bool prev_write) {
      if (!r.clock || (local && r.key / tpb == owner.block)) return;  // the block's own: checked above
      if (g_ordered(c, r, 1) || g_exempt(c, r, me.pc, prev_write)) return;
      dsmem_race(c, owner, *tb, r, prev_write);
    };
    if (!cell.w.clock) unwritten = true;
    if (race_on) {
      check(cell.w, true);
      if (wr)
        for (const GRec& r : cell.r) check(r, false);
    }
    if (wr) {
      cell.w = me;
      cell.r[0].clock = cell.r[1].clock = 0;
    } else if (g_ordered(c, cell.r[0], 1)) {
      cell.r[0] = me;
    } else {
      cell.r[1] = me;
    }
  });
  if (local) return;
  // Release/acquire through the owner's location (a remote mbarrier arrive, a flag): as its own.
  if ((kind & kStrong) && race_on) sync_through(*bs, t, kind, owner.shared_sync, off);
  if ((g_checks & kInit) && (kind & kRead) && !(kind & kWrite) && unwritten) dsmem_uninit(c, *tb);
  // A write from another block initializes the bytes for the owner's own reads: its record there
  // has the owner's start clock, below the owner's floor (ordered; its conflicts are checked here).
  if (wr && owner.shared.ok() && off + size <= owner.shared.bytes())
    walk(owner.shared, off, size, [&](SCell& cell, uint32_t) {
      if (s_clock(cell.w) < owner.start) cell.w = s_make(owner.start, pc, 0, 0);
    });
  auto& last = owner.remote[me.key];
  if (c.clock >= last.first) last = {c.clock, pc};
}

}  // namespace

void cluster_arrive(Exec& x, uint64_t cluster, uint32_t mask, bool release) {
  BlockState* bs = x.b->san;
  if (!bs || !(g_checks & kRace)) return;
  ClusterSync& cs = G().clusters[cluster];
  for (uint32_t m = mask; m; m &= m - 1) {
    const uint32_t t = x.w->index * 32 + uint32_t(__builtin_ctz(m));
    if (release) {
      TState& ts = bs->t[t];
      if (ts.pending) {
        bs->set_vc(t, join(ts.vc, ts.pending));
        ts.pending.reset();
      }
      cs.entries.push_back({vkey(bs->block, t), bs->clock_of(t)});
      cs.entries.push_back({vkey(bs->block, kFloor), bs->floor});
      if (ts.vc) cs.pending = join(cs.pending, ts.vc);
    }
    bs->tick(t);
  }
}

void cluster_complete(uint64_t cluster) {
  if (!(g_checks & kRace)) return;
  ClusterSync& cs = G().clusters[cluster];
  std::vector<Entry>& e = cs.entries;
  std::sort(e.begin(), e.end(), [](const Entry& p, const Entry& q) {
    return p.key < q.key || (p.key == q.key && p.clock > q.clock);
  });
  e.erase(std::unique(e.begin(), e.end(), [](const Entry& p, const Entry& q) { return p.key == q.key; }), e.end());
  cs.published = join(cs.pending, e.empty() ? nullptr : make_vc(std::move(e)));
  cs.pending.reset();
  cs.entries.clear();
}

void cluster_acquire(Block& b, uint32_t t, uint64_t cluster) {
  BlockState* bs = b.san;
  if (!bs || !(g_checks & kRace)) return;
  auto it = G().clusters.find(cluster);
  if (it == G().clusters.end() || !it->second.published) return;
  bs->set_vc(t, join(bs->t[t].vc, it->second.published));
}

void cluster_block_exit(Block& b) {
  BlockState* bs = b.san;
  if (!bs || bs->remote.empty() || !(g_checks & kRace)) return;
  // What the block's threads know at their exit, together.
  VCRef known;
  const VC* last = nullptr;
  for (const TState& ts : bs->t)
    if (ts.vc && ts.vc.get() != last) {
      known = join(known, ts.vc);
      last = ts.vc.get();
    }
  const LaunchState& L = G().launch;
  const uint32_t tpb = bs->tpb;
  for (const auto& [key, access] : bs->remote) {
    const uint64_t block = key / tpb;
    const uint32_t t = key % tpb, clock = access.first, pc = access.second;
    if (knows(known, block, t, clock)) continue;
    note(fRaceShared, pc, 0xFFFFFFu, [&] {
      const Kernel& k = *L.l->kernel;
      return "kernel " + k.name + ", " + thread_name(*L.l, block, t) + ", " + source_of(k, pc) +
             ": distributed shared memory access to " + cluster::name(b) +
             ", which exits with nothing ordering this access before its exit (a block's shared "
             "memory ends with the block: every access from another block of the cluster must "
             "happen before it exits, e.g. with a cluster.sync() before the end of the kernel)";
    });
  }
  bs->remote.clear();
}

namespace {
void settle_reads(BlockState& bs);  // see defer_read
}  // namespace

void access(Exec& x, uint32_t pc, Space space, uint64_t a, uint32_t size, int lane, uint32_t kind) {
  BlockState* bs = x.b->san;
  if (!bs || size == 0) return;
  if (space == Space::generic) {
    if (a - kSharedWindow < kWindowSize) { space = Space::shared; a -= kSharedWindow; }
    else if (a - kLocalWindow < kWindowSize) return;
    else space = Space::global;
  }
  if (space == Space::shared) {
    if (bs->ndeferred) settle_reads(*bs);
    if (!plain_read(kind)) bs->defer = false;
    if (__builtin_expect(x.b->cluster != nullptr, 0) && (x.l->cluster.count() > 1 || (a >> cluster::kRankShift)))
      return dsmem_access(x, bs, pc, a, size, lane, kind);
    if (a + size <= bs->shared.bytes() && bs->shared.ok())
      access_lane(x, bs, pc, true, a, size, lane, kind, nullptr);
  } else if (space == Space::global || space == Space::konst) {
    if (const Allocation* al = global_of(a, size)) {
      access_lane(x, bs, pc, false, a, size, lane, kind, al);
      if (streams::g_recording) streams::note_access(a, size, kind);  // runtime/streams.h
    }
  }
}

// --- a warp-instruction's accesses ----------------------------------------------------------------
// What access() does for each lane in lane order, with what is the same for every lane (the block's
// state, the space, the allocation, the store's execution) worked out once. A plain access of a
// 4-byte granule whose records are ordered before it (below the block's floor or the launch base,
// the thread's own, or known to its vector clock) is decided and recorded right here; any other
// lane takes access_lane, the same code as lane by lane.
namespace {

// The lanes of a st the checks have seen (StoreExec), kept as access_lane keeps them: the
// execution's first lane that gets there starts it anew.
struct StoreLanesOf {
  StoreExec* se = nullptr;
  uint64_t id = 0;
  StoreLanesOf(Exec& x, uint32_t mask, uint32_t kind) {
    if (!(kind & kStore) || !(g_checks & kRace)) return;
    se = &G().store;
    id = x.sreg(sr_clock64, __builtin_ctz(mask));
  }
  void add(int lane, uint64_t loc) {
    if (!se) return;
    if (id != se->id) {
      se->id = id;
      se->lanes = 0;
    }
    se->lanes |= 1u << lane;
    se->loc[lane] = loc;
  }
  void add_warp(const uint64_t* locs) {  // add(lane, locs[lane]) for every lane
    if (!se) return;
    se->id = id;
    se->lanes = kFullWarp;
    std::memcpy(se->loc, locs, sizeof se->loc);
  }
};

// shared_warp's short path for reads of aligned words (a word whose write record has a clock in
// [w_lo, w_hi) takes the reader's record as s_op's read would), a word at a time rather than a lane
// at a time, for a full warp whose addresses show which lanes read one word: runs of equal
// addresses (a row element broadcast to half a warp), or a second half repeating the first's
// increasing words (a row of a tile read by two rows of threads). Under s_op, the reads of one word
// by lanes l1 < ... < lk end with r[0] lane l1's record and r[1] lane lk's (k > 1) when the word's
// r[0] is ordered by the floor (stale): the first reader takes r[0] and every later one finds it
// taken by a thread of this epoch. When r[0] already is a thread's of this epoch, that thread's
// lane (if it reads the word) takes r[0] again and every other lane r[1]. Runs are taken in lane
// order; the repeating halves' groups are of different words, so their order does not matter.
// False: nothing was changed (another pattern, or a word the lane loop would not settle).
__attribute__((always_inline)) inline bool shared_word_groups_body(SCell* dense, uint64_t limit, const uint64_t* addrs,
                                                                  uint32_t w_lo, uint64_t w_hi, uint32_t floor,
                                                                  const uint32_t* own, uint32_t w0, uint64_t pc_bits) {
  // The warp's shape, in loops the compiler vectorizes: lanes whose address differs from the lane
  // before, and whether the second half repeats the first's increasing addresses.
  uint32_t heads = 1;
  for (int l = 1; l < 32; ++l) heads |= uint32_t(addrs[l] != addrs[l - 1]) << l;
  uint64_t differ = 0;
  uint32_t increasing = 1;
  for (int l = 0; l < 16; ++l) differ |= addrs[l + 16] ^ addrs[l];
  for (int l = 1; l < 16; ++l) increasing &= addrs[l] > addrs[l - 1];
  const bool runs = __builtin_popcount(heads) <= 4, repeat = !differ && increasing;
  if (!runs && !repeat) return false;
  const uint64_t span = w_hi > w_lo ? w_hi - w_lo : 0;
  uint64_t me[32];  // each lane's record (s_make)
  uint32_t clock[32];
  for (uint32_t l = 0; l < 32; ++l) clock[l] = std::max(own[l], floor);
  for (uint32_t l = 0; l < 32; ++l) me[l] = uint64_t(clock[l]) | pc_bits | (uint64_t(w0 + l) << 54);
  uint64_t row = 0;  // zero: the repeated half is 16 consecutive words
  for (int l = 0; l < 16; ++l) row |= addrs[l] ^ (addrs[0] + 4 * uint64_t(l));
  if (!runs && !row) {  // the commonest shape, a row of a tile read by two rows of threads
    const uint64_t a = addrs[0];
    if (a + 64 > limit || (a & 3)) return false;
    SCell* const cells = dense + (a >> 2);
    uint32_t bad = 0;
    for (int l = 0; l < 16; ++l) {
      const SRec w = cells[l].w;
      bad |= uint32_t((w & sSplit) != 0) | uint32_t(uint32_t(s_clock(w) - w_lo) >= span);
    }
    if (bad) return false;
    for (uint32_t l = 0; l < 16; ++l) {  // lanes l and l + 16, as the groups below
      SCell& cell = cells[l];
      const SRec r0 = cell.r[0];
      const uint32_t holder = s_tid(r0) - w0;
      if (s_clock(r0) < floor || holder == l) {
        cell.r[0] = me[l];
        cell.r[1] = me[l + 16];
      } else if (holder == l + 16) {
        cell.r[0] = me[l + 16];
        cell.r[1] = me[l];
      } else {
        cell.r[1] = me[l + 16];
      }
    }
    return true;
  }
  struct Group {
    uint8_t first, last, step;
  };
  Group groups[16];
  uint32_t n = 0;
  if (runs) {
    for (uint32_t h = heads; h; h &= h - 1) {
      const uint32_t first = __builtin_ctz(h), next = (h & (h - 1)) ? __builtin_ctz(h & (h - 1)) : 32;
      groups[n++] = Group{uint8_t(first), uint8_t(next - 1), 1};
    }
  } else {
    for (uint8_t l = 0; l < 16; ++l) groups[n++] = Group{l, uint8_t(l + 16), 16};
  }
  for (uint32_t i = 0; i < n; ++i) {  // the lane loop's tests, before anything changes
    const uint64_t a = addrs[groups[i].first];
    if (a + 4 > limit || (a & 3)) return false;
    const SRec w = dense[a >> 2].w;
    if ((w & sSplit) || uint32_t(s_clock(w) - w_lo) >= span) return false;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const Group g = groups[i];
    SCell& cell = dense[addrs[g.first] >> 2];
    if (s_clock(cell.r[0]) < floor) {
      cell.r[0] = me[g.first];
      if (g.last != g.first) cell.r[1] = me[g.last];
      continue;
    }
    // r[0] held by thread `holder` of this epoch: its lane (if in the group) takes r[0], every other
    // lane r[1].
    const uint32_t holder = s_tid(cell.r[0]) - w0;
    const bool in_group = holder >= g.first && holder <= g.last && !((holder - g.first) & (g.step - 1));
    if (in_group) cell.r[0] = me[holder];
    if (!in_group || holder != g.last) cell.r[1] = me[g.last];
    else if (g.last != g.first) cell.r[1] = me[g.last - g.step];
  }
  return true;
}
__attribute__((noinline, target("avx2"))) bool shared_word_groups_avx2(SCell* dense, uint64_t limit,
                                                                      const uint64_t* addrs, uint32_t w_lo,
                                                                      uint64_t w_hi, uint32_t floor,
                                                                      const uint32_t* own, uint32_t w0,
                                                                      uint64_t pc_bits) {
  return shared_word_groups_body(dense, limit, addrs, w_lo, w_hi, floor, own, w0, pc_bits);
}
__attribute__((noinline)) bool shared_word_groups(SCell* dense, uint64_t limit, const uint64_t* addrs, uint32_t w_lo,
                                                  uint64_t w_hi, uint32_t floor, const uint32_t* own, uint32_t w0,
                                                  uint64_t pc_bits) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return shared_word_groups_avx2(dense, limit, addrs, w_lo, w_hi, floor, own, w0, pc_bits);
  return shared_word_groups_body(dense, limit, addrs, w_lo, w_hi, floor, own, w0, pc_bits);
}

// --- deferred shared reads -------------------------------------------------------------------------
// Between two barriers of the whole block, a tiled kernel's threads only read the tiles: every
// read's write record is below the floor (nothing wrote since the barrier that raised it) and
// initialized, so the read reports nothing and changes only read slots, which nothing looks at
// before the block's next other access of shared memory; and the barrier that ends the epoch raises
// the floor over every slot the epoch wrote, making them stale, which is all a later check asks of
// them. So such a read is only logged (defer_read); the block's next other shared access first
// replays the log as the short paths would have settled each read (settle_reads), and the next
// barrier of the whole block drops it unread.
// Reads a block logs before it settles them, and the room all logs of a launch may take (past it a
// log settles when full rather than growing): a launch keeps thousands of small blocks resident.
constexpr uint32_t kMaxDeferred = 1024, kMinDeferred = 16;
constexpr size_t kDeferredBudget = size_t(1) << 16;

// The ready test and the log entry of defer_read, once the lanes' clocks and addresses have been
// checked: their byte offsets in e.addr, the lowest and highest of them.
__attribute__((always_inline)) inline bool defer_commit(BlockState& bs, DeferredRead& e, uint64_t lo, uint64_t hi,
                                                       uint32_t size, uint32_t mask, uint32_t w0, uint64_t pc_bits) {
  const uint32_t n = size / 4;
  const uint64_t first = lo >> 2, span = (hi >> 2) + n - first;  // granules from the lowest lane's
  if (span > 56 || (~ready_bits(bs, first) & ((uint64_t(1) << span) - 1))) {  // then lane by lane
    uint64_t missing = 0;
    for (uint32_t m = mask; m; m &= m - 1) missing |= ~ready_bits(bs, e.addr[__builtin_ctz(m)] >> 2) & ((1u << n) - 1);
    if (missing) return false;
  }
  e.pc_bits = pc_bits;
  e.w0 = w0;
  e.mask = mask;
  e.cells = n;
  ++bs.ndeferred;
  return true;
}

// Logs a warp-instruction's read of `size` bytes a lane (4, 8 or 16) if every lane is at the floor's
// clock (none past a fence, a warp sync or a barrier it arrived at) and reads aligned granules of
// the region, each of them ready. The caller has checked the rest: a plain read, no thread with a
// vector clock, the block's `defer`. False: nothing was logged.
bool defer_read_lanes(BlockState& bs, const uint64_t* addrs, uint32_t size, uint32_t mask, uint32_t w0,
                      uint64_t pc_bits) {
  DeferredRead& e = bs.deferred[bs.ndeferred];
  const uint32_t* const own = bs.own_clocks() + w0;
  const bool late = (bs.late_warps >> (w0 / 32)) & 1;
  uint64_t lo = ~uint64_t(0), hi = 0, low = 0;
  for (uint32_t m = mask; m; m &= m - 1) {
    const int l = __builtin_ctz(m);
    if (late && own[l] > bs.floor) return false;
    lo = std::min(lo, addrs[l]);
    hi = std::max(hi, addrs[l]);
    low |= addrs[l];
    e.addr[l] = uint32_t(addrs[l]);
  }
  if ((low & 3) || hi >= bs.shared.bytes() || bs.shared.bytes() - hi < size) return false;
  return defer_commit(bs, e, lo, hi, size, mask, w0, pc_bits);
}
// The same for a full warp, eight lanes at a time.
__attribute__((noinline, target("avx2"))) bool defer_read_avx2(BlockState& bs, const uint64_t* addrs, uint32_t size,
                                                              uint32_t w0, uint64_t pc_bits) {
  DeferredRead& e = bs.deferred[bs.ndeferred];
  const __m256i low_words = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  __m256i late = _mm256_setzero_si256(), high = late, low = late, hi = late, lo = _mm256_set1_epi32(-1);
  if ((bs.late_warps >> (w0 / 32)) & 1) {
    const uint32_t* const own = bs.own_clocks() + w0;
    const __m256i floor = _mm256_set1_epi32(int(bs.floor));
    for (int i = 0; i < 4; ++i) {
      const __m256i o = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(own + 8 * i));
      late = _mm256_or_si256(late, _mm256_xor_si256(_mm256_max_epu32(o, floor), floor));  // own > floor
    }
  }
  for (int i = 0; i < 4; ++i) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(addrs + 8 * i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(addrs + 8 * i + 4));
    high = _mm256_or_si256(high, _mm256_or_si256(a, b));
    // The low words of the eight addresses, in lane order.
    const __m256i v = _mm256_permute2x128_si256(_mm256_permutevar8x32_epi32(a, low_words),
                                                _mm256_permutevar8x32_epi32(b, low_words), 0x20);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(e.addr + 8 * i), v);
    lo = _mm256_min_epu32(lo, v);
    hi = _mm256_max_epu32(hi, v);
    low = _mm256_or_si256(low, v);
  }
  if (!_mm256_testz_si256(late, late) || !_mm256_testz_si256(high, _mm256_set1_epi64x(int64_t(0xFFFFFFFF00000000ull))) ||
      !_mm256_testz_si256(low, _mm256_set1_epi32(3)))
    return false;
  __m128i l4 = _mm_min_epu32(_mm256_castsi256_si128(lo), _mm256_extracti128_si256(lo, 1));
  __m128i h4 = _mm_max_epu32(_mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1));
  l4 = _mm_min_epu32(l4, _mm_shuffle_epi32(l4, 0x4E));
  h4 = _mm_max_epu32(h4, _mm_shuffle_epi32(h4, 0x4E));
  l4 = _mm_min_epu32(l4, _mm_shuffle_epi32(l4, 0xB1));
  h4 = _mm_max_epu32(h4, _mm_shuffle_epi32(h4, 0xB1));
  const uint64_t min = uint32_t(_mm_cvtsi128_si32(l4)), max = uint32_t(_mm_cvtsi128_si32(h4));
  if (max + size > bs.shared.bytes()) return false;
  return defer_commit(bs, e, min, max, size, kFullWarp, w0, pc_bits);
}
// A full log settles, or grows while the launch's logs have room.
__attribute__((noinline)) void log_room(BlockState& bs) {
  size_t& room = G().deferred_entries;
  if (bs.ndeferred == kMaxDeferred || (bs.ndeferred >= kMinDeferred && room >= kDeferredBudget)) {
    settle_reads(bs);
  } else {
    const size_t n = std::min<size_t>(2 * bs.deferred.size() + kMinDeferred, kMaxDeferred);
    room += n - bs.deferred.size();
    bs.deferred.resize(n);
  }
}
const bool g_avx2 = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") != 0;
}();
inline bool defer_read(BlockState& bs, const uint64_t* addrs, uint32_t size, uint32_t mask, uint32_t w0,
                       uint64_t pc_bits) {
  if (bs.ndeferred == bs.deferred.size()) log_room(bs);
  if (g_avx2 && mask == kFullWarp) return defer_read_avx2(bs, addrs, size, w0, pc_bits);
  return defer_read_lanes(bs, addrs, size, mask, w0, pc_bits);
}

// shared_warp's short path for a full warp's writes of aligned words at increasing addresses
// (each lane its own word), decided on the 32 cells together where the lane loop settles each with
// its compares: every record of each word ordered before its writer (s_ordered, no vector clocks),
// no word split into bytes. False: nothing was changed, the lane loop decides.
bool shared_write_words(BlockState& bs, SCell* dense, uint64_t limit, const uint64_t* addrs, uint32_t w0,
                        uint64_t pc_bits, bool race_on, StoreLanesOf& stored) {
  uint64_t bits = 0, order = 0;  // loops the compiler vectorizes
  for (int i = 0; i < 32; ++i) bits |= addrs[i];
  for (int i = 1; i < 32; ++i) order |= uint64_t(addrs[i] <= addrs[i - 1]);
  if ((bits & 3) || order || addrs[31] + 4 > limit) return false;
  const uint32_t floor = bs.floor;
  // A record is unordered before its word's writer when it is at the floor's clock or later and
  // another thread's: the words' latest clock, below the floor, settles all 96 at once.
  uint64_t split = 0;
  uint32_t latest = 0;
  for (uint32_t i = 0; i < 32; ++i) {
    const SCell& c = dense[addrs[i] >> 2];
    split |= c.w;
    latest = std::max({latest, s_clock(c.w), s_clock(c.r[0]), s_clock(c.r[1])});
  }
  if (split & sSplit) return false;
  if (race_on && latest >= floor)
    for (uint32_t i = 0; i < 32; ++i) {
      const SCell& c = dense[addrs[i] >> 2];
      const uint32_t t = w0 + i;
      auto unordered = [&](SRec r) { return s_clock(r) >= floor && s_tid(r) != t; };
      if (unordered(c.w) || unordered(c.r[0]) || unordered(c.r[1])) return false;
    }
  const uint32_t* own = bs.own_clocks() + w0;
  uint64_t locs[32];
  for (uint32_t i = 0; i < 32; ++i) {
    const SRec me = uint64_t(std::max(own[i], floor)) | pc_bits | (uint64_t(w0 + i) << 54);  // s_make
    dense[addrs[i] >> 2] = SCell{me, {0, 0}};
    locs[i] = addrs[i] | (1ull << 63);
  }
  if (addrs[31] - addrs[0] == 31 * 4) set_ready(bs, addrs[0] >> 2, 32);
  else
    for (uint32_t i = 0; i < 32; ++i) set_ready(bs, addrs[i] >> 2, 1);
  stored.add_warp(locs);
  return true;
}

// The log's reads, in order, as shared_warp's short paths would have settled them then: each lane's
// record has the floor's clock (its clock then), and the replay comes before anything else changed
// the slots (any other access replays the log first) or a write record (a write also ends `defer`).
void settle_reads(BlockState& bs) {
  SCell* const dense = bs.shared.dense();
  const uint64_t limit = bs.shared.bytes();
  const uint32_t floor = bs.floor;
  static const uint32_t at_floor[32] = {};  // own clocks under the floor: every lane at the floor
  for (uint32_t i = 0; i < bs.ndeferred; ++i) {
    const DeferredRead& e = bs.deferred[i];
    if (e.mask == kFullWarp && e.cells == 1) {
      uint64_t addrs[32];
      for (int l = 0; l < 32; ++l) addrs[l] = e.addr[l];
      if (shared_word_groups(dense, limit, addrs, 0, uint64_t(1) << 32, floor, at_floor, e.w0, e.pc_bits)) continue;
    }
    for (uint32_t m = e.mask; m; m &= m - 1) {
      const uint32_t lane = uint32_t(__builtin_ctz(m)), t = e.w0 + lane;
      const SRec me = uint64_t(floor) | e.pc_bits | (uint64_t(t) << 54);  // s_make
      SCell* const cell = dense + (e.addr[lane] >> 2);
      for (uint32_t k = 0; k < e.cells; ++k) {
        const SRec r0 = cell[k].r[0];
        cell[k].r[s_clock(r0) < floor || s_tid(r0) == t ? 0 : 1] = me;  // s_op's read
      }
    }
  }
  bs.ndeferred = 0;
}

void shared_warp(Exec& x, BlockState* bs, uint32_t pc, const uint64_t* addrs, uint32_t size, uint32_t mask,
                 uint32_t kind) {
  // (`defer` is set only with the race check on.)
  if (!(kind & kWrite) && bs->defer && (size == 4 || size == 8 || size == 16) && bs->with_vc.empty() &&
      bs->shared.dense() && defer_read(*bs, addrs, size, mask, x.w->index * 32, s_make(0, pc, 0, 0)))
    return;
  Region<SCell>& sh = bs->shared;
  if (!sh.ok()) return;
  SCell* const dense = sh.dense();
  const uint64_t limit = sh.bytes();
  const bool race_on = g_checks & kRace, init_on = g_checks & kInit, wr = kind & kWrite;
  const uint32_t w0 = x.w->index * 32, floor = bs->floor, start = bs->start;
  const uint64_t block = bs->block;
  const bool any_vc = !bs->with_vc.empty();  // every thread with a vector clock is in with_vc
  const uint64_t pc_bits = s_make(0, pc, 0, 0);
  if (bs->ndeferred) settle_reads(*bs);
  if (wr) bs->defer = false;
  StoreLanesOf stored(x, mask, kind);
  uint32_t m = mask;
  // The common cases first, with no thread holding a vector clock: reads whose cells' write
  // records are ordered before every thread of the block (below its floor, or the race check off),
  // and writes whose cells' records are all ordered before the writer, each cell as s_op would
  // settle it: 4, 8 or 16 aligned bytes (whole granules), or bytes and halves of a granule already
  // split into byte cells. The first lane that is neither goes to the loop below, with the rest.
  // N cells a lane: whole granules, or (Bytes) byte cells of a split one.
  auto short_paths = [&](auto cells, auto bytes_tag) __attribute__((always_inline)) {
    constexpr uint32_t n = decltype(cells)::value;
    constexpr bool bytes = decltype(bytes_tag)::value;
    auto cells_of = [&](uint64_t a) __attribute__((always_inline)) -> SCell* {  // null: the loop below
      if (a + size > limit) return nullptr;
      if constexpr (!bytes) {
        return (a & 3) ? nullptr : dense + (a >> 2);
      } else {
        if ((a & 3) + size > 4 || !(dense[a >> 2].w & sSplit)) return nullptr;
        SCell* b = sh.byte_cells(a >> 2);
        return b ? b + (a & 3) : nullptr;
      }
    };
    if (wr) {
      if constexpr (n == 1 && !bytes)
        if (m == kFullWarp && shared_write_words(*bs, dense, limit, addrs, w0, pc_bits, race_on, stored)) return void(m = 0);
      for (; m; m &= m - 1) {
        const int lane = __builtin_ctz(m);
        const uint64_t a = addrs[lane];
        SCell* cell = cells_of(a);
        if (!cell) break;
        const uint32_t t = w0 + uint32_t(lane);
        auto ordered = [&](SRec r) { return s_clock(r) < floor || s_tid(r) == t; };  // s_ordered
        bool ok = true;
        for (uint32_t k = 0; k < n; ++k)
          ok &= !(cell[k].w & sSplit) &&
                (!race_on || (ordered(cell[k].w) && ordered(cell[k].r[0]) && ordered(cell[k].r[1])));
        if (!ok) break;
        stored.add(lane, a | (1ull << 63));
        const SRec me = uint64_t(bs->clock_of(t)) | pc_bits | (uint64_t(t) << 54);  // s_make
        for (uint32_t k = 0; k < n; ++k) cell[k] = SCell{me, {0, 0}};
        if constexpr (!bytes) set_ready(*bs, a >> 2, n);
      }
      return;
    }
    if constexpr (n == 1 && !bytes) {
      if (m == kFullWarp && shared_word_groups(dense, limit, addrs, init_on ? start : 0,
                                               race_on ? floor : uint64_t(1) << 32, floor, bs->own_clocks() + w0, w0, pc_bits))
        return void(m = 0);
    }
    for (; m; m &= m - 1) {
      const int lane = __builtin_ctz(m);
      const uint64_t a = addrs[lane];
      SCell* cell = cells_of(a);
      if (!cell) break;
      bool ok = true;
      for (uint32_t k = 0; k < n; ++k) {
        const SRec w = cell[k].w;
        ok &= !(w & sSplit) && !(init_on && s_clock(w) < start) && !(race_on && s_clock(w) >= floor);
      }
      if (!ok) break;
      const uint32_t t = w0 + uint32_t(lane);
      const SRec me = uint64_t(bs->clock_of(t)) | pc_bits | (uint64_t(t) << 54);  // s_make
      for (uint32_t k = 0; k < n; ++k) {
        const SRec r0 = cell[k].r[0];
        cell[k].r[s_clock(r0) < floor || s_tid(r0) == t ? 0 : 1] = me;  // s_op's read
      }
    }
  };
  if (dense && !any_vc) {
    using One = std::integral_constant<uint32_t, 1>;
    using Two = std::integral_constant<uint32_t, 2>;
    using Four = std::integral_constant<uint32_t, 4>;
    switch (size) {
      case 1: short_paths(One{}, std::true_type{}); break;
      case 2: short_paths(Two{}, std::true_type{}); break;
      case 4: short_paths(One{}, std::false_type{}); break;
      case 8: short_paths(Two{}, std::false_type{}); break;
      case 16: short_paths(Four{}, std::false_type{}); break;
      default: break;
    }
  }
  for (; m; m &= m - 1) {
    const int lane = __builtin_ctz(m);
    const uint64_t a = addrs[lane];
    if (a + size > limit) continue;
    const uint32_t t = w0 + uint32_t(lane);
    if (size == 4 && !(a & 3)) {
      SCell* cp = dense ? dense + (a >> 2) : sh.granule(a >> 2);
      if (!cp) {  // over the shadow's budget: nothing to check
        stored.add(lane, a | (1ull << 63));
        continue;
      }
      SCell& cell = *cp;
      if (!is_split(cell)) {
        const VC* vc = any_vc ? bs->t[t].vc.get() : nullptr;
        auto ordered = [&](SRec r) __attribute__((always_inline)) {  // s_ordered
          const uint32_t clock = s_clock(r), who = s_tid(r);
          return clock < floor || who == t || (vc && covers(vc, block, who, clock));
        };
        const SRec me = s_make(bs->clock_of(t), pc, 0, t);
        if (wr) {
          if (!race_on || (ordered(cell.w) && ordered(cell.r[0]) && ordered(cell.r[1]))) {
            stored.add(lane, a | (1ull << 63));
            cell.w = me;
            cell.r[0] = cell.r[1] = 0;
            set_ready(*bs, a >> 2, 1);
            continue;
          }
        } else if ((!init_on || s_clock(cell.w) >= start) && (!race_on || ordered(cell.w))) {
          if (ordered(cell.r[0])) cell.r[0] = me;
          else cell.r[1] = me;
          continue;
        }
      }
    }
    access_lane(x, bs, pc, true, a, size, lane, kind, nullptr);
  }
}

// global_warp's byte and half-word accesses within one granule: decided as the 4-byte ones are,
// on the granule's byte cells once it is split (the first such access splits it, in access_lane).
// False: access_lane decides it (nothing was changed).
__attribute__((noinline)) bool global_sub(BlockState* bs, GShadow* g, uint32_t pc, uint64_t off, uint32_t size,
                                          uint32_t t, uint32_t kind, uint32_t base, StoreLanesOf& stored,
                                          int lane, uint64_t a) {
  const bool race_on = g_checks & kRace, init_on = g_checks & kInit;
  const bool wr = kind & kWrite, rd = kind & kRead, nc_load = kind & kNc;
  const uint32_t floor = bs->floor, tpb = bs->tpb, key_base = bs->key_base, me_key = key_base + t;
  const uint64_t block = bs->block;
  const uint32_t sub = uint32_t(off & 3);
  const uint64_t bits = ((1ull << size) - 1) << (off & 63);
  uint64_t* init = init_on ? g->init : nullptr;
  if (init && rd && (init[off >> 6] & bits) != bits) return false;  // uninit_global
  if (race_on && g->race.ok()) {
    const GSlot* slot = g->race.slot(off >> 2);
    if (!slot || !(slot->pc & fSplit)) return false;
    GCell* cell = slot_cells(*slot) + sub;
    const VC* vc = !bs->with_vc.empty() ? bs->t[t].vc.get() : nullptr;
    auto ordered = [&](const GRec& r) __attribute__((always_inline)) {  // g_ordered
      if (r.clock < base || r.key == me_key) return true;
      const uint32_t d = r.key - key_base;
      if (d < tpb) return r.clock < floor || (vc && covers(vc, block, d, r.clock));
      return vc && covers(vc, r.key / tpb, r.key % tpb, r.clock);
    };
    for (uint32_t i = 0; i < size; ++i) {
      const GCell& ci = cell[i];
      if (!ordered(ci.w)) return false;
      if (wr && !(ordered(ci.r[0]) && ordered(ci.r[1]))) return false;
      // nc_access: the latest write of the bytes, by another thread in this launch, is reported.
      if (nc_load && ci.w.clock >= base && ci.w.clock && ci.w.key != me_key) return false;
    }
    if (wr && g->nc.ok() && g->nc_last >= base) return false;  // nc_access
    if (nc_load && !g->nc.ok()) return false;                  // made by nc_access
    const uint32_t clock = bs->clock_of(t);
    const GRec me{me_key, clock, (pc & kPcMask) | ((kind & kCta) ? fCta : 0)};
    for (uint32_t i = 0; i < size; ++i) {
      GCell& ci = cell[i];
      if (wr) {
        ci.w = me;
        ci.r[0] = GRec{};
        ci.r[1].clock = 0;
      } else if (ordered(ci.r[0])) {
        ci.r[0] = me;
      } else {
        ci.r[1] = me;
      }
    }
    if (nc_load) {
      g->nc_last = std::max(g->nc_last, clock);
      if (NcSlot* n = g->nc.slot(off >> 2)) g->nc.note(*n, clock, me_key, pc, uint8_t(((1u << size) - 1) << sub), base);
    }
  }
  if (init && wr) init[off >> 6] |= bits;
  stored.add(lane, a);
  return true;
}

// Whether lane i's address is addrs[0] + step * i for every lane (AVX2: a quarter of the loop).
__attribute__((noinline, target("avx2"))) bool steps_by_avx2(const uint64_t* addrs, uint64_t step) {
  const __m256i first = _mm256_set1_epi64x(int64_t(addrs[0])), four = _mm256_set1_epi64x(int64_t(4 * step));
  __m256i want = _mm256_setr_epi64x(0, int64_t(step), int64_t(2 * step), int64_t(3 * step)), apart = _mm256_setzero_si256();
  for (int i = 0; i < 32; i += 4) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(addrs + i));
    apart = _mm256_or_si256(apart, _mm256_xor_si256(_mm256_sub_epi64(a, first), want));
    want = _mm256_add_epi64(want, four);
  }
  return _mm256_testz_si256(apart, apart);
}

// global_warp's most common case, a full warp reading or writing 4-, 8- or 16-byte elements of one
// allocation at increasing addresses (different granules: consecutive elements, rows of a tile, a
// stride), decided on the warp's shadow slots together where global_warp's lane loop or
// access_lane would settle each with its few compares (a plain slot they leave plain, or a full
// cell), and no thread of the block has a vector clock. False: nothing was changed, the lane loop
// decides.
template <uint32_t N>  // granules a lane
bool global_rows(BlockState* bs, uint32_t w0, uint32_t pc, const uint64_t* addrs, uint32_t kind,
                 StoreLanesOf& stored) {
  constexpr uint32_t n = N, size = 4 * N;
  const uint64_t a0 = addrs[0], a31 = addrs[31];
  // Lane i's offset in a run, from a table: the compiler vectorizes this form, not a * i inside.
  static constexpr auto step = [] {
    std::array<uint64_t, 32> s{};
    for (uint32_t i = 0; i < 32; ++i) s[i] = size * i;
    return s;
  }();
  bool consecutive;
  if (g_avx2) {
    consecutive = steps_by_avx2(addrs, size);
  } else {
    uint64_t apart = 0;  // a loop the compiler vectorizes
    for (int i = 0; i < 32; ++i) apart |= (addrs[i] - a0) ^ step[i];
    consecutive = !apart;
  }
  // Runs of consecutive elements: the whole warp, or each half (two rows of a tile), else lanes.
  uint32_t run_lanes = 32;
  if (!consecutive) {
    uint64_t apart_halves = 0;
    for (int i = 0; i < 16; ++i) apart_halves |= (addrs[i] - a0) ^ step[i];
    for (int i = 0; i < 16; ++i) apart_halves |= (addrs[16 + i] - addrs[16]) ^ step[i];
    run_lanes = apart_halves ? 1 : 16;
  }
  bool increasing = !(a0 & 3);
  if (!consecutive) {
    uint64_t bits = 0;
    for (int i = 0; i < 32; ++i) bits |= addrs[i];
    increasing = !(bits & 3);
    for (int i = 1; i < 32; ++i) increasing &= addrs[i] >= addrs[i - 1] + size;
  }
  if (!increasing || a31 + size - a0 > ~0u) return false;
  const Allocation* al = global_of(a0, uint32_t(a31 + size - a0));
  if (!al) return false;
  auto* g = static_cast<GShadow*>(al->shadow);
  const bool race_on = g_checks & kRace, init_on = g_checks & kInit;
  const bool wr = kind & kWrite, nc_load = kind & kNc;
  auto off = [&](uint32_t lane) { return addrs[lane] - al->base; };
  uint64_t* init = init_on ? g->init : nullptr;
  if (init && !wr)  // uninit_global
    for (uint32_t i = 0; i < 32; i += run_lanes)
      if (!bits_all(init, off(i), run_lanes * size)) return false;
  if (race_on && g->race.ok()) {
    if (wr && g->nc.ok() && g->nc_last >= G().launch.base) return false;  // nc_access
    if (nc_load && !g->nc.ok()) return false;                            // made by nc_access
    // Slot j is granule j % n of lane j / n.
    GSlot* slot[128];
    auto gran = [&](uint32_t j) { return (off(j / n) >> 2) + j % n; };
    // Halves of the warp on one whole chunk, lane i on its granule i, whose chunk has no slots: on
    // its row record (SlotRegion). Their lanes are left out of `lanes`.
    GSlot* row[2] = {nullptr, nullptr};
    bool whole[2] = {false, false};
    uint32_t lanes = ~0u;
    if constexpr (n == 1)
      for (uint32_t h = 0; h < 2; ++h) {
        const uint64_t g0 = gran(16 * h);
        whole[h] = run_lanes >= 16 && g0 % kChunkGranules == 0;  // a run of 16 consecutive words
        if (whole[h] && (row[h] = g->race.row(g0 / kChunkGranules))) lanes &= ~(0xFFFFu << (16 * h));
      }
    // A chunk's slots lie together: each chunk is looked up once.
    if (n == 1 && run_lanes >= 16) {  // a half's 16 granules, in one chunk or two
      for (uint32_t h = 0; h < 2; ++h) {
        if (!((lanes >> (16 * h)) & 1)) continue;  // (a half's lanes are all in `lanes` or none)
        const uint64_t g0 = gran(16 * h);
        const uint32_t first = uint32_t(std::min<uint64_t>(16, kChunkGranules - g0 % kChunkGranules));
        GSlot* const s0 = g->race.slot(g0);
        if (!s0) return false;
        for (uint32_t i = 0; i < first; ++i) slot[16 * h + i] = s0 + i;
        if (first == 16) continue;
        GSlot* const s1 = g->race.slot(g0 + first);
        if (!s1) return false;
        for (uint32_t i = first; i < 16; ++i) slot[16 * h + i] = s1 + (i - first);
      }
    } else {
      for (uint32_t j = 0; lanes && j < 32 * n; ++j) {
        if (!(lanes >> (j / n) & 1)) continue;
        if (j && (lanes >> ((j - 1) / n) & 1) && gran(j) % kChunkGranules && gran(j) == gran(j - 1) + 1)
          slot[j] = slot[j - 1] + 1;
        else if (!(slot[j] = g->race.slot(gran(j))))
          return false;
      }
    }
    const uint32_t base = G().launch.base, floor = bs->floor, tpb = bs->tpb, key_base = bs->key_base;
    const uint32_t me0 = key_base + w0;
    // g_ordered without vector clocks: below the base, the thread's own, or the block's below its floor.
    auto ordered = [&](const GRec& r, uint32_t me) __attribute__((always_inline)) {
      return r.clock < base || r.key == me || (r.key - key_base < tpb && r.clock < floor);
    };
    const uint32_t flags = (pc & kPcMask) | ((kind & kCta) ? fCta : 0);
    // Half h's threads' one clock (false: they differ), worked out once: the floor, unless a
    // thread of the warp ticked since it rose (late_warps).
    const bool late = (bs->late_warps >> (w0 / 32)) & 1;
    int one_clock[2] = {late ? -1 : 1, late ? -1 : 1};
    uint32_t half_clocks[2] = {floor, floor};
    auto half_clock = [&](uint32_t h, uint32_t* clock) {
      if (one_clock[h] < 0) {
        const uint32_t* own = bs->own_clocks() + w0 + 16 * h;
        const uint32_t c = std::max(own[0], floor);  // clock_of
        uint32_t differ = 0;
        for (uint32_t i = 1; i < 16; ++i) differ |= std::max(own[i], floor) ^ c;
        half_clocks[h] = c;
        one_clock[h] = !differ;
      }
      *clock = half_clocks[h];
      return one_clock[h] == 1;
    };
    // Which of a row's 16 stretched records are ordered before the half's threads (a bit each).
    // ordered(stretch(r, i), me0 + 16 * h + i) for each i: the clock and the key's difference are the row's.
    auto row_ordered = [&](const GRec& r, uint32_t h) {
      if (r.clock < base || r.key == me0 + 16 * h) return 0xFFFFu;
      if (r.clock >= floor) return 0u;
      uint32_t bits = 0;
      for (uint32_t i = 0; i < 16; ++i) bits |= uint32_t(r.key + i - key_base < tpb) << i;
      return bits;
    };
    // What a half on a row leaves, as the lane loop would leave each granule: a plain row (the
    // half's records, or the granules' slots where their clocks differ), or a full row, a
    // chunk's 16 full cells that are three rows stretched. A full row is made where each granule's
    // slot would become a full cell (a read after another thread's unordered read, or after a live
    // write), and kept while every granule would take the half's record in the same place.
    enum Leaves { kPlainRow, kReadBeside, kReadAfterWrite, kFullFirstRead, kFullSecondRead, kFullWrite };
    Leaves leaves[2] = {kPlainRow, kPlainRow};
    GCell* made[2] = {nullptr, nullptr};
    bool ok = true;
    for (uint32_t h = 0; h < 2; ++h) {
      if (!row[h]) continue;
      const GSlot r = *row[h];
      uint32_t clock;
      if (r.pc & fSlotFull) {
        const GCell& f = *row_target<GCell>(r);
        ok &= row_ordered(f.w, h) == 0xFFFF && !(nc_load && live(f.w, base) && f.w.key != me0 + 16 * h);
        if (wr) {
          ok &= row_ordered(f.r[0], h) == 0xFFFF && row_ordered(f.r[1], h) == 0xFFFF;
          leaves[h] = kFullWrite;
        } else {
          const uint32_t first = row_ordered(f.r[0], h);
          ok &= first == 0 || first == 0xFFFF;
          leaves[h] = first ? kFullFirstRead : kFullSecondRead;
        }
        ok &= half_clock(h, &clock);
      } else if (wr || !live(r, base)) {
        ok &= wr ? row_ordered(r, h) == 0xFFFF : true;
      } else if (r.pc & fSlotRead) {  // a live read
        const uint32_t before = row_ordered(r, h);
        ok &= before == 0 || before == 0xFFFF;
        if (!before) {
          leaves[h] = kReadBeside;
          ok &= half_clock(h, &clock);
        }
      } else {  // a live write
        ok &= row_ordered(r, h) == 0xFFFF && !(nc_load && r.key != me0 + 16 * h) && half_clock(h, &clock);
        leaves[h] = kReadAfterWrite;
      }
    }
    for (uint32_t j = 0; lanes && j < 32 * n; ++j) {
      if (!(lanes >> (j / n) & 1)) continue;
      const GSlot r = *slot[j];
      const uint32_t me = me0 + j / n;
      if (r.pc & fSplit) return false;
      if (__builtin_expect(r.pc & fSlotFull, 0)) {  // as global_warp's lane loop on a full cell
        const GCell& c = *slot_cells(r);
        ok &= ordered(c.w, me) && (!wr || (ordered(c.r[0], me) && ordered(c.r[1], me))) &&
              !(nc_load && live(c.w, base) && c.w.key != me);
      } else {
        // A read keeps a plain slot when the slot holds a read ordered before it or no live write.
        ok &= (wr || (r.pc & fSlotRead)) ? ordered(r, me) : !live(r, base);
      }
    }
    if (!ok) return false;
    // A new full row's cells, taken where the lane loop would take its granules' 16 (over the
    // budget the lane loop decides).
    for (uint32_t h = 0; h < 2; ++h)
      if (row[h] && (leaves[h] == kReadBeside || leaves[h] == kReadAfterWrite) &&
          !(made[h] = g->race.more(kChunkGranules)))
        return false;
    for (uint32_t h = 0; h < 2; ++h) {
      if (!row[h]) continue;
      uint32_t clock;
      if (leaves[h] != kPlainRow) {
        half_clock(h, &clock);
        const GRec me{me0 + 16 * h, clock, flags};
        GSlot& r = *row[h];
        if (leaves[h] == kReadBeside || leaves[h] == kReadAfterWrite) {
          made[h][0] = leaves[h] == kReadBeside ? GCell{GRec{}, {GRec{r.key, r.clock, r.pc & ~fSlotRead}, me}}
                                                : GCell{r, {me, GRec{}}};
          point_row(r, made[h], fSlotFull);
          continue;
        }
        GCell& f = *row_target<GCell>(r);
        if (leaves[h] == kFullWrite) {
          f.w = me;
          f.r[0] = GRec{};
          f.r[1].clock = 0;
        } else {
          f.r[leaves[h] == kFullFirstRead ? 0 : 1] = me;
        }
        continue;
      }
      // A plain row takes the half's records as its new row when they share one clock, else the
      // chunk is made into slots and they are written there.
      if (half_clock(h, &clock)) {
        *row[h] = GSlot{me0 + 16 * h, clock, wr ? flags : flags | fSlotRead};
        continue;
      }
      const uint64_t c = gran(16 * h) / kChunkGranules;
      g->race.unfold(c);
      if (GSlot* sl = g->race.slot(c * kChunkGranules))
        for (uint32_t i = 0; i < 16; ++i) {
          const GRec me{me0 + 16 * h + i, bs->clock_of(w0 + 16 * h + i), flags};
          sl[i] = wr ? me : GSlot{me.key, me.clock, flags | fSlotRead};
        }
    }
    for (uint32_t j = 0; lanes && j < 32 * n; ++j) {
      if (!(lanes >> (j / n) & 1)) continue;
      const GRec me{me0 + j / n, bs->clock_of(w0 + j / n), flags};
      GSlot& r = *slot[j];
      if (__builtin_expect(!(r.pc & fSlotFull), 1)) {
        r = wr ? me : GSlot{me.key, me.clock, flags | fSlotRead};
        continue;
      }
      GCell& c = *slot_cells(r);
      if (wr) {
        c.w = me;
        c.r[0] = GRec{};
        c.r[1].clock = 0;
      } else if (ordered(c.r[0], me.key)) {
        c.r[0] = me;
      } else {
        c.r[1] = me;
      }
    }
    if (nc_load) {
      uint32_t nc_lanes = ~0u;  // as the race rows: a whole chunk's note on its row (NcShadow::note)
      for (uint32_t h = 0; h < 2; ++h) {
        if (!whole[h]) continue;
        NcSlot* r = g->nc.row(gran(16 * h) / kChunkGranules);
        const uint32_t key = me0 + 16 * h;
        uint32_t clock;
        if (!r || !half_clock(h, &clock) || (r->clock >= base && r->clock && r->key != key)) continue;
        nc_lanes &= ~(0xFFFFu << (16 * h));
        g->nc_last = std::max(g->nc_last, clock);
        if (r->clock >= base && r->clock) r->pc |= 0xFu << 24;
        else *r = NcSlot{clock, key, (pc & kPcMask) | 0xFu << 24};
      }
      NcSlot* nc = nullptr;
      for (uint32_t j = 0; nc_lanes && j < 32 * n; ++j) {
        if (!(nc_lanes >> (j / n) & 1)) {
          nc = nullptr;
          continue;
        }
        const uint32_t clock = bs->clock_of(w0 + j / n);
        g->nc_last = std::max(g->nc_last, clock);
        nc = nc && gran(j) % kChunkGranules && gran(j) == gran(j - 1) + 1 ? nc + 1 : g->nc.slot(gran(j));
        if (nc) g->nc.note(*nc, clock, me0 + j / n, pc, 0xF, base);
      }
    }
  }
  if (init && wr)
    for (uint32_t i = 0; i < 32; i += run_lanes) bits_set(init, off(i), run_lanes * size);
  stored.add_warp(addrs);
  // A run of consecutive elements: as its lanes' notes, the first lane's, then the rest, which can
  // only extend the range the first one's lies in (runtime/streams.h).
  if (streams::g_recording)
    for (uint32_t i = 0; i < 32; i += run_lanes) {
      streams::note_access(addrs[i], size, kind);
      if (run_lanes > 1) streams::note_access(addrs[i] + size, (run_lanes - 1) * size, kind);
    }
  return true;
}

void global_warp(Exec& x, BlockState* bs, uint32_t pc, const uint64_t* addrs, uint32_t size, uint32_t mask,
                 uint32_t kind) {
  const bool race_on = g_checks & kRace, init_on = g_checks & kInit;
  const bool wr = kind & kWrite, rd = kind & kRead, nc_load = kind & kNc;
  const uint32_t w0 = x.w->index * 32, floor = bs->floor, tpb = bs->tpb, key_base = bs->key_base;
  const uint32_t base = G().launch.base;
  const uint64_t block = bs->block;
  const bool any_vc = !bs->with_vc.empty();  // every thread with a vector clock is in with_vc
  StoreLanesOf stored(x, mask, kind);
  if (mask == kFullWarp && !any_vc &&
      (size == 4    ? global_rows<1>(bs, w0, pc, addrs, kind, stored)
       : size == 8  ? global_rows<2>(bs, w0, pc, addrs, kind, stored)
       : size == 16 ? global_rows<4>(bs, w0, pc, addrs, kind, stored)
                    : false))
    return;
  const Allocation* al = nullptr;
  GShadow* g = nullptr;
  uint64_t lo = 1, hi = 0;  // the allocation's bytes
  for (uint32_t m = mask; m; m &= m - 1) {
    const int lane = __builtin_ctz(m);
    const uint64_t a = addrs[lane];
    if (a < lo || a + size > hi) {
      al = global_of(a, size);
      if (!al) continue;
      g = static_cast<GShadow*>(al->shadow);
      lo = al->base;
      hi = al->base + al->bytes;
    }
    const uint32_t t = w0 + uint32_t(lane), me_key = key_base + t;
    const uint64_t off = a - lo;
    bool done = false;
    if (size == 4 && !(off & 3)) do {
      uint64_t* init = init_on ? g->init : nullptr;
      if (init && rd && ((init[off >> 6] >> (off & 63)) & 0xF) != 0xF) break;  // uninit_global
      if (race_on && g->race.ok()) {
        GSlot* slot = g->race.slot(off >> 2);
        if (!slot || (slot->pc & fSplit)) break;
        const VC* vc = any_vc ? bs->t[t].vc.get() : nullptr;
        auto ordered = [&](const GRec& r) __attribute__((always_inline)) {  // g_ordered
          if (r.clock < base || r.key == me_key) return true;
          const uint32_t d = r.key - key_base;
          if (d < tpb) return r.clock < floor || (vc && covers(vc, block, d, r.clock));
          return vc && covers(vc, r.key / tpb, r.key % tpb, r.clock);
        };
        GCell* cell = (slot->pc & fSlotFull) ? slot_cells(*slot) : nullptr;
        const bool in_read = !cell && (slot->pc & fSlotRead);  // a plain slot holding r[0]
        static constexpr GRec kNone{};
        const GRec& w = cell ? cell->w : in_read ? kNone : *slot;
        if (!ordered(w)) break;
        if (wr && !(cell ? ordered(cell->r[0]) && ordered(cell->r[1]) : ordered(*slot))) break;
        if (wr && g->nc.ok() && g->nc_last >= base) break;  // nc_access
        if (nc_load) {
          // nc_access: the granule's latest write, by another thread in this launch, is reported.
          if (w.clock >= base && w.clock && w.key != me_key) break;
          if (!g->nc.ok()) break;  // made by nc_access
        }
        // A read that leaves two live records (a read unordered with the slot's read, or after a
        // live write) makes a full cell: access_lane does that.
        if (!cell && !wr && (in_read ? !ordered(*slot) : live(*slot, base))) break;
        const uint32_t clock = bs->clock_of(t);
        const GRec me{me_key, clock, (pc & kPcMask) | ((kind & kCta) ? fCta : 0)};
        if (!cell) {
          *slot = wr ? me : GSlot{me.key, me.clock, me.pc | fSlotRead};
        } else if (wr) {
          cell->w = me;
          cell->r[0] = GRec{};
          cell->r[1].clock = 0;
        } else if (ordered(cell->r[0])) {
          cell->r[0] = me;
        } else {
          cell->r[1] = me;
        }
        if (nc_load) {
          g->nc_last = std::max(g->nc_last, clock);
          if (NcSlot* n = g->nc.slot(off >> 2)) g->nc.note(*n, clock, me_key, pc, 0xF, base);
        }
      }
      if (init && wr) init[off >> 6] |= 0xFull << (off & 63);
      stored.add(lane, a);
      done = true;
    } while (false);
    else if (size < 4 && (off & 3) + size <= 4)
      done = global_sub(bs, g, pc, off, size, t, kind, base, stored, lane, a);
    if (!done) access_lane(x, bs, pc, false, a, size, lane, kind, al);
    if (streams::g_recording) streams::note_access(a, size, kind);  // runtime/streams.h
  }
}

}  // namespace

void access_warp(Exec& x, uint32_t pc, Space space, const uint64_t* addrs, uint32_t size, uint32_t mask,
                 uint32_t kind) {
  BlockState* bs = x.b->san;
  if (!bs || size == 0 || !mask) return;
  // Strong accesses and atomics (synchronization, held reads) go lane by lane.
  auto each = [&](uint32_t lanes, Space s) {
    for (uint32_t m = lanes; m; m &= m - 1)
      access(x, pc, s, addrs[__builtin_ctz(m)], size, __builtin_ctz(m), kind);
  };
  if (kind & (kStrong | kAtomic | kCas)) return each(mask, space);
  uint64_t shared[32];
  if (space == Space::generic) {
    uint32_t in_shared = 0, in_local = 0;
    for (uint32_t m = mask; m; m &= m - 1) {
      const int lane = __builtin_ctz(m);
      const uint64_t a = addrs[lane];
      if (a - kSharedWindow < kWindowSize) {
        in_shared |= 1u << lane;
        shared[lane] = a - kSharedWindow;
      } else if (a - kLocalWindow < kWindowSize) {
        in_local |= 1u << lane;
      }
    }
    if (in_shared == mask) {
      space = Space::shared;
      addrs = shared;
    } else if (!in_shared && !in_local) {
      space = Space::global;
    } else {
      return each(mask & ~in_local, Space::generic);
    }
  }
  if (space == Space::shared) {
    if (__builtin_expect(x.b->cluster != nullptr, 0)) return each(mask, space);
    shared_warp(x, bs, pc, addrs, size, mask, kind);
  } else if (space == Space::global || space == Space::konst) {
    global_warp(x, bs, pc, addrs, size, mask, kind);
  }
}

// ---------------------------------------------------------------------------------------------
void fence(Exec& x, uint32_t mask) {
  BlockState* bs = x.b->san;
  if (!bs || !(g_checks & kRace)) return;
  for (uint32_t m = mask; m; m &= m - 1) {
    const uint32_t t = x.w->index * 32 + uint32_t(__builtin_ctz(m));
    TState& ts = bs->t[t];
    if (ts.pending) {
      bs->set_vc(t, join(ts.vc, ts.pending));
      ts.pending.reset();
    }
    ts.fence = snapshot(*bs, t);
    ts.fenced = true;
    bs->dirty = true;
    bs->tick(t);
  }
}

void warp_sync(Exec& x, uint32_t mask) {
  BlockState* bs = x.b->san;
  if (!bs || !(g_checks & kRace)) return;
  VCRef j;
  std::vector<Entry> own;
  for (uint32_t m = mask; m; m &= m - 1) {
    const uint32_t t = x.w->index * 32 + uint32_t(__builtin_ctz(m));
    if (bs->t[t].vc) j = join(j, bs->t[t].vc);
    own.push_back({vkey(bs->block, t), bs->clock_of(t)});
  }
  j = join(j, make_vc(std::move(own)));
  for (uint32_t m = mask; m; m &= m - 1) {
    const uint32_t t = x.w->index * 32 + uint32_t(__builtin_ctz(m));
    bs->set_vc(t, j);
    bs->tick(t);
  }
}

void threads_sync(Block& b, uint32_t first, uint32_t count) {
  BlockState* bs = b.san;
  if (!bs || !(g_checks & kRace)) return;
  VCRef j;
  std::vector<Entry> own;
  for (uint32_t t = first; t < first + count && t < bs->tpb; ++t) {
    if (bs->t[t].vc) j = join(j, bs->t[t].vc);
    own.push_back({vkey(bs->block, t), bs->clock_of(t)});
  }
  j = join(j, make_vc(std::move(own)));
  for (uint32_t t = first; t < first + count && t < bs->tpb; ++t) {
    bs->set_vc(t, j);
    bs->tick(t);
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
  if (!arrive_only && bs->with_vc.empty() && !bs->dirty) {
    // No thread of the block knows anything or has pending knowledge: the lanes only count and tick.
    bs->tick_warp(x.w->index * 32, mask);
    B.nsync += uint32_t(__builtin_popcount(mask));
    return;
  }
  for (uint32_t m = mask; m; m &= m - 1) {
    const uint32_t t = x.w->index * 32 + uint32_t(__builtin_ctz(m));
    TState& ts = bs->t[t];
    if (!arrive_only && ts.pending) {
      bs->set_vc(t, join(ts.vc, ts.pending));
      ts.pending.reset();
    }
    if (ts.vc && ts.vc != B.join) B.join = join(B.join, ts.vc);
    // A waiting thread's clock stays as it arrived (plus one) until the release; a thread that
    // only arrives runs on, so its clock is kept here.
    if (arrive_only) {
      B.arrivals.push_back({vkey(bs->block, t), bs->clock_of(t)});
      ++B.narrive;
    } else {
      ++B.nsync;
    }
    bs->tick(t);
  }
}

void bar_release(Block& b, uint32_t id) {
  BlockState* bs = b.san;
  if (!bs || id >= 16) return;
  BarState& B = bs->bars[id];
  if (g_checks & kRace) {
    if (B.narrive == 0 && B.nsync == bs->tpb) {
      bs->floor = bs->top = bs->top + 1;
      bs->late_warps = 0;
      bs->ndeferred = 0;  // every read slot they wrote is below the floor now (see defer_read)
      bs->defer = b.cluster == nullptr;
      const VCRef cross = strip(B.join, bs->block);
      if (cross) {
        for (uint32_t i = 0; i < bs->tpb; ++i) bs->t[i].vc = cross;
        bs->with_vc.resize(bs->tpb);
        for (uint32_t i = 0; i < bs->tpb; ++i) bs->with_vc[i] = i;
      } else {
        for (uint32_t i : bs->with_vc) bs->t[i].vc.reset();
        bs->with_vc.clear();
      }
    } else {
      // The waiters are the lanes parked at this barrier.
      std::vector<uint32_t> waiters;
      std::vector<Entry> own = std::move(B.arrivals);
      for (const Warp& w : b.warps)
        for (uint32_t m = w.parked; m; m &= m - 1) {
          const int lane = __builtin_ctz(m);
          if (w.park_bar[lane] != int8_t(id)) continue;
          const uint32_t t = w.index * 32 + uint32_t(lane);
          waiters.push_back(t);
          own.push_back({vkey(bs->block, t), bs->clock_of(t) - 1});
        }
      const VCRef j = join(B.join, make_vc(std::move(own)));
      for (uint32_t t : waiters) bs->set_vc(t, join(bs->t[t].vc, j));
    }
  }
  B.reset();
}

namespace {

__attribute__((noinline, cold)) void undefined_used(const Exec& x, uint32_t origin) {
  const LaunchState& L = G().launch;
  if (origin >= L.undefined_reads.size()) return;
  const LaunchState::UndefinedRead& r = L.undefined_reads[origin];
  note(fInitShared, r.pc, 0, [&] {
    return "kernel " + x.k->name + ", " + thread_name(*x.l, r.block, r.t) + ", " +
           source_of(*x.k, r.pc) + ": uninitialized shared memory read of " +
           std::to_string(r.size) + " bytes at address " + hex(r.addr) + ": " +
           std::to_string(r.uninit) + " of them written by no thread of the block before" +
           "; the value is used by " + source_of(*x.k, x.pc);
  });
}

}  // namespace

void undefined_step(Exec& x, const Inst& in, uint32_t mask, uint32_t active) {
  BlockState* bs = x.b->san;
  if (!bs || bs->undefined.size() <= x.w->index) return;
  WarpUndefined& u = bs->undefined[x.w->index];
  if (!u.marked) return;
  uint32_t origin = 0;
  auto reg_lanes = [&](uint32_t r) -> uint32_t {
    if (r >= u.lanes.size() || !u.lanes[r]) return 0;
    origin = u.origin[r];
    return u.lanes[r];
  };
  auto lanes = [&](const Operand& o) -> uint32_t {
    if (o.kind == OK::reg) return reg_lanes(o.reg);
    uint32_t m = 0;
    if (o.kind == OK::vec)
      for (int i = 0; i < o.count; ++i)
        if (x.vec(o, i).kind == OK::reg) m |= reg_lanes(x.vec(o, i).reg);
    return m;
  };
  auto set_dest = [&](const Operand& o, uint32_t affected, uint32_t marked) {
    if (o.kind == OK::reg) mark(u, o.reg, affected, marked, origin);
    else if (o.kind == OK::vec)
      for (int i = 0; i < o.count; ++i)
        if (x.vec(o, i).kind == OK::reg) mark(u, x.vec(o, i).reg, affected, marked, origin);
  };
  const uint32_t guard = in.guard >= 0 ? reg_lanes(uint32_t(in.guard)) & mask : 0;
  OpClass cls = OpClass(in.san_class);
  if (in.ctl != Ctl::normal && cls != opUseDest) cls = opUse;
  // Not every decoder counts its operands in nops: the unused ones are OK::none.
  constexpr int nops = 6;
  if (cls == opUse || cls == opUseDest || cls == opLoad) {
    uint32_t used = guard;
    for (int i = cls == opUse ? 0 : 1; i < nops; ++i) used |= lanes(in.o[i]) & active;
    if (used) {
      undefined_used(x, origin);
      // Reported once: the operands count as defined from here on.
      for (int i = cls == opUse ? 0 : 1; i < nops; ++i) set_dest(in.o[i], used, 0);
      if (in.guard >= 0) mark(u, uint32_t(in.guard), used, 0, 0);
    }
    if (cls != opUse) set_dest(in.o[0], active, 0);
    return;
  }
  const bool pred = in.type == Type::pred;
  uint32_t marked = 0;
  switch (cls) {
    case opSelp: {
      const uint32_t a = lanes(in.o[1]), b = lanes(in.o[2]), p = lanes(in.o[3]);
      for (uint32_t m = active & (a | b | p); m; m &= m - 1) {
        const int lane = __builtin_ctz(m);
        const uint32_t bit = 1u << lane;
        if ((p & bit) || ((x.pred(in.o[3], lane) ? a : b) & bit)) marked |= bit;
      }
      break;
    }
    case opAnd:
    case opOr: {
      const uint32_t a = lanes(in.o[1]), b = lanes(in.o[2]);
      if (!pred && cls == opOr) { marked = a | b; break; }
      // A defined operand equal to the absorbing value (zero for and, true for or) decides.
      auto absorbs = [&](const Operand& o, int lane) {
        return pred ? x.pred(o, lane) == (cls == opOr) : x.val(o, lane) == 0;
      };
      for (uint32_t m = active & (a | b); m; m &= m - 1) {
        const int lane = __builtin_ctz(m);
        const uint32_t bit = 1u << lane;
        if (!(a & bit) && absorbs(in.o[1], lane)) continue;
        if (!(b & bit) && absorbs(in.o[2], lane)) continue;
        marked |= bit;
      }
      break;
    }
    case opSetp: {
      const uint32_t cmp = lanes(in.o[1]) | lanes(in.o[2]);
      const uint32_t c = in.aux ? lanes(in.o[3]) : 0;
      marked = cmp | c;
      if (in.aux == 1 || in.aux == 2)
        for (uint32_t m = active & cmp & ~c; m; m &= m - 1) {
          const int lane = __builtin_ctz(m);
          if (x.pred(in.o[3], lane) == (in.aux == 2)) marked &= ~(1u << lane);
        }
      marked = (marked & active) | guard;
      set_dest(in.o[0], active | guard, marked);
      set_dest(in.o[4], active | guard, marked);  // the complement of "p|q"
      return;
    }
    default:
      for (int i = 1; i < nops; ++i) marked |= lanes(in.o[i]);
      break;
  }
  set_dest(in.o[0], active | guard, (marked & active) | guard);
}

void collective_arrive(Exec& x, uint32_t mask) {
  const Inst& in = x.k->code[x.pc];
  if (in.member_op >= 0xFE || !(g_checks & kSync)) return;
  const Warp& w = *x.w;
  // The common case first: every lane gives the same mask (an immediate, or one register's value
  // in every lane) and no lane waits at a collective.
  if (!w.parked) {
    const Operand& o = in.o[in.member_op];
    if (o.kind == OK::imm) return;
    if (o.kind == OK::reg) {
      const uint64_t* r = w.r + size_t(o.reg) * 32;
      const uint32_t first = uint32_t(r[__builtin_ctz(mask)]);
      bool same = true;
      for (uint32_t m = mask; m; m &= m - 1) same &= uint32_t(r[__builtin_ctz(m)]) == first;
      if (same) return;
    }
  }
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
  bool uniform = true;
  for (uint32_t m = mask; m; m &= m - 1) uniform &= given[__builtin_ctz(m)] == given[__builtin_ctz(mask)];
  if (uniform && !w.parked) return;
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
    b.san->top = 0;
  }
  BlockState& s = *b.san;
  const uint32_t start = std::max(s.top + 1, g.launch.base);
  s.block = b.linear;
  s.tpb = b.nthreads;
  s.key_base = uint32_t(uint64_t(b.linear) * b.nthreads);
  s.start = start;
  s.reset_threads(b.nthreads, start);
  if (g_mem) s.shared.ensure(b.launch->smem_bytes, true);
  s.ndeferred = 0;
  s.defer = false;
  s.ready.assign(s.shared.bytes() / 32 + 9, 0);
  s.shared_sync.clear();
  s.remote.clear();
  if (g_mem && b.launch->cluster.count() > 1) {
    s.dsmem.release();
    s.dsmem.ensure(b.launch->smem_bytes);
    s.floor = s.top = start + 1;  // records stamped with the start clock are ordered (dsmem_access)
  }
  for (BarState& bar : s.bars) bar.reset();
  for (WarpUndefined& u : s.undefined) {
    g_undefined -= u.marked;
    u.marked = 0;
    std::fill(u.lanes.begin(), u.lanes.end(), 0u);
  }
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
  for (size_t i = 0; i < g.pool_used; ++i) top = std::max(top, g.pool[i]->top + 1);
  g.next_clock = top;
  // Values no instruction used are not reported.
  for (size_t i = 0; i < g.pool_used; ++i)
    for (WarpUndefined& u : g.pool[i]->undefined) {
      u.marked = 0;
      std::fill(u.lanes.begin(), u.lanes.end(), 0u);
    }
  g_undefined = 0;
  g.launch.undefined_reads.clear();
  for (const auto& bs : g.pool) std::vector<DeferredRead>().swap(bs->deferred);  // no block is left to read them
  g.deferred_entries = 0;
  g.pool_used = 0;
  g.launch.sync.clear();
  // Clocks are 32 bits: far before they wrap, forget every record (all of them are ordered
  // before the next launch anyway).
  if (g.next_clock > (1u << 31)) {
    g.pool.clear();
    for (const auto& [base, al] : memory().all())
      if (al.shadow) {
        static_cast<GShadow*>(al.shadow)->race.release();
        static_cast<GShadow*>(al.shadow)->nc.release();
      }
    g.next_clock = 1;
  }
}

}  // namespace

LaunchScope::LaunchScope(Launch& l) {
  Global& g = G();
  g.launch.l = &l;
  g.launch.base = g.next_clock;
  g.launch.findings.clear();
  g.launch.held.clear();
  g.launch.held_index.clear();
  g.launch.held_findings.clear();
  g.launch.next_order = 0;
  g.pool_used = 0;
  g.clusters.clear();
}

LaunchScope::~LaunchScope() {
  if (finished_) return;
  report_held();
  print_findings();
  G().launch.findings.clear();
  end_launch();
}

void LaunchScope::finish() {
  finished_ = true;
  LaunchState& L = G().launch;
  report_held();
  end_launch();
  if (L.findings.empty()) return;
  print_findings();
  uint64_t races = 0, uninit = 0, nc = 0;
  for (const auto& [k, f] : L.findings) {
    if (std::get<0>(k) == fRaceShared || std::get<0>(k) == fRaceGlobal) ++races;
    else if (std::get<0>(k) == fNcWritten) ++nc;
    else ++uninit;
  }
  L.findings.clear();
  std::string what;
  if (races) what += std::to_string(races) + (races == 1 ? " race" : " races");
  if (uninit) {
    if (!what.empty()) what += " and ";
    what += std::to_string(uninit) + (uninit == 1 ? " uninitialized read" : " uninitialized reads");
  }
  if (nc) {
    if (!what.empty()) what += " and ";
    what += std::to_string(nc) + " non-coherent " + (nc == 1 ? "load" : "loads") + " of written memory";
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

// ---------------------------------------------------------------------------------------------
// The async proxy: a generic-proxy write of shared memory is seen by a bulk copy only through a
// fence.proxy.async after it, of the writing thread or (after a barrier) of the copying thread.
void proxy_fence(Exec& x, uint32_t mask) {
  BlockState* bs = x.b->san;
  if (!bs || !(g_checks & kRace)) return;
  for (uint32_t m = mask; m; m &= m - 1) {
    const uint32_t t = x.w->index * 32 + uint32_t(__builtin_ctz(m));
    bs->t[t].proxy_fence = bs->clock_of(t) + 1;
    bs->dirty = true;
    bs->tick(t);
  }
}

std::string unfenced_generic_write(Exec& x, uint64_t a, uint32_t size, int lane, bool (*async_write)(const Inst&)) {
  BlockState* bs = x.b->san;
  if (!bs || !(g_checks & kRace) || !bs->shared.ok() || a + size > bs->shared.bytes()) return "";
  const uint32_t me = x.w->index * 32 + uint32_t(lane);
  auto unfenced = [&](SRec w) {
    if (!w || s_clock(w) < bs->start) return false;  // none, or of an earlier block
    const uint32_t pc = s_pc(w), tid = s_tid(w);
    if (pc < x.k->code.size() && async_write(x.k->code[pc])) return false;
    return bs->t[tid].proxy_fence <= s_clock(w) && bs->t[me].proxy_fence <= s_clock(w);
  };
  for (uint64_t g = a / 4; g < (a + size + 3) / 4; ++g) {
    SCell* c = bs->shared.granule(g);
    if (!c) continue;
    SRec found = 0;
    if (!is_split(*c)) {
      if (unfenced(c->w)) found = c->w;
    } else if (SCell* bytes = bs->shared.byte_cells(g)) {
      for (int i = 0; i < 4 && !found; ++i)
        if (unfenced(bytes[i].w)) found = bytes[i].w;
    }
    if (found)
      return "shared memory at address " + hex(g * 4) + " was written through the generic proxy by " +
             thread_name(*x.l, bs->block, s_tid(found)) + ", " + source_of(*x.k, s_pc(found)) +
             ", and is read by this bulk copy (the async proxy) with no fence.proxy.async between them";
  }
  return "";
}

}  // namespace san
}  // namespace emu
