// What instruction families share: lane loops, typed views of register bits, modifier flags, and
// the decoder's interface to each family (decode_<family> in exec/<family>.cpp).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "emu.h"
#include "exec/machine.h"

namespace emu {

#define EMU_FOR_LANES(mask) \
  for (uint32_t lanes_left_ = (mask); lanes_left_; lanes_left_ &= lanes_left_ - 1) { \
    const int lane = __builtin_ctz(lanes_left_);
#define EMU_END_LANES }

// Full-warp fast paths: a handler called with all 32 lanes whose operands are registers or
// immediates can work on whole register rows (r[reg * 32 + 0..31]) in loops the compiler
// vectorizes, computing into a local row first (a destination may be a source too).
constexpr uint32_t kFullWarp = 0xFFFFFFFFu;

// The 32 values of source operand o: its register row, or buf filled with its immediate. False
// for other kinds (special registers, vectors): the handler takes its lane loop then.
__attribute__((always_inline)) inline bool src_row(const Exec& x, const Operand& o, const uint64_t*& row,
                                                   uint64_t* buf) {
  if (o.kind == OK::reg) { row = x.w->r + size_t(o.reg) * 32; return true; }
  if (o.kind == OK::imm) {
    for (int i = 0; i < 32; ++i) buf[i] = o.imm;
    row = buf;
    return true;
  }
  return false;
}
// The destination row of operand o when it is a register (else nullptr: a sink, or an error the
// lane loop reports).
__attribute__((always_inline)) inline uint64_t* dst_row(const Exec& x, const Operand& o) {
  return o.kind == OK::reg ? x.w->r + size_t(o.reg) * 32 : nullptr;
}

// d = f(sources) over the rows of a full warp, for an instruction whose destination is o[0] and
// whose N sources are o[1..N]; false (nothing done) when an operand is of another kind.
template <int N, class F>
__attribute__((always_inline)) inline bool map_rows(Exec& x, const Inst& in, F f) {
  uint64_t* d = dst_row(x, in.o[0]);
  if (!d) return false;
  uint64_t buf[N][32];
  const uint64_t* s[N];
  for (int k = 0; k < N; ++k)
    if (!src_row(x, in.o[k + 1], s[k], buf[k])) return false;
  uint64_t out[32];
  for (int i = 0; i < 32; ++i) {
    if constexpr (N == 1) out[i] = f(s[0][i]);
    else if constexpr (N == 2) out[i] = f(s[0][i], s[1][i]);
    else out[i] = f(s[0][i], s[1][i], s[2][i]);
  }
  std::memcpy(d, out, sizeof out);
  return true;
}

// Bit i: bit 0 of row[i] (a predicate register's 32 lanes as a mask).
inline uint32_t row_bits(const uint64_t* row) {
#ifdef __SSE2__
  uint32_t bits = 0;
  for (int i = 0; i < 32; i += 2) {
    const __m128i v = _mm_slli_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i)), 63);
    bits |= uint32_t(_mm_movemask_pd(_mm_castsi128_pd(v))) << i;
  }
  return bits;
#else
  uint32_t bits = 0;
  for (int i = 0; i < 32; ++i) bits |= uint32_t(row[i] & 1) << i;
  return bits;
#endif
}
// Whether the low 32 bits of the row's 32 values are all the same.
inline bool uniform_row(const uint64_t* row) {
  uint32_t diff = 0;
  for (int i = 0; i < 32; ++i) diff |= uint32_t(row[i]) ^ uint32_t(row[0]);
  return diff == 0;
}

