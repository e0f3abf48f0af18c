// emu/src/exec/fp.h - exact floating-point conversions and rounding-mode arithmetic for the PTX
// emulator, following the PTX ISA (cvt, add/sub/mul/fma, min/max, .ftz/.sat/.satfinite/.relu).
//
// Design: every floating-point value, whatever its format, is unpacked into an exact
// sign * integer * 2^exponent triple, and every result is produced by ONE rounding step
// (round_pack) from an exact (or provably-equivalent, see add_exact) value. Nothing here touches
// the host floating-point environment: no fesetround, no host rounding, so results do not depend
// on the host's mode and no state leaks. Values cross the API as raw bit patterns (uint16_t for
// f16/bf16, uint32_t for f32/tf32, uint64_t for f64, uint8_t for fp8) because that is what the
// emulator's registers hold, and because it keeps NaN payloads and -0 visible.
//
// Canonical NaNs: the PTX ISA leaves most NaN results "unspecified"; the CUDA programming guide
// fixes f32 NaN results at 0x7fffffff. We use the same convention for every format: sign clear,
// all exponent and mantissa bits set (f16 0x7fff, bf16 0x7fff, f32 0x7fffffff,
// f64 0x7fffffffffffffff, tf32 0x7fffe000, e4m3 0x7f, e5m2 0x7f).
//
// .ftz is left to the caller: apply ftz_f32 (ftz_f16) to the inputs and to the result of the
// instruction; .sat on arithmetic results likewise uses sat_f32 / sat_f64 / sat_f16.
//
// Requires GCC or Clang (unsigned __int128, __builtin_clzll). Header-only, C++17.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace emu::fp {

__extension__ typedef unsigned __int128 u128;  // wide enough for a 53x53-bit exact product

/// Rounding direction: rn nearest-even, rz toward zero, rm toward -inf, rp toward +inf, rna nearest ties-away.
/// Integer rounding (.rni/.rzi/.rmi/.rpi) uses rn/rz/rm/rp.
enum class Round { rn, rz, rm, rp, rna };

/// Conversion modifiers, OR-able (kSat, kSatFinite, kRelu).
using Mods = unsigned;
inline constexpr Mods kNoMods = 0;
inline constexpr Mods kSat = 1u;        ///< .sat: clamp to [+0.0, 1.0], NaN -> +0.0, any negative (also -0) -> +0.0
inline constexpr Mods kSatFinite = 2u;  ///< .satfinite: +-inf and overflow -> +-max finite; NaN stays (canonical) NaN
inline constexpr Mods kRelu = 4u;       ///< .relu: negative (also -0) -> +0.0; NaN -> canonical NaN

inline constexpr uint16_t kNaNF16 = 0x7FFF;                   ///< canonical f16 NaN
inline constexpr uint16_t kNaNBF16 = 0x7FFF;                  ///< canonical bf16 NaN
inline constexpr uint32_t kNaNF32 = 0x7FFFFFFFu;              ///< canonical f32 NaN (CUDA guide: 0x7fffffff)
inline constexpr uint64_t kNaNF64 = 0x7FFFFFFFFFFFFFFFull;    ///< canonical f64 NaN (our choice; PTX leaves it open)
inline constexpr uint32_t kNaNTF32 = 0x7FFFE000u;             ///< canonical tf32 NaN (low 13 bits zero)
inline constexpr uint8_t kNaNE4M3 = 0x7F;                     ///< canonical e4m3 NaN (S.1111.111, the only NaN code)
inline constexpr uint8_t kNaNE5M2 = 0x7F;                     ///< canonical e5m2 NaN (S.11111.11)

