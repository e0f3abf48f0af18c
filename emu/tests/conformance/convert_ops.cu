// Conformance: cvt (and cvt.pack), one PTX instruction per case through inline asm.
//
// Float destinations: the exact source value rounded on the host into the destination format by
// alu_ref.h (integer arithmetic, IEEE 754 rounding with the ISA's .rn/.rna/.rz/.rm/.rp), plus the
// ISA's .sat, .relu and .satfinite rules. Integer destinations: the ISA's integer rounding
// (.rni/.rzi/.rmi/.rpi), "clamped to the destination range by default", and its NaN rule (zero,
// or 1 << (width-1) when the source is .f64 or the destination is 64-bit). Integer-to-integer
// conversions: truncate or extend per the source's signedness, .sat clamps, and a destination
// register wider than the type gets the result sign-extended (signed types) or zero-extended.
// NaN results are only required to be NaN in the destination format.
#include "conf_common.h"
#include "alu_ref.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

using namespace alu;

namespace {

struct Case {
  uint64_t a, b;
};

enum Op {
  // float -> narrower float
  CVT_RN_F16_F32, CVT_RZ_F16_F32, CVT_RM_F16_F32, CVT_RP_F16_F32, CVT_RN_SATFINITE_F16_F32,
  CVT_RN_RELU_F16_F32, CVT_RN_BF16_F32, CVT_RZ_BF16_F32, CVT_RZ_SATFINITE_BF16_F32,
  CVT_RN_F16X2_F32, CVT_RZ_BF16X2_F32, CVT_RNA_TF32_F32, CVT_RNA_SATFINITE_TF32_F32,
  CVT_RN_F32_F64, CVT_RZ_F32_F64, CVT_RM_F32_F64, CVT_RP_F32_F64, CVT_RN_F16_F64, CVT_RN_BF16_F64,
  CVT_RN_SATFINITE_E4M3X2_F32, CVT_RN_SATFINITE_E5M2X2_F32, CVT_RN_SATFINITE_RELU_E4M3X2_F32,
  CVT_RN_SATFINITE_E4M3X2_F16X2, CVT_RN_SATFINITE_E5M2X2_F16X2,
  // float -> wider float (exact)
  CVT_F32_F16, CVT_F32_BF16, CVT_F64_F32, CVT_F64_F16, CVT_RN_F16X2_E4M3X2, CVT_RN_F16X2_E5M2X2,
  // float -> integral float
  CVT_RNI_F32_F32, CVT_RZI_F32_F32, CVT_RMI_F32_F32, CVT_RPI_F32_F32, CVT_RNI_F64_F64,
  CVT_RZI_F64_F64, CVT_RMI_F64_F64, CVT_RPI_F64_F64, CVT_SAT_F32_F32, CVT_RN_SAT_F32_F64,
  // float -> integer: [rounding 4] x [dst s32 u32 s64 u64] for f32, then for f64
  F2I_FIRST,
  F2I_LAST = F2I_FIRST + 32 - 1,
  CVT_RZI_S16_F32, CVT_RNI_U16_F32, CVT_RZI_S8_F32, CVT_RMI_U8_F32, CVT_RNI_S32_F16, CVT_RZI_U32_F16,
  CVT_RNI_S32_BF16, CVT_RZI_S16_F64,
  // integer -> float: [rounding 4] x [f32.s32 f32.u32 f32.s64 f32.u64 f64.s64 f64.u64]
  I2F_FIRST,
  I2F_LAST = I2F_FIRST + 24 - 1,
  CVT_RN_F64_S32, CVT_RN_F16_S32, CVT_RZ_F16_U32, CVT_RM_F16_S32, CVT_RN_BF16_S32, CVT_RP_BF16_U32,
  // integer -> integer
  CVT_S32_S8, CVT_U32_U8, CVT_S32_S16, CVT_U32_U16, CVT_U16_U32, CVT_S16_S32, CVT_S64_S32,
  CVT_U64_U32, CVT_U64_S32, CVT_S64_U32, CVT_S8_S32_WIDE, CVT_U8_S32_WIDE, CVT_S32_S64,
  CVT_SAT_S8_S32, CVT_SAT_U8_S32, CVT_SAT_S16_S64, CVT_SAT_U32_S32, CVT_SAT_S32_U32,
  CVT_SAT_S32_S64, CVT_SAT_U64_S64, CVT_SAT_U16_S32,
  // cvt.pack
  PACK_SAT_S16_S32, PACK_SAT_U16_S32, PACK_SAT_U8_S32_B32, PACK_SAT_S8_S32_B32,
  PACK_SAT_U4_S32_B32, PACK_SAT_S4_S32_B32, PACK_SAT_S2_S32_B32,
  OP_COUNT
};

// Result kinds by output constraint; inputs by input constraint.
#define CV(OP, INS, OC, OT, IC, IV)                     \
  case OP: {                                            \
    OT r;                                               \
    asm(INS " %0, %1;" : OC(r) : IC(IV));               \
    res = (uint64_t)r;                                  \
    break;                                              \
  }
#define CVF(OP, INS, IC, IV)                            \
  case OP: {                                            \
    float r;                                            \
    asm(INS " %0, %1;" : "=f"(r) : IC(IV));             \
    res = __float_as_uint(r);                           \
    break;                                              \
  }
#define CVD(OP, INS, IC, IV)                            \
  case OP: {                                            \
    double r;                                           \
    asm(INS " %0, %1;" : "=d"(r) : IC(IV));             \
    res = (uint64_t)__double_as_longlong(r);            \
    break;                                              \
  }
#define CV2(OP, INS, OC, OT, IC, IV, IW)                \
  case OP: {                                            \
    OT r;                                               \
    asm(INS " %0, %1, %2;" : OC(r) : IC(IV), IC(IW));   \
    res = (uint64_t)r;                                  \
    break;                                              \
  }
#define PACK3(OP, INS)                                                        \
  case OP: {                                                                  \
    unsigned r;                                                               \
    asm(INS " %0, %1, %2, %3;" : "=r"(r) : "r"(ra), "r"(rb), "r"(0x9abcdef1u)); \
    res = r;                                                                  \
    break;                                                                    \
  }

typedef unsigned short u16;
typedef unsigned u32;
typedef unsigned long long u64;

// The float->integer block, in the order of F2I_FIRST..: rounding-major, then destination.
#define F2I4(BASE, RND, SRC, IC, IV)                                        \
  CV(BASE + 0, "cvt." RND ".s32." SRC, "=r", u32, IC, IV)                    \
  CV(BASE + 1, "cvt." RND ".u32." SRC, "=r", u32, IC, IV)                    \
  CV(BASE + 2, "cvt." RND ".s64." SRC, "=l", u64, IC, IV)                    \
  CV(BASE + 3, "cvt." RND ".u64." SRC, "=l", u64, IC, IV)
#define I2F6(BASE, RND)                                                     \
  CVF(BASE + 0, "cvt." RND ".f32.s32", "r", ra)                              \
  CVF(BASE + 1, "cvt." RND ".f32.u32", "r", ra)                              \
  CVF(BASE + 2, "cvt." RND ".f32.s64", "l", la)                              \
  CVF(BASE + 3, "cvt." RND ".f32.u64", "l", la)                              \
  CVD(BASE + 4, "cvt." RND ".f64.s64", "l", la)                              \
  CVD(BASE + 5, "cvt." RND ".f64.u64", "l", la)

// One kernel per op (OP is a template argument, so each instantiation holds just its own
// instruction): an instruction the emulator cannot load then fails only its own launch.
template <int OP>
__global__ void k_cvt(const Case* in, uint64_t* out, int n) {
  constexpr int op = OP;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const Case x = in[i];
    const float fa = __uint_as_float((u32)x.a), fb = __uint_as_float((u32)x.b);
    const double da = __longlong_as_double((long long)x.a);
    const u16 ha = (u16)x.a;
    const u32 ra = (u32)x.a, rb = (u32)x.b;
    const u64 la = x.a;
    uint64_t res = 0;
    switch (op) {
      CV(CVT_RN_F16_F32, "cvt.rn.f16.f32", "=h", u16, "f", fa)
      CV(CVT_RZ_F16_F32, "cvt.rz.f16.f32", "=h", u16, "f", fa)
      CV(CVT_RM_F16_F32, "cvt.rm.f16.f32", "=h", u16, "f", fa)
      CV(CVT_RP_F16_F32, "cvt.rp.f16.f32", "=h", u16, "f", fa)
      CV(CVT_RN_SATFINITE_F16_F32, "cvt.rn.satfinite.f16.f32", "=h", u16, "f", fa)
      CV(CVT_RN_RELU_F16_F32, "cvt.rn.relu.f16.f32", "=h", u16, "f", fa)
      CV(CVT_RN_BF16_F32, "cvt.rn.bf16.f32", "=h", u16, "f", fa)
      CV(CVT_RZ_BF16_F32, "cvt.rz.bf16.f32", "=h", u16, "f", fa)
      CV(CVT_RZ_SATFINITE_BF16_F32, "cvt.rz.satfinite.bf16.f32", "=h", u16, "f", fa)
      CV2(CVT_RN_F16X2_F32, "cvt.rn.f16x2.f32", "=r", u32, "f", fa, fb)
      CV2(CVT_RZ_BF16X2_F32, "cvt.rz.bf16x2.f32", "=r", u32, "f", fa, fb)
      CV(CVT_RNA_TF32_F32, "cvt.rna.tf32.f32", "=r", u32, "f", fa)
      CV(CVT_RNA_SATFINITE_TF32_F32, "cvt.rna.satfinite.tf32.f32", "=r", u32, "f", fa)
      CVF(CVT_RN_F32_F64, "cvt.rn.f32.f64", "d", da)
      CVF(CVT_RZ_F32_F64, "cvt.rz.f32.f64", "d", da)
      CVF(CVT_RM_F32_F64, "cvt.rm.f32.f64", "d", da)
      CVF(CVT_RP_F32_F64, "cvt.rp.f32.f64", "d", da)
      CV(CVT_RN_F16_F64, "cvt.rn.f16.f64", "=h", u16, "d", da)
      CV(CVT_RN_BF16_F64, "cvt.rn.bf16.f64", "=h", u16, "d", da)
      CV2(CVT_RN_SATFINITE_E4M3X2_F32, "cvt.rn.satfinite.e4m3x2.f32", "=h", u16, "f", fa, fb)
      CV2(CVT_RN_SATFINITE_E5M2X2_F32, "cvt.rn.satfinite.e5m2x2.f32", "=h", u16, "f", fa, fb)
      CV2(CVT_RN_SATFINITE_RELU_E4M3X2_F32, "cvt.rn.satfinite.relu.e4m3x2.f32", "=h", u16, "f", fa, fb)
      CV(CVT_RN_SATFINITE_E4M3X2_F16X2, "cvt.rn.satfinite.e4m3x2.f16x2", "=h", u16, "r", ra)
      CV(CVT_RN_SATFINITE_E5M2X2_F16X2, "cvt.rn.satfinite.e5m2x2.f16x2", "=h", u16, "r", ra)
      CVF(CVT_F32_F16, "cvt.f32.f16", "h", ha)
      CVF(CVT_F32_BF16, "cvt.f32.bf16", "h", ha)
      CVD(CVT_F64_F32, "cvt.f64.f32", "f", fa)
      CVD(CVT_F64_F16, "cvt.f64.f16", "h", ha)
      CV(CVT_RN_F16X2_E4M3X2, "cvt.rn.f16x2.e4m3x2", "=r", u32, "h", ha)
      CV(CVT_RN_F16X2_E5M2X2, "cvt.rn.f16x2.e5m2x2", "=r", u32, "h", ha)
      CVF(CVT_RNI_F32_F32, "cvt.rni.f32.f32", "f", fa)
      CVF(CVT_RZI_F32_F32, "cvt.rzi.f32.f32", "f", fa)
      CVF(CVT_RMI_F32_F32, "cvt.rmi.f32.f32", "f", fa)
      CVF(CVT_RPI_F32_F32, "cvt.rpi.f32.f32", "f", fa)
      CVD(CVT_RNI_F64_F64, "cvt.rni.f64.f64", "d", da)
      CVD(CVT_RZI_F64_F64, "cvt.rzi.f64.f64", "d", da)
      CVD(CVT_RMI_F64_F64, "cvt.rmi.f64.f64", "d", da)
      CVD(CVT_RPI_F64_F64, "cvt.rpi.f64.f64", "d", da)
      CVF(CVT_SAT_F32_F32, "cvt.sat.f32.f32", "f", fa)
      CVF(CVT_RN_SAT_F32_F64, "cvt.rn.sat.f32.f64", "d", da)
      F2I4(F2I_FIRST + 0, "rni", "f32", "f", fa)
      F2I4(F2I_FIRST + 4, "rzi", "f32", "f", fa)
      F2I4(F2I_FIRST + 8, "rmi", "f32", "f", fa)
      F2I4(F2I_FIRST + 12, "rpi", "f32", "f", fa)
      F2I4(F2I_FIRST + 16, "rni", "f64", "d", da)
      F2I4(F2I_FIRST + 20, "rzi", "f64", "d", da)
      F2I4(F2I_FIRST + 24, "rmi", "f64", "d", da)
      F2I4(F2I_FIRST + 28, "rpi", "f64", "d", da)
      CV(CVT_RZI_S16_F32, "cvt.rzi.s16.f32", "=h", u16, "f", fa)
      CV(CVT_RNI_U16_F32, "cvt.rni.u16.f32", "=h", u16, "f", fa)
      CV(CVT_RZI_S8_F32, "cvt.rzi.s8.f32", "=r", u32, "f", fa)
      CV(CVT_RMI_U8_F32, "cvt.rmi.u8.f32", "=r", u32, "f", fa)
      CV(CVT_RNI_S32_F16, "cvt.rni.s32.f16", "=r", u32, "h", ha)
      CV(CVT_RZI_U32_F16, "cvt.rzi.u32.f16", "=r", u32, "h", ha)
      CV(CVT_RNI_S32_BF16, "cvt.rni.s32.bf16", "=r", u32, "h", ha)
      CV(CVT_RZI_S16_F64, "cvt.rzi.s16.f64", "=h", u16, "d", da)
      I2F6(I2F_FIRST + 0, "rn")
      I2F6(I2F_FIRST + 6, "rz")
      I2F6(I2F_FIRST + 12, "rm")
      I2F6(I2F_FIRST + 18, "rp")
      CVD(CVT_RN_F64_S32, "cvt.rn.f64.s32", "r", ra)
      CV(CVT_RN_F16_S32, "cvt.rn.f16.s32", "=h", u16, "r", ra)
      CV(CVT_RZ_F16_U32, "cvt.rz.f16.u32", "=h", u16, "r", ra)
      CV(CVT_RM_F16_S32, "cvt.rm.f16.s32", "=h", u16, "r", ra)
      CV(CVT_RN_BF16_S32, "cvt.rn.bf16.s32", "=h", u16, "r", ra)
      CV(CVT_RP_BF16_U32, "cvt.rp.bf16.u32", "=h", u16, "r", ra)
      CV(CVT_S32_S8, "cvt.s32.s8", "=r", u32, "r", ra)
      CV(CVT_U32_U8, "cvt.u32.u8", "=r", u32, "r", ra)
      CV(CVT_S32_S16, "cvt.s32.s16", "=r", u32, "h", ha)
      CV(CVT_U32_U16, "cvt.u32.u16", "=r", u32, "h", ha)
      CV(CVT_U16_U32, "cvt.u16.u32", "=h", u16, "r", ra)
      CV(CVT_S16_S32, "cvt.s16.s32", "=h", u16, "r", ra)
      CV(CVT_S64_S32, "cvt.s64.s32", "=l", u64, "r", ra)
      CV(CVT_U64_U32, "cvt.u64.u32", "=l", u64, "r", ra)
      CV(CVT_U64_S32, "cvt.u64.s32", "=l", u64, "r", ra)
      CV(CVT_S64_U32, "cvt.s64.u32", "=l", u64, "r", ra)
      CV(CVT_S8_S32_WIDE, "cvt.s8.s32", "=r", u32, "r", ra)
      CV(CVT_U8_S32_WIDE, "cvt.u8.s32", "=r", u32, "r", ra)
      CV(CVT_S32_S64, "cvt.s32.s64", "=r", u32, "l", la)
      CV(CVT_SAT_S8_S32, "cvt.sat.s8.s32", "=r", u32, "r", ra)
      CV(CVT_SAT_U8_S32, "cvt.sat.u8.s32", "=r", u32, "r", ra)
      CV(CVT_SAT_S16_S64, "cvt.sat.s16.s64", "=h", u16, "l", la)
      CV(CVT_SAT_U32_S32, "cvt.sat.u32.s32", "=r", u32, "r", ra)
      CV(CVT_SAT_S32_U32, "cvt.sat.s32.u32", "=r", u32, "r", ra)
      CV(CVT_SAT_S32_S64, "cvt.sat.s32.s64", "=r", u32, "l", la)
      CV(CVT_SAT_U64_S64, "cvt.sat.u64.s64", "=l", u64, "l", la)
      CV(CVT_SAT_U16_S32, "cvt.sat.u16.s32", "=h", u16, "r", ra)
      CV2(PACK_SAT_S16_S32, "cvt.pack.sat.s16.s32", "=r", u32, "r", ra, rb)
      CV2(PACK_SAT_U16_S32, "cvt.pack.sat.u16.s32", "=r", u32, "r", ra, rb)
      PACK3(PACK_SAT_U8_S32_B32, "cvt.pack.sat.u8.s32.b32")
      PACK3(PACK_SAT_S8_S32_B32, "cvt.pack.sat.s8.s32.b32")
      PACK3(PACK_SAT_U4_S32_B32, "cvt.pack.sat.u4.s32.b32")
      PACK3(PACK_SAT_S4_S32_B32, "cvt.pack.sat.s4.s32.b32")
      PACK3(PACK_SAT_S2_S32_B32, "cvt.pack.sat.s2.s32.b32")
      default:
        break;
    }
    out[i] = res;
  }
}

