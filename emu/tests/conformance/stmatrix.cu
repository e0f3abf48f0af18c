// stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16 (sm_90), as the PTX ISA defines it:
// the warp stores 1, 2 or 4 matrices of 8 x 8 16-bit elements; lanes 8j .. 8j + 7 give the
// addresses of the 8 rows (16 bytes each) of matrix j, and register j of lane l holds, low half
// first, elements (l / 4, 2 (l % 4)) and (l / 4, 2 (l % 4) + 1) of matrix j: the fragment of
// ldmatrix and of mma's 16-bit operands. With .trans the register's two elements are
// (2 (l % 4), l / 4) and (2 (l % 4) + 1, l / 4) instead (the matrix stored transposed).
// The expected bytes are computed on the host from that definition; rows go to scattered,
// 16-byte aligned addresses (row r of matrix j at slot kSlot[8j + r]) so that a layout that
// ignores the row addresses fails too. --plant changes every expected value.
#include <cstdint>
#include <cstring>
#include <vector>

#include "conf_common.h"

namespace {

bool g_plant = false;

constexpr int kSlots = 40;  // 16-byte slots of the shared buffer
// The slot of row r of matrix j (lane 8j + r supplies it): a permutation of 32 of the 40 slots.
__host__ __device__ constexpr int slot(int lane) { return (lane * 13 + 5) % kSlots; }

template <int N, bool T>
__global__ void k_st(uint16_t* out) {
  __shared__ alignas(16) uint16_t buf[kSlots * 8];
  const int l = threadIdx.x;
  for (int i = l; i < kSlots * 8; i += 32) buf[i] = 0xDEAD;
  __syncwarp();
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(&buf[slot(l) * 8]));
  uint32_t r[4];
  for (int j = 0; j < 4; ++j) r[j] = uint32_t(((j * 32 + l) * 2) << 16 | ((j * 32 + l) * 2 + 1));  // distinct halves
  if (N == 1) {
    if (T) asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" ::"r"(a), "r"(r[0]) : "memory");
    else asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" ::"r"(a), "r"(r[0]) : "memory");
  } else if (N == 2) {
    if (T) asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" ::"r"(a), "r"(r[0]), "r"(r[1]) : "memory");
    else asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" ::"r"(a), "r"(r[0]), "r"(r[1]) : "memory");
  } else {
    if (T)
      asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(r[0]), "r"(r[1]),
                   "r"(r[2]), "r"(r[3])
                   : "memory");
    else
      asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(r[0]), "r"(r[1]), "r"(r[2]),
                   "r"(r[3])
                   : "memory");
  }
  __syncwarp();
  for (int i = l; i < kSlots * 8; i += 32) out[i] = buf[i];
}

template <int N, bool T>
void run() {
  uint16_t* d;
  CUDA_CHECK(cudaMalloc(&d, kSlots * 16));
  k_st<N, T><<<1, 32>>>(d);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint16_t> got(kSlots * 8);
  CUDA_CHECK(cudaMemcpy(got.data(), d, kSlots * 16, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(d));
  std::vector<uint16_t> want(kSlots * 8, 0xDEAD);
  for (int j = 0; j < N; ++j)
    for (int l = 0; l < 32; ++l) {
      const uint32_t v = uint32_t(((j * 32 + l) * 2) << 16 | ((j * 32 + l) * 2 + 1));
      const int g = l / 4, t = l % 4;
      // (row, column) of the register's low and high halves in matrix j.
      const int r0 = T ? 2 * t : g, c0 = T ? g : 2 * t, r1 = T ? 2 * t + 1 : g, c1 = T ? g : 2 * t + 1;
      want[slot(8 * j + r0) * 8 + c0] = uint16_t(v);
      want[slot(8 * j + r1) * 8 + c1] = uint16_t(v >> 16);
    }
  for (int i = 0; i < kSlots * 8; ++i) {
    const uint16_t w = g_plant ? uint16_t(want[i] ^ 1) : want[i];
    if (got[i] != w || i % 8 == 0)  // every slot's first element is checked, every mismatch reported
      conf_check(T ? "stmatrix .trans" : "stmatrix", conf_fmt("x%d, slot %d element %d", N, i / 8, i % 8), got[i], w);
  }
}

}  // namespace

int main(int argc, char** argv) {
  g_plant = argc > 1 && std::strcmp(argv[1], "--plant") == 0;
  conf_require_device();
  int major = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  if (major < 9) {
    std::printf("SKIP: stmatrix needs compute capability 9.0\n");
    return 77;
  }
  run<1, false>();
  run<2, false>();
  run<4, false>();
  run<1, true>();
  run<2, true>();
  run<4, true>();
  if (g_plant) {
    const int failed = conf_failures(), total = conf_checks();
    std::printf("stmatrix --plant: %d of %d checks failed\n", failed, total);
    return failed == total && total > 0 ? 0 : 1;
  }
  return conf_finish("stmatrix");
}
