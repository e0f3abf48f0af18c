// emu::tensor - see tensor.h for the contract and the emulator's choices.
#include "tensor.h"

#include "fp.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace emu::tensor {

namespace {

// ---------------------------------------------------------------------------------------------
// Scalar conversions.

uint16_t lo16(uint32_t reg) {
  return static_cast<uint16_t>(reg & 0xffffu);
}
uint16_t hi16(uint32_t reg) {
  return static_cast<uint16_t>(reg >> 16);
}
uint16_t half_of(uint32_t reg, int half) {
  return half ? hi16(reg) : lo16(reg);
}
uint32_t pack16(uint16_t lo, uint16_t hi) {
  return static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
}
// The conversions the fragment loops use for every element, inline here (the exported
// f16_to_double ... below are these).
inline double f32_value(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return static_cast<double>(f);
}
inline double bf16_value(uint16_t bits) {
  return f32_value(static_cast<uint32_t>(bits) << 16);
}
inline double f16_value(uint16_t bits) {
  const uint32_t exp = (bits >> 10) & 0x1f, man = bits & 0x3ff;
  double v;
  if (exp == 0) {
    v = static_cast<double>(man) * 0x1p-24;  // exact: man < 2^10
  } else if (exp == 31) {
    v = man ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else {  // 1.man * 2^(exp - 15), built as the double's fields
    const uint64_t b = (static_cast<uint64_t>(exp - 15 + 1023) << 52) | (static_cast<uint64_t>(man) << 42);
    std::memcpy(&v, &b, 8);
  }
  return (bits & 0x8000) ? -v : v;
}
inline uint32_t f32_bits_of(double v) {
  if (std::isnan(v)) return 0x7fffffffu;
  const float f = static_cast<float>(v);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}
// Rounds to nearest even in integer arithmetic (independent of the floating-point environment),
// overflow to infinity, NaN to 0x7fff.
inline uint16_t f16_bits_of(double v) {
  if (std::isnan(v)) return 0x7fff;
  uint64_t b;
  std::memcpy(&b, &v, 8);
  const uint16_t sign = (b >> 63) ? 0x8000 : 0;
  b &= ~(1ull << 63);
  double a;
  std::memcpy(&a, &b, 8);
  if (a >= 65520.0) return sign | 0x7c00;  // at or above the midpoint of 65504 and 2^16: inf
  if (a <= 0x1p-25) return sign;  // at most half the smallest subnormal: 0 (2^-25, a tie, too)
  // a = S * 2^(E - 52), a normal double; the result counts units of 2^(E - 10) (normal results,
  // E >= -14) or 2^-24 (subnormal ones): S shifted right by sh, rounded to nearest even.
  const int E = static_cast<int>(b >> 52) - 1023;
  const uint64_t S = (b & ((1ull << 52) - 1)) | (1ull << 52);
  const int sh = E >= -14 ? 42 : 28 - E;  // E in [-25, -15]: sh in [43, 53]
  uint64_t q = S >> sh;
  const uint64_t rem = S & ((1ull << sh) - 1), half = 1ull << (sh - 1);
  if (rem > half || (rem == half && (q & 1))) ++q;
  // Normal: the exponent field E + 15 and q - 1024 (q = 2048 carries into the exponent);
  // subnormal: q units of 2^-24 (q = 1024 is the smallest normal's encoding).
  return sign | static_cast<uint16_t>(E >= -14 ? (static_cast<uint64_t>(E + 14) << 10) + q : q);
}
constexpr bool is16(ElemType t) {
  return t == ElemType::F16 || t == ElemType::BF16;
}
constexpr bool is8(ElemType t) {
  return t == ElemType::S8 || t == ElemType::U8;
}
constexpr bool is_fp8(ElemType t) {
  return t == ElemType::E4M3 || t == ElemType::E5M2;
}
constexpr bool is_byte(ElemType t) {
  return is8(t) || is_fp8(t);
}
// Elements one register holds.
int per_reg(ElemType t) {
  return is_byte(t) ? 4 : is16(t) ? 2 : 1;
}

// An 8-bit float of format f as a double: every value is exact (at most 4 significant bits).
double fp8_to_double(const fp::detail::Format& f, uint8_t bits) {
  const fp::detail::Unpacked u = fp::detail::unpack(f, bits);
  double v = 0.0;
  switch (u.cls) {
    case fp::detail::Class::nan:
      return std::numeric_limits<double>::quiet_NaN();
    case fp::detail::Class::inf:
      v = std::numeric_limits<double>::infinity();
      break;
    case fp::detail::Class::zero:
      break;
    case fp::detail::Class::finite:
      v = std::ldexp(static_cast<double>(u.mag), u.exp);
      break;
  }
  return u.neg ? -v : v;
}

// ---------------------------------------------------------------------------------------------
// Operand layouts: the one scheme documented in tensor.h.

enum class Role { A, B, Acc };

struct Operand {
  Role role;
  int rows;
  int cols;
  ElemType t;
  int regs;  // registers per lane that hold distinct elements
  int per;   // elements per register
};

int gid(int lane) {
  return lane >> 2;
}  // groupID
int tig(int lane) {
  return lane & 3;
}  // threadID_in_group

Operand make_operand(Role role, int rows, int cols, ElemType t) {
  const int per = per_reg(t);
  return {role, rows, cols, t, rows * cols / (kWarpSize * per), per};
}

RowCol coord(const Operand& op, int lane, int reg, int e) {
  const int g = gid(lane), t = tig(lane);
  switch (op.role) {
    case Role::A: {  // blocks of 8 x 4w, lane: row g, columns w*t + e
      const int w = op.per, rb = op.rows / 8;
      return {8 * (reg % rb) + g, 4 * w * (reg / rb) + w * t + e};
    }
    case Role::B: {  // blocks of 4w x 8, lane: column g, rows w*t + e
      const int w = op.per, rb = op.rows / (4 * w);
      return {4 * w * (reg % rb) + w * t + e, 8 * (reg / rb) + g};
    }
    case Role::Acc: {  // element i (of the 32-bit form): 8x8 block i/2, row g, column 2t + i%2
      const int i = op.per == 2 ? 2 * reg + e : reg, rb = op.rows / 8, blk = i / 2;
      return {8 * (blk % rb) + g, 8 * (blk / rb) + 2 * t + i % 2};
    }
  }
  return {0, 0};
}

// The largest operand (m32n8k16's A, m8n32k16's B) has 32 x 16 elements. A matrix is kept as
// m[row * cols + col].
constexpr int kMaxElems = 32 * 16;

// The coordinates of the layout are affine in the lane's groupID g and threadID_in_group t:
// element e of register reg of lane L is at index base(reg, e) + lane_offset(L), with
// base(reg, e) the index for lane 0.
struct Placement {
  int base[kMaxFragRegs][4];  // [reg][e]
  int lane[kWarpSize];
};
void place(const Operand& op, Placement& p) {
  const int w = op.per, cols = op.cols;
  // The register's block, counted down the columns first: block row br of rb, block column bc.
  int br = 0, bc = 0;
  const int rb = op.role == Role::A ? op.rows / 8 : op.role == Role::B ? op.rows / (4 * w) : op.rows / 8;
  const int nblk = op.role == Role::Acc ? (op.per == 2 ? 2 * op.regs : op.regs) / 2 : op.regs;
  for (int blk = 0; blk < nblk; ++blk) {
    switch (op.role) {
      case Role::A:  // 8 x 4w blocks, lane: row g, columns w*t + e
        for (int e = 0; e < w; ++e) p.base[blk][e] = 8 * br * cols + 4 * w * bc + e;
        break;
      case Role::B:  // 4w x 8 blocks, lane: column g, rows w*t + e
        for (int e = 0; e < w; ++e) p.base[blk][e] = (4 * w * br + e) * cols + 8 * bc;
        break;
      case Role::Acc:  // 8 x 8 blocks; elements 2*blk and 2*blk+1: row g, columns 2t, 2t+1
        for (int h = 0; h < 2; ++h) {
          const int i = 2 * blk + h;  // element i of the 32-bit form
          if (w == 2) {
            p.base[i / 2][i % 2] = 8 * br * cols + 8 * bc + h;
          } else {
            p.base[i][0] = 8 * br * cols + 8 * bc + h;
          }
        }
        break;
    }
    if (++br == rb) br = 0, ++bc;
  }
  int gs = 0, ts = 0;  // lane offset: g * gs + t * ts
  switch (op.role) {
    case Role::A:
      gs = cols, ts = w;
      break;
    case Role::B:
      gs = 1, ts = w * cols;
      break;
    case Role::Acc:
      gs = cols, ts = 2;
      break;
  }
  for (int lane = 0; lane < kWarpSize; ++lane) p.lane[lane] = gid(lane) * gs + tig(lane) * ts;
}

// An fp8 format's 256 values, as e4m3_to_double / e5m2_to_double give them.
struct Fp8Table {
  double v[256];
  explicit Fp8Table(const fp::detail::Format& f) {
    for (int i = 0; i < 256; ++i) v[i] = fp8_to_double(f, static_cast<uint8_t>(i));
  }
};
const double* fp8_table(ElemType t) {
  static const Fp8Table e4m3(fp::detail::kE4M3), e5m2(fp::detail::kE5M2);
  return t == ElemType::E4M3 ? e4m3.v : e5m2.v;
}

template <ElemType T>
inline double decode_elem(uint64_t reg, int e, const double* fp8) {
  const uint32_t r32 = static_cast<uint32_t>(reg);
  if constexpr (T == ElemType::F16) {
    return f16_value(half_of(r32, e));
  } else if constexpr (T == ElemType::BF16) {
    return bf16_value(half_of(r32, e));
  } else if constexpr (T == ElemType::TF32) {
    return f32_value(r32 & 0xffffe000u);  // tf32: the low 13 bits are not used
  } else if constexpr (T == ElemType::F32) {
    return f32_value(r32);
  } else if constexpr (T == ElemType::S8) {
    return static_cast<int8_t>(r32 >> (8 * e));
  } else if constexpr (T == ElemType::U8) {
    return static_cast<uint8_t>(r32 >> (8 * e));
  } else if constexpr (T == ElemType::S32) {
    return static_cast<int32_t>(r32);
  } else if constexpr (T == ElemType::F64) {
    double v;
    std::memcpy(&v, &reg, 8);
    return v;
  } else {  // E4M3, E5M2
    return fp8[static_cast<uint8_t>(r32 >> (8 * e))];
  }
}

template <ElemType T>
void unpack_as(const Operand& op, const FragIn& frag, double* m) {
  Placement p;
  place(op, p);
  const double* fp8 = is_fp8(T) ? fp8_table(T) : nullptr;
  const size_t stride = static_cast<size_t>(frag.stride);
  constexpr int per = is_byte(T) ? 4 : is16(T) ? 2 : 1;  // == op.per
  for (int reg = 0; reg < op.regs; ++reg) {
    const uint64_t* row = frag.reg[reg];
    const int* base = p.base[reg];
    for (int lane = 0; lane < kWarpSize; ++lane) {
      const uint64_t v = row[lane * stride];
      double* dst = m + p.lane[lane];
      for (int e = 0; e < per; ++e) dst[base[e]] = decode_elem<T>(v, e, fp8);
    }
  }
}

// Collects the matrix an operand fragment holds.
void unpack(const Operand& op, const FragIn& frag, double* m) {
  switch (op.t) {
    case ElemType::F16:
      return unpack_as<ElemType::F16>(op, frag, m);
    case ElemType::BF16:
      return unpack_as<ElemType::BF16>(op, frag, m);
    case ElemType::TF32:
      return unpack_as<ElemType::TF32>(op, frag, m);
    case ElemType::F32:
      return unpack_as<ElemType::F32>(op, frag, m);
    case ElemType::S8:
      return unpack_as<ElemType::S8>(op, frag, m);
    case ElemType::U8:
      return unpack_as<ElemType::U8>(op, frag, m);
    case ElemType::S32:
      return unpack_as<ElemType::S32>(op, frag, m);
    case ElemType::F64:
      return unpack_as<ElemType::F64>(op, frag, m);
    case ElemType::E4M3:
      return unpack_as<ElemType::E4M3>(op, frag, m);
    case ElemType::E5M2:
      return unpack_as<ElemType::E5M2>(op, frag, m);
  }
}

// Packs raw element bits (in the element's width) into fragment registers.
uint64_t pack_elem(ElemType t, uint64_t reg, int e, uint64_t bits) {
  const unsigned width = 8 * elem_bytes(t);
  if (width == 64) return bits;
  const uint64_t mask = (1ull << width) - 1;
  const unsigned shift = width * static_cast<unsigned>(e);
  return (reg & ~(mask << shift)) | ((bits & mask) << shift);
}
uint64_t elem_bits(ElemType t, uint64_t reg, int e) {
  const unsigned width = 8 * elem_bytes(t);
  if (width == 64) return reg;
  return (reg >> (width * static_cast<unsigned>(e))) & ((1ull << width) - 1);
}

// D = C + A * B over dense matrices (a: M x K, b: K x N, c and d: M x N), products exact, sum in
// double, in the order C, k = 0, 1, ... for every element. The sums of eight neighbouring
// elements of a row run side by side, four to a vector (each element's own sequence of roundings
// is the scalar one; without AVX the compiler splits a vector into two SSE2 halves).
typedef double V4 __attribute__((vector_size(32)));
__attribute__((target_clones("avx", "default"))) void matmul_acc(int M, int N, int K,
                                                                 const double* a, const double* b,
                                                                 const double* c, double* d) {
  if (N % 8 != 0) {
    for (int i = 0; i < M; ++i) {
      for (int j = 0; j < N; ++j) {
        double s = c[i * N + j];
        for (int k = 0; k < K; ++k) s += a[i * K + k] * b[k * N + j];
        d[i * N + j] = s;
      }
    }
    return;
  }
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; j += 8) {
      V4 s0, s1;
      std::memcpy(&s0, c + i * N + j, 32);
      std::memcpy(&s1, c + i * N + j + 4, 32);
      for (int k = 0; k < K; ++k) {
        const double x = a[i * K + k];
        const V4 av = {x, x, x, x};
        const double* bk = b + k * N + j;
        V4 b0, b1;
        std::memcpy(&b0, bk, 32);
        std::memcpy(&b1, bk + 4, 32);
        s0 += av * b0;
        s1 += av * b1;
      }
      std::memcpy(d + i * N + j, &s0, 32);
      std::memcpy(d + i * N + j + 4, &s1, 32);
    }
  }
}

