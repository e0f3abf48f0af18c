// Tensor-core shapes beyond those of tensor_core.cu:
//   mma.sync.aligned.{m8n8k16,m16n8k16,m16n8k32}.row.col{,.satfinite}.s32.{s8,u8}.{s8,u8}.s32,
//     every signedness pair, on random bytes and on rows built to overflow upward (every product
//     at its maximum, C near INT32_MAX) and downward (-128 times the maximum, C near INT32_MIN):
//     the ISA wraps the accumulated value, or with .satfinite limits it to INT32_MIN..INT32_MAX.
//     All products of one overflowing row have one sign, so the clamp is the same whatever the
//     order in which the hardware accumulates;
//   mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 and m16n8k4.row.col.f32.tf32.tf32.f32;
//   the tf32 input rule: mma.sync m16n8k8 / m16n8k4 given f32 bit patterns that are not tf32
//     values (low 13 bits set, from just under half a tf32 ulp to just under a whole one) use
//     them truncated, as the ISA states for wgmma ("will truncate lower 13 bits of the 32-bit
//     input data"); the result equals that of the truncated inputs;
//   nvcuda::wmma (mma.h's load_matrix_sync / mma_sync / store_matrix_sync, which is what programs
//     use: the wmma fragment layouts are opaque in the ISA): m16n16k8 with precision::tf32 and
//     __float_to_tf32 (cvt.rna.tf32.f32: inputs already tf32 values stay as they are; inputs
//     between tf32 values, ties included, round to nearest with ties away from zero), m8n8k4
//     double, signed / unsigned char m16n16k16, m32n8k16 and m8n32k16 with int accumulators (with
//     and without saturation), and __half / __nv_bfloat16 m32n8k16 and m8n32k16.
// Every operand element is placed by the ISA's fragment formulas (mma) or by its matrix layout in
// memory (wmma), and every expected value is a host GEMM of the same inputs: integer and f64
// results exactly, floating-point ones from inputs whose products and sums are exact in the
// accumulator type, so they are compared bit for bit.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <type_traits>
#include <vector>

#include "conf_common.h"

namespace {

// A small deterministic generator, the same on every platform.
struct Lcg {
  uint32_t s;
  uint32_t next() {
    s = s * 1664525u + 1013904223u;
    return s >> 8;
  }
};

// ---------------------------------------------------------------------------------------------
// Integer mma.sync
// ---------------------------------------------------------------------------------------------
// Fragment formulas of the ISA (g = groupID = laneid >> 2, q = threadID_in_group = laneid % 4),
// element i of a_i / b_i / c_i; four 8-bit elements per .b32 register, a0 in the low byte.
//   m8n8k16:  A row g, col 4q + i           B row 4q + i, col g       C row g, col 2q + i
//   m16n8k16: A row g (i < 4) or g + 8, col 4q + (i & 3)
//             B row 4q + i, col g           C row g (i < 2) or g + 8, col 2q + (i & 1)
//   m16n8k32: A row g (i in 0..3, 8..11) or g + 8, col 4q + (i & 3) (+16 for i >= 8)
//             B row 4q + (i & 3) (+16 for i >= 4), col g
enum IntShape { kM8N8K16, kM16N8K16, kM16N8K32 };
struct IntDims {
  int M, N, K, na, nb, nc;  // elements per lane of A, B, C
};
__host__ __device__ inline IntDims int_dims(int shape) {
  if (shape == kM8N8K16) return {8, 8, 16, 4, 4, 2};
  if (shape == kM16N8K16) return {16, 8, 16, 8, 4, 4};
  return {16, 8, 32, 16, 8, 4};
}
__device__ inline void int_frag_a(int shape, int lane, int i, int* r, int* c) {
  const int g = lane >> 2, q = lane % 4;
  if (shape == kM8N8K16) {
    *r = g, *c = 4 * q + i;
  } else if (shape == kM16N8K16) {
    *r = i < 4 ? g : g + 8, *c = 4 * q + (i & 3);
  } else {
    *r = (i < 4 || (i >= 8 && i < 12)) ? g : g + 8, *c = 4 * q + (i & 3) + (i >= 8 ? 16 : 0);
  }
}
__device__ inline void int_frag_b(int shape, int lane, int i, int* r, int* c) {
  const int g = lane >> 2, q = lane % 4;
  if (shape == kM16N8K32) {
    *r = 4 * q + (i & 3) + (i >= 4 ? 16 : 0), *c = g;
  } else {
    *r = 4 * q + i, *c = g;
  }
}
__device__ inline void int_frag_c(int shape, int lane, int i, int* r, int* c) {
  const int g = lane >> 2, q = lane % 4;
  if (shape == kM8N8K16) {
    *r = g, *c = 2 * q + i;
  } else {
    *r = i < 2 ? g : g + 8, *c = 2 * q + (i & 1);
  }
}

// variant: bit 0 A unsigned, bit 1 B unsigned, bit 2 .satfinite.
#define MMA_I8816(SAT, AT, BT)                                                                  \
  asm volatile("mma.sync.aligned.m8n8k16.row.col" SAT ".s32." AT "." BT                        \
               ".s32 {%0, %1}, {%2}, {%3}, {%4, %5};"                                           \
               : "=r"(d[0]), "=r"(d[1])                                                         \
               : "r"(a[0]), "r"(b[0]), "r"(c[0]), "r"(c[1]))
#define MMA_I16816(SAT, AT, BT)                                                                 \
  asm volatile("mma.sync.aligned.m16n8k16.row.col" SAT ".s32." AT "." BT                       \
               ".s32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};"                      \
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])                                 \
               : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]))
