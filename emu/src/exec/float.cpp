// Floating-point arithmetic: f32 and f64 with the rounding modifiers, the approximate
// transcendental instructions, and packed half precision (f16, f16x2, bf16, bf16x2).
#include <cfenv>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "exec/approx.h"
#include "exec/fp.h"
#include "exec/ops.h"

namespace emu {

namespace {

// A directed rounding mode for the duration of one operation (rn needs none).
struct RoundingScope {
  int saved = -1;
  explicit RoundingScope(uint32_t flags) {
    int mode = (flags & kRz) ? FE_TOWARDZERO : (flags & kRm) ? FE_DOWNWARD : (flags & kRp) ? FE_UPWARD : -1;
    if (mode >= 0) { saved = std::fegetround(); std::fesetround(mode); }
  }
  ~RoundingScope() { if (saved >= 0) std::fesetround(saved); }
};

inline float ftz(float v) { return std::fpclassify(v) == FP_SUBNORMAL ? std::copysign(0.0f, v) : v; }

template <class T> inline T fget(uint64_t b) {
  if constexpr (sizeof(T) == 4) return f32_of(b); else return f64_of(b);
}
template <class T> inline T fin(const Inst& in, T v) {
  if constexpr (sizeof(T) == 4) if (in.flags & kFtz) return ftz(v);
  return v;
}
template <class T> inline uint64_t fout(const Inst& in, T v) {
  if constexpr (sizeof(T) == 4) {
    if (in.flags & kFtz) v = ftz(v);
  }
  if (in.flags & kSat) v = std::isnan(v) ? T(0) : std::min(T(1), std::max(T(0), v));
  if (std::isnan(v)) return sizeof(T) == 4 ? 0x7FFFFFFFull : 0x7FFFFFFFFFFFFFFFull;
  return bits_of(v);
}

enum FOp { f_add, f_sub, f_mul, f_div, f_min, f_max, f_copysign };

// The bits of a result as a register holds it: NaN as the canonical NaN.
template <class T> inline uint64_t result_bits(T r) {
  if constexpr (sizeof(T) == 4) return r != r ? 0x7FFFFFFFull : bits_of(r);
  else return r != r ? 0x7FFFFFFFFFFFFFFFull : bits_of(r);
}

// add, sub, mul, div of a full warp without .ftz or .sat, on register rows (ops.h).
template <class T, FOp Op>
bool fbin_rows(Exec& x, const Inst& in) {
  uint64_t* d = dst_row(x, in.o[0]);
  uint64_t ba[32], bb[32];
  const uint64_t *a, *b;
  if (!d || !src_row(x, in.o[1], a, ba) || !src_row(x, in.o[2], b, bb)) return false;
  uint64_t out[32];
  for (int i = 0; i < 32; ++i) {
    const T u = fget<T>(a[i]), v = fget<T>(b[i]);
    T r;
    if constexpr (Op == f_add) r = u + v;
    else if constexpr (Op == f_sub) r = u - v;
    else if constexpr (Op == f_mul) r = u * v;
    else r = u / v;
    out[i] = result_bits(r);
  }
  std::memcpy(d, out, sizeof out);
  return true;
}

template <class T, FOp Op>
void h_fbin(Exec& x, const Inst& in, uint32_t m) {
  RoundingScope rs(in.flags);
  if constexpr (Op == f_add || Op == f_sub || Op == f_mul || Op == f_div)
    if (m == kFullWarp && !(in.flags & (kFtz | kSat)) && fbin_rows<T, Op>(x, in)) return;
  EMU_FOR_LANES(m)
    const T a = fin<T>(in, fget<T>(x.val(in.o[1], lane))), b = fin<T>(in, fget<T>(x.val(in.o[2], lane)));
    T r;
    switch (Op) {
      case f_add: r = a + b; break;
      case f_sub: r = a - b; break;
      case f_mul: r = a * b; break;
      case f_div: r = a / b; break;
      case f_copysign: r = std::copysign(b, a); x.set(in.o[0], lane, bits_of(r)); continue;
      case f_min: case f_max: {
        // PTX: a NaN operand yields the other one; both NaN give NaN; -0 < +0.
        if (std::isnan(a) && std::isnan(b)) r = std::numeric_limits<T>::quiet_NaN();
        else if (std::isnan(a)) r = b;
        else if (std::isnan(b)) r = a;
        else if (a == b) r = (Op == f_min) == (std::signbit(a) != 0) ? a : b;
        else r = (Op == f_min) == (a < b) ? a : b;
        if ((in.flags & kNaN) && (std::isnan(a) || std::isnan(b))) r = std::numeric_limits<T>::quiet_NaN();
        break;
      }
    }
    x.set(in.o[0], lane, fout<T>(in, r));
  EMU_END_LANES
}

// fma.rn without modifiers, the hot instruction of most kernels. A fused multiply-add is rounded
// once, exactly, however it is computed: by the CPU's FMA instruction where it has one (the
// variant compiled for it is chosen once, by fma_rn_handler), else by libm's fma.
template <class T>
__attribute__((always_inline)) inline T fma_op(T a, T b, T c) {
  if constexpr (sizeof(T) == 4) return __builtin_fmaf(a, b, c);
  else return __builtin_fma(a, b, c);
}
template <class T>
__attribute__((always_inline)) inline void fma_rn_body(Exec& x, const Inst& in, uint32_t m) {
  if (m == kFullWarp) {
    uint64_t* d = dst_row(x, in.o[0]);
    uint64_t ba[32], bb[32], bc[32];
    const uint64_t *a, *b, *c;
    if (d && src_row(x, in.o[1], a, ba) && src_row(x, in.o[2], b, bb) && src_row(x, in.o[3], c, bc)) {
      uint64_t out[32];
      for (int i = 0; i < 32; ++i) out[i] = result_bits(fma_op(fget<T>(a[i]), fget<T>(b[i]), fget<T>(c[i])));
      std::memcpy(d, out, sizeof out);
      return;
    }
  }
  EMU_FOR_LANES(m)
    const T r = fma_op(fget<T>(x.val(in.o[1], lane)), fget<T>(x.val(in.o[2], lane)), fget<T>(x.val(in.o[3], lane)));
    x.set(in.o[0], lane, result_bits(r));
  EMU_END_LANES
}
template <class T>
void h_fma_rn(Exec& x, const Inst& in, uint32_t m) { fma_rn_body<T>(x, in, m); }
__attribute__((target("avx2,fma"))) void h_fma_rn_f32_fma(Exec& x, const Inst& in, uint32_t m) {
  fma_rn_body<float>(x, in, m);
}
__attribute__((target("avx2,fma"))) void h_fma_rn_f64_fma(Exec& x, const Inst& in, uint32_t m) {
  fma_rn_body<double>(x, in, m);
}
Handler fma_rn_handler(bool f64) {
  static const bool hw = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (hw) return f64 ? h_fma_rn_f64_fma : h_fma_rn_f32_fma;
  return f64 ? h_fma_rn<double> : h_fma_rn<float>;
}

template <class T>
void h_fma(Exec& x, const Inst& in, uint32_t m) {
  RoundingScope rs(in.flags);
  EMU_FOR_LANES(m)
    const T a = fin<T>(in, fget<T>(x.val(in.o[1], lane))), b = fin<T>(in, fget<T>(x.val(in.o[2], lane))),
            c = fin<T>(in, fget<T>(x.val(in.o[3], lane)));
    x.set(in.o[0], lane, fout<T>(in, std::fma(a, b, c)));
  EMU_END_LANES
}

enum FUn { u_neg, u_abs, u_rcp, u_sqrt, u_rsqrt, u_ex2, u_lg2, u_sin, u_cos, u_tanh };

template <class T, FUn Op>
void h_fun(Exec& x, const Inst& in, uint32_t m) {
  RoundingScope rs(in.flags);
  EMU_FOR_LANES(m)
    const uint64_t raw = x.val(in.o[1], lane);
    if (Op == u_neg || Op == u_abs) {  // sign-bit operations: NaN payloads pass through
      const uint64_t sign = sizeof(T) == 4 ? 0x80000000ull : 0x8000000000000000ull;
      if (sizeof(T) == 8 && Op == u_abs && std::isnan(f64_of(raw))) {  // abs.f64: NaN unchanged
        x.set(in.o[0], lane, raw);
        continue;
      }
      uint64_t r = Op == u_neg ? raw ^ sign : raw & ~sign;
      if (sizeof(T) == 4 && (in.flags & kFtz)) r = bits_of(ftz(f32_of(r)));
      x.set(in.o[0], lane, r & width_mask(sizeof(T)));
      continue;
    }
    const T a = fin<T>(in, fget<T>(raw));
    T r;
    switch (Op) {
      case u_rcp: r = T(1) / a; break;
      case u_sqrt: r = std::sqrt(a); break;
      case u_rsqrt: r = T(1) / std::sqrt(a); break;
      case u_ex2: r = std::exp2(a); break;
      case u_lg2: r = std::log2(a); break;
      case u_sin: r = std::sin(a); break;
      case u_cos: r = std::cos(a); break;
      case u_tanh: r = std::tanh(a); break;
      default: r = a;
    }
    x.set(in.o[0], lane, fout<T>(in, r));
  EMU_END_LANES
}

// GPU100_EMU_APPROX: exact (the default), bound-up, bound-down or bound-random (exec/approx.h).
// bound-random takes its seed from GPU100_EMU_SEED, else from GPU100_EMU_SCHEDULE=random:SEED.
// Read once, when the library loads; any other value stops the program there (exit status 2).
approx::Config parse_approx() {
  approx::Config c;
  const char* v = std::getenv("GPU100_EMU_APPROX");
  const std::string m = v ? v : "";
  if (m.empty() || m == "exact") c.mode = approx::Mode::exact;
  else if (m == "bound-up") c.mode = approx::Mode::up;
  else if (m == "bound-down") c.mode = approx::Mode::down;
  else if (m == "bound-random") c.mode = approx::Mode::random;
  else {
    std::fprintf(stderr, "gpu100 emulator: GPU100_EMU_APPROX: '%s' is not one of exact, bound-up, bound-down, bound-random\n", m.c_str());
    std::exit(2);
  }
  if (const char* s = std::getenv("GPU100_EMU_SEED"); s && *s) c.seed = std::strtoull(s, nullptr, 10);
  else if (const char* s = std::getenv("GPU100_EMU_SCHEDULE"); s && std::strncmp(s, "random:", 7) == 0)
    c.seed = std::strtoull(s + 7, nullptr, 10);
  return c;
}
const approx::Config g_approx = parse_approx();

// An approximate f32 instruction (.approx, and div.full): one operand, or two for div.
template <approx::Op Op>
void h_approx(Exec& x, const Inst& in, uint32_t m) {
  constexpr bool two = Op == approx::div_approx || Op == approx::div_full;
  EMU_FOR_LANES(m)
    const float a = fin<float>(in, f32_of(x.val(in.o[1], lane)));
    const float b = two ? fin<float>(in, f32_of(x.val(in.o[2], lane))) : 0.0f;
    const int dir = approx::side(g_approx, Op, uint32_t(bits_of(a)), uint32_t(bits_of(b)));
    x.set(in.o[0], lane, fout<float>(in, approx::eval(Op, a, b, dir, (in.flags & kFtz) != 0)));
  EMU_END_LANES
}

// rcp.approx.ftz.f64 and rsqrt.approx.ftz.f64 (PTX ISA, "rcp.approx.ftz.f64" and
// "rsqrt.approx.ftz.f64"): subnormal inputs and results flushed to sign-preserving zero, NaN
// inputs give the canonical 0x7fffffff00000000. rcp reads only the upper 32 bits of a (1.11.20)
// and writes its result there, the lower 32 bits zero (here: the reciprocal rounded to nearest
// at that width). The ISA states no error bound for either: the values are not moved by
// GPU100_EMU_APPROX.
template <bool Rcp>
void h_approx_f64_ftz(Exec& x, const Inst& in, uint32_t m) {
  constexpr uint64_t kNaN = 0x7fffffff00000000ull, kSign = 0x8000000000000000ull;
  EMU_FOR_LANES(m)
    uint64_t a = x.val(in.o[1], lane);
    if (Rcp) a &= 0xFFFFFFFF00000000ull;
    double v = f64_of(a);
    if (std::fpclassify(v) == FP_SUBNORMAL) v = std::copysign(0.0, v);
    uint64_t r;
    if (std::isnan(v) || (!Rcp && v < 0)) r = kNaN;
    else if (v == 0) r = (a & kSign) | 0x7ff0000000000000ull;
    else if (std::isinf(v)) r = Rcp ? (a & kSign) : 0;
    else {
      const double y = Rcp ? 1.0 / v : 1.0 / std::sqrt(v);
      r = bits_of(y);
      if (Rcp) r = (r + 0x80000000ull) & 0xFFFFFFFF00000000ull;  // nearest, ties away
      if (std::fpclassify(f64_of(r)) == FP_SUBNORMAL) r &= kSign;
    }
    x.set(in.o[0], lane, r);
  EMU_END_LANES
}

template <class T>
void h_testp(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m)
    const T a = fget<T>(x.val(in.o[1], lane));
    bool r = false;
    switch (in.aux) {
      case 0: r = std::isfinite(a); break;
      case 1: r = std::isinf(a); break;
      case 2: r = !std::isnan(a); break;
      case 3: r = std::isnan(a); break;
      case 4: r = std::isnormal(a) || a == 0; break;  // the ISA counts zeros as normal
      case 5: r = std::fpclassify(a) == FP_SUBNORMAL; break;
    }
    x.set(in.o[0], lane, r);
  EMU_END_LANES
}

// ---------------------------------------------------------------------------------------------
// Half precision: each half is converted to f32 exactly, the operation is done in f32 (exact
// enough: the f32 result of a half add/mul is rounded once more, to half, and a double rounding
// through f32 is innocuous for these operations since f32 has more than 2*11+2 bits), fma in
// double (the product of two halves is exact in double).
enum HOp { hop_add, hop_sub, hop_mul, hop_fma, hop_min, hop_max, hop_neg, hop_abs };

template <bool BF>
inline float h2f(uint16_t h) { return f32_of(BF ? fp::bf16_to_f32(h) : fp::f16_to_f32(h)); }
template <bool BF>
inline uint16_t f2h(double v, uint32_t flags) {
  fp::Round r = (flags & kRz) ? fp::Round::rz : (flags & kRm) ? fp::Round::rm : (flags & kRp) ? fp::Round::rp : fp::Round::rn;
  uint16_t h = BF ? fp::f64_to_bf16(bits_of(v), r) : fp::f64_to_f16(bits_of(v), r);
  if (flags & kSat) {
    float f = h2f<BF>(h);
    if (std::isnan(f)) h = 0;
    else if (f < 0) h = 0;
    else if (f > 1) h = BF ? 0x3F80 : 0x3C00;
  }
  return h;
}

template <bool BF, HOp Op>
uint16_t half_op(uint16_t a, uint16_t b, uint16_t c, uint32_t flags) {
  const uint16_t sign = 0x8000;
  auto flush = [&](uint16_t h) {  // .ftz: f16 subnormals (exponent field 0) become zero
    return (!BF && (flags & kFtz) && (h & 0x7C00) == 0) ? uint16_t(h & sign) : h;
  };
  switch (Op) {
    case hop_neg: return flush(a) ^ sign;
    case hop_abs: return flush(a) & ~sign;
    default: break;
  }
  a = flush(a);
  b = flush(b);
  c = flush(c);
  uint16_t h = 0;
  // Each operation rounds once, exactly (exec/fp.h), as the ISA's .rn requires.
  switch (Op) {
    case hop_add: h = BF ? fp::add_bf16(a, b) : fp::add_f16(a, b); break;
    case hop_sub: h = BF ? fp::sub_bf16(a, b) : fp::sub_f16(a, b); break;
    case hop_mul: h = BF ? fp::mul_bf16(a, b) : fp::mul_f16(a, b); break;
    case hop_fma: h = BF ? fp::fma_bf16(a, b, c) : fp::fma_f16(a, b, c); break;
    case hop_min: h = BF ? fp::min_bf16(a, b, flags & kNaN) : fp::min_f16(a, b, flags & kNaN); break;
    case hop_max: h = BF ? fp::max_bf16(a, b, flags & kNaN) : fp::max_f16(a, b, flags & kNaN); break;
    default: break;
  }
  h = flush(h);
  const bool is_nan = BF ? ((h & 0x7F80) == 0x7F80 && (h & 0x7F)) : ((h & 0x7C00) == 0x7C00 && (h & 0x3FF));
  if (flags & kSat) {
    if (is_nan || (h & sign)) h = 0;
    else if (h2f<BF>(h) > 1.0f) h = BF ? 0x3F80 : 0x3C00;
  }
  if ((flags & kRelu) && (h & sign) && !is_nan) h = 0;
  return h;
}

template <bool BF, HOp Op, bool Packed>
void h_half(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m)
    const uint64_t a = x.val(in.o[1], lane);
    const uint64_t b = in.nops > 2 ? x.val(in.o[2], lane) : 0;
    const uint64_t c = in.nops > 3 ? x.val(in.o[3], lane) : 0;
    uint64_t r = half_op<BF, Op>(uint16_t(a), uint16_t(b), uint16_t(c), in.flags);
    if (Packed) r |= uint64_t(half_op<BF, Op>(uint16_t(a >> 16), uint16_t(b >> 16), uint16_t(c >> 16), in.flags)) << 16;
    x.set(in.o[0], lane, r);
  EMU_END_LANES
}