fp::Round to_round(Rnd r) {
  switch (r) {
    case Rnd::RN:
      return fp::Round::rn;
    case Rnd::RZ:
      return fp::Round::rz;
    case Rnd::RM:
      return fp::Round::rm;
    case Rnd::RP:
      return fp::Round::rp;
  }
  return fp::Round::rn;
}

uint64_t f64_bits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, 8);
  return b;
}

// Accum::Mode::Truncate for one output: the addends x[0..n) (C and the products, each exact) cut
// below 2^(e - bits + 1), e the exponent of the largest magnitude, summed exactly and rounded
// toward zero to f32 (tensor.h).
uint32_t truncated_sum_f32(const double* x, int n, int bits) {
  bool nan = false, pos_inf = false, neg_inf = false, all_neg_zero = true;
  double largest = 0.0;
  for (int i = 0; i < n; ++i) {
    if (std::isnan(x[i])) {
      nan = true;
    } else if (std::isinf(x[i])) {
      (x[i] > 0 ? pos_inf : neg_inf) = true;
    } else {
      if (x[i] != 0.0 || !std::signbit(x[i])) all_neg_zero = false;
      largest = std::max(largest, std::fabs(x[i]));
    }
  }
  if (nan || (pos_inf && neg_inf)) return fp::kNaNF32;
  if (pos_inf) return 0x7f800000u;
  if (neg_inf) return 0xff800000u;
  if (largest == 0.0) return all_neg_zero ? 0x80000000u : 0u;
  const int lsb = std::ilogb(largest) - bits + 1;  // weight of the last bit kept
  __int128 sum = 0;
  for (int i = 0; i < n; ++i) {
    // x / 2^lsb is exact (a power-of-two scaling) and below 2^bits in magnitude; trunc cuts the
    // bits below 2^lsb toward zero.
    sum += static_cast<int64_t>(std::trunc(std::ldexp(x[i], -lsb)));
  }
  if (sum == 0) return 0u;  // an exact cancellation: +0, as IEEE addition gives in this mode
  const bool neg = sum < 0;
  const fp::u128 mag = static_cast<fp::u128>(neg ? -sum : sum);
  return static_cast<uint32_t>(
      fp::detail::round_pack(fp::detail::kF32, neg, mag, lsb, fp::Round::rz, false));
}

