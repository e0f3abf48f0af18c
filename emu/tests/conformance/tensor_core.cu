// Tensor-core instructions:
//   ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{,.trans}.shared.b16, each lane's registers checked
//     against the ISA's fragment table (lane t holds row t/4, columns 2(t%4) and 2(t%4)+1 of each
//     matrix, lower column in the low half; .trans delivers the transpose), with the matrix rows
//     scattered in shared memory and the lanes whose addresses the instruction ignores pointing
//     at decoy rows;
//   mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32, the .bf16 form, the f16-accumulator form
//     and m16n8k8.row.col.f32.tf32.tf32.f32, with the operands distributed into registers by the
//     ISA's fragment formulas (groupID = laneid >> 2, threadID_in_group = laneid % 4);
//   nvcuda::wmma m16n16k16 load/mma/store with row- and column-major A and B, padded leading
//     dimensions, and both store layouts.
// Inputs are small multiples of 1/2 or 1/4 whose products and sums are exact in every type
// involved, so the host's double-precision matmul is compared bit for bit.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <vector>

#include "conf_common.h"

namespace {

// ---------------------------------------------------------------------------------------------
// ldmatrix
// ---------------------------------------------------------------------------------------------
constexpr int kLdStride = 24;  // halves per shared row (48 bytes: rows stay 16-byte aligned)
constexpr int kLdRows = 40;    // 4 matrices x 8 rows + 8 decoy rows

// Shared row holding row r of matrix m (rows scattered within each matrix's block of 8).
__host__ __device__ inline int row_pos(int m, int r) {
  return m * 8 + (r * 5 + m) % 8;
}
// Every shared element holds its own index.
__host__ __device__ inline uint16_t mat_value(int m, int r, int c) {
  return static_cast<uint16_t>(row_pos(m, r) * kLdStride + c);
}

// out[lane * 14 + k]: k = 0 x1, 1-2 x2, 3-6 x4, 7 x1.trans, 8-9 x2.trans, 10-13 x4.trans.
__global__ void k_ldmatrix(uint32_t* out) {
  __shared__ __align__(16) uint16_t sm[kLdRows * kLdStride];
  const int lane = threadIdx.x;
  for (int i = lane; i < kLdRows * kLdStride; i += 32) sm[i] = static_cast<uint16_t>(i);
  __syncwarp();
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(sm));
  auto addr = [&](int nmat) -> uint32_t {
    const int m = lane / 8, r = lane % 8;
    const int row = m < nmat ? row_pos(m, r) : 32 + r;  // ignored lanes point at decoy rows
    return base + static_cast<uint32_t>(row * kLdStride * 2);
  };
  uint32_t* o = out + lane * 14;
  uint32_t a1 = addr(1), a2 = addr(2), a4 = addr(4);
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(o[0]) : "r"(a1));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
               : "=r"(o[1]), "=r"(o[2])
               : "r"(a2));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(o[3]), "=r"(o[4]), "=r"(o[5]), "=r"(o[6])
               : "r"(a4));
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(o[7]) : "r"(a1));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
               : "=r"(o[8]), "=r"(o[9])
               : "r"(a2));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared::cta.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(o[10]), "=r"(o[11]), "=r"(o[12]), "=r"(o[13])
               : "r"(a4));
}

