// Memory instructions: ld, st, atom, red, cvta, isspacep, cp.async (with deferred completion:
// the copy lands when a cp.async.wait_group retires its group, so a kernel that reads the
// destination too early reads stale data, as it could on hardware).
#include <cstdio>
#include <deque>

#include "exec/fp.h"
#include "exec/ops.h"
#include "exec/sanitizer.h"

namespace emu {

namespace {

inline uint64_t address(const Exec& x, const Operand& a, int lane) { return x.address(a, lane); }

// A loaded element as its destination register holds it: the ISA lets the register be wider
// than the instruction type, and then a signed type is sign-extended and every other type
// zero-extended to the register's width (in.type2, a type of that width).
__attribute__((always_inline)) inline uint64_t loaded(uint64_t v, const Inst& in) {
  switch (in.type2) {
    case Type::b8: return extend(v, in.type) & 0xFFu;
    case Type::b16: return extend(v, in.type) & 0xFFFFu;
    case Type::b32: return extend(v, in.type) & 0xFFFFFFFFu;
    default: return extend(v, in.type);
  }
}

// x.addr, with an aligned shared access inside the block's window checked here (what
// Exec::addr_slow does for it).
__attribute__((always_inline)) inline uint8_t* lane_addr(Exec& x, Space space, uint64_t a, uint32_t size,
                                                         int lane, bool write) {
  if (space == Space::shared && !(a & (size - 1)) && a + size <= x.b->shared.size())
    return x.b->shared.data() + a;
  return x.addr(space, a, size, lane, write);
}

// The lanes of a load or store: op(lane, p), p the lane's address checked by x.addr (bounds,
// alignment). With the checks on and no debugging aid looking (san::g_access is san::access),
// the warp-instruction's accesses go to the checks at once: every lane's address is checked first,
// then the checks see the lanes in lane order (san::access_warp), then the lanes load or store.
// The checks of a store's lane may see memory without the same instruction's earlier lanes'
// stores, which changes nothing: a conflict with those is decided from the values the lanes
// store. A lane that faults does so after the checks and accesses of the lanes before it, as
// lane by lane.
template <class Op>
void checked_lanes(Exec& x, Space space, const Operand& a_op, uint32_t size, bool write, uint32_t kind,
                   uint32_t m, Op op) {
  uint64_t addrs[32];  // only the lanes of m are read
  uint8_t* ptrs[32];
  uint32_t done = 0;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
  try {
    EMU_FOR_LANES(m)
      addrs[lane] = address(x, a_op, lane);
      ptrs[lane] = lane_addr(x, space, addrs[lane], size, lane, write);
      done |= 1u << lane;
    EMU_END_LANES
  } catch (...) {
    if (done) {
      san::access_warp(x, x.pc, space, addrs, size, done, kind);
      EMU_FOR_LANES(done) op(lane, ptrs[lane]); EMU_END_LANES
    }
    throw;
  }
  san::access_warp(x, x.pc, space, addrs, size, m, kind);
#pragma GCC diagnostic pop
  EMU_FOR_LANES(m) op(lane, ptrs[lane]); EMU_END_LANES
}

template <class Op>
__attribute__((always_inline)) inline void each_lane(Exec& x, Space space, const Operand& a_op, uint32_t size,
                                                     bool write, uint32_t kind, uint32_t m, Op op) {
  if (__builtin_expect(san::g_hook, 0)) {
    if (san::g_access != san::access) {  // a debugging aid: lane by lane
      EMU_FOR_LANES(m)
        const uint64_t a = address(x, a_op, lane);
        uint8_t* p = lane_addr(x, space, a, size, lane, write);
        san::g_access(x, x.pc, space, a, size, lane, kind);
        op(lane, p);
      EMU_END_LANES
      return;
    }
    // The checks keep nothing for local memory and kernel parameters.
    if (space != Space::local && space != Space::param)
      return checked_lanes(x, space, a_op, size, write, kind, m, op);
  }
  EMU_FOR_LANES(m)
    op(lane, lane_addr(x, space, address(x, a_op, lane), size, lane, write));
  EMU_END_LANES
}

// A full warp's load or store through ldst_rows (exec/ops.h), with the checks, when they are
// what looks, seeing the warp's addresses as checked_lanes shows them. False: the lane loop.
template <uint32_t ES, uint32_t V, bool Load>
__attribute__((always_inline)) inline bool warp_rows(Exec& x, const Inst& in, uint32_t kind) {
  if (!san::g_hook) return ldst_rows<ES, V, Load>(x, in, [](const uint64_t*) {});
  if (san::g_access != san::access) return false;
  return ldst_rows<ES, V, Load>(x, in, [&](const uint64_t* addrs) {
    san::access_warp(x, x.pc, in.space, addrs, ES * V, kFullWarp, kind);
  });
}

// ld: in.aux = element bytes, in.vec = elements, in.type = element type (for extension).
void h_ld(Exec& x, const Inst& in, uint32_t m) {
  const uint32_t es = in.aux, total = es * in.vec;
  auto op = [&](int lane, const uint8_t* p) __attribute__((always_inline)) {
    if (in.vec == 1) {
      uint64_t v = 0;
      std::memcpy(&v, p, es);
      x.set(in.o[0], lane, loaded(v, in));
    } else {
      for (uint32_t i = 0; i < in.vec; ++i) {
        uint64_t v = 0;
        std::memcpy(&v, p + i * es, es);
        x.set(x.vec(in.o[0], int(i)), lane, loaded(v, in));
      }
    }
  };
  each_lane(x, in.space, in.o[1], total, false, san::kRead | in.flags, m, op);
}

// A load from a fixed address in the parameter space (a kernel argument): one read, broadcast.
void h_ld_param_uniform(Exec& x, const Inst& in, uint32_t m) {
  uint64_t v = 0;
  std::memcpy(&v, x.addr(Space::param, in.o[1].imm, in.aux, __builtin_ctz(m), false), in.aux);
  v = loaded(v, in);
  uint64_t* d = x.w->r + size_t(in.o[0].reg) * 32;
  EMU_FOR_LANES(m) d[lane] = v; EMU_END_LANES
}

// The common case, a 4-byte scalar load from global memory, without the generic dispatch (and
// without extension: not for an .s32 load into a 64-bit register).
void h_ld_global_b32(Exec& x, const Inst& in, uint32_t m) {
  if (m == kFullWarp && warp_rows<4, 1, true>(x, in, san::kRead | in.flags)) return;
  uint64_t* d = x.w->r + size_t(in.o[0].reg) * 32;
  auto op = [&](int lane, const uint8_t* p) __attribute__((always_inline)) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    d[lane] = v;
  };
  each_lane(x, Space::global, in.o[1], 4, false, san::kRead | in.flags, m, op);
}

// Loads and stores with the element size and count known at compile time.
template <uint32_t ES, uint32_t V, bool Load>
void h_ldst_fixed(Exec& x, const Inst& in, uint32_t m) {
  const Operand& a_op = Load ? in.o[1] : in.o[0];
  const Operand& v_op = Load ? in.o[0] : in.o[1];
  if (m == kFullWarp && warp_rows<ES, V, Load>(x, in, (Load ? san::kRead : san::kWrite) | in.flags)) return;
  auto op = [&](int lane, uint8_t* p) __attribute__((always_inline)) {
    if constexpr (V == 1) {
      if (Load) {
        uint64_t v = 0;
        std::memcpy(&v, p, ES);
        x.set(v_op, lane, loaded(v, in));
      } else {
        const uint64_t v = x.val(v_op, lane);
        std::memcpy(p, &v, ES);
      }
    } else {
      for (uint32_t i = 0; i < V; ++i) {
        const Operand& e = x.vec(v_op, int(i));
        if (Load) {
          uint64_t v = 0;
          std::memcpy(&v, p + i * ES, ES);
          x.set(e, lane, loaded(v, in));
        } else {
          const uint64_t v = e.kind == OK::sink ? 0 : x.val(e, lane);
          std::memcpy(p + i * ES, &v, ES);
        }
      }
    }
  };
  each_lane(x, in.space, a_op, ES * V, !Load, (Load ? san::kRead : san::kWrite) | in.flags, m, op);
}

template <bool Load>
Handler fixed_ldst(uint32_t es, uint32_t v) {
#define EMU_CASE(E, N) if (es == E && v == N) return h_ldst_fixed<E, N, Load>;
  EMU_CASE(1, 1) EMU_CASE(2, 1) EMU_CASE(4, 1) EMU_CASE(8, 1)
  EMU_CASE(1, 2) EMU_CASE(2, 2) EMU_CASE(4, 2) EMU_CASE(8, 2)
  EMU_CASE(1, 4) EMU_CASE(2, 4) EMU_CASE(4, 4) EMU_CASE(8, 4)
#undef EMU_CASE
  return nullptr;
}

void h_st(Exec& x, const Inst& in, uint32_t m) {
  const uint32_t es = in.aux, total = es * in.vec;
  auto op = [&](int lane, uint8_t* p) __attribute__((always_inline)) {
    if (in.vec == 1) {
      const uint64_t v = x.val(in.o[1], lane);
      std::memcpy(p, &v, es);
    } else {
      for (uint32_t i = 0; i < in.vec; ++i) {
        const Operand& e = x.vec(in.o[1], int(i));
        const uint64_t v = e.kind == OK::sink ? 0 : x.val(e, lane);
        std::memcpy(p + i * es, &v, es);
      }
    }
  };
  each_lane(x, in.space, in.o[0], total, true, san::kWrite | in.flags, m, op);
}

// ---------------------------------------------------------------------------------------------
// Atomics. Execution is sequential, so a read-modify-write is atomic by construction; lanes of a
// warp apply in lane order.
enum AOp : uint32_t { a_add, a_min, a_max, a_inc, a_dec, a_cas, a_exch, a_and, a_or, a_xor };

template <class T>
T atomic_apply(AOp op, T old, T b, T c) {
  switch (op) {
    case a_add:
      if constexpr (std::is_integral_v<T>) return T(std::make_unsigned_t<T>(old) + std::make_unsigned_t<T>(b));
      else return old + b;
    case a_min:
      if constexpr (std::is_floating_point_v<T>) return std::isnan(old) ? b : std::isnan(b) ? old : std::min(old, b);
      else return std::min(old, b);
    case a_max:
      if constexpr (std::is_floating_point_v<T>) return std::isnan(old) ? b : std::isnan(b) ? old : std::max(old, b);
      else return std::max(old, b);
    case a_inc:  // (old >= b) ? 0 : old + 1
      if constexpr (std::is_integral_v<T>) return old >= b ? T(0) : T(old + 1);
      else return old;
    case a_dec:  // (old == 0 || old > b) ? b : old - 1
      if constexpr (std::is_integral_v<T>) return (old == 0 || old > b) ? b : T(old - 1);
      else return old;
    case a_cas: return old == b ? c : old;
    case a_exch: return b;
    case a_and: if constexpr (std::is_integral_v<T>) return T(old & b); else return old;
    case a_or: if constexpr (std::is_integral_v<T>) return T(old | b); else return old;
    case a_xor: if constexpr (std::is_integral_v<T>) return T(old ^ b); else return old;
  }
  return old;
}

template <class T> inline T from_bits(uint64_t v) {
  if constexpr (std::is_same_v<T, float>) return f32_of(v);
  else if constexpr (std::is_same_v<T, double>) return f64_of(v);
  else return T(std::make_unsigned_t<T>(v));
}
template <class T> inline uint64_t to_bits(T v) {
  if constexpr (std::is_floating_point_v<T>) return bits_of(v);
  else return uint64_t(std::make_unsigned_t<T>(v));
}

// atom.add.f32 and red.add.f32 on global memory flush subnormal inputs and results to
// sign-preserving zero; on shared memory they do not (PTX ISA, atom and red: "Current
// implementation of atom.add.f32 on global memory flushes subnormal inputs and results to
// sign-preserving zero; whereas atom.add.f32 on shared memory supports subnormal inputs and
// results"). A generic address counts as global outside the shared and local windows.
inline float flush_f32(float v) { return std::fpclassify(v) == FP_SUBNORMAL ? std::copysign(0.0f, v) : v; }
inline bool global_f32_add(const Inst& in, uint64_t a) {
  return in.space == Space::global ||
         (in.space == Space::generic && a - kSharedWindow >= kWindowSize && a - kLocalWindow >= kWindowSize);
}

// o[0] destination (sink for red), o[1] address, o[2] b, o[3] c (cas).
template <class T>
void h_atom(Exec& x, const Inst& in, uint32_t m) {
  const AOp op = AOp(in.aux);
  EMU_FOR_LANES(m)
    const uint64_t a = address(x, in.o[1], lane);
    uint8_t* p = x.addr(in.space, a, sizeof(T), lane, true);
    EMU_SAN_ACCESS(x, x.pc, in.space, a, sizeof(T), lane, san::kRead | san::kWrite | in.flags);
    T old;
    std::memcpy(&old, p, sizeof(T));
    const T b = from_bits<T>(x.val(in.o[2], lane));
    const T c = op == a_cas ? from_bits<T>(x.val(in.o[3], lane)) : T(0);
    T r;
    if constexpr (std::is_same_v<T, float>) {
      if (op == a_add && global_f32_add(in, a)) r = flush_f32(flush_f32(old) + flush_f32(b));
      else r = atomic_apply<T>(op, old, b, c);
    } else {
      r = atomic_apply<T>(op, old, b, c);
    }
    std::memcpy(p, &r, sizeof(T));
    x.set(in.o[0], lane, to_bits<T>(old));
  EMU_END_LANES
}

// Vector atomics (sm_90): atom.global.v2/v4.f32.add and red: each element added on its own.
void h_atom_vec_f32(Exec& x, const Inst& in, uint32_t m) {
  const uint32_t n = in.vec;
  EMU_FOR_LANES(m)
    const uint64_t a = address(x, in.o[1], lane);
    uint8_t* p = x.addr(in.space, a, 4 * n, lane, true);
    EMU_SAN_ACCESS(x, x.pc, in.space, a, 4 * n, lane, san::kRead | san::kWrite | in.flags);
    for (uint32_t i = 0; i < n; ++i) {
      float old;
      std::memcpy(&old, p + 4 * i, 4);
      const float r = flush_f32(flush_f32(old) + flush_f32(f32_of(x.val(x.vec(in.o[2], int(i)), lane))));  // .global only
      std::memcpy(p + 4 * i, &r, 4);
      if (in.o[0].kind == OK::vec) x.set(x.vec(in.o[0], int(i)), lane, bits_of(old));
    }
  EMU_END_LANES
}

// Packed half atomics: atom.add.noftz.{f16,f16x2,bf16,bf16x2}.
template <bool BF, bool Packed>
void h_atom_half(Exec& x, const Inst& in, uint32_t m) {
  const uint32_t size = Packed ? 4 : 2;
  auto add = [](uint16_t a, uint16_t b) {
    return BF ? fp::add_bf16(a, b) : fp::add_f16(a, b);
  };
  EMU_FOR_LANES(m)
    const uint64_t a = address(x, in.o[1], lane);
    uint8_t* p = x.addr(in.space, a, size, lane, true);
    EMU_SAN_ACCESS(x, x.pc, in.space, a, size, lane, san::kRead | san::kWrite | in.flags);
    uint32_t old = 0;
    std::memcpy(&old, p, size);
    const uint32_t b = uint32_t(x.val(in.o[2], lane));
    uint32_t r = add(uint16_t(old), uint16_t(b));
    if (Packed) r |= uint32_t(add(uint16_t(old >> 16), uint16_t(b >> 16))) << 16;
    std::memcpy(p, &r, size);
    x.set(in.o[0], lane, old);
  EMU_END_LANES
}

// ---------------------------------------------------------------------------------------------
void h_cvta_to_generic(Exec& x, const Inst& in, uint32_t m) {  // cvta.space
  EMU_FOR_LANES(m)
    uint64_t a = x.val(in.o[1], lane);
    if (in.space == Space::shared) a = kSharedWindow + uint32_t(a);
    else if (in.space == Space::local) a = kLocalWindow + uint32_t(a);
    x.set(in.o[0], lane, a);
  EMU_END_LANES
}
void h_cvta_from_generic(Exec& x, const Inst& in, uint32_t m) {  // cvta.to.space
  EMU_FOR_LANES(m)
    uint64_t a = x.val(in.o[1], lane);
    if (in.space == Space::shared || in.space == Space::local) {
      const uint64_t base = in.space == Space::shared ? kSharedWindow : kLocalWindow;
      if (a - base >= kWindowSize)
        x.fail("cvta.to." + std::string(in.space == Space::shared ? "shared" : "local") +
                   " of an address outside that window", lane);
      a -= base;
    }
    x.set(in.o[0], lane, a);
  EMU_END_LANES
}
void h_isspacep(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m)
    const uint64_t a = x.val(in.o[1], lane);
    bool r;
    if (in.space == Space::shared) r = a - kSharedWindow < kWindowSize;
    else if (in.space == Space::local) r = a - kLocalWindow < kWindowSize;
    else if (in.space == Space::global) r = a - kSharedWindow >= kWindowSize && a - kLocalWindow >= kWindowSize;
    else r = false;
    x.set(in.o[0], lane, r);
  EMU_END_LANES
}

