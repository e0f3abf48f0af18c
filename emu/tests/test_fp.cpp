// Tests for emu/src/exec/fp.h.
//
// Hand-written expectations are bit patterns derived from the format definitions; each comment
// says how. Notation: f16 = 1.5.10 bias 15, bf16 = 1.8.7 bias 127, f32 = 1.8.23 bias 127,
// tf32 = 1.8.10 (low 13 bits of the .b32 zero), e4m3 = 1.4.3 bias 7 (no inf, S.1111.111 = NaN),
// e5m2 = 1.5.2 bias 15. "tie" means the value is exactly halfway between two neighbours.
//
// Randomised tests never compare the library with itself. Their references are:
//  * exact integer arithmetic: every value is scaled by 2^53 into a 128-bit integer and rounded
//    with a table of all representable values of the target format (computed from the format
//    definition), by explicit nearest / tie / direction logic (f32->f16, int->f16, f16 ops, fp8);
//  * the host FPU under fesetround (SSE honours the rounding mode) for f32/f64 arithmetic,
//    f64->f32 and int->f32/f64 conversions, saved and restored around every single operation;
//  * libm rint-family functions and independent bit tricks for bf16/tf32.

#include "exec/fp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using namespace emu::fp;
using emu::fp::u128;

namespace {

constexpr Round kModes[] = {Round::rn, Round::rz, Round::rm, Round::rp};
constexpr Round kAllModes[] = {Round::rn, Round::rz, Round::rm, Round::rp, Round::rna};

uint32_t B(float f) { return f32_bits(f); }
uint64_t D(double d) { return f64_bits(d); }

bool is_nan32(uint32_t x) { return (x & 0x7F800000u) == 0x7F800000u && (x & 0x7FFFFFu); }
bool is_nan64(uint64_t x) { return (x & 0x7FF0000000000000ull) == 0x7FF0000000000000ull && (x & 0xFFFFFFFFFFFFFull); }
bool is_nan16(uint16_t x) { return (x & 0x7C00) == 0x7C00 && (x & 0x3FF); }

// ---- host FPU reference with a temporarily changed rounding mode -----------------------------
int host_mode(Round r) {
  switch (r) {
    case Round::rz: return FE_TOWARDZERO;
    case Round::rm: return FE_DOWNWARD;
    case Round::rp: return FE_UPWARD;
    default: return FE_TONEAREST;
  }
}
// Operands go through volatiles so the operation is neither constant-folded nor moved across
// the fesetround calls; the old mode is restored before returning.
struct ScopedRound {
  int old;
  explicit ScopedRound(Round r) : old(std::fegetround()) { std::fesetround(host_mode(r)); }
  ~ScopedRound() { std::fesetround(old); }
};
template <class F>
F host_add(F a, F b, Round r) { volatile F x = a, y = b; volatile F z; { ScopedRound s(r); z = x + y; } return z; }
template <class F>
F host_sub(F a, F b, Round r) { volatile F x = a, y = b; volatile F z; { ScopedRound s(r); z = x - y; } return z; }
template <class F>
F host_mul(F a, F b, Round r) { volatile F x = a, y = b; volatile F z; { ScopedRound s(r); z = x * y; } return z; }
template <class F>
F host_fma(F a, F b, F c, Round r) { volatile F x = a, y = b, w = c; volatile F z; { ScopedRound s(r); z = std::fma(x, y, w); } return z; }
float host_d2f(double a, Round r) { volatile double x = a; volatile float z; { ScopedRound s(r); z = float(x); } return z; }
template <class I, class F>
F host_i2f(I v, Round r) { volatile I x = v; volatile F z; { ScopedRound s(r); z = F(x); } return z; }
// uint64 -> F using only the signed conversion (cvtsi2ss/sd honours the mode; compilers' own
// unsigned lowerings may not: clang's gives -0.0 for 0 under FE_DOWNWARD). For u >= 2^63 convert
// u/2 with the dropped bit OR-ed in (an odd integer next to u/2, which rounds like u/2 because
// every rounding boundary at that magnitude is an even integer), then double it exactly.
template <class F>
F host_u2f(uint64_t u, Round r) {
  if (u >> 63 == 0) return host_i2f<int64_t, F>(int64_t(u), r);
  return F(2) * host_i2f<int64_t, F>(int64_t((u >> 1) | (u & 1)), r);
}

// ---- exact reference: a small format's values as integers scaled by 2^53 ---------------------
struct SmallFormat {
  int exp_bits, man_bits, bias;
  uint32_t n_finite;     // patterns 0 .. n_finite-1 are the non-negative finite values
  uint32_t inf_bits;     // what an overflow becomes without satfinite (unused for fp8)
  std::vector<u128> v;   // v[p] = value(p) * 2^53, p < n_finite; v[n_finite] = value of the next step
};

// value(p) straight from the definition: normal (2^M + F) * 2^(E - bias - M), subnormal
// F * 2^(1 - bias - M). Pattern n_finite is evaluated by the normal formula as "the next value
// above max" (2^16 for f16, 480 for e4m3, 65536 for e5m2); it is where overflow starts.
SmallFormat make_format(int exp_bits, int man_bits, uint32_t n_finite, uint32_t inf_bits) {
  SmallFormat f{exp_bits, man_bits, (1 << (exp_bits - 1)) - 1, n_finite, inf_bits, {}};
  for (uint32_t p = 0; p <= n_finite; ++p) {
    const int E = int(p >> man_bits);
    const uint64_t F = p & ((1u << man_bits) - 1);
    const int shift = (E ? E : 1) - f.bias - man_bits + 53;
    const uint64_t sig = E ? ((uint64_t{1} << man_bits) + F) : F;
    f.v.push_back(u128{sig} << shift);
  }
  return f;
}
const SmallFormat& F16() { static SmallFormat f = make_format(5, 10, 0x7C00, 0x7C00); return f; }
const SmallFormat& E4M3() { static SmallFormat f = make_format(4, 3, 0x7F, 0); return f; }
const SmallFormat& E5M2() { static SmallFormat f = make_format(5, 2, 0x7C, 0); return f; }

// Round the exact value (neg ? -1 : 1) * X / 2^53 to format f. X == 1 also stands for any value
// in (0, 2^-53): all such values round like 2^-53 does (they share the interval (0, half of the
// smallest subnormal)). Anything >= v[n_finite] is treated as lying past the overflow point.
uint32_t ref_round(const SmallFormat& f, bool neg, u128 X, Round r, bool satfinite) {
  const uint32_t n = f.n_finite;
  const uint32_t sign = 1u << (f.exp_bits + f.man_bits);
  uint32_t lo, hi, pick;
  bool exact = false;
  if (X >= f.v[n]) {
    lo = n - 1; hi = n;  // past (or at) the first unrepresentable step: nearest is "overflow"
    if (r == Round::rn || r == Round::rna) pick = hi;
    else if (r == Round::rz) pick = lo;
    else pick = ((r == Round::rp) != neg) ? hi : lo;
  } else {
    lo = uint32_t(std::upper_bound(f.v.begin(), f.v.begin() + n, X) - f.v.begin()) - 1;
    hi = lo + 1;
    exact = f.v[lo] == X;
    if (exact) pick = lo;
    else if (r == Round::rz) pick = lo;
    else if (r == Round::rp) pick = neg ? lo : hi;
    else if (r == Round::rm) pick = neg ? hi : lo;
    else {
      const u128 dlo = X - f.v[lo], dhi = f.v[hi] - X;
      if (dlo < dhi) pick = lo;
      else if (dhi < dlo) pick = hi;
      else pick = (r == Round::rna) ? hi : ((lo % 2 == 0) ? lo : hi);  // tie
    }
  }
  uint32_t bits = pick;
  if (pick == n) bits = satfinite ? n - 1 : f.inf_bits;
  return (neg ? sign : 0) | bits;
}

// f32 pattern -> (neg, value * 2^53) for ref_round. Decoded from the binary32 definition.
void f32_scaled(uint32_t bits, bool& neg, u128& X) {
  neg = bits >> 31;
  const int E = int((bits >> 23) & 0xFF);
  const uint64_t F = bits & 0x7FFFFF;
  const uint64_t m = E ? (F | 0x800000) : F;
  const int e = (E ? E : 1) - 150;  // value = m * 2^e
  if (m == 0) { X = 0; return; }
  int msb = 63 - __builtin_clzll(m);
  const int top = msb + e;            // value in [2^top, 2^(top+1))
  if (top < -30) X = 1;               // below 2^-30: rounds like any tiny value (see ref_round)
  else if (top > 70) X = u128{1} << 120;  // far above every small format's range
  else X = u128{m} << (e + 53);       // e >= -53 here, so this is exact
}

// Deterministic random sources.
std::mt19937_64& rng() { static std::mt19937_64 g(0x5EEDF00Dull); return g; }

// A random f32 pattern biased towards interesting places: exponents in [lo, hi], sparse or
// dense mantissas, plus zeros/subnormals/specials.
uint32_t rand_f32(int elo, int ehi) {
  auto& g = rng();
  const uint32_t sign = uint32_t(g() & 1) << 31;
  switch (g() % 10) {
    case 0: return uint32_t(g());  // anything
    case 1: return sign | uint32_t(g() & 0x7FFFFF);  // subnormal or zero
    case 2: {
      static const uint32_t sp[] = {0, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7F7FFFFFu, 0x00800000u,
                                    0x00000001u, 0x3F800000u, 0x7FC00000u, 0x7F800001u};
      return sp[g() % 10];
    }
    default: {
      const int E = elo + int(g() % uint64_t(ehi - elo + 1));
      uint32_t F = uint32_t(g()) & 0x7FFFFF;
      if (g() % 3 == 0) F &= uint32_t(g()) & uint32_t(g()) & 0x7FFFFF;  // few bits: more exact/tie cases
      if (g() % 4 == 0) F &= ~((1u << (g() % 23)) - 1);                 // trailing zeros
      return sign | (uint32_t(E) << 23) | F;
    }
  }
}

uint64_t rand_f64(int elo, int ehi) {
  auto& g = rng();
  const uint64_t sign = (g() & 1) << 63;
  switch (g() % 10) {
    case 0: return g();
    case 1: return sign | (g() & 0xFFFFFFFFFFFFFull);
    case 2: {
      static const uint64_t sp[] = {0, 0x8000000000000000ull, 0x7FF0000000000000ull, 0xFFF0000000000000ull,
                                    0x7FEFFFFFFFFFFFFFull, 0x0010000000000000ull, 1, 0x3FF0000000000000ull,
                                    0x7FF8000000000000ull};
      return sp[g() % 9];
    }
    default: {
      const int E = elo + int(g() % uint64_t(ehi - elo + 1));
      uint64_t F = g() & 0xFFFFFFFFFFFFFull;
      if (g() % 3 == 0) F &= g() & g();
      if (g() % 4 == 0) F &= ~((uint64_t{1} << (g() % 52)) - 1);
      return sign | (uint64_t(E) << 52) | F;
    }
  }
}

// Host-result bits with NaN mapped to the canonical pattern (the host keeps payloads; we do not).
uint32_t canon32(float f) { return std::isnan(f) ? kNaNF32 : B(f); }
uint64_t canon64(double d) { return std::isnan(d) ? kNaNF64 : D(d); }

}  // namespace

// =============================================================================================
// f32 -> f16
// =============================================================================================

