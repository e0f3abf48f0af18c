// Tests of emu::tensor (ldmatrix, mma.sync, wmma) against the PTX ISA's fragment layouts.
//
// The layouts below are transcribed independently from the ISA's "Matrix Fragments for
// mma.m16n8k8" and "... mma.m16n8k16 with floating point type" sections (element index i of a_i,
// b_i, c_i, in the ISA's own form) and from the ldmatrix section; they do not use the
// implementation's layout code. Each mma test puts random matrices into lane registers with these
// formulas, runs the emulator, gathers D the same way and compares it with a plain double matmul.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "../src/exec/tensor.h"

namespace T = emu::tensor;
using T::ElemType;
using T::MmaShape;
using T::WarpFrag;

namespace {

// ---------------------------------------------------------------------------------------------
// Independent scalar helpers.

uint32_t f32_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float bits_f32(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
// IEEE binary16: sign, 5-bit exponent (bias 15), 10-bit fraction.
double ref_f16(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 31, f = h & 1023;
  double mag = e == 0 ? f * std::pow(2.0, -24) : (1.0 + f / 1024.0) * std::pow(2.0, e - 15);
  return s ? -mag : mag;
}
// bfloat16: the upper half of an f32.
double ref_bf16(uint16_t h) {
  return bits_f32(static_cast<uint32_t>(h) << 16);
}
// e4m3: sign, 4-bit exponent (bias 7), 3-bit fraction; exponent 0 is subnormal; S.1111.111 is
// the only NaN, there is no infinity (so S.1111.110 = 448 is the largest value).
double ref_e4m3(uint8_t b) {
  int s = b >> 7, e = (b >> 3) & 15, f = b & 7;
  if (e == 15 && f == 7) return NAN;
  double mag = e == 0 ? f / 8.0 * std::pow(2.0, -6) : (1.0 + f / 8.0) * std::pow(2.0, e - 7);
  return s ? -mag : mag;
}
// e5m2: sign, 5-bit exponent (bias 15), 2-bit fraction, IEEE-like (exponent 31: inf or NaN).
double ref_e5m2(uint8_t b) {
  int s = b >> 7, e = (b >> 2) & 31, f = b & 3;
  if (e == 31) return f ? NAN : (s ? -INFINITY : INFINITY);
  double mag = e == 0 ? f / 4.0 * std::pow(2.0, -14) : (1.0 + f / 4.0) * std::pow(2.0, e - 15);
  return s ? -mag : mag;
}

// Random elements. Values are kept in a moderate range so that sums stay far from overflow.
uint16_t rand_f16(std::mt19937& rng, bool small_int) {
  if (small_int) {  // integers -4..4 (exact in every type, exact products and sums)
    int v = static_cast<int>(rng() % 9) - 4;
    static const uint16_t tab[9] = {0xc400, 0xc200, 0xc000, 0xbc00, 0x0000,
                                    0x3c00, 0x4000, 0x4200, 0x4400};
    return tab[v + 4];
  }
  uint16_t sign = (rng() & 1) << 15;
  uint16_t exp = 12 + rng() % 6;  // 2^-3 .. 2^2
  uint16_t frac = rng() & 1023;
  return sign | (exp << 10) | frac;
}
uint16_t rand_bf16(std::mt19937& rng, bool small_int) {
  if (small_int) return static_cast<uint16_t>(f32_bits(static_cast<float>(rng() % 9) - 4.f) >> 16);
  uint16_t sign = (rng() & 1) << 15;
  uint16_t exp = 124 + rng() % 6;
  uint16_t frac = rng() & 127;
  return sign | (exp << 7) | frac;
}
uint32_t rand_tf32(std::mt19937& rng, bool small_int) {
  if (small_int) return f32_bits(static_cast<float>(rng() % 9) - 4.f);
  uint32_t sign = (rng() & 1u) << 31;
  uint32_t exp = 124 + rng() % 6;
  uint32_t frac = (rng() & 1023u) << 13;  // a proper tf32: low 13 bits zero
  return sign | (exp << 23) | frac;
}
uint32_t rand_f32(std::mt19937& rng, bool small_int) {
  if (small_int) return f32_bits(static_cast<float>(rng() % 9) - 4.f);
  std::uniform_real_distribution<float> u(-4.f, 4.f);
  return f32_bits(u(rng));
}

// ---------------------------------------------------------------------------------------------
// The ISA's fragment layouts, element index i as in a_i / b_i / c_i.

struct RC {
  int row, col;
};
int groupID(int lane) {
  return lane >> 2;
}
int threadID_in_group(int lane) {
  return lane % 4;
}

// mma.m16n8k16 A, .f16/.bf16 (a0..a7):
//   row = groupID for ai where 0 <= i < 2 || 4 <= i < 6; groupID + 8 otherwise
//   col = (threadID_in_group * 2) + (i & 0x1) for i < 4; ... + 8 for i >= 4
RC isa_m16n8k16_a(int lane, int i) {
  int row = ((0 <= i && i < 2) || (4 <= i && i < 6)) ? groupID(lane) : groupID(lane) + 8;
  int col =
      i < 4 ? threadID_in_group(lane) * 2 + (i & 0x1) : threadID_in_group(lane) * 2 + (i & 0x1) + 8;
  return {row, col};
}
// mma.m16n8k16 B, .f16/.bf16 (b0..b3):
//   row = (threadID_in_group * 2) + (i & 0x1) for i < 2; ... + 8 for i >= 2; col = groupID
RC isa_m16n8k16_b(int lane, int i) {
  int row =
      i < 2 ? threadID_in_group(lane) * 2 + (i & 0x1) : threadID_in_group(lane) * 2 + (i & 0x1) + 8;
  return {row, groupID(lane)};
}
// Accumulators C/D of both m16n8k8 and m16n8k16, .f32 (c0..c3 in four registers) and .f16
// (c0..c3 in two f16x2 registers):
//   row = groupID for ci where i < 2; groupID + 8 for i >= 2
//   col = (threadID_in_group * 2) + (i & 0x1)
RC isa_acc(int lane, int i) {
  int row = i < 2 ? groupID(lane) : groupID(lane) + 8;
  return {row, threadID_in_group(lane) * 2 + (i & 0x1)};
}
// mma.m16n8k8 A, .f16/.bf16 (a0..a3): row = groupID for a0, a1; groupID + 8 for a2, a3;
//   col = threadID_in_group * 2 + (i & 0x1)
RC isa_m16n8k8_a16(int lane, int i) {
  int row = (i == 0 || i == 1) ? groupID(lane) : groupID(lane) + 8;
  return {row, threadID_in_group(lane) * 2 + (i & 0x1)};
}
// mma.m16n8k8 A, .tf32 (a0..a3): row = groupID for a0, a2; groupID + 8 for a1, a3;
//   col = threadID_in_group for a0, a1; threadID_in_group + 4 for a2, a3
RC isa_m16n8k8_atf32(int lane, int i) {
  int row = (i == 0 || i == 2) ? groupID(lane) : groupID(lane) + 8;
  int col = (i == 0 || i == 1) ? threadID_in_group(lane) : threadID_in_group(lane) + 4;
  return {row, col};
}
// mma.m16n8k8 B, .f16/.bf16 (b0, b1): row = (threadID_in_group * 2) + i; col = groupID
RC isa_m16n8k8_b16(int lane, int i) {
  return {threadID_in_group(lane) * 2 + i, groupID(lane)};
}
// mma.m16n8k8 B, .tf32 (b0, b1): row = threadID_in_group for b0, + 4 for b1; col = groupID
RC isa_m16n8k8_btf32(int lane, int i) {
  return {i == 0 ? threadID_in_group(lane) : threadID_in_group(lane) + 4, groupID(lane)};
}

using LayoutFn = RC (*)(int lane, int i);

// A matrix of raw element bits (16-bit types in the low half) with its type.
struct Mat {
  int rows = 0, cols = 0;
  ElemType type = ElemType::F32;
  std::vector<uint64_t> bits;  // row-major
  uint64_t& at(int r, int c) { return bits[r * cols + c]; }
  uint64_t at(int r, int c) const { return bits[r * cols + c]; }
  double val(int r, int c) const {
    uint64_t b = at(r, c);
    switch (type) {
      case ElemType::F16:
        return ref_f16(static_cast<uint16_t>(b));
      case ElemType::BF16:
        return ref_bf16(static_cast<uint16_t>(b));
      case ElemType::TF32:
      case ElemType::F32:
        return bits_f32(static_cast<uint32_t>(b));
      case ElemType::S8:
        return static_cast<int8_t>(b);
      case ElemType::U8:
        return static_cast<uint8_t>(b);
      case ElemType::S32:
        return static_cast<int32_t>(b);
      case ElemType::F64: {
        double d;
        std::memcpy(&d, &b, 8);
        return d;
      }
      case ElemType::E4M3:
        return ref_e4m3(static_cast<uint8_t>(b));
      case ElemType::E5M2:
        return ref_e5m2(static_cast<uint8_t>(b));
    }
    return 0;
  }
};

// Random fp8 codes: small integers -4..4, or a random sign and fraction with an exponent of
// 2^-3 .. 2^2 (the sums stay far from the f16 range's end).
uint8_t rand_fp8(ElemType t, std::mt19937& rng, bool small_int) {
  const bool e4 = t == ElemType::E4M3;
  if (small_int) {  // the code of an integer -4..4, found through the reference decoder
    const double v = static_cast<double>(static_cast<int>(rng() % 9) - 4);
    for (int c = 0; c < 256; ++c) {
      if ((e4 ? ref_e4m3(static_cast<uint8_t>(c)) : ref_e5m2(static_cast<uint8_t>(c))) == v) {
        return static_cast<uint8_t>(c);
      }
    }
  }
  const uint8_t sign = (rng() & 1) << 7;
  if (e4) return sign | static_cast<uint8_t>((4 + rng() % 6) << 3) | (rng() & 7);
  return sign | static_cast<uint8_t>((12 + rng() % 6) << 2) | (rng() & 3);
}

Mat random_mat(int rows, int cols, ElemType t, std::mt19937& rng, bool small_int) {
  Mat m;
  m.rows = rows;
  m.cols = cols;
  m.type = t;
  m.bits.resize(rows * cols);
  for (auto& b : m.bits) {
    switch (t) {
      case ElemType::F16:
        b = rand_f16(rng, small_int);
        break;
      case ElemType::BF16:
        b = rand_bf16(rng, small_int);
        break;
      case ElemType::TF32:
        b = rand_tf32(rng, small_int);
        break;
      case ElemType::F32:
        b = rand_f32(rng, small_int);
        break;
      case ElemType::S8:  // the whole range: the products and sums of 8-bit types are exact
        b = rng() & 0xffu;
        break;
      case ElemType::U8:
        b = rng() & 0xffu;
        break;
      case ElemType::S32:
        b = static_cast<uint32_t>(static_cast<int32_t>(rng() % 2000001) - 1000000);
        break;
      case ElemType::F64: {
        double v = small_int ? static_cast<double>(static_cast<int>(rng() % 9) - 4)
                             : std::uniform_real_distribution<double>(-4, 4)(rng);
        std::memcpy(&b, &v, 8);
        break;
      }
      case ElemType::E4M3:
      case ElemType::E5M2:
        b = rand_fp8(t, rng, small_int);
        break;
    }
  }
  return m;
}

bool is16(ElemType t) {
  return t == ElemType::F16 || t == ElemType::BF16;
}
bool is8(ElemType t) {
  return t == ElemType::S8 || t == ElemType::U8 || t == ElemType::E4M3 || t == ElemType::E5M2;
}
// Elements per .b32 register ("containing four .s8 elements", "four .e4m3 elements", "two .f16
// elements", ...).
int per_reg(ElemType t) {
  return is8(t) ? 4 : is16(t) ? 2 : 1;
}
unsigned width_bits(ElemType t) {
  return is8(t) ? 8 : is16(t) ? 16 : t == ElemType::F64 ? 64 : 32;
}

// Element i of a lane's fragment: 16-bit types pack elements i and i+1 (i even) into register
// i/2, lower index in the low half ("Elements (low to high)"); 32-bit types use register i.
WarpFrag distribute(const Mat& m, LayoutFn layout, int elems_per_lane) {
  WarpFrag f{};
  std::set<std::pair<int, int>> seen;
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < elems_per_lane; ++i) {
      RC rc = layout(lane, i);
      EXPECT_TRUE(rc.row >= 0 && rc.row < m.rows && rc.col >= 0 && rc.col < m.cols);
      EXPECT_TRUE(seen.insert({rc.row, rc.col}).second) << "test layout holds an element twice";
      const uint64_t v = m.at(rc.row, rc.col);
      const int per = per_reg(m.type);
      const unsigned w = width_bits(m.type);
      const uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
      f[lane][i / per] |= (v & mask) << (w * (i % per));
    }
  }
  EXPECT_EQ(static_cast<int>(seen.size()), m.rows * m.cols) << "test layout misses elements";
  return f;
}

Mat collect(const WarpFrag& f, LayoutFn layout, int elems_per_lane, int rows, int cols,
            ElemType t) {
  Mat m;
  m.rows = rows;
  m.cols = cols;
  m.type = t;
  m.bits.assign(rows * cols, 0);
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < elems_per_lane; ++i) {
      RC rc = layout(lane, i);
      const int per = per_reg(t);
      const unsigned w = width_bits(t);
      const uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
      m.at(rc.row, rc.col) = (f[lane][i / per] >> (w * (i % per))) & mask;
    }
  }
  return m;
}

