// Host-side reference arithmetic for the ALU conformance programs (float_ops.cu, convert_ops.cu).
//
// Expected values must come from the PTX ISA's definition, not from any floating-point unit whose
// rounding we would only be trusting: the ISA defines the rounded instructions (add/sub/mul/fma/
// div/sqrt/rcp with .rn/.rz/.rm/.rp, cvt with .rn/.rna/.rz/.rm/.rp and the integer roundings) as
// "compute the exact result, then round it into the destination format". So this file keeps
// values exactly, as sign * (mag + sticky) * 2^exp with a 128-bit integer magnitude, and rounds
// them with plain integer manipulation into any binary format (f64, f32, tf32, f16, bf16, e5m2,
// e4m3). Nothing here uses the host FPU's rounding, except that decoding a bit pattern to the
// host double for printing or for tolerance checks of the approximate instructions.
#pragma once

#include <cstdint>
#include <cstring>

namespace alu {

typedef unsigned __int128 u128;

enum class Rnd { RN, RNA, RZ, RM, RP };

// The four roundings the rounded instructions take (.rna is cvt's alone), with their modifiers.
constexpr Rnd kRoundings[4] = {Rnd::RN, Rnd::RZ, Rnd::RM, Rnd::RP};
constexpr const char* kRoundingNames[4] = {"rn", "rz", "rm", "rp"};

// A binary floating-point format: mantissa bits (without the hidden bit), exponent bits, and
// whether the all-ones exponent encodes infinities (IEEE formats and e5m2) or, as in e4m3, only
// NaN at mantissa all-ones, leaving the rest of that binade as normal numbers.
struct Fmt {
  int mbits;
  int ebits;
  bool ieee_top;
  int bias() const { return (1 << (ebits - 1)) - 1; }
  int width() const { return 1 + ebits + mbits; }
  int emin() const { return 1 - bias(); }
  // Exponent of the largest binade holding finite numbers.
  int emax() const { return ieee_top ? bias() : bias() + 1; }
};
constexpr Fmt F64{52, 11, true};
constexpr Fmt F32{23, 8, true};
constexpr Fmt TF32{10, 8, true};  // encoded here in 19 bits; shift left 13 for the f32 layout
constexpr Fmt F16{10, 5, true};
constexpr Fmt BF16{7, 8, true};
constexpr Fmt E5M2{2, 5, true};
constexpr Fmt E4M3{3, 4, false};

// An exact value: (-1)^neg * (mag + s) * 2^exp where s is 0 when !sticky and otherwise some
// unknown amount strictly between 0 and 1 (bits lost below mag's last bit). Special values are
// flagged instead.
struct Exact {
  bool neg = false;
  u128 mag = 0;
  int exp = 0;
  bool sticky = false;
  bool nan = false;
  bool inf = false;
  bool is_zero() const { return !nan && !inf && mag == 0 && !sticky; }
};

inline int msb128(u128 v) {
  int p = -1;
  while (v) {
    v >>= 1;
    ++p;
  }
  return p;
}

inline Exact make_nan() {
  Exact e;
  e.nan = true;
  return e;
}
inline Exact make_inf(bool neg) {
  Exact e;
  e.inf = true;
  e.neg = neg;
  return e;
}
inline Exact make_zero(bool neg) {
  Exact e;
  e.neg = neg;
  return e;
}
inline Exact from_int(bool neg, u128 mag) {
  Exact e;
  e.neg = neg;
  e.mag = mag;
  return e;
}
inline Exact from_s64(int64_t v) {
  return from_int(v < 0, v < 0 ? (u128)(~(uint64_t)v + 1) : (u128)(uint64_t)v);
}
inline Exact from_u64(uint64_t v) { return from_int(false, v); }

// Decodes an encoding of format f (in the low f.width() bits).
inline Exact decode(uint64_t bits, Fmt f) {
  Exact e;
  const uint64_t mmask = (1ull << f.mbits) - 1;
  const uint64_t emask = (1ull << f.ebits) - 1;
  const uint64_t mant = bits & mmask;
  const uint64_t ef = (bits >> f.mbits) & emask;
  e.neg = (bits >> (f.mbits + f.ebits)) & 1;
  if (ef == emask) {
    if (f.ieee_top) {
      if (mant == 0) e.inf = true;
      else e.nan = true;
      return e;
    }
    if (mant == mmask) {  // e4m3: S.1111.111 is the only NaN
      e.nan = true;
      return e;
    }
  }
  if (ef == 0) {
    e.mag = mant;
    e.exp = f.emin() - f.mbits;
  } else {
    e.mag = mant | (1ull << f.mbits);
    e.exp = (int)ef - f.bias() - f.mbits;
  }
  return e;
}

// Bit patterns of the special encodings.
inline uint64_t inf_bits(Fmt f, bool neg) {
  return ((uint64_t)neg << (f.width() - 1)) | (((1ull << f.ebits) - 1) << f.mbits);
}
inline uint64_t qnan_bits(Fmt f) {  // a quiet NaN; compare NaNs with is_nan_bits, not by bits
  return (((1ull << f.ebits) - 1) << f.mbits) | ((1ull << f.mbits) - 1);
}
inline uint64_t max_bits(Fmt f, bool neg) {  // largest finite magnitude
  uint64_t m = ((1ull << f.mbits) - 1);
  uint64_t e = (1ull << f.ebits) - 1;
  if (f.ieee_top) e -= 1;
  else m -= 1;  // e4m3: 1.110 * 2^8 = 448
  return ((uint64_t)neg << (f.width() - 1)) | (e << f.mbits) | m;
}
inline bool is_nan_bits(uint64_t bits, Fmt f) { return decode(bits, f).nan; }

// Where the discarded part of a value lies relative to half a unit of the kept last place.
enum class Rem { ZERO, BELOW, HALF, ABOVE };

// The discarded bits `low` (half a unit of the kept last place is `half`) plus the sticky rest.
inline Rem remainder_of(u128 low, u128 half, bool sticky) {
  if (low == 0) return sticky ? Rem::BELOW : Rem::ZERO;
  if (low < half) return Rem::BELOW;
  if (low == half) return sticky ? Rem::ABOVE : Rem::HALF;
  return Rem::ABOVE;
}

// Whether rounding r takes the kept magnitude S of a value with sign neg one unit up.
inline bool rounds_up(Rnd r, Rem rem, bool neg, u128 S) {
  switch (r) {
    case Rnd::RN: return rem == Rem::ABOVE || (rem == Rem::HALF && (S & 1));
    case Rnd::RNA: return rem == Rem::ABOVE || rem == Rem::HALF;
    case Rnd::RZ: return false;
    case Rnd::RM: return neg && rem != Rem::ZERO;
    case Rnd::RP: return !neg && rem != Rem::ZERO;
  }
  return false;
}

// Rounds an exact value into format f with mode r, per IEEE 754 (which the ISA's .rn/.rz/.rm/.rp
// and cvt's .rna name): overflow gives infinity or the largest finite value depending on the
// direction; subnormal results are kept (no flushing here).
inline uint64_t round_to(const Exact& v, Fmt f, Rnd r) {
  const uint64_t sign = (uint64_t)v.neg << (f.width() - 1);
  if (v.nan) return qnan_bits(f);
  if (v.inf) return inf_bits(f, v.neg);
  if (v.mag == 0) {
    // Callers never hand over a nonzero value smaller than one unit of mag (sticky alone).
    return sign;
  }
  const int p = msb128(v.mag);
  const int E = p + v.exp;  // v lies in [2^E, 2^(E+1))
  int q = (E < f.emin() ? f.emin() : E) - f.mbits;  // exponent of the last kept place
  const int shift = q - v.exp;
  u128 S;
  Rem rem;
  if (shift <= 0) {
    S = v.mag << (-shift);
    rem = v.sticky ? Rem::BELOW : Rem::ZERO;
  } else if (shift > 128) {
    S = 0;
    rem = Rem::BELOW;  // mag < 2^128 <= half of 2^shift
  } else {
    const u128 mask = shift == 128 ? ~(u128)0 : (((u128)1 << shift) - 1);
    S = shift == 128 ? 0 : (v.mag >> shift);
    rem = remainder_of(v.mag & mask, (u128)1 << (shift - 1), v.sticky);
  }
  if (rounds_up(r, rem, v.neg, S)) S += 1;
  if (S == ((u128)1 << (f.mbits + 1))) {  // carried into a new binade
    S >>= 1;
    q += 1;
  }
  const bool normal = S >= ((u128)1 << f.mbits);
  if (normal) {
    const int Er = q + f.mbits;
    const uint64_t mant = (uint64_t)(S - ((u128)1 << f.mbits));
    bool over = Er > f.emax();
    if (!f.ieee_top && Er == f.emax() && mant == ((1ull << f.mbits) - 1)) over = true;
    if (over) {
      bool to_inf;
      switch (r) {
        case Rnd::RN:
        case Rnd::RNA: to_inf = true; break;
        case Rnd::RZ: to_inf = false; break;
        case Rnd::RM: to_inf = v.neg; break;
        default: to_inf = !v.neg; break;
      }
      if (!f.ieee_top) to_inf = false;  // no infinity to go to (callers saturate first)
      return to_inf ? inf_bits(f, v.neg) : max_bits(f, v.neg);
    }
    return sign | ((uint64_t)(Er + f.bias()) << f.mbits) | mant;
  }
  return sign | (uint64_t)S;  // subnormal or zero
}

// ---- exact arithmetic on finite values (callers handle NaN, infinity and zero results) ----

inline Exact mul(const Exact& a, const Exact& b) {
  Exact r;
  r.neg = a.neg != b.neg;
  r.mag = a.mag * b.mag;  // at most 53 + 53 bits
  r.exp = a.exp + b.exp;
  return r;
}

// a + b, both finite and sticky-free (products and decoded values qualify). An exactly zero sum
// comes back with mag 0; its sign is the caller's business (it depends on the rounding mode).
inline Exact add(Exact a, Exact b) {
  if (a.mag == 0) return b;
  if (b.mag == 0) return a;
  // Put the operand with the higher top bit first, then widen it so its top bit is bit 120:
  // that leaves > 64 bits of headroom below for the other operand's alignment.
  if (msb128(a.mag) + a.exp < msb128(b.mag) + b.exp) {
    Exact t = a;
    a = b;
    b = t;
  }
  const int la = 120 - msb128(a.mag);
  a.mag <<= la;
  a.exp -= la;
  const int d = a.exp - b.exp;  // b's shift right to align with a
  u128 bm;
  bool sticky = false;
  if (d <= 0) {
    bm = b.mag << (-d);  // fits: b's top bit is not above a's (bit 120)
  } else if (d >= 128) {
    bm = 0;
    sticky = true;
  } else {
    bm = b.mag >> d;
    sticky = (b.mag & ((((u128)1) << d) - 1)) != 0;
  }
  Exact r;
  r.exp = a.exp;
  r.neg = a.neg;
  if (a.neg == b.neg) {
    r.mag = a.mag + bm;
    r.sticky = sticky;
  } else if (a.mag > bm || (a.mag == bm && sticky)) {
    // a - (bm + s) = (a - bm - 1) + (1 - s): the fraction stays strictly between 0 and 1.
    r.mag = a.mag - bm - (sticky ? 1 : 0);
    r.sticky = sticky;
  } else {
    r.neg = b.neg;  // only possible without sticky, when the values cancel or b is larger
    r.mag = bm - a.mag;
  }
  return r;
}

// a / b for finite nonzero a, b.
inline Exact div(const Exact& a, const Exact& b) {
  Exact r;
  r.neg = a.neg != b.neg;
  const int k = 120 - msb128(a.mag);
  const u128 num = a.mag << k;
  r.mag = num / b.mag;  // >= 120 - 53 bits of quotient
  r.sticky = (num % b.mag) != 0;
  r.exp = a.exp - k - b.exp;
  return r;
}

inline u128 isqrt128(u128 n, bool* exact) {
  u128 x = 0;
  for (int bit = 126; bit >= 0; bit -= 2) {  // digit-by-digit, no floating point
    u128 b = (u128)1 << bit;
    if (n >= x + b) {
      n -= x + b;
      x = (x >> 1) + b;
    } else {
      x >>= 1;
    }
  }
  *exact = n == 0;
  return x;
}

// sqrt(a) for finite positive a.
inline Exact sqrt(const Exact& a) {
  int k = 120 - msb128(a.mag);
  if (((a.exp - k) & 1) != 0) k += 1;  // even exponent so it halves exactly
  bool exact;
  Exact r;
  r.mag = isqrt128(a.mag << k, &exact);
  r.sticky = !exact;
  r.exp = (a.exp - k) / 2;
  return r;
}

// Rounds a finite value to an integer with one of cvt's integer roundings (.rni = RN, .rzi = RZ,
// .rmi = RM, .rpi = RP); returns the magnitude (saturated at 2^127) and sign.
inline u128 round_to_integer(const Exact& v, Rnd r, bool* neg_out) {
  *neg_out = v.neg;
  u128 S;
  Rem rem;
  if (v.exp >= 0) {
    if (v.exp >= 127 - msb128(v.mag)) return (u128)1 << 127;
    S = v.mag << v.exp;
    rem = v.sticky ? Rem::BELOW : Rem::ZERO;
  } else {
    const int sh = -v.exp;
    if (sh >= 128) {
      S = 0;
      rem = v.mag == 0 && !v.sticky ? Rem::ZERO : Rem::BELOW;
    } else {
      const u128 mask = (((u128)1) << sh) - 1, half = ((u128)1) << (sh - 1);
      S = v.mag >> sh;
      rem = remainder_of(v.mag & mask, half, v.sticky);
    }
  }
  return S + (rounds_up(r, rem, v.neg, S) ? 1 : 0);
}

// ---- expected results ----

// What one result must be: exactly these bits, any NaN of its format (the ISA leaves NaN
// payloads unspecified), or nothing at all (skip: a case the ISA leaves open).
struct Val {
  uint64_t bits = 0;
  bool any_nan = false;
  bool skip = false;
};
inline Val nan_val() {
  Val v;
  v.any_nan = true;
  return v;
}
inline Val skip_val() {
  Val v;
  v.skip = true;
  return v;
}

inline uint64_t sign_bit(Fmt f) { return 1ull << (f.width() - 1); }

// .relu: "clamps the result to 0 if negative"; NaN gives (canonical) NaN. A -0.0 result is not
// checked (whether it counts as negative is not said).
inline Val relu(Val v, Fmt f) {
  if (v.any_nan || v.skip) return v;
  if (v.bits == sign_bit(f)) return skip_val();
  if (v.bits & sign_bit(f)) v.bits = 0;
  return v;
}

// ---- host views of encodings, for messages and for the approximate instructions' bounds ----

inline double to_double(uint64_t bits, Fmt f) {
  if (f.mbits == 52) {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  Exact e = decode(bits, f);  // every narrower format's values are doubles exactly
  if (e.nan) return __builtin_nan("");
  if (e.inf) return e.neg ? -__builtin_inf() : __builtin_inf();
  double m = (double)(uint64_t)e.mag;
  double v = __builtin_ldexp(m, e.exp);
  return e.neg ? -v : v;
}
// The same bits as another type of the same size: std::bit_cast, which C++17 does not have yet.
template <typename To, typename From>
inline To same_bits(From from) {
  static_assert(sizeof(To) == sizeof(From), "a bit pattern keeps its size");
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}
inline uint32_t f32_bits(float x) { return same_bits<uint32_t>(x); }
inline float bits_f32(uint32_t u) { return same_bits<float>(u); }
inline uint64_t f64_bits(double x) { return same_bits<uint64_t>(x); }
inline double bits_f64(uint64_t u) { return same_bits<double>(u); }

}  // namespace alu
