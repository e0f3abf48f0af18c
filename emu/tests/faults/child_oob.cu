// Planted bug: a grid launched from the device stores one element past the end of its buffer.
// The parent launches one child per block on a range of the output; the last range's child
// writes one element too many. Expected: the host's launch of the parent fails with
// cudaErrorIllegalAddress (a parent is complete only when its children are, so their faults are
// its launch's) and the emulator names the child's kernel, block and thread. --fixed: every
// child stays in its range and the values are right. Built with -rdc=true and the device runtime.
#include "fault_common.h"

constexpr int kBlocks = 3, kSpan = 40;

__global__ void k_child(int* out, int base, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[base + i] = base + i;  // PLANTED
}

__global__ void k_parent(int* out, int fixed) {
  if (threadIdx.x != 0) return;
  const int base = blockIdx.x * kSpan;
  const int extra = !fixed && blockIdx.x == kBlocks - 1;  // the last range one element too long
  k_child<<<2, 32>>>(out, base, kSpan + extra);
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int* out = nullptr;
  CHECK(cudaMalloc(&out, kBlocks * kSpan * sizeof(int)));
  k_parent<<<kBlocks, 32>>>(out, fixed);
  if (!fixed) return verdict("child_oob", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  int got[kBlocks * kSpan];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kBlocks * kSpan; ++i)
    if (got[i] != i) return fixed_wrong("child_oob", "out[%d] = %d, expected %d", i, got[i], i);
  CHECK(cudaFree(out));
  return fixed_ok("child_oob");
}
