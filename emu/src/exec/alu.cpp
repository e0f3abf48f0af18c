// Integer and bit instructions, mov, selp, setp (integer and floating-point comparisons).
#include <type_traits>

#include "exec/ops.h"

namespace emu {

namespace {

template <class T> inline T get(uint64_t v) { return T(std::make_unsigned_t<T>(v)); }
template <class T> inline uint64_t put(T v) { return uint64_t(std::make_unsigned_t<T>(v)); }

// ---------------------------------------------------------------------------------------------
// Binary and unary integer operations, instantiated per type.
template <class T, class Op>
struct h_bin {
  static void run(Exec& x, const Inst& in, uint32_t m) {
    if (m == kFullWarp) {  // register rows (ops.h)
      uint64_t* d = dst_row(x, in.o[0]);
      uint64_t ba[32], bb[32];
      const uint64_t *a, *b;
      if (d && src_row(x, in.o[1], a, ba) && src_row(x, in.o[2], b, bb)) {
        uint64_t out[32];
        for (int i = 0; i < 32; ++i) out[i] = put<T>(Op::template f<T>(get<T>(a[i]), get<T>(b[i]), in));
        std::memcpy(d, out, sizeof out);
        return;
      }
    }
    EMU_FOR_LANES(m)
      x.set(in.o[0], lane, put<T>(Op::template f<T>(get<T>(x.val(in.o[1], lane)), get<T>(x.val(in.o[2], lane)), in)));
    EMU_END_LANES
  }
};
template <class T, class Op>
struct h_un {
  static void run(Exec& x, const Inst& in, uint32_t m) {
    if (m == kFullWarp &&
        map_rows<1>(x, in, [&](uint64_t a) { return put<T>(Op::template f<T>(get<T>(a), in)); }))
      return;
    EMU_FOR_LANES(m)
      x.set(in.o[0], lane, put<T>(Op::template f<T>(get<T>(x.val(in.o[1], lane)), in)));
    EMU_END_LANES
  }
};
template <class T, class Op>
struct h_tern {
  static void run(Exec& x, const Inst& in, uint32_t m) {
    if (m == kFullWarp && map_rows<3>(x, in, [&](uint64_t a, uint64_t b, uint64_t c) {
          return put<T>(Op::template f<T>(get<T>(a), get<T>(b), get<T>(c), in));
        }))
      return;
    EMU_FOR_LANES(m)
      x.set(in.o[0], lane, put<T>(Op::template f<T>(get<T>(x.val(in.o[1], lane)), get<T>(x.val(in.o[2], lane)),
                                                 get<T>(x.val(in.o[3], lane)), in)));
    EMU_END_LANES
  }
};

template <template <class, class> class H, class Op>
Handler pick(Type t) {
  switch (t) {
    case Type::u8: case Type::b8: return H<uint8_t, Op>::run;
    case Type::s8: return H<int8_t, Op>::run;
    case Type::u16: case Type::b16: return H<uint16_t, Op>::run;
    case Type::s16: return H<int16_t, Op>::run;
    case Type::u32: case Type::b32: case Type::pred: return H<uint32_t, Op>::run;
    case Type::s32: return H<int32_t, Op>::run;
    case Type::u64: case Type::b64: return H<uint64_t, Op>::run;
    case Type::s64: return H<int64_t, Op>::run;
    default: return nullptr;
  }
}

template <class T> using U = std::make_unsigned_t<T>;

struct Add { template <class T> static T f(T a, T b, const Inst& in) {
  if ((in.flags & kSat) && std::is_same_v<T, int32_t>) {
    int64_t r = int64_t(a) + int64_t(b);
    return T(std::min<int64_t>(INT32_MAX, std::max<int64_t>(INT32_MIN, r)));
  }
  return T(U<T>(a) + U<T>(b)); } };
struct Sub { template <class T> static T f(T a, T b, const Inst& in) {
  if ((in.flags & kSat) && std::is_same_v<T, int32_t>) {
    int64_t r = int64_t(a) - int64_t(b);
    return T(std::min<int64_t>(INT32_MAX, std::max<int64_t>(INT32_MIN, r)));
  }
  return T(U<T>(a) - U<T>(b)); } };
// mul.lo / mul.hi (mul.wide has its own handler: the result is twice as wide).
struct Mul { template <class T> static T f(T a, T b, const Inst& in) {
  if (in.flags & kHi) {
    if constexpr (sizeof(T) == 8) {
      using W = std::conditional_t<std::is_signed_v<T>, __int128, unsigned __int128>;
      return T(U<T>((W(a) * W(b)) >> 64));
    } else {
      using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
      return T(U<T>(uint64_t(W(a) * W(b)) >> (8 * sizeof(T))));
    }
  }
  return T(U<T>(U<T>(a) * U<T>(b))); } };
struct Mad { template <class T> static T f(T a, T b, T c, const Inst& in) {
  // mad.hi.sat.s32: the high half of the product plus c, saturated.
  if ((in.flags & kSat) && std::is_same_v<T, int32_t>) {
    const int64_t hi = (int64_t(a) * int64_t(b)) >> 32;
    const int64_t r = hi + int64_t(c);
    return T(std::min<int64_t>(INT32_MAX, std::max<int64_t>(INT32_MIN, r)));
  }
  if (in.flags & kHi) return T(U<T>(Mul::f<T>(a, b, in)) + U<T>(c));
  return T(U<T>(U<T>(a) * U<T>(b)) + U<T>(c)); } };
// Division by zero is unspecified by the ISA; the emulator gives all ones (as the hardware's
// unsigned division does) rather than a host exception. INT_MIN / -1 wraps.
struct Div { template <class T> static T f(T a, T b, const Inst&) {
  if (b == 0) return T(~U<T>(0));
  if constexpr (std::is_signed_v<T>) if (b == T(-1)) return T(U<T>(0) - U<T>(a));
  return T(a / b); } };
struct Rem { template <class T> static T f(T a, T b, const Inst&) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<T>) if (b == T(-1)) return 0;
  return T(a % b); } };
struct Min { template <class T> static T f(T a, T b, const Inst& in) {
  T r = a < b ? a : b;
  if constexpr (std::is_signed_v<T>) if ((in.flags & kRelu) && r < 0) r = 0;
  return r; } };
