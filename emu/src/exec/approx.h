// The approximate f32 instructions (ex2, lg2, rcp, rsqrt, sqrt, sin, cos, tanh .approx;
// div.approx, div.full) and the error the PTX ISA allows each one: GPU100_EMU_APPROX chooses
// whether a result is the exact value rounded to nearest (`exact`, the default) or lies at the
// edge of the documented error (`bound-up`, `bound-down`, `bound-random`), so that a program
// whose tolerance only exact math meets fails here as it may on hardware.
//
// The bounds, from the PTX ISA's "Floating Point Instructions" pages (ISA 9.1,
// https://docs.nvidia.com/cuda/parallel-thread-execution/#floating-point-instructions-<op>):
//   rcp.approx.f32    "The maximum ulp error is 1 across the full range of inputs."
//   sqrt.approx.f32   "The maximum relative error over the entire positive finite floating-point
//                     range is 2^-23."
//   rsqrt.approx.f32  "The maximum relative error for rsqrt.f32 over the entire positive finite
//                     floating-point range is 2^-22.9."
//   ex2.approx.f32    "The maximum ulp error is 2 ulp from correctly rounded result across the
//                     full range of inputs."
//   lg2.approx.f32    "The maximum absolute error is 2^-22 when the input operand is in the range
//                     (0.5, 2). For positive finite inputs outside of this interval, maximum
//                     relative error is 2^-22."
//   sin/cos.approx.f32  maximum absolute error 2^-20.5 on [-2pi, 2pi], 2^-14.7 on
//                     [-100pi, 100pi]; "Outside of the range [-100pi .. +100pi], only best effort
//                     is provided. There are no defined error guarantees."
//   tanh.approx.f32   "The maximum relative error over the entire floating point range is 2^-11"
//                     (ISA 9.1; earlier ISA texts give 2^-10.987, the looser, used here).
//                     "The subnormal inputs gets passed through to the output".
//   div.approx.f32    "computed as d = a * (1/b). For |b| in [2^-126, 2^126], the maximum ulp
//                     error is 2. For 2^126 < |b| < 2^128, if a is infinity, div.approx.f32
//                     returns NaN, otherwise it returns a sign-preserving zero."
//   div.full.f32      "The maximum ulp error is 2 across the full range of inputs."
// Each page's table of special inputs (infinities, zeros, NaN) gives exact results; .ftz flushes
// subnormal inputs and results to sign-preserving zero.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace emu::approx {

enum class Mode : uint8_t { exact, up, down, random };

struct Config {
  Mode mode = Mode::exact;
  uint64_t seed = 0;
};

// The instruction, as it enters the choice of side under bound-random.
enum Op : uint32_t { rcp = 1, sqrt_, rsqrt, ex2, lg2, sin_, cos_, tanh_, div_approx, div_full };