// Loads and stores of ES-byte elements, V of them a lane, by a full warp (exec/mem.cpp calls it
// before its lane loop). Every lane's address is computed first; when all are aligned and lie in
// the block's shared memory (shared space, or generic addresses in the shared window) or all in
// the global allocation of the previous access, `before` sees the 32 addresses (the checks look at
// them there, as the lane loop would show them after checking every lane's address), then the
// values move in lane order without the per-lane dispatch, as the lane loop would move them. Otherwise (other spaces, operands that are not registers, an address the
// lane loop must look up or report) it returns false and does nothing. A loaded element is
// extended as exec/mem.cpp's loaded() extends it: by its type (extend()), then cut to the
// destination register's width (in.type2).
template <uint32_t ES, uint32_t V, bool Load, class Before>
__attribute__((always_inline)) inline bool ldst_rows(Exec& x, const Inst& in, Before before) {
  constexpr uint32_t size = ES * V;
  const Operand& a_op = Load ? in.o[1] : in.o[0];
  const Operand& v_op = Load ? in.o[0] : in.o[1];
  if (a_op.kind != OK::reg) return false;
  // The element rows: destinations of a load (nullptr: a sink), sources of a store.
  uint64_t* dst[V];
  const uint64_t* src[V];
  uint64_t imm[V];
  for (uint32_t e = 0; e < V; ++e) {
    const Operand& o = V == 1 ? v_op : x.vec(v_op, int(e));
    dst[e] = nullptr;
    src[e] = nullptr;
    imm[e] = 0;
    if (o.kind == OK::reg) {
      dst[e] = x.w->r + size_t(o.reg) * 32;
      src[e] = dst[e];
    } else if (Load ? (o.kind != OK::sink && o.kind != OK::none) : (o.kind == OK::imm)) {
      if (Load) return false;
      imm[e] = o.imm;
    } else if (!Load && o.kind != OK::sink) {
      return false;
    }
  }
  // extend(v, in.type) & the width of in.type2, as a shift pair and a mask.
  uint32_t sh = 0;
  uint64_t keep = ~0ull;
  if (Load) {
    switch (in.type) {
      case Type::s8: sh = 56; break;
      case Type::s16: sh = 48; break;
      case Type::s32: sh = 32; break;
      case Type::u8: case Type::b8: keep = 0xFF; break;
      case Type::u16: case Type::b16: case Type::f16: case Type::bf16: keep = 0xFFFF; break;
      case Type::u32: case Type::b32: case Type::f32: case Type::f16x2: case Type::bf16x2:
      case Type::tf32: keep = 0xFFFFFFFFu; break;
      default: break;
    }
    switch (in.type2) {
      case Type::b8: keep &= 0xFF; break;
      case Type::b16: keep &= 0xFFFF; break;
      case Type::b32: keep &= 0xFFFFFFFFu; break;
      default: break;
    }
  }
  const uint64_t* r = x.w->r + size_t(a_op.reg) * 32;
  uint64_t a[32];
  uint64_t lo = ~0ull, hi = 0, bits = 0;
  if (a_op.addr32) {  // 32-bit addresses: their range in 32-bit arithmetic, which vectorizes
    uint32_t lo32 = ~0u, hi32 = 0, bits32 = 0;
    for (int i = 0; i < 32; ++i) {
      const uint32_t v = uint32_t(r[i] + a_op.imm);
      a[i] = v;
      bits32 |= v;
      lo32 = v < lo32 ? v : lo32;
      hi32 = v > hi32 ? v : hi32;
    }
    lo = lo32, hi = hi32, bits = bits32;
  } else {
    for (int i = 0; i < 32; ++i) {
      a[i] = r[i] + a_op.imm;
      bits |= a[i];
      lo = a[i] < lo ? a[i] : lo;
      hi = a[i] > hi ? a[i] : hi;
    }
  }
  if (bits & (size - 1)) return false;
  uintptr_t delta;  // host address - address
  const Space space = in.space;
  if (space == Space::shared || (space == Space::generic && lo - kSharedWindow < kWindowSize &&
                                 hi - kSharedWindow < kWindowSize)) {
    const uint64_t off = space == Space::shared ? 0 : kSharedWindow;
    const uint64_t bytes = x.b->shared.size();
    if (lo < off || bytes < size || hi - off > bytes - size) return false;
    delta = reinterpret_cast<uintptr_t>(x.b->shared.data()) - off;
  } else if (space == Space::global || space == Space::generic) {
    // The previous access's allocation, else the one holding the warp's range (a kernel reading
    // two arrays alternates between them); no window address lies in an allocation.
    const Allocation* al = memory().cached();
    if (!al || lo < al->base || al->bytes < size || hi - al->base > al->bytes - size)
      al = memory().find_slow(lo, hi - lo + size);
    if (!al || (!Load && !al->writable)) return false;
    delta = 0;
  } else {
    return false;
  }
  before(static_cast<const uint64_t*>(a));
  for (int i = 0; i < 32; ++i) {
    uint8_t* p = reinterpret_cast<uint8_t*>(uintptr_t(a[i]) + delta);
    for (uint32_t e = 0; e < V; ++e) {
      if (Load) {
        uint64_t v = 0;
        std::memcpy(&v, p + e * ES, ES);
        if (dst[e]) dst[e][i] = uint64_t(int64_t(v << sh) >> sh) & keep;
      } else {
        const uint64_t v = src[e] ? src[e][i] : imm[e];
        std::memcpy(p + e * ES, &v, ES);
      }
    }
  }
  return true;
}