const auto kKernels =
    conf_kernel_table<Case, OP_COUNT>([](auto op) { return &k_cvt<decltype(op)::value>; });

// ---- host ----

// How a source operand prints: as a float of some format, or as an integer.
struct Src {
  bool is_float;
  Fmt f;
  int bits;  // integer width when !is_float
};
const Src S_F32{true, F32, 0}, S_F64{true, F64, 0}, S_F16{true, F16, 0}, S_BF16{true, BF16, 0};
const Src S_I32{false, F32, 32}, S_I64{false, F32, 64}, S_I16{false, F32, 16};

ConfStr show_src(uint64_t v, const Src& s) {
  if (s.is_float)
    return conf_fmt("%.17g(0x%0*llx)", to_double(v, s.f), s.f.width() / 4, (unsigned long long)v);
  if (s.bits == 64) return conf_fmt("%lld(0x%llx)", (long long)v, (unsigned long long)v);
  return conf_fmt("%lld(0x%llx)", (long long)(int32_t)(uint32_t)v, (unsigned long long)(uint32_t)v);
}

// One result lane: its bit position and width in the result word and, for float lanes, format.
struct Lane {
  int shift;
  int width;
  bool is_float;
  Fmt f;
};
const Lane L_F16{0, 16, true, F16}, L_BF16{0, 16, true, BF16}, L_F32{0, 32, true, F32},
    L_F64{0, 64, true, F64}, L_U16{0, 16, false, F16}, L_U32{0, 32, false, F32},
    L_U64{0, 64, false, F32};

