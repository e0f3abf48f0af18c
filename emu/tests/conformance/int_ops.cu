// Conformance: integer and logic instructions, one PTX instruction per case through inline asm.
//
// Every case runs one instruction on up to four 64-bit operand words (each op casts them to its
// own operand types) and writes one 64-bit result word. Expected values are computed on the host
// from the PTX ISA's semantics sections (quoted in the comments where they are not plain C), with
// host integer arithmetic only: widening through 64/128-bit integers for .hi/.wide, explicit
// clamping for shift amounts and bit-field positions.
//
// Where the ISA leaves a result unspecified (integer division by zero, "machine-specific"), the
// instruction still runs (an emulator must not trap on it) but its value is not compared.
#include "conf_common.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace {

struct Case {
  uint64_t a, b, c, d;
};

// ---- the device side: one kernel per operand shape, an op code selecting the instruction ----

enum Op {
  // 32-bit two-operand
  ADD_U32, SUB_U32, ADD_SAT_S32, SUB_SAT_S32, MUL_LO_U32, MUL_LO_S32, MUL_HI_U32, MUL_HI_S32,
  DIV_U32, DIV_S32, REM_U32, REM_S32, MIN_U32, MIN_S32, MAX_U32, MAX_S32, MAX_RELU_S32,
  AND_B32, OR_B32, XOR_B32, SHL_B32, SHR_U32, SHR_S32, SHR_B32,
  ADD_U16X2, ADD_S16X2, MIN_S16X2, MAX_U16X2, MIN_U16X2, MAX_S16X2, MAX_RELU_S16X2,
  BMSK_CLAMP, BMSK_WRAP, SZEXT_CLAMP_S32, SZEXT_WRAP_S32, SZEXT_CLAMP_U32, SZEXT_WRAP_U32,
  MUL24_LO_S32, MUL24_HI_U32,
  // 32-bit one-operand
  NOT_B32, CNOT_B32, ABS_S32, NEG_S32, POPC_B32, CLZ_B32, BREV_B32, BFIND_U32, BFIND_S32,
  BFIND_SHIFTAMT_U32, BFIND_SHIFTAMT_S32,
  // 32-bit three/four-operand
  MAD_LO_U32, MAD_LO_S32, MAD_HI_U32, MAD_HI_S32, MAD_HI_SAT_S32, SAD_U32, SAD_S32,
  BFE_U32, BFE_S32, BFI_B32, PRMT, PRMT_F4E, PRMT_B4E, PRMT_RC8, PRMT_ECL, PRMT_ECR, PRMT_RC16,
  DP4A_UU, DP4A_SS, DP4A_US, DP4A_SU, DP2A_LO_UU, DP2A_HI_SS, DP2A_LO_SU, DP2A_HI_US,
  SHF_L_CLAMP, SHF_L_WRAP, SHF_R_CLAMP, SHF_R_WRAP, SELP_B32,
  LOP3_00, LOP3_FF, LOP3_F0, LOP3_CC, LOP3_AA, LOP3_80, LOP3_FE, LOP3_96, LOP3_E8, LOP3_CA,
  LOP3_1A, LOP3_01,
  // 16-bit
  ADD_U16, MUL_LO_S16, MUL_HI_U16, MUL_WIDE_S16, MUL_WIDE_U16, SHR_S16, SHL_B16,
  // 64-bit
  ADD_U64, SUB_U64, MUL_LO_U64, MUL_HI_U64, MUL_HI_S64, DIV_U64, DIV_S64, REM_U64, REM_S64,
  MIN_U64, MIN_S64, MAX_U64, MAX_S64, AND_B64, OR_B64, XOR_B64, NOT_B64, SHL_B64, SHR_U64,
  SHR_S64, ABS_S64, NEG_S64, POPC_B64, CLZ_B64, BREV_B64, BFIND_U64, BFIND_S64,
  BFIND_SHIFTAMT_S64, BFE_U64, BFE_S64, BFI_B64, MAD_LO_U64, MAD_HI_S64, MAD_HI_U64,
  // widening
  MUL_WIDE_U32, MUL_WIDE_S32, MAD_WIDE_U32, MAD_WIDE_S32,
  // carry chains: a,b = low/high words of x, c,d = low/high words of y (u32 each)
  ADD_CC_CHAIN, SUB_CC_CHAIN, ADD_CC_CARRYOUT, SUB_CC_BORROWOUT, ADDC_CC_CHAIN64, MADC_CHAIN,
  // setp, one comparison per op, result 1/0 through selp
  SETP_EQ_S32, SETP_NE_S32, SETP_LT_S32, SETP_LE_S32, SETP_GT_S32, SETP_GE_S32,
  SETP_LT_U32, SETP_LE_U32, SETP_GT_U32, SETP_GE_U32, SETP_LO_U32, SETP_LS_U32, SETP_HI_U32,
  SETP_HS_U32, SETP_EQ_B32, SETP_NE_B32, SETP_LT_S64, SETP_HI_U64, SETP_GE_U64, SETP_LE_S16,
  // setp with BoolOp: result = p*2 + q, c&1 is the combined predicate
  SETP_LT_AND_S32, SETP_LT_OR_S32, SETP_LT_XOR_S32, SETP_GT_AND_NOTC_U32,
  OP_COUNT
};

#define R32(x) static_cast<uint32_t>(x)
#define BIN32(OP, INS)                                                   \
  case OP:                                                               \
    asm(INS " %0, %1, %2;" : "=r"(r32) : "r"(R32(x.a)), "r"(R32(x.b))); \
    break;
#define UN32(OP, INS)                                   \
  case OP:                                              \
    asm(INS " %0, %1;" : "=r"(r32) : "r"(R32(x.a))); \
    break;
#define TER32(OP, INS)                                                                      \
  case OP:                                                                                  \
    asm(INS " %0, %1, %2, %3;" : "=r"(r32) : "r"(R32(x.a)), "r"(R32(x.b)), "r"(R32(x.c))); \
    break;
#define LOP3(OP, IMM)                                                                       \
  case OP:                                                                                  \
    asm("lop3.b32 %0, %1, %2, %3, " #IMM ";"                                                \
        : "=r"(r32)                                                                         \
        : "r"(R32(x.a)), "r"(R32(x.b)), "r"(R32(x.c)));                                     \
    break;
#define BIN64(OP, INS)                                        \
  case OP:                                                    \
    asm(INS " %0, %1, %2;" : "=l"(r64) : "l"(x.a), "l"(x.b)); \
    break;
#define UN64(OP, INS)                             \
  case OP:                                        \
    asm(INS " %0, %1;" : "=l"(r64) : "l"(x.a)); \
    break;
#define UN64TO32(OP, INS)                         \
  case OP:                                        \
    asm(INS " %0, %1;" : "=r"(r32) : "l"(x.a)); \
    break;
#define SHIFT64(OP, INS)                                           \
  case OP:                                                         \
    asm(INS " %0, %1, %2;" : "=l"(r64) : "l"(x.a), "r"(R32(x.b))); \
    break;
#define SETP32(OP, CMP)                                                                         \
  case OP:                                                                                      \
    asm("{ .reg .pred p; setp." CMP " p, %1, %2; selp.u32 %0, 1, 0, p; }"                       \
        : "=r"(r32)                                                                             \
        : "r"(R32(x.a)), "r"(R32(x.b)));                                                        \
    break;
#define SETP64(OP, CMP)                                                                         \
  case OP:                                                                                      \
    asm("{ .reg .pred p; setp." CMP " p, %1, %2; selp.u32 %0, 1, 0, p; }"                       \
        : "=r"(r32)                                                                             \
        : "l"(x.a), "l"(x.b));                                                                  \
    break;
#define SETPBOOL(OP, CMP, CPRED)                                                               \
  case OP:                                                                                     \
    asm("{ .reg .pred p, q, c; setp.ne.u32 c, %3, 0;"                                          \
        " setp." CMP " p|q, %1, %2, " CPRED ";"                                                \
        " .reg .u32 t; selp.u32 %0, 2, 0, p; selp.u32 t, 1, 0, q; add.u32 %0, %0, t; }"                   \
        : "=r"(r32)                                                                            \
        : "r"(R32(x.a)), "r"(R32(x.b)), "r"(R32(x.c) & 1u));                                   \
    break;