// Modifier bits (Inst::flags). Rounding modes share the low bits across families.
enum : uint32_t {
  kRn = 1u << 0, kRz = 1u << 1, kRm = 1u << 2, kRp = 1u << 3, kRna = 1u << 4,
  kRoundMask = 0x1F,
  kIntRound = 1u << 5,   // rni/rzi/rmi/rpi (the rounding bits say which)
  kFtz = 1u << 6, kSat = 1u << 7, kApprox = 1u << 8, kFull = 1u << 9,
  kHi = 1u << 10, kLo = 1u << 11, kWide = 1u << 12, kCc = 1u << 13,
  kSatFinite = 1u << 14, kRelu = 1u << 15, kNaN = 1u << 16, kXorSign = 1u << 17,
  kAbs = 1u << 18, kShiftAmt = 1u << 19, kVolatile = 1u << 20, kTrans = 1u << 21,
  kAligned = 1u << 22,
};

// Typed views of raw register bits.
inline float f32_of(uint64_t b) { uint32_t u = uint32_t(b); float f; std::memcpy(&f, &u, 4); return f; }
inline double f64_of(uint64_t b) { double d; std::memcpy(&d, &b, 8); return d; }
inline uint64_t bits_of(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline uint64_t bits_of(double d) { uint64_t u; std::memcpy(&u, &d, 8); return u; }

// Sign- or zero-extends the low `bytes` bytes of v (the value of a register of type t).
inline uint64_t extend(uint64_t v, Type t) {
  switch (t) {
    case Type::s8: return uint64_t(int64_t(int8_t(v)));
    case Type::s16: return uint64_t(int64_t(int16_t(v)));
    case Type::s32: return uint64_t(int64_t(int32_t(v)));
    case Type::u8: case Type::b8: return v & 0xFF;
    case Type::u16: case Type::b16: case Type::f16: case Type::bf16: return v & 0xFFFF;
    case Type::u32: case Type::b32: case Type::f32: case Type::f16x2: case Type::bf16x2:
    case Type::tf32: return v & 0xFFFFFFFFu;
    default: return v;
  }
}

inline uint64_t width_mask(int bytes) { return bytes >= 8 ? ~0ull : ((1ull << (8 * bytes)) - 1); }

// setp's last step, for every comparison type: combine with the optional predicate (in.aux: 1
// and, 2 or, 3 xor, with o[3]) and write p, and its complement q where "p|q" asks for it (o[4]).
inline void setp_write(Exec& x, const Inst& in, int lane, bool r) {
  bool q = !r;
  if (in.aux) {
    const bool p = x.pred(in.o[3], lane);
    if (in.aux == 1) { r = r && p; q = q && p; }
    else if (in.aux == 2) { r = r || p; q = q || p; }
    else { r = r != p; q = q != p; }
  }
  x.set(in.o[0], lane, r);
  if (in.o[4].kind == OK::reg) x.set(in.o[4], lane, q);
}

struct DecodeCtx;
// Each family returns true when it recognized (and decoded) the instruction.
bool decode_alu(DecodeCtx& d, const PInstr& p, Inst& in);
bool decode_float(DecodeCtx& d, const PInstr& p, Inst& in);
bool decode_cvt(DecodeCtx& d, const PInstr& p, Inst& in);
bool decode_mem(DecodeCtx& d, const PInstr& p, Inst& in);
// The state space an instruction's modifiers name (generic without one; exec/decode.cpp).
Space space_of(const PInstr& p);
bool decode_warp(DecodeCtx& d, const PInstr& p, Inst& in);
bool decode_tensor(DecodeCtx& d, const PInstr& p, Inst& in);
bool decode_wgmma(DecodeCtx& d, const PInstr& p, Inst& in);  // exec/wgmma.cpp
namespace wgmma {
// Warps with wgmma.mma_async in flight; while nonzero the scheduler calls step() before each
// warp-instruction, which stops an access to a register of an in-flight wgmma.
extern __attribute__((visibility("hidden"))) uint32_t g_pending;
void step(Exec& x, const Inst& in);
}  // namespace wgmma
bool decode_control(DecodeCtx& d, const PInstr& p, Inst& in);
// exec/control.cpp: Ctl::call and Ctl::ret run by the lanes `active` of the group `mask` at x.pc
// (the others move past it); the scheduler regroups the warp after either.
void call_lanes(Exec& x, const Inst& in, uint32_t mask, uint32_t active);
void return_lanes(Exec& x, const Inst& in, uint32_t mask, uint32_t active);
// exec/async_copy.cpp: mbarrier, cp.async.bulk and cp.async.bulk.tensor.
bool decode_async(DecodeCtx& d, const PInstr& p, Inst& in);
// exec/mem.cpp: completes the thread's cp.async copies (for cp.async.mbarrier.arrive).
void cp_async_complete_thread(Exec& x, int lane);
// Why a lane suspended in mbarrier.try_wait (park_bar -2) waits, for a deadlock report.
std::string mbarrier_wait_text(Exec& x, int lane);
// exec/cluster.cpp: mapa, getctarank, barrier.cluster, and the cluster special registers.
bool decode_cluster(DecodeCtx& d, const PInstr& p, Inst& in);
bool cluster_sreg_of(const std::string& name, uint32_t* id);
// exec/device_launch.cpp: the device runtime's launch functions (dynamic parallelism).
bool decode_device_runtime_call(DecodeCtx& d, const std::string& callee, const Operand& ret,
                                const PTok* args, Inst& in);

// The decoder's services to the families.
struct DecodeCtx {
  Kernel& k;
  Module& m;
  const PFunc& f;
  std::vector<std::map<std::string, uint32_t>> scopes;  // register names, innermost last
  std::map<std::string, uint32_t> labels;
  std::map<std::string, uint32_t> local_vars;   // .local name -> offset within a thread's window
  std::map<std::string, uint32_t> shared_vars;  // function-scope .shared -> offset
  std::map<std::string, Type> reg_types;

  Operand op(const PTok& t, Type hint = Type::none);      // a source or destination
  Operand addr(const PTok& t, Space& space);              // "[base+off]" (space may be refined)
  uint64_t symbol(const std::string& name, Space* space, bool* found);
  int32_t reg_index(const std::string& name);             // -1 if unknown
  [[noreturn]] void fail(const PInstr& p, const std::string& why) const;
  bool has(const PInstr& p, const char* mod) const;
  Type last_type(const PInstr& p) const;                   // the last modifier that is a type
  uint32_t rounding(const PInstr& p) const;                // kRn.. | kIntRound
};

}  // namespace emu