void expect_lane(const char* name, const char* in, uint64_t got_word, const Val& v, const Lane& l) {
  if (v.skip) return;
  const uint64_t mask = l.width == 64 ? ~0ull : ((1ull << l.width) - 1);
  const uint64_t got = (got_word >> l.shift) & mask;
  if (v.any_nan) {
    conf_check_text(name, in, l.is_float && is_nan_bits(got, l.f),
                    conf_fmt("0x%llx", (unsigned long long)got).s, "NaN");
    return;
  }
  if (l.is_float) conf_check_bits(name, in, got, v.bits, l.width);
  else conf_check(name, in, got, v.bits & mask);
}

using RefFn = std::function<Val(uint64_t)>;

// Single-source, single-lane conversions.
void check(int op, const char* name, const Src& src, const Lane& lane, const std::vector<uint64_t>& inputs,
           RefFn ref) {
  std::vector<Case> cases;
  for (uint64_t a : inputs) cases.push_back({a, 0});
  std::vector<uint64_t> got = conf_run(kKernels[op], name, cases);
  for (size_t i = 0; i < got.size(); ++i)
    expect_lane(name, show_src(cases[i].a, src).s, got[i], ref(cases[i].a), lane);
}

// Two lanes: hi from operand/lane a, lo from b, each converted by ref (the x2 packing rule
// "the value converted from input a is stored in the upper half of d").
void check_x2(int op, const char* name, const Src& src, Lane lo, const std::vector<Case>& cases,
              std::function<Val(uint64_t)> ref, std::function<uint64_t(const Case&, int)> lane_src) {
  std::vector<uint64_t> got = conf_run(kKernels[op], name, cases);
  Lane hi = lo;
  hi.shift = lo.width;
  for (size_t i = 0; i < got.size(); ++i)
    for (int k = 0; k < 2; ++k) {
      uint64_t s = lane_src(cases[i], k);
      ConfStr nm = conf_fmt("%s[%s]", name, k ? "hi" : "lo");
      expect_lane(nm.s, show_src(s, src).s, got[i], ref(s), k ? hi : lo);
    }
}

// ---- reference conversions ----

