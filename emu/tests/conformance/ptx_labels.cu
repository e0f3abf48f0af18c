// Labels in PTX { } blocks: a label has the scope of the block that declares it (PTX ISA,
// "Scope": identifiers, labels included, declared in a block are local to it), so inline
// assembly may declare the same label name in every statement it expands into, as a wait loop
// on an mbarrier does. A branch goes to the label of its own block, or of the nearest enclosing
// block that declares it.
//
// Expected values, from the definitions: each block runs its own loop to the end, so the results
// are the loop counts below computed on the host; a branch that went to another block's label
// would skip that block's instructions (or repeat them) and change the sums.
#include <cstdint>

#include "conf_common.h"

namespace {

// Counts i from 0 while i < n, adding `step` each time, into acc; the same labels in each use.
__device__ __forceinline__ uint32_t count_loop(uint32_t acc, uint32_t n, uint32_t step) {
  uint32_t i = 0;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ge.u32 p, %1, %3;\n"
      "@p bra.uni DONE;\n"
      "LOOP:\n"
      "add.u32 %0, %0, %2;\n"
      "add.u32 %1, %1, 1;\n"
      "setp.lt.u32 p, %1, %3;\n"
      "@p bra.uni LOOP;\n"
      "DONE:\n"
      "}\n"
      : "+r"(acc), "+r"(i)
      : "r"(step), "r"(n));
  return acc;
}

__global__ void k_labels(const uint32_t* n, uint32_t* out) {
  const uint32_t t = threadIdx.x;
  // Three expansions of the same labels in one function, with work between them.
  uint32_t a = count_loop(0, n[0] + t, 1);
  a = a * 3 + 1;
  uint32_t b = count_loop(a, n[1], 2);
  b ^= 0x100;
  uint32_t c = count_loop(b, n[2] + (t & 1), 5);
  out[4 * t + 0] = a;
  out[4 * t + 1] = b;
  out[4 * t + 2] = c;
  // Nesting: the inner block's SKIP shadows the outer one; the inner block's branch to OUT finds
  // the label of the enclosing block.
  uint32_t r = 0;
  asm volatile(
      "{\n"
      ".reg .pred q;\n"
      "setp.eq.u32 q, %1, %1;\n"
      "@q bra.uni SKIP;\n"
      "add.u32 %0, %0, 1000;\n"
      "SKIP:\n"
      "add.u32 %0, %0, 1;\n"
      "{\n"
      "@q bra.uni SKIP;\n"
      "add.u32 %0, %0, 100;\n"
      "SKIP:\n"
      "add.u32 %0, %0, 10;\n"
      "@q bra.uni OUT;\n"
      "add.u32 %0, %0, 10000;\n"
      "}\n"
      "add.u32 %0, %0, 20000;\n"
      "OUT:\n"
      "}\n"
      : "+r"(r)
      : "r"(t));
  out[4 * t + 3] = r;
}

}  // namespace

int main() {
  conf_require_device();
  constexpr int kThreads = 32;
  const uint32_t n[3] = {5, 7, 3};
  uint32_t *d_n, *d_out;
  CUDA_CHECK(cudaMalloc(&d_n, sizeof n));
  CUDA_CHECK(cudaMalloc(&d_out, 4 * kThreads * sizeof(uint32_t)));
  CUDA_CHECK(cudaMemcpy(d_n, n, sizeof n, cudaMemcpyHostToDevice));
  k_labels<<<1, kThreads>>>(d_n, d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  uint32_t out[4 * kThreads];
  CUDA_CHECK(cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost));
  for (uint32_t t = 0; t < kThreads; ++t) {
    const uint32_t a = (n[0] + t) * 3 + 1;            // (n0 + t) iterations of +1, then a*3+1
    const uint32_t b = (a + n[1] * 2) ^ 0x100;        // n1 iterations of +2
    const uint32_t c = b + (n[2] + (t & 1)) * 5;      // n2 + (t&1) iterations of +5
    conf_check("three blocks with labels LOOP and DONE", conf_fmt("thread %u: first", t), out[4 * t + 0], a);
    conf_check("three blocks with labels LOOP and DONE", conf_fmt("thread %u: second", t), out[4 * t + 1], b);
    conf_check("three blocks with labels LOOP and DONE", conf_fmt("thread %u: third", t), out[4 * t + 2], c);
    // Outer: skip +1000, +1; inner: skip +100, +10, branch to the outer OUT past +10000, +20000.
    conf_check("nested blocks: SKIP shadowed, OUT from the enclosing block", conf_fmt("thread %u", t),
               out[4 * t + 3], 11u);
  }
  CUDA_CHECK(cudaFree(d_n));
  CUDA_CHECK(cudaFree(d_out));
  return conf_finish("ptx_labels");
}