#define MMA_I16832(SAT, AT, BT)                                                                 \
  asm volatile("mma.sync.aligned.m16n8k32.row.col" SAT ".s32." AT "." BT                       \
               ".s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"       \
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])                                 \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]),   \
                 "r"(c[1]), "r"(c[2]), "r"(c[3]))
#define MMA_VARIANTS(M)                   \
  switch (variant) {                      \
    case 0: M("", "s8", "s8"); break;     \
    case 1: M("", "u8", "s8"); break;     \
    case 2: M("", "s8", "u8"); break;     \
    case 3: M("", "u8", "u8"); break;     \
    case 4: M(".satfinite", "s8", "s8"); break; \
    case 5: M(".satfinite", "u8", "s8"); break; \
    case 6: M(".satfinite", "s8", "u8"); break; \
    default: M(".satfinite", "u8", "u8"); break; \
  }

// A (M x K), B (K x N) bytes and C, D (M x N) int32, all row-major.
__global__ void k_mma_int(int shape, int variant, const uint8_t* A, const uint8_t* B,
                          const int* C, int* D) {
  const int lane = threadIdx.x;
  const IntDims dm = int_dims(shape);
  uint32_t a[4] = {0, 0, 0, 0}, b[2] = {0, 0}, c[4] = {0, 0, 0, 0}, d[4] = {0, 0, 0, 0};
  int r, col;
  for (int i = 0; i < dm.na; ++i) {
    int_frag_a(shape, lane, i, &r, &col);
    a[i / 4] |= uint32_t(A[r * dm.K + col]) << (8 * (i % 4));
  }
  for (int i = 0; i < dm.nb; ++i) {
    int_frag_b(shape, lane, i, &r, &col);
    b[i / 4] |= uint32_t(B[r * dm.N + col]) << (8 * (i % 4));
  }
  for (int i = 0; i < dm.nc; ++i) {
    int_frag_c(shape, lane, i, &r, &col);
    c[i] = uint32_t(C[r * dm.N + col]);
  }
  if (shape == kM8N8K16) {
    MMA_VARIANTS(MMA_I8816)
  } else if (shape == kM16N8K16) {
    MMA_VARIANTS(MMA_I16816)
  } else {
    MMA_VARIANTS(MMA_I16832)
  }
  for (int i = 0; i < dm.nc; ++i) {
    int_frag_c(shape, lane, i, &r, &col);
    D[r * dm.N + col] = int(d[i]);
  }
}

// The ISA's integer result: the exact sum, wrapped to 32 bits or (.satfinite) clamped.
int32_t int_result(long long exact, bool satfinite) {
  if (satfinite) return int32_t(std::min<long long>(std::max<long long>(exact, INT32_MIN), INT32_MAX));
  return int32_t(uint32_t(static_cast<unsigned long long>(exact)));
}