struct Max { template <class T> static T f(T a, T b, const Inst& in) {
  T r = a > b ? a : b;
  if constexpr (std::is_signed_v<T>) if ((in.flags & kRelu) && r < 0) r = 0;
  return r; } };
struct And { template <class T> static T f(T a, T b, const Inst&) { return T(a & b); } };
struct Or { template <class T> static T f(T a, T b, const Inst&) { return T(a | b); } };
struct Xor { template <class T> static T f(T a, T b, const Inst&) { return T(a ^ b); } };
struct Not { template <class T> static T f(T a, const Inst&) { return T(~U<T>(a)); } };
struct Cnot { template <class T> static T f(T a, const Inst&) { return T(a == 0 ? 1 : 0); } };
struct Neg { template <class T> static T f(T a, const Inst&) { return T(U<T>(0) - U<T>(a)); } };
struct Abs { template <class T> static T f(T a, const Inst&) {
  if constexpr (std::is_signed_v<T>) return a < 0 ? T(U<T>(0) - U<T>(a)) : a;
  return a; } };

// Shifts: the amount is a u32 operand whatever the type.
template <class T, bool Left>
void h_shift(Exec& x, const Inst& in, uint32_t m) {
  constexpr uint32_t bits = 8 * sizeof(T);
  EMU_FOR_LANES(m)
    T a = get<T>(x.val(in.o[1], lane));
    uint32_t s = uint32_t(x.val(in.o[2], lane));
    T r;
    if (Left) r = s >= bits ? T(0) : T(U<T>(a) << s);
    else if (std::is_signed_v<T>) r = s >= bits ? T(a < 0 ? -1 : 0) : T(a >> s);
    else r = s >= bits ? T(0) : T(U<T>(a) >> s);
    x.set(in.o[0], lane, put<T>(r));
  EMU_END_LANES
}

Handler pick_shift(Type t, bool left) {
  switch (t) {
    case Type::b16: case Type::u16: return left ? h_shift<uint16_t, true> : h_shift<uint16_t, false>;
    case Type::s16: return left ? h_shift<uint16_t, true> : h_shift<int16_t, false>;
    case Type::b32: case Type::u32: return left ? h_shift<uint32_t, true> : h_shift<uint32_t, false>;
    case Type::s32: return left ? h_shift<uint32_t, true> : h_shift<int32_t, false>;
    case Type::b64: case Type::u64: return left ? h_shift<uint64_t, true> : h_shift<uint64_t, false>;
    case Type::s64: return left ? h_shift<uint64_t, true> : h_shift<int64_t, false>;
    default: return nullptr;
  }
}

// mul.wide / mad.wide: 16->32 or 32->64 bits.
template <class T, bool Mad>
void h_wide(Exec& x, const Inst& in, uint32_t m) {
  using W = std::conditional_t<sizeof(T) == 2, std::conditional_t<std::is_signed_v<T>, int32_t, uint32_t>,
                               std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
  if (m == kFullWarp) {  // register rows (ops.h)
    if constexpr (Mad) {
      if (map_rows<3>(x, in, [](uint64_t a, uint64_t b, uint64_t c) {
            const W r = W(get<T>(a)) * W(get<T>(b));
            return put<W>(W(std::make_unsigned_t<W>(r) + std::make_unsigned_t<W>(get<W>(c))));
          }))
        return;
    } else {
      if (map_rows<2>(x, in, [](uint64_t a, uint64_t b) { return put<W>(W(get<T>(a)) * W(get<T>(b))); }))
        return;
    }
  }
  EMU_FOR_LANES(m)
    W r = W(get<T>(x.val(in.o[1], lane))) * W(get<T>(x.val(in.o[2], lane)));
    if (Mad) r = W(std::make_unsigned_t<W>(r) + std::make_unsigned_t<W>(get<W>(x.val(in.o[3], lane))));
    x.set(in.o[0], lane, put<W>(r));
  EMU_END_LANES
}

// Carry chain: add.cc / addc / sub.cc / subc, 32 and 64 bits. The carry lives in a register
// the decoder reserves (CC.CF).
template <class T, bool Sub, bool UseCarry, bool SetCarry>
void h_carry(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m)
    const T a = T(x.val(in.o[1], lane)), b = T(x.val(in.o[2], lane));
    uint64_t& cf = x.reg(in.aux, lane);
    const T cin = UseCarry ? T(cf & 1) : T(0);
    T r;
    bool cout;
    if (!Sub) {
      r = T(a + b + cin);
      cout = (r < a) || (UseCarry && cin && r == a);
    } else {
      // sub.cc: borrow out; subc uses the borrow in (a - b - borrow).
      r = T(a - b - cin);
      cout = (a < b) || (UseCarry && cin && a == b);
    }
    if (SetCarry) cf = cout;
    x.set(in.o[0], lane, uint64_t(r));
  EMU_END_LANES
}