TEST(F32ToF16, OverflowBoundaryDependsOnMode) {
  // 65504 = (2 - 2^-10) * 2^15 = f16 0 11110 1111111111 = 0x7BFF, the largest finite f16.
  // As f32: exponent 127+15 = 0x8E, fraction 1111111111 then 13 zeros = 0x7FE000 -> 0x477FE000.
  ASSERT_EQ(B(65504.0f), 0x477FE000u);
  for (Round r : kAllModes) EXPECT_EQ(f32_to_f16(0x477FE000u, r), 0x7BFF);
  // 65519 is below the midpoint 65520 between 65504 and 2^16: rn keeps max; rp goes past max.
  EXPECT_EQ(f32_to_f16(B(65519.0f), Round::rn), 0x7BFF);
  EXPECT_EQ(f32_to_f16(B(65519.0f), Round::rp), 0x7C00);
  // 65520 (f32 0x477FF000) is the tie between 65504 (odd fraction 0x3FF) and 2^16 (even): rn
  // picks 2^16, which overflows to inf 0x7C00. rz and rm stay at max 0x7BFF; rp and rna go to inf.
  ASSERT_EQ(B(65520.0f), 0x477FF000u);
  EXPECT_EQ(f32_to_f16(0x477FF000u, Round::rn), 0x7C00);
  EXPECT_EQ(f32_to_f16(0x477FF000u, Round::rz), 0x7BFF);
  EXPECT_EQ(f32_to_f16(0x477FF000u, Round::rm), 0x7BFF);
  EXPECT_EQ(f32_to_f16(0x477FF000u, Round::rp), 0x7C00);
  EXPECT_EQ(f32_to_f16(0x477FF000u, Round::rna), 0x7C00);
  // Negative side mirrors: -inf = 0xFC00, -max = 0xFBFF; rm rounds away, rp toward zero.
  EXPECT_EQ(f32_to_f16(0xC77FF000u, Round::rn), 0xFC00);
  EXPECT_EQ(f32_to_f16(0xC77FF000u, Round::rz), 0xFBFF);
  EXPECT_EQ(f32_to_f16(0xC77FF000u, Round::rm), 0xFC00);
  EXPECT_EQ(f32_to_f16(0xC77FF000u, Round::rp), 0xFBFF);
  // .satfinite turns every overflow and inf into +-max.
  EXPECT_EQ(f32_to_f16(0x477FF000u, Round::rn, kSatFinite), 0x7BFF);
  EXPECT_EQ(f32_to_f16(B(1e10f), Round::rn, kSatFinite), 0x7BFF);
  EXPECT_EQ(f32_to_f16(0x7F800000u, Round::rn, kSatFinite), 0x7BFF);
  EXPECT_EQ(f32_to_f16(0xFF800000u, Round::rn, kSatFinite), 0xFBFF);
  // Without it, inf converts to inf in every mode (inf is exact, no rounding happens).
  for (Round r : kModes) EXPECT_EQ(f32_to_f16(0x7F800000u, r), 0x7C00);
  EXPECT_EQ(f32_to_f16(B(1e10f), Round::rz), 0x7BFF);
}

TEST(F32ToF16, SubnormalsAndTiesAroundTheSmallest) {
  // Smallest f16 subnormal: 2^-24 = 0x0001 (exponent field 0, fraction 1, weight 2^(1-15-10)).
  // As f32: exponent 127-24 = 103 = 0x67 -> 0x33800000.
  ASSERT_EQ(B(0x1p-24f), 0x33800000u);
  for (Round r : kAllModes) EXPECT_EQ(f32_to_f16(0x33800000u, r), 0x0001);
  // 2^-25 (0x33000000) is the tie between 0 and 2^-24: rn -> 0 (even), rna/rp -> 0x0001.
  EXPECT_EQ(f32_to_f16(0x33000000u, Round::rn), 0x0000);
  EXPECT_EQ(f32_to_f16(0x33000000u, Round::rna), 0x0001);
  EXPECT_EQ(f32_to_f16(0x33000000u, Round::rz), 0x0000);
  EXPECT_EQ(f32_to_f16(0x33000000u, Round::rm), 0x0000);
  EXPECT_EQ(f32_to_f16(0x33000000u, Round::rp), 0x0001);
  // -2^-25: the zero keeps its sign (0x8000); rm rounds away to -2^-24 = 0x8001.
  EXPECT_EQ(f32_to_f16(0xB3000000u, Round::rn), 0x8000);
  EXPECT_EQ(f32_to_f16(0xB3000000u, Round::rm), 0x8001);
  EXPECT_EQ(f32_to_f16(0xB3000000u, Round::rp), 0x8000);
  // One f32 ulp above the tie (0x33000001) is nearer to 2^-24.
  EXPECT_EQ(f32_to_f16(0x33000001u, Round::rn), 0x0001);
  // One f32 ulp below the tie (0x32FFFFFF) is nearer to 0.
  EXPECT_EQ(f32_to_f16(0x32FFFFFFu, Round::rn), 0x0000);
  // 1.5 * 2^-24 (f32 0x33C00000) ties 0x0001 (odd) and 0x0002 (even): rn -> 0x0002.
  EXPECT_EQ(f32_to_f16(0x33C00000u, Round::rn), 0x0002);
  EXPECT_EQ(f32_to_f16(0x33C00000u, Round::rz), 0x0001);
  // 2.5 * 2^-24 = 1.25 * 2^-23 (f32 exp 104 = 0x68, fraction .01 -> 0x34200000) ties 2 and 3 -> 2.
  EXPECT_EQ(f32_to_f16(0x34200000u, Round::rn), 0x0002);
  // 2^-14 - 2^-25 = 2047 * 2^-25 = 1.1111111111b * 2^-15 (f32 0x387FE000) ties the largest
  // subnormal 0x03FF (odd) and the smallest normal 2^-14 = 0x0400 (even): rn -> 0x0400.
  EXPECT_EQ(f32_to_f16(0x387FE000u, Round::rn), 0x0400);
  EXPECT_EQ(f32_to_f16(0x387FE000u, Round::rz), 0x03FF);
  // Tiny values: rn/rz -> 0, rp -> smallest subnormal. The smallest f32 subnormal as well.
  EXPECT_EQ(f32_to_f16(B(1e-10f), Round::rn), 0x0000);
  EXPECT_EQ(f32_to_f16(B(1e-10f), Round::rp), 0x0001);
  EXPECT_EQ(f32_to_f16(0x00000001u, Round::rn), 0x0000);
  EXPECT_EQ(f32_to_f16(0x00000001u, Round::rp), 0x0001);
  EXPECT_EQ(f32_to_f16(0x80000001u, Round::rm), 0x8001);
}

TEST(F32ToF16, NormalTiesSignsNaNAndModifiers) {
  // 1 + 2^-11 (f32 0x3F801000) ties 1.0 = 0x3C00 (even) and 1 + 2^-10 = 0x3C01.
  EXPECT_EQ(f32_to_f16(0x3F801000u, Round::rn), 0x3C00);
  EXPECT_EQ(f32_to_f16(0x3F801000u, Round::rna), 0x3C01);
  EXPECT_EQ(f32_to_f16(0x3F801000u, Round::rp), 0x3C01);
  // 1 + 3*2^-11 (0x3F803000) ties 0x3C01 (odd) and 0x3C02 (even) -> 0x3C02.
  EXPECT_EQ(f32_to_f16(0x3F803000u, Round::rn), 0x3C02);
  // Signed zeros survive.
  EXPECT_EQ(f32_to_f16(0x00000000u, Round::rn), 0x0000);
  EXPECT_EQ(f32_to_f16(0x80000000u, Round::rn), 0x8000);
  // NaNs (quiet, signalling, negative) all become the canonical 0x7FFF, also with satfinite/relu.
  for (uint32_t nan : {0x7FC00000u, 0xFFC00001u, 0x7F800001u}) {
    EXPECT_EQ(f32_to_f16(nan, Round::rn), kNaNF16);
    EXPECT_EQ(f32_to_f16(nan, Round::rz, kSatFinite), kNaNF16);
    EXPECT_EQ(f32_to_f16(nan, Round::rn, kRelu), kNaNF16);
    EXPECT_EQ(f32_to_f16(nan, Round::rn, kSat), 0x0000);  // .sat flushes NaN to +0
  }
  // .sat clamps to [0, 1]: 2 -> 1.0 (0x3C00); negatives incl. -0 -> +0; 0.5 = 0x3800 stays;
  // inf -> 1.0; 1 + 2^-11 with rp would round to 0x3C01 but is clamped to 1.0.
  EXPECT_EQ(f32_to_f16(B(2.0f), Round::rn, kSat), 0x3C00);
  EXPECT_EQ(f32_to_f16(B(-2.0f), Round::rn, kSat), 0x0000);
  EXPECT_EQ(f32_to_f16(0x80000000u, Round::rn, kSat), 0x0000);
  EXPECT_EQ(f32_to_f16(B(0.5f), Round::rn, kSat), 0x3800);
  EXPECT_EQ(f32_to_f16(0x7F800000u, Round::rn, kSat), 0x3C00);
  EXPECT_EQ(f32_to_f16(0x3F801000u, Round::rp, kSat), 0x3C00);
  // .relu: negative -> +0; 1.5 = 0 01111 1000000000 = 0x3E00 unchanged.
  EXPECT_EQ(f32_to_f16(B(-1.5f), Round::rn, kRelu), 0x0000);
  EXPECT_EQ(f32_to_f16(B(1.5f), Round::rn, kRelu), 0x3E00);
  // Pair packing: a -> upper half, b -> lower half.
  EXPECT_EQ(f32x2_to_f16x2(B(1.0f), B(1.5f), Round::rn), 0x3C003E00u);
}

TEST(F64ToF16, RoundsOnceWithoutDoubleRounding) {
  // x = 1 + 2^-11 + 2^-40 is just above the 1.0 / 1+2^-10 midpoint, so f16 rn is 0x3C01.
  // Going through f32 first would lose 2^-40 (below f32's half-ulp 2^-24), land exactly on the
  // tie and then pick the even 0x3C00: the direct conversion must not do that.
  const double x = 1.0 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(f64_to_f16(D(x), Round::rn), 0x3C01);
  EXPECT_EQ(f32_to_f16(f64_to_f32(D(x), Round::rn), Round::rn), 0x3C00);  // the double-rounded answer
  // 2^-25 + 2^-60: just above the 0 / 2^-24 tie -> 0x0001.
  EXPECT_EQ(f64_to_f16(D(0x1p-25 + 0x1p-60), Round::rn), 0x0001);
  EXPECT_EQ(f64_to_f16(D(65520.0), Round::rn), 0x7C00);
  EXPECT_EQ(f64_to_f16(D(65520.0), Round::rz), 0x7BFF);
  EXPECT_EQ(f64_to_f16(D(1e300), Round::rn, kSatFinite), 0x7BFF);
  EXPECT_EQ(f64_to_f16(D(-1e-300), Round::rm), 0x8001);
  EXPECT_EQ(f64_to_f16(0x7FF8000000000001ull, Round::rn), kNaNF16);
}

// Every f16 pattern: the exact widening matches the definition, and narrowing it back is the
// identity in every rounding mode (a representable value needs no rounding). NaNs -> canonical.
TEST(F16Exhaustive, RoundTripThroughF32AndF64) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t x = uint16_t(h);
    const uint32_t f = f16_to_f32(x);
    const uint64_t d = f16_to_f64(x);
    if (is_nan16(x)) {
      ASSERT_EQ(f, kNaNF32) << h;
      ASSERT_EQ(d, kNaNF64) << h;
      ASSERT_EQ(f32_to_f16(f, Round::rn), kNaNF16) << h;
      continue;
    }
    // Definition: E=0 -> F * 2^-24; E=31 -> inf; else (1024 + F) * 2^(E-25).
    const int E = (x >> 10) & 31, F = x & 1023;
    double v = E == 31 ? INFINITY : E == 0 ? std::ldexp(F, -24) : std::ldexp(1024 + F, E - 25);
    if (x & 0x8000) v = -v;
    ASSERT_EQ(f, B(float(v))) << h;  // float(v) is exact: f16 values are f32 values
    ASSERT_EQ(d, D(v)) << h;
    for (Round r : kAllModes) {
      ASSERT_EQ(f32_to_f16(f, r), x) << h;
      ASSERT_EQ(f64_to_f16(d, r), x) << h;
    }
  }
}

