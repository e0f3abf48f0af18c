// Hopper's asynchronous data movement: mbarrier objects, bulk copies (cp.async.bulk) and bulk
// tensor copies (cp.async.bulk.tensor, the tensor memory accelerator), as the PTX ISA defines them.
//
// An mbarrier is its 8 bytes of shared memory, which hold (the encoding is the emulator's own;
// the ISA leaves it opaque):
//   bits  0-19  pending arrivals of the current phase     bits 20-39  expected arrivals
//   bits 40-60  tx-count, 21-bit two's complement          bits 61-63  phase number mod 8
// The phase completes when its pending arrivals and its tx-count are both zero: the phase
// number advances (its parity flips), pending = expected and tx-count = 0.
//
// Copies run when they are issued: the bytes land, and then the copy's complete_tx (bytes) is
// performed on its mbarrier by the issuing thread, which is one order the asynchronous proxy
// allows. mbarrier.try_wait suspends the waiting threads until the phase completes (the ISA lets
// it suspend up to a time limit; here the limit is never reached), so a phase that never
// completes ends as a deadlock report that names the mbarrier, not as a hang.
#include <cmath>
#include <cstdio>

#include "exec/cluster.h"
#include "exec/metrics.h"
#include "exec/ops.h"
#include "exec/sanitizer.h"
#include "runtime/tensor_map.h"