void test_ldmatrix() {
  uint32_t* d_out;
  CUDA_CHECK(cudaMalloc(&d_out, 32 * 14 * 4));
  k_ldmatrix<<<1, 32>>>(d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> g(32 * 14);
  CUDA_CHECK(cudaMemcpy(g.data(), d_out, g.size() * 4, cudaMemcpyDeviceToHost));
  const int first[6] = {0, 1, 3, 7, 8, 10}, count[6] = {1, 2, 4, 1, 2, 4};
  const char* names[6] = {"ldmatrix.m8n8.x1.b16",       "ldmatrix.m8n8.x2.b16",
                          "ldmatrix.m8n8.x4.b16",       "ldmatrix.m8n8.x1.trans.b16",
                          "ldmatrix.m8n8.x2.trans.b16", "ldmatrix.m8n8.x4.trans.b16"};
  for (int v = 0; v < 6; ++v) {
    const bool trans = v >= 3;
    for (int t = 0; t < 32; ++t)
      for (int j = 0; j < count[v]; ++j) {
        const int r = t / 4, c = 2 * (t % 4);
        const uint32_t lo = trans ? mat_value(j, c, r) : mat_value(j, r, c);
        const uint32_t hi = trans ? mat_value(j, c + 1, r) : mat_value(j, r, c + 1);
        conf_check(names[v], conf_fmt("lane %d register %d", t, j), g[t * 14 + first[v] + j],
                   lo | (hi << 16));
      }
  }
  CUDA_CHECK(cudaFree(d_out));
}

// ---------------------------------------------------------------------------------------------
// mma.sync
// ---------------------------------------------------------------------------------------------
// Host matrices (row-major): A is M x K, B is K x N, C and D are M x N.
struct MmaData {
  int M, N, K;
  std::vector<float> A, B, C;
};

MmaData make_mma_data(int M, int N, int K, int seed) {
  MmaData d{
      M, N, K, std::vector<float>(M * K), std::vector<float>(K * N), std::vector<float>(M * N)};
  for (int i = 0; i < M * K; ++i)
    d.A[i] = 0.5f * static_cast<float>((i * 7 + seed * 3) % 15 - 7);  // -3.5 .. 3.5
  for (int i = 0; i < K * N; ++i) d.B[i] = static_cast<float>((i * 5 + seed) % 7 - 3);  // -3 .. 3
  for (int i = 0; i < M * N; ++i)
    d.C[i] = 0.25f * static_cast<float>((i * 11 + seed * 5) % 33 - 16);  // -4 .. 4
  return d;
}

std::vector<double> host_mma(const MmaData& d) {
  std::vector<double> D(d.M * d.N);
  for (int i = 0; i < d.M; ++i)
    for (int j = 0; j < d.N; ++j) {
      double s = d.C[i * d.N + j];
      for (int k = 0; k < d.K; ++k) s += static_cast<double>(d.A[i * d.K + k]) * d.B[k * d.N + j];
      D[i * d.N + j] = s;
    }
  return D;
}

// Fragment coordinates from the ISA's formulas (g = groupID, q = threadID_in_group).
// m16n8k16 .f16/.bf16, A element i (0..7): row g for i in {0,1,4,5} else g + 8; col 2q + (i & 1),
// plus 8 for i >= 4.
__host__ __device__ inline void frag_a_16816(int lane, int i, int* row, int* col) {
  const int g = lane >> 2, q = lane % 4;
  *row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
  *col = q * 2 + (i & 1) + (i >= 4 ? 8 : 0);
}
// m16n8k16 B element i (0..3): row 2q + (i & 1), plus 8 for i >= 2; col g.
__host__ __device__ inline void frag_b_16816(int lane, int i, int* row, int* col) {
  const int g = lane >> 2, q = lane % 4;
  *row = q * 2 + (i & 1) + (i >= 2 ? 8 : 0);
  *col = g;
}
// m16n8 accumulator element i (0..3): row g for i < 2 else g + 8; col 2q + (i & 1).
__host__ __device__ inline void frag_c_16n8(int lane, int i, int* row, int* col) {
  const int g = lane >> 2, q = lane % 4;
  *row = i < 2 ? g : g + 8;
  *col = q * 2 + (i & 1);
}
// m16n8k8 .tf32 A element i (0..3): row g for a0, a2 and g + 8 for a1, a3; col q for a0, a1 and
// q + 4 for a2, a3.
__host__ __device__ inline void frag_a_1688_tf32(int lane, int i, int* row, int* col) {
  const int g = lane >> 2, q = lane % 4;
  *row = (i % 2 == 0) ? g : g + 8;
  *col = i < 2 ? q : q + 4;
}
// m16n8k8 .tf32 B element i (0..1): row q for b0, q + 4 for b1; col g.
__host__ __device__ inline void frag_b_1688_tf32(int lane, int i, int* row, int* col) {
  const int g = lane >> 2, q = lane % 4;
  *row = i == 0 ? q : q + 4;
  *col = g;
}

enum MmaKind { kF16F32, kBF16F32, kF16F16, kTF32 };

// One warp. A, B, C are float row-major in global memory; the kernel converts each fragment
// element to the instruction's input type and packs element 2k in the low half of register k.
__global__ void k_mma(int kind, const float* A, const float* B, const float* C, float* D) {
  const int lane = threadIdx.x;
  int row, col;
  if (kind == kTF32) {
    uint32_t a[4], b[2];
    float c[4], d[4];
    for (int i = 0; i < 4; ++i)
      frag_a_1688_tf32(lane, i, &row, &col), a[i] = __float_as_uint(A[row * 8 + col]);
    for (int i = 0; i < 2; ++i)
      frag_b_1688_tf32(lane, i, &row, &col), b[i] = __float_as_uint(B[row * 8 + col]);
    for (int i = 0; i < 4; ++i) frag_c_16n8(lane, i, &row, &col), c[i] = C[row * 8 + col];
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, "
        "{%10, %11, %12, %13};"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
          "f"(c[2]), "f"(c[3]));
    for (int i = 0; i < 4; ++i) frag_c_16n8(lane, i, &row, &col), D[row * 8 + col] = d[i];
    return;
  }
  // 16-bit inputs: convert with the matching round-to-nearest conversion (exact for these values).
  auto to16 = [&](float f) -> uint32_t {
    if (kind == kBF16F32) return __bfloat16_as_ushort(__float2bfloat16_rn(f));
    return __half_as_ushort(__float2half_rn(f));
  };
  uint32_t a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
  for (int i = 0; i < 8; ++i) {
    frag_a_16816(lane, i, &row, &col);
    a[i / 2] |= to16(A[row * 16 + col]) << (16 * (i % 2));
  }
  for (int i = 0; i < 4; ++i) {
    frag_b_16816(lane, i, &row, &col);
    b[i / 2] |= to16(B[row * 8 + col]) << (16 * (i % 2));
  }
  float c[4], d[4];
  for (int i = 0; i < 4; ++i) frag_c_16n8(lane, i, &row, &col), c[i] = C[row * 8 + col];
  if (kind == kF16F32) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, "
        "{%10, %11, %12, %13};"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
          "f"(c[2]), "f"(c[3]));
  } else if (kind == kBF16F32) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, "
        "{%10, %11, %12, %13};"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
          "f"(c[2]), "f"(c[3]));
  } else {
    // f16 accumulator: C and D are two .f16x2 registers holding c0..c3 low to high.
    uint32_t ch[2] = {0, 0}, dh[2];
    for (int i = 0; i < 4; ++i) ch[i / 2] |= to16(c[i]) << (16 * (i % 2));
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3, %4, %5}, {%6, %7}, "
        "{%8, %9};"
        : "=r"(dh[0]), "=r"(dh[1])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(ch[0]), "r"(ch[1]));
    for (int i = 0; i < 4; ++i)
      d[i] =
          __half2float(__ushort_as_half(static_cast<unsigned short>(dh[i / 2] >> (16 * (i % 2)))));
  }
  for (int i = 0; i < 4; ++i) frag_c_16n8(lane, i, &row, &col), D[row * 8 + col] = d[i];
}