// f32 -> f16 in all five modes against the exact-integer reference, on random and on targeted
// (midpoint +- 1 ulp) inputs.
TEST(F32ToF16, MatchesExactReferenceOnLargeSample) {
  auto& g = rng();
  std::vector<uint32_t> inputs;
  for (int i = 0; i < 500000; ++i) inputs.push_back(rand_f32(90, 150));  // around the f16 range
  // Midpoints between neighbouring f16 values (12 significant bits: exact in f32), and the f32
  // values one ulp either side: the cases where a wrong tie rule or off-by-one would show.
  for (int i = 0; i < 150000; ++i) {
    const uint16_t p = uint16_t(g() % 0x7C00);  // finite non-negative; p + 1 may be inf (2^16)
    const double lo = std::ldexp(double(F16().v[p]), -53), hi = std::ldexp(double(F16().v[p + 1]), -53);
    const uint32_t mid = B(float((lo + hi) / 2)) | (g() & 1 ? 0x80000000u : 0);
    inputs.push_back(mid);
    inputs.push_back(mid + 1);
    if (mid & 0x7FFFFFFF) inputs.push_back(mid - 1);
  }
  for (uint32_t a : inputs) {
    if (is_nan32(a)) continue;
    bool neg;
    u128 X;
    f32_scaled(a, neg, X);
    const bool inf = (a & 0x7FFFFFFF) == 0x7F800000u;
    for (Round r : kAllModes) {
      for (bool sf : {false, true}) {
        uint32_t want = inf ? ((neg ? 0x8000u : 0u) | (sf ? 0x7BFFu : 0x7C00u))
                            : ref_round(F16(), neg, X, r, sf);
        ASSERT_EQ(f32_to_f16(a, r, sf ? kSatFinite : kNoMods), want)
            << std::hex << "a=0x" << a << " mode=" << int(r) << " satfinite=" << sf;
      }
    }
  }
}

// =============================================================================================
// bf16
// =============================================================================================

TEST(BF16, TiesToEvenDirectedOverflowNaN) {
  // bf16 is the top half of an f32. 1.0 = 0x3F80. 1 + 2^-8 (f32 0x3F808000) is the tie between
  // 0x3F80 (even) and 0x3F81.
  EXPECT_EQ(f32_to_bf16(0x3F808000u, Round::rn), 0x3F80);
  EXPECT_EQ(f32_to_bf16(0x3F808000u, Round::rna), 0x3F81);
  EXPECT_EQ(f32_to_bf16(0x3F808000u, Round::rz), 0x3F80);
  EXPECT_EQ(f32_to_bf16(0x3F808000u, Round::rp), 0x3F81);
  // 1 + 3*2^-8 (0x3F818000) ties 0x3F81 (odd) and 0x3F82 (even) -> 0x3F82.
  EXPECT_EQ(f32_to_bf16(0x3F818000u, Round::rn), 0x3F82);
  // Just above the tie -> up; a tail of all ones below the tie -> down.
  EXPECT_EQ(f32_to_bf16(0x3F808001u, Round::rn), 0x3F81);
  EXPECT_EQ(f32_to_bf16(0x3F807FFFu, Round::rn), 0x3F80);
  // Negative: rm goes away from zero, rp toward it.
  EXPECT_EQ(f32_to_bf16(0xBF808000u, Round::rn), 0xBF80);
  EXPECT_EQ(f32_to_bf16(0xBF800001u, Round::rm), 0xBF81);
  EXPECT_EQ(f32_to_bf16(0xBF800001u, Round::rp), 0xBF80);
  EXPECT_EQ(f32_to_bf16(0x3F800001u, Round::rp), 0x3F81);
  // FLT_MAX 0x7F7FFFFF: the discarded 0xFFFF is above half, rn carries into the exponent -> inf
  // 0x7F80; rz truncates to bf16 max 0x7F7F; satfinite clamps to 0x7F7F.
  EXPECT_EQ(f32_to_bf16(0x7F7FFFFFu, Round::rn), 0x7F80);
  EXPECT_EQ(f32_to_bf16(0x7F7FFFFFu, Round::rz), 0x7F7F);
  EXPECT_EQ(f32_to_bf16(0x7F7FFFFFu, Round::rn, kSatFinite), 0x7F7F);
  EXPECT_EQ(f32_to_bf16(0xFF800000u, Round::rn, kSatFinite), 0xFF7F);
  // bf16 subnormals: the smallest is 2^-133 (f32 0x00010000 -> 0x0001). f32 0x00008000 = 2^-134
  // is the tie with 0 -> 0; 0x00018000 ties 0x0001 and 0x0002 -> 0x0002.
  EXPECT_EQ(f32_to_bf16(0x00010000u, Round::rn), 0x0001);
  EXPECT_EQ(f32_to_bf16(0x00008000u, Round::rn), 0x0000);
  EXPECT_EQ(f32_to_bf16(0x00008000u, Round::rp), 0x0001);
  EXPECT_EQ(f32_to_bf16(0x00018000u, Round::rn), 0x0002);
  EXPECT_EQ(f32_to_bf16(0x7FC00000u, Round::rn), kNaNBF16);
  EXPECT_EQ(f32_to_bf16(0xFF800001u, Round::rn), kNaNBF16);
  EXPECT_EQ(f32_to_bf16(0x80000000u, Round::rn), 0x8000);
  // f64 -> bf16 rounds once: 1 + 2^-8 + 2^-40 is above the tie -> 0x3F81.
  EXPECT_EQ(f64_to_bf16(D(1.0 + 0x1p-8 + 0x1p-40), Round::rn), 0x3F81);
  EXPECT_EQ(f64_to_bf16(D(1.0 + 0x1p-8), Round::rn), 0x3F80);
  // Widening is a 16-bit shift; NaN -> canonical f32/f64 NaN.
  EXPECT_EQ(bf16_to_f32(0x3F81), 0x3F810000u);
  EXPECT_EQ(bf16_to_f32(0x0001), 0x00010000u);
  EXPECT_EQ(bf16_to_f32(0xFFC1), kNaNF32);
  EXPECT_EQ(bf16_to_f64(0x3F80), D(1.0));
  EXPECT_EQ(f32x2_to_bf16x2(B(1.0f), B(-2.0f), Round::rn), 0x3F80C000u);
}

TEST(BF16, F16InterconversionAndExhaustiveRoundTrip) {
  // f16 0x3C01 = 1 + 2^-10 needs 10 fraction bits; bf16 has 7: rz -> 1.0 (0x3F80), rp -> 0x3F81.
  EXPECT_EQ(f16_to_bf16(0x3C01, Round::rz), 0x3F80);
  EXPECT_EQ(f16_to_bf16(0x3C01, Round::rp), 0x3F81);
  // f16 subnormal 2^-24 is a normal bf16: exponent 127-24 = 103 -> 0x3380.
  EXPECT_EQ(f16_to_bf16(0x0001, Round::rn), 0x3380);
  // bf16 2^16 (0x4780) is beyond f16: rn -> inf, rz -> 0x7BFF.
  EXPECT_EQ(bf16_to_f16(0x4780, Round::rn), 0x7C00);
  EXPECT_EQ(bf16_to_f16(0x4780, Round::rz), 0x7BFF);
  for (uint32_t b = 0; b < 65536; ++b) {
    const uint16_t x = uint16_t(b);
    const uint32_t f = bf16_to_f32(x);
    const bool nan = (x & 0x7F80) == 0x7F80 && (x & 0x7F);
    if (nan) { ASSERT_EQ(f, kNaNF32); continue; }
    ASSERT_EQ(f, uint32_t(x) << 16) << b;
    for (Round r : kAllModes) ASSERT_EQ(f32_to_bf16(f, r), x) << b;
  }
}

// bf16 rounding of random f32 against classic integer bit tricks on the pattern (the 16
// discarded bits decide; a carry out of the fraction correctly bumps the exponent).
TEST(BF16, MatchesBitTrickReference) {
  for (int i = 0; i < 1000000; ++i) {
    const uint32_t a = rand_f32(0, 254);
    if (is_nan32(a) || (a & 0x7FFFFFFF) == 0x7F800000u) continue;
    const uint32_t low = a & 0xFFFF, up = a >> 16;
    const bool neg = a >> 31;
    const uint32_t rn = (a + 0x7FFF + ((a >> 16) & 1)) >> 16;
    const uint32_t rna = (a + 0x8000) >> 16;
    const uint32_t away = up + (low != 0);  // magnitude rounded up
    EXPECT_EQ(f32_to_bf16(a, Round::rn), rn) << std::hex << a;
    EXPECT_EQ(f32_to_bf16(a, Round::rna), rna) << std::hex << a;
    EXPECT_EQ(f32_to_bf16(a, Round::rz), up) << std::hex << a;
    EXPECT_EQ(f32_to_bf16(a, Round::rp), neg ? up : away) << std::hex << a;
    EXPECT_EQ(f32_to_bf16(a, Round::rm), neg ? away : up) << std::hex << a;
  }
}

// =============================================================================================
// tf32
// =============================================================================================

TEST(TF32, RnaTiesAwayRnTiesEvenSatfinite) {
  // tf32 keeps 10 fraction bits: the f32 pattern with its low 13 bits cleared.
  // 1 + 2^-11 (0x3F801000) is the tie between 1.0 (0x3F800000) and 1 + 2^-10 (0x3F802000).
  EXPECT_EQ(f32_to_tf32(0x3F801000u, Round::rna), 0x3F802000u);  // ties away
  EXPECT_EQ(f32_to_tf32(0x3F801000u, Round::rn), 0x3F800000u);   // ties to even
  EXPECT_EQ(f32_to_tf32(0x3F801000u, Round::rz), 0x3F800000u);
  EXPECT_EQ(f32_to_tf32(0xBF801000u, Round::rna), 0xBF802000u);  // away from zero on the left too
  // 1 + 3*2^-11 (0x3F803000) ties 0x3F802000 (odd) and 0x3F804000 (even): both rules go up.
  EXPECT_EQ(f32_to_tf32(0x3F803000u, Round::rn), 0x3F804000u);
  EXPECT_EQ(f32_to_tf32(0x3F803000u, Round::rna), 0x3F804000u);
  EXPECT_EQ(f32_to_tf32(0x3F800FFFu, Round::rna), 0x3F800000u);  // below the tie
  // FLT_MAX: discarded 0x1FFF >= half, rna carries into the exponent -> inf; satfinite -> the
  // largest tf32, 0x7F7FE000. rz truncates to it.
  EXPECT_EQ(f32_to_tf32(0x7F7FFFFFu, Round::rna), 0x7F800000u);
  EXPECT_EQ(f32_to_tf32(0x7F7FFFFFu, Round::rna, kSatFinite), 0x7F7FE000u);
  EXPECT_EQ(f32_to_tf32(0x7F7FFFFFu, Round::rz), 0x7F7FE000u);
  EXPECT_EQ(f32_to_tf32(0x7F800000u, Round::rna), 0x7F800000u);
  EXPECT_EQ(f32_to_tf32(0x7F800000u, Round::rna, kSatFinite), 0x7F7FE000u);
  EXPECT_EQ(f32_to_tf32(0xFF800000u, Round::rn, kSatFinite), 0xFF7FE000u);
  EXPECT_EQ(f32_to_tf32(0x7FC00001u, Round::rna), kNaNTF32);
  EXPECT_EQ(f32_to_tf32(0x7FC00001u, Round::rna, kSatFinite), kNaNTF32);
  // Subnormal grid: the smallest tf32 subnormal is 2^-136 (f32 0x00002000); 0x00001000 is the
  // tie with zero: rna -> 0x00002000, rn -> 0.
  EXPECT_EQ(f32_to_tf32(0x00001000u, Round::rna), 0x00002000u);
  EXPECT_EQ(f32_to_tf32(0x00001000u, Round::rn), 0x00000000u);
  EXPECT_EQ(f32_to_tf32(B(-1.5f), Round::rn, kRelu), 0x00000000u);
}