template <class T>
void h_popc(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m) x.set(in.o[0], lane, uint32_t(__builtin_popcountll(uint64_t(T(x.val(in.o[1], lane)))))); EMU_END_LANES
}
template <class T>
void h_clz(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m)
    uint64_t v = T(x.val(in.o[1], lane));
    uint32_t r = v == 0 ? 8 * sizeof(T) : uint32_t(__builtin_clzll(v) - (64 - 8 * sizeof(T)));
    x.set(in.o[0], lane, r);
  EMU_END_LANES
}
template <class T>
void h_brev(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m)
    uint64_t v = T(x.val(in.o[1], lane)), r = 0;
    for (unsigned i = 0; i < 8 * sizeof(T); ++i) r |= ((v >> i) & 1) << (8 * sizeof(T) - 1 - i);
    x.set(in.o[0], lane, r);
  EMU_END_LANES
}
// bfind: position of the most significant non-sign bit; 0xFFFFFFFF when there is none.
template <class T>
void h_bfind(Exec& x, const Inst& in, uint32_t m) {
  constexpr int bits = 8 * sizeof(T);
  EMU_FOR_LANES(m)
    T v = get<T>(x.val(in.o[1], lane));
    uint64_t u = uint64_t(U<T>(v));
    if (std::is_signed_v<T> && v < 0) u = uint64_t(U<T>(~v));
    uint32_t r = 0xFFFFFFFFu;
    if (u) {
      r = uint32_t(63 - __builtin_clzll(u));
      if (in.flags & kShiftAmt) r = uint32_t(bits - 1) - r;
    }
    x.set(in.o[0], lane, r);
  EMU_END_LANES
}
// bfe: extract len bits at pos (both from the low 8 bits of their operands), sign-extending
// from the last extracted bit (or the msb, past the end) for signed types.
template <class T>
void h_bfe(Exec& x, const Inst& in, uint32_t m) {
  constexpr uint32_t bits = 8 * sizeof(T);
  EMU_FOR_LANES(m)
    const uint64_t a = uint64_t(U<T>(get<T>(x.val(in.o[1], lane))));
    const uint32_t pos = uint32_t(x.val(in.o[2], lane)) & 0xFF, len = uint32_t(x.val(in.o[3], lane)) & 0xFF;
    uint64_t r = 0;
    bool sbit = false;
    if (std::is_signed_v<T>) {
      const uint32_t top = std::min(pos + len - 1, bits - 1);
      sbit = len != 0 && ((a >> (pos >= bits ? bits - 1 : top)) & 1);
    }
    for (uint32_t i = 0; i < bits; ++i) {
      bool bit;
      if (i < len && pos + i < bits) bit = (a >> (pos + i)) & 1;
      else bit = sbit;
      r |= uint64_t(bit) << i;
    }
    x.set(in.o[0], lane, r & width_mask(sizeof(T)));
  EMU_END_LANES
}
template <class T>
void h_bfi(Exec& x, const Inst& in, uint32_t m) {
  constexpr uint32_t bits = 8 * sizeof(T);
  EMU_FOR_LANES(m)
    const uint64_t a = T(x.val(in.o[1], lane)), b = T(x.val(in.o[2], lane));
    const uint32_t pos = uint32_t(x.val(in.o[3], lane)) & 0xFF, len = uint32_t(x.val(in.o[4], lane)) & 0xFF;
    uint64_t r = b;
    for (uint32_t i = 0; i < len && pos + i < bits; ++i)
      r = (r & ~(1ull << (pos + i))) | (((a >> i) & 1) << (pos + i));
    x.set(in.o[0], lane, r);
  EMU_END_LANES
}

// prmt.b32 d, a, b, c: bytes of {b, a} selected by c (default mode: a nibble per byte, bit 3
// replicates the sign of the selected byte); and the .f4e/.b4e/.rc8/.ecl/.ecr/.rc16 modes.
void h_prmt(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m)
    const uint64_t a = uint32_t(x.val(in.o[1], lane)), b = uint32_t(x.val(in.o[2], lane));
    const uint32_t c = uint32_t(x.val(in.o[3], lane));
    const uint64_t src = a | (b << 32);
    auto byte = [&](uint32_t i) { return uint32_t(src >> (8 * (i & 7))) & 0xFF; };
    uint32_t r = 0;
    const uint32_t mode = in.aux;
    for (uint32_t i = 0; i < 4; ++i) {
      uint32_t sel = 0, v;
      switch (mode) {
        case 0: {
          sel = (c >> (4 * i)) & 0xF;
          v = byte(sel & 7);
          if (sel & 8) v = (v & 0x80) ? 0xFF : 0;
          r |= v << (8 * i);
          continue;
        }
        case 1: sel = ((c & 3) + i) & 7; break;                  // f4e: forward 4 extract
        case 2: sel = ((c & 3) - i) & 7; break;                  // b4e: backward 4 extract
        case 3: sel = c & 3; break;                              // rc8: replicate 8
        case 4: sel = std::max(i, c & 3); break;                 // ecl: edge clamp left
        case 5: sel = std::min(i, c & 3); break;                 // ecr: edge clamp right
        case 6: sel = (c & 1) * 2 + (i & 1); break;              // rc16: replicate 16
      }
      r |= byte(sel) << (8 * i);
    }
    x.set(in.o[0], lane, r);
  EMU_END_LANES
}

// dp4a / dp2a: dot products of packed bytes (halves) accumulated into 32 bits.
template <bool ASigned, bool BSigned, int Halves>
void h_dp(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m)
    const uint32_t a = uint32_t(x.val(in.o[1], lane)), b = uint32_t(x.val(in.o[2], lane));
    int64_t acc = ASigned || BSigned ? int64_t(int32_t(uint32_t(x.val(in.o[3], lane))))
                                     : int64_t(uint32_t(x.val(in.o[3], lane)));
    if (Halves == 0) {
      for (int i = 0; i < 4; ++i) {
        int64_t ai = ASigned ? int8_t(a >> (8 * i)) : uint8_t(a >> (8 * i));
        int64_t bi = BSigned ? int8_t(b >> (8 * i)) : uint8_t(b >> (8 * i));
        acc += ai * bi;
      }
    } else {
      const int base = Halves == 2 ? 2 : 0;  // .hi uses bytes 2,3 of b
      for (int i = 0; i < 2; ++i) {
        int64_t ai = ASigned ? int16_t(a >> (16 * i)) : uint16_t(a >> (16 * i));
        int64_t bi = BSigned ? int8_t(b >> (8 * (base + i))) : uint8_t(b >> (8 * (base + i)));
        acc += ai * bi;
      }
    }
    x.set(in.o[0], lane, uint32_t(uint64_t(acc)));
  EMU_END_LANES
}

void h_lop3(Exec& x, const Inst& in, uint32_t m) {
  const uint32_t lut = in.aux;
  EMU_FOR_LANES(m)
    const uint32_t a = uint32_t(x.val(in.o[1], lane)), b = uint32_t(x.val(in.o[2], lane)),
                   c = uint32_t(x.val(in.o[3], lane));
    uint32_t r = 0;
    for (int i = 0; i < 32; ++i) {
      int idx = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
      r |= ((lut >> idx) & 1u) << i;
    }
    x.set(in.o[0], lane, r);
  EMU_END_LANES
}

