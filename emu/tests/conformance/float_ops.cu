// Conformance: floating-point instructions (f32, f64, f16/f16x2, bf16/bf16x2), one PTX
// instruction per case through inline asm.
//
// Rounded instructions (add/sub/mul/fma/mad/div/rcp/sqrt with .rn/.rz/.rm/.rp, the half-precision
// .rn forms) are compared bit-exactly with the exact result rounded on the host by alu_ref.h
// (integer arithmetic, no host FPU rounding), with IEEE 754's rules for special operands and for
// the sign of zero, which is what the ISA's "IEEE 754 compliant rounding" refers to. NaN results
// are only required to be NaN: the ISA says single-precision and half-precision instructions
// "return an unspecified NaN" (double-precision payload rules are not pinned down per operation
// either). The approximate instructions are checked against the ISA's stated error bounds and
// special-value tables, with reference values from the host's double-precision libm, whose own
// error (< 2^-52 relative) is far below those bounds.
#include "conf_common.h"
#include "alu_ref.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <vector>

using namespace alu;

namespace {

struct Case {
  uint64_t a, b, c;
};

enum Op {
  // f32, rounded
  ADD_RN_F32, ADD_RZ_F32, ADD_RM_F32, ADD_RP_F32, SUB_RN_F32, SUB_RZ_F32, SUB_RM_F32, SUB_RP_F32,
  MUL_RN_F32, MUL_RZ_F32, MUL_RM_F32, MUL_RP_F32, FMA_RN_F32, FMA_RZ_F32, FMA_RM_F32, FMA_RP_F32,
  MAD_RN_F32, DIV_RN_F32, DIV_RZ_F32, DIV_RM_F32, DIV_RP_F32, RCP_RN_F32, RCP_RZ_F32, RCP_RM_F32,
  RCP_RP_F32, SQRT_RN_F32, SQRT_RZ_F32, SQRT_RM_F32, SQRT_RP_F32,
  ADD_RN_FTZ_F32, MUL_RN_FTZ_F32, FMA_RN_FTZ_F32, ADD_RN_SAT_F32, MUL_RZ_SAT_F32, FMA_RN_SAT_F32,
  // f32, approximate
  DIV_APPROX_F32, DIV_FULL_F32, RCP_APPROX_F32, SQRT_APPROX_F32, RSQRT_APPROX_F32, EX2_APPROX_F32,
  LG2_APPROX_F32, SIN_APPROX_F32, COS_APPROX_F32,
  // f32, other
  MIN_F32, MAX_F32, MIN_NAN_F32, MAX_NAN_F32, ABS_F32, NEG_F32, COPYSIGN_F32,
  // f64
  ADD_RN_F64, ADD_RZ_F64, ADD_RM_F64, ADD_RP_F64, SUB_RN_F64, MUL_RN_F64, MUL_RZ_F64, MUL_RM_F64,
  MUL_RP_F64, FMA_RN_F64, FMA_RZ_F64, FMA_RM_F64, FMA_RP_F64, MAD_RN_F64, DIV_RN_F64, DIV_RZ_F64,
  DIV_RM_F64, DIV_RP_F64, RCP_RN_F64, SQRT_RN_F64, SQRT_RZ_F64, SQRT_RM_F64, SQRT_RP_F64,
  MIN_F64, MAX_F64, ABS_F64, NEG_F64, COPYSIGN_F64,
  // f16 / bf16 (results in the low 16 bits) and their x2 forms (32 bits)
  ADD_RN_F16, SUB_RN_F16, MUL_RN_F16, FMA_RN_F16, FMA_RN_RELU_F16, ADD_RN_SAT_F16, MUL_RN_FTZ_F16,
  MIN_F16, MAX_F16, MIN_NAN_F16, NEG_F16, ABS_F16,
  ADD_RN_BF16, MUL_RN_BF16, FMA_RN_BF16, FMA_RN_RELU_BF16, MIN_BF16, MAX_BF16, NEG_BF16, ABS_BF16,
  ADD_RN_F16X2, MUL_RN_F16X2, FMA_RN_F16X2, MIN_F16X2, MAX_NAN_F16X2,
  ADD_RN_BF16X2, FMA_RN_BF16X2, MAX_BF16X2,
  // predicates (result 1/0)
  TESTP_FINITE_F32, TESTP_INFINITE_F32, TESTP_NUMBER_F32, TESTP_NOTANUMBER_F32, TESTP_NORMAL_F32,
  TESTP_SUBNORMAL_F32, TESTP_NORMAL_F64, TESTP_SUBNORMAL_F64, TESTP_FINITE_F64,
  SETP_EQ_F32, SETP_NE_F32, SETP_LT_F32, SETP_LE_F32, SETP_GT_F32, SETP_GE_F32, SETP_EQU_F32,
  SETP_NEU_F32, SETP_LTU_F32, SETP_LEU_F32, SETP_GTU_F32, SETP_GEU_F32, SETP_NUM_F32,
  SETP_NAN_F32, SETP_LT_FTZ_F32, SETP_NE_F64, SETP_GEU_F64, SETP_NAN_F64,
  OP_COUNT
};

#define F32_1(OP, INS)                                 \
  case OP: {                                           \
    float r;                                           \
    asm(INS " %0, %1;" : "=f"(r) : "f"(fa));           \
    res = __float_as_uint(r);                          \
    break;                                             \
  }
#define F32_2(OP, INS)                                 \
  case OP: {                                           \
    float r;                                           \
    asm(INS " %0, %1, %2;" : "=f"(r) : "f"(fa), "f"(fb)); \
    res = __float_as_uint(r);                          \
    break;                                             \
  }
#define F32_3(OP, INS)                                             \
  case OP: {                                                       \
    float r;                                                       \
    asm(INS " %0, %1, %2, %3;" : "=f"(r) : "f"(fa), "f"(fb), "f"(fc)); \
    res = __float_as_uint(r);                                      \
    break;                                                         \
  }
#define F64_1(OP, INS)                                 \
  case OP: {                                           \
    double r;                                          \
    asm(INS " %0, %1;" : "=d"(r) : "d"(da));           \
    res = (uint64_t)__double_as_longlong(r);           \
    break;                                             \
  }
#define F64_2(OP, INS)                                 \
  case OP: {                                           \
    double r;                                          \
    asm(INS " %0, %1, %2;" : "=d"(r) : "d"(da), "d"(db)); \
    res = (uint64_t)__double_as_longlong(r);           \
    break;                                             \
  }
#define F64_3(OP, INS)                                             \
  case OP: {                                                       \
    double r;                                                      \
    asm(INS " %0, %1, %2, %3;" : "=d"(r) : "d"(da), "d"(db), "d"(dc)); \
    res = (uint64_t)__double_as_longlong(r);                       \
    break;                                                         \
  }
#define H_1(OP, INS)                                   \
  case OP: {                                           \
    unsigned short r;                                  \
    asm(INS " %0, %1;" : "=h"(r) : "h"(ha));           \
    res = r;                                           \
    break;                                             \
  }
#define H_2(OP, INS)                                   \
  case OP: {                                           \
    unsigned short r;                                  \
    asm(INS " %0, %1, %2;" : "=h"(r) : "h"(ha), "h"(hb)); \
    res = r;                                           \
    break;                                             \
  }
#define H_3(OP, INS)                                               \
  case OP: {                                                       \
    unsigned short r;                                              \
    asm(INS " %0, %1, %2, %3;" : "=h"(r) : "h"(ha), "h"(hb), "h"(hc)); \
    res = r;                                                       \
    break;                                                         \
  }
#define X2_2(OP, INS)                                  \
  case OP: {                                           \
    unsigned r;                                        \
    asm(INS " %0, %1, %2;" : "=r"(r) : "r"(ra), "r"(rb)); \
    res = r;                                           \
    break;                                             \
  }
#define X2_3(OP, INS)                                              \
  case OP: {                                                       \
    unsigned r;                                                    \
    asm(INS " %0, %1, %2, %3;" : "=r"(r) : "r"(ra), "r"(rb), "r"(rc)); \
    res = r;                                                       \
    break;                                                         \
  }
#define TESTP(OP, INS, C, V)                                                        \
  case OP: {                                                                        \
    unsigned r;                                                                     \
    asm("{ .reg .pred p; " INS " p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(r) : C(V)); \
    res = r;                                                                        \
    break;                                                                          \
  }
#define SETP(OP, INS, C, V, W)                                                                 \
  case OP: {                                                                                   \
    unsigned r;                                                                                \
    asm("{ .reg .pred p; " INS " p, %1, %2; selp.u32 %0, 1, 0, p; }" : "=r"(r) : C(V), C(W)); \
    res = r;                                                                                   \
    break;                                                                                     \
  }

// One kernel per op (OP is a template argument, so each instantiation holds just its own
// instruction): an instruction the emulator cannot load then fails only its own launch.
template <int OP>
__global__ void k_fp(const Case* in, uint64_t* out, int n) {
  constexpr int op = OP;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const Case x = in[i];
    const float fa = __uint_as_float((unsigned)x.a), fb = __uint_as_float((unsigned)x.b),
                fc = __uint_as_float((unsigned)x.c);
    const double da = __longlong_as_double((long long)x.a), db = __longlong_as_double((long long)x.b),
                 dc = __longlong_as_double((long long)x.c);
    const unsigned short ha = (unsigned short)x.a, hb = (unsigned short)x.b, hc = (unsigned short)x.c;
    const unsigned ra = (unsigned)x.a, rb = (unsigned)x.b, rc = (unsigned)x.c;
    uint64_t res = 0;
    switch (op) {
      F32_2(ADD_RN_F32, "add.rn.f32") F32_2(ADD_RZ_F32, "add.rz.f32")
      F32_2(ADD_RM_F32, "add.rm.f32") F32_2(ADD_RP_F32, "add.rp.f32")
      F32_2(SUB_RN_F32, "sub.rn.f32") F32_2(SUB_RZ_F32, "sub.rz.f32")
      F32_2(SUB_RM_F32, "sub.rm.f32") F32_2(SUB_RP_F32, "sub.rp.f32")
      F32_2(MUL_RN_F32, "mul.rn.f32") F32_2(MUL_RZ_F32, "mul.rz.f32")
      F32_2(MUL_RM_F32, "mul.rm.f32") F32_2(MUL_RP_F32, "mul.rp.f32")
      F32_3(FMA_RN_F32, "fma.rn.f32") F32_3(FMA_RZ_F32, "fma.rz.f32")
      F32_3(FMA_RM_F32, "fma.rm.f32") F32_3(FMA_RP_F32, "fma.rp.f32")
      F32_3(MAD_RN_F32, "mad.rn.f32")
      F32_2(DIV_RN_F32, "div.rn.f32") F32_2(DIV_RZ_F32, "div.rz.f32")
      F32_2(DIV_RM_F32, "div.rm.f32") F32_2(DIV_RP_F32, "div.rp.f32")
      F32_1(RCP_RN_F32, "rcp.rn.f32") F32_1(RCP_RZ_F32, "rcp.rz.f32")
      F32_1(RCP_RM_F32, "rcp.rm.f32") F32_1(RCP_RP_F32, "rcp.rp.f32")
      F32_1(SQRT_RN_F32, "sqrt.rn.f32") F32_1(SQRT_RZ_F32, "sqrt.rz.f32")
      F32_1(SQRT_RM_F32, "sqrt.rm.f32") F32_1(SQRT_RP_F32, "sqrt.rp.f32")
      F32_2(ADD_RN_FTZ_F32, "add.rn.ftz.f32") F32_2(MUL_RN_FTZ_F32, "mul.rn.ftz.f32")
      F32_3(FMA_RN_FTZ_F32, "fma.rn.ftz.f32") F32_2(ADD_RN_SAT_F32, "add.rn.sat.f32")
      F32_2(MUL_RZ_SAT_F32, "mul.rz.sat.f32") F32_3(FMA_RN_SAT_F32, "fma.rn.sat.f32")
      F32_2(DIV_APPROX_F32, "div.approx.f32") F32_2(DIV_FULL_F32, "div.full.f32")
      F32_1(RCP_APPROX_F32, "rcp.approx.f32") F32_1(SQRT_APPROX_F32, "sqrt.approx.f32")
      F32_1(RSQRT_APPROX_F32, "rsqrt.approx.f32") F32_1(EX2_APPROX_F32, "ex2.approx.f32")
      F32_1(LG2_APPROX_F32, "lg2.approx.f32") F32_1(SIN_APPROX_F32, "sin.approx.f32")
      F32_1(COS_APPROX_F32, "cos.approx.f32")
      F32_2(MIN_F32, "min.f32") F32_2(MAX_F32, "max.f32")
      F32_2(MIN_NAN_F32, "min.NaN.f32") F32_2(MAX_NAN_F32, "max.NaN.f32")
      F32_1(ABS_F32, "abs.f32") F32_1(NEG_F32, "neg.f32") F32_2(COPYSIGN_F32, "copysign.f32")
      F64_2(ADD_RN_F64, "add.rn.f64") F64_2(ADD_RZ_F64, "add.rz.f64")
      F64_2(ADD_RM_F64, "add.rm.f64") F64_2(ADD_RP_F64, "add.rp.f64")
      F64_2(SUB_RN_F64, "sub.rn.f64")
      F64_2(MUL_RN_F64, "mul.rn.f64") F64_2(MUL_RZ_F64, "mul.rz.f64")
      F64_2(MUL_RM_F64, "mul.rm.f64") F64_2(MUL_RP_F64, "mul.rp.f64")
      F64_3(FMA_RN_F64, "fma.rn.f64") F64_3(FMA_RZ_F64, "fma.rz.f64")
      F64_3(FMA_RM_F64, "fma.rm.f64") F64_3(FMA_RP_F64, "fma.rp.f64")
      F64_3(MAD_RN_F64, "mad.rn.f64")
      F64_2(DIV_RN_F64, "div.rn.f64") F64_2(DIV_RZ_F64, "div.rz.f64")
      F64_2(DIV_RM_F64, "div.rm.f64") F64_2(DIV_RP_F64, "div.rp.f64")
      F64_1(RCP_RN_F64, "rcp.rn.f64")
      F64_1(SQRT_RN_F64, "sqrt.rn.f64") F64_1(SQRT_RZ_F64, "sqrt.rz.f64")
      F64_1(SQRT_RM_F64, "sqrt.rm.f64") F64_1(SQRT_RP_F64, "sqrt.rp.f64")
      F64_2(MIN_F64, "min.f64") F64_2(MAX_F64, "max.f64")
      F64_1(ABS_F64, "abs.f64") F64_1(NEG_F64, "neg.f64") F64_2(COPYSIGN_F64, "copysign.f64")
      H_2(ADD_RN_F16, "add.rn.f16") H_2(SUB_RN_F16, "sub.rn.f16") H_2(MUL_RN_F16, "mul.rn.f16")
      H_3(FMA_RN_F16, "fma.rn.f16") H_3(FMA_RN_RELU_F16, "fma.rn.relu.f16")
      H_2(ADD_RN_SAT_F16, "add.rn.sat.f16") H_2(MUL_RN_FTZ_F16, "mul.rn.ftz.f16")
      H_2(MIN_F16, "min.f16") H_2(MAX_F16, "max.f16") H_2(MIN_NAN_F16, "min.NaN.f16")
      H_1(NEG_F16, "neg.f16") H_1(ABS_F16, "abs.f16")
      H_2(ADD_RN_BF16, "add.rn.bf16") H_2(MUL_RN_BF16, "mul.rn.bf16")
      H_3(FMA_RN_BF16, "fma.rn.bf16") H_3(FMA_RN_RELU_BF16, "fma.rn.relu.bf16")
      H_2(MIN_BF16, "min.bf16") H_2(MAX_BF16, "max.bf16")
      H_1(NEG_BF16, "neg.bf16") H_1(ABS_BF16, "abs.bf16")
      X2_2(ADD_RN_F16X2, "add.rn.f16x2") X2_2(MUL_RN_F16X2, "mul.rn.f16x2")
      X2_3(FMA_RN_F16X2, "fma.rn.f16x2") X2_2(MIN_F16X2, "min.f16x2")
      X2_2(MAX_NAN_F16X2, "max.NaN.f16x2")
      X2_2(ADD_RN_BF16X2, "add.rn.bf16x2") X2_3(FMA_RN_BF16X2, "fma.rn.bf16x2")
      X2_2(MAX_BF16X2, "max.bf16x2")
      TESTP(TESTP_FINITE_F32, "testp.finite.f32", "f", fa)
      TESTP(TESTP_INFINITE_F32, "testp.infinite.f32", "f", fa)
      TESTP(TESTP_NUMBER_F32, "testp.number.f32", "f", fa)
      TESTP(TESTP_NOTANUMBER_F32, "testp.notanumber.f32", "f", fa)
      TESTP(TESTP_NORMAL_F32, "testp.normal.f32", "f", fa)
      TESTP(TESTP_SUBNORMAL_F32, "testp.subnormal.f32", "f", fa)
      TESTP(TESTP_NORMAL_F64, "testp.normal.f64", "d", da)
      TESTP(TESTP_SUBNORMAL_F64, "testp.subnormal.f64", "d", da)
      TESTP(TESTP_FINITE_F64, "testp.finite.f64", "d", da)
      SETP(SETP_EQ_F32, "setp.eq.f32", "f", fa, fb) SETP(SETP_NE_F32, "setp.ne.f32", "f", fa, fb)
      SETP(SETP_LT_F32, "setp.lt.f32", "f", fa, fb) SETP(SETP_LE_F32, "setp.le.f32", "f", fa, fb)
      SETP(SETP_GT_F32, "setp.gt.f32", "f", fa, fb) SETP(SETP_GE_F32, "setp.ge.f32", "f", fa, fb)
      SETP(SETP_EQU_F32, "setp.equ.f32", "f", fa, fb) SETP(SETP_NEU_F32, "setp.neu.f32", "f", fa, fb)
      SETP(SETP_LTU_F32, "setp.ltu.f32", "f", fa, fb) SETP(SETP_LEU_F32, "setp.leu.f32", "f", fa, fb)
      SETP(SETP_GTU_F32, "setp.gtu.f32", "f", fa, fb) SETP(SETP_GEU_F32, "setp.geu.f32", "f", fa, fb)
      SETP(SETP_NUM_F32, "setp.num.f32", "f", fa, fb) SETP(SETP_NAN_F32, "setp.nan.f32", "f", fa, fb)
      SETP(SETP_LT_FTZ_F32, "setp.lt.ftz.f32", "f", fa, fb)
      SETP(SETP_NE_F64, "setp.ne.f64", "d", da, db) SETP(SETP_GEU_F64, "setp.geu.f64", "d", da, db)
      SETP(SETP_NAN_F64, "setp.nan.f64", "d", da, db)
      default:
        break;
    }
    out[i] = res;
  }
}

const auto kKernels =
    conf_kernel_table<Case, OP_COUNT>([](auto op) { return &k_fp<decltype(op)::value>; });

// ---- host: expected values of the rounded operations ----

bool is_subnormal_bits(uint64_t bits, Fmt f) {
  const uint64_t ef = (bits >> f.mbits) & ((1ull << f.ebits) - 1);
  return ef == 0 && (bits & ((1ull << f.mbits) - 1)) != 0;
}
uint64_t one_bits(Fmt f) { return (uint64_t)f.bias() << f.mbits; }

// .ftz on inputs: "flushes subnormal inputs ... to sign-preserving zero".
Exact input(uint64_t bits, Fmt f, bool ftz) {
  Exact e = decode(bits, f);
  if (ftz && is_subnormal_bits(bits, f)) e.mag = 0;
  return e;
}

// Rounds v into f, then applies .ftz to the result and .sat (clamp to [0.0, 1.0], "NaN results
// are flushed to +0.0"). An exact value below the smallest normal that rounds up to it leaves
// open whether .ftz looks before or after rounding, so such cases are skipped; so is a -0.0
// result under .sat, where the ISA does not say whether -0.0 counts as inside [0.0, 1.0].
Val finish(const Exact& v, Fmt f, Rnd r, bool ftz = false, bool sat = false) {
  Val out;
  if (v.nan) {
    if (sat) out.bits = 0;
    else out.any_nan = true;
    return out;
  }
  uint64_t bits = round_to(v, f, r);
  if (ftz && !v.inf && v.mag != 0) {
    const int E = msb128(v.mag) + v.exp;
    if (is_subnormal_bits(bits, f)) bits &= sign_bit(f);
    else if (E < f.emin() && (bits & ~sign_bit(f)) == (1ull << f.mbits)) out.skip = true;
  }
  if (sat) {
    const bool neg = bits & sign_bit(f);
    const uint64_t mag = bits & ~sign_bit(f);
    if (neg && mag == 0) out.skip = true;
    else if (neg) bits = 0;
    else if (mag > one_bits(f)) bits = one_bits(f);
  }
  out.bits = bits;
  return out;
}

Exact signed_zero_for_cancel(Rnd r) {  // x + (-x): +0, except -0 when rounding toward -inf
  return make_zero(r == Rnd::RM);
}

Exact exact_add(Exact x, Exact y, Rnd r) {
  if (x.nan || y.nan) return make_nan();
  if (x.inf && y.inf) return x.neg == y.neg ? x : make_nan();
  if (x.inf) return x;
  if (y.inf) return y;
  if (x.mag == 0 && y.mag == 0) return x.neg == y.neg ? x : signed_zero_for_cancel(r);
  Exact s = add(x, y);
  if (s.mag == 0 && !s.sticky) return signed_zero_for_cancel(r);
  return s;
}

Exact exact_mul(const Exact& x, const Exact& y) {
  if (x.nan || y.nan) return make_nan();
  const bool neg = x.neg != y.neg;
  if ((x.inf && y.mag == 0 && !y.inf) || (y.inf && x.mag == 0 && !x.inf)) return make_nan();
  if (x.inf || y.inf) return make_inf(neg);
  if (x.mag == 0 || y.mag == 0) return make_zero(neg);
  return mul(x, y);
}

Exact exact_fma(const Exact& x, const Exact& y, const Exact& z, Rnd r) {
  Exact p = exact_mul(x, y);  // exact, never rounded: "no loss of precision in the product"
  if (p.nan || z.nan) return make_nan();
  return exact_add(p, z, r);
}

Exact exact_div(const Exact& x, const Exact& y) {
  if (x.nan || y.nan) return make_nan();
  const bool neg = x.neg != y.neg;
  if (x.inf && y.inf) return make_nan();
  if (x.mag == 0 && !x.inf && y.mag == 0 && !y.inf) return make_nan();
  if (x.inf) return make_inf(neg);
  if (y.inf) return make_zero(neg);
  if (y.mag == 0) return make_inf(neg);
  if (x.mag == 0) return make_zero(neg);
  return div(x, y);
}

Exact exact_sqrt(const Exact& x) {
  if (x.nan) return make_nan();
  if (!x.inf && x.mag == 0) return x;  // sqrt(-0) = -0
  if (x.neg) return make_nan();
  if (x.inf) return x;
  return sqrt(x);
}

// ---- host: checking and printing ----

ConfStr show(uint64_t bits, Fmt f) {
  return conf_fmt("%.9g(0x%0*llx)", to_double(bits, f), f.width() / 4, (unsigned long long)bits);
}

// Compares got with an expected Val in format f (one lane).
void expect(const char* name, const char* in, uint64_t got, const Val& v, Fmt f) {
  if (v.skip) return;
  if (v.any_nan) {
    conf_check_text(name, in, is_nan_bits(got, f), show(got, f).s, "NaN");
    return;
  }
  conf_check_bits(name, in, got, v.bits, f.width());
}

using RefFn = std::function<Val(const Case&)>;

ConfStr show_inputs(const Case& x, Fmt f, int arity) {
  ConfStr a = show(x.a, f), b = show(x.b, f), c = show(x.c, f);
  if (arity == 1) return a;
  if (arity == 2) return conf_fmt("%s, %s", a.s, b.s);
  return conf_fmt("%s, %s, %s", a.s, b.s, c.s);
}

void check(Op op, const char* name, Fmt f, int arity, const std::vector<Case>& cases, RefFn ref) {
  std::vector<uint64_t> got = conf_run(kKernels[op], name, cases);
  for (size_t i = 0; i < got.size(); ++i)
    expect(name, show_inputs(cases[i], f, arity).s, got[i], ref(cases[i]), f);
}

// x2 forms: each 16-bit lane is its own operation on the lanes of the operands.
void check_x2(Op op, const char* name, Fmt f, int arity, const std::vector<Case>& cases, RefFn lane_ref) {
  std::vector<uint64_t> got = conf_run(kKernels[op], name, cases);
  for (size_t i = 0; i < got.size(); ++i)
    for (int lane = 0; lane < 2; ++lane) {
      const int sh = 16 * lane;
      Case l{(cases[i].a >> sh) & 0xffff, (cases[i].b >> sh) & 0xffff, (cases[i].c >> sh) & 0xffff};
      ConfStr nm = conf_fmt("%s[%s]", name, lane ? "hi" : "lo");
      expect(nm.s, show_inputs(l, f, arity).s, (got[i] >> sh) & 0xffff, lane_ref(l), f);
    }
}

// ---- host: inputs ----

const std::vector<uint64_t> kF32 = {
    0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x3fc00000, 0x40000000, 0x40400000,
    0x3dcccccd, 0xbdcccccd, 0x3eaaaaab, 0x3f800001, 0x3f7fffff, 0x00800000, 0x00000001,
    0x007fffff, 0x80400000, 0x7f7fffff, 0xff7fffff, 0x7f000000, 0x7149f2ca, 0x0da24260,
    0x7f800000, 0xff800000, 0x7fc00000, 0x4b800000, 0x4b800001, 0xc0600000, 0x501502f9,
    0x3e99999a, 0x42c88000, 0x33800000, 0x1f800000, 0x5f800000, 0x3f000001, 0x34000000};
// A smaller set for three-operand cross products.
const std::vector<uint64_t> kF32small = {0x00000000, 0x80000000, 0x3f800000, 0xbf800000,
                                         0x3f800800, 0xbf801000, 0x3eaaaaab, 0x00800000,
                                         0x00000003, 0x7f7fffff, 0x7f800000, 0xff800000,
                                         0x7fc00000, 0x33800000, 0xc0400000, 0x1f800000};
const std::vector<uint64_t> kF64 = {
    0x0000000000000000ull, 0x8000000000000000ull, 0x3ff0000000000000ull, 0xbff0000000000000ull,
    0x3ff8000000000000ull, 0x4008000000000000ull, 0x3fb999999999999aull, 0x3fd5555555555555ull,
    0x3ff0000000000001ull, 0x3fefffffffffffffull, 0x0010000000000000ull, 0x0000000000000001ull,
    0x000fffffffffffffull, 0x8008000000000000ull, 0x7fefffffffffffffull, 0xffefffffffffffffull,
    0x7ff0000000000000ull, 0xfff0000000000000ull, 0x7ff8000000000000ull, 0x4340000000000000ull,
    0x3ca0000000000000ull, 0x7e37e43c8800759cull, 0x01a56e1fc2f8f359ull, 0xc01d000000000000ull,
    0x7fe0000000000000ull, 0x4202a05f20000000ull, 0x4340000000000001ull};
const std::vector<uint64_t> kF64small = {0x0000000000000000ull, 0x8000000000000000ull,
                                         0x3ff0000000000000ull, 0xbff0000000000000ull,
                                         0x3ff0000008000000ull, 0xbff0000010000000ull,
                                         0x3fd5555555555555ull, 0x0010000000000000ull,
                                         0x0000000000000003ull, 0x7fefffffffffffffull,
                                         0x7ff0000000000000ull, 0xfff0000000000000ull,
                                         0x7ff8000000000000ull, 0x3ca0000000000000ull};
const std::vector<uint64_t> kF16 = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x3e00, 0x4000, 0x3555, 0x3c01,
                                    0x3bff, 0x0400, 0x0001, 0x03ff, 0x8200, 0x7bff, 0xfbff, 0x7c00,
                                    0xfc00, 0x7e00, 0x5640, 0x1400, 0x6400, 0x0c00, 0x3800, 0xb800};
const std::vector<uint64_t> kBF16 = {0x0000, 0x8000, 0x3f80, 0xbf80, 0x3fc0, 0x4000, 0x3eab,
                                     0x3f81, 0x3f7f, 0x0080, 0x0001, 0x007f, 0x7f7f, 0xff7f,
                                     0x7f80, 0xff80, 0x7fc0, 0x42c8, 0x3b80, 0x4b80, 0x3f00};

std::vector<Case> pairs(const std::vector<uint64_t>& v) {
  std::vector<Case> c;
  for (uint64_t a : v)
    for (uint64_t b : v) c.push_back({a, b, 0});
  return c;
}
std::vector<Case> triples(const std::vector<uint64_t>& v) {
  std::vector<Case> c;
  for (uint64_t a : v)
    for (uint64_t b : v)
      for (uint64_t d : v) c.push_back({a, b, d});
  return c;
}
std::vector<Case> singles(const std::vector<uint64_t>& v) {
  std::vector<Case> c;
  for (uint64_t a : v) c.push_back({a, 0, 0});
  return c;
}
// x2 operands: lane pairs (i, j) in the low lanes and (j, i) in the high lanes.
std::vector<Case> pairs_x2(const std::vector<uint64_t>& v, bool three) {
  std::vector<Case> c;
  for (size_t i = 0; i < v.size(); ++i)
    for (size_t j = 0; j < v.size(); ++j) {
      uint64_t k = v[(i + j) % v.size()], l = v[(i * 7 + j) % v.size()];
      c.push_back({v[i] | (v[j] << 16), v[j] | (v[i] << 16), three ? (k | (l << 16)) : 0});
    }
  return c;
}

// Deterministic pseudo-random f32 values in [lo, hi) for the approximate instructions.
std::vector<uint64_t> spread(double lo, double hi, int n) {
  std::vector<uint64_t> v;
  uint32_t s = 12345u;
  for (int i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    double t = (s >> 8) / 16777216.0;
    float x = (float)(lo + (hi - lo) * t);
    v.push_back(f32_bits(x));
  }
  return v;
}

// ---- host: approximate instructions ----

double ulp_f32(double x) {  // spacing of f32 values at |x| (normal range)
  int e;
  std::frexp(std::fabs(x), &e);  // |x| in [2^(e-1), 2^e)
  int E = e - 1;
  if (E < -126) E = -126;
  return std::ldexp(1.0, E - 23);
}
uint32_t cr_f32(double x) {  // correctly rounded f32 of a double, via the exact rounding core
  return (uint32_t)round_to(decode(f64_bits(x), F64), F32, Rnd::RN);
}
long long ulp_distance_f32(uint32_t a, uint32_t b) {  // in representable steps, same sign only
  auto key = [](uint32_t u) { return (u & 0x80000000u) ? -(long long)(u & 0x7fffffffu) : (long long)u; };
  return std::llabs(key(a) - key(b));
}

enum class Bound { ULP_ABS, CR_ULPS, ABS, REL };

// Checks an approximate f32 result: special inputs must give the table's exact results (given
// as bits, or NaN), finite ones must be within the bound.
void approx(Op op, const char* name, const std::vector<Case>& cases,
            std::function<double(const Case&)> exact_fn,
            std::function<bool(const Case&, Val*)> special_fn,
            std::function<std::pair<Bound, double>(const Case&)> bound_fn, int arity = 1) {
  std::vector<uint64_t> got = conf_run(kKernels[op], name, cases);
  for (size_t i = 0; i < got.size(); ++i) {
    const Case& x = cases[i];
    ConfStr in = show_inputs(x, F32, arity);
    Val sp;
    if (special_fn(x, &sp)) {
      expect(name, in.s, got[i], sp, F32);
      continue;
    }
    const double ex = exact_fn(x);
    const uint32_t g = (uint32_t)got[i];
    const double gv = bits_f32(g);
    auto b = bound_fn(x);
    bool ok;
    ConfStr want;
    switch (b.first) {
      case Bound::ULP_ABS:  // |got - exact| <= n ulp of the exact value
        ok = std::fabs(gv - ex) <= b.second * ulp_f32(ex);
        want = conf_fmt("%.9g within %g ulp", ex, b.second);
        break;
      case Bound::CR_ULPS:  // within n representable steps of the correctly rounded result
        ok = ulp_distance_f32(g, cr_f32(ex)) <= (long long)b.second && !std::isnan(gv);
        want = conf_fmt("%.9g (0x%08x) within %g ulp", bits_f32(cr_f32(ex)), cr_f32(ex), b.second);
        break;
      case Bound::ABS:
        ok = std::fabs(gv - ex) <= b.second;
        want = conf_fmt("%.9g within abs %g", ex, b.second);
        break;
      default:
        ok = std::fabs(gv - ex) <= b.second * std::fabs(ex);
        want = conf_fmt("%.9g within rel %g", ex, b.second);
        break;
    }
    conf_check_text(name, in.s, ok, show(g, F32).s, want.s);
  }
}

// ---- host: the rounded instructions ----

// The exact, unrounded result of one rounded instruction on x's operands in format f (.ftz
// flushes subnormal operands first); r only decides the sign of an exactly zero sum.
using ExactFn = Exact (*)(const Case& x, Fmt f, Rnd r, bool ftz);

Exact add_of(const Case& x, Fmt f, Rnd r, bool ftz) {
  return exact_add(input(x.a, f, ftz), input(x.b, f, ftz), r);
}
Exact sub_of(const Case& x, Fmt f, Rnd r, bool ftz) {
  Exact y = input(x.b, f, ftz);
  y.neg = !y.neg;
  return exact_add(input(x.a, f, ftz), y, r);
}
Exact mul_of(const Case& x, Fmt f, Rnd, bool ftz) {
  return exact_mul(input(x.a, f, ftz), input(x.b, f, ftz));
}
Exact fma_of(const Case& x, Fmt f, Rnd r, bool ftz) {
  return exact_fma(input(x.a, f, ftz), input(x.b, f, ftz), input(x.c, f, ftz), r);
}
Exact div_of(const Case& x, Fmt f, Rnd, bool ftz) {
  return exact_div(input(x.a, f, ftz), input(x.b, f, ftz));
}
Exact rcp_of(const Case& x, Fmt f, Rnd, bool ftz) {
  return exact_div(decode(one_bits(f), f), input(x.a, f, ftz));
}
Exact sqrt_of(const Case& x, Fmt f, Rnd, bool ftz) {
  return exact_sqrt(input(x.a, f, ftz));
}

// The expected result: the exact one rounded into f by r, then .ftz and .sat as finish has them.
RefFn rounded(ExactFn exact, Fmt f, Rnd r, bool ftz = false, bool sat = false) {
  return [=](const Case& x) { return finish(exact(x, f, r, ftz), f, r, ftz, sat); };
}

RefFn with_relu(RefFn ref, Fmt f) {
  return [=](const Case& x) { return relu(ref(x), f); };
}

// One instruction under each rounding of kRoundings; OP_COUNT where a rounding is not tested.
struct RoundedForms {
  const char* name;
  int arity;
  ExactFn exact;
  Op ops[4];
};

// Each form in format f (PTX type suffix `type`) over the singles or pairs of vals, or the
// triples of the smaller set `small`, as its arity asks.
void check_rounded(Fmt f, const char* type, const std::vector<uint64_t>& vals,
                   const std::vector<uint64_t>& small, std::initializer_list<RoundedForms> forms) {
  const std::vector<Case> by_arity[3] = {singles(vals), pairs(vals), triples(small)};
  for (const RoundedForms& form : forms)
    for (int m = 0; m < 4; ++m)
      if (form.ops[m] != OP_COUNT)
        check(form.ops[m], conf_fmt("%s.%s.%s", form.name, kRoundingNames[m], type).s, f,
              form.arity, by_arity[form.arity - 1], rounded(form.exact, f, kRoundings[m]));
}

double f32v(uint64_t bits) { return bits_f32((uint32_t)bits); }
bool is_nan32(uint64_t b) { return is_nan_bits(b, F32); }

// min/max per the ISA: a NaN operand is ignored unless both are NaN (.NaN: any NaN gives NaN),
// and +0.0 counts as greater than -0.0.
Val minmax(uint64_t a, uint64_t b, Fmt f, bool is_max, bool nan_mode) {
  Val v;
  const bool an = is_nan_bits(a, f), bn = is_nan_bits(b, f);
  if ((an && bn) || (nan_mode && (an || bn))) return nan_val();
  if (an) return Val{b};
  if (bn) return Val{a};
  double x = to_double(a, f), y = to_double(b, f);
  if (x == y) {  // equal values differ at most in the sign of zero
    const bool xneg = a & sign_bit(f);
    v.bits = (is_max ? !xneg : xneg) ? a : b;
    return v;
  }
  v.bits = ((x > y) == is_max) ? a : b;
  return v;
}

// abs/neg: the sign bit alone changes for numbers; a NaN input gives "an unspecified NaN".
Val absneg(uint64_t a, Fmt f, bool is_abs) {
  Val v;
  if (is_nan_bits(a, f)) return nan_val();
  v.bits = is_abs ? (a & ~sign_bit(f)) : (a ^ sign_bit(f));
  return v;
}

}  // namespace

