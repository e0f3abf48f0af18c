// A small Hopper GEMM, C = A * B^T (A: M x K, B: N x K, both row-major f16; C: M x N f32), built
// from the sm_90a pieces together: each CTA of one or two warpgroups loads its A and B tiles with
// cp.async.bulk.tensor.2d through tensor maps (cuTensorMapEncodeTiled, reached through
// cudaGetDriverEntryPointByVersion, 128-byte swizzle), waits for them on an mbarrier armed with
// expect_tx, multiplies them with wgmma.mma_async.m64n64k16.f32.f16.f16 from shared-memory
// descriptors (K-major, 128-byte swizzle), in a two-stage pipeline over K, and stores C with
// bounds checks. Sizes that are not multiples of the tile rely on the tensor copy's zero fill.
//
// Expected values, from the definitions:
// - PTX ISA, "Tensor copy" / "Swizzling modes": a 2D tile-mode load of a box {64 elements, R rows}
//   of f16 writes row r at byte r * 128 of the 1024-byte aligned buffer, its 16-byte chunk c at
//   chunk c ^ (r % 8) (the 128-byte swizzle), elements outside the tensor as zero; every byte of the
//   box, zero-filled ones included, counts toward the mbarrier's complete_tx.
// - PTX ISA, "Matrix Descriptor Format" and the K-major canonical layout with 128-byte swizzle:
//   8-row atoms of 128-byte rows, SBO = 1024 bytes between atoms, LBO unused; the instruction's
//   16 K-elements (32 bytes) start 32 * j bytes into the row for the j-th k16 step of a 64-wide
//   K tile; swizzle mode 1 (bits 62-63) is 128 bytes.
// - PTX ISA, wgmma's accumulator fragment for m64nNk16 f32: warp w of the warpgroup holds rows
//   16w .. 16w + 15; lane l, element i at row 16w + l/4 + 8 ((i/2) % 2), column 8 (i/4) + 2 (l%4)
//   + i%2.
// - The values: A and B hold multiples of 1/256 of magnitude at most 2 (exact in f16), so every
//   product a*b is exact in f32 (at most 22 significant bits). C is their sum over K, computed on
//   the host in double (exact). Summing K exact products in f32 in any order, with each addition
//   rounded or truncated to 24 bits (relative error below u = 2^-23), errs by at most
//   gamma_K * sum |a*b| with gamma_K = K u / (1 - K u) (the standard bound for recursive
//   summation). A tensor core may add a group of g products at once, aligned to the largest and
//   truncated, each term then erring by at most u times the largest: (g + 1) u per group, at most
//   2 K u over the K / g groups for any g >= 1. The tolerance is therefore 2 gamma_K * sum |a*b|,
//   element by element. A wrong layout or a missing tile moves results by whole products, far
//   outside it.
// - Every element of C is written once, and nothing beyond it: C is followed by a guard of rows
//   filled with a sentinel that must survive.
#include <cuda.h>
#include <cuda_fp16.h>
#include <cudaTypedefs.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "conf_common.h"
#include "conf_tensor_map.h"

namespace {

constexpr int kBN = 64;             // N of the tile (one m64n64k16 per k16 step)
constexpr int kBK = 64;             // K of the tile: 64 f16 = 128 bytes, one swizzle row
constexpr int kRowBytes = kBK * 2;  // 128
constexpr int kStages = 2;

__device__ uint32_t smem_addr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// The descriptor of a K-major operand with 128-byte swizzle starting at shared address `a`.
__device__ uint64_t desc_sw128(uint32_t a) {
  const uint64_t lbo = 16, sbo = 1024, mode = 1;
  return uint64_t((a & 0x3FFFF) >> 4) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (mode << 62);
}

__device__ void wgmma_m64n64k16(float* d, uint64_t da, uint64_t db) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, "
      "%11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, "
      "%31}, %32, %33, 1, 1, 1, 0, 0;\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(da), "l"(db)
      : "memory");
}

// Thread 0 issues the two tensor copies of k-tile kt into stage s and arms its mbarrier with
// their bytes (the whole boxes, zero-filled parts included).
template <int WG>
__device__ void load_tile(const CUtensorMap* ma, const CUtensorMap* mb, uint32_t a_dst, uint32_t b_dst,
                          uint32_t bar, int kt, int m0, int n0) {
  constexpr uint32_t bytes = (64 * WG + kBN) * kRowBytes;
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
      ::"r"(a_dst), "l"(reinterpret_cast<uint64_t>(ma)), "r"(kt * kBK), "r"(m0), "r"(bar) : "memory");
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
      ::"r"(b_dst), "l"(reinterpret_cast<uint64_t>(mb)), "r"(kt * kBK), "r"(n0), "r"(bar) : "memory");
}