int byte_value(uint8_t b, bool is_unsigned) {
  return is_unsigned ? int(b) : int(int8_t(b));
}

// Host matrices for one integer case: random, or (overflow) with row 0 pushing past INT32_MAX
// and, for signed A, row 1 pushing past INT32_MIN.
void make_int_data(int M, int N, int K, bool a_uns, bool b_uns, bool overflow, uint32_t seed,
                   std::vector<uint8_t>& A, std::vector<uint8_t>& B, std::vector<int>& C) {
  Lcg g{seed};
  A.resize(M * K);
  B.resize(K * N);
  C.resize(M * N);
  for (auto& v : A) v = uint8_t(g.next());
  for (auto& v : B) v = uint8_t(g.next());
  for (auto& v : C) v = int(g.next() % 2000001) - 1000000;
  if (!overflow) return;
  const uint8_t amax = a_uns ? 255 : 127, bmax = b_uns ? 255 : 127;
  for (auto& v : B) v = bmax;
  for (int k = 0; k < K; ++k) {
    A[0 * K + k] = amax;
    A[1 * K + k] = a_uns ? amax : 0x80;  // -128 when signed
  }
  for (int j = 0; j < N; ++j) {
    C[0 * N + j] = INT32_MAX - 1000;
    C[1 * N + j] = a_uns ? INT32_MAX - 3000 : INT32_MIN + 1000;
  }
}

void run_mma_int(int shape, int variant, bool overflow, uint32_t seed) {
  const IntDims dm = int_dims(shape);
  const bool a_uns = variant & 1, b_uns = variant & 2, sat = variant & 4;
  std::vector<uint8_t> A, B;
  std::vector<int> C;
  make_int_data(dm.M, dm.N, dm.K, a_uns, b_uns, overflow, seed, A, B, C);
  uint8_t *dA, *dB;
  int *dC, *dD;
  CUDA_CHECK(cudaMalloc(&dA, A.size()));
  CUDA_CHECK(cudaMalloc(&dB, B.size()));
  CUDA_CHECK(cudaMalloc(&dC, C.size() * 4));
  CUDA_CHECK(cudaMalloc(&dD, C.size() * 4));
  CUDA_CHECK(cudaMemcpy(dA, A.data(), A.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dB, B.data(), B.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dC, C.data(), C.size() * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dD, 0xff, C.size() * 4));
  k_mma_int<<<1, 32>>>(shape, variant, dA, dB, dC, dD);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<int> got(C.size());
  CUDA_CHECK(cudaMemcpy(got.data(), dD, got.size() * 4, cudaMemcpyDeviceToHost));
  const char* shapes[3] = {"m8n8k16", "m16n8k16", "m16n8k32"};
  ConfStr name = conf_fmt("mma.%s.row.col%s.s32.%s.%s.s32 (%s)", shapes[shape],
                          sat ? ".satfinite" : "", a_uns ? "u8" : "s8", b_uns ? "u8" : "s8",
                          overflow ? "overflowing rows" : "random");
  for (int i = 0; i < dm.M; ++i)
    for (int j = 0; j < dm.N; ++j) {
      long long s = C[i * dm.N + j];
      for (int k = 0; k < dm.K; ++k)
        s += (long long)byte_value(A[i * dm.K + k], a_uns) * byte_value(B[k * dm.N + j], b_uns);
      conf_check(name.s, conf_fmt("D[%d][%d]", i, j), got[i * dm.N + j], int_result(s, sat));
    }
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dC));
  CUDA_CHECK(cudaFree(dD));
}