template <bool BF, HOp Op>
Handler pick_half(Type t) {
  switch (t) {
    case Type::f16: return BF ? nullptr : h_half<false, Op, false>;
    case Type::f16x2: return BF ? nullptr : h_half<false, Op, true>;
    case Type::bf16: return h_half<true, Op, false>;
    case Type::bf16x2: return h_half<true, Op, true>;
    default: return nullptr;
  }
}
template <HOp Op>
Handler pick_half_any(Type t) {
  return (t == Type::bf16 || t == Type::bf16x2) ? pick_half<true, Op>(t) : pick_half<false, Op>(t);
}

template <bool BF>
void h_half_setp(Exec& x, const Inst& in, uint32_t m) {
  // Comparison codes as in alu.cpp's Cmp (eq ne lt le gt ge ... equ neu ltu leu gtu geu num nan).
  EMU_FOR_LANES(m)
    const float a = h2f<BF>(uint16_t(x.val(in.o[1], lane))), b = h2f<BF>(uint16_t(x.val(in.o[2], lane)));
    const bool u = std::isnan(a) || std::isnan(b);
    bool r = false;
    switch (in.flags & 0x1F) {
      case 0: r = !u && a == b; break;
      case 1: r = !u && a != b; break;
      case 2: r = !u && a < b; break;
      case 3: r = !u && a <= b; break;
      case 4: r = !u && a > b; break;
      case 5: r = !u && a >= b; break;
      case 10: r = u || a == b; break;
      case 11: r = u || a != b; break;
      case 12: r = u || a < b; break;
      case 13: r = u || a <= b; break;
      case 14: r = u || a > b; break;
      case 15: r = u || a >= b; break;
      case 16: r = !u; break;
      case 17: r = u; break;
    }
    setp_write(x, in, lane, r);
  EMU_END_LANES
}

}  // namespace