TEST(TF32, MatchesBitTrickReference) {
  for (int i = 0; i < 1000000; ++i) {
    const uint32_t a = rand_f32(0, 254);
    if (is_nan32(a) || (a & 0x7FFFFFFF) == 0x7F800000u) continue;
    const uint32_t mask = ~0x1FFFu;
    EXPECT_EQ(f32_to_tf32(a, Round::rna), (a + 0x1000) & mask) << std::hex << a;
    EXPECT_EQ(f32_to_tf32(a, Round::rn), (a + 0xFFF + ((a >> 13) & 1)) & mask) << std::hex << a;
    EXPECT_EQ(f32_to_tf32(a, Round::rz), a & mask) << std::hex << a;
    for (Round r : {Round::rn, Round::rna, Round::rz}) EXPECT_EQ(f32_to_tf32(a, r) & 0x1FFFu, 0u);
  }
}

// =============================================================================================
// fp8
// =============================================================================================

TEST(FP8, E4M3ValuesSaturationAndPacking) {
  // 1.0: E = 0+7 = 0111, M = 000 -> 0 0111 000 = 0x38. 2.0 -> 0x40. 0.5 -> 0x30.
  EXPECT_EQ(f32_to_e4m3(B(1.0f)), 0x38);
  EXPECT_EQ(f32_to_e4m3(B(2.0f)), 0x40);
  EXPECT_EQ(f32_to_e4m3(B(0.5f)), 0x30);
  // Max 448 = 1.75 * 2^8: E = 15 = 1111, M = 110 -> 0x7E (M = 111 at E = 1111 is the NaN).
  EXPECT_EQ(f32_to_e4m3(B(448.0f)), 0x7E);
  // 464 ties 448 (M=110, even) and "480" (M=111): even -> 448. Anything larger saturates.
  EXPECT_EQ(f32_to_e4m3(B(464.0f)), 0x7E);
  EXPECT_EQ(f32_to_e4m3(B(480.0f)), 0x7E);
  EXPECT_EQ(f32_to_e4m3(B(1e6f)), 0x7E);
  EXPECT_EQ(f32_to_e4m3(0x7F800000u), 0x7E);  // no inf in e4m3: satfinite gives max
  EXPECT_EQ(f32_to_e4m3(0xFF800000u), 0xFE);
  EXPECT_EQ(f32_to_e4m3(B(-1e6f)), 0xFE);
  EXPECT_EQ(f32_to_e4m3(0x7FC00000u), kNaNE4M3);
  EXPECT_EQ(f32_to_e4m3(0xFFC00000u), kNaNE4M3);
  // Subnormals: smallest 2^-9 = 0 0000 001 = 0x01; 2^-10 ties 0 and 2^-9 -> 0; 1.5*2^-9 ties 1
  // and 2 -> 0x02. Largest subnormal 7*2^-9 = 0x07, smallest normal 2^-6 = 0 0001 000 = 0x08.
  EXPECT_EQ(f32_to_e4m3(B(0x1p-9f)), 0x01);
  EXPECT_EQ(f32_to_e4m3(B(0x1p-10f)), 0x00);
  EXPECT_EQ(f32_to_e4m3(B(0x1.8p-9f)), 0x02);
  EXPECT_EQ(f32_to_e4m3(B(7 * 0x1p-9f)), 0x07);
  EXPECT_EQ(f32_to_e4m3(B(0x1p-6f)), 0x08);
  // Ties at 1: 1.0625 ties 0x38/0x39 -> 0x38; 1.1875 ties 0x39/0x3A -> 0x3A.
  EXPECT_EQ(f32_to_e4m3(B(1.0625f)), 0x38);
  EXPECT_EQ(f32_to_e4m3(B(1.1875f)), 0x3A);
  EXPECT_EQ(f32_to_e4m3(0x80000000u), 0x80);
  EXPECT_EQ(f32_to_e4m3(B(-1.0f), kRelu), 0x00);
  // cvt.rn.satfinite.e4m3x2.f32 d, a, b: a -> upper byte. (1.0, 2.0) -> 0x38, 0x40 -> 0x3840.
  EXPECT_EQ(f32x2_to_e4m3x2(B(1.0f), B(2.0f)), 0x3840);
  EXPECT_EQ(f32x2_to_e4m3x2(B(2.0f), B(1.0f)), 0x4038);
  // f16x2 source: the upper f16 (1.0 = 0x3C00) goes to the upper byte.
  EXPECT_EQ(f16x2_to_e4m3x2(0x3C004000u), 0x3840);
  EXPECT_EQ(f16_to_e4m3(0x7C00), 0x7E);  // f16 inf saturates
  EXPECT_EQ(bf16_to_e4m3(0x3F80), 0x38);
}

TEST(FP8, E5M2ValuesSaturationAndPacking) {
  // 1.0 = 0 01111 00 = 0x3C. Max 57344 = 1.75 * 2^15: E = 30 = 11110, M = 11 -> 0x7B.
  EXPECT_EQ(f32_to_e5m2(B(1.0f)), 0x3C);
  EXPECT_EQ(f32_to_e5m2(B(57344.0f)), 0x7B);
  // 61440 ties 57344 (M=11, odd) and 65536 (even): rn -> 65536, an overflow -> satfinite 0x7B.
  EXPECT_EQ(f32_to_e5m2(B(61440.0f)), 0x7B);
  EXPECT_EQ(f32_to_e5m2(0x7F800000u), 0x7B);
  EXPECT_EQ(f32_to_e5m2(0xFF800000u), 0xFB);
  EXPECT_EQ(f32_to_e5m2(0x7FC00000u), kNaNE5M2);
  // Smallest subnormal 2^-16 = 0x01; 1.25 = 0 01111 01 = 0x3D; 1.125 ties 0x3C/0x3D -> 0x3C.
  EXPECT_EQ(f32_to_e5m2(B(0x1p-16f)), 0x01);
  EXPECT_EQ(f32_to_e5m2(B(1.25f)), 0x3D);
  EXPECT_EQ(f32_to_e5m2(B(1.125f)), 0x3C);
  // -2.0 = 1 10000 00 = 0xC0; pair (1.0, -2.0) -> 0x3CC0.
  EXPECT_EQ(f32x2_to_e5m2x2(B(1.0f), B(-2.0f)), 0x3CC0);
  EXPECT_EQ(f16x2_to_e5m2x2(0x3C00C000u), 0x3CC0);
  // f16 -> e5m2 is rounding away 8 fraction bits: f16 0x3C80 (1.125) ties -> 0x3C.
  EXPECT_EQ(f16_to_e5m2(0x3C80), 0x3C);
  EXPECT_EQ(f16_to_e5m2(0x3C81), 0x3D);
}

TEST(FP8, ToF16IsExact) {
  // e4m3 0x38, 0x40 -> f16 1.0 = 0x3C00, 2.0 = 0x4000; upper byte -> upper half.
  EXPECT_EQ(e4m3x2_to_f16x2(0x3840), 0x3C004000u);
  // 448 = 1.75 * 2^8 -> f16 E = 8+15 = 10111, M = 1100000000 -> 0x5F00.
  EXPECT_EQ(e4m3_to_f16(0x7E), 0x5F00);
  // 2^-9 -> f16 E = 6 = 00110 -> 0x1800 (normal in f16).
  EXPECT_EQ(e4m3_to_f16(0x01), 0x1800);
  EXPECT_EQ(e4m3_to_f16(0x7F), kNaNF16);
  EXPECT_EQ(e4m3_to_f16(0xFF), kNaNF16);
  EXPECT_EQ(e4m3_to_f16(0x80), 0x8000);
  EXPECT_EQ(e4m3_to_f16(0xB8, kRelu), 0x0000);  // -1.0 with .relu
  // e5m2 is an f16 with the low 8 fraction bits dropped: 0x7B -> 0x7B00, inf 0x7C -> 0x7C00,
  // 2^-16 (0x01) -> f16 subnormal 256 * 2^-24 = 0x0100.
  EXPECT_EQ(e5m2_to_f16(0x7B), 0x7B00);
  EXPECT_EQ(e5m2_to_f16(0x7C), 0x7C00);
  EXPECT_EQ(e5m2_to_f16(0x01), 0x0100);
  EXPECT_EQ(e5m2_to_f16(0x7F), kNaNF16);
  EXPECT_EQ(e5m2x2_to_f16x2(0x3CC0), 0x3C00C000u);
  // Every fp8 code: widening then narrowing again is the identity (inf becomes max: satfinite).
  for (uint32_t c = 0; c < 256; ++c) {
    const uint8_t x = uint8_t(c);
    if ((c & 0x7F) != 0x7F) { EXPECT_EQ(f16_to_e4m3(e4m3_to_f16(x)), x) << c; }
    if ((c & 0x7F) < 0x7C) { EXPECT_EQ(f16_to_e5m2(e5m2_to_f16(x)), x) << c; }
    if ((c & 0x7F) == 0x7C) { EXPECT_EQ(f16_to_e5m2(e5m2_to_f16(x)), (c & 0x80) | 0x7B) << c; }
  }
}

// All 65536 f16 inputs to e4m3 and e5m2 against the exact-integer reference (rn, satfinite).
TEST(FP8, ExhaustiveFromF16AgainstExactReference) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t x = uint16_t(h);
    if (is_nan16(x)) {
      ASSERT_EQ(f16_to_e4m3(x), kNaNE4M3);
      ASSERT_EQ(f16_to_e5m2(x), kNaNE5M2);
      continue;
    }
    const bool neg = x & 0x8000;
    const uint32_t mag = x & 0x7FFF;
    if (mag == 0x7C00) {  // inf -> +-max
      ASSERT_EQ(f16_to_e4m3(x), (neg ? 0x80 : 0) | 0x7E);
      ASSERT_EQ(f16_to_e5m2(x), (neg ? 0x80 : 0) | 0x7B);
      continue;
    }
    const u128 X = F16().v[mag];
    ASSERT_EQ(f16_to_e4m3(x), ref_round(E4M3(), neg, X, Round::rn, true)) << std::hex << h;
    ASSERT_EQ(f16_to_e5m2(x), ref_round(E5M2(), neg, X, Round::rn, true)) << std::hex << h;
  }
}

// =============================================================================================
// f64 -> f32 and f32 -> f64
// =============================================================================================