// ---------------------------------------------------------------------------------------------
// cp.async: per lane, a queue of committed groups and one open group of pending copies.
struct PendingCopy {
  uint32_t dst;      // shared offset
  uint64_t src;      // global address
  uint32_t size, src_size;
  uint32_t pc;       // the cp.async, for the checks' messages
};
struct CopyQueue {
  std::vector<PendingCopy> open;
  std::deque<std::vector<PendingCopy>> groups;
};
// Keyed by (block pointer, warp, lane); blocks are reused, so a queue is cleared when drained.
std::map<std::tuple<const Block*, uint32_t, int>, CopyQueue>& queues() {
  static std::map<std::tuple<const Block*, uint32_t, int>, CopyQueue> q;
  return q;
}

void complete(Exec& x, const PendingCopy& c, int lane) {
  uint8_t* dst = x.addr(Space::shared, c.dst, c.size, lane, true);
  std::memset(dst, 0, c.size);
  if (c.src_size) std::memcpy(dst, x.addr(Space::global, c.src, c.src_size, lane, false), c.src_size);
  if (c.src_size) EMU_SAN_ACCESS(x, c.pc, Space::global, c.src, c.src_size, lane, san::kRead);
  EMU_SAN_ACCESS(x, c.pc, Space::shared, c.dst, c.size, lane, san::kWrite);
}

// cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size}
void h_cp_async(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m)
    PendingCopy c;
    c.dst = uint32_t(address(x, in.o[0], lane));
    c.src = address(x, in.o[1], lane);
    c.size = uint32_t(x.val(in.o[2], lane));
    c.src_size = in.o[3].kind != OK::none ? uint32_t(x.val(in.o[3], lane)) : c.size;
    if (in.o[4].kind != OK::none && x.pred(in.o[4], lane)) c.src_size = 0;  // ignore-src
    if (c.src_size > c.size) x.fail("cp.async src-size larger than cp-size", lane);
    // Check both addresses now, where the instruction is.
    x.addr(Space::shared, c.dst, c.size, lane, true);
    if (c.src_size) x.addr(Space::global, c.src, c.src_size, lane, false);
    if (c.src % c.size) x.fault(716, "misaligned cp.async source", c.src, lane);
    c.pc = x.pc;
    queues()[{x.b, x.w->index, lane}].open.push_back(c);
  EMU_END_LANES
}
void h_cp_commit(Exec& x, const Inst&, uint32_t m) {
  EMU_FOR_LANES(m)
    CopyQueue& q = queues()[{x.b, x.w->index, lane}];
    q.groups.push_back(std::move(q.open));
    q.open.clear();
  EMU_END_LANES
}
// wait_group N: all but the newest N committed groups complete. wait_all: everything.
void h_cp_wait(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m)
    auto it = queues().find({x.b, x.w->index, lane});
    if (it == queues().end()) continue;
    CopyQueue& q = it->second;
    if (in.aux == 1) {
      q.groups.push_back(std::move(q.open));
      q.open.clear();
    }
    const size_t keep = in.aux == 1 ? 0 : size_t(x.val(in.o[0], lane));
    while (q.groups.size() > keep) {
      for (const PendingCopy& c : q.groups.front()) complete(x, c, lane);
      q.groups.pop_front();
    }
    if (q.groups.empty() && q.open.empty()) queues().erase(it);
  EMU_END_LANES
}