// D = C + A B in double; also the sum of |terms| for the tolerance.
void naive(const Mat& a, const Mat& b, const Mat& c, std::vector<double>& ref,
           std::vector<double>& mag) {
  ref.assign(a.rows * b.cols, 0);
  mag.assign(a.rows * b.cols, 0);
  for (int i = 0; i < a.rows; ++i) {
    for (int j = 0; j < b.cols; ++j) {
      double s = c.val(i, j), m = std::fabs(s);
      for (int k = 0; k < a.cols; ++k) {
        s += a.val(i, k) * b.val(k, j);
        m += std::fabs(a.val(i, k) * b.val(k, j));
      }
      ref[i * b.cols + j] = s;
      mag[i * b.cols + j] = m;
    }
  }
}

// exact: every input a small integer, so the result is exact in every destination type.
void expect_close(const Mat& d, const std::vector<double>& ref, const std::vector<double>& mag,
                  bool exact, const std::string& what) {
  int bad = 0;
  for (int i = 0; i < d.rows; ++i) {
    for (int j = 0; j < d.cols; ++j) {
      double got = d.val(i, j), want = ref[i * d.cols + j];
      double tol;
      if (exact) {
        tol = 0;
      } else if (d.type == ElemType::F32) {
        tol = std::ldexp(std::fabs(want), -24) + 1e-9 * mag[i * d.cols + j];
      } else {  // f16: half an ulp of f16, plus the f16 subnormal spacing
        tol = std::ldexp(std::fabs(want), -11) + std::ldexp(1.0, -25) + 1e-9 * mag[i * d.cols + j];
      }
      if (!(std::fabs(got - want) <= tol) && bad++ < 5) {
        ADD_FAILURE() << what << ": D[" << i << "][" << j << "] = " << got << ", want " << want
                      << " (tol " << tol << ")";
      }
    }
  }
  EXPECT_EQ(bad, 0) << what;
}

struct MmaCase {
  MmaShape shape;
  ElemType ab, c, d;
};

// The descriptor of an mma whose A and B share one type.
T::MmaDesc desc4(MmaShape shape, ElemType ab, ElemType c, ElemType d) {
  T::MmaDesc desc;
  desc.shape = shape;
  desc.a = desc.b = ab;
  desc.c = c;
  desc.d = d;
  return desc;
}

std::string name(const MmaCase& mc) {
  return std::string(mc.shape == MmaShape::M16N8K16 ? "m16n8k16" : "m16n8k8") + "." +
         T::to_string(mc.d) + "." + T::to_string(mc.ab) + "." + T::to_string(mc.ab) + "." +
         T::to_string(mc.c);
}

void run_mma_case(const MmaCase& mc, uint32_t seed, bool small_int, bool alias_cd) {
  std::mt19937 rng(seed);
  const bool k16 = mc.shape == MmaShape::M16N8K16;
  const int K = k16 ? 16 : 8;
  LayoutFn la, lb;
  int na, nb;  // elements per lane
  if (k16) {
    la = isa_m16n8k16_a, na = 8, lb = isa_m16n8k16_b, nb = 4;
  } else if (mc.ab == ElemType::TF32) {
    la = isa_m16n8k8_atf32, na = 4, lb = isa_m16n8k8_btf32, nb = 2;
  } else {
    la = isa_m16n8k8_a16, na = 4, lb = isa_m16n8k8_b16, nb = 2;
  }
  Mat A = random_mat(16, K, mc.ab, rng, small_int);
  Mat B = random_mat(K, 8, mc.ab, rng, small_int);
  Mat C = random_mat(16, 8, mc.c, rng, small_int);
  WarpFrag fa = distribute(A, la, na), fb = distribute(B, lb, nb), fc = distribute(C, isa_acc, 4);

  T::MmaDesc desc = desc4(mc.shape, mc.ab, mc.c, mc.d);
  ASSERT_EQ(T::mma_unsupported_reason(desc), "") << name(mc);
  // Register counts from the ISA's tables.
  EXPECT_EQ(T::mma_regs_a(desc), is16(mc.ab) ? na / 2 : na) << name(mc);
  EXPECT_EQ(T::mma_regs_b(desc), is16(mc.ab) ? nb / 2 : nb) << name(mc);
  EXPECT_EQ(T::mma_regs_c(desc), mc.c == ElemType::F16 ? 2 : 4) << name(mc);
  EXPECT_EQ(T::mma_regs_d(desc), mc.d == ElemType::F16 ? 2 : 4) << name(mc);

  WarpFrag fd;
  const int nd = T::mma_regs_d(desc);
  if (alias_cd) {
    ASSERT_EQ(mc.c, mc.d);
    fd = fc;
    T::mma_sync(desc, fa, fb, fd, fd);
  } else {
    for (auto& lane : fd) lane.fill(0xdeadbeefu);
    T::mma_sync(desc, fa, fb, fc, fd);
    for (int lane = 0; lane < 32; ++lane) {
      for (int r = nd; r < T::kMaxFragRegs; ++r) {
        ASSERT_EQ(fd[lane][r], 0xdeadbeefu) << name(mc) << ": register beyond D written";
      }
    }
  }
  Mat D = collect(fd, isa_acc, 4, 16, 8, mc.d);
  std::vector<double> ref, mag;
  naive(A, B, C, ref, mag);
  expect_close(D, ref, mag, small_int, name(mc) + (small_int ? " (integers)" : " (random)"));
}

const MmaCase kMmaCases[] = {
    {MmaShape::M16N8K16, ElemType::F16, ElemType::F32, ElemType::F32},
    {MmaShape::M16N8K16, ElemType::BF16, ElemType::F32, ElemType::F32},
    {MmaShape::M16N8K16, ElemType::F16, ElemType::F16, ElemType::F16},
    {MmaShape::M16N8K16, ElemType::F16, ElemType::F16, ElemType::F32},
    {MmaShape::M16N8K16, ElemType::F16, ElemType::F32, ElemType::F16},
    {MmaShape::M16N8K8, ElemType::F16, ElemType::F32, ElemType::F32},
    {MmaShape::M16N8K8, ElemType::F16, ElemType::F16, ElemType::F16},
    {MmaShape::M16N8K8, ElemType::BF16, ElemType::F32, ElemType::F32},
    {MmaShape::M16N8K8, ElemType::TF32, ElemType::F32, ElemType::F32},
};

// ---------------------------------------------------------------------------------------------
// Memory for ldmatrix and wmma: a byte array with bounds-checked little-endian access.

struct Memory {
  std::vector<uint8_t> bytes;
  int reads = 0;
  std::map<uint64_t, int> writes;  // address -> count
  explicit Memory(size_t n) : bytes(n, 0) {}
  T::ReadFn reader() {
    return [this](T::Addr addr, unsigned size) -> uint64_t {
      if (size != 1 && size != 2 && size != 4 && size != 8) throw std::logic_error("bad read size");
      if (addr % size != 0) throw std::logic_error("misaligned element read");
      if (addr + size > bytes.size()) throw std::out_of_range("read out of bounds");
      ++reads;
      uint64_t v = 0;
      for (unsigned i = 0; i < size; ++i) v |= static_cast<uint64_t>(bytes[addr + i]) << (8 * i);
      return v;
    };
  }
  T::WriteFn writer() {
    return [this](T::Addr addr, unsigned size, uint64_t v) {
      if (size != 1 && size != 2 && size != 4 && size != 8) throw std::logic_error("bad write size");
      if (addr % size != 0) throw std::logic_error("misaligned element write");
      if (addr + size > bytes.size()) throw std::out_of_range("write out of bounds");
      ++writes[addr];
      for (unsigned i = 0; i < size; ++i) bytes[addr + i] = static_cast<uint8_t>(v >> (8 * i));
    };
  }
  void put16(uint64_t addr, uint16_t v) {
    bytes[addr] = v & 0xff;
    bytes[addr + 1] = v >> 8;
  }
  uint16_t get16(uint64_t addr) const { return bytes[addr] | (bytes[addr + 1] << 8); }
  void put32(uint64_t addr, uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes[addr + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  uint32_t get32(uint64_t addr) const {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(bytes[addr + i]) << (8 * i);
    return v;
  }
};

}  // namespace

// =============================================================================================
// Scalar conversions

#ifdef __FLT16_MAX__
TEST(TensorScalar, F16DecodeMatchesCompilerFloat16ForEveryPattern) {
  for (uint32_t b = 0; b < 65536; ++b) {
    _Float16 h;
    uint16_t b16 = static_cast<uint16_t>(b);
    std::memcpy(&h, &b16, 2);
    double want = static_cast<double>(h);
    double got = T::f16_to_double(b16);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << b;
    } else {
      ASSERT_EQ(got, want) << std::hex << b;
      ASSERT_EQ(std::signbit(got), std::signbit(want)) << std::hex << b;
    }
  }
}

TEST(TensorScalar, F16EncodeRoundsOnceLikeCompilerFloat16) {
  std::mt19937_64 rng(7);
  std::vector<double> vals = {0.0,
                              -0.0,
                              1.0,
                              65504.0,
                              65519.999,
                              65520.0,
                              1e10,
                              -1e10,
                              std::ldexp(1.0, -24),
                              std::ldexp(1.0, -25),
                              std::ldexp(1.5, -25),
                              std::ldexp(1.0, -26),
                              std::ldexp(1023.5, -24),
                              std::ldexp(1.0, -14),
                              1.0 + std::ldexp(1.0, -11),
                              1.0 + std::ldexp(3.0, -11),
                              1.0 + std::ldexp(1.0, -11) + 1e-12,
                              2047.5 / 1024,
                              std::numeric_limits<double>::infinity()};
  for (int i = 0; i < 200000; ++i) {
    // random doubles around the f16 range, including subnormals and exact halfway points
    int e = static_cast<int>(rng() % 50) - 30;
    double m = 1.0 + static_cast<double>(rng() % (1ull << 52)) / std::ldexp(1.0, 52);
    if (i % 4 == 0) m = 1.0 + (static_cast<double>(rng() % 2048) + 0.5) / 2048.0;  // ties
    vals.push_back((rng() & 1 ? -1 : 1) * std::ldexp(m, e));
  }
  for (double v : vals) {
    _Float16 h = static_cast<_Float16>(v);
    uint16_t want;
    std::memcpy(&want, &h, 2);
    ASSERT_EQ(T::double_to_f16(v), want) << v;
  }
  EXPECT_EQ(T::double_to_f16(std::nan("")), 0x7fff);
}
#endif

TEST(TensorScalar, Bf16AndF32) {
  EXPECT_EQ(T::bf16_to_double(0x3f80), 1.0);
  EXPECT_EQ(T::bf16_to_double(0xc040), -3.0);
  EXPECT_EQ(T::bf16_to_double(0x0001), std::ldexp(1.0, -133));
  EXPECT_EQ(T::double_to_f32_bits(1.0 + std::ldexp(1.0, -24)), 0x3f800000u);  // tie to even
  EXPECT_EQ(T::double_to_f32_bits(1.0 + std::ldexp(3.0, -24)), 0x3f800002u);
  EXPECT_EQ(T::double_to_f32_bits(1.0 + std::ldexp(1.0, -24) + 1e-15), 0x3f800001u);
  EXPECT_EQ(T::double_to_f32_bits(1e300), 0x7f800000u);
  EXPECT_EQ(T::double_to_f32_bits(std::nan("")), 0x7fffffffu);
  EXPECT_EQ(T::f32_bits_to_double(0x40490fdbu), static_cast<double>(3.14159274101257324f));
}

// =============================================================================================
// mma.sync

TEST(TensorMma, RandomMatricesMatchNaiveMatmul) {
  uint32_t seed = 100;
  for (const MmaCase& mc : kMmaCases) {
    for (int rep = 0; rep < 20; ++rep) {
      run_mma_case(mc, seed++, /*small_int=*/false, /*alias_cd=*/false);
    }
  }
}

TEST(TensorMma, IntegerMatricesAreExact) {
  uint32_t seed = 500;
  for (const MmaCase& mc : kMmaCases) {
    for (int rep = 0; rep < 5; ++rep) run_mma_case(mc, seed++, true, false);
  }
}

TEST(TensorMma, DestinationMayAliasAccumulator) {
  uint32_t seed = 900;
  for (const MmaCase& mc : kMmaCases) {
    if (mc.c == mc.d) run_mma_case(mc, seed++, false, true);
  }
}

TEST(TensorMma, Tf32IgnoresLow13Bits) {
  std::mt19937 rng(3);
  Mat A = random_mat(16, 8, ElemType::TF32, rng, false);
  Mat B = random_mat(8, 8, ElemType::TF32, rng, false);
  Mat C = random_mat(16, 8, ElemType::F32, rng, false);
  T::MmaDesc desc = desc4(MmaShape::M16N8K8, ElemType::TF32, ElemType::F32, ElemType::F32);
  WarpFrag fa = distribute(A, isa_m16n8k8_atf32, 4), fb = distribute(B, isa_m16n8k8_btf32, 2);
  WarpFrag fc = distribute(C, isa_acc, 4), d1, d2;
  T::mma_sync(desc, fa, fb, fc, d1);
  for (auto& lane : fa)
    for (auto& r : lane) r |= 0x1fffu;
  for (auto& lane : fb)
    for (auto& r : lane) r |= 0x0aaau;
  T::mma_sync(desc, fa, fb, fc, d2);
  for (int lane = 0; lane < 32; ++lane) {
    for (int r = 0; r < 4; ++r) EXPECT_EQ(d1[lane][r], d2[lane][r]);
  }
}