// ---------------------------------------------------------------------------------------------
// mma.sync m8n8k4 .f64 and the tf32 shapes
// ---------------------------------------------------------------------------------------------
// m8n8k4 .f64: A a0 row laneid >> 2, col laneid % 4; B b0 row laneid % 4, col laneid >> 2;
// C c0, c1 row g, col 2q + i.
__global__ void k_mma_f64(const double* A, const double* B, const double* C, double* D) {
  const int lane = threadIdx.x, g = lane >> 2, q = lane % 4;
  const double a = A[g * 4 + q], b = B[q * 8 + g];
  double c0 = C[g * 8 + 2 * q], c1 = C[g * 8 + 2 * q + 1], d0, d1;
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%4, %5};"
               : "=d"(d0), "=d"(d1)
               : "d"(a), "d"(b), "d"(c0), "d"(c1));
  D[g * 8 + 2 * q] = d0;
  D[g * 8 + 2 * q + 1] = d1;
}

void run_mma_f64() {
  std::vector<double> A(32), B(32), C(64);
  for (int i = 0; i < 32; ++i) A[i] = 0.25 * ((i * 7 + 3) % 17 - 8);  // -2 .. 2
  for (int i = 0; i < 32; ++i) B[i] = (i * 5 + 1) % 9 - 4;            // -4 .. 4
  for (int i = 0; i < 64; ++i) C[i] = 0.5 * ((i * 11 + 5) % 21 - 10);  // -5 .. 5
  double *dA, *dB, *dC, *dD;
  CUDA_CHECK(cudaMalloc(&dA, 32 * 8));
  CUDA_CHECK(cudaMalloc(&dB, 32 * 8));
  CUDA_CHECK(cudaMalloc(&dC, 64 * 8));
  CUDA_CHECK(cudaMalloc(&dD, 64 * 8));
  CUDA_CHECK(cudaMemcpy(dA, A.data(), 32 * 8, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dB, B.data(), 32 * 8, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dC, C.data(), 64 * 8, cudaMemcpyHostToDevice));
  k_mma_f64<<<1, 32>>>(dA, dB, dC, dD);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> got(64);
  CUDA_CHECK(cudaMemcpy(got.data(), dD, 64 * 8, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      double s = C[i * 8 + j];
      for (int k = 0; k < 4; ++k) s += A[i * 4 + k] * B[k * 8 + j];  // exact: quarters
      uint64_t gb, eb;
      std::memcpy(&gb, &got[i * 8 + j], 8);
      std::memcpy(&eb, &s, 8);
      conf_check_bits("mma.m8n8k4.row.col.f64.f64.f64.f64", conf_fmt("D[%d][%d]", i, j), gb, eb,
                      64);
    }
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dC));
  CUDA_CHECK(cudaFree(dD));
}

// tf32 inputs: A multiples of 1/4 in -2..2, B tf32 values (11 significant bits) in 0.5..4 with
// either sign, C multiples of 1/4: every product and sum is exact in f32 (at most 20 bits).
float tf32_a(int i, int seed) {
  return 0.25f * float((i * 5 + seed) % 17 - 8);
}
float tf32_b(int i, int seed) {
  const int man = 1024 + (i * 37 + seed * 11) % 1024;  // 1.0 .. 2047/1024
  const float mag = std::ldexp(float(man), -10 + (i % 3) - 1);
  return ((i * 3 + seed) % 5 < 2) ? -mag : mag;
}
float tf32_c(int i, int seed) {
  return 0.25f * float((i * 11 + seed * 5) % 33 - 16);
}
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
// Low bits added to a tf32 value's pattern: under half, exactly half, over half of a tf32 ulp,
// and all 13.
uint32_t tf32_noise(int i) {
  const uint32_t n[4] = {0x0800u, 0x1000u, 0x1800u, 0x1fffu};
  return n[i % 4];
}

