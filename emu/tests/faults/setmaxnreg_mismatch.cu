// Planted bug: the warps of one warpgroup execute different setmaxnreg instructions (warp 0 asks
// for 240 registers, warps 1-3 for 232). setmaxnreg is .sync.aligned over the warpgroup: the ISA
// requires all its warps to execute the same one. Expected: cudaErrorIllegalInstruction, the
// emulator naming both instructions. --fixed: every warp asks for 232.
#include <cstdint>
#include <vector>

#include "fault_common.h"

__global__ void __launch_bounds__(128, 1) k_regs(uint32_t* out, int fixed) {
  const int t = threadIdx.x;
  const bool odd_one = !fixed && t / 32 == 0;
  if (odd_one) asm volatile("setmaxnreg.inc.sync.aligned.u32 240;"); else asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");  // PLANTED
  out[t] = uint32_t(t) + 5u;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  uint32_t* out = nullptr;
  CHECK(cudaMalloc(&out, 128 * sizeof(uint32_t)));
  k_regs<<<1, 128>>>(out, fixed);
  if (!fixed) return verdict("setmaxnreg_mismatch", launch_result(), cudaErrorIllegalInstruction);
  CHECK(launch_result());
  std::vector<uint32_t> got(128);
  CHECK(cudaMemcpy(got.data(), out, 128 * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  for (int t = 0; t < 128; ++t)
    if (got[t] != uint32_t(t) + 5u) return fixed_wrong("setmaxnreg_mismatch", "out[%d] = %u", t, got[t]);
  return fixed_ok("setmaxnreg_mismatch");
}