TEST(F64ToF32, HandCases) {
  // 1 + 2^-24 (f64 fraction bit 52-24 = 28 set: 0x3FF0000010000000) ties 1.0 (even) and
  // 1 + 2^-23 = 0x3F800001.
  EXPECT_EQ(f64_to_f32(0x3FF0000010000000ull, Round::rn), 0x3F800000u);
  EXPECT_EQ(f64_to_f32(0x3FF0000010000000ull, Round::rp), 0x3F800001u);
  EXPECT_EQ(f64_to_f32(0x3FF0000010000000ull, Round::rz), 0x3F800000u);
  EXPECT_EQ(f64_to_f32(0x3FF0000010000001ull, Round::rn), 0x3F800001u);  // + 2^-52: past the tie
  EXPECT_EQ(f64_to_f32(0xBFF0000010000000ull, Round::rm), 0xBF800001u);
  // 1e39 > FLT_MAX: rn/rp -> inf, rz/rm -> FLT_MAX 0x7F7FFFFF; mirrored for -1e39.
  EXPECT_EQ(f64_to_f32(D(1e39), Round::rn), 0x7F800000u);
  EXPECT_EQ(f64_to_f32(D(1e39), Round::rz), 0x7F7FFFFFu);
  EXPECT_EQ(f64_to_f32(D(1e39), Round::rm), 0x7F7FFFFFu);
  EXPECT_EQ(f64_to_f32(D(1e39), Round::rp), 0x7F800000u);
  EXPECT_EQ(f64_to_f32(D(-1e39), Round::rm), 0xFF800000u);
  EXPECT_EQ(f64_to_f32(D(-1e39), Round::rp), 0xFF7FFFFFu);
  // 2^-150 (biased 1023-150 = 0x369 -> 0x3690000000000000) ties 0 and the smallest f32
  // subnormal 2^-149 = 0x00000001.
  EXPECT_EQ(f64_to_f32(0x3690000000000000ull, Round::rn), 0x00000000u);
  EXPECT_EQ(f64_to_f32(0x3690000000000000ull, Round::rp), 0x00000001u);
  EXPECT_EQ(f64_to_f32(D(0x1.8p-149), Round::rn), 0x00000002u);  // ties 1 and 2 -> 2
  EXPECT_EQ(f64_to_f32(0x7FF0000000000001ull, Round::rn), kNaNF32);
  EXPECT_EQ(f64_to_f32(D(-0.0), Round::rn), 0x80000000u);
  EXPECT_EQ(f64_to_f32(D(2.5), Round::rn, kSat), 0x3F800000u);
  EXPECT_EQ(f64_to_f32(D(-1.0), Round::rn, kSat), 0x00000000u);
  EXPECT_EQ(f64_to_f32(0x7FF8000000000000ull, Round::rn, kSat), 0x00000000u);
  // Widening is exact: 2^-149 -> biased 1023-149 = 874 = 0x36A.
  EXPECT_EQ(f32_to_f64(0x00000001u), 0x36A0000000000000ull);
  EXPECT_EQ(f32_to_f64(0x7F800001u), kNaNF64);
  EXPECT_EQ(f32_to_f64(0xFF800000u), 0xFFF0000000000000ull);
}

TEST(F64ToF32, MatchesHostConversionInEveryMode) {
  for (int i = 0; i < 1000000; ++i) {
    const uint64_t a = rand_f64(1023 - 160, 1023 + 130);
    for (Round r : kModes)
      ASSERT_EQ(f64_to_f32(a, r), canon32(host_d2f(f64_from_bits(a), r))) << std::hex << a << " " << int(r);
  }
}

// =============================================================================================
// f32 / f64 arithmetic with rounding modes
// =============================================================================================

TEST(ArithF32, HandCases) {
  const uint32_t one = 0x3F800000u, m_one = 0xBF800000u;
  // 1 + 2^-30: strictly between 1.0 and 1 + 2^-23 (0x3F800001); only rp moves up.
  for (Round r : {Round::rn, Round::rz, Round::rm}) EXPECT_EQ(add_f32(one, B(0x1p-30f), r), one);
  EXPECT_EQ(add_f32(one, B(0x1p-30f), Round::rp), 0x3F800001u);
  EXPECT_EQ(add_f32(m_one, B(-0x1p-30f), Round::rm), 0xBF800001u);
  EXPECT_EQ(add_f32(m_one, B(-0x1p-30f), Round::rp), m_one);
  // Exact ties: 1 + 2^-24 -> even 1.0; (1 + 2^-23) + 2^-24 -> even 1 + 2^-22 = 0x3F800002.
  EXPECT_EQ(add_f32(one, B(0x1p-24f)), one);
  EXPECT_EQ(add_f32(0x3F800001u, B(0x1p-24f)), 0x3F800002u);
  EXPECT_EQ(sub_f32(one, B(0x1p-25f), Round::rz), 0x3F7FFFFFu);  // 1 - 2^-25 truncated: 1 - 2^-24
  // (1 + 2^-23)^2 = 1 + 2^-22 + 2^-46: rn/rz/rm -> 0x3F800002, rp -> 0x3F800003.
  EXPECT_EQ(mul_f32(0x3F800001u, 0x3F800001u, Round::rn), 0x3F800002u);
  EXPECT_EQ(mul_f32(0x3F800001u, 0x3F800001u, Round::rz), 0x3F800002u);
  EXPECT_EQ(mul_f32(0x3F800001u, 0x3F800001u, Round::rm), 0x3F800002u);
  EXPECT_EQ(mul_f32(0x3F800001u, 0x3F800001u, Round::rp), 0x3F800003u);
  // fma is fused: (1 + 2^-23)(1 - 2^-24) - 1 = 2^-24 - 2^-47 = 2^-24 (1 - 2^-23), exact in f32
  // (1 - 2^-23 has 23 significant bits: 1.(22 ones) * 2^-1). Value 1.(22 ones) * 2^-25:
  // exponent 127-25 = 0x66, fraction 22 ones then 0 = 0x7FFFFE -> 0x337FFFFE.
  // (mul then sub would give 0: the product rounds to 1.0.)
  for (Round r : kModes) EXPECT_EQ(fma_f32(0x3F800001u, 0x3F7FFFFFu, m_one, r), 0x337FFFFEu);
  EXPECT_EQ(sub_f32(mul_f32(0x3F800001u, 0x3F7FFFFFu), one), 0u);
  // (1 + 2^-23)^2 - 1 = 2^-22 (1 + 2^-24): a tie at 2^-22's precision: rn -> 2^-22 = 0x34800000.
  EXPECT_EQ(fma_f32(0x3F800001u, 0x3F800001u, m_one, Round::rn), 0x34800000u);
  EXPECT_EQ(fma_f32(0x3F800001u, 0x3F800001u, m_one, Round::rp), 0x34800001u);
  EXPECT_EQ(fma_f32(0x3F800001u, 0x3F800001u, m_one, Round::rz), 0x34800000u);
  // Signed zeros (IEEE 754 6.3): x + (-x) is +0, but -0 under rm; -0 + -0 = -0 in every mode.
  EXPECT_EQ(add_f32(one, m_one, Round::rn), 0x00000000u);
  EXPECT_EQ(add_f32(one, m_one, Round::rm), 0x80000000u);
  for (Round r : kModes) EXPECT_EQ(add_f32(0x80000000u, 0x80000000u, r), 0x80000000u);
  EXPECT_EQ(add_f32(0x00000000u, 0x80000000u, Round::rn), 0x00000000u);
  EXPECT_EQ(add_f32(0x00000000u, 0x80000000u, Round::rm), 0x80000000u);
  EXPECT_EQ(fma_f32(0x00000000u, B(5.0f), 0x80000000u, Round::rn), 0x00000000u);  // +0 + -0
  EXPECT_EQ(fma_f32(0x80000000u, B(5.0f), 0x80000000u, Round::rn), 0x80000000u);  // -0 + -0
  EXPECT_EQ(fma_f32(one, one, m_one, Round::rm), 0x80000000u);                    // exact cancel
  EXPECT_EQ(mul_f32(0x80000000u, B(5.0f)), 0x80000000u);
  // NaN producers and propagation -> canonical 0x7FFFFFFF.
  EXPECT_EQ(add_f32(0x7F800000u, 0xFF800000u), kNaNF32);
  EXPECT_EQ(mul_f32(0x00000000u, 0xFF800000u), kNaNF32);
  EXPECT_EQ(fma_f32(0x7F800000u, 0x00000000u, one), kNaNF32);
  EXPECT_EQ(fma_f32(0x7F800000u, one, 0xFF800000u), kNaNF32);
  EXPECT_EQ(fma_f32(B(2.0f), B(3.0f), 0xFF800000u), 0xFF800000u);
  EXPECT_EQ(add_f32(0xFFC00001u, one), kNaNF32);
  // Overflow: FLT_MAX + FLT_MAX.
  EXPECT_EQ(add_f32(0x7F7FFFFFu, 0x7F7FFFFFu, Round::rn), 0x7F800000u);
  EXPECT_EQ(add_f32(0x7F7FFFFFu, 0x7F7FFFFFu, Round::rz), 0x7F7FFFFFu);
  EXPECT_EQ(add_f32(0x7F7FFFFFu, 0x7F7FFFFFu, Round::rm), 0x7F7FFFFFu);
  EXPECT_EQ(add_f32(0xFF7FFFFFu, 0xFF7FFFFFu, Round::rm), 0xFF800000u);
  EXPECT_EQ(add_f32(0xFF7FFFFFu, 0xFF7FFFFFu, Round::rp), 0xFF7FFFFFu);
  // A tiny operand shifted out entirely still decides directed rounding (the sticky bit):
  // 0.25 - 2^-127 lies just below 0.25 = 0x3E800000, so rz/rm give the float below, 0x3E7FFFFF.
  EXPECT_EQ(sub_f32(0x3E800000u, 0x00400000u, Round::rz), 0x3E7FFFFFu);
  EXPECT_EQ(sub_f32(0x3E800000u, 0x00400000u, Round::rm), 0x3E7FFFFFu);
  EXPECT_EQ(sub_f32(0x3E800000u, 0x00400000u, Round::rn), 0x3E800000u);
  EXPECT_EQ(sub_f32(0x3E800000u, 0x00400000u, Round::rp), 0x3E800000u);
  EXPECT_EQ(add_f32(one, 0x00400000u, Round::rp), 0x3F800001u);  // 1 + 2^-127
  // Underflow: 2^-100 * 2^-50 = 2^-150 ties 0 and 2^-149: rn -> +0, rp -> 0x00000001.
  EXPECT_EQ(mul_f32(B(0x1p-100f), B(0x1p-50f), Round::rn), 0x00000000u);
  EXPECT_EQ(mul_f32(B(0x1p-100f), B(0x1p-50f), Round::rp), 0x00000001u);
  EXPECT_EQ(mul_f32(B(-0x1p-100f), B(0x1p-50f), Round::rm), 0x80000001u);
  EXPECT_EQ(mul_f32(0x00000003u, B(0.5f), Round::rn), 0x00000002u);  // 1.5 * 2^-149 -> 2
}

TEST(ArithF64, HandCases) {
  const uint64_t one = D(1.0), m_one = D(-1.0);
  EXPECT_EQ(add_f64(one, D(0x1p-60), Round::rp), 0x3FF0000000000001ull);
  EXPECT_EQ(add_f64(one, D(0x1p-60), Round::rm), one);
  // (1 + 2^-52)(1 - 2^-53) - 1 = 2^-53 - 2^-105 = 2^-53 (1 - 2^-52) = 1.(51 ones)0 * 2^-54:
  // exact; biased 1023-54 = 0x3C9, fraction 0xFFFFFFFFFFFFE.
  for (Round r : kModes) EXPECT_EQ(fma_f64(D(1.0 + 0x1p-52), D(1.0 - 0x1p-53), m_one, r), 0x3C9FFFFFFFFFFFFEull);
  // A far-away addend only contributes its sign (the sticky bit): 1 + 2^-1000.
  EXPECT_EQ(fma_f64(one, one, D(0x1p-1000), Round::rn), one);
  EXPECT_EQ(fma_f64(one, one, D(0x1p-1000), Round::rp), 0x3FF0000000000001ull);
  EXPECT_EQ(fma_f64(one, one, D(-0x1p-1000), Round::rm), 0x3FEFFFFFFFFFFFFFull);  // below 1
  EXPECT_EQ(fma_f64(one, one, D(-0x1p-1000), Round::rz), 0x3FEFFFFFFFFFFFFFull);
  EXPECT_EQ(fma_f64(one, one, D(-0x1p-1000), Round::rp), one);
  // 1 + 2^-126 (2^-126 is shifted out of the 128-bit window, leaving only the sticky bit).
  EXPECT_EQ(add_f64(one, D(0x1p-126), Round::rp), 0x3FF0000000000001ull);
  EXPECT_EQ(add_f64(one, D(0x1p-126), Round::rn), one);
  EXPECT_EQ(sub_f64(one, D(0x1p-126), Round::rz), 0x3FEFFFFFFFFFFFFFull);
  // Product underflow inside fma: 2^-600 * 2^-600 is far below the smallest subnormal 2^-1074.
  EXPECT_EQ(fma_f64(D(0x1p-600), D(0x1p-600), D(0.0), Round::rp), 0x0000000000000001ull);
  EXPECT_EQ(fma_f64(D(0x1p-600), D(0x1p-600), D(0.0), Round::rn), 0x0000000000000000ull);
  EXPECT_EQ(mul_f64(D(0x1p-600), D(-0x1p-600), Round::rm), 0x8000000000000001ull);
  EXPECT_EQ(add_f64(one, m_one, Round::rm), 0x8000000000000000ull);
  EXPECT_EQ(mul_f64(D(0x1p600), D(0x1p600), Round::rz), 0x7FEFFFFFFFFFFFFFull);
  EXPECT_EQ(sub_f64(D(INFINITY), D(INFINITY)), kNaNF64);
}