bool float_multiplicand(ElemType t) {
  return is16(t) || is_fp8(t) || t == ElemType::TF32;
}

// D = C + A * B under the truncate model, each element as its f32 value (kept out of line, so
// that the default path's code stays as it was).
[[gnu::noinline]] void matmul_truncated(int M, int N, int K, int bits, const double* a,
                                        const double* b, const double* c, double* d) {
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      std::array<double, 32 + 1> x;
      x[0] = c[i * N + j];
      for (int k = 0; k < K; ++k) x[k + 1] = a[i * K + k] * b[k * N + j];
      d[i * N + j] = f32_bits_to_double(truncated_sum_f32(x.data(), K + 1, bits));
    }
  }
}

template <ElemType T>
void pack_as(const Operand& od, bool satfinite, const double* md, const FragOut& d) {
  Placement p;
  place(od, p);
  const size_t stride = static_cast<size_t>(d.stride);
  for (int reg = 0; reg < od.regs; ++reg) {
    uint64_t* row = d.reg[reg];
    for (int lane = 0; lane < kWarpSize; ++lane) {
      uint64_t v = 0;
      for (int e = 0; e < od.per; ++e) {
        const double x = md[p.base[reg][e] + p.lane[lane]];
        uint64_t bits;
        if constexpr (T == ElemType::F16) {
          bits = f16_bits_of(x);
        } else if constexpr (T == ElemType::S32) {
          const int64_t exact = static_cast<int64_t>(x);
          if (satfinite) {
            bits = static_cast<uint32_t>(
                static_cast<int32_t>(std::clamp<int64_t>(exact, INT32_MIN, INT32_MAX)));
          } else {
            bits = static_cast<uint32_t>(static_cast<uint64_t>(exact));  // wraps mod 2^32
          }
        } else if constexpr (T == ElemType::F64) {
          bits = std::isnan(x) ? fp::kNaNF64 : f64_bits(x);
        } else {
          bits = f32_bits_of(x);
        }
        if constexpr (T == ElemType::F16) {
          v |= bits << (16 * e);
        } else {
          v = bits;
        }
      }
      row[lane * stride] = v;
    }
  }
}

