// atom.cas.b16: the 16-bit compare-and-swap (PTX ISA: atom.cas supports .b16 on sm_70 and
// later), in global, shared and generic memory, and the additions built on it.
//
// The ISA's definition: atom.cas.b16 d, [a], b, c reads the 16 bits at a into d and stores c
// there when they equal b; the other half of the 32-bit word is untouched. atomicCAS(unsigned
// short*) is this instruction, and a half or bfloat16 atomicAdd compiled for a GPU without a
// native one (bfloat16 before sm_90) is a loop of it: read, add, compare-and-swap until no other
// thread wrote in between. Adding 1 from each of N threads gives exactly N while N is within the
// integers the format holds (256 for bfloat16, 2048 for half).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "conf_common.h"

namespace {

struct CasCase {
  uint16_t old, compare, value;
};
// Equal and unequal compares, with values whose sign bit or low bits alone differ.
#define CAS_CASES                                                                           \
  {{0x0000, 0x0000, 0xFFFF}, {0x8001, 0x8001, 0x7FFE}, {0x1234, 0x1235, 0xBEEF},          \
   {0xFFFF, 0x7FFF, 0x0000}, {0x7FFF, 0xFFFF, 0x0001}, {0xABCD, 0xABCD, 0xABCD},          \
   {0x00FF, 0x00FF, 0xFF00}, {0xFF00, 0x00FF, 0x1111}}
constexpr CasCase kCases[] = CAS_CASES;
constexpr int kCaseCount = sizeof kCases / sizeof kCases[0];
constexpr uint16_t kGuard = 0xA55A;  // the other half of each case's 32-bit word

constexpr int kAdders = 256;

__device__ uint16_t cas_global(uint16_t* p, uint16_t compare, uint16_t value) {
  uint16_t old;
  asm volatile("atom.global.cas.b16 %0, [%1], %2, %3;"
               : "=h"(old) : "l"(p), "h"(compare), "h"(value) : "memory");
  return old;
}
__device__ uint16_t cas_shared(uint16_t* p, uint16_t compare, uint16_t value) {
  uint16_t old;
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  asm volatile("atom.shared.cas.b16 %0, [%1], %2, %3;"
               : "=h"(old) : "r"(a), "h"(compare), "h"(value) : "memory");
  return old;
}
__device__ uint16_t cas_generic(uint16_t* p, uint16_t compare, uint16_t value) {
  uint16_t old;
  asm volatile("atom.cas.b16 %0, [%1], %2, %3;"
               : "=h"(old) : "l"(p), "h"(compare), "h"(value) : "memory");
  return old;
}

}  // namespace

__constant__ CasCase c_cases[kCaseCount] = CAS_CASES;

// Case i sits in the low (even i) or high (odd i) half of word i, the guard in the other half.
// mode: 0 global, 1 shared, 2 generic (global), 3 generic (shared), 4 atomicCAS (global).
__global__ void k_cas(int mode, uint32_t* words, uint16_t* returned) {
  __shared__ uint32_t s_words[kCaseCount];
  const int i = threadIdx.x;
  if (i >= kCaseCount) return;
  const CasCase c = c_cases[i];
  const uint32_t word = (i % 2 == 0) ? (uint32_t(kGuard) << 16 | c.old) : (uint32_t(c.old) << 16 | kGuard);
  const bool in_shared = mode == 1 || mode == 3;
  uint32_t* w = in_shared ? &s_words[i] : &words[i];
  *w = word;
  uint16_t* half = reinterpret_cast<uint16_t*>(w) + (i % 2);
  uint16_t old = 0;
  switch (mode) {
    case 0: old = cas_global(half, c.compare, c.value); break;
    case 1: old = cas_shared(half, c.compare, c.value); break;
    case 2: case 3: old = cas_generic(half, c.compare, c.value); break;
    default: old = atomicCAS(reinterpret_cast<unsigned short*>(half), c.compare, c.value); break;
  }
  returned[i] = old;
  if (in_shared) words[i] = *w;
}

namespace {

// x += v by compare-and-swap, for a 16-bit float type F.
template <typename F>
__device__ void add_by_cas(F* x, float v, bool shared) {
  uint16_t* bits = reinterpret_cast<uint16_t*>(x);
  // An atomic read to start from: a swap of 0 for 0 changes nothing.
  uint16_t seen = shared ? cas_shared(bits, 0, 0) : cas_global(bits, 0, 0);
  for (;;) {
    F now;
    memcpy(&now, &seen, 2);
    const F sum = F(float(now) + v);
    uint16_t want;
    memcpy(&want, &sum, 2);
    const uint16_t old = shared ? cas_shared(bits, seen, want) : cas_global(bits, seen, want);
    if (old == seen) return;
    seen = old;
  }
}

}  // namespace