// Float to narrower/wider float with rounding r; NaN stays NaN.
Val f2f(uint64_t a, Fmt from, Fmt to, Rnd r) {
  Exact e = decode(a, from);
  if (e.nan) return nan_val();
  return Val{round_to(e, to, r)};
}
// .satfinite: NaN stays NaN; "If the absolute value of input (ignoring sign) is greater than
// MAX_NORM of the specified destination format, then the result is sign-preserved MAX_NORM".
Val f2f_satfinite(uint64_t a, Fmt from, Fmt to, Rnd r) {
  Exact e = decode(a, from);
  if (e.nan) return nan_val();
  const uint64_t maxb = max_bits(to, false);
  const double maxv = to_double(maxb, to);
  if (e.inf || std::abs(to_double(a, from)) > maxv) return Val{max_bits(to, e.neg)};
  return Val{round_to(e, to, r)};
}

// Integer rounding to an integral value kept in the float format; a zero result keeps the
// source's sign (IEEE roundToIntegral), infinities stay.
Val f2integral(uint64_t a, Fmt f, Rnd r) {
  Exact e = decode(a, f);
  if (e.nan) return nan_val();
  if (e.inf || e.exp >= 0) return Val{a};  // already an integer (every |x| >= 2^mbits is)
  bool neg;
  u128 m = round_to_integer(e, r, &neg);
  if (m == 0) return Val{neg ? (1ull << (f.width() - 1)) : 0};
  return Val{round_to(from_int(neg, m), f, Rnd::RN)};  // exact: the integer is representable
}

// Float to integer of `width` bits: rounding per r, clamped to the range; NaN gives 0 unless the
// source is .f64 or the destination is 64-bit, then 1 << (width-1). The result is returned as
// the destination register sees it: sign-extended to reg_bits for signed destinations.
Val f2i(uint64_t a, Fmt f, Rnd r, int width, bool is_signed, int reg_bits) {
  Exact e = decode(a, f);
  uint64_t v;
  if (e.nan) {
    v = (f.mbits != 52 && width != 64) ? 0 : (1ull << (width - 1));
  } else {
    __int128 lo = is_signed ? -((__int128)1 << (width - 1)) : 0;
    __int128 hi = is_signed ? (((__int128)1 << (width - 1)) - 1) : (((__int128)1 << width) - 1);
    __int128 val;
    if (e.inf) {
      val = e.neg ? lo : hi;
    } else {
      bool neg;
      u128 m = round_to_integer(e, r, &neg);
      if (m > ((u128)1 << 100)) m = (u128)1 << 100;  // far outside any range; keeps the sign math simple
      val = neg ? -(__int128)m : (__int128)m;
      if (val < lo) val = lo;
      if (val > hi) val = hi;
    }
    v = (uint64_t)val;
  }
  if (width < 64) v &= (1ull << width) - 1;
  if (is_signed && width < reg_bits && ((v >> (width - 1)) & 1)) v |= ~0ull << width;  // sign-extend
  if (reg_bits < 64) v &= (1ull << reg_bits) - 1;
  return Val{v};
}

// Integer (as a signed or unsigned 64-bit value) to float with rounding r; zero is +0.
Val i2f(uint64_t v, bool is_signed, int src_bits, Fmt to, Rnd r) {
  Exact e;
  if (is_signed) {
    int64_t s = src_bits == 32 ? (int64_t)(int32_t)(uint32_t)v : (int64_t)v;
    e = from_s64(s);
  } else {
    e = from_u64(src_bits == 32 ? (uint32_t)v : v);
  }
  return Val{round_to(e, to, r)};
}

int64_t sext(uint64_t v, int bits) { return bits == 64 ? (int64_t)v : ((int64_t)(v << (64 - bits)) >> (64 - bits)); }
uint64_t zext(uint64_t v, int bits) { return bits == 64 ? v : v & ((1ull << bits) - 1); }
int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

}  // namespace