// The whole multiply-accumulate on fragments: gathers A, B, C, computes D in the arithmetic
// tensor.h describes for the types, and scatters D (a, b and c are fully read first, so d may
// alias them). Under the truncate model an f32 result is its f32 value in md, which the
// conversion to f32 bits below keeps exactly.
void compute(int M, int N, int K, const Operand& oa, const Operand& ob, const Operand& oc,
             const Operand& od, bool satfinite, Rnd rnd, const Accum& accum, const FragIn& a,
             const FragIn& b, const FragIn& c, const FragOut& d) {
  double ma[kMaxElems], mb[kMaxElems], mc[kMaxElems], md[kMaxElems];
  unpack(oa, a, ma);
  unpack(ob, b, mb);
  unpack(oc, c, mc);
  if (accum.mode == Accum::Mode::Truncate && od.t == ElemType::F32 && float_multiplicand(oa.t)) {
    matmul_truncated(M, N, K, accum.bits, ma, mb, mc, md);
  } else if (od.t == ElemType::F64) {
    for (int i = 0; i < M; ++i) {
      for (int j = 0; j < N; ++j) {
        uint64_t s = f64_bits(mc[i * N + j]);
        for (int k = 0; k < K; ++k) {
          s = fp::detail::fma_core(fp::detail::kF64, f64_bits(ma[i * K + k]),
                                   f64_bits(mb[k * N + j]), s, to_round(rnd));
        }
        std::memcpy(&md[i * N + j], &s, 8);
      }
    }
  } else {
    // Integer sums are exact here too: |C| < 2^31 and K products below 2^16 each.
    matmul_acc(M, N, K, ma, mb, mc, md);
  }
  switch (od.t) {
    case ElemType::F16:
      return pack_as<ElemType::F16>(od, satfinite, md, d);
    case ElemType::S32:
      return pack_as<ElemType::S32>(od, satfinite, md, d);
    case ElemType::F64:
      return pack_as<ElemType::F64>(od, satfinite, md, d);
    default:
      return pack_as<ElemType::F32>(od, satfinite, md, d);
  }
}