// ---------------------------------------------------------------------------------------------
// mov: register, immediate, special register or symbol address; packing and unpacking.
void h_mov(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m) x.set(in.o[0], lane, x.val(in.o[1], lane)); EMU_END_LANES
}
void h_mov_reg(Exec& x, const Inst& in, uint32_t m) {
  uint64_t* d = x.w->r + size_t(in.o[0].reg) * 32;
  const uint64_t* s = x.w->r + size_t(in.o[1].reg) * 32;
  if (m == 0xFFFFFFFFu) { std::memcpy(d, s, 32 * 8); return; }
  EMU_FOR_LANES(m) d[lane] = s[lane]; EMU_END_LANES
}
// mov from a special register: the common ones without a per-lane dispatch.
void h_mov_sreg(Exec& x, const Inst& in, uint32_t m) {
  uint64_t* d = x.w->r + size_t(in.o[0].reg) * 32;
  const uint32_t base = x.w->index * 32;
  const Dim3& bd = x.l->block;
  switch (in.o[1].reg) {
    case sr_tid_x:
      if (m == kFullWarp && bd.y == 1 && bd.z == 1) { for (uint32_t i = 0; i < 32; ++i) d[i] = base + i; }
      else if (bd.y == 1 && bd.z == 1) { EMU_FOR_LANES(m) d[lane] = base + uint32_t(lane); EMU_END_LANES }
      else { EMU_FOR_LANES(m) d[lane] = (base + uint32_t(lane)) % bd.x; EMU_END_LANES }
      return;
    case sr_laneid: EMU_FOR_LANES(m) d[lane] = uint32_t(lane); EMU_END_LANES return;
    case sr_ntid_x: case sr_ntid_y: case sr_ntid_z: case sr_ctaid_x: case sr_ctaid_y: case sr_ctaid_z:
    case sr_nctaid_x: case sr_nctaid_y: case sr_nctaid_z: {
      const uint64_t v = x.sreg(in.o[1].reg, __builtin_ctz(m));  // the same for every lane
      if (m == kFullWarp) { for (int i = 0; i < 32; ++i) d[i] = v; }
      else { EMU_FOR_LANES(m) d[lane] = v; EMU_END_LANES }
      return;
    }
    default: EMU_FOR_LANES(m) d[lane] = x.sreg(in.o[1].reg, lane); EMU_END_LANES
  }
}

void h_mov_imm(Exec& x, const Inst& in, uint32_t m) {
  uint64_t* d = x.w->r + size_t(in.o[0].reg) * 32;
  const uint64_t v = in.o[1].imm;
  if (m == kFullWarp) {
    for (int i = 0; i < 32; ++i) d[i] = v;
    return;
  }
  EMU_FOR_LANES(m) d[lane] = v; EMU_END_LANES
}
void h_pack(Exec& x, const Inst& in, uint32_t m) {  // mov.bN d, {a, b, ...}
  const Operand& v = in.o[1];
  const uint32_t part = in.aux;  // bits per element
  EMU_FOR_LANES(m)
    uint64_t r = 0;
    for (int i = 0; i < v.count; ++i) r |= (x.val(x.vec(v, i), lane) & width_mask(int(part / 8))) << (part * i);
    x.set(in.o[0], lane, r);
  EMU_END_LANES
}
void h_unpack(Exec& x, const Inst& in, uint32_t m) {  // mov.bN {a, b, ...}, s
  const Operand& v = in.o[0];
  const uint32_t part = in.aux;
  EMU_FOR_LANES(m)
    const uint64_t s = x.val(in.o[1], lane);
    for (int i = 0; i < v.count; ++i) x.set(x.vec(v, i), lane, (s >> (part * i)) & width_mask(int(part / 8)));
  EMU_END_LANES
}

void h_selp(Exec& x, const Inst& in, uint32_t m) {
  if (m == kFullWarp) {  // register rows (ops.h)
    uint64_t* d = dst_row(x, in.o[0]);
    uint64_t ba[32], bb[32], bc[32];
    const uint64_t *a, *b, *c;
    if (d && src_row(x, in.o[1], a, ba) && src_row(x, in.o[2], b, bb) && src_row(x, in.o[3], c, bc)) {
      const uint64_t flip = in.o[3].neg ? 1 : 0;
      uint64_t out[32];
      for (int i = 0; i < 32; ++i) out[i] = ((c[i] & 1) ^ flip) ? a[i] : b[i];
      std::memcpy(d, out, sizeof out);
      return;
    }
  }
  EMU_FOR_LANES(m)
    x.set(in.o[0], lane, x.pred(in.o[3], lane) ? x.val(in.o[1], lane) : x.val(in.o[2], lane));
  EMU_END_LANES
}

// ---------------------------------------------------------------------------------------------
// setp: compare, optionally combine with a predicate; "p|q" also writes the complement.
enum Cmp : uint32_t { eq, ne, lt, le, gt, ge, lo, ls, hi, hs, equ, neu, ltu, leu, gtu, geu, num, nan };
Cmp parse_cmp(const std::string& s, bool* ok) {
  static const char* names[] = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi",
                                "hs", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
  for (uint32_t i = 0; i < 18; ++i)
    if (s == names[i]) { *ok = true; return Cmp(i); }
  *ok = false;
  return eq;
}

template <class T>
bool compare(T a, T b, Cmp c) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool unord = std::isnan(a) || std::isnan(b);
    switch (c) {
      case eq: return !unord && a == b;
      case ne: return !unord && a != b;
      case lt: return !unord && a < b;
      case le: return !unord && a <= b;
      case gt: return !unord && a > b;
      case ge: return !unord && a >= b;
      case equ: return unord || a == b;
      case neu: return unord || a != b;
      case ltu: return unord || a < b;
      case leu: return unord || a <= b;
      case gtu: return unord || a > b;
      case geu: return unord || a >= b;
      case num: return !unord;
      case nan: return unord;
      default: return false;
    }
  } else {
    using UT = std::make_unsigned_t<T>;
    switch (c) {
      case eq: return a == b;
      case ne: return a != b;
      case lt: return a < b;
      case le: return a <= b;
      case gt: return a > b;
      case ge: return a >= b;
      case lo: return UT(a) < UT(b);
      case ls: return UT(a) <= UT(b);
      case hi: return UT(a) > UT(b);
      case hs: return UT(a) >= UT(b);
      default: return false;
    }
  }
}