inline uint64_t mix(uint64_t z) {  // splitmix64's finalizer
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The side of the bound a result takes: +1 above the exact value, -1 below, 0 the exact value
// rounded to nearest. Under bound-random the side is a function of the seed, the instruction and
// its operands, so one run gives one operand the same result wherever it is computed, and a run
// with the same seed gives the same results.
inline int side(const Config& c, Op op, uint32_t a, uint32_t b = 0) {
  switch (c.mode) {
    case Mode::exact: return 0;
    case Mode::up: return 1;
    case Mode::down: return -1;
    case Mode::random: break;
  }
  return (mix(c.seed ^ mix((uint64_t(op) << 56) ^ (uint64_t(b) << 32) ^ a)) & 1) ? 1 : -1;
}

// The spacing of f32 values at |y| (2^-149 in the subnormal range).
inline double ulp_f32(double y) {
  if (y == 0) return 0x1.0p-149;
  int e;
  std::frexp(std::fabs(y), &e);  // |y| in [2^(e-1), 2^e)
  const int E = e - 1 < -126 ? -126 : e - 1;
  return std::ldexp(1.0, E - 23);
}

// n representable f32 steps from r (n > 0 toward +Inf), staying finite and keeping r's sign
// (a step that would cross zero stops at zero of r's sign). NaN and infinities stay.
inline float step(float r, int n) {
  if (!std::isfinite(r)) return r;
  for (; n > 0; --n) {
    const float s = std::nextafter(r, INFINITY);
    if (!std::isfinite(s) || (std::signbit(r) && s == 0.0f)) break;
    r = s;
  }
  for (; n < 0; ++n) {
    const float s = std::nextafter(r, -INFINITY);
    if (!std::isfinite(s) || (!std::signbit(r) && s == 0.0f) || (r == 0.0f && !std::signbit(r))) break;
    r = s;
  }
  return r;
}

// The f32 at the edge of |r - y| <= e on side dir: for dir > 0 the largest f32 with r - y <= e,
// for dir < 0 the smallest with y - r <= e; never nearer y than y rounded to nearest (a bound
// below half an ulp leaves that one). dir == 0: y rounded to nearest. With .ftz a result whose
// nearest value is normal stays normal (the flush would otherwise move it out of the bound).
inline float keep_normal(float f, float rn, bool ftz) {
  return (ftz && std::fabs(rn) >= 0x1.0p-126f && std::fabs(f) < 0x1.0p-126f) ? std::copysign(0x1.0p-126f, rn) : f;
}
inline float edge(double y, double e, int dir, bool ftz) {
  const float rn = float(y);
  if (dir == 0 || !std::isfinite(rn) || std::isnan(y)) return rn;
  const double t = y + dir * e;
  float f = float(t);
  if (dir > 0) {
    if (double(f) > t) f = std::nextafter(f, -INFINITY);
    return keep_normal(f > rn ? f : rn, rn, ftz);
  }
  if (double(f) < t) f = std::nextafter(f, INFINITY);
  return keep_normal(f < rn ? f : rn, rn, ftz);
}

inline float clamp_unit(float r) { return r > 1.0f ? 1.0f : r < -1.0f ? -1.0f : r; }

constexpr double kPi = 3.14159265358979323846;

// The result of one approximate f32 instruction on operands a (and b for div) that .ftz has
// already flushed; dir as side() returns it. The caller flushes the result for .ftz.
inline float eval(Op op, float a, float b, int dir, bool ftz) {
  switch (op) {
    case rcp: {
      if (std::isnan(a)) return a;
      const double y = 1.0 / double(a);  // +-0 -> +-Inf, +-Inf -> +-0
      if (a == 0 || std::isinf(a)) return float(y);
      return edge(y, ulp_f32(y), dir, ftz);
    }
    case sqrt_: {
      if (std::isnan(a) || a < 0) return NAN;
      if (a == 0 || std::isinf(a)) return a;  // -0 -> -0
      const double y = std::sqrt(double(a));
      return edge(y, std::ldexp(y, -23), dir, ftz);
    }
    case rsqrt: {
      if (std::isnan(a) || a < 0) return NAN;
      if (a == 0) return std::copysign(INFINITY, a);  // -0 -> -Inf
      if (std::isinf(a)) return 0.0f;
      const double y = 1.0 / std::sqrt(double(a));
      return edge(y, y * 0x1.125fbee250669p-23, dir, ftz);  // 2^-22.9
    }
    case ex2: {
      if (std::isnan(a)) return a;
      if (std::isinf(a)) return a > 0 ? a : 0.0f;
      if (a == 0) return 1.0f;
      const float rn = float(std::exp2(double(a)));
      return keep_normal(step(rn, 2 * dir), rn, ftz);
    }
    case lg2: {
      if (std::isnan(a) || a < 0) return NAN;
      if (a == 0) return -INFINITY;
      if (std::isinf(a)) return a;
      const double y = std::log2(double(a));
      const double e = (a > 0.5f && a < 2.0f) ? 0x1.0p-22 : std::ldexp(std::fabs(y), -22);
      return edge(y, e, dir, ftz);
    }
    case sin_: case cos_: {
      if (std::isnan(a) || std::isinf(a)) return NAN;
      if (a == 0) return op == sin_ ? a : 1.0f;
      const double x = double(a), ax = std::fabs(x);
      const double y = op == sin_ ? std::sin(x) : std::cos(x);
      // Beyond +-100pi the ISA promises nothing; the edge keeps growing with |a| there, as the
      // error of a reduction of the argument in f32 does (and the result stays in [-1, 1]).
      const double e = ax <= 2 * kPi ? 0x1.6a09e667f3bcdp-21   // 2^-20.5
                       : ax <= 100 * kPi ? 0x1.3b2c47bff832cp-15  // 2^-14.7
                                         : 0x1.3b2c47bff832cp-15 * (ax / (100 * kPi));
      return clamp_unit(edge(y, e, dir, ftz));
    }
    case tanh_: {
      if (std::isnan(a)) return a;
      if (std::isinf(a)) return a > 0 ? 1.0f : -1.0f;
      if (a == 0 || std::fpclassify(a) == FP_SUBNORMAL) return a;  // passed through
      const double y = std::tanh(double(a));
      return clamp_unit(edge(y, std::fabs(y) * 0x1.0251353756991p-11, dir, ftz));  // 2^-10.987
    }
    case div_approx: case div_full: {
      if (std::isnan(a) || std::isnan(b)) return NAN;
      const float ab = std::fabs(b);
      if (op == div_approx && ab > 0x1.0p126f && std::isfinite(b)) {
        if (std::isinf(a)) return NAN;
        return (std::signbit(a) != std::signbit(b)) ? -0.0f : 0.0f;
      }
      if (op == div_approx && ab < 0x1.0p-126f && ab != 0) {
        // No bound below 2^-126: the definition, a times the reciprocal rounded to f32.
        return float(double(a) * double(float(1.0 / double(b))));
      }
      const double y = double(a) / double(b);
      if (y == 0 || !std::isfinite(y)) return float(y);
      return edge(y, 2 * ulp_f32(y), dir, ftz);
    }
  }
  return a;
}

}  // namespace emu::approx