namespace emu {

namespace {

constexpr int kErrIllegalAddress = 700;
constexpr int kErrMisaligned = 716;

// --- which CTA's shared memory an address names ---------------------------------------------------
// The one place that resolves a shared-memory operand of an mbarrier or bulk copy to the block
// whose shared memory it is and the offset in that block's window. `cluster_space`: the operand is a
// .shared::cluster address (generic addresses are too): one that carries a CTA rank (mapa, see
// cluster.h) names that CTA of the cluster, checked as distributed shared memory accesses are;
// without rank bits, and without clusters, it is the executing CTA's own .shared::cta address.
struct SmemRef {
  Block* b;
  uint32_t off;
  uint64_t addr = 0;  // what the checks are handed: the offset, with the rank bits when b is another CTA
};
SmemRef shared_target(Exec& x, Space space, bool cluster_space, uint64_t a, uint32_t size, int lane) {
  if (space == Space::generic) {
    if (a - kSharedWindow >= kWindowSize)
      x.fault(kErrIllegalAddress, "a generic address outside the shared window where shared memory is expected", a, lane);
    a -= kSharedWindow;
    cluster_space = true;
  }
  if (cluster_space && (a >> cluster::kRankShift)) {
    cluster::remote_shared(x, a, size, lane, true);  // the rank, the block's exit, its bytes
    Block* tb = cluster::target(x, a);
    const uint32_t off = uint32_t(a & cluster::kOffsetMask);
    return {tb, off, tb == x.b ? uint64_t(off) : a};
  }
  Block* b = x.b;
  if (a + size > b->shared.size())
    x.fault(kErrIllegalAddress,
            "shared memory access of " + std::to_string(size) + " bytes outside the block's " +
                std::to_string(b->shared.size()) + " bytes",
            a, lane);
  return {b, uint32_t(a), a};
}

// The .shared::cluster address of offset `off` in the CTA of rank `rank` of the cluster.
uint64_t rank_address(uint32_t rank, uint32_t off) { return (uint64_t(rank + 1) << cluster::kRankShift) | off; }

// The global bytes [a, a + size) of a copy: inside one allocation (no alignment asked here).
uint8_t* global_range(Exec& x, uint64_t a, uint64_t size, int lane, bool write) {
  const Allocation* al = memory().find(a, size);
  if (!al)
    x.fault(kErrIllegalAddress,
            std::string("out-of-bounds global ") + (write ? "store" : "load") + " of " + std::to_string(size) +
                " bytes by a bulk copy (" + memory().describe(a) + ")",
            a, lane);
  if (write && !al->writable) x.fault(kErrIllegalAddress, "bulk copy into read-only " + al->what, a, lane);
  return reinterpret_cast<uint8_t*>(a);
}

// --- mbarrier state -------------------------------------------------------------------------------
struct Mbar {
  uint32_t pending, expected;
  int32_t tx;
  uint32_t phase;  // mod 8
};
constexpr uint32_t kMaxCount = (1u << 20) - 1;

Mbar unpack(uint64_t v) {
  Mbar m;
  m.pending = uint32_t(v & kMaxCount);
  m.expected = uint32_t((v >> 20) & kMaxCount);
  int32_t tx = int32_t((v >> 40) & 0x1FFFFF);
  if (tx & 0x100000) tx -= 0x200000;
  m.tx = tx;
  m.phase = uint32_t(v >> 61);
  return m;
}
uint64_t pack(const Mbar& m) {
  return uint64_t(m.pending) | (uint64_t(m.expected) << 20) | (uint64_t(uint32_t(m.tx) & 0x1FFFFF) << 40) |
         (uint64_t(m.phase & 7) << 61);
}

uint8_t* mbar_bytes(const SmemRef& r) { return r.b->shared.data() + r.off; }
Mbar load(const SmemRef& r) {
  uint64_t v;
  std::memcpy(&v, mbar_bytes(r), 8);
  return unpack(v);
}
void store(const SmemRef& r, const Mbar& m) {
  const uint64_t v = pack(m);
  std::memcpy(mbar_bytes(r), &v, 8);
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}
std::string describe(const SmemRef& r, const Mbar& m) {
  return "mbarrier at shared offset " + hex(r.off) +
         ((r.addr >> cluster::kRankShift) ? " of " + cluster::name(*r.b) : std::string()) + " (phase " + std::to_string(m.phase) +
         " mod 8, " + std::to_string(m.pending) + " of " + std::to_string(m.expected) +
         " arrivals pending, tx-count " + std::to_string(m.tx) + ")";
}

// Semantics an mbarrier operation has for the race check: arrivals release, successful waits
// acquire (.relaxed has neither). Every mbarrier operation is atomic on the object whichever CTA
// of the cluster performs it, so none is given the .cta scope that would make two of different
// CTAs conflict; an arrival on another CTA's mbarrier releases to that CTA's waiters.
constexpr uint32_t kSanArrive = san::kRead | san::kWrite | san::kStrong | san::kAtomic | san::kRelease;
constexpr uint32_t kSanWait = san::kRead | san::kStrong | san::kAtomic | san::kAcquire;

// Modifier bits of the mbarrier instructions (Inst::flags) and their operations (Inst::aux).
enum : uint32_t { fExpectTx = 1u << 0, fParity = 1u << 1, fNoComplete = 1u << 2, fRelaxed = 1u << 3,
                  fCluster = 1u << 4, fDrop = 1u << 5 };
enum MOp : uint32_t { m_init, m_inval, m_arrive, m_expect_tx, m_complete_tx, m_test_wait, m_try_wait,
                      m_pending_count };

const char* mop_name(MOp op) {
  switch (op) {
    case m_init: return "init";
    case m_inval: return "inval";
    case m_test_wait: return "test_wait";
    case m_try_wait: return "try_wait";
    default: return "pending_count";
  }
}

// Whether the phase a wait names has completed, for one lane; a token or parity that names no
// phase the ISA allows is an error.
bool wait_done(Exec& x, const Inst& in, const SmemRef& r, const Mbar& m, int lane) {
  const uint64_t v = x.val(in.o[2], lane);
  if (in.flags & fParity) return (m.phase & 1) != (v & 1);
  // A state token of mbarrier.arrive: bit 62 set, the mbarrier's offset in bits 32-61, the
  // pending arrivals it left in bits 3-22, the phase it arrived in (mod 8) in bits 0-2.
  if (!(v >> 62 & 1) || uint32_t((v >> 32) & 0x3FFFFFFF) != r.off)
    x.fail("mbarrier wait with a state that no mbarrier.arrive on this " + describe(r, m) + " returned", lane);
  const uint32_t age = (m.phase - uint32_t(v & 7)) & 7;
  if (age >= 2)
    x.fail("mbarrier wait on a phase " + std::to_string(age) +
               " phases old: the ISA allows only the current phase and the one before it (" +
               describe(r, m) + ")",
           lane);
  return age == 1;
}

// Releases the lanes of the block suspended in mbarrier.try_wait on this mbarrier whose phase has
// now completed.
void release_waiters(Exec& x, const SmemRef& r, const Mbar& m) {
  for (Warp& w : r.b->warps) {
    for (uint32_t p = w.parked; p; p &= p - 1) {
      const int lane = __builtin_ctz(p);
      if (w.park_bar[lane] != -2 || w.park_member[lane] != r.off) continue;
      Exec y = x;
      y.w = &w;
      y.b = r.b;
      y.pc = w.park_pc[lane];
      const Inst& in = x.k->code[y.pc];
      if (!wait_done(y, in, r, m, lane)) continue;
      if (!(in.flags & fRelaxed)) EMU_SAN_ACCESS(y, y.pc, Space::shared, r.off, 8, lane, kSanWait);
      y.set(in.o[0], lane, 1);
      w.pc[lane] = y.pc + 1;
      w.parked &= ~(1u << lane);
    }
  }
}

// After an arrival or a complete_tx: complete the phase if nothing is pending, and report a phase
// whose arrivals are all in while its tx-count is negative (more bytes completed than expected).
void settle(Exec& x, const SmemRef& r, Mbar& m, int lane, const char* what) {
  if (m.pending != 0) return;
  if (m.tx < 0)
    x.fail(std::string(what) + ": every arrival of the phase is in but the tx-count is negative: the copies completed " +
               std::to_string(-int64_t(m.tx)) + " bytes more than expect_tx announced (" + describe(r, m) + ")",
           lane);
  if (m.tx != 0) return;
  m.phase = (m.phase + 1) & 7;
  m.pending = m.expected;
  store(r, m);
  release_waiters(x, r, m);
}

void tx_add(Exec& x, const SmemRef& r, Mbar& m, int64_t bytes, int lane) {
  const int64_t tx = int64_t(m.tx) + bytes;
  if (tx > int64_t(kMaxCount) || tx < -int64_t(kMaxCount))
    x.fail("mbarrier tx-count " + std::to_string(tx) + " outside the range -(2^20-1)..2^20-1 (" + describe(r, m) + ")",
           lane);
  m.tx = int32_t(tx);
}

// complete_tx of `bytes` on an mbarrier, by the lane that issued a copy.
void complete_tx(Exec& x, const SmemRef& r, uint32_t bytes, int lane) {
  Mbar m = load(r);
  tx_add(x, r, m, -int64_t(bytes), lane);
  store(r, m);
  EMU_SAN_ACCESS(x, x.pc, Space::shared, r.addr, 8, lane, kSanArrive);
  settle(x, r, m, lane, "complete_tx of a bulk copy");
}

void h_mbarrier(Exec& x, const Inst& in, uint32_t mask) {
  const MOp op = MOp(in.aux);
  bool waited = false;
  EMU_FOR_LANES(mask)
    const SmemRef r = shared_target(x, in.space, in.flags & fCluster, x.address(in.o[1], lane), 8, lane);
    if (r.off % 8) x.fault(kErrMisaligned, "mbarrier object not 8-byte aligned", r.off, lane);
    if (r.b != x.b && op != m_arrive && op != m_expect_tx && op != m_complete_tx)
      x.fail(std::string("mbarrier.") + mop_name(op) + " on the " + describe(r, load(r)) +
                 ", another CTA's: only arrive, arrive_drop, expect_tx and complete_tx may name "
                 "the mbarrier of another CTA of the cluster",
             lane);
    switch (op) {
      case m_init: {
        const uint64_t n = x.val(in.o[2], lane) & 0xFFFFFFFFu;
        if (n < 1 || n > kMaxCount)
          x.fail("mbarrier.init count " + std::to_string(n) + " outside 1..2^20-1", lane);
        EMU_SAN_ACCESS(x, x.pc, Space::shared, r.off, 8, lane, san::kWrite);
        store(r, Mbar{uint32_t(n), uint32_t(n), 0, 0});
        break;
      }
      case m_inval:  // an mbarrier operation like the others: atomic on the object
        EMU_SAN_ACCESS(x, x.pc, Space::shared, r.off, 8, lane, san::kWrite | san::kStrong | san::kAtomic | san::kCta);
        std::memset(mbar_bytes(r), 0, 8);
        break;
      case m_arrive: {
        if (r.b != x.b && in.o[0].kind == OK::reg)
          x.fail("mbarrier.arrive on the " + describe(r, load(r)) +
                     ", another CTA's: such an arrive returns no state (the ISA's form for a "
                     ".shared::cluster mbarrier has the sink _ as its destination)",
                 lane);
        EMU_SAN_ACCESS(x, x.pc, Space::shared, r.addr, 8, lane, (in.flags & fRelaxed) ? kSanArrive & ~san::kRelease : kSanArrive);
        Mbar m = load(r);
        const uint32_t token_phase = m.phase;
        uint32_t count = 1;
        if (in.o[3].kind != OK::none) count = uint32_t(x.val(in.o[3], lane));
        if (in.flags & fExpectTx) tx_add(x, r, m, int64_t(uint32_t(x.val(in.o[2], lane))), lane);
        if (count < 1 || count > kMaxCount)
          x.fail("mbarrier arrive count " + std::to_string(count) + " outside 1..2^20-1", lane);
        if (in.flags & fDrop) {
          if (count > m.expected)
            x.fail("mbarrier.arrive_drop of " + std::to_string(count) + " on an " + describe(r, m) +
                       ": more than its expected count",
                   lane);
          m.expected -= count;
        }
        if (count > m.pending)
          x.fail("mbarrier arrive of " + std::to_string(count) + " on an " + describe(r, m) +
                     ": more arrivals than the phase expects",
                 lane);
        m.pending -= count;
        if ((in.flags & fNoComplete) && m.pending == 0 && m.tx == 0)
          x.fail("mbarrier.arrive.noComplete completes the phase of an " + describe(r, m), lane);
        store(r, m);
        if (in.o[0].kind == OK::reg)
          x.set(in.o[0], lane, (1ull << 62) | (uint64_t(r.off) << 32) | (uint64_t(m.pending) << 3) | token_phase);
        settle(x, r, m, lane, "mbarrier arrive");
        break;
      }
      case m_expect_tx:
      case m_complete_tx: {
        EMU_SAN_ACCESS(x, x.pc, Space::shared, r.addr, 8, lane, kSanArrive);
        Mbar m = load(r);
        const int64_t b = int64_t(uint32_t(x.val(in.o[2], lane)));
        tx_add(x, r, m, op == m_expect_tx ? b : -b, lane);
        store(r, m);
        if (op == m_complete_tx) settle(x, r, m, lane, "mbarrier.complete_tx");
        break;
      }
      case m_test_wait:
      case m_try_wait: {
        const Mbar m = load(r);
        const bool done = wait_done(x, in, r, m, lane);
        if (done) {
          EMU_SAN_ACCESS(x, x.pc, Space::shared, r.off, 8, lane, (in.flags & fRelaxed) ? kSanWait & ~san::kAcquire : kSanWait);
          x.set(in.o[0], lane, 1);
        } else if (op == m_test_wait) {
          EMU_SAN_ACCESS(x, x.pc, Space::shared, r.off, 8, lane, kSanWait & ~san::kAcquire);
          x.set(in.o[0], lane, 0);
          waited = true;
        } else {  // suspended until the phase completes (release_waiters)
          EMU_SAN_ACCESS(x, x.pc, Space::shared, r.off, 8, lane, kSanWait & ~san::kAcquire);
          x.w->parked |= 1u << lane;
          x.w->park_pc[lane] = x.pc;
          x.w->park_bar[lane] = -2;
          x.w->park_member[lane] = r.off;
          waited = true;
        }
        break;
      }
      case m_pending_count:
        break;
    }
  EMU_END_LANES
  if (waited) ++metrics::g_counts.mbarrier_waits;
}

// mbarrier.pending_count.b64 count, state: the pending arrivals of the phase a state token came
// from, as the arrive that returned it left them (tokens carry them in bits 3-22).
void h_pending_count(Exec& x, const Inst& in, uint32_t mask) {
  EMU_FOR_LANES(mask)
    const uint64_t v = x.val(in.o[1], lane);
    if (!(v >> 62 & 1)) x.fail("mbarrier.pending_count of a value that is not an mbarrier state", lane);
    x.set(in.o[0], lane, (v >> 3) & kMaxCount);
  EMU_END_LANES
}

// --- bulk copies ----------------------------------------------------------------------------------
// Modifier bits of the copies.
enum : uint32_t { cToShared = 1u << 0, cFromShared = 1u << 1, cMbarrier = 1u << 2, cTensor = 1u << 3,
                  cSmemToSmem = 1u << 4, cPrefetch = 1u << 5, cMulticast = 1u << 6 };

// The mbarrier operand of a copy into shared memory.
SmemRef mbar_target(Exec& x, uint64_t a, int lane) {
  const SmemRef r = shared_target(x, Space::shared, true, a, 8, lane);
  if (r.off % 8) x.fault(kErrMisaligned, "mbarrier object not 8-byte aligned", r.off, lane);
  return r;
}

void count_tma(uint64_t bytes) {
  ++metrics::g_counts.tma_requests;
  metrics::g_counts.tma_bytes += bytes;
}

void h_bulk(Exec& x, const Inst& in, uint32_t mask);
void h_tensor(Exec& x, const Inst& in, uint32_t mask);
bool writes_through_async_proxy(const Inst& in) { return in.fn == h_bulk || in.fn == h_tensor; }

// A bulk copy reading shared [off, off + size): generic-proxy writes there need a
// fence.proxy.async before it (the race check keeps the writes).
void check_proxy(Exec& x, uint32_t off, uint64_t size, int lane) {
  if (!(san::g_checks & san::kRace)) return;
  const std::string why = san::unfenced_generic_write(x, off, uint32_t(size), lane, writes_through_async_proxy);
  if (!why.empty()) x.fail_with(719, why, lane);
}

void h_proxy_fence(Exec& x, const Inst&, uint32_t mask) {
  if (san::g_checks & san::kRace) san::proxy_fence(x, mask);
}

// The CTAs a .multicast::cluster copy delivers to: the bits of its 16-bit ctaMask (o[4]), bit i
// the CTA of %cluster_ctarank i. A launch without clusters is one of clusters of one block, so
// there only bit 0 names a CTA.
uint32_t multicast_ranks(Exec& x, const Inst& in, const char* what, int lane) {
  const uint32_t m = uint32_t(x.val(in.o[4], lane)) & 0xFFFFu;
  const uint32_t n = uint32_t(x.l->cluster.count());
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%04x", m);
  if (!m) x.fail(std::string(what) + ".multicast::cluster with ctaMask 0x0000: it names no CTA", lane);
  if (n < 16 && (m >> n)) {
    const uint32_t bad = n + uint32_t(__builtin_ctz(m >> n));
    if (x.l->clusters == nullptr || (n == 1 && !x.l->explicit_cluster))
      x.fail(std::string(what) + ".multicast::cluster in a launch without clusters: ctaMask " + buf +
                 " names CTA rank " + std::to_string(bad) +
                 ", but each block is a cluster of one (launch with a cluster dimension, "
                 "__cluster_dims__ or cudaLaunchAttributeClusterDimension)",
             lane);
    x.fail(std::string(what) + ".multicast::cluster with ctaMask " + buf + ": it names CTA rank " +
               std::to_string(bad) + ", but the cluster has " + std::to_string(n) + (n == 1 ? " block" : " blocks"),
           lane);
  }
  return m;
}

// The mbarrier a copy into shared memory signals: for a unicast copy it must lie in the CTA the
// destination does.
SmemRef copy_mbar(Exec& x, const Inst& in, const SmemRef& dst, int lane) {
  const SmemRef mb = mbar_target(x, x.address(in.o[3], lane), lane);
  if (mb.b != dst.b)
    x.fail("bulk copy into the shared memory of " + cluster::name(*dst.b) + " signalling the mbarrier at shared offset " +
               hex(mb.off) + " of " + cluster::name(*mb.b) +
               ": the mbarrier must be in the shared memory of the destination's CTA",
           lane);
  return mb;
}

// cp.async.bulk [dst], [src], size{, [mbar]{, ctaMask}}: o[0] dst, o[1] src, o[2] size, o[3] mbar,
// o[4] ctaMask (.multicast::cluster).
void h_bulk(Exec& x, const Inst& in, uint32_t mask) {
  EMU_FOR_LANES(mask)
    const uint64_t dst = x.address(in.o[0], lane), src = x.address(in.o[1], lane);
    const uint32_t size = uint32_t(x.val(in.o[2], lane));
    if (size % 16) x.fail("cp.async.bulk size " + std::to_string(size) + " is not a multiple of 16", lane);
    if (dst % 16) x.fault(kErrMisaligned, "cp.async.bulk destination not 16-byte aligned", dst, lane);
    if (src % 16) x.fault(kErrMisaligned, "cp.async.bulk source not 16-byte aligned", src, lane);
    if (in.flags & cPrefetch) {
      global_range(x, src, size, lane, false);
      continue;
    }
    count_tma(size);
    if (in.flags & cMulticast) {  // global -> the same offsets in every CTA of the mask
      const uint32_t ranks = multicast_ranks(x, in, "cp.async.bulk", lane);
      const uint8_t* s = global_range(x, src, size, lane, false);
      EMU_SAN_ACCESS(x, x.pc, Space::global, src, size, lane, san::kRead);
      const uint32_t doff = uint32_t(dst & cluster::kOffsetMask);
      const uint32_t moff = uint32_t(x.address(in.o[3], lane) & cluster::kOffsetMask);
      for (uint32_t m = ranks; m; m &= m - 1) {
        const uint32_t rank = uint32_t(__builtin_ctz(m));
        const SmemRef d = shared_target(x, Space::shared, true, rank_address(rank, doff), size, lane);
        std::memmove(d.b->shared.data() + d.off, s, size);
        EMU_SAN_ACCESS(x, x.pc, Space::shared, d.addr, size, lane, san::kWrite);
        complete_tx(x, mbar_target(x, rank_address(rank, moff), lane), size, lane);
      }
    } else if (in.flags & cToShared) {
      const SmemRef d = shared_target(x, Space::shared, true, dst, size, lane);
      const SmemRef mb = copy_mbar(x, in, d, lane);
      const uint8_t* s;
      if (in.flags & cSmemToSmem) {
        const SmemRef sr = shared_target(x, Space::shared, false, src, size, lane);
        check_proxy(x, sr.off, size, lane);
        s = sr.b->shared.data() + sr.off;
        EMU_SAN_ACCESS(x, x.pc, Space::shared, sr.off, size, lane, san::kRead);
      } else {
        s = global_range(x, src, size, lane, false);
        EMU_SAN_ACCESS(x, x.pc, Space::global, src, size, lane, san::kRead);
      }
      std::memmove(d.b->shared.data() + d.off, s, size);
      EMU_SAN_ACCESS(x, x.pc, Space::shared, d.addr, size, lane, san::kWrite);
      complete_tx(x, mb, size, lane);
    } else {  // shared::cta -> global, a bulk async-group
      const SmemRef sr = shared_target(x, Space::shared, false, src, size, lane);
      check_proxy(x, sr.off, size, lane);
      uint8_t* d = global_range(x, dst, size, lane, true);
      EMU_SAN_ACCESS(x, x.pc, Space::shared, sr.off, size, lane, san::kRead);
      std::memmove(d, sr.b->shared.data() + sr.off, size);
      EMU_SAN_ACCESS(x, x.pc, Space::global, dst, size, lane, san::kWrite);
    }
  EMU_END_LANES
}

// --- bulk tensor copies ---------------------------------------------------------------------------
// The swizzled position of byte offset `a` of shared memory: the 16-byte chunk index (bits 4-6)
// XORed with bits 7-9 of the address, over 1, 2 or 3 bits for the 32, 64 and 128-byte modes
// (the ISA's swizzling modes; the pattern repeats every 256, 512, 1024 bytes).
inline uint32_t swizzle(uint32_t a, uint32_t bits) {
  if (!bits) return a;
  const uint32_t m = (1u << bits) - 1;
  return a ^ (((a >> 7) & m) << 4);
}

const tmap::Desc& tensor_map(Exec& x, uint64_t a, int lane, tmap::Desc& d) {
  // A __grid_constant__ kernel parameter's generic address is its offset in the parameter
  // buffer; any other map lives in global (or constant) memory.
  const uint8_t* p;
  if (a % 64) x.fault(kErrMisaligned, "tensor map not 64-byte aligned", a, lane);
  if (a + 128 <= x.l->params.size()) p = x.l->params.data() + a;
  else p = global_range(x, a, 128, lane, false);
  if (!tmap::decode(p, &d))
    x.fault(kErrIllegalAddress, "cp.async.bulk.tensor with a tensor map that cuTensorMapEncodeTiled did not make", a, lane);
  if (d.interleave) x.fail("tensor maps with an interleaved layout are not emulated", lane);
  return d;
}

// o[0] smem (load: destination; store: source), o[1] tensor map address, o[2] coordinates (vec),
// o[3] mbarrier (loads). in.aux = rank.
void h_tensor(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t rank = in.aux;
  const bool load = in.flags & cToShared;
  EMU_FOR_LANES(mask)
    tmap::Desc d;
    tensor_map(x, x.address(in.o[1], lane), lane, d);
    if (d.rank != rank)
      x.fail("cp.async.bulk.tensor." + std::to_string(rank) + "d with a tensor map of rank " + std::to_string(d.rank), lane);
    int64_t c[5] = {};
    for (uint32_t i = 0; i < rank; ++i) c[i] = int32_t(uint32_t(x.val(x.vec(in.o[2], int(i)), lane)));
    const uint32_t es = tmap::element_bytes(d.dtype);
    // Elements the box traverses along each dimension (dimension 0 takes every element).
    uint32_t n[5] = {1, 1, 1, 1, 1};
    uint64_t total = 1;
    for (uint32_t i = 0; i < rank; ++i) {
      n[i] = i == 0 ? d.box[0] : (d.box[i] + d.estride[i] - 1) / d.estride[i];
      total *= n[i];
    }
    const uint64_t bytes = total * es;
    // The box's first element along dimension 0 must start a 16-byte aligned offset of the
    // tensor's rows (the boxDim[0] * element size rule of cuTensorMapEncodeTiled, for the start).
    if ((c[0] * int64_t(es)) % 16)
      x.fault(kErrMisaligned,
              "cp.async.bulk.tensor coordinate " + std::to_string(c[0]) + " of dimension 0 starts the box " +
                  std::to_string(c[0] * int64_t(es)) + " bytes into a row: not a multiple of 16 bytes",
              d.address + uint64_t(c[0] * int64_t(es)), lane);
    const uint64_t sa = x.address(in.o[0], lane);
    if (sa % 128) x.fault(kErrMisaligned, "cp.async.bulk.tensor shared memory address not 128-byte aligned", sa, lane);
    if (in.flags & cPrefetch) continue;
    const bool multicast = in.flags & cMulticast;
    // The destinations of a load: the CTA the address names, or the same offset in every CTA of
    // a multicast's ctaMask; the source of a store.
    SmemRef dst[16];
    uint32_t ndst = 0, to_rank[16];
    if (multicast) {
      const uint32_t ranks = multicast_ranks(x, in, "cp.async.bulk.tensor", lane);
      for (uint32_t m = ranks; m; m &= m - 1, ++ndst) {
        to_rank[ndst] = uint32_t(__builtin_ctz(m));
        dst[ndst] = shared_target(x, Space::shared, true, rank_address(to_rank[ndst], uint32_t(sa & cluster::kOffsetMask)),
                                  uint32_t(bytes), lane);
      }
    } else {
      dst[ndst++] = shared_target(x, Space::shared, load, sa, uint32_t(bytes), lane);
    }
    const SmemRef& s = dst[0];
    SmemRef mbar[16];
    if (load) {
      if (multicast) {
        const uint32_t moff = uint32_t(x.address(in.o[3], lane) & cluster::kOffsetMask);
        for (uint32_t i = 0; i < ndst; ++i)
          mbar[i] = mbar_target(x, rank_address(to_rank[i], moff), lane);
      } else {
        mbar[0] = copy_mbar(x, in, s, lane);
      }
    }
    count_tma(bytes);
    const uint32_t sbits = d.swizzle == 1 ? 1 : d.swizzle == 2 ? 2 : d.swizzle == 3 ? 3 : 0;
    const uint32_t row = n[0] * es;  // bytes of one box row (dimension 0) in shared memory
    uint8_t* smem = s.b->shared.data();  // a store's source
    uint64_t nan_bits = 0;
    if (d.oob_nan) {
      switch (es) {
        case 2: nan_bits = d.dtype == 9 ? 0x7FFF : 0x7FFF; break;
        case 4: nan_bits = 0x7FFFFFFF; break;
        default: nan_bits = 0x7FFFFFFFFFFFFFFFull;
      }
    }
    // Rows of the box: every combination of the outer coordinates.
    const uint64_t rows = total / n[0];
    for (uint64_t r = 0; r < rows; ++r) {
      uint64_t rem = r;
      int64_t g[5];
      bool outer_in = true;
      uint64_t goff = 0;
      for (uint32_t i = 1; i < rank; ++i) {
        const uint64_t k = rem % n[i];
        rem /= n[i];
        g[i] = c[i] + int64_t(k) * d.estride[i];
        if (g[i] < 0 || uint64_t(g[i]) >= d.dim[i]) outer_in = false;
        else goff += uint64_t(g[i]) * d.stride[i];
      }
      const uint32_t srow = s.off + uint32_t(r * row);
      // The row's elements inside the tensor along dimension 0: [lo, hi).
      const int64_t lo = outer_in ? std::max<int64_t>(0, -c[0]) : int64_t(n[0]);
      const int64_t hi = outer_in ? std::max<int64_t>(lo, std::min<int64_t>(int64_t(n[0]), int64_t(d.dim[0]) - c[0])) : int64_t(n[0]);
      if (load) {
        if (hi > lo) {
          const uint64_t ga = d.address + goff + uint64_t(c[0] + lo) * es;
          const uint64_t len = uint64_t(hi - lo) * es;
          global_range(x, ga, len, lane, false);
          EMU_SAN_ACCESS(x, x.pc, Space::global, ga, uint32_t(len), lane, san::kRead);
        }
        for (uint32_t e = 0; e < n[0]; ++e) {
          const uint32_t at = swizzle(srow + e * es, sbits);
          const void* from = int64_t(e) >= lo && int64_t(e) < hi
                                 ? reinterpret_cast<const void*>(d.address + goff + uint64_t(c[0] + e) * es)
                                 : static_cast<const void*>(&nan_bits);
          for (uint32_t i = 0; i < ndst; ++i) std::memcpy(dst[i].b->shared.data() + at, from, es);
        }
      } else if (hi > lo) {  // stores write only the elements inside the tensor
        const uint64_t ga = d.address + goff + uint64_t(c[0] + lo) * es;
        const uint64_t len = uint64_t(hi - lo) * es;
        uint8_t* gp = global_range(x, ga, len, lane, true);
        // The shared bytes the store reads: those of the elements it writes (the box's elements
        // outside the tensor, such as padding, are neither written nor read), in runs of
        // consecutive addresses (the swizzle permutes 16-byte chunks).
        auto read_run = [&](uint32_t off, uint32_t size) {
          check_proxy(x, off, size, lane);
          EMU_SAN_ACCESS(x, x.pc, Space::shared, off, size, lane, san::kRead);
        };
        uint32_t run = 0, run_end = 0;
        for (int64_t e = lo; e < hi; ++e) {
          const uint32_t at = swizzle(srow + uint32_t(e) * es, sbits);
          std::memcpy(gp + (e - lo) * es, smem + at, es);
          if (at != run_end) {
            if (run_end != run) read_run(run, run_end - run);
            run = at;
          }
          run_end = at + es;
        }
        read_run(run, run_end - run);
        EMU_SAN_ACCESS(x, x.pc, Space::global, ga, uint32_t(len), lane, san::kWrite);
      }
    }
    if (!load) continue;
    for (uint32_t i = 0; i < ndst; ++i) {
      EMU_SAN_ACCESS(x, x.pc, Space::shared, dst[i].addr, uint32_t(bytes), lane, san::kWrite);
      complete_tx(x, mbar[i], uint32_t(bytes), lane);
    }
  EMU_END_LANES
}

void h_nothing(Exec&, const Inst&, uint32_t) {}

// cp.async.mbarrier.arrive{.noinc} [mbar]: an arrive-on once the thread's cp.async copies are
// done (they complete here). Without .noinc the pending count is raised by one first, so the
// arrive-on leaves it as it was; with .noinc it is one of the phase's arrivals.
void h_cp_async_arrive(Exec& x, const Inst& in, uint32_t mask) {
  EMU_FOR_LANES(mask)
    const SmemRef r = mbar_target(x, x.address(in.o[0], lane), lane);
    cp_async_complete_thread(x, lane);
    EMU_SAN_ACCESS(x, x.pc, Space::shared, r.off, 8, lane, kSanArrive);
    if (!in.aux) continue;
    Mbar m = load(r);
    if (m.pending == 0)
      x.fail("cp.async.mbarrier.arrive.noinc on an " + describe(r, m) + ": more arrivals than the phase expects", lane);
    m.pending -= 1;
    store(r, m);
    settle(x, r, m, lane, "cp.async.mbarrier.arrive.noinc");
  EMU_END_LANES
}

// The state space of an mbarrier or copy operand: .shared::cta / .shared::cluster / .shared, or
// generic without one.
Space mbar_space(DecodeCtx& d, const PInstr& p, bool* cluster) {
  *cluster = d.has(p, "shared::cluster");
  return d.has(p, "shared") || d.has(p, "shared::cta") || *cluster ? Space::shared : Space::generic;
}

}  // namespace

bool decode_async(DecodeCtx& d, const PInstr& p, Inst& in) {
  const std::string& op = p.opcode;
  if (op == "fence" && d.has(p, "proxy") && d.has(p, "async")) {  // fence.proxy.async{.space}
    in.fn = h_proxy_fence;
    return true;
  }
  if (op == "mbarrier") {
    bool cluster;
    in.space = mbar_space(d, p, &cluster);
    if (cluster) in.flags |= fCluster;
    if (d.has(p, "relaxed")) in.flags |= fRelaxed;
    if (d.has(p, "parity")) in.flags |= fParity;
    if (d.has(p, "noComplete")) in.flags |= fNoComplete;
    in.fn = h_mbarrier;
    in.ctl = Ctl::normal;
    auto addr = [&](size_t i) {
      Space sp = in.space;
      in.o[1] = d.addr(p.ops.at(i), sp);
      if (in.space == Space::generic && sp == Space::shared) in.space = Space::shared;
    };
    if (d.has(p, "init")) {
      in.aux = m_init;
      addr(0);
      in.o[2] = d.op(p.ops.at(1));
    } else if (d.has(p, "inval")) {
      in.aux = m_inval;
      addr(0);
    } else if (d.has(p, "arrive") || d.has(p, "arrive_drop")) {
      // arrive{_drop}{.expect_tx}: state|_, [addr]{, count | txCount}
      in.aux = m_arrive;
      if (d.has(p, "arrive_drop")) in.flags |= fDrop;
      if (d.has(p, "expect_tx")) in.flags |= fExpectTx;
      size_t i = 0;
      if (p.ops.at(0).kind != PTok::addr) in.o[0] = d.op(p.ops[i++]);
      else in.o[0].kind = OK::sink;
      addr(i++);
      if (i < p.ops.size()) {
        if (in.flags & fExpectTx) in.o[2] = d.op(p.ops[i++]);
        else in.o[3] = d.op(p.ops[i++]);
      }
    } else if (d.has(p, "expect_tx") || d.has(p, "complete_tx")) {
      in.aux = d.has(p, "expect_tx") ? m_expect_tx : m_complete_tx;
      addr(0);
      in.o[2] = d.op(p.ops.at(1));
    } else if (d.has(p, "test_wait") || d.has(p, "try_wait")) {
      // waitComplete, [addr], state | phaseParity {, suspendTimeHint}
      in.aux = d.has(p, "try_wait") ? m_try_wait : m_test_wait;
      in.o[0] = d.op(p.ops.at(0));
      addr(1);
      in.o[2] = d.op(p.ops.at(2));
      if (in.aux == m_try_wait) in.ctl = Ctl::wait;
    } else if (d.has(p, "pending_count")) {
      in.o[0] = d.op(p.ops.at(0));
      in.o[1] = d.op(p.ops.at(1));
      in.fn = h_pending_count;
    } else {
      d.fail(p, "mbarrier operation not supported by the emulator");
    }
    return true;
  }
  if (op == "cp" && d.has(p, "async") && d.has(p, "mbarrier") && d.has(p, "arrive")) {
    Space sp = Space::shared;
    in.o[0] = d.addr(p.ops.at(0), sp);  // o[0]: not a copy for the metrics
    in.aux = d.has(p, "noinc");
    in.fn = h_cp_async_arrive;
    return true;
  }
  if (op == "cp" && d.has(p, "async") && d.has(p, "bulk")) {
    if (d.has(p, "commit_group") || d.has(p, "wait_group")) {
      // Copies complete when issued: every bulk async-group is complete.
      if (d.has(p, "wait_group")) in.o[0] = d.op(p.ops.at(0));
      in.fn = h_nothing;
      return true;
    }
    if (d.has(p, "multicast::cluster")) {
      in.flags |= cMulticast;
      d.k.uses_cluster = true;
    }
    if (d.has(p, "prefetch")) in.flags |= cPrefetch;
    const bool tensor = d.has(p, "tensor");
    // Direction: .shared::cluster.global / .shared::cta.global (loads), .global.shared::cta
    // (stores), .shared::cluster.shared::cta (shared to shared). The destination comes first.
    size_t first_space = p.mods.size();
    for (size_t i = 0; i < p.mods.size(); ++i)
      if (p.mods[i] == "global" || p.mods[i].rfind("shared", 0) == 0) { first_space = i; break; }
    if (!(in.flags & cPrefetch)) {
      if (first_space + 1 >= p.mods.size()) d.fail(p, "bulk copy without its state spaces");
      const std::string& dst = p.mods[first_space];
      const std::string& src = p.mods[first_space + 1];
      if (dst.rfind("shared", 0) == 0) {
        in.flags |= cToShared;
        if (src.rfind("shared", 0) == 0) in.flags |= cSmemToSmem;
        if (!d.has(p, "mbarrier::complete_tx::bytes")) d.fail(p, "a bulk copy into shared memory without its mbarrier");
      } else if (dst == "global" && src.rfind("shared", 0) == 0) {
        in.flags |= cFromShared;
      } else {
        d.fail(p, "bulk copy direction not supported by the emulator");
      }
    }
    if ((in.flags & cMulticast) && (!(in.flags & cToShared) || (in.flags & cSmemToSmem)))
      d.fail(p, ".multicast::cluster is for copies from global memory into shared::cluster only");
    if (d.has(p, "im2col") || d.has(p, "im2col::w") || d.has(p, "im2col::w::128") || d.has(p, "tile::gather4") ||
        d.has(p, "tile::scatter4"))
      d.fail(p, "only the tile mode of bulk tensor copies is emulated");
    Space sd = Space::shared, ss = Space::shared;
    if (!tensor) {
      if (in.flags & cPrefetch) {  // cp.async.bulk.prefetch.L2.global [src], size
        Space g = Space::global;
        in.o[1] = d.addr(p.ops.at(0), g);
        in.o[2] = d.op(p.ops.at(1));
      } else {
        in.o[0] = d.addr(p.ops.at(0), sd);
        in.o[1] = d.addr(p.ops.at(1), ss);
        in.o[2] = d.op(p.ops.at(2));
        if (in.flags & cToShared) in.o[3] = d.addr(p.ops.at(3), sd);
        if (in.flags & cMulticast) in.o[4] = d.op(p.ops.at(4));  // ctaMask {, cache-policy}
      }
      in.fn = h_bulk;
      return true;
    }
    uint32_t rank = 0;
    for (const std::string& m : p.mods)
      if (m.size() == 2 && m[1] == 'd' && m[0] >= '1' && m[0] <= '5') rank = uint32_t(m[0] - '0');
    if (!rank) d.fail(p, "bulk tensor copy without its dimension (.1d to .5d)");
    in.aux = rank;
    in.fn = h_tensor;
    // The tensor operand: [tensorMap, {coordinates}].
    auto tensor_operand = [&](const PTok& t) {
      if (t.kind != PTok::addr || t.elems.size() != 2 || t.elems[1].kind != PTok::vec)
        d.fail(p, "expected [tensorMap, {coordinates}]");
      PTok base = t;
      base.elems.resize(1);
      Space g = Space::global;
      in.o[1] = d.addr(base, g);
      in.o[2] = d.op(t.elems[1]);
      if (in.o[2].count != rank) d.fail(p, "the number of coordinates is not the copy's dimension");
    };
    if (in.flags & cPrefetch) {  // cp.async.bulk.prefetch.tensor.Nd.L2.global.tile [tensorMap, coords]
      tensor_operand(p.ops.at(0));
      in.o[0].kind = OK::imm;  // no shared memory: checked as offset 0
      return true;
    }
    if (in.flags & cToShared) {
      in.o[0] = d.addr(p.ops.at(0), sd);
      tensor_operand(p.ops.at(1));
      in.o[3] = d.addr(p.ops.at(2), sd);
      if (in.flags & cMulticast) in.o[4] = d.op(p.ops.at(3));  // ctaMask {, cache-policy} (tile mode)
    } else {
      tensor_operand(p.ops.at(0));
      in.o[0] = d.addr(p.ops.at(1), ss);
    }
    return true;
  }
  return false;
}

}  // namespace emu

namespace emu {

std::string mbarrier_wait_text(Exec& x, int lane) {
  const Inst& in = x.k->code[x.pc];
  const SmemRef r{x.b, x.w->park_member[lane]};
  const Mbar m = load(r);
  const uint64_t v = x.val(in.o[2], lane);
  const std::string which = (in.flags & fParity) ? "the phase of parity " + std::to_string(v & 1)
                                                 : "phase " + std::to_string(v & 7) + " (mod 8)";
  return "mbarrier.try_wait waits for " + which + " of the " + describe(r, m) +
         ", which nothing left can complete: every other thread of the block waits or has exited, "
         "and no copy is in flight";
}

}  // namespace emu