TEST(TensorMma, SpecialValues) {
  // One element of A is +inf and one of C is NaN: only their row (of D) turns to inf/NaN.
  T::MmaDesc desc = desc4(MmaShape::M16N8K16, ElemType::F16, ElemType::F32, ElemType::F32);
  Mat A, B, C;
  std::mt19937 rng(11);
  A = random_mat(16, 16, ElemType::F16, rng, true);
  B = random_mat(16, 8, ElemType::F16, rng, true);
  for (auto& b : B.bits) b = 0x3c00;  // all ones: no 0 * inf
  C = random_mat(16, 8, ElemType::F32, rng, true);
  A.at(3, 5) = 0x7c00;
  C.at(9, 2) = 0x7fc00001u;
  WarpFrag d;
  T::mma_sync(desc, distribute(A, isa_m16n8k16_a, 8), distribute(B, isa_m16n8k16_b, 4),
              distribute(C, isa_acc, 4), d);
  Mat D = collect(d, isa_acc, 4, 16, 8, ElemType::F32);
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 8; ++j) {
      if (i == 3) {
        EXPECT_EQ(D.at(i, j), 0x7f800000u);
      } else if (i == 9 && j == 2) {
        EXPECT_EQ(D.at(i, j), 0x7fffffffu);  // canonical NaN
      } else {
        EXPECT_TRUE(std::isfinite(D.val(i, j)));
      }
    }
  }
}

TEST(TensorMma, UnsupportedCombinationsAreRejected) {
  using S = MmaShape;
  using E = ElemType;
  const T::MmaDesc bad[] = {
      desc4(S::M16N8K16, E::BF16, E::F16, E::F16), desc4(S::M16N8K16, E::BF16, E::F32, E::F16),
      desc4(S::M16N8K16, E::TF32, E::F32, E::F32), desc4(S::M16N8K8, E::TF32, E::F16, E::F32),
      desc4(S::M16N8K16, E::F32, E::F32, E::F32),
  };
  WarpFrag z{};
  for (const auto& d : bad) {
    EXPECT_NE(T::mma_unsupported_reason(d), "");
    EXPECT_THROW(T::mma_sync(d, z, z, z, z), T::TensorError);
  }
}

// =============================================================================================
// ldmatrix

namespace {

// Shared memory of 64 rows x 64 b16 elements; element index n holds the value n.
constexpr int kSmemCols = 64;
constexpr int kSmemRows = 64;

Memory make_smem() {
  Memory m(kSmemRows * kSmemCols * 2);
  for (int n = 0; n < kSmemRows * kSmemCols; ++n) m.put16(2 * n, static_cast<uint16_t>(n));
  return m;
}

// Row addresses: matrix j, row r starts at shared row rowsel and column 8*colblk, scattered.
std::array<T::Addr, 32> scattered_rows(std::mt19937& rng, int used_lanes) {
  std::array<T::Addr, 32> addr;
  std::vector<int> rows(kSmemRows);
  for (int i = 0; i < kSmemRows; ++i) rows[i] = i;
  std::shuffle(rows.begin(), rows.end(), rng);
  for (int lane = 0; lane < 32; ++lane) {
    if (lane < used_lanes) {
      int colblk = rng() % (kSmemCols / 8);
      addr[lane] = 2ull * (rows[lane] * kSmemCols + 8 * colblk);
    } else {
      addr[lane] = 0xfff0000000000000ull + lane;  // unused: out of bounds and misaligned
    }
  }
  return addr;
}

}  // namespace

TEST(TensorLdmatrix, FragmentsAsTheIsaStates) {
  std::mt19937 rng(42);
  for (int num : {1, 2, 4}) {
    for (bool trans : {false, true}) {
      for (int rep = 0; rep < 10; ++rep) {
        Memory smem = make_smem();
        auto addr = scattered_rows(rng, 8 * num);
        WarpFrag out;
        for (auto& lane : out) lane.fill(0xdeadbeefu);
        T::ldmatrix(num, trans, addr, smem.reader(), out);
        EXPECT_EQ(smem.reads, 64 * num);
        // Element (r, c) of matrix j is element index addr[8j + r]/2 + c (values are indices).
        auto elem = [&](int j, int r, int c) {
          return static_cast<uint16_t>(addr[8 * j + r] / 2 + c);
        };
        for (int lane = 0; lane < 32; ++lane) {
          for (int j = 0; j < num; ++j) {
            uint32_t v = out[lane][j];
            uint16_t lo = v & 0xffff, hi = v >> 16;
            if (!trans) {
              // A group of four threads loads an entire row: thread L gets row L/4, its
              // fragment (L%4) of two consecutive elements.
              EXPECT_EQ(lo, elem(j, lane / 4, 2 * (lane % 4))) << num << " " << lane << " " << j;
              EXPECT_EQ(hi, elem(j, lane / 4, 2 * (lane % 4) + 1));
            } else {
              // Column-major: thread L gets column L/4, rows 2*(L%4) and 2*(L%4)+1.
              EXPECT_EQ(lo, elem(j, 2 * (lane % 4), lane / 4)) << num << " " << lane << " " << j;
              EXPECT_EQ(hi, elem(j, 2 * (lane % 4) + 1, lane / 4));
            }
          }
          for (int r = num; r < T::kMaxFragRegs; ++r) EXPECT_EQ(out[lane][r], 0xdeadbeefu);
        }
      }
    }
  }
}

TEST(TensorLdmatrix, TransIsTheFragmentOfTheTransposedMatrix) {
  // Store four 8x8 matrices and their transposes; .trans on the first must equal the plain load
  // of the second.
  std::mt19937 rng(5);
  Memory smem(4096);
  std::array<T::Addr, 32> a{}, at{};
  for (int j = 0; j < 4; ++j) {
    for (int r = 0; r < 8; ++r) {
      a[8 * j + r] = 256 * j + 16 * r;
      at[8 * j + r] = 2048 + 256 * j + 32 * r;  // other pitch
      for (int c = 0; c < 8; ++c) {
        uint16_t v = static_cast<uint16_t>(rng());
        smem.put16(a[8 * j + r] + 2 * c, v);
      }
    }
  }
  for (int j = 0; j < 4; ++j) {
    for (int r = 0; r < 8; ++r) {
      for (int c = 0; c < 8; ++c)
        smem.put16(at[8 * j + c] + 2 * r, smem.get16(a[8 * j + r] + 2 * c));
    }
  }
  WarpFrag x, y;
  T::ldmatrix(4, true, a, smem.reader(), x);
  T::ldmatrix(4, false, at, smem.reader(), y);
  for (int lane = 0; lane < 32; ++lane) {
    for (int j = 0; j < 4; ++j) EXPECT_EQ(x[lane][j], y[lane][j]) << lane << " " << j;
  }
}

TEST(TensorLdmatrix, MisalignedRowAddressThrows) {
  Memory smem = make_smem();
  std::array<T::Addr, 32> addr{};
  for (int lane = 0; lane < 32; ++lane) addr[lane] = 16 * lane;
  addr[13] = 16 * 13 + 8;
  WarpFrag out{};
  EXPECT_NO_THROW(T::ldmatrix(1, false, addr, smem.reader(), out));  // lane 13 unused by .x1
  EXPECT_THROW(T::ldmatrix(2, false, addr, smem.reader(), out), T::TensorError);
  EXPECT_THROW(T::ldmatrix(3, false, addr, smem.reader(), out), T::TensorError);
}

TEST(TensorLdmatrix, CallbackErrorsPropagateAndLeaveOutputAlone) {
  Memory smem = make_smem();
  std::array<T::Addr, 32> addr{};
  for (int lane = 0; lane < 32; ++lane) addr[lane] = 16 * lane;
  addr[30] = smem.bytes.size();  // past the end
  WarpFrag out;
  for (auto& lane : out) lane.fill(7);
  EXPECT_THROW(T::ldmatrix(4, false, addr, smem.reader(), out), std::out_of_range);
  for (auto& lane : out)
    for (uint32_t r : lane) EXPECT_EQ(r, 7u);
}

TEST(TensorLdmatrix, FeedsMmaM16n8k16) {
  // The usual pairing: A (16x16 row-major) with ldmatrix.x4 where lane L points at row L%16,
  // column 8*(L/16); B stored k-major (16x8, row k holds n = 0..7) with ldmatrix.x2.trans where
  // lane L (< 16) points at row L. The result must be the product.
  std::mt19937 rng(77);
  Mat A = random_mat(16, 16, ElemType::F16, rng, false);
  Mat B = random_mat(16, 8, ElemType::F16, rng, false);
  Mat C = random_mat(16, 8, ElemType::F32, rng, false);
  Memory smem(4096);
  const T::Addr a_base = 0, b_base = 1024;
  const int a_pitch = 24, b_pitch = 16;  // elements, padded rows (16-byte multiples)
  for (int r = 0; r < 16; ++r) {
    for (int c = 0; c < 16; ++c) smem.put16(a_base + 2 * (r * a_pitch + c), A.at(r, c));
    for (int c = 0; c < 8; ++c) smem.put16(b_base + 2 * (r * b_pitch + c), B.at(r, c));
  }
  std::array<T::Addr, 32> pa{}, pb{};
  for (int lane = 0; lane < 32; ++lane) {
    pa[lane] = a_base + 2 * ((lane % 16) * a_pitch + 8 * (lane / 16));
    pb[lane] = b_base + 2 * ((lane % 16) * b_pitch);
  }
  WarpFrag fa, fb;
  T::ldmatrix(4, false, pa, smem.reader(), fa);
  T::ldmatrix(2, true, pb, smem.reader(), fb);
  // Cross-check against the ISA's A and B fragment layouts directly.
  WarpFrag fa_isa = distribute(A, isa_m16n8k16_a, 8), fb_isa = distribute(B, isa_m16n8k16_b, 4);
  for (int lane = 0; lane < 32; ++lane) {
    for (int r = 0; r < 4; ++r) EXPECT_EQ(fa[lane][r], fa_isa[lane][r]) << lane << " a" << r;
    for (int r = 0; r < 2; ++r) EXPECT_EQ(fb[lane][r], fb_isa[lane][r]) << lane << " b" << r;
  }
  T::MmaDesc desc = desc4(MmaShape::M16N8K16, ElemType::F16, ElemType::F32, ElemType::F32);
  WarpFrag fd;
  T::mma_sync(desc, fa, fb, distribute(C, isa_acc, 4), fd);
  std::vector<double> ref, mag;
  naive(A, B, C, ref, mag);
  expect_close(collect(fd, isa_acc, 4, 16, 8, ElemType::F32), ref, mag, false, "ldmatrix+mma");
}

// =============================================================================================
// wmma m16n16k16

namespace {

using T::Layout;
using T::WmmaMatrix;

unsigned esize(ElemType t) {
  return width_bits(t) / 8;
}

void put_elem(Memory& mem, uint64_t addr, unsigned size, uint64_t v) {
  for (unsigned i = 0; i < size; ++i) mem.bytes[addr + i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get_elem(const Memory& mem, uint64_t addr, unsigned size) {
  uint64_t v = 0;
  for (unsigned i = 0; i < size; ++i) v |= static_cast<uint64_t>(mem.bytes[addr + i]) << (8 * i);
  return v;
}

void store_mat(Memory& mem, const Mat& m, Layout layout, uint64_t base, uint32_t stride) {
  const unsigned es = esize(m.type);
  for (int r = 0; r < m.rows; ++r) {
    for (int c = 0; c < m.cols; ++c) {
      uint64_t idx = layout == Layout::Row ? uint64_t(r) * stride + c : uint64_t(c) * stride + r;
      put_elem(mem, base + es * idx, es, m.at(r, c));
    }
  }
}

Mat load_mat(const Memory& mem, ElemType t, Layout layout, uint64_t base, uint32_t stride,
             int rows = 16, int cols = 16) {
  Mat m;
  m.rows = rows;
  m.cols = cols;
  m.type = t;
  m.bits.resize(rows * cols);
  const unsigned es = esize(t);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      uint64_t idx = layout == Layout::Row ? uint64_t(r) * stride + c : uint64_t(c) * stride + r;
      m.at(r, c) = get_elem(mem, base + es * idx, es);
    }
  }
  return m;
}

const char* lname(Layout l) {
  return l == Layout::Row ? "row" : "col";
}

}  // namespace

TEST(TensorWmma, RegisterCountsMatchNvcc) {
  // From nvcc -arch=sm_80 PTX: f16 a/b {8 x .b32}, bf16 a/b {4 x .b32}, f32 c/d {8 x .f32},
  // f16 c/d {4 x .b32}.
  EXPECT_EQ(T::wmma_regs(WmmaMatrix::A, ElemType::F16), 8);
  EXPECT_EQ(T::wmma_regs(WmmaMatrix::B, ElemType::F16), 8);
  EXPECT_EQ(T::wmma_regs(WmmaMatrix::A, ElemType::BF16), 4);
  EXPECT_EQ(T::wmma_regs(WmmaMatrix::B, ElemType::BF16), 4);
  EXPECT_EQ(T::wmma_regs(WmmaMatrix::C, ElemType::F32), 8);
  EXPECT_EQ(T::wmma_regs(WmmaMatrix::C, ElemType::F16), 4);
  EXPECT_EQ(T::wmma_regs(WmmaMatrix::C, ElemType::BF16), 0);
}

