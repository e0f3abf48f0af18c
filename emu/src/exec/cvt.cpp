// cvt: between integer widths, between float formats, and across, with the rounding and
// saturation modifiers (exact, through exec/fp.h); the packed forms (f16x2, bf16x2, e4m3x2,
// e5m2x2) and tf32.
#include "exec/fp.h"
#include "exec/ops.h"

namespace emu {

namespace {

fp::Round round_of(uint32_t flags, fp::Round dflt) {
  if (flags & kRz) return fp::Round::rz;
  if (flags & kRm) return fp::Round::rm;
  if (flags & kRp) return fp::Round::rp;
  if (flags & kRna) return fp::Round::rna;
  if (flags & kRn) return fp::Round::rn;
  return dflt;
}
fp::Mods mods_of(uint32_t flags) {
  return ((flags & kSat) ? fp::kSat : 0u) | ((flags & kSatFinite) ? fp::kSatFinite : 0u) |
         ((flags & kRelu) ? fp::kRelu : 0u);
}

template <class I> I clamp_int(int64_t v, bool from_unsigned, uint64_t uv) {
  using L = std::numeric_limits<I>;
  if (from_unsigned) return uv > uint64_t(L::max()) ? L::max() : I(uv);
  if (v < int64_t(L::min())) return L::min();
  if (std::is_unsigned_v<I> || v > int64_t(L::max())) {
    if (v < 0) return I(0);
    if (uint64_t(v) > uint64_t(L::max())) return L::max();
  }
  return I(v);
}

// Integer -> integer: sign/zero-extend the source, then truncate (or clamp with .sat).
template <class I>
uint64_t int_to_int(uint64_t raw, Type a, bool sat) {
  // Signed results stay sign-extended, so a narrow value in a wider register reads right.
  const uint64_t v = extend(raw, a);
  const I r = sat ? clamp_int<I>(int64_t(v), !type_signed(a), v) : I(v);
  return std::is_signed_v<I> ? uint64_t(int64_t(r)) : uint64_t(r);
}

template <class I>
uint64_t float_to_int(uint64_t raw, Type a, fp::Round r, bool ftz) {
  I v;
  switch (a) {
    case Type::f16: v = fp::f16_to_int<I>(uint16_t(raw), r); break;
    case Type::bf16: v = fp::bf16_to_int<I>(uint16_t(raw), r); break;
    case Type::f64: v = fp::f64_to_int<I>(raw, r); break;
    default: {
      uint32_t b = uint32_t(raw);
      if (ftz) b = fp::ftz_f32(b);
      v = fp::f32_to_int<I>(b, r);
    }
  }
  return std::is_signed_v<I> ? uint64_t(int64_t(v)) : uint64_t(v);
}

template <class I>
uint64_t int_to_float(uint64_t raw, Type a, Type d, fp::Round r, fp::Mods m) {
  const I v = I(extend(raw, a));
  switch (d) {
    case Type::f16: return fp::int_to_f16<I>(v, r, m);
    case Type::bf16: return fp::int_to_bf16<I>(v, r, m);
    case Type::f64: return fp::int_to_f64<I>(v, r, m);
    default: return fp::int_to_f32<I>(v, r, m);
  }
}

uint64_t float_to_float(uint64_t raw, Type a, Type d, uint32_t flags) {
  const fp::Round r = round_of(flags, fp::Round::rn);
  const fp::Mods m = mods_of(flags);
  const bool ftz = flags & kFtz;
  if (flags & kIntRound) {  // cvt.rni.f32.f32 etc.: round to an integral value in place
    switch (a) {
      case Type::f16: return fp::round_int_f16(uint16_t(raw), r);
      case Type::bf16: return fp::round_int_bf16(uint16_t(raw), r);
      case Type::f64: return fp::round_int_f64(raw, r);
      default: {
        uint32_t b = ftz ? fp::ftz_f32(uint32_t(raw)) : uint32_t(raw);
        uint32_t out = fp::round_int_f32(b, r);
        if (flags & kSat) out = fp::sat_f32(out);
        return out;
      }
    }
  }
  // Through f32/f64 as the source requires, then to the destination.
  switch (a) {
    case Type::f16:
      if (d == Type::f32) { uint32_t v = fp::f16_to_f32(uint16_t(raw)); return (flags & kSat) ? fp::sat_f32(v) : v; }
      if (d == Type::f64) return fp::f16_to_f64(uint16_t(raw));
      if (d == Type::bf16) return fp::f16_to_bf16(uint16_t(raw), r, m);
      if (d == Type::f16) return (flags & kSat) ? fp::sat_f16(uint16_t(raw)) : raw & 0xFFFF;
      break;
    case Type::bf16:
      if (d == Type::f32) return fp::bf16_to_f32(uint16_t(raw));
      if (d == Type::f64) return fp::bf16_to_f64(uint16_t(raw));
      if (d == Type::f16) return fp::bf16_to_f16(uint16_t(raw), r, m);
      if (d == Type::bf16) return raw & 0xFFFF;
      break;
    case Type::f32: {
      uint32_t b = ftz ? fp::ftz_f32(uint32_t(raw)) : uint32_t(raw);
      if (d == Type::f16) return fp::f32_to_f16(b, r, m);
      if (d == Type::bf16) return fp::f32_to_bf16(b, r, m);
      if (d == Type::f64) { uint64_t v = fp::f32_to_f64(b); return (flags & kSat) ? fp::sat_f64(v) : v; }
      if (d == Type::tf32) return fp::f32_to_tf32(b, r, m);
      if (d == Type::f32) { uint32_t v = b; if (flags & kSat) v = fp::sat_f32(v); if (ftz) v = fp::ftz_f32(v); return v; }
      break;
    }
    case Type::f64:
      if (d == Type::f32) { uint32_t v = fp::f64_to_f32(raw, r, m); if (ftz) v = fp::ftz_f32(v); return v; }
      if (d == Type::f16) return fp::f64_to_f16(raw, r, m);
      if (d == Type::bf16) return fp::f64_to_bf16(raw, r, m);
      if (d == Type::f64) return (flags & kSat) ? fp::sat_f64(raw) : raw;
      break;
    default: break;
  }
  return raw;
}

// in.type = destination, in.type2 = source.
void h_cvt(Exec& x, const Inst& in, uint32_t mask) {
  const Type d = in.type, a = in.type2;
  const bool df = type_float(d), af = type_float(a);
  const bool sat = in.flags & kSat;
  const fp::Round r = round_of(in.flags, fp::Round::rn);
  EMU_FOR_LANES(mask)
    const uint64_t raw = x.val(in.o[1], lane);
    uint64_t out;
    if (!df && !af) {
      switch (d) {
        case Type::s8: out = int_to_int<int8_t>(raw, a, sat); break;
        case Type::u8: out = int_to_int<uint8_t>(raw, a, sat); break;
        case Type::s16: out = int_to_int<int16_t>(raw, a, sat); break;
        case Type::u16: case Type::b16: out = int_to_int<uint16_t>(raw, a, sat); break;
        case Type::s32: out = int_to_int<int32_t>(raw, a, sat); break;
        case Type::u32: case Type::b32: out = int_to_int<uint32_t>(raw, a, sat); break;
        case Type::s64: out = int_to_int<int64_t>(raw, a, sat); break;
        default: out = int_to_int<uint64_t>(raw, a, sat); break;
      }
      // A destination narrower than its register keeps the value sign-extended for signed types.
    } else if (df && af) {
      out = float_to_float(raw, a, d, in.flags);
    } else if (!df) {
      const fp::Round ir = round_of(in.flags, fp::Round::rz);
      const bool ftz = in.flags & kFtz;
      switch (d) {
        case Type::s8: out = float_to_int<int8_t>(raw, a, ir, ftz); break;
        case Type::u8: out = float_to_int<uint8_t>(raw, a, ir, ftz); break;
        case Type::s16: out = float_to_int<int16_t>(raw, a, ir, ftz); break;
        case Type::u16: out = float_to_int<uint16_t>(raw, a, ir, ftz); break;
        case Type::s32: out = float_to_int<int32_t>(raw, a, ir, ftz); break;
        case Type::u32: out = float_to_int<uint32_t>(raw, a, ir, ftz); break;
        case Type::s64: out = float_to_int<int64_t>(raw, a, ir, ftz); break;
        default: out = float_to_int<uint64_t>(raw, a, ir, ftz); break;
      }
    } else {
      const fp::Mods m = mods_of(in.flags);
      switch (a) {
        case Type::s8: out = int_to_float<int8_t>(raw, a, d, r, m); break;
        case Type::u8: case Type::b8: out = int_to_float<uint8_t>(raw, a, d, r, m); break;
        case Type::s16: out = int_to_float<int16_t>(raw, a, d, r, m); break;
        case Type::u16: case Type::b16: out = int_to_float<uint16_t>(raw, a, d, r, m); break;
        case Type::s32: out = int_to_float<int32_t>(raw, a, d, r, m); break;
        case Type::u32: case Type::b32: out = int_to_float<uint32_t>(raw, a, d, r, m); break;
        case Type::s64: out = int_to_float<int64_t>(raw, a, d, r, m); break;
        default: out = int_to_float<uint64_t>(raw, a, d, r, m); break;
      }
      if (d == Type::f32 && (in.flags & kFtz)) out = fp::ftz_f32(uint32_t(out));
    }
    x.set(in.o[0], lane, out);
  EMU_END_LANES
}

// Integer to integer without .sat (index arithmetic: cvt.u64.u32, cvt.s64.s32, cvt.u32.u64), the
// types fixed at decode: S and D are the C++ types of the source and the destination, and the
// result is what int_to_int gives (a signed destination kept sign-extended in its register).
template <class S, class D>
void h_cvt_int(Exec& x, const Inst& in, uint32_t mask) {
  auto f = [](uint64_t raw) {
    const D v = D(S(raw));
    return std::is_signed_v<D> ? uint64_t(int64_t(v)) : uint64_t(v);
  };
  if (mask == kFullWarp && map_rows<1>(x, in, f)) return;
  EMU_FOR_LANES(mask) x.set(in.o[0], lane, f(x.val(in.o[1], lane))); EMU_END_LANES
}
template <class S>
Handler cvt_int_to(Type d) {
  switch (d) {
    case Type::s16: return h_cvt_int<S, int16_t>;
    case Type::u16: case Type::b16: return h_cvt_int<S, uint16_t>;
    case Type::s32: return h_cvt_int<S, int32_t>;
    case Type::u32: case Type::b32: return h_cvt_int<S, uint32_t>;
    case Type::s64: return h_cvt_int<S, int64_t>;
    case Type::u64: case Type::b64: return h_cvt_int<S, uint64_t>;
    default: return nullptr;
  }
}
// The h_cvt_int for a cvt between integer types (to one of 16 bits or more), else nullptr.
Handler cvt_int(Type d, Type a) {
  switch (a) {
    case Type::s8: return cvt_int_to<int8_t>(d);
    case Type::u8: case Type::b8: return cvt_int_to<uint8_t>(d);
    case Type::s16: return cvt_int_to<int16_t>(d);
    case Type::u16: case Type::b16: return cvt_int_to<uint16_t>(d);
    case Type::s32: return cvt_int_to<int32_t>(d);
    case Type::u32: case Type::b32: return cvt_int_to<uint32_t>(d);
    case Type::s64: return cvt_int_to<int64_t>(d);
    case Type::u64: case Type::b64: return cvt_int_to<uint64_t>(d);
    default: return nullptr;
  }
}

// cvt.rn{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b: a goes to the upper half.
// cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32 d, a, b: a goes to the upper byte.
// cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2} d, a.  cvt.rn.satfinite.{e4m3x2,e5m2x2}.f16x2 d, a.
void h_cvt_packed(Exec& x, const Inst& in, uint32_t mask) {
  const Type d = in.type, a = in.type2;
  const fp::Round r = round_of(in.flags, fp::Round::rn);
  const fp::Mods m = mods_of(in.flags);
  EMU_FOR_LANES(mask)
    const uint32_t s1 = uint32_t(x.val(in.o[1], lane));
    const uint32_t s2 = in.nops > 2 ? uint32_t(x.val(in.o[2], lane)) : 0;
    uint64_t out = 0;
    if (a == Type::f32) {
      if (d == Type::f16x2) out = fp::f32x2_to_f16x2(s1, s2, r, m);
      else if (d == Type::bf16x2) out = fp::f32x2_to_bf16x2(s1, s2, r, m);
      else if (d == Type::e4m3x2) out = fp::f32x2_to_e4m3x2(s1, s2, m);
      else if (d == Type::e5m2x2) out = fp::f32x2_to_e5m2x2(s1, s2, m);
    } else if (a == Type::f16x2) {
      if (d == Type::e4m3x2) out = fp::f16x2_to_e4m3x2(s1, m);
      else if (d == Type::e5m2x2) out = fp::f16x2_to_e5m2x2(s1, m);
    } else if (d == Type::f16x2) {
      if (a == Type::e4m3x2) out = fp::e4m3x2_to_f16x2(uint16_t(s1), m);
      else if (a == Type::e5m2x2) out = fp::e5m2x2_to_f16x2(uint16_t(s1), m);
    }
    x.set(in.o[0], lane, out);
  EMU_END_LANES
}

}  // namespace

bool decode_cvt(DecodeCtx& d, const PInstr& p, Inst& in) {
  if (p.opcode != "cvt") return false;
  std::vector<Type> types;
  for (const auto& s : p.mods) {
    Type t = parse_type(s);
    if (t != Type::none) types.push_back(t);
  }
  if (types.size() != 2) d.fail(p, "cvt needs a destination and a source type");
  in.type = types[0];
  in.type2 = types[1];
  in.flags |= d.rounding(p);
  if (d.has(p, "ftz")) in.flags |= kFtz;
  if (d.has(p, "sat")) in.flags |= kSat;
  if (d.has(p, "satfinite")) in.flags |= kSatFinite;
  if (d.has(p, "relu")) in.flags |= kRelu;
  in.nops = uint8_t(p.ops.size());
  for (size_t i = 0; i < p.ops.size(); ++i) in.o[i] = d.op(p.ops[i], i == 0 ? in.type : in.type2);
  const bool packed = in.type == Type::f16x2 || in.type == Type::bf16x2 || in.type == Type::e4m3x2 ||
                      in.type == Type::e5m2x2 || in.type2 == Type::e4m3x2 || in.type2 == Type::e5m2x2 ||
                      in.type2 == Type::f16x2;
  in.fn = packed ? h_cvt_packed : h_cvt;
  if (Handler f = cvt_int(in.type, in.type2); f && !(in.flags & kSat) && in.nops == 2) in.fn = f;
  return true;
}

}  // namespace emu