void run_mma(int kind, const char* name, int seed) {
  const int M = 16, N = 8, K = kind == kTF32 ? 8 : 16;
  const MmaData h = make_mma_data(M, N, K, seed);
  float *dA, *dB, *dC, *dD;
  CUDA_CHECK(cudaMalloc(&dA, h.A.size() * 4));
  CUDA_CHECK(cudaMalloc(&dB, h.B.size() * 4));
  CUDA_CHECK(cudaMalloc(&dC, h.C.size() * 4));
  CUDA_CHECK(cudaMalloc(&dD, M * N * 4));
  CUDA_CHECK(cudaMemcpy(dA, h.A.data(), h.A.size() * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dB, h.B.data(), h.B.size() * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dC, h.C.data(), h.C.size() * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dD, 0xff, M * N * 4));
  k_mma<<<1, 32>>>(kind, dA, dB, dC, dD);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> got(M * N);
  CUDA_CHECK(cudaMemcpy(got.data(), dD, got.size() * 4, cudaMemcpyDeviceToHost));
  const std::vector<double> e = host_mma(h);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      const float ef =
          static_cast<float>(e[i * N + j]);  // exact: the sums are small multiples of 1/4
      uint32_t gb, eb;
      std::memcpy(&gb, &got[i * N + j], 4);
      std::memcpy(&eb, &ef, 4);
      conf_check_bits(name, conf_fmt("D[%d][%d]", i, j), gb, eb, 32);
    }
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dC));
  CUDA_CHECK(cudaFree(dD));
}

// ---------------------------------------------------------------------------------------------
// wmma m16n16k16
// ---------------------------------------------------------------------------------------------
// Leading dimensions, padded past 16 elements. The ISA requires every row (or column) start to be
// aligned to the fragment size, 32 bytes for these shapes: a multiple of 16 halves, 8 floats.
constexpr int kLd = 32;   // A and B (halves): 64-byte rows
constexpr int kLdc = 24;  // C and D (floats): 96-byte rows

// A is stored row- or column-major with leading dimension kLd, likewise B; C row-major with kLdc.
// D = A * B + C is stored row-major (store_row = 1) or column-major with kLdc. D2 = A * B + D,
// a second mma_sync on the same accumulator, is stored row-major into D2.
template <typename ALayout, typename BLayout>
__global__ void k_wmma(const __half* A, const __half* B, const float* C, float* D, float* D2,
                       int store_row) {
  using namespace nvcuda;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, ALayout> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, BLayout> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
  wmma::load_matrix_sync(a, A, kLd);
  wmma::load_matrix_sync(b, B, kLd);
  wmma::load_matrix_sync(c, C, kLdc, wmma::mem_row_major);
  wmma::mma_sync(c, a, b, c);
  wmma::store_matrix_sync(D, c, kLdc, store_row ? wmma::mem_row_major : wmma::mem_col_major);
  wmma::mma_sync(c, a, b, c);
  wmma::store_matrix_sync(D2, c, kLdc, wmma::mem_row_major);
}

