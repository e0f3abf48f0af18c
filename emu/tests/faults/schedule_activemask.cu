// Planted bug: __activemask() taken as "the whole warp" after a divergent branch. In each warp
// every lane but lane 0 replaces its element by a short loop over the input (the same trip count
// in every lane; a branch nvcc cannot turn into a select), then the warp sums its 32 values with
// __reduce_add_sync over the lanes __activemask() names. With independent thread scheduling
// (sm_70 and later) nothing makes the two sides of the branch run together again before
// __activemask(): the lanes that get there first may execute it alone (lane 0, which skipped the
// loop, or the other 31), and the sum then counts only them. The emulator's default schedule
// reconverges at the end of the branch, where this passes; under GPU100_EMU_SCHEDULE=random:SEED
// either side may run on past that point without the other.
// Expected under random seeds: a wrong sum (exit 1). --fixed: __reduce_add_sync(0xffffffff, v),
// which waits for every lane of the warp.
#include "fault_common.h"

constexpr int kWarps = 4, kN = kWarps * 32, kReps = 3;

__global__ void k_warp_sums(const int* in, int* out, int reps, int fixed) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  if (threadIdx.x % 32 != 0) {  // divergent: lane 0 skips the loop
    int t = 0;
    for (int k = 0; k < reps; ++k) t ^= in[(i + k) % kN];
    v = t;
  }
  const unsigned mask = fixed ? 0xffffffffu : __activemask();  // PLANTED
  const int sum = __reduce_add_sync(mask, v);
  if ((threadIdx.x & 31) == 0) out[i / 32] = sum;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  static int h[kN], got[kWarps];
  for (int i = 0; i < kN; ++i) h[i] = (i * 5) % 23;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof got));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_warp_sums<<<kWarps, 32>>>(in, out, kReps, fixed);
  CHECK(launch_result());
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int w = 0; w < kWarps; ++w) {
    int want = 0;
    for (int l = 0; l < 32; ++l) {
      const int i = w * 32 + l;
      int v = h[i];
      if (l != 0) {
        int t = 0;
        for (int k = 0; k < kReps; ++k) t ^= h[(i + k) % kN];
        v = t;
      }
      want += v;
    }
    if (got[w] != want) {
      if (fixed) return fixed_wrong("schedule_activemask", "warp %d: %d, expected %d", w, got[w], want);
      std::fprintf(stderr, "schedule_activemask: warp %d summed %d, expected %d: __activemask() named "
                           "only the lanes that reached it together\n", w, got[w], want);
      return 1;
    }
  }
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  if (!fixed) {
    std::fprintf(stderr, "schedule_activemask: every warp reconverged before __activemask()\n");
    return 0;
  }
  return fixed_ok("schedule_activemask");
}