TEST(TensorWmma, EveryElementHeldOnce) {
  struct K {
    WmmaMatrix m;
    ElemType t;
  };
  for (K k : {K{WmmaMatrix::A, ElemType::F16}, K{WmmaMatrix::B, ElemType::F16},
              K{WmmaMatrix::A, ElemType::BF16}, K{WmmaMatrix::B, ElemType::BF16},
              K{WmmaMatrix::C, ElemType::F32}, K{WmmaMatrix::C, ElemType::F16}}) {
    const int nregs = T::wmma_regs(k.m, k.t);
    const int primary = k.m == WmmaMatrix::C ? nregs : 4;  // A/B: registers 0..3
    const int halves = is16(k.t) ? 2 : 1;
    std::map<std::pair<int, int>, int> count;
    for (int lane = 0; lane < 32; ++lane) {
      for (int r = 0; r < nregs; ++r) {
        for (int h = 0; h < halves; ++h) {
          T::RowCol rc = T::wmma_element(k.m, k.t, lane, r, h);
          ASSERT_TRUE(rc.row >= 0 && rc.row < 16 && rc.col >= 0 && rc.col < 16);
          if (r < primary) {
            ++count[{rc.row, rc.col}];
          } else {  // the second copy mirrors register r - 4
            T::RowCol p = T::wmma_element(k.m, k.t, lane, r - 4, h);
            EXPECT_EQ(rc.row, p.row);
            EXPECT_EQ(rc.col, p.col);
          }
        }
      }
    }
    EXPECT_EQ(count.size(), 256u);
    for (auto& kv : count) EXPECT_EQ(kv.second, 1);
  }
  // f16 accumulator element e is the f32 accumulator's element e.
  for (int lane = 0; lane < 32; ++lane) {
    for (int e = 0; e < 8; ++e) {
      T::RowCol a = T::wmma_element(WmmaMatrix::C, ElemType::F32, lane, e, 0);
      T::RowCol b = T::wmma_element(WmmaMatrix::C, ElemType::F16, lane, e / 2, e % 2);
      EXPECT_EQ(a.row, b.row);
      EXPECT_EQ(a.col, b.col);
    }
  }
}

TEST(TensorWmma, LoadPutsElementsWhereTheHeaderDocumentsThem) {
  // tensor.h documents the emulator's (otherwise opaque) wmma layout; check the loads against
  // that text, with memory holding value = element index (row-major, stride 16).
  Memory mem(1 << 12);
  for (int n = 0; n < 256; ++n) {
    mem.put16(2 * n, static_cast<uint16_t>(n));         // f16/bf16 matrices at 0
    mem.put32(1024 + 4 * n, static_cast<uint32_t>(n));  // f32 matrix at 1024
  }
  auto idx = [](int row, int col) { return static_cast<uint32_t>(16 * row + col); };
  for (ElemType t : {ElemType::F16, ElemType::BF16}) {
    WarpFrag a, b;
    T::wmma_load(WmmaMatrix::A, Layout::Row, t, 0, 16, mem.reader(), a);
    T::wmma_load(WmmaMatrix::B, Layout::Row, t, 0, 16, mem.reader(), b);
    const int nregs = T::wmma_regs(WmmaMatrix::A, t);
    for (int lane = 0; lane < 32; ++lane) {
      const int g = lane / 4, tq = lane % 4;
      for (int r = 0; r < nregs; ++r) {
        const int q = r % 4;  // registers 4..7 (f16) repeat 0..3
        for (int h = 0; h < 2; ++h) {
          // A: row = g + 8*(r%2), col = 2t + h + 8*(r/2)
          EXPECT_EQ((a[lane][r] >> (16 * h)) & 0xffff,
                    idx(g + 8 * (q % 2), 2 * tq + h + 8 * (q / 2)))
              << "A lane " << lane << " reg " << r;
          // B: row = 2t + h + 8*(r%2), col = g + 8*(r/2)
          EXPECT_EQ((b[lane][r] >> (16 * h)) & 0xffff,
                    idx(2 * tq + h + 8 * (q % 2), g + 8 * (q / 2)))
              << "B lane " << lane << " reg " << r;
        }
      }
    }
  }
  WarpFrag c32, c16;
  T::wmma_load(WmmaMatrix::C, Layout::Row, ElemType::F32, 1024, 16, mem.reader(), c32);
  T::wmma_load(WmmaMatrix::C, Layout::Row, ElemType::F16, 0, 16, mem.reader(), c16);
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, tq = lane % 4;
    for (int r = 0; r < 8; ++r) {
      // C f32: row = g + 8*((r%4)/2), col = 2t + r%2 + 8*(r/4)
      const uint32_t want = idx(g + 8 * ((r % 4) / 2), 2 * tq + r % 2 + 8 * (r / 4));
      EXPECT_EQ(c32[lane][r], want) << "C f32 lane " << lane << " reg " << r;
      // C f16: element r is register r/2, half r%2
      EXPECT_EQ((c16[lane][r / 2] >> (16 * (r % 2))) & 0xffff, want) << "C f16 lane " << lane;
    }
  }
}

TEST(TensorWmma, LoadMmaStoreAllLayoutsAndTypes) {
  std::mt19937 rng(2024);
  struct Types {
    ElemType ab, c, d;
  };
  const Types types[] = {{ElemType::F16, ElemType::F32, ElemType::F32},
                         {ElemType::F16, ElemType::F16, ElemType::F16},
                         {ElemType::F16, ElemType::F16, ElemType::F32},
                         {ElemType::F16, ElemType::F32, ElemType::F16},
                         {ElemType::BF16, ElemType::F32, ElemType::F32}};
  for (const Types& ty : types) {
    for (Layout la : {Layout::Row, Layout::Col}) {
      for (Layout lb : {Layout::Row, Layout::Col}) {
        for (Layout lc : {Layout::Row, Layout::Col}) {
          for (Layout ld : {Layout::Row, Layout::Col}) {
            for (bool small_int : {false, true}) {
              std::string what = std::string("wmma ") + T::to_string(ty.d) + "." +
                                 T::to_string(ty.ab) + "." + T::to_string(ty.c) + " A " +
                                 lname(la) + " B " + lname(lb) + " C " + lname(lc) + " D " +
                                 lname(ld) + (small_int ? " int" : "");
              Mat A = random_mat(16, 16, ty.ab, rng, small_int);
              Mat B = random_mat(16, 16, ty.ab, rng, small_int);
              Mat C = random_mat(16, 16, ty.c, rng, small_int);
              Memory mem(1 << 16);
              // Strides larger than 16 (a submatrix of a bigger one), aligned as required.
              const uint64_t a_base = 0x0000, b_base = 0x2000, c_base = 0x4000, d_base = 0x8000;
              const uint32_t sab = 48, sc = is16(ty.c) ? 40 : 24, sd = is16(ty.d) ? 40 : 24;
              store_mat(mem, A, la, a_base, sab);
              store_mat(mem, B, lb, b_base, sab);
              store_mat(mem, C, lc, c_base, sc);
              // Poison the D area so stray or missing writes show.
              for (size_t i = d_base; i < mem.bytes.size(); ++i) mem.bytes[i] = 0xa5;
              WarpFrag fa, fb, fc, fd;
              T::wmma_load(WmmaMatrix::A, la, ty.ab, a_base, sab, mem.reader(), fa);
              T::wmma_load(WmmaMatrix::B, lb, ty.ab, b_base, sab, mem.reader(), fb);
              T::wmma_load(WmmaMatrix::C, lc, ty.c, c_base, sc, mem.reader(), fc);
              T::wmma_mma(ty.ab, ty.c, ty.d, fa, fb, fc, fd);
              T::wmma_store(ld, ty.d, d_base, sd, fd, mem.writer());
              EXPECT_EQ(mem.writes.size(), 256u) << what;
              for (auto& w : mem.writes) EXPECT_EQ(w.second, 1) << what;
              Mat D = load_mat(mem, ty.d, ld, d_base, sd);
              // Bytes around D's elements are untouched.
              std::set<uint64_t> dbytes;
              for (auto& w : mem.writes) {
                for (unsigned i = 0; i < esize(ty.d); ++i) dbytes.insert(w.first + i);
              }
              int stray = 0;
              for (size_t i = d_base; i < mem.bytes.size(); ++i) {
                if (!dbytes.count(i) && mem.bytes[i] != 0xa5) ++stray;
              }
              EXPECT_EQ(stray, 0) << what;
              std::vector<double> ref, mag;
              naive(A, B, C, ref, mag);
              expect_close(D, ref, mag, small_int, what);
            }
          }
        }
      }
    }
  }
}

TEST(TensorWmma, DefaultStrideAndDAliasC) {
  std::mt19937 rng(9);
  Mat A = random_mat(16, 16, ElemType::F16, rng, false);
  Mat B = random_mat(16, 16, ElemType::F16, rng, false);
  Mat C = random_mat(16, 16, ElemType::F32, rng, false);
  Memory mem(1 << 14);
  store_mat(mem, A, Layout::Row, 0, 16);
  store_mat(mem, B, Layout::Col, 512, 16);
  store_mat(mem, C, Layout::Row, 1024, 16);
  WarpFrag fa, fb, fc;
  T::wmma_load(WmmaMatrix::A, Layout::Row, ElemType::F16, 0, 16, mem.reader(), fa);
  T::wmma_load(WmmaMatrix::B, Layout::Col, ElemType::F16, 512, 16, mem.reader(), fb);
  T::wmma_load(WmmaMatrix::C, Layout::Row, ElemType::F32, 1024, 16, mem.reader(), fc);
  T::wmma_mma(ElemType::F16, ElemType::F32, ElemType::F32, fa, fb, fc, fc);
  T::wmma_store(Layout::Row, ElemType::F32, 1024, 16, fc, mem.writer());
  std::vector<double> ref, mag;
  naive(A, B, C, ref, mag);
  expect_close(load_mat(mem, ElemType::F32, Layout::Row, 1024, 16), ref, mag, false, "alias");
}

TEST(TensorWmma, ElementwiseOperationsOnFragments) {
  // What CUDA code does with frag.x[i]: scale every element of A by 2 (all 16 halves, both
  // copies), C by 0.5; then convert the f32 result element by element into an f16 accumulator
  // fragment (element e = register e/2, half e%2) and store that.
  std::mt19937 rng(31);
  Mat A = random_mat(16, 16, ElemType::F16, rng, false);
  Mat B = random_mat(16, 16, ElemType::F16, rng, false);
  Mat C = random_mat(16, 16, ElemType::F32, rng, false);
  Memory mem(1 << 14);
  store_mat(mem, A, Layout::Row, 0, 16);
  store_mat(mem, B, Layout::Row, 512, 16);
  store_mat(mem, C, Layout::Col, 1024, 16);
  WarpFrag fa, fb, fc, fd, fh{};
  T::wmma_load(WmmaMatrix::A, Layout::Row, ElemType::F16, 0, 16, mem.reader(), fa);
  T::wmma_load(WmmaMatrix::B, Layout::Row, ElemType::F16, 512, 16, mem.reader(), fb);
  T::wmma_load(WmmaMatrix::C, Layout::Col, ElemType::F32, 1024, 16, mem.reader(), fc);
  for (auto& lane : fa) {
    for (int r = 0; r < 8; ++r) {
      uint32_t v = lane[r];
      uint16_t lo = v & 0xffff, hi = v >> 16;
      auto twice = [](uint16_t h) {  // exact: exponent + 1 (the values are normal and small)
        return static_cast<uint16_t>(h + (1 << 10));
      };
      lane[r] = twice(lo) | (static_cast<uint32_t>(twice(hi)) << 16);
    }
  }
  for (auto& lane : fc) {
    for (int r = 0; r < 8; ++r) lane[r] = f32_bits(bits_f32(lane[r]) * 0.5f);
  }
  T::wmma_mma(ElemType::F16, ElemType::F32, ElemType::F32, fa, fb, fc, fd);
  for (int lane = 0; lane < 32; ++lane) {
    for (int e = 0; e < 8; ++e) {
      uint16_t h = T::double_to_f16(bits_f32(fd[lane][e]));
      fh[lane][e / 2] |= static_cast<uint32_t>(h) << (16 * (e % 2));
    }
  }
  T::wmma_store(Layout::Row, ElemType::F16, 4096, 16, fh, mem.writer());
  Mat D = load_mat(mem, ElemType::F16, Layout::Row, 4096, 16);
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 16; ++j) {
      double s = 0.5 * C.val(i, j);
      for (int k = 0; k < 16; ++k) s += 2 * A.val(i, k) * B.val(k, j);
      double f32 = static_cast<float>(s);
      EXPECT_EQ(D.at(i, j), T::double_to_f16(f32)) << i << " " << j;
    }
  }
}