template <typename ALayout, typename BLayout>
void run_wmma(bool a_row, bool b_row, bool store_row, int seed) {
  const MmaData h = make_mma_data(16, 16, 16, seed);
  std::vector<__half> A(16 * kLd, __float2half(99.0f)),
      B(16 * kLd, __float2half(-99.0f));  // padding: poison
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 16; ++k)
      A[a_row ? i * kLd + k : k * kLd + i] = __float2half(h.A[i * 16 + k]);
  for (int k = 0; k < 16; ++k)
    for (int j = 0; j < 16; ++j)
      B[b_row ? k * kLd + j : j * kLd + k] = __float2half(h.B[k * 16 + j]);
  std::vector<float> C(16 * kLdc, 1e6f);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) C[i * kLdc + j] = h.C[i * 16 + j];
  __half *dA, *dB;
  float *dC, *dD, *dD2;
  CUDA_CHECK(cudaMalloc(&dA, A.size() * 2));
  CUDA_CHECK(cudaMalloc(&dB, B.size() * 2));
  CUDA_CHECK(cudaMalloc(&dC, C.size() * 4));
  CUDA_CHECK(cudaMalloc(&dD, 16 * kLdc * 4));
  CUDA_CHECK(cudaMalloc(&dD2, 16 * kLdc * 4));
  CUDA_CHECK(cudaMemcpy(dA, A.data(), A.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dB, B.data(), B.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dC, C.data(), C.size() * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dD, 0, 16 * kLdc * 4));
  CUDA_CHECK(cudaMemset(dD2, 0, 16 * kLdc * 4));
  k_wmma<ALayout, BLayout><<<1, 32>>>(dA, dB, dC, dD, dD2, store_row ? 1 : 0);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> D(16 * kLdc), D2(16 * kLdc);
  CUDA_CHECK(cudaMemcpy(D.data(), dD, D.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(D2.data(), dD2, D2.size() * 4, cudaMemcpyDeviceToHost));
  const std::vector<double> e = host_mma(h);
  ConfStr name = conf_fmt("wmma m16n16k16 A %s, B %s, store %s", a_row ? "row" : "col",
                          b_row ? "row" : "col", store_row ? "row" : "col");
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      const float ef = static_cast<float>(e[i * 16 + j]);
      double ab = e[i * 16 + j] - h.C[i * 16 + j];
      const float ef2 = static_cast<float>(e[i * 16 + j] + ab);
      const float g1 = D[store_row ? i * kLdc + j : j * kLdc + i], g2 = D2[i * kLdc + j];
      uint32_t gb, eb;
      std::memcpy(&gb, &g1, 4);
      std::memcpy(&eb, &ef, 4);
      conf_check_bits(name.s, conf_fmt("D[%d][%d]", i, j), gb, eb, 32);
      std::memcpy(&gb, &g2, 4);
      std::memcpy(&eb, &ef2, 4);
      conf_check_bits(name.s, conf_fmt("second mma_sync: D2[%d][%d]", i, j), gb, eb, 32);
    }
  // The columns beyond 16 of the stored rows (or rows of the stored columns) stay 0.
  for (int i = 0; i < 16; ++i)
    for (int j = 16; j < kLdc; ++j) {
      conf_check(name.s, conf_fmt("padding D[%d][%d] untouched", i, j),
                 D[i * kLdc + j] == 0.0f ? 0 : 1, 0);
      conf_check(name.s, conf_fmt("padding D2[%d][%d] untouched", i, j),
                 D2[i * kLdc + j] == 0.0f ? 0 : 1, 0);
    }
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dC));
  CUDA_CHECK(cudaFree(dD));
  CUDA_CHECK(cudaFree(dD2));
}

}  // namespace

int main() {
  conf_require_device();
  test_ldmatrix();
  run_mma(kF16F32, "mma.m16n8k16.row.col.f32.f16.f16.f32", 1);
  run_mma(kBF16F32, "mma.m16n8k16.row.col.f32.bf16.bf16.f32", 2);
  run_mma(kF16F16, "mma.m16n8k16.row.col.f16.f16.f16.f16", 3);
  run_mma(kTF32, "mma.m16n8k8.row.col.f32.tf32.tf32.f32", 4);
  using nvcuda::wmma::col_major;
  using nvcuda::wmma::row_major;
  run_wmma<row_major, row_major>(true, true, true, 5);
  run_wmma<row_major, col_major>(true, false, false, 6);
  run_wmma<col_major, row_major>(false, true, true, 7);
  run_wmma<col_major, col_major>(false, false, false, 8);
  return conf_finish("tensor_core");
}