// m16n8k4 .tf32: A a0 row g, a1 row g + 8, col q; B b0 row q, col g.
// m16n8k8 .tf32: A a0 (g, q), a1 (g + 8, q), a2 (g, q + 4), a3 (g + 8, q + 4); B b0 row q,
// b1 row q + 4, col g. C (both) c_i row g (i < 2) or g + 8, col 2q + (i & 1).
// A, B, C hold raw f32 patterns; the kernel passes them to the instruction unchanged.
__global__ void k_mma_tf32(int k8, const uint32_t* A, const uint32_t* B, const float* C,
                           float* D) {
  const int lane = threadIdx.x, g = lane >> 2, q = lane % 4, K = k8 ? 8 : 4;
  float c[4], d[4];
  for (int i = 0; i < 4; ++i) c[i] = C[(i < 2 ? g : g + 8) * 8 + 2 * q + (i & 1)];
  if (k8) {
    const uint32_t a0 = A[g * K + q], a1 = A[(g + 8) * K + q], a2 = A[g * K + q + 4],
                   a3 = A[(g + 8) * K + q + 4], b0 = B[q * 8 + g], b1 = B[(q + 4) * 8 + g];
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%10, %11, %12, %13};"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c[0]), "f"(c[1]), "f"(c[2]),
          "f"(c[3]));
  } else {
    const uint32_t a0 = A[g * K + q], a1 = A[(g + 8) * K + q], b0 = B[q * 8 + g];
    asm volatile(
        "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
        "{%7, %8, %9, %10};"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a0), "r"(a1), "r"(b0), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
  }
  for (int i = 0; i < 4; ++i) D[(i < 2 ? g : g + 8) * 8 + 2 * q + (i & 1)] = d[i];
}

// noisy: every nonzero input gets low bits; the expected result is that of the inputs without
// them (truncation).
void run_mma_tf32(bool k8, bool noisy, int seed) {
  const int K = k8 ? 8 : 4;
  std::vector<uint32_t> A(16 * K), B(K * 8);
  std::vector<float> Af(16 * K), Bf(K * 8), C(128);
  for (int i = 0; i < 16 * K; ++i) {
    Af[i] = tf32_a(i, seed);
    A[i] = f32_bits(Af[i]) | (noisy && Af[i] != 0 ? tf32_noise(i) : 0);
  }
  for (int i = 0; i < K * 8; ++i) {
    Bf[i] = tf32_b(i, seed);
    B[i] = f32_bits(Bf[i]) | (noisy ? tf32_noise(i + 1) : 0);
  }
  for (int i = 0; i < 128; ++i) C[i] = tf32_c(i, seed);
  uint32_t *dA, *dB;
  float *dC, *dD;
  CUDA_CHECK(cudaMalloc(&dA, A.size() * 4));
  CUDA_CHECK(cudaMalloc(&dB, B.size() * 4));
  CUDA_CHECK(cudaMalloc(&dC, 128 * 4));
  CUDA_CHECK(cudaMalloc(&dD, 128 * 4));
  CUDA_CHECK(cudaMemcpy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dB, B.data(), B.size() * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dC, C.data(), 128 * 4, cudaMemcpyHostToDevice));
  k_mma_tf32<<<1, 32>>>(k8 ? 1 : 0, dA, dB, dC, dD);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> got(128);
  CUDA_CHECK(cudaMemcpy(got.data(), dD, 128 * 4, cudaMemcpyDeviceToHost));
  ConfStr name = conf_fmt("mma.%s.row.col.f32.tf32.tf32.f32%s", k8 ? "m16n8k8" : "m16n8k4",
                          noisy ? " (f32 inputs with low bits set: truncated to tf32)" : "");
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j) {
      double s = C[i * 8 + j];
      for (int k = 0; k < K; ++k) s += double(Af[i * K + k]) * Bf[k * 8 + j];
      conf_check_bits(name.s, conf_fmt("D[%d][%d]", i, j), f32_bits(got[i * 8 + j]),
                      f32_bits(float(s)), 32);
    }
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dC));
  CUDA_CHECK(cudaFree(dD));
}

// ---------------------------------------------------------------------------------------------
// wmma through mma.h
// ---------------------------------------------------------------------------------------------
namespace wmma = nvcuda::wmma;

// The fragment element type mma.h takes for a memory element type.
template <typename T>
struct FragType {
  using type = T;
};
template <>
struct FragType<float> {  // float multiplicands are the tf32 precision
  using type = wmma::precision::tf32;
};

template <typename L>
constexpr bool is_row = std::is_same<L, wmma::row_major>::value;