FragIn view(const WarpFrag& f) {
  FragIn v;
  for (int i = 0; i < kMaxFragRegs; ++i) v.reg[i] = &f[0][i];
  v.stride = kMaxFragRegs;
  return v;
}
FragOut view(WarpFrag& f) {
  FragOut v;
  for (int i = 0; i < kMaxFragRegs; ++i) v.reg[i] = &f[0][i];
  v.stride = kMaxFragRegs;
  return v;
}

// mma operand shapes.
struct Mnk {
  int m, n, k;
};
Mnk mma_mnk(MmaShape s) {
  // Indexed by MmaShape: M16N8K8, M16N8K16, M16N8K4, M16N8K32, M8N8K16, M8N8K4.
  static constexpr Mnk kShapes[] = {{16, 8, 8}, {16, 8, 16}, {16, 8, 4},
                                    {16, 8, 32}, {8, 8, 16}, {8, 8, 4}};
  const unsigned i = static_cast<unsigned>(s);
  return i < 6 ? kShapes[i] : Mnk{16, 8, 16};
}
Mnk wmma_mnk(WmmaShape s) {
  switch (s) {
    case WmmaShape::M16N16K16:
      return {16, 16, 16};
    case WmmaShape::M32N8K16:
      return {32, 8, 16};
    case WmmaShape::M8N32K16:
      return {8, 32, 16};
    case WmmaShape::M16N16K8:
      return {16, 16, 8};
    case WmmaShape::M8N8K4:
      return {8, 8, 4};
  }
  return {16, 16, 16};
}

void require_mma(const MmaDesc& desc) {
  std::string why = mma_unsupported_reason(desc);
  if (!why.empty()) throw TensorError("mma.sync: " + why);
}

// Empty when wmma supports element type t for matrix m of shape s.
bool wmma_type_ok(WmmaShape s, WmmaMatrix m, ElemType t) {
  switch (s) {
    case WmmaShape::M16N16K16:
    case WmmaShape::M32N8K16:
    case WmmaShape::M8N32K16:
      if (m == WmmaMatrix::C) return t == ElemType::F16 || t == ElemType::F32 || t == ElemType::S32;
      return is16(t) || is8(t);
    case WmmaShape::M16N16K8:
      return m == WmmaMatrix::C ? t == ElemType::F32 : t == ElemType::TF32;
    case WmmaShape::M8N8K4:
      return t == ElemType::F64;
  }
  return false;
}

Operand wmma_operand(WmmaShape s, WmmaMatrix m, ElemType t) {
  if (!wmma_type_ok(s, m, t)) {
    throw TensorError(std::string("wmma.") + to_string(s) + ": unsupported " +
                      (m == WmmaMatrix::A   ? "A"
                       : m == WmmaMatrix::B ? "B"
                                            : "C/D") +
                      " element type " + to_string(t));
  }
  const RowCol dims = wmma_dims(s, m);
  return make_operand(m == WmmaMatrix::A ? Role::A : m == WmmaMatrix::B ? Role::B : Role::Acc,
                      dims.row, dims.col, t);
}

Addr element_addr(Layout layout, Addr base, uint32_t stride, unsigned esize, RowCol rc) {
  uint64_t idx = layout == Layout::Row
                     ? static_cast<uint64_t>(rc.row) * stride + static_cast<uint64_t>(rc.col)
                     : static_cast<uint64_t>(rc.col) * stride + static_cast<uint64_t>(rc.row);
  return base + idx * esize;
}

// The CUDA programming guide's rule for load_matrix_sync/store_matrix_sync: the pointer is
// 256-bit aligned and the stride (ldm) a multiple of 16 bytes (8 halves, 4 floats). Fragments
// smaller than that (8-bit multiplicands of the m32n8k16 / m8n32k16 shapes, whose default stride
// is 8 bytes) need only the PTX ISA's alignment of each row or column start to the fragment size.
void check_wmma_alignment(const char* what, ElemType t, unsigned fragment_bytes, Addr base,
                          uint32_t stride) {
  const uint64_t stride_bytes = static_cast<uint64_t>(stride) * elem_bytes(t);
  const unsigned stride_align = std::min(16u, fragment_bytes);
  if (base % 32 != 0 || stride_bytes % stride_align != 0) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "%s: the base address 0x%llx must be 32-byte aligned and the stride %u elements "
                  "(%llu bytes) a multiple of %u bytes",
                  what, static_cast<unsigned long long>(base), stride,
                  static_cast<unsigned long long>(stride_bytes), stride_align);
    throw TensorError(buf);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------

const char* to_string(ElemType t) {
  switch (t) {
    case ElemType::F16:
      return "f16";
    case ElemType::BF16:
      return "bf16";
    case ElemType::TF32:
      return "tf32";
    case ElemType::F32:
      return "f32";
    case ElemType::S8:
      return "s8";
    case ElemType::U8:
      return "u8";
    case ElemType::S32:
      return "s32";
    case ElemType::F64:
      return "f64";
    case ElemType::E4M3:
      return "e4m3";
    case ElemType::E5M2:
      return "e5m2";
  }
  return "?";
}

unsigned elem_bytes(ElemType t) {
  return is_byte(t) ? 1u : is16(t) ? 2u : t == ElemType::F64 ? 8u : 4u;
}