TEST(TensorWmma, MisalignmentAndUnsupportedTypesThrow) {
  Memory mem(1 << 14);
  WarpFrag f{};
  // The CUDA programming guide: the base 256-bit (32-byte) aligned, the stride a multiple of
  // 16 bytes (8 halves, 4 floats).
  EXPECT_THROW(T::wmma_load(WmmaMatrix::A, Layout::Row, ElemType::F16, 16, 16, mem.reader(), f),
               T::TensorError);
  EXPECT_THROW(T::wmma_load(WmmaMatrix::A, Layout::Row, ElemType::F16, 0, 20, mem.reader(), f),
               T::TensorError);
  EXPECT_NO_THROW(T::wmma_load(WmmaMatrix::A, Layout::Row, ElemType::F16, 32, 24, mem.reader(), f));
  EXPECT_NO_THROW(T::wmma_load(WmmaMatrix::A, Layout::Row, ElemType::F16, 64, 40, mem.reader(), f));
  EXPECT_NO_THROW(
      T::wmma_load(WmmaMatrix::A, Layout::Col, ElemType::BF16, 32, 24, mem.reader(), f));
  EXPECT_THROW(T::wmma_load(WmmaMatrix::C, Layout::Col, ElemType::F16, 16, 24, mem.reader(), f),
               T::TensorError);
  EXPECT_THROW(T::wmma_store(Layout::Row, ElemType::F32, 0, 6, f, mem.writer()), T::TensorError);
  EXPECT_NO_THROW(T::wmma_store(Layout::Row, ElemType::F32, 0, 12, f, mem.writer()));
  EXPECT_THROW(T::wmma_load(WmmaMatrix::A, Layout::Row, ElemType::F32, 0, 16, mem.reader(), f),
               T::TensorError);
  EXPECT_THROW(T::wmma_load(WmmaMatrix::C, Layout::Row, ElemType::BF16, 0, 16, mem.reader(), f),
               T::TensorError);
  EXPECT_THROW(T::wmma_mma(ElemType::BF16, ElemType::F16, ElemType::F32, f, f, f, f),
               T::TensorError);
  EXPECT_THROW(T::wmma_mma(ElemType::TF32, ElemType::F32, ElemType::F32, f, f, f, f),
               T::TensorError);
  // A failing read leaves the destination alone.
  WarpFrag g;
  for (auto& lane : g) lane.fill(3);
  EXPECT_THROW(
      T::wmma_load(WmmaMatrix::C, Layout::Row, ElemType::F32, (1 << 14) - 512, 16, mem.reader(), g),
      std::out_of_range);
  for (auto& lane : g)
    for (uint32_t r : lane) EXPECT_EQ(r, 3u);
}

// =============================================================================================
// mma shapes with integer, f64 and m16n8k4 tf32 operands

namespace {

// The ISA's "Matrix Fragments for mma.m8n8k4 with .f64", "mma.m8n8k16", "mma.m16n8k4",
// "mma.m16n8k16 with integer type" and "mma.m16n8k32" (.s8/.u8), element index i as in a_i.
// m8n8k4 .f64 A (a0): row = %laneid >> 2, col = %laneid % 4
RC isa_m8n8k4_a(int lane, int) {
  return {lane >> 2, lane % 4};
}
// m8n8k4 .f64 B (b0): row = %laneid % 4, col = %laneid >> 2
RC isa_m8n8k4_b(int lane, int) {
  return {lane % 4, lane >> 2};
}
// m8n8 accumulators (.f64 of m8n8k4, .s32 of m8n8k16), c0, c1:
//   row = groupID, col = (threadID_in_group * 2) + i
RC isa_acc_m8n8(int lane, int i) {
  return {groupID(lane), threadID_in_group(lane) * 2 + i};
}
// m8n8k16 A (a0..a3): row = groupID, col = (threadID_in_group * 4) + i
RC isa_m8n8k16_a(int lane, int i) {
  return {groupID(lane), threadID_in_group(lane) * 4 + i};
}
// m8n8k16 B (b0..b3): row = (threadID_in_group * 4) + i, col = groupID
RC isa_m8n8k16_b(int lane, int i) {
  return {threadID_in_group(lane) * 4 + i, groupID(lane)};
}
// m16n8k16 integer (and .e4m3 / .e5m2) A (a0..a7): row = groupID for i < 4, groupID + 8 for i >= 4;
//   col = (threadID_in_group * 4) + (i & 0x3)
RC isa_m16n8k16_a8(int lane, int i) {
  return {i < 4 ? groupID(lane) : groupID(lane) + 8, threadID_in_group(lane) * 4 + (i & 0x3)};
}
// m16n8k16 integer B (b0..b3): row = (threadID_in_group * 4) + i, col = groupID
RC isa_m16n8k16_b8(int lane, int i) {
  return {threadID_in_group(lane) * 4 + i, groupID(lane)};
}
// m16n8k32 .s8/.u8/.e4m3/.e5m2 A (a0..a15): row = groupID for 0 <= i < 4 || 8 <= i < 12, groupID + 8
//   otherwise; col = (threadID_in_group * 4) + (i & 0x3) for i < 8, ... + 16 for i >= 8
RC isa_m16n8k32_a(int lane, int i) {
  int row = ((0 <= i && i < 4) || (8 <= i && i < 12)) ? groupID(lane) : groupID(lane) + 8;
  int col = threadID_in_group(lane) * 4 + (i & 0x3) + (i < 8 ? 0 : 16);
  return {row, col};
}
// m16n8k32 .s8/.u8 B (b0..b7): row = (threadID_in_group * 4) + (i & 0x3) for i < 4, ... + 16
//   for i >= 4; col = groupID
RC isa_m16n8k32_b(int lane, int i) {
  return {threadID_in_group(lane) * 4 + (i & 0x3) + (i < 4 ? 0 : 16), groupID(lane)};
}
// m16n8k4 .tf32 A (a0, a1): row = groupID for a0, groupID + 8 for a1; col = threadID_in_group
RC isa_m16n8k4_a(int lane, int i) {
  return {i == 0 ? groupID(lane) : groupID(lane) + 8, threadID_in_group(lane)};
}
// m16n8k4 .tf32 B (b0): row = threadID_in_group, col = groupID
RC isa_m16n8k4_b(int lane, int) {
  return {threadID_in_group(lane), groupID(lane)};
}

struct IsaFrags {
  int M, N, K;
  LayoutFn a, b, c;
  int na, nb, nc;  // elements per lane
};
IsaFrags isa_frags(MmaShape s, ElemType ab) {
  switch (s) {
    case MmaShape::M8N8K4:
      return {8, 8, 4, isa_m8n8k4_a, isa_m8n8k4_b, isa_acc_m8n8, 1, 1, 2};
    case MmaShape::M8N8K16:
      return {8, 8, 16, isa_m8n8k16_a, isa_m8n8k16_b, isa_acc_m8n8, 4, 4, 2};
    case MmaShape::M16N8K4:
      return {16, 8, 4, isa_m16n8k4_a, isa_m16n8k4_b, isa_acc, 2, 1, 4};
    case MmaShape::M16N8K32:
      return {16, 8, 32, isa_m16n8k32_a, isa_m16n8k32_b, isa_acc, 16, 8, 4};
    case MmaShape::M16N8K16:
      if (is8(ab)) return {16, 8, 16, isa_m16n8k16_a8, isa_m16n8k16_b8, isa_acc, 8, 4, 4};
      return {16, 8, 16, isa_m16n8k16_a, isa_m16n8k16_b, isa_acc, 8, 4, 4};
    case MmaShape::M16N8K8:
      if (ab == ElemType::TF32) return {16, 8, 8, isa_m16n8k8_atf32, isa_m16n8k8_btf32, isa_acc, 4, 2, 4};
      return {16, 8, 8, isa_m16n8k8_a16, isa_m16n8k8_b16, isa_acc, 4, 2, 4};
  }
  return {};
}

std::string dname(const T::MmaDesc& d) {
  return std::string(T::to_string(d.shape)) + (d.satfinite ? ".satfinite." : ".") +
         T::to_string(d.d) + "." + T::to_string(d.a) + "." + T::to_string(d.b) + "." +
         T::to_string(d.c);
}

// The ISA's integer result: exact, then clamped (.satfinite) or wrapped.
int32_t int_result(int64_t exact, bool satfinite) {
  if (satfinite) return static_cast<int32_t>(std::clamp<int64_t>(exact, INT32_MIN, INT32_MAX));
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(exact)));
}

// Runs desc on A, B, C distributed with the ISA's formulas and returns D gathered the same way.
Mat run_isa_mma(const T::MmaDesc& desc, const Mat& A, const Mat& B, const Mat& C) {
  const IsaFrags f = isa_frags(desc.shape, desc.a);
  EXPECT_EQ(T::mma_unsupported_reason(desc), "") << dname(desc);
  EXPECT_EQ(T::mma_regs_a(desc), f.na / per_reg(desc.a)) << dname(desc);
  EXPECT_EQ(T::mma_regs_b(desc), f.nb / per_reg(desc.b)) << dname(desc);
  EXPECT_EQ(T::mma_regs_c(desc), f.nc / per_reg(desc.c)) << dname(desc);  // f16: two per .f16x2
  EXPECT_EQ(T::mma_regs_d(desc), f.nc / per_reg(desc.d)) << dname(desc);
  WarpFrag fd;
  for (auto& lane : fd) lane.fill(0xdeadbeefu);
  T::mma_sync(desc, distribute(A, f.a, f.na), distribute(B, f.b, f.nb), distribute(C, f.c, f.nc),
              fd);
  for (int lane = 0; lane < 32; ++lane) {
    for (int r = f.nc / per_reg(desc.d); r < T::kMaxFragRegs; ++r) {
      EXPECT_EQ(fd[lane][r], 0xdeadbeefu) << dname(desc) << ": register beyond D written";
    }
  }
  return collect(fd, f.c, f.nc, f.M, f.N, desc.d);
}

void run_random_mma(const T::MmaDesc& desc, uint32_t seed, bool small_int) {
  std::mt19937 rng(seed);
  const IsaFrags f = isa_frags(desc.shape, desc.a);
  Mat A = random_mat(f.M, f.K, desc.a, rng, small_int);
  Mat B = random_mat(f.K, f.N, desc.b, rng, small_int);
  Mat C = random_mat(f.M, f.N, desc.c, rng, small_int);
  Mat D = run_isa_mma(desc, A, B, C);
  if (desc.d == ElemType::S32) {
    for (int i = 0; i < f.M; ++i) {
      for (int j = 0; j < f.N; ++j) {
        int64_t s = static_cast<int32_t>(C.at(i, j));
        for (int k = 0; k < f.K; ++k)
          s += static_cast<int64_t>(A.val(i, k)) * static_cast<int64_t>(B.val(k, j));
        ASSERT_EQ(static_cast<int32_t>(D.at(i, j)), int_result(s, desc.satfinite))
            << dname(desc) << " D[" << i << "][" << j << "]";
      }
    }
    return;
  }
  std::vector<double> ref, mag;
  naive(A, B, C, ref, mag);
  if (desc.d == ElemType::F64) {
    for (int i = 0; i < f.M; ++i) {
      for (int j = 0; j < f.N; ++j) {
        // Each fma rounds once: at most K half-ulps of the running sums, bounded by mag.
        const double tol = small_int ? 0 : f.K * std::ldexp(mag[i * f.N + j], -52);
        EXPECT_NEAR(D.val(i, j), ref[i * f.N + j], tol) << dname(desc) << " " << i << " " << j;
      }
    }
    return;
  }
  expect_close(D, ref, mag, small_int, dname(desc) + (small_int ? " (integers)" : " (random)"));
}

std::vector<T::MmaDesc> new_mma_descs() {
  std::vector<T::MmaDesc> v;
  const ElemType e8[] = {ElemType::S8, ElemType::U8};
  for (MmaShape s : {MmaShape::M8N8K16, MmaShape::M16N8K16, MmaShape::M16N8K32}) {
    for (ElemType a : e8) {
      for (ElemType b : e8) {
        for (bool sat : {false, true}) {
          T::MmaDesc d = desc4(s, a, ElemType::S32, ElemType::S32);
          d.b = b;
          d.satfinite = sat;
          v.push_back(d);
        }
      }
    }
  }
  v.push_back(desc4(MmaShape::M8N8K4, ElemType::F64, ElemType::F64, ElemType::F64));
  v.push_back(desc4(MmaShape::M16N8K4, ElemType::TF32, ElemType::F32, ElemType::F32));
  return v;
}

}  // namespace

TEST(TensorMmaShapes, RandomMatricesMatchTheIsaLayoutsAndNaiveMatmul) {
  uint32_t seed = 3000;
  for (const T::MmaDesc& d : new_mma_descs()) {
    for (int rep = 0; rep < 10; ++rep) run_random_mma(d, seed++, false);
    for (int rep = 0; rep < 3; ++rep) run_random_mma(d, seed++, true);
  }
}