// Random operands against the host FPU in each mode. Operand exponents are drawn close to
// each other most of the time (cancellation, ties, carries) and the full range otherwise.
TEST(ArithF32, MatchesHostInEveryMode) {
  // The reference must really switch modes (not be folded at compile time): 1 + 2^-30 differs.
  ASSERT_EQ(B(host_add(1.0f, 0x1p-30f, Round::rp)), 0x3F800001u);
  ASSERT_EQ(B(host_add(1.0f, 0x1p-30f, Round::rn)), 0x3F800000u);
  ASSERT_EQ(B(host_add(-1.0f, -0x1p-30f, Round::rm)), 0xBF800001u);
  ASSERT_EQ(B(host_fma(1.0f, 1.0f, 0x1p-30f, Round::rp)), 0x3F800001u);
  ASSERT_EQ(B(host_d2f(1.0 + 0x1p-30, Round::rp)), 0x3F800001u);
  ASSERT_EQ(B(host_i2f<int64_t, float>(16777217, Round::rp)), 0x4B800001u);
  auto& g = rng();
  for (int i = 0; i < 300000; ++i) {
    const int base = int(g() % 254) + 1;
    const int lo = std::max(1, base - 26), hi = std::min(254, base + 26);
    const uint32_t a = rand_f32(lo, hi), b = rand_f32(lo, hi);
    uint32_t c = rand_f32(lo, hi);
    // Sometimes aim c at -a*b so the fma cancels massively.
    if (g() % 4 == 0) c = B(-f32_from_bits(a) * f32_from_bits(b)) ^ uint32_t(g() % 3);
    const float fa = f32_from_bits(a), fb = f32_from_bits(b), fc = f32_from_bits(c);
    for (Round r : kModes) {
      ASSERT_EQ(add_f32(a, b, r), canon32(host_add(fa, fb, r))) << std::hex << a << " " << b << " " << int(r);
      ASSERT_EQ(sub_f32(a, b, r), canon32(host_sub(fa, fb, r))) << std::hex << a << " " << b << " " << int(r);
      ASSERT_EQ(mul_f32(a, b, r), canon32(host_mul(fa, fb, r))) << std::hex << a << " " << b << " " << int(r);
      ASSERT_EQ(fma_f32(a, b, c, r), canon32(host_fma(fa, fb, fc, r)))
          << std::hex << a << " " << b << " " << c << " " << int(r);
    }
  }
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);  // the reference restored the host mode
}

TEST(ArithF64, MatchesHostInEveryMode) {
  auto& g = rng();
  for (int i = 0; i < 300000; ++i) {
    const int base = int(g() % 2046) + 1;
    const int lo = std::max(1, base - 60), hi = std::min(2046, base + 60);
    const uint64_t a = rand_f64(lo, hi), b = rand_f64(lo, hi);
    uint64_t c = rand_f64(lo, hi);
    if (g() % 4 == 0) c = D(-f64_from_bits(a) * f64_from_bits(b)) ^ (g() % 3);
    const double fa = f64_from_bits(a), fb = f64_from_bits(b), fc = f64_from_bits(c);
    for (Round r : kModes) {
      ASSERT_EQ(add_f64(a, b, r), canon64(host_add(fa, fb, r))) << std::hex << a << " " << b << " " << int(r);
      ASSERT_EQ(sub_f64(a, b, r), canon64(host_sub(fa, fb, r))) << std::hex << a << " " << b << " " << int(r);
      ASSERT_EQ(mul_f64(a, b, r), canon64(host_mul(fa, fb, r))) << std::hex << a << " " << b << " " << int(r);
      ASSERT_EQ(fma_f64(a, b, c, r), canon64(host_fma(fa, fb, fc, r)))
          << std::hex << a << " " << b << " " << c << " " << int(r);
    }
  }
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
}

// =============================================================================================
// Float -> integer
// =============================================================================================

TEST(FloatToInt, RoundingSaturationAndNaN) {
  // rni ties to even; rzi/rmi/rpi truncate / floor / ceil.
  EXPECT_EQ(f32_to_int<int32_t>(B(2.5f), Round::rn), 2);
  EXPECT_EQ(f32_to_int<int32_t>(B(3.5f), Round::rn), 4);
  EXPECT_EQ(f32_to_int<int32_t>(B(-2.5f), Round::rn), -2);
  EXPECT_EQ(f32_to_int<int32_t>(B(-2.7f), Round::rz), -2);
  EXPECT_EQ(f32_to_int<int32_t>(B(-2.1f), Round::rm), -3);
  EXPECT_EQ(f32_to_int<int32_t>(B(2.1f), Round::rp), 3);
  EXPECT_EQ(f32_to_int<int32_t>(B(2.1f), Round::rz), 2);
  EXPECT_EQ(f32_to_int<int32_t>(B(-0.5f), Round::rp), 0);
  // Saturation to the destination's range.
  EXPECT_EQ(f32_to_int<int8_t>(B(300.0f), Round::rz), 127);
  EXPECT_EQ(f32_to_int<int8_t>(B(-300.0f), Round::rz), -128);
  EXPECT_EQ(f32_to_int<int8_t>(B(127.5f), Round::rn), 127);    // rounds to 128, clamps
  EXPECT_EQ(f32_to_int<int8_t>(B(-128.5f), Round::rn), -128);  // tie -> -128 (even), fits
  EXPECT_EQ(f32_to_int<int8_t>(B(-128.6f), Round::rn), -128);  // -129 clamps
  EXPECT_EQ(f32_to_int<uint8_t>(B(-5.0f), Round::rz), 0);
  EXPECT_EQ(f32_to_int<uint8_t>(B(255.4f), Round::rn), 255);
  EXPECT_EQ(f32_to_int<uint8_t>(B(255.5f), Round::rn), 255);   // 256 clamps
  EXPECT_EQ(f32_to_int<uint16_t>(B(65535.5f), Round::rn), 65535);
  EXPECT_EQ(f32_to_int<int16_t>(B(-40000.0f), Round::rn), -32768);
  EXPECT_EQ(f32_to_int<int32_t>(B(2147483648.0f), Round::rz), INT32_MAX);  // 2^31
  EXPECT_EQ(f32_to_int<int32_t>(B(-2147483648.0f), Round::rz), INT32_MIN);  // exactly -2^31
  EXPECT_EQ(f32_to_int<int32_t>(B(-2147483904.0f), Round::rz), INT32_MIN);  // -2^31 - 256
  EXPECT_EQ(f32_to_int<uint32_t>(B(4294967296.0f), Round::rz), UINT32_MAX);
  EXPECT_EQ(f32_to_int<int64_t>(B(0x1p63f), Round::rz), INT64_MAX);
  EXPECT_EQ(f32_to_int<int64_t>(B(-0x1p63f), Round::rz), INT64_MIN);
  EXPECT_EQ(f32_to_int<uint64_t>(B(0x1p64f), Round::rz), UINT64_MAX);
  // Largest float below 2^64 is 0x5F7FFFFF = (2^24 - 1) * 2^40 = 0xFFFFFF0000000000.
  EXPECT_EQ(f32_to_int<uint64_t>(0x5F7FFFFFu, Round::rz), 0xFFFFFF0000000000ull);
  EXPECT_EQ(f32_to_int<int32_t>(0x7F800000u, Round::rz), INT32_MAX);
  EXPECT_EQ(f32_to_int<int32_t>(0xFF800000u, Round::rz), INT32_MIN);
  EXPECT_EQ(f32_to_int<uint32_t>(0xFF800000u, Round::rz), 0u);
  // Subnormal inputs are real values: 2^-149 rounds up to 1 under rpi.
  EXPECT_EQ(f32_to_int<int32_t>(0x00000001u, Round::rp), 1);
  EXPECT_EQ(f32_to_int<int32_t>(0x80000001u, Round::rm), -1);
  EXPECT_EQ(f32_to_int<int32_t>(0x00000001u, Round::rn), 0);
  EXPECT_EQ(f32_to_int<int32_t>(ftz_f32(0x00000001u), Round::rp), 0);  // with .ftz
  // f64: 2^52 - 0.5 ties 2^52 - 1 (odd) and 2^52 (even).
  EXPECT_EQ(f64_to_int<int64_t>(D(4503599627370495.5), Round::rn), 4503599627370496LL);
  EXPECT_EQ(f64_to_int<int64_t>(D(4503599627370495.5), Round::rz), 4503599627370495LL);
  EXPECT_EQ(f64_to_int<uint64_t>(D(0x1p64), Round::rn), UINT64_MAX);
  EXPECT_EQ(f64_to_int<uint64_t>(D(0x1.fffffffffffffp63), Round::rn), 0xFFFFFFFFFFFFF800ull);
  EXPECT_EQ(f64_to_int<int64_t>(D(-0x1p63), Round::rn), INT64_MIN);
  EXPECT_EQ(f64_to_int<int32_t>(D(-1e300), Round::rn), INT32_MIN);
  EXPECT_EQ(f16_to_int<int32_t>(0x3E00, Round::rn), 2);   // f16 1.5 -> tie -> 2
  EXPECT_EQ(bf16_to_int<int8_t>(0x3FC0, Round::rm), 1);   // bf16 1.5 -> floor 1
  EXPECT_EQ(f16_to_int<uint8_t>(0x7C00, Round::rn), 255);
}

TEST(FloatToInt, NaNFollowsThePtxRule) {
  // PTX ISA (cvt, Integer Notes): NaN -> 0 when the source is not .f64 and the destination is
  // not 64-bit; otherwise 1 << (width-1): MININT for signed, (MAXINT >> 1) + 1 for unsigned.
  const uint32_t nan32 = 0x7FC00000u;
  const uint64_t nan64 = 0x7FF8000000000000ull;
  EXPECT_EQ(f32_to_int<int8_t>(nan32, Round::rn), 0);
  EXPECT_EQ(f32_to_int<uint16_t>(nan32, Round::rn), 0);
  EXPECT_EQ(f32_to_int<int32_t>(nan32, Round::rn), 0);
  EXPECT_EQ(f32_to_int<uint32_t>(nan32, Round::rn), 0u);
  EXPECT_EQ(f32_to_int<int64_t>(nan32, Round::rn), INT64_MIN);
  EXPECT_EQ(f32_to_int<uint64_t>(nan32, Round::rn), 0x8000000000000000ull);
  EXPECT_EQ(f16_to_int<int32_t>(0x7E00, Round::rn), 0);
  EXPECT_EQ(f64_to_int<int8_t>(nan64, Round::rn), -128);
  EXPECT_EQ(f64_to_int<uint8_t>(nan64, Round::rn), 128);
  EXPECT_EQ(f64_to_int<int16_t>(nan64, Round::rn), -32768);
  EXPECT_EQ(f64_to_int<uint16_t>(nan64, Round::rn), 0x8000);
  EXPECT_EQ(f64_to_int<int32_t>(nan64, Round::rn), INT32_MIN);
  EXPECT_EQ(f64_to_int<uint32_t>(nan64, Round::rn), 0x80000000u);
  EXPECT_EQ(f64_to_int<int64_t>(nan64, Round::rn), INT64_MIN);
  EXPECT_EQ(f64_to_int<uint64_t>(nan64, Round::rn), 0x8000000000000000ull);
}

