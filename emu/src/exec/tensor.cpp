// emu::tensor - see tensor.h for the contract and the emulator's choices.
#include "tensor.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace emu::tensor {

namespace {

// ---------------------------------------------------------------------------------------------
// Scalar conversions.

// Rounds a non-negative finite double to the nearest integer, ties to even, without depending
// on the floating-point environment's rounding mode.
double round_half_even(double v) {
  double r = std::floor(v);
  double diff = v - r;  // exact: v and r are within one unit of each other
  if (diff > 0.5 || (diff == 0.5 && std::fmod(r, 2.0) != 0.0)) r += 1.0;
  return r;
}

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
uint32_t set_half(uint32_t reg, int half, uint16_t v) {
  return half ? ((reg & 0x0000ffffu) | (static_cast<uint32_t>(v) << 16))
              : ((reg & 0xffff0000u) | v);
}

bool is16(ElemType t) {
  return t == ElemType::F16 || t == ElemType::BF16;
}
unsigned elem_bytes(ElemType t) {
  return is16(t) ? 2u : 4u;
}

// The value of one element of an operand register.
double decode(ElemType t, uint32_t reg, int half) {
  switch (t) {
    case ElemType::F16:
      return f16_to_double(half_of(reg, half));
    case ElemType::BF16:
      return bf16_to_double(half_of(reg, half));
    case ElemType::TF32:
      return f32_bits_to_double(reg & 0xffffe000u);  // tf32: the low 13 bits are not used
    case ElemType::F32:
      return f32_bits_to_double(reg);
  }
  return 0.0;
}

// Writes value v (already rounded to t by the caller's choice of encoder) into a register.
uint32_t encode_into(ElemType t, uint32_t reg, int half, double v) {
  if (t == ElemType::F16) return set_half(reg, half, double_to_f16(v));
  return double_to_f32_bits(v);  // f32 destinations only (bf16/tf32 are never destinations)
}

// ---------------------------------------------------------------------------------------------
// Operand layouts. An operand is a rows x cols matrix spread over `regs` registers per lane;
// 16-bit element types put two elements in each register (half 0 = low bits).

using CoordFn = RowCol (*)(int lane, int reg, int half);

struct Operand {
  int rows;
  int cols;
  int regs;       // registers per lane that hold distinct elements
  int elems_per;  // elements per register: 2 for 16-bit types, 1 for 32-bit
  CoordFn coord;
};

int gid(int lane) {
  return lane >> 2;
}  // groupID
int tig(int lane) {
  return lane & 3;
}  // threadID_in_group

// mma.m16n8k16, A 16x16 f16/bf16: registers {a0,a1} {a2,a3} {a4,a5} {a6,a7}.
RowCol mma16816_a16(int lane, int reg, int half) {
  return {gid(lane) + 8 * (reg & 1), 2 * tig(lane) + half + 8 * (reg >> 1)};
}
// mma.m16n8k16, B 16x8 f16/bf16: registers {b0,b1} {b2,b3}.
RowCol mma16816_b16(int lane, int reg, int half) {
  return {2 * tig(lane) + half + 8 * reg, gid(lane)};
}
// mma.m16n8k8, A 16x8 f16/bf16: registers {a0,a1} {a2,a3}.
RowCol mma1688_a16(int lane, int reg, int half) {
  return {gid(lane) + 8 * reg, 2 * tig(lane) + half};
}
// mma.m16n8k8, B 8x8 f16/bf16: register {b0,b1}.
RowCol mma1688_b16(int lane, int /*reg*/, int half) {
  return {2 * tig(lane) + half, gid(lane)};
}
// mma.m16n8k8, A 16x8 tf32: registers a0..a3.
RowCol mma1688_atf32(int lane, int reg, int /*half*/) {
  return {gid(lane) + 8 * (reg & 1), tig(lane) + 4 * (reg >> 1)};
}
// mma.m16n8k8, B 8x8 tf32: registers b0, b1.
RowCol mma1688_btf32(int lane, int reg, int /*half*/) {
  return {tig(lane) + 4 * reg, gid(lane)};
}
// C/D 16x8 f32 (both shapes): registers c0..c3.
RowCol mma_c32(int lane, int reg, int /*half*/) {
  return {gid(lane) + 8 * (reg >> 1), 2 * tig(lane) + (reg & 1)};
}
// C/D 16x8 f16 (both shapes): registers {c0,c1} {c2,c3}.
RowCol mma_c16(int lane, int reg, int half) {
  return {gid(lane) + 8 * reg, 2 * tig(lane) + half};
}

// wmma.m16n16k16 (this emulator's layout, documented in tensor.h).
RowCol wmma_a16(int lane, int reg, int half) {
  return mma16816_a16(lane, reg & 3, half);
}
RowCol wmma_b16(int lane, int reg, int half) {
  reg &= 3;
  return {2 * tig(lane) + half + 8 * (reg & 1), gid(lane) + 8 * (reg >> 1)};
}
RowCol wmma_c32(int lane, int reg, int /*half*/) {
  int nb = reg >> 2;
  RowCol rc = mma_c32(lane, reg & 3, 0);
  rc.col += 8 * nb;
  return rc;
}
RowCol wmma_c16(int lane, int reg, int half) {
  return wmma_c32(lane, 2 * reg + half, 0);
}

constexpr int kMaxDim = 16;
using Dense = std::array<std::array<double, kMaxDim>, kMaxDim>;

// Collects the matrix an operand fragment holds.
void gather(const Operand& op, ElemType t, const WarpFrag& frag, Dense& m) {
  for (int lane = 0; lane < kWarpSize; ++lane) {
    for (int reg = 0; reg < op.regs; ++reg) {
      for (int h = 0; h < op.elems_per; ++h) {
        RowCol rc = op.coord(lane, reg, h);
        m[rc.row][rc.col] = decode(t, frag[lane][reg], h);
      }
    }
  }
}

// Distributes a matrix into fragment registers (rounding each element to t).
void scatter(const Operand& op, ElemType t, const Dense& m, WarpFrag& frag) {
  for (int lane = 0; lane < kWarpSize; ++lane) {
    for (int reg = 0; reg < op.regs; ++reg) {
      uint32_t v = frag[lane][reg];
      for (int h = 0; h < op.elems_per; ++h) {
        RowCol rc = op.coord(lane, reg, h);
        v = encode_into(t, v, h, m[rc.row][rc.col]);
      }
      frag[lane][reg] = v;
    }
  }
}

// D = C + A * B over dense matrices, products exact, sum in double, in the order C, k = 0, 1, ...
void matmul_acc(int M, int N, int K, const Dense& a, const Dense& b, const Dense& c, Dense& d) {
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double s = c[i][j];
      for (int k = 0; k < K; ++k) s += a[i][k] * b[k][j];
      d[i][j] = s;
    }
  }
}

