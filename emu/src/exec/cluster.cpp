// Thread block clusters: special registers, mapa / getctarank, distributed shared memory,
// barrier.cluster, and the clusters' bookkeeping for the scheduler (see cluster.h).
//
// The PTX ISA's definitions used here:
//   %cluster_nctaid = the cluster's dimensions, %cluster_ctaid = %ctaid mod %cluster_nctaid,
//   %clusterid = %ctaid / %cluster_nctaid, %nclusterid = %nctaid / %cluster_nctaid (per axis),
//   %cluster_ctarank = x + y * nx + z * nx * ny of %cluster_ctaid, %cluster_nctarank = nx*ny*nz,
//   %is_explicit_cluster: the launch named a cluster (at compile time or launch time).
//   barrier.cluster.arrive marks the thread's arrival; barrier.cluster.wait waits until every
//   non-exited thread of the cluster has arrived; arrive defaults to .release, wait to .acquire,
//   and arrive.relaxed orders no memory. .aligned: every thread of the warp executes it.
#include "exec/cluster.h"

#include <algorithm>
#include <cstdio>

#include "exec/ops.h"
#include "exec/sanitizer.h"

namespace emu {

std::string source_of(const Kernel& k, uint32_t pc);  // scheduler.cpp

namespace cluster {

namespace {

constexpr uint32_t kRelaxed = 1u << 0;  // Inst::flags of barrier.cluster.arrive.relaxed
constexpr int kErrIllegalAddress = 700;
constexpr int kErrLaunchFailure = 719;

Dim3 cdim(const Launch& l) { return l.cluster; }

uint32_t rank_in(const Launch& l, const Dim3& id) {
  const Dim3 c = cdim(l);
  return id.x % c.x + (id.y % c.y) * c.x + (id.z % c.z) * c.x * c.y;
}

uint64_t cluster_index(const Launch& l, const Dim3& id) {
  const Dim3 c = cdim(l);
  const uint64_t nx = l.grid.x / c.x, ny = l.grid.y / c.y;
  return id.x / c.x + (id.y / c.y) * nx + (id.z / c.z) * nx * ny;
}

std::string dim_text(uint64_t x, uint64_t y, uint64_t z) {
  return '(' + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + ")";
}

std::string thread_text(const Block& b, uint32_t t) {
  const Dim3& bd = b.launch->block;
  return "block " + dim_text(b.id.x, b.id.y, b.id.z) + " thread " +
         dim_text(t % bd.x, (t / bd.x) % bd.y, t / (bd.x * bd.y));
}

// Releases the lanes waiting at barrier.cluster.wait for a completed phase.
void complete(State& s) {
  ++s.phase;
  s.arrived = 0;
  if (san::g_checks) san::cluster_complete(s.index);
  for (uint32_t r = 0; r < s.nctas; ++r) {
    Cta* c = s.cta[r];
    if (!c || s.exited[r]) continue;
    Block& b = *c->block;
    for (Warp& w : b.warps) {
      for (uint32_t m = w.parked; m; m &= m - 1) {
        const int lane = __builtin_ctz(m);
        if (w.park_bar[lane] != kBarrier) continue;
        const uint32_t t = w.index * 32 + uint32_t(lane);
        if (c->arrived[t] == 0 || c->arrived[t] - 1 >= s.phase) continue;
        c->arrived[t] = 0;
        if (san::g_checks) san::cluster_acquire(b, t, s.index);
        w.pc[lane] = w.park_pc[lane] + 1;
        w.parked &= ~(1u << lane);
      }
    }
  }
}

void maybe_complete(State& s) {
  if (s.alive && s.arrived == s.alive) complete(s);
}

// mapa{.shared::cluster}.{u32,u64} d, a, rank (in.aux: 1 for the generic form).
void h_mapa(Exec& x, const Inst& in, uint32_t m) {
  const uint32_t n = uint32_t(x.l->cluster.count());
  EMU_FOR_LANES(m)
    uint64_t a = x.val(in.o[1], lane);
    if (in.aux) {
      if (a - kSharedWindow >= kWindowSize) x.fail("mapa of a generic address outside the shared window", lane);
      a -= kSharedWindow;
    }
    const uint64_t rank = uint32_t(x.val(in.o[2], lane));
    if (rank >= n)
      x.fail("mapa to CTA rank " + std::to_string(rank) + ", but the cluster has " + std::to_string(n) +
                 (n == 1 ? " block" : " blocks"),
             lane);
    uint64_t r = ((rank + 1) << kRankShift) | (a & kOffsetMask);
    if (in.aux) r += kSharedWindow;
    x.set(in.o[0], lane, r);
  EMU_END_LANES
}

// getctarank{.shared::cluster}.{u32,u64} d, a: the rank of the CTA whose shared memory a names.
void h_getctarank(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m)
    uint64_t a = x.val(in.o[1], lane);
    if (in.aux) {
      if (a - kSharedWindow >= kWindowSize) x.fail("getctarank of a generic address outside the shared window", lane);
      a -= kSharedWindow;
    }
    const uint64_t bits = uint32_t(a) >> kRankShift;
    x.set(in.o[0], lane, bits ? bits - 1 : rank_in(*x.l, x.b->id));
  EMU_END_LANES
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Decoding

}  // namespace cluster

bool cluster_sreg_of(const std::string& name, uint32_t* id) {
  static const std::unordered_map<std::string, uint32_t> table = {
      {"%cluster_ctarank", sr_cluster_ctarank}, {"%cluster_nctarank", sr_cluster_nctarank},
      {"%cluster_ctaid.x", sr_cluster_ctaid_x}, {"%cluster_ctaid.y", sr_cluster_ctaid_y},
      {"%cluster_ctaid.z", sr_cluster_ctaid_z}, {"%cluster_nctaid.x", sr_cluster_nctaid_x},
      {"%cluster_nctaid.y", sr_cluster_nctaid_y}, {"%cluster_nctaid.z", sr_cluster_nctaid_z},
      {"%clusterid.x", sr_clusterid_x}, {"%clusterid.y", sr_clusterid_y},
      {"%clusterid.z", sr_clusterid_z}, {"%nclusterid.x", sr_nclusterid_x},
      {"%nclusterid.y", sr_nclusterid_y}, {"%nclusterid.z", sr_nclusterid_z},
      {"%is_explicit_cluster", sr_is_explicit_cluster}};
  auto it = table.find(name);
  if (it == table.end()) return false;
  *id = it->second;
  return true;
}

bool decode_cluster(DecodeCtx& d, const PInstr& p, Inst& in) {
  const std::string& op = p.opcode;
  if (op == "mapa" || op == "getctarank") {
    d.k.uses_cluster = true;
    const bool generic = !d.has(p, "shared::cluster");
    in.aux = generic ? 1 : 0;
    in.type = d.last_type(p);
    if (in.type != Type::u32 && in.type != Type::u64) d.fail(p, "type must be .u32 or .u64");
    in.o[0] = d.op(p.ops.at(0));
    in.o[1] = d.op(p.ops.at(1));
    if (op == "mapa") {
      in.o[2] = d.op(p.ops.at(2));
      in.fn = cluster::h_mapa;
    } else {
      in.fn = cluster::h_getctarank;
    }
    return true;
  }
  if (op == "barrier" && d.has(p, "cluster")) {
    d.k.uses_cluster = true;
    const bool arrive = d.has(p, "arrive"), wait = d.has(p, "wait");
    if (arrive == wait) d.fail(p, "barrier.cluster must be .arrive or .wait");
    in.ctl = Ctl::cluster;
    in.aux = arrive ? 0 : 1;
    if (d.has(p, "relaxed")) {
      if (!arrive) d.fail(p, ".relaxed is for barrier.cluster.arrive only");
      in.flags |= cluster::kRelaxed;
    }
    if (d.has(p, "aligned")) in.flags |= kAligned;
    return true;
  }
  return false;
}

namespace cluster {

// ---------------------------------------------------------------------------------------------
// Special registers

uint64_t sreg(const Exec& x, uint32_t id, int) {
  const Launch& l = *x.l;
  const Dim3 c = cdim(l);
  const Dim3& b = x.b->id;
  switch (id) {
    case sr_cluster_ctarank: return rank_in(l, b);
    case sr_cluster_nctarank: return uint32_t(c.count());
    case sr_cluster_ctaid_x: return b.x % c.x;
    case sr_cluster_ctaid_y: return b.y % c.y;
    case sr_cluster_ctaid_z: return b.z % c.z;
    case sr_cluster_nctaid_x: return c.x;
    case sr_cluster_nctaid_y: return c.y;
    case sr_cluster_nctaid_z: return c.z;
    case sr_clusterid_x: return b.x / c.x;
    case sr_clusterid_y: return b.y / c.y;
    case sr_clusterid_z: return b.z / c.z;
    case sr_nclusterid_x: return l.grid.x / c.x;
    case sr_nclusterid_y: return l.grid.y / c.y;
    case sr_nclusterid_z: return l.grid.z / c.z;
    case sr_is_explicit_cluster: return l.explicit_cluster ? 1 : 0;
    default: return 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Launch bookkeeping

Scope::Scope(Launch& l) : l_(l) {
  if (l.cluster.count() > 1 || l.explicit_cluster || (l.kernel && l.kernel->uses_cluster)) {
    c_ = std::make_unique<Clusters>();
    c_->l = &l;
    c_->size = uint32_t(l.cluster.count());
    l.clusters = c_.get();
  }
}

Scope::~Scope() { l_.clusters = nullptr; }

uint64_t dispatched(const Launch& l, uint64_t n) {
  const Dim3 c = cdim(l);
  const uint64_t size = c.count();
  if (size == 1) return n;
  const uint64_t ci = n / size, r = n % size;
  const uint64_t nx = l.grid.x / c.x, ny = l.grid.y / c.y;
  const uint64_t x = (ci % nx) * c.x + r % c.x;
  const uint64_t y = ((ci / nx) % ny) * c.y + (r / c.x) % c.y;
  const uint64_t z = (ci / (nx * ny)) * c.z + r / (uint64_t(c.x) * c.y);
  return x + y * l.grid.x + z * uint64_t(l.grid.x) * l.grid.y;
}

void block_start(Block& b) {
  Clusters* cs = b.launch->clusters;
  if (!cs) {
    b.cluster = nullptr;
    return;
  }
  std::unique_ptr<Cta>& slot = cs->ctas[&b];
  if (!slot) slot = std::make_unique<Cta>();
  Cta& c = *slot;
  c.block = &b;
  c.rank = rank_in(*cs->l, b.id);
  c.cluster = cluster_index(*cs->l, b.id);
  auto [it, fresh] = cs->live.try_emplace(c.cluster);
  State& s = it->second;
  if (fresh) {
    s.index = c.cluster;
    s.nctas = cs->size;
    s.alive = cs->size * b.nthreads;
  }
  s.cta[c.rank] = &c;
  s.exited[c.rank] = false;
  c.cl = &s;
  c.arrived.assign(b.nthreads, 0);
  b.cluster = &c;
}

void block_done(Block& b) {
  Cta* c = b.cluster;
  if (!c || !c->cl) return;
  if (san::g_checks) san::cluster_block_exit(b);
  State& s = *c->cl;
  s.exited[c->rank] = true;
  if (++s.exited_ctas == s.nctas) {
    for (uint32_t r = 0; r < s.nctas; ++r)
      if (s.cta[r]) s.cta[r]->cl = nullptr;
    b.launch->clusters->live.erase(s.index);
  }
}

void exited(Block& b, Warp& w, uint32_t lanes) {
  Cta* c = b.cluster;
  if (!c || !c->cl) return;
  State& s = *c->cl;
  for (uint32_t m = lanes; m; m &= m - 1) {
    const uint32_t t = w.index * 32 + uint32_t(__builtin_ctz(m));
    --s.alive;
    if (c->arrived[t] == s.phase + 1) --s.arrived;
    c->arrived[t] = 0;
  }
  maybe_complete(s);
}

// ---------------------------------------------------------------------------------------------
// barrier.cluster

void barrier(Exec& x, const Inst& in, uint32_t active) {
  Warp& w = *x.w;
  Block& b = *x.b;
  const uint32_t pc = x.pc;
  const char* what = in.aux == 0 ? "barrier.cluster.arrive" : "barrier.cluster.wait";
  if ((in.flags & kAligned) && active != (w.valid & ~w.exited))
    x.fail(std::string(what) + ".aligned executed by only some threads of the warp (lanes 0x" +
               [&] { char buf[16]; std::snprintf(buf, sizeof buf, "%08x", active); return std::string(buf); }() +
               "): .aligned requires every thread of the warp to execute the same barrier.cluster",
           __builtin_ctz(active));
  Cta* c = b.cluster;
  if (!c || !c->cl) x.fail("barrier.cluster without the launch's cluster state", __builtin_ctz(active));
  State& s = *c->cl;
  if (in.aux == 0) {  // arrive
    for (uint32_t m = active; m; m &= m - 1) {
      const int lane = __builtin_ctz(m);
      const uint32_t t = w.index * 32 + uint32_t(lane);
      if (c->arrived[t])
        x.fail("barrier.cluster.arrive by a thread that arrived already and has not waited "
               "(each arrive must be followed by a barrier.cluster.wait before the next)",
               lane);
      c->arrived[t] = s.phase + 1;
      w.pc[lane] = pc + 1;
    }
    if (san::g_checks) san::cluster_arrive(x, s.index, active, !(in.flags & kRelaxed));
    s.arrived += uint32_t(__builtin_popcount(active));
    maybe_complete(s);
    return;
  }
  // wait
  for (uint32_t m = active; m; m &= m - 1) {
    const int lane = __builtin_ctz(m);
    const uint32_t t = w.index * 32 + uint32_t(lane);
    if (!c->arrived[t])
      x.fail("barrier.cluster.wait by a thread that has not arrived (barrier.cluster.arrive must "
             "come first)",
             lane);
    if (c->arrived[t] - 1 < s.phase) {  // its phase is complete
      c->arrived[t] = 0;
      if (san::g_checks) san::cluster_acquire(b, t, s.index);
      w.pc[lane] = pc + 1;
    } else {
      w.park_pc[lane] = pc;
      w.park_bar[lane] = kBarrier;
      w.parked |= 1u << lane;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Distributed shared memory

Block* target(const Exec& x, uint64_t a) {
  const uint64_t bits = a >> kRankShift;
  if (!bits) return x.b;
  if (bits > 16) return nullptr;
  const Cta* c = x.b->cluster;
  if (!c || !c->cl) return bits == 1 ? x.b : nullptr;
  const uint32_t rank = uint32_t(bits - 1);
  if (rank >= c->cl->nctas || !c->cl->cta[rank] || c->cl->exited[rank]) return nullptr;
  return c->cl->cta[rank]->block;
}

uint8_t* remote_shared(Exec& x, uint64_t a, uint32_t size, int lane, bool write) {
  const uint64_t bits = a >> kRankShift, off = a & kOffsetMask;
  const uint32_t n = uint32_t(x.l->cluster.count());
  if (bits > 16 || bits - 1 >= n)
    x.fault(kErrIllegalAddress,
            "shared::cluster access naming CTA rank " + std::to_string(bits - 1) + ", but the cluster has " +
                std::to_string(n) + (n == 1 ? " block" : " blocks"),
            a, lane);
  const uint32_t rank = uint32_t(bits - 1);
  Block* tb = x.b;
  const Cta* c = x.b->cluster;
  if (c && c->cl) {
    const State& s = *c->cl;
    if (s.exited[rank])
      x.fault(kErrIllegalAddress,
              std::string("distributed shared memory ") + (write ? "store" : "load") + " to " +
                  name(*s.cta[rank]->block) +
                  ", which has exited: a block's shared memory ends with the block, so every "
                  "access from other blocks of the cluster must happen before it exits (end the "
                  "kernel with a cluster barrier, cluster.sync())",
              a, lane);
    tb = s.cta[rank]->block;
  } else if (rank != 0) {
    tb = nullptr;
  }
  if (!tb) x.fault(kErrIllegalAddress, "shared::cluster access outside the cluster", a, lane);
  if (off + size > tb->shared.size())
    x.fault(kErrIllegalAddress,
            "distributed shared memory access outside the " + std::to_string(tb->shared.size()) +
                " bytes of " + name(*tb),
            a, lane);
  return tb->shared.data() + off;
}

std::string name(const Block& b) {
  std::string s = "block " + dim_text(b.id.x, b.id.y, b.id.z);
  const Launch& l = *b.launch;
  if (l.cluster.count() > 1) {
    const Dim3 c = cdim(l);
    s += " (rank " + std::to_string(rank_in(l, b.id)) + " of cluster " +
         dim_text(b.id.x / c.x, b.id.y / c.y, b.id.z / c.z) + ")";
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Deadlock: every warp of a cluster waits, and nothing it waits for can happen.

void deadlock(const Launch& l, Block* first, size_t n) {
  const Kernel& k = *l.kernel;
  std::string head, lines;
  bool head_at_cluster_barrier = false;  // the head names a warp at the cluster barrier if any
  for (size_t i = 0; i < n; ++i) {
    Block& b = first[i];
    if (b.done) continue;
    for (Warp& w : b.warps) {
      if (w.done()) continue;
      // Group the warp's waiting lanes by instruction.
      uint32_t left = w.parked;
      while (left) {
        const int lane0 = __builtin_ctz(left);
        const uint32_t pc = w.park_pc[lane0];
        const int8_t bar = w.park_bar[lane0];
        uint32_t group = 0;
        for (uint32_t m = left; m; m &= m - 1) {
          const int lane = __builtin_ctz(m);
          if (w.park_pc[lane] == pc && w.park_bar[lane] == bar) group |= 1u << lane;
        }
        left &= ~group;
        std::string why;
        if (bar == kBarrier) {
          const State* s = b.cluster ? b.cluster->cl : nullptr;
          if (s)
            why = "waits at the cluster barrier (phase " + std::to_string(s->phase) + ") for " +
                  std::to_string(s->alive - s->arrived) + " of the cluster's " +
                  std::to_string(s->alive) + " non-exited threads, which have not arrived";
          else
            why = "waits at the cluster barrier";
        } else if (bar >= 0) {
          const Barrier& br = b.bars[bar];
          const uint32_t needs = br.whole_block ? b.nthreads - b.exited_threads : br.expected;
          why = "waits at barrier " + std::to_string(bar) + " for " + std::to_string(needs) +
                " threads, of which " + std::to_string(br.arrived) + " have arrived";
        } else if (bar == -2) {  // mbarrier.try_wait
          Exec x;
          x.w = &w;
          x.b = &b;
          x.l = const_cast<Launch*>(&l);
          x.k = &k;
          x.pc = pc;
          why = mbarrier_wait_text(x, lane0);
        } else {
          why = "waits at a collective for lanes of its member mask";
        }
        char lanes[32];
        std::snprintf(lanes, sizeof lanes, "0x%08x", group);
        const std::string where = thread_text(b, w.index * 32 + uint32_t(lane0));
        if (head.empty() || (bar == kBarrier && !head_at_cluster_barrier)) {
          head_at_cluster_barrier = bar == kBarrier;
          head = "kernel " + k.name + ", " + where + ", " + source_of(k, pc) +
                 ": deadlock: every warp of the cluster waits, and no thread is left to complete "
                 "what they wait for:";
        }
        lines += "\n  " + name(b) + " warp " + std::to_string(w.index) + " (lanes " + lanes + ") at " +
                 source_of(k, pc) + ": " + why;
      }
    }
  }
  if (head.empty()) head = "kernel " + k.name + ": deadlock in a cluster";
  throw Fault{kErrLaunchFailure, head + lines};
}

}  // namespace cluster
}  // namespace emu