const char* to_string(MmaShape s) {
  switch (s) {
    case MmaShape::M16N8K8:
      return "m16n8k8";
    case MmaShape::M16N8K16:
      return "m16n8k16";
    case MmaShape::M16N8K4:
      return "m16n8k4";
    case MmaShape::M16N8K32:
      return "m16n8k32";
    case MmaShape::M8N8K16:
      return "m8n8k16";
    case MmaShape::M8N8K4:
      return "m8n8k4";
  }
  return "?";
}

const char* to_string(WmmaShape s) {
  switch (s) {
    case WmmaShape::M16N16K16:
      return "m16n16k16";
    case WmmaShape::M32N8K16:
      return "m32n8k16";
    case WmmaShape::M8N32K16:
      return "m8n32k16";
    case WmmaShape::M16N16K8:
      return "m16n16k8";
    case WmmaShape::M8N8K4:
      return "m8n8k4";
  }
  return "?";
}

double f16_to_double(uint16_t bits) {
  return f16_value(bits);
}

double e4m3_to_double(uint8_t bits) {
  return fp8_to_double(fp::detail::kE4M3, bits);
}
double e5m2_to_double(uint8_t bits) {
  return fp8_to_double(fp::detail::kE5M2, bits);
}

double bf16_to_double(uint16_t bits) {
  return bf16_value(bits);
}

double f32_bits_to_double(uint32_t bits) {
  return f32_value(bits);
}

uint16_t double_to_f16(double v) {
  return f16_bits_of(v);
}

uint32_t double_to_f32_bits(double v) {
  return f32_bits_of(v);
}

std::string parse_accum(const std::string& text, Accum* out) {
  if (text == "exact") {
    *out = Accum{};
    return {};
  }
  const std::string prefix = "truncate:";
  if (text.compare(0, prefix.size(), prefix) == 0) {
    const std::string n = text.substr(prefix.size());
    const bool digits = !n.empty() && n.size() <= 2 &&
                        n.find_first_not_of("0123456789") == std::string::npos;
    const int bits = digits ? std::stoi(n) : 0;
    if (bits >= 1 && bits <= 63) {
      out->mode = Accum::Mode::Truncate;
      out->bits = bits;
      return {};
    }
    return "'" + text + "': N of truncate:N must be an integer from 1 to 63";
  }
  return "'" + text + "' is not a model (exact, or truncate:N with N from 1 to 63)";
}

// ---------------------------------------------------------------------------------------------
// ldmatrix

void ldmatrix_check(int num, const std::array<Addr, kWarpSize>& row_addr) {
  if (num != 1 && num != 2 && num != 4) {
    throw TensorError("ldmatrix: .num must be .x1, .x2 or .x4, got " + std::to_string(num));
  }
  for (int lane = 0; lane < 8 * num; ++lane) {
    if (row_addr[lane] % 16 != 0) {
      char buf[96];
      std::snprintf(buf, sizeof buf,
                    "ldmatrix: lane %d's row address 0x%llx is not 16-byte aligned", lane,
                    static_cast<unsigned long long>(row_addr[lane]));
      throw TensorError(buf);
    }
  }
}

void ldmatrix_rows(int num, bool trans, const uint16_t (*row)[8], uint64_t* const* out_rows) {
  for (int j = 0; j < num; ++j) {
    const uint16_t(*m)[8] = row + 8 * j;  // m[r][c]: element c of row r of matrix j, as stored
    uint64_t* out = out_rows[j];
    for (int lane = 0; lane < kWarpSize; ++lane) {
      const int g = gid(lane), t = tig(lane);
      out[lane] = trans ? pack16(m[2 * t][g], m[2 * t + 1][g]) : pack16(m[g][2 * t], m[g][2 * t + 1]);
    }
  }
}

void ldmatrix(int num, bool trans, const std::array<Addr, kWarpSize>& row_addr, const ReadFn& read,
              WarpFrag& out) {
  ldmatrix_check(num, row_addr);
  // row[8*j + r][c]: element c of row r of matrix j, as stored.
  uint16_t row[32][8];
  for (int j = 0; j < num; ++j) {
    for (int r = 0; r < 8; ++r) {
      for (int c = 0; c < 8; ++c) {
        row[8 * j + r][c] = static_cast<uint16_t>(read(row_addr[8 * j + r] + 2 * c, 2) & 0xffffu);
      }
    }
  }
  uint64_t res[4][kWarpSize];
  uint64_t* out_rows[4] = {res[0], res[1], res[2], res[3]};
  ldmatrix_rows(num, trans, row, out_rows);
  for (int lane = 0; lane < kWarpSize; ++lane)
    for (int j = 0; j < num; ++j) out[lane][j] = res[j][lane];
}

// ---------------------------------------------------------------------------------------------
// mma.sync

namespace {

Operand mma_operand_a(const MmaDesc& d) {
  const Mnk s = mma_mnk(d.shape);
  return make_operand(Role::A, s.m, s.k, d.a);
}
Operand mma_operand_b(const MmaDesc& d) {
  const Mnk s = mma_mnk(d.shape);
  return make_operand(Role::B, s.k, s.n, d.b);
}
Operand mma_operand_acc(const MmaDesc& d, ElemType t) {
  const Mnk s = mma_mnk(d.shape);
  return make_operand(Role::Acc, s.m, s.n, t);
}

}  // namespace