Operand mma_operand_a(const MmaDesc& d) {
  if (d.shape == MmaShape::M16N8K16) return {16, 16, 4, 2, mma16816_a16};
  if (d.ab == ElemType::TF32) return {16, 8, 4, 1, mma1688_atf32};
  return {16, 8, 2, 2, mma1688_a16};
}
Operand mma_operand_b(const MmaDesc& d) {
  if (d.shape == MmaShape::M16N8K16) return {16, 8, 2, 2, mma16816_b16};
  if (d.ab == ElemType::TF32) return {8, 8, 2, 1, mma1688_btf32};
  return {8, 8, 1, 2, mma1688_b16};
}
Operand mma_operand_acc(ElemType t) {
  if (t == ElemType::F16) return {16, 8, 2, 2, mma_c16};
  return {16, 8, 4, 1, mma_c32};
}

void require_mma(const MmaDesc& desc) {
  std::string why = mma_unsupported_reason(desc);
  if (!why.empty()) throw TensorError("mma.sync: " + why);
}

Operand wmma_operand(WmmaMatrix m, ElemType t) {
  switch (m) {
    case WmmaMatrix::A:
      if (is16(t)) return {16, 16, 4, 2, wmma_a16};
      break;
    case WmmaMatrix::B:
      if (is16(t)) return {16, 16, 4, 2, wmma_b16};
      break;
    case WmmaMatrix::C:
      if (t == ElemType::F32) return {16, 16, 8, 1, wmma_c32};
      if (t == ElemType::F16) return {16, 16, 4, 2, wmma_c16};
      break;
  }
  throw TensorError(std::string("wmma.m16n16k16: unsupported ") +
                    (m == WmmaMatrix::A   ? "A"
                     : m == WmmaMatrix::B ? "B"
                                          : "C/D") +
                    " element type " + to_string(t));
}

Addr element_addr(Layout layout, Addr base, uint32_t stride, unsigned esize, RowCol rc) {
  uint64_t idx = layout == Layout::Row
                     ? static_cast<uint64_t>(rc.row) * stride + static_cast<uint64_t>(rc.col)
                     : static_cast<uint64_t>(rc.col) * stride + static_cast<uint64_t>(rc.row);
  return base + idx * esize;
}

// The CUDA programming guide's rule for load_matrix_sync/store_matrix_sync: the pointer is
// 256-bit aligned and the stride (ldm) a multiple of 16 bytes (8 halves, 4 floats).
void check_wmma_alignment(const char* what, WmmaMatrix m, ElemType t, Addr base, uint32_t stride) {
  (void)m;
  const uint64_t stride_bytes = static_cast<uint64_t>(stride) * elem_bytes(t);
  if (base % 32 != 0 || stride_bytes % 16 != 0) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "%s: the base address 0x%llx must be 32-byte aligned and the stride %u elements "
                  "(%llu bytes) a multiple of 16 bytes",
                  what, static_cast<unsigned long long>(base), stride,
                  static_cast<unsigned long long>(stride_bytes));
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
  }
  return "?";
}