TEST(TensorMmaShapes, IntegerOverflowWrapsOrSaturates) {
  // Rows 0-1: every product is 127 * 127 (s8) or 255 * 255 (u8), pushing C = INT32_MAX - 1000
  // past the top; row 2: -128 * 127 products pushing C = INT32_MIN + 1000 below the bottom (s8 A
  // only); the other rows stay in range and are the same in both forms.
  for (MmaShape s : {MmaShape::M8N8K16, MmaShape::M16N8K16, MmaShape::M16N8K32}) {
    for (ElemType a : {ElemType::S8, ElemType::U8}) {
      for (ElemType b : {ElemType::S8, ElemType::U8}) {
        T::MmaDesc d = desc4(s, a, ElemType::S32, ElemType::S32);
        d.b = b;
        const IsaFrags f = isa_frags(s, a);
        std::mt19937 rng(17);
        Mat A = random_mat(f.M, f.K, a, rng, false), B = random_mat(f.K, f.N, b, rng, false);
        Mat C = random_mat(f.M, f.N, ElemType::S32, rng, false);
        const uint64_t amax = a == ElemType::S8 ? 127 : 255, bmax = b == ElemType::S8 ? 127 : 255;
        for (int k = 0; k < f.K; ++k) {
          A.at(0, k) = A.at(1, k) = amax;
          A.at(2, k) = a == ElemType::S8 ? 0x80 : 0;
          for (int j = 0; j < f.N; ++j) B.at(k, j) = bmax;
        }
        for (int j = 0; j < f.N; ++j) {
          C.at(0, j) = C.at(1, j) = static_cast<uint32_t>(INT32_MAX - 1000);
          C.at(2, j) = static_cast<uint32_t>(INT32_MIN + 1000);
        }
        Mat wrap = run_isa_mma(d, A, B, C);
        d.satfinite = true;
        Mat sat = run_isa_mma(d, A, B, C);
        const int64_t up = int64_t(INT32_MAX) - 1000 + int64_t(f.K) * int64_t(amax * bmax);
        const int64_t down = int64_t(INT32_MIN) + 1000 - int64_t(f.K) * 128 * int64_t(bmax);
        for (int j = 0; j < f.N; ++j) {
          for (int i : {0, 1}) {
            EXPECT_EQ(static_cast<int32_t>(sat.at(i, j)), INT32_MAX) << dname(d);
            EXPECT_EQ(static_cast<int32_t>(wrap.at(i, j)), static_cast<int32_t>(up - (1ll << 32)));
          }
          if (a == ElemType::S8) {
            EXPECT_EQ(static_cast<int32_t>(sat.at(2, j)), INT32_MIN) << dname(d);
            EXPECT_EQ(static_cast<int32_t>(wrap.at(2, j)), static_cast<int32_t>(down + (1ll << 32)));
          }
          for (int i = 3; i < f.M; ++i) EXPECT_EQ(sat.at(i, j), wrap.at(i, j)) << dname(d);
        }
      }
    }
  }
}

TEST(TensorMmaShapes, F64RoundingModifiers) {
  // D = 1 + (+-2^-60): one product; every other product is 0, so the result is fma's single
  // rounding of 1 +- 2^-60 in each mode, whatever the order of the additions.
  const double up = std::nextafter(1.0, 2.0), down = std::nextafter(1.0, 0.0);
  struct Want {
    T::Rnd rnd;
    double plus, minus;
  };
  const Want wants[] = {{T::Rnd::RN, 1.0, 1.0},
                        {T::Rnd::RZ, 1.0, down},
                        {T::Rnd::RM, 1.0, down},
                        {T::Rnd::RP, up, 1.0}};
  auto f64 = [](double v) {
    uint64_t b;
    std::memcpy(&b, &v, 8);
    return b;
  };
  Mat A{8, 4, ElemType::F64, std::vector<uint64_t>(32, f64(0.0))};
  Mat B{4, 8, ElemType::F64, std::vector<uint64_t>(32, f64(0.0))};
  Mat C{8, 8, ElemType::F64, std::vector<uint64_t>(64, f64(1.0))};
  A.at(0, 2) = f64(std::ldexp(1.0, -30));
  A.at(1, 2) = f64(-std::ldexp(1.0, -30));
  for (int j = 0; j < 8; ++j) B.at(2, j) = f64(std::ldexp(1.0, -30));
  for (const Want& w : wants) {
    T::MmaDesc d = desc4(MmaShape::M8N8K4, ElemType::F64, ElemType::F64, ElemType::F64);
    d.rnd = w.rnd;
    Mat D = run_isa_mma(d, A, B, C);
    for (int j = 0; j < 8; ++j) {
      EXPECT_EQ(D.val(0, j), w.plus) << int(w.rnd);
      EXPECT_EQ(D.val(1, j), w.minus) << int(w.rnd);
      for (int i = 2; i < 8; ++i) EXPECT_EQ(D.val(i, j), 1.0);
    }
  }
}

TEST(TensorMmaShapes, M16n8k4Tf32IgnoresLow13Bits) {
  std::mt19937 rng(8);
  T::MmaDesc d = desc4(MmaShape::M16N8K4, ElemType::TF32, ElemType::F32, ElemType::F32);
  Mat A = random_mat(16, 4, ElemType::TF32, rng, false), B = random_mat(4, 8, ElemType::TF32, rng, false);
  Mat C = random_mat(16, 8, ElemType::F32, rng, false);
  Mat D1 = run_isa_mma(d, A, B, C);
  for (auto& b : A.bits) b |= 0x1fffu;  // the largest value that truncates to the same tf32
  for (auto& b : B.bits) b |= 0x1000u;  // at least half an ulp of tf32: rounding would go up
  Mat D2 = run_isa_mma(d, A, B, C);
  EXPECT_EQ(D1.bits, D2.bits);
}

TEST(TensorMmaShapes, UnsupportedCombinationsAreRejected) {
  using S = MmaShape;
  using E = ElemType;
  std::vector<T::MmaDesc> bad = {
      desc4(S::M8N8K4, E::F16, E::F32, E::F32),   desc4(S::M8N8K4, E::F64, E::F32, E::F64),
      desc4(S::M16N8K32, E::F16, E::F32, E::F32), desc4(S::M16N8K4, E::BF16, E::F32, E::F32),
      desc4(S::M8N8K16, E::S8, E::S32, E::F32),   desc4(S::M16N8K32, E::S8, E::F32, E::F32),
      desc4(S::M16N8K8, E::S8, E::S32, E::S32),   desc4(S::M16N8K16, E::F16, E::F32, E::F32),
      desc4(S::M16N8K16, E::TF32, E::F32, E::F32)};
  bad[7].satfinite = true;  // .satfinite on floating point
  T::MmaDesc mixed = desc4(S::M16N8K32, E::S8, E::S32, E::S32);
  mixed.b = E::F16;
  bad.push_back(mixed);
  T::MmaDesc rz = desc4(S::M16N8K8, E::TF32, E::F32, E::F32);
  rz.rnd = T::Rnd::RZ;  // rounding modifiers are for f64 only
  bad.push_back(rz);
  WarpFrag z{};
  for (const auto& d : bad) {
    EXPECT_NE(T::mma_unsupported_reason(d), "") << dname(d);
    EXPECT_THROW(T::mma_sync(d, z, z, z, z), T::TensorError) << dname(d);
  }
}

// =============================================================================================
// fp8 mma (.e4m3 / .e5m2 multiplicands, sm_89+)