// One CTA computes C[m0 .. m0 + 64 WG) x [n0 .. n0 + 64); warpgroup g the 64 rows from m0 + 64 g.
template <int WG>
__global__ void __launch_bounds__(128 * WG) k_gemm(const __grid_constant__ CUtensorMap map_a,
                                                   const __grid_constant__ CUtensorMap map_b, float* c,
                                                   int M, int N, int K) {
  constexpr uint32_t a_bytes = 64 * WG * kRowBytes, b_bytes = kBN * kRowBytes;
  constexpr uint32_t stage_bytes = a_bytes + b_bytes;
  extern __shared__ uint8_t smem_raw[];
  __shared__ uint64_t full[kStages];
  const uint32_t raw = smem_addr(smem_raw);
  const uint32_t base = raw + ((1024 - (raw & 1023)) & 1023);  // the swizzle patterns start 1024-aligned
  const int tid = threadIdx.x, g = tid / 128, w = (tid % 128) / 32, l = tid % 32;
  const int m0 = blockIdx.y * 64 * WG, n0 = blockIdx.x * kBN;
  const int ktiles = (K + kBK - 1) / kBK;

  if (tid == 0) {
    for (int s = 0; s < kStages; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&full[s])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (tid == 0)
    for (int s = 0; s < kStages && s < ktiles; ++s)
      load_tile<WG>(&map_a, &map_b, base + s * stage_bytes, base + s * stage_bytes + a_bytes,
                    smem_addr(&full[s]), s, m0, n0);

  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = 0.0f;
  for (int kt = 0; kt < ktiles; ++kt) {
    const int s = kt % kStages;
    const uint32_t parity = (kt / kStages) & 1, bar = smem_addr(&full[s]);
    uint32_t done = 0;
    while (!done)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                   : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    const uint32_t a_tile = base + s * stage_bytes + g * 64 * kRowBytes, b_tile = base + s * stage_bytes + a_bytes;
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    for (int j = 0; j < kBK / 16; ++j) wgmma_m64n64k16(d, desc_sw128(a_tile + 32 * j), desc_sw128(b_tile + 32 * j));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    // Every warpgroup is done reading stage s: thread 0 refills it with k-tile kt + 2 while the
    // other stage (k-tile kt + 1, already loading) is multiplied.
    __syncthreads();
    if (tid == 0 && kt + kStages < ktiles)
      load_tile<WG>(&map_a, &map_b, base + s * stage_bytes, base + s * stage_bytes + a_bytes, bar, kt + kStages,
                    m0, n0);
  }

  for (int i = 0; i < 32; ++i) {
    const int row = m0 + 64 * g + 16 * w + l / 4 + 8 * ((i / 2) % 2);
    const int col = n0 + 8 * (i / 4) + 2 * (l % 4) + i % 2;
    if (row < M && col < N) c[size_t(row) * N + col] = d[i];
  }
}

PFN_cuTensorMapEncodeTiled_v12000 g_encode = nullptr;

// A rows x K row-major f16 matrix as a 2D tensor map {K, rows} with a box {64, box_rows}.
bool make_map(CUtensorMap* m, void* p, int rows, int K, int box_rows) {
  const uint64_t dims[2] = {uint64_t(K), uint64_t(rows)}, strides[1] = {uint64_t(K) * 2};
  const uint32_t box[2] = {uint32_t(kBK), uint32_t(box_rows)}, es[2] = {1, 1};
  const CUresult r = g_encode(m, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p, dims, strides, box, es,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return conf_check("cuTensorMapEncodeTiled", conf_fmt("f16 {%d, %d}, box {64, %d}, 128B swizzle", K, rows, box_rows),
                    int(r), int(CUDA_SUCCESS));
}

// A value in [-2, 2] that is a multiple of 1/256 (exact in f16), from a small LCG.
float next_value(uint32_t& state) {
  state = state * 1664525u + 1013904223u;
  return float(int((state >> 8) % 1025) - 512) / 256.0f;
}

template <int WG>
void run_case(int M, int N, int K, uint32_t seed) {
  const char* name = WG == 1 ? "gemm, one warpgroup" : "gemm, two warpgroups";
  std::vector<float> a(size_t(M) * K), b(size_t(N) * K);
  for (auto& v : a) v = next_value(seed);
  for (auto& v : b) v = next_value(seed);
  std::vector<__half> ah(a.size()), bh(b.size());
  for (size_t i = 0; i < a.size(); ++i) ah[i] = __float2half(a[i]);
  for (size_t i = 0; i < b.size(); ++i) bh[i] = __float2half(b[i]);

  constexpr int kGuardRows = 64;
  const size_t c_elems = size_t(M) * N, c_total = size_t(M + kGuardRows) * N;
  const uint32_t sentinel = 0x7FC0DEADu;  // a NaN no product sum can give
  __half *d_a, *d_b;
  float* d_c;
  CUDA_CHECK(cudaMalloc(&d_a, ah.size() * sizeof(__half)));
  CUDA_CHECK(cudaMalloc(&d_b, bh.size() * sizeof(__half)));
  CUDA_CHECK(cudaMalloc(&d_c, c_total * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(d_a, ah.data(), ah.size() * sizeof(__half), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_b, bh.data(), bh.size() * sizeof(__half), cudaMemcpyHostToDevice));
  std::vector<uint32_t> c_init(c_total, sentinel);
  CUDA_CHECK(cudaMemcpy(d_c, c_init.data(), c_total * sizeof(float), cudaMemcpyHostToDevice));

  alignas(64) CUtensorMap map_a, map_b;
  if (!make_map(&map_a, d_a, M, K, 64 * WG) || !make_map(&map_b, d_b, N, K, kBN)) return;

  const int smem = kStages * (64 * WG + kBN) * kRowBytes + 1024;  // + the alignment slack
  CUDA_CHECK(cudaFuncSetAttribute(k_gemm<WG>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const dim3 grid((N + kBN - 1) / kBN, (M + 64 * WG - 1) / (64 * WG));
  k_gemm<WG><<<grid, 128 * WG, smem>>>(map_a, map_b, d_c, M, N, K);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> got(c_total);
  CUDA_CHECK(cudaMemcpy(got.data(), d_c, c_total * sizeof(float), cudaMemcpyDeviceToHost));

  const double u = std::ldexp(1.0, -23), gamma = 2.0 * K * u / (1.0 - K * u);
  int bad = 0;
  double worst = 0.0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double exact = 0.0, mag = 0.0;
      for (int k = 0; k < K; ++k) {
        const double p = double(a[size_t(i) * K + k]) * double(b[size_t(j) * K + k]);
        exact += p;
        mag += std::fabs(p);
      }
      const double g = got[size_t(i) * N + j], err = std::fabs(g - exact), tol = gamma * mag;
      const bool ok = err <= tol;  // false for a NaN (the sentinel of an element never written)
      if (!ok && bad++ < 5)
        std::printf("%s %dx%dx%d: C[%d][%d] = %.9g, expected %.9g within %.3g\n", name, M, N, K, i, j, g, exact, tol);
      if (ok && tol > 0) worst = std::fmax(worst, err / tol);
    }
  conf_check_text(name, conf_fmt("%dx%dx%d: elements outside the fp32 summation bound", M, N, K).s, bad == 0,
                  conf_fmt("%d", bad).s, "0");
  int clobbered = 0;
  for (size_t i = c_elems; i < c_total; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &got[i], 4);
    clobbered += bits != sentinel;
  }
  conf_check(name, conf_fmt("%dx%dx%d: guard words written past C", M, N, K), clobbered, 0);
  std::printf("%s %dx%dx%d: grid %ux%u, largest error %.3f of the bound\n", name, M, N, K, grid.x, grid.y, worst);
  CUDA_CHECK(cudaFree(d_a));
  CUDA_CHECK(cudaFree(d_b));
  CUDA_CHECK(cudaFree(d_c));
}

}  // namespace

int main() {
  conf_require_device();
  int major = 0, minor = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  if (major != 9 || minor != 0) {
    std::printf("SKIP: wgmma and this build need sm_90a (this device is sm_%d%d)\n", major, minor);
    return 77;
  }
  g_encode = conf_encode_tiled(ConfLookupCheck::always);
  if (!g_encode) return conf_finish("hopper_gemm");

  run_case<1>(200, 136, 264, 1);  // M, N, K all off the tile: partial tiles on every edge
  run_case<2>(200, 136, 264, 2);
  run_case<2>(256, 128, 192, 3);  // whole tiles only
  run_case<1>(64, 64, 64, 4);     // one tile, one k-tile (the second stage never used)
  return conf_finish("hopper_gemm");
}