namespace {
// Reference: libm rounding of the (exact) double value, then clamping by comparisons in double.
double ref_round_double(double x, Round r) {
  switch (r) {
    case Round::rz: return std::trunc(x);
    case Round::rm: return std::floor(x);
    case Round::rp: return std::ceil(x);
    default: return std::nearbyint(x);  // default host mode: ties to even
  }
}
template <class I>
I ref_clamp(double v) {
  const double lo = double(std::numeric_limits<I>::min());
  const double hi_excl = std::ldexp(1.0, std::numeric_limits<I>::digits);  // 2^digits > max
  if (v < lo) return std::numeric_limits<I>::min();
  if (v >= hi_excl) return std::numeric_limits<I>::max();
  return std::is_signed<I>::value ? I(int64_t(v)) : I(uint64_t(v));
}
template <class I>
void check_float_to_int(int n) {
  for (int i = 0; i < n; ++i) {
    const uint32_t a = rand_f32(100, 127 + 66);
    const uint64_t d = rand_f64(1023 - 30, 1023 + 66);
    for (Round r : kModes) {
      if (!is_nan32(a)) {
        const I want = ref_clamp<I>(ref_round_double(double(f32_from_bits(a)), r));
        ASSERT_EQ(f32_to_int<I>(a, r), want) << std::hex << a << " " << int(r);
      }
      if (!is_nan64(d)) {
        const I want = ref_clamp<I>(ref_round_double(f64_from_bits(d), r));
        ASSERT_EQ(f64_to_int<I>(d, r), want) << std::hex << d << " " << int(r);
      }
    }
  }
}
}  // namespace

TEST(FloatToInt, MatchesLibmReferenceForEveryWidth) {
  check_float_to_int<int8_t>(100000);
  check_float_to_int<uint8_t>(100000);
  check_float_to_int<int16_t>(100000);
  check_float_to_int<uint16_t>(100000);
  check_float_to_int<int32_t>(100000);
  check_float_to_int<uint32_t>(100000);
  check_float_to_int<int64_t>(100000);
  check_float_to_int<uint64_t>(100000);
}

// =============================================================================================
// Integer -> float
// =============================================================================================

TEST(IntToFloat, HandCases) {
  // 2^24 + 1 = 16777217 ties 2^24 (exp 127+24 = 0x97 -> 0x4B800000, fraction 0, even) and
  // 2^24 + 2 (0x4B800001).
  EXPECT_EQ(int_to_f32<int32_t>(16777217, Round::rn), 0x4B800000u);
  EXPECT_EQ(int_to_f32<int32_t>(16777217, Round::rz), 0x4B800000u);
  EXPECT_EQ(int_to_f32<int32_t>(16777217, Round::rp), 0x4B800001u);
  EXPECT_EQ(int_to_f32<int32_t>(-16777217, Round::rm), 0xCB800001u);
  // 2^24 + 3 ties 2^24 + 2 (fraction 1, odd) and 2^24 + 4 (fraction 2, even).
  EXPECT_EQ(int_to_f32<int32_t>(16777219, Round::rn), 0x4B800002u);
  // UINT64_MAX = 2^64 - 1: rn -> 2^64 (exp 127+64 = 0xBF -> 0x5F800000); rz -> 0x5F7FFFFF.
  EXPECT_EQ(int_to_f32<uint64_t>(UINT64_MAX, Round::rn), 0x5F800000u);
  EXPECT_EQ(int_to_f32<uint64_t>(UINT64_MAX, Round::rz), 0x5F7FFFFFu);
  // INT64_MIN = -2^63 exactly: exp 127+63 = 0xBE -> 0xDF000000.
  EXPECT_EQ(int_to_f32<int64_t>(INT64_MIN, Round::rn), 0xDF000000u);
  EXPECT_EQ(int_to_f64<int64_t>(INT64_MIN, Round::rn), 0xC3E0000000000000ull);
  // 2^53 + 1 ties 2^53 (0x4340000000000000) and 2^53 + 2.
  EXPECT_EQ(int_to_f64<int64_t>((int64_t{1} << 53) + 1, Round::rn), 0x4340000000000000ull);
  EXPECT_EQ(int_to_f64<int64_t>((int64_t{1} << 53) + 1, Round::rp), 0x4340000000000001ull);
  // f16: 2048 = 2^11 -> E = 26 = 11010 -> 0x6800; ulp there is 2. 2049 ties 2048/2050 -> 2048;
  // 2051 ties 2050 (odd fraction) / 2052 (even) -> 2052 = 0x6802.
  EXPECT_EQ(int_to_f16<int32_t>(2049, Round::rn), 0x6800);
  EXPECT_EQ(int_to_f16<int32_t>(2049, Round::rp), 0x6801);
  EXPECT_EQ(int_to_f16<int32_t>(2051, Round::rn), 0x6802);
  EXPECT_EQ(int_to_f16<uint32_t>(65519, Round::rn), 0x7BFF);
  EXPECT_EQ(int_to_f16<uint32_t>(65520, Round::rn), 0x7C00);
  EXPECT_EQ(int_to_f16<uint32_t>(65520, Round::rz), 0x7BFF);
  EXPECT_EQ(int_to_f16<uint32_t>(70000, Round::rn, kSatFinite), 0x7BFF);
  // 255 = 1.9921875 * 2^7: E = 22 = 10110, fraction 1111111000 -> 0x5BF8. -128 -> 0xD800.
  EXPECT_EQ(int_to_f16<uint8_t>(255, Round::rn), 0x5BF8);
  EXPECT_EQ(int_to_f16<int8_t>(-128, Round::rn), 0xD800);
  // bf16: 257 ties 256 (0x4380) and 258 (0x4381) -> 0x4380.
  EXPECT_EQ(int_to_bf16<int16_t>(257, Round::rn), 0x4380);
  EXPECT_EQ(int_to_f32<int32_t>(0, Round::rm), 0x00000000u);  // integer zero is +0
  EXPECT_EQ(int_to_f32<int32_t>(5, Round::rn, kSat), 0x3F800000u);
}

TEST(IntToFloat, MatchesReferences) {
  auto& g = rng();
  for (int i = 0; i < 250000; ++i) {
    const unsigned width = unsigned(g() % 64) + 1;
    const uint64_t u = g() >> (64 - width);
    const int64_t s = int64_t(g()) >> (64 - width);
    for (Round r : kModes) {
      // f32/f64: the host's cvtsi2ss/cvtsi2sd honour the rounding mode.
      ASSERT_EQ(int_to_f32<int64_t>(s, r), B(host_i2f<int64_t, float>(s, r))) << s;
      ASSERT_EQ(int_to_f64<int64_t>(s, r), D(host_i2f<int64_t, double>(s, r))) << s;
      ASSERT_EQ(int_to_f32<uint64_t>(u, r), B(host_u2f<float>(u, r))) << u;
      ASSERT_EQ(int_to_f64<uint64_t>(u, r), D(host_u2f<double>(u, r))) << u;
      // f16: exact-integer reference.
      const bool neg = s < 0;
      const uint64_t mag = neg ? 0 - uint64_t(s) : uint64_t(s);
      ASSERT_EQ(int_to_f16<int64_t>(s, r), ref_round(F16(), neg, u128{mag} << 53, r, false)) << s;
      ASSERT_EQ(int_to_f16<uint64_t>(u, r), ref_round(F16(), false, u128{u} << 53, r, false)) << u;
    }
  }
}

// =============================================================================================
// Integer rounding in float format, .ftz, .sat
// =============================================================================================

TEST(RoundIntegral, HandCasesAndLibm) {
  EXPECT_EQ(round_int_f32(B(2.5f), Round::rn), 0x40000000u);   // 2.0
  EXPECT_EQ(round_int_f32(B(3.5f), Round::rn), 0x40800000u);   // 4.0
  EXPECT_EQ(round_int_f32(B(-0.5f), Round::rn), 0x80000000u);  // -0.0: the sign survives
  EXPECT_EQ(round_int_f32(B(0.5f), Round::rp), 0x3F800000u);   // 1.0
  EXPECT_EQ(round_int_f32(B(-0.5f), Round::rp), 0x80000000u);  // -0.0
  EXPECT_EQ(round_int_f32(B(-0.5f), Round::rm), 0xBF800000u);  // -1.0
  EXPECT_EQ(round_int_f32(B(1.9f), Round::rz), 0x3F800000u);
  // 2^23 - 0.5 ties 2^23 - 1 (odd) and 2^23 (exp 127+23 = 0x96 -> 0x4B000000, even).
  EXPECT_EQ(round_int_f32(B(8388607.5f), Round::rn), 0x4B000000u);
  EXPECT_EQ(round_int_f32(B(1e30f), Round::rn), B(1e30f));
  EXPECT_EQ(round_int_f32(0xFF800000u, Round::rn), 0xFF800000u);
  EXPECT_EQ(round_int_f32(0x7FC00001u, Round::rn), kNaNF32);
  EXPECT_EQ(round_int_f32(0x00000001u, Round::rp), 0x3F800000u);
  EXPECT_EQ(round_int_f32(0x00000001u, Round::rn), 0x00000000u);
  EXPECT_EQ(round_int_f64(D(2.5), Round::rn), D(2.0));
  EXPECT_EQ(round_int_f16(0x3E00, Round::rn), 0x4000);   // f16 1.5 -> 2.0
  EXPECT_EQ(round_int_bf16(0x3FC0, Round::rm), 0x3F80);  // bf16 1.5 -> 1.0
  for (int i = 0; i < 500000; ++i) {
    const uint32_t a = rand_f32(100, 160);
    const uint64_t d = rand_f64(1000, 1090);
    for (Round r : kModes) {
      if (!is_nan32(a)) { ASSERT_EQ(round_int_f32(a, r), B(float(ref_round_double(f32_from_bits(a), r)))) << std::hex << a; }
      if (!is_nan64(d)) { ASSERT_EQ(round_int_f64(d, r), D(ref_round_double(f64_from_bits(d), r))) << std::hex << d; }
    }
  }
}

