// Launch-shape helpers.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>

#include "gpu100/check.h"

namespace gpu100 {

// The grid that exactly fills the device with resident blocks of `kernel`: blocks per SM from the
// occupancy calculator (registers, shared memory, block size) times the SM count. A grid-stride
// kernel launched with more blocks runs a partial second wave; with fewer it leaves SMs idle.
template <class Kernel>
unsigned resident_grid(Kernel kernel, int block, size_t dynamic_smem = 0) {
  int device = 0, sms = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, dynamic_smem));
  return unsigned(std::max(per_sm, 1) * sms);
}

}  // namespace gpu100
