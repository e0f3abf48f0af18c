// fp8 tensor-core mma (sm_89 and later):
//   mma.sync.aligned.{m16n8k32,m16n8k16}.row.col.{f32,f16}.{e4m3,e5m2}.{e4m3,e5m2}.{f32,f16}
// every pair of multiplicand types, with f32 and with f16 accumulators (C and D of one type:
// ptxas refuses the mixed forms). Operands are placed by the ISA's fragment formulas, which for
// .e4m3 / .e5m2 are those of .s8 / .u8 ("Matrix Fragments for mma.m16n8k32" and "... mma.m16n8k16
// with integer type"): four elements per .b32 register, the lowest-indexed in bits 0-7.
//
// Expected values: a host GEMM on the fp8 values decoded here from the formats' definitions,
// independently of the emulator:
//   e4m3: sign, 4 exponent bits (bias 7), 3 fraction bits; exponent field 0 is subnormal
//         (fraction/8 * 2^-6); S.1111.111 is NaN, the only one; no infinity; largest 448.
//   e5m2: sign, 5 exponent bits (bias 15), 2 fraction bits, IEEE-like: exponent field 31 is
//         infinity (fraction 0) or NaN; subnormals fraction/4 * 2^-14; largest 57344.
// The ISA leaves the accumulation order, its internal precision and rounding unspecified, so the
// inputs are built for a unique answer: every value is a small integer times a power of two
// chosen per row of A and per column of B, so that all addends of one output element (the
// products and C) lie on the grid of their smallest unit, and every partial sum stays within 12
// bits of it. Every sum is then exact in the accumulator type and in any plausible accumulator
// that keeps 13 or more bits, and the results are compared bit for bit (a zero result matches
// either sign, which the ISA does not fix; a NaN result matches any NaN). Cases:
//   grid values, both shapes, both accumulators, the four type pairs; the scales reach down to
//     the subnormal fp8 encodings;
//   every finite encoding of each type, selected one per output by a 0/1 matrix on the other side;
//   many values: K = 512 (16 chained m16n8k32, D fed back as C);
//   NaN and infinity: a NaN input, an e5m2 infinity, and infinities of both signs in one sum.
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "conf_common.h"