TEST(TensorMmaFp8, DecodesEveryEncodingAsTheFormatDefines) {
  for (int c = 0; c < 256; ++c) {
    const uint8_t b = static_cast<uint8_t>(c);
    const double e4 = T::e4m3_to_double(b), e5 = T::e5m2_to_double(b);
    if (std::isnan(ref_e4m3(b))) {
      EXPECT_TRUE(std::isnan(e4)) << c;
    } else {
      EXPECT_EQ(e4, ref_e4m3(b)) << c;
      EXPECT_EQ(std::signbit(e4), std::signbit(ref_e4m3(b))) << c;
    }
    if (std::isnan(ref_e5m2(b))) {
      EXPECT_TRUE(std::isnan(e5)) << c;
    } else {
      EXPECT_EQ(e5, ref_e5m2(b)) << c;
      EXPECT_EQ(std::signbit(e5), std::signbit(ref_e5m2(b))) << c;
    }
  }
  // Landmarks of the definitions.
  EXPECT_EQ(T::e4m3_to_double(0x7e), 448.0);
  EXPECT_TRUE(std::isnan(T::e4m3_to_double(0x7f)));
  EXPECT_TRUE(std::isnan(T::e4m3_to_double(0xff)));
  EXPECT_EQ(T::e4m3_to_double(0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(T::e4m3_to_double(0x08), std::ldexp(1.0, -6));
  EXPECT_EQ(T::e4m3_to_double(0x38), 1.0);
  EXPECT_EQ(T::e5m2_to_double(0x7b), 57344.0);
  EXPECT_EQ(T::e5m2_to_double(0x7c), INFINITY);
  EXPECT_EQ(T::e5m2_to_double(0xfc), -INFINITY);
  EXPECT_TRUE(std::isnan(T::e5m2_to_double(0x7d)));
  EXPECT_EQ(T::e5m2_to_double(0x01), std::ldexp(1.0, -16));
  EXPECT_EQ(T::e5m2_to_double(0x3c), 1.0);
}

TEST(TensorMmaFp8, RandomMatricesMatchTheIsaLayoutsAndNaiveMatmul) {
  uint32_t seed = 5000;
  for (MmaShape s : {MmaShape::M16N8K16, MmaShape::M16N8K32}) {
    for (ElemType a : {ElemType::E4M3, ElemType::E5M2}) {
      for (ElemType b : {ElemType::E4M3, ElemType::E5M2}) {
        for (ElemType acc : {ElemType::F32, ElemType::F16}) {
          T::MmaDesc d = desc4(s, a, acc, acc);
          d.b = b;
          for (int rep = 0; rep < 5; ++rep) run_random_mma(d, seed++, false);
          for (int rep = 0; rep < 2; ++rep) run_random_mma(d, seed++, true);
        }
      }
    }
  }
}

TEST(TensorMmaFp8, UnsupportedCombinationsAreRejected) {
  using S = MmaShape;
  using E = ElemType;
  std::vector<T::MmaDesc> bad = {
      desc4(S::M16N8K32, E::E4M3, E::F16, E::F32),  // ptxas: .ctype must be .dtype for fp8
      desc4(S::M16N8K16, E::E5M2, E::F32, E::F16),
      desc4(S::M16N8K32, E::E4M3, E::S32, E::S32),  // no integer accumulator
      desc4(S::M16N8K8, E::E4M3, E::F32, E::F32),   // no fp8 m16n8k8, m8n8k16, m16n8k4
      desc4(S::M8N8K16, E::E5M2, E::F32, E::F32),
      desc4(S::M16N8K4, E::E4M3, E::F32, E::F32),
      desc4(S::M16N8K32, E::E4M3, E::F32, E::F32)};
  bad.back().satfinite = true;  // .satfinite is for integers
  T::MmaDesc mixed = desc4(S::M16N8K32, E::E4M3, E::F32, E::F32);
  mixed.b = E::S8;  // fp8 with an integer multiplicand
  bad.push_back(mixed);
  WarpFrag z{};
  for (const auto& d : bad) {
    EXPECT_NE(T::mma_unsupported_reason(d), "") << dname(d);
    EXPECT_THROW(T::mma_sync(d, z, z, z, z), T::TensorError) << dname(d);
  }
}

// =============================================================================================
// wmma shapes beyond m16n16k16

namespace {

using T::WmmaShape;

struct WmmaKind {
  WmmaShape shape;
  ElemType ab, c, d;
};

const WmmaKind kWmmaKinds[] = {
    {WmmaShape::M16N16K16, ElemType::S8, ElemType::S32, ElemType::S32},
    {WmmaShape::M16N16K16, ElemType::U8, ElemType::S32, ElemType::S32},
    {WmmaShape::M32N8K16, ElemType::F16, ElemType::F32, ElemType::F32},
    {WmmaShape::M32N8K16, ElemType::F16, ElemType::F16, ElemType::F16},
    {WmmaShape::M32N8K16, ElemType::BF16, ElemType::F32, ElemType::F32},
    {WmmaShape::M32N8K16, ElemType::S8, ElemType::S32, ElemType::S32},
    {WmmaShape::M32N8K16, ElemType::U8, ElemType::S32, ElemType::S32},
    {WmmaShape::M8N32K16, ElemType::F16, ElemType::F32, ElemType::F16},
    {WmmaShape::M8N32K16, ElemType::F16, ElemType::F16, ElemType::F32},
    {WmmaShape::M8N32K16, ElemType::BF16, ElemType::F32, ElemType::F32},
    {WmmaShape::M8N32K16, ElemType::S8, ElemType::S32, ElemType::S32},
    {WmmaShape::M8N32K16, ElemType::U8, ElemType::S32, ElemType::S32},
    {WmmaShape::M16N16K8, ElemType::TF32, ElemType::F32, ElemType::F32},
    {WmmaShape::M8N8K4, ElemType::F64, ElemType::F64, ElemType::F64},
};

std::string wname(const WmmaKind& k) {
  return std::string("wmma.") + T::to_string(k.shape) + "." + T::to_string(k.d) + "." +
         T::to_string(k.ab) + "." + T::to_string(k.c);
}

}  // namespace

TEST(TensorWmmaShapes, RegisterCountsMatchNvcc) {
  // From nvcc 13 -arch=sm_90 PTX of load_matrix_sync / mma_sync on each fragment type.
  struct R {
    WmmaShape s;
    WmmaMatrix m;
    ElemType t;
    int regs;
  };
  using S = WmmaShape;
  using M = WmmaMatrix;
  using E = ElemType;
  const R rs[] = {
      {S::M16N16K16, M::A, E::S8, 2},  {S::M16N16K16, M::B, E::S8, 2},
      {S::M16N16K16, M::C, E::S32, 8}, {S::M32N8K16, M::A, E::S8, 4},
      {S::M32N8K16, M::B, E::S8, 1},   {S::M8N32K16, M::A, E::U8, 1},
      {S::M8N32K16, M::B, E::U8, 4},   {S::M32N8K16, M::C, E::S32, 8},
      {S::M32N8K16, M::A, E::F16, 8},  {S::M32N8K16, M::B, E::F16, 8},
      {S::M8N32K16, M::A, E::F16, 8},  {S::M8N32K16, M::B, E::F16, 8},
      {S::M32N8K16, M::A, E::BF16, 8}, {S::M32N8K16, M::B, E::BF16, 2},
      {S::M8N32K16, M::A, E::BF16, 2}, {S::M8N32K16, M::B, E::BF16, 8},
      {S::M32N8K16, M::C, E::F32, 8},  {S::M8N32K16, M::C, E::F16, 4},
      {S::M16N16K8, M::A, E::TF32, 4}, {S::M16N16K8, M::B, E::TF32, 4},
      {S::M16N16K8, M::C, E::F32, 8},  {S::M8N8K4, M::A, E::F64, 1},
      {S::M8N8K4, M::B, E::F64, 1},    {S::M8N8K4, M::C, E::F64, 2},
      {S::M16N16K8, M::A, E::F16, 0},  {S::M8N8K4, M::C, E::F32, 0},
      {S::M32N8K16, M::C, E::F64, 0},  {S::M16N16K16, M::A, E::TF32, 0},
  };
  for (const R& r : rs) {
    EXPECT_EQ(T::wmma_regs(r.s, r.m, r.t), r.regs)
        << T::to_string(r.s) << " " << int(r.m) << " " << T::to_string(r.t);
  }
}

TEST(TensorWmmaShapes, DefaultStridesAsTheIsaTable) {
  // "Default value for stride": A (row, column), B (row, column), accumulator (row, column).
  struct D {
    WmmaShape s;
    uint32_t v[6];
  };
  const D ds[] = {{WmmaShape::M16N16K16, {16, 16, 16, 16, 16, 16}},
                  {WmmaShape::M8N32K16, {16, 8, 32, 16, 32, 8}},
                  {WmmaShape::M32N8K16, {16, 32, 8, 16, 8, 32}},
                  {WmmaShape::M16N16K8, {8, 16, 16, 8, 16, 16}},
                  {WmmaShape::M8N8K4, {4, 8, 8, 4, 8, 8}}};
  for (const D& d : ds) {
    int i = 0;
    for (WmmaMatrix m : {WmmaMatrix::A, WmmaMatrix::B, WmmaMatrix::C}) {
      for (Layout l : {Layout::Row, Layout::Col}) {
        EXPECT_EQ(T::wmma_default_stride(d.s, m, l), d.v[i++]) << T::to_string(d.s);
      }
    }
  }
}

TEST(TensorWmmaShapes, EveryElementHeldOnce) {
  for (const WmmaKind& k : kWmmaKinds) {
    for (WmmaMatrix m : {WmmaMatrix::A, WmmaMatrix::B, WmmaMatrix::C}) {
      for (ElemType t : m == WmmaMatrix::C ? std::vector<ElemType>{k.c, k.d}
                                           : std::vector<ElemType>{k.ab}) {
        const T::RowCol dims = T::wmma_dims(k.shape, m);
        const int nregs = T::wmma_regs(k.shape, m, t), per = per_reg(t);
        ASSERT_GT(nregs, 0) << wname(k);
        // Registers beyond the distinct ones repeat them (f16 multiplicands).
        const int distinct = dims.row * dims.col / (32 * per);
        std::map<std::pair<int, int>, int> count;
        for (int lane = 0; lane < 32; ++lane) {
          for (int r = 0; r < nregs; ++r) {
            for (int e = 0; e < per; ++e) {
              T::RowCol rc = T::wmma_element(k.shape, m, t, lane, r, e);
              ASSERT_TRUE(rc.row >= 0 && rc.row < dims.row && rc.col >= 0 && rc.col < dims.col);
              if (r < distinct) {
                ++count[{rc.row, rc.col}];
              } else {
                T::RowCol p = T::wmma_element(k.shape, m, t, lane, r % distinct, e);
                EXPECT_EQ(rc.row, p.row);
                EXPECT_EQ(rc.col, p.col);
              }
            }
          }
        }
        EXPECT_EQ(static_cast<int>(count.size()), dims.row * dims.col) << wname(k);
        for (auto& kv : count) EXPECT_EQ(kv.second, 1) << wname(k);
      }
    }
  }
}

TEST(TensorWmmaShapes, LoadMmaStoreAllLayouts) {
  std::mt19937 rng(77);
  for (const WmmaKind& k : kWmmaKinds) {
    for (Layout la : {Layout::Row, Layout::Col}) {
      for (Layout lb : {Layout::Row, Layout::Col}) {
        for (Layout ld : {Layout::Row, Layout::Col}) {
          for (bool small_int : {false, true}) {
            for (bool sat : {false, true}) {
              if (sat && !is8(k.ab)) continue;
              const std::string what = wname(k) + " A " + lname(la) + " B " + lname(lb) +
                                       " D " + lname(ld) + (small_int ? " int" : "") +
                                       (sat ? " satfinite" : "");
              const T::RowCol da = T::wmma_dims(k.shape, WmmaMatrix::A),
                              db = T::wmma_dims(k.shape, WmmaMatrix::B),
                              dc = T::wmma_dims(k.shape, WmmaMatrix::C);
              Mat A = random_mat(da.row, da.col, k.ab, rng, small_int);
              Mat B = random_mat(db.row, db.col, k.ab, rng, small_int);
              Mat C = random_mat(dc.row, dc.col, k.c, rng, small_int);
              if (sat) {  // overflow upward in row 0
                for (int j = 0; j < dc.col; ++j) C.at(0, j) = static_cast<uint32_t>(INT32_MAX - 5);
                for (int kk = 0; kk < da.col; ++kk) A.at(0, kk) = 100;
                for (int kk = 0; kk < db.row; ++kk)
                  for (int j = 0; j < db.col; ++j) B.at(kk, j) = 100;
              }
              Memory mem(1 << 16);
              // Padded strides (a submatrix of a bigger one), 16-byte multiples.
              const uint64_t a_base = 0x0000, b_base = 0x2000, c_base = 0x4000, d_base = 0x8000;
              auto padded = [&](const T::RowCol& dims, Layout l, ElemType t) {
                const uint32_t lead = static_cast<uint32_t>(l == Layout::Row ? dims.col : dims.row);
                const uint32_t unit = 16 / esize(t);  // elements in 16 bytes
                return (lead + unit - 1) / unit * unit + 2 * unit;
              };
              const uint32_t sa = padded(da, la, k.ab), sb = padded(db, lb, k.ab),
                             sc = padded(dc, Layout::Row, k.c), sd = padded(dc, ld, k.d);
              store_mat(mem, A, la, a_base, sa);
              store_mat(mem, B, lb, b_base, sb);
              store_mat(mem, C, Layout::Row, c_base, sc);
              for (size_t i = d_base; i < mem.bytes.size(); ++i) mem.bytes[i] = 0xa5;
              WarpFrag fa, fb, fc, fd;
              T::wmma_load(k.shape, WmmaMatrix::A, la, k.ab, a_base, sa, mem.reader(), fa);
              T::wmma_load(k.shape, WmmaMatrix::B, lb, k.ab, b_base, sb, mem.reader(), fb);
              T::wmma_load(k.shape, WmmaMatrix::C, Layout::Row, k.c, c_base, sc, mem.reader(), fc);
              T::WmmaDesc desc{k.shape, k.ab, k.c, k.d, sat};
              ASSERT_EQ(T::wmma_mma_unsupported_reason(desc), "") << what;
              T::wmma_mma(desc, fa, fb, fc, fd);
              T::wmma_store(k.shape, ld, k.d, d_base, sd, fd, mem.writer());
              EXPECT_EQ(static_cast<int>(mem.writes.size()), dc.row * dc.col) << what;
              Mat D = load_mat(mem, k.d, ld, d_base, sd, dc.row, dc.col);
              if (k.d == ElemType::S32) {
                for (int i = 0; i < dc.row; ++i) {
                  for (int j = 0; j < dc.col; ++j) {
                    int64_t s = static_cast<int32_t>(C.at(i, j));
                    for (int kk = 0; kk < da.col; ++kk)
                      s += static_cast<int64_t>(A.val(i, kk)) * static_cast<int64_t>(B.val(kk, j));
                    ASSERT_EQ(static_cast<int32_t>(D.at(i, j)), int_result(s, sat))
                        << what << " D[" << i << "][" << j << "]";
                  }
                }
                continue;
              }
              std::vector<double> ref, mag;
              naive(A, B, C, ref, mag);
              if (k.d == ElemType::F64) {
                for (int i = 0; i < dc.row * dc.col; ++i) {
                  EXPECT_NEAR(D.val(i / dc.col, i % dc.col), ref[i],
                              small_int ? 0 : 4 * std::ldexp(mag[i], -52))
                      << what;
                }
                continue;
              }
              expect_close(D, ref, mag, small_int, what);
            }
          }
        }
      }
    }
  }
}

TEST(TensorWmmaShapes, UnsupportedCombinationsAreRejected) {
  using S = WmmaShape;
  using E = ElemType;
  const T::WmmaDesc bad[] = {
      {S::M16N16K16, E::S8, E::F32, E::F32},  {S::M16N16K16, E::F16, E::F32, E::F32, true},
      {S::M16N16K8, E::F16, E::F32, E::F32},  {S::M16N16K8, E::TF32, E::F16, E::F32},
      {S::M8N8K4, E::F64, E::F32, E::F64},    {S::M32N8K16, E::BF16, E::F16, E::F16},
      {S::M8N32K16, E::TF32, E::F32, E::F32}, {S::M32N8K16, E::F16, E::F32, E::F32, false, T::Rnd::RZ},
  };
  WarpFrag z{};
  for (const auto& d : bad) {
    EXPECT_NE(T::wmma_mma_unsupported_reason(d), "");
    EXPECT_THROW(T::wmma_mma(d, z, z, z, z), T::TensorError);
  }
  T::WmmaDesc f64rz{S::M8N8K4, E::F64, E::F64, E::F64, false, T::Rnd::RZ};
  EXPECT_EQ(T::wmma_mma_unsupported_reason(f64rz), "");
}

TEST(TensorWmmaShapes, StrideAlignment) {
  Memory mem(1 << 14);
  WarpFrag f{};
  using S = WmmaShape;
  // One-register u8 fragments (B of m32n8k16): the default stride of 8 bytes is aligned.
  EXPECT_NO_THROW(T::wmma_load(S::M32N8K16, WmmaMatrix::B, Layout::Row, ElemType::U8, 64, 8,
                               mem.reader(), f));
  EXPECT_NO_THROW(T::wmma_load(S::M8N32K16, WmmaMatrix::A, Layout::Col, ElemType::S8, 64, 12,
                               mem.reader(), f));
  EXPECT_THROW(T::wmma_load(S::M32N8K16, WmmaMatrix::B, Layout::Row, ElemType::U8, 64, 6,
                            mem.reader(), f),
               T::TensorError);
  // Two-register s8 fragments (m16n16k16): 8 bytes.
  EXPECT_THROW(T::wmma_load(S::M16N16K16, WmmaMatrix::A, Layout::Row, ElemType::S8, 64, 20,
                            mem.reader(), f),
               T::TensorError);
  EXPECT_NO_THROW(T::wmma_load(S::M16N16K16, WmmaMatrix::A, Layout::Row, ElemType::S8, 64, 24,
                               mem.reader(), f));
  // Fragments of 16 bytes and more: the programming guide's 16 bytes.
  EXPECT_THROW(T::wmma_load(S::M16N16K8, WmmaMatrix::A, Layout::Row, ElemType::TF32, 64, 10,
                            mem.reader(), f),
               T::TensorError);
  EXPECT_NO_THROW(T::wmma_load(S::M8N8K4, WmmaMatrix::A, Layout::Row, ElemType::F64, 64, 4,
                               mem.reader(), f));
  // f64: single-register (8-byte) fragments; any stride of whole elements is aligned.
  EXPECT_NO_THROW(T::wmma_load(S::M8N8K4, WmmaMatrix::A, Layout::Row, ElemType::F64, 64, 5,
                               mem.reader(), f));
  EXPECT_THROW(T::wmma_store(S::M8N8K4, Layout::Row, ElemType::F64, 48, 8, f, mem.writer()),
               T::TensorError);
}

// =============================================================================================
// The accumulation model (tensor.h, Accum): exact by default; truncate:N cuts every addend below
// 2^(e - N + 1), e the exponent of the largest-magnitude addend (2^e <= |x| < 2^(e+1)), sums the
// cut addends exactly and rounds toward zero to f32. The expected values below are worked out
// by hand from that definition.

namespace {

T::Accum truncate_n(int n) {
  T::Accum a;
  a.mode = T::Accum::Mode::Truncate;
  a.bits = n;
  return a;
}

// The fp8 code of v (found through the reference decoders).
uint8_t fp8_code(ElemType t, double v) {
  for (int c = 0; c < 256; ++c) {
    const double x = t == ElemType::E4M3 ? ref_e4m3(static_cast<uint8_t>(c))
                                         : ref_e5m2(static_cast<uint8_t>(c));
    if (x == v && std::signbit(x) == std::signbit(v)) return static_cast<uint8_t>(c);
  }
  ADD_FAILURE() << v << " is not a " << T::to_string(t) << " value";
  return 0;
}

// D[0][0] of mma.m16n8k32.row.col.f32.e4m3.<bt>.f32 under `accum`, with C[0][0] = c and the
// products a[k] * b[k] in row 0 of A and column 0 of B (every other element +0).
float one_output(const T::Accum& accum, float c, const std::vector<double>& a,
                 const std::vector<double>& b, ElemType bt = ElemType::E4M3) {
  T::MmaDesc d = desc4(MmaShape::M16N8K32, ElemType::E4M3, ElemType::F32, ElemType::F32);
  d.b = bt;
  d.accum = accum;
  Mat A{16, 32, ElemType::E4M3, std::vector<uint64_t>(16 * 32, 0)};
  Mat B{32, 8, bt, std::vector<uint64_t>(32 * 8, 0)};
  Mat C{16, 8, ElemType::F32, std::vector<uint64_t>(16 * 8, 0)};
  for (size_t k = 0; k < a.size(); ++k) {
    A.at(0, static_cast<int>(k)) = fp8_code(ElemType::E4M3, a[k]);
    B.at(static_cast<int>(k), 0) = fp8_code(bt, b[k]);
  }
  C.at(0, 0) = f32_bits(c);
  return bits_f32(static_cast<uint32_t>(run_isa_mma(d, A, B, C).at(0, 0)));
}

}  // namespace

TEST(TensorAccum, ParsesTheModels) {
  T::Accum a = truncate_n(5);
  EXPECT_EQ(T::parse_accum("exact", &a), "");
  EXPECT_EQ(a.mode, T::Accum::Mode::Exact);
  EXPECT_EQ(T::parse_accum("truncate:14", &a), "");
  EXPECT_EQ(a.mode, T::Accum::Mode::Truncate);
  EXPECT_EQ(a.bits, 14);
  EXPECT_EQ(T::parse_accum("truncate:1", &a), "");
  EXPECT_EQ(a.bits, 1);
  EXPECT_EQ(T::parse_accum("truncate:63", &a), "");
  EXPECT_EQ(a.bits, 63);
  for (const char* bad : {"", "Exact", " exact", "truncate", "truncate:", "truncate:0",
                          "truncate:64", "truncate:-1", "truncate:x", "truncate:14x",
                          "truncate:014", "truncate: 14", "round:14"}) {
    T::Accum b = truncate_n(7);
    EXPECT_NE(T::parse_accum(bad, &b), "") << bad;
    EXPECT_EQ(b.bits, 7) << bad << ": left unchanged";
  }
}

TEST(TensorAccum, TruncateKeepsNBitsBelowTheLargestAddend) {
  const T::Accum exact;
  // C = 2^20, one product 1.5 * 1. e = 20. N = 14: kept bits weigh 2^7 and more, so 1.5 is cut
  // to 0 and D = 2^20. N = 24: 2^-3 and more, 1.5 = 12 * 2^-3 stays: D = 2^20 + 1.5 (an f32:
  // the spacing at 2^20 is 2^-3). Exact: the same.
  EXPECT_EQ(one_output(truncate_n(14), 1048576.f, {1.5}, {1.0}), 1048576.f);
  EXPECT_EQ(one_output(truncate_n(24), 1048576.f, {1.5}, {1.0}), 1048577.5f);
  EXPECT_EQ(one_output(exact, 1048576.f, {1.5}, {1.0}), 1048577.5f);
  // C = 2^10, e = 10. N = 12: bits of 2^-1 and more, 1.5 stays: 1025.5. N = 11: bits of 2^0 and
  // more, 1.5 is cut to 1: 1025; 0.875 is cut to 0: 1024; -1.5 to -1 (toward zero): 1023 (exact:
  // 1022.5).
  EXPECT_EQ(one_output(truncate_n(12), 1024.f, {1.5}, {1.0}), 1025.5f);
  EXPECT_EQ(one_output(truncate_n(11), 1024.f, {1.5}, {1.0}), 1025.f);
  EXPECT_EQ(one_output(truncate_n(11), 1024.f, {0.875}, {1.0}), 1024.f);
  EXPECT_EQ(one_output(truncate_n(11), 1024.f, {-1.5}, {1.0}), 1023.f);
  EXPECT_EQ(one_output(exact, 1024.f, {-1.5}, {1.0}), 1022.5f);
  // Many small products: C = 2^13 and 32 products 0.875 * 1 (28 in all). N = 14: e = 13, bits
  // of 2^0 and more: every 0.875 is cut to 0, D = 8192. N = 17: bits of 2^-3 and more, 0.875 =
  // 7 * 2^-3 stays: 8220, as exact.
  const std::vector<double> small(32, 0.875), ones(32, 1.0);
  EXPECT_EQ(one_output(truncate_n(14), 8192.f, small, ones), 8192.f);
  EXPECT_EQ(one_output(truncate_n(17), 8192.f, small, ones), 8220.f);
  EXPECT_EQ(one_output(exact, 8192.f, small, ones), 8220.f);
  // The largest addend a product: 448 * 448 = 200704 (e = 17), C = 0.25, another product 15.
  // N = 14: bits of 2^4 and more: 200704 = 12544 * 2^4 stays, 0.25 and 15 are cut: 200704.
  // Exact: 200719.25.
  EXPECT_EQ(one_output(truncate_n(14), 0.25f, {448, 15}, {448, 1}), 200704.f);
  EXPECT_EQ(one_output(exact, 0.25f, {448, 15}, {448, 1}), 200719.25f);
  // The final conversion rounds toward zero: C = 2^24, product 1.5, N = 40: the cut sum is
  // 2^24 + 1.5, whose neighbours in f32 are 2^24 and 2^24 + 2: 2^24. Exact (to nearest): 2^24 + 2.
  EXPECT_EQ(one_output(truncate_n(40), 16777216.f, {1.5}, {1.0}), 16777216.f);
  EXPECT_EQ(one_output(exact, 16777216.f, {1.5}, {1.0}), 16777218.f);
  // An exact cancellation gives +0; negative values truncate toward zero in magnitude:
  // C = -2^10, product -1.5, N = 11: -1025 (exact -1025.5).
  EXPECT_EQ(f32_bits(one_output(truncate_n(11), 1024.f, {-256}, {4})), 0u);
  EXPECT_EQ(one_output(truncate_n(11), -1024.f, {-1.5}, {1.0}), -1025.f);
}

TEST(TensorAccum, TruncateSpecialValues) {
  // e5m2 B: infinity; e4m3 A: 0x7f is NaN.
  T::MmaDesc d = desc4(MmaShape::M16N8K32, ElemType::E4M3, ElemType::F32, ElemType::F32);
  d.b = ElemType::E5M2;
  d.accum = truncate_n(14);
  Mat A{16, 32, ElemType::E4M3, std::vector<uint64_t>(16 * 32, 0)};
  Mat B{32, 8, ElemType::E5M2, std::vector<uint64_t>(32 * 8, 0)};
  Mat C{16, 8, ElemType::F32, std::vector<uint64_t>(16 * 8, 0)};
  // D(0,0) = 1 * +inf = +inf; D(1,2) = 1 * +inf + 1 * -inf = NaN; D(2,1) = NaN * 1 = NaN;
  // D(3,3): 32 products -0 * +0 and C = -0: -0; D(4,3): one product -0, C = +0: +0. (No other
  // product of those outputs meets an infinity: 0 * inf would be NaN.)
  B.at(0, 0) = 0x7c;  // +inf
  B.at(0, 2) = 0x7c;
  B.at(1, 2) = 0xfc;  // -inf
  B.at(2, 1) = fp8_code(ElemType::E5M2, 1.0);
  A.at(0, 0) = A.at(1, 0) = A.at(1, 1) = fp8_code(ElemType::E4M3, 1.0);
  A.at(2, 2) = 0x7f;
  for (int k = 0; k < 32; ++k) A.at(3, k) = 0x80;  // -0
  C.at(3, 3) = f32_bits(-0.f);
  A.at(4, 3) = 0x80;
  const Mat D = run_isa_mma(d, A, B, C);
  EXPECT_EQ(D.at(0, 0), 0x7f800000u);
  EXPECT_TRUE(std::isnan(bits_f32(static_cast<uint32_t>(D.at(1, 2)))));
  EXPECT_TRUE(std::isnan(bits_f32(static_cast<uint32_t>(D.at(2, 1)))));
  EXPECT_EQ(D.at(3, 3), 0x80000000u);
  EXPECT_EQ(D.at(4, 3), 0u);
}

TEST(TensorAccum, AppliesToEveryFloatMultiplicandWithF32ResultsOnly) {
  // f16 mma.m16n8k16 and bf16 mma: C = 2^20, product 1.5 * 1, N = 14 -> 2^20 (see above).
  for (ElemType t : {ElemType::F16, ElemType::BF16}) {
    T::MmaDesc d = desc4(MmaShape::M16N8K16, t, ElemType::F32, ElemType::F32);
    d.accum = truncate_n(14);
    const uint64_t one = t == ElemType::F16 ? 0x3c00 : 0x3f80, one_half = t == ElemType::F16 ? 0x3e00 : 0x3fc0;
    Mat A{16, 16, t, std::vector<uint64_t>(16 * 16, 0)};
    Mat B{16, 8, t, std::vector<uint64_t>(16 * 8, 0)};
    Mat C{16, 8, ElemType::F32, std::vector<uint64_t>(16 * 8, 0)};
    A.at(0, 5) = one_half;
    B.at(5, 0) = one;
    C.at(0, 0) = f32_bits(1048576.f);
    EXPECT_EQ(bits_f32(static_cast<uint32_t>(run_isa_mma(d, A, B, C).at(0, 0))), 1048576.f)
        << T::to_string(t);
    d.accum = T::Accum{};
    EXPECT_EQ(bits_f32(static_cast<uint32_t>(run_isa_mma(d, A, B, C).at(0, 0))), 1048577.5f)
        << T::to_string(t);
  }
  // An f16 result keeps its arithmetic (exact sum rounded once to nearest even): C = 1024 (f16),
  // product 1.5: 1025.5 lies halfway between the f16 values 1025 and 1026: 1026, under
  // truncate:11 too (which would give 1025).
  T::MmaDesc d = desc4(MmaShape::M16N8K32, ElemType::E4M3, ElemType::F16, ElemType::F16);
  d.accum = truncate_n(11);
  Mat A{16, 32, ElemType::E4M3, std::vector<uint64_t>(16 * 32, 0)};
  Mat B{32, 8, ElemType::E4M3, std::vector<uint64_t>(32 * 8, 0)};
  Mat C{16, 8, ElemType::F16, std::vector<uint64_t>(16 * 8, 0)};
  A.at(0, 0) = fp8_code(ElemType::E4M3, 1.5);
  B.at(0, 0) = fp8_code(ElemType::E4M3, 1.0);
  C.at(0, 0) = 0x6400;  // 1024
  EXPECT_EQ(run_isa_mma(d, A, B, C).at(0, 0), 0x6402u);  // 1026
  // wmma.mma m16n16k16 .f32.f16: the same first case, C = 2^20 at (0, 0), A(0, 3) = 1.5,
  // B(3, 0) = 1; the fragments are filled through wmma_element.
  WarpFrag fa{}, fb{}, fc{}, fd{};
  for (int lane = 0; lane < 32; ++lane) {
    for (int r = 0; r < T::wmma_regs(WmmaMatrix::A, ElemType::F16); ++r)
      for (int e = 0; e < 2; ++e) {
        const T::RowCol rc = T::wmma_element(WmmaMatrix::A, ElemType::F16, lane, r, e);
        if (rc.row == 0 && rc.col == 3) fa[lane][r] |= uint64_t{0x3e00} << (16 * e);
        const T::RowCol rb = T::wmma_element(WmmaMatrix::B, ElemType::F16, lane, r, e);
        if (rb.row == 3 && rb.col == 0) fb[lane][r] |= uint64_t{0x3c00} << (16 * e);
      }
    for (int r = 0; r < T::wmma_regs(WmmaMatrix::C, ElemType::F32); ++r) {
      const T::RowCol rc = T::wmma_element(WmmaMatrix::C, ElemType::F32, lane, r, 0);
      if (rc.row == 0 && rc.col == 0) fc[lane][r] = f32_bits(1048576.f);
    }
  }
  T::WmmaDesc w;
  w.accum = truncate_n(14);
  T::wmma_mma(w, fa, fb, fc, fd);
  int found = 0;
  for (int lane = 0; lane < 32; ++lane)
    for (int r = 0; r < T::wmma_regs(WmmaMatrix::C, ElemType::F32); ++r) {
      const T::RowCol rc = T::wmma_element(WmmaMatrix::C, ElemType::F32, lane, r, 0);
      if (rc.row == 0 && rc.col == 0) {
        EXPECT_EQ(bits_f32(static_cast<uint32_t>(fd[lane][r])), 1048576.f);
        ++found;
      }
    }
  EXPECT_EQ(found, 1);
}
