// Planted bug: a warp of a block reads a run of words, whole warps at consecutive addresses, after
// one of its lanes (lane 5) has fenced and signalled a counter, and other warps have read the run
// before it and signalled too; a thread of another block waits for every signal, fences, and
// overwrites word 5. The signals order the other warps' reads before the write, and lane 5's
// accesses before its signal, but not lane 5's read after it: on a GPU that read may see the new
// word. The checks keep a run read by whole warps as rows of records, one clock for 16 lanes;
// lanes at different clocks (lane 5 past its release) keep their own. Built twice: the run read
// before by one warp (race_global_rows_clock_beside) or by two (race_global_rows_clock_full).
// Expected: the checks report block 1's write of word 5 against block 0 thread 69's read of it
// (warp 2, lane 5), and the launch fails (cudaErrorLaunchFailure). --fixed: lane 5 reads before
// it signals, and every read sees the words as they were copied.
#include "fault_common.h"

constexpr int kWords = 32, kEarlierWarps = EARLIER_WARPS, kSignals = 32 * kEarlierWarps + 1;

__global__ void k_signal_write(int* b, int* out, int* signals, int fixed) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (blockIdx.x == 0) {
    if (warp < kEarlierWarps) {  // read the run, then signal
      out[warp * kWords + lane] = b[lane];
      __threadfence();
      atomicAdd(signals, 1);
    } else if (warp == 2) {  // lane 5 signals, then the warp reads the run
      int v = fixed ? b[lane] : 0;
      if (lane == 5) {
        __threadfence();
        atomicAdd(signals, 1);
      }
      if (!fixed) v = b[lane];  // PARTNER
      out[2 * kWords + lane] = v;
    }
  } else if (threadIdx.x == 0) {
    while (atomicAdd(signals, 0) < kSignals) {
    }
    __threadfence();
    b[5] = -1;  // PLANTED
  }
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[kWords];
  for (int i = 0; i < kWords; ++i) h[i] = 5 * i + 1;
  int *b = nullptr, *out = nullptr, *signals = nullptr;
  CHECK(cudaMalloc(&b, sizeof h));
  CHECK(cudaMalloc(&out, 3 * kWords * sizeof(int)));
  CHECK(cudaMalloc(&signals, sizeof(int)));
  CHECK(cudaMemcpy(b, h, sizeof h, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(out, 0, 3 * kWords * sizeof(int)));
  CHECK(cudaMemset(signals, 0, sizeof(int)));
  k_signal_write<<<2, 96>>>(b, out, signals, fixed);
  if (!fixed) return verdict(FAULT_NAME, launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got[3 * kWords];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int w = 0; w < 3; ++w)
    for (int i = 0; i < kWords; ++i) {
      const int want = w < kEarlierWarps || w == 2 ? h[i] : 0;
      if (got[w * kWords + i] != want)
        return fixed_wrong(FAULT_NAME, "warp %d word %d is %d, expected %d", w, i, got[w * kWords + i], want);
    }
  CHECK(cudaFree(b));
  CHECK(cudaFree(out));
  CHECK(cudaFree(signals));
  return fixed_ok(FAULT_NAME);
}
