// The emulator's checks (GPU100_EMU_CHECK): racecheck, initcheck, synccheck and leaks.
//
// Executors call the hooks below; everything the checks keep (happens-before clocks per thread,
// shadow state per 4-byte granule of memory, the findings of a launch) lives in sanitizer.cpp.
// With the checks off, every hook is one predictable branch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "emu.h"

namespace emu {

struct Exec;
struct Block;
struct Launch;
struct Allocation;

namespace san {

// The selected checks.
enum Check : uint32_t {
  kRace = 1u << 0,
  kInit = 1u << 1,
  kSync = 1u << 2,
  kLeaks = 1u << 3,      // report device allocations alive at exit
  kLeaksFail = 1u << 4,  // ... and make the process exit with status 1 when there are any
};
extern uint32_t g_checks;
extern bool g_mem;  // race or init: memory accesses are tracked

// Memory semantics of ld/st/atom/red, kept in the high bits of Inst::flags (the memory handlers
// use no other flags; the decoder sets them from its opcode table and the modifiers), and the
// direction of an access.
enum : uint32_t {
  kRead = 1u << 0,
  kWrite = 1u << 1,
  kStrong = 1u << 24,   // .volatile, .relaxed, .acquire, .release, atom, red: morally strong
  kAtomic = 1u << 25,   // atom, red
  kAcquire = 1u << 26,  // ld.acquire, atom.acquire/.acq_rel
  kRelease = 1u << 27,  // st.release, atom/red.release/.acq_rel
  kCta = 1u << 28,      // .cta scope: strong toward the threads of the same block only
  kStore = 1u << 29,    // st: the value stored is operand 1 (lanes storing equal values agree)
  kCas = 1u << 30,      // atom.cas: the value compared is operand 2 (it may check a plain load)
  kNc = 1u << 31,       // ld.global.nc: the bytes must not be written during the launch
  kSemMask = kStrong | kAtomic | kAcquire | kRelease | kCta | kStore | kCas | kNc,
};

// --- memory accesses (one lane) ---------------------------------------------------------------
// `kind`: kRead and/or kWrite, with the instruction's semantics bits. The address has passed the
// executor's bounds checks. `pc` is the instruction to name in a report (cp.async lands at its
// wait_group, but the copy is the cp.async's).
void access(Exec& x, uint32_t pc, Space space, uint64_t a, uint32_t size, int lane, uint32_t kind);
// What the executors call: g_hook says whether the checks or the debugging aids (exec/debug.h)
// look at this launch's accesses, g_access is `access` or, while a debugging aid does, the
// function that calls both (each launch sets them).
extern bool g_hook;
using AccessFn = void (*)(Exec& x, uint32_t pc, Space space, uint64_t a, uint32_t size, int lane, uint32_t kind);
extern AccessFn g_access;
// One warp-instruction's accesses, `size` bytes at addrs[lane] for the lanes of `mask`: the same
// as access() for each lane in lane order (the ld/st handlers call it while g_access is access;
// a debugging aid sees the lanes one by one).
void access_warp(Exec& x, uint32_t pc, Space space, const uint64_t* addrs, uint32_t size, uint32_t mask,
                 uint32_t kind);

// --- uninitialized shared values -----------------------------------------------------------------
// A plain ld from shared memory that nothing of the block wrote is not reported at once: its
// destination registers carry an "undefined" mark per lane, which the instructions that compute
// from them pass on, and the read is reported when an undefined value is used (stored, used as
// an address, a branch or guard predicate, handed to any instruction other than arithmetic,
// logic, comparisons, selection and conversion). A value that is only discarded is silent.
// `g_undefined` counts the registers marked in all warps; the executors call undefined_step
// before each warp-instruction while it is nonzero.
extern uint32_t g_undefined;
void undefined_step(Exec& x, const Inst& in, uint32_t mask, uint32_t active);
// What an instruction does with undefined values (Inst::san_class, from the decoder's table).
enum OpClass : uint8_t {
  opUse,       // any other: an undefined operand (or guard) is reported
  opUseDest,   // o[0] is written (atom, shfl, ...): its other operands are uses
  opLoad,      // ld, ldu: the address is a use; o[0] is written (and marked by the load itself)
  opPure,      // o[0] = f(sources): undefined if any source is
  opSelp,      // selp: only the selected value and the predicate matter
  opAnd,       // and: a defined zero (false) operand defines the result
  opOr,        // or.pred: a defined true operand defines the result
  opSetp,      // setp: o[0] and its complement o[4]; the combining predicate o[3] as and/or
};

// --- synchronization ----------------------------------------------------------------------------
void fence(Exec& x, uint32_t mask);        // membar / fence.sc / fence.acq_rel
void warp_sync(Exec& x, uint32_t mask);    // bar.warp.sync completing among `mask`
// Threads first .. first+count-1 of the block synchronize with each other (the last warp of a
// warpgroup issuing a wgmma.mma_async: the operation, and so every warp's reads, completes only
// then, before any of the warps' wgmma.wait_group returns).
void threads_sync(Block& b, uint32_t first, uint32_t count);
// Lanes `mask` of x's warp arrive at barrier `id` (bar.arrive when `arrive_only`); `count` is the
// instruction's thread count, 0 when it names none (the whole block).
void bar_arrive(Exec& x, uint32_t id, uint32_t count, uint32_t mask, bool arrive_only);
void bar_release(Block& b, uint32_t id);   // the barrier's count is complete
// A collective (shfl, vote, match, redux, bar.warp.sync) reached by `mask` of x's warp: lanes
// whose member masks name each other must give the same mask (synccheck).
void collective_arrive(Exec& x, uint32_t mask);

// --- the async proxy (exec/async_copy.cpp) ------------------------------------------------------
void proxy_fence(Exec& x, uint32_t mask);  // fence.proxy.async by lanes `mask`
// A bulk copy (the async proxy) of lane `lane` reads shared [a, a + size): the description of a
// generic-proxy write there that no fence.proxy.async of its thread, or of the copying thread,
// followed; "" when there is none or the race check is off. `async_write` tells the
// instructions that write shared memory through the async proxy themselves.
std::string unfenced_generic_write(Exec& x, uint64_t a, uint32_t size, int lane, bool (*async_write)(const Inst&));
// --- clusters (exec/cluster.cpp) ------------------------------------------------------------------
// barrier.cluster: lanes `mask` arrive (releasing what they did unless .relaxed); a phase of the
// cluster completes; thread t of block b passes its wait (acquiring what the arrivals released).
void cluster_arrive(Exec& x, uint64_t cluster, uint32_t mask, bool release);
void cluster_complete(uint64_t cluster);
void cluster_acquire(Block& b, uint32_t t, uint64_t cluster);
// Block b's threads have all exited: accesses of other blocks to its shared memory that nothing
// ordered before that are reported.
void cluster_block_exit(Block& b);

// --- launches and blocks ------------------------------------------------------------------------
void block_start(Block& b);
// Brackets a launch: finish() prints the launch's findings and throws the Fault that fails it
// when there are any; a launch stopped by a fault prints what was found before it.
class LaunchScope {
 public:
  explicit LaunchScope(Launch& l);
  ~LaunchScope();
  void finish();

 private:
  bool finished_ = false;
};

// --- the runtime's memory -----------------------------------------------------------------------
void on_device_alloc(uint64_t base, uint64_t bytes);           // cudaMalloc: starts uninitialized
void on_release(Allocation& a);                                // any allocation leaving the table
void on_host_write(const void* dst, uint64_t bytes);           // memset, host-to-device copy
void on_copy(const void* dst, const void* src, uint64_t bytes);  // device-to-device copy

}  // namespace san
}  // namespace emu

// The hooks as the executors write them: nothing is evaluated with the checks off.
#define EMU_SAN_STEP(x, in, mask, active)                                                      \
  do {                                                                                         \
    if (__builtin_expect(::emu::san::g_undefined != 0, 0))                                     \
      ::emu::san::undefined_step((x), (in), (mask), (active));                                 \
  } while (0)

#define EMU_SAN_ACCESS(x, pc, space, a, size, lane, kind)                                      \
  do {                                                                                         \
    if (__builtin_expect(::emu::san::g_hook, 0))                                               \
      ::emu::san::g_access((x), (pc), (space), (a), (size), (lane), (kind));                   \
  } while (0)