double f16_to_double(uint16_t bits) {
  const int exp = (bits >> 10) & 0x1f;
  const int man = bits & 0x3ff;
  double v;
  if (exp == 0) {
    v = std::ldexp(static_cast<double>(man), -24);
  } else if (exp == 31) {
    v = man ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else {
    v = std::ldexp(static_cast<double>(man + 1024), exp - 25);
  }
  return (bits & 0x8000) ? -v : v;
}

double bf16_to_double(uint16_t bits) {
  return f32_bits_to_double(static_cast<uint32_t>(bits) << 16);
}

double f32_bits_to_double(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return static_cast<double>(f);
}

uint16_t double_to_f16(double v) {
  if (std::isnan(v)) return 0x7fff;
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  double a = std::fabs(v);
  if (a >= 65520.0) return sign | 0x7c00;  // at or above the midpoint of 65504 and 2^16: inf
  if (a < std::ldexp(1.0, -14)) {
    // Subnormal (or zero) result: in units of 2^-24. 1024 units is the smallest normal, whose
    // encoding 0x0400 is exactly 1024, so rounding up into the normal range needs no special case.
    return sign | static_cast<uint16_t>(round_half_even(a * 16777216.0));
  }
  int e2;
  std::frexp(a, &e2);                                   // a = m * 2^e2, m in [0.5, 1)
  int e = e2 - 1;                                       // a in [2^e, 2^(e+1)), -14 <= e <= 15
  double sig = round_half_even(std::ldexp(a, 10 - e));  // in [1024, 2048]
  if (sig == 2048.0) {
    sig = 1024.0;
    ++e;
  }
  if (e > 15) return sign | 0x7c00;
  return sign | static_cast<uint16_t>(((e + 15) << 10) | (static_cast<int>(sig) - 1024));
}

uint32_t double_to_f32_bits(double v) {
  if (std::isnan(v)) return 0x7fffffffu;
  float f = static_cast<float>(v);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

// ---------------------------------------------------------------------------------------------
// ldmatrix

void ldmatrix(int num, bool trans, const std::array<Addr, kWarpSize>& row_addr, const ReadFn& read,
              WarpFrag& out) {
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
  // m[j][r][c]: element c of row r of matrix j, as stored.
  uint16_t m[4][8][8];
  for (int j = 0; j < num; ++j) {
    for (int r = 0; r < 8; ++r) {
      for (int c = 0; c < 8; ++c) {
        m[j][r][c] = static_cast<uint16_t>(read(row_addr[8 * j + r] + 2 * c, 2) & 0xffffu);
      }
    }
  }
  for (int lane = 0; lane < kWarpSize; ++lane) {
    const int g = gid(lane), t = tig(lane);
    for (int j = 0; j < num; ++j) {
      out[lane][j] = trans ? pack16(m[j][2 * t][g], m[j][2 * t + 1][g])
                           : pack16(m[j][g][2 * t], m[j][g][2 * t + 1]);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// mma.sync

std::string mma_unsupported_reason(const MmaDesc& desc) {
  const bool acc_ok = [&] {
    auto fp = [](ElemType t) { return t == ElemType::F16 || t == ElemType::F32; };
    if (desc.ab == ElemType::F16) return fp(desc.c) && fp(desc.d);
    return desc.c == ElemType::F32 && desc.d == ElemType::F32;
  }();
  const char* shape = desc.shape == MmaShape::M16N8K16 ? "m16n8k16" : "m16n8k8";
  std::string combo = std::string(shape) + "." + to_string(desc.d) + "." + to_string(desc.ab) +
                      "." + to_string(desc.ab) + "." + to_string(desc.c);
  if (desc.ab == ElemType::F32) return combo + ": .f32 is not a multiplicand type";
  if (desc.shape == MmaShape::M16N8K16 && desc.ab == ElemType::TF32) {
    return combo + ": tf32 is supported for m16n8k8 only here";
  }
  if (!acc_ok) {
    return combo + (desc.ab == ElemType::F16 ? ": f16 multiplicands need f16 or f32 accumulators"
                                             : ": bf16/tf32 multiplicands need f32 C and D");
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
  return mma_operand_acc(desc.c).regs;
}
int mma_regs_d(const MmaDesc& desc) {
  return mma_operand_acc(desc.d).regs;
}

void mma_sync(const MmaDesc& desc, const WarpFrag& a, const WarpFrag& b, const WarpFrag& c,
              WarpFrag& d) {
  require_mma(desc);
  const Operand oa = mma_operand_a(desc), ob = mma_operand_b(desc);
  Dense ma{}, mb{}, mc{}, md{};
  gather(oa, desc.ab, a, ma);
  gather(ob, desc.ab, b, mb);
  gather(mma_operand_acc(desc.c), desc.c, c, mc);
  matmul_acc(oa.rows, ob.cols, oa.cols, ma, mb, mc, md);
  scatter(mma_operand_acc(desc.d), desc.d, md, d);  // c was fully read: d may alias it
}

// ---------------------------------------------------------------------------------------------
// wmma

int wmma_regs(WmmaMatrix m, ElemType t) {
  switch (m) {
    case WmmaMatrix::A:
    case WmmaMatrix::B:
      return t == ElemType::F16 ? 8 : t == ElemType::BF16 ? 4 : 0;
    case WmmaMatrix::C:
      return t == ElemType::F32 ? 8 : t == ElemType::F16 ? 4 : 0;
  }
  return 0;
}

unsigned wmma_fragment_bytes(WmmaMatrix m, ElemType t) {
  return 4u * wmma_regs(m, t);
}

RowCol wmma_element(WmmaMatrix m, ElemType t, int lane, int reg, int half) {
  const Operand op = wmma_operand(m, t);
  if (lane < 0 || lane >= kWarpSize || reg < 0 || reg >= wmma_regs(m, t) || half < 0 ||
      half >= op.elems_per) {
    throw TensorError("wmma_element: lane/reg/half out of range");
  }
  return op.coord(lane, reg, half);
}

void wmma_load(WmmaMatrix m, Layout layout, ElemType t, Addr base, uint32_t stride,
               const ReadFn& read, WarpFrag& out) {
  const Operand op = wmma_operand(m, t);
  check_wmma_alignment("wmma.load", m, t, base, stride);
  const unsigned esize = elem_bytes(t);
  const int nregs = wmma_regs(m, t);
  WarpFrag tmp{};
  for (int lane = 0; lane < kWarpSize; ++lane) {
    for (int reg = 0; reg < op.regs; ++reg) {
      uint32_t v = 0;
      for (int h = 0; h < op.elems_per; ++h) {
        uint32_t e = read(element_addr(layout, base, stride, esize, op.coord(lane, reg, h)), esize);
        v |= esize == 2 ? (e & 0xffffu) << (16 * h) : e;
      }
      tmp[lane][reg] = v;
    }
    for (int reg = op.regs; reg < nregs; ++reg) tmp[lane][reg] = tmp[lane][reg - op.regs];
  }
  for (int lane = 0; lane < kWarpSize; ++lane) {
    for (int reg = 0; reg < nregs; ++reg) out[lane][reg] = tmp[lane][reg];
  }
}

void wmma_store(Layout layout, ElemType t, Addr base, uint32_t stride, const WarpFrag& d,
                const WriteFn& write) {
  const Operand op = wmma_operand(WmmaMatrix::C, t);
  check_wmma_alignment("wmma.store.d", WmmaMatrix::C, t, base, stride);
  const unsigned esize = elem_bytes(t);
  for (int lane = 0; lane < kWarpSize; ++lane) {
    for (int reg = 0; reg < op.regs; ++reg) {
      for (int h = 0; h < op.elems_per; ++h) {
        uint32_t v = esize == 2 ? half_of(d[lane][reg], h) : d[lane][reg];
        write(element_addr(layout, base, stride, esize, op.coord(lane, reg, h)), esize, v);
      }
    }
  }
}

void wmma_mma(ElemType ab, ElemType ctype, ElemType dtype, const WarpFrag& a, const WarpFrag& b,
              const WarpFrag& c, WarpFrag& d) {
  auto fp = [](ElemType t) { return t == ElemType::F16 || t == ElemType::F32; };
  const bool ok = ab == ElemType::F16    ? fp(ctype) && fp(dtype)
                  : ab == ElemType::BF16 ? ctype == ElemType::F32 && dtype == ElemType::F32
                                         : false;
  if (!ok) {
    throw TensorError(std::string("wmma.mma.m16n16k16: unsupported combination ") +
                      to_string(dtype) + "." + to_string(ab) + "." + to_string(ab) + "." +
                      to_string(ctype));
  }
  Dense ma{}, mb{}, mc{}, md{};
  gather(wmma_operand(WmmaMatrix::A, ab), ab, a, ma);
  gather(wmma_operand(WmmaMatrix::B, ab), ab, b, mb);
  gather(wmma_operand(WmmaMatrix::C, ctype), ctype, c, mc);
  matmul_acc(16, 16, 16, ma, mb, mc, md);
  scatter(wmma_operand(WmmaMatrix::C, dtype), dtype, md, d);
}

}  // namespace emu::tensor