std::string mma_unsupported_reason(const MmaDesc& desc) {
  // Built only for a message: this runs for every executed mma.
  auto combo = [&desc] {
    return std::string(to_string(desc.shape)) + "." + to_string(desc.d) + "." + to_string(desc.a) +
           "." + to_string(desc.b) + "." + to_string(desc.c);
  };
  auto fp16acc = [](ElemType t) { return t == ElemType::F16 || t == ElemType::F32; };
  const bool ints = is8(desc.a) && is8(desc.b);
  // fp8 (sm_89+): A and B each e4m3 or e5m2, C and D both f16 or both f32.
  const bool fp8 = is_fp8(desc.a) && is_fp8(desc.b) && fp16acc(desc.c) && desc.d == desc.c;
  bool ok = false;
  switch (desc.shape) {
    case MmaShape::M16N8K16:
      ok = (desc.a == ElemType::F16 && desc.b == ElemType::F16 && fp16acc(desc.c) &&
            fp16acc(desc.d)) ||
           (desc.a == ElemType::BF16 && desc.b == ElemType::BF16 && desc.c == ElemType::F32 &&
            desc.d == ElemType::F32) ||
           (ints && desc.c == ElemType::S32 && desc.d == ElemType::S32) || fp8;
      break;
    case MmaShape::M16N8K8:
      ok = (desc.a == ElemType::F16 && desc.b == ElemType::F16 && fp16acc(desc.c) &&
            fp16acc(desc.d)) ||
           ((desc.a == ElemType::BF16 || desc.a == ElemType::TF32) && desc.b == desc.a &&
            desc.c == ElemType::F32 && desc.d == ElemType::F32);
      break;
    case MmaShape::M16N8K4:
      ok = desc.a == ElemType::TF32 && desc.b == ElemType::TF32 && desc.c == ElemType::F32 &&
           desc.d == ElemType::F32;
      break;
    case MmaShape::M16N8K32:
      ok = (ints && desc.c == ElemType::S32 && desc.d == ElemType::S32) || fp8;
      break;
    case MmaShape::M8N8K16:
      ok = ints && desc.c == ElemType::S32 && desc.d == ElemType::S32;
      break;
    case MmaShape::M8N8K4:
      if (desc.a == ElemType::F16) {
        return combo() + ": the f16 form of m8n8k4 is not supported by this emulator";
      }
      ok = desc.a == ElemType::F64 && desc.b == ElemType::F64 && desc.c == ElemType::F64 &&
           desc.d == ElemType::F64;
      break;
  }
  if (!ok && (desc.shape == MmaShape::M16N8K16 || desc.shape == MmaShape::M16N8K32) &&
      is_fp8(desc.a) && is_fp8(desc.b) && fp16acc(desc.c) && fp16acc(desc.d)) {
    return combo() + ": e4m3 / e5m2 mma needs .ctype equal to .dtype (ptxas refuses the mixed forms)";
  }
  if (!ok) return combo() + ": not a type combination the PTX ISA defines for this shape";
  if (desc.satfinite && !ints) return combo() + ": .satfinite applies to integer types only";
  if (desc.rnd != Rnd::RN && desc.a != ElemType::F64) {
    return combo() + ": a rounding modifier applies to .f64 only";
  }
  return {};
}

int mma_regs_a(const MmaDesc& desc) {
  return mma_operand_a(desc).regs;
}
int mma_regs_b(const MmaDesc& desc) {
  return mma_operand_b(desc).regs;
}
int mma_regs_c(const MmaDesc& desc) {
  return mma_operand_acc(desc, desc.c).regs;
}
int mma_regs_d(const MmaDesc& desc) {
  return mma_operand_acc(desc, desc.d).regs;
}

void mma_sync(const MmaDesc& desc, const WarpFrag& a, const WarpFrag& b, const WarpFrag& c,
              WarpFrag& d) {
  mma_sync(desc, view(a), view(b), view(c), view(d));
}

void mma_sync(const MmaDesc& desc, const FragIn& a, const FragIn& b, const FragIn& c,
              const FragOut& d) {
  require_mma(desc);
  const Mnk s = mma_mnk(desc.shape);
  compute(s.m, s.n, s.k, mma_operand_a(desc), mma_operand_b(desc), mma_operand_acc(desc, desc.c),
          mma_operand_acc(desc, desc.d), desc.satfinite, desc.rnd, desc.accum, a, b, c, d);
}

// ---------------------------------------------------------------------------------------------
// wmma

RowCol wmma_dims(WmmaShape s, WmmaMatrix m) {
  const Mnk d = wmma_mnk(s);
  switch (m) {
    case WmmaMatrix::A:
      return {d.m, d.k};
    case WmmaMatrix::B:
      return {d.k, d.n};
    case WmmaMatrix::C:
      return {d.m, d.n};
  }
  return {0, 0};
}

uint32_t wmma_default_stride(WmmaShape s, WmmaMatrix m, Layout layout) {
  const RowCol d = wmma_dims(s, m);
  return static_cast<uint32_t>(layout == Layout::Row ? d.col : d.row);
}

int wmma_regs(WmmaShape s, WmmaMatrix m, ElemType t) {
  if (!wmma_type_ok(s, m, t)) return 0;
  // nvcc gives every f16 multiplicand eight registers, whatever the shape.
  if (m != WmmaMatrix::C && t == ElemType::F16) return 8;
  return wmma_operand(s, m, t).regs;
}