Handler half_setp_handler(Type t) {
  if (t == Type::f16) return h_half_setp<false>;
  if (t == Type::bf16) return h_half_setp<true>;
  return nullptr;
}

bool decode_float(DecodeCtx& d, const PInstr& p, Inst& in) {
  const std::string& op = p.opcode;
  const Type t = d.last_type(p);
  if (!type_float(t)) return false;
  in.type = t;
  auto ops = [&](size_t n) {
    if (p.ops.size() != n) d.fail(p, "expected " + std::to_string(n) + " operands");
    for (size_t i = 0; i < n; ++i) in.o[i] = d.op(p.ops[i], t);
    in.nops = uint8_t(n);
  };
  in.flags |= d.rounding(p);
  if (d.has(p, "ftz")) in.flags |= kFtz;
  if (d.has(p, "sat")) in.flags |= kSat;
  if (d.has(p, "NaN")) in.flags |= kNaN;
  if (d.has(p, "relu")) in.flags |= kRelu;
  const bool f64 = t == Type::f64;
  const bool half = t == Type::f16 || t == Type::f16x2 || t == Type::bf16 || t == Type::bf16x2;

  if (half) {
    Handler h = nullptr;
    if (op == "add") { ops(3); h = pick_half_any<hop_add>(t); }
    else if (op == "sub") { ops(3); h = pick_half_any<hop_sub>(t); }
    else if (op == "mul") { ops(3); h = pick_half_any<hop_mul>(t); }
    else if (op == "fma") { ops(4); h = pick_half_any<hop_fma>(t); }
    else if (op == "min") { ops(3); h = pick_half_any<hop_min>(t); }
    else if (op == "max") { ops(3); h = pick_half_any<hop_max>(t); }
    else if (op == "neg") { ops(2); h = pick_half_any<hop_neg>(t); }
    else if (op == "abs") { ops(2); h = pick_half_any<hop_abs>(t); }
    else return false;
    in.fn = h;
    return h != nullptr;
  }
  if (t != Type::f32 && t != Type::f64) return false;
  if (f64 && d.has(p, "approx") && d.has(p, "ftz") && (op == "rcp" || op == "rsqrt")) {
    ops(2);
    in.flags |= kApprox;
    in.fn = op == "rcp" ? h_approx_f64_ftz<true> : h_approx_f64_ftz<false>;
    return true;
  }
  if (t == Type::f32 && (d.has(p, "approx") || d.has(p, "full"))) {
    Handler h = nullptr;
    if (op == "div") { ops(3); h = d.has(p, "full") ? h_approx<approx::div_full> : h_approx<approx::div_approx>; }
    else if (op == "rcp") { ops(2); h = h_approx<approx::rcp>; }
    else if (op == "sqrt") { ops(2); h = h_approx<approx::sqrt_>; }
    else if (op == "rsqrt") { ops(2); h = h_approx<approx::rsqrt>; }
    else if (op == "ex2") { ops(2); h = h_approx<approx::ex2>; }
    else if (op == "lg2") { ops(2); h = h_approx<approx::lg2>; }
    else if (op == "sin") { ops(2); h = h_approx<approx::sin_>; }
    else if (op == "cos") { ops(2); h = h_approx<approx::cos_>; }
    else if (op == "tanh") { ops(2); h = h_approx<approx::tanh_>; }
    if (h) {
      in.flags |= d.has(p, "full") ? kFull : kApprox;
      in.fn = h;
      return true;
    }
  }
#define EMU_F(H) (f64 ? H<double> : H<float>)
#define EMU_F2(H, OP) (f64 ? H<double, OP> : H<float, OP>)
  if (op == "add") { ops(3); in.fn = EMU_F2(h_fbin, f_add); return true; }
  if (op == "sub") { ops(3); in.fn = EMU_F2(h_fbin, f_sub); return true; }
  if (op == "mul") { ops(3); in.fn = EMU_F2(h_fbin, f_mul); return true; }
  if (op == "div") { ops(3); in.fn = EMU_F2(h_fbin, f_div); return true; }
  if (op == "min") { ops(3); in.fn = EMU_F2(h_fbin, f_min); return true; }
  if (op == "max") { ops(3); in.fn = EMU_F2(h_fbin, f_max); return true; }
  if (op == "copysign") { ops(3); in.fn = EMU_F2(h_fbin, f_copysign); return true; }
  if (op == "fma" || op == "mad") {
    ops(4);
    in.fn = (in.flags & ~uint32_t(kRn)) == 0 ? fma_rn_handler(f64) : EMU_F(h_fma);
    return true;
  }
  if (op == "neg") { ops(2); in.fn = EMU_F2(h_fun, u_neg); return true; }
  if (op == "abs") { ops(2); in.fn = EMU_F2(h_fun, u_abs); return true; }
  if (op == "rcp") { ops(2); in.fn = EMU_F2(h_fun, u_rcp); return true; }
  if (op == "sqrt") { ops(2); in.fn = EMU_F2(h_fun, u_sqrt); return true; }
  if (op == "rsqrt") { ops(2); in.fn = EMU_F2(h_fun, u_rsqrt); return true; }
  if (op == "ex2") { ops(2); in.fn = EMU_F2(h_fun, u_ex2); return true; }
  if (op == "lg2") { ops(2); in.fn = EMU_F2(h_fun, u_lg2); return true; }
  if (op == "sin") { ops(2); in.fn = EMU_F2(h_fun, u_sin); return true; }
  if (op == "cos") { ops(2); in.fn = EMU_F2(h_fun, u_cos); return true; }
  if (op == "tanh") { ops(2); in.fn = EMU_F2(h_fun, u_tanh); return true; }
  if (op == "testp") {
    ops(2);
    static const char* kinds[] = {"finite", "infinite", "number", "notanumber", "normal", "subnormal"};
    for (uint32_t i = 0; i < 6; ++i)
      if (d.has(p, kinds[i])) in.aux = i;
    in.fn = EMU_F(h_testp);
    return true;
  }
#undef EMU_F
#undef EMU_F2
  return false;
}

}  // namespace emu