template <class T> inline T load_as(uint64_t v) {
  if constexpr (std::is_same_v<T, float>) return f32_of(v);
  else if constexpr (std::is_same_v<T, double>) return f64_of(v);
  else return get<T>(v);
}

// flags: the comparison; aux: 0 none, 1 and, 2 or, 3 xor (combine with o[3]); o[4]: complement.
template <class T> inline T flush(T v, bool ftz) {
  if constexpr (std::is_same_v<T, float>) {
    if (ftz && std::fpclassify(v) == FP_SUBNORMAL) return std::copysign(0.0f, v);
  }
  (void)ftz;
  return v;
}

// setp of a full warp on register rows (ops.h), the comparison a template argument.
template <class T, Cmp C>
void setp_rows(uint64_t* p, uint64_t* q, const uint64_t* a, const uint64_t* b) {
  uint64_t out[32];
  for (int i = 0; i < 32; ++i) out[i] = compare(load_as<T>(a[i]), load_as<T>(b[i]), C);
  std::memcpy(p, out, sizeof out);
  if (q)
    for (int i = 0; i < 32; ++i) q[i] = out[i] ^ 1;
}

template <class T>
bool setp_full(Exec& x, const Inst& in) {
  // Without a combining predicate, and without .ftz (which only f32 has): p, and q = !p.
  if (in.aux || (std::is_same_v<T, float> && (in.flags & kFtz))) return false;
  uint64_t* p = dst_row(x, in.o[0]);
  uint64_t* q = dst_row(x, in.o[4]);
  uint64_t ba[32], bb[32];
  const uint64_t *a, *b;
  if (!p || (in.o[4].kind != OK::reg && in.o[4].kind != OK::none && in.o[4].kind != OK::sink) ||
      !src_row(x, in.o[1], a, ba) || !src_row(x, in.o[2], b, bb))
    return false;
  if (q == p) return false;  // p and q the same register: the lane loop's order decides
  switch (Cmp(in.flags & 0x1F)) {
#define EMU_CMP(C) case C: setp_rows<T, C>(p, q, a, b); return true;
    EMU_CMP(eq) EMU_CMP(ne) EMU_CMP(lt) EMU_CMP(le) EMU_CMP(gt) EMU_CMP(ge)
    EMU_CMP(lo) EMU_CMP(ls) EMU_CMP(hi) EMU_CMP(hs) EMU_CMP(equ) EMU_CMP(neu)
    EMU_CMP(ltu) EMU_CMP(leu) EMU_CMP(gtu) EMU_CMP(geu) EMU_CMP(num) EMU_CMP(nan)
#undef EMU_CMP
    default: return false;
  }
}

template <class T>
void h_setp(Exec& x, const Inst& in, uint32_t m) {
  if (m == kFullWarp && setp_full<T>(x, in)) return;
  const Cmp c = Cmp(in.flags & 0x1F);
  const bool ftz = in.flags & kFtz;
  EMU_FOR_LANES(m)
    bool r = compare(flush(load_as<T>(x.val(in.o[1], lane)), ftz), flush(load_as<T>(x.val(in.o[2], lane)), ftz), c);
    setp_write(x, in, lane, r);
  EMU_END_LANES
}

Handler pick_setp(Type t) {
  switch (t) {
    case Type::u16: case Type::b16: return h_setp<uint16_t>;
    case Type::s16: return h_setp<int16_t>;
    case Type::u32: case Type::b32: return h_setp<uint32_t>;
    case Type::s32: return h_setp<int32_t>;
    case Type::u64: case Type::b64: return h_setp<uint64_t>;
    case Type::s64: return h_setp<int64_t>;
    case Type::f32: return h_setp<float>;
    case Type::f64: return h_setp<double>;
    default: return nullptr;
  }
}

// mul24/mad24: the low 24 bits of each operand (sign-extended for .s32), a 48-bit product;
// .lo keeps bits 0-31, .hi bits 16-47.
template <bool Signed, bool Mad>
void h_mul24(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m)
    auto low24 = [&](uint64_t v) -> int64_t {
      const uint32_t u = uint32_t(v) & 0xFFFFFF;
      return Signed ? int64_t(int32_t(u << 8) >> 8) : int64_t(u);
    };
    const int64_t p = low24(x.val(in.o[1], lane)) * low24(x.val(in.o[2], lane));
    uint32_t r = (in.flags & kHi) ? uint32_t(uint64_t(p) >> 16) : uint32_t(uint64_t(p));
    if (Mad) r += uint32_t(x.val(in.o[3], lane));
    x.set(in.o[0], lane, r);
  EMU_END_LANES
}

// Packed 16-bit integer SIMD: add, sub, min, max on .u16x2/.s16x2 (.relu clamps at zero).
template <bool Signed, int Op>  // 0 add, 1 sub, 2 min, 3 max
void h_simd16(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m)
    const uint32_t a = uint32_t(x.val(in.o[1], lane)), b = uint32_t(x.val(in.o[2], lane));
    uint32_t r = 0;
    for (int h = 0; h < 2; ++h) {
      const int32_t av = Signed ? int16_t(a >> (16 * h)) : int32_t(uint16_t(a >> (16 * h)));
      const int32_t bv = Signed ? int16_t(b >> (16 * h)) : int32_t(uint16_t(b >> (16 * h)));
      int32_t v = Op == 0 ? av + bv : Op == 1 ? av - bv : Op == 2 ? std::min(av, bv) : std::max(av, bv);
      if ((in.flags & kRelu) && v < 0) v = 0;
      r |= (uint32_t(v) & 0xFFFF) << (16 * h);
    }
    x.set(in.o[0], lane, r);
  EMU_END_LANES
}

// shf.{l,r}.{clamp,wrap}.b32 d, a, b, c: funnel shift of the 64-bit {b, a} (b the upper word).
template <bool Left, bool Clamp>
void h_shf(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m)
    const uint64_t a = uint32_t(x.val(in.o[1], lane)), b = uint32_t(x.val(in.o[2], lane));
    const uint32_t c = uint32_t(x.val(in.o[3], lane));
    const uint32_t n = Clamp ? std::min<uint32_t>(c, 32) : (c & 31);
    const uint64_t both = (b << 32) | a;
    const uint32_t r = Left ? uint32_t((both << n) >> 32) : uint32_t(both >> n);
    x.set(in.o[0], lane, r);
  EMU_END_LANES
}