/// float -> its IEEE bit pattern.
inline uint32_t f32_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
/// IEEE bit pattern -> float.
inline float f32_from_bits(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
/// double -> its IEEE bit pattern.
inline uint64_t f64_bits(double d) { uint64_t u; std::memcpy(&u, &d, 8); return u; }
/// IEEE bit pattern -> double.
inline double f64_from_bits(uint64_t u) { double d; std::memcpy(&d, &u, 8); return d; }

// =============================================================================================
// Generic machinery (namespace detail): format descriptors, unpack, one-step rounding.
// =============================================================================================
namespace detail {

/// A binary floating-point format: 1 sign bit, exp_bits exponent bits, man_bits fraction bits.
struct Format {
  int exp_bits;
  int man_bits;
  bool ieee;  ///< true: top exponent means inf/NaN. false (e4m3 "fn"): top exponent holds normal
              ///< numbers, only mantissa all-ones is NaN, and there is no infinity.

  constexpr int bias() const { return (1 << (exp_bits - 1)) - 1; }
  constexpr int top_exp() const { return (1 << exp_bits) - 1; }
  constexpr uint64_t sign_bit() const { return uint64_t{1} << (exp_bits + man_bits); }
  constexpr uint64_t man_mask() const { return (uint64_t{1} << man_bits) - 1; }
  // Largest finite number: for IEEE formats the exponent below inf/NaN with a full mantissa;
  // for e4m3 the top exponent with mantissa 110 (111 is NaN), i.e. 448.
  constexpr int max_biased() const { return ieee ? top_exp() - 1 : top_exp(); }
  constexpr uint64_t max_field() const { return ieee ? man_mask() : man_mask() - 1; }
  constexpr uint64_t max_finite() const { return (uint64_t(max_biased()) << man_bits) | max_field(); }
  constexpr uint64_t inf() const { return uint64_t(top_exp()) << man_bits; }
  constexpr uint64_t nan() const { return sign_bit() - 1; }  // canonical: positive, all ones
  constexpr uint64_t one() const { return uint64_t(bias()) << man_bits; }
};

inline constexpr Format kF16{5, 10, true};
inline constexpr Format kBF16{8, 7, true};
inline constexpr Format kTF32{8, 10, true};  // packed as a 19-bit value; callers shift it up by 13
inline constexpr Format kF32{8, 23, true};
inline constexpr Format kF64{11, 52, true};
inline constexpr Format kE4M3{4, 3, false};
inline constexpr Format kE5M2{5, 2, true};

enum class Class { zero, finite, inf, nan };

/// A decoded value. For Class::finite: value = (neg ? -1 : 1) * mag * 2^exp, exactly.
struct Unpacked {
  Class cls;
  bool neg;
  uint64_t mag;
  int exp;
};

/// Decode a bit pattern of format f into an exact sign/integer/exponent triple.
inline Unpacked unpack(const Format& f, uint64_t bits) {
  const bool neg = (bits & f.sign_bit()) != 0;
  const uint64_t field = bits & f.man_mask();
  const int biased = int((bits >> f.man_bits) & uint64_t(f.top_exp()));
  if (biased == f.top_exp()) {
    if (f.ieee) return {field ? Class::nan : Class::inf, neg, 0, 0};
    if (field == f.man_mask()) return {Class::nan, neg, 0, 0};
  }
  if (biased == 0) {
    if (field == 0) return {Class::zero, neg, 0, 0};
    // Subnormal: no hidden bit, and the exponent is pinned at emin.
    return {Class::finite, neg, field, 1 - f.bias() - f.man_bits};
  }
  return {Class::finite, neg, field | (uint64_t{1} << f.man_bits), biased - f.bias() - f.man_bits};
}

/// Index of the highest set bit of a nonzero 128-bit value.
inline int msb128(u128 x) {
  const uint64_t hi = uint64_t(x >> 64);
  return hi ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll(uint64_t(x));
}

/// mag / 2^shift rounded to an integer in direction r (shift >= 1); neg is the sign of the value
/// being rounded, needed by the directed modes. This is the only place a rounding decision is made.
inline u128 shift_right_round(u128 mag, int shift, bool neg, Round r) {
  u128 kept, rem, half;
  if (shift > 128) {
    // Discarded part is mag < 2^128 <= 2^(shift-1): nonzero means strictly below one half.
    const bool away = mag != 0 && ((r == Round::rp && !neg) || (r == Round::rm && neg));
    return away ? 1 : 0;
  }
  if (shift == 128) {
    kept = 0;
    rem = mag;
  } else {
    kept = mag >> shift;
    rem = mag & ((u128{1} << shift) - 1);
  }
  half = u128{1} << (shift - 1);
  bool up = false;
  switch (r) {
    case Round::rn: up = rem > half || (rem == half && (kept & 1)); break;  // ties to even
    case Round::rna: up = rem >= half; break;                                // ties away from zero
    case Round::rz: up = false; break;
    case Round::rm: up = neg && rem != 0; break;
    case Round::rp: up = !neg && rem != 0; break;
  }
  return kept + (up ? 1 : 0);
}

/// Round the exact value (neg ? -1 : 1) * mag * 2^exp to format f in direction r and encode it.
/// IEEE overflow rules: the value is first rounded with an unbounded exponent; if that exceeds
/// the largest finite number, rn/rna give inf, rz gives max, rm/rp give inf on the side they
/// round toward and max on the other. satfinite replaces every inf result by max finite.
/// Subnormal results are rounded on the fixed 2^(emin - man_bits) grid (gradual underflow).
inline uint64_t round_pack(const Format& f, bool neg, u128 mag, int exp, Round r, bool satfinite) {
  const uint64_t sign = neg ? f.sign_bit() : 0;
  if (mag == 0) return sign;
  const int e = msb128(mag) + exp;  // the value lies in [2^e, 2^(e+1))
  const int emin = 1 - f.bias();
  int q = (e > emin ? e : emin) - f.man_bits;  // weight of the result's last mantissa bit
  u128 kept = q <= exp ? mag << (exp - q)      // exact: fits in man_bits + 1 bits
                       : shift_right_round(mag, q - exp, neg, r);
  if (kept >> (f.man_bits + 1)) {  // rounding carried into the next binade (e.g. 1.111 -> 10.00)
    kept >>= 1;
    ++q;
  }
  const uint64_t k = uint64_t(kept);
  int biased;
  uint64_t field;
  if (k >> f.man_bits) {  // hidden bit present: normal number
    biased = q + f.man_bits + f.bias();
    field = k & f.man_mask();
  } else {  // only possible on the subnormal grid (q == emin - man_bits); k may be 0
    biased = 0;
    field = k;
  }
  if (biased > f.max_biased() || (biased == f.max_biased() && field > f.max_field())) {
    const bool to_inf = r == Round::rn || r == Round::rna || (r == Round::rp && !neg) ||
                        (r == Round::rm && neg);
    if (to_inf && !satfinite) return f.ieee ? (sign | f.inf()) : f.nan();  // e4m3: no inf -> NaN
    return sign | f.max_finite();
  }
  return sign | (uint64_t(biased) << f.man_bits) | field;
}

/// True when a finite unpacked value is > 1.0.
inline bool greater_than_one(const Unpacked& u) {
  const int e = msb128(u.mag) + u.exp;
  return e > 0 || (e == 0 && (u.mag & (u.mag - 1)) != 0);
}

/// Generic float -> float conversion with .sat/.satfinite/.relu (the cvt semantics).
inline uint64_t convert(const Format& src, uint64_t bits, const Format& dst, Round r, Mods m) {
  const Unpacked u = unpack(src, bits);
  if (u.cls == Class::nan) return (m & kSat) ? 0 : dst.nan();
  // .sat and .relu both send every negative input, -0 and -inf included, to +0. Clamping before
  // rounding gives the same answer as after, because rounding is monotone and 0, 1 are exact.
  if ((m & (kSat | kRelu)) && u.neg) return 0;
  if ((m & kSat) && (u.cls == Class::inf || (u.cls == Class::finite && greater_than_one(u))))
    return dst.one();
  const uint64_t sign = u.neg ? dst.sign_bit() : 0;
  if (u.cls == Class::zero) return sign;
  if (u.cls == Class::inf) {
    if (m & kSatFinite) return sign | dst.max_finite();
    return dst.ieee ? (sign | dst.inf()) : dst.nan();  // e4m3 has no inf (PTX always uses satfinite)
  }
  return round_pack(dst, u.neg, u.mag, u.exp, r, (m & kSatFinite) != 0);
}

/// Exact-or-sticky wide value used by the arithmetic core: (neg ? -1 : 1) * mag * 2^exp.
struct Exact {
  bool neg;
  u128 mag;
  int exp;
};

/// x + y for two EXACT operands whose magnitudes have at most 106 significant bits (a 53x53-bit
/// product or less). The result is exact, or carries a "sticky" 1 jammed into bit 0 when low
/// bits of the smaller operand had to be dropped. Why the sticky result still rounds correctly:
/// both operands are first shifted so their top bit is bit 125, so the larger one (x) has at
/// least 19 zero low bits. If y is shifted right by d >= 2 and bits fall off, y is replaced by
/// the odd integer next to it, so x +- y' is an odd integer within 1 of the true, non-integer
/// x +- y; the result is >= 2^124, so a <= 53-bit rounding happens at bit 72 or higher, where
/// every rounding boundary (grid point or midpoint) is an even integer. The true and jammed
/// values therefore lie strictly between the same two boundaries and round identically in every
/// mode. If d <= 1 no bits fall off and the sum is exact (massive cancellation happens only here).
/// mag == 0 in the result means the sum is exactly zero (the caller picks the zero's sign).
inline Exact add_exact(Exact x, Exact y) {
  if (x.mag == 0) return y;
  if (y.mag == 0) return x;
  const auto normalize = [](Exact& v) {
    const int s = 125 - msb128(v.mag);
    v.mag <<= s;
    v.exp -= s;
  };
  normalize(x);
  normalize(y);
  if (x.exp < y.exp || (x.exp == y.exp && x.mag < y.mag)) {
    const Exact t = x;
    x = y;
    y = t;
  }
  const int d = x.exp - y.exp;
  u128 ys;
  if (d == 0) {
    ys = y.mag;
  } else if (d >= 128) {
    ys = 1;  // y.mag != 0 and all of it is below bit 0: pure sticky
  } else {
    const bool lost = (y.mag & ((u128{1} << d) - 1)) != 0;
    ys = (y.mag >> d) | (lost ? 1 : 0);
  }
  if (x.neg == y.neg) return {x.neg, x.mag + ys, x.exp};  // < 2^127, no overflow
  return {x.neg, x.mag - ys, x.exp};                      // x.mag >= ys by the ordering above
}

/// Sign of an exactly-zero sum a + b (IEEE 754 §6.3): like signs keep their sign; unlike signs
/// give +0, except -0 when rounding toward -inf.
inline bool zero_sum_is_negative(bool a_neg, bool b_neg, Round r) {
  return a_neg == b_neg ? a_neg : r == Round::rm;
}

/// a * b + c, rounded once, in format f (add and sub reuse it with b = 1).
inline uint64_t fma_core(const Format& f, uint64_t a, uint64_t b, uint64_t c, Round r) {
  const Unpacked ua = unpack(f, a), ub = unpack(f, b), uc = unpack(f, c);
  if (ua.cls == Class::nan || ub.cls == Class::nan || uc.cls == Class::nan) return f.nan();
  const bool pneg = ua.neg != ub.neg;
  const bool pinf = ua.cls == Class::inf || ub.cls == Class::inf;
  const bool pzero = ua.cls == Class::zero || ub.cls == Class::zero;
  if (pinf && pzero) return f.nan();  // 0 * inf
  if (pinf) {
    if (uc.cls == Class::inf && uc.neg != pneg) return f.nan();  // inf - inf
    return (pneg ? f.sign_bit() : 0) | f.inf();
  }
  if (uc.cls == Class::inf) return (uc.neg ? f.sign_bit() : 0) | f.inf();
  const Exact p{pneg, pzero ? u128{0} : u128{ua.mag} * ub.mag, ua.exp + ub.exp};  // exact product
  const Exact s{uc.neg, uc.cls == Class::zero ? u128{0} : u128{uc.mag}, uc.exp};
  if (p.mag == 0 && s.mag == 0) return zero_sum_is_negative(pneg, uc.neg, r) ? f.sign_bit() : 0;
  const Exact sum = add_exact(p, s);
  if (sum.mag == 0) return r == Round::rm ? f.sign_bit() : 0;  // exact cancellation: unlike signs
  return round_pack(f, sum.neg, sum.mag, sum.exp, r, false);
}

/// a * b rounded once in format f.
inline uint64_t mul_core(const Format& f, uint64_t a, uint64_t b, Round r) {
  const Unpacked ua = unpack(f, a), ub = unpack(f, b);
  if (ua.cls == Class::nan || ub.cls == Class::nan) return f.nan();
  const bool neg = ua.neg != ub.neg;
  const bool inf = ua.cls == Class::inf || ub.cls == Class::inf;
  const bool zero = ua.cls == Class::zero || ub.cls == Class::zero;
  if (inf && zero) return f.nan();
  const uint64_t sign = neg ? f.sign_bit() : 0;
  if (inf) return sign | f.inf();
  if (zero) return sign;
  return round_pack(f, neg, u128{ua.mag} * ub.mag, ua.exp + ub.exp, r, false);
}

/// a + b rounded once in format f (a * 1 + b: the product is exact, so nothing changes).
inline uint64_t add_core(const Format& f, uint64_t a, uint64_t b, Round r) {
  return fma_core(f, a, f.one(), b, r);
}

/// Round a float to an integral value in the same format (cvt.rni.f32.f32 and friends).
inline uint64_t round_integral(const Format& f, uint64_t bits, Round r) {
  const Unpacked u = unpack(f, bits);
  if (u.cls == Class::nan) return f.nan();
  if (u.cls != Class::finite || u.exp >= 0) return bits;  // zeros, infs, already integral
  const u128 k = shift_right_round(u.mag, -u.exp, u.neg, r);
  return round_pack(f, u.neg, k, 0, Round::rn, false);  // exact; k == 0 keeps the sign (-0)
}

/// Float -> integer with PTX cvt rules: round in direction r, then clamp to the type's range.
/// NaN gives nan_result (see nan_int_result). Negative values to unsigned types clamp to 0.
template <class I>
I to_int(const Format& f, uint64_t bits, Round r, I nan_result) {
  static_assert(std::is_integral<I>::value && sizeof(I) <= 8, "integer type of 8..64 bits");
  using L = std::numeric_limits<I>;
  const Unpacked u = unpack(f, bits);
  if (u.cls == Class::nan) return nan_result;
  if (u.cls == Class::zero) return 0;
  if (u.cls == Class::inf) return u.neg ? L::min() : L::max();
  u128 k = 0;
  bool huge = false;  // magnitude >= 2^64: outside every integer type
  if (u.exp >= 64) huge = true;
  else if (u.exp >= 0) k = u128{u.mag} << u.exp;  // mag < 2^53, so this fits in 117 bits
  else k = shift_right_round(u.mag, -u.exp, u.neg, r);
  if (!u.neg) return (huge || k > u128(L::max())) ? L::max() : I(k);
  if (!huge && k == 0) return 0;  // e.g. -0.3 rounded toward zero
  if (!std::is_signed<I>::value) return 0;
  const u128 min_mag = u128{1} << (sizeof(I) * 8 - 1);  // |MININT|
  if (huge || k > min_mag) return L::min();
  return I(uint64_t(0) - uint64_t(k));  // two's complement negate (k <= 2^63 fits)
}

/// PTX cvt float->int NaN rule: 0 if the source is not .f64 and the destination is not 64-bit;
/// otherwise 1 << (width - 1) (MININT for signed types, (MAXINT >> 1) + 1 for unsigned types).
template <class I>
I nan_int_result(bool src_is_f64) {
  if (!src_is_f64 && sizeof(I) < 8) return 0;
  return I(uint64_t{1} << (sizeof(I) * 8 - 1));
}

/// Integer -> float in format f, rounded once in direction r.
template <class I>
uint64_t from_int(const Format& f, I v, Round r, Mods m) {
  static_assert(std::is_integral<I>::value && sizeof(I) <= 8, "integer type of 8..64 bits");
  bool neg = false;
  uint64_t mag = uint64_t(v);
  if constexpr (std::is_signed<I>::value) {
    neg = v < 0;
    if (neg) mag = uint64_t(0) - uint64_t(int64_t(v));  // also right for INT64_MIN
  }
  if ((m & (kSat | kRelu)) && neg) return 0;
  if ((m & kSat) && mag > 1) return f.one();
  return round_pack(f, neg, mag, 0, r, (m & kSatFinite) != 0);
}

/// Map a non-NaN pattern to an unsigned key whose order is the numeric order with -0 < +0.
inline uint64_t order_key(const Format& f, uint64_t bits) {
  const uint64_t all = (f.sign_bit() << 1) - 1;
  return (bits & f.sign_bit()) ? (~bits & all) : (bits | f.sign_bit());
}

/// PTX min/max: one NaN input -> the other input; both NaN (or any NaN with .NaN) -> canonical
/// NaN; otherwise (a < b) ? a : b with -0 < +0 (max mirrors it).
inline uint64_t minmax_core(const Format& f, uint64_t a, uint64_t b, bool want_max, bool nan_mode) {
  const bool an = unpack(f, a).cls == Class::nan, bn = unpack(f, b).cls == Class::nan;
  if ((an && bn) || (nan_mode && (an || bn))) return f.nan();
  if (an) return b;
  if (bn) return a;
  const uint64_t ka = order_key(f, a), kb = order_key(f, b);
  if (want_max) return ka > kb ? a : b;
  return ka < kb ? a : b;
}

/// .sat clamp of a value already in format f: NaN -> +0, negative (also -0) -> +0, > 1 -> 1.
inline uint64_t sat_core(const Format& f, uint64_t bits) {
  const Unpacked u = unpack(f, bits);
  if (u.cls == Class::nan || u.neg) return 0;
  if (u.cls == Class::inf || (u.cls == Class::finite && greater_than_one(u))) return f.one();
  return bits;
}

}  // namespace detail

// =============================================================================================
// Float -> float conversions (cvt). Mods: kSat, kSatFinite, kRelu as PTX allows them.
// =============================================================================================

/// cvt{.rnd}{.sat|.satfinite}{.relu}.f16.f32: f32 -> f16, subnormals exact, NaN -> 0x7fff.
inline uint16_t f32_to_f16(uint32_t a, Round r, Mods m = kNoMods) { return uint16_t(detail::convert(detail::kF32, a, detail::kF16, r, m)); }
/// cvt{.rnd}.f16.f64: f64 -> f16 rounded once (no double rounding through f32).
inline uint16_t f64_to_f16(uint64_t a, Round r, Mods m = kNoMods) { return uint16_t(detail::convert(detail::kF64, a, detail::kF16, r, m)); }
/// cvt{.rnd}{.satfinite}{.relu}.bf16.f32: f32 -> bf16.
inline uint16_t f32_to_bf16(uint32_t a, Round r, Mods m = kNoMods) { return uint16_t(detail::convert(detail::kF32, a, detail::kBF16, r, m)); }
/// cvt{.rnd}.bf16.f64: f64 -> bf16 rounded once.
inline uint16_t f64_to_bf16(uint64_t a, Round r, Mods m = kNoMods) { return uint16_t(detail::convert(detail::kF64, a, detail::kBF16, r, m)); }
/// cvt{.rnd}.bf16.f16: f16 -> bf16 (f16 subnormals are normal in bf16; the rounding is of precision).
inline uint16_t f16_to_bf16(uint16_t a, Round r, Mods m = kNoMods) { return uint16_t(detail::convert(detail::kF16, a, detail::kBF16, r, m)); }
/// cvt{.rnd}.f16.bf16: bf16 -> f16 (range and precision both narrow).
inline uint16_t bf16_to_f16(uint16_t a, Round r, Mods m = kNoMods) { return uint16_t(detail::convert(detail::kBF16, a, detail::kF16, r, m)); }
/// cvt.f32.f16: exact widening; NaN -> 0x7fffffff.
inline uint32_t f16_to_f32(uint16_t a) { return uint32_t(detail::convert(detail::kF16, a, detail::kF32, Round::rn, kNoMods)); }
/// cvt.f64.f16: exact widening; NaN -> canonical f64 NaN.
inline uint64_t f16_to_f64(uint16_t a) { return detail::convert(detail::kF16, a, detail::kF64, Round::rn, kNoMods); }
/// cvt.f32.bf16: exact widening; NaN (unspecified in PTX) -> 0x7fffffff.
inline uint32_t bf16_to_f32(uint16_t a) { return uint32_t(detail::convert(detail::kBF16, a, detail::kF32, Round::rn, kNoMods)); }
/// cvt.f64.bf16: exact widening; NaN -> canonical f64 NaN.
inline uint64_t bf16_to_f64(uint16_t a) { return detail::convert(detail::kBF16, a, detail::kF64, Round::rn, kNoMods); }
/// cvt{.rnd}{.sat}.f32.f64: f64 -> f32 (apply ftz_f32 to the result for .ftz).
inline uint32_t f64_to_f32(uint64_t a, Round r, Mods m = kNoMods) { return uint32_t(detail::convert(detail::kF64, a, detail::kF32, r, m)); }
/// cvt{.sat}.f64.f32: exact widening (apply ftz_f32 to the input for .ftz); NaN -> canonical f64 NaN.
inline uint64_t f32_to_f64(uint32_t a, Mods m = kNoMods) { return detail::convert(detail::kF32, a, detail::kF64, Round::rn, m); }

/// cvt.rna{.satfinite}.tf32.f32 / cvt.{rn,rz}{.satfinite}{.relu}.tf32.f32: tf32 bit pattern, low 13 bits zero.
inline uint32_t f32_to_tf32(uint32_t a, Round r, Mods m = kNoMods) { return uint32_t(detail::convert(detail::kF32, a, detail::kTF32, r, m)) << 13; }

/// cvt.rn.f16x2.f32 d, a, b (and .bf16x2): a goes to the upper half, b to the lower half.
inline uint32_t f32x2_to_f16x2(uint32_t a, uint32_t b, Round r, Mods m = kNoMods) { return (uint32_t(f32_to_f16(a, r, m)) << 16) | f32_to_f16(b, r, m); }
/// cvt.rn.bf16x2.f32 d, a, b: a goes to the upper half, b to the lower half.
inline uint32_t f32x2_to_bf16x2(uint32_t a, uint32_t b, Round r, Mods m = kNoMods) { return (uint32_t(f32_to_bf16(a, r, m)) << 16) | f32_to_bf16(b, r, m); }

// ---- fp8. PTX makes .rn and .satfinite mandatory when converting to fp8, so they are implied. ----

/// f32 -> e4m3 (bias 7, max 448, no inf): rn, satfinite (+-inf/overflow -> +-448), NaN -> 0x7f.
inline uint8_t f32_to_e4m3(uint32_t a, Mods m = kNoMods) { return uint8_t(detail::convert(detail::kF32, a, detail::kE4M3, Round::rn, m | kSatFinite)); }
/// f32 -> e5m2 (bias 15, max 57344): rn, satfinite (+-inf/overflow -> +-57344), NaN -> 0x7f.
inline uint8_t f32_to_e5m2(uint32_t a, Mods m = kNoMods) { return uint8_t(detail::convert(detail::kF32, a, detail::kE5M2, Round::rn, m | kSatFinite)); }
/// f16 -> e4m3, rn, satfinite.
inline uint8_t f16_to_e4m3(uint16_t a, Mods m = kNoMods) { return uint8_t(detail::convert(detail::kF16, a, detail::kE4M3, Round::rn, m | kSatFinite)); }
/// f16 -> e5m2, rn, satfinite.
inline uint8_t f16_to_e5m2(uint16_t a, Mods m = kNoMods) { return uint8_t(detail::convert(detail::kF16, a, detail::kE5M2, Round::rn, m | kSatFinite)); }
/// bf16 -> e4m3, rn, satfinite (cvt ... .e4m3x2.bf16x2, sm_100f+).
inline uint8_t bf16_to_e4m3(uint16_t a, Mods m = kNoMods) { return uint8_t(detail::convert(detail::kBF16, a, detail::kE4M3, Round::rn, m | kSatFinite)); }
/// bf16 -> e5m2, rn, satfinite.
inline uint8_t bf16_to_e5m2(uint16_t a, Mods m = kNoMods) { return uint8_t(detail::convert(detail::kBF16, a, detail::kE5M2, Round::rn, m | kSatFinite)); }
/// e4m3 -> f16: exact (every e4m3 value is an f16 value); NaN -> 0x7fff.
inline uint16_t e4m3_to_f16(uint8_t a, Mods m = kNoMods) { return uint16_t(detail::convert(detail::kE4M3, a, detail::kF16, Round::rn, m)); }
/// e5m2 -> f16: exact (e5m2 is the top byte of an f16); NaN -> 0x7fff.
inline uint16_t e5m2_to_f16(uint8_t a, Mods m = kNoMods) { return uint16_t(detail::convert(detail::kE5M2, a, detail::kF16, Round::rn, m)); }

/// cvt.rn.satfinite{.relu}.e4m3x2.f32 d, a, b: a -> d[15:8], b -> d[7:0].
inline uint16_t f32x2_to_e4m3x2(uint32_t a, uint32_t b, Mods m = kNoMods) { return uint16_t((f32_to_e4m3(a, m) << 8) | f32_to_e4m3(b, m)); }
/// cvt.rn.satfinite{.relu}.e5m2x2.f32 d, a, b: a -> d[15:8], b -> d[7:0].
inline uint16_t f32x2_to_e5m2x2(uint32_t a, uint32_t b, Mods m = kNoMods) { return uint16_t((f32_to_e5m2(a, m) << 8) | f32_to_e5m2(b, m)); }
/// cvt.rn.satfinite{.relu}.e4m3x2.f16x2 d, a: a[31:16] -> d[15:8], a[15:0] -> d[7:0].
inline uint16_t f16x2_to_e4m3x2(uint32_t a, Mods m = kNoMods) { return uint16_t((f16_to_e4m3(uint16_t(a >> 16), m) << 8) | f16_to_e4m3(uint16_t(a), m)); }
/// cvt.rn.satfinite{.relu}.e5m2x2.f16x2 d, a: a[31:16] -> d[15:8], a[15:0] -> d[7:0].
inline uint16_t f16x2_to_e5m2x2(uint32_t a, Mods m = kNoMods) { return uint16_t((f16_to_e5m2(uint16_t(a >> 16), m) << 8) | f16_to_e5m2(uint16_t(a), m)); }
/// cvt.rn{.relu}.f16x2.e4m3x2 d, a: a[15:8] -> d[31:16], a[7:0] -> d[15:0].
inline uint32_t e4m3x2_to_f16x2(uint16_t a, Mods m = kNoMods) { return (uint32_t(e4m3_to_f16(uint8_t(a >> 8), m)) << 16) | e4m3_to_f16(uint8_t(a), m); }
/// cvt.rn{.relu}.f16x2.e5m2x2 d, a: a[15:8] -> d[31:16], a[7:0] -> d[15:0].
inline uint32_t e5m2x2_to_f16x2(uint16_t a, Mods m = kNoMods) { return (uint32_t(e5m2_to_f16(uint8_t(a >> 8), m)) << 16) | e5m2_to_f16(uint8_t(a), m); }

// =============================================================================================
// Float <-> integer (cvt with .rni/.rzi/.rmi/.rpi = Round::rn/rz/rm/rp; fp rounding for int->fp).
// =============================================================================================

/// cvt.{irnd}.{s8..s64,u8..u64}.f32: round, then clamp; NaN -> 0 (64-bit dst: 1<<63). Apply ftz_f32 first for .ftz.
template <class I> I f32_to_int(uint32_t a, Round r) { return detail::to_int<I>(detail::kF32, a, r, detail::nan_int_result<I>(false)); }
/// cvt.{irnd}.{s8..s64,u8..u64}.f64: round, then clamp; NaN -> 1 << (width-1) per the PTX ISA.
template <class I> I f64_to_int(uint64_t a, Round r) { return detail::to_int<I>(detail::kF64, a, r, detail::nan_int_result<I>(true)); }
/// cvt.{irnd}.{int}.f16: as f32_to_int (f16 is not .f64).
template <class I> I f16_to_int(uint16_t a, Round r) { return detail::to_int<I>(detail::kF16, a, r, detail::nan_int_result<I>(false)); }
/// cvt.{irnd}.{int}.bf16: as f32_to_int.
template <class I> I bf16_to_int(uint16_t a, Round r) { return detail::to_int<I>(detail::kBF16, a, r, detail::nan_int_result<I>(false)); }

/// cvt.{frnd}.f16.{int}: any integer type -> f16 (overflow -> inf in rn, as IEEE).
template <class I> uint16_t int_to_f16(I v, Round r, Mods m = kNoMods) { return uint16_t(detail::from_int(detail::kF16, v, r, m)); }
/// cvt.{frnd}.bf16.{int}: any integer type -> bf16.
template <class I> uint16_t int_to_bf16(I v, Round r, Mods m = kNoMods) { return uint16_t(detail::from_int(detail::kBF16, v, r, m)); }
/// cvt.{frnd}.f32.{int}: any integer type -> f32.
template <class I> uint32_t int_to_f32(I v, Round r, Mods m = kNoMods) { return uint32_t(detail::from_int(detail::kF32, v, r, m)); }
/// cvt.{frnd}.f64.{int}: any integer type -> f64.
template <class I> uint64_t int_to_f64(I v, Round r, Mods m = kNoMods) { return detail::from_int(detail::kF64, v, r, m); }

/// cvt.{irnd}.f32.f32: round to an integral value kept in f32 (-0.3 rni -> -0); NaN -> canonical.
inline uint32_t round_int_f32(uint32_t a, Round r) { return uint32_t(detail::round_integral(detail::kF32, a, r)); }
/// cvt.{irnd}.f64.f64: round to an integral value kept in f64.
inline uint64_t round_int_f64(uint64_t a, Round r) { return detail::round_integral(detail::kF64, a, r); }
/// cvt.{irnd}.f16.f16: round to an integral value kept in f16.
inline uint16_t round_int_f16(uint16_t a, Round r) { return uint16_t(detail::round_integral(detail::kF16, a, r)); }
/// cvt.{irnd}.bf16.bf16: round to an integral value kept in bf16.
inline uint16_t round_int_bf16(uint16_t a, Round r) { return uint16_t(detail::round_integral(detail::kBF16, a, r)); }

// =============================================================================================
// .ftz and .sat helpers.
// =============================================================================================

/// True for a nonzero f32 with a zero exponent field.
inline bool is_subnormal_f32(uint32_t a) { return (a & 0x7F800000u) == 0 && (a & 0x007FFFFFu) != 0; }
/// .ftz: flush an f32 subnormal (input or result) to zero of the same sign; others unchanged.
inline uint32_t ftz_f32(uint32_t a) { return is_subnormal_f32(a) ? (a & 0x80000000u) : a; }
/// .ftz for f16 instructions (add.ftz.f16 etc.): flush an f16 subnormal to zero of the same sign.
inline uint16_t ftz_f16(uint16_t a) { return ((a & 0x7C00) == 0 && (a & 0x03FF) != 0) ? uint16_t(a & 0x8000) : a; }
/// .sat on an f32 result: clamp to [+0, 1]; NaN -> +0.
inline uint32_t sat_f32(uint32_t a) { return uint32_t(detail::sat_core(detail::kF32, a)); }
/// .sat on an f64 result: clamp to [+0, 1]; NaN -> +0.
inline uint64_t sat_f64(uint64_t a) { return detail::sat_core(detail::kF64, a); }
/// .sat on an f16 result: clamp to [+0, 1]; NaN -> +0.
inline uint16_t sat_f16(uint16_t a) { return uint16_t(detail::sat_core(detail::kF16, a)); }

// =============================================================================================
// Arithmetic with a rounding mode, exact: computed from the exact product/sum, rounded once.
// =============================================================================================

/// add{.rnd}.f32 (compose with ftz_f32 / sat_f32 for .ftz / .sat).
inline uint32_t add_f32(uint32_t a, uint32_t b, Round r = Round::rn) { return uint32_t(detail::add_core(detail::kF32, a, b, r)); }
/// sub{.rnd}.f32: a - b.
inline uint32_t sub_f32(uint32_t a, uint32_t b, Round r = Round::rn) { return add_f32(a, b ^ 0x80000000u, r); }
/// mul{.rnd}.f32.
inline uint32_t mul_f32(uint32_t a, uint32_t b, Round r = Round::rn) { return uint32_t(detail::mul_core(detail::kF32, a, b, r)); }
/// fma{.rnd}.f32: a * b + c with a single rounding.
inline uint32_t fma_f32(uint32_t a, uint32_t b, uint32_t c, Round r = Round::rn) { return uint32_t(detail::fma_core(detail::kF32, a, b, c, r)); }
/// add{.rnd}.f64.
inline uint64_t add_f64(uint64_t a, uint64_t b, Round r = Round::rn) { return detail::add_core(detail::kF64, a, b, r); }
/// sub{.rnd}.f64: a - b.
inline uint64_t sub_f64(uint64_t a, uint64_t b, Round r = Round::rn) { return add_f64(a, b ^ 0x8000000000000000ull, r); }
/// mul{.rnd}.f64.
inline uint64_t mul_f64(uint64_t a, uint64_t b, Round r = Round::rn) { return detail::mul_core(detail::kF64, a, b, r); }
/// fma{.rnd}.f64: a * b + c with a single rounding.
inline uint64_t fma_f64(uint64_t a, uint64_t b, uint64_t c, Round r = Round::rn) { return detail::fma_core(detail::kF64, a, b, c, r); }

// ---- f16 (PTX: .rn only). add/sub/mul are computed in f64, where the result is EXACT, and then
// rounded once to f16:
//  * every f16 is an integer multiple of 2^-24 below 2^16, so a sum or difference is a multiple
//    of 2^-24 below 2^17: at most 41 significant bits, fewer than f64's 53;
//  * a product of two 11-bit significands has at most 22 bits, with exponent in [2^-48, 2^32],
//    well inside f64's normal range.
// An exact intermediate followed by one rounding is, by definition, the correctly rounded result.
// (Exactness also makes the host's rounding mode irrelevant, except for the sign of an exact-zero
// sum, which is +0 in the default mode this header never changes.)
// fma is different: a*b can be a multiple of 2^-48 while c is as large as 2^15, so a*b + c can
// need 64 significant bits; f64 would round it first (double rounding), so fma uses the exact
// integer core instead.

/// add.rn.f16.
inline uint16_t add_f16(uint16_t a, uint16_t b) {
  const double s = f64_from_bits(f16_to_f64(a)) + f64_from_bits(f16_to_f64(b));  // exact
  return f64_to_f16(f64_bits(s), Round::rn);
}
/// sub.rn.f16: a - b.
inline uint16_t sub_f16(uint16_t a, uint16_t b) {
  const double s = f64_from_bits(f16_to_f64(a)) - f64_from_bits(f16_to_f64(b));  // exact
  return f64_to_f16(f64_bits(s), Round::rn);
}
/// mul.rn.f16.
inline uint16_t mul_f16(uint16_t a, uint16_t b) {
  const double p = f64_from_bits(f16_to_f64(a)) * f64_from_bits(f16_to_f64(b));  // exact
  return f64_to_f16(f64_bits(p), Round::rn);
}
/// fma.rn.f16: a * b + c, exact integer core, one rounding.
inline uint16_t fma_f16(uint16_t a, uint16_t b, uint16_t c) { return uint16_t(detail::fma_core(detail::kF16, a, b, c, Round::rn)); }
/// add.rn.bf16 (exact core, one rounding).
inline uint16_t add_bf16(uint16_t a, uint16_t b) { return uint16_t(detail::add_core(detail::kBF16, a, b, Round::rn)); }
/// sub.rn.bf16: a - b.
inline uint16_t sub_bf16(uint16_t a, uint16_t b) { return add_bf16(a, uint16_t(b ^ 0x8000u)); }
/// mul.rn.bf16.
inline uint16_t mul_bf16(uint16_t a, uint16_t b) { return uint16_t(detail::mul_core(detail::kBF16, a, b, Round::rn)); }
/// fma.rn.bf16.
inline uint16_t fma_bf16(uint16_t a, uint16_t b, uint16_t c) { return uint16_t(detail::fma_core(detail::kBF16, a, b, c, Round::rn)); }

// =============================================================================================
// min / max (PTX NaN rules; nan_mode = the .NaN modifier). Apply ftz_f32 around for .ftz.
// =============================================================================================

/// min{.NaN}.f32.
inline uint32_t min_f32(uint32_t a, uint32_t b, bool nan_mode = false) { return uint32_t(detail::minmax_core(detail::kF32, a, b, false, nan_mode)); }
/// max{.NaN}.f32.
inline uint32_t max_f32(uint32_t a, uint32_t b, bool nan_mode = false) { return uint32_t(detail::minmax_core(detail::kF32, a, b, true, nan_mode)); }
/// min.f64 (PTX has no .NaN for f64; the flag is offered for symmetry).
inline uint64_t min_f64(uint64_t a, uint64_t b, bool nan_mode = false) { return detail::minmax_core(detail::kF64, a, b, false, nan_mode); }
/// max.f64.
inline uint64_t max_f64(uint64_t a, uint64_t b, bool nan_mode = false) { return detail::minmax_core(detail::kF64, a, b, true, nan_mode); }
/// min{.NaN}.f16.
inline uint16_t min_f16(uint16_t a, uint16_t b, bool nan_mode = false) { return uint16_t(detail::minmax_core(detail::kF16, a, b, false, nan_mode)); }
/// max{.NaN}.f16.
inline uint16_t max_f16(uint16_t a, uint16_t b, bool nan_mode = false) { return uint16_t(detail::minmax_core(detail::kF16, a, b, true, nan_mode)); }
/// min{.NaN}.bf16.
inline uint16_t min_bf16(uint16_t a, uint16_t b, bool nan_mode = false) { return uint16_t(detail::minmax_core(detail::kBF16, a, b, false, nan_mode)); }
/// max{.NaN}.bf16.
inline uint16_t max_bf16(uint16_t a, uint16_t b, bool nan_mode = false) { return uint16_t(detail::minmax_core(detail::kBF16, a, b, true, nan_mode)); }

}  // namespace emu::fp