// One kernel per op (OP is a template argument, so each instantiation holds just its own
// instruction): an instruction the emulator cannot load then fails only its own launch.
template <int OP>
__global__ void k_int(const Case* in, uint64_t* out, int n) {
  constexpr int op = OP;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const Case x = in[i];
    uint32_t r32 = 0;
    uint64_t r64 = 0;
    bool wide = false;  // result in r64 rather than r32
    switch (op) {
      BIN32(ADD_U32, "add.u32")
      BIN32(SUB_U32, "sub.u32")
      BIN32(ADD_SAT_S32, "add.sat.s32")
      BIN32(SUB_SAT_S32, "sub.sat.s32")
      BIN32(MUL_LO_U32, "mul.lo.u32")
      BIN32(MUL_LO_S32, "mul.lo.s32")
      BIN32(MUL_HI_U32, "mul.hi.u32")
      BIN32(MUL_HI_S32, "mul.hi.s32")
      BIN32(DIV_U32, "div.u32")
      BIN32(DIV_S32, "div.s32")
      BIN32(REM_U32, "rem.u32")
      BIN32(REM_S32, "rem.s32")
      BIN32(MIN_U32, "min.u32")
      BIN32(MIN_S32, "min.s32")
      BIN32(MAX_U32, "max.u32")
      BIN32(MAX_S32, "max.s32")
      BIN32(MAX_RELU_S32, "max.relu.s32")
      BIN32(AND_B32, "and.b32")
      BIN32(OR_B32, "or.b32")
      BIN32(XOR_B32, "xor.b32")
      BIN32(SHL_B32, "shl.b32")
      BIN32(SHR_U32, "shr.u32")
      BIN32(SHR_S32, "shr.s32")
      BIN32(SHR_B32, "shr.b32")
      BIN32(ADD_U16X2, "add.u16x2")
      BIN32(ADD_S16X2, "add.s16x2")
      BIN32(MIN_S16X2, "min.s16x2")
      BIN32(MAX_U16X2, "max.u16x2")
      BIN32(MIN_U16X2, "min.u16x2")
      BIN32(MAX_S16X2, "max.s16x2")
      BIN32(MAX_RELU_S16X2, "max.relu.s16x2")
      BIN32(BMSK_CLAMP, "bmsk.clamp.b32")
      BIN32(BMSK_WRAP, "bmsk.wrap.b32")
      BIN32(SZEXT_CLAMP_S32, "szext.clamp.s32")
      BIN32(SZEXT_WRAP_S32, "szext.wrap.s32")
      BIN32(SZEXT_CLAMP_U32, "szext.clamp.u32")
      BIN32(SZEXT_WRAP_U32, "szext.wrap.u32")
      BIN32(MUL24_LO_S32, "mul24.lo.s32")
      BIN32(MUL24_HI_U32, "mul24.hi.u32")
      UN32(NOT_B32, "not.b32")
      UN32(CNOT_B32, "cnot.b32")
      UN32(ABS_S32, "abs.s32")
      UN32(NEG_S32, "neg.s32")
      UN32(POPC_B32, "popc.b32")
      UN32(CLZ_B32, "clz.b32")
      UN32(BREV_B32, "brev.b32")
      UN32(BFIND_U32, "bfind.u32")
      UN32(BFIND_S32, "bfind.s32")
      UN32(BFIND_SHIFTAMT_U32, "bfind.shiftamt.u32")
      UN32(BFIND_SHIFTAMT_S32, "bfind.shiftamt.s32")
      TER32(MAD_LO_U32, "mad.lo.u32")
      TER32(MAD_LO_S32, "mad.lo.s32")
      TER32(MAD_HI_U32, "mad.hi.u32")
      TER32(MAD_HI_S32, "mad.hi.s32")
      TER32(MAD_HI_SAT_S32, "mad.hi.sat.s32")
      TER32(SAD_U32, "sad.u32")
      TER32(SAD_S32, "sad.s32")
      TER32(BFE_U32, "bfe.u32")
      TER32(BFE_S32, "bfe.s32")
      TER32(PRMT, "prmt.b32")
      TER32(PRMT_F4E, "prmt.b32.f4e")
      TER32(PRMT_B4E, "prmt.b32.b4e")
      TER32(PRMT_RC8, "prmt.b32.rc8")
      TER32(PRMT_ECL, "prmt.b32.ecl")
      TER32(PRMT_ECR, "prmt.b32.ecr")
      TER32(PRMT_RC16, "prmt.b32.rc16")
      TER32(DP4A_UU, "dp4a.u32.u32")
      TER32(DP4A_SS, "dp4a.s32.s32")
      TER32(DP4A_US, "dp4a.u32.s32")
      TER32(DP4A_SU, "dp4a.s32.u32")
      TER32(DP2A_LO_UU, "dp2a.lo.u32.u32")
      TER32(DP2A_HI_SS, "dp2a.hi.s32.s32")
      TER32(DP2A_LO_SU, "dp2a.lo.s32.u32")
      TER32(DP2A_HI_US, "dp2a.hi.u32.s32")
      TER32(SHF_L_CLAMP, "shf.l.clamp.b32")
      TER32(SHF_L_WRAP, "shf.l.wrap.b32")
      TER32(SHF_R_CLAMP, "shf.r.clamp.b32")
      TER32(SHF_R_WRAP, "shf.r.wrap.b32")
      LOP3(LOP3_00, 0x00)
      LOP3(LOP3_FF, 0xFF)
      LOP3(LOP3_F0, 0xF0)
      LOP3(LOP3_CC, 0xCC)
      LOP3(LOP3_AA, 0xAA)
      LOP3(LOP3_80, 0x80)
      LOP3(LOP3_FE, 0xFE)
      LOP3(LOP3_96, 0x96)
      LOP3(LOP3_E8, 0xE8)
      LOP3(LOP3_CA, 0xCA)
      LOP3(LOP3_1A, 0x1A)
      LOP3(LOP3_01, 0x01)
      case BFI_B32:
        asm("bfi.b32 %0, %1, %2, %3, %4;"
            : "=r"(r32)
            : "r"(R32(x.a)), "r"(R32(x.b)), "r"(R32(x.c)), "r"(R32(x.d)));
        break;
      case SELP_B32:
        asm("{ .reg .pred p; setp.ne.u32 p, %3, 0; selp.b32 %0, %1, %2, p; }"
            : "=r"(r32)
            : "r"(R32(x.a)), "r"(R32(x.b)), "r"(R32(x.c)));
        break;
      // 16-bit: operands in 16-bit registers ("h")
      case ADD_U16: {
        unsigned short h;
        asm("add.u16 %0, %1, %2;" : "=h"(h) : "h"((unsigned short)x.a), "h"((unsigned short)x.b));
        r32 = h;
        break;
      }
      case MUL_LO_S16: {
        unsigned short h;
        asm("mul.lo.s16 %0, %1, %2;" : "=h"(h) : "h"((unsigned short)x.a), "h"((unsigned short)x.b));
        r32 = h;
        break;
      }
      case MUL_HI_U16: {
        unsigned short h;
        asm("mul.hi.u16 %0, %1, %2;" : "=h"(h) : "h"((unsigned short)x.a), "h"((unsigned short)x.b));
        r32 = h;
        break;
      }
      case MUL_WIDE_S16:
        asm("mul.wide.s16 %0, %1, %2;" : "=r"(r32) : "h"((unsigned short)x.a), "h"((unsigned short)x.b));
        break;
      case MUL_WIDE_U16:
        asm("mul.wide.u16 %0, %1, %2;" : "=r"(r32) : "h"((unsigned short)x.a), "h"((unsigned short)x.b));
        break;
      case SHR_S16: {
        unsigned short h;
        asm("shr.s16 %0, %1, %2;" : "=h"(h) : "h"((unsigned short)x.a), "r"(R32(x.b)));
        r32 = h;
        break;
      }
      case SHL_B16: {
        unsigned short h;
        asm("shl.b16 %0, %1, %2;" : "=h"(h) : "h"((unsigned short)x.a), "r"(R32(x.b)));
        r32 = h;
        break;
      }
      default:
        wide = true;
        break;
    }
    if (wide) {
      switch (op) {
        BIN64(ADD_U64, "add.u64")
        BIN64(SUB_U64, "sub.u64")
        BIN64(MUL_LO_U64, "mul.lo.u64")
        BIN64(MUL_HI_U64, "mul.hi.u64")
        BIN64(MUL_HI_S64, "mul.hi.s64")
        BIN64(DIV_U64, "div.u64")
        BIN64(DIV_S64, "div.s64")
        BIN64(REM_U64, "rem.u64")
        BIN64(REM_S64, "rem.s64")
        BIN64(MIN_U64, "min.u64")
        BIN64(MIN_S64, "min.s64")
        BIN64(MAX_U64, "max.u64")
        BIN64(MAX_S64, "max.s64")
        BIN64(AND_B64, "and.b64")
        BIN64(OR_B64, "or.b64")
        BIN64(XOR_B64, "xor.b64")
        UN64(NOT_B64, "not.b64")
        SHIFT64(SHL_B64, "shl.b64")
        SHIFT64(SHR_U64, "shr.u64")
        SHIFT64(SHR_S64, "shr.s64")
        UN64(ABS_S64, "abs.s64")
        UN64(NEG_S64, "neg.s64")
        UN64(BREV_B64, "brev.b64")
        case POPC_B64:
          asm("popc.b64 %0, %1;" : "=r"(r32) : "l"(x.a));
          r64 = r32;
          break;
        case CLZ_B64:
          asm("clz.b64 %0, %1;" : "=r"(r32) : "l"(x.a));
          r64 = r32;
          break;
        case BFIND_U64:
          asm("bfind.u64 %0, %1;" : "=r"(r32) : "l"(x.a));
          r64 = r32;
          break;
        case BFIND_S64:
          asm("bfind.s64 %0, %1;" : "=r"(r32) : "l"(x.a));
          r64 = r32;
          break;
        case BFIND_SHIFTAMT_S64:
          asm("bfind.shiftamt.s64 %0, %1;" : "=r"(r32) : "l"(x.a));
          r64 = r32;
          break;
        case BFE_U64:
          asm("bfe.u64 %0, %1, %2, %3;" : "=l"(r64) : "l"(x.a), "r"(R32(x.b)), "r"(R32(x.c)));
          break;
        case BFE_S64:
          asm("bfe.s64 %0, %1, %2, %3;" : "=l"(r64) : "l"(x.a), "r"(R32(x.b)), "r"(R32(x.c)));
          break;
        case BFI_B64:
          asm("bfi.b64 %0, %1, %2, %3, %4;"
              : "=l"(r64)
              : "l"(x.a), "l"(x.b), "r"(R32(x.c)), "r"(R32(x.d)));
          break;
        case MAD_LO_U64:
          asm("mad.lo.u64 %0, %1, %2, %3;" : "=l"(r64) : "l"(x.a), "l"(x.b), "l"(x.c));
          break;
        case MAD_HI_S64:
          asm("mad.hi.s64 %0, %1, %2, %3;" : "=l"(r64) : "l"(x.a), "l"(x.b), "l"(x.c));
          break;
        case MAD_HI_U64:
          asm("mad.hi.u64 %0, %1, %2, %3;" : "=l"(r64) : "l"(x.a), "l"(x.b), "l"(x.c));
          break;
        case MUL_WIDE_U32:
          asm("mul.wide.u32 %0, %1, %2;" : "=l"(r64) : "r"(R32(x.a)), "r"(R32(x.b)));
          break;
        case MUL_WIDE_S32:
          asm("mul.wide.s32 %0, %1, %2;" : "=l"(r64) : "r"(R32(x.a)), "r"(R32(x.b)));
          break;
        case MAD_WIDE_U32:
          asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(r64) : "r"(R32(x.a)), "r"(R32(x.b)), "l"(x.c));
          break;
        case MAD_WIDE_S32:
          asm("mad.wide.s32 %0, %1, %2, %3;" : "=l"(r64) : "r"(R32(x.a)), "r"(R32(x.b)), "l"(x.c));
          break;
        case ADD_CC_CHAIN: {  // 64-bit add from 32-bit halves: add.cc then addc
          uint32_t lo, hi;
          asm("add.cc.u32 %0, %2, %4; addc.u32 %1, %3, %5;"
              : "=r"(lo), "=r"(hi)
              : "r"(R32(x.a)), "r"(R32(x.b)), "r"(R32(x.c)), "r"(R32(x.d)));
          r64 = ((uint64_t)hi << 32) | lo;
          break;
        }
        case SUB_CC_CHAIN: {
          uint32_t lo, hi;
          asm("sub.cc.u32 %0, %2, %4; subc.u32 %1, %3, %5;"
              : "=r"(lo), "=r"(hi)
              : "r"(R32(x.a)), "r"(R32(x.b)), "r"(R32(x.c)), "r"(R32(x.d)));
          r64 = ((uint64_t)hi << 32) | lo;
          break;
        }
        case ADD_CC_CARRYOUT: {  // sum in the low word, carry-out (addc 0+0+CF) in the high word
          uint32_t lo, cf;
          asm("add.cc.u32 %0, %2, %3; addc.u32 %1, 0, 0;"
              : "=r"(lo), "=r"(cf)
              : "r"(R32(x.a)), "r"(R32(x.c)));
          r64 = ((uint64_t)cf << 32) | lo;
          break;
        }
        case SUB_CC_BORROWOUT: {  // subc 0-0-borrow gives 0 or 0xffffffff
          uint32_t lo, bf;
          asm("sub.cc.u32 %0, %2, %3; subc.u32 %1, 0, 0;"
              : "=r"(lo), "=r"(bf)
              : "r"(R32(x.a)), "r"(R32(x.c)));
          r64 = ((uint64_t)bf << 32) | lo;
          break;
        }
        case ADDC_CC_CHAIN64: {  // 128-bit add of {a,b} + {c,d} (u64 limbs), result's high limb
          uint64_t lo, hi;
          asm("add.cc.u64 %0, %2, %4; addc.cc.u64 %1, %3, %5;"
              : "=l"(lo), "=l"(hi)
              : "l"(x.a), "l"(x.b), "l"(x.c), "l"(x.d));
          r64 = hi ^ (lo * 0x9E3779B97F4A7C15ull);  // fold both limbs into one word
          break;
        }
        case MADC_CHAIN: {  // 32x32 -> 64 product plus 64-bit addend, built from mad.*.cc/madc
          uint32_t lo, hi;
          asm("mad.lo.cc.u32 %0, %2, %3, %4; madc.hi.u32 %1, %2, %3, %5;"
              : "=r"(lo), "=r"(hi)
              : "r"(R32(x.a)), "r"(R32(x.b)), "r"(R32(x.c)), "r"(R32(x.d)));
          r64 = ((uint64_t)hi << 32) | lo;
          break;
        }
        SETP32(SETP_EQ_S32, "eq.s32")
        SETP32(SETP_NE_S32, "ne.s32")
        SETP32(SETP_LT_S32, "lt.s32")
        SETP32(SETP_LE_S32, "le.s32")
        SETP32(SETP_GT_S32, "gt.s32")
        SETP32(SETP_GE_S32, "ge.s32")
        SETP32(SETP_LT_U32, "lt.u32")
        SETP32(SETP_LE_U32, "le.u32")
        SETP32(SETP_GT_U32, "gt.u32")
        SETP32(SETP_GE_U32, "ge.u32")
        SETP32(SETP_LO_U32, "lo.u32")
        SETP32(SETP_LS_U32, "ls.u32")
        SETP32(SETP_HI_U32, "hi.u32")
        SETP32(SETP_HS_U32, "hs.u32")
        SETP32(SETP_EQ_B32, "eq.b32")
        SETP32(SETP_NE_B32, "ne.b32")
        SETP64(SETP_LT_S64, "lt.s64")
        SETP64(SETP_HI_U64, "hi.u64")
        SETP64(SETP_GE_U64, "ge.u64")
        case SETP_LE_S16:
          asm("{ .reg .pred p; setp.le.s16 p, %1, %2; selp.u32 %0, 1, 0, p; }"
              : "=r"(r32)
              : "h"((unsigned short)x.a), "h"((unsigned short)x.b));
          break;
        SETPBOOL(SETP_LT_AND_S32, "lt.and.s32", "c")
        SETPBOOL(SETP_LT_OR_S32, "lt.or.s32", "c")
        SETPBOOL(SETP_LT_XOR_S32, "lt.xor.s32", "c")
        SETPBOOL(SETP_GT_AND_NOTC_U32, "gt.and.u32", "!c")
        default:
          break;
      }
      if (op >= SETP_EQ_S32) r64 = r32;
      out[i] = r64;
    } else {
      out[i] = r32;
    }
  }
}