// sad: c + |a - b|.
template <class T>
void h_sad(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m)
    const T a = get<T>(x.val(in.o[1], lane)), b = get<T>(x.val(in.o[2], lane)), c = get<T>(x.val(in.o[3], lane));
    const U<T> diff = a > b ? U<T>(U<T>(a) - U<T>(b)) : U<T>(U<T>(b) - U<T>(a));
    x.set(in.o[0], lane, put<T>(T(U<T>(c) + diff)));
  EMU_END_LANES
}

// bmsk.{clamp,wrap}.b32 d, a, b: b ones starting at bit a.
template <bool Clamp>
void h_bmsk(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m)
    uint32_t pos = uint32_t(x.val(in.o[1], lane)), len = uint32_t(x.val(in.o[2], lane));
    if (Clamp) { pos = std::min<uint32_t>(pos, 32); len = std::min<uint32_t>(len, 32); }
    else { pos &= 31; len &= 31; }
    const uint64_t ones = len >= 64 ? ~0ull : ((1ull << len) - 1);
    x.set(in.o[0], lane, uint32_t((ones << pos) & 0xFFFFFFFFull));
  EMU_END_LANES
}

// szext.{clamp,wrap}.{s32,u32} d, a, b: keep the low b bits of a, sign- or zero-extended.
template <bool Signed, bool Clamp>
void h_szext(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m)
    const uint32_t a = uint32_t(x.val(in.o[1], lane));
    uint32_t b = uint32_t(x.val(in.o[2], lane));
    b = Clamp ? std::min<uint32_t>(b, 32) : (b & 31);
    uint32_t r;
    if (b == 0) r = 0;
    else if (b >= 32) r = a;
    else if (Signed) r = uint32_t(int32_t(a << (32 - b)) >> (32 - b));
    else r = a & ((1u << b) - 1);
    x.set(in.o[0], lane, r);
  EMU_END_LANES
}

// mad{c}.{lo,hi}{.cc}: the product's low or high half plus c plus the carry in, carry out.
template <class T, bool UseCarry, bool SetCarry>
void h_madc(Exec& x, const Inst& in, uint32_t m) {
  using W = std::conditional_t<sizeof(T) == 8, unsigned __int128, uint64_t>;
  using SW = std::conditional_t<sizeof(T) == 8, __int128, int64_t>;
  const bool sgn = type_signed(in.type);
  EMU_FOR_LANES(m)
    const T a = T(x.val(in.o[1], lane)), b = T(x.val(in.o[2], lane)), c = T(x.val(in.o[3], lane));
    W prod;
    if (sgn) prod = W(SW(std::make_signed_t<T>(a)) * SW(std::make_signed_t<T>(b)));
    else prod = W(a) * W(b);
    const T part = (in.flags & kHi) ? T(prod >> (8 * sizeof(T))) : T(prod);
    uint64_t& cf = x.reg(in.aux, lane);
    const T cin = UseCarry ? T(cf & 1) : T(0);
    const W sum = W(part) + W(c) + W(cin);
    if (SetCarry) cf = uint64_t(sum >> (8 * sizeof(T))) & 1;
    x.set(in.o[0], lane, uint64_t(T(sum)));
  EMU_END_LANES
}

// cvt.pack.sat.{s16,u16}.s32 d, a, b: {sat(a), sat(b)} with b in the low half;
// cvt.pack.sat.{u8,s8,u4,s4,u2,s2}.s32.b32 d, a, b, c: (c << 2w) | (sat(a) << w) | sat(b).
void h_cvt_pack(Exec& x, const Inst& in, uint32_t m) {
  const uint32_t w = in.aux;  // destination bits per element
  const bool sgn = type_signed(in.type) || in.flags == 1;
  const int64_t lo = sgn ? -(int64_t(1) << (w - 1)) : 0;
  const int64_t hi = sgn ? (int64_t(1) << (w - 1)) - 1 : (int64_t(1) << w) - 1;
  const uint32_t mask = w >= 32 ? 0xFFFFFFFFu : ((1u << w) - 1);
  EMU_FOR_LANES(m)
    auto sat = [&](uint64_t v) {
      const int64_t s = int64_t(int32_t(uint32_t(v)));
      return uint32_t(std::min(hi, std::max(lo, s))) & mask;
    };
    uint32_t r = (sat(x.val(in.o[1], lane)) << w) | sat(x.val(in.o[2], lane));
    if (in.o[3].kind != OK::none) r |= uint32_t(x.val(in.o[3], lane)) << (2 * w);
    x.set(in.o[0], lane, r);
  EMU_END_LANES
}

}  // namespace

// Floating-point comparisons of f16/bf16 live with the half-precision family.
Handler half_setp_handler(Type t);