// Every thread adds 1 to a half and a bfloat16 in global memory, and in shared memory (whose
// totals block 0 thread 0 copies out).
__global__ void k_add(__half* g_half, __nv_bfloat16* g_bf16, __half* s_half_out, __nv_bfloat16* s_bf16_out) {
  __shared__ __half s_half;
  __shared__ __nv_bfloat16 s_bf16;
  if (threadIdx.x == 0) {
    s_half = __float2half(0.0f);
    s_bf16 = __float2bfloat16(0.0f);
  }
  __syncthreads();
  add_by_cas(g_half, 1.0f, false);
  add_by_cas(g_bf16, 1.0f, false);
  add_by_cas(&s_half, 1.0f, true);
  add_by_cas(&s_bf16, 1.0f, true);
  __syncthreads();
  if (threadIdx.x == 0) {
    s_half_out[blockIdx.x] = s_half;
    s_bf16_out[blockIdx.x] = s_bf16;
  }
}

int main() {
  conf_require_device();
  static const char* const kModes[] = {"atom.global.cas.b16", "atom.shared.cas.b16",
                                       "atom.cas.b16 (generic, global)",
                                       "atom.cas.b16 (generic, shared)", "atomicCAS(unsigned short*)"};
  uint32_t* words = nullptr;
  uint16_t* returned = nullptr;
  CUDA_CHECK(cudaMalloc(&words, kCaseCount * sizeof(uint32_t)));
  CUDA_CHECK(cudaMalloc(&returned, kCaseCount * sizeof(uint16_t)));
  for (int mode = 0; mode < 5; ++mode) {
    k_cas<<<1, 32>>>(mode, words, returned);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    uint32_t got_words[kCaseCount];
    uint16_t got_old[kCaseCount];
    CUDA_CHECK(cudaMemcpy(got_words, words, sizeof got_words, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(got_old, returned, sizeof got_old, cudaMemcpyDeviceToHost));
    for (int i = 0; i < kCaseCount; ++i) {
      const CasCase c = kCases[i];
      const ConfStr in = conf_fmt("[0x%04x], 0x%04x, 0x%04x (%s half)", c.old, c.compare, c.value,
                                  i % 2 ? "high" : "low");
      const uint16_t stored = c.old == c.compare ? c.value : c.old;
      const uint32_t want_word = (i % 2 == 0) ? (uint32_t(kGuard) << 16 | stored) : (uint32_t(stored) << 16 | kGuard);
      conf_check(kModes[mode], in, got_old[i], c.old);
      conf_check(kModes[mode], in, got_words[i], want_word);
    }
  }
  CUDA_CHECK(cudaFree(words));
  CUDA_CHECK(cudaFree(returned));

  constexpr int kBlocks = 4;  // kBlocks * kAdders additions to the global totals
  __half* g_half = nullptr;
  __nv_bfloat16 *g_bf16 = nullptr, *s_bf16 = nullptr;
  __half* s_half = nullptr;
  CUDA_CHECK(cudaMalloc(&g_half, sizeof(__half)));
  CUDA_CHECK(cudaMalloc(&g_bf16, sizeof(__nv_bfloat16)));
  CUDA_CHECK(cudaMalloc(&s_half, kBlocks * sizeof(__half)));
  CUDA_CHECK(cudaMalloc(&s_bf16, kBlocks * sizeof(__nv_bfloat16)));
  CUDA_CHECK(cudaMemset(g_half, 0, sizeof(__half)));
  CUDA_CHECK(cudaMemset(g_bf16, 0, sizeof(__nv_bfloat16)));
  k_add<<<kBlocks, kAdders>>>(g_half, g_bf16, s_half, s_bf16);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  uint16_t h_half = 0, h_bf16 = 0, h_s_half[kBlocks], h_s_bf16[kBlocks];
  CUDA_CHECK(cudaMemcpy(&h_half, g_half, 2, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&h_bf16, g_bf16, 2, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(h_s_half, s_half, sizeof h_s_half, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(h_s_bf16, s_bf16, sizeof h_s_bf16, cudaMemcpyDeviceToHost));
  // 1024 = 2^10: half 0x6400; bfloat16 stops at 256 = 2^8 (0x4380), where 256 + 1 rounds back
  // to 256 (to nearest, ties to even); 256 in half is 0x5C00.
  conf_check_bits("half += 1 by atom.global.cas.b16", conf_fmt("%d threads", kBlocks * kAdders), h_half, 0x6400, 16);
  conf_check_bits("bfloat16 += 1 by atom.global.cas.b16", conf_fmt("%d threads", kBlocks * kAdders), h_bf16, 0x4380, 16);
  for (int b = 0; b < kBlocks; ++b) {
    conf_check_bits("half += 1 by atom.shared.cas.b16", conf_fmt("%d threads, block %d", kAdders, b), h_s_half[b], 0x5C00, 16);
    conf_check_bits("bfloat16 += 1 by atom.shared.cas.b16", conf_fmt("%d threads, block %d", kAdders, b), h_s_bf16[b], 0x4380, 16);
  }
  CUDA_CHECK(cudaFree(g_half));
  CUDA_CHECK(cudaFree(g_bf16));
  CUDA_CHECK(cudaFree(s_half));
  CUDA_CHECK(cudaFree(s_bf16));
  return conf_finish("atomic_cas16");
}