unsigned wmma_fragment_bytes(WmmaShape s, WmmaMatrix m, ElemType t) {
  return (t == ElemType::F64 ? 8u : 4u) * static_cast<unsigned>(wmma_regs(s, m, t));
}

RowCol wmma_element(WmmaShape s, WmmaMatrix m, ElemType t, int lane, int reg, int elem) {
  const Operand op = wmma_operand(s, m, t);
  if (lane < 0 || lane >= kWarpSize || reg < 0 || reg >= wmma_regs(s, m, t) || elem < 0 ||
      elem >= op.per) {
    throw TensorError("wmma_element: lane/reg/elem out of range");
  }
  return coord(op, lane, reg % op.regs, elem);
}

void wmma_load(WmmaShape s, WmmaMatrix m, Layout layout, ElemType t, Addr base, uint32_t stride,
               const ReadFn& read, WarpFrag& out) {
  const Operand op = wmma_operand(s, m, t);
  check_wmma_alignment("wmma.load", t, wmma_fragment_bytes(s, m, t), base, stride);
  const unsigned esize = elem_bytes(t);
  const int nregs = wmma_regs(s, m, t);
  WarpFrag tmp{};
  for (int lane = 0; lane < kWarpSize; ++lane) {
    for (int reg = 0; reg < op.regs; ++reg) {
      uint64_t v = 0;
      for (int e = 0; e < op.per; ++e) {
        v = pack_elem(t, v, e,
                      read(element_addr(layout, base, stride, esize, coord(op, lane, reg, e)),
                           esize));
      }
      tmp[lane][reg] = v;
    }
    for (int reg = op.regs; reg < nregs; ++reg) tmp[lane][reg] = tmp[lane][reg % op.regs];
  }
  for (int lane = 0; lane < kWarpSize; ++lane) {
    for (int reg = 0; reg < nregs; ++reg) out[lane][reg] = tmp[lane][reg];
  }
}

void wmma_store(WmmaShape s, Layout layout, ElemType t, Addr base, uint32_t stride,
                const WarpFrag& d, const WriteFn& write) {
  const Operand op = wmma_operand(s, WmmaMatrix::C, t);
  check_wmma_alignment("wmma.store.d", t, wmma_fragment_bytes(s, WmmaMatrix::C, t), base, stride);
  const unsigned esize = elem_bytes(t);
  for (int lane = 0; lane < kWarpSize; ++lane) {
    for (int reg = 0; reg < op.regs; ++reg) {
      for (int e = 0; e < op.per; ++e) {
        write(element_addr(layout, base, stride, esize, coord(op, lane, reg, e)), esize,
              elem_bits(t, d[lane][reg], e));
      }
    }
  }
}

std::string wmma_mma_unsupported_reason(const WmmaDesc& desc) {
  // Built only for a message: this runs for every executed wmma.mma.
  auto combo = [&desc] {
    return std::string(to_string(desc.shape)) + "." + to_string(desc.d) + "." +
           to_string(desc.ab) + "." + to_string(desc.ab) + "." + to_string(desc.c);
  };
  bool ok;
  switch (desc.shape) {
    case WmmaShape::M16N16K8:
      ok = desc.ab == ElemType::TF32 && desc.c == ElemType::F32 && desc.d == ElemType::F32;
      break;
    case WmmaShape::M8N8K4:
      ok = desc.ab == ElemType::F64 && desc.c == ElemType::F64 && desc.d == ElemType::F64;
      break;
    default:
      if (desc.ab == ElemType::F16) {
        auto fp = [](ElemType t) { return t == ElemType::F16 || t == ElemType::F32; };
        ok = fp(desc.c) && fp(desc.d);
      } else if (desc.ab == ElemType::BF16) {
        ok = desc.c == ElemType::F32 && desc.d == ElemType::F32;
      } else {
        ok = is8(desc.ab) && desc.c == ElemType::S32 && desc.d == ElemType::S32;
      }
      break;
  }
  if (!ok) return combo() + ": not a type combination the PTX ISA defines for this shape";
  if (desc.satfinite && !is8(desc.ab)) return combo() + ": .satfinite applies to integer types only";
  if (desc.rnd != Rnd::RN && desc.ab != ElemType::F64) {
    return combo() + ": a rounding modifier applies to .f64 only";
  }
  return {};
}

void wmma_mma(const WmmaDesc& desc, const WarpFrag& a, const WarpFrag& b, const WarpFrag& c,
              WarpFrag& d) {
  wmma_mma(desc, view(a), view(b), view(c), view(d));
}

void wmma_mma(const WmmaDesc& desc, const FragIn& a, const FragIn& b, const FragIn& c,
              const FragOut& d) {
  const std::string why = wmma_mma_unsupported_reason(desc);
  if (!why.empty()) throw TensorError("wmma.mma: " + why);
  const Mnk s = wmma_mnk(desc.shape);
  compute(s.m, s.n, s.k, wmma_operand(desc.shape, WmmaMatrix::A, desc.ab),
          wmma_operand(desc.shape, WmmaMatrix::B, desc.ab),
          wmma_operand(desc.shape, WmmaMatrix::C, desc.c),
          wmma_operand(desc.shape, WmmaMatrix::C, desc.d), desc.satfinite, desc.rnd, desc.accum, a,
          b, c, d);
}

uint32_t truncate_accumulate_f32(const double* x, int n, int bits) {
  return truncated_sum_f32(x, n, bits);
}

}  // namespace emu::tensor
