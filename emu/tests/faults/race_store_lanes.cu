// Planted bug: the lanes of a warp store different values to one address in one store
// instruction. Each warp records which of its lanes saw a negative input by storing the lane's
// number into the warp's slot: when several lanes see one, one of their stores lands, and which
// one is unspecified (the CUDA Programming Guide: "which thread performs the final write is
// undefined"), so the slot's value depends on the hardware.
// Expected: the checks report a lane's store against an earlier lane's store of a different
// value in the same execution of the instruction, and the launch fails (cudaErrorLaunchFailure).
// --fixed: the lanes that see a negative input store the same value, 1, into the warp's slot
// (one of the writes succeeds, and they are equal: a defined result), and each slot is right.
#include "fault_common.h"

constexpr int kThreads = 128, kBlocks = 2, kWarps = kBlocks * kThreads / 32;

__global__ void k_flag_lane(const int* in, int* flag) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (in[i] < 0) flag[i / 32] = i % 32;  // PLANTED
}

__global__ void k_flag_one(const int* in, int* flag) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (in[i] < 0) flag[i / 32] = 1;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  static int h[kBlocks * kThreads];
  int want[kWarps] = {};
  // Every warp but the last has negative inputs, at several lanes.
  for (int i = 0; i < kBlocks * kThreads; ++i) {
    h[i] = (i % 5 == 2 && i / 32 != kWarps - 1) ? -i : i;
    if (h[i] < 0) want[i / 32] = 1;
  }
  int *in = nullptr, *flag = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&flag, sizeof want));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(flag, 0, sizeof want));
  if (fixed) k_flag_one<<<kBlocks, kThreads>>>(in, flag);
  else k_flag_lane<<<kBlocks, kThreads>>>(in, flag);
  if (!fixed) return verdict("race_store_lanes", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got[kWarps];
  CHECK(cudaMemcpy(got, flag, sizeof got, cudaMemcpyDeviceToHost));
  for (int w = 0; w < kWarps; ++w)
    if (got[w] != want[w]) return fixed_wrong("race_store_lanes", "warp %d: flag %d, expected %d", w, got[w], want[w]);
  CHECK(cudaFree(in));
  CHECK(cudaFree(flag));
  return fixed_ok("race_store_lanes");
}