namespace {

// ---------------------------------------------------------------------------------------------
// The formats, from their definitions.
// ---------------------------------------------------------------------------------------------
enum Fp8 { kE4M3, kE5M2 };

double e4m3_value(uint8_t b) {
  const int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
  if (e == 15 && m == 7) return NAN;
  const double mag = e == 0 ? std::ldexp(m, -9)          // m/8 * 2^(1-7)
                            : std::ldexp(8 + m, e - 10);  // (1 + m/8) * 2^(e-7)
  return s ? -mag : mag;
}
double e5m2_value(uint8_t b) {
  const int s = b >> 7, e = (b >> 2) & 31, m = b & 3;
  if (e == 31) return m ? NAN : (s ? -INFINITY : INFINITY);
  const double mag = e == 0 ? std::ldexp(m, -16)         // m/4 * 2^(1-15)
                            : std::ldexp(4 + m, e - 17);  // (1 + m/4) * 2^(e-15)
  return s ? -mag : mag;
}
double fp8_value(Fp8 t, uint8_t b) {
  return t == kE4M3 ? e4m3_value(b) : e5m2_value(b);
}

// The encoding of v in format t, found by search over the 256 codes (v must be one of them).
uint8_t fp8_code(Fp8 t, double v) {
  for (int c = 0; c < 256; ++c)
    if (fp8_value(t, uint8_t(c)) == v && std::signbit(fp8_value(t, uint8_t(c))) == std::signbit(v))
      return uint8_t(c);
  std::printf("fp8_mma: test bug: %g is not an %s value\n", v, t == kE4M3 ? "e4m3" : "e5m2");
  std::exit(1);
}

const char* fp8_name(Fp8 t) {
  return t == kE4M3 ? "e4m3" : "e5m2";
}

// ---------------------------------------------------------------------------------------------
// The kernel: one warp, `steps` mma along K (D fed back as C), A (16 x K*steps) and B
// (K*steps x 8) as fp8 bytes, row-major; C and D 16 x 8, f32 or f16 (as raw 16-bit patterns).
// ---------------------------------------------------------------------------------------------
// Fragment formulas (g = laneid >> 2, q = laneid % 4; element i of a_i / b_i / c_i):
//   m16n8k32: A row g for i in 0..3 and 8..11, else g + 8; col 4q + (i & 3) (+16 for i >= 8)
//             B row 4q + (i & 3) (+16 for i >= 4), col g
//   m16n8k16: A row g for i < 4, else g + 8; col 4q + (i & 3)
//             B row 4q + i, col g
//   C, D:     row g for i < 2, else g + 8; col 2q + (i & 1); f16: c0, c1 in the low and high
//             half of the first .f16x2 register, c2, c3 in the second
__device__ inline void frag_a(int K, int lane, int i, int* r, int* c) {
  const int g = lane >> 2, q = lane % 4;
  if (K == 32) {
    *r = (i < 4 || (i >= 8 && i < 12)) ? g : g + 8;
    *c = 4 * q + (i & 3) + (i >= 8 ? 16 : 0);
  } else {
    *r = i < 4 ? g : g + 8;
    *c = 4 * q + (i & 3);
  }
}
__device__ inline void frag_b(int K, int lane, int i, int* r, int* c) {
  const int g = lane >> 2, q = lane % 4;
  *r = K == 32 ? 4 * q + (i & 3) + (i >= 4 ? 16 : 0) : 4 * q + i;
  *c = g;
}
__device__ inline void frag_c(int lane, int i, int* r, int* c) {
  const int g = lane >> 2, q = lane % 4;
  *r = i < 2 ? g : g + 8;
  *c = 2 * q + (i & 1);
}

#define MMA_K32_F32(AT, BT)                                                                     \
  asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." AT "." BT                              \
               ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"          \
               : "+f"(df[0]), "+f"(df[1]), "+f"(df[2]), "+f"(df[3])                             \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
#define MMA_K32_F16(AT, BT)                                                                     \
  asm volatile("mma.sync.aligned.m16n8k32.row.col.f16." AT "." BT                              \
               ".f16 {%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%0, %1};"                          \
               : "+r"(dh[0]), "+r"(dh[1])                                                       \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
#define MMA_K16_F32(AT, BT)                                                                     \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." AT "." BT                              \
               ".f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"                      \
               : "+f"(df[0]), "+f"(df[1]), "+f"(df[2]), "+f"(df[3])                             \
               : "r"(a[0]), "r"(a[1]), "r"(b[0]))
#define MMA_K16_F16(AT, BT)                                                                     \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16." AT "." BT                              \
               ".f16 {%0, %1}, {%2, %3}, {%4}, {%0, %1};"                                      \
               : "+r"(dh[0]), "+r"(dh[1])                                                       \
               : "r"(a[0]), "r"(a[1]), "r"(b[0]))
// pair: bit 1 A is e5m2, bit 0 B is e5m2.
#define FP8_PAIRS(M)                 \
  switch (pair) {                    \
    case 0: M("e4m3", "e4m3"); break; \
    case 1: M("e4m3", "e5m2"); break; \
    case 2: M("e5m2", "e4m3"); break; \
    default: M("e5m2", "e5m2"); break; \
  }

