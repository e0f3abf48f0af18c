// Planted bug: the shared-memory descriptor of B points at the end of the tile instead of its
// start (the address of sb + its size), so the wgmma.mma_async reads past the block's shared
// memory. Expected: cudaErrorIllegalAddress, the emulator naming the descriptor, its fields and
// the first byte outside the window. --fixed: the descriptor starts at sb, and D = A B matches
// the host's product (the ISA's fragment layouts).
#include <cuda_fp16.h>

#include <cstdint>
#include <vector>

#include "fault_common.h"

// A: 64 x 16, B: 8 x 16 (N x K), both K-major without swizzle: core matrices of 8 rows x 16
// bytes; K neighbours LBO = 128 bytes apart, 8-row groups SBO = 256 bytes apart.
__device__ uint64_t desc(const void* p) {
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  return uint64_t((a & 0x3FFFF) >> 4) | (uint64_t(128 >> 4) << 16) | (uint64_t(256 >> 4) << 32);
}
__device__ int offset(int mn, int k) { return (mn % 8) * 8 + (mn / 8) * 128 + (k % 8) + (k / 8) * 64; }

__global__ void k_product(const __half* a, const __half* b, float* out, int fixed) {
  __shared__ alignas(128) __half sa[64 * 16];
  __shared__ alignas(128) __half sb[8 * 16];
  const int t = threadIdx.x;
  for (int i = t; i < 64 * 16; i += 128) sa[offset(i / 16, i % 16)] = a[i];
  if (t < 8 * 16) sb[offset(t / 16, t % 16)] = b[t];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, 0, 1, 1, 0, 0;"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
               : "l"(desc(sa)), "l"(desc(fixed ? sb : sb + 8 * 16)));  // PLANTED
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  float4* o = reinterpret_cast<float4*>(out) + t;
  *o = make_float4(d0, d1, d2, d3);
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  std::vector<__half> a(64 * 16), b(8 * 16);
  std::vector<float> fa(64 * 16), fb(8 * 16);
  for (int i = 0; i < 64 * 16; ++i) fa[i] = float((i * 7) % 5 - 2), a[i] = __float2half(fa[i]);
  for (int i = 0; i < 8 * 16; ++i) fb[i] = float((i * 3) % 7 - 3), b[i] = __float2half(fb[i]);
  __half *da = nullptr, *db = nullptr;
  float* dout = nullptr;
  CHECK(cudaMalloc(&da, a.size() * sizeof(__half)));
  CHECK(cudaMalloc(&db, b.size() * sizeof(__half)));
  CHECK(cudaMalloc(&dout, 128 * 4 * sizeof(float)));
  CHECK(cudaMemcpy(da, a.data(), a.size() * sizeof(__half), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b.data(), b.size() * sizeof(__half), cudaMemcpyHostToDevice));
  k_product<<<1, 128>>>(da, db, dout, fixed);
  if (!fixed) return verdict("wgmma_desc_oob", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  std::vector<float> got(128 * 4);
  CHECK(cudaMemcpy(got.data(), dout, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < 4; ++i) {  // accumulator element i of thread t (the ISA's figure)
      const int w = t / 32, l = t % 32;
      const int row = 16 * w + l / 4 + 8 * ((i / 2) % 2), col = 2 * (l % 4) + i % 2;
      float want = 0;
      for (int k = 0; k < 16; ++k) want += fa[row * 16 + k] * fb[col * 16 + k];
      if (got[t * 4 + i] != want)
        return fixed_wrong("wgmma_desc_oob", "D[%d][%d] = %g, expected %g", row, col, got[t * 4 + i], want);
    }
  return fixed_ok("wgmma_desc_oob");
}
