// Planted bug: a producer warp publishes a flag and then writes the data the flag announces. Lane 5
// fences and sets the flag before the warp's store of the data (a word per lane); a consumer
// block waits for the flag, fences, and reads lane 5's word. The fence and the flag order only
// what lane 5 wrote before them: the word it writes after is a race, stale on a GPU whenever the
// consumer reads it first. (The warp's lanes store at different clocks, lane 5 being past its
// release: the checks keep each lane's own.)
// Expected: the checks report the consumer's read of the word against lane 5's write, and the
// launch fails (cudaErrorLaunchFailure). --fixed: the data is written before the flag is set.
#include "fault_common.h"

constexpr int kLanes = 32, kPublisher = 5;

__global__ void k_publish(int* data, int* flag, int* out, int fixed) {
  const int t = threadIdx.x;
  if (blockIdx.x == 0) {
    if (fixed) data[t] = 7 * t + 1;
    if (t == kPublisher) {
      __threadfence();
      atomicExch(flag, 1);
    }
    if (!fixed) data[t] = 7 * t + 1;  // PARTNER
  } else if (t == 0) {
    while (atomicAdd(flag, 0) == 0) {
    }
    __threadfence();
    out[0] = data[kPublisher];  // PLANTED
  }
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int *data = nullptr, *flag = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&data, kLanes * sizeof(int)));
  CHECK(cudaMalloc(&flag, sizeof(int)));
  CHECK(cudaMalloc(&out, sizeof(int)));
  CHECK(cudaMemset(data, 0, kLanes * sizeof(int)));
  CHECK(cudaMemset(flag, 0, sizeof(int)));
  k_publish<<<2, kLanes>>>(data, flag, out, fixed);
  if (!fixed) return verdict("race_publish_early", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got = 0;
  CHECK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
  if (got != 7 * kPublisher + 1) return fixed_wrong("race_publish_early", "read %d, expected %d", got, 7 * kPublisher + 1);
  CHECK(cudaFree(data));
  CHECK(cudaFree(flag));
  CHECK(cudaFree(out));
  return fixed_ok("race_publish_early");
}
