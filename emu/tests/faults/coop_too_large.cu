// Planted bug: a cooperative launch with more blocks than the device can hold at once. A kernel
// that synchronizes the whole grid needs every block resident; the launch asks for one block
// more than the occupancy calculator allows. Expected: cudaLaunchCooperativeKernel itself
// returns cudaErrorCooperativeLaunchTooLarge, before anything runs (so no kernel message), and
// the error is not sticky. --fixed: exactly the resident maximum, and the grid-wide sum that
// needs the grid barrier is right.
#include <cooperative_groups.h>

#include "fault_common.h"

namespace cg = cooperative_groups;

constexpr int kBlock = 256;

// Every block writes its partial sum, the grid synchronizes, and block 0 adds them up.
__global__ void k_grid_sum(int* partial, int* total) {
  cg::grid_group grid = cg::this_grid();
  if (threadIdx.x == 0) partial[blockIdx.x] = int(blockIdx.x) + 1;
  grid.sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    int s = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) s += partial[b];
    *total = s;
  }
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int coop = 0, sms = 0, per_sm = 0;
  CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_grid_sum, kBlock, 0));
  if (!coop || per_sm < 1) {
    std::printf("SKIP: no cooperative launch on this device\n");
    return 77;
  }
  const int capacity = sms * per_sm;
  const int blocks = fixed ? capacity : capacity + 1;  // one block too many
  int *partial = nullptr, *total = nullptr;
  CHECK(cudaMalloc(&partial, (capacity + 1) * sizeof(int)));
  CHECK(cudaMalloc(&total, sizeof(int)));
  void* args[] = {&partial, &total};
  const cudaError_t e = cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(k_grid_sum),
                                                    dim3(blocks), dim3(kBlock), args, 0, nullptr);
  if (!fixed) {
    const int v = verdict("coop_too_large", e, cudaErrorCooperativeLaunchTooLarge);
    // A launch the runtime refused leaves the context usable: the error is not sticky. The
    // first cudaGetLastError returns it (and clears it), then the calls succeed again.
    if (v == 1 && (cudaGetLastError() != e || cudaGetLastError() != cudaSuccess ||
                   cudaDeviceSynchronize() != cudaSuccess ||
                   cudaMemset(total, 0, sizeof(int)) != cudaSuccess)) {
      std::fprintf(stderr, "coop_too_large: the refused launch left a sticky error\n");
      return 2;
    }
    return v;
  }
  CHECK(e);
  CHECK(cudaDeviceSynchronize());
  int got = 0;
  CHECK(cudaMemcpy(&got, total, sizeof got, cudaMemcpyDeviceToHost));
  const int want = capacity * (capacity + 1) / 2;
  if (got != want) return fixed_wrong("coop_too_large", "total %d, expected %d", got, want);
  return fixed_ok("coop_too_large");
}