TEST(FtzSat, Helpers) {
  EXPECT_EQ(ftz_f32(0x00000001u), 0x00000000u);
  EXPECT_EQ(ftz_f32(0x80400000u), 0x80000000u);  // negative subnormal -> -0
  EXPECT_EQ(ftz_f32(0x00800000u), 0x00800000u);  // smallest normal stays
  EXPECT_EQ(ftz_f32(0x7FC00000u), 0x7FC00000u);
  EXPECT_TRUE(is_subnormal_f32(0x807FFFFFu));
  EXPECT_FALSE(is_subnormal_f32(0x80000000u));
  EXPECT_EQ(sat_f32(0x7FC00000u), 0x00000000u);
  EXPECT_EQ(sat_f32(0x80000000u), 0x00000000u);
  EXPECT_EQ(sat_f32(B(1.5f)), 0x3F800000u);
  EXPECT_EQ(sat_f32(B(0.25f)), B(0.25f));
  EXPECT_EQ(sat_f32(0x7F800000u), 0x3F800000u);
  EXPECT_EQ(sat_f32(B(-3.0f)), 0x00000000u);
  EXPECT_EQ(ftz_f16(0x83FF), 0x8000);  // largest negative f16 subnormal -> -0
  EXPECT_EQ(ftz_f16(0x0400), 0x0400);  // smallest normal stays
  EXPECT_EQ(sat_f64(D(7.0)), D(1.0));
  EXPECT_EQ(sat_f16(0xFC00), 0x0000);
  // .ftz composition, e.g. add.rn.ftz.f32: flush inputs, compute, flush the result.
  // 2^-126 - 2^-149 (largest subnormal, 0x007FFFFF) + 2^-149 = 2^-126: normal, kept.
  EXPECT_EQ(ftz_f32(add_f32(0x007FFFFFu, 0x00000001u)), 0x00800000u);
  EXPECT_EQ(ftz_f32(add_f32(ftz_f32(0x007FFFFFu), ftz_f32(0x00000001u))), 0x00000000u);
}

// =============================================================================================
// min / max
// =============================================================================================

TEST(MinMax, PtxNaNAndSignedZeroRules) {
  const uint32_t one = 0x3F800000u, qnan = 0x7FC00000u, nnan = 0xFFC00001u;
  EXPECT_EQ(min_f32(qnan, one), one);  // one NaN: the other operand
  EXPECT_EQ(min_f32(one, nnan), one);
  EXPECT_EQ(max_f32(qnan, one), one);
  EXPECT_EQ(min_f32(qnan, nnan), kNaNF32);  // both NaN: canonical
  EXPECT_EQ(max_f32(nnan, qnan), kNaNF32);
  EXPECT_EQ(min_f32(one, qnan, true), kNaNF32);  // .NaN
  EXPECT_EQ(max_f32(qnan, one, true), kNaNF32);
  EXPECT_EQ(min_f32(one, B(2.0f), true), one);
  EXPECT_EQ(min_f32(0x80000000u, 0x00000000u), 0x80000000u);  // -0 < +0
  EXPECT_EQ(min_f32(0x00000000u, 0x80000000u), 0x80000000u);
  EXPECT_EQ(max_f32(0x80000000u, 0x00000000u), 0x00000000u);
  EXPECT_EQ(max_f32(0x00000000u, 0x80000000u), 0x00000000u);
  EXPECT_EQ(min_f32(B(-2.0f), B(-3.0f)), B(-3.0f));
  EXPECT_EQ(max_f32(0xFF800000u, B(-1.0f)), B(-1.0f));
  EXPECT_EQ(min_f32(0xFF800000u, one), 0xFF800000u);
  EXPECT_EQ(min_f32(0x00000001u, 0x80000001u), 0x80000001u);
  EXPECT_EQ(min_f64(D(NAN), D(2.0)), D(2.0));
  EXPECT_EQ(min_f64(D(NAN), D(NAN)), kNaNF64);
  EXPECT_EQ(max_f64(D(-0.0), D(0.0)), D(0.0));
  EXPECT_EQ(min_f16(0x7E00, 0x3C00), 0x3C00);
  EXPECT_EQ(min_f16(0x7E00, 0xFE01), kNaNF16);
  EXPECT_EQ(max_f16(0x3C00, 0x7E00, true), kNaNF16);
  EXPECT_EQ(min_f16(0x8000, 0x0000), 0x8000);
  EXPECT_EQ(max_bf16(0x8000, 0x0000), 0x0000);
  EXPECT_EQ(min_bf16(0xFFC0, 0x3F80), 0x3F80);
  EXPECT_EQ(min_bf16(0xFFC0, 0x7FC1), kNaNBF16);
  // Random non-NaN, non-zero operands: the same as a plain host comparison.
  for (int i = 0; i < 200000; ++i) {
    const uint32_t a = rand_f32(1, 254), b = rand_f32(1, 254);
    const float fa = f32_from_bits(a), fb = f32_from_bits(b);
    if (std::isnan(fa) || std::isnan(fb) || fa == 0 || fb == 0) continue;
    ASSERT_EQ(min_f32(a, b), fa < fb ? a : b);
    ASSERT_EQ(max_f32(a, b), fa > fb ? a : b);
  }
}

// =============================================================================================
// f16 / bf16 arithmetic
// =============================================================================================

TEST(ArithF16, HandCases) {
  // 1 + 2^-11 (f16 2^-11 = E 4 = 00100 -> 0x1000) ties 1.0 (even) and 0x3C01.
  EXPECT_EQ(add_f16(0x3C00, 0x1000), 0x3C00);
  EXPECT_EQ(add_f16(0x3C01, 0x1000), 0x3C02);  // ties 0x3C01 (odd) / 0x3C02 (even)
  // 65504 + 16 (16 = 2^4: E 19 = 10011 -> 0x4C00) = 65520: the overflow tie -> inf.
  EXPECT_EQ(add_f16(0x7BFF, 0x4C00), 0x7C00);
  EXPECT_EQ(add_f16(0x7BFF, 0x4800), 0x7BFF);  // + 8: 65512 rounds back to 65504
  EXPECT_EQ(sub_f16(0x3C00, 0x3C00), 0x0000);
  EXPECT_EQ(sub_f16(0x8000, 0x0000), 0x8000);  // -0 - +0 = -0
  EXPECT_EQ(add_f16(0x7C00, 0xFC00), kNaNF16);
  // 2^-24 * 0.5 (0x3800) = 2^-25: tie with 0 -> +0. 3 * 2^-24 * 0.5 ties 1 / 2 -> 0x0002.
  EXPECT_EQ(mul_f16(0x0001, 0x3800), 0x0000);
  EXPECT_EQ(mul_f16(0x0003, 0x3800), 0x0002);
  EXPECT_EQ(mul_f16(0x8001, 0x3800), 0x8000);
  // 255 * 255 = 65025; f16 spacing in [2^15, 2^16) is 32: 65024 = 2032 * 32 is nearest.
  // 65024 = 1.984375 * 2^15: E 30, fraction 0.984375 * 1024 = 1008 = 0x3F0 -> 0x7BF0.
  EXPECT_EQ(mul_f16(0x5BF8, 0x5BF8), 0x7BF0);
  // fma: (1 + 2^-10)^2 - 1 = 2^-9 + 2^-20 = 2^-9 (1 + 2^-11): a tie -> 2^-9 (E 6 -> 0x1800).
  EXPECT_EQ(fma_f16(0x3C01, 0x3C01, 0xBC00), 0x1800);
  // (1 + 2^-10)(1 - 2^-11) - 1 = 2^-11 - 2^-21 = 1.111111111b * 2^-12, exact:
  // E = 3 = 00011, fraction 1111111110 -> 0x0FFE. (0x3BFF is 1 - 2^-11.)
  EXPECT_EQ(fma_f16(0x3C01, 0x3BFF, 0xBC00), 0x0FFE);
  EXPECT_EQ(fma_f16(0x7C00, 0x0000, 0x3C00), kNaNF16);
  EXPECT_EQ(fma_bf16(0x3F80, 0x3F80, 0xBF80), 0x0000);
  // bf16: 1 + 2^-8 ties 0x3F80 / 0x3F81 -> 0x3F80. 2^-8 = exponent 119 = 0x77 -> 0x3B80.
  EXPECT_EQ(add_bf16(0x3F80, 0x3B80), 0x3F80);
  EXPECT_EQ(sub_bf16(0x3F80, 0x3F80), 0x0000);
  EXPECT_EQ(mul_bf16(0x3F81, 0x3F81), 0x3F82);  // (1 + 2^-7)^2 = 1 + 2^-6 + 2^-14 -> 0x3F82
}

namespace {
// Exact value of an f16 as a signed integer multiple of 2^-24 (from the definition).
__extension__ typedef __int128 i128;
i128 f16_units(uint16_t x) {  // x finite
  const int E = (x >> 10) & 31, F = x & 1023;
  const i128 m = E ? i128(1024 + F) << (E - 1) : i128(F);  // (1024+F) * 2^(E-25) = .. * 2^-24
  return (x & 0x8000) ? -m : m;
}
// Round (units * 2^-(24+extra)) to f16 with the reference, applying IEEE's exact-zero sign rule.
uint16_t ref_from_units(i128 v, int extra, bool zero_neg) {
  if (v == 0) return zero_neg ? 0x8000 : 0;
  const bool neg = v < 0;
  const u128 mag = u128(neg ? -v : v);
  return uint16_t(ref_round(F16(), neg, mag << (53 - 24 - extra), Round::rn, false));
}
uint16_t rand_finite_f16() {
  for (;;) {
    const uint16_t x = uint16_t(rng()());
    if ((x & 0x7C00) != 0x7C00) return x;
  }
}
}  // namespace

// f16 add/sub/mul/fma on random finite operands against exact integer arithmetic: a, b, c are
// integer multiples of 2^-24, so a*b is a multiple of 2^-48 and a*b + c is computed exactly in
// units of 2^-48 before the single reference rounding.
TEST(ArithF16, MatchesExactReference) {
  for (int i = 0; i < 600000; ++i) {
    uint16_t a = rand_finite_f16(), b = rand_finite_f16(), c = rand_finite_f16();
    if (i % 2) {  // half of the time steer exponents together: cancellation, ties, carries
      const int ea = (a >> 10) & 31;
      const int eb = std::clamp(ea + int(rng()() % 5) - 2, 0, 30);
      const int ec = std::clamp(ea + eb - 15 + int(rng()() % 5) - 2, 0, 30);  // near a*b
      b = uint16_t((b & 0x83FF) | (eb << 10));
      c = uint16_t((c & 0x83FF) | (ec << 10));
    }
    const i128 A = f16_units(a), B_ = f16_units(b), C = f16_units(c);
    const bool an = a & 0x8000, bn = b & 0x8000, cn = c & 0x8000;
    ASSERT_EQ(add_f16(a, b), ref_from_units(A + B_, 0, an && bn)) << std::hex << a << " " << b;
    ASSERT_EQ(sub_f16(a, b), ref_from_units(A - B_, 0, an && !bn)) << std::hex << a << " " << b;
    ASSERT_EQ(mul_f16(a, b), ref_from_units(A * B_, 24, an != bn)) << std::hex << a << " " << b;
    ASSERT_EQ(fma_f16(a, b, c), ref_from_units(A * B_ + (C << 24), 24, (an != bn) && cn))
        << std::hex << a << " " << b << " " << c;
  }
}

// bf16 mul against host double (a product of two 8-bit significands is exact in double) plus
// one f64 -> bf16 rounding; bf16 add likewise when the exponents are within 40 of each other.
TEST(ArithBF16, MatchesExactDoubleThenOneRounding) {
  auto& g = rng();
  for (int i = 0; i < 500000; ++i) {
    const uint16_t a = uint16_t(g()), b = uint16_t(g());
    const double x = f64_from_bits(bf16_to_f64(a)), y = f64_from_bits(bf16_to_f64(b));
    if (std::isnan(x) || std::isnan(y) || std::isinf(x) || std::isinf(y)) continue;
    ASSERT_EQ(mul_bf16(a, b), f64_to_bf16(D(x * y), Round::rn)) << std::hex << a << " " << b;
    const int ea = (a >> 7) & 0xFF, eb = (b >> 7) & 0xFF;
    if (std::abs(ea - eb) < 40) {
      ASSERT_EQ(add_bf16(a, b), f64_to_bf16(D(x + y), Round::rn)) << std::hex << a << " " << b;
    }
  }
}