template <int K, bool kF16Acc>
__global__ void k_mma_fp8(int pair, int steps, const uint8_t* A, const uint8_t* B, const void* C,
                          void* D) {
  const int lane = threadIdx.x, kt = K * steps;
  float df[4];
  uint32_t dh[2] = {0, 0};
  int r, c;
  for (int i = 0; i < 4; ++i) {
    frag_c(lane, i, &r, &c);
    if (kF16Acc) dh[i / 2] |= uint32_t(static_cast<const uint16_t*>(C)[r * 8 + c]) << (16 * (i % 2));
    else df[i] = static_cast<const float*>(C)[r * 8 + c];
  }
  for (int s = 0; s < steps; ++s) {
    uint32_t a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
    for (int i = 0; i < K / 2; ++i) {
      frag_a(K, lane, i, &r, &c);
      a[i / 4] |= uint32_t(A[r * kt + s * K + c]) << (8 * (i % 4));
    }
    for (int i = 0; i < K / 4; ++i) {
      frag_b(K, lane, i, &r, &c);
      b[i / 4] |= uint32_t(B[(s * K + r) * 8 + c]) << (8 * (i % 4));
    }
    if constexpr (K == 32 && kF16Acc) {
      FP8_PAIRS(MMA_K32_F16)
    } else if constexpr (K == 32) {
      FP8_PAIRS(MMA_K32_F32)
    } else if constexpr (kF16Acc) {
      FP8_PAIRS(MMA_K16_F16)
    } else {
      FP8_PAIRS(MMA_K16_F32)
    }
  }
  for (int i = 0; i < 4; ++i) {
    frag_c(lane, i, &r, &c);
    if (kF16Acc) static_cast<uint16_t*>(D)[r * 8 + c] = uint16_t(dh[i / 2] >> (16 * (i % 2)));
    else static_cast<float*>(D)[r * 8 + c] = df[i];
  }
}

// ---------------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------------
struct Lcg {
  uint32_t s;
  uint32_t next() {
    s = s * 1664525u + 1013904223u;
    return s >> 8;
  }
};

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
uint16_t f16_bits(__half h) {
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

// One case: the fp8 codes of A (16 x kt) and B (kt x 8), and C's values (16 x 8, each exact in
// the accumulator type).
struct Fp8Case {
  Fp8 at, bt;
  int kt;
  std::vector<uint8_t> A, B;
  std::vector<double> C;
};

Fp8Case make_case(int pair, int kt) {
  Fp8Case x;
  x.at = (pair & 2) ? kE5M2 : kE4M3;
  x.bt = (pair & 1) ? kE5M2 : kE4M3;
  x.kt = kt;
  x.A.assign(16 * kt, 0);
  x.B.assign(kt * 8, 0);
  x.C.assign(128, 0.0);
  return x;
}

// Compares one result with the exact value: bit for bit, a zero of either sign for a zero, any
// NaN for a NaN.
void check_result(const char* name, const char* input, bool f16acc, uint32_t got, double want) {
  __half h;
  const uint16_t low = uint16_t(got);
  std::memcpy(&h, &low, 2);
  const double g = f16acc ? double(__half2float(h)) : double(bits_f32(got));
  if (std::isnan(want)) {
    conf_check_text(name, input, std::isnan(g), conf_fmt("%g", g).s, "NaN");
  } else if (want == 0) {
    conf_check_text(name, input, g == 0, conf_fmt("%g", g).s, "0 (either sign)");
  } else if (f16acc) {
    conf_check_bits(name, input, got & 0xffffu, f16_bits(__float2half(float(want))), 16);
  } else {
    conf_check_bits(name, input, got, f32_bits(float(want)), 32);
  }
}

template <int K, bool kF16Acc>
void run_case(const Fp8Case& x, const char* what) {
  const int steps = x.kt / K;
  std::vector<uint8_t> Cbytes(128 * (kF16Acc ? 2 : 4));
  for (int i = 0; i < 128; ++i) {
    if (kF16Acc) {
      const uint16_t h = f16_bits(__float2half(float(x.C[i])));
      std::memcpy(&Cbytes[2 * i], &h, 2);
    } else {
      const float f = float(x.C[i]);
      std::memcpy(&Cbytes[4 * i], &f, 4);
    }
  }
  uint8_t *dA, *dB, *dC, *dD;
  CUDA_CHECK(cudaMalloc(&dA, x.A.size()));
  CUDA_CHECK(cudaMalloc(&dB, x.B.size()));
  CUDA_CHECK(cudaMalloc(&dC, Cbytes.size()));
  CUDA_CHECK(cudaMalloc(&dD, Cbytes.size()));
  CUDA_CHECK(cudaMemcpy(dA, x.A.data(), x.A.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dB, x.B.data(), x.B.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dC, Cbytes.data(), Cbytes.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dD, 0xff, Cbytes.size()));
  const int pair = (x.at == kE5M2 ? 2 : 0) | (x.bt == kE5M2 ? 1 : 0);
  k_mma_fp8<K, kF16Acc><<<1, 32>>>(pair, steps, dA, dB, dC, dD);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint8_t> got(Cbytes.size());
  CUDA_CHECK(cudaMemcpy(got.data(), dD, got.size(), cudaMemcpyDeviceToHost));
  ConfStr name = conf_fmt("mma.m16n8k%d.row.col.%s.%s.%s.%s (%s, K = %d)", K,
                          kF16Acc ? "f16" : "f32", fp8_name(x.at), fp8_name(x.bt),
                          kF16Acc ? "f16" : "f32", what, x.kt);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j) {
      // Exact in double: at most 4 + 4 significant bits per product, sums within 24 bits.
      double s = x.C[i * 8 + j];
      for (int k = 0; k < x.kt; ++k)
        s += fp8_value(x.at, x.A[i * x.kt + k]) * fp8_value(x.bt, x.B[k * 8 + j]);
      uint32_t g = 0;
      std::memcpy(&g, &got[(i * 8 + j) * (kF16Acc ? 2 : 4)], kF16Acc ? 2 : 4);
      check_result(name.s, conf_fmt("D[%d][%d]", i, j).s, kF16Acc, g, s);
    }
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dC));
  CUDA_CHECK(cudaFree(dD));
}

