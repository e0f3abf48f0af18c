// atom.add.f32 and red.add.f32 with subnormal operands and results. PTX ISA, atom and red:
// "The floating-point operation .add operation rounds to nearest even. Current implementation of
// atom.add.f32 on global memory flushes subnormal inputs and results to sign-preserving zero;
// whereas atom.add.f32 on shared memory supports subnormal inputs and results and doesn't flush
// them to zero" (red.add.f32: the same words). So on global memory (through a .global or a
// generic address) the old value and b are flushed before the add and the sum after it; on
// shared memory the add is IEEE's. The value atom returns is the old value as memory held it.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "conf_common.h"

namespace {

constexpr int kCases = 7;
// (old value in memory, b): subnormal b; subnormal old; a subnormal sum of normals; a negative
// subnormal old plus -0; a subnormal b below 1's ulp; a normal sum of two smallest normals; a
// subnormal sum of subnormals.
const float kOld[kCases] = {0.0f, 0x1p-140f, 0x1.8p-126f, -0x1p-149f, 1.0f, 0x1p-126f, 0x1p-140f};
const float kB[kCases] = {0x1p-140f, 0.0f, -0x1p-126f, -0.0f, 0x1p-130f, 0x1p-126f, 0x1p-141f};

enum Form { ATOM_GLOBAL, RED_GLOBAL, ATOM_GENERIC_GLOBAL, ATOM_SHARED, RED_SHARED, ATOM_GENERIC_SHARED, FORMS };
const char* const kForm[FORMS] = {"atom.global.add.f32", "red.global.add.f32", "atom.add.f32 (generic, global)",
                                  "atom.shared.add.f32", "red.shared.add.f32", "atom.add.f32 (generic, shared)"};

}  // namespace

// Thread i adds b[i] to word i (in global memory, or in a shared copy written back afterwards).
__global__ void k_add(int form, const float* olds, const float* bs, float* mem, float* ret) {
  __shared__ float s[kCases];
  const int i = threadIdx.x;
  if (i >= kCases) return;
  const float b = bs[i];
  float r = 0;
  s[i] = olds[i];
  mem[i] = olds[i];
  __syncwarp(0x7f);
  const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(&s[i]));
  switch (form) {
    case ATOM_GLOBAL: asm volatile("atom.global.add.f32 %0, [%1], %2;" : "=f"(r) : "l"(mem + i), "f"(b) : "memory"); break;
    case RED_GLOBAL: asm volatile("red.global.add.f32 [%0], %1;" ::"l"(mem + i), "f"(b) : "memory"); break;
    case ATOM_GENERIC_GLOBAL: asm volatile("atom.add.f32 %0, [%1], %2;" : "=f"(r) : "l"(mem + i), "f"(b) : "memory"); break;
    case ATOM_SHARED: asm volatile("atom.shared.add.f32 %0, [%1], %2;" : "=f"(r) : "r"(sa), "f"(b) : "memory"); break;
    case RED_SHARED: asm volatile("red.shared.add.f32 [%0], %1;" ::"r"(sa), "f"(b) : "memory"); break;
    case ATOM_GENERIC_SHARED: asm volatile("atom.add.f32 %0, [%1], %2;" : "=f"(r) : "l"(&s[i]), "f"(b) : "memory"); break;
  }
  __syncwarp(0x7f);
  if (form >= ATOM_SHARED) mem[i] = s[i];
  ret[i] = r;
}

namespace {

uint32_t bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
float flush(float f) { return (f != 0 && std::fabs(f) < 0x1p-126f) ? std::copysign(0.0f, f) : f; }

}  // namespace

int main() {
  conf_require_device();
  float *olds = nullptr, *bs = nullptr, *mem = nullptr, *ret = nullptr;
  CUDA_CHECK(cudaMalloc(&olds, sizeof kOld));
  CUDA_CHECK(cudaMalloc(&bs, sizeof kB));
  CUDA_CHECK(cudaMalloc(&mem, sizeof kOld));
  CUDA_CHECK(cudaMalloc(&ret, sizeof kOld));
  CUDA_CHECK(cudaMemcpy(olds, kOld, sizeof kOld, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(bs, kB, sizeof kB, cudaMemcpyHostToDevice));
  for (int form = 0; form < FORMS; ++form) {
    k_add<<<1, 32>>>(form, olds, bs, mem, ret);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    float got[kCases], got_ret[kCases];
    CUDA_CHECK(cudaMemcpy(got, mem, sizeof got, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(got_ret, ret, sizeof got_ret, cudaMemcpyDeviceToHost));
    const bool global = form <= ATOM_GENERIC_GLOBAL;
    const bool returns = form != RED_GLOBAL && form != RED_SHARED;
    for (int i = 0; i < kCases; ++i) {
      // The host adds in IEEE round-to-nearest-even, subnormals kept.
      const float want = global ? flush(flush(kOld[i]) + flush(kB[i])) : kOld[i] + kB[i];
      const ConfStr in = conf_fmt("old %a, b %a", kOld[i], kB[i]);
      conf_check_bits(kForm[form], in, bits(got[i]), bits(want), 32);
      if (returns) conf_check_bits(kForm[form], conf_fmt("%s: the value returned", in.s), bits(got_ret[i]), bits(kOld[i]), 32);
    }
  }
  CUDA_CHECK(cudaFree(olds));
  CUDA_CHECK(cudaFree(bs));
  CUDA_CHECK(cudaFree(mem));
  CUDA_CHECK(cudaFree(ret));
  return conf_finish("atomic_f32_subnormal");
}
