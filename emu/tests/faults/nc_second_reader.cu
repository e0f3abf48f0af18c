// Planted bug: a warp takes a ticket from a counter it reads through a const __restrict__ pointer
// (ld.global.nc), and after a barrier thread 0 advances the counter for the next launch. The
// barrier makes it no race, but the PTX ISA allows ld.global.nc only for memory that stays
// unchanged while the kernel runs. Thread 0 read the counter too: the checks keep the first two
// threads that read a word that way, and report the write against the one that is not the writer.
// Expected: the checks report thread 0's write against thread 1's non-coherent load, and the
// launch fails (cudaErrorLaunchFailure). --fixed: the counter is advanced by a second launch.
#include "fault_common.h"

constexpr int kThreads = 32;

__global__ void k_take(const int* __restrict__ counter_in, int* counter, int* out, int fixed) {
  const int t = threadIdx.x;
  out[t] = counter_in[0] + t;  // PARTNER
  __syncthreads();
  if (t == 0 && !fixed) counter[0] = counter_in[0] + kThreads;  // PLANTED
}

__global__ void k_advance(int* counter) { counter[0] += kThreads; }

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int *counter = nullptr, *out = nullptr;
  const int start = 100;
  CHECK(cudaMalloc(&counter, sizeof(int)));
  CHECK(cudaMalloc(&out, kThreads * sizeof(int)));
  CHECK(cudaMemcpy(counter, &start, sizeof(int), cudaMemcpyHostToDevice));
  k_take<<<1, kThreads>>>(counter, counter, out, fixed);
  if (!fixed) return verdict("nc_second_reader", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  k_advance<<<1, 1>>>(counter);
  CHECK(launch_result());
  int got[kThreads], next = 0;
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&next, counter, sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kThreads; ++i)
    if (got[i] != start + i) return fixed_wrong("nc_second_reader", "ticket %d is %d, expected %d", i, got[i], start + i);
  if (next != start + kThreads) return fixed_wrong("nc_second_reader", "counter %d, expected %d", next, start + kThreads);
  CHECK(cudaFree(counter));
  CHECK(cudaFree(out));
  return fixed_ok("nc_second_reader");
}