// Grid values: A[i][k] = a * 2^sa[i], B[k][j] = b * 2^sb[j] with integers |a|, |b| <= vmax, and
// C[i][j] = c * 2^(sa[i] + sb[j]) with |c| <= cmax: every addend of D[i][j] is an integer multiple
// of 2^(sa[i] + sb[j]) and |D| <= kt * vmax^2 + cmax. The scales run over the formats' ranges
// (integers up to 8 are e4m3 and e5m2 values at every exponent; the lowest scales give the
// subnormal encodings: 1..7 * 2^-9 in e4m3, 1..3 * 2^-16 in e5m2).
Fp8Case grid_case(int pair, int kt, int vmax, int cmax, int smin, int smax, uint32_t seed) {
  Fp8Case x = make_case(pair, kt);
  Lcg g{seed};
  const int alo = x.at == kE4M3 ? -9 : -16, ahi = x.at == kE4M3 ? 5 : 12;
  const int blo = x.bt == kE4M3 ? -9 : -16, bhi = x.bt == kE4M3 ? 5 : 12;
  // The A scales lie in a window narrow enough that B scales exist keeping every output's unit
  // 2^(sa[i] + sb[j]) within [2^smin, 2^smax].
  const int wa = std::min(ahi - alo, (smax - smin) / 2);
  const int a0 = alo + int(g.next() % uint32_t(ahi - alo - wa + 1));
  int sa[16], sb[8], samin = a0 + wa, samax = a0;
  for (int i = 0; i < 16; ++i) {
    sa[i] = a0 + int(g.next() % uint32_t(wa + 1));
    samin = std::min(samin, sa[i]);
    samax = std::max(samax, sa[i]);
  }
  const int b0 = std::max(blo, smin - samin), b1 = std::min(bhi, smax - samax);
  for (int j = 0; j < 8; ++j) sb[j] = b0 + int(g.next() % uint32_t(b1 - b0 + 1));
  auto rint = [&](int m) { return int(g.next() % uint32_t(2 * m + 1)) - m; };
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < kt; ++k) x.A[i * kt + k] = fp8_code(x.at, std::ldexp(rint(vmax), sa[i]));
  for (int k = 0; k < kt; ++k)
    for (int j = 0; j < 8; ++j) x.B[k * 8 + j] = fp8_code(x.bt, std::ldexp(rint(vmax), sb[j]));
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j) x.C[i * 8 + j] = std::ldexp(rint(cmax), sa[i] + sb[j]);
  return x;
}