int main() {
  conf_require_device();

  // ---- f32 rounded arithmetic ----
  check_rounded(F32, "f32", kF32, kF32small,
                {{"add", 2, add_of, {ADD_RN_F32, ADD_RZ_F32, ADD_RM_F32, ADD_RP_F32}},
                 {"sub", 2, sub_of, {SUB_RN_F32, SUB_RZ_F32, SUB_RM_F32, SUB_RP_F32}},
                 {"mul", 2, mul_of, {MUL_RN_F32, MUL_RZ_F32, MUL_RM_F32, MUL_RP_F32}},
                 {"fma", 3, fma_of, {FMA_RN_F32, FMA_RZ_F32, FMA_RM_F32, FMA_RP_F32}},
                 // mad.f32 with a rounding modifier is the same fused operation as fma
                 // ("mad.f32 and fma.f32 are the same" on sm_20+).
                 {"mad", 3, fma_of, {MAD_RN_F32, OP_COUNT, OP_COUNT, OP_COUNT}},
                 {"div", 2, div_of, {DIV_RN_F32, DIV_RZ_F32, DIV_RM_F32, DIV_RP_F32}},
                 {"rcp", 1, rcp_of, {RCP_RN_F32, RCP_RZ_F32, RCP_RM_F32, RCP_RP_F32}},
                 {"sqrt", 1, sqrt_of, {SQRT_RN_F32, SQRT_RZ_F32, SQRT_RM_F32, SQRT_RP_F32}}});
  {
    const std::vector<Case> p = pairs(kF32), t = triples(kF32small);
    // .ftz: subnormal inputs and results become sign-preserving zeros. Products of small normals
    // land in the subnormal range here.
    std::vector<uint64_t> tiny = kF32;
    tiny.insert(tiny.end(), {0x1f000000, 0x20000000, 0x9f800001, 0x00400000, 0x80000001, 0x00800001});
    const std::vector<Case> pt = pairs(tiny);
    check(ADD_RN_FTZ_F32, "add.rn.ftz.f32", F32, 2, pt, rounded(add_of, F32, Rnd::RN, true));
    check(MUL_RN_FTZ_F32, "mul.rn.ftz.f32", F32, 2, pt, rounded(mul_of, F32, Rnd::RN, true));
    check(FMA_RN_FTZ_F32, "fma.rn.ftz.f32", F32, 3, t, rounded(fma_of, F32, Rnd::RN, true));
    // .sat: clamp to [0.0, 1.0], NaN results to +0.0.
    check(ADD_RN_SAT_F32, "add.rn.sat.f32", F32, 2, p, rounded(add_of, F32, Rnd::RN, false, true));
    check(MUL_RZ_SAT_F32, "mul.rz.sat.f32", F32, 2, p, rounded(mul_of, F32, Rnd::RZ, false, true));
    check(FMA_RN_SAT_F32, "fma.rn.sat.f32", F32, 3, t, rounded(fma_of, F32, Rnd::RN, false, true));
  }

  // ---- f64 rounded arithmetic ----
  check_rounded(F64, "f64", kF64, kF64small,
                {{"add", 2, add_of, {ADD_RN_F64, ADD_RZ_F64, ADD_RM_F64, ADD_RP_F64}},
                 {"sub", 2, sub_of, {SUB_RN_F64, OP_COUNT, OP_COUNT, OP_COUNT}},
                 {"mul", 2, mul_of, {MUL_RN_F64, MUL_RZ_F64, MUL_RM_F64, MUL_RP_F64}},
                 {"fma", 3, fma_of, {FMA_RN_F64, FMA_RZ_F64, FMA_RM_F64, FMA_RP_F64}},
                 {"mad", 3, fma_of, {MAD_RN_F64, OP_COUNT, OP_COUNT, OP_COUNT}},
                 {"div", 2, div_of, {DIV_RN_F64, DIV_RZ_F64, DIV_RM_F64, DIV_RP_F64}},
                 {"rcp", 1, rcp_of, {RCP_RN_F64, OP_COUNT, OP_COUNT, OP_COUNT}},
                 {"sqrt", 1, sqrt_of, {SQRT_RN_F64, SQRT_RZ_F64, SQRT_RM_F64, SQRT_RP_F64}}});

  // ---- half precision (default and only rounding .rn) ----
  {
    const std::vector<Case> ph = pairs(kF16), th = triples({0x0000, 0x8000, 0x3c00, 0xbc00, 0x3c01, 0x0001,
                                                           0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x1400, 0xbe00}),
                            sh = singles(kF16);
    const Rnd rn = Rnd::RN;
    check(ADD_RN_F16, "add.rn.f16", F16, 2, ph, rounded(add_of, F16, rn));
    check(SUB_RN_F16, "sub.rn.f16", F16, 2, ph, rounded(sub_of, F16, rn));
    check(MUL_RN_F16, "mul.rn.f16", F16, 2, ph, rounded(mul_of, F16, rn));
    check(FMA_RN_F16, "fma.rn.f16", F16, 3, th, rounded(fma_of, F16, rn));
    check(FMA_RN_RELU_F16, "fma.rn.relu.f16", F16, 3, th, with_relu(rounded(fma_of, F16, rn), F16));
    check(ADD_RN_SAT_F16, "add.rn.sat.f16", F16, 2, ph, rounded(add_of, F16, rn, false, true));
    check(MUL_RN_FTZ_F16, "mul.rn.ftz.f16", F16, 2, ph, rounded(mul_of, F16, rn, true));
    check(MIN_F16, "min.f16", F16, 2, ph, [](const Case& x) { return minmax(x.a, x.b, F16, false, false); });
    check(MAX_F16, "max.f16", F16, 2, ph, [](const Case& x) { return minmax(x.a, x.b, F16, true, false); });
    check(MIN_NAN_F16, "min.NaN.f16", F16, 2, ph, [](const Case& x) { return minmax(x.a, x.b, F16, false, true); });
    check(NEG_F16, "neg.f16", F16, 1, sh, [](const Case& x) { return absneg(x.a, F16, false); });
    check(ABS_F16, "abs.f16", F16, 1, sh, [](const Case& x) { return absneg(x.a, F16, true); });

    const std::vector<Case> pb = pairs(kBF16), tb = triples({0x0000, 0x8000, 0x3f80, 0xbf80, 0x3f81, 0x0001,
                                                            0x7f7f, 0x7f80, 0xff80, 0x7fc0, 0x3b80, 0xbfc0}),
                            sb = singles(kBF16);
    check(ADD_RN_BF16, "add.rn.bf16", BF16, 2, pb, rounded(add_of, BF16, rn));
    check(MUL_RN_BF16, "mul.rn.bf16", BF16, 2, pb, rounded(mul_of, BF16, rn));
    check(FMA_RN_BF16, "fma.rn.bf16", BF16, 3, tb, rounded(fma_of, BF16, rn));
    check(FMA_RN_RELU_BF16, "fma.rn.relu.bf16", BF16, 3, tb,
          with_relu(rounded(fma_of, BF16, rn), BF16));
    check(MIN_BF16, "min.bf16", BF16, 2, pb, [](const Case& x) { return minmax(x.a, x.b, BF16, false, false); });
    check(MAX_BF16, "max.bf16", BF16, 2, pb, [](const Case& x) { return minmax(x.a, x.b, BF16, true, false); });
    check(NEG_BF16, "neg.bf16", BF16, 1, sb, [](const Case& x) { return absneg(x.a, BF16, false); });
    check(ABS_BF16, "abs.bf16", BF16, 1, sb, [](const Case& x) { return absneg(x.a, BF16, true); });

    const std::vector<Case> p2 = pairs_x2(kF16, false), t2 = pairs_x2(kF16, true);
    check_x2(ADD_RN_F16X2, "add.rn.f16x2", F16, 2, p2, rounded(add_of, F16, rn));
    check_x2(MUL_RN_F16X2, "mul.rn.f16x2", F16, 2, p2, rounded(mul_of, F16, rn));
    check_x2(FMA_RN_F16X2, "fma.rn.f16x2", F16, 3, t2, rounded(fma_of, F16, rn));
    check_x2(MIN_F16X2, "min.f16x2", F16, 2, p2, [](const Case& x) { return minmax(x.a, x.b, F16, false, false); });
    check_x2(MAX_NAN_F16X2, "max.NaN.f16x2", F16, 2, p2, [](const Case& x) { return minmax(x.a, x.b, F16, true, true); });
    const std::vector<Case> pb2 = pairs_x2(kBF16, false), tb2 = pairs_x2(kBF16, true);
    check_x2(ADD_RN_BF16X2, "add.rn.bf16x2", BF16, 2, pb2, rounded(add_of, BF16, rn));
    check_x2(FMA_RN_BF16X2, "fma.rn.bf16x2", BF16, 3, tb2, rounded(fma_of, BF16, rn));
    check_x2(MAX_BF16X2, "max.bf16x2", BF16, 2, pb2, [](const Case& x) { return minmax(x.a, x.b, BF16, true, false); });
  }

  // ---- min/max/abs/neg/copysign ----
  {
    const std::vector<Case> p = pairs(kF32), s = singles(kF32), p64 = pairs(kF64), s64 = singles(kF64);
    check(MIN_F32, "min.f32", F32, 2, p, [](const Case& x) { return minmax(x.a, x.b, F32, false, false); });
    check(MAX_F32, "max.f32", F32, 2, p, [](const Case& x) { return minmax(x.a, x.b, F32, true, false); });
    check(MIN_NAN_F32, "min.NaN.f32", F32, 2, p, [](const Case& x) { return minmax(x.a, x.b, F32, false, true); });
    check(MAX_NAN_F32, "max.NaN.f32", F32, 2, p, [](const Case& x) { return minmax(x.a, x.b, F32, true, true); });
    check(MIN_F64, "min.f64", F64, 2, p64, [](const Case& x) { return minmax(x.a, x.b, F64, false, false); });
    check(MAX_F64, "max.f64", F64, 2, p64, [](const Case& x) { return minmax(x.a, x.b, F64, true, false); });
    std::vector<Case> s_nan = s;  // a negative NaN and a signalling-pattern NaN too
    s_nan.push_back({0xffc00001, 0, 0});
    s_nan.push_back({0x7f800001, 0, 0});
    check(ABS_F32, "abs.f32", F32, 1, s_nan, [](const Case& x) { return absneg(x.a, F32, true); });
    check(NEG_F32, "neg.f32", F32, 1, s_nan, [](const Case& x) { return absneg(x.a, F32, false); });
    std::vector<Case> s64_nan = s64;
    s64_nan.push_back({0xfff8000000000001ull, 0, 0});
    s64_nan.push_back({0x7ff4000000000000ull, 0, 0});
    // abs.f64: "NaN input is passed through unchanged" (the sign bit too), unlike abs.f32.
    check(ABS_F64, "abs.f64", F64, 1, s64_nan, [](const Case& x) {
      if (is_nan_bits(x.a, F64)) return Val{x.a};
      return absneg(x.a, F64, true);
    });
    check(NEG_F64, "neg.f64", F64, 1, s64_nan, [](const Case& x) { return absneg(x.a, F64, false); });
    // copysign d, a, b: "Copy sign bit of a into value of b". A NaN b is only required to stay
    // NaN (the ISA says nothing about its payload).
    check(COPYSIGN_F32, "copysign.f32", F32, 2, p, [](const Case& x) {
      Val v;
      if (is_nan32(x.b)) v.any_nan = true;
      else v.bits = (x.a & 0x80000000u) | (x.b & 0x7fffffffu);
      return v;
    });
    check(COPYSIGN_F64, "copysign.f64", F64, 2, p64, [](const Case& x) {
      Val v;
      if (is_nan_bits(x.b, F64)) v.any_nan = true;
      else v.bits = (x.a & 0x8000000000000000ull) | (x.b & 0x7fffffffffffffffull);
      return v;
    });
  }

  // ---- testp and setp ----
  {
    std::vector<Case> s = singles(kF32);
    s.push_back({0x7f800001, 0, 0});
    s.push_back({0xffffffff, 0, 0});
    auto cls = [](uint64_t b, Fmt f) { return decode(b, f); };
    struct T {
      Op op;
      const char* name;
      std::function<bool(const Exact&, bool)> f;  // value, is-subnormal
    };
    const T tests[] = {
        {TESTP_FINITE_F32, "testp.finite.f32", [](const Exact& e, bool) { return !e.inf && !e.nan; }},
        {TESTP_INFINITE_F32, "testp.infinite.f32", [](const Exact& e, bool) { return e.inf; }},
        {TESTP_NUMBER_F32, "testp.number.f32", [](const Exact& e, bool) { return !e.nan; }},
        {TESTP_NOTANUMBER_F32, "testp.notanumber.f32", [](const Exact& e, bool) { return e.nan; }},
        // "positive and negative zero are considered normal numbers"
        {TESTP_NORMAL_F32, "testp.normal.f32", [](const Exact& e, bool sub) { return !e.nan && !e.inf && !sub; }},
        {TESTP_SUBNORMAL_F32, "testp.subnormal.f32", [](const Exact& e, bool sub) { return !e.nan && !e.inf && sub; }},
    };
    for (const T& t : tests) {
      auto f = t.f;
      check(t.op, t.name, F32, 1, s, [f, cls](const Case& x) {
        return Val{(uint64_t)f(cls(x.a, F32), is_subnormal_bits(x.a, F32))};
      });
    }
    const std::vector<Case> s64 = singles(kF64);
    check(TESTP_NORMAL_F64, "testp.normal.f64", F64, 1, s64, [cls](const Case& x) {
      Exact e = cls(x.a, F64);
      return Val{(uint64_t)(!e.nan && !e.inf && !is_subnormal_bits(x.a, F64))};
    });
    check(TESTP_SUBNORMAL_F64, "testp.subnormal.f64", F64, 1, s64, [](const Case& x) {
      return Val{(uint64_t)is_subnormal_bits(x.a, F64)};
    });
    check(TESTP_FINITE_F64, "testp.finite.f64", F64, 1, s64, [cls](const Case& x) {
      Exact e = cls(x.a, F64);
      return Val{(uint64_t)(!e.nan && !e.inf)};
    });

    // Ordered comparisons are false with a NaN operand; the u-forms are true; num/nan test for
    // NaN operands. Values compare as real numbers (so +0 == -0).
    const std::vector<Case> p = pairs(kF32);
    struct C {
      Op op;
      const char* name;
      int rel;  // 0 eq, 1 ne, 2 lt, 3 le, 4 gt, 5 ge, 6 num, 7 nan
      bool unordered;
    };
    const C cmps[] = {{SETP_EQ_F32, "setp.eq.f32", 0, false}, {SETP_NE_F32, "setp.ne.f32", 1, false},
                      {SETP_LT_F32, "setp.lt.f32", 2, false}, {SETP_LE_F32, "setp.le.f32", 3, false},
                      {SETP_GT_F32, "setp.gt.f32", 4, false}, {SETP_GE_F32, "setp.ge.f32", 5, false},
                      {SETP_EQU_F32, "setp.equ.f32", 0, true}, {SETP_NEU_F32, "setp.neu.f32", 1, true},
                      {SETP_LTU_F32, "setp.ltu.f32", 2, true}, {SETP_LEU_F32, "setp.leu.f32", 3, true},
                      {SETP_GTU_F32, "setp.gtu.f32", 4, true}, {SETP_GEU_F32, "setp.geu.f32", 5, true},
                      {SETP_NUM_F32, "setp.num.f32", 6, false}, {SETP_NAN_F32, "setp.nan.f32", 7, false}};
    auto cmp = [](double a, double b, bool anynan, int rel, bool unordered) {
      if (rel == 6) return !anynan;
      if (rel == 7) return anynan;
      if (anynan) return unordered;
      switch (rel) {
        case 0: return a == b;
        case 1: return a != b;
        case 2: return a < b;
        case 3: return a <= b;
        case 4: return a > b;
        default: return a >= b;
      }
    };
    for (const C& c : cmps) {
      const int rel = c.rel;
      const bool u = c.unordered;
      check(c.op, c.name, F32, 2, p, [=](const Case& x) {
        bool nan = is_nan32(x.a) || is_nan32(x.b);
        return Val{(uint64_t)cmp(f32v(x.a), f32v(x.b), nan, rel, u)};
      });
    }
    // .ftz: subnormal inputs compare as zeros of their sign, so 2^-149 < 2^-148 becomes false.
    std::vector<Case> pf = p;
    pf.push_back({0x00000001, 0x00000002, 0});
    pf.push_back({0x80000001, 0x00000000, 0});
    check(SETP_LT_FTZ_F32, "setp.lt.ftz.f32", F32, 2, pf, [=](const Case& x) {
      double a = is_subnormal_bits(x.a, F32) ? 0.0 : f32v(x.a);
      double b = is_subnormal_bits(x.b, F32) ? 0.0 : f32v(x.b);
      bool nan = is_nan32(x.a) || is_nan32(x.b);
      return Val{(uint64_t)cmp(a, b, nan, 2, false)};
    });
    const std::vector<Case> p64 = pairs(kF64);
    check(SETP_NE_F64, "setp.ne.f64", F64, 2, p64, [=](const Case& x) {
      bool nan = is_nan_bits(x.a, F64) || is_nan_bits(x.b, F64);
      return Val{(uint64_t)cmp(bits_f64(x.a), bits_f64(x.b), nan, 1, false)};
    });
    check(SETP_GEU_F64, "setp.geu.f64", F64, 2, p64, [=](const Case& x) {
      bool nan = is_nan_bits(x.a, F64) || is_nan_bits(x.b, F64);
      return Val{(uint64_t)cmp(bits_f64(x.a), bits_f64(x.b), nan, 5, true)};
    });
    check(SETP_NAN_F64, "setp.nan.f64", F64, 2, p64, [=](const Case& x) {
      bool nan = is_nan_bits(x.a, F64) || is_nan_bits(x.b, F64);
      return Val{(uint64_t)cmp(0, 0, nan, 7, false)};
    });
  }

  // ---- approximate f32 instructions: the ISA's error bounds and special-value tables ----
  {
    const uint64_t PINF = 0x7f800000, NINF = 0xff800000, PZ = 0, NZ = 0x80000000, ONE = 0x3f800000;
    const std::vector<uint64_t> specials = {PZ, NZ, PINF, NINF, 0x7fc00000, 0xbf800000, 0xc2c80000};

    // rcp.approx.f32: "maximum ulp error is 1"; -Inf -> -0, -0 -> -Inf, +0 -> +Inf, +Inf -> +0.
    std::vector<uint64_t> rv = spread(0.5, 2.0, 40);
    for (uint64_t b : spread(-1e30, 1e30, 40)) rv.push_back(b);
    rv.insert(rv.end(), {0x3f800000, 0x40400000, 0xc0e00000, 0x7e800000, 0x01000000, 0x3dcccccd});
    rv.insert(rv.end(), specials.begin(), specials.end());
    auto rcp_special = [=](const Case& x, Val* v) {
      if (is_nan32(x.a)) return *v = nan_val(), true;
      if (x.a == PZ) return *v = Val{PINF}, true;
      if (x.a == NZ) return *v = Val{NINF}, true;
      if (x.a == PINF) return *v = Val{PZ}, true;
      if (x.a == NINF) return *v = Val{NZ}, true;
      return false;
    };
    approx(RCP_APPROX_F32, "rcp.approx.f32", singles(rv), [](const Case& x) { return 1.0 / f32v(x.a); },
           rcp_special, [](const Case&) { return std::make_pair(Bound::ULP_ABS, 1.0); });

    // sqrt.approx.f32: relative error 2^-23 over the positive finite range (subnormals too);
    // -Inf, -normal -> NaN; -0 -> -0; +0 -> +0; +Inf -> +Inf.
    std::vector<uint64_t> sv = spread(0.0, 4.0, 40);
    for (uint64_t b : spread(1.0, 1e37, 30)) sv.push_back(b);
    sv.insert(sv.end(), {0x00000001, 0x00400000, 0x7f7fffff, 0x3f800000, 0x40800000});
    sv.insert(sv.end(), specials.begin(), specials.end());
    approx(SQRT_APPROX_F32, "sqrt.approx.f32", singles(sv), [](const Case& x) { return std::sqrt(f32v(x.a)); },
           [=](const Case& x, Val* v) {
             if (is_nan32(x.a) || x.a == NINF || (x.a != NZ && (x.a & 0x80000000u))) return *v = nan_val(), true;
             if (x.a == PZ || x.a == NZ || x.a == PINF) return *v = Val{x.a}, true;
             return false;
           },
           [](const Case&) { return std::make_pair(Bound::REL, std::ldexp(1.0, -23)); });

    // rsqrt.approx.f32: relative error 2^-22.9; -0 -> -Inf, +0 -> +Inf, +Inf -> +0.
    approx(RSQRT_APPROX_F32, "rsqrt.approx.f32", singles(sv),
           [](const Case& x) { return 1.0 / std::sqrt(f32v(x.a)); },
           [=](const Case& x, Val* v) {
             if (is_nan32(x.a) || x.a == NINF || (x.a != NZ && (x.a & 0x80000000u))) return *v = nan_val(), true;
             if (x.a == PZ) return *v = Val{PINF}, true;
             if (x.a == NZ) return *v = Val{NINF}, true;
             if (x.a == PINF) return *v = Val{PZ}, true;
             return false;
           },
           [](const Case&) { return std::make_pair(Bound::REL, std::pow(2.0, -22.9)); });

    // ex2.approx.f32: "maximum ulp error is 2 ulp from correctly rounded result across the full
    // range"; -Inf -> +0, +-0 -> +1, +Inf -> +Inf.
    std::vector<uint64_t> ev = spread(-125.0, 127.0, 60);
    for (uint64_t b : spread(-1.0, 1.0, 30)) ev.push_back(b);
    ev.insert(ev.end(), {0x3f000000, 0xbf000000, 0x42fc0000, 0xc2fc0000, 0x3f800000, 0x40a00000, 0xc3020000});
    ev.insert(ev.end(), specials.begin(), specials.end() - 2);
    approx(EX2_APPROX_F32, "ex2.approx.f32", singles(ev), [](const Case& x) { return std::exp2(f32v(x.a)); },
           [=](const Case& x, Val* v) {
             if (is_nan32(x.a)) return *v = nan_val(), true;
             if (x.a == NINF) return *v = Val{PZ}, true;
             if (x.a == PZ || x.a == NZ) return *v = Val{ONE}, true;
             if (x.a == PINF) return *v = Val{PINF}, true;
             return false;
           },
           [](const Case&) { return std::make_pair(Bound::CR_ULPS, 2.0); });

    // lg2.approx.f32: absolute error 2^-22 for inputs in (0.5, 2), relative error 2^-22 for
    // other positive finite inputs; -Inf, -normal -> NaN; +-0 -> -Inf; +Inf -> +Inf.
    std::vector<uint64_t> lv = spread(0.5, 2.0, 50);
    for (uint64_t b : spread(2.0, 1e30, 30)) lv.push_back(b);
    for (uint64_t b : spread(1e-30, 0.5, 30)) lv.push_back(b);
    lv.insert(lv.end(), {0x3f800000, 0x40000000, 0x3f000001, 0x00800000, 0x7f7fffff, 0x00000010});
    lv.insert(lv.end(), specials.begin(), specials.end());
    approx(LG2_APPROX_F32, "lg2.approx.f32", singles(lv), [](const Case& x) { return std::log2(f32v(x.a)); },
           [=](const Case& x, Val* v) {
             if (is_nan32(x.a) || x.a == NINF || (x.a != NZ && (x.a & 0x80000000u))) return *v = nan_val(), true;
             if (x.a == PZ || x.a == NZ) return *v = Val{NINF}, true;
             if (x.a == PINF) return *v = Val{PINF}, true;
             return false;
           },
           [](const Case& x) {
             double a = f32v(x.a);
             if (a > 0.5 && a < 2.0) return std::make_pair(Bound::ABS, std::ldexp(1.0, -22));
             return std::make_pair(Bound::REL, std::ldexp(1.0, -22));
           });

    // sin/cos.approx.f32: absolute error 2^-20.5 on [-2pi, 2pi], 2^-14.7 on [-100pi, 100pi];
    // +-Inf -> NaN; sin(+-0) = +-0, cos(+-0) = +1.
    const double PI = 3.14159265358979323846;
    std::vector<uint64_t> tv = spread(-2 * PI, 2 * PI, 60);
    for (uint64_t b : spread(-100 * PI, 100 * PI, 40)) tv.push_back(b);
    tv.insert(tv.end(), {0x3fc90fdb, 0x40490fdb, 0xc0490fdb, 0x3f800000, 0x00000001, 0x33d6bf95});
    tv.insert(tv.end(), specials.begin(), specials.end() - 1);
    auto trig_bound = [=](const Case& x) {
      double a = std::fabs(f32v(x.a));
      return std::make_pair(Bound::ABS, a <= 2 * PI ? std::pow(2.0, -20.5) : std::pow(2.0, -14.7));
    };
    approx(SIN_APPROX_F32, "sin.approx.f32", singles(tv), [](const Case& x) { return std::sin(f32v(x.a)); },
           [=](const Case& x, Val* v) {
             if (is_nan32(x.a) || x.a == PINF || x.a == NINF) return *v = nan_val(), true;
             if (x.a == PZ || x.a == NZ) return *v = Val{x.a}, true;
             return false;
           },
           trig_bound);
    approx(COS_APPROX_F32, "cos.approx.f32", singles(tv), [](const Case& x) { return std::cos(f32v(x.a)); },
           [=](const Case& x, Val* v) {
             if (is_nan32(x.a) || x.a == PINF || x.a == NINF) return *v = nan_val(), true;
             if (x.a == PZ || x.a == NZ) return *v = Val{ONE}, true;
             return false;
           },
           trig_bound);

    // div.approx.f32: "For |b| in [2^-126, 2^126], the maximum ulp error is 2"; div.full.f32:
    // "maximum ulp error is 2 across the full range". Quotients are kept in the normal range;
    // the only special case compared is a NaN operand (NaN result).
    std::vector<Case> dv;
    std::vector<uint64_t> num = spread(-1e20, 1e20, 12), den = spread(-1e15, 1e15, 12);
    den.insert(den.end(), {0x3f800000, 0x40400000, 0x00800000, 0x7e800000, 0x3dcccccd});
    num.insert(num.end(), {0x3f800000, 0x40e00000, 0x00000000});
    for (uint64_t a : num)
      for (uint64_t b : den) dv.push_back({a, b, 0});
    dv.push_back({0x7fc00000, 0x3f800000, 0});
    dv.push_back({0x3f800000, 0x7fc00000, 0});
    auto div_nan = [=](const Case& x, Val* v) {
      if (is_nan32(x.a) || is_nan32(x.b)) return *v = nan_val(), true;
      if ((x.b & 0x7fffffffu) == 0) return v->skip = true, true;
      double q = f32v(x.a) / f32v(x.b);
      if (q != 0 && (std::fabs(q) < 0x1p-125 || std::fabs(q) > 0x1p127)) return v->skip = true, true;
      return false;
    };
    approx(DIV_APPROX_F32, "div.approx.f32", dv, [](const Case& x) { return f32v(x.a) / f32v(x.b); }, div_nan,
           [](const Case&) { return std::make_pair(Bound::ULP_ABS, 2.0); }, 2);
    approx(DIV_FULL_F32, "div.full.f32", dv, [](const Case& x) { return f32v(x.a) / f32v(x.b); }, div_nan,
           [](const Case&) { return std::make_pair(Bound::ULP_ABS, 2.0); }, 2);
  }

  return conf_finish("float_ops");
}