// D = A * B + C, loaded with leading dimensions lda, ldb, ldc (C row-major), stored with ldd in
// the layout d_row says. tf32 multiplicands go through __float_to_tf32; integer accumulation
// saturates when satf is set.
template <int M, int N, int K, typename TA, typename TC, typename LA, typename LB>
__global__ void k_wmma(const TA* A, unsigned lda, const TA* B, unsigned ldb, const TC* C,
                       unsigned ldc, TC* D, unsigned ldd, int d_row, int satf) {
  wmma::fragment<wmma::matrix_a, M, N, K, typename FragType<TA>::type, LA> a;
  wmma::fragment<wmma::matrix_b, M, N, K, typename FragType<TA>::type, LB> b;
  wmma::fragment<wmma::accumulator, M, N, K, TC> c;
  wmma::load_matrix_sync(a, A, lda);
  wmma::load_matrix_sync(b, B, ldb);
  wmma::load_matrix_sync(c, C, ldc, wmma::mem_row_major);
  if constexpr (std::is_same<TA, float>::value) {
    for (int i = 0; i < a.num_elements; ++i) a.x[i] = wmma::__float_to_tf32(a.x[i]);
    for (int i = 0; i < b.num_elements; ++i) b.x[i] = wmma::__float_to_tf32(b.x[i]);
  }
  if constexpr (std::is_same<TC, int>::value) {
    wmma::mma_sync(c, a, b, c, satf != 0);
  } else {
    wmma::mma_sync(c, a, b, c);
  }
  wmma::store_matrix_sync(D, c, ldd, d_row ? wmma::mem_row_major : wmma::mem_col_major);
}

// Host values of the element types, and back.
double host_value(__half h) {
  return __half2float(h);
}
double host_value(__nv_bfloat16 h) {
  return __bfloat162float(h);
}
double host_value(float f) {
  return f;
}
double host_value(double d) {
  return d;
}
double host_value(signed char v) {
  return v;
}
double host_value(unsigned char v) {
  return v;
}
template <typename T>
T from_double(double v) {
  if constexpr (std::is_same<T, __half>::value) return __float2half(float(v));
  else if constexpr (std::is_same<T, __nv_bfloat16>::value) return __float2bfloat16(float(v));
  else return T(v);
}
template <typename T>
uint64_t raw_bits(T v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}

// cvt.rna.tf32.f32 on the host: round the magnitude to 10 fraction bits, ties away from zero.
float rna_tf32(float f) {
  return bits_f32((f32_bits(f) + 0x1000u) & ~0x1fffu);
}

// Inputs per element type, exact in every product and sum (see the file comment); `variant`
// 1 gives the integer rows that overflow, or (tf32) inputs between tf32 values.
template <typename T>
T wmma_input(char which, int i, int seed, int variant) {
  if constexpr (std::is_same<T, signed char>::value || std::is_same<T, unsigned char>::value) {
    Lcg g{uint32_t(seed * 1000 + i * 7 + which)};
    g.next();
    return T(g.next());
  } else if constexpr (std::is_same<T, float>::value) {
    if (which == 'a') return tf32_a(i, seed);
    const float b = tf32_b(i, seed);
    return variant ? bits_f32(f32_bits(b) | tf32_noise(i)) : b;
  } else {
    if (which == 'a') return from_double<T>(0.5 * ((i * 7 + seed * 3) % 15 - 7));  // -3.5 .. 3.5
    return from_double<T>((i * 5 + seed) % 7 - 3);                                  // -3 .. 3
  }
}