template <int K>
void run_grid(int pair, uint32_t seed) {
  // f32: |D| <= 32 * 64 + 1024 < 2^12 units; every unit (2^-32 .. 2^24) is a normal f32.
  run_case<K, false>(grid_case(pair, K, 8, 1024, -64, 64, seed), "grid values");
  // f16: |D| <= 32 * 16 + 256 < 2^10 units, every unit at least the smallest normal f16 and
  // the largest result below 2^15.
  run_case<K, true>(grid_case(pair, K, 4, 256, -14, 4, seed + 1), "grid values");
}

// Every finite encoding of one side, each picked out by a 1 on the other side: A holds the
// codes in its first 16 columns and B[k][j] = 1 for k == j + 8 * half (or the mirror image).
void run_encodings(int pair) {
  for (int side = 0; side < 2; ++side)
    for (int half = 0; half < 2; ++half) {
      Fp8Case x = make_case(pair, 32);
      const Fp8 t = side == 0 ? x.at : x.bt;
      std::vector<uint8_t> codes(256);
      for (int c = 0; c < 256; ++c) codes[c] = std::isfinite(fp8_value(t, uint8_t(c))) ? uint8_t(c) : 0;
      if (side == 0) {
        for (int i = 0; i < 16; ++i)
          for (int k = 0; k < 16; ++k) x.A[i * 32 + k] = codes[i * 16 + k];
        for (int j = 0; j < 8; ++j) x.B[(j + 8 * half) * 8 + j] = fp8_code(x.bt, 1.0);
      } else {
        for (int k = 0; k < 32; ++k)
          for (int j = 0; j < 8; ++j) x.B[k * 8 + j] = codes[k * 8 + j];
        for (int i = 0; i < 16; ++i) x.A[i * 32 + i + 16 * half] = fp8_code(x.at, 1.0);
      }
      run_case<32, false>(x, side == 0 ? "every finite A encoding" : "every finite B encoding");
    }
}

// NaN and infinity (f32 accumulators): row 0 has a NaN in A; for an e5m2 A, row 1 has +inf, row 2
// -inf, row 3 +inf and -inf; B is all ones, C zero.
void run_specials(int pair) {
  Fp8Case x = make_case(pair, 32);
  for (auto& b : x.B) b = fp8_code(x.bt, 1.0);
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 32; ++k) x.A[i * 32 + k] = fp8_code(x.at, (i + k) % 3 == 0 ? 0.5 : -1.0);
  x.A[0 * 32 + 5] = 0x7f;  // NaN in both formats
  if (x.at == kE5M2) {
    x.A[1 * 32 + 7] = 0x7c;                           // +inf
    x.A[2 * 32 + 9] = 0xfc;                           // -inf
    x.A[3 * 32 + 0] = 0x7c, x.A[3 * 32 + 31] = 0xfc;  // +inf and -inf: NaN
  }
  run_case<32, false>(x, "NaN and infinity");
}

}  // namespace

int main() {
  conf_require_device();
  for (int pair = 0; pair < 4; ++pair) {
    run_grid<32>(pair, 100 + 10 * pair);
    run_grid<16>(pair, 200 + 10 * pair);
    run_encodings(pair);
    run_specials(pair);
    // Many values: K = 512, sixteen chained m16n8k32; |D| <= 512 * 4 + 1024 < 2^12 units.
    run_case<32, false>(grid_case(pair, 512, 2, 1024, -64, 64, 300 + pair), "many values");
  }
  return conf_finish("fp8_mma");
}