const auto kKernels =
    conf_kernel_table<Case, OP_COUNT>([](auto op) { return &k_int<decltype(op)::value>; });

// ---- host side ----

using Ref = std::function<uint64_t(const Case&)>;
using Skip = std::function<bool(const Case&)>;

// Runs op on every case and compares with ref; arity only shapes the printed input.
void check(Op op, const char* name, int arity, const std::vector<Case>& cases, Ref ref,
           Skip skip = nullptr) {
  std::vector<uint64_t> got = conf_run(kKernels[op], name, cases);
  for (size_t i = 0; i < got.size(); ++i) {
    const Case& x = cases[i];
    if (skip && skip(x)) continue;
    ConfStr in;
    if (arity == 1) in = conf_fmt("0x%llx", (unsigned long long)x.a);
    else if (arity == 2) in = conf_fmt("0x%llx, 0x%llx", (unsigned long long)x.a, (unsigned long long)x.b);
    else if (arity == 3)
      in = conf_fmt("0x%llx, 0x%llx, 0x%llx", (unsigned long long)x.a, (unsigned long long)x.b,
                    (unsigned long long)x.c);
    else
      in = conf_fmt("0x%llx, 0x%llx, 0x%llx, 0x%llx", (unsigned long long)x.a,
                    (unsigned long long)x.b, (unsigned long long)x.c, (unsigned long long)x.d);
    conf_check(name, in, got[i], ref(x));
  }
}

// Interesting 32-bit values: zero, small, powers of two and their neighbours, the signed and
// unsigned extremes, shift amounts around the width, and bit patterns with mixed halves.
const std::vector<uint32_t> kV32 = {
    0u,          1u,          2u,          3u,          5u,          7u,          31u,
    32u,         33u,         63u,         64u,         255u,        256u,        0x7fffu,
    0x8000u,     0xffffu,     0x10000u,    0x12345678u, 0x7ffffffeu, 0x7fffffffu, 0x80000000u,
    0x80000001u, 0x9abcdef0u, 0xfffffff9u, 0xfffffffeu, 0xffffffffu, 0xdeadbeefu, 0x00ff80ffu};

const std::vector<uint64_t> kV64 = {
    0ull, 1ull, 2ull, 3ull, 7ull, 63ull, 64ull, 65ull, 0xffffffffull, 0x100000000ull,
    0x7fffffffffffffffull, 0x8000000000000000ull, 0x8000000000000001ull, 0xffffffffffffffffull,
    0xfffffffffffffff9ull, 0x123456789abcdef0ull, 0xfedcba9876543210ull, 0x00000000fffffffeull,
    0xffffffff00000000ull};

std::vector<Case> pairs32() {
  std::vector<Case> v;
  for (uint32_t a : kV32)
    for (uint32_t b : kV32) v.push_back({a, b, 0, 0});
  return v;
}
std::vector<Case> pairs64() {
  std::vector<Case> v;
  for (uint64_t a : kV64)
    for (uint64_t b : kV64) v.push_back({a, b, 0, 0});
  return v;
}
std::vector<Case> singles32() {
  std::vector<Case> v;
  for (uint32_t a : kV32) v.push_back({a, 0, 0, 0});
  for (int s = 0; s < 32; ++s) v.push_back({1u << s, 0, 0, 0});  // every single-bit value
  for (int s = 0; s < 32; ++s) v.push_back({~0u << s, 0, 0, 0});
  return v;
}
std::vector<Case> singles64() {
  std::vector<Case> v;
  for (uint64_t a : kV64) v.push_back({a, 0, 0, 0});
  for (int s = 0; s < 64; ++s) v.push_back({1ull << s, 0, 0, 0});
  for (int s = 0; s < 64; ++s) v.push_back({~0ull << s, 0, 0, 0});
  return v;
}
std::vector<Case> triples32() {
  const uint32_t vals[] = {0u, 1u, 3u, 0x7fffffffu, 0x80000000u, 0xffffffffu, 0x12345678u,
                           0xfffffff9u, 0x0000ffffu, 0x89abcdefu};
  std::vector<Case> v;
  for (uint32_t a : vals)
    for (uint32_t b : vals)
      for (uint32_t c : vals) v.push_back({a, b, c, 0});
  return v;
}
// Shift amounts: every value up to past the width, then large ones (the ISA clamps to N).
std::vector<uint32_t> shift_amounts(int width) {
  std::vector<uint32_t> s;
  for (int i = 0; i <= width + 2; ++i) s.push_back((uint32_t)i);
  s.insert(s.end(), {(uint32_t)(2 * width), 100u, 255u, 256u, 257u, 0x10000u, 0x7fffffffu,
                     0x80000000u, 0xffffffffu});
  return s;
}