template <int M, int N, int K, typename TA, typename TC, typename LA, typename LB>
void run_wmma(const char* type_name, int seed, bool d_row, int variant, bool satf,
              bool padded = true) {
  constexpr bool is_int = std::is_same<TC, int>::value;
  constexpr bool a_row = is_row<LA>, b_row = is_row<LB>;
  // Leading dimensions of A and B: the matrix's own (the PTX default, which nvcc uses for a
  // dense matrix), or that rounded up to 16 bytes plus 16 elements of padding, poisoned so that
  // a read of the padding shows.
  constexpr unsigned unit = 16 / sizeof(TA);
  auto ld_of = [&](unsigned lead) { return padded ? (lead + unit - 1) / unit * unit + 16 : lead; };
  const unsigned lda = ld_of(a_row ? K : M), ldb = ld_of(b_row ? N : K);
  const unsigned ldc = N + 16, ldd = (d_row ? N : M) + 16;
  std::vector<TA> A((a_row ? M : K) * lda, from_double<TA>(is_int ? 99 : 1e3)),
      B((b_row ? K : N) * ldb, from_double<TA>(is_int ? 77 : -1e3));
  std::vector<double> Ah(M * K), Bh(K * N), Ch(M * N);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) {
      TA v = wmma_input<TA>('a', i * K + k, seed, variant);
      if constexpr (is_int) {
        if (variant == 1 && i < 2) v = TA(std::is_signed<TA>::value && i == 1 ? -128 : 127);
      }
      A[a_row ? i * lda + k : k * lda + i] = v;
      Ah[i * K + k] = std::is_same<TA, float>::value ? rna_tf32(float(host_value(v))) : host_value(v);
    }
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j) {
      TA v = wmma_input<TA>('b', k * N + j, seed, variant);
      if constexpr (is_int) {
        if (variant == 1) v = TA(127);
      }
      B[b_row ? k * ldb + j : j * ldb + k] = v;
      Bh[k * N + j] = std::is_same<TA, float>::value ? rna_tf32(float(host_value(v))) : host_value(v);
    }
  std::vector<TC> C(M * ldc, from_double<TC>(0));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double v = is_int ? double(int((Lcg{uint32_t(seed * 31 + i * N + j)}.next()) % 2000001) - 1000000)
                        : 0.25 * ((i * N * 11 + j * 11 + seed * 5) % 33 - 16);
      if (is_int && variant == 1 && i == 0) v = INT32_MAX - 1000;
      if (is_int && variant == 1 && i == 1) v = std::is_signed<TA>::value ? INT32_MIN + 1000 : 0;
      C[i * ldc + j] = from_double<TC>(v);
      Ch[i * N + j] = v;
    }
  TA *dA, *dB;
  TC *dC, *dD;
  const size_t d_elems = (d_row ? M : N) * ldd;
  CUDA_CHECK(cudaMalloc(&dA, A.size() * sizeof(TA)));
  CUDA_CHECK(cudaMalloc(&dB, B.size() * sizeof(TA)));
  CUDA_CHECK(cudaMalloc(&dC, C.size() * sizeof(TC)));
  CUDA_CHECK(cudaMalloc(&dD, d_elems * sizeof(TC)));
  CUDA_CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(TA), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dB, B.data(), B.size() * sizeof(TA), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dC, C.data(), C.size() * sizeof(TC), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dD, 0, d_elems * sizeof(TC)));
  k_wmma<M, N, K, TA, TC, LA, LB><<<1, 32>>>(dA, lda, dB, ldb, dC, ldc, dD, ldd, d_row ? 1 : 0,
                                             satf ? 1 : 0);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<TC> D(d_elems);
  CUDA_CHECK(cudaMemcpy(D.data(), dD, d_elems * sizeof(TC), cudaMemcpyDeviceToHost));
  ConfStr name = conf_fmt("wmma m%dn%dk%d %s A %s (ld %u), B %s (ld %u), D %s%s%s", M, N, K,
                          type_name, a_row ? "row" : "col", lda, b_row ? "row" : "col", ldb,
                          d_row ? "row" : "col", satf ? ", saturating" : "",
                          variant == 1 ? (is_int ? ", overflowing rows" : ", inputs between tf32 values")
                                       : "");
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      const TC g = D[d_row ? i * ldd + j : j * ldd + i];
      if constexpr (std::is_same<TC, int>::value) {
        long long s = (long long)Ch[i * N + j];
        for (int k = 0; k < K; ++k) s += (long long)Ah[i * K + k] * (long long)Bh[k * N + j];
        conf_check(name.s, conf_fmt("D[%d][%d]", i, j), g, int_result(s, satf));
      } else {
        double s = Ch[i * N + j];
        for (int k = 0; k < K; ++k) s += Ah[i * K + k] * Bh[k * N + j];
        conf_check_bits(name.s, conf_fmt("D[%d][%d]", i, j), raw_bits(g),
                        raw_bits(from_double<TC>(s)), int(8 * sizeof(TC)));
      }
    }
  // Elements beyond the tile in each stored row (or column) stay 0.
  for (int l = 0; l < (d_row ? M : N); ++l)
    for (unsigned e = d_row ? N : M; e < ldd; ++e)
      conf_check(name.s, conf_fmt("padding D[%d][%u] untouched", l, e),
                 raw_bits(D[l * ldd + e]) == 0 ? 0 : 1, 0);
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dC));
  CUDA_CHECK(cudaFree(dD));
}

