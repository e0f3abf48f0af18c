// Planted bug: a trap. The kernel aborts with `trap` when it meets a value it cannot handle
// (a zero divisor, at element 40). Expected: cudaErrorIllegalInstruction and the emulator naming
// the trap (block 0, thread 40, at the asm's line). --fixed: no zero divisor, no trap, and the
// quotients are right.
#include "fault_common.h"

constexpr int kN = 64;

__global__ void k_divide(const int* num, const int* den, int* out) {
  const int i = threadIdx.x;
  // The planted bug: den[40] == 0.
  if (den[i] == 0) asm volatile("trap;");  // PLANTED
  out[i] = num[i] / den[i];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int num[kN], den[kN];
  for (int i = 0; i < kN; ++i) {
    num[i] = 1000 + 37 * i;
    den[i] = i % 7 + 1;
  }
  if (!fixed) den[40] = 0;
  int *d_num = nullptr, *d_den = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&d_num, sizeof num));
  CHECK(cudaMalloc(&d_den, sizeof den));
  CHECK(cudaMalloc(&out, sizeof num));
  CHECK(cudaMemcpy(d_num, num, sizeof num, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_den, den, sizeof den, cudaMemcpyHostToDevice));
  k_divide<<<1, kN>>>(d_num, d_den, out);
  if (!fixed) return verdict("trap", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  int got[kN];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i)
    if (got[i] != num[i] / den[i])
      return fixed_wrong("trap", "out[%d] = %d, expected %d", i, got[i], num[i] / den[i]);
  return fixed_ok("trap");
}