inline int32_t S32(uint64_t v) { return (int32_t)(uint32_t)v; }
inline int64_t S64(uint64_t v) { return (int64_t)v; }
inline uint32_t U32(uint64_t v) { return (uint32_t)v; }
inline uint16_t lo16(uint32_t v) { return (uint16_t)v; }
inline uint16_t hi16(uint32_t v) { return (uint16_t)(v >> 16); }
inline uint32_t pack16(uint32_t lo, uint32_t hi) { return (lo & 0xffffu) | (hi << 16); }
inline uint32_t sat32(int64_t v) {
  return (uint32_t)(int32_t)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v);
}

// ---- reference helpers written from the ISA's semantics pseudo-code ----

uint32_t ref_bfind(uint64_t a, int msb, bool is_signed, bool shiftamt) {
  // "negate negative signed inputs" (a = ~a), then the most significant 1, 0xffffffff if none.
  if (is_signed && ((a >> msb) & 1)) a = ~a;
  if (msb == 31) a &= 0xffffffffull;
  uint32_t d = 0xffffffffu;
  for (int i = msb; i >= 0; --i)
    if ((a >> i) & 1) {
      d = (uint32_t)i;
      break;
    }
  if (shiftamt && d != 0xffffffffu) d = (uint32_t)msb - d;
  return d;
}

uint64_t ref_bfe(uint64_t a, uint32_t b, uint32_t c, int msb, bool is_signed) {
  const uint32_t pos = b & 0xff, len = c & 0xff;
  uint64_t sbit = 0;
  if (is_signed && len != 0) {
    uint32_t top = pos + len - 1;
    sbit = (a >> (top < (uint32_t)msb ? top : (uint32_t)msb)) & 1;
  }
  uint64_t d = 0;
  for (int i = 0; i <= msb; ++i) {
    uint64_t bit = ((uint32_t)i < len && pos + i <= (uint32_t)msb) ? ((a >> (pos + i)) & 1) : sbit;
    d |= bit << i;
  }
  return d;
}

uint64_t ref_bfi(uint64_t a, uint64_t b, uint32_t c, uint32_t d, int msb) {
  const uint32_t pos = c & 0xff, len = d & 0xff;
  uint64_t f = b;
  for (uint32_t i = 0; i < len && pos + i <= (uint32_t)msb; ++i) {
    f &= ~(1ull << (pos + i));
    f |= ((a >> i) & 1) << (pos + i);
  }
  return f;
}

// prmt: bytes of {b, a} numbered 0..7; generic mode takes one 4-bit selector per result byte,
// bit 3 meaning "replicate the selected byte's sign bit". The named modes use c[1:0] to pick a
// fixed selector set (table in the ISA, written here as the equivalent generic nibbles, result
// byte 3 first): f4e 3210 4321 5432 6543; b4e 5670 6701 7012 0123; rc8 0000 1111 2222 3333;
// ecl 3210 3211 3222 3333; ecr 0000 1110 2210 3210; rc16 1010 3232 1010 3232.
uint32_t ref_prmt(uint32_t a, uint32_t b, uint32_t c, int mode) {
  static const uint16_t table[6][4] = {{0x3210, 0x4321, 0x5432, 0x6543},
                                       {0x5670, 0x6701, 0x7012, 0x0123},
                                       {0x0000, 0x1111, 0x2222, 0x3333},
                                       {0x3210, 0x3211, 0x3222, 0x3333},
                                       {0x0000, 0x1110, 0x2210, 0x3210},
                                       {0x1010, 0x3232, 0x1010, 0x3232}};
  const uint64_t src = ((uint64_t)b << 32) | a;
  const uint32_t sel = mode == 0 ? (c & 0xffff) : table[mode - 1][c & 3];
  uint32_t d = 0;
  for (int i = 0; i < 4; ++i) {
    uint32_t s = (sel >> (4 * i)) & 0xf;
    uint32_t byte = (uint32_t)(src >> (8 * (s & 7))) & 0xff;
    if (mode == 0 && (s & 8)) byte = (byte & 0x80) ? 0xff : 0x00;  // generic form only
    d |= byte << (8 * i);
  }
  return d;
}

int32_t ext8(uint32_t v, int i, bool s) {
  uint32_t b = (v >> (8 * i)) & 0xff;
  return s ? (int32_t)(int8_t)b : (int32_t)b;
}
int32_t ext16(uint32_t v, int i, bool s) {
  uint32_t h = (v >> (16 * i)) & 0xffff;
  return s ? (int32_t)(int16_t)h : (int32_t)h;
}
uint32_t ref_dp4a(uint32_t a, uint32_t b, uint32_t c, bool as, bool bs) {
  uint32_t d = c;  // accumulates modulo 2^32 whether c is .u32 or .s32
  for (int i = 0; i < 4; ++i) d += (uint32_t)(ext8(a, i, as) * ext8(b, i, bs));
  return d;
}
uint32_t ref_dp2a(uint32_t a, uint32_t b, uint32_t c, bool hi, bool as, bool bs) {
  uint32_t d = c;
  int sel = hi ? 2 : 0;
  for (int i = 0; i < 2; ++i) d += (uint32_t)(ext16(a, i, as) * ext8(b, sel + i, bs));
  return d;
}

uint32_t ref_lop3(uint32_t a, uint32_t b, uint32_t c, uint32_t lut) {
  // Bit i of the result is lut bit (a_i*4 + b_i*2 + c_i): that is what "immLut = F(0xF0, 0xCC,
  // 0xAA)" encodes, since bit k of 0xF0/0xCC/0xAA is bit 2/1/0 of k.
  uint32_t d = 0;
  for (int i = 0; i < 32; ++i) {
    uint32_t k = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
    d |= ((lut >> k) & 1) << i;
  }
  return d;
}

uint32_t ref_shf(uint32_t a, uint32_t b, uint32_t c, bool left, bool clamp) {
  // The 64-bit value {b, a} shifted by n = clamp ? min(c, 32) : c & 31.
  uint32_t n = clamp ? (c < 32 ? c : 32) : (c & 31);
  uint64_t v = ((uint64_t)b << 32) | a;
  if (left) return (uint32_t)((v << n) >> 32);
  return (uint32_t)(v >> n);
}

uint32_t ref_bmsk(uint32_t a, uint32_t b, bool clamp) {
  uint32_t a1 = a & 0x1f, b1 = b & 0x1f, sum = a1 + b1;
  uint32_t mask0 = ~0u << a1;
  uint32_t mask1 = sum >= 32 ? 0 : (~0u << sum);
  bool over = sum >= 32;
  if (clamp) {
    if (a >= 32) {
      over = true;
      mask0 = 0;
    }
    if (b >= 32) over = true;
  }
  if (over) mask1 = 0;
  else if (b1 == 0) mask1 = ~0u;
  return mask0 & ~mask1;
}

uint32_t ref_szext(uint32_t a, uint32_t b, bool clamp, bool is_signed) {
  uint32_t b1 = b & 0x1f;
  bool too_large = b >= 32 && clamp;
  uint32_t mask = too_large ? 0 : (~0u << b1);
  bool sign = false;
  if (!(b1 == 0 || too_large || !is_signed)) sign = (a >> ((b1 - 1) & 0x1f)) & 1;
  return (a & ~mask) | (sign ? mask : 0);
}

uint32_t clamp_shift(uint32_t s, uint32_t width) { return s > width ? width : s; }

}  // namespace