using wmma::col_major;
using wmma::row_major;

template <int M, int N, int K, typename TA>
void run_wmma_int(const char* name, int seed) {
  run_wmma<M, N, K, TA, int, row_major, col_major>(name, seed, true, 0, false);
  run_wmma<M, N, K, TA, int, col_major, row_major>(name, seed + 1, false, 0, true);
  run_wmma<M, N, K, TA, int, row_major, row_major>(name, seed + 2, true, 1, false);
  run_wmma<M, N, K, TA, int, col_major, col_major>(name, seed + 3, false, 1, true);
  // The PTX default strides (the matrix's own leading dimension: 8 bytes for some of these).
  run_wmma<M, N, K, TA, int, row_major, row_major>(name, seed + 4, true, 0, false, false);
}

template <int M, int N, int K>
void run_wmma_16bit(int seed) {
  run_wmma<M, N, K, __half, float, row_major, col_major>("f32.f16", seed, true, 0, false);
  run_wmma<M, N, K, __half, float, col_major, row_major>("f32.f16", seed + 1, false, 0, false);
  run_wmma<M, N, K, __half, __half, row_major, row_major>("f16.f16", seed + 2, true, 0, false);
  run_wmma<M, N, K, __half, __half, col_major, col_major>("f16.f16", seed + 3, false, 0, false);
  run_wmma<M, N, K, __nv_bfloat16, float, row_major, col_major>("f32.bf16", seed + 4, false, 0,
                                                                 false);
  run_wmma<M, N, K, __nv_bfloat16, float, col_major, row_major>("f32.bf16", seed + 5, true, 0,
                                                                 false);
}

}  // namespace

int main() {
  conf_require_device();
  for (int shape : {kM8N8K16, kM16N8K16, kM16N8K32})
    for (int variant = 0; variant < 8; ++variant) {
      run_mma_int(shape, variant, false, 10 + variant);
      run_mma_int(shape, variant, true, 20 + variant);
    }
  run_mma_f64();
  run_mma_tf32(false, false, 1);
  run_mma_tf32(false, true, 1);
  run_mma_tf32(true, true, 2);
  // wmma m16n16k8 tf32: tf32 inputs, then inputs between tf32 values (rounded by __float_to_tf32).
  run_wmma<16, 16, 8, float, float, row_major, col_major>("f32.tf32", 3, true, 0, false);
  run_wmma<16, 16, 8, float, float, col_major, row_major>("f32.tf32", 4, false, 0, false);
  run_wmma<16, 16, 8, float, float, row_major, row_major>("f32.tf32", 5, true, 1, false);
  run_wmma<16, 16, 8, float, float, col_major, col_major>("f32.tf32", 6, false, 1, false);
  // wmma m8n8k4 double.
  run_wmma<8, 8, 4, double, double, row_major, col_major>("f64", 7, true, 0, false);
  run_wmma<8, 8, 4, double, double, col_major, row_major>("f64", 8, false, 0, false);
  run_wmma<8, 8, 4, double, double, row_major, row_major>("f64", 9, false, 0, false, false);
  // wmma 8-bit integers.
  run_wmma_int<16, 16, 16, signed char>("s32.s8", 30);
  run_wmma_int<16, 16, 16, unsigned char>("s32.u8", 40);
  run_wmma_int<32, 8, 16, signed char>("s32.s8", 50);
  run_wmma_int<32, 8, 16, unsigned char>("s32.u8", 60);
  run_wmma_int<8, 32, 16, signed char>("s32.s8", 70);
  run_wmma_int<8, 32, 16, unsigned char>("s32.u8", 80);
  // wmma 16-bit m32n8k16 and m8n32k16.
  run_wmma_16bit<32, 8, 16>(90);
  run_wmma_16bit<8, 32, 16>(100);
  return conf_finish("tensor_shapes");
}