// The width of a load's destination register (of its first element for a vector), as a bit
// type of that width; 64 bits where the register's declaration is not known.
Type destination_width(DecodeCtx& d, const PTok& t) {
  const PTok& reg = t.kind == PTok::vec && !t.elems.empty() ? t.elems[0] : t;
  auto it = d.reg_types.find(reg.text);
  switch (it == d.reg_types.end() ? 8 : type_bytes(it->second)) {
    case 1: return Type::b8;
    case 2: return Type::b16;
    case 4: return Type::b32;
    default: return Type::b64;
  }
}

}  // namespace

// Completes every cp.async of the thread, committed or not: cp.async.mbarrier.arrive's arrive-on
// waits for them (exec/async_copy.cpp).
void cp_async_complete_thread(Exec& x, int lane) {
  auto it = queues().find({x.b, x.w->index, lane});
  if (it == queues().end()) return;
  for (const auto& group : it->second.groups)
    for (const PendingCopy& c : group) complete(x, c, lane);
  for (const PendingCopy& c : it->second.open) complete(x, c, lane);
  queues().erase(it);
}

bool decode_mem(DecodeCtx& d, const PInstr& p, Inst& in) {
  const std::string& op = p.opcode;
  const Type t = d.last_type(p);
  in.space = space_of(p);
  if (op == "ld" || op == "ldu" || op == "st") {
    const bool load = op != "st";
    for (const std::string& s : p.mods)
      if (s == "v2" || s == "v4" || s == "v8") in.vec = uint8_t(s[1] - '0');
    in.type = t;
    in.aux = uint32_t(type_bytes(t));
    if (!in.aux) d.fail(p, "unknown type");
    if (p.ops.size() != 2) d.fail(p, "expected two operands");
    if (load) {
      in.o[0] = d.op(p.ops[0], t);
      in.o[1] = d.addr(p.ops[1], in.space);
      in.type2 = destination_width(d, p.ops[0]);
    } else {
      in.o[0] = d.addr(p.ops[0], in.space);
      in.o[1] = d.op(p.ops[1], t);
    }
    if (in.space == Space::konst) in.space = Space::global;  // constants live in host memory
    in.fn = load ? h_ld : h_st;
    if (Handler h = load ? fixed_ldst<true>(in.aux, in.vec) : fixed_ldst<false>(in.aux, in.vec)) in.fn = h;
    if (load && in.space == Space::global && in.vec == 1 && in.aux == 4 && in.o[0].kind == OK::reg &&
        (t != Type::s32 || type_bytes(in.type2) == 4))
      in.fn = h_ld_global_b32;
    if (load && in.space == Space::param && in.vec == 1 && in.o[1].kind == OK::none && in.o[0].kind == OK::reg)
      in.fn = h_ld_param_uniform;
    return true;
  }
  if (op == "atom" || op == "red") {
    static const char* ops_names[] = {"add", "min", "max", "inc", "dec", "cas", "exch", "and", "or", "xor"};
    bool found = false;
    for (uint32_t i = 0; i < 10; ++i)
      if (d.has(p, ops_names[i])) { in.aux = i; found = true; }
    if (!found) d.fail(p, "unknown atomic operation");
    size_t i = 0;
    if (op == "atom") in.o[0] = d.op(p.ops.at(i++), t);
    else in.o[0].kind = OK::sink;
    in.o[1] = d.addr(p.ops.at(i++), in.space);
    in.o[2] = d.op(p.ops.at(i++), t);
    if (in.aux == a_cas) in.o[3] = d.op(p.ops.at(i++), t);
    if (in.space == Space::konst) d.fail(p, "atomic on constant memory");
    in.type = t;  // the operand's type (the metrics count its bytes)
    for (const std::string& s : p.mods)
      if (s == "v2" || s == "v4" || s == "v8") in.vec = uint8_t(s[1] - '0');
    if (in.vec > 1) {
      if (t != Type::f32 || in.aux != a_add) d.fail(p, "vector atomics other than .f32 add");
      in.fn = h_atom_vec_f32;
      return true;
    }
    switch (t) {
      case Type::u32: case Type::b32: in.fn = h_atom<uint32_t>; break;
      case Type::s32: in.fn = h_atom<int32_t>; break;
      case Type::u64: case Type::b64: in.fn = h_atom<uint64_t>; break;
      case Type::s64: in.fn = h_atom<int64_t>; break;
      case Type::f32: in.fn = h_atom<float>; break;
      case Type::f64: in.fn = h_atom<double>; break;
      case Type::f16: in.fn = h_atom_half<false, false>; break;
      case Type::f16x2: in.fn = h_atom_half<false, true>; break;
      case Type::bf16: in.fn = h_atom_half<true, false>; break;
      case Type::bf16x2: in.fn = h_atom_half<true, true>; break;
      case Type::b16:  // atom.cas.b16 (sm_70): what atomicCAS on an unsigned short compiles to
        if (in.aux != a_cas) d.fail(p, "16-bit atomics other than cas");
        in.fn = h_atom<uint16_t>;
        break;
      default: d.fail(p, "atomic type");
    }
    return true;
  }
  if (op == "cvta") {
    if (p.ops.size() != 2) d.fail(p, "expected two operands");
    in.o[0] = d.op(p.ops[0]);
    in.o[1] = d.op(p.ops[1]);
    in.fn = d.has(p, "to") ? h_cvta_from_generic : h_cvta_to_generic;
    if (in.space == Space::konst || in.space == Space::param) in.space = Space::global;
    return true;
  }
  if (op == "isspacep") {
    in.o[0] = d.op(p.ops.at(0));
    in.o[1] = d.op(p.ops.at(1));
    in.fn = h_isspacep;
    return true;
  }
  if (op == "cp" && d.has(p, "async")) {
    if (d.has(p, "commit_group")) { in.fn = h_cp_commit; return true; }
    if (d.has(p, "wait_group")) { in.o[0] = d.op(p.ops.at(0)); in.fn = h_cp_wait; return true; }
    if (d.has(p, "wait_all")) { in.aux = 1; in.fn = h_cp_wait; return true; }
    if (d.has(p, "bulk") || d.has(p, "mbarrier")) return false;
    Space sd = Space::shared, ss = Space::global;
    in.o[0] = d.addr(p.ops.at(0), sd);
    in.o[1] = d.addr(p.ops.at(1), ss);
    in.o[2] = d.op(p.ops.at(2));
    // Optional: src-size (an integer), or ignore-src (a predicate), then a cache policy (b64).
    for (size_t i = 3; i < p.ops.size(); ++i) {
      const PTok& t = p.ops[i];
      const Type rt = d.reg_types.count(t.text) ? d.reg_types[t.text] : Type::u32;
      if (rt == Type::pred) in.o[4] = d.op(t);
      else if (rt == Type::b64 || rt == Type::u64) continue;  // cache policy: a hint
      else in.o[3] = d.op(t);
    }
    in.fn = h_cp_async;
    return true;
  }
  return false;
}

}  // namespace emu