int main() {
  conf_require_device();
  const std::vector<Case> p32 = pairs32(), p64 = pairs64(), s32 = singles32(), s64 = singles64(),
                          t32 = triples32();

  // --- arithmetic, modulo 2^32 unless saturating ---
  check(ADD_U32, "add.u32", 2, p32, [](const Case& x) { return (uint64_t)(U32(x.a) + U32(x.b)); });
  check(SUB_U32, "sub.u32", 2, p32, [](const Case& x) { return (uint64_t)(U32(x.a) - U32(x.b)); });
  // .sat: "limits result to MININT..MAXINT (no overflow) for the size of the operation".
  check(ADD_SAT_S32, "add.sat.s32", 2, p32,
        [](const Case& x) { return (uint64_t)sat32((int64_t)S32(x.a) + S32(x.b)); });
  check(SUB_SAT_S32, "sub.sat.s32", 2, p32,
        [](const Case& x) { return (uint64_t)sat32((int64_t)S32(x.a) - S32(x.b)); });
  check(MUL_LO_U32, "mul.lo.u32", 2, p32, [](const Case& x) { return (uint64_t)(U32(x.a) * U32(x.b)); });
  check(MUL_LO_S32, "mul.lo.s32", 2, p32, [](const Case& x) { return (uint64_t)(U32(x.a) * U32(x.b)); });
  // .hi: bits 2n-1..n of the full 2n-bit product.
  check(MUL_HI_U32, "mul.hi.u32", 2, p32,
        [](const Case& x) { return (uint64_t)U32(((uint64_t)U32(x.a) * U32(x.b)) >> 32); });
  check(MUL_HI_S32, "mul.hi.s32", 2, p32,
        [](const Case& x) { return (uint64_t)U32((uint64_t)((int64_t)S32(x.a) * S32(x.b)) >> 32); });
  // mul24: "the product of two 24-bit integer values held in 32-bit source registers"; .lo is
  // bits 31..0 and .hi bits 47..16 of the 48-bit product. Operands are kept within 24 bits
  // (sign-extended for .s32) because the ISA does not say what the upper 8 bits would do.
  {
    std::vector<Case> m24s, m24u;
    const uint32_t sv[] = {0u, 1u, 0x7fffffu, 0xff800000u, 0xffffffffu, 0x123456u, 0xfff00001u, 0x400000u};
    const uint32_t uv[] = {0u, 1u, 0xffffffu, 0x800000u, 0x123456u, 0x7fffffu, 0xabcdefu};
    for (uint32_t a : sv)
      for (uint32_t b : sv) m24s.push_back({a, b, 0, 0});
    for (uint32_t a : uv)
      for (uint32_t b : uv) m24u.push_back({a, b, 0, 0});
    check(MUL24_LO_S32, "mul24.lo.s32", 2, m24s, [](const Case& x) {
      return (uint64_t)U32((uint64_t)((int64_t)S32(x.a) * S32(x.b)));
    });
    check(MUL24_HI_U32, "mul24.hi.u32", 2, m24u, [](const Case& x) {
      return (uint64_t)U32(((uint64_t)U32(x.a) * U32(x.b)) >> 16);
    });
  }

  // --- min/max, plain and packed ---
  check(MIN_U32, "min.u32", 2, p32, [](const Case& x) { return (uint64_t)(U32(x.a) < U32(x.b) ? U32(x.a) : U32(x.b)); });
  check(MAX_U32, "max.u32", 2, p32, [](const Case& x) { return (uint64_t)(U32(x.a) > U32(x.b) ? U32(x.a) : U32(x.b)); });
  check(MIN_S32, "min.s32", 2, p32, [](const Case& x) { return (uint64_t)U32(S32(x.a) < S32(x.b) ? S32(x.a) : S32(x.b)); });
  check(MAX_S32, "max.s32", 2, p32, [](const Case& x) { return (uint64_t)U32(S32(x.a) > S32(x.b) ? S32(x.a) : S32(x.b)); });
  // .relu: "clamps the result to 0 if negative".
  check(MAX_RELU_S32, "max.relu.s32", 2, p32, [](const Case& x) {
    int32_t m = S32(x.a) > S32(x.b) ? S32(x.a) : S32(x.b);
    return (uint64_t)U32(m < 0 ? 0 : m);
  });
  // Packed 16-bit: each half independently, modulo 2^16 for add/sub.
  check(ADD_U16X2, "add.u16x2", 2, p32, [](const Case& x) {
    return (uint64_t)pack16(lo16(U32(x.a)) + lo16(U32(x.b)), (uint16_t)(hi16(U32(x.a)) + hi16(U32(x.b))));
  });
  check(ADD_S16X2, "add.s16x2", 2, p32, [](const Case& x) {
    return (uint64_t)pack16(lo16(U32(x.a)) + lo16(U32(x.b)), (uint16_t)(hi16(U32(x.a)) + hi16(U32(x.b))));
  });
  auto packed = [](uint32_t a, uint32_t b, bool is_signed, bool is_max, bool relu) {
    uint32_t r[2];
    for (int i = 0; i < 2; ++i) {
      int32_t x = ext16(a, i, is_signed), y = ext16(b, i, is_signed);
      int32_t m = is_max ? (x > y ? x : y) : (x < y ? x : y);
      if (relu && m < 0) m = 0;
      r[i] = (uint32_t)m & 0xffff;
    }
    return (uint64_t)pack16(r[0], r[1]);
  };
  check(MIN_S16X2, "min.s16x2", 2, p32, [&](const Case& x) { return packed(U32(x.a), U32(x.b), true, false, false); });
  check(MAX_S16X2, "max.s16x2", 2, p32, [&](const Case& x) { return packed(U32(x.a), U32(x.b), true, true, false); });
  check(MIN_U16X2, "min.u16x2", 2, p32, [&](const Case& x) { return packed(U32(x.a), U32(x.b), false, false, false); });
  check(MAX_U16X2, "max.u16x2", 2, p32, [&](const Case& x) { return packed(U32(x.a), U32(x.b), false, true, false); });
  check(MAX_RELU_S16X2, "max.relu.s16x2", 2, p32, [&](const Case& x) { return packed(U32(x.a), U32(x.b), true, true, true); });

  // --- logic ---
  check(AND_B32, "and.b32", 2, p32, [](const Case& x) { return (uint64_t)(U32(x.a) & U32(x.b)); });
  check(OR_B32, "or.b32", 2, p32, [](const Case& x) { return (uint64_t)(U32(x.a) | U32(x.b)); });
  check(XOR_B32, "xor.b32", 2, p32, [](const Case& x) { return (uint64_t)(U32(x.a) ^ U32(x.b)); });
  check(NOT_B32, "not.b32", 1, s32, [](const Case& x) { return (uint64_t)(~U32(x.a)); });
  // cnot: "d = (a==0) ? 1 : 0".
  check(CNOT_B32, "cnot.b32", 1, s32, [](const Case& x) { return (uint64_t)(U32(x.a) == 0 ? 1u : 0u); });

  // --- shifts: "Shift amounts greater than the register width N are clamped to N" ---
  {
    std::vector<Case> sh;
    for (uint32_t a : {1u, 0x80000000u, 0xffffffffu, 0x12345678u, 0x8badf00du, 0x7fffffffu})
      for (uint32_t s : shift_amounts(32)) sh.push_back({a, s, 0, 0});
    check(SHL_B32, "shl.b32", 2, sh, [](const Case& x) {
      uint32_t n = clamp_shift(U32(x.b), 32);
      return (uint64_t)(n >= 32 ? 0u : U32(x.a) << n);
    });
    auto lsr = [](const Case& x) {
      uint32_t n = clamp_shift(U32(x.b), 32);
      return (uint64_t)(n >= 32 ? 0u : U32(x.a) >> n);
    };
    check(SHR_U32, "shr.u32", 2, sh, lsr);
    check(SHR_B32, "shr.b32", 2, sh, lsr);  // untyped: zero fill
    // Signed: fill with the sign bit, so a clamped shift of 32 leaves 0 or -1.
    check(SHR_S32, "shr.s32", 2, sh, [](const Case& x) {
      uint32_t n = clamp_shift(U32(x.b), 32);
      int64_t v = (int64_t)S32(x.a);  // widen so a shift by 32 is defined on the host
      return (uint64_t)U32((uint64_t)(v >> n));
    });
    std::vector<Case> sh16;
    for (uint32_t a : {1u, 0x8000u, 0xffffu, 0x7fffu, 0x1234u, 0xf00du})
      for (uint32_t s : shift_amounts(16)) sh16.push_back({a, s, 0, 0});
    check(SHR_S16, "shr.s16", 2, sh16, [](const Case& x) {
      uint32_t n = clamp_shift(U32(x.b), 16);
      return (uint64_t)((uint32_t)((int32_t)(int16_t)x.a >> n) & 0xffffu);
    });
    check(SHL_B16, "shl.b16", 2, sh16, [](const Case& x) {
      uint32_t n = clamp_shift(U32(x.b), 16);
      return (uint64_t)(((uint32_t)(uint16_t)x.a << n) & 0xffffu);
    });
    std::vector<Case> sh64;
    for (uint64_t a : {1ull, 0x8000000000000000ull, ~0ull, 0x123456789abcdef0ull, 0x7fffffffffffffffull})
      for (uint32_t s : shift_amounts(64)) sh64.push_back({a, s, 0, 0});
    check(SHL_B64, "shl.b64", 2, sh64, [](const Case& x) {
      uint32_t n = clamp_shift(U32(x.b), 64);
      return n >= 64 ? 0ull : x.a << n;
    });
    check(SHR_U64, "shr.u64", 2, sh64, [](const Case& x) {
      uint32_t n = clamp_shift(U32(x.b), 64);
      return n >= 64 ? 0ull : x.a >> n;
    });
    check(SHR_S64, "shr.s64", 2, sh64, [](const Case& x) {
      uint32_t n = clamp_shift(U32(x.b), 64);
      if (n >= 64) return (uint64_t)((x.a >> 63) ? ~0ull : 0ull);
      return (uint64_t)(S64(x.a) >> n);
    });
    // shf: the 64-bit {b, a} shifted, clamp = min(c, 32), wrap = c & 31.
    std::vector<Case> funnel;
    for (uint32_t a : {0x89abcdefu, 0xffffffffu, 0u})
      for (uint32_t b : {0x01234567u, 0x80000000u})
        for (uint32_t c : shift_amounts(32)) funnel.push_back({a, b, c, 0});
    check(SHF_L_CLAMP, "shf.l.clamp.b32", 3, funnel, [](const Case& x) { return (uint64_t)ref_shf(U32(x.a), U32(x.b), U32(x.c), true, true); });
    check(SHF_L_WRAP, "shf.l.wrap.b32", 3, funnel, [](const Case& x) { return (uint64_t)ref_shf(U32(x.a), U32(x.b), U32(x.c), true, false); });
    check(SHF_R_CLAMP, "shf.r.clamp.b32", 3, funnel, [](const Case& x) { return (uint64_t)ref_shf(U32(x.a), U32(x.b), U32(x.c), false, true); });
    check(SHF_R_WRAP, "shf.r.wrap.b32", 3, funnel, [](const Case& x) { return (uint64_t)ref_shf(U32(x.a), U32(x.b), U32(x.c), false, false); });
  }

  // --- unary bit operations ---
  check(ABS_S32, "abs.s32", 1, s32, [](const Case& x) {
    int64_t v = S32(x.a);  // |INT_MIN| wraps back to INT_MIN in 32 bits
    return (uint64_t)U32((uint64_t)(v < 0 ? -v : v));
  });
  check(NEG_S32, "neg.s32", 1, s32, [](const Case& x) { return (uint64_t)(0u - U32(x.a)); });
  check(POPC_B32, "popc.b32", 1, s32, [](const Case& x) {
    uint32_t n = 0;
    for (uint32_t v = U32(x.a); v; v >>= 1) n += v & 1;
    return (uint64_t)n;
  });
  check(CLZ_B32, "clz.b32", 1, s32, [](const Case& x) {
    uint32_t n = 0;  // 32 for zero
    while (n < 32 && !((U32(x.a) << n) & 0x80000000u)) ++n;
    return (uint64_t)n;
  });
  check(BREV_B32, "brev.b32", 1, s32, [](const Case& x) {
    uint32_t d = 0;
    for (int i = 0; i < 32; ++i) d |= ((U32(x.a) >> (31 - i)) & 1u) << i;
    return (uint64_t)d;
  });
  check(BFIND_U32, "bfind.u32", 1, s32, [](const Case& x) { return (uint64_t)ref_bfind(U32(x.a), 31, false, false); });
  check(BFIND_S32, "bfind.s32", 1, s32, [](const Case& x) { return (uint64_t)ref_bfind(U32(x.a), 31, true, false); });
  check(BFIND_SHIFTAMT_U32, "bfind.shiftamt.u32", 1, s32, [](const Case& x) { return (uint64_t)ref_bfind(U32(x.a), 31, false, true); });
  check(BFIND_SHIFTAMT_S32, "bfind.shiftamt.s32", 1, s32, [](const Case& x) { return (uint64_t)ref_bfind(U32(x.a), 31, true, true); });

  // --- multiply-add ---
  check(MAD_LO_U32, "mad.lo.u32", 3, t32, [](const Case& x) { return (uint64_t)(U32(x.a) * U32(x.b) + U32(x.c)); });
  check(MAD_LO_S32, "mad.lo.s32", 3, t32, [](const Case& x) { return (uint64_t)(U32(x.a) * U32(x.b) + U32(x.c)); });
  check(MAD_HI_U32, "mad.hi.u32", 3, t32, [](const Case& x) {
    return (uint64_t)(U32(((uint64_t)U32(x.a) * U32(x.b)) >> 32) + U32(x.c));
  });
  check(MAD_HI_S32, "mad.hi.s32", 3, t32, [](const Case& x) {
    return (uint64_t)(U32((uint64_t)((int64_t)S32(x.a) * S32(x.b)) >> 32) + U32(x.c));
  });
  // mad.hi.sat.s32: the .hi part plus c, saturated to the s32 range.
  check(MAD_HI_SAT_S32, "mad.hi.sat.s32", 3, t32, [](const Case& x) {
    int64_t hi = ((int64_t)S32(x.a) * S32(x.b)) >> 32;
    return (uint64_t)sat32(hi + S32(x.c));
  });
  // sad: "d = c + ((a<b) ? b-a : a-b)".
  check(SAD_U32, "sad.u32", 3, t32, [](const Case& x) {
    uint32_t a = U32(x.a), b = U32(x.b);
    return (uint64_t)(U32(x.c) + (a < b ? b - a : a - b));
  });
  check(SAD_S32, "sad.s32", 3, t32, [](const Case& x) {
    int64_t a = S32(x.a), b = S32(x.b);
    return (uint64_t)(U32(x.c) + U32((uint64_t)(a < b ? b - a : a - b)));
  });

  // --- bit fields: pos/len are restricted to 0..255 (b & 0xff), fields past the msb are cut ---
  {
    std::vector<Case> bf;
    const uint32_t posl[] = {0, 1, 4, 8, 16, 24, 28, 31, 32, 33, 63, 64, 200, 255, 256, 257, 0x1ff};
    for (uint32_t a : {0xf0f0a5a5u, 0x80000000u, 0x7fffffffu, 0xffffffffu})
      for (uint32_t p : posl)
        for (uint32_t l : posl) bf.push_back({a, p, l, 0});
    check(BFE_U32, "bfe.u32", 3, bf, [](const Case& x) { return ref_bfe(U32(x.a), U32(x.b), U32(x.c), 31, false); });
    check(BFE_S32, "bfe.s32", 3, bf, [](const Case& x) { return ref_bfe(U32(x.a), U32(x.b), U32(x.c), 31, true); });
    std::vector<Case> bf64;
    for (uint64_t a : {0xf0f0a5a5c3c3e1e1ull, 0x8000000000000000ull, 0x7fffffffffffffffull})
      for (uint32_t p : posl)
        for (uint32_t l : posl) bf64.push_back({a, p, l, 0});
    check(BFE_U64, "bfe.u64", 3, bf64, [](const Case& x) { return ref_bfe(x.a, U32(x.b), U32(x.c), 63, false); });
    check(BFE_S64, "bfe.s64", 3, bf64, [](const Case& x) { return ref_bfe(x.a, U32(x.b), U32(x.c), 63, true); });
    std::vector<Case> bi, bi64;
    for (uint32_t p : posl)
      for (uint32_t l : posl) {
        bi.push_back({0xa5a5a5a5u, 0x0f0f0f0fu, p, l});
        bi.push_back({0xffffffffu, 0u, p, l});
        bi64.push_back({0xa5a5a5a5deadbeefull, 0x0f0f0f0f0f0f0f0full, p, l});
        bi64.push_back({~0ull, 0ull, p, l});
      }
    check(BFI_B32, "bfi.b32", 4, bi, [](const Case& x) { return ref_bfi(U32(x.a), U32(x.b), U32(x.c), U32(x.d), 31); });
    check(BFI_B64, "bfi.b64", 4, bi64, [](const Case& x) { return ref_bfi(x.a, x.b, U32(x.c), U32(x.d), 63); });
  }

  // --- bmsk / szext (sm_70+) ---
  {
    std::vector<Case> bm;
    for (uint32_t a : shift_amounts(32))
      for (uint32_t b : shift_amounts(32)) bm.push_back({a, b, 0, 0});
    check(BMSK_CLAMP, "bmsk.clamp.b32", 2, bm, [](const Case& x) { return (uint64_t)ref_bmsk(U32(x.a), U32(x.b), true); });
    check(BMSK_WRAP, "bmsk.wrap.b32", 2, bm, [](const Case& x) { return (uint64_t)ref_bmsk(U32(x.a), U32(x.b), false); });
    std::vector<Case> sz;
    for (uint32_t a : {0x000000ffu, 0x00000080u, 0x12345678u, 0xffffffffu, 0x7fffffffu, 0x00008000u})
      for (uint32_t b : shift_amounts(32)) sz.push_back({a, b, 0, 0});
    check(SZEXT_CLAMP_S32, "szext.clamp.s32", 2, sz, [](const Case& x) { return (uint64_t)ref_szext(U32(x.a), U32(x.b), true, true); });
    check(SZEXT_WRAP_S32, "szext.wrap.s32", 2, sz, [](const Case& x) { return (uint64_t)ref_szext(U32(x.a), U32(x.b), false, true); });
    check(SZEXT_CLAMP_U32, "szext.clamp.u32", 2, sz, [](const Case& x) { return (uint64_t)ref_szext(U32(x.a), U32(x.b), true, false); });
    check(SZEXT_WRAP_U32, "szext.wrap.u32", 2, sz, [](const Case& x) { return (uint64_t)ref_szext(U32(x.a), U32(x.b), false, false); });
  }

  // --- byte permute ---
  {
    std::vector<Case> pm;
    const uint32_t sels[] = {0x3210, 0x7654, 0x0123, 0x4567, 0x8888, 0xf0e1, 0x9b3d, 0xc0c0,
                             0x1111, 0xabcd, 0xffff0000u | 0x5140, 0, 1, 2, 3, 0xfffffffeu};
    for (uint32_t s : sels) {
      pm.push_back({0x80ff7f01u, 0x12f4a588u, s, 0});
      pm.push_back({0x03020100u, 0x07060504u, s, 0});
    }
    check(PRMT, "prmt.b32", 3, pm, [](const Case& x) { return (uint64_t)ref_prmt(U32(x.a), U32(x.b), U32(x.c), 0); });
    const Op modes[] = {PRMT_F4E, PRMT_B4E, PRMT_RC8, PRMT_ECL, PRMT_ECR, PRMT_RC16};
    const char* names[] = {"prmt.b32.f4e", "prmt.b32.b4e", "prmt.b32.rc8", "prmt.b32.ecl", "prmt.b32.ecr", "prmt.b32.rc16"};
    for (int m = 0; m < 6; ++m)
      check(modes[m], names[m], 3, pm, [m](const Case& x) { return (uint64_t)ref_prmt(U32(x.a), U32(x.b), U32(x.c), m + 1); });
  }

  // --- dot products: bytes/halves sign- or zero-extended per .atype/.btype, summed into c ---
  {
    std::vector<Case> dp;
    const uint32_t v[] = {0x7f80ff01u, 0xffffffffu, 0x80808080u, 0x01020304u, 0x7f7f7f7fu, 0u, 0x8001ff7fu};
    const uint32_t cs[] = {0u, 1u, 0x7fffffffu, 0x80000000u, 0xfffffff0u};
    for (uint32_t a : v)
      for (uint32_t b : v)
        for (uint32_t c : cs) dp.push_back({a, b, c, 0});
    check(DP4A_UU, "dp4a.u32.u32", 3, dp, [](const Case& x) { return (uint64_t)ref_dp4a(U32(x.a), U32(x.b), U32(x.c), false, false); });
    check(DP4A_SS, "dp4a.s32.s32", 3, dp, [](const Case& x) { return (uint64_t)ref_dp4a(U32(x.a), U32(x.b), U32(x.c), true, true); });
    check(DP4A_US, "dp4a.u32.s32", 3, dp, [](const Case& x) { return (uint64_t)ref_dp4a(U32(x.a), U32(x.b), U32(x.c), false, true); });
    check(DP4A_SU, "dp4a.s32.u32", 3, dp, [](const Case& x) { return (uint64_t)ref_dp4a(U32(x.a), U32(x.b), U32(x.c), true, false); });
    check(DP2A_LO_UU, "dp2a.lo.u32.u32", 3, dp, [](const Case& x) { return (uint64_t)ref_dp2a(U32(x.a), U32(x.b), U32(x.c), false, false, false); });
    check(DP2A_HI_SS, "dp2a.hi.s32.s32", 3, dp, [](const Case& x) { return (uint64_t)ref_dp2a(U32(x.a), U32(x.b), U32(x.c), true, true, true); });
    check(DP2A_LO_SU, "dp2a.lo.s32.u32", 3, dp, [](const Case& x) { return (uint64_t)ref_dp2a(U32(x.a), U32(x.b), U32(x.c), false, true, false); });
    check(DP2A_HI_US, "dp2a.hi.u32.s32", 3, dp, [](const Case& x) { return (uint64_t)ref_dp2a(U32(x.a), U32(x.b), U32(x.c), true, false, true); });
  }

  // --- lop3 and selp ---
  {
    const std::pair<Op, uint32_t> luts[] = {{LOP3_00, 0x00}, {LOP3_FF, 0xFF}, {LOP3_F0, 0xF0}, {LOP3_CC, 0xCC},
                                            {LOP3_AA, 0xAA}, {LOP3_80, 0x80}, {LOP3_FE, 0xFE}, {LOP3_96, 0x96},
                                            {LOP3_E8, 0xE8}, {LOP3_CA, 0xCA}, {LOP3_1A, 0x1A}, {LOP3_01, 0x01}};
    std::vector<Case> l3 = t32;
    l3.push_back({0xff00ff00u, 0xf0f0f0f0u, 0xccccccccu, 0});  // all eight input combinations
    for (const auto& l : luts) {
      ConfStr nm = conf_fmt("lop3.b32 0x%02x", l.second);
      uint32_t lut = l.second;
      check(l.first, nm.s, 3, l3, [lut](const Case& x) { return (uint64_t)ref_lop3(U32(x.a), U32(x.b), U32(x.c), lut); });
    }
    check(SELP_B32, "selp.b32", 3, t32, [](const Case& x) { return (uint64_t)(U32(x.c) != 0 ? U32(x.a) : U32(x.b)); });
  }

  // --- 16-bit forms ---
  {
    std::vector<Case> p16;
    const uint32_t v[] = {0, 1, 2, 0x7fff, 0x8000, 0xffff, 0x1234, 0xfff9, 0x00ff, 0x8001};
    for (uint32_t a : v)
      for (uint32_t b : v) p16.push_back({a, b, 0, 0});
    check(ADD_U16, "add.u16", 2, p16, [](const Case& x) { return (uint64_t)(uint16_t)(x.a + x.b); });
    check(MUL_LO_S16, "mul.lo.s16", 2, p16, [](const Case& x) { return (uint64_t)(uint16_t)((int16_t)x.a * (int16_t)x.b); });
    check(MUL_HI_U16, "mul.hi.u16", 2, p16, [](const Case& x) { return (uint64_t)(uint16_t)(((uint32_t)(uint16_t)x.a * (uint16_t)x.b) >> 16); });
    check(MUL_WIDE_S16, "mul.wide.s16", 2, p16, [](const Case& x) { return (uint64_t)(uint32_t)((int32_t)(int16_t)x.a * (int16_t)x.b); });
    check(MUL_WIDE_U16, "mul.wide.u16", 2, p16, [](const Case& x) { return (uint64_t)((uint32_t)(uint16_t)x.a * (uint16_t)x.b); });
    check(SETP_LE_S16, "setp.le.s16", 2, p16, [](const Case& x) { return (uint64_t)((int16_t)x.a <= (int16_t)x.b); });
  }

  // --- 64-bit ---
  check(ADD_U64, "add.u64", 2, p64, [](const Case& x) { return x.a + x.b; });
  check(SUB_U64, "sub.u64", 2, p64, [](const Case& x) { return x.a - x.b; });
  check(MUL_LO_U64, "mul.lo.u64", 2, p64, [](const Case& x) { return x.a * x.b; });
  check(MUL_HI_U64, "mul.hi.u64", 2, p64, [](const Case& x) {
    return (uint64_t)(((unsigned __int128)x.a * x.b) >> 64);
  });
  check(MUL_HI_S64, "mul.hi.s64", 2, p64, [](const Case& x) {
    return (uint64_t)((unsigned __int128)((__int128)S64(x.a) * S64(x.b)) >> 64);
  });
  check(MIN_U64, "min.u64", 2, p64, [](const Case& x) { return x.a < x.b ? x.a : x.b; });
  check(MAX_U64, "max.u64", 2, p64, [](const Case& x) { return x.a > x.b ? x.a : x.b; });
  check(MIN_S64, "min.s64", 2, p64, [](const Case& x) { return S64(x.a) < S64(x.b) ? x.a : x.b; });
  check(MAX_S64, "max.s64", 2, p64, [](const Case& x) { return S64(x.a) > S64(x.b) ? x.a : x.b; });
  check(AND_B64, "and.b64", 2, p64, [](const Case& x) { return x.a & x.b; });
  check(OR_B64, "or.b64", 2, p64, [](const Case& x) { return x.a | x.b; });
  check(XOR_B64, "xor.b64", 2, p64, [](const Case& x) { return x.a ^ x.b; });
  check(NOT_B64, "not.b64", 1, s64, [](const Case& x) { return ~x.a; });
  check(ABS_S64, "abs.s64", 1, s64, [](const Case& x) { return S64(x.a) < 0 ? 0 - x.a : x.a; });
  check(NEG_S64, "neg.s64", 1, s64, [](const Case& x) { return 0 - x.a; });
  check(POPC_B64, "popc.b64", 1, s64, [](const Case& x) {
    uint64_t n = 0;
    for (uint64_t v = x.a; v; v >>= 1) n += v & 1;
    return n;
  });
  check(CLZ_B64, "clz.b64", 1, s64, [](const Case& x) {
    uint64_t n = 0;
    while (n < 64 && !((x.a << n) >> 63)) ++n;
    return n;
  });
  check(BREV_B64, "brev.b64", 1, s64, [](const Case& x) {
    uint64_t d = 0;
    for (int i = 0; i < 64; ++i) d |= ((x.a >> (63 - i)) & 1) << i;
    return d;
  });
  check(BFIND_U64, "bfind.u64", 1, s64, [](const Case& x) { return (uint64_t)ref_bfind(x.a, 63, false, false); });
  check(BFIND_S64, "bfind.s64", 1, s64, [](const Case& x) { return (uint64_t)ref_bfind(x.a, 63, true, false); });
  check(BFIND_SHIFTAMT_S64, "bfind.shiftamt.s64", 1, s64, [](const Case& x) { return (uint64_t)ref_bfind(x.a, 63, true, true); });
  {
    std::vector<Case> t64;
    for (uint64_t a : {0ull, 3ull, 0xffffffffffffffffull, 0x8000000000000000ull, 0x123456789abcdef0ull})
      for (uint64_t b : {1ull, 0x7fffffffffffffffull, 0xfffffffffffffff9ull, 0x100000000ull})
        for (uint64_t c : {0ull, 1ull, 0xffffffffffffffffull}) t64.push_back({a, b, c, 0});
    check(MAD_LO_U64, "mad.lo.u64", 3, t64, [](const Case& x) { return x.a * x.b + x.c; });
    check(MAD_HI_U64, "mad.hi.u64", 3, t64, [](const Case& x) {
      return (uint64_t)(((unsigned __int128)x.a * x.b) >> 64) + x.c;
    });
    check(MAD_HI_S64, "mad.hi.s64", 3, t64, [](const Case& x) {
      return (uint64_t)((unsigned __int128)((__int128)S64(x.a) * S64(x.b)) >> 64) + x.c;
    });
  }

  // --- widening multiply(-add): the full 2n-bit product ---
  check(MUL_WIDE_U32, "mul.wide.u32", 2, p32, [](const Case& x) { return (uint64_t)U32(x.a) * U32(x.b); });
  check(MUL_WIDE_S32, "mul.wide.s32", 2, p32, [](const Case& x) { return (uint64_t)((int64_t)S32(x.a) * S32(x.b)); });
  {
    std::vector<Case> mw;
    for (const Case& x : t32) mw.push_back({x.a, x.b, x.c * 0x100000001ull ^ 0x8000000000000000ull, 0});
    check(MAD_WIDE_U32, "mad.wide.u32", 3, mw, [](const Case& x) { return (uint64_t)U32(x.a) * U32(x.b) + x.c; });
    check(MAD_WIDE_S32, "mad.wide.s32", 3, mw, [](const Case& x) { return (uint64_t)((int64_t)S32(x.a) * S32(x.b)) + x.c; });
  }

  // --- carry chains: CC.CF carries between the halves of an extended-precision add/sub ---
  {
    std::vector<Case> cc;
    const uint32_t v[] = {0u, 1u, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu};
    for (uint32_t a : v)
      for (uint32_t b : v)
        for (uint32_t c : v)
          for (uint32_t d : {0u, 1u, 0xffffffffu}) cc.push_back({a, b, c, d});
    check(ADD_CC_CHAIN, "add.cc.u32+addc.u32", 4, cc, [](const Case& x) {
      return ((x.b << 32) | U32(x.a)) + ((x.d << 32) | U32(x.c));
    });
    check(SUB_CC_CHAIN, "sub.cc.u32+subc.u32", 4, cc, [](const Case& x) {
      return ((x.b << 32) | U32(x.a)) - ((x.d << 32) | U32(x.c));
    });
    check(ADD_CC_CARRYOUT, "add.cc.u32 carry-out", 4, cc, [](const Case& x) {
      uint64_t s = (uint64_t)U32(x.a) + U32(x.c);
      return ((s >> 32) << 32) | U32(s);
    });
    check(SUB_CC_BORROWOUT, "sub.cc.u32 borrow-out", 4, cc, [](const Case& x) {
      uint32_t borrow = U32(x.a) < U32(x.c) ? 1u : 0u;  // subc 0 - 0 - borrow
      return ((uint64_t)(0u - borrow) << 32) | U32(U32(x.a) - U32(x.c));
    });
    check(MADC_CHAIN, "mad.lo.cc.u32+madc.hi.u32", 4, cc, [](const Case& x) {
      return (uint64_t)U32(x.a) * U32(x.b) + ((x.d << 32) | U32(x.c));
    });
    std::vector<Case> cc64;
    for (uint64_t a : {0ull, 1ull, ~0ull, 0x8000000000000000ull})
      for (uint64_t b : {0ull, 5ull, ~0ull})
        for (uint64_t c : {0ull, 1ull, ~0ull, 0x8000000000000000ull})
          for (uint64_t d : {0ull, ~0ull}) cc64.push_back({a, b, c, d});
    check(ADDC_CC_CHAIN64, "add.cc.u64+addc.cc.u64", 4, cc64, [](const Case& x) {
      unsigned __int128 s = (((unsigned __int128)x.b << 64) | x.a) + (((unsigned __int128)x.d << 64) | x.c);
      uint64_t lo = (uint64_t)s, hi = (uint64_t)(s >> 64);
      return hi ^ (lo * 0x9E3779B97F4A7C15ull);
    });
  }

  // --- setp: integer comparisons; lo/ls/hi/hs are the unsigned names of lt/le/gt/ge ---
  {
    struct S {
      Op op;
      const char* name;
      std::function<bool(uint32_t, uint32_t)> f;
    };
    const S tests[] = {
        {SETP_EQ_S32, "setp.eq.s32", [](uint32_t a, uint32_t b) { return a == b; }},
        {SETP_NE_S32, "setp.ne.s32", [](uint32_t a, uint32_t b) { return a != b; }},
        {SETP_LT_S32, "setp.lt.s32", [](uint32_t a, uint32_t b) { return (int32_t)a < (int32_t)b; }},
        {SETP_LE_S32, "setp.le.s32", [](uint32_t a, uint32_t b) { return (int32_t)a <= (int32_t)b; }},
        {SETP_GT_S32, "setp.gt.s32", [](uint32_t a, uint32_t b) { return (int32_t)a > (int32_t)b; }},
        {SETP_GE_S32, "setp.ge.s32", [](uint32_t a, uint32_t b) { return (int32_t)a >= (int32_t)b; }},
        {SETP_LT_U32, "setp.lt.u32", [](uint32_t a, uint32_t b) { return a < b; }},
        {SETP_LE_U32, "setp.le.u32", [](uint32_t a, uint32_t b) { return a <= b; }},
        {SETP_GT_U32, "setp.gt.u32", [](uint32_t a, uint32_t b) { return a > b; }},
        {SETP_GE_U32, "setp.ge.u32", [](uint32_t a, uint32_t b) { return a >= b; }},
        {SETP_LO_U32, "setp.lo.u32", [](uint32_t a, uint32_t b) { return a < b; }},
        {SETP_LS_U32, "setp.ls.u32", [](uint32_t a, uint32_t b) { return a <= b; }},
        {SETP_HI_U32, "setp.hi.u32", [](uint32_t a, uint32_t b) { return a > b; }},
        {SETP_HS_U32, "setp.hs.u32", [](uint32_t a, uint32_t b) { return a >= b; }},
        {SETP_EQ_B32, "setp.eq.b32", [](uint32_t a, uint32_t b) { return a == b; }},
        {SETP_NE_B32, "setp.ne.b32", [](uint32_t a, uint32_t b) { return a != b; }},
    };
    for (const S& t : tests) {
      auto f = t.f;
      check(t.op, t.name, 2, p32, [f](const Case& x) { return (uint64_t)f(U32(x.a), U32(x.b)); });
    }
    check(SETP_LT_S64, "setp.lt.s64", 2, p64, [](const Case& x) { return (uint64_t)(S64(x.a) < S64(x.b)); });
    check(SETP_HI_U64, "setp.hi.u64", 2, p64, [](const Case& x) { return (uint64_t)(x.a > x.b); });
    check(SETP_GE_U64, "setp.ge.u64", 2, p64, [](const Case& x) { return (uint64_t)(x.a >= x.b); });
    // BoolOp: "p = BoolOp(t, c); q = BoolOp(!t, c)"; result word = p*2 + q.
    std::vector<Case> bp;
    for (const Case& x : p32) {
      bp.push_back({x.a, x.b, 0, 0});
      bp.push_back({x.a, x.b, 1, 0});
    }
    auto boolop = [](bool t, bool c, int kind) {
      return kind == 0 ? (t && c) : kind == 1 ? (t || c) : (t != c);
    };
    check(SETP_LT_AND_S32, "setp.lt.and.s32 p|q", 3, bp, [&](const Case& x) {
      bool t = S32(x.a) < S32(x.b), c = x.c & 1;
      return (uint64_t)(boolop(t, c, 0) * 2 + boolop(!t, c, 0));
    });
    check(SETP_LT_OR_S32, "setp.lt.or.s32 p|q", 3, bp, [&](const Case& x) {
      bool t = S32(x.a) < S32(x.b), c = x.c & 1;
      return (uint64_t)(boolop(t, c, 1) * 2 + boolop(!t, c, 1));
    });
    check(SETP_LT_XOR_S32, "setp.lt.xor.s32 p|q", 3, bp, [&](const Case& x) {
      bool t = S32(x.a) < S32(x.b), c = x.c & 1;
      return (uint64_t)(boolop(t, c, 2) * 2 + boolop(!t, c, 2));
    });
    check(SETP_GT_AND_NOTC_U32, "setp.gt.and.u32 p|q, !c", 3, bp, [&](const Case& x) {
      bool t = U32(x.a) > U32(x.b), c = !(x.c & 1);
      return (uint64_t)(boolop(t, c, 0) * 2 + boolop(!t, c, 0));
    });
  }

  // --- division last: by zero the value is "unspecified, machine-specific" (not compared), and
  // INT_MIN / -1 has no representable quotient (the ISA says nothing; not compared either), but
  // both must run without faulting. rem follows C's truncating division (the ISA's note says the
  // sign of a negative remainder depends on how div rounds; PTX div is C's "d = a / b").
  {
    auto skip32 = [](const Case& x) { return U32(x.b) == 0; };
    auto skips32 = [](const Case& x) { return U32(x.b) == 0 || (S32(x.a) == INT32_MIN && S32(x.b) == -1); };
    check(DIV_U32, "div.u32", 2, p32, [](const Case& x) { return U32(x.b) ? (uint64_t)(U32(x.a) / U32(x.b)) : 0; }, skip32);
    check(REM_U32, "rem.u32", 2, p32, [](const Case& x) { return U32(x.b) ? (uint64_t)(U32(x.a) % U32(x.b)) : 0; }, skip32);
    check(DIV_S32, "div.s32", 2, p32, [&](const Case& x) { return skips32(x) ? 0 : (uint64_t)U32(S32(x.a) / S32(x.b)); }, skips32);
    check(REM_S32, "rem.s32", 2, p32, [&](const Case& x) { return skips32(x) ? 0 : (uint64_t)U32(S32(x.a) % S32(x.b)); }, skips32);
    auto skip64 = [](const Case& x) { return x.b == 0; };
    auto skips64 = [](const Case& x) { return x.b == 0 || (S64(x.a) == INT64_MIN && S64(x.b) == -1); };
    check(DIV_U64, "div.u64", 2, p64, [](const Case& x) { return x.b ? x.a / x.b : 0; }, skip64);
    check(REM_U64, "rem.u64", 2, p64, [](const Case& x) { return x.b ? x.a % x.b : 0; }, skip64);
    check(DIV_S64, "div.s64", 2, p64, [&](const Case& x) { return skips64(x) ? 0 : (uint64_t)(S64(x.a) / S64(x.b)); }, skips64);
    check(REM_S64, "rem.s64", 2, p64, [&](const Case& x) { return skips64(x) ? 0 : (uint64_t)(S64(x.a) % S64(x.b)); }, skips64);
  }

  return conf_finish("int_ops");
}