bool decode_alu(DecodeCtx& d, const PInstr& p, Inst& in) {
  const std::string& op = p.opcode;
  const Type t = d.last_type(p);
  in.type = t;
  auto ops = [&](size_t n) {
    if (p.ops.size() != n) d.fail(p, "expected " + std::to_string(n) + " operands");
    for (size_t i = 0; i < n; ++i) in.o[i] = d.op(p.ops[i], t);
    in.nops = uint8_t(n);
  };
  const bool is_int = !type_float(t) && t != Type::none;
  if (d.has(p, "sat")) in.flags |= kSat;
  if (d.has(p, "hi")) in.flags |= kHi;
  if (d.has(p, "relu")) in.flags |= kRelu;

  const bool simd16 = d.has(p, "u16x2") || d.has(p, "s16x2");
  if (simd16 && (op == "add" || op == "sub" || op == "min" || op == "max")) {
    ops(3);
    const bool sg = d.has(p, "s16x2");
    const int k = op == "add" ? 0 : op == "sub" ? 1 : op == "min" ? 2 : 3;
#define EMU_S16(S) (k == 0 ? h_simd16<S, 0> : k == 1 ? h_simd16<S, 1> : k == 2 ? h_simd16<S, 2> : h_simd16<S, 3>)
    in.fn = sg ? EMU_S16(true) : EMU_S16(false);
#undef EMU_S16
    return true;
  }
  if (op == "mul24" || op == "mad24") {
    ops(op == "mul24" ? 3 : 4);
    const bool sg = t == Type::s32;
    in.fn = op == "mul24" ? (sg ? h_mul24<true, false> : h_mul24<false, false>)
                          : (sg ? h_mul24<true, true> : h_mul24<false, true>);
    return true;
  }
  if (op == "shf") {
    ops(4);
    const bool left = d.has(p, "l"), clamp = d.has(p, "clamp");
    in.fn = left ? (clamp ? h_shf<true, true> : h_shf<true, false>) : (clamp ? h_shf<false, true> : h_shf<false, false>);
    return true;
  }
  if (op == "sad") {
    ops(4);
    switch (t) {
      case Type::u16: in.fn = h_sad<uint16_t>; break;
      case Type::s16: in.fn = h_sad<int16_t>; break;
      case Type::u32: in.fn = h_sad<uint32_t>; break;
      case Type::s32: in.fn = h_sad<int32_t>; break;
      case Type::u64: in.fn = h_sad<uint64_t>; break;
      case Type::s64: in.fn = h_sad<int64_t>; break;
      default: d.fail(p, "sad type");
    }
    return true;
  }
  if (op == "bmsk") { ops(3); in.fn = d.has(p, "clamp") ? h_bmsk<true> : h_bmsk<false>; return true; }
  if (op == "szext") {
    ops(3);
    const bool clamp = d.has(p, "clamp"), sg = t == Type::s32;
    in.fn = sg ? (clamp ? h_szext<true, true> : h_szext<true, false>) : (clamp ? h_szext<false, true> : h_szext<false, false>);
    return true;
  }
  if (op == "madc" || (op == "mad" && d.has(p, "cc"))) {
    ops(4);
    in.aux = uint32_t(d.reg_index("%%cc"));
    const bool use = op == "madc", cc = d.has(p, "cc");
    if (type_bytes(t) == 8) in.fn = use ? (cc ? h_madc<uint64_t, true, true> : h_madc<uint64_t, true, false>) : h_madc<uint64_t, false, true>;
    else in.fn = use ? (cc ? h_madc<uint32_t, true, true> : h_madc<uint32_t, true, false>) : h_madc<uint32_t, false, true>;
    return true;
  }
  if (op == "cvt" && d.has(p, "pack")) {
    // cvt.pack.sat.dtype.s32{.b32}: the destination type is the first type modifier.
    Type dt = Type::none;
    std::string dname;
    for (const auto& s : p.mods) {
      if (s == "u16" || s == "s16" || s == "u8" || s == "s8" || s == "u4" || s == "s4" || s == "u2" || s == "s2") { dname = s; break; }
    }
    if (dname.empty()) d.fail(p, "cvt.pack destination type");
    in.aux = uint32_t(std::atoi(dname.c_str() + 1));
    in.flags = dname[0] == 's' ? 1 : 0;
    dt = Type::b32;
    in.type = dt;
    in.o[0] = d.op(p.ops.at(0));
    in.o[1] = d.op(p.ops.at(1));
    in.o[2] = d.op(p.ops.at(2));
    if (p.ops.size() > 3) in.o[3] = d.op(p.ops[3]);
    in.fn = h_cvt_pack;
    return true;
  }
  if (op == "add" || op == "sub" || op == "addc" || op == "subc") {
    if (!is_int) return false;
    const bool cc = d.has(p, "cc"), use = op == "addc" || op == "subc", sub = op[0] == 's';
    ops(3);
    if (cc || use) {
      int32_t r = d.reg_index("%%cc");
      in.aux = uint32_t(r);
      const bool w = type_bytes(t) == 8;
#define EMU_CARRY(T) \
      in.fn = sub ? (use ? (cc ? h_carry<T, true, true, true> : h_carry<T, true, true, false>) \
                         : h_carry<T, true, false, true>) \
                  : (use ? (cc ? h_carry<T, false, true, true> : h_carry<T, false, true, false>) \
                         : h_carry<T, false, false, true>);
      if (w) { EMU_CARRY(uint64_t) } else { EMU_CARRY(uint32_t) }
#undef EMU_CARRY
      return true;
    }
    in.fn = sub ? pick<h_bin, Sub>(t) : pick<h_bin, Add>(t);
    return in.fn != nullptr;
  }
  if (op == "mul" && is_int) {
    ops(3);
    if (d.has(p, "wide")) {
      switch (t) {
        case Type::s16: in.fn = h_wide<int16_t, false>; break;
        case Type::u16: in.fn = h_wide<uint16_t, false>; break;
        case Type::s32: in.fn = h_wide<int32_t, false>; break;
        case Type::u32: in.fn = h_wide<uint32_t, false>; break;
        default: d.fail(p, "mul.wide type");
      }
      return true;
    }
    in.fn = pick<h_bin, Mul>(t);
    return in.fn != nullptr;
  }
  if (op == "mad" && is_int) {
    ops(4);
    if (d.has(p, "wide")) {
      switch (t) {
        case Type::s16: in.fn = h_wide<int16_t, true>; break;
        case Type::u16: in.fn = h_wide<uint16_t, true>; break;
        case Type::s32: in.fn = h_wide<int32_t, true>; break;
        case Type::u32: in.fn = h_wide<uint32_t, true>; break;
        default: d.fail(p, "mad.wide type");
      }
      return true;
    }
    in.fn = pick<h_tern, Mad>(t);
    return in.fn != nullptr;
  }
  if ((op == "div" || op == "rem") && is_int) { ops(3); in.fn = op == "div" ? pick<h_bin, Div>(t) : pick<h_bin, Rem>(t); return in.fn != nullptr; }
  if ((op == "min" || op == "max") && is_int) { ops(3); in.fn = op == "min" ? pick<h_bin, Min>(t) : pick<h_bin, Max>(t); return in.fn != nullptr; }
  if (op == "and" || op == "or" || op == "xor") {
    ops(3);
    in.fn = op == "and" ? pick<h_bin, And>(t) : op == "or" ? pick<h_bin, Or>(t) : pick<h_bin, Xor>(t);
    return in.fn != nullptr;
  }
  if (op == "not") { ops(2); in.fn = pick<h_un, Not>(t); if (t == Type::pred) in.fn = [](Exec& x, const Inst& i, uint32_t m) { EMU_FOR_LANES(m) x.set(i.o[0], lane, !(x.val(i.o[1], lane) & 1)); EMU_END_LANES }; return in.fn != nullptr; }
  if (op == "cnot") { ops(2); in.fn = pick<h_un, Cnot>(t); return in.fn != nullptr; }
  if ((op == "neg" || op == "abs") && is_int) { ops(2); in.fn = op == "neg" ? pick<h_un, Neg>(t) : pick<h_un, Abs>(t); return in.fn != nullptr; }
  if (op == "shl" || op == "shr") { ops(3); in.fn = pick_shift(t, op == "shl"); return in.fn != nullptr; }
  if (op == "popc") { ops(2); in.fn = type_bytes(t) == 8 ? h_popc<uint64_t> : h_popc<uint32_t>; return true; }
  if (op == "clz") { ops(2); in.fn = type_bytes(t) == 8 ? h_clz<uint64_t> : h_clz<uint32_t>; return true; }
  if (op == "brev") { ops(2); in.fn = type_bytes(t) == 8 ? h_brev<uint64_t> : h_brev<uint32_t>; return true; }
  if (op == "bfind") {
    ops(2);
    if (d.has(p, "shiftamt")) in.flags |= kShiftAmt;
    switch (t) {
      case Type::u32: in.fn = h_bfind<uint32_t>; break;
      case Type::s32: in.fn = h_bfind<int32_t>; break;
      case Type::u64: in.fn = h_bfind<uint64_t>; break;
      case Type::s64: in.fn = h_bfind<int64_t>; break;
      default: d.fail(p, "bfind type");
    }
    return true;
  }
  if (op == "bfe") {
    ops(4);
    switch (t) {
      case Type::u32: in.fn = h_bfe<uint32_t>; break;
      case Type::s32: in.fn = h_bfe<int32_t>; break;
      case Type::u64: in.fn = h_bfe<uint64_t>; break;
      case Type::s64: in.fn = h_bfe<int64_t>; break;
      default: d.fail(p, "bfe type");
    }
    return true;
  }
  if (op == "bfi") { ops(5); in.fn = type_bytes(t) == 8 ? h_bfi<uint64_t> : h_bfi<uint32_t>; return true; }
  if (op == "prmt") {
    ops(4);
    static const char* modes[] = {"", "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"};
    for (uint32_t i = 1; i < 7; ++i)
      if (d.has(p, modes[i])) in.aux = i;
    in.fn = h_prmt;
    return true;
  }
  if (op == "dp4a" || op == "dp2a") {
    ops(4);
    const bool as = p.mods.size() >= 2 && p.mods[p.mods.size() - 2] == "s32";
    const bool bs = p.mods.back() == "s32";
    if (op == "dp4a") in.fn = as ? (bs ? h_dp<true, true, 0> : h_dp<true, false, 0>) : (bs ? h_dp<false, true, 0> : h_dp<false, false, 0>);
    else if (d.has(p, "hi")) in.fn = as ? (bs ? h_dp<true, true, 2> : h_dp<true, false, 2>) : (bs ? h_dp<false, true, 2> : h_dp<false, false, 2>);
    else in.fn = as ? (bs ? h_dp<true, true, 1> : h_dp<true, false, 1>) : (bs ? h_dp<false, true, 1> : h_dp<false, false, 1>);
    in.flags &= ~kHi;
    return true;
  }
  if (op == "lop3") {
    ops(5);
    if (in.o[4].kind != OK::imm) d.fail(p, "lop3 needs an immediate table");
    in.aux = uint32_t(in.o[4].imm) & 0xFF;
    in.fn = h_lop3;
    return true;
  }
  if (op == "mov") {
    if (p.ops.size() != 2) d.fail(p, "mov takes two operands");
    if (p.ops[1].kind == PTok::vec) {
      in.o[0] = d.op(p.ops[0], t);
      in.o[1] = d.op(p.ops[1]);
      in.aux = uint32_t(type_bytes(t) * 8 / in.o[1].count);
      in.fn = h_pack;
      return true;
    }
    if (p.ops[0].kind == PTok::vec) {
      in.o[0] = d.op(p.ops[0]);
      in.o[1] = d.op(p.ops[1], t);
      in.aux = uint32_t(type_bytes(t) * 8 / in.o[0].count);
      in.fn = h_unpack;
      return true;
    }
    ops(2);
    // A shared or local variable's generic address is cvta's business; mov gives the
    // address in the variable's own space, which is what op() resolved.
    if (in.o[0].kind == OK::reg && in.o[1].kind == OK::reg) in.fn = h_mov_reg;
    else if (in.o[0].kind == OK::reg && in.o[1].kind == OK::imm) {
      if (type_bytes(t) < 8 && t != Type::pred) in.o[1].imm &= width_mask(type_bytes(t));
      in.fn = h_mov_imm;
    } else if (in.o[0].kind == OK::reg && in.o[1].kind == OK::sreg) {
      in.fn = h_mov_sreg;
    } else in.fn = h_mov;
    return true;
  }
  if (op == "selp") { ops(4); in.fn = h_selp; return true; }
  if (op == "setp") {
    // setp.cmp{.bool}.type p{|q}, a, b{, {!}c}
    bool ok = false;
    Cmp c = parse_cmp(p.mods.at(0), &ok);
    if (!ok) d.fail(p, "unknown comparison");
    in.flags = c | (d.has(p, "ftz") ? kFtz : 0u);
    if (p.mods.size() >= 3) {
      const std::string& b = p.mods[1];
      in.aux = b == "and" ? 1 : b == "or" ? 2 : b == "xor" ? 3 : 0;
    }
    const PTok& dst = p.ops.at(0);
    in.o[0] = d.op(dst);
    if (dst.kind == PTok::pair) in.o[4] = d.op(dst.elems[1]);
    in.o[1] = d.op(p.ops.at(1), t);
    in.o[2] = d.op(p.ops.at(2), t);
    if (in.aux) in.o[3] = d.op(p.ops.at(3));
    in.fn = pick_setp(t);
    if (!in.fn) in.fn = half_setp_handler(t);
    if (!in.fn) d.fail(p, "setp type");
    return true;
  }
  return false;
}

}  // namespace emu