int main() {
  conf_require_device();

  // f32 sources for narrowing: f16 boundaries (65504 max, 65520 = the midpoint to 2^16 where .rn
  // starts overflowing, subnormals down to 2^-24 and the ties around them), bf16/tf32 ties.
  const std::vector<uint64_t> f32in = {
      0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x3f801000 /*1+2^-11: f16 tie*/,
      0x3f803000 /*1+3*2^-11: tie up*/, 0x3f801001, 0x3f800fff, 0x477fe000 /*65504*/,
      0x477fefff /*65519.996*/, 0x477ff000 /*65520*/, 0xc77ff000, 0x47800000 /*65536*/,
      0x501502f9 /*1e10*/, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001,
      0x7f800001, 0x33800000 /*2^-24: min f16 subnormal*/, 0x33000000 /*2^-25: tie to 0*/,
      0x33400000 /*1.5*2^-25*/, 0x33000001, 0xb3000000, 0xb3400000, 0x32800000 /*2^-26*/,
      0x387fc000 /*f16 max subnormal*/, 0x38800000 /*f16 min normal*/, 0x387ff000, 0x38801000,
      0x00000001, 0x80000001, 0x007fffff, 0x3f808000 /*1+2^-8: bf16 tie*/, 0x3f818000 /*bf16 tie up*/,
      0x3f808001, 0x3f804000, 0x3f801800, 0x3f800800, 0x3dcccccd, 0xbdcccccd, 0x3eaaaaab,
      0x7f7f8000 /*bf16 round-up to inf*/, 0x4b800001, 0x43e00000 /*448*/, 0x43e80000 /*464*/,
      0x43f00000 /*480*/, 0x447a0000 /*1000*/, 0x47600000 /*57344*/, 0x47700000 /*61440*/,
      0x3b000000 /*2^-9*/, 0x3a800000 /*2^-10*/, 0x3ac00000 /*1.5*2^-10*/, 0x37800000 /*2^-16*/,
      0x37000000 /*2^-17*/, 0x3f880000 /*1.0625*/, 0x3f980000 /*1.1875*/, 0xc1100000 /*-9*/,
      0x3c800000 /*2^-6*/, 0x3c000000, 0x38000000, 0x3f7fffff};

  // ---- f32 -> f16 / bf16 / tf32 ----
  {
    const int f16ops[4] = {CVT_RN_F16_F32, CVT_RZ_F16_F32, CVT_RM_F16_F32, CVT_RP_F16_F32};
    for (int m = 0; m < 4; ++m) {
      Rnd r = kRoundings[m];
      check(f16ops[m], conf_fmt("cvt.%s.f16.f32", kRoundingNames[m]).s, S_F32, L_F16, f32in,
            [r](uint64_t a) { return f2f(a, F32, F16, r); });
    }
    check(CVT_RN_SATFINITE_F16_F32, "cvt.rn.satfinite.f16.f32", S_F32, L_F16, f32in,
          [](uint64_t a) { return f2f_satfinite(a, F32, F16, Rnd::RN); });
    check(CVT_RN_RELU_F16_F32, "cvt.rn.relu.f16.f32", S_F32, L_F16, f32in,
          [](uint64_t a) { return relu(f2f(a, F32, F16, Rnd::RN), F16); });
    check(CVT_RN_BF16_F32, "cvt.rn.bf16.f32", S_F32, L_BF16, f32in, [](uint64_t a) { return f2f(a, F32, BF16, Rnd::RN); });
    check(CVT_RZ_BF16_F32, "cvt.rz.bf16.f32", S_F32, L_BF16, f32in, [](uint64_t a) { return f2f(a, F32, BF16, Rnd::RZ); });
    check(CVT_RZ_SATFINITE_BF16_F32, "cvt.rz.satfinite.bf16.f32", S_F32, L_BF16, f32in,
          [](uint64_t a) { return f2f_satfinite(a, F32, BF16, Rnd::RZ); });
    // tf32 keeps f32's layout with the low 13 mantissa bits zero: the 19-bit encoding << 13.
    auto tf32 = [](Val v) {
      if (!v.any_nan) v.bits <<= 13;
      return v;
    };
    Lane tl = L_F32;
    check(CVT_RNA_TF32_F32, "cvt.rna.tf32.f32", S_F32, tl, f32in, [tf32](uint64_t a) {
      return tf32(f2f(a, F32, TF32, Rnd::RNA));
    });
    std::vector<uint64_t> tin = f32in;
    tin.insert(tin.end(), {0x3f801000 /*tf32 tie: away*/, 0xbf801000, 0x3f803000, 0x3f800fff, 0x7f7fefff, 0x7f7ff000});
    check(CVT_RNA_SATFINITE_TF32_F32, "cvt.rna.satfinite.tf32.f32", S_F32, tl, tin, [tf32](uint64_t a) {
      return tf32(f2f_satfinite(a, F32, TF32, Rnd::RNA));
    });
    std::vector<Case> pairs;
    for (size_t i = 0; i < f32in.size(); ++i) pairs.push_back({f32in[i], f32in[(i * 5 + 3) % f32in.size()]});
    auto lanes_ab = [](const Case& c, int k) { return k ? c.a : c.b; };  // a -> upper, b -> lower
    check_x2(CVT_RN_F16X2_F32, "cvt.rn.f16x2.f32", S_F32, L_F16, pairs,
             [](uint64_t a) { return f2f(a, F32, F16, Rnd::RN); }, lanes_ab);
    check_x2(CVT_RZ_BF16X2_F32, "cvt.rz.bf16x2.f32", S_F32, L_BF16, pairs,
             [](uint64_t a) { return f2f(a, F32, BF16, Rnd::RZ); }, lanes_ab);

    // ---- fp8: .satfinite is mandatory; e4m3 has no infinity (max 448), e5m2 max is 57344 ----
    Lane b8{0, 8, true, E4M3}, b8e5{0, 8, true, E5M2};
    check_x2(CVT_RN_SATFINITE_E4M3X2_F32, "cvt.rn.satfinite.e4m3x2.f32", S_F32, b8, pairs,
             [](uint64_t a) { return f2f_satfinite(a, F32, E4M3, Rnd::RN); }, lanes_ab);
    check_x2(CVT_RN_SATFINITE_E5M2X2_F32, "cvt.rn.satfinite.e5m2x2.f32", S_F32, b8e5, pairs,
             [](uint64_t a) { return f2f_satfinite(a, F32, E5M2, Rnd::RN); }, lanes_ab);
    check_x2(CVT_RN_SATFINITE_RELU_E4M3X2_F32, "cvt.rn.satfinite.relu.e4m3x2.f32", S_F32, b8, pairs,
             [](uint64_t a) { return relu(f2f_satfinite(a, F32, E4M3, Rnd::RN), E4M3); }, lanes_ab);
    // From f16x2: the upper f16 goes to the upper byte.
    std::vector<Case> hp;
    const std::vector<uint64_t> h = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x5f00 /*448*/, 0x5f40 /*464*/,
                                     0x5f80 /*480*/, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x1800 /*2^-9*/,
                                     0x1400 /*2^-10*/, 0x1600, 0x3c40 /*1.0625*/, 0x3cc0 /*1.1875*/,
                                     0x7b00 /*57344*/, 0x7b80 /*61440*/, 0x0001, 0x0400, 0x3555, 0xc880};
    for (size_t i = 0; i < h.size(); ++i)
      for (size_t j = 0; j < h.size(); j += 3) hp.push_back({h[j] | (h[i] << 16), 0});
    auto lanes_h = [](const Case& c, int k) { return (c.a >> (16 * k)) & 0xffff; };
    check_x2(CVT_RN_SATFINITE_E4M3X2_F16X2, "cvt.rn.satfinite.e4m3x2.f16x2", S_F16, b8, hp,
             [](uint64_t a) { return f2f_satfinite(a, F16, E4M3, Rnd::RN); }, lanes_h);
    check_x2(CVT_RN_SATFINITE_E5M2X2_F16X2, "cvt.rn.satfinite.e5m2x2.f16x2", S_F16, b8e5, hp,
             [](uint64_t a) { return f2f_satfinite(a, F16, E5M2, Rnd::RN); }, lanes_h);
    // And back: every byte value of both formats, exactly representable in f16.
    std::vector<Case> bytes;
    for (uint32_t i = 0; i < 256; ++i) bytes.push_back({(i << 8) | ((i * 37 + 11) & 0xff), 0});
    auto lanes_b = [](const Case& c, int k) { return (c.a >> (8 * k)) & 0xff; };
    const Src S_E4M3{true, E4M3, 0}, S_E5M2{true, E5M2, 0};
    check_x2(CVT_RN_F16X2_E4M3X2, "cvt.rn.f16x2.e4m3x2", S_E4M3, L_F16, bytes,
             [](uint64_t a) { return f2f(a, E4M3, F16, Rnd::RN); }, lanes_b);
    check_x2(CVT_RN_F16X2_E5M2X2, "cvt.rn.f16x2.e5m2x2", S_E5M2, L_F16, bytes,
             [](uint64_t a) { return f2f(a, E5M2, F16, Rnd::RN); }, lanes_b);
  }

  // ---- widening (exact) ----
  {
    std::vector<uint64_t> hin;
    for (uint32_t i = 0; i < 65536; i += 97) hin.push_back(i);
    hin.insert(hin.end(), {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0x7c00, 0xfc00, 0x7c01, 0xfe00});
    check(CVT_F32_F16, "cvt.f32.f16", S_F16, L_F32, hin, [](uint64_t a) { return f2f(a, F16, F32, Rnd::RN); });
    check(CVT_F64_F16, "cvt.f64.f16", S_F16, L_F64, hin, [](uint64_t a) { return f2f(a, F16, F64, Rnd::RN); });
    std::vector<uint64_t> bin = hin;
    bin.insert(bin.end(), {0x7f7f, 0x7f80, 0xff80, 0x7fc0, 0x0080, 0x007f});
    // "For cvt.f32.bf16, NaN input yields unspecified NaN" -- f2f already only asks for a NaN.
    check(CVT_F32_BF16, "cvt.f32.bf16", S_BF16, L_F32, bin, [](uint64_t a) { return f2f(a, BF16, F32, Rnd::RN); });
    check(CVT_F64_F32, "cvt.f64.f32", S_F32, L_F64, f32in, [](uint64_t a) { return f2f(a, F32, F64, Rnd::RN); });
  }

  // ---- f64 -> f32 / f16 / bf16 ----
  {
    const std::vector<uint64_t> d = {
        0x0000000000000000ull, 0x8000000000000000ull, 0x3ff0000000000000ull, 0x3ff0000010000000ull /*f32 tie*/,
        0x3ff0000030000000ull /*tie up*/, 0x3ff0000010000001ull, 0x3ff000000fffffffull, 0xbff0000010000000ull,
        0x47efffffe0000000ull /*f32 max*/, 0x47efffffefffffffull, 0x47effffff0000000ull /*midpoint to 2^128*/,
        0x47f0000000000000ull, 0x7fefffffffffffffull, 0xffefffffffffffffull, 0x7ff0000000000000ull,
        0xfff0000000000000ull, 0x7ff8000000000000ull, 0x36a0000000000000ull /*2^-149*/,
        0x3690000000000000ull /*2^-150: tie to 0*/, 0x3698000000000000ull, 0xb690000000000000ull,
        0x3680000000000000ull, 0x0000000000000001ull, 0x8000000000000001ull, 0x380fffffe0000000ull,
        0x3810000000000000ull, 0x3fb999999999999aull, 0x3fd5555555555555ull, 0x40effc0000000000ull /*65504*/,
        0x40effe0000000000ull /*65520*/, 0x3e70000000000000ull /*2^-24*/, 0x3e60000000000000ull,
        0x3ff0100000000000ull /*bf16 tie*/, 0x3ff0100000000001ull, 0x4202a05f20000000ull};
    const int ops[4] = {CVT_RN_F32_F64, CVT_RZ_F32_F64, CVT_RM_F32_F64, CVT_RP_F32_F64};
    for (int m = 0; m < 4; ++m) {
      Rnd r = kRoundings[m];
      check(ops[m], conf_fmt("cvt.%s.f32.f64", kRoundingNames[m]).s, S_F64, L_F32, d,
            [r](uint64_t a) { return f2f(a, F64, F32, r); });
    }
    check(CVT_RN_F16_F64, "cvt.rn.f16.f64", S_F64, L_F16, d, [](uint64_t a) { return f2f(a, F64, F16, Rnd::RN); });
    check(CVT_RN_BF16_F64, "cvt.rn.bf16.f64", S_F64, L_BF16, d, [](uint64_t a) { return f2f(a, F64, BF16, Rnd::RN); });
    // .sat for float destinations: clamp to [0.0, 1.0], NaN -> +0.0 (-0.0 left unchecked).
    auto sat = [](Val v, Fmt f) {
      if (v.any_nan) return Val{0};
      const uint64_t sign = 1ull << (f.width() - 1), one = (uint64_t)f.bias() << f.mbits;
      if (v.bits == sign) return skip_val();
      if (v.bits & sign) return Val{0};
      if (v.bits > one) return Val{one};
      return v;
    };
    check(CVT_RN_SAT_F32_F64, "cvt.rn.sat.f32.f64", S_F64, L_F32, d, [sat](uint64_t a) { return sat(f2f(a, F64, F32, Rnd::RN), F32); });
    check(CVT_SAT_F32_F32, "cvt.sat.f32.f32", S_F32, L_F32, f32in, [sat](uint64_t a) { return sat(f2f(a, F32, F32, Rnd::RN), F32); });
  }

  // ---- rounding to integral values in float format ----
  const std::vector<uint64_t> fint32 = {
      0x00000000, 0x80000000, 0x3f000000 /*0.5*/, 0x3fc00000 /*1.5*/, 0x40200000 /*2.5*/, 0xbf000000,
      0xbfc00000, 0xc0200000, 0x3effffff /*0.49999997*/, 0x3f800000, 0xbf800000, 0x42ff0000 /*127.5*/,
      0x43000000 /*128*/, 0xc3008000 /*-128.5*/, 0xc3010000 /*-129*/, 0x437f8000 /*255.5*/, 0x43800000,
      0x46ffff00 /*32767.5*/, 0xc7000080 /*-32768.5*/, 0x477fff80 /*65535.5*/, 0x4f000000 /*2^31*/,
      0xcf000000 /*-2^31*/, 0xcf000001, 0x4f7fffff /*4294967040*/, 0x4f800000 /*2^32*/,
      0x5f000000 /*2^63*/, 0xdf000000 /*-2^63*/, 0x5f800000 /*2^64*/, 0x60ad78ec /*1e20*/,
      0xe0ad78ec, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x00000001, 0x80000001,
      0x2edbe6ff /*1e-10*/, 0xaedbe6ff, 0x4b000001 /*2^23+1*/, 0x4b800000, 0x406ccccd /*3.7*/,
      0xc06ccccd, 0x4996b43c /*1234567.5*/, 0x3e99999a /*0.3*/, 0xbe99999a, 0x7f7fffff, 0xbf400000 /*-0.75*/};
  const std::vector<uint64_t> fint64 = {
      0x0000000000000000ull, 0x8000000000000000ull, 0x3fe0000000000000ull, 0x3ff8000000000000ull,
      0x4004000000000000ull, 0xbfe0000000000000ull, 0xbff8000000000000ull, 0xc004000000000000ull,
      0x3fdfffffffffffffull, 0x3fe0000000000001ull, 0x41dfffffffe00000ull /*2147483647.5*/,
      0x41dfffffffc00000ull /*2147483647*/, 0xc1e0000000100000ull /*-2147483648.5*/,
      0xc1e0000000200000ull /*-2147483649*/, 0x41effffffffe0000ull /*4294967295.5*/,
      0x41efffffffecccccull /*4294967295.4*/, 0x41f0000000000000ull /*2^32*/, 0x4340000000000001ull,
      0x43e0000000000000ull /*2^63*/, 0xc3e0000000000000ull /*-2^63*/, 0xc3e0000000000001ull,
      0x43f0000000000000ull /*2^64*/, 0x43efffffffffffffull, 0x7ff0000000000000ull, 0xfff0000000000000ull,
      0x7ff8000000000000ull, 0x0000000000000001ull, 0x8000000000000001ull, 0x400d99999999999aull /*3.7*/,
      0xc00d99999999999aull, 0x40dfffe000000000ull /*32767.5*/, 0xc0e0001000000000ull /*-32768.5*/,
      0x4330000000000001ull /*2^52+1*/, 0x7fefffffffffffffull, 0xbfd3333333333333ull /*-0.3*/};
  {
    const int f32ops[4] = {CVT_RNI_F32_F32, CVT_RZI_F32_F32, CVT_RMI_F32_F32, CVT_RPI_F32_F32};
    const int f64ops[4] = {CVT_RNI_F64_F64, CVT_RZI_F64_F64, CVT_RMI_F64_F64, CVT_RPI_F64_F64};
    const char* iname[4] = {"rni", "rzi", "rmi", "rpi"};
    for (int m = 0; m < 4; ++m) {
      Rnd r = kRoundings[m];
      check(f32ops[m], conf_fmt("cvt.%s.f32.f32", iname[m]).s, S_F32, L_F32, fint32, [r](uint64_t a) { return f2integral(a, F32, r); });
      check(f64ops[m], conf_fmt("cvt.%s.f64.f64", iname[m]).s, S_F64, L_F64, fint64, [r](uint64_t a) { return f2integral(a, F64, r); });
    }

    // ---- float -> integer ----
    const char* dname[4] = {"s32", "u32", "s64", "u64"};
    const int dwidth[4] = {32, 32, 64, 64};
    const bool dsigned[4] = {true, false, true, false};
    for (int src = 0; src < 2; ++src)
      for (int m = 0; m < 4; ++m)
        for (int dt = 0; dt < 4; ++dt) {
          const int op = F2I_FIRST + src * 16 + m * 4 + dt;
          const Fmt f = src ? F64 : F32;
          const Rnd r = kRoundings[m];
          const int w = dwidth[dt];
          const bool s = dsigned[dt];
          ConfStr nm = conf_fmt("cvt.%s.%s.%s", iname[m], dname[dt], src ? "f64" : "f32");
          check(op, nm.s, src ? S_F64 : S_F32, w == 64 ? L_U64 : L_U32, src ? fint64 : fint32,
                [=](uint64_t a) { return f2i(a, f, r, w, s, w); });
        }
    check(CVT_RZI_S16_F32, "cvt.rzi.s16.f32", S_F32, L_U16, fint32, [](uint64_t a) { return f2i(a, F32, Rnd::RZ, 16, true, 16); });
    check(CVT_RNI_U16_F32, "cvt.rni.u16.f32", S_F32, L_U16, fint32, [](uint64_t a) { return f2i(a, F32, Rnd::RN, 16, false, 16); });
    // 8-bit destinations in 32-bit registers: "sign-extended to the destination register width
    // for signed integers, and zero-extended ... for unsigned".
    check(CVT_RZI_S8_F32, "cvt.rzi.s8.f32 (b32 reg)", S_F32, L_U32, fint32, [](uint64_t a) { return f2i(a, F32, Rnd::RZ, 8, true, 32); });
    check(CVT_RMI_U8_F32, "cvt.rmi.u8.f32 (b32 reg)", S_F32, L_U32, fint32, [](uint64_t a) { return f2i(a, F32, Rnd::RM, 8, false, 32); });
    check(CVT_RZI_S16_F64, "cvt.rzi.s16.f64", S_F64, L_U16, fint64, [](uint64_t a) { return f2i(a, F64, Rnd::RZ, 16, true, 16); });
    std::vector<uint64_t> hin;
    for (uint32_t i = 0; i < 65536; i += 251) hin.push_back(i);
    hin.insert(hin.end(), {0x3800, 0x3e00, 0x4100, 0xb800, 0xbe00, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x0001});
    check(CVT_RNI_S32_F16, "cvt.rni.s32.f16", S_F16, L_U32, hin, [](uint64_t a) { return f2i(a, F16, Rnd::RN, 32, true, 32); });
    check(CVT_RZI_U32_F16, "cvt.rzi.u32.f16", S_F16, L_U32, hin, [](uint64_t a) { return f2i(a, F16, Rnd::RZ, 32, false, 32); });
    check(CVT_RNI_S32_BF16, "cvt.rni.s32.bf16", S_BF16, L_U32, hin, [](uint64_t a) { return f2i(a, BF16, Rnd::RN, 32, true, 32); });
  }

  // ---- integer -> float ----
  {
    // Values next to the precision limits: 2^24+1 and 2^24+3 (f32 ties), 2^53+1 (f64 tie), the
    // extremes of every source type.
    const std::vector<uint64_t> i32 = {0, 1, 0xffffffff, 16777217, 16777219, (uint64_t)(uint32_t)-16777217,
                                       (uint64_t)(uint32_t)-16777219, 0x7fffffff, 0x80000000, 0x80000001,
                                       33554435, 123456789, (uint64_t)(uint32_t)-123456789, 0x7fffff81,
                                       65504, 65519, 65520, 65535, 70000, (uint64_t)(uint32_t)-70000, 2049,
                                       2051, 257, 259, 0xfffffeff};
    const std::vector<uint64_t> i64 = {0, 1, ~0ull, (1ull << 53) + 1, (1ull << 53) + 3, (uint64_t)-((1ll << 53) + 1),
                                       0x8000000000000000ull, 0x7fffffffffffffffull, 0x8000000000000001ull,
                                       0xfffffffffffff801ull, 0xfffffffffffffc00ull, 16777217, 0x123456789abcdefull,
                                       0x00000000ffffffffull, 0x7ffffffffffffdffull, 0x4000000000000401ull};
    for (int m = 0; m < 4; ++m) {
      Rnd r = kRoundings[m];
      const int base = I2F_FIRST + m * 6;
      check(base + 0, conf_fmt("cvt.%s.f32.s32", kRoundingNames[m]).s, S_I32, L_F32, i32,
            [r](uint64_t v) { return i2f(v, true, 32, F32, r); });
      check(base + 1, conf_fmt("cvt.%s.f32.u32", kRoundingNames[m]).s, S_I32, L_F32, i32,
            [r](uint64_t v) { return i2f(v, false, 32, F32, r); });
      check(base + 2, conf_fmt("cvt.%s.f32.s64", kRoundingNames[m]).s, S_I64, L_F32, i64,
            [r](uint64_t v) { return i2f(v, true, 64, F32, r); });
      check(base + 3, conf_fmt("cvt.%s.f32.u64", kRoundingNames[m]).s, S_I64, L_F32, i64,
            [r](uint64_t v) { return i2f(v, false, 64, F32, r); });
      check(base + 4, conf_fmt("cvt.%s.f64.s64", kRoundingNames[m]).s, S_I64, L_F64, i64,
            [r](uint64_t v) { return i2f(v, true, 64, F64, r); });
      check(base + 5, conf_fmt("cvt.%s.f64.u64", kRoundingNames[m]).s, S_I64, L_F64, i64,
            [r](uint64_t v) { return i2f(v, false, 64, F64, r); });
    }
    check(CVT_RN_F64_S32, "cvt.rn.f64.s32", S_I32, L_F64, i32, [](uint64_t v) { return i2f(v, true, 32, F64, Rnd::RN); });
    check(CVT_RN_F16_S32, "cvt.rn.f16.s32", S_I32, L_F16, i32, [](uint64_t v) { return i2f(v, true, 32, F16, Rnd::RN); });
    check(CVT_RZ_F16_U32, "cvt.rz.f16.u32", S_I32, L_F16, i32, [](uint64_t v) { return i2f(v, false, 32, F16, Rnd::RZ); });
    check(CVT_RM_F16_S32, "cvt.rm.f16.s32", S_I32, L_F16, i32, [](uint64_t v) { return i2f(v, true, 32, F16, Rnd::RM); });
    check(CVT_RN_BF16_S32, "cvt.rn.bf16.s32", S_I32, L_BF16, i32, [](uint64_t v) { return i2f(v, true, 32, BF16, Rnd::RN); });
    check(CVT_RP_BF16_U32, "cvt.rp.bf16.u32", S_I32, L_BF16, i32, [](uint64_t v) { return i2f(v, false, 32, BF16, Rnd::RP); });
  }

  // ---- integer -> integer ----
  {
    const std::vector<uint64_t> v32 = {0, 1, 0x7f, 0x80, 0xff, 0x100, 0x17f, 0x1234f0, 0x7fff, 0x8000, 0xffff,
                                       0x10000, 0x12348765, 0x7fffffff, 0x80000000, 0xffffffff, 0xffffff80,
                                       0xffffff7f, 0xffff8000, 0xffff7fff, 300, (uint64_t)(uint32_t)-300, 65536 + 5};
    const std::vector<uint64_t> v64 = {0, 1, ~0ull, 0x7fffffffffffffffull, 0x8000000000000000ull, 0x7fffffffull,
                                       0x80000000ull, 0xffffffff7fffffffull, 0xffffffff80000000ull, 0x100000000ull,
                                       0x7fffull, 0x8000ull, 0xffffffffffff8000ull, 0xffffffffffff7fffull,
                                       0x123456789abcdef0ull};
    check(CVT_S32_S8, "cvt.s32.s8", S_I32, L_U32, v32, [](uint64_t a) { return Val{(uint64_t)(uint32_t)sext(a, 8)}; });
    check(CVT_U32_U8, "cvt.u32.u8", S_I32, L_U32, v32, [](uint64_t a) { return Val{zext(a, 8)}; });
    check(CVT_S32_S16, "cvt.s32.s16", S_I16, L_U32, v32, [](uint64_t a) { return Val{(uint64_t)(uint32_t)sext(a, 16)}; });
    check(CVT_U32_U16, "cvt.u32.u16", S_I16, L_U32, v32, [](uint64_t a) { return Val{zext(a, 16)}; });
    check(CVT_U16_U32, "cvt.u16.u32", S_I32, L_U16, v32, [](uint64_t a) { return Val{zext(a, 16)}; });
    check(CVT_S16_S32, "cvt.s16.s32", S_I32, L_U16, v32, [](uint64_t a) { return Val{zext(a, 16)}; });
    check(CVT_S64_S32, "cvt.s64.s32", S_I32, L_U64, v32, [](uint64_t a) { return Val{(uint64_t)sext(a, 32)}; });
    check(CVT_U64_U32, "cvt.u64.u32", S_I32, L_U64, v32, [](uint64_t a) { return Val{zext(a, 32)}; });
    // Widening follows the source's signedness: a negative s32 becomes 2^64 - |a| as u64.
    check(CVT_U64_S32, "cvt.u64.s32", S_I32, L_U64, v32, [](uint64_t a) { return Val{(uint64_t)sext(a, 32)}; });
    check(CVT_S64_U32, "cvt.s64.u32", S_I32, L_U64, v32, [](uint64_t a) { return Val{zext(a, 32)}; });
    // Narrow destination types in a 32-bit register: truncated, then sign-/zero-extended.
    check(CVT_S8_S32_WIDE, "cvt.s8.s32 (b32 reg)", S_I32, L_U32, v32, [](uint64_t a) { return Val{(uint64_t)(uint32_t)sext(a, 8)}; });
    check(CVT_U8_S32_WIDE, "cvt.u8.s32 (b32 reg)", S_I32, L_U32, v32, [](uint64_t a) { return Val{zext(a, 8)}; });
    check(CVT_S32_S64, "cvt.s32.s64", S_I64, L_U32, v64, [](uint64_t a) { return Val{zext(a, 32)}; });
    // .sat: "limits the result to MININT..MAXINT for the size of the operation".
    check(CVT_SAT_S8_S32, "cvt.sat.s8.s32 (b32 reg)", S_I32, L_U32, v32,
          [](uint64_t a) { return Val{(uint64_t)(uint32_t)clamp64(sext(a, 32), -128, 127)}; });
    check(CVT_SAT_U8_S32, "cvt.sat.u8.s32 (b32 reg)", S_I32, L_U32, v32,
          [](uint64_t a) { return Val{(uint64_t)clamp64(sext(a, 32), 0, 255)}; });
    check(CVT_SAT_U16_S32, "cvt.sat.u16.s32", S_I32, L_U16, v32,
          [](uint64_t a) { return Val{(uint64_t)clamp64(sext(a, 32), 0, 65535)}; });
    check(CVT_SAT_S16_S64, "cvt.sat.s16.s64", S_I64, L_U16, v64,
          [](uint64_t a) { return Val{zext((uint64_t)clamp64((int64_t)a, -32768, 32767), 16)}; });
    check(CVT_SAT_U32_S32, "cvt.sat.u32.s32", S_I32, L_U32, v32,
          [](uint64_t a) { return Val{(uint64_t)clamp64(sext(a, 32), 0, 0xffffffffll)}; });
    check(CVT_SAT_S32_U32, "cvt.sat.s32.u32", S_I32, L_U32, v32,
          [](uint64_t a) { return Val{(uint64_t)clamp64((int64_t)zext(a, 32), INT32_MIN, INT32_MAX)}; });
    check(CVT_SAT_S32_S64, "cvt.sat.s32.s64", S_I64, L_U32, v64,
          [](uint64_t a) { return Val{zext((uint64_t)clamp64((int64_t)a, INT32_MIN, INT32_MAX), 32)}; });
    check(CVT_SAT_U64_S64, "cvt.sat.u64.s64", S_I64, L_U64, v64,
          [](uint64_t a) { return Val{(int64_t)a < 0 ? 0ull : a}; });
  }

  // ---- cvt.pack.sat: a and b saturated to the narrow type; b in the low field, a above it; the
  // remaining high bits of d from the low bits of c (c = 0x9abcdef1 in the kernel) ----
  {
    const std::vector<uint64_t> pv = {0, 1, 2, 3, 7, 8, 15, 16, 127, 128, 255, 256, 32767, 32768, 65535, 65536,
                                      0x7fffffff, 0x80000000, 0xffffffff, (uint64_t)(uint32_t)-2,
                                      (uint64_t)(uint32_t)-3, (uint64_t)(uint32_t)-8, (uint64_t)(uint32_t)-9,
                                      (uint64_t)(uint32_t)-128, (uint64_t)(uint32_t)-129,
                                      (uint64_t)(uint32_t)-32768, (uint64_t)(uint32_t)-32769};
    std::vector<Case> pc;
    for (uint64_t a : pv)
      for (uint64_t b : pv) pc.push_back({a, b});
    struct P {
      int op;
      const char* name;
      int size;
      bool is_signed;
    };
    const P packs[] = {{PACK_SAT_S16_S32, "cvt.pack.sat.s16.s32", 16, true},
                       {PACK_SAT_U16_S32, "cvt.pack.sat.u16.s32", 16, false},
                       {PACK_SAT_U8_S32_B32, "cvt.pack.sat.u8.s32.b32", 8, false},
                       {PACK_SAT_S8_S32_B32, "cvt.pack.sat.s8.s32.b32", 8, true},
                       {PACK_SAT_U4_S32_B32, "cvt.pack.sat.u4.s32.b32", 4, false},
                       {PACK_SAT_S4_S32_B32, "cvt.pack.sat.s4.s32.b32", 4, true},
                       {PACK_SAT_S2_S32_B32, "cvt.pack.sat.s2.s32.b32", 2, true}};
    for (const P& p : packs) {
      std::vector<uint64_t> got = conf_run(kKernels[p.op], p.name, pc);
      const int n = p.size;
      const int64_t lo = p.is_signed ? -(1ll << (n - 1)) : 0, hi = p.is_signed ? (1ll << (n - 1)) - 1 : (1ll << n) - 1;
      for (size_t i = 0; i < got.size(); ++i) {
        const uint64_t ta = zext((uint64_t)clamp64(sext(pc[i].a, 32), lo, hi), n);
        const uint64_t tb = zext((uint64_t)clamp64(sext(pc[i].b, 32), lo, hi), n);
        uint64_t d = tb | (ta << n);
        if (n < 16) d |= (uint64_t)(0x9abcdef1u << (2 * n)) & 0xffffffffull;
        ConfStr in = conf_fmt("%d, %d", (int32_t)(uint32_t)pc[i].a, (int32_t)(uint32_t)pc[i].b);
        conf_check(p.name, in, (uint32_t)got[i], (uint32_t)d);
      }
    }
  }

  return conf_finish("convert_ops");
}
